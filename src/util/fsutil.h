/*
 * fsutil.h: file-system helpers over the io.h choke point: whole reads and
 * writes, directory syncs, directory creation (following links in a path
 * the user chose, never below a root the program walks), and whole-file
 * reads that refuse links, FIFOs and other non-regular files.
 */
#ifndef PQV_FSUTIL_H
#define PQV_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* fsutil_write_all(fd, buf, len, what): write everything or fail; 0 or
 * PQV_E_* about ${what}. */
int fsutil_write_all(int fd, const void *buf, size_t len, const char *what);

/* fsutil_read_all(fd, buf, len, what): read ${len} bytes from the current
 * offset unless end of file comes first; the number of bytes read or a
 * negative PQV_E_*. */
ssize_t fsutil_read_all(int fd, void *buf, size_t len, const char *what);

/* fsutil_pread_all(fd, buf, len, offset, what): read ${len} bytes at
 * ${offset} (short preads are continued at the right offset) unless end of
 * file comes first; the number of bytes read or a negative PQV_E_*. */
ssize_t fsutil_pread_all(int fd, void *buf, size_t len, uint64_t offset, const char *what);

/* fsutil_fsync_dirfd(fd, what) / fsutil_fsync_dir(path): fsync a directory. */
int fsutil_fsync_dirfd(int fd, const char *what);
int fsutil_fsync_dir(const char *path);

/* fsutil_dirname(path, out, outlen): the directory part of ${path} ("."
 * if none). */
void fsutil_dirname(const char *path, char *out, size_t outlen);

/* fsutil_mkdirs(path, mode): create ${path} and its missing parents (like
 * mkdir -p: a path the user chose, so existing links in it are followed),
 * each new directory made durable in its parent. */
int fsutil_mkdirs(const char *path, mode_t mode);

/*
 * fsutil_open_dirs(rootfd, root, rel, create, mode, out): open the directory
 * ${rel} ('/'-separated, relative) below the directory ${rootfd} (whose
 * path, for messages, is ${root}), one
 * component at a time without following symbolic links: a link or a
 * non-directory in the way fails (PQV_E_INVAL, its path the subject).  ${create}:
 * FSUTIL_NOCREATE, FSUTIL_CREATE (missing components are created with
 * ${mode}; making them durable in their parents is the caller's, e.g. at a
 * storage barrier) or FSUTIL_CREATE_SYNC (each is made durable in its
 * parent at once), or'ed with FSUTIL_FOLLOW to follow links (add -L's
 * walk, nothing else).  ${rel} "" opens ${rootfd} again.  *${out} is the
 * new descriptor.
 */
enum { FSUTIL_NOCREATE = 0, FSUTIL_CREATE = 1, FSUTIL_CREATE_SYNC = 2, FSUTIL_FOLLOW = 8 };
int fsutil_open_dirs(int rootfd, const char *root, const char *rel, int create, mode_t mode,
    int *out);

/*
 * struct fsutil_dirs: the directories of a walk below a root held open, so
 * that the files of one directory, and of the directories below it, are
 * reached by openat relative to a descriptor already held instead of each
 * component again (a restore or an add of 80,000 files: one openat per
 * directory, not one per component per file).  The components are walked
 * as fsutil_open_dirs walks them (no link followed unless FSUTIL_FOLLOW;
 * created if ${create} says so); a directory held stays the directory it
 * was when opened, whatever is renamed meanwhile.  Up to FSUTIL_DIRS_DEPTH
 * levels are held; deeper ones are opened for each call.
 */
#define FSUTIL_DIRS_DEPTH 32
struct fsutil_dirs {
    int rootfd;                   /* borrowed */
    const char *root;             /* its path, for messages (borrowed) */
    int create;                   /* FSUTIL_* of every component opened */
    mode_t mode;
    size_t depth;                 /* directories held */
    int fd[FSUTIL_DIRS_DEPTH];
    size_t end[FSUTIL_DIRS_DEPTH]; /* where component i ends in path */
    char path[4096];              /* the directory held deepest */
    int deep;                     /* the last call's deeper directory, or -1 */
};
/* fsutil_dirs_init(c, rootfd, root, create, mode): nothing held yet. */
void fsutil_dirs_init(struct fsutil_dirs *c, int rootfd, const char *root, int create, mode_t mode);
/* fsutil_dirs_open(c, rel, out): the directory ${rel} below the root
 * (${rel} "" is the root) in *${out}, borrowed: valid until the next call
 * or fsutil_dirs_close, never closed by the caller. */
int fsutil_dirs_open(struct fsutil_dirs *c, const char *rel, int *out);
/* fsutil_dirs_close(c): every directory held closed. */
void fsutil_dirs_close(struct fsutil_dirs *c);

/*
 * fsutil_read_file(dirfd, name, buf, len, maxlen): read the whole regular
 * file ${name} (relative to ${dirfd}, or a path with AT_FDCWD) of at most
 * ${maxlen} bytes into a malloc'd buffer.  A symbolic link, FIFO, device or
 * directory is refused without blocking (PQV_E_INTEGRITY); PQV_E_NOTFOUND if
 * absent; PQV_E_INTEGRITY if larger than ${maxlen}.
 */
int fsutil_read_file(int dirfd, const char *name, uint8_t **buf, size_t *len, size_t maxlen);

/* fsutil_read_file_range(dirfd, name, offset, buf, len): read exactly
 * ${len} bytes at ${offset} of the regular file ${name} (refused as above).
 * PQV_E_NOTFOUND if absent, PQV_E_INTEGRITY if it is shorter. */
int fsutil_read_file_range(int dirfd, const char *name, uint64_t offset, void *buf, size_t len);

/* fsutil_open_regular(dirfd, name, out, st): open ${name} for reading,
 * refusing links and non-regular files without blocking on a FIFO; its
 * fstat in *${st} (may be NULL). */
struct stat;
int fsutil_open_regular(int dirfd, const char *name, int *out, struct stat *st);

#endif
