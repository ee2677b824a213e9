/*
 * vault/snapshots.h: history (snapshots.c, docs/FORMAT.md section 26):
 * every epoch whose command changed names is a snapshot, with what the
 * command was (time, host, user, command, operands, counts).  The chain
 * says which snapshots are kept: a base carries the list of them, each
 * later delta adds itself or forgets some; a kept snapshot is restored
 * from its own generation's segments (its base up to it), which gc keeps
 * while the snapshot is kept.
 */
#ifndef PQV_VAULT_SNAPSHOTS_H
#define PQV_VAULT_SNAPSHOTS_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "vault/segment.h"
#include "vault/state.h"

enum { SNAP_PINNED = 1 };

/* A snapshot. */
struct snapshot {
    uint64_t epoch;
    uint64_t base;               /* the base of its generation (restored from base..epoch) */
    int64_t time;
    unsigned flags;              /* SNAP_* */
    char *host, *user, *command;
    char **operands;
    size_t noperands;
    uint64_t added, changed, removed, bytes_new;
};

struct snapshots {
    struct snapshot *s;          /* ascending epochs */
    size_t n;
};

/* snapshots_load(st, out): the kept snapshots of state ${st} (opened):
 * its base's list, then each delta's additions and forgettings.
 * PQV_E_INTEGRITY if malformed. */
int snapshots_load(const struct state *st, struct snapshots *out);
void snapshots_free(struct snapshots *s);
/* snapshots_find(s, epoch): the kept snapshot of ${epoch}, or NULL. */
const struct snapshot *snapshots_find(const struct snapshots *s, uint64_t epoch);

/* snapshots_ext_own(sn, ext): ${sn} as its segment's SEG_EXT_SNAPSHOT
 * (its epoch and base are the segment's). */
int snapshots_ext_own(const struct snapshot *sn, struct seg_ext *ext);
/* snapshots_ext_kept(s, ext): the list ${s} as a base's SEG_EXT_KEPT. */
int snapshots_ext_kept(const struct snapshots *s, struct seg_ext *ext);
/* snapshots_ext_forget(epochs, n, pins, npins, unpins, nunpins, ext): a
 * forget's SEG_EXT_FORGET. */
int snapshots_ext_forget(const uint64_t *forgotten, size_t n, const uint64_t *pins, size_t npins,
    const uint64_t *unpins, size_t nunpins, struct seg_ext *ext);
void snapshots_clear(struct snapshot *sn);

/* snapshots_info(v, command, operands, n, sn): a new snapshot's
 * description: this host and user, ${command} and its operands (no
 * secrets: names and paths), the counts left 0 for the command. */
int snapshots_info(const char *command, const char *const *operands, size_t n,
    struct snapshot *sn);

/* snapshots_needed(s, st, epoch): segment ${epoch} restores a kept
 * snapshot (lies between one's base and it) or belongs to the current
 * generation of ${st}. */
int snapshots_needed(const struct snapshots *s, const struct state *st, uint64_t epoch);

/* snapshots_state(v, cur, sn, st): the state of kept snapshot ${sn} of
 * the current state ${cur} (opened and verified): the segments of its
 * generation from its base up to it, each verified against the chain
 * values the current chain carries; its chunks placed by ${cur}'s
 * records, which *${cur} gives up (moved into ${st}).  Not loaded. */
int snapshots_state(pqv_vault *v, struct state *cur, const struct snapshot *sn, struct state *st);

/* snapshots_each_entry(v, cur, kept, w, fn, ctx): ${fn} on every entry
 * of every segment that the current state ${cur} (opened, its index
 * loaded) or a snapshot of ${kept} is made from (the current generation's,
 * and the old generations' that kept snapshots need), its chunks placed
 * by ${cur}'s index: what gc must keep.  With ${w} counting damage, a
 * damaged block is reported and skipped (the current chain's quietly:
 * loading it reported them). */
struct names_walk;
int snapshots_each_entry(pqv_vault *v, struct state *cur, const struct snapshots *kept,
    const struct names_walk *w, int (*fn)(void *ctx, const struct entry *e), void *ctx);

/* snapshots_expected_chain(cur, epoch, out): chain(${epoch}) as the
 * current chain records it (its own segments', or its base's history);
 * -1 if it records none. */
int snapshots_expected_chain(const struct state *cur, uint64_t epoch, uint8_t out[32]);

/* snapshots_resolve(s, spec, epoch): the kept snapshot ${spec} names: an
 * epoch ("123"), "latest", "latest~N", a date ("2026-11-30": the newest
 * snapshot of that day, local time) or a time ("2026-11-30T14:00",
 * "2026-11-30 14:00:05": the newest at or before it).  PQV_E_NOTFOUND
 * (said) if none; PQV_E_INVAL if ${spec} is malformed. */
int snapshots_resolve(const struct snapshots *s, const char *spec, uint64_t *epoch);

#endif
