/*
 * test_entry.c: the entry codec of formats 2 and 3 (src/vault/entry.c,
 * docs/FORMAT.md section 13) and the kinds table (src/vault/kinds.c),
 * without a vault: every kind round trips with every optional field; the
 * string and pack tables built while encoding deduplicate and index;
 * malformed encodings, each one field away from a valid one (built by an
 * encoder of the test's own, from the format's text), are refused with
 * PQV_E_INTEGRITY; truncations, an extra byte and every flipped bit are
 * refused or decoded, never a crash (run it under ASan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "entry_fixture.h"
#include "harness.h"
#include "pqvault/aead.h"
#include "pqvault/vault.h"
#include "util/buf.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/kinds.h"

static const uint8_t stored_key[PQV_FILE_KEY_BYTES] = {
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
    0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87, 0x78, 0x69, 0x5a, 0x4b, 0x3c, 0x2d, 0x1e, 0x0f,
};

/* ---- sample entries: every kind, every optional field ---- */

/* A file of several extents (zstd, plain, a format-1 object), holes between
 * them and after the last, on three packs (one used twice). */
static void
sample_file(struct entry *e)
{
    static const uint8_t selinux[] = { 's', 'y', 's', 0, 'u', 0xff, 0 };

    ef_init(e, "docs/report.pdf", KIND_FILE);
    e->perm = 04750;
    e->uid = 1000;
    e->gid = 100;
    e->user = ef_dup("alice");
    e->group = ef_dup("staff");
    e->mtime_sec = -86400 * 365; /* before 1970: zigzag */
    e->mtime_nsec = 999999999;
    e->ctime_sec = 1700000000;
    e->ctime_nsec = 1;
    e->dev = 0x803;
    e->ino = 1234567890123ull;
    e->origin = ef_dup("/home/alice/docs");
    e->hlgroup = 0x8000000000000001ull;
    ef_xattr(e, "user.comment", "hello", 5);
    ef_xattr(e, "security.selinux", selinux, sizeof(selinux));
    ef_xattr(e, "user.empty", "", 0);
    e->suite = PQV_AEAD_CHACHA20POLY1305;
    e->size = (12u << 20) + 100;
    ef_extent(e, 0, 4u << 20, 0xa1, 0, 1000, EXTENT_ZSTD, 0);
    ef_extent(e, 4u << 20, 4u << 20, 0xa1, 1000, (4u << 20) + 32, 0, 0);
    /* a hole of 2 MiB */
    ef_extent(e, 10u << 20, 100000, 0xb2, 77, 100032, 0, 0);
    ef_extent(e, 11u << 20, 4096, 0xc3, 0, (uint32_t)object_sealed_size(4096), 0, PACK_V1_OBJECT);
    /* and the end of the file is a hole */
}

/* A file of one extent with its content hash. */
static void
sample_small_file(struct entry *e)
{
    ef_init(e, "docs/a.txt", KIND_FILE);
    e->perm = 0644;
    e->user = ef_dup("alice");
    e->group = ef_dup("staff");
    e->mtime_sec = 1;
    e->suite = PQV_AEAD_AES256GCM;
    e->size = 6;
    e->has_content = 1;
    for (size_t i = 0; i < sizeof(e->content); i++)
        e->content[i] = (uint8_t)(0x40 + i);
    ef_extent(e, 0, 6, 0xa1, 4000, 38, 0, 0);
}

static void
sample_dir(struct entry *e)
{
    ef_init(e, "docs", KIND_DIR);
    e->perm = 02755;
    e->uid = 1000;
    e->gid = 4294967295u;
    e->user = ef_dup("alice"); /* shared with the files: one string */
    e->group = NULL;           /* unknown */
    e->mtime_sec = INT64_MAX;
    e->ctime_sec = INT64_MIN;
    e->dev = UINT64_MAX;
    e->ino = 2;
    e->origin = ef_dup("/home/alice/docs");
    ef_xattr(e, "user.comment", "a directory", 11);
}

static void
sample_link(struct entry *e)
{
    ef_init(e, "docs/latest", KIND_SYMLINK);
    e->perm = 0777;
    e->group = ef_dup("wheel");
    e->hlgroup = 7;
    e->target = ef_dup("../elsewhere/report.pdf");
}

/* A FIFO (nothing of its own) and device nodes (their numbers, the
 * largest ones too). */
static void
sample_fifo(struct entry *e)
{
    ef_init(e, "dev/pipe", KIND_FIFO);
    e->perm = 0620;
    e->uid = 1000;
    e->user = ef_dup("alice");
    e->mtime_sec = 1600000000;
    e->ino = 77;
}

static void
sample_chardev(struct entry *e)
{
    ef_init(e, "dev/null", KIND_CHARDEV);
    e->perm = 0666;
    e->group = ef_dup("staff");
    e->rdev_major = 1;
    e->rdev_minor = 3;
    ef_xattr(e, "security.selinux", "x", 1);
}

static void
sample_blockdev(struct entry *e)
{
    ef_init(e, "dev/sda", KIND_BLOCKDEV);
    e->perm = 04660;
    e->rdev_major = UINT32_MAX;
    e->rdev_minor = 1u << 20;
}

static void
sample_removed(struct entry *e)
{
    REQUIRE(entry_removed(e, "old/gone") == 0);
}

typedef void (*sample_fn)(struct entry *);
static const sample_fn samples[] = { sample_file, sample_small_file, sample_dir, sample_link,
    sample_removed, sample_fifo, sample_chardev, sample_blockdev };
#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

/* encode_one(e, t, out): ${e} alone, encoded into ${out} (reset). */
static int
encode_one(const struct entry *e, struct seg_tables *t, struct buf *out)
{
    out->len = 0;
    return entry_encode(out, e, t, stored_key);
}

/* decode_bytes(p, n, t, e, left): decode one entry from ${p}; the bytes left. */
static int
decode_bytes(const uint8_t *p, size_t n, const struct seg_tables *t, struct entry *e, size_t *left)
{
    struct cursor c;
    int rc;

    cursor_init(&c, p, n);
    rc = entry_decode(&c, e, t);
    if (left != NULL)
        *left = cursor_left(&c);
    return rc;
}

/* Every kind with every optional field, encoded one after the other into one
 * block with shared tables, decodes back equal, in order, to the last byte;
 * files carry the stored key as given (KEY_STORED). */
static void
test_roundtrip_every_kind(void)
{
    struct entry in[NSAMPLES], out;
    struct seg_tables t;
    struct buf b = { NULL, 0, 0, 0 };
    struct cursor c;

    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    for (size_t i = 0; i < NSAMPLES; i++) {
        samples[i](&in[i]);
        CHECK_EQ_INT(entry_encode(&b, &in[i], &t, stored_key), 0);
    }
    REQUIRE(!b.nomem);
    cursor_init(&c, b.p, b.len);
    for (size_t i = 0; i < NSAMPLES; i++) {
        CHECK_EQ_INT(entry_decode(&c, &out, &t), 0);
        CHECK(ef_equal(&out, &in[i]));
        if (in[i].kind == KIND_FILE) {
            CHECK_EQ_INT(out.key_state, KEY_STORED);
            CHECK_MEM(out.key, stored_key, sizeof(stored_key));
        } else {
            CHECK_EQ_INT(out.key_state, KEY_NONE);
        }
        CHECK_EQ_INT(out.epoch, 0);
        entry_clear(&out);
    }
    CHECK_EQ_INT(cursor_left(&c), 0);
    CHECK(!c.bad);
    for (size_t i = 0; i < NSAMPLES; i++)
        entry_clear(&in[i]);
    entry_tables_free(&t);
    buf_wipe_free(&b);
}

/* Strings (user, group, extended-attribute names) are stored once per
 * table, in first-use order, and referred to by index + 1 (0: none); the
 * same entry encoded twice gives the same bytes and adds nothing. */
static void
test_string_table_dedup(void)
{
    static const char *const want[] = { "alice", "staff", "user.comment", "security.selinux",
        "user.empty", "wheel" };
    struct entry in[NSAMPLES];
    struct seg_tables t;
    struct buf b1 = { NULL, 0, 0, 0 }, b2 = { NULL, 0, 0, 0 };

    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    for (size_t i = 0; i < NSAMPLES; i++) {
        samples[i](&in[i]);
        CHECK_EQ_INT(encode_one(&in[i], &t, &b1), 0);
    }
    CHECK_EQ_INT(t.nstrings, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < t.nstrings && i < sizeof(want) / sizeof(want[0]); i++)
        CHECK(strcmp(t.strings[i], want[i]) == 0);
    /* Again: identical bytes, no new string, no new pack. */
    size_t nstrings = t.nstrings, npacks = t.npacks;
    CHECK_EQ_INT(encode_one(&in[0], &t, &b1), 0);
    CHECK_EQ_INT(encode_one(&in[0], &t, &b2), 0);
    CHECK_EQ_INT(b1.len, b2.len);
    CHECK(b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0);
    CHECK_EQ_INT(t.nstrings, nstrings);
    CHECK_EQ_INT(t.npacks, npacks);
    /* The directory's group is none: it decodes as NULL, not as a string. */
    struct entry out;
    CHECK_EQ_INT(encode_one(&in[2], &t, &b1), 0);
    CHECK_EQ_INT(decode_bytes(b1.p, b1.len, &t, &out, NULL), 0);
    CHECK(out.group == NULL);
    CHECK(out.user != NULL && strcmp(out.user, "alice") == 0);
    entry_clear(&out);
    for (size_t i = 0; i < NSAMPLES; i++)
        entry_clear(&in[i]);
    entry_tables_free(&t);
    buf_wipe_free(&b1);
    buf_wipe_free(&b2);
}

/* The pack table: one index per pack id (and per kind: a format-1 object
 * of the same id is another entry), the flags reduced to the format-1 bit,
 * indices stable as the table grows past its first allocation; a file's
 * extents name their packs through it. */
static void
test_pack_table(void)
{
    struct seg_tables t;
    uint8_t id[PACK_ID_BYTES];
    uint64_t index, again;
    struct entry e;
    struct buf b = { NULL, 0, 0, 0 };

    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    for (unsigned i = 0; i < 300; i++) {
        memset(id, 0, sizeof(id));
        id[0] = (uint8_t)i;
        id[15] = (uint8_t)(i >> 8);
        CHECK_EQ_INT(entry_tables_pack(&t, id, 0, &index), 0);
        CHECK_EQ_INT(index, i);
    }
    CHECK_EQ_INT(t.npacks, 300);
    for (unsigned i = 0; i < 300; i += 37) {
        memset(id, 0, sizeof(id));
        id[0] = (uint8_t)i;
        id[15] = (uint8_t)(i >> 8);
        CHECK_EQ_INT(entry_tables_pack(&t, id, PACK_INTRODUCED, &again), 0);
        CHECK_EQ_INT(again, i);
    }
    CHECK_EQ_INT(t.npacks, 300);
    memset(id, 0, sizeof(id));
    CHECK_EQ_INT(entry_tables_pack(&t, id, PACK_V1_OBJECT | PACK_INTRODUCED, &index), 0);
    CHECK_EQ_INT(index, 300);
    CHECK_EQ_INT(t.packs[300].flags, PACK_V1_OBJECT);
    CHECK_EQ_INT(t.packs[0].flags, 0);
    CHECK_EQ_INT(entry_tables_pack(&t, id, PACK_V1_OBJECT, &again), 0);
    CHECK_EQ_INT(again, 300);
    entry_tables_free(&t);
    CHECK(t.packs == NULL && t.npacks == 0 && t.strings == NULL);

    /* sample_file: packs a1 (twice), b2, c3 (a format-1 object). */
    sample_file(&e);
    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
    REQUIRE(t.npacks == 3);
    memset(id, 0xa1, sizeof(id));
    CHECK_MEM(t.packs[0].id, id, PACK_ID_BYTES);
    CHECK_EQ_INT(t.packs[0].flags, 0);
    memset(id, 0xb2, sizeof(id));
    CHECK_MEM(t.packs[1].id, id, PACK_ID_BYTES);
    memset(id, 0xc3, sizeof(id));
    CHECK_MEM(t.packs[2].id, id, PACK_ID_BYTES);
    CHECK_EQ_INT(t.packs[2].flags, PACK_V1_OBJECT);
    entry_clear(&e);
    entry_tables_free(&t);
    buf_wipe_free(&b);
}

/* A removed entry is its name and kind only, whatever else the structure
 * holds; the rest decodes as zeros. */
static void
test_removed_is_name_and_kind(void)
{
    struct entry e, out;
    struct seg_tables t;
    struct buf b = { NULL, 0, 0, 0 };
    static const uint8_t want[] = { 10, 8, 'o', 'l', 'd', '/', 'g', 'o', 'n', 'e', KIND_REMOVED };

    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    sample_file(&e);
    e.kind = KIND_REMOVED;
    free(e.name);
    e.name = ef_dup("old/gone");
    CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
    CHECK_EQ_INT(b.len, sizeof(want));
    CHECK(b.len == sizeof(want) && memcmp(b.p, want, sizeof(want)) == 0);
    CHECK_EQ_INT(t.nstrings, 0);
    CHECK_EQ_INT(t.npacks, 0);
    CHECK_EQ_INT(decode_bytes(b.p, b.len, &t, &out, NULL), 0);
    CHECK_EQ_INT(out.kind, KIND_REMOVED);
    CHECK(strcmp(out.name, "old/gone") == 0);
    CHECK(out.user == NULL && out.origin == NULL && out.nxattrs == 0 && out.nextents == 0 &&
        out.perm == 0 && out.size == 0 && out.target == NULL);
    entry_clear(&out);
    entry_clear(&e);
    entry_tables_free(&t);
    buf_wipe_free(&b);
}

/* Encoding keeps only the permission bits (not the file type), writes a
 * content hash for files only, and refuses a kind it does not know. */
static void
test_encode_normalises_and_refuses(void)
{
    struct entry e, out;
    struct seg_tables t;
    struct buf b = { NULL, 0, 0, 0 };

    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    sample_dir(&e);
    e.perm = S_IFDIR | 0755;
    e.has_content = 1; /* meaningless for a directory: not written */
    CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
    CHECK_EQ_INT(decode_bytes(b.p, b.len, &t, &out, NULL), 0);
    CHECK_EQ_INT(out.perm, 0755);
    CHECK_EQ_INT(out.has_content, 0);
    entry_clear(&out);
    for (int kind = 0; kind < 8; kind++) {
        if (kinds_find(kind) != NULL)
            continue;
        e.kind = kind;
        b.len = 0;
        CHECK_EQ_INT(entry_encode(&b, &e, &t, stored_key), PQV_E_INVAL);
        CHECK_EQ_INT(b.len, 0);
    }
    entry_clear(&e);
    entry_tables_free(&t);
    buf_wipe_free(&b);
}

/* Values at the edges of their ranges are accepted: permission bits 07777,
 * nanoseconds 999999999, uid and gid 2^32 - 1, an extent of exactly 4 MiB
 * ending at the size, a file of holes only (no extent), an empty file, a
 * name of PQV_NAME_MAX bytes, a link target of 4096 bytes, an extended
 * attribute of 64 KiB. */
static void
test_bounds_accepted(void)
{
    struct entry e, out;
    struct seg_tables t;
    struct buf b = { NULL, 0, 0, 0 };
    char *longname = malloc(PQV_NAME_MAX + 1), *longtarget = malloc(4097);
    uint8_t *big = calloc(1, MAX_XATTR_VALUE);

    REQUIRE(longname != NULL && longtarget != NULL && big != NULL);
    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    ef_init(&e, "f", KIND_FILE);
    e.perm = 07777;
    e.uid = e.gid = UINT32_MAX;
    e.mtime_nsec = e.ctime_nsec = 999999999;
    e.suite = PQV_AEAD_AES256GCM;
    e.size = (8u << 20);
    ef_extent(&e, 4u << 20, PQV_OBJECT_MAX_PLAIN, 1, UINT32_MAX, UINT32_MAX, EXTENT_ZSTD, 0);
    ef_xattr(&e, "user.big", big, MAX_XATTR_VALUE);
    CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
    CHECK_EQ_INT(decode_bytes(b.p, b.len, &t, &out, NULL), 0);
    CHECK(ef_equal(&out, &e));
    entry_clear(&out);
    /* holes only, then empty */
    free(e.extents);
    e.extents = NULL;
    e.nextents = 0;
    e.size = 1ull << 40;
    CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
    CHECK_EQ_INT(decode_bytes(b.p, b.len, &t, &out, NULL), 0);
    CHECK(ef_equal(&out, &e));
    entry_clear(&out);
    e.size = 0;
    CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
    CHECK_EQ_INT(decode_bytes(b.p, b.len, &t, &out, NULL), 0);
    CHECK(ef_equal(&out, &e));
    entry_clear(&out);
    entry_clear(&e);
    /* the longest name, the longest target */
    memset(longname, 'n', PQV_NAME_MAX);
    longname[PQV_NAME_MAX] = '\0';
    memset(longtarget, 't', 4096);
    longtarget[4096] = '\0';
    ef_init(&e, longname, KIND_SYMLINK);
    e.target = ef_dup(longtarget);
    CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
    CHECK_EQ_INT(decode_bytes(b.p, b.len, &t, &out, NULL), 0);
    CHECK(ef_equal(&out, &e));
    entry_clear(&out);
    entry_clear(&e);
    entry_tables_free(&t);
    buf_wipe_free(&b);
    free(longname);
    free(longtarget);
    free(big);
}

/* An entry copy is deep and equal. */
static void
test_entry_copy(void)
{
    for (size_t i = 0; i < NSAMPLES; i++) {
        struct entry e, c;
        samples[i](&e);
        CHECK_EQ_INT(entry_copy(&c, &e), 0);
        CHECK(ef_equal(&c, &e));
        CHECK(c.name != e.name);
        CHECK(c.nxattrs == 0 || c.xattrs != e.xattrs);
        CHECK(c.nextents == 0 || c.extents != e.extents);
        entry_clear(&e); /* c must not depend on it */
        CHECK(c.name != NULL && c.name[0] != '\0');
        entry_clear(&c);
    }
}

/* entry_sort_by_name: names in byte order, a name's entries oldest or
 * newest first, then in the order they came (stable), ${along} moved with
 * them; input already in that order comes out the same (the sort is
 * skipped then: the result, not the skipping, is what is checked), input
 * in any other order sorted the same (shuffled). */
static void
test_sort_by_name(void)
{
    enum { N = 300 };
    static const char *names[] = { "b/x", "a", "b", "a/c", "a b", "" };
    struct entry e[N];
    uint32_t along[N];
    size_t n = 0;
    uint64_t seed = 7;

    for (int pass = 0; pass < 4; pass++) {
        int newest = pass & 1;
        n = 0;
        for (size_t i = 0; i < N; i++) {
            ef_init(&e[n], names[i % 6], KIND_FILE);
            e[n].epoch = (i / 6) % 5;
            e[n].size = i;          /* where it came from */
            along[n++] = (uint32_t)i;
        }
        if (pass >= 2) {
            /* (sorted already: sort it first, then again) */
            CHECK_EQ_INT(entry_sort_by_name(e, n, newest, along), 0);
        } else {
            for (size_t i = n - 1; i > 0; i--) { /* shuffled */
                size_t j;
                struct entry t;
                uint32_t ta;
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                j = (size_t)(seed >> 33) % (i + 1);
                t = e[i], e[i] = e[j], e[j] = t;
                ta = along[i], along[i] = along[j], along[j] = ta;
            }
        }
        CHECK_EQ_INT(entry_sort_by_name(e, n, newest, along), 0);
        for (size_t i = 0; i < n; i++)
            CHECK_EQ_INT(along[i], e[i].size); /* moved together */
        for (size_t i = 1; i < n; i++) {
            int c = strcmp(e[i - 1].name, e[i].name);
            CHECK(c <= 0);
            if (c == 0 && e[i - 1].epoch != e[i].epoch)
                CHECK(newest ? e[i - 1].epoch > e[i].epoch : e[i - 1].epoch < e[i].epoch);
        }
        for (size_t i = 0; i < n; i++)
            entry_clear(&e[i]);
    }
    /* Stable among equals (same name, same epoch): the order they came. */
    for (size_t i = 0; i < 4; i++) {
        ef_init(&e[i], i % 2 ? "z" : "y", KIND_FILE);
        e[i].size = i;
    }
    CHECK_EQ_INT(entry_sort_by_name(e, 4, 1, NULL), 0);
    CHECK(e[0].size == 0 && e[1].size == 2 && e[2].size == 1 && e[3].size == 3);
    for (size_t i = 0; i < 4; i++)
        entry_clear(&e[i]);
}

/* Every strict prefix of an encoding is refused: cut anywhere (the length
 * prefix then claims more than there is), and, with the length prefix
 * rewritten to match, a body missing its last bytes (no field is optional
 * beyond what the flags and counts announce). */
static void
test_truncated_every_byte(void)
{
    struct seg_tables t;
    struct buf b = { NULL, 0, 0, 0 }, re = { NULL, 0, 0, 0 };

    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    for (size_t s = 0; s < NSAMPLES; s++) {
        struct entry e, out;
        struct cursor c;
        size_t hdr;
        uint64_t bodylen;
        samples[s](&e);
        CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
        for (size_t cut = 0; cut < b.len; cut++)
            if (decode_bytes(b.p, cut, &t, &out, NULL) != PQV_E_INTEGRITY) {
                CHECK(!"a cut encoding decoded");
                fprintf(stderr, "  sample %zu cut at %zu of %zu\n", s, cut, b.len);
                entry_clear(&out);
            }
        cursor_init(&c, b.p, b.len);
        bodylen = cursor_varint(&c);
        hdr = b.len - cursor_left(&c);
        REQUIRE(hdr + bodylen == b.len);
        for (size_t keep = 0; keep < bodylen; keep++) {
            re.len = 0;
            buf_varint(&re, keep);
            buf_bytes(&re, b.p + hdr, keep);
            if (decode_bytes(re.p, re.len, &t, &out, NULL) != PQV_E_INTEGRITY) {
                CHECK(!"a shortened body decoded");
                fprintf(stderr, "  sample %zu body kept %zu of %llu\n", s, keep,
                    (unsigned long long)bodylen);
                entry_clear(&out);
            }
        }
        entry_clear(&e);
    }
    entry_tables_free(&t);
    buf_wipe_free(&b);
    buf_wipe_free(&re);
}

/* One byte more inside the entry's length is refused; a byte after the
 * entry is left to the caller (the decoder reads no further than its
 * length). */
static void
test_extra_byte(void)
{
    struct seg_tables t;
    struct buf b = { NULL, 0, 0, 0 }, re = { NULL, 0, 0, 0 };

    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    for (size_t s = 0; s < NSAMPLES; s++) {
        struct entry e, out;
        struct cursor c;
        size_t hdr, left;
        uint64_t bodylen;
        samples[s](&e);
        CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
        cursor_init(&c, b.p, b.len);
        bodylen = cursor_varint(&c);
        hdr = b.len - cursor_left(&c);
        for (unsigned v = 0; v < 256; v += 85) {
            re.len = 0;
            buf_varint(&re, bodylen + 1);
            buf_bytes(&re, b.p + hdr, bodylen);
            buf_u8(&re, (uint8_t)v);
            CHECK_EQ_INT(decode_bytes(re.p, re.len, &t, &out, NULL), PQV_E_INTEGRITY);
        }
        buf_u8(&b, 0x42);
        CHECK_EQ_INT(decode_bytes(b.p, b.len, &t, &out, &left), 0);
        CHECK_EQ_INT(left, 1);
        entry_clear(&out);
        entry_clear(&e);
    }
    entry_tables_free(&t);
    buf_wipe_free(&b);
    buf_wipe_free(&re);
}

/* ---- malformed entries, one field away from a valid one ---- */

/* The test's own encoder of an entry (docs/FORMAT.md section 13), every
 * field given as the raw number written, so that any value can be put. */
struct raw_extent {
    uint64_t off, plain, pack, pack_off, stored, flags;
};

struct raw {
    const char *name;
    size_t namelen;              /* 0: strlen(name) */
    uint64_t kind;
    uint64_t perm, uid, gid, user, group;
    uint64_t mtime_zz, mtime_nsec, ctime_zz, ctime_nsec, dev, ino, flags;
    const char *origin;
    size_t originlen;            /* 0: strlen(origin) */
    uint64_t hlgroup;
    uint64_t nxattrs, xname, xlen;   /* each attribute: name index, xlen bytes */
    uint64_t suite, size, nextents;
    struct raw_extent x[2];
    size_t nx;                   /* extents written (may differ from nextents) */
    const char *target;
    size_t targetlen;            /* 0: strlen(target) */
    int nonminimal_perm;         /* write perm as a two-byte varint */
    int extra;                   /* bytes of garbage after the fields */
    uint64_t major, minor;       /* a device's number ... */
    int ndev;                    /* ... of which these many varints are written */
};

static void
raw_varint(struct buf *b, uint64_t v)
{
    while (v >= 0x80) {
        buf_u8(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    buf_u8(b, (uint8_t)v);
}

static void
raw_blob(struct buf *b, const char *s, size_t n)
{
    raw_varint(b, n);
    buf_bytes(b, s, n);
}

/* raw_encode(r, out): the entry ${r}, length-prefixed, into ${out} (reset). */
static void
raw_encode(const struct raw *r, struct buf *out)
{
    struct buf b = { NULL, 0, 0, 0 };

    raw_blob(&b, r->name, r->namelen ? r->namelen : strlen(r->name));
    buf_u8(&b, (uint8_t)r->kind);
    if (r->kind != KIND_REMOVED) {
        if (r->nonminimal_perm) {
            buf_u8(&b, (uint8_t)(r->perm | 0x80));
            buf_u8(&b, 0);
        } else {
            raw_varint(&b, r->perm);
        }
        raw_varint(&b, r->uid);
        raw_varint(&b, r->gid);
        raw_varint(&b, r->user);
        raw_varint(&b, r->group);
        raw_varint(&b, r->mtime_zz);
        raw_varint(&b, r->mtime_nsec);
        raw_varint(&b, r->ctime_zz);
        raw_varint(&b, r->ctime_nsec);
        raw_varint(&b, r->dev);
        raw_varint(&b, r->ino);
        raw_varint(&b, r->flags);
        if (r->flags & 1)
            raw_blob(&b, r->origin, r->originlen ? r->originlen : strlen(r->origin));
        if (r->flags & 2)
            raw_varint(&b, r->hlgroup);
        if (r->flags & 4) {
            raw_varint(&b, r->nxattrs);
            for (uint64_t i = 0; i < r->nxattrs && i < 2; i++) {
                raw_varint(&b, r->xname);
                raw_varint(&b, r->xlen);
                for (uint64_t k = 0; k < r->xlen; k++)
                    buf_u8(&b, 'v');
            }
        }
        if (r->flags & 8)
            for (int i = 0; i < 32; i++)
                buf_u8(&b, (uint8_t)i);
        if (r->kind == KIND_FILE) {
            buf_u8(&b, (uint8_t)r->suite);
            raw_varint(&b, r->size);
            buf_bytes(&b, stored_key, sizeof(stored_key));
            raw_varint(&b, r->nextents);
            for (size_t i = 0; i < r->nx; i++) {
                raw_varint(&b, r->x[i].off);
                raw_varint(&b, r->x[i].plain);
                raw_varint(&b, r->x[i].pack);
                raw_varint(&b, r->x[i].pack_off);
                raw_varint(&b, r->x[i].stored);
                buf_u8(&b, (uint8_t)r->x[i].flags);
            }
        }
        if (r->kind == KIND_SYMLINK)
            raw_blob(&b, r->target, r->targetlen ? r->targetlen : strlen(r->target));
        if (r->kind == KIND_CHARDEV || r->kind == KIND_BLOCKDEV) {
            if (r->ndev >= 1)
                raw_varint(&b, r->major);
            if (r->ndev >= 2)
                raw_varint(&b, r->minor);
        }
    }
    for (int i = 0; i < r->extra; i++)
        buf_u8(&b, 0);
    out->len = 0;
    raw_varint(out, b.len);
    buf_bytes(out, b.p, b.len);
    buf_wipe_free(&b);
}

/* The tables the raw entries refer to: strings 1..3, packs 0 (a pack)
 * and 1 (a format-1 object). */
static char *fixed_strings[] = { "alice", "staff", "user.x" };
static struct seg_pack fixed_packs[2];

static void
fixed_tables(struct seg_tables *t)
{
    memset(t, 0, sizeof(*t));
    memset(fixed_packs, 0, sizeof(fixed_packs));
    memset(fixed_packs[0].id, 0xa1, PACK_ID_BYTES);
    memset(fixed_packs[1].id, 0xb2, PACK_ID_BYTES);
    fixed_packs[1].flags = PACK_V1_OBJECT;
    t->strings = fixed_strings;
    t->nstrings = 3;
    t->packs = fixed_packs;
    t->npacks = t->cappacks = 2;
    t->special = 1; /* format 3: FIFOs and devices too (not chunks) */
}

enum { B_FILE, B_DIR, B_LINK, B_REMOVED, B_FIFO, B_CHARDEV, B_BLOCKDEV };

/* base(kind, r): a valid entry of each kind, every optional field set: a
 * file of a zstd extent on pack 0, a hole, a format-1 object on pack 1,
 * and a hole to the end of its size. */
static void
base(int which, struct raw *r)
{
    memset(r, 0, sizeof(*r));
    r->name = "a/b";
    r->perm = 0644;
    r->uid = 1000;
    r->gid = 100;
    r->user = 1;
    r->group = 2;
    r->mtime_zz = 3;             /* -2 */
    r->mtime_nsec = 5;
    r->ctime_zz = 4;             /* 2 */
    r->ctime_nsec = 6;
    r->dev = 7;
    r->ino = 8;
    r->flags = 1 | 2 | 4;
    r->origin = "/src/a/b";
    r->hlgroup = 9;
    r->nxattrs = 1;
    r->xname = 3;
    r->xlen = 4;
    switch (which) {
    case B_FILE:
        r->kind = KIND_FILE;
        r->flags |= 8;
        r->suite = PQV_AEAD_CHACHA20POLY1305;
        r->size = 16384;
        r->nextents = r->nx = 2;
        r->x[0] = (struct raw_extent){ 0, 4096, 0, 10, 300, EXTENT_ZSTD };
        r->x[1] = (struct raw_extent){ 8192, 4096, 1, 0, object_sealed_size(4096), 0 };
        break;
    case B_DIR:
        r->kind = KIND_DIR;
        break;
    case B_LINK:
        r->kind = KIND_SYMLINK;
        r->target = "../c";
        break;
    case B_REMOVED:
        r->kind = KIND_REMOVED;
        break;
    case B_FIFO:
        r->kind = KIND_FIFO;
        break;
    case B_CHARDEV:
    case B_BLOCKDEV:
        r->kind = which == B_CHARDEV ? KIND_CHARDEV : KIND_BLOCKDEV;
        r->major = 259;
        r->minor = 65536;
        r->ndev = 2;
        break;
    }
}

/* The test's encoder agrees with entry_encode on the bases (so the
 * malformed cases below differ from valid encodings in one field only),
 * and each base decodes to what it says. */
static void
test_raw_encoder_agrees(void)
{
    struct seg_tables t, built;
    struct buf raw = { NULL, 0, 0, 0 }, enc = { NULL, 0, 0, 0 };

    fixed_tables(&t);
    for (int which = B_FILE; which <= B_BLOCKDEV; which++) {
        struct raw r;
        struct entry e;
        base(which, &r);
        raw_encode(&r, &raw);
        CHECK_EQ_INT(decode_bytes(raw.p, raw.len, &t, &e, NULL), 0);
        CHECK(e.name != NULL && strcmp(e.name, "a/b") == 0);
        CHECK_EQ_INT(e.kind, (int)r.kind);
        if (which != B_REMOVED) {
            CHECK(e.user != NULL && strcmp(e.user, "alice") == 0);
            CHECK(e.group != NULL && strcmp(e.group, "staff") == 0);
            CHECK_EQ_INT(e.mtime_sec, -2);
            CHECK_EQ_INT(e.ctime_sec, 2);
            CHECK(e.origin != NULL && strcmp(e.origin, "/src/a/b") == 0);
            CHECK_EQ_INT(e.hlgroup, 9);
            CHECK(e.nxattrs == 1 && strcmp(e.xattrs[0].name, "user.x") == 0 &&
                e.xattrs[0].len == 4 && memcmp(e.xattrs[0].value, "vvvv", 4) == 0);
        }
        if (which == B_CHARDEV || which == B_BLOCKDEV)
            CHECK(e.rdev_major == 259 && e.rdev_minor == 65536);
        if (which == B_FILE) {
            CHECK_EQ_INT(e.has_content, 1);
            CHECK_EQ_INT(e.nextents, 2);
            CHECK_EQ_INT(e.extents[1].pack_flags, PACK_V1_OBJECT);
        }
        /* entry_encode of the decoded entry: the same bytes (the tables
         * it builds list the same strings and packs, in the same order). */
        memset(&built, 0, sizeof(built));
        built.special = 1;
        CHECK_EQ_INT(encode_one(&e, &built, &enc), 0);
        CHECK(enc.len == raw.len && memcmp(enc.p, raw.p, raw.len) == 0);
        entry_tables_free(&built);
        entry_clear(&e);
    }
    buf_wipe_free(&raw);
    buf_wipe_free(&enc);
}

/* Which field a malformed case changes. */
enum field {
    F_NAME, F_KIND, F_PERM, F_PERM_NONMINIMAL, F_UID, F_GID, F_USER, F_GROUP, F_MTIME_NSEC,
    F_CTIME_NSEC, F_FLAGS, F_ORIGIN, F_HLGROUP, F_NXATTRS, F_XNAME, F_XLEN, F_SUITE, F_SIZE,
    F_NEXTENTS, F_X0_OFF, F_X0_PLAIN, F_X0_PACK, F_X0_PACK_OFF, F_X0_STORED, F_X0_FLAGS,
    F_X1_OFF, F_X1_PLAIN, F_X1_PACK, F_X1_STORED, F_X1_FLAGS, F_TARGET, F_EXTRA, F_MAJOR,
    F_MINOR, F_NDEV
};

struct bad_case {
    const char *what;
    int base;
    enum field f;
    uint64_t v;                  /* the number written */
    const char *s;               /* or the string */
    size_t slen;                 /* its length, if it holds a NUL */
};

static void
apply(struct raw *r, const struct bad_case *c)
{
    switch (c->f) {
    case F_NAME: r->name = c->s; r->namelen = c->slen; break;
    case F_KIND: r->kind = c->v; break;
    case F_PERM: r->perm = c->v; break;
    case F_PERM_NONMINIMAL: r->nonminimal_perm = 1; break;
    case F_UID: r->uid = c->v; break;
    case F_GID: r->gid = c->v; break;
    case F_USER: r->user = c->v; break;
    case F_GROUP: r->group = c->v; break;
    case F_MTIME_NSEC: r->mtime_nsec = c->v; break;
    case F_CTIME_NSEC: r->ctime_nsec = c->v; break;
    case F_FLAGS: r->flags = c->v; break;
    case F_ORIGIN: r->origin = c->s; r->originlen = c->slen; break;
    case F_HLGROUP: r->hlgroup = c->v; break;
    case F_NXATTRS: r->nxattrs = c->v; break;
    case F_XNAME: r->xname = c->v; break;
    case F_XLEN: r->xlen = c->v; break;
    case F_SUITE: r->suite = c->v; break;
    case F_SIZE: r->size = c->v; break;
    case F_NEXTENTS: r->nextents = c->v; break;
    case F_X0_OFF: r->x[0].off = c->v; break;
    case F_X0_PLAIN: r->x[0].plain = c->v; break;
    case F_X0_PACK: r->x[0].pack = c->v; break;
    case F_X0_PACK_OFF: r->x[0].pack_off = c->v; break;
    case F_X0_STORED: r->x[0].stored = c->v; break;
    case F_X0_FLAGS: r->x[0].flags = c->v; break;
    case F_X1_OFF: r->x[1].off = c->v; break;
    case F_X1_PLAIN: r->x[1].plain = c->v; break;
    case F_X1_PACK: r->x[1].pack = c->v; break;
    case F_X1_STORED: r->x[1].stored = c->v; break;
    case F_X1_FLAGS: r->x[1].flags = c->v; break;
    case F_TARGET: r->target = c->s; r->targetlen = c->slen; break;
    case F_EXTRA: r->extra = (int)c->v; break;
    case F_MAJOR: r->major = c->v; break;
    case F_MINOR: r->minor = c->v; break;
    case F_NDEV: r->ndev = (int)c->v; break;
    }
}

/* Each case is refused with PQV_E_INTEGRITY (and nothing is left
 * allocated: ASan's leak check). */
static void
test_malformed_refused(void)
{
    static char long_name[PQV_NAME_MAX + 2], long_target[4098], long_origin[4098];
    const uint64_t v1_stored = object_sealed_size(4096);
    const struct bad_case cases[] = {
        { "kind 0", B_FILE, F_KIND, 0, NULL, 0 },
        { "kind 8", B_DIR, F_KIND, 8, NULL, 0 },
        { "kind 255", B_DIR, F_KIND, 255, NULL, 0 },
        { "empty name", B_DIR, F_NAME, 0, "", 0 },
        { "name a//b", B_FILE, F_NAME, 0, "a//b", 0 },
        { "name ./a", B_FILE, F_NAME, 0, "./a", 0 },
        { "name a/./b", B_FILE, F_NAME, 0, "a/./b", 0 },
        { "name a/", B_DIR, F_NAME, 0, "a/", 0 },
        { "name /a", B_DIR, F_NAME, 0, "/a", 0 },
        { "name ..", B_DIR, F_NAME, 0, "..", 0 },
        { "name a/..", B_LINK, F_NAME, 0, "a/..", 0 },
        { "name a/../b", B_LINK, F_NAME, 0, "a/../b", 0 },
        { "name .", B_REMOVED, F_NAME, 0, ".", 0 },
        { "name /", B_REMOVED, F_NAME, 0, "/", 0 },
        { "name a//b (removed)", B_REMOVED, F_NAME, 0, "a//b", 0 },
        { "name with a NUL byte", B_FILE, F_NAME, 0, "a\0b", 3 },
        { "name longer than PQV_NAME_MAX", B_DIR, F_NAME, 0, long_name, 0 },
        { "permission bits 010000", B_FILE, F_PERM, 010000, NULL, 0 },
        { "permission bits 0100644", B_DIR, F_PERM, 0100644, NULL, 0 },
        { "non-minimal varint", B_FILE, F_PERM_NONMINIMAL, 0, NULL, 0 },
        { "uid 2^32", B_FILE, F_UID, 1ull << 32, NULL, 0 },
        { "gid 2^32", B_LINK, F_GID, 1ull << 32, NULL, 0 },
        { "user index past the table", B_FILE, F_USER, 4, NULL, 0 },
        { "user index 2^64 - 1", B_DIR, F_USER, UINT64_MAX, NULL, 0 },
        { "group index past the table", B_LINK, F_GROUP, 4, NULL, 0 },
        { "mtime nanoseconds 10^9", B_FILE, F_MTIME_NSEC, 1000000000, NULL, 0 },
        { "ctime nanoseconds 10^9", B_DIR, F_CTIME_NSEC, 1000000000, NULL, 0 },
        { "ctime nanoseconds 2^32", B_LINK, F_CTIME_NSEC, 1ull << 32, NULL, 0 },
        { "flag bit 4", B_FILE, F_FLAGS, 1 | 2 | 4 | 8 | 16, NULL, 0 },
        { "flag bit 5 alone", B_DIR, F_FLAGS, 32, NULL, 0 },
        { "flag bit 40", B_LINK, F_FLAGS, 1ull << 40, NULL, 0 },
        { "content hash on a directory", B_DIR, F_FLAGS, 8, NULL, 0 },
        { "content hash on a link", B_LINK, F_FLAGS, 8, NULL, 0 },
        { "origin with a NUL byte", B_FILE, F_ORIGIN, 0, "/a\0b", 4 },
        { "origin longer than 4096", B_DIR, F_ORIGIN, 0, long_origin, 0 },
        { "hard-link group 0", B_FILE, F_HLGROUP, 0, NULL, 0 },
        { "no extended attribute", B_DIR, F_NXATTRS, 0, NULL, 0 },
        { "more extended attributes than bytes", B_FILE, F_NXATTRS, 3, NULL, 0 },
        { "extended attribute count 4097", B_DIR, F_NXATTRS, 4097, NULL, 0 },
        { "attribute name index 0", B_FILE, F_XNAME, 0, NULL, 0 },
        { "attribute name index past the table", B_DIR, F_XNAME, 4, NULL, 0 },
        { "attribute value over 64 KiB", B_LINK, F_XLEN, MAX_XATTR_VALUE + 1, NULL, 0 },
        { "suite 0", B_FILE, F_SUITE, 0, NULL, 0 },
        { "suite 3", B_FILE, F_SUITE, 3, NULL, 0 },
        { "more extents than written", B_FILE, F_NEXTENTS, 3, NULL, 0 },
        { "fewer extents than written", B_FILE, F_NEXTENTS, 1, NULL, 0 },
        { "extents overlapping", B_FILE, F_X1_OFF, 4095, NULL, 0 },
        { "extents out of order", B_FILE, F_X0_OFF, 12288, NULL, 0 },
        { "extent ending past the size", B_FILE, F_X1_OFF, 16384 - 4095, NULL, 0 },
        { "extent starting past the size", B_FILE, F_X1_OFF, 16385, NULL, 0 },
        { "size smaller than the extents", B_FILE, F_SIZE, 12287, NULL, 0 },
        { "extent of plaintext length 0", B_FILE, F_X0_PLAIN, 0, NULL, 0 },
        { "extent over 4 MiB", B_FILE, F_X0_PLAIN, PQV_OBJECT_MAX_PLAIN + 1, NULL, 0 },
        { "extent offset near 2^64", B_FILE, F_X1_OFF, UINT64_MAX - 100, NULL, 0 },
        { "pack index past the table", B_FILE, F_X0_PACK, 2, NULL, 0 },
        { "pack index 2^64 - 1", B_FILE, F_X1_PACK, UINT64_MAX, NULL, 0 },
        { "offset in the pack over 2^32", B_FILE, F_X0_PACK_OFF, 1ull << 32, NULL, 0 },
        { "stored length over 2^32", B_FILE, F_X0_STORED, 1ull << 32, NULL, 0 },
        { "extent flag bit 1", B_FILE, F_X0_FLAGS, 2, NULL, 0 },
        { "extent flag bit 7", B_FILE, F_X0_FLAGS, 0x81, NULL, 0 },
        { "format-1 object compressed", B_FILE, F_X1_FLAGS, EXTENT_ZSTD, NULL, 0 },
        { "format-1 object one byte short", B_FILE, F_X1_STORED, v1_stored - 1, NULL, 0 },
        { "format-1 object one byte long", B_FILE, F_X1_STORED, v1_stored + 1, NULL, 0 },
        { "format-1 object of another length", B_FILE, F_X1_PLAIN, 4095, NULL, 0 },
        { "link with an empty target", B_LINK, F_TARGET, 0, "", 0 },
        { "link target with a NUL byte", B_LINK, F_TARGET, 0, "a\0b", 3 },
        { "link target over 4096 bytes", B_LINK, F_TARGET, 0, long_target, 0 },
        { "one byte after a file", B_FILE, F_EXTRA, 1, NULL, 0 },
        { "one byte after a directory", B_DIR, F_EXTRA, 1, NULL, 0 },
        { "one byte after a link", B_LINK, F_EXTRA, 1, NULL, 0 },
        { "one byte after a removed entry", B_REMOVED, F_EXTRA, 1, NULL, 0 },
        { "one byte after a FIFO", B_FIFO, F_EXTRA, 1, NULL, 0 },
        { "one byte after a device", B_CHARDEV, F_EXTRA, 1, NULL, 0 },
        { "device major 2^32", B_CHARDEV, F_MAJOR, 1ull << 32, NULL, 0 },
        { "device minor 2^32", B_BLOCKDEV, F_MINOR, 1ull << 32, NULL, 0 },
        { "device minor 2^64 - 1", B_CHARDEV, F_MINOR, UINT64_MAX, NULL, 0 },
        { "device without its minor", B_CHARDEV, F_NDEV, 1, NULL, 0 },
        { "device without its number", B_BLOCKDEV, F_NDEV, 0, NULL, 0 },
        { "content hash on a FIFO", B_FIFO, F_FLAGS, 8, NULL, 0 },
        { "content hash on a device", B_CHARDEV, F_FLAGS, 8, NULL, 0 },
        { "chunked FIFO", B_FIFO, F_FLAGS, 16, NULL, 0 },
        { "chunked device", B_BLOCKDEV, F_FLAGS, 16, NULL, 0 },
    };
    struct seg_tables t;
    struct buf b = { NULL, 0, 0, 0 };

    memset(long_name, 'n', sizeof(long_name) - 1);
    memset(long_target, 't', sizeof(long_target) - 1);
    long_origin[0] = '/';
    memset(long_origin + 1, 'o', sizeof(long_origin) - 2);
    fixed_tables(&t);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct raw r;
        struct entry e;
        size_t left;
        int rc;
        base(cases[i].base, &r);
        apply(&r, &cases[i]);
        raw_encode(&r, &b);
        rc = decode_bytes(b.p, b.len, &t, &e, &left);
        if (rc != PQV_E_INTEGRITY) {
            CHECK(!"malformed entry not refused");
            fprintf(stderr, "  case \"%s\": %d\n", cases[i].what, rc);
            if (rc == 0)
                entry_clear(&e);
        } else {
            /* Refused whole: nothing of it kept. */
            CHECK(e.name == NULL && e.extents == NULL && e.xattrs == NULL && e.target == NULL);
        }
    }
    buf_wipe_free(&b);
}

/* An entry length beyond the decoder's bound, or an overlong varint, is
 * refused before anything is read. */
static void
test_bad_length_prefix(void)
{
    static const uint8_t huge[] = { 0x80, 0x80, 0x80, 0x20 + 1, 'x' };           /* 65 MiB */
    static const uint8_t eleven[] = { 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
        0x00 };
    static const uint8_t tenth_too_big[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
        0x02 };
    struct seg_tables t;
    struct entry e;

    fixed_tables(&t);
    CHECK_EQ_INT(decode_bytes(huge, sizeof(huge), &t, &e, NULL), PQV_E_INTEGRITY);
    CHECK_EQ_INT(decode_bytes(eleven, sizeof(eleven), &t, &e, NULL), PQV_E_INTEGRITY);
    CHECK_EQ_INT(decode_bytes(tenth_too_big, sizeof(tenth_too_big), &t, &e, NULL),
        PQV_E_INTEGRITY);
    CHECK_EQ_INT(decode_bytes(huge, 0, &t, &e, NULL), PQV_E_INTEGRITY);
}

/* Every bit of every sample flipped in turn: each decodes or is refused
 * with PQV_E_INTEGRITY, never anything else (nor a crash, nor a leak). */
static void
test_every_bit_flipped(void)
{
    struct seg_tables t;
    struct buf b = { NULL, 0, 0, 0 };
    size_t decoded = 0, refused = 0;

    memset(&t, 0, sizeof(t));
    t.special = 1; /* format 3: FIFOs and devices too */
    for (size_t s = 0; s < NSAMPLES; s++) {
        struct entry e;
        samples[s](&e);
        /* sample_file's 4 MiB extents make no large encoding. */
        CHECK_EQ_INT(encode_one(&e, &t, &b), 0);
        entry_clear(&e);
        for (size_t i = 0; i < b.len; i++)
            for (int bit = 0; bit < 8; bit++) {
                struct entry out;
                int rc;
                b.p[i] ^= (uint8_t)(1u << bit);
                rc = decode_bytes(b.p, b.len, &t, &out, NULL);
                b.p[i] ^= (uint8_t)(1u << bit);
                if (rc == 0) {
                    decoded++;
                    entry_clear(&out);
                } else if (rc == PQV_E_INTEGRITY) {
                    refused++;
                } else {
                    CHECK(!"a flipped bit gave another error");
                    fprintf(stderr, "  sample %zu byte %zu bit %d: %d\n", s, i, bit, rc);
                }
            }
    }
    CHECK(refused > 0);
    CHECK(decoded > 0); /* e.g. a bit of a time: still a valid entry */
    entry_tables_free(&t);
    buf_wipe_free(&b);
}

/* FIFOs and device nodes belong to format 3: a table of format 2 (a
 * segment of version 1 or 2) refuses to encode them (PQV_E_UNSUPPORTED:
 * what a reader refuses is never written) and to decode them
 * (PQV_E_INTEGRITY: damage). */
static void
test_format2_refuses_special(void)
{
    static const sample_fn special[] = { sample_fifo, sample_chardev, sample_blockdev };
    struct seg_tables t;
    struct buf b = { NULL, 0, 0, 0 };

    for (size_t i = 0; i < 3; i++) {
        struct entry e;
        special[i](&e);
        memset(&t, 0, sizeof(t));
        CHECK_EQ_INT(encode_one(&e, &t, &b), PQV_E_UNSUPPORTED);
        entry_tables_free(&t);
        entry_clear(&e);
    }
    for (int which = B_FIFO; which <= B_BLOCKDEV; which++) {
        struct raw r;
        struct entry e;
        fixed_tables(&t);
        base(which, &r);
        raw_encode(&r, &b);
        CHECK_EQ_INT(decode_bytes(b.p, b.len, &t, &e, NULL), 0);
        entry_clear(&e);
        t.special = 0;
        CHECK_EQ_INT(decode_bytes(b.p, b.len, &t, &e, NULL), PQV_E_INTEGRITY);
        CHECK(e.name == NULL);
    }
    buf_wipe_free(&b);
}

/* The kinds table: the seven kinds of the format, with their codecs and
 * words; the socket, which add does not store, has a row but no code. */
static void
test_kinds_table(void)
{
    const struct entry_kind *k;

    REQUIRE((k = kinds_find(KIND_FILE)) != NULL);
    CHECK(k->encode == entry_file_encode && k->decode == entry_file_decode);
    CHECK(k->stored && k->in_format2 && k->type == S_IFREG && k->letter == '-');
    REQUIRE((k = kinds_find(KIND_DIR)) != NULL);
    CHECK(k->encode == NULL && k->decode == NULL && k->type == S_IFDIR && k->letter == 'd');
    REQUIRE((k = kinds_find(KIND_SYMLINK)) != NULL);
    CHECK(k->encode == entry_symlink_encode && k->decode == entry_symlink_decode);
    CHECK(k->type == S_IFLNK && strcmp(k->json, "symlink") == 0);
    REQUIRE((k = kinds_find(KIND_REMOVED)) != NULL);
    CHECK(!k->stored && k->in_format2 && k->type == 0 && k->restore == NULL);
    REQUIRE((k = kinds_find(KIND_FIFO)) != NULL);
    CHECK(k->stored && !k->in_format2 && k->type == S_IFIFO && k->letter == 'p');
    CHECK(k->encode == NULL && k->decode == NULL && k->restore != NULL);
    CHECK(strcmp(k->json, "fifo") == 0);
    REQUIRE((k = kinds_find(KIND_CHARDEV)) != NULL);
    CHECK(k->stored && !k->in_format2 && k->type == S_IFCHR && k->letter == 'c');
    CHECK(k->encode == entry_device_encode && k->decode == entry_device_decode);
    CHECK(strcmp(k->json, "chardev") == 0);
    REQUIRE((k = kinds_find(KIND_BLOCKDEV)) != NULL);
    CHECK(k->stored && !k->in_format2 && k->type == S_IFBLK && k->letter == 'b');
    CHECK(strcmp(k->json, "blockdev") == 0);
    CHECK(KIND_FIFO == 5 && KIND_CHARDEV == 6 && KIND_BLOCKDEV == 7);
    CHECK(kinds_find(0) == NULL);
    CHECK(kinds_find(8) == NULL);
    CHECK(kinds_find(-1) == NULL);
    CHECK(kinds_of_mode(S_IFREG | 0644) == kinds_find(KIND_FILE));
    CHECK(kinds_of_mode(S_IFDIR | 0755) == kinds_find(KIND_DIR));
    CHECK(kinds_of_mode(S_IFLNK | 0777) == kinds_find(KIND_SYMLINK));
    CHECK(kinds_of_mode(S_IFIFO | 0600) == kinds_find(KIND_FIFO));
    CHECK(kinds_of_mode(S_IFCHR) == kinds_find(KIND_CHARDEV));
    CHECK(kinds_of_mode(S_IFBLK) == kinds_find(KIND_BLOCKDEV));
    REQUIRE((k = kinds_of_mode(S_IFSOCK)) != NULL);
    CHECK(k->kind == 0 && !k->stored && k->letter == 's');
    CHECK(kinds_of_mode(0) == NULL);
}

TEST_MAIN(test_roundtrip_every_kind, test_string_table_dedup, test_pack_table,
    test_removed_is_name_and_kind, test_encode_normalises_and_refuses, test_bounds_accepted,
    test_entry_copy, test_sort_by_name, test_truncated_every_byte, test_extra_byte, test_raw_encoder_agrees,
    test_malformed_refused, test_bad_length_prefix, test_every_bit_flipped,
    test_format2_refuses_special, test_kinds_table)
