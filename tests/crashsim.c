/*
 * crashsim.c: the in-memory storage that models durability (crashsim.h).
 */
#include "crashsim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

struct blob {
    char *name;
    uint8_t *data;
    size_t len;
};

/* A set of named blobs (small: a linear search is enough). */
struct blobset {
    struct blob *b;
    size_t n, cap;
};

enum { OP_PUT = 1, OP_DEL = 2, OP_PARTIAL = 3 };

/* A name operation not yet durable. */
struct op {
    int kind;
    char *name;           /* final name (OP_PARTIAL: the temporary's name) */
    char *temp;           /* the put's temporary name */
    uint8_t *data;
    size_t len;
};

struct crashsim {
    pqv_storage base;
    pthread_mutex_t mutex;
    struct blobset live;     /* what the running process sees */
    struct blobset durable;  /* what survives any crash */
    struct op *ops;          /* pending since the last barrier */
    size_t nops, capops;
    unsigned long steps, crash_at;
    int crashed;
    unsigned long temps;     /* counter for temporary names */
};

static void *
xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (p == NULL) {
        fprintf(stderr, "crashsim: out of memory\n");
        abort();
    }
    return p;
}

static uint8_t *
dup_bytes(const uint8_t *data, size_t len)
{
    uint8_t *p = xmalloc(len);

    if (len > 0)
        memcpy(p, data, len);
    return p;
}

static char *
xstrdup(const char *s)
{
    return (char *)dup_bytes((const uint8_t *)s, strlen(s) + 1);
}

static struct blob *
set_find(struct blobset *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->b[i].name, name) == 0)
            return &s->b[i];
    return NULL;
}

static void
set_put(struct blobset *s, const char *name, const uint8_t *data, size_t len)
{
    struct blob *b = set_find(s, name);

    if (b == NULL) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 32;
            struct blob *p = realloc(s->b, s->cap * sizeof(*p));
            if (p == NULL)
                abort();
            s->b = p;
        }
        b = &s->b[s->n++];
        b->name = xstrdup(name);
    } else {
        free(b->data);
    }
    b->data = dup_bytes(data, len);
    b->len = len;
}

static void
set_del(struct blobset *s, const char *name)
{
    struct blob *b = set_find(s, name);

    if (b == NULL)
        return;
    free(b->name);
    free(b->data);
    *b = s->b[--s->n];
}

static void
set_free(struct blobset *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->b[i].name);
        free(s->b[i].data);
    }
    free(s->b);
    memset(s, 0, sizeof(*s));
}

static void
set_copy(struct blobset *dst, const struct blobset *src)
{
    for (size_t i = 0; i < src->n; i++)
        set_put(dst, src->b[i].name, src->b[i].data, src->b[i].len);
}

static void
ops_push(struct crashsim *cs, int kind, const char *name, const char *temp,
    const uint8_t *data, size_t len)
{
    struct op *o;

    if (cs->nops == cs->capops) {
        cs->capops = cs->capops ? 2 * cs->capops : 32;
        struct op *p = realloc(cs->ops, cs->capops * sizeof(*p));
        if (p == NULL)
            abort();
        cs->ops = p;
    }
    o = &cs->ops[cs->nops++];
    o->kind = kind;
    o->name = xstrdup(name);
    o->temp = temp != NULL ? xstrdup(temp) : NULL;
    o->data = data != NULL ? dup_bytes(data, len) : NULL;
    o->len = len;
}

static void
ops_clear(struct crashsim *cs)
{
    for (size_t i = 0; i < cs->nops; i++) {
        free(cs->ops[i].name);
        free(cs->ops[i].temp);
        free(cs->ops[i].data);
    }
    cs->nops = 0;
}

static void
temp_name(struct crashsim *cs, const char *name, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s%s%016lx", name, PQV_STORAGE_TEMP_MARK, ++cs->temps);
}

/* step(cs): count a durability step; non-zero if the world stops here.
 * Caller holds the mutex. */
static int
step(struct crashsim *cs)
{
    if (cs->crashed)
        return 1;
    cs->steps++;
    if (cs->crash_at != 0 && cs->steps == cs->crash_at) {
        cs->crashed = 1;
        return 1;
    }
    return 0;
}

static int
crashed_error(const char *what, const char *name)
{
    return error_set(PQV_E_IO, name, "%s: simulated crash", what);
}

static int
sim_put(pqv_storage *s, const char *name, const uint8_t *data, size_t len)
{
    struct crashsim *cs = (struct crashsim *)s;
    char temp[512];
    int rc = 0;

    pthread_mutex_lock(&cs->mutex);
    temp_name(cs, name, temp, sizeof(temp));
    if (cs->crashed) {
        rc = crashed_error("put", name);
    } else if (step(cs)) {
        /* Interrupted: the temporary may exist with part of the content,
         * the last byte written garbled (it was never fsynced). */
        size_t half = len / 2;
        uint8_t *partial = dup_bytes(data, half + 1);
        partial[half] ^= 0x5a;
        ops_push(cs, OP_PARTIAL, temp, NULL, partial, half + 1);
        free(partial);
        rc = crashed_error("put", name);
    } else {
        set_put(&cs->live, name, data, len);
        ops_push(cs, OP_PUT, name, temp, data, len);
    }
    pthread_mutex_unlock(&cs->mutex);
    return rc;
}

/* A create-only put is modelled as the local backend does it: the synced
 * temporary is linked to its name (one step), durable at the next barrier;
 * an existing name fails without a step. */
static int
sim_put_new(pqv_storage *s, const char *name, const uint8_t *data, size_t len)
{
    struct crashsim *cs = (struct crashsim *)s;
    int exists;

    pthread_mutex_lock(&cs->mutex);
    exists = !cs->crashed && set_find(&cs->live, name) != NULL;
    pthread_mutex_unlock(&cs->mutex);
    if (exists)
        return error_set(PQV_E_EXISTS, name, "already exists");
    return sim_put(s, name, data, len);
}

static int
sim_get_range(pqv_storage *s, const char *name, uint64_t offset, uint8_t *buf, size_t len)
{
    struct crashsim *cs = (struct crashsim *)s;
    struct blob *b;
    int rc = 0;

    pthread_mutex_lock(&cs->mutex);
    if (cs->crashed)
        rc = crashed_error("get", name);
    else if ((b = set_find(&cs->live, name)) == NULL)
        rc = error_set(PQV_E_NOTFOUND, name, "not found");
    else if (offset > b->len || b->len - offset < len)
        rc = error_set(PQV_E_INTEGRITY, name, "shorter than expected");
    else if (len > 0)
        memcpy(buf, b->data + offset, len);
    pthread_mutex_unlock(&cs->mutex);
    return rc;
}

static int
sim_get(pqv_storage *s, const char *name, uint8_t **data, size_t *len, size_t maxlen)
{
    struct crashsim *cs = (struct crashsim *)s;
    struct blob *b;
    int rc = 0;

    pthread_mutex_lock(&cs->mutex);
    if (cs->crashed) {
        rc = crashed_error("get", name);
    } else if ((b = set_find(&cs->live, name)) == NULL) {
        rc = error_set(PQV_E_NOTFOUND, name, "not found");
    } else if (b->len > maxlen) {
        rc = error_set(PQV_E_INTEGRITY, name, "too large");
    } else {
        *data = dup_bytes(b->data, b->len);
        *len = b->len;
    }
    pthread_mutex_unlock(&cs->mutex);
    return rc;
}

static int
sim_stat(pqv_storage *s, const char *name, uint64_t *size)
{
    struct crashsim *cs = (struct crashsim *)s;
    struct blob *b;
    int rc = 0;

    pthread_mutex_lock(&cs->mutex);
    if (cs->crashed)
        rc = crashed_error("stat", name);
    else if ((b = set_find(&cs->live, name)) == NULL)
        rc = error_set(PQV_E_NOTFOUND, name, "not found");
    else if (size != NULL)
        *size = b->len;
    pthread_mutex_unlock(&cs->mutex);
    return rc;
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
sim_list(pqv_storage *s, const char *prefix, pqv_storage_list_fn fn, void *ctx)
{
    struct crashsim *cs = (struct crashsim *)s;
    char **names;
    uint64_t *sizes;
    size_t n = 0, plen = strlen(prefix);
    int rc = 0;

    if (plen > 0 && prefix[plen - 1] == '/')
        plen--;
    /* Collect under the mutex, call back without it (the callback may call
     * into the storage). */
    pthread_mutex_lock(&cs->mutex);
    if (cs->crashed) {
        pthread_mutex_unlock(&cs->mutex);
        return crashed_error("list", prefix);
    }
    names = xmalloc((cs->live.n + 1) * sizeof(*names));
    sizes = xmalloc((cs->live.n + 1) * sizeof(*sizes));
    for (size_t i = 0; i < cs->live.n; i++) {
        const char *nm = cs->live.b[i].name;
        int match = plen == 0 ? strchr(nm, '/') == NULL
                              : strncmp(nm, prefix, plen) == 0 && nm[plen] == '/';
        if (match)
            names[n++] = xstrdup(nm);
    }
    qsort(names, n, sizeof(*names), compare_names);
    for (size_t i = 0; i < n; i++)
        sizes[i] = set_find(&cs->live, names[i])->len;
    pthread_mutex_unlock(&cs->mutex);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = fn(ctx, names[i], sizes[i]);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(sizes);
    return rc;
}

static int
sim_del(pqv_storage *s, const char *name)
{
    struct crashsim *cs = (struct crashsim *)s;
    int rc = 0;

    pthread_mutex_lock(&cs->mutex);
    if (cs->crashed) {
        rc = crashed_error("del", name);
    } else if (set_find(&cs->live, name) == NULL) {
        /* unlink of a missing name: no step, like ENOENT */
        rc = error_set(PQV_E_NOTFOUND, name, "not found");
    } else if (step(cs)) {
        rc = crashed_error("del", name);
    } else {
        set_del(&cs->live, name);
        ops_push(cs, OP_DEL, name, NULL, NULL, 0);
    }
    pthread_mutex_unlock(&cs->mutex);
    return rc;
}

/* apply(dst, o, keep, temps): the effect of ${o} on the durable state if
 * it survived (${keep}) or not, leaving temporaries if ${temps}. */
static void
apply(struct blobset *dst, const struct op *o, int keep, int temps)
{
    switch (o->kind) {
    case OP_PUT:
        if (keep)
            set_put(dst, o->name, o->data, o->len);
        else if (temps)
            set_put(dst, o->temp, o->data, o->len);
        break;
    case OP_DEL:
        if (keep)
            set_del(dst, o->name);
        break;
    case OP_PARTIAL:
        if (keep && temps)
            set_put(dst, o->name, o->data, o->len);
        break;
    }
}

static int
sim_barrier(pqv_storage *s)
{
    struct crashsim *cs = (struct crashsim *)s;
    int rc = 0;

    pthread_mutex_lock(&cs->mutex);
    if (step(cs)) {
        rc = crashed_error("barrier", "(directories)");
    } else {
        for (size_t i = 0; i < cs->nops; i++)
            apply(&cs->durable, &cs->ops[i], 1, 0);
        ops_clear(cs);
    }
    pthread_mutex_unlock(&cs->mutex);
    return rc;
}

static int
sim_lock(pqv_storage *s, int wait, char *holder, size_t holderlen)
{
    (void)s;
    (void)wait;
    (void)holder;
    (void)holderlen;
    return 0;
}

static void
sim_unlock(pqv_storage *s)
{
    (void)s;
}

static void
sim_close(pqv_storage *s)
{
    (void)s; /* freed by crashsim_free */
}

static const struct pqv_storage_ops sim_ops = {
    .version = PQV_STORAGE_OPS_VERSION,
    .put = sim_put,
    .put_new = sim_put_new,
    .get = sim_get,
    .get_range = sim_get_range,
    .stat = sim_stat,
    .list = sim_list,
    .del = sim_del,
    .barrier = sim_barrier,
    .lock = sim_lock,
    .unlock = sim_unlock,
    .close = sim_close,
};

struct crashsim *
crashsim_new(void)
{
    struct crashsim *cs = xmalloc(sizeof(*cs));

    memset(cs, 0, sizeof(*cs));
    cs->base.ops = &sim_ops;
    pthread_mutex_init(&cs->mutex, NULL);
    return cs;
}

void
crashsim_free(struct crashsim *cs)
{
    if (cs == NULL)
        return;
    set_free(&cs->live);
    set_free(&cs->durable);
    ops_clear(cs);
    free(cs->ops);
    pthread_mutex_destroy(&cs->mutex);
    free(cs);
}

pqv_storage *
crashsim_storage(struct crashsim *cs)
{
    return &cs->base;
}

struct crashsim *
crashsim_snapshot(struct crashsim *cs)
{
    struct crashsim *out = crashsim_new();

    pthread_mutex_lock(&cs->mutex);
    set_copy(&out->live, &cs->live);
    set_copy(&out->durable, &cs->live);
    out->temps = cs->temps;
    pthread_mutex_unlock(&cs->mutex);
    return out;
}

void
crashsim_arm(struct crashsim *cs, unsigned long n)
{
    pthread_mutex_lock(&cs->mutex);
    cs->crash_at = n;
    cs->steps = 0;
    pthread_mutex_unlock(&cs->mutex);
}

unsigned long
crashsim_steps(const struct crashsim *cs)
{
    return cs->steps;
}

int
crashsim_crashed(const struct crashsim *cs)
{
    return cs->crashed;
}

size_t
crashsim_pending(const struct crashsim *cs)
{
    return cs->nops;
}

size_t
crashsim_outcomes(const struct crashsim *cs)
{
    size_t subsets = cs->nops <= CRASHSIM_EXHAUSTIVE ? (size_t)1 << cs->nops : CRASHSIM_SAMPLES + 2;

    return 2 * subsets;
}

/* A small deterministic generator (splitmix64). */
static uint64_t
mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct crashsim *
crashsim_outcome(const struct crashsim *cs, size_t i)
{
    struct crashsim *out = crashsim_new();
    int temps = (int)(i & 1);
    size_t subset = i >> 1;

    set_copy(&out->durable, &cs->durable);
    for (size_t k = 0; k < cs->nops; k++) {
        int keep;
        if (cs->nops <= CRASHSIM_EXHAUSTIVE)
            keep = (int)((subset >> k) & 1);
        else if (subset == 0)
            keep = 1;                     /* all kept */
        else if (subset == 1)
            keep = 0;                     /* all lost */
        else
            keep = (int)(mix(0x5eedull * 1000003u + subset * 131u + k) & 1);
        apply(&out->durable, &cs->ops[k], keep, temps);
    }
    set_copy(&out->live, &out->durable);
    out->temps = cs->temps + 1000;
    return out;
}

int
crashsim_set(struct crashsim *cs, const char *name, const uint8_t *data, size_t len)
{
    pthread_mutex_lock(&cs->mutex);
    set_put(&cs->live, name, data, len);
    set_put(&cs->durable, name, data, len);
    pthread_mutex_unlock(&cs->mutex);
    return 0;
}

size_t
crashsim_count(struct crashsim *cs, const char *needle)
{
    size_t n = 0;

    pthread_mutex_lock(&cs->mutex);
    for (size_t i = 0; i < cs->live.n; i++)
        if (strstr(cs->live.b[i].name, needle) != NULL)
            n++;
    pthread_mutex_unlock(&cs->mutex);
    return n;
}
