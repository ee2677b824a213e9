/*
 * ct_misc.c: constant-time checks under valgrind memcheck (see ct_frodo.c
 * for the method) of everything else that compares or decodes secrets:
 *   util_ct_equal                both inputs secret;
 *   pqv_aead_open1              key and ciphertext secret, both suites,
 *                               a valid and a forged tag (the tag check
 *                               itself is OpenSSL's; our code must not
 *                               branch on anything but the verdict);
 *   config_verify_mac           key and stored MAC secret;
 *   pqv_keyfile_parse           slots and checksum secret (the checksum
 *                               compare);
 *   pqv_recovery_decode         every character of the code secret
 *                               (separator positions are declared public
 *                               by the library, bit by bit).
 * Verdicts are declassified in the library with util_declassify, which is
 * live only in this build (-DPQV_CT_DECLASSIFY): memcheck then reports any
 * other branch or memory index that depends on a secret.  Each check also
 * confirms the secret's taint reached the output, so the method works.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "pqvault/aead.h"
#include "pqvault/identity.h"
#include "pqvault/keyfile.h"
#include "pqvault/recovery.h"
#include "util/util.h"
#include "vault/vault_internal.h"

#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

static int failures;

static void
expect(int cond, const char *what)
{
    if (!cond) {
        printf("FAIL %s\n", what);
        failures++;
    }
}

/* tainted(p, n): whether any bit of the n bytes at p is undefined. */
static int
tainted(const void *p, size_t n)
{
    uint8_t vbits[256];
    if (!RUNNING_ON_VALGRIND)
        return 1;
    if (n > sizeof(vbits))
        n = sizeof(vbits);
    if (VALGRIND_GET_VBITS(p, vbits, n) != 1)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (vbits[i])
            return 1;
    return 0;
}

static void
check_ct_equal(void)
{
    uint8_t a[32], b[32];
    for (int diff = 0; diff <= 1; diff++) {
        memset(a, 0x33, sizeof(a));
        memset(b, 0x33, sizeof(b));
        b[17] ^= (uint8_t)diff;
        SECRET(a, sizeof(a));
        SECRET(b, sizeof(b));
        int r = util_ct_equal(a, b, sizeof(a));
        expect(tainted(&r, sizeof(r)), "util_ct_equal: result not tainted");
        PUBLIC(&r, sizeof(r));
        expect(r == !diff, "util_ct_equal: wrong result");
    }
}

static void
check_aead(void)
{
    uint8_t key[32], nonce[12] = { 1 }, ad[20] = { 2 }, pt[100], ct[116], out[100];
    for (int suite = PQV_AEAD_AES256GCM; suite <= PQV_AEAD_CHACHA20POLY1305; suite++) {
        for (int forge = 0; forge <= 1; forge++) {
            for (size_t i = 0; i < sizeof(key); i++)
                key[i] = (uint8_t)(i * 7 + 1);
            for (size_t i = 0; i < sizeof(pt); i++)
                pt[i] = (uint8_t)i;
            if (pqv_aead_seal1(suite, key, nonce, ad, sizeof(ad), pt, sizeof(pt), ct) != 0)
                exit(2);
            ct[sizeof(ct) - 1] ^= (uint8_t)forge;
            SECRET(key, sizeof(key));
            SECRET(ct, sizeof(ct));
            int rc = pqv_aead_open1(suite, key, nonce, ad, sizeof(ad), ct, sizeof(ct), out);
            PUBLIC(key, sizeof(key));
            PUBLIC(ct, sizeof(ct));
            if (!forge) {
                expect(tainted(out, sizeof(out)), "aead: plaintext not tainted");
                PUBLIC(out, sizeof(out));
                expect(rc == 0 && memcmp(out, pt, sizeof(pt)) == 0, "aead: valid open");
            } else {
                expect(rc == PQV_E_INTEGRITY, "aead: forgery accepted");
            }
        }
    }
}

static void
check_config_mac(void)
{
    struct vault_config c, parsed;
    uint8_t key[32], *text;
    size_t len;
    memset(&c, 0, sizeof(c));
    c.version = 1;
    c.kem = pqv_frodo_find("FrodoKEM-640-SHAKE");
    c.aead = PQV_AEAD_AES256GCM;
    c.created = 1700000000;
    memset(key, 0x42, sizeof(key));
    if (config_build(&c, key, &text, &len) != 0 || config_parse(&parsed, text, len) != 0)
        exit(2);
    for (int forge = 0; forge <= 1; forge++) {
        parsed.mac[3] ^= (uint8_t)forge;
        SECRET(key, sizeof(key));
        SECRET(parsed.mac, sizeof(parsed.mac));
        int rc = config_verify_mac(&parsed, key);
        PUBLIC(key, sizeof(key));
        PUBLIC(parsed.mac, sizeof(parsed.mac));
        expect(rc == (forge ? PQV_E_INTEGRITY : 0), "config_verify_mac: verdict");
        parsed.mac[3] ^= (uint8_t)forge;
    }
    config_clear(&parsed);
    free(text);
}

static void
check_keyfile_checksum(void)
{
    static const struct pqv_kdf_params cheap = { 1, 64, 1 };
    uint8_t seed[PQV_SEED_BYTES], *buf;
    size_t len, publen;
    pqv_identity *id;
    pqv_keyfile *kf;
    memset(seed, 5, sizeof(seed));
    if (pqv_identity_derive(&id, pqv_frodo_find("FrodoKEM-640-SHAKE"), seed) != 0 ||
        pqv_keyfile_create(&kf, id, seed, (const uint8_t *)"pw", 2, &cheap) != 0 ||
        pqv_keyfile_serialize(kf, &buf, &len) != 0)
        exit(2);
    pqv_keyfile_public(kf, &publen);
    pqv_keyfile_free(kf);
    pqv_identity_free(id);
    /* Secret: each slot's salt and sealed seed, and the checksum (the
     * parameters stay public: the parser branches on their range). */
    size_t slots = 8 + publen;
    for (int forge = 0; forge <= 1; forge++) {
        buf[len - 5] ^= (uint8_t)forge;
        for (int i = 0; i < 2; i++)
            SECRET(buf + slots + 92 * i + 12, 80);
        SECRET(buf + len - 32, 32);
        int rc = pqv_keyfile_parse(&kf, buf, len);
        PUBLIC(buf, len);
        expect(rc == (forge ? PQV_E_INTEGRITY : 0), "keyfile checksum: verdict");
        if (rc == 0)
            pqv_keyfile_free(kf);
        buf[len - 5] ^= (uint8_t)forge;
    }
    free(buf);
}

static void
check_recovery(void)
{
    uint8_t seed[PQV_SEED_BYTES], back[PQV_SEED_BYTES];
    char code[PQV_RECOVERY_CHARS], typed[PQV_RECOVERY_CHARS + 8];
    for (size_t i = 0; i < sizeof(seed); i++)
        seed[i] = (uint8_t)(i * 37 + 11);
    if (pqv_recovery_encode(seed, code) != 0)
        exit(2);
    for (int variant = 0; variant < 3; variant++) {
        snprintf(typed, sizeof(typed), "%s", code);
        if (variant == 1) /* lower case, aliases */
            for (char *p = typed; *p; p++)
                *p = *p == '0' ? 'o' : *p == '1' ? 'l' : (char)(*p | 0x20);
        if (variant == 2) /* a typo: checksum mismatch */
            typed[10] = typed[10] == 'A' ? 'B' : 'A';
        size_t n = strlen(typed) + 1;
        SECRET(typed, n);
        int rc = pqv_recovery_decode(typed, back);
        PUBLIC(typed, n);
        if (variant < 2) {
            expect(tainted(back, sizeof(back)), "recovery: seed not tainted");
            PUBLIC(back, sizeof(back));
            expect(rc == 0 && memcmp(back, seed, sizeof(seed)) == 0, "recovery: decode");
        } else {
            expect(rc == PQV_E_AUTH, "recovery: typo accepted");
        }
    }
}

int
main(void)
{
    check_ct_equal();
    check_aead();
    check_config_mac();
    check_keyfile_checksum();
    check_recovery();
    printf("ct_misc: ct_equal, aead (2 suites), config MAC, key file checksum, recovery code: %d failures\n",
        failures);
    return failures == 0 ? 0 : 1;
}
