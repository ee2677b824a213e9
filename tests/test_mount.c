/*
 * test_mount.c: the mounted view at the library level (pqvault/mount.h),
 * without FUSE: random reads that open only the 64 KiB STREAM segments
 * they touch, byte-exact against the source, damage that stays within
 * one segment for them and fails the whole chunk for a sequential reader,
 * and lookups of hostile names (random bytes, "..", ".", slashes, names
 * too long, names below files and links) that answer as a file system
 * does and never crash.  tests/cli/mount.sh tests the FUSE glue.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "harness.h"
#include "pqvault/aead.h"
#include "pqvault/mount.h"
#include "pqvault/recovery.h"
#include "pqvault/vault.h"
#include "util/util.h"
#include "vault/chunk.h"
#include "vault/entry.h"
#include "vault/mount_internal.h"
#include "vault/pack.h"
#include "vault_fixture.h"

static const struct pqv_kdf_params cheap = { 1, 256, 1 };
static const char pass[] = "correct horse";

#define BIG_BYTES (20u << 20)
#define MANY (MOUNT_FILES_KEPT + 6)

static char dir[64], src[96], vdir[96];
static uint8_t *big;

/* A deterministic generator (xorshift64*), so a failure replays. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t
next_random(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static void
write_src(const char *name, const uint8_t *data, size_t len)
{
    char path[160];

    snprintf(path, sizeof(path), "%s/%s", src, name);
    vf_write_path(path, data, len);
}

/* The vault: src/big (20 MiB random, chunks of 64 KiB segments stored
 * uncompressed), a small tree, a link, a file named with odd bytes. */
static void
make_vault(void)
{
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", PQV_AEAD_AES256GCM, &cheap,
        0, NULL, NULL, NULL, 0 };
    char recovery[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS], path[160];
    pqv_vault *v;

    snprintf(dir, sizeof(dir), "/tmp/pqvmount.XXXXXX");
    SETUP(mkdtemp(dir) != NULL);
    snprintf(src, sizeof(src), "%s/src", dir);
    snprintf(vdir, sizeof(vdir), "%s/v", dir);
    SETUP(mkdir(src, 0700) == 0);
    SETUP((big = malloc(BIG_BYTES)) != NULL);
    SETUP(util_random(big, BIG_BYTES) == 0);
    write_src("big", big, BIG_BYTES);
    snprintf(path, sizeof(path), "%s/sub", src);
    SETUP(mkdir(path, 0755) == 0);
    snprintf(path, sizeof(path), "%s/sub/deeper", src);
    SETUP(mkdir(path, 0755) == 0);
    write_src("sub/a", (const uint8_t *)"alpha\n", 6);
    write_src("sub/deeper/b", (const uint8_t *)"beta\n", 5);
    write_src("sp ace\tand\x01odd", (const uint8_t *)"odd\n", 4);
    snprintf(path, sizeof(path), "%s/link", src);
    SETUP(symlink("sub/a", path) == 0);
    /* More small files than the view keeps open (MOUNT_FILES_KEPT). */
    snprintf(path, sizeof(path), "%s/many", src);
    SETUP(mkdir(path, 0755) == 0);
    for (int i = 0; i < MANY; i++) {
        char name[32], body[32];
        snprintf(name, sizeof(name), "many/f%03d", i);
        snprintf(body, sizeof(body), "file %d\n", i);
        write_src(name, (const uint8_t *)body, strlen(body));
    }
    SETUP(pqv_vault_create(vdir, NULL, (const uint8_t *)pass, strlen(pass), &opt, recovery,
        fp) == 0);
    SETUP(vf_open_vault(NULL, vdir, pass, &v, 1) == 0);
    SETUP(pqv_vault_add_path(v, src, "t", NULL) == 0);
    pqv_vault_close(v);
}

static void remove_vault(void);

/* make_vault once, removed at exit. */
static void
ensure_vault(void)
{
    if (big != NULL)
        return;
    make_vault();
    atexit(remove_vault);
}

static void
remove_vault(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "  could not remove %s\n", dir);
    free(big);
}

static pqv_vault *vault;

static pqv_mount *
open_view_cache(size_t cache_bytes)
{
    struct pqv_mount_options opt = { 0 };
    pqv_mount *m = NULL;

    opt.cache_bytes = cache_bytes;
    ensure_vault();
    SETUP(vf_open_vault(NULL, vdir, pass, &vault, 0) == 0);
    SETUP(pqv_mount_open(vault, &opt, &m) == 0);
    return m;
}

static pqv_mount *
open_view(void)
{
    return open_view_cache(0);
}

static void
close_view(pqv_mount *m)
{
    pqv_mount_close(m);
    pqv_vault_close(vault);
    vault = NULL;
}

static uint64_t
lookup_path(pqv_mount *m, const char *path)
{
    char comp[256];
    struct pqv_mount_attr a;
    uint64_t ino = PQV_MOUNT_ROOT;

    while (*path != 0) {
        size_t n = strcspn(path, "/");
        SETUP(n < sizeof(comp));
        memcpy(comp, path, n);
        comp[n] = 0;
        if (pqv_mount_lookup(m, ino, comp, &a) != 0)
            return 0;
        ino = a.ino;
        path += n + (path[n] == '/');
    }
    return ino;
}

/* 1,000 reads of 4 KiB (and some of up to 300 KiB, across chunk and
 * segment boundaries) at random offsets, each far from the one before (in
 * the other part of the file): byte-exact, and what they decrypt is the
 * segments they touch, no more (whole chunks would be about 1 MiB a read);
 * nothing prefetched.  Then the whole file in order, byte-exact. */
static void
test_random_reads(void)
{
    pqv_mount *m = open_view_cache(PQV_MOUNT_CACHE_MIN);
    pqv_mount_file *f = NULL;
    struct pqv_mount_stats st;
    uint64_t ino = lookup_path(m, "t/big"), touched = 0;
    uint8_t *buf = malloc(1 << 20);
    size_t got;
    int bad = 0;

    REQUIRE(ino != 0 && buf != NULL);
    REQUIRE(pqv_mount_file_open(m, ino, &f) == 0);
    for (int i = 0; i < 1000 && bad < 5; i++) {
        size_t len = i % 10 == 9 ? (size_t)(next_random() % (300u << 10)) + 1 : 4096;
        /* (7 MiB wide, 5 MiB apart: the two halves of the file.) */
        uint64_t off = 1 + next_random() % (7u << 20) + (i % 2 ? 12u << 20 : 0);
        int rc = pqv_mount_read(f, buf, len, off, &got);
        if (rc != 0 || got != len || memcmp(buf, big + off, len) != 0) {
            fprintf(stderr, "  read %zu at %llu: rc %d, got %zu\n", len,
                (unsigned long long)off, rc, got);
            bad++;
        }
        /* Segments touched (chunk boundaries can only add one each). */
        touched += (off + len - 1) / PQV_STREAM_SEGMENT_BYTES - off / PQV_STREAM_SEGMENT_BYTES + 2;
    }
    CHECK_EQ_INT(bad, 0);
    pqv_mount_stats(m, &st);
    CHECK(st.bytes_opened > 0 && st.bytes_opened <= touched * PQV_STREAM_SEGMENT_BYTES);
    CHECK(st.bytes_opened < 1000ull * (256u << 10));
    CHECK_EQ_INT(st.prefetched, 0);
    /* Reads at the very end, past it, and one of the whole file in order. */
    CHECK(pqv_mount_read(f, buf, 4096, BIG_BYTES - 100, &got) == 0 && got == 100 &&
        memcmp(buf, big + BIG_BYTES - 100, 100) == 0);
    CHECK(pqv_mount_read(f, buf, 4096, BIG_BYTES, &got) == 0 && got == 0);
    pqv_mount_file_close(f);
    REQUIRE(pqv_mount_file_open(m, ino, &f) == 0);
    for (uint64_t off = 0; off < BIG_BYTES && bad < 5; off += 1 << 20) {
        if (pqv_mount_read(f, buf, 1 << 20, off, &got) != 0 || got != 1 << 20 ||
            memcmp(buf, big + off, 1 << 20) != 0)
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    pqv_mount_file_close(f);
    free(buf);
    close_view(m);
}

/* A byte flipped in segment 1 of a chunk beyond the first 8 MiB: random
 * reads of its segments 0 and 2 still read (each authenticates alone),
 * of segment 1 give EIO (again, not cached as good), and a sequential
 * reader gets EIO at that chunk and never its plaintext. */
static void
test_damaged_segment(void)
{
    pqv_mount *m = open_view();
    pqv_mount_file *f = NULL;
    uint64_t ino = lookup_path(m, "t/big");
    const struct extent *x = NULL;
    char pname[STORAGE_NAME_MAX], path[300];
    uint8_t buf[4096], byte;
    size_t got;
    int fd;

    REQUIRE(ino != 0);
    REQUIRE(pqv_mount_file_open(m, ino, &f) == 0);
    for (uint32_t i = 0; i < f->e.nextents; i++) {
        const struct extent *c = &f->e.extents[i];
        if (c->file_off > (10u << 20) && c->plain_len > 3 * PQV_STREAM_SEGMENT_BYTES) {
            x = c;
            break;
        }
    }
    REQUIRE(x != NULL);
    CHECK(x->chunk && (x->flags & BLOB_ZSTD) == 0);
    pack_name(x->pack_id, pname);
    snprintf(path, sizeof(path), "%s/%s", vdir, pname);
    uint64_t at = PACK_HEADER_BYTES + x->pack_off + CHUNK_SALT_BYTES +
        PQV_STREAM_SEGMENT_SEALED + 1000;
    REQUIRE((fd = open(path, O_RDWR)) >= 0);
    REQUIRE(pread(fd, &byte, 1, (off_t)at) == 1);
    byte ^= 0x40;
    REQUIRE(pwrite(fd, &byte, 1, (off_t)at) == 1);
    close(fd);

    uint64_t c0 = x->file_off, seg = PQV_STREAM_SEGMENT_BYTES;
    /* (Each read after one far away, so that none is a sequential one.) */
#define FAR_READ(o, l) (pqv_mount_read(f, buf, sizeof(buf), 4096, &got) == 0 && \
        memcmp(buf, big + 4096, sizeof(buf)) == 0 ? pqv_mount_read(f, buf, (l), (o), &got) : -999)
    CHECK(FAR_READ(c0 + 100, sizeof(buf)) == 0 && got == sizeof(buf) &&
        memcmp(buf, big + c0 + 100, sizeof(buf)) == 0);
    CHECK_EQ_INT(FAR_READ(c0 + seg + 5000, sizeof(buf)), -EIO);
    CHECK(FAR_READ(c0 + 2 * seg + 7, sizeof(buf)) == 0 &&
        memcmp(buf, big + c0 + 2 * seg + 7, sizeof(buf)) == 0);
    CHECK_EQ_INT(FAR_READ(c0 + seg, sizeof(buf)), -EIO);
    /* A read spanning segments 0 and 1: EIO, nothing of it returned. */
    CHECK(FAR_READ(1, 1) == 0);
    memset(buf, 0, sizeof(buf));
    CHECK_EQ_INT(pqv_mount_read(f, buf, sizeof(buf), c0 + seg - 2048, &got), -EIO);
    CHECK(util_ct_is_zero(buf, sizeof(buf)));
#undef FAR_READ
    pqv_mount_file_close(f);

    /* In order from the start: every chunk before reads, this one fails. */
    REQUIRE(pqv_mount_file_open(m, ino, &f) == 0);
    {
        uint8_t *whole = malloc(1 << 20);
        uint64_t off = 0;
        int rc = 0;
        REQUIRE(whole != NULL);
        while (off < BIG_BYTES && (rc = pqv_mount_read(f, whole, 1 << 20, off, &got)) == 0) {
            CHECK(memcmp(whole, big + off, got) == 0);
            off += got;
        }
        CHECK_EQ_INT(rc, -EIO);
        CHECK(off <= c0 && off + (1 << 20) > c0);
        free(whole);
    }
    pqv_mount_file_close(f);
    close_view(m);
    /* Put the byte back for the tests after. */
    REQUIRE((fd = open(path, O_RDWR)) >= 0);
    REQUIRE(pread(fd, &byte, 1, (off_t)at) == 1);
    byte ^= 0x40;
    REQUIRE(pwrite(fd, &byte, 1, (off_t)at) == 1);
    close(fd);
}

/* Lookups answer 0 or a negative errno, never crash; a name found has
 * attributes; names that are not one component are never found. */
struct seen {
    uint64_t ino[64];
    unsigned n;
};

static int
note_entry(void *ctx, const char *name, const struct pqv_mount_attr *attr, uint64_t next)
{
    struct seen *s = ctx;

    (void)name;
    (void)next;
    if (s->n < 64 && (attr->mode & S_IFMT) == S_IFDIR)
        s->ino[s->n++] = attr->ino;
    return 0;
}

static void
test_lookup_hostile(void)
{
    static const char *fixed[] = { "", ".", "..", "/", "//", "t/", "t/big", "t/sub/a", "/t",
        "t\n", "T", "t\x01", "snapshots", "versions", "snapshots/..", "..\x2f..", "\xff\xfe",
        "big", "a", "sub" };
    pqv_mount *m = open_view();
    struct pqv_mount_attr a;
    struct seen dirs = { { PQV_MOUNT_ROOT }, 1 };
    char name[600];
    uint64_t file = lookup_path(m, "t/big"), link = lookup_path(m, "t/link");
    int rc, odd = 0;

    REQUIRE(file != 0 && link != 0);
    CHECK(lookup_path(m, "t/sp ace\tand\x01odd") != 0);
    CHECK(lookup_path(m, "t/sub/deeper/b") != 0);
    for (unsigned d = 0; d < dirs.n && d < 8; d++)
        CHECK(pqv_mount_readdir(m, dirs.ino[d], 0, note_entry, &dirs) == 0);
    CHECK(dirs.n >= 4);
    for (unsigned d = 0; d < dirs.n; d++)
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
            rc = pqv_mount_lookup(m, dirs.ino[d], fixed[i], &a);
            if (strchr(fixed[i], '/') != NULL || fixed[i][0] == 0)
                CHECK(rc == -ENOENT || rc == -EINVAL || rc == -ENAMETOOLONG);
            if (rc == 0)
                CHECK(pqv_mount_getattr(m, a.ino, &a) == 0);
            else if (rc != -ENOENT && rc != -EINVAL && rc != -ENAMETOOLONG)
                odd++;
        }
    /* Below a file and a link: ENOTDIR. */
    CHECK_EQ_INT(pqv_mount_lookup(m, file, "x", &a), -ENOTDIR);
    CHECK_EQ_INT(pqv_mount_lookup(m, link, "a", &a), -ENOTDIR);
    CHECK(pqv_mount_lookup(m, 0, "t", &a) < 0);
    CHECK(pqv_mount_lookup(m, UINT64_MAX, "t", &a) < 0);
    CHECK(pqv_mount_lookup(m, ((uint64_t)77 << 32) | 1, "t", &a) < 0);
    CHECK(pqv_mount_getattr(m, ((uint64_t)1 << 32) | 0xfffffff0u, &a) < 0);
    /* Random names: bytes 1-255, lengths 0-599, from random directories
     * (and numbers that are none). */
    for (int i = 0; i < 20000; i++) {
        size_t len = (size_t)(next_random() % (i % 50 == 0 ? 599 : 12));
        uint64_t parent = i % 97 == 0 ? next_random() : dirs.ino[next_random() % dirs.n];
        for (size_t k = 0; k < len; k++)
            name[k] = (char)(1 + next_random() % 255);
        name[len] = 0;
        rc = pqv_mount_lookup(m, parent, name, &a);
        if (rc == 0)
            CHECK(pqv_mount_getattr(m, a.ino, &a) == 0);
        else if (rc != -ENOENT && rc != -EINVAL && rc != -ENAMETOOLONG && rc != -ENOTDIR)
            odd++;
    }
    CHECK_EQ_INT(odd, 0);
    close_view(m);
}

/* The name of a version in versions/: STEM.SNAPSHOT.EXT, the extension as
 * os.path.splitext finds it (a leading dot starts none), at most 255
 * bytes, the stem cut at a character's start. */
static void
test_version_names(void)
{
    static const char *snap = "000123-2026-11-30T14:00:00Z";
    static const struct {
        const char *comp, *want;
    } v[] = {
        { "report.pdf", "report.000123-2026-11-30T14:00:00Z.pdf" },
        { "archive.tar.gz", "archive.tar.000123-2026-11-30T14:00:00Z.gz" },
        { "Makefile", "Makefile.000123-2026-11-30T14:00:00Z" },
        { ".bashrc", ".bashrc.000123-2026-11-30T14:00:00Z" },
        { "..x", "..x.000123-2026-11-30T14:00:00Z" },
        { ".config.old", ".config.000123-2026-11-30T14:00:00Z.old" },
        { "a.", "a..000123-2026-11-30T14:00:00Z" },
        { "x.0123456789012345678901234567890123", /* an extension of 34 bytes: none */
          "x.0123456789012345678901234567890123.000123-2026-11-30T14:00:00Z" },
    };
    char out[MOUNT_VERSION_NAME_MAX + 1], comp[256];
    size_t len;

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        mount_versions_name(v[i].comp, snap, out);
        CHECK_STR(out, v[i].want);
    }
    /* 250 bytes of two-byte characters and an extension: cut to 255. */
    for (len = 0; len < 246; len += 2) {
        comp[len] = (char)0xc3;
        comp[len + 1] = (char)0xa9;
    }
    memcpy(comp + len, ".txt", 5);
    mount_versions_name(comp, snap, out);
    len = strlen(out);
    CHECK(len <= 255 && len >= 253);
    CHECK(strcmp(out + len - 4, ".txt") == 0);
    CHECK(strncmp(out + len - 4 - 27, snap, 27) == 0);
    CHECK(out[len - 4 - 28] == '.');
    /* The stem ends on a whole character (an even count of bytes). */
    CHECK((len - 4 - 28) % 2 == 0);
}

static int
count_entry(void *ctx, const char *name, const struct pqv_mount_attr *attr, uint64_t next)
{
    (void)name;
    (void)attr;
    (void)next;
    (*(unsigned *)ctx)++;
    return 0;
}

/* wait_ahead(m): until the tree wanted ahead, if any, is loaded or given
 * up. */
static void
wait_ahead(pqv_mount *m)
{
    pthread_mutex_lock(&m->lock);
    while (m->ahead_want != 0 || m->ahead_busy)
        pthread_cond_wait(&m->cond, &m->lock);
    pthread_mutex_unlock(&m->lock);
}

static int
tree_status(pqv_mount *m, uint32_t id)
{
    int status;

    pthread_mutex_lock(&m->lock);
    status = m->trees[id].status;
    pthread_mutex_unlock(&m->lock);
    return status;
}

/* tree_used(m, id): whether tree ${id} was used since it loaded (read
 * under the lock: the thread loading ahead may be running). */
static int
tree_used(pqv_mount *m, uint32_t id)
{
    int used;

    pthread_mutex_lock(&m->lock);
    used = m->trees[id].used != 0;
    pthread_mutex_unlock(&m->lock);
    return used;
}

/* snap_path(m, k, rest, out): the path of ${rest} in kept snapshot k. */
static const char *
snap_path(pqv_mount *m, size_t k, const char *rest, char out[160])
{
    snprintf(out, 160, "%s/%s/%s", m->snap_dir, m->snap_names[k], rest);
    return out;
}

/* extent_cached(m, ino, x): whether chunk ${x} of file ${ino} is in the
 * cache whole (read, or queued or being read); chunk_cached: its first. */
static int
extent_cached(pqv_mount *m, uint64_t ino, uint32_t x)
{
    uint32_t tree, node;
    const struct entry *e;
    int found = 0;

    if (mount_decode(m, ino, &tree, &node) != 0)
        return -1;
    pthread_mutex_lock(&m->lock);
    e = mount_tree_entry(&m->trees[tree], node);
    if (e != NULL && x >= e->nextents)
        e = NULL;
    for (size_t b = 0; e != NULL && b < m->cache.nbuckets && !found; b++)
        for (struct mount_chunk *ce = m->cache.buckets[b]; ce != NULL && !found; ce = ce->hnext)
            found = ce->key[0] == 'C' &&
                memcmp(ce->key + 1, e->extents[x].chunk_id, CHUNK_ID_BYTES) == 0;
    pthread_mutex_unlock(&m->lock);
    return found;
}

static int
chunk_cached(pqv_mount *m, uint64_t ino)
{
    return extent_cached(m, ino, 0);
}

/* extent_at(m, ino, off): the index of the extent of file ${ino} holding
 * byte ${off}. */
static uint32_t
extent_at(pqv_mount *m, uint64_t ino, uint64_t off)
{
    uint32_t tree, node, i = 0;
    const struct entry *e;

    SETUP(mount_decode(m, ino, &tree, &node) == 0);
    pthread_mutex_lock(&m->lock);
    e = mount_tree_entry(&m->trees[tree], node);
    while (e != NULL && i < e->nextents && e->extents[i].file_off + e->extents[i].plain_len <= off)
        i++;
    pthread_mutex_unlock(&m->lock);
    return i;
}

/* kept_has(m, ino): whether the view keeps file ${ino} open. */
static int
kept_has(pqv_mount *m, uint64_t ino)
{
    int has = 0;

    pthread_mutex_lock(&m->lock);
    for (pqv_mount_file *f = m->kept_files; f != NULL && !has; f = f->knext)
        has = f->ino == ino;
    pthread_mutex_unlock(&m->lock);
    return has;
}

static unsigned
kept_count(pqv_mount *m)
{
    unsigned n;

    pthread_mutex_lock(&m->lock);
    n = m->nkept;
    pthread_mutex_unlock(&m->lock);
    return n;
}

/* read_many(m, i): many/f${i} through the file the view keeps open,
 * byte-exact; 1 if so. */
static int
read_many(pqv_mount *m, const uint64_t *inos, int i)
{
    char want[32], got_buf[64];
    pqv_mount_file *f = NULL;
    size_t got = 0;
    int ok;

    snprintf(want, sizeof(want), "file %d\n", i);
    if (pqv_mount_file_get(m, inos[i], &f) != 0)
        return 0;
    ok = pqv_mount_read_as(f, (uint64_t)i, (uint8_t *)got_buf, sizeof(got_buf), 0, &got) == 0 &&
        got == strlen(want) && memcmp(got_buf, want, got) == 0;
    pqv_mount_file_put(f);
    return ok;
}

struct kept_worker {
    pqv_mount *m;
    const uint64_t *inos;
    uint64_t seed;
    int bad;
};

static void *
kept_worker_main(void *arg)
{
    struct kept_worker *w = arg;

    for (int k = 0; k < 300; k++) {
        w->seed = w->seed * 6364136223846793005ull + 1442695040888963407ull;
        if (!read_many(w->m, w->inos, (int)((w->seed >> 33) % MANY)))
            w->bad++;
    }
    return NULL;
}

/* Files the view keeps open (pqv_mount_file_get, for FUSE's zero-message
 * opens): one per node, shared; each reader followed alone (two readers
 * going through the big file in order both read sequentially, a third
 * reading at random opens only the segments it touches); the least
 * recently used nobody holds closed beyond MOUNT_FILES_KEPT, never one
 * held; what is not a file refused as open refuses it; four threads
 * reading at once, byte-exact. */
static void
test_kept_files(void)
{
    pqv_mount *m = open_view();
    pqv_mount_file *f = NULL, *g = NULL, *h = NULL;
    struct pqv_mount_stats st0, st1;
    uint64_t big_ino = lookup_path(m, "t/big"), inos[MANY];
    uint8_t *buf = malloc(1 << 20);
    size_t got;
    int bad = 0;
    uint64_t touched = 0;

    REQUIRE(big_ino != 0 && buf != NULL);
    for (int i = 0; i < MANY; i++) {
        char path[64];
        snprintf(path, sizeof(path), "t/many/f%03d", i);
        REQUIRE((inos[i] = lookup_path(m, path)) != 0);
    }
    /* One open file per node, shared. */
    REQUIRE(pqv_mount_file_get(m, big_ino, &f) == 0);
    REQUIRE(pqv_mount_file_get(m, big_ino, &g) == 0);
    CHECK(f == g);
    CHECK_EQ_INT(kept_count(m), 1);
    pqv_mount_file_put(g);
    /* A reader at random (each read far from its last): only the segments
     * it touches, nothing prefetched. */
    pqv_mount_stats(m, &st0);
    for (int i = 0; i < 200 && bad < 3; i++) {
        uint64_t off = 1 + next_random() % (3u << 20) + (i % 2 ? 16u << 20 : 0);
        if (pqv_mount_read_as(f, 3, buf, 4096, off, &got) != 0 || got != 4096 ||
            memcmp(buf, big + off, 4096) != 0)
            bad++;
        touched += (off + 4095) / PQV_STREAM_SEGMENT_BYTES - off / PQV_STREAM_SEGMENT_BYTES + 2;
    }
    CHECK_EQ_INT(bad, 0);
    pqv_mount_stats(m, &st1);
    CHECK(st1.bytes_opened - st0.bytes_opened <= touched * PQV_STREAM_SEGMENT_BYTES);
    CHECK_EQ_INT(st1.prefetched, st0.prefetched);
    /* Two readers in order through the two halves, interleaved. */
    for (uint64_t k = 0; k < 8 && bad < 3; k++) {
        uint64_t a = k << 20, b = (10u << 20) + (k << 20);
        if (pqv_mount_read_as(f, 1, buf, 1 << 20, a, &got) != 0 || got != 1u << 20 ||
            memcmp(buf, big + a, got) != 0)
            bad++;
        if (pqv_mount_read_as(f, 2, buf, 1 << 20, b, &got) != 0 || got != 1u << 20 ||
            memcmp(buf, big + b, got) != 0)
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    /* Both sequential: the chunk after the one where each stopped, never
     * read, is queued for the prefetch threads (in the cache whole at
     * once, whatever the threads have done since). */
    CHECK_EQ_INT(extent_cached(m, big_ino, extent_at(m, big_ino, 8u << 20) + 1), 1);
    CHECK_EQ_INT(extent_cached(m, big_ino, extent_at(m, big_ino, 18u << 20) + 1), 1);
    pthread_mutex_lock(&m->lock);
    CHECK_EQ_INT(f->nstreams, 3);
    CHECK(f->streams[1].reader == 1 && f->streams[1].next == 8u << 20);
    CHECK(f->streams[2].reader == 2 && f->streams[2].next == 18u << 20);
    pthread_mutex_unlock(&m->lock);
    /* Held: never closed to make room; closed least recently used first
     * once nobody holds it. */
    for (int i = 0; i < MANY; i++)
        CHECK(read_many(m, inos, i));
    CHECK(kept_has(m, big_ino));
    CHECK_EQ_INT(kept_count(m), MOUNT_FILES_KEPT);
    for (int i = 0; i < MANY; i++)
        CHECK(kept_has(m, inos[i]) == (i >= MANY - MOUNT_FILES_KEPT + 1));
    /* Given back, it is the least recently used: the next file opened
     * closes it; then the oldest of the others. */
    pqv_mount_file_put(f);
    CHECK(kept_has(m, big_ino));
    CHECK(read_many(m, inos, 0));
    CHECK(!kept_has(m, big_ino) && kept_has(m, inos[0]));
    CHECK(read_many(m, inos, 1));
    CHECK(kept_has(m, inos[1]) && !kept_has(m, inos[MANY - MOUNT_FILES_KEPT + 1]));
    CHECK_EQ_INT(kept_count(m), MOUNT_FILES_KEPT);
    pthread_mutex_lock(&m->lock);
    CHECK(m->nspare_files > 0 && m->nspare_files <= MOUNT_FILES_KEPT);
    pthread_mutex_unlock(&m->lock);
    /* Not files: the answers of open. */
    CHECK_EQ_INT(pqv_mount_file_get(m, PQV_MOUNT_ROOT, &h), -EISDIR);
    CHECK_EQ_INT(pqv_mount_file_get(m, lookup_path(m, "t/link"), &h), -EINVAL);
    CHECK_EQ_INT(pqv_mount_file_get(m, (uint64_t)1000 << 32, &h), -ENOENT);
    CHECK(h == NULL);
    pqv_mount_file_put(NULL);
    /* Four threads at once. */
    {
        pthread_t t[4];
        struct kept_worker w[4];
        for (int i = 0; i < 4; i++) {
            w[i] = (struct kept_worker){ m, inos, (uint64_t)i + 1, 0 };
            REQUIRE(pthread_create(&t[i], NULL, kept_worker_main, &w[i]) == 0);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(t[i], NULL);
            CHECK_EQ_INT(w[i].bad, 0);
        }
    }
    CHECK(kept_count(m) <= MOUNT_FILES_KEPT);
    free(buf);
    close_view(m);
}

/* The cache's locked memory kept for reuse: the small files' chunks
 * pushed out of a small cache by the big file come back to the pools
 * wiped (every byte kept is zero, every record kept is zero), and are
 * used again: the small files read again, byte-exact. */
static void
test_locked_pool(void)
{
    pqv_mount *m = open_view_cache(PQV_MOUNT_CACHE_MIN);
    pqv_mount_file *f = NULL;
    uint64_t inos[MANY], big_ino = lookup_path(m, "t/big");
    uint8_t *buf = malloc(1 << 20);
    size_t got, nonzero = 0, kept = 0, records = 0;
    int bad = 0;

    REQUIRE(buf != NULL && big_ino != 0);
    for (int i = 0; i < MANY; i++) {
        char path[64];
        snprintf(path, sizeof(path), "t/many/f%03d", i);
        REQUIRE((inos[i] = lookup_path(m, path)) != 0);
        CHECK(read_many(m, inos, i));
    }
    REQUIRE(pqv_mount_file_open(m, big_ino, &f) == 0);
    for (uint64_t off = 0; off < BIG_BYTES && bad < 3; off += 1 << 20)
        if (pqv_mount_read(f, buf, 1 << 20, off, &got) != 0 || got != 1u << 20 ||
            memcmp(buf, big + off, got) != 0)
            bad++;
    CHECK_EQ_INT(bad, 0);
    pqv_mount_file_close(f);
    pthread_mutex_lock(&m->lock);
    for (int k = 0; k < MOUNT_POOL_CLASSES; k++)
        for (unsigned j = 0; j < m->cache.npool[k]; j++) {
            kept++;
            for (size_t b = 0; b < (4u << 10); b++)
                nonzero += m->cache.pool[k][j][b] != 0;
        }
    for (struct mount_chunk *ce = m->cache.spare_chunks; ce != NULL; ce = ce->hnext) {
        const uint8_t *raw = (const uint8_t *)ce;
        records++;
        for (size_t b = 0; b < offsetof(struct mount_chunk, hnext); b++)
            nonzero += raw[b] != 0;
    }
    CHECK(m->cache.pool_bytes <= MOUNT_POOL_BYTES);
    pthread_mutex_unlock(&m->lock);
    CHECK(kept > 0);
    CHECK(records > 0);
    CHECK_EQ_INT(nonzero, 0);
    for (int i = 0; i < MANY; i++)
        CHECK(read_many(m, inos, i));
    free(buf);
    close_view(m);
}

/* A chunk reads have taken all of leaves the cache once nobody holds it
 * (the kernel's page cache holds it then): small files read one after
 * another, backwards (not a walk: nothing queued ahead), leave the cache
 * empty and their locked buffers in the pools, and read again byte-exact
 * (decrypted again); a chunk read in two halves stays for the second and
 * leaves after it; one asked for again while held after all of it was
 * read stays. */
static void
test_read_once(void)
{
    pqv_mount *m = open_view();
    pqv_mount_file *f = NULL;
    struct pqv_mount_stats st0, st1;
    uint64_t inos[MANY], big_ino = lookup_path(m, "t/big");
    uint8_t *buf = malloc(1 << 20);
    size_t got = 0, half, whole;

    REQUIRE(buf != NULL && big_ino != 0);
    for (int i = 0; i < MANY; i++) {
        char path[64];
        snprintf(path, sizeof(path), "t/many/f%03d", i);
        REQUIRE((inos[i] = lookup_path(m, path)) != 0);
    }
    for (int i = MANY - 1; i >= 0; i--)
        CHECK(read_many(m, inos, i));
    for (int i = 0; i < MANY; i++)
        CHECK_EQ_INT(chunk_cached(m, inos[i]), 0);
    pthread_mutex_lock(&m->lock);
    CHECK_EQ_INT(m->cache.bytes, 0);
    CHECK(m->cache.pool_bytes > 0);
    pthread_mutex_unlock(&m->lock);
    /* (Far from the file read last, many/f000: not a walk either.) */
    pqv_mount_stats(m, &st0);
    CHECK(read_many(m, inos, MANY - 1));
    pqv_mount_stats(m, &st1);
    CHECK_EQ_INT(st1.cache_misses - st0.cache_misses, 1);
    CHECK_EQ_INT(st1.cache_bytes, 0);
    /* The big file's first chunk, half of it, then the rest: kept between. */
    REQUIRE(pqv_mount_file_open(m, big_ino, &f) == 0);
    whole = f->e.extents[0].plain_len;
    half = whole / 2;
    REQUIRE(half > 0 && half < (1u << 20));
    CHECK(pqv_mount_read(f, buf, half, 0, &got) == 0 && got == half && memcmp(buf, big, half) == 0);
    CHECK_EQ_INT(extent_cached(m, big_ino, 0), 1);
    pqv_mount_stats(m, &st0);
    CHECK(pqv_mount_read(f, buf, whole - half, half, &got) == 0 && got == whole - half &&
        memcmp(buf, big + half, got) == 0);
    pqv_mount_stats(m, &st1);
    CHECK_EQ_INT(st1.cache_hits - st0.cache_hits, 1);
    CHECK_EQ_INT(extent_cached(m, big_ino, 0), 0);
    /* Held (as a prefetch thread or another read would), read whole, then
     * read again while still held: kept from then on. */
    {
        struct mount_chunk *ce = NULL;
        REQUIRE(mount_cache_get(f, 0, MOUNT_WHOLE, &ce) == 0);
        CHECK(pqv_mount_read(f, buf, whole, 0, &got) == 0 && got == whole &&
            memcmp(buf, big, got) == 0);
        CHECK(pqv_mount_read(f, buf, 100, 7, &got) == 0 && got == 100 &&
            memcmp(buf, big + 7, got) == 0);
        pthread_mutex_lock(&m->lock);
        mount_cache_put(m, ce);
        pthread_mutex_unlock(&m->lock);
        CHECK(pqv_mount_read(f, buf, whole, 0, &got) == 0 && got == whole &&
            memcmp(buf, big, got) == 0);
        CHECK_EQ_INT(extent_cached(m, big_ino, 0), 1);
    }
    pqv_mount_file_close(f);
    free(buf);
    close_view(m);
}

/* A walk (files read from their starts in the order of their nodes): the
 * next files' first chunks are queued ahead, MOUNT_WALK_FILES of them,
 * not more; a file read alone, or one far from the file read before it,
 * queues nothing; what is read ahead reads byte-exact. */
static void
test_walk_ahead(void)
{
    pqv_mount *m = open_view();
    uint64_t inos[MANY];

    for (int i = 0; i < MANY; i++) {
        char path[64];
        snprintf(path, sizeof(path), "t/many/f%03d", i);
        REQUIRE((inos[i] = lookup_path(m, path)) != 0);
    }
    CHECK(read_many(m, inos, 5));
    CHECK_EQ_INT(chunk_cached(m, inos[6]), 0);
    CHECK(read_many(m, inos, 40));
    CHECK_EQ_INT(chunk_cached(m, inos[41]), 0);
    CHECK(read_many(m, inos, 41));
    for (int i = 42; i < 42 + MOUNT_WALK_FILES; i++)
        CHECK_EQ_INT(chunk_cached(m, inos[i]), 1);
    CHECK_EQ_INT(chunk_cached(m, inos[42 + MOUNT_WALK_FILES]), 0);
    /* Back to the start: not a walk. */
    CHECK(read_many(m, inos, 0));
    CHECK_EQ_INT(chunk_cached(m, inos[1]), 0);
    for (int i = 42; i < 42 + MOUNT_WALK_FILES; i++)
        CHECK(read_many(m, inos, i));
    close_view(m);
}

/* What the offer callback was given (as the kernel's page cache would
 * be), and whether it takes it: the kernel knows a file's inode only once
 * its directory is listed. */
struct offers {
    pthread_mutex_t lock;
    int listed;
    unsigned n, refused;
    uint64_t ino[MANY];
    char data[MANY][16];
    size_t len[MANY];
};
static struct offers offers = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, { 0 }, { { 0 } }, { 0 } };

static int
offer_cb(void *ctx, uint64_t ino, const void *data, size_t len)
{
    struct offers *o = ctx;
    int rc = -ENOENT;

    pthread_mutex_lock(&o->lock);
    if (!o->listed) {
        o->refused++;
    } else if (o->n < MANY && len < sizeof(o->data[0])) {
        o->ino[o->n] = ino;
        memcpy(o->data[o->n], data, len);
        o->len[o->n++] = len;
        rc = 0;
    }
    pthread_mutex_unlock(&o->lock);
    return rc;
}

/* wait_offered(m, n): until the view counts ${n} offers taken.
 * wait_pending(m, ino): until file ${ino}'s first chunk is read and waits
 * for an offer (not being offered).  (Each is told by m->cond; a test
 * that fails hangs until the runner's timeout.) */
static void
wait_offered(pqv_mount *m, uint64_t n)
{
    pthread_mutex_lock(&m->lock);
    while (m->cache.offered < n)
        pthread_cond_wait(&m->cond, &m->lock);
    pthread_mutex_unlock(&m->lock);
}

static void
wait_pending(pqv_mount *m, uint64_t ino)
{
    uint32_t tree, node;
    const struct entry *e;
    int state = 0;

    SETUP(mount_decode(m, ino, &tree, &node) == 0);
    pthread_mutex_lock(&m->lock);
    e = mount_tree_entry(&m->trees[tree], node);
    while (e != NULL && state != CHUNK_READY) {
        state = 0;
        for (size_t b = 0; b < m->cache.nbuckets && state == 0; b++)
            for (struct mount_chunk *ce = m->cache.buckets[b]; ce != NULL && state == 0; ce = ce->hnext)
                if (ce->key[0] == 'C' && memcmp(ce->key + 1, e->extents[0].chunk_id, CHUNK_ID_BYTES) == 0)
                    state = ce->offer_len != 0 ? ce->state : -1;
        if (state != CHUNK_READY)
            pthread_cond_wait(&m->cond, &m->lock);
    }
    pthread_mutex_unlock(&m->lock);
}

static int
count_dirent(void *ctx, const char *name, const struct pqv_mount_attr *a, uint64_t next)
{
    (void)name, (void)a, (void)next;
    ++*(unsigned *)ctx;
    return 0;
}

/* Offers (opt.offer): the next files of a walk, read ahead, are given to
 * the kernel's page cache, byte-exact, as the files the view shows (their
 * numbers), whole pages or whole files, and leave the view's cache once
 * taken; refused for want of an inode (the directory not listed yet),
 * they stay, and are given when the listing goes on, before its answer. */
static void
test_offers(void)
{
    struct pqv_mount_options opt = { 0 };
    uint64_t inos[MANY], dir_ino;
    unsigned listed = 0;
    pqv_mount *m = NULL;

    opt.offer = offer_cb;
    opt.offer_ctx = &offers;
    ensure_vault();
    SETUP(vf_open_vault(NULL, vdir, pass, &vault, 0) == 0);
    SETUP(pqv_mount_open(vault, &opt, &m) == 0);
    REQUIRE((dir_ino = lookup_path(m, "t/many")) != 0);
    for (int i = 0; i < MANY; i++) {
        char path[64];
        snprintf(path, sizeof(path), "t/many/f%03d", i);
        REQUIRE((inos[i] = lookup_path(m, path)) != 0);
    }
    /* Taken at once (the reader's own directory). */
    offers.listed = 1;
    CHECK(read_many(m, inos, 10));
    CHECK(read_many(m, inos, 11));
    wait_offered(m, MOUNT_WALK_FILES);
    pthread_mutex_lock(&offers.lock);
    CHECK_EQ_INT(offers.n, MOUNT_WALK_FILES);
    for (unsigned k = 0; k < offers.n; k++) {
        char want[16];
        int i = -1;
        for (int j = 0; j < MANY; j++)
            if (inos[j] == offers.ino[k])
                i = j;
        CHECK(i >= 12 && i < 12 + MOUNT_WALK_FILES);
        snprintf(want, sizeof(want), "file %d\n", i & 0xffff);
        CHECK(offers.len[k] == strlen(want) && memcmp(offers.data[k], want, offers.len[k]) == 0);
    }
    pthread_mutex_unlock(&offers.lock);
    for (int i = 12; i < 12 + MOUNT_WALK_FILES; i++)
        CHECK_EQ_INT(chunk_cached(m, inos[i]), 0);
    /* Refused (no inode yet): kept, then given as the listing goes on. */
    pthread_mutex_lock(&offers.lock);
    offers.listed = 0;
    offers.n = 0;
    pthread_mutex_unlock(&offers.lock);
    CHECK(read_many(m, inos, 40));
    CHECK(read_many(m, inos, 41));
    for (int i = 42; i < 42 + MOUNT_WALK_FILES; i++)
        wait_pending(m, inos[i]);
    pthread_mutex_lock(&m->lock);
    CHECK_EQ_INT(m->cache.pending_offers, MOUNT_WALK_FILES);
    pthread_mutex_unlock(&m->lock);
    for (int i = 42; i < 42 + MOUNT_WALK_FILES; i++)
        CHECK_EQ_INT(chunk_cached(m, inos[i]), 1);
    pthread_mutex_lock(&offers.lock);
    CHECK(offers.refused >= 1);
    offers.listed = 1;
    pthread_mutex_unlock(&offers.lock);
    CHECK(pqv_mount_readdir(m, dir_ino, 0, count_dirent, &listed) == 0);
    CHECK_EQ_INT(offers.n, 0);                 /* (a listing's start: not yet) */
    CHECK(pqv_mount_readdir(m, dir_ino, 2 + MANY, count_dirent, &listed) == 0);
    CHECK_EQ_INT(offers.n, MOUNT_WALK_FILES);
    CHECK_EQ_INT(m->cache.offered, 2 * MOUNT_WALK_FILES);
    CHECK_EQ_INT(m->cache.pending_offers, 0);
    for (int i = 42; i < 42 + MOUNT_WALK_FILES; i++)
        CHECK_EQ_INT(chunk_cached(m, inos[i]), 0);
    /* Read anyway (the kernel dropped the pages): byte-exact. */
    for (int i = 42; i < 42 + MOUNT_WALK_FILES; i++)
        CHECK(read_many(m, inos, i));
    close_view(m);
}

/* xattr_vault(name, old, now): a vault under the test directory whose
 * file x/f had the extended attribute user.old in its first snapshot if
 * ${old}, and has user.now in the current state if ${now}; gc then makes
 * the first snapshot's generation an older one.  Its path in ${out}. */
static void
xattr_vault(const char *name, int old, int now, char *out, size_t outlen)
{
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", PQV_AEAD_AES256GCM, &cheap,
        0, NULL, NULL, NULL, 0 };
    char recovery[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS], xsrc[160], file[192];
    struct pqv_check_result res;
    pqv_vault *v;

    ensure_vault();
    snprintf(xsrc, sizeof(xsrc), "%s/%s-src", dir, name);
    snprintf(out, outlen, "%s/%s-v", dir, name);
    snprintf(file, sizeof(file), "%s/f", xsrc);
    SETUP(mkdir(xsrc, 0700) == 0);
    vf_write_path(file, (const uint8_t *)"one\n", 4);
    if (old)
        SETUP(setxattr(file, "user.old", "1", 1, 0) == 0);
    SETUP(pqv_vault_create(out, NULL, (const uint8_t *)pass, strlen(pass), &opt, recovery,
        fp) == 0);
    SETUP(vf_open_vault(NULL, out, pass, &v, 1) == 0);
    SETUP(pqv_vault_add_path(v, xsrc, "x", NULL) == 0);
    if (old)
        SETUP(removexattr(file, "user.old") == 0);
    vf_write_path(file, (const uint8_t *)"two\n", 4);
    if (now)
        SETUP(setxattr(file, "user.now", "2", 1, 0) == 0);
    SETUP(pqv_vault_add_path(v, xsrc, "x", NULL) == 0);
    SETUP(pqv_vault_gc(v, NULL, &res) == 0);
    pqv_vault_close(v);
}

/* xattrs_known(m): pqv_mount_xattrs_none once the view knows (the
 * thread reading older generations done: told by m->cond). */
static int
xattrs_known(pqv_mount *m)
{
    (void)pqv_mount_xattrs_none(m);
    pthread_mutex_lock(&m->lock);
    while (m->xattrs == MOUNT_XATTRS_UNKNOWN)
        pthread_cond_wait(&m->cond, &m->lock);
    pthread_mutex_unlock(&m->lock);
    return pqv_mount_xattrs_none(m);
}

/* Whether any state shown has extended attributes: none anywhere (known
 * at once in one generation; after reading the older ones otherwise);
 * one only in an older generation's snapshot; one in the current state.
 * The file's own answers stay exact either way. */
static void
test_xattrs_anywhere(void)
{
    char path[160];
    pqv_vault *v;
    pqv_mount *m;
    char buf[64];
    size_t len = 0;

    /* The main test vault: one generation, no extended attribute. */
    m = open_view();
    CHECK_EQ_INT(m->xattrs, MOUNT_XATTRS_NONE);
    CHECK_EQ_INT(pqv_mount_xattrs_none(m), 1);
    CHECK(!m->xattrs_started);
    close_view(m);
    for (int k = 0; k < 3; k++) {
        static const char *names[] = { "xnone", "xold", "xnow" };
        xattr_vault(names[k], k == 1, k == 2, path, sizeof(path));
        SETUP(vf_open_vault(NULL, path, pass, &v, 0) == 0);
        SETUP(pqv_mount_open(v, NULL, &m) == 0);
        REQUIRE(m->kept.n == 2 && m->kept.s[0].base != m->cur.base);
        if (k == 2) {
            /* In the current state: known at once, nothing read. */
            CHECK_EQ_INT(m->xattrs, MOUNT_XATTRS_SOME);
            CHECK_EQ_INT(pqv_mount_xattrs_none(m), 0);
            CHECK(!m->xattrs_started);
            CHECK(pqv_mount_getxattr(m, lookup_path(m, "x/f"), "user.now", buf, sizeof(buf),
                &len) == 0 && len == 1 && buf[0] == '2');
        } else {
            CHECK_EQ_INT(m->xattrs, MOUNT_XATTRS_UNKNOWN);
            CHECK_EQ_INT(xattrs_known(m), k == 0);
            CHECK(m->xattrs_started);
            CHECK_EQ_INT(pqv_mount_listxattr(m, lookup_path(m, "x/f"), buf, sizeof(buf), &len), 0);
            CHECK_EQ_INT(len, 0);
        }
        pqv_mount_close(m);
        pqv_vault_close(v);
    }
    /* A view closed while it reads the older generations closes. */
    SETUP(vf_open_vault(NULL, path, pass, &v, 0) == 0);
    SETUP(pqv_mount_open(v, NULL, &m) == 0);
    m->xattrs = MOUNT_XATTRS_UNKNOWN;
    CHECK_EQ_INT(pqv_mount_xattrs_none(m), 0);
    pqv_mount_close(m);
    pqv_vault_close(v);
}

/* Loading ahead (mount_load_ahead): from a listing of the root on, the
 * tree after the one a walk is in loads on a thread of its own, as not
 * used yet; room is made from what the walk left, never the tree it is
 * in; with no room, nothing; a tree asked for still loads, unloading what
 * nobody uses before it loads; a view closed while a tree loads ahead
 * closes. */
static void
test_load_ahead(void)
{
    char path[160];
    unsigned n = 0;
    pqv_vault *v;
    pqv_mount *m;
    uint32_t vers;

    ensure_vault();
    write_src("second", (const uint8_t *)"two\n", 4);
    SETUP(vf_open_vault(NULL, vdir, pass, &v, 1) == 0);
    SETUP(pqv_vault_add_path(v, src, "t", NULL) == 0);
    pqv_vault_close(v);

    m = open_view();
    REQUIRE(m->kept.n == 2 && m->ntrees == 5);
    vers = m->versions;
    /* Before the root is listed: nothing ahead. */
    CHECK(pqv_mount_readdir(m, lookup_path(m, "t"), 0, count_entry, &n) == 0);
    CHECK(lookup_path(m, snap_path(m, 1, "t/second", path)) != 0);
    CHECK(n > 2 && !m->ahead_started);
    CHECK_EQ_INT(tree_status(m, 2), TREE_UNLOADED);
    CHECK_EQ_INT(tree_status(m, vers), TREE_UNLOADED);
    close_view(m);

    m = open_view();
    n = 0;
    CHECK(pqv_mount_readdir(m, PQV_MOUNT_ROOT, 0, count_entry, &n) == 0);
    CHECK_EQ_INT(n, 5); /* ., .., t, snapshots, versions */
    wait_ahead(m);
    /* The first snapshot's tree, loaded ahead, not used; no other. */
    CHECK_EQ_INT(tree_status(m, 2), TREE_LOADED);
    CHECK(!tree_used(m, 2));
    CHECK_EQ_INT(tree_status(m, 3), TREE_UNLOADED);
    CHECK_EQ_INT(tree_status(m, vers), TREE_UNLOADED);
    /* In it: the next one (the oldest snapshot holds no "second"). */
    CHECK(lookup_path(m, snap_path(m, 0, "t/second", path)) == 0);
    CHECK(tree_used(m, 2));
    wait_ahead(m);
    CHECK_EQ_INT(tree_status(m, 3), TREE_LOADED);
    CHECK(lookup_path(m, snap_path(m, 1, "t/second", path)) != 0);
    wait_ahead(m);
    CHECK_EQ_INT(tree_status(m, vers), TREE_LOADED);
    CHECK(!tree_used(m, vers));
    pthread_mutex_lock(&m->lock);
    CHECK(m->trees_bytes <= m->trees_budget);
    pthread_mutex_unlock(&m->lock);
    close_view(m);

    /* Room for the root's tree alone: nothing ahead; what is asked for
     * loads, what nobody uses unloaded first. */
    m = open_view();
    m->trees_budget = m->trees_bytes + 1;
    CHECK(pqv_mount_readdir(m, PQV_MOUNT_ROOT, 0, count_entry, &n) == 0);
    wait_ahead(m);
    for (uint32_t id = 2; id < m->ntrees; id++)
        CHECK_EQ_INT(tree_status(m, id), TREE_UNLOADED);
    CHECK(lookup_path(m, snap_path(m, 0, "t/big", path)) != 0);
    wait_ahead(m);
    CHECK_EQ_INT(tree_status(m, 2), TREE_LOADED);  /* (the one in use stays) */
    CHECK_EQ_INT(tree_status(m, 3), TREE_UNLOADED);
    snprintf(path, sizeof(path), "%s/t", m->vers_dir);
    CHECK(lookup_path(m, path) != 0);
    CHECK_EQ_INT(tree_status(m, vers), TREE_LOADED);
    CHECK_EQ_INT(tree_status(m, 2), TREE_UNLOADED);
    close_view(m);

    /* Walking the first snapshot, the newest loads ahead beside it; then
     * with room for all but versions/'s estimate, walking the newest,
     * versions/ loads ahead in place of the first snapshot's, never of
     * the tree the walk is in. */
    m = open_view();
    CHECK(pqv_mount_readdir(m, PQV_MOUNT_ROOT, 0, count_entry, &n) == 0);
    wait_ahead(m);
    CHECK(lookup_path(m, snap_path(m, 0, "t/big", path)) != 0);
    wait_ahead(m);
    CHECK_EQ_INT(tree_status(m, 2), TREE_LOADED);
    CHECK_EQ_INT(tree_status(m, 3), TREE_LOADED);
    pthread_mutex_lock(&m->lock);
    m->trees_budget = m->trees_bytes + m->trees[1].bytes - 1;
    pthread_mutex_unlock(&m->lock);
    CHECK(lookup_path(m, snap_path(m, 1, "t/second", path)) != 0);
    wait_ahead(m);
    CHECK_EQ_INT(tree_status(m, 3), TREE_LOADED);
    CHECK_EQ_INT(tree_status(m, vers), TREE_LOADED);
    CHECK_EQ_INT(tree_status(m, 2), TREE_UNLOADED);
    close_view(m);

    /* Closed while a tree loads ahead. */
    m = open_view();
    CHECK(pqv_mount_readdir(m, PQV_MOUNT_ROOT, 0, count_entry, &n) == 0);
    close_view(m);
}

TEST_MAIN(test_random_reads, test_damaged_segment, test_lookup_hostile, test_version_names,
    test_kept_files, test_locked_pool, test_read_once, test_walk_ahead, test_offers, test_xattrs_anywhere, test_load_ahead)
