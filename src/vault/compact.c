/*
 * compact.c: a chain of deltas folded into one base segment.
 *
 * Readers verify and merge every segment from the base up, so a long chain
 * costs every command; compaction writes the state as it is as the next
 * epoch, a base: the file keys of every file re-stored under one new
 * command key (one encapsulation, and one decapsulation per old segment to
 * read them), the chain values of every earlier epoch kept as its history
 * (so a machine that saw an epoch before the base still tells a rollback
 * or a fork), and the size and hash of every pack still referred to.
 * Segments before the base are then leftovers: compact_if_long deletes
 * them at once, gc too.  Data is not touched: packs no entry refers to are
 * gc's to remove.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/compact.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/segment.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

/* history_of(st, out, n): the chain value of every epoch before the next
 * base: the current base's history, then every segment of the chain. */
static int
history_of(const struct state *st, struct seg_history **out, size_t *n)
{
    const struct segment *base = &st->segs[0];
    size_t total = base->nhistory + st->nsegs, k = 0;
    struct seg_history *h;

    if ((h = calloc(total + 1, sizeof(*h))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < base->nhistory; i++)
        h[k++] = base->history[i];
    for (size_t i = 0; i < st->nsegs; i++) {
        h[k].epoch = st->segs[i].epoch;
        memcpy(h[k].chain, st->segs[i].chain, 32);
        k++;
    }
    *out = h;
    *n = k;
    return 0;
}

/* known_packs(st, out, n): every pack a segment of the chain describes. */
static int
known_packs(const struct state *st, struct seg_pack **out, size_t *n)
{
    size_t total = 0, k = 0;
    struct seg_pack *p;

    for (size_t i = 0; i < st->nsegs; i++)
        total += st->segs[i].t.npacks;
    if ((p = calloc(total + 1, sizeof(*p))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < st->nsegs; i++)
        for (size_t j = 0; j < st->segs[i].t.npacks; j++)
            if (st->segs[i].t.packs[j].flags & PACK_INTRODUCED)
                p[k++] = st->segs[i].t.packs[j];
    *out = p;
    *n = k;
    return 0;
}

/* kept_chunks(st, used, t): the records of the state's index (those
 * ${used} names, or all) into ${t}: a base carries them, the segments
 * before it go (the kept snapshots' chunks among them: the index of every
 * snapshot is the current chain's). */
static int
kept_chunks(const struct state *st, const struct chunk_index *used, struct txn *t)
{
    static const uint8_t zero[CHUNK_ID_BYTES];
    int rc = 0;

    for (size_t i = 0; i < st->chunks.cap && rc == 0; i++) {
        const struct chunk_rec *r = &st->chunks.slots[i];
        if (memcmp(r->id, zero, CHUNK_ID_BYTES) == 0 ||
            (used != NULL && chunks_find(used, r->id) == NULL))
            continue;
        rc = txn_record_chunk(t, r);
    }
    return rc;
}

int
compact(pqv_vault *v, struct state *st, const struct chunk_index *used, pqv_report_fn report,
    void *report_ctx, uint64_t *epoch)
{
    struct entry **all = NULL;
    struct seg_history *history = NULL;
    struct seg_pack *known = NULL;
    size_t nhistory = 0, nknown = 0, nall = 0;
    struct snapshots kept;
    struct txn t;
    int rc, began = 0;

    memset(&kept, 0, sizeof(kept));

    if (st->format < 2 || !st->loaded)
        return PQV_E_INVAL;
    if ((all = calloc(st->n + 1, sizeof(*all))) == NULL)
        return PQV_E_NOMEM;
    /* Every file key in the clear: one decapsulation per segment. */
    for (size_t i = 0; i < st->n; i++) {
        struct entry *e = &st->entries[i];
        if (e->kind == KIND_FILE && !e->chunked && e->key_state != KEY_CLEAR) {
            uint8_t key[PQV_FILE_KEY_BYTES];
            if ((rc = state_file_key(v, st, e, key)) != 0)
                goto done;
            memcpy(e->key, key, sizeof(key));
            util_wipe(key, sizeof(key));
            e->key_state = KEY_CLEAR;
        }
        all[nall++] = e;
    }
    if ((rc = history_of(st, &history, &nhistory)) != 0 ||
        (rc = known_packs(st, &known, &nknown)) != 0 || (rc = txn_begin(v, st, &t)) != 0)
        goto done;
    began = 1;
    t.known = known;
    t.nknown = nknown;
    /* Format 3: the chunk records; the snapshots kept. */
    if ((rc = chunks_of_state(v, st, NULL)) != 0 || (rc = kept_chunks(st, used, &t)) != 0 ||
        (rc = snapshots_load(st, &kept)) != 0)
        goto done;
    if (kept.n > 0) {
        struct seg_ext x;
        if ((rc = snapshots_ext_kept(&kept, &x)) != 0 || (rc = txn_put_ext(&t, &x)) != 0)
            goto done;
    }
    if ((rc = txn_commit(&t, SEGMENT_BASE, all, nall, history, nhistory)) != 0)
        goto done;
    *epoch = t.committed_epoch;
    vault_report(report, report_ctx, PQV_REPORT_INFO, NULL,
        "catalogue compacted: epochs %llu to %llu folded into base %llu",
        (unsigned long long)st->segs[0].epoch, (unsigned long long)st->epoch,
        (unsigned long long)t.committed_epoch);
done:
    if (began)
        txn_free(&t);
    snapshots_free(&kept);
    free(all);
    free(history);
    free(known);
    return rc;
}

/* needed_by(kept, epoch): a kept snapshot is restored from segment
 * ${epoch} (its base up to it). */
static int
needed_by(const struct snapshots *kept, uint64_t epoch)
{
    for (size_t i = 0; kept != NULL && i < kept->n; i++)
        if (kept->s[i].base <= epoch && epoch <= kept->s[i].epoch)
            return 1;
    return 0;
}

void
compact_drop_old_segments(pqv_vault *v, uint64_t base, const struct snapshots *kept)
{
    struct names_list names;
    struct error_saved first;

    error_save(&first);
    memset(&names, 0, sizeof(names));
    if (names_list(v->storage, "segments", &names) == 0) {
        for (size_t i = 0; i < names.n; i++) {
            uint8_t id[8];
            if (names_classify(names.names[i], "segments", id, sizeof(id)) == NAME_VALID &&
                util_load_be64(id) < base && !needed_by(kept, util_load_be64(id)))
                (void)v->storage->ops->del(v->storage, names.names[i]);
        }
        (void)v->storage->ops->barrier(v->storage);
    }
    names_list_free(&names);
    error_restore(&first);
}

int
compact_if_long(pqv_vault *v, pqv_report_fn report, void *report_ctx)
{
    struct state st;
    uint64_t epoch = 0;
    int rc;

    if (v->config.version < 2)
        return 0;
    if ((rc = state_open(v, &st, NULL)) != 0)
        goto failed;
    if (st.nsegs <= COMPACT_AFTER) {
        state_free(&st);
        return 0;
    }
    struct snapshots kept;
    memset(&kept, 0, sizeof(kept));
    if ((rc = state_load(v, &st)) == 0 && (rc = snapshots_load(&st, &kept)) == 0 &&
        (rc = compact(v, &st, NULL, report, report_ctx, &epoch)) == 0)
        compact_drop_old_segments(v, epoch, &kept);
    snapshots_free(&kept);
    state_free(&st);
    if (rc == 0 || rc == PQV_E_NOMEM)
        return rc;
failed:
    /* What was committed stands; compaction waits for the next writer. */
    vault_report(report, report_ctx, PQV_REPORT_WARNING, NULL, "catalogue not compacted: %s",
        pqv_error_detail());
    return 0;
}
