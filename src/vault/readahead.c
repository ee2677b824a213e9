/*
 * readahead.c: reads of packs coalesced over a remote storage
 * (vault/readahead.h says what and why).
 *
 * State, under one mutex: the windows (a blob's name, where they start,
 * their bytes; LOADING while one reader fetches them, outside the lock),
 * the streams (per blob, where its last read ended, the size of its next
 * window, the blob's size once asked) and the plan (reads announced, how
 * many times each is still to be made).  A reader copies out of a ready
 * window under the lock, so a window is never freed under a copy.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pqvault/common.h"
#include "vault/readahead.h"

#define NAME_MAX_BYTES 128
/* A stream's blob whose size could not be told. */
#define SIZE_UNKNOWN UINT64_MAX

enum { WINDOW_EMPTY = 0, WINDOW_LOADING, WINDOW_READY };

struct window {
    char name[NAME_MAX_BYTES];
    uint64_t start;
    size_t len;
    uint8_t *data;
    int state;
    uint64_t used;
    uint64_t pending;            /* planned reads it holds not made yet */
};

struct stream {
    char name[NAME_MAX_BYTES];   /* "" : unused */
    uint64_t next;               /* where its last read (or window) ended */
    uint64_t size;               /* the blob's size; 0: not asked yet, or SIZE_UNKNOWN */
    size_t span;                 /* its last window's size; 0: none yet */
    uint64_t used;
};

/* A read that went alone, kept. */
struct recent {
    char name[NAME_MAX_BYTES];
    uint64_t off;
    size_t len;
    uint8_t *data;               /* NULL: unused */
    uint64_t used;
};

/* A large read seen (its bytes not kept). */
struct seen {
    char name[NAME_MAX_BYTES];
    uint64_t off;
    size_t len;
};

/* A planned read: [off, off + len) of the plan's blob ${name}, to be made
 * ${left} more times. */
struct planned {
    uint64_t off;
    uint32_t name;
    uint32_t len;
    uint32_t left;
    uint32_t seq;                /* readahead_expect's: when announced last */
};

struct readahead_plan {
    char **names;                /* the blobs, each once */
    size_t nnames;
    uint32_t *slots;             /* hash of names: index + 1, 0 empty */
    size_t nslots;               /* a power of two, at least twice nnames */
    struct planned *reads;       /* sorted by name, off, len once set */
    size_t n, cap;
    uint32_t seq;                /* reads announced by readahead_expect */
    int live;                    /* made by readahead_expect */
};

struct readahead {
    pthread_mutex_t lock;
    pthread_cond_t loaded;       /* a window left LOADING */
    struct window windows[READAHEAD_PLANNED_WINDOWS];
    struct readahead_plan *plan;
    struct stream streams[READAHEAD_STREAMS];
    struct recent recent[READAHEAD_RECENT];
    size_t recent_bytes;
    struct seen seen[READAHEAD_RECENT];
    size_t seen_next;            /* the slot the next one takes */
    uint64_t tick;
    uint64_t requests, served;
};

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

uint64_t
readahead_planned(struct readahead *ra)
{
    uint64_t left = 0;

    if (ra == NULL)
        return 0;
    pthread_mutex_lock(&ra->lock);
    for (size_t i = 0; ra->plan != NULL && i < ra->plan->n; i++)
        left += ra->plan->reads[i].left;
    pthread_mutex_unlock(&ra->lock);
    return left;
}

/* window_covering(ra, name, off, len): a window (loading or ready) holding
 * all of [off, off + len) of ${name}, or NULL. */
static struct window *
window_covering(struct readahead *ra, const char *name, uint64_t off, size_t len)
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

/* window_empty(ra, w): ${w}'s bytes freed, the window unused. */
static void
window_empty(struct window *w)
{
    free(w->data);
    w->data = NULL;
    w->state = WINDOW_EMPTY;
    w->pending = 0;
}

/* window_load(ra, storage, w, buf, len): window ${w} (LOADING: this
 * reader's, nobody else changes it but its pending count) read from the
 * storage and its first ${len} bytes copied to ${buf}: ready; or, the
 * storage failing, emptied and nonzero.  Readers waiting on it woken.
 * ra->lock not held on entry, held on return. */
static int
window_load(struct readahead *ra, pqv_storage *storage, struct window *w, uint8_t *buf,
    size_t len)
{
    uint8_t *data = malloc(w->len);
    int rc = data != NULL ? storage->ops->get_range(storage, w->name, w->start, data, w->len)
                          : -1;

    pthread_mutex_lock(&ra->lock);
    if (rc != 0) {
        free(data);
        window_empty(w);
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

/* window_victim(ra, count): an empty window among the first ${count},
 * else the least recently used ready one (its bytes freed); NULL if all
 * are loading. */
static struct window *
window_victim(struct readahead *ra, size_t count)
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
        window_empty(v);
    return v;
}

/* recent_copy(ra, name, off, buf, len): 1 and the bytes copied if a kept
 * read holds all of them, else 0.  ra->lock held. */
static int
recent_copy(struct readahead *ra, const char *name, uint64_t off, uint8_t *buf, size_t len)
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

/* get_alone(ra, storage, name, off, buf, len): a read that goes to the
 * storage as it is, kept (the least recently used kept ones giving way)
 * if it succeeds, is at most a quarter of what is kept and is small, or
 * large and read lately already (a large chunk many files share: keeping
 * every large read would copy each chunk a mount's sequential reader
 * fetches, for nothing).  ra->lock not held. */
static int
get_alone(struct readahead *ra, pqv_storage *storage, const char *name, uint64_t off,
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

/* ---- plans ---- */

struct readahead_plan *
readahead_plan_new(void)
{
    return calloc(1, sizeof(struct readahead_plan));
}

void
readahead_plan_free(struct readahead_plan *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->nnames; i++)
        free(p->names[i]);
    free(p->names);
    free(p->slots);
    free(p->reads);
    free(p);
}

static uint64_t
name_hash(const char *name)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */

    for (; *name != '\0'; name++)
        h = (h ^ (uint8_t)*name) * 1099511628211ull;
    return h;
}

/* plan_slot(p, name): ${name}'s slot in the hash (holding it, or the
 * empty one where it would go). */
static uint32_t *
plan_slot(const struct readahead_plan *p, const char *name)
{
    size_t i = (size_t)name_hash(name) & (p->nslots - 1);

    while (p->slots[i] != 0 && strcmp(p->names[p->slots[i] - 1], name) != 0)
        i = (i + 1) & (p->nslots - 1);
    return &p->slots[i];
}

/* plan_name(p, name, idx): ${name}'s index, added if new. */
static int
plan_name(struct readahead_plan *p, const char *name, uint32_t *idx)
{
    uint32_t *slot;
    char **grown, *copy;

    if (2 * (p->nnames + 1) > p->nslots) {
        size_t n = p->nslots == 0 ? 64 : 2 * p->nslots;
        uint32_t *old = p->slots;
        if ((p->slots = calloc(n, sizeof(*p->slots))) == NULL) {
            p->slots = old;
            return PQV_E_NOMEM;
        }
        p->nslots = n;
        for (size_t i = 0; i < p->nnames; i++)
            *plan_slot(p, p->names[i]) = (uint32_t)(i + 1);
        free(old);
    }
    slot = plan_slot(p, name);
    if (*slot != 0) {
        *idx = *slot - 1;
        return 0;
    }
    if ((copy = strdup(name)) == NULL)
        return PQV_E_NOMEM;
    if ((grown = realloc(p->names, (p->nnames + 1) * sizeof(*grown))) == NULL) {
        free(copy);
        return PQV_E_NOMEM;
    }
    p->names = grown;
    p->names[p->nnames] = copy;
    *idx = (uint32_t)p->nnames;
    *slot = (uint32_t)++p->nnames;
    return 0;
}

int
readahead_plan_add(struct readahead_plan *p, const char *name, uint64_t off, size_t len)
{
    uint32_t idx;
    int rc;

    if (p->n >= READAHEAD_PLAN_MAX || strlen(name) >= NAME_MAX_BYTES || len == 0 ||
        len > UINT32_MAX || off > UINT64_MAX - READAHEAD_MAX - len)
        return PQV_E_INVAL;
    if ((rc = plan_name(p, name, &idx)) != 0)
        return rc;
    if (p->n == p->cap) {
        size_t cap = p->cap == 0 ? 1024 : 2 * p->cap;
        struct planned *grown = realloc(p->reads, cap * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        p->reads = grown;
        p->cap = cap;
    }
    p->reads[p->n++] = (struct planned){ off, idx, (uint32_t)len, 1, 0 };
    return 0;
}

static int
planned_order(const void *a, const void *b)
{
    const struct planned *x = a, *y = b;

    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

void
readahead_plan_set(struct readahead *ra, struct readahead_plan *p)
{
    size_t n = 0;

    if (p != NULL && p->n > 0) {
        qsort(p->reads, p->n, sizeof(*p->reads), planned_order);
        /* (One read announced again: its count.) */
        for (size_t i = 0; i < p->n; i++) {
            if (n > 0 && planned_order(&p->reads[n - 1], &p->reads[i]) == 0)
                p->reads[n - 1].left++;
            else
                p->reads[n++] = p->reads[i];
        }
        p->n = n;
    }
    if (ra == NULL) {
        readahead_plan_free(p);
        return;
    }
    pthread_mutex_lock(&ra->lock);
    readahead_plan_free(ra->plan);
    ra->plan = p;
    for (size_t i = 0; i < READAHEAD_PLANNED_WINDOWS; i++)
        ra->windows[i].pending = 0;
    pthread_mutex_unlock(&ra->lock);
}

/* plan_prune(p): the reads made, and those announced before the last
 * READAHEAD_EXPECT_MAX / 2 announcements (never made: a walk given up),
 * dropped.  (A window's count of what it holds may then stay above zero:
 * it goes least recently used, as any.) */
static void
plan_prune(struct readahead_plan *p)
{
    uint32_t oldest = p->seq - READAHEAD_EXPECT_MAX / 2;
    size_t n = 0;

    for (size_t i = 0; i < p->n; i++) {
        const struct planned *r = &p->reads[i];
        if (r->left > 0 && (int32_t)(r->seq - oldest) > 0)
            p->reads[n++] = *r;
    }
    p->n = n;
}

int
readahead_expect(struct readahead *ra, const char *name, uint64_t off, size_t len)
{
    struct readahead_plan *p;
    struct planned key;
    size_t lo = 0, hi;
    uint32_t idx;
    int rc;

    if (ra == NULL)
        return 0;
    if (strlen(name) >= NAME_MAX_BYTES || len == 0 || len > UINT32_MAX ||
        off > UINT64_MAX - READAHEAD_MAX - len)
        return PQV_E_INVAL;
    pthread_mutex_lock(&ra->lock);
    if (ra->plan == NULL && (ra->plan = readahead_plan_new()) == NULL) {
        pthread_mutex_unlock(&ra->lock);
        return PQV_E_NOMEM;
    }
    p = ra->plan;
    p->live = 1;
    if (p->n >= READAHEAD_EXPECT_MAX)
        plan_prune(p);
    if ((rc = plan_name(p, name, &idx)) != 0)
        goto out;
    key = (struct planned){ off, idx, (uint32_t)len, 1, ++p->seq };
    hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (planned_order(&p->reads[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < p->n && planned_order(&p->reads[lo], &key) == 0) {
        p->reads[lo].left++;
        p->reads[lo].seq = key.seq;
        goto out;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap == 0 ? 1024 : 2 * p->cap;
        struct planned *grown = realloc(p->reads, cap * sizeof(*grown));
        if (grown == NULL) {
            rc = PQV_E_NOMEM;
            goto out;
        }
        p->reads = grown;
        p->cap = cap;
    }
    memmove(&p->reads[lo + 1], &p->reads[lo], (p->n - lo) * sizeof(*p->reads));
    p->reads[lo] = key;
    p->n++;
out:
    pthread_mutex_unlock(&ra->lock);
    return rc;
}

/* plan_find(p, name, off): the first planned read of ${name} starting at
 * ${off}, or -1. */
static long
plan_find(const struct readahead_plan *p, const char *name, uint64_t off)
{
    uint32_t *slot, idx;
    size_t lo = 0, hi;

    if (p == NULL || p->n == 0 || *(slot = plan_slot(p, name)) == 0)
        return -1;
    idx = *slot - 1;
    hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct planned *r = &p->reads[mid];
        if (r->name < idx || (r->name == idx && r->off < off))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n && p->reads[lo].name == idx && p->reads[lo].off == off ? (long)lo : -1;
}

/* within(r, start, end): planned read ${r} lies wholly in [start, end). */
static int
within(const struct planned *r, uint64_t start, uint64_t end)
{
    return r->off >= start && r->off + r->len <= end;
}

/* plan_consume(ra, k, off, len): the planned reads from ${k} on lying in
 * [off, off + len) made once more; a ready window left with none to make
 * is freed.  ra->lock held. */
static void
plan_consume(struct readahead *ra, size_t k, uint64_t off, size_t len)
{
    const struct readahead_plan *p = ra->plan;
    const char *name = p->names[p->reads[k].name];

    for (size_t j = k; j < p->n && p->reads[j].name == p->reads[k].name &&
         p->reads[j].off < off + len; j++) {
        struct planned *r = &p->reads[j];
        if (r->left == 0 || !within(r, off, off + len))
            continue;
        r->left--;
        for (size_t i = 0; i < READAHEAD_PLANNED_WINDOWS; i++) {
            struct window *w = &ra->windows[i];
            if (w->pending == 0 || !within(r, w->start, w->start + w->len) ||
                strcmp(w->name, name) != 0)
                continue;
            if (--w->pending == 0 && w->state == WINDOW_READY)
                window_empty(w);
        }
    }
}

/* plan_window_end(ra, k, off, len): where a window for the read [off, off
 * + len) (planned, from ${k}) ends: past the planned reads after it still
 * to be made, up to READAHEAD_MAX from ${off}, over gaps of at most
 * READAHEAD_GAP, short of any other window of the blob.  ra->lock held. */
static uint64_t
plan_window_end(struct readahead *ra, size_t k, uint64_t off, size_t len)
{
    const struct readahead_plan *p = ra->plan;
    const char *name = p->names[p->reads[k].name];
    uint64_t end = off + len, limit = off + READAHEAD_MAX;

    for (size_t i = 0; i < READAHEAD_PLANNED_WINDOWS; i++) {
        const struct window *w = &ra->windows[i];
        if (w->state != WINDOW_EMPTY && w->start > off && w->start < limit &&
            strcmp(w->name, name) == 0)
            limit = w->start;
    }
    for (size_t j = k; j < p->n && p->reads[j].name == p->reads[k].name; j++) {
        const struct planned *r = &p->reads[j];
        if (r->off < off + len)
            continue; /* (this read's own) */
        if (r->off > end + READAHEAD_GAP || r->off + r->len > limit)
            break;
        if (r->left > 0 && r->off + r->len > end)
            end = r->off + r->len;
    }
    return end;
}

/* plan_pending(ra, k, start, end): the planned reads still to be made
 * lying in [start, end), from ${k} on.  ra->lock held. */
static uint64_t
plan_pending(const struct readahead *ra, size_t k, uint64_t start, uint64_t end)
{
    const struct readahead_plan *p = ra->plan;
    uint64_t pending = 0;

    for (size_t j = k; j < p->n && p->reads[j].name == p->reads[k].name &&
         p->reads[j].off < end; j++)
        if (within(&p->reads[j], start, end))
            pending += p->reads[j].left;
    return pending;
}

/* get_planned(ra, storage, name, off, buf, len, k): a read the plan holds
 * (from ${k}): from a window that holds it, else from a new one reaching
 * over the planned reads after it, else alone; made once more in the plan
 * either way.  ra->lock held on entry, let go on return; but 1, the lock
 * held, for a read of a plan readahead_expect makes with nothing
 * announced after it (to read as unplanned). */
static int
get_planned(struct readahead *ra, pqv_storage *storage, const char *name, uint64_t off,
    uint8_t *buf, size_t len, long k)
{
    struct window *w;
    uint64_t end;
    int rc;

    if (recent_copy(ra, name, off, buf, len)) {
        plan_consume(ra, (size_t)k, off, len);
        pthread_mutex_unlock(&ra->lock);
        return 0;
    }
    while ((w = window_covering(ra, name, off, len)) != NULL) {
        if (w->state == WINDOW_READY) {
            memcpy(buf, w->data + (off - w->start), len);
            w->used = ++ra->tick;
            ra->served++;
            plan_consume(ra, (size_t)k, off, len);
            pthread_mutex_unlock(&ra->lock);
            return 0;
        }
        pthread_cond_wait(&ra->loaded, &ra->lock);
        /* (The plan may have grown meanwhile: its index again.) */
        if ((k = plan_find(ra->plan, name, off)) < 0) {
            pthread_mutex_unlock(&ra->lock);
            return storage->ops->get_range(storage, name, off, buf, len);
        }
    }
    end = plan_window_end(ra, (size_t)k, off, len);
    if (end == off + len && ra->plan->live) {
        /* Nothing announced after it: a walk's reads, announced a few
         * at a time, go by streams. */
        plan_consume(ra, (size_t)k, off, len);
        return 1;
    }
    if (end == off + len || (w = window_victim(ra, READAHEAD_PLANNED_WINDOWS)) == NULL) {
        plan_consume(ra, (size_t)k, off, len);
        pthread_mutex_unlock(&ra->lock);
        return get_alone(ra, storage, name, off, buf, len);
    }
    strcpy(w->name, name);
    w->start = off;
    w->len = (size_t)(end - off);
    w->state = WINDOW_LOADING;
    w->pending = plan_pending(ra, (size_t)k, off, end);
    pthread_mutex_unlock(&ra->lock);
    rc = window_load(ra, storage, w, buf, len);
    /* Made once more (the window, if read, freed at once should every
     * planned read in it have been made meanwhile). */
    if ((k = plan_find(ra->plan, name, off)) >= 0)
        plan_consume(ra, (size_t)k, off, len);
    pthread_mutex_unlock(&ra->lock);
    /* A failed window: the read alone says what is wrong, if anything is. */
    return rc == 0 ? 0 : storage->ops->get_range(storage, name, off, buf, len);
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
    if ((k = plan_find(ra->plan, name, off)) >= 0 &&
        (rc = get_planned(ra, storage, name, off, buf, len, k)) != 1)
        return rc;
    if (recent_copy(ra, name, off, buf, len)) {
        pthread_mutex_unlock(&ra->lock);
        return 0;
    }
    if (len >= READAHEAD_SMALL) {
        /* A large read goes alone; the small ones after it still follow on
         * (a tree's large file between its small ones). */
        if ((s = stream_of(ra, name, off, len)) != NULL)
            s->next = off + len;
        pthread_mutex_unlock(&ra->lock);
        return get_alone(ra, storage, name, off, buf, len);
    }
again:
    /* A window holding it: copied (waiting while it is being read). */
    while ((w = window_covering(ra, name, off, len)) != NULL) {
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
        return get_alone(ra, storage, name, off, buf, len);
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
    if (size == 0 || end < off + len || (w = window_victim(ra, READAHEAD_WINDOWS)) == NULL) {
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
    rc = window_load(ra, storage, w, buf, len);
    pthread_mutex_unlock(&ra->lock);
    /* A failed window: the read alone says what is wrong, if anything is. */
    return rc == 0 ? 0 : storage->ops->get_range(storage, name, off, buf, len);
}
