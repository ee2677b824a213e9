/*
 * vault/get_internal.h: the stages of get, shared by get*.c only:
 *   get_stream.c   a file's extents read and opened on the worker pool, a
 *                  bounded window ahead, to a file (at offsets, holes left)
 *                  or a stream (in order, holes as zeros), tolerating a
 *                  writer that replaces the file meanwhile
 *   get_batch.c    a restore's files in batches: written and verified
 *                  (small ones on the pool), synced together while the
 *                  next batch is written, named in order
 *   get_restore.c  restoring entries into a destination: each kind, links,
 *                  hard links, directories' attributes deepest first
 *   get.c          the name looked up (a damaged block tolerated for a
 *                  tree), a single file or a tree -> the result
 * Metadata (owner, mode, times, attributes) is set through fsmeta.c.
 */
#ifndef PQV_VAULT_GET_INTERNAL_H
#define PQV_VAULT_GET_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "util/error.h"
#include "util/pool.h"
#include "vault/dest.h"
#include "vault/entry.h"
#include "vault/state.h"

/* A batch: files written and verified, synced together, then named. */
#define RESTORE_BATCH_FILES 256     /* at most: each holds two descriptors */
#define RESTORE_BATCH_BYTES (64u << 20)

/* ---- get_stream.c ---- */

struct get_job;

/* Where plaintext goes: a file of ours (written at offsets), or a stream
 * (standard output, a FIFO, a device: written in order, holes as zeros). */
struct get_out {
    int fd;
    const char *name;
    int seekable;
    int writeback;           /* start the write-back of each extent at once */
    uint64_t done, total;
    const struct pqv_get_options *opt;
    struct get_job *jobs;    /* reused from file to file (sink_free) */
    size_t window;
};

/* get_stream_out_free(out): the extent buffers, wiped where they were used. */
void get_stream_out_free(struct get_out *out);
/*
 * get_stream_current(v, st, e, out, fresh, fresh_state): the plaintext of
 * ${e}, every extent verified, to ${out}, tolerating writers.  Readers take
 * no lock: a writer may replace or remove the file, and gc may repack or
 * delete its data, while we read.  If data is missing, the state is read
 * again (into ${fresh_state}): the file is gone (PQV_E_NOTFOUND), or
 * changed (we start again from its new entry, left in ${fresh} for the
 * caller), or the same (the data is really missing: PQV_E_INTEGRITY).  A
 * retry rewinds what this call wrote: ${out}->done back to where it began
 * (a restore's progress counts every file before), and ${out}->fd, which
 * is this file's own (a restore opens one per file, -o - a sink per file),
 * truncated; a stream allows it only if nothing of this file was written.
 */
int get_stream_current(pqv_vault *v, struct state *st, const struct entry *e,
    struct get_out *out, struct entry *fresh, struct state *fresh_state);

/* A worker's buffers for get_stream_inline: grown as a file needs them,
 * reused from file to file, wiped after each. */
struct get_bufs {
    uint8_t *plain, *sealed, *scratch;
    size_t plain_cap, sealed_cap, scratch_cap;
    struct get_bufs *next;       /* (a restore's list of idle ones) */
};

/*
 * get_stream_inline(v, e, file_key, out, b): the plaintext of ${e} to
 * ${out} (a file of ours: written at offsets, holes left), its extents
 * read and opened one after another on the calling thread, which may be a
 * worker of the pool (it never waits on the pool).  ${file_key}: what
 * state_file_key gave (asked on the thread that owns the state).
 * PQV_E_NOTFOUND: data missing (a writer or gc raced: the caller retries
 * with get_stream_current, which reads the catalogue again).
 */
int get_stream_inline(pqv_vault *v, const struct entry *e, const uint8_t *file_key,
    struct get_out *out, struct get_bufs *b);
/* get_stream_bufs_free(b): the buffers freed (they were wiped after use). */
void get_stream_bufs_free(struct get_bufs *b);

/* ---- get_restore.c ---- */

/* A small file (at most RESTORE_ASYNC_MAX bytes, no extended attributes)
 * of a tree is written on the worker pool: its temporary made, its data
 * opened and written, its attributes set, while this thread walks on;
 * a batch's files then go through flush together, in order. */
#define RESTORE_ASYNC_MAX (4u << 20)

struct pending {
    struct dest_file f;
    const struct entry *e;
    size_t idx;                  /* its index in the state (RESTORE_NO_ENTRY: none) */
    struct entry fresh;          /* if it changed while read */
    int done;                    /* nothing to name: only to report (in order) */
    /* Written on the pool (async): the job, what it needs, its outcome. */
    int async;
    struct pool_job job;
    struct restore *r;
    uint8_t file_key[PQV_FILE_KEY_BYTES];
    int rc;                      /* the job's failure (its error in job.error):
                                    reported at flush, in order */
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
    struct get_out progress;
    struct pending *batch;       /* the batch being written: RESTORE_BATCH_FILES slots */
    struct pending *syncing;     /* the one before, being synced on the pool */
    struct pending *batches;     /* both, one allocation (made at first use) */
    size_t nsyncing;
    struct pool_job sync_job;    /* syncing's sync */
    unsigned char synced[RESTORE_BATCH_FILES];  /* syncing[i] covered by a syncfs */
    size_t nbatch, batch_max;    /* batch_max: what the descriptor limit allows */
    uint64_t batch_bytes;
    struct hardlink *links;
    size_t nlinks;
    struct { char *rel; char *display; uint64_t group; size_t idx; } *later;  /* hard links
                                                                       to make */
    size_t nlater;
    uint64_t failed;
    int worst;
    int single;                  /* one file: its failure is the call's, not reported */
    struct error_saved first;
    struct pqv_get_result res;
    size_t cur;                  /* the entry being restored (RESTORE_NO_ENTRY: none) */
    /* failed_cb(ctx, idx, rc): entry ${idx} of the state was reported as not
     * restored (several operands: each is told its own); NULL: not wanted */
    void (*failed_cb)(void *ctx, size_t idx, int rc);
    void *failed_ctx;
    /* The async files' buffers: idle ones, taken and given back by the
     * workers under bufs_mu (made at the first async file). */
    int bufs_ready;
    pthread_mutex_t bufs_mu;
    struct get_bufs *bufs;
};

/* restore.cur and pending.idx when no entry of the state is meant. */
#define RESTORE_NO_ENTRY ((size_t)-1)

/* ---- get_batch.c ---- */

/* get_batch_next(r): the batch's next slot (both batches made at first
 * use), or NULL. */
struct pending *get_batch_next(struct restore *r);
/* get_batch_file(r, e, rel, display, allow_device): write ${e} into a
 * temporary at ${rel}, verified, with its attributes (on the pool when
 * small), queued in the batch; a full batch is flushed. */
int get_batch_file(struct restore *r, const struct entry *e, const char *rel,
    const char *display, int allow_device);
/* get_batch_flush(r, all): the batch's files written, then synced on the
 * pool while the next batch is written, the one before named first;
 * ${all} (or not batched): synced and named before returning. */
int get_batch_flush(struct restore *r, int all);
/* get_batch_free(r): both batches' files waited for and removed, the
 * buffers freed. */
void get_batch_free(struct restore *r);

/* get_restore_said(r, e, name, what): an entry restored: said and counted. */
void get_restore_said(struct restore *r, const struct entry *e, const char *name,
    const char *what);
/* get_restore_failure(r, subject, rc): report and count a failed entry. */
void get_restore_failure(struct restore *r, const char *subject, int rc);
/* get_restore_strip(name, n): ${name} without its first ${n} components;
 * NULL if it has no more (get --strip-components, as tar's). */
const char *get_restore_strip(const char *name, unsigned n);
/* get_restore_join(out, outlen, dir, name): "dir/name", one slash. */
int get_restore_join(char *out, size_t outlen, const char *dir, const char *name);
/* get_restore_batch_limit(): files per batch: RESTORE_BATCH_FILES, or fewer
 * if the descriptor limit (four per slot: two batches) is low. */
size_t get_restore_batch_limit(void);
/* get_restore_one(r, e, rel, display, allow_device): one entry of any kind
 * at ${rel} below the destination; a file is queued in the batch (1: a
 * hard link queued for the end). */
int get_restore_one(struct restore *r, const struct entry *e, const char *rel,
    const char *display, int allow_device);
/* get_restore_file, get_restore_dir, get_restore_symlink(r, e, rel,
 * display, allow_device): how each kind is restored (kinds.c's rows). */
int get_restore_file(struct restore *r, const struct entry *e, const char *rel,
    const char *display, int allow_device);
int get_restore_dir(struct restore *r, const struct entry *e, const char *rel,
    const char *display, int allow_device);
/* get_restore_special: a FIFO, or a device node (as root only: else
 * reported as not restored). */
int get_restore_special(struct restore *r, const struct entry *e, const char *rel,
    const char *display, int allow_device);
int get_restore_symlink(struct restore *r, const struct entry *e, const char *rel,
    const char *display, int allow_device);
/* get_restore_finish(r): the last batch, then the hard links. */
int get_restore_finish(struct restore *r);
/* get_restore_tree(r, prefix, out, damaged): every entry under ${prefix}
 * that opt's include and exclude keep, restored below ${out}; refused
 * before writing anything if a destination file exists (without force or
 * skip_existing). */
int get_restore_tree(struct restore *r, const char *prefix, const char *out, uint64_t damaged);
/* get_restore_filter(r, sel): of the entries i with ${sel}[i] set, those
 * that opt's include and exclude keep, and the directories among them
 * above a kept one (with an include: a tree keeps its shape): ${sel}[i]
 * left 1 for them, made 0 for the others (counted as excluded); the
 * plaintext bytes of the files kept added to the progress total. */
void get_restore_filter(struct restore *r, unsigned char *sel);
/* get_restore_entries(r, keep, out, check): every entry i with ${keep}[i]
 * restored below ${out} (its name stripped of opt's strip_components:
 * none left, it is skipped), in name order, then directories' attributes
 * deepest first; with ${check}, refused before writing anything if a
 * destination file exists (without force or skip_existing).  A failed
 * entry is reported and the rest restored.  The destination is closed
 * after (r can restore below another one). */
int get_restore_entries(struct restore *r, const unsigned char *keep, const char *out, int check);
void get_restore_free(struct restore *r);

/* ---- get.c ---- */

/* get_named(v, name, out, opt): pqv_vault_get of ${name} (unlocked). */
int get_named(pqv_vault *v, const char *name, const char *out, const struct pqv_get_options *opt);

#endif
