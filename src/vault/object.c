/*
 * object.c: data objects (docs/FORMAT.md).  An object holds at most 4 MiB of
 * one file's plaintext:
 *   header (8) = "PQVO" || version 1 || suite || 2 zero bytes
 *   STREAM ciphertext, associated data = header || object id
 * under the key HKDF(file key, salt = object id, info = "pqvault/v1/object"
 * || index (u32 BE)).  Each key seals one object only; the id and index in
 * its derivation make objects of other files, or other positions of the
 * same file, fail authentication.
 */
#include <stdio.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/util.h"
#include "vault/format1.h"
#include "vault/names.h"

#define OBJECT_MAGIC "PQVO"
#define OBJECT_VERSION 1

static const char object_label[] = "pqvault/v1/object";

int
object_key(const uint8_t file_key[PQV_FILE_KEY_BYTES], const uint8_t id[OBJECT_ID_BYTES],
    uint32_t index, uint8_t key[PQV_AEAD_KEY_BYTES])
{
    uint8_t info[sizeof(object_label) - 1 + 4];

    memcpy(info, object_label, sizeof(object_label) - 1);
    util_store_be32(info + sizeof(object_label) - 1, index);
    return kdf_hkdf_sha256(key, PQV_AEAD_KEY_BYTES, file_key, PQV_FILE_KEY_BYTES, id,
        OBJECT_ID_BYTES, info, sizeof(info));
}

size_t
object_sealed_size(size_t plain_len)
{
    return OBJECT_HEADER_BYTES + (size_t)pqv_stream_sealed_size(plain_len);
}

static void
object_header(uint8_t header[OBJECT_HEADER_BYTES], int suite)
{
    memcpy(header, OBJECT_MAGIC, 4);
    header[4] = OBJECT_VERSION;
    header[5] = (uint8_t)suite;
    header[6] = header[7] = 0;
}

int
object_seal(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    const uint8_t id[OBJECT_ID_BYTES], uint32_t index, const uint8_t *plain, size_t plain_len,
    uint8_t *out)
{
    uint8_t key[PQV_AEAD_KEY_BYTES], ad[OBJECT_HEADER_BYTES + OBJECT_ID_BYTES];
    int rc;

    object_header(out, suite);
    memcpy(ad, out, OBJECT_HEADER_BYTES);
    memcpy(ad + OBJECT_HEADER_BYTES, id, OBJECT_ID_BYTES);
    if ((rc = object_key(file_key, id, index, key)) == 0)
        rc = pqv_stream_seal(suite, key, ad, sizeof(ad), plain, plain_len,
            out + OBJECT_HEADER_BYTES);
    util_wipe(key, sizeof(key));
    return rc;
}

int
object_open(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    const uint8_t id[OBJECT_ID_BYTES], uint32_t index, const uint8_t *buf, size_t len,
    uint8_t *plain, size_t plain_len)
{
    uint8_t key[PQV_AEAD_KEY_BYTES], ad[OBJECT_HEADER_BYTES + OBJECT_ID_BYTES];
    uint8_t header[OBJECT_HEADER_BYTES];
    size_t got;
    int rc;

    if (len != object_sealed_size(plain_len))
        return error_set(PQV_E_INTEGRITY, NULL, "object has the wrong size (%zu bytes, expected %zu)", len, object_sealed_size(plain_len));
    object_header(header, suite);
    if (memcmp(buf, header, OBJECT_HEADER_BYTES) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "object header is malformed");
    memcpy(ad, header, OBJECT_HEADER_BYTES);
    memcpy(ad + OBJECT_HEADER_BYTES, id, OBJECT_ID_BYTES);
    if ((rc = object_key(file_key, id, index, key)) == 0)
        rc = pqv_stream_open(suite, key, ad, sizeof(ad), buf + OBJECT_HEADER_BYTES,
            len - OBJECT_HEADER_BYTES, plain, &got);
    util_wipe(key, sizeof(key));
    if (rc == PQV_E_INTEGRITY)
        return error_set(rc, NULL, "object failed authentication (corrupted, altered or moved)");
    return rc;
}

void
object_storage_name(const uint8_t id[OBJECT_ID_BYTES], char out[STORAGE_NAME_MAX])
{
    names_sharded(out, "objects", id, OBJECT_ID_BYTES);
}

uint32_t
object_count(uint64_t size)
{
    return (uint32_t)((size + PQV_OBJECT_MAX_PLAIN - 1) / PQV_OBJECT_MAX_PLAIN);
}

/* Expected plaintext length of object ${index} of ${e}. */
size_t
object_plain_len(const struct pqv_entry *e, uint32_t index)
{
    uint64_t left = e->size - (uint64_t)index * PQV_OBJECT_MAX_PLAIN;

    return left > PQV_OBJECT_MAX_PLAIN ? PQV_OBJECT_MAX_PLAIN : (size_t)left;
}
