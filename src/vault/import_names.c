/*
 * import_names.c: where an imported entry goes: the names the state and
 * the batch's earlier entries already hold, and the ancestors that are
 * files (an imported name below them is renamed with its ancestor).
 */
#include <stdio.h>
#include <string.h>

#include "util/util.h"
#include "vault/import_internal.h"

/* kind_is_dir(e) */
int
import_names_is_dir(const struct entry *e)
{
    return e != NULL && e->kind == KIND_DIR;
}

static int
compare_name_entry(const void *key, const void *elt)
{
    return strcmp(key, (*(struct entry *const *)elt)->name);
}

/* import_names_taken(st, news, n, name): a name among the new ones (sorted
 * by name: a binary search) or in the state. */
const struct entry *
import_names_taken(const struct state *st, struct entry **news, size_t n, const char *name)
{
    struct entry **hit = util_search(name, news, n, sizeof(*news), compare_name_entry);

    return hit != NULL ? *hit : state_find(st, name);
}

/* import_names_blocked(st, news, n, name, at): an ancestor of ${name} that is not a
 * directory; its length in *${at}. */
int
import_names_blocked(const struct state *st, struct entry **news, size_t n, const char *name, size_t *at)
{
    char buf[PQV_NAME_MAX + 1];

    snprintf(buf, sizeof(buf), "%s", name);
    for (char *s = strchr(buf, '/'); s != NULL; s = strchr(s + 1, '/')) {
        const struct entry *e;
        *s = '\0';
        e = import_names_taken(st, news, n, buf);
        *s = '/';
        if (e != NULL && !import_names_is_dir(e)) {
            *at = (size_t)(s - buf);
            return 1;
        }
    }
    return 0;
}
