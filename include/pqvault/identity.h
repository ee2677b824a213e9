/*
 * pqvault/identity.h: the hybrid identity (X25519 + FrodoKEM) derived from
 * a 32-byte seed, and the wrapping of 32-byte file keys to it.
 *
 * Wrap: an ephemeral X25519 exchange with the identity's X25519 key and a
 * FrodoKEM encapsulation to its FrodoKEM key; the wrapping key is
 *   SHA3-256("pqvault/v1/hybrid-wrap" || kem id || ss_frodo || ss_x25519 ||
 *            ephemeral X25519 key || SHA3-256(FrodoKEM ciphertext) ||
 *            SHA3-256(public identity encoding))
 * so it stays secret while either shared secret does, and binds both
 * ciphertexts and both recipient keys.  The file key is sealed under it with
 * ChaCha20-Poly1305 (constant time on every CPU), nonce 0 (the key is used
 * once), with the blob header and the caller's context as associated data.
 */
#ifndef PQVAULT_IDENTITY_H
#define PQVAULT_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/common.h"
#include "pqvault/frodo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PQV_SEED_BYTES 32
#define PQV_FILE_KEY_BYTES 32
#define PQV_X25519_BYTES 32
/* "pqv1-" + 5 groups of 8 hex digits separated by '-', plus NUL. */
#define PQV_FINGERPRINT_CHARS (5 + 5 * 8 + 4 + 1)

typedef struct pqv_identity pqv_identity;

/* pqv_identity_derive(out, kem, seed): derive the full identity (secret and
 * public keys, catalogue key root) from ${seed} for parameter set ${kem}.
 * Deterministic: the same seed always gives the same identity. */
PQV_API int pqv_identity_derive(pqv_identity **out, const pqv_frodo *kem,
    const uint8_t seed[PQV_SEED_BYTES]) PQV_WARN_UNUSED;

/* pqv_identity_from_public(out, pub, len): an identity that holds only the
 * public encoding ${pub} (a recipient): it wraps, fingerprints and hashes;
 * it unwraps and derives nothing (PQV_E_INVAL).  PQV_E_INTEGRITY for an
 * encoding of another version, an unknown KEM or the wrong length. */
PQV_API int pqv_identity_from_public(pqv_identity **out, const uint8_t *pub, size_t len)
    PQV_WARN_UNUSED;

/* pqv_identity_has_secret(id): 1 for a derived identity, 0 for a public one. */
PQV_API int pqv_identity_has_secret(const pqv_identity *id);

/* pqv_identity_free(id): wipe and free; NULL is a no-op. */
PQV_API void pqv_identity_free(pqv_identity *id);

/* pqv_identity_kem(id): the FrodoKEM parameter set of ${id}. */
PQV_API const pqv_frodo *pqv_identity_kem(const pqv_identity *id);

/* Public identity encoding: version (1) || kem id (1) || X25519 public key
 * (32) || FrodoKEM public key. */
PQV_API size_t pqv_identity_public_bytes(const pqv_frodo *kem);
PQV_API const uint8_t *pqv_identity_public(const pqv_identity *id);

/* pqv_identity_fingerprint(id, out): printable fingerprint of the public
 * identity: "pqv1-" and the first 20 bytes of SHA3-256(public encoding) as
 * five dash-separated groups of 8 hex digits. */
PQV_API void pqv_identity_fingerprint(const pqv_identity *id,
    char out[PQV_FINGERPRINT_CHARS]);

/* pqv_fingerprint_from_hash(hash, out): the fingerprint of the public
 * identity whose SHA3-256 is ${hash}. */
PQV_API void pqv_fingerprint_from_hash(const uint8_t hash[32], char out[PQV_FINGERPRINT_CHARS]);

/* pqv_identity_public_hash(id): SHA3-256 of the public encoding. */
PQV_API const uint8_t *pqv_identity_public_hash(const pqv_identity *id);

/* pqv_identity_derive_key(id, label, out): a 32-byte symmetric key for
 * ${label} (e.g. "catalogue/names"), derived from the seed by HKDF. */
PQV_API int pqv_identity_derive_key(const pqv_identity *id, const char *label,
    uint8_t out[32]) PQV_WARN_UNUSED;

/* pqv_wrap_bytes(kem): size of a wrapped file key for ${kem}. */
PQV_API size_t pqv_wrap_bytes(const pqv_frodo *kem);

/* pqv_wrap(id, file_key, ctx, ctxlen, out): wrap ${file_key} to ${id},
 * bound to the context ${ctx}; writes pqv_wrap_bytes() bytes. */
PQV_API int pqv_wrap(const pqv_identity *id, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    const uint8_t *ctx, size_t ctxlen, uint8_t *out) PQV_WARN_UNUSED;

/* pqv_wrap_derand(...): pqv_wrap with explicit randomness ${coins}: 32 bytes
 * of X25519 ephemeral secret then the FrodoKEM encapsulation coins. */
PQV_API int pqv_wrap_derand(const pqv_identity *id,
    const uint8_t file_key[PQV_FILE_KEY_BYTES], const uint8_t *ctx,
    size_t ctxlen, const uint8_t *coins, uint8_t *out) PQV_WARN_UNUSED;

/* pqv_unwrap(id, wrapped, len, ctx, ctxlen, file_key): recover the file key.
 * PQV_E_INTEGRITY if the blob is malformed, modified, bound to another
 * context or wrapped to another identity. */
PQV_API int pqv_unwrap(const pqv_identity *id, const uint8_t *wrapped, size_t len,
    const uint8_t *ctx, size_t ctxlen,
    uint8_t file_key[PQV_FILE_KEY_BYTES]) PQV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
