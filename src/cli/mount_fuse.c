/*
 * src/cli/mount_fuse.c: the answers of `pqvault mount`'s FUSE session
 * (libfuse3's low-level operations over the library's view,
 * include/pqvault/mount.h); cmd_mount.c parses, unlocks, mounts and
 * serves (docs/DESIGN.md "Mount").  Built empty without libfuse3.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/mman.h>
#include <syslog.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "mount_fuse.h"
#include "pqvault/mount.h"

#ifdef PQV_HAVE_FUSE

/* Attributes and names never change while mounted (the view is the vault
 * as it was at mount time): the kernel may keep them as long as it likes. */
#define TIMEOUT 86400.0

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

/* ---- listings with attributes for the callers that use them ----
 *
 * A listing with attributes (READDIRPLUS) costs the kernel a dentry and an
 * inode per name, which `find` never uses: of its 2.1-2.5 s over the
 * 100,000-file vault (404,020 names), 1.7 s was its own kernel time, most
 * of it making those.  A name given without them (node 0: the kernel makes
 * nothing) costs a LOOKUP if it is then looked at, about 50 us here.  So
 * a caller (FUSE's request context: the thread) gets the attributes of a
 * directory's files once it has looked up a file by name (stat, open);
 * before that, names and types only, in directories small enough that
 * their LOOKUPs, should it look after all, cost little; directories
 * themselves always with theirs (a walk opens them).  The kernel keeps a
 * listing (cache_readdir) and would give it, names only, to a caller that
 * stats; so when a new such caller comes, the listings given names-only
 * so far are dropped from the kernel's cache, and listed again with
 * attributes when asked.  docs/DESIGN.md "Files listed without attributes
 * until a caller stats". */
#define LOOKERS 64
#define NAMES_ONLY_MAX_BYTES 8192u /* a directory's size (its names' bytes) */
#define BARE_DIRS_MAX 65536u       /* listings remembered to be dropped */

static pthread_mutex_t lookers_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t lookers[LOOKERS];   /* callers seen looking up files; 0: free */
static unsigned lookers_next;       /* the slot taken next (oldest first) */
static uint64_t *bare_dirs;         /* directories listed names-only since */
static size_t nbare, capbare;

/* Counted for the tests (pqv_mount_counts_path). */
static struct {
    uint64_t with_attrs, names_only, file_lookups, listings_dropped;
} counts;

static int
looker_known(uint32_t pid)
{
    int known = 0;

    pthread_mutex_lock(&lookers_lock);
    for (unsigned i = 0; i < LOOKERS && !known; i++)
        known = lookers[i] == pid;
    pthread_mutex_unlock(&lookers_lock);
    return known;
}

/* looker_note(pid, dirs, n): caller ${pid} looked a file up; a new one
 * takes the directories listed names-only so far (*dirs, *n; free it),
 * whose cached listings are to be dropped. */
static void
looker_note(uint32_t pid, uint64_t **dirs, size_t *n)
{
    *dirs = NULL;
    *n = 0;
    pthread_mutex_lock(&lookers_lock);
    counts.file_lookups++;
    for (unsigned i = 0; i < LOOKERS; i++)
        if (lookers[i] == pid) {
            pthread_mutex_unlock(&lookers_lock);
            return;
        }
    lookers[lookers_next] = pid;
    lookers_next = (lookers_next + 1) % LOOKERS;
    *dirs = bare_dirs;
    *n = nbare;
    bare_dirs = NULL;
    nbare = capbare = 0;
    pthread_mutex_unlock(&lookers_lock);
}

/* bare_dir_note(ino): directory ${ino} was listed names-only (lookers_lock
 * held); beyond BARE_DIRS_MAX, or out of memory, not remembered (its
 * names then cost a LOOKUP each, as they would anyway). */
static void
bare_dir_note(uint64_t ino)
{
    if (nbare == capbare) {
        size_t cap = capbare == 0 ? 256 : capbare * 2;
        uint64_t *grown;
        if (cap > BARE_DIRS_MAX || (grown = realloc(bare_dirs, cap * sizeof(*grown))) == NULL)
            return;
        bare_dirs = grown;
        capbare = cap;
    }
    bare_dirs[nbare++] = ino;
}

void
mount_fuse_write_counts(void)
{
    const char *path = pqv_mount_counts_path();
    FILE *f;

    if (path == NULL || (f = fopen(path, "w")) == NULL)
        return;
    pthread_mutex_lock(&lookers_lock);
    fprintf(f, "with_attrs %llu\nnames_only %llu\nfile_lookups %llu\nlistings_dropped %llu\n",
        (unsigned long long)counts.with_attrs, (unsigned long long)counts.names_only,
        (unsigned long long)counts.file_lookups, (unsigned long long)counts.listings_dropped);
    pthread_mutex_unlock(&lookers_lock);
    fclose(f);
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

/* drop_listings(dirs, n): the kernel's cached listings of ${dirs} dropped
 * (and their attributes: asked again), then ${dirs} freed.  Called before
 * the LOOKUP that brought a new caller is answered: the kernel drops an
 * inode's attributes and pages without its lock (fuse_reverse_inval_inode),
 * so the lookup pending on a directory does not stop it, and a listing
 * being read from the cache holds a page only while it copies. */
static void
drop_listings(uint64_t *dirs, size_t n)
{
    size_t dropped = 0;

    pthread_rwlock_rdlock(&offer_lock);
    for (size_t i = 0; i < n && offer_session != NULL; i++)
        dropped += fuse_lowlevel_notify_inval_inode(offer_session, (fuse_ino_t)dirs[i], 0, 0) == 0;
    pthread_rwlock_unlock(&offer_lock);
    pthread_mutex_lock(&lookers_lock);
    counts.listings_dropped += dropped;
    pthread_mutex_unlock(&lookers_lock);
    free(dirs);
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

static void
op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct fuse_entry_param e;
    struct pqv_mount_attr a;
    uint64_t *dirs = NULL;
    size_t ndirs = 0;
    int rc = pqv_mount_lookup(mount_fuse_ctx.m, parent, name, &a);

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
    if ((a.mode & S_IFMT) != S_IFDIR)
        looker_note((uint32_t)fuse_req_ctx(req)->pid, &dirs, &ndirs);
    /* (Dropped before the answer: the caller's next listing, right after
     * it, must not find them still cached; dropped after, it did under
     * load.) */
    if (dirs != NULL)
        drop_listings(dirs, ndirs);
    fuse_reply_entry(req, &e);
}

static void
op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct pqv_mount_attr a;
    struct stat st;
    int rc = pqv_mount_getattr(mount_fuse_ctx.m, ino, &a);

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
    int rc = pqv_mount_readlink(mount_fuse_ctx.m, ino, target, sizeof(target));

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
    int names_only;              /* plus: files without their attributes */
    uint64_t with_attrs, without;
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
        /* "." and "..": attributes only, no lookup counted; a file
         * listed names-only likewise (its number and type still in the
         * name's entry). */
        int dots = strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
        int bare = !dots && d->names_only && (a->mode & S_IFMT) != S_IFDIR;
        if (!dots && !bare) {
            e.ino = a->ino;
            e.attr_timeout = e.entry_timeout = TIMEOUT;
        }
        n = fuse_add_direntry_plus(d->req, d->buf + d->used, room, name, &e, (off_t)next);
        if (n <= room && !dots) {
            d->with_attrs += !bare;
            d->without += bare;
        }
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
    struct dirbuf d = { req, NULL, size, 0, plus, 0, 0, 0 };
    struct pqv_mount_attr dir;
    int rc;

    if (size > (1u << 20))
        size = d.size = 1u << 20;
    if (plus && !looker_known((uint32_t)fuse_req_ctx(req)->pid) &&
        pqv_mount_getattr(mount_fuse_ctx.m, ino, &dir) == 0 && dir.size <= NAMES_ONLY_MAX_BYTES)
        d.names_only = 1;
    if ((d.buf = malloc(size)) == NULL) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    rc = pqv_mount_readdir(mount_fuse_ctx.m, ino, (uint64_t)off, add_dirent, &d);
    if (rc != 0)
        fuse_reply_err(req, -rc);
    else
        fuse_reply_buf(req, d.buf, d.used);
    free(d.buf);
    if (rc == 0 && plus) {
        /* (After the answer: the kernel has cached it when a new caller
         * that stats drops it.) */
        pthread_mutex_lock(&lookers_lock);
        counts.with_attrs += d.with_attrs;
        counts.names_only += d.without;
        if (d.without > 0)
            bare_dir_note((uint64_t)ino); /* (a listing of several replies: again, harmless) */
        pthread_mutex_unlock(&lookers_lock);
    }
}

/* op_opendir: nothing to hold per open directory (a listing is a pure
 * function of the node and the position); the listings never change while
 * mounted, so the kernel may cache them. */
static void
op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct pqv_mount_attr a;
    int rc = pqv_mount_getattr(mount_fuse_ctx.m, ino, &a);

    if (rc != 0) {
        fuse_reply_err(req, -rc);
        return;
    }
    if ((a.mode & S_IFMT) != S_IFDIR) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    if (mount_fuse_ctx.no_opendir) {
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
    if (mount_fuse_ctx.no_open) {
        /* A file is opened when read (op_read); the kernel opens every
         * file itself from now on ("ENOSYS": success, never asked again;
         * the mount is read-only, so the VFS refuses an open for writing
         * before it would reach us). */
        struct pqv_mount_attr a;
        if ((rc = pqv_mount_getattr(mount_fuse_ctx.m, ino, &a)) != 0)
            fuse_reply_err(req, -rc);
        else if ((a.mode & S_IFMT) != S_IFREG)
            fuse_reply_err(req, (a.mode & S_IFMT) == S_IFDIR ? EISDIR : EINVAL);
        else
            fuse_reply_err(req, ENOSYS);
        return;
    }
    if ((rc = pqv_mount_file_open(mount_fuse_ctx.m, ino, &f)) != 0) {
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
    if ((rc = pqv_mount_file_get(mount_fuse_ctx.m, ino, held)) != 0)
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

#endif
