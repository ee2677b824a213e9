/*
 * vault/check_internal.h: what check.c (the structural pass, gc) and
 * check_data.c (--read-data) share: the packs and objects the kept states
 * refer to, and the scan that found them.
 */
#ifndef PQV_VAULT_CHECK_INTERNAL_H
#define PQV_VAULT_CHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "vault/chunks.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

/* One pack or format-1 object an entry refers to, with the reach of the
 * furthest extent in it and what a segment recorded of it. */
struct ref {
    uint8_t id[PACK_ID_BYTES];
    int v1;                     /* a format-1 object */
    uint64_t reach;             /* bytes its extents need (v1: its exact size) */
    size_t entry;               /* the first entry that refers to it */
    int described;              /* size and hash known */
    uint64_t size;
    uint8_t hash[32];
    int seen;
    int bad;                    /* reported by the structural pass */
};

struct scan {
    pqv_vault *v;
    struct state st;
    struct snapshots kept;       /* the snapshots the chain keeps */
    struct ref *refs;
    size_t nrefs, caprefs;
    char **names;                /* the names refs[].entry are indices of */
    size_t nnames, capnames;
    struct chunk_index used;     /* format 3: every chunk a kept state uses */
    struct names_walk w;
    struct pqv_check_result *res;
    struct names_list *leftovers;   /* gc */
    char writer[PQV_LOCK_HOLDER_MAX];
};

/* check_compare_refs(a, b): refs in the order of sc->refs (util_search). */
int check_compare_refs(const void *a, const void *b);

/* check_data_read(sc): --read-data over what the structural pass found:
 * every described pack read whole, its SHA-256 and (format 3) its own
 * table against the chain's records; every chunk a kept state uses opened
 * (authenticated, decompressed, its identity recomputed); every extent of
 * format 2 opened.  Damage is reported and counted in sc->res. */
int check_data_read(struct scan *sc);

#endif
