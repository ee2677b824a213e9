/*
 * argon2id_internal.h: the pieces of Argon2id shared between the portable
 * code (argon2id.c) and the instruction-set specific kernels
 * (argon2id_avx2.c, ...).
 */
#ifndef PQV_ARGON2ID_INTERNAL_H
#define PQV_ARGON2ID_INTERNAL_H

#include <stdint.h>

/* One Argon2 memory block: 1024 bytes as 128 little-endian 64-bit words. */
#define PQV_ARGON2_BLOCK_WORDS 128
typedef struct {
    _Alignas(64) uint64_t v[PQV_ARGON2_BLOCK_WORDS];
} pqv_argon2_block;

/*
 * An early-result hook: called by a kernel with ${ctx} and the first word
 * of the output block as soon as that word is final, while the rest of the
 * block is still being computed.  Data-dependent indexing derives the next
 * reference block from that word, so the hook can start fetching it from
 * memory early (the random access to a 64 MiB area is otherwise a stall).
 */
typedef void pqv_argon2_early_fn(void *ctx, uint64_t first_word);

/*
 * A kernel computes the compression function G of RFC 9106, section 3.5:
 *     out = G(prev, ref)            if ${xor_out} is 0 (first pass),
 *     out = out XOR G(prev, ref)    otherwise (later passes, version 0x13).
 * ${out} may not alias ${prev} or ${ref}.  If ${early} is not NULL it is
 * called once, with ${early_ctx}, before the kernel returns (see above).
 * Every kernel must give results identical to the portable one.
 */
typedef void pqv_argon2_kernel_fn(pqv_argon2_block *out, const pqv_argon2_block *prev,
    const pqv_argon2_block *ref, int xor_out, pqv_argon2_early_fn *early, void *early_ctx);

/* pqv_argon2_fill_block_portable: G in portable C. */
pqv_argon2_kernel_fn pqv_argon2_fill_block_portable;

/* pqv_argon2_fill_block_avx2: G with AVX2; call only if pqv_cpu_has_avx2(). */
pqv_argon2_kernel_fn pqv_argon2_fill_block_avx2;

/* pqv_argon2_fill_block_avx512: G with AVX-512F/VL; call only if
 * pqv_cpu_has_avx512(). */
pqv_argon2_kernel_fn pqv_argon2_fill_block_avx512;

/*
 * pqv_argon2_prefer_kernel(name): for tests and benchmarks, make later
 * pqv_argon2id calls use the kernel called ${name} ("avx512", "avx2" or
 * "portable") instead of the fastest one; NULL restores the automatic
 * choice.  Returns 0, or -1 (and changes nothing) if that kernel is
 * unknown or unusable here.  pqv_cpu_force_portable() still wins.  Not
 * for use while another thread is hashing.
 */
int pqv_argon2_prefer_kernel(const char *name);

/*
 * pqv_argon2_uncap_threads(on): for tests: normally pqv_argon2id uses no
 * more threads than there are online CPUs; with ${on} set it uses as many
 * as asked (up to the lane count), so the multi-thread code paths run on
 * small machines too.
 */
void pqv_argon2_uncap_threads(int on);

#endif
