/*
 * vault/reserve.h: the room kept aside so that rm, forget and gc can run on
 * a full disk (reserve.c; docs/DESIGN.md, "A full disk").
 */
#ifndef PQV_VAULT_RESERVE_H
#define PQV_VAULT_RESERVE_H

#include <stdint.h>

#include "pqvault/vault.h"

/* What the reserve holds: room for rm's segment, forget's, and a
 * compaction's base of some 100,000 entries (gc, when the reserve has been
 * used, rewrites no pack). */
#define VAULT_RESERVE_BYTES (16u << 20)

/* reserve_ensure(v, report, ctx, loud): the reserve made if it is missing
 * or short and the storage has one (local).  Never a failure (a command
 * goes on without it): with ${loud}, a warning says why there is none
 * (the disk too full, something else at its name); else only what is not
 * a lack of space.  1 if it was made now, else 0. */
int reserve_ensure(pqv_vault *v, pqv_report_fn report, void *ctx, int loud);

/* reserve_short(v): 1 if the storage keeps a reserve and it is missing or
 * short (it was used: space is short), else 0. */
int reserve_short(pqv_vault *v);

/* reserve_release(v): the reserve removed, durably, so that a commit
 * that failed for lack of space may be tried once more; 1 if space was
 * freed, 0 if there was no reserve to release.  Only for commands that
 * free space (v->reserve_use: rm, forget, gc). */
int reserve_release(pqv_vault *v);

/* reserve_check(v, report, ctx): check's finding about the reserve: a
 * warning if something else is at its name; a note (PQV_REPORT_INFO) if it
 * is missing or short (used, or a vault made before there was one). */
void reserve_check(pqv_vault *v, pqv_report_fn report, void *ctx);

#endif
