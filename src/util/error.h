/*
 * error.h: how the library reports a failure: as data.  The last failure of
 * the calling thread is a struct pqv_error (pqvault/common.h): its code, its
 * subject (the file, name or blob concerned) and its reason, kept apart so
 * that callers choose their own words (the CLI adds hints about its flags
 * from the code and the command; nothing matches on message text).
 *
 * The error is recorded where it is first detected.  A caller that adds
 * context re-attributes it with error_subject(); a cleanup path that may
 * itself fail brackets its work with error_save()/error_restore() so the
 * first failure is the one reported.
 */
#ifndef PQV_ERROR_H
#define PQV_ERROR_H

#include "pqvault/common.h"

/* error_set(code, subject, fmt, ...): record ${code} about ${subject} (NULL:
 * none) with the reason formatted from ${fmt} (NULL: none); returns ${code}. */
int error_set(int code, const char *subject, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* error_errno(subject, op, err): record the failure of the system call ${op}
 * on ${subject} with errno ${err} ("op: strerror(err)", code from
 * error_from_errno); returns the code. */
int error_errno(const char *subject, const char *op, int err);

/* error_from_errno(err): the PQV_E_* code for the errno value ${err}. */
int error_from_errno(int err);

/* error_subject(code, subject): re-attribute the current failure to
 * ${subject} with code ${code}; its former subject, if any, moves to the
 * front of the reason ("former: reason").  Returns ${code}. */
int error_subject(int code, const char *subject);

/* A saved failure, for cleanup paths. */
struct error_saved {
    struct pqv_error e;
};

/* error_save(s) / error_restore(s): keep the current failure in ${s} and
 * make it current again later. */
void error_save(struct error_saved *s);
void error_restore(const struct error_saved *s);

#endif
