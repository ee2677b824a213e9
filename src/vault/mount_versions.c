/*
 * mount_versions.c: the entries of the mounted view's versions/ tree
 * (vault/mount_internal.h): every kept generation walked, each name's
 * distinct versions (by mount_versions_same, diff's comparison) named by
 * the first snapshot that has them, their file keys recovered and chunks
 * placed, for mount_tree_build to make a tree of: each distinct version
 * of a file or link named NAME/SNAPSHOT, with a directory NAME over them.
 * It is built one generation at a time (a base and the deltas up to its
 * last kept snapshot, each verified as snapshots_state does), so that
 * memory holds one generation's entries and the versions, never all of
 * history.
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

int
mount_versions_same(const struct entry *a, const struct entry *b)
{
    if (a->kind != b->kind || a->perm != b->perm || a->uid != b->uid || a->gid != b->gid)
        return 0;
    if (a->kind == KIND_SYMLINK)
        return a->target != NULL && b->target != NULL && strcmp(a->target, b->target) == 0 &&
            a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
    if (KIND_IS_DEVICE(a->kind))
        return a->rdev_major == b->rdev_major && a->rdev_minor == b->rdev_minor;
    if (a->kind != KIND_FILE)
        return 1;
    return a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
        entry_same_data(a, b);
}

/* What is known of a name across the snapshots met so far. */
struct track {
    uint32_t dir;                /* its newest directory entry in the list, or MOUNT_NONE */
    uint32_t last;               /* its newest version, or MOUNT_NONE */
    size_t seen;                 /* 1 + the snapshot the last version was in; 0: none */
};

struct versions {
    struct entry *e;
    size_t n, cap;
    struct track *tracks;        /* by the names' table values */
    size_t ntracks, captracks;
    struct name_table names;     /* name -> track (names kept in ${owned}) */
    char **owned;
    size_t nowned;
};

static int
push_entry(struct versions *vs, struct entry *e)
{
    if (vs->n == vs->cap) {
        size_t cap = vs->cap ? 2 * vs->cap : 256;
        struct entry *grown;
        if (cap >= UINT32_MAX / 2)
            return error_set(PQV_E_LIMIT, NULL, "too many versions to mount");
        if ((grown = realloc(vs->e, cap * sizeof(*grown))) == NULL)
            return PQV_E_NOMEM;
        vs->e = grown;
        vs->cap = cap;
    }
    vs->e[vs->n++] = *e;
    memset(e, 0, sizeof(*e));
    return 0;
}

/* track_of(vs, name, out): the track of ${name}, made if new. */
static int
track_of(struct versions *vs, const char *name, struct track **out)
{
    size_t len = strlen(name);
    uint32_t i = mount_tree_table_get(&vs->names, name, len);
    char *copy;
    int rc;

    if (i == MOUNT_NONE) {
        if (vs->ntracks == vs->captracks) {
            size_t cap = vs->captracks ? 2 * vs->captracks : 256;
            struct track *grown = realloc(vs->tracks, cap * sizeof(*grown));
            char **owned;
            if (grown == NULL)
                return PQV_E_NOMEM;
            vs->tracks = grown;
            if ((owned = realloc(vs->owned, cap * sizeof(*owned))) == NULL)
                return PQV_E_NOMEM;
            vs->owned = owned;
            vs->captracks = cap;
        }
        if ((copy = strdup(name)) == NULL)
            return PQV_E_NOMEM;
        vs->owned[vs->nowned++] = copy;
        i = (uint32_t)vs->ntracks++;
        vs->tracks[i].dir = vs->tracks[i].last = MOUNT_NONE;
        vs->tracks[i].seen = 0;
        if ((rc = mount_tree_table_put(&vs->names, copy, len, i)) != 0)
            return rc;
    }
    *out = &vs->tracks[i];
    return 0;
}

static int
compare_name_epoch(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    return x->epoch < y->epoch ? -1 : x->epoch > y->epoch;
}

static int
compare_name(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* version_of(m, gs, at, snap, out): a copy of ${at} as the version named
 * NAME/${snap}: its file key in clear, its chunks placed, no group. */
static int
version_of(struct pqv_mount *m, struct state *gs, const struct entry *at, const char *snap,
    struct entry *out)
{
    size_t len = strlen(at->name) + 1 + strlen(snap) + 1;
    char *name;
    int rc;

    if ((rc = entry_copy(out, at)) != 0)
        return rc;
    if ((name = malloc(len)) == NULL) {
        entry_clear(out);
        return PQV_E_NOMEM;
    }
    snprintf(name, len, "%s/%s", at->name, snap);
    free(out->name);
    out->name = name;
    out->hlgroup = 0;
    if (out->kind == KIND_FILE && !out->chunked && out->key_state != KEY_CLEAR) {
        uint8_t key[PQV_FILE_KEY_BYTES];
        if ((rc = state_file_key(m->v, gs, at, key)) != 0) {
            entry_clear(out);
            return rc;
        }
        memcpy(out->key, key, sizeof(key));
        out->key_state = KEY_CLEAR;
        util_wipe(key, sizeof(key));
    }
    chunks_locate(&m->cur.chunks, out);
    return 0;
}

/* generation(m, k0, k1, vs): the kept snapshots k0 .. k1 - 1, of one
 * generation, merged into ${vs}. */
static int
generation(struct pqv_mount *m, size_t k0, size_t k1, struct versions *vs)
{
    struct names_walk w;
    struct state gs;
    struct entry *all = NULL;
    size_t n = 0, cap = 0;
    uint64_t damaged = 0;
    int rc;

    mount_walk(m, &w, &damaged);
    if ((rc = snapshots_state(m->v, &m->cur, &m->kept.s[k1 - 1], &gs)) != 0)
        return rc;
    /* The index is the current chain's: given back at once. */
    m->cur.chunks = gs.chunks;
    m->cur.chunks_loaded = 1;
    memset(&gs.chunks, 0, sizeof(gs.chunks));
    gs.chunks_loaded = 0;
    for (size_t i = 0; i < gs.nsegs && rc == 0; i++) {
        if ((rc = segment_fetch_part(m->v, &gs.segs[i], SEGMENT_PART_ENTRIES)) != 0)
            break;
        for (size_t b = 0; b < gs.segs[i].nblocks && rc == 0; b++) {
            struct entry *es;
            size_t cnt;
            if ((rc = segment_block(m->v, &gs.segs[i], b, &es, &cnt)) != 0) {
                char sname[STORAGE_NAME_MAX];
                if (rc != PQV_E_INTEGRITY)
                    break;
                segment_name(gs.segs[i].epoch, sname);
                vault_report(w.report, w.report_ctx, PQV_REPORT_ERROR, sname, "%s",
                    pqv_error_last()->reason);
                rc = 0;
                continue;
            }
            if ((rc = state_entries_append(&all, &n, &cap, es, cnt)) != 0)
                break;
        }
    }
    util_sort(all, n, sizeof(*all), compare_name_epoch);
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i + 1, q = i;
        struct track *tr;
        int have = 0;
        while (j < n && strcmp(all[j].name, all[i].name) == 0)
            j++;
        if ((rc = track_of(vs, all[i].name, &tr)) != 0)
            break;
        for (size_t s = k0; s < k1 && rc == 0; s++) {
            uint64_t epoch = m->kept.s[s].epoch;
            const struct entry *at;
            struct entry copy;
            size_t ti = (size_t)(tr - vs->tracks);
            /* The newest entry of the name at or before the snapshot. */
            while (q < j && all[q].epoch <= epoch) {
                q++;
                have = 1;
            }
            if (!have)
                continue;
            at = &all[q - 1];
            if (at->kind == KIND_REMOVED)
                continue;
            if (at->kind == KIND_DIR) {
                if ((rc = entry_copy(&copy, at)) != 0)
                    break;
                copy.hlgroup = 0;
                if (tr->dir != MOUNT_NONE) {
                    entry_clear(&vs->e[tr->dir]);
                    vs->e[tr->dir] = copy;
                } else {
                    tr->dir = (uint32_t)vs->n;
                    rc = push_entry(vs, &copy);
                }
                continue;
            }
            if (tr->last != MOUNT_NONE && tr->seen == s && mount_versions_same(&vs->e[tr->last], at)) {
                tr->seen = s + 1;
                continue;
            }
            if ((rc = version_of(m, &gs, at, m->snap_names[s], &copy)) != 0)
                break;
            tr = &vs->tracks[ti];
            tr->last = (uint32_t)vs->n;
            tr->seen = s + 1;
            if ((rc = push_entry(vs, &copy)) != 0)
                entry_clear(&copy);
        }
        i = j;
    }
    for (size_t i = 0; i < n; i++)
        entry_clear(&all[i]);
    free(all);
    state_free(&gs);
    return rc;
}

int
mount_versions_build(struct pqv_mount *m, struct entry **out, size_t *n)
{
    struct versions vs;
    int rc = 0;

    memset(&vs, 0, sizeof(vs));
    *out = NULL;
    *n = 0;
    for (size_t k = 0; k < m->kept.n && rc == 0;) {
        size_t end = k;
        while (end < m->kept.n && m->kept.s[end].base == m->kept.s[k].base)
            end++;
        rc = generation(m, k, end, &vs);
        k = end;
    }
    /* A directory over the versions of each name that was never one. */
    for (size_t i = 0; i < vs.ntracks && rc == 0; i++) {
        const struct track *tr = &vs.tracks[i];
        struct entry d;
        if (tr->dir != MOUNT_NONE || tr->last == MOUNT_NONE)
            continue;
        memset(&d, 0, sizeof(d));
        d.kind = KIND_DIR;
        d.perm = 0555;
        d.uid = vs.e[tr->last].uid;
        d.gid = vs.e[tr->last].gid;
        d.mtime_sec = d.ctime_sec = vs.e[tr->last].mtime_sec;
        d.mtime_nsec = d.ctime_nsec = vs.e[tr->last].mtime_nsec;
        if ((d.name = strdup(vs.owned[i])) == NULL)
            rc = PQV_E_NOMEM;
        else if ((rc = push_entry(&vs, &d)) != 0)
            entry_clear(&d);
    }
    for (size_t i = 0; i < vs.nowned; i++)
        free(vs.owned[i]);
    free(vs.owned);
    free(vs.tracks);
    free(vs.names.slots);
    if (rc != 0) {
        for (size_t i = 0; i < vs.n; i++)
            entry_clear(&vs.e[i]);
        free(vs.e);
        return rc;
    }
    util_sort(vs.e, vs.n, sizeof(*vs.e), compare_name);
    *out = vs.e;
    *n = vs.n;
    return 0;
}
