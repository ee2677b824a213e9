/*
 * storage/s3_http_transfer.h: one S3 attempt's libcurl callbacks
 * (s3_http_transfer.c): the reply's headers and body taken in, bounded,
 * and the request body given out (rewound on a retry).  Used by
 * s3_http.c's attempt, which owns the struct below.
 */
#ifndef PQV_STORAGE_S3_HTTP_TRANSFER_H
#define PQV_STORAGE_S3_HTTP_TRANSFER_H

#ifndef PQV_NO_S3

#include <curl/curl.h>
#include <stddef.h>

#include "storage/s3_http.h"

struct s3_http_attempt {
    const struct s3_req *req;
    struct s3_resp *resp;
    int head;
    int keep;            /* the 2xx body is wanted */
    size_t limit;        /* body limit (dest_len or max_body) */
    size_t cap;          /* allocated for resp->body */
    char *errbody;       /* error body, at most S3_ERROR_BODY_MAX */
    size_t errlen;
    size_t sent;         /* upload offset */
};

/* CURLOPT_HEADERFUNCTION: status, ETag, Date, Last-Modified and
 * Content-Length (an oversized 2xx body refused before it is read). */
size_t s3_http_transfer_header(char *buf, size_t size, size_t n, void *ud);
/* CURLOPT_WRITEFUNCTION: a 2xx body into the caller's buffer or a grown
 * one, within the limit; an error body, at most S3_ERROR_BODY_MAX. */
size_t s3_http_transfer_body(char *buf, size_t size, size_t n, void *ud);
/* CURLOPT_READFUNCTION and CURLOPT_SEEKFUNCTION: the request body. */
size_t s3_http_transfer_upload(char *buf, size_t size, size_t n, void *ud);
int s3_http_transfer_seek(void *ud, curl_off_t offset, int origin);

#endif
#endif
