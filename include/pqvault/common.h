/*
 * pqvault/common.h: error codes and small helpers shared by every public
 * header of libpqvault.
 *
 * Every library function that can fail returns 0 on success or one of the
 * negative PQV_E_* codes below.  The most recent failure in the calling
 * thread is kept as data (code, subject, reason: pqv_error_last) and as one
 * line of text (pqv_error_detail); neither ever contains secret material.
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

/* PQV_API marks the library's interface: everything else is hidden
 * (compiled with -fvisibility=hidden) and made local in libpqvault.a. */
#if defined(__GNUC__) || defined(__clang__)
#define PQV_API __attribute__((visibility("default")))
#else
#define PQV_API
#endif

/* Error codes.  The CLI maps them to its documented exit statuses. */
enum pqv_error_code {
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
    PQV_E_NOSPACE = -12,   /* no space left / quota exceeded */
    PQV_E_LIMIT = -13      /* exceeds a configured limit (a key file slot's
                              Argon2id cost above what the reader accepts:
                              pqv_vault_set_kdf_limit) */
};

/* pqv_strerror(err): a constant English description of ${err}. */
PQV_API const char *pqv_strerror(int err);

/* The last failure of the calling thread, as data. */
#define PQV_ERROR_SUBJECT_MAX 4352
#define PQV_ERROR_REASON_MAX 1024
struct pqv_error {
    int code;                             /* PQV_E_* */
    char subject[PQV_ERROR_SUBJECT_MAX];  /* file, stored name or blob; "" if none */
    char reason[PQV_ERROR_REASON_MAX];    /* why, in words; "" if only the code says */
};

/* pqv_error_last(): the last failure recorded in this thread (code 0 and
 * empty strings if none since pqv_error_clear). */
PQV_API const struct pqv_error *pqv_error_last(void);

/*
 * pqv_error_detail(): the last failure as one line, "subject: reason" (for
 * example "keyfile: truncated slot 1"), or "" if none.  It never contains
 * secret material.
 */
PQV_API const char *pqv_error_detail(void);

/* pqv_error_clear(): forget this thread's last failure. */
PQV_API void pqv_error_clear(void);

/*
 * pqv_remove_temporaries(): remove every temporary file the library is
 * writing at this moment (in the vault and at restore destinations).
 * Async-signal-safe: for a program's SIGINT/SIGTERM/SIGHUP/SIGPIPE handler,
 * which then ends the program, so that no partial plaintext is left behind.
 */
PQV_API void pqv_remove_temporaries(void);

#ifdef __cplusplus
}
#endif
#endif
