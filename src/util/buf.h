/*
 * buf.h: building byte strings: a growable output buffer with fixed-width
 * big-endian integers and LEB128 varints (docs/FORMAT.md, "Format 2"); the
 * reading side is util/cursor.h.  Errors are sticky: a write that cannot
 * allocate sets buf->nomem and every later call does nothing, so a codec
 * checks once at the end.
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

#include "util/cursor.h"

#endif
