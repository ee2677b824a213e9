/*
 * upgrade.c: format 1 to format 2 (docs/FORMAT.md section 17), in three
 * steps, each durable before the next:
 *   1. a base segment of epoch 1 holding every record as an entry: file
 *      keys unwrapped from the records (one decapsulation each, on the
 *      worker pool) and stored under the segment's command key; extents
 *      that name the format-1 objects where they lie (nothing is copied);
 *   2. the config rewritten with "pqvault-config 2": from here the vault
 *      is format 2;
 *   3. the records deleted.
 * A crash after step 1 leaves config 1 beside a verifying segment 1: the
 * next writer finishes from step 2 (the records have not changed: every
 * writer of format 1 upgrades first).  A crash or failure in step 3
 * leaves records a format-2 vault ignores; check reports them and gc
 * removes them (the failure is returned: the vault is upgraded, but the
 * command did not do all it set out to).
 *
 * A damaged record cannot be carried over (its key and objects are
 * unknown): the upgrade is refused until it is removed (rm works on format
 * 1) or repaired from a copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pool.h"
#include "util/util.h"
#include "vault/config.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/segment.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

/* Unwrapping keys on the pool, a window at a time. */
#define UNWRAP_WINDOW 64

struct unwrap_job {
    struct pool_job job;
    pqv_vault *v;
    const struct record *r;
    struct entry *e;
    struct error_saved error;
};

static void
unwrap_run(struct pool_job *pj)
{
    struct unwrap_job *j = (struct unwrap_job *)pj;
    int rc = record_unwrap_file_key(j->v, j->r, j->e->key);

    if (rc == 0)
        j->e->key_state = KEY_CLEAR;
    else
        error_save(&j->error);
    j->job.rc = rc;
}

/* entries_of_records(v, cat, out): every record as an entry with its clear
 * file key. */
static int
entries_of_records(pqv_vault *v, const struct catalogue *cat, struct entry **out)
{
    struct pool *pool = vault_pool(v);
    struct unwrap_job jobs[UNWRAP_WINDOW];
    struct entry *entries;
    int rc = 0;

    *out = NULL;
    if (pool == NULL || (entries = calloc(cat->n + 1, sizeof(*entries))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < cat->n && rc == 0; i++)
        rc = state_v1_entry_of_record(&cat->records[i], &entries[i]);
    for (size_t first = 0; first < cat->n && rc == 0; first += UNWRAP_WINDOW) {
        size_t count = cat->n - first < UNWRAP_WINDOW ? cat->n - first : UNWRAP_WINDOW, k;
        for (k = 0; k < count; k++) {
            struct unwrap_job *j = &jobs[k];
            memset(j, 0, sizeof(*j));
            j->v = v;
            j->r = &cat->records[first + k];
            j->e = &entries[first + k];
            if (j->e->kind != KIND_FILE) {
                j->job.rc = 0;
                continue;
            }
            j->job.run = unwrap_run;
            pool_submit(pool, &j->job);
        }
        for (k = 0; k < count; k++) {
            int jrc = jobs[k].job.run != NULL ? pool_wait(pool, &jobs[k].job) : 0;
            if (jrc != 0 && rc == 0) {
                error_restore(&jobs[k].error);
                rc = error_subject(jrc, jobs[k].e->name);
            }
        }
    }
    if (rc != 0) {
        for (size_t i = 0; i < cat->n; i++)
            entry_clear(&entries[i]);
        free(entries);
        return rc;
    }
    *out = entries;
    return 0;
}

/* write_base(v, report, ctx): step 1. */
static int
write_base(pqv_vault *v, pqv_report_fn report, void *report_ctx)
{
    struct names_walk w;
    struct catalogue cat;
    struct entry *entries = NULL, **all = NULL;
    struct state st;
    struct txn t;
    uint64_t damaged = 0;
    int rc;

    memset(&w, 0, sizeof(w));
    w.report = report;
    w.report_ctx = report_ctx;
    w.damaged = &damaged;
    if ((rc = catalogue_load(v, &cat, &w)) != 0)
        return rc;
    if (damaged > 0) {
        catalogue_free(&cat);
        return error_set(PQV_E_INTEGRITY, NULL, "cannot upgrade to format 2: %llu damaged "
            "record%s (reported above): remove %s with rm, or restore the vault from a copy",
            (unsigned long long)damaged, damaged == 1 ? "" : "s", damaged == 1 ? "it" : "them");
    }
    vault_report(report, report_ctx, PQV_REPORT_INFO, NULL,
        "upgrading to format 2 (%zu record%s)", cat.n, cat.n == 1 ? "" : "s");
    if ((rc = entries_of_records(v, &cat, &entries)) != 0)
        goto done;
    if ((all = calloc(cat.n + 1, sizeof(*all))) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < cat.n; i++)
        all[i] = &entries[i];
    memset(&st, 0, sizeof(st));
    st.format = 2;
    if ((rc = txn_begin(v, &st, &t)) != 0)
        goto done;
    rc = txn_commit(&t, SEGMENT_BASE, all, cat.n, NULL, 0);
    txn_free(&t);
done:
    for (size_t i = 0; entries != NULL && i < cat.n; i++)
        entry_clear(&entries[i]);
    free(entries);
    free(all);
    catalogue_free(&cat);
    return rc;
}

/* rewrite_config(v, version): step 2 (and format 3's only step). */
static int
rewrite_config(pqv_vault *v, int version)
{
    uint8_t config_key[32], *text = NULL;
    size_t len;
    int rc, old = v->config.version;

    v->config.version = version;
    if ((rc = pqv_identity_derive_key(v->identity, "config", config_key)) == 0 &&
        (rc = config_build(&v->config, config_key, &text, &len)) == 0 &&
        (rc = v->storage->ops->put(v->storage, CONFIG_NAME, text, len)) == 0)
        rc = v->storage->ops->barrier(v->storage);
    util_wipe(config_key, sizeof(config_key));
    free(text);
    if (rc != 0)
        v->config.version = old; /* the put may have landed: the next writer sees */
    return rc;
}

static int
collect(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    (void)id;
    (void)size;
    return names_list_add(ctx, name);
}

/* delete_records(v): step 3. */
static int
delete_records(pqv_vault *v, pqv_report_fn report, void *report_ctx)
{
    struct names_list records;
    int rc;

    memset(&records, 0, sizeof(records));
    if ((rc = names_walk(v->storage, "records", NAME_HASH_BYTES, NULL, collect, &records)) != 0) {
        names_list_free(&records);
        return rc == PQV_E_NOTFOUND ? 0 : rc;
    }
    for (size_t i = 0; i < records.n && rc == 0; i++) {
        rc = v->storage->ops->del(v->storage, records.names[i]);
        if (rc == PQV_E_NOTFOUND)
            rc = 0;
    }
    if (rc == 0)
        rc = v->storage->ops->barrier(v->storage);
    names_list_free(&records);
    if (rc != 0) {
        /* The vault is format 2 already; what is left is garbage.  Said
         * all the same: the command did not do all it set out to. */
        char why[PQV_ERROR_REASON_MAX];
        snprintf(why, sizeof(why), "%s", pqv_error_detail());
        (void)report;
        (void)report_ctx;
        return error_set(rc, "records", "upgraded to format 2, but the format-1 records were "
            "not all deleted (gc removes them): %s", why);
    }
    return 0;
}

/* upgrade_to_3(v, report, ctx): a vault of format 2 becomes one of
 * format 3 by its config alone (docs/FORMAT.md section 24): a reader of
 * format 3 reads format 2's segments and packs as they are, and writes
 * format 3's from then on; the files stored before keep their extents
 * until they change.  Atomic (the config is replaced whole); the local
 * state records the new format at the next commit, and a config of
 * format 2 put back after that is a downgrade. */
static int
upgrade_to_3(pqv_vault *v, pqv_report_fn report, void *report_ctx)
{
    int rc;

    if (v->config.version != 2)
        return 0;
    if ((rc = rewrite_config(v, 3)) != 0)
        return rc;
    vault_report(report, report_ctx, PQV_REPORT_INFO, NULL, "upgraded the vault to format 3 "
        "(content-defined deduplication; pqvault before 0.4 cannot read it)");
    return 0;
}

int
upgrade_if_needed(pqv_vault *v, pqv_report_fn report, void *report_ctx)
{
    struct segment s;
    char sname[STORAGE_NAME_MAX];
    int rc;

    if (v->config.version == 2) {
        /* A config of format 2 is believed only for a vault that holds no
         * segment of version 3 and was not seen here as format 3 (and is
         * no older copy): checked before the config is rewritten, so that
         * a downgrade is refused, not taken for a vault to upgrade.  (The
         * config was read again when the lock was taken: another writer
         * may have upgraded the vault meanwhile.) */
        struct state st;
        if ((rc = state_current(v, &st, NULL)) != 0)
            return rc;
        state_free(&st);
        return upgrade_to_3(v, report, report_ctx);
    }
    if (v->config.version != 1)
        return 0;
    /* A config put back from before an upgrade is not one to finish. */
    if ((rc = state_v1_check(v)) != 0 || v->config.version != 1)
        return rc;
    segment_name(1, sname);
    rc = v->storage->ops->stat(v->storage, sname, NULL);
    if (rc == 0) {
        /* Interrupted after step 1: that base must verify. */
        if ((rc = state_read_segment(v, 1, &s)) != 0)
            return rc;
        rc = s.kind == SEGMENT_BASE ? 0 : error_set(PQV_E_INTEGRITY, sname,
            "a format-1 vault holds a segment that is not an upgrade's base");
        segment_free(&s);
        if (rc != 0)
            return rc;
        vault_report(report, report_ctx, PQV_REPORT_INFO, NULL,
            "finishing an interrupted upgrade to format 2");
    } else if (rc == PQV_E_NOTFOUND) {
        if ((rc = write_base(v, report, report_ctx)) != 0)
            return rc;
    } else {
        return rc;
    }
    if ((rc = rewrite_config(v, 2)) != 0 || (rc = delete_records(v, report, report_ctx)) != 0)
        return rc;
    return upgrade_to_3(v, report, report_ctx);
}

int
upgrade_finish_interrupted(pqv_vault *v, pqv_report_fn report, void *report_ctx)
{
    char sname[STORAGE_NAME_MAX];
    int rc;

    if (v->config.version != 1)
        return 0;
    segment_name(1, sname);
    rc = v->storage->ops->stat(v->storage, sname, NULL);
    if (rc == PQV_E_NOTFOUND)
        return 0;
    return rc != 0 ? rc : upgrade_if_needed(v, report, report_ctx);
}

int
pqv_vault_upgrade(pqv_vault *v, pqv_report_fn report, void *report_ctx)
{
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    return upgrade_if_needed(v, report, report_ctx);
}
