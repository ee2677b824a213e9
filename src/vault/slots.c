/*
 * slots.c: the key file's passphrase slots (passwd, clearing a slot) and
 * recovery of a key file from the recovery code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/format1.h"
#include "vault/segment.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

/* record_keyfile(v): format 2: an epoch with no entries, recording the new
 * key file's hash and the old one as superseded, so that putting the old
 * key file back (with a passphrase since changed, a slot since cleared) is
 * refused from now on.  The key file is already replaced: a failure here
 * leaves the recording to the next writing command. */
static int
record_keyfile(pqv_vault *v)
{
    struct state st;
    struct txn t;
    int rc;

    if (v->config.version < 2)
        return 0;
    if ((rc = state_current(v, &st, NULL)) != 0)
        goto failed;
    if ((rc = txn_begin(v, &st, &t)) == 0) {
        rc = txn_finish(&t, TXN_EVEN_EMPTY, NULL, NULL);
        txn_free(&t);
    }
    state_free(&st);
    if (rc == 0)
        return 0;
failed:;
    char why[PQV_ERROR_REASON_MAX];
    snprintf(why, sizeof(why), "%s", pqv_error_detail());
    return error_set(rc, NULL, "the key file was replaced, but the vault could not record it "
        "(the next writing command will): %s", why);
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
    if ((rc = pqv_keyfile_set_slot(v->keyfile, slot, v->seed, pass, passlen, kdf)) != 0 ||
        (rc = vault_store_keyfile(v, v->keyfile)) != 0)
        return rc;
    return record_keyfile(v);
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
    if ((rc = pqv_keyfile_clear_slot(v->keyfile, slot)) != 0 ||
        (rc = vault_store_keyfile(v, v->keyfile)) != 0)
        return rc;
    return record_keyfile(v);
}

int
pqv_vault_recover_keyfile(pqv_vault *v, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *kdf)
{
    pqv_keyfile *kf = NULL;
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (pass == NULL && passlen > 0)
        return PQV_E_INVAL;
    if (passlen == 0)
        return error_set(PQV_E_INVAL, NULL, "empty passphrase");
    if (v->key_storage == NULL) {
        /* The key file's directory is missing (opened with
         * PQV_OPEN_KEYFILE_OPTIONAL): nowhere to write. */
        error_restore(&v->keyfile_error);
        return v->keyfile_status;
    }
    if ((rc = pqv_keyfile_create(&kf, v->identity, v->seed, pass, passlen, kdf)) != 0)
        return rc;
    if ((rc = vault_store_keyfile(v, kf)) != 0) {
        pqv_keyfile_free(kf);
        return rc;
    }
    pqv_keyfile_free(v->keyfile);
    v->keyfile = kf;
    v->keyfile_status = 0;
    return record_keyfile(v);
}

/* recover(v, code, pass, passlen, kdf): the convenience functions' work on
 * a vault opened with PQV_OPEN_KEYFILE_OPTIONAL. */
static int
recover(pqv_vault *v, const char *code, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *kdf)
{
    int rc;

    if (code == NULL || (pass == NULL && passlen > 0))
        return PQV_E_INVAL;
    if (passlen == 0)
        return error_set(PQV_E_INVAL, NULL, "empty passphrase");
    if ((rc = pqv_vault_unlock_recovery(v, code)) != 0 ||
        (rc = pqv_vault_lock_writer(v, 0, NULL, 0)) != 0)
        return rc;
    return pqv_vault_recover_keyfile(v, pass, passlen, kdf);
}

int
pqv_vault_recover(const char *dir, const char *keyfile, const char *code, const uint8_t *pass,
    size_t passlen, const struct pqv_kdf_params *kdf)
{
    pqv_vault *v;
    int rc;

    if (dir == NULL)
        return PQV_E_INVAL;
    if ((rc = pqv_vault_open_flags(&v, dir, keyfile, PQV_OPEN_KEYFILE_OPTIONAL)) != 0)
        return rc;
    rc = recover(v, code, pass, passlen, kdf);
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
    if ((rc = pqv_vault_open_storage_flags(&v, storage, key_storage, key_name,
             PQV_OPEN_KEYFILE_OPTIONAL)) != 0)
        return rc;
    rc = recover(v, code, pass, passlen, kdf);
    pqv_vault_close(v);
    return rc;
}
