/*
 * mount_versions.c: the entries of the mounted view's versions/ tree
 * (vault/mount_internal.h): every kept generation walked, each name's
 * distinct versions (by mount_versions_same, diff's comparison) named by
 * the first snapshot that has them, their file keys recovered and chunks
 * placed, for mount_tree_build to make a tree of.
 *
 * The layout (docs/DESIGN.md "Mount", the versions/ layout): versions/
 * has the directories of every kept snapshot, and in each directory every
 * distinct version of each file or link of it, named STEM.SNAPSHOT.EXT
 * (borg's naming: the extension stays last).  A directory of the name
 * itself, DIR/NAME/, lists the versions of NAME alone; it is looked up
 * but not listed (as ZFS's hidden .zfs), so that a walk of versions/ costs
 * a directory per directory, not one per file.  Each version carries its
 * name's group (1 + its track), and so does that hidden directory: the
 * tree gives the directory those versions as its children.
 *
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
    uint32_t *group;             /* by entry: 0, or 1 + its name's track */
    size_t n, cap;
    struct track *tracks;        /* by the names' table values */
    size_t ntracks, captracks;
    struct name_table names;     /* name -> track (names kept in ${owned}) */
    char **owned;
    size_t nowned;
};

/* reserve_entries(vs, more): room for ${more} entries more, at once (a
 * large array grown by doubling is copied each time). */
static int
reserve_entries(struct versions *vs, size_t more)
{
    size_t cap = vs->n + more;
    struct entry *grown;
    uint32_t *groups;

    if (cap <= vs->cap)
        return 0;
    if (cap >= UINT32_MAX / 2)
        return error_set(PQV_E_LIMIT, NULL, "too many versions to mount");
    if ((grown = realloc(vs->e, cap * sizeof(*grown))) == NULL)
        return PQV_E_NOMEM;
    vs->e = grown;
    if ((groups = realloc(vs->group, cap * sizeof(*groups))) == NULL)
        return PQV_E_NOMEM;
    vs->group = groups;
    vs->cap = cap;
    return 0;
}

/* push_entry(vs, e, group): ${e} moved in (left cleared), of ${group}. */
static int
push_entry(struct versions *vs, struct entry *e, uint32_t group)
{
    int rc;

    if (vs->n == vs->cap && (rc = reserve_entries(vs, vs->cap > 256 ? vs->cap : 256)) != 0)
        return rc;
    vs->group[vs->n] = group;
    vs->e[vs->n++] = *e;
    memset(e, 0, sizeof(*e));
    return 0;
}

void
mount_versions_name(const char *comp, const char *snap, char out[MOUNT_VERSION_NAME_MAX + 1])
{
    size_t len = strlen(comp), slen = strlen(snap), stem = len, ext = 0, lead = 0;
    const char *dot;

    /* An extension as Python's os.path.splitext finds one: from the last
     * dot on, unless that dot only leads the name (".profile"); a name
     * ending in a dot has none here. */
    while (comp[lead] == '.')
        lead++;
    dot = strrchr(comp + lead, '.');
    if (dot != NULL && dot[1] != '\0' && (size_t)(len - (size_t)(dot - comp)) <= MOUNT_VERSION_EXT_MAX) {
        stem = (size_t)(dot - comp);
        ext = len - stem;
    }
    if (slen > MOUNT_VERSION_NAME_MAX / 4)
        slen = MOUNT_VERSION_NAME_MAX / 4;
    /* Cut to a name's limit: the stem shortened, at a character's start. */
    if (stem + 1 + slen + ext > MOUNT_VERSION_NAME_MAX) {
        stem = MOUNT_VERSION_NAME_MAX - 1 - slen - ext;
        while (stem > 0 && ((unsigned char)comp[stem] & 0xC0) == 0x80)
            stem--;
    }
    memcpy(out, comp, stem);
    out[stem] = '.';
    memcpy(out + stem + 1, snap, slen);
    memcpy(out + stem + 1 + slen, comp + len - ext, ext);
    out[stem + 1 + slen + ext] = '\0';
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

/* version_of(m, gs, at, snap, out): ${at} moved into ${out} (${at} left
 * cleared, its name NULL) as its version of snapshot ${snap}
 * (mount_versions_name in its directory): its file key in clear, its
 * chunks placed, no hard-link group. */
static int
version_of(struct pqv_mount *m, struct state *gs, struct entry *at, const char *snap,
    struct entry *out)
{
    const char *slash = strrchr(at->name, '/');
    size_t dir = slash != NULL ? (size_t)(slash + 1 - at->name) : 0;
    char comp[MOUNT_VERSION_NAME_MAX + 1], *name;
    int rc;

    if (at->kind == KIND_FILE && !at->chunked && at->key_state != KEY_CLEAR) {
        uint8_t key[PQV_FILE_KEY_BYTES];
        if ((rc = state_file_key(m->v, gs, at, key)) != 0)
            return rc;
        memcpy(at->key, key, sizeof(key));
        at->key_state = KEY_CLEAR;
        util_wipe(key, sizeof(key));
    }
    mount_versions_name(at->name + dir, snap, comp);
    if ((name = malloc(dir + strlen(comp) + 1)) == NULL)
        return PQV_E_NOMEM;
    memcpy(name, at->name, dir);
    memcpy(name + dir, comp, strlen(comp) + 1);
    *out = *at;
    memset(at, 0, sizeof(*at));
    free(out->name);
    out->name = name;
    out->hlgroup = 0;
    chunks_locate(&m->cur.chunks, out);
    return 0;
}

/* generation(m, k0, k1, vs): the kept snapshots k0 .. k1 - 1, of one
 * generation, merged into ${vs}.  Each name's entries are taken out of
 * the generation's array into a small one of the name's own before its
 * versions are made, so that the first generation's array can take the
 * versions in place (their number is at most the entries': no second
 * array of a state's size, nor its pages faulted in). */
static int
generation(struct pqv_mount *m, size_t k0, size_t k1, struct versions *vs)
{
    struct names_walk w;
    struct state gs;
    struct entry *all = NULL, *run = NULL;
    size_t n = 0, runcap = 0;
    uint64_t damaged = 0;
    int rc, in_place;

    mount_walk(m, &w, &damaged);
    if ((rc = snapshots_state(m->v, &m->cur, &m->kept.s[k1 - 1], &gs)) != 0)
        return rc;
    /* The index is the current chain's: given back at once. */
    m->cur.chunks = gs.chunks;
    m->cur.chunks_loaded = 1;
    memset(&gs.chunks, 0, sizeof(gs.chunks));
    gs.chunks_loaded = 0;
    if ((rc = state_read_entries(m->v, &gs, &w, &all, &n)) == 0)
        rc = entry_sort_by_name(all, n, 0, NULL);
    in_place = rc == 0 && vs->e == NULL;
    if (in_place) {
        if ((vs->group = calloc(n + 1, sizeof(*vs->group))) == NULL)
            rc = PQV_E_NOMEM;
        else {
            vs->e = all;
            vs->cap = n;
        }
    } else if (rc == 0) {
        rc = reserve_entries(vs, n);
    }
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i + 1, q = 0, len;
        struct entry *dir_at = NULL;
        struct track *tr;
        size_t ti;
        int have = 0;
        while (j < n && strcmp(all[j].name, all[i].name) == 0)
            j++;
        len = j - i;
        if (len > runcap) {
            struct entry *grown = realloc(run, len * sizeof(*run));
            if (grown == NULL) {
                rc = PQV_E_NOMEM;
                break;
            }
            run = grown;
            runcap = len;
        }
        memcpy(run, &all[i], len * sizeof(*run));
        memset(&all[i], 0, len * sizeof(*run));
        if ((rc = track_of(vs, run[0].name, &tr)) != 0) {
            for (size_t k = 0; k < len; k++)
                entry_clear(&run[k]);
            break;
        }
        ti = (size_t)(tr - vs->tracks);
        for (size_t s = k0; s < k1 && rc == 0; s++) {
            uint64_t epoch = m->kept.s[s].epoch;
            struct entry *at, version;
            /* The newest entry of the name at or before the snapshot. */
            while (q < len && run[q].epoch <= epoch) {
                q++;
                have = 1;
            }
            if (!have)
                continue;
            at = &run[q - 1];
            tr = &vs->tracks[ti];
            if (at->name == NULL) {
                /* Moved into the versions at an earlier snapshot: that
                 * version still. */
                tr->seen = s + 1;
                continue;
            }
            if (at->kind == KIND_REMOVED)
                continue;
            if (at->kind == KIND_DIR) {
                dir_at = at; /* the newest wins */
                continue;
            }
            if (tr->last != MOUNT_NONE && tr->seen == s && mount_versions_same(&vs->e[tr->last], at)) {
                tr->seen = s + 1;
                continue;
            }
            if ((rc = version_of(m, &gs, at, m->snap_names[s], &version)) != 0)
                break;
            tr->last = (uint32_t)vs->n;
            tr->seen = s + 1;
            if ((rc = push_entry(vs, &version, (uint32_t)ti + 1)) != 0)
                entry_clear(&version);
        }
        if (rc == 0 && dir_at != NULL) {
            tr = &vs->tracks[ti];
            dir_at->hlgroup = 0;
            if (tr->dir != MOUNT_NONE) {
                entry_clear(&vs->e[tr->dir]);
                vs->e[tr->dir] = *dir_at;
                memset(dir_at, 0, sizeof(*dir_at));
            } else {
                tr->dir = (uint32_t)vs->n;
                rc = push_entry(vs, dir_at, 0);
            }
        }
        /* What was not taken: removed and superseded entries. */
        for (size_t k = 0; k < len; k++)
            entry_clear(&run[k]);
        i = j;
    }
    free(run);
    if (in_place) {
        /* The array is the versions' now; its slots past them are empty. */
        for (size_t i = vs->n; i < n; i++)
            entry_clear(&all[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            entry_clear(&all[i]);
        free(all);
    }
    state_free(&gs);
    return rc;
}

int
mount_versions_build(struct pqv_mount *m, struct entry **out, uint32_t **groups, size_t *n,
    char ***names, uint32_t *ngroups)
{
    struct versions vs;
    char **byg = NULL;
    int rc = 0;

    memset(&vs, 0, sizeof(vs));
    *out = NULL;
    *groups = NULL;
    *n = 0;
    *names = NULL;
    *ngroups = 0;
    for (size_t k = 0; k < m->kept.n && rc == 0;) {
        size_t end = k;
        while (end < m->kept.n && m->kept.s[end].base == m->kept.s[k].base)
            end++;
        rc = generation(m, k, end, &vs);
        k = end;
    }
    /* Each group's name, for its hidden directory: a name that was never
     * a directory and has versions (the tree makes the directory). */
    for (size_t i = 0; i < vs.ntracks; i++)
        if (vs.tracks[i].dir != MOUNT_NONE || vs.tracks[i].last == MOUNT_NONE) {
            free(vs.owned[i]);
            vs.owned[i] = NULL;
        }
    free(vs.tracks);
    free(vs.names.slots);
    if (rc == 0)
        rc = entry_sort_by_name(vs.e, vs.n, 0, vs.group);
    /* By group: group g is track g - 1 (names[0] unused). */
    if (rc == 0 && (byg = calloc(vs.nowned + 1, sizeof(*byg))) == NULL)
        rc = PQV_E_NOMEM;
    if (rc != 0) {
        for (size_t i = 0; i < vs.nowned; i++)
            free(vs.owned[i]);
        free(vs.owned);
        for (size_t i = 0; i < vs.n; i++)
            entry_clear(&vs.e[i]);
        free(vs.e);
        free(vs.group);
        return rc;
    }
    memcpy(byg + 1, vs.owned, vs.nowned * sizeof(*byg));
    free(vs.owned);
    *out = vs.e;
    *groups = vs.group;
    *n = vs.n;
    *names = byg;
    *ngroups = (uint32_t)vs.nowned;
    return 0;
}
