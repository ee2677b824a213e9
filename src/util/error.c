/*
 * error.c: the thread's last failure, as data (see error.h).
 */
#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local struct pqv_error last;
static _Thread_local char detail[sizeof(last.subject) + sizeof(last.reason) + 2];

int
error_set(int code, const char *subject, const char *fmt, ...)
{
    va_list ap;

    last.code = code;
    snprintf(last.subject, sizeof(last.subject), "%s", subject != NULL ? subject : "");
    last.reason[0] = '\0';
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(last.reason, sizeof(last.reason), fmt, ap);
        va_end(ap);
    }
    return code;
}

int
error_from_errno(int err)
{
    switch (err) {
    case ENOENT: return PQV_E_NOTFOUND;
    case EEXIST: return PQV_E_EXISTS;
    case ENOMEM: return PQV_E_NOMEM;
    case ENOSPC:
    case EDQUOT: return PQV_E_NOSPACE;
    default: return PQV_E_IO;
    }
}

int
error_errno(const char *subject, const char *op, int err)
{
    return error_set(error_from_errno(err), subject, "%s: %s", op, strerror(err));
}

int
error_subject(int code, const char *subject)
{
    char reason[sizeof(last.reason)];
    size_t n = 0;

    /* The former subject first (cut to fit), then the former reason. */
    if (last.subject[0] != '\0' && strcmp(last.subject, subject) != 0) {
        n = strnlen(last.subject, sizeof(reason) / 2);
        memcpy(reason, last.subject, n);
        if (last.reason[0] != '\0') {
            reason[n++] = ':';
            reason[n++] = ' ';
        }
    }
    snprintf(reason + n, sizeof(reason) - n, "%s", last.reason);
    return error_set(code, subject, "%s", reason);
}

void
error_save(struct error_saved *s)
{
    s->e = last;
}

void
error_restore(const struct error_saved *s)
{
    last = s->e;
}

const struct pqv_error *
pqv_error_last(void)
{
    return &last;
}

const char *
pqv_error_detail(void)
{
    const char *reason = last.reason[0] != '\0' ? last.reason :
        last.code != 0 ? pqv_strerror(last.code) : "";

    if (last.subject[0] != '\0')
        snprintf(detail, sizeof(detail), "%s: %s", last.subject, reason);
    else
        snprintf(detail, sizeof(detail), "%s", reason);
    return detail;
}

void
pqv_error_clear(void)
{
    memset(&last, 0, sizeof(last));
}

const char *
pqv_strerror(int err)
{
    switch (err) {
    case PQV_OK: return "success";
    case PQV_E_INVAL: return "invalid argument";
    case PQV_E_IO: return "input/output error";
    case PQV_E_NOMEM: return "out of memory";
    case PQV_E_NOTFOUND: return "not found";
    case PQV_E_EXISTS: return "already exists";
    case PQV_E_AUTH: return "wrong passphrase or recovery code";
    case PQV_E_INTEGRITY: return "integrity check failed";
    case PQV_E_NOVAULT: return "no vault at this location";
    case PQV_E_LOCKED: return "vault is locked by another writer";
    case PQV_E_UNSUPPORTED: return "unsupported format or algorithm";
    case PQV_E_CRYPTO: return "cryptographic library failure";
    case PQV_E_NOSPACE: return "no space left on device";
    case PQV_E_LIMIT: return "exceeds a configured limit";
    default: return "unknown error";
    }
}
