/*
 * config.c: the vault config: a small text file, strictly parsed, whose
 * last line is an HMAC-SHA-256 of everything before it under a key derived
 * from the identity seed (so it is verified right after unlock):
 *
 *   pqvault-config 1
 *   vault-id <32 hex>
 *   kem <FrodoKEM set name>
 *   aead <AES-256-GCM | ChaCha20-Poly1305>
 *   identity <64 hex: SHA3-256 of the public identity>
 *   created <unix seconds>
 *   mac <64 hex>
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "pqvault/aead.h"
#include "util/util.h"
#include "vault/config.h"

/* next_line(p, end, key, value, vlen): match "key value\n" at *p; on success
 * advance *p past the line and point ${value} at the value. */
static int
next_line(const char **p, const char *end, const char *key, const char **value,
    size_t *vlen)
{
    size_t klen = strlen(key);
    const char *nl;

    if ((size_t)(end - *p) < klen + 2 || memcmp(*p, key, klen) != 0 || (*p)[klen] != ' ')
        return error_set(PQV_E_INTEGRITY, NULL, "config: expected \"%s\" line", key);
    *value = *p + klen + 1;
    if ((nl = memchr(*value, '\n', (size_t)(end - *value))) == NULL)
        return error_set(PQV_E_INTEGRITY, NULL, "config: unterminated \"%s\" line", key);
    *vlen = (size_t)(nl - *value);
    *p = nl + 1;
    return 0;
}

static int
parse_hex(const char *value, size_t vlen, uint8_t *out, size_t n, const char *key)
{
    char buf[129];

    if (vlen != 2 * n || vlen >= sizeof(buf))
        return error_set(PQV_E_INTEGRITY, NULL, "config: bad %s length", key);
    /* Only the lowercase spelling the vault writes (docs/FORMAT.md). */
    for (size_t i = 0; i < vlen; i++)
        if (value[i] >= 'A' && value[i] <= 'F')
            return error_set(PQV_E_INTEGRITY, NULL, "config: bad %s", key);
    memcpy(buf, value, vlen);
    buf[vlen] = '\0';
    if (util_hex_decode(out, n, buf) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "config: bad %s", key);
    return 0;
}

int
config_parse(struct vault_config *c, const uint8_t *text, size_t len)
{
    const char *p = (const char *)text, *end = p + len, *v;
    char buf[64];
    size_t vlen;
    int rc;

    memset(c, 0, sizeof(*c));
    if (len > MAX_CONFIG_BYTES)
        return error_set(PQV_E_INTEGRITY, NULL, "config: too large");
    if (memchr(text, '\0', len) != NULL)
        return error_set(PQV_E_INTEGRITY, NULL, "config: contains a NUL byte");
    if ((rc = next_line(&p, end, "pqvault-config", &v, &vlen)) != 0)
        return rc;
    if (vlen != 1 || v[0] < '1' || v[0] > '9')
        return error_set(PQV_E_INTEGRITY, NULL, "config: bad format version");
    c->version = v[0] - '0';
    if (c->version < 1 || c->version > 3)
        return error_set(PQV_E_UNSUPPORTED, NULL, "config: format version %d is not supported", c->version);
    if ((rc = next_line(&p, end, "vault-id", &v, &vlen)) != 0 ||
        (rc = parse_hex(v, vlen, c->vault_id, VAULT_ID_BYTES, "vault-id")) != 0)
        return rc;
    if ((rc = next_line(&p, end, "kem", &v, &vlen)) != 0)
        return rc;
    if (vlen >= sizeof(buf))
        return error_set(PQV_E_INTEGRITY, NULL, "config: bad kem");
    memcpy(buf, v, vlen);
    buf[vlen] = '\0';
    if ((c->kem = pqv_frodo_find(buf)) == NULL)
        return error_set(PQV_E_INTEGRITY, NULL, "config: unknown kem");
    if ((rc = next_line(&p, end, "aead", &v, &vlen)) != 0)
        return rc;
    if (vlen >= sizeof(buf))
        return error_set(PQV_E_INTEGRITY, NULL, "config: bad aead");
    memcpy(buf, v, vlen);
    buf[vlen] = '\0';
    if ((c->aead = pqv_aead_by_name(buf)) == 0 || strcmp(buf, pqv_aead_name(c->aead)) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "config: unknown aead");
    if ((rc = next_line(&p, end, "identity", &v, &vlen)) != 0 ||
        (rc = parse_hex(v, vlen, c->identity_hash, 32, "identity")) != 0)
        return rc;
    if ((rc = next_line(&p, end, "created", &v, &vlen)) != 0)
        return rc;
    /* Decimal as written: no sign, no leading zero (but "0" itself). */
    if (vlen == 0 || vlen > 19 || (vlen > 1 && v[0] == '0'))
        return error_set(PQV_E_INTEGRITY, NULL, "config: bad created");
    c->created = 0;
    for (size_t i = 0; i < vlen; i++) {
        if (v[i] < '0' || v[i] > '9' || c->created > (INT64_MAX - (v[i] - '0')) / 10)
            return error_set(PQV_E_INTEGRITY, NULL, "config: bad created");
        c->created = c->created * 10 + (v[i] - '0');
    }
    c->mac_offset = (size_t)(p - (const char *)text);
    if ((rc = next_line(&p, end, "mac", &v, &vlen)) != 0 ||
        (rc = parse_hex(v, vlen, c->mac, 32, "mac")) != 0)
        return rc;
    if (p != end)
        return error_set(PQV_E_INTEGRITY, NULL, "config: trailing data");
    if ((c->text = malloc(len)) == NULL)
        return PQV_E_NOMEM;
    memcpy(c->text, text, len);
    c->text_len = len;
    return 0;
}

int
config_verify_mac(const struct vault_config *c, const uint8_t key[32])
{
    uint8_t mac[32];
    int rc;

    if ((rc = kdf_hmac_sha256(mac, key, 32, c->text, c->mac_offset)) != 0)
        return rc;
    int same = util_ct_equal(mac, c->mac, 32);
    util_declassify(&same, sizeof(same)); /* the verdict is public */
    if (!same)
        return error_set(PQV_E_INTEGRITY, NULL, "config: authentication failed (modified or corrupted)");
    return 0;
}

int
config_build(const struct vault_config *c, const uint8_t key[32], uint8_t **text, size_t *len)
{
    char id_hex[2 * VAULT_ID_BYTES + 1], ident_hex[65], mac_hex[65];
    uint8_t mac[32];
    char *buf;
    int n, rc;

    if ((buf = malloc(MAX_CONFIG_BYTES)) == NULL)
        return PQV_E_NOMEM;
    util_hex_encode(id_hex, c->vault_id, VAULT_ID_BYTES);
    util_hex_encode(ident_hex, c->identity_hash, 32);
    n = snprintf(buf, MAX_CONFIG_BYTES,
        "pqvault-config %d\nvault-id %s\nkem %s\naead %s\nidentity %s\ncreated %" PRId64 "\n",
        c->version, id_hex, pqv_frodo_name(c->kem), pqv_aead_name(c->aead), ident_hex,
        c->created);
    if ((rc = kdf_hmac_sha256(mac, key, 32, (const uint8_t *)buf, (size_t)n)) != 0) {
        free(buf);
        return rc;
    }
    util_hex_encode(mac_hex, mac, 32);
    n += snprintf(buf + n, MAX_CONFIG_BYTES - (size_t)n, "mac %s\n", mac_hex);
    *text = (uint8_t *)buf;
    *len = (size_t)n;
    return 0;
}

void
config_clear(struct vault_config *c)
{
    free(c->text);
    memset(c, 0, sizeof(*c));
}
