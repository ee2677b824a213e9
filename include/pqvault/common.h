/*
 * pqvault/common.h: error codes and small helpers shared by every public
 * header of libpqvault.
 *
 * Every library function that can fail returns 0 on success or one of the
 * negative PQV_E_* codes below.  A short human-readable explanation of the
 * most recent failure in the calling thread is available from
 * pqv_error_detail(); it never contains secret material.
 */
#ifndef PQVAULT_COMMON_H
#define PQVAULT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PQV_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define PQV_WARN_UNUSED
#endif

/* Error codes.  The CLI maps them to its documented exit statuses. */
enum pqv_error {
    PQV_OK = 0,
    PQV_E_INVAL = -1,      /* bad argument from the caller (usage error) */
    PQV_E_IO = -2,         /* operating-system I/O error */
    PQV_E_NOMEM = -3,      /* allocation failed */
    PQV_E_NOTFOUND = -4,   /* no such name / file */
    PQV_E_EXISTS = -5,     /* refusing to replace something that exists */
    PQV_E_AUTH = -6,       /* wrong passphrase or recovery code */
    PQV_E_INTEGRITY = -7,  /* corruption or tampering detected */
    PQV_E_NOVAULT = -8,    /* no vault at the given location */
    PQV_E_LOCKED = -9,     /* vault locked by another writer */
    PQV_E_UNSUPPORTED = -10, /* unknown format version or algorithm */
    PQV_E_CRYPTO = -11,    /* internal failure of a crypto primitive */
    PQV_E_NOSPACE = -12    /* no space left / quota exceeded */
};

/* pqv_strerror(err): a constant English description of ${err}. */
const char *pqv_strerror(int err);

/*
 * pqv_error_detail(): the detail message recorded by the last failing call
 * in this thread (for example "key file: truncated slot 1"), or "" if none.
 */
const char *pqv_error_detail(void);

/* pqv_error_clear(): forget this thread's detail message. */
void pqv_error_clear(void);

#ifdef __cplusplus
}
#endif
#endif
