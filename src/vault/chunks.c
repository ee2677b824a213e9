/*
 * chunks.c: the index of chunk records (docs/FORMAT.md section 23).
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/chunks.h"
#include "vault/names.h"
#include "vault/segment.h"
#include "vault/segment_cache.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

static int
is_empty(const struct chunk_rec *r)
{
    static const uint8_t zero[CHUNK_ID_BYTES];

    return memcmp(r->id, zero, CHUNK_ID_BYTES) == 0;
}

/* home(cap, id): an identity is a keyed MAC, uniform: its first bytes
 * are a good hash. */
static size_t
home(size_t cap, const uint8_t id[CHUNK_ID_BYTES])
{
    uint64_t h;

    memcpy(&h, id, sizeof(h));
    return (size_t)(h & (cap - 1));
}

static struct chunk_rec *
slot_of(const struct chunk_index *ix, const uint8_t id[CHUNK_ID_BYTES])
{
    size_t k = home(ix->cap, id);

    while (!is_empty(&ix->slots[k]) && memcmp(ix->slots[k].id, id, CHUNK_ID_BYTES) != 0)
        k = (k + 1) & (ix->cap - 1);
    return &ix->slots[k];
}

/* resize(ix, cap): the table rebuilt with ${cap} slots (a power of 2). */
static int
resize(struct chunk_index *ix, size_t cap)
{
    struct chunk_index bigger = { NULL, cap, 0, 0 };

    if (ix->borrowed)
        return PQV_E_INVAL; /* shared: never changed */
    if ((bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < ix->cap; i++)
        if (!is_empty(&ix->slots[i])) {
            *slot_of(&bigger, ix->slots[i].id) = ix->slots[i];
            bigger.n++;
        }
    free(ix->slots);
    *ix = bigger;
    return 0;
}

static int
grow(struct chunk_index *ix)
{
    return resize(ix, ix->cap ? 2 * ix->cap : 1024);
}

int
chunks_reserve(struct chunk_index *ix, size_t n)
{
    size_t cap = ix->cap ? ix->cap : 1024;

    if (n > SIZE_MAX / 8)
        return PQV_E_NOMEM;
    while (4 * n > 3 * cap)
        cap *= 2;
    return cap > ix->cap ? resize(ix, cap) : 0;
}

int
chunks_put(struct chunk_index *ix, const struct chunk_rec *r)
{
    struct chunk_rec *s;
    int rc;

    if (ix->borrowed)
        return PQV_E_INVAL; /* shared: never changed */
    if (is_empty(r))
        return PQV_E_INTEGRITY; /* the one identity a table cannot hold */
    if (4 * (ix->n + 1) > 3 * ix->cap && (rc = grow(ix)) != 0)
        return rc;
    s = slot_of(ix, r->id);
    if (is_empty(s))
        ix->n++;
    *s = *r;
    return 0;
}

const struct chunk_rec *
chunks_find(const struct chunk_index *ix, const uint8_t id[CHUNK_ID_BYTES])
{
    const struct chunk_rec *s;

    if (ix->cap == 0)
        return NULL;
    s = slot_of(ix, id);
    return is_empty(s) ? NULL : s;
}

struct chunk_rec *
chunks_get(struct chunk_index *ix, const uint8_t id[CHUNK_ID_BYTES])
{
    struct chunk_rec *s;

    if (ix->cap == 0)
        return NULL;
    s = slot_of(ix, id);
    return is_empty(s) ? NULL : s;
}

void
chunks_free(struct chunk_index *ix)
{
    if (!ix->borrowed)
        free(ix->slots);
    memset(ix, 0, sizeof(*ix));
}

static int
compare_recs(const void *a, const void *b)
{
    return memcmp(((const struct chunk_rec *)a)->id, ((const struct chunk_rec *)b)->id,
        CHUNK_ID_BYTES);
}

void
chunks_sort(struct chunk_rec *recs, size_t n)
{
    util_sort(recs, n, sizeof(*recs), compare_recs);
}

void
chunks_locate(const struct chunk_index *ix, struct entry *e)
{
    if (!e->chunked)
        return;
    for (uint32_t i = 0; i < e->nextents; i++) {
        struct extent *x = &e->extents[i];
        const struct chunk_rec *r = chunks_find(ix, x->chunk_id);
        x->located = r != NULL && r->plain_len == x->plain_len;
        if (!x->located)
            continue;
        memcpy(x->pack_id, r->pack_id, PACK_ID_BYTES);
        x->pack_off = r->pack_off;
        x->stored_len = r->stored_len;
        x->flags = r->flags;
        x->pack_flags = 0;
    }
}

int
chunks_of_state(pqv_vault *v, struct state *st, const struct names_walk *w)
{
    int rc = 0, counting = w != NULL && w->damaged != NULL;

    if (st->chunks_loaded) {
        if (!counting && st->chunks_damaged > 0) {
            error_restore(&st->chunks_error);
            return PQV_E_INTEGRITY;
        }
        return 0;
    }
    if (segment_cache_chunks_find(v, st->epoch, st->chain, &st->chunks)) {
        st->chunks_loaded = 1;
        return 0;
    }
    /* Sized once for every record the segments hold (their authenticated
     * counts, bounded by the bytes of their blocks), not grown by doubling
     * while 100,000 records go in. */
    uint64_t records = 0;
    for (size_t i = 0; i < st->nsegs; i++)
        for (size_t b = 0; b < st->segs[i].ncblocks; b++) {
            const struct seg_cblock *c = &st->segs[i].cblocks[b];
            uint64_t most = c->len / 8 + 1; /* (no record is sealed in fewer bytes) */
            records += c->n < most ? c->n : most;
        }
    if (records > 0 && records < (1u << 24) && chunks_reserve(&st->chunks, (size_t)records) != 0)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < st->nsegs && rc == 0; i++) {
        struct segment *s = &st->segs[i];
        uint8_t last[CHUNK_ID_BYTES];
        int counted = 0, have_last = 0;
        if ((rc = segment_fetch_part(v, s, SEGMENT_PART_CHUNKS)) != 0)
            break;
        for (size_t b = 0; b < s->ncblocks && rc == 0; b++) {
            struct chunk_rec *recs;
            size_t n;
            /* Ascending across the segment's blocks too (a block moved
             * or repeated is damage). */
            if ((rc = segment_chunks(v, s, b, &recs, &n)) == 0 && n > 0 && have_last &&
                memcmp(recs[0].id, last, CHUNK_ID_BYTES) <= 0) {
                free(recs);
                rc = error_set(PQV_E_INTEGRITY, NULL, "segment chunk block %zu is out of order",
                    b);
            }
            if (rc == 0 && n > 0) {
                memcpy(last, recs[n - 1].id, CHUNK_ID_BYTES);
                have_last = 1;
            }
            if (rc != 0) {
                char sname[STORAGE_NAME_MAX];
                if (rc != PQV_E_INTEGRITY)
                    break;
                /* Its records are unknown; the other blocks' are not. */
                if (st->chunks_damaged++ == 0)
                    error_save(&st->chunks_error);
                if (counting) {
                    segment_name(s->epoch, sname);
                    /* (Each damaged file counts once, FORMAT.md section 11.) */
                    if (!counted++)
                        (*w->damaged)++;
                    vault_report(w->report, w->report_ctx, PQV_REPORT_ERROR, sname, "%s",
                        pqv_error_last()->reason);
                }
                rc = 0;
                continue;
            }
            for (size_t k = 0; k < n && rc == 0; k++)
                rc = chunks_put(&st->chunks, &recs[k]);
            free(recs);
        }
    }
    if (rc != 0) {
        chunks_free(&st->chunks);
        st->chunks_damaged = 0;
        return rc;
    }
    st->chunks_loaded = 1;
    if (st->chunks_damaged == 0)
        segment_cache_chunks_keep(v, st->epoch, st->chain, &st->chunks);
    if (!counting && st->chunks_damaged > 0) {
        error_restore(&st->chunks_error);
        return PQV_E_INTEGRITY;
    }
    return 0;
}
