/*
 * vault/config.h: the config codec (config.c, docs/FORMAT.md section 3).
 */
#ifndef PQV_VAULT_CONFIG_H
#define PQV_VAULT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/frodo.h"

#define VAULT_ID_BYTES 16
#define MAX_CONFIG_BYTES 4096
#define CONFIG_NAME "config"

/* The parsed config. */
struct vault_config {
    int version;
    uint8_t vault_id[VAULT_ID_BYTES];
    const pqv_frodo *kem;
    int aead;
    uint8_t identity_hash[32];   /* SHA3-256 of the public identity */
    int64_t created;
    uint8_t *text;               /* the whole file, for the MAC check */
    size_t text_len;
    size_t mac_offset;           /* where the "mac " line starts */
    uint8_t mac[32];
};

int config_parse(struct vault_config *c, const uint8_t *text, size_t len);
int config_verify_mac(const struct vault_config *c, const uint8_t key[32]);
int config_build(const struct vault_config *c, const uint8_t key[32], uint8_t **text, size_t *len);
void config_clear(struct vault_config *c);

#endif
