/*
 * vault/localstate.h: what this machine last saw of a vault (localstate.c,
 * docs/FORMAT.md section 15): rollback and fork detection.
 */
#ifndef PQV_VAULT_LOCALSTATE_H
#define PQV_VAULT_LOCALSTATE_H

#include <stdint.h>

#include "pqvault/vault.h"

struct state;

/* What this machine last saw of a vault. */
struct localstate {
    int known;                   /* a state file was there (else first use) */
    int format;                  /* the vault's format as seen then (2 or more) */
    uint64_t epoch;
    uint8_t chain[32];
};
/* localstate_load(v, seen): read the last state this machine saw, BEFORE
 * the vault is listed: whatever it records was committed before the
 * listing began, so a listing that does not show it is a rollback, never a
 * writer that committed meanwhile.  PQV_E_INTEGRITY if the file is
 * damaged; ${seen}->known 0 without one (or without a state directory). */
int localstate_load(pqv_vault *v, struct localstate *seen);
/* localstate_check(v, seen, st, report, ctx): compare ${st} with ${seen}:
 * PQV_E_INTEGRITY for a rollback or a fork; a first contact is accepted
 * (and reported), and recorded; a newer epoch is recorded. */
int localstate_check(pqv_vault *v, const struct localstate *seen, const struct state *st,
    pqv_report_fn report, void *ctx);
/* localstate_record(v, epoch, chain, replace): remember ${epoch} (no-op
 * without a state directory).  Under a lock on the state file, and never
 * going back to an older epoch than the file holds (two commands of one
 * machine racing) unless ${replace} (accept). */
int localstate_record(pqv_vault *v, uint64_t epoch, const uint8_t chain[32], int replace);
/* localstate_forget(v): remove this vault's state file (a failed init's;
 * best effort). */
void localstate_forget(pqv_vault *v);

#endif
