/*
 * frodo_avx2.c: the FrodoKEM matrix kernels of frodo_internal.h compiled
 * with -mavx2 (the Makefile adds it for *_avx2.c), so the vectoriser uses
 * 256-bit registers: 16 uint16_t lanes per instruction instead of 8.
 * frodo.c calls these only when pqv_cpu_has_avx2() says the CPU and OS
 * support AVX2.
 */
#include "crypto/frodo_internal.h"

void
pqv_frodo_rows_dot_avx2(uint16_t *out, const uint16_t *rows, size_t nrows,
    size_t n, const uint16_t *st)
{
    frodo_rows_dot_generic(out, rows, nrows, n, st);
}

void
pqv_frodo_cols_axpy_avx2(uint16_t *out, const uint16_t *coef,
    const uint16_t *rows, size_t nrows, size_t n)
{
    frodo_cols_axpy_generic(out, coef, rows, nrows, n);
}
