/*
 * select.c: the entries the operands of rm and get name (select.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pqvault/vault.h"
#include "util/error.h"
#include "vault/names.h"
#include "vault/select.h"

/* stored(st, norm): ${st} holds ${norm} or something below it. */
static int
stored(const struct state *st, const char *norm)
{
    size_t i = state_first_under(st, norm);

    return i < st->n && names_under(st->entries[i].name, norm);
}

int
select_op_init(struct select_op *op, const char *arg, int glob, const struct state *st)
{
    int rc;

    memset(op, 0, sizeof(*op));
    op->arg = arg;
    if ((op->norm = malloc(PQV_NAME_MAX + 1)) == NULL)
        return PQV_E_NOMEM;
    if (glob && pqv_match_is_glob(arg)) {
        /* A stored name with glob characters is that name. */
        if (st != NULL && pqv_name_normalize(arg, op->norm, PQV_NAME_MAX + 1) == 0 &&
            stored(st, op->norm))
            return 0;
        pqv_error_clear();
        free(op->norm);
        op->norm = NULL;
        if ((rc = pqv_match_new(&op->pattern, PQV_MATCH_ANCHORED)) != 0 ||
            (rc = pqv_match_add(op->pattern, arg)) != 0)
            return rc;
        return 0;
    }
    return pqv_name_normalize(arg, op->norm, PQV_NAME_MAX + 1);
}

void
select_op_free(struct select_op *op)
{
    if (op == NULL)
        return;
    free(op->norm);
    pqv_match_free(op->pattern);
    op->norm = NULL;
    op->pattern = NULL;
}

/* above_matches(m, name): the length of the shortest prefix of ${name}
 * that names a directory above it (a prefix ending before a '/') and that
 * ${m} matches; 0 if none. */
static size_t
above_matches(const pqv_match *m, const char *name)
{
    char prefix[PQV_NAME_MAX + 1];
    size_t len = strlen(name);

    if (len > PQV_NAME_MAX)
        return 0;
    memcpy(prefix, name, len + 1);
    for (size_t k = 0; k < len; k++)
        if (prefix[k] == '/') {
            int hit;
            prefix[k] = '\0';
            hit = pqv_match_test(m, prefix, 1);
            prefix[k] = '/';
            if (hit)
                return k;
        }
    return 0;
}

int
select_each(const struct state *st, const struct select_op *op,
    int (*fn)(void *ctx, size_t i, size_t root_len), void *ctx)
{
    int rc;

    if (op->norm != NULL) {
        size_t len = strlen(op->norm);
        for (size_t i = state_first_under(st, op->norm);
             i < st->n && names_under(st->entries[i].name, op->norm);
             i = state_next_under(st, op->norm, i))
            if ((rc = fn(ctx, i, len)) != 0)
                return rc;
        return 0;
    }
    for (size_t i = 0; i < st->n; i++) {
        const struct entry *e = &st->entries[i];
        size_t root = above_matches(op->pattern, e->name);
        if (root == 0 && pqv_match_test(op->pattern, e->name, e->kind == KIND_DIR))
            root = strlen(e->name);
        if (root > 0 && (rc = fn(ctx, i, root)) != 0)
            return rc;
    }
    return 0;
}

int
select_keep(const pqv_match *include, const pqv_match *exclude, const char *name, int is_dir)
{
    if (exclude != NULL &&
        (pqv_match_test(exclude, name, is_dir) || above_matches(exclude, name) > 0))
        return 0;
    return include == NULL || pqv_match_test(include, name, is_dir) ||
        above_matches(include, name) > 0;
}
