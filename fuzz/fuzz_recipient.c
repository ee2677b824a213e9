/*
 * fuzz_recipient.c: libFuzzer target for the recipient parser
 * (pqv_recipient_parse, src/vault/inbox.c).  Checked: a recipient that
 * parses has a public identity of its KEM's exact size, version 1, and a
 * fingerprint line equal to the fingerprint of that key; the parser never
 * reads past the input (ASan) and frees what it refuses.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "pqvault/frodo.h"
#include "pqvault/identity.h"
#include "pqvault/vault.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t vault_id[16], *pub = NULL, hash[32];
    size_t publen = 0;
    char fp[PQV_FINGERPRINT_CHARS], line[PQV_FINGERPRINT_CHARS + 16];

    if (pqv_recipient_parse(data, size, vault_id, &pub, &publen) != 0) {
        if (pub != NULL)
            abort();
        return 0;
    }
    const pqv_frodo *kem = pqv_frodo_by_id(pub[1]);
    struct kdf_part part = { pub, publen };
    if (kem == NULL || pub[0] != 1 || publen != pqv_identity_public_bytes(kem) ||
        kdf_sha3_256(hash, &part, 1) != 0)
        abort();
    pqv_fingerprint_from_hash(hash, fp);
    snprintf(line, sizeof(line), "fingerprint: %s\n", fp);
    if (memmem(data, size, line, strlen(line)) == NULL)
        abort();
    free(pub);
    return 0;
}
