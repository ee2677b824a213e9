/*
 * repack.c: packs of format 3 rewritten when mostly unused (docs/FORMAT.md
 * section 25).  The live blobs are copied as they are (a blob's key and
 * tag do not depend on where it lies) into new packs through a
 * transaction, whose epoch records their new places; the old packs are
 * left for gc to delete once nothing names them.  A crash before the
 * commit leaves only new packs nobody names; after it, old ones.
 */
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/util.h"
#include "vault/chunks.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/pack3.h"
#include "vault/repack.h"
#include "vault/segment.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

/* Bytes of a pack table's record at most (identity, three varints of
 * at most 32 bits, flags). */
#define REPACK_RECORD_MAX (32 + 3 * 5 + 1)

/* A pack the state's chunks use, with what they use of it. */
struct use {
    uint8_t id[PACK_ID_BYTES];
    uint64_t live;               /* bytes of its live blobs */
    uint64_t nlive;              /* and their number */
    uint64_t size;               /* as its segment recorded it (0: unknown) */
    uint8_t hash[32];            /* and its SHA-256 */
};

static int
compare_use(const void *a, const void *b)
{
    return memcmp(((const struct use *)a)->id, ((const struct use *)b)->id, PACK_ID_BYTES);
}

/* live_records(st, used, out, n): the record of every chunk ${used}
 * names (what any kept state uses), once each. */
static int
live_records(const struct state *st, const struct chunk_index *used, struct chunk_rec **out,
    size_t *n)
{
    static const uint8_t zero[CHUNK_ID_BYTES];
    struct chunk_rec *recs = NULL;
    size_t k = 0;

    if (used->n > 0 && (recs = calloc(used->n, sizeof(*recs))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < st->chunks.cap && k < used->n; i++) {
        const struct chunk_rec *r = &st->chunks.slots[i];
        if (memcmp(r->id, zero, CHUNK_ID_BYTES) != 0 && chunks_find(used, r->id) != NULL)
            recs[k++] = *r;
    }
    *out = recs;
    *n = k;
    return 0;
}

/* uses_of(st, recs, n, out, m): per pack the live chunks use, their bytes
 * and the pack's recorded size. */
static int
uses_of(const struct state *st, const struct chunk_rec *recs, size_t n, struct use **out,
    size_t *m)
{
    struct use *u = NULL;
    size_t k = 0;

    if (n > 0 && (u = calloc(n, sizeof(*u))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        memcpy(u[i].id, recs[i].pack_id, PACK_ID_BYTES);
        u[i].live = recs[i].stored_len;
        u[i].nlive = 1;
    }
    util_sort(u, n, sizeof(*u), compare_use);
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && memcmp(u[k - 1].id, u[i].id, PACK_ID_BYTES) == 0) {
            u[k - 1].live += u[i].live;
            u[k - 1].nlive++;
            continue;
        }
        u[k++] = u[i];
    }
    for (size_t s = 0; s < st->nsegs; s++)
        for (size_t p = 0; p < st->segs[s].t.npacks; p++) {
            const struct seg_pack *sp = &st->segs[s].t.packs[p];
            struct use key, *hit;
            if (!(sp->flags & PACK_INTRODUCED))
                continue;
            memcpy(key.id, sp->id, PACK_ID_BYTES);
            if ((hit = util_search(&key, u, k, sizeof(*u), compare_use)) != NULL) {
                hit->size = sp->size;
                memcpy(hit->hash, sp->hash, 32);
            }
        }
    *out = u;
    *m = k;
    return 0;
}

/* move_pack(v, t, u, recs, n): the live blobs of pack ${u} into ${t}. */
static int
move_pack(pqv_vault *v, struct txn *t, const struct use *u, const struct chunk_rec *recs, size_t n)
{
    char sname[STORAGE_NAME_MAX];
    uint8_t *data, hash[32];
    size_t len;
    int rc;

    pack_name(u->id, sname);
    if ((rc = v->storage->ops->get(v->storage, sname, &data, &len, (size_t)u->size + 1)) != 0)
        return error_subject(rc, sname);
    /* Blobs are copied as they are, and the pack deleted afterwards: a
     * damaged one (or a bad read) must not be made the only copy, under
     * a new pack's valid SHA-256. */
    if ((rc = kdf_sha256(hash, data, len)) != 0) {
        free(data);
        return rc;
    }
    if (len != u->size || !util_ct_equal(hash, u->hash, 32)) {
        free(data);
        return error_set(PQV_E_INTEGRITY, sname, "does not match its SHA-256: not rewritten "
            "(run check --read-data)");
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct chunk_rec r = recs[i];
        if (memcmp(r.pack_id, u->id, PACK_ID_BYTES) != 0)
            continue;
        if ((uint64_t)PACK_HEADER_BYTES + r.pack_off + r.stored_len > len) {
            rc = error_set(PQV_E_INTEGRITY, sname, "a chunk's blob lies beyond the pack's end");
            break;
        }
        rc = txn_put_chunk(t, data + PACK_HEADER_BYTES + r.pack_off, &r);
    }
    free(data);
    return rc;
}

int
repack(pqv_vault *v, struct state *st, const struct chunk_index *used, pqv_report_fn report,
    void *ctx, uint64_t *packs)
{
    struct chunk_rec *recs = NULL;
    struct use *u = NULL;
    size_t n = 0, m = 0;
    uint64_t moved = 0, freed = 0;
    struct txn t;
    int rc, began = 0;

    *packs = 0;
    if (v->config.version < 3)
        return 0;
    if ((rc = live_records(st, used, &recs, &n)) != 0 || (rc = uses_of(st, recs, n, &u, &m)) != 0)
        goto done;
    for (size_t i = 0; i < m && rc == 0; i++) {
        /* Unknown size: a pack of another kind.  Otherwise what a pack of
         * its live blobs alone would take (their table, its padding) is
         * compared with what it takes: more than a fifth to gain, it is
         * rewritten (a small pack's table and padding are no waste). */
        uint64_t need = pack3_padded(PACK_HEADER_BYTES + u[i].live + 10 +
            u[i].nlive * REPACK_RECORD_MAX + PQV_AEAD_TAG_BYTES + PACK3_LOCATOR_BYTES);
        if (u[i].size == 0 || u[i].size <= need ||
            (u[i].size - need) * REPACK_DEAD_PART <= u[i].size)
            continue;
        if (!began) {
            if ((rc = txn_begin(v, st, &t)) != 0)
                break;
            began = 1;
        }
        if ((rc = move_pack(v, &t, &u[i], recs, n)) == 0) {
            moved++;
            freed += u[i].size - u[i].live;
        }
    }
    if (rc == 0 && began && moved > 0) {
        if ((rc = txn_commit(&t, SEGMENT_DELTA, NULL, 0, NULL, 0)) == 0) {
            *packs = moved;
            vault_report(report, ctx, PQV_REPORT_INFO, NULL, "%llu pack%s rewritten without "
                "their unused chunks (about %llu bytes to free)", (unsigned long long)moved,
                moved == 1 ? "" : "s", (unsigned long long)freed);
        }
    } else if (rc != 0 && began) {
        txn_abort(&t);
    }
done:
    if (began)
        txn_free(&t);
    free(recs);
    free(u);
    return rc;
}
