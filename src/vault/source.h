/*
 * vault/source.h: a file being added, read through one descriptor
 * (source.c).  No vault types: file-system helpers only.
 */
#ifndef PQV_VAULT_SOURCE_H
#define PQV_VAULT_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util/fsutil.h"

/* A file being added, read through one descriptor. */
struct source {
    int fd;
    struct stat st;              /* its state at open: what is stored */
};
/* Returned (positive) when the file changed while it was read. */
#define SOURCE_CHANGED 1
/* The directories of the files are reached through ${dirs}, the walk's
 * directories held open below its root (fsutil_dirs): one openat per
 * file, not one per component. */
/* source_open_node(dirs, rel, what, st, fd): a FIFO or device node
 * ${rel} below the root as an O_PATH descriptor (never opened for I/O:
 * opening a device can act on it), without following links; PQV_E_IO if it
 * is no longer the node ${st} describes (its type and inode). */
int source_open_node(struct fsutil_dirs *dirs, const char *rel, const char *what,
    const struct stat *st, int *fd);
/* source_open(src, dirs, rel, follow, what): open ${rel} below the root
 * for reading: a regular file only, no link followed unless ${follow}
 * (add -L). */
int source_open(struct source *src, struct fsutil_dirs *dirs, const char *rel, int follow,
    const char *what);
/* source_read(src, offset, buf, len, what): exactly ${len} bytes at
 * ${offset}, or SOURCE_CHANGED if the file is shorter now. */
int source_read(struct source *src, uint64_t offset, uint8_t *buf, size_t len, const char *what);
/* source_unchanged(src, dirs, rel, follow, what): 0 if the descriptor and
 * the path still show the state of source_open, else SOURCE_CHANGED. */
int source_unchanged(struct source *src, struct fsutil_dirs *dirs, const char *rel, int follow,
    const char *what);
void source_close(struct source *src);

#endif
