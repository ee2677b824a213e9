/*
 * kdf.h: key derivation and hashing helpers over OpenSSL: HKDF-SHA-256
 * (RFC 5869), HMAC-SHA-256 and SHA3-256 of several concatenated parts.
 */
#ifndef PQV_KDF_H
#define PQV_KDF_H

#include <stddef.h>
#include <stdint.h>

/* kdf_hkdf_sha256(out, outlen, ikm, ikmlen, salt, saltlen, info, infolen):
 * HKDF-Extract-and-Expand with SHA-256.  0 or PQV_E_CRYPTO. */
int kdf_hkdf_sha256(uint8_t *out, size_t outlen, const uint8_t *ikm,
    size_t ikmlen, const uint8_t *salt, size_t saltlen, const uint8_t *info,
    size_t infolen);

/* kdf_hkdf_expand_sha256(out, outlen, prk, info, infolen): HKDF-Expand only,
 * from a 32-byte pseudorandom key ${prk}.  0 or PQV_E_CRYPTO. */
int kdf_hkdf_expand_sha256(uint8_t *out, size_t outlen, const uint8_t prk[32],
    const uint8_t *info, size_t infolen);

/* kdf_hmac_sha256(out, key, keylen, msg, msglen): HMAC-SHA-256. */
int kdf_hmac_sha256(uint8_t out[32], const uint8_t *key, size_t keylen,
    const uint8_t *msg, size_t msglen);

/* A part of a hashed message. */
struct kdf_part {
    const void *data;
    size_t len;
};

/* kdf_sha3_256(out, parts, nparts): SHA3-256 of the concatenated parts. */
int kdf_sha3_256(uint8_t out[32], const struct kdf_part *parts, size_t nparts);

/* kdf_sha256(out, data, len): SHA-256. */
int kdf_sha256(uint8_t out[32], const void *data, size_t len);

#endif
