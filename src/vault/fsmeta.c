/*
 * fsmeta.c: file-system metadata to entries (add) and back (get): owners
 * and their names, permission bits, times, extended attributes.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util/io.h"
#include "vault/entry.h"
#include "vault/fsmeta.h"
#include "vault/vault_internal.h"

/* Bytes of a file's list of extended-attribute names read at most. */
#define MAX_XATTR_LIST (64u << 10)

static char *
owner_name(struct fsmeta_names *c, uint32_t id, int group)
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

void
fsmeta_names_free(struct fsmeta_names *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->e[i].name);
    free(c->e);
}

/* as_root(): whether this process runs as root (asked once: the effective
 * user never changes while pqvault runs, and a restore asks per file). */
static int
as_root(void)
{
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

    if (v < 0) {
        v = geteuid() == 0;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* An O_PATH descriptor (a FIFO or device node, never opened for I/O)
 * takes no f*xattr call: its attributes are reached through its
 * /proc/self/fd link, which names that very node (as glibc's fchmodat
 * does). */
static int
path_fd(int fd, char *proc, size_t len)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || !(fl & O_PATH))
        return 0;
    snprintf(proc, len, "/proc/self/fd/%d", fd);
    return 1;
}

static ssize_t
list_xattrs(int fd, const char *proc, char *list, size_t len)
{
    return proc != NULL ? listxattr(proc, list, len) : flistxattr(fd, list, len);
}

static ssize_t
get_xattr(int fd, const char *proc, const char *name, void *value, size_t len)
{
    return proc != NULL ? getxattr(proc, name, value, len) : fgetxattr(fd, name, value, len);
}

int
fsmeta_read_xattrs(int fd, struct entry *e, const char *path, pqv_report_fn report,
    void *report_ctx)
{
    char *list = NULL, procbuf[64];
    const char *proc = path_fd(fd, procbuf, sizeof(procbuf)) ? procbuf : NULL;
    ssize_t len = list_xattrs(fd, proc, NULL, 0);
    int rc = 0;

    if (len <= 0)
        return 0;
    if ((size_t)len > MAX_XATTR_LIST || (list = malloc((size_t)len + 1)) == NULL)
        return len > (ssize_t)MAX_XATTR_LIST ? 0 : PQV_E_NOMEM;
    if ((len = list_xattrs(fd, proc, list, (size_t)len)) < 0) {
        free(list);
        return 0;
    }
    list[len] = '\0';
    for (char *name = list; name < list + len && rc == 0; name += strlen(name) + 1) {
        uint8_t *value;
        ssize_t vlen;
        struct xattr *grown;
        if (*name == '\0' || strlen(name) > 255 ||
            (strncmp(name, "user.", 5) != 0 && !as_root()))
            continue;
        if ((vlen = get_xattr(fd, proc, name, NULL, 0)) < 0 || (size_t)vlen > MAX_XATTR_VALUE) {
            vault_report(report, report_ctx, PQV_REPORT_WARNING, path,
                "extended attribute %s not stored", name);
            continue;
        }
        if ((value = malloc((size_t)vlen + 1)) == NULL)
            rc = PQV_E_NOMEM;
        else if ((vlen = get_xattr(fd, proc, name, value, (size_t)vlen)) < 0)
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

int
fsmeta_fill_entry(struct entry *e, const char *name, int kind, const struct stat *st,
    const char *target, uint64_t hlgroup, struct fsmeta_names *cache)
{
    memset(e, 0, sizeof(*e));
    if ((e->name = strdup(name)) == NULL)
        return PQV_E_NOMEM;
    e->kind = kind;
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
    e->hlgroup = hlgroup;
    if (kind == KIND_SYMLINK && (e->target = strdup(target)) == NULL)
        return PQV_E_NOMEM;
    if (KIND_IS_DEVICE(kind)) {
        e->rdev_major = major(st->st_rdev);
        e->rdev_minor = minor(st->st_rdev);
    }
    return 0;
}

/* ---- entry -> file (get) ---- */

/* The names looked up on this machine by a restore, per thread (a tree
 * of thousands of files has a handful of owners: the password and group
 * files are read once each, not once a file). */
#define OWNER_CACHE 32
static __thread struct {
    char name[64];
    int group, found;
    uint32_t id;
} owner_cache[OWNER_CACHE];
static __thread unsigned owner_cached, owner_next;

/* id_of(name, group, id): the local id of user (group) ${name}; 0 if none. */
static int
id_of(const char *name, int group, uint32_t *id)
{
    char buf[4096];
    int found = 0;
    unsigned k;

    for (k = 0; k < owner_cached; k++)
        if (owner_cache[k].group == group && strcmp(owner_cache[k].name, name) == 0) {
            if (owner_cache[k].found)
                *id = owner_cache[k].id;
            return owner_cache[k].found;
        }
    if (group) {
        struct group gr, *grp = NULL;
        if (getgrnam_r(name, &gr, buf, sizeof(buf), &grp) == 0 && grp != NULL) {
            *id = grp->gr_gid;
            found = 1;
        }
    } else {
        struct passwd pw, *pwp = NULL;
        if (getpwnam_r(name, &pw, buf, sizeof(buf), &pwp) == 0 && pwp != NULL) {
            *id = pwp->pw_uid;
            found = 1;
        }
    }
    if (strlen(name) < sizeof(owner_cache[0].name)) {
        k = owner_cached < OWNER_CACHE ? owner_cached++ : owner_next++ % OWNER_CACHE;
        snprintf(owner_cache[k].name, sizeof(owner_cache[k].name), "%s", name);
        owner_cache[k].group = group;
        owner_cache[k].found = found;
        owner_cache[k].id = found ? *id : 0;
    }
    return found;
}

/* fsmeta_owner(e, uid, gid): as root, the owner to restore: by name when the
 * name exists here (as tar does), else by number; 0 when not root. */
int
fsmeta_owner(const struct entry *e, uid_t *uid, gid_t *gid)
{
    uint32_t id;

    if (!as_root() || e->epoch == 0) /* (format 1 kept no owners) */
        return 0;
    *uid = e->uid;
    *gid = e->gid;
    if (e->user != NULL && id_of(e->user, 0, &id))
        *uid = id;
    if (e->group != NULL && id_of(e->group, 1, &id))
        *gid = id;
    return 1;
}

void
fsmeta_durable_meta(const struct entry *e, struct durable_meta *m)
{
    memset(m, 0, sizeof(*m));
    m->mode = e->perm & 07777;
    m->mtime.tv_sec = e->mtime_sec;
    m->mtime.tv_nsec = e->mtime_nsec;
    m->set_owner = fsmeta_owner(e, &m->uid, &m->gid);
}

/* fsmeta_set_xattrs(fd, e, display, opt): user.* attributes always, the others
 * (security., trusted., system.) as root only; a file system that takes
 * none is reported, not an error. */
void
fsmeta_set_xattrs(int fd, const struct entry *e, const char *display, pqv_report_fn report,
    void *report_ctx)
{
    char procbuf[64];
    const char *proc;

    if (e->nxattrs == 0)
        return;
    proc = path_fd(fd, procbuf, sizeof(procbuf)) ? procbuf : NULL;
    for (size_t i = 0; i < e->nxattrs; i++) {
        const struct xattr *x = &e->xattrs[i];
        if (strncmp(x->name, "user.", 5) != 0 && !as_root())
            continue;
        if (proc != NULL ? setxattr(proc, x->name, x->value, x->len, 0) != 0
                         : io_fsetxattr(fd, x->name, x->value, x->len, display) != 0)
            vault_report(report, report_ctx, PQV_REPORT_WARNING, display,
                "extended attribute %s not restored: %s", x->name, strerror(errno));
    }
}

void
fsmeta_xattrs_cb(int fd, void *ctx)
{
    const struct fsmeta_xattrs *x = ctx;

    fsmeta_set_xattrs(fd, x->e, x->display, x->report, x->report_ctx);
}
