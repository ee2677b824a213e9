/*
 * frodo_keccak4.h: four-way Keccak-f[1600] and the SHAKE128 rows of A, one
 * source for two instruction sets.  The includer defines
 *   K4_XOR(a, b), K4_XOR3(a, b, c)   exclusive or of two / three vectors
 *   K4_ROTL(v, n)                    rotate each 64-bit lane left by n
 *   K4_CHI(a, b, c)                  a ^ (~b & c)
 *   K4_ROWS4_NAME                    the name of the exported rows function
 * and includes it once (frodo_avx2.c: AVX2 sequences; frodo_avx512.c: the
 * AVX-512VL single instructions vprolq and vpternlogq on the same 256-bit
 * vectors, and 32 vector registers instead of 16).
 */
#ifndef PQV_FRODO_KECCAK4_H
#define PQV_FRODO_KECCAK4_H

#include <immintrin.h>
#include <string.h>

#include "crypto/frodo_internal.h"


/*
 * Generating A for the SHAKE parameter sets is dominated by SHAKE128 (one
 * 2n-byte output per row).  Four rows are independent, so four Keccak
 * states run side by side, one per 64-bit lane of each __m256i: lane
 * state[i] holds Keccak lane i (x = i % 5, y = i / 5) of all four
 * instances.  The permutation follows FIPS 202, section 3.
 */

/* Round constants of iota (FIPS 202, 3.2.5). */
static const uint64_t keccak_rc[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808AULL,
    0x8000000080008000ULL, 0x000000000000808BULL, 0x0000000080000001ULL,
    0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008AULL,
    0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000AULL,
    0x000000008000808BULL, 0x800000000000008BULL, 0x8000000000008089ULL,
    0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL,
    0x000000000000800AULL, 0x800000008000000AULL, 0x8000000080008081ULL,
    0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};


/*
 * keccak_f1600_x4(s): apply the 24-round permutation to four states.  The
 * round is written out lane by lane (theta, rho with the offsets of FIPS
 * 202 table 2, pi, chi; iota last) so every rotation is by a constant;
 * rotations by 8 and 56 bits are byte shuffles.
 */
static inline void
keccak_f1600_x4(__m256i s[25])
{
    __m256i b[25], c0, c1, c2, c3, c4, d;
    const __m256i rot8 = _mm256_set_epi8(14, 13, 12, 11, 10, 9, 8, 15,
        6, 5, 4, 3, 2, 1, 0, 7, 14, 13, 12, 11, 10, 9, 8, 15,
        6, 5, 4, 3, 2, 1, 0, 7);
    const __m256i rot56 = _mm256_set_epi8(8, 15, 14, 13, 12, 11, 10, 9,
        0, 7, 6, 5, 4, 3, 2, 1, 8, 15, 14, 13, 12, 11, 10, 9,
        0, 7, 6, 5, 4, 3, 2, 1);

    for (int round = 0; round < 24; round++) {
        /* theta */
        c0 = K4_XOR3(K4_XOR3(s[0], s[5], s[10]), s[15], s[20]);
        c1 = K4_XOR3(K4_XOR3(s[1], s[6], s[11]), s[16], s[21]);
        c2 = K4_XOR3(K4_XOR3(s[2], s[7], s[12]), s[17], s[22]);
        c3 = K4_XOR3(K4_XOR3(s[3], s[8], s[13]), s[18], s[23]);
        c4 = K4_XOR3(K4_XOR3(s[4], s[9], s[14]), s[19], s[24]);
        d = K4_XOR(c4, K4_ROTL(c1, 1));
        s[0] = K4_XOR(s[0], d);
        s[5] = K4_XOR(s[5], d);
        s[10] = K4_XOR(s[10], d);
        s[15] = K4_XOR(s[15], d);
        s[20] = K4_XOR(s[20], d);
        d = K4_XOR(c0, K4_ROTL(c2, 1));
        s[1] = K4_XOR(s[1], d);
        s[6] = K4_XOR(s[6], d);
        s[11] = K4_XOR(s[11], d);
        s[16] = K4_XOR(s[16], d);
        s[21] = K4_XOR(s[21], d);
        d = K4_XOR(c1, K4_ROTL(c3, 1));
        s[2] = K4_XOR(s[2], d);
        s[7] = K4_XOR(s[7], d);
        s[12] = K4_XOR(s[12], d);
        s[17] = K4_XOR(s[17], d);
        s[22] = K4_XOR(s[22], d);
        d = K4_XOR(c2, K4_ROTL(c4, 1));
        s[3] = K4_XOR(s[3], d);
        s[8] = K4_XOR(s[8], d);
        s[13] = K4_XOR(s[13], d);
        s[18] = K4_XOR(s[18], d);
        s[23] = K4_XOR(s[23], d);
        d = K4_XOR(c3, K4_ROTL(c0, 1));
        s[4] = K4_XOR(s[4], d);
        s[9] = K4_XOR(s[9], d);
        s[14] = K4_XOR(s[14], d);
        s[19] = K4_XOR(s[19], d);
        s[24] = K4_XOR(s[24], d);
        /* rho and pi: lane (x, y) -> (y, 2x + 3y) */
        b[0] = s[0];
        b[10] = K4_ROTL(s[1], 1);
        b[20] = K4_ROTL(s[2], 62);
        b[5] = K4_ROTL(s[3], 28);
        b[15] = K4_ROTL(s[4], 27);
        b[16] = K4_ROTL(s[5], 36);
        b[1] = K4_ROTL(s[6], 44);
        b[11] = K4_ROTL(s[7], 6);
        b[21] = K4_ROTL(s[8], 55);
        b[6] = K4_ROTL(s[9], 20);
        b[7] = K4_ROTL(s[10], 3);
        b[17] = K4_ROTL(s[11], 10);
        b[2] = K4_ROTL(s[12], 43);
        b[12] = K4_ROTL(s[13], 25);
        b[22] = K4_ROTL(s[14], 39);
        b[23] = K4_ROTL(s[15], 41);
        b[8] = K4_ROTL(s[16], 45);
        b[18] = K4_ROTL(s[17], 15);
        b[3] = K4_ROTL(s[18], 21);
        b[13] = _mm256_shuffle_epi8(s[19], rot8);
        b[14] = K4_ROTL(s[20], 18);
        b[24] = K4_ROTL(s[21], 2);
        b[9] = K4_ROTL(s[22], 61);
        b[19] = _mm256_shuffle_epi8(s[23], rot56);
        b[4] = K4_ROTL(s[24], 14);
        /* chi */
        s[0] = K4_CHI(b[0], b[1], b[2]);
        s[1] = K4_CHI(b[1], b[2], b[3]);
        s[2] = K4_CHI(b[2], b[3], b[4]);
        s[3] = K4_CHI(b[3], b[4], b[0]);
        s[4] = K4_CHI(b[4], b[0], b[1]);
        s[5] = K4_CHI(b[5], b[6], b[7]);
        s[6] = K4_CHI(b[6], b[7], b[8]);
        s[7] = K4_CHI(b[7], b[8], b[9]);
        s[8] = K4_CHI(b[8], b[9], b[5]);
        s[9] = K4_CHI(b[9], b[5], b[6]);
        s[10] = K4_CHI(b[10], b[11], b[12]);
        s[11] = K4_CHI(b[11], b[12], b[13]);
        s[12] = K4_CHI(b[12], b[13], b[14]);
        s[13] = K4_CHI(b[13], b[14], b[10]);
        s[14] = K4_CHI(b[14], b[10], b[11]);
        s[15] = K4_CHI(b[15], b[16], b[17]);
        s[16] = K4_CHI(b[16], b[17], b[18]);
        s[17] = K4_CHI(b[17], b[18], b[19]);
        s[18] = K4_CHI(b[18], b[19], b[15]);
        s[19] = K4_CHI(b[19], b[15], b[16]);
        s[20] = K4_CHI(b[20], b[21], b[22]);
        s[21] = K4_CHI(b[21], b[22], b[23]);
        s[22] = K4_CHI(b[22], b[23], b[24]);
        s[23] = K4_CHI(b[23], b[24], b[20]);
        s[24] = K4_CHI(b[24], b[20], b[21]);
        /* iota */
        s[0] = K4_XOR(s[0], _mm256_set1_epi64x((long long)keccak_rc[round]));
    }
}

/* SHAKE128 rate in bytes and in 64-bit lanes. */
#define SHAKE128_RATE 168

/*
 * frodo_avx2_shake128_rows4(rows, n, first, seedA): rows first ..
 * first+3 of A for the SHAKE parameter sets, row i = SHAKE128(<i> ||
 * seedA, 2n bytes) with <i> 16-bit little-endian, written row-major (n
 * entries each, little-endian host) to ${rows}.
 */
void
K4_ROWS4_NAME(uint16_t *rows, size_t n, size_t first,
    const uint8_t *seedA)
{
    __m256i s[25];
    uint64_t lanes[4][3];
    size_t outlen = 2 * n;
    uint8_t *out = (uint8_t *)rows;

    /* Absorb the 18-byte input <i> || seedA and the SHAKE padding (domain
     * bits 1111 then pad10*1): lanes 0..2 differ per row, lane 20 holds
     * the final 0x80 (byte 167 of the 168-byte block). */
    for (int k = 0; k < 4; k++) {
        uint8_t block[24] = { 0 };
        block[0] = (uint8_t)(first + (size_t)k);
        block[1] = (uint8_t)((first + (size_t)k) >> 8);
        memcpy(block + 2, seedA, 16);
        block[18] = 0x1F;
        memcpy(lanes[k], block, sizeof(block));
    }
    for (int i = 0; i < 25; i++)
        s[i] = _mm256_setzero_si256();
    for (int i = 0; i < 3; i++)
        s[i] = _mm256_set_epi64x((long long)lanes[3][i], (long long)lanes[2][i],
            (long long)lanes[1][i], (long long)lanes[0][i]);
    s[20] = _mm256_set1_epi64x((long long)0x8000000000000000ULL);

    /* Squeeze: each permutation yields 168 bytes of every row. */
    for (size_t off = 0; off < outlen; off += SHAKE128_RATE) {
        uint64_t block[SHAKE128_RATE / 8][4];
        size_t take = outlen - off < SHAKE128_RATE ? outlen - off : SHAKE128_RATE;
        keccak_f1600_x4(s);
        for (int i = 0; i < SHAKE128_RATE / 8; i++)
            _mm256_storeu_si256((__m256i *)block[i], s[i]);
        for (int k = 0; k < 4; k++) {
            uint8_t *dst = out + (size_t)k * outlen + off;
            size_t i = 0;
            for (; i + 8 <= take; i += 8)
                memcpy(dst + i, &block[i / 8][k], 8);
            if (i < take)
                memcpy(dst + i, &block[i / 8][k], take - i);
        }
    }
}

#endif
