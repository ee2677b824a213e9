/*
 * rm.c: removing names.  Format 2: one segment of removed entries, the
 * commit point of the whole removal; the data stays in packs other names
 * may share, until gc.  Format 1 (not upgraded by rm, so that a damaged
 * record that stops an upgrade can be removed): each record's unlink is
 * its commit point, then its objects are deleted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/segment.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"
#include "vault/snapshots.h"

static int
rm_v1(pqv_vault *v, const char *norm, const struct pqv_rm_options *opt)
{
    struct names_walk w = { NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    char exact_name[STORAGE_NAME_MAX];
    uint8_t hash[NAME_HASH_BYTES];
    struct catalogue cat;
    struct record exact;
    uint64_t damaged = 0;
    int rc, have_exact, exact_damaged = 0, found = 0;

    memset(&cat, 0, sizeof(cat));
    if ((rc = names_hash(v, norm, hash)) != 0)
        return rc;
    record_storage_name(hash, exact_name);
    rc = record_read(v, norm, &exact);
    if (rc == PQV_E_INTEGRITY || rc == PQV_E_UNSUPPORTED) {
        /* Its record is damaged: it can still be removed (its objects,
         * which it no longer tells, become orphans for gc). */
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, norm,
            "its record is damaged (%s): removing it; gc removes its objects",
            pqv_error_last()->reason);
        if ((rc = v->storage->ops->del(v->storage, exact_name)) != 0)
            return rc;
        exact_damaged = 1;
        rc = PQV_E_NOTFOUND;
    }
    if (rc != 0 && rc != PQV_E_NOTFOUND)
        return rc;
    have_exact = rc == 0;
    if (have_exact && exact.entry.type == PQV_ENTRY_FILE) {
        /* A file: just this record. */
        cat.records = calloc(1, sizeof(*cat.records));
        cat.storage_names = calloc(1, STORAGE_NAME_MAX);
        if (cat.records == NULL || cat.storage_names == NULL) {
            record_clear(&exact);
            catalogue_free(&cat);
            return PQV_E_NOMEM;
        }
        memcpy(cat.storage_names[0], exact_name, STORAGE_NAME_MAX);
        cat.records[0] = exact;
        cat.n = 1;
    } else {
        if (have_exact)
            record_clear(&exact);
        /* A directory: the catalogue tells what lies below it.  A damaged
         * record cannot say where it belongs: reported, and left. */
        w.report = opt->report;
        w.report_ctx = opt->report_ctx;
        w.damaged = &damaged;
        if ((rc = catalogue_load(v, &cat, &w)) != 0)
            return rc;
        if (damaged > 0)
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, norm,
                "%llu damaged record%s could not be examined (if below %s, %s not removed)",
                (unsigned long long)damaged, damaged == 1 ? "" : "s", norm,
                damaged == 1 ? "it is" : "they are");
    }
    /* Commit point of each removal: the record's unlink. */
    for (size_t i = 0; i < cat.n; i++) {
        if (!names_under(cat.records[i].entry.name, norm))
            continue;
        if ((rc = v->storage->ops->del(v->storage, cat.storage_names[i])) != 0)
            goto out;
        found++;
    }
    if (found == 0 && !exact_damaged) {
        rc = error_set(PQV_E_NOTFOUND, NULL, "not found");
        goto out;
    }
    if ((rc = v->storage->ops->barrier(v->storage)) != 0)
        goto out;
    /* The records are gone for good; now their objects. */
    for (size_t i = 0; i < cat.n; i++) {
        struct record *r = &cat.records[i];
        if (!names_under(r->entry.name, norm))
            continue;
        for (uint32_t k = 0; k < r->entry.nobjects; k++) {
            char sname[STORAGE_NAME_MAX];
            object_storage_name(r->object_ids[k], sname);
            int d = v->storage->ops->del(v->storage, sname);
            if (d != 0 && d != PQV_E_NOTFOUND)
                vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, sname,
                    "could not delete (gc will remove it): %s", pqv_error_detail());
        }
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, r->entry.name, "removed");
    }
    rc = v->storage->ops->barrier(v->storage);
out:
    catalogue_free(&cat);
    return rc;
}

/* rm_v2(v, norm, opt): removed entries for ${norm} and every name below it,
 * as one epoch. */
static int
rm_v2(pqv_vault *v, const char *norm, const struct pqv_rm_options *opt)
{
    struct names_walk w;
    struct state st;
    struct txn t;
    struct snapshot snap;
    uint64_t damaged = 0;
    size_t found = 0;
    int rc;

    memset(&snap, 0, sizeof(snap));
    memset(&w, 0, sizeof(w));
    w.report = opt->report;
    w.report_ctx = opt->report_ctx;
    w.damaged = &damaged;
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    if ((rc = state_load_reporting(v, &st, &w)) != 0 || (rc = txn_begin(v, &st, &t)) != 0) {
        state_free(&st);
        return rc;
    }
    for (size_t i = state_first_under(&st, norm); i < st.n && rc == 0;
         i = state_next_under(&st, norm, i)) {
        if (!names_under(st.entries[i].name, norm))
            break;
        rc = txn_remove(&t, st.entries[i].name);
        found++;
    }
    if (rc == 0 && found == 0 && damaged > 0) {
        /* It may be in a block that failed to open: removing its name
         * costs nothing if it was not. */
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, norm,
            "not among the readable entries: removed in case it is in a damaged block");
        rc = txn_remove(&t, norm);
        found++;
    } else if (damaged > 0) {
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, norm,
            "%llu damaged block%s could not be examined (names below %s in %s are not removed)",
            (unsigned long long)damaged, damaged == 1 ? "" : "s", norm,
            damaged == 1 ? "it" : "them");
    }
    if (rc == 0 && found == 0)
        rc = error_set(PQV_E_NOTFOUND, NULL, "not found");
    if (rc == 0 && opt->dry_run) {
        for (size_t i = 0; i < t.n; i++)
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, t.entries[i]->name,
                "would be removed");
    } else if (rc == 0 && (rc = snapshots_info("rm", &norm, 1, &snap)) == 0) {
        t.snap = &snap;
        if ((rc = txn_finish(&t, 0, opt->report, opt->report_ctx)) == 0)
            for (size_t i = 0; i < t.n; i++)
                vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, t.entries[i]->name,
                    "removed");
    }
    if (rc == 0 && opt->removed != NULL)
        *opt->removed += t.n;
    snapshots_clear(&snap);
    txn_free(&t);
    state_free(&st);
    return rc;
}

int
pqv_vault_rm(pqv_vault *v, const char *name, const struct pqv_rm_options *opt)
{
    static const struct pqv_rm_options none;
    char norm[PQV_NAME_MAX + 1];
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (opt == NULL)
        opt = &none;
    if (name == NULL)
        return PQV_E_INVAL;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    /* A downgraded config is refused; a half-finished upgrade is finished
     * first (records removed beside its base would come back with it). */
    if ((rc = state_check_format(v)) != 0 ||
        (!opt->dry_run && (rc = upgrade_finish_interrupted(v, opt->report, opt->report_ctx)) != 0))
        return rc;
    /* Format 2 becomes 3 first, as with every writing command (its rm is
     * then a snapshot). */
    if (!opt->dry_run && v->config.version == 2 &&
        (rc = upgrade_if_needed(v, opt->report, opt->report_ctx)) != 0)
        return rc;
    if (v->config.version == 1 && opt->dry_run)
        return error_set(PQV_E_UNSUPPORTED, NULL, "a dry run needs format 2 (upgrade the vault "
            "first)");
    return v->config.version == 1 ? rm_v1(v, norm, opt) : rm_v2(v, norm, opt);
}
