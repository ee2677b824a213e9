/*
 * vault/chunker_vaes.h: the chunker's AES-128 with VAES (chunker_vaes.c),
 * beside the portable OpenSSL path in chunker.c.  Call only when
 * cpu_has_vaes().
 */
#ifndef PQV_VAULT_CHUNKER_VAES_H
#define PQV_VAULT_CHUNKER_VAES_H

#include <stddef.h>
#include <stdint.h>

#define CHUNKER_VAES_KEYS_BYTES (11 * 16)

/* chunker_vaes_expand(key, round_keys): AES-128's eleven round keys. */
void chunker_vaes_expand(const uint8_t key[16], uint8_t round_keys[CHUNKER_VAES_KEYS_BYTES]);

/* chunker_vaes_encrypt(round_keys, in, out, nblocks): AES-128 of each of
 * the ${nblocks} 16-byte blocks at ${in} (ECB), into ${out}. */
void chunker_vaes_encrypt(const uint8_t round_keys[CHUNKER_VAES_KEYS_BYTES], const uint8_t *in,
    uint8_t *out, size_t nblocks);

#endif
