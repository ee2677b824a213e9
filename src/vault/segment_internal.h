/*
 * vault/segment_internal.h: what segment.c (keys, opening) and
 * segment_build.c (building) share: the layout constants and the keys of
 * docs/FORMAT.md sections 11 and 12.
 */
#ifndef PQV_VAULT_SEGMENT_INTERNAL_H
#define PQV_VAULT_SEGMENT_INTERNAL_H

#include <stdint.h>

#include "pqvault/aead.h"
#include "vault/chunk.h"
#include "vault/vault_internal.h"

#define SEG_MAGIC "PQVS"
#define SEG_VERSION 2
#define SEG_VERSION_CHUNKS 3     /* format 3: chunk records, chunked files */
#define HEAD_VERSION 1
#define HEAD_VERSION_EXT 2       /* the same, then extensions */
#define HEAD_VERSION_CHUNKS 3    /* format 3: the chunk block index, then extensions */
#define BLOCK_TARGET 65536
/* Bytes of a segment's chunk record at least (id, four varints, flags). */
#define CHUNK_REC_MIN (CHUNK_ID_BYTES + 5)

/* segment_key(v, salt, epoch, key): K_seg(E). */
int segment_key(const pqv_vault *v, const uint8_t salt[32], uint64_t epoch, uint8_t key[32]);
/* segment_unit_nonce(unit, nonce): the nonce of unit ${unit} (0: the head). */
void segment_unit_nonce(uint64_t unit, uint8_t nonce[PQV_AEAD_NONCE_BYTES]);
/* segment_chain_next(prev, header_and_head, len, out): chain(E). */
int segment_chain_next(const uint8_t prev[32], const uint8_t *bytes, size_t len, uint8_t out[32]);

#endif
