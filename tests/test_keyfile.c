/*
 * test_keyfile.c: the two-slot key file and the recovery code.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "pqvault/keyfile.h"
#include "pqvault/recovery.h"
#include "util/util.h"
#include "crypto/kdf.h"
#include "keys/keyfile_internal.h"

/* Recovery code of seed 00 01 .. 1f (format v1). */
#define RECOVERY_SEED0 "000G-40R4-0M30-E209-185G-R38E-1W81-24GK-2GAH-C5RR-34D1-P70X-3RFK-6C3M"
#define SHA256_FIX(buf, len) (void)kdf_sha256((buf) + (len) - 32, (buf), (len) - 32)

/* Cheap Argon2id cost so the matrix runs fast; one test uses the default. */
static const struct pqv_kdf_params cheap = { 1, 64, 2 };
static const uint8_t pass0[] = "owner passphrase";
static const uint8_t pass1[] = "escrow passphrase";
#define P0 pass0, sizeof(pass0) - 1
#define P1 pass1, sizeof(pass1) - 1

static const pqv_frodo *
kem640(void)
{
    return pqv_frodo_find("FrodoKEM-640-SHAKE");
}

static void
make_identity(uint8_t seed[32], pqv_identity **id, uint8_t v)
{
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)(v * 7 + i);
    *id = NULL;
    if (pqv_identity_derive(id, kem640(), seed) != 0)
        *id = NULL;
}

/* A serialised key file with slot 0 = pass0 and slot 1 = pass1. */
static int
make_keyfile(uint8_t **buf, size_t *len, uint8_t seed[32])
{
    pqv_identity *id;
    pqv_keyfile *kf = NULL;
    int rc;

    make_identity(seed, &id, 1);
    if (id == NULL)
        return -1;
    rc = pqv_keyfile_create(&kf, id, seed, P0, &cheap);
    if (rc == 0)
        rc = pqv_keyfile_set_slot(kf, 1, seed, P1, &cheap);
    if (rc == 0)
        rc = pqv_keyfile_serialize(kf, buf, len);
    pqv_keyfile_free(kf);
    pqv_identity_free(id);
    return rc;
}

/* Unlock a serialised key file; returns the PQV_* result. */
static int
try_unlock(const uint8_t *buf, size_t len, const uint8_t *pass, size_t passlen, int *slot)
{
    pqv_keyfile *kf = NULL;
    pqv_identity *id = NULL;
    uint8_t seed[32];
    int rc = pqv_keyfile_parse(&kf, buf, len);

    if (rc != 0)
        return rc;
    rc = pqv_keyfile_unlock(kf, pass, passlen, seed, &id, slot);
    pqv_identity_free(id);
    pqv_keyfile_free(kf);
    return rc;
}

static void
test_create_unlock_both_slots(void)
{
    uint8_t *buf = NULL, seed[32];
    size_t len;
    int slot = -1;

    REQUIRE(make_keyfile(&buf, &len, seed) == 0);
    CHECK_EQ_INT(len, 8 + 34 + pqv_frodo_publickey_bytes(kem640()) + 2 * 92 + 32);
    CHECK(memcmp(buf, "PQVK\x01\0\0\0", 8) == 0);
    CHECK_EQ_INT(try_unlock(buf, len, P0, &slot), 0);
    CHECK_EQ_INT(slot, 0);
    CHECK_EQ_INT(try_unlock(buf, len, P1, &slot), 0);
    CHECK_EQ_INT(slot, 1);
    CHECK_EQ_INT(try_unlock(buf, len, (const uint8_t *)"wrong", 5, &slot), PQV_E_AUTH);
    CHECK_EQ_INT(try_unlock(buf, len, (const uint8_t *)"", 0, &slot), PQV_E_AUTH);
    free(buf);
}

static void
test_change_and_clear_slot(void)
{
    uint8_t seed[32], back[32];
    pqv_identity *id, *got = NULL;
    pqv_keyfile *kf = NULL;
    int slot;

    make_identity(seed, &id, 2);
    REQUIRE(id != NULL);
    REQUIRE(pqv_keyfile_create(&kf, id, seed, P0, &cheap) == 0);
    /* Slot 1 starts unused: pass1 does not open it. */
    CHECK_EQ_INT(pqv_keyfile_unlock(kf, P1, back, &got, &slot), PQV_E_AUTH);
    CHECK(pqv_keyfile_set_slot(kf, 1, seed, P1, &cheap) == 0);
    CHECK_EQ_INT(pqv_keyfile_unlock(kf, P1, back, &got, &slot), 0);
    CHECK_EQ_INT(slot, 1);
    CHECK_MEM(back, seed, 32);
    pqv_identity_free(got);
    got = NULL;
    /* Change slot 0: the old passphrase stops working, slot 1 still works. */
    CHECK(pqv_keyfile_set_slot(kf, 0, seed, (const uint8_t *)"new", 3, &cheap) == 0);
    CHECK_EQ_INT(pqv_keyfile_unlock(kf, P0, back, &got, &slot), PQV_E_AUTH);
    CHECK_EQ_INT(pqv_keyfile_unlock(kf, (const uint8_t *)"new", 3, back, &got, &slot), 0);
    pqv_identity_free(got);
    got = NULL;
    CHECK_EQ_INT(pqv_keyfile_unlock(kf, P1, back, &got, &slot), 0);
    pqv_identity_free(got);
    got = NULL;
    /* Clearing slot 1 leaves the default shape. */
    CHECK(pqv_keyfile_clear_slot(kf, 1) == 0);
    struct pqv_kdf_params p = pqv_keyfile_slot_params(kf, 1);
    CHECK(p.t_cost == 3 && p.m_kib == 65536 && p.lanes == 4);
    CHECK(pqv_keyfile_set_slot(kf, 2, seed, P0, &cheap) == PQV_E_INVAL);
    CHECK(pqv_keyfile_clear_slot(kf, -1) == PQV_E_INVAL);
    pqv_keyfile_free(kf);
    pqv_identity_free(id);
}

/* Default parameters (t=3, m=64 MiB, p=4) and the on-disk round trip. */
static void
test_default_params_and_file(void)
{
    uint8_t seed[32], back[32];
    pqv_identity *id, *got = NULL;
    pqv_keyfile *kf = NULL, *loaded = NULL;
    char dir[] = "/tmp/pqv-keyfile-XXXXXX", path[256];
    int slot;

    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/key", dir);
    make_identity(seed, &id, 3);
    REQUIRE(id != NULL);
    REQUIRE(pqv_keyfile_create(&kf, id, seed, P0, NULL) == 0);
    struct pqv_kdf_params p = pqv_keyfile_slot_params(kf, 0);
    CHECK(p.t_cost == 3 && p.m_kib == 65536 && p.lanes == 4);
    CHECK(pqv_keyfile_save(path, kf) == 0);
    CHECK_EQ_INT(pqv_keyfile_load("/nonexistent/pqv/key", &loaded), PQV_E_NOTFOUND);
    REQUIRE(pqv_keyfile_load(path, &loaded) == 0);
    CHECK_EQ_INT(pqv_keyfile_unlock(loaded, P0, back, &got, &slot), 0);
    CHECK_MEM(back, seed, 32);
    CHECK_MEM(pqv_identity_public(got), pqv_identity_public(id), pqv_identity_public_bytes(kem640()));
    pqv_identity_free(got);
    pqv_keyfile_free(loaded);
    pqv_keyfile_free(kf);
    pqv_identity_free(id);
    unlink(path);
    rmdir(dir);
}

/* Recompute the trailing checksum after an edit (a deliberate forger). */
static void
fix_checksum(uint8_t *buf, size_t len)
{
    SHA256_FIX(buf, len);
}

static void
test_tampering_rejected(void)
{
    uint8_t *buf = NULL, *mut, seed[32];
    size_t len;
    int slot;

    REQUIRE(make_keyfile(&buf, &len, seed) == 0);
    REQUIRE((mut = malloc(len + 16)) != NULL);
    size_t publen = 34 + pqv_frodo_publickey_bytes(kem640());
    size_t slots = 8 + publen;
    /* Every region: magic, version, reserved, kem id, X25519 key, FrodoKEM
     * key, slot parameters, salt, sealed seed, tag, trailer. */
    size_t positions[] = { 0, 4, 6, 8, 9, 10, 8 + 34 + 100, slots - 1, slots + 2,
        slots + 12, slots + 44, slots + 91, slots + 92 + 50, len - 32, len - 1 };
    for (size_t i = 0; i < sizeof(positions) / sizeof(positions[0]); i++) {
        memcpy(mut, buf, len);
        mut[positions[i]] ^= 0x04;
        int rc = try_unlock(mut, len, P0, &slot);
        CHECK(rc == PQV_E_INTEGRITY || rc == PQV_E_UNSUPPORTED);
        if (rc == 0)
            fprintf(stderr, "  flip at %zu accepted\n", positions[i]);
    }
    /* Truncated at many lengths, extended, empty. */
    for (size_t cut = 0; cut < len; cut += len / 37 + 1)
        CHECK_EQ_INT(try_unlock(buf, cut, P0, &slot), PQV_E_INTEGRITY);
    CHECK_EQ_INT(try_unlock(buf, len - 1, P0, &slot), PQV_E_INTEGRITY);
    memcpy(mut, buf, len);
    mut[len] = 0;
    CHECK_EQ_INT(try_unlock(mut, len + 1, P0, &slot), PQV_E_INTEGRITY);

    /* A forger who fixes the checksum: a modified public key or slot still
     * cannot be unlocked (header and parameters are the slots' AD). */
    memcpy(mut, buf, len);
    mut[8 + 34 + 5] ^= 1;
    fix_checksum(mut, len);
    CHECK_EQ_INT(try_unlock(mut, len, P0, &slot), PQV_E_AUTH);
    CHECK_EQ_INT(try_unlock(mut, len, P1, &slot), PQV_E_AUTH);
    memcpy(mut, buf, len);
    util_store_be32(mut + slots, 2); /* t = 2 instead of 1 */
    fix_checksum(mut, len);
    CHECK_EQ_INT(try_unlock(mut, len, P0, &slot), PQV_E_AUTH);
    CHECK_EQ_INT(try_unlock(mut, len, P1, &slot), 0); /* other slot intact */
    /* Out-of-range parameters are refused before any work is done. */
    memcpy(mut, buf, len);
    util_store_be32(mut + slots + 4, 0xFFFFFFFFu);
    fix_checksum(mut, len);
    CHECK_EQ_INT(try_unlock(mut, len, P0, &slot), PQV_E_INTEGRITY);
    memcpy(mut, buf, len);
    mut[9] = 42; /* unknown KEM */
    fix_checksum(mut, len);
    CHECK_EQ_INT(try_unlock(mut, len, P0, &slot), PQV_E_INTEGRITY);
    memcpy(mut, buf, len);
    mut[4] = 2; /* future version */
    fix_checksum(mut, len);
    CHECK_EQ_INT(try_unlock(mut, len, P0, &slot), PQV_E_UNSUPPORTED);
    free(mut);
    free(buf);
}

/* A key file whose public part belongs to another seed, with slots sealed
 * correctly for that header: unlock must refuse it. */
static void
test_substituted_public_key(void)
{
    uint8_t seed_a[32], seed_b[32], back[32];
    pqv_identity *a, *b, *got = NULL;
    pqv_keyfile *kf = NULL;
    int slot;

    make_identity(seed_a, &a, 4);
    make_identity(seed_b, &b, 5);
    REQUIRE(a != NULL && b != NULL);
    /* Header of B, seed of A. */
    REQUIRE(pqv_keyfile_create(&kf, b, seed_a, P0, &cheap) == 0);
    CHECK_EQ_INT(pqv_keyfile_unlock(kf, P0, back, &got, &slot), PQV_E_INTEGRITY);
    CHECK(got == NULL);
    CHECK(strstr(pqv_error_detail(), "does not match") != NULL);
    pqv_keyfile_free(kf);
    pqv_identity_free(a);
    pqv_identity_free(b);
}

static void
test_recovery_round_trip(void)
{
    uint8_t seed[32], back[32];
    char code[PQV_RECOVERY_CHARS];

    for (int t = 0; t < 50; t++) {
        REQUIRE(util_random(seed, 32) == 0);
        REQUIRE(pqv_recovery_encode(seed, code) == 0);
        CHECK_EQ_INT(strlen(code), 69);
        CHECK(pqv_recovery_decode(code, back) == 0);
        CHECK_MEM(back, seed, 32);
    }
    /* A fixed vector pins the format. */
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)i;
    REQUIRE(pqv_recovery_encode(seed, code) == 0);
    printf("  recovery code of 00..1f: %s\n", code);
    CHECK(strcmp(code, RECOVERY_SEED0) == 0);
}

static void
test_recovery_lenient_input(void)
{
    uint8_t seed[32], back[32];
    char code[PQV_RECOVERY_CHARS], alt[200];
    size_t j = 0;

    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)(255 - i);
    REQUIRE(pqv_recovery_encode(seed, code) == 0);
    /* Lower case, spaces instead of dashes, and O/I/L typed for 0/1. */
    for (size_t i = 0; code[i] != '\0'; i++) {
        char c = code[i];
        if (c == '-')
            c = ' ';
        else if (c == '0')
            c = 'o';
        else if (c == '1')
            c = (i % 2) ? 'I' : 'l';
        else if (c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        alt[j++] = c;
    }
    alt[j++] = '\n';
    alt[j] = '\0';
    CHECK(pqv_recovery_decode(alt, back) == 0);
    CHECK_MEM(back, seed, 32);
}

static void
test_recovery_typos_detected(void)
{
    static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    uint8_t seed[32], back[32];
    char code[PQV_RECOVERY_CHARS], mut[PQV_RECOVERY_CHARS + 8];
    int tried = 0, caught = 0;

    REQUIRE(util_random(seed, 32) == 0);
    REQUIRE(pqv_recovery_encode(seed, code) == 0);
    /* Every single-symbol substitution. */
    for (size_t i = 0; code[i] != '\0'; i++) {
        if (code[i] == '-')
            continue;
        for (int k = 0; k < 32; k++) {
            if (alphabet[k] == code[i])
                continue;
            memcpy(mut, code, sizeof(code));
            mut[i] = alphabet[k];
            tried++;
            if (pqv_recovery_decode(mut, back) == PQV_E_AUTH)
                caught++;
        }
    }
    CHECK_EQ_INT(caught, tried);
    /* Adjacent transpositions. */
    for (size_t i = 0; code[i + 1] != '\0'; i++) {
        if (code[i] == '-' || code[i + 1] == '-' || code[i] == code[i + 1])
            continue;
        memcpy(mut, code, sizeof(code));
        mut[i] = code[i + 1];
        mut[i + 1] = code[i];
        CHECK_EQ_INT(pqv_recovery_decode(mut, back), PQV_E_AUTH);
    }
    /* Missing, extra and invalid symbols. */
    memcpy(mut, code, sizeof(code));
    mut[strlen(mut) - 1] = '\0';
    CHECK_EQ_INT(pqv_recovery_decode(mut, back), PQV_E_AUTH);
    CHECK(strstr(pqv_error_detail(), "55 symbols") != NULL);
    snprintf(mut, sizeof(mut), "%sA", code);
    CHECK_EQ_INT(pqv_recovery_decode(mut, back), PQV_E_AUTH);
    memcpy(mut, code, sizeof(code));
    mut[0] = 'U';
    CHECK_EQ_INT(pqv_recovery_decode(mut, back), PQV_E_AUTH);
    CHECK(strstr(pqv_error_detail(), "invalid character") != NULL);
    mut[0] = '*';
    CHECK_EQ_INT(pqv_recovery_decode(mut, back), PQV_E_AUTH);
    CHECK_EQ_INT(pqv_recovery_decode("", back), PQV_E_AUTH);
}

/* ---- the reader's Argon2id limit (issue 9) ---- */

/* Which slots an unlock computes, and whether at once. */
static void
test_kdf_plan(void)
{
    const struct pqv_kdf_params def = pqv_kdf_default;
    const struct pqv_kdf_params big = { 64, 4u << 20, 4 }, t17 = { 17, 65536, 4 };
    const struct pqv_kdf_params half = { 3, 600u << 10, 4 }, gib = { 16, 1u << 20, 4 };
    const struct pqv_kdf_limit lim64 = { 65536, 3 }, lim32 = { 32768, 3 };
    struct pqv_kdf_params p[2];
    int run[2], conc;

    p[0] = def, p[1] = def;     /* 2 x 64 MiB within 1 GiB: at once */
    CHECK_EQ_INT(keyfile_plan(p, NULL, run, &conc), 2);
    CHECK(run[0] && run[1] && conc);
    p[0] = half, p[1] = half;   /* 2 x 600 MiB: each allowed, not together */
    CHECK_EQ_INT(keyfile_plan(p, NULL, run, &conc), 2);
    CHECK(run[0] && run[1] && !conc);
    p[0] = gib, p[1] = def;     /* exactly at the limit, plus 64 MiB */
    CHECK_EQ_INT(keyfile_plan(p, NULL, run, &conc), 2);
    CHECK(run[0] && run[1] && !conc);
    p[0] = def, p[1] = big;     /* 4 GiB, t=64: never computed */
    CHECK_EQ_INT(keyfile_plan(p, NULL, run, &conc), 1);
    CHECK(run[0] && !run[1] && conc);
    p[0] = t17, p[1] = def;     /* t above 16 */
    CHECK_EQ_INT(keyfile_plan(p, NULL, run, &conc), 1);
    CHECK(!run[0] && run[1]);
    p[0] = big, p[1] = big;
    CHECK_EQ_INT(keyfile_plan(p, NULL, run, &conc), 0);
    CHECK(!run[0] && !run[1]);
    CHECK_EQ_INT(keyfile_plan(p, &(struct pqv_kdf_limit){ 4u << 20, 64 }, run, &conc), 2);
    CHECK(run[0] && run[1] && !conc);
    p[0] = def, p[1] = def;     /* a lower limit: each slot, one after the other */
    CHECK_EQ_INT(keyfile_plan(p, &lim64, run, &conc), 2);
    CHECK(run[0] && run[1] && !conc);
    CHECK_EQ_INT(keyfile_plan(p, &lim32, run, &conc), 0);
    CHECK(pqv_kdf_within_limit(&def, NULL) && pqv_kdf_within_limit(&gib, NULL));
    CHECK(!pqv_kdf_within_limit(&t17, NULL) && !pqv_kdf_within_limit(&big, NULL));
}

/* set_slot_cost(buf, len, slot, t, m): forge a slot's cost (and fix the
 * checksum, as a deliberate forger would). */
static void
set_slot_cost(uint8_t *buf, size_t len, int slot, uint32_t t, uint32_t m)
{
    uint8_t *p = buf + len - 32 - 2 * 92 + (size_t)slot * 92;

    util_store_be32(p, t);
    util_store_be32(p + 4, m);
    fix_checksum(buf, len);
}

/* unlock_limited(buf, len, pass, passlen, limit, slot): parse and unlock. */
static int
unlock_limited(const uint8_t *buf, size_t len, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_limit *limit, int *slot)
{
    pqv_keyfile *kf = NULL;
    pqv_identity *id = NULL;
    uint8_t seed[32];
    int rc = pqv_keyfile_parse(&kf, buf, len);

    if (rc != 0)
        return rc;
    rc = pqv_keyfile_unlock_limited(kf, pass, passlen, limit, seed, &id, slot);
    pqv_identity_free(id);
    pqv_keyfile_free(kf);
    return rc;
}

/* A forged cost is refused (PQV_E_LIMIT, naming the slot and the cost)
 * without computing it; the other slot still opens. */
static void
test_kdf_limit_forged_slots(void)
{
    uint8_t *buf = NULL, seed[32];
    size_t len;
    int slot = -1;

    REQUIRE(make_keyfile(&buf, &len, seed) == 0);
    /* Slot 1 asks 4 GiB and 64 passes: slot 0 opens, slot 1 is skipped
     * (computing it would allocate 4 GiB and take minutes; tests/cli/
     * kdf_limit.sh runs the program under an address-space limit). */
    set_slot_cost(buf, len, 1, 64, 4u << 20);
    CHECK_EQ_INT(unlock_limited(buf, len, P0, NULL, &slot), 0);
    CHECK_EQ_INT(slot, 0);
    pqv_error_clear();
    CHECK_EQ_INT(unlock_limited(buf, len, P1, NULL, &slot), PQV_E_LIMIT);
    CHECK(strstr(pqv_error_last()->reason, "wrong passphrase for slot 0") != NULL);
    CHECK(strstr(pqv_error_last()->reason, "slot 1 (Argon2id m=4194304 KiB, t=64)") != NULL);
    CHECK(strstr(pqv_error_last()->reason, "limit (m=1048576 KiB, t=16)") != NULL);
    /* Both forged: refused before any Argon2id work. */
    set_slot_cost(buf, len, 0, 64, 4u << 20);
    pqv_error_clear();
    CHECK_EQ_INT(unlock_limited(buf, len, P0, NULL, &slot), PQV_E_LIMIT);
    CHECK(strstr(pqv_error_last()->reason, "slot 0 (Argon2id m=4194304 KiB, t=64) and slot 1") != NULL);
    CHECK_EQ_INT(try_unlock(buf, len, P0, &slot), PQV_E_LIMIT);
    free(buf);

    /* A legitimate slot above the default limit opens with a raised one. */
    REQUIRE(make_keyfile(&buf, &len, seed) == 0);
    const struct pqv_kdf_limit low = { 32, 1 }, enough = { 64, 1 };
    CHECK_EQ_INT(unlock_limited(buf, len, P1, &low, &slot), PQV_E_LIMIT);
    CHECK_EQ_INT(unlock_limited(buf, len, P1, &enough, &slot), 0);
    CHECK_EQ_INT(slot, 1);
    CHECK_EQ_INT(unlock_limited(buf, len, (const uint8_t *)"wrong", 5, &enough, &slot), PQV_E_AUTH);
    free(buf);
}

TEST_MAIN(test_create_unlock_both_slots, test_change_and_clear_slot,
    test_default_params_and_file, test_tampering_rejected,
    test_substituted_public_key, test_recovery_round_trip,
    test_recovery_lenient_input, test_recovery_typos_detected, test_kdf_plan,
    test_kdf_limit_forged_slots)
