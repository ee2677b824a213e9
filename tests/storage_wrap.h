/*
 * storage_wrap.h: a storage for tests that forwards every operation to
 * another one (the local backend, usually) and lets the test watch its
 * reads: before(w, name) ahead of each get and get_range, after(w, name,
 * bytes) once one succeeded.  With ${remote} it says it is a remote
 * storage (PQV_STORAGE_REMOTE), so that the vault reads it as it reads
 * S3.  Use: sw_init(&w, inner, remote), set the callbacks, hand &w.base to
 * pqv_vault_open_storage (vault_fixture.h's vf_open_vault).
 */
#ifndef PQV_TEST_STORAGE_WRAP_H
#define PQV_TEST_STORAGE_WRAP_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/storage.h"

struct sw_storage {
    pqv_storage base;            /* first: what the vault is handed */
    pqv_storage *inner;
    void (*before)(struct sw_storage *w, const char *name);
    void (*after)(struct sw_storage *w, const char *name, size_t bytes);
};

#define SW_INNER(s) (((struct sw_storage *)(s))->inner)

static inline int
sw_put(pqv_storage *s, const char *n, const uint8_t *d, size_t l)
{
    return SW_INNER(s)->ops->put(SW_INNER(s), n, d, l);
}

static inline int
sw_put_new(pqv_storage *s, const char *n, const uint8_t *d, size_t l)
{
    return SW_INNER(s)->ops->put_new(SW_INNER(s), n, d, l);
}

static inline int
sw_get(pqv_storage *s, const char *n, uint8_t **d, size_t *l, size_t m)
{
    struct sw_storage *w = (struct sw_storage *)s;
    int rc;

    if (w->before != NULL)
        w->before(w, n);
    rc = w->inner->ops->get(w->inner, n, d, l, m);
    if (rc == 0 && w->after != NULL)
        w->after(w, n, *l);
    return rc;
}

static inline int
sw_get_range(pqv_storage *s, const char *n, uint64_t o, uint8_t *b, size_t l)
{
    struct sw_storage *w = (struct sw_storage *)s;
    int rc;

    if (w->before != NULL)
        w->before(w, n);
    rc = w->inner->ops->get_range(w->inner, n, o, b, l);
    if (rc == 0 && w->after != NULL)
        w->after(w, n, l);
    return rc;
}

static inline int
sw_stat(pqv_storage *s, const char *n, uint64_t *z)
{
    return SW_INNER(s)->ops->stat(SW_INNER(s), n, z);
}

static inline int
sw_list(pqv_storage *s, const char *p, pqv_storage_list_fn f, void *c)
{
    return SW_INNER(s)->ops->list(SW_INNER(s), p, f, c);
}

static inline int
sw_del(pqv_storage *s, const char *n)
{
    return SW_INNER(s)->ops->del(SW_INNER(s), n);
}

static inline int
sw_barrier(pqv_storage *s)
{
    return SW_INNER(s)->ops->barrier(SW_INNER(s));
}

static inline int
sw_lock(pqv_storage *s, int wait, char *h, size_t hl)
{
    return SW_INNER(s)->ops->lock(SW_INNER(s), wait, h, hl);
}

static inline void
sw_unlock(pqv_storage *s)
{
    SW_INNER(s)->ops->unlock(SW_INNER(s));
}

static inline void
sw_close(pqv_storage *s)
{
    (void)s; /* the inner storage is the test's to close */
}

/* sw_init(w, inner, remote): ${w} forwarding to ${inner}, no callbacks. */
static inline void
sw_init(struct sw_storage *w, pqv_storage *inner, int remote)
{
#define SW_OPS                                                                 \
    .version = PQV_STORAGE_OPS_VERSION, .put = sw_put, .put_new = sw_put_new,  \
    .get = sw_get, .get_range = sw_get_range, .stat = sw_stat, .list = sw_list, \
    .del = sw_del, .barrier = sw_barrier, .lock = sw_lock, .unlock = sw_unlock, \
    .close = sw_close
    static const struct pqv_storage_ops local = { SW_OPS };
    static const struct pqv_storage_ops far = { SW_OPS, .flags = PQV_STORAGE_REMOTE };
#undef SW_OPS

    w->base.ops = remote ? &far : &local;
    w->inner = inner;
    w->before = NULL;
    w->after = NULL;
}

#endif
