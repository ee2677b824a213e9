/*
 * list.c: listing the catalogue and looking up one name (no KEM
 * operation: records are sealed with seed-derived symmetric keys).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/vault_internal.h"

void
pqv_entry_clear(struct pqv_entry *e)
{
    if (e == NULL)
        return;
    free(e->name);
    memset(e, 0, sizeof(*e));
}

void
pqv_entries_free(struct pqv_entry *entries, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(entries[i].name);
    free(entries);
}

static int
compare_entries(const void *a, const void *b)
{
    return strcmp(((const struct pqv_entry *)a)->name, ((const struct pqv_entry *)b)->name);
}

int
pqv_vault_list(pqv_vault *v, const char *prefix, const struct pqv_list_options *opt,
    struct pqv_entry **entries, size_t *n)
{
    struct names_walk w = { NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    struct catalogue cat;
    char norm[PQV_NAME_MAX + 1] = "";
    struct pqv_entry *out;
    uint64_t damaged = 0;
    size_t k = 0;
    int rc;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (entries == NULL || n == NULL)
        return PQV_E_INVAL;
    if (prefix != NULL && prefix[0] != '\0' &&
        (rc = pqv_name_normalize(prefix, norm, sizeof(norm))) != 0)
        return rc;
    /* A damaged record is reported and the others listed. */
    if (opt != NULL) {
        w.report = opt->report;
        w.report_ctx = opt->report_ctx;
    }
    w.damaged = &damaged;
    if ((rc = catalogue_load(v, &cat, &w)) != 0)
        return rc;
    if ((out = calloc(cat.n + 1, sizeof(*out))) == NULL) {
        catalogue_free(&cat);
        return PQV_E_NOMEM;
    }
    for (size_t i = 0; i < cat.n; i++) {
        if (!names_under(cat.records[i].entry.name, norm))
            continue;
        out[k] = cat.records[i].entry;
        cat.records[i].entry.name = NULL; /* moved */
        k++;
    }
    catalogue_free(&cat);
    qsort(out, k, sizeof(*out), compare_entries);
    *entries = out;
    *n = k;
    if (damaged > 0)
        return error_set(PQV_E_INTEGRITY, NULL, "%llu damaged record%s (reported above)",
            (unsigned long long)damaged, damaged == 1 ? "" : "s");
    return 0;
}

int
pqv_vault_lookup(pqv_vault *v, const char *name, struct pqv_entry *entry)
{
    char norm[PQV_NAME_MAX + 1];
    struct record r;
    int rc;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (name == NULL || entry == NULL)
        return PQV_E_INVAL;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    if ((rc = record_read(v, norm, &r)) != 0)
        return rc;
    *entry = r.entry;
    r.entry.name = NULL;
    record_clear(&r);
    return 0;
}
