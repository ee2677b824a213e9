/*
 * s3_live.c: drives the S3 storage backend directly against a real server,
 * for the shell tests (tests/cli/s3_*.sh); not a unit test (run.sh does not
 * start it: it needs a server).  Configuration from the environment as the
 * CLI reads it ($AWS_ENDPOINT_URL, credentials, $PQVAULT_S3_LEASE_SECONDS).
 *
 *   s3_live URL ops        every storage operation, checked: ok/FAIL lines
 *   s3_live URL list N     put N small blobs under "many/", list them back
 *                          (pages of 1000: continuation tokens), delete
 *   s3_live URL parallel   16 threads putting and getting 1 MiB blobs;
 *                          prints the requests in flight at most
 *   s3_live URL putnew NAME TEXT
 *                          one create-only put; prints "putnew: 0" or the
 *                          error code and detail (faults are injected by the
 *                          caller's proxy)
 *   s3_live URL listall PREFIX
 *                          list PREFIX; prints "listed: N" or "list: RC DETAIL"
 *                          (tests/cli/list_bounds.sh, against a fake server)
 *   s3_live URL hold       take the writer lock, print "locked", then for
 *                          each line on stdin: "put" (put the blob held-put-N for
 *                          the N-th, print "put: RC"), "quit"; unlock at end of input
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqvault/storage.h"
#include "storage/s3_http.h"

static int failures;

static void
check(int cond, const char *what)
{
    printf("%s - s3_live: %s\n", cond ? "ok" : "FAIL", what);
    if (!cond) {
        printf("#   detail: %s\n", pqv_error_detail());
        failures++;
    }
    fflush(stdout);
}

struct names {
    char **v;
    size_t n;
    uint64_t bytes;
};

static int
collect(void *ctx, const char *name, uint64_t size)
{
    struct names *n = ctx;
    char **v = realloc(n->v, (n->n + 1) * sizeof(char *));

    if (v == NULL || (v[n->n] = strdup(name)) == NULL)
        return PQV_E_NOMEM;
    n->v = v;
    n->n++;
    n->bytes += size;
    return 0;
}

static void
names_free(struct names *n)
{
    for (size_t i = 0; i < n->n; i++)
        free(n->v[i]);
    free(n->v);
    memset(n, 0, sizeof(*n));
}

static int
has(const struct names *n, const char *name)
{
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->v[i], name) == 0)
            return 1;
    return 0;
}

static void
ops(pqv_storage *s)
{
    const struct pqv_storage_ops *o = s->ops;
    uint8_t data[3000], buf[3000], *got = NULL;
    struct names n = { 0 };
    size_t len = 0;
    uint64_t size = 0;

    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 7 + 3);
    check(o->put(s, "objects/ab/one", data, sizeof(data)) == 0, "put");
    check(o->put(s, "objects/ab/one", data, sizeof(data)) == 0, "put again (replace)");
    check(o->put(s, "top", data, 10) == 0, "put at the top level");
    check(o->put(s, "empty", data, 0) == 0, "put of an empty blob");
    check(o->get(s, "objects/ab/one", &got, &len, sizeof(data)) == 0 && len == sizeof(data) &&
        memcmp(got, data, len) == 0, "get returns the bytes");
    free(got);
    got = NULL;
    check(o->get(s, "objects/ab/one", &got, &len, sizeof(data) - 1) == PQV_E_INTEGRITY &&
        got == NULL, "get over maxlen: PQV_E_INTEGRITY");
    check(o->get(s, "empty", &got, &len, 10) == 0 && len == 0, "get of an empty blob");
    free(got);
    got = NULL;
    check(o->get(s, "objects/ab/none", &got, &len, 100) == PQV_E_NOTFOUND, "get absent: NOTFOUND");
    check(strstr(pqv_error_detail(), "objects/ab/none") != NULL &&
        strstr(pqv_error_detail(), "404 NoSuchKey") != NULL, "the error names blob, status, code");
    check(o->stat(s, "objects/ab/one", &size) == 0 && size == sizeof(data), "stat");
    check(o->stat(s, "nothing", &size) == PQV_E_NOTFOUND, "stat absent: NOTFOUND");
    check(o->get_range(s, "objects/ab/one", 1000, buf, 500) == 0 &&
        memcmp(buf, data + 1000, 500) == 0, "get_range");
    check(o->get_range(s, "objects/ab/one", 2999, buf, 1) == 0 && buf[0] == data[2999],
        "get_range of the last byte");
    check(o->get_range(s, "objects/ab/one", 2990, buf, 20) == PQV_E_INTEGRITY,
        "get_range past the end: INTEGRITY");
    check(o->get_range(s, "objects/ab/one", 5000, buf, 20) == PQV_E_INTEGRITY,
        "get_range beyond the end: INTEGRITY");
    check(o->get_range(s, "objects/ab/one", 3000, buf, 0) == 0, "get_range of 0 bytes at the end");
    check(o->get_range(s, "absent", 0, buf, 5) == PQV_E_NOTFOUND, "get_range absent: NOTFOUND");
    check(o->put_new(s, "segments/0001", data, 100) == 0, "put_new creates");
    check(o->put_new(s, "segments/0001", data + 1, 100) == PQV_E_EXISTS,
        "put_new over other bytes: EXISTS");
    check(o->put_new(s, "segments/0001", data, 100) == 0,
        "put_new of identical bytes: success (a retried create)");
    check(o->list(s, "objects", collect, &n) == 0 && n.n == 1 && has(&n, "objects/ab/one") &&
        n.bytes == sizeof(data), "list objects");
    names_free(&n);
    check(o->list(s, "", collect, &n) == 0 && n.n == 2 && has(&n, "top") && has(&n, "empty"),
        "list of the top level: blobs only, no lease");
    names_free(&n);
    check(o->list(s, "nothing", collect, &n) == 0 && n.n == 0, "list of an absent prefix");
    names_free(&n);
    check(o->del(s, "objects/ab/one") == 0, "del");
    check(o->del(s, "objects/ab/one") == PQV_E_NOTFOUND, "del absent: NOTFOUND");
    check(o->barrier(s) == 0, "barrier");
    check(o->put(s, "../x", data, 1) == PQV_E_INVAL && o->put(s, "/x", data, 1) == PQV_E_INVAL,
        "names with .. or a leading / refused");
    {
        char holder[PQV_LOCK_HOLDER_MAX];
        check(o->lock(s, 0, holder, sizeof(holder)) == 0, "lock");
        check(o->lock(s, 0, holder, sizeof(holder)) == 0, "lock again (held)");
        check(o->list(s, "", collect, &n) == 0 && !has(&n, "lock"), "the lease is not listed");
        names_free(&n);
        check(o->put(s, "locked-put", data, 1) == 0, "put under the lease");
        o->unlock(s);
        check(o->stat(s, "lock", NULL) == PQV_E_NOTFOUND, "unlock deletes the lease");
    }
    (void)o->del(s, "top");
    (void)o->del(s, "empty");
    (void)o->del(s, "locked-put");
    (void)o->del(s, "segments/0001");
}

static void
list_many(pqv_storage *s, int count)
{
    const struct pqv_storage_ops *o = s->ops;
    struct names n = { 0 };
    char name[64];
    int ok = 1;

    for (int i = 0; i < count && ok; i++) {
        snprintf(name, sizeof(name), "many/%05d", i);
        ok = o->put(s, name, (const uint8_t *)name, strlen(name)) == 0;
    }
    check(ok, "put many blobs");
    check(o->list(s, "many", collect, &n) == 0 && n.n == (size_t)count,
        "list returns every blob (continuation tokens)");
    for (size_t i = 0; i < n.n && ok; i++) {
        snprintf(name, sizeof(name), "many/%05zu", i);
        ok = strcmp(n.v[i], name) == 0;
    }
    check(ok, "listed in key order, each once");
    for (size_t i = 0; i < n.n; i++)
        (void)o->del(s, n.v[i]);
    names_free(&n);
}

struct par {
    pqv_storage *s;
    int id, rc;
};

static void *
par_run(void *arg)
{
    struct par *p = arg;
    size_t len = 1u << 20, got_len;
    uint8_t *data = malloc(len), *got = NULL;
    char name[64];

    if (data == NULL)
        return NULL;
    memset(data, p->id, len);
    for (int k = 0; k < 4 && p->rc == 0; k++) {
        snprintf(name, sizeof(name), "par/%02d-%d", p->id, k);
        p->rc = p->s->ops->put(p->s, name, data, len);
        if (p->rc == 0)
            p->rc = p->s->ops->get(p->s, name, &got, &got_len, len);
        if (p->rc == 0 && (got_len != len || memcmp(got, data, len) != 0))
            p->rc = -100;
        free(got);
        got = NULL;
        (void)p->s->ops->del(p->s, name);
    }
    free(data);
    return NULL;
}

static void
parallel(pqv_storage *s)
{
    pthread_t t[16];
    struct par p[16];
    int ok = 1;

    for (int i = 0; i < 16; i++) {
        p[i] = (struct par){ s, i, 0 };
        pthread_create(&t[i], NULL, par_run, &p[i]);
    }
    for (int i = 0; i < 16; i++) {
        pthread_join(t[i], NULL);
        ok &= p[i].rc == 0;
    }
    check(ok, "16 threads put and get 1 MiB blobs");
    check(s->ops->barrier(s) == 0, "barrier after parallel puts");
    {
        struct s3_http_stats st;
        if (storage_s3_stats(s, &st) == 0) {
            printf("# requests %llu, retries %llu, in flight at most %u, handles %u\n",
                (unsigned long long)st.requests, (unsigned long long)st.retries,
                st.in_flight_max, st.handles);
            check(st.in_flight_max > 1 && st.handles <= 17, "requests ran in parallel on "
                "reused handles");
        }
    }
}

static void
hold(pqv_storage *s)
{
    char holder[PQV_LOCK_HOLDER_MAX], line[64], name[32];
    int rc = s->ops->lock(s, 0, holder, sizeof(holder)), puts = 0;

    if (rc != 0) {
        printf("lock: %d %s\n", rc, pqv_error_detail());
        return;
    }
    printf("locked\n");
    fflush(stdout);
    while (fgets(line, sizeof(line), stdin) != NULL) {
        if (strncmp(line, "put", 3) == 0) {
            snprintf(name, sizeof(name), "held-put-%d", ++puts);
            rc = s->ops->put(s, name, (const uint8_t *)"x", 1);
            printf("put: %d %s\n", rc, rc != 0 ? pqv_error_detail() : "");
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        }
        fflush(stdout);
    }
    s->ops->unlock(s);
}

int
main(int argc, char **argv)
{
    struct pqv_s3_config cfg;
    pqv_storage *s = NULL;
    const char *lease = getenv("PQVAULT_S3_LEASE_SECONDS");
    int rc;

    if (argc < 3) {
        fprintf(stderr, "usage: s3_live URL ops|list N|listall PREFIX|parallel|"
            "putnew NAME TEXT|hold\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((rc = pqv_s3_config_from_env(&cfg, NULL, NULL)) != 0) {
        fprintf(stderr, "s3_live: %s\n", pqv_error_detail());
        pqv_s3_config_clear(&cfg);
        return 1;
    }
    if (lease != NULL)
        cfg.lease_seconds = (unsigned)atoi(lease);
    rc = pqv_storage_s3_open(&s, argv[1], &cfg, 0);
    pqv_s3_config_clear(&cfg);
    if (rc != 0) {
        printf("open: %d %s\n", rc, pqv_error_detail());
        return 1;
    }
    if (strcmp(argv[2], "ops") == 0) {
        ops(s);
    } else if (strcmp(argv[2], "list") == 0 && argc > 3) {
        list_many(s, atoi(argv[3]));
    } else if (strcmp(argv[2], "parallel") == 0) {
        parallel(s);
    } else if (strcmp(argv[2], "putnew") == 0 && argc > 4) {
        rc = s->ops->put_new(s, argv[3], (const uint8_t *)argv[4], strlen(argv[4]));
        printf("putnew: %d %s\n", rc, rc != 0 ? pqv_error_detail() : "");
    } else if (strcmp(argv[2], "listall") == 0 && argc > 3) {
        struct names n = { NULL, 0, 0 };
        rc = s->ops->list(s, argv[3], collect, &n);
        if (rc == 0)
            printf("listed: %zu\n", n.n);
        else
            printf("list: %d %s\n", rc, pqv_error_detail());
        for (size_t i = 0; i < n.n; i++)
            free(n.v[i]);
        free(n.v);
    } else if (strcmp(argv[2], "hold") == 0) {
        hold(s);
    } else {
        fprintf(stderr, "s3_live: unknown scenario %s\n", argv[2]);
        failures++;
    }
    s->ops->close(s);
    return failures ? 1 : 0;
}
