/*
 * readahead_plan.c: the read-ahead's plans (vault/readahead.h says what
 * and why): reads announced, all at once (a restore) or as they come (a
 * mount), kept sorted by blob and offset with how many times each is
 * still to be made; a planned read served from a window reaching over the
 * planned reads after it.  State and the window and kept-read helpers:
 * readahead_internal.h, readahead.c.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pqvault/common.h"
#include "vault/readahead_internal.h"

uint64_t
readahead_plan_left(struct readahead *ra)
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

/* plan_key(p, name, off, len, key): ${key} the read [off, off + len) of
 * ${name} (its name added to ${p} if new), made once; PQV_E_INVAL for a
 * name too long or a length out of bounds. */
static int
plan_key(struct readahead_plan *p, const char *name, uint64_t off, size_t len,
    struct planned *key)
{
    uint32_t idx;
    int rc;

    if (strlen(name) >= NAME_MAX_BYTES || len == 0 || len > UINT32_MAX ||
        off > UINT64_MAX - READAHEAD_MAX - len)
        return PQV_E_INVAL;
    if ((rc = plan_name(p, name, &idx)) != 0)
        return rc;
    *key = (struct planned){ off, idx, (uint32_t)len, 1, 0 };
    return 0;
}

/* plan_room(p): room for one more read in ${p}; PQV_E_NOMEM. */
static int
plan_room(struct readahead_plan *p)
{
    if (p->n == p->cap) {
        size_t cap = p->cap == 0 ? 1024 : 2 * p->cap;
        struct planned *grown = realloc(p->reads, cap * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        p->reads = grown;
        p->cap = cap;
    }
    return 0;
}

/* plan_lower_bound(p, key): the first of ${p}'s sorted reads not before
 * ${key}. */
static size_t
plan_lower_bound(const struct readahead_plan *p, const struct planned *key)
{
    size_t lo = 0, hi = p->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (planned_order(&p->reads[mid], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int
readahead_plan_add(struct readahead_plan *p, const char *name, uint64_t off, size_t len)
{
    struct planned key;
    int rc;

    if (p->n >= READAHEAD_PLAN_MAX)
        return PQV_E_INVAL;
    if ((rc = plan_key(p, name, off, len, &key)) != 0 || (rc = plan_room(p)) != 0)
        return rc;
    p->reads[p->n++] = key;
    return 0;
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
readahead_plan_expect(struct readahead *ra, const char *name, uint64_t off, size_t len)
{
    struct readahead_plan *p;
    struct planned key;
    size_t at;
    int rc;

    if (ra == NULL)
        return 0;
    pthread_mutex_lock(&ra->lock);
    if (ra->plan == NULL && (ra->plan = readahead_plan_new()) == NULL) {
        pthread_mutex_unlock(&ra->lock);
        return PQV_E_NOMEM;
    }
    p = ra->plan;
    p->live = 1;
    if (p->n >= READAHEAD_EXPECT_MAX)
        plan_prune(p);
    if ((rc = plan_key(p, name, off, len, &key)) != 0)
        goto out;
    key.seq = ++p->seq;
    at = plan_lower_bound(p, &key);
    if (at < p->n && planned_order(&p->reads[at], &key) == 0) {
        p->reads[at].left++;
        p->reads[at].seq = key.seq;
        goto out;
    }
    if ((rc = plan_room(p)) != 0)
        goto out;
    memmove(&p->reads[at + 1], &p->reads[at], (p->n - at) * sizeof(*p->reads));
    p->reads[at] = key;
    p->n++;
out:
    pthread_mutex_unlock(&ra->lock);
    return rc;
}

/* readahead_plan_find(p, name, off): the first planned read of ${name}
 * starting at ${off}, or -1. */
long
readahead_plan_find(const struct readahead_plan *p, const char *name, uint64_t off)
{
    struct planned key = { off, 0, 0, 0, 0 };
    uint32_t *slot;
    size_t at;

    if (p == NULL || p->n == 0 || *(slot = plan_slot(p, name)) == 0)
        return -1;
    key.name = *slot - 1;
    at = plan_lower_bound(p, &key); /* (length 0: before any read there) */
    return at < p->n && p->reads[at].name == key.name && p->reads[at].off == off ? (long)at : -1;
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
                readahead_window_empty(w);
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

/* readahead_plan_get(ra, storage, name, off, buf, len, k): a read the
 * plan holds (from ${k}): from a window that holds it, else from a new one reaching
 * over the planned reads after it, else alone; made once more in the plan
 * either way.  ra->lock held on entry, let go on return; but 1, the lock
 * held, for a read of a plan readahead_plan_expect makes with nothing
 * announced after it (to read as unplanned). */
int
readahead_plan_get(struct readahead *ra, pqv_storage *storage, const char *name, uint64_t off,
    uint8_t *buf, size_t len, long k)
{
    struct window *w;
    uint64_t end;
    int rc;

    if (readahead_recent_copy(ra, name, off, buf, len)) {
        plan_consume(ra, (size_t)k, off, len);
        pthread_mutex_unlock(&ra->lock);
        return 0;
    }
    while ((w = readahead_window_covering(ra, name, off, len)) != NULL) {
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
        if ((k = readahead_plan_find(ra->plan, name, off)) < 0) {
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
    if (end == off + len || (w = readahead_window_victim(ra, READAHEAD_PLANNED_WINDOWS)) == NULL) {
        plan_consume(ra, (size_t)k, off, len);
        pthread_mutex_unlock(&ra->lock);
        return readahead_get_alone(ra, storage, name, off, buf, len);
    }
    strcpy(w->name, name);
    w->start = off;
    w->len = (size_t)(end - off);
    w->state = WINDOW_LOADING;
    w->pending = plan_pending(ra, (size_t)k, off, end);
    pthread_mutex_unlock(&ra->lock);
    rc = readahead_window_load(ra, storage, w, buf, len);
    /* Made once more (the window, if read, freed at once should every
     * planned read in it have been made meanwhile). */
    if ((k = readahead_plan_find(ra->plan, name, off)) >= 0)
        plan_consume(ra, (size_t)k, off, len);
    pthread_mutex_unlock(&ra->lock);
    /* A failed window: the read alone says what is wrong, if anything is. */
    return rc == 0 ? 0 : storage->ops->get_range(storage, name, off, buf, len);
}
