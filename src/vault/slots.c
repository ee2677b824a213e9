/*
 * slots.c: the key file's passphrase slots (passwd, clearing a slot) and
 * recovery of a key file from the recovery code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/vault_internal.h"

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
    return vault_store_keyfile(v, v->keyfile);
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
    return vault_store_keyfile(v, v->keyfile);
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
    rc = vault_store_keyfile(v, kf);
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
    if ((rc = vault_new_local(&v, dir, keyfile, 0)) != 0)
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
    if ((rc = vault_new_over(&v, storage, key_storage, key_name)) != 0)
        return rc;
    rc = vault_recover(v, code, pass, passlen, kdf);
    pqv_vault_close(v);
    return rc;
}
