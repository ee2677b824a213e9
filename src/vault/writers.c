/*
 * writers.c: the registry of write-only writers and of imported batches
 * (vault/writers.h), and its encoding as segment head extensions
 * (docs/FORMAT.md section 19):
 *   writers   count, then per writer (by name): name, prefix (length and
 *             bytes each), generation, since (varints), flags (1: bit 0
 *             revoked)
 *   imported  count, then per batch (by id): id (16), epoch (varint),
 *             flags (1: bit 0 confirmed)
 * Both are critical extensions: a pqvault that does not know them must not
 * write a segment without them (it would forget revocations and let
 * replays through), so it refuses the vault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "pqvault/identity.h"
#include "util/buf.h"
#include "util/cursor.h"
#include "util/error.h"
#include "util/util.h"
#include "vault/format1.h"
#include "vault/names.h"
#include "vault/recipient.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"
#include "vault/writers.h"

static const char writer_label[] = "pqvault/v2/writer";

void
writers_free(struct registry *r)
{
    for (size_t i = 0; i < r->nw; i++)
        free(r->w[i].prefix);
    free(r->w);
    free(r->imp);
    memset(r, 0, sizeof(*r));
}

int
writers_valid_name(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > WRITER_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static int
parse_writers(struct registry *r, const uint8_t *p, size_t len)
{
    struct cursor c;
    uint64_t n;

    cursor_init(&c, p, len);
    n = cursor_varint_max(&c, cursor_left(&c) / 6);
    if (c.bad)
        return PQV_E_INTEGRITY;
    if (n > 0 && (r->w = calloc((size_t)n, sizeof(*r->w))) == NULL)
        return PQV_E_NOMEM;
    for (; r->nw < n && !c.bad; r->nw++) {
        struct writer *w = &r->w[r->nw];
        char norm[PQV_NAME_MAX + 1];
        uint64_t nl = cursor_varint_max(&c, WRITER_NAME_MAX), pl;
        const uint8_t *q = cursor_take(&c, (size_t)nl);
        if (q == NULL)
            return PQV_E_INTEGRITY;
        memcpy(w->name, q, (size_t)nl);
        w->name[nl] = '\0';
        pl = cursor_varint_max(&c, PQV_NAME_MAX);
        if ((q = cursor_take(&c, (size_t)pl)) == NULL || pl == 0 || memchr(q, 0, (size_t)pl))
            return PQV_E_INTEGRITY;
        if ((w->prefix = malloc((size_t)pl + 1)) == NULL)
            return PQV_E_NOMEM;
        memcpy(w->prefix, q, (size_t)pl);
        w->prefix[pl] = '\0';
        w->generation = cursor_varint(&c);
        w->since = cursor_varint(&c);
        w->revoked = cursor_u8(&c);
        /* Names valid and ascending, prefixes normalised, flags known. */
        if (c.bad || !writers_valid_name(w->name) || (w->revoked & ~1) != 0 ||
            pqv_name_normalize(w->prefix, norm, sizeof(norm)) != 0 ||
            strcmp(norm, w->prefix) != 0 ||
            (r->nw > 0 && strcmp(r->w[r->nw - 1].name, w->name) >= 0))
            return PQV_E_INTEGRITY;
    }
    return c.bad || cursor_left(&c) != 0 ? PQV_E_INTEGRITY : 0;
}

static int
parse_imported(struct registry *r, const uint8_t *p, size_t len)
{
    struct cursor c;
    uint64_t n;

    cursor_init(&c, p, len);
    n = cursor_varint_max(&c, cursor_left(&c) / (BATCH_ID_BYTES + 2));
    if (c.bad)
        return PQV_E_INTEGRITY;
    if (n > 0 && (r->imp = calloc((size_t)n, sizeof(*r->imp))) == NULL)
        return PQV_E_NOMEM;
    for (; r->nimp < n && !c.bad; r->nimp++) {
        struct imported *b = &r->imp[r->nimp];
        const uint8_t *q = cursor_take(&c, BATCH_ID_BYTES);
        if (q == NULL)
            return PQV_E_INTEGRITY;
        memcpy(b->id, q, BATCH_ID_BYTES);
        b->epoch = cursor_varint(&c);
        b->confirmed = cursor_u8(&c);
        if (c.bad || (b->confirmed & ~1) != 0 ||
            (r->nimp > 0 && memcmp(r->imp[r->nimp - 1].id, b->id, BATCH_ID_BYTES) >= 0))
            return PQV_E_INTEGRITY;
    }
    return c.bad || cursor_left(&c) != 0 ? PQV_E_INTEGRITY : 0;
}

int
writers_load(const struct segment *s, struct registry *r)
{
    const struct seg_ext *x;
    int rc = 0;

    memset(r, 0, sizeof(*r));
    if ((x = segment_ext(s, SEG_EXT_WRITERS)) != NULL)
        rc = parse_writers(r, x->data, x->len);
    if (rc == 0 && (x = segment_ext(s, SEG_EXT_IMPORTED)) != NULL)
        rc = parse_imported(r, x->data, x->len);
    if (rc != 0) {
        writers_free(r);
        return rc == PQV_E_NOMEM ? rc : error_set(PQV_E_INTEGRITY, NULL, "the writers or "
            "imported batches of epoch %llu are malformed", (unsigned long long)s->epoch);
    }
    return 0;
}

/* ext_take(x, type, b): ${b}'s bytes as the critical extension ${type}. */
static int
ext_take(struct seg_ext *x, uint64_t type, struct buf *b)
{
    if (b->nomem)
        return PQV_E_NOMEM;
    x->type = type;
    x->flags = SEG_EXT_CRITICAL;
    x->data = b->p;
    x->len = b->len;
    memset(b, 0, sizeof(*b));
    return 0;
}

int
writers_ext(const struct registry *r, struct seg_ext **ext, size_t *n)
{
    struct buf b = { NULL, 0, 0, 0 };
    struct seg_ext *x;
    int rc = 0;

    *ext = NULL;
    *n = 0;
    if (r->nw == 0 && r->nimp == 0)
        return 0;
    if ((x = calloc(2, sizeof(*x))) == NULL)
        return PQV_E_NOMEM;
    if (r->nw > 0) {
        buf_varint(&b, r->nw);
        for (size_t i = 0; i < r->nw; i++) {
            buf_blob(&b, r->w[i].name, strlen(r->w[i].name));
            buf_blob(&b, r->w[i].prefix, strlen(r->w[i].prefix));
            buf_varint(&b, r->w[i].generation);
            buf_varint(&b, r->w[i].since);
            buf_u8(&b, (uint8_t)(r->w[i].revoked ? 1 : 0));
        }
        rc = ext_take(&x[(*n)++], SEG_EXT_WRITERS, &b);
    }
    if (rc == 0 && r->nimp > 0) {
        buf_varint(&b, r->nimp);
        for (size_t i = 0; i < r->nimp; i++) {
            buf_bytes(&b, r->imp[i].id, BATCH_ID_BYTES);
            buf_varint(&b, r->imp[i].epoch);
            buf_u8(&b, (uint8_t)(r->imp[i].confirmed ? 1 : 0));
        }
        rc = ext_take(&x[(*n)++], SEG_EXT_IMPORTED, &b);
    }
    buf_wipe_free(&b);
    if (rc != 0) {
        segment_ext_free(x, *n);
        *n = 0;
        return rc;
    }
    *ext = x;
    return 0;
}

struct writer *
writers_find(const struct registry *r, const char *name)
{
    for (size_t i = 0; i < r->nw; i++)
        if (strcmp(r->w[i].name, name) == 0)
            return &r->w[i];
    return NULL;
}

int
writers_add(struct registry *r, const char *name, const char *prefix, uint64_t epoch,
    struct writer **out)
{
    struct writer *w = writers_find(r, name);
    char *p;
    size_t at;

    if (!writers_valid_name(name))
        return error_set(PQV_E_INVAL, name, "a writer's name is 1 to 64 letters, digits, '.', "
            "'_' or '-'");
    if ((p = strdup(prefix)) == NULL)
        return PQV_E_NOMEM;
    if (w != NULL) {
        /* Issued again: a new generation, a new key. */
        free(w->prefix);
        w->prefix = p;
        w->generation++;
        w->since = epoch;
        w->revoked = 0;
        *out = w;
        return 0;
    }
    struct writer *grown = realloc(r->w, (r->nw + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(p);
        return PQV_E_NOMEM;
    }
    r->w = grown;
    for (at = 0; at < r->nw && strcmp(r->w[at].name, name) < 0; at++)
        ;
    memmove(&r->w[at + 1], &r->w[at], (r->nw - at) * sizeof(*r->w));
    memset(&r->w[at], 0, sizeof(r->w[at]));
    snprintf(r->w[at].name, sizeof(r->w[at].name), "%s", name);
    r->w[at].prefix = p;
    r->w[at].generation = 1;
    r->w[at].since = epoch;
    r->nw++;
    *out = &r->w[at];
    return 0;
}

static int
compare_imported(const void *key, const void *elt)
{
    return memcmp(key, ((const struct imported *)elt)->id, BATCH_ID_BYTES);
}

struct imported *
writers_imported(const struct registry *r, const uint8_t id[BATCH_ID_BYTES])
{
    return util_search(id, r->imp, r->nimp, sizeof(*r->imp), compare_imported);
}

int
writers_record(struct registry *r, const uint8_t id[BATCH_ID_BYTES], uint64_t epoch)
{
    struct imported *grown;
    size_t at;

    if (writers_imported(r, id) != NULL)
        return 0;
    if ((grown = realloc(r->imp, (r->nimp + 1) * sizeof(*grown))) == NULL)
        return PQV_E_NOMEM;
    r->imp = grown;
    for (at = 0; at < r->nimp && memcmp(r->imp[at].id, id, BATCH_ID_BYTES) < 0; at++)
        ;
    memmove(&r->imp[at + 1], &r->imp[at], (r->nimp - at) * sizeof(*r->imp));
    memset(&r->imp[at], 0, sizeof(r->imp[at]));
    memcpy(r->imp[at].id, id, BATCH_ID_BYTES);
    r->imp[at].epoch = epoch;
    r->nimp++;
    return 0;
}

int
writers_key(const pqv_vault *v, const char *name, uint64_t generation,
    uint8_t key[WRITER_KEY_BYTES])
{
    uint8_t root[32], info[sizeof(writer_label) - 1 + 8 + WRITER_NAME_MAX];
    size_t n = strlen(name), off = sizeof(writer_label) - 1;
    int rc;

    if (v->identity == NULL || n > WRITER_NAME_MAX)
        return PQV_E_INVAL;
    if ((rc = pqv_identity_derive_key(v->identity, "writers", root)) != 0)
        return rc;
    memcpy(info, writer_label, off);
    util_store_be64(info + off, generation);
    memcpy(info + off + 8, name, n);
    rc = kdf_hkdf_expand_sha256(key, WRITER_KEY_BYTES, root, info, off + 8 + n);
    util_wipe(root, sizeof(root));
    return rc;
}

/* ---- the owner's commands: one epoch each ---- */

/* registry_epoch(v, change, ctx, epoch): an epoch whose only news is the
 * registry as ${change} leaves it (unlocked, writer lock). */
static int
registry_epoch(pqv_vault *v, int (*change)(struct registry *r, uint64_t epoch, void *ctx),
    void *ctx)
{
    struct registry r;
    struct state st;
    struct seg_ext *ext = NULL;
    size_t next = 0;
    struct txn t;
    int rc;

    if ((rc = vault_require_writer(v)) != 0 || (rc = upgrade_if_needed(v, NULL, NULL)) != 0)
        return rc;
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    memset(&r, 0, sizeof(r));
    if ((rc = writers_load(&st.segs[st.nsegs - 1], &r)) == 0 &&
        (rc = change(&r, st.epoch + 1, ctx)) == 0 && (rc = writers_ext(&r, &ext, &next)) == 0 &&
        (rc = txn_begin(v, &st, &t)) == 0) {
        txn_set_ext(&t, ext, next);
        ext = NULL;
        rc = txn_finish(&t, TXN_EVEN_EMPTY, NULL, NULL);
        txn_free(&t);
    }
    segment_ext_free(ext, next);
    writers_free(&r);
    state_free(&st);
    return rc;
}

struct add_ctx {
    const char *name, *prefix;       /* prefix NULL: kept, or the name */
    struct recipient_info *ri;
};

static int
add_change(struct registry *r, uint64_t epoch, void *ctx)
{
    struct add_ctx *a = ctx;
    struct writer *w = writers_find(r, a->name);
    int rc;

    /* Issued again without a prefix: the one it had. */
    if (a->prefix == NULL)
        a->prefix = w != NULL ? w->prefix : a->name;
    for (size_t i = 0; i < r->nw; i++)
        if (strcmp(r->w[i].name, a->name) != 0 && !r->w[i].revoked &&
            (names_under(a->prefix, r->w[i].prefix) || names_under(r->w[i].prefix, a->prefix)))
            return error_set(PQV_E_EXISTS, a->prefix, "overlaps the prefix %s of writer %s: "
                "writers write under prefixes of their own", r->w[i].prefix, r->w[i].name);
    if ((rc = writers_add(r, a->name, a->prefix, epoch, &w)) != 0)
        return rc;
    snprintf(a->ri->writer, sizeof(a->ri->writer), "%s", w->name);
    snprintf(a->ri->prefix, sizeof(a->ri->prefix), "%s", w->prefix);
    a->ri->generation = w->generation;
    a->ri->is_writer = 1;
    return 0;
}

int
pqv_vault_writer_add(pqv_vault *v, const char *name, const char *prefix, char **text, size_t *len)
{
    char norm[PQV_NAME_MAX + 1];
    struct recipient_info ri;
    struct add_ctx a;
    int rc;

    if (v == NULL || name == NULL || text == NULL || len == NULL)
        return PQV_E_INVAL;
    *text = NULL;
    *len = 0;
    if (!writers_valid_name(name))
        return error_set(PQV_E_INVAL, name, "a writer's name is 1 to 64 letters, digits, '.', "
            "'_' or '-'");
    if ((rc = pqv_name_normalize(prefix != NULL ? prefix : name, norm, sizeof(norm))) != 0)
        return rc;
    for (const char *c = norm; prefix != NULL && *c != '\0'; c++)
        if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e)
            return error_set(PQV_E_INVAL, norm, "a writer's prefix is printable ASCII without "
                "spaces");
    memset(&ri, 0, sizeof(ri));
    a.name = name;
    a.prefix = prefix != NULL ? norm : NULL;
    a.ri = &ri;
    if ((rc = registry_epoch(v, add_change, &a)) != 0)
        return rc;
    /* Committed: the credential of this generation. */
    if ((rc = writers_key(v, ri.writer, ri.generation, ri.key)) == 0)
        rc = recipient_text(v, &ri, text, len);
    util_wipe(ri.key, sizeof(ri.key));
    return rc;
}

static int
revoke_change(struct registry *r, uint64_t epoch, void *ctx)
{
    struct writer *w = writers_find(r, ctx);

    (void)epoch;
    if (w == NULL)
        return error_set(PQV_E_NOTFOUND, ctx, "no such writer");
    if (w->revoked)
        return error_set(PQV_E_INVAL, ctx, "revoked already");
    w->revoked = 1;
    return 0;
}

int
pqv_vault_writer_revoke(pqv_vault *v, const char *name)
{
    if (v == NULL || name == NULL)
        return PQV_E_INVAL;
    return registry_epoch(v, revoke_change, (void *)name);
}

int
pqv_vault_writers(pqv_vault *v, struct pqv_writer_info **out, size_t *n)
{
    struct registry r;
    struct state st;
    int rc;

    if (v == NULL || out == NULL || n == NULL)
        return PQV_E_INVAL;
    *out = NULL;
    *n = 0;
    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (v->config.version < 2)
        return 0;
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    if ((rc = writers_load(&st.segs[st.nsegs - 1], &r)) == 0 && r.nw > 0 &&
        (*out = calloc(r.nw, sizeof(**out))) == NULL)
        rc = PQV_E_NOMEM;
    for (size_t i = 0; rc == 0 && i < r.nw; i++) {
        struct pqv_writer_info *w = &(*out)[i];
        snprintf(w->name, sizeof(w->name), "%s", r.w[i].name);
        snprintf(w->prefix, sizeof(w->prefix), "%s", r.w[i].prefix);
        w->generation = r.w[i].generation;
        w->since = r.w[i].since;
        w->revoked = r.w[i].revoked;
        (*n)++;
    }
    writers_free(&r);
    state_free(&st);
    return rc;
}
