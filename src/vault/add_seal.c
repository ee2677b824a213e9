/*
 * add_seal.c: the files of an add read, sealed and appended to packs.
 * Each file is read through one descriptor (source.c): what is stored is
 * one state of the file, never a mix; a file that changes while it is read
 * is read again, up to READ_ATTEMPTS times, then refused (reported and
 * skipped).  Its data regions (the holes are not stored) are cut into
 * extents, zstd-compressed when it pays and sealed on the worker pool a
 * bounded window ahead, and appended in order to the transaction's packs.
 * A file of one extent whose content equals a stored file's shares that
 * file's key and data.  A large add also commits at checkpoints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto/kdf.h"
#include "util/fsutil.h"
#include "util/util.h"
#include "vault/add_internal.h"
#include "vault/pack.h"
#include "vault/source.h"
#include "vault/vault_internal.h"


static size_t
dedup_home(const struct dedup *d, const uint8_t content[32])
{
    uint64_t h;

    memcpy(&h, content, sizeof(h)); /* a keyed hash: uniform */
    return (size_t)(h & (d->cap - 1));
}

static int
dedup_add(struct dedup *d, const struct entry *e)
{
    if (e->kind != KIND_FILE || !e->has_content || e->nextents != 1)
        return 0;
    if (2 * (d->n + 1) > d->cap) {
        struct dedup bigger = { NULL, d->cap ? 2 * d->cap : 256, 0 };
        if ((bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots))) == NULL)
            return PQV_E_NOMEM;
        for (size_t i = 0; i < d->cap; i++)
            if (d->slots[i] != NULL) {
                size_t k = dedup_home(&bigger, d->slots[i]->content);
                while (bigger.slots[k] != NULL)
                    k = (k + 1) & (bigger.cap - 1);
                bigger.slots[k] = d->slots[i];
                bigger.n++;
            }
        free(d->slots);
        *d = bigger;
    }
    size_t k = dedup_home(d, e->content);
    while (d->slots[k] != NULL) {
        if (memcmp(d->slots[k]->content, e->content, 32) == 0)
            return 0; /* the first one stays */
        k = (k + 1) & (d->cap - 1);
    }
    d->slots[k] = e;
    d->n++;
    return 0;
}

static const struct entry *
dedup_find(const struct dedup *d, const uint8_t content[32])
{
    if (d->cap == 0)
        return NULL;
    for (size_t k = dedup_home(d, content); d->slots[k] != NULL; k = (k + 1) & (d->cap - 1))
        if (util_ct_equal(d->slots[k]->content, content, 32))
            return d->slots[k];
    return NULL;
}

/* A unit of work on the pool: one extent. */
struct add_job {
    struct pool_job job;
    pqv_vault *v;
    const uint8_t *file_key;
    struct source *src;          /* NULL: the plaintext is in ${plain} already */
    struct extent x;
    uint32_t index;
    int suite, compress;
    uint8_t *plain, *sealed, *scratch;
    int read_rc;                 /* reading the source failed (or SOURCE_CHANGED) */
    struct error_saved read_error;
    const char *path;
    int hash;                    /* the whole file: its content hash wanted */
    uint8_t content[32];
};

static void
job_run(struct pool_job *pj)
{
    struct add_job *job = (struct add_job *)pj;
    int rc = 0;

    job->read_rc = 0;
    if (job->src != NULL) {
        job->read_rc = source_read(job->src, job->x.file_off, job->plain, job->x.plain_len,
            job->path);
        if (job->read_rc != 0) {
            error_save(&job->read_error);
            goto out; /* the file's problem, not the add's */
        }
    }
    if (job->hash && (rc = kdf_hmac_sha256(job->content, job->v->dedup_key,
                          sizeof(job->v->dedup_key), job->plain, job->x.plain_len)) != 0)
        goto out;
    rc = pack_seal_extent(job->suite, job->file_key, job->index, &job->x, job->plain,
        job->compress, job->scratch, job->sealed);
out:
    util_wipe(job->plain, job->x.plain_len);
    job->job.rc = rc;
}

int
add_seal_init(struct adder *a, pqv_vault *v, struct txn *t, struct state *st,
    const struct pqv_add_options *opt)
{
    struct pool *pool = vault_pool(v);
    int rc = 0;

    memset(a, 0, sizeof(*a));
    a->v = v;
    a->t = t;
    a->opt = opt;
    if (pool == NULL)
        return PQV_E_NOMEM;
    a->size = pool_threads(pool) + WINDOW_EXTRA;
    if ((a->jobs = calloc(a->size, sizeof(*a->jobs))) == NULL)
        return PQV_E_NOMEM;
    /* Format 3: chunks (add_chunk.c); before, whole files of one extent
     * found by their content hash. */
    if (v->config.version >= 3 && v->sink->chunks)
        return add_chunk_init(a, st);
    for (size_t i = 0; i < st->n && rc == 0; i++)
        rc = dedup_add(&a->dedup, &st->entries[i]);
    return rc;
}

void
add_seal_free(struct adder *a)
{
    add_chunk_free(a);
    for (size_t i = 0; a->jobs != NULL && i < a->size; i++) {
        if (a->jobs[i].scratch != NULL)
            util_wipe(a->jobs[i].scratch, pack_scratch_size());
        free(a->jobs[i].plain);
        free(a->jobs[i].sealed);
        free(a->jobs[i].scratch);
    }
    free(a->jobs);
    free(a->dedup.slots);
    for (size_t i = 0; i < a->nkept; i++) {
        entry_clear(a->kept[i]);
        free(a->kept[i]);
    }
    free(a->kept);
    fsmeta_names_free(&a->names);
    entry_clear(&a->cur);
}

/* retire(a): wait for the oldest extent; append it to its pack and to the
 * file's entry (in order). */
static void
retire(struct adder *a)
{
    struct add_job *job = &a->jobs[a->oldest];
    int rc = pool_wait(vault_pool(a->v), &job->job);

    a->oldest = (a->oldest + 1) % a->size;
    a->inflight--;
    if (rc != 0 && a->rc == 0)
        a->rc = rc;
    if (a->rc != 0 || a->cur_state != FILE_OK)
        return;
    if (job->read_rc != 0) {
        if (job->read_rc == SOURCE_CHANGED) {
            a->cur_state = FILE_CHANGED;
        } else {
            error_restore(&job->read_error);
            a->cur_state = FILE_FAILED;
        }
        return;
    }
    if (job->hash) {
        memcpy(a->cur.content, job->content, sizeof(a->cur.content));
        a->cur.has_content = 1;
        if ((a->cur_same = dedup_find(&a->dedup, job->content)) != NULL) {
            /* Stored already: its data is shared, this copy dropped. */
            a->done_bytes += job->x.plain_len;
            return;
        }
    }
    if ((rc = txn_put_extent(a->t, job->sealed, &job->x)) != 0) {
        a->rc = rc;
        return;
    }
    a->cur_put += job->x.stored_len;
    a->cur.extents[job->index] = job->x;
    a->done_bytes += job->x.plain_len;
    if (a->opt->progress != NULL)
        a->opt->progress(a->opt->progress_ctx, a->done_bytes, a->total_bytes);
}

static void
drain(struct adder *a)
{
    while (a->inflight > 0)
        retire(a);
}

/* slot(a): a free job with buffers (waiting for the oldest if needed). */
static struct add_job *
slot(struct adder *a)
{
    struct add_job *job;

    if (a->inflight == a->size)
        retire(a);
    job = &a->jobs[a->next];
    if (job->plain == NULL && ((job->plain = malloc(PQV_OBJECT_MAX_PLAIN)) == NULL ||
            (job->sealed = malloc(pack_sealed_max())) == NULL ||
            (job->scratch = malloc(pack_scratch_size())) == NULL))
        return NULL;
    return job;
}

static void
submit(struct adder *a, struct add_job *job)
{
    pool_submit(vault_pool(a->v), &job->job);
    a->next = (a->next + 1) % a->size;
    a->inflight++;
}

int
add_seal_regions(int fd, const struct stat *st, struct add_region **out, size_t *n)
{
    uint64_t size = (uint64_t)st->st_size;
    struct add_region *r = NULL;
    size_t k = 0, cap = 0;
    off_t pos = 0;

    *out = NULL;
    *n = 0;
    if (size == 0)
        return 0;
    /* Dense (the common case): fewer blocks than the size never happens. */
    if ((uint64_t)st->st_blocks * 512 >= size) {
        if ((r = malloc(sizeof(*r))) == NULL)
            return PQV_E_NOMEM;
        r[0].off = 0;
        r[0].len = size;
        *out = r;
        *n = 1;
        return 0;
    }
    while ((uint64_t)pos < size) {
        off_t data = lseek(fd, pos, SEEK_DATA), hole;
        if (data < 0)
            break; /* ENXIO: no data after pos (or no SEEK_DATA: treated alike) */
        if ((hole = lseek(fd, data, SEEK_HOLE)) < 0)
            hole = (off_t)size;
        if ((uint64_t)hole > size)
            hole = (off_t)size;
        if (k == cap) {
            cap = cap ? 2 * cap : 8;
            struct add_region *g = realloc(r, cap * sizeof(*r));
            if (g == NULL) {
                free(r);
                return PQV_E_NOMEM;
            }
            r = g;
        }
        r[k].off = (uint64_t)data;
        r[k].len = (uint64_t)(hole - data);
        k++;
        pos = hole;
    }
    *out = r;
    *n = k;
    return 0;
}

/* read_file(a, f, src): the extents of ${f} from ${src} into the entry
 * a->cur (its key and extents); a->cur_state says how it went. */
static int
read_file(struct adder *a, struct add_file *f, struct source *src)
{
    struct add_region *regions = NULL;
    size_t nregions = 0;
    uint32_t nextents = 0, index = 0;
    int rc;

    a->cur_state = FILE_OK;
    a->cur_same = NULL;
    a->cur_put = 0;
    a->cur.has_content = 0;
    a->cur.suite = a->v->config.aead;
    a->cur.size = (uint64_t)src->st.st_size;
    if ((rc = txn_new_file_key(a->t, a->cur.key)) != 0)
        return rc;
    a->cur.key_state = KEY_CLEAR;
    if ((rc = add_seal_regions(src->fd, &src->st, &regions, &nregions)) != 0)
        return rc;
    for (size_t i = 0; i < nregions; i++)
        nextents += (uint32_t)((regions[i].len + PQV_OBJECT_MAX_PLAIN - 1) / PQV_OBJECT_MAX_PLAIN);
    free(a->cur.extents);
    a->cur.extents = NULL;
    a->cur.nextents = nextents;
    if (nextents > 0 && (a->cur.extents = calloc(nextents, sizeof(*a->cur.extents))) == NULL) {
        free(regions);
        return PQV_E_NOMEM;
    }
    for (size_t i = 0; i < nregions && a->rc == 0 && a->cur_state == FILE_OK; i++) {
        for (uint64_t off = 0; off < regions[i].len && a->rc == 0 && a->cur_state == FILE_OK;) {
            struct add_job *job = slot(a);
            uint64_t left = regions[i].len - off;
            if (job == NULL) {
                a->rc = PQV_E_NOMEM;
                break;
            }
            memset(&job->x, 0, sizeof(job->x));
            job->v = a->v;
            job->file_key = a->cur.key;
            job->src = src;
            job->path = f->path;
            job->x.file_off = regions[i].off + off;
            job->x.plain_len = left > PQV_OBJECT_MAX_PLAIN ? PQV_OBJECT_MAX_PLAIN : (uint32_t)left;
            job->index = index++;
            job->suite = a->cur.suite;
            job->compress = !a->opt->no_compress;
            /* (A write-only writer has no content-hash key: no dedup.) */
            job->hash = a->v->sink->content_hashes && nregions == 1 && regions[0].off == 0 &&
                job->x.plain_len == a->cur.size;
            job->job.run = job_run;
            submit(a, job);
            off += job->x.plain_len;
        }
    }
    /* All of this file's extents (they hold its key and source). */
    drain(a);
    free(regions);
    if (a->rc != 0)
        return a->rc;
    if (a->cur_state == FILE_OK && a->cur_same != NULL) {
        /* The key and extent of the equal file. */
        const struct entry *same = a->cur_same;
        if (same->key_state == KEY_CLEAR)
            memcpy(a->cur.key, same->key, PQV_FILE_KEY_BYTES);
        else if ((rc = state_file_key(a->v, a->t->st, same, a->cur.key)) != 0)
            return rc;
        a->cur.suite = same->suite;
        a->cur.extents[0] = same->extents[0];
    }
    if (a->cur_state == FILE_OK && f->rel != NULL) {
        rc = source_unchanged(src, &a->plan->dirs, f->rel, a->plan->follow,
            f->path);
        if (rc == SOURCE_CHANGED)
            a->cur_state = FILE_CHANGED;
        else if (rc != 0)
            a->cur_state = FILE_FAILED;
    }
    return 0;
}

/* add_seal_file(a, f): ${f} as an entry of the transaction (reported and skipped
 * if it cannot be read consistently). */
int
add_seal_file(struct adder *a, struct add_file *f)
{
    const struct pqv_add_options *opt = a->opt;
    struct source src;
    int rc, attempt;

    if (f->kind == KIND_FILE && a->pipe != NULL)
        return add_chunk_file(a, f);
    if (f->kind != KIND_FILE) {
        struct stat st = f->st;
        int fd = -1;
        if ((rc = fsmeta_fill_entry(&a->cur, f->name, f->kind, &st, f->target, f->hlgroup,
                 &a->names)) != 0)
            return rc;
        if (f->kind == KIND_DIR && f->rel != NULL &&
            fsutil_open_dirs(a->plan->rootfd, a->plan->root, f->rel, FSUTIL_NOCREATE, 0, &fd) == 0) {
            rc = fsmeta_read_xattrs(fd, &a->cur, f->path, opt->report, opt->report_ctx);
            close(fd);
            if (rc != 0)
                return rc;
        }
        /* A FIFO or device node: its attributes through an O_PATH
         * descriptor (never opened: a device acts on open). */
        if ((f->kind == KIND_FIFO || KIND_IS_DEVICE(f->kind)) && f->rel != NULL &&
            source_open_node(&a->plan->dirs, f->rel, f->path, &f->st, &fd) == 0) {
            rc = fsmeta_read_xattrs(fd, &a->cur, f->path, opt->report, opt->report_ctx);
            close(fd);
            if (rc != 0)
                return rc;
        }
        goto commit;
    }
    for (attempt = 1;; attempt++) {
        if ((rc = source_open(&src, &a->plan->dirs, f->rel, a->plan->follow,
                 f->path)) == 0 &&
            (rc = entry_check_size(f->path, (uint64_t)src.st.st_size)) != 0)
            source_close(&src); /* larger than a vault stores: not stored */
        if (rc != 0) {
            if (rc == PQV_E_NOMEM)
                return rc;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path, "not stored: %s",
                pqv_error_last()->reason);
            a->plan->not_stored++;
            return 0;
        }
        entry_clear(&a->cur);
        if ((rc = fsmeta_fill_entry(&a->cur, f->name, f->kind, &src.st, f->target,
                 f->hlgroup, &a->names)) != 0 ||
            (rc = fsmeta_read_xattrs(src.fd, &a->cur, f->path, opt->report,
                 opt->report_ctx)) != 0 ||
            (rc = read_file(a, f, &src)) != 0) {
            source_close(&src);
            return rc;
        }
        source_close(&src);
        if (a->cur_state == FILE_OK)
            break;
        /* What this read put in packs no entry will use. */
        a->unused_bytes += a->cur_put;
        if (a->cur_state == FILE_FAILED) {
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path, "not stored: %s",
                pqv_error_last()->reason);
            a->plan->not_stored++;
            return 0;
        }
        /* Changed while read: its extents already in packs are garbage
         * (gc); read it again with a new key. */
        if (attempt == READ_ATTEMPTS) {
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path,
                "not stored: it changed while it was being read, %d times", attempt);
            a->plan->not_stored++;
            return 0;
        }
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, f->path,
            "changed while it was being read: reading it again");
    }
    if (f->reread && add_seal_reread(a, f, &a->cur))
        return 0;
    a->files++;
    a->bytes += add_seal_data_bytes(&a->cur);
commit:
    return add_seal_commit(a, f, &a->cur);
}

int
add_seal_same_content(const struct entry *old, const struct entry *e)
{
    return entry_same_data(old, e);
}

uint64_t
add_seal_data_bytes(const struct entry *e)
{
    uint64_t n = 0;

    for (uint32_t j = 0; j < e->nextents; j++)
        n += e->extents[j].plain_len;
    return n;
}

int
add_seal_reread(struct adder *a, const struct add_file *f, const struct entry *e)
{
    const struct entry *old = state_find(a->t->st, f->name);

    if (old == NULL || !add_seal_same_content(old, e))
        return 0;
    a->bytes += add_seal_data_bytes(e);
    a->res->unchanged++;
    vault_report(a->opt->report, a->opt->report_ctx, PQV_REPORT_INFO, f->name,
        "unchanged (read again)");
    return 1;
}

int
add_seal_commit(struct adder *a, struct add_file *f, struct entry *e)
{
    const struct pqv_add_options *opt = a->opt;
    int rc;

    if (f == &a->plan->files[0] && a->plan->origin != NULL &&
        (e->origin = strdup(a->plan->origin)) == NULL)
        return PQV_E_NOMEM;
    vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, f->name,
        f->replacing ? "changed" : "added");
    if ((rc = txn_add(a->t, e)) != 0)
        return rc;
    add_seal_counted(a, f, f->kind == KIND_FILE);
    return dedup_add(&a->dedup, a->t->entries[a->t->n - 1]);
}

void
add_seal_counted(struct adder *a, const struct add_file *f, int read)
{
    if (f->replacing)
        a->res->changed++;
    else
        a->res->added++;
    a->since_checkpoint_entries++;
    if (read)
        a->since_checkpoint_bytes += f->st.st_size > 0 ? (uint64_t)f->st.st_size : 0;
}

/* add_seal_link(a, f, first): ${f} shares the entry of ${first} (read before
 * it in name order: the first name of its group). */
int
add_seal_link(struct adder *a, struct add_file *f, const struct entry *first)
{
    struct entry e;
    int rc;

    if ((rc = entry_copy(&e, first)) != 0)
        return rc;
    free(e.name);
    free(e.origin);
    e.origin = NULL;
    if ((e.name = strdup(f->name)) == NULL) {
        entry_clear(&e);
        return PQV_E_NOMEM;
    }
    vault_report(a->opt->report, a->opt->report_ctx, PQV_REPORT_INFO, f->name,
        f->replacing ? "changed (hard link)" : "added (hard link)");
    if ((rc = txn_add(a->t, &e)) != 0)
        return rc;
    add_seal_counted(a, f, 0);
    return 0;
}

/* An add commits at its end, and a large one also at checkpoints, so that
 * an interrupted add keeps most of its work: run again, it finds what was
 * checkpointed unchanged and continues. */
#define CHECKPOINT_BYTES (512ull << 20)
#define CHECKPOINT_ENTRIES 20000

/* checkpoint_entries(): CHECKPOINT_ENTRIES; the test build takes another
 * from PQVAULT_TEST_CHECKPOINT_ENTRIES (kill tests of small adds). */
static uint64_t
checkpoint_entries(void)
{
#ifdef PQV_TEST_HOOKS
    const char *e = getenv("PQVAULT_TEST_CHECKPOINT_ENTRIES");
    if (e != NULL && atoi(e) > 0)
        return (uint64_t)atoi(e);
#endif
    return CHECKPOINT_ENTRIES;
}

/* add_seal_checkpoint(a, st): commit the entries so far as an epoch and begin the
 * next transaction on it.  The committed entries stay in memory (later
 * hard links and equal files refer to them). */
int
add_seal_checkpoint(struct adder *a, struct state *st)
{
    struct txn *t = a->t;
    int rc;

    if ((rc = add_chunk_drain(a)) != 0)
        return rc;
    if (t->n == 0)
        return 0;
    if ((rc = txn_commit(t, SEGMENT_DELTA, NULL, 0, NULL, 0)) != 0)
        return rc;
    for (size_t i = 0; i < t->nintroduced; i++)
        if (t->created[i]) /* (an adopted pack was written before) */
            a->new_bytes += t->introduced[i].size;
    /* Keep the entries; the state goes on from the new epoch. */
    struct entry **grown = realloc(a->kept, (a->nkept + t->n) * sizeof(*grown));
    if (grown == NULL)
        return PQV_E_NOMEM;
    a->kept = grown;
    memcpy(a->kept + a->nkept, t->entries, t->n * sizeof(*grown));
    a->nkept += t->n;
    t->n = 0;
    st->epoch = t->committed_epoch;
    memcpy(st->chain, t->committed_chain, 32);
    txn_free(t);
    a->since_checkpoint_bytes = 0;
    a->since_checkpoint_entries = 0;
    return txn_begin(a->v, st, t);
}

int
add_seal_checkpoint_due(const struct adder *a)
{
    return a->since_checkpoint_bytes >= CHECKPOINT_BYTES ||
        a->since_checkpoint_entries >= checkpoint_entries();
}

/* add_seal_first_of_group(a, group): the entry already made for a hard-link group. */
const struct entry *
add_seal_first_of_group(struct adder *a, uint64_t group)
{
    /* (Chunked files are made as their chunks retire: all of them first.) */
    if (a->pipe != NULL && add_chunk_drain(a) != 0)
        return NULL;
    for (size_t k = 0; k < a->t->n; k++)
        if (a->t->entries[k]->hlgroup == group)
            return a->t->entries[k];
    for (size_t k = 0; k < a->nkept; k++)
        if (a->kept[k]->hlgroup == group)
            return a->kept[k];
    return NULL;
}

int
add_seal_stream(struct adder *a, int fd, const struct add_file *f)
{
    size_t cap = 0;
    int rc, eof = 0;

    if (a->pipe != NULL)
        return add_chunk_stream(a, fd, f);
    if ((rc = fsmeta_fill_entry(&a->cur, f->name, KIND_FILE, &f->st, NULL, 0, &a->names)) != 0 ||
        (rc = txn_new_file_key(a->t, a->cur.key)) != 0)
        return rc;
    a->cur.key_state = KEY_CLEAR;
    a->cur.suite = a->v->config.aead;
    while (!eof && a->rc == 0) {
        struct add_job *job = slot(a);
        ssize_t got;
        if (job == NULL) {
            a->rc = PQV_E_NOMEM;
            break;
        }
        /* Room for the next extent first: once plaintext is read, nothing
         * may fail before it goes to the job that wipes it. */
        if (a->cur.nextents == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            /* Jobs in flight are retired into cur.extents: finish them
             * before realloc may move the array. */
            drain(a);
            void *p = realloc(a->cur.extents, ncap * sizeof(*a->cur.extents));
            if (p == NULL) {
                a->rc = PQV_E_NOMEM;
                break;
            }
            a->cur.extents = p;
            cap = ncap;
        }
        if ((got = fsutil_read_all(fd, job->plain, PQV_OBJECT_MAX_PLAIN, f->path)) < 0) {
            a->rc = (int)got;
            util_wipe(job->plain, PQV_OBJECT_MAX_PLAIN); /* whatever was read */
            break;
        }
        eof = (size_t)got < PQV_OBJECT_MAX_PLAIN;
        if (got == 0)
            break;
        memset(&job->x, 0, sizeof(job->x));
        job->v = a->v;
        job->file_key = a->cur.key;
        job->src = NULL;
        job->path = f->path;
        job->x.file_off = a->cur.size;
        job->x.plain_len = (uint32_t)got;
        job->index = a->cur.nextents++;
        job->suite = a->cur.suite;
        job->compress = !a->opt->no_compress;
        job->hash = 0;
        job->job.run = job_run;
        a->cur.size += (uint64_t)got;
        submit(a, job);
    }
    drain(a);
    if (a->rc != 0)
        return a->rc;
    a->files++;
    a->bytes += a->cur.size;
    return 0;
}
