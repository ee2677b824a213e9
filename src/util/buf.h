/*
 * buf.h: building and reading byte strings: a growable output buffer and a
 * bounds-checked input cursor, with fixed-width big-endian integers and
 * LEB128 varints (docs/FORMAT.md section "Format 2").  Errors are sticky:
 * a write that cannot allocate sets buf->nomem, a read past the end or a
 * malformed varint sets cursor->bad, and every later call does nothing, so
 * a codec checks once at the end.
 */
#ifndef PQV_BUF_H
#define PQV_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
    uint8_t *p;
    size_t len, cap;
    int nomem;
};

/* buf_reserve(b, n): room for ${n} more bytes; a pointer to them or NULL. */
uint8_t *buf_reserve(struct buf *b, size_t n);
void buf_bytes(struct buf *b, const void *p, size_t n);
void buf_u8(struct buf *b, uint8_t v);
void buf_be32(struct buf *b, uint32_t v);
void buf_be64(struct buf *b, uint64_t v);
/* buf_varint(b, v): unsigned LEB128; buf_zigzag(b, v): signed. */
void buf_varint(struct buf *b, uint64_t v);
void buf_zigzag(struct buf *b, int64_t v);
/* buf_blob(b, p, n): varint length then the bytes. */
void buf_blob(struct buf *b, const void *p, size_t n);
/* buf_wipe_free(b): wipe (it may hold secrets) and free. */
void buf_wipe_free(struct buf *b);

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
