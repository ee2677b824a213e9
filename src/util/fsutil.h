/*
 * fsutil.h: file-system helpers with the durability rules of the commit
 * protocol, and a single choke point for the system calls that change
 * durable state, so tests can inject faults (EIO, ENOSPC, short writes) and
 * count or crash at durability steps.
 */
#ifndef PQV_FSUTIL_H
#define PQV_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Fault injection: when set, io_fault_hook is called before each operation
 * with its kind and path; a non-zero return is taken as the errno the
 * operation fails with (for "write", the special value IO_FAULT_SHORT makes
 * the write short by half).  NULL in production.
 */
#define IO_FAULT_SHORT (-1000)
extern int (*io_fault_hook)(const char *op, const char *path);

/* Wrappers for the durable-state system calls.  Each returns what the system
 * call returns, with errno set on failure. */
int io_open(const char *path, int flags, mode_t mode);
ssize_t io_write(int fd, const void *buf, size_t len, const char *path);
int io_fsync(int fd, const char *path);
int io_rename(const char *from, const char *to);
/* rename that fails with EEXIST rather than replace ${to} */
int io_rename_noreplace(const char *from, const char *to);
/* link that fails with EEXIST if ${to} exists (a create-only rename) */
int io_link(const char *from, const char *to);
int io_unlink(const char *path);
int io_mkdir(const char *path, mode_t mode);
int io_rmdir(const char *path);


/* fsutil_write_all(fd, buf, len, path): write everything or fail; 0 or PQV_E_*
 * with a detail naming ${path}. */
int fsutil_write_all(int fd, const void *buf, size_t len, const char *path);

/* fsutil_read_all(fd, buf, len, path): read exactly ${len} bytes unless end of
 * file comes first; returns the number of bytes read or a negative PQV_E_*. */
ssize_t fsutil_read_all(int fd, void *buf, size_t len, const char *path);

/* fsutil_fsync_dir(dir): fsync the directory ${dir}. */
int fsutil_fsync_dir(const char *dir);

/* fsutil_temp_name(out, outlen, dir, prefix): "${dir}/${prefix}.tmp-<16 hex>". */
int fsutil_temp_name(char *out, size_t outlen, const char *dir, const char *prefix);

/* fsutil_dirname(path, out, outlen): the directory part of ${path} ("." if none). */
void fsutil_dirname(const char *path, char *out, size_t outlen);

/*
 * fsutil_write_file_atomic(path, buf, len, mode, sync_dir): write ${buf} to a
 * temporary file beside ${path}, fsync it, rename it to ${path} and, if
 * ${sync_dir}, fsync the directory.  On failure nothing is left behind and
 * any existing ${path} is untouched.
 */
int fsutil_write_file_atomic(const char *path, const void *buf, size_t len,
    mode_t mode, int sync_dir);

/*
 * fsutil_write_file_new(path, buf, len, mode): like fsutil_write_file_atomic
 * without the directory sync, but create-only: the synced temporary is
 * link(2)ed to ${path}, which fails with PQV_E_EXISTS if ${path} exists.
 */
int fsutil_write_file_new(const char *path, const void *buf, size_t len, mode_t mode);

/* fsutil_read_file_range(path, offset, buf, len): read exactly ${len} bytes at
 * ${offset} of the regular file ${path}.  PQV_E_NOTFOUND if absent,
 * PQV_E_INTEGRITY if the file is shorter. */
int fsutil_read_file_range(const char *path, uint64_t offset, void *buf, size_t len);

/* fsutil_read_file(path, buf, len, maxlen): read a whole file of at most
 * ${maxlen} bytes into a malloc'd buffer.  PQV_E_NOTFOUND if absent,
 * PQV_E_INTEGRITY if larger than ${maxlen}. */
int fsutil_read_file(const char *path, uint8_t **buf, size_t *len, size_t maxlen);

#endif
