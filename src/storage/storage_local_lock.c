/*
 * storage_local_lock.c: the local backend's writer lock (storage/
 * storage_local_internal.h): an flock on <dir>/lock, so a dead holder
 * never leaves it stale; the holder writes its pid there for the error
 * message of the next writer.  Never through a link, never a FIFO.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "storage/storage_local_internal.h"
#include "util/durable.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "util/util.h"

int
storage_local_lock_take(pqv_storage *s, int wait, char *holder, size_t holderlen)
{
    struct local_storage *ls = (struct local_storage *)s;
    char buf[32];
    struct stat st;
    int fd, e;

    if (ls->lock_fd >= 0)
        return 0;
    /* Never through a link (it would be truncated below), never a FIFO. */
    if ((fd = io_openat(ls->rootfd, "lock", O_RDWR | O_CREAT | O_NONBLOCK, 0600, NULL)) < 0) {
        e = errno;
        if (e == ELOOP)
            return error_set(PQV_E_INTEGRITY, "lock", "is a symbolic link (refusing to follow it)");
        return error_errno("lock", "open", e);
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return error_set(PQV_E_INTEGRITY, "lock", "not a regular file");
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
                return error_set(PQV_E_LOCKED, NULL,
                    "vault is locked by another writer (pid %ld)", pid);
            return error_set(PQV_E_LOCKED, NULL, "vault is locked by another writer");
        }
        close(fd);
        return error_errno("lock", "flock", e);
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

/* The flock on "lock" is looked up in /proc/locks (flock locks cannot be
 * queried with fcntl), by the file's device and inode. */
int
storage_local_lock_probe(pqv_storage *s, char *holder, size_t holderlen)
{
    struct local_storage *ls = (struct local_storage *)s;
    char line[256];
    struct stat st;
    FILE *f;
    int fd, held = 0;

    if ((fd = openat(ls->rootfd, "lock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
        return errno == ENOENT ? 0 : error_errno("lock", "open", errno);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return error_set(PQV_E_INTEGRITY, "lock", "not a regular file");
    }
    close(fd);
    if ((f = fopen("/proc/locks", "re")) == NULL)
        return error_errno("/proc/locks", "open", errno);
    while (!held && fgets(line, sizeof(line), f) != NULL) {
        unsigned maj, min;
        unsigned long long ino;
        long pid;
        char type[16];
        /* "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF" */
        if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", type, &pid, &maj, &min, &ino) == 5 &&
            strcmp(type, "FLOCK") == 0 && ino == (unsigned long long)st.st_ino &&
            makedev(maj, min) == st.st_dev && pid != (long)getpid()) {
            held = 1;
            if (holder != NULL && holderlen > 0)
                snprintf(holder, holderlen, "pid %ld", pid);
        }
    }
    fclose(f);
    return held;
}

void
storage_local_lock_release(pqv_storage *s)
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
