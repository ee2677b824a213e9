/*
 * test_frodo.c: FrodoKEM tests: the shared known-answer vectors (entries
 * 0-9, byte-exact, on the AVX2 and the portable path), the full official
 * 100-entry KAT regenerated with a NIST AES-256-CTR DRBG and checked by
 * SHA-256 digest, implicit rejection, bad arguments and randomised round
 * trips.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "harness.h"
#include "pqvault/frodo.h"
#include "crypto/cpu.h"
#include "crypto/frodo_internal.h"

static const char *const set_names[6] = { "FrodoKEM-640-AES",
    "FrodoKEM-640-SHAKE", "FrodoKEM-976-AES", "FrodoKEM-976-SHAKE",
    "FrodoKEM-1344-AES", "FrodoKEM-1344-SHAKE" };

/* SHA-256 of the official 100-entry .rsp files (see ../shared/kat/README). */
static const char *const rsp_digests[6] = {
    "4be710122f3e086e3c74e05e10e1bffa216b96b8cc827ecadf75bd9ed12a613b",
    "fa106539a52e6471e53fcebf4d1405dc57c37abd55673d9de169cb7af56ba993",
    "6b3a1dd645c74095dc79dcde524bf5596c761ae1f2dbefdf3a1df55700461107",
    "57a952206ee7058482b5490b8f18c5e6ac43d6ffc416639e4dcf8926f1f8ed9c",
    "fddacddcae214d7c578ca311abe692bd0e6234fbf45fe9bcd5aa9867a7eebd5b",
    "68f8cc3c39c631a0b8652c6071d49aebb6cb7ec1b49ee94b24270a4b8c3e0033",
};

/* Buffers big enough for every parameter set (1344 is the largest). */
struct bufs {
    uint8_t *pk, *sk, *ct, *ss, *ss2;
};

static struct bufs
bufs_new(void)
{
    struct bufs b = { malloc(21520), malloc(43088), malloc(21696),
        malloc(32), malloc(32) };
    return b;
}

static void
bufs_free(struct bufs *b)
{
    free(b->pk);
    free(b->sk);
    free(b->ct);
    free(b->ss);
    free(b->ss2);
}

/* ---- NIST AES-256-CTR DRBG (as in the NIST PQC rng.c) ----------------- */

struct drbg {
    uint8_t key[32], v[16];
};

/* v += 1 as a 128-bit big-endian counter. */
static void
drbg_increment(uint8_t v[16])
{
    for (int i = 15; i >= 0; i--)
        if (++v[i] != 0)
            break;
}

static void
aes256_block(const uint8_t key[32], const uint8_t in[16], uint8_t out[16])
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int len = 0;

    if (c == NULL || EVP_EncryptInit_ex(c, EVP_aes_256_ecb(), NULL, key, NULL) != 1 ||
        EVP_CIPHER_CTX_set_padding(c, 0) != 1 ||
        EVP_EncryptUpdate(c, out, &len, in, 16) != 1 || len != 16) {
        fprintf(stderr, "AES-256 failed\n");
        abort();
    }
    EVP_CIPHER_CTX_free(c);
}

/* CTR_DRBG_Update: three counter blocks, XOR provided data, new key || V. */
static void
drbg_update(struct drbg *d, const uint8_t *provided /* 48 bytes or NULL */)
{
    uint8_t temp[48];

    for (int i = 0; i < 3; i++) {
        drbg_increment(d->v);
        aes256_block(d->key, d->v, temp + 16 * i);
    }
    if (provided != NULL)
        for (int i = 0; i < 48; i++)
            temp[i] ^= provided[i];
    memcpy(d->key, temp, 32);
    memcpy(d->v, temp + 32, 16);
}

/* randombytes_init(entropy, NULL, 256) */
static void
drbg_init(struct drbg *d, const uint8_t entropy[48])
{
    memset(d->key, 0, sizeof(d->key));
    memset(d->v, 0, sizeof(d->v));
    drbg_update(d, entropy);
}

/* randombytes(out, len): one request. */
static void
drbg_bytes(struct drbg *d, uint8_t *out, size_t len)
{
    uint8_t block[16];

    while (len > 0) {
        drbg_increment(d->v);
        aes256_block(d->key, d->v, block);
        size_t take = len < 16 ? len : 16;
        memcpy(out, block, take);
        out += take;
        len -= take;
    }
    drbg_update(d, NULL);
}

/* ---- Hex and KAT file parsing ----------------------------------------- */

static void
hex_upper(char *out, const uint8_t *in, size_t n)
{
    static const char digits[] = "0123456789ABCDEF";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static int
hex_nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static char *
read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long len;

    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len + 1);
    if (buf != NULL && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    if (buf != NULL)
        buf[len] = '\0';
    fclose(f);
    return buf;
}

/*
 * kat_field(text, count, field, out, n): decode the ${n}-byte field
 * ${field} of entry ${count} in a KAT file's ${text}; 0 or -1 (missing,
 * wrong length, bad hex).
 */
static int
kat_field(const char *text, int count, const char *field, uint8_t *out, size_t n)
{
    char key[64];
    const char *entry, *line, *end;

    snprintf(key, sizeof(key), "count = %d\n", count);
    if ((entry = strstr(text, key)) == NULL)
        return -1;
    end = strstr(entry + strlen(key), "count = ");
    snprintf(key, sizeof(key), "\n%s = ", field);
    if ((line = strstr(entry, key)) == NULL || (end != NULL && line > end))
        return -1;
    line += strlen(key);
    for (size_t i = 0; i < n; i++) {
        int hi = hex_nibble(line[2 * i]), lo = hex_nibble(line[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return line[2 * n] == '\n' ? 0 : -1;
}

/* ---- 1. Shared known-answer vectors, entries 0-9 ---------------------- */

/* Check entries 0-9 of one set against ${text}; returns nothing, CHECKs. */
static void
check_kat_set(const pqv_frodo *p, const char *text)
{
    size_t pkl = pqv_frodo_publickey_bytes(p), skl = pqv_frodo_secretkey_bytes(p);
    size_t ctl = pqv_frodo_ciphertext_bytes(p), ssl = pqv_frodo_sharedsecret_bytes(p);
    size_t kcl = pqv_frodo_keypair_coins_bytes(p), ecl = pqv_frodo_encaps_coins_bytes(p);
    struct bufs want = bufs_new(), got = bufs_new();
    uint8_t seed[48], kc[112], ec[96], drbg_kc[112], drbg_ec[96];

    for (int count = 0; count < 10; count++) {
        int parsed = kat_field(text, count, "seed", seed, 48) == 0 &&
            kat_field(text, count, "keygen_coins", kc, kcl) == 0 &&
            kat_field(text, count, "encaps_coins", ec, ecl) == 0 &&
            kat_field(text, count, "pk", want.pk, pkl) == 0 &&
            kat_field(text, count, "sk", want.sk, skl) == 0 &&
            kat_field(text, count, "ct", want.ct, ctl) == 0 &&
            kat_field(text, count, "ss", want.ss, ssl) == 0;
        CHECK(parsed);
        if (!parsed)
            break;
        /* The DRBG of test 2 must reproduce the recorded coins. */
        struct drbg d;
        drbg_init(&d, seed);
        drbg_bytes(&d, drbg_kc, kcl);
        drbg_bytes(&d, drbg_ec, ecl);
        CHECK_MEM(drbg_kc, kc, kcl);
        CHECK_MEM(drbg_ec, ec, ecl);

        CHECK_EQ_INT(pqv_frodo_keypair_derand(p, got.pk, got.sk, kc), 0);
        CHECK_MEM(got.pk, want.pk, pkl);
        CHECK_MEM(got.sk, want.sk, skl);
        CHECK_EQ_INT(pqv_frodo_encaps_derand(p, got.ct, got.ss, want.pk, ec), 0);
        CHECK_MEM(got.ct, want.ct, ctl);
        CHECK_MEM(got.ss, want.ss, ssl);
        CHECK_EQ_INT(pqv_frodo_decaps(p, got.ss2, want.ct, want.sk), 0);
        CHECK_MEM(got.ss2, want.ss, ssl);
    }
    bufs_free(&want);
    bufs_free(&got);
}

/* Run the shared vectors on the default path and the portable path. */
static void
test_kat_files(void)
{
    const char *dir = harness_kat_dir();
    char path[4096];

    if (dir == NULL) {
        printf("# ../shared/kat absent: KAT file comparison skipped\n");
        return;
    }
    for (int i = 0; i < 6; i++) {
        const pqv_frodo *p = pqv_frodo_find(set_names[i]);
        REQUIRE(p != NULL);
        snprintf(path, sizeof(path), "%s/frodokem/%s.txt", dir, set_names[i]);
        char *text = read_file(path);
        CHECK(text != NULL);
        if (text == NULL)
            continue;
        for (int portable = 0; portable <= 1; portable++) {
            cpu_force_portable(portable);
            check_kat_set(p, text);
        }
        cpu_force_portable(0);
        free(text);
    }
}

/* ---- 2. Full official KAT regenerated, checked by digest -------------- */

/* Feed "name = HEX\n" to the digest. */
static void
rsp_line(EVP_MD_CTX *sha, char *hex, const char *name, const uint8_t *v, size_t n)
{
    hex_upper(hex, v, n);
    EVP_DigestUpdate(sha, name, strlen(name));
    EVP_DigestUpdate(sha, " = ", 3);
    EVP_DigestUpdate(sha, hex, 2 * n);
    EVP_DigestUpdate(sha, "\n", 1);
}

/*
 * rsp_digest(p, hexdigest): regenerate the 100-entry .rsp file of ${p} the
 * way the NIST PQCgenKAT_kem program does and write its SHA-256 in hex.
 */
static void
rsp_digest(const pqv_frodo *p, char hexdigest[65])
{
    size_t pkl = pqv_frodo_publickey_bytes(p), skl = pqv_frodo_secretkey_bytes(p);
    size_t ctl = pqv_frodo_ciphertext_bytes(p), ssl = pqv_frodo_sharedsecret_bytes(p);
    struct bufs b = bufs_new();
    uint8_t entropy[48], seeds[100][48], coins[112], md[32];
    char *hex = malloc(2 * 43088 + 1);
    unsigned mdlen = 0;
    struct drbg d;
    EVP_MD_CTX *sha = EVP_MD_CTX_new();

    for (int i = 0; i < 48; i++)
        entropy[i] = (uint8_t)i;
    drbg_init(&d, entropy);
    for (int i = 0; i < 100; i++)
        drbg_bytes(&d, seeds[i], 48);

    EVP_DigestInit_ex(sha, EVP_sha256(), NULL);
    for (int i = 0; i < 100; i++) {
        char count[32];
        int ok = 1;
        if (i > 0)
            EVP_DigestUpdate(sha, "\n", 1);
        snprintf(count, sizeof(count), "count = %d\n", i);
        EVP_DigestUpdate(sha, count, strlen(count));
        rsp_line(sha, hex, "seed", seeds[i], 48);

        drbg_init(&d, seeds[i]);
        drbg_bytes(&d, coins, pqv_frodo_keypair_coins_bytes(p));
        ok &= pqv_frodo_keypair_derand(p, b.pk, b.sk, coins) == 0;
        drbg_bytes(&d, coins, pqv_frodo_encaps_coins_bytes(p));
        ok &= pqv_frodo_encaps_derand(p, b.ct, b.ss, b.pk, coins) == 0;
        ok &= pqv_frodo_decaps(p, b.ss2, b.ct, b.sk) == 0;
        CHECK(ok);
        CHECK_MEM(b.ss, b.ss2, ssl);
        rsp_line(sha, hex, "pk", b.pk, pkl);
        rsp_line(sha, hex, "sk", b.sk, skl);
        rsp_line(sha, hex, "ct", b.ct, ctl);
        rsp_line(sha, hex, "ss", b.ss, ssl);
    }
    EVP_DigestFinal_ex(sha, md, &mdlen);
    for (unsigned i = 0; i < 32; i++)
        snprintf(hexdigest + 2 * i, 3, "%02x", md[i]);
    EVP_MD_CTX_free(sha);
    free(hex);
    bufs_free(&b);
}

static void
test_full_kat_digest(void)
{
    char got[65];

    for (int i = 0; i < 6; i++) {
        const pqv_frodo *p = pqv_frodo_find(set_names[i]);
        REQUIRE(p != NULL);
        rsp_digest(p, got);
        if (strcmp(got, rsp_digests[i]) != 0) {
            fprintf(stderr, "  %s: .rsp digest %s, want %s\n", set_names[i],
                got, rsp_digests[i]);
            CHECK(strcmp(got, rsp_digests[i]) == 0);
        }
    }
}

/* ---- 3. Implicit rejection -------------------------------------------- */

/* The rejection secret SHAKE(ct || s) computed independently of the code
 * under test: SHAKE128 for 640, SHAKE256 otherwise, s = first bytes of sk. */
static void
rejection_secret(const pqv_frodo *p, uint8_t *out, const uint8_t *ct,
    const uint8_t *sk)
{
    size_t ssl = pqv_frodo_sharedsecret_bytes(p);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    const EVP_MD *md = strstr(pqv_frodo_name(p), "-640-") != NULL
        ? EVP_shake128() : EVP_shake256();

    EVP_DigestInit_ex(c, md, NULL);
    EVP_DigestUpdate(c, ct, pqv_frodo_ciphertext_bytes(p));
    EVP_DigestUpdate(c, sk, ssl);
    EVP_DigestFinalXOF(c, out, ssl);
    EVP_MD_CTX_free(c);
}

static void
test_implicit_rejection(void)
{
    struct bufs b = bufs_new();
    uint8_t kc[112], ec[96], rej[32];

    for (size_t i = 0; i < sizeof(kc); i++)
        kc[i] = (uint8_t)(3 * i + 1);
    for (size_t i = 0; i < sizeof(ec); i++)
        ec[i] = (uint8_t)(7 * i + 5);
    for (int s = 0; s < 6; s++) {
        const pqv_frodo *p = pqv_frodo_find(set_names[s]);
        REQUIRE(p != NULL);
        size_t ctl = pqv_frodo_ciphertext_bytes(p), ssl = pqv_frodo_sharedsecret_bytes(p);
        size_t n = pqv_frodo_publickey_bytes(p) - 16; /* = |c1| */
        size_t salt_len = pqv_frodo_encaps_coins_bytes(p) - ssl;
        /* One bit in B' (c1), one in C (c2), one in the salt. */
        size_t offsets[3] = { 17, n + 3, ctl - salt_len + 1 };

        REQUIRE(pqv_frodo_keypair_derand(p, b.pk, b.sk, kc) == 0);
        REQUIRE(pqv_frodo_encaps_derand(p, b.ct, b.ss, b.pk, ec) == 0);
        CHECK_EQ_INT(pqv_frodo_decaps(p, b.ss2, b.ct, b.sk), 0);
        CHECK_MEM(b.ss2, b.ss, ssl);
        for (int k = 0; k < 3; k++) {
            b.ct[offsets[k]] ^= 0x10;
            CHECK_EQ_INT(pqv_frodo_decaps(p, b.ss2, b.ct, b.sk), 0);
            rejection_secret(p, rej, b.ct, b.sk);
            CHECK_MEM(b.ss2, rej, ssl);
            CHECK(memcmp(b.ss2, b.ss, ssl) != 0);
            b.ct[offsets[k]] ^= 0x10;
        }
    }
    bufs_free(&b);
}

/* ---- 4. Bad arguments and lookup -------------------------------------- */

static void
test_bad_arguments(void)
{
    struct bufs b = bufs_new();
    uint8_t coins[112] = { 0 };
    const pqv_frodo *p = pqv_frodo_find("FrodoKEM-640-SHAKE");

    REQUIRE(p != NULL);
    for (int i = 0; i < 6; i++) {
        const pqv_frodo *q = pqv_frodo_find(set_names[i]);
        CHECK(q != NULL);
        CHECK(q != NULL && strcmp(pqv_frodo_name(q), set_names[i]) == 0);
        CHECK_EQ_INT(pqv_frodo_id(q), i + 1);
        CHECK(pqv_frodo_by_id((uint8_t)(i + 1)) == q);
    }
    CHECK(pqv_frodo_find(NULL) == NULL);
    CHECK(pqv_frodo_find("") == NULL);
    CHECK(pqv_frodo_find("FrodoKEM-640") == NULL);
    CHECK(pqv_frodo_find("frodokem-640-aes") == NULL);
    CHECK(pqv_frodo_find("eFrodoKEM-640-AES") == NULL);
    CHECK(pqv_frodo_find("FrodoKEM-640-AES ") == NULL);
    CHECK(pqv_frodo_by_id(0) == NULL);
    CHECK(pqv_frodo_by_id(7) == NULL);
    CHECK(pqv_frodo_name(NULL) == NULL);
    CHECK_EQ_INT(pqv_frodo_id(NULL), 0);
    CHECK_EQ_INT(pqv_frodo_publickey_bytes(NULL), 0);

    CHECK(pqv_frodo_keypair_derand(NULL, b.pk, b.sk, coins) != 0);
    CHECK(pqv_frodo_keypair_derand(p, NULL, b.sk, coins) != 0);
    CHECK(pqv_frodo_keypair_derand(p, b.pk, NULL, coins) != 0);
    CHECK(pqv_frodo_keypair_derand(p, b.pk, b.sk, NULL) != 0);
    CHECK(pqv_frodo_keypair(NULL, b.pk, b.sk) != 0);
    CHECK(pqv_frodo_keypair(p, NULL, b.sk) != 0);
    CHECK(pqv_frodo_keypair(p, b.pk, NULL) != 0);
    REQUIRE(pqv_frodo_keypair(p, b.pk, b.sk) == 0);
    CHECK(pqv_frodo_encaps_derand(NULL, b.ct, b.ss, b.pk, coins) != 0);
    CHECK(pqv_frodo_encaps_derand(p, NULL, b.ss, b.pk, coins) != 0);
    CHECK(pqv_frodo_encaps_derand(p, b.ct, NULL, b.pk, coins) != 0);
    CHECK(pqv_frodo_encaps_derand(p, b.ct, b.ss, NULL, coins) != 0);
    CHECK(pqv_frodo_encaps_derand(p, b.ct, b.ss, b.pk, NULL) != 0);
    CHECK(pqv_frodo_encaps(NULL, b.ct, b.ss, b.pk) != 0);
    CHECK(pqv_frodo_encaps(p, NULL, b.ss, b.pk) != 0);
    CHECK(pqv_frodo_encaps(p, b.ct, NULL, b.pk) != 0);
    CHECK(pqv_frodo_encaps(p, b.ct, b.ss, NULL) != 0);
    REQUIRE(pqv_frodo_encaps(p, b.ct, b.ss, b.pk) == 0);
    CHECK(pqv_frodo_decaps(NULL, b.ss2, b.ct, b.sk) != 0);
    CHECK(pqv_frodo_decaps(p, NULL, b.ct, b.sk) != 0);
    CHECK(pqv_frodo_decaps(p, b.ss2, NULL, b.sk) != 0);
    CHECK(pqv_frodo_decaps(p, b.ss2, b.ct, NULL) != 0);
    bufs_free(&b);
}

/* ---- 5. Randomised round trips ---------------------------------------- */

static void
test_random_round_trip(void)
{
    struct bufs b = bufs_new();

    for (int portable = 0; portable <= 1; portable++) {
        cpu_force_portable(portable);
        for (int i = 0; i < 6; i++) {
            const pqv_frodo *p = pqv_frodo_find(set_names[i]);
            REQUIRE(p != NULL);
            size_t ssl = pqv_frodo_sharedsecret_bytes(p);
            CHECK_EQ_INT(pqv_frodo_keypair(p, b.pk, b.sk), 0);
            CHECK_EQ_INT(pqv_frodo_encaps(p, b.ct, b.ss, b.pk), 0);
            CHECK_EQ_INT(pqv_frodo_decaps(p, b.ss2, b.ct, b.sk), 0);
            CHECK_MEM(b.ss, b.ss2, ssl);
        }
    }
    cpu_force_portable(0);
    bufs_free(&b);
}

/* ---- 6. Four-way SHAKE128 kernels against OpenSSL -------------------- */

/* Each SIMD instance of the rows of A (the KATs exercise only the one the
 * CPU dispatch picks) against one-at-a-time SHAKE128(<i> || seedA). */
static void
test_shake_rows4_kernels(void)
{
    static const size_t ns[3] = { 640, 976, 1344 };
    static const size_t firsts[3] = { 0, 252, 1340 };
    uint8_t seedA[16];
    uint16_t *rows = malloc(4 * 1344 * sizeof(uint16_t));
    uint8_t *want = malloc(2 * 1344);
    frodo_rows4_fn fns[2] = { frodo_avx2_shake128_rows4, frodo_avx512_shake128_rows4 };
    int (*usable[2])(void) = { cpu_has_avx2, cpu_has_avx512 };
    EVP_MD_CTX *md = EVP_MD_CTX_new();

    REQUIRE(rows != NULL && want != NULL && md != NULL);
    for (int i = 0; i < 16; i++)
        seedA[i] = (uint8_t)(17 * i + 3);
    cpu_force_portable(0);
    for (int k = 0; k < 2; k++) {
        if (!usable[k]()) {
            printf("# rows4 kernel %d not usable on this CPU: skipped\n", k);
            continue;
        }
        for (int t = 0; t < 3; t++) {
            size_t n = ns[t], first = firsts[t] < n ? firsts[t] : n - 4;
            fns[k](rows, n, first, seedA);
            for (size_t r = 0; r < 4; r++) {
                uint8_t idx[2] = { (uint8_t)(first + r), (uint8_t)((first + r) >> 8) };
                CHECK(EVP_DigestInit_ex(md, EVP_shake128(), NULL) == 1 &&
                    EVP_DigestUpdate(md, idx, 2) == 1 && EVP_DigestUpdate(md, seedA, 16) == 1 &&
                    EVP_DigestFinalXOF(md, want, 2 * n) == 1);
                CHECK_MEM((const uint8_t *)(rows + r * n), want, 2 * n);
            }
        }
    }
    cpu_force_portable(0);
    EVP_MD_CTX_free(md);
    free(rows);
    free(want);
}

TEST_MAIN(test_kat_files, test_full_kat_digest, test_implicit_rejection,
    test_bad_arguments, test_random_round_trip, test_shake_rows4_kernels)
