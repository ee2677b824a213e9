/*
 * cursor.h: reading byte strings, bounds-checked: fixed-width big-endian
 * integers and minimal LEB128 varints (docs/FORMAT.md, "Format 2").
 * Errors are sticky: a read past the end or a malformed varint sets
 * cursor->bad and every later read returns 0/NULL, so a codec checks once
 * at the end.
 */
#ifndef PQV_CURSOR_H
#define PQV_CURSOR_H

#include <stddef.h>
#include <stdint.h>

struct cursor {
    const uint8_t *p, *end;
    int bad;
};

void cursor_init(struct cursor *c, const void *p, size_t n);
/* cursor_take(c, n): the next ${n} bytes, or NULL (and bad). */
const uint8_t *cursor_take(struct cursor *c, size_t n);
uint8_t cursor_u8(struct cursor *c);
uint32_t cursor_be32(struct cursor *c);
uint64_t cursor_be64(struct cursor *c);
/* cursor_varint(c): a minimal LEB128 of at most 10 bytes (else bad). */
uint64_t cursor_varint(struct cursor *c);
int64_t cursor_zigzag(struct cursor *c);
/* cursor_varint_max(c, max): a varint no larger than ${max} (else bad). */
uint64_t cursor_varint_max(struct cursor *c, uint64_t max);
/* cursor_left(c): bytes left (0 once bad). */
size_t cursor_left(const struct cursor *c);

#endif
