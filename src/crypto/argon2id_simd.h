/*
 * argon2id_simd.h: the parts of the Argon2 compression function G (RFC
 * 9106, section 3.5) common to the vector kernels, one source for two
 * instruction sets.  The includer defines
 *   SIMD_V                         the vector type (64-bit lanes)
 *   SIMD_XOR(x, y), SIMD_ADD(x, y) lane-wise exclusive or / 64-bit sum
 *   SIMD_MUL32(x, y)               lo32(x) * lo32(y) in each lane
 *   SIMD_ROTR32(x) .. SIMD_ROTR63(x)  rotate each lane right by 32, 24,
 *                                  16 and 63 bits
 *   SIMD_PERMUTE4(x, imm)          permute the four words of each 256-bit
 *                                  group of x by the _MM_SHUFFLE imm
 *   SIMD_LOW_HIGH_SWAPPED(x, y)    in each 128-bit lane, the high word of y
 *                                  then the low word of x
 *   SIMD_STORE(p, x)               aligned store
 *   SIMD_ROW_REGS                  registers per 16-word row of a block
 * and includes it once (argon2id_avx2.c: __m256i, 4 registers a row;
 * argon2id_avx512.c: __m512i, 2 registers a row, native rotates).  The
 * includer keeps its own row step (how rows map to registers differs) and
 * calls simd_columns for the column step, which is the same for both.
 */
#ifndef PQV_ARGON2ID_SIMD_H
#define PQV_ARGON2ID_SIMD_H

#include <immintrin.h>

#include "crypto/argon2id_internal.h"

/* x + y + 2 * lo32(x) * lo32(y), a vector at a time. */
static inline SIMD_V
fblamka(SIMD_V x, SIMD_V y)
{
    SIMD_V product = SIMD_MUL32(x, y);
    return SIMD_ADD(SIMD_ADD(x, y), SIMD_ADD(product, product));
}

/* GB on four registers: lane j of a, b, c, d is one GB quadruple. */
#define GB(a, b, c, d)                                                        \
    do {                                                                      \
        a = fblamka(a, b);                                                    \
        d = SIMD_ROTR32(SIMD_XOR(d, a));                                      \
        c = fblamka(c, d);                                                    \
        b = SIMD_ROTR24(SIMD_XOR(b, c));                                      \
        a = fblamka(a, b);                                                    \
        d = SIMD_ROTR16(SIMD_XOR(d, a));                                      \
        c = fblamka(c, d);                                                    \
        b = SIMD_ROTR63(SIMD_XOR(b, c));                                      \
    } while (0)

/* Row layout (a 256-bit group is v0-3, v4-7, v8-11 or v12-15 of a row):
 * rotate b, c, d left by 1, 2, 3 words for the diagonals, and back. */
#define ROW_DIAGONALIZE(b, c, d)                                              \
    do {                                                                      \
        b = SIMD_PERMUTE4(b, _MM_SHUFFLE(0, 3, 2, 1));                        \
        c = SIMD_PERMUTE4(c, _MM_SHUFFLE(1, 0, 3, 2));                        \
        d = SIMD_PERMUTE4(d, _MM_SHUFFLE(2, 1, 0, 3));                        \
    } while (0)
#define ROW_UNDIAGONALIZE(b, c, d)                                            \
    do {                                                                      \
        b = SIMD_PERMUTE4(b, _MM_SHUFFLE(2, 1, 0, 3));                        \
        c = SIMD_PERMUTE4(c, _MM_SHUFFLE(1, 0, 3, 2));                        \
        d = SIMD_PERMUTE4(d, _MM_SHUFFLE(0, 3, 2, 1));                        \
    } while (0)

/* Column layout: in each 128-bit lane x holds words (w0, w1) and y words
 * (w2, w3) of a GB input; rotate (w0, w1, w2, w3) left / right by one. */
#define PAIR_ROTL1(x, y)                                                      \
    do {                                                                      \
        SIMD_V t0_ = SIMD_LOW_HIGH_SWAPPED(y, x);                             \
        SIMD_V t1_ = SIMD_LOW_HIGH_SWAPPED(x, y);                             \
        x = t0_;                                                              \
        y = t1_;                                                              \
    } while (0)
#define PAIR_ROTR1(x, y)                                                      \
    do {                                                                      \
        SIMD_V t0_ = SIMD_LOW_HIGH_SWAPPED(x, y);                             \
        SIMD_V t1_ = SIMD_LOW_HIGH_SWAPPED(y, x);                             \
        x = t0_;                                                              \
        y = t1_;                                                              \
    } while (0)

/*
 * simd_columns(q, r, out, early, early_ctx): P on the columns of the
 * row-permuted state ${q}, then out = result ^ ${r}.  Register
 * SIMD_ROW_REGS * n + c holds words of row n, and each register of a row
 * holds whole columns (a column i being word pair (2i, 2i+1) of every
 * row), so one step takes register c of every row: rows 0,2,4,6 form one
 * GB quadruple and rows 1,3,5,7 the other in each 128-bit lane.  Then the
 * column step is lane-wise and the diagonal step is a blend and an
 * in-lane swap, which avoids cross-lane permutes.  ${early} (if not NULL)
 * gets word 0 as soon as it is final, after the first step.
 */
static inline void
simd_columns(const SIMD_V *restrict q, const SIMD_V *restrict r, argon2id_block *restrict out,
    argon2id_early_fn *early, void *early_ctx)
{
    SIMD_V *ov = (SIMD_V *)out->v;

#define ROW_(n) (SIMD_ROW_REGS * (n) + c)
    for (unsigned c = 0; c < SIMD_ROW_REGS; c++) {
        SIMD_V a0 = q[ROW_(0)], a1 = q[ROW_(1)];
        SIMD_V b0 = q[ROW_(2)], b1 = q[ROW_(3)];
        SIMD_V c0 = q[ROW_(4)], c1 = q[ROW_(5)];
        SIMD_V d0 = q[ROW_(6)], d1 = q[ROW_(7)];

        GB(a0, b0, c0, d0);
        GB(a1, b1, c1, d1);
        /* Diagonals (v0,v5,v10,v15) (v1,v6,v11,v12) in a0's quadruples and
         * (v2,v7,v8,v13) (v3,v4,v9,v14) in a1's. */
        PAIR_ROTL1(b0, b1);
        PAIR_ROTR1(d0, d1);
        GB(a0, b0, c1, d0);
        GB(a1, b1, c0, d1);
        PAIR_ROTR1(b0, b1);
        PAIR_ROTL1(d0, d1);

        SIMD_STORE(ov + ROW_(0), SIMD_XOR(a0, r[ROW_(0)]));
        SIMD_STORE(ov + ROW_(1), SIMD_XOR(a1, r[ROW_(1)]));
        SIMD_STORE(ov + ROW_(2), SIMD_XOR(b0, r[ROW_(2)]));
        SIMD_STORE(ov + ROW_(3), SIMD_XOR(b1, r[ROW_(3)]));
        SIMD_STORE(ov + ROW_(4), SIMD_XOR(c0, r[ROW_(4)]));
        SIMD_STORE(ov + ROW_(5), SIMD_XOR(c1, r[ROW_(5)]));
        SIMD_STORE(ov + ROW_(6), SIMD_XOR(d0, r[ROW_(6)]));
        SIMD_STORE(ov + ROW_(7), SIMD_XOR(d1, r[ROW_(7)]));
        /* Word 0 is final after the first step: let the caller start
         * fetching the next reference block now. */
        if (c == 0 && early != NULL)
            early(early_ctx, out->v[0]);
    }
#undef ROW_
}

#endif
