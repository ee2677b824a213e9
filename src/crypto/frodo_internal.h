/*
 * frodo_internal.h: the two matrix kernels FrodoKEM spends its time in,
 * written once as plain C that compilers vectorise well, and instantiated
 * twice: in frodo.c (baseline ISA) and in frodo_avx2.c (compiled with
 * -mavx2).  frodo.c picks the instance at run time with cpu_has_avx2().
 *
 * All arithmetic is on uint16_t and wraps modulo 2^16; since q divides
 * 2^16 for every parameter set, reducing modulo q afterwards (masking) gives
 * the result modulo q.  The products are formed in uint32_t so that the
 * usual promotion of uint16_t to int cannot overflow a signed int.
 *
 * Nothing here branches on or indexes with matrix contents, so the kernels
 * are constant time with respect to the secret operands.  Their stack
 * temporaries hold secret values (samples, partial sums of products with
 * S or S'): each kernel declares them once and wipes them before it
 * returns (once per call, not once per row: the cost stays negligible).
 */
#ifndef PQV_FRODO_INTERNAL_H
#define PQV_FRODO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/util.h"

/* Number of columns (j) processed per inner step: every n is a multiple. */
#define FRODO_LANES 16
/* nbar = mbar = 8 for every parameter set. */
#define FRODO_NBAR 8

/*
 * Kernel signatures (see the generic definitions below for contracts).
 */
typedef void (*frodo_rows_dot_fn)(uint16_t *out, const uint16_t *rows,
    size_t nrows, size_t n, const uint16_t *st);
typedef void (*frodo_cols_axpy_fn)(uint16_t *out, const uint16_t *coef,
    const uint16_t *rows, size_t nrows, size_t n);
typedef void (*frodo_sample_fn)(uint16_t *w, size_t count,
    const uint16_t *cdf, size_t cdf_len);

/* The AVX2 instances (frodo_avx2.c); only called when cpu_has_avx2(). */
void frodo_avx2_rows_dot(uint16_t *out, const uint16_t *rows,
    size_t nrows, size_t n, const uint16_t *st);
void frodo_avx2_cols_axpy(uint16_t *out, const uint16_t *coef,
    const uint16_t *rows, size_t nrows, size_t n);
void frodo_avx2_shake128_rows4(uint16_t *rows, size_t n, size_t first,
    const uint8_t *seedA);
void frodo_avx2_sample(uint16_t *w, size_t count, const uint16_t *cdf,
    size_t cdf_len);
/* The AVX-512VL instance of the four-way SHAKE128 rows (frodo_avx512.c);
 * only called when cpu_has_avx512(). */
void frodo_avx512_shake128_rows4(uint16_t *rows, size_t n, size_t first,
    const uint8_t *seedA);
typedef void (*frodo_rows4_fn)(uint16_t *rows, size_t n, size_t first,
    const uint8_t *seedA);

/*
 * frodo_sample_generic(w, count, cdf, cdf_len): replace each of the
 * ${count} uniform 16-bit words in ${w} (a multiple of FRODO_LANES) by a
 * sample of the error distribution with CDF table ${cdf}: t = r >> 1 is
 * compared with every entry T[z] (arithmetically: T[z] - t, both below
 * 2^15, has its bit 15 set exactly when t > T[z]) and bit 0 of r chooses
 * the sign.  No branch or index depends on the words.
 */
static inline void
frodo_sample_generic(uint16_t *w, size_t count, const uint16_t *cdf,
    size_t cdf_len)
{
    uint16_t t[FRODO_LANES], e[FRODO_LANES];

    for (size_t i = 0; i < count; i += FRODO_LANES) {
        for (size_t l = 0; l < FRODO_LANES; l++) {
            t[l] = (uint16_t)(w[i + l] >> 1);
            e[l] = 0;
        }
        for (size_t z = 0; z < cdf_len; z++) {
            uint16_t c = cdf[z];
            for (size_t l = 0; l < FRODO_LANES; l++)
                e[l] = (uint16_t)(e[l] + ((uint16_t)(c - t[l]) >> 15));
        }
        for (size_t l = 0; l < FRODO_LANES; l++) {
            uint16_t sign = (uint16_t)(0 - (w[i + l] & 1));
            w[i + l] = (uint16_t)((e[l] ^ sign) - sign);
        }
    }
    util_wipe(t, sizeof(t));
    util_wipe(e, sizeof(e));
}

/*
 * frodo_rows_dot_generic(out, rows, nrows, n, st): for each of the ${nrows}
 * rows r (each ${n} entries, row-major in ${rows}) and each k < 8,
 * out[r*8 + k] += <rows[r], st[k]>, where ${st} is an 8 x n matrix (S
 * transposed).  This computes (A S) for a block of rows of A, and B' S.
 * ${n} must be a multiple of FRODO_LANES.
 */
static inline void
frodo_rows_dot_generic(uint16_t *out, const uint16_t *rows, size_t nrows,
    size_t n, const uint16_t *st)
{
    /* Lane-wise partial sums with a fixed trip count: the shape the
     * vectoriser turns into one vector register. */
    uint16_t acc[FRODO_LANES];

    for (size_t r = 0; r < nrows; r++) {
        const uint16_t *a = rows + r * n;
        for (size_t k = 0; k < FRODO_NBAR; k++) {
            const uint16_t *s = st + k * n;
            memset(acc, 0, sizeof(acc));
            for (size_t j = 0; j < n; j += FRODO_LANES)
                for (size_t l = 0; l < FRODO_LANES; l++)
                    acc[l] = (uint16_t)(acc[l] + (uint32_t)a[j + l] * s[j + l]);
            uint16_t sum = out[r * FRODO_NBAR + k];
            for (size_t l = 0; l < FRODO_LANES; l++)
                sum = (uint16_t)(sum + acc[l]);
            out[r * FRODO_NBAR + k] = sum;
        }
    }
    util_wipe(acc, sizeof(acc));
}

/*
 * frodo_cols_axpy_generic(out, coef, rows, nrows, n): out is an 8 x n
 * matrix; for each k < 8, out[k] += sum over r < nrows of
 * coef[k*nrows + r] * rows[r].  With coef[k][r] = S'[k][i0 + r] and rows
 * = rows i0.. of A, this accumulates S' A one block of rows at a time.
 * ${n} must be a multiple of FRODO_LANES.
 */
static inline void
frodo_cols_axpy_generic(uint16_t *out, const uint16_t *coef,
    const uint16_t *rows, size_t nrows, size_t n)
{
    uint16_t acc[FRODO_LANES];

    for (size_t j = 0; j < n; j += FRODO_LANES) {
        for (size_t k = 0; k < FRODO_NBAR; k++) {
            memcpy(acc, out + k * n + j, sizeof(acc));
            for (size_t r = 0; r < nrows; r++) {
                uint32_t c = coef[k * nrows + r];
                const uint16_t *a = rows + r * n + j;
                for (size_t l = 0; l < FRODO_LANES; l++)
                    acc[l] = (uint16_t)(acc[l] + c * a[l]);
            }
            memcpy(out + k * n + j, acc, sizeof(acc));
        }
    }
    util_wipe(acc, sizeof(acc));
}

#endif
