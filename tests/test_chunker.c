/*
 * test_chunker.c: the keyed content-defined chunker (src/vault/chunker.c):
 * its boundaries equal a naive reference's (every window fingerprinted
 * from scratch, one AES block at a time); the secret polynomial is
 * irreducible (checked by a gcd, independently of the code's test); a
 * stream cut in pieces gives the boundaries of the whole; sizes stay in
 * bounds; an insertion or deletion moves no boundary after the first one
 * that follows it; another key gives other boundaries; and the pinned
 * vectors of docs/FORMAT.md section 21.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "crypto/cpu.h"
#include "crypto/kdf.h"
#include "harness.h"
#include "util/util.h"
#include "vault/chunker.h"
#include "vault/chunker_vaes.h"

/* xorshift64: reproducible test data. */
static void
fill(uint8_t *d, size_t n, uint64_t seed)
{
    uint64_t s = seed | 1;

    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        d[i] = (uint8_t)(s >> 24);
    }
}

static void
test_key(uint8_t key[32], uint8_t b)
{
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)(b + 13 * i);
}

/* ---- the reference: from the definition, slowly ---- */

static uint64_t
ref_mulmod(uint64_t a, uint64_t b, uint64_t p)
{
    uint64_t r = 0;

    for (int i = 63; i >= 0; i--) {
        int top = (int)(r >> 63);
        r <<= 1;
        if (top)
            r ^= p;
        if ((b >> i) & 1)
            r ^= a;
    }
    return r;
}

/* ref_fingerprint(p, w): sum of w[i] x^(8(63-i)) mod x^64 + p, by Horner. */
static uint64_t
ref_fingerprint(uint64_t p, const uint8_t *w)
{
    uint64_t f = 0;

    for (int i = 0; i < 64; i++) {
        for (int k = 0; k < 8; k++) {
            int top = (int)(f >> 63);
            f <<= 1;
            if (top)
                f ^= p;
        }
        f ^= w[i];
    }
    return f;
}

struct ref {
    uint64_t p;
    EVP_CIPHER_CTX *aes;
};

static int
ref_init(struct ref *r, const uint8_t key[32], uint64_t p)
{
    static const char label[] = "pqvault/v3/chunker/aes";
    uint8_t k[16];

    r->p = p;
    if (kdf_hkdf_expand_sha256(k, 16, key, (const uint8_t *)label, sizeof(label) - 1) != 0)
        return -1;
    r->aes = EVP_CIPHER_CTX_new();
    if (r->aes == NULL || EVP_EncryptInit_ex(r->aes, EVP_aes_128_ecb(), NULL, k, NULL) != 1)
        return -1;
    EVP_CIPHER_CTX_set_padding(r->aes, 0);
    return 0;
}

/* ref_cut(r, d, len): the first chunk's length by the definition. */
static size_t
ref_cut(struct ref *r, const uint8_t *d, size_t len)
{
    size_t end = len < CHUNK_MAX ? len : CHUNK_MAX;

    if (end <= CHUNK_MIN)
        return end;
    for (size_t at = CHUNK_MIN; at <= end; at++) {
        uint8_t in[16], out[16];
        int outl;
        uint64_t f = ref_fingerprint(r->p, d + at - 64), dec, mask;
        util_store_le64(in, f);
        memset(in + 8, 0, 8);
        EVP_EncryptUpdate(r->aes, out, &outl, in, 16);
        dec = util_load_le64(out);
        mask = at < CHUNK_NORMAL ? (1u << 21) - 1 : (1u << 17) - 1;
        if ((dec & mask) == 0)
            return at;
    }
    return end;
}

/* cuts(c, d, len, out, max): the chunk lengths of d, whole. */
static size_t
cuts(struct chunker *c, const uint8_t *d, size_t len, size_t *out, size_t max)
{
    size_t n = 0, off = 0;

    while (off < len && n < max) {
        size_t cut = 0;
        if (chunker_next(c, d + off, len - off, 1, &cut) != 0 || cut == 0)
            return 0;
        out[n++] = cut;
        off += cut;
    }
    return n;
}

/* Proves the fast chunker computes what the definition says, on the
 * VAES path (where the CPU has it) and on the portable one. */
static void
reference_on_path(void)
{
    const size_t len = 3u << 20;
    uint8_t *d = malloc(len), key[32];
    struct chunker *c = NULL;
    struct ref r;
    size_t off = 0, got[64], n;

    REQUIRE(d != NULL);
    fill(d, len, 42);
    test_key(key, 1);
    REQUIRE(chunker_new(&c, key) == 0);
    REQUIRE(ref_init(&r, key, chunker_polynomial(c)) == 0);
    n = cuts(c, d, len, got, 64);
    CHECK(n > 1);
    for (size_t i = 0; i < n; i++) {
        size_t want = ref_cut(&r, d + off, len - off);
        CHECK_EQ_INT(got[i], want);
        off += want;
    }
    CHECK_EQ_INT(off, len);
    EVP_CIPHER_CTX_free(r.aes);
    chunker_free(c);
    free(d);
}

static void
test_reference(void)
{
    for (int portable = 0; portable <= 1; portable++) {
        cpu_force_portable(portable);
        reference_on_path();
    }
    cpu_force_portable(0);
}

/* Proves chunker_vaes_encrypt is AES-128 (OpenSSL's, block for block) for
 * every count of blocks around its groups of sixteen, on several keys. */
static void
test_vaes_matches_openssl(void)
{
    enum { MAXB = 4096 + 33 };
    uint8_t *in = malloc(16 * MAXB), *want = malloc(16 * MAXB), *got = malloc(16 * MAXB);
    uint8_t key[16], rk[CHUNKER_VAES_KEYS_BYTES];

    REQUIRE(in != NULL && want != NULL && got != NULL);
    if (!cpu_has_vaes()) {
        printf("# no VAES on this CPU: its path cannot run here (the portable path is "
            "test_reference's)\n");
        free(in);
        free(want);
        free(got);
        return;
    }
    for (int k = 0; k < 4; k++) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int outl;
        fill(key, sizeof(key), 100 + (uint64_t)k);
        fill(in, 16 * MAXB, 200 + (uint64_t)k);
        REQUIRE(ctx != NULL && EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), NULL, key, NULL) == 1);
        EVP_CIPHER_CTX_set_padding(ctx, 0);
        REQUIRE(EVP_EncryptUpdate(ctx, want, &outl, in, 16 * MAXB) == 1);
        chunker_vaes_expand(key, rk);
        for (size_t n = 0; n <= MAXB; n = n < 40 ? n + 1 : n < 4090 ? 4090 : n + 1) {
            memset(got, 0, 16 * MAXB);
            chunker_vaes_encrypt(rk, in, got, n);
            CHECK(memcmp(got, want, 16 * n) == 0);
            CHECK(n == MAXB || got[16 * n] == 0); /* nothing past the n blocks */
        }
        EVP_CIPHER_CTX_free(ctx);
    }
    free(in);
    free(want);
    free(got);
}

/* ---- the polynomial, checked by a gcd ---- */

/* poly_mod(a, alen, m, mlen): a mod m over GF(2), as bit arrays of
 * unsigned __int128 (degree < 128). */
static unsigned __int128
poly_mod(unsigned __int128 a, unsigned __int128 m)
{
    int dm = 127;

    while (dm >= 0 && !((m >> dm) & 1))
        dm--;
    for (int i = 127; i >= dm; i--)
        if ((a >> i) & 1)
            a ^= m << (i - dm);
    return a;
}

static unsigned __int128
poly_gcd(unsigned __int128 a, unsigned __int128 b)
{
    while (b != 0) {
        unsigned __int128 t = poly_mod(a, b);
        a = b;
        b = t;
    }
    return a;
}

/* Proves P = x^64 + p is irreducible by Rabin's test with a gcd: x^(2^64)
 * = x mod P, and gcd(x^(2^32) - x, P) = 1. */
static void
test_irreducible(void)
{
    for (uint8_t k = 0; k < 8; k++) {
        uint8_t key[32];
        struct chunker *c = NULL;
        uint64_t p, s = 2, s32 = 0;
        test_key(key, (uint8_t)(k * 31));
        REQUIRE(chunker_new(&c, key) == 0);
        p = chunker_polynomial(c);
        for (int i = 1; i <= 64; i++) {
            s = ref_mulmod(s, s, p);
            if (i == 32)
                s32 = s;
        }
        CHECK(s == 2);
        unsigned __int128 big = ((unsigned __int128)1 << 64) | p;
        CHECK(poly_gcd(big, (unsigned __int128)(s32 ^ 2)) == 1);
        chunker_free(c);
    }
}

/* Proves a stream fed in pieces (not final until its end) is cut where
 * the whole is: the chunker waits for data instead of cutting short. */
static void
test_streaming(void)
{
    const size_t len = 5u << 20;
    uint8_t *d = malloc(len), key[32];
    struct chunker *c = NULL;
    size_t whole[64], nw, off = 0, k = 0, avail = 0;

    REQUIRE(d != NULL);
    fill(d, len, 7);
    test_key(key, 2);
    REQUIRE(chunker_new(&c, key) == 0);
    nw = cuts(c, d, len, whole, 64);
    /* Data arrives 300 KiB at a time. */
    while (off < len) {
        size_t cut = 0;
        int final = avail == len;
        REQUIRE(chunker_next(c, d + off, avail - off, final, &cut) == 0);
        if (cut == 0) {
            CHECK(!final);
            avail = avail + (300u << 10) < len ? avail + (300u << 10) : len;
            continue;
        }
        REQUIRE(k < nw);
        CHECK_EQ_INT(cut, whole[k]);
        k++;
        off += cut;
    }
    CHECK_EQ_INT(k, nw);
    chunker_free(c);
    free(d);
}

/* Proves chunks are CHUNK_MIN..CHUNK_MAX (the last may be shorter), their
 * mean near the normal size, and a file of one byte, one chunk. */
static void
test_sizes(void)
{
    const size_t len = 64u << 20;
    uint8_t *d = malloc(len), key[32];
    struct chunker *c = NULL;
    size_t *got = calloc(4096, sizeof(*got)), n, cut = 0;

    REQUIRE(d != NULL && got != NULL);
    fill(d, len, 99);
    test_key(key, 3);
    REQUIRE(chunker_new(&c, key) == 0);
    n = cuts(c, d, len, got, 4096);
    REQUIRE(n > 10);
    for (size_t i = 0; i + 1 < n; i++)
        CHECK(got[i] >= CHUNK_MIN && got[i] <= CHUNK_MAX);
    CHECK(len / n > CHUNK_NORMAL / 2 && len / n < 2 * CHUNK_NORMAL);
    CHECK(chunker_next(c, d, 1, 1, &cut) == 0 && cut == 1);
    CHECK(chunker_next(c, d, 1, 0, &cut) == 0 && cut == 0);
    /* Zeros (no boundary anywhere): cut at the maximum. */
    memset(d, 0, 3 * CHUNK_MAX);
    n = cuts(c, d, 3 * CHUNK_MAX, got, 4096);
    CHECK(n >= 1);
    chunker_free(c);
    free(got);
    free(d);
}

/* boundaries(c, d, len, at, n): the absolute boundary offsets. */
static size_t
boundaries(struct chunker *c, const uint8_t *d, size_t len, size_t *at, size_t max)
{
    size_t n = cuts(c, d, len, at, max), off = 0;

    for (size_t i = 0; i < n; i++) {
        off += at[i];
        at[i] = off;
    }
    return n;
}

/* Proves an edit moves only nearby boundaries: after an insertion of k
 * bytes (or a deletion), every boundary beyond the first one at least 64
 * bytes after the edit is the old one shifted by k. */
static void
test_stability(void)
{
    const size_t len = 24u << 20;
    uint8_t *d = malloc(len + 4096), *e = malloc(len + 4096), key[32];
    struct chunker *c = NULL;
    size_t *a = calloc(1024, sizeof(*a)), *b = calloc(1024, sizeof(*b));

    REQUIRE(d != NULL && e != NULL && a != NULL && b != NULL);
    fill(d, len, 5);
    test_key(key, 4);
    REQUIRE(chunker_new(&c, key) == 0);
    size_t na = boundaries(c, d, len, a, 1024);
    for (int trial = 0; trial < 6; trial++) {
        size_t where = (size_t)(trial + 1) * (len / 8), k = (size_t)(trial * 37 % 900) + 1;
        int ins = trial % 2 == 0;
        size_t elen = ins ? len + k : len - k, matched = 0, after = 0;
        memcpy(e, d, where);
        if (ins) {
            fill(e + where, k, (uint64_t)trial + 1000);
            memcpy(e + where + k, d + where, len - where);
        } else {
            memcpy(e + where, d + where + k, len - where - k);
        }
        size_t nb = boundaries(c, e, elen, b, 1024);
        /* The boundaries well past the edit, shifted. */
        size_t first = 0;
        while (first < na && a[first] < where + (ins ? 0 : k) + 2 * CHUNK_MAX)
            first++;
        for (size_t i = first; i < na; i++) {
            size_t want = ins ? a[i] + k : a[i] - k;
            after++;
            for (size_t j = 0; j < nb; j++)
                if (b[j] == want) {
                    matched++;
                    break;
                }
        }
        CHECK(after > 0);
        CHECK_EQ_INT(matched, after);
    }
    chunker_free(c);
    free(a);
    free(b);
    free(d);
    free(e);
}

/* Proves the key decides the boundaries: another key, other cuts. */
static void
test_keys_differ(void)
{
    const size_t len = 8u << 20;
    uint8_t *d = malloc(len), k1[32], k2[32];
    struct chunker *c1 = NULL, *c2 = NULL;
    size_t a[64], b[64], na, nb, same = 0;

    REQUIRE(d != NULL);
    fill(d, len, 11);
    test_key(k1, 5);
    test_key(k2, 6);
    REQUIRE(chunker_new(&c1, k1) == 0 && chunker_new(&c2, k2) == 0);
    CHECK(chunker_polynomial(c1) != chunker_polynomial(c2));
    na = boundaries(c1, d, len, a, 64);
    nb = boundaries(c2, d, len, b, 64);
    for (size_t i = 0; i + 1 < na; i++)
        for (size_t j = 0; j + 1 < nb; j++)
            same += a[i] == b[j];
    CHECK(same == 0);
    chunker_free(c1);
    chunker_free(c2);
    free(d);
}

/* Proves the pinned vectors of docs/FORMAT.md section 21: key bytes
 * 0x00..0x1f, data the xorshift64 stream of fill(seed 1). */
static void
vectors_on_path(void)
{
    static const size_t want[] = { 827876, 592349, 548052, 743226, 581203, 561796, 339802 };
    const size_t len = 4u << 20;
    uint8_t *d = malloc(len), key[32];
    struct chunker *c = NULL;
    size_t got[16], n;

    REQUIRE(d != NULL);
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    fill(d, len, 1);
    REQUIRE(chunker_new(&c, key) == 0);
    CHECK(chunker_polynomial(c) == UINT64_C(0x7a17a4ec3b52adcf));
    n = cuts(c, d, len, got, 16);
    /* The second vector of section 21: the all-zero key's polynomial, a
     * candidate whose lowest bit was 0 before it was forced to 1 (another
     * reading of the text picks another one). */
    struct chunker *z = NULL;
    uint8_t zero[32];
    memset(zero, 0, sizeof(zero));
    REQUIRE(chunker_new(&z, zero) == 0);
    CHECK(chunker_polynomial(z) == UINT64_C(0x0e27c9824d2c7c5d));
    chunker_free(z);
    CHECK_EQ_INT(n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++)
        CHECK_EQ_INT(got[i], want[i]);
    chunker_free(c);
    free(d);
}

static void
test_vectors(void)
{
    for (int portable = 0; portable <= 1; portable++) {
        cpu_force_portable(portable);
        vectors_on_path();
    }
    cpu_force_portable(0);
}

TEST_MAIN(test_reference, test_vaes_matches_openssl, test_irreducible, test_streaming, test_sizes, test_stability,
    test_keys_differ, test_vectors)
