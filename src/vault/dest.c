/*
 * dest.c: restore destinations.  A destination is treated as possibly
 * hostile (someone may have planted links or devices in it): below the
 * directory the user named, every component is walked with openat and
 * O_NOFOLLOW, never following a symbolic link; modes and times are set on
 * descriptors; nothing is replaced without --force, and --force replaces
 * only regular files and links (the link itself, never its target).
 *
 * What an existing destination of a file means:
 *   absent                  written (temporary, verified, synced, renamed
 *                           without replacing)
 *   regular file, link      refused (PQV_E_EXISTS); with force, replaced
 *   directory               refused (PQV_E_EXISTS: is a directory)
 *   character device, FIFO  the explicitly named output only (-o): written
 *                           into, as cat would, without rename; elsewhere
 *                           refused
 *   anything else           refused
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/durable.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "util/util.h"
#include "vault/dest.h"

int
dest_open(struct dest *d, const char *path, int create)
{
    int rc;

    memset(d, 0, sizeof(*d));
    /* The directory the user named is theirs to point anywhere: links in
     * its path are followed (as mkdir -p and cd would). */
    if (create && (rc = fsutil_mkdirs(path, 0755)) != 0)
        return rc;
    if ((d->rootfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return error_errno(path, "open directory", errno);
    if ((d->root = strdup(path)) == NULL) {
        close(d->rootfd);
        return PQV_E_NOMEM;
    }
    return 0;
}

void
dest_close(struct dest *d)
{
    if (d->probe != NULL)
        fsutil_dirs_close(d->probe);
    free(d->probe);
    free(d->missing);
    if (d->last_fd > 0)
        close(d->last_fd);
    free(d->last_dir);
    for (size_t i = 0; i < d->ndirs; i++)
        close(d->dirs[i].fd);
    free(d->dirs);
    for (size_t i = 0; i < d->ncleaned; i++)
        free(d->cleaned[i]);
    free(d->cleaned);
    if (d->rootfd >= 0)
        close(d->rootfd);
    free(d->root);
    memset(d, 0, sizeof(*d));
    d->rootfd = -1;
}

/* first_visit(d, dir): whether this restore writes into ${dir} for the
 * first time (names come sorted, so the last one is checked first). */
static int
first_visit(struct dest *d, const char *dir)
{
    char *copy, **grown;

    for (size_t i = d->ncleaned; i-- > 0;)
        if (strcmp(d->cleaned[i], dir) == 0)
            return 0;
    if ((copy = strdup(dir)) == NULL)
        return 0;
    if ((grown = realloc(d->cleaned, (d->ncleaned + 1) * sizeof(*grown))) == NULL) {
        free(copy);
        return 0;
    }
    d->cleaned = grown;
    d->cleaned[d->ncleaned++] = copy;
    return 1;
}

/* clean_stale(dirfd): remove hidden temporaries left in ${dirfd} by a
 * restore that was killed (SIGKILL, power loss): only ours, and only those
 * whose writer is gone (durable_stale). */
static void
clean_stale(int dirfd)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct dirent *de;
    DIR *d;

    if (fd < 0 || (d = fdopendir(fd)) == NULL) {
        if (fd >= 0)
            close(fd);
        return;
    }
    while ((de = readdir(d)) != NULL)
        if (durable_stale(dirfd, de->d_name))
            (void)io_unlinkat(dirfd, de->d_name, 0, NULL);
    closedir(d);
}

/* split(rel, dir, base): the directory part and the last component. */
static int
split(const char *rel, char *dir, size_t dirlen, const char **base)
{
    const char *slash = strrchr(rel, '/');

    *base = slash != NULL ? slash + 1 : rel;
    if (**base == '\0' || strlen(*base) > 255)
        return error_set(PQV_E_INVAL, rel, "invalid file name");
    if (snprintf(dir, dirlen, "%.*s", slash != NULL ? (int)(slash - rel) : 0, rel) >= (int)dirlen)
        return error_set(PQV_E_INVAL, rel, "path too long");
    return 0;
}

/* forget_probe(d): what dest_exists knows, dropped (a directory was made). */
static void
forget_probe(struct dest *d)
{
    free(d->missing);
    d->missing = NULL;
}

/* open_dir_cached(d, dir, fd, gen): the directory ${dir} below the destination
 * (created if missing, no link followed), from the one the file before
 * went into when it is the same (a descriptor, not a path: what is opened
 * stays the directory it was, whatever is renamed meanwhile). */
static int
open_dir_cached(struct dest *d, const char *dir, int *fd, uint64_t *gen)
{
    int rc, got;

    if (d->last_dir != NULL && strcmp(d->last_dir, dir) == 0 &&
        (*fd = fcntl(d->last_fd, F_DUPFD_CLOEXEC, 0)) >= 0) {
        *gen = d->last_gen;
        return 0;
    }
    *gen = 0;
    forget_probe(d);
    if ((rc = fsutil_open_dirs(d->rootfd, d->root, dir,
             d->batched ? FSUTIL_CREATE : FSUTIL_CREATE_SYNC, 0755, fd)) != 0)
        return rc;
    if ((got = fcntl(*fd, F_DUPFD_CLOEXEC, 0)) >= 0) {
        char *copy = strdup(dir);
        if (copy == NULL) {
            close(got);
            return 0; /* (no cache: not an error) */
        }
        if (d->last_fd > 0)
            close(d->last_fd);
        free(d->last_dir);
        d->last_dir = copy;
        d->last_fd = got;
        *gen = ++d->last_gen;
    }
    return 0;
}

int
dest_prepare_file(struct dest_file *f, struct dest *d, const char *rel, const char *display)
{
    char dir[4096];
    const char *base;
    int rc;

    memset(f, 0, sizeof(*f));
    f->dirfd = -1;
    f->fd = -1;
    f->tmp.fd = -1;
    f->tmp.temp[0] = '\0';
    f->tmp.slot = -1;
    if ((f->display = strdup(display)) == NULL)
        return PQV_E_NOMEM;
    if ((rc = split(rel, dir, sizeof(dir), &base)) != 0) {
        dest_close_file(f);
        return rc;
    }
    snprintf(f->base, sizeof(f->base), "%s", base);
    if ((rc = open_dir_cached(d, dir, &f->dirfd, &f->dir_gen)) != 0) {
        dest_close_file(f);
        return rc;
    }
    /* Before any temporary of ours is made there (by this thread or a
     * worker): a live one of ours would be locked, but not yet between its
     * creation and its flock. */
    if (first_visit(d, dir))
        clean_stale(f->dirfd);
    return 0;
}

int
dest_create_file(struct dest_file *f, int force, int allow_device)
{
    const char *display = f->display; /* what the temporary borrows lives as long as it */
    struct stat st;
    int rc = 0;

    if (fstatat(f->dirfd, f->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode)) {
            rc = error_set(PQV_E_EXISTS, display, "is a directory");
        } else if ((S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) && allow_device) {
            /* Written into, like cat > /dev/null; never replaced. */
            if ((f->fd = io_openat(f->dirfd, f->base, O_WRONLY, 0, display)) < 0) {
                rc = error_errno(display, "open", errno);
                goto fail;
            }
            f->device = 1;
            return 0;
        } else if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
            rc = error_set(PQV_E_EXISTS, display, "exists and is not a regular file");
        } else if (!force) {
            rc = error_set(PQV_E_EXISTS, display, "%s",
                S_ISLNK(st.st_mode) ? "exists (a symbolic link)" : "already exists");
        }
        if (rc != 0)
            goto fail;
    } else if (errno != ENOENT) {
        rc = error_errno(display, "stat", errno);
        goto fail;
    }
    if ((rc = durable_begin(&f->tmp, f->dirfd, f->base, display, DURABLE_HIDDEN, 0600)) != 0) {
        error_subject(rc, display);
        goto fail;
    }
    f->fd = f->tmp.fd;
    return 0;

fail:
    dest_close_file(f);
    return rc;
}

int
dest_open_file(struct dest_file *f, struct dest *d, const char *rel, const char *display,
    int force, int allow_device)
{
    int rc = dest_prepare_file(f, d, rel, display);

    return rc != 0 ? rc : dest_create_file(f, force, allow_device);
}

int
dest_note_dir(struct dest *d, int dirfd)
{
    struct stat st;
    struct dest_dir *grown;

    if (fstat(dirfd, &st) != 0)
        return error_errno(d->root, "stat", errno);
    for (size_t i = 0; i < d->ndirs; i++)
        if (d->dirs[i].dev == st.st_dev && d->dirs[i].ino == st.st_ino)
            return 0;
    if ((grown = realloc(d->dirs, (d->ndirs + 1) * sizeof(*grown))) == NULL)
        return PQV_E_NOMEM;
    d->dirs = grown;
    if ((d->dirs[d->ndirs].fd = dup(dirfd)) < 0)
        return error_errno(d->root, "dup", errno);
    d->dirs[d->ndirs].dev = st.st_dev;
    d->dirs[d->ndirs].ino = st.st_ino;
    d->ndirs++;
    return 0;
}

/* Directories above which one syncfs per file system beats an fsync each. */
#define SYNC_DIRS_ONE_BY_ONE 4

int
dest_sync_dirs(struct dest *d)
{
    int rc = 0;

    for (size_t i = 0; i < d->ndirs; i++) {
        int first_of_fs = 1;
        /* Batched, directories were made unsynced: syncfs covers them. */
        if (d->batched || d->ndirs > SYNC_DIRS_ONE_BY_ONE) {
            for (size_t k = 0; k < i && first_of_fs; k++)
                first_of_fs = d->dirs[k].dev != d->dirs[i].dev;
            if (rc == 0 && first_of_fs && io_syncfs(d->dirs[i].fd, d->root) != 0)
                rc = error_errno(d->root, "sync", errno);
        } else if (rc == 0) {
            rc = fsutil_fsync_dirfd(d->dirs[i].fd, d->root);
        }
        close(d->dirs[i].fd);
    }
    d->ndirs = 0;
    d->noted_gen = 0;
    return rc;
}

void
dest_keep_dirs(struct dest *d)
{
    size_t kept = 0;

    for (size_t i = 0; i < d->ndirs; i++) {
        int first_of_fs = 1;
        for (size_t k = 0; k < kept && first_of_fs; k++)
            first_of_fs = d->dirs[k].dev != d->dirs[i].dev;
        if (first_of_fs)
            d->dirs[kept++] = d->dirs[i];
        else
            close(d->dirs[i].fd);
    }
    d->ndirs = kept;
    d->noted_gen = 0;
}

int
dest_sync_all(struct dest *d)
{
    if (io_syncfs(d->rootfd, d->root) != 0)
        return error_errno(d->root, "sync", errno);
    return 0;
}

int
dest_name_file(struct dest *d, struct dest_file *f, int force)
{
    int rc = 0;

    if (!f->device) {
        rc = durable_name(&f->tmp, f->base, force ? DURABLE_REPLACE : DURABLE_NOREPLACE);
        f->fd = -1;
        if (rc != 0) {
            error_subject(rc, f->display);
        } else if (f->dir_gen == 0 || f->dir_gen != d->noted_gen) {
            /* (The files of one directory come one after another: it is
             * noted once, not stat'ed again for each.) */
            if ((rc = dest_note_dir(d, f->dirfd)) == 0)
                d->noted_gen = f->dir_gen;
        }
    }
    dest_close_file(f);
    return rc;
}

int
dest_commit_file(struct dest_file *f, const struct durable_meta *meta, int force)
{
    int rc;

    if (f->device) {
        dest_close_file(f);
        return 0;
    }
    rc = durable_commit(&f->tmp, f->base, force ? DURABLE_REPLACE : DURABLE_NOREPLACE, meta);
    f->fd = -1;
    if (rc == 0)
        rc = fsutil_fsync_dirfd(f->dirfd, f->display);
    else
        error_subject(rc, f->display);
    dest_close_file(f);
    return rc;
}

void
dest_close_file(struct dest_file *f)
{
    if (f->device) {
        if (f->fd >= 0)
            close(f->fd);
    } else {
        durable_abort(&f->tmp);
    }
    f->fd = -1;
    f->device = 0;
    if (f->dirfd >= 0)
        close(f->dirfd);
    f->dirfd = -1;
    free(f->display);
    f->display = NULL;
}

/* below(path, prefix): whether ${path} is ${prefix} or below it. */
static int
below(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);

    return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int
dest_exists(struct dest *d, const char *rel)
{
    char dir[4096];
    const char *base;
    struct stat st;
    int fd, rc;

    if (split(rel, dir, sizeof(dir), &base) != 0)
        return 0;
    /* A tree asked about file by file (the check before a restore): its
     * directories held open, and nothing asked again below one that is
     * absent. */
    if (d->missing != NULL && below(dir, d->missing))
        return 0;
    if (d->probe == NULL) {
        if ((d->probe = malloc(sizeof(*d->probe))) == NULL)
            return 0;
        fsutil_dirs_init(d->probe, d->rootfd, d->root, FSUTIL_NOCREATE, 0755);
    }
    if ((rc = fsutil_dirs_open(d->probe, dir, &fd)) != 0) {
        /* The component after those held is the one absent. */
        size_t held = strlen(d->probe->path), end = held + (held > 0);
        while (dir[end] != '\0' && dir[end] != '/')
            end++;
        free(d->missing);
        /* (Only when the walk failed among the directories it holds.) */
        d->missing = rc == PQV_E_NOTFOUND && d->probe->depth < FSUTIL_DIRS_DEPTH
            ? strndup(dir, end) : NULL;
        pqv_error_clear();
        return 0; /* the failure, if it is one, shows when writing */
    }
    return fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
}


int
dest_make_dir(struct dest *d, const char *rel)
{
    int fd, rc;

    forget_probe(d);
    if ((rc = fsutil_open_dirs(d->rootfd, d->root, rel, d->batched ? FSUTIL_CREATE : FSUTIL_CREATE_SYNC,
             0755, &fd)) != 0)
        return rc;
    close(fd);
    return 0;
}

int
dest_open_dir(struct dest *d, const char *rel, int *fd)
{
    return fsutil_open_dirs(d->rootfd, d->root, rel, FSUTIL_NOCREATE, 0755, fd);
}

int
dest_set_dir_meta(struct dest *d, const char *rel, const char *display,
    const struct durable_meta *meta)
{
    struct timespec times[2] = { meta->mtime, meta->mtime };
    int fd, rc;

    if ((rc = fsutil_open_dirs(d->rootfd, d->root, rel, FSUTIL_NOCREATE, 0755, &fd)) != 0)
        return rc;
    /* Owner, mode, attributes, times (as durable_set_meta). */
    if (meta->set_owner && io_fchown(fd, meta->uid, meta->gid, display) != 0)
        rc = error_errno(display, "chown", errno);
    else if (io_fchmod(fd, meta->mode & 07777, display) != 0)
        rc = error_errno(display, "chmod", errno);
    if (rc == 0 && meta->attrs != NULL)
        meta->attrs(fd, meta->attrs_ctx);
    if (rc == 0 && io_futimens(fd, times, display) != 0)
        rc = error_errno(display, "set times", errno);
    else if (rc == 0 && !d->batched)
        rc = fsutil_fsync_dirfd(fd, display); /* its mode and times */
    close(fd);
    return rc;
}

/* open_parent(d, rel, display, create, dirfd, base): the directory of
 * ${rel} (walked without following links) and its last component. */
static int
open_parent(struct dest *d, const char *rel, int create, int *dirfd, const char **base)
{
    char dir[4096];
    int rc;

    if ((rc = split(rel, dir, sizeof(dir), base)) != 0)
        return rc;
    return fsutil_open_dirs(d->rootfd, d->root, dir,
        !create ? FSUTIL_NOCREATE : d->batched ? FSUTIL_CREATE : FSUTIL_CREATE_SYNC,
        0755, dirfd);
}

/* in_the_way(dirfd, base, display, force): may ${base} be (re)placed? */
static int
in_the_way(int dirfd, const char *base, const char *display, int force)
{
    struct stat st;

    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : error_errno(display, "stat", errno);
    if (S_ISDIR(st.st_mode))
        return error_set(PQV_E_EXISTS, display, "is a directory");
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        return error_set(PQV_E_EXISTS, display, "exists and is not a regular file");
    if (!force)
        return error_set(PQV_E_EXISTS, display, "%s",
            S_ISLNK(st.st_mode) ? "exists (a symbolic link)" : "already exists");
    return 0;
}

int
dest_symlink(struct dest *d, const char *rel, const char *display, const char *target, int force,
    const struct durable_meta *meta)
{
    char temp[DURABLE_TEMP_MAX];
    struct timespec times[2];
    const char *base;
    uint8_t r[8];
    char hex[17];
    int dirfd, rc;

    if ((rc = open_parent(d, rel, 1, &dirfd, &base)) != 0)
        return rc;
    if ((rc = in_the_way(dirfd, base, display, force)) != 0)
        goto done;
    /* Made under a temporary name, then renamed: an existing name is
     * replaced (with force) at once or not at all. */
    if ((rc = util_random(r, sizeof(r))) != 0)
        goto done;
    util_hex_encode(hex, r, sizeof(r));
    snprintf(temp, sizeof(temp), ".%.200s.pqvault.tmp-%s", base, hex);
    if (io_symlinkat(target, dirfd, temp, display) != 0) {
        rc = error_errno(display, "symlink", errno);
        goto done;
    }
    times[0] = times[1] = meta->mtime;
    if (meta->set_owner && io_lchownat(dirfd, temp, meta->uid, meta->gid, display) != 0)
        rc = error_errno(display, "chown", errno);
    else if (io_lutimensat(dirfd, temp, times, display) != 0)
        rc = error_errno(display, "set times", errno);
    else if (io_renameat(dirfd, temp, dirfd, base, force ? 0 : RENAME_NOREPLACE, display) != 0)
        rc = errno == EEXIST ? error_set(PQV_E_EXISTS, display, "already exists")
                             : error_errno(display, "rename", errno);
    if (rc != 0)
        (void)unlinkat(dirfd, temp, 0);
    else
        rc = dest_note_dir(d, dirfd);
done:
    close(dirfd);
    return rc;
}

int
dest_node(struct dest *d, const char *rel, const char *display, mode_t type, dev_t rdev,
    int force, const struct durable_meta *meta)
{
    char temp[DURABLE_TEMP_MAX], proc[64];
    struct timespec times[2];
    struct stat st;
    const char *base;
    uint8_t r[8];
    char hex[17];
    int dirfd, fd = -1, rc;

    if ((rc = open_parent(d, rel, 1, &dirfd, &base)) != 0)
        return rc;
    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode))
            rc = error_set(PQV_E_EXISTS, display, "is a directory");
        else if (!force)
            rc = error_set(PQV_E_EXISTS, display, "%s",
                S_ISLNK(st.st_mode) ? "exists (a symbolic link)" : "already exists");
    } else if (errno != ENOENT) {
        rc = error_errno(display, "stat", errno);
    }
    if (rc != 0 || (rc = util_random(r, sizeof(r))) != 0)
        goto done;
    util_hex_encode(hex, r, sizeof(r));
    snprintf(temp, sizeof(temp), ".%.200s.pqvault.tmp-%s", base, hex);
    /* Made owner-only: nobody opens it before it has its owner and mode. */
    if (mknodat(dirfd, temp, type | 0600, type == S_IFIFO ? 0 : rdev) != 0) {
        rc = error_errno(display, type == S_IFIFO ? "mkfifo" : "mknod", errno);
        goto done;
    }
    /* The node itself, never opened for I/O; what is set is set on it
     * through this descriptor (the name could be replaced meanwhile). */
    if ((fd = openat(dirfd, temp, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0 ||
        (st.st_mode & S_IFMT) != type || (type != S_IFIFO && st.st_rdev != rdev)) {
        rc = error_set(PQV_E_IO, display, "the node made was replaced");
        goto remove;
    }
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    times[0] = times[1] = meta->mtime;
    if (meta->set_owner && fchownat(fd, "", meta->uid, meta->gid, AT_EMPTY_PATH) != 0)
        rc = error_errno(display, "chown", errno);
    else if (chmod(proc, meta->mode & 07777) != 0)
        rc = error_errno(display, "chmod", errno);
    if (rc != 0)
        goto remove;
    if (meta->attrs != NULL)
        meta->attrs(fd, meta->attrs_ctx);
    if (utimensat(AT_FDCWD, proc, times, 0) != 0)
        rc = error_errno(display, "set times", errno);
    else if (io_renameat(dirfd, temp, dirfd, base, force ? 0 : RENAME_NOREPLACE, display) != 0)
        rc = errno == EEXIST ? error_set(PQV_E_EXISTS, display, "already exists")
                             : error_errno(display, "rename", errno);
remove:
    if (rc != 0)
        (void)unlinkat(dirfd, temp, 0);
    else
        rc = dest_note_dir(d, dirfd);
done:
    if (fd >= 0)
        close(fd);
    close(dirfd);
    return rc;
}

int
dest_hardlink(struct dest *d, const char *existing, const char *rel, const char *display, int force)
{
    const char *from_base, *base;
    int from_dir, dirfd, rc;

    if ((rc = open_parent(d, existing, 0, &from_dir, &from_base)) != 0)
        return rc;
    if ((rc = open_parent(d, rel, 1, &dirfd, &base)) != 0) {
        close(from_dir);
        return rc;
    }
    if ((rc = in_the_way(dirfd, base, display, force)) == 0) {
        if (force)
            (void)io_unlinkat(dirfd, base, 0, display);
        if (io_linkat(from_dir, from_base, dirfd, base, display) != 0)
            rc = error_errno(display, "link", errno);
        else
            rc = dest_note_dir(d, dirfd);
    }
    close(from_dir);
    close(dirfd);
    return rc;
}
