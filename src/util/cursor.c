/*
 * cursor.c: bounds-checked reading of byte strings (see cursor.h).
 */
#include "util/cursor.h"

#include "util/util.h"

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
