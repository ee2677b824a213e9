/*
 * io.h: the choke point for every system call that changes durable state
 * (creating, writing, syncing, renaming, linking, removing files and
 * directories, setting modes and times).  Every such call of the library
 * goes through here, so that the test build can inject faults (EIO, ENOSPC,
 * short writes) and kill the process at any durability step.
 *
 * Each wrapper returns what the system call returns, with errno set on
 * failure.  Names are relative to a directory descriptor (AT_FDCWD for a
 * path); files are opened with O_NOFOLLOW and O_CLOEXEC always, so a
 * symbolic link planted where a file is created or written is refused
 * (ELOOP), never followed.  ${what} is the file's path as the user would
 * name it (the fault hook sees it; NULL: the name).
 *
 * Test hooks (compiled only with -DPQV_TEST_HOOKS, into the test build of
 * the library; the shipped library has none):
 *   io_fault_hook          called before each operation with its kind and
 *                          name; a non-zero return is the errno the
 *                          operation fails with (IO_FAULT_SHORT: a write cut
 *                          short by half);
 *   PQVAULT_TEST_KILL_AT=N the N-th durability call of the process (fsync,
 *                          rename, link, unlink, mkdir, rmdir, chmod, utimens
 *                          or an open that creates) raises SIGKILL just
 *                          before it is made;
 *   PQVAULT_TEST_FAULT=op:N:err  the N-th call of ${op} (open, write, fsync,
 *                          rename, unlink, mkdir, rmdir, chmod, utimens,
 *                          fallocate, or any) fails with ${err}: EIO, ENOSPC, EDQUOT, a
 *                          number, or "short" (that write is cut short and
 *                          every later write fails with ENOSPC, like a disk
 *                          filling up); "op:N+:err" fails every call of
 *                          ${op} from the N-th on;
 *   PQVAULT_TEST_STOP_AT=op:N[,N...]  the process stops itself (SIGSTOP)
 *                          just before those calls of ${op} ("read" for the
 *                          reads of a file being added, or an op above), so
 *                          a test can act on it at a known point; with
 *                          PQVAULT_TEST_STOP_PATH=S, only the calls on a
 *                          path containing S count.
 */
#ifndef PQV_IO_H
#define PQV_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* What a fault hook returns for "cut this write short". */
#define IO_FAULT_SHORT (-1000)

#ifdef PQV_TEST_HOOKS
extern int (*io_fault_hook)(const char *op, const char *path);
#endif

int io_openat(int dirfd, const char *name, int flags, mode_t mode, const char *what);
ssize_t io_write(int fd, const void *buf, size_t len, const char *what);
ssize_t io_pwrite(int fd, const void *buf, size_t len, uint64_t offset, const char *what);
int io_fsync(int fd, const char *what);
/* io_syncfs(fd, what): syncfs(2): everything written to ${fd}'s file system
 * (a batch of files in one journal commit); test hooks see op "syncfs". */
int io_syncfs(int fd, const char *what);
/* io_renameat(fromdir, from, todir, to, flags): renameat2 with ${flags}
 * (0, or RENAME_NOREPLACE: fail with EEXIST rather than replace ${to}). */
int io_renameat(int fromdir, const char *from, int todir, const char *to, unsigned flags,
    const char *what);
/* io_linkat(fromdir, from, todir, to): a hard link; fails with EEXIST if
 * ${to} exists (a create-only rename of a temporary). */
int io_linkat(int fromdir, const char *from, int todir, const char *to, const char *what);
int io_unlinkat(int dirfd, const char *name, int flags, const char *what);
int io_mkdirat(int dirfd, const char *name, mode_t mode, const char *what);
int io_fchmod(int fd, mode_t mode, const char *what);
int io_fchown(int fd, uid_t uid, gid_t gid, const char *what);
/* io_symlinkat(target, dirfd, name, what): a symbolic link (never followed). */
int io_symlinkat(const char *target, int dirfd, const char *name, const char *what);
/* io_fchownat / io_utimensat with AT_SYMLINK_NOFOLLOW: a link's own. */
int io_lchownat(int dirfd, const char *name, uid_t uid, gid_t gid, const char *what);
int io_lutimensat(int dirfd, const char *name, const struct timespec times[2], const char *what);
int io_fsetxattr(int fd, const char *name, const void *value, size_t len, const char *what);
/* io_source_pread(fd, buf, len, offset, what): read a file being added,
 * like fsutil_pread_all (the bytes read, fewer only at end of file, or a
 * negative PQV_E_*).  Not a durable-state call: here so that the test build
 * can stop the process in the middle of reading a file, for tests that
 * change a file while it is read (see PQVAULT_TEST_STOP_AT above). */
ssize_t io_source_pread(int fd, void *buf, size_t len, uint64_t offset, const char *what);
int io_futimens(int fd, const struct timespec times[2], const char *what);
/* io_fallocate(fd, len, what): fallocate(2) of the first ${len} bytes (the
 * vault's reserve); test hooks see op "fallocate" (a write: not a kill
 * point). */
int io_fallocate(int fd, uint64_t len, const char *what);

#endif
