/*
 * argon2id_internal.h: the pieces of Argon2id shared between the portable
 * code (argon2id.c) and the instruction-set specific kernels
 * (argon2id_avx2.c, ...).
 */
#ifndef PQV_ARGON2ID_INTERNAL_H
#define PQV_ARGON2ID_INTERNAL_H

#include <stdint.h>

/* One Argon2 memory block: 1024 bytes as 128 little-endian 64-bit words. */
#define ARGON2ID_BLOCK_WORDS 128
typedef struct {
    _Alignas(64) uint64_t v[ARGON2ID_BLOCK_WORDS];
} argon2id_block;

/*
 * An early-result hook: called by a kernel with ${ctx} and the first word
 * of the output block as soon as that word is final, while the rest of the
 * block is still being computed.  Data-dependent indexing derives the next
 * reference block from that word, so the hook can start fetching it from
 * memory early (the random access to a 64 MiB area is otherwise a stall).
 */
typedef void argon2id_early_fn(void *ctx, uint64_t first_word);

/*
 * A kernel computes the compression function G of RFC 9106, section 3.5:
 *     out = G(prev, ref)            if ${xor_out} is 0 (first pass),
 *     out = out XOR G(prev, ref)    otherwise (later passes, version 0x13).
 * ${out} may not alias ${prev} or ${ref}.  If ${early} is not NULL it is
 * called once, with ${early_ctx}, before the kernel returns (see above).
 * Every kernel must give results identical to the portable one.
 */
typedef void argon2id_kernel_fn(argon2id_block *out, const argon2id_block *prev,
    const argon2id_block *ref, int xor_out, argon2id_early_fn *early, void *early_ctx);

/*
 * A kernel's temporaries: P's state ${q} and the block ${r} XORed into the
 * result, both derived from the password.  pqv_argon2id gives every call
 * of a worker the same scratch and wipes it once when the worker is done:
 * wiping 2 KiB of stack at the end of every block made a whole hash half
 * as fast again (AVX-512, t=3, m=64 MiB).  What a kernel still leaves on
 * its own stack are register spills, which have no name to wipe.
 */
typedef struct {
    argon2id_block q, r;
} argon2id_scratch;

/* A kernel with its temporaries in ${s} (not aliasing the blocks). */
typedef void argon2id_scratch_kernel_fn(argon2id_scratch *s, argon2id_block *out,
    const argon2id_block *prev, const argon2id_block *ref, int xor_out,
    argon2id_early_fn *early, void *early_ctx);

/* argon2id_fill_block_portable: G in portable C (the _with form takes the
 * scratch; the plain form uses its own and wipes it: for tests). */
argon2id_kernel_fn argon2id_fill_block_portable;
argon2id_scratch_kernel_fn argon2id_fill_block_portable_with;

/* argon2id_avx2_fill_block: G with AVX2; call only if cpu_has_avx2(). */
argon2id_kernel_fn argon2id_avx2_fill_block;
argon2id_scratch_kernel_fn argon2id_avx2_fill_block_with;

/* argon2id_avx512_fill_block: G with AVX-512F/VL; call only if
 * cpu_has_avx512(). */
argon2id_kernel_fn argon2id_avx512_fill_block;
argon2id_scratch_kernel_fn argon2id_avx512_fill_block_with;

/*
 * argon2id_prefer_kernel(name): for tests and benchmarks, make later
 * pqv_argon2id calls use the kernel called ${name} ("avx512", "avx2" or
 * "portable") instead of the fastest one; NULL restores the automatic
 * choice.  Returns 0, or -1 (and changes nothing) if that kernel is
 * unknown or unusable here.  cpu_force_portable() still wins.  Not
 * for use while another thread is hashing.
 */
int argon2id_prefer_kernel(const char *name);

/*
 * argon2id_uncap_threads(on): for tests: normally pqv_argon2id uses no
 * more threads than there are online CPUs; with ${on} set it uses as many
 * as asked (up to the lane count), so the multi-thread code paths run on
 * small machines too.
 */
void argon2id_uncap_threads(int on);

#endif
