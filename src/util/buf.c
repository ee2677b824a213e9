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

void
cursor_init(struct cursor *c, const void *p, size_t n)
{
    c->p = p;
    c->end = c->p + n;
    c->bad = 0;
}

const uint8_t *
cursor_take(struct cursor *c, size_t n)
{
    const uint8_t *q = c->p;

    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return NULL;
    }
    c->p += n;
    return q;
}

uint8_t
cursor_u8(struct cursor *c)
{
    const uint8_t *q = cursor_take(c, 1);

    return q != NULL ? q[0] : 0;
}

uint32_t
cursor_be32(struct cursor *c)
{
    const uint8_t *q = cursor_take(c, 4);

    return q != NULL ? util_load_be32(q) : 0;
}

uint64_t
cursor_be64(struct cursor *c)
{
    const uint8_t *q = cursor_take(c, 8);

    return q != NULL ? util_load_be64(q) : 0;
}

uint64_t
cursor_varint(struct cursor *c)
{
    uint64_t v = 0;

    for (unsigned shift = 0, i = 0; i < 10; i++, shift += 7) {
        const uint8_t *q = cursor_take(c, 1);
        if (q == NULL)
            return 0;
        /* The tenth byte may hold only the top bit of a 64-bit value. */
        if (i == 9 && (q[0] & 0xfe) != 0)
            break;
        v |= (uint64_t)(q[0] & 0x7f) << shift;
        if ((q[0] & 0x80) == 0) {
            /* Minimal: no final zero group after the first byte. */
            if (i > 0 && q[0] == 0)
                break;
            return v;
        }
    }
    c->bad = 1;
    return 0;
}

int64_t
cursor_zigzag(struct cursor *c)
{
    uint64_t v = cursor_varint(c);

    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

uint64_t
cursor_varint_max(struct cursor *c, uint64_t max)
{
    uint64_t v = cursor_varint(c);

    if (v > max) {
        c->bad = 1;
        return 0;
    }
    return v;
}

size_t
cursor_left(const struct cursor *c)
{
    return c->bad ? 0 : (size_t)(c->end - c->p);
}
