/*
 * inbox.c: write-only adds (docs/FORMAT.md section 18, docs/DESIGN.md
 * section 6).  A writer that holds only the vault's recipient (no key
 * file, no passphrase) adds files as one batch: the vault's sink becomes
 * the batch (txn.h): its packs go under "inbox/<B>/", and its commit point
 * "inbox/<B>.batch" is written create-only once every pack is durable
 * (batch.c seals it under a key from one hybrid encapsulation to the
 * vault's identity).  It reads nothing but the config and writes nothing
 * outside inbox/.  Also here: the listing of the inbox and check's report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "pqvault/identity.h"
#include "util/buf.h"
#include "util/util.h"
#include "vault/batch.h"
#include "vault/inbox.h"
#include "vault/recipient.h"
#include "vault/writers.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

/* A batch being written. */
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
    struct recipient_info cred;  /* a writer's credential (cred.is_writer), else zero */
    char **roots;                /* the operands' stored names (a writer's) */
    size_t nroots;
};

/* inbox_free(ctx): a writer's batch in progress (the sink's context). */
static void
inbox_free(void *ctx)
{
    struct inbox *ib = ctx;

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
    free(ib->cred.pub);
    for (size_t i = 0; i < ib->nroots; i++)
        free(ib->roots[i]);
    free(ib->roots);
    util_wipe(ib, sizeof(*ib));
    free(ib);
}

/* inbox_pack_name(v, id, out): where a write-only writer puts pack ${id}:
 * "inbox/<batch hex>/<pack hex>". */
static void
inbox_pack_name(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX])
{
    char hex[2 * PACK_ID_BYTES + 1];

    util_hex_encode(hex, id, PACK_ID_BYTES);
    snprintf(out, STORAGE_NAME_MAX, INBOX_DIR "/%s/%s", ((const struct inbox *)v->sink_ctx)->hex,
        hex);
}

/* A writer may always write (into its own batch): it holds no lock, since
 * it changes nothing the owner or another writer reads. */
static int
writer_ready(const pqv_vault *v)
{
    (void)v;
    return 0;
}

static int
writer_prepare(pqv_vault *v, pqv_report_fn report, void *ctx)
{
    (void)v;
    (void)report;
    (void)ctx;
    return 0; /* never upgrades: it cannot read the catalogue */
}

/* writer_open_state(v, st): the writer reads nothing of the vault: its
 * state is empty (every name is new to it; conflicts are resolved at
 * import). */
static int
writer_open_state(pqv_vault *v, struct state *st)
{
    (void)v;
    memset(st, 0, sizeof(*st));
    st->format = 2;
    st->loaded = 1;
    return 0;
}

static int inbox_take(pqv_vault *v, const struct txn *t);

/* writer_prefix(v): where a writer with a credential stores everything. */
static const char *
writer_prefix(const pqv_vault *v)
{
    const struct inbox *ib = v->sink_ctx;

    return ib->cred.is_writer ? ib->cred.prefix : NULL;
}

/* writer_root(v, name): an operand's stored name, for the batch's roots
 * (its newer state replaces what the vault holds below it). */
static int
writer_root(pqv_vault *v, const char *name)
{
    struct inbox *ib = v->sink_ctx;
    char **grown;

    for (size_t i = 0; i < ib->nroots; i++)
        if (strcmp(ib->roots[i], name) == 0)
            return 0;
    if ((grown = realloc(ib->roots, (ib->nroots + 1) * sizeof(*grown))) == NULL)
        return PQV_E_NOMEM;
    ib->roots = grown;
    if ((ib->roots[ib->nroots] = strdup(name)) == NULL)
        return PQV_E_NOMEM;
    ib->nroots++;
    return 0;
}

static const struct txn_sink inbox_sink = {
    .ready = writer_ready,
    .prepare = writer_prepare,
    .open_state = writer_open_state,
    .pack_name = inbox_pack_name,
    .take = inbox_take,
    .after = NULL,
    .release = inbox_free,
    .prefix = writer_prefix,
    .root = writer_root,
    .command_key = 0,     /* file keys sealed in the batch, under K_b */
    .content_hashes = 0,  /* no key("dedup") without the seed */
    .devices = 0,         /* FIFOs, but no device nodes (docs/SECURITY.md) */
    .uses_keyfile = 0,
};

int
pqv_vault_inbox_begin(pqv_vault *v, const uint8_t *recipient, size_t len)
{
    struct inbox *ib;
    struct recipient_info ri;
    uint8_t *vault_id, *pub = NULL, hash[32], ctx[64];
    size_t publen;
    struct kdf_part part;
    int rc;

    if (v == NULL || recipient == NULL || v->sink != &txn_owner_sink)
        return PQV_E_INVAL;
    if (v->config.version < 2)
        return error_set(PQV_E_UNSUPPORTED, NULL, "write-only adds need a format-2 vault "
            "(its owner upgrades it first)");
    if ((rc = recipient_parse(recipient, len, &ri)) != 0)
        return rc;
    vault_id = ri.vault_id;
    pub = ri.pub;
    publen = ri.publen;
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
    ib->cred = ri;              /* (its key is wiped with the inbox) */
    ib->cred.pub = NULL;
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
    if ((rc = pqv_wrap(ib->recipient, ib->key, ctx, batch_wrap_context(v->config.vault_id, ib->id, ctx),
             ib->wrap)) != 0)
        goto fail;
    v->sink = &inbox_sink;
    v->sink_ctx = ib;
    goto out;
fail:
    inbox_free(ib);
out:
    util_wipe(ri.key, sizeof(ri.key));
    free(pub);
    return rc;
}

/* inbox_take(v, t): a write-only writer's transaction "commits" into its
 * batch: its entries and packs are copied there (written by
 * pqv_vault_inbox_commit). */
static int
inbox_take(pqv_vault *v, const struct txn *t)
{
    struct inbox *ib = v->sink_ctx;

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
    struct buf blob = { NULL, 0, 0, 0 };
    char sname[STORAGE_NAME_MAX];
    int rc = 0;

    if (v == NULL || id == NULL || v->sink != &inbox_sink || (ib = v->sink_ctx)->committed)
        return PQV_E_INVAL;
    id[0] = '\0';
    if (ib->n == 0)
        return 0;
    for (size_t i = 0; i < ib->n && rc == 0; i++) {
        struct entry *e = ib->entries[i];
        if ((rc = set_origin(e, ib->hex)) == 0 && e->kind == KIND_FILE &&
            (rc = entry_check_size(e->name, e->size)) == 0) {
#ifdef PQV_TEST_HOOKS
            /* The test build may forge a file's size (what import refuses). */
            const char *forged = getenv("PQVAULT_TEST_ENTRY_SIZE");
            if (forged != NULL)
                e->size = strtoull(forged, NULL, 10);
#endif
        }
    }
    if (rc == 0 && ib->cred.is_writer) {
        struct batch_writer w = { ib->cred.writer, ib->cred.generation, ib->cred.key, ib->roots,
            ib->nroots };
        rc = batch_seal(v, ib->id, ib->key, ib->wrap, ib->wraplen, ib->entries, ib->n, ib->packs,
            ib->npacks, &w, &blob);
    } else if (rc == 0) {
        rc = batch_seal(v, ib->id, ib->key, ib->wrap, ib->wraplen, ib->entries, ib->n, ib->packs,
            ib->npacks, NULL, &blob);
    }
    if (rc != 0)
        goto out;
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
    buf_wipe_free(&blob);
    return rc;
}

/* is_hex(s, n): exactly ${n} lowercase hex digits. */
static int
is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}


int
inbox_classify(const char *name, char hex[2 * BATCH_ID_BYTES + 1])
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

/* load_registry(v, reg): the writers the chain registers (none for a
 * format-1 vault). */
static int
load_registry(pqv_vault *v, struct registry *reg)
{
    struct state st;
    int rc;

    memset(reg, 0, sizeof(*reg));
    if (v->config.version < 2)
        return 0;
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    rc = writers_load(&st.segs[st.nsegs - 1], reg);
    state_free(&st);
    return rc;
}

/* open_one(v, reg, item, b): batch ${item} read and opened as import
 * would: item->state DAMAGED or REFUSED (why said) and 1 returned, or 0
 * with ${b} open. */
static int
open_one(pqv_vault *v, const struct registry *reg, struct pqv_inbox_batch *item, struct batch *b)
{
    char sname[STORAGE_NAME_MAX];
    const struct imported *rec;
    uint8_t *blob;
    size_t len;
    int rc;

    snprintf(sname, sizeof(sname), INBOX_DIR "/%s.batch", item->id);
    rc = v->storage->ops->get(v->storage, sname, &blob, &len, MAX_BATCH_BYTES);
    if (rc == PQV_E_NOTFOUND)
        return 1; /* imported meanwhile */
    if (rc == 0) {
        rc = batch_open(v, item->id, blob, len, reg, b);
        free(blob);
    }
    if (rc == 0 && (rc = batch_packs(v, b, 0)) != 0)
        batch_free(b);
    if (rc == PQV_E_INTEGRITY || rc == PQV_E_AUTH) {
        item->state = rc == PQV_E_AUTH ? PQV_INBOX_REFUSED : PQV_INBOX_DAMAGED;
        snprintf(item->why, sizeof(item->why), "%.255s", pqv_error_last()->reason);
        pqv_error_clear();
        return 1;
    }
    if (rc != 0)
        return rc;
    if ((rec = writers_imported(reg, b->id)) != NULL && rec->confirmed) {
        item->state = PQV_INBOX_REFUSED;
        snprintf(item->why, sizeof(item->why), "replayed: imported in epoch %llu",
            (unsigned long long)rec->epoch);
    }
    if (b->writer[0] != '\0')
        snprintf(item->writer, sizeof(item->writer), "%s", b->writer);
    {
        const struct writer *w = b->writer[0] != '\0' ? writers_find(reg, b->writer) : NULL;
        if (w != NULL)
            snprintf(item->prefix, sizeof(item->prefix), "%s", w->prefix);
        else
            snprintf(item->prefix, sizeof(item->prefix), "quarantine/%.16s", item->id);
    }
    item->time = b->time;
    item->time_nsec = b->time_nsec;
    item->entries = (int64_t)b->n;
    return 0;
}

/* open_listed(v, list, k): every pending batch of the listing opened. */
static int
open_listed(pqv_vault *v, struct pqv_inbox_batch *list, size_t k)
{
    struct registry reg;
    int rc;

    if ((rc = load_registry(v, &reg)) != 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        struct batch b;
        if (list[i].state != PQV_INBOX_PENDING)
            continue;
        if ((rc = open_one(v, &reg, &list[i], &b)) == 0)
            batch_free(&b);
        else if (rc == 1)
            rc = 0;
    }
    writers_free(&reg);
    return rc;
}

int
pqv_vault_inbox_entries(pqv_vault *v, const char *id, struct pqv_entry **entries, size_t *n)
{
    struct pqv_inbox_batch item;
    struct registry reg;
    struct batch b;
    char hex[2 * BATCH_ID_BYTES + 1], sname[STORAGE_NAME_MAX];
    int rc;

    if (v == NULL || id == NULL || entries == NULL || n == NULL)
        return PQV_E_INVAL;
    *entries = NULL;
    *n = 0;
    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    snprintf(sname, sizeof(sname), INBOX_DIR "/%s.batch", id);
    if (strlen(id) != 2 * BATCH_ID_BYTES || inbox_classify(sname, hex) != IN_BATCH)
        return error_set(PQV_E_INVAL, id, "not a batch id (32 hex digits)");
    memset(&item, 0, sizeof(item));
    snprintf(item.id, sizeof(item.id), "%s", hex);
    if ((rc = load_registry(v, &reg)) != 0)
        return rc;
    rc = open_one(v, &reg, &item, &b);
    writers_free(&reg);
    if (rc == 1)
        return item.why[0] != '\0' ? error_set(PQV_E_INTEGRITY, sname, "%s", item.why)
                                   : error_set(PQV_E_NOTFOUND, sname, "not in the inbox");
    if (rc != 0)
        return rc;
    if (b.n > 0 && (*entries = calloc(b.n, sizeof(**entries))) == NULL)
        rc = PQV_E_NOMEM;
    for (size_t i = 0; rc == 0 && i < b.n; i++) {
        struct entry *e = &b.entries[i];
        /* As import stores it: a quarantined batch's entries below its
         * quarantine prefix, stripped. */
        if (b.writer[0] == '\0')
            rc = batch_quarantine(item.prefix, e);
        if (rc == 0 && (rc = list_public_entry(e, &(*entries)[i])) == 0)
            (*n)++;
    }
    if (rc != 0) {
        pqv_entries_free(*entries, *n);
        *entries = NULL;
        *n = 0;
    }
    batch_free(&b);
    return rc;
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
        int cls = inbox_classify(names.names[i], hex);
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
    /* Unlocked: each batch opened (writer, entries, time, damage). */
    if (rc == 0 && k > 0 && v->identity != NULL && pqv_identity_has_secret(v->identity))
        rc = open_listed(v, list, k);
    if (rc != 0) {
        free(list);
        return rc;
    }
    *out = list;
    *n = k;
    return 0;
}

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
        if (list[i].state == PQV_INBOX_DAMAGED || list[i].state == PQV_INBOX_REFUSED) {
            res->inbox++;
            res->inbox_damaged++;
            vault_report(report, ctx, PQV_REPORT_WARNING, sname, "inbox batch %s (%s; import "
                "leaves it in place)", list[i].state == PQV_INBOX_REFUSED ? "refused" :
                "does not open", list[i].why[0] ? list[i].why : "altered, truncated or another "
                "vault's");
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
