/*
 * test_mount_cache.c: the mounted view's cache and open files, at the
 * library level (pqvault/mount.h, vault/mount_internal.h), without FUSE:
 * files kept open for a kernel that opens none, shared by readers told
 * apart by who reads; the locked pools; chunks read whole leaving the
 * cache; a walk's next files read ahead and offered to the kernel's page
 * cache.  test_mount.c tests the view; tests/cli/mount.sh the FUSE glue.
 */
#include "mount_fixture.h"
#include "storage_wrap.h"
#include "vault/chunker.h"
#include "vault/readahead.h"
#include "vault/vault_internal.h"

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
    /* (A chunk is up to CHUNK_MAX: the big file's first, read whole, is
     * about 1 MiB, more or less as the random data falls.) */
    uint8_t *buf = malloc(CHUNK_MAX);
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
    REQUIRE(half > 0 && whole <= CHUNK_MAX);
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

/* A walk (files read from their starts in the tree's walk order): the
 * next files' first chunks are queued ahead, MOUNT_WALK_FILES of them,
 * not more; a file read alone, or one far from the file read before it,
 * queues nothing; what is read ahead reads byte-exact. */
_Static_assert(22 + MOUNT_WALK_FILES < MANY, "test_walk_ahead: t/many holds too few files");
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
    CHECK(read_many(m, inos, 6 + MOUNT_WALK_GAP + 6));
    CHECK_EQ_INT(chunk_cached(m, inos[21]), 0);
    CHECK(read_many(m, inos, 21));
    for (int i = 22; i < 22 + MOUNT_WALK_FILES; i++)
        CHECK_EQ_INT(chunk_cached(m, inos[i]), 1);
    CHECK_EQ_INT(chunk_cached(m, inos[22 + MOUNT_WALK_FILES]), 0);
    /* Back to the start: not a walk. */
    CHECK(read_many(m, inos, 0));
    CHECK_EQ_INT(chunk_cached(m, inos[1]), 0);
    for (int i = 22; i < 22 + MOUNT_WALK_FILES; i++)
        CHECK(read_many(m, inos, i));
    close_view(m);
}

/* A walk that meets a file longer than its first chunk (two/z, after
 * two/'s small files) reads its second chunk ahead too, for the read
 * where the first ends (the kernel's first request of a file whose first
 * chunk was offered), and keeps it for the file's copy the walk met after
 * it (two/z2) once the first has read it; both read byte-exact. */
static void
test_walk_second_chunk(void)
{
    pqv_mount *m = open_view();
    uint64_t small[TWO_SMALL], z, z2;
    pqv_mount_file *f = NULL;
    uint8_t *buf;
    size_t got = 0;

    for (int i = 0; i < TWO_SMALL; i++) {
        char path[32];
        snprintf(path, sizeof(path), "t/two/s%d", i);
        REQUIRE((small[i] = lookup_path(m, path)) != 0);
    }
    REQUIRE((z = lookup_path(m, "t/two/z")) != 0);
    REQUIRE((z2 = lookup_path(m, "t/two/z2")) != 0);
    REQUIRE(extent_at(m, z, TWO_BYTES - 1) >= 1);
    REQUIRE((buf = malloc(TWO_BYTES)) != NULL);
    /* two/s0 and two/s1 read from their starts: a walk. */
    for (int i = 0; i < 2; i++) {
        char want[32];
        snprintf(want, sizeof(want), "two/s%d", i);
        CHECK(pqv_mount_file_get(m, small[i], &f) == 0);
        CHECK(pqv_mount_read(f, buf, 64, 0, &got) == 0);
        CHECK(got == strlen(want) && memcmp(buf, want, got) == 0);
        pqv_mount_file_put(f);
        if (i == 0)
            CHECK_EQ_INT(extent_cached(m, z, 1), 0); /* (one file: not a walk yet) */
    }
    CHECK_EQ_INT(extent_cached(m, z, 0), 1);
    CHECK_EQ_INT(extent_cached(m, z, 1), 1);
    /* Read whole, byte-exact (the same random bytes as make_vault's); the
     * second chunk kept for z2, z's copy, which the walk met after it. */
    CHECK(pqv_mount_file_get(m, z, &f) == 0);
    CHECK(pqv_mount_read(f, buf, TWO_BYTES, 0, &got) == 0);
    CHECK(got == TWO_BYTES && memcmp(buf, two_z, TWO_BYTES) == 0);
    pqv_mount_file_put(f);
    CHECK_EQ_INT(extent_cached(m, z2, 1), 1);
    CHECK(pqv_mount_file_get(m, z2, &f) == 0);
    CHECK(pqv_mount_read(f, buf, TWO_BYTES, 0, &got) == 0);
    CHECK(got == TWO_BYTES && memcmp(buf, two_z, TWO_BYTES) == 0);
    pqv_mount_file_put(f);
    free(buf);
    close_view(m);
}

/* read_order(m, sub, i): order/${sub}/f${i}, byte-exact, from its start;
 * 1 if so. */
static int
read_order(pqv_mount *m, const char *sub, int i)
{
    char path[64], want[64], got_buf[80];
    pqv_mount_file *f = NULL;
    size_t got = 0;
    uint64_t ino;
    int ok;

    snprintf(path, sizeof(path), "t/order/%s/f%d", sub, i);
    snprintf(want, sizeof(want), "order/%s/f%d\n", sub, i);
    if ((ino = lookup_path(m, path)) == 0 || pqv_mount_file_get(m, ino, &f) != 0)
        return 0;
    ok = pqv_mount_read(f, (uint8_t *)got_buf, sizeof(got_buf), 0, &got) == 0 &&
        got == strlen(want) && memcmp(got_buf, want, got) == 0;
    pqv_mount_file_put(f);
    return ok;
}

static int
order_cached(pqv_mount *m, const char *sub, int i)
{
    char path[64];
    uint64_t ino;

    snprintf(path, sizeof(path), "t/order/%s/f%d", sub, i);
    SETUP((ino = lookup_path(m, path)) != 0);
    return chunk_cached(m, ino);
}

/* A walk's listings move it on: its reader, given the files it was
 * offered, asks for none of them, but lists each directory it reaches
 * (pqv_mount_listed, after the answer): the files after that directory
 * are read ahead then.  A listing with no walk on (find, du) reads
 * nothing ahead. */
_Static_assert(MANY >= MOUNT_WALK_FILES + 2, "test_walk_listed: t/many holds too few files");
static void
test_walk_listed(void)
{
    pqv_mount *m = open_view();
    uint64_t inos[MANY], order;

    for (int i = 0; i < MANY; i++) {
        char path[64];
        snprintf(path, sizeof(path), "t/many/f%03d", i);
        REQUIRE((inos[i] = lookup_path(m, path)) != 0);
    }
    REQUIRE((order = lookup_path(m, "t/order")) != 0);
    pqv_mount_listed(m, order, 0);
    CHECK_EQ_INT(order_cached(m, "apt", 0), 0);   /* (no walk) */
    /* A walk that looks ahead to many/'s last file: order/ is next. */
    CHECK(read_many(m, inos, MANY - MOUNT_WALK_FILES - 2));
    CHECK(read_many(m, inos, MANY - MOUNT_WALK_FILES - 1));
    CHECK_EQ_INT(chunk_cached(m, inos[MANY - 1]), 1);
    CHECK_EQ_INT(order_cached(m, "apt", 0), 0);
    pqv_mount_listed(m, order, 0);
    for (int i = 0; i < ORDER_FILES; i++) {
        CHECK_EQ_INT(order_cached(m, "apt", i), 1);
        CHECK(read_order(m, "apt", i));
    }
    close_view(m);
}

/* A walk goes depth first through the directories, each in name order, as
 * cp -a, tar and grep -r read them, not in the paths' order: after
 * order/apt/'s last files, order/apt-x/'s (whose paths sort before
 * apt/'s) are read ahead. */
_Static_assert(ORDER_FILES <= MOUNT_WALK_FILES, "test_walk_depth_first: a walk looks at fewer files");
static void
test_walk_depth_first(void)
{
    pqv_mount *m = open_view();

    CHECK(read_order(m, "apt", ORDER_FILES - 2));
    CHECK(read_order(m, "apt", ORDER_FILES - 1));
    for (int i = 0; i < ORDER_FILES; i++)
        CHECK_EQ_INT(order_cached(m, "apt-x", i), 1);
    for (int i = 0; i < ORDER_FILES; i++)
        CHECK(read_order(m, "apt-x", i));
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
    char data[MANY][64];
    size_t len[MANY];
};
static struct offers offers = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, { 0 }, { { 0 } }, { 0 } };

/* Set while this thread reads through the view: an offer made then would
 * be made by a reader's request, which the kernel may wait for to unlock
 * the very pages offered (a deadlock the offers must never risk). */
static _Thread_local int reading;
static unsigned offers_in_reads;
/* Set while this thread lists a directory: offers a listing's
 * continuation finds pending are made by the prefetch threads, after its
 * answer, so that the copier does not wait for them. */
static _Thread_local int listing;
static unsigned offers_in_listings;

static int
offer_cb(void *ctx, uint64_t ino, const void *data, size_t len)
{
    struct offers *o = ctx;
    int rc = -ENOENT;

    pthread_mutex_lock(&o->lock);
    offers_in_reads += reading;
    offers_in_listings += listing;
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
                    state = ce->noffers != 0 ? ce->state : -1;
        if (state != CHUNK_READY)
            pthread_cond_wait(&m->cond, &m->lock);
    }
    pthread_mutex_unlock(&m->lock);
}


/* Where test_offers' second walk starts (a walk from the first file
 * again: more than MOUNT_WALK_GAP files after it; among the files the
 * first walk offered, which left the cache). */
#define OFFERS_AT (MOUNT_WALK_GAP + 14)
_Static_assert(OFFERS_AT + MOUNT_WALK_FILES <= MANY, "test_offers: t/many holds too few files");

/* check_offered(inos, first): the offers taken are the walk's next
 * MOUNT_WALK_FILES files from t/many/f${first} on, each once, byte-exact. */
static void
check_offered(const uint64_t *inos, int first)
{
    pthread_mutex_lock(&offers.lock);
    CHECK_EQ_INT(offers.n, MOUNT_WALK_FILES);
    for (unsigned k = 0; k < offers.n; k++) {
        char want[16];
        int i = -1;
        for (int j = 0; j < MANY; j++)
            if (inos[j] == offers.ino[k])
                i = j;
        CHECK(i >= first && i < first + MOUNT_WALK_FILES);
        for (unsigned l = 0; l < k; l++)
            CHECK(offers.ino[l] != offers.ino[k]);
        snprintf(want, sizeof(want), "file %d\n", i & 0xffff);
        CHECK(offers.len[k] == strlen(want) && memcmp(offers.data[k], want, offers.len[k]) == 0);
    }
    pthread_mutex_unlock(&offers.lock);
}

/* Offers (opt.offer): the next files of a walk, read ahead, are given to
 * the kernel's page cache, byte-exact, as the files the view shows (their
 * numbers), whole pages or whole files, and leave the view's cache once
 * taken; refused for want of an inode (the directory not listed yet),
 * they stay, and are given when the listing goes on, by the prefetch
 * threads (not on the listing's thread: the copier would wait for them). */
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
    check_offered(inos, 12);
    for (int i = 12; i < 12 + MOUNT_WALK_FILES; i++)
        CHECK_EQ_INT(chunk_cached(m, inos[i]), 0);
    /* Refused (no inode yet): kept, then given as the listing goes on. */
    pthread_mutex_lock(&offers.lock);
    offers.listed = 0;
    offers.n = 0;
    pthread_mutex_unlock(&offers.lock);
    CHECK(read_many(m, inos, 0));              /* (back: a walk starts again) */
    CHECK(read_many(m, inos, OFFERS_AT - 2));
    CHECK(read_many(m, inos, OFFERS_AT - 1));
    for (int i = OFFERS_AT; i < OFFERS_AT + MOUNT_WALK_FILES; i++)
        wait_pending(m, inos[i]);
    pthread_mutex_lock(&m->lock);
    CHECK_EQ_INT(m->cache.pending_offers, MOUNT_WALK_FILES);
    pthread_mutex_unlock(&m->lock);
    for (int i = OFFERS_AT; i < OFFERS_AT + MOUNT_WALK_FILES; i++)
        CHECK_EQ_INT(chunk_cached(m, inos[i]), 1);
    pthread_mutex_lock(&offers.lock);
    CHECK(offers.refused >= 1);
    offers.listed = 1;
    pthread_mutex_unlock(&offers.lock);
    offers_in_listings = 0;
    listing = 1;
    CHECK(pqv_mount_readdir(m, dir_ino, 0, count_entry, &listed) == 0);
    pthread_mutex_lock(&m->lock);
    CHECK_EQ_INT(m->cache.pending_offers, MOUNT_WALK_FILES); /* (a listing's start: not yet) */
    pthread_mutex_unlock(&m->lock);
    pqv_mount_listed(m, dir_ino, 0);
    CHECK(pqv_mount_readdir(m, dir_ino, 2 + MANY, count_entry, &listed) == 0);
    pthread_mutex_lock(&m->lock);
    CHECK_EQ_INT(m->cache.pending_offers, MOUNT_WALK_FILES); /* (not before it is answered) */
    pthread_mutex_unlock(&m->lock);
    pqv_mount_listed(m, dir_ino, 2 + MANY);
    listing = 0;
    wait_offered(m, 2 * MOUNT_WALK_FILES);
    pthread_mutex_lock(&m->lock);
    CHECK_EQ_INT(m->cache.offered, 2 * MOUNT_WALK_FILES);
    CHECK_EQ_INT(m->cache.pending_offers, 0);
    pthread_mutex_unlock(&m->lock);
    check_offered(inos, OFFERS_AT);
    CHECK_EQ_INT(offers_in_listings, 0);
    for (int i = OFFERS_AT; i < OFFERS_AT + MOUNT_WALK_FILES; i++)
        CHECK_EQ_INT(chunk_cached(m, inos[i]), 0);
    /* Read anyway (the kernel dropped the pages): byte-exact. */
    for (int i = OFFERS_AT; i < OFFERS_AT + MOUNT_WALK_FILES; i++)
        CHECK(read_many(m, inos, i));
    close_view(m);
}

/* read_dup(m, name, len): t/dup/${name}'s first ${len} bytes read (not
 * offered on this thread); 1 if they are what it holds. */
static int
read_dup(pqv_mount *m, const char *name, size_t len)
{
    char path[64], got_buf[64];
    const char *want = name[0] == 'b' ? DUP_BYTES : name[1] == '0' ? "dup a0\n" : "dup a1\n";
    pqv_mount_file *f = NULL;
    size_t got = 0;
    uint64_t ino;
    int ok;

    snprintf(path, sizeof(path), "t/dup/%s", name);
    if ((ino = lookup_path(m, path)) == 0 || pqv_mount_file_get(m, ino, &f) != 0)
        return 0;
    reading = 1;
    ok = pqv_mount_read(f, (uint8_t *)got_buf, len, 0, &got) == 0 && got == len &&
        memcmp(got_buf, want, len) == 0;
    reading = 0;
    pqv_mount_file_put(f);
    return ok;
}

/* Copies met by a walk (one chunk, stored once, for several files) are
 * offered as each of them, byte-exact, and only by the prefetch threads,
 * never by a reader's request, even when the chunk was read already: the
 * kernel keeps the pages of the file a request reads locked until it is
 * answered, and a chunk read for a walk may be waiting to be offered as
 * that very file (when it goes on: as it was offered, refused, before the
 * kernel had its inode). */
static void
test_offer_copies(void)
{
    struct pqv_mount_options opt = { 0 };
    pqv_mount *m = NULL;
    uint64_t b[DUP_COPIES];

    opt.offer = offer_cb;
    opt.offer_ctx = &offers;
    ensure_vault();
    SETUP(vf_open_vault(NULL, vdir, pass, &vault, 0) == 0);
    SETUP(pqv_mount_open(vault, &opt, &m) == 0);
    for (int i = 0; i < DUP_COPIES; i++) {
        char path[32];
        snprintf(path, sizeof(path), "t/dup/b%d", i);
        REQUIRE((b[i] = lookup_path(m, path)) != 0);
    }
    pthread_mutex_lock(&offers.lock);
    offers.listed = 1;
    offers.n = 0;
    offers_in_reads = 0;
    pthread_mutex_unlock(&offers.lock);
    /* The copies' chunk read (in part: it stays cached), then a walk. */
    CHECK(read_dup(m, "b0", 4));
    CHECK(read_dup(m, "a0", 7));
    CHECK(read_dup(m, "a1", 7));
    wait_offered(m, DUP_COPIES);
    pthread_mutex_lock(&offers.lock);
    CHECK_EQ_INT(offers.n, DUP_COPIES);
    CHECK_EQ_INT(offers_in_reads, 0);
    for (unsigned k = 0; k < offers.n; k++) {
        int i = -1;
        for (int j = 0; j < DUP_COPIES; j++)
            if (b[j] == offers.ino[k])
                i = j;
        CHECK(i >= 0);
        CHECK(offers.len[k] == strlen(DUP_BYTES) && memcmp(offers.data[k], DUP_BYTES, offers.len[k]) == 0);
    }
    pthread_mutex_unlock(&offers.lock);
    close_view(m);
}

/* Over a storage that says it is remote (S3), a sequential reader has
 * more chunks fetched ahead, by more threads: the tenth chunk after its
 * first MiB is queued there, not over a local directory (six ahead);
 * every byte right either way. */
static void
test_remote_prefetch(void)
{
    struct pqv_mount_options opt = { 0 };
    struct sw_storage remote;
    pqv_storage *inner;
    pqv_mount *m;
    uint8_t *buf = malloc(1 << 20);
    uint64_t ino;
    uint32_t x;
    size_t got;
    int bad = 0;

    REQUIRE(buf != NULL);
    /* Local: six ahead. */
    m = open_view();
    CHECK_EQ_INT(m->cache.remote, 0);
    REQUIRE((ino = lookup_path(m, "t/big")) != 0);
    x = extent_at(m, ino, 1u << 20);
    REQUIRE(x + MOUNT_PREFETCH_CHUNKS_REMOTE < 30);   /* (20 MiB: some 40 chunks) */
    {
        pqv_mount_file *f;
        REQUIRE(pqv_mount_file_get(m, ino, &f) == 0);
        CHECK(pqv_mount_read_as(f, 1, buf, 1 << 20, 0, &got) == 0 && got == 1u << 20 &&
            memcmp(buf, big, got) == 0);
        CHECK_EQ_INT(extent_cached(m, ino, x + MOUNT_PREFETCH_CHUNKS), 0);
        pqv_mount_file_put(f);
    }
    close_view(m);

    /* Remote: sixteen ahead (within 24 MiB), eight threads. */
    SETUP(pqv_storage_local_open(&inner, vdir, 0) == 0);
    sw_init(&remote, inner, 1);
    SETUP(vf_open_vault(&remote.base, NULL, pass, &vault, 0) == 0);
    SETUP(pqv_mount_open(vault, &opt, &m) == 0);
    CHECK_EQ_INT(m->cache.remote, 1);
    CHECK_EQ_INT(m->cache.nthreads, MOUNT_PREFETCH_THREADS_REMOTE);
    REQUIRE((ino = lookup_path(m, "t/big")) != 0);
    {
        pqv_mount_file *f;
        REQUIRE(pqv_mount_file_get(m, ino, &f) == 0);
        CHECK(pqv_mount_read_as(f, 1, buf, 1 << 20, 0, &got) == 0 && got == 1u << 20 &&
            memcmp(buf, big, got) == 0);
        CHECK_EQ_INT(extent_cached(m, ino, x + 10), 1);
        for (uint64_t off = 1u << 20; off < BIG_BYTES && bad < 3; off += got)
            if (pqv_mount_read_as(f, 1, buf, 1 << 20, off, &got) != 0 || got == 0 ||
                memcmp(buf, big + off, got) != 0)
                bad++;
        CHECK_EQ_INT(bad, 0);
        pqv_mount_file_put(f);
    }
    close_view(m);
    inner->ops->close(inner);
    free(buf);
}

/* Over a storage that says it is remote, a walk (t/many's files read
 * from their starts, in order) announces the files further on than its
 * offers to the read-ahead (their chunks then come in the windows of the
 * offered ones); every byte right; over a local directory nothing is
 * announced (no read-ahead at all). */
static void
test_remote_walk(void)
{
    struct pqv_mount_options opt = { 0 };
    struct sw_storage remote;
    pqv_storage *inner;
    pqv_mount *m;
    uint64_t inos[MANY];
    int bad = 0;

    SETUP(pqv_storage_local_open(&inner, vdir, 0) == 0);
    sw_init(&remote, inner, 1);
    SETUP(vf_open_vault(&remote.base, NULL, pass, &vault, 0) == 0);
    SETUP(pqv_mount_open(vault, &opt, &m) == 0);
    REQUIRE(m->v->readahead != NULL);
    for (int i = 0; i < MANY; i++) {
        char path[64];
        snprintf(path, sizeof(path), "t/many/f%03d", i);
        REQUIRE((inos[i] = lookup_path(m, path)) != 0);
    }
    CHECK_EQ_INT(readahead_plan_left(m->v->readahead), 0);
    for (int i = 0; i < 2; i++)
        CHECK(read_many(m, inos, i));
    /* (The second read is a walk's: at most MOUNT_WALK_FILES files after
     * it offered, read by the prefetch threads; the rest of t/many, past
     * the offers' reach, read by nobody yet.) */
    CHECK(readahead_plan_left(m->v->readahead) >= (uint64_t)(MANY - 2 - MOUNT_WALK_FILES));
    for (int i = 2; i < MANY; i++)
        if (!read_many(m, inos, i))
            bad++;
    CHECK_EQ_INT(bad, 0);
    close_view(m);
    inner->ops->close(inner);

    m = open_view();
    CHECK(m->v->readahead == NULL);
    for (int i = 0; i < 5; i++)
        CHECK(read_many(m, inos, i));
    close_view(m);
}

/* long_matches(buf, off, len): ${buf} holds zz/long's ${len} bytes at ${off}. */
static int
long_matches(const uint8_t *buf, uint64_t off, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        uint64_t p = off + i, k = p / LONG_EVERY, in = p % LONG_EVERY;
        if (buf[i] != (in < LONG_DATA ? long_data[k * LONG_DATA + in] : 0))
            return 0;
    }
    return 1;
}

/* read_through(f, reader, from, to, step, dropped): ${reader} reads ${f}
 * (zz/long) from ${from} to ${to} in reads of ${step} bytes, each checked,
 * asking after each what the page cache may drop; *${dropped} is where
 * the parts given so far end (each must start there).  Returns the reads
 * that failed or gave a part out of order, unaligned, or less than
 * MOUNT_DROP_BEHIND behind the reader. */
static int
read_through(pqv_mount_file *f, uint64_t reader, uint64_t from, uint64_t to, size_t step,
    uint64_t *dropped, uint8_t *buf)
{
    uint64_t off, len;
    size_t got;
    int bad = 0;

    for (uint64_t pos = from; pos < to && bad < 3; pos += step) {
        if (pqv_mount_read_as(f, reader, buf, step, pos, &got) != 0 || got != step ||
            !long_matches(buf, pos, got)) {
            bad++;
            continue;
        }
        while (pqv_mount_read_behind(f, reader, &off, &len)) {
            if (off != *dropped || len == 0 || off % MOUNT_DROP_ALIGN != 0 ||
                len % MOUNT_DROP_ALIGN != 0 || off + len + MOUNT_DROP_BEHIND > pos + got)
                bad++;
            *dropped = off + len;
        }
    }
    return bad;
}

/* A large file read from start to end gives the page cache the parts its
 * reader left behind to drop (docs/DESIGN.md, "A large file streams
 * through"): in order, each once, whole MiBs at least MOUNT_DROP_BEHIND
 * behind the reader, the first once it is MOUNT_DROP_BEHIND +
 * MOUNT_DROP_STEP in, all but the last of the file by the end; none for
 * a random reader, a file under MOUNT_DROP_MIN_FILE, or near another
 * reader reading lately (until it stops). */
static void
test_read_behind(void)
{
    pqv_mount *m = open_view();
    pqv_mount_file *f = NULL, *g = NULL, *h = NULL;
    uint64_t ino = lookup_path(m, "t/zz/long"), big_ino = lookup_path(m, "t/big");
    uint64_t dropped = 0, off, len, other = 0;
    static const uint64_t far[] = { 70, 30, 60, 40, 50, 20, 75 };
    uint8_t *buf = malloc(1 << 20);
    size_t got;
    int bad = 0;

    REQUIRE(ino != 0 && big_ino != 0 && buf != NULL);
    REQUIRE(pqv_mount_file_open(m, ino, &f) == 0);
    CHECK_EQ_INT(pqv_mount_read_behind(f, 1, &off, &len), 0);
    CHECK_EQ_INT(pqv_mount_read_behind(NULL, 1, &off, &len), 0);
    CHECK_EQ_INT(pqv_mount_read_behind(f, 1, NULL, &len), 0);
    /* Up to MOUNT_DROP_BEHIND + MOUNT_DROP_STEP in, nothing; then parts. */
    CHECK_EQ_INT(read_through(f, 1, 0, MOUNT_DROP_BEHIND + MOUNT_DROP_STEP - (1u << 20), 1u << 20,
        &dropped, buf), 0);
    CHECK(dropped == 0);
    CHECK_EQ_INT(read_through(f, 1, MOUNT_DROP_BEHIND + MOUNT_DROP_STEP - (1u << 20), LONG_BYTES,
        1u << 20, &dropped, buf), 0);
    CHECK(dropped >= LONG_BYTES - MOUNT_DROP_BEHIND - MOUNT_DROP_STEP);
    CHECK_EQ_INT(pqv_mount_read_behind(f, 1, &off, &len), 0);
    /* A reader at random (each read far from the last): nothing. */
    for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
        if (pqv_mount_read_as(f, 2, buf, 4096, far[i] << 20, &got) != 0 || got != 4096 ||
            !long_matches(buf, far[i] << 20, got))
            bad++;
        bad += pqv_mount_read_behind(f, 2, &off, &len);
    }
    CHECK_EQ_INT(bad, 0);
    pqv_mount_file_close(f);
    /* Another reader of the same open file, reading lately, holds back
     * what is near it (10 MiB in: nothing) until it has not read for
     * MOUNT_DROP_ACTIVE of the file's ticks. */
    REQUIRE(pqv_mount_file_open(m, ino, &g) == 0);
    dropped = 0;
    CHECK_EQ_INT(read_through(g, 3, 0, 10u << 20, 1u << 20, &other, buf), 0);
    CHECK_EQ_INT(read_through(g, 4, 0, 60u << 20, 1u << 20, &dropped, buf), 0);
    CHECK(dropped == 0 && other == 0);
    CHECK_EQ_INT(read_through(g, 4, 60u << 20, LONG_BYTES, 64u << 10, &dropped, buf), 0);
    CHECK(dropped >= LONG_BYTES - MOUNT_DROP_BEHIND - MOUNT_DROP_STEP);
    pqv_mount_file_close(g);
    /* A file under MOUNT_DROP_MIN_FILE (t/big, 20 MiB): nothing. */
    REQUIRE(pqv_mount_file_open(m, big_ino, &h) == 0);
    for (uint64_t pos = 0; pos < BIG_BYTES; pos += 1u << 20) {
        if (pqv_mount_read_as(h, 1, buf, 1u << 20, pos, &got) != 0 || got != 1u << 20 ||
            memcmp(buf, big + pos, got) != 0)
            bad++;
        bad += pqv_mount_read_behind(h, 1, &off, &len);
    }
    CHECK_EQ_INT(bad, 0);
    pqv_mount_file_close(h);
    free(buf);
    close_view(m);
}

TEST_MAIN(test_kept_files, test_locked_pool, test_read_once, test_walk_ahead, test_walk_second_chunk, test_walk_depth_first,
    test_walk_listed,
    test_offers, test_offer_copies, test_remote_prefetch, test_remote_walk, test_read_behind)
