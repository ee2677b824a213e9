/*
 * identity.c: hybrid identity derivation and file-key wrapping (see
 * pqvault/identity.h).
 */
#include "pqvault/identity.h"

#include <stdio.h>
#include <stdlib.h>

#include <openssl/evp.h>

#include "crypto/kdf.h"
#include "pqvault/aead.h"
#include "util/util.h"

#define WRAP_VERSION 1
#define WRAP_HEADER 2 /* version, kem id */
#define PUBLIC_VERSION 1

static const char seed_salt[] = "pqvault/v1/identity";
static const char wrap_label[] = "pqvault/v1/hybrid-wrap";

struct pqv_identity {
    const pqv_frodo *kem;
    uint8_t x25519_secret[PQV_X25519_BYTES];
    uint8_t prk[32];            /* HKDF pseudorandom key from the seed */
    uint8_t public_hash[32];
    uint8_t *public_enc;        /* version, kem id, X25519 pk, FrodoKEM pk */
    size_t public_len;
    uint8_t *frodo_secret;
    size_t frodo_secret_len;
};

size_t
pqv_identity_public_bytes(const pqv_frodo *kem)
{
    return 2 + PQV_X25519_BYTES + pqv_frodo_publickey_bytes(kem);
}

const pqv_frodo *
pqv_identity_kem(const pqv_identity *id)
{
    return id->kem;
}

const uint8_t *
pqv_identity_public(const pqv_identity *id)
{
    return id->public_enc;
}

const uint8_t *
pqv_identity_public_hash(const pqv_identity *id)
{
    return id->public_hash;
}

/* x25519_public(pk, sk): the X25519 public key of ${sk}. */
static int
x25519_public(uint8_t pk[32], const uint8_t sk[32])
{
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, sk, 32);
    size_t len = 32;
    int ok;

    if (key == NULL)
        return error_set(PQV_E_CRYPTO, NULL, "X25519 key setup failed");
    ok = EVP_PKEY_get_raw_public_key(key, pk, &len) == 1 && len == 32;
    EVP_PKEY_free(key);
    return ok ? 0 : error_set(PQV_E_CRYPTO, NULL, "X25519 public key failed");
}

/* x25519_shared(ss, sk, peer): X25519(sk, peer).  Rejects an all-zero result
 * (a low-order peer point) with PQV_E_INTEGRITY. */
static int
x25519_shared(uint8_t ss[32], const uint8_t sk[32], const uint8_t peer[32])
{
    EVP_PKEY *mine, *theirs = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    size_t len = 32;
    int rc = PQV_E_INTEGRITY;

    if ((mine = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, sk, 32)) == NULL)
        return error_set(PQV_E_CRYPTO, NULL, "X25519 key setup failed");
    if ((theirs = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, peer, 32)) == NULL)
        goto done;
    if ((ctx = EVP_PKEY_CTX_new(mine, NULL)) == NULL)
        goto done;
    /* OpenSSL itself fails the derivation on an all-zero output; we check
     * again below so the rule does not depend on the library version. */
    if (EVP_PKEY_derive_init(ctx) != 1 || EVP_PKEY_derive_set_peer(ctx, theirs) != 1 ||
        EVP_PKEY_derive(ctx, ss, &len) != 1 || len != 32)
        goto done;
    rc = util_ct_is_zero(ss, 32) ? PQV_E_INTEGRITY : 0;
done:
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(theirs);
    EVP_PKEY_free(mine);
    if (rc != 0) {
        util_wipe(ss, 32);
        error_set(rc, NULL, "X25519 exchange rejected (low-order or invalid point)");
    }
    return rc;
}

int
pqv_identity_derive(pqv_identity **out, const pqv_frodo *kem,
    const uint8_t seed[PQV_SEED_BYTES])
{
    pqv_identity *id;
    uint8_t *coins = NULL;
    size_t ncoins;
    char info[64];
    int rc = PQV_E_NOMEM;

    if (out == NULL || kem == NULL || seed == NULL)
        return PQV_E_INVAL;
    if ((id = calloc(1, sizeof(*id))) == NULL)
        return PQV_E_NOMEM;
    id->kem = kem;
    id->public_len = pqv_identity_public_bytes(kem);
    id->frodo_secret_len = pqv_frodo_secretkey_bytes(kem);
    ncoins = pqv_frodo_keypair_coins_bytes(kem);
    if ((id->public_enc = malloc(id->public_len)) == NULL ||
        (id->frodo_secret = malloc(id->frodo_secret_len)) == NULL ||
        (coins = malloc(ncoins)) == NULL)
        goto err;
    util_pin_memory(id, sizeof(*id));
    util_pin_memory(id->frodo_secret, id->frodo_secret_len);

    /* One extraction from the seed; every key is an expansion with its own
     * label, so no two purposes share key material. */
    if ((rc = kdf_hkdf_sha256(id->prk, 32, seed, PQV_SEED_BYTES,
             (const uint8_t *)seed_salt, sizeof(seed_salt) - 1, NULL, 0)) != 0)
        goto err;
    /* HKDF with empty info gives Expand(PRK, "") rather than PRK itself, so
     * the stored root is one more step removed from the seed. */
    if ((rc = kdf_hkdf_expand_sha256(id->x25519_secret, 32, id->prk,
             (const uint8_t *)"x25519", 6)) != 0)
        goto err;
    snprintf(info, sizeof(info), "frodokem/%s", pqv_frodo_name(kem));
    if ((rc = kdf_hkdf_expand_sha256(coins, ncoins, id->prk, (const uint8_t *)info,
             strlen(info))) != 0)
        goto err;

    id->public_enc[0] = PUBLIC_VERSION;
    id->public_enc[1] = pqv_frodo_id(kem);
    if ((rc = x25519_public(id->public_enc + 2, id->x25519_secret)) != 0)
        goto err;
    if (pqv_frodo_keypair_derand(kem, id->public_enc + 2 + PQV_X25519_BYTES,
            id->frodo_secret, coins) != 0) {
        rc = error_set(PQV_E_CRYPTO, NULL, "FrodoKEM key generation failed");
        goto err;
    }
    struct kdf_part part = { id->public_enc, id->public_len };
    if ((rc = kdf_sha3_256(id->public_hash, &part, 1)) != 0)
        goto err;

    /* Success! */
    util_wipe(coins, ncoins);
    free(coins);
    *out = id;
    return 0;

err:
    /* Failure! */
    if (coins != NULL) {
        util_wipe(coins, ncoins);
        free(coins);
    }
    pqv_identity_free(id);
    return rc;
}

int
pqv_identity_from_public(pqv_identity **out, const uint8_t *pub, size_t len)
{
    const pqv_frodo *kem;
    pqv_identity *id;
    int rc;

    if (out == NULL || pub == NULL)
        return PQV_E_INVAL;
    if (len < 2 || pub[0] != PUBLIC_VERSION || (kem = pqv_frodo_by_id(pub[1])) == NULL ||
        len != pqv_identity_public_bytes(kem))
        return error_set(PQV_E_INTEGRITY, NULL, "not a public identity (version, KEM or length)");
    if ((id = calloc(1, sizeof(*id))) == NULL)
        return PQV_E_NOMEM;
    id->kem = kem;
    id->public_len = len;
    if ((id->public_enc = malloc(len)) == NULL) {
        free(id);
        return PQV_E_NOMEM;
    }
    memcpy(id->public_enc, pub, len);
    struct kdf_part part = { id->public_enc, id->public_len };
    if ((rc = kdf_sha3_256(id->public_hash, &part, 1)) != 0) {
        pqv_identity_free(id);
        return rc;
    }
    *out = id; /* no secret: frodo_secret stays NULL */
    return 0;
}

int
pqv_identity_has_secret(const pqv_identity *id)
{
    return id != NULL && id->frodo_secret != NULL;
}

void
pqv_identity_free(pqv_identity *id)
{
    if (id == NULL)
        return;
    if (id->frodo_secret != NULL) {
        util_wipe(id->frodo_secret, id->frodo_secret_len);
        util_unpin_memory(id->frodo_secret, id->frodo_secret_len);
        free(id->frodo_secret);
    }
    free(id->public_enc);
    util_wipe(id, sizeof(*id));
    util_unpin_memory(id, sizeof(*id));
    free(id);
}

void
pqv_fingerprint_from_hash(const uint8_t hash[32], char out[PQV_FINGERPRINT_CHARS])
{
    char hex[41];
    char *p = out;

    util_hex_encode(hex, hash, 20);
    memcpy(p, "pqv1-", 5);
    p += 5;
    for (int g = 0; g < 5; g++) {
        memcpy(p, hex + 8 * g, 8);
        p += 8;
        if (g < 4)
            *p++ = '-';
    }
    *p = '\0';
}

void
pqv_identity_fingerprint(const pqv_identity *id, char out[PQV_FINGERPRINT_CHARS])
{
    pqv_fingerprint_from_hash(id->public_hash, out);
}

int
pqv_identity_derive_key(const pqv_identity *id, const char *label, uint8_t out[32])
{
    char info[128];
    int n;

    if (!pqv_identity_has_secret(id))
        return error_set(PQV_E_INVAL, NULL, "a public identity derives no key");
    n = snprintf(info, sizeof(info), "key/%s", label);
    if (n < 0 || (size_t)n >= sizeof(info))
        return PQV_E_INVAL;
    return kdf_hkdf_expand_sha256(out, 32, id->prk, (const uint8_t *)info, (size_t)n);
}

size_t
pqv_wrap_bytes(const pqv_frodo *kem)
{
    return WRAP_HEADER + PQV_X25519_BYTES + pqv_frodo_ciphertext_bytes(kem) +
        PQV_FILE_KEY_BYTES + PQV_AEAD_TAG_BYTES;
}

/* wrap_key(key, id, ss_frodo, ss_x, epk, ct): the combiner of the header. */
static int
wrap_key(uint8_t key[32], const pqv_identity *id, const uint8_t *ss_frodo,
    const uint8_t ss_x[32], const uint8_t epk[32], const uint8_t *ct)
{
    uint8_t ct_hash[32];
    uint8_t kem_id = pqv_frodo_id(id->kem);
    struct kdf_part ct_part = { ct, pqv_frodo_ciphertext_bytes(id->kem) };
    int rc;

    if ((rc = kdf_sha3_256(ct_hash, &ct_part, 1)) != 0)
        return rc;
    struct kdf_part parts[] = {
        { wrap_label, sizeof(wrap_label) - 1 },
        { &kem_id, 1 },
        { ss_frodo, pqv_frodo_sharedsecret_bytes(id->kem) },
        { ss_x, 32 },
        { epk, 32 },
        { ct_hash, 32 },
        { id->public_hash, 32 },
    };
    return kdf_sha3_256(key, parts, sizeof(parts) / sizeof(parts[0]));
}

/* Associated data of the sealed file key: blob header || caller context. */
static uint8_t *
wrap_ad(const uint8_t header[WRAP_HEADER], const uint8_t *ctx, size_t ctxlen,
    size_t *adlen)
{
    uint8_t *ad = malloc(WRAP_HEADER + ctxlen);

    if (ad == NULL)
        return NULL;
    memcpy(ad, header, WRAP_HEADER);
    if (ctxlen > 0)
        memcpy(ad + WRAP_HEADER, ctx, ctxlen);
    *adlen = WRAP_HEADER + ctxlen;
    return ad;
}

static const uint8_t zero_nonce[PQV_AEAD_NONCE_BYTES];

int
pqv_wrap_derand(const pqv_identity *id, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    const uint8_t *ctx, size_t ctxlen, const uint8_t *coins, uint8_t *out)
{
    size_t ctbytes, adlen;
    uint8_t ss_x[32], ss_frodo[32], key[32];
    uint8_t *epk, *ct, *sealed, *ad;
    int rc;

    if (id == NULL || file_key == NULL || coins == NULL || out == NULL ||
        (ctx == NULL && ctxlen > 0))
        return PQV_E_INVAL;
    ctbytes = pqv_frodo_ciphertext_bytes(id->kem);
    out[0] = WRAP_VERSION;
    out[1] = pqv_frodo_id(id->kem);
    epk = out + WRAP_HEADER;
    ct = epk + PQV_X25519_BYTES;
    sealed = ct + ctbytes;

    if ((rc = x25519_public(epk, coins)) != 0)
        return rc;
    if ((rc = x25519_shared(ss_x, coins, id->public_enc + 2)) != 0)
        return rc;
    if (pqv_frodo_encaps_derand(id->kem, ct, ss_frodo,
            id->public_enc + 2 + PQV_X25519_BYTES, coins + PQV_X25519_BYTES) != 0) {
        rc = error_set(PQV_E_CRYPTO, NULL, "FrodoKEM encapsulation failed");
        goto done;
    }
    if ((rc = wrap_key(key, id, ss_frodo, ss_x, epk, ct)) != 0)
        goto done;
    if ((ad = wrap_ad(out, ctx, ctxlen, &adlen)) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    rc = pqv_aead_seal1(PQV_AEAD_CHACHA20POLY1305, key, zero_nonce, ad, adlen,
        file_key, PQV_FILE_KEY_BYTES, sealed);
    free(ad);
done:
    util_wipe(ss_x, sizeof(ss_x));
    util_wipe(ss_frodo, sizeof(ss_frodo));
    util_wipe(key, sizeof(key));
    return rc;
}

int
pqv_wrap(const pqv_identity *id, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    const uint8_t *ctx, size_t ctxlen, uint8_t *out)
{
    size_t ncoins;
    uint8_t *coins;
    int rc;

    if (id == NULL)
        return PQV_E_INVAL;
    ncoins = PQV_X25519_BYTES + pqv_frodo_encaps_coins_bytes(id->kem);
    if ((coins = malloc(ncoins)) == NULL)
        return PQV_E_NOMEM;
    if ((rc = util_random(coins, ncoins)) == 0)
        rc = pqv_wrap_derand(id, file_key, ctx, ctxlen, coins, out);
    util_wipe(coins, ncoins);
    free(coins);
    return rc;
}

int
pqv_unwrap(const pqv_identity *id, const uint8_t *wrapped, size_t len,
    const uint8_t *ctx, size_t ctxlen, uint8_t file_key[PQV_FILE_KEY_BYTES])
{
    size_t ctbytes, adlen;
    uint8_t ss_x[32], ss_frodo[32], key[32];
    const uint8_t *epk, *ct, *sealed;
    uint8_t *ad;
    int rc;

    if (id == NULL || wrapped == NULL || file_key == NULL || (ctx == NULL && ctxlen > 0))
        return PQV_E_INVAL;
    if (!pqv_identity_has_secret(id))
        return error_set(PQV_E_INVAL, NULL, "a public identity unwraps nothing");
    if (len != pqv_wrap_bytes(id->kem))
        return error_set(PQV_E_INTEGRITY, NULL, "wrapped key has the wrong length");
    if (wrapped[0] != WRAP_VERSION)
        return error_set(PQV_E_INTEGRITY, NULL, "wrapped key has unknown version %u", wrapped[0]);
    if (wrapped[1] != pqv_frodo_id(id->kem))
        return error_set(PQV_E_INTEGRITY, NULL, "wrapped key is for another KEM");
    ctbytes = pqv_frodo_ciphertext_bytes(id->kem);
    epk = wrapped + WRAP_HEADER;
    ct = epk + PQV_X25519_BYTES;
    sealed = ct + ctbytes;

    if ((rc = x25519_shared(ss_x, id->x25519_secret, epk)) != 0)
        return rc;
    /* Decapsulation never fails on a well-sized ciphertext: a modified one
     * yields the implicit-rejection secret and the AEAD below fails. */
    if (pqv_frodo_decaps(id->kem, ss_frodo, ct, id->frodo_secret) != 0) {
        rc = error_set(PQV_E_CRYPTO, NULL, "FrodoKEM decapsulation failed");
        goto done;
    }
    if ((rc = wrap_key(key, id, ss_frodo, ss_x, epk, ct)) != 0)
        goto done;
    if ((ad = wrap_ad(wrapped, ctx, ctxlen, &adlen)) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    rc = pqv_aead_open1(PQV_AEAD_CHACHA20POLY1305, key, zero_nonce, ad, adlen,
        sealed, PQV_FILE_KEY_BYTES + PQV_AEAD_TAG_BYTES, file_key);
    free(ad);
    if (rc == PQV_E_INTEGRITY)
        error_set(rc, NULL, "wrapped key does not open with this identity");
done:
    util_wipe(ss_x, sizeof(ss_x));
    util_wipe(ss_frodo, sizeof(ss_frodo));
    util_wipe(key, sizeof(key));
    return rc;
}
