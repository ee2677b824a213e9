/*
 * util.c: internal helpers (see util.h).
 */
#include "util.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

/* (glibc's explicit_bzero is its memset behind a barrier the compiler
 * cannot see through: never elided, and 4x OPENSSL_cleanse's speed on
 * large buffers, which the mount's cache and the restore wipe by the GiB.) */
void
util_wipe(void *p, size_t n)
{
    if (p != NULL && n > 0)
        explicit_bzero(p, n);
}

void
util_pin_memory(const void *p, size_t n)
{
    if (p != NULL && n > 0)
        (void)mlock(p, n);
}

void
util_unpin_memory(const void *p, size_t n)
{
    if (p != NULL && n > 0)
        (void)munlock(p, n);
}

int
util_ct_equal(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t d = 0;

    for (size_t i = 0; i < n; i++)
        d |= (uint8_t)(x[i] ^ y[i]);
    /* Map d == 0 to 1 and anything else to 0 without a branch. */
    return (int)(1 & (((uint32_t)d - 1) >> 8));
}

int
util_ct_is_zero(const void *a, size_t n)
{
    const volatile uint8_t *x = a;
    uint8_t d = 0;

    for (size_t i = 0; i < n; i++)
        d |= x[i];
    return (int)(1 & (((uint32_t)d - 1) >> 8));
}

int
util_random(void *buf, size_t n)
{
    /* RAND_bytes takes an int; split very large requests. */
    uint8_t *p = buf;
    while (n > 0) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : n;
        if (RAND_bytes(p, (int)chunk) != 1)
            return error_set(PQV_E_CRYPTO, NULL, "system random generator failed");
        p += chunk;
        n -= chunk;
    }
    return 0;
}

void
util_hex_encode(char *out, const uint8_t *in, size_t n)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static int
hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int
util_hex_decode(uint8_t *out, size_t n, const char *hex)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hex_value(hex[2 * i]);
        int lo = hi < 0 ? -1 : hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)((hi << 4) | lo);
    }
    return hex[2 * n] == '\0' ? 0 : -1;
}
