/*
 * create.c: creating a vault: seed, identity, key file, config (the config
 * last: a vault exists once its config does).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/fsutil.h"
#include "util/util.h"
#include "vault/vault_internal.h"

/* vault_create(v, pass, passlen, opt, recovery, fingerprint): create the
 * vault in ${v}'s storages. */
static int
vault_create(pqv_vault *v, const uint8_t *pass, size_t passlen, const struct pqv_init_options *opt,
    char recovery[PQV_RECOVERY_CHARS], char fingerprint[PQV_FINGERPRINT_CHARS])
{
    struct pqv_init_options defaults = { NULL, 0, NULL, 0, NULL, NULL, NULL };
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
    config->version = opt->format != 0 ? opt->format : PQV_FORMAT_DEFAULT;
    if (config->version != 1 && config->version != 2)
        return error_set(PQV_E_INVAL, NULL, "unknown format version %d", opt->format);
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
    v->identity = id; /* (borrowed until the end) */
    if ((rc = vault_derive_keys(v, config_key)) != 0)
        goto done;
    if ((rc = config_build(config, config_key, &text, &textlen)) != 0)
        goto done;
    if ((rc = pqv_keyfile_create(&v->keyfile, id, seed, pass, passlen, opt->kdf)) != 0)
        goto done;
    /* The key file first, the config last: a vault exists once its config
     * does, and then everything it needs is there. */
    if ((rc = vault_store_keyfile(v, v->keyfile)) != 0)
        goto done;
    /* Format 2: the first epoch, an empty base, roots the chain. */
    if (config->version == 2) {
        struct state st;
        struct txn t;
        memset(&st, 0, sizeof(st));
        st.format = 2;
        if (opt->state_dir != NULL && (v->state_dir = strdup(opt->state_dir)) == NULL) {
            rc = PQV_E_NOMEM;
            goto done;
        }
        v->report = opt->report;
        v->report_ctx = opt->report_ctx;
        if ((rc = txn_begin(v, &st, &t)) != 0)
            goto done;
        rc = txn_commit(&t, SEGMENT_BASE, NULL, 0, NULL, 0);
        txn_free(&t);
        if (rc != 0)
            goto done;
    }
    if ((rc = v->storage->ops->put(v->storage, CONFIG_NAME, text, textlen)) != 0 ||
        (rc = v->storage->ops->barrier(v->storage)) != 0)
        goto done;
    if ((rc = pqv_recovery_encode(seed, recovery)) != 0)
        goto done;
    pqv_identity_fingerprint(id, fingerprint);

done:
    v->identity = NULL;
    pqv_identity_free(id);
    util_wipe(seed, sizeof(seed));
    util_wipe(config_key, sizeof(config_key));
    free(text);
    return rc;
}

/* make_inbox(dir): the inbox directory of a local vault, mode 1733: other
 * users (write-only writers) may create files in it but neither list it
 * nor remove what they did not create (docs/SECURITY.md, deployment). */
static int
make_inbox(const char *dir)
{
    char path[4200];
    int rc;

    if (snprintf(path, sizeof(path), "%s/" INBOX_DIR, dir) >= (int)sizeof(path))
        return error_set(PQV_E_INVAL, dir, "path too long");
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return error_errno(path, "mkdir", errno);
    if (chmod(path, 01733) != 0)
        return error_errno(path, "chmod", errno);
    if ((rc = fsutil_fsync_dir(dir)) != 0)
        return rc;
    return 0;
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
    if ((rc = vault_new_local(&v, dir, keyfile, 1)) != 0)
        return rc;
    rc = vault_create(v, pass, passlen, opt, recovery, fingerprint);
    if (rc == PQV_E_EXISTS && v->storage->ops->stat(v->storage, CONFIG_NAME, NULL) == 0)
        error_set(rc, dir, "a vault already exists here");
    pqv_vault_close(v);
    if (rc == 0)
        rc = make_inbox(dir);
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
    if ((rc = vault_new_over(&v, storage, key_storage, key_name)) != 0)
        return rc;
    rc = vault_create(v, pass, passlen, opt, recovery, fingerprint);
    pqv_vault_close(v);
    return rc;
}
