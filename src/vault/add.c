/*
 * add.c: storing files and trees (pqv_vault_add_path, pqv_vault_add_fd).
 *
 * A tree is walked from a descriptor of the directory the user named, one
 * component at a time, never following a link below it.  Regular files,
 * directories and symbolic links are stored with their owner, group, mode,
 * times and extended attributes; names that are hard links of one file
 * share its data and are restored as links; the holes of a sparse file are
 * not stored.  Each file is read through one descriptor (source.c): what is
 * stored is one state of the file, never a mix; a file that changes while
 * it is read is read again, up to READ_ATTEMPTS times, then refused.  An
 * entry that cannot be read is reported and skipped; everything else is
 * stored, and the add then fails (PQV_E_IO) saying how many were not.
 *
 * The whole command is one transaction (txn.c): extents are read, zstd-
 * compressed when it pays and sealed on the worker pool, a bounded window
 * ahead, and appended in order to packs; the entries become one segment,
 * the commit point.  A format-1 vault is upgraded first (upgrade.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "crypto/kdf.h"
#include "pqvault/match.h"
#include "util/fsutil.h"
#include "util/pool.h"
#include "util/util.h"
#include "vault/compact.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/segment.h"
#include "vault/source.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

#define READ_ATTEMPTS 3
#define MAX_XATTR_LIST (64u << 10)

/* One file, directory or symbolic link to add. */
struct add_file {
    char *rel;              /* below the plan's root; NULL: from a descriptor */
    char *path;             /* for messages */
    char *name;
    int kind;               /* KIND_FILE, KIND_DIR, KIND_SYMLINK */
    struct stat st;         /* at the walk (a file's is replaced at its open) */
    char *target;           /* symbolic links */
    uint64_t hlgroup;       /* nonzero: one of several names of one file */
    int replacing;          /* stored before: stored again (changed) */
    int unchanged;          /* stored before as it is now: left as it is */
};

/* Something the walk found, reported once the add has passed its checks
 * (so a refused add says only why it was refused). */
struct note {
    int level;
    char *subject, *message;
};

struct add_plan {
    struct add_file *files;
    size_t n, cap;
    uint64_t total_bytes;
    int rootfd;             /* the directory the tree is read from */
    char *root;             /* its path */
    char *origin;           /* the operand's absolute path, recorded */
    struct note *notes;
    size_t nnotes;
    uint64_t not_stored;    /* entries reported and skipped */
    char **stale;           /* names to remove: below a directory replaced by a
                               file, or gone from the source (--delete) */
    size_t nstale;
    uint64_t excluded;      /* entries the exclusion rules left out */
    char *root_name;        /* the operand's stored name */
    char **unreadable;      /* stored names of directories that could not be read */
    size_t nunreadable;
};

static void
plan_free(struct add_plan *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        free(plan->files[i].rel);
        free(plan->files[i].path);
        free(plan->files[i].name);
        free(plan->files[i].target);
    }
    free(plan->files);
    for (size_t i = 0; i < plan->nnotes; i++) {
        free(plan->notes[i].subject);
        free(plan->notes[i].message);
    }
    free(plan->notes);
    for (size_t i = 0; i < plan->nstale; i++)
        free(plan->stale[i]);
    free(plan->stale);
    for (size_t i = 0; i < plan->nunreadable; i++)
        free(plan->unreadable[i]);
    free(plan->unreadable);
    free(plan->root_name);
    if (plan->rootfd >= 0)
        close(plan->rootfd);
    free(plan->root);
    free(plan->origin);
    memset(plan, 0, sizeof(*plan));
    plan->rootfd = -1;
}

/* note(plan, level, subject, fmt, ...): remember a report for later; an
 * error also counts the entry as not stored. */
static int
note(struct add_plan *plan, int level, const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
note(struct add_plan *plan, int level, const char *subject, const char *fmt, ...)
{
    struct note *grown = realloc(plan->notes, (plan->nnotes + 1) * sizeof(*grown));
    struct note *n;
    va_list ap;
    int rc;

    if (grown == NULL)
        return PQV_E_NOMEM;
    plan->notes = grown;
    n = &plan->notes[plan->nnotes];
    va_start(ap, fmt);
    rc = vasprintf(&n->message, fmt, ap);
    va_end(ap);
    if (rc < 0 || (n->subject = strdup(subject)) == NULL) {
        if (rc >= 0)
            free(n->message);
        return PQV_E_NOMEM;
    }
    n->level = level;
    plan->nnotes++;
    if (level == PQV_REPORT_ERROR)
        plan->not_stored++;
    return 0;
}

static int
plan_push(struct add_plan *plan, const char *rel, const char *path, const char *name, int kind,
    const struct stat *st, const char *target)
{
    struct add_file *f;

    if (plan->n == plan->cap) {
        size_t cap = plan->cap ? 2 * plan->cap : 64;
        struct add_file *p = realloc(plan->files, cap * sizeof(*p));
        if (p == NULL)
            return PQV_E_NOMEM;
        plan->files = p;
        plan->cap = cap;
    }
    f = &plan->files[plan->n];
    memset(f, 0, sizeof(*f));
    if ((rel != NULL && (f->rel = strdup(rel)) == NULL) || (f->path = strdup(path)) == NULL ||
        (f->name = strdup(name)) == NULL || (target != NULL && (f->target = strdup(target)) == NULL)) {
        free(f->rel);
        free(f->path);
        free(f->name);
        return PQV_E_NOMEM;
    }
    plan->n++;
    f->kind = kind;
    if (st != NULL) {
        f->st = *st;
        if (kind == KIND_FILE)
            plan->total_bytes += (uint64_t)st->st_size;
    }
    return 0;
}

/* kind_name(mode): what a file that is not stored is, in words. */
static const char *
kind_name(mode_t mode)
{
    return S_ISLNK(mode) ? "symbolic link" : S_ISSOCK(mode) ? "socket" :
        S_ISFIFO(mode) ? "FIFO" : (S_ISCHR(mode) || S_ISBLK(mode)) ? "device" : "special file";
}

/* A directory entry read during the walk. */
struct dirent_stat {
    char *name;
    struct stat st;
    char *target;           /* a symbolic link's */
};

static int
compare_dirents(const void *a, const void *b)
{
    return strcmp(((const struct dirent_stat *)a)->name, ((const struct dirent_stat *)b)->name);
}

/* read_link(dirfd, name, st, out): a symbolic link's target (as written). */
static int
read_link(int dirfd, const char *name, const struct stat *st, char **out)
{
    size_t cap = st->st_size > 0 && st->st_size < 4096 ? (size_t)st->st_size + 1 : 4097;
    char *t = malloc(cap);
    ssize_t n;

    if (t == NULL)
        return PQV_E_NOMEM;
    n = readlinkat(dirfd, name, t, cap);
    if (n < 0 || (size_t)n >= cap || n == 0) {
        int e = n < 0 ? errno : ENAMETOOLONG;
        free(t);
        return error_errno(name, "read link", e);
    }
    t[n] = '\0';
    *out = t;
    return 0;
}

/* read_dir(plan, rel, path, follow, out, n): the entries of the directory
 * ${rel} below the root with their lstat (stat with ${follow}), sorted. */
static int
read_dir(struct add_plan *plan, const char *rel, const char *path, int follow,
    struct dirent_stat **out, size_t *n)
{
    struct dirent_stat *list = NULL;
    size_t k = 0, cap = 0;
    struct dirent *de;
    DIR *d;
    int fd, rc;

    if ((rc = fsutil_open_dirs(plan->rootfd, plan->root, rel, FSUTIL_NOCREATE, 0, &fd)) != 0)
        return error_subject(rc, path);
    if ((d = fdopendir(fd)) == NULL) {
        rc = error_errno(path, "open directory", errno);
        close(fd);
        return rc;
    }
    while ((errno = 0, de = readdir(d)) != NULL) {
        struct dirent_stat *x;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (k == cap) {
            cap = cap ? 2 * cap : 32;
            struct dirent_stat *p = realloc(list, cap * sizeof(*p));
            if (p == NULL) {
                rc = PQV_E_NOMEM;
                goto fail;
            }
            list = p;
        }
        x = &list[k];
        x->target = NULL;
        if (fstatat(dirfd(d), de->d_name, &x->st, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0 &&
            (!follow || fstatat(dirfd(d), de->d_name, &x->st, AT_SYMLINK_NOFOLLOW) != 0))
            continue; /* vanished meanwhile */
        if (S_ISLNK(x->st.st_mode) && (rc = read_link(dirfd(d), de->d_name, &x->st, &x->target)) != 0) {
            if (rc == PQV_E_NOMEM)
                goto fail;
            continue; /* vanished, or changed into something else */
        }
        if ((x->name = strdup(de->d_name)) == NULL) {
            free(x->target);
            rc = PQV_E_NOMEM;
            goto fail;
        }
        k++;
    }
    if (errno != 0) {
        rc = error_errno(path, "read directory", errno);
        goto fail;
    }
    closedir(d);
    util_sort(list, k, sizeof(*list), compare_dirents);
    *out = list;
    *n = k;
    return 0;

fail:
    closedir(d);
    for (size_t i = 0; i < k; i++) {
        free(list[i].name);
        free(list[i].target);
    }
    free(list);
    return rc;
}

/* Options of the walk. */
struct walk_opts {
    int follow;             /* -L: follow symbolic links */
    dev_t dev;              /* --one-file-system: the operand's device */
    int one_fs;
    const struct pqv_match *exclude;
    size_t root_len;        /* the operand's stored name: excluded names are
                               tested relative to it */
    int exclude_caches;
    int verbose;
    struct stat vault_dir, keyfile;  /* never stored (st_ino 0: unknown) */
};

/* same_inode(a, b): whether two stats are one file (${b} known). */
static int
same_inode(const struct stat *a, const struct stat *b)
{
    return b->st_ino != 0 && a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* cache_dir(plan, rel): whether the directory ${rel} holds a CACHEDIR.TAG
 * with its signature (bford.info/cachedir), as tar and borg honour. */
static int
cache_dir(struct add_plan *plan, const char *rel)
{
    static const char sig[] = "Signature: 8a477f597d28d172789f06886806bc55";
    char buf[sizeof(sig) - 1];
    int dfd, fd, is = 0;

    if (fsutil_open_dirs(plan->rootfd, plan->root, rel, FSUTIL_NOCREATE, 0, &dfd) != 0)
        return 0;
    fd = openat(dfd, "CACHEDIR.TAG", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(dfd);
    if (fd < 0)
        return 0;
    is = fsutil_pread_all(fd, buf, sizeof(buf), 0, "CACHEDIR.TAG") == (ssize_t)sizeof(buf) &&
        memcmp(buf, sig, sizeof(buf)) == 0;
    close(fd);
    return is;
}

/* left_out(plan, wo, cname, crel, cpath, cst, rc): whether the walk leaves
 * this entry out (the vault itself, the exclusion rules); said once. */
static int
left_out(struct add_plan *plan, const struct walk_opts *wo, const char *cname, const char *crel,
    const char *cpath, const struct stat *cst, int *rc)
{
    const char *rel = strlen(cname) > wo->root_len ? cname + wo->root_len + 1 : cname;

    *rc = 0;
    if (same_inode(cst, &wo->vault_dir) || same_inode(cst, &wo->keyfile)) {
        *rc = note(plan, PQV_REPORT_WARNING, cpath, "not stored: it is the vault %s itself",
            same_inode(cst, &wo->keyfile) ? "key file" : "directory");
        return 1;
    }
    if ((wo->exclude != NULL && pqv_match_test(wo->exclude, rel, S_ISDIR(cst->st_mode))) ||
        (wo->exclude_caches && S_ISDIR(cst->st_mode) && cache_dir(plan, crel))) {
        plan->excluded++;
        if (wo->verbose)
            *rc = note(plan, PQV_REPORT_INFO, cpath, "excluded");
        return 1;
    }
    return 0;
}

/* walk(plan, wo, rel, path, name, st): add the directory ${rel} (below the
 * root, ${path} in messages) and what is below it to the plan. */
static int
walk(struct add_plan *plan, const struct walk_opts *wo, const char *rel, const char *path,
    const char *name, const struct stat *st, int depth)
{
    struct dirent_stat *list = NULL;
    size_t n = 0;
    int rc;

    if (depth > 2048)
        return note(plan, PQV_REPORT_ERROR, path, "not stored: too deep (a link loop?)");
    if ((rc = read_dir(plan, rel, path, wo->follow, &list, &n)) != 0) {
        char **grown;
        if (rc == PQV_E_NOMEM)
            return rc;
        /* Unreadable: reported, and the rest of the tree is stored; what
         * the vault holds below it is not "gone" (--delete keeps it). */
        if ((grown = realloc(plan->unreadable, (plan->nunreadable + 1) * sizeof(*grown))) == NULL)
            return PQV_E_NOMEM;
        plan->unreadable = grown;
        if ((plan->unreadable[plan->nunreadable] = strdup(name)) == NULL)
            return PQV_E_NOMEM;
        plan->nunreadable++;
        return note(plan, PQV_REPORT_ERROR, path, "not stored: %s", pqv_error_last()->reason);
    }
    rc = plan_push(plan, rel, path, name, KIND_DIR, st, NULL);
    for (size_t i = 0; i < n; i++) {
        char *crel = NULL, *cpath = NULL, *cname = NULL;
        const struct stat *cst = &list[i].st;
        if (rc != 0)
            goto next;
        if (asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "", list[i].name) < 0 ||
            asprintf(&cpath, "%s/%s", path, list[i].name) < 0 ||
            asprintf(&cname, "%s/%s", name, list[i].name) < 0) {
            crel = cpath = cname = NULL; /* (asprintf leaves them undefined) */
            rc = PQV_E_NOMEM;
        } else if (strlen(cname) > PQV_NAME_MAX) {
            rc = note(plan, PQV_REPORT_ERROR, cpath, "not stored: its name would be longer "
                "than %d bytes", PQV_NAME_MAX);
        } else if (left_out(plan, wo, cname, crel, cpath, cst, &rc)) {
            /* (said by left_out) */
        } else if (S_ISREG(cst->st_mode)) {
            rc = plan_push(plan, crel, cpath, cname, KIND_FILE, cst, NULL);
        } else if (S_ISLNK(cst->st_mode)) {
            rc = plan_push(plan, crel, cpath, cname, KIND_SYMLINK, cst, list[i].target);
        } else if (S_ISDIR(cst->st_mode)) {
            if (wo->one_fs && cst->st_dev != wo->dev)
                rc = note(plan, PQV_REPORT_INFO, cpath, "skipped (another file system)");
            else
                rc = walk(plan, wo, crel, cpath, cname, cst, depth + 1);
        } else {
            rc = note(plan, PQV_REPORT_WARNING, cpath, "skipped (%s)", kind_name(cst->st_mode));
        }
next:
        free(crel);
        free(cpath);
        free(cname);
        free(list[i].name);
        free(list[i].target);
    }
    free(list);
    return rc;
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(((const struct add_file *)a)->name, ((const struct add_file *)b)->name);
}

/* planned_dir(plan, name): whether the plan stores ${name} as a directory. */
static int
planned_dir(const struct add_plan *plan, const char *name)
{
    struct add_file key, *hit;

    key.name = (char *)name;
    hit = util_search(&key, plan->files, plan->n, sizeof(*plan->files), compare_names);
    return hit != NULL && hit->kind == KIND_DIR;
}

/* check_parents(plan, st, name): no parent of ${name} may be a file (or a
 * link) in the vault, unless this add makes it a directory. */
static int
check_parents(const struct add_plan *plan, const struct state *st, const char *name)
{
    char parent[PQV_NAME_MAX + 1];

    for (const char *p = strchr(name, '/'); p != NULL; p = strchr(p + 1, '/')) {
        const struct entry *e;
        snprintf(parent, sizeof(parent), "%.*s", (int)(p - name), name);
        if ((e = state_find(st, parent)) != NULL && e->kind != KIND_DIR &&
            !planned_dir(plan, parent))
            return error_set(PQV_E_EXISTS, name, "%s is a file in the vault: nothing can be "
                "stored below it", parent);
    }
    return 0;
}

/* keep_stale(plan, st, name): the names below ${name}, a directory being
 * replaced by a file, to remove in the same epoch. */
static int
keep_stale(struct add_plan *plan, const struct state *st, const char *name)
{
    for (size_t i = state_first_under(st, name); i < st->n && names_under(st->entries[i].name,
         name); i++) {
        char **grown;
        if (strcmp(st->entries[i].name, name) == 0)
            continue;
        if ((grown = realloc(plan->stale, (plan->nstale + 1) * sizeof(*grown))) == NULL)
            return PQV_E_NOMEM;
        plan->stale = grown;
        if ((plan->stale[plan->nstale] = strdup(st->entries[i].name)) == NULL)
            return PQV_E_NOMEM;
        plan->nstale++;
    }
    return 0;
}

/* recorded_as_is(old, f): whether ${old} records ${f} as the walk found it:
 * the same kind, inode, mtime and ctime (any change of content, mode,
 * owner, links or extended attributes moves the ctime), a file's size and
 * a link's target; restic decides so too. */
static int
recorded_as_is(const struct entry *old, const struct add_file *f)
{
    if (old->kind != f->kind || old->ino != (uint64_t)f->st.st_ino ||
        old->mtime_sec != (int64_t)f->st.st_mtim.tv_sec ||
        old->mtime_nsec != (uint32_t)f->st.st_mtim.tv_nsec ||
        old->ctime_sec != (int64_t)f->st.st_ctim.tv_sec ||
        old->ctime_nsec != (uint32_t)f->st.st_ctim.tv_nsec)
        return 0;
    if (f->kind == KIND_FILE)
        return old->size == (uint64_t)f->st.st_size;
    if (f->kind == KIND_SYMLINK)
        return old->target != NULL && f->target != NULL && strcmp(old->target, f->target) == 0;
    return 1;
}

/* gone_names(st, plan, opt): --delete: the stored names below the operand
 * that the walk did not find, as removals; not those the exclusion rules
 * leave out (rsync keeps them too) nor those below a directory that could
 * not be read. */
static int
gone_names(const struct state *st, struct add_plan *plan, const struct pqv_add_options *opt)
{
    size_t root_len = strlen(plan->root_name);

    for (size_t i = state_first_under(st, plan->root_name);
         i < st->n && names_under(st->entries[i].name, plan->root_name); i++) {
        const struct entry *e = &st->entries[i];
        struct add_file key;
        int keep = 0;
        char **grown;
        key.name = e->name;
        if (util_search(&key, plan->files, plan->n, sizeof(*plan->files), compare_names) != NULL)
            continue;
        for (size_t k = 0; k < plan->nunreadable && !keep; k++)
            keep = names_under(e->name, plan->unreadable[k]);
        if (opt->exclude != NULL && strlen(e->name) > root_len)
            keep |= pqv_match_test(opt->exclude, e->name + root_len + 1, e->kind == KIND_DIR);
        for (size_t k = 0; k < plan->nstale && !keep; k++)
            keep = strcmp(plan->stale[k], e->name) == 0;
        if (keep)
            continue;
        if ((grown = realloc(plan->stale, (plan->nstale + 1) * sizeof(*grown))) == NULL)
            return PQV_E_NOMEM;
        plan->stale = grown;
        if ((plan->stale[plan->nstale] = strdup(e->name)) == NULL)
            return PQV_E_NOMEM;
        plan->nstale++;
    }
    return 0;
}

/* prepare(st, plan, opt): decide, for every entry of the plan, whether it
 * is new, changed (stored again) or unchanged (left as it is), and refuse
 * before anything is written: duplicates, a name added from another place
 * (without force), names that would be both a file and a directory. */
static int
prepare(struct state *st, struct add_plan *plan, const struct pqv_add_options *opt)
{
    const struct entry *root;
    int rc = 0;

    util_sort(plan->files, plan->n, sizeof(*plan->files), compare_names);
    /* The same name from another place is another tree, not an update. */
    root = plan->root_name != NULL ? state_find(st, plan->root_name) : NULL;
    if (root != NULL && !opt->force && plan->origin != NULL) {
        char was[PQV_NAME_MAX + 4096];
        if (state_origin(st, plan->root_name, was, sizeof(was)) == 0 &&
            strcmp(was, plan->origin) != 0)
            return error_set(PQV_E_EXISTS, plan->root_name, "already exists, added from %s",
                was);
    }
    for (size_t i = 0; i < plan->n && rc == 0; i++) {
        struct add_file *f = &plan->files[i];
        const struct entry *old;
        size_t below;
        if (i > 0 && strcmp(f->name, plan->files[i - 1].name) == 0)
            return error_set(PQV_E_INVAL, f->name, "given twice");
        if ((rc = check_parents(plan, st, f->name)) != 0)
            return rc;
        old = state_find(st, f->name);
        below = state_first_under(st, f->name);
        if (old != NULL)
            below++;
        if (old == NULL && below < st->n && names_under(st->entries[below].name, f->name)) {
            /* Stored only as the prefix of other names: a directory. */
            if (f->kind != KIND_DIR)
                rc = keep_stale(plan, st, f->name);
            continue;
        }
        if (old == NULL)
            continue;
        if (!opt->force_read && recorded_as_is(old, f)) {
            f->unchanged = 1;
            continue;
        }
        /* Stored again: its newer entry wins; a directory that becomes a
         * file leaves nothing below it. */
        f->replacing = 1;
        if (f->kind != KIND_DIR)
            rc = keep_stale(plan, st, f->name);
    }
    if (rc == 0 && opt->delete_missing && plan->root_name != NULL)
        rc = gone_names(st, plan, opt);
    return rc;
}

/* ---- owners and attributes ---- */

/* A small cache of user and group names. */
struct names_cache {
    struct { uint32_t id; char *name; int group; } *e;
    size_t n;
};

static char *
owner_name(struct names_cache *c, uint32_t id, int group)
{
    char buf[4096];
    const char *name = NULL;

    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].id == id && c->e[i].group == group)
            return c->e[i].name != NULL ? strdup(c->e[i].name) : NULL;
    if (group) {
        struct group gr, *g = NULL;
        if (getgrgid_r(id, &gr, buf, sizeof(buf), &g) == 0 && g != NULL)
            name = g->gr_name;
    } else {
        struct passwd pw, *p = NULL;
        if (getpwuid_r(id, &pw, buf, sizeof(buf), &p) == 0 && p != NULL)
            name = p->pw_name;
    }
    void *grown = realloc(c->e, (c->n + 1) * sizeof(*c->e));
    if (grown != NULL) {
        c->e = grown;
        c->e[c->n].id = id;
        c->e[c->n].group = group;
        c->e[c->n].name = name != NULL && strlen(name) < 256 ? strdup(name) : NULL;
        c->n++;
    }
    return name != NULL && strlen(name) < 256 ? strdup(name) : NULL;
}

static void
names_cache_free(struct names_cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->e[i].name);
    free(c->e);
}

/* read_xattrs(fd, e, path, opt): the file's extended attributes: user.*
 * always, the others when root (they are restored only by root).  Not
 * supported by the file system: none.  Others' failures are reported. */
static int
read_xattrs(int fd, struct entry *e, const char *path, const struct pqv_add_options *opt)
{
    char *list = NULL;
    ssize_t len = flistxattr(fd, NULL, 0);
    int rc = 0;

    if (len <= 0)
        return 0;
    if ((size_t)len > MAX_XATTR_LIST || (list = malloc((size_t)len + 1)) == NULL)
        return len > (ssize_t)MAX_XATTR_LIST ? 0 : PQV_E_NOMEM;
    if ((len = flistxattr(fd, list, (size_t)len)) < 0) {
        free(list);
        return 0;
    }
    list[len] = '\0';
    for (char *name = list; name < list + len && rc == 0; name += strlen(name) + 1) {
        uint8_t *value;
        ssize_t vlen;
        struct xattr *grown;
        if (*name == '\0' || strlen(name) > 255 ||
            (strncmp(name, "user.", 5) != 0 && geteuid() != 0))
            continue;
        if ((vlen = fgetxattr(fd, name, NULL, 0)) < 0 || (size_t)vlen > MAX_XATTR_VALUE) {
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, path,
                "extended attribute %s not stored", name);
            continue;
        }
        if ((value = malloc((size_t)vlen + 1)) == NULL)
            rc = PQV_E_NOMEM;
        else if ((vlen = fgetxattr(fd, name, value, (size_t)vlen)) < 0)
            free(value);
        else if ((grown = realloc(e->xattrs, (e->nxattrs + 1) * sizeof(*grown))) == NULL) {
            free(value);
            rc = PQV_E_NOMEM;
        } else {
            e->xattrs = grown;
            e->xattrs[e->nxattrs].value = value;
            e->xattrs[e->nxattrs].len = (size_t)vlen;
            if ((e->xattrs[e->nxattrs].name = strdup(name)) == NULL) {
                free(value);
                rc = PQV_E_NOMEM;
            } else {
                e->nxattrs++;
            }
        }
    }
    free(list);
    return rc;
}

/* fill_entry(e, f, st, cache): an entry's name, kind and metadata. */
static int
fill_entry(struct entry *e, const struct add_file *f, const struct stat *st,
    struct names_cache *cache)
{
    memset(e, 0, sizeof(*e));
    if ((e->name = strdup(f->name)) == NULL)
        return PQV_E_NOMEM;
    e->kind = f->kind;
    e->perm = (uint32_t)(st->st_mode & 07777);
    e->uid = st->st_uid;
    e->gid = st->st_gid;
    e->user = owner_name(cache, st->st_uid, 0);
    e->group = owner_name(cache, st->st_gid, 1);
    e->mtime_sec = (int64_t)st->st_mtim.tv_sec;
    e->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
    e->ctime_sec = (int64_t)st->st_ctim.tv_sec;
    e->ctime_nsec = (uint32_t)st->st_ctim.tv_nsec;
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->hlgroup = f->hlgroup;
    if (f->kind == KIND_SYMLINK && (e->target = strdup(f->target)) == NULL)
        return PQV_E_NOMEM;
    return 0;
}

/* ---- files of equal content ---- */

/* The files of one extent already in the vault or in this add, by the
 * keyed hash of their content: an equal file shares their key and data,
 * as hard links do (only smaller files are hashed: a duplicate larger than
 * 4 MiB is stored again). */
struct dedup {
    const struct entry **slots;  /* open addressing, NULL: empty */
    size_t cap, n;
};

static size_t
dedup_home(const struct dedup *d, const uint8_t content[32])
{
    uint64_t h;

    memcpy(&h, content, sizeof(h)); /* a keyed hash: uniform */
    return (size_t)(h & (d->cap - 1));
}

static int
dedup_add(struct dedup *d, const struct entry *e)
{
    if (e->kind != KIND_FILE || !e->has_content || e->nextents != 1)
        return 0;
    if (2 * (d->n + 1) > d->cap) {
        struct dedup bigger = { NULL, d->cap ? 2 * d->cap : 256, 0 };
        if ((bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots))) == NULL)
            return PQV_E_NOMEM;
        for (size_t i = 0; i < d->cap; i++)
            if (d->slots[i] != NULL) {
                size_t k = dedup_home(&bigger, d->slots[i]->content);
                while (bigger.slots[k] != NULL)
                    k = (k + 1) & (bigger.cap - 1);
                bigger.slots[k] = d->slots[i];
                bigger.n++;
            }
        free(d->slots);
        *d = bigger;
    }
    size_t k = dedup_home(d, e->content);
    while (d->slots[k] != NULL) {
        if (memcmp(d->slots[k]->content, e->content, 32) == 0)
            return 0; /* the first one stays */
        k = (k + 1) & (d->cap - 1);
    }
    d->slots[k] = e;
    d->n++;
    return 0;
}

static const struct entry *
dedup_find(const struct dedup *d, const uint8_t content[32])
{
    if (d->cap == 0)
        return NULL;
    for (size_t k = dedup_home(d, content); d->slots[k] != NULL; k = (k + 1) & (d->cap - 1))
        if (util_ct_equal(d->slots[k]->content, content, 32))
            return d->slots[k];
    return NULL;
}

/* ---- reading and sealing ---- */

/* A unit of work on the pool: one extent. */
struct add_job {
    struct pool_job job;
    pqv_vault *v;
    const uint8_t *file_key;
    struct source *src;          /* NULL: the plaintext is in ${plain} already */
    struct extent x;
    uint32_t index;
    int suite, compress;
    uint8_t *plain, *sealed, *scratch;
    int read_rc;                 /* reading the source failed (or SOURCE_CHANGED) */
    struct error_saved read_error;
    const char *path;
    int hash;                    /* the whole file: its content hash wanted */
    uint8_t content[32];
};

static void
job_run(struct pool_job *pj)
{
    struct add_job *job = (struct add_job *)pj;
    int rc = 0;

    job->read_rc = 0;
    if (job->src != NULL) {
        job->read_rc = source_read(job->src, job->x.file_off, job->plain, job->x.plain_len,
            job->path);
        if (job->read_rc != 0) {
            error_save(&job->read_error);
            goto out; /* the file's problem, not the add's */
        }
    }
    if (job->hash && (rc = kdf_hmac_sha256(job->content, job->v->dedup_key,
                          sizeof(job->v->dedup_key), job->plain, job->x.plain_len)) != 0)
        goto out;
    rc = pack_seal_extent(job->suite, job->file_key, job->index, &job->x, job->plain,
        job->compress, job->scratch, job->sealed);
out:
    util_wipe(job->plain, job->x.plain_len);
    job->job.rc = rc;
}

/* The window of extents in flight, and what the add counts. */
struct adder {
    pqv_vault *v;
    struct txn *t;
    struct add_plan *plan;
    const struct pqv_add_options *opt;
    struct add_job *jobs;
    size_t size, next, oldest, inflight;
    int rc;                      /* a failure that ends the add */
    uint64_t done_bytes;
    struct names_cache names;
    struct entry cur;            /* the file being read */
    int cur_state;               /* FILE_OK, FILE_FAILED, FILE_CHANGED */
    const struct entry *cur_same; /* a stored file of the same content */
    uint64_t files, bytes, new_bytes;
    struct dedup dedup;
    struct entry **kept;         /* entries of earlier checkpoints */
    size_t nkept;
    uint64_t since_checkpoint_bytes, since_checkpoint_entries;
};

enum { FILE_OK = 0, FILE_FAILED = 1, FILE_CHANGED = 2 };

static int
adder_init(pqv_vault *v, struct adder *a)
{
    struct pool *pool = vault_pool(v);

    if (pool == NULL)
        return PQV_E_NOMEM;
    a->size = pool_threads(pool) + WINDOW_EXTRA;
    if ((a->jobs = calloc(a->size, sizeof(*a->jobs))) == NULL)
        return PQV_E_NOMEM;
    return 0;
}

static void
adder_free(struct adder *a)
{
    for (size_t i = 0; a->jobs != NULL && i < a->size; i++) {
        if (a->jobs[i].scratch != NULL)
            util_wipe(a->jobs[i].scratch, pack_scratch_size());
        free(a->jobs[i].plain);
        free(a->jobs[i].sealed);
        free(a->jobs[i].scratch);
    }
    free(a->jobs);
    free(a->dedup.slots);
    for (size_t i = 0; i < a->nkept; i++) {
        entry_clear(a->kept[i]);
        free(a->kept[i]);
    }
    free(a->kept);
    names_cache_free(&a->names);
    entry_clear(&a->cur);
}

/* retire(a): wait for the oldest extent; append it to its pack and to the
 * file's entry (in order). */
static void
retire(struct adder *a)
{
    struct add_job *job = &a->jobs[a->oldest];
    int rc = pool_wait(vault_pool(a->v), &job->job);

    a->oldest = (a->oldest + 1) % a->size;
    a->inflight--;
    if (rc != 0 && a->rc == 0)
        a->rc = rc;
    if (a->rc != 0 || a->cur_state != FILE_OK)
        return;
    if (job->read_rc != 0) {
        if (job->read_rc == SOURCE_CHANGED) {
            a->cur_state = FILE_CHANGED;
        } else {
            error_restore(&job->read_error);
            a->cur_state = FILE_FAILED;
        }
        return;
    }
    if (job->hash) {
        memcpy(a->cur.content, job->content, sizeof(a->cur.content));
        a->cur.has_content = 1;
        if ((a->cur_same = dedup_find(&a->dedup, job->content)) != NULL) {
            /* Stored already: its data is shared, this copy dropped. */
            a->done_bytes += job->x.plain_len;
            return;
        }
    }
    if ((rc = txn_put_extent(a->t, job->sealed, &job->x)) != 0) {
        a->rc = rc;
        return;
    }
    a->cur.extents[job->index] = job->x;
    a->done_bytes += job->x.plain_len;
    if (a->opt->progress != NULL)
        a->opt->progress(a->opt->progress_ctx, a->done_bytes, a->plan->total_bytes);
}

static void
drain(struct adder *a)
{
    while (a->inflight > 0)
        retire(a);
}

/* slot(a): a free job with buffers (waiting for the oldest if needed). */
static struct add_job *
slot(struct adder *a)
{
    struct add_job *job;

    if (a->inflight == a->size)
        retire(a);
    job = &a->jobs[a->next];
    if (job->plain == NULL && ((job->plain = malloc(PQV_OBJECT_MAX_PLAIN)) == NULL ||
            (job->sealed = malloc(pack_sealed_max())) == NULL ||
            (job->scratch = malloc(pack_scratch_size())) == NULL))
        return NULL;
    return job;
}

static void
submit(struct adder *a, struct add_job *job)
{
    pool_submit(vault_pool(a->v), &job->job);
    a->next = (a->next + 1) % a->size;
    a->inflight++;
}

/* A region of a file's data (holes are what lies between regions). */
struct region {
    uint64_t off, len;
};

/* data_regions(fd, size, out, n): where ${fd} holds data: SEEK_DATA and
 * SEEK_HOLE for a sparse file, one region otherwise. */
static int
data_regions(int fd, const struct stat *st, struct region **out, size_t *n)
{
    uint64_t size = (uint64_t)st->st_size;
    struct region *r = NULL;
    size_t k = 0, cap = 0;
    off_t pos = 0;

    *out = NULL;
    *n = 0;
    if (size == 0)
        return 0;
    /* Dense (the common case): fewer blocks than the size never happens. */
    if ((uint64_t)st->st_blocks * 512 >= size) {
        if ((r = malloc(sizeof(*r))) == NULL)
            return PQV_E_NOMEM;
        r[0].off = 0;
        r[0].len = size;
        *out = r;
        *n = 1;
        return 0;
    }
    while ((uint64_t)pos < size) {
        off_t data = lseek(fd, pos, SEEK_DATA), hole;
        if (data < 0)
            break; /* ENXIO: no data after pos (or no SEEK_DATA: treated alike) */
        if ((hole = lseek(fd, data, SEEK_HOLE)) < 0)
            hole = (off_t)size;
        if ((uint64_t)hole > size)
            hole = (off_t)size;
        if (k == cap) {
            cap = cap ? 2 * cap : 8;
            struct region *g = realloc(r, cap * sizeof(*r));
            if (g == NULL) {
                free(r);
                return PQV_E_NOMEM;
            }
            r = g;
        }
        r[k].off = (uint64_t)data;
        r[k].len = (uint64_t)(hole - data);
        k++;
        pos = hole;
    }
    *out = r;
    *n = k;
    return 0;
}

/* read_file(a, f, src): the extents of ${f} from ${src} into the entry
 * a->cur (its key and extents); a->cur_state says how it went. */
static int
read_file(struct adder *a, struct add_file *f, struct source *src)
{
    struct region *regions = NULL;
    size_t nregions = 0;
    uint32_t nextents = 0, index = 0;
    int rc;

    a->cur_state = FILE_OK;
    a->cur_same = NULL;
    a->cur.has_content = 0;
    a->cur.suite = a->v->config.aead;
    a->cur.size = (uint64_t)src->st.st_size;
    if ((rc = txn_new_file_key(a->t, a->cur.key)) != 0)
        return rc;
    a->cur.key_state = KEY_CLEAR;
    if ((rc = data_regions(src->fd, &src->st, &regions, &nregions)) != 0)
        return rc;
    for (size_t i = 0; i < nregions; i++)
        nextents += (uint32_t)((regions[i].len + PQV_OBJECT_MAX_PLAIN - 1) / PQV_OBJECT_MAX_PLAIN);
    free(a->cur.extents);
    a->cur.extents = NULL;
    a->cur.nextents = nextents;
    if (nextents > 0 && (a->cur.extents = calloc(nextents, sizeof(*a->cur.extents))) == NULL) {
        free(regions);
        return PQV_E_NOMEM;
    }
    for (size_t i = 0; i < nregions && a->rc == 0 && a->cur_state == FILE_OK; i++) {
        for (uint64_t off = 0; off < regions[i].len && a->rc == 0 && a->cur_state == FILE_OK;) {
            struct add_job *job = slot(a);
            uint64_t left = regions[i].len - off;
            if (job == NULL) {
                a->rc = PQV_E_NOMEM;
                break;
            }
            memset(&job->x, 0, sizeof(job->x));
            job->v = a->v;
            job->file_key = a->cur.key;
            job->src = src;
            job->path = f->path;
            job->x.file_off = regions[i].off + off;
            job->x.plain_len = left > PQV_OBJECT_MAX_PLAIN ? PQV_OBJECT_MAX_PLAIN : (uint32_t)left;
            job->index = index++;
            job->suite = a->cur.suite;
            job->compress = !a->opt->no_compress;
            /* (A write-only writer has no content-hash key: no dedup.) */
            job->hash = a->v->inbox == NULL && nregions == 1 && regions[0].off == 0 &&
                job->x.plain_len == a->cur.size;
            job->job.run = job_run;
            submit(a, job);
            off += job->x.plain_len;
        }
    }
    /* All of this file's extents (they hold its key and source). */
    drain(a);
    free(regions);
    if (a->rc != 0)
        return a->rc;
    if (a->cur_state == FILE_OK && a->cur_same != NULL) {
        /* The key and extent of the equal file. */
        const struct entry *same = a->cur_same;
        if (same->key_state == KEY_CLEAR)
            memcpy(a->cur.key, same->key, PQV_FILE_KEY_BYTES);
        else if ((rc = state_file_key(a->v, a->t->st, same, a->cur.key)) != 0)
            return rc;
        a->cur.suite = same->suite;
        a->cur.extents[0] = same->extents[0];
    }
    if (a->cur_state == FILE_OK && f->rel != NULL) {
        rc = source_unchanged(src, a->plan->rootfd, a->plan->root, f->rel, f->path);
        if (rc == SOURCE_CHANGED)
            a->cur_state = FILE_CHANGED;
        else if (rc != 0)
            a->cur_state = FILE_FAILED;
    }
    return 0;
}

/* add_one(a, f): ${f} as an entry of the transaction (reported and skipped
 * if it cannot be read consistently). */
static int
add_one(struct adder *a, struct add_file *f)
{
    const struct pqv_add_options *opt = a->opt;
    struct source src;
    int rc, attempt;

    if (f->kind != KIND_FILE) {
        struct stat st = f->st;
        int fd = -1;
        if ((rc = fill_entry(&a->cur, f, &st, &a->names)) != 0)
            return rc;
        if (f->kind == KIND_DIR && f->rel != NULL &&
            fsutil_open_dirs(a->plan->rootfd, a->plan->root, f->rel, FSUTIL_NOCREATE, 0, &fd) == 0) {
            rc = read_xattrs(fd, &a->cur, f->path, opt);
            close(fd);
            if (rc != 0)
                return rc;
        }
        goto commit;
    }
    for (attempt = 1;; attempt++) {
        if ((rc = source_open(&src, a->plan->rootfd, a->plan->root, f->rel, f->path)) != 0) {
            if (rc == PQV_E_NOMEM)
                return rc;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path, "not stored: %s",
                pqv_error_last()->reason);
            a->plan->not_stored++;
            return 0;
        }
        entry_clear(&a->cur);
        if ((rc = fill_entry(&a->cur, f, &src.st, &a->names)) != 0 ||
            (rc = read_xattrs(src.fd, &a->cur, f->path, opt)) != 0 ||
            (rc = read_file(a, f, &src)) != 0) {
            source_close(&src);
            return rc;
        }
        source_close(&src);
        if (a->cur_state == FILE_OK)
            break;
        if (a->cur_state == FILE_FAILED) {
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path, "not stored: %s",
                pqv_error_last()->reason);
            a->plan->not_stored++;
            return 0;
        }
        /* Changed while read: its extents already in packs are garbage
         * (gc); read it again with a new key. */
        if (attempt == READ_ATTEMPTS) {
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path,
                "not stored: it changed while it was being read, %d times", attempt);
            a->plan->not_stored++;
            return 0;
        }
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, f->path,
            "changed while it was being read: reading it again");
    }
    a->files++;
    a->bytes += a->cur.size;
commit:
    if (f == &a->plan->files[0] && a->plan->origin != NULL &&
        (a->cur.origin = strdup(a->plan->origin)) == NULL)
        return PQV_E_NOMEM;
    vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, f->name,
        f->replacing ? "changed" : "added");
    if ((rc = txn_add(a->t, &a->cur)) != 0)
        return rc;
    return dedup_add(&a->dedup, a->t->entries[a->t->n - 1]);
}

/* hard_links(plan): names of one file (same device and inode, more than
 * one link) get one group id; the data is read once. */
static int
hard_links(struct add_plan *plan)
{
    struct { dev_t dev; ino_t ino; size_t first; } *seen = NULL;
    size_t nseen = 0;
    int rc = 0;

    for (size_t i = 0; i < plan->n && rc == 0; i++) {
        struct add_file *f = &plan->files[i];
        size_t k;
        if (f->kind != KIND_FILE || f->st.st_nlink < 2)
            continue;
        for (k = 0; k < nseen; k++)
            if (seen[k].dev == f->st.st_dev && seen[k].ino == f->st.st_ino)
                break;
        if (k < nseen) {
            struct add_file *first = &plan->files[seen[k].first];
            if (first->hlgroup == 0)
                rc = util_random(&first->hlgroup, sizeof(first->hlgroup));
            first->hlgroup |= 1; /* nonzero */
            f->hlgroup = first->hlgroup;
            continue;
        }
        void *grown = realloc(seen, (nseen + 1) * sizeof(*seen));
        if (grown == NULL) {
            rc = PQV_E_NOMEM;
            break;
        }
        seen = grown;
        seen[nseen].dev = f->st.st_dev;
        seen[nseen].ino = f->st.st_ino;
        seen[nseen].first = i;
        nseen++;
    }
    free(seen);
    return rc;
}

/* link_entry(a, f, first): ${f} shares the entry of ${first} (read before
 * it in name order: the first name of its group). */
static int
link_entry(struct adder *a, struct add_file *f, const struct entry *first)
{
    struct entry e;
    int rc;

    if ((rc = entry_copy(&e, first)) != 0)
        return rc;
    free(e.name);
    free(e.origin);
    e.origin = NULL;
    if ((e.name = strdup(f->name)) == NULL) {
        entry_clear(&e);
        return PQV_E_NOMEM;
    }
    vault_report(a->opt->report, a->opt->report_ctx, PQV_REPORT_INFO, f->name,
        f->replacing ? "changed (hard link)" : "added (hard link)");
    return txn_add(a->t, &e);
}

/* An add commits at its end, and a large one also at checkpoints, so that
 * an interrupted add keeps most of its work: run again, it finds what was
 * checkpointed unchanged and continues. */
#define CHECKPOINT_BYTES (512ull << 20)
#define CHECKPOINT_ENTRIES 20000

/* checkpoint_entries(): CHECKPOINT_ENTRIES; the test build takes another
 * from PQVAULT_TEST_CHECKPOINT_ENTRIES (kill tests of small adds). */
static uint64_t
checkpoint_entries(void)
{
#ifdef PQV_TEST_HOOKS
    const char *e = getenv("PQVAULT_TEST_CHECKPOINT_ENTRIES");
    if (e != NULL && atoi(e) > 0)
        return (uint64_t)atoi(e);
#endif
    return CHECKPOINT_ENTRIES;
}

/* checkpoint(a, st): commit the entries so far as an epoch and begin the
 * next transaction on it.  The committed entries stay in memory (later
 * hard links and equal files refer to them). */
static int
checkpoint(struct adder *a, struct state *st)
{
    struct txn *t = a->t;
    int rc;

    if (t->n == 0)
        return 0;
    if ((rc = txn_commit(t, SEGMENT_DELTA, NULL, 0, NULL, 0)) != 0)
        return rc;
    for (size_t i = 0; i < t->nintroduced; i++)
        a->new_bytes += t->introduced[i].size;
    /* Keep the entries; the state goes on from the new epoch. */
    struct entry **grown = realloc(a->kept, (a->nkept + t->n) * sizeof(*grown));
    if (grown == NULL)
        return PQV_E_NOMEM;
    a->kept = grown;
    memcpy(a->kept + a->nkept, t->entries, t->n * sizeof(*grown));
    a->nkept += t->n;
    t->n = 0;
    st->epoch = t->committed_epoch;
    memcpy(st->chain, t->committed_chain, 32);
    txn_free(t);
    a->since_checkpoint_bytes = 0;
    a->since_checkpoint_entries = 0;
    return txn_begin(a->v, st, t);
}

/* first_of_group(a, group): the entry already made for a hard-link group. */
static const struct entry *
first_of_group(const struct adder *a, uint64_t group)
{
    for (size_t k = 0; k < a->t->n; k++)
        if (a->t->entries[k]->hlgroup == group)
            return a->t->entries[k];
    for (size_t k = 0; k < a->nkept; k++)
        if (a->kept[k]->hlgroup == group)
            return a->kept[k];
    return NULL;
}

/* say(opt, level, subject, message): a report, if wanted. */
static void
say(const struct pqv_add_options *opt, const char *subject, const char *message)
{
    vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, subject, "%s", message);
}

/* dry_run(plan, opt, res): what the add would do, said and counted. */
static void
dry_run(const struct add_plan *plan, const struct pqv_add_options *opt, struct pqv_add_result *res)
{
    for (size_t i = 0; i < plan->n; i++) {
        const struct add_file *f = &plan->files[i];
        if (f->unchanged) {
            res->unchanged++;
            if (opt->verbose)
                say(opt, f->name, "unchanged");
            continue;
        }
        if (f->replacing)
            res->changed++;
        else
            res->added++;
        if (f->kind == KIND_FILE) {
            res->files++;
            res->bytes += (uint64_t)f->st.st_size;
        }
        say(opt, f->name, f->replacing ? "would be stored again (changed)" : "would be added");
    }
    for (size_t i = 0; i < plan->nstale; i++) {
        res->removed++;
        say(opt, plan->stale[i], "would be removed");
    }
}

/* add_state_open(v, st) and add_state_load(v, st): the state an add builds
 * on; a write-only writer reads nothing of the vault, its state is empty
 * (every name is new to it; conflicts are resolved at import). */
static int
add_state_open(pqv_vault *v, struct state *st)
{
    if (v->inbox != NULL) {
        memset(st, 0, sizeof(*st));
        st->format = 2;
        st->loaded = 1;
        return 0;
    }
    return state_current(v, st, NULL);
}

static int
add_state_load(pqv_vault *v, struct state *st)
{
    return v->inbox != NULL ? 0 : state_load(v, st);
}

static int
run_plan(pqv_vault *v, struct add_plan *plan, const struct pqv_add_options *opt)
{
    struct pqv_add_result res;
    struct state st;
    struct txn t;
    struct adder a;
    int rc;

    memset(&res, 0, sizeof(res));
    if ((rc = add_state_open(v, &st)) != 0)
        return rc;
    if ((rc = add_state_load(v, &st)) != 0 || (rc = prepare(&st, plan, opt)) != 0 ||
        (rc = hard_links(plan)) != 0) {
        state_free(&st);
        return rc;
    }
    for (size_t i = 0; i < plan->nnotes; i++)
        vault_report(opt->report, opt->report_ctx, plan->notes[i].level, plan->notes[i].subject,
            "%s", plan->notes[i].message);
    res.excluded = plan->excluded;
    res.failed = plan->not_stored;
    if (opt->dry_run) {
        dry_run(plan, opt, &res);
        state_free(&st);
        goto result;
    }
    memset(&a, 0, sizeof(a));
    a.v = v;
    a.t = &t;
    a.plan = plan;
    a.opt = opt;
    if ((rc = txn_begin(v, &st, &t)) != 0) {
        state_free(&st);
        return rc;
    }
    if ((rc = adder_init(v, &a)) != 0)
        goto done;
    for (size_t i = 0; i < st.n && rc == 0; i++)
        rc = dedup_add(&a.dedup, &st.entries[i]);
    const uint64_t every = checkpoint_entries();
    for (size_t i = 0; i < plan->n && rc == 0; i++) {
        struct add_file *f = &plan->files[i];
        const struct entry *first;
        uint64_t stored_before = a.files;
        if (f->unchanged) {
            res.unchanged++;
            if (opt->verbose)
                say(opt, f->name, "unchanged");
            a.done_bytes += f->kind == KIND_FILE ? (uint64_t)f->st.st_size : 0;
            continue;
        }
        /* A later name of a hard-linked file: the entry already made. */
        first = f->hlgroup != 0 ? first_of_group(&a, f->hlgroup) : NULL;
        size_t before = t.n;
        rc = first != NULL ? link_entry(&a, f, first) : add_one(&a, f);
        if (rc == 0)
            rc = a.rc;
        if (rc == 0 && t.n > before) {
            if (f->replacing)
                res.changed++;
            else
                res.added++;
            a.since_checkpoint_entries++;
            if (a.files > stored_before)
                a.since_checkpoint_bytes += f->st.st_size > 0 ? (uint64_t)f->st.st_size : 0;
            if (a.since_checkpoint_bytes >= CHECKPOINT_BYTES ||
                a.since_checkpoint_entries >= every)
                rc = checkpoint(&a, &st);
        }
    }
    /* Removed: below a directory that became a file, or gone (--delete). */
    for (size_t i = 0; i < plan->nstale && rc == 0; i++) {
        struct entry gone;
        memset(&gone, 0, sizeof(gone));
        gone.kind = KIND_REMOVED;
        if ((gone.name = strdup(plan->stale[i])) == NULL)
            rc = PQV_E_NOMEM;
        else
            rc = txn_add(&t, &gone);
        if (rc == 0) {
            res.removed++;
            say(opt, plan->stale[i], "removed");
        }
    }
    /* Nothing changed: no epoch (an unchanged tree costs no segment). */
    if (rc == 0 && t.n > 0)
        rc = txn_commit(&t, SEGMENT_DELTA, NULL, 0, NULL, 0);
    else if (rc != 0)
        txn_abort(&t);
    if (rc == 0) {
        for (size_t i = 0; i < t.nintroduced; i++)
            a.new_bytes += t.introduced[i].size;
        res.files = a.files;
        res.bytes = a.bytes;
        res.new_bytes = a.new_bytes;
    }
done:
    adder_free(&a);
    txn_free(&t);
    state_free(&st);
    if (rc == 0 && v->inbox == NULL)
        rc = compact_if_long(v, opt->report, opt->report_ctx);
result:
    if (rc == 0 && opt->result != NULL) {
        struct pqv_add_result *r = opt->result;
        r->files += res.files;
        r->bytes += res.bytes;
        r->failed += res.failed;
        r->added += res.added;
        r->changed += res.changed;
        r->unchanged += res.unchanged;
        r->removed += res.removed;
        r->excluded += res.excluded;
        r->new_bytes += res.new_bytes;
    }
    if (rc == 0 && plan->not_stored > 0)
        rc = error_set(PQV_E_IO, NULL, "%llu entr%s not stored (reported above)",
            (unsigned long long)plan->not_stored, plan->not_stored == 1 ? "y" : "ies");
    return rc;
}

static const struct pqv_add_options no_options;

/* default_name(path, out, outlen): the stored name of ${path} when none is
 * given: its last component (as cp, rsync and tar -C do), "." and ".."
 * resolved to the directory's own name. */
static int
default_name(const char *path, char *out, size_t outlen)
{
    char *real = NULL;
    const char *base;
    size_t n = strlen(path);
    int rc;

    while (n > 1 && path[n - 1] == '/')
        n--;
    base = path + n;
    while (base > path && base[-1] != '/')
        base--;
    if ((size_t)(path + n - base) == 0 || (path + n - base == 1 && *base == '.') ||
        (path + n - base == 2 && base[0] == '.' && base[1] == '.')) {
        if ((real = realpath(path, NULL)) == NULL)
            return error_errno(path, "resolve", errno);
        base = strrchr(real, '/') != NULL ? strrchr(real, '/') + 1 : real;
        if (*base == '\0') {
            free(real);
            return error_set(PQV_E_INVAL, path, "has no name of its own (the root directory)");
        }
        rc = pqv_name_normalize(base, out, outlen);
        free(real);
        return rc;
    }
    if ((size_t)(path + n - base) >= outlen)
        return error_set(PQV_E_INVAL, path, "name too long");
    memcpy(out, base, (size_t)(path + n - base));
    out[path + n - base] = '\0';
    return pqv_name_normalize(out, out, outlen);
}

/* open_operand(plan, path, st, rel): the directory the tree is read from
 * (the operand itself, or its parent for a file or link), and the
 * operand's path below it. */
static int
open_operand(struct add_plan *plan, const char *path, const struct stat *st, const char **rel)
{
    char dir[4096];
    const char *base;

    if (S_ISDIR(st->st_mode)) {
        snprintf(dir, sizeof(dir), "%s", path);
        *rel = "";
    } else {
        fsutil_dirname(path, dir, sizeof(dir));
        base = strrchr(path, '/');
        *rel = base != NULL ? base + 1 : path;
    }
    /* The operand's own path is the user's to point anywhere: links in it
     * are followed (as cd would); nothing below it is. */
    if ((plan->rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return error_errno(dir, "open directory", errno);
    if ((plan->root = strdup(dir)) == NULL)
        return PQV_E_NOMEM;
    plan->origin = realpath(path, NULL); /* recorded where it is known */
    return 0;
}

int
pqv_vault_add_path(pqv_vault *v, const char *path, const char *name,
    const struct pqv_add_options *opt)
{
    struct add_plan plan;
    struct walk_opts wo;
    char norm[PQV_NAME_MAX + 1];
    const char *rel;
    struct stat st;
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (path == NULL)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    /* A dry run changes nothing, not even the format (it plans on the
     * format-1 state as read); a write-only writer never upgrades. */
    if (!opt->dry_run && v->inbox == NULL &&
        (rc = upgrade_if_needed(v, opt->report, opt->report_ctx)) != 0)
        return rc;
    if ((rc = name != NULL ? pqv_name_normalize(name, norm, sizeof(norm))
                           : default_name(path, norm, sizeof(norm))) != 0)
        return rc;
    if ((opt->follow_links ? stat(path, &st) : lstat(path, &st)) != 0)
        return error_errno(path, "stat", errno);
    memset(&wo, 0, sizeof(wo));
    wo.follow = opt->follow_links;
    wo.one_fs = opt->one_file_system;
    wo.dev = st.st_dev;
    wo.exclude = opt->exclude;
    wo.root_len = strlen(norm);
    wo.exclude_caches = opt->exclude_caches;
    wo.verbose = opt->verbose;
    /* The vault's own files are never stored (add ~ with the vault in it). */
    if (v->dir == NULL || stat(v->dir, &wo.vault_dir) != 0)
        memset(&wo.vault_dir, 0, sizeof(wo.vault_dir));
    if (v->inbox != NULL || v->keyfile_path == NULL || stat(v->keyfile_path, &wo.keyfile) != 0)
        memset(&wo.keyfile, 0, sizeof(wo.keyfile));
    if (same_inode(&st, &wo.vault_dir) || same_inode(&st, &wo.keyfile))
        return error_set(PQV_E_INVAL, path, "is the vault's own %s: not stored",
            same_inode(&st, &wo.keyfile) ? "key file" : "directory");
    memset(&plan, 0, sizeof(plan));
    plan.rootfd = -1;
    if ((plan.root_name = strdup(norm)) == NULL)
        return PQV_E_NOMEM;
    if (S_ISLNK(st.st_mode)) {
        /* A link given as an operand is stored as the link (as tar does;
         * -L stores what it points to). */
        char dir[4096], *target = NULL;
        int dfd;
        fsutil_dirname(path, dir, sizeof(dir));
        if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
            return error_errno(dir, "open directory", errno);
        rc = read_link(dfd, strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path, &st,
            &target);
        close(dfd);
        if (rc == 0)
            rc = plan_push(&plan, NULL, path, norm, KIND_SYMLINK, &st, target);
        free(target);
    } else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        return error_set(PQV_E_INVAL, path, "is a %s: not stored (regular files, directories "
            "and symbolic links are)", kind_name(st.st_mode));
    } else if ((rc = open_operand(&plan, path, &st, &rel)) == 0) {
        if (S_ISREG(st.st_mode))
            rc = plan_push(&plan, rel, path, norm, KIND_FILE, &st, NULL);
        else
            rc = walk(&plan, &wo, rel, path, norm, &st, 0);
    }
    if (rc == 0)
        rc = run_plan(v, &plan, opt);
    plan_free(&plan);
    return rc;
}

/* Adding from a descriptor: its size is unknown until end of file, so
 * extents are read here, in order, and sealed on the pool. */
int
pqv_vault_add_fd(pqv_vault *v, int fd, const char *name, uint32_t mode, int64_t mtime_sec,
    const struct pqv_add_options *opt)
{
    struct add_plan plan;
    struct state st;
    struct txn t;
    struct adder a;
    struct stat fst;
    char norm[PQV_NAME_MAX + 1];
    size_t cap = 0;
    int rc, eof = 0;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (name == NULL || fd < 0)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    if (v->inbox == NULL && (rc = upgrade_if_needed(v, opt->report, opt->report_ctx)) != 0)
        return rc;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    memset(&plan, 0, sizeof(plan));
    plan.rootfd = -1;
    memset(&fst, 0, sizeof(fst));
    fst.st_mode = S_IFREG | (mode & 07777);
    fst.st_mtim.tv_sec = (time_t)mtime_sec;
    fst.st_ctim = fst.st_mtim;
    fst.st_uid = geteuid();
    fst.st_gid = getegid();
    if ((rc = plan_push(&plan, NULL, "standard input", norm, KIND_FILE, &fst, NULL)) != 0)
        return rc;
    if ((rc = add_state_open(v, &st)) != 0) {
        plan_free(&plan);
        return rc;
    }
    memset(&a, 0, sizeof(a));
    a.v = v;
    a.t = &t;
    a.plan = &plan;
    a.opt = opt;
    if ((rc = add_state_load(v, &st)) == 0 && (rc = prepare(&st, &plan, opt)) == 0 &&
        plan.files[0].replacing && !opt->force)
        /* A stream is no tree to update: replacing a name takes force. */
        rc = error_set(PQV_E_EXISTS, norm, "already exists");
    if (rc != 0 || (rc = txn_begin(v, &st, &t)) != 0) {
        state_free(&st);
        plan_free(&plan);
        return rc;
    }
    if ((rc = adder_init(v, &a)) != 0 || (rc = fill_entry(&a.cur, &plan.files[0], &fst,
                                              &a.names)) != 0 ||
        (rc = txn_new_file_key(&t, a.cur.key)) != 0)
        goto done;
    a.cur.key_state = KEY_CLEAR;
    a.cur.suite = v->config.aead;
    while (!eof && a.rc == 0) {
        struct add_job *job = slot(&a);
        ssize_t got;
        if (job == NULL) {
            a.rc = PQV_E_NOMEM;
            break;
        }
        /* Room for the next extent first: once plaintext is read, nothing
         * may fail before it goes to the job that wipes it. */
        if (a.cur.nextents == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            /* Jobs in flight are retired into cur.extents: finish them
             * before realloc may move the array. */
            drain(&a);
            void *p = realloc(a.cur.extents, ncap * sizeof(*a.cur.extents));
            if (p == NULL) {
                a.rc = PQV_E_NOMEM;
                break;
            }
            a.cur.extents = p;
            cap = ncap;
        }
        if ((got = fsutil_read_all(fd, job->plain, PQV_OBJECT_MAX_PLAIN, "standard input")) < 0) {
            a.rc = (int)got;
            util_wipe(job->plain, PQV_OBJECT_MAX_PLAIN); /* whatever was read */
            break;
        }
        eof = (size_t)got < PQV_OBJECT_MAX_PLAIN;
        if (got == 0)
            break;
        memset(&job->x, 0, sizeof(job->x));
        job->v = v;
        job->file_key = a.cur.key;
        job->src = NULL;
        job->path = "standard input";
        job->x.file_off = a.cur.size;
        job->x.plain_len = (uint32_t)got;
        job->index = a.cur.nextents++;
        job->suite = a.cur.suite;
        job->compress = !opt->no_compress;
        job->hash = 0;
        job->job.run = job_run;
        a.cur.size += (uint64_t)got;
        submit(&a, job);
    }
    drain(&a);
    if ((rc = a.rc) != 0)
        goto done;
    plan.total_bytes = a.cur.size;
    a.files = 1;
    a.bytes = a.cur.size;
    vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, norm,
        plan.files[0].replacing ? "replaced" : "added");
    if ((rc = txn_add(&t, &a.cur)) != 0)
        goto done;
    for (size_t i = 0; i < plan.nstale && rc == 0; i++) {
        struct entry gone;
        memset(&gone, 0, sizeof(gone));
        gone.kind = KIND_REMOVED;
        if ((gone.name = strdup(plan.stale[i])) == NULL)
            rc = PQV_E_NOMEM;
        else
            rc = txn_add(&t, &gone);
    }
    if (rc == 0)
        rc = txn_commit(&t, SEGMENT_DELTA, NULL, 0, NULL, 0);
    if (rc == 0 && opt->result != NULL) {
        opt->result->files++;
        opt->result->bytes += a.bytes;
        if (plan.files[0].replacing)
            opt->result->changed++;
        else
            opt->result->added++;
        opt->result->removed += plan.nstale;
        for (size_t i = 0; i < t.nintroduced; i++)
            opt->result->new_bytes += t.introduced[i].size;
    }
done:
    if (rc != 0 && t.committed_epoch == 0)
        txn_abort(&t);
    adder_free(&a);
    txn_free(&t);
    state_free(&st);
    plan_free(&plan);
    return rc;
}
