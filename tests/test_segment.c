/*
 * test_segment.c: catalogue segments of format 2 (src/vault/segment.c,
 * docs/FORMAT.md sections 10-12): segment_build, segment_open and
 * segment_block over a vault structure whose keys the test sets (no
 * storage is touched), and once over a real vault's segments on disk.
 * Segments of 0, 1 and thousands of entries (over many 64 KiB blocks, one
 * entry larger than a block) read back equal, in tag order, each block
 * closed as the format says; names are found in their block; the chain
 * value is computed by the test from the bytes (OpenSSL's SHA-256) and
 * compared; base segments carry their history; every flipped bit, every
 * truncation, an appended byte, the wrong epoch and another vault are
 * refused with PQV_E_INTEGRITY.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "entry_fixture.h"
#include "harness.h"
#include "pqvault/aead.h"
#include "pqvault/vault.h"
#include "util/buf.h"
#include "util/util.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/segment.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

#define BLOCK_TARGET 65536

static struct pqv_vault vault;     /* keys set by hand: see set_keys */
static uint8_t cmd_key[32];

/* set_keys(v, seed): a vault structure whose catalogue keys and id derive
 * from ${seed} (enough for segment.c: no storage, no identity). */
static void
set_keys(struct pqv_vault *v, uint8_t seed, int suite)
{
    memset(v, 0, sizeof(*v));
    v->config.version = 2;
    v->config.aead = suite;
    for (int i = 0; i < 32; i++) {
        v->names_key[i] = (uint8_t)(seed + i);
        v->segments_key[i] = (uint8_t)(seed * 3 + i * 7);
    }
    for (int i = 0; i < VAULT_ID_BYTES; i++)
        v->config.vault_id[i] = (uint8_t)(seed ^ (0x5a + i));
}

static void
sha256(const void *p, size_t n, uint8_t out[32])
{
    unsigned int len = 32;

    if (EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) != 1)
        abort();
}

/* my_chain(prev, seg, out): chain(E) of the segment bytes ${seg}, as
 * docs/FORMAT.md section 11 defines it, from the header's head length. */
static void
my_chain(const uint8_t prev[32], const uint8_t *seg, uint8_t out[32])
{
    uint32_t headlen = (uint32_t)seg[64] << 24 | (uint32_t)seg[65] << 16 |
        (uint32_t)seg[66] << 8 | seg[67];
    uint8_t msg[16 + 64];

    memcpy(msg, "pqvault/v2/chain", 16);
    memcpy(msg + 16, prev, 32);
    sha256(seg, SEGMENT_HEADER_BYTES + headlen, msg + 48);
    sha256(msg, sizeof(msg), out);
}

/* my_tag(v, name, tag): tag(name) = the first 16 bytes of
 * HMAC-SHA-256(names key, name). */
static void
my_tag(const struct pqv_vault *v, const char *name, uint8_t tag[TAG_BYTES])
{
    uint8_t mac[32];
    unsigned int len = 32;

    if (HMAC(EVP_sha256(), v->names_key, 32, (const uint8_t *)name, strlen(name), mac, &len) ==
        NULL)
        abort();
    memcpy(tag, mac, TAG_BYTES);
}

/* ---- entries ---- */

/* make_entries(n, big): ${n} entries of every kind (files of 1-3 extents
 * on a few packs, a format-1 object among them, clear keys), and with
 * ${big} one file whose 64 KiB extended attribute makes it larger than a
 * block. */
static struct entry **
make_entries(size_t n, int big)
{
    static const char *const users[] = { "alice", "bob", "carol", NULL };
    struct entry **es = calloc(n + 1, sizeof(*es));
    char name[128], origin[128];

    if (es == NULL)
        exit(2);
    for (size_t i = 0; i < n; i++) {
        struct entry *e = calloc(1, sizeof(*e));
        int kind = i % 7 == 3 ? KIND_DIR : i % 7 == 5 ? KIND_SYMLINK : i % 11 == 6 ? KIND_REMOVED
                                                                                    : KIND_FILE;
        if (e == NULL)
            exit(2);
        snprintf(name, sizeof(name), "d%02zu/entry-%05zu%s", i % 37, i, kind == KIND_DIR ? "" : ".dat");
        if (big && i == n / 2) {
            uint8_t *value = calloc(1, MAX_XATTR_VALUE);
            kind = KIND_FILE;
            ef_init(e, name, kind);
            if (value == NULL)
                exit(2);
            for (size_t k = 0; k < MAX_XATTR_VALUE; k++)
                value[k] = (uint8_t)(k * 31);
            ef_xattr(e, "user.big", value, MAX_XATTR_VALUE);
            free(value);
        } else if (kind == KIND_REMOVED) {
            if (entry_removed(e, name) != 0)
                exit(2);
            es[i] = e;
            continue;
        } else {
            ef_init(e, name, kind);
        }
        e->perm = (uint32_t)(0600 + i % 0177);
        e->uid = (uint32_t)(1000 + i % 3);
        e->gid = (uint32_t)(100 + i % 5);
        e->user = ef_dup(users[i % 4]);
        e->group = ef_dup(users[(i + 1) % 4]);
        e->mtime_sec = (int64_t)i * 1000 - 500000;
        e->mtime_nsec = (uint32_t)(i * 7919 % 1000000000);
        e->ctime_sec = 1700000000 + (int64_t)i;
        e->ctime_nsec = (uint32_t)i;
        e->dev = 0x801;
        e->ino = 1000 + i;
        if (i % 5 == 0) {
            snprintf(origin, sizeof(origin), "/home/user/some/longer/source/path/d%02zu", i % 37);
            e->origin = ef_dup(origin);
        }
        if (i % 13 == 0)
            e->hlgroup = (uint64_t)(i / 13) | 1;
        if (i % 9 == 0)
            ef_xattr(e, i % 2 ? "user.comment" : "user.mime", "text/plain", 10);
        if (kind == KIND_FILE) {
            uint32_t nx = (uint32_t)(i % 3), off = 0;
            e->suite = i % 2 ? PQV_AEAD_AES256GCM : PQV_AEAD_CHACHA20POLY1305;
            e->key_state = KEY_CLEAR;
            for (size_t k = 0; k < sizeof(e->key); k++)
                e->key[k] = (uint8_t)(i * 13 + k);
            for (uint32_t k = 0; k < nx; k++) {
                ef_extent(e, off, 1000 + k, (uint8_t)(1 + (i + k) % 6), (uint32_t)(i * 10), 1040 + k,
                    k == 0 ? EXTENT_ZSTD : 0, 0);
                off += 2000;
            }
            if (i % 17 == 0) {
                ef_extent(e, off, 4096, 0xee, 0, (uint32_t)object_sealed_size(4096), 0,
                    PACK_V1_OBJECT);
                off += 4096;
            }
            e->size = off + (uint64_t)(i % 4);
            if (nx == 1 && i % 17 != 0) {
                e->has_content = 1;
                memset(e->content, (int)(i & 0xff), sizeof(e->content));
            }
        }
        if (kind == KIND_SYMLINK)
            e->target = ef_dup("../some/target");
        es[i] = e;
    }
    return es;
}

static void
free_entries(struct entry **es, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        entry_clear(es[i]);
        free(es[i]);
    }
    free(es);
}

/* The packs of make_entries: ids 1..6 x 16 bytes, and 0xee (a format-1 object). */
static void
pack_of(struct seg_pack *p, uint8_t id, uint64_t size)
{
    memset(p, 0, sizeof(*p));
    memset(p->id, id, PACK_ID_BYTES);
    p->size = size;
    memset(p->hash, id ^ 0x77, 32);
}

/* ---- building ---- */

struct built {
    struct buf bytes;
    uint8_t chain[32];
    struct seg_params p;
    uint8_t prev[32], kfh[32], superseded[2][32], wrap[100];
    struct seg_pack introduced[2], known[1];
    struct seg_history history[3];
};

/* build_delta(b, epoch, es, n): a delta of ${es} with every head field set:
 * base 1, two superseded key-file hashes, a wrap, packs 1 and 2 introduced
 * and pack 6 known (described by an earlier segment). */
static int
build_delta(struct built *b, uint64_t epoch, struct entry **es, size_t n)
{
    memset(b, 0, sizeof(*b));
    for (int i = 0; i < 32; i++) {
        b->prev[i] = (uint8_t)(epoch + i);
        b->kfh[i] = (uint8_t)(0xc0 + i);
        b->superseded[0][i] = (uint8_t)i;
        b->superseded[1][i] = (uint8_t)(0xff - i);
    }
    for (size_t i = 0; i < sizeof(b->wrap); i++)
        b->wrap[i] = (uint8_t)(i * 3);
    pack_of(&b->introduced[0], 1, 4000000);
    pack_of(&b->introduced[1], 2, 123);
    pack_of(&b->known[0], 6, 99);
    b->p.epoch = epoch;
    b->p.kind = SEGMENT_DELTA;
    b->p.base = 1;
    b->p.time = -12345; /* signed */
    b->p.prev_chain = b->prev;
    b->p.keyfile_hash = b->kfh;
    b->p.superseded = (const uint8_t(*)[32])b->superseded;
    b->p.nsuperseded = 2;
    b->p.cmd_key = cmd_key;
    b->p.wrap = b->wrap;
    b->p.wraplen = sizeof(b->wrap);
    b->p.introduced = b->introduced;
    b->p.nintroduced = 2;
    b->p.known = b->known;
    b->p.nknown = 1;
    return segment_build(&vault, &b->p, es, n, &b->bytes, b->chain);
}

/* read_all(s, out, n): every entry of every block, in block order. */
static int
read_all(const struct segment *s, struct entry **out, size_t *n)
{
    struct entry *all = NULL;
    size_t total = 0;

    for (size_t i = 0; i < s->nblocks; i++) {
        struct entry *es;
        size_t m;
        int rc = segment_block(&vault, s, i, &es, &m);
        if (rc != 0) {
            for (size_t k = 0; k < total; k++)
                entry_clear(&all[k]);
            free(all);
            return rc;
        }
        struct entry *grown = realloc(all, (total + m + 1) * sizeof(*grown));
        if (grown == NULL)
            exit(2);
        all = grown;
        memcpy(all + total, es, m * sizeof(*es));
        total += m;
        free(es);
    }
    *out = all;
    *n = total;
    return 0;
}

static int
compare_entry_ptr_names(const void *a, const void *b)
{
    return strcmp((*(struct entry *const *)a)->name, (*(struct entry *const *)b)->name);
}

/* check_entries(s, es, n): the segment's blocks hold exactly ${es}: equal
 * fields, the epoch set, each file key recovered as key XOR pad(name), in
 * strictly ascending tag order, each block starting with its index's tag. */
static void
check_entries(const struct segment *s, struct entry **es, size_t n)
{
    struct entry *all = NULL, **sorted = malloc((n + 1) * sizeof(*sorted));
    size_t total = 0, k = 0;
    uint8_t prev[TAG_BYTES];

    REQUIRE(sorted != NULL);
    memcpy(sorted, es, n * sizeof(*es));
    qsort(sorted, n, sizeof(*sorted), compare_entry_ptr_names);
    CHECK_EQ_INT(read_all(s, &all, &total), 0);
    CHECK_EQ_INT(total, n);
    CHECK_EQ_INT(s->nentries, n);
    for (size_t b = 0; b < s->nblocks; b++) {
        uint64_t in_block = s->blocks[b].n;
        for (uint64_t j = 0; j < in_block && k < total; j++, k++) {
            const struct entry *got = &all[k];
            struct entry key = { 0 }, *kp = &key, **hit;
            uint8_t tag[TAG_BYTES];
            my_tag(&vault, got->name, tag);
            if (j == 0)
                CHECK_MEM(tag, s->blocks[b].first, TAG_BYTES);
            if (k > 0)
                CHECK(memcmp(prev, tag, TAG_BYTES) < 0);
            memcpy(prev, tag, TAG_BYTES);
            CHECK_EQ_INT(got->epoch, s->epoch);
            key.name = got->name;
            hit = bsearch(&kp, sorted, n, sizeof(*sorted), compare_entry_ptr_names);
            if (hit == NULL) {
                CHECK(!"an entry not built");
                continue;
            }
            CHECK(ef_equal(got, *hit));
            if (got->kind == KIND_FILE) {
                uint8_t pad[32], clear[32];
                CHECK_EQ_INT(got->key_state, KEY_STORED);
                CHECK_EQ_INT(segment_pad(cmd_key, tag, pad), 0);
                for (int x = 0; x < 32; x++)
                    clear[x] = got->key[x] ^ pad[x];
                CHECK_MEM(clear, (*hit)->key, 32);
            }
        }
    }
    CHECK_EQ_INT(k, total);
    for (size_t i = 0; i < total; i++)
        entry_clear(&all[i]);
    free(all);
    free(sorted);
}

/* check_layout(s, big, big_seen): each block's plaintext, opened by the
 * test: every entry but the last starts before byte 65536, every block but
 * the last reaches 65536 bytes (a writer closes a block as soon as it does),
 * and the entry named ${big} (if any) ends its block. */
static void
check_layout(const struct segment *s, const char *big, int *big_seen)
{
    for (size_t b = 0; b < s->nblocks; b++) {
        const struct seg_block *blk = &s->blocks[b];
        uint8_t nonce[PQV_AEAD_NONCE_BYTES] = { 0 }, *plain = malloc(blk->len);
        size_t plainlen = blk->len - PQV_AEAD_TAG_BYTES, off = 0;
        uint64_t count = 0;
        REQUIRE(plain != NULL);
        util_store_be64(nonce + 4, b + 1);
        CHECK_EQ_INT(pqv_aead_open1(s->suite, s->key, nonce, s->header, SEGMENT_HEADER_BYTES,
                         s->blockdata + blk->off, blk->len, plain), 0);
        if (b + 1 < s->nblocks)
            CHECK(plainlen >= BLOCK_TARGET);
        while (off < plainlen) {
            struct cursor c;
            struct entry e;
            size_t start = off;
            cursor_init(&c, plain + off, plainlen - off);
            if (entry_decode(&c, &e, &s->t) != 0) {
                CHECK(!"an entry did not decode");
                break;
            }
            off = plainlen - cursor_left(&c);
            count++;
            if (off < plainlen)
                CHECK(start < BLOCK_TARGET); /* not its block's last */
            if (big != NULL && strcmp(e.name, big) == 0) {
                *big_seen = 1;
                CHECK(off - start > BLOCK_TARGET);
                CHECK(off == plainlen);
            }
            entry_clear(&e);
        }
        CHECK_EQ_INT(count, blk->n);
        free(plain);
    }
}

/* find_by_index(s, name): the block whose range holds tag(name), found as a
 * reader does (the last block whose first tag is not above it). */
static long
find_by_index(const struct segment *s, const char *name)
{
    uint8_t tag[TAG_BYTES];
    long found = -1;

    my_tag(&vault, name, tag);
    for (size_t b = 0; b < s->nblocks; b++)
        if (memcmp(s->blocks[b].first, tag, TAG_BYTES) <= 0)
            found = (long)b;
    return found;
}

/* An empty segment: a header and a sealed head, no block; every head field
 * reads back; its chain is the test's. */
static void
test_empty_segment(void)
{
    struct built b;
    struct segment s;
    uint8_t want[32];

    set_keys(&vault, 1, PQV_AEAD_CHACHA20POLY1305);
    REQUIRE(build_delta(&b, 5, NULL, 0) == 0);
    REQUIRE(segment_open(&vault, 5, b.bytes.p, b.bytes.len, &s) == 0);
    CHECK_EQ_INT(s.epoch, 5);
    CHECK_EQ_INT(s.kind, SEGMENT_DELTA);
    CHECK_EQ_INT(s.suite, PQV_AEAD_CHACHA20POLY1305);
    CHECK_EQ_INT(s.time, -12345);
    CHECK_EQ_INT(s.base, 1);
    CHECK_MEM(s.prev_chain, b.prev, 32);
    CHECK_MEM(s.keyfile_hash, b.kfh, 32);
    CHECK_EQ_INT(s.nsuperseded, 2);
    CHECK(s.nsuperseded == 2 && memcmp(s.superseded, b.superseded, 64) == 0);
    CHECK_EQ_INT(s.nhistory, 0);
    CHECK(s.wraplen == sizeof(b.wrap) && memcmp(s.wrap, b.wrap, sizeof(b.wrap)) == 0);
    CHECK_EQ_INT(s.nblocks, 0);
    CHECK_EQ_INT(s.nentries, 0);
    CHECK_EQ_INT(s.blocklen, 0);
    CHECK_EQ_INT(s.t.nstrings, 0);
    CHECK_EQ_INT(s.t.npacks, 0); /* introduced packs no entry uses are not listed */
    CHECK_EQ_INT(b.bytes.len, SEGMENT_HEADER_BYTES + util_load_be32(b.bytes.p + 64));
    CHECK_EQ_INT(util_load_be32(b.bytes.p + 68), 0);
    CHECK(memcmp(b.bytes.p, "PQVS\x02\x01\x02\x00", 8) == 0);
    CHECK_EQ_INT(util_load_be64(b.bytes.p + 8), 5);
    CHECK_MEM(b.bytes.p + 16, vault.config.vault_id, VAULT_ID_BYTES);
    my_chain(b.prev, b.bytes.p, want);
    CHECK_MEM(b.chain, want, 32);
    CHECK_MEM(s.chain, want, 32);
    segment_free(&s);
    /* No wrap, no superseded hash: the minimal head. */
    b.p.wrap = NULL;
    b.p.wraplen = 0;
    b.p.nsuperseded = 0;
    b.p.cmd_key = NULL;
    REQUIRE(segment_build(&vault, &b.p, NULL, 0, &b.bytes, b.chain) == 0);
    REQUIRE(segment_open(&vault, 5, b.bytes.p, b.bytes.len, &s) == 0);
    CHECK(s.wrap == NULL && s.wraplen == 0 && s.nsuperseded == 0);
    segment_free(&s);
    buf_wipe_free(&b.bytes);
}

/* One entry of each kind alone in a segment: one block, read back equal. */
static void
test_one_entry(void)
{
    set_keys(&vault, 2, PQV_AEAD_AES256GCM);
    for (size_t which = 0; which < 7; which++) {
        struct entry **all = make_entries(7, 0), *one[1];
        struct built b;
        struct segment s;
        one[0] = all[which];
        REQUIRE(build_delta(&b, 3, one, 1) == 0);
        REQUIRE(segment_open(&vault, 3, b.bytes.p, b.bytes.len, &s) == 0);
        CHECK_EQ_INT(s.nblocks, 1);
        CHECK_EQ_INT(s.suite, PQV_AEAD_AES256GCM);
        check_entries(&s, one, 1);
        segment_free(&s);
        buf_wipe_free(&b.bytes);
        free_entries(all, 7);
    }
}

/* Thousands of entries and one larger than a block: many blocks, each
 * closed at 64 KiB, every entry back equal and in tag order, found in the
 * block the index points to (by the test and by state_lookup); the pack
 * table lists each pack once, with size and hash for those introduced. */
static void
test_many_entries(void)
{
    const size_t n = 8000;
    struct entry **es;
    struct built b;
    struct segment s;
    struct state st;
    int big_seen = 0;
    char big[128];
    uint8_t want[32];

    set_keys(&vault, 3, PQV_AEAD_CHACHA20POLY1305);
    es = make_entries(n, 1);
    snprintf(big, sizeof(big), "%s", es[n / 2]->name);
    REQUIRE(build_delta(&b, 9, es, n) == 0);
    REQUIRE(segment_open(&vault, 9, b.bytes.p, b.bytes.len, &s) == 0);
    CHECK(s.nblocks >= 10);
    CHECK_EQ_INT(util_load_be32(b.bytes.p + 68), s.nblocks);
    check_entries(&s, es, n);
    check_layout(&s, big, &big_seen);
    CHECK(big_seen);
    my_chain(b.prev, b.bytes.p, want);
    CHECK_MEM(b.chain, want, 32);
    CHECK_MEM(s.chain, want, 32);
    /* Packs: 1..6 and the format-1 object 0xee, once each. */
    CHECK_EQ_INT(s.t.npacks, 7);
    for (size_t i = 0; i < s.t.npacks; i++) {
        const struct seg_pack *p = &s.t.packs[i];
        uint8_t id = p->id[0], hash[32];
        memset(hash, id ^ 0x77, 32);
        if (id == 0xee)
            CHECK_EQ_INT(p->flags, PACK_V1_OBJECT);
        else if (id == 1 || id == 2 || id == 6) {
            CHECK_EQ_INT(p->flags, PACK_INTRODUCED);
            CHECK_EQ_INT(p->size, id == 1 ? 4000000 : id == 2 ? 123 : 99);
            CHECK_MEM(p->hash, hash, 32);
        } else
            CHECK_EQ_INT(p->flags, 0);
    }
    CHECK_EQ_INT(s.t.nstrings, 3 + 3); /* users, xattr names (user.big too) */
    /* Each name in the block the index gives; state_lookup finds it. */
    memset(&st, 0, sizeof(st));
    st.format = 2;
    st.segs = &s;
    st.nsegs = 1;
    for (size_t step = 0; step <= n / 97; step++) {
        size_t i = step < n / 97 ? step * 97 : n / 2; /* and the large one */
        long blk = find_by_index(&s, es[i]->name);
        struct entry *got;
        size_t m, k;
        struct entry out;
        REQUIRE(blk >= 0);
        REQUIRE(segment_block(&vault, &s, (size_t)blk, &got, &m) == 0);
        for (k = 0; k < m && strcmp(got[k].name, es[i]->name) != 0; k++)
            ;
        CHECK(k < m);
        for (size_t j = 0; j < m; j++)
            entry_clear(&got[j]);
        free(got);
        if (es[i]->kind == KIND_REMOVED) {
            CHECK_EQ_INT(state_lookup(&vault, &st, es[i]->name, &out), PQV_E_NOTFOUND);
            continue;
        }
        CHECK_EQ_INT(state_lookup(&vault, &st, es[i]->name, &out), 0);
        CHECK(ef_equal(&out, es[i]));
        entry_clear(&out);
    }
    {
        struct entry out;
        CHECK_EQ_INT(state_lookup(&vault, &st, "not/there", &out), PQV_E_NOTFOUND);
        CHECK_EQ_INT(state_lookup(&vault, &st, "d00", &out), PQV_E_NOTFOUND);
    }
    segment_free(&s);
    buf_wipe_free(&b.bytes);
    free_entries(es, n);
}

/* What segment_build refuses: a name twice, a file without the command key
 * or without its clear key. */
static void
test_build_refusals(void)
{
    struct entry **es;
    struct built b;

    set_keys(&vault, 4, PQV_AEAD_CHACHA20POLY1305);
    es = make_entries(3, 0); /* a file, a file, a file */
    free(es[1]->name);
    es[1]->name = ef_dup(es[0]->name);
    CHECK_EQ_INT(build_delta(&b, 2, es, 2), PQV_E_INVAL);
    buf_wipe_free(&b.bytes);
    free(es[1]->name);
    es[1]->name = ef_dup("another/name");
    CHECK_EQ_INT(build_delta(&b, 2, es, 2), 0);
    b.p.cmd_key = NULL;
    CHECK_EQ_INT(segment_build(&vault, &b.p, es, 2, &b.bytes, b.chain), PQV_E_INVAL);
    b.p.cmd_key = cmd_key;
    es[2]->key_state = KEY_STORED;
    CHECK_EQ_INT(segment_build(&vault, &b.p, es + 2, 1, &b.bytes, b.chain), PQV_E_INVAL);
    buf_wipe_free(&b.bytes);
    free_entries(es, 3);
}

/* A base: its history of chain values (epochs 1 .. B-1, ascending) and
 * the packs earlier segments described read back; then heads that a
 * writer must never produce are refused by the reader: a base whose base
 * epoch is not its own, a delta whose base is not below it, a history out
 * of order or reaching the base's epoch. */
static void
test_base_with_history(void)
{
    struct entry **es;
    struct built b;
    struct segment s;
    uint8_t want[32];

    set_keys(&vault, 5, PQV_AEAD_CHACHA20POLY1305);
    es = make_entries(50, 0);
    REQUIRE(build_delta(&b, 4, es, 50) == 0);
    for (int i = 0; i < 3; i++) {
        b.history[i].epoch = (uint64_t)i + 1;
        memset(b.history[i].chain, 0x10 * (i + 1), 32);
    }
    b.p.kind = SEGMENT_BASE;
    b.p.base = 4;
    b.p.history = b.history;
    b.p.nhistory = 3;
    b.p.prev_chain = b.history[2].chain;
    REQUIRE(segment_build(&vault, &b.p, es, 50, &b.bytes, b.chain) == 0);
    REQUIRE(segment_open(&vault, 4, b.bytes.p, b.bytes.len, &s) == 0);
    CHECK_EQ_INT(s.kind, SEGMENT_BASE);
    CHECK_EQ_INT(b.bytes.p[5], SEGMENT_BASE);
    CHECK_EQ_INT(s.base, 4);
    CHECK_EQ_INT(s.nhistory, 3);
    for (size_t i = 0; i < s.nhistory && i < 3; i++) {
        CHECK_EQ_INT(s.history[i].epoch, i + 1);
        CHECK_MEM(s.history[i].chain, b.history[i].chain, 32);
    }
    CHECK_MEM(s.prev_chain, b.history[2].chain, 32);
    my_chain(b.history[2].chain, b.bytes.p, want);
    CHECK_MEM(s.chain, want, 32);
    check_entries(&s, es, 50);
    segment_free(&s);

    /* An empty history (a base of epoch 1 after... a first compaction). */
    b.p.nhistory = 0;
    REQUIRE(segment_build(&vault, &b.p, es, 50, &b.bytes, b.chain) == 0);
    CHECK_EQ_INT(segment_open(&vault, 4, b.bytes.p, b.bytes.len, &s), 0);
    segment_free(&s);

    /* Heads a writer never writes. */
    b.p.nhistory = 3;
    b.p.base = 3;
    REQUIRE(segment_build(&vault, &b.p, es, 50, &b.bytes, b.chain) == 0);
    CHECK_EQ_INT(segment_open(&vault, 4, b.bytes.p, b.bytes.len, &s), PQV_E_INTEGRITY);
    b.p.base = 4;
    b.history[1].epoch = 1;
    REQUIRE(segment_build(&vault, &b.p, es, 50, &b.bytes, b.chain) == 0);
    CHECK_EQ_INT(segment_open(&vault, 4, b.bytes.p, b.bytes.len, &s), PQV_E_INTEGRITY);
    b.history[1].epoch = 2;
    b.history[2].epoch = 4;
    REQUIRE(segment_build(&vault, &b.p, es, 50, &b.bytes, b.chain) == 0);
    CHECK_EQ_INT(segment_open(&vault, 4, b.bytes.p, b.bytes.len, &s), PQV_E_INTEGRITY);
    b.history[2].epoch = 3;
    b.p.kind = SEGMENT_DELTA;
    b.p.base = 4;
    REQUIRE(segment_build(&vault, &b.p, es, 50, &b.bytes, b.chain) == 0);
    CHECK_EQ_INT(segment_open(&vault, 4, b.bytes.p, b.bytes.len, &s), PQV_E_INTEGRITY);
    b.p.base = 3;
    REQUIRE(segment_build(&vault, &b.p, es, 50, &b.bytes, b.chain) == 0);
    CHECK_EQ_INT(segment_open(&vault, 4, b.bytes.p, b.bytes.len, &s), 0);
    segment_free(&s);
    buf_wipe_free(&b.bytes);
    free_entries(es, 50);
}

/* Epochs 1 (a base), 2 and 3 chained: each carries the chain value of the
 * one before, each chain value is the test's. */
static void
test_chain_of_epochs(void)
{
    struct entry **es;
    uint8_t chain[32] = { 0 }, want[32];

    set_keys(&vault, 6, PQV_AEAD_AES256GCM);
    es = make_entries(30, 0);
    for (uint64_t epoch = 1; epoch <= 3; epoch++) {
        struct built b;
        struct segment s;
        REQUIRE(build_delta(&b, epoch, es + (epoch - 1) * 10, 10) == 0);
        b.p.prev_chain = chain;
        b.p.kind = epoch == 1 ? SEGMENT_BASE : SEGMENT_DELTA;
        b.p.base = 1;
        REQUIRE(segment_build(&vault, &b.p, es + (epoch - 1) * 10, 10, &b.bytes, b.chain) == 0);
        REQUIRE(segment_open(&vault, epoch, b.bytes.p, b.bytes.len, &s) == 0);
        CHECK_MEM(s.prev_chain, chain, 32);
        my_chain(chain, b.bytes.p, want);
        CHECK_MEM(b.chain, want, 32);
        CHECK_MEM(s.chain, want, 32);
        /* The blocks are not hashed: the head commits to them. */
        if (s.nblocks > 0) {
            b.bytes.p[b.bytes.len - 1] ^= 1;
            my_chain(chain, b.bytes.p, want);
            CHECK_MEM(b.chain, want, 32);
        }
        memcpy(chain, s.chain, 32);
        segment_free(&s);
        buf_wipe_free(&b.bytes);
    }
    free_entries(es, 30);
}

/* refused(blob, len, epoch): segment_open refuses it, or one of its blocks
 * is refused, with PQV_E_INTEGRITY; -1 if it all opens, else the code. */
static int
refused(const uint8_t *blob, size_t len, uint64_t epoch)
{
    struct segment s;
    int rc = segment_open(&vault, epoch, blob, len, &s);

    if (rc != 0)
        return rc;
    for (size_t i = 0; i < s.nblocks && rc == 0; i++) {
        struct entry *es;
        size_t n;
        if ((rc = segment_block(&vault, &s, i, &es, &n)) == 0) {
            for (size_t k = 0; k < n; k++)
                entry_clear(&es[k]);
            free(es);
        }
    }
    segment_free(&s);
    return rc != 0 ? rc : -1;
}

/* A small segment (three entries, one block): every bit of it flipped in
 * turn (header, sealed head, block) is refused with PQV_E_INTEGRITY; so is
 * every truncation, a byte appended, the wrong epoch, another vault's id,
 * another vault's segment key; another names key opens the head but not
 * the block (its tags are another order). */
static void
test_tampering_refused(void)
{
    struct entry **es;
    struct built b;
    struct pqv_vault saved;
    size_t len;
    uint8_t *copy;

    set_keys(&vault, 7, PQV_AEAD_CHACHA20POLY1305);
    es = make_entries(6, 0);
    REQUIRE(build_delta(&b, 2, es + 3, 3) == 0); /* a directory, a file, a link */
    len = b.bytes.len;
    REQUIRE((copy = malloc(len + 1)) != NULL);
    REQUIRE(refused(b.bytes.p, len, 2) == -1);
    {
        struct segment s;
        REQUIRE(segment_open(&vault, 2, b.bytes.p, len, &s) == 0);
        CHECK_EQ_INT(s.nblocks, 1);
        segment_free(&s);
    }
    for (size_t i = 0; i < len; i++)
        for (int bit = 0; bit < 8; bit++) {
            int rc;
            memcpy(copy, b.bytes.p, len);
            copy[i] ^= (uint8_t)(1u << bit);
            if ((rc = refused(copy, len, 2)) != PQV_E_INTEGRITY) {
                CHECK(!"a flipped bit not refused");
                fprintf(stderr, "  byte %zu bit %d of %zu: %d\n", i, bit, len, rc);
            }
        }
    for (size_t cut = 0; cut < len; cut++)
        if (refused(b.bytes.p, cut, 2) != PQV_E_INTEGRITY) {
            CHECK(!"a truncation not refused");
            fprintf(stderr, "  cut at %zu of %zu\n", cut, len);
        }
    memcpy(copy, b.bytes.p, len);
    copy[len] = 0;
    CHECK_EQ_INT(refused(copy, len + 1, 2), PQV_E_INTEGRITY);
    CHECK_EQ_INT(refused(b.bytes.p, len, 1), PQV_E_INTEGRITY);
    CHECK_EQ_INT(refused(b.bytes.p, len, 3), PQV_E_INTEGRITY);
    CHECK_EQ_INT(refused(b.bytes.p, len, 2 + (1ull << 32)), PQV_E_INTEGRITY);
    saved = vault;
    vault.config.vault_id[15] ^= 1;
    CHECK_EQ_INT(refused(b.bytes.p, len, 2), PQV_E_INTEGRITY);
    vault = saved;
    vault.segments_key[0] ^= 1;
    CHECK_EQ_INT(refused(b.bytes.p, len, 2), PQV_E_INTEGRITY);
    vault = saved;
    vault.names_key[0] ^= 1;
    {
        struct segment s;
        CHECK_EQ_INT(segment_open(&vault, 2, b.bytes.p, len, &s), 0);
        segment_free(&s);
    }
    CHECK_EQ_INT(refused(b.bytes.p, len, 2), PQV_E_INTEGRITY);
    vault = saved;
    CHECK_EQ_INT(refused(b.bytes.p, len, 2), -1);
    free(copy);
    buf_wipe_free(&b.bytes);
    free_entries(es, 6);
}

/* Two segments' blocks exchanged, or a block moved to another index, do
 * not open: blocks are sealed under their segment's key and index. */
static void
test_blocks_bound_to_segment_and_index(void)
{
    struct entry **es;
    struct built b1, b2;
    struct segment s1, s2;

    set_keys(&vault, 8, PQV_AEAD_AES256GCM);
    es = make_entries(3000, 0);
    REQUIRE(build_delta(&b1, 2, es, 3000) == 0);
    REQUIRE(build_delta(&b2, 2, es, 3000) == 0); /* the same entries, another salt */
    REQUIRE(segment_open(&vault, 2, b1.bytes.p, b1.bytes.len, &s1) == 0);
    REQUIRE(segment_open(&vault, 2, b2.bytes.p, b2.bytes.len, &s2) == 0);
    REQUIRE(s1.nblocks >= 2 && s1.blocklen == s2.blocklen);
    /* The same plaintext blocks, sealed under another key. */
    CHECK(memcmp(s1.blockdata, s2.blockdata, s1.blocklen) != 0);
    memcpy(s1.blockdata, s2.blockdata, s1.blocklen);
    {
        struct entry *got;
        size_t n;
        CHECK_EQ_INT(segment_block(&vault, &s1, 0, &got, &n), PQV_E_INTEGRITY);
        /* Block 0 read as block 1 (the index says where each one is). */
        s2.blocks[1].off = s2.blocks[0].off;
        s2.blocks[1].len = s2.blocks[0].len;
        CHECK_EQ_INT(segment_block(&vault, &s2, 1, &got, &n), PQV_E_INTEGRITY);
    }
    segment_free(&s1);
    segment_free(&s2);
    buf_wipe_free(&b1.bytes);
    buf_wipe_free(&b2.bytes);
    free_entries(es, 3000);
}

/* segment_check_header on its own: each field of a good header changed. */
static void
test_check_header(void)
{
    struct entry **es;
    struct built b;
    uint8_t h[SEGMENT_HEADER_BYTES];
    struct { const char *what; size_t at; uint8_t value; } cases[] = {
        { "magic", 0, 'X' }, { "magic", 3, 's' }, { "version 1", 4, 1 }, { "version 4", 4, 4 },
        { "kind 0", 5, 0 }, { "kind 3", 5, 3 }, { "suite 0", 6, 0 }, { "suite 9", 6, 9 },
        { "reserved byte", 7, 1 }, { "epoch", 15, 3 }, { "vault id", 16, 0 },
        { "head length < 16", 64, 0 },
    };

    set_keys(&vault, 9, PQV_AEAD_CHACHA20POLY1305);
    es = make_entries(1, 0);
    REQUIRE(build_delta(&b, 2, es, 1) == 0);
    memcpy(h, b.bytes.p, sizeof(h));
    CHECK_EQ_INT(segment_check_header(h, sizeof(h), 2, vault.config.vault_id), 0);
    CHECK_EQ_INT(segment_check_header(h, sizeof(h), 2, NULL), 0);
    CHECK_EQ_INT(segment_check_header(h, sizeof(h) - 1, 2, vault.config.vault_id), PQV_E_INTEGRITY);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t bad[SEGMENT_HEADER_BYTES];
        memcpy(bad, h, sizeof(h));
        if (cases[i].at == 64) {
            util_store_be32(bad + 64, PQV_AEAD_TAG_BYTES - 1);
        } else {
            if (bad[cases[i].at] == cases[i].value)
                cases[i].value ^= 0x80;
            bad[cases[i].at] = cases[i].value;
        }
        if (segment_check_header(bad, sizeof(bad), 2, vault.config.vault_id) != PQV_E_INTEGRITY) {
            CHECK(!"a bad header accepted");
            fprintf(stderr, "  case %s\n", cases[i].what);
        }
    }
    /* Another vault's id is only checked when one is given. */
    h[16] ^= 1;
    CHECK_EQ_INT(segment_check_header(h, sizeof(h), 2, NULL), 0);
    buf_wipe_free(&b.bytes);
    free_entries(es, 1);
}

/* ---- a real vault's segments ---- */

static const struct pqv_kdf_params cheap = { 1, 64, 1 };
static const uint8_t pass[] = "segment test passphrase";

static int
write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static uint8_t *
read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (p = malloc((size_t)n + 1)) != NULL && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    if (p != NULL)
        *len = (size_t)n;
    fclose(f);
    return p;
}

/* A vault made by the library (create, unlock, three adds): the chain the
 * test computes from the segment files on disk, epoch by epoch, is the one
 * each next segment carries and the one state_open verifies; each segment
 * opens with the vault's own keys and its entries are the added names. */
static void
test_real_vault(void)
{
    char root[256], dir[512], src[512], path[700], rec[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS];
    struct pqv_init_options init = { "FrodoKEM-640-SHAKE", PQV_AEAD_CHACHA20POLY1305, &cheap, 2,
        NULL, NULL, NULL , 0};
    struct pqv_add_options opt;
    pqv_vault *v = NULL;
    struct state st;
    uint8_t chain[32] = { 0 }, want[32];
    uint64_t first = 0, last = 0;
    int found_names = 0;

    snprintf(root, sizeof(root), "%s/pqv-segment-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(root) != NULL);
    snprintf(dir, sizeof(dir), "%s/vault", root);
    snprintf(src, sizeof(src), "%s/src", root);
    REQUIRE(mkdir(src, 0700) == 0);
    snprintf(path, sizeof(path), "%s/one.txt", src);
    REQUIRE(write_text(path, "one") == 0);
    snprintf(path, sizeof(path), "%s/two.txt", src);
    REQUIRE(write_text(path, "two") == 0);
    REQUIRE(pqv_vault_create(dir, NULL, pass, sizeof(pass) - 1, &init, rec, fp) == 0);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    REQUIRE(pqv_vault_unlock(v, pass, sizeof(pass) - 1) == 0);
    REQUIRE(pqv_vault_lock_writer(v, 0, NULL, 0) == 0);
    memset(&opt, 0, sizeof(opt));
    CHECK_EQ_INT(pqv_vault_add_path(v, src, "src", &opt), 0);
    snprintf(path, sizeof(path), "%s/three.txt", src);
    REQUIRE(write_text(path, "three") == 0);
    CHECK_EQ_INT(pqv_vault_add_path(v, src, "src", &opt), 0);
    CHECK_EQ_INT(pqv_vault_add_path(v, path, "top.txt", &opt), 0);

    /* The segment files, oldest first. */
    for (uint64_t epoch = 1; epoch < 64; epoch++) {
        struct segment s;
        uint8_t *blob;
        size_t len;
        snprintf(path, sizeof(path), "%s/segments/%016llx", dir, (unsigned long long)epoch);
        if ((blob = read_whole(path, &len)) == NULL) {
            if (first != 0)
                break;
            continue; /* before the base (compacted away) */
        }
        if (first == 0)
            first = epoch;
        last = epoch;
        if (segment_open(v, epoch, blob, len, &s) != 0) {
            CHECK(!"a segment of the vault did not open");
            free(blob);
            break;
        }
        if (epoch == first)
            memcpy(chain, s.prev_chain, 32); /* chain(B - 1), as the base carries it */
        CHECK_MEM(s.prev_chain, chain, 32);
        my_chain(chain, blob, want);
        CHECK_MEM(s.chain, want, 32);
        memcpy(chain, want, 32);
        for (size_t i = 0; i < s.nblocks; i++) {
            struct entry *es;
            size_t n;
            CHECK_EQ_INT(segment_block(v, &s, i, &es, &n), 0);
            for (size_t k = 0; k < n && es != NULL; k++) {
                found_names += strcmp(es[k].name, "src/three.txt") == 0 ||
                    strcmp(es[k].name, "top.txt") == 0;
                entry_clear(&es[k]);
            }
            free(es);
        }
        segment_free(&s);
        free(blob);
    }
    CHECK(first >= 1 && last >= first);
    CHECK(found_names >= 2);
    REQUIRE(state_open(v, &st, NULL) == 0);
    CHECK_EQ_INT(st.epoch, last);
    CHECK_MEM(st.chain, chain, 32);
    state_free(&st);
    pqv_vault_close(v);
    snprintf(path, sizeof(path), "rm -rf '%s'", root);
    CHECK(system(path) == 0);
}

TEST_MAIN(test_empty_segment, test_one_entry, test_many_entries, test_build_refusals,
    test_base_with_history, test_chain_of_epochs, test_tampering_refused,
    test_blocks_bound_to_segment_and_index, test_check_header, test_real_vault)
