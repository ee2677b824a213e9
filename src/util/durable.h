/*
 * durable.h: the one way a file is written durably (commit protocol,
 * docs/DESIGN.md section 3): a temporary in the destination directory,
 * written, given its mode and times, fsynced, then given its name by rename
 * (replacing or not) or by link (create-only), then closed.  Until the name is
 * given nothing is at it; on any failure the temporary is removed.  The
 * directory's sync is the caller's: once per directory per command is
 * enough (the storage batches it into its barrier).
 *
 *   durable_begin(&d, dirfd, name, flags, 0600)   the temporary, open in d.fd
 *   ... write to d.fd ...
 *   durable_commit(&d, name, DURABLE_NOREPLACE, &meta) or durable_abort(&d)
 *
 * Temporaries being written are registered, so that an interrupted program
 * can remove them from its signal handler (pqv_remove_temporaries in
 * pqvault/common.h): no partial plaintext is left behind by Ctrl-C.
 */
#ifndef PQV_DURABLE_H
#define PQV_DURABLE_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* Temporary names end in ".tmp-<16 hex>"; with DURABLE_HIDDEN (a user's
 * directory) they are ".NAME.pqvault.tmp-<16 hex>". */
#define DURABLE_HIDDEN 1
#define DURABLE_TEMP_MAX 320

struct durable {
    const char *what;               /* the file's path, for messages (borrowed) */
    int dirfd;                      /* the directory (borrowed) */
    int fd;                         /* the temporary, open for writing */
    char temp[DURABLE_TEMP_MAX];    /* its name relative to dirfd */
    int slot;                       /* in the interrupt registry, or -1 */
};

/* How durable_commit names the file. */
enum durable_how {
    DURABLE_REPLACE = 0,     /* rename over whatever is there */
    DURABLE_NOREPLACE = 1,   /* rename, PQV_E_EXISTS if the name exists */
    DURABLE_CREATE = 2       /* link: create-only, as NOREPLACE on every
                              * file system (the temporary is removed) */
};

/* Owner, mode, other attributes and times given to the file before it is
 * synced, in that order: a change of owner clears the set-id bits and the
 * capabilities (security.capability), which the mode and the attributes
 * then set; the times come last. */
struct durable_meta {
    mode_t mode;
    struct timespec mtime;
    int set_owner;                  /* chown to uid/gid first (root restores) */
    uid_t uid;
    gid_t gid;
    /* NULL, or called with the file's descriptor after the mode and before
     * the times (extended attributes); its failures are its own to report. */
    void (*attrs)(int fd, void *ctx);
    void *attrs_ctx;
};

/* durable_begin(d, dirfd, name, what, flags, mode): create the temporary
 * for ${name} (a name relative to ${dirfd}; with DURABLE_HIDDEN a base
 * name) with ${mode}.  ${what} names the file in messages (its path; NULL:
 * ${name}); it must outlive ${d}. */
int durable_begin(struct durable *d, int dirfd, const char *name, const char *what, int flags,
    mode_t mode);

/* durable_commit(d, name, how, meta): set ${meta} (NULL: keep), fsync,
 * close, and give the file ${name} as ${how} says.  On failure the
 * temporary is removed and nothing is at ${name} that was not before. */
int durable_commit(struct durable *d, const char *name, int how, const struct durable_meta *meta);

/* The same in three steps, for callers that sync many files at once:
 * durable_set_meta (owner, mode, attributes, times), durable_sync (fsync), durable_name
 * (give the name, close).  Each removes the temporary on failure. */
int durable_set_meta(struct durable *d, const struct durable_meta *meta);
int durable_sync(struct durable *d);
int durable_name(struct durable *d, const char *name, int how);

/* durable_abort(d): close and remove the temporary.  Safe after commit. */
void durable_abort(struct durable *d);

/* durable_stale(dirfd, name): whether ${name} in ${dirfd} is a hidden
 * temporary (DURABLE_HIDDEN) whose writer is gone: while a temporary is
 * written its writer holds an flock on it, which dies with the process. */
int durable_stale(int dirfd, const char *name);

/* durable_write_file(dirfd, name, what, buf, len, mode, how): the whole
 * sequence for a buffer. */
int durable_write_file(int dirfd, const char *name, const char *what, const void *buf, size_t len,
    mode_t mode, int how);

#endif
