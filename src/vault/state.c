/*
 * state.c: the catalogue's current state (docs/FORMAT.md section 11): the
 * newest segment present, its chain verified back to its base, each delta
 * overriding the base's entries in epoch order (format 1: state_v1.c).
 * A name is found without decrypting the whole catalogue (binary search of
 * each segment's block index, one block read and opened each); list and
 * tree operations load every entry (no KEM operation either way).  File
 * keys are recovered when data is read: one decapsulation per segment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/buf.h"
#include "util/util.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/localstate.h"
#include "vault/names.h"
#include "vault/segment.h"
#include "vault/segment_cache.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

/* A segment up to this size is read whole before it is authenticated. */
#define SEGMENT_READ_WHOLE (1u << 20)

void
state_free(struct state *st)
{
    if (st == NULL)
        return;
    for (size_t i = 0; i < st->nsegs; i++)
        segment_free(&st->segs[i]);
    free(st->segs);
    for (size_t i = 0; i < st->n; i++)
        entry_clear(&st->entries[i]);
    free(st->entries);
    chunks_free(&st->chunks);
    memset(st, 0, sizeof(*st));
}

/* ---- format 2 ---- */

struct newest {
    uint64_t epoch;
    int found;
};

static int
find_newest(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct newest *nw = ctx;
    uint64_t e = util_load_be64(id);

    (void)name;
    (void)size;
    if (!nw->found || e > nw->epoch)
        nw->epoch = e;
    nw->found = 1;
    return 0;
}

int
state_newest_epoch(pqv_vault *v, const struct names_walk *w, uint64_t *epoch)
{
    struct newest nw = { 0, 0 };
    int rc;

    *epoch = 0;
    if ((rc = names_walk(v->storage, "segments", 8, w, find_newest, &nw)) != 0)
        return rc;
    if (nw.found)
        *epoch = nw.epoch;
    return 0;
}

int
state_read_segment(pqv_vault *v, uint64_t epoch, struct segment *s)
{
    char sname[STORAGE_NAME_MAX];
    uint8_t header[SEGMENT_HEADER_BYTES], *head;
    uint64_t size, total;
    size_t headlen;
    int rc;

    if (segment_cache_find(v, epoch, s))
        return 0;
    segment_name(epoch, sname);
    /* The header first: what it says bounds what is read next.  Then the
     * sealed head (bounded), authenticated, and only then the blocks whose
     * length the head gives: nothing unauthenticated is read beyond the
     * head, however large the file. */
    if ((rc = v->storage->ops->stat(v->storage, sname, &size)) != 0)
        return rc;
    if (size < SEGMENT_HEADER_BYTES || size > MAX_SEGMENT_BYTES)
        return error_set(PQV_E_INTEGRITY, sname, "impossible size (%llu bytes)",
            (unsigned long long)size);
    if (size <= SEGMENT_READ_WHOLE) {
        /* Small: one read (one request on S3) is cheaper than three. */
        uint8_t *blob;
        size_t len;
        if ((rc = v->storage->ops->get(v->storage, sname, &blob, &len, (size_t)size)) != 0)
            return rc;
        rc = segment_open(v, epoch, blob, len, s);
        free(blob);
        if (rc != 0)
            return error_subject(rc, sname);
        segment_cache_keep(v, s, size);
        return 0;
    }
    if ((rc = v->storage->ops->get_range(v->storage, sname, 0, header, sizeof(header))) != 0)
        return rc;
    if ((rc = segment_check_header(header, sizeof(header), epoch, v->config.vault_id)) != 0 ||
        (rc = segment_head_length(header, size, &headlen)) != 0)
        return error_subject(rc, sname);
    if ((head = malloc(SEGMENT_HEADER_BYTES + headlen)) == NULL)
        return PQV_E_NOMEM;
    memcpy(head, header, SEGMENT_HEADER_BYTES);
    rc = v->storage->ops->get_range(v->storage, sname, SEGMENT_HEADER_BYTES,
        head + SEGMENT_HEADER_BYTES, headlen);
    if (rc == 0)
        rc = segment_open_head(v, epoch, head, SEGMENT_HEADER_BYTES + headlen, s);
    free(head);
    if (rc != 0)
        return error_subject(rc, sname);
    /* The blocks, and nothing after them; read when needed: a lookup
     * reads one block, a walk one part whole (segment_fetch_part). */
    if ((total = segment_size(s)) != size) {
        segment_free(s);
        return error_set(PQV_E_INTEGRITY, sname, "segment has %llu bytes, its head says %llu",
            (unsigned long long)size, (unsigned long long)total);
    }
    s->data_off = SEGMENT_HEADER_BYTES + headlen;
    segment_cache_keep(v, s, size);
    return 0;
}

/* check_chain(st): each delta continues the segment before it. */
static int
check_chain(struct state *st)
{
    const struct segment *base = &st->segs[0];

    for (size_t i = 1; i < st->nsegs; i++) {
        const struct segment *s = &st->segs[i];
        if (s->kind != SEGMENT_DELTA || s->base != base->epoch ||
            !util_ct_equal(s->prev_chain, st->segs[i - 1].chain, 32)) {
            char sname[STORAGE_NAME_MAX];
            segment_name(s->epoch, sname);
            return error_set(PQV_E_INTEGRITY, sname, "does not continue epoch %llu (a segment "
                "was replaced, or the vault forked)", (unsigned long long)st->segs[i - 1].epoch);
        }
    }
    return 0;
}

int
state_open(pqv_vault *v, struct state *st, const struct names_walk *w)
{
    uint64_t newest, epoch;
    int rc;

    memset(st, 0, sizeof(*st));
    if ((rc = state_v1_check(v)) != 0)
        return rc;
    st->format = v->config.version;
    if (st->format == 1)
        return 0; /* records are read by name, or all by state_load */
    if ((rc = state_newest_epoch(v, w, &newest)) != 0)
        return rc;
    if (newest == 0)
        return error_set(PQV_E_INTEGRITY, "segments", "no catalogue segment (deleted?)");
    /* From the newest back to its base. */
    for (epoch = newest;; epoch--) {
        struct segment s, *grown;
        if ((rc = state_read_segment(v, epoch, &s)) != 0) {
            if (rc == PQV_E_NOTFOUND) {
                char sname[STORAGE_NAME_MAX];
                segment_name(epoch, sname);
                rc = error_set(PQV_E_INTEGRITY, sname, "is missing (epoch %llu needs it)",
                    (unsigned long long)newest);
            }
            goto fail;
        }
        if ((grown = realloc(st->segs, (st->nsegs + 1) * sizeof(*grown))) == NULL) {
            segment_free(&s);
            rc = PQV_E_NOMEM;
            goto fail;
        }
        st->segs = grown;
        st->segs[st->nsegs++] = s;
        if (s.kind == SEGMENT_BASE)
            break;
        if (epoch <= 1 || s.base >= epoch) {
            rc = error_set(PQV_E_INTEGRITY, NULL, "catalogue chain has no base");
            goto fail;
        }
    }
    /* Oldest first. */
    for (size_t i = 0; i < st->nsegs / 2; i++) {
        struct segment t = st->segs[i];
        st->segs[i] = st->segs[st->nsegs - 1 - i];
        st->segs[st->nsegs - 1 - i] = t;
    }
    if ((rc = check_chain(st)) != 0)
        goto fail;
    /* Format 3 follows format 2 in a chain, never the other way. */
    for (size_t i = 1; i < st->nsegs; i++)
        if (st->segs[i].version < st->segs[i - 1].version) {
            char sname[STORAGE_NAME_MAX];
            segment_name(st->segs[i].epoch, sname);
            rc = error_set(PQV_E_INTEGRITY, sname, "a segment of format %d after one of format %d",
                st->segs[i].version, st->segs[i - 1].version);
            goto fail;
        }
    st->epoch = newest;
    st->base = st->segs[0].epoch;
    memcpy(st->chain, st->segs[st->nsegs - 1].chain, 32);
    return 0;

fail:
    state_free(st);
    return rc;
}

const struct segment *
state_segment(const struct state *st, uint64_t epoch)
{
    if (st->nsegs == 0 || epoch < st->segs[0].epoch || epoch > st->segs[st->nsegs - 1].epoch)
        return NULL;
    return &st->segs[epoch - st->segs[0].epoch];
}

/* find_block(s, tag): the block that would hold ${tag}, or -1. */
static long
find_block(const struct segment *s, const uint8_t tag[TAG_BYTES])
{
    size_t lo = 0, hi = s->nblocks;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (memcmp(s->blocks[mid].first, tag, TAG_BYTES) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

int
state_lookup(pqv_vault *v, struct state *st, const char *name, struct entry *out)
{
    uint8_t tag[TAG_BYTES];
    int rc;

    if (st->loaded) {
        const struct entry *e = state_find(st, name);
        if (e == NULL)
            return error_set(PQV_E_NOTFOUND, name, "not found");
        return entry_copy(out, e);
    }
    if (st->format == 1)
        return state_v1_lookup(v, name, out);
    if ((rc = segment_tag(v, name, tag)) != 0)
        return rc;
    for (size_t i = st->nsegs; i-- > 0;) {
        const struct segment *s = &st->segs[i];
        long b = find_block(s, tag);
        struct entry *es;
        size_t n;
        int found = -1;
        if (b < 0)
            continue;
        if ((rc = segment_block(v, s, (size_t)b, &es, &n)) != 0)
            return rc;
        for (size_t k = 0; k < n; k++)
            if (found < 0 && strcmp(es[k].name, name) == 0)
                found = (int)k;
        if (found >= 0)
            *out = es[found];
        for (size_t k = 0; k < n; k++)
            if ((int)k != found)
                entry_clear(&es[k]);
        free(es);
        if (found < 0)
            continue;
        if (out->kind == KIND_REMOVED) {
            entry_clear(out);
            break;
        }
        if (out->chunked) {
            /* A damaged chunk block loses its records only: the entry is
             * refused if one of its chunks is among them (with that
             * block's failure), not otherwise. */
            rc = chunks_of_state(v, st, NULL);
            if (rc != 0 && (rc != PQV_E_INTEGRITY || !st->chunks_loaded)) {
                entry_clear(out);
                return rc;
            }
            chunks_locate(&st->chunks, out);
            for (uint32_t j = 0; rc != 0 && j < out->nextents; j++)
                if (!out->extents[j].located) {
                    entry_clear(out);
                    return rc;
                }
        }
        return 0;
    }
    return error_set(PQV_E_NOTFOUND, name, "not found");
}

int
state_load(pqv_vault *v, struct state *st)
{
    return state_load_reporting(v, st, NULL);
}

int
state_read_entries(pqv_vault *v, struct state *st, const struct names_walk *w,
    struct entry **out, size_t *count)
{
    struct entry *all;
    size_t room = 0, n = 0;
    int rc = 0;

    *out = NULL;
    *count = 0;
    /* Sized once, from the blocks' authenticated counts (each bounded by
     * its bytes), and decoded in place: no array grown and copied. */
    for (size_t i = 0; i < st->nsegs; i++)
        for (size_t b = 0; b < st->segs[i].nblocks; b++)
            room += segment_block_room(&st->segs[i], b);
    if ((all = calloc(room + 1, sizeof(*all))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < st->nsegs && rc == 0; i++) {
        struct segment *s = &st->segs[i];
        if ((rc = segment_fetch_part(v, s, SEGMENT_PART_ENTRIES)) != 0)
            break;
        for (size_t b = 0; b < s->nblocks && rc == 0; b++) {
            if ((rc = segment_block_into(v, s, b, all + n)) != 0) {
                char sname[STORAGE_NAME_MAX];
                /* A damaged block: its entries are lost, the others are
                 * not (reported, when a caller counts damage). */
                if (rc != PQV_E_INTEGRITY || w == NULL || w->damaged == NULL)
                    break;
                segment_name(s->epoch, sname);
                (*w->damaged)++;
                vault_report(w->report, w->report_ctx, PQV_REPORT_ERROR, sname, "%s",
                    pqv_error_last()->reason);
                rc = 0;
                continue;
            }
            n += segment_block_room(s, b);
        }
    }
    if (rc != 0) {
        for (size_t i = 0; i < n; i++)
            entry_clear(&all[i]);
        free(all);
        return rc;
    }
    *out = all;
    *count = n;
    return 0;
}

int
state_load_reporting(pqv_vault *v, struct state *st, const struct names_walk *w)
{
    struct entry *all = NULL;
    size_t n = 0, k = 0;
    int rc = 0;

    if (st->loaded)
        return 0;
    if (st->format == 1) {
        if ((rc = state_v1_load(v, st, w)) == 0 &&
            (rc = entry_sort_by_name(st->entries, st->n, 1, NULL)) == 0)
            st->loaded = 1;
        st->xattr_entries = 0;
        for (size_t i = 0; rc == 0 && i < st->n; i++)
            st->xattr_entries += st->entries[i].nxattrs > 0;
        return rc;
    }
    if ((rc = state_read_entries(v, st, w, &all, &n)) != 0)
        return rc;
    st->xattr_entries = 0;
    for (size_t i = 0; i < n; i++)
        st->xattr_entries += all[i].nxattrs > 0;
    if ((rc = entry_sort_by_name(all, n, 1, NULL)) != 0) {
        for (size_t i = 0; i < n; i++)
            entry_clear(&all[i]);
        free(all);
        return rc;
    }
    /* Each name's newest entry wins; a removed one hides the name. */
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && strcmp(all[j].name, all[i].name) == 0)
            j++;
        for (size_t t = i + 1; t < j; t++)
            entry_clear(&all[t]);
        if (all[i].kind == KIND_REMOVED)
            entry_clear(&all[i]);
        else
            all[k++] = all[i];
        i = j;
    }
    st->entries = all;
    st->n = k;
    st->loaded = 1;
    /* Format 3: each chunk's place, from the chain's records. */
    for (size_t i = 0; i < k; i++)
        if (all[i].chunked) {
            if ((rc = chunks_of_state(v, st, w)) != 0)
                return rc;
            for (size_t j = i; j < k; j++)
                chunks_locate(&st->chunks, &all[j]);
            break;
        }
    return 0;
}

static int
compare_entry_name(const void *key, const void *e)
{
    return strcmp(key, ((const struct entry *)e)->name);
}

const struct entry *
state_find(const struct state *st, const char *name)
{
    return util_search(name, st->entries, st->n, sizeof(*st->entries), compare_entry_name);
}

/* first_from(st, prefix, slash): the index of the first loaded entry not
 * before ${prefix} in name order (with ${slash}: not before ${prefix} "/"). */
static size_t
first_from(const struct state *st, const char *prefix, int slash)
{
    size_t lo = 0, hi = st->n, len = strlen(prefix);

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *m = st->entries[mid].name;
        int c = strncmp(m, prefix, len);
        if (c == 0 && slash)
            c = (int)(unsigned char)m[len] - '/';
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t
state_first_under(const struct state *st, const char *prefix)
{
    size_t i;

    if (prefix[0] == '\0')
        return 0;
    i = first_from(st, prefix, 0);
    if (i < st->n && strcmp(st->entries[i].name, prefix) == 0)
        return i;
    return first_from(st, prefix, 1);
}

size_t
state_next_under(const struct state *st, const char *prefix, size_t i)
{
    if (prefix[0] != '\0' && i < st->n && strcmp(st->entries[i].name, prefix) == 0)
        return first_from(st, prefix, 1);
    return i + 1;
}

int
state_file_key(pqv_vault *v, struct state *st, const struct entry *e,
    uint8_t key[PQV_FILE_KEY_BYTES])
{
    struct segment *s;
    uint8_t tag[TAG_BYTES], pad[32];
    int rc;

    if (e->key_state == KEY_CLEAR || e->chunked) {
        /* (A chunked file has no key of its own: each chunk's comes from
         * the seed and its identity.) */
        memcpy(key, e->key, PQV_FILE_KEY_BYTES);
        return 0;
    }
    if (e->key_state == KEY_V1) {
        /* A format-1 record: its own wrapped key. */
        struct record r;
        memset(&r, 0, sizeof(r));
        r.entry.name = e->name;
        r.entry.nobjects = e->nextents;
        if (e->nextents > 0 && (r.object_ids = malloc(e->nextents * OBJECT_ID_BYTES)) == NULL)
            return PQV_E_NOMEM;
        for (uint32_t i = 0; i < e->nextents; i++)
            memcpy(r.object_ids[i], e->extents[i].pack_id, OBJECT_ID_BYTES);
        rc = record_unwrap_file_key(v, &r, key);
        free(r.object_ids);
        return rc;
    }
    if (e->key_state != KEY_STORED || (s = (struct segment *)state_segment(st, e->epoch)) == NULL)
        return error_set(PQV_E_INTEGRITY, e->name, "no file key");
    if (!s->cmd_key_known) {
        uint8_t ctx[64];
        int ctxlen = segment_cmd_context(v, s->epoch, ctx);
        if (s->wrap == NULL)
            return error_set(PQV_E_INTEGRITY, e->name, "its segment holds no command key");
        rc = pqv_unwrap(v->identity, s->wrap, s->wraplen, ctx, (size_t)ctxlen, s->cmd_key);
        if (rc != 0)
            return error_set(rc, e->name, "command key of epoch %llu does not unwrap",
                (unsigned long long)s->epoch);
        s->cmd_key_known = 1;
    }
    if ((rc = segment_tag(v, e->name, tag)) != 0 || (rc = segment_pad(s->cmd_key, tag, pad)) != 0)
        return rc;
    for (size_t i = 0; i < PQV_FILE_KEY_BYTES; i++)
        key[i] = e->key[i] ^ pad[i];
    util_wipe(pad, sizeof(pad));
    return 0;
}

/* check_keyfile(v, st): the key file must not be one the vault's history
 * has superseded (an old key file put back, with a passphrase that was
 * changed or a slot that was cleared). */
static int
check_keyfile(pqv_vault *v, const struct state *st)
{
    const struct segment *last;

    if (st->format < 2 || st->nsegs == 0)
        return 0;
    last = &st->segs[st->nsegs - 1];
    if (util_ct_equal(last->keyfile_hash, v->keyfile_hash, 32))
        return 0;
    for (size_t i = 0; i < last->nsuperseded; i++)
        if (util_ct_equal(last->superseded[i], v->keyfile_hash, 32))
            return error_set(PQV_E_INTEGRITY, v->keyfile_path, "rollback: this key file was "
                "replaced in epoch %llu or before; an old copy has been put back",
                (unsigned long long)last->epoch);
    for (size_t i = 0; i + 1 < st->nsegs; i++)
        if (util_ct_equal(st->segs[i].keyfile_hash, v->keyfile_hash, 32))
            return error_set(PQV_E_INTEGRITY, v->keyfile_path, "rollback: this key file was "
                "replaced after epoch %llu; an old copy has been put back",
                (unsigned long long)st->segs[i].epoch);
    /* Unknown: a passwd or recover whose epoch was not written yet (the
     * next writing command records it); it opened with the seed, so it is
     * the owner's. */
    return 0;
}


/* state_origin(st, name, out, outlen): where ${name} was added from: its
 * own recorded origin, or its nearest ancestor's with the rest of the name
 * appended; 0 if known, -1 if not (format-1 entries, a stream). */
int
state_origin(const struct state *st, const char *name, char *out, size_t outlen)
{
    size_t len = strlen(name);

    for (;;) {
        const struct entry *e = state_find(st, name);
        char prefix[PQV_NAME_MAX + 1];
        if (e != NULL && e->origin != NULL) {
            if (snprintf(out, outlen, "%s%s", e->origin, name + strlen(e->name)) >= (int)outlen)
                return -1;
            return 0;
        }
        while (len > 0 && name[len - 1] != '/')
            len--;
        if (len == 0)
            return -1;
        len--; /* the '/' */
        /* The ancestor's name, then the rest appended to its origin. */
        snprintf(prefix, sizeof(prefix), "%.*s", (int)len, name);
        const struct entry *anc = state_find(st, prefix);
        if (anc != NULL && anc->origin != NULL)
            return snprintf(out, outlen, "%s%s", anc->origin, name + len) >= (int)outlen ? -1 : 0;
    }
}

struct epochs {
    uint64_t *e;
    size_t n, cap;
};

static int
collect_epoch(void *ctx, const char *name, const uint8_t *id, uint64_t size)
{
    struct epochs *l = ctx;

    (void)name;
    (void)size;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        uint64_t *grown = realloc(l->e, cap * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        l->e = grown;
        l->cap = cap;
    }
    l->e[l->n++] = util_load_be64(id);
    return 0;
}

static int
compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* state_kept_present(v, st): every segment a kept snapshot needs is in
 * the storage's list (deleting a kept snapshot, even one in the middle of
 * the history, is found by every command, with or without local state;
 * that it is the one recorded is checked when it is read). */
static int
state_kept_present(pqv_vault *v, const struct state *st)
{
    struct snapshots kept;
    struct epochs have = { NULL, 0, 0 };
    int rc;

    if (st->format < 3 || (rc = snapshots_load(st, &kept)) != 0)
        return st->format < 3 ? 0 : rc;
    if (kept.n == 0 || kept.s[0].epoch >= st->base) {
        snapshots_free(&kept);
        return 0; /* all in the current chain, verified */
    }
    if ((rc = names_walk(v->storage, "segments", 8, NULL, collect_epoch, &have)) == 0) {
        util_sort(have.e, have.n, sizeof(*have.e), compare_u64);
        for (size_t i = 0; i < kept.n && rc == 0; i++)
            for (uint64_t e = kept.s[i].base; e <= kept.s[i].epoch && e < st->base && rc == 0; e++)
                if (util_search(&e, have.e, have.n, sizeof(*have.e), compare_u64) == NULL) {
                    char sname[STORAGE_NAME_MAX];
                    segment_name(e, sname);
                    rc = error_set(PQV_E_INTEGRITY, sname, "is missing: snapshot %llu, which "
                        "the chain keeps, needs it (deleted?)", (unsigned long long)kept.s[i].epoch);
                }
    }
    free(have.e);
    snapshots_free(&kept);
    return rc;
}

int
state_current(pqv_vault *v, struct state *st, const struct names_walk *w)
{
    struct localstate seen;
    int rc;

    /* What this machine saw first, then the vault (see localstate_load). */
    if ((rc = localstate_load(v, &seen)) != 0 || (rc = state_open(v, st, w)) != 0)
        return rc;
    if ((rc = check_keyfile(v, st)) != 0 ||
        (rc = localstate_check(v, &seen, st, w != NULL ? w->report : NULL,
             w != NULL ? w->report_ctx : NULL)) != 0 ||
        (rc = state_kept_present(v, st)) != 0) {
        state_free(st);
        return rc;
    }
    /* A reading command at a snapshot (pqv_vault_set_at) reads that
     * snapshot's state instead; a writer never does. */
    if (v->at_epoch != 0 && st->format >= 2) {
        struct state cur = *st;
        struct snapshots kept;
        const struct snapshot *sn;
        if (v->locked) {
            state_free(&cur);
            return error_set(PQV_E_INVAL, NULL, "a snapshot is read, never written (--at is "
                "for reading commands)");
        }
        if ((rc = snapshots_load(&cur, &kept)) != 0) {
            state_free(&cur);
            return rc;
        }
        if ((sn = snapshots_find(&kept, v->at_epoch)) == NULL)
            rc = error_set(PQV_E_NOTFOUND, NULL, "no snapshot of epoch %llu is kept (log lists "
                "them)", (unsigned long long)v->at_epoch);
        else
            rc = snapshots_state(v, &cur, sn, st);
        snapshots_free(&kept);
        state_free(&cur);
    }
    return rc;
}
