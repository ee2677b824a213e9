/*
 * cpu.h: run-time CPU feature detection for choosing fast paths.
 *
 * Setting the environment variable PQVAULT_CPU=portable before the first
 * query disables every CPU-specific fast path (tests use it to cover the
 * portable code on machines that have the instructions).
 */
#ifndef PQV_CPU_H
#define PQV_CPU_H

/* pqv_cpu_has_avx2(): 1 if AVX2 is usable (CPU and OS) and not disabled. */
int pqv_cpu_has_avx2(void);

/* pqv_cpu_has_avx512(): 1 if AVX-512 F+BW+VL are usable and not disabled. */
int pqv_cpu_has_avx512(void);

/* pqv_cpu_has_aes_clmul(): 1 if AES-NI and PCLMULQDQ are present.  This
 * reflects the hardware only (it picks the AEAD suite and FrodoKEM variant
 * at init) and ignores PQVAULT_CPU. */
int pqv_cpu_has_aes_clmul(void);

/* pqv_cpu_force_portable(on): disable (1) or re-enable (0) fast paths. */
void pqv_cpu_force_portable(int on);

#endif
