/*
 * list.c: listing the catalogue and looking up one name (no KEM
 * operation: records are sealed with seed-derived symmetric keys).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/entry.h"
#include "vault/kinds.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

void
pqv_entry_clear(struct pqv_entry *e)
{
    if (e == NULL)
        return;
    free(e->name);
    free(e->target);
    free(e->user);
    free(e->group);
    memset(e, 0, sizeof(*e));
}

void
pqv_entries_free(struct pqv_entry *entries, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pqv_entry_clear(&entries[i]);
    free(entries);
}

int
list_public_entry(const struct entry *e, struct pqv_entry *out)
{
    uint64_t stored = 0;

    memset(out, 0, sizeof(*out));
    out->type = e->kind; /* the public types are the kinds' codes */
    out->size = e->kind == KIND_FILE ? e->size : e->kind == KIND_SYMLINK ? strlen(e->target) : 0;
    out->mode = e->perm;
    out->mtime_sec = e->mtime_sec;
    out->mtime_nsec = e->mtime_nsec;
    out->aead = e->kind == KIND_FILE ? e->suite : 0;
    out->nobjects = e->nextents;
    out->uid = e->uid;
    out->gid = e->gid;
    out->link_group = e->hlgroup;
    out->rdev_major = e->rdev_major;
    out->rdev_minor = e->rdev_minor;
    for (uint32_t i = 0; i < e->nextents; i++)
        stored += e->extents[i].plain_len;
    out->holes = e->kind == KIND_FILE ? e->size - stored : 0;
    if ((out->name = strdup(e->name)) == NULL ||
        (e->target != NULL && (out->target = strdup(e->target)) == NULL) ||
        (e->user != NULL && (out->user = strdup(e->user)) == NULL) ||
        (e->group != NULL && (out->group = strdup(e->group)) == NULL)) {
        pqv_entry_clear(out);
        return PQV_E_NOMEM;
    }
    return 0;
}

int
pqv_vault_list(pqv_vault *v, const char *prefix, const struct pqv_list_options *opt,
    struct pqv_entry **entries, size_t *n)
{
    struct names_walk w = { NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    char norm[PQV_NAME_MAX + 1] = "";
    struct pqv_entry *out = NULL;
    struct state st;
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
    /* A damaged record (or block) is reported and the others listed. */
    if (opt != NULL) {
        w.report = opt->report;
        w.report_ctx = opt->report_ctx;
    }
    w.damaged = &damaged;
    if ((rc = state_current(v, &st, &w)) != 0)
        return rc;
    if ((rc = state_load_reporting(v, &st, &w)) != 0)
        goto done;
    if ((out = calloc(st.n + 1, sizeof(*out))) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    for (size_t i = state_first_under(&st, norm); i < st.n && names_under(st.entries[i].name, norm);
         i = state_next_under(&st, norm, i)) {
        if ((rc = list_public_entry(&st.entries[i], &out[k])) != 0)
            goto done;
        k++;
    }
    rc = 0;
done:
    state_free(&st);
    if (rc != 0) {
        pqv_entries_free(out, k);
        return rc;
    }
    *entries = out;
    *n = k;
    if (damaged > 0)
        return error_set(PQV_E_INTEGRITY, NULL, "%llu damaged %s%s (reported above)",
            (unsigned long long)damaged, v->config.version == 1 ? "record" : "catalogue block",
            damaged == 1 ? "" : "s");
    return 0;
}

int
pqv_vault_lookup(pqv_vault *v, const char *name, struct pqv_entry *entry)
{
    char norm[PQV_NAME_MAX + 1];
    struct state st;
    struct entry e;
    int rc;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (name == NULL || entry == NULL)
        return PQV_E_INVAL;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    if ((rc = state_lookup(v, &st, norm, &e)) == 0) {
        rc = list_public_entry(&e, entry);
        entry_clear(&e);
    }
    state_free(&st);
    return rc;
}

const char *
pqv_entry_type_name(int type)
{
    const struct entry_kind *k = type != KIND_REMOVED ? kinds_find(type) : NULL;

    return k != NULL ? k->json : "unknown";
}

char
pqv_entry_type_letter(int type)
{
    const struct entry_kind *k = type != KIND_REMOVED ? kinds_find(type) : NULL;

    return k != NULL ? k->letter : '?';
}
