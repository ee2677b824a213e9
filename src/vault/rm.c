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
#include "vault/select.h"
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

/* refuse(op, rc): ${op} is left out: its failure (the current one). */
static void
refuse(struct pqv_name_operand *op, int rc)
{
    op->rc = rc;
    op->error = *pqv_error_last();
    if (op->error.code == 0)
        op->error.code = rc;
}

/* What an operand's walk over the state does. */
struct rm_walk {
    struct txn *t;
    const struct state *st;
    unsigned char *gone;         /* gone[i]: entry i removed by an earlier operand */
    uint64_t count;
};

static int
rm_entry(void *ctx, size_t i, size_t root_len)
{
    struct rm_walk *w = ctx;

    (void)root_len;
    w->count++;
    if (w->gone[i])
        return 0;
    w->gone[i] = 1;
    return txn_remove(w->t, w->st->entries[i].name);
}

/* removed_already(t, name): ${name} has a removed entry in ${t}. */
static int
removed_already(const struct txn *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->entries[i]->name, name) == 0)
            return 1;
    return 0;
}

/* rm_v2(v, ops, n, opt): removed entries for what every operand that
 * stands names, as one epoch and one snapshot. */
static int
rm_v2(pqv_vault *v, struct pqv_name_operand *ops, size_t n, const struct pqv_rm_options *opt)
{
    struct names_walk w;
    struct state st;
    struct txn t;
    struct snapshot snap;
    struct select_op *sel = NULL;
    struct rm_walk walk;
    unsigned char *gone = NULL;
    const char **what = NULL;
    uint64_t damaged = 0;
    size_t found = 0, k = 0;
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
    if ((sel = calloc(n + 1, sizeof(*sel))) == NULL || (gone = calloc(st.n + 1, 1)) == NULL ||
        (what = calloc(n + 1, sizeof(*what))) == NULL) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    walk.t = &t;
    walk.st = &st;
    walk.gone = gone;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct pqv_name_operand *op = &ops[i];
        if (op->rc != 0)
            continue;
        pqv_error_clear();
        if ((rc = select_op_init(&sel[i], op->name, (op->flags & PQV_OPERAND_GLOB) != 0,
                 &st)) != 0) {
            if (rc == PQV_E_NOMEM)
                break;
            refuse(op, rc);
            rc = 0;
            continue;
        }
        walk.count = 0;
        if ((rc = select_each(&st, &sel[i], rm_entry, &walk)) != 0)
            break;
        op->selected = walk.count;
        if (walk.count == 0 && damaged > 0 && sel[i].norm != NULL) {
            /* It may be in a block that failed to open: removing its name
             * costs nothing if it was not. */
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, sel[i].norm,
                "not among the readable entries: removed in case it is in a damaged block");
            if (!removed_already(&t, sel[i].norm))
                rc = txn_remove(&t, sel[i].norm);
            op->selected = 1;
        } else if (walk.count == 0 && damaged > 0) {
            refuse(op, error_set(PQV_E_INTEGRITY, NULL, "matches none of the readable "
                "entries (%llu damaged catalogue block%s could not be examined)",
                (unsigned long long)damaged, damaged == 1 ? "" : "s"));
        } else if (walk.count == 0) {
            refuse(op, error_set(PQV_E_NOTFOUND, NULL, "not found"));
        } else {
            found++;
        }
        if (op->rc == 0)
            what[k++] = sel[i].norm != NULL ? sel[i].norm : op->name;
    }
    if (rc == 0 && found > 0 && damaged > 0) {
        const char *one = n == 1 ? sel[0].norm : NULL;
        if (one != NULL)
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, one,
                "%llu damaged block%s could not be examined (names below %s in %s are not "
                "removed)", (unsigned long long)damaged, damaged == 1 ? "" : "s", one,
                damaged == 1 ? "it" : "them");
        else
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, NULL,
                "%llu damaged block%s could not be examined (names in %s are not removed)",
                (unsigned long long)damaged, damaged == 1 ? "" : "s",
                damaged == 1 ? "it" : "them");
    }
    if (rc != 0 || k == 0) {
        /* Nothing to commit: every operand refused (or a failure). */
        txn_abort(&t);
    } else if (opt->dry_run) {
        for (size_t i = 0; i < t.n; i++)
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, t.entries[i]->name,
                "would be removed");
        txn_abort(&t);
    } else if ((rc = snapshots_info("rm", what, k, &snap)) == 0) {
        t.snap = &snap;
        if ((rc = txn_finish(&t, 0, opt->report, opt->report_ctx)) == 0)
            for (size_t i = 0; i < t.n; i++)
                vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, t.entries[i]->name,
                    "removed");
    } else {
        txn_abort(&t);
    }
    if (rc == 0 && opt->removed != NULL)
        *opt->removed += t.n;
out:
    for (size_t i = 0; sel != NULL && i < n; i++)
        select_op_free(&sel[i]);
    free(sel);
    free(gone);
    free(what);
    snapshots_clear(&snap);
    txn_free(&t);
    state_free(&st);
    return rc;
}

/* rm_v1_operand(v, op, opt): format 1: one name removed on its own. */
static int
rm_v1_operand(pqv_vault *v, struct pqv_name_operand *op, const struct pqv_rm_options *opt)
{
    char norm[PQV_NAME_MAX + 1];
    uint64_t before = opt->removed != NULL ? *opt->removed : 0;
    int rc;

    pqv_error_clear();
    if ((rc = pqv_name_normalize(op->name, norm, sizeof(norm))) == 0)
        rc = rm_v1(v, norm, opt);
    if (rc == PQV_E_NOTFOUND && (op->flags & PQV_OPERAND_GLOB) && pqv_match_is_glob(op->name))
        rc = error_set(PQV_E_UNSUPPORTED, NULL, "a pattern needs format 2 (upgrade the vault "
            "first)");
    if (rc == PQV_E_NOMEM)
        return rc;
    if (rc != 0)
        refuse(op, rc);
    else
        op->selected = opt->removed != NULL ? *opt->removed - before : 1;
    return 0;
}

static int
rm_many(pqv_vault *v, struct pqv_name_operand *ops, size_t n,
    const struct pqv_rm_options *opt)
{
    static const struct pqv_rm_options none;
    char norm[PQV_NAME_MAX + 1];
    size_t standing = 0;
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (opt == NULL)
        opt = &none;
    if (ops == NULL && n > 0)
        return PQV_E_INVAL;
    for (size_t i = 0; i < n; i++) {
        ops[i].rc = 0;
        ops[i].selected = 0;
        memset(&ops[i].error, 0, sizeof(ops[i].error));
        pqv_error_clear();
        /* A malformed name is refused before the vault is touched. */
        if (ops[i].name == NULL)
            refuse(&ops[i], error_set(PQV_E_INVAL, NULL, "no name"));
        else if (!((ops[i].flags & PQV_OPERAND_GLOB) && pqv_match_is_glob(ops[i].name)) &&
                 (rc = pqv_name_normalize(ops[i].name, norm, sizeof(norm))) != 0)
            refuse(&ops[i], rc);
        else
            standing++;
    }
    if (standing == 0)
        return 0;
    /* A downgraded config is refused; a half-finished upgrade is finished
     * first (records removed beside its base would come back with it). */
    if ((rc = state_v1_check(v)) != 0 ||
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
    if (v->config.version != 1)
        return rm_v2(v, ops, n, opt);
    /* Format 1 (not upgraded by rm, so that a damaged record that stops an
     * upgrade can be removed): one name at a time. */
    for (size_t i = 0; i < n && rc == 0; i++)
        if (ops[i].rc == 0)
            rc = rm_v1_operand(v, &ops[i], opt);
    return rc;
}

int
pqv_vault_rm(pqv_vault *v, const char *name, const struct pqv_rm_options *opt)
{
    struct pqv_name_operand op;
    struct error_saved s;
    int rc;

    if (name == NULL)
        return PQV_E_INVAL;
    memset(&op, 0, sizeof(op));
    op.name = name;
    if ((rc = pqv_vault_rm_many(v, &op, 1, opt)) == 0 && op.rc != 0) {
        s.e = op.error;
        error_restore(&s);
        rc = op.rc;
    }
    return rc;
}

/* (A command that frees space: its commit may use the reserve.) */
int
pqv_vault_rm_many(pqv_vault *v, struct pqv_name_operand *ops, size_t n,
    const struct pqv_rm_options *opt)
{
    int rc, saved = v != NULL ? v->reserve_use : 0;

    if (v == NULL)
        return PQV_E_INVAL;
    v->reserve_use = 1;
    rc = rm_many(v, ops, n, opt);
    v->reserve_use = saved;
    return rc;
}
