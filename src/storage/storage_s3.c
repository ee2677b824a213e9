/*
 * storage_s3.c: the S3-compatible storage backend (see pqvault/storage.h
 * and docs/S3.md).
 *
 * Blob NAME is the object PREFIX/NAME of the bucket.  put is one PUT
 * (atomic and durable when it returns); put_new adds If-None-Match: *, and
 * a 412 is checked by reading the object back (a retry whose first attempt
 * succeeded with its reply lost, or a duplicated request, finds its own
 * bytes there and succeeds); get, get_range and stat are GET, ranged GET
 * and HEAD; list is ListObjectsV2 page by page; del is HEAD then DELETE (S3
 * says nothing about absent keys); barrier waits until no put or del is in
 * flight.
 *
 * The writer lock is a lease: the object PREFIX/lock, created with
 * If-None-Match: *, renewed by a thread every third of its duration with
 * If-Match on its ETag, taken over (If-Match again) only once the server's
 * own Date is past the object's Last-Modified plus its duration.  A writer
 * that cannot renew in time, or finds the lease taken over, refuses every
 * later put, del and barrier with PQV_E_LOCKED.
 */
#include "pqvault/storage.h"

#ifndef PQV_NO_S3 /* (make static builds without libcurl: no S3 backend) */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage/s3_config.h"
#include "storage/s3_http.h"
#include "storage/s3_xml.h"
#include "storage/storage_s3_internal.h"
#include "util/util.h"



/* ---- small helpers ---- */

/* storage_s3_boot_ms(): milliseconds on CLOCK_BOOTTIME, which keeps counting while
 * the machine is suspended (CLOCK_MONOTONIC does not): a lease's time runs
 * on the server while this host sleeps. */
int64_t
storage_s3_boot_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
storage_s3_process(char *out, size_t outlen, pid_t pid)
{
    char path[64], stat[1024], boot[64] = "", ns[64] = "";
    unsigned long long start = 0;
    const char *p;
    ssize_t n;
    int fd;

    /* The boot id tells this boot of this host from another. */
    if ((fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, boot, sizeof(boot) - 1);
    close(fd);
    if (n < 32)
        return -1;
    boot[n] = '\0';
    boot[strcspn(boot, "\n")] = '\0';
    /* The pid namespace: the same pid means the same process only inside it. */
    snprintf(path, sizeof(path), "/proc/%ld/ns/pid", (long)getpid());
    if ((n = readlink(path, ns, sizeof(ns) - 1)) <= 0)
        return -1;
    ns[n] = '\0';
    for (char *c = ns; *c; c++)
        if (*c == ' ')
            *c = '_';
    /* Field 22 of /proc/PID/stat: the start time, after the name in (). */
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, stat, sizeof(stat) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    stat[n] = '\0';
    if ((p = strrchr(stat, ')')) == NULL)
        return -1;
    for (int field = 2; field < 22 && p != NULL; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL || sscanf(p + 1, "%llu", &start) != 1)
        return -1;
    n = snprintf(out, outlen, "%s %s %ld %llu", boot, ns, (long)pid, start);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

int64_t
storage_s3_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* storage_s3_object_key(s, name, key): "PREFIX/NAME" (or NAME), after checking that
 * ${name} is a relative name without "." or ".." components. */
int
storage_s3_object_key(const struct s3_storage *s, const char *name, char *key, size_t keylen)
{
    size_t n = strlen(name);
    int w;

    if (n == 0 || name[0] == '/' || strstr(name, "..") != NULL || n > 512)
        return error_set(PQV_E_INVAL, name, "invalid storage name");
    w = snprintf(key, keylen, "%s%s%s", s->prefix, s->prefix[0] ? "/" : "", name);
    if (w < 0 || (size_t)w >= keylen)
        return error_set(PQV_E_INVAL, name, "name too long");
    return 0;
}

/* storage_s3_unquote(etag, out): the ETag without its quotes. */
void
storage_s3_unquote(const char *etag, char *out, size_t outlen)
{
    size_t n = strlen(etag);

    if (n >= 2 && etag[0] == '"' && etag[n - 1] == '"') {
        etag++;
        n -= 2;
    }
    if (n >= outlen)
        n = outlen - 1;
    memcpy(out, etag, n);
    out[n] = '\0';
}

/* storage_s3_fail(s, name, rc, r): the error of a request about ${name} that ended
 * with ${rc} (transport) or the non-2xx response ${r}: the message names
 * the blob, the HTTP status and the S3 error code. */
int
storage_s3_fail(const struct s3_storage *s, const char *name, int rc, const struct s3_resp *r)
{
    char tries[32] = "";
    const char *code = r->err.code;
    int err;

    if (r->attempts > 1)
        snprintf(tries, sizeof(tries), " (after %u attempts)", r->attempts);
    if (rc == PQV_E_INTEGRITY && r->too_large)
        return error_set(PQV_E_INTEGRITY, NULL, "%s/%s: larger than expected", s->url, name);
    if (rc != 0 && r->transport[0] == '\0')
        return rc; /* failed before any attempt (lease lost, ...): detail set */
    if (rc != 0)
        return error_set(rc, NULL, "%s/%s: %s%s", s->url, name, r->transport, tries);
    if (code[0] == '\0') {
        /* HEAD replies have no body: name the status. */
        switch (r->status) {
        case 403: code = "Forbidden"; break;
        case 404: code = "NotFound"; break;
        case 412: code = "PreconditionFailed"; break;
        case 416: code = "InvalidRange"; break;
        default: code = "(no error code)"; break;
        }
    }
    if (r->status == 404)
        err = strcmp(code, "NoSuchBucket") == 0 ? PQV_E_NOVAULT : PQV_E_NOTFOUND;
    else if (r->status == 412)
        err = PQV_E_EXISTS;
    else if (r->status == 416)
        err = PQV_E_INTEGRITY;
    else if (strcmp(code, "QuotaExceeded") == 0 || strcmp(code, "EntityTooLarge") == 0 ||
        r->status == 507)
        err = PQV_E_NOSPACE;
    else
        err = PQV_E_IO;
    if (err == PQV_E_NOVAULT)
        return error_set(err, s->url, "bucket %s does not exist (HTTP 404 NoSuchBucket)", s->bucket);
    return error_set(err, NULL, "%s/%s: HTTP %ld %s%s%.100s%s", s->url, name, r->status, code, r->err.message[0] ? ": " : "", r->err.message, tries);
}

/* ---- writes in flight and the lease's validity ---- */



/* write_begin(s, name): count a write in flight, unless this writer held
 * the lease and lost it. */
static int
write_begin(struct s3_storage *s, const char *name)
{
    int rc;

    pthread_mutex_lock(&s->mu);
    if ((rc = s3_lease_check_locked(s, name)) == 0)
        s->writes++;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

struct write_ctx {
    struct s3_storage *s;
    const char *name;
};

/* before_write(ctx): the lease check again before each attempt of a write
 * (retries may come seconds later). */
static int
before_write(void *ctx)
{
    struct write_ctx *w = ctx;
    int rc;

    pthread_mutex_lock(&w->s->mu);
    rc = s3_lease_check_locked(w->s, w->name);
    pthread_mutex_unlock(&w->s->mu);
    return rc;
}

static void
write_end(struct s3_storage *s)
{
    pthread_mutex_lock(&s->mu);
    if (--s->writes == 0)
        pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->mu);
}

/* ---- the operations ---- */

/* storage_s3_do_put(s, name, key, data, len, cond, r): one PUT of ${data} to ${key}
 * (blob ${name}) with the conditional header ${cond} (NULL: none); the
 * response in ${r}. */
int
storage_s3_do_put(struct s3_storage *s, const char *name, const char *key, const uint8_t *data, size_t len,
    const struct s3_header *cond, struct s3_resp *r)
{
    struct write_ctx w = { s, name };
    struct s3_req req;
    struct s3_header h[2];
    size_t nh = 0;

    memset(&req, 0, sizeof(req));
    req.before_attempt = before_write;
    req.ctx = &w;
    req.method = "PUT";
    req.key = key;
    if (cond != NULL)
        h[nh++] = *cond;
    /* Inbox objects may be written by another user (a write-only writer,
     * docs/SECURITY.md): the bucket's owner must be able to read and
     * delete them. */
    if (strncmp(name, "inbox/", 6) == 0)
        h[nh++] = (struct s3_header){ "x-amz-acl", "bucket-owner-full-control" };
    req.headers = nh > 0 ? h : NULL;
    req.nheaders = nh;
    req.body = data;
    req.body_len = len;
    return s3_http_request(s->http, &req, r);
}

/* storage_s3_do_get(s, key, maxlen, r): GET the object ${key} into r->body. */
int
storage_s3_do_get(struct s3_storage *s, const char *key, size_t maxlen, struct s3_resp *r)
{
    struct s3_req req;

    memset(&req, 0, sizeof(req));
    req.method = "GET";
    req.key = key;
    req.want_body = 1;
    req.max_body = maxlen;
    return s3_http_request(s->http, &req, r);
}

static int
s3_put(pqv_storage *st, const char *name, const uint8_t *data, size_t len)
{
    struct s3_storage *s = (struct s3_storage *)st;
    char key[1200];
    struct s3_resp r;
    int rc;

    if ((rc = storage_s3_object_key(s, name, key, sizeof(key))) != 0)
        return rc;
    if ((rc = write_begin(s, name)) != 0)
        return rc;
    rc = storage_s3_do_put(s, name, key, data, len, NULL, &r);
    write_end(s);
    if (rc != 0 || r.status != 200)
        rc = storage_s3_fail(s, name, rc, &r);
    s3_http_resp_clear(&r);
    return rc;
}

/* same_content(s, key, data, len): 1 if the object ${key} holds exactly
 * ${data}, 0 if not (or absent), negative on error. */
static int
same_content(struct s3_storage *s, const char *name, const char *key, const uint8_t *data,
    size_t len)
{
    struct s3_resp r;
    int rc = storage_s3_do_get(s, key, len, &r);

    if (rc == PQV_E_INTEGRITY && r.too_large)
        rc = 0; /* longer: not ours */
    else if (rc != 0)
        rc = storage_s3_fail(s, name, rc, &r);
    else if (r.status == 404)
        rc = 0;
    else if (r.status != 200)
        rc = storage_s3_fail(s, name, 0, &r);
    else
        rc = r.body_len == len && (len == 0 || memcmp(r.body, data, len) == 0);
    s3_http_resp_clear(&r);
    return rc;
}

static int
s3_put_new(pqv_storage *st, const char *name, const uint8_t *data, size_t len)
{
    struct s3_storage *s = (struct s3_storage *)st;
    const struct s3_header cond = { "If-None-Match", "*" };
    char key[1200];
    struct s3_resp r;
    int rc;

    if ((rc = storage_s3_object_key(s, name, key, sizeof(key))) != 0)
        return rc;
    if ((rc = write_begin(s, name)) != 0)
        return rc;
    rc = storage_s3_do_put(s, name, key, data, len, &cond, &r);
    if (rc == 0 && r.status == 412) {
        /* Exists: ours (a retry after a lost reply, a duplicated request)
         * if it holds exactly these bytes. */
        rc = same_content(s, name, key, data, len);
        if (rc == 0)
            rc = error_set(PQV_E_EXISTS, NULL, "%s/%s: already exists", s->url, name);
        else if (rc == 1)
            rc = 0;
    } else if (rc != 0 || r.status != 200) {
        rc = storage_s3_fail(s, name, rc, &r);
    }
    write_end(s);
    s3_http_resp_clear(&r);
    return rc;
}

static int
s3_get(pqv_storage *st, const char *name, uint8_t **data, size_t *len, size_t maxlen)
{
    struct s3_storage *s = (struct s3_storage *)st;
    char key[1200];
    struct s3_resp r;
    int rc;

    *data = NULL;
    *len = 0;
    if ((rc = storage_s3_object_key(s, name, key, sizeof(key))) != 0)
        return rc;
    rc = storage_s3_do_get(s, key, maxlen, &r);
    if (rc == 0 && r.status == 200) {
        if (r.body == NULL && (r.body = malloc(1)) == NULL) {
            rc = PQV_E_NOMEM;
        } else {
            *data = r.body;
            *len = r.body_len;
            r.body = NULL;
        }
    } else if (rc == PQV_E_INTEGRITY && r.too_large) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "%s/%s: larger than %zu bytes", s->url, name, maxlen);
    } else {
        rc = storage_s3_fail(s, name, rc, &r);
    }
    s3_http_resp_clear(&r);
    return rc;
}

static int
s3_stat(pqv_storage *st, const char *name, uint64_t *size)
{
    struct s3_storage *s = (struct s3_storage *)st;
    char key[1200];
    struct s3_req req;
    struct s3_resp r;
    int rc;

    if ((rc = storage_s3_object_key(s, name, key, sizeof(key))) != 0)
        return rc;
    memset(&req, 0, sizeof(req));
    req.method = "HEAD";
    req.key = key;
    rc = s3_http_request(s->http, &req, &r);
    if (rc == 0 && r.status == 200 && r.have_length) {
        if (size != NULL)
            *size = r.content_length;
    } else if (rc == 0 && r.status == 200) {
        rc = error_set(PQV_E_IO, NULL, "%s/%s: HEAD without Content-Length", s->url, name);
    } else {
        rc = storage_s3_fail(s, name, rc, &r);
    }
    s3_http_resp_clear(&r);
    return rc;
}

static int
s3_get_range(pqv_storage *st, const char *name, uint64_t offset, uint8_t *buf, size_t len)
{
    struct s3_storage *s = (struct s3_storage *)st;
    char key[1200], range[64];
    struct s3_header h = { "Range", range };
    struct s3_req req;
    struct s3_resp r;
    uint64_t size;
    int rc;

    if (len == 0) {
        if ((rc = s3_stat(st, name, &size)) != 0)
            return rc;
        if (size < offset)
            return error_set(PQV_E_INTEGRITY, NULL, "%s/%s: shorter than expected", s->url, name);
        return 0;
    }
    if ((rc = storage_s3_object_key(s, name, key, sizeof(key))) != 0)
        return rc;
    if (offset > UINT64_MAX - len)
        return error_set(PQV_E_INVAL, name, "range out of bounds");
    snprintf(range, sizeof(range), "bytes=%" PRIu64 "-%" PRIu64, offset, offset + len - 1);
    memset(&req, 0, sizeof(req));
    req.method = "GET";
    req.key = key;
    req.headers = &h;
    req.nheaders = 1;
    req.dest = buf;
    req.dest_len = len;
    rc = s3_http_request(s->http, &req, &r);
    if (rc == 0 && (r.status == 206 || (r.status == 200 && offset == 0))) {
        if (r.body_len != len)
            rc = error_set(PQV_E_INTEGRITY, NULL, "%s/%s: shorter than expected", s->url, name);
    } else if (rc == 0 && r.status == 416) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "%s/%s: shorter than expected", s->url, name);
    } else if (rc == 0 && r.status == 200) {
        rc = error_set(PQV_E_IO, NULL, "%s/%s: the server ignored the Range header", s->url, name);
    } else if (rc == PQV_E_INTEGRITY && r.too_large && r.status == 200) {
        rc = error_set(PQV_E_IO, NULL, "%s/%s: the server ignored the Range header", s->url, name);
    } else {
        rc = storage_s3_fail(s, name, rc, &r);
    }
    s3_http_resp_clear(&r);
    return rc;
}

static int
s3_del(pqv_storage *st, const char *name)
{
    struct s3_storage *s = (struct s3_storage *)st;
    struct write_ctx w = { s, name };
    char key[1200];
    struct s3_req req;
    struct s3_resp r;
    int rc;

    /* DELETE answers 204 for absent keys too; the contract says NOTFOUND. */
    if ((rc = s3_stat(st, name, NULL)) != 0)
        return rc;
    if ((rc = storage_s3_object_key(s, name, key, sizeof(key))) != 0)
        return rc;
    if ((rc = write_begin(s, name)) != 0)
        return rc;
    memset(&req, 0, sizeof(req));
    req.method = "DELETE";
    req.key = key;
    req.before_attempt = before_write;
    req.ctx = &w;
    rc = s3_http_request(s->http, &req, &r);
    write_end(s);
    if (rc != 0 || (r.status != 204 && r.status != 200 && r.status != 404))
        rc = storage_s3_fail(s, name, rc, &r);
    s3_http_resp_clear(&r);
    return rc;
}

static int
s3_barrier(pqv_storage *st)
{
    struct s3_storage *s = (struct s3_storage *)st;
    int rc = 0;

    /* A PUT is durable when it returns: wait for those in flight. */
    pthread_mutex_lock(&s->mu);
    while (s->writes > 0)
        pthread_cond_wait(&s->cond, &s->mu);
    if (s->locked && !s3_lease_valid_locked(s)) {
        if (!s->lost) {
            s->lost = 1;
            snprintf(s->lost_why, sizeof(s->lost_why), "not renewed in time");
        }
        rc = error_set(PQV_E_LOCKED, s->url, "writer lease lost (%s)", s->lost_why);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}











static void
s3_close(pqv_storage *st)
{
    struct s3_storage *s = (struct s3_storage *)st;

    if (s == NULL)
        return;
    s3_lease_unlock(st);
    s3_http_free(s->http);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static const struct pqv_storage_ops s3_ops = {
    .version = PQV_STORAGE_OPS_VERSION,
    .put = s3_put,
    .put_new = s3_put_new,
    .get = s3_get,
    .get_range = s3_get_range,
    .stat = s3_stat,
    .list = storage_s3_list,
    .del = s3_del,
    .barrier = s3_barrier,
    .lock = s3_lease_lock,
    .unlock = s3_lease_unlock,
    .close = s3_close,
    .flags = PQV_STORAGE_REMOTE,
};

int
storage_s3_stats(pqv_storage *st, struct s3_http_stats *stats)
{
    if (st == NULL || st->ops != &s3_ops)
        return PQV_E_INVAL;
    s3_http_stats(((struct s3_storage *)st)->http, stats);
    return 0;
}

/* probe(s): one listing request: does the bucket exist, do the
 * credentials work? */
static int
probe(struct s3_storage *s)
{
    char full[S3_PREFIX_MAX + 2];
    struct s3_param q[3];
    struct s3_req req;
    struct s3_resp r;
    int rc;

    snprintf(full, sizeof(full), "%s%s", s->prefix, s->prefix[0] ? "/" : "");
    q[0] = (struct s3_param){ "list-type", "2" };
    q[1] = (struct s3_param){ "max-keys", "1" };
    q[2] = (struct s3_param){ "prefix", full };
    memset(&req, 0, sizeof(req));
    req.method = "GET";
    req.query = q;
    req.nquery = 3;
    rc = s3_http_request(s->http, &req, &r);
    if (rc == 0 && r.status == 403 && strcmp(r.err.code, "AccessDenied") == 0) {
        /* Signed correctly, the bucket exists, but this user may not list
         * it: a write-only writer restricted by a bucket policy to
         * PutObject under inbox/ (docs/SECURITY.md).  Each request then
         * stands or falls on its own. */
        s3_http_resp_clear(&r);
        return 0;
    }
    if (rc != 0 || r.status != 200) {
        if (rc == 0 && r.status == 404 && r.err.code[0] == '\0')
            snprintf(r.err.code, sizeof(r.err.code), "NoSuchBucket");
        rc = storage_s3_fail(s, "", rc, &r);
        if (rc != PQV_E_NOVAULT) {
            /* "s3://b/p/: ..." reads oddly: name the bucket. */
            char d[256];
            snprintf(d, sizeof(d), "%s", pqv_error_detail());
            const char *p = strstr(d, "/: ");
            if (p != NULL)
                error_set(rc, s->url, "%s", p + 3);
        }
    }
    s3_http_resp_clear(&r);
    return rc;
}

int
pqv_storage_s3_open(pqv_storage **out, const char *url, const struct pqv_s3_config *cfg,
    int create)
{
    struct s3_storage *s;
    pthread_condattr_t ca;
    char host[256];
    int rc;

    (void)create;
    if (out == NULL || url == NULL || cfg == NULL)
        return PQV_E_INVAL;
    *out = NULL;
    if ((s = calloc(1, sizeof(*s))) == NULL)
        return PQV_E_NOMEM;
    if ((rc = s3_config_url_parse(url, s->bucket, s->prefix)) != 0) {
        free(s);
        return rc;
    }
    snprintf(s->url, sizeof(s->url), "s3://%s%s%s", s->bucket, s->prefix[0] ? "/" : "",
        s->prefix);
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cond, &ca);
    pthread_condattr_destroy(&ca);
    s->base.ops = &s3_ops;
    s->list_max = PQV_STORAGE_LIST_MAX;
#ifdef PQV_TEST_HOOKS
    {
        /* The test build may lower the bound (tests/cli/list_bounds.sh). */
        const char *lm = getenv("PQVAULT_TEST_LIST_MAX");
        if (lm != NULL && strtoull(lm, NULL, 10) > 0)
            s->list_max = strtoull(lm, NULL, 10);
    }
#endif
    s->lease_seconds = cfg->lease_seconds != 0 ? cfg->lease_seconds : PQV_S3_LEASE_DEFAULT;
    if (s->lease_seconds < PQV_S3_LEASE_MIN)
        s->lease_seconds = PQV_S3_LEASE_MIN;
    if (s->lease_seconds > PQV_S3_LEASE_MAX)
        s->lease_seconds = PQV_S3_LEASE_MAX;
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "unknown host");
    host[sizeof(host) - 1] = '\0';
    for (char *p = host; *p; p++)
        if ((unsigned char)*p <= 0x20 || *p == 0x7f)
            *p = '?';
    snprintf(s->holder, sizeof(s->holder), "pid %ld on %.64s", (long)getpid(), host);
    if (storage_s3_process(s->process, sizeof(s->process), getpid()) != 0)
        s->process[0] = '\0';
    {
        uint8_t t[16];
        if ((rc = util_random(t, sizeof(t))) != 0)
            goto err;
        util_hex_encode(s->token, t, sizeof(t));
    }
    if ((rc = s3_http_new(&s->http, cfg, s->bucket)) != 0)
        goto err;
    if ((rc = probe(s)) != 0)
        goto err;
    /* Success! */
    *out = &s->base;
    return 0;

err:
    /* Failure! */
    s3_close(&s->base);
    return rc;
}

#else

#include "storage/s3_http.h"
#include "util/util.h"

int
storage_s3_stats(pqv_storage *st, struct s3_http_stats *stats)
{
    (void)st;
    (void)stats;
    return PQV_E_INVAL;
}

int
pqv_storage_s3_open(pqv_storage **out, const char *url, const struct pqv_s3_config *cfg,
    int create)
{
    (void)cfg;
    (void)create;
    if (out != NULL)
        *out = NULL;
    return error_set(PQV_E_UNSUPPORTED, NULL, "%.200s: this pqvault was built without S3 support (no libcurl in a static build)", url != NULL ? url : "s3://");
}
#endif
