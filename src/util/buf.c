/*
 * buf.c: output buffers and input cursors (see buf.h).
 */
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

uint8_t *
buf_reserve(struct buf *b, size_t n)
{
    if (b->nomem)
        return NULL;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        uint8_t *p;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2) {
                b->nomem = 1;
                return NULL;
            }
            cap *= 2;
        }
        /* A fresh allocation, the old one wiped: a buffer may hold keys. */
        if ((p = malloc(cap)) == NULL) {
            b->nomem = 1;
            return NULL;
        }
        if (b->len > 0)
            memcpy(p, b->p, b->len);
        util_wipe(b->p, b->cap);
        free(b->p);
        b->p = p;
        b->cap = cap;
    }
    return b->p + b->len;
}

void
buf_bytes(struct buf *b, const void *p, size_t n)
{
    uint8_t *q = buf_reserve(b, n);

    if (q != NULL && n > 0) {
        memcpy(q, p, n);
        b->len += n;
    }
}

void
buf_u8(struct buf *b, uint8_t v)
{
    buf_bytes(b, &v, 1);
}

void
buf_be32(struct buf *b, uint32_t v)
{
    uint8_t t[4];

    util_store_be32(t, v);
    buf_bytes(b, t, 4);
}

void
buf_be64(struct buf *b, uint64_t v)
{
    uint8_t t[8];

    util_store_be64(t, v);
    buf_bytes(b, t, 8);
}

void
buf_varint(struct buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;

    do {
        t[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        v >>= 7;
    } while (v != 0);
    buf_bytes(b, t, n);
}

void
buf_zigzag(struct buf *b, int64_t v)
{
    buf_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void
buf_blob(struct buf *b, const void *p, size_t n)
{
    buf_varint(b, n);
    buf_bytes(b, p, n);
}

void
buf_wipe_free(struct buf *b)
{
    util_wipe(b->p, b->cap);
    free(b->p);
    memset(b, 0, sizeof(*b));
}

