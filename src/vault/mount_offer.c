/*
 * mount_offer.c: a walk's next files offered to the kernel's page cache
 * (vault/mount_internal.h): their first chunks, queued for the prefetch
 * threads (mount_cache.c) with the files they are offered as, handed to
 * opt.offer once read and once the kernel knows the files' inodes (their
 * directories listed).  (Split from mount_cache.c, which had grown past
 * 700 lines.)  m->lock held throughout, let go around opt.offer.
 */
#include <errno.h>

#include "vault/mount_internal.h"

/* queue_delivery(c, ce): ${ce}, read, queued first for a prefetch thread
 * to make its offers that are now: it costs no decryption, and the
 * walk's reader is about to reach those files; 0 if queued (not when not
 * read yet, or read but queued to be, or the queue is full, or there is
 * no prefetch thread). */
static int
queue_delivery(struct mount_cache *c, struct mount_chunk *ce)
{
    if (ce->state != CHUNK_READY || ce->queued || c->qlen == MOUNT_PREFETCH_QUEUE ||
        c->nthreads == 0)
        return -1;
    ce->refs++;
    c->qhead = (c->qhead + MOUNT_PREFETCH_QUEUE - 1) % MOUNT_PREFETCH_QUEUE;
    c->queue[c->qhead] = ce;
    c->qlen++;
    mount_cache_wake(c);
    return 0;
}

/* add_offer(c, ce, ino, len, now): file ${ino} among those ${ce} is
 * offered as (not twice; not more than MOUNT_CHUNK_OFFERS: a file beyond
 * is read as any); 1 if it is now. */
static int
add_offer(struct mount_cache *c, struct mount_chunk *ce, uint64_t ino, uint32_t len, int now)
{
    for (unsigned i = 0; i < ce->noffers; i++)
        if (ce->offers[i].ino == ino)
            return 0;
    if (ce->noffers == MOUNT_CHUNK_OFFERS)
        return 0;
    ce->offers[ce->noffers].ino = ino;
    ce->offers[ce->noffers].len = len;
    ce->offers[ce->noffers++].now = now;
    c->pending_offers++;
    return 1;
}

int
mount_offer_queue(struct pqv_mount *m, const struct entry *e, uint64_t ino, uint32_t len,
    int now)
{
    struct mount_cache *c = &m->cache;
    uint8_t key[MOUNT_KEY_BYTES];
    struct mount_chunk *ce;
    size_t at;

    if (len == 0 || m->opt.offer == NULL)
        return mount_cache_queue(m, e, 0, 1, e->extents[0].plain_len);
    mount_cache_key(e, 0, MOUNT_WHOLE, key);
    if ((ce = mount_cache_find(c, key)) != NULL) {
        /* Another file of the same data, read or on its way.  Read, it
         * is offered by a prefetch thread, never by the caller: a reader's
         * request offering while the kernel waits for it (the pages of
         * the file it reads are locked meanwhile, and a chunk may be
         * offered as that file too) would wait for itself. */
        if (add_offer(c, ce, ino, len, now) && now)
            (void)queue_delivery(c, ce);
        return 0;
    }
    if (mount_cache_queue(m, e, 0, 1, e->extents[0].plain_len) != 0)
        return -1;
    /* (Just queued: the last in the queue.) */
    at = (c->qhead + c->qlen - 1) % MOUNT_PREFETCH_QUEUE;
    ce = c->queue[at];
    (void)add_offer(c, ce, ino, len, now);
    return 0;
}

/* mount_offer_make(m, ce, all): ${ce}, read for a walk, offered to the
 * kernel's page cache as its files' first bytes, those whose directories are listed
 * (now), or all (a listing goes on; m->lock held, let go meanwhile; the
 * caller's reference keeps ${ce}).  Taken, those bytes count as read: the
 * chunk leaves the cache once the rest of it, if any, is read too, and no
 * offer of it is left.  Not yet (the kernel has no inode of that number:
 * its directory is not listed yet), it stays to offer when it is
 * (mount_offer_listed). */
void
mount_offer_make(struct pqv_mount *m, struct mount_chunk *ce, int all)
{
    struct mount_offer todo[MOUNT_CHUNK_OFFERS];
    unsigned n = 0;

    if (ce->state != CHUNK_READY)
        return;
    for (unsigned i = 0; i < ce->noffers;) {
        if (all || ce->offers[i].now) {
            todo[n++] = ce->offers[i];
            ce->offers[i] = ce->offers[--ce->noffers];
        } else {
            i++;
        }
    }
    for (unsigned i = 0; i < n; i++) {
        int rc = -EINVAL;
        if (todo[i].len <= ce->len) {
            pthread_mutex_unlock(&m->lock);
            rc = m->opt.offer(m->opt.offer_ctx, todo[i].ino, ce->data, todo[i].len);
            pthread_mutex_lock(&m->lock);
        }
        if (rc == -ENOENT && ce->noffers < MOUNT_CHUNK_OFFERS) {
            todo[i].now = 0;     /* (until its directory's listing goes on) */
            ce->offers[ce->noffers++] = todo[i];
            continue;
        }
        m->cache.pending_offers--;
        if (rc == 0) {
            m->cache.offered++;
            mount_cache_served(ce, todo[i].len);
        }
    }
    pthread_cond_broadcast(&m->cond); /* (tests wait for offers) */
}

void
mount_offer_listed(struct pqv_mount *m, const struct entry *e)
{
    uint8_t key[MOUNT_KEY_BYTES];
    struct mount_chunk *ce;

    if (m->cache.pending_offers == 0 || e->kind != KIND_FILE || !e->chunked || e->nextents == 0 ||
        !e->extents[0].chunk)
        return;
    mount_cache_key(e, 0, MOUNT_WHOLE, key);
    if ((ce = mount_cache_find(&m->cache, key)) == NULL || ce->noffers == 0)
        return;
    for (unsigned i = 0; i < ce->noffers; i++)
        ce->offers[i].now = 1; /* (offered as soon as it is read) */
    if (ce->state != CHUNK_READY || queue_delivery(&m->cache, ce) == 0)
        return;
    ce->refs++; /* (no prefetch thread to take it, or none free: here) */
    mount_offer_make(m, ce, 1);
    mount_cache_put(m, ce);
}
