/*
 * vault/pack.h: packs and the sealed extents in them (pack.c, docs/FORMAT.md
 * section 14).
 */
#ifndef PQV_VAULT_PACK_H
#define PQV_VAULT_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "vault/entry.h"
#include "vault/names.h"

#define PACK_HEADER_BYTES 8
void pack_name(const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX]);
void pack_header(uint8_t header[PACK_HEADER_BYTES]);
/* Room for a compressed extent, and for any sealed extent. */
size_t pack_scratch_size(void);
size_t pack_sealed_max(void);
/* pack_seal_extent(suite, file_key, index, x, plain, compress, scratch,
 * out): seal x->plain_len bytes at ${plain} as extent ${index} (compressed
 * if ${compress} and it pays; x->flags and x->stored_len set) into ${out}
 * (pack_sealed_max bytes); ${scratch} holds pack_scratch_size bytes. */
int pack_seal_extent(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES], uint32_t index,
    struct extent *x, const uint8_t *plain, int compress, uint8_t *scratch, uint8_t *out);
/* pack_open_extent(...): verify and open a sealed extent into ${plain}. */
int pack_open_extent(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES], uint32_t index,
    const struct extent *x, const uint8_t *sealed, uint8_t *plain, uint8_t *scratch);
/* pack_read_extent(v, suite, file_key, index, x, plain, sealed, scratch):
 * read extent ${index} (from its pack, or its format-1 object) and open it. */
int pack_read_extent(pqv_vault *v, int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    uint32_t index, const struct extent *x, uint8_t *plain, uint8_t *sealed, uint8_t *scratch);

/* pack_extent_place(x, sname, off): 1 and where ${x}'s stored bytes are
 * read from (pack ${sname}, at ${off}) if they are a range of a pack; 0
 * for an object of format 1 or a chunk with no known place. */
int pack_extent_place(const struct extent *x, char sname[STORAGE_NAME_MAX], uint64_t *off);
/* pack_chunk_run(xs, n): how many of the ${n} extents at ${xs} (at least
 * one, if ${n} is) pack_read_run reads together: chunks of format 3 stored
 * one after the other in one pack, at most PQV_OBJECT_MAX_PLAIN bytes of
 * plaintext and pack_sealed_max() stored. */
uint32_t pack_chunk_run(const struct extent *xs, uint32_t n);
/* pack_read_run(v, suite, file_key, index, xs, count, plain, sealed,
 * scratch): extents [index, index + count) of a file (${xs}: the first of
 * them; count as pack_chunk_run gave, or 1) read in one ranged read and
 * opened one after the other into ${plain}, each verified as
 * pack_read_extent does (a remote storage answers one request, not one
 * per chunk); buffers as pack_read_extent's. */
int pack_read_run(pqv_vault *v, int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    uint32_t index, const struct extent *xs, uint32_t count, uint8_t *plain, uint8_t *sealed,
    uint8_t *scratch);

/* pack_read_chunk_segments(v, index, x, first, count, plain, sealed, got):
 * STREAM segments [first, first + count) of chunk ${index}'s blob (x->chunk,
 * uncompressed; clipped to its end) read from its pack and opened into
 * ${plain} (*${got} bytes); ${sealed} holds count * PQV_STREAM_SEGMENT_SEALED
 * bytes. */
int pack_read_chunk_segments(pqv_vault *v, uint32_t index, const struct extent *x, uint64_t first,
    uint32_t count, uint8_t *plain, uint8_t *sealed, size_t *got);

#endif
