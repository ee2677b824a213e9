/*
 * fuzz_batch.c: libFuzzer target for inbox batches (src/vault/inbox.c)
 * over a fixed test vault (fixed vault id, FrodoKEM-640-SHAKE identity from
 * a fixed seed).  The first byte picks the mode:
 *   even: the rest is a whole batch file named "inbox/<B>.batch" with B the
 *         fixed id below, the vault having issued a credential to the
 *         writer "fuzz" (generation 1): header checks, a writer's header
 *         and MAC, then the wrap (neither of which a fuzzer can forge: it
 *         fails to open);
 *   odd:  the rest is a batch body's plaintext, parsed as if it had
 *         authenticated: this reaches the body parser (string and pack
 *         tables, entries, origins) with arbitrary bytes.
 * Every allocation is bounded by the input's length (ASan and the RSS
 * limit catch the rest).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pqvault/aead.h"
#include "vault/batch.h"
#include "vault/inbox.h"
#include "vault/vault_internal.h"
#include "vault/writers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char hex[] = "00112233445566778899aabbccddeeff";

static pqv_vault *
test_vault(void)
{
    static pqv_vault *v;

    if (v == NULL) {
        uint8_t seed[PQV_SEED_BYTES];
        if ((v = calloc(1, sizeof(*v))) == NULL)
            abort();
        v->config.version = 2;
        v->config.kem = pqv_frodo_find("FrodoKEM-640-SHAKE");
        v->config.aead = PQV_AEAD_AES256GCM;
        for (int i = 0; i < 16; i++)
            v->config.vault_id[i] = (uint8_t)(0xA0 + i);
        for (size_t i = 0; i < sizeof(seed); i++)
            seed[i] = (uint8_t)i;
        if (pqv_identity_derive(&v->identity, v->config.kem, seed) != 0)
            abort();
        v->slot = -1;
    }
    return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = 0;

    if (size < 1)
        return 0;
    if ((data[0] & 1) == 0) {
        static char prefix[] = "fuzz";
        struct writer w = { "fuzz", prefix, 1, 1, 0 };
        struct registry reg = { &w, 1, NULL, 0 };
        struct batch b;
        if (batch_open(test_vault(), hex, data + 1, size - 1, &reg, &b) == 0)
            abort(); /* neither the MAC nor the wrap can be forged */
    } else {
        int rc = batch_parse(hex, data + 1, size - 1, &n);
        if (rc == 0 && n == 0)
            abort(); /* a batch holds at least one entry */
        if (rc != 0 && rc != PQV_E_INTEGRITY && rc != PQV_E_NOMEM)
            abort();
    }
    pqv_error_clear();
    return 0;
}
