/*
 * chunker_vaes.c: the chunker's AES-128 decisions with VAES on AVX-512
 * registers, sixteen blocks at a time (compiled with -mavx512f -mvaes -maes
 * by the Makefile; called only when cpu_has_vaes()).
 *
 * Why not OpenSSL here: its AES-128-ECB (OpenSSL 3.0) uses AES-NI on one
 * block per instruction, and a keyed chunker asks one block per byte of
 * data: measured 1.48 ns a block against 0.38 with VAES on this project's
 * machines, most of the add's main thread.  The portable path (chunker.c)
 * stays OpenSSL's EVP_aes_128_ecb, and test_chunker checks that both give
 * the same bytes.  The key schedule is FIPS-197's (section 5.2), computed
 * with AESKEYGENASSIST; AES instructions take the same time whatever the
 * key and data.
 */
#include <immintrin.h>
#include <string.h>

#include "util/util.h"
#include "vault/chunker_vaes.h"

/* next_round_key(k, assist): FIPS-197's expansion of one round key: the
 * previous four words, each xored with all before it, and the assist's
 * SubWord(RotWord(w3)) ^ Rcon in every word. */
static __m128i
next_round_key(__m128i k, __m128i assist)
{
    assist = _mm_shuffle_epi32(assist, 0xff);
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    return _mm_xor_si128(k, assist);
}

void
chunker_vaes_expand(const uint8_t key[16], uint8_t round_keys[CHUNKER_VAES_KEYS_BYTES])
{
    __m128i k[11];

    k[0] = _mm_loadu_si128((const __m128i *)key);
    /* (AESKEYGENASSIST takes its round constant as an immediate.) */
#define ROUND(i, rcon) k[i] = next_round_key(k[i - 1], _mm_aeskeygenassist_si128(k[i - 1], rcon))
    ROUND(1, 0x01);
    ROUND(2, 0x02);
    ROUND(3, 0x04);
    ROUND(4, 0x08);
    ROUND(5, 0x10);
    ROUND(6, 0x20);
    ROUND(7, 0x40);
    ROUND(8, 0x80);
    ROUND(9, 0x1b);
    ROUND(10, 0x36);
#undef ROUND
    for (int i = 0; i < 11; i++)
        _mm_storeu_si128((__m128i *)(round_keys + 16 * i), k[i]);
    util_wipe(k, sizeof(k));
}

void
chunker_vaes_encrypt(const uint8_t round_keys[CHUNKER_VAES_KEYS_BYTES], const uint8_t *in,
    uint8_t *out, size_t nblocks)
{
    __m512i k[11];
    __m128i k1[11];
    size_t i = 0;

    for (int r = 0; r < 11; r++) {
        k1[r] = _mm_loadu_si128((const __m128i *)(round_keys + 16 * r));
        k[r] = _mm512_broadcast_i32x4(k1[r]);
    }
    /* Four registers of four blocks: independent, so that the rounds of
     * one overlap the others' (named, so that they stay in registers). */
    for (; i + 16 <= nblocks; i += 16) {
        const uint8_t *p = in + 16 * i;
        __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(p), k[0]);
        __m512i x1 = _mm512_xor_si512(_mm512_loadu_si512(p + 64), k[0]);
        __m512i x2 = _mm512_xor_si512(_mm512_loadu_si512(p + 128), k[0]);
        __m512i x3 = _mm512_xor_si512(_mm512_loadu_si512(p + 192), k[0]);
#pragma GCC unroll 9
        for (int r = 1; r < 10; r++) {
            x0 = _mm512_aesenc_epi128(x0, k[r]);
            x1 = _mm512_aesenc_epi128(x1, k[r]);
            x2 = _mm512_aesenc_epi128(x2, k[r]);
            x3 = _mm512_aesenc_epi128(x3, k[r]);
        }
        _mm512_storeu_si512(out + 16 * i, _mm512_aesenclast_epi128(x0, k[10]));
        _mm512_storeu_si512(out + 16 * i + 64, _mm512_aesenclast_epi128(x1, k[10]));
        _mm512_storeu_si512(out + 16 * i + 128, _mm512_aesenclast_epi128(x2, k[10]));
        _mm512_storeu_si512(out + 16 * i + 192, _mm512_aesenclast_epi128(x3, k[10]));
    }
    for (; i < nblocks; i++) {
        __m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(in + 16 * i)), k1[0]);
        for (int r = 1; r < 10; r++)
            x = _mm_aesenc_si128(x, k1[r]);
        _mm_storeu_si128((__m128i *)(out + 16 * i), _mm_aesenclast_si128(x, k1[10]));
    }
    util_wipe(k, sizeof(k));
    util_wipe(k1, sizeof(k1));
}
