/*
 * src/cli/cmd_mount.c: pqvault mount MOUNTPOINT: the library's read-only
 * view of the vault (include/pqvault/mount.h) served through libfuse3's
 * low-level interface (docs/DESIGN.md "Mount", docs/CLI.md "Mount").
 *
 * Without -f the command returns once the file system answers: it forks
 * first, before anything is unlocked or any thread started (so that the
 * key, the locked memory and the threads all live in the one process that
 * serves), and the parent waits on a pipe for the child's word that FUSE's
 * INIT was answered, or for its exit status.  Built without libfuse3
 * (pkg-config fuse3 failed: no PQV_HAVE_FUSE), mount says so and fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "pqvault/mount.h"

#ifdef PQV_HAVE_FUSE
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#endif

/* The most --cache-size may ask for. */
#define CACHE_MAX (64ull << 30)

struct mount_args {
    const char *mountpoint;
    int foreground;
    int allow_other;
    size_t cache;
    int done;                    /* --help given: nothing more to do */
};

/* mount_parse(a, ma): the options and the one operand; exit status. */
static int
mount_parse(struct args *a, struct mount_args *ma)
{
    const char *val;
    uint64_t size;
    int id;

    memset(ma, 0, sizeof(*ma));
    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP:
            ma->done = 1;
            return arg_stop(a, id);
        case OPT_FOREGROUND: ma->foreground = 1; break;
        case OPT_ALLOW_OTHER: ma->allow_other = 1; break;
        case OPT_CACHE_SIZE:
            if (parse_size(val, &size) != 0 || size < PQV_MOUNT_CACHE_MIN || size > CACHE_MAX)
                return usage_error("--cache-size: not a size of 8M to 64G: '%s'", val);
            ma->cache = (size_t)size;
            break;
        case ARG_OPERAND:
            if (ma->mountpoint != NULL)
                return usage_error("one MOUNTPOINT only");
            ma->mountpoint = val;
            break;
        }
    }
    if (ma->mountpoint == NULL)
        return usage_error("a MOUNTPOINT is needed");
    return EXIT_OK;
}

#ifndef PQV_HAVE_FUSE

int
cmd_mount(struct args *a)
{
    struct mount_args ma;
    int status = mount_parse(a, &ma);

    if (status != EXIT_OK || ma.done)
        return status;
    err_msg("this pqvault was built without FUSE (libfuse3-dev was missing): mount is not "
        "available (install libfuse3-dev and fuse3, then build again)");
    return EXIT_ERR;
}

#else

/* Attributes and names never change while mounted (the view is the vault
 * as it was at mount time): the kernel may keep them as long as it likes. */
#define TIMEOUT 86400.0

struct mount_ctx {
    pqv_mount *m;
    int ready_fd;                /* daemon: the parent waits on it; -1 once told */
    int daemon;
    volatile int detached;       /* stdio gone: reports go to syslog */
    int no_opendir;              /* the kernel opens directories itself */
    int no_open;                 /* and files: the view keeps them open */
};

static struct mount_ctx g_mount;

/* mount_report_cb: damage met while serving (each file named once). */
static void
mount_report_cb(void *ctx, int level, const char *subject, const char *message)
{
    (void)ctx;
    if (g_mount.detached)
        syslog(level >= PQV_REPORT_ERROR ? LOG_ERR : LOG_WARNING, "%s: %s",
            subject != NULL ? subject : "", message != NULL ? message : "");
    else
        report_cb(NULL, level, subject, message);
}

static void
to_stat(const struct pqv_mount_attr *a, struct stat *st)
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
    g_mount.detached = 1;
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

static void
op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct fuse_entry_param e;
    struct pqv_mount_attr a;
    int rc = pqv_mount_lookup(g_mount.m, parent, name, &a);

    memset(&e, 0, sizeof(e));
    e.entry_timeout = TIMEOUT;
    if (rc == -ENOENT) {
        fuse_reply_entry(req, &e); /* ino 0: the kernel keeps the miss */
        return;
    }
    if (rc != 0) {
        fuse_reply_err(req, -rc);
        return;
    }
    e.ino = a.ino;
    e.attr_timeout = TIMEOUT;
    to_stat(&a, &e.attr);
    fuse_reply_entry(req, &e);
}

static void
op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct pqv_mount_attr a;
    struct stat st;
    int rc = pqv_mount_getattr(g_mount.m, ino, &a);

    (void)fi;
    if (rc != 0) {
        fuse_reply_err(req, -rc);
        return;
    }
    to_stat(&a, &st);
    fuse_reply_attr(req, &st, TIMEOUT);
}

static void
op_readlink(fuse_req_t req, fuse_ino_t ino)
{
    char target[PATH_MAX + 1];
    int rc = pqv_mount_readlink(g_mount.m, ino, target, sizeof(target));

    if (rc != 0)
        fuse_reply_err(req, -rc);
    else
        fuse_reply_readlink(req, target);
}

struct dirbuf {
    fuse_req_t req;
    char *buf;
    size_t size, used;
    int plus;
};

static int
add_dirent(void *ctx, const char *name, const struct pqv_mount_attr *a, uint64_t next)
{
    struct dirbuf *d = ctx;
    size_t n, room = d->size - d->used;

    if (d->plus) {
        struct fuse_entry_param e;
        memset(&e, 0, sizeof(e));
        to_stat(a, &e.attr);
        /* "." and "..": attributes only, no lookup counted. */
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
            e.ino = a->ino;
            e.attr_timeout = e.entry_timeout = TIMEOUT;
        }
        n = fuse_add_direntry_plus(d->req, d->buf + d->used, room, name, &e, (off_t)next);
    } else {
        struct stat st;
        to_stat(a, &st);
        n = fuse_add_direntry(d->req, d->buf + d->used, room, name, &st, (off_t)next);
    }
    if (n > room)
        return 1;
    d->used += n;
    return 0;
}

static void
readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus)
{
    struct dirbuf d = { req, NULL, size, 0, plus };
    int rc;

    if (size > (1u << 20))
        size = d.size = 1u << 20;
    if ((d.buf = malloc(size)) == NULL) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    rc = pqv_mount_readdir(g_mount.m, ino, (uint64_t)off, add_dirent, &d);
    if (rc != 0)
        fuse_reply_err(req, -rc);
    else
        fuse_reply_buf(req, d.buf, d.used);
    free(d.buf);
}

/* op_opendir: nothing to hold per open directory (a listing is a pure
 * function of the node and the position); the listings never change while
 * mounted, so the kernel may cache them. */
static void
op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct pqv_mount_attr a;
    int rc = pqv_mount_getattr(g_mount.m, ino, &a);

    if (rc != 0) {
        fuse_reply_err(req, -rc);
        return;
    }
    if ((a.mode & S_IFMT) != S_IFDIR) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    if (g_mount.no_opendir) {
        fuse_reply_err(req, ENOSYS);  /* (success, and never asked again) */
        return;
    }
    fi->keep_cache = 1;
    fi->cache_readdir = 1;
    fuse_reply_open(req, fi);
}

static void
op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    readdir_common(req, ino, size, off, 0);
}

static void
op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    readdir_common(req, ino, size, off, 1);
}

static void
op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    pqv_mount_file *f;
    int rc;

    if ((fi->flags & O_ACCMODE) != O_RDONLY) {
        fuse_reply_err(req, EROFS);
        return;
    }
    if (g_mount.no_open) {
        /* A file is opened when read (op_read); the kernel opens every
         * file itself from now on ("ENOSYS": success, never asked again;
         * the mount is read-only, so the VFS refuses an open for writing
         * before it would reach us). */
        struct pqv_mount_attr a;
        if ((rc = pqv_mount_getattr(g_mount.m, ino, &a)) != 0)
            fuse_reply_err(req, -rc);
        else if ((a.mode & S_IFMT) != S_IFREG)
            fuse_reply_err(req, (a.mode & S_IFMT) == S_IFDIR ? EISDIR : EINVAL);
        else
            fuse_reply_err(req, ENOSYS);
        return;
    }
    if ((rc = pqv_mount_file_open(g_mount.m, ino, &f)) != 0) {
        fuse_reply_err(req, -rc);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)f;
    fi->keep_cache = 1; /* the data never changes while mounted */
    if (fuse_reply_open(req, fi) != 0)
        pqv_mount_file_close(f); /* the open was interrupted */
}

/* file_of(ino, fi, held): the open file a request is on: the one OPEN
 * gave, or (zero-message opens: no handle) the one the view keeps open
 * for ${ino}, to give back with pqv_mount_file_put(*held); 0 or an errno. */
static int
file_of(fuse_ino_t ino, const struct fuse_file_info *fi, pqv_mount_file **f,
    pqv_mount_file **held)
{
    int rc;

    *held = NULL;
    if (fi->fh != 0) {
        *f = (pqv_mount_file *)(uintptr_t)fi->fh;
        return 0;
    }
    if ((rc = pqv_mount_file_get(g_mount.m, ino, held)) != 0)
        return -rc;
    *f = *held;
    return 0;
}

/* Each FUSE worker's read buffer: kept (a malloc of up to 1 MiB per READ
 * was a twelfth of the server's user time), locked (it holds plaintext
 * between the cache and the reply), wiped after each reply, and unlocked
 * and freed when the worker ends. */
struct read_buf {
    uint8_t *p;
    size_t cap;
};

static pthread_key_t g_read_buf_key;
static pthread_once_t g_read_buf_once = PTHREAD_ONCE_INIT;
static int g_read_buf_ok;

static void
read_buf_free(void *arg)
{
    struct read_buf *b = arg;

    if (b == NULL)
        return;
    if (b->p != NULL) {
        (void)munlock(b->p, b->cap);
        free(b->p);
    }
    free(b);
}

static void
read_buf_init(void)
{
    g_read_buf_ok = pthread_key_create(&g_read_buf_key, read_buf_free) == 0;
}

/* read_buf_get(size): this worker's buffer, at least ${size} bytes; NULL
 * if out of memory. */
static uint8_t *
read_buf_get(size_t size)
{
    struct read_buf *b;

    (void)pthread_once(&g_read_buf_once, read_buf_init);
    if (!g_read_buf_ok)
        return NULL;
    if ((b = pthread_getspecific(g_read_buf_key)) == NULL) {
        if ((b = calloc(1, sizeof(*b))) == NULL)
            return NULL;
        if (pthread_setspecific(g_read_buf_key, b) != 0) {
            free(b);
            return NULL;
        }
    }
    if (b->cap < size) {
        size_t cap = size < (128u << 10) ? 128u << 10 : size;
        uint8_t *p = malloc(cap);
        if (p == NULL)
            return NULL;
        if (b->p != NULL) {
            (void)munlock(b->p, b->cap);
            free(b->p);
        }
        (void)mlock(p, cap); /* (first: it faults the pages in at once) */
        memset(p, 0, cap);
        b->p = p;
        b->cap = cap;
    }
    return b->p;
}

static void
op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    pqv_mount_file *f, *held;
    uint8_t *buf;
    size_t got = 0;
    int rc;

    if (off < 0) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    if (size > (16u << 20))
        size = 16u << 20;
    if ((rc = file_of(ino, fi, &f, &held)) != 0) {
        fuse_reply_err(req, rc);
        return;
    }
    if ((buf = read_buf_get(size > 0 ? size : 1)) == NULL) {
        pqv_mount_file_put(held);
        fuse_reply_err(req, ENOMEM);
        return;
    }
    /* (Readers told apart by process: a file kept open is shared.) */
    rc = pqv_mount_read_as(f, (uint64_t)fuse_req_ctx(req)->pid, buf, size, (uint64_t)off, &got);
    pqv_mount_file_put(held);
    if (rc != 0)
        fuse_reply_err(req, -rc);
    else
        fuse_reply_buf(req, (const char *)buf, got);
    OPENSSL_cleanse(buf, got);
}

static void
op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    pqv_mount_file_close((pqv_mount_file *)(uintptr_t)fi->fh); /* (0: none) */
    fuse_reply_err(req, 0);
}

static void
op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
    pqv_mount_file *f, *held;
    uint64_t to;
    int rc;

    if (off < 0) {
        fuse_reply_err(req, ENXIO);
        return;
    }
    if ((rc = file_of(ino, fi, &f, &held)) != 0) {
        fuse_reply_err(req, rc);
        return;
    }
    rc = pqv_mount_seek(f, (uint64_t)off, whence, &to);
    pqv_mount_file_put(held);
    if (rc != 0)
        fuse_reply_err(req, -rc);
    else
        fuse_reply_lseek(req, (off_t)to);
}

static void
op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;

    if (size > 0 && (buf = malloc(size)) == NULL) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    rc = pqv_mount_getxattr(g_mount.m, ino, name, buf, size, &len);
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

    if (size > 0 && (buf = malloc(size)) == NULL) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    rc = pqv_mount_listxattr(g_mount.m, ino, buf, size, &len);
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
    pqv_mount_stats(g_mount.m, &s);
    memset(&sv, 0, sizeof(sv));
    sv.f_bsize = sv.f_frsize = 4096;
    sv.f_blocks = (fsblkcnt_t)((s.bytes + 4095) / 4096);
    sv.f_files = (fsfilcnt_t)s.files;
    sv.f_namemax = 255;
    fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops mount_ops = {
    .init = op_init,
    .lookup = op_lookup,
    .getattr = op_getattr,
    .readlink = op_readlink,
    .open = op_open,
    .read = op_read,
    .release = op_release,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .readdirplus = op_readdirplus,
    .statfs = op_statfs,
    .getxattr = op_getxattr,
    .listxattr = op_listxattr,
    .lseek = op_lseek,
};

/* default_signals(): SIGINT, SIGTERM and SIGHUP back to their default
 * (main.c's handler removes temporaries and dies), so that libfuse's
 * handlers, which only replace a default one, unmount on them; one the
 * caller ignores stays ignored. */
static void
default_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            (void)signal(sigs[i], SIG_DFL);
    }
}

/* serve(ma, mnt): unlock, open the view, mount, serve until unmounted;
 * an exit status. */
static int
serve(const struct mount_args *ma, const char *mnt)
{
    char opts[128];
    char *argv[] = { (char *)"pqvault", (char *)"-o", opts, NULL };
    struct fuse_args args = FUSE_ARGS_INIT(3, argv);
    struct pqv_mount_options mo;
    struct fuse_session *se = NULL;
    struct fuse_loop_config *cfg;
    pqv_vault *v;
    int status, rc;

    if ((status = session(&v, 0)) != EXIT_OK)
        return status;
    memset(&mo, 0, sizeof(mo));
    mo.cache_bytes = ma->cache;
    mo.uid = (uint32_t)getuid();
    mo.gid = (uint32_t)getgid();
    mo.report = mount_report_cb;
    pqv_error_clear();
    if ((rc = pqv_mount_open(v, &mo, &g_mount.m)) != 0) {
        status = lib_error(NULL, rc);
        pqv_vault_close(v);
        return status;
    }
    /* nodev, nosuid: stored device nodes and set-id bits are shown, never
     * acted on. */
    snprintf(opts, sizeof(opts),
        "ro,nodev,nosuid,default_permissions,fsname=pqvault,subtype=pqvault%s",
        ma->allow_other ? ",allow_other" : "");
    status = EXIT_ERR;
    if ((se = fuse_session_new(&args, &mount_ops, sizeof(mount_ops), &g_mount)) == NULL) {
        err_msg("%s: FUSE refused the mount options", ma->mountpoint);
        goto done;
    }
    default_signals();
    if (fuse_set_signal_handlers(se) != 0) {
        err_msg("cannot set the signal handlers");
        goto done;
    }
    if (fuse_session_mount(se, mnt) != 0) {
        /* (libfuse said why on stderr: "fuse: ...") */
        err_msg("%s: cannot mount (is /dev/fuse there, and fusermount3 installed?)",
            ma->mountpoint);
        fuse_remove_signal_handlers(se);
        goto done;
    }
    if (g_mount.daemon) {
        (void)setsid();
        if (chdir("/") != 0) {
            /* (nothing depends on the working directory) */
        }
    } else if (!g_cli.quiet) {
        err_msg("%s mounted (read-only); unmount with 'fusermount3 -u %s' or Ctrl-C",
            mnt, mnt);
    }
    if ((cfg = fuse_loop_cfg_create()) == NULL) {
        rc = -ENOMEM;
    } else {
        fuse_loop_cfg_set_max_threads(cfg, 16);
        rc = fuse_session_loop_mt(se, cfg);
        fuse_loop_cfg_destroy(cfg);
    }
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
    /* A signal (rc > 0) or fusermount3 -u (0) is how a mount ends. */
    status = rc < 0 ? EXIT_ERR : EXIT_OK;
    if (rc < 0)
        err_msg("%s: the FUSE session failed: %s", mnt, strerror(-rc));
done:
    if (se != NULL)
        fuse_session_destroy(se);
    fuse_opt_free_args(&args); /* (fuse_session_new may have copied and added to them) */
    pqv_mount_close(g_mount.m);
    g_mount.m = NULL;
    pqv_vault_close(v);
    return status;
}

int
cmd_mount(struct args *a)
{
    struct mount_args ma;
    char mnt[PATH_MAX];
    struct stat st;
    int status, pipefd[2];
    pid_t pid;

    if ((status = mount_parse(a, &ma)) != EXIT_OK || ma.done)
        return status;
    if ((status = resolve_location()) != EXIT_OK)
        return status;
    if (stat(ma.mountpoint, &st) != 0 || realpath(ma.mountpoint, mnt) == NULL) {
        err_msg("%s: %s", ma.mountpoint, strerror(errno));
        return EXIT_ERR;
    }
    if (!S_ISDIR(st.st_mode)) {
        err_msg("%s: not a directory", ma.mountpoint);
        return EXIT_ERR;
    }
    g_mount.ready_fd = -1;
    /* One malloc arena for the server's threads (set before any exists):
     * with one per thread (up to 16 FUSE workers and the prefetch threads)
     * the chunks freed from the cache stayed in each thread's arena, and
     * a server that had read a tree and then a 1 GiB file held 186 MiB
     * where it needs 141 (bench/mount.sh's sequence), reading as fast. */
    (void)mallopt(M_ARENA_MAX, 1);
    /* And memory freed kept for the next read: with glibc's defaults each
     * random read's 64 KiB buffers grew the heap again (or were mapped
     * anew) and faulted their pages in, 0.3 ms of the 0.4-0.5 ms a random
     * 4 KiB read took on this VM (perf: page faults under the pread).  At
     * most 64 MiB is kept free at the heap's top; buffers over 16 MiB
     * (none the reads use) are mapped. */
    (void)mallopt(M_MMAP_THRESHOLD, 16 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
    if (ma.foreground)
        return serve(&ma, mnt);
    /* Fork before unlocking: the key, its locked memory and the threads
     * must be the serving process's. */
    if (pipe(pipefd) != 0) {
        err_msg("pipe: %s", strerror(errno));
        return EXIT_ERR;
    }
    fflush(stdout);
    fflush(stderr);
    if ((pid = fork()) < 0) {
        err_msg("fork: %s", strerror(errno));
        return EXIT_ERR;
    }
    if (pid == 0) {
        close(pipefd[0]);
        g_mount.ready_fd = pipefd[1];
        g_mount.daemon = 1;
        status = serve(&ma, mnt);
        if (g_mount.ready_fd >= 0)
            close(g_mount.ready_fd);
        return status;
    }
    close(pipefd[1]);
    for (;;) {
        char ok;
        ssize_t n = read(pipefd[0], &ok, 1);
        int wst;
        if (n < 0 && errno == EINTR)
            continue;
        close(pipefd[0]);
        if (n == 1)
            return EXIT_OK; /* mounted and answering; the child serves on */
        /* The child ended before the mount was ready: its status. */
        while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
            ;
        return WIFEXITED(wst) ? WEXITSTATUS(wst) : EXIT_ERR;
    }
}

#endif
