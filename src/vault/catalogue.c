/*
 * catalogue.c: the catalogue: every record, decrypted with the seed-derived
 * record keys (no KEM operation), and sorted by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "util/util.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/vault_internal.h"

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
    util_sort(cat->records, cat->n, sizeof(*cat->records), compare_record_names);
    free(cat->storage_names);
    cat->storage_names = NULL;
}


/* load_one(ctx, name, hash, size): open one record into the catalogue. */
struct load_ctx {
    pqv_vault *v;
    struct catalogue *cat;
    const struct names_walk *w;
};

static int
load_one(void *ctx, const char *name, const uint8_t *hash, uint64_t size)
{
    struct load_ctx *l = ctx;
    struct catalogue *cat = l->cat;
    struct record *r;
    uint8_t *buf;
    size_t len;
    int rc;

    (void)size;
    if (cat->n == cat->cap) {
        size_t cap = cat->cap ? 2 * cat->cap : 256;
        void *p = realloc(cat->records, cap * sizeof(*cat->records));
        void *q;
        if (p == NULL)
            return PQV_E_NOMEM;
        cat->records = p;
        if ((q = realloc(cat->storage_names, cap * STORAGE_NAME_MAX)) == NULL)
            return PQV_E_NOMEM;
        cat->storage_names = q;
        cat->cap = cap;
    }
    r = &cat->records[cat->n];
    rc = l->v->storage->ops->get(l->v->storage, name, &buf, &len, MAX_RECORD_BYTES);
    if (rc == PQV_E_NOTFOUND)
        return 0; /* removed meanwhile by a writer */
    if (rc == 0) {
        rc = record_open(l->v, hash, buf, len, r);
        free(buf);
        if (rc == 0) {
            /* The wrapped key is most of a record (FrodoKEM ciphertext)
             * and only get and check --read-data need it, one at a time:
             * drop it so memory does not grow ~16 KiB a record. */
            free(r->wrapped);
            r->wrapped = NULL;
            r->wrapped_len = 0;
        }
    }
    if (rc == PQV_E_INTEGRITY || rc == PQV_E_UNSUPPORTED) {
        if (l->w == NULL || l->w->damaged == NULL)
            return error_subject(rc, name);
        (*l->w->damaged)++;
        vault_report(l->w->report, l->w->report_ctx, PQV_REPORT_ERROR, name, "%s",
            pqv_error_detail());
        return 0;
    }
    if (rc != 0)
        return rc;
    snprintf(cat->storage_names[cat->n], STORAGE_NAME_MAX, "%s", name);
    cat->n++;
    return 0;
}

int
catalogue_load(pqv_vault *v, struct catalogue *cat, const struct names_walk *w)
{
    struct load_ctx l = { v, cat, w };
    int rc;

    memset(cat, 0, sizeof(*cat));
    rc = names_walk(v->storage, "records", NAME_HASH_BYTES, w, load_one, &l);
    if (rc != 0)
        catalogue_free(cat);
    return rc;
}
