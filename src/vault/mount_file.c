/*
 * mount_file.c: files of the mounted view (vault/mount_internal.h):
 * opened (the entry copied, its file key recovered once), kept open by the
 * view for a kernel that opens nothing itself, and read: a read's bytes
 * from the chunks (format 3) or extents (formats 1 and 2) it touches,
 * holes as zeros, through the cache of decrypted chunks (mount_cache.c);
 * whether it is a sequential reader's (whole chunks, the next ones
 * prefetched) or a random one (only the 64 KiB segments it touches, where
 * the chunk allows); SEEK_DATA and SEEK_HOLE from the extents.
 *
 * A file kept open (pqv_mount_file_get) is shared by every reader of it:
 * FUSE's zero-message opens (a kernel told ENOSYS by the first OPEN sends
 * no OPEN or RELEASE again) save two of the three round trips `cp` makes
 * per small file.  Its readers are told apart by who reads
 * (pqv_mount_read_as: FUSE gives the process), each followed alone.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "vault/chunk.h"
#include "vault/mount_internal.h"
#include "vault/pack.h"
#include "vault/readahead.h"
#include "vault/vault_internal.h"

/* ---- opening, keeping open, closing ---- */

/* file_alloc(m): a file's memory, locked (a closed file's reused: its
 * pages locked once, not per file opened), zeroed. */
static struct pqv_mount_file *
file_alloc(struct pqv_mount *m)
{
    struct pqv_mount_file *f = NULL;

    pthread_mutex_lock(&m->lock);
    if (m->nspare_files > 0)
        f = m->spare_files[--m->nspare_files];
    pthread_mutex_unlock(&m->lock);
    if (f != NULL)
        return f;
    if ((f = calloc(1, sizeof(*f))) != NULL)
        util_pin_memory(f, sizeof(*f));
    return f;
}

/* file_free(m, f): ${f}'s entry cleared (its file key wiped) and its
 * memory wiped, kept for the next file opened or given back. */
static void
file_free(struct pqv_mount *m, struct pqv_mount_file *f)
{
    entry_clear(&f->e);
    util_wipe(f, sizeof(*f));
    pthread_mutex_lock(&m->lock);
    if (m->nspare_files < MOUNT_FILES_KEPT) {
        m->spare_files[m->nspare_files++] = f;
        f = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    if (f != NULL) {
        util_unpin_memory(f, sizeof(*f));
        free(f);
    }
}

void
mount_file_spares_free(struct pqv_mount *m)
{
    while (m->nspare_files > 0) {
        struct pqv_mount_file *f = m->spare_files[--m->nspare_files];
        util_unpin_memory(f, sizeof(*f));
        free(f);
    }
}

/* file_make(m, ino, out): file ${ino} opened, in m's open files. */
static int
file_make(struct pqv_mount *m, uint64_t ino, struct pqv_mount_file **out)
{
    struct pqv_mount_file *f;
    struct mount_tree *t;
    const struct entry *e;
    uint32_t tree, node;
    int rc;

    *out = NULL;
    if ((rc = mount_decode(m, ino, &tree, &node)) != 0)
        return rc;
    if (tree == 0)
        return node == VNODE_SNAPSHOTS ? -EISDIR : -EINVAL;
    if ((rc = mount_get_tree(m, tree, &t)) != 0)
        return rc;
    e = node < t->nnodes ? mount_tree_entry(t, t->nodes[node].inode) : NULL;
    if (e == NULL || e->kind != KIND_FILE) {
        rc = e == NULL || e->kind == KIND_DIR ? -EISDIR : -EINVAL;
        goto done;
    }
    if ((f = file_alloc(m)) == NULL) {
        rc = -ENOMEM;
        goto done;
    }
    f->m = m;
    f->ino = ino;
    if ((rc = entry_copy(&f->e, e)) != 0) {
        file_free(m, f);
        rc = -ENOMEM;
        goto done;
    }
    if (!f->e.chunked && f->e.key_state != KEY_CLEAR && t->keys != NULL) {
        uint8_t key[PQV_FILE_KEY_BYTES];
        pthread_mutex_lock(&m->load_lock);
        rc = state_file_key(m->v, t->keys, e, key);
        pthread_mutex_unlock(&m->load_lock);
        if (rc != 0) {
            mount_report(m, e->name);
            file_free(m, f);
            rc = mount_errno(rc);
            goto done;
        }
        memcpy(f->e.key, key, sizeof(key));
        f->e.key_state = KEY_CLEAR;
        util_wipe(key, sizeof(key));
    }
    pthread_mutex_lock(&m->lock);
    f->next = m->files;
    if (m->files != NULL)
        m->files->prev = f;
    m->files = f;
    pthread_mutex_unlock(&m->lock);
    *out = f;
done:
    mount_put_tree(m, t);
    return rc;
}

int
pqv_mount_file_open(struct pqv_mount *m, uint64_t ino, struct pqv_mount_file **out)
{
    if (m == NULL || out == NULL)
        return -EINVAL;
    return file_make(m, ino, out);
}

/* kept_unlink(m, f): ${f} out of m->kept_files (m->lock held). */
static void
kept_unlink(struct pqv_mount *m, struct pqv_mount_file *f)
{
    if (f->kprev != NULL)
        f->kprev->knext = f->knext;
    else
        m->kept_files = f->knext;
    if (f->knext != NULL)
        f->knext->kprev = f->kprev;
    else
        m->kept_last = f->kprev;
    f->kprev = f->knext = NULL;
    f->kept = 0;
    m->nkept--;
}

/* kept_front(m, f): ${f} first in m->kept_files (m->lock held). */
static void
kept_front(struct pqv_mount *m, struct pqv_mount_file *f)
{
    f->kprev = NULL;
    f->knext = m->kept_files;
    if (m->kept_files != NULL)
        m->kept_files->kprev = f;
    else
        m->kept_last = f;
    m->kept_files = f;
    f->kept = 1;
    m->nkept++;
}

/* kept_trim(m): the least recently used files nobody reads out of
 * m->kept_files while it holds more than MOUNT_FILES_KEPT, as a list through
 * knext for the caller to close (m->lock held). */
static struct pqv_mount_file *
kept_trim(struct pqv_mount *m)
{
    struct pqv_mount_file *f = m->kept_last, *closing = NULL;

    while (m->nkept > MOUNT_FILES_KEPT && f != NULL) {
        struct pqv_mount_file *prev = f->kprev;
        if (f->refs == 0) {
            kept_unlink(m, f);
            f->knext = closing;
            closing = f;
        }
        f = prev;
    }
    return closing;
}

static void
close_list(struct pqv_mount_file *f)
{
    while (f != NULL) {
        struct pqv_mount_file *next = f->knext;
        f->knext = NULL;
        pqv_mount_file_close(f);
        f = next;
    }
}

int
pqv_mount_file_get(struct pqv_mount *m, uint64_t ino, struct pqv_mount_file **out)
{
    struct pqv_mount_file *f, *made = NULL, *closing;
    int rc;

    if (m == NULL || out == NULL)
        return -EINVAL;
    *out = NULL;
    for (;;) {
        pthread_mutex_lock(&m->lock);
        for (f = m->kept_files; f != NULL && f->ino != ino; f = f->knext)
            ;
        if (f == NULL && made != NULL) {
            f = made;
            made = NULL;
            kept_front(m, f);
        } else if (f != NULL) {
            kept_unlink(m, f);
            kept_front(m, f);
        }
        if (f != NULL) {
            f->refs++;
            closing = kept_trim(m);
            pthread_mutex_unlock(&m->lock);
            /* (another reader opened it first: the copy made goes) */
            pqv_mount_file_close(made);
            close_list(closing);
            *out = f;
            return 0;
        }
        pthread_mutex_unlock(&m->lock);
        /* Opened without the lock (its tree may load): then looked for
         * again, since another reader may have opened it meanwhile. */
        if ((rc = file_make(m, ino, &made)) != 0)
            return rc;
    }
}

void
pqv_mount_file_put(struct pqv_mount_file *f)
{
    struct pqv_mount *m;
    struct pqv_mount_file *closing;

    if (f == NULL)
        return;
    m = f->m;
    pthread_mutex_lock(&m->lock);
    if (f->refs > 0)
        f->refs--;
    closing = kept_trim(m);
    pthread_mutex_unlock(&m->lock);
    close_list(closing);
}

void
pqv_mount_file_close(struct pqv_mount_file *f)
{
    struct pqv_mount *m;

    if (f == NULL)
        return;
    m = f->m;
    pthread_mutex_lock(&m->lock);
    if (f->kept)
        kept_unlink(m, f);
    if (f->prev != NULL)
        f->prev->next = f->next;
    else
        m->files = f->next;
    if (f->next != NULL)
        f->next->prev = f->prev;
    pthread_mutex_unlock(&m->lock);
    file_free(m, f);
}

int
pqv_mount_wants_opens(void)
{
#ifdef PQV_TEST_HOOKS
    return getenv("PQVAULT_TEST_MOUNT_OPEN") != NULL;
#else
    return 0;
#endif
}

const char *
pqv_mount_counts_path(void)
{
#ifdef PQV_TEST_HOOKS
    return getenv("PQVAULT_TEST_MOUNT_COUNTS");
#else
    return NULL;
#endif
}

/* ---- reading ---- */

/* first_extent(e, off): the first extent ending after ${off}. */
static uint32_t
first_extent(const struct entry *e, uint64_t off)
{
    uint32_t lo = 0, hi = e->nextents;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (e->extents[mid].file_off + e->extents[mid].plain_len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* in_parts(x): a chunk a random read opens only the segments of: stored
 * uncompressed (a zstd frame opens only whole) and larger than one. */
static int
in_parts(const struct extent *x)
{
    return x->chunk && x->located && (x->flags & BLOB_ZSTD) == 0 &&
        x->plain_len > PQV_STREAM_SEGMENT_BYTES;
}

/* stream_find(f, reader): ${reader}'s stream of reads in ${f}, or NULL;
 * m->lock held. */
static struct mount_stream *
stream_find(struct pqv_mount_file *f, uint64_t reader)
{
    for (unsigned s = 0; s < f->nstreams; s++)
        if (f->streams[s].reader == reader)
            return &f->streams[s];
    return NULL;
}

/* stream_of(f, reader): ${reader}'s stream of reads in ${f}, made if it
 * had none (the least recently used replaced); m->lock held. */
static struct mount_stream *
stream_of(struct pqv_mount_file *f, uint64_t reader)
{
    struct mount_stream *st = stream_find(f, reader);

    if (st == NULL) {
        if (f->nstreams < MOUNT_STREAMS) {
            st = &f->streams[f->nstreams++];
        } else {
            st = &f->streams[0];
            for (unsigned s = 1; s < MOUNT_STREAMS; s++)
                if (f->streams[s].used < st->used)
                    st = &f->streams[s];
        }
        memset(st, 0, sizeof(*st));
        st->reader = reader;
    }
    st->used = ++f->tick;
    return st;
}

/* offer_len(m, e): how much of ${e}'s first chunk the view offers the
 * kernel's page cache ahead of its reads (opt.offer): all of it if it is
 * the whole file, else its whole pages (a page the kernel is given is
 * whole, or ends the file); 0: none (no first chunk at the file's start,
 * or one that needs a file key). */
static uint32_t
offer_len(const struct pqv_mount *m, const struct entry *e)
{
    const struct extent *x;

    if (e->kind != KIND_FILE || !e->chunked || e->nextents == 0)
        return 0;
    x = &e->extents[0];
    if (!x->chunk || !x->located || x->file_off != 0)
        return 0;
    if (x->plain_len == e->size)
        return x->plain_len;
    return (uint32_t)(x->plain_len - x->plain_len % m->page_size);
}

/* announce_ahead(m, t, at): over a network, the chunks of the walk's
 * files after place ${at} of tree ${t} not announced yet (small ones: a
 * large file's are announced as its prefetch queues them) announced to the
 * read-ahead, up to MOUNT_TELL_NODES places ahead and MOUNT_TELL_BYTES
 * stored now.  The offers reach a few files ahead only (their chunks are
 * decrypted and held); announced, the files after them come in the same
 * pack windows as theirs instead of streams' (m->lock held). */
static void
announce_ahead(struct pqv_mount *m, const struct mount_tree *t, uint32_t at)
{
    char sname[STORAGE_NAME_MAX];
    uint64_t bytes = 0, off;
    uint32_t p = m->walk_told > at ? m->walk_told + 1 : at + 1;

    for (; p < t->nwalk && p <= at + MOUNT_TELL_NODES && bytes < MOUNT_TELL_BYTES; p++) {
        uint32_t k = t->walk_order[p];
        const struct entry *e = t->nodes[k].inode == k ? mount_tree_entry(t, k) : NULL;
        m->walk_told = p;
        if (e == NULL || e->kind != KIND_FILE || !e->chunked || e->size > MOUNT_WALK_BYTES)
            continue;
        for (uint32_t i = 0; i < e->nextents; i++)
            if (pack_extent_place(&e->extents[i], sname, &off) &&
                readahead_plan_expect(m->v->readahead, sname, off, e->extents[i].stored_len) == 0)
                bytes += e->extents[i].stored_len;
    }
}

/* walk_step(m, tree, node, reading): the reader is at ${node} of ${tree}:
 * a file it reads from its start (or from where what was offered of it
 * ends), ${reading}, or a directory it lists.  If the place before it was
 * at most MOUNT_WALK_GAP places before it in its tree's walk order, or
 * before the last one looked at ahead (a walk: cp -a, tar, rsync and grep
 * -r read a tree's files depth first, each directory in listing or inode
 * order, which is that order), the first chunks of the next files of the
 * tree not looked at yet (those that need no file key: format 3's),
 * across directories, are queued for the prefetch threads, so that their
 * reads find them decrypted, or, offered to the kernel's page cache
 * (opt.offer), need no request at all.  A listing only moves a walk on:
 * it starts none (`find` and `du` read no file) and ends none.  Only a
 * tree loaded is looked at (m->lock held throughout: a tree unloads
 * under it). */
static void
walk_step(struct pqv_mount *m, uint32_t tree, uint32_t node, int reading)
{
    const struct mount_tree *t;
    uint32_t at, files = 0, from;
    uint64_t bytes = 0;
    int walking;

    pthread_mutex_lock(&m->lock);
    t = &m->trees[tree];
    if (t->status != TREE_LOADED || node >= t->nnodes || (at = t->walk_rank[node]) == MOUNT_NONE) {
        if (reading)
            m->walk_tree = 0;
        pthread_mutex_unlock(&m->lock);
        return;
    }
    walking = m->walk_tree == tree && at > m->walk_at &&
        at <= (m->walk_end > m->walk_at ? m->walk_end : m->walk_at) + MOUNT_WALK_GAP;
    if (!walking && !reading) {
        pthread_mutex_unlock(&m->lock);
        return;
    }
    from = walking && m->walk_end > at ? m->walk_end + 1 : at + 1;
    if (!walking) /* (walking: the same tree) */
        m->walk_told = 0;
    m->walk_tree = tree;
    m->walk_at = at;
    m->walk_end = from - 1;
    for (uint32_t p = from; walking && p < t->nwalk && p <= at + MOUNT_WALK_NODES &&
         files < MOUNT_WALK_FILES && bytes < MOUNT_WALK_BYTES; p++) {
        uint32_t k = t->walk_order[p];
        const struct entry *e = t->nodes[k].inode == k ? mount_tree_entry(t, k) : NULL;
        uint32_t len = e != NULL ? offer_len(m, e) : 0;
        uint64_t ino;
        m->walk_end = p;
        if (e == NULL || e->kind != KIND_FILE || !e->chunked || e->nextents == 0 ||
            !e->extents[0].chunk || !e->extents[0].located)
            continue;
        files++;
        bytes += e->extents[0].plain_len;
        ino = t->alias != NULL && t->alias[k] != MOUNT_NONE ? mount_ino(1, t->alias[k])
                                                            : mount_ino(tree, k);
        /* (Offered now if the file's directory is listed: the reader's
         * own; else once its listing goes on: the kernel has no inode
         * before.  A directory being listed is not yet.) */
        if (mount_offer_queue(m, e, ino, len, t->nodes[k].parent == t->nodes[node].parent) != 0)
            break;
        /* A file longer than its first chunk: the next one decrypted
         * too, for the kernel's first request of the file, where what was
         * offered ends (it waited 0.3-7 ms for that chunk's decryption,
         * about 40 ms of a cp -a of /usr/share/doc); kept for the
         * copies of the file the walk meets after it (7 of one 2 MB file
         * there), not read whole once and dropped. */
        if (len > 0 && len < e->size && e->nextents > 1) {
            bytes += e->extents[1].plain_len;
            mount_cache_queue_again(m, e, 1);
        }
    }
    if (walking && m->cache.remote)
        announce_ahead(m, t, at);
    pthread_mutex_unlock(&m->lock);
}

static void
walk_ahead(struct pqv_mount_file *f)
{
    uint32_t tree, node;

    if (mount_decode(f->m, f->ino, &tree, &node) == 0 && tree != 0)
        walk_step(f->m, tree, node, 1);
}

void
mount_file_walk_listed(struct pqv_mount *m, uint32_t tree, uint32_t node)
{
    walk_step(m, tree, node, 0);
}

int
pqv_mount_read(struct pqv_mount_file *f, uint8_t *buf, size_t len, uint64_t off, size_t *got)
{
    return pqv_mount_read_as(f, 0, buf, len, off, got);
}

int
pqv_mount_read_as(struct pqv_mount_file *f, uint64_t reader, uint8_t *buf, size_t len,
    uint64_t off, size_t *got)
{
    struct pqv_mount *m;
    const struct entry *e;
    uint64_t pos, end;
    uint32_t i;
    struct mount_stream *st;
    int rc, sequential, from_start;

    if (f == NULL || got == NULL || (buf == NULL && len > 0))
        return -EINVAL;
    m = f->m;
    e = &f->e;
    *got = 0;
    if (off >= e->size || len == 0)
        return 0;
    if (len > e->size - off)
        len = (size_t)(e->size - off);
    pos = off;
    end = off + len;
    /* A reader going on from where it stopped (or starting) reads whole
     * chunks, and the next ones are decrypted meanwhile; a random read
     * opens only the 64 KiB segments it touches where the chunk allows.
     * ("Where it stopped": within MOUNT_SEQUENTIAL_SLACK of the furthest
     * read of the same reader.) */
    pthread_mutex_lock(&m->lock);
    st = stream_of(f, reader);
    sequential = off == 0 || (st->read_before && off + MOUNT_SEQUENTIAL_SLACK >= st->next &&
                                 off <= st->next + MOUNT_SEQUENTIAL_SLACK);
    /* A file's first read where what may have been offered of it ends (the
     * kernel had the pages before) is its start, for a walk. */
    from_start = off == 0 || (!st->read_before && m->opt.offer != NULL && off == offer_len(m, e));
    sequential = sequential || from_start;
    pthread_mutex_unlock(&m->lock);
    i = first_extent(e, off);
    while (pos < end) {
        const struct extent *x = i < e->nextents ? &e->extents[i] : NULL;
        if (x != NULL && x->file_off + x->plain_len <= pos) {
            i++;
            continue;
        }
        if (x != NULL && x->file_off <= pos) {
            struct mount_chunk *ce;
            uint64_t xe = x->file_off + x->plain_len, in = pos - x->file_off, take;
            uint32_t segment = !sequential && in_parts(x)
                ? (uint32_t)(in / PQV_STREAM_SEGMENT_BYTES) : MOUNT_WHOLE;
            if ((rc = mount_cache_get(f, i, segment, &ce)) != 0) {
                util_wipe(buf, (size_t)(pos - off));
                mount_report(m, e->name);
                return rc == PQV_E_NOMEM ? -ENOMEM : -EIO;
            }
            if (ce->len != (ce->segment == MOUNT_WHOLE ? x->plain_len
                                                       : mount_cache_segment_len(x, ce->segment))) {
                /* A chunk cached for another entry of the same identity
                 * but another length (only a forged or damaged segment
                 * could say so): never read past what was decrypted. */
                pthread_mutex_lock(&m->lock);
                mount_cache_put(m, ce);
                pthread_mutex_unlock(&m->lock);
                util_wipe(buf, (size_t)(pos - off));
                error_set(PQV_E_INTEGRITY, e->name, "chunk %u: its length differs from "
                    "that of the same chunk elsewhere", i);
                mount_report(m, e->name);
                return -EIO;
            }
            take = (xe < end ? xe : end) - pos;
            if (take > (uint64_t)ce->base + ce->len - in)
                take = (uint64_t)ce->base + ce->len - in;
            memcpy(buf + (pos - off), ce->data + (in - ce->base), (size_t)take);
            pthread_mutex_lock(&m->lock);
            if (ce->segment == MOUNT_WHOLE)
                mount_cache_put_served(m, ce, take);
            else
                mount_cache_put(m, ce);
            pthread_mutex_unlock(&m->lock);
            pos += take;
            if (pos >= xe)
                i++;
        } else {
            /* A hole, up to the next extent. */
            uint64_t to = x != NULL && x->file_off < end ? x->file_off : end;
            memset(buf + (pos - off), 0, (size_t)(to - pos));
            pos = to;
        }
    }
    pthread_mutex_lock(&m->lock);
    /* (The reader's stream again: another reader's may have replaced it.) */
    st = stream_of(f, reader);
    if (end > st->next || !sequential)
        st->next = end;
    st->read_before = 1;
    st->sequential = sequential;
    if (sequential)
        mount_cache_prefetch(f, first_extent(e, end));
    pthread_mutex_unlock(&m->lock);
    if (from_start)
        walk_ahead(f);
    *got = len;
    return 0;
}

int
pqv_mount_read_behind(struct pqv_mount_file *f, uint64_t reader, uint64_t *off, uint64_t *len)
{
    struct pqv_mount *m;
    struct mount_stream *st;
    uint64_t to;
    int found = 0;

    if (f == NULL || off == NULL || len == NULL || f->e.size < MOUNT_DROP_MIN_FILE)
        return 0;
    m = f->m;
    pthread_mutex_lock(&m->lock);
    st = stream_find(f, reader);
    if (st != NULL && st->sequential &&
        st->next >= st->dropped + MOUNT_DROP_BEHIND + MOUNT_DROP_STEP) {
        to = st->next - MOUNT_DROP_BEHIND;
        /* (Another reader of the file, reading lately, keeps what is near
         * it; one that stopped keeps nothing.) */
        for (unsigned s = 0; s < f->nstreams; s++) {
            const struct mount_stream *o = &f->streams[s];
            uint64_t keep;
            if (o == st || !o->read_before || f->tick - o->used >= MOUNT_DROP_ACTIVE)
                continue;
            keep = o->next > MOUNT_DROP_BEHIND ? o->next - MOUNT_DROP_BEHIND : 0;
            if (keep < to)
                to = keep;
        }
        to &= ~(uint64_t)(MOUNT_DROP_ALIGN - 1);
        if (to > st->dropped) {
            *off = st->dropped;
            *len = to - st->dropped;
            st->dropped = to;
            found = 1;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return found;
}

int
pqv_mount_seek(struct pqv_mount_file *f, uint64_t off, int whence, uint64_t *out)
{
    const struct entry *e;
    uint32_t i;
    uint64_t pos;

    if (f == NULL || out == NULL)
        return -EINVAL;
    e = &f->e;
    if (whence != SEEK_DATA && whence != SEEK_HOLE)
        return -EINVAL;
    if (off >= e->size)
        return -ENXIO;
    i = first_extent(e, off);
    if (whence == SEEK_DATA) {
        if (i >= e->nextents)
            return -ENXIO;
        *out = e->extents[i].file_off > off ? e->extents[i].file_off : off;
        return 0;
    }
    if (i >= e->nextents || e->extents[i].file_off > off) {
        *out = off;
        return 0;
    }
    pos = e->extents[i].file_off + e->extents[i].plain_len;
    while (++i < e->nextents && e->extents[i].file_off == pos)
        pos += e->extents[i].plain_len;
    *out = pos < e->size ? pos : e->size;
    return 0;
}

