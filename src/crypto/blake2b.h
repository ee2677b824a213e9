/*
 * blake2b.h: BLAKE2b (RFC 7693) with any digest length from 1 to 64 bytes
 * and an optional key.  Argon2id (RFC 9106) needs digest lengths other than
 * 64, which OpenSSL 3.0's EVP "BLAKE2B-512" cannot produce.
 */
#ifndef PQV_BLAKE2B_H
#define PQV_BLAKE2B_H

#include <stddef.h>
#include <stdint.h>

#define PQV_BLAKE2B_BLOCKBYTES 128
#define PQV_BLAKE2B_OUTBYTES 64
#define PQV_BLAKE2B_KEYBYTES 64

/* Streaming state.  The last (possibly full) block is kept in ${buf} until
 * blake2b_final, because it alone is compressed with the final flag. */
typedef struct {
    uint64_t h[8];
    uint64_t t[2];   /* 128-bit count of message bytes compressed so far */
    uint8_t buf[PQV_BLAKE2B_BLOCKBYTES];
    size_t buflen;
    size_t outlen;
} blake2b_ctx;

/*
 * blake2b_init(ctx, outlen, key, keylen): start hashing into an
 * ${outlen}-byte digest (1..64), keyed with ${keylen} bytes at ${key}
 * (0..64; ${key} may be NULL when ${keylen} is 0).  Returns 0, or -1 for
 * out-of-range lengths (the context is then unusable).
 */
int blake2b_init(blake2b_ctx *ctx, size_t outlen, const void *key, size_t keylen);

/* blake2b_update(ctx, in, inlen): absorb ${inlen} bytes at ${in}. */
void blake2b_update(blake2b_ctx *ctx, const void *in, size_t inlen);

/*
 * blake2b_final(ctx, out): write the ctx->outlen-byte digest to ${out}
 * and wipe the context.
 */
void blake2b_final(blake2b_ctx *ctx, uint8_t *out);

/*
 * blake2b(out, outlen, in, inlen, key, keylen): one-shot form of the
 * above.  Returns 0 or -1 for out-of-range lengths.
 */
int blake2b(uint8_t *out, size_t outlen, const void *in, size_t inlen,
    const void *key, size_t keylen);

#endif
