/*
 * s3_lease.c: the S3 backend's writer lock, a lease: the object
 * PREFIX/lock, created with If-None-Match: *, renewed by a thread every
 * third of its duration with If-Match on its ETag, taken over (If-Match
 * again) only once the server's own Date is past the object's
 * Last-Modified plus its duration.  A writer that cannot renew in time, or
 * finds the lease taken over, refuses every later put, del and barrier
 * with PQV_E_LOCKED (storage_s3.c asks s3_lease_check_locked).
 */
#include "pqvault/storage.h"

#ifndef PQV_NO_S3 /* (make static builds without libcurl: no S3 backend) */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage/s3_http.h"
#include "storage/storage_s3_internal.h"
#include "util/error.h"
#include "util/util.h"

int
s3_lease_valid_locked(const struct s3_storage *s)
{
    int64_t margin = (int64_t)s->lease_seconds * 100; /* a tenth */

    if (margin > 2000)
        margin = 2000;
    return !s->lost && storage_s3_boot_ms() < s->last_ok_ms + (int64_t)s->lease_seconds * 1000 - margin;
}

/* s3_lease_check_locked(s, name): PQV_E_LOCKED if this writer took the
 * lease and has lost it (taken over, or not renewed in time). */
int
s3_lease_check_locked(struct s3_storage *s, const char *name)
{
    if (!s->locked || s3_lease_valid_locked(s))
        return 0;
    if (!s->lost) {
        s->lost = 1;
        snprintf(s->lost_why, sizeof(s->lost_why), "not renewed in time");
    }
    return error_set(PQV_E_LOCKED, NULL, "%s/%s: writer lease lost (%s): refusing to write", s->url, name, s->lost_why);
}

/* lease_text(s, serial, out): the lease object's body. */
static size_t
lease_text(const struct s3_storage *s, uint64_t serial, char *out, size_t outlen)
{
    int n = snprintf(out, outlen,
        "pqvault-lease 1\nholder %s\ntoken %s\nduration %u\nserial %" PRIu64 "\n", s->holder,
        s->token, s->lease_seconds, serial);

    return n < 0 ? 0 : (size_t)n >= outlen ? outlen - 1 : (size_t)n;
}

struct lease_info {
    char holder[128];
    char token[33];
    unsigned duration;
};

/* lease_parse(text, len, li): 0 if ${text} is a lease object. */
static int
lease_parse(const uint8_t *text, size_t len, struct lease_info *li)
{
    char buf[LEASE_BODY_MAX + 1], *line, *save = NULL;
    int first = 1;

    memset(li, 0, sizeof(*li));
    if (len > LEASE_BODY_MAX || memchr(text, '\0', len) != NULL)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        if (first) {
            if (strcmp(line, "pqvault-lease 1") != 0)
                return -1;
            first = 0;
        } else if (strncmp(line, "holder ", 7) == 0) {
            snprintf(li->holder, sizeof(li->holder), "%s", line + 7);
        } else if (strncmp(line, "token ", 6) == 0) {
            snprintf(li->token, sizeof(li->token), "%s", line + 6);
        } else if (strncmp(line, "duration ", 9) == 0) {
            char *end;
            unsigned long d = strtoul(line + 9, &end, 10);
            if (*end != '\0' || d < 1 || d > PQV_S3_LEASE_MAX)
                return -1;
            li->duration = (unsigned)d;
        }
    }
    if (first || li->duration == 0 || li->holder[0] == '\0')
        return -1;
    for (char *p = li->holder; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return 0;
}

/* cond_put(s, text, len, etag, r): PUT the lease with If-Match on ${etag}
 * (unquoted first: RGW compares it as sent; quoted if this server was seen
 * to want it), or If-None-Match: * when ${etag} is NULL.  On a 412 whose
 * object still carries ${etag}, the form was wrong: try the other once. */
static int
cond_put(struct s3_storage *s, const char *key, const char *text, size_t len, const char *etag,
    struct s3_resp *r)
{
    char quoted[84];
    struct s3_header h;
    int rc;

    if (etag == NULL) {
        h = (struct s3_header){ "If-None-Match", "*" };
        return storage_s3_do_put(s, LEASE_NAME, key, (const uint8_t *)text, len, &h, r);
    }
    for (int tries = 0; tries < 2; tries++) {
        struct s3_req hreq;
        struct s3_resp hr;
        char cur[80];
        snprintf(quoted, sizeof(quoted), "\"%s\"", etag);
        h = (struct s3_header){ "If-Match", s->quote_etag ? quoted : etag };
        rc = storage_s3_do_put(s, LEASE_NAME, key, (const uint8_t *)text, len, &h, r);
        if (rc != 0 || r->status != 412 || tries == 1)
            return rc;
        memset(&hreq, 0, sizeof(hreq));
        hreq.method = "HEAD";
        hreq.key = key;
        if (s3_http_request(s->http, &hreq, &hr) != 0 || hr.status != 200)
            return rc;
        storage_s3_unquote(hr.etag, cur, sizeof(cur));
        s3_http_resp_clear(&hr);
        if (strcmp(cur, etag) != 0)
            return rc; /* changed for real */
        s->quote_etag = !s->quote_etag;
        s3_http_resp_clear(r);
    }
    return rc;
}

/* lease_renew(s): one renewal.  0, PQV_E_LOCKED if the lease was taken
 * over (s->lost_why says by whom), or another error (retried later). */
static int
lease_renew(struct s3_storage *s)
{
    char key[S3_PREFIX_MAX + 8], text[LEASE_BODY_MAX], etag[80];
    struct s3_resp r;
    uint64_t serial;
    int64_t t0;
    size_t len;
    int rc;

    pthread_mutex_lock(&s->mu);
    serial = s->serial + 1;
    snprintf(etag, sizeof(etag), "%s", s->etag);
    pthread_mutex_unlock(&s->mu);
    (void)storage_s3_object_key(s, LEASE_NAME, key, sizeof(key));
    len = lease_text(s, serial, text, sizeof(text));
    t0 = storage_s3_boot_ms();
    rc = cond_put(s, key, text, len, etag, &r);
    if (rc == 0 && r.status == 412) {
        /* Our own renewal whose reply was lost, or a takeover. */
        struct lease_info li;
        s3_http_resp_clear(&r);
        rc = storage_s3_do_get(s, key, LEASE_BODY_MAX, &r);
        if (rc == 0 && r.status == 200 && r.body_len == len && memcmp(r.body, text, len) == 0) {
            /* ours: r carries its ETag */
        } else if (rc == 0 && (r.status == 200 || r.status == 404)) {
            pthread_mutex_lock(&s->mu);
            if (r.status == 200 && lease_parse(r.body, r.body_len, &li) == 0)
                snprintf(s->lost_why, sizeof(s->lost_why), "taken over by %.100s", li.holder);
            else
                snprintf(s->lost_why, sizeof(s->lost_why), "lease object %s",
                    r.status == 404 ? "deleted" : "replaced");
            pthread_mutex_unlock(&s->mu);
            s3_http_resp_clear(&r);
            return PQV_E_LOCKED;
        } else {
            rc = storage_s3_fail(s, LEASE_NAME, rc, &r);
            s3_http_resp_clear(&r);
            return rc != 0 ? rc : PQV_E_IO;
        }
    } else if (rc != 0 || r.status != 200) {
        rc = storage_s3_fail(s, LEASE_NAME, rc, &r);
        s3_http_resp_clear(&r);
        return rc;
    }
    pthread_mutex_lock(&s->mu);
    storage_s3_unquote(r.etag, s->etag, sizeof(s->etag));
    s->serial = serial;
    s->last_ok_ms = t0;
    pthread_mutex_unlock(&s->mu);
    s3_http_resp_clear(&r);
    return 0;
}

static void
abs_deadline(int64_t mono_deadline_ms, struct timespec *ts)
{
    ts->tv_sec = (time_t)(mono_deadline_ms / 1000);
    ts->tv_nsec = (long)(mono_deadline_ms % 1000) * 1000000L;
}

/* renewer(arg): renew every third of the lease until told to stop; give
 * up (lost) when taken over or when the lease ran out locally. */
static void *
renewer(void *arg)
{
    struct s3_storage *s = arg;
    int64_t interval = (int64_t)s->lease_seconds * 1000 / 3, next;
    struct timespec ts;

    pthread_mutex_lock(&s->mu);
    next = s->last_ok_ms + interval;
    while (!s->stop && !s->lost) {
        int64_t now = storage_s3_boot_ms();
        int rc;
        if (now < next) {
            /* The condition variable runs on CLOCK_MONOTONIC. */
            abs_deadline(storage_s3_mono_ms() + (next - now), &ts);
            (void)pthread_cond_timedwait(&s->cond, &s->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&s->mu);
        rc = lease_renew(s);
        pthread_mutex_lock(&s->mu);
        if (rc == 0) {
            next = s->last_ok_ms + interval;
        } else if (rc == PQV_E_LOCKED) {
            s->lost = 1;
        } else if (!s3_lease_valid_locked(s)) {
            s->lost = 1;
            snprintf(s->lost_why, sizeof(s->lost_why), "could not renew: %.120s",
                pqv_error_detail());
        } else {
            next = storage_s3_boot_ms() + (interval < 1000 ? interval : 1000);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int
s3_lease_lock(pqv_storage *st, int wait, char *holder, size_t holderlen)
{
    struct s3_storage *s = (struct s3_storage *)st;
    char key[S3_PREFIX_MAX + 8], text[LEASE_BODY_MAX], etag[80];
    struct s3_resp r;
    size_t len;
    int64_t t0;
    int rc;

    if (holder != NULL && holderlen > 0)
        holder[0] = '\0';
    pthread_mutex_lock(&s->mu);
    rc = s->locked;
    pthread_mutex_unlock(&s->mu);
    if (rc)
        return 0;
    (void)storage_s3_object_key(s, LEASE_NAME, key, sizeof(key));
    len = lease_text(s, 0, text, sizeof(text));
    for (unsigned races = 0;; races++) {
        struct lease_info li;
        int64_t now, lm, left;
        const char *cond_etag = NULL;

        /* (Rounds that lost a race, not those that waited for a holder.) */
        if (races == 1000)
            return error_set(PQV_E_IO, NULL, "%s/%s: lease does not settle", s->url, LEASE_NAME);
        t0 = storage_s3_boot_ms();
        rc = cond_put(s, key, text, len, NULL, &r);
        if (rc == 0 && r.status == 200)
            break;
        if (rc != 0 || r.status != 412) {
            rc = storage_s3_fail(s, LEASE_NAME, rc, &r);
            s3_http_resp_clear(&r);
            return rc;
        }
        s3_http_resp_clear(&r);
        /* Held (or ours, if a reply was lost): read it. */
        rc = storage_s3_do_get(s, key, LEASE_BODY_MAX, &r);
        if (rc == 0 && r.status == 404) {
            s3_http_resp_clear(&r);
            continue; /* released meanwhile */
        }
        if (rc != 0 || r.status != 200) {
            rc = storage_s3_fail(s, LEASE_NAME, rc, &r);
            s3_http_resp_clear(&r);
            return rc;
        }
        if (r.body_len == len && memcmp(r.body, text, len) == 0)
            break; /* our own create, its reply lost */
        if (lease_parse(r.body, r.body_len, &li) != 0) {
            snprintf(li.holder, sizeof(li.holder), "an unreadable lease object");
            li.duration = PQV_S3_LEASE_DEFAULT;
        }
        if (s3_http_parse_date(r.date, &now) != 0 ||
            s3_http_parse_date(r.last_modified, &lm) != 0) {
            s3_http_resp_clear(&r);
            return error_set(PQV_E_IO, NULL, "%s/%s: no Date or Last-Modified in the reply", s->url, LEASE_NAME);
        }
        /* Both times are the server's, to the second: one more second
         * covers the rounding. */
        left = lm + (int64_t)li.duration + 1 - now;
        storage_s3_unquote(r.etag, etag, sizeof(etag));
        s3_http_resp_clear(&r);
        if (left <= 0) {
            /* Expired: take it over, unless someone else does first. */
            cond_etag = etag;
            t0 = storage_s3_boot_ms();
            rc = cond_put(s, key, text, len, cond_etag, &r);
            if (rc == 0 && r.status == 200)
                break;
            if (rc != 0 || r.status != 412) {
                rc = storage_s3_fail(s, LEASE_NAME, rc, &r);
                s3_http_resp_clear(&r);
                return rc;
            }
            s3_http_resp_clear(&r);
            continue;
        }
        if (!wait) {
            if (holder != NULL && holderlen > 0)
                snprintf(holder, holderlen, "%s, lease expires in %" PRId64 " s", li.holder,
                    left);
            return error_set(PQV_E_LOCKED,
                "vault is locked by another writer (%.100s, lease expires in %" PRId64 " s)",
                li.holder, left);
        }
        {
            /* --wait: sleep until the lease could have expired (or was
             * released), a few seconds at most. */
            struct timespec ts = { left < 5 ? (time_t)left : 5, 0 };
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
            races--;
        }
    }
    pthread_mutex_lock(&s->mu);
    storage_s3_unquote(r.etag, s->etag, sizeof(s->etag));
    s3_http_resp_clear(&r);
    s->serial = 0;
    s->last_ok_ms = t0;
    s->locked = 1;
    s->lost = 0;
    s->stop = 0;
    s->lost_why[0] = '\0';
    if (s->etag[0] == '\0') {
        /* A create whose reply was lost: the ETag comes from a HEAD. */
        struct s3_req hreq;
        struct s3_resp hr;
        pthread_mutex_unlock(&s->mu);
        memset(&hreq, 0, sizeof(hreq));
        hreq.method = "HEAD";
        hreq.key = key;
        if (s3_http_request(s->http, &hreq, &hr) == 0 && hr.status == 200)
            storage_s3_unquote(hr.etag, etag, sizeof(etag));
        else
            etag[0] = '\0';
        s3_http_resp_clear(&hr);
        pthread_mutex_lock(&s->mu);
        snprintf(s->etag, sizeof(s->etag), "%s", etag);
    }
    rc = pthread_create(&s->renewer, NULL, renewer, s);
    s->renewer_running = rc == 0;
    pthread_mutex_unlock(&s->mu);
    if (rc != 0) {
        s3_lease_unlock(st);
        return error_set(PQV_E_NOMEM, s->url, "cannot start the lease renewal thread");
    }
    return 0;
}

void
s3_lease_unlock(pqv_storage *st)
{
    struct s3_storage *s = (struct s3_storage *)st;
    char key[S3_PREFIX_MAX + 8];
    int valid, running;

    pthread_mutex_lock(&s->mu);
    if (!s->locked) {
        pthread_mutex_unlock(&s->mu);
        return;
    }
    s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    running = s->renewer_running;
    s->renewer_running = 0;
    pthread_mutex_unlock(&s->mu);
    if (running)
        pthread_join(s->renewer, NULL);
    pthread_mutex_lock(&s->mu);
    /* While the lease is valid by our clock, nobody can have taken it
     * over (the server's expiry is later), so the object is ours. */
    valid = s3_lease_valid_locked(s);
    s->locked = 0;
    pthread_mutex_unlock(&s->mu);
    if (valid) {
        struct s3_req req;
        struct s3_resp r;
        (void)storage_s3_object_key(s, LEASE_NAME, key, sizeof(key));
        memset(&req, 0, sizeof(req));
        req.method = "DELETE";
        req.key = key;
        (void)s3_http_request(s->http, &req, &r);
        s3_http_resp_clear(&r);
    }
}

#endif
