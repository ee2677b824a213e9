/*
 * util.h: internal helpers: wiping, constant-time comparison, randomness,
 * memory pinning, endian conversion, hex.  Includes util/error.h, which
 * nearly every module needs with it.
 */
#ifndef PQV_UTIL_H
#define PQV_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pqvault/common.h"
#include "util/error.h"

/*
 * util_sort(base, n, size, cmp): qsort(3) of ${n} elements at ${base}, also
 * when ${base} is NULL for no element (qsort's base must never be NULL).
 */
#include <stdlib.h>
static inline void util_sort(void *base, size_t n, size_t size,
                             int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

/*
 * util_search(key, base, n, size, cmp): bsearch(3), also when ${base} is
 * NULL for no element (NULL then: nothing found).
 */
static inline void *util_search(const void *key, const void *base, size_t n, size_t size,
                                int (*cmp)(const void *, const void *))
{
    return n == 0 ? NULL : bsearch(key, base, n, size, cmp);
}

/* util_wipe(p, n): overwrite ${n} bytes at ${p} with zeros; never elided. */
void util_wipe(void *p, size_t n);

/*
 * util_ct_equal(a, b, n): 1 if the ${n} bytes at ${a} and ${b} are equal, 0
 * otherwise, in time that depends only on ${n}.
 */
int util_ct_equal(const void *a, const void *b, size_t n);

/*
 * util_declassify(p, n): declare the ${n} bytes at ${p} public: a decision
 * revealed anyway (a tag or checksum did or did not match) or a value the
 * design declares public.  A no-op, except in the constant-time test build
 * (tests/ct/run.sh compiles with -DPQV_CT_DECLASSIFY), where valgrind is
 * told the bytes are defined, so only branches on what is still secret are
 * reported.
 */
#ifdef PQV_CT_DECLASSIFY
#include <valgrind/memcheck.h>
#define util_declassify(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#else
#define util_declassify(p, n) ((void)(p), (void)(n))
#endif

/* util_ct_is_zero(a, n): 1 if all ${n} bytes are zero; constant time. */
int util_ct_is_zero(const void *a, size_t n);

/* util_random(buf, n): fill ${buf} from the system CSPRNG.  0 or PQV_E_CRYPTO. */
int util_random(void *buf, size_t n) PQV_WARN_UNUSED;

/* util_pin_memory(p, n) / util_unpin_memory(p, n): keep ${n} bytes at ${p}
 * out of swap where the system allows it (best effort: a low
 * RLIMIT_MEMLOCK is not an error). */
void util_pin_memory(const void *p, size_t n);
void util_unpin_memory(const void *p, size_t n);

/* Big- and little-endian loads and stores. */
static inline uint16_t util_load_be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t util_load_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t util_load_be64(const uint8_t *p)
{
    return ((uint64_t)util_load_be32(p) << 32) | util_load_be32(p + 4);
}
static inline void util_store_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void util_store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void util_store_be64(uint8_t *p, uint64_t v)
{
    util_store_be32(p, (uint32_t)(v >> 32)); util_store_be32(p + 4, (uint32_t)v);
}
static inline uint32_t util_load_le32(const uint8_t *p)
{
    return ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[1] << 8) | p[0];
}
static inline void util_store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline uint64_t util_load_le64(const uint8_t *p)
{
    return ((uint64_t)util_load_le32(p + 4) << 32) | util_load_le32(p);
}
static inline void util_store_le64(uint8_t *p, uint64_t v)
{
    util_store_le32(p, (uint32_t)v); util_store_le32(p + 4, (uint32_t)(v >> 32));
}

/* util_hex_encode(out, in, n): write 2*n lowercase hex digits and a NUL. */
void util_hex_encode(char *out, const uint8_t *in, size_t n);

/* util_hex_decode(out, n, hex): decode exactly 2*n hex digits; 0 or -1. */
int util_hex_decode(uint8_t *out, size_t n, const char *hex);

#endif
