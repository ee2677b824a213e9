/*
 * catalogue.c: operations over every record: loading the catalogue, list,
 * rm, check and gc.  Loading decrypts records only (no KEM operation).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
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

void
catalogue_free(struct catalogue *cat)
{
    for (size_t i = 0; i < cat->n; i++)
        record_clear(&cat->records[i]);
    free(cat->records);
    free(cat->storage_names);
    memset(cat, 0, sizeof(*cat));
}

static int
compare_record_names(const void *a, const void *b)
{
    return strcmp(((const struct record *)a)->entry.name, ((const struct record *)b)->entry.name);
}

void
catalogue_sort(struct catalogue *cat)
{
    /* storage_names are not needed once sorted (only check and gc use
     * them, unsorted): drop them rather than permute two arrays. */
    qsort(cat->records, cat->n, sizeof(*cat->records), compare_record_names);
    free(cat->storage_names);
    cat->storage_names = NULL;
}

/* Collected storage names during a listing. */
struct name_list {
    char (*names)[STORAGE_NAME_MAX];
    uint64_t *sizes;
    size_t n, cap;
};

static int
collect_name(void *ctx, const char *name, uint64_t size)
{
    struct name_list *l = ctx;

    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        void *p = realloc(l->names, cap * STORAGE_NAME_MAX);
        void *q;
        if (p == NULL)
            return PQV_E_NOMEM;
        l->names = p;
        if ((q = realloc(l->sizes, cap * sizeof(uint64_t))) == NULL)
            return PQV_E_NOMEM;
        l->sizes = q;
        l->cap = cap;
    }
    snprintf(l->names[l->n], STORAGE_NAME_MAX, "%s", name);
    l->sizes[l->n] = size;
    l->n++;
    return 0;
}

static void
name_list_free(struct name_list *l)
{
    free(l->names);
    free(l->sizes);
    memset(l, 0, sizeof(*l));
}

/* parse_storage_name(name, kind, out, n): the hex id of "kind/xx/<hex>"
 * with the shard matching; -1 if ${name} has another shape. */
static int
parse_storage_name(const char *name, const char *kind, uint8_t *out, size_t n)
{
    size_t k = strlen(kind);
    const char *hex;

    if (strncmp(name, kind, k) != 0 || name[k] != '/' || strlen(name) != k + 4 + 2 * n ||
        name[k + 3] != '/')
        return -1;
    hex = name + k + 4;
    if (hex[0] != name[k + 1] || hex[1] != name[k + 2])
        return -1;
    /* Only the lowercase spelling the vault writes: an uppercase copy
     * would otherwise load as a second record or hide as an object. */
    for (size_t i = 0; i < 2 * n; i++)
        if (hex[i] >= 'A' && hex[i] <= 'F')
            return -1;
    return pqv_hex_decode(out, n, hex);
}

int
catalogue_load(pqv_vault *v, struct catalogue *cat, pqv_report_fn report, void *report_ctx,
    uint64_t *damaged, uint64_t *temporaries)
{
    struct name_list names;
    int rc;

    memset(cat, 0, sizeof(*cat));
    memset(&names, 0, sizeof(names));
    if ((rc = v->storage->ops->list(v->storage, "records", collect_name, &names)) != 0)
        goto done;
    if ((cat->records = calloc(names.n + 1, sizeof(*cat->records))) == NULL ||
        (cat->storage_names = calloc(names.n + 1, STORAGE_NAME_MAX)) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < names.n; i++) {
        uint8_t hash[NAME_HASH_BYTES], *buf;
        size_t len;
        struct record *r = &cat->records[cat->n];

        if (strstr(names.names[i], PQV_STORAGE_TEMP_MARK) != NULL) {
            if (temporaries != NULL)
                (*temporaries)++;
            vault_report(report, report_ctx, PQV_REPORT_WARNING, names.names[i],
                "leftover temporary file (gc removes it)");
            continue;
        }
        if (parse_storage_name(names.names[i], "records", hash, NAME_HASH_BYTES) != 0) {
            if (damaged != NULL)
                (*damaged)++;
            vault_report(report, report_ctx, PQV_REPORT_ERROR, names.names[i],
                "unexpected file in records/");
            if (damaged == NULL) {
                rc = pqv_set_error(PQV_E_INTEGRITY, "%s: unexpected file in records/", names.names[i]);
                goto done;
            }
            continue;
        }
        rc = v->storage->ops->get(v->storage, names.names[i], &buf, &len, MAX_RECORD_BYTES);
        if (rc == PQV_E_NOTFOUND)
            continue; /* removed meanwhile by a writer */
        if (rc == 0) {
            rc = record_open(v, hash, buf, len, r);
            free(buf);
            if (rc == 0) {
                /* The wrapped key is most of a record (FrodoKEM ciphertext)
                 * and only get and check --read-data need it, one at a
                 * time: drop it so memory does not grow ~16 KiB a record. */
                free(r->wrapped);
                r->wrapped = NULL;
                r->wrapped_len = 0;
            }
        }
        if (rc == PQV_E_INTEGRITY || rc == PQV_E_UNSUPPORTED) {
            if (damaged != NULL)
                (*damaged)++;
            vault_report(report, report_ctx, PQV_REPORT_ERROR, names.names[i], "%s",
                pqv_error_detail());
            if (damaged == NULL) {
                char detail[256];
                snprintf(detail, sizeof(detail), "%s", pqv_error_detail());
                rc = pqv_set_error(rc, "%s: %s", names.names[i], detail);
                goto done;
            }
            rc = 0;
            continue;
        }
        if (rc != 0)
            goto done;
        snprintf(cat->storage_names[cat->n], STORAGE_NAME_MAX, "%s", names.names[i]);
        cat->n++;
    }
    rc = 0;
done:
    name_list_free(&names);
    if (rc != 0)
        catalogue_free(cat);
    return rc;
}

int
vault_name_under(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);

    if (n == 0)
        return 1;
    return strncmp(name, prefix, n) == 0 && (name[n] == '\0' || name[n] == '/');
}

static int
compare_entries(const void *a, const void *b)
{
    return strcmp(((const struct pqv_entry *)a)->name, ((const struct pqv_entry *)b)->name);
}

int
pqv_vault_list(pqv_vault *v, const char *prefix, struct pqv_entry **entries, size_t *n)
{
    struct catalogue cat;
    char norm[PQV_NAME_MAX + 1] = "";
    struct pqv_entry *out;
    size_t k = 0;
    int rc;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (entries == NULL || n == NULL)
        return PQV_E_INVAL;
    if (prefix != NULL && prefix[0] != '\0' &&
        (rc = pqv_name_normalize(prefix, norm, sizeof(norm))) != 0)
        return rc;
    if ((rc = catalogue_load(v, &cat, NULL, NULL, NULL, NULL)) != 0)
        return rc;
    if ((out = calloc(cat.n + 1, sizeof(*out))) == NULL) {
        catalogue_free(&cat);
        return PQV_E_NOMEM;
    }
    for (size_t i = 0; i < cat.n; i++) {
        if (!vault_name_under(cat.records[i].entry.name, norm))
            continue;
        out[k] = cat.records[i].entry;
        cat.records[i].entry.name = NULL; /* moved */
        k++;
    }
    catalogue_free(&cat);
    qsort(out, k, sizeof(*out), compare_entries);
    *entries = out;
    *n = k;
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
    if ((rc = vault_read_record(v, norm, &r)) != 0)
        return rc;
    *entry = r.entry;
    r.entry.name = NULL;
    record_clear(&r);
    return 0;
}

int
pqv_vault_rm(pqv_vault *v, const char *name, pqv_report_fn report, void *report_ctx)
{
    struct catalogue cat;
    char norm[PQV_NAME_MAX + 1];
    struct record exact;
    int rc, have_exact, found = 0;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (name == NULL)
        return PQV_E_INVAL;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    memset(&cat, 0, sizeof(cat));
    rc = vault_read_record(v, norm, &exact);
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
        uint8_t hash[NAME_HASH_BYTES];
        if ((rc = vault_name_hash(v, norm, hash)) != 0) {
            record_clear(&exact);
            catalogue_free(&cat);
            return rc;
        }
        vault_record_storage_name(hash, cat.storage_names[0]);
        cat.records[0] = exact;
        cat.n = 1;
    } else {
        if (have_exact)
            record_clear(&exact);
        /* A directory: the catalogue tells what lies below it. */
        if ((rc = catalogue_load(v, &cat, NULL, NULL, NULL, NULL)) != 0)
            return rc;
    }
    /* Commit point of each removal: the record's unlink. */
    for (size_t i = 0; i < cat.n; i++) {
        if (!vault_name_under(cat.records[i].entry.name, norm))
            continue;
        if ((rc = v->storage->ops->del(v->storage, cat.storage_names[i])) != 0)
            goto out;
        found++;
    }
    if (found == 0) {
        rc = pqv_set_error(PQV_E_NOTFOUND, "not found");
        goto out;
    }
    if ((rc = v->storage->ops->barrier(v->storage)) != 0)
        goto out;
    /* The records are gone for good; now their objects. */
    for (size_t i = 0; i < cat.n; i++) {
        struct record *r = &cat.records[i];
        if (!vault_name_under(r->entry.name, norm))
            continue;
        for (uint32_t k = 0; k < r->entry.nobjects; k++) {
            char sname[STORAGE_NAME_MAX];
            vault_object_storage_name(r->object_ids[k], sname);
            int d = v->storage->ops->del(v->storage, sname);
            if (d != 0 && d != PQV_E_NOTFOUND)
                vault_report(report, report_ctx, PQV_REPORT_WARNING, sname,
                    "could not delete (gc will remove it): %s", pqv_error_detail());
        }
        vault_report(report, report_ctx, PQV_REPORT_INFO, r->entry.name, "removed");
    }
    rc = v->storage->ops->barrier(v->storage);
out:
    catalogue_free(&cat);
    return rc;
}

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
    qsort(ids, total, sizeof(*ids), compare_ids);
    *out = ids;
    *n = total;
    return 0;
}

/* Expected plaintext length of object ${index} of ${e}. */
static size_t
object_plain_len(const struct pqv_entry *e, uint32_t index)
{
    uint64_t left = e->size - (uint64_t)index * PQV_OBJECT_MAX_PLAIN;

    return left > PQV_OBJECT_MAX_PLAIN ? PQV_OBJECT_MAX_PLAIN : (size_t)left;
}

/* Verify every tag of the file ${r}. */
static int
check_file_data(pqv_vault *v, const struct record *r, pqv_report_fn report,
    void *report_ctx, uint64_t *damaged)
{
    uint8_t file_key[PQV_FILE_KEY_BYTES];
    uint8_t *plain = NULL;
    int rc, bad = 0;

    rc = vault_unwrap_file_key(v, r, file_key);
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
        pqv_wipe(file_key, sizeof(file_key));
        return PQV_E_NOMEM;
    }
    for (uint32_t k = 0; k < r->entry.nobjects && !bad; k++) {
        char oname[STORAGE_NAME_MAX];
        uint8_t *buf;
        size_t len, plen = object_plain_len(&r->entry, k);
        vault_object_storage_name(r->object_ids[k], oname);
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
        pqv_wipe(plain, PQV_OBJECT_MAX_PLAIN);
        free(plain);
    }
    pqv_wipe(file_key, sizeof(file_key));
    return rc;
}

/* The structural pass shared by check and gc: catalogue, objects present
 * with the right sizes, orphans and temporaries.  ${orphans} receives the
 * storage names of orphaned objects and temporaries. */
static int
scan(pqv_vault *v, struct catalogue *cat, struct name_list *orphans, pqv_report_fn report,
    void *report_ctx, struct pqv_check_result *res)
{
    struct name_list objects;
    struct id_ref *ids = NULL;
    size_t nids = 0;
    unsigned char *seen = NULL;
    int rc;

    memset(&objects, 0, sizeof(objects));
    if ((rc = catalogue_load(v, cat, report, report_ctx, &res->damaged, &res->temporaries)) != 0)
        return rc;
    res->records = cat->n;
    if ((rc = referenced_ids(cat, &ids, &nids)) != 0)
        goto done;
    if ((seen = calloc(nids + 1, 1)) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    if ((rc = v->storage->ops->list(v->storage, "objects", collect_name, &objects)) != 0)
        goto done;
    for (size_t i = 0; i < objects.n; i++) {
        struct id_ref key;
        struct id_ref *hit;
        if (strstr(objects.names[i], PQV_STORAGE_TEMP_MARK) != NULL) {
            res->temporaries++;
            vault_report(report, report_ctx, PQV_REPORT_WARNING, objects.names[i],
                "leftover temporary file (gc removes it)");
            if (orphans != NULL && (rc = collect_name(orphans, objects.names[i], 0)) != 0)
                goto done;
            continue;
        }
        if (parse_storage_name(objects.names[i], "objects", key.id, OBJECT_ID_BYTES) != 0) {
            res->damaged++;
            vault_report(report, report_ctx, PQV_REPORT_ERROR, objects.names[i],
                "unexpected file in objects/");
            continue;
        }
        res->objects++;
        res->bytes += objects.sizes[i];
        hit = bsearch(&key, ids, nids, sizeof(*ids), compare_ids);
        if (hit == NULL) {
            res->orphans++;
            vault_report(report, report_ctx, PQV_REPORT_WARNING, objects.names[i],
                "orphaned object (no record names it; gc removes it)");
            if (orphans != NULL && (rc = collect_name(orphans, objects.names[i], 0)) != 0)
                goto done;
            continue;
        }
        seen[hit - ids] = 1;
        const struct pqv_entry *e = &cat->records[hit->record].entry;
        uint64_t expect = object_sealed_size(object_plain_len(e, hit->index));
        if (objects.sizes[i] != expect) {
            res->damaged++;
            vault_report(report, report_ctx, PQV_REPORT_ERROR, e->name,
                "object %u (%s) has %llu bytes, expected %llu", hit->index, objects.names[i],
                (unsigned long long)objects.sizes[i], (unsigned long long)expect);
        }
    }
    for (size_t i = 0; i < nids; i++) {
        if (seen[i])
            continue;
        char oname[STORAGE_NAME_MAX];
        vault_object_storage_name(ids[i].id, oname);
        res->missing++;
        res->damaged++;
        vault_report(report, report_ctx, PQV_REPORT_ERROR, cat->records[ids[i].record].entry.name,
            "object %u (%s) is missing", ids[i].index, oname);
    }
    /* Leftover temporaries beside the config and key file. */
    {
        struct name_list root;
        memset(&root, 0, sizeof(root));
        if (v->storage->ops->list(v->storage, "", collect_name, &root) == 0) {
            for (size_t i = 0; i < root.n; i++) {
                if (strstr(root.names[i], PQV_STORAGE_TEMP_MARK) == NULL)
                    continue;
                res->temporaries++;
                vault_report(report, report_ctx, PQV_REPORT_WARNING, root.names[i],
                    "leftover temporary file (gc removes it)");
                if (orphans != NULL)
                    collect_name(orphans, root.names[i], 0);
            }
        }
        name_list_free(&root);
    }
    /* Leftover record temporaries: counted and reported by catalogue_load,
     * collected here for gc. */
    if (orphans != NULL) {
        struct name_list recs;
        memset(&recs, 0, sizeof(recs));
        if ((rc = v->storage->ops->list(v->storage, "records", collect_name, &recs)) == 0)
            for (size_t i = 0; i < recs.n && rc == 0; i++)
                if (strstr(recs.names[i], PQV_STORAGE_TEMP_MARK) != NULL)
                    rc = collect_name(orphans, recs.names[i], 0);
        name_list_free(&recs);
    }
done:
    free(ids);
    free(seen);
    name_list_free(&objects);
    if (rc != 0)
        catalogue_free(cat);
    return rc;
}

/* check_without_key(v, report, ctx, res): what can be verified without the
 * seed: the config and key file parsed at open, every record's header and
 * length, every object's name and a size that some plaintext seals to, and
 * leftover temporaries.  Orphans and missing objects need the catalogue. */
static int
check_without_key(pqv_vault *v, pqv_report_fn report, void *report_ctx,
    struct pqv_check_result *res)
{
    struct name_list names;
    int rc;

    memset(&names, 0, sizeof(names));
    if ((rc = v->storage->ops->list(v->storage, "records", collect_name, &names)) != 0)
        goto done;
    for (size_t i = 0; i < names.n; i++) {
        uint8_t hash[NAME_HASH_BYTES], *buf;
        size_t len;
        if (strstr(names.names[i], PQV_STORAGE_TEMP_MARK) != NULL) {
            res->temporaries++;
            vault_report(report, report_ctx, PQV_REPORT_WARNING, names.names[i],
                "leftover temporary file (gc removes it)");
            continue;
        }
        if (parse_storage_name(names.names[i], "records", hash, NAME_HASH_BYTES) != 0) {
            res->damaged++;
            vault_report(report, report_ctx, PQV_REPORT_ERROR, names.names[i],
                "unexpected file in records/");
            continue;
        }
        rc = v->storage->ops->get(v->storage, names.names[i], &buf, &len, MAX_RECORD_BYTES);
        if (rc == PQV_E_NOTFOUND)
            continue;
        if (rc == 0) {
            rc = record_check_header(buf, len);
            free(buf);
        }
        if (rc == PQV_E_INTEGRITY) {
            res->damaged++;
            vault_report(report, report_ctx, PQV_REPORT_ERROR, names.names[i], "%s",
                pqv_error_detail());
            rc = 0;
            continue;
        }
        if (rc != 0)
            goto done;
        res->records++;
    }
    name_list_free(&names);
    if ((rc = v->storage->ops->list(v->storage, "objects", collect_name, &names)) != 0)
        goto done;
    for (size_t i = 0; i < names.n; i++) {
        uint8_t id[OBJECT_ID_BYTES];
        uint64_t plain;
        if (strstr(names.names[i], PQV_STORAGE_TEMP_MARK) != NULL) {
            res->temporaries++;
            vault_report(report, report_ctx, PQV_REPORT_WARNING, names.names[i],
                "leftover temporary file (gc removes it)");
            continue;
        }
        if (parse_storage_name(names.names[i], "objects", id, OBJECT_ID_BYTES) != 0) {
            res->damaged++;
            vault_report(report, report_ctx, PQV_REPORT_ERROR, names.names[i],
                "unexpected file in objects/");
            continue;
        }
        res->objects++;
        res->bytes += names.sizes[i];
        if (names.sizes[i] < OBJECT_HEADER_BYTES ||
            pqv_stream_opened_size(names.sizes[i] - OBJECT_HEADER_BYTES, &plain) != 0 ||
            plain > PQV_OBJECT_MAX_PLAIN) {
            res->damaged++;
            vault_report(report, report_ctx, PQV_REPORT_ERROR, names.names[i],
                "object has an impossible size (%llu bytes)", (unsigned long long)names.sizes[i]);
        }
    }
done:
    name_list_free(&names);
    return rc;
}

int
pqv_vault_check(pqv_vault *v, int read_data, pqv_report_fn report, void *report_ctx,
    struct pqv_check_result *result)
{
    struct pqv_check_result res;
    struct catalogue cat;
    int rc;

    if (v == NULL)
        return PQV_E_INVAL;
    memset(&res, 0, sizeof(res));
    if (v->identity == NULL) {
        rc = check_without_key(v, report, report_ctx, &res);
        if (result != NULL)
            *result = res;
        if (rc == 0 && res.damaged > 0)
            rc = pqv_set_error(PQV_E_INTEGRITY, "%llu damaged item%s found",
                (unsigned long long)res.damaged, res.damaged == 1 ? "" : "s");
        return rc;
    }
    if ((rc = scan(v, &cat, NULL, report, report_ctx, &res)) != 0)
        return rc;
    for (size_t i = 0; read_data && i < cat.n && rc == 0; i++)
        if (cat.records[i].entry.type == PQV_ENTRY_FILE)
            rc = check_file_data(v, &cat.records[i], report, report_ctx,
                &res.damaged);
    catalogue_free(&cat);
    if (result != NULL)
        *result = res;
    if (rc != 0)
        return rc;
    if (res.damaged > 0)
        return pqv_set_error(PQV_E_INTEGRITY, "%llu damaged item%s found",
            (unsigned long long)res.damaged, res.damaged == 1 ? "" : "s");
    return 0;
}

int
pqv_vault_gc(pqv_vault *v, pqv_report_fn report, void *report_ctx, struct pqv_check_result *result)
{
    struct pqv_check_result res;
    struct name_list orphans;
    struct catalogue cat;
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    memset(&res, 0, sizeof(res));
    memset(&orphans, 0, sizeof(orphans));
    if ((rc = scan(v, &cat, &orphans, NULL, NULL, &res)) != 0)
        goto out;
    catalogue_free(&cat);
    /* An unreadable record might name objects that look orphaned: deleting
     * them could destroy data a repaired record would need. */
    if (res.damaged > 0) {
        rc = pqv_set_error(PQV_E_INTEGRITY,
            "refusing to collect garbage while the vault is damaged (run check)");
        goto out;
    }
    for (size_t i = 0; i < orphans.n; i++) {
        int d = v->storage->ops->del(v->storage, orphans.names[i]);
        if (d == 0 || d == PQV_E_NOTFOUND) {
            res.removed++;
            vault_report(report, report_ctx, PQV_REPORT_INFO, orphans.names[i], "removed");
        } else {
            rc = d;
            goto out;
        }
    }
    rc = v->storage->ops->barrier(v->storage);
out:
    name_list_free(&orphans);
    if (result != NULL)
        *result = res;
    return rc;
}
