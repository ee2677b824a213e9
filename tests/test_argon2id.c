/*
 * test_argon2id.c: BLAKE2b (RFC 7693) and Argon2id (RFC 9106) tests: the
 * published vectors, the shared KAT file, agreement of kernels and thread
 * counts, randomized comparison with Debian's libargon2, and parameter
 * validation.
 */
#include <argon2.h>
#include <ctype.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdint.h>

#include "harness.h"

#include "crypto/argon2id_internal.h"
#include "crypto/blake2b.h"
#include "crypto/cpu.h"
#include "pqvault/argon2id.h"
#include "pqvault/common.h"

/* ---------------------------------------------------------------------- */
/* Helpers.                                                                */

/* hex_to_bytes(out, max, hex): decode ${hex} (even length) into ${out};
 * returns the byte count or -1. */
static long
hex_to_bytes(uint8_t *out, size_t max, const char *hex)
{
    size_t n = strlen(hex);

    if (n % 2 != 0 || n / 2 > max)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (!isxdigit((unsigned char)hex[2 * i]) || !isxdigit((unsigned char)hex[2 * i + 1]) ||
            sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return (long)(n / 2);
}

/* Deterministic generator (xorshift64*) so failures are reproducible. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint32_t
rng_range(uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)(rng_next() % ((uint64_t)hi - lo + 1));
}

static void
rng_fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rng_next();
}

/* The compression kernels, by the names argon2id_prefer_kernel knows. */
static const char *const kernel_names[] = { "avx512", "avx2", "portable" };
#define KERNELS (sizeof(kernel_names) / sizeof(kernel_names[0]))

/* use_kernel(k): make pqv_argon2id use kernel_names[k]; 0 if this machine
 * cannot run it (the caller skips it). */
static int
use_kernel(size_t k)
{
    if (argon2id_prefer_kernel(kernel_names[k]) != 0)
        return 0;
    return strcmp(pqv_argon2id_impl(), kernel_names[k]) == 0;
}

/* Whether PQVAULT_CPU asked for the portable path: restored after tests
 * that switch kernels, so the environment setting keeps its meaning. */
static int
env_forces_portable(void)
{
    const char *v = getenv("PQVAULT_CPU");
    return v != NULL && strcmp(v, "portable") == 0;
}

/* restore_defaults(): automatic kernel choice, thread cap as shipped. */
static void
restore_defaults(void)
{
    argon2id_prefer_kernel(NULL);
    cpu_force_portable(env_forces_portable());
    argon2id_uncap_threads(0);
}

/* ---------------------------------------------------------------------- */
/* BLAKE2b.                                                                */

static void
test_blake2b_rfc7693_vectors(void)
{
    uint8_t out[64], want[64];

    /* RFC 7693, appendix A: BLAKE2b-512("abc"). */
    REQUIRE(hex_to_bytes(want, sizeof(want),
        "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
        "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923") == 64);
    CHECK_EQ_INT(blake2b(out, 64, "abc", 3, NULL, 0), 0);
    CHECK_MEM(out, want, 64);

    /* BLAKE2b-512 of the empty message. */
    REQUIRE(hex_to_bytes(want, sizeof(want),
        "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419"
        "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce") == 64);
    CHECK_EQ_INT(blake2b(out, 64, "", 0, NULL, 0), 0);
    CHECK_MEM(out, want, 64);

    /* Out-of-range lengths are refused. */
    CHECK_EQ_INT(blake2b(out, 0, "abc", 3, NULL, 0), -1);
    CHECK_EQ_INT(blake2b(out, 65, "abc", 3, NULL, 0), -1);
    CHECK_EQ_INT(blake2b(out, 64, "abc", 3, want, 65), -1);
}

/* Unkeyed 64-byte digests of many lengths, fed in uneven pieces, against
 * OpenSSL's BLAKE2B-512 (exercises the final-block buffering). */
static void
test_blake2b_matches_openssl_streaming(void)
{
    uint8_t msg[600], ours[64], theirs[64];
    unsigned int theirs_len = 0;

    rng_fill(msg, sizeof(msg));
    for (size_t len = 0; len <= sizeof(msg); len += (len < 260 ? 1 : 37)) {
        blake2b_ctx ctx;
        REQUIRE(blake2b_init(&ctx, 64, NULL, 0) == 0);
        for (size_t off = 0, step = 1; off < len; off += step, step = step * 3 % 200 + 1)
            blake2b_update(&ctx, msg + off, (off + step <= len ? step : len - off));
        blake2b_final(&ctx, ours);
        REQUIRE(EVP_Digest(msg, len, theirs, &theirs_len, EVP_blake2b512(), NULL) == 1);
        CHECK_MEM(ours, theirs, 64);
    }
}

/* Keyed digests of every length 1..64 against OpenSSL's BLAKE2BMAC. */
static void
test_blake2b_keyed_lengths_match_openssl(void)
{
    uint8_t key[64], msg[300], ours[64], theirs[64];
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "BLAKE2BMAC", NULL);

    if (mac == NULL) {
        fprintf(stderr, "  (OpenSSL has no BLAKE2BMAC; keyed check skipped)\n");
        return;
    }
    rng_fill(key, sizeof(key));
    rng_fill(msg, sizeof(msg));
    for (size_t outlen = 1; outlen <= 64; outlen++) {
        size_t keylen = 1 + (outlen * 7) % 64, msglen = (outlen * 37) % sizeof(msg);
        size_t got = 0, size_param = outlen;
        OSSL_PARAM params[2] = { OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size_param),
            OSSL_PARAM_construct_end() };
        EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
        int ok = ctx != NULL && EVP_MAC_init(ctx, key, keylen, params) == 1 &&
            EVP_MAC_update(ctx, msg, msglen) == 1 &&
            EVP_MAC_final(ctx, theirs, &got, sizeof(theirs)) == 1;
        EVP_MAC_CTX_free(ctx);
        CHECK(ok);
        CHECK_EQ_INT(got, outlen);
        CHECK_EQ_INT(blake2b(ours, outlen, msg, msglen, key, keylen), 0);
        CHECK_MEM(ours, theirs, outlen);
    }
    EVP_MAC_free(mac);
}

/* ---------------------------------------------------------------------- */
/* Published Argon2id vectors.                                             */

static void
test_rfc9106_vector_all_kernels_and_threads(void)
{
    uint8_t pwd[32], salt[16], secret[8], ad[12], tag[32], want[32];
    static const uint32_t thread_counts[] = { 1, 2, 4, 8 };

    memset(pwd, 0x01, sizeof(pwd));
    memset(salt, 0x02, sizeof(salt));
    memset(secret, 0x03, sizeof(secret));
    memset(ad, 0x04, sizeof(ad));
    REQUIRE(hex_to_bytes(want, sizeof(want),
        "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659") == 32);
    argon2id_uncap_threads(1);
    for (size_t k = 0; k < KERNELS; k++) {
        if (!use_kernel(k))
            continue;
        for (size_t i = 0; i < sizeof(thread_counts) / sizeof(thread_counts[0]); i++) {
            memset(tag, 0, sizeof(tag));
            CHECK_EQ_INT(pqv_argon2id(tag, sizeof(tag), pwd, sizeof(pwd), salt, sizeof(salt),
                secret, sizeof(secret), ad, sizeof(ad), 3, 32, 4, thread_counts[i]), 0);
            CHECK_MEM(tag, want, 32);
        }
    }
    restore_defaults();
}

static void
test_vault_vector_all_kernels(void)
{
    static const char pwd[] = "correct horse battery staple";
    uint8_t salt[16], tag[32], want[32];

    for (int i = 0; i < 16; i++)
        salt[i] = (uint8_t)i;
    REQUIRE(hex_to_bytes(want, sizeof(want),
        "853b272a44db1421c02962669a55eb0994f3cab385ed1c4c79253eee19bab49e") == 32);
    for (size_t k = 0; k < KERNELS; k++) {
        if (!use_kernel(k))
            continue;
        memset(tag, 0, sizeof(tag));
        /* Different thread counts per kernel keep this test short while
         * still covering both the threaded and the single-thread path. */
        CHECK_EQ_INT(pqv_argon2id(tag, sizeof(tag), (const uint8_t *)pwd, strlen(pwd), salt,
            sizeof(salt), NULL, 0, NULL, 0, 3, 65536, 4, (uint32_t)(4 >> k)), 0);
        CHECK_MEM(tag, want, 32);
    }
    restore_defaults();
}

/* ---------------------------------------------------------------------- */
/* The shared KAT file (../shared/kat/argon2id.txt) if present.            */

struct kat_entry {
    uint32_t t, m_kib, p;
    uint8_t password[256], salt[256], secret[256], ad[256], tag[1024];
    long password_len, salt_len, secret_len, ad_len, tag_len;
    int have; /* bit mask of fields seen */
};

enum { KAT_T = 1, KAT_M = 2, KAT_P = 4, KAT_PWD = 8, KAT_SALT = 16, KAT_SECRET = 32,
    KAT_AD = 64, KAT_TAG = 128 };

/* kat_set_field(e, key, value): store one "key = value" line; 0 or -1. */
static int
kat_set_field(struct kat_entry *e, const char *key, const char *value)
{
    if (strcmp(key, "t") == 0) {
        e->t = (uint32_t)strtoul(value, NULL, 10);
        e->have |= KAT_T;
    } else if (strcmp(key, "m_kib") == 0) {
        e->m_kib = (uint32_t)strtoul(value, NULL, 10);
        e->have |= KAT_M;
    } else if (strcmp(key, "p") == 0) {
        e->p = (uint32_t)strtoul(value, NULL, 10);
        e->have |= KAT_P;
    } else if (strcmp(key, "password") == 0) {
        e->password_len = hex_to_bytes(e->password, sizeof(e->password), value);
        e->have |= KAT_PWD;
    } else if (strcmp(key, "password_ascii") == 0) {
        e->password_len = (long)strlen(value);
        if (e->password_len > (long)sizeof(e->password))
            return -1;
        memcpy(e->password, value, (size_t)e->password_len);
        e->have |= KAT_PWD;
    } else if (strcmp(key, "salt") == 0) {
        e->salt_len = hex_to_bytes(e->salt, sizeof(e->salt), value);
        e->have |= KAT_SALT;
    } else if (strcmp(key, "secret") == 0) {
        e->secret_len = hex_to_bytes(e->secret, sizeof(e->secret), value);
        e->have |= KAT_SECRET;
    } else if (strcmp(key, "ad") == 0) {
        e->ad_len = hex_to_bytes(e->ad, sizeof(e->ad), value);
        e->have |= KAT_AD;
    } else if (strcmp(key, "tag") == 0) {
        e->tag_len = hex_to_bytes(e->tag, sizeof(e->tag), value);
        e->have |= KAT_TAG;
    } else {
        return -1;
    }
    return 0;
}

/* kat_check_entry(e, line): run one complete vector (ending at line). */
static void
kat_check_entry(const struct kat_entry *e, int line)
{
    uint8_t tag[1024];
    const int all = KAT_T | KAT_M | KAT_P | KAT_PWD | KAT_SALT | KAT_SECRET | KAT_AD | KAT_TAG;

    if (e->have != all || e->password_len < 0 || e->salt_len < 0 || e->secret_len < 0 ||
        e->ad_len < 0 || e->tag_len <= 0) {
        fprintf(stderr, "  argon2id.txt: malformed entry ending at line %d\n", line);
        harness_failures++;
        return;
    }
    CHECK_EQ_INT(pqv_argon2id(tag, (size_t)e->tag_len, e->password, (size_t)e->password_len,
        e->salt, (size_t)e->salt_len, e->secret, (size_t)e->secret_len, e->ad,
        (size_t)e->ad_len, e->t, e->m_kib, e->p, e->p), 0);
    if (memcmp(tag, e->tag, (size_t)e->tag_len) != 0) {
        fprintf(stderr, "  argon2id.txt: tag mismatch for entry ending at line %d\n", line);
        harness_failures++;
    }
}

static void
test_shared_kat_file(void)
{
    const char *dir = harness_kat_dir();
    char path[4096], line[4096];
    struct kat_entry e;
    int lineno = 0, entries = 0;
    FILE *f;

    if (dir == NULL) {
        fprintf(stderr, "  (no ../shared/kat; shared vectors skipped)\n");
        return;
    }
    snprintf(path, sizeof(path), "%s/argon2id.txt", dir);
    f = fopen(path, "r");
    REQUIRE(f != NULL);
    memset(&e, 0, sizeof(e));
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        char *end = line + strlen(line);
        while (end > line && (end[-1] == '\n' || end[-1] == '\r'))
            *--end = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *eq = strchr(line, '=');
        if (eq == NULL) {
            fprintf(stderr, "  argon2id.txt:%d: no '='\n", lineno);
            harness_failures++;
            continue;
        }
        /* Trim "key = value"; the value may be empty (no secret/ad). */
        char *key = line, *value = eq + 1, *kend = eq;
        while (kend > key && kend[-1] == ' ')
            kend--;
        *kend = '\0';
        while (*value == ' ')
            value++;
        if (kat_set_field(&e, key, value) != 0) {
            fprintf(stderr, "  argon2id.txt:%d: bad field '%s'\n", lineno, key);
            harness_failures++;
        }
        if (strcmp(key, "tag") == 0) {
            kat_check_entry(&e, lineno);
            entries++;
            memset(&e, 0, sizeof(e));
        }
    }
    fclose(f);
    CHECK(entries >= 1);
}

/* ---------------------------------------------------------------------- */
/* Agreement between kernels, thread counts and libargon2.                 */

/* libargon2_tag(...): the reference tag from Debian's libargon2. */
static int
libargon2_tag(uint8_t *out, uint32_t outlen, uint8_t *pwd, uint32_t pwdlen, uint8_t *salt,
    uint32_t saltlen, uint8_t *secret, uint32_t secretlen, uint8_t *ad, uint32_t adlen,
    uint32_t t, uint32_t m, uint32_t lanes)
{
    argon2_context ctx;

    memset(&ctx, 0, sizeof(ctx));
    ctx.out = out;
    ctx.outlen = outlen;
    ctx.pwd = pwdlen ? pwd : NULL;
    ctx.pwdlen = pwdlen;
    ctx.salt = salt;
    ctx.saltlen = saltlen;
    ctx.secret = secretlen ? secret : NULL;
    ctx.secretlen = secretlen;
    ctx.ad = adlen ? ad : NULL;
    ctx.adlen = adlen;
    ctx.t_cost = t;
    ctx.m_cost = m;
    ctx.lanes = lanes;
    ctx.threads = 1;
    ctx.version = ARGON2_VERSION_13;
    ctx.flags = ARGON2_DEFAULT_FLAGS;
    return argon2_ctx(&ctx, Argon2_id);
}

static void
test_kernels_and_thread_counts_agree(void)
{
    uint8_t pwd[20], salt[16], ref[64], tag[64];
    static const uint32_t lanes_list[] = { 1, 3, 4, 8 };

    rng_fill(pwd, sizeof(pwd));
    rng_fill(salt, sizeof(salt));
    argon2id_uncap_threads(1);
    for (size_t li = 0; li < sizeof(lanes_list) / sizeof(lanes_list[0]); li++) {
        uint32_t lanes = lanes_list[li];
        /* More than 128 blocks per segment in the single-lane case, so the
         * address block is regenerated within a segment. */
        uint32_t m = lanes == 1 ? 1100 : 64 * lanes + 5;
        REQUIRE(use_kernel(KERNELS - 1)); /* portable */
        REQUIRE(pqv_argon2id(ref, sizeof(ref), pwd, sizeof(pwd), salt, sizeof(salt), NULL, 0,
            NULL, 0, 2, m, lanes, 1) == 0);
        for (size_t k = 0; k < KERNELS; k++) {
            if (!use_kernel(k))
                continue;
            for (uint32_t threads = 1; threads <= 4; threads++) {
                memset(tag, 0, sizeof(tag));
                CHECK_EQ_INT(pqv_argon2id(tag, sizeof(tag), pwd, sizeof(pwd), salt,
                    sizeof(salt), NULL, 0, NULL, 0, 2, m, lanes, threads), 0);
                CHECK_MEM(tag, ref, sizeof(ref));
            }
        }
    }
    restore_defaults();
}

static void
test_random_parameters_match_libargon2(void)
{
    static const uint32_t outlens[] = { 4, 16, 32, 64, 65, 100, 128, 255, 1024 };
    uint8_t pwd[80], salt[48], secret[40], ad[60], ours[1024], theirs[1024];

    argon2id_uncap_threads(1);
    for (int iter = 0; iter < 48; iter++) {
        uint32_t lanes = rng_range(1, 8);
        uint32_t t = rng_range(1, 4);
        /* Mostly tiny memory; m need not be a multiple of 4 * lanes. */
        uint32_t m = 8 * lanes + rng_range(0, iter % 6 == 0 ? 1200 : 150);
        uint32_t outlen = outlens[(size_t)iter % (sizeof(outlens) / sizeof(outlens[0]))];
        uint32_t pwdlen = rng_range(0, sizeof(pwd));
        uint32_t saltlen = rng_range(8, sizeof(salt));
        uint32_t secretlen = iter % 3 == 0 ? 0 : rng_range(1, sizeof(secret));
        uint32_t adlen = iter % 4 == 0 ? 0 : rng_range(1, sizeof(ad));
        uint32_t threads = rng_range(1, 8);
        size_t kernel = (size_t)iter % KERNELS;

        rng_fill(pwd, sizeof(pwd));
        rng_fill(salt, sizeof(salt));
        rng_fill(secret, sizeof(secret));
        rng_fill(ad, sizeof(ad));
        REQUIRE(libargon2_tag(theirs, outlen, pwd, pwdlen, salt, saltlen, secret, secretlen,
            ad, adlen, t, m, lanes) == ARGON2_OK);
        if (!use_kernel(kernel))
            REQUIRE(use_kernel(KERNELS - 1));
        memset(ours, 0, sizeof(ours));
        int rc = pqv_argon2id(ours, outlen, pwd, pwdlen, salt, saltlen, secret, secretlen, ad,
            adlen, t, m, lanes, threads);
        CHECK_EQ_INT(rc, 0);
        if (rc != 0 || memcmp(ours, theirs, outlen) != 0) {
            fprintf(stderr,
                "  mismatch: iter %d t=%u m=%u lanes=%u threads=%u outlen=%u pwd=%u "
                "salt=%u secret=%u ad=%u kernel=%s\n",
                iter, t, m, lanes, threads, outlen, pwdlen, saltlen, secretlen, adlen,
                pqv_argon2id_impl());
            harness_failures++;
        }
    }
    restore_defaults();
}

/* ---------------------------------------------------------------------- */
/* Parameter validation.                                                   */

static void
test_invalid_parameters_rejected(void)
{
    static const char secret_pwd[] = "hunter2-do-not-log";
    const uint8_t *pwd = (const uint8_t *)secret_pwd;
    const size_t pwdlen = sizeof(secret_pwd) - 1;
    uint8_t salt[16] = { 0 }, out[32];

#define TRY(outp, outlen, saltp, saltlen, sec, seclen, adp, adlen, t, m, p, th)       \
    pqv_argon2id((outp), (outlen), pwd, pwdlen, (saltp), (saltlen), (sec), (seclen),  \
        (adp), (adlen), (t), (m), (p), (th))

    /* A valid baseline. */
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 0, 1, 8, 1, 1), 0);
    CHECK_EQ_INT(TRY(out, 4, salt, 8, NULL, 0, NULL, 0, 1, 64, 8, 2), 0);

    CHECK_EQ_INT(TRY(NULL, 32, salt, 16, NULL, 0, NULL, 0, 1, 8, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 3, salt, 16, NULL, 0, NULL, 0, 1, 8, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 0, salt, 16, NULL, 0, NULL, 0, 1, 8, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 7, NULL, 0, NULL, 0, 1, 8, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, NULL, 16, NULL, 0, NULL, 0, 1, 8, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 4, NULL, 0, 1, 8, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 4, 1, 8, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 0, 0, 8, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 0, PQV_ARGON2_MAX_T + 1, 8, 1, 1),
        PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 0, 1, 7, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 0, 1, 31, 4, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 0, 1, PQV_ARGON2_MAX_MKIB + 1, 1, 1),
        PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 0, 1, 8, 0, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 0, 1, 1024, PQV_ARGON2_MAX_LANES + 1,
        1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, 16, NULL, 0, NULL, 0, 1, 8, 1, 0), PQV_E_INVAL);
#if SIZE_MAX > 0xffffffffu
    CHECK_EQ_INT(TRY(out, (size_t)1 << 32, salt, 16, NULL, 0, NULL, 0, 1, 8, 1, 1),
        PQV_E_INVAL);
    CHECK_EQ_INT(pqv_argon2id(out, 32, pwd, (size_t)1 << 32, salt, 16, NULL, 0, NULL, 0, 1,
        8, 1, 1), PQV_E_INVAL);
    CHECK_EQ_INT(TRY(out, 32, salt, (size_t)1 << 32, NULL, 0, NULL, 0, 1, 8, 1, 1),
        PQV_E_INVAL);
#endif
    /* The detail message explains the failure and never shows the password. */
    CHECK_EQ_INT(TRY(out, 32, salt, 7, NULL, 0, NULL, 0, 1, 8, 1, 1), PQV_E_INVAL);
    CHECK(strstr(pqv_error_detail(), "salt") != NULL);
    CHECK(strstr(pqv_error_detail(), secret_pwd) == NULL);
    /* NULL password with length 0 is an empty password. */
    CHECK_EQ_INT(pqv_argon2id(out, 32, NULL, 0, salt, 16, NULL, 0, NULL, 0, 1, 8, 1, 1), 0);
#undef TRY
}

/* Records what a kernel reported through its early-result hook. */
struct early_record {
    uint64_t word;
    int calls;
};

static void
record_early(void *ctx, uint64_t first_word)
{
    struct early_record *rec = ctx;
    rec->word = first_word;
    rec->calls++;
}

/* Every kernel computes G (both modes) and reports word 0 exactly like the
 * portable one, on random blocks. */
static void
test_kernels_agree_on_random_blocks(void)
{
    static argon2id_block prev, ref, old, want, got;
    static argon2id_kernel_fn *const fns[] = { argon2id_avx512_fill_block,
        argon2id_avx2_fill_block };
    int (*const usable[])(void) = { cpu_has_avx512, cpu_has_avx2 };

    cpu_force_portable(0);
    for (int round = 0; round < 50; round++) {
        rng_fill((uint8_t *)prev.v, sizeof(prev.v));
        rng_fill((uint8_t *)ref.v, sizeof(ref.v));
        rng_fill((uint8_t *)old.v, sizeof(old.v));
        for (int xor_out = 0; xor_out <= 1; xor_out++) {
            struct early_record rec_want = { 0, 0 }, rec_got = { 0, 0 };
            want = old;
            argon2id_fill_block_portable(&want, &prev, &ref, xor_out, record_early,
                &rec_want);
            CHECK_EQ_INT(rec_want.calls, 1);
            CHECK(rec_want.word == want.v[0]);
            for (size_t k = 0; k < sizeof(fns) / sizeof(fns[0]); k++) {
                if (!usable[k]())
                    continue;
                got = old;
                rec_got.calls = 0;
                fns[k](&got, &prev, &ref, xor_out, record_early, &rec_got);
                CHECK_MEM(got.v, want.v, sizeof(want.v));
                CHECK_EQ_INT(rec_got.calls, 1);
                CHECK(rec_got.word == want.v[0]);
            }
        }
    }
    restore_defaults();
}

static void
test_impl_name(void)
{
    cpu_force_portable(1);
    CHECK(strcmp(pqv_argon2id_impl(), "portable") == 0);
    cpu_force_portable(0);
    CHECK(strcmp(pqv_argon2id_impl(), cpu_has_avx512() ? "avx512"
        : cpu_has_avx2() ? "avx2" : "portable") == 0);
    /* A preferred kernel gives way to a forced portable path. */
    if (argon2id_prefer_kernel("avx2") == 0) {
        CHECK(strcmp(pqv_argon2id_impl(), "avx2") == 0);
        cpu_force_portable(1);
        CHECK(strcmp(pqv_argon2id_impl(), "portable") == 0);
    }
    CHECK_EQ_INT(argon2id_prefer_kernel("sse9"), -1);
    restore_defaults();
}

TEST_MAIN(test_blake2b_rfc7693_vectors, test_blake2b_matches_openssl_streaming,
    test_blake2b_keyed_lengths_match_openssl, test_rfc9106_vector_all_kernels_and_threads,
    test_vault_vector_all_kernels, test_shared_kat_file, test_kernels_and_thread_counts_agree,
    test_random_parameters_match_libargon2, test_invalid_parameters_rejected,
    test_kernels_agree_on_random_blocks, test_impl_name)
