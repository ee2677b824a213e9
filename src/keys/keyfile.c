/*
 * keyfile.c: the two-slot Argon2id key file (see pqvault/keyfile.h and
 * docs/FORMAT.md).
 *
 * Layout:
 *   header  = "PQVK" || version (1) || 3 zero bytes || public identity
 *   slot[2] = t (u32 BE) || m_kib (u32 BE) || lanes (u32 BE) || salt (32) ||
 *             ChaCha20-Poly1305(seed) (32 + 16)
 *   trailer = SHA-256(header || slots)
 * A slot's key is Argon2id(passphrase, salt, t, m, lanes) (32 bytes); its
 * nonce is zero (every sealing uses a fresh salt, hence a fresh key); its
 * associated data is header || slot index || slot parameters.  The trailer
 * tells accidental corruption (integrity error) apart from a wrong
 * passphrase; it is no defence against a deliberate forger, who is stopped
 * by the slot tags and by the check of the public part against the seed.
 */
#include "pqvault/keyfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "keys/keyfile_internal.h"
#include "pqvault/aead.h"
#include "pqvault/argon2id.h"
#include "util/durable.h"
#include "util/fsutil.h"
#include "util/util.h"

#define MAGIC "PQVK"
#define PREFIX_BYTES 8
#define SALT_BYTES 32
#define PARAMS_BYTES 12
#define SEALED_BYTES (PQV_SEED_BYTES + PQV_AEAD_TAG_BYTES)
#define SLOT_BYTES (PARAMS_BYTES + SALT_BYTES + SEALED_BYTES)
#define TRAILER_BYTES 32

const struct pqv_kdf_params pqv_kdf_default = { 3, 65536, 4 };
const struct pqv_kdf_limit pqv_kdf_limit_default = { PQV_KDF_LIMIT_MKIB, PQV_KDF_LIMIT_T };

struct pqv_keyfile {
    const pqv_frodo *kem;
    uint8_t *header;      /* prefix || public identity */
    size_t header_len;
    uint8_t slots[PQV_KEYFILE_SLOTS][SLOT_BYTES];
};

static const uint8_t zero_nonce[PQV_AEAD_NONCE_BYTES];

const pqv_frodo *
pqv_keyfile_kem(const pqv_keyfile *kf)
{
    return kf->kem;
}

const uint8_t *
pqv_keyfile_public(const pqv_keyfile *kf, size_t *len)
{
    if (len != NULL)
        *len = kf->header_len - PREFIX_BYTES;
    return kf->header + PREFIX_BYTES;
}

static struct pqv_kdf_params
slot_params(const uint8_t *slot)
{
    struct pqv_kdf_params p = {
        util_load_be32(slot), util_load_be32(slot + 4), util_load_be32(slot + 8)
    };
    return p;
}

struct pqv_kdf_params
pqv_keyfile_slot_params(const pqv_keyfile *kf, int slot)
{
    return slot_params(kf->slots[slot]);
}

/* params_valid(p): whether ${p} is within the limits a key file may ask for. */
static int
params_valid(const struct pqv_kdf_params *p)
{
    return p->t_cost >= 1 && p->t_cost <= PQV_ARGON2_MAX_T &&
        p->lanes >= 1 && p->lanes <= PQV_ARGON2_MAX_LANES &&
        p->m_kib >= 8 * p->lanes && p->m_kib >= PQV_ARGON2_MIN_MKIB &&
        p->m_kib <= PQV_ARGON2_MAX_MKIB;
}

int
pqv_kdf_within_limit(const struct pqv_kdf_params *p, const struct pqv_kdf_limit *limit)
{
    if (limit == NULL)
        limit = &pqv_kdf_limit_default;
    return p != NULL && p->m_kib <= limit->m_kib && p->t_cost <= limit->t_cost;
}

int
keyfile_plan(const struct pqv_kdf_params p[PQV_KEYFILE_SLOTS], const struct pqv_kdf_limit *limit,
    int run[PQV_KEYFILE_SLOTS], int *concurrent)
{
    uint64_t memory = 0;
    int n = 0;

    if (limit == NULL)
        limit = &pqv_kdf_limit_default;
    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++) {
        run[i] = pqv_kdf_within_limit(&p[i], limit);
        if (run[i]) {
            memory += p[i].m_kib;
            n++;
        }
    }
    *concurrent = memory <= limit->m_kib;
    return n;
}

/* slot_ad(kf, index, slot, adlen): header || index || slot parameters. */
static uint8_t *
slot_ad(const pqv_keyfile *kf, int index, const uint8_t *slot, size_t *adlen)
{
    uint8_t *ad = malloc(kf->header_len + 1 + PARAMS_BYTES);

    if (ad == NULL)
        return NULL;
    memcpy(ad, kf->header, kf->header_len);
    ad[kf->header_len] = (uint8_t)index;
    memcpy(ad + kf->header_len + 1, slot, PARAMS_BYTES);
    *adlen = kf->header_len + 1 + PARAMS_BYTES;
    return ad;
}

/* slot_key(key, slot, pass, passlen, threads): the slot's Argon2id key. */
static int
slot_key(uint8_t key[32], const uint8_t *slot, const uint8_t *pass, size_t passlen,
    uint32_t threads)
{
    struct pqv_kdf_params p = slot_params(slot);

    return pqv_argon2id(key, 32, pass, passlen, slot + PARAMS_BYTES, SALT_BYTES,
        NULL, 0, NULL, 0, p.t_cost, p.m_kib, p.lanes, threads);
}

int
pqv_keyfile_set_slot(pqv_keyfile *kf, int index, const uint8_t seed[PQV_SEED_BYTES],
    const uint8_t *pass, size_t passlen, const struct pqv_kdf_params *params)
{
    uint8_t slot[SLOT_BYTES], key[32];
    uint8_t *ad;
    size_t adlen;
    int rc;

    if (kf == NULL || index < 0 || index >= PQV_KEYFILE_SLOTS || seed == NULL ||
        (pass == NULL && passlen > 0))
        return PQV_E_INVAL;
    if (params == NULL)
        params = &pqv_kdf_default;
    if (!params_valid(params))
        return error_set(PQV_E_INVAL, NULL, "Argon2id parameters out of range");
    util_store_be32(slot, params->t_cost);
    util_store_be32(slot + 4, params->m_kib);
    util_store_be32(slot + 8, params->lanes);
    if ((rc = util_random(slot + PARAMS_BYTES, SALT_BYTES)) != 0)
        return rc;
    if ((rc = slot_key(key, slot, pass, passlen, params->lanes)) != 0)
        return rc;
    if ((ad = slot_ad(kf, index, slot, &adlen)) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    rc = pqv_aead_seal1(PQV_AEAD_CHACHA20POLY1305, key, zero_nonce, ad, adlen,
        seed, PQV_SEED_BYTES, slot + PARAMS_BYTES + SALT_BYTES);
    free(ad);
    if (rc == 0)
        memcpy(kf->slots[index], slot, SLOT_BYTES);
done:
    util_wipe(key, sizeof(key));
    return rc;
}

int
pqv_keyfile_clear_slot(pqv_keyfile *kf, int index)
{
    uint8_t slot[SLOT_BYTES];
    int rc;

    if (kf == NULL || index < 0 || index >= PQV_KEYFILE_SLOTS)
        return PQV_E_INVAL;
    /* Same shape as a used slot: default parameters, random salt and
     * random "ciphertext", so an observer cannot tell it is unused. */
    util_store_be32(slot, pqv_kdf_default.t_cost);
    util_store_be32(slot + 4, pqv_kdf_default.m_kib);
    util_store_be32(slot + 8, pqv_kdf_default.lanes);
    if ((rc = util_random(slot + PARAMS_BYTES, SLOT_BYTES - PARAMS_BYTES)) != 0)
        return rc;
    memcpy(kf->slots[index], slot, SLOT_BYTES);
    return 0;
}

/* keyfile_alloc(kem, public_enc): a key file with the given public part and
 * two cleared slots. */
static int
keyfile_alloc(pqv_keyfile **out, const pqv_frodo *kem, const uint8_t *public_enc)
{
    pqv_keyfile *kf;
    size_t publen = pqv_identity_public_bytes(kem);

    if ((kf = calloc(1, sizeof(*kf))) == NULL)
        return PQV_E_NOMEM;
    kf->kem = kem;
    kf->header_len = PREFIX_BYTES + publen;
    if ((kf->header = malloc(kf->header_len)) == NULL) {
        free(kf);
        return PQV_E_NOMEM;
    }
    memcpy(kf->header, MAGIC, 4);
    kf->header[4] = PQV_KEYFILE_VERSION;
    memset(kf->header + 5, 0, 3);
    memcpy(kf->header + PREFIX_BYTES, public_enc, publen);
    *out = kf;
    return 0;
}

int
pqv_keyfile_create(pqv_keyfile **out, const pqv_identity *id,
    const uint8_t seed[PQV_SEED_BYTES], const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *params)
{
    pqv_keyfile *kf;
    int rc;

    if (out == NULL || id == NULL || seed == NULL)
        return PQV_E_INVAL;
    if ((rc = keyfile_alloc(&kf, pqv_identity_kem(id), pqv_identity_public(id))) != 0)
        return rc;
    if ((rc = pqv_keyfile_clear_slot(kf, 0)) != 0 ||
        (rc = pqv_keyfile_clear_slot(kf, 1)) != 0 ||
        (rc = pqv_keyfile_set_slot(kf, 0, seed, pass, passlen, params)) != 0) {
        pqv_keyfile_free(kf);
        return rc;
    }
    *out = kf;
    return 0;
}

int
pqv_keyfile_serialize(const pqv_keyfile *kf, uint8_t **buf, size_t *len)
{
    size_t total = kf->header_len + PQV_KEYFILE_SLOTS * SLOT_BYTES + TRAILER_BYTES;
    uint8_t *p;
    int rc;

    if ((p = malloc(total)) == NULL)
        return PQV_E_NOMEM;
    memcpy(p, kf->header, kf->header_len);
    memcpy(p + kf->header_len, kf->slots, PQV_KEYFILE_SLOTS * SLOT_BYTES);
    if ((rc = kdf_sha256(p + total - TRAILER_BYTES, p, total - TRAILER_BYTES)) != 0) {
        free(p);
        return rc;
    }
    *buf = p;
    *len = total;
    return 0;
}

int
pqv_keyfile_parse(pqv_keyfile **out, const uint8_t *buf, size_t len)
{
    const pqv_frodo *kem;
    pqv_keyfile *kf;
    uint8_t digest[32];
    size_t publen, total;
    int rc;

    if (out == NULL || buf == NULL)
        return PQV_E_INVAL;
    if (len < PREFIX_BYTES + 2 || memcmp(buf, MAGIC, 4) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "not a pqvault key file (bad magic)");
    if (buf[4] != PQV_KEYFILE_VERSION) {
        /* A version byte damaged in a file of this version's layout is
         * accidental corruption, which the checksum tells; only a file whose
         * checksum holds (or whose layout is another) is of another version. */
        if (buf[PREFIX_BYTES] == 1 && (kem = pqv_frodo_by_id(buf[PREFIX_BYTES + 1])) != NULL &&
            len == PREFIX_BYTES + pqv_identity_public_bytes(kem) +
                PQV_KEYFILE_SLOTS * SLOT_BYTES + TRAILER_BYTES &&
            kdf_sha256(digest, buf, len - TRAILER_BYTES) == 0 &&
            !util_ct_equal(digest, buf + len - TRAILER_BYTES, 32))
            return error_set(PQV_E_INTEGRITY, NULL, "key file is corrupted (checksum mismatch)");
        return error_set(PQV_E_UNSUPPORTED, NULL, "key file version %u is not supported", buf[4]);
    }
    if (buf[5] != 0 || buf[6] != 0 || buf[7] != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "key file has non-zero reserved bytes");
    if (buf[PREFIX_BYTES] != 1)
        return error_set(PQV_E_INTEGRITY, NULL, "key file public identity has unknown version");
    if ((kem = pqv_frodo_by_id(buf[PREFIX_BYTES + 1])) == NULL)
        return error_set(PQV_E_INTEGRITY, NULL, "key file names an unknown KEM (%u)", buf[PREFIX_BYTES + 1]);
    publen = pqv_identity_public_bytes(kem);
    total = PREFIX_BYTES + publen + PQV_KEYFILE_SLOTS * SLOT_BYTES + TRAILER_BYTES;
    if (len < total)
        return error_set(PQV_E_INTEGRITY, NULL, "key file is truncated (%zu of %zu bytes)", len, total);
    if (len > total)
        return error_set(PQV_E_INTEGRITY, NULL, "key file has %zu trailing bytes", len - total);
    if ((rc = kdf_sha256(digest, buf, total - TRAILER_BYTES)) != 0)
        return rc;
    int same = util_ct_equal(digest, buf + total - TRAILER_BYTES, 32);
    util_declassify(&same, sizeof(same)); /* the verdict is public */
    if (!same)
        return error_set(PQV_E_INTEGRITY, NULL, "key file is corrupted (checksum mismatch)");
    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++) {
        struct pqv_kdf_params p = slot_params(buf + PREFIX_BYTES + publen + i * SLOT_BYTES);
        if (!params_valid(&p))
            return error_set(PQV_E_INTEGRITY, NULL, "key file slot %d has out-of-range Argon2id parameters", i);
    }
    if ((rc = keyfile_alloc(&kf, kem, buf + PREFIX_BYTES)) != 0)
        return rc;
    memcpy(kf->slots, buf + PREFIX_BYTES + publen, PQV_KEYFILE_SLOTS * SLOT_BYTES);
    *out = kf;
    return 0;
}

int
pqv_keyfile_load(const char *path, pqv_keyfile **out)
{
    uint8_t *buf;
    size_t len;
    int rc;

    if ((rc = fsutil_read_file(AT_FDCWD, path, &buf, &len, PQV_KEYFILE_MAX_BYTES)) != 0)
        return rc;
    rc = pqv_keyfile_parse(out, buf, len);
    free(buf);
    return rc;
}

int
pqv_keyfile_save(const char *path, const pqv_keyfile *kf)
{
    uint8_t *buf;
    size_t len;
    int rc;

    if ((rc = pqv_keyfile_serialize(kf, &buf, &len)) != 0)
        return rc;
    rc = durable_write_file(AT_FDCWD, path, NULL, buf, len, 0600, DURABLE_REPLACE);
    free(buf);
    if (rc == 0) {
        char dir[4096];
        fsutil_dirname(path, dir, sizeof(dir));
        rc = fsutil_fsync_dir(dir);
    }
    return rc;
}

/* One slot's unlock attempt, run in its own thread. */
struct slot_job {
    const pqv_keyfile *kf;
    int index;
    const uint8_t *pass;
    size_t passlen;
    uint32_t threads;
    uint8_t seed[PQV_SEED_BYTES];
    int rc;
};

static void *
slot_job_run(void *arg)
{
    struct slot_job *job = arg;
    const uint8_t *slot = job->kf->slots[job->index];
    uint8_t key[32];
    uint8_t *ad;
    size_t adlen;

    if ((job->rc = slot_key(key, slot, job->pass, job->passlen, job->threads)) != 0)
        return NULL;
    if ((ad = slot_ad(job->kf, job->index, slot, &adlen)) == NULL) {
        job->rc = PQV_E_NOMEM;
    } else {
        job->rc = pqv_aead_open1(PQV_AEAD_CHACHA20POLY1305, key, zero_nonce, ad,
            adlen, slot + PARAMS_BYTES + SALT_BYTES, SEALED_BYTES, job->seed);
        free(ad);
    }
    util_wipe(key, sizeof(key));
    return NULL;
}

/* limit_error(kf, run, limit): PQV_E_LIMIT naming the slots not computed
 * (run[i] 0), their cost and ${limit}, and the slots computed in vain. */
static int
limit_error(const pqv_keyfile *kf, const int run[PQV_KEYFILE_SLOTS],
    const struct pqv_kdf_limit *limit)
{
    char skipped[160] = "", tried[32] = "";
    size_t ns = 0, nt = 0;

    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++) {
        struct pqv_kdf_params p = slot_params(kf->slots[i]);
        int n;
        if (run[i])
            n = snprintf(tried + nt, sizeof(tried) - nt, "%s%d", nt > 0 ? " and " : "", i);
        else
            n = snprintf(skipped + ns, sizeof(skipped) - ns, "%sslot %d (Argon2id m=%u KiB, t=%u)",
                ns > 0 ? " and " : "", i, p.m_kib, p.t_cost);
        if (n > 0 && run[i] && (size_t)n < sizeof(tried) - nt)
            nt += (size_t)n;
        else if (n > 0 && !run[i] && (size_t)n < sizeof(skipped) - ns)
            ns += (size_t)n;
    }
    return error_set(PQV_E_LIMIT, NULL, "%s%s%s%s: cost above the limit (m=%u KiB, t=%u), "
        "not computed", nt > 0 ? "wrong passphrase for slot " : "", tried, nt > 0 ? "; " : "",
        skipped, limit->m_kib, limit->t_cost);
}

int
pqv_keyfile_unlock_limited(const pqv_keyfile *kf, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_limit *limit, uint8_t seed[PQV_SEED_BYTES], pqv_identity **id, int *slot)
{
    struct slot_job jobs[PQV_KEYFILE_SLOTS];
    struct pqv_kdf_params params[PQV_KEYFILE_SLOTS];
    int run[PQV_KEYFILE_SLOTS], concurrent, computed;
    int opened = -1, rc;
    size_t publen;

    if (kf == NULL || (pass == NULL && passlen > 0) || seed == NULL || id == NULL)
        return PQV_E_INVAL;
    if (limit == NULL)
        limit = &pqv_kdf_limit_default;
    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++) {
        params[i] = slot_params(kf->slots[i]);
        jobs[i].kf = kf;
        jobs[i].index = i;
        jobs[i].pass = pass;
        jobs[i].passlen = passlen;
        jobs[i].threads = params[i].lanes;
        jobs[i].rc = PQV_E_AUTH;
    }
    /* Decided before any Argon2id work: a slot above the limit is never
     * computed, and the others at once only within the limit's memory. */
    computed = keyfile_plan(params, limit, run, &concurrent);
    if (computed == 0)
        return limit_error(kf, run, limit);
    if (concurrent && computed == PQV_KEYFILE_SLOTS) {
        /* Both slots at once: slot 1 in a second thread, slot 0 here. */
        pthread_t thread;
        int started = pthread_create(&thread, NULL, slot_job_run, &jobs[1]) == 0;
        slot_job_run(&jobs[0]);
        if (started)
            pthread_join(thread, NULL);
        else
            slot_job_run(&jobs[1]);
    } else {
        /* Every computed slot even once one has opened: the time does not
         * tell which slot a passphrase opens. */
        for (int i = 0; i < PQV_KEYFILE_SLOTS; i++)
            if (run[i])
                slot_job_run(&jobs[i]);
    }

    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++) {
        if (!run[i])
            continue;
        if (jobs[i].rc == 0 && opened < 0) {
            opened = i;
            memcpy(seed, jobs[i].seed, PQV_SEED_BYTES);
        } else if (jobs[i].rc != 0 && jobs[i].rc != PQV_E_INTEGRITY) {
            /* A resource failure (memory) is not a wrong passphrase. */
            rc = jobs[i].rc;
            for (int j = 0; j < PQV_KEYFILE_SLOTS; j++)
                util_wipe(jobs[j].seed, PQV_SEED_BYTES);
            util_wipe(seed, PQV_SEED_BYTES);
            return rc;
        }
    }
    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++)
        util_wipe(jobs[i].seed, PQV_SEED_BYTES);
    if (opened < 0)
        return computed < PQV_KEYFILE_SLOTS ? limit_error(kf, run, limit)
                                            : error_set(PQV_E_AUTH, NULL, "wrong passphrase");

    /* The seed is the truth: the public part must be the one it derives. */
    if ((rc = pqv_identity_derive(id, kf->kem, seed)) != 0)
        goto fail;
    pqv_keyfile_public(kf, &publen);
    if (memcmp(pqv_identity_public(*id), kf->header + PREFIX_BYTES, publen) != 0) {
        pqv_identity_free(*id);
        *id = NULL;
        rc = error_set(PQV_E_INTEGRITY, NULL, "key file public identity does not match its seed (substituted key?)");
        goto fail;
    }
    if (slot != NULL)
        *slot = opened;
    return 0;

fail:
    util_wipe(seed, PQV_SEED_BYTES);
    return rc;
}

int
pqv_keyfile_unlock(const pqv_keyfile *kf, const uint8_t *pass, size_t passlen,
    uint8_t seed[PQV_SEED_BYTES], pqv_identity **id, int *slot)
{
    return pqv_keyfile_unlock_limited(kf, pass, passlen, NULL, seed, id, slot);
}

void
pqv_keyfile_free(pqv_keyfile *kf)
{
    if (kf == NULL)
        return;
    free(kf->header);
    util_wipe(kf, sizeof(*kf));
    free(kf);
}
