/*
 * fuzz_keyfile.c: libFuzzer target for the key file parser
 * (pqv_keyfile_parse).  A file that parses must serialise back to the same
 * bytes, and its accessors must be safe to call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pqvault/keyfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pqv_keyfile *kf = NULL;
    uint8_t *out;
    size_t outlen, publen;

    if (pqv_keyfile_parse(&kf, data, size) != 0)
        return 0;
    if (pqv_keyfile_serialize(kf, &out, &outlen) != 0 || outlen != size ||
        memcmp(out, data, size) != 0)
        abort();
    free(out);
    (void)pqv_keyfile_public(kf, &publen);
    if (pqv_keyfile_kem(kf) == NULL || publen == 0)
        abort();
    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++)
        (void)pqv_keyfile_slot_params(kf, i);
    pqv_keyfile_free(kf);
    return 0;
}
