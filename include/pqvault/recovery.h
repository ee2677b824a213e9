/*
 * pqvault/recovery.h: the recovery code: the 32-byte identity seed in a
 * human-transcribable form.  35 bytes (seed || first 3 bytes of
 * SHA-256("pqvault/v1/recovery" || seed)) in Crockford base32: 56 characters
 * shown as 14 groups of 4 separated by '-'.  Decoding ignores case, dashes
 * and white space, and reads O as 0 and I, L as 1; the checksum catches a
 * typo with probability 1 - 2^-24.
 */
#ifndef PQVAULT_RECOVERY_H
#define PQVAULT_RECOVERY_H

#include <stdint.h>

#include "pqvault/common.h"
#include "pqvault/identity.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PQV_RECOVERY_SYMBOLS 56
#define PQV_RECOVERY_CHARS (PQV_RECOVERY_SYMBOLS + PQV_RECOVERY_SYMBOLS / 4 - 1 + 1)

/* pqv_recovery_encode(seed, out): the recovery code of ${seed}, NUL-ended. */
PQV_API int pqv_recovery_encode(const uint8_t seed[PQV_SEED_BYTES],
    char out[PQV_RECOVERY_CHARS]) PQV_WARN_UNUSED;

/* pqv_recovery_decode(code, seed): the seed of ${code}.  PQV_E_AUTH (with a
 * detail saying whether the length, a character or the checksum is wrong)
 * if ${code} is not a valid recovery code. */
PQV_API int pqv_recovery_decode(const char *code, uint8_t seed[PQV_SEED_BYTES]) PQV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
