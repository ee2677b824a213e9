/*
 * chunk.c: a chunk's identity and its blob (vault/chunk.h).
 *
 * Keys: a chunk's blob is sealed under K = HKDF(IKM = the vault's chunk
 * data key, salt = 16 random bytes stored at the blob's start, info =
 * "pqvault/v3/chunk" || chunk id).  Each sealing draws a fresh salt, so no
 * key seals two messages even when one chunk is stored twice (an
 * interrupted add, another zstd version): the STREAM nonces (counter and
 * last flag) are then never reused under a key.  The identity in the key
 * binds the blob to its chunk: a blob moved under another chunk's name
 * fails to open.  The associated data of every STREAM segment is 0x03 ||
 * flags || the plaintext length (8 bytes).
 */
#include <pthread.h>
#include <string.h>

#include <zstd.h>

#include "crypto/kdf.h"
#include "pqvault/aead.h"
#include "util/error.h"
#include "util/util.h"
#include "vault/chunk.h"

/* zstd level 4.  On the Linux 6.1 tree (docs/BENCHMARKS.md, "Compression
 * level"): measured on 2026-12-01, level 3 was as fast as restic and 0.8%
 * larger than its repository, 4 was 1.2% smaller and 8% slower than 3, 5
 * was 4.7% smaller and 13% slower, and 5 was kept.  Once the rest of the
 * add cost less (2026-12-03: the chunker with VAES, the packs' hashes on
 * the pool), zstd was 48% of the first add's samples, and level 4 took
 * 6.9-7.0 s against level 5's 8.2-8.8 (back to back, each on a fresh ext4)
 * for 260.0 MB of packs against 250.1: still smaller than restic's
 * repository (276.5 MB), 17% faster for 4% more.  Build with
 * -DCHUNK_ZSTD_LEVEL=N to measure another. */
#ifndef CHUNK_ZSTD_LEVEL
#define CHUNK_ZSTD_LEVEL 4
#endif

static const char chunk_label[] = "pqvault/v3/chunk";

/* The probe that decides whether a chunk is worth compressing: its first
 * bytes at level 1 (a chunk is mostly of one kind: text, or compressed
 * media), so that incompressible data costs a small probe and compressible
 * data one compression, not two. */
#define PROBE_BYTES (32u << 10)
/* Below this a chunk (a whole small file: source code, a document) is
 * compressed at once: a probe would cover most of it and cost a second
 * compression of what does compress (measured on a kernel tree, where most
 * files are below 32 KiB: about a fifth of zstd's time). */
#define PROBE_FROM (4 * PROBE_BYTES)

/* zstd's contexts, one of each per thread, kept (a context per call costs
 * its allocation and the pages zeroed under it every time). */
static pthread_key_t cctx_key, dctx_key, scratch_key;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void
free_cctx(void *p)
{
    ZSTD_freeCCtx(p);
}

static void
free_dctx(void *p)
{
    ZSTD_freeDCtx(p);
}

/* A thread's room for a compressed chunk, kept like its contexts (not one
 * per chunk in flight: 64 of those held 13 MiB in a kernel tree's add);
 * what a chunk put in it is wiped as soon as the chunk is sealed. */
struct scratch {
    uint8_t *p;
    size_t cap;
};

static void
free_scratch(void *p)
{
    struct scratch *sc = p;

    free(sc->p);
    free(sc);
}

static void
make_keys(void)
{
    (void)pthread_key_create(&cctx_key, free_cctx);
    (void)pthread_key_create(&dctx_key, free_dctx);
    (void)pthread_key_create(&scratch_key, free_scratch);
}

/* thread_scratch(n): the thread's scratch, at least ${n} bytes, or NULL. */
static uint8_t *
thread_scratch(size_t n)
{
    struct scratch *sc;

    pthread_once(&keys_once, make_keys);
    if ((sc = pthread_getspecific(scratch_key)) == NULL) {
        if ((sc = calloc(1, sizeof(*sc))) == NULL)
            return NULL;
        if (pthread_setspecific(scratch_key, sc) != 0) {
            free(sc);
            return NULL;
        }
    }
    if (sc->cap < n) {
        uint8_t *p = malloc(n);
        if (p == NULL)
            return NULL;
        free(sc->p); /* (wiped after each use: nothing left in it) */
        sc->p = p;
        sc->cap = n;
    }
    return sc->p;
}

static ZSTD_CCtx *
thread_cctx(void)
{
    ZSTD_CCtx *c;

    pthread_once(&keys_once, make_keys);
    if ((c = pthread_getspecific(cctx_key)) == NULL && (c = ZSTD_createCCtx()) != NULL &&
        pthread_setspecific(cctx_key, c) != 0) {
        ZSTD_freeCCtx(c);
        c = NULL;
    }
    return c;
}

static ZSTD_DCtx *
thread_dctx(void)
{
    ZSTD_DCtx *d;

    pthread_once(&keys_once, make_keys);
    if ((d = pthread_getspecific(dctx_key)) == NULL && (d = ZSTD_createDCtx()) != NULL &&
        pthread_setspecific(dctx_key, d) != 0) {
        ZSTD_freeDCtx(d);
        d = NULL;
    }
    return d;
}

int
chunk_id(const uint8_t key[32], const uint8_t *plain, size_t len, uint8_t id[CHUNK_ID_BYTES])
{
    return kdf_hmac_sha256(id, key, 32, plain, len);
}

size_t
chunk_scratch_size(size_t plain_len)
{
    return ZSTD_compressBound(plain_len);
}

size_t
chunk_blob_max(size_t plain_len)
{
    return CHUNK_SALT_BYTES + (size_t)pqv_stream_sealed_size(ZSTD_compressBound(plain_len));
}

/* blob_key(data_key, salt, id, key): K. */
static int
blob_key(const uint8_t data_key[32], const uint8_t salt[CHUNK_SALT_BYTES],
    const uint8_t id[CHUNK_ID_BYTES], uint8_t key[32])
{
    uint8_t info[sizeof(chunk_label) - 1 + CHUNK_ID_BYTES];

    memcpy(info, chunk_label, sizeof(chunk_label) - 1);
    memcpy(info + sizeof(chunk_label) - 1, id, CHUNK_ID_BYTES);
    return kdf_hkdf_sha256(key, 32, data_key, 32, salt, CHUNK_SALT_BYTES, info, sizeof(info));
}

/* blob_ad(flags, plain_len, ad): 0x03 || flags || plaintext length. */
static size_t
blob_ad(uint8_t flags, uint64_t plain_len, uint8_t ad[10])
{
    ad[0] = 0x03;
    ad[1] = flags;
    util_store_be64(ad + 2, plain_len);
    return 10;
}

int
chunk_seal(int suite, const uint8_t data_key[32], const uint8_t id[CHUNK_ID_BYTES],
    const uint8_t *plain, size_t len, int compress, uint8_t *out, size_t *blob_len,
    uint8_t *flags)
{
    const uint8_t *stored = plain;
    size_t stored_len = len, used = 0;
    uint8_t key[32], ad[10], *scratch = NULL;
    int rc, zstd = 0;

    ZSTD_CCtx *cctx = compress && len >= 64 ? thread_cctx() : NULL;
    if (cctx != NULL && (scratch = thread_scratch(chunk_scratch_size(len))) == NULL)
        cctx = NULL; /* (no room: stored as it is) */
    if (cctx != NULL) {
        /* A fast probe of a large chunk's start first; only what pays is
         * compressed (at CHUNK_ZSTD_LEVEL), and kept only if it saves 1/64. */
        size_t probe = len < PROBE_BYTES ? len : PROBE_BYTES;
        size_t c = len < PROBE_FROM ? 0
                                    : ZSTD_compressCCtx(cctx, scratch, chunk_scratch_size(len),
                                          plain, probe, 1);
        if (!ZSTD_isError(c))
            used = c;
        if (!ZSTD_isError(c) && c < probe - probe / 64) {
            c = ZSTD_compressCCtx(cctx, scratch, chunk_scratch_size(len), plain, len,
                CHUNK_ZSTD_LEVEL);
            if (!ZSTD_isError(c) && c > used)
                used = c;
            if (!ZSTD_isError(c) && c < len - len / 64) {
                stored = scratch;
                stored_len = c;
                zstd = 1;
            }
        }
    }
    *flags = BLOB_FLAGS(zstd, suite);
    if ((rc = util_random(out, CHUNK_SALT_BYTES)) == 0 && (rc = blob_key(data_key, out, id, key)) == 0)
        rc = pqv_stream_seal(suite, key, ad, blob_ad(*flags, len, ad), stored, stored_len,
            out + CHUNK_SALT_BYTES);
    util_wipe(key, sizeof(key));
    /* (A failed compression may have written up to its bound.) */
    if (scratch != NULL)
        util_wipe(scratch, used > 0 ? used : chunk_scratch_size(len));
    if (rc == 0)
        *blob_len = CHUNK_SALT_BYTES + (size_t)pqv_stream_sealed_size(stored_len);
    return rc;
}

int
chunk_open(const uint8_t data_key[32], const uint8_t id[CHUNK_ID_BYTES], uint8_t flags,
    const uint8_t *blob, size_t blob_len, uint8_t *plain, size_t plain_len, uint8_t *scratch)
{
    int zstd = (flags & BLOB_ZSTD) != 0, suite = BLOB_SUITE(flags);
    uint8_t key[32], ad[10], *stored = zstd ? scratch : plain;
    size_t got = 0;
    int rc;

    if ((flags & ~BLOB_FLAGS_MASK) != 0 || pqv_aead_name(suite) == NULL ||
        blob_len < CHUNK_SALT_BYTES || blob_len > chunk_blob_max(plain_len))
        return error_set(PQV_E_INTEGRITY, NULL, "blob is malformed");
    /* Uncompressed, the sealed size is fixed by the plaintext length. */
    if (!zstd && blob_len != CHUNK_SALT_BYTES + pqv_stream_sealed_size(plain_len))
        return error_set(PQV_E_INTEGRITY, NULL, "blob has the wrong size");
    if ((rc = blob_key(data_key, blob, id, key)) != 0)
        return rc;
    rc = pqv_stream_open(suite, key, ad, blob_ad(flags, plain_len, ad), blob + CHUNK_SALT_BYTES,
        blob_len - CHUNK_SALT_BYTES, stored, &got);
    util_wipe(key, sizeof(key));
    if (rc == PQV_E_INTEGRITY)
        return error_set(rc, NULL, "blob failed authentication (corrupted, altered or moved)");
    if (rc != 0)
        return rc;
    if (zstd) {
        unsigned long long want = ZSTD_getFrameContentSize(stored, got);
        size_t d;
        if (want != plain_len) {
            util_wipe(stored, got);
            return error_set(PQV_E_INTEGRITY, NULL, "compressed frame of the wrong size");
        }
        ZSTD_DCtx *dctx = thread_dctx();
        d = dctx != NULL ? ZSTD_decompressDCtx(dctx, plain, plain_len, stored, got)
                         : ZSTD_decompress(plain, plain_len, stored, got);
        util_wipe(stored, got);
        if (ZSTD_isError(d) || d != plain_len) {
            util_wipe(plain, plain_len);
            return error_set(PQV_E_INTEGRITY, NULL, "does not decompress");
        }
    } else if (got != plain_len) {
        util_wipe(plain, got);
        return error_set(PQV_E_INTEGRITY, NULL, "blob has the wrong length");
    }
    return 0;
}

int
chunk_open_segments(const uint8_t data_key[32], const uint8_t id[CHUNK_ID_BYTES], uint8_t flags,
    const uint8_t salt[CHUNK_SALT_BYTES], const uint8_t *sealed, size_t sealed_len, uint64_t first,
    size_t plain_len, uint8_t *plain, size_t *got)
{
    int suite = BLOB_SUITE(flags);
    uint8_t key[32], ad[10];
    int rc;

    if ((flags & ~BLOB_FLAGS_MASK) != 0 || (flags & BLOB_ZSTD) != 0 || pqv_aead_name(suite) == NULL)
        return error_set(PQV_E_INTEGRITY, NULL, "blob is malformed");
    if ((rc = blob_key(data_key, salt, id, key)) != 0)
        return rc;
    rc = pqv_stream_open_range(suite, key, ad, blob_ad(flags, plain_len, ad), sealed, sealed_len,
        first, plain_len, plain, got);
    util_wipe(key, sizeof(key));
    if (rc == PQV_E_INTEGRITY)
        return error_set(rc, NULL, "blob failed authentication (corrupted, altered or moved)");
    return rc;
}
