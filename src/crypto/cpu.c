/*
 * cpu.c: CPU feature detection (see cpu.h).
 */
#include "crypto/cpu.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define PQV_X86 1
#endif

static int forced_portable = -1; /* -1: not yet read from the environment */

static int
portable_forced(void)
{
    if (forced_portable < 0) {
        const char *v = getenv("PQVAULT_CPU");
        forced_portable = (v != NULL && strcmp(v, "portable") == 0);
    }
    return forced_portable;
}

void
cpu_force_portable(int on)
{
    forced_portable = on ? 1 : 0;
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
static int hw_avx2 = -1, hw_avx512 = -1, hw_vaes = -1;

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
    if (hw_avx2 < 0)
        hw_avx2 = probe_avx2();
    return hw_avx2;
}

int
cpu_has_avx512(void)
{
    if (portable_forced())
        return 0;
    if (hw_avx512 < 0)
        hw_avx512 = probe_avx512();
    return hw_avx512;
}

int
cpu_has_vaes(void)
{
    if (portable_forced())
        return 0;
    if (hw_vaes < 0)
        hw_vaes = probe_vaes();
    return hw_vaes;
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
