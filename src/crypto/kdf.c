/*
 * kdf.c: HKDF, HMAC and hashing over OpenSSL (see kdf.h).
 */
#include "crypto/kdf.h"

#include <pthread.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "util/util.h"

static EVP_KDF *hkdf;
static EVP_MD *sha3_256, *sha256;
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;

/* Fetch the algorithms once: fetching per call costs more than hashing. */
static void
fetch_algorithms(void)
{
    hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    sha3_256 = EVP_MD_fetch(NULL, "SHA3-256", NULL);
    sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static int
hkdf_run(uint8_t *out, size_t outlen, int mode, const uint8_t *key,
    size_t keylen, const uint8_t *salt, size_t saltlen, const uint8_t *info,
    size_t infolen)
{
    OSSL_PARAM params[6], *p = params;
    EVP_KDF_CTX *ctx;
    int rc = PQV_E_CRYPTO;

    pthread_once(&fetch_once, fetch_algorithms);
    if (hkdf == NULL || (ctx = EVP_KDF_CTX_new(hkdf)) == NULL)
        return error_set(PQV_E_CRYPTO, NULL, "HKDF unavailable");
    *p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    *p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, keylen);
    if (saltlen > 0)
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, saltlen);
    if (infolen > 0)
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, infolen);
    *p = OSSL_PARAM_construct_end();
    if (EVP_KDF_derive(ctx, out, outlen, params) == 1)
        rc = 0;
    EVP_KDF_CTX_free(ctx);
    return rc == 0 ? 0 : error_set(PQV_E_CRYPTO, NULL, "HKDF failed");
}

int
kdf_hkdf_sha256(uint8_t *out, size_t outlen, const uint8_t *ikm, size_t ikmlen,
    const uint8_t *salt, size_t saltlen, const uint8_t *info, size_t infolen)
{
    return hkdf_run(out, outlen, EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND, ikm,
        ikmlen, salt, saltlen, info, infolen);
}

int
kdf_hkdf_expand_sha256(uint8_t *out, size_t outlen, const uint8_t prk[32],
    const uint8_t *info, size_t infolen)
{
    return hkdf_run(out, outlen, EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, 32, NULL,
        0, info, infolen);
}

/* HMAC as RFC 2104 defines it, over the SHA-256 fetched once: OpenSSL
 * 3.0's one-shot HMAC() fetches the MAC and the digest on every call
 * (about 1.2 us, against 0.3 us for the two hashes of a name; a large
 * segment's load verifies one name per entry, docs/DESIGN.md). */
int
kdf_hmac_sha256(uint8_t out[32], const uint8_t *key, size_t keylen,
    const uint8_t *msg, size_t msglen)
{
    uint8_t k0[64], pad[64], inner[32];
    EVP_MD_CTX *ctx;
    int ok;

    pthread_once(&fetch_once, fetch_algorithms);
    if (sha256 == NULL || (ctx = EVP_MD_CTX_new()) == NULL)
        return error_set(PQV_E_CRYPTO, NULL, "HMAC-SHA-256 unavailable");
    memset(k0, 0, sizeof(k0));
    if (keylen > sizeof(k0))
        ok = EVP_Digest(key, keylen, k0, NULL, sha256, NULL) == 1;
    else {
        if (keylen > 0)
            memcpy(k0, key, keylen);
        ok = 1;
    }
    for (size_t i = 0; i < sizeof(pad); i++)
        pad[i] = k0[i] ^ 0x36;
    ok = ok && EVP_DigestInit_ex(ctx, sha256, NULL) == 1 &&
        EVP_DigestUpdate(ctx, pad, sizeof(pad)) == 1 &&
        EVP_DigestUpdate(ctx, msg, msglen) == 1 &&
        EVP_DigestFinal_ex(ctx, inner, NULL) == 1;
    for (size_t i = 0; i < sizeof(pad); i++)
        pad[i] = k0[i] ^ 0x5c;
    ok = ok && EVP_DigestInit_ex(ctx, sha256, NULL) == 1 &&
        EVP_DigestUpdate(ctx, pad, sizeof(pad)) == 1 &&
        EVP_DigestUpdate(ctx, inner, sizeof(inner)) == 1 &&
        EVP_DigestFinal_ex(ctx, out, NULL) == 1;
    EVP_MD_CTX_free(ctx);
    util_wipe(k0, sizeof(k0));
    util_wipe(pad, sizeof(pad));
    util_wipe(inner, sizeof(inner));
    return ok ? 0 : error_set(PQV_E_CRYPTO, NULL, "HMAC-SHA-256 failed");
}

int
kdf_sha3_256(uint8_t out[32], const struct kdf_part *parts, size_t nparts)
{
    EVP_MD_CTX *ctx;
    int ok;

    pthread_once(&fetch_once, fetch_algorithms);
    if (sha3_256 == NULL || (ctx = EVP_MD_CTX_new()) == NULL)
        return error_set(PQV_E_CRYPTO, NULL, "SHA3-256 unavailable");
    ok = EVP_DigestInit_ex(ctx, sha3_256, NULL) == 1;
    for (size_t i = 0; ok && i < nparts; i++)
        ok = EVP_DigestUpdate(ctx, parts[i].data, parts[i].len) == 1;
    ok = ok && EVP_DigestFinal_ex(ctx, out, NULL) == 1;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : error_set(PQV_E_CRYPTO, NULL, "SHA3-256 failed");
}

int
kdf_sha256(uint8_t out[32], const void *data, size_t len)
{
    pthread_once(&fetch_once, fetch_algorithms);
    if (sha256 == NULL || EVP_Digest(data, len, out, NULL, sha256, NULL) != 1)
        return error_set(PQV_E_CRYPTO, NULL, "SHA-256 failed");
    return 0;
}
