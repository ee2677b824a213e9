/*
 * s3_http.h: signed S3 requests over libcurl, for the S3 backend.
 *
 * One client per storage: a small pool of CURL easy handles (one per
 * concurrent caller, reused), sharing connections, DNS and TLS sessions
 * through a CURLSH with its lock callbacks, HTTP keep-alive.  Every request
 * is signed anew per attempt (SigV4, x-amz-content-sha256 the payload's
 * real hash) and retried on transient failures (connection errors,
 * timeouts, truncated bodies, 5xx, 429, SlowDown, RequestTimeout) with
 * exponential backoff and jitter, a bounded number of times.  Response
 * bodies are bounded: the caller's limit (Content-Length checked before
 * anything is allocated, the transfer aborted past it) or 64 KiB for an
 * error body.
 */
#ifndef PQV_S3_HTTP_H
#define PQV_S3_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/storage.h"
#include "storage/s3_sign.h"
#include "storage/s3_xml.h"

#define S3_ERROR_BODY_MAX (64u << 10)
#define S3_RETRY_CAP_MS 5000
#define S3_POOL_MAX 32

typedef struct s3_http s3_http;

struct s3_req {
    const char *method;               /* GET, PUT, HEAD, DELETE */
    const char *key;                  /* object key; NULL: the bucket */
    const struct s3_param *query;
    size_t nquery;
    const struct s3_header *headers;  /* extra headers, all signed */
    size_t nheaders;
    const uint8_t *body;              /* PUT payload */
    size_t body_len;
    uint8_t *dest;                    /* 2xx body into this buffer ... */
    size_t dest_len;                  /* ... of this size (more: too_large) */
    int want_body;                    /* else keep the 2xx body in
                                         resp->body, at most max_body
                                         bytes (more: too_large); without
                                         either it is discarded */
    size_t max_body;
    /* Called before each attempt (NULL: none); a non-zero return (a
     * PQV_E_* code, detail set) ends the request with it.  The writer
     * lease uses it so that no retry of a write starts after the lease
     * ran out. */
    int (*before_attempt)(void *ctx);
    void *ctx;
};

struct s3_resp {
    long status;                      /* 0: no HTTP response */
    uint8_t *body;                    /* 2xx body (malloc'd) unless dest */
    size_t body_len;                  /* bytes received (also into dest) */
    int too_large;                    /* body over the limit (aborted) */
    char etag[80];                    /* as sent, quotes included */
    char date[40];                    /* Date header */
    char last_modified[40];
    uint64_t content_length;
    int have_length;
    struct s3_error_info err;         /* parsed error body (status >= 300) */
    unsigned attempts;
    char transport[160];              /* why the last attempt failed */
};

/* s3_http_new(out, cfg, bucket): a client for ${bucket} at ${cfg}'s
 * endpoint, with copies of its credentials (the secret kept in locked
 * memory, wiped by s3_http_free).  0 or PQV_E_*. */
int s3_http_new(s3_http **out, const struct pqv_s3_config *cfg, const char *bucket);

/* s3_http_free(h): close connections, wipe credentials, free; NULL ok. */
void s3_http_free(s3_http *h);

/* s3_http_request(h, req, resp): run ${req} with retries.  0 once an HTTP
 * response that is not transient arrived, or the last attempt's transient
 * one (status in ${resp}, error body parsed into resp->err); PQV_E_IO if
 * no attempt got a response (resp->transport says why); PQV_E_INTEGRITY if
 * the body went over its limit (resp->too_large).  Free ${resp} with
 * s3_http_resp_clear. */
int s3_http_request(s3_http *h, const struct s3_req *req, struct s3_resp *resp);

/* s3_http_resp_clear(resp): free the body; safe twice. */
void s3_http_resp_clear(struct s3_resp *resp);

/* s3_http_describe(h, buf, len): "http://host:port/bucket" for messages. */
void s3_http_describe(const s3_http *h, char *buf, size_t len);

/* Counters since s3_http_new (for measurements and tests). */
struct s3_http_stats {
    uint64_t requests;       /* attempts made */
    uint64_t retries;        /* attempts after a transient failure */
    unsigned in_flight_max;  /* most requests in flight at once */
    unsigned handles;        /* easy handles created */
};
void s3_http_stats(s3_http *h, struct s3_http_stats *st);

/* storage_s3_stats(s, st): the counters of S3 storage ${s} (storage_s3.c);
 * PQV_E_INVAL if ${s} is another backend. */
int storage_s3_stats(pqv_storage *s, struct s3_http_stats *st);

/* s3_http_parse_date(s, t): an HTTP date ("Sun, 06 Nov 1994 08:49:37 GMT")
 * as seconds since the epoch.  0 or -1. */
int s3_http_parse_date(const char *s, int64_t *t);

#endif
