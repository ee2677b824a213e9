/*
 * mount_cache.c: the mounted view's cache of decrypted chunks
 * (vault/mount_internal.h) and its prefetch threads (its locked memory
 * and read buffers: mount_memory.c; what a walk offers the kernel:
 * mount_offer.c).
 *
 * A read decrypts only the chunks (format 3) or extents (formats 1 and 2)
 * it touches, each verified whole, and keeps them in a cache of decrypted
 * chunks bounded in bytes (least recently used out first, wiped as they
 * go), keyed by what they are: a chunk by its identity, so that a chunk
 * shared by files or snapshots is decrypted once, an extent by its pack
 * and place.  The cache is also where readers meet: a chunk being read is
 * in it, LOADING, and whoever else needs it waits for it.  A sequential
 * reader has the next chunks queued for the prefetch threads (at most
 * MOUNT_PREFETCH_CHUNKS and MOUNT_PREFETCH_BYTES ahead); a reader that
 * needs a chunk still queued takes it over rather than wait behind the
 * queue.  The cache's memory is locked where the system allows it:
 * nothing decrypted is ever written to disk, swap included.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "vault/chunk.h"
#include "vault/mount_internal.h"
#include "vault/pack.h"
#include "vault/readahead.h"
#include "vault/vault_internal.h"

/* ---- the cache (m->lock held) ---- */

static size_t
bucket_of(const struct mount_cache *c, const uint8_t key[MOUNT_KEY_BYTES])
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < MOUNT_KEY_BYTES; i++)
        h = (h ^ key[i]) * 1099511628211ull;
    return (size_t)h & (c->nbuckets - 1);
}

struct mount_chunk *
mount_cache_find(const struct mount_cache *c, const uint8_t key[MOUNT_KEY_BYTES])
{
    struct mount_chunk *ce = c->buckets[bucket_of(c, key)];

    while (ce != NULL && memcmp(ce->key, key, MOUNT_KEY_BYTES) != 0)
        ce = ce->hnext;
    return ce;
}

static void
lru_unlink(struct mount_cache *c, struct mount_chunk *ce)
{
    if (ce->prev != NULL)
        ce->prev->next = ce->next;
    else
        c->head = ce->next;
    if (ce->next != NULL)
        ce->next->prev = ce->prev;
    else
        c->tail = ce->prev;
    ce->prev = ce->next = NULL;
}

static void
lru_front(struct mount_cache *c, struct mount_chunk *ce)
{
    ce->next = c->head;
    ce->prev = NULL;
    if (c->head != NULL)
        c->head->prev = ce;
    c->head = ce;
    if (c->tail == NULL)
        c->tail = ce;
}

static void
cache_insert(struct mount_cache *c, struct mount_chunk *ce)
{
    size_t b = bucket_of(c, ce->key);

    ce->hnext = c->buckets[b];
    c->buckets[b] = ce;
    lru_front(c, ce);
}

/* cache_remove(c, ce): out of the table and the list (it stays allocated). */
static void
cache_remove(struct mount_cache *c, struct mount_chunk *ce)
{
    struct mount_chunk **p = &c->buckets[bucket_of(c, ce->key)];

    while (*p != NULL && *p != ce)
        p = &(*p)->hnext;
    if (*p == ce) {
        *p = ce->hnext;
        lru_unlink(c, ce);
    }
    ce->hnext = NULL;
}

/* chunk_free(c, ce): ${ce}'s plaintext and key wiped, its memory kept or
 * given back (m->lock held). */
static void
chunk_free(struct mount_cache *c, struct mount_chunk *ce)
{
    if (ce == NULL)
        return;
    c->pending_offers -= ce->noffers;
    if (ce->data != NULL) {
        util_wipe(ce->data, ce->len);
        mount_memory_give(c, ce->data, ce->cap);
    }
    util_wipe(ce, sizeof(*ce));
    if (c->nspare_chunks < MOUNT_SPARE_CHUNKS) {
        ce->hnext = c->spare_chunks;
        c->spare_chunks = ce;
        c->nspare_chunks++;
        return;
    }
    util_unpin_memory(ce, sizeof(*ce));
    free(ce);
}

/* cache_trim(c): chunks nobody uses out, least recently used first, while
 * the cache holds more than its budget. */
static void
cache_trim(struct mount_cache *c)
{
    struct mount_chunk *ce = c->tail;

    while (c->bytes > c->budget && ce != NULL) {
        struct mount_chunk *prev = ce->prev;
        if (ce->refs == 0 && ce->state == CHUNK_READY) {
            cache_remove(c, ce);
            c->bytes -= ce->cap;
            chunk_free(c, ce);
        }
        ce = prev;
    }
}

/* ---- reading a chunk ---- */

void
mount_cache_key(const struct entry *e, uint32_t index, uint32_t segment,
    uint8_t key[MOUNT_KEY_BYTES])
{
    const struct extent *x = &e->extents[index];

    memset(key, 0, MOUNT_KEY_BYTES);
    if (x->chunk) {
        key[0] = segment == MOUNT_WHOLE ? 'C' : 'S';
        memcpy(key + 1, x->chunk_id, CHUNK_ID_BYTES);
        if (segment != MOUNT_WHOLE)
            util_store_be32(key + 1 + CHUNK_ID_BYTES, segment);
    } else {
        key[0] = 'X';
        memcpy(key + 1, x->pack_id, PACK_ID_BYTES);
        util_store_be32(key + 1 + PACK_ID_BYTES, x->pack_off);
        util_store_be32(key + 5 + PACK_ID_BYTES, index);
        key[9 + PACK_ID_BYTES] = x->pack_flags;
    }
}

/* mount_cache_segment_len(x, segment): the plaintext bytes of that segment of ${x}. */
uint32_t
mount_cache_segment_len(const struct extent *x, uint32_t segment)
{
    uint64_t base = (uint64_t)segment * PQV_STREAM_SEGMENT_BYTES;

    return base >= x->plain_len ? 0
        : x->plain_len - base < PQV_STREAM_SEGMENT_BYTES ? (uint32_t)(x->plain_len - base)
                                                         : PQV_STREAM_SEGMENT_BYTES;
}

/* chunk_new(c, e, index, segment, key): a LOADING chunk (or segment of
 * one) of ${e} with what reading it takes (m->lock held). */
static struct mount_chunk *
chunk_new(struct mount_cache *c, const struct entry *e, uint32_t index,
    uint32_t segment, const uint8_t key[MOUNT_KEY_BYTES])
{
    struct mount_chunk *ce = c->spare_chunks;

    if (ce != NULL) {
        c->spare_chunks = ce->hnext;
        c->nspare_chunks--;
        ce->hnext = NULL;
    } else if ((ce = calloc(1, sizeof(*ce))) != NULL) {
        util_pin_memory(ce, sizeof(*ce));
    } else {
        return NULL;
    }
    memcpy(ce->key, key, MOUNT_KEY_BYTES);
    ce->state = CHUNK_LOADING;
    ce->refs = 1;
    ce->suite = e->suite;
    ce->index = index;
    ce->segment = segment;
    ce->base = segment == MOUNT_WHOLE ? 0 : segment * PQV_STREAM_SEGMENT_BYTES;
    ce->x = e->extents[index];
    if (!ce->x.chunk)
        memcpy(ce->file_key, e->key, sizeof(ce->file_key));
    return ce;
}

/* chunk_fill(m, ce): read and open ${ce} (m->lock not held). */
static int
chunk_fill(struct pqv_mount *m, struct mount_chunk *ce)
{
    struct mount_buffers own = { NULL, NULL, NULL }, *b;
    uint32_t len = ce->segment == MOUNT_WHOLE ? ce->x.plain_len : mount_cache_segment_len(&ce->x, ce->segment);
    /* A segment, or a small chunk (a small file's), reads into buffers of
     * its own size: a pooled pair is 8 MiB, its scratch locked and so all
     * resident, which many FUSE workers reading small files at once would
     * each hold. */
    int small = ce->x.chunk && (ce->segment != MOUNT_WHOLE || ce->x.stored_len <= MOUNT_SMALL_READ);
    int zstd = ce->segment == MOUNT_WHOLE && (!ce->x.chunk || (ce->x.flags & BLOB_ZSTD) != 0);
    size_t scratch_len = 0;
    uint32_t cap = 0, scratch_cap = 0;
    uint8_t *data;
    size_t got = 0;
    int rc;

    if (len == 0 || len > PQV_OBJECT_MAX_PLAIN)
        return error_set(PQV_E_INTEGRITY, NULL, "extent %u has an impossible length", ce->index);
    if ((data = mount_memory_get(m, len, &cap)) == NULL)
        return PQV_E_NOMEM;
    if (small) {
        b = &own;
        scratch_len = zstd ? chunk_scratch_size(len) : 0;
        own.sealed = ce->segment != MOUNT_WHOLE ? mount_memory_segbuf_get(m)
                                                : malloc((size_t)ce->x.stored_len + 1);
        if (own.sealed != NULL && zstd)
            own.scratch = mount_memory_get(m, scratch_len, &scratch_cap);
        if (own.sealed == NULL || (zstd && own.scratch == NULL)) {
            free(own.sealed);
            b = NULL;
        }
    } else {
        b = mount_memory_buffers_get(m, zstd);
    }
    if (b == NULL) {
        mount_memory_put(m, data, cap);
        return PQV_E_NOMEM;
    }
    if (ce->segment != MOUNT_WHOLE) {
        rc = pack_read_chunk_segments(m->v, ce->index, &ce->x, ce->segment, 1, data, b->sealed,
            &got);
        if (rc == 0 && got != len) {
            util_wipe(data, got);
            rc = error_set(PQV_E_INTEGRITY, NULL, "chunk %u: segment %u has the wrong length",
                ce->index, ce->segment);
        }
    } else {
        rc = pack_read_extent(m->v, ce->suite, ce->file_key, ce->index, &ce->x, data, b->sealed,
            b->scratch);
        /* The scratch held the compressed plaintext. */
        if (b->scratch != NULL && !small)
            util_wipe(b->scratch, ce->x.stored_len < pack_scratch_size() ? ce->x.stored_len
                                                                          : pack_scratch_size());
    }
    util_wipe(ce->file_key, sizeof(ce->file_key));
    if (small) {
        if (own.scratch != NULL) {
            util_wipe(own.scratch, scratch_len);
            mount_memory_put(m, own.scratch, scratch_cap);
        }
        if (ce->segment != MOUNT_WHOLE)
            mount_memory_segbuf_put(m, own.sealed);
        else
            free(own.sealed);
    } else {
        mount_memory_buffers_put(m, b);
    }
    if (rc != 0) {
        util_wipe(data, len);
        mount_memory_put(m, data, cap);
        return rc;
    }
    ce->data = data;
    ce->len = len;
    ce->cap = cap;
    return 0;
}

/* chunk_done(m, ce, rc): ${ce} read (m->lock held): ready, or failed and
 * out of the cache (the next reader tries again). */
static void
chunk_done(struct pqv_mount *m, struct mount_chunk *ce, int rc)
{
    if (rc == 0) {
        ce->state = CHUNK_READY;
        m->cache.bytes += ce->cap;
        m->cache.bytes_opened += ce->len;
        cache_trim(&m->cache);
    } else {
        ce->state = CHUNK_FAILED;
        ce->rc = rc;
        error_save(&ce->error);
        cache_remove(&m->cache, ce);
    }
    pthread_cond_broadcast(&m->cond);
}

/* mount_cache_put(m, ce): a reference given back (m->lock held). */
void
mount_cache_put(struct pqv_mount *m, struct mount_chunk *ce)
{
    if (--ce->refs > 0)
        return;
    if (ce->state == CHUNK_FAILED) {
        chunk_free(&m->cache, ce);
    } else if (ce->state == CHUNK_READY && ce->read_whole && ce->noffers == 0) {
        cache_remove(&m->cache, ce);
        m->cache.bytes -= ce->cap;
        chunk_free(&m->cache, ce);
    }
}

/* mount_cache_served(ce, n): ${n} more bytes of ${ce} read (or in the
 * kernel's page cache); all of it: it leaves the cache once unused, unless it was asked
 * for again (m->lock held). */
void
mount_cache_served(struct mount_chunk *ce, uint64_t n)
{
    ce->served = n >= ce->len - ce->served ? ce->len : ce->served + (uint32_t)n;
    if (ce->served == ce->len && !ce->wanted_again)
        ce->read_whole = 1;
}

/* mount_cache_put_served(m, ce, n): a reference given back by a read that
 * took ${n} bytes of ${ce} (whole; m->lock held).  Once reads have taken
 * as many bytes as it holds (all of it, unless one read a part twice),
 * it leaves the cache as soon as nobody holds it (nor the prefetch
 * queue): the kernel's page cache holds those bytes now and asks for
 * them again only if it drops them.  Kept here, a walk of many small
 * files (cp -a, tar) filled the cache with chunks read once, each in
 * fresh memory locked and zeroed for it, none of it back in the pools
 * until the budget was reached.  A chunk asked for again after that
 * (another file of the same data, a read again) is kept as any other. */
void
mount_cache_put_served(struct pqv_mount *m, struct mount_chunk *ce, uint64_t n)
{
    mount_cache_served(ce, n);
    mount_cache_put(m, ce);
}

/* mount_cache_get(f, index, segment, out): extent ${index} of ${f}, decrypted
 * (whole, or only ${segment} of it unless it is cached whole), referenced
 * (chunk_put under m->lock). */
int
mount_cache_get(struct pqv_mount_file *f, uint32_t index, uint32_t segment, struct mount_chunk **out)
{
    struct pqv_mount *m = f->m;
    uint8_t key[MOUNT_KEY_BYTES];
    struct mount_chunk *ce;
    int rc, fill = 0;

    pthread_mutex_lock(&m->lock);
    if (segment != MOUNT_WHOLE) {
        mount_cache_key(&f->e, index, MOUNT_WHOLE, key);
        ce = mount_cache_find(&m->cache, key);
        if (ce != NULL && ce->state == CHUNK_READY)
            segment = MOUNT_WHOLE;
    }
    mount_cache_key(&f->e, index, segment, key);
    if ((ce = mount_cache_find(&m->cache, key)) != NULL) {
        ce->refs++;
        if (ce->read_whole) {    /* wanted again after all of it was read */
            ce->read_whole = 0;
            ce->wanted_again = 1;
        }
        if (ce->state == CHUNK_LOADING && ce->queued) {
            ce->queued = 0;      /* taken over from the prefetch queue */
            fill = 1;
        }
        while (!fill && ce->state == CHUNK_LOADING)
            pthread_cond_wait(&m->cond, &m->lock);
        if (!fill && ce->state == CHUNK_READY) {
            m->cache.hits++;
            lru_unlink(&m->cache, ce);
            lru_front(&m->cache, ce);
        }
    } else {
        if ((ce = chunk_new(&m->cache, &f->e, index, segment, key)) == NULL) {
            pthread_mutex_unlock(&m->lock);
            return PQV_E_NOMEM;
        }
        cache_insert(&m->cache, ce);
        m->cache.misses++;
        fill = 1;
    }
    pthread_mutex_unlock(&m->lock);
    if (fill) {
        rc = chunk_fill(m, ce);
        pthread_mutex_lock(&m->lock);
        chunk_done(m, ce, rc);
        pthread_mutex_unlock(&m->lock);
    }
    pthread_mutex_lock(&m->lock);
    if (ce->state != CHUNK_READY) {
        struct error_saved e = ce->error;
        rc = ce->rc;
        mount_cache_put(m, ce);
        pthread_mutex_unlock(&m->lock);
        error_restore(&e);
        return rc;
    }
    pthread_mutex_unlock(&m->lock);
    *out = ce;
    return 0;
}

int
mount_cache_queue(struct pqv_mount *m, const struct entry *e, uint32_t from, unsigned chunks,
    uint64_t max_bytes)
{
    struct mount_cache *c = &m->cache;
    char sname[STORAGE_NAME_MAX];
    uint64_t bytes = 0, off;

    for (uint32_t i = from, k = 0; i < e->nextents && k < chunks && bytes < max_bytes; i++, k++) {
        uint8_t key[MOUNT_KEY_BYTES];
        struct mount_chunk *ce;
        bytes += e->extents[i].plain_len;
        mount_cache_key(e, i, MOUNT_WHOLE, key);
        if (mount_cache_find(c, key) != NULL)
            continue;
        if (c->qlen == MOUNT_PREFETCH_QUEUE || c->nthreads == 0 ||
            (ce = chunk_new(c, e, i, MOUNT_WHOLE, key)) == NULL)
            return -1;
        ce->queued = 1;
        cache_insert(c, ce);
        c->queue[(c->qhead + c->qlen++) % MOUNT_PREFETCH_QUEUE] = ce;
        /* Over a network the read-ahead is told of a large file's next
         * chunks: queued together, they come in one window where they
         * lie together (472 requests -> 125 for a cat of 256 MiB).  Not
         * of a walk's offers, one file's first chunk at a time a few
         * files ahead: windows reaching only over those (192 KB on
         * average) took more requests than the streams' growing ones. */
        if (c->remote && chunks > 1 && pack_extent_place(&ce->x, sname, &off))
            (void)readahead_plan_expect(m->v->readahead, sname, off, ce->x.stored_len);
        mount_cache_wake(c);
    }
    return 0;
}

void
mount_cache_wake(struct mount_cache *c)
{
    /* (Each thread woken takes one chunk at least before it waits
     * again: the queued beyond the threads waiting wake none.) */
    if (c->qlen <= c->idle)
        pthread_cond_signal(&c->work);
}

void
mount_cache_queue_again(struct pqv_mount *m, const struct entry *e, uint32_t i)
{
    uint8_t key[MOUNT_KEY_BYTES];
    struct mount_chunk *ce;

    if (i >= e->nextents)
        return;
    mount_cache_key(e, i, MOUNT_WHOLE, key);
    if ((ce = mount_cache_find(&m->cache, key)) == NULL) {
        (void)mount_cache_queue(m, e, i, 1, e->extents[i].plain_len);
        return;
    }
    /* (As mount_cache_get does for a chunk asked for again.) */
    ce->read_whole = 0;
    ce->wanted_again = 1;
}

void
mount_cache_prefetch(struct pqv_mount_file *f, uint32_t from)
{
    if (f->m->cache.remote)
        (void)mount_cache_queue(f->m, &f->e, from, MOUNT_PREFETCH_CHUNKS_REMOTE,
            MOUNT_PREFETCH_BYTES_REMOTE);
    else
        (void)mount_cache_queue(f->m, &f->e, from, MOUNT_PREFETCH_CHUNKS, MOUNT_PREFETCH_BYTES);
}

static void *
prefetcher(void *arg)
{
    struct pqv_mount *m = arg;
    struct mount_cache *c = &m->cache;

    pthread_mutex_lock(&m->lock);
    for (;;) {
        struct mount_chunk *ce;
        int rc;
        while (!c->stop && c->qlen == 0) {
            c->idle++;
            pthread_cond_wait(&c->work, &m->lock);
            c->idle--;
        }
        if (c->stop)
            break;
        ce = c->queue[c->qhead];
        c->qhead = (c->qhead + 1) % MOUNT_PREFETCH_QUEUE;
        c->qlen--;
        if (!ce->queued) {
            /* A reader took it over, or it was read already: its offers
             * to make (see mount_offer_queue). */
            if (ce->state == CHUNK_READY && ce->noffers != 0)
                mount_offer_make(m, ce, 0);
            mount_cache_put(m, ce);
            continue;
        }
        ce->queued = 0;
        pthread_mutex_unlock(&m->lock);
        rc = chunk_fill(m, ce);
        pthread_mutex_lock(&m->lock);
        chunk_done(m, ce, rc);
        c->prefetched++;
        if (ce->noffers != 0)
            mount_offer_make(m, ce, 0);
        mount_cache_put(m, ce);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* ---- life ---- */

int
mount_cache_init(struct pqv_mount *m)
{
    struct mount_cache *c = &m->cache;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned want = cpus < 1 ? 1 : cpus > MOUNT_PREFETCH_THREADS_MAX ? MOUNT_PREFETCH_THREADS_MAX
                                                                      : (unsigned)cpus;

    c->remote = readahead_storage_remote(m->v->storage);
    if (c->remote)
        want = MOUNT_PREFETCH_THREADS_REMOTE;
    c->budget = m->opt.cache_bytes;
    c->nbuckets = 1024;
    while (c->nbuckets < c->budget / (64u << 10) && c->nbuckets < (1u << 24))
        c->nbuckets *= 2;
    if ((c->buckets = calloc(c->nbuckets, sizeof(*c->buckets))) == NULL)
        return PQV_E_NOMEM;
    pthread_cond_init(&c->work, NULL);
    for (c->nthreads = 0; c->nthreads < want; c->nthreads++)
        if (pthread_create(&c->threads[c->nthreads], NULL, prefetcher, m) != 0)
            break; /* fewer threads: prefetching is an optimisation */
    return 0;
}

void
mount_cache_free(struct pqv_mount *m)
{
    struct mount_cache *c = &m->cache;

    if (c->buckets == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    c->stop = 1;
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&m->lock);
    for (unsigned i = 0; i < c->nthreads; i++)
        pthread_join(c->threads[i], NULL);
    c->nthreads = 0;
    while (m->files != NULL)
        pqv_mount_file_close(m->files);
    /* Chunks still queued: those failed (out of the table) only the
     * queue holds; the rest are in the table. */
    for (; c->qlen > 0; c->qlen--) {
        struct mount_chunk *ce = c->queue[c->qhead];
        c->qhead = (c->qhead + 1) % MOUNT_PREFETCH_QUEUE;
        if (--ce->refs == 0 && ce->state == CHUNK_FAILED)
            chunk_free(c, ce);
    }
    for (size_t b = 0; b < c->nbuckets; b++) {
        struct mount_chunk *ce = c->buckets[b];
        while (ce != NULL) {
            struct mount_chunk *next = ce->hnext;
            chunk_free(c, ce);
            ce = next;
        }
    }
    free(c->buckets);
    c->buckets = NULL;
    while (c->spare_chunks != NULL) {
        struct mount_chunk *ce = c->spare_chunks;
        c->spare_chunks = ce->hnext;
        util_unpin_memory(ce, sizeof(*ce));
        free(ce);
    }
    c->nspare_chunks = 0;
    mount_memory_free(c);
    pthread_cond_destroy(&c->work);
    c->bytes = 0;
}
