/*
 * readahead.c: reads of packs coalesced over a remote storage
 * (vault/readahead.h says what and why).
 *
 * State, under one mutex: the windows (a blob's name, where they start,
 * their bytes; LOADING while one reader fetches them, outside the lock),
 * the streams (per blob, where its last read ended, the size of its next
 * window, the blob's size once asked) and the plan (reads announced, how
 * many times each is still to be made).  A reader copies out of a ready
 * window under the lock, so a window is never freed under a copy.  The
 * plans are readahead_plan.c's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pqvault/common.h"
#include "vault/readahead_internal.h"

int
readahead_storage_remote(const pqv_storage *storage)
{
    return storage != NULL && storage->ops->version >= 4 &&
        (storage->ops->flags & PQV_STORAGE_REMOTE) != 0;
}

struct readahead *
readahead_new(pqv_storage *storage)
{
    struct readahead *ra;

    if (!readahead_storage_remote(storage))
        return NULL;
    if ((ra = calloc(1, sizeof(*ra))) == NULL)
        return NULL;
    if (pthread_mutex_init(&ra->lock, NULL) != 0) {
        free(ra);
        return NULL;
    }
    if (pthread_cond_init(&ra->loaded, NULL) != 0) {
        pthread_mutex_destroy(&ra->lock);
        free(ra);
        return NULL;
    }
    return ra;
}

void
readahead_free(struct readahead *ra)
{
    if (ra == NULL)
        return;
    for (size_t i = 0; i < READAHEAD_PLANNED_WINDOWS; i++)
        free(ra->windows[i].data);
    for (size_t i = 0; i < READAHEAD_RECENT; i++)
        free(ra->recent[i].data);
    readahead_plan_free(ra->plan);
    pthread_cond_destroy(&ra->loaded);
    pthread_mutex_destroy(&ra->lock);
    free(ra);
}

void
readahead_counts(struct readahead *ra, uint64_t *requests, uint64_t *served)
{
    *requests = *served = 0;
    if (ra == NULL)
        return;
    pthread_mutex_lock(&ra->lock);
    *requests = ra->requests;
    *served = ra->served;
    pthread_mutex_unlock(&ra->lock);
}

/* readahead_window_covering(ra, name, off, len): a window (loading or ready) holding
 * all of [off, off + len) of ${name}, or NULL. */
struct window *
readahead_window_covering(struct readahead *ra, const char *name, uint64_t off, size_t len)
{
    for (size_t i = 0; i < READAHEAD_PLANNED_WINDOWS; i++) {
        struct window *w = &ra->windows[i];
        if (w->state != WINDOW_EMPTY && off >= w->start && off - w->start <= w->len &&
            len <= w->len - (off - w->start) && strcmp(w->name, name) == 0)
            return w;
    }
    return NULL;
}

/* follows_on(s, off, len): [off, off + len) is the next read of stream
 * ${s}: it goes past where the stream's last read ended, and starts at
 * most READAHEAD_GAP after it (the chunks of files not restored lie
 * between). */
static int
follows_on(const struct stream *s, uint64_t off, size_t len)
{
    return off + len > s->next && off <= s->next + READAHEAD_GAP;
}

/* stream_of(ra, name, off, len): the stream of ${name} that the read
 * follows on, or NULL.  A blob may have several: a restore's workers
 * each walk their own files of one pack, in order, at their own places. */
static struct stream *
stream_of(struct readahead *ra, const char *name, uint64_t off, size_t len)
{
    for (size_t i = 0; i < READAHEAD_STREAMS; i++)
        if (follows_on(&ra->streams[i], off, len) && strcmp(ra->streams[i].name, name) == 0)
            return &ra->streams[i];
    return NULL;
}

/* stream_new(ra, name): the least recently used stream, made ${name}'s,
 * knowing the blob's size if another stream of it does. */
static struct stream *
stream_new(struct readahead *ra, const char *name)
{
    struct stream *s = &ra->streams[0];
    uint64_t size = 0;

    for (size_t i = 1; i < READAHEAD_STREAMS; i++)
        if (ra->streams[i].used < s->used)
            s = &ra->streams[i];
    for (size_t i = 0; i < READAHEAD_STREAMS; i++)
        if (&ra->streams[i] != s && ra->streams[i].size != 0 &&
            strcmp(ra->streams[i].name, name) == 0)
            size = ra->streams[i].size;
    memset(s, 0, sizeof(*s));
    strcpy(s->name, name);
    s->size = size;
    return s;
}

/* readahead_window_empty(ra, w): ${w}'s bytes freed, the window unused. */
void
readahead_window_empty(struct window *w)
{
    free(w->data);
    w->data = NULL;
    w->state = WINDOW_EMPTY;
    w->pending = 0;
}

/* readahead_window_load(ra, storage, w, buf, len): window ${w} (LOADING: this
 * reader's, nobody else changes it but its pending count) read from the
 * storage and its first ${len} bytes copied to ${buf}: ready; or, the
 * storage failing, emptied and nonzero.  Readers waiting on it woken.
 * ra->lock not held on entry, held on return. */
int
readahead_window_load(struct readahead *ra, pqv_storage *storage, struct window *w, uint8_t *buf,
    size_t len)
{
    uint8_t *data = malloc(w->len);
    int rc = data != NULL ? storage->ops->get_range(storage, w->name, w->start, data, w->len)
                          : -1;

    pthread_mutex_lock(&ra->lock);
    if (rc != 0) {
        free(data);
        readahead_window_empty(w);
    } else {
        w->data = data;
        w->state = WINDOW_READY;
        w->used = ++ra->tick;
        memcpy(buf, data, len);
        ra->requests++;
    }
    pthread_cond_broadcast(&ra->loaded);
    return rc;
}

/* readahead_window_victim(ra, count): an empty window among the first ${count},
 * else the least recently used ready one (its bytes freed); NULL if all
 * are loading. */
struct window *
readahead_window_victim(struct readahead *ra, size_t count)
{
    struct window *v = NULL;

    for (size_t i = 0; i < count; i++) {
        struct window *w = &ra->windows[i];
        if (w->state == WINDOW_EMPTY)
            return w;
        if (w->state == WINDOW_READY && (v == NULL || w->used < v->used))
            v = w;
    }
    if (v != NULL)
        readahead_window_empty(v);
    return v;
}

/* readahead_recent_copy(ra, name, off, buf, len): 1 and the bytes copied if a kept
 * read holds all of them, else 0.  ra->lock held. */
int
readahead_recent_copy(struct readahead *ra, const char *name, uint64_t off, uint8_t *buf,
    size_t len)
{
    for (size_t i = 0; i < READAHEAD_RECENT; i++) {
        struct recent *r = &ra->recent[i];
        if (r->data != NULL && off >= r->off && off - r->off <= r->len &&
            len <= r->len - (off - r->off) && strcmp(r->name, name) == 0) {
            memcpy(buf, r->data + (off - r->off), len);
            r->used = ++ra->tick;
            ra->served++;
            return 1;
        }
    }
    return 0;
}

/* seen_again(ra, name, off, len): whether this large read was seen
 * lately; if not, it is noted (the oldest noted one giving way).  ra->lock
 * held. */
static int
seen_again(struct readahead *ra, const char *name, uint64_t off, size_t len)
{
    struct seen *n;

    for (size_t i = 0; i < READAHEAD_RECENT; i++) {
        n = &ra->seen[i];
        if (n->off == off && n->len == len && strcmp(n->name, name) == 0)
            return 1;
    }
    n = &ra->seen[ra->seen_next];
    ra->seen_next = (ra->seen_next + 1) % READAHEAD_RECENT;
    strcpy(n->name, name);
    n->off = off;
    n->len = len;
    return 0;
}

/* readahead_get_alone(ra, storage, name, off, buf, len): a read that goes to the
 * storage as it is, kept (the least recently used kept ones giving way)
 * if it succeeds, is at most a quarter of what is kept and is small, or
 * large and read lately already (a large chunk many files share: keeping
 * every large read would copy each chunk a mount's sequential reader
 * fetches, for nothing).  ra->lock not held. */
int
readahead_get_alone(struct readahead *ra, pqv_storage *storage, const char *name, uint64_t off,
    uint8_t *buf, size_t len)
{
    struct recent *r;
    uint8_t *copy;
    int rc, keep;

    rc = storage->ops->get_range(storage, name, off, buf, len);
    if (rc != 0 || len > READAHEAD_RECENT_BYTES / 4)
        return rc;
    keep = len < READAHEAD_SMALL;
    if (!keep) {
        pthread_mutex_lock(&ra->lock);
        keep = seen_again(ra, name, off, len);
        pthread_mutex_unlock(&ra->lock);
    }
    if (!keep || (copy = malloc(len)) == NULL)
        return rc;
    memcpy(copy, buf, len);
    pthread_mutex_lock(&ra->lock);
    for (;;) {
        struct recent *free_slot = NULL, *oldest = NULL;
        for (size_t i = 0; i < READAHEAD_RECENT; i++) {
            r = &ra->recent[i];
            if (r->data == NULL)
                free_slot = r;
            else if (oldest == NULL || r->used < oldest->used)
                oldest = r;
        }
        if (free_slot != NULL && ra->recent_bytes + len <= READAHEAD_RECENT_BYTES) {
            r = free_slot;
            break;
        }
        /* (len is at most a quarter of the bound: something is kept.) */
        ra->recent_bytes -= oldest->len;
        free(oldest->data);
        oldest->data = NULL;
    }
    strcpy(r->name, name);
    r->off = off;
    r->len = len;
    r->data = copy;
    r->used = ++ra->tick;
    ra->recent_bytes += len;
    pthread_mutex_unlock(&ra->lock);
    return rc;
}

/* blob_size(ra, storage, name): the blob's size asked of the storage and
 * recorded in its streams, SIZE_UNKNOWN if it cannot be told (not asked
 * again for them).  ra->lock held on entry and return, let go while
 * asking. */
static void
blob_size(struct readahead *ra, pqv_storage *storage, const char *name)
{
    uint64_t size = 0;

    pthread_mutex_unlock(&ra->lock);
    if (storage->ops->stat(storage, name, &size) != 0 || size == 0)
        size = SIZE_UNKNOWN;
    pthread_mutex_lock(&ra->lock);
    for (size_t i = 0; i < READAHEAD_STREAMS; i++)
        if (ra->streams[i].size == 0 && strcmp(ra->streams[i].name, name) == 0)
            ra->streams[i].size = size;
}

int
readahead_get_range(struct readahead *ra, pqv_storage *storage, const char *name,
    uint64_t off, uint8_t *buf, size_t len)
{
    struct window *w;
    struct stream *s;
    uint64_t size, end;
    size_t span;
    long k;
    int rc;

    if (ra == NULL || len == 0 || strlen(name) >= NAME_MAX_BYTES ||
        off > UINT64_MAX - READAHEAD_MAX - len)
        return storage->ops->get_range(storage, name, off, buf, len);
    pthread_mutex_lock(&ra->lock);
    if ((k = readahead_plan_find(ra->plan, name, off)) >= 0 &&
        (rc = readahead_plan_get(ra, storage, name, off, buf, len, k)) != 1)
        return rc;
    if (readahead_recent_copy(ra, name, off, buf, len)) {
        pthread_mutex_unlock(&ra->lock);
        return 0;
    }
    if (len >= READAHEAD_SMALL) {
        /* A large read goes alone; the small ones after it still follow on
         * (a tree's large file between its small ones). */
        if ((s = stream_of(ra, name, off, len)) != NULL)
            s->next = off + len;
        pthread_mutex_unlock(&ra->lock);
        return readahead_get_alone(ra, storage, name, off, buf, len);
    }
again:
    /* A window holding it: copied (waiting while it is being read). */
    while ((w = readahead_window_covering(ra, name, off, len)) != NULL) {
        if (w->state == WINDOW_READY) {
            memcpy(buf, w->data + (off - w->start), len);
            w->used = ++ra->tick;
            for (size_t i = 0; i < READAHEAD_STREAMS; i++) {
                /* (The streams whose windows reach it are in use.) */
                s = &ra->streams[i];
                if (off < s->next && s->next - off <= READAHEAD_MAX &&
                    strcmp(s->name, name) == 0)
                    s->used = ra->tick;
            }
            ra->served++;
            pthread_mutex_unlock(&ra->lock);
            return 0;
        }
        pthread_cond_wait(&ra->loaded, &ra->lock);
    }
    /* The next read of one of its blob's streams (follows_on).  Any other
     * is read alone and starts a stream of its own there (a chunk shared
     * by files restored far apart, the first read of another worker's
     * files), the least recently used one giving way. */
    if ((s = stream_of(ra, name, off, len)) == NULL) {
        s = stream_new(ra, name);
        s->next = off + len;
        s->used = ++ra->tick;
        pthread_mutex_unlock(&ra->lock);
        return readahead_get_alone(ra, storage, name, off, buf, len);
    }
    /* A window from it on, twice the last one's size (the first of a
     * blob: READAHEAD_FIRST), within the blob. */
    if (s->size == 0) {
        blob_size(ra, storage, name);
        goto again; /* (the lock was let go: all may have changed) */
    }
    span = s->span == 0 ? READAHEAD_FIRST : s->span * 2;
    if (span > READAHEAD_MAX)
        span = READAHEAD_MAX;
    size = s->size == SIZE_UNKNOWN ? 0 : s->size;
    end = off + span;
    if (size != 0 && end > size)
        end = size;
    if (size == 0 || end < off + len ||
        (w = readahead_window_victim(ra, READAHEAD_WINDOWS)) == NULL) {
        /* (A size not known, a blob shorter than asked for: the storage's
         * own answer; every window being read: read alone.) */
        pthread_mutex_unlock(&ra->lock);
        return storage->ops->get_range(storage, name, off, buf, len);
    }
    s->span = span;
    s->next = end;
    s->used = ++ra->tick;
    strcpy(w->name, name);
    w->start = off;
    w->len = (size_t)(end - off);
    w->state = WINDOW_LOADING;
    pthread_mutex_unlock(&ra->lock);
    rc = readahead_window_load(ra, storage, w, buf, len);
    pthread_mutex_unlock(&ra->lock);
    /* A failed window: the read alone says what is wrong, if anything is. */
    return rc == 0 ? 0 : storage->ops->get_range(storage, name, off, buf, len);
}
