/*
 * inbox.c: write-only adds (docs/FORMAT.md section 18, docs/DESIGN.md
 * section 8).
 *
 * A recipient is the vault's public identity as text.  A writer that holds
 * only it (no key file, no passphrase) adds files as one batch: its packs
 * under "inbox/<B>/", then its commit point "inbox/<B>.batch", written
 * create-only once every pack is durable: the entries, their clear file
 * keys and the pack table (sizes, SHA-256), sealed under a key from one
 * hybrid encapsulation to the vault's identity.  It reads nothing but the
 * config and writes nothing outside inbox/.
 *
 * The owner (unlocked, writer lock) imports each batch: opened, its packs
 * verified (size, SHA-256) and copied into packs/, its entries (renamed on
 * a conflict, or replacing with --replace) committed as one epoch; only
 * then are the batch's files deleted.  An entry whose origin names the
 * batch ("inbox:<B hex>:...") in the catalogue means the batch was
 * imported already (a crash before its deletion): it is only deleted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto/kdf.h"
#include "pqvault/identity.h"
#include "pqvault/keyfile.h"
#include "util/buf.h"
#include "util/util.h"
#include "vault/vault_internal.h"

#define RECIPIENT_HEADER "pqvault-recipient 1\n"
#define RECIPIENT_MAX_BYTES (64u << 10)
#define RECIPIENT_LINE 64
#define BATCH_MAGIC "PQVB"
#define BATCH_VERSION 1
#define BATCH_FIXED_BYTES (4 + 1 + 3 + VAULT_ID_BYTES + BATCH_ID_BYTES + 4)
/* Read no larger batch file (a body of about a million entries) and no
 * larger inbox pack (4 MiB of extents, or one extent, and the header):
 * bounds fixed before anything is authenticated, then the sizes the body
 * gives are checked against them. */
#define MAX_BATCH_BYTES (256u << 20)
#define MAX_INBOX_PACK (16u << 20)
#define WRAP_LABEL "pqvault/v2/inbox"
#define BODY_LABEL "pqvault/v2/inbox-body"
#define ORIGIN_PREFIX "inbox:"
#define ORIGIN_MAX 4096

struct inbox {
    pqv_identity *recipient;     /* public only */
    uint8_t id[BATCH_ID_BYTES];
    char hex[2 * BATCH_ID_BYTES + 1];
    uint8_t key[32];             /* K_b */
    uint8_t *wrap;
    size_t wraplen;
    struct entry **entries;
    size_t n, cap;
    struct seg_pack *packs;
    size_t npacks, cappacks;
    int committed;
};

void
inbox_free(struct inbox *ib)
{
    if (ib == NULL)
        return;
    pqv_identity_free(ib->recipient);
    for (size_t i = 0; i < ib->n; i++) {
        entry_clear(ib->entries[i]);
        free(ib->entries[i]);
    }
    free(ib->entries);
    free(ib->packs);
    free(ib->wrap);
    util_wipe(ib, sizeof(*ib));
    free(ib);
}

void
inbox_pack_name(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX])
{
    char hex[2 * PACK_ID_BYTES + 1];

    util_hex_encode(hex, id, PACK_ID_BYTES);
    snprintf(out, STORAGE_NAME_MAX, INBOX_DIR "/%s/%s", v->inbox->hex, hex);
}

/* batch_pack_name(bhex, id, out): "inbox/<bhex>/<pack hex>". */
static void
batch_pack_name(const char *bhex, const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX])
{
    char hex[2 * PACK_ID_BYTES + 1];

    util_hex_encode(hex, id, PACK_ID_BYTES);
    snprintf(out, STORAGE_NAME_MAX, INBOX_DIR "/%s/%s", bhex, hex);
}

/* ---- recipients ---- */

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

int
pqv_recipient_parse(const uint8_t *text, size_t len, uint8_t vault_id[16], uint8_t **pub,
    size_t *publen)
{
    const uint8_t *p = text, *end = text + len;
    char hex[2 * VAULT_ID_BYTES + 1], fp[PQV_FINGERPRINT_CHARS + 8], kemname[64], format[8];
    char want[PQV_FINGERPRINT_CHARS];
    uint8_t *b64 = NULL, *key = NULL, hash[32];
    size_t nb = 0, need, got;
    const pqv_frodo *kem;
    int rc = PQV_E_INVAL;

    if (pub == NULL || publen == NULL || vault_id == NULL || (text == NULL && len > 0))
        return PQV_E_INVAL;
    *pub = NULL;
    *publen = 0;
    if (len > RECIPIENT_MAX_BYTES)
        return error_set(PQV_E_INVAL, NULL, "recipient: larger than %u bytes", RECIPIENT_MAX_BYTES);
    if (len < strlen(RECIPIENT_HEADER) || memcmp(text, RECIPIENT_HEADER, strlen(RECIPIENT_HEADER)) != 0)
        return error_set(PQV_E_INVAL, NULL, "recipient: not a pqvault recipient "
            "(first line must be \"pqvault-recipient 1\")");
    p += strlen(RECIPIENT_HEADER);
    if (take_line(&p, end, "vault-id: ", hex, sizeof(hex)) != 0 || strlen(hex) != 32 ||
        util_hex_decode(vault_id, VAULT_ID_BYTES, hex) != 0)
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
    *pub = key;
    *publen = need;
    key = NULL;
    rc = 0;
out:
    free(b64);
    free(key);
    return rc;
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
    struct buf out = { NULL, 0, 0, 0 };
    const uint8_t *pub = NULL;
    size_t publen = 0;
    char hex[2 * VAULT_ID_BYTES + 1], fp[PQV_FINGERPRINT_CHARS], line[256];
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
    if (v->config.version < 2)
        return error_set(PQV_E_UNSUPPORTED, NULL, "write-only adds need a format-2 vault "
            "(upgrade it first)");
    if ((rc = recipient_public(v, &pub, &publen)) != 0)
        return rc;
    util_hex_encode(hex, v->config.vault_id, VAULT_ID_BYTES);
    pqv_fingerprint_from_hash(v->config.identity_hash, fp);
    snprintf(line, sizeof(line), RECIPIENT_HEADER "vault-id: %s\nfingerprint: %s\nkem: %s\n"
        "format: 2\n", hex, fp, pqv_frodo_name(v->config.kem));
    buf_bytes(&out, line, strlen(line));
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

/* ---- the writer ---- */

/* wrap_context(vault_id, b, out): "pqvault/v2/inbox" || vault id || B. */
static size_t
wrap_context(const uint8_t vault_id[VAULT_ID_BYTES], const uint8_t b[BATCH_ID_BYTES], uint8_t *out)
{
    size_t n = strlen(WRAP_LABEL);

    memcpy(out, WRAP_LABEL, n);
    memcpy(out + n, vault_id, VAULT_ID_BYTES);
    memcpy(out + n + VAULT_ID_BYTES, b, BATCH_ID_BYTES);
    return n + VAULT_ID_BYTES + BATCH_ID_BYTES;
}

static int
body_key(const uint8_t kb[32], uint8_t key[32])
{
    return kdf_hkdf_sha256(key, 32, kb, 32, NULL, 0, (const uint8_t *)BODY_LABEL,
        strlen(BODY_LABEL));
}

int
pqv_vault_inbox_begin(pqv_vault *v, const uint8_t *recipient, size_t len)
{
    struct inbox *ib;
    uint8_t vault_id[VAULT_ID_BYTES], *pub = NULL, hash[32], ctx[64];
    size_t publen;
    struct kdf_part part;
    int rc;

    if (v == NULL || recipient == NULL || v->inbox != NULL)
        return PQV_E_INVAL;
    if (v->config.version < 2)
        return error_set(PQV_E_UNSUPPORTED, NULL, "write-only adds need a format-2 vault "
            "(its owner upgrades it first)");
    if ((rc = pqv_recipient_parse(recipient, len, vault_id, &pub, &publen)) != 0)
        return rc;
    part.data = pub;
    part.len = publen;
    if ((rc = kdf_sha3_256(hash, &part, 1)) != 0)
        goto out;
    if (memcmp(vault_id, v->config.vault_id, VAULT_ID_BYTES) != 0) {
        rc = error_set(PQV_E_AUTH, NULL, "the recipient is another vault's (vault id differs)");
        goto out;
    }
    if (!util_ct_equal(hash, v->config.identity_hash, 32) || pub[1] != pqv_frodo_id(v->config.kem)) {
        rc = error_set(PQV_E_AUTH, NULL, "the recipient's fingerprint is not this vault's");
        goto out;
    }
    if ((ib = calloc(1, sizeof(*ib))) == NULL) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    if ((rc = pqv_identity_from_public(&ib->recipient, pub, publen)) != 0 ||
        (rc = util_random(ib->id, sizeof(ib->id))) != 0 ||
        (rc = util_random(ib->key, sizeof(ib->key))) != 0)
        goto fail;
#ifdef PQV_TEST_HOOKS
    {
        /* The test build may fix the batch id (a batch committed twice). */
        const char *forced = getenv("PQVAULT_TEST_BATCH_ID");
        if (forced != NULL && util_hex_decode(ib->id, BATCH_ID_BYTES, forced) != 0) {
            rc = PQV_E_INVAL;
            goto fail;
        }
    }
#endif
    util_hex_encode(ib->hex, ib->id, BATCH_ID_BYTES);
    ib->wraplen = pqv_wrap_bytes(v->config.kem);
    if ((ib->wrap = malloc(ib->wraplen)) == NULL) {
        rc = PQV_E_NOMEM;
        goto fail;
    }
    /* One hybrid encapsulation for the whole batch. */
    if ((rc = pqv_wrap(ib->recipient, ib->key, ctx, wrap_context(v->config.vault_id, ib->id, ctx),
             ib->wrap)) != 0)
        goto fail;
    v->inbox = ib;
    goto out;
fail:
    inbox_free(ib);
out:
    free(pub);
    return rc;
}

int
inbox_take(pqv_vault *v, const struct txn *t)
{
    struct inbox *ib = v->inbox;

    if (ib->n + t->n > ib->cap) {
        size_t cap = ib->cap ? ib->cap : 64;
        while (cap < ib->n + t->n)
            cap *= 2;
        struct entry **g = realloc(ib->entries, cap * sizeof(*g));
        if (g == NULL)
            return PQV_E_NOMEM;
        ib->entries = g;
        ib->cap = cap;
    }
    if (ib->npacks + t->nintroduced > ib->cappacks) {
        size_t cap = ib->cappacks ? ib->cappacks : 16;
        while (cap < ib->npacks + t->nintroduced)
            cap *= 2;
        struct seg_pack *g = realloc(ib->packs, cap * sizeof(*g));
        if (g == NULL)
            return PQV_E_NOMEM;
        ib->packs = g;
        ib->cappacks = cap;
    }
    for (size_t i = 0; i < t->n; i++) {
        struct entry *e = calloc(1, sizeof(*e));
        int rc;
        if (e == NULL)
            return PQV_E_NOMEM;
        if ((rc = entry_copy(e, t->entries[i])) != 0) {
            free(e);
            return rc;
        }
        ib->entries[ib->n++] = e;
    }
    memcpy(ib->packs + ib->npacks, t->introduced, t->nintroduced * sizeof(*t->introduced));
    ib->npacks += t->nintroduced;
    return 0;
}

/* set_origin(e, bhex): "inbox:<B hex>:" and where the entry came from. */
static int
set_origin(struct entry *e, const char *bhex)
{
    const char *from = e->origin != NULL ? e->origin : e->name;
    char *o;

    if (asprintf(&o, ORIGIN_PREFIX "%s:%.*s", bhex,
            (int)(ORIGIN_MAX - strlen(ORIGIN_PREFIX) - 2 * BATCH_ID_BYTES - 1), from) < 0)
        return PQV_E_NOMEM;
    free(e->origin);
    e->origin = o;
    return 0;
}

int
pqv_vault_inbox_commit(pqv_vault *v, char id[33])
{
    struct inbox *ib;
    struct seg_tables tables;
    struct buf body = { NULL, 0, 0, 0 }, ents = { NULL, 0, 0, 0 }, blob = { NULL, 0, 0, 0 };
    uint8_t key[32], nonce[PQV_AEAD_NONCE_BYTES];
    char sname[STORAGE_NAME_MAX];
    size_t hlen;
    int rc = 0;

    if (v == NULL || id == NULL || (ib = v->inbox) == NULL || ib->committed)
        return PQV_E_INVAL;
    id[0] = '\0';
    if (ib->n == 0)
        return 0;
    memset(&tables, 0, sizeof(tables));
    memset(nonce, 0, sizeof(nonce));
    /* Every pack the batch wrote, in order (the importer moves them all). */
    for (size_t i = 0; i < ib->npacks && rc == 0; i++) {
        uint64_t index;
        rc = entry_tables_pack(&tables, ib->packs[i].id, 0, &index);
    }
    for (size_t i = 0; i < ib->n && rc == 0; i++) {
        struct entry *e = ib->entries[i];
        if ((rc = set_origin(e, ib->hex)) == 0 &&
            (e->kind != KIND_FILE || (rc = entry_check_size(e->name, e->size)) == 0)) {
#ifdef PQV_TEST_HOOKS
            /* The test build may forge a file's size (what import refuses). */
            const char *forged = getenv("PQVAULT_TEST_ENTRY_SIZE");
            if (forged != NULL && e->kind == KIND_FILE)
                e->size = strtoull(forged, NULL, 10);
#endif
            rc = entry_encode(&ents, e, &tables, e->key);
        }
    }
    if (rc != 0)
        goto out;
    buf_u8(&body, 1);
    buf_be64(&body, (uint64_t)(int64_t)time(NULL));
    buf_varint(&body, tables.nstrings);
    for (size_t i = 0; i < tables.nstrings; i++)
        buf_blob(&body, tables.strings[i], strlen(tables.strings[i]));
    buf_varint(&body, tables.npacks);
    for (size_t i = 0; i < tables.npacks; i++) {
        const struct seg_pack *sp = NULL;
        for (size_t k = 0; k < ib->npacks && sp == NULL; k++)
            if (memcmp(ib->packs[k].id, tables.packs[i].id, PACK_ID_BYTES) == 0)
                sp = &ib->packs[k];
        if (sp == NULL) {
            rc = error_set(PQV_E_INVAL, NULL, "inbox: an entry refers to a pack not written");
            goto out;
        }
        buf_bytes(&body, sp->id, PACK_ID_BYTES);
        buf_varint(&body, sp->size);
        buf_bytes(&body, sp->hash, 32);
    }
    buf_varint(&body, ib->n);
    buf_bytes(&body, ents.p, ents.len);
    /* The header, then the body sealed under K_b's body key. */
    buf_bytes(&blob, BATCH_MAGIC, 4);
    buf_u8(&blob, BATCH_VERSION);
    buf_u8(&blob, 0);
    buf_u8(&blob, 0);
    buf_u8(&blob, 0);
    buf_bytes(&blob, v->config.vault_id, VAULT_ID_BYTES);
    buf_bytes(&blob, ib->id, BATCH_ID_BYTES);
    buf_be32(&blob, (uint32_t)ib->wraplen);
    buf_bytes(&blob, ib->wrap, ib->wraplen);
    hlen = blob.len;
    if (body.nomem || ents.nomem || blob.nomem || buf_reserve(&blob, body.len + 16) == NULL) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    if ((rc = body_key(ib->key, key)) != 0 ||
        (rc = pqv_aead_seal1(PQV_AEAD_CHACHA20POLY1305, key, nonce, blob.p, hlen, body.p, body.len,
             blob.p + hlen)) != 0)
        goto out;
    blob.len = hlen + body.len + 16;
    snprintf(sname, sizeof(sname), INBOX_DIR "/%s.batch", ib->hex);
    /* The commit point, create-only, after every pack is durable (the
     * transactions' own barriers). */
    if ((rc = v->storage->ops->barrier(v->storage)) != 0)
        goto out;
    rc = v->storage->ops->put_new(v->storage, sname, blob.p, blob.len);
    if (rc == PQV_E_EXISTS)
        rc = error_set(PQV_E_EXISTS, sname, "a batch of this id exists already");
    if (rc != 0) {
        /* Not committed: this writer's packs are removed (best effort;
         * left, they are an incomplete batch that check reports). */
        struct error_saved first;
        error_save(&first);
        for (size_t i = 0; i < ib->npacks; i++) {
            char pname[STORAGE_NAME_MAX];
            inbox_pack_name(v, ib->packs[i].id, pname);
            (void)v->storage->ops->del(v->storage, pname);
        }
        (void)v->storage->ops->barrier(v->storage);
        error_restore(&first);
        goto out;
    }
    ib->committed = 1;
    snprintf(id, 33, "%s", ib->hex);
    rc = v->storage->ops->barrier(v->storage);
out:
    util_wipe(key, sizeof(key));
    entry_tables_free(&tables);
    buf_wipe_free(&body);
    buf_wipe_free(&ents);
    buf_wipe_free(&blob);
    return rc;
}

/* ---- reading batches ---- */

struct batch {
    uint8_t id[BATCH_ID_BYTES];
    char hex[2 * BATCH_ID_BYTES + 1];
    int64_t time;
    struct seg_pack *packs;
    size_t npacks;
    struct entry *entries;
    size_t n;
};

static void
batch_free(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        entry_clear(&b->entries[i]);
    free(b->entries);
    free(b->packs);
    memset(b, 0, sizeof(*b));
}

/* batch_parse_body(v, b, p, len): the body's plaintext. */
static int
batch_parse_body(struct batch *b, const uint8_t *p, size_t len)
{
    struct cursor c;
    struct seg_tables t;
    char prefix[64];
    uint64_t ns, np, ne;
    int rc = 0;

    memset(&t, 0, sizeof(t));
    cursor_init(&c, p, len);
    if (cursor_u8(&c) != 1)
        return error_set(PQV_E_INTEGRITY, NULL, "unknown batch body version");
    b->time = (int64_t)cursor_be64(&c);
    ns = cursor_varint_max(&c, cursor_left(&c));
    if (c.bad)
        goto bad;
    if (ns > 0 && (t.strings = calloc((size_t)ns, sizeof(*t.strings))) == NULL)
        return PQV_E_NOMEM;
    for (uint64_t i = 0; i < ns; i++) {
        uint64_t l = cursor_varint_max(&c, 4096);
        const uint8_t *s = cursor_take(&c, (size_t)l);
        if (s == NULL || l == 0 || memchr(s, 0, (size_t)l) != NULL)
            goto bad;
        if ((t.strings[i] = strndup((const char *)s, (size_t)l)) == NULL) {
            rc = PQV_E_NOMEM;
            goto out;
        }
        t.nstrings++;
    }
    np = cursor_varint_max(&c, cursor_left(&c) / (PACK_ID_BYTES + 33));
    if (c.bad)
        goto bad;
    if (np > 0 && ((t.packs = calloc((size_t)np, sizeof(*t.packs))) == NULL ||
                      (b->packs = calloc((size_t)np, sizeof(*b->packs))) == NULL)) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    t.cappacks = (size_t)np;
    for (uint64_t i = 0; i < np; i++) {
        const uint8_t *id = cursor_take(&c, PACK_ID_BYTES);
        uint64_t size = cursor_varint_max(&c, MAX_INBOX_PACK);
        const uint8_t *h = cursor_take(&c, 32);
        if (id == NULL || h == NULL || size < PACK_HEADER_BYTES)
            goto bad;
        for (uint64_t k = 0; k < i; k++)
            if (memcmp(b->packs[k].id, id, PACK_ID_BYTES) == 0)
                goto bad;
        memcpy(t.packs[i].id, id, PACK_ID_BYTES);
        memcpy(b->packs[i].id, id, PACK_ID_BYTES);
        b->packs[i].flags = PACK_INTRODUCED;
        b->packs[i].size = size;
        memcpy(b->packs[i].hash, h, 32);
        t.npacks++;
        b->npacks++;
    }
    /* An entry takes at least 3 bytes. */
    ne = cursor_varint_max(&c, cursor_left(&c) / 3);
    if (c.bad || ne == 0)
        goto bad;
    if ((b->entries = calloc((size_t)ne, sizeof(*b->entries))) == NULL) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    snprintf(prefix, sizeof(prefix), ORIGIN_PREFIX "%s:", b->hex);
    for (uint64_t i = 0; i < ne; i++) {
        struct entry *e = &b->entries[i];
        if ((rc = entry_decode(&c, e, &t)) != 0)
            goto out;
        b->n++;
        /* Every entry names this batch as its origin (an import is told
         * from it); no removal; the file key was stored clear. */
        if (e->kind == KIND_REMOVED || e->origin == NULL ||
            strncmp(e->origin, prefix, strlen(prefix)) != 0)
            goto bad;
        if (e->kind == KIND_FILE)
            e->key_state = KEY_CLEAR;
        e->has_content = 0; /* not keyed by the vault: never trusted */
    }
    if (cursor_left(&c) != 0 || c.bad)
        goto bad;
    goto out;
bad:
    rc = error_set(PQV_E_INTEGRITY, NULL, "malformed batch body");
out:
    entry_tables_free(&t);
    return rc;
}

/* batch_open(v, hex, blob, len, b): verify and parse the batch named
 * "inbox/<hex>.batch" (requires the unlocked identity). */
static int
batch_open(pqv_vault *v, const char *hex, const uint8_t *blob, size_t len, struct batch *b)
{
    uint8_t kb[32], key[32], nonce[PQV_AEAD_NONCE_BYTES], ctx[64], *plain = NULL;
    size_t wraplen = pqv_wrap_bytes(v->config.kem), hlen = BATCH_FIXED_BYTES + wraplen;
    int rc;

    memset(b, 0, sizeof(*b));
    memset(nonce, 0, sizeof(nonce));
    snprintf(b->hex, sizeof(b->hex), "%s", hex);
    if (util_hex_decode(b->id, BATCH_ID_BYTES, hex) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "malformed batch name");
    if (len < hlen + 16 || memcmp(blob, BATCH_MAGIC, 4) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "not a batch (magic or length)");
    if (blob[4] != BATCH_VERSION)
        return error_set(PQV_E_INTEGRITY, NULL, "unknown batch version %u", blob[4]);
    if (blob[5] != 0 || blob[6] != 0 || blob[7] != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "malformed batch header");
    if (memcmp(blob + 8, v->config.vault_id, VAULT_ID_BYTES) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "a batch for another vault");
    if (memcmp(blob + 8 + VAULT_ID_BYTES, b->id, BATCH_ID_BYTES) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "the batch's id is not its name's (moved)");
    if (util_load_be32(blob + 8 + VAULT_ID_BYTES + BATCH_ID_BYTES) != wraplen)
        return error_set(PQV_E_INTEGRITY, NULL, "malformed batch header (key length)");
    if ((rc = pqv_unwrap(v->identity, blob + BATCH_FIXED_BYTES, wraplen, ctx,
             wrap_context(v->config.vault_id, b->id, ctx), kb)) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "the batch's key does not open (not for this "
            "vault, or altered)");
    rc = body_key(kb, key);
    util_wipe(kb, sizeof(kb));
    if (rc != 0)
        return rc;
    if ((plain = malloc(len - hlen - 16 + 1)) == NULL) {
        util_wipe(key, sizeof(key));
        return PQV_E_NOMEM;
    }
    rc = pqv_aead_open1(PQV_AEAD_CHACHA20POLY1305, key, nonce, blob, hlen, blob + hlen, len - hlen,
        plain);
    util_wipe(key, sizeof(key));
    if (rc != 0) {
        free(plain);
        return error_set(PQV_E_INTEGRITY, NULL, "the batch body does not authenticate (altered "
            "or truncated)");
    }
    rc = batch_parse_body(b, plain, len - hlen - 16);
    util_wipe(plain, len - hlen - 16);
    free(plain);
    if (rc != 0)
        batch_free(b);
    return rc;
}

static int import_packs(pqv_vault *v, const struct batch *b, int copy);

int
inbox_parse_body(const char *hex, const uint8_t *p, size_t len, size_t *n)
{
    struct batch b;
    int rc;

    memset(&b, 0, sizeof(b));
    snprintf(b.hex, sizeof(b.hex), "%s", hex);
    rc = batch_parse_body(&b, p, len);
    *n = b.n;
    batch_free(&b);
    return rc;
}

int
inbox_open_batch(pqv_vault *v, const char *hex, const uint8_t *blob, size_t len, size_t *n)
{
    struct batch b;
    int rc = batch_open(v, hex, blob, len, &b);

    *n = rc == 0 ? b.n : 0;
    if (rc == 0)
        batch_free(&b);
    return rc;
}

/* ---- listing ---- */

/* is_hex(s, n): exactly ${n} lowercase hex digits. */
static int
is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* What a name under inbox/ is. */
enum { IN_BATCH = 1, IN_PACK = 2, IN_OTHER = 3 };

static int
classify(const char *name, char hex[2 * BATCH_ID_BYTES + 1])
{
    const char *r = name + strlen(INBOX_DIR "/");

    if (strncmp(name, INBOX_DIR "/", strlen(INBOX_DIR "/")) != 0 || strlen(r) < 32 ||
        !is_hex(r, 32))
        return IN_OTHER;
    memcpy(hex, r, 32);
    hex[32] = '\0';
    if (strcmp(r + 32, ".batch") == 0)
        return IN_BATCH;
    if (r[32] == '/' && strlen(r + 33) == 32 && is_hex(r + 33, 32))
        return IN_PACK;
    return IN_OTHER;
}

static struct pqv_inbox_batch *
find_or_add(struct pqv_inbox_batch **list, size_t *n, const char *hex)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i].id, hex) == 0)
            return &(*list)[i];
    struct pqv_inbox_batch *g = realloc(*list, (*n + 1) * sizeof(*g));
    if (g == NULL)
        return NULL;
    *list = g;
    memset(&g[*n], 0, sizeof(g[*n]));
    snprintf(g[*n].id, sizeof(g[*n].id), "%s", hex);
    g[*n].time = -1;
    g[*n].entries = -1;
    g[*n].state = PQV_INBOX_INCOMPLETE;
    return &g[(*n)++];
}

static int
compare_batches(const void *a, const void *b)
{
    return strcmp(((const struct pqv_inbox_batch *)a)->id, ((const struct pqv_inbox_batch *)b)->id);
}

int
pqv_vault_inbox_list(pqv_vault *v, struct pqv_inbox_batch **out, size_t *n)
{
    struct names_list names;
    struct pqv_inbox_batch *list = NULL;
    size_t k = 0;
    int rc;

    if (v == NULL || out == NULL || n == NULL)
        return PQV_E_INVAL;
    *out = NULL;
    *n = 0;
    if ((rc = names_list(v->storage, INBOX_DIR, &names)) != 0)
        return rc;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        char hex[2 * BATCH_ID_BYTES + 1];
        int cls = classify(names.names[i], hex);
        struct pqv_inbox_batch *b;
        if (cls == IN_OTHER)
            continue; /* temporaries of a write in progress, or junk */
        if ((b = find_or_add(&list, &k, hex)) == NULL) {
            rc = PQV_E_NOMEM;
            break;
        }
        if (names.sizes[i] != PQV_STORAGE_NOT_A_BLOB)
            b->size += names.sizes[i];
        if (cls == IN_PACK)
            b->packs++;
        else
            b->state = PQV_INBOX_PENDING;
    }
    names_list_free(&names);
    if (rc == 0 && k > 1)
        qsort(list, k, sizeof(*list), compare_batches);
    /* Unlocked: each batch opened (entries, time, damage). */
    for (size_t i = 0; rc == 0 && i < k && v->identity != NULL &&
         pqv_identity_has_secret(v->identity); i++) {
        char sname[STORAGE_NAME_MAX];
        uint8_t *blob;
        size_t len;
        struct batch b;
        if (list[i].state != PQV_INBOX_PENDING)
            continue;
        snprintf(sname, sizeof(sname), INBOX_DIR "/%s.batch", list[i].id);
        rc = v->storage->ops->get(v->storage, sname, &blob, &len, MAX_BATCH_BYTES);
        if (rc == PQV_E_NOTFOUND) {
            rc = 0; /* imported meanwhile */
            continue;
        }
        if (rc == PQV_E_INTEGRITY) {
            list[i].state = PQV_INBOX_DAMAGED;
            rc = 0;
            continue;
        }
        if (rc != 0)
            break;
        rc = batch_open(v, list[i].id, blob, len, &b);
        free(blob);
        if (rc == 0 && (rc = import_packs(v, &b, 0)) != 0)
            batch_free(&b);
        if (rc == PQV_E_INTEGRITY) {
            list[i].state = PQV_INBOX_DAMAGED;
            rc = 0;
        } else if (rc == 0) {
            list[i].time = b.time;
            list[i].entries = (int64_t)b.n;
            batch_free(&b);
        }
    }
    if (rc != 0) {
        free(list);
        return rc;
    }
    *out = list;
    *n = k;
    return 0;
}

/* ---- import ---- */

/* pack_one(v, b, i, copy): pack ${i} of ${b} present in inbox/ with its
 * size and SHA-256; with ${copy}, then copied into packs/ (a pack already
 * there must be the same bytes: an earlier interrupted import). */
static int
pack_one(pqv_vault *v, const struct batch *b, size_t i, int copy)
{
    char from[STORAGE_NAME_MAX], to[STORAGE_NAME_MAX];
    uint8_t *data = NULL, hash[32], header[PACK_HEADER_BYTES];
    size_t len;
    uint64_t size;
    int rc;

    batch_pack_name(b->hex, b->packs[i].id, from);
    pack_name(b->packs[i].id, to);
    rc = v->storage->ops->get(v->storage, from, &data, &len, (size_t)b->packs[i].size);
    if (rc == PQV_E_NOTFOUND)
        return error_set(PQV_E_INTEGRITY, from, "pack missing");
    if (rc != 0)
        return error_subject(rc, from);
    pack_header(header);
    if (len != b->packs[i].size || (rc = kdf_sha256(hash, data, len)) != 0 ||
        !util_ct_equal(hash, b->packs[i].hash, 32) || len < PACK_HEADER_BYTES ||
        memcmp(data, header, PACK_HEADER_BYTES) != 0) {
        free(data);
        return rc != 0 ? rc : error_set(PQV_E_INTEGRITY, from, "pack of the wrong size or "
            "SHA-256 (altered, truncated or swapped)");
    }
    if (!copy) {
        free(data);
        return 0;
    }
    rc = v->storage->ops->stat(v->storage, to, &size);
    if (rc == 0) {
        /* There already: the same bytes (an interrupted import), or a
         * batch naming one of the vault's packs: refused. */
        uint8_t *have = NULL, h2[32];
        size_t hl;
        rc = v->storage->ops->get(v->storage, to, &have, &hl, (size_t)b->packs[i].size);
        if (rc == 0 && ((rc = kdf_sha256(h2, have, hl)) != 0 || hl != len ||
                           !util_ct_equal(h2, hash, 32)))
            rc = rc != 0 ? rc : PQV_E_INTEGRITY;
        if (rc == PQV_E_INTEGRITY)
            rc = error_set(PQV_E_INTEGRITY, from, "names a pack the vault holds with other "
                "contents");
        free(have);
    } else if (rc == PQV_E_NOTFOUND) {
        rc = v->storage->ops->put(v->storage, to, data, len);
    }
    free(data);
    return rc;
}

/* Packs verified (and copied) at once on the worker pool. */
#define PACKS_AT_ONCE 4

struct pack_job {
    struct pool_job job;
    pqv_vault *v;
    const struct batch *b;
    size_t i;
    int copy;
};

static void
pack_job_run(struct pool_job *pj)
{
    struct pack_job *j = (struct pack_job *)pj;

    j->job.rc = pack_one(j->v, j->b, j->i, j->copy);
}

/* import_packs(v, b, copy): pack_one for every pack of ${b}, a few at a
 * time; the first failure (in pack order) is returned. */
static int
import_packs(pqv_vault *v, const struct batch *b, int copy)
{
    struct pool *pool = vault_pool(v);
    struct pack_job jobs[PACKS_AT_ONCE];
    struct error_saved first;
    size_t next = 0, done = 0;
    int rc = 0;

    if (pool == NULL)
        return PQV_E_NOMEM;
    memset(jobs, 0, sizeof(jobs));
    while (done < next || (rc == 0 && next < b->npacks)) {
        if (rc == 0 && next < b->npacks && next - done < PACKS_AT_ONCE) {
            struct pack_job *j = &jobs[next % PACKS_AT_ONCE];
            memset(j, 0, sizeof(*j));
            j->v = v;
            j->b = b;
            j->i = next++;
            j->copy = copy;
            j->job.run = pack_job_run;
            pool_submit(pool, &j->job);
            continue;
        }
        int jrc = pool_wait(pool, &jobs[done % PACKS_AT_ONCE].job);
        done++;
        if (jrc != 0 && rc == 0) {
            rc = jrc; /* the first failure; jobs in flight are drained */
            error_save(&first);
        }
    }
    if (rc != 0)
        error_restore(&first);
    return rc;
}

/* kind_is_dir(e) */
static int
is_dir(const struct entry *e)
{
    return e != NULL && e->kind == KIND_DIR;
}

/* taken(st, news, n, name): a name in the state or among the new ones. */
static const struct entry *
taken(const struct state *st, struct entry **news, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(news[i]->name, name) == 0)
            return news[i];
    return state_find(st, name);
}

/* blocked(st, news, n, name, at): an ancestor of ${name} that is not a
 * directory; its length in *${at}. */
static int
blocked(const struct state *st, struct entry **news, size_t n, const char *name, size_t *at)
{
    char buf[PQV_NAME_MAX + 1];

    snprintf(buf, sizeof(buf), "%s", name);
    for (char *s = strchr(buf, '/'); s != NULL; s = strchr(s + 1, '/')) {
        const struct entry *e;
        *s = '\0';
        e = taken(st, news, n, buf);
        *s = '/';
        if (e != NULL && !is_dir(e)) {
            *at = (size_t)(s - buf);
            return 1;
        }
    }
    return 0;
}

struct rename {
    char *from, *to;
};

/* import_batch(v, b, opt, res): one batch as one epoch. */
static int
import_batch(pqv_vault *v, struct batch *b, const struct pqv_import_options *opt,
    struct pqv_import_result *res)
{
    struct state st;
    struct txn t;
    struct entry **news = NULL;
    struct rename *renames = NULL;
    size_t nnews = 0, nren = 0;
    uint64_t (*groups)[2] = NULL;
    size_t ngroups = 0;
    char prefix[64], tag[16];
    int rc, began = 0;

    memset(&t, 0, sizeof(t));
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    if ((rc = state_load(v, &st)) != 0)
        goto out;
    snprintf(prefix, sizeof(prefix), ORIGIN_PREFIX "%s:", b->hex);
    snprintf(tag, sizeof(tag), "%.8s", b->hex);
    /* Imported already (a crash before the batch was deleted)? */
    for (size_t i = 0; i < st.n; i++)
        if (st.entries[i].origin != NULL &&
            strncmp(st.entries[i].origin, prefix, strlen(prefix)) == 0) {
            res->already++;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, b->hex,
                "imported already: its inbox files are removed");
            rc = 1;
            goto out;
        }
    if ((rc = import_packs(v, b, 1)) != 0)
        goto out;
    if ((news = calloc(b->n, sizeof(*news))) == NULL ||
        (renames = calloc(b->n, sizeof(*renames))) == NULL ||
        (groups = calloc(b->n, sizeof(*groups))) == NULL) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    if ((rc = txn_begin(v, &st, &t)) != 0)
        goto out;
    began = 1;
    for (size_t i = 0; i < b->n && rc == 0; i++) {
        struct entry *e = &b->entries[i];
        const struct entry *old;
        char *name = NULL;
        size_t at;
        /* Below a renamed directory: renamed with it. */
        for (size_t r = nren; r-- > 0;) {
            size_t fl = strlen(renames[r].from);
            if (strncmp(e->name, renames[r].from, fl) == 0 && e->name[fl] == '/') {
                if (asprintf(&name, "%s%s", renames[r].to, e->name + fl) < 0) {
                    rc = PQV_E_NOMEM;
                    name = NULL;
                }
                break;
            }
        }
        if (rc != 0)
            break;
        if (name != NULL) {
            free(e->name);
            e->name = name;
        }
        /* An ancestor that is a file: the part of the name up to it
         * renamed (and everything below with it). */
        if (blocked(&st, news, nnews, e->name, &at)) {
            char *from = strndup(e->name, at), *to = NULL;
            if (from == NULL || asprintf(&to, "%s (inbox %s)", from, tag) < 0 ||
                asprintf(&name, "%s%s", to, e->name + at) < 0) {
                free(from);
                rc = PQV_E_NOMEM;
                break;
            }
            renames[nren].from = from;
            renames[nren++].to = to;
            free(e->name);
            e->name = name;
            res->renamed++;
        }
        old = taken(&st, news, nnews, e->name);
        /* A name this batch already holds is always renamed: one name,
         * one entry per epoch. */
        int ours = old != NULL && old != state_find(&st, e->name);
        if (old != NULL && (ours || (!(is_dir(old) && is_dir(e)) &&
                                        !(opt->replace && !is_dir(old) && !is_dir(e))))) {
            /* Kept both: the new one under "name (inbox B8)", " 2"... */
            char *to = NULL;
            for (int k = 1; rc == 0; k++) {
                free(to);
                if ((k == 1 ? asprintf(&to, "%s (inbox %s)", e->name, tag)
                            : asprintf(&to, "%s (inbox %s %d)", e->name, tag, k)) < 0) {
                    to = NULL;
                    rc = PQV_E_NOMEM;
                } else if (strlen(to) > PQV_NAME_MAX) {
                    rc = error_set(PQV_E_INVAL, e->name, "name too long to rename");
                } else if (taken(&st, news, nnews, to) == NULL) {
                    break;
                }
            }
            if (rc != 0) {
                free(to);
                break;
            }
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, e->name,
                "exists: the imported one is named '%s'", to);
            if (e->kind == KIND_DIR) {
                /* Everything below it follows it. */
                if ((renames[nren].to = strdup(to)) == NULL) {
                    free(to);
                    rc = PQV_E_NOMEM;
                    break;
                }
                renames[nren++].from = e->name;
            } else {
                free(e->name);
            }
            e->name = to;
            res->renamed++;
        } else if (old != NULL && !is_dir(old)) {
            res->replaced++;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, e->name, "replaced");
        }
        /* Hard-link groups get ids of this vault's making. */
        if (e->hlgroup != 0) {
            size_t g;
            for (g = 0; g < ngroups && groups[g][0] != e->hlgroup; g++)
                ;
            if (g == ngroups) {
                groups[g][0] = e->hlgroup;
                if ((rc = util_random(&groups[g][1], sizeof(groups[g][1]))) != 0)
                    break;
                groups[g][1] |= 1;
                ngroups++;
            }
            e->hlgroup = groups[g][1];
        }
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, e->name, "imported");
        if ((rc = txn_add(&t, e)) == 0)
            news[nnews++] = t.entries[t.n - 1];
    }
    for (size_t i = 0; rc == 0 && i < b->npacks; i++)
        rc = txn_introduce(&t, &b->packs[i]);
    /* The commit point: one epoch for the whole batch. */
    if (rc == 0)
        rc = txn_commit(&t, SEGMENT_DELTA, NULL, 0, NULL, 0);
    else
        txn_abort(&t);
    if (rc == 0) {
        res->batches++;
        res->entries += nnews;
    }
out:
    if (began)
        txn_free(&t);
    for (size_t i = 0; renames != NULL && i < nren; i++) {
        free(renames[i].from);
        free(renames[i].to);
    }
    free(renames);
    free(news);
    free(groups);
    state_free(&st);
    return rc;
}

/* delete_batch(v, b or hex): its packs, then its commit point. */
static int
delete_batch(pqv_vault *v, const char *hex, const struct batch *b)
{
    char sname[STORAGE_NAME_MAX];
    int rc;

    for (size_t i = 0; b != NULL && i < b->npacks; i++) {
        batch_pack_name(hex, b->packs[i].id, sname);
        rc = v->storage->ops->del(v->storage, sname);
        if (rc != 0 && rc != PQV_E_NOTFOUND)
            return rc;
    }
    if (b != NULL && (rc = v->storage->ops->barrier(v->storage)) != 0)
        return rc;
    snprintf(sname, sizeof(sname), INBOX_DIR "/%s.batch", hex);
    rc = v->storage->ops->del(v->storage, sname);
    if (rc != 0 && rc != PQV_E_NOTFOUND)
        return rc;
    return v->storage->ops->barrier(v->storage);
}

int
pqv_vault_import(pqv_vault *v, const struct pqv_import_options *opt)
{
    static const struct pqv_import_options none;
    struct pqv_import_result res;
    struct names_list names;
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (v->inbox != NULL)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &none;
    memset(&res, 0, sizeof(res));
    if ((rc = upgrade_if_needed(v, opt->report, opt->report_ctx)) != 0)
        return rc;
    if ((rc = names_list(v->storage, INBOX_DIR, &names)) != 0)
        return rc;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        char hex[2 * BATCH_ID_BYTES + 1], sname[STORAGE_NAME_MAX];
        uint8_t *blob = NULL;
        size_t len;
        struct batch b;
        int irc;
        if (classify(names.names[i], hex) != IN_BATCH)
            continue;
        snprintf(sname, sizeof(sname), "%s", names.names[i]);
        irc = v->storage->ops->get(v->storage, sname, &blob, &len, MAX_BATCH_BYTES);
        if (irc == PQV_E_NOTFOUND)
            continue;
        if (irc == 0) {
            irc = batch_open(v, hex, blob, len, &b);
            free(blob);
        }
        if (irc == 0) {
            irc = import_batch(v, &b, opt, &res);
            if (irc >= 0) {
                /* Durable in the catalogue (or imported before): the
                 * batch's files go. */
                irc = delete_batch(v, hex, &b);
            }
            batch_free(&b);
        }
        if (irc == PQV_E_INTEGRITY) {
            res.damaged++;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, sname,
                "not imported (left in place): %s", pqv_error_last()->reason);
            pqv_error_clear();
        } else if (irc != 0) {
            rc = irc;
        }
    }
    names_list_free(&names);
    if (opt->result != NULL) {
        struct pqv_import_result *r = opt->result;
        r->batches += res.batches;
        r->entries += res.entries;
        r->renamed += res.renamed;
        r->replaced += res.replaced;
        r->already += res.already;
        r->damaged += res.damaged;
    }
    if (rc == 0 && res.batches > 0)
        rc = compact_if_long(v, opt->report, opt->report_ctx);
    if (rc == 0 && res.damaged > 0)
        rc = error_set(PQV_E_INTEGRITY, NULL, "%llu inbox batch%s damaged (reported above, left "
            "in place)", (unsigned long long)res.damaged, res.damaged == 1 ? "" : "es");
    return rc;
}

/* ---- check ---- */

int
inbox_check(pqv_vault *v, pqv_report_fn report, void *ctx, struct pqv_check_result *res)
{
    struct pqv_inbox_batch *list;
    size_t n;
    int rc;

    if ((rc = pqv_vault_inbox_list(v, &list, &n)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        char sname[STORAGE_NAME_MAX];
        snprintf(sname, sizeof(sname), INBOX_DIR "/%s.batch", list[i].id);
        if (list[i].state == PQV_INBOX_DAMAGED) {
            res->inbox++;
            res->inbox_damaged++;
            vault_report(report, ctx, PQV_REPORT_WARNING, sname, "inbox batch does not open "
                "(altered, truncated or another vault's; import leaves it in place)");
        } else if (list[i].state == PQV_INBOX_PENDING) {
            res->inbox++;
            vault_report(report, ctx, PQV_REPORT_INFO, sname, "inbox batch waits (pqvault import)");
        } else {
            vault_report(report, ctx, PQV_REPORT_WARNING, list[i].id, "inbox packs without a "
                "batch: a write-only add interrupted or still running (left in place)");
        }
    }
    free(list);
    return 0;
}
