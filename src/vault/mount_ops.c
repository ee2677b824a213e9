/*
 * mount_ops.c: the view's node operations (vault/mount_internal.h):
 * attributes as stat(2) gives them, lookup, directory listings, links and
 * extended attributes, over the trees mount.c loads and numbers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/util.h"
#include "vault/mount_internal.h"
#include "vault/names.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

/* ---- attributes ---- */

static void
dir_attr(const struct pqv_mount *m, uint64_t ino, uint32_t nlink, uint32_t pages, int64_t t,
    struct pqv_mount_attr *a)
{
    memset(a, 0, sizeof(*a));
    a->ino = ino;
    a->mode = S_IFDIR | 0555;
    a->nlink = nlink;
    a->uid = m->opt.uid;
    a->gid = m->opt.gid;
    a->size = (uint64_t)pages * 4096;
    a->blocks = a->size / 512;
    a->mtime_sec = a->ctime_sec = t;
}

/* history_root_attr(m, id, a): the root of a snapshot's tree or of
 * versions/, known without loading the tree (listing snapshots/ loads
 * none of them): link count 1, as file systems that do not count
 * subdirectories say (find and fts then make no guess from it), one
 * block of size. */
static void
history_root_attr(const struct pqv_mount *m, uint32_t id, struct pqv_mount_attr *a)
{
    dir_attr(m, mount_ino(id, 0), 1, 1, m->trees[id].time, a);
}

/* node_attr(m, t, node, a): the attributes of a node of a tree. */
static void
node_attr(const struct pqv_mount *m, const struct mount_tree *t, uint32_t node,
    struct pqv_mount_attr *a)
{
    const struct mount_node *nd = &t->nodes[t->nodes[node].inode];
    const struct entry *e = mount_tree_entry(t, t->nodes[node].inode);
    uint64_t data = 0;

    if (node == 0 && t->id >= 2) {
        history_root_attr(m, t->id, a);
        return;
    }
    if (e == NULL) {
        /* The root (with snapshots/ and versions/ at the view's root) or
         * a directory made up. */
        uint32_t extra = t->id == 1 && node == 0 ? 2 : 0;
        dir_attr(m, mount_ino(t->id, node), nd->nlink + extra, nd->dir_pages, t->time, a);
        return;
    }
    memset(a, 0, sizeof(*a));
    a->ino = mount_ino(t->id, t->nodes[node].inode);
    if (t->alias != NULL && t->alias[t->nodes[node].inode] != MOUNT_NONE)
        a->ino = mount_ino(1, t->alias[t->nodes[node].inode]);
    a->nlink = nd->nlink;
    a->uid = e->uid;
    a->gid = e->gid;
    if (e->epoch == 0 && t->keys != NULL && t->keys->format == 1) {
        a->uid = m->opt.uid; /* format 1 kept no owner */
        a->gid = m->opt.gid;
    }
    a->mtime_sec = e->mtime_sec;
    a->mtime_nsec = e->mtime_nsec;
    a->ctime_sec = e->ctime_sec;
    a->ctime_nsec = e->ctime_nsec;
    switch (e->kind) {
    case KIND_FILE:
        a->mode = S_IFREG | (e->perm & 07777);
        a->size = e->size;
        for (uint32_t i = 0; i < e->nextents; i++)
            data += e->extents[i].plain_len;
        a->blocks = ((data + 4095) / 4096) * 8;
        break;
    case KIND_SYMLINK:
        a->mode = S_IFLNK | (e->perm & 07777);
        a->size = e->target != NULL ? strlen(e->target) : 0;
        break;
    case KIND_FIFO:
        a->mode = S_IFIFO | (e->perm & 07777);
        break;
    case KIND_CHARDEV:
    case KIND_BLOCKDEV:
        /* Shown as stored; the mount is nodev (its nodes open nothing). */
        a->mode = (e->kind == KIND_CHARDEV ? S_IFCHR : S_IFBLK) | (e->perm & 07777);
        a->rdev_major = e->rdev_major;
        a->rdev_minor = e->rdev_minor;
        break;
    default:
        a->mode = S_IFDIR | (e->perm & 07777);
        a->size = (uint64_t)nd->dir_pages * 4096;
        a->blocks = a->size / 512;
        break;
    }
}

/* same_xattrs(a, b): the same extended attributes, in the same order. */
static int
same_xattrs(const struct entry *a, const struct entry *b)
{
    if (a->nxattrs != b->nxattrs)
        return 0;
    for (size_t i = 0; i < a->nxattrs; i++)
        if (strcmp(a->xattrs[i].name, b->xattrs[i].name) != 0 ||
            a->xattrs[i].len != b->xattrs[i].len ||
            (a->xattrs[i].len > 0 && memcmp(a->xattrs[i].value, b->xattrs[i].value, a->xattrs[i].len) != 0))
            return 0;
    return 1;
}

/* same_inode(m, t, node, root, r): what the kernel would see of ${node}
 * of ${t} and of ${r} of the root's tree is the same, but for the number. */
static int
same_inode(const struct pqv_mount *m, const struct mount_tree *t, uint32_t node,
    const struct mount_tree *root, uint32_t r)
{
    const struct entry *e = mount_tree_entry(t, node), *re = mount_tree_entry(root, r);
    struct pqv_mount_attr a, b;

    if (e == NULL || re == NULL || e->kind == KIND_DIR || re->kind != e->kind ||
        t->nodes[node].inode != node || t->nodes[node].nlink != 1 ||
        root->nodes[r].parent == MOUNT_NONE || root->nodes[r].hidden ||
        root->nodes[r].inode != r || root->nodes[r].nlink != 1)
        return 0;
    node_attr(m, t, node, &a);
    node_attr(m, root, r, &b);
    a.ino = b.ino = 0;
    if (memcmp(&a, &b, sizeof(a)) != 0 || !same_xattrs(e, re))
        return 0;
    if (e->kind == KIND_FILE)
        return entry_same_data(e, re);
    if (e->kind == KIND_SYMLINK)
        return e->target != NULL && re->target != NULL && strcmp(e->target, re->target) == 0;
    return 1;
}

int
mount_ops_alias(struct pqv_mount *m, struct mount_tree *t)
{
    const struct mount_tree *root = &m->trees[1];
    size_t at = 0;

    if (t->id < 2 || root->status != TREE_LOADED || t->nnodes == 0)
        return 0;
    if ((t->alias = malloc((size_t)t->nnodes * sizeof(*t->alias))) == NULL)
        return PQV_E_NOMEM;
    for (uint32_t i = 0; i < t->nnodes; i++)
        t->alias[i] = MOUNT_NONE;
    for (uint32_t node = 1; node <= t->n && node < t->nnodes; node++) {
        const char *name = t->entries[node - 1].name;
        uint32_t r;
        if (t->nodes[node].parent == MOUNT_NONE || t->entries[node - 1].kind == KIND_DIR)
            continue;
        /* A version is one of the name of its group. */
        if (t->groups != NULL)
            name = t->groups[node - 1] != 0 && t->groups[node - 1] <= t->ngroups ?
                t->group_names[t->groups[node - 1]] : NULL;
        if (name == NULL)
            continue;
        if (t->groups == NULL) {
            /* (A snapshot's names sort as the root's: one pass over both
             * finds them, not a search each.) */
            int c = 1;
            while (at < root->n && (c = strcmp(root->entries[at].name, name)) < 0)
                at++;
            r = at < root->n && c == 0 ? (uint32_t)at + 1 : MOUNT_NONE;
        } else {
            r = mount_tree_find(root, name);
        }
        if (r != MOUNT_NONE && same_inode(m, t, node, root, r))
            t->alias[node] = r;
    }
    return 0;
}

/* snapshot_index(m, name): the kept snapshot whose directory is ${name},
 * or -1. */
static long
snapshot_index(const struct pqv_mount *m, const char *name)
{
    size_t lo = 0, hi = m->kept.n;
    uint64_t epoch = 0;
    const char *p = name;

    for (; *p >= '0' && *p <= '9' && p - name < 20; p++)
        epoch = epoch * 10 + (uint64_t)(*p - '0');
    if (p == name || *p != '-')
        return -1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->kept.s[mid].epoch == epoch)
            return strcmp(m->snap_names[mid], name) == 0 ? (long)mid : -1;
        if (m->kept.s[mid].epoch < epoch)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static void
snapshots_dir_attr(const struct pqv_mount *m, struct pqv_mount_attr *a)
{
    dir_attr(m, VNODE_SNAPSHOTS, 2 + (uint32_t)m->kept.n,
        (uint32_t)(m->kept.n * 48 / 4096 + 1), m->newest_time, a);
}

static void
latest_attr(const struct pqv_mount *m, struct pqv_mount_attr *a)
{
    memset(a, 0, sizeof(*a));
    a->ino = VNODE_LATEST;
    a->mode = S_IFLNK | 0777;
    a->nlink = 1;
    a->uid = m->opt.uid;
    a->gid = m->opt.gid;
    a->size = strlen(m->snap_names[m->kept.n - 1]);
    a->mtime_sec = a->ctime_sec = m->kept.s[m->kept.n - 1].time;
}

/* ---- the operations ---- */

int
pqv_mount_getattr(struct pqv_mount *m, uint64_t ino, struct pqv_mount_attr *out)
{
    struct mount_tree *t;
    uint32_t tree, node;
    int rc;

    if (m == NULL || out == NULL)
        return -EINVAL;
    if ((rc = mount_decode(m, ino, &tree, &node)) != 0)
        return rc;
    if (tree == 0) {
        if (node == VNODE_SNAPSHOTS)
            snapshots_dir_attr(m, out);
        else
            latest_attr(m, out);
        return 0;
    }
    if (tree >= 2 && node == 0) {
        history_root_attr(m, tree, out);
        return 0;
    }
    if ((rc = mount_get_tree(m, tree, &t)) != 0)
        return rc;
    if (node >= t->nnodes || t->nodes[node].parent == MOUNT_NONE)
        rc = -ENOENT;
    else
        node_attr(m, t, node, out);
    mount_put_tree(m, t);
    return rc;
}

int
pqv_mount_lookup(struct pqv_mount *m, uint64_t parent, const char *name,
    struct pqv_mount_attr *out)
{
    struct mount_tree *t;
    uint32_t tree, node, child;
    long k;
    int rc;

    if (m == NULL || name == NULL || out == NULL)
        return -EINVAL;
    if ((rc = mount_decode(m, parent, &tree, &node)) != 0)
        return rc;
    if (tree == 0) {
        if (node != VNODE_SNAPSHOTS)
            return -ENOTDIR;
        if (strcmp(name, "latest") == 0 && m->kept.n > 0) {
            latest_attr(m, out);
            return 0;
        }
        if ((k = snapshot_index(m, name)) < 0)
            return -ENOENT;
        history_root_attr(m, 2 + (uint32_t)k, out);
        return 0;
    }
    if (tree == 1 && node == 0) {
        if (strcmp(name, m->snap_dir) == 0) {
            snapshots_dir_attr(m, out);
            return 0;
        }
        if (strcmp(name, m->vers_dir) == 0) {
            history_root_attr(m, m->versions, out);
            return 0;
        }
    }
    if ((rc = mount_get_tree(m, tree, &t)) != 0)
        return rc;
    if (node >= t->nnodes || t->nodes[node].parent == MOUNT_NONE)
        rc = -ENOENT;
    else if (mount_tree_entry(t, node) != NULL && mount_tree_entry(t, node)->kind != KIND_DIR)
        rc = -ENOTDIR;
    else if ((child = mount_tree_child(t, node, name)) == MOUNT_NONE)
        rc = -ENOENT;
    else
        node_attr(m, t, child, out);
    mount_put_tree(m, t);
    return rc;
}

/* dots(m, fn, ctx, self, up, offset, stop): "." and ".." from ${offset}. */
static int
dots(const struct pqv_mount_attr *self, const struct pqv_mount_attr *up, uint64_t offset,
    pqv_mount_dir_fn fn, void *ctx)
{
    if (offset == 0 && fn(ctx, ".", self, 1) != 0)
        return 1;
    if (offset <= 1 && fn(ctx, "..", up, 2) != 0)
        return 1;
    return 0;
}

/* readdir_snapshots(m, offset, fn, ctx): snapshots/: its snapshots, then
 * latest. */
static int
readdir_snapshots(struct pqv_mount *m, uint64_t offset, pqv_mount_dir_fn fn, void *ctx)
{
    struct pqv_mount_attr self, up, a;

    snapshots_dir_attr(m, &self);
    dir_attr(m, PQV_MOUNT_ROOT, 2, 1, m->newest_time, &up);
    if (dots(&self, &up, offset, fn, ctx))
        return 0;
    for (uint64_t i = offset < 2 ? 0 : offset - 2; i < m->kept.n; i++) {
        history_root_attr(m, 2 + (uint32_t)i, &a);
        if (fn(ctx, m->snap_names[i], &a, i + 3) != 0)
            return 0;
    }
    if (m->kept.n > 0 && offset <= 2 + m->kept.n) {
        latest_attr(m, &a);
        (void)fn(ctx, "latest", &a, m->kept.n + 3);
    }
    return 0;
}

/* tree_dir(m, tree, node, out): ${tree} held (mount_put_tree) in *${out}
 * if ${node} is one of its directories; else -ENOENT or -ENOTDIR (or
 * mount_get_tree's code), nothing held. */
static int
tree_dir(struct pqv_mount *m, uint32_t tree, uint32_t node, struct mount_tree **out)
{
    struct mount_tree *t;
    int rc;

    if ((rc = mount_get_tree(m, tree, &t)) != 0)
        return rc;
    if (node >= t->nnodes || t->nodes[node].parent == MOUNT_NONE)
        rc = -ENOENT;
    else if (mount_tree_entry(t, node) != NULL && mount_tree_entry(t, node)->kind != KIND_DIR)
        rc = -ENOTDIR;
    if (rc != 0) {
        mount_put_tree(m, t);
        return rc;
    }
    *out = t;
    return 0;
}

int
pqv_mount_readdir(struct pqv_mount *m, uint64_t ino, uint64_t offset, pqv_mount_dir_fn fn,
    void *ctx)
{
    struct pqv_mount_attr self, up, a;
    struct mount_tree *t;
    const struct mount_node *d;
    uint32_t tree, node;
    uint64_t i;
    int rc;

    if (m == NULL || fn == NULL)
        return -EINVAL;
    if ((rc = mount_decode(m, ino, &tree, &node)) != 0)
        return rc;
    if (tree == 0)
        return node == VNODE_SNAPSHOTS ? readdir_snapshots(m, offset, fn, ctx) : -ENOTDIR;
    if (tree == 1 && node == 0 && offset == 0)
        mount_load_ahead(m); /* a walk may follow: the history's trees, ahead */
    if ((rc = tree_dir(m, tree, node, &t)) != 0)
        return rc;
    d = &t->nodes[node];
    node_attr(m, t, node, &self);
    if (node != 0)
        node_attr(m, t, d->parent, &up);
    else
        up = self; /* (the kernel answers ".." of a tree's root itself) */
    if (dots(&self, &up, offset, fn, ctx))
        goto done;
    for (i = offset < 2 ? 0 : offset - 2; i < d->nkids; i++) {
        uint32_t kid = t->kids[d->kids + i];
        if (t->nodes[kid].hidden)
            continue; /* (its number stays taken: offsets do not move) */
        node_attr(m, t, kid, &a);
        if (fn(ctx, t->nodes[kid].comp, &a, i + 3) != 0)
            goto done;
    }
    if (tree == 1 && node == 0) {
        /* The history directories after the root's own names. */
        uint64_t nkids = d->nkids;
        if (offset <= 2 + nkids) {
            snapshots_dir_attr(m, &a);
            if (fn(ctx, m->snap_dir, &a, nkids + 3) != 0)
                goto done;
        }
        if (offset <= 3 + nkids) {
            history_root_attr(m, m->versions, &a);
            (void)fn(ctx, m->vers_dir, &a, nkids + 4);
        }
    }
done:
    mount_put_tree(m, t);
    return 0;
}

void
pqv_mount_listed(struct pqv_mount *m, uint64_t ino, uint64_t offset)
{
    struct mount_tree *t;
    const struct mount_node *d;
    uint32_t tree, node;
    uint64_t i;

    if (m == NULL || mount_decode(m, ino, &tree, &node) != 0 || tree == 0 ||
        tree_dir(m, tree, node, &t) != 0)
        return;
    d = &t->nodes[node];
    /* A walk's progress: its reader reads the files it was offered from
     * the page cache, asking nothing, so besides the files it still
     * reads (one in MOUNT_WALK_FILES without this) its listings tell
     * where it is. */
    if (offset == 0)
        mount_file_walk_listed(m, tree, node);
    if (offset > 2 && m->opt.offer != NULL) {
        /* The listing goes on (cp -a's next getdents, the one that finds
         * its end): the kernel has the inodes of the names it was given,
         * and the walk reads those files next.  What was read ahead of
         * them waiting for that is handed to the prefetch threads to
         * offer, first in their queue and in the listing's order, so
         * that their reads need no request.  Not offered on the
         * answering thread: the copier waited for every offer of the
         * directory before it could read the first file (the empty
         * reply that ends a listing took 100 us, median, against 57 for
         * the first, in a cp -a of /usr/share/doc); a file read before
         * its offer is made is answered from the cache. */
        /* (Only the MOUNT_WALK_NODES names before this point, as many as
         * a walk looks at ahead: a listing of many replies looked at
         * every name before it again at each.  One pending further back,
         * after a reply longer than that, is read as any file.  The last
         * name first: each goes first in the queue.) */
        uint64_t from = offset - 2 > MOUNT_WALK_NODES ? offset - 2 - MOUNT_WALK_NODES : 0;
        pthread_mutex_lock(&m->lock);
        for (i = offset - 2 < d->nkids ? offset - 2 : d->nkids;
             i-- > from && m->cache.pending_offers > 0;) {
            uint32_t kid = t->kids[d->kids + i];
            const struct entry *e = t->nodes[kid].inode == kid ? mount_tree_entry(t, kid) : NULL;
            if (e != NULL)
                mount_offer_listed(m, e);
        }
        pthread_mutex_unlock(&m->lock);
    }
    mount_put_tree(m, t);
}

int
pqv_mount_readlink(struct pqv_mount *m, uint64_t ino, char *buf, size_t len)
{
    struct mount_tree *t;
    const struct entry *e;
    uint32_t tree, node;
    const char *target = NULL;
    int rc;

    if (m == NULL || buf == NULL)
        return -EINVAL;
    if ((rc = mount_decode(m, ino, &tree, &node)) != 0)
        return rc;
    if (tree == 0) {
        if (node != VNODE_LATEST)
            return -EINVAL;
        target = m->snap_names[m->kept.n - 1];
        if (strlen(target) >= len)
            return -ENAMETOOLONG;
        memcpy(buf, target, strlen(target) + 1);
        return 0;
    }
    if ((rc = mount_get_tree(m, tree, &t)) != 0)
        return rc;
    e = node < t->nnodes ? mount_tree_entry(t, node) : NULL;
    if (e == NULL || e->kind != KIND_SYMLINK || e->target == NULL)
        rc = -EINVAL;
    else if (strlen(e->target) >= len)
        rc = -ENAMETOOLONG;
    else
        memcpy(buf, e->target, strlen(e->target) + 1);
    mount_put_tree(m, t);
    return rc;
}

/* xattrs_of(m, ino, t, e): the entry whose attributes ${ino} has (NULL:
 * none), its tree referenced in *${t}. */
static int
xattrs_of(struct pqv_mount *m, uint64_t ino, struct mount_tree **t, const struct entry **e)
{
    uint32_t tree, node;
    int rc;

    *t = NULL;
    *e = NULL;
    if ((rc = mount_decode(m, ino, &tree, &node)) != 0)
        return rc;
    if (tree == 0 || (tree >= 2 && node == 0))
        return 0; /* (a history root: none, and its tree not loaded) */
    if ((rc = mount_get_tree(m, tree, t)) != 0)
        return rc;
    if (node >= (*t)->nnodes) {
        mount_put_tree(m, *t);
        *t = NULL;
        return -ENOENT;
    }
    *e = mount_tree_entry(*t, (*t)->nodes[node].inode);
    return 0;
}

int
pqv_mount_getxattr(struct pqv_mount *m, uint64_t ino, const char *name, void *buf, size_t len,
    size_t *size)
{
    struct mount_tree *t;
    const struct entry *e;
    int rc;

    if (m == NULL || name == NULL || size == NULL)
        return -EINVAL;
    if ((rc = xattrs_of(m, ino, &t, &e)) != 0)
        return rc;
    rc = -ENODATA;
    for (size_t i = 0; e != NULL && i < e->nxattrs; i++) {
        if (strcmp(e->xattrs[i].name, name) != 0)
            continue;
        *size = e->xattrs[i].len;
        if (len == 0)
            rc = 0;
        else if (len < e->xattrs[i].len || buf == NULL)
            rc = -ERANGE;
        else {
            memcpy(buf, e->xattrs[i].value, e->xattrs[i].len);
            rc = 0;
        }
        break;
    }
    mount_put_tree(m, t);
    return rc;
}

int
pqv_mount_listxattr(struct pqv_mount *m, uint64_t ino, char *buf, size_t len, size_t *size)
{
    struct mount_tree *t;
    const struct entry *e;
    size_t need = 0;
    int rc;

    if (m == NULL || size == NULL)
        return -EINVAL;
    if ((rc = xattrs_of(m, ino, &t, &e)) != 0)
        return rc;
    for (size_t i = 0; e != NULL && i < e->nxattrs; i++)
        need += strlen(e->xattrs[i].name) + 1;
    *size = need;
    if (len > 0 && (len < need || buf == NULL)) {
        rc = -ERANGE;
    } else if (len > 0) {
        size_t at = 0;
        for (size_t i = 0; e != NULL && i < e->nxattrs; i++) {
            size_t l = strlen(e->xattrs[i].name) + 1;
            memcpy(buf + at, e->xattrs[i].name, l);
            at += l;
        }
    }
    mount_put_tree(m, t);
    return rc;
}

