/*
 * add_adopt.c: what an interrupted command left (vault/add_internal.h,
 * docs/FORMAT.md section 23): the packs of format 3 no segment names (the
 * writer lock kept any other writer out, so they are an interrupted add's
 * or gc's), each read whole, its own table opened, and the chunks whose
 * blobs open offered to the add for reuse: an add interrupted anywhere
 * resumes without storing again what reached a durable pack.  A pack that
 * is not sound is left to gc; so is each chunk whose blob does not open
 * (nothing else vouches for a blob of a pack no segment names: used, a
 * damaged one would be the only copy of what this add stores).
 */
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/util.h"
#include "vault/add_internal.h"
#include "vault/chunk.h"
#include "vault/chunker.h"
#include "vault/chunks.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/pack3.h"
#include "vault/vault_internal.h"

struct leftovers {
    const struct state *st;
    uint8_t (*ids)[PACK_ID_BYTES];
    size_t n, cap;
};

static int
leftover_cb(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct leftovers *l = ctx;

    (void)name;
    (void)size;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        void *grown = realloc(l->ids, cap * PACK_ID_BYTES);
        if (grown == NULL)
            return PQV_E_NOMEM;
        l->ids = grown;
        l->cap = cap;
    }
    memcpy(l->ids[l->n++], id, PACK_ID_BYTES);
    return 0;
}

/* named(st, id): a segment of the chain names pack ${id}. */
static int
named(const struct state *st, const uint8_t id[PACK_ID_BYTES])
{
    for (size_t i = 0; i < st->nsegs; i++)
        for (size_t k = 0; k < st->segs[i].t.npacks; k++)
            if (memcmp(st->segs[i].t.packs[k].id, id, PACK_ID_BYTES) == 0)
                return 1;
    return 0;
}

int
add_adopt(pqv_vault *v, const struct state *st, const struct chunk_index *known,
    struct chunk_index *adopted, struct adoptable **packs, size_t *npacks)
{
    struct leftovers l = { st, NULL, 0, 0 };
    uint8_t *plain = NULL, *scratch = NULL;
    int rc;

    if ((rc = names_walk(v->storage, "packs", PACK_ID_BYTES, NULL, leftover_cb, &l)) != 0) {
        free(l.ids);
        return rc == PQV_E_NOTFOUND ? 0 : rc;
    }
    for (size_t i = 0; i < l.n && rc == 0; i++) {
        char sname[STORAGE_NAME_MAX];
        struct chunk_rec *recs;
        uint8_t *data;
        size_t len, nrecs;
        if (named(st, l.ids[i]))
            continue;
        pack_name(l.ids[i], sname);
        if (v->storage->ops->get(v->storage, sname, &data, &len, (size_t)2 * PACK3_TARGET +
                (64u << 20)) != 0) {
            pqv_error_clear();
            continue;
        }
        if (pack3_table(v, l.ids[i], data, len, &recs, &nrecs) == 0) {
            struct adoptable *grown = realloc(*packs, (*npacks + 1) * sizeof(*grown));
            if (grown == NULL) {
                rc = PQV_E_NOMEM;
            } else {
                *packs = grown;
                memset(&grown[*npacks], 0, sizeof(grown[*npacks]));
                memcpy(grown[*npacks].sp.id, l.ids[i], PACK_ID_BYTES);
                grown[*npacks].sp.flags = PACK_INTRODUCED;
                grown[*npacks].sp.size = len;
                rc = kdf_sha256(grown[*npacks].sp.hash, data, len);
                (*npacks)++;
            }
            if (rc == 0 && plain == NULL && ((plain = malloc(CHUNK_MAX)) == NULL ||
                    (scratch = malloc(chunk_scratch_size(CHUNK_MAX))) == NULL))
                rc = PQV_E_NOMEM;
            for (size_t k = 0; k < nrecs && rc == 0; k++) {
                const struct chunk_rec *r = &recs[k];
                if (chunks_find(known, r->id) != NULL)
                    continue;
                if (chunk_open(v->chunk_data_key, r->id, r->flags, data + PACK_HEADER_BYTES +
                        r->pack_off, r->stored_len, plain, r->plain_len, scratch) != 0) {
                    pqv_error_clear();
                    continue;
                }
                util_wipe(plain, r->plain_len);
                rc = chunks_put(adopted, r);
            }
            free(recs);
        } else {
            pqv_error_clear();
        }
        free(data);
    }
    free(l.ids);
    free(plain);
    if (scratch != NULL)
        util_wipe(scratch, chunk_scratch_size(CHUNK_MAX));
    free(scratch);
    return rc;
}
