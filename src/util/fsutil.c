/*
 * fsutil.c: file-system helpers (see fsutil.h).
 */
#include "util/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

int (*io_fault_hook)(const char *op, const char *path);

/*
 * TEST-ONLY hooks for the crash and fault tests of the real binary
 * (tests/cli/crash_kill.sh, tests/cli/faults.sh).  The environment is read
 * once, at start-up; when neither variable is set they cost one branch per
 * call and change nothing.
 *
 *   PQVAULT_TEST_KILL_AT=N      the N-th durability call of the process
 *                               (fsync, rename, unlink, mkdir, rmdir, or an
 *                               open that creates) raises SIGKILL on the
 *                               process just before it is made;
 *   PQVAULT_TEST_FAULT=op:N:err the N-th call of ${op} (open, write, fsync,
 *                               rename, unlink, mkdir, rmdir, or any) fails
 *                               with ${err}: EIO, ENOSPC, EDQUOT, a number,
 *                               or "short" (that write is cut short and
 *                               every later write fails with ENOSPC, like a
 *                               disk filling up); "op:N+:err" fails every
 *                               call of ${op} from the N-th on.
 */
static int test_hooks;                  /* either variable set */
static unsigned long test_kill_at;
static char test_fault_op[16];
static unsigned long test_fault_n;
static int test_fault_persistent, test_fault_err;
static unsigned long test_kill_count, test_fault_count;
static int test_fault_full;             /* after a "short" write */

__attribute__((constructor)) static void
read_test_hooks(void)
{
    const char *k = getenv("PQVAULT_TEST_KILL_AT");
    const char *f = getenv("PQVAULT_TEST_FAULT");
    char buf[64], *n, *err, *end;

    if (k != NULL && *k != '\0') {
        test_kill_at = strtoul(k, NULL, 10);
        test_hooks = test_kill_at > 0;
    }
    if (f == NULL || snprintf(buf, sizeof(buf), "%s", f) >= (int)sizeof(buf))
        return;
    if ((n = strchr(buf, ':')) == NULL || (err = strchr(n + 1, ':')) == NULL)
        return;
    *n++ = '\0';
    *err++ = '\0';
    snprintf(test_fault_op, sizeof(test_fault_op), "%.15s", buf);
    test_fault_n = strtoul(n, &end, 10);
    test_fault_persistent = *end == '+';
    if (strcmp(err, "EIO") == 0)
        test_fault_err = EIO;
    else if (strcmp(err, "ENOSPC") == 0)
        test_fault_err = ENOSPC;
    else if (strcmp(err, "EDQUOT") == 0)
        test_fault_err = EDQUOT;
    else if (strcmp(err, "short") == 0)
        test_fault_err = IO_FAULT_SHORT;
    else
        test_fault_err = atoi(err);
    if (test_fault_n > 0 && test_fault_err != 0)
        test_hooks = 1;
}

static int
test_hook(const char *op)
{
    if (test_kill_at > 0 && strcmp(op, "write") != 0 &&
        __atomic_add_fetch(&test_kill_count, 1, __ATOMIC_SEQ_CST) == test_kill_at)
        raise(SIGKILL);
    if (test_fault_n == 0)
        return 0;
    if (strcmp(op, "write") == 0 && __atomic_load_n(&test_fault_full, __ATOMIC_SEQ_CST))
        return ENOSPC;
    if (strcmp(test_fault_op, "any") != 0 && strcmp(test_fault_op, op) != 0)
        return 0;
    unsigned long c = __atomic_add_fetch(&test_fault_count, 1, __ATOMIC_SEQ_CST);
    if (c == test_fault_n || (test_fault_persistent && c > test_fault_n)) {
        if (test_fault_err == IO_FAULT_SHORT) {
            if (strcmp(op, "write") != 0)
                return EIO;
            __atomic_store_n(&test_fault_full, 1, __ATOMIC_SEQ_CST);
        }
        return test_fault_err;
    }
    return 0;
}

static int
fault(const char *op, const char *path)
{
    int e;

    if (test_hooks && (e = test_hook(op)) != 0) {
        if (e != IO_FAULT_SHORT)
            errno = e;
        return e;
    }
    if (io_fault_hook == NULL || (e = io_fault_hook(op, path)) == 0)
        return 0;
    if (e != IO_FAULT_SHORT)
        errno = e;
    return e;
}

int
io_open(const char *path, int flags, mode_t mode)
{
    if ((flags & O_CREAT) && fault("open", path))
        return -1;
    return open(path, flags | O_CLOEXEC, mode);
}

ssize_t
io_write(int fd, const void *buf, size_t len, const char *path)
{
    int e = fault("write", path);

    if (e == IO_FAULT_SHORT)
        return write(fd, buf, len > 1 ? len / 2 : len);
    if (e != 0)
        return -1;
    return write(fd, buf, len);
}

int
io_fsync(int fd, const char *path)
{
    if (fault("fsync", path))
        return -1;
    return fsync(fd);
}

int
io_rename(const char *from, const char *to)
{
    if (fault("rename", to))
        return -1;
    return rename(from, to);
}

int
io_rename_noreplace(const char *from, const char *to)
{
    if (fault("rename", to))
        return -1;
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int
io_link(const char *from, const char *to)
{
    if (fault("rename", to))
        return -1;
    return link(from, to);
}

int
io_unlink(const char *path)
{
    if (fault("unlink", path))
        return -1;
    return unlink(path);
}

int
io_mkdir(const char *path, mode_t mode)
{
    if (fault("mkdir", path))
        return -1;
    return mkdir(path, mode);
}

int
io_rmdir(const char *path)
{
    if (fault("rmdir", path))
        return -1;
    return rmdir(path);
}

int
fsutil_write_all(int fd, const void *buf, size_t len, const char *path)
{
    const uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = io_write(fd, p, len, path);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            return error_errno(path, "write", e);
        }
        if (n == 0)
            return error_set(PQV_E_IO, path, "write made no progress");
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

ssize_t
fsutil_read_all(int fd, void *buf, size_t len, const char *path)
{
    uint8_t *p = buf;
    size_t done = 0;

    while (done < len) {
        ssize_t n = read(fd, p + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            return error_errno(path, "read", e);
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

int
fsutil_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int e;

    if (fd < 0) {
        e = errno;
        return error_errno(dir, "open directory", e);
    }
    if (io_fsync(fd, dir) != 0) {
        e = errno;
        close(fd);
        return error_errno(dir, "fsync directory", e);
    }
    close(fd);
    return 0;
}

int
fsutil_temp_name(char *out, size_t outlen, const char *dir, const char *prefix)
{
    uint8_t r[8];
    char hex[17];
    int n;

    if (util_random(r, sizeof(r)) != 0)
        return PQV_E_CRYPTO;
    util_hex_encode(hex, r, sizeof(r));
    n = snprintf(out, outlen, "%s/%s.tmp-%s", dir, prefix, hex);
    if (n < 0 || (size_t)n >= outlen)
        return error_set(PQV_E_INVAL, NULL, "path too long");
    return 0;
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
fsutil_write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode,
    int sync_dir)
{
    char dir[4096], tmp[4200];
    const char *base = strrchr(path, '/');
    int fd, rc, e;

    base = base ? base + 1 : path;
    fsutil_dirname(path, dir, sizeof(dir));
    if ((rc = fsutil_temp_name(tmp, sizeof(tmp), dir, base)) != 0)
        return rc;
    if ((fd = io_open(tmp, O_WRONLY | O_CREAT | O_EXCL, mode)) < 0) {
        e = errno;
        return error_errno(tmp, "create", e);
    }
    if ((rc = fsutil_write_all(fd, buf, len, tmp)) != 0)
        goto err1;
    if (io_fsync(fd, tmp) != 0) {
        e = errno;
        rc = error_errno(tmp, "fsync", e);
        goto err1;
    }
    if (close(fd) != 0) {
        e = errno;
        fd = -1;
        rc = error_errno(tmp, "close", e);
        goto err1;
    }
    fd = -1;
    if (io_rename(tmp, path) != 0) {
        e = errno;
        rc = error_errno(path, "rename", e);
        goto err1;
    }
    if (sync_dir && (rc = fsutil_fsync_dir(dir)) != 0)
        return rc;

    /* Success! */
    return 0;

err1:
    /* Failure! */
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return rc;
}

int
fsutil_write_file_new(const char *path, const void *buf, size_t len, mode_t mode)
{
    char dir[4096], tmp[4200];
    const char *base = strrchr(path, '/');
    int fd, rc, e;

    base = base ? base + 1 : path;
    fsutil_dirname(path, dir, sizeof(dir));
    if ((rc = fsutil_temp_name(tmp, sizeof(tmp), dir, base)) != 0)
        return rc;
    if ((fd = io_open(tmp, O_WRONLY | O_CREAT | O_EXCL, mode)) < 0) {
        e = errno;
        return error_errno(tmp, "create", e);
    }
    if ((rc = fsutil_write_all(fd, buf, len, tmp)) != 0)
        goto done;
    if (io_fsync(fd, tmp) != 0) {
        e = errno;
        rc = error_errno(tmp, "fsync", e);
        goto done;
    }
    if (io_link(tmp, path) != 0) {
        e = errno;
        rc = error_set(error_from_errno(e), path, "%s", e == EEXIST ? "already exists" : strerror(e));
        goto done;
    }
    rc = 0;
done:
    close(fd);
    unlink(tmp);
    return rc;
}

int
fsutil_read_file_range(const char *path, uint64_t offset, void *buf, size_t len)
{
    uint8_t *p = buf;
    size_t done = 0;
    int fd, e;

    if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        e = errno;
        return error_set(error_from_errno(e), path, "%s", strerror(e));
    }
    while (done < len) {
        ssize_t n = pread(fd, p + done, len - done, (off_t)(offset + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            e = errno;
            close(fd);
            return error_errno(path, "read", e);
        }
        if (n == 0) {
            close(fd);
            return error_set(PQV_E_INTEGRITY, path, "shorter than expected");
        }
        done += (size_t)n;
    }
    close(fd);
    return 0;
}

int
fsutil_read_file(const char *path, uint8_t **buf, size_t *len, size_t maxlen)
{
    struct stat st;
    uint8_t *data;
    ssize_t got;
    int fd, e;

    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        e = errno;
        return error_set(error_from_errno(e), path, "%s", strerror(e));
    }
    if (fstat(fd, &st) != 0) {
        e = errno;
        close(fd);
        return error_set(error_from_errno(e), path, "%s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return error_set(PQV_E_INTEGRITY, path, "not a regular file");
    }
    if ((uint64_t)st.st_size > maxlen) {
        close(fd);
        return error_set(PQV_E_INTEGRITY, path, "too large (%lld bytes)", (long long)st.st_size);
    }
    /* One extra byte detects a file that grew since fstat. */
    if ((data = malloc((size_t)st.st_size + 1)) == NULL) {
        close(fd);
        return PQV_E_NOMEM;
    }
    got = fsutil_read_all(fd, data, (size_t)st.st_size + 1, path);
    close(fd);
    if (got < 0) {
        free(data);
        return (int)got;
    }
    if ((size_t)got > maxlen) {
        free(data);
        return error_set(PQV_E_INTEGRITY, path, "too large");
    }
    *buf = data;
    *len = (size_t)got;
    return 0;
}
