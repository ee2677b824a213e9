/*
 * repair.c: check --repair-index (docs/FORMAT.md section 23): chunks that
 * the chain's records no longer place (a damaged chunk block) are looked
 * for in the packs' own sealed tables, and found ones recorded again in
 * one epoch.  Only a table that authenticates under this vault's key and
 * the pack's own name is believed, and only for an identity some kept
 * state uses; reading a chunk still checks its blob's tag.
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/chunks.h"
#include "vault/compact.h"
#include "vault/names.h"
#include "vault/pack3.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

struct repair {
    struct chunk_index lost;     /* identities used but not placed */
    struct chunk_index found;
    pqv_vault *v;
};

static int
note_lost(void *ctx, const struct entry *e)
{
    struct repair *r = ctx;
    int rc = 0;

    for (uint32_t i = 0; e->chunked && i < e->nextents && rc == 0; i++)
        if (!e->extents[i].located && chunks_find(&r->lost, e->extents[i].chunk_id) == NULL) {
            struct chunk_rec id;
            memset(&id, 0, sizeof(id));
            memcpy(id.id, e->extents[i].chunk_id, CHUNK_ID_BYTES);
            rc = chunks_put(&r->lost, &id);
        }
    return rc;
}

static int
search_pack(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct repair *r = ctx;
    struct chunk_rec *recs;
    size_t n;
    int rc = 0;

    (void)name;
    if (pack3_read_table(r->v, id, size, &recs, &n) != 0) {
        pqv_error_clear();
        return 0; /* not a pack of format 3 of this vault, or damaged: no help */
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        if (chunks_find(&r->lost, recs[i].id) != NULL && chunks_find(&r->found, recs[i].id) == NULL)
            rc = chunks_put(&r->found, &recs[i]);
    free(recs);
    return rc;
}

int
pqv_vault_repair_index(pqv_vault *v, pqv_report_fn report, void *ctx, uint64_t *recovered,
    uint64_t *lost)
{
    static const uint8_t zero[CHUNK_ID_BYTES];
    struct repair r;
    struct snapshots kept;
    struct state st;
    uint64_t damaged = 0;
    struct names_walk w = { report, ctx, &damaged, NULL, NULL, NULL, NULL };
    int rc;

    if (v == NULL)
        return PQV_E_INVAL;
    if (recovered != NULL)
        *recovered = 0;
    if (lost != NULL)
        *lost = 0;
    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (v->config.version < 3)
        return 0; /* nothing of it before format 3 */
    memset(&r, 0, sizeof(r));
    memset(&kept, 0, sizeof(kept));
    r.v = v;
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    if ((rc = chunks_of_state(v, &st, &w)) == 0 && (rc = snapshots_load(&st, &kept)) == 0)
        rc = snapshots_each_entry(v, &st, &kept, &w, note_lost, &r);
    if (rc == 0 && r.lost.n > 0)
        rc = names_walk(v->storage, "packs", PACK_ID_BYTES, NULL, search_pack, &r);
    /* What was found goes into a new base with every other record (a
     * compaction): the damaged chunk block is then out of the current
     * chain, and check of the newest state is clean again. */
    if (rc == 0 && r.found.n > 0) {
        uint64_t epoch;
        for (size_t i = 0; i < r.found.cap && rc == 0; i++)
            if (memcmp(r.found.slots[i].id, zero, CHUNK_ID_BYTES) != 0)
                rc = chunks_put(&st.chunks, &r.found.slots[i]);
        /* The damaged blocks' records are known again (those found): the
         * index stands for the new base. */
        st.chunks_damaged = 0;
        if (rc == 0 && (rc = state_load(v, &st)) == 0)
            rc = compact(v, &st, NULL, report, ctx, &epoch);
    }
    if (rc == 0) {
        vault_report(report, ctx, PQV_REPORT_INFO, NULL, "chunks without a record: %zu; found "
            "again in the packs' tables: %zu", r.lost.n, r.found.n);
        if (recovered != NULL)
            *recovered = r.found.n;
        if (lost != NULL)
            *lost = r.lost.n - r.found.n;
    }
    chunks_free(&r.lost);
    chunks_free(&r.found);
    snapshots_free(&kept);
    state_free(&st);
    return rc;
}
