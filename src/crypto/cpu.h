/*
 * cpu.h: run-time CPU feature detection for choosing fast paths.
 *
 * Setting the environment variable PQVAULT_CPU=portable before the first
 * query disables every CPU-specific fast path (tests use it to cover the
 * portable code on machines that have the instructions).
 */
#ifndef PQV_CPU_H
#define PQV_CPU_H

/* cpu_has_avx2(): 1 if AVX2 is usable (CPU and OS) and not disabled. */
int cpu_has_avx2(void);

/* cpu_has_avx512(): 1 if AVX-512 F+BW+VL are usable and not disabled. */
int cpu_has_avx512(void);

/* cpu_has_vaes(): 1 if VAES on AVX-512 registers (with AES-NI) is usable
 * and not disabled. */
int cpu_has_vaes(void);

/* cpu_has_aes_clmul(): 1 if AES-NI and PCLMULQDQ are present.  This
 * reflects the hardware only (it picks the AEAD suite and FrodoKEM variant
 * at init) and ignores PQVAULT_CPU. */
int cpu_has_aes_clmul(void);

/* cpu_force_portable(on): disable (1) or re-enable (0) fast paths. */
void cpu_force_portable(int on);

#endif
