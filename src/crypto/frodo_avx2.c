/*
 * frodo_avx2.c: AVX2 versions of the FrodoKEM matrix kernels declared in
 * frodo_internal.h (same contracts as the generic C versions there).  The
 * Makefile compiles *_avx2.c with -mavx2; frodo.c calls these only when
 * pqv_cpu_has_avx2() says the CPU and OS support AVX2.
 *
 * One __m256i holds 16 uint16_t entries; _mm256_mullo_epi16 and
 * _mm256_add_epi16 wrap modulo 2^16 exactly like the generic code.  There
 * are no data-dependent branches or addresses, so the kernels stay
 * constant time with respect to the secret matrices.
 */
#include <immintrin.h>

#include "crypto/frodo_internal.h"

/*
 * hsum8(acc): the 8 horizontal sums of acc[0..7] (16 lanes each), in
 * order, as one 128-bit vector.  Three rounds of pairwise adds
 * (_mm256_hadd_epi16 wraps, unlike hadds) leave, in each 128-bit half,
 * the sums of that half for acc[0..7]; adding the halves finishes.
 */
static inline __m128i
hsum8(const __m256i acc[8])
{
    __m256i h01 = _mm256_hadd_epi16(acc[0], acc[1]);
    __m256i h23 = _mm256_hadd_epi16(acc[2], acc[3]);
    __m256i h45 = _mm256_hadd_epi16(acc[4], acc[5]);
    __m256i h67 = _mm256_hadd_epi16(acc[6], acc[7]);
    __m256i h0123 = _mm256_hadd_epi16(h01, h23);
    __m256i h4567 = _mm256_hadd_epi16(h45, h67);
    __m256i h = _mm256_hadd_epi16(h0123, h4567);
    return _mm_add_epi16(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* out[r*8 + k] += <rows[r], st[k]> for r < nrows, k < 8 (see the generic
 * version): eight accumulators per row, one per column of S.  The k loop
 * is written out so that the accumulators stay in registers. */
void
pqv_frodo_rows_dot_avx2(uint16_t *out, const uint16_t *rows, size_t nrows,
    size_t n, const uint16_t *st)
{
    const uint16_t *s0 = st, *s1 = st + n, *s2 = st + 2 * n, *s3 = st + 3 * n,
                   *s4 = st + 4 * n, *s5 = st + 5 * n, *s6 = st + 6 * n,
                   *s7 = st + 7 * n;

    for (size_t r = 0; r < nrows; r++) {
        const uint16_t *a = rows + r * n;
        __m256i acc[FRODO_NBAR];
        __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0,
                c4 = c0, c5 = c0, c6 = c0, c7 = c0;
        for (size_t j = 0; j < n; j += 16) {
            __m256i av = _mm256_loadu_si256((const __m256i *)(a + j));
#define FRODO_DOT_STEP(c, s)                                                  \
    c = _mm256_add_epi16(c, _mm256_mullo_epi16(av,                            \
            _mm256_loadu_si256((const __m256i *)((s) + j))))
            FRODO_DOT_STEP(c0, s0);
            FRODO_DOT_STEP(c1, s1);
            FRODO_DOT_STEP(c2, s2);
            FRODO_DOT_STEP(c3, s3);
            FRODO_DOT_STEP(c4, s4);
            FRODO_DOT_STEP(c5, s5);
            FRODO_DOT_STEP(c6, s6);
            FRODO_DOT_STEP(c7, s7);
#undef FRODO_DOT_STEP
        }
        acc[0] = c0, acc[1] = c1, acc[2] = c2, acc[3] = c3;
        acc[4] = c4, acc[5] = c5, acc[6] = c6, acc[7] = c7;
        __m128i *o = (__m128i *)(out + r * FRODO_NBAR);
        _mm_storeu_si128(o, _mm_add_epi16(_mm_loadu_si128(o), hsum8(acc)));
    }
}

/* out[k] += sum_r coef[k*nrows + r] * rows[r] for k < 8 (see the generic
 * version).  For each output row k, the eight coefficients of a block of
 * 8 rows are broadcast into registers once; then every 16-column slice
 * of out[k] is updated with the eight row slices, summed as a tree so
 * that the additions do not form one long dependency chain. */
void
pqv_frodo_cols_axpy_avx2(uint16_t *out, const uint16_t *coef,
    const uint16_t *rows, size_t nrows, size_t n)
{
    size_t r0 = 0;

    for (; r0 + 8 <= nrows; r0 += 8) {
        const uint16_t *a0 = rows + r0 * n, *a1 = a0 + n, *a2 = a1 + n,
                       *a3 = a2 + n, *a4 = a3 + n, *a5 = a4 + n, *a6 = a5 + n,
                       *a7 = a6 + n;
        for (size_t k = 0; k < FRODO_NBAR; k++) {
            const uint16_t *ck = coef + k * nrows + r0;
            __m256i b0 = _mm256_set1_epi16((short)ck[0]);
            __m256i b1 = _mm256_set1_epi16((short)ck[1]);
            __m256i b2 = _mm256_set1_epi16((short)ck[2]);
            __m256i b3 = _mm256_set1_epi16((short)ck[3]);
            __m256i b4 = _mm256_set1_epi16((short)ck[4]);
            __m256i b5 = _mm256_set1_epi16((short)ck[5]);
            __m256i b6 = _mm256_set1_epi16((short)ck[6]);
            __m256i b7 = _mm256_set1_epi16((short)ck[7]);
            uint16_t *ok = out + k * n;
            for (size_t j = 0; j < n; j += 16) {
#define FRODO_AXPY_TERM(b, a)                                                 \
    _mm256_mullo_epi16(b, _mm256_loadu_si256((const __m256i *)((a) + j)))
                __m256i t01 = _mm256_add_epi16(FRODO_AXPY_TERM(b0, a0),
                    FRODO_AXPY_TERM(b1, a1));
                __m256i t23 = _mm256_add_epi16(FRODO_AXPY_TERM(b2, a2),
                    FRODO_AXPY_TERM(b3, a3));
                __m256i t45 = _mm256_add_epi16(FRODO_AXPY_TERM(b4, a4),
                    FRODO_AXPY_TERM(b5, a5));
                __m256i t67 = _mm256_add_epi16(FRODO_AXPY_TERM(b6, a6),
                    FRODO_AXPY_TERM(b7, a7));
#undef FRODO_AXPY_TERM
                __m256i *o = (__m256i *)(ok + j);
                __m256i sum = _mm256_add_epi16(_mm256_add_epi16(t01, t23),
                    _mm256_add_epi16(t45, t67));
                _mm256_storeu_si256(o, _mm256_add_epi16(_mm256_loadu_si256(o), sum));
            }
        }
    }
    if (r0 < nrows) {
        /* Leftover rows (not used by frodo.c, whose blocks are 8 rows). */
        for (size_t k = 0; k < FRODO_NBAR; k++)
            for (size_t r = r0; r < nrows; r++) {
                uint32_t cf = coef[k * nrows + r];
                for (size_t j = 0; j < n; j++)
                    out[k * n + j] = (uint16_t)(out[k * n + j] + cf * rows[r * n + j]);
            }
    }
}

/* The sampler of frodo_internal.h, vectorised by the compiler with AVX2. */
void
pqv_frodo_sample_avx2(uint16_t *w, size_t count, const uint16_t *cdf,
    size_t cdf_len)
{
    frodo_sample_generic(w, count, cdf, cdf_len);
}

/* ---- Four-way Keccak-f[1600] and SHAKE128 rows of A ------------------- */

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

#define XOR(a, b) _mm256_xor_si256((a), (b))
/* Rotate each 64-bit lane left by the constant n, 0 < n < 64. */
#define ROTL64X4(v, n) \
    _mm256_or_si256(_mm256_slli_epi64((v), (n)), _mm256_srli_epi64((v), 64 - (n)))

/*
 * keccak_f1600_x4(s): apply the 24-round permutation to four states.  The
 * round is written out lane by lane (theta, rho with the offsets of FIPS
 * 202 table 2, pi, chi; iota last) so every rotation is by a constant;
 * rotations by 8 and 56 bits are byte shuffles.
 */
static void
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
        c0 = XOR(XOR(XOR(s[0], s[5]), XOR(s[10], s[15])), s[20]);
        c1 = XOR(XOR(XOR(s[1], s[6]), XOR(s[11], s[16])), s[21]);
        c2 = XOR(XOR(XOR(s[2], s[7]), XOR(s[12], s[17])), s[22]);
        c3 = XOR(XOR(XOR(s[3], s[8]), XOR(s[13], s[18])), s[23]);
        c4 = XOR(XOR(XOR(s[4], s[9]), XOR(s[14], s[19])), s[24]);
        d = XOR(c4, ROTL64X4(c1, 1));
        s[0] = XOR(s[0], d);
        s[5] = XOR(s[5], d);
        s[10] = XOR(s[10], d);
        s[15] = XOR(s[15], d);
        s[20] = XOR(s[20], d);
        d = XOR(c0, ROTL64X4(c2, 1));
        s[1] = XOR(s[1], d);
        s[6] = XOR(s[6], d);
        s[11] = XOR(s[11], d);
        s[16] = XOR(s[16], d);
        s[21] = XOR(s[21], d);
        d = XOR(c1, ROTL64X4(c3, 1));
        s[2] = XOR(s[2], d);
        s[7] = XOR(s[7], d);
        s[12] = XOR(s[12], d);
        s[17] = XOR(s[17], d);
        s[22] = XOR(s[22], d);
        d = XOR(c2, ROTL64X4(c4, 1));
        s[3] = XOR(s[3], d);
        s[8] = XOR(s[8], d);
        s[13] = XOR(s[13], d);
        s[18] = XOR(s[18], d);
        s[23] = XOR(s[23], d);
        d = XOR(c3, ROTL64X4(c0, 1));
        s[4] = XOR(s[4], d);
        s[9] = XOR(s[9], d);
        s[14] = XOR(s[14], d);
        s[19] = XOR(s[19], d);
        s[24] = XOR(s[24], d);
        /* rho and pi: lane (x, y) -> (y, 2x + 3y) */
        b[0] = s[0];
        b[10] = ROTL64X4(s[1], 1);
        b[20] = ROTL64X4(s[2], 62);
        b[5] = ROTL64X4(s[3], 28);
        b[15] = ROTL64X4(s[4], 27);
        b[16] = ROTL64X4(s[5], 36);
        b[1] = ROTL64X4(s[6], 44);
        b[11] = ROTL64X4(s[7], 6);
        b[21] = ROTL64X4(s[8], 55);
        b[6] = ROTL64X4(s[9], 20);
        b[7] = ROTL64X4(s[10], 3);
        b[17] = ROTL64X4(s[11], 10);
        b[2] = ROTL64X4(s[12], 43);
        b[12] = ROTL64X4(s[13], 25);
        b[22] = ROTL64X4(s[14], 39);
        b[23] = ROTL64X4(s[15], 41);
        b[8] = ROTL64X4(s[16], 45);
        b[18] = ROTL64X4(s[17], 15);
        b[3] = ROTL64X4(s[18], 21);
        b[13] = _mm256_shuffle_epi8(s[19], rot8);
        b[14] = ROTL64X4(s[20], 18);
        b[24] = ROTL64X4(s[21], 2);
        b[9] = ROTL64X4(s[22], 61);
        b[19] = _mm256_shuffle_epi8(s[23], rot56);
        b[4] = ROTL64X4(s[24], 14);
        /* chi */
        s[0] = XOR(b[0], _mm256_andnot_si256(b[1], b[2]));
        s[1] = XOR(b[1], _mm256_andnot_si256(b[2], b[3]));
        s[2] = XOR(b[2], _mm256_andnot_si256(b[3], b[4]));
        s[3] = XOR(b[3], _mm256_andnot_si256(b[4], b[0]));
        s[4] = XOR(b[4], _mm256_andnot_si256(b[0], b[1]));
        s[5] = XOR(b[5], _mm256_andnot_si256(b[6], b[7]));
        s[6] = XOR(b[6], _mm256_andnot_si256(b[7], b[8]));
        s[7] = XOR(b[7], _mm256_andnot_si256(b[8], b[9]));
        s[8] = XOR(b[8], _mm256_andnot_si256(b[9], b[5]));
        s[9] = XOR(b[9], _mm256_andnot_si256(b[5], b[6]));
        s[10] = XOR(b[10], _mm256_andnot_si256(b[11], b[12]));
        s[11] = XOR(b[11], _mm256_andnot_si256(b[12], b[13]));
        s[12] = XOR(b[12], _mm256_andnot_si256(b[13], b[14]));
        s[13] = XOR(b[13], _mm256_andnot_si256(b[14], b[10]));
        s[14] = XOR(b[14], _mm256_andnot_si256(b[10], b[11]));
        s[15] = XOR(b[15], _mm256_andnot_si256(b[16], b[17]));
        s[16] = XOR(b[16], _mm256_andnot_si256(b[17], b[18]));
        s[17] = XOR(b[17], _mm256_andnot_si256(b[18], b[19]));
        s[18] = XOR(b[18], _mm256_andnot_si256(b[19], b[15]));
        s[19] = XOR(b[19], _mm256_andnot_si256(b[15], b[16]));
        s[20] = XOR(b[20], _mm256_andnot_si256(b[21], b[22]));
        s[21] = XOR(b[21], _mm256_andnot_si256(b[22], b[23]));
        s[22] = XOR(b[22], _mm256_andnot_si256(b[23], b[24]));
        s[23] = XOR(b[23], _mm256_andnot_si256(b[24], b[20]));
        s[24] = XOR(b[24], _mm256_andnot_si256(b[20], b[21]));
        /* iota */
        s[0] = XOR(s[0], _mm256_set1_epi64x((long long)keccak_rc[round]));
    }
}
#undef ROTL64X4
#undef XOR

/* SHAKE128 rate in bytes and in 64-bit lanes. */
#define SHAKE128_RATE 168

/*
 * pqv_frodo_shake128_rows4_avx2(rows, n, first, seedA): rows first ..
 * first+3 of A for the SHAKE parameter sets, row i = SHAKE128(<i> ||
 * seedA, 2n bytes) with <i> 16-bit little-endian, written row-major (n
 * entries each, little-endian host) to ${rows}.
 */
void
pqv_frodo_shake128_rows4_avx2(uint16_t *rows, size_t n, size_t first,
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
