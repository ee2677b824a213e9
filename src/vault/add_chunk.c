/*
 * add_chunk.c: the files of an add into chunks (format 3, docs/FORMAT.md
 * sections 21-23).  The main thread reads each file once through one
 * descriptor (as add_seal.c does: one state of the file, never a mix) and
 * cuts its data regions at content-defined boundaries (chunker.c); each
 * chunk goes to the worker pool, which computes its identity, looks it up
 * (the chain's records, the chunks this add stored or adopted) and seals
 * only a new one.  Chunks retire in order into the transaction's packs;
 * a file's entry is made when its last chunk retires, so that many small
 * files are in flight at once on every core.  A pack that an interrupted
 * command left (no segment names it) is adopted: its chunks are used
 * where they are, not stored again (add_adopt.c finds them).
 */
#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto/kdf.h"
#include "util/fsutil.h"
#include "util/util.h"
#include "vault/add_internal.h"
#include "vault/chunk.h"
#include "vault/chunker.h"
#include "vault/chunks.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/pack3.h"
#include "vault/source.h"
#include "vault/vault_internal.h"

/* Chunks in flight: at most this many, holding at most this much. */
#define JOBS_MAX 64
#define INFLIGHT_BYTES (12u << 20)
/* The chunk buffers kept between chunks: above this, a retired job's
 * large buffers are freed (a ring of JOBS_MAX jobs would otherwise keep
 * two buffers of the largest chunk each: its plaintext and its blob; the
 * compression scratch is each worker thread's own, chunk.c). */
#define BUFFER_BUDGET (16u << 20)
/* Files whose chunks are in flight. */
#define PENDING_MAX 256
/* Every this many chunks retired, what the workers freed goes back to the
 * system (malloc_trim), the main heap's top kept up to TRIM_KEEP (what
 * the CLI reserves for it in huge pages, src/cli/main.c): with glibc's
 * thresholds pinned there, each worker's arena would keep its own peak,
 * and a kernel tree's first add peaked at 197-205 MiB instead of 185-187
 * (docs/DESIGN.md, "The add's memory"). */
#define TRIM_EVERY 1024
#define TRIM_KEEP ((size_t)256 << 20)
/* The read buffer: topped up when less than a largest chunk is left in
 * it, by reads of at least three (cut_region). */
#define READ_BUF (4 * CHUNK_MAX)

/* A file whose chunks are in flight. */
struct pending {
    struct add_file *f;          /* NULL: a stream (the entry is kept) */
    struct entry e;
    int state;                   /* FILE_OK, FILE_FAILED, FILE_CHANGED */
    int last_attempt;            /* FILE_CHANGED: no attempt follows */
    size_t outstanding;          /* its chunks not retired yet */
    size_t new_chunks;           /* its chunks this add stored or adopted */
    size_t cap;                  /* of e.extents */
    int read_done;
    char why[PQV_ERROR_REASON_MAX];
};

struct chunk_job {
    struct pool_job job;
    struct chunk_pipe *p;
    uint8_t *plain, *blob;
    size_t cap, len, blob_len;
    uint64_t file_off;
    uint8_t id[CHUNK_ID_BYTES];
    uint8_t flags;
    int fresh;                   /* not stored anywhere yet: sealed, to be put */
    const struct chunk_rec *adopted; /* in a pack an interrupted command left */
    struct pending *pf;
    uint32_t index;
};

struct chunk_pipe {
    struct adder *a;
    struct chunker *chunker;
    const struct chunk_index *known;   /* the chain's records (read only) */
    pthread_mutex_t mu;
    struct chunk_index claimed;  /* identities this add stored (under mu) */
    struct chunk_index adopted;  /* chunks of adoptable packs (read only) */
    struct adoptable *packs;
    size_t npacks;
    struct chunk_job jobs[JOBS_MAX];
    size_t next, oldest, inflight, bytes_in_flight;
    size_t buffers;              /* bytes of the jobs' buffers */
    size_t retired;              /* chunks retired, for TRIM_EVERY */
    struct pending *pend[PENDING_MAX];
    size_t phead, pn;
    uint8_t *rbuf;
};

/* ---- on the pool ---- */

static void
job_run(struct pool_job *pj)
{
    struct chunk_job *j = (struct chunk_job *)pj;
    struct chunk_pipe *p = j->p;
    struct chunk_rec claim;
    int rc;

    j->fresh = 0;
    j->adopted = NULL;
    if ((rc = chunk_id(p->a->v->chunk_id_key, j->plain, j->len, j->id)) != 0)
        goto out;
    if (chunks_find(p->known, j->id) != NULL)
        goto out; /* in the vault already */
    if ((j->adopted = chunks_find(&p->adopted, j->id)) != NULL)
        goto out;
    memset(&claim, 0, sizeof(claim));
    memcpy(claim.id, j->id, CHUNK_ID_BYTES);
    pthread_mutex_lock(&p->mu);
    if (chunks_find(&p->claimed, j->id) == NULL) {
        rc = chunks_put(&p->claimed, &claim);
        j->fresh = rc == 0;
    }
    pthread_mutex_unlock(&p->mu);
    if (rc == 0 && j->fresh)
        rc = chunk_seal(p->a->v->config.aead, p->a->v->chunk_data_key, j->id, j->plain, j->len,
            !p->a->opt->no_compress, j->blob, &j->blob_len, &j->flags);
out:
    util_wipe(j->plain, j->len);
    j->job.rc = rc;
}

/* ---- the pipeline, on the main thread ---- */

static void
pending_free(struct pending *pf)
{
    if (pf == NULL)
        return;
    entry_clear(&pf->e);
    free(pf);
}

/* finish(p, pf): the file of ${pf} is read and all its chunks stored: its
 * entry into the transaction, or its failure reported. */
static int
finish(struct chunk_pipe *p, struct pending *pf)
{
    struct adder *a = p->a;
    const struct pqv_add_options *opt = a->opt;
    struct add_file *f = pf->f;

    if (f == NULL)
        return 0; /* a stream's entry: taken by add_chunk_stream */
    if (pf->state == FILE_FAILED || (pf->state == FILE_CHANGED && pf->last_attempt)) {
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path, "not stored: %s",
            pf->why);
        a->plan->not_stored++;
        return 0;
    }
    if (pf->state != FILE_OK)
        return 0; /* read again: a later pending entry */
    /* Read again (force_read): the same chunks as stored, all of them in
     * the vault already, is no change (a chunk it had to store or adopt,
     * one whose record was lost, is: the entry is made again). */
    if (f->reread && pf->new_chunks == 0 && add_seal_reread(a, f, &pf->e))
        return 0;
    a->files++;
    a->bytes += add_seal_data_bytes(&pf->e);
    return add_seal_commit(a, f, &pf->e);
}

/* complete(p): the files at the head whose chunks have all retired. */
static int
complete(struct chunk_pipe *p)
{
    int rc = 0;

    while (p->pn > 0 && rc == 0) {
        struct pending *pf = p->pend[p->phead];
        if (!pf->read_done || pf->outstanding > 0)
            break;
        if (pf->f == NULL)
            break; /* a stream's: add_chunk_stream takes it */
        rc = finish(p, pf);
        pending_free(pf);
        p->pend[p->phead] = NULL;
        p->phead = (p->phead + 1) % PENDING_MAX;
        p->pn--;
    }
    return rc;
}

static size_t
buffers_of(size_t cap)
{
    return cap == 0 ? 0 : cap + chunk_blob_max(cap);
}

static void
job_buffers_free(struct chunk_pipe *p, struct chunk_job *j)
{
    p->buffers -= buffers_of(j->cap);
    free(j->plain);
    free(j->blob);
    j->plain = j->blob = NULL;
    j->cap = 0;
}

/* retire(p): the oldest chunk in flight into its pack and its file. */
static int
retire(struct chunk_pipe *p)
{
    struct adder *a = p->a;
    struct chunk_job *j = &p->jobs[p->oldest];
    struct pending *pf = j->pf;
    int rc = pool_wait(vault_pool(a->v), &j->job);

    p->oldest = (p->oldest + 1) % JOBS_MAX;
    p->inflight--;
#ifdef __GLIBC__
    if (++p->retired % TRIM_EVERY == 0)
        (void)malloc_trim(TRIM_KEEP);
#endif
    p->bytes_in_flight -= j->len;
    pf->outstanding--;
    int release = p->buffers > BUFFER_BUDGET && j->cap > (256u << 10);
    if (rc == 0 && j->fresh) {
        struct chunk_rec r;
        memset(&r, 0, sizeof(r));
        memcpy(r.id, j->id, CHUNK_ID_BYTES);
        r.stored_len = (uint32_t)j->blob_len;
        r.plain_len = (uint32_t)j->len;
        r.flags = j->flags;
        rc = txn_put_chunk(a->t, j->blob, &r);
        /* Its stored length, for add_chunk_unused (the pool may be
         * claiming others: under the lock). */
        pthread_mutex_lock(&p->mu);
        struct chunk_rec *c = chunks_get(&p->claimed, j->id);
        if (c != NULL)
            c->stored_len = r.stored_len;
        pthread_mutex_unlock(&p->mu);
        pf->new_chunks++;
    } else if (rc == 0 && j->adopted != NULL) {
        pf->new_chunks++;
        /* Its pack joins the segment's, once; the chunk is recorded. */
        for (size_t i = 0; i < p->npacks && rc == 0; i++)
            if (memcmp(p->packs[i].sp.id, j->adopted->pack_id, PACK_ID_BYTES) == 0 &&
                !p->packs[i].introduced) {
                rc = txn_introduce(a->t, &p->packs[i].sp, 0);
                p->packs[i].introduced = 1;
            }
        if (rc == 0)
            rc = txn_record_chunk(a->t, j->adopted);
    }
    if (rc != 0) {
        if (a->rc == 0)
            a->rc = rc;
        return rc;
    }
    struct extent *x = &pf->e.extents[j->index];
    memcpy(x->chunk_id, j->id, CHUNK_ID_BYTES);
    x->chunk = 1;
    if (release)
        job_buffers_free(p, j);
    return complete(p);
}

/* submit(p, pf, data, len, file_off): one chunk of ${pf}'s file on the
 * pool (waiting for older ones while the window is full). */
static int
submit(struct chunk_pipe *p, struct pending *pf, const uint8_t *data, size_t len, uint64_t file_off)
{
    struct adder *a = p->a;
    struct chunk_job *j;
    int rc;

    while (p->inflight == JOBS_MAX ||
        (p->inflight > 0 && p->bytes_in_flight + len > INFLIGHT_BYTES))
        if ((rc = retire(p)) != 0)
            return rc;
    j = &p->jobs[p->next];
    if (j->cap < len) {
        size_t cap = len < (64u << 10) ? (64u << 10) : len;
        job_buffers_free(p, j);
        if ((j->plain = malloc(cap)) == NULL || (j->blob = malloc(chunk_blob_max(cap))) == NULL)
            return PQV_E_NOMEM;
        j->cap = cap;
        p->buffers += buffers_of(cap);
    }
    if (pf->e.nextents == pf->cap) {
        /* (From one: most files are one chunk, and their entries, extents
         * and all, stay in the transaction until it commits.) */
        size_t cap = pf->cap ? 2 * pf->cap : 1;
        struct extent *grown = realloc(pf->e.extents, cap * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        pf->e.extents = grown;
        pf->cap = cap;
    }
    memset(&pf->e.extents[pf->e.nextents], 0, sizeof(struct extent));
    pf->e.extents[pf->e.nextents].file_off = file_off;
    pf->e.extents[pf->e.nextents].plain_len = (uint32_t)len;
    memcpy(j->plain, data, len);
    j->len = len;
    j->file_off = file_off;
    j->p = p;
    j->pf = pf;
    j->index = pf->e.nextents++;
    j->job.run = job_run;
    pf->outstanding++;
    pool_submit(vault_pool(a->v), &j->job);
    p->next = (p->next + 1) % JOBS_MAX;
    p->inflight++;
    p->bytes_in_flight += len;
    /* Progress: the data read (what the total counts), as it is read. */
    a->done_bytes += len;
    if (a->opt->progress != NULL)
        a->opt->progress(a->opt->progress_ctx, a->done_bytes, a->total_bytes);
    return 0;
}

/* push_pending(p, f): a new pending file (its entry empty), at the tail. */
static int
push_pending(struct chunk_pipe *p, struct add_file *f, struct pending **out)
{
    struct pending *pf;
    int rc;

    while (p->pn == PENDING_MAX) {
        if (p->inflight > 0)
            rc = retire(p);
        else
            rc = complete(p);
        if (rc != 0)
            return rc;
    }
    if ((pf = calloc(1, sizeof(*pf))) == NULL)
        return PQV_E_NOMEM;
    pf->f = f;
    p->pend[(p->phead + p->pn) % PENDING_MAX] = pf;
    p->pn++;
    *out = pf;
    return 0;
}

int
add_chunk_drain(struct adder *a)
{
    struct chunk_pipe *p = a->pipe;
    int rc = 0;

    if (p == NULL)
        return a->rc;
    while (p->inflight > 0 && rc == 0)
        rc = retire(p);
    if (rc == 0)
        rc = complete(p);
    return rc != 0 ? rc : a->rc;
}

/* Where a reader of a file or stream gets its next bytes. */
struct feed {
    struct source *src;          /* a file: read at offsets */
    int fd;                      /* a stream: read in order */
    const char *path;
};

/* fill(fd, buf, want, off, got): up to ${want} bytes. */
static int
fill(const struct feed *in, uint8_t *buf, size_t want, uint64_t off, size_t *got)
{
    ssize_t n;
    int rc;

    *got = 0;
    if (in->src != NULL) {
        if ((rc = source_read(in->src, off, buf, want, in->path)) != 0)
            return rc;
        *got = want;
        return 0;
    }
    if ((n = fsutil_read_all(in->fd, buf, want, in->path)) < 0)
        return (int)n;
    *got = (size_t)n;
    return 0;
}

/* cut_region(p, pf, in, off, len): the region [off, off + len) of the
 * input (len UINT64_MAX: a stream, to its end) cut into chunks and
 * submitted; the stream's length returned in pf->e.size.  The buffer holds
 * [start, have): it is topped up only when less than a largest chunk is
 * left (what is left moved to its front first), so that each byte is
 * moved at most once in a while rather than after every chunk; what it
 * held is wiped once, at the end. */
static int
cut_region(struct chunk_pipe *p, struct pending *pf, const struct feed *in, uint64_t off,
    uint64_t len)
{
    uint8_t *buf = p->rbuf;
    size_t start = 0, have = 0, used = 0;
    uint64_t read_to = off, pos = off;
    int eof = 0, rc = 0;

    for (;;) {
        if (!eof && have - start <= CHUNK_MAX) {
            uint64_t left = len == UINT64_MAX ? READ_BUF : off + len - read_to;
            size_t want, got;
            memmove(buf, buf + start, have - start);
            have -= start;
            start = 0;
            want = (size_t)(left < READ_BUF - have ? left : READ_BUF - have);
            if (want > 0) {
                if (have + want > used)
                    used = have + want;
                if ((rc = fill(in, buf + have, want, read_to, &got)) != 0)
                    break;
                have += got;
                read_to += got;
                if (len == UINT64_MAX ? got < want : read_to == off + len)
                    eof = 1;
            } else {
                eof = 1;
            }
        }
        if (have == start)
            break;
        size_t cut = have - start;
        if (cut > CHUNK_MIN || !eof) {
            if ((rc = chunker_next(p->chunker, buf + start, have - start, eof, &cut)) != 0)
                break;
            if (cut == 0)
                continue; /* more data decides */
        }
        if ((rc = submit(p, pf, buf + start, cut, pos)) != 0)
            break;
        start += cut;
        pos += cut;
    }
    util_wipe(buf, used);
    if (rc == 0 && len == UINT64_MAX)
        pf->e.size = pos - off;
    return rc;
}

/* read_regions(p, pf, src, f): every data region of the file cut. */
static int
read_regions(struct chunk_pipe *p, struct pending *pf, struct source *src, struct add_file *f)
{
    struct add_region *regions = NULL;
    struct feed in = { src, -1, f->path };
    size_t n = 0;
    int rc;

    if ((rc = add_seal_regions(src->fd, &src->st, &regions, &n)) != 0)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = cut_region(p, pf, &in, regions[i].off, regions[i].len);
    free(regions);
    return rc;
}

int
add_chunk_file(struct adder *a, struct add_file *f)
{
    struct chunk_pipe *p = a->pipe;
    const struct pqv_add_options *opt = a->opt;
    struct source src;
    int rc;

    for (int attempt = 1;; attempt++) {
        struct pending *pf;
        if ((rc = source_open(&src, &a->plan->dirs, f->rel, a->plan->follow,
                 f->path)) == 0 &&
            (rc = entry_check_size(f->path, (uint64_t)src.st.st_size)) != 0)
            source_close(&src);
        if (rc != 0) {
            if (rc == PQV_E_NOMEM)
                return rc;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path, "not stored: %s",
                pqv_error_last()->reason);
            a->plan->not_stored++;
            return 0;
        }
        if ((rc = push_pending(p, f, &pf)) != 0 ||
            (rc = fsmeta_fill_entry(&pf->e, f->name, f->kind, &src.st, f->target, f->hlgroup,
                 &a->names)) != 0 ||
            (rc = fsmeta_read_xattrs(src.fd, &pf->e, f->path, opt->report, opt->report_ctx)) != 0) {
            source_close(&src);
            return rc;
        }
        pf->e.chunked = 1;
        pf->e.key_state = KEY_NONE;
        pf->e.size = (uint64_t)src.st.st_size;
        rc = read_regions(p, pf, &src, f);
        if (rc == SOURCE_CHANGED) {
            pf->state = FILE_CHANGED;
            rc = 0;
        } else if (rc != 0 && rc != PQV_E_NOMEM && a->rc == 0) {
            /* The file's problem (an I/O error reading it), not the add's. */
            pf->state = FILE_FAILED;
            snprintf(pf->why, sizeof(pf->why), "%s", pqv_error_last()->reason);
            rc = 0;
        }
        if (rc == 0 && pf->state == FILE_OK && f->rel != NULL) {
            int u = source_unchanged(&src, &a->plan->dirs, f->rel, a->plan->follow,
                f->path);
            if (u == SOURCE_CHANGED)
                pf->state = FILE_CHANGED;
            else if (u != 0) {
                pf->state = FILE_FAILED;
                snprintf(pf->why, sizeof(pf->why), "%s", pqv_error_last()->reason);
            }
        }
        source_close(&src);
        pf->read_done = 1;
        if (rc != 0)
            return rc;
        if (pf->state == FILE_CHANGED) {
            /* What was read is stored (its chunks are sound); the entry is
             * not: the file is read again. */
            pf->last_attempt = attempt == READ_ATTEMPTS;
            if (pf->last_attempt)
                snprintf(pf->why, sizeof(pf->why), "it changed while it was being read, %d "
                    "times", attempt);
            else
                vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, f->path,
                    "changed while it was being read: reading it again");
        }
        /* complete() frees ${pf} once its chunks have retired (at once for
         * a file without data). */
        int again = pf->state == FILE_CHANGED && attempt < READ_ATTEMPTS;
        if ((rc = complete(p)) != 0)
            return rc;
        if (!again)
            return a->rc;
    }
}

int
add_chunk_stream(struct adder *a, int fd, const struct add_file *f)
{
    struct chunk_pipe *p = a->pipe;
    struct feed in = { NULL, fd, f->path };
    struct pending *pf;
    int rc;

    if ((rc = add_chunk_drain(a)) != 0 || (rc = push_pending(p, NULL, &pf)) != 0)
        return rc;
    if ((rc = fsmeta_fill_entry(&pf->e, f->name, KIND_FILE, &f->st, NULL, 0, &a->names)) == 0) {
        pf->e.chunked = 1;
        pf->e.key_state = KEY_NONE;
        rc = cut_region(p, pf, &in, 0, UINT64_MAX);
    }
    pf->read_done = 1;
    if (rc == 0)
        rc = add_chunk_drain(a);
    /* It is the only one pending now: its entry goes to a->cur. */
    if (rc == 0) {
        entry_clear(&a->cur);
        a->cur = pf->e;
        memset(&pf->e, 0, sizeof(pf->e));
        a->files++;
        a->bytes += a->cur.size;
    }
    p->pend[p->phead] = NULL;
    p->phead = (p->phead + 1) % PENDING_MAX;
    p->pn--;
    pending_free(pf);
    return rc;
}

/* mark_used(claimed, e, n, used): the chunks of this add that ${e}'s
 * entries refer to, their stored bytes added to *${used} once each. */
static void
mark_used(struct chunk_index *claimed, struct entry *const *e, size_t n, uint64_t *used)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; e[i]->chunked && j < e[i]->nextents; j++) {
            struct chunk_rec *c;
            if (!e[i]->extents[j].chunk ||
                (c = chunks_get(claimed, e[i]->extents[j].chunk_id)) == NULL)
                continue;
            *used += c->stored_len;
            c->stored_len = 0; /* counted */
        }
}

uint64_t
add_chunk_unused(struct adder *a)
{
    struct chunk_pipe *p = a->pipe;
    uint64_t written = 0, used = 0;

    if (p == NULL)
        return 0;
    /* (Empty slots hold zeros.) */
    for (size_t i = 0; i < p->claimed.cap; i++)
        written += p->claimed.slots[i].stored_len;
    mark_used(&p->claimed, a->kept, a->nkept, &used);
    mark_used(&p->claimed, a->t->entries, a->t->n, &used);
    return written - used;
}

/* ---- set-up ---- */

int
add_chunk_init(struct adder *a, struct state *st)
{
    struct chunk_pipe *p;
    int rc;

    if ((p = calloc(1, sizeof(*p))) == NULL)
        return PQV_E_NOMEM;
    a->pipe = p;
    p->a = a;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        a->pipe = NULL;
        return PQV_E_NOMEM;
    }
    if ((p->rbuf = malloc(READ_BUF)) == NULL)
        return PQV_E_NOMEM;
    if ((rc = chunks_of_state(a->v, st, NULL)) != 0 ||
        (rc = chunker_new(&p->chunker, a->v->chunker_key)) != 0)
        return rc;
    p->known = &st->chunks;
    return add_adopt(a->v, st, p->known, &p->adopted, &p->packs, &p->npacks);
}

void
add_chunk_free(struct adder *a)
{
    struct chunk_pipe *p = a->pipe;

    if (p == NULL)
        return;
    (void)add_chunk_drain(a);
    for (size_t i = 0; i < JOBS_MAX; i++)
        job_buffers_free(p, &p->jobs[i]);
    for (size_t i = 0; i < p->pn; i++)
        pending_free(p->pend[(p->phead + i) % PENDING_MAX]);
    chunks_free(&p->claimed);
    chunks_free(&p->adopted);
    free(p->packs);
    chunker_free(p->chunker);
    if (p->rbuf != NULL) {
        util_wipe(p->rbuf, READ_BUF);
        free(p->rbuf);
    }
    pthread_mutex_destroy(&p->mu);
    free(p);
    a->pipe = NULL;
}
