/*
 * src/cli/mount_fuse_read.c: the reads of `pqvault mount`'s FUSE session:
 * opening a file, reading and seeking it, each worker's locked read buffer
 * (split from mount_fuse.c; names and listings are mount_fuse_names.c's).
 * Built empty without libfuse3.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "mount_fuse.h"
#include "pqvault/mount.h"

#ifdef PQV_HAVE_FUSE


void
mount_fuse_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    pqv_mount_file *f;
    int rc;

    if ((fi->flags & O_ACCMODE) != O_RDONLY) {
        fuse_reply_err(req, EROFS);
        return;
    }
    if (mount_fuse_ctx.no_open) {
        /* A file is opened when read (op_read); the kernel opens every
         * file itself from now on ("ENOSYS": success, never asked again;
         * the mount is read-only, so the VFS refuses an open for writing
         * before it would reach us). */
        struct pqv_mount_attr a;
        if ((rc = pqv_mount_getattr(mount_fuse_ctx.m, ino, &a)) != 0)
            fuse_reply_err(req, -rc);
        else if ((a.mode & S_IFMT) != S_IFREG)
            fuse_reply_err(req, (a.mode & S_IFMT) == S_IFDIR ? EISDIR : EINVAL);
        else
            fuse_reply_err(req, ENOSYS);
        return;
    }
    if ((rc = pqv_mount_file_open(mount_fuse_ctx.m, ino, &f)) != 0) {
        fuse_reply_err(req, -rc);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)f;
    fi->keep_cache = 1; /* the data never changes while mounted */
    if (fuse_reply_open(req, fi) != 0)
        pqv_mount_file_close(f); /* the open was interrupted */
}

/* file_of(ino, fi, held): the open file a request is on: the one OPEN
 * gave, or (zero-message opens: no handle) the one the view keeps open
 * for ${ino}, to give back with pqv_mount_file_put(*held); 0 or an errno. */
static int
file_of(fuse_ino_t ino, const struct fuse_file_info *fi, pqv_mount_file **f,
    pqv_mount_file **held)
{
    int rc;

    *held = NULL;
    if (fi->fh != 0) {
        *f = (pqv_mount_file *)(uintptr_t)fi->fh;
        return 0;
    }
    if ((rc = pqv_mount_file_get(mount_fuse_ctx.m, ino, held)) != 0)
        return -rc;
    *f = *held;
    return 0;
}

/* Each FUSE worker's read buffer: kept (a malloc of up to 1 MiB per READ
 * was a twelfth of the server's user time), locked (it holds plaintext
 * between the cache and the reply), wiped after each reply, and unlocked
 * and freed when the worker ends. */
struct read_buf {
    uint8_t *p;
    size_t cap;
};

static pthread_key_t g_read_buf_key;
static pthread_once_t g_read_buf_once = PTHREAD_ONCE_INIT;
static int g_read_buf_ok;

static void
read_buf_free(void *arg)
{
    struct read_buf *b = arg;

    if (b == NULL)
        return;
    if (b->p != NULL) {
        (void)munlock(b->p, b->cap);
        free(b->p);
    }
    free(b);
}

static void
read_buf_init(void)
{
    g_read_buf_ok = pthread_key_create(&g_read_buf_key, read_buf_free) == 0;
}

/* read_buf_get(size): this worker's buffer, at least ${size} bytes; NULL
 * if out of memory. */
static uint8_t *
read_buf_get(size_t size)
{
    struct read_buf *b;

    (void)pthread_once(&g_read_buf_once, read_buf_init);
    if (!g_read_buf_ok)
        return NULL;
    if ((b = pthread_getspecific(g_read_buf_key)) == NULL) {
        if ((b = calloc(1, sizeof(*b))) == NULL)
            return NULL;
        if (pthread_setspecific(g_read_buf_key, b) != 0) {
            free(b);
            return NULL;
        }
    }
    if (b->cap < size) {
        size_t cap = size < (128u << 10) ? 128u << 10 : size;
        uint8_t *p = malloc(cap);
        if (p == NULL)
            return NULL;
        if (b->p != NULL) {
            (void)munlock(b->p, b->cap);
            free(b->p);
        }
        (void)mlock(p, cap); /* (first: it faults the pages in at once) */
        memset(p, 0, cap);
        b->p = p;
        b->cap = cap;
    }
    return b->p;
}

void
mount_fuse_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    pqv_mount_file *f, *held;
    uint8_t *buf;
    size_t got = 0;
    uint64_t reader = (uint64_t)fuse_req_ctx(req)->pid, drop_off = 0, drop_len = 0;
    int rc, drop;

    if (off < 0) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    if (size > (16u << 20))
        size = 16u << 20;
    if ((rc = file_of(ino, fi, &f, &held)) != 0) {
        fuse_reply_err(req, rc);
        return;
    }
    if ((buf = read_buf_get(size > 0 ? size : 1)) == NULL) {
        pqv_mount_file_put(held);
        fuse_reply_err(req, ENOMEM);
        return;
    }
    /* (Readers told apart by process: a file kept open is shared.) */
    rc = pqv_mount_read_as(f, reader, buf, size, (uint64_t)off, &got);
    drop = rc == 0 && pqv_mount_read_behind(f, reader, &drop_off, &drop_len);
    pqv_mount_file_put(held);
    if (rc != 0)
        fuse_reply_err(req, -rc);
    else
        fuse_reply_buf(req, (const char *)buf, got);
    OPENSSL_cleanse(buf, got);
    /* A large file streams through the page cache instead of filling it
     * (docs/DESIGN.md): what its reader left well behind is dropped, after
     * the reply (its pages were filled and unlocked long before). */
    if (drop)
        (void)mount_fuse_inval_inode(ino, drop_off, drop_len);
}

void
mount_fuse_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    pqv_mount_file_close((pqv_mount_file *)(uintptr_t)fi->fh); /* (0: none) */
    fuse_reply_err(req, 0);
}

void
mount_fuse_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
    pqv_mount_file *f, *held;
    uint64_t to;
    int rc;

    if (off < 0) {
        fuse_reply_err(req, ENXIO);
        return;
    }
    if ((rc = file_of(ino, fi, &f, &held)) != 0) {
        fuse_reply_err(req, rc);
        return;
    }
    rc = pqv_mount_seek(f, (uint64_t)off, whence, &to);
    pqv_mount_file_put(held);
    if (rc != 0)
        fuse_reply_err(req, -rc);
    else
        fuse_reply_lseek(req, (off_t)to);
}
#endif
