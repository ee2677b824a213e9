/*
 * mount.c: a vault's states as a read-only file-system view
 * (include/pqvault/mount.h; the layout of the work in
 * vault/mount_internal.h, the decisions in docs/DESIGN.md "Mount"): node
 * numbers, trees, opening files and the view's life; the node operations
 * are mount_ops.c's, reads mount_read.c's.
 *
 * Node numbers are (tree << 32 | node): tree 0 holds the view's own nodes
 * (2: snapshots/, 3: snapshots/latest), tree 1 is the root's state (its
 * node 0 is number 1, FUSE's root), tree 2 + k the kept snapshot k, the
 * last tree versions/.  A tree is loaded when one of its nodes is first
 * asked for (or ahead of a walk: mount_load_ahead), and unloaded (least
 * recently used first, never while in use) when the trees loaded hold more
 * than the budget, before a load makes room for it; it is built the same
 * way each time, so a number stays valid whatever was unloaded.
 *
 * Locks: m->lock guards the trees' status and references, the cache and
 * the open files, and is never held while a tree loads or data is read;
 * m->load_lock lets one tree load at a time (a snapshot's state borrows
 * the current chain's chunk index) and guards the segments' command keys
 * while a file key is recovered.  load_lock is taken before lock, never
 * the other way.  The thread loading ahead takes them as a request does,
 * and is joined when the view closes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"
#include "vault/chunks.h"
#include "vault/mount_internal.h"
#include "vault/names.h"
#include "vault/segment_cache.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

/* ---- numbers ---- */

uint64_t
mount_ino(uint32_t tree, uint32_t node)
{
    if (tree == 1 && node == 0)
        return PQV_MOUNT_ROOT;
    return ((uint64_t)tree << 32) | node;
}

/* mount_decode(m, ino, tree, node): 0, or -ENOENT for a number the view never
 * gave. */
int
mount_decode(const struct pqv_mount *m, uint64_t ino, uint32_t *tree, uint32_t *node)
{
    if (ino == PQV_MOUNT_ROOT) {
        *tree = 1;
        *node = 0;
        return 0;
    }
    *tree = (uint32_t)(ino >> 32);
    *node = (uint32_t)ino;
    if (*tree == 0)
        return *node == VNODE_SNAPSHOTS || (*node == VNODE_LATEST && m->kept.n > 0) ? 0 : -ENOENT;
    return *tree < m->ntrees && !(*tree == 1 && *node == 0) ? 0 : -ENOENT;
}

/* mount_errno(rc): a library failure as a file system's answer. */
int
mount_errno(int rc)
{
    return rc == PQV_E_NOMEM ? -ENOMEM : rc == PQV_E_NOTFOUND ? -ENOENT : -EIO;
}

/* ---- trees ---- */

void
mount_walk(const struct pqv_mount *m, struct names_walk *w, uint64_t *damaged)
{
    memset(w, 0, sizeof(*w));
    w->report = m->opt.report;
    w->report_ctx = m->opt.report_ctx;
    w->damaged = damaged;
}

static void
tree_unload(struct mount_tree *t)
{
    mount_tree_unbuild(t);
    if (t->own != NULL) {
        for (size_t i = 0; i < t->n; i++)
            entry_clear(&t->own[i]);
        free(t->own);
        t->own = NULL;
    }
    free(t->groups);
    t->groups = NULL;
    for (uint32_t g = 0; t->group_names != NULL && g <= t->ngroups; g++)
        free(t->group_names[g]);
    free(t->group_names);
    t->group_names = NULL;
    t->ngroups = 0;
    if (t->keys == &t->st)
        state_free(&t->st);
    t->keys = NULL;
    t->entries = NULL;
    t->n = 0;
    t->bytes = 0;
    t->status = TREE_UNLOADED;
}

/* tree_load(m, t): its entries and nodes (load_lock held). */
static int
tree_load(struct pqv_mount *m, struct mount_tree *t)
{
    struct names_walk w;
    uint64_t damaged = 0;
    int rc;

    mount_walk(m, &w, &damaged);
    if (t->kind == TREE_VERSIONS) {
        if ((rc = mount_versions_build(m, &t->own, &t->groups, &t->n, &t->group_names,
                 &t->ngroups)) != 0)
            return rc;
        t->entries = t->own;
    } else if (t->sn == NULL || t->sn->epoch == m->cur.epoch) {
        /* The newest state, or the snapshot of its epoch (latest): the
         * current state's entries, shared, not loaded a second time. */
        t->entries = m->cur.entries;
        t->n = m->cur.n;
        t->keys = &m->cur;
    } else {
        if ((rc = snapshots_state(m->v, &m->cur, t->sn, &t->st)) != 0)
            return rc;
        t->keys = &t->st;
        rc = state_load_reporting(m->v, &t->st, &w);
        /* The chunk index is the current chain's, lent: given back. */
        m->cur.chunks = t->st.chunks;
        m->cur.chunks_loaded = 1;
        memset(&t->st.chunks, 0, sizeof(t->st.chunks));
        t->st.chunks_loaded = 0;
        if (rc != 0) {
            tree_unload(t);
            return rc;
        }
        t->entries = t->st.entries;
        t->n = t->st.n;
    }
    if ((rc = mount_tree_build(t)) != 0 || (rc = mount_ops_alias(m, t)) != 0) {
        tree_unload(t);
        return rc;
    }
    if (t->entries == m->cur.entries && t != &m->trees[1])
        t->bytes = mount_tree_node_bytes(t); /* the entries are the current state's */
    return 0;
}

/* load_estimate(m, t): the memory tree ${t} would hold, about: a
 * snapshot of the current state's epoch shares its entries (nodes only);
 * any other, as much as the root's tree. */
static uint64_t
load_estimate(const struct pqv_mount *m, const struct mount_tree *t)
{
    if (t->kind == TREE_STATE && t->sn != NULL && t->sn->epoch == m->cur.epoch)
        return mount_tree_node_bytes(&m->trees[1]);
    return m->trees[1].bytes;
}

/* evict(m, keep, room): unload trees nobody uses (least recently used
 * first, never ${keep}) while they hold more than the budget less ${room}:
 * before a load, room for it, so that the memory's peak is not the old
 * trees and the new one together. */
static void
evict(struct pqv_mount *m, const struct mount_tree *keep, uint64_t room)
{
    while (m->trees_bytes + room > m->trees_budget) {
        struct mount_tree *lru = NULL;
        for (uint32_t i = 1; i < m->ntrees; i++) {
            struct mount_tree *t = &m->trees[i];
            if (t != keep && !t->pinned && t->refs == 0 && t->status == TREE_LOADED &&
                (lru == NULL || t->used < lru->used))
                lru = t;
        }
        if (lru == NULL)
            return;
        m->trees_bytes -= lru->bytes < m->trees_bytes ? lru->bytes : m->trees_bytes;
        tree_unload(lru);
    }
}

/* load_held(m, t): tree ${t} loaded by this thread (m->lock held, and
 * held again on return; t->status was TREE_UNLOADED). */
static int
load_held(struct pqv_mount *m, struct mount_tree *t)
{
    int rc;

    t->status = TREE_LOADING;
    pthread_mutex_unlock(&m->lock);
    pthread_mutex_lock(&m->load_lock);
    rc = tree_load(m, t);
    pthread_mutex_unlock(&m->load_lock);
    pthread_mutex_lock(&m->lock);
    t->status = rc == 0 ? TREE_LOADED : TREE_UNLOADED;
    if (rc == 0)
        m->trees_bytes += t->bytes;
    pthread_cond_broadcast(&m->cond);
    return rc;
}

/* most_recent(m): the loaded tree used last (the one being walked), or
 * NULL. */
static const struct mount_tree *
most_recent(const struct pqv_mount *m)
{
    const struct mount_tree *r = NULL;

    for (uint32_t i = 2; i < m->ntrees; i++)
        if (m->trees[i].status == TREE_LOADED && m->trees[i].used != 0 &&
            (r == NULL || m->trees[i].used > r->used))
            r = &m->trees[i];
    return r;
}

static void *
ahead_main(void *arg)
{
    struct pqv_mount *m = arg;

    pthread_mutex_lock(&m->lock);
    for (;;) {
        struct mount_tree *t;
        while (!m->ahead_stop && (m->ahead_want == 0 || m->waiting_loads > 0))
            pthread_cond_wait(&m->cond, &m->lock);
        if (m->ahead_stop)
            break;
        t = &m->trees[m->ahead_want];
        m->ahead_want = 0;
        if (t->status == TREE_UNLOADED) {
            uint64_t room = load_estimate(m, t);
            /* Room made from what the walk has left (never the tree it
             * is in); without room, nothing. */
            evict(m, most_recent(m), room);
            if (m->trees_bytes + room <= m->trees_budget) {
                m->ahead_busy = 1;
                /* Loaded, not used: the first to go if memory is short. */
                if (load_held(m, t) == 0)
                    t->used = 0;
                m->ahead_busy = 0;
            }
        }
        pthread_cond_broadcast(&m->cond); /* (done with what was wanted) */
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* ahead_from(m, id): tree ${id} is the one being walked: the next one
 * wanted ahead (m->lock held). */
static void
ahead_from(struct pqv_mount *m, uint32_t id)
{
    if (!m->ahead_made || id == m->ahead_last || id + 1 >= m->ntrees)
        return;
    m->ahead_last = id;
    m->ahead_want = id + 1;
    pthread_cond_broadcast(&m->cond);
}

/* mount_get_tree(m, id, out): tree ${id}, loaded and referenced (mount_put_tree). */
int
mount_get_tree(struct pqv_mount *m, uint32_t id, struct mount_tree **out)
{
    struct mount_tree *t = &m->trees[id];
    int rc = 0;

    pthread_mutex_lock(&m->lock);
    while (t->status != TREE_LOADED) {
        if (t->status == TREE_LOADING) {
            pthread_cond_wait(&m->cond, &m->lock);
            continue;
        }
        m->waiting_loads++;
        evict(m, t, load_estimate(m, t));
        rc = load_held(m, t);
        m->waiting_loads--;
        pthread_cond_broadcast(&m->cond); /* (the loader ahead may go on) */
        if (rc != 0) {
            pthread_mutex_unlock(&m->lock);
            return mount_errno(rc);
        }
    }
    t->refs++;
    t->used = ++m->tick;
    evict(m, t, 0);
    ahead_from(m, id);
    pthread_mutex_unlock(&m->lock);
    *out = t;
    return 0;
}

void
mount_load_ahead(struct pqv_mount *m)
{
    pthread_mutex_lock(&m->lock);
    if (!m->ahead_started) {
        m->ahead_started = 1;
        /* (a thread that cannot start: every tree loads when asked for) */
        m->ahead_made = pthread_create(&m->ahead_thread, NULL, ahead_main, m) == 0;
    }
    ahead_from(m, 1);
    pthread_mutex_unlock(&m->lock);
}

void
mount_put_tree(struct pqv_mount *m, struct mount_tree *t)
{
    if (t == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    t->refs--;
    pthread_mutex_unlock(&m->lock);
}

void
mount_report(struct pqv_mount *m, const char *name)
{
    char detail[PQV_ERROR_SUBJECT_MAX + PQV_ERROR_REASON_MAX + 4];
    int said = 0;

    if (m->opt.report == NULL)
        return;
    snprintf(detail, sizeof(detail), "%s", pqv_error_detail());
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->nreported && !said; i++)
        said = strcmp(m->reported[i], name) == 0;
    if (!said && m->nreported < MOUNT_REPORTED_MAX) {
        char **grown = realloc(m->reported, (m->nreported + 1) * sizeof(*grown));
        if (grown != NULL) {
            m->reported = grown;
            if ((m->reported[m->nreported] = strdup(name)) != NULL)
                m->nreported++;
        }
    } else {
        said = 1;
    }
    pthread_mutex_unlock(&m->lock);
    if (!said)
        m->opt.report(m->opt.report_ctx, PQV_REPORT_ERROR, name, detail);
}

void
pqv_mount_stats(struct pqv_mount *m, struct pqv_mount_stats *out)
{
    if (m == NULL || out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&m->lock);
    if (m->ntrees > 1 && m->trees[1].status == TREE_LOADED) {
        out->files = m->trees[1].nnodes;
        out->bytes = m->trees[1].data;
    }
    out->snapshots = m->kept.n;
    out->cache_bytes = m->cache.bytes;
    out->cache_hits = m->cache.hits;
    out->cache_misses = m->cache.misses;
    out->prefetched = m->cache.prefetched;
    out->offered = m->cache.offered;
    out->bytes_opened = m->cache.bytes_opened;
    pthread_mutex_unlock(&m->lock);
}

/* ---- the view's life ---- */

/* history_name(m, want, out): ${want}, or it after as many dots as make it
 * no top-level name of the root's state. */
static void
history_name(const struct pqv_mount *m, const char *want, char out[32])
{
    size_t dots = 0;

    for (;;) {
        snprintf(out, 32, "%.*s%s", (int)dots, "..........", want);
        if (dots >= 10 || mount_tree_child(&m->trees[1], 0, out) == MOUNT_NONE)
            return;
        dots++;
    }
}

int
pqv_mount_open(pqv_vault *v, const struct pqv_mount_options *opt, struct pqv_mount **out)
{
    struct names_walk w;
    struct pqv_mount *m;
    uint64_t damaged = 0, at;
    int rc;

    if (out == NULL)
        return PQV_E_INVAL;
    *out = NULL;
    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if ((m = calloc(1, sizeof(*m))) == NULL)
        return PQV_E_NOMEM;
    m->v = v;
    if (opt != NULL)
        m->opt = *opt;
    if (m->opt.cache_bytes == 0)
        m->opt.cache_bytes = PQV_MOUNT_CACHE_DEFAULT;
    if (m->opt.cache_bytes < PQV_MOUNT_CACHE_MIN)
        m->opt.cache_bytes = PQV_MOUNT_CACHE_MIN;
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->load_lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    m->trees_budget = MOUNT_TREES_BUDGET;
    {
        long page = sysconf(_SC_PAGESIZE);
        m->page_size = page > 0 ? (size_t)page : 4096;
    }
    mount_walk(m, &w, &damaged);

    /* A mount lives long: it reads segments as they come, keeping only
     * the states it shows (segment_cache.h); no state borrows from the
     * cache of what this handle read before. */
    segment_cache_free(v);
    v->segcache_off = 1;
    /* The current state, verified as any reading command's, whatever
     * --at says: it is the chain every snapshot is checked against. */
    at = v->at_epoch;
    v->at_epoch = 0;
    rc = state_current(v, &m->cur, NULL);
    v->at_epoch = at;
    if (rc != 0)
        goto fail;
    if ((rc = state_load_reporting(v, &m->cur, &w)) != 0 ||
        (m->cur.format >= 2 && (rc = chunks_of_state(v, &m->cur, &w)) != 0) ||
        (rc = snapshots_load(&m->cur, &m->kept)) != 0)
        goto fail;
    mount_xattrs_init(m);
    m->newest_time = m->cur.nsegs > 0 ? m->cur.segs[m->cur.nsegs - 1].time : (int64_t)time(NULL);
    if ((m->snap_names = calloc(m->kept.n + 1, sizeof(*m->snap_names))) == NULL) {
        rc = PQV_E_NOMEM;
        goto fail;
    }
    for (size_t k = 0; k < m->kept.n; k++) {
        time_t tt = (time_t)m->kept.s[k].time;
        struct tm tm;
        char when[32] = "";
        if (gmtime_r(&tt, &tm) != NULL)
            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(m->snap_names[k], sizeof(m->snap_names[k]), "%06llu-%s",
            (unsigned long long)m->kept.s[k].epoch, when);
    }
    if (m->kept.n > UINT32_MAX - 8) {
        rc = error_set(PQV_E_LIMIT, NULL, "too many snapshots to mount");
        goto fail;
    }
    m->ntrees = 3 + (uint32_t)m->kept.n;
    m->versions = m->ntrees - 1;
    if ((m->trees = calloc(m->ntrees, sizeof(*m->trees))) == NULL) {
        rc = PQV_E_NOMEM;
        goto fail;
    }
    for (uint32_t i = 1; i < m->ntrees; i++) {
        m->trees[i].id = i;
        m->trees[i].kind = i == m->versions ? TREE_VERSIONS : TREE_STATE;
        m->trees[i].time = m->newest_time;
        if (i >= 2 && i < m->versions) {
            m->trees[i].sn = &m->kept.s[i - 2];
            m->trees[i].time = m->kept.s[i - 2].time;
        }
    }
    m->trees[1].pinned = 1;
    if (at != 0) {
        const struct snapshot *sn = snapshots_find(&m->kept, at);
        if (sn == NULL) {
            rc = error_set(PQV_E_NOTFOUND, NULL, "no snapshot of epoch %llu is kept (log "
                "lists them)", (unsigned long long)at);
            goto fail;
        }
        m->trees[1].sn = sn;
        m->trees[1].time = sn->time;
    }
    if ((rc = tree_load(m, &m->trees[1])) != 0)
        goto fail;
    m->trees[1].status = TREE_LOADED;
    m->trees_bytes = m->trees[1].bytes;
    history_name(m, "snapshots", m->snap_dir);
    history_name(m, "versions", m->vers_dir);
    if ((rc = mount_cache_init(m)) != 0)
        goto fail;
    *out = m;
    return 0;
fail:
    pqv_mount_close(m);
    return rc;
}

void
pqv_mount_close(struct pqv_mount *m)
{
    int joined;

    if (m == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    m->ahead_stop = 1;
    joined = m->ahead_made;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
    if (joined)
        pthread_join(m->ahead_thread, NULL);
    mount_xattrs_stop(m);
    mount_cache_free(m);
    mount_file_spares_free(m);
    for (uint32_t i = 1; m->trees != NULL && i < m->ntrees; i++)
        tree_unload(&m->trees[i]);
    free(m->trees);
    free(m->snap_names);
    for (size_t i = 0; i < m->nreported; i++)
        free(m->reported[i]);
    free(m->reported);
    snapshots_free(&m->kept);
    state_free(&m->cur);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->load_lock);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
