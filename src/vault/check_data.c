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

/*
 * check_data.c: check --read-data (check.c runs it after the structural
 * pass): every byte the kept states need is read and verified.
 *
 * Format 3 is verified pack by pack, several packs at once on the pool:
 * each pack is read whole in one sequential read (as restic check
 * --read-data does), its SHA-256 compared with its segment's record, its
 * own table with the chain's records, and every chunk a kept state uses
 * that the chain places in it opened from that buffer (authenticated,
 * decompressed, its identity recomputed): each chunk once, however many
 * files and snapshots share it.  The files of the newest state are then
 * judged from those results without reading again; only extents of format
 * 2 are read one by one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/pool.h"
#include "util/util.h"
#include "vault/check_internal.h"
#include "vault/chunk.h"
#include "vault/chunker.h"
#include "vault/entry.h"
#include "vault/pack.h"
#include "vault/pack3.h"

/* A chunk that failed, and why (reported with the files that use it). */
struct bad_chunk {
    uint8_t id[CHUNK_ID_BYTES];
    char pack[STORAGE_NAME_MAX];
    char why[PQV_ERROR_REASON_MAX];
    int reported;                /* a file of the newest state named it */
};

/* One pack verified on the pool. */
struct pack_check {
    struct pool_job job;
    struct scan *sc;
    size_t ref;                  /* its sc->refs index */
    const struct chunk_rec **recs; /* the used chunks the chain places in it */
    size_t nrecs;
    uint8_t *plain, *scratch;    /* a chunk's buffers, kept from pack to pack */
    /* Results, read by the thread that waits for the job: */
    int missing;                 /* not there to read (the structural pass said so) */
    int hash_ok, table_ok;
    int format3;                 /* its chunks were opened here */
    struct bad_chunk *bad;
    size_t nbad;
};

/* What the pass keeps. */
struct data_pass {
    const struct chunk_rec **placed;   /* used, located chunks by (pack, offset) */
    size_t nplaced;
    struct bad_chunk *bad;             /* sorted by id once all packs are done */
    size_t nbad;
    unsigned char *checked;            /* per sc->refs: its chunks were verified */
};

static int
compare_placed(const void *a, const void *b)
{
    const struct chunk_rec *x = *(const struct chunk_rec *const *)a;
    const struct chunk_rec *y = *(const struct chunk_rec *const *)b;
    int c = memcmp(x->pack_id, y->pack_id, PACK_ID_BYTES);

    if (c != 0)
        return c;
    return x->pack_off < y->pack_off ? -1 : x->pack_off > y->pack_off;
}

static int
compare_bad(const void *a, const void *b)
{
    return memcmp(((const struct bad_chunk *)a)->id, ((const struct bad_chunk *)b)->id,
        CHUNK_ID_BYTES);
}

/* ref_of(sc, x): the pack or object extent ${x} lies in, or NULL. */
static const struct ref *
ref_of(const struct scan *sc, const struct extent *x)
{
    struct ref key;

    memset(&key, 0, sizeof(key));
    memcpy(key.id, x->pack_id, PACK_ID_BYTES);
    key.v1 = (x->pack_flags & PACK_V1_OBJECT) != 0;
    return util_search(&key, sc->refs, sc->nrefs, sizeof(*sc->refs), check_compare_refs);
}

/* place(sc, dp): every used chunk the chain places, ordered by pack. */
static int
place(struct scan *sc, struct data_pass *dp)
{
    static const uint8_t zero[CHUNK_ID_BYTES];
    size_t n = 0;

    if ((dp->placed = malloc((sc->st.chunks.n + 1) * sizeof(*dp->placed))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < sc->st.chunks.cap; i++) {
        const struct chunk_rec *r = &sc->st.chunks.slots[i];
        if (memcmp(r->id, zero, CHUNK_ID_BYTES) != 0 && n < sc->st.chunks.n &&
            chunks_find(&sc->used, r->id) != NULL)
            dp->placed[n++] = r;
    }
    dp->nplaced = n;
    util_sort(dp->placed, n, sizeof(*dp->placed), compare_placed);
    return 0;
}

/* in_pack(dp, id, n): the first of the placed chunks in pack ${id}. */
static const struct chunk_rec **
in_pack(const struct data_pass *dp, const uint8_t id[PACK_ID_BYTES], size_t *n)
{
    size_t lo = 0, hi = dp->nplaced, end;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (memcmp(dp->placed[mid]->pack_id, id, PACK_ID_BYTES) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (end = lo; end < dp->nplaced && memcmp(dp->placed[end]->pack_id, id, PACK_ID_BYTES) == 0;)
        end++;
    *n = end - lo;
    return dp->placed + lo;
}

/* table_agrees(sc, id, data, len, recs, n): a pack of format 3's own table
 * holds every record of the chain's index that places a used chunk in it
 * (${recs}), exactly (FORMAT.md section 22). */
static int
table_agrees(struct scan *sc, const uint8_t id[PACK_ID_BYTES], const uint8_t *data, size_t len,
    const struct chunk_rec **recs, size_t n)
{
    struct chunk_index table;
    struct chunk_rec *own;
    size_t nown;
    int rc = 0, agrees = 1;

    if (pack3_table(sc->v, id, data, len, &own, &nown) != 0) {
        pqv_error_clear();
        return 0;
    }
    memset(&table, 0, sizeof(table));
    for (size_t i = 0; i < nown && rc == 0; i++)
        rc = chunks_put(&table, &own[i]);
    free(own);
    for (size_t i = 0; rc == 0 && agrees && i < n; i++) {
        const struct chunk_rec *r = recs[i], *t;
        agrees = (t = chunks_find(&table, r->id)) != NULL && t->pack_off == r->pack_off &&
            t->stored_len == r->stored_len && t->plain_len == r->plain_len && t->flags == r->flags;
    }
    chunks_free(&table);
    return rc == 0 && agrees;
}

/* note_bad(pc, r, sname): chunk ${r} failed for the reason just set. */
static int
note_bad(struct pack_check *pc, const struct chunk_rec *r, const char *sname)
{
    struct bad_chunk *grown = realloc(pc->bad, (pc->nbad + 1) * sizeof(*grown));

    if (grown == NULL)
        return PQV_E_NOMEM;
    pc->bad = grown;
    memset(&grown[pc->nbad], 0, sizeof(*grown));
    memcpy(grown[pc->nbad].id, r->id, CHUNK_ID_BYTES);
    snprintf(grown[pc->nbad].pack, sizeof(grown[pc->nbad].pack), "%s", sname);
    snprintf(grown[pc->nbad].why, sizeof(grown[pc->nbad].why), "%s", pqv_error_last()->reason);
    pc->nbad++;
    pqv_error_clear();
    return 0;
}

/* open_chunks(pc, sname, data, len): every chunk of ${pc} from the pack's
 * bytes: in bounds, authenticated and decompressed, and the plaintext's
 * identity the chunk's. */
static int
open_chunks(struct pack_check *pc, const char *sname, const uint8_t *data, size_t len)
{
    pqv_vault *v = pc->sc->v;
    int rc = 0;

    for (size_t i = 0; i < pc->nrecs && rc == 0; i++) {
        const struct chunk_rec *r = pc->recs[i];
        uint8_t id[CHUNK_ID_BYTES];
        int bad;
        if (r->plain_len > CHUNK_MAX || r->stored_len > chunk_blob_max(r->plain_len) ||
            (uint64_t)PACK_HEADER_BYTES + r->pack_off + r->stored_len > len) {
            (void)error_set(PQV_E_INTEGRITY, NULL, "its record lies outside the pack");
            bad = 1;
        } else if ((rc = chunk_open(v->chunk_data_key, r->id, r->flags,
                        data + PACK_HEADER_BYTES + r->pack_off, r->stored_len, pc->plain,
                        r->plain_len, pc->scratch)) != 0) {
            bad = rc == PQV_E_INTEGRITY;
        } else if ((rc = chunk_id(v->chunk_id_key, pc->plain, r->plain_len, id)) == 0) {
            bad = !util_ct_equal(id, r->id, CHUNK_ID_BYTES);
            if (bad)
                (void)error_set(PQV_E_INTEGRITY, NULL, "its plaintext is not its identity's");
        } else {
            bad = 0;
        }
        util_wipe(pc->plain, r->plain_len < CHUNK_MAX ? r->plain_len : CHUNK_MAX);
        if (bad)
            rc = note_bad(pc, r, sname);
    }
    return rc;
}

/* check_pack_run(job): one pack read whole and verified. */
static void
check_pack_run(struct pool_job *job)
{
    struct pack_check *pc = (struct pack_check *)job;
    const struct ref *r = &pc->sc->refs[pc->ref];
    pqv_vault *v = pc->sc->v;
    char sname[STORAGE_NAME_MAX];
    uint8_t *buf = NULL, hash[32];
    size_t len = 0;
    int rc;

    pc->missing = pc->hash_ok = pc->table_ok = pc->format3 = 0;
    pc->nbad = 0;
    pack_name(r->id, sname);
    rc = v->storage->ops->get(v->storage, sname, &buf, &len, (size_t)r->size + 1);
    if (rc == PQV_E_NOTFOUND || rc == PQV_E_INTEGRITY) {
        pc->missing = 1; /* reported by the structural pass, or removed since */
        pqv_error_clear();
        job->rc = 0;
        return;
    }
    if (rc == 0 && (rc = kdf_sha256(hash, buf, len)) == 0) {
        pc->hash_ok = util_ct_equal(hash, r->hash, 32);
        pc->format3 = len >= PACK_HEADER_BYTES && buf[4] == PACK3_VERSION;
        if (!pc->format3) {
            pc->table_ok = 1; /* format 2: its extents are opened one by one */
        } else if (pc->hash_ok) {
            pc->table_ok = table_agrees(pc->sc, r->id, buf, len, pc->recs, pc->nrecs);
            if (pc->table_ok)
                rc = open_chunks(pc, sname, buf, len);
        }
    }
    free(buf);
    job->rc = rc;
}

/* finish_pack(dp, pc): a pack's results reported and kept. */
static int
finish_pack(struct data_pass *dp, struct pack_check *pc)
{
    struct scan *sc = pc->sc;
    const struct ref *r = &sc->refs[pc->ref];
    char sname[STORAGE_NAME_MAX];

    if (pc->missing)
        return 0;
    pack_name(r->id, sname);
    if (!pc->hash_ok || !pc->table_ok) {
        /* The whole pack is damage, reported once under a file that uses it. */
        sc->refs[pc->ref].bad = 1;
        sc->res->damaged++;
        vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, sc->names[r->entry],
            "%s%s", sname, !pc->hash_ok ? " does not match its SHA-256"
                                       : ": its own table does not hold the chain's records of "
                                         "its chunks");
        return 0;
    }
    if (pc->nbad > 0) {
        struct bad_chunk *grown = realloc(dp->bad, (dp->nbad + pc->nbad) * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        memcpy(grown + dp->nbad, pc->bad, pc->nbad * sizeof(*grown));
        dp->bad = grown;
        dp->nbad += pc->nbad;
    }
    dp->checked[pc->ref] = (unsigned char)pc->format3;
    return 0;
}

/* Packs verified at once (each holds a whole pack in memory). */
#define PACKS_VERIFIED_AT_ONCE 4

/* verify_packs(sc, dp): every described pack (--read-data). */
static int
verify_packs(struct scan *sc, struct data_pass *dp)
{
    struct pool *pool = vault_pool(sc->v);
    struct pack_check jobs[PACKS_VERIFIED_AT_ONCE];
    size_t at_once = pool_threads(pool) < PACKS_VERIFIED_AT_ONCE ? pool_threads(pool) : PACKS_VERIFIED_AT_ONCE;
    size_t next = 0, oldest = 0, inflight = 0;
    int rc = 0;

    if (at_once == 0)
        at_once = 1;
    memset(jobs, 0, sizeof(jobs));
    for (size_t i = 0; i < at_once; i++) {
        jobs[i].sc = sc;
        if ((jobs[i].plain = malloc(CHUNK_MAX)) == NULL ||
            (jobs[i].scratch = malloc(chunk_scratch_size(CHUNK_MAX))) == NULL) {
            rc = PQV_E_NOMEM;
            goto done;
        }
    }
    for (size_t i = 0; rc == 0 && (i < sc->nrefs || inflight > 0);) {
        if (i < sc->nrefs && inflight < at_once) {
            const struct ref *r = &sc->refs[i];
            struct pack_check *pc = &jobs[next];
            if (!r->seen || r->bad || r->v1 || !r->described) {
                i++;
                continue;
            }
            pc->ref = i++;
            pc->recs = in_pack(dp, r->id, &pc->nrecs);
            pc->job.run = check_pack_run;
            pool_submit(pool, &pc->job);
            next = (next + 1) % at_once;
            inflight++;
            continue;
        }
        struct pack_check *pc = &jobs[oldest];
        int jrc = pool_wait(pool, &pc->job);
        oldest = (oldest + 1) % at_once;
        inflight--;
        if (jrc == 0)
            jrc = finish_pack(dp, pc);
        if (jrc != 0 && rc == 0)
            rc = jrc;
    }
    while (inflight > 0) { /* after a failure: the rest waited for */
        (void)pool_wait(pool, &jobs[oldest].job);
        oldest = (oldest + 1) % at_once;
        inflight--;
    }
done:
    for (size_t i = 0; i < PACKS_VERIFIED_AT_ONCE; i++) {
        free(jobs[i].plain);
        if (jobs[i].scratch != NULL)
            util_wipe(jobs[i].scratch, chunk_scratch_size(CHUNK_MAX));
        free(jobs[i].scratch);
        free(jobs[i].bad);
    }
    return rc;
}

/* in_bad_pack(sc, e): whether an extent of ${e} lies in a pack or object
 * already reported (its damage is counted once). */
static int
in_bad_pack(const struct scan *sc, const struct entry *e)
{
    for (uint32_t k = 0; k < e->nextents; k++) {
        const struct ref *hit = ref_of(sc, &e->extents[k]);
        if (hit == NULL || hit->bad)
            return 1;
    }
    return 0;
}

/* chunk_verdict(sc, dp, x): for a chunk opened with its pack, its failure
 * (NULL: sound); *${opened} 0 if it still has to be read. */
static struct bad_chunk *
chunk_verdict(const struct scan *sc, const struct data_pass *dp, const struct extent *x,
    int *opened)
{
    const struct ref *hit;
    struct bad_chunk key;

    *opened = 0;
    if (!x->chunk || !x->located || (hit = ref_of(sc, x)) == NULL || !dp->checked[hit - sc->refs])
        return NULL;
    *opened = 1;
    memcpy(key.id, x->chunk_id, CHUNK_ID_BYTES);
    return util_search(&key, dp->bad, dp->nbad, sizeof(*dp->bad), compare_bad);
}

/* verify_extents(sc, dp): every file of the newest state: what the packs'
 * pass found of its chunks, and every other extent opened (--read-data). */
static int
verify_extents(struct scan *sc, struct data_pass *dp)
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
        int have_key = 0;
        if (e->kind != KIND_FILE || e->nextents == 0 || in_bad_pack(sc, e))
            continue;
        for (uint32_t k = 0; k < e->nextents; k++) {
            int opened;
            struct bad_chunk *bad = chunk_verdict(sc, dp, &e->extents[k], &opened);
            if (bad != NULL) {
                bad->reported = 1;
                sc->res->damaged++;
                vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, e->name,
                    "chunk %u (%s): %s", k, bad->pack, bad->why);
                break; /* one report per file */
            }
            if (opened)
                continue;
            if (!have_key && (rc = state_file_key(v, &sc->st, e, key)) != 0) {
                if (rc != PQV_E_INTEGRITY)
                    break;
                sc->res->damaged++;
                vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, e->name, "%s",
                    pqv_error_detail());
                rc = 0;
                break;
            }
            have_key = 1;
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
            if (rc == PQV_E_INTEGRITY || rc == PQV_E_NOTFOUND) {
                /* Damaged; or listed by the structural pass, yet not there
                 * to read: removed since (a gc elsewhere), or unreadable. */
                sc->res->damaged++;
                vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, e->name, "%s",
                    pqv_error_detail());
                rc = 0;
                break; /* one report per file */
            }
            if (rc != 0)
                break;
        }
        if (have_key)
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
check_data_read(struct scan *sc)
{
    struct data_pass dp;
    int rc;

    memset(&dp, 0, sizeof(dp));
    if ((dp.checked = calloc(sc->nrefs + 1, 1)) == NULL || (rc = place(sc, &dp)) != 0) {
        free(dp.checked);
        return PQV_E_NOMEM;
    }
    if ((rc = verify_packs(sc, &dp)) == 0) {
        util_sort(dp.bad, dp.nbad, sizeof(*dp.bad), compare_bad);
        rc = verify_extents(sc, &dp);
    }
    /* A damaged chunk no file of the newest state uses: a kept snapshot's. */
    for (size_t i = 0; rc == 0 && i < dp.nbad; i++) {
        if (dp.bad[i].reported)
            continue;
        sc->res->damaged++;
        vault_report(sc->w.report, sc->w.report_ctx, PQV_REPORT_ERROR, dp.bad[i].pack,
            "a chunk a kept snapshot uses (%02x%02x%02x%02x...): %s", dp.bad[i].id[0],
            dp.bad[i].id[1], dp.bad[i].id[2], dp.bad[i].id[3], dp.bad[i].why);
    }
    free(dp.placed);
    free(dp.bad);
    free(dp.checked);
    return rc;
}
