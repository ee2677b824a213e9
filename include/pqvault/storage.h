/*
 * pqvault/storage.h: the storage interface under the vault.  It speaks in
 * whole named blobs, the vocabulary an S3-compatible object store also
 * speaks, so a backend is a table of the operations below and nothing in
 * the vault knows which backend it runs on:
 *
 *   put        store a blob under a name atomically (readers see the old
 *              blob, or none, or the whole new one); its contents are
 *              durable on return, its name at the next barrier;
 *   put_new    the same, but create-only: PQV_E_EXISTS if the name exists
 *              (local: link(2) of the synced temporary; S3: If-None-Match);
 *              two writers racing for one name: exactly one wins;
 *   get        read a whole blob of at most maxlen bytes (PQV_E_INTEGRITY if
 *              larger, PQV_E_NOTFOUND if absent);
 *   get_range  read exactly len bytes at offset (PQV_E_INTEGRITY if the blob
 *              is shorter);
 *   stat       size of a blob, or PQV_E_NOTFOUND;
 *   list       every name under a prefix (including leftover temporaries);
 *              the empty prefix lists the top-level names only;
 *   del        remove a blob (PQV_E_NOTFOUND if absent);
 *   barrier    make every put and del issued so far durable as names (local
 *              directory: fsync each directory touched, once; S3: nothing
 *              to do, a PUT is durable when it returns);
 *   lock       take the exclusive writer lock (local: flock, dies with its
 *              holder; S3: a lease object created conditionally and renewed);
 *   unlock     release it;
 *   lock_probe whether another writer holds the lock, without taking it.
 *
 * Names are '/'-separated relative paths ("segments/0000000000000001"),
 * without "." or ".." components.  A backend is thread-safe: the vault's
 * workers call put and get concurrently.  Every operation returns 0 or a
 * negative PQV_E_* code with a detail naming the blob.
 */
#ifndef PQVAULT_STORAGE_H
#define PQVAULT_STORAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pqvault/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pqv_storage pqv_storage;

/* Called by list for each name; a non-zero return stops the listing and is
 * returned by list.  ${size} is PQV_STORAGE_NOT_A_BLOB for an entry that is
 * not a blob at all (local: a link, FIFO or device planted in the vault). */
#define PQV_STORAGE_NOT_A_BLOB UINT64_MAX
typedef int (*pqv_storage_list_fn)(void *ctx, const char *name, uint64_t size);

/* The layout of struct pqv_storage_ops; a backend sets .version to it, so
 * the table can grow (as SQLite's VFS iVersion). */
#define PQV_STORAGE_OPS_VERSION 2

/* Room for the text naming a lock's holder ("pid 1234 on host"). */
#define PQV_LOCK_HOLDER_MAX 256

struct pqv_storage_ops {
    int version;
    int (*put)(pqv_storage *s, const char *name, const uint8_t *data, size_t len);
    int (*put_new)(pqv_storage *s, const char *name, const uint8_t *data, size_t len);
    int (*get)(pqv_storage *s, const char *name, uint8_t **data, size_t *len,
        size_t maxlen);
    int (*get_range)(pqv_storage *s, const char *name, uint64_t offset,
        uint8_t *buf, size_t len);
    int (*stat)(pqv_storage *s, const char *name, uint64_t *size);
    int (*list)(pqv_storage *s, const char *prefix, pqv_storage_list_fn fn, void *ctx);
    int (*del)(pqv_storage *s, const char *name);
    int (*barrier)(pqv_storage *s);
    /* Exclusive writer lock: PQV_E_LOCKED with ${holder} naming the holder
     * (NUL-terminated, at most ${holderlen} bytes) if busy and ${wait} is
     * 0.  Released by unlock, or when the holder dies (local) or its lease
     * expires (S3). */
    int (*lock)(pqv_storage *s, int wait, char *holder, size_t holderlen);
    void (*unlock)(pqv_storage *s);
    /* lock_probe: 1 if another writer holds the lock now (${holder} names
     * it), 0 if not, negative PQV_E_* if it cannot be told; takes nothing
     * (a reader uses it to tell a running writer's blobs from leftovers).
     * May be NULL: then nothing is known. */
    int (*lock_probe)(pqv_storage *s, char *holder, size_t holderlen);
    void (*close)(pqv_storage *s);
};

struct pqv_storage {
    const struct pqv_storage_ops *ops;
};

/* Temporary names left by an interrupted put contain this marker. */
#define PQV_STORAGE_TEMP_MARK ".tmp-"

/* pqv_storage_local_open(out, dir, create): the local-directory backend
 * rooted at ${dir}.  With ${create}, ${dir} is created if missing (and its
 * parent directory synced).  PQV_E_NOVAULT if ${dir} does not exist. */
PQV_API int pqv_storage_local_open(pqv_storage **out, const char *dir, int create) PQV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
