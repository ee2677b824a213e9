/*
 * pqvault/argon2id.h: Argon2id (RFC 9106, version 0x13), with the lanes
 * computed in parallel threads and a vectorised kernel chosen at run time
 * (AVX-512 or AVX2 where available, portable C otherwise).
 */
#ifndef PQVAULT_ARGON2ID_H
#define PQVAULT_ARGON2ID_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits accepted by pqv_argon2id (also the limits a key file may ask for). */
#define PQV_ARGON2_MIN_MKIB 8u
#define PQV_ARGON2_MAX_MKIB (4u * 1024 * 1024) /* 4 GiB */
#define PQV_ARGON2_MAX_T 64u
#define PQV_ARGON2_MAX_LANES 64u

/*
 * pqv_argon2id(out, outlen, pwd, pwdlen, salt, saltlen, secret, secretlen,
 *     ad, adlen, t_cost, m_kib, lanes, threads):
 * Compute the ${outlen}-byte Argon2id tag of the password ${pwd} with salt
 * ${salt}, optional secret ${secret} and associated data ${ad}, ${t_cost}
 * passes over ${m_kib} KiB of memory in ${lanes} lanes, using up to
 * ${threads} threads (1 = compute in the calling thread).  The work area is
 * allocated and wiped internally.  Returns 0, PQV_E_INVAL for parameters
 * outside the limits above or RFC 9106 (or a NULL buffer with a non-zero
 * length), or PQV_E_NOMEM (the work area, or a thread barrier, could not be
 * created); the detail is in pqv_error_last().
 */
PQV_API int pqv_argon2id(uint8_t *out, size_t outlen, const uint8_t *pwd, size_t pwdlen,
    const uint8_t *salt, size_t saltlen, const uint8_t *secret, size_t secretlen,
    const uint8_t *ad, size_t adlen, uint32_t t_cost, uint32_t m_kib,
    uint32_t lanes, uint32_t threads);

/* pqv_argon2id_impl(): name of the kernel in use ("avx512", "avx2" or
 * "portable"). */
PQV_API const char *pqv_argon2id_impl(void);

#ifdef __cplusplus
}
#endif
#endif
