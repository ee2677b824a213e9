/*
 * recipient.c: the vault's recipient (docs/FORMAT.md section 18): its
 * public identity as text, exported by the owner, parsed strictly by a
 * write-only writer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "pqvault/identity.h"
#include "pqvault/keyfile.h"
#include "util/buf.h"
#include "util/util.h"
#include "vault/config.h"
#include "vault/recipient.h"
#include "vault/vault_internal.h"

#define RECIPIENT_HEADER "pqvault-recipient 1\n"
#define RECIPIENT_MAX_BYTES (64u << 10)
#define RECIPIENT_LINE 64
#define WRITER_HEADER "pqvault-writer 1\n"

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void
b64_encode(struct buf *out, const uint8_t *in, size_t n)
{
    size_t col = 0;

    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        char q[4];
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        q[0] = b64chars[(v >> 18) & 63];
        q[1] = b64chars[(v >> 12) & 63];
        q[2] = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
        q[3] = i + 2 < n ? b64chars[v & 63] : '=';
        for (int k = 0; k < 4; k++) {
            buf_u8(out, (uint8_t)q[k]);
            if (++col == RECIPIENT_LINE) {
                buf_u8(out, '\n');
                col = 0;
            }
        }
    }
    if (col != 0)
        buf_u8(out, '\n');
}

static int
b64_value(uint8_t c)
{
    const char *p = c != 0 ? strchr(b64chars, c) : NULL;
    return p != NULL ? (int)(p - b64chars) : -1;
}

/* b64_decode(in, n, out, outlen, got): strict: groups of 4, padding only
 * at the end, unused bits zero. */
static int
b64_decode(const uint8_t *in, size_t n, uint8_t *out, size_t outlen, size_t *got)
{
    size_t k = 0;

    if (n % 4 != 0)
        return -1;
    for (size_t i = 0; i < n; i += 4) {
        int a = b64_value(in[i]), b = b64_value(in[i + 1]), c, d;
        int last = i + 4 == n;
        int pad2 = last && in[i + 2] == '=' && in[i + 3] == '=';
        int pad1 = last && !pad2 && in[i + 3] == '=';
        c = pad2 ? 0 : b64_value(in[i + 2]);
        d = pad2 || pad1 ? 0 : b64_value(in[i + 3]);
        if (a < 0 || b < 0 || c < 0 || d < 0)
            return -1;
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        if ((pad2 && (v & 0xffff) != 0) || (pad1 && (v & 0xff) != 0))
            return -1;
        size_t bytes = pad2 ? 1 : pad1 ? 2 : 3;
        if (k + bytes > outlen)
            return -1;
        out[k++] = (uint8_t)(v >> 16);
        if (bytes > 1)
            out[k++] = (uint8_t)(v >> 8);
        if (bytes > 2)
            out[k++] = (uint8_t)v;
    }
    *got = k;
    return 0;
}

/* take_line(p, end, prefix, out, outlen): the line at *${p} that starts
 * with ${prefix}: its rest (without the newline) into ${out}. */
static int
take_line(const uint8_t **p, const uint8_t *end, const char *prefix, char *out, size_t outlen)
{
    size_t pl = strlen(prefix);
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));

    if (nl == NULL || (size_t)(nl - *p) < pl || memcmp(*p, prefix, pl) != 0 ||
        (size_t)(nl - *p) - pl >= outlen)
        return -1;
    memcpy(out, *p + pl, (size_t)(nl - *p) - pl);
    out[(nl - *p) - pl] = '\0';
    for (const char *c = out; *c != '\0'; c++)
        if (*c < 0x21 || *c > 0x7e)
            return -1;
    *p = nl + 1;
    return 0;
}

/* writer_lines(p, end, ri): a writer credential's own lines (after the
 * format line): its name, prefix, generation and key. */
static int
writer_lines(const uint8_t **p, const uint8_t *end, struct recipient_info *ri)
{
    char gen[24], key[2 * WRITER_KEY_BYTES + 2], norm[PQV_NAME_MAX + 1], *stop;

    if (take_line(p, end, "writer: ", ri->writer, sizeof(ri->writer)) != 0 ||
        !writers_valid_name(ri->writer))
        return error_set(PQV_E_INVAL, NULL, "writer credential: malformed writer line");
    if (take_line(p, end, "prefix: ", ri->prefix, sizeof(ri->prefix)) != 0 ||
        pqv_name_normalize(ri->prefix, norm, sizeof(norm)) != 0 || strcmp(norm, ri->prefix) != 0)
        return error_set(PQV_E_INVAL, NULL, "writer credential: malformed prefix line");
    if (take_line(p, end, "generation: ", gen, sizeof(gen)) != 0 || gen[0] < '1' ||
        gen[0] > '9' || (ri->generation = strtoull(gen, &stop, 10), *stop != '\0') ||
        strlen(gen) > 19)
        return error_set(PQV_E_INVAL, NULL, "writer credential: malformed generation line");
    if (take_line(p, end, "key: ", key, sizeof(key)) != 0 ||
        strlen(key) != 2 * WRITER_KEY_BYTES ||
        util_hex_decode(ri->key, WRITER_KEY_BYTES, key) != 0) {
        util_wipe(key, sizeof(key));
        return error_set(PQV_E_INVAL, NULL, "writer credential: malformed key line");
    }
    for (const char *c = key; *c; c++)
        if (*c >= 'A' && *c <= 'F') {
            util_wipe(key, sizeof(key));
            return error_set(PQV_E_INVAL, NULL, "writer credential: malformed key line");
        }
    util_wipe(key, sizeof(key));
    ri->is_writer = 1;
    return 0;
}

int
recipient_parse(const uint8_t *text, size_t len, struct recipient_info *ri)
{
    const uint8_t *p = text, *end = text + len;
    char hex[2 * VAULT_ID_BYTES + 1], fp[PQV_FINGERPRINT_CHARS + 8], kemname[64], format[8];
    char want[PQV_FINGERPRINT_CHARS];
    uint8_t *b64 = NULL, *key = NULL, hash[32];
    size_t nb = 0, need, got;
    const pqv_frodo *kem;
    int rc = PQV_E_INVAL, writer;

    if (ri == NULL || (text == NULL && len > 0))
        return PQV_E_INVAL;
    memset(ri, 0, sizeof(*ri));
    if (len > RECIPIENT_MAX_BYTES)
        return error_set(PQV_E_INVAL, NULL, "recipient: larger than %u bytes", RECIPIENT_MAX_BYTES);
    writer = len >= strlen(WRITER_HEADER) &&
        memcmp(text, WRITER_HEADER, strlen(WRITER_HEADER)) == 0;
    if (!writer && (len < strlen(RECIPIENT_HEADER) ||
                       memcmp(text, RECIPIENT_HEADER, strlen(RECIPIENT_HEADER)) != 0))
        return error_set(PQV_E_INVAL, NULL, "recipient: not a pqvault recipient or writer "
            "credential (first line must be \"pqvault-recipient 1\" or \"pqvault-writer 1\")");
    p += strlen(writer ? WRITER_HEADER : RECIPIENT_HEADER);
    if (take_line(&p, end, "vault-id: ", hex, sizeof(hex)) != 0 || strlen(hex) != 32 ||
        util_hex_decode(ri->vault_id, VAULT_ID_BYTES, hex) != 0)
        return error_set(PQV_E_INVAL, NULL, "recipient: malformed vault-id line");
    for (const char *c = hex; *c; c++)
        if (*c >= 'A' && *c <= 'F')
            return error_set(PQV_E_INVAL, NULL, "recipient: malformed vault-id line");
    if (take_line(&p, end, "fingerprint: ", fp, sizeof(fp)) != 0 ||
        strlen(fp) != PQV_FINGERPRINT_CHARS - 1)
        return error_set(PQV_E_INVAL, NULL, "recipient: malformed fingerprint line");
    if (take_line(&p, end, "kem: ", kemname, sizeof(kemname)) != 0 ||
        (kem = pqv_frodo_find(kemname)) == NULL)
        return error_set(PQV_E_INVAL, NULL, "recipient: malformed or unknown kem line");
    if (take_line(&p, end, "format: ", format, sizeof(format)) != 0 || strcmp(format, "2") != 0)
        return error_set(PQV_E_INVAL, NULL, "recipient: malformed format line (format 2 expected)");
    if (writer && (rc = writer_lines(&p, end, ri)) != 0)
        return rc;
    rc = PQV_E_INVAL;
    need = pqv_identity_public_bytes(kem);
    if ((b64 = malloc((size_t)(end - p))) == NULL || (key = malloc(need)) == NULL) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    /* Lines of 64 base64 characters, the last one 4..64 of them. */
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl != NULL ? (size_t)(nl - p) : 0;
        if (nl == NULL || ll == 0 || ll > RECIPIENT_LINE ||
            (ll < RECIPIENT_LINE && nl + 1 != end)) {
            rc = error_set(PQV_E_INVAL, NULL, "recipient: malformed key lines");
            goto out;
        }
        memcpy(b64 + nb, p, ll);
        nb += ll;
        p = nl + 1;
    }
    if (b64_decode(b64, nb, key, need, &got) != 0 || got != need || key[0] != 1 ||
        key[1] != pqv_frodo_id(kem)) {
        rc = error_set(PQV_E_INVAL, NULL, "recipient: malformed public key");
        goto out;
    }
    {
        struct kdf_part part = { key, need };
        if ((rc = kdf_sha3_256(hash, &part, 1)) != 0)
            goto out;
    }
    pqv_fingerprint_from_hash(hash, want);
    if (strcmp(want, fp) != 0) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "recipient: the public key does not match its "
            "fingerprint line (altered)");
        goto out;
    }
    ri->pub = key;
    ri->publen = need;
    key = NULL;
    rc = 0;
out:
    free(b64);
    free(key);
    if (rc != 0)
        util_wipe(ri->key, sizeof(ri->key));
    return rc;
}

int
pqv_recipient_parse(const uint8_t *text, size_t len, uint8_t vault_id[16], uint8_t **pub,
    size_t *publen)
{
    struct recipient_info ri;
    int rc;

    if (pub == NULL || publen == NULL || vault_id == NULL)
        return PQV_E_INVAL;
    *pub = NULL;
    *publen = 0;
    if ((rc = recipient_parse(text, len, &ri)) != 0)
        return rc;
    util_wipe(ri.key, sizeof(ri.key));
    memcpy(vault_id, ri.vault_id, VAULT_ID_BYTES);
    *pub = ri.pub;
    *publen = ri.publen;
    return 0;
}

/* recipient_public(v, pub, len): the vault's public identity, from the key
 * file checked against the config (and the unlocked identity). */
static int
recipient_public(pqv_vault *v, const uint8_t **pub, size_t *len)
{
    uint8_t hash[32];
    struct kdf_part part;
    int rc;

    if (v->keyfile == NULL) {
        if (v->keyfile_status != 0) {
            error_restore(&v->keyfile_error);
            return v->keyfile_status;
        }
        return error_set(PQV_E_NOTFOUND, v->keyfile_path, "key file not found");
    }
    *pub = pqv_keyfile_public(v->keyfile, len);
    part.data = *pub;
    part.len = *len;
    if ((rc = kdf_sha3_256(hash, &part, 1)) != 0)
        return rc;
    if (!util_ct_equal(hash, v->config.identity_hash, 32) ||
        pqv_keyfile_kem(v->keyfile) != v->config.kem)
        return error_set(PQV_E_INTEGRITY, v->keyfile_path, "the key file's public identity is not "
            "the one the config names");
    if (v->identity != NULL &&
        (pqv_identity_public_bytes(v->config.kem) != *len ||
            !util_ct_equal(pqv_identity_public(v->identity), *pub, *len)))
        return error_set(PQV_E_INTEGRITY, v->keyfile_path, "the key file's public identity is "
            "not the unlocked one");
    return 0;
}

/* export_recipient(v, verified, text, len): pqv_vault_export_recipient;
 * ${verified}: unlocked, the config's MAC and the seed's identity checked. */
static int
export_recipient(pqv_vault *v, int verified, char **text, size_t *len)
{
    int rc;

    if (v == NULL || text == NULL || len == NULL)
        return PQV_E_INVAL;
    *text = NULL;
    *len = 0;
    if (verified) {
        /* What the storage says is not the vault's unless its key says so:
         * the config's MAC (a forged config with this vault's id and
         * another identity carries its forger's MAC), and below the key
         * file's public identity equal to the seed's. */
        uint8_t config_key[32];
        if ((rc = vault_require_unlocked(v)) != 0)
            return rc;
        rc = pqv_identity_derive_key(v->identity, "config", config_key);
        if (rc == 0)
            rc = config_verify_mac(&v->config, config_key);
        util_wipe(config_key, sizeof(config_key));
        if (rc != 0)
            return rc;
    }
    return recipient_text(v, NULL, text, len);
}

int
recipient_text(pqv_vault *v, const struct recipient_info *ri, char **text, size_t *len)
{
    struct buf out = { NULL, 0, 0, 0 };
    const uint8_t *pub = NULL;
    size_t publen = 0;
    char hex[2 * VAULT_ID_BYTES + 1], fp[PQV_FINGERPRINT_CHARS], line[256];
    int rc;

    if (v->config.version < 2)
        return error_set(PQV_E_UNSUPPORTED, NULL, "write-only adds need a format-2 vault "
            "(upgrade it first)");
    if ((rc = recipient_public(v, &pub, &publen)) != 0)
        return rc;
    util_hex_encode(hex, v->config.vault_id, VAULT_ID_BYTES);
    pqv_fingerprint_from_hash(v->config.identity_hash, fp);
    snprintf(line, sizeof(line), "%svault-id: %s\nfingerprint: %s\nkem: %s\nformat: 2\n",
        ri != NULL ? WRITER_HEADER : RECIPIENT_HEADER, hex, fp, pqv_frodo_name(v->config.kem));
    buf_bytes(&out, line, strlen(line));
    if (ri != NULL) {
        char key[2 * WRITER_KEY_BYTES + 1];
        util_hex_encode(key, ri->key, WRITER_KEY_BYTES);
        buf_bytes(&out, "writer: ", 8);
        buf_bytes(&out, ri->writer, strlen(ri->writer));
        buf_bytes(&out, "\nprefix: ", 9);
        buf_bytes(&out, ri->prefix, strlen(ri->prefix));
        snprintf(line, sizeof(line), "\ngeneration: %llu\nkey: ",
            (unsigned long long)ri->generation);
        buf_bytes(&out, line, strlen(line));
        buf_bytes(&out, key, strlen(key));
        buf_u8(&out, '\n');
        util_wipe(key, sizeof(key));
    }
    b64_encode(&out, pub, publen);
    buf_u8(&out, 0);
    if (out.nomem) {
        buf_wipe_free(&out);
        return PQV_E_NOMEM;
    }
    *text = (char *)out.p;
    *len = out.len - 1;
    return 0;
}

int
pqv_vault_export_recipient(pqv_vault *v, char **text, size_t *len)
{
    return export_recipient(v, 1, text, len);
}

int
pqv_vault_export_recipient_unverified(pqv_vault *v, char **text, size_t *len)
{
    return export_recipient(v, 0, text, len);
}
