/*
 * argon2id_avx2.c: the Argon2 compression function G with AVX2 (compiled
 * with -mavx2 by the Makefile; called only when cpu_has_avx2()).
 *
 * A block is 8 rows of 16 words.  Rows: a row v0..v15 sits in four
 * registers (v0-3, v4-7, v8-11, v12-15), so the column step of P is
 * lane-wise and the diagonal step needs a rotation of three registers.
 * Columns: loading words 2i..2i+3 of each of the eight rows gives columns
 * i and i+1 at once (argon2id_simd.inc, shared with argon2id_avx512.c).
 */
#include <immintrin.h>

#include "crypto/argon2id_internal.h"
#include "util/util.h"

#define SIMD_V __m256i
#define SIMD_XOR(x, y) _mm256_xor_si256((x), (y))
#define SIMD_ADD(x, y) _mm256_add_epi64((x), (y))
#define SIMD_MUL32(x, y) _mm256_mul_epu32((x), (y))
/* Rotations right by 32, 24, 16 (byte moves) and 63 (add + shift). */
#define SIMD_ROTR32(x) _mm256_shuffle_epi32((x), _MM_SHUFFLE(2, 3, 0, 1))
#define SIMD_ROTR24(x)                                                        \
    _mm256_shuffle_epi8((x), _mm256_setr_epi8(3, 4, 5, 6, 7, 0, 1, 2, 11, 12, \
        13, 14, 15, 8, 9, 10, 3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10))
#define SIMD_ROTR16(x)                                                        \
    _mm256_shuffle_epi8((x), _mm256_setr_epi8(2, 3, 4, 5, 6, 7, 0, 1, 10, 11, \
        12, 13, 14, 15, 8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9))
#define SIMD_ROTR63(x) _mm256_xor_si256(_mm256_srli_epi64((x), 63), _mm256_add_epi64((x), (x)))
#define SIMD_PERMUTE4(x, imm) _mm256_permute4x64_epi64((x), (imm))
#define SIMD_LOW_HIGH_SWAPPED(x, y)                                           \
    _mm256_shuffle_epi32(_mm256_blend_epi32((x), (y), 0xCC), _MM_SHUFFLE(1, 0, 3, 2))
#define SIMD_STORE(p, x) _mm256_store_si256((p), (x))
#define SIMD_ROW_REGS 4

#include "crypto/argon2id_simd.inc"

void
argon2id_avx2_fill_block_with(argon2id_scratch *restrict s, argon2id_block *out,
    const argon2id_block *prev, const argon2id_block *ref, int xor_out,
    argon2id_early_fn *early, void *early_ctx)
{
    /* r: what is XORed into the result at the end (prev ^ ref, and the old
     * block in later passes); q: the state being permuted. */
    __m256i *restrict r = (__m256i *)s->r.v, *restrict q = (__m256i *)s->q.v;
    const __m256i *pv = (const __m256i *)prev->v;
    const __m256i *rv = (const __m256i *)ref->v;
    const __m256i *ov = (const __m256i *)out->v;

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
            /* Loaded and XORed in one step (a copy loop into r, now that r
             * is the caller's scratch, became a memcpy call per row). */
            r[k + 0] = _mm256_xor_si256(_mm256_load_si256(ov + k + 0), a0);
            r[k + 1] = _mm256_xor_si256(_mm256_load_si256(ov + k + 1), b0);
            r[k + 2] = _mm256_xor_si256(_mm256_load_si256(ov + k + 2), c0);
            r[k + 3] = _mm256_xor_si256(_mm256_load_si256(ov + k + 3), d0);
            r[k + 4] = _mm256_xor_si256(_mm256_load_si256(ov + k + 4), a1);
            r[k + 5] = _mm256_xor_si256(_mm256_load_si256(ov + k + 5), b1);
            r[k + 6] = _mm256_xor_si256(_mm256_load_si256(ov + k + 6), c1);
            r[k + 7] = _mm256_xor_si256(_mm256_load_si256(ov + k + 7), d1);
        } else {
            r[k + 0] = a0; r[k + 1] = b0; r[k + 2] = c0; r[k + 3] = d0;
            r[k + 4] = a1; r[k + 5] = b1; r[k + 6] = c1; r[k + 7] = d1;
        }
        GB(a0, b0, c0, d0);
        GB(a1, b1, c1, d1);
        ROW_DIAGONALIZE(b0, c0, d0);
        ROW_DIAGONALIZE(b1, c1, d1);
        GB(a0, b0, c0, d0);
        GB(a1, b1, c1, d1);
        ROW_UNDIAGONALIZE(b0, c0, d0);
        ROW_UNDIAGONALIZE(b1, c1, d1);
        q[k + 0] = a0; q[k + 1] = b0; q[k + 2] = c0; q[k + 3] = d0;
        q[k + 4] = a1; q[k + 5] = b1; q[k + 6] = c1; q[k + 7] = d1;
    }

    /* P on the columns, two columns (one register per row) at a time. */
    simd_columns(q, r, out, early, early_ctx);
}

void
argon2id_avx2_fill_block(argon2id_block *out, const argon2id_block *prev,
    const argon2id_block *ref, int xor_out, argon2id_early_fn *early, void *early_ctx)
{
    argon2id_scratch s;

    argon2id_avx2_fill_block_with(&s, out, prev, ref, xor_out, early, early_ctx);
    util_wipe(&s, sizeof(s));
}
