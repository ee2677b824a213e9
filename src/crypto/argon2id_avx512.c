/*
 * argon2id_avx512.c: the Argon2 compression function G with AVX-512F/VL
 * (compiled with -mavx512f -mavx512bw -mavx512vl by the Makefile; called
 * only when pqv_cpu_has_avx512()).
 *
 * Same plan as argon2id_avx2.c with registers twice as wide, plus the
 * native 64-bit rotate.  Rows: two rows are processed together, the 256-bit
 * quarters of the two rows gathered into one register with a 128-bit
 * shuffle so that each 256-bit half looks like one AVX2 row register.
 * Columns: a register holding words 8h..8h+7 of a row holds columns
 * 4h..4h+3 of it, so the AVX2 column scheme applies unchanged with four
 * columns per step.
 */
#include <immintrin.h>

#include "crypto/argon2id_internal.h"

/* x + y + 2 * lo32(x) * lo32(y), eight words at a time. */
static inline __m512i
fblamka8(__m512i x, __m512i y)
{
    __m512i product = _mm512_mul_epu32(x, y);
    return _mm512_add_epi64(_mm512_add_epi64(x, y), _mm512_add_epi64(product, product));
}

#define GB8(a, b, c, d)                                                       \
    do {                                                                      \
        a = fblamka8(a, b);                                                   \
        d = _mm512_ror_epi64(_mm512_xor_si512(d, a), 32);                     \
        c = fblamka8(c, d);                                                   \
        b = _mm512_ror_epi64(_mm512_xor_si512(b, c), 24);                     \
        a = fblamka8(a, b);                                                   \
        d = _mm512_ror_epi64(_mm512_xor_si512(d, a), 16);                     \
        c = fblamka8(c, d);                                                   \
        b = _mm512_ror_epi64(_mm512_xor_si512(b, c), 63);                     \
    } while (0)

/* Within each 256-bit half: rotate b, c, d left by 1, 2, 3 words. */
#define ROW_DIAGONALIZE(b, c, d)                                              \
    do {                                                                      \
        b = _mm512_permutex_epi64(b, _MM_SHUFFLE(0, 3, 2, 1));                \
        c = _mm512_permutex_epi64(c, _MM_SHUFFLE(1, 0, 3, 2));                \
        d = _mm512_permutex_epi64(d, _MM_SHUFFLE(2, 1, 0, 3));                \
    } while (0)
#define ROW_UNDIAGONALIZE(b, c, d)                                            \
    do {                                                                      \
        b = _mm512_permutex_epi64(b, _MM_SHUFFLE(2, 1, 0, 3));                \
        c = _mm512_permutex_epi64(c, _MM_SHUFFLE(1, 0, 3, 2));                \
        d = _mm512_permutex_epi64(d, _MM_SHUFFLE(0, 3, 2, 1));                \
    } while (0)

/* Low 256 bits of x then low 256 bits of y (LOWS), or the high halves. */
#define LOWS(x, y) _mm512_shuffle_i64x2((x), (y), _MM_SHUFFLE(1, 0, 1, 0))
#define HIGHS(x, y) _mm512_shuffle_i64x2((x), (y), _MM_SHUFFLE(3, 2, 3, 2))

/* (low word from x, high word from y) in each 128-bit lane, then swapped. */
#define LOW_HIGH_SWAPPED(x, y)                                                \
    _mm512_shuffle_epi32(_mm512_mask_blend_epi64(0xAA, (x), (y)), (_MM_PERM_ENUM)0x4E)

void
pqv_argon2_fill_block_avx512(pqv_argon2_block *out, const pqv_argon2_block *prev,
    const pqv_argon2_block *ref, int xor_out, pqv_argon2_early_fn *early, void *early_ctx)
{
    /* r: prev ^ ref (^ old out), added back at the end; q: P's state.
     * Register n holds words 8n..8n+7, so row n is registers 2n, 2n+1. */
    __m512i r[16], q[16];
    const __m512i *pv = (const __m512i *)prev->v;
    const __m512i *rv = (const __m512i *)ref->v;
    __m512i *ov = (__m512i *)out->v;

    for (unsigned n = 0; n < 16; n++) {
        __m512i x = _mm512_xor_si512(_mm512_load_si512(pv + n), _mm512_load_si512(rv + n));
        q[n] = x;
        r[n] = xor_out ? _mm512_xor_si512(x, _mm512_load_si512(ov + n)) : x;
    }

    /* Rows 2m and 2m+1 together. */
    for (unsigned k = 0; k < 16; k += 4) {
        __m512i a = LOWS(q[k], q[k + 2]), b = HIGHS(q[k], q[k + 2]);
        __m512i c = LOWS(q[k + 1], q[k + 3]), d = HIGHS(q[k + 1], q[k + 3]);
        GB8(a, b, c, d);
        ROW_DIAGONALIZE(b, c, d);
        GB8(a, b, c, d);
        ROW_UNDIAGONALIZE(b, c, d);
        q[k] = LOWS(a, b);
        q[k + 2] = HIGHS(a, b);
        q[k + 1] = LOWS(c, d);
        q[k + 3] = HIGHS(c, d);
    }

    /* Columns 4h..4h+3: register 2n + h of every row n. */
    for (unsigned h = 0; h < 2; h++) {
        __m512i a0 = q[0 + h], a1 = q[2 + h];   /* rows 0, 1 */
        __m512i b0 = q[4 + h], b1 = q[6 + h];   /* rows 2, 3 */
        __m512i c0 = q[8 + h], c1 = q[10 + h];  /* rows 4, 5 */
        __m512i d0 = q[12 + h], d1 = q[14 + h]; /* rows 6, 7 */
        __m512i t0, t1;

        GB8(a0, b0, c0, d0);
        GB8(a1, b1, c1, d1);
        t0 = LOW_HIGH_SWAPPED(b1, b0);
        t1 = LOW_HIGH_SWAPPED(b0, b1);
        b0 = t0;
        b1 = t1;
        t0 = LOW_HIGH_SWAPPED(d0, d1);
        t1 = LOW_HIGH_SWAPPED(d1, d0);
        d0 = t0;
        d1 = t1;
        GB8(a0, b0, c1, d0);
        GB8(a1, b1, c0, d1);
        t0 = LOW_HIGH_SWAPPED(b0, b1);
        t1 = LOW_HIGH_SWAPPED(b1, b0);
        b0 = t0;
        b1 = t1;
        t0 = LOW_HIGH_SWAPPED(d1, d0);
        t1 = LOW_HIGH_SWAPPED(d0, d1);
        d0 = t0;
        d1 = t1;

        _mm512_store_si512(ov + 0 + h, _mm512_xor_si512(a0, r[0 + h]));
        _mm512_store_si512(ov + 2 + h, _mm512_xor_si512(a1, r[2 + h]));
        _mm512_store_si512(ov + 4 + h, _mm512_xor_si512(b0, r[4 + h]));
        _mm512_store_si512(ov + 6 + h, _mm512_xor_si512(b1, r[6 + h]));
        _mm512_store_si512(ov + 8 + h, _mm512_xor_si512(c0, r[8 + h]));
        _mm512_store_si512(ov + 10 + h, _mm512_xor_si512(c1, r[10 + h]));
        _mm512_store_si512(ov + 12 + h, _mm512_xor_si512(d0, r[12 + h]));
        _mm512_store_si512(ov + 14 + h, _mm512_xor_si512(d1, r[14 + h]));
        /* Word 0 is final after the first four columns. */
        if (h == 0 && early != NULL)
            early(early_ctx, out->v[0]);
    }
}
