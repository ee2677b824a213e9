/*
 * src/vault/segment_cache.c: the segments a reading handle has read, kept
 * until it closes (segment_cache.h says why that is safe).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/chunks.h"
#include "vault/segment_cache.h"
#include "vault/vault_internal.h"

struct segment_cache {
    pthread_mutex_t lock;        /* a restore's workers may open states at once */
    struct segment *segs;
    size_t n, cap;
    uint64_t bytes;
    struct chunk_index chunks;   /* of the chain ending at chunks_epoch (cap 0: none) */
    uint64_t chunks_epoch;
    uint8_t chunks_chain[32];
};

/* Made on first use, perhaps by two of a command's threads at once. */
static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;

/* cache(v): ${v}'s cache, made on first use (NULL: no memory). */
static struct segment_cache *
cache(struct pqv_vault *v)
{
    struct segment_cache *c;

    pthread_mutex_lock(&making);
    if ((c = v->segcache) == NULL && (c = calloc(1, sizeof(*c))) != NULL) {
        if (pthread_mutex_init(&c->lock, NULL) != 0) {
            free(c);
            c = NULL;
        } else {
            v->segcache = c;
        }
    }
    pthread_mutex_unlock(&making);
    return c;
}

/* held(v): ${v}'s cache if made (read under the lock that makes it). */
static struct segment_cache *
held(struct pqv_vault *v)
{
    struct segment_cache *c;

    pthread_mutex_lock(&making);
    c = v->segcache;
    pthread_mutex_unlock(&making);
    return c;
}

int
segment_cache_usable(const struct pqv_vault *v)
{
    return !v->locked && !v->segcache_off;
}

int
segment_cache_find(struct pqv_vault *v, uint64_t epoch, struct segment *out)
{
    struct segment_cache *c = held(v);
    int found = 0;

    if (c == NULL || !segment_cache_usable(v))
        return 0;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n && !found; i++)
        if (c->segs[i].epoch == epoch) {
            *out = c->segs[i];
            out->borrowed = 1;
            found = 1;
        }
    pthread_mutex_unlock(&c->lock);
    return found;
}

void
segment_cache_keep(struct pqv_vault *v, struct segment *s, uint64_t bytes)
{
    struct segment_cache *c;

    if (!segment_cache_usable(v) || (c = cache(v)) == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    if (bytes <= SEGMENT_CACHE_BUDGET - c->bytes) {
        int present = 0;
        for (size_t i = 0; i < c->n; i++)
            present |= c->segs[i].epoch == s->epoch;
        if (!present && c->n == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 16;
            struct segment *grown = realloc(c->segs, cap * sizeof(*grown));
            if (grown != NULL) {
                c->segs = grown;
                c->cap = cap;
            }
        }
        if (!present && c->n < c->cap) {
            c->segs[c->n++] = *s;
            c->bytes += bytes;
            s->borrowed = 1;
        }
    }
    pthread_mutex_unlock(&c->lock);
}

uint8_t *
segment_cache_part(struct pqv_vault *v, uint64_t epoch, int part, uint8_t *data)
{
    struct segment_cache *c = held(v);
    uint8_t *kept = NULL;

    if (c == NULL)
        return NULL;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n; i++)
        if (c->segs[i].epoch == epoch) {
            if (c->segs[i].part[part] == NULL)
                c->segs[i].part[part] = data;
            else
                free(data);
            kept = c->segs[i].part[part];
            break;
        }
    pthread_mutex_unlock(&c->lock);
    return kept;
}

int
segment_cache_chunks_find(struct pqv_vault *v, uint64_t epoch, const uint8_t chain[32],
    struct chunk_index *out)
{
    struct segment_cache *c = held(v);
    int found;

    if (c == NULL || !segment_cache_usable(v))
        return 0;
    pthread_mutex_lock(&c->lock);
    found = c->chunks.cap > 0 && c->chunks_epoch == epoch &&
        util_ct_equal(c->chunks_chain, chain, 32);
    if (found) {
        *out = c->chunks;
        out->borrowed = 1;
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

void
segment_cache_chunks_keep(struct pqv_vault *v, uint64_t epoch, const uint8_t chain[32],
    struct chunk_index *ix)
{
    struct segment_cache *c;

    if (ix->borrowed || ix->cap == 0 || !segment_cache_usable(v) || (c = cache(v)) == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    if (c->chunks.cap == 0) {
        c->chunks = *ix;
        c->chunks_epoch = epoch;
        memcpy(c->chunks_chain, chain, 32);
        ix->borrowed = 1;
    }
    pthread_mutex_unlock(&c->lock);
}

void
segment_cache_free(struct pqv_vault *v)
{
    struct segment_cache *c = v->segcache;

    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n; i++)
        segment_free(&c->segs[i]);
    free(c->segs);
    chunks_free(&c->chunks);
    pthread_mutex_destroy(&c->lock);
    free(c);
    v->segcache = NULL;
}
