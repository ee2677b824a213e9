/*
 * vault_internal.h: what the vault's modules share: the vault structure,
 * the config, record and object codecs (docs/FORMAT.md has the bytes).
 */
#ifndef PQV_VAULT_INTERNAL_H
#define PQV_VAULT_INTERNAL_H

#include <stdint.h>

#include "pqvault/aead.h"
#include "pqvault/storage.h"
#include "pqvault/vault.h"
#include "util/pool.h"

#define VAULT_ID_BYTES 16
#define NAME_HASH_BYTES 32
#define OBJECT_ID_BYTES 16
#define RECORD_HEADER_BYTES 40
#define OBJECT_HEADER_BYTES 8
#define MAX_RECORD_BYTES (64u << 20)
#define MAX_CONFIG_BYTES 4096
#define MAX_KEYFILE_BYTES (1u << 20)
#define CONFIG_NAME "config"
#define KEYFILE_NAME "keyfile"
/* Storage names: "records/xx/<64 hex>", "objects/xx/<32 hex>". */
#define STORAGE_NAME_MAX 128

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

struct pqv_vault {
    char *dir;                   /* for messages ("" over a given storage) */
    char *keyfile_path;          /* for messages */
    pqv_storage *storage;
    pqv_storage *key_storage;    /* where the key file lives (may be storage) */
    char *key_name;              /* its name there */
    int own_storage, own_key_storage;
    pqv_keyfile *keyfile;
    struct vault_config config;
    pqv_identity *identity;      /* NULL until unlocked */
    uint8_t seed[PQV_SEED_BYTES];
    uint8_t names_key[32];       /* keyed hash of names */
    uint8_t records_key[32];     /* root of record keys */
    int slot;                    /* slot that unlocked, -1 before */
    int locked;                  /* writer lock held */
    struct pool *pool;              /* created on first use */
};

/* A decoded record. */
struct record {
    struct pqv_entry entry;
    uint8_t (*object_ids)[OBJECT_ID_BYTES];
    uint8_t *wrapped;            /* wrapped file key (files only) */
    size_t wrapped_len;
};

void record_clear(struct record *r);

/* config.c */
int config_parse(struct vault_config *c, const uint8_t *text, size_t len);
int config_verify_mac(const struct vault_config *c, const uint8_t key[32]);
int config_build(const struct vault_config *c, const uint8_t key[32], uint8_t **text, size_t *len);
void config_clear(struct vault_config *c);

/* record.c */
int names_hash(const pqv_vault *v, const char *name, uint8_t hash[NAME_HASH_BYTES]);
void record_storage_name(const uint8_t hash[NAME_HASH_BYTES], char out[STORAGE_NAME_MAX]);
void object_storage_name(const uint8_t id[OBJECT_ID_BYTES], char out[STORAGE_NAME_MAX]);
int record_seal(const pqv_vault *v, const struct record *r, uint8_t **out, size_t *outlen);
/* The checks of a record that need no key: length, magic, version, suite. */
int record_check_header(const uint8_t *buf, size_t len);
int record_open(const pqv_vault *v, const uint8_t hash[NAME_HASH_BYTES],
    const uint8_t *buf, size_t len, struct record *r);
/* Read and open the record of ${name}: PQV_E_NOTFOUND if absent. */
int record_read(pqv_vault *v, const char *name, struct record *r);
/* The file key of ${r}.  Records loaded with the catalogue carry no wrapped
 * key (dropped to keep memory independent of the record count): the record
 * is read again by name; if it now names other objects, or is gone, the
 * file changed meanwhile: PQV_E_NOTFOUND.  PQV_E_INTEGRITY if the key does
 * not unwrap. */
int record_unwrap_file_key(pqv_vault *v, const struct record *r,
    uint8_t file_key[PQV_FILE_KEY_BYTES]);
/* names_under(name, prefix): ${name} is ${prefix} or below it (every
 * name is under the empty prefix). */
int names_under(const char *name, const char *prefix);
/* Number of objects a file of ${size} bytes is cut into. */
uint32_t object_count(uint64_t size);
/* Context the file key is wrapped to: label || vault id || name hash. */
size_t record_wrap_context(const pqv_vault *v, const uint8_t hash[NAME_HASH_BYTES], uint8_t *out);

/* object.c */
int object_key(const uint8_t file_key[PQV_FILE_KEY_BYTES], const uint8_t id[OBJECT_ID_BYTES],
    uint32_t index, uint8_t key[PQV_AEAD_KEY_BYTES]);
size_t object_sealed_size(size_t plain_len);
/* Seal ${plain} as object ${index} of a file into ${out} (object_sealed_size bytes). */
int object_seal(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    const uint8_t id[OBJECT_ID_BYTES], uint32_t index, const uint8_t *plain,
    size_t plain_len, uint8_t *out);
/* Verify and open an object of expected plaintext length ${plain_len}. */
int object_open(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    const uint8_t id[OBJECT_ID_BYTES], uint32_t index, const uint8_t *buf,
    size_t len, uint8_t *plain, size_t plain_len);

/* vault.c */
int vault_require_unlocked(const pqv_vault *v);
int vault_require_writer(const pqv_vault *v);
struct pool *vault_pool(pqv_vault *v);
void vault_report(pqv_report_fn fn, void *ctx, int level, const char *subject,
    const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* catalogue.c: every record, decrypted (no KEM operation). */
struct catalogue {
    struct record *records;
    char (*storage_names)[STORAGE_NAME_MAX];
    size_t n, cap;
};
/* Load every record.  With ${damaged} NULL the first record that fails to
 * open fails the load (PQV_E_INTEGRITY naming it); otherwise such records
 * are reported through ${report}, counted in *${damaged} and skipped. */
int catalogue_load(pqv_vault *v, struct catalogue *cat, pqv_report_fn report,
    void *report_ctx, uint64_t *damaged, uint64_t *temporaries);
void catalogue_free(struct catalogue *cat);
/* Sort the records by name (their storage names are dropped). */
void catalogue_sort(struct catalogue *cat);

#endif
