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
/* inbox_parse_body(hex, p, len, n) and inbox_open_batch(v, hex, blob, len,
 * n): the batch body's parser, and a whole batch verified and parsed
 * (unlocked ${v}); *${n} its entries.  For the fuzzers and unit tests. */
int inbox_parse_body(const char *hex, const uint8_t *p, size_t len, size_t *n);
int inbox_open_batch(pqv_vault *v, const char *hex, const uint8_t *blob, size_t len, size_t *n);

#endif
