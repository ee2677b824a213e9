/*
 * chunker.c: keyed content-defined chunking, "UHF-then-PRF" (chunker.h).
 *
 * The fingerprint of the 64-byte window ending at a position is its Rabin
 * fingerprint: the window read as a polynomial over GF(2) (its first byte
 * the highest coefficients) modulo P = x^64 + p, p secret, P irreducible.
 * It rolls one byte at a time with two tables of 256 words:
 *     F' = (F * x^8 + b) mod P  = (F << 8) ^ b ^ push[F >> 56]
 *     F'' = F' - o * x^512 mod P = F' ^ pop[o]     (o: the byte leaving)
 * The decision at a position is AES-128_k(F || 0^64): its first eight
 * bytes, little endian, with the mask's bits all zero mean a cut there.
 *
 * The key gives k and 768 candidates for p (constant term 1); P is the
 * first candidate that is irreducible.  For a degree of 64 = 2^6,
 * Rabin's test is: x^(2^64) = x (mod P) and gcd(x^(2^32) - x, P) = 1;
 * since x^(2^64) - x is squarefree, any P dividing it is squarefree, and
 * then the gcd condition is the same as x^(2^32) != x (mod P) (a P whose
 * factors all have degrees dividing 32 is exactly one where x^(2^32) = x).
 * Every candidate is tested, by repeated squaring with masks, and the
 * first irreducible one is selected without a branch: the setup takes the
 * same time whatever the key.  A random candidate is irreducible with
 * probability about 1/32, so none of 768 is with probability below
 * 2^-35; for such a key more candidates are drawn (the only case whose
 * time depends on the key).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "crypto/cpu.h"
#include "crypto/kdf.h"
#include "pqvault/common.h"
#include "util/error.h"
#include "util/util.h"
#include "vault/chunker.h"
#include "vault/chunker_vaes.h"

#define CANDIDATES 768
/* Positions decided at once: LANES independent runs of LANE_RUN positions,
 * each fingerprinted afresh from its first window, so that the rolling
 * updates of the lanes (each a chain of dependent loads) overlap; the
 * fresh start costs 64 steps a lane, an eighth more work for about a fifth
 * of the time of one chain.  Then all their AES blocks at once. */
#define LANES 8
#define LANE_RUN 512
#define BATCH (LANES * LANE_RUN)
/* Decisions tested at once (chunker_next). */
#define GROUP 16
/* Cut masks (FastCDC's normalised chunking, level 2): before the normal
 * size a cut needs 21 zero bits (one position in 2 Mi), after it 17 (one
 * in 128 Ki): most chunks end a little after CHUNK_NORMAL. */
#define MASK_STRICT ((UINT64_C(1) << 21) - 1)
#define MASK_LOOSE ((UINT64_C(1) << 17) - 1)

struct chunker {
    uint64_t p;                     /* P = x^64 + p */
    uint64_t push[256], pop[256];
    EVP_CIPHER_CTX *aes;         /* the portable path: OpenSSL's AES */
    int vaes;                    /* else chunker_vaes.c's, these keys: */
    uint8_t round_keys[CHUNKER_VAES_KEYS_BYTES];
    uint8_t blocks[BATCH * 16], out[BATCH * 16];
};

/* gf2_mulmod(a, b, p): a * b mod (x^64 + p), without a branch on any
 * operand (Horner over the bits of b, highest first). */
static uint64_t
gf2_mulmod(uint64_t a, uint64_t b, uint64_t p)
{
    uint64_t r = 0;

    for (int i = 63; i >= 0; i--) {
        r = (r << 1) ^ (p & (0 - (r >> 63)));
        r ^= a & (0 - ((b >> i) & 1));
    }
    return r;
}

/* irreducible(p): all ones if x^64 + p is irreducible, else 0. */
static uint64_t
irreducible(uint64_t p)
{
    uint64_t s = 2, s32, eq32, eq64; /* s = x */

    for (int i = 0; i < 32; i++)
        s = gf2_mulmod(s, s, p);
    s32 = s;
    for (int i = 0; i < 32; i++)
        s = gf2_mulmod(s, s, p);
    /* Masks: all ones when equal, without comparing by branch. */
    eq32 = s32 ^ 2;
    eq32 = ((eq32 | (0 - eq32)) >> 63) - 1;     /* all ones iff s32 == x */
    eq64 = s ^ 2;
    eq64 = ((eq64 | (0 - eq64)) >> 63) - 1;     /* all ones iff s == x */
    return eq64 & ~eq32;
}

/* find_polynomial(stream, n, p, found): the first irreducible among the n
 * candidates in ${stream} (8 bytes each, big endian, constant term forced
 * to 1), selected with masks. */
static void
find_polynomial(const uint8_t *stream, size_t n, uint64_t *p, uint64_t *found)
{
    uint64_t chosen = 0, have = 0;

    for (size_t i = 0; i < n; i++) {
        uint64_t cand = util_load_be64(stream + 8 * i) | 1;
        uint64_t take = irreducible(cand) & ~have;
        chosen |= cand & take;
        have |= take;
    }
    *p = chosen;
    *found = have;
}

int
chunker_new(struct chunker **out, const uint8_t key[CHUNKER_KEY_BYTES])
{
    static const char aes_label[] = "pqvault/v3/chunker/aes";
    static const char poly_label[] = "pqvault/v3/chunker/polynomial";
    struct chunker *c;
    uint8_t aes_key[16], *stream = NULL, info[64];
    uint64_t found = 0, x512;
    size_t n = CANDIDATES;
    int rc;

    *out = NULL;
    if ((c = calloc(1, sizeof(*c))) == NULL)
        return PQV_E_NOMEM;
    util_pin_memory(c, sizeof(*c));
    if ((rc = kdf_hkdf_expand_sha256(aes_key, sizeof(aes_key), key, (const uint8_t *)aes_label,
             sizeof(aes_label) - 1)) != 0)
        goto fail;
    /* Candidates in rounds of 768 (one round but for one key in 2^35). */
    for (uint32_t round = 0; found == 0; round++) {
        size_t info_len = sizeof(poly_label) - 1;
        memcpy(info, poly_label, info_len);
        util_store_be32(info + info_len, round);
        free(stream);
        if ((stream = malloc(8 * n)) == NULL) {
            rc = PQV_E_NOMEM;
            goto fail;
        }
        if ((rc = kdf_hkdf_expand_sha256(stream, 8 * n, key, info, info_len + 4)) != 0)
            goto fail;
        find_polynomial(stream, n, &c->p, &found);
        util_wipe(stream, 8 * n);
        if (round == 1000) {
            rc = error_set(PQV_E_CRYPTO, NULL, "no irreducible polynomial for the chunker");
            goto fail;
        }
    }
    /* push[t] = t * x^64 mod P = t * p mod P; pop[b] = b * x^512 mod P. */
    x512 = c->p; /* x^64 */
    for (int i = 0; i < 3; i++)
        x512 = gf2_mulmod(x512, x512, c->p); /* x^128, x^256, x^512 */
    for (int t = 0; t < 256; t++) {
        c->push[t] = gf2_mulmod((uint64_t)t, c->p, c->p);
        c->pop[t] = gf2_mulmod((uint64_t)t, x512, c->p);
    }
    if (cpu_has_vaes()) {
        c->vaes = 1;
        chunker_vaes_expand(aes_key, c->round_keys);
    } else if ((c->aes = EVP_CIPHER_CTX_new()) == NULL ||
        EVP_EncryptInit_ex(c->aes, EVP_aes_128_ecb(), NULL, aes_key, NULL) != 1 ||
        EVP_CIPHER_CTX_set_padding(c->aes, 0) != 1) {
        rc = error_set(PQV_E_CRYPTO, NULL, "AES-128 for the chunker");
        goto fail;
    }
    util_wipe(aes_key, sizeof(aes_key));
    free(stream);
    *out = c;
    return 0;

fail:
    util_wipe(aes_key, sizeof(aes_key));
    if (stream != NULL)
        util_wipe(stream, 8 * n);
    free(stream);
    chunker_free(c);
    return rc;
}

void
chunker_free(struct chunker *c)
{
    if (c == NULL)
        return;
    EVP_CIPHER_CTX_free(c->aes);
    util_wipe(c, sizeof(*c));
    free(c);
}

uint64_t
chunker_polynomial(const struct chunker *c)
{
    return c->p;
}

/* fingerprint(c, w): the fingerprint of the 64 bytes at ${w}. */
static uint64_t
fingerprint(const struct chunker *c, const uint8_t *w)
{
    uint64_t f = 0;

    for (size_t i = 0; i < CHUNK_WINDOW; i++)
        f = (f << 8) ^ w[i] ^ c->push[f >> 56];
    return f;
}

/* fingerprints(c, data, base, n): the blocks of candidate lengths base ..
 * base + n - 1 (n = BATCH, or fewer at the end: then one lane), each its
 * window's fingerprint, little endian, then eight zero bytes (the
 * second halves of the blocks are zero from chunker_new on). */
static void
fingerprints(struct chunker *c, const uint8_t *data, size_t base, size_t n)
{
    if (n == BATCH) {
        uint64_t f[LANES] = { 0 };
        /* The lanes' first windows, interleaved too (one after another,
         * each is a chain of 64 dependent steps). */
        for (size_t i = 0; i < CHUNK_WINDOW; i++)
#pragma GCC unroll 8
            for (size_t j = 0; j < LANES; j++) {
                uint8_t b = data[base + j * LANE_RUN - CHUNK_WINDOW + i];
                f[j] = (f[j] << 8) ^ b ^ c->push[f[j] >> 56];
            }
        for (size_t i = 0; i < LANE_RUN; i++)
#pragma GCC unroll 8
            for (size_t j = 0; j < LANES; j++) {
                size_t at = base + j * LANE_RUN + i;
                uint8_t *b = c->blocks + 16 * (j * LANE_RUN + i);
                util_store_le64(b, f[j]); /* (bytes 8-15 stay zero) */
                /* (The last position's update reads the byte at ${at},
                 * which the caller guarantees is there.) */
                f[j] = (f[j] << 8) ^ data[at] ^ c->push[f[j] >> 56] ^ c->pop[data[at - CHUNK_WINDOW]];
            }
        return;
    }
    uint64_t f = fingerprint(c, data + base - CHUNK_WINDOW);
    for (size_t i = 0; i < n; i++) {
        size_t at = base + i;
        util_store_le64(c->blocks + 16 * i, f);
        if (i + 1 < n)
            f = (f << 8) ^ data[at] ^ c->push[f >> 56] ^ c->pop[data[at - CHUNK_WINDOW]];
    }
}

int
chunker_next(struct chunker *c, const uint8_t *data, size_t len, int final, size_t *cut)
{
    size_t end = len < CHUNK_MAX ? len : CHUNK_MAX;

    *cut = 0;
    if (end <= CHUNK_MIN) {
        /* Too short for a boundary: the rest, or wait for more. */
        if (final || len >= CHUNK_MAX)
            *cut = end;
        return 0;
    }
    /* Candidate lengths L from CHUNK_MIN to end: the window of L is
     * data[L-64, L).  A full batch also reads the byte after its last
     * candidate: only when that byte is there (base + BATCH <= end - 1
     * < len). */
    for (size_t base = CHUNK_MIN; base <= end; base += BATCH) {
        size_t n = end - base + 1;
        int outl;
        if (n >= BATCH + 1)
            n = BATCH;
        else if (n > LANE_RUN)
            n = LANE_RUN; /* the tail one lane at a time */
        fingerprints(c, data, base, n);
        if (c->vaes)
            chunker_vaes_encrypt(c->round_keys, c->blocks, c->out, n);
        else if (EVP_EncryptUpdate(c->aes, c->out, &outl, c->blocks, (int)(16 * n)) != 1 ||
            outl != (int)(16 * n))
            return error_set(PQV_E_CRYPTO, NULL, "AES-128 for the chunker");
        for (size_t g = 0; g < n; g += GROUP) {
            size_t m = n - g < GROUP ? n - g : GROUP;
            /* A cut needs at least the loose mask's bits zero (the strict
             * mask holds them all): one rare test for a group, without a
             * branch per position. */
            uint64_t any = 0;
            /* (d & MASK_LOOSE) - 1 wraps to its top bit set iff it was
             * zero.) */
            for (size_t i = g; i < g + m; i++)
                any |= (util_load_le64(c->out + 16 * i) & MASK_LOOSE) - 1;
            if ((any >> 63) == 0)
                continue;
            for (size_t i = g; i < g + m; i++) {
                size_t at = base + i;
                uint64_t d = util_load_le64(c->out + 16 * i);
                uint64_t mask = at < CHUNK_NORMAL ? MASK_STRICT : MASK_LOOSE;
                if ((d & mask) == 0) {
                    *cut = at;
                    return 0;
                }
            }
        }
        base -= BATCH - n; /* a partial batch advances by n */
    }
    if (len >= CHUNK_MAX || final)
        *cut = end;
    return 0;
}
