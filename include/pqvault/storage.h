/*
 * pqvault/storage.h: the storage interface under the vault.  It speaks in
 * whole named blobs, the vocabulary an S3-compatible object store also
 * speaks, so another backend can be added without touching the vault:
 *
 *   put      store a blob under a name atomically (readers see the old blob,
 *            or none, or the whole new one), its contents durable on return;
 *   get      read a whole blob;
 *   stat     size of a blob, or PQV_E_NOTFOUND;
 *   list     every name under a prefix (including leftover temporaries);
 *            the empty prefix lists the top-level names only;
 *   del      remove a blob;
 *   barrier  make every put and del issued so far durable as names (for
 *            the local directory: fsync each directory touched, once).
 *
 * Names are '/'-separated relative paths ("records/ab/ab12...").  A backend
 * is thread-safe: the vault's workers call put and get concurrently.
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
 * returned by list. */
typedef int (*pqv_storage_list_fn)(void *ctx, const char *name, uint64_t size);

struct pqv_storage_ops {
    int (*put)(pqv_storage *s, const char *name, const uint8_t *data, size_t len);
    int (*get)(pqv_storage *s, const char *name, uint8_t **data, size_t *len,
        size_t maxlen);
    int (*stat)(pqv_storage *s, const char *name, uint64_t *size);
    int (*list)(pqv_storage *s, const char *prefix, pqv_storage_list_fn fn, void *ctx);
    int (*del)(pqv_storage *s, const char *name);
    int (*barrier)(pqv_storage *s);
    /* Exclusive writer lock: PQV_E_LOCKED with *holder set if busy and
     * ${wait} is 0.  Released by unlock or when the process dies. */
    int (*lock)(pqv_storage *s, int wait, long *holder);
    void (*unlock)(pqv_storage *s);
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
int pqv_storage_local_open(pqv_storage **out, const char *dir, int create) PQV_WARN_UNUSED;

/* pqv_storage_local_path(s, name, out, outlen): the file path of ${name}. */
int pqv_storage_local_path(pqv_storage *s, const char *name, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif
