/*
 * vault/vault_internal.h: the vault structure and what every module of
 * src/vault/ truly shares (vault.c: its life from open to close, unlock, the
 * writer lock, the worker pool, reports).  Each subsystem has a header of
 * its own, included only where it is used (docs/DESIGN.md section 1 maps
 * every file):
 *   config.h   the config codec          names.h     stored and storage names
 *   entry.h    catalogue entries         segment.h   segments (format 2)
 *   state.h    the verified current state   localstate.h  rollback memory
 *   pack.h     packs and sealed extents  txn.h       one command, one epoch
 *   compact.h  compaction                inbox.h     write-only adds
 *   format1.h  records, objects, catalogue, check and upgrade of format 1
 *   source.h, dest.h   file-system helpers with no vault types
 */
#ifndef PQV_VAULT_INTERNAL_H
#define PQV_VAULT_INTERNAL_H

#include <stdint.h>

#include "pqvault/identity.h"
#include "pqvault/keyfile.h"
#include "pqvault/storage.h"
#include "pqvault/vault.h"
#include "util/error.h"
#include "vault/config.h"

#define KEYFILE_NAME "keyfile"
/* Objects in flight beyond the worker threads (add and get windows). */
#define WINDOW_EXTRA 2

struct pool;
struct readahead;
struct segment_cache;
struct txn_sink;

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
    uint8_t segments_key[32];    /* root of segment keys (format 2) */
    uint8_t state_key[32];       /* MAC of the local state (format 2) */
    uint8_t dedup_key[32];       /* content hashes of files (format 2) */
    uint8_t chunk_id_key[32];    /* format 3: chunk identities (a MAC) */
    uint8_t chunk_data_key[32];  /* format 3: root of the chunks' keys */
    uint8_t chunker_key[32];     /* format 3: the chunker's secrets */
    uint8_t packs_key[32];       /* format 3: packs' tables */
    uint8_t keyfile_hash[32];    /* SHA-256 of the key file as read or written */
    char *state_dir;             /* local state directory (NULL: none kept) */
    char *location;              /* where the vault is, for its local state (a local
                                    directory's real path, an S3 URL; NULL: unknown) */
    int state_failed;            /* it could not be kept (said once; not tried again) */
    pqv_report_fn report;        /* what no operation's callback carries (pqv_vault_set_report) */
    void *report_ctx;
    int slot;                    /* slot that unlocked, -1 before */
    int locked;                  /* writer lock held */
    struct pqv_kdf_limit kdf_limit; /* what unlock computes (pqv_vault_set_kdf_limit) */
    int keyfile_status;          /* 0, or why there is no keyfile (PQV_OPEN_KEYFILE_OPTIONAL) */
    struct error_saved keyfile_error; /* that failure, as it was reported */
    struct pool *pool;              /* created on first use */
    /* Where writing commands put packs and commit (txn.h): the owner's
     * vault, or a write-only writer's batch (set by pqv_vault_inbox_begin). */
    const struct txn_sink *sink;
    void *sink_ctx;
    uint64_t at_epoch;           /* reading commands read this snapshot (0: the newest state) */
    struct segment_cache *segcache; /* segments read (segment_cache.h; NULL: none yet) */
    int segcache_off;            /* never cache them (a mount) */
    struct readahead *readahead; /* packs' reads coalesced (readahead.h; NULL: a storage
                                    that is not remote, or memory was short) */
    int reserve_use;             /* a command that frees space runs (rm, forget, gc): a
                                    commit short of space may use the reserve (reserve.h) */
};

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
/* vault_derive_keys(v, config_key): the catalogue's and config's keys. */
int vault_derive_keys(pqv_vault *v, uint8_t config_key[32]);
/* vault_store_keyfile(v, kf): write ${kf} atomically and durably. */
int vault_store_keyfile(pqv_vault *v, const pqv_keyfile *kf);
/* vault_reload_config(v): the config read again: 1 if it now says a newer
 * format and verifies (v->config replaced), else 0.  Before unlock its MAC
 * is left to unlock, which verifies whichever config was read. */
int vault_reload_config(pqv_vault *v);

#endif
