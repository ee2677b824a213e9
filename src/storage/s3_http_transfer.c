/*
 * s3_http_transfer.c: one S3 attempt's libcurl callbacks (see
 * s3_http_transfer.h).
 */
#include "storage/s3_http_transfer.h"

#ifndef PQV_NO_S3 /* (make static builds without libcurl: no S3 backend) */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int
success(long status)
{
    return status >= 200 && status < 300;
}

size_t
s3_http_transfer_header(char *buf, size_t size, size_t n, void *ud)
{
    struct s3_http_attempt *a = ud;
    struct s3_resp *r = a->resp;
    size_t len = size * n, vlen;
    const char *colon, *v;
    char *field = NULL;
    size_t cap = 0;

    if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
        /* A new status line: forget the headers of an interim reply. */
        const char *sp = memchr(buf, ' ', len);
        r->status = 0;
        if (sp != NULL && (size_t)(sp - buf) + 4 <= len && sp[1] >= '1' && sp[1] <= '5')
            r->status = strtol(sp + 1, NULL, 10);
        r->etag[0] = r->date[0] = r->last_modified[0] = '\0';
        r->have_length = 0;
        return len;
    }
    if ((colon = memchr(buf, ':', len)) == NULL)
        return len;
    v = colon + 1;
    vlen = len - (size_t)(v - buf);
    while (vlen > 0 && (*v == ' ' || *v == '\t')) {
        v++;
        vlen--;
    }
    while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
        vlen--;
#define IS(name) ((size_t)(colon - buf) == sizeof(name) - 1 && \
    strncasecmp(buf, name, sizeof(name) - 1) == 0)
    if (IS("ETag")) {
        field = r->etag;
        cap = sizeof(r->etag);
    } else if (IS("Date")) {
        field = r->date;
        cap = sizeof(r->date);
    } else if (IS("Last-Modified")) {
        field = r->last_modified;
        cap = sizeof(r->last_modified);
    } else if (IS("Content-Length")) {
        uint64_t cl = 0;
        size_t i;
        for (i = 0; i < vlen && v[i] >= '0' && v[i] <= '9' && cl < (UINT64_MAX / 10 - 10); i++)
            cl = cl * 10 + (uint64_t)(v[i] - '0');
        if (i == vlen && vlen > 0) {
            r->content_length = cl;
            r->have_length = 1;
            /* Refuse an oversized body before anything is allocated. */
            if (!a->head && a->keep && success(r->status) && cl > a->limit) {
                r->too_large = 1;
                return 0;
            }
        }
    }
#undef IS
    if (field != NULL) {
        if (vlen >= cap)
            vlen = cap - 1;
        memcpy(field, v, vlen);
        field[vlen] = '\0';
        for (size_t i = 0; i < vlen; i++)
            if ((unsigned char)field[i] < 0x20 || field[i] == 0x7f)
                field[i] = '?';
    }
    return len;
}

size_t
s3_http_transfer_body(char *buf, size_t size, size_t n, void *ud)
{
    struct s3_http_attempt *a = ud;
    struct s3_resp *r = a->resp;
    size_t len = size * n;

    if (!success(r->status)) {
        /* An error body: keep what fits, drop the rest. */
        size_t room = S3_ERROR_BODY_MAX - a->errlen;
        if (a->errbody == NULL && (a->errbody = malloc(S3_ERROR_BODY_MAX)) == NULL)
            return 0;
        if (len < room)
            room = len;
        memcpy(a->errbody + a->errlen, buf, room);
        a->errlen += room;
        return len;
    }
    if (!a->keep)
        return len;
    if (len > a->limit - r->body_len) {
        r->too_large = 1;
        return 0;
    }
    if (a->req->dest != NULL) {
        memcpy(a->req->dest + r->body_len, buf, len);
    } else {
        if (r->body_len + len > a->cap) {
            size_t cap = r->have_length && r->content_length <= a->limit
                ? (size_t)r->content_length : (a->cap ? 2 * a->cap : 65536);
            uint8_t *nb;
            if (cap < r->body_len + len)
                cap = r->body_len + len;
            if (cap > a->limit)
                cap = a->limit;
            if ((nb = realloc(r->body, cap)) == NULL)
                return 0;
            r->body = nb;
            a->cap = cap;
        }
        memcpy(r->body + r->body_len, buf, len);
    }
    r->body_len += len;
    return len;
}

size_t
s3_http_transfer_upload(char *buf, size_t size, size_t n, void *ud)
{
    struct s3_http_attempt *a = ud;
    size_t len = size * n, left = a->req->body_len - a->sent;

    if (len > left)
        len = left;
    if (len > 0)
        memcpy(buf, a->req->body + a->sent, len);
    a->sent += len;
    return len;
}

int
s3_http_transfer_seek(void *ud, curl_off_t offset, int origin)
{
    struct s3_http_attempt *a = ud;

    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > a->req->body_len)
        return CURL_SEEKFUNC_FAIL;
    a->sent = (size_t)offset;
    return CURL_SEEKFUNC_OK;
}

#else
typedef int s3_http_transfer_not_built;
#endif
