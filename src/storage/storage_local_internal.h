/*
 * storage/storage_local_internal.h: the local-directory backend's state,
 * shared by its files only:
 *   storage_local.c          names, directories, blobs, listing, barrier,
 *                            the ops table and opening
 *   storage_local_lock.c     the writer lock (an flock on <dir>/lock)
 *   storage_local_reserve.c  the reserve kept for a full disk
 * storage_local.c's opening comment says how the backend is built.
 */
#ifndef PQV_STORAGE_LOCAL_INTERNAL_H
#define PQV_STORAGE_LOCAL_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "pqvault/storage.h"

#define NAME_MAX_LEN 1024
#define RESERVE_NAME "reserve"
#define MAX_DIRTY 1024
/* Directory descriptors kept open for the session (a vault has a few
 * hundred directories); beyond this, opened and closed each time.  Never
 * evicted, so a descriptor another thread uses is never closed under it. */
#define MAX_CACHED_DIRS 320
#define MAX_CACHED_FILES 16

struct local_storage {
    pqv_storage base;
    char *root;              /* the directory's path, for messages */
    int rootfd;
    pthread_mutex_t mutex;
    char *dirty[MAX_DIRTY];  /* directories (relative) to fsync at the next barrier */
    size_t ndirty;
    char *seen[MAX_DIRTY];   /* directories whose entries were made durable */
    size_t nseen;
    pthread_mutex_t dirs_mutex;  /* guards dirs (taken alone, never with mutex) */
    struct {
        char *name;          /* relative to the root */
        int fd;
    } dirs[MAX_CACHED_DIRS];
    size_t ndirs;
    int lock_fd;
    /* Packs open for ranged reads (a restore reads many chunks of few
     * packs: one open each, not one a chunk).  A pack is never rewritten,
     * only deleted; one deleted here is dropped from the cache. */
    pthread_mutex_t files_mutex;
    struct {
        char *name;
        int fd;
        unsigned users;          /* reads in progress (never closed then) */
        uint64_t used;           /* when last taken (LRU) */
    } files[MAX_CACHED_FILES];
    uint64_t files_clock;
};

/* storage_local_path(ls, name, out): "<root>/<name>", what messages (and
 * the test build's fault hooks) name. */
void storage_local_path(struct local_storage *ls, const char *name,
    char out[2 * NAME_MAX_LEN + 4096]);

/* The writer lock (storage_local_lock.c): the ops lock, lock_probe and
 * unlock of pqvault/storage.h. */
int storage_local_lock_take(pqv_storage *s, int wait, char *holder, size_t holderlen);
int storage_local_lock_probe(pqv_storage *s, char *holder, size_t holderlen);
void storage_local_lock_release(pqv_storage *s);

/* The reserve (storage_local_reserve.c): the ops reserve. */
int storage_local_reserve(pqv_storage *s, int op, uint64_t bytes, uint64_t *have);

#endif
