/*
 * blake2b.c: BLAKE2b as specified in RFC 7693 (see blake2b.h).
 */
#include "crypto/blake2b.h"

#include <string.h>

#include "util/util.h"

/* Initialisation vector: the SHA-512 IV (RFC 7693, section 2.6). */
static const uint64_t blake2b_iv[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
    0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
    0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL
};

/* Message word schedule (RFC 7693, section 2.7); rounds 10 and 11 reuse
 * rows 0 and 1. */
static const uint8_t blake2b_sigma[12][16] = {
    { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
    { 14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3 },
    { 11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4 },
    { 7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8 },
    { 9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13 },
    { 2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9 },
    { 12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11 },
    { 13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10 },
    { 6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5 },
    { 10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0 },
    { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
    { 14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3 }
};

static inline uint64_t
rotr64(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

/* The mixing function G of RFC 7693, section 3.1. */
#define BLAKE2B_G(v, a, b, c, d, x, y)                                        \
    do {                                                                      \
        v[a] = v[a] + v[b] + (x);                                             \
        v[d] = rotr64(v[d] ^ v[a], 32);                                       \
        v[c] = v[c] + v[d];                                                   \
        v[b] = rotr64(v[b] ^ v[c], 24);                                       \
        v[a] = v[a] + v[b] + (y);                                             \
        v[d] = rotr64(v[d] ^ v[a], 16);                                       \
        v[c] = v[c] + v[d];                                                   \
        v[b] = rotr64(v[b] ^ v[c], 63);                                       \
    } while (0)

/*
 * blake2b_compress(ctx, block, last): the compression function F of RFC
 * 7693, section 3.2, applied to the 128 bytes at ${block} with the byte
 * counter already advanced; ${last} sets the final-block flag.
 */
static void
blake2b_compress(blake2b_ctx *ctx, const uint8_t *block, int last)
{
    uint64_t m[16], v[16];

    for (int i = 0; i < 16; i++)
        m[i] = util_load_le64(block + 8 * i);
    for (int i = 0; i < 8; i++) {
        v[i] = ctx->h[i];
        v[i + 8] = blake2b_iv[i];
    }
    v[12] ^= ctx->t[0];
    v[13] ^= ctx->t[1];
    if (last)
        v[14] = ~v[14];
    for (int r = 0; r < 12; r++) {
        const uint8_t *s = blake2b_sigma[r];
        BLAKE2B_G(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        BLAKE2B_G(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        BLAKE2B_G(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        BLAKE2B_G(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        BLAKE2B_G(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        BLAKE2B_G(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        BLAKE2B_G(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        BLAKE2B_G(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; i++)
        ctx->h[i] ^= v[i] ^ v[i + 8];
    /* The message words may be secret (Argon2 blocks, keys). */
    util_wipe(m, sizeof(m));
    util_wipe(v, sizeof(v));
}

/* blake2b_count(ctx, n): add ${n} to the 128-bit byte counter. */
static void
blake2b_count(blake2b_ctx *ctx, uint64_t n)
{
    ctx->t[0] += n;
    if (ctx->t[0] < n)
        ctx->t[1]++;
}

int
blake2b_init(blake2b_ctx *ctx, size_t outlen, const void *key, size_t keylen)
{
    if (outlen == 0 || outlen > PQV_BLAKE2B_OUTBYTES || keylen > PQV_BLAKE2B_KEYBYTES ||
        (key == NULL && keylen != 0))
        return -1;
    memset(ctx, 0, sizeof(*ctx));
    for (int i = 0; i < 8; i++)
        ctx->h[i] = blake2b_iv[i];
    /* Parameter block word 0: digest length, key length, fanout 1, depth 1. */
    ctx->h[0] ^= 0x01010000ULL ^ ((uint64_t)keylen << 8) ^ (uint64_t)outlen;
    ctx->outlen = outlen;
    if (keylen > 0) {
        /* The key, zero-padded to a full block, is the first message block. */
        memcpy(ctx->buf, key, keylen);
        ctx->buflen = PQV_BLAKE2B_BLOCKBYTES;
    }
    return 0;
}

void
blake2b_update(blake2b_ctx *ctx, const void *in, size_t inlen)
{
    const uint8_t *p = in;

    if (inlen == 0)
        return;
    /* Top up the buffer; compress it only once more input follows it, since
     * the final block must be compressed with the final flag. */
    size_t room = PQV_BLAKE2B_BLOCKBYTES - ctx->buflen;
    if (inlen > room) {
        memcpy(ctx->buf + ctx->buflen, p, room);
        p += room;
        inlen -= room;
        blake2b_count(ctx, PQV_BLAKE2B_BLOCKBYTES);
        blake2b_compress(ctx, ctx->buf, 0);
        ctx->buflen = 0;
        while (inlen > PQV_BLAKE2B_BLOCKBYTES) {
            blake2b_count(ctx, PQV_BLAKE2B_BLOCKBYTES);
            blake2b_compress(ctx, p, 0);
            p += PQV_BLAKE2B_BLOCKBYTES;
            inlen -= PQV_BLAKE2B_BLOCKBYTES;
        }
    }
    memcpy(ctx->buf + ctx->buflen, p, inlen);
    ctx->buflen += inlen;
}

void
blake2b_final(blake2b_ctx *ctx, uint8_t *out)
{
    uint8_t full[PQV_BLAKE2B_OUTBYTES];

    blake2b_count(ctx, ctx->buflen);
    memset(ctx->buf + ctx->buflen, 0, PQV_BLAKE2B_BLOCKBYTES - ctx->buflen);
    blake2b_compress(ctx, ctx->buf, 1);
    for (int i = 0; i < 8; i++)
        util_store_le64(full + 8 * i, ctx->h[i]);
    memcpy(out, full, ctx->outlen);
    util_wipe(full, sizeof(full));
    util_wipe(ctx, sizeof(*ctx));
}

int
blake2b(uint8_t *out, size_t outlen, const void *in, size_t inlen,
    const void *key, size_t keylen)
{
    blake2b_ctx ctx;

    if (blake2b_init(&ctx, outlen, key, keylen) != 0)
        return -1;
    blake2b_update(&ctx, in, inlen);
    blake2b_final(&ctx, out);
    return 0;
}
