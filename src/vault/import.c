/*
 * import.c: inbox batches folded into the vault (pqv_vault_import).  The
 * owner (unlocked, writer lock) imports each batch: opened, its packs
 * verified (size, SHA-256) and copied into packs/, its entries (renamed on
 * a conflict, or replacing with --replace) committed as one epoch; only
 * then are the batch's files deleted.  An entry whose origin names the
 * batch ("inbox:<B hex>:...") in the catalogue means the batch was
 * imported already (a crash before its deletion): it is only deleted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/batch.h"
#include "vault/format1.h"
#include "vault/import_internal.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

struct rename {
    char *from, *to;
};

/* import_batch(v, b, opt, res): one batch as one epoch. */
static int
import_batch(pqv_vault *v, struct batch *b, const struct pqv_import_options *opt,
    struct pqv_import_result *res)
{
    struct state st;
    struct txn t;
    struct entry **news = NULL;
    struct rename *renames = NULL;
    size_t nnews = 0, nren = 0;
    uint64_t (*groups)[2] = NULL;
    size_t ngroups = 0;
    char prefix[64], tag[16];
    int rc, began = 0;

    memset(&t, 0, sizeof(t));
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    if ((rc = state_load(v, &st)) != 0)
        goto out;
    snprintf(prefix, sizeof(prefix), ORIGIN_PREFIX "%s:", b->hex);
    snprintf(tag, sizeof(tag), "%.8s", b->hex);
    /* Imported already (a crash before the batch was deleted)? */
    for (size_t i = 0; i < st.n; i++)
        if (st.entries[i].origin != NULL &&
            strncmp(st.entries[i].origin, prefix, strlen(prefix)) == 0) {
            res->already++;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, b->hex,
                "imported already: its inbox files are removed");
            rc = 1;
            goto out;
        }
    if ((rc = batch_packs(v, b, 1)) != 0)
        goto out;
    if ((news = calloc(b->n, sizeof(*news))) == NULL ||
        (renames = calloc(b->n, sizeof(*renames))) == NULL ||
        (groups = calloc(b->n, sizeof(*groups))) == NULL) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    if ((rc = txn_begin(v, &st, &t)) != 0)
        goto out;
    began = 1;
    for (size_t i = 0; i < b->n && rc == 0; i++) {
        struct entry *e = &b->entries[i];
        const struct entry *old;
        char *name = NULL;
        size_t at;
        /* Below a renamed directory: renamed with it. */
        for (size_t r = nren; r-- > 0;) {
            size_t fl = strlen(renames[r].from);
            if (strncmp(e->name, renames[r].from, fl) == 0 && e->name[fl] == '/') {
                if (asprintf(&name, "%s%s", renames[r].to, e->name + fl) < 0) {
                    rc = PQV_E_NOMEM;
                    name = NULL;
                }
                break;
            }
        }
        if (rc != 0)
            break;
        if (name != NULL) {
            free(e->name);
            e->name = name;
        }
        /* An ancestor that is a file: the part of the name up to it
         * renamed (and everything below with it). */
        if (import_names_blocked(&st, news, nnews, e->name, &at)) {
            char *from = strndup(e->name, at), *to = NULL;
            if (from == NULL || asprintf(&to, "%s (inbox %s)", from, tag) < 0 ||
                asprintf(&name, "%s%s", to, e->name + at) < 0) {
                free(from);
                rc = PQV_E_NOMEM;
                break;
            }
            renames[nren].from = from;
            renames[nren++].to = to;
            free(e->name);
            e->name = name;
            res->renamed++;
        }
        old = import_names_taken(&st, news, nnews, e->name);
        /* A name this batch already holds is always renamed: one name,
         * one entry per epoch. */
        int ours = old != NULL && old != state_find(&st, e->name);
        if (old != NULL && (ours || (!(import_names_is_dir(old) && import_names_is_dir(e)) &&
                                        !(opt->replace && !import_names_is_dir(old) && !import_names_is_dir(e))))) {
            /* Kept both: the new one under "name (inbox B8)", " 2"... */
            char *to = NULL;
            for (int k = 1; rc == 0; k++) {
                free(to);
                if ((k == 1 ? asprintf(&to, "%s (inbox %s)", e->name, tag)
                            : asprintf(&to, "%s (inbox %s %d)", e->name, tag, k)) < 0) {
                    to = NULL;
                    rc = PQV_E_NOMEM;
                } else if (strlen(to) > PQV_NAME_MAX) {
                    rc = error_set(PQV_E_INVAL, e->name, "name too long to rename");
                } else if (import_names_taken(&st, news, nnews, to) == NULL) {
                    break;
                }
            }
            if (rc != 0) {
                free(to);
                break;
            }
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, e->name,
                "exists: the imported one is named '%s'", to);
            if (e->kind == KIND_DIR) {
                /* Everything below it follows it. */
                if ((renames[nren].to = strdup(to)) == NULL) {
                    free(to);
                    rc = PQV_E_NOMEM;
                    break;
                }
                renames[nren++].from = e->name;
            } else {
                free(e->name);
            }
            e->name = to;
            res->renamed++;
        } else if (old != NULL && !import_names_is_dir(old)) {
            res->replaced++;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, e->name, "replaced");
        }
        /* Hard-link groups get ids of this vault's making. */
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
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, e->name, "imported");
        if ((rc = txn_add(&t, e)) == 0)
            news[nnews++] = t.entries[t.n - 1];
    }
    for (size_t i = 0; rc == 0 && i < b->npacks; i++)
        rc = txn_introduce(&t, &b->packs[i]);
    /* The commit point: one epoch for the whole batch. */
    if (rc == 0)
        rc = txn_finish(&t, 0, opt->report, opt->report_ctx);
    else
        txn_abort(&t);
    if (rc == 0) {
        res->batches++;
        res->entries += nnews;
    }
out:
    if (began)
        txn_free(&t);
    for (size_t i = 0; renames != NULL && i < nren; i++) {
        free(renames[i].from);
        free(renames[i].to);
    }
    free(renames);
    free(news);
    free(groups);
    state_free(&st);
    return rc;
}

/* delete_batch(v, b or hex): its packs, then its commit point. */
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

int
pqv_vault_import(pqv_vault *v, const struct pqv_import_options *opt)
{
    static const struct pqv_import_options none;
    struct pqv_import_result res;
    struct names_list names;
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (opt == NULL)
        opt = &none;
    memset(&res, 0, sizeof(res));
    if ((rc = upgrade_if_needed(v, opt->report, opt->report_ctx)) != 0)
        return rc;
    if ((rc = names_list(v->storage, INBOX_DIR, &names)) != 0)
        return rc;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        char hex[2 * BATCH_ID_BYTES + 1], sname[STORAGE_NAME_MAX];
        uint8_t *blob = NULL;
        size_t len;
        struct batch b;
        int irc;
        if (inbox_classify(names.names[i], hex) != IN_BATCH)
            continue;
        snprintf(sname, sizeof(sname), "%s", names.names[i]);
        irc = v->storage->ops->get(v->storage, sname, &blob, &len, MAX_BATCH_BYTES);
        if (irc == PQV_E_NOTFOUND)
            continue;
        if (irc == 0) {
            irc = batch_open(v, hex, blob, len, &b);
            free(blob);
        }
        if (irc == 0) {
            irc = import_batch(v, &b, opt, &res);
            if (irc >= 0) {
                /* Durable in the catalogue (or imported before): the
                 * batch's files go. */
                irc = delete_batch(v, hex, &b);
            }
            batch_free(&b);
        }
        if (irc == PQV_E_INTEGRITY) {
            res.damaged++;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, sname,
                "not imported (left in place): %s", pqv_error_last()->reason);
            pqv_error_clear();
        } else if (irc != 0) {
            rc = irc;
        }
    }
    names_list_free(&names);
    if (opt->result != NULL) {
        struct pqv_import_result *r = opt->result;
        r->batches += res.batches;
        r->entries += res.entries;
        r->renamed += res.renamed;
        r->replaced += res.replaced;
        r->already += res.already;
        r->damaged += res.damaged;
    }
    if (rc == 0 && res.damaged > 0)
        rc = error_set(PQV_E_INTEGRITY, NULL, "%llu inbox batch%s damaged (reported above, left "
            "in place)", (unsigned long long)res.damaged, res.damaged == 1 ? "" : "es");
    return rc;
}
