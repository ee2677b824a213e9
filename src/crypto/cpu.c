/*
 * cpu.c: CPU feature detection (see cpu.h).
 */
#include "crypto/cpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define PQV_X86 1
#endif

/* Each answer is found once, by whichever thread asks first; threads
 * asking at once may each find it (the same value), so it is kept in an
 * atomic (a plain int written by one thread while another reads it is a
 * data race: ThreadSanitizer saw two in a mount's unlock). */
static atomic_int forced_portable = -1; /* -1: not yet read from the environment */

/* cached(slot, probe): *${slot}, found with ${probe} the first time. */
static int
cached(atomic_int *slot, int (*probe)(void))
{
    int v = atomic_load_explicit(slot, memory_order_relaxed);

    if (v < 0) {
        v = probe();
        atomic_store_explicit(slot, v, memory_order_relaxed);
    }
    return v;
}

static int
portable_from_env(void)
{
    const char *v = getenv("PQVAULT_CPU");

    return v != NULL && strcmp(v, "portable") == 0;
}

static int
portable_forced(void)
{
    return cached(&forced_portable, portable_from_env);
}

void
cpu_force_portable(int on)
{
    atomic_store_explicit(&forced_portable, on ? 1 : 0, memory_order_relaxed);
}

#ifdef PQV_X86
static unsigned long long
read_xcr0(void)
{
    unsigned int eax, edx;

    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

static int
os_saves_ymm(void)
{
    unsigned int a, b, c, d;

    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    if (!(c & bit_OSXSAVE))
        return 0;
    return (read_xcr0() & 0x6) == 0x6;
}
#endif

/* Hardware probes, cached: cpuid and xgetbv are slow under virtualisation
 * and the answers never change.  -1 means not probed yet; a race between
 * threads only repeats the same probe. */
static atomic_int hw_avx2 = -1, hw_avx512 = -1, hw_vaes = -1;

static int
probe_avx2(void)
{
#ifdef PQV_X86
    unsigned int a, b, c, d;

    if (!os_saves_ymm())
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (b & bit_AVX2) != 0;
#else
    return 0;
#endif
}

static int
probe_avx512(void)
{
#ifdef PQV_X86
    unsigned int a, b, c, d;

    if (!probe_avx2())
        return 0;
    if ((read_xcr0() & 0xe6) != 0xe6)
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (b & bit_AVX512F) && (b & bit_AVX512BW) && (b & bit_AVX512VL);
#else
    return 0;
#endif
}

static int
probe_vaes(void)
{
#ifdef PQV_X86
    unsigned int a, b, c, d;

    if (!probe_avx512())
        return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_AES))
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (c & bit_VAES) != 0;
#else
    return 0;
#endif
}

int
cpu_has_avx2(void)
{
    if (portable_forced())
        return 0;
    return cached(&hw_avx2, probe_avx2);
}

int
cpu_has_avx512(void)
{
    if (portable_forced())
        return 0;
    return cached(&hw_avx512, probe_avx512);
}

int
cpu_has_vaes(void)
{
    if (portable_forced())
        return 0;
    return cached(&hw_vaes, probe_vaes);
}

int
cpu_has_aes_clmul(void)
{
#ifdef PQV_X86
    unsigned int a, b, c, d;

    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    return (c & bit_AES) && (c & bit_PCLMUL);
#else
    return 0;
#endif
}
