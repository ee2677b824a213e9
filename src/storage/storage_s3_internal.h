/*
 * storage/storage_s3_internal.h: the S3 backend's state and helpers, shared
 * by storage_s3.c (the operations), storage_s3_list.c (listing) and
 * s3_lease.c (the writer lock, a lease object renewed by a thread).
 */
#ifndef PQV_STORAGE_S3_INTERNAL_H
#define PQV_STORAGE_S3_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pqvault/storage.h"
#include "storage/s3_config.h"
#include "storage/s3_http.h"

#define LEASE_NAME "lock"
#define LEASE_BODY_MAX 1024
/* "<boot id> <pid namespace> <pid> <start time>" of a lease's holder. */
#define LEASE_PROCESS_MAX 160
#define LIST_PAGE_KEYS "1000"

struct s3_storage {
    pqv_storage base;
    s3_http *http;
    char bucket[S3_BUCKET_MAX];
    char prefix[S3_PREFIX_MAX];       /* "" or "a/b" (no final '/') */
    char url[S3_BUCKET_MAX + S3_PREFIX_MAX + 8];

    pthread_mutex_t mu;
    pthread_cond_t cond;              /* CLOCK_MONOTONIC */
    unsigned writes;                  /* puts and dels in flight */

    /* The lease, under mu. */
    unsigned lease_seconds;
    int locked, lost, stop, renewer_running;
    char lost_why[160];
    char token[33];
    char holder[128];                 /* ours: "pid N on HOST" */
    char process[LEASE_PROCESS_MAX];  /* ours, storage_s3_process ("" if unknown) */
    char etag[80];                    /* of our lease object, unquoted */
    int quote_etag;                   /* the server wants If-Match quoted */
    uint64_t serial;
    int64_t last_ok_ms;               /* storage_s3_boot_ms() before the last good write */
    pthread_t renewer;
    uint64_t list_max;                /* names a listing may give (PQV_STORAGE_LIST_MAX) */
};

/* storage_s3_boot_ms(): milliseconds on CLOCK_BOOTTIME, which keeps
 * counting while the machine is suspended (CLOCK_MONOTONIC does not): a
 * lease's time runs on the server while this host sleeps. */
int64_t storage_s3_boot_ms(void);
/* storage_s3_process(out, outlen, pid): process ${pid} of this host as
 * "<boot id> <pid namespace> <pid> <start time in clock ticks>" (what a
 * lease records of its holder, so that a writer of the same host can tell
 * that it died); nonzero if /proc does not say. */
int storage_s3_process(char *out, size_t outlen, pid_t pid);
/* storage_s3_mono_ms(): milliseconds on CLOCK_MONOTONIC. */
int64_t storage_s3_mono_ms(void);
/* storage_s3_object_key(s, name, key, keylen): "PREFIX/NAME" (or NAME),
 * after checking that ${name} is a relative name without "." or ".."
 * components. */
int storage_s3_object_key(const struct s3_storage *s, const char *name, char *key, size_t keylen);
/* storage_s3_unquote(etag, out, outlen): an ETag without its quotes. */
void storage_s3_unquote(const char *etag, char *out, size_t outlen);
/* storage_s3_fail(s, name, rc, r): the failure of a request about blob
 * ${name} recorded from its response; returns the PQV_E_* code. */
int storage_s3_fail(const struct s3_storage *s, const char *name, int rc, const struct s3_resp *r);
/* storage_s3_do_put(s, name, key, data, len, cond, r): one PUT of ${data}
 * to ${key} (blob ${name}) with the conditional header ${cond} (NULL:
 * none); the response in ${r}. */
int storage_s3_do_put(struct s3_storage *s, const char *name, const char *key,
    const uint8_t *data, size_t len, const struct s3_header *cond, struct s3_resp *r);
/* storage_s3_do_get(s, key, maxlen, r): one GET of ${key}. */
int storage_s3_do_get(struct s3_storage *s, const char *key, size_t maxlen, struct s3_resp *r);

/* ---- storage_s3_list.c ---- */

/* storage_s3_list(st, prefix, fn, ctx): the ops list of pqvault/storage.h. */
int storage_s3_list(pqv_storage *st, const char *prefix, pqv_storage_list_fn fn, void *ctx);

/* ---- s3_lease.c ---- */

/* s3_lease_valid_locked(s): this writer's lease is still ours (under mu). */
int s3_lease_valid_locked(const struct s3_storage *s);
/* s3_lease_check_locked(s, name): PQV_E_LOCKED if this writer took the
 * lease and has lost it (taken over, or not renewed in time; under mu). */
int s3_lease_check_locked(struct s3_storage *s, const char *name);
/* s3_lease_lock(st, wait, holder, holderlen) and s3_lease_unlock(st): the
 * storage interface's lock and unlock. */
int s3_lease_lock(pqv_storage *st, int wait, char *holder, size_t holderlen);
void s3_lease_unlock(pqv_storage *st);

#endif
