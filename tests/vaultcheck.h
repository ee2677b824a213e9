/*
 * vaultcheck.h: what the crash and fault tests expect of a vault after an
 * interrupted or failed operation (shared by test_crash.c and
 * test_faults.c; header-only, static functions).
 *
 * A scenario describes every name it cares about with the states allowed
 * afterwards: a file committed before the operation has old == new; the
 * file being written may be found in its old state or its new one (absent
 * is a state), never anything else.  vc_verify_vault runs check (which must
 * return 0: orphans and temporaries are reported, not errors), reads every
 * file back byte-exact through pqv_vault_get_fd, then collects the garbage
 * and requires a clean check.
 */
#ifndef PQV_TEST_VAULTCHECK_H
#define PQV_TEST_VAULTCHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pqvault/vault.h"

#define VC_PASS "correct horse battery"
#define VC_NEWPASS "new passphrase 42"
#define VC_KEM "FrodoKEM-640-AES"

static const struct pqv_kdf_params vc_cheap_kdf = { 1, 64, 1 };

/* One name and the states allowed for it. */
struct vc_want {
    char name[128];
    int type;                /* PQV_ENTRY_FILE or PQV_ENTRY_DIR */
    int old_present, new_present;
    const uint8_t *old_data, *new_data;
    size_t old_len, new_len;
};

struct vc_model {
    struct vc_want w[32];
    size_t n;
};

static void
vc_model_file(struct vc_model *m, const char *name, const uint8_t *old_data, size_t old_len,
    int old_present, const uint8_t *new_data, size_t new_len, int new_present)
{
    struct vc_want *w = &m->w[m->n++];

    memset(w, 0, sizeof(*w));
    snprintf(w->name, sizeof(w->name), "%s", name);
    w->type = PQV_ENTRY_FILE;
    w->old_present = old_present;
    w->new_present = new_present;
    w->old_data = old_data;
    w->old_len = old_len;
    w->new_data = new_data;
    w->new_len = new_len;
}

/* A file committed before the operation and untouched by it. */
static void
vc_model_kept(struct vc_model *m, const char *name, const uint8_t *data, size_t len)
{
    vc_model_file(m, name, data, len, 1, data, len, 1);
}

static void
vc_model_dir(struct vc_model *m, const char *name, int old_present, int new_present)
{
    struct vc_want *w = &m->w[m->n++];

    memset(w, 0, sizeof(*w));
    snprintf(w->name, sizeof(w->name), "%s", name);
    w->type = PQV_ENTRY_DIR;
    w->old_present = old_present;
    w->new_present = new_present;
}

/* Deterministic test data. */
static uint8_t *
vc_data(size_t len, unsigned seed)
{
    uint8_t *p = malloc(len ? len : 1);
    uint32_t x = 2463534242u ^ (seed * 2654435761u);

    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
    return p;
}

static int
vc_fail(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Counting report callback for check and gc. */
struct vc_reports {
    unsigned errors, warnings;
    char first_error[256];
};

static void
vc_report(void *ctx, int level, const char *subject, const char *message)
{
    struct vc_reports *r = ctx;

    if (level == PQV_REPORT_ERROR) {
        if (r->errors++ == 0)
            snprintf(r->first_error, sizeof(r->first_error), "%s: %s", subject, message);
    } else if (level == PQV_REPORT_WARNING) {
        r->warnings++;
    }
}

/* vc_read_file(v, name, out, len): the plaintext of ${name}. */
static int
vc_read_file(pqv_vault *v, const char *name, uint8_t **out, size_t *len)
{
    int fd = memfd_create("vc", MFD_CLOEXEC);
    off_t end;
    int rc;

    if (fd < 0)
        return PQV_E_IO;
    rc = pqv_vault_get_fd(v, name, fd, NULL);
    if (rc == 0) {
        end = lseek(fd, 0, SEEK_END);
        *out = malloc(end > 0 ? (size_t)end : 1);
        *len = (size_t)end;
        if (end < 0 || pread(fd, *out, (size_t)end, 0) != end) {
            free(*out);
            rc = PQV_E_IO;
        }
    }
    close(fd);
    return rc;
}

/* vc_check_names(v, m, completed, why, whylen): every name of ${m} is in an
 * allowed state (with ${completed}: the new state). */
static int
vc_check_names(pqv_vault *v, const struct vc_model *m, int completed, char *why, size_t whylen)
{
    /* Format 2: one command is one epoch, so the names it changes are all
     * old or all new, never a mix. */
    const char *first_old = NULL, *first_new = NULL;

    for (size_t i = 0; i < m->n; i++) {
        const struct vc_want *w = &m->w[i];
        struct pqv_entry e;
        int rc = pqv_vault_lookup(v, w->name, &e);
        int ok_absent = (!completed && !w->old_present) || !w->new_present;

        if (rc == PQV_E_NOTFOUND) {
            if (!ok_absent)
                return vc_fail(why, whylen, "%s: absent", w->name);
            if (w->old_present != w->new_present) {
                if (w->old_present)
                    first_new = first_new ? first_new : w->name;
                else
                    first_old = first_old ? first_old : w->name;
            }
            continue;
        }
        if (rc != 0)
            return vc_fail(why, whylen, "%s: lookup: %d %s", w->name, rc, pqv_error_detail());
        int type = e.type;
        pqv_entry_clear(&e);
        if (completed ? !w->new_present : (!w->old_present && !w->new_present))
            return vc_fail(why, whylen, "%s: present, should be absent", w->name);
        if (type != w->type)
            return vc_fail(why, whylen, "%s: wrong type %d", w->name, type);
        if (w->old_present != w->new_present) {
            if (w->new_present)
                first_new = first_new ? first_new : w->name;
            else
                first_old = first_old ? first_old : w->name;
        }
        if (w->type != PQV_ENTRY_FILE)
            continue;
        uint8_t *data;
        size_t len;
        if ((rc = vc_read_file(v, w->name, &data, &len)) != 0)
            return vc_fail(why, whylen, "%s: get: %d %s", w->name, rc, pqv_error_detail());
        int is_new = w->new_present && len == w->new_len && memcmp(data, w->new_data, len) == 0;
        int is_old = w->old_present && len == w->old_len && memcmp(data, w->old_data, len) == 0;
        free(data);
        if (!is_new && !(is_old && !completed))
            return vc_fail(why, whylen, "%s: content is neither the %s version (%zu bytes)",
                w->name, completed ? "new" : "old nor the new", len);
        if (w->old_present && w->new_present && is_new != is_old) {
            if (is_new)
                first_new = first_new ? first_new : w->name;
            else
                first_old = first_old ? first_old : w->name;
        }
    }
    if (first_old != NULL && first_new != NULL)
        return vc_fail(why, whylen, "a mix of two epochs: %s is old, %s is new", first_old,
            first_new);
    return 0;
}

/*
 * vc_verify_vault(v, m, completed, gc, why, whylen): check passes, every
 * name is in an allowed state; with ${gc} (the writer lock must be held):
 * gc succeeds, then check finds no orphans nor temporaries and the names
 * are still as they were.  Returns 0 or -1 with ${why}.
 */
static int
vc_verify_vault(pqv_vault *v, const struct vc_model *m, int completed, int gc, char *why,
    size_t whylen, struct pqv_check_result *before)
{
    struct vc_reports rep;
    struct pqv_check_result res;
    int rc;

    memset(&rep, 0, sizeof(rep));
    if ((rc = pqv_vault_check(v, &(struct pqv_check_options){ 0, vc_report, &rep }, &res)) != 0)
        return vc_fail(why, whylen, "check: %d %s (%s)", rc, pqv_error_detail(), rep.first_error);
    if (before != NULL)
        *before = res;
    if (vc_check_names(v, m, completed, why, whylen) != 0)
        return -1;
    if (!gc)
        return 0;
    if ((rc = pqv_vault_gc(v, NULL, &res)) != 0)
        return vc_fail(why, whylen, "gc: %d %s", rc, pqv_error_detail());
    memset(&rep, 0, sizeof(rep));
    if ((rc = pqv_vault_check(v, &(struct pqv_check_options){ 0, vc_report, &rep }, &res)) != 0)
        return vc_fail(why, whylen, "check after gc: %d %s (%s)", rc, pqv_error_detail(),
            rep.first_error);
    if (res.orphans != 0 || res.temporaries != 0)
        return vc_fail(why, whylen, "after gc: %llu orphans, %llu temporaries left",
            (unsigned long long)res.orphans, (unsigned long long)res.temporaries);
    return vc_check_names(v, m, completed, why, whylen);
}

#endif
