/*
 * check_v1.c: check and gc of a format-1 vault (records and objects):
 * structure, presence and sizes, with --read-data every tag; without the
 * key what needs none; gc removes orphans and temporaries.  One structural
 * scan serves both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/vault_internal.h"

/* A sorted set of referenced object ids. */
struct id_ref {
    uint8_t id[OBJECT_ID_BYTES];
    size_t record;      /* index in the catalogue */
    uint32_t index;     /* position in that file */
};

static int
compare_ids(const void *a, const void *b)
{
    return memcmp(a, b, OBJECT_ID_BYTES);
}

/* referenced_ids(cat, out, n): every object id the catalogue names, sorted. */
static int
referenced_ids(const struct catalogue *cat, struct id_ref **out, size_t *n)
{
    size_t total = 0, k = 0;
    struct id_ref *ids;

    for (size_t i = 0; i < cat->n; i++)
        total += cat->records[i].entry.nobjects;
    if ((ids = malloc((total + 1) * sizeof(*ids))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < cat->n; i++)
        for (uint32_t j = 0; j < cat->records[i].entry.nobjects; j++) {
            memcpy(ids[k].id, cat->records[i].object_ids[j], OBJECT_ID_BYTES);
            ids[k].record = i;
            ids[k].index = j;
            k++;
        }
    util_sort(ids, total, sizeof(*ids), compare_ids);
    *out = ids;
    *n = total;
    return 0;
}

/* Verify every tag of the file ${r}. */
static int
check_file_data(pqv_vault *v, const struct record *r, pqv_report_fn report,
    void *report_ctx, uint64_t *damaged)
{
    uint8_t file_key[PQV_FILE_KEY_BYTES];
    uint8_t *plain = NULL;
    int rc, bad = 0;

    rc = record_unwrap_file_key(v, r, file_key);
    if (rc == PQV_E_NOTFOUND)
        return 0; /* replaced or removed by a writer since the scan */
    if (rc == PQV_E_INTEGRITY) {
        (*damaged)++;
        vault_report(report, report_ctx, PQV_REPORT_ERROR, r->entry.name, "%s",
            pqv_error_detail());
        return 0;
    }
    if (rc != 0)
        return rc;
    if (r->entry.nobjects > 0 && (plain = malloc(PQV_OBJECT_MAX_PLAIN)) == NULL) {
        util_wipe(file_key, sizeof(file_key));
        return PQV_E_NOMEM;
    }
    for (uint32_t k = 0; k < r->entry.nobjects && !bad; k++) {
        char oname[STORAGE_NAME_MAX];
        uint8_t *buf;
        size_t len, plen = object_plain_len(&r->entry, k);
        object_storage_name(r->object_ids[k], oname);
        rc = v->storage->ops->get(v->storage, oname, &buf, &len, object_sealed_size(plen) + 1);
        if (rc == PQV_E_NOTFOUND || rc == PQV_E_INTEGRITY) {
            rc = 0;
            continue; /* reported by the structural pass */
        }
        if (rc != 0)
            break;
        if (len != object_sealed_size(plen)) {
            /* Counted and reported by the structural pass already. */
            free(buf);
            continue;
        }
        rc = object_open(r->entry.aead, file_key, r->object_ids[k], k, buf, len, plain, plen);
        free(buf);
        if (rc == PQV_E_INTEGRITY) {
            (*damaged)++;
            bad = 1;
            vault_report(report, report_ctx, PQV_REPORT_ERROR, r->entry.name,
                "object %u (%s): %s", k, oname, pqv_error_detail());
            rc = 0;
        } else if (rc != 0) {
            break;
        }
    }
    if (plain != NULL) {
        util_wipe(plain, PQV_OBJECT_MAX_PLAIN);
        free(plain);
    }
    util_wipe(file_key, sizeof(file_key));
    return rc;
}

static int
compare_record_names(const void *a, const void *b)
{
    return strcmp(((const struct record *)a)->entry.name, ((const struct record *)b)->entry.name);
}

/* report_conflicts(cat, report, ctx, res): a name that is a file and also
 * the parent of other names cannot be restored (written by a version that
 * did not refuse it); each is damage to repair with rm. */
static void
report_conflicts(struct catalogue *cat, pqv_report_fn report, void *report_ctx,
    struct pqv_check_result *res)
{
    struct record *sorted;

    if (cat->n < 2 || (sorted = malloc(cat->n * sizeof(*sorted))) == NULL)
        return;
    memcpy(sorted, cat->records, cat->n * sizeof(*sorted));
    util_sort(sorted, cat->n, sizeof(*sorted), compare_record_names);
    for (size_t i = 0; i + 1 < cat->n; i++) {
        const char *name = sorted[i].entry.name;
        size_t len = strlen(name);
        if (sorted[i].entry.type != PQV_ENTRY_FILE)
            continue;
        /* Names below "name/" sort right after it, past names that only
         * continue it with a byte below '/'. */
        for (size_t j = i + 1; j < cat->n && strncmp(sorted[j].entry.name, name, len) == 0; j++) {
            if (sorted[j].entry.name[len] == '/') {
                res->damaged++;
                vault_report(report, report_ctx, PQV_REPORT_ERROR, name,
                    "is a file and also has names below it (%s): remove one of them with rm",
                    sorted[j].entry.name);
                break;
            }
        }
    }
    free(sorted);
}

/* What the structural pass keeps while it walks the objects. */
struct scan_ctx {
    struct catalogue *cat;
    struct id_ref *ids;
    size_t nids;
    unsigned char *seen;
    const struct names_walk *w;
    struct pqv_check_result *res;
    char writer[PQV_LOCK_HOLDER_MAX];  /* another writer running, or "" */
};

static int
scan_object(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct scan_ctx *sc = ctx;
    struct pqv_check_result *res = sc->res;
    struct id_ref key, *hit;

    memcpy(key.id, id, OBJECT_ID_BYTES);
    res->objects++;
    res->bytes += size;
    hit = util_search(&key, sc->ids, sc->nids, sizeof(*sc->ids), compare_ids);
    if (hit == NULL) {
        if (sc->writer[0] != '\0') {
            /* Most likely the running writer's, its record still to come:
             * neither counted nor collected. */
            res->in_flight++;
            vault_report(sc->w->report, sc->w->report_ctx, PQV_REPORT_INFO, name,
                "no record names it yet (a writer, %s, is running)", sc->writer);
            return 0;
        }
        res->orphans++;
        res->orphan_bytes += size;
        vault_report(sc->w->report, sc->w->report_ctx, PQV_REPORT_INFO, name,
            "orphaned object (no record names it; gc removes it)");
        return sc->w->leftovers != NULL ? names_list_add(sc->w->leftovers, name) : 0;
    }
    sc->seen[hit - sc->ids] = 1;
    const struct pqv_entry *e = &sc->cat->records[hit->record].entry;
    uint64_t expect = object_sealed_size(object_plain_len(e, hit->index));
    if (size != expect) {
        res->damaged++;
        vault_report(sc->w->report, sc->w->report_ctx, PQV_REPORT_ERROR, e->name,
            "object %u (%s) has %llu bytes, expected %llu", hit->index, name,
            (unsigned long long)size, (unsigned long long)expect);
    }
    return 0;
}

/* The structural pass shared by check and gc: catalogue, objects present
 * with the right sizes, orphans and temporaries.  ${leftovers} (gc) receives
 * the storage names of orphaned objects and temporaries. */
static int
scan(pqv_vault *v, struct catalogue *cat, struct names_list *leftovers, pqv_report_fn report,
    void *report_ctx, struct pqv_check_result *res)
{
    struct names_walk w = { report, report_ctx, &res->damaged, &res->temporaries, leftovers,
        NULL, &res->in_flight };
    struct scan_ctx sc = { cat, NULL, 0, NULL, &w, res, "" };
    int rc;

    /* Before the catalogue: a writer starting after this point writes
     * objects no record names yet, and those are reported as orphans (gc
     * takes the lock, so it never sees another writer's). */
    if (!v->locked && v->storage->ops->lock_probe != NULL &&
        v->storage->ops->lock_probe(v->storage, sc.writer, sizeof(sc.writer)) != 1)
        sc.writer[0] = '\0';
    if (sc.writer[0] != '\0')
        vault_report(report, report_ctx, PQV_REPORT_WARNING, NULL,
            "a writer (%s) is running: objects without a record are taken as its own", sc.writer);
    w.writer_running = sc.writer;
    if ((rc = catalogue_load(v, cat, &w)) != 0)
        return rc;
    res->records = cat->n;
    report_conflicts(cat, report, report_ctx, res);
    if ((rc = referenced_ids(cat, &sc.ids, &sc.nids)) != 0)
        goto done;
    if ((sc.seen = calloc(sc.nids + 1, 1)) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    if ((rc = names_walk(v->storage, "objects", OBJECT_ID_BYTES, &w, scan_object, &sc)) != 0)
        goto done;
    for (size_t i = 0; i < sc.nids; i++) {
        if (sc.seen[i])
            continue;
        char oname[STORAGE_NAME_MAX];
        object_storage_name(sc.ids[i].id, oname);
        res->missing++;
        res->damaged++;
        vault_report(report, report_ctx, PQV_REPORT_ERROR, cat->records[sc.ids[i].record].entry.name,
            "object %u (%s) is missing", sc.ids[i].index, oname);
    }
    /* Leftover temporaries beside the config and key file. */
    rc = names_walk(v->storage, "", 0, &w, NULL, NULL);
done:
    free(sc.ids);
    free(sc.seen);
    if (rc != 0)
        catalogue_free(cat);
    return rc;
}

/* What can be checked of a record or an object without the seed. */
struct nokey_ctx {
    pqv_vault *v;
    const struct names_walk *w;
    struct pqv_check_result *res;
};

static int
check_record_header(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct nokey_ctx *c = ctx;
    const struct names_walk *w = c->w;
    pqv_vault *v = c->v;
    uint8_t *buf;
    size_t len;
    int rc;

    (void)id;
    (void)size;
    rc = v->storage->ops->get(v->storage, name, &buf, &len, MAX_RECORD_BYTES);
    if (rc == PQV_E_NOTFOUND)
        return 0;
    if (rc == 0) {
        rc = record_check_header(buf, len);
        free(buf);
    }
    if (rc == PQV_E_INTEGRITY) {
        (*w->damaged)++;
        vault_report(w->report, w->report_ctx, PQV_REPORT_ERROR, name, "%s", pqv_error_detail());
        return 0;
    }
    if (rc == 0)
        c->res->records++;
    return rc;
}

static int
check_object_size(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct nokey_ctx *c = ctx;
    const struct names_walk *w = c->w;
    uint64_t plain;

    (void)id;
    c->res->objects++;
    c->res->bytes += size;
    if (size < OBJECT_HEADER_BYTES || pqv_stream_opened_size(size - OBJECT_HEADER_BYTES, &plain) != 0 ||
        plain > PQV_OBJECT_MAX_PLAIN) {
        (*w->damaged)++;
        vault_report(w->report, w->report_ctx, PQV_REPORT_ERROR, name,
            "object has an impossible size (%llu bytes)", (unsigned long long)size);
    }
    return 0;
}

void
check_v1_keyfile_status(pqv_vault *v, pqv_report_fn report, void *report_ctx,
    struct pqv_check_result *res)
{
    struct pqv_error kerr;

    switch (pqv_vault_keyfile_status(v, &kerr)) {
    case 0:
        break;
    case PQV_E_INTEGRITY:
        res->damaged++;
        vault_report(report, report_ctx, PQV_REPORT_ERROR, v->keyfile_path, "%s", kerr.reason);
        break;
    default:
        vault_report(report, report_ctx, PQV_REPORT_WARNING, v->keyfile_path,
            "key file not checked: %s%s%s", kerr.subject[0] != '\0' &&
            strcmp(kerr.subject, v->keyfile_path) != 0 ? kerr.subject : "",
            kerr.subject[0] != '\0' && strcmp(kerr.subject, v->keyfile_path) != 0 ? ": " : "",
            kerr.reason[0] != '\0' ? kerr.reason : pqv_strerror(kerr.code));
        break;
    }
}

/* check_without_key(v, report, ctx, res): what can be verified without the
 * seed: the config and key file parsed at open, every record's header and
 * length, every object's name and a size that some plaintext seals to, and
 * leftover temporaries.  Orphans and missing objects need the catalogue.
 * A vault opened without its key file (PQV_OPEN_KEYFILE_OPTIONAL) is
 * checked all the same: a missing key file (kept elsewhere, or lost) or
 * one of another version is reported as not checked, a damaged one as
 * damage. */
static int
check_without_key(pqv_vault *v, pqv_report_fn report, void *report_ctx,
    struct pqv_check_result *res)
{
    struct names_walk w = { report, report_ctx, &res->damaged, &res->temporaries, NULL, NULL, NULL };
    struct nokey_ctx c = { v, &w, res };
    int rc;

    check_v1_keyfile_status(v, report, report_ctx, res);
    if ((rc = names_walk(v->storage, "records", NAME_HASH_BYTES, &w, check_record_header, &c)) != 0 ||
        (rc = names_walk(v->storage, "objects", OBJECT_ID_BYTES, &w, check_object_size, &c)) != 0)
        return rc;
    return names_walk(v->storage, "", 0, &w, NULL, NULL);
}

int
check_v1(pqv_vault *v, const struct pqv_check_options *opt, struct pqv_check_result *result)
{
    struct pqv_check_result res;
    struct catalogue cat;
    int rc;

    memset(&res, 0, sizeof(res));
    if (v->identity == NULL) {
        rc = check_without_key(v, opt->report, opt->report_ctx, &res);
        if (result != NULL)
            *result = res;
        if (rc == 0 && res.damaged > 0)
            rc = error_set(PQV_E_INTEGRITY, NULL, "%llu damaged item%s found", (unsigned long long)res.damaged, res.damaged == 1 ? "" : "s");
        return rc;
    }
    if ((rc = scan(v, &cat, NULL, opt->report, opt->report_ctx, &res)) != 0)
        return rc;
    for (size_t i = 0; opt->read_data && i < cat.n && rc == 0; i++)
        if (cat.records[i].entry.type == PQV_ENTRY_FILE)
            rc = check_file_data(v, &cat.records[i], opt->report, opt->report_ctx,
                &res.damaged);
    catalogue_free(&cat);
    if (result != NULL)
        *result = res;
    if (rc != 0)
        return rc;
    if (res.damaged > 0)
        return error_set(PQV_E_INTEGRITY, NULL, "%llu damaged item%s found", (unsigned long long)res.damaged, res.damaged == 1 ? "" : "s");
    return 0;
}

int
check_v1_gc(pqv_vault *v, const struct pqv_check_options *opt, struct pqv_check_result *result)
{
    struct pqv_check_result res;
    struct names_list orphans;
    struct catalogue cat;
    int rc;

    memset(&res, 0, sizeof(res));
    memset(&orphans, 0, sizeof(orphans));
    if ((rc = scan(v, &cat, &orphans, NULL, NULL, &res)) != 0)
        goto out;
    catalogue_free(&cat);
    /* An unreadable record might name objects that look orphaned: deleting
     * them could destroy data a repaired record would need. */
    if (res.damaged > 0) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "refusing to collect garbage while the vault is damaged (run check)");
        goto out;
    }
    for (size_t i = 0; i < orphans.n; i++) {
        int d = v->storage->ops->del(v->storage, orphans.names[i]);
        if (d == 0 || d == PQV_E_NOTFOUND) {
            res.removed++;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, orphans.names[i], "removed");
        } else {
            rc = d;
            goto out;
        }
    }
    rc = v->storage->ops->barrier(v->storage);
out:
    names_list_free(&orphans);
    if (result != NULL)
        *result = res;
    return rc;
}
