/*
 * mount_memory.c: the memory of the mounted view's cache
 * (vault/mount_internal.h): locked buffers for decrypted chunks, kept for
 * reuse by size class (zeroed and locked once, wiped as they come back),
 * and the read buffers a chunk is opened through (sealed, and a locked
 * scratch for compressed plaintext), kept for reuse.  Locking and
 * unlocking each buffer split and merged the heap's mappings: a seventh
 * of the server's time reading small files.
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/mount_internal.h"
#include "vault/pack.h"

static const uint32_t pool_sizes[MOUNT_POOL_CLASSES] = {
    4u << 10, 8u << 10, 12u << 10, 16u << 10, 24u << 10, 32u << 10,
    48u << 10, 64u << 10, 96u << 10, 128u << 10, 192u << 10, 256u << 10,
};

/* pool_class(len): the smallest class holding ${len} bytes, or -1. */
static int
pool_class(size_t len)
{
    for (int k = 0; k < MOUNT_POOL_CLASSES; k++)
        if (len <= pool_sizes[k])
            return k;
    return -1;
}

/* pool_take(c, len, cap): a kept locked buffer of ${len}'s class, its
 * size in *${cap}; NULL if none (m->lock held).  locked_alloc(len, cap):
 * a new one (of its class's size, if it has one). */
static uint8_t *
pool_take(struct mount_cache *c, size_t len, uint32_t *cap)
{
    int k = pool_class(len);

    if (k >= 0 && c->npool[k] > 0) {
        *cap = pool_sizes[k];
        c->pool_bytes -= *cap;
        return c->pool[k][--c->npool[k]];
    }
    return NULL;
}

static uint8_t *
locked_alloc(size_t len, uint32_t *cap)
{
    int k = pool_class(len);
    size_t size = k >= 0 ? pool_sizes[k] : len;
    uint8_t *p = malloc(size);

    if (p == NULL)
        return NULL;
    /* Locked first (which faults its pages in, all in one call: a page
     * fault costs about 15 us on this VM, and a memset of fresh memory
     * took one per page, a quarter of the time of a random read), then
     * zeroed whole, so that all of a kept buffer is zero once the bytes
     * used are wiped. */
    util_pin_memory(p, size);
    memset(p, 0, size);
    *cap = (uint32_t)size;
    return p;
}

/* mount_memory_give(c, p, cap): ${p} (wiped by the caller) kept, or unlocked and
 * freed (m->lock held). */
void
mount_memory_give(struct mount_cache *c, uint8_t *p, uint32_t cap)
{
    int k = pool_class(cap);

    if (p == NULL)
        return;
    if (k >= 0 && pool_sizes[k] == cap && c->npool[k] < MOUNT_POOL_PER_CLASS &&
        c->pool_bytes + cap <= MOUNT_POOL_BYTES) {
        c->pool[k][c->npool[k]++] = p;
        c->pool_bytes += cap;
        return;
    }
    util_unpin_memory(p, cap);
    free(p);
}

/* mount_memory_get(m, len, cap) / mount_memory_put(m, p, cap): a locked
 * buffer as above, taking m->lock. */
uint8_t *
mount_memory_get(struct pqv_mount *m, size_t len, uint32_t *cap)
{
    uint8_t *p;

    pthread_mutex_lock(&m->lock);
    p = pool_take(&m->cache, len, cap);
    pthread_mutex_unlock(&m->lock);
    return p != NULL ? p : locked_alloc(len, cap);
}

void
mount_memory_put(struct pqv_mount *m, uint8_t *p, uint32_t cap)
{
    pthread_mutex_lock(&m->lock);
    mount_memory_give(&m->cache, p, cap);
    pthread_mutex_unlock(&m->lock);
}

static void
buffers_free(struct mount_buffers *b)
{
    if (b->scratch != NULL)
        util_unpin_memory(b->scratch, pack_scratch_size());
    free(b->sealed);
    free(b->scratch);
    free(b);
}

/* mount_memory_buffers_get(m, scratch) / mount_memory_buffers_put(m, b): a sealed buffer, and a
 * scratch one if ${scratch} (only a compressed chunk or an extent of
 * format 1 or 2 needs one: it holds compressed plaintext, so it is locked
 * in memory, all of it resident; a chunk stored uncompressed, the common
 * case of large files, opens without). */
struct mount_buffers *
mount_memory_buffers_get(struct pqv_mount *m, int scratch)
{
    struct mount_buffers *b, **p;

    pthread_mutex_lock(&m->lock);
    /* One with a scratch buffer first if that is wanted, else one without. */
    for (p = &m->cache.free_buffers; *p != NULL; p = &(*p)->next)
        if (((*p)->scratch != NULL) == (scratch != 0))
            break;
    if (*p == NULL)
        p = &m->cache.free_buffers;
    if ((b = *p) != NULL) {
        *p = b->next;
        m->cache.nfree_buffers--;
    }
    pthread_mutex_unlock(&m->lock);
    if (b == NULL) {
        if ((b = calloc(1, sizeof(*b))) == NULL)
            return NULL;
        if ((b->sealed = malloc(pack_sealed_max())) == NULL) {
            free(b);
            return NULL;
        }
    }
    if (scratch && b->scratch == NULL) {
        if ((b->scratch = malloc(pack_scratch_size())) == NULL) {
            buffers_free(b);
            return NULL;
        }
        b->scratch[0] = 0;
        util_pin_memory(b->scratch, pack_scratch_size());
    }
    return b;
}

void
mount_memory_buffers_put(struct pqv_mount *m, struct mount_buffers *b)
{
    pthread_mutex_lock(&m->lock);
    if (m->cache.nfree_buffers < MOUNT_BUFFERS_KEPT) {
        b->next = m->cache.free_buffers;
        m->cache.free_buffers = b;
        m->cache.nfree_buffers++;
        b = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    if (b != NULL)
        buffers_free(b);
}

/* mount_memory_segbuf_get(m) / mount_memory_segbuf_put(m, p): a sealed buffer of one segment
 * (ciphertext only: nothing to wipe). */
uint8_t *
mount_memory_segbuf_get(struct pqv_mount *m)
{
    uint8_t *p = NULL;

    pthread_mutex_lock(&m->lock);
    if (m->cache.nfree_segbufs > 0)
        p = m->cache.free_segbufs[--m->cache.nfree_segbufs];
    pthread_mutex_unlock(&m->lock);
    return p != NULL ? p : malloc(PQV_STREAM_SEGMENT_SEALED);
}

void
mount_memory_segbuf_put(struct pqv_mount *m, uint8_t *p)
{
    pthread_mutex_lock(&m->lock);
    if (p != NULL && m->cache.nfree_segbufs < MOUNT_SEGBUFS_KEPT) {
        m->cache.free_segbufs[m->cache.nfree_segbufs++] = p;
        p = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    free(p);
}

void
mount_memory_free(struct mount_cache *c)
{
    /* (What the pools keep was wiped as it came back.) */
    for (int k = 0; k < MOUNT_POOL_CLASSES; k++)
        while (c->npool[k] > 0) {
            uint8_t *p = c->pool[k][--c->npool[k]];
            util_unpin_memory(p, pool_sizes[k]);
            free(p);
        }
    c->pool_bytes = 0;
    while (c->nfree_segbufs > 0)
        free(c->free_segbufs[--c->nfree_segbufs]);
    while (c->free_buffers != NULL) {
        struct mount_buffers *b = c->free_buffers;
        c->free_buffers = b->next;
        buffers_free(b);
    }
}
