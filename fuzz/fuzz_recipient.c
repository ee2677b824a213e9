/*
 * fuzz_recipient.c: libFuzzer target for the parser of recipients and
 * writer credentials (recipient_parse, src/vault/recipient.c).  Checked: a
 * recipient that parses has a public identity of its KEM's exact size,
 * version 1, and a fingerprint line equal to the fingerprint of that key;
 * a credential, a valid writer name, a generation from 1 and a prefix that
 * is a normal stored name; the parser never reads past the input (ASan)
 * and frees what it refuses.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "pqvault/frodo.h"
#include "pqvault/identity.h"
#include "pqvault/vault.h"
#include "vault/recipient.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct recipient_info ri;
    uint8_t hash[32];
    char fp[PQV_FINGERPRINT_CHARS], line[PQV_FINGERPRINT_CHARS + 16], norm[PQV_NAME_MAX + 1];

    memset(&ri, 0xA5, sizeof(ri));
    if (recipient_parse(data, size, &ri) != 0) {
        if (ri.pub != NULL)
            abort();
        return 0;
    }
    const uint8_t *pub = ri.pub;
    const pqv_frodo *kem = pqv_frodo_by_id(pub[1]);
    struct kdf_part part = { pub, ri.publen };
    if (kem == NULL || pub[0] != 1 || ri.publen != pqv_identity_public_bytes(kem) ||
        kdf_sha3_256(hash, &part, 1) != 0)
        abort();
    pqv_fingerprint_from_hash(hash, fp);
    snprintf(line, sizeof(line), "fingerprint: %s\n", fp);
    if (memmem(data, size, line, strlen(line)) == NULL)
        abort();
    if (ri.is_writer && (!writers_valid_name(ri.writer) || ri.generation == 0 ||
        pqv_name_normalize(ri.prefix, norm, sizeof(norm)) != 0 || strcmp(norm, ri.prefix) != 0))
        abort();
    free(ri.pub);
    return 0;
}
