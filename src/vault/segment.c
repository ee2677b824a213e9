/*
 * segment.c: catalogue segments of format 2 (docs/FORMAT.md sections 10-12):
 * their keys, and opening one: its header, its head (the chain, key-file
 * hashes, command key, tables, block index, extensions) and, on demand,
 * each block of entries (building one: segment_build.c).  Everything read is checked before it is used:
 * lengths and counts are bounded by the head, which is authenticated first.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/buf.h"
#include "util/util.h"
#include "vault/chunker.h"
#include "vault/config.h"
#include "vault/entry.h"
#include "vault/names.h"
#include "vault/segment.h"
#include "vault/segment_cache.h"
#include "vault/segment_internal.h"
#include "vault/vault_internal.h"


static const char seg_label[] = "pqvault/v2/segment";
static const char chain_label[] = "pqvault/v2/chain";
static const char pad_label[] = "pqvault/v2/file-key";
static const char cmd_label[] = "pqvault/v2/command-key";

void
segment_free(struct segment *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < 2; i++)
        if (!s->borrowed || (s->part_own & (1u << i)))
            free(s->part[i]);
    if (s->borrowed) {
        util_wipe(s->cmd_key, sizeof(s->cmd_key));
        util_wipe(s->key, sizeof(s->key));
        memset(s, 0, sizeof(*s));
        return;
    }
    free(s->superseded);
    free(s->history);
    free(s->wrap);
    entry_tables_free(&s->t);
    free(s->blocks);
    free(s->cblocks);
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

int
segment_key(const pqv_vault *v, const uint8_t salt[32], uint64_t epoch, uint8_t key[32])
{
    uint8_t info[sizeof(seg_label) - 1 + 8];

    memcpy(info, seg_label, sizeof(seg_label) - 1);
    util_store_be64(info + sizeof(seg_label) - 1, epoch);
    return kdf_hkdf_sha256(key, 32, v->segments_key, 32, salt, 32, info, sizeof(info));
}

void
segment_unit_nonce(uint64_t unit, uint8_t nonce[PQV_AEAD_NONCE_BYTES])
{
    memset(nonce, 0, PQV_AEAD_NONCE_BYTES);
    util_store_be64(nonce + 4, unit);
}

int
segment_chain_next(const uint8_t prev[32], const uint8_t *bytes, size_t len, uint8_t out[32])
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
    if (h[4] != SEG_VERSION && h[4] != SEG_VERSION_CHUNKS)
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

/* parse_extensions(s, c, none_ok): a version-2 head's extensions (at
 * least one) or a version-3 head's (${none_ok}: perhaps none), types
 * ascending; an unknown critical type is refused (a newer format
 * this pqvault cannot read), an unknown other kept (and carried by no
 * writer of this version). */
static int
parse_extensions(struct segment *s, struct cursor *c, int none_ok)
{
    uint64_t n = cursor_varint_max(c, cursor_left(c) / 3);

    if ((n == 0 && !none_ok) || c->bad)
        return error_set(PQV_E_INTEGRITY, NULL, "segment head is malformed");
    if (n == 0)
        return 0;
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
        if ((x->flags & SEG_EXT_CRITICAL) && (x->type == 0 || x->type > SEG_EXT_KNOWN))
            return error_set(PQV_E_UNSUPPORTED, NULL, "segment of epoch %llu needs a newer "
                "pqvault (head extension %llu)", (unsigned long long)s->epoch,
                (unsigned long long)x->type);
        if ((x->data = malloc(x->len + 1)) == NULL)
            return PQV_E_NOMEM;
        memcpy(x->data, q, x->len);
    }
    return 0;
}

int
segment_parse_head(struct segment *s, const uint8_t *plain, size_t len)
{
    struct cursor c;
    const uint8_t *q;
    uint64_t n, off = 0;
    int version, rc;

    cursor_init(&c, plain, len);
    version = cursor_u8(&c);
    /* Format 3's segments have their own head version; format 2's one of
     * the two before it. */
    if (s->version == SEG_VERSION_CHUNKS ? version != HEAD_VERSION_CHUNKS
                                         : version != HEAD_VERSION && version != HEAD_VERSION_EXT)
        return error_set(PQV_E_UNSUPPORTED, NULL, "segment head version not supported");
    s->t.chunks = version == HEAD_VERSION_CHUNKS;
    s->t.special = s->t.chunks;
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
    s->nentries = cursor_varint(&c);
    if (version == HEAD_VERSION_CHUNKS) {
        /* The chunk blocks follow the entries' blocks, contiguous. */
        n = cursor_varint_max(&c, cursor_left(&c) / 3);
        if (n > 0 && (s->cblocks = calloc(n, sizeof(*s->cblocks))) == NULL)
            return PQV_E_NOMEM;
        for (; s->ncblocks < n && !c.bad; s->ncblocks++) {
            struct seg_cblock *b = &s->cblocks[s->ncblocks];
            b->off = cursor_varint(&c);
            b->len = cursor_varint_max(&c, 1u << 30);
            b->n = cursor_varint(&c);
            if (b->off != off || b->len <= PQV_AEAD_TAG_BYTES || b->n == 0 ||
                b->n > (b->len - PQV_AEAD_TAG_BYTES) / CHUNK_REC_MIN)
                c.bad = 1;
            off += b->len;
            s->nchunks += b->n;
        }
    }
    s->blocklen = off;
    if (off > MAX_SEGMENT_BYTES)
        c.bad = 1;
    /* Format 3 heads always end with the extensions' count (0: none). */
    if ((version == HEAD_VERSION_EXT || version == HEAD_VERSION_CHUNKS) && !c.bad &&
        (rc = parse_extensions(s, &c, version == HEAD_VERSION_CHUNKS)) != 0)
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
    if (bytes[4] == SEG_VERSION_CHUNKS && v->config.version < 3)
        return error_set(PQV_E_INTEGRITY, NULL, "a segment of format 3 in a vault of format %d",
            v->config.version);
    s->epoch = epoch;
    s->version = bytes[4];
    s->kind = bytes[5];
    s->suite = bytes[6];
    memcpy(s->header, bytes, SEGMENT_HEADER_BYTES);
    s->nblocks = util_load_be32(bytes + 68);
    if ((rc = segment_key(v, bytes + 32, epoch, s->key)) != 0)
        return rc;
    if ((plain = malloc(headlen)) == NULL)
        return PQV_E_NOMEM;
    segment_unit_nonce(0, nonce);
    rc = pqv_aead_open1(s->suite, s->key, nonce, bytes, SEGMENT_HEADER_BYTES,
        bytes + SEGMENT_HEADER_BYTES, headlen, plain);
    if (rc == PQV_E_INTEGRITY)
        rc = error_set(rc, NULL, "segment failed authentication (corrupted, altered or moved)");
    if (rc == 0)
        rc = segment_parse_head(s, plain, headlen - PQV_AEAD_TAG_BYTES);
    util_wipe(plain, headlen);
    free(plain);
    if (rc == 0)
        rc = segment_chain_next(s->prev_chain, bytes, SEGMENT_HEADER_BYTES + headlen, s->chain);
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

void
segment_part_span(const struct segment *s, int part, uint64_t *lo, uint64_t *hi)
{
    uint64_t chunks_from = s->ncblocks > 0 ? s->cblocks[0].off : s->blocklen;

    *lo = part == SEGMENT_PART_CHUNKS ? chunks_from : 0;
    *hi = part == SEGMENT_PART_CHUNKS ? s->blocklen : chunks_from;
}

int
segment_fetch_part(pqv_vault *v, struct segment *s, int part)
{
    char sname[STORAGE_NAME_MAX];
    uint64_t lo, hi;
    uint8_t *data;
    int rc;

    if (s->blockdata != NULL || s->part[part] != NULL)
        return 0;
    segment_part_span(s, part, &lo, &hi);
    if (hi == lo)
        return 0;
    if (s->borrowed && (s->part[part] = segment_cache_part(v, s->epoch, part, NULL)) != NULL)
        return 0;
    if (hi - lo > SIZE_MAX || (data = malloc((size_t)(hi - lo))) == NULL)
        return PQV_E_NOMEM;
    segment_name(s->epoch, sname);
    if ((rc = v->storage->ops->get_range(v->storage, sname, s->data_off + lo, data,
             (size_t)(hi - lo))) != 0) {
        free(data);
        return error_subject(rc, sname);
    }
    /* The cache takes it (or gives the copy another thread read first). */
    if (s->borrowed && (s->part[part] = segment_cache_part(v, s->epoch, part, data)) != NULL)
        return 0;
    s->part[part] = data;
    if (s->borrowed)
        s->part_own |= 1u << part;
    return 0;
}

/* sealed_block(v, s, part, off, len, at, tmp): where the sealed block at
 * ${off} of ${part} is: in what was read of the segment, or read alone now
 * into *${tmp} (the caller frees it). */
static int
sealed_block(pqv_vault *v, const struct segment *s, int part, uint64_t off, uint64_t len,
    const uint8_t **at, uint8_t **tmp)
{
    char sname[STORAGE_NAME_MAX];
    uint64_t lo, hi;
    int rc;

    *tmp = NULL;
    if (s->blockdata != NULL) {
        *at = s->blockdata + off;
        return 0;
    }
    segment_part_span(s, part, &lo, &hi);
    if (off < lo || off > hi || len > hi - off)
        return error_set(PQV_E_INTEGRITY, NULL, "segment block outside its part");
    if (s->part[part] != NULL) {
        *at = s->part[part] + (off - lo);
        return 0;
    }
    if ((*tmp = malloc((size_t)len)) == NULL)
        return PQV_E_NOMEM;
    segment_name(s->epoch, sname);
    if ((rc = v->storage->ops->get_range(v->storage, sname, s->data_off + off, *tmp,
             (size_t)len)) != 0) {
        free(*tmp);
        *tmp = NULL;
        return error_subject(rc, sname);
    }
    *at = *tmp;
    return 0;
}

/* open_block(v, s, part, off, len, unit, plain): the sealed block at
 * ${off} of ${part}, unit ${unit} of the segment, opened into *${plain}
 * (${len} - the tag's bytes, allocated one more; the caller wipes and
 * frees it).  PQV_E_INTEGRITY, unexplained, if it fails authentication. */
static int
open_block(pqv_vault *v, const struct segment *s, int part, uint64_t off, uint64_t len,
    uint64_t unit, uint8_t **plain)
{
    uint8_t nonce[PQV_AEAD_NONCE_BYTES], *tmp = NULL;
    const uint8_t *sealed = NULL;
    int rc;

    if ((rc = sealed_block(v, s, part, off, len, &sealed, &tmp)) != 0)
        return rc;
    if ((*plain = malloc((size_t)(len - PQV_AEAD_TAG_BYTES) + 1)) == NULL) {
        free(tmp);
        return PQV_E_NOMEM;
    }
    segment_unit_nonce(unit, nonce);
    rc = pqv_aead_open1(s->suite, s->key, nonce, s->header, SEGMENT_HEADER_BYTES, sealed,
        (size_t)len, *plain);
    free(tmp);
    if (rc != 0) {
        util_wipe(*plain, (size_t)(len - PQV_AEAD_TAG_BYTES));
        free(*plain);
        *plain = NULL;
    }
    return rc;
}

size_t
segment_block_room(const struct segment *s, size_t i)
{
    const struct seg_block *b = &s->blocks[i];
    uint64_t most = b->len > PQV_AEAD_TAG_BYTES ? (b->len - PQV_AEAD_TAG_BYTES) / 3 : 0;

    /* Each entry takes at least 3 bytes: bounds the count. */
    return (size_t)(b->n < most ? b->n : most);
}

int
segment_block_into(pqv_vault *v, const struct segment *s, size_t i, struct entry *es)
{
    const struct seg_block *b = &s->blocks[i];
    uint8_t prev[TAG_BYTES], *plain;
    struct cursor c;
    size_t plainlen = b->len - PQV_AEAD_TAG_BYTES, k = 0;
    int rc;

    if ((rc = open_block(v, s, SEGMENT_PART_ENTRIES, b->off, b->len, i + 1, &plain)) != 0)
        return rc != PQV_E_INTEGRITY ? rc :
            error_set(rc, NULL, "segment block %zu failed authentication", i);
    if (b->n != segment_block_room(s, i))
        rc = error_set(PQV_E_INTEGRITY, NULL, "segment block %zu is malformed", i);
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
    if (rc != 0)
        for (size_t j = 0; j < k; j++)
            entry_clear(&es[j]);
    return rc;
}

int
segment_block(pqv_vault *v, const struct segment *s, size_t i, struct entry **out, size_t *n)
{
    size_t room = segment_block_room(s, i);
    struct entry *es;
    int rc;

    *out = NULL;
    *n = 0;
    if ((es = calloc(room + 1, sizeof(*es))) == NULL)
        return PQV_E_NOMEM;
    if ((rc = segment_block_into(v, s, i, es)) != 0) {
        free(es);
        return rc;
    }
    *out = es;
    *n = room;
    return 0;
}

int
segment_chunks(pqv_vault *v, const struct segment *s, size_t i, struct chunk_rec **out,
    size_t *n)
{
    const struct seg_cblock *b = &s->cblocks[i];
    struct chunk_rec *recs = NULL;
    size_t plainlen = b->len - PQV_AEAD_TAG_BYTES;
    uint8_t *plain;
    int rc;

    *out = NULL;
    *n = 0;
    if ((rc = open_block(v, s, SEGMENT_PART_CHUNKS, b->off, b->len, s->nblocks + 1 + i,
             &plain)) != 0)
        return rc != PQV_E_INTEGRITY ? rc :
            error_set(rc, NULL, "segment chunk block %zu failed authentication", i);
    rc = segment_parse_chunks(s, i, plain, plainlen, b->n, &recs);
    util_wipe(plain, plainlen);
    free(plain);
    if (rc != 0)
        return rc;
    *out = recs;
    *n = (size_t)b->n;
    return 0;
}

int
segment_parse_chunks(const struct segment *s, size_t i, const uint8_t *plain, size_t len,
    uint64_t n, struct chunk_rec **out)
{
    struct chunk_rec *recs;
    struct cursor c;
    int rc = 0;

    *out = NULL;
    /* (n is bounded by the block's length: segment_parse_head.) */
    if (n > len / CHUNK_REC_MIN + 1)
        return error_set(PQV_E_INTEGRITY, NULL, "segment chunk block %zu is malformed", i);
    if ((recs = calloc(n + 1, sizeof(*recs))) == NULL)
        return PQV_E_NOMEM;
    cursor_init(&c, plain, len);
    for (uint64_t k = 0; rc == 0 && k < n; k++) {
        struct chunk_rec *r = &recs[k];
        const uint8_t *q = cursor_take(&c, CHUNK_ID_BYTES);
        uint64_t pack;
        if (q != NULL)
            memcpy(r->id, q, CHUNK_ID_BYTES);
        pack = cursor_varint(&c);
        r->pack_off = (uint32_t)cursor_varint_max(&c, UINT32_MAX);
        r->stored_len = (uint32_t)cursor_varint_max(&c, UINT32_MAX);
        r->plain_len = (uint32_t)cursor_varint_max(&c, CHUNK_MAX);
        r->flags = cursor_u8(&c);
        if (c.bad || pack >= s->t.npacks || (s->t.packs[pack].flags & PACK_V1_OBJECT) ||
            r->plain_len == 0 || r->stored_len < CHUNK_SALT_BYTES + PQV_AEAD_TAG_BYTES ||
            r->stored_len > chunk_blob_max(r->plain_len) ||
            (r->flags & ~BLOB_FLAGS_MASK) != 0 || pqv_aead_name(BLOB_SUITE(r->flags)) == NULL ||
            (k > 0 && memcmp(recs[k - 1].id, r->id, CHUNK_ID_BYTES) >= 0)) {
            rc = error_set(PQV_E_INTEGRITY, NULL, "segment chunk block %zu is malformed", i);
            break;
        }
        memcpy(r->pack_id, s->t.packs[pack].id, PACK_ID_BYTES);
    }
    if (rc == 0 && cursor_left(&c) != 0)
        rc = error_set(PQV_E_INTEGRITY, NULL, "segment chunk block %zu has trailing bytes", i);
    if (rc != 0) {
        free(recs);
        return rc;
    }
    *out = recs;
    return 0;
}
