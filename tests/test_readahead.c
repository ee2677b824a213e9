/*
 * test_readahead.c: reads of packs coalesced over a remote storage
 * (src/vault/readahead.c).  A storage of blobs in memory, counting its
 * requests and failing those it is told to: small reads in order come
 * from a few windows, never past a blob's end; reads out of order, large
 * reads and a local storage go alone; a window that fails to load leaves
 * the read its own answer; readers on two threads get their bytes; reads
 * that went alone are kept, bounded; planned reads come in windows over
 * exactly what the plan still has to read, announced ones too.  Then a
 * vault over a local directory that says it is remote: a tree of 300
 * small files restored byte-exact in about one request (the restore's
 * plan), restored again with --skip-existing reading only the files
 * missing (through storage_wrap.h), and a file of 24 MiB, into a tree and
 * to a stream, one request for each run of its chunks stored one after
 * the other (pack.c's pack_read_run), not one per chunk.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "storage_wrap.h"
#include "pqvault/aead.h"
#include "pqvault/recovery.h"
#include "pqvault/storage.h"
#include "pqvault/vault.h"
#include "vault/readahead.h"
#include "vault_fixture.h"

/* ---- a storage of two blobs in memory ---- */

#define BLOB_BYTES (6u << 20)

static struct {
    pqv_storage base;
    uint8_t *blob[2];
    uint64_t size[2];
    pthread_mutex_t lock;
    unsigned ranges, stats, bad_ranges;
    uint64_t bytes;              /* asked for by ranged reads */
    size_t fail_over;            /* ranged reads longer than this fail (0: none) */
} mem;

static int
blob_of(const char *name)
{
    return strcmp(name, "packs/a") == 0 ? 0 : strcmp(name, "packs/b") == 0 ? 1 : -1;
}

static int
m_get_range(pqv_storage *s, const char *name, uint64_t off, uint8_t *buf, size_t len)
{
    int k = blob_of(name), fail;

    (void)s;
    pthread_mutex_lock(&mem.lock);
    mem.ranges++;
    mem.bytes += len;
    fail = mem.fail_over != 0 && len > mem.fail_over;
    if (k >= 0 && (off > mem.size[k] || len > mem.size[k] - off))
        mem.bad_ranges++;
    pthread_mutex_unlock(&mem.lock);
    if (k < 0)
        return PQV_E_NOTFOUND;
    if (off > mem.size[k] || len > mem.size[k] - off)
        return PQV_E_INTEGRITY;
    if (fail)
        return PQV_E_IO;
    memcpy(buf, mem.blob[k] + off, len);
    return 0;
}

static int
m_stat(pqv_storage *s, const char *name, uint64_t *size)
{
    int k = blob_of(name);

    (void)s;
    pthread_mutex_lock(&mem.lock);
    mem.stats++;
    pthread_mutex_unlock(&mem.lock);
    if (k < 0)
        return PQV_E_NOTFOUND;
    *size = mem.size[k];
    return 0;
}

static const struct pqv_storage_ops remote_ops = {
    .version = PQV_STORAGE_OPS_VERSION, .get_range = m_get_range, .stat = m_stat,
    .flags = PQV_STORAGE_REMOTE,
};
static const struct pqv_storage_ops local_ops = {
    .version = PQV_STORAGE_OPS_VERSION, .get_range = m_get_range, .stat = m_stat,
};

static void
mem_setup(void)
{
    static int made;

    if (!made) {
        pthread_mutex_init(&mem.lock, NULL);
        for (int k = 0; k < 2; k++) {
            mem.size[k] = BLOB_BYTES - (uint64_t)k * 12345;
            SETUP((mem.blob[k] = malloc(mem.size[k])) != NULL);
            for (uint64_t i = 0; i < mem.size[k]; i++)
                mem.blob[k][i] = (uint8_t)((i * 2654435761u) >> (13 + k));
        }
        made = 1;
    }
    mem.base.ops = &remote_ops;
    mem.ranges = mem.stats = mem.bad_ranges = 0;
    mem.bytes = 0;
    mem.fail_over = 0;
}

/* The chunks of a pack: lengths of 100 B to 40 KiB, one after another. */
#define NCHUNKS 600

static uint64_t chunk_off[NCHUNKS];
static size_t chunk_len[NCHUNKS];
static unsigned nchunks;

static void
make_chunks(uint64_t size)
{
    uint64_t at = 8, h = 88172645463325252ull;

    nchunks = 0;
    while (nchunks < NCHUNKS) {
        h ^= h << 13, h ^= h >> 7, h ^= h << 17;
        size_t len = 100 + (size_t)(h % (40u << 10));
        if (at + len > size)
            break;
        chunk_off[nchunks] = at;
        chunk_len[nchunks++] = len;
        at += len;
    }
}

/* read_check(ra, name, k, off, len): one read through ${ra}, its bytes
 * checked against the blob's. */
static int
read_check(struct readahead *ra, const char *name, int k, uint64_t off, size_t len)
{
    uint8_t *buf = malloc(len);
    int rc;

    if (buf == NULL)
        return -1;
    rc = readahead_get_range(ra, &mem.base, name, off, buf, len);
    if (rc == 0 && memcmp(buf, mem.blob[k] + off, len) != 0)
        rc = -2;
    free(buf);
    return rc;
}

/* A pack's chunks read in order: a few requests, every byte right, no
 * range past the blob's end (the last window stops there). */
static void
test_in_order_coalesced(void)
{
    uint64_t requests, served;
    struct readahead *ra;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[0]);
    REQUIRE(nchunks > 100);
    for (unsigned i = 0; i < nchunks; i++)
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
    /* The whole blob: at most its size in 4 MiB windows after 256 KiB,
     * 512 KiB, 1, 2 MiB, and the first read. */
    CHECK(mem.ranges <= 10);
    CHECK_EQ_INT(mem.stats, 1);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    readahead_counts(ra, &requests, &served);
    CHECK_EQ_INT(requests + 1, mem.ranges);
    CHECK_EQ_INT(served, nchunks - mem.ranges);
    /* The blob's end read again: from a window, or alone, never past it. */
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, mem.size[0] - 10, 10), 0);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    readahead_free(ra);
}

/* Chunks skipped (files not restored), a gap of up to 64 KiB: still in
 * order; a jump further, or back, is read alone and starts over. */
static void
test_gaps_and_jumps(void)
{
    struct readahead *ra;
    unsigned before;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[1]);
    for (unsigned i = 0; i < nchunks; i += 2)
        CHECK_EQ_INT(read_check(ra, "packs/b", 1, chunk_off[i], chunk_len[i]), 0);
    CHECK(mem.ranges <= 12);
    readahead_free(ra);
    /* Places far apart, each further back: each alone. */
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    before = mem.ranges;
    for (unsigned i = 0; i < 20; i++)
        CHECK_EQ_INT(read_check(ra, "packs/b", 1, (uint64_t)(19 - i) * 300000 + 7, 1000), 0);
    CHECK_EQ_INT(mem.ranges - before, 20);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    readahead_free(ra);
}

/* Two walkers on one pack, turn about (a restore's workers, each on its
 * own files): each its own stream, both coalesced (a stream per pack
 * made every read of both alone). */
static void
test_two_walkers(void)
{
    struct readahead *ra;
    unsigned half;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[0]);
    half = nchunks / 2;
    for (unsigned i = 0; i < half; i++) {
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[half + i], chunk_len[half + i]), 0);
    }
    /* Each half (about 3 MiB): its first read, then windows of 256 KiB,
     * 512 KiB, 1, 2 and 4 MiB at most. */
    if (mem.ranges > 14)
        fprintf(stderr, "  %u requests for %u chunks\n", mem.ranges, 2 * half);
    CHECK(mem.ranges <= 14);
    CHECK_EQ_INT(mem.stats, 1);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    readahead_free(ra);
}

/* Large reads go alone and do not break a stream; a storage that is not
 * remote gets no read-ahead at all. */
static void
test_large_and_local(void)
{
    struct readahead *ra;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 8, 1000), 0);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 1008, READAHEAD_SMALL), 0);
    CHECK_EQ_INT(mem.ranges, 2);
    /* The next small one follows the large one on: a window. */
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 1008 + READAHEAD_SMALL, 500), 0);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 1508 + READAHEAD_SMALL, 500), 0);
    CHECK_EQ_INT(mem.ranges, 3);
    readahead_free(ra);

    mem.base.ops = &local_ops;
    CHECK(readahead_new(&mem.base) == NULL);
    /* (NULL: every read straight to the storage.) */
    mem.ranges = 0;
    CHECK_EQ_INT(read_check(NULL, "packs/a", 0, 8, 100), 0);
    CHECK_EQ_INT(read_check(NULL, "packs/a", 0, 108, 100), 0);
    CHECK_EQ_INT(mem.ranges, 2);
}

/* A window the storage fails to give: each read still gets its bytes (or
 * the storage's own error for it), nothing served from a failed window. */
static void
test_failed_window(void)
{
    uint64_t requests, served;
    struct readahead *ra;

    mem_setup();
    mem.fail_over = 64u << 10;   /* windows fail, chunks alone do not */
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[0]);
    for (unsigned i = 0; i < 50; i++)
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
    readahead_counts(ra, &requests, &served);
    CHECK_EQ_INT(requests, 0);
    CHECK_EQ_INT(served, 0);
    /* A blob that is not there: the storage's answer. */
    {
        uint8_t b[16];
        CHECK_EQ_INT(readahead_get_range(ra, &mem.base, "packs/none", 0, b, sizeof(b)),
            PQV_E_NOTFOUND);
        CHECK_EQ_INT(readahead_get_range(ra, &mem.base, "packs/none", 16, b, sizeof(b)),
            PQV_E_NOTFOUND);
    }
    /* Past the blob's end: the storage's answer, not a short window. */
    mem.fail_over = 0;
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[50], chunk_len[50]), 0);
    {
        uint8_t b[64];
        CHECK_EQ_INT(readahead_get_range(ra, &mem.base, "packs/a",
            chunk_off[50] + chunk_len[50], b, sizeof(b)), 0);
        CHECK_EQ_INT(readahead_get_range(ra, &mem.base, "packs/a", mem.size[0] - 10, b,
            sizeof(b)), PQV_E_INTEGRITY);
    }
    readahead_free(ra);
}

/* Two threads reading a pack's chunks turn about (as a restore's
 * workers do), and a third reading the other pack: every byte right. */
struct reader {
    struct readahead *ra;
    const char *name;
    int k;
    unsigned first, step;
    int bad;
};

static void *
reader_run(void *arg)
{
    struct reader *r = arg;

    for (unsigned round = 0; round < 3; round++)
        for (unsigned i = r->first; i < nchunks; i += r->step)
            if (read_check(r->ra, r->name, r->k, chunk_off[i], chunk_len[i]) != 0)
                r->bad++;
    return NULL;
}

/* three_readers(ra): two threads reading packs/a's chunks turn about, a
 * third packs/b's, three rounds each; every byte right. */
static void
three_readers(struct readahead *ra)
{
    struct reader r[3] = {
        { ra, "packs/a", 0, 0, 2, 0 }, { ra, "packs/a", 0, 1, 2, 0 }, { ra, "packs/b", 1, 0, 1, 0 },
    };
    pthread_t t[3];

    for (int i = 0; i < 3; i++)
        REQUIRE(pthread_create(&t[i], NULL, reader_run, &r[i]) == 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(r[i].bad, 0);
    CHECK_EQ_INT(mem.bad_ranges, 0);
}

static void
test_threads(void)
{
    struct readahead *ra;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[1]);
    three_readers(ra);
    /* (How many requests they take depends on how the threads are
     * scheduled: two far apart on one pack read alone, turn about; the
     * coalescing itself is asserted single-threaded above.) */
    readahead_free(ra);
}

/* Reads that went alone are kept: read again (or a part of one), they
 * need no request; a large one only from its second read on (a mount's
 * sequential reader reads each chunk once: copying each would be for
 * nothing); a failed read is not kept; what is kept is bounded (the
 * first read, after 20 MiB of others kept, is a request again). */
static void
test_recent_reads(void)
{
    struct readahead *ra;
    unsigned before;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    CHECK_EQ_INT(read_check(ra, "packs/b", 1, 4000000, 892), 0);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 3000000, 436353), 0);
    CHECK_EQ_INT(mem.ranges, 2);
    CHECK_EQ_INT(read_check(ra, "packs/b", 1, 4000000, 892), 0);     /* kept */
    CHECK_EQ_INT(mem.ranges, 2);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 3000000, 436353), 0);  /* seen: kept now */
    CHECK_EQ_INT(mem.ranges, 3);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 3000000, 436353), 0);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 3000100, 1000), 0);    /* a part */
    CHECK_EQ_INT(mem.ranges, 3);
    CHECK_EQ_INT(read_check(ra, "packs/b", 1, 3000000, 436353), 0);  /* another blob */
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 3000000, 436354), 0);  /* a byte more */
    CHECK_EQ_INT(mem.ranges, 5);
    /* A failed read is not kept: asked again, it is a request again. */
    mem.fail_over = 300000;
    before = mem.ranges;
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 1000000, 400000), PQV_E_IO);
    mem.fail_over = 0;
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 1000000, 400000), 0);
    CHECK_EQ_INT(mem.ranges - before, 2);
    /* 40 reads of 512 KiB, each twice (kept the second time): 80
     * requests; the first small read after them is one too (20 MiB kept
     * since, 8 MiB at most), the last large one is served. */
    before = mem.ranges;
    for (unsigned k = 0; k < 40; k++)
        for (int twice = 0; twice < 2; twice++)
            CHECK_EQ_INT(read_check(ra, "packs/a", 0, (uint64_t)k * 100000 + 17, 512u << 10),
                0);
    CHECK_EQ_INT(mem.ranges - before, 80);
    CHECK_EQ_INT(read_check(ra, "packs/b", 1, 4000000, 892), 0);
    CHECK_EQ_INT(mem.ranges - before, 81);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, 39 * 100000 + 17, 512u << 10), 0);
    CHECK_EQ_INT(mem.ranges - before, 81);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    readahead_free(ra);
}

/* plan_chunks(ra, first, end, step, times): chunks [first, end), every
 * ${step}th, of packs/a announced ${times} times each, the plan set. */
static void
plan_chunks(struct readahead *ra, unsigned first, unsigned end, unsigned step, unsigned times)
{
    struct readahead_plan *p = readahead_plan_new();

    SETUP(p != NULL);
    for (unsigned i = first; i < end; i += step)
        for (unsigned t = 0; t < times; t++)
            SETUP(readahead_plan_add(p, "packs/a", chunk_off[i], chunk_len[i]) == 0);
    readahead_plan_set(ra, p);
}

/* A plan of a pack's chunks, read in order: windows of 4 MiB from the
 * first read on (no first read alone, no small windows, no size asked),
 * every byte right, nothing past the blob's end; once all are read the
 * windows are gone (a chunk read again is a request). */
static void
test_plan_in_order(void)
{
    uint64_t planned = 0;
    struct readahead *ra;
    unsigned before;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[0]);
    plan_chunks(ra, 0, nchunks, 1, 1);
    for (unsigned i = 0; i < nchunks; i++) {
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
        planned += chunk_len[i];
    }
    /* (About 6 MiB: two windows; three if a chunk straddles 4 MiB.) */
    if (mem.ranges > 3)
        fprintf(stderr, "  %u requests for %u planned chunks\n", mem.ranges, nchunks);
    CHECK(mem.ranges >= 2 && mem.ranges <= 3);
    CHECK_EQ_INT(mem.stats, 0);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    CHECK(mem.bytes == planned);
    before = mem.ranges;
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[5], chunk_len[5]), 0);
    CHECK_EQ_INT(mem.ranges - before, 1);
    /* A plan set to none: reads go as before (a stream, its size asked). */
    readahead_plan_set(ra, NULL);
    before = mem.ranges;
    for (unsigned i = 10; i < 20; i++)
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
    CHECK_EQ_INT(mem.stats, 1);
    CHECK(mem.ranges - before >= 2);
    readahead_free(ra);
}

/* Windows reach only over what the plan still has to read: a gap of
 * unplanned chunks over 64 KiB ends a window, chunks already read are not
 * fetched again, and a blob not in the plan is read as before. */
static void
test_plan_only_planned(void)
{
    uint64_t planned = 0;
    struct readahead *ra;
    unsigned before;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[0]);
    REQUIRE(nchunks > 300);
    /* Chunks 0-49 and 250-299 planned; what lies between is over 64 KiB. */
    {
        struct readahead_plan *p = readahead_plan_new();
        REQUIRE(p != NULL);
        for (unsigned i = 0; i < 300; i++)
            if (i < 50 || i >= 250) {
                SETUP(readahead_plan_add(p, "packs/a", chunk_off[i], chunk_len[i]) == 0);
                planned += chunk_len[i];
            }
        readahead_plan_set(ra, p);
    }
    REQUIRE(chunk_off[250] - (chunk_off[49] + chunk_len[49]) > READAHEAD_GAP);
    for (unsigned i = 0; i < 50; i++)
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
    CHECK_EQ_INT(mem.ranges, 1);
    for (unsigned i = 250; i < 300; i++)
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
    CHECK_EQ_INT(mem.ranges, 2);
    CHECK(mem.bytes == planned);
    /* Chunk 260 after them all: alone (the plan's reads around it made). */
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[260], chunk_len[260]), 0);
    CHECK_EQ_INT(mem.ranges, 3);
    CHECK(mem.bytes == planned + chunk_len[260]);
    /* The other blob, unplanned: a stream, its size asked. */
    before = mem.ranges;
    for (unsigned i = 0; i < 10; i++)
        CHECK_EQ_INT(read_check(ra, "packs/b", 1, chunk_off[i], chunk_len[i]), 0);
    CHECK_EQ_INT(mem.stats, 1);
    CHECK(mem.ranges - before >= 2);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    readahead_free(ra);
}

/* A chunk announced twice (two files share it): its window stays until
 * its second read, made after every other, which then costs nothing. */
static void
test_plan_shared_chunk(void)
{
    struct readahead_plan *p;
    struct readahead *ra;
    unsigned before;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[0]);
    REQUIRE((p = readahead_plan_new()) != NULL);
    for (unsigned i = 0; i < 40; i++)
        SETUP(readahead_plan_add(p, "packs/a", chunk_off[i], chunk_len[i]) == 0);
    SETUP(readahead_plan_add(p, "packs/a", chunk_off[3], chunk_len[3]) == 0);
    readahead_plan_set(ra, p);
    for (unsigned i = 0; i < 40; i++)
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
    before = mem.ranges;
    CHECK_EQ_INT(before, 1);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[3], chunk_len[3]), 0);
    CHECK_EQ_INT(mem.ranges, before);
    /* Its last read made: the window is gone. */
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[7], chunk_len[7]), 0);
    CHECK_EQ_INT(mem.ranges, before + 1);
    readahead_free(ra);
}

/* A planned window the storage fails to give: each read gets its bytes
 * alone; a planned read past the blob's end gets the storage's answer;
 * what a plan refuses. */
static void
test_plan_failures(void)
{
    struct readahead_plan *p;
    struct readahead *ra;
    uint8_t b[64];
    char longname[200];

    mem_setup();
    mem.fail_over = 64u << 10;
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[0]);
    plan_chunks(ra, 0, 50, 1, 1);
    for (unsigned i = 0; i < 50; i++)
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    mem.fail_over = 0;
    REQUIRE((p = readahead_plan_new()) != NULL);
    SETUP(readahead_plan_add(p, "packs/a", mem.size[0] - 10, sizeof(b)) == 0);
    SETUP(readahead_plan_add(p, "packs/a", mem.size[0] + 100, sizeof(b)) == 0);
    SETUP(readahead_plan_add(p, "packs/none", 0, sizeof(b)) == 0);
    SETUP(readahead_plan_add(p, "packs/none", 64, sizeof(b)) == 0);
    readahead_plan_set(ra, p);
    CHECK_EQ_INT(readahead_get_range(ra, &mem.base, "packs/a", mem.size[0] - 10, b, sizeof(b)),
        PQV_E_INTEGRITY);
    CHECK_EQ_INT(readahead_get_range(ra, &mem.base, "packs/none", 0, b, sizeof(b)),
        PQV_E_NOTFOUND);
    /* What a plan refuses, keeping what it had. */
    REQUIRE((p = readahead_plan_new()) != NULL);
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    CHECK_EQ_INT(readahead_plan_add(p, longname, 0, 10), PQV_E_INVAL);
    CHECK_EQ_INT(readahead_plan_add(p, "packs/a", 0, 0), PQV_E_INVAL);
    CHECK_EQ_INT(readahead_plan_add(p, "packs/a", UINT64_MAX - 100, 10), PQV_E_INVAL);
    CHECK_EQ_INT(readahead_plan_add(p, "packs/a", 8, 10), 0);
    readahead_plan_set(NULL, p); /* (freed) */
    readahead_free(ra);
}

/* Two threads reading planned chunks turn about, a third the other
 * pack unplanned: every byte right. */
static void
test_plan_threads(void)
{
    struct readahead *ra;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[1]);
    plan_chunks(ra, 0, nchunks, 1, 3);
    three_readers(ra);
    readahead_free(ra);
}

/* Reads announced while reads go on (a mount's prefetch of a large
 * file's next chunks): those announced together come in one window, no
 * size asked; a read with nothing announced after it goes by streams as
 * before; past READAHEAD_EXPECT_MAX announcements the oldest never made
 * are forgotten (read, they go unplanned) and the newest still count. */
static void
test_expect_live(void)
{
    struct readahead *ra;
    unsigned before;

    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    make_chunks(mem.size[0]);
    CHECK_EQ_INT(readahead_plan_expect(NULL, "packs/a", 8, 10), 0);
    for (unsigned i = 0; i < 16; i++)
        SETUP(readahead_plan_expect(ra, "packs/a", chunk_off[i], chunk_len[i]) == 0);
    for (unsigned i = 0; i < 16; i++)
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
    CHECK_EQ_INT(mem.ranges, 1);
    CHECK_EQ_INT(mem.stats, 0);
    /* The next 16, announced as the first were read: one more window. */
    for (unsigned i = 16; i < 32; i++)
        SETUP(readahead_plan_expect(ra, "packs/a", chunk_off[i], chunk_len[i]) == 0);
    for (unsigned i = 16; i < 32; i++)
        CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[i], chunk_len[i]), 0);
    CHECK_EQ_INT(mem.ranges, 2);
    /* Announced alone, then read: as unplanned (alone, then a stream's
     * window, its size asked). */
    SETUP(readahead_plan_expect(ra, "packs/a", chunk_off[100], chunk_len[100]) == 0);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[100], chunk_len[100]), 0);
    CHECK_EQ_INT(read_check(ra, "packs/a", 0, chunk_off[101], chunk_len[101]), 0);
    CHECK_EQ_INT(mem.ranges, 4);
    CHECK_EQ_INT(mem.stats, 1);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    readahead_free(ra);

    /* Many announced, never read: the oldest forgotten, the newest kept. */
    mem_setup();
    REQUIRE((ra = readahead_new(&mem.base)) != NULL);
    for (unsigned i = 0; i < READAHEAD_EXPECT_MAX + 100; i++)
        SETUP(readahead_plan_expect(ra, "packs/b", 8 + (uint64_t)i * 64, 64) == 0);
    /* The two oldest, read: unplanned (alone, then a window of a stream). */
    CHECK_EQ_INT(read_check(ra, "packs/b", 1, 8, 64), 0);
    CHECK_EQ_INT(read_check(ra, "packs/b", 1, 72, 64), 0);
    CHECK_EQ_INT(mem.stats, 1);
    /* The newest 40, in order: planned, one window, nothing asked. */
    before = mem.ranges;
    for (unsigned i = READAHEAD_EXPECT_MAX + 60; i < READAHEAD_EXPECT_MAX + 100; i++)
        CHECK_EQ_INT(read_check(ra, "packs/b", 1, 8 + (uint64_t)i * 64, 64), 0);
    CHECK_EQ_INT(mem.ranges - before, 1);
    CHECK_EQ_INT(mem.stats, 1);
    CHECK_EQ_INT(mem.bad_ranges, 0);
    CHECK_EQ_INT(readahead_plan_expect(ra, "packs/b", 0, 0), PQV_E_INVAL);
    readahead_free(ra);
}

/* ---- a vault over a local directory that says it is remote ---- */

static const struct pqv_kdf_params cheap = { 1, 256, 1 };
static const char pass[] = "correct horse";
static char dir[64];

static struct sw_storage counted;
static unsigned pack_ranges;
static uint64_t pack_bytes;

static void
count_pack_reads(struct sw_storage *w, const char *name)
{
    (void)w;
    if (strncmp(name, "packs/", 6) == 0)
        __atomic_add_fetch(&pack_ranges, 1, __ATOMIC_RELAXED);
}

static void
count_pack_bytes(struct sw_storage *w, const char *name, size_t bytes)
{
    (void)w;
    if (strncmp(name, "packs/", 6) == 0)
        __atomic_add_fetch(&pack_bytes, bytes, __ATOMIC_RELAXED);
}

#define TREE_FILES 300

static void
remove_dir(void)
{
    char cmd[128];

    if (dir[0] != '\0' && getenv("PQV_KEEP") == NULL) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", dir);
    }
}

/* file_bytes(i, buf): file ${i}'s contents (incompressible, 200 B to 12 KiB). */
static size_t
file_bytes(unsigned i, uint8_t *buf)
{
    uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;
    size_t len = 200 + (size_t)(h % 12000);

    for (size_t k = 0; k < len; k++) {
        h ^= h << 13, h ^= h >> 7, h ^= h << 17;
        buf[k] = (uint8_t)h;
    }
    return len;
}

/* counted_vault(vdir, from, name): a vault created in ${vdir} holding
 * ${from} as ${name}, added through the counting storage that says it is
 * remote; the local storage under it returned (to close). */
static pqv_storage *
counted_vault(const char *vdir, const char *from, const char *name)
{
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", PQV_AEAD_AES256GCM, &cheap,
        0, NULL, NULL, NULL, 0 };
    char recovery[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS];
    pqv_storage *inner;
    pqv_vault *v;

    SETUP(pqv_vault_create(vdir, NULL, (const uint8_t *)pass, strlen(pass), &opt, recovery,
        fp) == 0);
    SETUP(pqv_storage_local_open(&inner, vdir, 0) == 0);
    sw_init(&counted, inner, 1);
    counted.before = count_pack_reads;
    counted.after = count_pack_bytes;
    SETUP(vf_open_vault(&counted.base, NULL, pass, &v, 1) == 0);
    SETUP(pqv_vault_add_path(v, from, name, NULL) == 0);
    pqv_vault_close(v);
    return inner;
}

static void
test_vault_restore_coalesced(void)
{
    char path[200], src[96], vdir[96], out[96];
    static uint8_t buf[16384];
    pqv_storage *inner;
    pqv_vault *v;
    size_t len, n;
    unsigned bad = 0;

    snprintf(dir, sizeof(dir), "/tmp/pqvra.XXXXXX");
    SETUP(mkdtemp(dir) != NULL);
    atexit(remove_dir);
    snprintf(src, sizeof(src), "%s/src", dir);
    snprintf(vdir, sizeof(vdir), "%s/v", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    SETUP(mkdir(src, 0700) == 0);
    for (unsigned d = 0; d < 10; d++) {
        snprintf(path, sizeof(path), "%s/d%u", src, d);
        SETUP(mkdir(path, 0755) == 0);
    }
    for (unsigned i = 0; i < TREE_FILES; i++) {
        snprintf(path, sizeof(path), "%s/d%u/f%03u", src, i % 10, i);
        len = file_bytes(i, buf);
        vf_write_path(path, buf, len);
    }
    /* Two more names of f007 (hard links: planned once, linked). */
    for (unsigned k = 0; k < 2; k++) {
        char target[200];
        snprintf(target, sizeof(target), "%s/d7/f007", src);
        snprintf(path, sizeof(path), "%s/d%u/link%u", src, 8 + k, k);
        SETUP(link(target, path) == 0);
    }
    inner = counted_vault(vdir, src, "t");

    REQUIRE(vf_open_vault(&counted.base, NULL, pass, &v, 0) == 0);
    pack_ranges = 0;
    CHECK_EQ_INT(pqv_vault_get(v, "t", out, NULL), 0);
    pqv_vault_close(v);
    for (unsigned i = 0; i < TREE_FILES; i++) {
        snprintf(path, sizeof(path), "%s/t/d%u/f%03u", out, i % 10, i);
        len = file_bytes(i, buf);
        if (!vf_file_holds(path, buf, len, &n))
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    {
        struct stat a, b;
        snprintf(path, sizeof(path), "%s/t/d7/f007", out);
        CHECK(stat(path, &a) == 0 && a.st_nlink == 3);
        snprintf(path, sizeof(path), "%s/t/d9/link1", out);
        CHECK(stat(path, &b) == 0 && b.st_ino == a.st_ino);
    }
    /* One ranged read a file before streams, a few windows of each pack
     * with them (5-13); with the restore's plan one or two here (the
     * tree, 2 MB, fits a window; a worker whose read comes before the
     * first window is asked starts its own, the other stopping short of
     * it): at worst one for each of the restore's threads (util/pool.c's
     * default and the restoring thread), whatever order they come in. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = cpus < 2 ? 4 : 2 * (unsigned)cpus;
    if (threads < 4)
        threads = 4;
    if (pack_ranges > 2)
        fprintf(stderr, "  %u ranged reads of packs for %u files\n", pack_ranges,
            TREE_FILES);
    CHECK(pack_ranges >= 1 && pack_ranges <= threads + 1);

    /* Ten files gone, restored again with --skip-existing: only theirs
     * read (a plan of the files skipped too had windows bring the whole
     * tree again). */
    {
        struct pqv_get_options skip = { 0 };
        uint64_t needed = 0;
        skip.skip_existing = 1;
        for (unsigned i = 0; i < TREE_FILES; i += 30) {
            snprintf(path, sizeof(path), "%s/t/d%u/f%03u", out, i % 10, i);
            SETUP(unlink(path) == 0);
            needed += file_bytes(i, buf);
        }
        REQUIRE(vf_open_vault(&counted.base, NULL, pass, &v, 0) == 0);
        pack_bytes = 0;
        CHECK_EQ_INT(pqv_vault_get(v, "t", out, &skip), 0);
        pqv_vault_close(v);
        for (unsigned i = 0; i < TREE_FILES; i += 30) {
            snprintf(path, sizeof(path), "%s/t/d%u/f%03u", out, i % 10, i);
            len = file_bytes(i, buf);
            CHECK(vf_file_holds(path, buf, len, &n));
        }
        /* Their bytes, and at most the gaps between them a window reaches
         * across (64 KiB each: they lie some 18 KB apart, so 183 KB
         * here); all 1.9 MB of the tree when the skipped files were
         * planned too. */
        if (pack_bytes > needed + 9 * READAHEAD_GAP)
            fprintf(stderr, "  %llu bytes of packs read for %llu needed\n",
                (unsigned long long)pack_bytes, (unsigned long long)needed);
        CHECK(pack_bytes >= needed && pack_bytes <= needed + 9 * READAHEAD_GAP);
    }
    inner->ops->close(inner);
}

#define BIG_BYTES (24u << 20)

/* A file of 24 MiB (some 48 chunks of 128 KiB to 2 MiB, stored one after
 * the other): restored into a tree and to a stream, byte-exact, each run
 * of its chunks in one ranged read of its pack (one per chunk before). */
static void
test_vault_big_file_runs(void)
{
    char src[96], vdir[96], out[96], path[120];
    uint8_t *big = malloc(BIG_BYTES);
    uint64_t h = 42;
    pqv_storage *inner;
    pqv_vault *v;
    unsigned tree_reads, stream_reads;
    size_t n;
    int fd;

    REQUIRE(big != NULL && dir[0] != '\0');
    for (size_t k = 0; k < BIG_BYTES; k++) {
        h ^= h << 13, h ^= h >> 7, h ^= h << 17;
        big[k] = (uint8_t)(h >> 24);
    }
    snprintf(src, sizeof(src), "%s/bigsrc", dir);
    snprintf(vdir, sizeof(vdir), "%s/v2", dir);
    snprintf(out, sizeof(out), "%s/bigout", dir);
    SETUP(mkdir(src, 0700) == 0);
    snprintf(path, sizeof(path), "%s/big", src);
    vf_write_path(path, big, BIG_BYTES);
    inner = counted_vault(vdir, path, "big");

    REQUIRE(vf_open_vault(&counted.base, NULL, pass, &v, 0) == 0);
    pack_ranges = 0;
    CHECK_EQ_INT(pqv_vault_get(v, "big", out, NULL), 0);
    tree_reads = pack_ranges;
    CHECK(vf_file_holds(out, big, BIG_BYTES, &n)); /* (a file's get names the file) */
    snprintf(path, sizeof(path), "%s/streamed", dir);
    REQUIRE((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0);
    pack_ranges = 0;
    CHECK_EQ_INT(pqv_vault_get_fd(v, "big", fd, NULL), 0);
    stream_reads = pack_ranges;
    close(fd);
    CHECK(vf_file_holds(path, big, BIG_BYTES, &n));
    pqv_vault_close(v);
    /* Runs of at most 4 MiB of plaintext, broken where a pack ends: 8
     * here, both ways (each chunk read alone, one per chunk, fails it). */
    if (tree_reads > 16 || stream_reads > 16)
        fprintf(stderr, "  %u and %u ranged reads of packs for 24 MiB\n", tree_reads,
            stream_reads);
    CHECK(tree_reads >= BIG_BYTES / PQV_OBJECT_MAX_PLAIN && tree_reads <= 16);
    CHECK(stream_reads >= BIG_BYTES / PQV_OBJECT_MAX_PLAIN && stream_reads <= 16);
    inner->ops->close(inner);
    free(big);
}

TEST_MAIN(test_in_order_coalesced, test_gaps_and_jumps, test_large_and_local,
    test_two_walkers, test_failed_window, test_threads, test_recent_reads, test_plan_in_order,
    test_plan_only_planned, test_plan_shared_chunk, test_plan_failures, test_plan_threads, test_expect_live,
    test_vault_restore_coalesced, test_vault_big_file_runs)
