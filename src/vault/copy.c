/*
 * copy.c: a vault copied to another storage (a directory to a bucket, or
 * back), blob for blob, without re-encryption (pqvault copy --to).
 *
 * Only what the chain keeps is copied: every pack and format-1 object an
 * entry of the newest state or of a kept snapshot refers to, the segments
 * from the base to the newest and those kept snapshots are made from,
 * the key file (when it lives in the vault), and the config last, so that
 * the copy is a vault only once everything it refers to is there, durable.
 * Every blob is verified before it is written: packs against the SHA-256
 * their segment recorded (or, for format-1 objects and packs without one,
 * every extent opened with its file's key), segments by opening them again
 * (chain, tags).  A copy that stops part way is continued by running it
 * again: blobs already at the destination with the right size are not
 * copied again (a pack's hash is checked there once more), and a
 * destination holding another vault, or another history of this one, is
 * refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/util.h"
#include "vault/config.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/segment.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

struct copy {
    pqv_vault *v;
    struct state st;
    struct snapshots kept;       /* the snapshots the chain keeps (their segments and data
                                    are copied too) */
    pqv_storage *to;
    const struct pqv_copy_options *opt;
    struct pqv_copy_result res;
};

/* A blob to copy: a pack (with its recorded size and hash, if any) or a
 * format-1 object, and the first entry that refers to it. */
struct copy_blob {
    uint8_t id[PACK_ID_BYTES];
    int v1;
    const struct seg_pack *desc;   /* size and hash, or NULL */
    const struct entry *e;
};

static int
compare_blobs(const void *a, const void *b)
{
    const struct copy_blob *x = a, *y = b;

    if (x->v1 != y->v1)
        return x->v1 - y->v1;
    return memcmp(x->id, y->id, PACK_ID_BYTES);
}

/* verify_extents(c, b, data, len): every extent of ${b}'s referring
 * entries that lies in it, opened (format-1 objects, packs without a
 * recorded hash). */
static int
verify_extents(struct copy *c, const struct copy_blob *b, const uint8_t *data, size_t len)
{
    uint8_t *plain = malloc(PQV_OBJECT_MAX_PLAIN), *scratch = malloc(pack_scratch_size());
    int rc = 0;

    if (plain == NULL || scratch == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < c->st.n && rc == 0; i++) {
        const struct entry *e = &c->st.entries[i];
        uint8_t key[PQV_FILE_KEY_BYTES];
        int have_key = 0;
        for (uint32_t k = 0; k < e->nextents && rc == 0; k++) {
            const struct extent *x = &e->extents[k];
            if (memcmp(x->pack_id, b->id, PACK_ID_BYTES) != 0 ||
                ((x->pack_flags & PACK_V1_OBJECT) != 0) != b->v1)
                continue;
            if (!have_key && (rc = state_file_key(c->v, &c->st, e, key)) != 0)
                break;
            have_key = 1;
            if (b->v1) {
                rc = object_open(e->suite, key, x->pack_id, k, data, len, plain, x->plain_len);
            } else if ((uint64_t)PACK_HEADER_BYTES + x->pack_off + x->stored_len > len) {
                rc = error_set(PQV_E_INTEGRITY, NULL, "an extent of %s lies beyond it", e->name);
            } else {
                rc = pack_open_extent(e->suite, key, k, x, data + PACK_HEADER_BYTES + x->pack_off,
                    plain, scratch);
            }
            util_wipe(plain, x->plain_len);
        }
        util_wipe(key, sizeof(key));
    }
done:
    free(plain);
    if (scratch != NULL)
        util_wipe(scratch, pack_scratch_size());
    free(scratch);
    return rc;
}

/* verify_blob(c, b, name, data, len): a pack against its recorded size and
 * hash, or its extents opened. */
static int
verify_blob(struct copy *c, const struct copy_blob *b, const char *name, const uint8_t *data,
    size_t len)
{
    uint8_t hash[32];
    int rc;

    if (b->desc == NULL)
        rc = verify_extents(c, b, data, len);
    else if (len != b->desc->size)
        rc = error_set(PQV_E_INTEGRITY, NULL, "%zu bytes, its segment recorded %llu", len,
            (unsigned long long)b->desc->size);
    else if ((rc = kdf_sha256(hash, data, len)) == 0 && !util_ct_equal(hash, b->desc->hash, 32))
        rc = error_set(PQV_E_INTEGRITY, NULL, "does not match its recorded SHA-256");
    if (rc == PQV_E_INTEGRITY)
        rc = error_subject(rc, name);
    return rc;
}

/* copy_one(c, name, verify, b, max): ${name} from the vault to the
 * destination unless it is there already with the same size. */
static int
copy_blob(struct copy *c, const char *name, const struct copy_blob *b, size_t max)
{
    pqv_storage *from = c->v->storage;
    uint64_t there;
    uint8_t *data;
    size_t len;
    int rc;

    rc = c->to->ops->stat(c->to, name, &there);
    if (rc != 0 && rc != PQV_E_NOTFOUND)
        return rc;
    if (rc == 0 && b->desc != NULL && there == b->desc->size) {
        /* Copied by an earlier run: checked again where it is. */
        if ((rc = c->to->ops->get(c->to, name, &data, &len, max)) != 0)
            return rc;
        rc = verify_blob(c, b, name, data, len);
        free(data);
        if (rc == 0) {
            c->res.skipped++;
            return 0;
        }
        if (rc != PQV_E_INTEGRITY)
            return rc;
        /* Damaged at the destination: copied again. */
    }
    rc = from->ops->get(from, name, &data, &len, max);
    if (rc == PQV_E_NOTFOUND)
        return error_set(PQV_E_INTEGRITY, name, "is missing (an entry refers to it)");
    if (rc != 0)
        return rc;
    if ((rc = verify_blob(c, b, name, data, len)) == 0 &&
        (rc = c->to->ops->put(c->to, name, data, len)) == 0) {
        c->res.copied++;
        c->res.bytes += len;
        vault_report(c->opt->report, c->opt->report_ctx, PQV_REPORT_INFO, name, "copied");
    }
    free(data);
    return rc;
}

/* copy_data(c): every pack and object the state refers to. */
/* Every pack and object of every kept state, gathered. */
struct gather {
    struct copy_blob *b;
    size_t n, cap;
};

static int
gather_entry(void *ctx, const struct entry *e)
{
    struct gather *g = ctx;

    for (uint32_t k = 0; k < e->nextents; k++) {
        const struct extent *x = &e->extents[k];
        if (x->chunk && !x->located)
            continue; /* (no place: check reports it; nothing to copy) */
        if (g->n == g->cap) {
            size_t cap = g->cap ? 2 * g->cap : 1024;
            struct copy_blob *grown = realloc(g->b, cap * sizeof(*grown));
            if (grown == NULL)
                return PQV_E_NOMEM;
            g->b = grown;
            g->cap = cap;
        }
        memset(&g->b[g->n], 0, sizeof(g->b[g->n]));
        memcpy(g->b[g->n].id, x->pack_id, PACK_ID_BYTES);
        g->b[g->n].v1 = (x->pack_flags & PACK_V1_OBJECT) != 0;
        g->n++;
    }
    return 0;
}

static int
copy_data(struct copy *c)
{
    struct gather g = { NULL, 0, 0 };
    struct copy_blob *blobs;
    size_t n;
    int rc = 0;

    /* The newest state's, and every kept snapshot's. */
    if ((rc = chunks_of_state(c->v, &c->st, NULL)) != 0 ||
        (rc = snapshots_each_entry(c->v, &c->st, &c->kept, NULL, gather_entry, &g)) != 0) {
        free(g.b);
        return rc;
    }
    blobs = g.b;
    n = g.n;
    util_sort(blobs, n, sizeof(*blobs), compare_blobs);
    /* Recorded sizes and hashes, from any segment of the chain. */
    for (size_t s = 0; s < c->st.nsegs; s++)
        for (size_t p = 0; p < c->st.segs[s].t.npacks; p++) {
            const struct seg_pack *sp = &c->st.segs[s].t.packs[p];
            struct copy_blob key, *hit;
            if (!(sp->flags & PACK_INTRODUCED))
                continue;
            memset(&key, 0, sizeof(key));
            memcpy(key.id, sp->id, PACK_ID_BYTES);
            for (hit = util_search(&key, blobs, n, sizeof(*blobs), compare_blobs);
                 hit != NULL && hit > blobs && compare_blobs(hit - 1, &key) == 0;)
                hit--;
            for (; hit != NULL && hit < blobs + n && compare_blobs(hit, &key) == 0; hit++)
                hit->desc = sp;
        }
    for (size_t i = 0; i < n && rc == 0; i++) {
        char sname[STORAGE_NAME_MAX];
        if (i > 0 && compare_blobs(&blobs[i - 1], &blobs[i]) == 0)
            continue;
        if (blobs[i].v1)
            object_storage_name(blobs[i].id, sname);
        else
            pack_name(blobs[i].id, sname);
        /* A pack read whole: at most its recorded size (format 3's hold
         * up to 8 MiB of chunks, and one more, padded), else format 2's
         * bound (an object, or a pack without a recorded size). */
        size_t max = blobs[i].desc != NULL ? (size_t)blobs[i].desc->size + 1
                                           : pack_sealed_max() + PACK_HEADER_BYTES + 1;
        rc = copy_blob(c, sname, &blobs[i], max);
        if (rc == 0 && c->opt->progress != NULL)
            c->opt->progress(c->opt->progress_ctx, i + 1, n);
    }
    free(blobs);
    return rc;
}

/* copy_segments(c): the segments kept snapshots are made from (old
 * generations first), then the chain, base first, each opened again as it
 * is copied and checked against the chain value the chain records; one
 * already at the destination must be the same bytes. */
static int
copy_segments(struct copy *c)
{
    pqv_storage *from = c->v->storage;
    int rc = 0;

    for (uint64_t epoch = 1; epoch <= c->st.epoch && rc == 0; epoch++) {
        char sname[STORAGE_NAME_MAX];
        struct segment s;
        uint8_t *data, *there, want[32];
        size_t len, tlen;
        if (!snapshots_needed(&c->kept, &c->st, epoch))
            continue;
        if (snapshots_expected_chain(&c->st, epoch, want) != 0)
            return error_set(PQV_E_INTEGRITY, NULL, "the chain records no value for epoch %llu",
                (unsigned long long)epoch);
        segment_name(epoch, sname);
        /* No more than a segment may hold. */
        if ((rc = from->ops->get(from, sname, &data, &len, MAX_SEGMENT_BYTES)) != 0)
            return rc == PQV_E_NOTFOUND ? error_set(PQV_E_INTEGRITY, sname, "is missing (a "
                "kept snapshot needs it)") : rc;
        if ((rc = segment_open(c->v, epoch, data, len, &s)) == 0) {
            rc = memcmp(s.chain, want, 32) == 0 ? 0 :
                error_set(PQV_E_INTEGRITY, sname, "changed while the vault was copied");
            segment_free(&s);
        }
        if (rc == 0) {
            rc = c->to->ops->put_new(c->to, sname, data, len);
            if (rc == 0) {
                c->res.copied++;
                c->res.bytes += len;
                vault_report(c->opt->report, c->opt->report_ctx, PQV_REPORT_INFO, sname,
                    "copied");
            } else if (rc == PQV_E_EXISTS &&
                (rc = c->to->ops->get(c->to, sname, &there, &tlen, MAX_SEGMENT_BYTES)) == 0) {
                rc = tlen == len && memcmp(there, data, len) == 0 ? 0 :
                    error_set(PQV_E_EXISTS, sname, "the destination holds another history of "
                        "this vault");
                free(there);
                if (rc == 0)
                    c->res.skipped++;
            }
        }
        free(data);
    }
    return rc;
}

/* copy_small(c, from, to, name, max): the key file or config, as they are. */
static int
copy_small(struct copy *c, pqv_storage *from, const char *fname, pqv_storage *to,
    const char *tname, size_t max)
{
    uint8_t *data;
    size_t len;
    int rc;

    if ((rc = from->ops->get(from, fname, &data, &len, max)) != 0)
        return rc;
    rc = to->ops->put(to, tname, data, len);
    free(data);
    if (rc == 0) {
        c->res.copied++;
        c->res.bytes += len;
        vault_report(c->opt->report, c->opt->report_ctx, PQV_REPORT_INFO, tname, "copied");
    }
    return rc;
}

int
pqv_vault_copy(pqv_vault *v, pqv_storage *to, const struct pqv_copy_options *opt,
    struct pqv_copy_result *result)
{
    static const struct pqv_copy_options none;
    struct copy c;
    uint8_t *text;
    size_t len;
    int rc;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (to == NULL)
        return PQV_E_INVAL;
    if (v->at_epoch != 0)
        return error_set(PQV_E_INVAL, NULL, "copy copies the whole vault, its history with it "
            "(--at reads one snapshot: restore it with get instead)");
    if (opt == NULL)
        opt = &none;
    if (v->config.version < 2)
        return error_set(PQV_E_UNSUPPORTED, NULL, "a format-1 vault is copied once upgraded "
            "(pqvault upgrade)");
    memset(&c, 0, sizeof(c));
    c.v = v;
    c.to = to;
    c.opt = opt;
    /* The destination: empty, or this vault (a copy continued). */
    rc = to->ops->get(to, CONFIG_NAME, &text, &len, MAX_CONFIG_BYTES);
    if (rc == 0) {
        struct vault_config there;
        memset(&there, 0, sizeof(there));
        rc = config_parse(&there, text, len);
        free(text);
        if (rc != 0 || memcmp(there.vault_id, v->config.vault_id, VAULT_ID_BYTES) != 0)
            rc = error_set(PQV_E_EXISTS, NULL, "the destination holds another vault");
        config_clear(&there);
        if (rc != 0)
            return rc;
    } else if (rc != PQV_E_NOTFOUND) {
        return rc;
    }
    if ((rc = state_current(v, &c.st, NULL)) != 0)
        return rc;
    if ((rc = state_load(v, &c.st)) != 0 || (rc = snapshots_load(&c.st, &c.kept)) != 0 ||
        (rc = copy_data(&c)) != 0 ||
        (rc = to->ops->barrier(to)) != 0 || (rc = copy_segments(&c)) != 0 ||
        (rc = to->ops->barrier(to)) != 0)
        goto done;
    /* The key file, when it lives in the vault; the config last: from it
     * on, the destination is a vault with everything it refers to. */
    if (v->key_storage == v->storage &&
        (rc = copy_small(&c, v->key_storage, v->key_name, to, "keyfile",
             PQV_KEYFILE_MAX_BYTES)) != 0)
        goto done;
    if (v->key_storage != v->storage)
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, v->keyfile_path,
            "the key file is kept outside the vault: not copied (name it with --keyfile "
            "when opening the copy)");
    if ((rc = to->ops->barrier(to)) != 0 ||
        (rc = copy_small(&c, v->storage, CONFIG_NAME, to, CONFIG_NAME, MAX_CONFIG_BYTES)) != 0)
        goto done;
    rc = to->ops->barrier(to);
    c.res.epoch = c.st.epoch;
done:
    if (result != NULL)
        *result = c.res;
    snapshots_free(&c.kept);
    state_free(&c.st);
    return rc;
}
