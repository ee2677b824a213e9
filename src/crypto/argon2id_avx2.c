/*
 * argon2id_avx2.c: the Argon2 compression function G with AVX2 (compiled
 * with -mavx2 by the Makefile; called only when pqv_cpu_has_avx2()).
 *
 * A block is 8 rows of 16 words.  Rows: a row v0..v15 sits in four
 * registers (v0-3, v4-7, v8-11, v12-15), so the column step of P is
 * lane-wise and the diagonal step needs a rotation of three registers.
 * Columns: column i is word pair (2i, 2i+1) of every row; loading words
 * 2i..2i+3 of each of the eight rows gives columns i and i+1 at once, with
 * rows 0,2,4,6 forming one GB quadruple and rows 1,3,5,7 the other.  Then
 * the column step is again lane-wise and the diagonal step is a blend and
 * an in-lane swap, which avoids cross-lane permutes.
 */
#include <immintrin.h>

#include "crypto/argon2id_internal.h"

/* x + y + 2 * lo32(x) * lo32(y), four words at a time. */
static inline __m256i
fblamka4(__m256i x, __m256i y)
{
    __m256i product = _mm256_mul_epu32(x, y);
    return _mm256_add_epi64(_mm256_add_epi64(x, y), _mm256_add_epi64(product, product));
}

/* Rotations right by 32, 24, 16 (byte moves) and 63 (add + shift). */
#define ROTR32(x) _mm256_shuffle_epi32((x), _MM_SHUFFLE(2, 3, 0, 1))
#define ROTR24(x) _mm256_shuffle_epi8((x), rot24)
#define ROTR16(x) _mm256_shuffle_epi8((x), rot16)
#define ROTR63(x) _mm256_xor_si256(_mm256_srli_epi64((x), 63), _mm256_add_epi64((x), (x)))

/* GB on four registers: lane j of a, b, c, d is one GB quadruple. */
#define GB4(a, b, c, d)                                                       \
    do {                                                                      \
        a = fblamka4(a, b);                                                   \
        d = ROTR32(_mm256_xor_si256(d, a));                                   \
        c = fblamka4(c, d);                                                   \
        b = ROTR24(_mm256_xor_si256(b, c));                                   \
        a = fblamka4(a, b);                                                   \
        d = ROTR16(_mm256_xor_si256(d, a));                                   \
        c = fblamka4(c, d);                                                   \
        b = ROTR63(_mm256_xor_si256(b, c));                                   \
    } while (0)

/* Row layout: rotate b, c, d left by 1, 2, 3 words for the diagonals. */
#define ROW_DIAGONALIZE(b, c, d)                                              \
    do {                                                                      \
        b = _mm256_permute4x64_epi64(b, _MM_SHUFFLE(0, 3, 2, 1));             \
        c = _mm256_permute4x64_epi64(c, _MM_SHUFFLE(1, 0, 3, 2));             \
        d = _mm256_permute4x64_epi64(d, _MM_SHUFFLE(2, 1, 0, 3));             \
    } while (0)
#define ROW_UNDIAGONALIZE(b, c, d)                                            \
    do {                                                                      \
        b = _mm256_permute4x64_epi64(b, _MM_SHUFFLE(2, 1, 0, 3));             \
        c = _mm256_permute4x64_epi64(c, _MM_SHUFFLE(1, 0, 3, 2));             \
        d = _mm256_permute4x64_epi64(d, _MM_SHUFFLE(0, 3, 2, 1));             \
    } while (0)

/* (low word from x, high word from y) in each 128-bit half, then swapped. */
#define LOW_HIGH_SWAPPED(x, y)                                                \
    _mm256_shuffle_epi32(_mm256_blend_epi32((x), (y), 0xCC), _MM_SHUFFLE(1, 0, 3, 2))

void
pqv_argon2_fill_block_avx2(pqv_argon2_block *out, const pqv_argon2_block *prev,
    const pqv_argon2_block *ref, int xor_out, pqv_argon2_early_fn *early, void *early_ctx)
{
    const __m256i rot24 = _mm256_setr_epi8(3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8,
        9, 10, 3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10);
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15,
        8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9);
    /* r: what is XORed into the result at the end (prev ^ ref, and the old
     * block in later passes); q: the state being permuted. */
    __m256i r[32], q[32];
    const __m256i *pv = (const __m256i *)prev->v;
    const __m256i *rv = (const __m256i *)ref->v;
    __m256i *ov = (__m256i *)out->v;

    /* P on the rows, two rows at a time for instruction-level parallelism. */
    for (unsigned row = 0; row < 8; row += 2) {
        __m256i a0, b0, c0, d0, a1, b1, c1, d1;
        unsigned k = 4 * row;
        a0 = _mm256_xor_si256(_mm256_load_si256(pv + k + 0), _mm256_load_si256(rv + k + 0));
        b0 = _mm256_xor_si256(_mm256_load_si256(pv + k + 1), _mm256_load_si256(rv + k + 1));
        c0 = _mm256_xor_si256(_mm256_load_si256(pv + k + 2), _mm256_load_si256(rv + k + 2));
        d0 = _mm256_xor_si256(_mm256_load_si256(pv + k + 3), _mm256_load_si256(rv + k + 3));
        a1 = _mm256_xor_si256(_mm256_load_si256(pv + k + 4), _mm256_load_si256(rv + k + 4));
        b1 = _mm256_xor_si256(_mm256_load_si256(pv + k + 5), _mm256_load_si256(rv + k + 5));
        c1 = _mm256_xor_si256(_mm256_load_si256(pv + k + 6), _mm256_load_si256(rv + k + 6));
        d1 = _mm256_xor_si256(_mm256_load_si256(pv + k + 7), _mm256_load_si256(rv + k + 7));
        if (xor_out) {
            for (unsigned j = 0; j < 8; j++)
                r[k + j] = _mm256_load_si256(ov + k + j);
            r[k + 0] = _mm256_xor_si256(r[k + 0], a0);
            r[k + 1] = _mm256_xor_si256(r[k + 1], b0);
            r[k + 2] = _mm256_xor_si256(r[k + 2], c0);
            r[k + 3] = _mm256_xor_si256(r[k + 3], d0);
            r[k + 4] = _mm256_xor_si256(r[k + 4], a1);
            r[k + 5] = _mm256_xor_si256(r[k + 5], b1);
            r[k + 6] = _mm256_xor_si256(r[k + 6], c1);
            r[k + 7] = _mm256_xor_si256(r[k + 7], d1);
        } else {
            r[k + 0] = a0; r[k + 1] = b0; r[k + 2] = c0; r[k + 3] = d0;
            r[k + 4] = a1; r[k + 5] = b1; r[k + 6] = c1; r[k + 7] = d1;
        }
        GB4(a0, b0, c0, d0);
        GB4(a1, b1, c1, d1);
        ROW_DIAGONALIZE(b0, c0, d0);
        ROW_DIAGONALIZE(b1, c1, d1);
        GB4(a0, b0, c0, d0);
        GB4(a1, b1, c1, d1);
        ROW_UNDIAGONALIZE(b0, c0, d0);
        ROW_UNDIAGONALIZE(b1, c1, d1);
        q[k + 0] = a0; q[k + 1] = b0; q[k + 2] = c0; q[k + 3] = d0;
        q[k + 4] = a1; q[k + 5] = b1; q[k + 6] = c1; q[k + 7] = d1;
    }

    /* P on the columns, two columns (one register per row) at a time.
     * Register index of words 4c..4c+3 of row n is 4n + c. */
    for (unsigned c = 0; c < 4; c++) {
        __m256i a0 = q[0 + c], a1 = q[4 + c];   /* rows 0, 1 */
        __m256i b0 = q[8 + c], b1 = q[12 + c];  /* rows 2, 3 */
        __m256i c0 = q[16 + c], c1 = q[20 + c]; /* rows 4, 5 */
        __m256i d0 = q[24 + c], d1 = q[28 + c]; /* rows 6, 7 */
        __m256i t0, t1;

        GB4(a0, b0, c0, d0);
        GB4(a1, b1, c1, d1);
        /* Diagonals (v0,v5,v10,v15) (v1,v6,v11,v12) in a0's quadruples and
         * (v2,v7,v8,v13) (v3,v4,v9,v14) in a1's. */
        t0 = LOW_HIGH_SWAPPED(b1, b0);
        t1 = LOW_HIGH_SWAPPED(b0, b1);
        b0 = t0;
        b1 = t1;
        t0 = LOW_HIGH_SWAPPED(d0, d1);
        t1 = LOW_HIGH_SWAPPED(d1, d0);
        d0 = t0;
        d1 = t1;
        GB4(a0, b0, c1, d0);
        GB4(a1, b1, c0, d1);
        t0 = LOW_HIGH_SWAPPED(b0, b1);
        t1 = LOW_HIGH_SWAPPED(b1, b0);
        b0 = t0;
        b1 = t1;
        t0 = LOW_HIGH_SWAPPED(d1, d0);
        t1 = LOW_HIGH_SWAPPED(d0, d1);
        d0 = t0;
        d1 = t1;

        _mm256_store_si256(ov + 0 + c, _mm256_xor_si256(a0, r[0 + c]));
        _mm256_store_si256(ov + 4 + c, _mm256_xor_si256(a1, r[4 + c]));
        _mm256_store_si256(ov + 8 + c, _mm256_xor_si256(b0, r[8 + c]));
        _mm256_store_si256(ov + 12 + c, _mm256_xor_si256(b1, r[12 + c]));
        _mm256_store_si256(ov + 16 + c, _mm256_xor_si256(c0, r[16 + c]));
        _mm256_store_si256(ov + 20 + c, _mm256_xor_si256(c1, r[20 + c]));
        _mm256_store_si256(ov + 24 + c, _mm256_xor_si256(d0, r[24 + c]));
        _mm256_store_si256(ov + 28 + c, _mm256_xor_si256(d1, r[28 + c]));
        /* Word 0 is final after the first column pair: let the caller
         * start fetching the next reference block now. */
        if (c == 0 && early != NULL)
            early(early_ctx, out->v[0]);
    }
}
