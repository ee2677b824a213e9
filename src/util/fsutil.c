/*
 * fsutil.c: file-system helpers (see fsutil.h).
 */
#include "util/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/io.h"
#include "util/util.h"

int
fsutil_write_all(int fd, const void *buf, size_t len, const char *what)
{
    const uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = io_write(fd, p, len, what);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return error_errno(what, "write", errno);
        }
        if (n == 0)
            return error_set(PQV_E_IO, what, "write made no progress");
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* read_loop(fd, buf, len, offset, what): read until ${len} bytes or end of
 * file, at ${offset} with pread, or from the current offset if it is -1. */
static ssize_t
read_loop(int fd, void *buf, size_t len, int64_t offset, const char *what)
{
    uint8_t *p = buf;
    size_t done = 0;

    while (done < len) {
        ssize_t n = offset < 0 ? read(fd, p + done, len - done)
                               : pread(fd, p + done, len - done, (off_t)((uint64_t)offset + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return error_errno(what, "read", errno);
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

ssize_t
fsutil_read_all(int fd, void *buf, size_t len, const char *what)
{
    return read_loop(fd, buf, len, -1, what);
}

ssize_t
fsutil_pread_all(int fd, void *buf, size_t len, uint64_t offset, const char *what)
{
    if (offset > INT64_MAX)
        return error_set(PQV_E_INVAL, what, "offset too large");
    return read_loop(fd, buf, len, (int64_t)offset, what);
}

int
fsutil_fsync_dirfd(int fd, const char *what)
{
    if (io_fsync(fd, what) != 0)
        return error_errno(what, "fsync directory", errno);
    return 0;
}

int
fsutil_fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

    if (fd < 0)
        return error_errno(path, "open directory", errno);
    rc = fsutil_fsync_dirfd(fd, path);
    close(fd);
    return rc;
}

void
fsutil_dirname(const char *path, char *out, size_t outlen)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        snprintf(out, outlen, ".");
    else if (slash == path)
        snprintf(out, outlen, "/");
    else
        snprintf(out, outlen, "%.*s", (int)(slash - path), path);
}

int
fsutil_mkdirs(const char *path, mode_t mode)
{
    char buf[4096], parent[4096];
    size_t n = strlen(path);
    int rc;

    if (n == 0)
        return 0;
    if (n >= sizeof(buf))
        return error_set(PQV_E_INVAL, path, "path too long");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (io_mkdirat(AT_FDCWD, buf, mode, buf) == 0) {
            /* A new directory is durable once its parent is synced. */
            fsutil_dirname(buf, parent, sizeof(parent));
            if ((rc = fsutil_fsync_dir(parent)) != 0)
                return rc;
        } else if (errno != EEXIST) {
            return error_errno(buf, "mkdir", errno);
        }
        buf[i] = c;
    }
    return 0;
}

int
fsutil_open_dirs(int rootfd, const char *root, const char *rel, int create, mode_t mode,
    int *out)
{
    char comp[256], sofar[8192], parent[8192];
    const char *p = rel;
    const int nofollow = (create & FSUTIL_FOLLOW) ? 0 : O_NOFOLLOW;
    int fd, rc;

    create &= ~FSUTIL_FOLLOW;

    if ((fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 && errno == EACCES)
        fd = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return error_errno(rel, "open directory", errno);
    while (*p != '\0') {
        const char *end = strchr(p, '/');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        int next;

        if (len == 0) {
            p++;
            continue;
        }
        if (len >= sizeof(comp) || (len <= 2 && strncmp(p, "..", len) == 0)) {
            rc = error_set(PQV_E_INVAL, rel, "invalid path component");
            goto fail;
        }
        memcpy(comp, p, len);
        comp[len] = '\0';
        /* Paths for messages (and the test build's hooks). */
        snprintf(sofar, sizeof(sofar), "%s/%.*s", root, (int)(p - rel + len), rel);
        snprintf(parent, sizeof(parent), "%s%s%.*s", root, p > rel ? "/" : "",
            p > rel ? (int)(p - rel - 1) : 0, rel);
        next = openat(fd, comp, O_RDONLY | O_DIRECTORY | nofollow | O_CLOEXEC);
        if (next < 0 && errno == EACCES)
            /* Searchable but not readable (a write-only writer's -wx
             * inbox/): a path descriptor, enough to create in it. */
            next = openat(fd, comp, O_PATH | O_DIRECTORY | nofollow | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create) {
            if (io_mkdirat(fd, comp, mode, sofar) != 0 && errno != EEXIST) {
                rc = error_errno(sofar, "mkdir", errno);
                goto fail;
            }
            /* Durable in its parent before anything is put inside. */
            if (create == FSUTIL_CREATE_SYNC && (rc = fsutil_fsync_dirfd(fd, parent)) != 0)
                goto fail;
            next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            int e = errno;
            struct stat st;
            /* Something else is in the way: a link (never followed) or a
             * file; named by its own path. */
            if (e == ELOOP || e == ENOTDIR)
                rc = error_set(PQV_E_INVAL, sofar, "%s",
                    fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)
                        ? "is a symbolic link (not followed)" : "is not a directory");
            else
                rc = error_errno(sofar, "open directory", e);
            goto fail;
        }
        close(fd);
        fd = next;
        p += len;
    }
    *out = fd;
    return 0;

fail:
    close(fd);
    return rc;
}

int
fsutil_open_regular(int dirfd, const char *name, int *out, struct stat *st)
{
    struct stat s;
    int fd, e;

    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0) {
        e = errno;
        if (e == ELOOP)
            return error_set(PQV_E_INTEGRITY, name, "is a symbolic link");
        return error_errno(name, "open", e);
    }
    if (fstat(fd, &s) != 0) {
        e = errno;
        close(fd);
        return error_errno(name, "stat", e);
    }
    if (!S_ISREG(s.st_mode)) {
        close(fd);
        return error_set(PQV_E_INTEGRITY, name, "not a regular file");
    }
    /* Back to blocking reads (a regular file never blocks anyway). */
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (st != NULL)
        *st = s;
    *out = fd;
    return 0;
}

int
fsutil_read_file_range(int dirfd, const char *name, uint64_t offset, void *buf, size_t len)
{
    ssize_t got;
    int fd, rc;

    if ((rc = fsutil_open_regular(dirfd, name, &fd, NULL)) != 0)
        return rc;
    got = fsutil_pread_all(fd, buf, len, offset, name);
    close(fd);
    if (got < 0)
        return (int)got;
    if ((size_t)got < len)
        return error_set(PQV_E_INTEGRITY, name, "shorter than expected");
    return 0;
}

int
fsutil_read_file(int dirfd, const char *name, uint8_t **buf, size_t *len, size_t maxlen)
{
    struct stat st;
    uint8_t *data;
    ssize_t got;
    int fd, rc;

    if ((rc = fsutil_open_regular(dirfd, name, &fd, &st)) != 0)
        return rc;
    if ((uint64_t)st.st_size > maxlen) {
        close(fd);
        return error_set(PQV_E_INTEGRITY, name, "too large (%lld bytes)", (long long)st.st_size);
    }
    /* One extra byte detects a file that grew since fstat. */
    if ((data = malloc((size_t)st.st_size + 1)) == NULL) {
        close(fd);
        return PQV_E_NOMEM;
    }
    got = fsutil_read_all(fd, data, (size_t)st.st_size + 1, name);
    close(fd);
    if (got < 0) {
        free(data);
        return (int)got;
    }
    if ((size_t)got > maxlen) {
        free(data);
        return error_set(PQV_E_INTEGRITY, name, "too large");
    }
    *buf = data;
    *len = (size_t)got;
    return 0;
}
