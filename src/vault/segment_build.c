/*
 * segment_build.c: a catalogue segment of format 2 built from entries
 * (docs/FORMAT.md sections 11 and 12): entries sorted by tag into blocks,
 * the head (chain, key-file hashes, command key, tables, block index,
 * extensions), each unit sealed.
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
#include "vault/segment_internal.h"
#include "vault/vault_internal.h"



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
        if (e->kind == KIND_FILE && e->chunked && !t->chunks)
            return error_set(PQV_E_INVAL, e->name, "a chunked file in a segment of format 2");
        if (e->kind == KIND_FILE && (rc = entry_check_size(e->name, e->size)) != 0)
            return rc;
        if (e->kind == KIND_FILE && !e->chunked) {
            uint8_t pad[32];
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

/* fill_chunk_blocks(p, t, blocks, nblocks): format 3's chunk records,
 * sorted by identity, into blocks of about 64 KiB (FORMAT.md section 23);
 * their packs added to ${t}. */
static int
fill_chunk_blocks(const struct seg_params *p, struct seg_tables *t, struct block_out **blocks,
    size_t *nblocks)
{
    int rc;

    for (size_t i = 0; i < p->nchunks; i++) {
        const struct chunk_rec *r = &p->chunks[i];
        uint64_t pack;
        if (i > 0 && memcmp(p->chunks[i - 1].id, r->id, CHUNK_ID_BYTES) >= 0)
            return error_set(PQV_E_INVAL, NULL, "chunk records out of order or repeated");
        if (*nblocks == 0 || (*blocks)[*nblocks - 1].plain.len >= BLOCK_TARGET) {
            struct block_out *grown = realloc(*blocks, (*nblocks + 1) * sizeof(*grown));
            if (grown == NULL)
                return PQV_E_NOMEM;
            *blocks = grown;
            memset(&grown[*nblocks], 0, sizeof(grown[*nblocks]));
            (*nblocks)++;
        }
        struct block_out *b = &(*blocks)[*nblocks - 1];
        if ((rc = entry_tables_pack(t, r->pack_id, 0, &pack)) != 0)
            return rc;
        buf_bytes(&b->plain, r->id, CHUNK_ID_BYTES);
        buf_varint(&b->plain, pack);
        buf_varint(&b->plain, r->pack_off);
        buf_varint(&b->plain, r->stored_len);
        buf_varint(&b->plain, r->plain_len);
        buf_u8(&b->plain, r->flags);
        b->n++;
        if (b->plain.nomem)
            return PQV_E_NOMEM;
    }
    return 0;
}

/* encode_head(head, p, t, blocks, nblocks, n, cblocks, ncblocks, chunks):
 * the head's plaintext (docs/FORMAT.md sections 11 and 21). */
static void
encode_head(struct buf *head, const struct seg_params *p, const struct seg_tables *t,
    const struct block_out *blocks, size_t nblocks, size_t n, const struct block_out *cblocks,
    size_t ncblocks, int chunks)
{
    uint64_t off = 0;

    buf_u8(head, chunks ? HEAD_VERSION_CHUNKS : p->next > 0 ? HEAD_VERSION_EXT : HEAD_VERSION);
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
    if (chunks) {
        buf_varint(head, ncblocks);
        for (size_t i = 0; i < ncblocks; i++) {
            buf_varint(head, off);
            buf_varint(head, cblocks[i].plain.len + PQV_AEAD_TAG_BYTES);
            buf_varint(head, cblocks[i].n);
            off += cblocks[i].plain.len + PQV_AEAD_TAG_BYTES;
        }
    }
    if (p->next > 0 || chunks) {
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
    segment_unit_nonce(index, nonce);
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
    struct block_out *blocks = NULL, *cblocks = NULL;
    size_t nblocks = 0, ncblocks = 0;
    struct buf head = { NULL, 0, 0, 0 };
    uint8_t header[SEGMENT_HEADER_BYTES], key[32];
    uint64_t off = 0;
    int chunks = v->config.version >= 3, rc;

    memset(&t, 0, sizeof(t));
    memset(key, 0, sizeof(key));
    t.chunks = chunks;
    t.special = chunks;
    if (!chunks && p->nchunks > 0)
        return error_set(PQV_E_INVAL, NULL, "chunk records in a segment of format 2");
    if ((rc = sort_by_tag(v, entries, n, &sorted)) != 0 ||
        (rc = fill_blocks(p, sorted, n, &t, &blocks, &nblocks)) != 0 ||
        (rc = fill_chunk_blocks(p, &t, &cblocks, &ncblocks)) != 0)
        goto done;
    for (size_t i = 0; i < nblocks; i++)
        off += blocks[i].plain.len + PQV_AEAD_TAG_BYTES;
    for (size_t i = 0; i < ncblocks; i++)
        off += cblocks[i].plain.len + PQV_AEAD_TAG_BYTES;
    /* Packs of known size and hash carry them (those this command wrote;
     * in a base also those earlier segments described). */
    if ((rc = describe_packs(&t, p)) != 0)
        goto done;
    encode_head(&head, p, &t, blocks, nblocks, n, cblocks, ncblocks, chunks);
    if (head.nomem) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    /* Header, sealed head, sealed blocks. */
    memcpy(header, SEG_MAGIC, 4);
    header[4] = chunks ? SEG_VERSION_CHUNKS : SEG_VERSION;
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
    if ((rc = segment_key(v, header + 32, p->epoch, key)) != 0)
        goto done;
    out->len = 0;
    buf_bytes(out, header, sizeof(header));
    if ((rc = seal_unit(v, key, header, 0, &head, out)) != 0 ||
        (rc = segment_chain_next(p->prev_chain, out->p, out->len, chain)) != 0)
        goto done;
    for (size_t i = 0; i < nblocks && rc == 0; i++)
        rc = seal_unit(v, key, header, i + 1, &blocks[i].plain, out);
    for (size_t i = 0; i < ncblocks && rc == 0; i++)
        rc = seal_unit(v, key, header, nblocks + 1 + i, &cblocks[i].plain, out);
    if (rc == 0 && out->nomem)
        rc = PQV_E_NOMEM;
done:
    for (size_t i = 0; i < nblocks; i++)
        buf_wipe_free(&blocks[i].plain);
    free(blocks);
    for (size_t i = 0; i < ncblocks; i++)
        buf_wipe_free(&cblocks[i].plain);
    free(cblocks);
    free(sorted);
    buf_wipe_free(&head);
    entry_tables_free(&t);
    util_wipe(key, sizeof(key));
    return rc;
}

