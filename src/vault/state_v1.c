/*
 * state_v1.c: format 1 under the state's interface (state.h), and the
 * check that a config of format 1 is believed: a format-1 vault's records
 * seen as entries whose extents are format-1 objects (so every reader of
 * the vault is written once, for format 2), and the downgrade check
 * (docs/FORMAT.md section 17).
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/localstate.h"
#include "vault/names.h"
#include "vault/segment.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

/* ---- format 1 as a state ---- */

int
state_v1_entry_of_record(const struct record *r, struct entry *e)
{
    memset(e, 0, sizeof(*e));
    if ((e->name = strdup(r->entry.name)) == NULL)
        return PQV_E_NOMEM;
    e->kind = r->entry.type == PQV_ENTRY_DIR ? KIND_DIR : KIND_FILE;
    e->perm = r->entry.mode & 07777;
    e->mtime_sec = r->entry.mtime_sec;
    e->mtime_nsec = r->entry.mtime_nsec;
    e->size = r->entry.size;
    e->suite = r->entry.aead;
    e->key_state = e->kind == KIND_FILE ? KEY_V1 : KEY_NONE;
    if (r->entry.nobjects > 0 &&
        (e->extents = calloc(r->entry.nobjects, sizeof(*e->extents))) == NULL) {
        entry_clear(e);
        return PQV_E_NOMEM;
    }
    for (uint32_t k = 0; k < r->entry.nobjects; k++, e->nextents++) {
        struct extent *x = &e->extents[k];
        x->file_off = (uint64_t)k * PQV_OBJECT_MAX_PLAIN;
        x->plain_len = (uint32_t)object_plain_len(&r->entry, k);
        x->stored_len = (uint32_t)object_sealed_size(x->plain_len);
        memcpy(x->pack_id, r->object_ids[k], PACK_ID_BYTES);
        x->pack_flags = PACK_V1_OBJECT;
    }
    return 0;
}

int
state_v1_load(pqv_vault *v, struct state *st, const struct names_walk *w)
{
    struct catalogue cat;
    int rc;

    if ((rc = catalogue_load(v, &cat, w)) != 0)
        return rc;
    if (cat.n > 0 && (st->entries = calloc(cat.n, sizeof(*st->entries))) == NULL) {
        catalogue_free(&cat);
        return PQV_E_NOMEM;
    }
    for (size_t i = 0; i < cat.n && rc == 0; i++) {
        if ((rc = state_v1_entry_of_record(&cat.records[i], &st->entries[st->n])) == 0)
            st->n++;
    }
    catalogue_free(&cat);
    return rc;
}

int
state_v1_lookup(pqv_vault *v, const char *name, struct entry *out)
{
    struct record r;
    int rc;

    if ((rc = record_read(v, name, &r)) != 0)
        return rc;
    rc = state_v1_entry_of_record(&r, out);
    record_clear(&r);
    return rc;
}

/* ---- a config of format 1 beside format 2 ---- */

int
state_v1_segments(pqv_vault *v, uint64_t *newest, uint8_t chain[32])
{
    struct segment s;
    char sname[STORAGE_NAME_MAX];
    int rc;

    if ((rc = state_newest_epoch(v, NULL, newest)) != 0 || *newest != 1)
        return rc;
    /* Half upgraded (FORMAT.md section 17) if segment 1 is the upgrade's
     * base. */
    if ((rc = state_read_segment(v, 1, &s)) != 0)
        return rc;
    segment_name(1, sname);
    if (s.kind != SEGMENT_BASE)
        rc = error_set(PQV_E_INTEGRITY, sname, "a format-1 vault holds a segment that is not an "
            "upgrade's base");
    memcpy(chain, s.chain, 32);
    segment_free(&s);
    return rc;
}

int
state_v1_check(pqv_vault *v)
{
    struct localstate seen;
    uint64_t newest;
    uint8_t chain[32];
    int rc;

    if (v->config.version >= 2 || v->identity == NULL)
        return 0;
    /* What this machine saw first, then the vault (as state_current). */
    if ((rc = localstate_load(v, &seen)) != 0 || (rc = state_v1_segments(v, &newest, chain)) != 0)
        return rc;
    if (newest == 0 && !seen.known)
        return 0; /* a format-1 vault */
    if (newest == 1 && (!seen.known || (seen.epoch == 1 && util_ct_equal(seen.chain, chain, 32))))
        return 0; /* half upgraded: the next writer finishes the upgrade */
    /* Upgraded by another command since this one read the config? */
    if ((rc = vault_reload_config(v)) != 0)
        return rc < 0 ? rc : 0;
    if (newest > 1)
        return error_set(PQV_E_INTEGRITY, CONFIG_NAME, "downgrade: the config says format 1, "
            "but the vault holds format-2 segments up to epoch %llu (a config from before its "
            "upgrade has been put back)", (unsigned long long)newest);
    if (newest == 1 && seen.epoch == 1)
        return error_set(PQV_E_INTEGRITY, NULL, "fork: the vault's epoch 1 is not the one seen "
            "here before (another upgrade of the vault is being served; if you put it back "
            "yourself, accept it with pqvault accept)");
    return error_set(PQV_E_INTEGRITY, CONFIG_NAME, "downgrade: the config says format 1, but "
        "this vault was seen here as format %d at epoch %llu (a copy from before its upgrade "
        "is being served; if you put it back yourself, accept it with pqvault accept)",
        seen.format, (unsigned long long)seen.epoch);
}
