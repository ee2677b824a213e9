/*
 * check_data.c: check --read-data (check.c runs it after the structural
 * pass): every byte the kept states need is read and verified.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/util.h"
#include "vault/check_internal.h"
#include "vault/chunk.h"
#include "vault/entry.h"
#include "vault/pack.h"
#include "vault/pack3.h"

/* table_agrees(sc, id, data, len): a pack of format 3's own table holds
 * every record of the chain's index that places a chunk in it, exactly
 * (FORMAT.md section 22); a pack that is not of format 3 agrees. */
static int
table_agrees(struct scan *sc, const uint8_t id[PACK_ID_BYTES], const uint8_t *data, size_t len)
{
    static const uint8_t zero[CHUNK_ID_BYTES];
    struct chunk_index table;
    struct chunk_rec *recs;
    size_t n;
    int rc = 0, agrees = 1;

    if (len < PACK_HEADER_BYTES || data[4] != PACK3_VERSION)
        return 1;
    if (pack3_table(sc->v, id, data, len, &recs, &n) != 0) {
        pqv_error_clear();
        return 0;
    }
    memset(&table, 0, sizeof(table));
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = chunks_put(&table, &recs[i]);
    free(recs);
    for (size_t i = 0; rc == 0 && agrees && i < sc->st.chunks.cap; i++) {
        const struct chunk_rec *r = &sc->st.chunks.slots[i], *t;
        if (memcmp(r->id, zero, CHUNK_ID_BYTES) == 0 ||
            memcmp(r->pack_id, id, PACK_ID_BYTES) != 0 || chunks_find(&sc->used, r->id) == NULL)
            continue;
        agrees = (t = chunks_find(&table, r->id)) != NULL && t->pack_off == r->pack_off &&
            t->stored_len == r->stored_len && t->plain_len == r->plain_len && t->flags == r->flags;
    }
    chunks_free(&table);
    return rc == 0 && agrees;
}

/* verify_packs(sc): every described pack's SHA-256, and a pack of format
 * 3's table against the chain's records (--read-data). */
static int
verify_packs(struct scan *sc)
{
    pqv_vault *v = sc->v;

    for (size_t i = 0; i < sc->nrefs; i++) {
        const struct ref *r = &sc->refs[i];
        char sname[STORAGE_NAME_MAX];
        uint8_t *buf, hash[32];
        size_t len;
        int rc;
        if (!r->seen || r->bad || r->v1 || !r->described)
            continue;
        pack_name(r->id, sname);
        rc = v->storage->ops->get(v->storage, sname, &buf, &len, (size_t)r->size + 1);
        if (rc == PQV_E_NOTFOUND || rc == PQV_E_INTEGRITY)
            continue; /* reported by the structural pass, or removed since */
        if (rc != 0)
            return rc;
        rc = kdf_sha256(hash, buf, len);
        int agrees = rc == 0 && util_ct_equal(hash, r->hash, 32) && table_agrees(sc, r->id, buf, len);
        free(buf);
        if (rc != 0)
            return rc;
        if (!util_ct_equal(hash, r->hash, 32)) {
            sc->refs[i].bad = 1;
            sc->res->damaged++;
            vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR,
                sc->names[r->entry], "%s does not match its SHA-256", sname);
        } else if (!agrees) {
            sc->refs[i].bad = 1;
            sc->res->damaged++;
            vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR,
                sc->names[r->entry], "%s: its own table does not hold the chain's records of "
                "its chunks", sname);
        }
    }
    return 0;
}

/* in_bad_pack(sc, e): whether an extent of ${e} lies in a pack or object
 * already reported (its damage is counted once). */
static int
in_bad_pack(const struct scan *sc, const struct entry *e)
{
    for (uint32_t k = 0; k < e->nextents; k++) {
        struct ref key;
        const struct ref *hit;
        memset(&key, 0, sizeof(key));
        memcpy(key.id, e->extents[k].pack_id, PACK_ID_BYTES);
        key.v1 = (e->extents[k].pack_flags & PACK_V1_OBJECT) != 0;
        hit = util_search(&key, sc->refs, sc->nrefs, sizeof(*sc->refs), check_compare_refs);
        if (hit == NULL || hit->bad)
            return 1;
    }
    return 0;
}

/* verify_extents(sc): every extent of every file opened (--read-data). */
static int
verify_extents(struct scan *sc)
{
    pqv_vault *v = sc->v;
    uint8_t *plain = malloc(PQV_OBJECT_MAX_PLAIN), *sealed = malloc(pack_sealed_max()),
            *scratch = malloc(pack_scratch_size());
    int rc = 0;

    if (plain == NULL || sealed == NULL || scratch == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < sc->st.n && rc == 0; i++) {
        const struct entry *e = &sc->st.entries[i];
        uint8_t key[PQV_FILE_KEY_BYTES];
        if (e->kind != KIND_FILE || e->nextents == 0 || in_bad_pack(sc, e))
            continue;
        if ((rc = state_file_key(v, &sc->st, e, key)) != 0) {
            if (rc != PQV_E_INTEGRITY)
                break;
            sc->res->damaged++;
            vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, e->name, "%s",
                pqv_error_detail());
            rc = 0;
            continue;
        }
        for (uint32_t k = 0; k < e->nextents; k++) {
            rc = pack_read_extent(v, e->suite, key, k, &e->extents[k], plain, sealed, scratch);
            /* A chunk's plaintext is its identity's (its blob's key
             * already is). */
            if (rc == 0 && e->extents[k].chunk) {
                uint8_t id[CHUNK_ID_BYTES];
                if ((rc = chunk_id(v->chunk_id_key, plain, e->extents[k].plain_len, id)) == 0 &&
                    !util_ct_equal(id, e->extents[k].chunk_id, CHUNK_ID_BYTES))
                    rc = error_set(PQV_E_INTEGRITY, NULL, "chunk %u's plaintext is not its "
                        "identity's", k);
            }
            util_wipe(plain, e->extents[k].plain_len);
            if (rc == PQV_E_INTEGRITY) {
                sc->res->damaged++;
                vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, e->name, "%s",
                    pqv_error_detail());
                rc = 0;
                break; /* one report per file */
            }
            if (rc == PQV_E_NOTFOUND) {
                /* Listed by the structural pass, yet not there to read:
                 * removed since (a gc elsewhere), or unreadable. */
                sc->res->damaged++;
                vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, e->name, "%s",
                    pqv_error_detail());
                rc = 0;
                break;
            }
            if (rc != 0)
                break;
        }
        util_wipe(key, sizeof(key));
    }
done:
    free(plain);
    free(sealed);
    if (scratch != NULL)
        util_wipe(scratch, pack_scratch_size());
    free(scratch);
    return rc;
}

int
check_read_data(struct scan *sc)
{
    int rc = verify_packs(sc);

    return rc == 0 ? verify_extents(sc) : rc;
}
