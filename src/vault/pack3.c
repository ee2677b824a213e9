/*
 * pack3.c: packs of format 3 (docs/FORMAT.md section 22).
 *
 *   pack    = "PQVP" || 0x03 || suite || 0x00 0x00 || blob ... || table || locator
 *   table   = AEAD_suite(K_pack, nonce 1, ad = header || pack id,
 *                        count || records || zero padding)
 *   locator = AEAD_suite(K_pack, nonce 0, ad = header || pack id,
 *                        table's sealed length (8) || 8 zero bytes)
 *   K_pack  = HKDF-Expand(key("packs"), "pqvault/v3/pack" || pack id)
 *
 * The padding makes the pack's length a Padmé length below 8 MiB, a
 * multiple of 64 KiB for a full pack (pack3_padded; Padmé: Nikitin et al.,
 * "Reducing Metadata Leakage from Encrypted Files and Communication with
 * PURBs", PETS 2019): at most a fraction 1/2^(S+1) more, S the bits of the
 * length's exponent.
 */
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "pqvault/aead.h"
#include "util/cursor.h"
#include "util/util.h"
#include "vault/chunker.h"
#include "vault/pack.h"
#include "vault/pack3.h"
#include "vault/vault_internal.h"

static const char pack_label[] = "pqvault/v3/pack";

/* Bytes of a table's record at least (identity, three varints, flags). */
#define PACK_REC_MIN (CHUNK_ID_BYTES + 4)

uint64_t
pack3_padme(uint64_t len)
{
    unsigned e = 0, s = 0;
    uint64_t mask;

    if (len < 2)
        return len;
    while ((len >> (e + 1)) != 0)
        e++;                    /* e = floor(log2 len) */
    while ((e >> (s + 1)) != 0)
        s++;
    s++;                        /* s = floor(log2 e) + 1 */
    mask = (e > s ? (1ull << (e - s)) : 1) - 1;
    return (len + mask) & ~mask;
}

uint64_t
pack3_padded(uint64_t len)
{
    if (len >= PACK3_TARGET)
        return (len + PACK3_FULL_ALIGN - 1) / PACK3_FULL_ALIGN * PACK3_FULL_ALIGN;
    return pack3_padme(len);
}

int
pack3_is_padded(uint64_t len)
{
    return len >= PACK3_TARGET ? len % PACK3_FULL_ALIGN == 0 : pack3_padme(len) == len;
}

void
pack3_begin(int suite, struct buf *out)
{
    uint8_t header[PACK_HEADER_BYTES] = { 'P', 'Q', 'V', 'P', PACK3_VERSION, 0, 0, 0 };

    header[5] = (uint8_t)suite;
    buf_bytes(out, header, sizeof(header));
}

/* pack_key(v, id, key): K_pack. */
static int
pack_key(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], uint8_t key[32])
{
    uint8_t info[sizeof(pack_label) - 1 + PACK_ID_BYTES];

    memcpy(info, pack_label, sizeof(pack_label) - 1);
    memcpy(info + sizeof(pack_label) - 1, id, PACK_ID_BYTES);
    return kdf_hkdf_expand_sha256(key, 32, v->packs_key, info, sizeof(info));
}

static void
nonce_of(uint64_t n, uint8_t nonce[PQV_AEAD_NONCE_BYTES])
{
    memset(nonce, 0, PQV_AEAD_NONCE_BYTES);
    util_store_be64(nonce + 4, n);
}

/* pack_ad(header, id, ad): header || pack id. */
static size_t
pack_ad(const uint8_t *header, const uint8_t id[PACK_ID_BYTES], uint8_t ad[PACK_HEADER_BYTES + PACK_ID_BYTES])
{
    memcpy(ad, header, PACK_HEADER_BYTES);
    memcpy(ad + PACK_HEADER_BYTES, id, PACK_ID_BYTES);
    return PACK_HEADER_BYTES + PACK_ID_BYTES;
}

int
pack3_finish(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], const struct chunk_rec *recs,
    size_t n, struct buf *out)
{
    struct buf table = { NULL, 0, 0, 0 };
    uint8_t key[32], nonce[PQV_AEAD_NONCE_BYTES], ad[PACK_HEADER_BYTES + PACK_ID_BYTES];
    uint8_t loc[16], *q;
    uint64_t bare, padded;
    int suite = out->p[5], rc;

    buf_varint(&table, n);
    for (size_t i = 0; i < n; i++) {
        buf_bytes(&table, recs[i].id, CHUNK_ID_BYTES);
        buf_varint(&table, recs[i].pack_off);
        buf_varint(&table, recs[i].stored_len);
        buf_varint(&table, recs[i].plain_len);
        buf_u8(&table, recs[i].flags);
    }
    /* Padding (zeros, sealed with the table): pack3_padded. */
    bare = out->len + table.len + PQV_AEAD_TAG_BYTES + PACK3_LOCATOR_BYTES;
    padded = pack3_padded(bare);
    for (uint64_t k = bare; k < padded; k++)
        buf_u8(&table, 0);
    if (table.nomem || (q = buf_reserve(out, table.len + PQV_AEAD_TAG_BYTES + PACK3_LOCATOR_BYTES)) == NULL) {
        buf_wipe_free(&table);
        return PQV_E_NOMEM;
    }
    if ((rc = pack_key(v, id, key)) != 0)
        goto done;
    pack_ad(out->p, id, ad);
    nonce_of(1, nonce);
    if ((rc = pqv_aead_seal1(suite, key, nonce, ad, sizeof(ad), table.p, table.len, q)) != 0)
        goto done;
    util_store_be64(loc, table.len + PQV_AEAD_TAG_BYTES);
    memset(loc + 8, 0, 8);
    nonce_of(0, nonce);
    if ((rc = pqv_aead_seal1(suite, key, nonce, ad, sizeof(ad), loc, sizeof(loc),
             q + table.len + PQV_AEAD_TAG_BYTES)) != 0)
        goto done;
    out->len += table.len + PQV_AEAD_TAG_BYTES + PACK3_LOCATOR_BYTES;
done:
    util_wipe(key, sizeof(key));
    buf_wipe_free(&table);
    return rc;
}

/* Where a pack's bytes come from: in memory, or the storage (a ranged
 * read: the table alone, not the blobs). */
struct source3 {
    const uint8_t *data;         /* in memory, or NULL */
    pqv_storage *storage;
    const char *name;
};

static int
fetch(const struct source3 *src, uint64_t off, size_t len, uint8_t *out)
{
    if (src->data != NULL) {
        memcpy(out, src->data + off, len);
        return 0;
    }
    return src->storage->ops->get_range(src->storage, src->name, off, out, len);
}

/* read_table(v, id, src, len, recs, n): pack3_table over ${src}. */
static int
read_table(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], const struct source3 *src,
    uint64_t len, struct chunk_rec **recs, size_t *n)
{
    uint8_t key[32], nonce[PQV_AEAD_NONCE_BYTES], ad[PACK_HEADER_BYTES + PACK_ID_BYTES];
    uint8_t loc[16], header[PACK_HEADER_BYTES], sealed_loc[PACK3_LOCATOR_BYTES];
    uint8_t *plain = NULL, *sealed = NULL;
    uint64_t tlen = 0, count, end = 0;
    struct chunk_rec *r = NULL;
    struct cursor c;
    int suite, rc;

    *recs = NULL;
    *n = 0;
    if (len < PACK_HEADER_BYTES + PQV_AEAD_TAG_BYTES + PACK3_LOCATOR_BYTES)
        return error_set(PQV_E_INTEGRITY, NULL, "not a pack of format 3");
    if ((rc = fetch(src, 0, sizeof(header), header)) != 0 ||
        (rc = fetch(src, len - PACK3_LOCATOR_BYTES, sizeof(sealed_loc), sealed_loc)) != 0)
        return rc;
    if (memcmp(header, "PQVP", 4) != 0 || header[4] != PACK3_VERSION || header[6] != 0 ||
        header[7] != 0 || pqv_aead_name(suite = header[5]) == NULL)
        return error_set(PQV_E_INTEGRITY, NULL, "not a pack of format 3");
    if ((rc = pack_key(v, id, key)) != 0)
        return rc;
    pack_ad(header, id, ad);
    nonce_of(0, nonce);
    if ((rc = pqv_aead_open1(suite, key, nonce, ad, sizeof(ad), sealed_loc, PACK3_LOCATOR_BYTES,
             loc)) != 0) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "pack's locator failed authentication (damaged, "
            "or another pack's)");
        goto done;
    }
    tlen = util_load_be64(loc);
    if (tlen < PQV_AEAD_TAG_BYTES || tlen > len - PACK_HEADER_BYTES - PACK3_LOCATOR_BYTES) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "pack's table is out of bounds");
        goto done;
    }
    if ((plain = malloc(tlen)) == NULL || (sealed = malloc(tlen)) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    if ((rc = fetch(src, len - PACK3_LOCATOR_BYTES - tlen, tlen, sealed)) != 0)
        goto done;
    nonce_of(1, nonce);
    if ((rc = pqv_aead_open1(suite, key, nonce, ad, sizeof(ad), sealed, tlen, plain)) != 0) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "pack's table failed authentication");
        goto done;
    }
    cursor_init(&c, plain, tlen - PQV_AEAD_TAG_BYTES);
    count = cursor_varint_max(&c, cursor_left(&c) / PACK_REC_MIN);
    if (!c.bad && count > 0 && (r = calloc(count, sizeof(*r))) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    /* The blobs lie back to back from the header to the table. */
    for (uint64_t i = 0; i < count && !c.bad; i++) {
        const uint8_t *q = cursor_take(&c, CHUNK_ID_BYTES);
        if (q != NULL)
            memcpy(r[i].id, q, CHUNK_ID_BYTES);
        memcpy(r[i].pack_id, id, PACK_ID_BYTES);
        r[i].pack_off = (uint32_t)cursor_varint_max(&c, UINT32_MAX);
        r[i].stored_len = (uint32_t)cursor_varint_max(&c, UINT32_MAX);
        r[i].plain_len = (uint32_t)cursor_varint_max(&c, CHUNK_MAX);
        r[i].flags = cursor_u8(&c);
        if (r[i].pack_off != end || r[i].plain_len == 0 ||
            r[i].stored_len < CHUNK_SALT_BYTES + PQV_AEAD_TAG_BYTES ||
            (r[i].flags & ~BLOB_FLAGS_MASK) != 0 || BLOB_SUITE(r[i].flags) != suite)
            c.bad = 1;
        end += r[i].stored_len;
    }
    /* Only zeros after the records; the blobs end where the table starts. */
    while (!c.bad && cursor_left(&c) > 0)
        if (cursor_u8(&c) != 0)
            c.bad = 1;
    if (c.bad || PACK_HEADER_BYTES + end + tlen + PACK3_LOCATOR_BYTES != len) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "pack's table is malformed");
        goto done;
    }
    *recs = r;
    *n = (size_t)count;
    r = NULL;
done:
    free(r);
    free(sealed);
    if (plain != NULL) {
        util_wipe(plain, tlen);
        free(plain);
    }
    util_wipe(key, sizeof(key));
    return rc;
}

int
pack3_table(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], const uint8_t *data,
    size_t len, struct chunk_rec **recs, size_t *n)
{
    struct source3 src = { data, NULL, NULL };

    return read_table(v, id, &src, len, recs, n);
}

int
pack3_read_table(pqv_vault *v, const uint8_t id[PACK_ID_BYTES], uint64_t size,
    struct chunk_rec **recs, size_t *n)
{
    char sname[STORAGE_NAME_MAX];
    struct source3 src = { NULL, v->storage, sname };

    pack_name(id, sname);
    return read_table(v, id, &src, size, recs, n);
}
