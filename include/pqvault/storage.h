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
 *              the empty prefix lists the top-level names only; at most
 *              PQV_STORAGE_LIST_MAX names, else PQV_E_LIMIT;
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

/* The most names one list call gives (10 million: more blobs than a vault
 * of 40 TB of packs holds under one prefix); a listing beyond it fails with
 * PQV_E_LIMIT: a prefix filled by someone else, or a server whose listing
 * does not end, is refused before it exhausts memory or time.  (S3: also at
 * most PQV_STORAGE_LIST_MAX / 100 pages, so that pages of a few or no keys
 * cannot go on without end either.) */
#define PQV_STORAGE_LIST_MAX 10000000

/* The layout of struct pqv_storage_ops; a backend sets .version to it, so
 * the table can grow (as SQLite's VFS iVersion). */
#define PQV_STORAGE_OPS_VERSION 4

/* Flags of a backend (pqv_storage_ops.flags, version 4).
 * PQV_STORAGE_REMOTE: every request is a round trip over a network (S3):
 * the vault reads neighbouring chunks of a pack, met in order, in one
 * ranged request (docs/DESIGN.md, "Reading packs over a network"). */
#define PQV_STORAGE_REMOTE 1u

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
    /* Version 3.  reserve(s, op, bytes, have): the room kept aside so that
     * rm, forget and gc can commit on a full disk (docs/DESIGN.md, "A full
     * disk"): a file the backend never lists and the vault never reads.
     *   PQV_RESERVE_STAT     the bytes it holds allocated in *${have};
     *                        PQV_E_NOTFOUND if there is none,
     *                        PQV_E_INTEGRITY if something else is at its
     *                        name (a link, directory, FIFO: never followed,
     *                        never touched);
     *   PQV_RESERVE_MAKE     made, or topped up, to hold ${bytes}, durably;
     *                        PQV_E_NOSPACE if they do not fit (then none is
     *                        left);
     *   PQV_RESERVE_RELEASE  removed and its removal durable (the space is
     *                        free on return); PQV_E_NOTFOUND if there was
     *                        none.
     * NULL (and in a table of version 2): no reserve (S3: a bucket does not
     * fill up). */
    int (*reserve)(pqv_storage *s, int op, uint64_t bytes, uint64_t *have);
    /* Version 4.  PQV_STORAGE_* flags (0 in a table of an older version). */
    unsigned flags;
};

/* The operations of reserve. */
enum { PQV_RESERVE_STAT = 0, PQV_RESERVE_MAKE = 1, PQV_RESERVE_RELEASE = 2 };

struct pqv_storage {
    const struct pqv_storage_ops *ops;
};

/* Temporary names left by an interrupted put contain this marker. */
#define PQV_STORAGE_TEMP_MARK ".tmp-"

/* pqv_storage_local_open(out, dir, create): the local-directory backend
 * rooted at ${dir}.  With ${create}, ${dir} is created if missing (and its
 * parent directory synced).  PQV_E_NOVAULT if ${dir} does not exist. */
PQV_API int pqv_storage_local_open(pqv_storage **out, const char *dir, int create) PQV_WARN_UNUSED;

/*
 * The S3-compatible backend (see docs/S3.md).  A vault lives under
 * "s3://BUCKET/PREFIX": blob NAME is the object PREFIX/NAME, the writer lock
 * is the lease object PREFIX/lock.  Requests are signed with AWS Signature
 * Version 4, sent over HTTPS (HTTP only for an http:// endpoint), run in
 * parallel over reused connections and retried with backoff when the
 * failure is transient.
 */
struct pqv_s3_config {
    char *endpoint;        /* "https://host[:port]"; NULL: AWS in ${region} */
    char *region;          /* e.g. "us-east-1" */
    char *access_key;
    char *secret_key;      /* wiped by pqv_s3_config_clear */
    char *session_token;   /* NULL if none; wiped too */
    char *ca_file;         /* CA bundle; NULL: the system's */
    int path_style;        /* 1: http://host/BUCKET/KEY, 0: http://BUCKET.host/KEY,
                              -1: path style for an explicit endpoint */
    unsigned lease_seconds;   /* writer lease; 0: PQV_S3_LEASE_DEFAULT */
    unsigned max_attempts;    /* per request; 0: PQV_S3_ATTEMPTS_DEFAULT */
    unsigned retry_base_ms;   /* first backoff; 0: PQV_S3_RETRY_BASE_DEFAULT */
};

#define PQV_S3_LEASE_DEFAULT 60
#define PQV_S3_LEASE_MIN 2
#define PQV_S3_LEASE_MAX 3600
#define PQV_S3_ATTEMPTS_DEFAULT 6
#define PQV_S3_RETRY_BASE_DEFAULT 100

/* pqv_s3_is_url(location): whether ${location} starts with "s3://". */
PQV_API int pqv_s3_is_url(const char *location);

/*
 * pqv_s3_config_from_env(c, endpoint_opt, ca_opt): fill ${c} from
 * ${endpoint_opt} (else $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, else
 * AWS), $AWS_REGION / $AWS_DEFAULT_REGION (else us-east-1), the
 * credentials $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY and
 * $AWS_SESSION_TOKEN, or else profile $AWS_PROFILE (else "default") of
 * $AWS_SHARED_CREDENTIALS_FILE (else ~/.aws/credentials), and the CA
 * bundle ${ca_opt} (else $AWS_CA_BUNDLE).  Messages never quote a secret.
 * PQV_E_INVAL with a detail if something is missing or malformed.  Clear
 * ${c} with pqv_s3_config_clear, also after a failure.
 */
PQV_API int pqv_s3_config_from_env(struct pqv_s3_config *c, const char *endpoint_opt,
    const char *ca_opt) PQV_WARN_UNUSED;

/* pqv_s3_config_clear(c): wipe the secrets of ${c}, free its strings. */
PQV_API void pqv_s3_config_clear(struct pqv_s3_config *c);

/*
 * pqv_storage_s3_open(out, url, cfg, create): the S3 backend for ${url}
 * ("s3://BUCKET" or "s3://BUCKET/PREFIX"), with a copy of ${cfg}.  The
 * bucket is checked with one listing request: PQV_E_NOVAULT if it does not
 * exist (NoSuchBucket; buckets are never created), PQV_E_IO naming the
 * status and S3 error code for any other refusal (AccessDenied,
 * SignatureDoesNotMatch, ...), PQV_E_INVAL for a malformed URL.
 * ${create} is accepted for symmetry with the local backend.
 */
PQV_API int pqv_storage_s3_open(pqv_storage **out, const char *url, const struct pqv_s3_config *cfg,
    int create) PQV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
