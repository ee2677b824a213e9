/*
 * vault/chunk.h: chunks of format 3 (chunk.c, docs/FORMAT.md section 22):
 * a chunk's identity (a keyed MAC of its plaintext) and its blob, the
 * stored form in a pack: compressed when it pays, sealed with STREAM under
 * a key of its own (from a seed key, a fresh random salt kept in the blob
 * and the chunk's identity).  A blob can be moved from pack to pack as it
 * is (repacking re-encrypts nothing).
 */
#ifndef PQV_VAULT_CHUNK_H
#define PQV_VAULT_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#define CHUNK_ID_BYTES 32
#define CHUNK_SALT_BYTES 16
/* Blob flags: bit 0 zstd; bits 1-2 the suite (1 AES-256-GCM, 2 ChaCha20-Poly1305). */
enum { BLOB_ZSTD = 1 };
#define BLOB_SUITE(flags) (((flags) >> 1) & 3)
#define BLOB_FLAGS_MASK 7
#define BLOB_FLAGS(zstd, suite) ((uint8_t)(((zstd) ? BLOB_ZSTD : 0) | ((suite) << 1)))

/* chunk_id(key, plain, len, id): HMAC-SHA-256(key("chunk/id"), plaintext). */
int chunk_id(const uint8_t key[32], const uint8_t *plain, size_t len, uint8_t id[CHUNK_ID_BYTES]);

/* chunk_blob_max(plain_len): the largest blob of a chunk of that length. */
size_t chunk_blob_max(size_t plain_len);
/* chunk_scratch_size(plain_len): what chunk_seal and chunk_open need as
 * scratch (a compressed copy). */
size_t chunk_scratch_size(size_t plain_len);

/* chunk_seal(suite, data_key, id, plain, len, compress, out, blob_len,
 * flags): the blob of a chunk: zstd-compressed if ${compress} and that
 * saves at least 1/64 (a fast probe first; into the calling thread's own
 * scratch, wiped after), a fresh salt, then STREAM under K = HKDF(data_key,
 * salt, "pqvault/v3/chunk" || id); ${out} holds chunk_blob_max(len) bytes. */
int chunk_seal(int suite, const uint8_t data_key[32], const uint8_t id[CHUNK_ID_BYTES],
    const uint8_t *plain, size_t len, int compress, uint8_t *out, size_t *blob_len,
    uint8_t *flags);

/* chunk_open(data_key, id, flags, blob, blob_len, plain, plain_len,
 * scratch): verify and open a blob into exactly ${plain_len} bytes;
 * PQV_E_INTEGRITY for anything else (a blob of another chunk among them). */
int chunk_open(const uint8_t data_key[32], const uint8_t id[CHUNK_ID_BYTES], uint8_t flags,
    const uint8_t *blob, size_t blob_len, uint8_t *plain, size_t plain_len, uint8_t *scratch);

/* chunk_open_segments(data_key, id, flags, salt, sealed, sealed_len, first,
 * plain_len, plain, got): STREAM segments ${first}, ... of an uncompressed
 * blob (docs/DESIGN.md "Mount": a random read opens the 64 KiB it
 * touches), given its salt and those segments apart, verified and opened
 * into ${plain} (*${got} bytes).  Each segment authenticates as that
 * segment of that chunk's blob of that length; PQV_E_INTEGRITY for a
 * compressed blob (it opens only whole) or any failure. */
int chunk_open_segments(const uint8_t data_key[32], const uint8_t id[CHUNK_ID_BYTES], uint8_t flags,
    const uint8_t salt[CHUNK_SALT_BYTES], const uint8_t *sealed, size_t sealed_len, uint64_t first,
    size_t plain_len, uint8_t *plain, size_t *got);

#endif
