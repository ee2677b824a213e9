/*
 * get_batch.c: the files of a restore, in batches (get_internal.h): each
 * written into a temporary beside its name (a tree's small files on the
 * worker pool, the others on the restoring thread), every tag verified,
 * given its owner (as root), mode, times and extended attributes; a full
 * batch synced on the pool (one syncfs per file system) while the next is
 * written, then named in order.  No name ever points at unsynced or
 * unverified data (docs/DESIGN.md section 3, "Restoring a tree on both
 * cores").
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/io.h"
#include "util/pool.h"
#include "util/util.h"
#include "vault/fsmeta.h"
#include "vault/get_internal.h"
#include "vault/vault_internal.h"

/* get_batch_next(r): the batch's next slot (the batch is made at first use:
 * it is large for a stack), or NULL. */
struct pending *
get_batch_next(struct restore *r)
{
    if (r->batch == NULL) {
        /* Two: one written while the other is synced. */
        if ((r->batch = calloc(2 * RESTORE_BATCH_FILES, sizeof(*r->batch))) == NULL)
            return NULL;
        r->syncing = r->batch + RESTORE_BATCH_FILES;
        r->batches = r->batch;
    }
    return &r->batch[r->nbatch];
}

/* sync_batch(batch, n, synced): the batch's temporaries durable with one
 * syncfs(2) per file system they are on (one journal commit instead of an
 * fsync each); synced[i] set for those done.  A file system whose syncfs
 * fails leaves its files to their own fsync, which reports the error. */
static void
sync_batch(struct pending *batch, size_t n, unsigned char synced[RESTORE_BATCH_FILES])
{
    struct stat st[RESTORE_BATCH_FILES];
    int have[RESTORE_BATCH_FILES];

    memset(synced, 0, RESTORE_BATCH_FILES);
    for (size_t i = 0; i < n; i++)
        have[i] = !batch[i].f.device && !batch[i].done && batch[i].rc == 0 &&
            fstat(batch[i].f.tmp.fd, &st[i]) == 0;
    for (size_t i = 0; i < n; i++) {
        int ok;
        if (!have[i] || synced[i])
            continue;
        ok = io_syncfs(batch[i].f.tmp.fd, batch[i].f.display) == 0;
        for (size_t k = i; k < n; k++)
            if (have[k] && st[k].st_dev == st[i].st_dev) {
                synced[k] = (unsigned char)ok;
                have[k] = ok;
            }
    }
}

/* bufs_take(r) / bufs_give(r, b): a worker's buffers, idle or new. */
static struct get_bufs *
bufs_take(struct restore *r)
{
    struct get_bufs *b;

    pthread_mutex_lock(&r->bufs_mu);
    if ((b = r->bufs) != NULL)
        r->bufs = b->next;
    pthread_mutex_unlock(&r->bufs_mu);
    return b != NULL ? b : calloc(1, sizeof(*b));
}

static void
bufs_give(struct restore *r, struct get_bufs *b)
{
    pthread_mutex_lock(&r->bufs_mu);
    b->next = r->bufs;
    r->bufs = b;
    pthread_mutex_unlock(&r->bufs_mu);
}

/* async_run(job): on a worker, a pending file's temporary made, its data
 * written and verified, its attributes set (what restore_file does on
 * this thread for the others).  It touches only its own pending file, the
 * vault's storage and keys (shared by the pool's jobs already) and its
 * buffers. */
static void
async_run(struct pool_job *pj)
{
    struct pending *p = (struct pending *)((char *)pj - offsetof(struct pending, job));
    struct restore *r = p->r;
    struct get_out out;
    struct durable_meta meta;
    struct get_bufs *b;
    int rc;

    if ((rc = dest_create_file(&p->f, r->opt->force, 0)) != 0) {
        pj->rc = rc;
        return;
    }
    memset(&out, 0, sizeof(out));
    out.fd = p->f.fd;
    out.name = p->f.display;
    out.seekable = 1;
    out.opt = r->opt;
    if ((b = bufs_take(r)) == NULL) {
        pj->rc = PQV_E_NOMEM;
        return; /* (the temporary is removed at flush) */
    }
    rc = get_stream_inline(r->v, p->e, p->file_key, &out, b);
    bufs_give(r, b);
    if (rc == 0) {
        fsmeta_durable_meta(p->e, &meta);
        if ((rc = durable_set_meta(&p->f.tmp, &meta)) != 0)
            rc = error_subject(rc, p->f.display);
    }
    pj->rc = rc;
}

/* async_finish(r, p): wait for ${p}'s job; data that went missing (a
 * writer or gc raced) is read again here, as for any file; a failure is
 * kept in ${p} for flush to report in order. */
static void
async_finish(struct restore *r, struct pending *p)
{
    struct pool *pool = vault_pool(r->v);
    struct durable_meta meta;
    int rc = pool_wait(pool, &p->job);

    util_wipe(p->file_key, sizeof(p->file_key));
    p->async = 0;
    if (rc == PQV_E_NOTFOUND && p->f.tmp.fd >= 0) {
        const struct entry *e = p->e;
        struct get_out *out = &r->progress;
        out->fd = p->f.fd;
        out->name = p->f.display;
        out->seekable = 1;
        out->writeback = 0;
        /* (What the worker wrote goes: the file may have changed.) */
        if (ftruncate(p->f.fd, 0) != 0)
            rc = error_errno(p->f.display, "truncate", errno);
        else
            rc = get_stream_current(r->v, r->st, e, out, &p->fresh, &r->fresh_state);
        if (p->fresh.name != NULL)
            e = &p->fresh;
        if (rc == 0) {
            fsmeta_durable_meta(e, &meta);
            if ((rc = durable_set_meta(&p->f.tmp, &meta)) != 0)
                rc = error_subject(rc, p->f.display);
        }
        if (rc == 0) {
            p->e = e;
            return; /* (counted by get_stream_current) */
        }
        error_save(&p->job.error);
    }
    if (rc != 0) {
        p->rc = rc;
        dest_close_file(&p->f);
        return;
    }
    r->progress.done += p->e->size;
    if (r->opt->progress != NULL)
        r->opt->progress(r->opt->progress_ctx, r->progress.done, r->progress.total);
}

/* batch_sync_run(job): on a worker, the batch being synced made durable
 * (sync_batch, then an fsync for each file it did not cover), while this
 * thread writes the next batch. */
static void
batch_sync_run(struct pool_job *pj)
{
    struct restore *r = (struct restore *)((char *)pj - offsetof(struct restore, sync_job));
    struct pending *batch = r->syncing;
    size_t n = r->nsyncing;

    memset(r->synced, 0, sizeof(r->synced));
    if (n > 1)
        sync_batch(batch, n, r->synced);
    for (size_t i = 0; i < n; i++) {
        struct pending *p = &batch[i];
        if (p->f.device || p->done || p->rc != 0 || r->synced[i])
            continue;
        if ((p->rc = durable_sync(&p->f.tmp)) != 0)
            error_save(&p->job.error); /* (its job is done: its error kept there) */
        else
            r->synced[i] = 1;
    }
    pj->rc = 0;
}

/* flush_end(r): the batch being synced, once durable, named in order and
 * reported; its directories left to the last sync (or synced now, when
 * the restore is not batched). */
static void
flush_end(struct restore *r)
{
    if (r->nsyncing == 0)
        return;
    (void)pool_wait(vault_pool(r->v), &r->sync_job);
    for (size_t i = 0; i < r->nsyncing; i++) {
        struct pending *p = &r->syncing[i];
        int src;
        r->cur = p->idx;
        if (p->done) {
            get_restore_said(r, p->e, p->e->name, "restored");
            continue;
        }
        if (p->rc != 0) {
            /* (A failed write removed its temporary; a failed sync: below.) */
            dest_close_file(&p->f);
            error_restore(&p->job.error);
            get_restore_failure(r, p->e->name, p->rc);
            entry_clear(&p->fresh);
            continue;
        }
        src = dest_name_file(&r->d, &p->f, r->opt->force);
        if (src != 0)
            get_restore_failure(r, p->e->name, src);
        else
            get_restore_said(r, p->e, p->e->name, "restored");
        entry_clear(&p->fresh);
    }
    r->nsyncing = 0;
    r->cur = RESTORE_NO_ENTRY;
    if (r->d.batched) {
        dest_keep_dirs(&r->d); /* (synced once, by get_restore_finish) */
    } else {
        int rc = dest_sync_dirs(&r->d);
        if (rc != 0)
            get_restore_failure(r, r->d.root, rc);
    }
}

/* flush(r): the batch's files written (every job waited for), then made
 * durable on the pool while the next batch is written; the batch before,
 * whose sync ran meanwhile, named first.  Not batched (a single file),
 * or ${all}: synced and named before returning. */
int
get_batch_flush(struct restore *r, int all)
{
    struct pending *t;

    /* Every file of the batch written before anything is synced. */
    for (size_t i = 0; i < r->nbatch; i++)
        if (r->batch[i].async)
            async_finish(r, &r->batch[i]);
    flush_end(r);
    if (r->nbatch > 0) {
        /* The batch becomes the one being synced, and the other one's
         * slots (named, empty) take its place. */
        t = r->syncing;
        r->syncing = r->batch;
        r->batch = t;
        r->nsyncing = r->nbatch;
        r->nbatch = 0;
        r->batch_bytes = 0;
        r->sync_job.run = batch_sync_run;
        pool_submit(vault_pool(r->v), &r->sync_job);
        if (all || !r->d.batched)
            flush_end(r);
    }
    r->cur = RESTORE_NO_ENTRY;
    return 0;
}

/* async_eligible(r, e, allow_device): whether ${e} is written on the pool:
 * a small file of a tree, with nothing to report on the way (extended
 * attributes may be reported as not restored). */
static int
async_eligible(const struct restore *r, const struct entry *e, int allow_device)
{
    if (r->single || allow_device || e->size > RESTORE_ASYNC_MAX || e->nxattrs > 0 ||
        vault_pool(r->v) == NULL)
        return 0;
    for (uint32_t i = 0; i < e->nextents; i++)
        if (e->extents[i].plain_len > PQV_OBJECT_MAX_PLAIN)
            return 0;
    return 1;
}

/* restore_async(r, e, rel, display): ${e} queued in the batch, written on
 * the pool. */
static int
restore_async(struct restore *r, const struct entry *e, const char *rel, const char *display)
{
    struct pending *p = get_batch_next(r);
    int rc;

    if (p == NULL)
        return PQV_E_NOMEM;
    if (!r->bufs_ready) {
        if (pthread_mutex_init(&r->bufs_mu, NULL) != 0)
            return PQV_E_NOMEM;
        r->bufs_ready = 1;
    }
    memset(p, 0, sizeof(*p));
    p->idx = r->cur;
    if ((rc = dest_prepare_file(&p->f, &r->d, rel, display)) != 0)
        return rc;
    /* (On this thread: the state caches command keys as it unwraps them.) */
    if ((rc = state_file_key(r->v, r->st, e, p->file_key)) != 0) {
        dest_close_file(&p->f);
        return rc;
    }
    p->e = e;
    p->r = r;
    p->async = 1;
    p->job.run = async_run;
    p->job.rc = 0;
    pool_submit(vault_pool(r->v), &p->job);
    r->nbatch++;
    r->batch_bytes += e->size;
    if (r->nbatch == r->batch_max || r->batch_bytes >= RESTORE_BATCH_BYTES)
        return get_batch_flush(r, 0);
    return 0;
}

/* restore_file(r, e, rel, display, allow_device): write ${e} into a
 * temporary at ${rel}, verified, with its attributes; queued for flush. */
int
get_batch_file(struct restore *r, const struct entry *e, const char *rel, const char *display,
    int allow_device)
{
    struct pending *p;
    struct durable_meta meta;
    int rc;

    if (async_eligible(r, e, allow_device))
        return restore_async(r, e, rel, display);
    if ((p = get_batch_next(r)) == NULL)
        return PQV_E_NOMEM;
    memset(p, 0, sizeof(*p));
    p->idx = r->cur;
    if ((rc = dest_open_file(&p->f, &r->d, rel, display, r->opt->force, allow_device)) != 0)
        return rc;
    r->progress.fd = p->f.fd;
    r->progress.name = display;
    r->progress.seekable = !p->f.device;
    r->progress.writeback = !p->f.device && e->size >= (1u << 20);
    rc = get_stream_current(r->v, r->st, e, &r->progress, &p->fresh, &r->fresh_state);
    if (p->fresh.name != NULL)
        e = &p->fresh; /* replaced meanwhile: restore the new version's attributes */
    if (rc != 0) {
        dest_close_file(&p->f);
        entry_clear(&p->fresh);
        return rc;
    }
    /* Every tag verified: now the file may become what it claims to be. */
    if (!p->f.device) {
        struct fsmeta_xattrs xo = { e, display, r->opt->report, r->opt->report_ctx };
        fsmeta_durable_meta(e, &meta);
        meta.attrs = fsmeta_xattrs_cb;
        meta.attrs_ctx = &xo;
        if ((rc = durable_set_meta(&p->f.tmp, &meta)) != 0) {
            dest_close_file(&p->f);
            entry_clear(&p->fresh);
            return error_subject(rc, display);
        }
    }
    p->e = e;
    r->nbatch++;
    r->batch_bytes += e->size;
    if (r->nbatch == r->batch_max || r->batch_bytes >= RESTORE_BATCH_BYTES)
        return get_batch_flush(r, 0);
    return 0;
}

void
get_batch_free(struct restore *r)
{
    for (size_t i = 0; i < r->nbatch; i++) {
        if (r->batch[i].async) {
            (void)pool_wait(vault_pool(r->v), &r->batch[i].job);
            util_wipe(r->batch[i].file_key, sizeof(r->batch[i].file_key));
        }
        dest_close_file(&r->batch[i].f);
        entry_clear(&r->batch[i].fresh);
    }
    if (r->nsyncing > 0)
        (void)pool_wait(vault_pool(r->v), &r->sync_job);
    for (size_t i = 0; i < r->nsyncing; i++) {
        dest_close_file(&r->syncing[i].f);
        entry_clear(&r->syncing[i].fresh);
    }
    r->nbatch = r->nsyncing = 0;
    free(r->batches);
    r->batch = r->syncing = r->batches = NULL;
    if (r->bufs_ready) {
        while (r->bufs != NULL) {
            struct get_bufs *b = r->bufs;
            r->bufs = b->next;
            get_stream_bufs_free(b);
            free(b);
        }
        pthread_mutex_destroy(&r->bufs_mu);
        r->bufs_ready = 0;
    }
}
