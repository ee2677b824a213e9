/*
 * storage_local.c: the local-directory storage backend (see
 * pqvault/storage.h).
 *
 * put writes "<dir>/<base>.tmp-<random>", fsyncs it and renames it to its
 * name; the directory that received the rename is remembered as dirty and
 * fsynced once by the next barrier (once per directory per command, as the
 * commit protocol allows).  Directories created on the way are made durable
 * in their parents the same way.  The writer lock is an flock on
 * <dir>/lock, so a dead holder never leaves it stale; the holder writes its
 * pid there for the error message of the next writer.
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
#include <unistd.h>

#include "util/fsutil.h"
#include "util/util.h"

#define PATH_MAX_LEN 4096
#define MAX_DIRTY 1024

struct local_storage {
    pqv_storage base;
    char *root;
    pthread_mutex_t mutex;
    char *dirty[MAX_DIRTY];  /* directories to fsync at the next barrier */
    size_t ndirty;
    char *seen[MAX_DIRTY];   /* directories whose entries were made durable */
    size_t nseen;
    int lock_fd;
};

static int
local_path(struct local_storage *ls, const char *name, char *out, size_t outlen)
{
    int n;

    /* Names come from the vault, never from users, but refuse anything
     * that could step outside the root all the same. */
    if (name[0] == '/' || strstr(name, "..") != NULL)
        return error_set(PQV_E_INVAL, name, "invalid storage name");
    n = snprintf(out, outlen, "%s/%s", ls->root, name);
    if (n < 0 || (size_t)n >= outlen)
        return error_set(PQV_E_INVAL, name, "path too long");
    return 0;
}

/* mark_dirty(ls, dir): remember ${dir} for the next barrier.  Caller holds
 * no lock. */
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
        rc = fsutil_fsync_dir(ls->dirty[0]);
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

/* ensure_dir(ls, dir): create ${dir} (and missing parents below the root)
 * and make sure its entry in its parent becomes durable at the next
 * barrier.  Also for a directory that already exists: a command that
 * crashed after creating it may never have synced its parent, so each
 * directory's parent is synced once per session. */
static int
ensure_dir(struct local_storage *ls, const char *dir)
{
    char parent[PATH_MAX_LEN];
    struct stat st;
    int rc, e;

    if (strlen(dir) <= strlen(ls->root))
        return 0;
    if (dir_seen(ls, dir, 0))
        return 0;
    fsutil_dirname(dir, parent, sizeof(parent));
    if ((rc = ensure_dir(ls, parent)) != 0)
        return rc;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return error_set(PQV_E_INTEGRITY, dir, "not a directory");
    } else if (io_mkdir(dir, 0700) != 0 && errno != EEXIST) {
        e = errno;
        return error_errno(dir, "mkdir", e);
    }
    if ((rc = mark_dirty(ls, parent)) == 0)
        dir_seen(ls, dir, 1);
    return rc;
}

static int
local_put(pqv_storage *s, const char *name, const uint8_t *data, size_t len)
{
    struct local_storage *ls = (struct local_storage *)s;
    char path[PATH_MAX_LEN], dir[PATH_MAX_LEN];
    int rc;

    if ((rc = local_path(ls, name, path, sizeof(path))) != 0)
        return rc;
    fsutil_dirname(path, dir, sizeof(dir));
    if ((rc = ensure_dir(ls, dir)) != 0)
        return rc;
    if ((rc = fsutil_write_file_atomic(path, data, len, 0600, 0)) != 0)
        return rc;
    return mark_dirty(ls, dir);
}

/* local_put_new(s, name, data, len): create-only put.  The temporary is
 * written and fsynced as for put, then link(2)ed to its name, which fails
 * with EEXIST if the name exists (even if another writer created it a
 * moment ago); the temporary is then removed. */
static int
local_put_new(pqv_storage *s, const char *name, const uint8_t *data, size_t len)
{
    struct local_storage *ls = (struct local_storage *)s;
    char path[PATH_MAX_LEN], dir[PATH_MAX_LEN];
    int rc;

    if ((rc = local_path(ls, name, path, sizeof(path))) != 0)
        return rc;
    fsutil_dirname(path, dir, sizeof(dir));
    if ((rc = ensure_dir(ls, dir)) != 0)
        return rc;
    if ((rc = fsutil_write_file_new(path, data, len, 0600)) != 0)
        return rc;
    return mark_dirty(ls, dir);
}

static int
local_get(pqv_storage *s, const char *name, uint8_t **data, size_t *len, size_t maxlen)
{
    struct local_storage *ls = (struct local_storage *)s;
    char path[PATH_MAX_LEN];
    int rc;

    if ((rc = local_path(ls, name, path, sizeof(path))) != 0)
        return rc;
    return fsutil_read_file(path, data, len, maxlen);
}

static int
local_get_range(pqv_storage *s, const char *name, uint64_t offset, uint8_t *buf, size_t len)
{
    struct local_storage *ls = (struct local_storage *)s;
    char path[PATH_MAX_LEN];
    int rc;

    if ((rc = local_path(ls, name, path, sizeof(path))) != 0)
        return rc;
    return fsutil_read_file_range(path, offset, buf, len);
}

static int
local_stat(pqv_storage *s, const char *name, uint64_t *size)
{
    struct local_storage *ls = (struct local_storage *)s;
    char path[PATH_MAX_LEN];
    struct stat st;
    int rc, e;

    if ((rc = local_path(ls, name, path, sizeof(path))) != 0)
        return rc;
    if (stat(path, &st) != 0) {
        e = errno;
        return error_set(error_from_errno(e), name, "%s", strerror(e));
    }
    if (!S_ISREG(st.st_mode))
        return error_set(PQV_E_INTEGRITY, name, "not a regular file");
    if (size != NULL)
        *size = (uint64_t)st.st_size;
    return 0;
}

/* list_dir(ls, rel, fn, ctx): call ${fn} for every regular file under the
 * relative directory ${rel}, recursing into subdirectories. */
static int
list_dir(struct local_storage *ls, const char *rel, pqv_storage_list_fn fn, void *ctx,
    int recurse)
{
    char path[PATH_MAX_LEN], child[PATH_MAX_LEN];
    struct dirent *de;
    DIR *d;
    int rc = 0, e;

    if ((rc = local_path(ls, rel, path, sizeof(path))) != 0)
        return rc;
    if ((d = opendir(path)) == NULL) {
        e = errno;
        if (e == ENOENT)
            return 0;
        return error_set(error_from_errno(e), rel, "%s", strerror(e));
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
            if (recurse)
                rc = list_dir(ls, child, fn, ctx, 1);
        } else if (S_ISREG(st.st_mode) && strcmp(child, "lock") != 0) {
            /* (the lock file is not a blob) */
            rc = fn(ctx, child, (uint64_t)st.st_size);
        }
    }
    if (rc == 0 && errno != 0) {
        e = errno;
        rc = error_errno(rel, "readdir", e);
    }
    closedir(d);
    return rc;
}

static int
local_list(pqv_storage *s, const char *prefix, pqv_storage_list_fn fn, void *ctx)
{
    struct local_storage *ls = (struct local_storage *)s;
    char dir[PATH_MAX_LEN];
    size_t n = strlen(prefix);

    /* Prefixes are directory names in this backend ("records"). */
    snprintf(dir, sizeof(dir), "%.*s", (int)(n > 0 && prefix[n - 1] == '/' ? n - 1 : n), prefix);
    /* The empty prefix lists the top-level blobs only. */
    return list_dir(ls, dir, fn, ctx, dir[0] != '\0');
}

static int
local_del(pqv_storage *s, const char *name)
{
    struct local_storage *ls = (struct local_storage *)s;
    char path[PATH_MAX_LEN], dir[PATH_MAX_LEN];
    int rc, e;

    if ((rc = local_path(ls, name, path, sizeof(path))) != 0)
        return rc;
    if (io_unlink(path) != 0) {
        e = errno;
        return error_errno(name, "unlink", e);
    }
    fsutil_dirname(path, dir, sizeof(dir));
    return mark_dirty(ls, dir);
}

static int
local_barrier(pqv_storage *s)
{
    struct local_storage *ls = (struct local_storage *)s;
    int rc = 0;

    pthread_mutex_lock(&ls->mutex);
    /* Deeper directories were marked after their parents were created, so
     * syncing in order makes each new directory durable in its parent. */
    size_t i;
    for (i = 0; i < ls->ndirty && rc == 0; i++)
        rc = fsutil_fsync_dir(ls->dirty[i]);
    if (rc == 0) {
        for (i = 0; i < ls->ndirty; i++)
            free(ls->dirty[i]);
        ls->ndirty = 0;
    }
    pthread_mutex_unlock(&ls->mutex);
    return rc;
}

static int
local_lock(pqv_storage *s, int wait, char *holder, size_t holderlen)
{
    struct local_storage *ls = (struct local_storage *)s;
    char path[PATH_MAX_LEN], buf[32];
    int fd, e;

    if (ls->lock_fd >= 0)
        return 0;
    snprintf(path, sizeof(path), "%s/lock", ls->root);
    if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
        e = errno;
        return error_set(error_from_errno(e), path, "%s", strerror(e));
    }
    while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
        e = errno;
        if (e == EINTR)
            continue;
        if (e == EWOULDBLOCK) {
            ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
            long pid = 0;
            if (n > 0) {
                buf[n] = '\0';
                pid = strtol(buf, NULL, 10);
            }
            close(fd);
            if (holder != NULL && holderlen > 0) {
                if (pid > 0)
                    snprintf(holder, holderlen, "pid %ld", pid);
                else
                    holder[0] = '\0';
            }
            if (pid > 0)
                return error_set(PQV_E_LOCKED, NULL, "vault is locked by another writer (pid %ld)", pid);
            return error_set(PQV_E_LOCKED, NULL, "vault is locked by another writer");
        }
        close(fd);
        return error_set(PQV_E_IO, path, "flock: %s", strerror(e));
    }
    /* Record our pid for the next writer's message (best effort: the lock
     * is the flock, not the contents). */
    int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) < 0) {
        /* ignored: informational only */
    }
    ls->lock_fd = fd;
    return 0;
}

static void
local_unlock(pqv_storage *s)
{
    struct local_storage *ls = (struct local_storage *)s;

    if (ls->lock_fd >= 0) {
        if (ftruncate(ls->lock_fd, 0) != 0) {
            /* ignored: the flock is what matters */
        }
        close(ls->lock_fd);
        ls->lock_fd = -1;
    }
}

static void
local_close(pqv_storage *s)
{
    struct local_storage *ls = (struct local_storage *)s;

    if (ls == NULL)
        return;
    local_unlock(s);
    for (size_t i = 0; i < ls->ndirty; i++)
        free(ls->dirty[i]);
    for (size_t i = 0; i < ls->nseen; i++)
        free(ls->seen[i]);
    pthread_mutex_destroy(&ls->mutex);
    free(ls->root);
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
    .lock = local_lock,
    .unlock = local_unlock,
    .close = local_close,
};

/* make_dirs(dir): create ${dir} and any missing parents, each made durable
 * in its own parent. */
static int
make_dirs(const char *dir)
{
    char parent[PATH_MAX_LEN];
    struct stat st;
    int rc, e;

    fsutil_dirname(dir, parent, sizeof(parent));
    if (strcmp(parent, dir) != 0 && stat(parent, &st) != 0 && errno == ENOENT &&
        (rc = make_dirs(parent)) != 0)
        return rc;
    if (io_mkdir(dir, 0700) != 0 && errno != EEXIST) {
        e = errno;
        return error_errno(dir, "mkdir", e);
    }
    return fsutil_fsync_dir(parent);
}

int
pqv_storage_local_open(pqv_storage **out, const char *dir, int create)
{
    struct local_storage *ls;
    struct stat st;
    int e, rc;

    if (out == NULL || dir == NULL || strlen(dir) >= PATH_MAX_LEN - 200)
        return error_set(PQV_E_INVAL, NULL, "vault path too long");
    if (stat(dir, &st) != 0) {
        e = errno;
        if (e != ENOENT || !create)
            return error_set(e == ENOENT ? PQV_E_NOVAULT : error_from_errno(e), dir, "%s", strerror(e));
        if ((rc = make_dirs(dir)) != 0)
            return rc;
    } else if (!S_ISDIR(st.st_mode)) {
        return error_set(PQV_E_NOVAULT, dir, "not a directory");
    }
    if ((ls = calloc(1, sizeof(*ls))) == NULL)
        return PQV_E_NOMEM;
    if ((ls->root = strdup(dir)) == NULL) {
        free(ls);
        return PQV_E_NOMEM;
    }
    pthread_mutex_init(&ls->mutex, NULL);
    ls->lock_fd = -1;
    ls->base.ops = &local_ops;
    *out = &ls->base;
    return 0;
}
