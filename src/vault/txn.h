/*
 * vault/txn.h: one writing command of format 2, one epoch (txn.c,
 * docs/DESIGN.md section 3).
 */
#ifndef PQV_VAULT_TXN_H
#define PQV_VAULT_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "util/buf.h"
#include "vault/entry.h"
#include "vault/segment.h"
#include "vault/state.h"

struct txn {
    pqv_vault *v;
    struct state *st;            /* what it builds on */
    uint8_t cmd_key[32];         /* K_cmd, made with the first file key */
    uint8_t *wrap;
    size_t wraplen;
    struct entry **entries;      /* new entries (owned) */
    size_t n, cap;
    struct seg_pack *introduced; /* packs written */
    size_t nintroduced, capintro;
    struct buf pack;             /* the pack being filled */
    uint8_t pack_id[PACK_ID_BYTES];
    void *jobs;                  /* packs being written */
    size_t next_job;
    int rc;                      /* first failure of a pack write */
    const struct seg_pack *known;    /* a base: packs described before (not owned) */
    size_t nknown;
    uint64_t committed_epoch;
    uint8_t committed_chain[32];
};
int txn_begin(pqv_vault *v, struct state *st, struct txn *t);
/* txn_command_key(t): the command key K_cmd, made and wrapped once. */
int txn_command_key(struct txn *t);
/* txn_new_file_key(t, key): a fresh file key (and the command key). */
int txn_new_file_key(struct txn *t, uint8_t key[PQV_FILE_KEY_BYTES]);
/* txn_put_extent(t, sealed, x): append the sealed extent to the current
 * pack (x->pack_id and x->pack_off set); a full pack is written. */
int txn_put_extent(struct txn *t, const uint8_t *sealed, struct extent *x);
int txn_flush_pack(struct txn *t);
/* txn_introduce(t, sp): record ${sp} as a pack this command wrote (its
 * size and hash go into the segment). */
int txn_introduce(struct txn *t, const struct seg_pack *sp);
/* txn_add(t, e): a new entry (moved: ${e} is left empty). */
int txn_add(struct txn *t, struct entry *e);
/* txn_commit(t, kind, all, nall, history, nhistory): steps 2-4; a delta
 * holds the added entries, a base ${all} (every entry of the state) and
 * ${history}.  On failure before the commit point the packs are removed. */
int txn_commit(struct txn *t, int kind, struct entry *const *all, size_t nall,
    const struct seg_history *history, size_t nhistory);
/* txn_abort(t): remove the packs written (best effort). */
void txn_abort(struct txn *t);
void txn_free(struct txn *t);

#endif
