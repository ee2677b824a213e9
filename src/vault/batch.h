/*
 * vault/batch.h: inbox batches (batch.c, docs/FORMAT.md section 18), shared
 * by the write-only writer (inbox.c), the importer (import.c) and the
 * listing: the batch file's codec and its packs' verification.
 */
#ifndef PQV_VAULT_BATCH_H
#define PQV_VAULT_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "util/buf.h"
#include "vault/config.h"
#include "vault/entry.h"
#include "vault/inbox.h"
#include "vault/names.h"
#include "vault/writers.h"

#define BATCH_MAGIC "PQVB"
#define BATCH_VERSION 1                 /* made with the bare recipient */
#define BATCH_VERSION_WRITER 2          /* a writer's: its name, roots, a MAC */
#define BATCH_MAC_BYTES 32
#define BATCH_FIXED_BYTES (4 + 1 + 3 + VAULT_ID_BYTES + BATCH_ID_BYTES + 4)
/* Read no larger batch file (a body of about a million entries) and no
 * larger inbox pack (4 MiB of extents, or one extent, and the header):
 * bounds fixed before anything is authenticated, then the sizes the body
 * gives are checked against them. */
#define MAX_BATCH_BYTES (256u << 20)
#define MAX_INBOX_PACK (16u << 20)
/* Every imported entry's origin starts "inbox:<B hex>:". */
#define ORIGIN_PREFIX "inbox:"
#define ORIGIN_MAX 4096

/* A batch opened and parsed. */
struct batch {
    uint8_t id[BATCH_ID_BYTES];
    char hex[2 * BATCH_ID_BYTES + 1];
    int version;                 /* BATCH_VERSION or BATCH_VERSION_WRITER */
    char writer[WRITER_NAME_MAX + 1];   /* "" for the bare recipient's */
    uint64_t generation;
    char **roots;                /* a writer's operands' stored names */
    size_t nroots;
    int64_t time;
    uint32_t time_nsec;          /* version 2 */
    struct seg_pack *packs;
    size_t npacks;
    struct entry *entries;
    size_t n;
};

/* What a writer's batch carries of it (batch_seal). */
struct batch_writer {
    const char *name;
    uint64_t generation;
    const uint8_t *key;          /* its MAC key */
    char *const *roots;
    size_t nroots;
};

void batch_free(struct batch *b);
/* batch_pack_name(bhex, id, out): "inbox/<bhex>/<pack hex>". */
void batch_pack_name(const char *bhex, const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX]);
/* batch_wrap_context(vault_id, b, out): the wrap context of K_b,
 * "pqvault/v2/inbox" || vault id || B; its length. */
size_t batch_wrap_context(const uint8_t vault_id[VAULT_ID_BYTES], const uint8_t b[BATCH_ID_BYTES],
    uint8_t *out);
/* batch_seal(v, id, kb, wrap, wraplen, entries, n, packs, npacks, blob):
 * the batch file of batch ${id}: its header (with ${wrap}, K_b wrapped to
 * the vault's identity) and its body, sealed under K_b's body key: the
 * string and pack tables, then the entries with their file keys in clear.
 * Every pack an entry names must be among ${packs}. */
int batch_seal(const pqv_vault *v, const uint8_t id[BATCH_ID_BYTES], const uint8_t kb[32],
    const uint8_t *wrap, size_t wraplen, struct entry *const *entries, size_t n,
    const struct seg_pack *packs, size_t npacks, const struct batch_writer *w, struct buf *blob);
/* batch_parse_body(b, p, len): the body plaintext into ${b} (its hex set). */
int batch_parse_body(struct batch *b, const uint8_t *p, size_t len);
/* batch_open(v, hex, blob, len, reg, b): batch file ${hex} verified and
 * parsed (unlocked ${v}): a writer's (version 2) first by its MAC under
 * the key of the writer ${reg} registers at the generation it names (an
 * unknown or revoked writer, or another generation: PQV_E_AUTH, nothing
 * decapsulated), then its header, wrap and body; the bare recipient's
 * (version 1) by its wrap and body alone (authenticated by nobody: b->writer
 * is ""). */
struct registry;
int batch_open(pqv_vault *v, const char *hex, const uint8_t *blob, size_t len,
    const struct registry *reg, struct batch *b);
/* batch_packs(v, b, copy): every pack of ${b} present in inbox/ with its
 * size and SHA-256, a few at a time on the pool; with ${copy}, each then
 * copied into packs/ (a pack already there must be the same bytes). */
int batch_packs(pqv_vault *v, const struct batch *b, int copy);

/* batch_quarantine(prefix, e): ${e} of a bare recipient's batch as it is
 * quarantined: below ${prefix}, stripped of what only a trusted writer may
 * set (set-id and sticky bits, owners: the importer's, attributes outside
 * user.). */
int batch_quarantine(const char *prefix, struct entry *e);
/* batch_parse(hex, p, len, n): the body parser alone; *${n} its entries.
 * For the fuzzers and unit tests. */
int batch_parse(const char *hex, const uint8_t *p, size_t len, size_t *n);

#endif
