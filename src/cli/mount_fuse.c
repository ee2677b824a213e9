/*
 * src/cli/mount_fuse.c: the answers of `pqvault mount`'s FUSE session
 * (libfuse3's low-level operations over the library's view,
 * include/pqvault/mount.h); cmd_mount.c parses, unlocks, mounts and
 * serves (docs/DESIGN.md "Mount").  This file: the session's setup
 * (INIT), reports, offers and cache drops, extended attributes, statfs and
 * the operations' table; the operations by stage in mount_fuse_names.c
 * (lookups, attributes, listings) and mount_fuse_read.c (opens, reads).
 * Built empty without libfuse3.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <syslog.h>
#include <unistd.h>


#include "cli.h"
#include "mount_fuse.h"
#include "pqvault/mount.h"

#ifdef PQV_HAVE_FUSE

struct mount_ctx mount_fuse_ctx;

void
mount_fuse_report(void *ctx, int level, const char *subject, const char *message)
{
    (void)ctx;
    if (mount_fuse_ctx.detached)
        syslog(level >= PQV_REPORT_ERROR ? LOG_ERR : LOG_WARNING, "%s: %s",
            subject != NULL ? subject : "", message != NULL ? message : "");
    else
        report_cb(NULL, level, subject, message);
}

/* The session the view's offers go to, while it serves (the view's
 * prefetch threads outlive the session by a little). */
static pthread_rwlock_t offer_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct fuse_session *offer_session;

void
mount_fuse_offers(struct fuse_session *se)
{
    pthread_rwlock_wrlock(&offer_lock);
    offer_session = se;
    pthread_rwlock_unlock(&offer_lock);
}

int
mount_fuse_offer(void *ctx, uint64_t ino, const void *data, size_t len)
{
    struct fuse_bufvec bv = FUSE_BUFVEC_INIT(len);
    int rc = -1;

    (void)ctx;
    bv.buf[0].mem = (void *)data;
    pthread_rwlock_rdlock(&offer_lock);
    /* (-ENOENT: the kernel has no inode of that number yet, a directory
     * not listed; the file's READ then reads it from the view's cache.) */
    if (offer_session != NULL)
        rc = fuse_lowlevel_notify_store(offer_session, (fuse_ino_t)ino, 0, &bv, 0);
    pthread_rwlock_unlock(&offer_lock);
    return rc;
}

int
mount_fuse_inval_inode(uint64_t ino, uint64_t off, uint64_t len)
{
    int rc = -1;

    if (off > INT64_MAX || len > INT64_MAX)
        return -1;
    pthread_rwlock_rdlock(&offer_lock);
    if (offer_session != NULL)
        rc = fuse_lowlevel_notify_inval_inode(offer_session, (fuse_ino_t)ino, (off_t)off,
            (off_t)len);
    pthread_rwlock_unlock(&offer_lock);
    return rc;
}


void
mount_fuse_to_stat(const struct pqv_mount_attr *a, struct stat *st)
{
    memset(st, 0, sizeof(*st));
    st->st_ino = (ino_t)a->ino;
    st->st_mode = (mode_t)a->mode;
    st->st_nlink = (nlink_t)a->nlink;
    st->st_uid = (uid_t)a->uid;
    st->st_gid = (gid_t)a->gid;
    st->st_size = (off_t)a->size;
    st->st_blocks = (blkcnt_t)a->blocks;
    st->st_blksize = 4096;
    st->st_mtim.tv_sec = (time_t)a->mtime_sec;
    st->st_mtim.tv_nsec = (long)a->mtime_nsec;
    st->st_atim = st->st_mtim;
    st->st_ctim.tv_sec = (time_t)a->ctime_sec;
    st->st_ctim.tv_nsec = (long)a->ctime_nsec;
    st->st_rdev = makedev(a->rdev_major, a->rdev_minor);
}

static void
detach_stdio(void)
{
    int fd = open("/dev/null", O_RDWR);

    if (fd >= 0) {
        (void)dup2(fd, STDIN_FILENO);
        (void)dup2(fd, STDOUT_FILENO);
        (void)dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    }
    openlog("pqvault", LOG_PID, LOG_DAEMON);
    mount_fuse_ctx.detached = 1;
}

static void
op_init(void *userdata, struct fuse_conn_info *conn)
{
    struct mount_ctx *c = userdata;

#ifdef FUSE_CAP_CACHE_SYMLINKS
    if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
        conn->want |= FUSE_CAP_CACHE_SYMLINKS;
#endif
#ifdef FUSE_CAP_NO_OPENDIR_SUPPORT
    /* No OPENDIR and RELEASEDIR round trips (two of a directory's four
     * for `find`); the kernel then caches listings as op_opendir asks. */
    c->no_opendir = (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) != 0;
#endif
#ifdef FUSE_CAP_NO_OPEN_SUPPORT
    /* No OPEN and RELEASE round trips either (two of the three `cp` makes
     * per small file, besides its xattr questions): the view keeps the
     * files read open itself (pqv_mount_file_get). */
    c->no_open = (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) != 0 && !pqv_mount_wants_opens();
#endif
#ifdef FUSE_CAP_READDIRPLUS_AUTO
    /* Every listing with its attributes, not only its first reply (the
     * kernel's "auto" mode lists the rest of a directory bare, then looks
     * each name up: 1,064 LOOKUPs per cp -a of /usr/share/doc). */
    conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
#endif
    (void)conn;
    /* The file system answers from now on: the waiting parent may go. */
    if (c->ready_fd >= 0) {
        char ok = 0;
        detach_stdio();
        (void)!write(c->ready_fd, &ok, 1);
        close(c->ready_fd);
        c->ready_fd = -1;
    }
}

/* no_xattrs(req): no file shown has an extended attribute: the kernel is
 * told the file system has none, and asks no more (it answers
 * EOPNOTSUPP itself: `cp -a`, `tar --xattrs` and `rsync -X` take that as
 * nothing to copy; `getfattr` says "Operation not supported").  Without
 * it, `cp -a` of /usr/share/doc made 21,800 round trips for them. */
static void
no_xattrs(fuse_req_t req)
{
    fuse_reply_err(req, ENOSYS);
}

static void
op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;

    if (pqv_mount_xattrs_none(mount_fuse_ctx.m)) {
        no_xattrs(req);
        return;
    }
    if (size > 0 && (buf = malloc(size)) == NULL) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    rc = pqv_mount_getxattr(mount_fuse_ctx.m, ino, name, buf, size, &len);
    if (rc != 0)
        fuse_reply_err(req, -rc);
    else if (size == 0)
        fuse_reply_xattr(req, len);
    else
        fuse_reply_buf(req, buf, len);
    free(buf);
}

static void
op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;

    if (pqv_mount_xattrs_none(mount_fuse_ctx.m)) {
        no_xattrs(req);
        return;
    }
    if (size > 0 && (buf = malloc(size)) == NULL) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    rc = pqv_mount_listxattr(mount_fuse_ctx.m, ino, buf, size, &len);
    if (rc != 0)
        fuse_reply_err(req, -rc);
    else if (size == 0)
        fuse_reply_xattr(req, len);
    else
        fuse_reply_buf(req, buf, len);
    free(buf);
}

static void
op_statfs(fuse_req_t req, fuse_ino_t ino)
{
    struct pqv_mount_stats s;
    struct statvfs sv;

    (void)ino;
    pqv_mount_stats(mount_fuse_ctx.m, &s);
    memset(&sv, 0, sizeof(sv));
    sv.f_bsize = sv.f_frsize = 4096;
    sv.f_blocks = (fsblkcnt_t)((s.bytes + 4095) / 4096);
    sv.f_files = (fsfilcnt_t)s.files;
    sv.f_namemax = 255;
    fuse_reply_statfs(req, &sv);
}

const struct fuse_lowlevel_ops mount_fuse_ops = {
    .init = op_init,
    .lookup = mount_fuse_op_lookup,
    .getattr = mount_fuse_op_getattr,
    .readlink = mount_fuse_op_readlink,
    .open = mount_fuse_op_open,
    .read = mount_fuse_op_read,
    .release = mount_fuse_op_release,
    .opendir = mount_fuse_op_opendir,
    .readdir = mount_fuse_op_readdir,
    .readdirplus = mount_fuse_op_readdirplus,
    .statfs = op_statfs,
    .getxattr = op_getxattr,
    .listxattr = op_listxattr,
    .lseek = mount_fuse_op_lseek,
};

#endif
