/*
 * durable.c: writing a file durably (see durable.h).
 */
#include "util/durable.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/io.h"
#include "util/util.h"

/*
 * The registry of temporaries being written, read by a signal handler: a
 * slot is claimed (FREE -> BUSY), filled, then published (ACTIVE); the
 * handler unlinks ACTIVE slots only, with unlinkat (async-signal-safe).
 * When full, a temporary is simply not registered (gc or the next get
 * removes it).
 */
#define REGISTRY_SLOTS 256
enum { SLOT_FREE = 0, SLOT_BUSY = 1, SLOT_ACTIVE = 2 };
static struct {
    int state;
    int dirfd;
    char temp[DURABLE_TEMP_MAX];
} registry[REGISTRY_SLOTS];

static int
registry_add(int dirfd, const char *temp)
{
    for (int i = 0; i < REGISTRY_SLOTS; i++) {
        int expect = SLOT_FREE;
        if (__atomic_compare_exchange_n(&registry[i].state, &expect, SLOT_BUSY, 0,
                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            registry[i].dirfd = dirfd;
            memcpy(registry[i].temp, temp, strlen(temp) + 1);
            __atomic_store_n(&registry[i].state, SLOT_ACTIVE, __ATOMIC_RELEASE);
            return i;
        }
    }
    return -1;
}

static void
registry_remove(int slot)
{
    if (slot >= 0)
        __atomic_store_n(&registry[slot].state, SLOT_FREE, __ATOMIC_RELEASE);
}

void
pqv_remove_temporaries(void)
{
    for (int i = 0; i < REGISTRY_SLOTS; i++)
        if (__atomic_load_n(&registry[i].state, __ATOMIC_ACQUIRE) == SLOT_ACTIVE)
            (void)unlinkat(registry[i].dirfd, registry[i].temp, 0);
}

/*
 * Temporary names: a random 64-bit base drawn once per process, plus a
 * counter.  Unpredictable to others as a random name is (a planted name
 * only makes O_EXCL fail), without a call to the random generator for each
 * of a restore's files (OpenSSL's asks the kernel for the pid every time).
 * A child of fork draws its own base.
 */
static pthread_mutex_t temp_mu = PTHREAD_MUTEX_INITIALIZER;
static int temp_ready, temp_atfork;
static uint64_t temp_base, temp_next;

static void temp_prepare(void) { pthread_mutex_lock(&temp_mu); }
static void temp_parent(void) { pthread_mutex_unlock(&temp_mu); }
static void
temp_child(void)
{
    temp_ready = 0;
    pthread_mutex_unlock(&temp_mu);
}

/* temp_suffix(out): the next temporary name's number. */
static int
temp_suffix(uint64_t *out)
{
    int rc = 0;

    pthread_mutex_lock(&temp_mu);
    if (!temp_ready) {
        uint8_t r[8];
        if (util_random(r, sizeof(r)) != 0) {
            rc = PQV_E_CRYPTO;
        } else {
            temp_base = util_load_be64(r);
            temp_next = 0;
            temp_ready = 1;
        }
        if (rc == 0 && !temp_atfork)
            temp_atfork = pthread_atfork(temp_prepare, temp_parent, temp_child) == 0;
    }
    if (rc == 0)
        *out = temp_base + temp_next++;
    pthread_mutex_unlock(&temp_mu);
    return rc;
}

int
durable_begin(struct durable *d, int dirfd, const char *name, const char *what, int flags,
    mode_t mode)
{
    uint8_t r[8];
    uint64_t suffix;
    char hex[17];
    int n;

    d->what = what != NULL ? what : name;
    d->dirfd = dirfd;
    d->fd = -1;
    d->temp[0] = '\0';
    d->slot = -1;
    if (temp_suffix(&suffix) != 0)
        return PQV_E_CRYPTO;
    util_store_be64(r, suffix);
    util_hex_encode(hex, r, sizeof(r));
    /* A long base name is cut so the temporary still fits NAME_MAX. */
    if (flags & DURABLE_HIDDEN)
        n = snprintf(d->temp, sizeof(d->temp), ".%.200s.pqvault.tmp-%s", name, hex);
    else
        n = snprintf(d->temp, sizeof(d->temp), "%s.tmp-%s", name, hex);
    if (n < 0 || (size_t)n >= sizeof(d->temp))
        return error_set(PQV_E_INVAL, d->what, "name too long");
    if ((d->fd = io_openat(dirfd, d->temp, O_WRONLY | O_CREAT | O_EXCL, mode, d->what)) < 0) {
        int e = errno;
        d->temp[0] = '\0';
        return error_errno(d->what, "create temporary file", e);
    }
    d->slot = registry_add(dirfd, d->temp);
    /* Held while we write: a later run tells a dead writer's leftover from
     * a live one's temporary (durable_stale). */
    if (flags & DURABLE_HIDDEN)
        (void)flock(d->fd, LOCK_EX | LOCK_NB);
    return 0;
}

/* give_name(d, name, how): rename or link the closed temporary. */
static int
give_name(struct durable *d, const char *name, int how)
{
    int e;

    if (how == DURABLE_REPLACE) {
        if (io_renameat(d->dirfd, d->temp, d->dirfd, name, 0, d->what) != 0)
            return error_errno(d->what, "rename", errno);
        d->temp[0] = '\0';
        return 0;
    }
    if (how == DURABLE_NOREPLACE &&
        io_renameat(d->dirfd, d->temp, d->dirfd, name, RENAME_NOREPLACE, d->what) == 0) {
        d->temp[0] = '\0';
        return 0;
    }
    /* Create-only, or a file system without RENAME_NOREPLACE: a link
     * fails if the name exists, everywhere. */
    if (how == DURABLE_NOREPLACE && errno != EINVAL)
        e = errno;
    else if (io_linkat(d->dirfd, d->temp, d->dirfd, name, d->what) != 0)
        e = errno;
    else
        return 0; /* the temporary is removed by the caller */
    if (e == EEXIST)
        return error_set(PQV_E_EXISTS, d->what, "already exists");
    return error_errno(d->what, how == DURABLE_CREATE ? "link" : "rename", e);
}

int
durable_set_meta(struct durable *d, const struct durable_meta *meta)
{
    struct timespec times[2] = { meta->mtime, meta->mtime };
    int rc;

    /* Owner first: chown clears the set-id bits that chmod then sets. */
    if (meta->set_owner && io_fchown(d->fd, meta->uid, meta->gid, d->what) != 0) {
        rc = error_errno(d->what, "chown", errno);
        goto fail;
    }
    if (io_fchmod(d->fd, meta->mode & 07777, d->what) != 0) {
        rc = error_errno(d->what, "chmod", errno);
        goto fail;
    }
    /* After the owner, which would clear security.capability. */
    if (meta->attrs != NULL)
        meta->attrs(d->fd, meta->attrs_ctx);
    if (io_futimens(d->fd, times, d->what) != 0) {
        rc = error_errno(d->what, "set times", errno);
        goto fail;
    }
    return 0;

fail:
    durable_abort(d);
    return rc;
}

int
durable_sync(struct durable *d)
{
    int rc;

    if (io_fsync(d->fd, d->what) != 0) {
        rc = error_errno(d->what, "fsync", errno);
        durable_abort(d);
        return rc;
    }
    return 0;
}

int
durable_name(struct durable *d, const char *name, int how)
{
    int rc, e;

    /* Named while still open: its flock guards it until it has its name. */
    if ((rc = give_name(d, name, how)) != 0) {
        durable_abort(d);
        return rc;
    }
    e = close(d->fd);
    d->fd = -1;
    durable_abort(d); /* removes the temporary left by a link */
    if (e != 0)
        return error_errno(name, "close", errno); /* (synced: the data is there) */
    return 0;
}

int
durable_commit(struct durable *d, const char *name, int how, const struct durable_meta *meta)
{
    int rc;

    if (meta != NULL && (rc = durable_set_meta(d, meta)) != 0)
        return rc;
    if ((rc = durable_sync(d)) != 0)
        return rc;
    return durable_name(d, name, how);
}

void
durable_abort(struct durable *d)
{
    if (d->temp[0] != '\0')
        (void)unlinkat(d->dirfd, d->temp, 0); /* best effort: gc finds it */
    registry_remove(d->slot);
    d->slot = -1;
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
    d->temp[0] = '\0';
}

int
durable_stale(int dirfd, const char *name)
{
    static const char mark[] = ".pqvault.tmp-";
    const char *m = strstr(name, mark);
    struct stat st;
    int fd, stale;

    if (name[0] != '.' || m == NULL || strlen(m + sizeof(mark) - 1) != 16 ||
        strspn(m + sizeof(mark) - 1, "0123456789abcdef") != 16)
        return 0;
    /* Only a regular file is opened: a device node of that name (planted,
     * or a restore's node left by a killed get) is never opened (opening
     * a device can act on it). */
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        (fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
        return 0;
    stale = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return stale;
}

int
durable_write_file(int dirfd, const char *name, const char *what, const void *buf, size_t len,
    mode_t mode, int how)
{
    struct durable d;
    int rc;

    if ((rc = durable_begin(&d, dirfd, name, what, 0, mode)) != 0)
        return rc;
    /* A mode readable by others (inbox files, read by the vault's owner
     * when another user wrote them) is set whatever the umask. */
    if ((mode & 0044) != 0 && fchmod(d.fd, mode) != 0) {
        int e = errno;
        durable_abort(&d);
        return error_errno(d.what, "chmod", e);
    }
    if ((rc = fsutil_write_all(d.fd, buf, len, d.what)) != 0) {
        durable_abort(&d);
        return rc;
    }
    return durable_commit(&d, name, how, NULL);
}
