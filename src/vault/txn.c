/*
 * txn.c: a writing command of format 2 as one transaction, one epoch
 * (docs/DESIGN.md section 3):
 *   1. the command's data is sealed into packs, each written (temporary,
 *      fsync, rename) on the worker pool as it fills;
 *   2. one barrier: every pack durable;
 *   3. its entries (new and changed names, removed ones) become segment N+1,
 *      written create-only (a second writer cannot commit the same epoch):
 *      the commit point;
 *   4. one barrier: the epoch is durable; the local state records it.
 * A failure or crash before step 3 leaves packs no segment refers to:
 * leftovers that check reports and gc removes, never served.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto/kdf.h"
#include "util/buf.h"
#include "util/pool.h"
#include "util/util.h"
#include "vault/compact.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/localstate.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/pack3.h"
#include "vault/reserve.h"
#include "vault/segment.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

/* Packs being written at once (each holds up to 4 MiB). */
#define PACKS_IN_FLIGHT 2

struct pack_job {
    struct pool_job job;
    pqv_vault *v;
    struct buf data;
    uint8_t id[PACK_ID_BYTES];
    uint8_t hash[32];            /* the pack's SHA-256, made by the job */
    size_t introduced;           /* its place in t->introduced */
    int busy;
};

/* pack_job_run: on the pool, the pack's hash (the segment records it;
 * wait_job copies it there) and its put: neither on the thread that
 * fills the next pack. */
static void
pack_job_run(struct pool_job *pj)
{
    struct pack_job *j = (struct pack_job *)pj;
    char sname[STORAGE_NAME_MAX];

    if ((j->job.rc = kdf_sha256(j->hash, j->data.p, j->data.len)) != 0)
        return;
    j->v->sink->pack_name(j->v, j->id, sname);
    j->job.rc = j->v->storage->ops->put(j->v->storage, sname, j->data.p, j->data.len);
}

/* carry_ext(t): the newest segment's head extensions, copied (what the
 * chain keeps: the writers, the imported batches). */
static int
carry_ext(struct txn *t)
{
    const struct segment *last = t->st->nsegs > 0 ? &t->st->segs[t->st->nsegs - 1] : NULL;

    if (last == NULL || last->next == 0)
        return 0;
    if ((t->ext = calloc(last->next, sizeof(*t->ext))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < last->next; i++) {
        struct seg_ext *x = &t->ext[t->next];
        /* (A segment's own snapshot, a base's list, a forget: not carried.) */
        if (last->ext[i].type != SEG_EXT_WRITERS && last->ext[i].type != SEG_EXT_IMPORTED)
            continue;
        *x = last->ext[i];
        if ((x->data = malloc(x->len + 1)) == NULL)
            return PQV_E_NOMEM;
        memcpy(x->data, last->ext[i].data, x->len);
        t->next++;
    }
    return 0;
}

int
txn_begin(pqv_vault *v, struct state *st, struct txn *t)
{
    memset(t, 0, sizeof(*t));
    t->v = v;
    t->st = st;
    if ((t->jobs = calloc(PACKS_IN_FLIGHT, sizeof(struct pack_job))) == NULL)
        return PQV_E_NOMEM;
    return carry_ext(t);
}

int
txn_put_ext(struct txn *t, struct seg_ext *x)
{
    struct seg_ext *grown;
    size_t at = 0;

    for (; at < t->next && t->ext[at].type < x->type; at++)
        ;
    if (at < t->next && t->ext[at].type == x->type) {
        free(t->ext[at].data);
        t->ext[at] = *x;
        memset(x, 0, sizeof(*x));
        return 0;
    }
    if ((grown = realloc(t->ext, (t->next + 1) * sizeof(*grown))) == NULL)
        return PQV_E_NOMEM;
    t->ext = grown;
    memmove(&t->ext[at + 1], &t->ext[at], (t->next - at) * sizeof(*grown));
    t->ext[at] = *x;
    t->next++;
    memset(x, 0, sizeof(*x));
    return 0;
}

/* own_snapshot(t): the transaction's snapshot (its command, its counts)
 * as the new segment's SEG_EXT_SNAPSHOT. */
static int
own_snapshot(struct txn *t)
{
    struct seg_ext x;
    int rc;

    t->snap->added = t->snap->changed = t->snap->removed = t->snap->bytes_new = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->entries[i]->kind == KIND_REMOVED)
            t->snap->removed++;
        else if (t->st->loaded && state_find(t->st, t->entries[i]->name) != NULL)
            t->snap->changed++;
        else
            t->snap->added++;
    }
    for (size_t i = 0; i < t->nintroduced; i++)
        t->snap->bytes_new += t->introduced[i].size;
    t->snap->time = (int64_t)time(NULL);
    if ((rc = snapshots_ext_own(t->snap, &x)) != 0)
        return rc;
    rc = txn_put_ext(t, &x);
    free(x.data);
    return rc;
}

void
txn_set_ext(struct txn *t, struct seg_ext *ext, size_t n)
{
    segment_ext_free(t->ext, t->next);
    t->ext = ext;
    t->next = n;
}

/* wait_job(t, j): wait for a pack put; remember the first failure. */
static void
wait_job(struct txn *t, struct pack_job *j)
{
    struct pool *pool = vault_pool(t->v);
    int rc;

    if (!j->busy)
        return;
    rc = pool_wait(pool, &j->job);
    if (rc != 0 && t->rc == 0)
        t->rc = rc;
    if (rc == 0)
        memcpy(t->introduced[j->introduced].hash, j->hash, sizeof(j->hash));
    j->busy = 0;
    buf_wipe_free(&j->data);
}

static void
wait_all(struct txn *t)
{
    struct pack_job *jobs = t->jobs;

    for (size_t i = 0; jobs != NULL && i < PACKS_IN_FLIGHT; i++)
        wait_job(t, &jobs[i]);
}

void
txn_free(struct txn *t)
{
    wait_all(t);
    for (size_t i = 0; i < t->n; i++) {
        entry_clear(t->entries[i]);
        free(t->entries[i]);
    }
    free(t->entries);
    free(t->introduced);
    free(t->created);
    free(t->jobs);
    free(t->pack_recs);
    free(t->chunks);
    buf_wipe_free(&t->pack);
    free(t->wrap);
    segment_ext_free(t->ext, t->next);
    util_wipe(t->cmd_key, sizeof(t->cmd_key));
    memset(t, 0, sizeof(*t));
}

int
txn_command_key(struct txn *t)
{
    int rc;

    /* A write-only writer's file keys are sealed in its batch under the
     * batch's own encapsulation (inbox.c): no command key. */
    if (!t->v->sink->command_key)
        return 0;
    /* The command's key: one hybrid encapsulation, however many files. */
    if (t->wrap == NULL) {
        uint8_t ctx[64];
        int ctxlen = segment_cmd_context(t->v, t->st->epoch + 1, ctx);
        size_t len = pqv_wrap_bytes(t->v->config.kem);
        if ((rc = util_random(t->cmd_key, sizeof(t->cmd_key))) != 0)
            return rc;
        if ((t->wrap = malloc(len)) == NULL)
            return PQV_E_NOMEM;
        if ((rc = pqv_wrap(t->v->identity, t->cmd_key, ctx, (size_t)ctxlen, t->wrap)) != 0) {
            free(t->wrap);
            t->wrap = NULL;
            return rc;
        }
        t->wraplen = len;
    }
    return 0;
}

int
txn_new_file_key(struct txn *t, uint8_t key[PQV_FILE_KEY_BYTES])
{
    int rc;

    if ((rc = txn_command_key(t)) != 0)
        return rc;
    return util_random(key, PQV_FILE_KEY_BYTES);
}

int
txn_introduce(struct txn *t, const struct seg_pack *sp, int created)
{
    if (t->nintroduced == t->capintro) {
        size_t cap = t->capintro ? 2 * t->capintro : 16;
        struct seg_pack *grown = realloc(t->introduced, cap * sizeof(*grown));
        unsigned char *c;
        if (grown == NULL)
            return PQV_E_NOMEM;
        t->introduced = grown;
        if ((c = realloc(t->created, cap)) == NULL)
            return PQV_E_NOMEM;
        t->created = c;
        t->capintro = cap;
    }
    t->created[t->nintroduced] = (unsigned char)(created != 0);
    t->introduced[t->nintroduced++] = *sp;
    return 0;
}

int
txn_flush_pack(struct txn *t)
{
    struct pack_job *jobs = t->jobs, *j = NULL;
    struct seg_pack sp;
    int rc;

    if (t->pack.len == 0)
        return t->rc;
    /* Format 3: the pack's own table, sealed, and its padding. */
    if (t->pack3) {
        if ((rc = pack3_finish(t->v, t->pack_id, t->pack_recs, t->npack_recs, &t->pack)) != 0)
            return rc;
        t->npack_recs = 0;
    }
    /* A free slot (waiting for the oldest put if all are busy). */
    for (size_t i = 0; i < PACKS_IN_FLIGHT && j == NULL; i++)
        if (!jobs[i].busy)
            j = &jobs[i];
    if (j == NULL) {
        j = &jobs[t->next_job];
        wait_job(t, j);
    }
    t->next_job = (t->next_job + 1) % PACKS_IN_FLIGHT;
    memset(&sp, 0, sizeof(sp));
    memcpy(sp.id, t->pack_id, PACK_ID_BYTES);
    sp.flags = PACK_INTRODUCED;
    sp.size = t->pack.len;
    /* (sp.hash: filled in by wait_job, before any segment is built.) */
    j->introduced = t->nintroduced;
    if ((rc = txn_introduce(t, &sp, 1)) != 0)
        return rc;
    j->v = t->v;
    j->data = t->pack;
    memcpy(j->id, t->pack_id, PACK_ID_BYTES);
    memset(&t->pack, 0, sizeof(t->pack));
    j->job.run = pack_job_run;
    j->busy = 1;
    pool_submit(vault_pool(t->v), &j->job);
    return t->rc;
}

int
txn_put_extent(struct txn *t, const uint8_t *sealed, struct extent *x)
{
    int rc;

    if (t->rc != 0)
        return t->rc;
    /* A pack holds at most 4 MiB of stored bytes (one extent aside). */
    if (t->pack.len > PACK_HEADER_BYTES &&
        t->pack.len - PACK_HEADER_BYTES + x->stored_len > PQV_OBJECT_MAX_PLAIN &&
        (rc = txn_flush_pack(t)) != 0)
        return rc;
    if (t->pack.len > 0 && t->pack3 && (rc = txn_flush_pack(t)) != 0)
        return rc; /* (no format-2 extent in a pack of chunks) */
    if (t->pack.len == 0) {
        uint8_t header[PACK_HEADER_BYTES];
        if ((rc = util_random(t->pack_id, PACK_ID_BYTES)) != 0)
            return rc;
        pack_header(header);
        buf_bytes(&t->pack, header, sizeof(header));
        t->pack3 = 0;
    }
    memcpy(x->pack_id, t->pack_id, PACK_ID_BYTES);
    x->pack_flags = 0;
    x->pack_off = (uint32_t)(t->pack.len - PACK_HEADER_BYTES);
    buf_bytes(&t->pack, sealed, x->stored_len);
    return t->pack.nomem ? PQV_E_NOMEM : 0;
}

/* push_rec(list, n, cap, r): append ${r}. */
static int
push_rec(struct chunk_rec **list, size_t *n, size_t *cap, const struct chunk_rec *r)
{
    if (*n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 64;
        struct chunk_rec *grown = realloc(*list, ncap * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        *list = grown;
        *cap = ncap;
    }
    (*list)[(*n)++] = *r;
    return 0;
}

int
txn_record_chunk(struct txn *t, const struct chunk_rec *r)
{
    return push_rec(&t->chunks, &t->nchunks, &t->capchunks, r);
}

int
txn_put_chunk(struct txn *t, const uint8_t *blob, struct chunk_rec *r)
{
    int rc;

    if (t->rc != 0)
        return t->rc;
    /* A pack is closed once its blobs reach the target: the blob that
     * reaches it is its last.  (Closed before it, a pack would fall short
     * of the target by half a chunk on average, and be padded as a
     * partial one: up to 128 KiB of Padmé instead of 64 KiB of a full
     * pack's alignment, pack3_padded.) */
    if (t->pack.len >= PACK_HEADER_BYTES + PACK3_TARGET && (rc = txn_flush_pack(t)) != 0)
        return rc;
    if (t->pack.len == 0) {
        if ((rc = util_random(t->pack_id, PACK_ID_BYTES)) != 0)
            return rc;
        /* Room for a whole pack at once (growing by doubling would hold
         * twice that, in each of the packs in flight). */
        if (t->pack.cap == 0 && (t->pack.p = malloc(PACK3_ROOM)) != NULL)
            t->pack.cap = PACK3_ROOM;
        pack3_begin(t->v->config.aead, &t->pack);
        t->pack3 = 1;
    }
    memcpy(r->pack_id, t->pack_id, PACK_ID_BYTES);
    r->pack_off = (uint32_t)(t->pack.len - PACK_HEADER_BYTES);
    buf_bytes(&t->pack, blob, r->stored_len);
    if (t->pack.nomem)
        return PQV_E_NOMEM;
    if ((rc = push_rec(&t->pack_recs, &t->npack_recs, &t->cappack_recs, r)) != 0)
        return rc;
    return txn_record_chunk(t, r);
}

int
txn_add(struct txn *t, struct entry *e)
{
    struct entry **grown, *copy;

    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        if ((grown = realloc(t->entries, cap * sizeof(*grown))) == NULL)
            return PQV_E_NOMEM;
        t->entries = grown;
        t->cap = cap;
    }
    if ((copy = malloc(sizeof(*copy))) == NULL)
        return PQV_E_NOMEM;
    *copy = *e; /* moved */
    memset(e, 0, sizeof(*e));
    t->entries[t->n++] = copy;
    return 0;
}

int
txn_remove(struct txn *t, const char *name)
{
    struct entry gone;
    int rc;

    if ((rc = entry_removed(&gone, name)) != 0 || (rc = txn_add(t, &gone)) != 0)
        entry_clear(&gone);
    return rc;
}

/* keyfile_hashes(t, p, list, n): the key file's hash, and the hashes of
 * the key files this vault no longer accepts (carried from the newest
 * segment, plus the one it recorded if the key file changed since). */
static int
keyfile_hashes(struct txn *t, struct seg_params *p, uint8_t (**list)[32], size_t *n)
{
    const struct segment *last = t->st->nsegs > 0 ? &t->st->segs[t->st->nsegs - 1] : NULL;
    size_t k = last != NULL ? last->nsuperseded : 0;
    int changed = last != NULL && !util_ct_equal(last->keyfile_hash, t->v->keyfile_hash, 32);

    *list = NULL;
    *n = 0;
    if (k + (size_t)changed > 0 && (*list = malloc((k + 1) * 32)) == NULL)
        return PQV_E_NOMEM;
    if (k > 0 && last != NULL)
        memcpy(*list, last->superseded, k * 32);
    if (changed)
        memcpy((*list)[k++], last->keyfile_hash, 32);
    *n = k;
    p->keyfile_hash = t->v->keyfile_hash;
    p->superseded = (const uint8_t (*)[32]) * list;
    p->nsuperseded = k;
    return 0;
}

/* needs_command_key(t, all, nall): a file entry is in the segment (the
 * transaction's, or ${all} for a base). */
static int
needs_command_key(const struct txn *t, struct entry *const *all, size_t nall)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->entries[i]->kind == KIND_FILE && !t->entries[i]->chunked)
            return 1;
    for (size_t i = 0; i < nall; i++)
        if (all[i]->kind == KIND_FILE && !all[i]->chunked)
            return 1;
    return 0;
}

int
txn_commit(struct txn *t, int kind, struct entry *const *all, size_t nall,
    const struct seg_history *history, size_t nhistory)
{
    pqv_vault *v = t->v;
    struct seg_params p;
    struct buf seg = { NULL, 0, 0, 0 };
    uint8_t (*superseded)[32] = NULL, chain[32], zero[32];
    char sname[STORAGE_NAME_MAX];
    size_t nsup;
    int rc;

    memset(zero, 0, sizeof(zero));
    /* Every file key of the segment is sealed under the command's key:
     * made here if no file key was (entries that only carry keys made
     * before: a hard link after a checkpoint, an import, a compaction, an
     * upgrade). */
    if ((rc = needs_command_key(t, all, nall) ? txn_command_key(t) : 0) != 0 ||
        (rc = txn_flush_pack(t)) != 0)
        goto fail;
    wait_all(t);
    if ((rc = t->rc) != 0 || (rc = v->storage->ops->barrier(v->storage)) != 0)
        goto fail;
    if (v->sink->take != NULL) {
        /* A write-only writer: into its batch (committed by
         * pqv_vault_inbox_commit); its packs are durable now. */
        if ((rc = v->sink->take(v, t)) != 0)
            goto fail;
        goto done;
    }
    /* A command that changed names: its epoch is a snapshot. */
    if (t->snap != NULL && t->n > 0 && kind == SEGMENT_DELTA && (rc = own_snapshot(t)) != 0)
        goto fail;
    memset(&p, 0, sizeof(p));
    p.epoch = t->st->epoch + 1;
    p.kind = kind;
    p.base = kind == SEGMENT_BASE ? p.epoch : t->st->base;
    p.time = (int64_t)time(NULL);
    p.prev_chain = t->st->epoch > 0 ? t->st->chain : zero;
    if ((rc = keyfile_hashes(t, &p, &superseded, &nsup)) != 0)
        goto fail;
    p.history = history;
    p.nhistory = nhistory;
    p.cmd_key = t->wrap != NULL ? t->cmd_key : NULL;
    p.wrap = t->wrap;
    p.wraplen = t->wraplen;
    p.introduced = t->introduced;
    p.nintroduced = t->nintroduced;
    p.known = t->known;
    p.nknown = t->nknown;
    p.ext = t->ext;
    p.next = t->next;
    /* Chunk records by identity, once each (the last of an identity). */
    chunks_sort(t->chunks, t->nchunks);
    size_t kept = 0;
    for (size_t i = 0; i < t->nchunks; i++) {
        if (kept > 0 && memcmp(t->chunks[kept - 1].id, t->chunks[i].id, CHUNK_ID_BYTES) == 0)
            kept--;
        t->chunks[kept++] = t->chunks[i];
    }
    t->nchunks = kept;
    p.chunks = t->chunks;
    p.nchunks = t->nchunks;
    if ((rc = segment_build(v, &p, kind == SEGMENT_BASE ? all : t->entries,
             kind == SEGMENT_BASE ? nall : t->n, &seg, chain)) != 0)
        goto fail;
    segment_name(p.epoch, sname);
    /* The commit point: create-only, so two writers cannot both commit
     * this epoch (the loser fails here and leaves only leftovers). */
    rc = v->storage->ops->put_new(v->storage, sname, seg.p, seg.len);
    /* Short of space: a command that frees space (rm, forget, gc) commits
     * in the reserve, once (the failed put left nothing at the name). */
    if (rc == PQV_E_NOSPACE && reserve_release(v)) {
        pqv_error_clear();
        rc = v->storage->ops->put_new(v->storage, sname, seg.p, seg.len);
        if (rc == 0)
            vault_report(v->report, v->report_ctx, PQV_REPORT_WARNING, "reserve", "the disk "
                "is full: committed in the reserve (gc frees space and makes it again)");
    }
    if (rc == PQV_E_EXISTS)
        rc = error_set(PQV_E_LOCKED, sname, "another writer committed epoch %llu meanwhile",
            (unsigned long long)p.epoch);
    if (rc != 0)
        goto fail;
    /* Named: whatever happens next, its packs must stay. */
    t->committed_epoch = p.epoch;
    memcpy(t->committed_chain, chain, 32);
    if ((rc = v->storage->ops->barrier(v->storage)) != 0)
        goto done; /* perhaps durable: not a failure to undo */
    rc = localstate_record(v, p.epoch, chain, 0);
    goto done;

fail:
    txn_abort(t);
done:
    free(superseded);
    buf_wipe_free(&seg);
    return rc;
}

void
txn_abort(struct txn *t)
{
    struct error_saved first;

    if (t->committed_epoch != 0)
        return; /* a segment refers to them */
    error_save(&first);
    wait_all(t);
    /* Nothing refers to these packs: remove them now rather than leave
     * them to gc (best effort). */
    for (size_t i = 0; i < t->nintroduced; i++) {
        char sname[STORAGE_NAME_MAX];
        if (!t->created[i])
            continue; /* not this command's: others may rely on it */
        t->v->sink->pack_name(t->v, t->introduced[i].id, sname);
        (void)t->v->storage->ops->del(t->v->storage, sname);
    }
    t->nintroduced = 0;
    (void)t->v->storage->ops->barrier(t->v->storage);
    error_restore(&first);
}

int
txn_finish(struct txn *t, int flags, pqv_report_fn report, void *ctx)
{
    int rc = 0;

    if (t->n > 0 || (flags & TXN_EVEN_EMPTY))
        rc = txn_commit(t, SEGMENT_DELTA, NULL, 0, NULL, 0);
    else
        txn_abort(t); /* nothing to commit: no epoch (packs only if an entry failed) */
    if (rc == 0 && t->v->sink->after != NULL)
        rc = t->v->sink->after(t->v, report, ctx);
    return rc;
}

/* ---- the owner's sink ---- */

static int
owner_ready(const pqv_vault *v)
{
    return vault_require_writer(v);
}

static int
owner_prepare(pqv_vault *v, pqv_report_fn report, void *ctx)
{
    /* A reserve used (or never made) is made again before the command
     * writes, if space allows (silently if not: the command needs no
     * reserve, and fails for lack of space on its own). */
    (void)reserve_ensure(v, report, ctx, 0);
    return upgrade_if_needed(v, report, ctx);
}

static int
owner_open_state(pqv_vault *v, struct state *st)
{
    int rc;

    if ((rc = state_current(v, st, NULL)) == 0 && (rc = state_load(v, st)) != 0)
        state_free(st);
    return rc;
}

static void
owner_pack_name(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX])
{
    (void)v;
    pack_name(id, out);
}

const struct txn_sink txn_owner_sink = {
    .ready = owner_ready,
    .prepare = owner_prepare,
    .open_state = owner_open_state,
    .pack_name = owner_pack_name,
    .take = NULL,
    .after = compact_if_long,
    .release = NULL,
    .prefix = NULL,
    .root = NULL,
    .command_key = 1,
    .content_hashes = 1,
    .chunks = 1,
    .devices = 1,
    .uses_keyfile = 1,
};
