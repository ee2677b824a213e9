/*
 * vault/dest.h: restore destinations (dest.c), never following links below
 * the directory the user named.  No vault types: file-system helpers only.
 */
#ifndef PQV_VAULT_DEST_H
#define PQV_VAULT_DEST_H

#include <stddef.h>
#include <sys/types.h>

#include "util/durable.h"
#include "util/fsutil.h"

/* Restore destinations (never following links below the directory the
 * user named). */
struct dest_dir {
    int fd;
    dev_t dev;
    ino_t ino;
};
struct dest {
    int rootfd;                 /* the directory the user named */
    char *root;                 /* its path */
    struct dest_dir *dirs;      /* directories to sync (names given in them) */
    size_t ndirs;
    char **cleaned;             /* directories already visited */
    size_t ncleaned;
    int batched;                /* a tree restore: directories made and given
                                   attributes unsynced; each batch ends with one
                                   syncfs per file system (dest_sync_dirs), the
                                   restore with dest_sync_all */
    char *last_dir;             /* the directory the last file went into ... */
    int last_fd;                /* ... and its descriptor (a tree restores in name
                                   order: the next file is mostly beside it) */
    uint64_t last_gen;          /* which last_dir that is (counted up on change) */
    uint64_t noted_gen;         /* the last_dir already in dirs (0: none) */
    struct fsutil_dirs *probe;  /* dest_exists: the directories held open ... */
    char *missing;              /* ... and one found absent (all below it is) */
};
struct dest_file {
    int dirfd;                  /* the file's directory */
    char base[256];             /* its name there */
    char *display;              /* its path, for messages (owned: a batch outlives
                                 * the caller's buffer) */
    int device;                 /* writing into a device or FIFO */
    struct durable tmp;         /* the temporary (not for a device) */
    int fd;                     /* where the plaintext goes */
    uint64_t dir_gen;           /* its directory's last_gen in the dest (0: not known) */
};
/* dest_open(d, path, create): the destination rooted at ${path} (created,
 * with its parents, if ${create}). */
int dest_open(struct dest *d, const char *path, int create);
void dest_close(struct dest *d);
/* dest_open_file(f, d, rel, display, force, allow_device): prepare writing
 * ${rel} below ${d}: missing directories created (no link followed), the
 * existing target checked (see dest.c), stale temporaries of an earlier
 * killed restore removed, a temporary begun; f->fd receives the plaintext. */
int dest_open_file(struct dest_file *f, struct dest *d, const char *rel, const char *display,
    int force, int allow_device);
/* dest_prepare_file(f, d, rel, display) then dest_create_file(f, force,
 * allow_device): dest_open_file in two steps.  The first (the
 * destination's own thread: it walks and caches directories, and cleans
 * stale temporaries once per directory) leaves ${f} holding its directory;
 * the second (any thread: it touches only ${f}) checks the existing target
 * and makes the temporary.  Both close ${f} on failure. */
int dest_prepare_file(struct dest_file *f, struct dest *d, const char *rel, const char *display);
int dest_create_file(struct dest_file *f, int force, int allow_device);
/* dest_commit_file(f, meta, force): mode and times, fsync, rename (over an
 * existing file only with ${force}), directory fsync; closes ${f}. */
int dest_commit_file(struct dest_file *f, const struct durable_meta *meta, int force);
/* dest_name_file(d, f, force): give the (synced) file its name (over an
 * existing one only with ${force}); its directory is noted for
 * dest_sync_dirs; closes ${f}. */
int dest_name_file(struct dest *d, struct dest_file *f, int force);
/* dest_note_dir(d, dirfd) / dest_sync_dirs(d): sync each directory that
 * received names once. */
int dest_note_dir(struct dest *d, int dirfd);
int dest_sync_dirs(struct dest *d);
/* dest_keep_dirs(d): between the batches of a batched restore, the
 * directories that received names are left to the last dest_sync_dirs, one
 * kept per file system (its syncfs covers the others).  Safe: every file
 * was synced before it was named, so a name a crash loses was never
 * reported durable, and a name that survives points at synced data. */
void dest_keep_dirs(struct dest *d);
/* dest_symlink(d, rel, display, target, force, meta): a symbolic link
 * (never followed), with its own owner and times. */
int dest_symlink(struct dest *d, const char *rel, const char *display, const char *target,
    int force, const struct durable_meta *meta);
/* dest_node(d, rel, display, type, rdev, force, meta): a FIFO (S_IFIFO) or
 * device node (S_IFCHR, S_IFBLK: as root) made under a temporary name
 * beside ${rel}, given its owner, mode, attributes (meta->attrs, called with
 * an O_PATH descriptor) and times through a descriptor of the node itself
 * (never opened for I/O), then renamed into place (over an existing
 * non-directory only with ${force}). */
int dest_node(struct dest *d, const char *rel, const char *display, mode_t type, dev_t rdev,
    int force, const struct durable_meta *meta);
/* dest_hardlink(d, existing, rel, display, force): ${rel} as another name
 * of the restored file ${existing}. */
int dest_hardlink(struct dest *d, const char *existing, const char *rel, const char *display,
    int force);
/* dest_open_dir(d, rel, fd): a restored directory (for its attributes). */
int dest_open_dir(struct dest *d, const char *rel, int *fd);
/* dest_close_file(f): abandon (the temporary is removed). */
void dest_close_file(struct dest_file *f);
/* dest_exists(d, rel): whether something is at ${rel} (not following). */
int dest_exists(struct dest *d, const char *rel);
/* dest_make_dir(d, rel): create the directory ${rel} (and parents). */
int dest_make_dir(struct dest *d, const char *rel);
/* dest_sync_all(d): a batched restore's last sync (directories'
 * attributes): one syncfs of the destination's file system. */
int dest_sync_all(struct dest *d);
/* dest_set_dir_meta(d, rel, display, meta): set a restored directory's mode
 * and times on its descriptor and sync them. */
int dest_set_dir_meta(struct dest *d, const char *rel, const char *display,
    const struct durable_meta *meta);

#endif
