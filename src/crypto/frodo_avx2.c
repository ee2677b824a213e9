/*
 * frodo_avx2.c: AVX2 versions of the FrodoKEM matrix kernels declared in
 * frodo_internal.h (same contracts as the generic C versions there).  The
 * Makefile compiles *_avx2.c with -mavx2; frodo.c calls these only when
 * cpu_has_avx2() says the CPU and OS support AVX2.
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
frodo_avx2_rows_dot(uint16_t *out, const uint16_t *rows, size_t nrows,
    size_t n, const uint16_t *st)
{
    const uint16_t *s0 = st, *s1 = st + n, *s2 = st + 2 * n, *s3 = st + 3 * n,
                   *s4 = st + 4 * n, *s5 = st + 5 * n, *s6 = st + 6 * n,
                   *s7 = st + 7 * n;
    /* Partial sums of products with S (secret): wiped once at the end. */
    __m256i acc[FRODO_NBAR];

    for (size_t r = 0; r < nrows; r++) {
        const uint16_t *a = rows + r * n;
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
    util_wipe(acc, sizeof(acc));
}

/* out[k] += sum_r coef[k*nrows + r] * rows[r] for k < 8 (see the generic
 * version).  For each output row k, the eight coefficients of a block of
 * 8 rows are broadcast into registers once; then every 16-column slice
 * of out[k] is updated with the eight row slices, summed as a tree so
 * that the additions do not form one long dependency chain. */
void
frodo_avx2_cols_axpy(uint16_t *out, const uint16_t *coef,
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
frodo_avx2_sample(uint16_t *w, size_t count, const uint16_t *cdf,
    size_t cdf_len)
{
    frodo_sample_generic(w, count, cdf, cdf_len);
}

/* ---- Four-way Keccak-f[1600] and SHAKE128 rows of A ------------------- */

/* The shared four-way Keccak (frodo_keccak4.inc) with AVX2 operations: a
 * rotation is two shifts and an OR, chi an ANDNOT and an XOR. */
#define K4_XOR(a, b) _mm256_xor_si256((a), (b))
#define K4_XOR3(a, b, c) _mm256_xor_si256(_mm256_xor_si256((a), (b)), (c))
#define K4_ROTL(v, n) \
    _mm256_or_si256(_mm256_slli_epi64((v), (n)), _mm256_srli_epi64((v), 64 - (n)))
#define K4_CHI(a, b, c) _mm256_xor_si256((a), _mm256_andnot_si256((b), (c)))
#define K4_ROWS4_NAME frodo_avx2_shake128_rows4
#include "crypto/frodo_keccak4.inc"
