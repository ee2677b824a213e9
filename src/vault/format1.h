/*
 * vault/format1.h: format 1 in one place (docs/FORMAT.md sections 1-8):
 *   record.c     the record codec        object.c    the object codec
 *   catalogue.c  every record, loaded    check_v1.c  check and gc of format 1
 *   upgrade.c    format 1 -> format 2 (FORMAT.md section 17)
 * Format 1 is read (through state.c, which sees records as entries) and
 * upgraded; nothing new is ever written in it.
 */
#ifndef PQV_VAULT_FORMAT1_H
#define PQV_VAULT_FORMAT1_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/aead.h"
#include "pqvault/vault.h"
#include "vault/names.h"

#define OBJECT_ID_BYTES 16
#define RECORD_HEADER_BYTES 40
#define OBJECT_HEADER_BYTES 8
#define MAX_RECORD_BYTES (64u << 20)

/* ---- record.c ---- */
/* A decoded record. */
struct record {
    struct pqv_entry entry;
    uint8_t (*object_ids)[OBJECT_ID_BYTES];
    uint8_t *wrapped;            /* wrapped file key (files only) */
    size_t wrapped_len;
};
void record_clear(struct record *r);
void record_storage_name(const uint8_t hash[NAME_HASH_BYTES], char out[STORAGE_NAME_MAX]);
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
/* Context the file key is wrapped to: label || vault id || name hash. */
size_t record_wrap_context(const pqv_vault *v, const uint8_t hash[NAME_HASH_BYTES], uint8_t *out);

/* ---- object.c ---- */
void object_storage_name(const uint8_t id[OBJECT_ID_BYTES], char out[STORAGE_NAME_MAX]);
/* Number of objects a file of ${size} bytes is cut into. */
uint32_t object_count(uint64_t size);
/* Plaintext length of object ${index} of the file ${e}. */
size_t object_plain_len(const struct pqv_entry *e, uint32_t index);
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

/* ---- catalogue.c ---- */
struct catalogue {
    struct record *records;
    char (*storage_names)[STORAGE_NAME_MAX];
    size_t n, cap;
};
/* catalogue_load(v, cat, w): every record, decrypted (no KEM operation).
 * With ${w} NULL the first record that fails to open fails the load
 * (PQV_E_INTEGRITY naming it); otherwise such records are reported and
 * counted through ${w} and skipped. */
int catalogue_load(pqv_vault *v, struct catalogue *cat, const struct names_walk *w);
void catalogue_free(struct catalogue *cat);
/* Sort the records by name (their storage names are dropped). */
void catalogue_sort(struct catalogue *cat);

/* ---- check_v1.c: check and gc of format 1 (arguments checked) ---- */
int check_v1(pqv_vault *v, const struct pqv_check_options *opt, struct pqv_check_result *result);
int check_v1_gc(pqv_vault *v, const struct pqv_check_options *opt, struct pqv_check_result *result);
/* check_v1_keyfile_status(v, report, ctx, res): a key file that could not be
 * read at open: damage if damaged, else reported as not checked. */
void check_v1_keyfile_status(pqv_vault *v, pqv_report_fn report, void *report_ctx,
    struct pqv_check_result *res);

/* ---- upgrade.c ---- */
/* upgrade_if_needed(v, report, ctx): a format-1 vault upgraded to format 2
 * and on to 3, a format-2 vault to 3
 * (docs/FORMAT.md section 17), or an interrupted upgrade finished; no-op
 * for format 2.  Requires unlock+lock. */
int upgrade_if_needed(pqv_vault *v, pqv_report_fn report, void *ctx);
/* upgrade_finish_interrupted(v, report, ctx): only an interrupted upgrade
 * finished (a format-1 config beside segment 1); requires unlock+lock. */
int upgrade_finish_interrupted(pqv_vault *v, pqv_report_fn report, void *ctx);

#endif
