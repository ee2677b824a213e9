/*
 * stats.c: what a state holds and what it costs (pqv_vault_stats, as
 * restic's stats): its entries and logical size, the distinct data its
 * files use (chunks in format 3, shared extents before) and their stored
 * size, so deduplication and compression ratios; the snapshots the chain
 * keeps; the packs and segments in the storage.
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/chunks.h"
#include "vault/entry.h"
#include "vault/kinds.h"
#include "vault/names.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

/* One piece of stored data a file uses: a chunk by its identity, an
 * extent of format 2 (or a format-1 object) by its pack and place. */
struct piece {
    int chunk;                   /* a chunk (key: its identity), else a place */
    uint8_t key[CHUNK_ID_BYTES];
    uint32_t plain, stored;
    int located;
};

static int
compare_pieces(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;

    if (x->chunk != y->chunk)
        return x->chunk - y->chunk;
    return memcmp(x->key, y->key, CHUNK_ID_BYTES);
}

struct pieces {
    struct piece *p;
    size_t n, cap;
};

static int
add_piece(struct pieces *ps, const struct extent *x)
{
    struct piece *p;

    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 1024;
        struct piece *grown = realloc(ps->p, cap * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        ps->p = grown;
        ps->cap = cap;
    }
    p = &ps->p[ps->n++];
    memset(p, 0, sizeof(*p));
    if (x->chunk) {
        p->chunk = 1;
        memcpy(p->key, x->chunk_id, CHUNK_ID_BYTES);
        p->located = x->located;
    } else {
        /* Equal files of format 2 share one extent: one place. */
        memcpy(p->key, x->pack_id, PACK_ID_BYTES);
        util_store_be32(p->key + PACK_ID_BYTES, x->pack_off);
        p->key[PACK_ID_BYTES + 4] = x->pack_flags;
        p->located = 1;
    }
    p->plain = x->plain_len;
    p->stored = x->stored_len;
    return 0;
}

/* count_blobs: the files under a prefix of the storage and their bytes
 * (temporaries aside). */
struct blobs {
    uint64_t n, bytes;
};

static int
count_blob(void *ctx, const char *name, uint64_t size)
{
    struct blobs *b = ctx;

    if (strstr(name, PQV_STORAGE_TEMP_MARK) != NULL)
        return 0;
    b->n++;
    b->bytes += size;
    return 0;
}

/* state_stats(v, st, out): the entries of ${st} and the pieces they use. */
static int
state_stats(pqv_vault *v, struct state *st, struct pqv_stats *out)
{
    struct pieces ps = { NULL, 0, 0 };
    int rc = 0;

    if (st->format >= 2 && (rc = chunks_of_state(v, st, NULL)) != 0)
        return rc;
    for (size_t i = 0; i < st->n && rc == 0; i++) {
        struct entry *e = &st->entries[i];
        out->entries++;
        if (e->kind == KIND_DIR) {
            out->dirs++;
            continue;
        }
        if (e->kind == KIND_SYMLINK) {
            out->symlinks++;
            continue;
        }
        if (e->kind != KIND_FILE) {
            out->others++;
            continue;
        }
        out->files++;
        out->size += e->size;
        if (e->chunked)
            chunks_locate(&st->chunks, e);
        for (uint32_t j = 0; j < e->nextents && rc == 0; j++) {
            out->data += e->extents[j].plain_len;
            rc = add_piece(&ps, &e->extents[j]);
        }
    }
    if (rc == 0) {
        util_sort(ps.p, ps.n, sizeof(*ps.p), compare_pieces);
        for (size_t i = 0; i < ps.n; i++) {
            if (i > 0 && compare_pieces(&ps.p[i - 1], &ps.p[i]) == 0)
                continue;
            out->pieces++;
            out->unique_bytes += ps.p[i].plain;
            if (ps.p[i].located)
                out->stored_bytes += ps.p[i].stored;
            else
                out->unlocated++;
        }
    }
    free(ps.p);
    return rc;
}

int
pqv_vault_stats(pqv_vault *v, struct pqv_stats *out)
{
    struct blobs packs = { 0, 0 }, objects = { 0, 0 }, segments = { 0, 0 };
    struct snapshots kept;
    struct state st;
    uint64_t at;
    int rc;

    if (out == NULL)
        return PQV_E_INVAL;
    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    memset(out, 0, sizeof(*out));
    out->format = v->config.version;
    /* The chain as it is now: its kept snapshots. */
    at = v->at_epoch;
    v->at_epoch = 0;
    rc = state_current(v, &st, NULL);
    v->at_epoch = at;
    if (rc != 0)
        return rc;
    out->epoch = st.epoch;
    if (st.format >= 2) {
        if ((rc = snapshots_load(&st, &kept)) != 0) {
            state_free(&st);
            return rc;
        }
        out->snapshots = kept.n;
        snapshots_free(&kept);
    }
    /* The state described: the newest, or the snapshot --at names. */
    if (at != 0) {
        state_free(&st);
        if ((rc = state_current(v, &st, NULL)) != 0)
            return rc;
        out->epoch = st.epoch;
    }
    if ((rc = state_load(v, &st)) == 0)
        rc = state_stats(v, &st, out);
    state_free(&st);
    if (rc != 0)
        return rc;
    if ((rc = v->storage->ops->list(v->storage, "packs", count_blob, &packs)) != 0 ||
        (rc = v->storage->ops->list(v->storage, "objects", count_blob, &objects)) != 0 ||
        (rc = v->storage->ops->list(v->storage, "segments", count_blob, &segments)) != 0)
        return rc;
    out->packs = packs.n + objects.n;
    out->pack_bytes = packs.bytes + objects.bytes;
    out->segments = segments.n;
    out->segment_bytes = segments.bytes;
    return 0;
}
