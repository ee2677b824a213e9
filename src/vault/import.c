/*
 * import.c: inbox batches folded into the vault (pqv_vault_import,
 * docs/DESIGN.md section 6).
 *
 * A writer's batch (version 2) is imported only if it authenticates as a
 * writer the chain registers, at its credential's generation, not revoked
 * (its MAC is checked before anything is decapsulated), and only if every
 * name in it lies under that writer's prefix: it then is the writer's
 * newer state of its own names, each root it lists replacing what the
 * vault holds below it (no copies, no renames), its metadata (owners,
 * set-id bits, attributes) kept.  A batch of the bare recipient (version
 * 1) can have been made by anyone: it is refused, or with quarantine
 * imported under quarantine/<first 16 hex of its id>/ with owners, set-id
 * and sticky bits and every attribute but user.* dropped.  An import never
 * changes a name outside the batch's prefix.
 *
 * Each batch is one epoch, which records the batch's id in the chain
 * (writers.c): a batch whose id is recorded is never imported again.  If
 * its files are still there, either an import crashed between its commit
 * and their deletion (the record is not yet confirmed: they are deleted),
 * or they were put back after the next import confirmed their deletion (a
 * replay: refused, exit 4).  Packs are copied into packs/; a pack already
 * there (an interrupted import) must have the same bytes and is not the
 * import's to delete if the commit fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "vault/batch.h"
#include "vault/format1.h"
#include "vault/import_internal.h"
#include "vault/snapshots.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"
#include "vault/writers.h"

#define QUARANTINE_DIR "quarantine"

/* One import run. */
struct import {
    pqv_vault *v;
    const struct pqv_import_options *opt;
    struct pqv_import_result res;
    int refused;                 /* batches refused (not authenticated, replayed) */
};

/* A batch being imported. */
struct importing {
    struct batch *b;
    const struct writer *w;      /* its writer, or NULL (quarantined) */
    char prefix[PQV_NAME_MAX + 1];   /* every name of it lies under this */
    struct entry **sorted;       /* its entries by name */
};

static int
compare_entry_ptrs(const void *a, const void *b)
{
    return strcmp((*(struct entry *const *)a)->name, (*(struct entry *const *)b)->name);
}

/* prepare(in, st): the batch's names checked (and quarantined): under its
 * prefix, each once, none below a file the vault holds outside the batch,
 * the prefix itself no file of the vault; sorted by name. */
static int
prepare(struct importing *in, const struct state *st)
{
    struct batch *b = in->b;
    const struct entry *at;
    int rc;

    for (size_t i = 0; i < b->n; i++) {
        if (in->w == NULL && (rc = batch_quarantine(in->prefix, &b->entries[i])) != 0)
            return rc;
        if (!names_under(b->entries[i].name, in->prefix))
            return error_set(PQV_E_INTEGRITY, b->entries[i].name, "outside writer %s's prefix "
                "%s: the batch is refused", b->writer, in->prefix);
    }
    for (size_t i = 0; i < b->nroots; i++)
        if (!names_under(b->roots[i], in->prefix))
            return error_set(PQV_E_INTEGRITY, b->roots[i], "outside writer %s's prefix %s: "
                "the batch is refused", b->writer, in->prefix);
    if ((at = state_find(st, in->prefix)) != NULL && at->kind != KIND_DIR)
        return error_set(PQV_E_EXISTS, in->prefix, "is a file in the vault: the batch of writer "
            "%s cannot go below it", b->writer);
    if (b->n > 0 && (in->sorted = malloc(b->n * sizeof(*in->sorted))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < b->n; i++)
        in->sorted[i] = &b->entries[i];
    util_sort(in->sorted, b->n, sizeof(*in->sorted), compare_entry_ptrs);
    for (size_t i = 1; i < b->n; i++)
        if (strcmp(in->sorted[i - 1]->name, in->sorted[i]->name) == 0)
            return error_set(PQV_E_INTEGRITY, in->sorted[i]->name, "named twice in the batch");
    for (size_t i = 0; i < b->n; i++) {
        size_t len;
        if (import_names_blocked(st, in->sorted, b->n, in->sorted[i]->name, &len))
            return error_set(PQV_E_EXISTS, in->sorted[i]->name, "lies below %.*s, a file in "
                "the vault: the batch is refused", (int)len, in->sorted[i]->name);
    }
    return 0;
}

/* gone(in, st, t): a writer's roots are its newer state: what the vault
 * holds below a root that the batch does not name is removed. */
static int
gone(struct importing *in, const struct state *st, struct txn *t, uint64_t *removed)
{
    int rc = 0;

    for (size_t r = 0; r < in->b->nroots && rc == 0; r++) {
        const char *root = in->b->roots[r];
        for (size_t i = state_first_under(st, root); i < st->n && rc == 0 &&
             names_under(st->entries[i].name, root); i = state_next_under(st, root, i)) {
            const char *name = st->entries[i].name;
            struct entry key, *kp = &key;
            key.name = (char *)name;
            if (util_search(&kp, in->sorted, in->b->n, sizeof(*in->sorted),
                    compare_entry_ptrs) != NULL)
                continue;
            if ((rc = txn_remove(t, name)) == 0)
                (*removed)++;
        }
    }
    return rc;
}

/* add_entries(imp, in, t): the batch's entries into the transaction, each
 * hard-link group under an id of this vault's making. */
static int
add_entries(struct import *imp, struct importing *in, const struct state *st, struct txn *t)
{
    uint64_t (*groups)[2] = NULL;
    size_t ngroups = 0;
    int rc = 0;

    if (in->b->n > 0 && (groups = calloc(in->b->n, sizeof(*groups))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < in->b->n && rc == 0; i++) {
        struct entry *e = &in->b->entries[i];
        const struct entry *old = state_find(st, e->name);
        if (e->hlgroup != 0) {
            size_t g;
            for (g = 0; g < ngroups && groups[g][0] != e->hlgroup; g++)
                ;
            if (g == ngroups) {
                groups[g][0] = e->hlgroup;
                if ((rc = util_random(&groups[g][1], sizeof(groups[g][1]))) != 0)
                    break;
                groups[g][1] |= 1;
                ngroups++;
            }
            e->hlgroup = groups[g][1];
        }
        if (old != NULL && old->kind != KIND_DIR)
            imp->res.replaced++;
        vault_report(imp->opt->report, imp->opt->report_ctx, PQV_REPORT_INFO, e->name,
            old != NULL && old->kind != KIND_DIR ? "replaced" : "imported");
        rc = txn_add(t, e);
    }
    free(groups);
    return rc;
}

/* commit(imp, in, st, reg): the batch as one epoch: packs copied, entries
 * in, what is gone out, its id recorded. */
static int
commit(struct import *imp, struct importing *in, struct state *st, struct registry *reg)
{
    struct seg_ext *ext = NULL;
    size_t next = 0;
    uint64_t removed = 0;
    struct snapshot snap;
    struct txn t;
    int rc;

    if ((rc = batch_packs(imp->v, in->b, 1)) != 0 || (rc = txn_begin(imp->v, st, &t)) != 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < in->b->npacks; i++)
        rc = txn_introduce(&t, &in->b->packs[i], 0);
    if (rc == 0 && in->w != NULL)
        rc = gone(in, st, &t, &removed);
    if (rc == 0)
        rc = add_entries(imp, in, st, &t);
    if (rc == 0 && (rc = writers_record(reg, in->b->id, st->epoch + 1)) == 0 &&
        (rc = writers_ext(reg, &ext, &next)) == 0) {
        const char *what[2] = { in->b->hex, in->w != NULL ? in->w->name : "quarantine" };
        txn_set_ext(&t, ext, next);
        /* Each imported batch is a snapshot of its writer's names. */
        if ((rc = snapshots_info("import", what, 2, &snap)) == 0) {
            t.snap = &snap;
            rc = txn_finish(&t, TXN_EVEN_EMPTY, imp->opt->report, imp->opt->report_ctx);
        }
        snapshots_clear(&snap);
    } else {
        txn_abort(&t);
    }
    if (rc == 0) {
        imp->res.batches++;
        imp->res.entries += in->b->n;
        imp->res.removed += removed;
        imp->res.quarantined += in->w == NULL ? 1 : 0;
    }
    txn_free(&t);
    return rc;
}

/* delete_batch(v, hex, b): its packs, then its commit point. */
static int
delete_batch(pqv_vault *v, const char *hex, const struct batch *b)
{
    char sname[STORAGE_NAME_MAX];
    int rc;

    for (size_t i = 0; b != NULL && i < b->npacks; i++) {
        batch_pack_name(hex, b->packs[i].id, sname);
        rc = v->storage->ops->del(v->storage, sname);
        if (rc != 0 && rc != PQV_E_NOTFOUND)
            return rc;
    }
    if (b != NULL && (rc = v->storage->ops->barrier(v->storage)) != 0)
        return rc;
    snprintf(sname, sizeof(sname), INBOX_DIR "/%s.batch", hex);
    rc = v->storage->ops->del(v->storage, sname);
    if (rc != 0 && rc != PQV_E_NOTFOUND)
        return rc;
    return v->storage->ops->barrier(v->storage);
}

/* refuse(imp, sname, why): a batch left in place, said; the call fails at
 * the end. */
static void
refuse(struct import *imp, const char *sname)
{
    imp->refused++;
    vault_report(imp->opt->report, imp->opt->report_ctx, PQV_REPORT_ERROR, sname,
        "not imported (left in place): %s", pqv_error_last()->reason);
    pqv_error_clear();
}

/* one_batch(imp, hex, sname): open, check and import batch ${hex}; 0 also
 * when it was refused (reported). */
static int
one_batch(struct import *imp, const char *hex, const char *sname)
{
    pqv_vault *v = imp->v;
    struct importing in;
    struct registry reg;
    struct state st;
    struct batch b;
    struct imported *rec;
    uint8_t *blob = NULL;
    size_t len;
    int rc;

    memset(&in, 0, sizeof(in));
    if ((rc = v->storage->ops->get(v->storage, sname, &blob, &len, MAX_BATCH_BYTES)) != 0)
        return rc == PQV_E_NOTFOUND ? 0 : rc == PQV_E_INTEGRITY ? (refuse(imp, sname), 0) : rc;
    if ((rc = state_current(v, &st, NULL)) != 0) {
        free(blob);
        return rc;
    }
    if ((rc = state_load(v, &st)) != 0 || (rc = writers_load(&st.segs[st.nsegs - 1], &reg)) != 0) {
        free(blob);
        state_free(&st);
        return rc;
    }
    rc = batch_open(v, hex, blob, len, &reg, &b);
    free(blob);
    if (rc == PQV_E_INTEGRITY || rc == PQV_E_AUTH) {
        refuse(imp, sname);
        rc = 0;
        goto out;
    }
    if (rc != 0)
        goto out;
    in.b = &b;
    if ((rec = writers_imported(&reg, b.id)) != NULL) {
        if (rec->confirmed) {
            rc = error_set(PQV_E_INTEGRITY, sname, "replayed: this batch was imported in epoch "
                "%llu and its files deleted since", (unsigned long long)rec->epoch);
            refuse(imp, sname);
            rc = 0;
            goto done;
        }
        /* Imported, its deletion interrupted: finished now. */
        imp->res.already++;
        vault_report(imp->opt->report, imp->opt->report_ctx, PQV_REPORT_INFO, hex,
            "imported already: its inbox files are removed");
        rc = delete_batch(v, hex, &b);
        goto done;
    }
    if (b.version == BATCH_VERSION_WRITER) {
        in.w = writers_find(&reg, b.writer);
        snprintf(in.prefix, sizeof(in.prefix), "%s", in.w->prefix);
    } else if (!imp->opt->quarantine) {
        error_set(PQV_E_INTEGRITY, sname, "made with the bare recipient, which anyone may hold: "
            "not authenticated (import --quarantine puts it under " QUARANTINE_DIR "/%.16s/, "
            "owners, set-id bits and system attributes dropped)", hex);
        refuse(imp, sname);
        goto done;
    } else {
        snprintf(in.prefix, sizeof(in.prefix), QUARANTINE_DIR "/%.16s", hex);
    }
    if ((rc = prepare(&in, &st)) == PQV_E_INTEGRITY || rc == PQV_E_EXISTS) {
        refuse(imp, sname);
        rc = 0;
        goto done;
    }
    if (rc == 0 && (rc = commit(imp, &in, &st, &reg)) == PQV_E_INTEGRITY) {
        refuse(imp, sname); /* (a pack missing, altered or swapped) */
        rc = 0;
    } else if (rc == 0) {
        rc = delete_batch(v, hex, &b); /* durable in the catalogue: the batch's files go */
    }
done:
    free(in.sorted);
    batch_free(&b);
out:
    writers_free(&reg);
    state_free(&st);
    return rc;
}

/* confirm(imp): the imported batches whose files are gone from the inbox
 * (deleted after their commit) are confirmed: from now on their files
 * coming back is a replay.  One epoch, only when something changes: at the
 * start of an import (what an interrupted one deleted) and at its end
 * (what it imported and deleted). */
static int
confirm(struct import *imp)
{
    struct names_list inbox;
    struct registry reg;
    struct state st;
    struct seg_ext *ext = NULL;
    size_t next = 0, changed = 0;
    struct txn t;
    int rc;

    if ((rc = names_list(imp->v->storage, INBOX_DIR, &inbox)) != 0)
        return rc;
    if ((rc = state_current(imp->v, &st, NULL)) != 0) {
        names_list_free(&inbox);
        return rc;
    }
    if ((rc = writers_load(&st.segs[st.nsegs - 1], &reg)) != 0) {
        names_list_free(&inbox);
        state_free(&st);
        return rc;
    }
    for (size_t i = 0; i < reg.nimp; i++) {
        char hex[2 * BATCH_ID_BYTES + 1], sname[STORAGE_NAME_MAX];
        int present = 0;
        if (reg.imp[i].confirmed)
            continue;
        util_hex_encode(hex, reg.imp[i].id, BATCH_ID_BYTES);
        snprintf(sname, sizeof(sname), INBOX_DIR "/%s.batch", hex);
        for (size_t k = 0; k < inbox.n && !present; k++)
            present = strcmp(inbox.names[k], sname) == 0;
        if (!present) {
            reg.imp[i].confirmed = 1;
            changed++;
        }
    }
    if (changed > 0 && (rc = writers_ext(&reg, &ext, &next)) == 0 &&
        (rc = txn_begin(imp->v, &st, &t)) == 0) {
        txn_set_ext(&t, ext, next);
        ext = NULL;
        rc = txn_finish(&t, TXN_EVEN_EMPTY, imp->opt->report, imp->opt->report_ctx);
        txn_free(&t);
    }
    segment_ext_free(ext, next);
    writers_free(&reg);
    state_free(&st);
    names_list_free(&inbox);
    return rc;
}

static int
compare_written(const void *a, const void *b)
{
    const struct pqv_inbox_batch *x = a, *y = b;

    /* Unknown times (a batch that does not open) last: it is refused. */
    if ((x->time < 0) != (y->time < 0))
        return x->time < 0 ? 1 : -1;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->time_nsec != y->time_nsec)
        return x->time_nsec < y->time_nsec ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* in_order(v, out, n): the batches waiting, oldest first by the time each
 * says it was written (authenticated: read once it opens), so that a
 * writer's newer state is imported after its older one whatever order
 * the storage lists them in. */
static int
in_order(pqv_vault *v, struct pqv_inbox_batch **out, size_t *n)
{
    struct pqv_inbox_batch *list;
    size_t k = 0, m;
    int rc;

    *out = NULL;
    *n = 0;
    if ((rc = pqv_vault_inbox_list(v, &list, &m)) != 0)
        return rc;
    for (size_t i = 0; i < m; i++)
        if (list[i].state != PQV_INBOX_INCOMPLETE)
            list[k++] = list[i];
    util_sort(list, k, sizeof(*list), compare_written);
    *out = list;
    *n = k;
    return 0;
}

int
pqv_vault_import(pqv_vault *v, const struct pqv_import_options *opt)
{
    static const struct pqv_import_options none;
    struct import imp;
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    memset(&imp, 0, sizeof(imp));
    imp.v = v;
    imp.opt = opt != NULL ? opt : &none;
    if ((rc = upgrade_if_needed(v, imp.opt->report, imp.opt->report_ctx)) != 0)
        return rc;
    /* What earlier imports deleted is confirmed first (before this run's
     * batches, which are not deleted yet, are recorded). */
    rc = confirm(&imp);
    struct pqv_inbox_batch *order = NULL;
    size_t norder = 0;
    if (rc == 0)
        rc = in_order(v, &order, &norder);
    for (size_t i = 0; i < norder && rc == 0; i++) {
        char sname[STORAGE_NAME_MAX];
        snprintf(sname, sizeof(sname), INBOX_DIR "/%s.batch", order[i].id);
        rc = one_batch(&imp, order[i].id, sname);
    }
    free(order);
    if (rc == 0 && (imp.res.batches > 0 || imp.res.already > 0))
        rc = confirm(&imp);
    if (imp.opt->result != NULL) {
        struct pqv_import_result *r = imp.opt->result;
        r->batches += imp.res.batches;
        r->entries += imp.res.entries;
        r->replaced += imp.res.replaced;
        r->removed += imp.res.removed;
        r->already += imp.res.already;
        r->damaged += imp.refused;
        r->quarantined += imp.res.quarantined;
    }
    if (rc == 0 && imp.refused > 0)
        rc = error_set(PQV_E_INTEGRITY, NULL, "%llu inbox batch%s refused (reported above, left "
            "in place)", (unsigned long long)imp.refused, imp.refused == 1 ? "" : "es");
    return rc;
}
