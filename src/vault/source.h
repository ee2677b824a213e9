/*
 * vault/source.h: a file being added, read through one descriptor
 * (source.c).  No vault types: file-system helpers only.
 */
#ifndef PQV_VAULT_SOURCE_H
#define PQV_VAULT_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* A file being added, read through one descriptor. */
struct source {
    int fd;
    struct stat st;              /* its state at open: what is stored */
};
/* Returned (positive) when the file changed while it was read. */
#define SOURCE_CHANGED 1
/* source_open_node(rootfd, root, rel, what, st, fd): a FIFO or device node
 * ${rel} below ${rootfd} as an O_PATH descriptor (never opened for I/O:
 * opening a device can act on it), without following links; PQV_E_IO if it
 * is no longer the node ${st} describes (its type and inode). */
int source_open_node(int rootfd, const char *root, const char *rel, const char *what,
    const struct stat *st, int *fd);
/* source_open(src, rootfd, root, rel, follow, what): open ${rel} below
 * ${rootfd} (path ${root}) for reading: a regular file only, no link
 * followed unless ${follow} (add -L). */
int source_open(struct source *src, int rootfd, const char *root, const char *rel, int follow,
    const char *what);
/* source_read(src, offset, buf, len, what): exactly ${len} bytes at
 * ${offset}, or SOURCE_CHANGED if the file is shorter now. */
int source_read(struct source *src, uint64_t offset, uint8_t *buf, size_t len, const char *what);
/* source_unchanged(src, rootfd, root, rel, follow, what): 0 if the
 * descriptor and the path still show the state of source_open, else
 * SOURCE_CHANGED. */
int source_unchanged(struct source *src, int rootfd, const char *root, const char *rel,
    int follow, const char *what);
void source_close(struct source *src);

#endif
