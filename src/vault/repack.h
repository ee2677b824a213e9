/*
 * vault/repack.h: gc's rewriting of packs of format 3 that are mostly
 * unused (repack.c, docs/FORMAT.md section 25).
 */
#ifndef PQV_VAULT_REPACK_H
#define PQV_VAULT_REPACK_H

#include <stdint.h>

#include "pqvault/vault.h"
#include "vault/state.h"

/* A pack is rewritten when a pack of its live blobs alone (their table
 * and padding included) would be smaller by more than 1/REPACK_DEAD_PART
 * of its size (a fifth: FORMAT.md section 25 says why). */
#define REPACK_DEAD_PART 5

/* repack(v, st, used, report, ctx, packs): the live chunks (those ${used}
 * names: what any kept state uses) of every pack of format 3 that is
 * used less than it should be copied into new packs (their places from
 * ${st}'s index), one epoch recording their new places; *${packs} the packs
 * rewritten (they are leftovers from then on: gc deletes them).  Nothing
 * to do: 0, no epoch.  Requires the writer lock. */
struct chunk_index;
int repack(pqv_vault *v, struct state *st, const struct chunk_index *used, pqv_report_fn report,
    void *ctx, uint64_t *packs);

#endif
