/*
 * recovery.c: recovery code encoding and decoding (see pqvault/recovery.h).
 *
 * The code is a secret, so symbol values are computed without table lookups
 * or branches on the symbol (mask arithmetic over the 32-symbol alphabet);
 * the checksum is compared in constant time.  Only the positions of
 * separators (dashes, spaces), which carry no secret, steer the control flow:
 * each character's separator test is computed without a branch and only
 * that one bit is declassified (util_declassify) before it is branched on;
 * the verdicts (every symbol valid, checksum equal) are declassified too.
 * tests/ct/ct_misc.c checks this under valgrind.
 */
#include "pqvault/recovery.h"

#include <string.h>

#include "crypto/kdf.h"
#include "util/util.h"

#define PAYLOAD_BYTES (PQV_SEED_BYTES + 3)

static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
static const char checksum_label[] = "pqvault/v1/recovery";

/* checksum(out, seed): the first 3 bytes of SHA-256(label || seed). */
static int
checksum(uint8_t out[3], const uint8_t seed[PQV_SEED_BYTES])
{
    uint8_t buf[sizeof(checksum_label) - 1 + PQV_SEED_BYTES], digest[32];
    int rc;

    memcpy(buf, checksum_label, sizeof(checksum_label) - 1);
    memcpy(buf + sizeof(checksum_label) - 1, seed, PQV_SEED_BYTES);
    rc = kdf_sha256(digest, buf, sizeof(buf));
    memcpy(out, digest, 3);
    util_wipe(buf, sizeof(buf));
    util_wipe(digest, sizeof(digest));
    return rc;
}

/* eq_mask(a, b): 0xFFFFFFFF if a == b, else 0; no branch. */
static uint32_t
eq_mask(uint32_t a, uint32_t b)
{
    uint32_t x = a ^ b;

    return (uint32_t)(((uint64_t)x - 1) >> 32);
}

int
pqv_recovery_encode(const uint8_t seed[PQV_SEED_BYTES], char out[PQV_RECOVERY_CHARS])
{
    uint8_t payload[PAYLOAD_BYTES];
    int rc, sym = 0;
    char *p = out;

    if (seed == NULL || out == NULL)
        return PQV_E_INVAL;
    memcpy(payload, seed, PQV_SEED_BYTES);
    if ((rc = checksum(payload + PQV_SEED_BYTES, seed)) != 0)
        goto done;
    /* 280 bits, five at a time, most significant first. */
    for (int bit = 0; bit < PAYLOAD_BYTES * 8; bit += 5) {
        uint32_t v = 0;
        for (int k = 0; k < 5; k++) {
            int b = bit + k;
            v = (v << 1) | ((payload[b / 8] >> (7 - b % 8)) & 1);
        }
        /* Branch-free alphabet lookup. */
        uint32_t c = 0;
        for (uint32_t i = 0; i < 32; i++)
            c |= eq_mask(v, i) & (uint32_t)(unsigned char)alphabet[i];
        if (sym > 0 && sym % 4 == 0)
            *p++ = '-';
        *p++ = (char)c;
        sym++;
    }
    *p = '\0';
done:
    util_wipe(payload, sizeof(payload));
    return rc;
}

/* symbol_value(c, valid): the value of symbol ${c}; clears *${valid} if ${c}
 * is not a symbol.  Constant time in ${c}. */
static uint32_t
symbol_value(uint32_t c, uint32_t *valid)
{
    uint32_t v = 0, found = 0;

    /* Lower case reads as upper case. */
    /* (c - 'a') and ('z' - c) are both non-negative exactly for a..z: the
     * sign bit of their OR is clear then. */
    uint32_t lower = (uint32_t)(~((c - 'a') | ('z' - c)) >> 31) & 1;
    c -= (0u - lower) & 32u;
    /* Crockford aliases: O -> 0, I and L -> 1. */
    uint32_t is_o = eq_mask(c, 'O'), is_il = eq_mask(c, 'I') | eq_mask(c, 'L');
    c = (c & ~is_o) | ('0' & is_o);
    c = (c & ~is_il) | ('1' & is_il);
    for (uint32_t i = 0; i < 32; i++) {
        uint32_t m = eq_mask(c, (uint32_t)(unsigned char)alphabet[i]);
        v |= m & i;
        found |= m;
    }
    *valid &= found;
    return v;
}

int
pqv_recovery_decode(const char *code, uint8_t seed[PQV_SEED_BYTES])
{
    uint8_t payload[PAYLOAD_BYTES], expect[3];
    uint32_t valid = 0xFFFFFFFFu;
    int nsym = 0, rc;

    if (code == NULL || seed == NULL)
        return PQV_E_INVAL;
    memset(payload, 0, sizeof(payload));
    for (const char *p = code;; p++) {
        uint32_t ch = (uint32_t)(unsigned char)*p;
        uint32_t sep = (eq_mask(ch, '-') | eq_mask(ch, ' ') | eq_mask(ch, '\t') |
            eq_mask(ch, '\n') | eq_mask(ch, '\r')) & 1;
        uint32_t end = eq_mask(ch, 0) & 1;
        util_declassify(&sep, sizeof(sep)); /* separator positions are public */
        util_declassify(&end, sizeof(end)); /* so is the code's length */
        if (end)
            break;
        if (sep)
            continue;
        if (nsym >= PQV_RECOVERY_SYMBOLS) {
            nsym++;
            continue;
        }
        uint32_t v = symbol_value(ch, &valid);
        for (int k = 0; k < 5; k++) {
            int b = nsym * 5 + k;
            payload[b / 8] |= (uint8_t)(((v >> (4 - k)) & 1) << (7 - b % 8));
        }
        nsym++;
    }
    if (nsym != PQV_RECOVERY_SYMBOLS) {
        util_wipe(payload, sizeof(payload));
        return error_set(PQV_E_AUTH, NULL, "recovery code has %d symbols, expected %d", nsym, PQV_RECOVERY_SYMBOLS);
    }
    util_declassify(&valid, sizeof(valid)); /* the verdict is public */
    if (!valid) {
        util_wipe(payload, sizeof(payload));
        return error_set(PQV_E_AUTH, NULL, "recovery code contains an invalid character");
    }
    if ((rc = checksum(expect, payload)) != 0)
        goto done;
    int same = util_ct_equal(expect, payload + PQV_SEED_BYTES, 3);
    util_declassify(&same, sizeof(same));
    if (!same) {
        rc = error_set(PQV_E_AUTH, NULL, "recovery code checksum mismatch (typing error?)");
        goto done;
    }
    memcpy(seed, payload, PQV_SEED_BYTES);
done:
    util_wipe(payload, sizeof(payload));
    util_wipe(expect, sizeof(expect));
    return rc;
}
