/*
 * pqvault/frodo.h: FrodoKEM, the standard salted (key-reuse safe) variant of
 * the FrodoKEM ISO standardisation proposal, all six parameter sets:
 * FrodoKEM-640-AES, -640-SHAKE, -976-AES, -976-SHAKE, -1344-AES, -1344-SHAKE.
 *
 * The key generation, encapsulation and decapsulation functions return 0
 * on success, PQV_E_INVAL for a NULL parameter set or buffer, PQV_E_NOMEM
 * when the work area cannot be allocated, and PQV_E_CRYPTO when the system
 * random generator or OpenSSL's AES/SHAKE fails (the outputs are wiped).
 * Decapsulation never fails on a well-sized ciphertext: an invalid one
 * yields the implicit-rejection secret.
 * Decapsulation runs in constant time (no secret-dependent branch or index).
 */
#ifndef PQVAULT_FRODO_H
#define PQVAULT_FRODO_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pqv_frodo pqv_frodo;

/* pqv_frodo_find(name): the parameter set called ${name}, or NULL. */
PQV_API const pqv_frodo *pqv_frodo_find(const char *name);

/* pqv_frodo_name(p): the canonical name of ${p} ("FrodoKEM-976-AES"). */
PQV_API const char *pqv_frodo_name(const pqv_frodo *p);

/* pqv_frodo_id(p): the stable one-byte identifier of ${p} used in files
 * (1..6: 640-AES, 640-SHAKE, 976-AES, 976-SHAKE, 1344-AES, 1344-SHAKE). */
PQV_API uint8_t pqv_frodo_id(const pqv_frodo *p);

/* pqv_frodo_by_id(id): the parameter set with identifier ${id}, or NULL. */
PQV_API const pqv_frodo *pqv_frodo_by_id(uint8_t id);

PQV_API size_t pqv_frodo_publickey_bytes(const pqv_frodo *p);
PQV_API size_t pqv_frodo_secretkey_bytes(const pqv_frodo *p);
PQV_API size_t pqv_frodo_ciphertext_bytes(const pqv_frodo *p);
PQV_API size_t pqv_frodo_sharedsecret_bytes(const pqv_frodo *p);
PQV_API size_t pqv_frodo_keypair_coins_bytes(const pqv_frodo *p); /* len_s + len_seedSE + len_z */
PQV_API size_t pqv_frodo_encaps_coins_bytes(const pqv_frodo *p);  /* len_u + len_salt */

/* Deterministic key generation from ${coins} = s || seedSE || z. */
PQV_API int pqv_frodo_keypair_derand(const pqv_frodo *p, uint8_t *pk, uint8_t *sk,
    const uint8_t *coins);

/* Deterministic encapsulation to ${pk} from ${coins} = u || salt. */
PQV_API int pqv_frodo_encaps_derand(const pqv_frodo *p, uint8_t *ct, uint8_t *ss,
    const uint8_t *pk, const uint8_t *coins);

/* Decapsulation of ${ct} with ${sk}; constant time. */
PQV_API int pqv_frodo_decaps(const pqv_frodo *p, uint8_t *ss, const uint8_t *ct,
    const uint8_t *sk);

/* Randomised key generation and encapsulation (system CSPRNG). */
PQV_API int pqv_frodo_keypair(const pqv_frodo *p, uint8_t *pk, uint8_t *sk);
PQV_API int pqv_frodo_encaps(const pqv_frodo *p, uint8_t *ct, uint8_t *ss,
    const uint8_t *pk);

#ifdef __cplusplus
}
#endif
#endif
