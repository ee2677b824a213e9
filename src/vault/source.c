/*
 * source.c: reading a file being added, consistently.  A file may change,
 * shrink, grow or be replaced while it is read (a log being written, an
 * editor saving, a hostile local user); the vault must never store a mix of
 * two states.  So each file is read through one descriptor, opened without
 * following links and only if it is a regular file; its fstat at open is
 * the state stored (size, mode, times); after the last byte is read, the
 * descriptor's fstat and the path's lstat must still show that state
 * (size, mtime, ctime, inode, device), else the read is reported as changed
 * and the caller reads it again or refuses it ("file changed as we read
 * it", as tar and restic say).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pqvault/vault.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "util/util.h"
#include "vault/source.h"

/* parent(dirs, rel, dir, base): the directory of ${rel} (held by ${dirs},
 * borrowed) and its last component. */
static int
parent(struct fsutil_dirs *dirs, const char *rel, int *dir, const char **base)
{
    char d[PQV_NAME_MAX + 1];
    const char *slash = strrchr(rel, '/');

    *base = slash != NULL ? slash + 1 : rel;
    snprintf(d, sizeof(d), "%.*s", slash != NULL ? (int)(slash - rel) : 0, rel);
    return fsutil_dirs_open(dirs, d, dir);
}

int
source_open_node(struct fsutil_dirs *dirs, const char *rel, const char *what,
    const struct stat *st, int *fd)
{
    struct stat now;
    const char *base;
    int dir, rc;

    *fd = -1;
    if ((rc = parent(dirs, rel, &dir, &base)) != 0)
        return rc == PQV_E_INVAL ? error_set(PQV_E_IO, what, "a directory on its path changed")
                                 : rc;
    *fd = openat(dir, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    rc = *fd < 0 ? error_errno(what, "open", errno) : 0;
    if (rc == 0 && (fstat(*fd, &now) != 0 || (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT) ||
            now.st_ino != st->st_ino || now.st_dev != st->st_dev)) {
        close(*fd);
        *fd = -1;
        rc = error_set(PQV_E_IO, what, "changed while it was being read");
    }
    return rc;
}

int
source_open(struct source *src, struct fsutil_dirs *dirs, const char *rel, int follow,
    const char *what)
{
    const char *base;
    int dir, fd, rc;

    src->fd = -1;
    if ((rc = parent(dirs, rel, &dir, &base)) != 0)
        return rc == PQV_E_INVAL ? error_set(PQV_E_IO, what, "a directory on its path changed")
                                 : rc;
    /* O_NONBLOCK: a FIFO put in its place must not hang the add. */
    fd = openat(dir, base, O_RDONLY | (follow ? 0 : O_NOFOLLOW) | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP)
            return error_set(PQV_E_IO, what, "became a symbolic link");
        return error_errno(what, "open", e);
    }
    if (fstat(fd, &src->st) != 0) {
        rc = error_errno(what, "stat", errno);
        close(fd);
        return rc;
    }
    if (!S_ISREG(src->st.st_mode)) {
        close(fd);
        return error_set(PQV_E_IO, what, "is no longer a regular file");
    }
    /* Back to blocking reads (no other status flag was set at open). */
    (void)fcntl(fd, F_SETFL, 0);
    src->fd = fd;
    return 0;
}

int
source_read(struct source *src, uint64_t offset, uint8_t *buf, size_t len, const char *what)
{
    ssize_t got = io_source_pread(src->fd, buf, len, offset, what);

    if (got < 0)
        return (int)got;
    if ((size_t)got < len)
        return SOURCE_CHANGED; /* shrank while it was being read */
    return 0;
}

/* same_state(a, b): what tells a file's state apart. */
static int
same_state(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
        a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
        a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int
source_unchanged(struct source *src, struct fsutil_dirs *dirs, const char *rel, int follow,
    const char *what)
{
    struct stat now, named;
    const char *base;
    int dir, rc;

    if (fstat(src->fd, &now) != 0)
        return error_errno(what, "stat", errno);
    if (!same_state(&src->st, &now))
        return SOURCE_CHANGED;
    /* Replaced by another file (mv over it) while we read the old one. */
    if ((rc = parent(dirs, rel, &dir, &base)) != 0)
        return SOURCE_CHANGED;
    rc = fstatat(dir, base, &named, follow ? 0 : AT_SYMLINK_NOFOLLOW);
    if (rc != 0 || !same_state(&src->st, &named))
        return SOURCE_CHANGED;
    return 0;
}

void
source_close(struct source *src)
{
    if (src->fd >= 0)
        close(src->fd);
    src->fd = -1;
}
