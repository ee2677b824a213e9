/*
 * test_pack3.c: packs of format 3 (src/vault/pack3.c, docs/FORMAT.md
 * section 22): Padmé lengths; a pack's table gives back its records
 * exactly, for one chunk, for many small ones (a bug: a table of records
 * with one-byte varints was refused, its count bounded by segment records'
 * larger minimum) and for none; every byte outside the blobs is
 * authenticated (a flip, a truncation, another pack's id, another vault's
 * key all refused).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pqvault/aead.h"
#include "util/buf.h"
#include "vault/pack.h"
#include "vault/pack3.h"
#include "vault/vault_internal.h"

static pqv_vault vault;
static uint8_t pack_id[PACK_ID_BYTES];

static void
set_up(void)
{
    memset(&vault, 0, sizeof(vault));
    vault.config.version = 3;
    vault.config.aead = PQV_AEAD_CHACHA20POLY1305;
    for (int i = 0; i < 32; i++)
        vault.packs_key[i] = (uint8_t)(0x30 + i);
    memset(pack_id, 0xa5, sizeof(pack_id));
}

/* make(recs, n, out): a pack of ${n} blobs of the records' lengths. */
static void
make(struct chunk_rec *recs, size_t n, struct buf *out)
{
    uint32_t off = 0;

    memset(out, 0, sizeof(*out));
    pack3_begin(vault.config.aead, out);
    for (size_t i = 0; i < n; i++) {
        memcpy(recs[i].pack_id, pack_id, PACK_ID_BYTES);
        recs[i].pack_off = off;
        for (uint32_t k = 0; k < recs[i].stored_len; k++)
            buf_u8(out, (uint8_t)(i + k));
        off += recs[i].stored_len;
    }
    REQUIRE(pack3_finish(&vault, pack_id, recs, n, out) == 0);
}

static void
test_padme(void)
{
    /* L rounded up to a multiple of 2^(E - S): E = floor(log2 L),
     * S = floor(log2 E) + 1. */
    CHECK_EQ_INT(pack3_padme(0), 0);
    CHECK_EQ_INT(pack3_padme(1), 1);
    CHECK_EQ_INT(pack3_padme(100), 104);              /* E 6, S 3: multiples of 8 */
    CHECK_EQ_INT(pack3_padme(433), 448);              /* E 8, S 4: of 16 */
    CHECK_EQ_INT(pack3_padme(8u << 20), 8u << 20);    /* E 23, S 5: of 256 KiB */
    CHECK_EQ_INT(pack3_padme((8u << 20) + 1), (8u << 20) + (256u << 10));
    /* Full packs (8 MiB and more): multiples of 64 KiB, no more. */
    CHECK_EQ_INT(pack3_padded((8u << 20) + 1), (8u << 20) + (64u << 10));
    CHECK_EQ_INT(pack3_padded(10u << 20), 10u << 20);
    CHECK(!pack3_is_padded((8u << 20) + 100));
    CHECK_EQ_INT(pack3_padded(100), 104);
    for (uint64_t l = 2; l < 100000; l += 97) {
        uint64_t p = pack3_padme(l);
        CHECK(p >= l && p - l <= l / 8);
        CHECK_EQ_INT(pack3_padme(p), p);
    }
}

static void
round_trip(size_t n, uint32_t stored, uint32_t plain)
{
    struct chunk_rec *recs = calloc(n + 1, sizeof(*recs)), *back = NULL;
    struct buf out;
    size_t nback = 0;

    REQUIRE(recs != NULL);
    for (size_t i = 0; i < n; i++) {
        memset(recs[i].id, (int)(i + 1), CHUNK_ID_BYTES);
        recs[i].id[0] = (uint8_t)(i >> 8);
        recs[i].stored_len = stored;
        recs[i].plain_len = plain;
        recs[i].flags = (uint8_t)(vault.config.aead << 1);
    }
    make(recs, n, &out);
    CHECK(pack3_is_padded(out.len));
    CHECK_EQ_INT(pack3_table(&vault, pack_id, out.p, out.len, &back, &nback), 0);
    CHECK_EQ_INT(nback, n);
    for (size_t i = 0; i < n && i < nback; i++)
        CHECK(memcmp(&back[i], &recs[i], sizeof(recs[i])) == 0);
    free(back);
    buf_wipe_free(&out);
    free(recs);
}

static void
test_round_trips(void)
{
    round_trip(0, 0, 0);
    round_trip(1, 2u << 20, 2u << 20);
    round_trip(5, 32, 1);      /* the bug: records of 36 bytes */
    round_trip(3000, 40, 10);
    round_trip(5, 2u << 20, 2u << 20);  /* a full pack: 64 KiB multiples */
}

static void
test_tampering(void)
{
    struct chunk_rec recs[3], *back = NULL;
    struct buf out;
    size_t nback;
    uint32_t blobs = 0;

    memset(recs, 0, sizeof(recs));
    for (int i = 0; i < 3; i++) {
        memset(recs[i].id, i + 1, CHUNK_ID_BYTES);
        recs[i].stored_len = 1000 + (uint32_t)i;
        recs[i].plain_len = 900;
        recs[i].flags = (uint8_t)(vault.config.aead << 1);
        blobs += recs[i].stored_len;
    }
    make(recs, 3, &out);
    /* Every byte outside the blobs: the header (authenticated data), the
     * table and its padding, the locator. */
    for (size_t at = 0; at < out.len; at++) {
        if (at >= PACK_HEADER_BYTES && at < PACK_HEADER_BYTES + blobs)
            continue;
        out.p[at] ^= 0x10;
        CHECK_EQ_INT(pack3_table(&vault, pack_id, out.p, out.len, &back, &nback), PQV_E_INTEGRITY);
        out.p[at] ^= 0x10;
    }
    for (size_t cut = 1; cut < 64; cut += 7)
        CHECK_EQ_INT(pack3_table(&vault, pack_id, out.p, out.len - cut, &back, &nback),
            PQV_E_INTEGRITY);
    uint8_t other[PACK_ID_BYTES];
    memset(other, 0x11, sizeof(other));
    CHECK_EQ_INT(pack3_table(&vault, other, out.p, out.len, &back, &nback), PQV_E_INTEGRITY);
    vault.packs_key[0] ^= 1;
    CHECK_EQ_INT(pack3_table(&vault, pack_id, out.p, out.len, &back, &nback), PQV_E_INTEGRITY);
    vault.packs_key[0] ^= 1;
    CHECK_EQ_INT(pack3_table(&vault, pack_id, out.p, out.len, &back, &nback), 0);
    free(back);
    buf_wipe_free(&out);
}

static void
test_setup(void)
{
    set_up();
}

TEST_MAIN(test_setup, test_padme, test_round_trips, test_tampering)
