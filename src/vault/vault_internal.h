/*
 * vault_internal.h: what the vault's modules share, one section per file
 * of src/vault/ (docs/FORMAT.md has the bytes, docs/DESIGN.md the protocol):
 *   vault.c      the vault structure's life: open, unlock, lock, close
 *   create.c     pqv_vault_create          slots.c   passwd, clear, recover
 *   info.c       pqv_vault_info            config.c  the config codec
 *   names.c      stored names and storage names (hash, classify, walk)
 *   record.c     the record codec          object.c  the object codec
 *   catalogue.c  every record, loaded      list.c    list and lookup
 *   add.c        add                       get.c     get
 *   dest.c       restore destinations      rm.c      rm
 *   check.c      check and gc
 */
#ifndef PQV_VAULT_INTERNAL_H
#define PQV_VAULT_INTERNAL_H

#include <stdint.h>

#include "pqvault/aead.h"
#include "pqvault/storage.h"
#include "pqvault/vault.h"
#include "util/durable.h"
#include "util/error.h"
#include "util/pool.h"

#define VAULT_ID_BYTES 16
#define NAME_HASH_BYTES 32
#define OBJECT_ID_BYTES 16
#define RECORD_HEADER_BYTES 40
#define OBJECT_HEADER_BYTES 8
#define MAX_RECORD_BYTES (64u << 20)
#define MAX_CONFIG_BYTES 4096
#define CONFIG_NAME "config"
#define KEYFILE_NAME "keyfile"
/* Storage names: "records/xx/<64 hex>", "objects/xx/<32 hex>". */
#define STORAGE_NAME_MAX 128
/* Objects in flight beyond the worker threads (add and get windows). */
#define WINDOW_EXTRA 2

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
    struct pqv_kdf_limit kdf_limit; /* what unlock computes (pqv_vault_set_kdf_limit) */
    int keyfile_status;          /* 0, or why there is no keyfile (PQV_OPEN_KEYFILE_OPTIONAL) */
    struct error_saved keyfile_error; /* that failure, as it was reported */
    struct pool *pool;              /* created on first use */
};

/* ---- vault.c ---- */
int vault_require_unlocked(const pqv_vault *v);
int vault_require_writer(const pqv_vault *v);
struct pool *vault_pool(pqv_vault *v);
void vault_report(pqv_report_fn fn, void *ctx, int level, const char *subject,
    const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* vault_new_local(out, dir, keyfile, create): a vault structure over the
 * local directory ${dir} (owned), key file at ${keyfile} (NULL: in it). */
int vault_new_local(pqv_vault **out, const char *dir, const char *keyfile, int create);
/* vault_new_over(out, storage, key_storage, key_name): a vault structure
 * over given storages (not owned). */
int vault_new_over(pqv_vault **out, pqv_storage *storage, pqv_storage *key_storage,
    const char *key_name);
/* vault_store_keyfile(v, kf): write ${kf} atomically and durably. */
int vault_store_keyfile(pqv_vault *v, const pqv_keyfile *kf);

/* ---- config.c ---- */
int config_parse(struct vault_config *c, const uint8_t *text, size_t len);
int config_verify_mac(const struct vault_config *c, const uint8_t key[32]);
int config_build(const struct vault_config *c, const uint8_t key[32], uint8_t **text, size_t *len);
void config_clear(struct vault_config *c);

/* ---- names.c ---- */
/* names_hash(v, name, hash): the keyed hash that names a stored name. */
int names_hash(const pqv_vault *v, const char *name, uint8_t hash[NAME_HASH_BYTES]);
/* names_under(name, prefix): ${name} is ${prefix} or below it (every name
 * is under the empty prefix). */
int names_under(const char *name, const char *prefix);

/* Storage names collected by a listing. */
struct names_list {
    char (*names)[STORAGE_NAME_MAX];
    uint64_t *sizes;
    size_t n, cap;
};
int names_list(pqv_storage *s, const char *prefix, struct names_list *l);
int names_list_add(struct names_list *l, const char *name);
void names_list_free(struct names_list *l);

/* names_sharded(out, kind, id, idlen): "kind/xx/<hex id>", xx the first two
 * hex digits (sharding, as git does); the inverse of names_classify. */
void names_sharded(char out[STORAGE_NAME_MAX], const char *kind, const uint8_t *id, size_t idlen);

/* What a storage name is. */
enum { NAME_VALID = 0, NAME_TEMPORARY = 1, NAME_MALFORMED = 2 };
/* names_classify(name, kind, id, idlen): a leftover temporary, a valid
 * "kind/xx/<hex>" (its id decoded into ${id}), or something else. */
int names_classify(const char *name, const char *kind, uint8_t *id, size_t idlen);

/* Where a walk over storage names reports the names that are not valid. */
struct names_walk {
    pqv_report_fn report;
    void *report_ctx;
    uint64_t *damaged;               /* malformed names counted (NULL: an error) */
    uint64_t *temporaries;           /* leftover temporaries counted */
    struct names_list *leftovers;    /* and collected, for gc (may be NULL) */
};
typedef int (*names_fn)(void *ctx, const char *name, const uint8_t *id, uint64_t size);
/* names_walk(s, prefix, idlen, w, fn, ctx): list ${prefix} and classify
 * each name: valid ones ("prefix/xx/<2*idlen hex>"; with ${idlen} 0 any
 * name but a temporary) go to ${fn}; temporaries and malformed names are
 * reported through ${w} (${w} NULL: temporaries are skipped, a malformed
 * name fails with PQV_E_INTEGRITY). */
int names_walk(pqv_storage *s, const char *prefix, size_t idlen, const struct names_walk *w,
    names_fn fn, void *ctx);

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

/* ---- dest.c ---- */
/* Restore destinations (never following links below the directory the
 * user named). */
struct dest {
    int rootfd;                 /* the directory the user named */
    char *root;                 /* its path */
    char **cleaned;             /* directories already visited */
    size_t ncleaned;
};
struct dest_file {
    int dirfd;                  /* the file's directory */
    char base[256];             /* its name there */
    const char *display;        /* its path, for messages */
    int device;                 /* writing into a device or FIFO */
    struct durable tmp;         /* the temporary (not for a device) */
    int fd;                     /* where the plaintext goes */
};
/* dest_open(d, path, create): the destination rooted at ${path} (created,
 * with its parents, if ${create}). */
int dest_open(struct dest *d, const char *path, int create);
void dest_close(struct dest *d);
/* dest_open_file(f, d, rel, display, force, allow_device): prepare writing
 * ${rel} below ${d}: missing directories created (no link followed), the
 * existing target checked (see dest.c), stale temporaries of an earlier
 * killed restore removed, a temporary begun; f->fd receives the plaintext. */
int dest_open_file(struct dest_file *f, struct dest *d, const char *rel, const char *display,
    int force, int allow_device);
/* dest_commit_file(f, meta, force): mode and times, fsync, rename (over an
 * existing file only with ${force}), directory fsync; closes ${f}. */
int dest_commit_file(struct dest_file *f, const struct durable_meta *meta, int force);
/* dest_close_file(f): abandon (the temporary is removed). */
void dest_close_file(struct dest_file *f);
/* dest_exists(d, rel): whether something is at ${rel} (not following). */
int dest_exists(struct dest *d, const char *rel);
/* dest_make_dir(d, rel, display): create the directory ${rel} (and parents). */
int dest_make_dir(struct dest *d, const char *rel, const char *display);
/* dest_set_dir_meta(d, rel, display, meta): set a restored directory's mode
 * and times on its descriptor and sync them. */
int dest_set_dir_meta(struct dest *d, const char *rel, const char *display,
    const struct durable_meta *meta);

#endif
