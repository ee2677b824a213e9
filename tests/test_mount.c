/*
 * test_mount.c: the mounted view at the library level (pqvault/mount.h),
 * without FUSE: random reads that open only the 64 KiB STREAM segments
 * they touch, byte-exact against the source, damage that stays within
 * one segment for them and fails the whole chunk for a sequential reader,
 * lookups of hostile names (random bytes, "..", ".", slashes, names too
 * long, names below files and links) that answer as a file system does
 * and never crash, the names of versions, whether any state shown has
 * extended attributes, trees loaded ahead of a walk.  test_mount_cache.c
 * tests the cache and open files; tests/cli/mount.sh the FUSE glue.
 */
#include <sys/xattr.h>

#include "mount_fixture.h"

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
    test_xattrs_anywhere, test_load_ahead)
