/*
 * vault/names.h: stored names and storage names (names.c): the keyed hash
 * that names a stored name, prefixes, and the walk over a storage listing
 * that tells valid names from temporaries and damage.
 */
#ifndef PQV_VAULT_NAMES_H
#define PQV_VAULT_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/storage.h"
#include "pqvault/vault.h"

#define NAME_HASH_BYTES 32
/* Storage names: "records/xx/<64 hex>", "objects/xx/<32 hex>", "segments/<16 hex>"... */
#define STORAGE_NAME_MAX 128

/* names_hash(v, name, hash): the keyed hash that names a stored name. */
int names_hash(const pqv_vault *v, const char *name, uint8_t hash[NAME_HASH_BYTES]);
/* names_under(name, prefix): ${name} is ${prefix} or below it (every name
 * is under the empty prefix). */
int names_under(const char *name, const char *prefix);

/* Storage names collected by a listing. */
struct names_list {
    char (*names)[STORAGE_NAME_MAX];
    uint64_t *sizes;
    size_t n, cap;
};
int names_list(pqv_storage *s, const char *prefix, struct names_list *l);
int names_list_add(struct names_list *l, const char *name);
void names_list_free(struct names_list *l);

/* names_sharded(out, kind, id, idlen): "kind/xx/<hex id>", xx the first two
 * hex digits (sharding, as git does); the inverse of names_classify. */
void names_sharded(char out[STORAGE_NAME_MAX], const char *kind, const uint8_t *id, size_t idlen);

/* What a storage name is. */
enum { NAME_VALID = 0, NAME_TEMPORARY = 1, NAME_MALFORMED = 2 };
/* names_classify(name, kind, id, idlen): a leftover temporary, a valid
 * "kind/xx/<hex>" (its id decoded into ${id}), or something else. */
int names_classify(const char *name, const char *kind, uint8_t *id, size_t idlen);

/* Where a walk over storage names reports the names that are not valid. */
struct names_walk {
    pqv_report_fn report;
    void *report_ctx;
    uint64_t *damaged;               /* malformed names counted (NULL: an error) */
    uint64_t *temporaries;           /* leftover temporaries counted */
    struct names_list *leftovers;    /* and collected, for gc (may be NULL) */
    const char *writer_running;      /* another writer runs (its holder), or NULL/"" */
    uint64_t *in_flight;             /* its temporaries counted here instead */
};
typedef int (*names_fn)(void *ctx, const char *name, const uint8_t *id, uint64_t size);
/* names_walk(s, prefix, idlen, w, fn, ctx): list ${prefix} and classify
 * each name: valid ones ("prefix/xx/<2*idlen hex>"; with ${idlen} 0 any
 * name but a temporary) go to ${fn}; temporaries and malformed names are
 * reported through ${w} (${w} NULL: temporaries are skipped, a malformed
 * name fails with PQV_E_INTEGRITY). */
int names_walk(pqv_storage *s, const char *prefix, size_t idlen, const struct names_walk *w,
    names_fn fn, void *ctx);

#endif
