/*
 * vault/import_internal.h: import of inbox batches, shared by import.c and
 * import_names.c.
 */
#ifndef PQV_VAULT_IMPORT_INTERNAL_H
#define PQV_VAULT_IMPORT_INTERNAL_H

#include <stddef.h>

#include "vault/entry.h"
#include "vault/state.h"

/* import_names_is_dir(e): ${e} is a directory. */
int import_names_is_dir(const struct entry *e);
/* import_names_taken(st, news, n, name): the entry of ${name} among the
 * ${n} new ones (sorted by name) or in the state, or NULL. */
const struct entry *import_names_taken(const struct state *st, struct entry **news, size_t n,
    const char *name);
/* import_names_blocked(st, news, n, name, at): an ancestor of ${name} that
 * is not a directory; its length in *${at}. */
int import_names_blocked(const struct state *st, struct entry **news, size_t n, const char *name,
    size_t *at);

#endif
