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
 *   inbox.c      write-only adds: recipients, inbox batches, import
 */
#ifndef PQV_VAULT_INTERNAL_H
#define PQV_VAULT_INTERNAL_H

#include <stdint.h>
#include <sys/stat.h>

#include "pqvault/aead.h"
#include "pqvault/storage.h"
#include "pqvault/vault.h"
#include "util/buf.h"
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
    uint8_t segments_key[32];    /* root of segment keys (format 2) */
    uint8_t state_key[32];       /* MAC of the local state (format 2) */
    uint8_t dedup_key[32];       /* content hashes of files (format 2) */
    uint8_t keyfile_hash[32];    /* SHA-256 of the key file as read or written */
    char *state_dir;             /* local state directory (NULL: none kept) */
    int state_failed;            /* it could not be kept (said once; not tried again) */
    pqv_report_fn report;        /* what no operation's callback carries (pqv_vault_set_report) */
    void *report_ctx;
    int slot;                    /* slot that unlocked, -1 before */
    int locked;                  /* writer lock held */
    struct pqv_kdf_limit kdf_limit; /* what unlock computes (pqv_vault_set_kdf_limit) */
    int keyfile_status;          /* 0, or why there is no keyfile (PQV_OPEN_KEYFILE_OPTIONAL) */
    struct error_saved keyfile_error; /* that failure, as it was reported */
    struct pool *pool;              /* created on first use */
    struct inbox *inbox;            /* a write-only writer's batch (inbox.c), or NULL */
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
/* vault_derive_keys(v, config_key): the catalogue's and config's keys. */
int vault_derive_keys(pqv_vault *v, uint8_t config_key[32]);
/* vault_store_keyfile(v, kf): write ${kf} atomically and durably. */
int vault_store_keyfile(pqv_vault *v, const pqv_keyfile *kf);
/* vault_reload_config(v): the config read again (unlocked): 1 if it now
 * says a newer format and verifies (v->config replaced), else 0. */
int vault_reload_config(pqv_vault *v);

/* ---- list.c ---- */
/* list_public_entry(e, out): the public form of an entry. */
struct entry;
int list_public_entry(const struct entry *e, struct pqv_entry *out);

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
    const char *writer_running;      /* another writer runs (its holder), or NULL/"" */
    uint64_t *in_flight;             /* its temporaries counted here instead */
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

/* ---- entry.c (format 2) ---- */
#define PACK_ID_BYTES 16
#define TAG_BYTES 16
enum { KIND_FILE = 1, KIND_DIR = 2, KIND_SYMLINK = 3, KIND_REMOVED = 4 };
enum { ENTRY_ORIGIN = 1, ENTRY_HLGROUP = 2, ENTRY_XATTRS = 4, ENTRY_CONTENT = 8 };  /* entry flags */
#define MAX_XATTR_VALUE (64u << 10)     /* bytes of one extended attribute's value */
/* A file's size (FORMAT.md section 13): 1 PiB, beyond what real sparse
 * files reach, so that no entry describes an endless stream of zeros. */
#define MAX_FILE_BYTES (1ull << 50)
enum { EXTENT_ZSTD = 1 };                                         /* extent flags */
enum { PACK_INTRODUCED = 1, PACK_V1_OBJECT = 2 };                 /* pack table flags */
/* What e->key holds. */
enum { KEY_NONE = 0, KEY_STORED = 1, KEY_CLEAR = 2, KEY_V1 = 3 };

struct extent {
    uint64_t file_off;
    uint32_t plain_len;
    uint32_t stored_len;
    uint32_t pack_off;
    uint8_t flags;               /* EXTENT_ZSTD */
    uint8_t pack_id[PACK_ID_BYTES];
    uint8_t pack_flags;          /* PACK_V1_OBJECT: a format-1 object */
};

struct xattr {
    char *name;
    uint8_t *value;
    size_t len;
};

/* A catalogue entry (docs/FORMAT.md section 13). */
struct entry {
    char *name;
    int kind;                    /* KIND_* */
    uint32_t perm, uid, gid;
    char *user, *group;          /* NULL: unknown */
    int64_t mtime_sec;
    uint32_t mtime_nsec;
    int64_t ctime_sec;
    uint32_t ctime_nsec;
    uint64_t dev, ino;
    char *origin;                /* an add's root: its absolute source path */
    uint64_t hlgroup;            /* nonzero: one file with the others of the group */
    int has_content;             /* files of one extent: ${content} is set */
    uint8_t content[32];         /* HMAC(key("dedup"), plaintext): equal files share data */
    struct xattr *xattrs;
    size_t nxattrs;
    int suite;                   /* files */
    uint64_t size;
    uint8_t key[PQV_FILE_KEY_BYTES];
    int key_state;               /* KEY_*: what ${key} holds */
    struct extent *extents;
    uint32_t nextents;
    char *target;                /* symbolic links */
    uint64_t epoch;              /* the segment it came from; 0: a format-1 record */
};

struct seg_pack {
    uint8_t id[PACK_ID_BYTES];
    uint8_t flags;               /* PACK_* */
    uint64_t size;               /* introduced packs */
    uint8_t hash[32];
};

/* A segment's string and pack tables. */
struct seg_tables {
    char **strings;
    size_t nstrings;
    struct seg_pack *packs;
    size_t npacks, cappacks;
};

void entry_clear(struct entry *e);
/* entry_check_size(name, size): PQV_E_INVAL for a file larger than
 * MAX_FILE_BYTES (what a reader refuses is never written). */
int entry_check_size(const char *name, uint64_t size);
/* entry_copy(dst, src): a deep copy. */
int entry_copy(struct entry *dst, const struct entry *src);
/* entry_encode(out, e, t, stored_key): append ${e} (its file key as
 * ${stored_key}), adding its strings and packs to ${t}. */
struct buf;
struct cursor;
int entry_encode(struct buf *out, const struct entry *e, struct seg_tables *t,
    const uint8_t *stored_key);
/* entry_decode(c, e, t): the next entry; PQV_E_INTEGRITY if malformed. */
int entry_decode(struct cursor *c, struct entry *e, const struct seg_tables *t);
/* entry_tables_pack(t, id, flags, index): the index of pack ${id} (added). */
int entry_tables_pack(struct seg_tables *t, const uint8_t id[PACK_ID_BYTES], uint8_t flags,
    uint64_t *index);
void entry_tables_free(struct seg_tables *t);

/* ---- segment.c (format 2) ---- */
#define SEGMENT_HEADER_BYTES 72
#define MAX_SEGMENT_BYTES (2ull << 30)  /* read no larger segment */
/* Nor a larger sealed head, read before it is authenticated (about 5
 * million packs in one base, some 20 TiB of stored data). */
#define MAX_SEGMENT_HEAD_BYTES (256u << 20)
enum { SEGMENT_DELTA = 1, SEGMENT_BASE = 2 };

struct seg_block {
    uint8_t first[TAG_BYTES];    /* tag of its first entry */
    uint64_t off, len;           /* after the head; sealed length */
    uint64_t n;                  /* entries */
};

struct seg_history {
    uint64_t epoch;
    uint8_t chain[32];
};

/* An opened segment: header, head, and its sealed blocks. */
struct segment {
    uint64_t epoch;
    int kind, suite;
    uint8_t header[SEGMENT_HEADER_BYTES];
    int64_t time;
    uint64_t base;
    uint8_t prev_chain[32], chain[32];
    uint8_t keyfile_hash[32];
    uint8_t (*superseded)[32];
    size_t nsuperseded;
    struct seg_history *history;     /* base: chain values of earlier epochs */
    size_t nhistory;
    uint8_t *wrap;                   /* the command key, wrapped (NULL: none) */
    size_t wraplen;
    struct seg_tables t;
    struct seg_block *blocks;
    size_t nblocks;
    uint64_t nentries;
    uint8_t *blockdata;              /* the sealed blocks */
    uint64_t blocklen;
    uint8_t key[32];                 /* K_seg */
    int cmd_key_known;
    uint8_t cmd_key[32];             /* unwrapped on first need */
};

/* What segment_build writes. */
struct seg_params {
    uint64_t epoch;
    int kind;                        /* SEGMENT_DELTA or SEGMENT_BASE */
    uint64_t base;
    int64_t time;
    const uint8_t *prev_chain;       /* chain(epoch - 1) */
    const uint8_t *keyfile_hash;
    const uint8_t (*superseded)[32];
    size_t nsuperseded;
    const struct seg_history *history;   /* base */
    size_t nhistory;
    const uint8_t *cmd_key;          /* NULL: no file entries */
    const uint8_t *wrap;             /* its wrap */
    size_t wraplen;
    const struct seg_pack *introduced;   /* packs this command wrote */
    size_t nintroduced;
    const struct seg_pack *known;    /* a base: packs described before it */
    size_t nknown;
};

void segment_name(uint64_t epoch, char out[STORAGE_NAME_MAX]);
/* segment_tag(v, name, tag): tag(name). */
int segment_tag(const pqv_vault *v, const char *name, uint8_t tag[TAG_BYTES]);
/* segment_cmd_context(v, epoch, out): the wrap context of K_cmd; its length. */
int segment_cmd_context(const pqv_vault *v, uint64_t epoch, uint8_t *out);
/* segment_pad(cmd_key, tag, pad): pad(name). */
int segment_pad(const uint8_t cmd_key[32], const uint8_t tag[TAG_BYTES], uint8_t pad[32]);
/* segment_build(v, p, entries, n, out, chain): the segment's bytes in
 * ${out}, and chain(epoch). */
int segment_build(pqv_vault *v, const struct seg_params *p, struct entry *const *entries,
    size_t n, struct buf *out, uint8_t chain[32]);
/* segment_check_header(h, len, epoch, vault_id): the header's own checks. */
int segment_check_header(const uint8_t *h, size_t len, uint64_t epoch, const uint8_t vault_id[16]);
/* segment_head_length(header, size, headlen): the sealed head's length
 * the header gives, bounded (MAX_SEGMENT_HEAD_BYTES, and within ${size}
 * bytes of segment). */
int segment_head_length(const uint8_t header[SEGMENT_HEADER_BYTES], uint64_t size,
    size_t *headlen);
/* segment_open_head(v, epoch, bytes, len, s): the header and sealed head
 * (exactly ${len} bytes) verified and parsed, no blocks yet: s->blocklen
 * bytes of them follow (segment_size(s) in all). */
int segment_open_head(pqv_vault *v, uint64_t epoch, const uint8_t *bytes, size_t len,
    struct segment *s);
uint64_t segment_size(const struct segment *s);
/* segment_open(v, epoch, blob, len, s): verify and parse segment ${epoch}. */
int segment_open(pqv_vault *v, uint64_t epoch, const uint8_t *blob, size_t len, struct segment *s);
/* segment_block(v, s, i, out, n): the entries of block ${i}, verified. */
int segment_block(pqv_vault *v, const struct segment *s, size_t i, struct entry **out, size_t *n);
void segment_free(struct segment *s);

/* ---- state.c (format 2; format 1 seen through it) ---- */
struct state {
    int format;                  /* 1 or 2 */
    uint64_t epoch, base;        /* newest epoch, its base (format 2) */
    uint8_t chain[32];           /* chain(epoch) */
    struct segment *segs;        /* base first, newest last */
    size_t nsegs;
    struct entry *entries;       /* every entry, sorted by name, once loaded */
    size_t n;
    int loaded;
};
/* state_open(v, st, w): the current state (format 2: heads and chain
 * verified; format 1: every record loaded).  ${w} as for names_walk. */
int state_open(pqv_vault *v, struct state *st, const struct names_walk *w);
/* state_check_format(v): a config of format 1 is believed only for a
 * format-1 vault (no segment, not seen here as format 2) or a half-finished
 * upgrade (segment 1 alone, its base, verifying; if seen here, seen at epoch
 * 1 with its chain value); anything else is a downgrade (PQV_E_INTEGRITY).
 * v->config is replaced if the vault was upgraded meanwhile.  Unlocked
 * vaults only (a no-op otherwise, and for format 2). */
int state_check_format(pqv_vault *v);
/* state_v1_segments(v, newest, chain): the segments beside a config of
 * format 1: *${newest} 0 (none) or the newest epoch; when it is 1, segment 1
 * is verified to be an upgrade's base and ${chain} is its chain value. */
int state_v1_segments(pqv_vault *v, uint64_t *newest, uint8_t chain[32]);
/* state_read_segment(v, epoch, s): read and open one segment. */
int state_read_segment(pqv_vault *v, uint64_t epoch, struct segment *s);
/* state_load(v, st): every entry (no KEM operation). */
int state_load(pqv_vault *v, struct state *st);
/* state_load_reporting(v, st, w): the same; with ${w} counting damage, a
 * damaged block is reported and skipped instead of failing the load. */
int state_load_reporting(pqv_vault *v, struct state *st, const struct names_walk *w);
/* state_current(v, st, w): state_open, then the key file and the local state
 * checked against it (rollback, fork). */
int state_current(pqv_vault *v, struct state *st, const struct names_walk *w);
/* state_lookup(v, st, name, out): the entry named ${name} (a copy). */
int state_lookup(pqv_vault *v, struct state *st, const char *name, struct entry *out);
/* state_find(st, name): in a loaded state; NULL if none. */
const struct entry *state_find(const struct state *st, const char *name);
/* state_first_under(st, prefix): index of the first loaded entry that is
 * ${prefix} or below it (entries under a prefix are contiguous). */
size_t state_first_under(const struct state *st, const char *prefix);
/* state_segment(st, epoch): the segment of ${epoch} in the chain, or NULL. */
const struct segment *state_segment(const struct state *st, uint64_t epoch);
/* state_entry_of_record(r, e): a format-1 record as an entry (its extents are
 * its objects, KEY_V1: its key comes from its record when data is read). */
int state_entry_of_record(const struct record *r, struct entry *e);
/* state_origin(st, name, out, outlen): where ${name} was added from (its
 * recorded origin, or its nearest ancestor's with the rest of the name);
 * 0, or -1 if unknown.  ${st} loaded. */
int state_origin(const struct state *st, const char *name, char *out, size_t outlen);
/* state_file_key(v, st, e, key): the clear file key of ${e}. */
int state_file_key(pqv_vault *v, struct state *st, const struct entry *e,
    uint8_t key[PQV_FILE_KEY_BYTES]);
void state_free(struct state *st);

/* ---- pack.c (format 2) ---- */
#define PACK_HEADER_BYTES 8
void pack_name(const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX]);
void pack_header(uint8_t header[PACK_HEADER_BYTES]);
/* Room for a compressed extent, and for any sealed extent. */
size_t pack_scratch_size(void);
size_t pack_sealed_max(void);
/* pack_seal_extent(suite, file_key, index, x, plain, compress, scratch,
 * out): seal x->plain_len bytes at ${plain} as extent ${index} (compressed
 * if ${compress} and it pays; x->flags and x->stored_len set) into ${out}
 * (pack_sealed_max bytes); ${scratch} holds pack_scratch_size bytes. */
int pack_seal_extent(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES], uint32_t index,
    struct extent *x, const uint8_t *plain, int compress, uint8_t *scratch, uint8_t *out);
/* pack_open_extent(...): verify and open a sealed extent into ${plain}. */
int pack_open_extent(int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES], uint32_t index,
    const struct extent *x, const uint8_t *sealed, uint8_t *plain, uint8_t *scratch);
/* pack_read_extent(v, suite, file_key, index, x, plain, sealed, scratch):
 * read extent ${index} (from its pack, or its format-1 object) and open it. */
int pack_read_extent(pqv_vault *v, int suite, const uint8_t file_key[PQV_FILE_KEY_BYTES],
    uint32_t index, const struct extent *x, uint8_t *plain, uint8_t *sealed, uint8_t *scratch);

/* ---- txn.c (format 2): one writing command, one epoch ---- */
struct txn {
    pqv_vault *v;
    struct state *st;            /* what it builds on */
    uint8_t cmd_key[32];         /* K_cmd, made with the first file key */
    uint8_t *wrap;
    size_t wraplen;
    struct entry **entries;      /* new entries (owned) */
    size_t n, cap;
    struct seg_pack *introduced; /* packs written */
    size_t nintroduced, capintro;
    struct buf pack;             /* the pack being filled */
    uint8_t pack_id[PACK_ID_BYTES];
    void *jobs;                  /* packs being written */
    size_t next_job;
    int rc;                      /* first failure of a pack write */
    const struct seg_pack *known;    /* a base: packs described before (not owned) */
    size_t nknown;
    uint64_t committed_epoch;
    uint8_t committed_chain[32];
};
int txn_begin(pqv_vault *v, struct state *st, struct txn *t);
/* txn_command_key(t): the command key K_cmd, made and wrapped once. */
int txn_command_key(struct txn *t);
/* txn_new_file_key(t, key): a fresh file key (and the command key). */
int txn_new_file_key(struct txn *t, uint8_t key[PQV_FILE_KEY_BYTES]);
/* txn_put_extent(t, sealed, x): append the sealed extent to the current
 * pack (x->pack_id and x->pack_off set); a full pack is written. */
int txn_put_extent(struct txn *t, const uint8_t *sealed, struct extent *x);
int txn_flush_pack(struct txn *t);
/* txn_introduce(t, sp): record ${sp} as a pack this command wrote (its
 * size and hash go into the segment). */
int txn_introduce(struct txn *t, const struct seg_pack *sp);
/* txn_add(t, e): a new entry (moved: ${e} is left empty). */
int txn_add(struct txn *t, struct entry *e);
/* txn_commit(t, kind, all, nall, history, nhistory): steps 2-4; a delta
 * holds the added entries, a base ${all} (every entry of the state) and
 * ${history}.  On failure before the commit point the packs are removed. */
int txn_commit(struct txn *t, int kind, struct entry *const *all, size_t nall,
    const struct seg_history *history, size_t nhistory);
/* txn_abort(t): remove the packs written (best effort). */
void txn_abort(struct txn *t);
void txn_free(struct txn *t);

/* ---- inbox.c: write-only adds (docs/FORMAT.md section 18) ---- */
#define INBOX_DIR "inbox"
#define BATCH_ID_BYTES 16
struct inbox;
void inbox_free(struct inbox *ib);
/* inbox_pack_name(v, id, out): where a write-only writer puts pack ${id}:
 * "inbox/<batch hex>/<pack hex>". */
void inbox_pack_name(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES], char out[STORAGE_NAME_MAX]);
/* inbox_take(v, t): a write-only writer's transaction "commits" into its
 * batch: its entries and packs are copied there (written by
 * pqv_vault_inbox_commit). */
int inbox_take(pqv_vault *v, const struct txn *t);
/* inbox_check(v, report, ctx, res): pending batches reported; unlocked,
 * each opened and its packs' sizes checked (damage counted in res). */
int inbox_check(pqv_vault *v, pqv_report_fn report, void *ctx, struct pqv_check_result *res);
/* inbox_parse_body(hex, p, len, n) and inbox_open_batch(v, hex, blob, len,
 * n): the batch body's parser, and a whole batch verified and parsed
 * (unlocked ${v}); *${n} its entries.  For the fuzzers and unit tests. */
int inbox_parse_body(const char *hex, const uint8_t *p, size_t len, size_t *n);
int inbox_open_batch(pqv_vault *v, const char *hex, const uint8_t *blob, size_t len, size_t *n);

/* ---- check_v1.c: check and gc of format 1 (arguments checked) ---- */
int check_v1(pqv_vault *v, const struct pqv_check_options *opt, struct pqv_check_result *result);
int check_v1_gc(pqv_vault *v, const struct pqv_check_options *opt, struct pqv_check_result *result);
/* check_v1_keyfile_status(v, report, ctx, res): a key file that could not be
 * read at open: damage if damaged, else reported as not checked. */
void check_v1_keyfile_status(pqv_vault *v, pqv_report_fn report, void *report_ctx,
    struct pqv_check_result *res);

/* ---- upgrade.c ---- */
/* upgrade_if_needed(v, report, ctx): a format-1 vault upgraded to format 2
 * (docs/FORMAT.md section 17), or an interrupted upgrade finished; no-op
 * for format 2.  Requires unlock+lock. */
int upgrade_if_needed(pqv_vault *v, pqv_report_fn report, void *ctx);
/* upgrade_finish_interrupted(v, report, ctx): only an interrupted upgrade
 * finished (a format-1 config beside segment 1); requires unlock+lock. */
int upgrade_finish_interrupted(pqv_vault *v, pqv_report_fn report, void *ctx);

/* ---- compact.c (format 2) ---- */
/* Deltas after which a writing command compacts the chain into a base. */
#define COMPACT_AFTER 64
/* compact(v, st, report, ctx, epoch): the loaded state ${st} as a base
 * segment of the next epoch (file keys under a new command key; the chain
 * values of every earlier epoch as its history); *${epoch} its epoch. */
int compact(pqv_vault *v, struct state *st, pqv_report_fn report, void *ctx, uint64_t *epoch);
/* compact_if_long(v, report, ctx): after a commit, compact when the chain
 * holds more than COMPACT_AFTER deltas, then delete the segments before the
 * new base; a failure is reported, not returned (the commit stands). */
int compact_if_long(pqv_vault *v, pqv_report_fn report, void *ctx);
/* compact_drop_old_segments(v, base): delete segments older than ${base}
 * (best effort: leftovers otherwise, which check reports and gc removes). */
void compact_drop_old_segments(pqv_vault *v, uint64_t base);

/* ---- localstate.c (format 2) ---- */
/* What this machine last saw of a vault. */
struct localstate {
    int known;                   /* a state file was there (else first use) */
    int format;                  /* the vault's format as seen then (2 or more) */
    uint64_t epoch;
    uint8_t chain[32];
};
/* localstate_load(v, seen): read the last state this machine saw, BEFORE
 * the vault is listed: whatever it records was committed before the
 * listing began, so a listing that does not show it is a rollback, never a
 * writer that committed meanwhile.  PQV_E_INTEGRITY if the file is
 * damaged; ${seen}->known 0 without one (or without a state directory). */
int localstate_load(pqv_vault *v, struct localstate *seen);
/* localstate_check(v, seen, st, report, ctx): compare ${st} with ${seen}:
 * PQV_E_INTEGRITY for a rollback or a fork; a first contact is accepted
 * (and reported), and recorded; a newer epoch is recorded. */
int localstate_check(pqv_vault *v, const struct localstate *seen, const struct state *st,
    pqv_report_fn report, void *ctx);
/* localstate_record(v, epoch, chain, replace): remember ${epoch} (no-op
 * without a state directory).  Under a lock on the state file, and never
 * going back to an older epoch than the file holds (two commands of one
 * machine racing) unless ${replace} (accept). */
int localstate_record(pqv_vault *v, uint64_t epoch, const uint8_t chain[32], int replace);
/* localstate_forget(v): remove this vault's state file (a failed init's;
 * best effort). */
void localstate_forget(pqv_vault *v);

/* ---- source.c ---- */
/* A file being added, read through one descriptor. */
struct source {
    int fd;
    struct stat st;              /* its state at open: what is stored */
};
/* Returned (positive) when the file changed while it was read. */
#define SOURCE_CHANGED 1
/* source_open(src, rootfd, root, rel, what): open ${rel} below ${rootfd}
 * (path ${root}) for reading: no link followed, a regular file only. */
int source_open(struct source *src, int rootfd, const char *root, const char *rel,
    const char *what);
/* source_read(src, offset, buf, len, what): exactly ${len} bytes at
 * ${offset}, or SOURCE_CHANGED if the file is shorter now. */
int source_read(struct source *src, uint64_t offset, uint8_t *buf, size_t len, const char *what);
/* source_unchanged(src, rootfd, root, rel, what): 0 if the descriptor and
 * the path still show the state of source_open, else SOURCE_CHANGED. */
int source_unchanged(struct source *src, int rootfd, const char *root, const char *rel,
    const char *what);
void source_close(struct source *src);

/* ---- dest.c ---- */
/* Restore destinations (never following links below the directory the
 * user named). */
struct dest_dir {
    int fd;
    dev_t dev;
    ino_t ino;
};
struct dest {
    int rootfd;                 /* the directory the user named */
    char *root;                 /* its path */
    struct dest_dir *dirs;      /* directories to sync (names given in them) */
    size_t ndirs;
    char **cleaned;             /* directories already visited */
    size_t ncleaned;
    int batched;                /* a tree restore: directories made and given
                                   attributes unsynced; each batch ends with one
                                   syncfs per file system (dest_sync_dirs), the
                                   restore with dest_sync_all */
};
struct dest_file {
    int dirfd;                  /* the file's directory */
    char base[256];             /* its name there */
    char *display;              /* its path, for messages (owned: a batch outlives
                                 * the caller's buffer) */
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
/* dest_name_file(d, f, force): give the (synced) file its name (over an
 * existing one only with ${force}); its directory is noted for
 * dest_sync_dirs; closes ${f}. */
int dest_name_file(struct dest *d, struct dest_file *f, int force);
/* dest_note_dir(d, dirfd) / dest_sync_dirs(d): sync each directory that
 * received names once. */
int dest_note_dir(struct dest *d, int dirfd);
int dest_sync_dirs(struct dest *d);
/* dest_symlink(d, rel, display, target, force, meta): a symbolic link
 * (never followed), with its own owner and times. */
int dest_symlink(struct dest *d, const char *rel, const char *display, const char *target,
    int force, const struct durable_meta *meta);
/* dest_hardlink(d, existing, rel, display, force): ${rel} as another name
 * of the restored file ${existing}. */
int dest_hardlink(struct dest *d, const char *existing, const char *rel, const char *display,
    int force);
/* dest_open_dir(d, rel, fd): a restored directory (for its attributes). */
int dest_open_dir(struct dest *d, const char *rel, int *fd);
/* dest_close_file(f): abandon (the temporary is removed). */
void dest_close_file(struct dest_file *f);
/* dest_exists(d, rel): whether something is at ${rel} (not following). */
int dest_exists(struct dest *d, const char *rel);
/* dest_make_dir(d, rel): create the directory ${rel} (and parents). */
int dest_make_dir(struct dest *d, const char *rel);
/* dest_sync_all(d): a batched restore's last sync (directories'
 * attributes): one syncfs of the destination's file system. */
int dest_sync_all(struct dest *d);
/* dest_set_dir_meta(d, rel, display, meta): set a restored directory's mode
 * and times on its descriptor and sync them. */
int dest_set_dir_meta(struct dest *d, const char *rel, const char *display,
    const struct durable_meta *meta);

#endif
