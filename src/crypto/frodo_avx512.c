/*
 * frodo_avx512.c: the four-way SHAKE128 rows of A (frodo_keccak4.inc) built
 * with AVX-512VL on the same 256-bit vectors as the AVX2 instance: a lane
 * rotation is one vprolq instead of two shifts and an OR, theta's
 * three-input XOR and chi are one vpternlogq each, and the 32 vector
 * registers of AVX-512 hold the whole state with few spills.  The Makefile
 * compiles *_avx512.c with -mavx512f -mavx512bw -mavx512vl; frodo.c calls
 * this only when cpu_has_avx512().  Measured in bench/bench_micro: see
 * docs/BENCHMARKS.md (FrodoKEM SHAKE sets).
 */
#include <immintrin.h>

#include "crypto/frodo_internal.h"

#define K4_XOR(a, b) _mm256_xor_si256((a), (b))
/* 0x96: a ^ b ^ c */
#define K4_XOR3(a, b, c) _mm256_ternarylogic_epi64((a), (b), (c), 0x96)
#define K4_ROTL(v, n) _mm256_rol_epi64((v), (n))
/* 0xD2: a ^ (~b & c) */
#define K4_CHI(a, b, c) _mm256_ternarylogic_epi64((a), (b), (c), 0xD2)
#define K4_ROWS4_NAME frodo_avx512_shake128_rows4
#include "crypto/frodo_keccak4.inc"
