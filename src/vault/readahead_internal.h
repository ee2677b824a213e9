/*
 * vault/readahead_internal.h: the read-ahead's state, shared by its two
 * stages only: readahead.c (windows, streams, reads kept, every read's
 * way) and readahead_plan.c (plans: reads announced and served from
 * windows over them).  Everyone else uses vault/readahead.h.  (Split
 * from readahead.c when plans made it 860 lines.)
 *
 * All of it under ra->lock, except a LOADING window's bytes, which are
 * the loading reader's.
 */
#ifndef PQV_VAULT_READAHEAD_INTERNAL_H
#define PQV_VAULT_READAHEAD_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

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
    uint32_t seq;                /* readahead_plan_expect's: when announced last */
};

struct readahead_plan {
    char **names;                /* the blobs, each once */
    size_t nnames;
    uint32_t *slots;             /* hash of names: index + 1, 0 empty */
    size_t nslots;               /* a power of two, at least twice nnames */
    struct planned *reads;       /* sorted by name, off, len once set */
    size_t n, cap;
    uint32_t seq;                /* reads announced by readahead_plan_expect */
    int live;                    /* made by readahead_plan_expect */
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

/* readahead_window_covering(ra, name, off, len): a window (loading or
 * ready) holding all of [off, off + len) of ${name}, or NULL.
 * readahead_window_empty(w): ${w}'s bytes freed, the window unused.
 * readahead_window_victim(ra, count): an empty window among the first
 * ${count}, else the least recently used ready one (emptied); NULL if all
 * are loading.
 * readahead_window_load(ra, storage, w, buf, len): window ${w} (LOADING,
 * the caller's) read, its first ${len} bytes copied to ${buf}; nonzero
 * and emptied if the storage failed; ra->lock not held on entry, held on
 * return.
 * readahead_recent_copy(ra, name, off, buf, len): 1 and the bytes copied
 * if a kept read holds them all, else 0.
 * readahead_get_alone(ra, storage, name, off, buf, len): a read straight
 * to the storage, kept as readahead.c says; ra->lock not held.
 * (readahead.c; ra->lock held unless said.) */
struct window *readahead_window_covering(struct readahead *ra, const char *name, uint64_t off,
    size_t len);
void readahead_window_empty(struct window *w);
struct window *readahead_window_victim(struct readahead *ra, size_t count);
int readahead_window_load(struct readahead *ra, pqv_storage *storage, struct window *w,
    uint8_t *buf, size_t len);
int readahead_recent_copy(struct readahead *ra, const char *name, uint64_t off, uint8_t *buf,
    size_t len);
int readahead_get_alone(struct readahead *ra, pqv_storage *storage, const char *name,
    uint64_t off, uint8_t *buf, size_t len);

/* readahead_plan_find(p, name, off): the index of ${p}'s first planned
 * read of ${name} starting at ${off}, or -1 (${p} NULL: -1).
 * readahead_plan_get(ra, storage, name, off, buf, len, k): a read the
 * plan holds (from index ${k}), as readahead_plan.c says; ra->lock held
 * on entry and let go on return, but 1 with it held for a read to go on
 * as unplanned.  (readahead_plan.c.) */
long readahead_plan_find(const struct readahead_plan *p, const char *name, uint64_t off);
int readahead_plan_get(struct readahead *ra, pqv_storage *storage, const char *name,
    uint64_t off, uint8_t *buf, size_t len, long k);

#endif
