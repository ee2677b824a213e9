/*
 * batch.c: inbox batches (docs/FORMAT.md section 18): a batch file sealed
 * by a write-only writer, opened by the owner (its header, the wrap of K_b,
 * its body), and its packs verified (present, of their size and SHA-256)
 * and copied into packs/ at import.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crypto/kdf.h"
#include "pqvault/identity.h"
#include "util/buf.h"
#include "util/cursor.h"
#include "util/pool.h"
#include "util/util.h"
#include "vault/batch.h"
#include "vault/pack.h"
#include "vault/vault_internal.h"

#define WRAP_LABEL "pqvault/v2/inbox"
#define BODY_LABEL "pqvault/v2/inbox-body"

/* batch_pack_name(bhex, id, out): "inbox/<bhex>/<pack hex>". */
void
batch_pack_name(const char *bhex, const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX])
{
    char hex[2 * PACK_ID_BYTES + 1];

    util_hex_encode(hex, id, PACK_ID_BYTES);
    snprintf(out, STORAGE_NAME_MAX, INBOX_DIR "/%s/%s", bhex, hex);
}

/* batch_wrap_context(vault_id, b, out): "pqvault/v2/inbox" || vault id || B. */
size_t
batch_wrap_context(const uint8_t vault_id[VAULT_ID_BYTES], const uint8_t b[BATCH_ID_BYTES], uint8_t *out)
{
    size_t n = strlen(WRAP_LABEL);

    memcpy(out, WRAP_LABEL, n);
    memcpy(out + n, vault_id, VAULT_ID_BYTES);
    memcpy(out + n + VAULT_ID_BYTES, b, BATCH_ID_BYTES);
    return n + VAULT_ID_BYTES + BATCH_ID_BYTES;
}

static int
batch_body_key(const uint8_t kb[32], uint8_t key[32])
{
    return kdf_hkdf_sha256(key, 32, kb, 32, NULL, 0, (const uint8_t *)BODY_LABEL,
        strlen(BODY_LABEL));
}

void
batch_free(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        entry_clear(&b->entries[i]);
    free(b->entries);
    free(b->packs);
    for (size_t i = 0; i < b->nroots; i++)
        free(b->roots[i]);
    free(b->roots);
    memset(b, 0, sizeof(*b));
}

int
batch_seal(const pqv_vault *v, const uint8_t id[BATCH_ID_BYTES], const uint8_t kb[32],
    const uint8_t *wrap, size_t wraplen, struct entry *const *entries, size_t n,
    const struct seg_pack *packs, size_t npacks, const struct batch_writer *w, struct buf *blob)
{
    struct seg_tables tables;
    struct buf body = { NULL, 0, 0, 0 }, ents = { NULL, 0, 0, 0 };
    uint8_t key[32], nonce[PQV_AEAD_NONCE_BYTES];
    size_t hlen;
    int rc = 0;

    memset(&tables, 0, sizeof(tables));
    tables.special = 1; /* FIFOs (a writer's add stores no device node) */
    memset(nonce, 0, sizeof(nonce));
    /* Every pack the batch wrote, in order (the importer moves them all). */
    for (size_t i = 0; i < npacks && rc == 0; i++) {
        uint64_t index;
        rc = entry_tables_pack(&tables, packs[i].id, 0, &index);
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = entry_encode(&ents, entries[i], &tables, entries[i]->key);
    if (rc != 0)
        goto out;
    buf_u8(&body, w != NULL ? 2 : 1);
    {
        /* Version 2: the nanoseconds too, which order a writer's batches
         * (import takes its newer state last). */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        buf_be64(&body, (uint64_t)(int64_t)now.tv_sec);
        if (w != NULL)
            buf_be32(&body, (uint32_t)now.tv_nsec);
    }
    buf_varint(&body, tables.nstrings);
    for (size_t i = 0; i < tables.nstrings; i++)
        buf_blob(&body, tables.strings[i], strlen(tables.strings[i]));
    buf_varint(&body, tables.npacks);
    for (size_t i = 0; i < tables.npacks; i++) {
        const struct seg_pack *sp = NULL;
        for (size_t k = 0; k < npacks && sp == NULL; k++)
            if (memcmp(packs[k].id, tables.packs[i].id, PACK_ID_BYTES) == 0)
                sp = &packs[k];
        if (sp == NULL) {
            rc = error_set(PQV_E_INVAL, NULL, "inbox: an entry refers to a pack not written");
            goto out;
        }
        buf_bytes(&body, sp->id, PACK_ID_BYTES);
        buf_varint(&body, sp->size);
        buf_bytes(&body, sp->hash, 32);
    }
    if (w != NULL) {
        buf_varint(&body, w->nroots);
        for (size_t i = 0; i < w->nroots; i++)
            buf_blob(&body, w->roots[i], strlen(w->roots[i]));
    }
    buf_varint(&body, n);
    buf_bytes(&body, ents.p, ents.len);
    /* The header, then the body sealed under K_b's body key (then a
     * writer's MAC over both). */
    buf_bytes(blob, BATCH_MAGIC, 4);
    buf_u8(blob, w != NULL ? BATCH_VERSION_WRITER : BATCH_VERSION);
    buf_u8(blob, 0);
    buf_u8(blob, 0);
    buf_u8(blob, 0);
    buf_bytes(blob, v->config.vault_id, VAULT_ID_BYTES);
    buf_bytes(blob, id, BATCH_ID_BYTES);
    buf_be32(blob, (uint32_t)wraplen);
    buf_bytes(blob, wrap, wraplen);
    if (w != NULL) {
        buf_u8(blob, (uint8_t)strlen(w->name));
        buf_bytes(blob, w->name, strlen(w->name));
        buf_be64(blob, w->generation);
    }
    hlen = blob->len;
    if (body.nomem || ents.nomem || blob->nomem || buf_reserve(blob, body.len + 16) == NULL) {
        rc = PQV_E_NOMEM;
        goto out;
    }
    if ((rc = batch_body_key(kb, key)) != 0 ||
        (rc = pqv_aead_seal1(PQV_AEAD_CHACHA20POLY1305, key, nonce, blob->p, hlen, body.p,
             body.len, blob->p + hlen)) != 0)
        goto out;
    blob->len = hlen + body.len + 16;
    if (w != NULL) {
        uint8_t mac[BATCH_MAC_BYTES];
        if ((rc = kdf_hmac_sha256(mac, w->key, WRITER_KEY_BYTES, blob->p, blob->len)) != 0)
            goto out;
        buf_bytes(blob, mac, sizeof(mac));
        rc = blob->nomem ? PQV_E_NOMEM : 0;
    }
out:
    util_wipe(key, sizeof(key));
    entry_tables_free(&tables);
    buf_wipe_free(&body);
    buf_wipe_free(&ents);
    return rc;
}

/* parse_roots(b, c): a writer's operands' stored names (none when no tree
 * was read whole: its import removes nothing), each normal. */
static int
parse_roots(struct batch *b, struct cursor *c)
{
    uint64_t n = cursor_varint_max(c, cursor_left(c) / 2);

    if (c->bad)
        return error_set(PQV_E_INTEGRITY, NULL, "malformed batch body (roots)");
    if (n == 0)
        return 0;
    if ((b->roots = calloc((size_t)n, sizeof(*b->roots))) == NULL)
        return PQV_E_NOMEM;
    for (; b->nroots < n; b->nroots++) {
        char norm[PQV_NAME_MAX + 1];
        uint64_t l = cursor_varint_max(c, PQV_NAME_MAX);
        const uint8_t *q = cursor_take(c, (size_t)l);
        if (q == NULL || l == 0 || memchr(q, 0, (size_t)l) != NULL)
            return error_set(PQV_E_INTEGRITY, NULL, "malformed batch body (roots)");
        if ((b->roots[b->nroots] = strndup((const char *)q, (size_t)l)) == NULL)
            return PQV_E_NOMEM;
        if (pqv_name_normalize(b->roots[b->nroots], norm, sizeof(norm)) != 0 ||
            strcmp(norm, b->roots[b->nroots]) != 0) {
            b->nroots++;
            return error_set(PQV_E_INTEGRITY, NULL, "malformed batch body (roots)");
        }
    }
    return 0;
}

int
batch_parse_body(struct batch *b, const uint8_t *p, size_t len)
{
    struct cursor c;
    struct seg_tables t;
    char prefix[64];
    uint64_t ns, np, ne;
    int rc = 0;

    memset(&t, 0, sizeof(t));
    t.special = 1; /* decoded, then a device node refused below */
    cursor_init(&c, p, len);
    if (cursor_u8(&c) != (b->version == BATCH_VERSION_WRITER ? 2 : 1))
        return error_set(PQV_E_INTEGRITY, NULL, "unknown batch body version");
    b->time = (int64_t)cursor_be64(&c);
    if (b->version == BATCH_VERSION_WRITER &&
        (b->time_nsec = cursor_be32(&c)) > 999999999)
        goto bad;
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
    if (b->version == BATCH_VERSION_WRITER && (rc = parse_roots(b, &c)) != 0)
        goto out;
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
        /* A writer may not plant a device node that its owner restores
         * as root (docs/SECURITY.md): the batch is refused. */
        if (KIND_IS_DEVICE(e->kind)) {
            rc = error_set(PQV_E_INTEGRITY, e->name, "a writer's batch holds a device node "
                "(refused: writers store no device nodes)");
            goto out;
        }
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
/* writer_header(v, b, blob, len, off, reg, mac_end): a writer's batch:
 * its name and generation after the wrap (at *${off}), the writer found in
 * ${reg} at that generation and not revoked, and the MAC over everything
 * before the last 32 bytes checked under its key, before any
 * decapsulation. */
static int
writer_header(pqv_vault *v, struct batch *b, const uint8_t *blob, size_t len, size_t *off,
    const struct registry *reg)
{
    uint8_t key[WRITER_KEY_BYTES], mac[BATCH_MAC_BYTES];
    const struct writer *w;
    size_t nl;
    int rc;

    if (*off + 1 > len || (nl = blob[*off]) == 0 || nl > WRITER_NAME_MAX ||
        *off + 1 + nl + 8 + 16 + BATCH_MAC_BYTES > len)
        return error_set(PQV_E_INTEGRITY, NULL, "malformed batch header (writer)");
    memcpy(b->writer, blob + *off + 1, nl);
    b->writer[nl] = '\0';
    b->generation = util_load_be64(blob + *off + 1 + nl);
    *off += 1 + nl + 8;
    if (!writers_valid_name(b->writer))
        return error_set(PQV_E_INTEGRITY, NULL, "malformed batch header (writer)");
    if (reg == NULL || (w = writers_find(reg, b->writer)) == NULL)
        return error_set(PQV_E_AUTH, NULL, "from writer %s, whom this vault has not issued a "
            "credential (refused)", b->writer);
    if (w->revoked)
        return error_set(PQV_E_AUTH, NULL, "from writer %s, revoked (refused)", b->writer);
    if (w->generation != b->generation)
        return error_set(PQV_E_AUTH, NULL, "from writer %s's credential of generation %llu, "
            "replaced by generation %llu (refused)", b->writer,
            (unsigned long long)b->generation, (unsigned long long)w->generation);
    if ((rc = writers_key(v, w->name, w->generation, key)) == 0)
        rc = kdf_hmac_sha256(mac, key, sizeof(key), blob, len - BATCH_MAC_BYTES);
    util_wipe(key, sizeof(key));
    if (rc != 0)
        return rc;
    if (!util_ct_equal(mac, blob + len - BATCH_MAC_BYTES, BATCH_MAC_BYTES))
        return error_set(PQV_E_AUTH, NULL, "does not authenticate as writer %s's (altered, or "
            "not made with its credential)", b->writer);
    return 0;
}

int
batch_open(pqv_vault *v, const char *hex, const uint8_t *blob, size_t len,
    const struct registry *reg, struct batch *b)
{
    uint8_t kb[32], key[32], nonce[PQV_AEAD_NONCE_BYTES], ctx[64], *plain = NULL;
    size_t wraplen = pqv_wrap_bytes(v->config.kem), hlen = BATCH_FIXED_BYTES + wraplen, end;
    int rc;

    memset(b, 0, sizeof(*b));
    memset(nonce, 0, sizeof(nonce));
    snprintf(b->hex, sizeof(b->hex), "%s", hex);
    if (util_hex_decode(b->id, BATCH_ID_BYTES, hex) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "malformed batch name");
    if (len < hlen + 16 || memcmp(blob, BATCH_MAGIC, 4) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "not a batch (magic or length)");
    if (blob[4] != BATCH_VERSION && blob[4] != BATCH_VERSION_WRITER)
        return error_set(PQV_E_INTEGRITY, NULL, "unknown batch version %u", blob[4]);
    b->version = blob[4];
    if (blob[5] != 0 || blob[6] != 0 || blob[7] != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "malformed batch header");
    if (memcmp(blob + 8, v->config.vault_id, VAULT_ID_BYTES) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "a batch for another vault");
    if (memcmp(blob + 8 + VAULT_ID_BYTES, b->id, BATCH_ID_BYTES) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "the batch's id is not its name's (moved)");
    if (util_load_be32(blob + 8 + VAULT_ID_BYTES + BATCH_ID_BYTES) != wraplen)
        return error_set(PQV_E_INTEGRITY, NULL, "malformed batch header (key length)");
    end = len;
    if (b->version == BATCH_VERSION_WRITER) {
        if ((rc = writer_header(v, b, blob, len, &hlen, reg)) != 0)
            return rc;
        end = len - BATCH_MAC_BYTES;
    }
    if ((rc = pqv_unwrap(v->identity, blob + BATCH_FIXED_BYTES, wraplen, ctx,
             batch_wrap_context(v->config.vault_id, b->id, ctx), kb)) != 0)
        return error_set(PQV_E_INTEGRITY, NULL, "the batch's key does not open (not for this "
            "vault, or altered)");
    rc = batch_body_key(kb, key);
    util_wipe(kb, sizeof(kb));
    if (rc != 0)
        return rc;
    if ((plain = malloc(end - hlen - 16 + 1)) == NULL) {
        util_wipe(key, sizeof(key));
        return PQV_E_NOMEM;
    }
    rc = pqv_aead_open1(PQV_AEAD_CHACHA20POLY1305, key, nonce, blob, hlen, blob + hlen, end - hlen,
        plain);
    util_wipe(key, sizeof(key));
    if (rc != 0) {
        free(plain);
        return error_set(PQV_E_INTEGRITY, NULL, "the batch body does not authenticate (altered "
            "or truncated)");
    }
    rc = batch_parse_body(b, plain, end - hlen - 16);
    util_wipe(plain, end - hlen - 16);
    free(plain);
    if (rc != 0)
        batch_free(b);
    return rc;
}

int
batch_parse(const char *hex, const uint8_t *p, size_t len, size_t *n)
{
    struct batch b;
    int rc;

    memset(&b, 0, sizeof(b));
    snprintf(b.hex, sizeof(b.hex), "%s", hex);
    /* (Either body version: a writer's has roots.) */
    b.version = len > 0 && p[0] == 2 ? BATCH_VERSION_WRITER : BATCH_VERSION;
    rc = batch_parse_body(&b, p, len);
    *n = b.n;
    batch_free(&b);
    return rc;
}

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

/* batch_packs(v, b, copy): pack_one for every pack of ${b}, a few at a
 * time; the first failure (in pack order) is returned. */
int
batch_packs(pqv_vault *v, const struct batch *b, int copy)
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

int
batch_quarantine(const char *prefix, struct entry *e)
{
    char *name;
    size_t keep = 0;

    if (asprintf(&name, "%s/%s", prefix, e->name) < 0)
        return PQV_E_NOMEM;
    if (strlen(name) > PQV_NAME_MAX) {
        free(name);
        return error_set(PQV_E_INTEGRITY, e->name, "too long a name to quarantine");
    }
    free(e->name);
    e->name = name;
    e->perm &= 0777;                     /* no set-id or sticky bit */
    e->uid = (uint32_t)geteuid();         /* the importer's, not the batch's */
    e->gid = (uint32_t)getegid();
    free(e->user);
    free(e->group);
    e->user = e->group = NULL;
    for (size_t i = 0; i < e->nxattrs; i++) {
        if (strncmp(e->xattrs[i].name, "user.", 5) == 0) {
            e->xattrs[keep++] = e->xattrs[i];
            continue;
        }
        free(e->xattrs[i].name);
        free(e->xattrs[i].value);
    }
    e->nxattrs = keep;
    return 0;
}
