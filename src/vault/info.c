/*
 * info.c: what a vault says about itself (verified only once unlocked).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqvault/aead.h"
#include "util/util.h"
#include "vault/config.h"
#include "vault/names.h"
#include "vault/vault_internal.h"

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
    struct count_ctx records = { 0, 0, 0 }, objects = { 0, 0, 0 }, segments = { 0, 0, 0 },
                     packs = { 0, 0, 0 };
    struct names_list names;
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
    for (int i = 0; v->keyfile != NULL && i < PQV_KEYFILE_SLOTS; i++)
        info->slot_params[i] = pqv_keyfile_slot_params(v->keyfile, i);
    info->keyfile_status = v->keyfile_status;
    /* Unlocking checked the identity against the config's hash, the key
     * file's KEM against the config's, and the config's MAC. */
    info->verified = v->identity != NULL;
    info->opened_slot = v->slot;
    if ((rc = v->storage->ops->list(v->storage, "records", count_blob, &records)) != 0 ||
        (rc = v->storage->ops->list(v->storage, "objects", count_blob, &objects)) != 0 ||
        (rc = v->storage->ops->list(v->storage, "segments", count_blob, &segments)) != 0 ||
        (rc = v->storage->ops->list(v->storage, "packs", count_blob, &packs)) != 0)
        return rc;
    info->records = records.files;
    info->record_bytes = records.bytes;
    info->objects = objects.files;
    info->object_bytes = objects.bytes;
    info->segments = segments.files;
    info->segment_bytes = segments.bytes;
    info->packs = packs.files;
    info->pack_bytes = packs.bytes;
    info->temporaries = records.temps + objects.temps + segments.temps + packs.temps;
    /* The newest epoch as named (verified by commands that read it). */
    memset(&names, 0, sizeof(names));
    if (names_list(v->storage, "segments", &names) == 0)
        for (size_t i = 0; i < names.n; i++) {
            uint8_t id[8];
            if (names_classify(names.names[i], "segments", id, sizeof(id)) == NAME_VALID &&
                util_load_be64(id) > info->epoch)
                info->epoch = util_load_be64(id);
        }
    names_list_free(&names);
    return 0;
}
