/*
 * test_wipe.c: the stack temporaries of the Argon2id and FrodoKEM kernels
 * that hold secrets (Argon2's block state, FrodoKEM's sampler and the
 * accumulators of B'S, AS and S'A) are wiped before the kernels return.
 *
 * Method: a kernel runs from a helper on known inputs, so the test knows
 * a value its temporaries held at the end (for Argon2, prev ^ ref; for the
 * sampler, the halved words; for a dot product, its partial sums); a
 * second helper, called from the same frame, then reads the dead stack
 * below it and looks for that value.  A control helper that leaves a
 * known value on its stack unwiped shows that the scan can see the dead
 * frames at all: where it cannot (a sanitizer's stack layout), the tests
 * say so and check nothing rather than pass vacuously.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "crypto/argon2id_internal.h"
#include "crypto/cpu.h"
#include "crypto/frodo_internal.h"

#define SCAN_BYTES (96 * 1024)
#define NOINLINE __attribute__((noinline))

static uint8_t dead[SCAN_BYTES];

/* copy_dead_stack(): the SCAN_BYTES below the caller's frame, as the last
 * calls left them, into dead[]. */
static NOINLINE void
copy_dead_stack(void)
{
    uint8_t below[SCAN_BYTES], *p = below;

    /* The compiler may not assume what p points to (nor warn about it). */
    __asm__ volatile("" : "+r"(p) : : "memory");
    memcpy(dead, p, SCAN_BYTES);
}

/* paint(): overwrite the stack below the caller with a pattern, so that
 * nothing an earlier test left is found by a later one. */
static NOINLINE void
paint(void)
{
    uint8_t below[SCAN_BYTES];

    memset(below, 0xa5, sizeof(below));
    __asm__ volatile("" : : "r"(below) : "memory");
}

/* found(needle, len): whether dead[] holds ${needle}. */
static int
found(const void *needle, size_t len)
{
    return memmem(dead, sizeof(dead), needle, len) != NULL;
}

static const uint8_t control_value[32] = "test_wipe: control, left unwiped";

/* leave_control(): what an unwiped temporary looks like. */
static NOINLINE void
leave_control(void)
{
    uint8_t tmp[sizeof(control_value)];

    memcpy(tmp, control_value, sizeof(tmp));
    __asm__ volatile("" : : "r"(tmp) : "memory");
}

/* scan_works(test): whether the dead stack is visible here (see above);
 * if not, say that ${test} checks nothing. */
static int
scan_works(const char *test)
{
    static int result = -1;

    if (result < 0) {
        paint();
        leave_control();
        copy_dead_stack();
        result = found(control_value, sizeof(control_value));
    }
    if (!result)
        printf("# SKIP - %s: the dead stack is not visible in this build (a sanitizer's "
            "stack layout?)\n", test);
    return result;
}

/* ---- Argon2id ---------------------------------------------------------- */

static argon2id_block prev, ref, out;

static NOINLINE void
run_argon2_kernel(argon2id_kernel_fn *fn, int xor_out)
{
    memset(&out, 0, sizeof(out));
    fn(&out, &prev, &ref, xor_out, NULL, NULL);
}

/* Every kernel's state r = prev ^ ref (first pass) is gone once it
 * returns. */
static void
test_argon2_kernel_temporaries_wiped(void)
{
    static const struct {
        const char *name;
        argon2id_kernel_fn *fn;
        int (*usable)(void);
    } kernels[] = {
        { "portable", argon2id_fill_block_portable, NULL },
        { "avx2", argon2id_avx2_fill_block, cpu_has_avx2 },
        { "avx512", argon2id_avx512_fill_block, cpu_has_avx512 },
    };
    uint64_t r[ARGON2ID_BLOCK_WORDS];

    if (!scan_works(__func__))
        return;
    for (unsigned k = 0; k < ARGON2ID_BLOCK_WORDS; k++) {
        prev.v[k] = 0x0123456789abcdefULL * (k + 1);
        ref.v[k] = 0xfedcba9876543210ULL ^ (k * 0x1111111111111111ULL);
        r[k] = prev.v[k] ^ ref.v[k];
    }
    for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
        if (kernels[i].usable != NULL && !kernels[i].usable())
            continue;
        paint();
        run_argon2_kernel(kernels[i].fn, 0);
        copy_dead_stack();
        /* Any 64-byte piece of the 1 KiB state is a leak. */
        int leaks = 0;
        for (unsigned k = 0; k < ARGON2ID_BLOCK_WORDS; k += 8)
            leaks += found(&r[k], 64);
        if (leaks != 0)
            fprintf(stderr, "  %s kernel: %d pieces of its state left on the stack\n",
                kernels[i].name, leaks);
        CHECK_EQ_INT(leaks, 0);
    }
}

/* ---- FrodoKEM ---------------------------------------------------------- */

/* The 976 sets' n and CDF (the table only shapes the samples). */
#define N 976
static const uint16_t cdf976[] = { 5638, 15915, 23689, 28571, 31116, 32217, 32613,
    32731, 32760, 32766, 32767 };
static uint16_t words[N * FRODO_NBAR], rows[FRODO_NBAR * N], st[FRODO_NBAR * N];
static uint16_t outm[N * FRODO_NBAR];

static NOINLINE void
run_sample_generic(void)
{
    frodo_sample_generic(words, N * FRODO_NBAR, cdf976, sizeof(cdf976) / sizeof(cdf976[0]));
}

static NOINLINE void
run_sample_avx2(void)
{
    frodo_avx2_sample(words, N * FRODO_NBAR, cdf976, sizeof(cdf976) / sizeof(cdf976[0]));
}

/* The sampler's halved words t = w >> 1 of its last 16 inputs. */
static void
test_frodo_sampler_wiped(void)
{
    void (*const run[])(void) = { run_sample_generic, run_sample_avx2 };
    uint16_t t[FRODO_LANES];

    if (!scan_works(__func__))
        return;
    for (int i = 0; i < 2; i++) {
        if (i == 1 && !cpu_has_avx2())
            continue;
        for (size_t j = 0; j < N * FRODO_NBAR; j++)
            words[j] = (uint16_t)(0x9e37 * (j + 1) + 0x51);
        for (size_t l = 0; l < FRODO_LANES; l++)
            t[l] = (uint16_t)(words[N * FRODO_NBAR - FRODO_LANES + l] >> 1);
        paint();
        run[i]();
        copy_dead_stack();
        if (found(t, sizeof(t)))
            fprintf(stderr, "  sampler %s: its last words are left on the stack\n",
                i ? "avx2" : "generic");
        CHECK(!found(t, sizeof(t)));
    }
}

static NOINLINE void
run_rows_dot_generic(void)
{
    frodo_rows_dot_generic(outm, rows, FRODO_NBAR, N, st);
}

static NOINLINE void
run_rows_dot_avx2(void)
{
    frodo_avx2_rows_dot(outm, rows, FRODO_NBAR, N, st);
}

static NOINLINE void
run_cols_axpy_generic(void)
{
    frodo_cols_axpy_generic(outm, st, rows, FRODO_NBAR, N);
}

/*
 * B'S (and AS): rows (8 x n) times S given transposed (8 x n): the
 * partial sums of the last row with the last column of S, 16 lanes of
 * every 16th product.  S'A: its accumulators end holding the last 16
 * columns of the last output row.
 */
static void
test_frodo_accumulators_wiped(void)
{
    uint16_t lanes[FRODO_LANES], lanes_avx2[FRODO_LANES];

    if (!scan_works(__func__))
        return;
    for (size_t j = 0; j < FRODO_NBAR * N; j++) {
        rows[j] = (uint16_t)(0x2545 * (j + 3) + 7);
        st[j] = (uint16_t)(0x6c07 * (j + 5) + 11);
    }
    /* generic: acc[l] = sum over j of a[j + l] * s[j + l] (row 7, column 7) */
    const uint16_t *a = rows + 7 * N, *s = st + 7 * N;
    memset(lanes, 0, sizeof(lanes));
    for (size_t j = 0; j < N; j += FRODO_LANES)
        for (size_t l = 0; l < FRODO_LANES; l++)
            lanes[l] = (uint16_t)(lanes[l] + (uint32_t)a[j + l] * s[j + l]);
    paint();
    run_rows_dot_generic();
    copy_dead_stack();
    CHECK(!found(lanes, sizeof(lanes)));

    /* avx2: acc[7] holds the 16 lane sums of row 7 with column 7 (the
     * same lanes); acc[0..7] are stored together before the final sum. */
    if (cpu_has_avx2()) {
        memcpy(lanes_avx2, lanes, sizeof(lanes));
        paint();
        run_rows_dot_avx2();
        copy_dead_stack();
        CHECK(!found(lanes_avx2, sizeof(lanes_avx2)));
    }

    /* S'A generic: out (8 x n) += coef (8 x 8) rows (8 x n); the
     * accumulator ends holding out[7][n-16 .. n-1]. */
    memset(outm, 0, sizeof(outm));
    paint();
    run_cols_axpy_generic();
    copy_dead_stack();
    CHECK(!found(outm + 7 * N + N - FRODO_LANES, FRODO_LANES * sizeof(uint16_t)));
}

/* The control itself: the scan finds a value left on the stack. */
static void
test_scan_sees_unwiped_temporaries(void)
{
    if (!scan_works(__func__))
        return;
    paint();
    leave_control();
    copy_dead_stack();
    CHECK(found(control_value, sizeof(control_value)));
}

TEST_MAIN(test_scan_sees_unwiped_temporaries, test_argon2_kernel_temporaries_wiped,
    test_frodo_sampler_wiped, test_frodo_accumulators_wiped)
