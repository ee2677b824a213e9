/*
 * mount_xattrs.c: whether the view shows any extended attribute at all
 * (pqv_mount_xattrs_none).  The kernel caches no answer about extended
 * attributes: `cp -a` asks each file's list twice and its ACL once, 71% of
 * its requests through the mount.  A file system that answers ENOSYS is
 * never asked again; the view may say so only if no file of any state it
 * shows has one, and what it shows never changes while mounted.
 *
 * Every state the view shows is made of entries of its kept segments: the
 * current generation's (the root's state is loaded from all of them at
 * mount, superseded entries counted too: state.xattr_entries) and, for
 * each older generation that a kept snapshot belongs to, its segments from
 * the base to its newest kept snapshot.  Those are read on a thread of
 * their own when first asked (answers meanwhile are the entries' own),
 * one generation at a time under the view's load lock, as a tree loads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vault/mount_internal.h"
#include "vault/names.h"
#include "vault/snapshots.h"
#include "vault/state.h"

/* older_generations(m): whether a kept snapshot belongs to a generation
 * before the current one. */
static int
older_generations(const struct pqv_mount *m)
{
    for (size_t k = 0; k < m->kept.n; k++)
        if (m->kept.s[k].base != m->cur.base)
            return 1;
    return 0;
}

void
mount_xattrs_init(struct pqv_mount *m)
{
    if (m->cur.xattr_entries > 0)
        m->xattrs = MOUNT_XATTRS_SOME;
    else if (m->cur.format < 2 || !older_generations(m))
        m->xattrs = MOUNT_XATTRS_NONE;
    else
        m->xattrs = MOUNT_XATTRS_UNKNOWN;
}

/* generation_xattrs(m, sn, found): the entries of the segments of kept
 * snapshot ${sn} (from its generation's base) with extended attributes
 * counted into *${found} (m->load_lock held). */
static int
generation_xattrs(struct pqv_mount *m, const struct snapshot *sn, uint64_t *found)
{
    struct names_walk w;
    struct state st;
    struct entry *all = NULL;
    uint64_t damaged = 0;
    size_t n = 0;
    int rc;

    mount_walk(m, &w, &damaged);
    if ((rc = snapshots_state(m->v, &m->cur, sn, &st)) == 0) {
        rc = state_read_entries(m->v, &st, &w, &all, &n);
        for (size_t i = 0; i < n; i++) {
            *found += all[i].nxattrs > 0;
            entry_clear(&all[i]);
        }
        free(all);
    }
    /* The chunk index is the current chain's, lent: given back. */
    if (st.chunks_loaded) {
        m->cur.chunks = st.chunks;
        m->cur.chunks_loaded = 1;
        memset(&st.chunks, 0, sizeof(st.chunks));
        st.chunks_loaded = 0;
    }
    state_free(&st);
    return rc;
}

static void *
scan_main(void *arg)
{
    struct pqv_mount *m = arg;
    uint64_t found = 0;
    int rc = 0, stop = 0;

    /* Each older generation once, through its newest kept snapshot
     * (snapshots ascend by epoch, a generation's contiguously). */
    for (size_t k = 0; k < m->kept.n && rc == 0 && found == 0 && !stop; k++) {
        const struct snapshot *sn = &m->kept.s[k];
        if (sn->base == m->cur.base || (k + 1 < m->kept.n && m->kept.s[k + 1].base == sn->base))
            continue;
        pthread_mutex_lock(&m->load_lock);
        rc = generation_xattrs(m, sn, &found);
        pthread_mutex_unlock(&m->load_lock);
        pthread_mutex_lock(&m->lock);
        stop = m->xattrs_stop;
        pthread_mutex_unlock(&m->lock);
    }
    pthread_mutex_lock(&m->lock);
    /* (Not read whole: some may have some.) */
    m->xattrs = rc == 0 && found == 0 && !stop ? MOUNT_XATTRS_NONE : MOUNT_XATTRS_SOME;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

int
pqv_mount_xattrs_none(pqv_mount *m)
{
    int none;

    if (m == NULL)
        return 0;
    pthread_mutex_lock(&m->lock);
    if (m->xattrs == MOUNT_XATTRS_UNKNOWN && !m->xattrs_started) {
        m->xattrs_started = 1;
        m->xattrs_made = pthread_create(&m->xattrs_thread, NULL, scan_main, m) == 0;
        if (!m->xattrs_made)
            m->xattrs = MOUNT_XATTRS_SOME;
    }
    none = m->xattrs == MOUNT_XATTRS_NONE;
    pthread_mutex_unlock(&m->lock);
    return none;
}

void
mount_xattrs_stop(struct pqv_mount *m)
{
    int joined;

    pthread_mutex_lock(&m->lock);
    m->xattrs_stop = 1;
    joined = m->xattrs_made;
    m->xattrs_made = 0;
    pthread_mutex_unlock(&m->lock);
    if (joined)
        pthread_join(m->xattrs_thread, NULL);
}
