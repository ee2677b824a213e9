/*
 * fuzz_record.c: libFuzzer target for record_open (src/vault/record.c)
 * over a fixed test vault (fixed vault id, FrodoKEM-640-SHAKE, fixed
 * catalogue keys).  The first byte picks the mode:
 *   even: the rest is a record file, opened as the record of name "f"
 *         (header checks, then authentication, which a fuzzer cannot
 *         forge);
 *   odd:  the rest is a record body, sealed here with the vault's record
 *         key the way record_seal does, then opened: this reaches the body
 *         parser with arbitrary plaintext.
 * A record that opens must seal and open again to the same entry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "pqvault/aead.h"
#include "vault/config.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/vault_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static pqv_vault *
test_vault(void)
{
    static pqv_vault *v;

    if (v == NULL) {
        if ((v = calloc(1, sizeof(*v))) == NULL)
            abort();
        v->config.version = 1;
        v->config.kem = pqv_frodo_find("FrodoKEM-640-SHAKE");
        v->config.aead = PQV_AEAD_AES256GCM;
        for (int i = 0; i < 16; i++)
            v->config.vault_id[i] = (uint8_t)(0xA0 + i);
        for (int i = 0; i < 32; i++) {
            v->names_key[i] = (uint8_t)i;
            v->records_key[i] = (uint8_t)(0x40 + i);
        }
        v->slot = -1;
    }
    return v;
}

static void
check_opened(const pqv_vault *v, const struct record *r)
{
    uint8_t *buf, hash[NAME_HASH_BYTES];
    size_t len;
    struct record again;

    if (record_seal(v, r, &buf, &len) != 0)
        abort();
    if (names_hash(v, r->entry.name, hash) != 0 || record_open(v, hash, buf, len, &again) != 0 ||
        strcmp(again.entry.name, r->entry.name) != 0 || again.entry.size != r->entry.size ||
        again.entry.nobjects != r->entry.nobjects || again.wrapped_len != r->wrapped_len)
        abort();
    record_clear(&again);
    free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char label[] = "pqvault/v1/record";
    static const uint8_t zero_nonce[PQV_AEAD_NONCE_BYTES];
    pqv_vault *v = test_vault();
    uint8_t hash[NAME_HASH_BYTES], key[32];
    uint8_t ad[RECORD_HEADER_BYTES + NAME_HASH_BYTES + VAULT_ID_BYTES];
    struct record r;
    uint8_t *buf;
    size_t len;

    if (size < 1 || names_hash(v, "f", hash) != 0)
        return 0;
    if ((data[0] & 1) == 0) {
        if (record_open(v, hash, data + 1, size - 1, &r) == 0) {
            check_opened(v, &r);
            record_clear(&r);
        }
        return 0;
    }
    len = RECORD_HEADER_BYTES + (size - 1) + PQV_AEAD_TAG_BYTES;
    if ((buf = malloc(len)) == NULL)
        return 0;
    memcpy(buf, "PQVR\x01\x01\x00\x00", 8);
    memset(buf + 8, 0x5A, 32);
    memcpy(ad, buf, RECORD_HEADER_BYTES);
    memcpy(ad + RECORD_HEADER_BYTES, hash, NAME_HASH_BYTES);
    memcpy(ad + RECORD_HEADER_BYTES + NAME_HASH_BYTES, v->config.vault_id, VAULT_ID_BYTES);
    if (kdf_hkdf_sha256(key, 32, v->records_key, 32, buf + 8, 32, (const uint8_t *)label,
            sizeof(label) - 1) != 0 ||
        pqv_aead_seal1(PQV_AEAD_AES256GCM, key, zero_nonce, ad, sizeof(ad), data + 1, size - 1,
            buf + RECORD_HEADER_BYTES) != 0)
        abort();
    if (record_open(v, hash, buf, len, &r) == 0) {
        check_opened(v, &r);
        record_clear(&r);
    }
    free(buf);
    return 0;
}
