/*
 * get.c: restoring files and trees (pqv_vault_get, pqv_vault_get_fd), from
 * the catalogue's entries (state.c), format 1 or 2 alike.
 *
 * A file's extents are read and opened on the worker pool, a bounded window
 * ahead, and written at their offsets (holes stay holes) into a temporary
 * file beside the destination (dest.c).  Only when every tag has verified
 * is it given its owner (as root), mode, times and extended attributes.
 * Files are committed in batches: their temporaries synced concurrently,
 * then renamed, then each directory that received names synced once; no
 * name ever points at unsynced or unverified data (docs/DESIGN.md section
 * 3).  Symbolic links are recreated (never followed); names that were hard
 * links of one file become hard links again.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/io.h"
#include "util/util.h"
#include "vault/vault_internal.h"

/* A batch: files written and verified, synced together, then named. */
#define RESTORE_BATCH_FILES 256     /* at most: each holds two descriptors */
#define RESTORE_BATCH_BYTES (64u << 20)

struct get_job {
    struct pool_job job;
    pqv_vault *v;
    const struct entry *e;
    const uint8_t *file_key;
    uint32_t index;
    uint8_t *plain, *sealed, *scratch;
    size_t used;                 /* bytes of plain and scratch to wipe */
};

static void
get_job_run(struct pool_job *pj)
{
    struct get_job *job = (struct get_job *)pj;

    job->job.rc = pack_read_extent(job->v, job->e->suite, job->file_key, job->index,
        &job->e->extents[job->index], job->plain, job->sealed, job->scratch);
}

/* Where plaintext goes: a file of ours (written at offsets), or a stream
 * (standard output, a FIFO, a device: written in order, holes as zeros). */
struct sink {
    int fd;
    const char *name;
    int seekable;
    int writeback;           /* start the write-back of each extent at once */
    uint64_t done, total;
    const struct pqv_get_options *opt;
    struct get_job *jobs;    /* reused from file to file (sink_free) */
    size_t window;
};

/* sink_free(out): the extent buffers, wiped where they were used. */
static void
sink_free(struct sink *out)
{
    for (size_t i = 0; out->jobs != NULL && i < out->window; i++) {
        free(out->jobs[i].plain);
        free(out->jobs[i].sealed);
        free(out->jobs[i].scratch);
    }
    free(out->jobs);
    out->jobs = NULL;
}

/* write_zeros(out, n): a hole, on a stream. */
static int
write_zeros(struct sink *out, uint64_t n)
{
    static const uint8_t zeros[65536];

    while (n > 0) {
        size_t k = n > sizeof(zeros) ? sizeof(zeros) : (size_t)n;
        int rc = fsutil_write_all(out->fd, zeros, k, out->name);
        if (rc != 0)
            return rc;
        n -= k;
    }
    return 0;
}

/* put_extent(out, x, plain, pos): write one extent's plaintext. */
static int
put_extent(struct sink *out, const struct extent *x, const uint8_t *plain, uint64_t *pos)
{
    int rc;

    if (out->seekable) {
        const uint8_t *p = plain;
        size_t left = x->plain_len;
        uint64_t off = x->file_off;
        while (left > 0) {
            ssize_t n = io_pwrite(out->fd, p, left, off, out->name);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return error_errno(out->name, "write", n < 0 ? errno : EIO);
            p += n;
            off += (uint64_t)n;
            left -= (size_t)n;
        }
        if (out->writeback)
            (void)sync_file_range(out->fd, (off_t)x->file_off, (off_t)x->plain_len,
                SYNC_FILE_RANGE_WRITE); /* advisory: errors surface at fsync */
    } else {
        if ((rc = write_zeros(out, x->file_off - *pos)) != 0 ||
            (rc = fsutil_write_all(out->fd, plain, x->plain_len, out->name)) != 0)
            return rc;
    }
    *pos = x->file_off + x->plain_len;
    return 0;
}

/* stream_entry(v, st, e, out): the plaintext of ${e}, every extent
 * verified, to ${out}. */
static int
stream_entry(pqv_vault *v, struct state *st, const struct entry *e, struct sink *out)
{
    uint8_t file_key[PQV_FILE_KEY_BYTES];
    struct pool *pool = vault_pool(v);
    struct get_job *jobs;
    size_t window, submitted = 0, retired = 0, n = e->nextents;
    uint64_t pos = 0;
    int rc, failed = 0;

    if (pool == NULL)
        return PQV_E_NOMEM;
    if ((rc = state_file_key(v, st, e, file_key)) != 0)
        return rc;
    /* Buffers are allocated once per sink, as the extents need them, and
     * reused: a tree of small files costs no 4 MiB allocation each. */
    if (out->jobs == NULL) {
        out->window = pool_threads(pool) + WINDOW_EXTRA;
        if ((out->jobs = calloc(out->window, sizeof(*out->jobs))) == NULL) {
            rc = PQV_E_NOMEM;
            goto done;
        }
    }
    jobs = out->jobs;
    window = out->window;
    while (retired < n) {
        while (!failed && submitted < n && submitted - retired < window) {
            struct get_job *job = &jobs[submitted % window];
            if ((job->plain == NULL && (job->plain = malloc(PQV_OBJECT_MAX_PLAIN)) == NULL) ||
                (job->sealed == NULL && (job->sealed = malloc(pack_sealed_max())) == NULL) ||
                (job->scratch == NULL && (job->scratch = malloc(pack_scratch_size())) == NULL)) {
                rc = PQV_E_NOMEM;
                failed = 1;
                break;
            }
            job->v = v;
            job->e = e;
            job->file_key = file_key;
            job->index = (uint32_t)submitted;
            if (e->extents[submitted].plain_len > job->used)
                job->used = e->extents[submitted].plain_len;
            if (e->extents[submitted].stored_len > job->used)
                job->used = e->extents[submitted].stored_len;
            job->job.run = get_job_run;
            pool_submit(pool, &job->job);
            submitted++;
        }
        if (retired == submitted)
            break;
        struct get_job *job = &jobs[retired % window];
        int jrc = pool_wait(pool, &job->job);
        retired++;
        if (jrc != 0 && !failed) {
            rc = jrc;
            failed = 1;
        }
        if (!failed) {
            if ((rc = put_extent(out, &e->extents[job->index], job->plain, &pos)) != 0)
                failed = 1;
            out->done += e->extents[job->index].plain_len;
            if (out->opt->progress != NULL)
                out->opt->progress(out->opt->progress_ctx, out->done, out->total);
        }
    }
    /* A trailing hole. */
    if (!failed) {
        if (out->seekable) {
            if (ftruncate(out->fd, (off_t)e->size) != 0)
                rc = error_errno(out->name, "truncate", errno);
        } else {
            rc = write_zeros(out, e->size - pos);
        }
    }
    /* Every extent retired (none still on the pool) before buffers are
     * wiped: a failure stops submitting, and the loop waits for the rest. */
done:
    /* Buffers reused from extent to extent, wiped once per file where
     * they were used (a decompressed extent is at most its plaintext). */
    for (size_t i = 0; out->jobs != NULL && i < out->window; i++) {
        struct get_job *job = &out->jobs[i];
        if (job->used == 0)
            continue;
        if (job->plain != NULL)
            util_wipe(job->plain, job->used < PQV_OBJECT_MAX_PLAIN ? job->used
                                                                   : PQV_OBJECT_MAX_PLAIN);
        if (job->scratch != NULL)
            util_wipe(job->scratch, job->used < pack_scratch_size() ? job->used
                                                                     : pack_scratch_size());
        job->used = 0;
    }
    util_wipe(file_key, sizeof(file_key));
    return rc;
}

/* same_data(a, b): whether two entries name the same data. */
static int
same_data(const struct entry *a, const struct entry *b)
{
    if (a->nextents != b->nextents || a->epoch != b->epoch)
        return 0;
    for (uint32_t i = 0; i < a->nextents; i++)
        if (memcmp(a->extents[i].pack_id, b->extents[i].pack_id, PACK_ID_BYTES) != 0 ||
            a->extents[i].pack_off != b->extents[i].pack_off)
            return 0;
    return 1;
}

/*
 * stream_current(v, st, e, out, fresh): stream_entry, tolerating writers.
 * Readers take no lock: a writer may replace or remove the file, and gc
 * may repack or delete its data, while we read.  If data is missing, the
 * state is read again: the file is gone (PQV_E_NOTFOUND), or changed (we
 * start again from its new entry, left in ${fresh} for the caller), or the
 * same (the data is really missing: PQV_E_INTEGRITY).  A retry rewinds the
 * output, which only a file allows (or a stream nothing was written to).
 */
static int
stream_current(pqv_vault *v, struct state *st, const struct entry *e, struct sink *out,
    struct entry *fresh, struct state *fresh_state)
{
    struct error_saved first;
    int rc, tries;

    rc = stream_entry(v, st, e, out);
    for (tries = 0; rc == PQV_E_NOTFOUND && tries < 3; tries++) {
        struct entry now;
        int rr;

        error_save(&first);
        state_free(fresh_state);
        if ((rr = state_current(v, fresh_state, NULL)) != 0)
            return rr;
        rr = state_lookup(v, fresh_state, e->name, &now);
        if (rr == PQV_E_NOTFOUND)
            return error_set(PQV_E_NOTFOUND, e->name, "removed while it was being read");
        if (rr != 0)
            return rr;
        if (same_data(&now, e)) {
            entry_clear(&now);
            error_restore(&first);
            return error_subject(PQV_E_INTEGRITY, pqv_error_last()->subject);
        }
        if (out->done > 0 && (!out->seekable || ftruncate(out->fd, 0) != 0)) {
            entry_clear(&now);
            return error_set(PQV_E_IO, out->name, "replaced by another writer while being read");
        }
        out->done = 0;
        out->total = now.size;
        entry_clear(fresh);
        *fresh = now;
        e = fresh;
        rc = stream_entry(v, fresh_state, e, out);
    }
    if (rc == PQV_E_NOTFOUND)
        rc = error_subject(PQV_E_INTEGRITY, pqv_error_last()->subject);
    return rc;
}

/* ---- metadata ---- */

/* owner_of(e, uid, gid): as root, the owner to restore: by name when the
 * name exists here (as tar does), else by number; 0 when not root. */
static int
owner_of(const struct entry *e, uid_t *uid, gid_t *gid)
{
    char buf[4096];
    struct passwd pw, *pwp = NULL;
    struct group gr, *grp = NULL;

    if (geteuid() != 0 || e->epoch == 0) /* (format 1 kept no owners) */
        return 0;
    *uid = e->uid;
    *gid = e->gid;
    if (e->user != NULL && getpwnam_r(e->user, &pw, buf, sizeof(buf), &pwp) == 0 && pwp != NULL)
        *uid = pwp->pw_uid;
    if (e->group != NULL && getgrnam_r(e->group, &gr, buf, sizeof(buf), &grp) == 0 && grp != NULL)
        *gid = grp->gr_gid;
    return 1;
}

static void
entry_meta(const struct entry *e, struct durable_meta *m)
{
    memset(m, 0, sizeof(*m));
    m->mode = e->perm & 07777;
    m->mtime.tv_sec = e->mtime_sec;
    m->mtime.tv_nsec = e->mtime_nsec;
    m->set_owner = owner_of(e, &m->uid, &m->gid);
}

/* set_xattrs(fd, e, display, opt): user.* attributes always, the others
 * (security., trusted., system.) as root only; a file system that takes
 * none is reported, not an error. */
static void
set_xattrs(int fd, const struct entry *e, const char *display, const struct pqv_get_options *opt)
{
    for (size_t i = 0; i < e->nxattrs; i++) {
        const struct xattr *x = &e->xattrs[i];
        if (strncmp(x->name, "user.", 5) != 0 && geteuid() != 0)
            continue;
        if (io_fsetxattr(fd, x->name, x->value, x->len, display) != 0)
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, display,
                "extended attribute %s not restored: %s", x->name, strerror(errno));
    }
}

/* What set_xattrs needs, for durable_meta's attrs (called after the owner
 * and mode, before the times: a chown clears security.capability). */
struct xattrs_of {
    const struct entry *e;
    const char *display;
    const struct pqv_get_options *opt;
};

static void
set_xattrs_cb(int fd, void *ctx)
{
    const struct xattrs_of *x = ctx;

    set_xattrs(fd, x->e, x->display, x->opt);
}

/* ---- a restore: batches of files ---- */

struct pending {
    struct dest_file f;
    const struct entry *e;
    struct entry fresh;          /* if it changed while read */
    int done;                    /* nothing to name: only to report (in order) */
};

/* A name that was a hard link of a file restored earlier in this run. */
struct hardlink {
    uint64_t group;
    char *first;                 /* where its first name was restored */
};

struct restore {
    pqv_vault *v;
    struct state *st;
    struct state fresh_state;    /* read again when a writer raced */
    struct dest d;
    const struct pqv_get_options *opt;
    struct sink progress;
    struct pending batch[RESTORE_BATCH_FILES];
    size_t nbatch, batch_max;    /* batch_max: what the descriptor limit allows */
    uint64_t batch_bytes;
    struct hardlink *links;
    size_t nlinks;
    struct { char *rel; char *display; uint64_t group; } *later;  /* hard links to make */
    size_t nlater;
    uint64_t failed;
    int worst;
    int single;                  /* one file: its failure is the call's, not reported */
    struct error_saved first;
    struct pqv_get_result res;
};

/* restored(r, e, what): said and counted. */
static void
restored(struct restore *r, const struct entry *e, const char *name, const char *what)
{
    r->res.restored++;
    if (e != NULL && e->kind == KIND_FILE)
        r->res.bytes += e->size;
    vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, name, "%s", what);
}

/* strip(name, n): ${name} without its first ${n} components; NULL if it has
 * no more (get --strip-components, as tar's). */
static const char *
strip(const char *name, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const char *slash = strchr(name, '/');
        if (slash == NULL)
            return NULL;
        name = slash + 1;
    }
    return name;
}

/* batch_limit(): files per batch: RESTORE_BATCH_FILES, or fewer if the
 * descriptor limit (two per pending file, and room for the rest) is low. */
static size_t
batch_limit(void)
{
    struct rlimit rl;
    size_t n = RESTORE_BATCH_FILES;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < 2 * RESTORE_BATCH_FILES + 128)
        n = rl.rlim_cur > 128 + 2 * 4 ? (size_t)(rl.rlim_cur - 128) / 2 : 4;
    return n;
}

/* failure(r, subject, rc): report and count a failed entry. */
static void
failure(struct restore *r, const char *subject, int rc)
{
    const struct pqv_error *err = pqv_error_last();
    const char *who = err->subject[0] != '\0' && strncmp(err->subject, r->d.root,
        strlen(r->d.root)) == 0 ? err->subject : subject;

    if (!r->single)
        vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_ERROR, who, "%s",
            err->reason[0] != '\0' ? err->reason : pqv_strerror(rc));
    else if (r->failed == 0)
        error_save(&r->first);
    r->failed++;
    if (rc == PQV_E_INTEGRITY || r->worst == 0)
        r->worst = rc;
}

struct sync_job {
    struct pool_job job;
    struct durable *tmp;
};

static void
sync_job_run(struct pool_job *pj)
{
    struct sync_job *j = (struct sync_job *)pj;

    j->job.rc = durable_sync(j->tmp);
}

/* sync_batch(r, synced): the batch's temporaries durable with one
 * syncfs(2) per file system they are on (one journal commit instead of an
 * fsync each); synced[i] set for those done.  A file system whose syncfs
 * fails leaves its files to their own fsync, which reports the error. */
static void
sync_batch(struct restore *r, unsigned char synced[RESTORE_BATCH_FILES])
{
    struct stat st[RESTORE_BATCH_FILES];
    int have[RESTORE_BATCH_FILES];

    memset(synced, 0, RESTORE_BATCH_FILES);
    for (size_t i = 0; i < r->nbatch; i++)
        have[i] = !r->batch[i].f.device && !r->batch[i].done &&
            fstat(r->batch[i].f.tmp.fd, &st[i]) == 0;
    for (size_t i = 0; i < r->nbatch; i++) {
        int ok;
        if (!have[i] || synced[i])
            continue;
        ok = io_syncfs(r->batch[i].f.tmp.fd, r->batch[i].f.display) == 0;
        for (size_t k = i; k < r->nbatch; k++)
            if (have[k] && st[k].st_dev == st[i].st_dev) {
                synced[k] = (unsigned char)ok;
                have[k] = ok;
            }
    }
}

/* flush(r): make the batch's files durable (syncfs, or concurrent fsyncs
 * for a batch of one), name them, sync their directories once. */
static int
flush(struct restore *r)
{
    struct sync_job jobs[RESTORE_BATCH_FILES];
    unsigned char synced[RESTORE_BATCH_FILES];
    struct pool *pool = vault_pool(r->v);
    int rc = 0;

    memset(synced, 0, sizeof(synced));
    if (r->nbatch > 1)
        sync_batch(r, synced);
    for (size_t i = 0; i < r->nbatch; i++) {
        jobs[i].tmp = &r->batch[i].f.tmp;
        jobs[i].job.run = sync_job_run;
        jobs[i].job.rc = 0;
        if (!r->batch[i].f.device && !r->batch[i].done && !synced[i])
            pool_submit(pool, &jobs[i].job);
    }
    for (size_t i = 0; i < r->nbatch; i++) {
        struct pending *p = &r->batch[i];
        int src;
        if (p->done) {
            restored(r, p->e, p->e->name, "restored");
            continue;
        }
        src = p->f.device || synced[i] ? 0 : pool_wait(pool, &jobs[i].job);
        if (src == 0)
            src = dest_name_file(&r->d, &p->f, r->opt->force);
        else
            dest_close_file(&p->f);
        if (src != 0)
            failure(r, p->e->name, src);
        else
            restored(r, p->e, p->e->name, "restored");
        entry_clear(&p->fresh);
    }
    r->nbatch = 0;
    r->batch_bytes = 0;
    if ((rc = dest_sync_dirs(&r->d)) != 0)
        failure(r, r->d.root, rc);
    return 0;
}

/* restore_file(r, e, rel, display, allow_device): write ${e} into a
 * temporary at ${rel}, verified, with its attributes; queued for flush. */
static int
restore_file(struct restore *r, const struct entry *e, const char *rel, const char *display,
    int allow_device)
{
    struct pending *p = &r->batch[r->nbatch];
    struct durable_meta meta;
    int rc;

    memset(p, 0, sizeof(*p));
    if ((rc = dest_open_file(&p->f, &r->d, rel, display, r->opt->force, allow_device)) != 0)
        return rc;
    r->progress.fd = p->f.fd;
    r->progress.name = display;
    r->progress.seekable = !p->f.device;
    r->progress.writeback = !p->f.device && e->size >= (1u << 20);
    rc = stream_current(r->v, r->st, e, &r->progress, &p->fresh, &r->fresh_state);
    if (p->fresh.name != NULL)
        e = &p->fresh; /* replaced meanwhile: restore the new version's attributes */
    if (rc != 0) {
        dest_close_file(&p->f);
        entry_clear(&p->fresh);
        return rc;
    }
    /* Every tag verified: now the file may become what it claims to be. */
    if (!p->f.device) {
        struct xattrs_of xo = { e, display, r->opt };
        entry_meta(e, &meta);
        meta.attrs = set_xattrs_cb;
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
        return flush(r);
    return 0;
}

static int
join_path(char *out, size_t outlen, const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    /* "out/" and "/" name the directory as "out" and "": one slash. */
    int n = snprintf(out, outlen, "%.*s/%s", (int)(dl > 0 && dir[dl - 1] == '/' ? dl - 1 : dl),
        dir, name);

    if (n < 0 || (size_t)n >= outlen)
        return error_set(PQV_E_INVAL, name, "path too long");
    return 0;
}

/* restore_one(r, e, rel, display, allow_device): one entry of any kind. */
static int
restore_one(struct restore *r, const struct entry *e, const char *rel, const char *display,
    int allow_device)
{
    struct durable_meta meta;

    switch (e->kind) {
    case KIND_DIR:
        return dest_make_dir(&r->d, rel);
    case KIND_SYMLINK:
        entry_meta(e, &meta);
        return dest_symlink(&r->d, rel, display, e->target, r->opt->force, &meta);
    default:
        if (e->hlgroup != 0) {
            /* Another name of a file restored in this run: linked after
             * the files are named. */
            for (size_t i = 0; i < r->nlinks; i++)
                if (r->links[i].group == e->hlgroup) {
                    void *grown = realloc(r->later, (r->nlater + 1) * sizeof(*r->later));
                    if (grown == NULL)
                        return PQV_E_NOMEM;
                    r->later = grown;
                    if ((r->later[r->nlater].rel = strdup(rel)) == NULL ||
                        (r->later[r->nlater].display = strdup(display)) == NULL) {
                        free(r->later[r->nlater].rel);
                        return PQV_E_NOMEM;
                    }
                    r->later[r->nlater++].group = e->hlgroup;
                    return 1; /* queued */
                }
            struct hardlink *grown = realloc(r->links, (r->nlinks + 1) * sizeof(*grown));
            if (grown == NULL)
                return PQV_E_NOMEM;
            r->links = grown;
            if ((r->links[r->nlinks].first = strdup(rel)) == NULL)
                return PQV_E_NOMEM;
            r->links[r->nlinks++].group = e->hlgroup;
        }
        return restore_file(r, e, rel, display, allow_device);
    }
}

static void
restore_free(struct restore *r)
{
    for (size_t i = 0; i < r->nbatch; i++) {
        dest_close_file(&r->batch[i].f);
        entry_clear(&r->batch[i].fresh);
    }
    for (size_t i = 0; i < r->nlinks; i++)
        free(r->links[i].first);
    free(r->links);
    for (size_t i = 0; i < r->nlater; i++) {
        free(r->later[i].rel);
        free(r->later[i].display);
    }
    free(r->later);
    state_free(&r->fresh_state);
    sink_free(&r->progress);
    dest_close(&r->d);
}

/* finish(r): the last batch, then the hard links. */
static int
finish(struct restore *r)
{
    int rc = flush(r);

    for (size_t i = 0; rc == 0 && i < r->nlater; i++) {
        const char *first = NULL;
        for (size_t k = 0; k < r->nlinks && first == NULL; k++)
            if (r->links[k].group == r->later[i].group)
                first = r->links[k].first;
        int lrc = dest_hardlink(&r->d, first, r->later[i].rel, r->later[i].display, r->opt->force);
        if (lrc != 0)
            failure(r, r->later[i].display, lrc);
        else
            restored(r, NULL, r->later[i].rel, "restored (hard link)");
    }
    if (rc == 0 && (rc = dest_sync_dirs(&r->d)) != 0)
        failure(r, r->d.root, rc);
    return rc;
}

static const struct pqv_get_options no_options;

/* restore_tree(r, prefix, out): every entry under ${prefix}. */
static int
restore_tree(struct restore *r, const char *prefix, const char *out, uint64_t damaged)
{
    struct state *st = r->st;
    size_t first = state_first_under(st, prefix), end = first;
    int rc;

    while (end < st->n && names_under(st->entries[end].name, prefix)) {
        r->progress.total += st->entries[end].size;
        end++;
    }
    if (end == first)
        return damaged > 0 ? error_set(PQV_E_INTEGRITY, NULL, "not found, and %llu damaged "
            "%s%s could not be examined", (unsigned long long)damaged,
            st->format == 1 ? "record" : "catalogue block", damaged == 1 ? "" : "s")
                           : error_set(PQV_E_NOTFOUND, NULL, "not found");
    /* A dry run creates nothing, not even the destination. */
    struct stat sb;
    int have_dest = !r->opt->dry_run || (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode));
    if (have_dest && (rc = dest_open(&r->d, out, !r->opt->dry_run)) != 0)
        return rc;
    r->d.batched = 1;
    /* Refuse before writing anything if any destination file exists. */
    for (size_t i = first; i < end && !r->opt->force && !r->opt->skip_existing && have_dest;
         i++) {
        const struct entry *e = &st->entries[i];
        const char *rel = strip(e->name, r->opt->strip_components);
        char dest[4096];
        if (e->kind == KIND_DIR || rel == NULL || *rel == '\0')
            continue;
        if ((rc = join_path(dest, sizeof(dest), out, rel)) != 0)
            return rc;
        if (dest_exists(&r->d, rel))
            return error_set(PQV_E_EXISTS, dest, "already exists");
    }
    /* Everything in name order (parents before children)... */
    for (size_t i = first; i < end; i++) {
        const struct entry *e = &st->entries[i];
        const char *rel = strip(e->name, r->opt->strip_components);
        char dest[4096];
        if (rel == NULL || *rel == '\0')
            continue; /* stripped away */
        if ((rc = join_path(dest, sizeof(dest), out, rel)) != 0)
            return rc;
        if (r->opt->skip_existing && e->kind != KIND_DIR && have_dest && dest_exists(&r->d, rel)) {
            r->res.skipped++;
            vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, dest,
                "skipped (exists)");
            continue;
        }
        if (r->opt->dry_run) {
            r->res.restored++;
            if (e->kind == KIND_FILE)
                r->res.bytes += e->size;
            vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, dest,
                "would be restored");
            continue;
        }
        rc = restore_one(r, e, rel, dest, 0);
        if (rc == PQV_E_NOMEM)
            return rc;
        if (rc < 0) {
            /* Reported, and the rest restored (as tar and restic do). */
            failure(r, e->name, rc);
            continue;
        }
        if (rc == 0 && e->kind != KIND_FILE) {
            /* Reported with the files around it, in name order. */
            struct pending *p = &r->batch[r->nbatch++];
            memset(p, 0, sizeof(*p));
            p->f.fd = p->f.dirfd = -1;
            p->f.tmp.fd = -1;
            p->f.tmp.slot = -1;
            p->done = 1;
            p->e = e;
            if (r->nbatch == r->batch_max && (rc = flush(r)) != 0)
                return rc;
        }
    }
    if (r->opt->dry_run)
        return 0;
    if ((rc = finish(r)) != 0)
        return rc;
    /* ...then directories' attributes, deepest first, since creating a
     * file inside a directory changes its mtime. */
    for (size_t i = end; i-- > first;) {
        const struct entry *e = &st->entries[i];
        const char *rel = strip(e->name, r->opt->strip_components);
        struct durable_meta meta;
        char dest[4096];
        struct xattrs_of xo = { e, dest, r->opt };
        if (e->kind != KIND_DIR || rel == NULL || *rel == '\0' ||
            join_path(dest, sizeof(dest), out, rel) != 0)
            continue;
        entry_meta(e, &meta);
        meta.attrs = e->nxattrs > 0 ? set_xattrs_cb : NULL;
        meta.attrs_ctx = &xo;
        if ((rc = dest_set_dir_meta(&r->d, rel, dest, &meta)) != 0)
            failure(r, dest, rc);
    }
    /* The directories made and their attributes, all at once. */
    if ((rc = dest_sync_all(&r->d)) != 0)
        failure(r, r->d.root, rc);
    return 0;
}


/* single_without_writing(r, e, dest, named): a file's get that writes
 * nothing: skipped because ${dest} exists (--skip-existing), or a dry run
 * that says what the real one would do, refusals included (${named}: the
 * path the user named, where a device or FIFO is written into). */
static int
single_without_writing(struct restore *r, const struct entry *e, const char *dest, int named)
{
    struct stat sb;

    if (lstat(dest, &sb) == 0) {
        if (r->opt->skip_existing) {
            r->res.skipped++;
            vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, dest,
                "skipped (exists)");
            return 0;
        }
        if (S_ISDIR(sb.st_mode))
            return error_set(PQV_E_EXISTS, dest, "is a directory");
        if (!(named && (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode)))) {
            if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
                return error_set(PQV_E_EXISTS, dest, "exists and is not a regular file");
            if (!r->opt->force)
                return error_set(PQV_E_EXISTS, dest, "%s",
                    S_ISLNK(sb.st_mode) ? "exists (a symbolic link)" : "already exists");
        }
    }
    r->res.restored++;
    r->res.bytes += e->size;
    vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, dest, "would be restored");
    return 0;
}

int
pqv_vault_get(pqv_vault *v, const char *name, const char *out, const struct pqv_get_options *opt)
{
    struct names_walk w = { NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    char norm[PQV_NAME_MAX + 1], dest[4096];
    struct restore r;
    struct state st;
    struct entry one, *e = NULL;
    uint64_t damaged = 0;
    struct stat sb;
    int rc, out_is_dir;

    struct pqv_get_options original;
    char origin_dir[4096];

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (name == NULL)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    if (opt->to_original && out != NULL)
        return error_set(PQV_E_INVAL, out, "a destination and the original place exclude each "
            "other");
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    w.report = opt->report;
    w.report_ctx = opt->report_ctx;
    w.damaged = &damaged;
    if ((rc = state_current(v, &st, &w)) != 0)
        return rc;
    if (opt->to_original) {
        /* Where the name was added from: restored into that place's
         * directory, the components above the name stripped. */
        char origin[4096];
        unsigned depth = 0;
        if ((rc = state_load_reporting(v, &st, &w)) != 0) {
            state_free(&st);
            return rc;
        }
        if (state_origin(&st, norm, origin, sizeof(origin)) != 0 || origin[0] != '/') {
            state_free(&st);
            return error_set(PQV_E_INVAL, norm, "its original place is not recorded (added "
                "from standard input, or by format 1)");
        }
        fsutil_dirname(origin, origin_dir, sizeof(origin_dir));
        for (const char *c = norm; (c = strchr(c, '/')) != NULL; c++)
            depth++;
        original = *opt;
        original.to_original = 0;
        original.strip_components = depth;
        opt = &original;
        out = origin_dir;
    }
    /* An existing directory, or a path ending in '/' (created). */
    out_is_dir = out == NULL || (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)) ||
        (out[0] != '\0' && out[strlen(out) - 1] == '/');
    /* One name is found without loading the catalogue; a tree needs it. */
    memset(&one, 0, sizeof(one));
    rc = state_lookup(v, &st, norm, &one);
    if (rc == 0 && one.kind != KIND_DIR) {
        e = &one;
    } else if (rc == PQV_E_INTEGRITY && st.format != 1) {
        /* The lookup met a damaged block, which may hold the name's newest
         * entry: a file (or a name the readable blocks do not hold) is
         * refused with that error; a tree is restored from the readable
         * blocks (as list shows them), the damage reported (exit 4). */
        struct names_walk quiet = w;
        struct error_saved lookup_err;
        const struct entry *x;
        uint64_t ignored = 0;
        int tree = 0;
        error_save(&lookup_err);
        quiet.report = NULL;
        quiet.damaged = &ignored;
        if ((rc = state_load_reporting(v, &st, &quiet)) == 0) {
            size_t first = state_first_under(&st, norm);
            x = state_find(&st, norm);
            tree = x != NULL ? x->kind == KIND_DIR
                             : first < st.n && names_under(st.entries[first].name, norm);
            state_free(&st);
            if (!tree) {
                error_restore(&lookup_err);
                rc = PQV_E_INTEGRITY;
            } else if ((rc = state_current(v, &st, &w)) == 0) {
                rc = state_load_reporting(v, &st, &w);
            }
        }
        if (rc != 0) {
            state_free(&st);
            return rc;
        }
    } else if ((rc = rc == 0 || rc == PQV_E_NOTFOUND ? state_load_reporting(v, &st, &w) : rc) != 0) {
        entry_clear(&one);
        state_free(&st);
        return rc;
    }
    memset(&r, 0, sizeof(r));
    r.batch_max = batch_limit();
    r.v = v;
    r.st = &st;
    r.opt = opt;
    r.progress.opt = opt;
    r.d.rootfd = -1;
    if (e != NULL) {
        r.single = 1;
        r.progress.total = e->size;
        if (out_is_dir) {
            /* Into a directory: the stored name below it, walked without
             * following links. */
            const char *root = out != NULL ? out : ".";
            const char *rel = strip(norm, opt->strip_components);
            if (rel == NULL || *rel == '\0')
                rc = error_set(PQV_E_INVAL, norm, "has fewer than %u+1 components to strip",
                    opt->strip_components);
            else if ((rc = join_path(dest, sizeof(dest), root, rel)) != 0)
                ;
            else if (opt->dry_run || (opt->skip_existing && lstat(dest, &sb) == 0))
                rc = single_without_writing(&r, e, dest, 0);
            else if ((rc = dest_open(&r.d, root, 1)) == 0 &&
                (rc = restore_one(&r, e, rel, dest, 0)) >= 0)
                rc = finish(&r);
        } else if (opt->dry_run || (opt->skip_existing && lstat(out, &sb) == 0)) {
            rc = single_without_writing(&r, e, out, 1);
        } else {
            /* To the path the user named: its directory is theirs (links
             * followed, created if missing); its last component is the
             * file, which may be a device or FIFO to write into. */
            char dir[4096];
            const char *base = strrchr(out, '/');
            fsutil_dirname(out, dir, sizeof(dir));
            base = base != NULL ? base + 1 : out;
            if (*base == '\0')
                rc = error_set(PQV_E_INVAL, out, "not a file name");
            else if ((rc = dest_open(&r.d, dir, 1)) == 0 &&
                (rc = restore_one(&r, e, base, out, 1)) >= 0)
                rc = finish(&r);
        }
        if (rc == 0 && r.failed > 0) {
            error_restore(&r.first);
            rc = r.worst;
        }
    } else {
        if (out != NULL && !out_is_dir && stat(out, &sb) == 0)
            rc = error_set(PQV_E_EXISTS, out, "exists and is not a directory");
        else
            rc = restore_tree(&r, norm, out != NULL ? out : ".", damaged);
        /* Exit 4 if anything failed its integrity check, else 1. */
        if (rc == 0 && damaged > 0 && st.format != 1) {
            /* A damaged block holds entries nobody can count. */
            char failed[64] = "";
            if (r.failed > 0)
                snprintf(failed, sizeof(failed), "%llu entr%s not restored; ",
                    (unsigned long long)r.failed, r.failed == 1 ? "y" : "ies");
            rc = error_set(PQV_E_INTEGRITY, NULL, "%s%llu damaged catalogue block%s: the entries "
                "in %s are lost (reported above)", failed, (unsigned long long)damaged,
                damaged == 1 ? "" : "s", damaged == 1 ? "it" : "them");
        } else if (rc == 0 && (r.failed > 0 || damaged > 0))
            rc = error_set(damaged > 0 || r.worst == PQV_E_INTEGRITY ? PQV_E_INTEGRITY : PQV_E_IO,
                NULL, "%llu entr%s not restored%s (reported above)",
                (unsigned long long)(r.failed + damaged), r.failed + damaged == 1 ? "y" : "ies",
                damaged > 0 ? ", damaged records among them" : "");
    }
    r.res.failed += r.failed;
    if (opt->result != NULL) {
        opt->result->restored += r.res.restored;
        opt->result->bytes += r.res.bytes;
        opt->result->skipped += r.res.skipped;
        opt->result->failed += r.res.failed;
    }
    restore_free(&r);
    entry_clear(&one);
    state_free(&st);
    return rc;
}

int
pqv_vault_get_fd(pqv_vault *v, const char *name, int fd, const struct pqv_get_options *opt)
{
    char norm[PQV_NAME_MAX + 1];
    struct sink sink = { fd, "standard output", 0, 0, 0, 0, NULL, NULL, 0 };
    struct state st, fresh_state;
    struct entry e, fresh;
    int rc;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (name == NULL || fd < 0)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    sink.opt = opt;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    if ((rc = state_lookup(v, &st, norm, &e)) != 0) {
        state_free(&st);
        return rc;
    }
    memset(&fresh, 0, sizeof(fresh));
    memset(&fresh_state, 0, sizeof(fresh_state));
    if (e.kind != KIND_FILE) {
        rc = error_set(PQV_E_INVAL, norm, "is not a regular file (cannot write it to a stream)");
    } else {
        sink.total = e.size;
        rc = stream_current(v, &st, &e, &sink, &fresh, &fresh_state);
    }
    sink_free(&sink);
    entry_clear(&fresh);
    entry_clear(&e);
    state_free(&fresh_state);
    state_free(&st);
    return rc;
}
