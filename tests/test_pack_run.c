/*
 * test_pack_run.c: a file's chunks stored one after the other read in one
 * request (src/vault/pack.c: pack_chunk_run, pack_read_run; the restore's
 * jobs, get_stream.c).  Chunks sealed for real into a pack held in memory:
 * a run stops at 4 MiB of plaintext, at a gap, at another pack, at a chunk
 * not located or of format 1; a run comes back byte-exact in one ranged
 * read; a damaged chunk in the middle of a run is refused by its own
 * index, the chunks opened before it wiped; a run the caller made up, an
 * oversized blob and a missing pack refused with the right error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pqvault/aead.h"
#include "pqvault/storage.h"
#include "pqvault/common.h"
#include "vault/chunk.h"
#include "vault/pack.h"
#include "vault/vault_internal.h"

#define NCHUNKS 6

/* Plaintext lengths: the first four make 4,072 KiB, the fifth would pass
 * 4 MiB (a run of four, then one of two). */
static const uint32_t plain_len[NCHUNKS] = {
    300u << 10, 700u << 10, 1u << 20, 2u << 20, (3u << 20) / 2, 100u << 10,
};

static pqv_vault vault;
static uint8_t pack_id[PACK_ID_BYTES];
static char pack_blob_name[STORAGE_NAME_MAX];
static uint8_t *pack_bytes;      /* header, then the blobs */
static size_t pack_len;
static uint8_t *plain[NCHUNKS];
static struct extent xs[NCHUNKS];
static unsigned ranges;

static int
m_get_range(pqv_storage *s, const char *name, uint64_t off, uint8_t *buf, size_t len)
{
    (void)s;
    ranges++;
    if (strcmp(name, pack_blob_name) != 0)
        return PQV_E_NOTFOUND;
    if (off > pack_len || len > pack_len - off)
        return PQV_E_INTEGRITY;
    memcpy(buf, pack_bytes + off, len);
    return 0;
}

static const struct pqv_storage_ops mem_ops = {
    .version = PQV_STORAGE_OPS_VERSION, .get_range = m_get_range,
};
static pqv_storage mem = { &mem_ops };

static void
fill(uint8_t *p, size_t len, uint64_t seed)
{
    uint64_t h = seed * 0x9e3779b97f4a7c15ull + 1;

    for (size_t i = 0; i < len; i++) {
        h ^= h << 13, h ^= h >> 7, h ^= h << 17;
        p[i] = (uint8_t)h;
    }
}

static void
test_setup(void)
{
    size_t cap = PACK_HEADER_BYTES;
    uint8_t *blob;
    size_t blob_len;

    vault.config.version = 3;
    vault.config.aead = PQV_AEAD_AES256GCM;
    vault.storage = &mem;
    fill(vault.chunk_data_key, sizeof(vault.chunk_data_key), 7);
    memset(pack_id, 0x5a, sizeof(pack_id));
    pack_name(pack_id, pack_blob_name);
    for (int i = 0; i < NCHUNKS; i++)
        cap += chunk_blob_max(plain_len[i]);
    REQUIRE((pack_bytes = malloc(cap)) != NULL);
    pack_header(pack_bytes);
    pack_len = PACK_HEADER_BYTES;
    for (int i = 0; i < NCHUNKS; i++) {
        struct extent *x = &xs[i];
        REQUIRE((plain[i] = malloc(plain_len[i])) != NULL);
        fill(plain[i], plain_len[i], 100 + (uint64_t)i);
        fill(x->chunk_id, sizeof(x->chunk_id), 200 + (uint64_t)i);
        blob = pack_bytes + pack_len;
        REQUIRE(chunk_seal(vault.config.aead, vault.chunk_data_key, x->chunk_id, plain[i],
            plain_len[i], 0, blob, &blob_len, &x->flags) == 0);
        x->file_off = i == 0 ? 0 : xs[i - 1].file_off + plain_len[i - 1];
        x->plain_len = plain_len[i];
        x->stored_len = (uint32_t)blob_len;
        x->pack_off = (uint32_t)(pack_len - PACK_HEADER_BYTES);
        memcpy(x->pack_id, pack_id, PACK_ID_BYTES);
        x->chunk = x->located = 1;
        pack_len += blob_len;
    }
}

static void
test_run_lengths(void)
{
    struct extent ys[NCHUNKS];

    CHECK_EQ_INT(pack_chunk_run(xs, NCHUNKS), 4);     /* 4,072 KiB; 5,608 with the fifth */
    CHECK_EQ_INT(pack_chunk_run(xs + 4, 2), 2);
    CHECK_EQ_INT(pack_chunk_run(xs, 2), 2);           /* (no further than asked) */
    CHECK_EQ_INT(pack_chunk_run(xs, 1), 1);
    CHECK_EQ_INT(pack_chunk_run(xs, 0), 0);

    memcpy(ys, xs, sizeof(ys));
    ys[2].pack_off++;                                 /* a byte between two blobs */
    CHECK_EQ_INT(pack_chunk_run(ys, NCHUNKS), 2);
    memcpy(ys, xs, sizeof(ys));
    ys[1].pack_id[PACK_ID_BYTES - 1] ^= 1;            /* another pack */
    CHECK_EQ_INT(pack_chunk_run(ys, NCHUNKS), 1);
    memcpy(ys, xs, sizeof(ys));
    ys[3].located = 0;                                /* no record in the chain */
    CHECK_EQ_INT(pack_chunk_run(ys, NCHUNKS), 3);
    CHECK_EQ_INT(pack_chunk_run(ys + 3, 3), 1);       /* (it then goes alone) */
    memcpy(ys, xs, sizeof(ys));
    ys[2].chunk = 0;                                  /* an extent of format 2 */
    CHECK_EQ_INT(pack_chunk_run(ys, NCHUNKS), 2);
    CHECK_EQ_INT(pack_chunk_run(ys + 2, 4), 1);
    memcpy(ys, xs, sizeof(ys));
    ys[1].pack_flags = PACK_V1_OBJECT;
    CHECK_EQ_INT(pack_chunk_run(ys, NCHUNKS), 1);
    memcpy(ys, xs, sizeof(ys));
    ys[0].stored_len = (uint32_t)pack_sealed_max(); /* stored bound, plain within */
    ys[1].pack_off = ys[0].pack_off + ys[0].stored_len;
    CHECK_EQ_INT(pack_chunk_run(ys, 2), 1);
}

/* read_run(from, first, count, out): pack_read_run of chunks [first, first
 * + count) of ${from} into ${out}. */
static int
read_run(const struct extent *from, uint32_t first, uint32_t count, uint8_t *out)
{
    static uint8_t *sealed, *scratch;

    if (sealed == NULL && ((sealed = malloc(pack_sealed_max())) == NULL ||
                           (scratch = malloc(pack_scratch_size())) == NULL))
        return PQV_E_NOMEM;
    return pack_read_run(&vault, 0, NULL, first, from + first, count, out, sealed, scratch);
}

static void
test_runs_read_whole(void)
{
    uint8_t *out = malloc(PQV_OBJECT_MAX_PLAIN);
    size_t at = 0;

    REQUIRE(out != NULL);
    ranges = 0;
    CHECK_EQ_INT(read_run(xs, 0, 4, out), 0);
    CHECK_EQ_INT(ranges, 1);
    for (int i = 0; i < 4; i++) {
        CHECK(memcmp(out + at, plain[i], plain_len[i]) == 0);
        at += plain_len[i];
    }
    ranges = 0;
    CHECK_EQ_INT(read_run(xs, 4, 2, out), 0);
    CHECK_EQ_INT(ranges, 1);
    CHECK(memcmp(out, plain[4], plain_len[4]) == 0);
    CHECK(memcmp(out + plain_len[4], plain[5], plain_len[5]) == 0);
    /* A run of one is a chunk read alone. */
    ranges = 0;
    CHECK_EQ_INT(read_run(xs, 5, 1, out), 0);
    CHECK_EQ_INT(ranges, 1);
    CHECK(memcmp(out, plain[5], plain_len[5]) == 0);
    free(out);
}

static void
test_run_refusals(void)
{
    uint8_t *out = malloc(PQV_OBJECT_MAX_PLAIN);
    struct extent ys[NCHUNKS];
    size_t before = plain_len[0] + plain_len[1];
    size_t mid = PACK_HEADER_BYTES + xs[2].pack_off + xs[2].stored_len / 2;

    REQUIRE(out != NULL);
    /* A byte of chunk 2 flipped: the run is refused by that chunk's index,
     * and the two chunks opened before it are not left behind. */
    pack_bytes[mid] ^= 0x01;
    memset(out, 0xee, before);
    CHECK_EQ_INT(read_run(xs, 0, 4, out), PQV_E_INTEGRITY);
    CHECK(strstr(pqv_error_last()->reason, "chunk 2 (packs/") != NULL);
    CHECK(out[0] == 0 && out[before / 2] == 0 && out[before - 1] == 0);
    pack_bytes[mid] ^= 0x01;
    CHECK_EQ_INT(read_run(xs, 0, 4, out), 0);

    /* A run that is not one: nothing read. */
    ranges = 0;
    CHECK_EQ_INT(read_run(xs, 0, 5, out), PQV_E_INTEGRITY);
    CHECK(strstr(pqv_error_last()->reason, "chunks 0 to 4 are not one run") != NULL);
    CHECK_EQ_INT(ranges, 0);
    memcpy(ys, xs, sizeof(ys));
    ys[1].pack_off++;
    CHECK_EQ_INT(read_run(ys, 0, 2, out), PQV_E_INTEGRITY);
    CHECK_EQ_INT(ranges, 0);

    /* A blob longer than its plaintext allows. */
    memcpy(ys, xs, sizeof(ys));
    ys[0].plain_len = 1000;
    ys[1].pack_off = ys[0].pack_off + ys[0].stored_len;
    CHECK_EQ_INT(read_run(ys, 0, 2, out), PQV_E_INTEGRITY);
    CHECK(strstr(pqv_error_last()->reason, "chunk 0 is too large") != NULL);
    CHECK_EQ_INT(ranges, 0);

    /* The pack missing: the storage's answer, naming the run's first chunk. */
    memcpy(ys, xs, sizeof(ys));
    for (int i = 0; i < NCHUNKS; i++)
        ys[i].pack_id[0] ^= 0xff;
    CHECK_EQ_INT(read_run(ys, 2, 2, out), PQV_E_NOTFOUND);
    CHECK(strstr(pqv_error_last()->reason, "chunk 2 (packs/") != NULL);
    CHECK(strstr(pqv_error_last()->reason, "is missing") != NULL);
    free(out);
}

TEST_MAIN(test_setup, test_run_lengths, test_runs_read_whole, test_run_refusals)
