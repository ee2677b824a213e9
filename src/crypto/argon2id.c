/*
 * argon2id.c: Argon2id, RFC 9106 version 0x13 (see pqvault/argon2id.h).
 *
 * Layout: the memory is one aligned array of lanes * lane_length blocks,
 * lane after lane.  Each pass is cut into 4 slices; within a slice the
 * segments of the different lanes are independent, so worker threads each
 * fill the segments of a fixed subset of the lanes and meet at a barrier
 * after every slice; a thread with several lanes advances them in lockstep
 * to hide memory latency.  The compression function G comes from a kernel
 * chosen once per call (AVX-512, AVX2 or portable C, see
 * argon2id_internal.h); all kernels are bit-identical.
 */
#include "pqvault/argon2id.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crypto/argon2id_internal.h"
#include "crypto/blake2b.h"
#include "crypto/cpu.h"
#include "util/util.h"

#define ARGON2_VERSION 0x13u
#define ARGON2_TYPE_ID 2u /* y = 2 selects Argon2id */
#define ARGON2_SYNC_POINTS 4u /* slices per pass */
#define ARGON2_ADDRESSES_PER_BLOCK 128u
#define ARGON2_BLOCK_BYTES 1024u
#define ARGON2_PREHASH_BYTES 64u /* H0 */
#define ARGON2_MAX_LEN 0xffffffffULL /* every length is encoded as LE32 */

/* ------------------------------------------------------------------------ */
/* Portable compression function G (RFC 9106, section 3.5 and 3.6).         */

static inline uint64_t
rotr64(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

/* fBlaMka: BLAKE2b's addition with a multiplication of the low halves
 * mixed in, which is what makes G costly to compute in hardware. */
static inline uint64_t
fblamka(uint64_t x, uint64_t y)
{
    uint64_t lo_product = (x & 0xffffffffULL) * (y & 0xffffffffULL);
    return x + y + 2 * lo_product;
}

#define ARGON2_GB(a, b, c, d)                                                 \
    do {                                                                      \
        a = fblamka(a, b);                                                    \
        d = rotr64(d ^ a, 32);                                                \
        c = fblamka(c, d);                                                    \
        b = rotr64(b ^ c, 24);                                                \
        a = fblamka(a, b);                                                    \
        d = rotr64(d ^ a, 16);                                                \
        c = fblamka(c, d);                                                    \
        b = rotr64(b ^ c, 63);                                                \
    } while (0)

/* The permutation P on sixteen words given by their indices into ${w}. */
#define ARGON2_P(w, i0, i1, i2, i3, i4, i5, i6, i7, i8, i9, i10, i11, i12,    \
    i13, i14, i15)                                                            \
    do {                                                                      \
        ARGON2_GB(w[i0], w[i4], w[i8], w[i12]);                               \
        ARGON2_GB(w[i1], w[i5], w[i9], w[i13]);                               \
        ARGON2_GB(w[i2], w[i6], w[i10], w[i14]);                              \
        ARGON2_GB(w[i3], w[i7], w[i11], w[i15]);                              \
        ARGON2_GB(w[i0], w[i5], w[i10], w[i15]);                              \
        ARGON2_GB(w[i1], w[i6], w[i11], w[i12]);                              \
        ARGON2_GB(w[i2], w[i7], w[i8], w[i13]);                               \
        ARGON2_GB(w[i3], w[i4], w[i9], w[i14]);                               \
    } while (0)

void
argon2id_fill_block_portable_with(argon2id_scratch *restrict s, argon2id_block *out,
    const argon2id_block *prev, const argon2id_block *ref, int xor_out,
    argon2id_early_fn *early, void *early_ctx)
{
    /* r = prev XOR ref is both P's input and (XORed with the old block in
     * later passes) what is added back at the end. */
    uint64_t *restrict r = s->r.v, *restrict q = s->q.v;

    for (unsigned k = 0; k < ARGON2ID_BLOCK_WORDS; k++) {
        q[k] = prev->v[k] ^ ref->v[k];
        r[k] = xor_out ? q[k] ^ out->v[k] : q[k];
    }
    /* P on each row of eight 16-byte registers (sixteen words). */
    for (unsigned i = 0; i < 8; i++) {
        unsigned b = 16 * i;
        ARGON2_P(q, b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8,
            b + 9, b + 10, b + 11, b + 12, b + 13, b + 14, b + 15);
    }
    /* P on each column: register i of every row. */
    for (unsigned i = 0; i < 8; i++) {
        unsigned b = 2 * i;
        ARGON2_P(q, b, b + 1, b + 16, b + 17, b + 32, b + 33, b + 48, b + 49,
            b + 64, b + 65, b + 80, b + 81, b + 96, b + 97, b + 112, b + 113);
        /* Word 0 is final after column 0 (see argon2id_early_fn). */
        if (i == 0 && early != NULL)
            early(early_ctx, q[0] ^ r[0]);
    }
    for (unsigned k = 0; k < ARGON2ID_BLOCK_WORDS; k++)
        out->v[k] = q[k] ^ r[k];
}

void
argon2id_fill_block_portable(argon2id_block *out, const argon2id_block *prev,
    const argon2id_block *ref, int xor_out, argon2id_early_fn *early, void *early_ctx)
{
    argon2id_scratch s;

    argon2id_fill_block_portable_with(&s, out, prev, ref, xor_out, early, early_ctx);
    util_wipe(&s, sizeof(s));
}

/* ------------------------------------------------------------------------ */
/* H' (RFC 9106, section 3.3) and block/byte conversion.                    */

/*
 * argon2_hprime(out, outlen, in1, len1, in2, len2): the variable-length hash
 * H'^outlen(in1 || in2) for 1 <= outlen <= 2^32-1.
 */
static void
argon2_hprime(uint8_t *out, size_t outlen, const uint8_t *in1, size_t len1,
    const uint8_t *in2, size_t len2)
{
    blake2b_ctx ctx;
    uint8_t len_le[4];
    uint8_t v[PQV_BLAKE2B_OUTBYTES];

    util_store_le32(len_le, (uint32_t)outlen);
    if (outlen <= PQV_BLAKE2B_OUTBYTES) {
        (void)blake2b_init(&ctx, outlen, NULL, 0);
        blake2b_update(&ctx, len_le, sizeof(len_le));
        blake2b_update(&ctx, in1, len1);
        blake2b_update(&ctx, in2, len2);
        blake2b_final(&ctx, out);
        return;
    }
    /* r = ceil(outlen/32) - 2 full 64-byte hashes contribute their first
     * 32 bytes each; the last hash has the remaining 32 < n <= 64 bytes. */
    size_t r = (outlen + 31) / 32 - 2;
    (void)blake2b_init(&ctx, PQV_BLAKE2B_OUTBYTES, NULL, 0);
    blake2b_update(&ctx, len_le, sizeof(len_le));
    blake2b_update(&ctx, in1, len1);
    blake2b_update(&ctx, in2, len2);
    blake2b_final(&ctx, v);
    memcpy(out, v, 32);
    out += 32;
    for (size_t i = 2; i <= r; i++) {
        (void)blake2b(v, PQV_BLAKE2B_OUTBYTES, v, PQV_BLAKE2B_OUTBYTES, NULL, 0);
        memcpy(out, v, 32);
        out += 32;
    }
    (void)blake2b(out, outlen - 32 * r, v, PQV_BLAKE2B_OUTBYTES, NULL, 0);
    util_wipe(v, sizeof(v));
}

static void
block_from_bytes(argon2id_block *b, const uint8_t *bytes)
{
    for (unsigned k = 0; k < ARGON2ID_BLOCK_WORDS; k++)
        b->v[k] = util_load_le64(bytes + 8 * k);
}

static void
block_to_bytes(uint8_t *bytes, const argon2id_block *b)
{
    for (unsigned k = 0; k < ARGON2ID_BLOCK_WORDS; k++)
        util_store_le64(bytes + 8 * k, b->v[k]);
}

/* ------------------------------------------------------------------------ */
/* A barrier whose party count is fixed only once the threads exist, so a   */
/* failed pthread_create just means fewer workers instead of a deadlock.    */

struct phase_barrier {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    unsigned parties;   /* UINT_MAX until the creator knows the count */
    unsigned arrived;
    unsigned long generation;
};

static int
phase_barrier_init(struct phase_barrier *b)
{
    if (pthread_mutex_init(&b->mutex, NULL) != 0)
        return -1;
    if (pthread_cond_init(&b->cond, NULL) != 0) {
        pthread_mutex_destroy(&b->mutex);
        return -1;
    }
    b->parties = UINT_MAX;
    b->arrived = 0;
    b->generation = 0;
    return 0;
}

static void
phase_barrier_destroy(struct phase_barrier *b)
{
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->mutex);
}

/* phase_barrier_release_if_full(b): with the mutex held, open the barrier
 * if every party has arrived. */
static void
phase_barrier_release_if_full(struct phase_barrier *b)
{
    if (b->arrived >= b->parties) {
        b->arrived = 0;
        b->generation++;
        pthread_cond_broadcast(&b->cond);
    }
}

/* phase_barrier_wait(b): block until all parties have called this. */
static void
phase_barrier_wait(struct phase_barrier *b)
{
    pthread_mutex_lock(&b->mutex);
    unsigned long gen = b->generation;
    b->arrived++;
    phase_barrier_release_if_full(b);
    while (gen == b->generation)
        pthread_cond_wait(&b->cond, &b->mutex);
    pthread_mutex_unlock(&b->mutex);
}

/* ------------------------------------------------------------------------ */
/* Filling memory (RFC 9106, sections 3.2 and 3.4).                          */

struct argon2_instance {
    argon2id_block *memory;
    uint32_t passes;
    uint32_t lanes;
    uint32_t lane_length;    /* q = m' / p */
    uint32_t segment_length; /* q / 4 */
    argon2id_scratch_kernel_fn *fill;
    struct phase_barrier barrier;
    unsigned workers;        /* valid once the start barrier has opened */
};

struct argon2_worker {
    struct argon2_instance *inst;
    unsigned index;
    pthread_t thread;
};

static const argon2id_block zero_block;

/*
 * next_addresses(inst, scratch, address, input): advance the counter in
 * ${input} and set ${address} = G(0, G(0, input)), the next 128
 * pseudo-random values of data-independent indexing (RFC 9106, section
 * 3.4.1.2).
 */
static void
next_addresses(const struct argon2_instance *inst, argon2id_scratch *scratch,
    argon2id_block *address, argon2id_block *input)
{
    argon2id_block tmp;

    input->v[6]++;
    inst->fill(scratch, &tmp, &zero_block, input, 0, NULL, NULL);
    inst->fill(scratch, address, &zero_block, &tmp, 0, NULL, NULL);
}

/*
 * reference_column(inst, pass, slice, index, same_lane, j1): the column of
 * the reference block for the block at ${index} in its segment (RFC 9106,
 * section 3.4.2), given J1 and whether the reference lane is the current.
 */
static uint32_t
reference_column(const struct argon2_instance *inst, uint32_t pass, uint32_t slice,
    uint32_t index, int same_lane, uint32_t j1)
{
    uint32_t sl = inst->segment_length, q = inst->lane_length;
    uint32_t area, start;

    if (pass == 0) {
        /* Only blocks already computed in this pass are eligible. */
        start = 0;
        if (same_lane)
            area = slice * sl + index - 1; /* all but the previous block */
        else
            area = slice * sl - (index == 0 ? 1 : 0);
    } else {
        /* The last three segments of the lane, oldest first. */
        start = (slice == ARGON2_SYNC_POINTS - 1) ? 0 : (slice + 1) * sl;
        if (same_lane)
            area = q - sl + index - 1;
        else
            area = q - sl - (index == 0 ? 1 : 0);
    }
    /* Non-uniform mapping that favours recent blocks. */
    uint64_t x = ((uint64_t)j1 * j1) >> 32;
    uint64_t y = ((uint64_t)area * x) >> 32;
    uint64_t rel = (uint64_t)area - 1 - y;
    return (uint32_t)((start + rel) % q);
}

/*
 * locate_reference(inst, pass, lane, slice, index, pseudo_rand): the
 * reference block for the block at ${index} in segment (${lane},
 * ${slice}) of ${pass}, given its 64-bit pseudo-random value J2 || J1.
 */
static const argon2id_block *
locate_reference(const struct argon2_instance *inst, uint32_t pass, uint32_t lane,
    uint32_t slice, uint32_t index, uint64_t pseudo_rand)
{
    uint32_t j1 = (uint32_t)pseudo_rand, j2 = (uint32_t)(pseudo_rand >> 32);
    /* The first slice of the first pass can only refer to its own lane. */
    uint32_t ref_lane = (pass == 0 && slice == 0) ? lane : j2 % inst->lanes;
    uint32_t ref_col = reference_column(inst, pass, slice, index, ref_lane == lane, j1);
    return &inst->memory[(size_t)ref_lane * inst->lane_length + ref_col];
}

/* prefetch_block(b): ask for the 16 cache lines of ${b} ahead of use. */
static inline void
prefetch_block(const argon2id_block *b)
{
    for (unsigned off = 0; off < sizeof(*b); off += 64)
        __builtin_prefetch((const char *)b + off, 0, 3);
}

/* Where the next block of a data-dependent segment sits, for the kernel's
 * early-result hook. */
struct next_block_hint {
    const struct argon2_instance *inst;
    uint32_t pass, lane, slice, index;
};

/* prefetch_next_reference(ctx, first_word): argon2id_early_fn that
 * prefetches the reference block of the next block, whose pseudo-random
 * value is the first word of the block being computed. */
static void
prefetch_next_reference(void *ctx, uint64_t first_word)
{
    const struct next_block_hint *h = ctx;

    prefetch_block(locate_reference(h->inst, h->pass, h->lane, h->slice, h->index, first_word));
}

/*
 * A segment being filled.  A thread advances the segments of several lanes
 * in lockstep, one block of each in turn: the next reference block of one
 * lane (prefetched as soon as it is known) then arrives from memory while
 * the other lanes' blocks are computed, instead of stalling the thread.
 */
struct segment_cursor {
    argon2id_block address; /* 128 pseudo-random values (data-independent) */
    argon2id_block input;   /* input of the address generator */
    struct next_block_hint hint;
    argon2id_block *lane_base;
    uint32_t col, prev_col;   /* columns of the next block and its predecessor */
    int data_independent;
};

/* At most this many lanes per thread advance in lockstep (stack use). */
#define LANES_IN_LOCKSTEP 4

/* first_index(pass, slice): index of the first block a segment computes;
 * blocks 0 and 1 of each lane come from H0. */
static uint32_t
first_index(uint32_t pass, uint32_t slice)
{
    return (pass == 0 && slice == 0) ? 2 : 0;
}

/* segment_begin(c, scratch, inst, pass, lane, slice): position ${c} at the
 * first block of segment (${lane}, ${slice}) of ${pass}. */
static void
segment_begin(struct segment_cursor *c, argon2id_scratch *scratch,
    const struct argon2_instance *inst, uint32_t pass, uint32_t lane, uint32_t slice)
{
    const uint32_t q = inst->lane_length;
    const uint32_t first = first_index(pass, slice);

    c->hint = (struct next_block_hint){ inst, pass, lane, slice, 0 };
    c->lane_base = inst->memory + (size_t)lane * q;
    c->col = slice * inst->segment_length + first;
    c->prev_col = (c->col == 0) ? q - 1 : c->col - 1;
    c->data_independent = (pass == 0 && slice < ARGON2_SYNC_POINTS / 2);
    if (c->data_independent) {
        memset(&c->input, 0, sizeof(c->input));
        c->input.v[0] = pass;
        c->input.v[1] = lane;
        c->input.v[2] = slice;
        c->input.v[3] = (uint64_t)q * inst->lanes;
        c->input.v[4] = inst->passes;
        c->input.v[5] = ARGON2_TYPE_ID;
        if (first != 0)
            next_addresses(inst, scratch, &c->address, &c->input);
    }
}

/* segment_fill_block(c, scratch, i): compute the block at index ${i} of the
 * segment (the cursor's next block) and advance. */
static void
segment_fill_block(struct segment_cursor *c, argon2id_scratch *scratch, uint32_t i)
{
    const struct argon2_instance *inst = c->hint.inst;
    const uint32_t pass = c->hint.pass, lane = c->hint.lane, slice = c->hint.slice;
    const uint32_t sl = inst->segment_length;
    const argon2id_block *ref;

    if (c->data_independent) {
        if (i % ARGON2_ADDRESSES_PER_BLOCK == 0)
            next_addresses(inst, scratch, &c->address, &c->input);
        ref = locate_reference(inst, pass, lane, slice, i,
            c->address.v[i % ARGON2_ADDRESSES_PER_BLOCK]);
        /* The next address is already known: fetch its block now. */
        uint32_t next = i + 1;
        if (next < sl && next % ARGON2_ADDRESSES_PER_BLOCK != 0)
            prefetch_block(locate_reference(inst, pass, lane, slice, next,
                c->address.v[next % ARGON2_ADDRESSES_PER_BLOCK]));
        inst->fill(scratch, &c->lane_base[c->col], &c->lane_base[c->prev_col], ref, pass != 0,
            NULL, NULL);
    } else {
        ref = locate_reference(inst, pass, lane, slice, i, c->lane_base[c->prev_col].v[0]);
        c->hint.index = i + 1;
        inst->fill(scratch, &c->lane_base[c->col], &c->lane_base[c->prev_col], ref,
            pass != 0, i + 1 < sl ? prefetch_next_reference : NULL, &c->hint);
    }
    c->prev_col = c->col++;
}

/*
 * fill_slice_lanes(inst, pass, slice, lane0, stride): fill the segments of
 * this slice in lanes ${lane0}, ${lane0} + ${stride}, ... in lockstep
 * groups.
 */
static void
fill_slice_lanes(const struct argon2_instance *inst, uint32_t pass, uint32_t slice,
    uint32_t lane0, uint32_t stride)
{
    struct segment_cursor cursors[LANES_IN_LOCKSTEP];
    argon2id_scratch scratch;
    const uint32_t first = first_index(pass, slice);

    for (uint32_t lane = lane0; lane < inst->lanes;) {
        unsigned n = 0;
        for (; n < LANES_IN_LOCKSTEP && lane < inst->lanes; n++, lane += stride)
            segment_begin(&cursors[n], &scratch, inst, pass, lane, slice);
        for (uint32_t i = first; i < inst->segment_length; i++)
            for (unsigned k = 0; k < n; k++)
                segment_fill_block(&cursors[k], &scratch, i);
    }
    /* The kernel's temporaries (secret), once per segment rather than once
     * per block (see argon2id_scratch); addresses are not secret, but the
     * cursors are cheap to clear. */
    util_wipe(&scratch, sizeof(scratch));
    util_wipe(cursors, sizeof(cursors));
}

/*
 * run_worker(w): fill the segments of lanes w->index, w->index + workers, ...
 * for every slice of every pass, meeting the other workers after each
 * slice.  The first barrier only waits for the final worker count.  Once
 * every lane is finished, wipe those lanes except their last block (the
 * caller needs the last column for the tag and wipes it), so the wipe of
 * a large area is shared between the threads.
 */
static void
run_worker(struct argon2_worker *w)
{
    struct argon2_instance *inst = w->inst;

    phase_barrier_wait(&inst->barrier);
    for (uint32_t pass = 0; pass < inst->passes; pass++) {
        for (uint32_t slice = 0; slice < ARGON2_SYNC_POINTS; slice++) {
            fill_slice_lanes(inst, pass, slice, w->index, inst->workers);
            phase_barrier_wait(&inst->barrier);
        }
    }
    for (uint32_t lane = w->index; lane < inst->lanes; lane += inst->workers)
        util_wipe(inst->memory + (size_t)lane * inst->lane_length,
            (size_t)(inst->lane_length - 1) * sizeof(argon2id_block));
}

static void *
worker_thread(void *arg)
{
    run_worker(arg);
    return NULL;
}

/*
 * fill_memory(inst, threads): run all passes with the calling thread plus up
 * to ${threads} - 1 helper threads.  If a thread cannot be created the
 * remaining lanes are spread over the threads that exist (same result).
 * On success every block except the last column has been wiped again.
 */
static int
fill_memory(struct argon2_instance *inst, uint32_t threads)
{
    struct argon2_worker workers[PQV_ARGON2_MAX_LANES];
    unsigned created = 0;

    if (phase_barrier_init(&inst->barrier) != 0)
        return error_set(PQV_E_NOMEM, NULL, "argon2id: cannot create barrier");
    for (unsigned i = 0; i < threads; i++) {
        workers[i].inst = inst;
        workers[i].index = i;
    }
    for (unsigned i = 1; i < threads; i++) {
        if (pthread_create(&workers[i].thread, NULL, worker_thread, &workers[i]) != 0)
            break;
        created++;
    }
    /* Publish the worker count and the party count together under the
     * barrier's mutex: the workers read inst->workers only after passing
     * the start barrier, which needs this thread's arrival too. */
    pthread_mutex_lock(&inst->barrier.mutex);
    inst->workers = created + 1;
    inst->barrier.parties = created + 1;
    pthread_mutex_unlock(&inst->barrier.mutex);

    run_worker(&workers[0]);
    for (unsigned i = 1; i <= created; i++)
        pthread_join(workers[i].thread, NULL);
    phase_barrier_destroy(&inst->barrier);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Public interface.                                                         */

/* The kernels, fastest first. */
static const struct {
    const char *name;
    argon2id_scratch_kernel_fn *fill;
    int (*usable)(void);
} kernels[] = {
#if defined(__x86_64__) || defined(__i386__)
    { "avx512", argon2id_avx512_fill_block_with, cpu_has_avx512 },
    { "avx2", argon2id_avx2_fill_block_with, cpu_has_avx2 },
#endif
    { "portable", argon2id_fill_block_portable_with, NULL },
};
#define KERNEL_COUNT (sizeof(kernels) / sizeof(kernels[0]))

/* Index into kernels[] of the kernel tests asked for, or -1 for automatic. */
static int preferred_kernel = -1;

int
argon2id_prefer_kernel(const char *name)
{
    if (name == NULL) {
        preferred_kernel = -1;
        return 0;
    }
    for (size_t i = 0; i < KERNEL_COUNT; i++) {
        if (strcmp(kernels[i].name, name) == 0) {
            if (kernels[i].usable != NULL && !kernels[i].usable())
                return -1;
            preferred_kernel = (int)i;
            return 0;
        }
    }
    return -1;
}

/* pick_kernel(): index of the kernel to use: the preferred one if set and
 * still usable (cpu_force_portable may have intervened), otherwise the
 * fastest one this CPU and PQVAULT_CPU allow. */
static size_t
pick_kernel(void)
{
    int pref = preferred_kernel;

    if (pref >= 0 && (kernels[pref].usable == NULL || kernels[pref].usable()))
        return (size_t)pref;
    for (size_t i = 0; i < KERNEL_COUNT; i++)
        if (kernels[i].usable == NULL || kernels[i].usable())
            return i;
    return KERNEL_COUNT - 1;
}

const char *
pqv_argon2id_impl(void)
{
    return kernels[pick_kernel()].name;
}

/* check_buffer(p, len, name): PQV_E_INVAL unless ${len} fits in LE32 and
 * ${p} is non-NULL whenever ${len} is non-zero. */
static int
check_buffer(const void *p, size_t len, const char *name)
{
    if ((unsigned long long)len > ARGON2_MAX_LEN)
        return error_set(PQV_E_INVAL, NULL, "argon2id: %s longer than 2^32-1 bytes", name);
    if (p == NULL && len != 0)
        return error_set(PQV_E_INVAL, NULL, "argon2id: %s is NULL", name);
    return 0;
}

/* validate(...): check every parameter against the header and RFC 9106. */
static int
validate(const uint8_t *out, size_t outlen, const uint8_t *pwd, size_t pwdlen,
    const uint8_t *salt, size_t saltlen, const uint8_t *secret, size_t secretlen,
    const uint8_t *ad, size_t adlen, uint32_t t_cost, uint32_t m_kib,
    uint32_t lanes, uint32_t threads)
{
    int err;

    if (out == NULL)
        return error_set(PQV_E_INVAL, NULL, "argon2id: output buffer is NULL");
    if (outlen < 4)
        return error_set(PQV_E_INVAL, NULL, "argon2id: tag length %zu below 4", outlen);
    if ((err = check_buffer(out, outlen, "tag")) != 0 ||
        (err = check_buffer(pwd, pwdlen, "password")) != 0 ||
        (err = check_buffer(salt, saltlen, "salt")) != 0 ||
        (err = check_buffer(secret, secretlen, "secret")) != 0 ||
        (err = check_buffer(ad, adlen, "associated data")) != 0)
        return err;
    if (saltlen < 8)
        return error_set(PQV_E_INVAL, NULL, "argon2id: salt length %zu below 8", saltlen);
    if (lanes < 1 || lanes > PQV_ARGON2_MAX_LANES)
        return error_set(PQV_E_INVAL, NULL, "argon2id: lanes %u outside 1..%u", lanes, PQV_ARGON2_MAX_LANES);
    if (t_cost < 1 || t_cost > PQV_ARGON2_MAX_T)
        return error_set(PQV_E_INVAL, NULL, "argon2id: passes %u outside 1..%u", t_cost, PQV_ARGON2_MAX_T);
    if (m_kib < PQV_ARGON2_MIN_MKIB || m_kib > PQV_ARGON2_MAX_MKIB ||
        (uint64_t)m_kib < 8ULL * lanes)
        return error_set(PQV_E_INVAL, NULL, "argon2id: memory %u KiB outside %u..%u KiB or below 8 KiB per lane", m_kib, PQV_ARGON2_MIN_MKIB, PQV_ARGON2_MAX_MKIB);
    if (threads < 1)
        return error_set(PQV_E_INVAL, NULL, "argon2id: threads must be at least 1");
    return 0;
}

/*
 * initial_hash(h0, ...): H0 = H^64 over the parameters and inputs (RFC 9106,
 * section 3.2, step 1).  Note it hashes the requested m, not m'.
 */
static void
initial_hash(uint8_t h0[ARGON2_PREHASH_BYTES], size_t outlen, const uint8_t *pwd,
    size_t pwdlen, const uint8_t *salt, size_t saltlen, const uint8_t *secret,
    size_t secretlen, const uint8_t *ad, size_t adlen, uint32_t t_cost, uint32_t m_kib,
    uint32_t lanes)
{
    blake2b_ctx ctx;
    uint8_t le[4];
    const uint32_t params[6] = { lanes, (uint32_t)outlen, m_kib, t_cost, ARGON2_VERSION,
        ARGON2_TYPE_ID };
    const struct { const uint8_t *p; size_t len; } fields[4] = {
        { pwd, pwdlen }, { salt, saltlen }, { secret, secretlen }, { ad, adlen }
    };

    (void)blake2b_init(&ctx, ARGON2_PREHASH_BYTES, NULL, 0);
    for (int i = 0; i < 6; i++) {
        util_store_le32(le, params[i]);
        blake2b_update(&ctx, le, sizeof(le));
    }
    for (int i = 0; i < 4; i++) {
        util_store_le32(le, (uint32_t)fields[i].len);
        blake2b_update(&ctx, le, sizeof(le));
        if (fields[i].len != 0)
            blake2b_update(&ctx, fields[i].p, fields[i].len);
    }
    blake2b_final(&ctx, h0);
}

static int threads_uncapped; /* tests: see argon2id_uncap_threads */

void
argon2id_uncap_threads(int on)
{
    threads_uncapped = on;
}

/* usable_cpus(): CPUs this process may run on (affinity mask, else the
 * online count), or 0 if unknown. */
static unsigned long
usable_cpus(void)
{
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned long)CPU_COUNT(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (unsigned long)online : 0;
}

/*
 * worker_count(threads, lanes): how many threads to use.  More than one per
 * lane has nothing to do, and more than the usable CPUs only adds context
 * switches at every slice barrier, while a thread with several lanes hides
 * memory latency better (see struct segment_cursor).  The tag does not
 * depend on the thread count.
 */
static uint32_t
worker_count(uint32_t threads, uint32_t lanes)
{
    unsigned long cpus = threads_uncapped ? 0 : usable_cpus();
    uint32_t n = threads < lanes ? threads : lanes;

    if (cpus >= 1 && cpus < n)
        n = (uint32_t)cpus;
    return n;
}

/* allocate_blocks(n, bytes_out): ${n} 64-byte aligned blocks (their size in
 * bytes stored in ${bytes_out}), or NULL. */
static argon2id_block *
allocate_blocks(size_t n, size_t *bytes_out)
{
    void *mem = NULL;
    size_t bytes = n * sizeof(argon2id_block);

    if (bytes / sizeof(argon2id_block) != n || posix_memalign(&mem, 64, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    /* A 64 MiB area faults in 16384 small pages otherwise; with huge pages
     * (where the kernel grants them on request) one t=3 m=64 MiB p=4 hash
     * took 28 ms instead of 43 ms here.  Advisory only. */
    {
        uintptr_t lo = ((uintptr_t)mem + 4095) & ~(uintptr_t)4095;
        uintptr_t hi = ((uintptr_t)mem + bytes) & ~(uintptr_t)4095;
        if (hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    *bytes_out = bytes;
    return mem;
}

int
pqv_argon2id(uint8_t *out, size_t outlen, const uint8_t *pwd, size_t pwdlen,
    const uint8_t *salt, size_t saltlen, const uint8_t *secret, size_t secretlen,
    const uint8_t *ad, size_t adlen, uint32_t t_cost, uint32_t m_kib,
    uint32_t lanes, uint32_t threads)
{
    struct argon2_instance inst;
    uint8_t h0[ARGON2_PREHASH_BYTES];
    uint8_t block_bytes[ARGON2_BLOCK_BYTES];
    uint8_t seed_suffix[8];
    argon2id_block final_block;
    size_t mem_bytes = 0;
    int err;

    err = validate(out, outlen, pwd, pwdlen, salt, saltlen, secret, secretlen, ad,
        adlen, t_cost, m_kib, lanes, threads);
    if (err != 0)
        return err;

    memset(&inst, 0, sizeof(inst));
    inst.passes = t_cost;
    inst.lanes = lanes;
    inst.segment_length = m_kib / (ARGON2_SYNC_POINTS * lanes); /* m' = 4p*this */
    inst.lane_length = inst.segment_length * ARGON2_SYNC_POINTS;
    inst.fill = kernels[pick_kernel()].fill;
    inst.memory = allocate_blocks((size_t)inst.lane_length * lanes, &mem_bytes);
    if (inst.memory == NULL)
        return error_set(PQV_E_NOMEM, NULL, "argon2id: cannot allocate %u KiB", m_kib);

    initial_hash(h0, outlen, pwd, pwdlen, salt, saltlen, secret, secretlen, ad, adlen,
        t_cost, m_kib, lanes);

    /* B[i][0] = H'(H0 || LE32(0) || LE32(i)), B[i][1] likewise with 1. */
    for (uint32_t lane = 0; lane < lanes; lane++) {
        for (uint32_t col = 0; col < 2; col++) {
            util_store_le32(seed_suffix, col);
            util_store_le32(seed_suffix + 4, lane);
            argon2_hprime(block_bytes, sizeof(block_bytes), h0, sizeof(h0), seed_suffix,
                sizeof(seed_suffix));
            block_from_bytes(&inst.memory[(size_t)lane * inst.lane_length + col],
                block_bytes);
        }
    }

    if ((err = fill_memory(&inst, worker_count(threads, lanes))) == 0) {
        /* C = XOR of the last column; tag = H'^T(C). */
        final_block = inst.memory[inst.lane_length - 1];
        for (uint32_t lane = 1; lane < lanes; lane++) {
            const argon2id_block *last =
                &inst.memory[(size_t)lane * inst.lane_length + inst.lane_length - 1];
            for (unsigned k = 0; k < ARGON2ID_BLOCK_WORDS; k++)
                final_block.v[k] ^= last->v[k];
        }
        block_to_bytes(block_bytes, &final_block);
        argon2_hprime(out, outlen, block_bytes, sizeof(block_bytes), NULL, 0);
        util_wipe(&final_block, sizeof(final_block));
        /* The workers wiped everything else. */
        for (uint32_t lane = 0; lane < lanes; lane++)
            util_wipe(&inst.memory[(size_t)lane * inst.lane_length + inst.lane_length - 1],
                sizeof(argon2id_block));
    } else {
        util_wipe(inst.memory, mem_bytes);
    }
    free(inst.memory);
    util_wipe(h0, sizeof(h0));
    util_wipe(block_bytes, sizeof(block_bytes));
    return err;
}
