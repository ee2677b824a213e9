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
#include <signal.h>
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

/* lease_text(s, serial, out): the lease object's body.  The "process" line
 * (this host's boot id and pid namespace, the pid and its start time) lets
 * a writer on the same host see that the holder died (docs/S3.md). */
static size_t
lease_text(const struct s3_storage *s, uint64_t serial, char *out, size_t outlen)
{
    int n = snprintf(out, outlen,
        "pqvault-lease 1\nholder %s\ntoken %s\nduration %u\nserial %" PRIu64 "\n%s%s%s",
        s->holder, s->token, s->lease_seconds, serial, s->process[0] ? "process " : "",
        s->process, s->process[0] ? "\n" : "");

    return n < 0 ? 0 : (size_t)n >= outlen ? outlen - 1 : (size_t)n;
}

struct lease_info {
    char holder[128];
    char token[33];
    unsigned duration;
    char process[LEASE_PROCESS_MAX];  /* "" if the holder wrote none */
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
        } else if (strncmp(line, "process ", 8) == 0) {
            snprintf(li->process, sizeof(li->process), "%s", line + 8);
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

/* What is known of a lease's holder. */
enum { HOLDER_UNKNOWN = 0, HOLDER_ALIVE = 1, HOLDER_DEAD = 2 };

/* holder_state(li): HOLDER_DEAD if the lease was written by a process of
 * this host (same boot, same pid namespace) that is gone: its pid is free,
 * or reused by a process that started at another time; HOLDER_ALIVE if
 * that process still runs; HOLDER_UNKNOWN for another host, a container of
 * its own, or a lease that says nothing (an older pqvault). */
static int
holder_state(const struct lease_info *li)
{
    char mine[LEASE_PROCESS_MAX], now[LEASE_PROCESS_MAX], boot[64], ns[64], mboot[64], mns[64];
    long pid, mpid;
    unsigned long long start, mstart;

    if (li->process[0] == '\0' || storage_s3_process(mine, sizeof(mine), getpid()) != 0 ||
        sscanf(li->process, "%63s %63s %ld %llu", boot, ns, &pid, &start) != 4 || pid <= 0 ||
        sscanf(mine, "%63s %63s %ld %llu", mboot, mns, &mpid, &mstart) != 4 ||
        strcmp(mboot, boot) != 0 || strcmp(mns, ns) != 0)
        return HOLDER_UNKNOWN;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return HOLDER_DEAD;
    /* Alive, or another user's (EPERM): its start time decides. */
    if (storage_s3_process(now, sizeof(now), (pid_t)pid) == 0 && strcmp(now, li->process) != 0)
        return HOLDER_DEAD;
    return HOLDER_ALIVE;
}

/* Outcomes of one attempt to take the lease. */
enum { LEASE_TAKEN = 0, LEASE_RETRY = 1, LEASE_HELD = 2 };

/* try_take(s, key, text, len, r, t0, li, left): one round: create the
 * lease; if it exists, read it and take it over when it expired or its
 * holder on this host is dead.  LEASE_TAKEN (the reply in ${r}, the time
 * before the request in *${t0}), LEASE_RETRY (released or taken over
 * meanwhile), LEASE_HELD (its holder in ${li}, *${left} seconds to go), or
 * a failure. */
static int
try_take(struct s3_storage *s, const char *key, const char *text, size_t len,
    struct s3_resp *r, int64_t *t0, struct lease_info *li, int64_t *left)
{
    char etag[80];
    int64_t now, lm;
    int rc;

    *t0 = storage_s3_boot_ms();
    rc = cond_put(s, key, text, len, NULL, r);
    if (rc == 0 && r->status == 200)
        return LEASE_TAKEN;
    if (rc != 0 || r->status != 412)
        goto failed;
    s3_http_resp_clear(r);
    /* Held (or ours, if a reply was lost): read it. */
    rc = storage_s3_do_get(s, key, LEASE_BODY_MAX, r);
    if (rc == 0 && r->status == 404) {
        s3_http_resp_clear(r);
        return LEASE_RETRY; /* released meanwhile */
    }
    if (rc != 0 || r->status != 200)
        goto failed;
    if (r->body_len == len && memcmp(r->body, text, len) == 0)
        return LEASE_TAKEN; /* our own create, its reply lost */
    if (lease_parse(r->body, r->body_len, li) != 0) {
        snprintf(li->holder, sizeof(li->holder), "an unreadable lease object");
        li->duration = PQV_S3_LEASE_DEFAULT;
    }
    if (s3_http_parse_date(r->date, &now) != 0 || s3_http_parse_date(r->last_modified, &lm) != 0) {
        s3_http_resp_clear(r);
        return error_set(PQV_E_IO, NULL, "%s/%s: no Date or Last-Modified in the reply", s->url,
            LEASE_NAME);
    }
    /* Both times are the server's, to the second: one more second covers
     * the rounding. */
    *left = lm + (int64_t)li->duration + 1 - now;
    storage_s3_unquote(r->etag, etag, sizeof(etag));
    s3_http_resp_clear(r);
    if (*left > 0 && holder_state(li) != HOLDER_DEAD)
        return LEASE_HELD;
    /* Expired, or its holder died: take it over, unless someone else does
     * first. */
    *t0 = storage_s3_boot_ms();
    rc = cond_put(s, key, text, len, etag, r);
    if (rc == 0 && r->status == 200)
        return LEASE_TAKEN;
    if (rc == 0 && r->status == 412) {
        s3_http_resp_clear(r);
        return LEASE_RETRY;
    }
failed:
    rc = storage_s3_fail(s, LEASE_NAME, rc, r);
    s3_http_resp_clear(r);
    return rc;
}

/* start_renewing(s, key, r, t0): the lease taken (its reply ${r}): ours,
 * renewed by a thread from now on. */
static int
start_renewing(struct s3_storage *s, const char *key, struct s3_resp *r, int64_t t0)
{
    char etag[80];
    int rc;

    pthread_mutex_lock(&s->mu);
    storage_s3_unquote(r->etag, s->etag, sizeof(s->etag));
    s3_http_resp_clear(r);
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
        s3_lease_unlock(&s->base);
        return error_set(PQV_E_NOMEM, s->url, "cannot start the lease renewal thread");
    }
    return 0;
}

int
s3_lease_lock(pqv_storage *st, int wait, char *holder, size_t holderlen)
{
    struct s3_storage *s = (struct s3_storage *)st;
    char key[S3_PREFIX_MAX + 8], text[LEASE_BODY_MAX];
    struct s3_resp r;
    size_t len;
    int64_t t0 = 0;
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
        int64_t left = 0;
        /* (Rounds that lost a race, not those that waited for a holder.) */
        if (races == 1000)
            return error_set(PQV_E_IO, NULL, "%s/%s: lease does not settle", s->url, LEASE_NAME);
        memset(&li, 0, sizeof(li));
        if ((rc = try_take(s, key, text, len, &r, &t0, &li, &left)) < 0)
            return rc;
        if (rc == LEASE_TAKEN)
            break;
        if (rc == LEASE_RETRY)
            continue;
        if (!wait) {
            const char *why = holder_state(&li) == HOLDER_ALIVE ? "; it runs on this host" :
                "; perhaps on another host (a lease whose holder died on this host is free "
                "at once)";
            if (holder != NULL && holderlen > 0)
                snprintf(holder, holderlen, "%s, lease expires in %" PRId64 " s%s", li.holder,
                    left, why);
            return error_set(PQV_E_LOCKED, NULL, "vault is locked by another writer (%.100s, "
                "lease expires in %" PRId64 " s%s)", li.holder, left, why);
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
    return start_renewing(s, key, &r, t0);
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
