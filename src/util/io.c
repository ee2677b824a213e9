/*
 * io.c: the choke point for durable-state system calls (see io.h).
 */
#include "util/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/util.h"

#ifdef PQV_TEST_HOOKS
#include <signal.h>
#include <stdlib.h>
#include <string.h>

int (*io_fault_hook)(const char *op, const char *path);

/* The environment is read once, at start-up; when neither variable is set
 * the hooks cost one branch per call and change nothing. */
static int test_hooks;                  /* either variable set */
static unsigned long test_kill_at;
static char test_fault_op[16];
static unsigned long test_fault_n;
static int test_fault_persistent, test_fault_err;
static unsigned long test_kill_count, test_fault_count;
/* PQVAULT_TEST_STOP_AT=op:N[,N...]: SIGSTOP before those calls of ${op}
 * ("read": a file being added; or a fault-hook op such as "write"), so a
 * test can act on a stopped process (change a file, send a signal). */
static char test_stop_op[16];
static char test_stop_path[256];    /* PQVAULT_TEST_STOP_PATH: count only these */
static unsigned long test_stop_at[8];
static unsigned long test_stop_count;
static int test_fault_full;             /* after a "short" write */

__attribute__((constructor)) static void
read_test_hooks(void)
{
    const char *k = getenv("PQVAULT_TEST_KILL_AT");
    const char *f = getenv("PQVAULT_TEST_FAULT");
    const char *st = getenv("PQVAULT_TEST_STOP_AT");
    const char *sp = getenv("PQVAULT_TEST_STOP_PATH");
    char buf[64], *n, *err, *end;

    if (sp != NULL)
        snprintf(test_stop_path, sizeof(test_stop_path), "%s", sp);
    if (st != NULL && (n = strchr(st, ':')) != NULL && (size_t)(n - st) < sizeof(test_stop_op)) {
        memcpy(test_stop_op, st, (size_t)(n - st));
        for (int i = 0; i < 8 && *n != '\0'; i++) {
            test_stop_at[i] = strtoul(n + 1, &end, 10);
            n = end;
            if (*n != ',')
                break;
        }
        test_hooks = 1;
    }
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

static void
stop_hook(const char *op, const char *what)
{
    if (test_stop_at[0] == 0 || strcmp(op, test_stop_op) != 0 ||
        (test_stop_path[0] != '\0' && strstr(what, test_stop_path) == NULL))
        return;
    unsigned long c = __atomic_add_fetch(&test_stop_count, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 8 && test_stop_at[i] != 0; i++)
        if (c == test_stop_at[i])
            raise(SIGSTOP);
}

static int
test_hook(const char *op, const char *what)
{
    stop_hook(op, what);
    if (test_kill_at > 0 && strcmp(op, "write") != 0 && strcmp(op, "read") != 0 &&
        strcmp(op, "fallocate") != 0 &&
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

/* fault(op, what): the errno ${op} on ${what} must fail with (or
 * IO_FAULT_SHORT), 0 to proceed. */
static int
fault(const char *op, const char *what)
{
    int e;

    if (test_hooks && (e = test_hook(op, what)) != 0) {
        if (e != IO_FAULT_SHORT)
            errno = e;
        return e;
    }
    if (io_fault_hook == NULL || (e = io_fault_hook(op, what)) == 0)
        return 0;
    if (e != IO_FAULT_SHORT)
        errno = e;
    return e;
}
#else
/* The shipped library: no hooks. */
static inline int
fault(const char *op, const char *what)
{
    (void)op;
    (void)what;
    return 0;
}
#endif

#define WHAT(what, name) ((what) != NULL ? (what) : (name))

int
io_openat(int dirfd, const char *name, int flags, mode_t mode, const char *what)
{
    if ((flags & O_CREAT) && fault("open", WHAT(what, name)))
        return -1;
    return openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

ssize_t
io_write(int fd, const void *buf, size_t len, const char *what)
{
    int e = fault("write", what);

    if (e == IO_FAULT_SHORT)
        return write(fd, buf, len > 1 ? len / 2 : len);
    if (e != 0)
        return -1;
    return write(fd, buf, len);
}

ssize_t
io_pwrite(int fd, const void *buf, size_t len, uint64_t offset, const char *what)
{
    int e = fault("write", what);

    if (e == IO_FAULT_SHORT)
        return pwrite(fd, buf, len > 1 ? len / 2 : len, (off_t)offset);
    if (e != 0)
        return -1;
    return pwrite(fd, buf, len, (off_t)offset);
}

int
io_fsync(int fd, const char *what)
{
    if (fault("fsync", what))
        return -1;
    return fsync(fd);
}

int
io_syncfs(int fd, const char *what)
{
    if (fault("syncfs", what))
        return -1;
    return syncfs(fd);
}

int
io_renameat(int fromdir, const char *from, int todir, const char *to, unsigned flags,
    const char *what)
{
    if (fault("rename", WHAT(what, to)))
        return -1;
    return renameat2(fromdir, from, todir, to, flags);
}

int
io_linkat(int fromdir, const char *from, int todir, const char *to, const char *what)
{
    if (fault("rename", WHAT(what, to)))
        return -1;
    return linkat(fromdir, from, todir, to, 0);
}

int
io_unlinkat(int dirfd, const char *name, int flags, const char *what)
{
    if (fault(flags & AT_REMOVEDIR ? "rmdir" : "unlink", WHAT(what, name)))
        return -1;
    return unlinkat(dirfd, name, flags);
}

int
io_mkdirat(int dirfd, const char *name, mode_t mode, const char *what)
{
    if (fault("mkdir", WHAT(what, name)))
        return -1;
    return mkdirat(dirfd, name, mode);
}

ssize_t
io_source_pread(int fd, void *buf, size_t len, uint64_t offset, const char *what)
{
    if (fault("read", what))
        return error_errno(what, "read", errno);
    return fsutil_pread_all(fd, buf, len, offset, what);
}

int
io_fchmod(int fd, mode_t mode, const char *what)
{
    if (fault("chmod", what))
        return -1;
    return fchmod(fd, mode);
}

int
io_fchown(int fd, uid_t uid, gid_t gid, const char *what)
{
    if (fault("chown", what))
        return -1;
    return fchown(fd, uid, gid);
}

int
io_symlinkat(const char *target, int dirfd, const char *name, const char *what)
{
    if (fault("open", WHAT(what, name)))
        return -1;
    return symlinkat(target, dirfd, name);
}

int
io_lchownat(int dirfd, const char *name, uid_t uid, gid_t gid, const char *what)
{
    if (fault("chown", WHAT(what, name)))
        return -1;
    return fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW);
}

int
io_lutimensat(int dirfd, const char *name, const struct timespec times[2], const char *what)
{
    if (fault("utimens", WHAT(what, name)))
        return -1;
    return utimensat(dirfd, name, times, AT_SYMLINK_NOFOLLOW);
}

int
io_fsetxattr(int fd, const char *name, const void *value, size_t len, const char *what)
{
    if (fault("xattr", what))
        return -1;
    return fsetxattr(fd, name, value, len, 0);
}

int
io_fallocate(int fd, uint64_t len, const char *what)
{
    if (fault("fallocate", what))
        return -1;
    return fallocate(fd, 0, 0, (off_t)len);
}

int
io_futimens(int fd, const struct timespec times[2], const char *what)
{
    if (fault("utimens", what))
        return -1;
    return futimens(fd, times);
}
