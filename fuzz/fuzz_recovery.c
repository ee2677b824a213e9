/*
 * fuzz_recovery.c: libFuzzer target for the recovery code decoder
 * (pqv_recovery_decode).  A code that decodes must re-encode to a code that
 * decodes to the same seed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pqvault/recovery.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t seed[PQV_SEED_BYTES], again[PQV_SEED_BYTES];
    char code[PQV_RECOVERY_CHARS];
    char *s = malloc(size + 1);

    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (pqv_recovery_decode(s, seed) == 0) {
        if (pqv_recovery_encode(seed, code) != 0 || strlen(code) != PQV_RECOVERY_CHARS - 1 ||
            pqv_recovery_decode(code, again) != 0 || memcmp(seed, again, sizeof(seed)) != 0)
            abort();
    }
    free(s);
    return 0;
}
