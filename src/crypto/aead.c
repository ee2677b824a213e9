/*
 * aead.c: AES-256-GCM and ChaCha20-Poly1305 through OpenSSL (see
 * pqvault/aead.h).  A pqv_aead keeps one EVP_CIPHER_CTX whose key schedule
 * is computed once; each message only sets its nonce, which matters for
 * STREAM where one key seals thousands of 64 KiB segments.
 */
#include "pqvault/aead.h"

#include <stdlib.h>
#include <strings.h>

#include <openssl/evp.h>

#include "crypto/cpu.h"
#include "util/util.h"

struct pqv_aead {
    EVP_CIPHER_CTX *ctx;
    int suite;
};

const char *
pqv_aead_name(int suite)
{
    switch (suite) {
    case PQV_AEAD_AES256GCM: return "AES-256-GCM";
    case PQV_AEAD_CHACHA20POLY1305: return "ChaCha20-Poly1305";
    default: return NULL;
    }
}

int
pqv_aead_by_name(const char *name)
{
    if (name == NULL)
        return 0;
    if (strcasecmp(name, "AES-256-GCM") == 0)
        return PQV_AEAD_AES256GCM;
    if (strcasecmp(name, "ChaCha20-Poly1305") == 0)
        return PQV_AEAD_CHACHA20POLY1305;
    return 0;
}

int
pqv_aead_auto(void)
{
    return cpu_has_aes_clmul() ? PQV_AEAD_AES256GCM : PQV_AEAD_CHACHA20POLY1305;
}

static const EVP_CIPHER *
suite_cipher(int suite)
{
    switch (suite) {
    case PQV_AEAD_AES256GCM: return EVP_aes_256_gcm();
    case PQV_AEAD_CHACHA20POLY1305: return EVP_chacha20_poly1305();
    default: return NULL;
    }
}

pqv_aead *
pqv_aead_new(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES])
{
    const EVP_CIPHER *cipher = suite_cipher(suite);
    pqv_aead *a;

    if (cipher == NULL || key == NULL) {
        error_set(PQV_E_UNSUPPORTED, NULL, "unknown AEAD suite %d", suite);
        return NULL;
    }
    if ((a = calloc(1, sizeof(*a))) == NULL)
        return NULL;
    a->suite = suite;
    if ((a->ctx = EVP_CIPHER_CTX_new()) == NULL)
        goto err1;
    if (EVP_CipherInit_ex(a->ctx, cipher, NULL, key, NULL, 1) != 1)
        goto err2;

    /* Success! */
    return a;

err2:
    EVP_CIPHER_CTX_free(a->ctx);
err1:
    free(a);
    /* Failure! */
    error_set(PQV_E_CRYPTO, NULL, "cannot initialise %s", pqv_aead_name(suite));
    return NULL;
}

void
pqv_aead_free(pqv_aead *a)
{
    if (a == NULL)
        return;
    /* EVP_CIPHER_CTX_free cleanses the key schedule. */
    EVP_CIPHER_CTX_free(a->ctx);
    free(a);
}

/* Feed ${len} bytes through the cipher in int-sized pieces. */
static int
cipher_update(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t len)
{
    while (len > 0) {
        int piece = len > (1u << 30) ? (1 << 30) : (int)len;
        int outl;
        if (EVP_CipherUpdate(ctx, out, &outl, in, piece) != 1 || outl != piece)
            return -1;
        if (out != NULL)
            out += piece;
        in += piece;
        len -= (size_t)piece;
    }
    return 0;
}

int
pqv_aead_seal(pqv_aead *a, const uint8_t nonce[PQV_AEAD_NONCE_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *pt, size_t ptlen,
    uint8_t *out)
{
    int outl;

    if (EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, 1) != 1)
        goto err0;
    if (adlen > 0 && cipher_update(a->ctx, NULL, ad, adlen))
        goto err0;
    if (cipher_update(a->ctx, out, pt, ptlen))
        goto err0;
    if (EVP_CipherFinal_ex(a->ctx, out + ptlen, &outl) != 1)
        goto err0;
    if (EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_GET_TAG, PQV_AEAD_TAG_BYTES,
            out + ptlen) != 1)
        goto err0;

    /* Success! */
    return 0;

err0:
    /* Failure! */
    return error_set(PQV_E_CRYPTO, NULL, "%s encryption failed", pqv_aead_name(a->suite));
}

int
pqv_aead_open(pqv_aead *a, const uint8_t nonce[PQV_AEAD_NONCE_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *ct, size_t ctlen,
    uint8_t *out)
{
    uint8_t tag[PQV_AEAD_TAG_BYTES];
    size_t ptlen;
    int outl;

    if (ctlen < PQV_AEAD_TAG_BYTES)
        return error_set(PQV_E_INTEGRITY, NULL, "ciphertext shorter than its tag");
    ptlen = ctlen - PQV_AEAD_TAG_BYTES;
    /* Copy the tag first: ${out} may overlap ${ct}. */
    memcpy(tag, ct + ptlen, PQV_AEAD_TAG_BYTES);
    if (EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, 0) != 1)
        goto crypto;
    if (adlen > 0 && cipher_update(a->ctx, NULL, ad, adlen))
        goto crypto;
    if (cipher_update(a->ctx, out, ct, ptlen))
        goto crypto;
    if (EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_SET_TAG, PQV_AEAD_TAG_BYTES, tag) != 1)
        goto crypto;
    int ok = EVP_CipherFinal_ex(a->ctx, out + ptlen, &outl);
    util_declassify(&ok, sizeof(ok)); /* the tag's verdict is public */
    if (ok != 1) {
        /* Never leave unauthenticated plaintext behind. */
        util_wipe(out, ptlen);
        return error_set(PQV_E_INTEGRITY, NULL, "authentication tag mismatch");
    }

    /* Success! */
    return 0;

crypto:
    /* Failure! */
    util_wipe(out, ptlen);
    return error_set(PQV_E_CRYPTO, NULL, "%s decryption failed", pqv_aead_name(a->suite));
}

/* A seal or open on a keyed context. */
typedef int (*aead_op)(pqv_aead *a, const uint8_t nonce[PQV_AEAD_NONCE_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *in, size_t inlen, uint8_t *out);

/* aead_once(suite, key, op, ...): ${op} on a context keyed for this call only. */
static int
aead_once(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES], aead_op op,
    const uint8_t nonce[PQV_AEAD_NONCE_BYTES], const uint8_t *ad, size_t adlen,
    const uint8_t *in, size_t inlen, uint8_t *out)
{
    pqv_aead *a = pqv_aead_new(suite, key);
    int rc;

    if (a == NULL)
        return pqv_aead_name(suite) == NULL ? PQV_E_UNSUPPORTED : PQV_E_NOMEM;
    rc = op(a, nonce, ad, adlen, in, inlen, out);
    pqv_aead_free(a);
    return rc;
}

int
pqv_aead_seal1(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t nonce[PQV_AEAD_NONCE_BYTES], const uint8_t *ad, size_t adlen,
    const uint8_t *pt, size_t ptlen, uint8_t *out)
{
    return aead_once(suite, key, pqv_aead_seal, nonce, ad, adlen, pt, ptlen, out);
}

int
pqv_aead_open1(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t nonce[PQV_AEAD_NONCE_BYTES], const uint8_t *ad, size_t adlen,
    const uint8_t *ct, size_t ctlen, uint8_t *out)
{
    return aead_once(suite, key, pqv_aead_open, nonce, ad, adlen, ct, ctlen, out);
}
