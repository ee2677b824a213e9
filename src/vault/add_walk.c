/*
 * add_walk.c: an operand of add walked into a plan.  A tree is walked from
 * a descriptor of the directory the user named, one component at a time,
 * never following a link below it (-L follows them); regular files,
 * directories and symbolic links are planned, other kinds are noted and
 * skipped, the exclusion rules and the vault's own files leave names out.
 * Nothing is reported yet: notes wait until the plan has passed its checks
 * (add_plan.c), so a refused add says only why it was refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pqvault/match.h"
#include "util/fsutil.h"
#include "util/util.h"
#include "vault/add_internal.h"
#include "vault/kinds.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

void
add_walk_init(struct add_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    plan->rootfd = -1;
    fsutil_dirs_init(&plan->dirs, -1, NULL, FSUTIL_NOCREATE, 0);
}

void
add_walk_free(struct add_plan *plan)
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
    fsutil_dirs_close(&plan->dirs);
    if (plan->rootfd >= 0)
        close(plan->rootfd);
    free(plan->root);
    free(plan->origin);
    memset(plan, 0, sizeof(*plan));
    plan->rootfd = -1;
    fsutil_dirs_init(&plan->dirs, -1, NULL, FSUTIL_NOCREATE, 0);
}

int
add_walk_note(struct add_plan *plan, int level, const char *subject, const char *fmt, ...)
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

int
add_walk_push(struct add_plan *plan, const char *rel, const char *path, const char *name, int kind,
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
    if (st != NULL)
        f->st = *st;
    return 0;
}

/* add_walk_kind_name(mode): what a file that is not stored is, in words. */
const char *
add_walk_kind_name(mode_t mode)
{
    const struct entry_kind *k = kinds_of_mode(mode);

    return k != NULL ? k->name : "special file";
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

    if ((rc = fsutil_open_dirs(plan->rootfd, plan->root, rel,
             FSUTIL_NOCREATE | (follow ? FSUTIL_FOLLOW : 0), 0, &fd)) != 0)
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
    int exclude_larger;     /* --exclude-larger-than */
    uint64_t larger_than;
    const char *const *tags;  /* --exclude-if-present: NAME or NAME:HEADER */
    size_t ntags;
    int verbose;
    int devices;            /* device nodes stored (not by a write-only writer) */
    struct stat vault_dir, keyfile;  /* never stored (st_ino 0: unknown) */
};

/* same_inode(a, b): whether two stats are one file (${b} known). */
static int
same_inode(const struct stat *a, const struct stat *b)
{
    return b->st_ino != 0 && a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* keep_below(plan, name): --delete keeps what the vault holds at ${name}
 * and below it (a directory not read, left out as a cache, or on another
 * file system with --one-file-system). */
static int
keep_below(struct add_plan *plan, const char *name)
{
    char **grown = realloc(plan->unreadable, (plan->nunreadable + 1) * sizeof(*grown));

    if (grown == NULL)
        return PQV_E_NOMEM;
    plan->unreadable = grown;
    if ((plan->unreadable[plan->nunreadable] = strdup(name)) == NULL)
        return PQV_E_NOMEM;
    plan->nunreadable++;
    return 0;
}

/* has_tag(dfd, name, namelen, header): whether the directory ${dfd} holds
 * ${name} (of any kind, as restic's lstat), and with a ${header} a file
 * that begins with it. */
static int
has_tag(int dfd, const char *name, size_t namelen, const char *header)
{
    char tag[NAME_MAX + 1], buf[256];
    struct stat st;
    size_t hlen = header != NULL ? strlen(header) : 0;
    int fd, is;

    if (namelen == 0 || namelen > NAME_MAX)
        return 0;
    memcpy(tag, name, namelen);
    tag[namelen] = '\0';
    if (header == NULL)
        return fstatat(dfd, tag, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (hlen > sizeof(buf))
        return 0;
    if ((fd = openat(dfd, tag, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
        return 0;
    is = fsutil_pread_all(fd, buf, hlen, 0, tag) == (ssize_t)hlen && memcmp(buf, header, hlen) == 0;
    if (!is)
        pqv_error_clear();
    close(fd);
    return is;
}

/* tagged_dir(plan, wo, rel): the tag that leaves the directory ${rel} out
 * (its name: "CACHEDIR.TAG" with its signature, bford.info/cachedir, as
 * tar and borg honour; an --exclude-if-present NAME[:HEADER]), or NULL. */
static const char *
tagged_dir(struct add_plan *plan, const struct walk_opts *wo, const char *rel, size_t *len)
{
    static const char sig[] = "Signature: 8a477f597d28d172789f06886806bc55";
    const char *found = NULL;
    int dfd;

    if ((!wo->exclude_caches && wo->ntags == 0) ||
        fsutil_open_dirs(plan->rootfd, plan->root, rel, FSUTIL_NOCREATE, 0, &dfd) != 0)
        return NULL;
    if (wo->exclude_caches && has_tag(dfd, "CACHEDIR.TAG", 12, sig)) {
        found = "CACHEDIR.TAG";
        *len = 12;
    }
    for (size_t i = 0; found == NULL && i < wo->ntags; i++) {
        const char *colon = strchr(wo->tags[i], ':');
        size_t n = colon != NULL ? (size_t)(colon - wo->tags[i]) : strlen(wo->tags[i]);
        if (has_tag(dfd, wo->tags[i], n, colon != NULL ? colon + 1 : NULL)) {
            found = wo->tags[i];
            *len = n;
        }
    }
    close(dfd);
    return found;
}

/* too_large(wo, st): a regular file --exclude-larger-than leaves out. */
static int
too_large(const struct walk_opts *wo, const struct stat *st)
{
    return wo->exclude_larger && S_ISREG(st->st_mode) && st->st_size > 0 &&
        (uint64_t)st->st_size > wo->larger_than;
}

/* excluded_here(plan, wo, name, rel, path, st, rc): whether the options
 * that look at the entry itself (--exclude-caches, --exclude-if-present,
 * --exclude-larger-than; the operand too) leave it out: counted, said with
 * --verbose, and what the vault holds of it kept by --delete (the rules
 * are known only here, not on names gone from the source). */
static int
excluded_here(struct add_plan *plan, const struct walk_opts *wo, const char *name,
    const char *rel, const char *path, const struct stat *st, int *rc)
{
    const char *tag = NULL;
    size_t len = 0;

    *rc = 0;
    if (S_ISDIR(st->st_mode))
        tag = tagged_dir(plan, wo, rel, &len);
    if (tag == NULL && !too_large(wo, st))
        return 0;
    plan->excluded++;
    if ((*rc = keep_below(plan, name)) == 0 && wo->verbose) {
        if (tag != NULL)
            *rc = add_walk_note(plan, PQV_REPORT_INFO, path, "excluded (holds %.*s)", (int)len,
                tag);
        else
            *rc = add_walk_note(plan, PQV_REPORT_INFO, path, "excluded (larger than %llu "
                "bytes)", (unsigned long long)wo->larger_than);
    }
    return 1;
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
        *rc = add_walk_note(plan, PQV_REPORT_WARNING, cpath, "not stored: it is the vault %s itself",
            same_inode(cst, &wo->keyfile) ? "key file" : "directory");
        return 1;
    }
    if (wo->exclude != NULL && pqv_match_test(wo->exclude, rel, S_ISDIR(cst->st_mode))) {
        plan->excluded++;
        if (wo->verbose)
            *rc = add_walk_note(plan, PQV_REPORT_INFO, cpath, "excluded");
        return 1;
    }
    /* (--delete tests the patterns itself, also on names gone from the
     * source; the other rules are known only here.) */
    return excluded_here(plan, wo, cname, crel, cpath, cst, rc);
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
        return add_walk_note(plan, PQV_REPORT_ERROR, path, "not stored: too deep (a link loop?)");
    if ((rc = read_dir(plan, rel, path, wo->follow, &list, &n)) != 0) {
        if (rc == PQV_E_NOMEM)
            return rc;
        /* Unreadable: reported, and the rest of the tree is stored; what
         * the vault holds below it is not "gone" (--delete keeps it). */
        if ((rc = keep_below(plan, name)) != 0)
            return rc;
        return add_walk_note(plan, PQV_REPORT_ERROR, path, "not stored: %s", pqv_error_last()->reason);
    }
    rc = add_walk_push(plan, rel, path, name, KIND_DIR, st, NULL);
    for (size_t i = 0; i < n; i++) {
        char *crel = NULL, *cpath = NULL, *cname = NULL;
        const struct stat *cst = &list[i].st;
        const struct entry_kind *k = NULL;
        if (rc != 0)
            goto next;
        if (asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "", list[i].name) < 0 ||
            asprintf(&cpath, "%s/%s", path, list[i].name) < 0 ||
            asprintf(&cname, "%s/%s", name, list[i].name) < 0) {
            crel = cpath = cname = NULL; /* (asprintf leaves them undefined) */
            rc = PQV_E_NOMEM;
        } else if (strlen(cname) > PQV_NAME_MAX) {
            rc = add_walk_note(plan, PQV_REPORT_ERROR, cpath, "not stored: its name would be longer "
                "than %d bytes", PQV_NAME_MAX);
        } else if (left_out(plan, wo, cname, crel, cpath, cst, &rc)) {
            /* (said by left_out) */
        } else if ((k = kinds_of_mode(cst->st_mode)) != NULL && k->kind == KIND_DIR) {
            if (wo->one_fs && cst->st_dev != wo->dev)
                rc = keep_below(plan, cname) != 0 ? PQV_E_NOMEM :
                    add_walk_note(plan, PQV_REPORT_INFO, cpath, "skipped (another file system)");
            else
                rc = walk(plan, wo, crel, cpath, cname, cst, depth + 1);
        } else if (k != NULL && k->stored && KIND_IS_DEVICE(k->kind) && !wo->devices) {
            rc = add_walk_note(plan, PQV_REPORT_WARNING, cpath, "skipped (%s: a write-only "
                "writer stores no device nodes)", k->name);
        } else if (k != NULL && k->stored) {
            rc = add_walk_push(plan, crel, cpath, cname, k->kind, cst, list[i].target);
        } else {
            rc = add_walk_note(plan, PQV_REPORT_WARNING, cpath, "skipped (%s)",
                add_walk_kind_name(cst->st_mode));
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

/* add_walk_default_name(path, out, outlen): the stored name of ${path} when none is
 * given: its last component (as cp, rsync and tar -C do), "." and ".."
 * resolved to the directory's own name. */
int
add_walk_default_name(const char *path, char *out, size_t outlen)
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
add_walk_operand(pqv_vault *v, struct add_plan *plan, const char *path, const char *name,
    const struct pqv_add_options *opt)
{
    struct walk_opts wo;
    char norm[PQV_NAME_MAX + 1];
    const char *rel;
    struct stat st;
    int rc;

    if ((rc = name != NULL ? pqv_name_normalize(name, norm, sizeof(norm))
                           : add_walk_default_name(path, norm, sizeof(norm))) != 0)
        return rc;
    if ((opt->follow_links ? stat(path, &st) : lstat(path, &st)) != 0)
        return error_errno(path, "stat", errno);
    if (S_ISLNK(st.st_mode)) {
        /* A link to a directory given as an operand is the directory's
         * contents to the user (as cp -H and du -D take it): it is read,
         * under the link's name; links below it stay links. */
        struct stat target;
        if (stat(path, &target) == 0 && S_ISDIR(target.st_mode)) {
            if ((rc = add_walk_note(plan, PQV_REPORT_INFO, path, "a link to a directory: "
                     "its contents are stored")) != 0)
                return rc;
            st = target;
        }
    }
    memset(&wo, 0, sizeof(wo));
    wo.follow = opt->follow_links;
    plan->follow = opt->follow_links;
    wo.one_fs = opt->one_file_system;
    wo.dev = st.st_dev;
    wo.exclude = opt->exclude;
    wo.root_len = strlen(norm);
    wo.exclude_caches = opt->exclude_caches;
    wo.exclude_larger = opt->exclude_larger;
    wo.larger_than = opt->exclude_larger_than;
    wo.tags = opt->exclude_if_present;
    wo.ntags = opt->exclude_if_present != NULL ? opt->nexclude_if_present : 0;
    wo.verbose = opt->verbose;
    wo.devices = v->sink->devices;
    /* The vault's own files are never stored (add ~ with the vault in it);
     * a write-only writer knows no key file. */
    if (v->dir == NULL || stat(v->dir, &wo.vault_dir) != 0)
        memset(&wo.vault_dir, 0, sizeof(wo.vault_dir));
    if (!v->sink->uses_keyfile || v->keyfile_path == NULL ||
        stat(v->keyfile_path, &wo.keyfile) != 0)
        memset(&wo.keyfile, 0, sizeof(wo.keyfile));
    if (same_inode(&st, &wo.vault_dir) || same_inode(&st, &wo.keyfile))
        return error_set(PQV_E_INVAL, path, "is the vault's own %s: not stored",
            same_inode(&st, &wo.keyfile) ? "key file" : "directory");
    if ((plan->root_name = strdup(norm)) == NULL)
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
            rc = add_walk_push(plan, NULL, path, norm, KIND_SYMLINK, &st, target);
        free(target);
        return rc;
    }
    {
        const struct entry_kind *k = kinds_of_mode(st.st_mode);
        if (k == NULL || !k->stored)
            return error_set(PQV_E_INVAL, path, "is a %s: not stored (regular files, "
                "directories, symbolic links, FIFOs and device nodes are)",
                add_walk_kind_name(st.st_mode));
        if (KIND_IS_DEVICE(k->kind) && !wo.devices)
            return error_set(PQV_E_INVAL, path, "is a %s: not stored (a write-only writer "
                "stores no device nodes)", k->name);
    }
    if ((rc = open_operand(plan, path, &st, &rel)) != 0)
        return rc;
    fsutil_dirs_init(&plan->dirs, plan->rootfd, plan->root,
        FSUTIL_NOCREATE | (plan->follow ? FSUTIL_FOLLOW : 0), 0);
    /* The operand itself: left out as what is below it would be (its plan
     * then empty, and --delete keeps what the vault holds of it). */
    if (excluded_here(plan, &wo, norm, S_ISDIR(st.st_mode) ? rel : "", path, &st, &rc))
        return rc;
    if (!S_ISDIR(st.st_mode))
        return add_walk_push(plan, rel, path, norm, kinds_of_mode(st.st_mode)->kind, &st, NULL);
    return walk(plan, &wo, rel, path, norm, &st, 0);
}

int
add_walk_check_options(const struct pqv_add_options *opt)
{
    for (size_t i = 0; opt->exclude_if_present != NULL && i < opt->nexclude_if_present; i++) {
        const char *t = opt->exclude_if_present[i], *colon;
        size_t n;
        if (t == NULL)
            return error_set(PQV_E_INVAL, NULL, "exclude_if_present: a NULL name");
        colon = strchr(t, ':');
        n = colon != NULL ? (size_t)(colon - t) : strlen(t);
        if (n == 0 || memchr(t, '/', n) != NULL || (n == 1 && t[0] == '.') ||
            (n == 2 && t[0] == '.' && t[1] == '.') || n > NAME_MAX)
            return error_set(PQV_E_INVAL, t, "not a file name (NAME or NAME:HEADER, NAME "
                "without '/')");
        if (colon != NULL && strlen(colon + 1) > 256)
            return error_set(PQV_E_INVAL, t, "a HEADER of more than 256 bytes");
    }
    return 0;
}
