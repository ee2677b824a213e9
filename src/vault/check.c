/*
 * check.c: check and gc (format 2; format 1 in check_v1.c).
 *
 * check verifies the catalogue (every segment from the base up: tags,
 * chain, the key file against the history, the local state; every block),
 * then the storage against it: every pack an entry refers to present, with
 * the size its segment recorded (or at least as long as its extents reach),
 * every format-1 object an upgraded entry refers to present with its size.
 * With --read-data also every pack's SHA-256 and every extent's tags (which
 * needs one decapsulation per segment).  Packs and segments nothing refers
 * to, format-1 records and objects left by an upgrade, and temporaries are
 * leftovers: reported, not damage, and gc's to remove.
 *
 * gc folds the chain into a base (compact.c), then deletes the leftovers.
 * It refuses while anything is damaged: a block that fails to open may
 * refer to packs that look unreferenced.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/util.h"
#include "vault/compact.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/inbox.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/pack3.h"
#include "vault/repack.h"
#include "vault/reserve.h"
#include "vault/segment.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"
#include "vault/check_internal.h"

int
check_compare_refs(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;

    if (x->v1 != y->v1)
        return x->v1 - y->v1;
    return memcmp(x->id, y->id, PACK_ID_BYTES);
}

/* ref_entry(ctx, e): the packs and objects of an entry of a kept state,
 * one ref per extent (made one per pack below); its chunks as used. */
static int
ref_entry(void *ctx, const struct entry *e)
{
    struct scan *sc = ctx;
    int rc = 0;

    if (e->nextents == 0)
        return 0;
    if (sc->nnames == sc->capnames) {
        size_t cap = sc->capnames ? 2 * sc->capnames : 1024;
        char **grown = realloc(sc->names, cap * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        sc->names = grown;
        sc->capnames = cap;
    }
    if ((sc->names[sc->nnames] = strdup(e->name)) == NULL)
        return PQV_E_NOMEM;
    sc->nnames++;
    for (uint32_t j = 0; j < e->nextents && rc == 0; j++) {
        const struct extent *x = &e->extents[j];
        struct ref *r;
        if (x->chunk) {
            struct chunk_rec id;
            memset(&id, 0, sizeof(id));
            memcpy(id.id, x->chunk_id, CHUNK_ID_BYTES);
            if (chunks_find(&sc->used, id.id) == NULL && (rc = chunks_put(&sc->used, &id)) != 0)
                break;
            if (!x->located)
                continue; /* no place known: lost_chunks reports it */
        }
        if (sc->nrefs == sc->caprefs) {
            size_t cap = sc->caprefs ? 2 * sc->caprefs : 1024;
            struct ref *grown = realloc(sc->refs, cap * sizeof(*grown));
            if (grown == NULL)
                return PQV_E_NOMEM;
            sc->refs = grown;
            sc->caprefs = cap;
        }
        r = &sc->refs[sc->nrefs++];
        memset(r, 0, sizeof(*r));
        memcpy(r->id, x->pack_id, PACK_ID_BYTES);
        r->v1 = (x->pack_flags & PACK_V1_OBJECT) != 0;
        r->reach = r->v1 ? x->stored_len : (uint64_t)PACK_HEADER_BYTES + x->pack_off + x->stored_len;
        r->entry = sc->nnames - 1;
    }
    return rc;
}

/* collect_refs(sc): every pack and object of every entry of every state
 * the chain keeps (the current one, and the kept snapshots'), one ref each. */
static int
collect_refs(struct scan *sc)
{
    const struct state *st = &sc->st;
    struct ref *refs;
    size_t k;
    int rc;

    if ((rc = chunks_of_state(sc->v, &sc->st, &sc->w)) != 0 ||
        (rc = snapshots_each_entry(sc->v, &sc->st, &sc->kept, &sc->w, ref_entry, sc)) != 0)
        return rc;
    refs = sc->refs;
    k = sc->nrefs;
    util_sort(refs, k, sizeof(*refs), check_compare_refs);
    /* One per pack: the furthest reach; the first entry met. */
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        if (n > 0 && check_compare_refs(&refs[n - 1], &refs[i]) == 0) {
            if (refs[i].reach > refs[n - 1].reach)
                refs[n - 1].reach = refs[i].reach;
            if (refs[i].entry < refs[n - 1].entry)
                refs[n - 1].entry = refs[i].entry;
            continue;
        }
        refs[n++] = refs[i];
    }
    /* What the segments recorded. */
    for (size_t s = 0; s < st->nsegs; s++)
        for (size_t p = 0; p < st->segs[s].t.npacks; p++) {
            const struct seg_pack *sp = &st->segs[s].t.packs[p];
            struct ref key, *hit;
            if (!(sp->flags & PACK_INTRODUCED))
                continue;
            memset(&key, 0, sizeof(key));
            memcpy(key.id, sp->id, PACK_ID_BYTES);
            if ((hit = util_search(&key, refs, n, sizeof(*refs), check_compare_refs)) != NULL) {
                hit->described = 1;
                hit->size = sp->size;
                memcpy(hit->hash, sp->hash, 32);
            }
        }
    sc->nrefs = n;
    return 0;
}

/* lost_chunks(sc): a file of format 3 whose chunk has no record in the
 * chain is damaged (its data cannot be found). */
static void
lost_chunks(struct scan *sc)
{
    for (size_t i = 0; i < sc->st.n; i++) {
        const struct entry *e = &sc->st.entries[i];
        for (uint32_t j = 0; e->chunked && j < e->nextents; j++)
            if (!e->extents[j].located) {
                sc->res->damaged++;
                vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, e->name,
                    "chunk %u has no record in the chain (check --repair-index looks for it "
                    "in the packs)", j);
                break;
            }
    }
}

/* leftover(sc, name, size, what): not referred to: reported (not damage:
 * PQV_REPORT_INFO, unless the vault is damaged), counted with its bytes,
 * and collected for gc (while another writer runs, taken as its own). */
static int
leftover(struct scan *sc, const char *name, uint64_t size, const char *what)
{
    /* At a snapshot (--at), what other states use is not examined: no
     * leftovers are judged (gc judges them from the newest state). */
    if (sc->v->at_epoch != 0)
        return 0;
    if (sc->writer[0] != '\0') {
        sc->res->in_flight++;
        vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_INFO, name,
            "%s no entry refers to yet (a writer, %s, is running)", what, sc->writer);
        return 0;
    }
    sc->res->orphans++;
    sc->res->orphan_bytes += size;
    if (sc->res->damaged > 0)
        vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_WARNING, name,
            "%s no readable entry refers to (a damaged block may; gc removes it once the "
            "damage is repaired)", what);
    else
        vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_INFO, name,
            "%s no entry refers to (gc removes it)", what);
    return sc->leftovers != NULL ? names_list_add(sc->leftovers, name) : 0;
}

static int
scan_blob(struct scan *sc, const char *name, const uint8_t *id, uint64_t size, int v1)
{
    struct ref key, *hit;

    memset(&key, 0, sizeof(key));
    memcpy(key.id, id, PACK_ID_BYTES);
    key.v1 = v1;
    sc->res->objects++;
    sc->res->bytes += size;
    if ((hit = util_search(&key, sc->refs, sc->nrefs, sizeof(*sc->refs), check_compare_refs)) == NULL)
        return leftover(sc, name, size, v1 ? "a format-1 object" : "a pack");
    hit->seen = 1;
    if ((hit->described || v1) && size != (v1 ? hit->reach : hit->size)) {
        hit->bad = 1;
        sc->res->damaged++;
        vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR,
            sc->names[hit->entry], "%s has %llu bytes, expected %llu", name,
            (unsigned long long)size, (unsigned long long)(v1 ? hit->reach : hit->size));
    } else if (size < hit->reach) {
        hit->bad = 1;
        sc->res->damaged++;
        vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR,
            sc->names[hit->entry], "%s has %llu bytes, its extents need %llu", name,
            (unsigned long long)size, (unsigned long long)hit->reach);
    }
    return 0;
}

static int
scan_pack(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    return scan_blob(ctx, name, id, size, 0);
}

static int
scan_object(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    return scan_blob(ctx, name, id, size, 1);
}

static int
scan_segment(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct scan *sc = ctx;

    if (!snapshots_needed(&sc->kept, &sc->st, util_load_be64(id)))
        return leftover(sc, name, size, "a segment no kept state needs");
    return 0;
}

static int
scan_record(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct scan *sc = ctx;

    (void)id;
    /* Left by an upgrade interrupted while it deleted them. */
    sc->res->orphans++;
    sc->res->orphan_bytes += size;
    vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_INFO, name,
        "a format-1 record left by the upgrade (gc removes it)");
    return sc->leftovers != NULL ? names_list_add(sc->leftovers, name) : 0;
}

/* report_conflicts(sc): a name that is a file and also has names below it
 * cannot be restored: damage to repair with rm. */
static void
report_conflicts(struct scan *sc)
{
    const struct state *st = &sc->st;

    for (size_t i = 0; i + 1 < st->n; i++) {
        const char *name = st->entries[i].name;
        size_t len = strlen(name);
        if (st->entries[i].kind == KIND_DIR)
            continue;
        for (size_t j = i + 1; j < st->n && strncmp(st->entries[j].name, name, len) == 0; j++)
            if (st->entries[j].name[len] == '/') {
                sc->res->damaged++;
                vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, name,
                    "is not a directory but has names below it (%s): remove one of them with rm",
                    st->entries[j].name);
                break;
            }
    }
}

static void
scan_free(struct scan *sc)
{
    state_free(&sc->st);
    snapshots_free(&sc->kept);
    free(sc->refs);
    sc->refs = NULL;
    for (size_t i = 0; i < sc->nnames; i++)
        free(sc->names[i]);
    free(sc->names);
    sc->names = NULL;
    sc->nnames = sc->capnames = 0;
    chunks_free(&sc->used);
}

/* scan(v, sc, res, report, ctx, leftovers): the structural pass of check
 * and gc.  A catalogue that does not verify fails it (nothing can be said
 * of the rest); a damaged block is counted and the rest examined. */
static int
scan(pqv_vault *v, struct scan *sc, struct pqv_check_result *res, pqv_report_fn report,
    void *report_ctx, struct names_list *leftovers)
{
    int rc;

    memset(sc, 0, sizeof(*sc));
    sc->v = v;
    sc->res = res;
    sc->leftovers = leftovers;
    sc->w.report = report;
    sc->w.report_ctx = report_ctx;
    sc->w.damaged = &res->damaged;
    sc->w.temporaries = &res->temporaries;
    sc->w.leftovers = leftovers;
    sc->w.in_flight = &res->in_flight;
    /* Before the catalogue: a writer that starts after this point writes
     * packs no entry refers to yet (gc holds the lock: never). */
    if (!v->locked && v->storage->ops->lock_probe != NULL &&
        v->storage->ops->lock_probe(v->storage, sc->writer, sizeof(sc->writer)) != 1)
        sc->writer[0] = '\0';
    if (sc->writer[0] != '\0')
        vault_report(report, report_ctx, PQV_REPORT_WARNING, NULL,
            "a writer (%s) is running: packs no entry refers to are taken as its own", sc->writer);
    sc->w.writer_running = sc->writer;
    /* The chain is read quietly: segments/ is walked, and each name
     * reported and counted, once below. */
    uint64_t ignored = 0;
    struct names_walk quiet = { NULL, NULL, &ignored, NULL, NULL, sc->writer, NULL };
    if ((rc = state_current(v, &sc->st, &quiet)) != 0)
        return rc;
    res->epoch = sc->st.epoch;
    res->segments = sc->st.nsegs;
    if ((rc = state_load_reporting(v, &sc->st, &sc->w)) != 0)
        goto fail;
    res->records = sc->st.n;
    /* At a snapshot (--at), its own state only: the kept list of the
     * current chain is not this state's to judge. */
    if (v->at_epoch == 0 && (rc = snapshots_load(&sc->st, &sc->kept)) != 0)
        goto fail;
    report_conflicts(sc);
    lost_chunks(sc);
    if ((rc = collect_refs(sc)) != 0 ||
        (rc = names_walk(v->storage, "segments", 8, &sc->w, scan_segment, sc)) != 0 ||
        (rc = names_walk(v->storage, "packs", PACK_ID_BYTES, &sc->w, scan_pack, sc)) != 0 ||
        (rc = names_walk(v->storage, "objects", OBJECT_ID_BYTES, &sc->w, scan_object, sc)) != 0 ||
        (rc = names_walk(v->storage, "records", NAME_HASH_BYTES, &sc->w, scan_record, sc)) != 0)
        goto fail;
    for (size_t i = 0; i < sc->nrefs; i++) {
        char sname[STORAGE_NAME_MAX];
        if (sc->refs[i].seen)
            continue;
        sc->refs[i].bad = 1;
        if (sc->refs[i].v1)
            object_storage_name(sc->refs[i].id, sname);
        else
            pack_name(sc->refs[i].id, sname);
        res->missing++;
        res->damaged++;
        vault_report(report, report_ctx, PQV_REPORT_ERROR, sc->names[sc->refs[i].entry],
            "%s is missing", sname);
    }
    /* Temporaries beside the config and key file. */
    if ((rc = names_walk(v->storage, "", 0, &sc->w, NULL, NULL)) != 0)
        goto fail;
    return 0;
fail:
    scan_free(sc);
    return rc;
}

/* What check without the key carries from name to name: the segments'
 * versions (format 3 follows format 2 in a chain, never the other way). */
struct nokey {
    pqv_vault *v;
    struct names_walk *w;
    struct pqv_check_result *res;
    uint64_t last_v2, first_v3;
};

/* What a segment's header says without the key. */
static int
check_segment_header(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct nokey *c = ctx;
    uint8_t h[SEGMENT_HEADER_BYTES];
    int rc;

    if (size < SEGMENT_HEADER_BYTES) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "too short for a segment (%llu bytes)",
            (unsigned long long)size);
    } else {
        rc = c->v->storage->ops->get_range(c->v->storage, name, 0, h, sizeof(h));
        if (rc == 0)
            rc = segment_check_header(h, sizeof(h), util_load_be64(id), c->v->config.vault_id);
        /* The head's length is in the header: a segment cut inside it. */
        if (rc == 0 && size - SEGMENT_HEADER_BYTES < util_load_be32(h + 64))
            rc = error_set(PQV_E_INTEGRITY, NULL, "segment is truncated (%llu bytes, its head "
                "alone needs %llu)", (unsigned long long)size,
                (unsigned long long)SEGMENT_HEADER_BYTES + util_load_be32(h + 64));
    }
    if (rc == PQV_E_NOTFOUND)
        return 0;
    if (rc == 0 && h[4] == 3 && c->v->config.version < 3)
        rc = error_set(PQV_E_INTEGRITY, NULL, "a segment of format 3 in a vault of format %d",
            c->v->config.version);
    if (rc == PQV_E_INTEGRITY || rc == PQV_E_UNSUPPORTED) {
        c->res->damaged++;
        vault_report(c->w->report, c->w->report_ctx, PQV_REPORT_ERROR, name, "%s",
            pqv_error_detail());
        return 0;
    }
    if (rc == 0) {
        uint64_t e = util_load_be64(id);
        c->res->segments++;
        if (e > c->res->epoch)
            c->res->epoch = e;
        if (h[4] == 2 && e > c->last_v2)
            c->last_v2 = e;
        if (h[4] == 3 && (c->first_v3 == 0 || e < c->first_v3))
            c->first_v3 = e;
    }
    return rc;
}

static int
check_pack_size(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct nokey *c = ctx;

    uint8_t h[PACK_HEADER_BYTES];

    (void)id;
    c->res->objects++;
    c->res->bytes += size;
    if (size < PACK_HEADER_BYTES) {
        c->res->damaged++;
        vault_report(c->w->report, c->w->report_ctx, PQV_REPORT_ERROR, name,
            "too short for a pack (%llu bytes)", (unsigned long long)size);
        return 0;
    }
    /* A pack of format 3 (its header says) is a padded length with room for
     * its table and locator: what can be said without the key. */
    if (c->v->storage->ops->get_range(c->v->storage, name, 0, h, sizeof(h)) == 0 &&
        h[4] == PACK3_VERSION &&
        (size < PACK_HEADER_BYTES + PQV_AEAD_TAG_BYTES + PACK3_LOCATOR_BYTES ||
            !pack3_is_padded(size))) {
        c->res->damaged++;
        vault_report(c->w->report, c->w->report_ctx, PQV_REPORT_ERROR, name,
            "not the length of a pack of format 3 (%llu bytes: truncated?)",
            (unsigned long long)size);
    }
    pqv_error_clear();
    return 0;
}

/* check_without_key(v, report, ctx, res): the config and key file (parsed
 * at open), every segment's header, every pack's name and size, and
 * temporaries.  The epoch is the newest segment's whose header is sound
 * (unauthenticated: no entry can be counted without the key). */
static int
check_without_key(pqv_vault *v, pqv_report_fn report, void *report_ctx,
    struct pqv_check_result *res)
{
    struct names_walk w = { report, report_ctx, &res->damaged, &res->temporaries, NULL, NULL, NULL };
    struct nokey c = { v, &w, res, 0, 0 };
    int rc;

    check_v1_keyfile_status(v, report, report_ctx, res);
    if ((rc = names_walk(v->storage, "segments", 8, &w, check_segment_header, &c)) != 0 ||
        (rc = names_walk(v->storage, "packs", PACK_ID_BYTES, &w, check_pack_size, &c)) != 0)
        return rc;
    if (c.first_v3 != 0 && c.last_v2 > c.first_v3) {
        char sname[STORAGE_NAME_MAX];
        segment_name(c.last_v2, sname);
        res->damaged++;
        vault_report(report, report_ctx, PQV_REPORT_ERROR, sname, "a segment of format 2 after "
            "one of format 3 (epoch %llu)", (unsigned long long)c.first_v3);
    }
    if (res->segments == 0) {
        res->damaged++;
        vault_report(report, report_ctx, PQV_REPORT_ERROR, "segments", "no catalogue segment");
    }
    return names_walk(v->storage, "", 0, &w, NULL, NULL);
}

static int
damage_found(const struct pqv_check_result *res)
{
    return error_set(PQV_E_INTEGRITY, NULL, "%llu damaged item%s found",
        (unsigned long long)res->damaged, res->damaged == 1 ? "" : "s");
}

int
pqv_vault_check(pqv_vault *v, const struct pqv_check_options *opt,
    struct pqv_check_result *result)
{
    static const struct pqv_check_options none = { 0, NULL, NULL };
    struct pqv_check_result res;
    struct scan sc;
    int rc;

    if (v == NULL)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &none;
    if ((rc = state_v1_check(v)) != 0) {
        /* A downgraded config: that is the finding. */
        if (rc != PQV_E_INTEGRITY)
            return rc;
        memset(&res, 0, sizeof(res));
        res.format = v->config.version;
        res.damaged = 1;
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR,
            pqv_error_last()->subject[0] != '\0' ? pqv_error_last()->subject : CONFIG_NAME, "%s",
            pqv_error_last()->reason);
        if (result != NULL)
            *result = res;
        return damage_found(&res);
    }
    if (v->config.version == 1)
        return check_v1(v, opt, result);
    memset(&res, 0, sizeof(res));
    res.format = v->config.version;
    if (v->identity == NULL) {
        rc = check_without_key(v, opt->report, opt->report_ctx, &res);
    } else if ((rc = scan(v, &sc, &res, opt->report, opt->report_ctx, NULL)) == 0) {
        if (opt->read_data)
            rc = check_data_read(&sc);
        scan_free(&sc);
    } else if (rc == PQV_E_INTEGRITY) {
        /* The catalogue itself does not verify: that is the finding. */
        res.damaged++;
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR,
            pqv_error_last()->subject[0] != '\0' ? pqv_error_last()->subject : "catalogue", "%s",
            pqv_error_last()->reason);
        rc = 0;
    }
    /* Inbox batches: reported (damaged ones too), never the vault's damage. */
    if (rc == 0)
        rc = inbox_check(v, opt->report, opt->report_ctx, &res);
    if (rc == 0)
        reserve_check(v, opt->report, opt->report_ctx);
    if (result != NULL)
        *result = res;
    if (rc == 0 && res.damaged > 0)
        rc = damage_found(&res);
    return rc;
}

/* remove_garbage(v, garbage, res, opt): every name of ${garbage} removed
 * (gone already: fine), then the list emptied. */
static int
remove_garbage(pqv_vault *v, struct names_list *garbage, struct pqv_check_result *res,
    const struct pqv_check_options *opt)
{
    int rc = 0;

    for (size_t i = 0; i < garbage->n && rc == 0; i++) {
        int d = v->storage->ops->del(v->storage, garbage->names[i]);
        if (d != 0 && d != PQV_E_NOTFOUND) {
            rc = d;
            break;
        }
        res->removed++;
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, garbage->names[i], "removed");
    }
    if (rc == 0)
        rc = v->storage->ops->barrier(v->storage);
    names_list_free(garbage);
    return rc;
}

/* no_room(rc, opt, what): a step of gc that needs space (a repack, a
 * compaction) failed for lack of it: reported and skipped (gc's purpose on
 * a full disk is removing what is unused, which needs none). */
static int
no_room(int rc, const struct pqv_check_options *opt, const char *what)
{
    if (rc != PQV_E_NOSPACE)
        return rc;
    vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, NULL, "no room to %s: "
        "skipped (gc again once space is free)", what);
    pqv_error_clear();
    return 0;
}

static int
gc(pqv_vault *v, const struct pqv_check_options *opt, struct pqv_check_result *result)
{
    static const struct pqv_check_options none = { 0, NULL, NULL };
    struct pqv_check_result res;
    struct names_list garbage;
    struct scan sc;
    uint64_t base;
    int rc, full;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (opt == NULL)
        opt = &none;
    if ((rc = state_v1_check(v)) != 0)
        return rc;
    if (v->config.version == 1)
        return check_v1_gc(v, opt, result);
    if (v->config.version == 2 && (rc = upgrade_if_needed(v, opt->report, opt->report_ctx)) != 0)
        return rc;
    memset(&res, 0, sizeof(res));
    res.format = v->config.version;
    memset(&garbage, 0, sizeof(garbage));
    /* The reserve used (a full disk): what is unused goes first, before
     * anything that needs room is written. */
    full = reserve_short(v);
    if ((rc = scan(v, &sc, &res, NULL, NULL, &garbage)) != 0)
        goto out;
    /* A block that fails to open may refer to packs that look unused. */
    if (res.damaged > 0) {
        scan_free(&sc);
        rc = error_set(PQV_E_INTEGRITY, NULL,
            "refusing to collect garbage while the vault is damaged (run check)");
        goto out;
    }
    /* Format 3: packs mostly unused rewritten first; the chain is then
     * read again (the old packs are leftovers now).  Short of space, the
     * packs no kept state uses are removed first (they are unused whatever
     * the repack and the compaction do), and a repack that does not fit
     * is skipped. */
    if (full && garbage.n > 0 && (rc = remove_garbage(v, &garbage, &res, opt)) != 0) {
        scan_free(&sc);
        goto out;
    }
    rc = repack(v, &sc.st, &sc.used, opt->report, opt->report_ctx, &res.repacked);
    if (rc == PQV_E_NOSPACE && !full && garbage.n > 0) {
        full = 1;
        pqv_error_clear();
        if ((rc = remove_garbage(v, &garbage, &res, opt)) == 0)
            rc = repack(v, &sc.st, &sc.used, opt->report, opt->report_ctx, &res.repacked);
    }
    if ((rc = no_room(rc, opt, "rewrite the packs that are mostly unused")) != 0) {
        scan_free(&sc);
        goto out;
    }
    if (res.repacked > 0) {
        uint64_t repacked = res.repacked, removed = res.removed;
        scan_free(&sc);
        names_list_free(&garbage);
        memset(&garbage, 0, sizeof(garbage));
        memset(&res, 0, sizeof(res));
        res.format = v->config.version;
        res.repacked = repacked;
        res.removed = removed;
        if ((rc = scan(v, &sc, &res, NULL, NULL, &garbage)) != 0)
            goto out;
    }
    base = sc.st.base;
    /* Compaction pays when the chain holds entries the state no longer
     * has (replaced or removed names); a chain of additions is left as it
     * is, so gc of a vault with nothing to collect changes nothing.
     * Leftover packs need no compaction: no entry refers to them.  (Its
     * commit may use the reserve; without room even so, the chain stays
     * as it is, and what is unused is still removed.) */
    uint64_t chained = 0;
    for (size_t i = 0; i < sc.st.nsegs; i++)
        chained += sc.st.segs[i].nentries;
    if (sc.st.nsegs > 1 && chained > sc.st.n &&
        (rc = no_room(compact(v, &sc.st, &sc.used, opt->report, opt->report_ctx, &base), opt,
             "fold the chain into a base")) != 0) {
        scan_free(&sc);
        goto out;
    }
    /* The new base is durable: everything before it that no kept
     * snapshot needs is garbage. */
    compact_drop_old_segments(v, base, &sc.kept);
    scan_free(&sc);
    if ((rc = remove_garbage(v, &garbage, &res, opt)) != 0)
        goto out;
    /* Space freed: the reserve made again (a warning if it still does not
     * fit). */
    if (reserve_ensure(v, opt->report, opt->report_ctx, 1))
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, "reserve", "made again "
            "(%u MiB kept for rm and gc on a full disk)", VAULT_RESERVE_BYTES >> 20);
out:
    names_list_free(&garbage);
    if (result != NULL)
        *result = res;
    return rc;
}

/* (A command that frees space: its commit may use the reserve.) */
int
pqv_vault_gc(pqv_vault *v, const struct pqv_check_options *opt, struct pqv_check_result *result)
{
    int rc, saved = v != NULL ? v->reserve_use : 0;

    if (v == NULL)
        return PQV_E_INVAL;
    v->reserve_use = 1;
    rc = gc(v, opt, result);
    v->reserve_use = saved;
    return rc;
}
