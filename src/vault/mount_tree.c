/*
 * mount_tree.c: the trees of the mounted view (vault/mount_internal.h).
 *
 * A tree is built over entries sorted by name: node 0 is its root, node
 * i + 1 is entry i, and nodes after those are directories made up for
 * parents no entry names (a name stored with --name below a directory
 * never stored).  Children are kept per directory in name order, so a
 * lookup is a binary search and a directory listing a range; hard-link
 * groups share the number of their first node.  The numbering depends on
 * the entries alone, so a tree unloaded and loaded again numbers its nodes
 * as before.
 *
 * The versions/ tree is a tree of this kind too, over entries that
 * mount_versions.c makes, with groups: a group's directory is hidden from
 * its parent's listing and lists the group's other entries (a name's
 * versions, which its parent lists too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/chunks.h"
#include "vault/mount_internal.h"
#include "vault/names.h"
#include "vault/segment.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

/* ---- name tables (made-up directories, versions' names) ---- */

static uint64_t
name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* table_find(t, name, len): the slot of ${name} (its ${len} bytes), or the
 * empty one where it would go. */
static struct name_slot *
table_find(const struct name_table *t, const char *name, size_t len)
{
    size_t i = (size_t)name_hash(name, len) & (t->cap - 1);

    while (t->slots[i].name != NULL &&
           (t->slots[i].len != len || memcmp(t->slots[i].name, name, len) != 0))
        i = (i + 1) & (t->cap - 1);
    return &t->slots[i];
}

int
mount_tree_table_put(struct name_table *t, const char *name, size_t len, uint32_t value)
{
    struct name_slot *s;

    if ((t->n + 1) * 4 > t->cap * 3) {
        struct name_table g = { NULL, t->cap ? 2 * t->cap : 256, 0 };
        if ((g.slots = calloc(g.cap, sizeof(*g.slots))) == NULL)
            return PQV_E_NOMEM;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i].name != NULL)
                *table_find(&g, t->slots[i].name, t->slots[i].len) = t->slots[i];
        g.n = t->n;
        free(t->slots);
        *t = g;
    }
    s = table_find(t, name, len);
    if (s->name == NULL)
        t->n++;
    s->name = name;
    s->len = len;
    s->value = value;
    return 0;
}

uint32_t
mount_tree_table_get(const struct name_table *t, const char *name, size_t len)
{
    const struct name_slot *s;

    if (t->cap == 0)
        return MOUNT_NONE;
    s = table_find(t, name, len);
    return s->name != NULL ? s->value : MOUNT_NONE;
}

/* ---- building a tree ---- */

const struct entry *
mount_tree_entry(const struct mount_tree *t, uint32_t node)
{
    if (node >= t->nnodes || t->nodes[node].entry == MOUNT_NONE)
        return NULL;
    return &t->entries[t->nodes[node].entry];
}

struct build {
    struct mount_tree *t;
    uint32_t cap;
    struct name_table made;
};

/* find_entry(t, name, len): the index of the entry named by the ${len}
 * bytes at ${name}, or MOUNT_NONE. */
static uint32_t
find_entry(const struct mount_tree *t, const char *name, size_t len)
{
    size_t lo = 0, hi = t->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *e = t->entries[mid].name;
        int c = strncmp(name, e, len);
        if (c == 0)
            c = e[len] == '\0' ? 0 : -1;
        if (c == 0)
            return (uint32_t)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return MOUNT_NONE;
}

static int
grow_nodes(struct build *b)
{
    struct mount_tree *t = b->t;
    uint32_t cap;
    struct mount_node *grown;

    if (t->nnodes < b->cap)
        return 0;
    if (b->cap >= UINT32_MAX / 2)
        return error_set(PQV_E_LIMIT, NULL, "too many names to mount");
    cap = b->cap * 2;
    if ((grown = realloc(t->nodes, (size_t)cap * sizeof(*grown))) == NULL)
        return PQV_E_NOMEM;
    t->nodes = grown;
    b->cap = cap;
    return 0;
}

/* parent_of(b, name, len, out): the node of the directory named by the
 * ${len} bytes at ${name} (0: the root), made up if no entry names it;
 * MOUNT_NONE if it is no directory, or left out itself. */
static int
parent_of(struct build *b, const char *name, size_t len, uint32_t *out)
{
    struct mount_tree *t = b->t;
    uint32_t i, up;
    const char *slash;
    char *copy;
    int rc;

    if (len == 0) {
        *out = 0;
        return 0;
    }
    if ((i = find_entry(t, name, len)) != MOUNT_NONE) {
        /* Entries sort before those below them: it has its parent. */
        const struct mount_node *p = &t->nodes[i + 1];
        *out = t->entries[i].kind == KIND_DIR && p->parent != MOUNT_NONE ? i + 1 : MOUNT_NONE;
        return 0;
    }
    if ((i = mount_tree_table_get(&b->made, name, len)) != MOUNT_NONE) {
        *out = i;
        return 0;
    }
    /* A directory made up; its own parent first. */
    for (slash = name + len; slash > name && slash[-1] != '/'; slash--)
        ;
    if ((rc = parent_of(b, name, slash > name ? (size_t)(slash - 1 - name) : 0, &up)) != 0)
        return rc;
    if (up == MOUNT_NONE) {
        *out = MOUNT_NONE;
        return 0;
    }
    if ((rc = grow_nodes(b)) != 0)
        return rc;
    if (t->nmade % 64 == 0) {
        char **grown = realloc(t->made, (t->nmade + 64) * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        t->made = grown;
    }
    if ((copy = malloc(len + 1)) == NULL)
        return PQV_E_NOMEM;
    memcpy(copy, name, len);
    copy[len] = '\0';
    t->made[t->nmade++] = copy;
    i = t->nnodes++;
    memset(&t->nodes[i], 0, sizeof(t->nodes[i]));
    t->nodes[i].comp = copy + (slash - name);
    t->nodes[i].entry = MOUNT_NONE;
    t->nodes[i].parent = up;
    if ((rc = mount_tree_table_put(&b->made, copy, len, i)) != 0)
        return rc;
    *out = i;
    return 0;
}

struct kid {
    const char *comp;
    uint32_t node;
};

static int
compare_kid(const void *a, const void *b)
{
    const struct kid *x = a, *y = b;
    int c = strcmp(x->comp, y->comp);

    return c != 0 ? c : x->node < y->node ? -1 : x->node > y->node;
}

struct link {
    uint64_t group;
    uint32_t node;
};

static int
compare_link(const void *a, const void *b)
{
    const struct link *x = a, *y = b;

    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int
is_dir(const struct mount_tree *t, uint32_t node)
{
    const struct entry *e = mount_tree_entry(t, node);

    return e == NULL || e->kind == KIND_DIR;
}

/* group_dir_of(t, node): the directory of the group of the entry of
 * ${node} (1 .. t->n), or MOUNT_NONE. */
static uint32_t
group_dir_of(const struct mount_tree *t, uint32_t node)
{
    uint32_t g = t->groups[node - 1];

    if (g == 0 || g > t->ngroups || t->nodes[node].parent == MOUNT_NONE ||
        t->group_dir[g] == node)
        return MOUNT_NONE;
    return t->group_dir[g];
}

/* group_dirs(b): t->group_dir: for each named group, the directory of its
 * name, made up and hidden unless a directory has that name already. */
static int
group_dirs(struct build *b)
{
    struct mount_tree *t = b->t;
    int rc;

    if ((t->group_dir = malloc(((size_t)t->ngroups + 1) * sizeof(*t->group_dir))) == NULL)
        return PQV_E_NOMEM;
    for (uint32_t g = 0; g <= t->ngroups; g++)
        t->group_dir[g] = MOUNT_NONE;
    for (uint32_t g = 1; g <= t->ngroups; g++) {
        const char *name = t->group_names[g], *slash;
        uint32_t i, parent;
        size_t len;
        if (name == NULL)
            continue;
        len = strlen(name);
        if ((i = find_entry(t, name, len)) != MOUNT_NONE) {
            /* (An entry of that name: a directory takes the group.) */
            if (t->entries[i].kind == KIND_DIR && t->nodes[i + 1].parent != MOUNT_NONE)
                t->group_dir[g] = i + 1;
            continue;
        }
        if ((i = mount_tree_table_get(&b->made, name, len)) != MOUNT_NONE) {
            t->group_dir[g] = i;
            continue;
        }
        slash = strrchr(name, '/');
        if ((rc = parent_of(b, name, slash != NULL ? (size_t)(slash - name) : 0, &parent)) != 0)
            return rc;
        if (parent == MOUNT_NONE || (rc = grow_nodes(b)) != 0) {
            if (parent == MOUNT_NONE)
                continue;
            return rc;
        }
        i = t->nnodes++;
        memset(&t->nodes[i], 0, sizeof(t->nodes[i]));
        t->nodes[i].comp = slash != NULL ? slash + 1 : name;
        t->nodes[i].entry = MOUNT_NONE;
        t->nodes[i].parent = parent;
        t->nodes[i].hidden = 1;
        t->group_dir[g] = i;
    }
    return 0;
}

/* sort_kids(t, at, n, k): t->kids[at .. at + n) in name order, through
 * the scratch ${k}. */
static void
sort_kids(struct mount_tree *t, uint32_t at, uint32_t n, struct kid *k)
{
    uint32_t j;

    /* (Mostly in order already: siblings' entries sort as their names.) */
    for (j = 1; j < n; j++) {
        uint32_t x = t->kids[at + j - 1], y = t->kids[at + j];
        int c = strcmp(t->nodes[x].comp, t->nodes[y].comp);
        if (c > 0 || (c == 0 && x > y))
            break;
    }
    if (j >= n)
        return;
    for (j = 0; j < n; j++) {
        k[j].node = t->kids[at + j];
        k[j].comp = t->nodes[k[j].node].comp;
    }
    util_sort(k, n, sizeof(*k), compare_kid);
    for (j = 0; j < n; j++)
        t->kids[at + j] = k[j].node;
}

/* children(t): each directory's children, in name order, and a group's
 * directory its group's entries (t->group_dir); then what stat shows of
 * directories (their listed children: links, size). */
static int
children(struct mount_tree *t)
{
    uint32_t total = 0, *at = NULL;
    struct kid *k = NULL;
    int rc = 0;

    for (uint32_t i = 1; i < t->nnodes; i++)
        if (t->nodes[i].parent != MOUNT_NONE)
            t->nodes[t->nodes[i].parent].nkids++;
    for (uint32_t i = 1; t->group_dir != NULL && i <= t->n; i++) {
        uint32_t d = group_dir_of(t, i);
        if (d != MOUNT_NONE)
            t->nodes[d].nkids++;
    }
    for (uint32_t i = 0; i < t->nnodes; i++) {
        t->nodes[i].kids = total;
        total += t->nodes[i].nkids;
    }
    if ((t->kids = calloc((size_t)total + 1, sizeof(*t->kids))) == NULL ||
        (at = calloc(t->nnodes, sizeof(*at))) == NULL ||
        (k = calloc((size_t)total + 1, sizeof(*k))) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    for (uint32_t i = 1; i < t->nnodes; i++) {
        uint32_t p = t->nodes[i].parent;
        if (p == MOUNT_NONE)
            continue;
        t->kids[t->nodes[p].kids + at[p]++] = i;
        if (t->group_dir != NULL && i <= t->n && (p = group_dir_of(t, i)) != MOUNT_NONE)
            t->kids[t->nodes[p].kids + at[p]++] = i;
    }
    for (uint32_t i = 0; i < t->nnodes; i++) {
        struct mount_node *d = &t->nodes[i];
        uint64_t bytes = 0;
        uint32_t subdirs = 0;
        sort_kids(t, d->kids, d->nkids, k);
        for (uint32_t j = 0; j < d->nkids; j++) {
            const struct mount_node *kid = &t->nodes[t->kids[d->kids + j]];
            if (kid->hidden)
                continue;
            bytes += (8 + strlen(kid->comp) + 7) & ~(uint64_t)7;
            subdirs += is_dir(t, t->kids[d->kids + j]);
        }
        if (is_dir(t, i)) {
            d->nlink = 2 + subdirs;
            d->dir_pages = bytes / 4096 + 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(bytes / 4096 + 1);
        }
    }
done:
    free(at);
    free(k);
    return rc;
}

/* walk_order(t): t->walk_rank and t->walk_order: the nodes in the order
 * a depth-first walk of the directories visits them, each directory's
 * children in name order (the order of its listing, and of its children's
 * numbers, by which cp -a sorts them).  The nodes' own numbers follow the
 * entries' paths, which differ where a name sorts before "/": apt-x/f
 * comes before apt/f, while a walk copies apt/ first.  A group's
 * directory (versions/) walks only the children it is the parent of. */
static int
walk_order(struct mount_tree *t)
{
    uint32_t *stack, depth = 0;
    size_t pushes = 1;

    for (uint32_t i = 0; i < t->nnodes; i++)
        pushes += t->nodes[i].nkids;
    if ((t->walk_rank = malloc((size_t)t->nnodes * sizeof(*t->walk_rank))) == NULL ||
        (t->walk_order = malloc((size_t)t->nnodes * sizeof(*t->walk_order))) == NULL ||
        (stack = malloc(pushes * sizeof(*stack))) == NULL)
        return PQV_E_NOMEM;
    for (uint32_t i = 0; i < t->nnodes; i++)
        t->walk_rank[i] = MOUNT_NONE;
    t->nwalk = 0;
    stack[depth++] = 0;
    while (depth > 0) {
        uint32_t d = stack[--depth];
        const struct mount_node *nd = &t->nodes[d];
        /* (A name listed twice in its directory is walked once.) */
        if (t->walk_rank[d] != MOUNT_NONE)
            continue;
        t->walk_rank[d] = t->nwalk;
        t->walk_order[t->nwalk++] = d;
        /* (Children pushed last first; each directory is walked once, so
         * no more are pushed than all directories' children.) */
        for (uint32_t j = nd->nkids; j > 0; j--) {
            uint32_t k = t->kids[nd->kids + j - 1];
            if (t->nodes[k].parent == d && k != d)
                stack[depth++] = k;
        }
    }
    free(stack);
    return 0;
}

/* hard_links(t): the names of one group share the first one's number. */
static int
hard_links(struct mount_tree *t)
{
    struct link *l = NULL;
    size_t n = 0;

    for (uint32_t i = 1; i < t->nnodes; i++) {
        const struct entry *e = mount_tree_entry(t, i);
        t->nodes[i].inode = i;
        if (!is_dir(t, i))
            t->nodes[i].nlink = 1;
        if (e != NULL && e->kind == KIND_FILE && e->hlgroup != 0 && t->nodes[i].parent != MOUNT_NONE)
            n++;
    }
    if (n == 0)
        return 0;
    if ((l = calloc(n, sizeof(*l))) == NULL)
        return PQV_E_NOMEM;
    n = 0;
    for (uint32_t i = 1; i < t->nnodes; i++) {
        const struct entry *e = mount_tree_entry(t, i);
        if (e != NULL && e->kind == KIND_FILE && e->hlgroup != 0 && t->nodes[i].parent != MOUNT_NONE) {
            l[n].group = e->hlgroup;
            l[n++].node = i;
        }
    }
    util_sort(l, n, sizeof(*l), compare_link);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && l[j].group == l[i].group)
            j++;
        for (size_t k = i; k < j; k++) {
            t->nodes[l[k].node].inode = l[i].node;
            t->nodes[l[k].node].nlink = (uint32_t)(j - i);
        }
        i = j;
    }
    free(l);
    return 0;
}

int
mount_tree_build(struct mount_tree *t)
{
    struct build b;
    const char *last_dir = NULL; /* the directory of the entry before, */
    size_t last_len = 0;         /* its length, */
    uint32_t last_parent = 0;    /* and its node */
    int rc = 0;

    memset(&b, 0, sizeof(b));
    b.t = t;
    if (t->n >= UINT32_MAX / 4)
        return error_set(PQV_E_LIMIT, NULL, "too many names to mount");
    b.cap = (uint32_t)t->n + 64;
    if ((t->nodes = calloc(b.cap, sizeof(*t->nodes))) == NULL)
        return PQV_E_NOMEM;
    t->nnodes = (uint32_t)t->n + 1;
    t->nodes[0].comp = "";
    t->nodes[0].entry = MOUNT_NONE;
    t->data = 0;
    for (uint32_t i = 0; i < t->n && rc == 0; i++) {
        struct mount_node *nd = &t->nodes[i + 1];
        const char *name = t->entries[i].name, *slash = strrchr(name, '/');
        uint32_t parent = MOUNT_NONE;
        size_t len;
        nd->comp = slash != NULL ? slash + 1 : name;
        nd->entry = i;
        nd->parent = MOUNT_NONE;
        /* A second entry of a name (none in a state), or a malformed name. */
        if ((i > 0 && strcmp(name, t->entries[i - 1].name) == 0) || nd->comp[0] == '\0')
            continue;
        len = slash != NULL ? (size_t)(slash - name) : 0;
        /* (Most entries are in the directory of the entry before.) */
        if (last_dir != NULL && len == last_len && memcmp(name, last_dir, len) == 0) {
            parent = last_parent;
        } else if ((rc = parent_of(&b, name, len, &parent)) == 0) {
            last_dir = name;
            last_len = len;
            last_parent = parent;
        }
        /* (parent_of may have moved the nodes.) */
        t->nodes[i + 1].parent = parent;
        if (rc == 0 && parent != MOUNT_NONE && t->entries[i].kind == KIND_FILE)
            for (uint32_t k = 0; k < t->entries[i].nextents; k++)
                t->data += t->entries[i].extents[k].plain_len;
    }
    if (rc == 0 && t->groups != NULL && t->group_names != NULL)
        rc = group_dirs(&b);
    if (rc == 0 && (rc = children(t)) == 0 && (rc = walk_order(t)) == 0)
        rc = hard_links(t);
    t->nodes[0].inode = 0;
    free(b.made.slots);
    if (rc != 0) {
        mount_tree_unbuild(t);
        return rc;
    }
    t->bytes = mount_tree_node_bytes(t);
    for (size_t i = 0; i < t->n; i++)
        t->bytes += sizeof(struct entry) + strlen(t->entries[i].name) + 1 +
            t->entries[i].nextents * sizeof(struct extent) + t->entries[i].nxattrs * 64;
    return 0;
}

uint64_t
mount_tree_node_bytes(const struct mount_tree *t)
{
    return (uint64_t)t->nnodes * (sizeof(struct mount_node) + 4 * sizeof(uint32_t)) + t->nmade * 32 +
        (uint64_t)t->ngroups * (sizeof(uint32_t) + sizeof(char *) + 32);
}

void
mount_tree_unbuild(struct mount_tree *t)
{
    for (size_t i = 0; i < t->nmade; i++)
        free(t->made[i]);
    free(t->made);
    free(t->nodes);
    free(t->kids);
    free(t->walk_rank);
    free(t->walk_order);
    t->walk_rank = t->walk_order = NULL;
    t->nwalk = 0;
    free(t->alias);
    t->alias = NULL;
    free(t->group_dir);
    t->group_dir = NULL;
    t->made = NULL;
    t->nmade = 0;
    t->nodes = NULL;
    t->kids = NULL;
    t->nnodes = 0;
}

uint32_t
mount_tree_find(const struct mount_tree *t, const char *name)
{
    uint32_t i = find_entry(t, name, strlen(name));

    return i == MOUNT_NONE ? MOUNT_NONE : i + 1;
}

uint32_t
mount_tree_child(const struct mount_tree *t, uint32_t dir, const char *name)
{
    const struct mount_node *d;
    size_t lo, hi;

    if (dir >= t->nnodes)
        return MOUNT_NONE;
    d = &t->nodes[dir];
    lo = 0;
    hi = d->nkids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t k = t->kids[d->kids + mid];
        int c = strcmp(name, t->nodes[k].comp);
        if (c == 0)
            return k;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return MOUNT_NONE;
}
