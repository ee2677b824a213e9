/*
 * vault.c: a vault structure's life: opened over its storages (config and
 * key file read), unlocked (Argon2id, identity, config MAC), writer-locked,
 * closed (secrets wiped).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crypto/cpu.h"
#include "crypto/kdf.h"
#include "util/fsutil.h"
#include "util/pool.h"
#include "util/util.h"
#include "vault/config.h"
#include "vault/format1.h"
#include "vault/readahead.h"
#include "vault/segment_cache.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

const char *
pqv_default_kem(void)
{
    return cpu_has_aes_clmul() ? "FrodoKEM-976-AES" : "FrodoKEM-976-SHAKE";
}

void
vault_report(pqv_report_fn fn, void *ctx, int level, const char *subject, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (fn == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fn(ctx, level, subject, msg);
}

int
vault_require_unlocked(const pqv_vault *v)
{
    if (v == NULL)
        return PQV_E_INVAL;
    if (v->identity == NULL)
        return error_set(PQV_E_INVAL, NULL, "vault is not unlocked");
    return 0;
}

int
vault_require_writer(const pqv_vault *v)
{
    int rc;

    rc = vault_require_unlocked(v);
    if (rc == 0 && !v->locked)
        rc = error_set(PQV_E_INVAL, NULL, "vault writer lock not held");
    return rc;
}

struct pool *
vault_pool(pqv_vault *v)
{
    if (v->pool == NULL)
        v->pool = pool_new(0);
    return v->pool;
}

int
pqv_vault_slot(const pqv_vault *v)
{
    return v == NULL ? -1 : v->slot;
}

int
pqv_vault_set_report(pqv_vault *v, pqv_report_fn fn, void *ctx)
{
    if (v == NULL)
        return PQV_E_INVAL;
    v->report = fn;
    v->report_ctx = ctx;
    return 0;
}

int
pqv_vault_set_kdf_limit(pqv_vault *v, const struct pqv_kdf_limit *limit)
{
    if (v == NULL)
        return PQV_E_INVAL;
    if (limit != NULL && (limit->m_kib == 0 || limit->t_cost == 0))
        return error_set(PQV_E_INVAL, NULL, "an Argon2id limit of zero accepts no slot");
    v->kdf_limit = limit != NULL ? *limit : pqv_kdf_limit_default;
    return 0;
}

const pqv_keyfile *
pqv_vault_keyfile(const pqv_vault *v)
{
    return v == NULL ? NULL : v->keyfile;
}

/* key_location_open(v, dir, keyfile, optional): where the key file lives:
 * the vault's own storage ("keyfile") by default, else a local storage
 * rooted at the directory of ${keyfile}.  A missing directory is, with
 * ${optional}, a missing key file (v->key_storage NULL, v->keyfile_status
 * PQV_E_NOTFOUND). */
static int
key_location_open(pqv_vault *v, const char *dir, const char *keyfile, int optional)
{
    char kdir[4096];
    const char *base;
    int rc;

    if (keyfile == NULL) {
        v->key_storage = v->storage;
        if ((v->key_name = strdup(KEYFILE_NAME)) == NULL ||
            asprintf(&v->keyfile_path, "%s/%s", dir, KEYFILE_NAME) < 0) {
            v->keyfile_path = NULL;
            return PQV_E_NOMEM;
        }
        return 0;
    }
    base = strrchr(keyfile, '/');
    base = base != NULL ? base + 1 : keyfile;
    if (*base == '\0')
        return error_set(PQV_E_INVAL, keyfile, "not a file name");
    fsutil_dirname(keyfile, kdir, sizeof(kdir));
    if ((v->keyfile_path = strdup(keyfile)) == NULL || (v->key_name = strdup(base)) == NULL)
        return PQV_E_NOMEM;
    if ((rc = pqv_storage_local_open(&v->key_storage, kdir, 0)) != 0) {
        v->key_storage = NULL;
        if (rc != PQV_E_NOVAULT)
            return rc;
        rc = error_set(PQV_E_NOTFOUND, kdir, "no such directory");
        if (!optional)
            return rc;
        v->keyfile_status = rc;
        error_save(&v->keyfile_error);
        pqv_error_clear();
        return 0;
    }
    v->own_key_storage = 1;
    return 0;
}

/* keyfile_load(v): read and parse the key file. */
static int
keyfile_load(pqv_vault *v)
{
    uint8_t *buf;
    size_t len;
    int rc;

    rc = v->key_storage->ops->get(v->key_storage, v->key_name, &buf, &len, PQV_KEYFILE_MAX_BYTES);
    if (rc == PQV_E_NOTFOUND)
        return error_set(rc, v->keyfile_path, "key file not found");
    if (rc != 0)
        return rc;
    rc = pqv_keyfile_parse(&v->keyfile, buf, len);
    if (rc == 0)
        rc = kdf_sha256(v->keyfile_hash, buf, len);
    free(buf);
    if (rc == PQV_E_INTEGRITY || rc == PQV_E_UNSUPPORTED) {
        error_subject(rc, v->keyfile_path);
    }
    return rc;
}

/* vault_store_keyfile(v, kf): write ${kf} atomically and durably. */
int
vault_store_keyfile(pqv_vault *v, const pqv_keyfile *kf)
{
    uint8_t *buf;
    size_t len;
    int rc;

    if ((rc = pqv_keyfile_serialize(kf, &buf, &len)) != 0)
        return rc;
    rc = v->key_storage->ops->put(v->key_storage, v->key_name, buf, len);
    if (rc == 0)
        rc = kdf_sha256(v->keyfile_hash, buf, len);
    free(buf);
    if (rc == 0)
        rc = v->key_storage->ops->barrier(v->key_storage);
    return rc;
}

/* vault_new_over(out, storage, key_storage, key_name): a vault structure over
 * the given storages (not owned). */
int
vault_new_over(pqv_vault **out, pqv_storage *storage, pqv_storage *key_storage, const char *key_name)
{
    pqv_vault *v;

    if ((v = calloc(1, sizeof(*v))) == NULL)
        return PQV_E_NOMEM;
    util_pin_memory(v, sizeof(*v)); /* holds the seed and catalogue keys */
    v->slot = -1;
    v->kdf_limit = pqv_kdf_limit_default;
    v->sink = &txn_owner_sink;
    v->storage = storage;
    v->key_storage = key_storage != NULL ? key_storage : storage;
    v->readahead = readahead_new(storage); /* (NULL: reads go straight) */
    if ((v->key_name = strdup(key_name != NULL ? key_name : KEYFILE_NAME)) == NULL ||
        (v->keyfile_path = strdup(v->key_name)) == NULL || (v->dir = strdup("")) == NULL) {
        pqv_vault_close(v);
        return PQV_E_NOMEM;
    }
    *out = v;
    return 0;
}

/* new_local(out, dir, keyfile, create, flags): vault_new_local, the key
 * file's directory optional with PQV_OPEN_KEYFILE_OPTIONAL. */
static int
new_local(pqv_vault **out, const char *dir, const char *keyfile, int create, unsigned flags)
{
    pqv_vault *v;
    int rc;

    if ((v = calloc(1, sizeof(*v))) == NULL)
        return PQV_E_NOMEM;
    util_pin_memory(v, sizeof(*v)); /* holds the seed and catalogue keys */
    v->slot = -1;
    v->kdf_limit = pqv_kdf_limit_default;
    v->sink = &txn_owner_sink;
    v->own_storage = 1;
    if ((v->dir = strdup(dir)) == NULL) {
        rc = PQV_E_NOMEM;
        goto err;
    }
    if ((rc = pqv_storage_local_open(&v->storage, dir, create)) != 0) {
        v->storage = NULL;
        if (rc == PQV_E_NOVAULT)
            error_set(rc, dir, "no vault here");
        goto err;
    }
    if ((rc = key_location_open(v, dir, keyfile,
             (flags & (PQV_OPEN_KEYFILE_OPTIONAL | PQV_OPEN_NO_KEYFILE)) != 0)) != 0)
        goto err;
    /* Its local state is this place's (pqv_vault_set_location). */
    v->location = realpath(dir, NULL);
    *out = v;
    return 0;
err:
    pqv_vault_close(v);
    return rc;
}

/* vault_new_local(out, dir, keyfile, create): a vault structure over the
 * local directory ${dir} (owned). */
int
vault_new_local(pqv_vault **out, const char *dir, const char *keyfile, int create)
{
    return new_local(out, dir, keyfile, create, 0);
}

/* vault_derive_keys(v): the symmetric keys of the catalogue and config. */
int
vault_derive_keys(pqv_vault *v, uint8_t config_key[32])
{
    int rc;

    if ((rc = pqv_identity_derive_key(v->identity, "catalogue/names", v->names_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "catalogue/records", v->records_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "catalogue/segments", v->segments_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "state", v->state_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "dedup", v->dedup_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "chunks/id", v->chunk_id_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "chunks/data", v->chunk_data_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "chunks/boundaries", v->chunker_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "packs", v->packs_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "config", config_key)) != 0)
        return rc;
    return 0;
}

int
vault_reload_config(pqv_vault *v)
{
    struct vault_config c;
    uint8_t *text, config_key[32];
    size_t len;
    int rc, newer = 0;

    memset(&c, 0, sizeof(c));
    if ((rc = v->storage->ops->get(v->storage, CONFIG_NAME, &text, &len, MAX_CONFIG_BYTES)) != 0)
        return rc == PQV_E_NOTFOUND || rc == PQV_E_INTEGRITY ? 0 : rc;
    rc = config_parse(&c, text, len);
    free(text);
    if (rc == 0 && c.version > v->config.version && c.kem == v->config.kem &&
        memcmp(c.vault_id, v->config.vault_id, VAULT_ID_BYTES) == 0 &&
        util_ct_equal(c.identity_hash, v->config.identity_hash, 32) &&
        (v->identity == NULL /* (verified at unlock, as the one read at open) */ ||
            (pqv_identity_derive_key(v->identity, "config", config_key) == 0 &&
                config_verify_mac(&c, config_key) == 0))) {
        config_clear(&v->config);
        v->config = c;
        newer = 1;
    } else {
        config_clear(&c);
    }
    util_wipe(config_key, sizeof(config_key));
    pqv_error_clear(); /* not newer: the caller says why that matters */
    return newer;
}

/* keyfile_optional(rc): whether a key file that failed to load with ${rc}
 * may be absent for PQV_OPEN_KEYFILE_OPTIONAL: missing, damaged or of
 * another version (not an I/O or memory failure). */
static int
keyfile_optional(int rc)
{
    return rc == PQV_E_NOTFOUND || rc == PQV_E_INTEGRITY || rc == PQV_E_UNSUPPORTED;
}

/* vault_load(v, flags): read the config and key file of ${v}. */
static int
vault_load(pqv_vault *v, unsigned flags)
{
    uint8_t *text;
    size_t len;
    int rc;

    rc = v->storage->ops->get(v->storage, CONFIG_NAME, &text, &len, MAX_CONFIG_BYTES);
    if (rc == PQV_E_NOTFOUND)
        return error_set(PQV_E_NOVAULT, v->dir, "no vault here (no config)");
    if (rc == PQV_E_INTEGRITY)
        return error_set(rc, NULL, "config: too large or not a regular file");
    if (rc != 0)
        return rc;
    rc = config_parse(&v->config, text, len);
    free(text);
    if (rc != 0)
        return rc;
    if (flags & PQV_OPEN_NO_KEYFILE) {
        /* A write-only writer: the key file is never read. */
        v->keyfile_status = PQV_E_NOTFOUND;
        error_set(PQV_E_NOTFOUND, v->keyfile_path, "key file not read (write-only writer)");
        error_save(&v->keyfile_error);
        pqv_error_clear();
        return 0;
    }
    if (v->key_storage == NULL) {
        /* Its directory is missing (key_location_open, optional). */
        if (flags & PQV_OPEN_KEYFILE_OPTIONAL)
            return 0;
        error_restore(&v->keyfile_error);
        return v->keyfile_status;
    }
    if ((rc = keyfile_load(v)) != 0) {
        if (!(flags & PQV_OPEN_KEYFILE_OPTIONAL) || !keyfile_optional(rc))
            return rc;
        v->keyfile_status = rc;
        error_save(&v->keyfile_error);
        pqv_error_clear();
        return 0;
    }
    /* A key file whose KEM differs from the config's is told apart from a
     * damaged config at unlock (config_identity_damaged). */
    return 0;
}

int
pqv_vault_open_flags(pqv_vault **out, const char *dir, const char *keyfile, unsigned flags)
{
    pqv_vault *v;
    int rc;

    if (out == NULL || dir == NULL ||
        (flags & ~(unsigned)(PQV_OPEN_KEYFILE_OPTIONAL | PQV_OPEN_NO_KEYFILE)) != 0)
        return PQV_E_INVAL;
    if ((rc = new_local(&v, dir, keyfile, 0, flags)) != 0)
        return rc;
    if ((rc = vault_load(v, flags)) != 0) {
        pqv_vault_close(v);
        return rc;
    }
    *out = v;
    return 0;
}

int
pqv_vault_open(pqv_vault **out, const char *dir, const char *keyfile)
{
    return pqv_vault_open_flags(out, dir, keyfile, 0);
}

int
pqv_vault_open_storage_flags(pqv_vault **out, pqv_storage *storage, pqv_storage *key_storage,
    const char *key_name, unsigned flags)
{
    pqv_vault *v;
    int rc;

    if (out == NULL || storage == NULL ||
        (flags & ~(unsigned)(PQV_OPEN_KEYFILE_OPTIONAL | PQV_OPEN_NO_KEYFILE)) != 0)
        return PQV_E_INVAL;
    if ((rc = vault_new_over(&v, storage, key_storage, key_name)) != 0)
        return rc;
    if ((rc = vault_load(v, flags)) != 0) {
        pqv_vault_close(v);
        return rc;
    }
    *out = v;
    return 0;
}

int
pqv_vault_open_storage(pqv_vault **out, pqv_storage *storage, pqv_storage *key_storage,
    const char *key_name)
{
    return pqv_vault_open_storage_flags(out, storage, key_storage, key_name, 0);
}

int
pqv_vault_keyfile_status(const pqv_vault *v, struct pqv_error *err)
{
    if (v == NULL)
        return PQV_E_INVAL;
    if (err != NULL) {
        if (v->keyfile_status != 0)
            *err = v->keyfile_error.e;
        else
            memset(err, 0, sizeof(*err));
    }
    return v->keyfile_status;
}

/* config_identity_damaged(v): whether the config, with this key file's
 * identity hash and KEM put in, carries a valid MAC under this key file's
 * config key: then the config's identity or kem line was damaged, and the
 * key file is this vault's (not another vault's). */
static int
config_identity_damaged(pqv_vault *v)
{
    struct vault_config c = v->config, parsed;
    uint8_t config_key[32], *text = NULL;
    size_t len;
    int damaged = 0;

    memcpy(c.identity_hash, pqv_identity_public_hash(v->identity), 32);
    c.kem = pqv_identity_kem(v->identity);
    if (vault_derive_keys(v, config_key) == 0 && config_build(&c, config_key, &text, &len) == 0 &&
        config_parse(&parsed, text, len) == 0) {
        damaged = util_ct_equal(parsed.mac, v->config.mac, 32);
        config_clear(&parsed);
    }
    free(text);
    util_wipe(config_key, sizeof(config_key));
    return damaged;
}

int
pqv_vault_unlock(pqv_vault *v, const uint8_t *pass, size_t passlen)
{
    uint8_t config_key[32];
    int rc;

    if (v == NULL || (pass == NULL && passlen > 0))
        return PQV_E_INVAL;
    if (v->identity != NULL)
        return 0;
    if (v->keyfile == NULL) {
        /* Opened without it (PQV_OPEN_KEYFILE_OPTIONAL): why, as it was. */
        error_restore(&v->keyfile_error);
        return v->keyfile_status;
    }
    /* No slot pqvault writes holds an empty passphrase: refused before
     * any Argon2id work. */
    if (passlen == 0)
        return error_set(PQV_E_INVAL, NULL, "empty passphrase");
    if ((rc = pqv_keyfile_unlock_limited(v->keyfile, pass, passlen, &v->kdf_limit, v->seed,
             &v->identity, &v->slot)) != 0) {
        if (rc == PQV_E_LIMIT)
            error_subject(rc, v->keyfile_path);
        return rc;
    }
    if (pqv_keyfile_kem(v->keyfile) != v->config.kem ||
        !util_ct_equal(pqv_identity_public_hash(v->identity), v->config.identity_hash, 32)) {
        rc = config_identity_damaged(v)
            ? error_set(PQV_E_INTEGRITY, NULL, "config: identity or kem line damaged (modified or corrupted)")
            : error_set(PQV_E_AUTH, v->keyfile_path, "key file belongs to another vault");
        goto err;
    }
    if ((rc = vault_derive_keys(v, config_key)) != 0)
        goto err;
    rc = config_verify_mac(&v->config, config_key);
    util_wipe(config_key, sizeof(config_key));
    if (rc != 0)
        goto err;
    return 0;

err:
    pqv_identity_free(v->identity);
    v->identity = NULL;
    v->slot = -1;
    util_wipe(v->seed, sizeof(v->seed));
    util_wipe(v->names_key, sizeof(v->names_key));
    util_wipe(v->records_key, sizeof(v->records_key));
    util_wipe(v->segments_key, sizeof(v->segments_key));
    util_wipe(v->state_key, sizeof(v->state_key));
    util_wipe(v->dedup_key, sizeof(v->dedup_key));
    util_wipe(v->chunk_id_key, sizeof(v->chunk_id_key));
    util_wipe(v->chunk_data_key, sizeof(v->chunk_data_key));
    util_wipe(v->chunker_key, sizeof(v->chunker_key));
    util_wipe(v->packs_key, sizeof(v->packs_key));
    return rc;
}

int
pqv_vault_unlock_recovery(pqv_vault *v, const char *code)
{
    uint8_t config_key[32];
    int rc;

    if (v == NULL || code == NULL)
        return PQV_E_INVAL;
    if (v->identity != NULL)
        return 0;
    /* The code's checksum, then the identity it derives against the
     * config's hash (whatever the key file says, if there is one), then
     * the config's MAC under that identity. */
    if ((rc = pqv_recovery_decode(code, v->seed)) != 0 ||
        (rc = pqv_identity_derive(&v->identity, v->config.kem, v->seed)) != 0)
        goto err;
    if (!util_ct_equal(pqv_identity_public_hash(v->identity), v->config.identity_hash, 32)) {
        rc = error_set(PQV_E_AUTH, NULL, "recovery code belongs to another vault");
        goto err;
    }
    if ((rc = vault_derive_keys(v, config_key)) != 0)
        goto err;
    rc = config_verify_mac(&v->config, config_key);
    util_wipe(config_key, sizeof(config_key));
    if (rc != 0)
        goto err;
    v->slot = -1;
    return 0;

err:
    pqv_identity_free(v->identity);
    v->identity = NULL;
    util_wipe(v->seed, sizeof(v->seed));
    util_wipe(v->names_key, sizeof(v->names_key));
    util_wipe(v->records_key, sizeof(v->records_key));
    return rc;
}

int
pqv_vault_lock_writer(pqv_vault *v, int wait, char *holder, size_t holderlen)
{
    int rc;

    if (v == NULL)
        return PQV_E_INVAL;
    if ((rc = v->storage->ops->lock(v->storage, wait, holder, holderlen)) != 0)
        return rc;
    v->locked = 1;
    /* A writer that waited for the lock may find the vault upgraded by the
     * one it waited for (format 2 -> 3 is a config rewritten, then segments
     * of version 3): the config it read before is read again, lest those
     * segments look like damage. */
    if (v->config.version < PQV_FORMAT_VERSION && (rc = vault_reload_config(v)) < 0) {
        v->storage->ops->unlock(v->storage);
        v->locked = 0;
        return rc;
    }
    return 0;
}

void
pqv_vault_close(pqv_vault *v)
{
    if (v == NULL)
        return;
    pool_free(v->pool);
    segment_cache_free(v);
    readahead_free(v->readahead);
    if (v->sink != NULL && v->sink->release != NULL)
        v->sink->release(v->sink_ctx);
    if (v->locked && v->storage != NULL)
        v->storage->ops->unlock(v->storage);
    if (v->own_key_storage && v->key_storage != NULL)
        v->key_storage->ops->close(v->key_storage);
    if (v->own_storage && v->storage != NULL)
        v->storage->ops->close(v->storage);
    pqv_keyfile_free(v->keyfile);
    pqv_identity_free(v->identity);
    config_clear(&v->config);
    free(v->dir);
    free(v->state_dir);
    free(v->location);
    free(v->keyfile_path);
    free(v->key_name);
    util_wipe(v, sizeof(*v));
    util_unpin_memory(v, sizeof(*v));
    free(v);
}


