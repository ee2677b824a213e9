/*
 * vault/inbox.h: write-only adds (inbox.c, docs/FORMAT.md section 18,
 * docs/DESIGN.md section 6).
 */
#ifndef PQV_VAULT_INBOX_H
#define PQV_VAULT_INBOX_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "vault/entry.h"
#include "vault/names.h"

#define INBOX_DIR "inbox"
#define BATCH_ID_BYTES 16
/* inbox_check(v, report, ctx, res): pending batches reported; unlocked,
 * each opened and its packs' sizes checked (damage counted in res). */
int inbox_check(pqv_vault *v, pqv_report_fn report, void *ctx, struct pqv_check_result *res);

/* What a name under inbox/ is: a batch's commit point, one of its packs, or
 * anything else (a temporary, junk). */
enum { IN_BATCH = 1, IN_PACK = 2, IN_OTHER = 3 };
/* inbox_classify(name, hex): what ${name} is; the batch id in ${hex}. */
int inbox_classify(const char *name, char hex[2 * BATCH_ID_BYTES + 1]);

#endif
