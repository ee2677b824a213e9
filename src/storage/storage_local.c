/*
 * storage_local.c: the local-directory storage backend (see
 * pqvault/storage.h).
 *
 * Every blob is reached from a descriptor of the vault's directory, one
 * component at a time, never following a symbolic link (a vault directory
 * may be written by someone else: a link planted at "lock" or in "objects/"
 * must not make pqvault write or read outside it), and only regular files
 * are read, without blocking on a FIFO.
 *
 * put writes "<dir>/<base>.tmp-<random>", fsyncs it and renames it to its
 * name (util/durable.h); put_new links it instead (create-only).  The
 * directory that received the name is remembered as dirty and fsynced once
 * by the next barrier (once per directory per command, as the commit
 * protocol allows).  The writer lock (storage_local_lock.c) is an flock on
 * <dir>/lock; the reserve (storage_local_reserve.c) is room kept aside for
 * a full disk; neither is ever listed.  The state all three share is in
 * storage/storage_local_internal.h.
 */
#include "pqvault/storage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/durable.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "util/util.h"

#include "storage/storage_local_internal.h"

/* split_name(name, dir, base): the directory part ("" at the top) and the
 * base name of the storage name ${name}, refusing anything that could step
 * outside the root (names come from the vault, but a listing of a hostile
 * directory could hand back anything). */
static int
split_name(const char *name, char dir[NAME_MAX_LEN], const char **base)
{
    const char *slash = strrchr(name, '/');
    size_t n = strlen(name);

    if (n == 0 || n >= NAME_MAX_LEN || name[0] == '/' || strstr(name, "..") != NULL ||
        name[n - 1] == '/')
        return error_set(PQV_E_INVAL, name, "invalid storage name");
    if (slash == NULL) {
        dir[0] = '\0';
        *base = name;
    } else {
        snprintf(dir, NAME_MAX_LEN, "%.*s", (int)(slash - name), name);
        *base = slash + 1;
    }
    return 0;
}

void
storage_local_path(struct local_storage *ls, const char *name, char out[2 * NAME_MAX_LEN + 4096])
{
    snprintf(out, 2 * NAME_MAX_LEN + 4096, "%s/%s", ls->root, name);
}

/* mark_dirty(ls, dir): remember ${dir} for the next barrier. */
static int
mark_dirty(struct local_storage *ls, const char *dir)
{
    int rc = 0;

    pthread_mutex_lock(&ls->mutex);
    for (size_t i = 0; i < ls->ndirty; i++)
        if (strcmp(ls->dirty[i], dir) == 0)
            goto out;
    if (ls->ndirty == MAX_DIRTY) {
        /* Too many distinct directories: sync the oldest now. */
        int fd;
        if ((rc = fsutil_open_dirs(ls->rootfd, ls->root, ls->dirty[0], FSUTIL_NOCREATE, 0700,
                 &fd)) == 0) {
            rc = fsutil_fsync_dirfd(fd, ls->root);
            close(fd);
        }
        free(ls->dirty[0]);
        memmove(ls->dirty, ls->dirty + 1, (MAX_DIRTY - 1) * sizeof(char *));
        ls->ndirty--;
        if (rc != 0)
            goto out;
    }
    if ((ls->dirty[ls->ndirty] = strdup(dir)) == NULL)
        rc = PQV_E_NOMEM;
    else
        ls->ndirty++;
out:
    pthread_mutex_unlock(&ls->mutex);
    return rc;
}

/* dir_seen(ls, dir, add): whether ${dir}'s entry was already scheduled to
 * be made durable in its parent in this session; with ${add}, remember
 * that it now is.  (Two threads may both do the work once: harmless.) */
static int
dir_seen(struct local_storage *ls, const char *dir, int add)
{
    int seen = 0;

    pthread_mutex_lock(&ls->mutex);
    for (size_t i = 0; i < ls->nseen && !seen; i++)
        seen = strcmp(ls->seen[i], dir) == 0;
    if (!seen && add && ls->nseen < MAX_DIRTY) {
        char *copy = strdup(dir);
        if (copy != NULL)
            ls->seen[ls->nseen++] = copy;
    }
    pthread_mutex_unlock(&ls->mutex);
    return seen;
}

/* dir_get(ls, dir, create, fd, owned): a descriptor of ${dir} below the
 * root, walked without following links (created if ${create}): a cached one
 * (*${owned} 0: do not close it) or a new one (*${owned} 1). */
static int
dir_get(struct local_storage *ls, const char *dir, int create, int *fd, int *owned)
{
    int rc, cached = -1;

    pthread_mutex_lock(&ls->dirs_mutex);
    for (size_t i = 0; i < ls->ndirs && cached < 0; i++)
        if (strcmp(ls->dirs[i].name, dir) == 0)
            cached = ls->dirs[i].fd;
    pthread_mutex_unlock(&ls->dirs_mutex);
    if (cached >= 0) {
        *fd = cached;
        *owned = 0;
        return 0;
    }
    if ((rc = fsutil_open_dirs(ls->rootfd, ls->root, dir, create ? FSUTIL_CREATE : FSUTIL_NOCREATE,
             0700, fd)) != 0)
        return rc;
    *owned = 1;
    pthread_mutex_lock(&ls->dirs_mutex);
    if (ls->ndirs < MAX_CACHED_DIRS) {
        char *copy = strdup(dir);
        if (copy != NULL) {
            /* Another thread may have cached it meanwhile: a second entry
             * is harmless (both stay open until close). */
            ls->dirs[ls->ndirs].name = copy;
            ls->dirs[ls->ndirs].fd = *fd;
            ls->ndirs++;
            *owned = 0;
        }
    }
    pthread_mutex_unlock(&ls->dirs_mutex);
    return 0;
}

static void
dir_put(int fd, int owned)
{
    if (owned)
        close(fd);
}

/* open_dir(ls, dir, create, out, owned): a descriptor of ${dir} below the root.
 * When creating, each directory's entry in its parent is made durable once
 * per session (new ones at creation, existing ones at the next barrier: a
 * command that crashed after creating one may never have synced its
 * parent). */
static int
open_dir(struct local_storage *ls, const char *dir, int create, int *out, int *owned)
{
    char parent[NAME_MAX_LEN], d[NAME_MAX_LEN];
    int rc;

    if ((rc = dir_get(ls, dir, create, out, owned)) != 0)
        return rc;
    snprintf(d, sizeof(d), "%s", dir);
    while (create && d[0] != '\0' && !dir_seen(ls, d, 0)) {
        char *slash = strrchr(d, '/');
        snprintf(parent, sizeof(parent), "%.*s", slash != NULL ? (int)(slash - d) : 0, d);
        if ((rc = mark_dirty(ls, parent)) != 0) {
            dir_put(*out, *owned);
            return rc;
        }
        dir_seen(ls, d, 1);
        memcpy(d, parent, strlen(parent) + 1);
    }
    return 0;
}

/* put_as(s, name, data, len, how): put or put_new. */
static int
put_as(pqv_storage *s, const char *name, const uint8_t *data, size_t len, int how)
{
    struct local_storage *ls = (struct local_storage *)s;
    char dir[NAME_MAX_LEN], what[2 * NAME_MAX_LEN + 4096];
    const char *base;
    int dfd, owned, rc;

    if ((rc = split_name(name, dir, &base)) != 0)
        return rc;
    if ((rc = open_dir(ls, dir, 1, &dfd, &owned)) != 0)
        return rc;
    storage_local_path(ls, name, what);
    /* Inbox files may be written by another user (a write-only writer)
     * and read by the vault's owner: readable by all (they are sealed);
     * a batch's directory lets the owner remove its packs without listing
     * it (docs/SECURITY.md, deployment). */
    int inbox = strncmp(name, "inbox/", 6) == 0;
    if (inbox && strchr(name + 6, '/') != NULL) {
        struct stat st;
        if (fstat(dfd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 07777) != 0733)
            (void)fchmod(dfd, 0733);
    }
    /* A shared inbox's config (PQV_INIT_SHARED_INBOX) stays readable by
     * the writers when it is rewritten (upgrade). */
    int shared = 0;
    if (strcmp(name, "config") == 0) {
        struct stat st;
        shared = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            (st.st_mode & 0004) != 0;
    }
    rc = durable_write_file(dfd, base, what, data, len, inbox || shared ? 0644 : 0600, how);
    dir_put(dfd, owned);
    if (rc != 0)
        return rc;
    return mark_dirty(ls, dir);
}

static int
local_put(pqv_storage *s, const char *name, const uint8_t *data, size_t len)
{
    return put_as(s, name, data, len, DURABLE_REPLACE);
}

/* Create-only: the synced temporary is link(2)ed to its name, which fails
 * with EEXIST if the name exists (even if another writer created it a
 * moment ago). */
static int
local_put_new(pqv_storage *s, const char *name, const uint8_t *data, size_t len)
{
    return put_as(s, name, data, len, DURABLE_CREATE);
}

/* with_dir(ls, name, dfd, owned, base): the directory of ${name}. */
static int
with_dir(struct local_storage *ls, const char *name, int *dfd, int *owned, const char **base)
{
    char dir[NAME_MAX_LEN];
    int rc;

    if ((rc = split_name(name, dir, base)) != 0)
        return rc;
    if ((rc = dir_get(ls, dir, 0, dfd, owned)) != 0)
        return error_subject(rc == PQV_E_INVAL ? PQV_E_INTEGRITY : rc, name);
    return 0;
}

static int
local_get(pqv_storage *s, const char *name, uint8_t **data, size_t *len, size_t maxlen)
{
    const char *base;
    int dfd, owned, rc;

    if ((rc = with_dir((struct local_storage *)s, name, &dfd, &owned, &base)) != 0)
        return rc;
    rc = fsutil_read_file(dfd, base, data, len, maxlen);
    dir_put(dfd, owned);
    return rc != 0 ? error_subject(rc, name) : 0;
}

/* file_take(ls, name, slot): a cached descriptor of pack ${name}, opened
 * if need be (-1 in *${slot}: not cached, the caller reads as before). */
static int
file_take(struct local_storage *ls, const char *name, int *slot)
{
    const char *base;
    int dfd, owned, fd, rc, free_slot = -1;

    *slot = -1;
    if (strncmp(name, "packs/", 6) != 0)
        return 0;
    pthread_mutex_lock(&ls->files_mutex);
    for (int i = 0; i < MAX_CACHED_FILES; i++)
        if (ls->files[i].name != NULL && strcmp(ls->files[i].name, name) == 0) {
            ls->files[i].users++;
            ls->files[i].used = ++ls->files_clock;
            *slot = i;
            pthread_mutex_unlock(&ls->files_mutex);
            return 0;
        }
    pthread_mutex_unlock(&ls->files_mutex);
    if ((rc = with_dir(ls, name, &dfd, &owned, &base)) != 0)
        return rc;
    rc = fsutil_open_regular(dfd, base, &fd, NULL);
    dir_put(dfd, owned);
    if (rc != 0)
        return error_subject(rc, name);
    pthread_mutex_lock(&ls->files_mutex);
    for (int i = 0; i < MAX_CACHED_FILES; i++)
        if (ls->files[i].users == 0 && (free_slot < 0 || ls->files[i].name == NULL ||
                (ls->files[free_slot].name != NULL && ls->files[i].used < ls->files[free_slot].used)))
            free_slot = i;
    if (free_slot >= 0) {
        char *copy = strdup(name);
        if (copy != NULL) {
            if (ls->files[free_slot].name != NULL) {
                free(ls->files[free_slot].name);
                close(ls->files[free_slot].fd);
            }
            ls->files[free_slot].name = copy;
            ls->files[free_slot].fd = fd;
            ls->files[free_slot].users = 1;
            ls->files[free_slot].used = ++ls->files_clock;
            *slot = free_slot;
            fd = -1;
        }
    }
    pthread_mutex_unlock(&ls->files_mutex);
    if (fd >= 0)
        close(fd); /* (all busy: the caller reads without the cache) */
    return 0;
}

static void
file_put(struct local_storage *ls, int slot)
{
    pthread_mutex_lock(&ls->files_mutex);
    ls->files[slot].users--;
    pthread_mutex_unlock(&ls->files_mutex);
}

/* file_drop(ls, name): a pack deleted: out of the cache. */
static void
file_drop(struct local_storage *ls, const char *name)
{
    pthread_mutex_lock(&ls->files_mutex);
    for (int i = 0; i < MAX_CACHED_FILES; i++)
        if (ls->files[i].name != NULL && ls->files[i].users == 0 &&
            strcmp(ls->files[i].name, name) == 0) {
            free(ls->files[i].name);
            close(ls->files[i].fd);
            ls->files[i].name = NULL;
        }
    pthread_mutex_unlock(&ls->files_mutex);
}

static int
local_get_range(pqv_storage *s, const char *name, uint64_t offset, uint8_t *buf, size_t len)
{
    struct local_storage *ls = (struct local_storage *)s;
    const char *base;
    int dfd, owned, rc, slot;

    if ((rc = file_take(ls, name, &slot)) != 0)
        return rc;
    if (slot >= 0) {
        ssize_t got = fsutil_pread_all(ls->files[slot].fd, buf, len, offset, name);
        file_put(ls, slot);
        if (got < 0)
            return (int)got;
        if ((size_t)got < len)
            return error_set(PQV_E_INTEGRITY, name, "shorter than expected");
        return 0;
    }
    if ((rc = with_dir(ls, name, &dfd, &owned, &base)) != 0)
        return rc;
    rc = fsutil_read_file_range(dfd, base, offset, buf, len);
    dir_put(dfd, owned);
    return rc != 0 ? error_subject(rc, name) : 0;
}

static int
local_stat(pqv_storage *s, const char *name, uint64_t *size)
{
    struct stat st;
    const char *base;
    int dfd, owned, rc;

    if ((rc = with_dir((struct local_storage *)s, name, &dfd, &owned, &base)) != 0)
        return rc;
    rc = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW);
    dir_put(dfd, owned);
    if (rc != 0)
        return error_errno(name, "stat", errno);
    if (!S_ISREG(st.st_mode))
        return error_set(PQV_E_INTEGRITY, name, "not a regular file");
    if (size != NULL)
        *size = (uint64_t)st.st_size;
    return 0;
}

/* A listing's bounds: names given (PQV_STORAGE_LIST_MAX) and the depth of
 * directories entered (the vault's names are at most three deep). */
#define LIST_MAX_DEPTH 8

struct listing {
    pqv_storage_list_fn fn;
    void *ctx;
    uint64_t n, max;
    const char *prefix;
};

static int
list_give(struct listing *l, const char *name, uint64_t size)
{
    if (++l->n > l->max)
        return error_set(PQV_E_LIMIT, l->prefix, "holds more than %llu names, more than a "
            "vault writes: refused", (unsigned long long)l->max);
    return l->fn(l->ctx, name, size);
}

/* list_dir(ls, rel, l, depth): give every regular file under the relative
 * directory ${rel} to ${l}, recursing into subdirectories (never into
 * links) from ${depth} 1 to LIST_MAX_DEPTH (depth 0: the top level only;
 * a directory deeper is given as not a blob). */
static int
list_dir(struct local_storage *ls, const char *rel, struct listing *l, int depth)
{
    char child[NAME_MAX_LEN];
    struct dirent *de;
    DIR *d;
    int dfd, rc;

    if ((rc = fsutil_open_dirs(ls->rootfd, ls->root, rel, FSUTIL_NOCREATE, 0700, &dfd)) != 0)
        return rc == PQV_E_NOTFOUND ? 0 : rc;
    if ((d = fdopendir(dfd)) == NULL) {
        close(dfd);
        return error_errno(rel, "open directory", errno);
    }
    while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (snprintf(child, sizeof(child), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >=
            (int)sizeof(child))
            continue;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* vanished meanwhile */
        if (S_ISDIR(st.st_mode)) {
            if (depth >= LIST_MAX_DEPTH)
                rc = list_give(l, child, PQV_STORAGE_NOT_A_BLOB);
            else if (depth > 0)
                rc = list_dir(ls, child, l, depth + 1);
        } else if (depth == 0 && (strcmp(child, "lock") == 0 || strcmp(child, RESERVE_NAME) == 0)) {
            continue; /* the lock file and the reserve are not blobs (the
                         reserve's state is reserve()'s to tell) */
        } else {
            /* Anything else is shown, so that a link or FIFO planted in the
             * vault is reported rather than silently ignored. */
            rc = list_give(l, child, S_ISREG(st.st_mode) ? (uint64_t)st.st_size
                                                        : PQV_STORAGE_NOT_A_BLOB);
        }
    }
    if (rc == 0 && errno != 0)
        rc = error_errno(rel, "readdir", errno);
    closedir(d);
    return rc;
}

static int
local_list(pqv_storage *s, const char *prefix, pqv_storage_list_fn fn, void *ctx)
{
    struct local_storage *ls = (struct local_storage *)s;
    char dir[NAME_MAX_LEN];
    size_t n = strlen(prefix);
    struct listing l = { fn, ctx, 0, PQV_STORAGE_LIST_MAX, NULL };

#ifdef PQV_TEST_HOOKS
    {
        /* The test build may lower the bound (tests/cli/list_bounds.sh). */
        const char *lm = getenv("PQVAULT_TEST_LIST_MAX");
        if (lm != NULL && strtoull(lm, NULL, 10) > 0)
            l.max = strtoull(lm, NULL, 10);
    }
#endif
    /* Prefixes are directory names in this backend ("records"). */
    snprintf(dir, sizeof(dir), "%.*s", (int)(n > 0 && prefix[n - 1] == '/' ? n - 1 : n), prefix);
    l.prefix = dir[0] != '\0' ? dir : ls->root;
    /* The empty prefix lists the top-level blobs only. */
    return list_dir(ls, dir, &l, dir[0] != '\0' ? 1 : 0);
}

static int
local_del(pqv_storage *s, const char *name)
{
    struct local_storage *ls = (struct local_storage *)s;
    char dir[NAME_MAX_LEN], what[2 * NAME_MAX_LEN + 4096];
    const char *base;
    int dfd, owned, rc;

    if ((rc = split_name(name, dir, &base)) != 0)
        return rc;
    if ((rc = dir_get(ls, dir, 0, &dfd, &owned)) != 0)
        return error_subject(rc, name);
    storage_local_path(ls, name, what);
    file_drop(ls, name);
    rc = io_unlinkat(dfd, base, 0, what);
    dir_put(dfd, owned);
    if (rc != 0)
        return error_errno(name, "unlink", errno);
    if (strncmp(dir, "inbox/", 6) == 0 && strchr(dir + 6, '/') == NULL) {
        /* The last pack of an inbox batch: its directory goes too (if
         * empty; the cached descriptor stays valid until close). */
        int pfd;
        if (dir_get(ls, "inbox", 0, &pfd, &owned) == 0) {
            if (unlinkat(pfd, dir + 6, AT_REMOVEDIR) == 0)
                rc = mark_dirty(ls, "inbox");
            dir_put(pfd, owned);
        }
        if (rc != 0)
            return rc;
    }
    return mark_dirty(ls, dir);
}

/* sync_fs(ls, what): syncfs of the vault's file system, for directories
 * that cannot be opened for reading (search-only: a write-only writer's
 * view).  Through the root if it is readable, else through the config (the
 * one file such a writer reads). */
static int
sync_fs(struct local_storage *ls, const char *what)
{
    int fd = ls->rootfd, rc = 0;

    if ((fcntl(fd, F_GETFL) & O_PATH) != 0 &&
        (fd = openat(ls->rootfd, "config", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
        return error_errno(what, "open for syncfs", errno);
    if (syncfs(fd) != 0)
        rc = error_errno(what, "syncfs", errno);
    if (fd != ls->rootfd)
        close(fd);
    return rc;
}

static int
local_barrier(pqv_storage *s)
{
    struct local_storage *ls = (struct local_storage *)s;
    int rc = 0;
    size_t i;

    pthread_mutex_lock(&ls->mutex);
    /* Parents were marked before the directories created in them, so
     * syncing in order makes each new directory durable in its parent. */
    for (i = 0; i < ls->ndirty && rc == 0; i++) {
        char what[2 * NAME_MAX_LEN + 4096];
        int fd, owned;
        if (ls->dirty[i][0] == '\0') {
            rc = (fcntl(ls->rootfd, F_GETFL) & O_PATH) != 0 ? sync_fs(ls, ls->root)
                : fsutil_fsync_dirfd(ls->rootfd, ls->root);
        } else if ((rc = dir_get(ls, ls->dirty[i], 0, &fd, &owned)) == 0) {
            storage_local_path(ls, ls->dirty[i], what);
            if ((fcntl(fd, F_GETFL) & O_PATH) != 0) {
                /* A directory we may write but not read (a write-only
                 * writer's -wx inbox/): no descriptor to fsync it by;
                 * syncfs of the vault's file system instead. */
                rc = sync_fs(ls, what);
            } else {
                rc = fsutil_fsync_dirfd(fd, what);
            }
            dir_put(fd, owned);
        }
    }
    if (rc == 0) {
        for (i = 0; i < ls->ndirty; i++)
            free(ls->dirty[i]);
        ls->ndirty = 0;
    }
    pthread_mutex_unlock(&ls->mutex);
    return rc;
}

static void
local_close(pqv_storage *s)
{
    struct local_storage *ls = (struct local_storage *)s;

    if (ls == NULL)
        return;
    storage_local_lock_release(s);
    for (size_t i = 0; i < ls->ndirty; i++)
        free(ls->dirty[i]);
    for (size_t i = 0; i < ls->nseen; i++)
        free(ls->seen[i]);
    for (size_t i = 0; i < ls->ndirs; i++) {
        free(ls->dirs[i].name);
        close(ls->dirs[i].fd);
    }
    if (ls->rootfd >= 0)
        close(ls->rootfd);
    free(ls->root);
    for (int i = 0; i < MAX_CACHED_FILES; i++)
        if (ls->files[i].name != NULL) {
            free(ls->files[i].name);
            close(ls->files[i].fd);
        }
    pthread_mutex_destroy(&ls->mutex);
    pthread_mutex_destroy(&ls->dirs_mutex);
    pthread_mutex_destroy(&ls->files_mutex);
    free(ls);
}

static const struct pqv_storage_ops local_ops = {
    .version = PQV_STORAGE_OPS_VERSION,
    .put = local_put,
    .put_new = local_put_new,
    .get = local_get,
    .get_range = local_get_range,
    .stat = local_stat,
    .list = local_list,
    .del = local_del,
    .barrier = local_barrier,
    .lock = storage_local_lock_take,
    .unlock = storage_local_lock_release,
    .lock_probe = storage_local_lock_probe,
    .close = local_close,
    .reserve = storage_local_reserve,
};

int
pqv_storage_local_open(pqv_storage **out, const char *dir, int create)
{
    struct local_storage *ls;
    struct stat st;
    int rc, fd;

    if (out == NULL || dir == NULL || strlen(dir) >= 4000)
        return error_set(PQV_E_INVAL, NULL, "vault path too long");
    if (stat(dir, &st) != 0) {
        int e = errno;
        if (e != ENOENT || !create)
            return error_set(e == ENOENT ? PQV_E_NOVAULT : error_from_errno(e), dir, "%s",
                strerror(e));
        /* The vault's own location is the user's choice: links in it are
         * followed, as mkdir -p would. */
        if ((rc = fsutil_mkdirs(dir, 0700)) != 0)
            return rc;
    } else if (!S_ISDIR(st.st_mode)) {
        return error_set(PQV_E_NOVAULT, dir, "not a directory");
    }
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 && errno == EACCES)
        /* Searchable, not readable: a write-only writer's view (it opens
         * the config and creates under inbox/, never lists). */
        fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return error_errno(dir, "open directory", errno);
    if ((ls = calloc(1, sizeof(*ls))) == NULL) {
        close(fd);
        return PQV_E_NOMEM;
    }
    ls->rootfd = fd;
    if ((ls->root = strdup(dir)) == NULL) {
        close(fd);
        free(ls);
        return PQV_E_NOMEM;
    }
    pthread_mutex_init(&ls->mutex, NULL);
    pthread_mutex_init(&ls->dirs_mutex, NULL);
    pthread_mutex_init(&ls->files_mutex, NULL);
    ls->lock_fd = -1;
    ls->base.ops = &local_ops;
    *out = &ls->base;
    return 0;
}
