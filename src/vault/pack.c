/*
 * pack.c: file data of format 2 (docs/FORMAT.md section 14).  An extent's
 * plaintext (at most 4 MiB), zstd-compressed when that saves at least 1/64,
 * is sealed with STREAM under a key derived from the file key and the
 * extent's index, and appended to a pack shared with other files.  Reading
 * takes exactly the extent's bytes from its pack (a ranged read) or, for an
 * upgraded format-1 vault, its format-1 object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "crypto/kdf.h"
#include "util/util.h"
#include "vault/chunk.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/readahead.h"
#include "vault/vault_internal.h"

/* zstd level 5: on /usr/share/doc 1.3% smaller than level 3 (what pays
 * only: a level-1 probe comes first, so incompressible data costs less
 * than before); restore speed is the same (docs/BENCHMARKS.md). */
#define ZSTD_LEVEL 5

static const char extent_label[] = "pqvault/v2/extent";

void
pack_name(const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX])
{
    names_sharded(out, "packs", id, PACK_ID_BYTES);
}

size_t
pack_scratch_size(void)
{
    return ZSTD_compressBound(PQV_OBJECT_MAX_PLAIN);
}

size_t
pack_sealed_max(void)
{
    return (size_t)pqv_stream_sealed_size(pack_scratch_size());
}

/* extent_key(file_key, index, key): K_ext(index). */
static int
extent_key(const uint8_t file_key[PQV_FILE_KEY_BYTES], uint32_t index, uint8_t key[32])
{
    uint8_t info[sizeof(extent_label) - 1 + 4];

    memcpy(info, extent_label, sizeof(extent_label) - 1);
    util_store_be32(info + sizeof(extent_label) - 1, index);
    return kdf_hkdf_sha256(key, 32, file_key, PQV_FILE_KEY_BYTES, NULL, 0, info, sizeof(info));
}

/* extent_ad(x, ad): 0x02 || flags || file offset (8) || plaintext length (8). */
static size_t
extent_ad(uint8_t flags, uint64_t file_off, uint64_t plain_len, uint8_t ad[18])
{
    ad[0] = 0x02;
    ad[1] = flags;
    util_store_be64(ad + 2, file_off);
    util_store_be64(ad + 10, plain_len);
    return 18;
}

int
pack_seal_extent(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES], uint32_t index,
    struct extent *x, const uint8_t *plain, int compress, uint8_t *scratch, uint8_t *out)
{
    uint8_t key[32], ad[18];
    const uint8_t *stored = plain;
    size_t stored_len = x->plain_len;
    int rc;

    x->flags = 0;
    if (compress && x->plain_len >= 64) {
        /* A fast probe first (level 1 gives up quickly on incompressible
         * data: most of a backup's bytes are already compressed); only
         * what pays is compressed again at ZSTD_LEVEL. */
        size_t c = ZSTD_compress(scratch, pack_scratch_size(), plain, x->plain_len, 1);
        if (!ZSTD_isError(c) && c < x->plain_len - x->plain_len / 64) {
            c = ZSTD_compress(scratch, pack_scratch_size(), plain, x->plain_len, ZSTD_LEVEL);
            /* Only when it pays (and never for an incompressible chunk,
             * which would cost the decompression for nothing). */
            if (!ZSTD_isError(c) && c < x->plain_len - x->plain_len / 64) {
                stored = scratch;
                stored_len = c;
                x->flags = EXTENT_ZSTD;
            }
        }
    }
    if ((rc = extent_key(file_key, index, key)) != 0)
        return rc;
    rc = pqv_stream_seal(suite, key, ad, extent_ad(x->flags, x->file_off, x->plain_len, ad), stored,
        stored_len, out);
    util_wipe(key, sizeof(key));
    if (rc == 0)
        x->stored_len = (uint32_t)pqv_stream_sealed_size(stored_len);
    return rc;
}

int
pack_open_extent(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES], uint32_t index,
    const struct extent *x, const uint8_t *sealed, uint8_t *plain, uint8_t *scratch)
{
    uint8_t key[32], ad[18];
    uint8_t *stored = (x->flags & EXTENT_ZSTD) ? scratch : plain;
    size_t got = 0;
    int rc;

    /* Uncompressed, the sealed size is fixed by the plaintext length. */
    if (!(x->flags & EXTENT_ZSTD) && x->stored_len != pqv_stream_sealed_size(x->plain_len))
        return error_set(PQV_E_INTEGRITY, NULL, "has the wrong size");
    if ((rc = extent_key(file_key, index, key)) != 0)
        return rc;
    rc = pqv_stream_open(suite, key, ad, extent_ad(x->flags, x->file_off, x->plain_len, ad), sealed,
        x->stored_len, stored, &got);
    util_wipe(key, sizeof(key));
    if (rc == PQV_E_INTEGRITY)
        return error_set(rc, NULL, "failed authentication (corrupted, altered or moved)");
    if (rc != 0)
        return rc;
    if (x->flags & EXTENT_ZSTD) {
        unsigned long long want = ZSTD_getFrameContentSize(stored, got);
        size_t d;
        if (want != x->plain_len) {
            util_wipe(stored, got);
            return error_set(PQV_E_INTEGRITY, NULL, "compressed frame of the wrong size");
        }
        d = ZSTD_decompress(plain, x->plain_len, stored, got);
        util_wipe(stored, got);
        if (ZSTD_isError(d) || d != x->plain_len) {
            util_wipe(plain, x->plain_len);
            return error_set(PQV_E_INTEGRITY, NULL, "does not decompress");
        }
    } else if (got != x->plain_len) {
        util_wipe(plain, got);
        return error_set(PQV_E_INTEGRITY, NULL, "has the wrong length");
    }
    return 0;
}

/* extent_error(rc, what, index, sname): "what N (blob): reason". */
static int
extent_error(int rc, const char *what, uint32_t index, const char *sname)
{
    char why[PQV_ERROR_REASON_MAX];

    snprintf(why, sizeof(why), "%s", pqv_error_last()->reason);
    return error_set(rc, NULL, "%s %u (%s): %s", what, index, sname, why);
}

/* sealed_error(rc, index, sname): a failed read of chunk ${index}'s
 * stored bytes out of pack ${sname}, said. */
static int
sealed_error(int rc, uint32_t index, const char *sname)
{
    if (rc == PQV_E_NOTFOUND)
        return error_set(rc, NULL, "chunk %u (%s) is missing", index, sname);
    return extent_error(rc, "chunk", index, sname);
}

int
pack_extent_place(const struct extent *x, char sname[STORAGE_NAME_MAX], uint64_t *off)
{
    if ((x->pack_flags & PACK_V1_OBJECT) || (x->chunk && !x->located))
        return 0;
    pack_name(x->pack_id, sname);
    *off = (uint64_t)PACK_HEADER_BYTES + x->pack_off;
    return 1;
}

/* read_sealed(v, x, sealed, sname): ${x}'s stored bytes out of its pack
 * (through the read-ahead of a remote storage), the pack's name left in
 * ${sname} for messages. */
static int
read_sealed(pqv_vault *v, const struct extent *x, uint8_t *sealed, char sname[STORAGE_NAME_MAX])
{
    pack_name(x->pack_id, sname);
    return readahead_get_range(v->readahead, v->storage, sname,
        (uint64_t)PACK_HEADER_BYTES + x->pack_off, sealed, x->stored_len);
}

/* read_chunk(v, index, x, plain, sealed, scratch): chunk ${index} of a
 * file of format 3, from where the chain's records put it. */
static int
read_chunk(pqv_vault *v, uint32_t index, const struct extent *x, uint8_t *plain, uint8_t *sealed,
    uint8_t *scratch)
{
    char sname[STORAGE_NAME_MAX];
    int rc;

    if (!x->located)
        return error_set(PQV_E_INTEGRITY, NULL, "chunk %u has no record in the chain (check "
            "--repair-index looks for it in the packs)", index);
    if (x->stored_len > chunk_blob_max(x->plain_len))
        return error_set(PQV_E_INTEGRITY, NULL, "chunk %u is too large", index);
    if ((rc = read_sealed(v, x, sealed, sname)) != 0)
        return sealed_error(rc, index, sname);
    rc = chunk_open(v->chunk_data_key, x->chunk_id, x->flags, sealed, x->stored_len, plain,
        x->plain_len, scratch);
    return rc != 0 ? extent_error(rc, "chunk", index, sname) : 0;
}

/* run_joins(a, b): chunk ${b} is stored right after chunk ${a}, in its pack. */
static int
run_joins(const struct extent *a, const struct extent *b)
{
    return b->chunk && b->located && !(b->pack_flags & PACK_V1_OBJECT) &&
        memcmp(a->pack_id, b->pack_id, PACK_ID_BYTES) == 0 &&
        (uint64_t)a->pack_off + a->stored_len == b->pack_off;
}

uint32_t
pack_chunk_run(const struct extent *xs, uint32_t n)
{
    uint64_t plain, stored;
    uint32_t k;

    if (n == 0)
        return 0;
    if (!xs[0].chunk || !xs[0].located || (xs[0].pack_flags & PACK_V1_OBJECT))
        return 1;
    plain = xs[0].plain_len;
    stored = xs[0].stored_len;
    for (k = 1; k < n && run_joins(&xs[k - 1], &xs[k]); k++) {
        plain += xs[k].plain_len;
        stored += xs[k].stored_len;
        if (plain > PQV_OBJECT_MAX_PLAIN || stored > pack_sealed_max())
            break;
    }
    return k;
}

int
pack_read_run(pqv_vault *v, int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    uint32_t index, const struct extent *xs, uint32_t count, uint8_t *plain, uint8_t *sealed,
    uint8_t *scratch)
{
    char sname[STORAGE_NAME_MAX];
    size_t stored = 0, at_plain = 0, at_sealed = 0;
    int rc;

    if (count <= 1)
        return pack_read_extent(v, suite, file_key, index, xs, plain, sealed, scratch);
    /* (The caller's run, checked again: nothing read past the buffers.) */
    if (pack_chunk_run(xs, count) != count)
        return error_set(PQV_E_INTEGRITY, NULL, "chunks %u to %u are not one run", index,
            index + count - 1);
    for (uint32_t k = 0; k < count; k++) {
        if (xs[k].stored_len > chunk_blob_max(xs[k].plain_len))
            return error_set(PQV_E_INTEGRITY, NULL, "chunk %u is too large", index + k);
        stored += xs[k].stored_len;
    }
    pack_name(xs[0].pack_id, sname);
    rc = readahead_get_range(v->readahead, v->storage, sname,
        (uint64_t)PACK_HEADER_BYTES + xs[0].pack_off, sealed, stored);
    if (rc != 0)
        return sealed_error(rc, index, sname);
    for (uint32_t k = 0; k < count; k++) {
        const struct extent *x = &xs[k];
        rc = chunk_open(v->chunk_data_key, x->chunk_id, x->flags, sealed + at_sealed,
            x->stored_len, plain + at_plain, x->plain_len, scratch);
        if (rc != 0) {
            util_wipe(plain, at_plain);
            return extent_error(rc, "chunk", index + k, sname);
        }
        at_sealed += x->stored_len;
        at_plain += x->plain_len;
    }
    return 0;
}

int
pack_read_chunk_segments(pqv_vault *v, uint32_t index, const struct extent *x, uint64_t first,
    uint32_t count, uint8_t *plain, uint8_t *sealed, size_t *got)
{
    char sname[STORAGE_NAME_MAX];
    uint8_t salt[CHUNK_SALT_BYTES];
    uint64_t from = CHUNK_SALT_BYTES + first * PQV_STREAM_SEGMENT_SEALED;
    uint64_t to = CHUNK_SALT_BYTES + (first + count) * PQV_STREAM_SEGMENT_SEALED;
    uint64_t at = (uint64_t)PACK_HEADER_BYTES + x->pack_off;
    int rc;

    if (!x->chunk || !x->located || (x->flags & BLOB_ZSTD) != 0 || count == 0)
        return error_set(PQV_E_INTEGRITY, NULL, "chunk %u does not open in parts", index);
    /* Uncompressed, the blob's size is fixed by the plaintext length. */
    if (x->stored_len != CHUNK_SALT_BYTES + pqv_stream_sealed_size(x->plain_len))
        return error_set(PQV_E_INTEGRITY, NULL, "chunk %u has the wrong size", index);
    if (to > x->stored_len)
        to = x->stored_len;
    if (from >= to)
        return error_set(PQV_E_INTEGRITY, NULL, "chunk %u: no such segment", index);
    pack_name(x->pack_id, sname);
    rc = v->storage->ops->get_range(v->storage, sname, at, salt, sizeof(salt));
    if (rc == 0)
        rc = v->storage->ops->get_range(v->storage, sname, at + from, sealed, (size_t)(to - from));
    if (rc == PQV_E_NOTFOUND)
        return error_set(rc, NULL, "chunk %u (%s) is missing", index, sname);
    if (rc != 0)
        return extent_error(rc, "chunk", index, sname);
    rc = chunk_open_segments(v->chunk_data_key, x->chunk_id, x->flags, salt, sealed,
        (size_t)(to - from), first, x->plain_len, plain, got);
    return rc != 0 ? extent_error(rc, "chunk", index, sname) : 0;
}

int
pack_read_extent(pqv_vault *v, int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    uint32_t index, const struct extent *x, uint8_t *plain, uint8_t *sealed, uint8_t *scratch)
{
    char sname[STORAGE_NAME_MAX];
    int rc;

    if (x->chunk)
        return read_chunk(v, index, x, plain, sealed, scratch);
    if (x->stored_len > pack_sealed_max())
        return error_set(PQV_E_INTEGRITY, NULL, "extent %u is too large", index);
    if (x->pack_flags & PACK_V1_OBJECT) {
        /* An object of format 1 (an upgraded vault): whole, by its id. */
        uint8_t *buf;
        size_t len;
        object_storage_name(x->pack_id, sname);
        rc = v->storage->ops->get(v->storage, sname, &buf, &len, (size_t)x->stored_len + 1);
        if (rc == PQV_E_NOTFOUND)
            return error_set(rc, NULL, "object %u (%s) is missing", index, sname);
        if (rc == PQV_E_INTEGRITY)
            return error_set(rc, NULL, "object %u (%s) has the wrong size", index, sname);
        if (rc != 0)
            return rc;
        rc = object_open(suite, file_key, x->pack_id, index, buf, len, plain, x->plain_len);
        free(buf);
        return rc != 0 ? extent_error(rc, "object", index, sname) : 0;
    }
    rc = read_sealed(v, x, sealed, sname);
    if (rc == PQV_E_NOTFOUND)
        return error_set(rc, NULL, "extent %u (%s) is missing", index, sname);
    if (rc != 0)
        return extent_error(rc, "extent", index, sname);
    rc = pack_open_extent(suite, file_key, index, x, sealed, plain, scratch);
    return rc != 0 ? extent_error(rc, "extent", index, sname) : 0;
}

void
pack_header(uint8_t header[PACK_HEADER_BYTES])
{
    memcpy(header, "PQVP", 4);
    header[4] = 0x02;
    header[5] = header[6] = header[7] = 0;
}
