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

/* open_component(fd, comp, sofar, parent, create, nofollow, mode, out): the
 * directory ${comp} in ${fd}, created if missing and ${create}; ${sofar}
 * (its path) and ${parent} name it in messages. */
static int
open_component(int fd, const char *comp, const char *sofar, const char *parent, int create,
    int nofollow, mode_t mode, int *out)
{
    int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | nofollow | O_CLOEXEC);
    int rc;

    if (next < 0 && errno == EACCES)
        /* Searchable but not readable (a write-only writer's -wx
         * inbox/): a path descriptor, enough to create in it. */
        next = openat(fd, comp, O_PATH | O_DIRECTORY | nofollow | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create) {
        if (io_mkdirat(fd, comp, mode, sofar) != 0 && errno != EEXIST)
            return error_errno(sofar, "mkdir", errno);
        /* Durable in its parent before anything is put inside. */
        if (create == FSUTIL_CREATE_SYNC && (rc = fsutil_fsync_dirfd(fd, parent)) != 0)
            return rc;
        next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0) {
        int e = errno;
        struct stat st;
        /* Something else is in the way: a link (never followed) or a
         * file; named by its own path. */
        if (e == ELOOP || e == ENOTDIR)
            return error_set(PQV_E_INVAL, sofar, "%s",
                fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)
                    ? "is a symbolic link (not followed)" : "is not a directory");
        return error_errno(sofar, "open directory", e);
    }
    *out = next;
    return 0;
}

/* walk_from(fd, root, rel, from, create, mode, owned, out): the components
 * of ${rel} from offset ${from} on, opened below ${fd} (the directory
 * ${rel}[0, from) names); ${owned}: whether ${fd} is closed on the way. */
static int
walk_from(int fd, const char *root, const char *rel, size_t from, int create, mode_t mode,
    int owned, int *out)
{
    char comp[256], sofar[8192], parent[8192];
    const int nofollow = (create & FSUTIL_FOLLOW) ? 0 : O_NOFOLLOW;
    const char *p = rel + from;
    int rc;

    create &= ~FSUTIL_FOLLOW;
    while (*p != '\0') {
        const char *end = strchr(p, '/');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        int next = -1;

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
        if ((rc = open_component(fd, comp, sofar, parent, create, nofollow, mode, &next)) != 0)
            goto fail;
        if (owned)
            close(fd);
        fd = next;
        owned = 1;
        p += len;
    }
    if (!owned && (fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
        return error_errno(rel, "open directory", errno);
    *out = fd;
    return 0;

fail:
    if (owned)
        close(fd);
    return rc;
}

int
fsutil_open_dirs(int rootfd, const char *root, const char *rel, int create, mode_t mode,
    int *out)
{
    int fd;

    if ((fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 && errno == EACCES)
        fd = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return error_errno(rel, "open directory", errno);
    return walk_from(fd, root, rel, 0, create, mode, 1, out);
}

void
fsutil_dirs_init(struct fsutil_dirs *c, int rootfd, const char *root, int create, mode_t mode)
{
    memset(c, 0, sizeof(*c));
    c->rootfd = rootfd;
    c->root = root;
    c->create = create;
    c->mode = mode;
    c->deep = -1;
}

/* dirs_drop(c, depth): keep only the first ${depth} directories held. */
static void
dirs_drop(struct fsutil_dirs *c, size_t depth)
{
    while (c->depth > depth)
        close(c->fd[--c->depth]);
    c->path[c->depth > 0 ? c->end[c->depth - 1] : 0] = '\0';
    if (c->deep >= 0)
        close(c->deep);
    c->deep = -1;
}

void
fsutil_dirs_close(struct fsutil_dirs *c)
{
    dirs_drop(c, 0);
}

int
fsutil_dirs_open(struct fsutil_dirs *c, const char *rel, int *out)
{
    size_t keep = 0, len = strlen(rel), at;
    int rc;

    /* The directories already held that ${rel} begins with. */
    while (keep < c->depth && len >= c->end[keep] &&
        memcmp(rel, c->path, c->end[keep]) == 0 &&
        (rel[c->end[keep]] == '/' || rel[c->end[keep]] == '\0'))
        keep++;
    dirs_drop(c, keep);
    at = keep > 0 ? c->end[keep - 1] : 0;
    /* The rest one component at a time, each held while there is room. */
    while (rel[at] == '/')
        at++;
    while (rel[at] != '\0' && c->depth < FSUTIL_DIRS_DEPTH) {
        const char *slash = strchr(rel + at, '/');
        size_t end = slash != NULL ? (size_t)(slash - rel) : len;
        int fd;

        if (end >= sizeof(c->path))
            return error_set(PQV_E_INVAL, rel, "path too long");
        memcpy(c->path, rel, end);
        c->path[end] = '\0';
        int held = c->depth > 0 ? c->fd[c->depth - 1] : c->rootfd;
        if ((rc = walk_from(held, c->root, c->path, at, c->create, c->mode, 0, &fd)) != 0) {
            c->path[c->depth > 0 ? c->end[c->depth - 1] : 0] = '\0';
            return rc;
        }
        c->fd[c->depth] = fd;
        c->end[c->depth++] = end;
        at = end;
        while (rel[at] == '/')
            at++;
    }
    if (rel[at] != '\0') {
        /* Deeper than what is held: opened for this call only. */
        int held = c->depth > 0 ? c->fd[c->depth - 1] : c->rootfd;
        if ((rc = walk_from(held, c->root, rel, at, c->create, c->mode, 0, &c->deep)) != 0) {
            c->deep = -1;
            return rc;
        }
        *out = c->deep;
        return 0;
    }
    *out = c->depth > 0 ? c->fd[c->depth - 1] : c->rootfd;
    return 0;
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
