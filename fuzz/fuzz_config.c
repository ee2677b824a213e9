/*
 * fuzz_config.c: libFuzzer target for the vault config parser
 * (config_parse, src/vault/config.c).  A config that parses must rebuild
 * (config_build) to text that parses to the same fields.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vault/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t key[32] = { 1, 2, 3 };
    struct vault_config c, again;
    uint8_t *text;
    size_t len;

    if (config_parse(&c, data, size) != 0) {
        config_clear(&c);
        return 0;
    }
    if (c.mac_offset >= size || c.text_len != size)
        abort();
    (void)config_verify_mac(&c, key);
    if (config_build(&c, key, &text, &len) != 0)
        abort();
    if (config_parse(&again, text, len) != 0 || again.kem != c.kem || again.aead != c.aead ||
        again.created != c.created || memcmp(again.vault_id, c.vault_id, VAULT_ID_BYTES) != 0 ||
        memcmp(again.identity_hash, c.identity_hash, 32) != 0 ||
        config_verify_mac(&again, key) != 0)
        abort();
    free(text);
    config_clear(&again);
    config_clear(&c);
    return 0;
}
