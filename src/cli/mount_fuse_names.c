/*
 * src/cli/mount_fuse_names.c: the names of `pqvault mount`'s FUSE session:
 * lookups, attributes, links and listings, and which callers get their
 * listings with attributes (split from mount_fuse.c, which keeps the
 * session's setup, offers and the operations table; reads are
 * mount_fuse_read.c's).  Built empty without libfuse3.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cli.h"
#include "mount_fuse.h"
#include "pqvault/mount.h"

#ifdef PQV_HAVE_FUSE

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
    uint64_t with_attrs, names_only, listings_dropped;
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
    fprintf(f, "with_attrs %llu\nnames_only %llu\nlistings_dropped %llu\n",
        (unsigned long long)counts.with_attrs, (unsigned long long)counts.names_only,
        (unsigned long long)counts.listings_dropped);
    pthread_mutex_unlock(&lookers_lock);
    fclose(f);
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

    for (size_t i = 0; i < n; i++)
        dropped += mount_fuse_inval_inode(dirs[i], 0, 0) == 0;
    pthread_mutex_lock(&lookers_lock);
    counts.listings_dropped += dropped;
    pthread_mutex_unlock(&lookers_lock);
    free(dirs);
}

void
mount_fuse_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct fuse_entry_param e;
    struct pqv_mount_attr a;
    uint64_t *dirs = NULL;
    size_t ndirs = 0;
    int rc = pqv_mount_lookup(mount_fuse_ctx.m, parent, name, &a);

    memset(&e, 0, sizeof(e));
    e.entry_timeout = MOUNT_FUSE_TIMEOUT;
    if (rc == -ENOENT) {
        fuse_reply_entry(req, &e); /* ino 0: the kernel keeps the miss */
        return;
    }
    if (rc != 0) {
        fuse_reply_err(req, -rc);
        return;
    }
    e.ino = a.ino;
    e.attr_timeout = MOUNT_FUSE_TIMEOUT;
    mount_fuse_to_stat(&a, &e.attr);
    if ((a.mode & S_IFMT) != S_IFDIR)
        looker_note((uint32_t)fuse_req_ctx(req)->pid, &dirs, &ndirs);
    /* (Dropped before the answer: the caller's next listing, right after
     * it, must not find them still cached; dropped after, it did under
     * load.) */
    if (dirs != NULL)
        drop_listings(dirs, ndirs);
    fuse_reply_entry(req, &e);
}

void
mount_fuse_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct pqv_mount_attr a;
    struct stat st;
    int rc = pqv_mount_getattr(mount_fuse_ctx.m, ino, &a);

    (void)fi;
    if (rc != 0) {
        fuse_reply_err(req, -rc);
        return;
    }
    mount_fuse_to_stat(&a, &st);
    fuse_reply_attr(req, &st, MOUNT_FUSE_TIMEOUT);
}

void
mount_fuse_op_readlink(fuse_req_t req, fuse_ino_t ino)
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
        mount_fuse_to_stat(a, &e.attr);
        /* "." and "..": attributes only, no lookup counted; a file
         * listed names-only likewise (its number and type still in the
         * name's entry). */
        int dots = strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
        int bare = !dots && d->names_only && (a->mode & S_IFMT) != S_IFDIR;
        if (!dots && !bare) {
            e.ino = a->ino;
            e.attr_timeout = e.entry_timeout = MOUNT_FUSE_TIMEOUT;
        }
        n = fuse_add_direntry_plus(d->req, d->buf + d->used, room, name, &e, (off_t)next);
        if (n <= room && !dots) {
            d->with_attrs += !bare;
            d->without += bare;
        }
    } else {
        struct stat st;
        mount_fuse_to_stat(a, &st);
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
    if (rc == 0)
        pqv_mount_listed(mount_fuse_ctx.m, ino, (uint64_t)off);
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
void
mount_fuse_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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

void
mount_fuse_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    readdir_common(req, ino, size, off, 0);
}

void
mount_fuse_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    readdir_common(req, ino, size, off, 1);
}
#endif
