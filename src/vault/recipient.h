/*
 * vault/recipient.h: the vault's recipient and a writer's credential as
 * text (recipient.c, docs/FORMAT.md sections 18 and 19).  A credential is
 * a recipient with a writer's name, prefix, generation and MAC key: what
 * an authenticated write-only writer holds.
 */
#ifndef PQV_VAULT_RECIPIENT_H
#define PQV_VAULT_RECIPIENT_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "vault/config.h"
#include "vault/writers.h"

struct recipient_info {
    uint8_t vault_id[VAULT_ID_BYTES];
    uint8_t *pub;                       /* the public identity (malloc'd) */
    size_t publen;
    int is_writer;                      /* a credential: the fields below set */
    char writer[WRITER_NAME_MAX + 1];
    char prefix[PQV_NAME_MAX + 1];
    uint64_t generation;
    uint8_t key[WRITER_KEY_BYTES];      /* secret */
};

/* recipient_parse(text, len, ri): a recipient or a writer credential,
 * parsed strictly (PQV_E_INVAL if malformed, PQV_E_INTEGRITY if its key
 * does not match its fingerprint).  Free ri->pub; wipe ri->key. */
int recipient_parse(const uint8_t *text, size_t len, struct recipient_info *ri);
/* recipient_text(v, ri, text, len): the recipient of unlocked ${v}, or with
 * ${ri} a writer credential (its writer lines from ri).  The text is
 * malloc'd (secret for a credential: wipe it). */
int recipient_text(pqv_vault *v, const struct recipient_info *ri, char **text, size_t *len);

#endif
