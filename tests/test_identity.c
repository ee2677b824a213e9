/*
 * test_identity.c: hybrid identity derivation and file-key wrapping.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pqvault/identity.h"
#include "util/util.h"

/* Fingerprint of FrodoKEM-976-AES from seed 00 01 .. 1f (format v1). */
#define FINGERPRINT_SEED0 "pqv1-2d14bbca-dac43d1f-a5a521ed-6d529b6a-2bf51d19"

static const char *const sets[] = {
    "FrodoKEM-640-AES", "FrodoKEM-640-SHAKE", "FrodoKEM-976-AES",
    "FrodoKEM-976-SHAKE", "FrodoKEM-1344-AES", "FrodoKEM-1344-SHAKE",
};

static void
fixed_seed(uint8_t seed[32], uint8_t v)
{
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)(v + i);
}

static void
test_round_trip_every_set(void)
{
    for (size_t s = 0; s < 6; s++) {
        const pqv_frodo *kem = pqv_frodo_find(sets[s]);
        pqv_identity *id = NULL, *other = NULL;
        uint8_t seed[32], fk[32], back[32];
        REQUIRE(kem != NULL);
        size_t n = pqv_wrap_bytes(kem);
        uint8_t *w = malloc(n);
        REQUIRE(w != NULL);
        fixed_seed(seed, (uint8_t)s);
        REQUIRE(pqv_identity_derive(&id, kem, seed) == 0);
        fixed_seed(seed, (uint8_t)(s + 100));
        REQUIRE(pqv_identity_derive(&other, kem, seed) == 0);
        REQUIRE(util_random(fk, 32) == 0);
        CHECK(pqv_wrap(id, fk, (const uint8_t *)"ctx", 3, w) == 0);
        CHECK(w[0] == 1 && w[1] == pqv_frodo_id(kem));
        CHECK(pqv_unwrap(id, w, n, (const uint8_t *)"ctx", 3, back) == 0);
        CHECK_MEM(back, fk, 32);
        /* Another identity, another context, another length: rejected. */
        CHECK_EQ_INT(pqv_unwrap(other, w, n, (const uint8_t *)"ctx", 3, back), PQV_E_INTEGRITY);
        CHECK_EQ_INT(pqv_unwrap(id, w, n, (const uint8_t *)"cty", 3, back), PQV_E_INTEGRITY);
        CHECK_EQ_INT(pqv_unwrap(id, w, n - 1, (const uint8_t *)"ctx", 3, back), PQV_E_INTEGRITY);
        CHECK_EQ_INT(pqv_identity_public_bytes(kem), 34 + pqv_frodo_publickey_bytes(kem));
        pqv_identity_free(id);
        pqv_identity_free(other);
        free(w);
    }
}

/* Every modified byte of a wrapped blob (every third byte for FrodoKEM-640-SHAKE,
 * a stride through the ciphertext for the default set). */
static void
tamper_every_byte(const char *set, size_t stride)
{
    const pqv_frodo *kem = pqv_frodo_find(set);
    pqv_identity *id = NULL;
    uint8_t seed[32], fk[32], back[32];
    size_t n = pqv_wrap_bytes(kem), tried = 0, rejected = 0;
    uint8_t *w = malloc(n);

    REQUIRE(w != NULL);
    fixed_seed(seed, 7);
    REQUIRE(pqv_identity_derive(&id, kem, seed) == 0);
    REQUIRE(util_random(fk, 32) == 0);
    REQUIRE(pqv_wrap(id, fk, NULL, 0, w) == 0);
    for (size_t i = 0; i < n; i++) {
        /* Always every byte of the header, X25519 key and sealed key. */
        int edge = i < 34 + 8 || i >= n - 48 - 8;
        if (!edge && i % stride != 0)
            continue;
        w[i] ^= (uint8_t)(1u << (i % 8));
        tried++;
        if (pqv_unwrap(id, w, n, NULL, 0, back) != 0)
            rejected++;
        w[i] ^= (uint8_t)(1u << (i % 8));
    }
    CHECK_EQ_INT(rejected, tried);
    CHECK(pqv_unwrap(id, w, n, NULL, 0, back) == 0);
    CHECK_MEM(back, fk, 32);
    pqv_identity_free(id);
    free(w);
}

static void
test_tamper_640_shake(void)
{
    tamper_every_byte("FrodoKEM-640-SHAKE", 3);
}

static void
test_tamper_976_aes_sampled(void)
{
    tamper_every_byte("FrodoKEM-976-AES", 97);
}

/* X25519 points of small order give an all-zero shared secret: rejected. */
static void
test_all_zero_x25519_rejected(void)
{
    const pqv_frodo *kem = pqv_frodo_find("FrodoKEM-640-SHAKE");
    pqv_identity *id = NULL;
    uint8_t seed[32], fk[32], back[32];
    size_t n = pqv_wrap_bytes(kem);
    uint8_t *w = malloc(n);
    static const uint8_t low_order[][32] = {
        { 0 },                 /* u = 0 */
        { 1 },                 /* u = 1 */
    };

    REQUIRE(w != NULL);
    fixed_seed(seed, 9);
    REQUIRE(pqv_identity_derive(&id, kem, seed) == 0);
    REQUIRE(util_random(fk, 32) == 0);
    REQUIRE(pqv_wrap(id, fk, NULL, 0, w) == 0);
    for (size_t i = 0; i < 2; i++) {
        memcpy(w + 2, low_order[i], 32);
        CHECK_EQ_INT(pqv_unwrap(id, w, n, NULL, 0, back), PQV_E_INTEGRITY);
        CHECK(strstr(pqv_error_detail(), "X25519") != NULL);
    }
    pqv_identity_free(id);
    free(w);
}

/* Same seed, same identity; the fingerprint of a fixed seed never changes
 * (it is part of the format: users compare fingerprints). */
static void
test_deterministic_identity(void)
{
    const pqv_frodo *kem = pqv_frodo_find("FrodoKEM-976-AES");
    pqv_identity *a = NULL, *b = NULL, *c = NULL;
    uint8_t seed[32], k1[32], k2[32];
    char fa[PQV_FINGERPRINT_CHARS], fb[PQV_FINGERPRINT_CHARS];

    fixed_seed(seed, 0);
    REQUIRE(pqv_identity_derive(&a, kem, seed) == 0);
    REQUIRE(pqv_identity_derive(&b, kem, seed) == 0);
    CHECK_MEM(pqv_identity_public(a), pqv_identity_public(b), pqv_identity_public_bytes(kem));
    pqv_identity_fingerprint(a, fa);
    pqv_identity_fingerprint(b, fb);
    CHECK(strcmp(fa, fb) == 0);
    CHECK_EQ_INT(strlen(fa), PQV_FINGERPRINT_CHARS - 1);
    printf("  fingerprint of seed 00..1f: %s\n", fa);
    CHECK(strcmp(fa, FINGERPRINT_SEED0) == 0);
    CHECK(pqv_identity_derive_key(a, "catalogue/names", k1) == 0);
    CHECK(pqv_identity_derive_key(b, "catalogue/names", k2) == 0);
    CHECK_MEM(k1, k2, 32);
    CHECK(pqv_identity_derive_key(a, "catalogue/records", k2) == 0);
    CHECK(memcmp(k1, k2, 32) != 0);
    seed[31] ^= 1;
    REQUIRE(pqv_identity_derive(&c, kem, seed) == 0);
    CHECK(memcmp(pqv_identity_public(a), pqv_identity_public(c), 34) != 0);
    pqv_identity_free(a);
    pqv_identity_free(b);
    pqv_identity_free(c);
}

static void
test_bad_arguments(void)
{
    pqv_identity *id = NULL;
    uint8_t seed[32] = { 0 }, fk[32] = { 0 };
    CHECK(pqv_identity_derive(&id, NULL, seed) == PQV_E_INVAL);
    CHECK(pqv_identity_derive(NULL, pqv_frodo_find("FrodoKEM-640-AES"), seed) == PQV_E_INVAL);
    CHECK(pqv_wrap(NULL, fk, NULL, 0, fk) == PQV_E_INVAL);
    CHECK(pqv_unwrap(NULL, fk, 32, NULL, 0, fk) == PQV_E_INVAL);
    pqv_identity_free(NULL);
}

TEST_MAIN(test_round_trip_every_set, test_tamper_640_shake,
    test_tamper_976_aes_sampled, test_all_zero_x25519_rejected,
    test_deterministic_identity, test_bad_arguments)
