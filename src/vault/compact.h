/*
 * vault/compact.h: folding the chain into a base segment (compact.c).
 */
#ifndef PQV_VAULT_COMPACT_H
#define PQV_VAULT_COMPACT_H

#include <stdint.h>

#include "pqvault/vault.h"

struct state;

/* Deltas after which a writing command compacts the chain into a base. */
#define COMPACT_AFTER 64
/* compact(v, st, used, report, ctx, epoch): the loaded state ${st} as a
 * base segment of the next epoch (file keys under a new command key; the
 * chain values of every earlier epoch as its history; the snapshots kept;
 * format 3: the chunk records of ${st}'s index whose identities ${used}
 * holds, or all of them if NULL); *${epoch} its epoch. */
struct chunk_index;
int compact(pqv_vault *v, struct state *st, const struct chunk_index *used, pqv_report_fn report,
    void *ctx, uint64_t *epoch);
/* compact_if_long(v, report, ctx): after a commit, compact when the chain
 * holds more than COMPACT_AFTER deltas, then delete the segments before the
 * new base; a failure is reported, not returned (the commit stands). */
int compact_if_long(pqv_vault *v, pqv_report_fn report, void *ctx);
/* compact_drop_old_segments(v, base, kept): delete segments older than
 * ${base} that no snapshot of ${kept} needs (best effort: leftovers
 * otherwise, which check reports and gc removes). */
struct snapshots;
void compact_drop_old_segments(pqv_vault *v, uint64_t base, const struct snapshots *kept);

#endif
