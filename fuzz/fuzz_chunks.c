/*
 * fuzz_chunks.c: libFuzzer target for format 3's parsers (docs/FORMAT.md
 * sections 22 and 23) over a fixed test vault.  The first byte picks the
 * mode:
 *   0: the rest is a segment head's plaintext of version 3 (a delta or a
 *      base, 0 to 3 entry blocks), parsed as if it had authenticated;
 *   1: a chunk block's plaintext (its record count the next byte), against
 *      a pack table of three packs;
 *   2: entries of a format-3 segment (chunked files, FIFOs and device
 *      nodes allowed), one after the other;
 *   3: records made from the bytes (identity, lengths, flags) sealed into a
 *      pack by pack3_finish: pack3_table must give them back exactly, and
 *      the pack's length must be its Padmé length; then the same pack with
 *      one byte flipped must be refused.
 * Every allocation is bounded by the input's length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pqvault/aead.h"
#include "util/buf.h"
#include "util/cursor.h"
#include "vault/chunker.h"
#include "vault/entry.h"
#include "vault/pack.h"
#include "vault/pack3.h"
#include "vault/segment.h"
#include "vault/vault_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static pqv_vault *
test_vault(void)
{
    static pqv_vault *v;

    if (v == NULL) {
        if ((v = calloc(1, sizeof(*v))) == NULL)
            abort();
        v->config.version = 3;
        v->config.aead = PQV_AEAD_AES256GCM;
        for (int i = 0; i < 32; i++)
            v->packs_key[i] = (uint8_t)(0x60 + i);
        v->slot = -1;
    }
    return v;
}

static void
head(const uint8_t *p, size_t n)
{
    struct segment s;

    if (n < 2)
        return;
    memset(&s, 0, sizeof(s));
    s.version = 3;
    s.epoch = 5;
    s.kind = (p[0] & 1) ? SEGMENT_BASE : SEGMENT_DELTA;
    s.nblocks = (size_t)(p[0] >> 1) % 4;
    (void)segment_parse_head(&s, p + 1, n - 1);
    segment_free(&s);
}

static void
chunk_block(const uint8_t *p, size_t n)
{
    struct seg_pack packs[3];
    struct chunk_rec *recs = NULL;
    struct segment s;

    if (n < 1)
        return;
    memset(&s, 0, sizeof(s));
    memset(packs, 0, sizeof(packs));
    for (int i = 0; i < 3; i++)
        packs[i].id[0] = (uint8_t)(i + 1);
    packs[2].flags = PACK_V1_OBJECT;
    s.t.packs = packs;
    s.t.npacks = 3;
    if (segment_parse_chunks(&s, 0, p + 1, n - 1, p[0], &recs) == 0) {
        for (size_t i = 1; i < p[0]; i++)
            if (memcmp(recs[i - 1].id, recs[i].id, CHUNK_ID_BYTES) >= 0)
                abort(); /* sorted, once each */
    }
    free(recs);
}

static void
entries(const uint8_t *p, size_t n)
{
    static char name_a[] = "user", name_b[] = "user.x";
    char *strings[2] = { name_a, name_b };
    struct seg_pack packs[1];
    struct seg_tables t;
    struct cursor c;

    memset(&t, 0, sizeof(t));
    memset(packs, 0, sizeof(packs));
    t.strings = strings;
    t.nstrings = 2;
    t.packs = packs;
    t.npacks = 1;
    t.chunks = 1;
    t.special = 1;
    cursor_init(&c, p, n);
    while (cursor_left(&c) > 0) {
        struct entry e;
        if (entry_decode(&c, &e, &t) != 0)
            break;
        if (e.chunked && (e.kind != KIND_FILE || e.key_state != KEY_NONE))
            abort();
        /* Only a device node has a number; a FIFO or device has no data. */
        if ((e.rdev_major != 0 || e.rdev_minor != 0) && !KIND_IS_DEVICE(e.kind))
            abort();
        if ((e.kind == KIND_FIFO || KIND_IS_DEVICE(e.kind)) &&
            (e.nextents != 0 || e.has_content || e.target != NULL))
            abort();
        for (uint32_t i = 0; e.chunked && i < e.nextents; i++)
            if (!e.extents[i].chunk || e.extents[i].plain_len > CHUNK_MAX ||
                e.extents[i].file_off + e.extents[i].plain_len > e.size)
                abort();
        entry_clear(&e);
    }
}

static void
pack(const uint8_t *p, size_t n)
{
    const pqv_vault *v = test_vault();
    uint8_t id[PACK_ID_BYTES];
    struct chunk_rec recs[64], *back = NULL;
    struct buf out = { NULL, 0, 0, 0 };
    size_t k = 0, nback = 0;
    uint32_t off = 0;

    memset(id, 0x5a, sizeof(id));
    pack3_begin(v->config.aead, &out);
    /* Each record: 32 bytes of identity, a length byte (blob 32 + 8 * it
     * bytes), a flag byte; the blob's bytes are the input's again. */
    while (n >= 34 && k < 64) {
        struct chunk_rec *r = &recs[k++];
        memset(r, 0, sizeof(*r));
        memcpy(r->id, p, CHUNK_ID_BYTES);
        memcpy(r->pack_id, id, PACK_ID_BYTES);
        r->stored_len = 32 + 8u * p[32];
        r->plain_len = 1 + p[33];
        r->flags = (uint8_t)(BLOB_FLAGS(p[33] & 1, v->config.aead));
        r->pack_off = off;
        off += r->stored_len;
        for (uint32_t i = 0; i < r->stored_len; i++)
            buf_u8(&out, p[i % 34]);
        p += 34;
        n -= 34;
    }
    if (out.nomem || pack3_finish(v, id, recs, k, &out) != 0)
        abort();
    if (!pack3_is_padded(out.len))
        abort();
    if (pack3_table(v, id, out.p, out.len, &back, &nback) != 0 || nback != k)
        abort();
    for (size_t i = 0; i < k; i++)
        if (memcmp(&back[i], &recs[i], sizeof(recs[i])) != 0)
            abort();
    free(back);
    back = NULL;
    if (n > 0) {
        size_t at = p[0] * 131u % out.len;
        out.p[at] ^= 1;
        /* A flip in a blob is the blob's to catch; anywhere else refused. */
        if (at < PACK_HEADER_BYTES || at >= PACK_HEADER_BYTES + off) {
            if (pack3_table(v, id, out.p, out.len, &back, &nback) == 0)
                abort();
        }
        free(back);
    }
    buf_wipe_free(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] & 3) {
    case 0: head(data + 1, size - 1); break;
    case 1: chunk_block(data + 1, size - 1); break;
    case 2: entries(data + 1, size - 1); break;
    case 3: pack(data + 1, size - 1); break;
    }
    pqv_error_clear();
    return 0;
}
