/*
 * segment.c: catalogue segments of format 2 (docs/FORMAT.md sections 10-12):
 * building one from entries, and opening one: its header, its head (the
 * chain, key-file hashes, command key, tables, block index) and, on demand,
 * each block of entries.  Everything read is checked before it is used:
 * lengths and counts are bounded by the head, which is authenticated first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/buf.h"
#include "util/util.h"
#include "vault/config.h"
#include "vault/entry.h"
#include "vault/names.h"
#include "vault/segment.h"
#include "vault/vault_internal.h"

#define SEG_MAGIC "PQVS"
#define SEG_VERSION 2
#define HEAD_VERSION 1
#define HEAD_VERSION_EXT 2       /* the same, then extensions */
#define BLOCK_TARGET 65536

static const char seg_label[] = "pqvault/v2/segment";
static const char chain_label[] = "pqvault/v2/chain";
static const char pad_label[] = "pqvault/v2/file-key";
static const char cmd_label[] = "pqvault/v2/command-key";

void
segment_free(struct segment *s)
{
    if (s == NULL)
        return;
    free(s->superseded);
    free(s->history);
    free(s->wrap);
    entry_tables_free(&s->t);
    free(s->blocks);
    free(s->blockdata);
    segment_ext_free(s->ext, s->next);
    util_wipe(s->key, sizeof(s->key));
    util_wipe(s->cmd_key, sizeof(s->cmd_key));
    memset(s, 0, sizeof(*s));
}

void
segment_name(uint64_t epoch, char out[STORAGE_NAME_MAX])
{
    snprintf(out, STORAGE_NAME_MAX, "segments/%016llx", (unsigned long long)epoch);
}

int
segment_tag(const pqv_vault *v, const char *name, uint8_t tag[TAG_BYTES])
{
    uint8_t h[NAME_HASH_BYTES];
    int rc = names_hash(v, name, h);

    memcpy(tag, h, TAG_BYTES);
    return rc;
}

/* seg_key(v, salt, epoch, key): K_seg(E). */
static int
seg_key(const pqv_vault *v, const uint8_t salt[32], uint64_t epoch, uint8_t key[32])
{
    uint8_t info[sizeof(seg_label) - 1 + 8];

    memcpy(info, seg_label, sizeof(seg_label) - 1);
    util_store_be64(info + sizeof(seg_label) - 1, epoch);
    return kdf_hkdf_sha256(key, 32, v->segments_key, 32, salt, 32, info, sizeof(info));
}

static void
unit_nonce(uint64_t unit, uint8_t nonce[PQV_AEAD_NONCE_BYTES])
{
    memset(nonce, 0, PQV_AEAD_NONCE_BYTES);
    util_store_be64(nonce + 4, unit);
}

/* chain_next(prev, header_and_head, len, out): chain(E). */
static int
chain_next(const uint8_t prev[32], const uint8_t *bytes, size_t len, uint8_t out[32])
{
    uint8_t h[32];
    struct buf b = { NULL, 0, 0, 0 };
    int rc;

    if ((rc = kdf_sha256(h, bytes, len)) != 0)
        return rc;
    buf_bytes(&b, chain_label, sizeof(chain_label) - 1);
    buf_bytes(&b, prev, 32);
    buf_bytes(&b, h, 32);
    rc = b.nomem ? PQV_E_NOMEM : kdf_sha256(out, b.p, b.len);
    buf_wipe_free(&b);
    return rc;
}

int
segment_cmd_context(const pqv_vault *v, uint64_t epoch, uint8_t *out)
{
    size_t n = sizeof(cmd_label) - 1;

    memcpy(out, cmd_label, n);
    memcpy(out + n, v->config.vault_id, VAULT_ID_BYTES);
    util_store_be64(out + n + VAULT_ID_BYTES, epoch);
    return (int)(n + VAULT_ID_BYTES + 8);
}

int
segment_pad(const uint8_t cmd_key[32], const uint8_t tag[TAG_BYTES], uint8_t pad[32])
{
    uint8_t info[sizeof(pad_label) - 1 + TAG_BYTES];

    memcpy(info, pad_label, sizeof(pad_label) - 1);
    memcpy(info + sizeof(pad_label) - 1, tag, TAG_BYTES);
    return kdf_hkdf_expand_sha256(pad, 32, cmd_key, info, sizeof(info));
}

/* ---- building ---- */

struct tagged {
    uint8_t tag[TAG_BYTES];
    const struct entry *e;
};

static int
compare_tagged(const void *a, const void *b)
{
    return memcmp(((const struct tagged *)a)->tag, ((const struct tagged *)b)->tag, TAG_BYTES);
}

/* A block being built. */
struct block_out {
    uint8_t first[TAG_BYTES];
    uint64_t n;
    struct buf plain;
};

static int
compare_pack_ids(const void *a, const void *b)
{
    return memcmp(((const struct seg_pack *)a)->id, ((const struct seg_pack *)b)->id,
        PACK_ID_BYTES);
}

/* describe_packs(t, p): size and hash for every pack of ${t} that
 * p->introduced or p->known describes. */
static int
describe_packs(struct seg_tables *t, const struct seg_params *p)
{
    size_t n = p->nintroduced + p->nknown;
    struct seg_pack *sorted;

    if (n == 0 || t->npacks == 0)
        return 0;
    if ((sorted = malloc(n * sizeof(*sorted))) == NULL)
        return PQV_E_NOMEM;
    if (p->nintroduced > 0)
        memcpy(sorted, p->introduced, p->nintroduced * sizeof(*sorted));
    if (p->nknown > 0)
        memcpy(sorted + p->nintroduced, p->known, p->nknown * sizeof(*sorted));
    util_sort(sorted, n, sizeof(*sorted), compare_pack_ids);
    for (size_t i = 0; i < t->npacks; i++) {
        const struct seg_pack *hit;
        if (t->packs[i].flags & PACK_V1_OBJECT)
            continue;
        if ((hit = util_search(&t->packs[i], sorted, n, sizeof(*sorted), compare_pack_ids)) != NULL) {
            t->packs[i] = *hit;
            t->packs[i].flags = PACK_INTRODUCED;
        }
    }
    free(sorted);
    return 0;
}

/* sort_by_tag(v, entries, n, out): the entries with their tags, in tag
 * order; a name given twice is refused. */
static int
sort_by_tag(pqv_vault *v, struct entry *const *entries, size_t n, struct tagged **out)
{
    struct tagged *sorted = NULL;
    int rc;

    *out = NULL;
    if (n > 0 && (sorted = calloc(n, sizeof(*sorted))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        sorted[i].e = entries[i];
        if ((rc = segment_tag(v, entries[i]->name, sorted[i].tag)) != 0) {
            free(sorted);
            return rc;
        }
    }
    util_sort(sorted, n, sizeof(*sorted), compare_tagged);
    for (size_t i = 1; i < n; i++)
        if (memcmp(sorted[i - 1].tag, sorted[i].tag, TAG_BYTES) == 0) {
            rc = error_set(PQV_E_INVAL, sorted[i].e->name, "named twice in one segment");
            free(sorted);
            return rc;
        }
    *out = sorted;
    return 0;
}

/* fill_blocks(p, sorted, n, t, blocks, nblocks): the entries encoded into
 * blocks of about 64 KiB (each file key stored XOR its pad under the
 * command key), their strings and packs added to ${t}. */
static int
fill_blocks(const struct seg_params *p, const struct tagged *sorted, size_t n,
    struct seg_tables *t, struct block_out **blocks, size_t *nblocks)
{
    int rc = 0;

    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct entry *e = sorted[i].e;
        uint8_t stored[PQV_FILE_KEY_BYTES];
        struct block_out *b;
        if (*nblocks == 0 || (*blocks)[*nblocks - 1].plain.len >= BLOCK_TARGET) {
            struct block_out *grown = realloc(*blocks, (*nblocks + 1) * sizeof(*grown));
            if (grown == NULL)
                return PQV_E_NOMEM;
            *blocks = grown;
            memset(&grown[*nblocks], 0, sizeof(grown[*nblocks]));
            memcpy(grown[*nblocks].first, sorted[i].tag, TAG_BYTES);
            (*nblocks)++;
        }
        b = &(*blocks)[*nblocks - 1];
        memset(stored, 0, sizeof(stored));
        if (e->kind == KIND_FILE) {
            uint8_t pad[32];
            if ((rc = entry_check_size(e->name, e->size)) != 0)
                return rc;
            if (p->cmd_key == NULL || e->key_state != KEY_CLEAR)
                return error_set(PQV_E_INVAL, e->name, "file key not available");
            if ((rc = segment_pad(p->cmd_key, sorted[i].tag, pad)) != 0)
                return rc;
            for (size_t k = 0; k < sizeof(stored); k++)
                stored[k] = e->key[k] ^ pad[k];
            util_wipe(pad, sizeof(pad));
        }
        rc = entry_encode(&b->plain, e, t, stored);
        util_wipe(stored, sizeof(stored));
        b->n++;
    }
    return rc;
}

/* encode_head(head, p, t, blocks, nblocks, n): the head's plaintext
 * (docs/FORMAT.md section 11). */
static void
encode_head(struct buf *head, const struct seg_params *p, const struct seg_tables *t,
    const struct block_out *blocks, size_t nblocks, size_t n)
{
    uint64_t off = 0;

    buf_u8(head, p->next > 0 ? HEAD_VERSION_EXT : HEAD_VERSION);
    buf_be64(head, (uint64_t)p->time);
    buf_varint(head, p->base);
    buf_bytes(head, p->prev_chain, 32);
    buf_bytes(head, p->keyfile_hash, 32);
    buf_varint(head, p->nsuperseded);
    for (size_t i = 0; i < p->nsuperseded; i++)
        buf_bytes(head, p->superseded[i], 32);
    if (p->kind == SEGMENT_BASE) {
        buf_varint(head, p->nhistory);
        for (size_t i = 0; i < p->nhistory; i++) {
            buf_varint(head, p->history[i].epoch);
            buf_bytes(head, p->history[i].chain, 32);
        }
    }
    buf_blob(head, p->wrap, p->wraplen);
    buf_varint(head, t->nstrings);
    for (size_t i = 0; i < t->nstrings; i++)
        buf_blob(head, t->strings[i], strlen(t->strings[i]));
    buf_varint(head, t->npacks);
    for (size_t i = 0; i < t->npacks; i++) {
        buf_bytes(head, t->packs[i].id, PACK_ID_BYTES);
        buf_u8(head, t->packs[i].flags);
        if (t->packs[i].flags & PACK_INTRODUCED) {
            buf_varint(head, t->packs[i].size);
            buf_bytes(head, t->packs[i].hash, 32);
        }
    }
    for (size_t i = 0; i < nblocks; i++) {
        buf_bytes(head, blocks[i].first, TAG_BYTES);
        buf_varint(head, off);
        buf_varint(head, blocks[i].plain.len + PQV_AEAD_TAG_BYTES);
        buf_varint(head, blocks[i].n);
        off += blocks[i].plain.len + PQV_AEAD_TAG_BYTES;
    }
    buf_varint(head, n);
    if (p->next > 0) {
        buf_varint(head, p->next);
        for (size_t i = 0; i < p->next; i++) {
            buf_varint(head, p->ext[i].type);
            buf_u8(head, p->ext[i].flags);
            buf_blob(head, p->ext[i].data, p->ext[i].len);
        }
    }
}

/* seal_unit(v, key, header, index, plain, out): unit ${index} (0 the head,
 * then the blocks) sealed and appended to ${out}. */
static int
seal_unit(pqv_vault *v, const uint8_t key[32], const uint8_t *header, uint64_t index,
    const struct buf *plain, struct buf *out)
{
    uint8_t nonce[PQV_AEAD_NONCE_BYTES], *q = buf_reserve(out, plain->len + PQV_AEAD_TAG_BYTES);
    int rc;

    if (q == NULL)
        return PQV_E_NOMEM;
    unit_nonce(index, nonce);
    if ((rc = pqv_aead_seal1(v->config.aead, key, nonce, header, SEGMENT_HEADER_BYTES, plain->p,
             plain->len, q)) != 0)
        return rc;
    out->len += plain->len + PQV_AEAD_TAG_BYTES;
    return 0;
}

int
segment_build(pqv_vault *v, const struct seg_params *p, struct entry *const *entries, size_t n,
    struct buf *out, uint8_t chain[32])
{
    struct seg_tables t;
    struct tagged *sorted = NULL;
    struct block_out *blocks = NULL;
    size_t nblocks = 0;
    struct buf head = { NULL, 0, 0, 0 };
    uint8_t header[SEGMENT_HEADER_BYTES], key[32];
    uint64_t off = 0;
    int rc;

    memset(&t, 0, sizeof(t));
    memset(key, 0, sizeof(key));
    if ((rc = sort_by_tag(v, entries, n, &sorted)) != 0 ||
        (rc = fill_blocks(p, sorted, n, &t, &blocks, &nblocks)) != 0)
        goto done;
    for (size_t i = 0; i < nblocks; i++)
        off += blocks[i].plain.len + PQV_AEAD_TAG_BYTES;
    /* Packs of known size and hash carry them (those this command wrote;
     * in a base also those earlier segments described). */
    if ((rc = describe_packs(&t, p)) != 0)
        goto done;
    encode_head(&head, p, &t, blocks, nblocks, n);
    if (head.nomem) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    /* Header, sealed head, sealed blocks. */
    memcpy(header, SEG_MAGIC, 4);
    header[4] = SEG_VERSION;
    header[5] = (uint8_t)p->kind;
    header[6] = (uint8_t)v->config.aead;
    header[7] = 0;
    util_store_be64(header + 8, p->epoch);
    memcpy(header + 16, v->config.vault_id, VAULT_ID_BYTES);
    if ((rc = util_random(header + 32, 32)) != 0)
        goto done;
    /* Never what a reader refuses (segment_head_length, state_read_segment). */
    if (head.len + PQV_AEAD_TAG_BYTES > MAX_SEGMENT_HEAD_BYTES || nblocks > UINT32_MAX ||
        SEGMENT_HEADER_BYTES + head.len + PQV_AEAD_TAG_BYTES + off > MAX_SEGMENT_BYTES) {
        rc = error_set(PQV_E_INVAL, NULL, "segment too large (a head of %zu bytes, %llu bytes "
            "of blocks: at most %u and %llu in all)", head.len + PQV_AEAD_TAG_BYTES,
            (unsigned long long)off, (unsigned)MAX_SEGMENT_HEAD_BYTES,
            (unsigned long long)MAX_SEGMENT_BYTES);
        goto done;
    }
    util_store_be32(header + 64, (uint32_t)(head.len + PQV_AEAD_TAG_BYTES));
    util_store_be32(header + 68, (uint32_t)nblocks);
    if ((rc = seg_key(v, header + 32, p->epoch, key)) != 0)
        goto done;
    out->len = 0;
    buf_bytes(out, header, sizeof(header));
    if ((rc = seal_unit(v, key, header, 0, &head, out)) != 0 ||
        (rc = chain_next(p->prev_chain, out->p, out->len, chain)) != 0)
        goto done;
    for (size_t i = 0; i < nblocks && rc == 0; i++)
        rc = seal_unit(v, key, header, i + 1, &blocks[i].plain, out);
    if (rc == 0 && out->nomem)
        rc = PQV_E_NOMEM;
done:
    for (size_t i = 0; i < nblocks; i++)
        buf_wipe_free(&blocks[i].plain);
    free(blocks);
    free(sorted);
    buf_wipe_free(&head);
    entry_tables_free(&t);
    util_wipe(key, sizeof(key));
    return rc;
}

/* ---- opening ---- */

int
segment_check_header(const uint8_t *h, size_t len, uint64_t epoch, const uint8_t vault_id[16])
{
    if (len < SEGMENT_HEADER_BYTES)
        return error_set(PQV_E_INTEGRITY, NULL, "segment is truncated");
    if (memcmp(h, SEG_MAGIC, 4) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "segment has a bad magic number");
    /* The config's format version fixes the segment version: another one
     * in a format-2 vault is damage, not a newer pqvault's segment. */
    if (h[4] != SEG_VERSION)
        return error_set(PQV_E_INTEGRITY, NULL, "segment has an unknown version (%u)", h[4]);
    if ((h[5] != SEGMENT_DELTA && h[5] != SEGMENT_BASE) || pqv_aead_name(h[6]) == NULL || h[7] != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "segment header is malformed");
    if (util_load_be64(h + 8) != epoch)
        return error_set(PQV_E_INTEGRITY, NULL, "segment holds epoch %llu, not its own",
            (unsigned long long)util_load_be64(h + 8));
    if (vault_id != NULL && memcmp(h + 16, vault_id, VAULT_ID_BYTES) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "segment belongs to another vault");
    if (util_load_be32(h + 64) < PQV_AEAD_TAG_BYTES)
        return error_set(PQV_E_INTEGRITY, NULL, "segment head is truncated");
    return 0;
}

void
segment_ext_free(struct seg_ext *ext, size_t n)
{
    for (size_t i = 0; ext != NULL && i < n; i++) {
        util_wipe(ext[i].data, ext[i].len);
        free(ext[i].data);
    }
    free(ext);
}

const struct seg_ext *
segment_ext(const struct segment *s, uint64_t type)
{
    for (size_t i = 0; i < s->next; i++)
        if (s->ext[i].type == type)
            return &s->ext[i];
    return NULL;
}

/* parse_extensions(s, c): a version-2 head's extensions: at least one,
 * types ascending; an unknown critical type is refused (a newer format
 * this pqvault cannot read), an unknown other kept (and carried by no
 * writer of this version). */
static int
parse_extensions(struct segment *s, struct cursor *c)
{
    uint64_t n = cursor_varint_max(c, cursor_left(c) / 3);

    if (n == 0 || c->bad)
        return error_set(PQV_E_INTEGRITY, NULL, "segment head is malformed");
    if ((s->ext = calloc(n, sizeof(*s->ext))) == NULL)
        return PQV_E_NOMEM;
    for (; s->next < n && !c->bad; s->next++) {
        struct seg_ext *x = &s->ext[s->next];
        const uint8_t *q;
        x->type = cursor_varint(c);
        x->flags = cursor_u8(c);
        x->len = (size_t)cursor_varint_max(c, SEG_EXT_MAX);
        if (c->bad || (x->flags & ~SEG_EXT_CRITICAL) != 0 ||
            (s->next > 0 && x->type <= s->ext[s->next - 1].type) ||
            (q = cursor_take(c, x->len)) == NULL)
            return error_set(PQV_E_INTEGRITY, NULL, "segment head is malformed");
        if ((x->flags & SEG_EXT_CRITICAL) && x->type != SEG_EXT_WRITERS &&
            x->type != SEG_EXT_IMPORTED)
            return error_set(PQV_E_UNSUPPORTED, NULL, "segment of epoch %llu needs a newer "
                "pqvault (head extension %llu)", (unsigned long long)s->epoch,
                (unsigned long long)x->type);
        if ((x->data = malloc(x->len + 1)) == NULL)
            return PQV_E_NOMEM;
        memcpy(x->data, q, x->len);
    }
    return 0;
}

/* parse_head(s, plain, len): the head's fields into ${s}. */
static int
parse_head(struct segment *s, const uint8_t *plain, size_t len)
{
    struct cursor c;
    const uint8_t *q;
    uint64_t n, off = 0;
    int version, rc;

    cursor_init(&c, plain, len);
    if ((version = cursor_u8(&c)) != HEAD_VERSION && version != HEAD_VERSION_EXT)
        return error_set(PQV_E_UNSUPPORTED, NULL, "segment head version not supported");
    s->time = (int64_t)cursor_be64(&c);
    s->base = cursor_varint(&c);
    if ((q = cursor_take(&c, 32)) != NULL)
        memcpy(s->prev_chain, q, 32);
    if ((q = cursor_take(&c, 32)) != NULL)
        memcpy(s->keyfile_hash, q, 32);
    n = cursor_varint_max(&c, cursor_left(&c) / 32);
    if (n > 0 && (s->superseded = malloc(n * 32)) == NULL)
        return PQV_E_NOMEM;
    for (; s->nsuperseded < n && (q = cursor_take(&c, 32)) != NULL; s->nsuperseded++)
        memcpy(s->superseded[s->nsuperseded], q, 32);
    if (s->kind == SEGMENT_BASE) {
        n = cursor_varint_max(&c, cursor_left(&c) / 33);
        if (n > 0 && (s->history = calloc(n, sizeof(*s->history))) == NULL)
            return PQV_E_NOMEM;
        for (; s->nhistory < n && !c.bad; s->nhistory++) {
            s->history[s->nhistory].epoch = cursor_varint(&c);
            if ((q = cursor_take(&c, 32)) != NULL)
                memcpy(s->history[s->nhistory].chain, q, 32);
            /* Ascending, and all before the base. */
            if (s->history[s->nhistory].epoch >= s->epoch ||
                (s->nhistory > 0 && s->history[s->nhistory].epoch <= s->history[s->nhistory - 1].epoch))
                c.bad = 1;
        }
    }
    n = cursor_varint_max(&c, 1u << 20);
    if ((q = cursor_take(&c, n)) != NULL && n > 0) {
        if ((s->wrap = malloc(n)) == NULL)
            return PQV_E_NOMEM;
        memcpy(s->wrap, q, n);
        s->wraplen = n;
    }
    n = cursor_varint_max(&c, cursor_left(&c));
    if (n > 0 && (s->t.strings = calloc(n, sizeof(char *))) == NULL)
        return PQV_E_NOMEM;
    for (; s->t.nstrings < n && !c.bad; s->t.nstrings++) {
        uint64_t l = cursor_varint_max(&c, 255);
        if ((q = cursor_take(&c, l)) == NULL || memchr(q, '\0', l) != NULL) {
            c.bad = 1;
            break;
        }
        if ((s->t.strings[s->t.nstrings] = malloc(l + 1)) == NULL)
            return PQV_E_NOMEM;
        memcpy(s->t.strings[s->t.nstrings], q, l);
        s->t.strings[s->t.nstrings][l] = '\0';
    }
    n = cursor_varint_max(&c, cursor_left(&c) / (PACK_ID_BYTES + 1));
    if (n > 0 && (s->t.packs = calloc(n, sizeof(*s->t.packs))) == NULL)
        return PQV_E_NOMEM;
    s->t.cappacks = n;
    for (; s->t.npacks < n && !c.bad; s->t.npacks++) {
        struct seg_pack *pk = &s->t.packs[s->t.npacks];
        if ((q = cursor_take(&c, PACK_ID_BYTES)) != NULL)
            memcpy(pk->id, q, PACK_ID_BYTES);
        pk->flags = cursor_u8(&c);
        if ((pk->flags & ~(PACK_INTRODUCED | PACK_V1_OBJECT)) != 0 ||
            pk->flags == (PACK_INTRODUCED | PACK_V1_OBJECT))
            c.bad = 1;
        if (pk->flags & PACK_INTRODUCED) {
            pk->size = cursor_varint(&c);
            if ((q = cursor_take(&c, 32)) != NULL)
                memcpy(pk->hash, q, 32);
        }
    }
    if (s->nblocks > 0 && (s->blocks = calloc(s->nblocks, sizeof(*s->blocks))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < s->nblocks && !c.bad; i++) {
        struct seg_block *b = &s->blocks[i];
        if ((q = cursor_take(&c, TAG_BYTES)) != NULL)
            memcpy(b->first, q, TAG_BYTES);
        b->off = cursor_varint(&c);
        b->len = cursor_varint_max(&c, 1u << 30);
        b->n = cursor_varint(&c);
        /* Contiguous, in tag order, none empty. */
        if (b->off != off || b->len <= PQV_AEAD_TAG_BYTES || b->n == 0 ||
            (i > 0 && memcmp(s->blocks[i - 1].first, b->first, TAG_BYTES) >= 0))
            c.bad = 1;
        off += b->len;
    }
    s->blocklen = off;
    if (off > MAX_SEGMENT_BYTES)
        c.bad = 1;
    s->nentries = cursor_varint(&c);
    if (version == HEAD_VERSION_EXT && !c.bad && (rc = parse_extensions(s, &c)) != 0)
        return rc;
    if (c.bad || cursor_left(&c) != 0 || (s->kind == SEGMENT_BASE ? s->base != s->epoch
                                                                     : s->base >= s->epoch))
        return error_set(PQV_E_INTEGRITY, NULL, "segment head is malformed");
    return 0;
}

int
segment_head_length(const uint8_t header[SEGMENT_HEADER_BYTES], uint64_t size, size_t *headlen)
{
    uint32_t n = util_load_be32(header + 64);

    /* Bounded before anything is read or allocated for it. */
    if (n > MAX_SEGMENT_HEAD_BYTES)
        return error_set(PQV_E_INTEGRITY, NULL, "segment head of %lu bytes is larger than any "
            "pqvault writes (%u)", (unsigned long)n, (unsigned)MAX_SEGMENT_HEAD_BYTES);
    if (size < SEGMENT_HEADER_BYTES || size - SEGMENT_HEADER_BYTES < n)
        return error_set(PQV_E_INTEGRITY, NULL, "segment is truncated (%llu bytes, its head "
            "alone needs %llu)", (unsigned long long)size,
            (unsigned long long)SEGMENT_HEADER_BYTES + n);
    *headlen = n;
    return 0;
}

int
segment_open_head(pqv_vault *v, uint64_t epoch, const uint8_t *bytes, size_t len,
    struct segment *s)
{
    uint8_t nonce[PQV_AEAD_NONCE_BYTES], *plain = NULL;
    size_t headlen;
    int rc;

    memset(s, 0, sizeof(*s));
    if ((rc = segment_check_header(bytes, len, epoch, v->config.vault_id)) != 0 ||
        (rc = segment_head_length(bytes, len, &headlen)) != 0)
        return rc;
    if (len != SEGMENT_HEADER_BYTES + headlen)
        return error_set(PQV_E_INVAL, NULL, "not a segment's header and head");
    s->epoch = epoch;
    s->kind = bytes[5];
    s->suite = bytes[6];
    memcpy(s->header, bytes, SEGMENT_HEADER_BYTES);
    s->nblocks = util_load_be32(bytes + 68);
    if ((rc = seg_key(v, bytes + 32, epoch, s->key)) != 0)
        return rc;
    if ((plain = malloc(headlen)) == NULL)
        return PQV_E_NOMEM;
    unit_nonce(0, nonce);
    rc = pqv_aead_open1(s->suite, s->key, nonce, bytes, SEGMENT_HEADER_BYTES,
        bytes + SEGMENT_HEADER_BYTES, headlen, plain);
    if (rc == PQV_E_INTEGRITY)
        rc = error_set(rc, NULL, "segment failed authentication (corrupted, altered or moved)");
    if (rc == 0)
        rc = parse_head(s, plain, headlen - PQV_AEAD_TAG_BYTES);
    util_wipe(plain, headlen);
    free(plain);
    if (rc == 0)
        rc = chain_next(s->prev_chain, bytes, SEGMENT_HEADER_BYTES + headlen, s->chain);
    if (rc != 0)
        segment_free(s);
    return rc;
}

uint64_t
segment_size(const struct segment *s)
{
    return SEGMENT_HEADER_BYTES + (uint64_t)util_load_be32(s->header + 64) + s->blocklen;
}

int
segment_open(pqv_vault *v, uint64_t epoch, const uint8_t *blob, size_t len, struct segment *s)
{
    size_t headlen;
    uint64_t total;
    int rc;

    memset(s, 0, sizeof(*s));
    if ((rc = segment_check_header(blob, len, epoch, v->config.vault_id)) != 0 ||
        (rc = segment_head_length(blob, len, &headlen)) != 0 ||
        (rc = segment_open_head(v, epoch, blob, SEGMENT_HEADER_BYTES + headlen, s)) != 0)
        return rc;
    /* The blocks, and nothing after them. */
    total = segment_size(s);
    if (total != len)
        rc = error_set(PQV_E_INTEGRITY, NULL, "segment has %llu bytes, its head says %llu",
            (unsigned long long)len, (unsigned long long)total);
    if (rc == 0 && s->blocklen > 0) {
        if ((s->blockdata = malloc(s->blocklen)) == NULL)
            rc = PQV_E_NOMEM;
        else
            memcpy(s->blockdata, blob + SEGMENT_HEADER_BYTES + headlen, s->blocklen);
    }
    if (rc != 0)
        segment_free(s);
    return rc;
}

int
segment_block(pqv_vault *v, const struct segment *s, size_t i, struct entry **out, size_t *n)
{
    const struct seg_block *b = &s->blocks[i];
    uint8_t nonce[PQV_AEAD_NONCE_BYTES], *plain;
    uint8_t prev[TAG_BYTES];
    struct entry *es = NULL;
    struct cursor c;
    size_t plainlen = b->len - PQV_AEAD_TAG_BYTES, k = 0;
    int rc;

    if ((plain = malloc(plainlen + 1)) == NULL)
        return PQV_E_NOMEM;
    unit_nonce(i + 1, nonce);
    rc = pqv_aead_open1(s->suite, s->key, nonce, s->header, SEGMENT_HEADER_BYTES,
        s->blockdata + b->off, b->len, plain);
    if (rc == PQV_E_INTEGRITY)
        rc = error_set(rc, NULL, "segment block %zu failed authentication", i);
    /* Each entry takes at least 3 bytes: bounds the count. */
    if (rc == 0 && b->n > plainlen / 3)
        rc = error_set(PQV_E_INTEGRITY, NULL, "segment block %zu is malformed", i);
    if (rc == 0 && (es = calloc(b->n, sizeof(*es))) == NULL)
        rc = PQV_E_NOMEM;
    cursor_init(&c, plain, plainlen);
    for (; rc == 0 && k < b->n; k++) {
        uint8_t tag[TAG_BYTES];
        if ((rc = entry_decode(&c, &es[k], &s->t)) != 0)
            break;
        es[k].epoch = s->epoch;
        /* In tag order, starting with the index's first tag. */
        if ((rc = segment_tag(v, es[k].name, tag)) != 0)
            break;
        if ((k == 0 && memcmp(tag, b->first, TAG_BYTES) != 0) ||
            (k > 0 && memcmp(prev, tag, TAG_BYTES) >= 0)) {
            rc = error_set(PQV_E_INTEGRITY, es[k].name, "out of order in its segment");
            k++;
            break;
        }
        memcpy(prev, tag, TAG_BYTES);
    }
    if (rc == 0 && cursor_left(&c) != 0)
        rc = error_set(PQV_E_INTEGRITY, NULL, "segment block %zu has trailing bytes", i);
    util_wipe(plain, plainlen);
    free(plain);
    if (rc != 0) {
        for (size_t j = 0; j < k && es != NULL; j++)
            entry_clear(&es[j]);
        free(es);
        return rc;
    }
    *out = es;
    *n = k;
    return 0;
}
