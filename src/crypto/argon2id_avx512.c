/*
 * argon2id_avx512.c: the Argon2 compression function G with AVX-512F/VL
 * (compiled with -mavx512f -mavx512bw -mavx512vl by the Makefile; called
 * only when cpu_has_avx512()).
 *
 * Same plan as argon2id_avx2.c with registers twice as wide, plus the
 * native 64-bit rotate.  Rows: two rows are processed together, the 256-bit
 * quarters of the two rows gathered into one register with a 128-bit
 * shuffle so that each 256-bit half looks like one AVX2 row register.
 * Columns: a register holding words 8h..8h+7 of a row holds columns
 * 4h..4h+3 of it, so the shared column step (argon2id_simd.inc) applies
 * unchanged with four columns per step.
 */
#include <immintrin.h>

#include "crypto/argon2id_internal.h"
#include "util/util.h"

#define SIMD_V __m512i
#define SIMD_XOR(x, y) _mm512_xor_si512((x), (y))
#define SIMD_ADD(x, y) _mm512_add_epi64((x), (y))
#define SIMD_MUL32(x, y) _mm512_mul_epu32((x), (y))
#define SIMD_ROTR32(x) _mm512_ror_epi64((x), 32)
#define SIMD_ROTR24(x) _mm512_ror_epi64((x), 24)
#define SIMD_ROTR16(x) _mm512_ror_epi64((x), 16)
#define SIMD_ROTR63(x) _mm512_ror_epi64((x), 63)
#define SIMD_PERMUTE4(x, imm) _mm512_permutex_epi64((x), (imm))
#define SIMD_LOW_HIGH_SWAPPED(x, y)                                           \
    _mm512_shuffle_epi32(_mm512_mask_blend_epi64(0xAA, (x), (y)), (_MM_PERM_ENUM)0x4E)
#define SIMD_STORE(p, x) _mm512_store_si512((p), (x))
#define SIMD_ROW_REGS 2

#include "crypto/argon2id_simd.inc"

/* Low 256 bits of x then low 256 bits of y (LOWS), or the high halves. */
#define LOWS(x, y) _mm512_shuffle_i64x2((x), (y), _MM_SHUFFLE(1, 0, 1, 0))
#define HIGHS(x, y) _mm512_shuffle_i64x2((x), (y), _MM_SHUFFLE(3, 2, 3, 2))

void
argon2id_avx512_fill_block_with(argon2id_scratch *restrict s, argon2id_block *out,
    const argon2id_block *prev, const argon2id_block *ref, int xor_out,
    argon2id_early_fn *early, void *early_ctx)
{
    /* r: prev ^ ref (^ old out), added back at the end; q: P's state.
     * Register n holds words 8n..8n+7, so row n is registers 2n, 2n+1. */
    __m512i *restrict r = (__m512i *)s->r.v, *restrict q = (__m512i *)s->q.v;
    const __m512i *pv = (const __m512i *)prev->v;
    const __m512i *rv = (const __m512i *)ref->v;
    const __m512i *ov = (const __m512i *)out->v;

    for (unsigned n = 0; n < 16; n++) {
        __m512i x = _mm512_xor_si512(_mm512_load_si512(pv + n), _mm512_load_si512(rv + n));
        q[n] = x;
        r[n] = xor_out ? _mm512_xor_si512(x, _mm512_load_si512(ov + n)) : x;
    }

    /* Rows 2m and 2m+1 together. */
    for (unsigned k = 0; k < 16; k += 4) {
        __m512i a = LOWS(q[k], q[k + 2]), b = HIGHS(q[k], q[k + 2]);
        __m512i c = LOWS(q[k + 1], q[k + 3]), d = HIGHS(q[k + 1], q[k + 3]);
        GB(a, b, c, d);
        ROW_DIAGONALIZE(b, c, d);
        GB(a, b, c, d);
        ROW_UNDIAGONALIZE(b, c, d);
        q[k] = LOWS(a, b);
        q[k + 2] = HIGHS(a, b);
        q[k + 1] = LOWS(c, d);
        q[k + 3] = HIGHS(c, d);
    }

    /* Columns 4h..4h+3: register 2n + h of every row n. */
    simd_columns(q, r, out, early, early_ctx);
}

void
argon2id_avx512_fill_block(argon2id_block *out, const argon2id_block *prev,
    const argon2id_block *ref, int xor_out, argon2id_early_fn *early, void *early_ctx)
{
    argon2id_scratch s;

    argon2id_avx512_fill_block_with(&s, out, prev, ref, xor_out, early, early_ctx);
    util_wipe(&s, sizeof(s));
}
