/*
 * record.c: catalogue records (docs/FORMAT.md).
 *
 * A record lives at records/<h[0..1]>/<h>, h = hex(HMAC-SHA-256(names key,
 * name)), so a name is found without scanning.  Its bytes:
 *   header (40) = "PQVR" || version 1 || suite || 2 zero bytes || salt (32)
 *   AEAD(body) under HKDF(records key, salt, "pqvault/v1/record"), nonce 0,
 *   associated data = header || name hash || vault id
 * so a record cannot be read, forged, altered, moved to another name or
 * another vault undetected.  The body:
 *   version 1 (u8) || type (u8) || name length (u16) || name || mode (u32)
 *   || mtime seconds (i64) || mtime nanoseconds (u32) || size (u64)
 *   || object suite (u8) || object count (u32) || object ids (16 each)
 *   || wrapped key length (u32) || wrapped key
 * all integers big-endian.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/cursor.h"
#include "util/util.h"
#include "vault/config.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/vault_internal.h"

#define RECORD_MAGIC "PQVR"
#define RECORD_VERSION 1
#define BODY_VERSION 1
#define BODY_FIXED (1 + 1 + 2 + 4 + 8 + 4 + 8 + 1 + 4 + 4)

static const char record_label[] = "pqvault/v1/record";
static const char wrap_label[] = "pqvault/v1/file-key";

void
record_clear(struct record *r)
{
    free(r->entry.name);
    free(r->object_ids);
    free(r->wrapped);
    memset(r, 0, sizeof(*r));
}

void
record_storage_name(const uint8_t hash[NAME_HASH_BYTES], char out[STORAGE_NAME_MAX])
{
    names_sharded(out, "records", hash, NAME_HASH_BYTES);
}

size_t
record_wrap_context(const pqv_vault *v, const uint8_t hash[NAME_HASH_BYTES], uint8_t *out)
{
    size_t n = sizeof(wrap_label) - 1;

    memcpy(out, wrap_label, n);
    memcpy(out + n, v->config.vault_id, VAULT_ID_BYTES);
    memcpy(out + n + VAULT_ID_BYTES, hash, NAME_HASH_BYTES);
    return n + VAULT_ID_BYTES + NAME_HASH_BYTES;
}

/* record_ad(v, header, hash, ad): header || name hash || vault id. */
static size_t
record_ad(const pqv_vault *v, const uint8_t *header, const uint8_t hash[NAME_HASH_BYTES],
    uint8_t ad[RECORD_HEADER_BYTES + NAME_HASH_BYTES + VAULT_ID_BYTES])
{
    memcpy(ad, header, RECORD_HEADER_BYTES);
    memcpy(ad + RECORD_HEADER_BYTES, hash, NAME_HASH_BYTES);
    memcpy(ad + RECORD_HEADER_BYTES + NAME_HASH_BYTES, v->config.vault_id, VAULT_ID_BYTES);
    return RECORD_HEADER_BYTES + NAME_HASH_BYTES + VAULT_ID_BYTES;
}

static int
record_key(const pqv_vault *v, const uint8_t salt[32], uint8_t key[32])
{
    return kdf_hkdf_sha256(key, 32, v->records_key, 32, salt, 32,
        (const uint8_t *)record_label, sizeof(record_label) - 1);
}

static const uint8_t zero_nonce[PQV_AEAD_NONCE_BYTES];

int
record_seal(const pqv_vault *v, const struct record *r, uint8_t **out, size_t *outlen)
{
    const struct pqv_entry *e = &r->entry;
    size_t namelen = strlen(e->name);
    size_t bodylen = BODY_FIXED + namelen + (size_t)e->nobjects * OBJECT_ID_BYTES + r->wrapped_len;
    uint8_t hash[NAME_HASH_BYTES], key[32];
    uint8_t ad[RECORD_HEADER_BYTES + NAME_HASH_BYTES + VAULT_ID_BYTES];
    uint8_t *buf, *body, *p;
    size_t total = RECORD_HEADER_BYTES + bodylen + PQV_AEAD_TAG_BYTES;
    int rc;

    if (namelen == 0 || namelen > PQV_NAME_MAX)
        return error_set(PQV_E_INVAL, NULL, "name too long");
    if ((buf = malloc(total)) == NULL)
        return PQV_E_NOMEM;
    if ((body = malloc(bodylen)) == NULL) {
        free(buf);
        return PQV_E_NOMEM;
    }
    memcpy(buf, RECORD_MAGIC, 4);
    buf[4] = RECORD_VERSION;
    buf[5] = (uint8_t)v->config.aead;
    buf[6] = buf[7] = 0;
    if ((rc = util_random(buf + 8, 32)) != 0)
        goto done;

    p = body;
    *p++ = BODY_VERSION;
    *p++ = (uint8_t)e->type;
    util_store_be16(p, (uint16_t)namelen);
    p += 2;
    memcpy(p, e->name, namelen);
    p += namelen;
    util_store_be32(p, e->mode & 07777);
    p += 4;
    util_store_be64(p, (uint64_t)e->mtime_sec);
    p += 8;
    util_store_be32(p, e->mtime_nsec);
    p += 4;
    util_store_be64(p, e->size);
    p += 8;
    *p++ = (uint8_t)e->aead;
    util_store_be32(p, e->nobjects);
    p += 4;
    if (e->nobjects > 0) {
        memcpy(p, r->object_ids, (size_t)e->nobjects * OBJECT_ID_BYTES);
        p += (size_t)e->nobjects * OBJECT_ID_BYTES;
    }
    util_store_be32(p, (uint32_t)r->wrapped_len);
    p += 4;
    if (r->wrapped_len > 0)
        memcpy(p, r->wrapped, r->wrapped_len);

    if ((rc = names_hash(v, e->name, hash)) != 0 || (rc = record_key(v, buf + 8, key)) != 0)
        goto done;
    rc = pqv_aead_seal1(v->config.aead, key, zero_nonce, ad, record_ad(v, buf, hash, ad), body,
        bodylen, buf + RECORD_HEADER_BYTES);
done:
    util_wipe(key, sizeof(key));
    util_wipe(body, bodylen);
    free(body);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *outlen = total;
    return 0;
}

/* take_be(c, n): an n-byte big-endian integer (0 and bad if short). */
static uint64_t
take_be(struct cursor *c, size_t n)
{
    const uint8_t *q = cursor_take(c, n);
    uint64_t v = 0;

    for (size_t i = 0; q != NULL && i < n; i++)
        v = (v << 8) | q[i];
    return v;
}

/* parse_body(v, body, len, r): decode and validate a record body. */
static int
parse_body(const pqv_vault *v, const uint8_t *body, size_t len, struct record *r)
{
    struct pqv_entry *e = &r->entry;
    struct cursor c;
    const uint8_t *q;
    size_t namelen;

    cursor_init(&c, body, len);
    memset(r, 0, sizeof(*r));
    if (take_be(&c, 1) != BODY_VERSION)
        return error_set(PQV_E_UNSUPPORTED, NULL, "record body version not supported");
    e->type = (int)take_be(&c, 1);
    namelen = (size_t)take_be(&c, 2);
    if ((q = cursor_take(&c, namelen)) == NULL || namelen == 0 || namelen > PQV_NAME_MAX ||
        memchr(q, '\0', namelen) != NULL)
        return error_set(PQV_E_INTEGRITY, NULL, "record has an invalid name");
    if ((e->name = malloc(namelen + 1)) == NULL)
        return PQV_E_NOMEM;
    memcpy(e->name, q, namelen);
    e->name[namelen] = '\0';
    {
        /* Stored names are normalised ("a/b", never "/a", "a/../b"): get
         * joins them under its destination, so refuse anything else even
         * in an authentic record. */
        char norm[PQV_NAME_MAX + 1];
        if (pqv_name_normalize(e->name, norm, sizeof(norm)) != 0 || strcmp(norm, e->name) != 0)
            goto bad;
    }
    e->mode = (uint32_t)take_be(&c, 4);
    e->mtime_sec = (int64_t)take_be(&c, 8);
    e->mtime_nsec = (uint32_t)take_be(&c, 4);
    e->size = take_be(&c, 8);
    e->aead = (int)take_be(&c, 1);
    e->nobjects = (uint32_t)take_be(&c, 4);
    if (c.bad)
        goto bad;
    if (e->mode > 07777 || e->mtime_nsec >= 1000000000u)
        goto bad;
    if (e->type == PQV_ENTRY_FILE) {
        /* Beyond 2^32 - 1 objects the count below would wrap. */
        if (e->size > (uint64_t)UINT32_MAX * PQV_OBJECT_MAX_PLAIN)
            goto bad;
        if (pqv_aead_name(e->aead) == NULL || e->nobjects != object_count(e->size))
            goto bad;
    } else if (e->type == PQV_ENTRY_DIR) {
        if (e->size != 0 || e->nobjects != 0)
            goto bad;
    } else {
        goto bad;
    }
    if ((size_t)(c.end - c.p) < (size_t)e->nobjects * OBJECT_ID_BYTES)
        goto bad;
    if (e->nobjects > 0) {
        if ((r->object_ids = malloc((size_t)e->nobjects * OBJECT_ID_BYTES)) == NULL)
            goto nomem;
        memcpy(r->object_ids, cursor_take(&c, (size_t)e->nobjects * OBJECT_ID_BYTES),
            (size_t)e->nobjects * OBJECT_ID_BYTES);
    }
    r->wrapped_len = (size_t)take_be(&c, 4);
    if (c.bad || r->wrapped_len != (e->type == PQV_ENTRY_FILE ? pqv_wrap_bytes(v->config.kem) : 0))
        goto bad;
    if (r->wrapped_len > 0) {
        const uint8_t *w = cursor_take(&c, r->wrapped_len);
        if (w == NULL)
            goto bad; /* body ends inside the wrapped key */
        if ((r->wrapped = malloc(r->wrapped_len)) == NULL)
            goto nomem;
        memcpy(r->wrapped, w, r->wrapped_len);
    }
    if (c.p != c.end)
        goto bad;
    return 0;

bad:
    record_clear(r);
    return error_set(PQV_E_INTEGRITY, NULL, "record is malformed");
nomem:
    record_clear(r);
    return PQV_E_NOMEM;
}

int
record_check_header(const uint8_t *buf, size_t len)
{
    if (len < RECORD_HEADER_BYTES + PQV_AEAD_TAG_BYTES + BODY_FIXED)
        return error_set(PQV_E_INTEGRITY, NULL, "record is truncated");
    if (len > MAX_RECORD_BYTES)
        return error_set(PQV_E_INTEGRITY, NULL, "record is too large");
    if (memcmp(buf, RECORD_MAGIC, 4) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "record has a bad magic number");
    /* The config's format version fixes the record version: another one in
     * this vault is damage, not a newer format. */
    if (buf[4] != RECORD_VERSION)
        return error_set(PQV_E_INTEGRITY, NULL, "record has an unknown version (%u)", buf[4]);
    if (pqv_aead_name(buf[5]) == NULL || buf[6] != 0 || buf[7] != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "record header is malformed");
    return 0;
}

int
record_open(const pqv_vault *v, const uint8_t hash[NAME_HASH_BYTES], const uint8_t *buf,
    size_t len, struct record *r)
{
    uint8_t ad[RECORD_HEADER_BYTES + NAME_HASH_BYTES + VAULT_ID_BYTES], key[32];
    uint8_t expect[NAME_HASH_BYTES];
    uint8_t *body;
    size_t bodylen;
    int rc;

    if ((rc = record_check_header(buf, len)) != 0)
        return rc;
    bodylen = len - RECORD_HEADER_BYTES - PQV_AEAD_TAG_BYTES;
    if ((body = malloc(bodylen)) == NULL)
        return PQV_E_NOMEM;
    if ((rc = record_key(v, buf + 8, key)) != 0)
        goto done;
    rc = pqv_aead_open1(buf[5], key, zero_nonce, ad, record_ad(v, buf, hash, ad),
        buf + RECORD_HEADER_BYTES, len - RECORD_HEADER_BYTES, body);
    if (rc == PQV_E_INTEGRITY) {
        error_set(rc, NULL, "record failed authentication (corrupted, altered or moved)");
        goto done;
    }
    if (rc != 0 || (rc = parse_body(v, body, bodylen, r)) != 0)
        goto done;
    /* The name inside must hash to the record's own name. */
    if ((rc = names_hash(v, r->entry.name, expect)) != 0)
        goto done;
    if (!util_ct_equal(expect, hash, NAME_HASH_BYTES)) {
        record_clear(r);
        rc = error_set(PQV_E_INTEGRITY, NULL, "record name does not match its location");
    }
done:
    util_wipe(key, sizeof(key));
    util_wipe(body, bodylen);
    free(body);
    return rc;
}

int
record_read(pqv_vault *v, const char *name, struct record *r)
{
    uint8_t hash[NAME_HASH_BYTES];
    char sname[STORAGE_NAME_MAX];
    uint8_t *buf;
    size_t len;
    int rc;

    if ((rc = names_hash(v, name, hash)) != 0)
        return rc;
    record_storage_name(hash, sname);
    if ((rc = v->storage->ops->get(v->storage, sname, &buf, &len, MAX_RECORD_BYTES)) != 0) {
        if (rc == PQV_E_NOTFOUND)
            error_set(rc, NULL, "not found");
        return rc;
    }
    rc = record_open(v, hash, buf, len, r);
    free(buf);
    return rc;
}

int
record_unwrap_file_key(pqv_vault *v, const struct record *r, uint8_t file_key[PQV_FILE_KEY_BYTES])
{
    uint8_t hash[NAME_HASH_BYTES], ctx[64 + VAULT_ID_BYTES + NAME_HASH_BYTES];
    struct record full;
    const struct record *src = r;
    int rc;

    memset(&full, 0, sizeof(full));
    if (r->wrapped == NULL) {
        if ((rc = record_read(v, r->entry.name, &full)) != 0)
            return rc == PQV_E_NOTFOUND ? error_set(rc, NULL, "removed while it was being read") : rc;
        if (full.entry.nobjects != r->entry.nobjects || full.wrapped == NULL ||
            (r->entry.nobjects > 0 && memcmp(full.object_ids, r->object_ids,
                                          (size_t)r->entry.nobjects * OBJECT_ID_BYTES) != 0)) {
            record_clear(&full);
            return error_set(PQV_E_NOTFOUND, NULL, "changed while it was being read");
        }
        src = &full;
    }
    if ((rc = names_hash(v, r->entry.name, hash)) == 0) {
        rc = pqv_unwrap(v->identity, src->wrapped, src->wrapped_len, ctx,
            record_wrap_context(v, hash, ctx), file_key);
        if (rc == PQV_E_INTEGRITY) {
            char why[PQV_ERROR_REASON_MAX];
            snprintf(why, sizeof(why), "%s", pqv_error_last()->reason);
            error_set(rc, NULL, "file key does not unwrap: %s", why);
        }
    }
    record_clear(&full);
    return rc;
}
