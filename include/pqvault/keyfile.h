/*
 * pqvault/keyfile.h: the key file: the public identity and exactly two
 * passphrase slots, each sealing the identity seed under a key derived from
 * a passphrase with Argon2id.  An unused slot holds random bytes of the same
 * shape, so which slots are in use is not visible.  Byte layout in
 * docs/FORMAT.md.
 */
#ifndef PQVAULT_KEYFILE_H
#define PQVAULT_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/common.h"
#include "pqvault/identity.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PQV_KEYFILE_SLOTS 2
#define PQV_KEYFILE_VERSION 1

/* Argon2id cost of a slot. */
struct pqv_kdf_params {
    uint32_t t_cost;  /* passes */
    uint32_t m_kib;   /* memory in KiB */
    uint32_t lanes;   /* parallelism */
};

/* RFC 9106's second recommended option: t=3, m=64 MiB, p=4. */
PQV_API extern const struct pqv_kdf_params pqv_kdf_default;

/*
 * What a reader computes.  A slot's Argon2id cost is chosen by whoever
 * wrote the key file, and it is paid before anything is authenticated: a
 * forged key file could otherwise make every unlock allocate and compute
 * as much as the format allows (2 x 4 GiB, 64 passes).  A reader computes
 * no slot above its limit; the default accepts 16 times the default cost
 * in memory and 5 times in passes.  A legitimate slot above it (set with
 * passwd --kdf) is opened by raising the limit.
 */
struct pqv_kdf_limit {
    uint32_t m_kib;   /* memory of one slot, KiB */
    uint32_t t_cost;  /* passes of one slot */
};
#define PQV_KDF_LIMIT_MKIB (1024u * 1024) /* 1 GiB */
#define PQV_KDF_LIMIT_T 16u

/* { PQV_KDF_LIMIT_MKIB, PQV_KDF_LIMIT_T } */
PQV_API extern const struct pqv_kdf_limit pqv_kdf_limit_default;

/* pqv_kdf_within_limit(p, limit): whether the cost ${p} is within
 * ${limit} (NULL: pqv_kdf_limit_default). */
PQV_API int pqv_kdf_within_limit(const struct pqv_kdf_params *p,
    const struct pqv_kdf_limit *limit);

/* No key file is larger: readers refuse more before parsing. */
#define PQV_KEYFILE_MAX_BYTES (1u << 20)

typedef struct pqv_keyfile pqv_keyfile;

/* pqv_keyfile_create(out, id, seed, pass, passlen, params): a key file for
 * identity ${id} (derived from ${seed}) with slot 0 sealed under ${pass}
 * and slot 1 unused (random).  ${params} NULL means pqv_kdf_default. */
PQV_API int pqv_keyfile_create(pqv_keyfile **out, const pqv_identity *id,
    const uint8_t seed[PQV_SEED_BYTES], const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *params) PQV_WARN_UNUSED;

/* pqv_keyfile_parse(out, buf, len): parse and check the structure of a
 * serialised key file (magic, version, KEM, lengths, slot parameters within
 * limits, checksum).  PQV_E_INTEGRITY / PQV_E_UNSUPPORTED with a detail. */
PQV_API int pqv_keyfile_parse(pqv_keyfile **out, const uint8_t *buf, size_t len) PQV_WARN_UNUSED;

/* pqv_keyfile_serialize(kf, buf, len): a malloc'd serialisation of ${kf}. */
PQV_API int pqv_keyfile_serialize(const pqv_keyfile *kf, uint8_t **buf, size_t *len) PQV_WARN_UNUSED;

/* pqv_keyfile_load(path, out) / pqv_keyfile_save(path, kf): read a key file;
 * write one atomically and durably (temporary file, fsync, rename, fsync of
 * the directory).  Load returns PQV_E_NOTFOUND if ${path} does not exist. */
PQV_API int pqv_keyfile_load(const char *path, pqv_keyfile **out) PQV_WARN_UNUSED;
PQV_API int pqv_keyfile_save(const char *path, const pqv_keyfile *kf) PQV_WARN_UNUSED;

/*
 * pqv_keyfile_unlock_limited(kf, pass, passlen, limit, seed, id, slot):
 * compute every slot whose cost is within ${limit} (NULL:
 * pqv_kdf_limit_default), accept whichever opens, re-derive the identity
 * from the seed and check it against the key file's public part.  The
 * slots computed run at once while their memory together stays within
 * limit->m_kib, else one after the other, so that one unlock never holds
 * more than the limit.  On success ${seed} holds the seed, *${id} the
 * identity and *${slot} (if not NULL) the slot that opened.  PQV_E_AUTH
 * for a wrong passphrase; PQV_E_LIMIT (before any Argon2id work if no slot
 * is within it) if no slot opened and some slot was not computed because
 * of ${limit}: the reason names the slot, its cost and the limit;
 * PQV_E_INTEGRITY if the public part does not match the seed.
 */
PQV_API int pqv_keyfile_unlock_limited(const pqv_keyfile *kf, const uint8_t *pass,
    size_t passlen, const struct pqv_kdf_limit *limit, uint8_t seed[PQV_SEED_BYTES],
    pqv_identity **id, int *slot) PQV_WARN_UNUSED;

/* pqv_keyfile_unlock(kf, pass, passlen, seed, id, slot):
 * pqv_keyfile_unlock_limited with the default limit. */
PQV_API int pqv_keyfile_unlock(const pqv_keyfile *kf, const uint8_t *pass, size_t passlen,
    uint8_t seed[PQV_SEED_BYTES], pqv_identity **id, int *slot) PQV_WARN_UNUSED;

/* pqv_keyfile_set_slot(kf, slot, seed, pass, passlen, params): seal ${seed}
 * into ${slot} under ${pass} with a fresh salt; the other slot is untouched. */
PQV_API int pqv_keyfile_set_slot(pqv_keyfile *kf, int slot, const uint8_t seed[PQV_SEED_BYTES],
    const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *params) PQV_WARN_UNUSED;

/* pqv_keyfile_clear_slot(kf, slot): replace ${slot} with random bytes. */
PQV_API int pqv_keyfile_clear_slot(pqv_keyfile *kf, int slot) PQV_WARN_UNUSED;

/* pqv_keyfile_kem(kf): the FrodoKEM parameter set named by the key file. */
PQV_API const pqv_frodo *pqv_keyfile_kem(const pqv_keyfile *kf);

/* pqv_keyfile_public(kf, len): the public identity encoding. */
PQV_API const uint8_t *pqv_keyfile_public(const pqv_keyfile *kf, size_t *len);

/* pqv_keyfile_slot_params(kf, slot): the Argon2id cost recorded in ${slot}. */
PQV_API struct pqv_kdf_params pqv_keyfile_slot_params(const pqv_keyfile *kf, int slot);

PQV_API void pqv_keyfile_free(pqv_keyfile *kf);

#ifdef __cplusplus
}
#endif
#endif
