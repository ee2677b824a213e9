/*
 * pqvault/mount.h: a vault's states as a read-only file system tree, for
 * `pqvault mount` (the program's FUSE glue, src/cli/cmd_mount.c) or any
 * other front end (a test, another FUSE binding, an NFS server).
 *
 *   /                          the newest state (or the snapshot pqv_vault_set_at names)
 *   /snapshots/EPOCH-TIME/     each kept snapshot, EPOCH zero-padded to 6
 *                              digits, TIME its UTC time (2026-11-30T14:00:00Z)
 *   /snapshots/latest          a symbolic link to the newest of them
 *   /versions/NAME/EPOCH-TIME  each distinct version of the file or link NAME
 *                              across the kept snapshots, under the name of the
 *                              first snapshot that has it
 *
 * (When the root state holds a top-level name "snapshots" or "versions", the
 * history directory is ".snapshots" or ".versions" instead: the root shows
 * the state exactly.)  Nodes are numbered (uint64_t, as FUSE's inodes: 1 is
 * the root); a number stays valid as long as the view is open, and the
 * names of a hard-link group share one number.  The view is the vault as it
 * was when it was opened: a later epoch shows in a new view.
 *
 * Every call is thread-safe.  Unlike the rest of the library, the node
 * operations answer as a file system does: 0 or a negative errno value
 * (-ENOENT, -ENOTDIR, -ENODATA, -ERANGE, -ENXIO, -EIO for data that fails
 * authentication...), with the library's failure (pqv_error_last) set
 * for -EIO.  File data is read from the chunks (or extents) a read
 * touches only, verified, and kept decrypted in a bounded cache, in
 * memory locked where allowed; nothing is written anywhere.
 */
#ifndef PQVAULT_MOUNT_H
#define PQVAULT_MOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pqv_mount pqv_mount;
typedef struct pqv_mount_file pqv_mount_file;

#define PQV_MOUNT_ROOT 1                        /* the root's node number */
#define PQV_MOUNT_CACHE_DEFAULT (64u << 20)     /* bytes of decrypted data kept */
#define PQV_MOUNT_CACHE_MIN (8u << 20)          /* at least (two of the largest extents) */

struct pqv_mount_options {
    size_t cache_bytes;        /* 0: PQV_MOUNT_CACHE_DEFAULT; at least PQV_MOUNT_CACHE_MIN */
    uint32_t uid, gid;         /* owner of the directories the view makes (root, snapshots/) */
    pqv_report_fn report;      /* damage met while reading, each file named once (may be NULL) */
    void *report_ctx;
    /* offer(ctx, ino, data, len): bytes [0, len) of file ${ino} (the number
     * the view shows), decrypted ahead of its reads: the next files of a
     * walk (cp -a, tar), for the kernel's page cache, so that reading them
     * needs no request; 0 if taken.  May be NULL.  Called from the view's
     * prefetch threads, never while the view holds a lock or a request
     * waits on that call; ${len} is a whole number of pages unless it is
     * the whole file. */
    int (*offer)(void *ctx, uint64_t ino, const void *data, size_t len);
    void *offer_ctx;
};

/* A node's metadata, as stat(2) gives it. */
struct pqv_mount_attr {
    uint64_t ino;
    uint32_t mode;             /* S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, S_IFCHR or S_IFBLK |
                                  permission bits (07777) */
    uint32_t nlink;            /* names of a hard-link group; 2 + subdirectories */
    uint32_t uid, gid;
    uint64_t size;             /* bytes; a link's target length */
    uint64_t blocks;           /* 512-byte units: the data stored, holes not counted */
    int64_t mtime_sec, ctime_sec;
    uint32_t mtime_nsec, ctime_nsec;
    uint32_t rdev_major, rdev_minor; /* a device node's number (else 0) */
};

/* pqv_mount_open(v, opt, out): the view of ${v} (unlocked): its current
 * state verified as every reading command does (rollback, fork, deleted
 * snapshots), its kept snapshots listed, the root's state loaded (one of
 * pqv_vault_set_at's snapshot if set).  The view uses ${v} until
 * pqv_mount_close; close ${v} after it.  Library codes (PQV_E_*). */
PQV_API int pqv_mount_open(pqv_vault *v, const struct pqv_mount_options *opt, pqv_mount **out)
    PQV_WARN_UNUSED;
/* pqv_mount_close(m): every file closed first; the cache and file keys
 * wiped; NULL is a no-op. */
PQV_API void pqv_mount_close(pqv_mount *m);

/* pqv_mount_lookup(m, parent, name, out): the node ${name} in directory
 * ${parent}. */
PQV_API int pqv_mount_lookup(pqv_mount *m, uint64_t parent, const char *name,
    struct pqv_mount_attr *out);
/* pqv_mount_getattr(m, ino, out). */
PQV_API int pqv_mount_getattr(pqv_mount *m, uint64_t ino, struct pqv_mount_attr *out);
/* pqv_mount_readdir(m, ino, offset, fn, ctx): the entries of directory
 * ${ino} from position ${offset} (0: the first, "."), each given to ${fn}
 * with the position after it; a nonzero return of ${fn} stops (the buffer
 * is full): that entry is given again from its position next time. */
typedef int (*pqv_mount_dir_fn)(void *ctx, const char *name, const struct pqv_mount_attr *attr,
    uint64_t next);
PQV_API int pqv_mount_readdir(pqv_mount *m, uint64_t ino, uint64_t offset, pqv_mount_dir_fn fn,
    void *ctx);
/* pqv_mount_listed(m, ino, offset): a listing of directory ${ino} from
 * ${offset} was answered (called after the answer: what it starts is for
 * the reads that follow, not for the listing).  A walk's reader (cp -a,
 * tar) lists each directory as it reaches it: the view reads the files
 * after it ahead, and, when a listing goes on past its start (the
 * kernel knows the names given before), offers those read for it.  A
 * listing alone (find, du) starts no reading ahead. */
PQV_API void pqv_mount_listed(pqv_mount *m, uint64_t ino, uint64_t offset);
/* pqv_mount_readlink(m, ino, buf, len): the target, NUL-terminated
 * (-ENAMETOOLONG if ${len} is too small, -EINVAL if not a link). */
PQV_API int pqv_mount_readlink(pqv_mount *m, uint64_t ino, char *buf, size_t len);
/* pqv_mount_xattrs_none(m): 1 if no file of any state the view shows has
 * an extended attribute (known at once when every kept snapshot is of the
 * current generation; else older generations' segments are read on a
 * thread of the view's, started by the first call: 0 until then).  A
 * file system may then say it has none (FUSE: ENOSYS, which the kernel
 * remembers, asking no more). */
PQV_API int pqv_mount_xattrs_none(pqv_mount *m);
/* pqv_mount_getxattr(m, ino, name, buf, len, size): the extended
 * attribute ${name} (*${size} its length; with ${len} 0, only that).
 * pqv_mount_listxattr(m, ino, buf, len, size): their names, each
 * NUL-terminated.  -ERANGE if ${len} is too small, -ENODATA if none. */
PQV_API int pqv_mount_getxattr(pqv_mount *m, uint64_t ino, const char *name, void *buf,
    size_t len, size_t *size);
PQV_API int pqv_mount_listxattr(pqv_mount *m, uint64_t ino, char *buf, size_t len, size_t *size);

/* pqv_mount_file_open(m, ino, out): a regular file opened for reading (its
 * file key recovered once); -EISDIR, -EINVAL for other nodes. */
PQV_API int pqv_mount_file_open(pqv_mount *m, uint64_t ino, pqv_mount_file **out);
/* pqv_mount_read(f, buf, len, off, got): up to ${len} bytes at ${off}
 * (*${got} fewer at the end of the file); holes read as zeros.  A chunk
 * that fails authentication or is missing: -EIO (reported once per file
 * through the view's report callback, naming it). */
PQV_API int pqv_mount_read(pqv_mount_file *f, uint8_t *buf, size_t len, uint64_t off,
    size_t *got);
/* pqv_mount_read_as(f, reader, buf, len, off, got): the same for one of
 * the file's readers (any number naming it, a process's for FUSE): each
 * reader's reads are followed alone (sequential or random), up to four
 * readers of one file at a time.  pqv_mount_read is reader 0's. */
PQV_API int pqv_mount_read_as(pqv_mount_file *f, uint64_t reader, uint8_t *buf, size_t len,
    uint64_t off, size_t *got);
/* pqv_mount_read_behind(f, reader, off, len): after a read of ${reader}'s,
 * the part of ${f} its sequential reads have left behind that the kernel's
 * page cache may drop (1: *${off}, *${len} set, each part once; 0: none).
 * Only files of 64 MiB or more: read from start to end, one keeps about
 * its last 16-24 MiB behind the reader cached, not all of it, except
 * what another reader of the same open file reading lately is near. */
PQV_API int pqv_mount_read_behind(pqv_mount_file *f, uint64_t reader, uint64_t *off,
    uint64_t *len);
/* pqv_mount_seek(f, off, whence, out): SEEK_DATA or SEEK_HOLE from the
 * file's extents (no decryption); -ENXIO past the data or the end. */
PQV_API int pqv_mount_seek(pqv_mount_file *f, uint64_t off, int whence, uint64_t *out);
/* pqv_mount_file_close(f): NULL is a no-op (never for a file from
 * pqv_mount_file_get). */
PQV_API void pqv_mount_file_close(pqv_mount_file *f);
/* pqv_mount_file_get(m, ino, out) / pqv_mount_file_put(f): file ${ino} as
 * the view keeps it open, for readers that open nothing themselves (a
 * kernel that sends no OPEN or RELEASE): one open file per node, shared by
 * its readers (their streams of reads told apart), referenced from get to
 * put; the least recently used that nobody holds closed beyond 64.  The
 * same answers as pqv_mount_file_open.  put of NULL is a no-op. */
PQV_API int pqv_mount_file_get(pqv_mount *m, uint64_t ino, pqv_mount_file **out);
PQV_API void pqv_mount_file_put(pqv_mount_file *f);
/* pqv_mount_wants_opens(): whether a FUSE layer should take the kernel's
 * OPEN and RELEASE even where it can do without them (0; in the test
 * build, 1 with PQVAULT_TEST_MOUNT_OPEN set, so that tests take both
 * ways). */
PQV_API int pqv_mount_wants_opens(void);
/* pqv_mount_counts_path(): where a FUSE layer writes the counts
 * of its listings when its session ends: NULL (in the test build,
 * the environment's PQVAULT_TEST_MOUNT_COUNTS, so that tests see how
 * listings were answered). */
PQV_API const char *pqv_mount_counts_path(void);

/* What statfs(2) reports, and the view's counters. */
struct pqv_mount_stats {
    uint64_t files;            /* nodes of the root's tree */
    uint64_t bytes;            /* data of the root's files (holes not counted) */
    uint64_t snapshots;        /* kept snapshots */
    uint64_t cache_bytes, cache_hits, cache_misses, prefetched;
    uint64_t offered;          /* files' first bytes taken by opt.offer */
    uint64_t bytes_opened;     /* plaintext decrypted so far (random reads open
                                  only the 64 KiB segments they touch) */
};
PQV_API void pqv_mount_stats(pqv_mount *m, struct pqv_mount_stats *out);

#ifdef __cplusplus
}
#endif
#endif
