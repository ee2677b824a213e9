/*
 * storage_s3_list.c: the S3 backend's listing (storage/
 * storage_s3_internal.h): ListObjectsV2 page by page (continuation
 * tokens), each key given back without the vault's prefix, sizes as the
 * server reports them.
 */
#include "pqvault/storage.h"

#ifndef PQV_NO_S3 /* (make static builds without libcurl: no S3 backend) */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/s3_http.h"
#include "storage/s3_xml.h"
#include "storage/storage_s3_internal.h"
#include "util/util.h"

/* list_page(s, full, delim, token, page): one ListObjectsV2 request. */
static int
list_page(struct s3_storage *s, const char *what, const char *full, int delim, const char *token,
    struct s3_list_page *page)
{
    struct s3_param q[5];
    struct s3_req req;
    struct s3_resp r;
    size_t nq = 0;
    int rc;

    q[nq++] = (struct s3_param){ "list-type", "2" };
    q[nq++] = (struct s3_param){ "max-keys", LIST_PAGE_KEYS };
    q[nq++] = (struct s3_param){ "prefix", full };
    if (delim)
        q[nq++] = (struct s3_param){ "delimiter", "/" };
    if (token != NULL)
        q[nq++] = (struct s3_param){ "continuation-token", token };
    memset(&req, 0, sizeof(req));
    req.method = "GET";
    req.query = q;
    req.nquery = nq;
    req.want_body = 1;
    req.max_body = S3_XML_MAX_DOC;
    rc = s3_http_request(s->http, &req, &r);
    if (rc == 0 && r.status == 200) {
        if ((rc = s3_xml_parse_list((const char *)r.body, r.body_len, page)) != 0)
            rc = error_set(rc, NULL, "%s/%s: %s", s->url, what, pqv_error_detail());
    } else {
        rc = storage_s3_fail(s, what, rc, &r);
    }
    s3_http_resp_clear(&r);
    return rc;
}

int
storage_s3_list(pqv_storage *st, const char *prefix, pqv_storage_list_fn fn, void *ctx)
{
    struct s3_storage *s = (struct s3_storage *)st;
    char full[1200], *token = NULL;
    size_t n = strlen(prefix), root = strlen(s->prefix) + (s->prefix[0] ? 1 : 0);
    uint64_t names = 0, pages = 0, max_pages = s->list_max / 100 + 10;
    int rc = 0, top = n == 0, more;
    int w;

    /* Prefixes are "directories" here too: "records" lists records/... */
    if (n > 0 && prefix[n - 1] == '/')
        n--;
    w = snprintf(full, sizeof(full), "%s%s%.*s%s", s->prefix, s->prefix[0] ? "/" : "", (int)n,
        prefix, n > 0 ? "/" : "");
    if (w < 0 || (size_t)w >= sizeof(full) || (n > 0 && (prefix[0] == '/' ||
        strstr(prefix, "..") != NULL)))
        return error_set(PQV_E_INVAL, prefix, "invalid storage prefix");
    for (;;) {
        struct s3_list_page page;
        /* Bounded: a server (or whoever fills the bucket) cannot make a
         * listing go on, or grow, without end. */
        if (++pages > max_pages) {
            rc = error_set(PQV_E_LIMIT, s->url, "%s/: the listing goes on beyond %llu pages "
                "(%llu names so far): refused", top ? "" : prefix,
                (unsigned long long)max_pages, (unsigned long long)names);
            break;
        }
        if ((rc = list_page(s, top ? "" : prefix, full, top, token, &page)) != 0)
            break;
        for (size_t i = 0; i < page.n && rc == 0; i++) {
            const char *key = page.entries[i].key, *name;
            if (strncmp(key, full, (size_t)w) != 0 || strlen(key) <= root)
                continue; /* not ours: a server bug, skip it */
            name = key + root;
            if (name[strlen(name) - 1] == '/')
                continue; /* a "directory" marker, not a blob */
            if (top && strcmp(name, LEASE_NAME) == 0)
                continue; /* the lease is not a blob */
            if (++names > s->list_max) {
                rc = error_set(PQV_E_LIMIT, s->url, "%s/ holds more than %llu names, more than "
                    "a vault writes: refused", top ? "" : prefix,
                    (unsigned long long)s->list_max);
                break;
            }
            rc = fn(ctx, name, page.entries[i].size);
        }
        more = rc == 0 && page.truncated;
        if (more) {
            if (token != NULL && strcmp(token, page.next_token) == 0)
                rc = error_set(PQV_E_IO, s->url, "listing does not advance");
            free(token);
            token = page.next_token;
            page.next_token = NULL;
        }
        s3_xml_list_page_clear(&page);
        if (rc != 0 || !more)
            break;
    }
    free(token);
    return rc;
}

#endif
