/*
 * get_stream.c: a file's data read back: its extents read from their packs
 * (or format-1 objects) and opened on the worker pool, a bounded window
 * ahead, and written in order to a file at their offsets (holes stay holes)
 * or to a stream (holes as zeros).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/io.h"
#include "util/pool.h"
#include "util/util.h"
#include "vault/get_internal.h"
#include "vault/pack.h"
#include "vault/vault_internal.h"

struct get_job {
    struct pool_job job;
    pqv_vault *v;
    const struct entry *e;
    const uint8_t *file_key;
    uint32_t index, count;       /* extents [index, index + count): one run */
    uint8_t *plain, *sealed, *scratch;
    size_t used;                 /* bytes of plain and scratch to wipe */
};

static void
get_job_run(struct pool_job *pj)
{
    struct get_job *job = (struct get_job *)pj;

    job->job.rc = pack_read_run(job->v, job->e->suite, job->file_key, job->index,
        &job->e->extents[job->index], job->count, job->plain, job->sealed, job->scratch);
}

/* get_stream_out_free(out): the extent buffers, wiped where they were used. */
void
get_stream_out_free(struct get_out *out)
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
write_zeros(struct get_out *out, uint64_t n)
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
put_extent(struct get_out *out, const struct extent *x, const uint8_t *plain, uint64_t *pos)
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
stream_entry(pqv_vault *v, struct state *st, const struct entry *e, struct get_out *out)
{
    uint8_t file_key[PQV_FILE_KEY_BYTES];
    struct pool *pool = vault_pool(v);
    struct get_job *jobs;
    size_t window, submitted = 0, retired = 0, n = e->nextents;
    size_t jobs_in = 0, jobs_out = 0; /* runs submitted, retired */
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
        while (!failed && submitted < n && jobs_in - jobs_out < window) {
            struct get_job *job = &jobs[jobs_in % window];
            if ((job->plain == NULL && (job->plain = malloc(PQV_OBJECT_MAX_PLAIN)) == NULL) ||
                (job->sealed == NULL && (job->sealed = malloc(pack_sealed_max())) == NULL) ||
                (job->scratch == NULL && (job->scratch = malloc(pack_scratch_size())) == NULL)) {
                rc = PQV_E_NOMEM;
                failed = 1;
                break;
            }
            size_t plain = 0, stored = 0;
            job->v = v;
            job->e = e;
            job->file_key = file_key;
            job->index = (uint32_t)submitted;
            /* Chunks stored one after the other are read together: one
             * request for a run, not one per chunk (a remote storage). */
            job->count = pack_chunk_run(&e->extents[submitted], (uint32_t)(n - submitted));
            for (uint32_t k = 0; k < job->count; k++) {
                plain += e->extents[submitted + k].plain_len;
                stored += e->extents[submitted + k].stored_len;
            }
            if (plain > job->used)
                job->used = plain;
            if (stored > job->used)
                job->used = stored;
            job->job.run = get_job_run;
            pool_submit(pool, &job->job);
            submitted += job->count;
            jobs_in++;
        }
        if (jobs_out == jobs_in)
            break;
        struct get_job *job = &jobs[jobs_out % window];
        int jrc = pool_wait(pool, &job->job);
        jobs_out++;
        retired += job->count;
        if (jrc != 0 && !failed) {
            rc = jrc;
            failed = 1;
        }
        for (uint32_t k = 0, at = 0; !failed && k < job->count; k++) {
            const struct extent *x = &e->extents[job->index + k];
            if ((rc = put_extent(out, x, job->plain + at, &pos)) != 0)
                failed = 1;
            at += x->plain_len;
            out->done += x->plain_len;
            if (out->opt->progress != NULL)
                out->opt->progress(out->opt->progress_ctx, out->done, out->total);
        }
    }
    /* A trailing hole. */
    if (!failed) {
        if (out->seekable) {
            /* (A fresh temporary: only a trailing hole needs its size set.) */
            if (pos < e->size && ftruncate(out->fd, (off_t)e->size) != 0)
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

/* grow(p, cap, need): ${*p} holds at least ${need} bytes. */
static int
grow(uint8_t **p, size_t *cap, size_t need)
{
    uint8_t *n;

    if (*cap >= need)
        return 0;
    /* (What it held was wiped after its file: nothing to carry over.) */
    free(*p);
    *cap = 0;
    if ((n = malloc(need)) == NULL) {
        *p = NULL;
        return PQV_E_NOMEM;
    }
    *p = n;
    *cap = need;
    return 0;
}

int
get_stream_inline(pqv_vault *v, const struct entry *e, const uint8_t *file_key,
    struct get_out *out, struct get_bufs *b)
{
    uint64_t pos = 0;
    size_t plain_used = 0, scratch_used = 0;
    int rc = 0;

    for (uint32_t i = 0; rc == 0 && i < e->nextents; i++) {
        const struct extent *x = &e->extents[i];
        if (x->plain_len > PQV_OBJECT_MAX_PLAIN || x->stored_len > pack_sealed_max()) {
            rc = error_set(PQV_E_INTEGRITY, e->name, "extent %u is too large", i);
            break;
        }
        if ((rc = grow(&b->plain, &b->plain_cap, x->plain_len > 0 ? x->plain_len : 1)) != 0 ||
            (rc = grow(&b->sealed, &b->sealed_cap, x->stored_len > 0 ? x->stored_len : 1)) != 0 ||
            (rc = grow(&b->scratch, &b->scratch_cap, x->stored_len > 0 ? x->stored_len : 1)) != 0)
            break;
        if (x->plain_len > plain_used)
            plain_used = x->plain_len;
        if (x->stored_len > scratch_used)
            scratch_used = x->stored_len;
        rc = pack_read_extent(v, e->suite, file_key, i, x, b->plain, b->sealed, b->scratch);
        if (rc == 0)
            rc = put_extent(out, x, b->plain, &pos);
    }
    if (rc == 0 && pos < e->size && ftruncate(out->fd, (off_t)e->size) != 0)
        rc = error_errno(out->name, "truncate", errno); /* a trailing hole */
    if (b->plain != NULL)
        util_wipe(b->plain, plain_used < b->plain_cap ? plain_used : b->plain_cap);
    if (b->scratch != NULL)
        util_wipe(b->scratch, scratch_used < b->scratch_cap ? scratch_used : b->scratch_cap);
    return rc;
}

void
get_stream_bufs_free(struct get_bufs *b)
{
    free(b->plain);
    free(b->sealed);
    free(b->scratch);
    memset(b, 0, sizeof(*b));
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

int
get_stream_current(pqv_vault *v, struct state *st, const struct entry *e, struct get_out *out,
    struct entry *fresh, struct state *fresh_state)
{
    struct error_saved first;
    /* (One progress for a whole restore: this file's share starts here.) */
    uint64_t base = out->done;
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
        if (out->done > base && (!out->seekable || ftruncate(out->fd, 0) != 0)) {
            entry_clear(&now);
            return error_set(PQV_E_IO, out->name, "replaced by another writer while being read");
        }
        out->done = base;
        out->total = (out->total >= e->size ? out->total - e->size : 0) + now.size;
        entry_clear(fresh);
        *fresh = now;
        e = fresh;
        rc = stream_entry(v, fresh_state, e, out);
    }
    if (rc == PQV_E_NOTFOUND)
        rc = error_subject(PQV_E_INTEGRITY, pqv_error_last()->subject);
    return rc;
}
