/*
 * vault/pack3.h: packs of format 3 (pack3.c, docs/FORMAT.md section 22):
 * chunk blobs back to back, then the pack's own table of them, sealed, and
 * a sealed locator at the end; the whole padded to a Padmé size, so that
 * the storage sees one length per pack and nothing of the chunks in it.
 * The table lets a later command adopt the chunks of a pack no segment
 * names (an interrupted add resumes from what reached a durable pack) and
 * check --repair-index recover lost chunk records.
 */
#ifndef PQV_VAULT_PACK3_H
#define PQV_VAULT_PACK3_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "util/buf.h"
#include "vault/chunks.h"

#define PACK3_VERSION 3
/* A pack is closed once its blobs reach this (one blob aside). */
#define PACK3_TARGET (8u << 20)
#define PACK3_LOCATOR_BYTES 32
/* What a pack's buffer is given at first: the target, a largest blob, a
 * table of small chunks and the padding (more is rare: it then grows). */
#define PACK3_ROOM (PACK3_TARGET + (3u << 20))

/* pack3_padme(len): the Padmé length of ${len} bytes (at most 1/8 more). */
uint64_t pack3_padme(uint64_t len);
/* Full packs are padded to a multiple of this instead (FORMAT.md section
 * 22): their length says only that they are full, to within it. */
#define PACK3_FULL_ALIGN (64u << 10)
/* pack3_padded(len): what a pack of ${len} bytes before padding is padded
 * to: its Padmé length, or for a full pack (at least PACK3_TARGET) the
 * next multiple of PACK3_FULL_ALIGN; pack3_is_padded(len): ${len} is such
 * a length. */
uint64_t pack3_padded(uint64_t len);
int pack3_is_padded(uint64_t len);
/* pack3_begin(suite, out): a pack's 8-byte header into empty ${out}. */
void pack3_begin(int suite, struct buf *out);
/* pack3_finish(v, id, recs, n, out): the table of the ${n} blobs already
 * in ${out} (recs[i].pack_off from the end of the header), sealed, with
 * the padding and the locator: ${out} is then the whole pack. */
int pack3_finish(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], const struct chunk_rec *recs,
    size_t n, struct buf *out);
/* pack3_table(v, id, data, len, recs, n): the table of the whole pack
 * ${data} verified and parsed (malloc'd records); PQV_E_INTEGRITY if it
 * is not a format-3 pack of this vault named ${id}, or is damaged. */
int pack3_table(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], const uint8_t *data,
    size_t len, struct chunk_rec **recs, size_t *n);

/* pack3_read_table(v, id, size, recs, n): the same for pack ${id} of
 * ${size} bytes in the vault's storage, reading its table only (ranged
 * reads: the header, the locator, the table). */
int pack3_read_table(pqv_vault *v, const uint8_t id[PACK_ID_BYTES], uint64_t size,
    struct chunk_rec **recs, size_t *n);

#endif
