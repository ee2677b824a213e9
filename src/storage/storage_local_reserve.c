/*
 * storage_local_reserve.c: the local backend's reserve (storage/
 * storage_local_internal.h; docs/DESIGN.md "A full disk"): <dir>/reserve,
 * room kept aside for rm, forget and gc on a full disk: allocated zeros,
 * never listed, never read; made in place (a killed make leaves a short
 * one, topped up next time) and released by unlink.  Whatever else is at
 * its name (a link, a directory) is neither followed nor touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "storage/storage_local_internal.h"
#include "util/durable.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "util/util.h"

/* reserve_held(st): the bytes a reserve of status ${st} holds allocated
 * (a sparse one holds fewer than its length). */
static uint64_t
reserve_held(const struct stat *st)
{
    uint64_t blocks = (uint64_t)st->st_blocks * 512;

    return blocks < (uint64_t)st->st_size ? blocks : (uint64_t)st->st_size;
}

static int
reserve_stat(struct local_storage *ls, struct stat *st)
{
    if (fstatat(ls->rootfd, RESERVE_NAME, st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? PQV_E_NOTFOUND : error_errno(RESERVE_NAME, "stat", errno);
    if (!S_ISREG(st->st_mode))
        return error_set(PQV_E_INTEGRITY, RESERVE_NAME, "not a regular file (%s): ignored",
            S_ISLNK(st->st_mode) ? "a symbolic link" : S_ISDIR(st->st_mode) ? "a directory"
                                                                            : "a special file");
    return 0;
}

/* reserve_fill(fd, bytes, what): ${bytes} allocated in ${fd}: fallocate,
 * else zeros written where the file system has no fallocate. */
static int
reserve_fill(int fd, uint64_t have, uint64_t bytes, const char *what)
{
    static const uint8_t zeros[65536];

    if (io_fallocate(fd, bytes, what) == 0)
        return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return error_errno(what, "fallocate", errno);
    for (uint64_t off = have; off < bytes;) {
        size_t n = bytes - off < sizeof(zeros) ? (size_t)(bytes - off) : sizeof(zeros);
        ssize_t w = io_pwrite(fd, zeros, n, off, what);
        if (w < 0)
            return error_errno(what, "write", errno);
        if (w == 0)
            return error_set(PQV_E_NOSPACE, what, "no space left on device");
        off += (uint64_t)w;
    }
    return 0;
}

int
storage_local_reserve(pqv_storage *s, int op, uint64_t bytes, uint64_t *have)
{
    struct local_storage *ls = (struct local_storage *)s;
    char what[2 * NAME_MAX_LEN + 4096];
    struct stat st;
    int rc, fd;

    storage_local_path(ls, RESERVE_NAME, what);
    if ((fcntl(ls->rootfd, F_GETFL) & O_PATH) != 0)
        return error_set(PQV_E_UNSUPPORTED, what, "not the vault owner's view (no reserve)");
    if (op == PQV_RESERVE_STAT) {
        if ((rc = reserve_stat(ls, &st)) == 0 && have != NULL)
            *have = reserve_held(&st);
        return rc;
    }
    if (op == PQV_RESERVE_RELEASE) {
        if ((rc = reserve_stat(ls, &st)) != 0)
            return rc;
        if (io_unlinkat(ls->rootfd, RESERVE_NAME, 0, what) != 0)
            return errno == ENOENT ? PQV_E_NOTFOUND : error_errno(what, "unlink", errno);
        return fsutil_fsync_dirfd(ls->rootfd, ls->root);
    }
    if (op != PQV_RESERVE_MAKE)
        return PQV_E_INVAL;
    rc = reserve_stat(ls, &st);
    if (rc == 0 && reserve_held(&st) >= bytes)
        return 0; /* (one larger than asked is left as it is) */
    if (rc != 0 && rc != PQV_E_NOTFOUND)
        return rc;
    /* Never through a link, never blocking on a FIFO put there meanwhile. */
    if ((fd = io_openat(ls->rootfd, RESERVE_NAME, O_WRONLY | O_CREAT | O_NONBLOCK, 0600,
             what)) < 0) {
        int e = errno;
        if (e == ELOOP || e == EISDIR || e == ENXIO)
            return error_set(PQV_E_INTEGRITY, RESERVE_NAME, "not a regular file: ignored");
        return error_errno(what, "create", e);
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return error_set(PQV_E_INTEGRITY, RESERVE_NAME, "not a regular file: ignored");
    }
    if ((rc = reserve_fill(fd, reserve_held(&st), bytes, what)) == 0 && io_fsync(fd, what) != 0)
        rc = error_errno(what, "fsync", errno);
    close(fd);
    if (rc != 0) {
        /* Not the whole reserve: none (what was allocated is the user's). */
        (void)io_unlinkat(ls->rootfd, RESERVE_NAME, 0, what);
        (void)fsutil_fsync_dirfd(ls->rootfd, ls->root);
        return rc;
    }
    if (have != NULL)
        *have = bytes;
    return fsutil_fsync_dirfd(ls->rootfd, ls->root);
}
