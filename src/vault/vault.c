/*
 * vault.c: creating, opening, unlocking and describing a vault; key slot
 * changes and recovery (see pqvault/vault.h).
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
#include "util/util.h"
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
    int rc = vault_require_unlocked(v);

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
pqv_name_normalize(const char *in, char *out, size_t outlen)
{
    size_t n = 0;
    const char *p = in;

    if (in == NULL || out == NULL || outlen == 0)
        return PQV_E_INVAL;
    while (*p != '\0') {
        const char *start;
        size_t len;

        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        start = p;
        while (*p != '\0' && *p != '/')
            p++;
        len = (size_t)(p - start);
        if (len == 1 && start[0] == '.')
            continue; /* "./" adds nothing */
        if (len == 2 && start[0] == '.' && start[1] == '.')
            return error_set(PQV_E_INVAL, in, "names may not contain \"..\"");
        if (n + (n > 0) + len + 1 > outlen || n + (n > 0) + len > PQV_NAME_MAX)
            return error_set(PQV_E_INVAL, NULL, "name too long");
        if (n > 0)
            out[n++] = '/';
        memcpy(out + n, start, len);
        n += len;
    }
    if (n == 0)
        return error_set(PQV_E_INVAL, NULL, "empty name");
    out[n] = '\0';
    return 0;
}

/* key_location_open(v, dir, keyfile): where the key file lives: the vault's
 * own storage ("keyfile") by default, else a local storage rooted at the
 * directory of ${keyfile}. */
static int
key_location_open(pqv_vault *v, const char *dir, const char *keyfile)
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
        return rc == PQV_E_NOVAULT ? error_set(PQV_E_NOTFOUND, kdir, "no such directory") : rc;
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

    rc = v->key_storage->ops->get(v->key_storage, v->key_name, &buf, &len, MAX_KEYFILE_BYTES);
    if (rc == PQV_E_NOTFOUND)
        return error_set(rc, v->keyfile_path, "key file not found");
    if (rc != 0)
        return rc;
    rc = pqv_keyfile_parse(&v->keyfile, buf, len);
    free(buf);
    if (rc == PQV_E_INTEGRITY || rc == PQV_E_UNSUPPORTED) {
        error_subject(rc, v->keyfile_path);
    }
    return rc;
}

/* keyfile_store(v, kf): write ${kf} atomically and durably. */
static int
keyfile_store(pqv_vault *v, const pqv_keyfile *kf)
{
    uint8_t *buf;
    size_t len;
    int rc;

    if ((rc = pqv_keyfile_serialize(kf, &buf, &len)) != 0)
        return rc;
    rc = v->key_storage->ops->put(v->key_storage, v->key_name, buf, len);
    free(buf);
    if (rc == 0)
        rc = v->key_storage->ops->barrier(v->key_storage);
    return rc;
}

/* vault_shell(out, storage, key_storage, key_name): a vault structure over
 * the given storages (not owned). */
static int
vault_shell(pqv_vault **out, pqv_storage *storage, pqv_storage *key_storage, const char *key_name)
{
    pqv_vault *v;

    if ((v = calloc(1, sizeof(*v))) == NULL)
        return PQV_E_NOMEM;
    util_pin_memory(v, sizeof(*v)); /* holds the seed and catalogue keys */
    v->slot = -1;
    v->storage = storage;
    v->key_storage = key_storage != NULL ? key_storage : storage;
    if ((v->key_name = strdup(key_name != NULL ? key_name : KEYFILE_NAME)) == NULL ||
        (v->keyfile_path = strdup(v->key_name)) == NULL || (v->dir = strdup("")) == NULL) {
        pqv_vault_close(v);
        return PQV_E_NOMEM;
    }
    *out = v;
    return 0;
}

/* vault_from_dir(out, dir, keyfile, create): a vault structure over the
 * local directory ${dir} (owned). */
static int
vault_from_dir(pqv_vault **out, const char *dir, const char *keyfile, int create)
{
    pqv_vault *v;
    int rc;

    if ((v = calloc(1, sizeof(*v))) == NULL)
        return PQV_E_NOMEM;
    util_pin_memory(v, sizeof(*v)); /* holds the seed and catalogue keys */
    v->slot = -1;
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
    if ((rc = key_location_open(v, dir, keyfile)) != 0)
        goto err;
    *out = v;
    return 0;
err:
    pqv_vault_close(v);
    return rc;
}

/* derive_vault_keys(v): the symmetric keys of the catalogue and config. */
static int
derive_vault_keys(pqv_vault *v, uint8_t config_key[32])
{
    int rc;

    if ((rc = pqv_identity_derive_key(v->identity, "catalogue/names", v->names_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "catalogue/records", v->records_key)) != 0 ||
        (rc = pqv_identity_derive_key(v->identity, "config", config_key)) != 0)
        return rc;
    return 0;
}

/* vault_create(v, pass, passlen, opt, recovery, fingerprint): create the
 * vault in ${v}'s storages. */
static int
vault_create(pqv_vault *v, const uint8_t *pass, size_t passlen, const struct pqv_init_options *opt,
    char recovery[PQV_RECOVERY_CHARS], char fingerprint[PQV_FINGERPRINT_CHARS])
{
    struct pqv_init_options defaults = { NULL, 0, NULL };
    struct vault_config *config = &v->config;
    pqv_identity *id = NULL;
    uint8_t seed[PQV_SEED_BYTES], config_key[32];
    uint8_t *text = NULL;
    size_t textlen;
    int rc;

    if (recovery == NULL || fingerprint == NULL || (pass == NULL && passlen > 0))
        return PQV_E_INVAL;
    if (passlen == 0)
        return error_set(PQV_E_INVAL, NULL, "empty passphrase");
    if (opt == NULL)
        opt = &defaults;
    config->version = PQV_FORMAT_VERSION;
    config->kem = pqv_frodo_find(opt->kem != NULL ? opt->kem : pqv_default_kem());
    if (config->kem == NULL)
        return error_set(PQV_E_INVAL, NULL, "unknown KEM \"%s\"", opt->kem);
    config->aead = opt->aead != 0 ? opt->aead : pqv_aead_auto();
    if (pqv_aead_name(config->aead) == NULL)
        return error_set(PQV_E_INVAL, NULL, "unknown AEAD suite");
    config->created = (int64_t)time(NULL);

    rc = v->storage->ops->stat(v->storage, CONFIG_NAME, NULL);
    if (rc == 0)
        return error_set(PQV_E_EXISTS, NULL, "a vault already exists here");
    if (rc != PQV_E_NOTFOUND)
        return rc;
    rc = v->key_storage->ops->stat(v->key_storage, v->key_name, NULL);
    if (rc == 0)
        return error_set(PQV_E_EXISTS, v->keyfile_path, "key file already exists");
    if (rc != PQV_E_NOTFOUND)
        return rc;
    if ((rc = util_random(seed, sizeof(seed))) != 0 ||
        (rc = util_random(config->vault_id, VAULT_ID_BYTES)) != 0)
        goto done;
    if ((rc = pqv_identity_derive(&id, config->kem, seed)) != 0)
        goto done;
    memcpy(config->identity_hash, pqv_identity_public_hash(id), 32);
    if ((rc = pqv_identity_derive_key(id, "config", config_key)) != 0)
        goto done;
    if ((rc = config_build(config, config_key, &text, &textlen)) != 0)
        goto done;
    if ((rc = pqv_keyfile_create(&v->keyfile, id, seed, pass, passlen, opt->kdf)) != 0)
        goto done;
    /* The key file first, the config last: a vault exists once its config
     * does, and then everything it needs is there. */
    if ((rc = keyfile_store(v, v->keyfile)) != 0)
        goto done;
    if ((rc = v->storage->ops->put(v->storage, CONFIG_NAME, text, textlen)) != 0 ||
        (rc = v->storage->ops->barrier(v->storage)) != 0)
        goto done;
    if ((rc = pqv_recovery_encode(seed, recovery)) != 0)
        goto done;
    pqv_identity_fingerprint(id, fingerprint);

done:
    pqv_identity_free(id);
    util_wipe(seed, sizeof(seed));
    util_wipe(config_key, sizeof(config_key));
    free(text);
    return rc;
}

int
pqv_vault_create(const char *dir, const char *keyfile, const uint8_t *pass, size_t passlen,
    const struct pqv_init_options *opt, char recovery[PQV_RECOVERY_CHARS],
    char fingerprint[PQV_FINGERPRINT_CHARS])
{
    pqv_vault *v;
    int rc;

    if (dir == NULL)
        return PQV_E_INVAL;
    if ((rc = vault_from_dir(&v, dir, keyfile, 1)) != 0)
        return rc;
    rc = vault_create(v, pass, passlen, opt, recovery, fingerprint);
    if (rc == PQV_E_EXISTS && v->storage->ops->stat(v->storage, CONFIG_NAME, NULL) == 0)
        error_set(rc, dir, "a vault already exists here");
    pqv_vault_close(v);
    return rc;
}

int
pqv_vault_create_storage(pqv_storage *storage, pqv_storage *key_storage, const char *key_name,
    const uint8_t *pass, size_t passlen, const struct pqv_init_options *opt,
    char recovery[PQV_RECOVERY_CHARS], char fingerprint[PQV_FINGERPRINT_CHARS])
{
    pqv_vault *v;
    int rc;

    if (storage == NULL)
        return PQV_E_INVAL;
    if ((rc = vault_shell(&v, storage, key_storage, key_name)) != 0)
        return rc;
    rc = vault_create(v, pass, passlen, opt, recovery, fingerprint);
    pqv_vault_close(v);
    return rc;
}

/* vault_load(v): read the config and key file of ${v}. */
static int
vault_load(pqv_vault *v)
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
    if ((rc = keyfile_load(v)) != 0)
        return rc;
    /* A key file whose KEM differs from the config's is told apart from a
     * damaged config at unlock (config_identity_damaged). */
    return 0;
}

int
pqv_vault_open(pqv_vault **out, const char *dir, const char *keyfile)
{
    pqv_vault *v;
    int rc;

    if (out == NULL || dir == NULL)
        return PQV_E_INVAL;
    if ((rc = vault_from_dir(&v, dir, keyfile, 0)) != 0)
        return rc;
    if ((rc = vault_load(v)) != 0) {
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
    pqv_vault *v;
    int rc;

    if (out == NULL || storage == NULL)
        return PQV_E_INVAL;
    if ((rc = vault_shell(&v, storage, key_storage, key_name)) != 0)
        return rc;
    if ((rc = vault_load(v)) != 0) {
        pqv_vault_close(v);
        return rc;
    }
    *out = v;
    return 0;
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
    if (derive_vault_keys(v, config_key) == 0 && config_build(&c, config_key, &text, &len) == 0 &&
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
    if ((rc = pqv_keyfile_unlock(v->keyfile, pass, passlen, v->seed, &v->identity, &v->slot)) != 0)
        return rc;
    if (pqv_keyfile_kem(v->keyfile) != v->config.kem ||
        !util_ct_equal(pqv_identity_public_hash(v->identity), v->config.identity_hash, 32)) {
        rc = config_identity_damaged(v)
            ? error_set(PQV_E_INTEGRITY, NULL, "config: identity or kem line damaged (modified or corrupted)")
            : error_set(PQV_E_AUTH, v->keyfile_path, "key file belongs to another vault");
        goto err;
    }
    if ((rc = derive_vault_keys(v, config_key)) != 0)
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
    return rc;
}

int
pqv_vault_lock_writer(pqv_vault *v, int wait, char *holder, size_t holderlen)
{
    int rc;

    if (v == NULL)
        return PQV_E_INVAL;
    if ((rc = v->storage->ops->lock(v->storage, wait, holder, holderlen)) == 0)
        v->locked = 1;
    return rc;
}

void
pqv_vault_close(pqv_vault *v)
{
    if (v == NULL)
        return;
    pool_free(v->pool);
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
    free(v->keyfile_path);
    free(v->key_name);
    util_wipe(v, sizeof(*v));
    util_unpin_memory(v, sizeof(*v));
    free(v);
}

/* Counting callback for info. */
struct count_ctx {
    uint64_t files, bytes, temps;
};

static int
count_blob(void *ctx, const char *name, uint64_t size)
{
    struct count_ctx *c = ctx;

    if (strstr(name, PQV_STORAGE_TEMP_MARK) != NULL) {
        c->temps++;
        return 0;
    }
    c->files++;
    c->bytes += size;
    return 0;
}

int
pqv_vault_info(pqv_vault *v, struct pqv_info *info)
{
    struct count_ctx records = { 0, 0, 0 }, objects = { 0, 0, 0 };
    int rc;

    if (v == NULL || info == NULL)
        return PQV_E_INVAL;
    memset(info, 0, sizeof(*info));
    info->format_version = v->config.version;
    util_hex_encode(info->vault_id, v->config.vault_id, VAULT_ID_BYTES);
    snprintf(info->kem, sizeof(info->kem), "%s", pqv_frodo_name(v->config.kem));
    snprintf(info->aead, sizeof(info->aead), "%s", pqv_aead_name(v->config.aead));
    info->created = v->config.created;
    pqv_fingerprint_from_hash(v->config.identity_hash, info->fingerprint);
    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++)
        info->slot_params[i] = pqv_keyfile_slot_params(v->keyfile, i);
    if ((rc = v->storage->ops->list(v->storage, "records", count_blob, &records)) != 0 ||
        (rc = v->storage->ops->list(v->storage, "objects", count_blob, &objects)) != 0)
        return rc;
    info->records = records.files;
    info->record_bytes = records.bytes;
    info->objects = objects.files;
    info->object_bytes = objects.bytes;
    info->temporaries = records.temps + objects.temps;
    return 0;
}

int
pqv_vault_passwd(pqv_vault *v, int slot, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *kdf)
{
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (slot < 0 || slot >= PQV_KEYFILE_SLOTS)
        return error_set(PQV_E_INVAL, NULL, "slot must be 0 or 1");
    if (passlen == 0)
        return error_set(PQV_E_INVAL, NULL, "empty passphrase");
    if ((rc = pqv_keyfile_set_slot(v->keyfile, slot, v->seed, pass, passlen, kdf)) != 0)
        return rc;
    return keyfile_store(v, v->keyfile);
}

int
pqv_vault_clear_slot(pqv_vault *v, int slot)
{
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (slot < 0 || slot >= PQV_KEYFILE_SLOTS)
        return error_set(PQV_E_INVAL, NULL, "slot must be 0 or 1");
    if (slot == v->slot)
        return error_set(PQV_E_INVAL, NULL, "slot %d is the one this passphrase opened; unlock with the other slot to clear it", slot);
    if ((rc = pqv_keyfile_clear_slot(v->keyfile, slot)) != 0)
        return rc;
    return keyfile_store(v, v->keyfile);
}

/* vault_recover(v, code, pass, passlen, kdf): a new key file for ${v}. */
static int
vault_recover(pqv_vault *v, const char *code, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *kdf)
{
    pqv_identity *id = NULL;
    pqv_keyfile *kf = NULL;
    uint8_t seed[PQV_SEED_BYTES], config_key[32];
    uint8_t *text = NULL;
    size_t len;
    int rc;

    if (code == NULL || (pass == NULL && passlen > 0))
        return PQV_E_INVAL;
    if (passlen == 0)
        return error_set(PQV_E_INVAL, NULL, "empty passphrase");
    rc = v->storage->ops->get(v->storage, CONFIG_NAME, &text, &len, MAX_CONFIG_BYTES);
    if (rc == PQV_E_NOTFOUND)
        rc = error_set(PQV_E_NOVAULT, v->dir, "no vault here (no config)");
    if (rc != 0)
        goto done;
    if ((rc = config_parse(&v->config, text, len)) != 0)
        goto done;
    if ((rc = pqv_recovery_decode(code, seed)) != 0)
        goto done;
    if ((rc = pqv_identity_derive(&id, v->config.kem, seed)) != 0)
        goto done;
    if (!util_ct_equal(pqv_identity_public_hash(id), v->config.identity_hash, 32)) {
        rc = error_set(PQV_E_AUTH, NULL, "recovery code belongs to another vault");
        goto done;
    }
    if ((rc = pqv_identity_derive_key(id, "config", config_key)) != 0 ||
        (rc = config_verify_mac(&v->config, config_key)) != 0)
        goto done;
    if ((rc = pqv_keyfile_create(&kf, id, seed, pass, passlen, kdf)) != 0)
        goto done;
    rc = keyfile_store(v, kf);
done:
    pqv_keyfile_free(kf);
    pqv_identity_free(id);
    util_wipe(seed, sizeof(seed));
    util_wipe(config_key, sizeof(config_key));
    free(text);
    return rc;
}

int
pqv_vault_recover(const char *dir, const char *keyfile, const char *code, const uint8_t *pass,
    size_t passlen, const struct pqv_kdf_params *kdf)
{
    pqv_vault *v;
    int rc;

    if (dir == NULL)
        return PQV_E_INVAL;
    if ((rc = vault_from_dir(&v, dir, keyfile, 0)) != 0)
        return rc;
    rc = vault_recover(v, code, pass, passlen, kdf);
    pqv_vault_close(v);
    return rc;
}

int
pqv_vault_recover_storage(pqv_storage *storage, pqv_storage *key_storage, const char *key_name,
    const char *code, const uint8_t *pass, size_t passlen, const struct pqv_kdf_params *kdf)
{
    pqv_vault *v;
    int rc;

    if (storage == NULL)
        return PQV_E_INVAL;
    if ((rc = vault_shell(&v, storage, key_storage, key_name)) != 0)
        return rc;
    rc = vault_recover(v, code, pass, passlen, kdf);
    pqv_vault_close(v);
    return rc;
}
