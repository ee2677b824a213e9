/*
 * s3_http.c: signed S3 requests over libcurl with retries (see s3_http.h).
 */
#include "storage/s3_http.h"

#ifndef PQV_NO_S3 /* (make static builds without libcurl: no S3 backend) */

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

#include "storage/s3_config.h"
#include "storage/s3_http_transfer.h"
#include "util/util.h"

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define MAX_EXTRA_HEADERS 8
#define URL_MAX (S3_HOST_MAX + 3 * 1024 + 3 * S3_XML_MAX_TOKEN + 512)
#define SECRET_CAP 4096

struct s3_http {
    struct s3_endpoint ep;
    char *bucket;
    int path_style;
    char host[S3_HOST_MAX + 80];      /* Host header: [bucket.]host[:port] */
    char *region, *access_key, *ca_file;
    char *secret;                      /* SECRET_CAP bytes, page-locked */
    char *token;
    unsigned max_attempts, base_ms;
    CURLSH *share;
    pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];
    pthread_mutex_t mu;                /* pool and counters */
    CURL *idle[S3_POOL_MAX];
    size_t nidle;
    unsigned in_flight;
    struct s3_http_stats stats;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void
global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void
share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *ud)
{
    s3_http *h = ud;

    (void)handle;
    (void)access;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_lock(&h->share_mu[data]);
}

static void
share_unlock(CURL *handle, curl_lock_data data, void *ud)
{
    s3_http *h = ud;

    (void)handle;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_unlock(&h->share_mu[data]);
}

static char *
dup_or_null(const char *s, int *failed)
{
    char *p;

    if (s == NULL)
        return NULL;
    if ((p = strdup(s)) == NULL)
        *failed = 1;
    return p;
}

int
s3_http_new(s3_http **out, const struct pqv_s3_config *cfg, const char *bucket)
{
    char defep[S3_HOST_MAX];
    const char *endpoint;
    s3_http *h;
    int rc, failed = 0;
    size_t i;

    *out = NULL;
    if (cfg == NULL || bucket == NULL || cfg->access_key == NULL || cfg->secret_key == NULL ||
        strlen(cfg->secret_key) >= SECRET_CAP)
        return error_set(PQV_E_INVAL, NULL, "S3: incomplete configuration (no credentials)");
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return error_set(PQV_E_IO, NULL, "S3: libcurl initialisation failed");
    if ((h = calloc(1, sizeof(*h))) == NULL)
        return PQV_E_NOMEM;
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&h->share_mu[i], NULL);
    pthread_mutex_init(&h->mu, NULL);

    endpoint = cfg->endpoint;
    if (endpoint == NULL) {
        snprintf(defep, sizeof(defep), "https://s3.%s.amazonaws.com",
            cfg->region != NULL ? cfg->region : "us-east-1");
        endpoint = defep;
    }
    if ((rc = s3_config_endpoint_parse(endpoint, &h->ep)) != 0)
        goto err;
    h->path_style = cfg->path_style >= 0 ? cfg->path_style
        : cfg->endpoint != NULL || strchr(bucket, '.') != NULL;
    snprintf(h->host, sizeof(h->host), "%s%s%s", h->path_style ? "" : bucket,
        h->path_style ? "" : ".", h->ep.host);
    if (h->ep.port != 0)
        snprintf(h->host + strlen(h->host), sizeof(h->host) - strlen(h->host), ":%u",
            h->ep.port);
    h->bucket = dup_or_null(bucket, &failed);
    h->region = dup_or_null(cfg->region != NULL ? cfg->region : "us-east-1", &failed);
    h->access_key = dup_or_null(cfg->access_key, &failed);
    h->ca_file = dup_or_null(cfg->ca_file, &failed);
    h->token = dup_or_null(cfg->session_token, &failed);
    /* The secret in its own page-aligned, locked allocation. */
    if (posix_memalign((void **)&h->secret, 4096, SECRET_CAP) != 0) {
        h->secret = NULL;
        failed = 1;
    }
    if (failed) {
        rc = PQV_E_NOMEM;
        goto err;
    }
    util_pin_memory(h->secret, SECRET_CAP);
    (void)madvise(h->secret, SECRET_CAP, MADV_DONTDUMP);
    memset(h->secret, 0, SECRET_CAP);
    memcpy(h->secret, cfg->secret_key, strlen(cfg->secret_key));
    h->max_attempts = cfg->max_attempts != 0 ? cfg->max_attempts : PQV_S3_ATTEMPTS_DEFAULT;
    if (h->max_attempts > 20)
        h->max_attempts = 20;
    h->base_ms = cfg->retry_base_ms != 0 ? cfg->retry_base_ms : PQV_S3_RETRY_BASE_DEFAULT;
    if (h->base_ms > S3_RETRY_CAP_MS)
        h->base_ms = S3_RETRY_CAP_MS;

    if ((h->share = curl_share_init()) == NULL) {
        rc = PQV_E_NOMEM;
        goto err;
    }
    curl_share_setopt(h->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(h->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(h->share, CURLSHOPT_USERDATA, h);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);

    /* Success! */
    *out = h;
    return 0;

err:
    /* Failure! */
    s3_http_free(h);
    return rc;
}

void
s3_http_free(s3_http *h)
{
    size_t i;

    if (h == NULL)
        return;
    for (i = 0; i < h->nidle; i++)
        curl_easy_cleanup(h->idle[i]);
    if (h->share != NULL)
        curl_share_cleanup(h->share);
    if (h->secret != NULL) {
        util_wipe(h->secret, SECRET_CAP);
        util_unpin_memory(h->secret, SECRET_CAP);
        free(h->secret);
    }
    if (h->token != NULL) {
        util_wipe(h->token, strlen(h->token));
        free(h->token);
    }
    free(h->bucket);
    free(h->region);
    free(h->access_key);
    free(h->ca_file);
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&h->share_mu[i]);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

void
s3_http_describe(const s3_http *h, char *buf, size_t len)
{
    snprintf(buf, len, "%s://%s/%s", h->ep.https ? "https" : "http", h->host,
        h->path_style ? h->bucket : "");
}

void
s3_http_stats(s3_http *h, struct s3_http_stats *st)
{
    pthread_mutex_lock(&h->mu);
    *st = h->stats;
    pthread_mutex_unlock(&h->mu);
}

/* get_handle(h): an idle easy handle or a new one. */
static CURL *
get_handle(s3_http *h)
{
    CURL *c = NULL;

    pthread_mutex_lock(&h->mu);
    if (h->nidle > 0)
        c = h->idle[--h->nidle];
    h->in_flight++;
    if (h->in_flight > h->stats.in_flight_max)
        h->stats.in_flight_max = h->in_flight;
    pthread_mutex_unlock(&h->mu);
    if (c == NULL && (c = curl_easy_init()) != NULL) {
        pthread_mutex_lock(&h->mu);
        h->stats.handles++;
        pthread_mutex_unlock(&h->mu);
    }
    return c;
}

static void
put_handle(s3_http *h, CURL *c)
{
    pthread_mutex_lock(&h->mu);
    h->in_flight--;
    if (c != NULL && h->nidle < S3_POOL_MAX) {
        h->idle[h->nidle++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&h->mu);
    if (c != NULL)
        curl_easy_cleanup(c);
}

/* ---- one attempt (its callbacks: s3_http_transfer.c) ---- */

/* build_url(h, req, query, url): the request URL (path-style or virtual
 * host); the path also goes into ${path} for signing. */
static int
build_url(const s3_http *h, const struct s3_req *req, const char *query, char *url, size_t urllen,
    char *path, size_t pathlen)
{
    size_t n = 0;
    long e;
    int w;

    if (h->path_style) {
        w = snprintf(path, pathlen, "/%s%s", h->bucket, req->key != NULL ? "/" : "");
        if (w < 0 || (size_t)w >= pathlen)
            return PQV_E_INVAL;
        n = (size_t)w;
    } else {
        path[n++] = '/';
    }
    if (req->key != NULL) {
        e = s3_sign_uri_encode(path + n, pathlen - n, req->key, strlen(req->key), 0);
        if (e < 0)
            return error_set(PQV_E_INVAL, NULL, "S3: object key too long");
    } else {
        path[n] = '\0';
    }
    w = snprintf(url, urllen, "%s://%s%s%s%s", h->ep.https ? "https" : "http", h->host, path,
        query[0] != '\0' ? "?" : "", query);
    if (w < 0 || (size_t)w >= urllen)
        return error_set(PQV_E_INVAL, NULL, "S3: request URL too long");
    return 0;
}

/* add_header(list, name, value): append "name: value"; the list owns a
 * copy (wiped before it is freed). */
static int
add_header(struct curl_slist **list, const char *name, const char *value)
{
    char line[S3_AUTH_MAX + 64];
    struct curl_slist *l;
    int n = snprintf(line, sizeof(line), "%s: %s", name, value);

    if (n < 0 || (size_t)n >= sizeof(line))
        return error_set(PQV_E_INVAL, NULL, "S3: header too long");
    l = curl_slist_append(*list, line);
    util_wipe(line, sizeof(line));
    if (l == NULL)
        return PQV_E_NOMEM;
    *list = l;
    return 0;
}

static void
free_headers(struct curl_slist *list)
{
    for (struct curl_slist *l = list; l != NULL; l = l->next)
        util_wipe(l->data, strlen(l->data));
    curl_slist_free_all(list);
}

/* transient_curl(code): whether a transfer that failed with ${code} may
 * succeed when tried again. */
static int
transient_curl(CURLcode code)
{
    switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_UPLOAD_FAILED:
    case CURLE_SEND_FAIL_REWIND:
    case CURLE_READ_ERROR:
        return 1;
    default:
        return 0;
    }
}

static int
transient_status(const struct s3_resp *r)
{
    if (r->status >= 500 || r->status == 429)
        return 1;
    return strcmp(r->err.code, "SlowDown") == 0 || strcmp(r->err.code, "RequestTimeout") == 0 ||
        strcmp(r->err.code, "InternalError") == 0;
}

/* backoff(h, attempt): sleep before attempt ${attempt} + 1: a random time
 * in [d/2, d] for d = base * 2^(attempt - 1), capped. */
static void
backoff(const s3_http *h, unsigned attempt)
{
    uint64_t d = h->base_ms, r = 0;
    struct timespec ts;

    for (unsigned i = 1; i < attempt && d < S3_RETRY_CAP_MS; i++)
        d *= 2;
    if (d > S3_RETRY_CAP_MS)
        d = S3_RETRY_CAP_MS;
    if (util_random(&r, sizeof(r)) != 0)
        r = 0;
    d = d / 2 + (d / 2 > 0 ? r % (d / 2 + 1) : 0);
    ts.tv_sec = (time_t)(d / 1000);
    ts.tv_nsec = (long)(d % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void
resp_reset(struct s3_resp *r)
{
    unsigned attempts = r->attempts;

    free(r->body);
    memset(r, 0, sizeof(*r));
    r->attempts = attempts;
}

/* attempt_once(h, c, req, payload_hash, query, url, path, resp): one
 * signed try.  Returns the curl code; the response is in ${resp}. */
static CURLcode
attempt_once(s3_http *h, CURL *c, const struct s3_req *req, const char *payload_hash,
    const char *url, const char *path, struct s3_resp *resp, int *local_rc)
{
    struct s3_header hdr[4 + MAX_EXTRA_HEADERS];
    struct s3_sign_input in;
    struct s3_sign_output sig;
    struct curl_slist *list = NULL;
    struct s3_http_attempt a;
    char amz_date[S3_AMZ_DATE_LEN], errbuf[CURL_ERROR_SIZE];
    size_t nh = 0, i;
    CURLcode code = CURLE_FAILED_INIT;
    int rc;

    memset(&a, 0, sizeof(a));
    memset(&sig, 0, sizeof(sig));
    a.req = req;
    a.resp = resp;
    a.head = strcmp(req->method, "HEAD") == 0;
    a.keep = req->dest != NULL || req->want_body;
    a.limit = req->dest != NULL ? req->dest_len : req->max_body;
    *local_rc = 0;

    s3_sign_amz_date((int64_t)time(NULL), amz_date);
    hdr[nh++] = (struct s3_header){ "host", h->host };
    hdr[nh++] = (struct s3_header){ "x-amz-date", amz_date };
    hdr[nh++] = (struct s3_header){ "x-amz-content-sha256", payload_hash };
    if (h->token != NULL)
        hdr[nh++] = (struct s3_header){ "x-amz-security-token", h->token };
    for (i = 0; i < req->nheaders; i++)
        hdr[nh++] = req->headers[i];
    memset(&in, 0, sizeof(in));
    in.method = req->method;
    in.path = path;
    in.query = req->query;
    in.nquery = req->nquery;
    in.headers = hdr;
    in.nheaders = nh;
    in.payload_hash = payload_hash;
    in.amz_date = amz_date;
    in.region = h->region;
    in.service = "s3";
    in.access_key = h->access_key;
    in.secret_key = h->secret;
    if ((rc = s3_sign(&in, &sig)) != 0) {
        *local_rc = rc;
        return CURLE_FAILED_INIT;
    }
    for (i = 0; i < nh && rc == 0; i++)
        rc = add_header(&list, hdr[i].name, hdr[i].value);
    if (rc == 0)
        rc = add_header(&list, "Authorization", sig.authorization);
    s3_sign_output_clear(&sig);
    /* No "Expect: 100-continue" round trip; no Accept header. */
    if (rc == 0 && ((list = curl_slist_append(list, "Expect:")) == NULL ||
        (list = curl_slist_append(list, "Accept:")) == NULL))
        rc = PQV_E_NOMEM;
    if (rc != 0) {
        free_headers(list);
        *local_rc = rc;
        return CURLE_FAILED_INIT;
    }

    curl_easy_reset(c);
    errbuf[0] = '\0';
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_SHARE, h->share);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "pqvault");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 30L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 256L * 1024);
    curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, s3_http_transfer_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, s3_http_transfer_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
    if (h->ca_file != NULL)
        curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_file);
    if (strcmp(req->method, "PUT") == 0) {
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, s3_http_transfer_upload);
        curl_easy_setopt(c, CURLOPT_READDATA, &a);
        curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, s3_http_transfer_seek);
        curl_easy_setopt(c, CURLOPT_SEEKDATA, &a);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)req->body_len);
    } else if (a.head) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (strcmp(req->method, "GET") != 0) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
    }

    code = curl_easy_perform(c);
    free_headers(list);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);

    if (code != CURLE_OK) {
        const char *why = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(code);
        snprintf(resp->transport, sizeof(resp->transport), "%.159s", why);
        /* (curl's messages name hosts and ports, never headers.) */
    }
    if (a.errbody != NULL) {
        (void)s3_xml_parse_error(a.errbody, a.errlen, &resp->err);
        free(a.errbody);
    }
    return code;
}

int
s3_http_request(s3_http *h, const struct s3_req *req, struct s3_resp *resp)
{
    char payload_hash[S3_HEX_HASH_LEN], path[3 * 1024 + 128];
    char *query = NULL, *url = NULL;
    CURLcode code;
    CURL *c = NULL;
    int rc, local_rc;

    memset(resp, 0, sizeof(*resp));
    if (req->nheaders > MAX_EXTRA_HEADERS)
        return error_set(PQV_E_INVAL, NULL, "S3: too many headers");
    if (req->body != NULL && req->body_len > 0) {
        if ((rc = s3_sign_sha256_hex(req->body, req->body_len, payload_hash)) != 0)
            return rc;
    } else {
        memcpy(payload_hash, EMPTY_SHA256, sizeof(EMPTY_SHA256));
    }
    if ((rc = s3_sign_query(req->query, req->nquery, &query)) != 0)
        return rc;
    if ((url = malloc(URL_MAX)) == NULL) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    if ((rc = build_url(h, req, query, url, URL_MAX, path, sizeof(path))) != 0)
        goto out;
    if ((c = get_handle(h)) == NULL) {
        rc = PQV_E_NOMEM;
        put_handle(h, NULL);
        goto out;
    }
    for (;;) {
        resp_reset(resp);
        if (req->before_attempt != NULL && (rc = req->before_attempt(req->ctx)) != 0)
            break;
        resp->attempts++;
        pthread_mutex_lock(&h->mu);
        h->stats.requests++;
        if (resp->attempts > 1)
            h->stats.retries++;
        pthread_mutex_unlock(&h->mu);
        code = attempt_once(h, c, req, payload_hash, url, path, resp, &local_rc);
        if (local_rc != 0) {
            rc = local_rc;
            break;
        }
        if (resp->too_large) {
            rc = PQV_E_INTEGRITY;
            break;
        }
        if (code == CURLE_OK) {
            rc = 0;
            if (!transient_status(resp))
                break;
        } else {
            rc = PQV_E_IO;
            if (!transient_curl(code))
                break;
        }
        if (resp->attempts >= h->max_attempts)
            break;
        backoff(h, resp->attempts);
    }
    put_handle(h, c);
out:
    free(query);
    free(url);
    return rc;
}

void
s3_http_resp_clear(struct s3_resp *resp)
{
    if (resp == NULL)
        return;
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
}

int
s3_http_parse_date(const char *s, int64_t *t)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    int day, year, hh, mm, ss, mon = -1, n = 0;
    char mname[4];
    struct tm tm;
    time_t r;

    /* "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 7231 IMF-fixdate). */
    if (s == NULL || sscanf(s, "%*3s, %2d %3s %4d %2d:%2d:%2d GMT%n", &day, mname, &year, &hh,
            &mm, &ss, &n) != 6 || n == 0 || s[n] != '\0')
        return -1;
    for (int i = 0; i < 12; i++)
        if (strncmp(months + 3 * i, mname, 3) == 0)
            mon = i;
    if (mon < 0 || day < 1 || day > 31 || year < 1970 || hh > 23 || mm > 59 || ss > 60)
        return -1;
    memset(&tm, 0, sizeof(tm));
    tm.tm_mday = day;
    tm.tm_mon = mon;
    tm.tm_year = year - 1900;
    tm.tm_hour = hh;
    tm.tm_min = mm;
    tm.tm_sec = ss;
    if ((r = timegm(&tm)) == (time_t)-1)
        return -1;
    *t = (int64_t)r;
    return 0;
}

#else
typedef int s3_http_not_built;
#endif
