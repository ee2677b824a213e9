/*
 * vault/entry.h: catalogue entries (entry.c, docs/FORMAT.md section 13): the
 * in-memory entry, its codec, and the string and pack tables of the
 * segment (or batch) that holds it.
 */
#ifndef PQV_VAULT_ENTRY_H
#define PQV_VAULT_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/aead.h"
#include "pqvault/vault.h"
#include "vault/chunk.h"

#define PACK_ID_BYTES 16
#define TAG_BYTES 16
/* Kinds of entries: the public types' codes (pqv_entry.type), and a removed
 * name, which only the catalogue holds (kinds.h has their table).  FIFOs
 * and device nodes: only in segments (and batches) of format 3. */
enum { KIND_FILE = PQV_ENTRY_FILE, KIND_DIR = PQV_ENTRY_DIR, KIND_SYMLINK = PQV_ENTRY_SYMLINK,
    KIND_REMOVED = 4, KIND_FIFO = PQV_ENTRY_FIFO, KIND_CHARDEV = PQV_ENTRY_CHARDEV,
    KIND_BLOCKDEV = PQV_ENTRY_BLOCKDEV };
/* KIND_IS_DEVICE(kind): a character or block device node. */
#define KIND_IS_DEVICE(kind) ((kind) == KIND_CHARDEV || (kind) == KIND_BLOCKDEV)
/* Entry flags; ENTRY_CHUNKED: a file of format 3 made of chunks (only in
 * segments of format 3). */
enum { ENTRY_ORIGIN = 1, ENTRY_HLGROUP = 2, ENTRY_XATTRS = 4, ENTRY_CONTENT = 8,
    ENTRY_CHUNKED = 16 };
#define MAX_XATTR_VALUE (64u << 10)     /* bytes of one extended attribute's value */
/* A file's size (FORMAT.md section 13): 1 PiB, beyond what real sparse
 * files reach, so that no entry describes an endless stream of zeros. */
#define MAX_FILE_BYTES (1ull << 50)
enum { EXTENT_ZSTD = 1 };                                         /* extent flags */
enum { PACK_INTRODUCED = 1, PACK_V1_OBJECT = 2 };                 /* pack table flags */
/* What e->key holds. */
enum { KEY_NONE = 0, KEY_STORED = 1, KEY_CLEAR = 2, KEY_V1 = 3 };

/* A piece of a file's data: an extent of format 1 or 2 (its blob sealed
 * under the file's key), or a chunk of format 3 (named by its identity; its
 * place comes from the chain's chunk records, filled in when the entry is
 * loaded: state_resolve). */
struct extent {
    uint64_t file_off;
    uint32_t plain_len;
    uint32_t stored_len;
    uint32_t pack_off;
    uint8_t flags;               /* EXTENT_ZSTD; a chunk's blob flags (chunk.h) */
    uint8_t pack_id[PACK_ID_BYTES];
    uint8_t pack_flags;          /* PACK_V1_OBJECT: a format-1 object */
    uint8_t chunk;               /* a chunk of format 3 (chunk_id) */
    uint8_t located;             /* a chunk: its place is known */
    uint8_t chunk_id[CHUNK_ID_BYTES];
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
    int chunked;                 /* a file of chunks (format 3): no file key */
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
    uint32_t rdev_major, rdev_minor; /* device nodes: the device number */
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
    int chunks;                  /* format 3: chunked file entries allowed */
    int special;                 /* FIFOs and device nodes allowed (format 3,
                                    and writers' batches: batch.c) */
};

void entry_clear(struct entry *e);
/* entry_check_size(name, size): PQV_E_INVAL for a file larger than
 * MAX_FILE_BYTES (what a reader refuses is never written). */
int entry_check_size(const char *name, uint64_t size);
/* entry_removed(e, name): ${e} as the removed entry of ${name}. */
int entry_removed(struct entry *e, const char *name);
/* entry_copy(dst, src): a deep copy. */
int entry_copy(struct entry *dst, const struct entry *src);
/* entry_sort_by_name(e, n, newest_first, along): the ${n} entries ${e}
 * sorted by name, a name's entries by epoch (newest first if
 * ${newest_first}, else oldest), ties in their order; ${along} (NULL, or
 * ${n} values) permuted with them.  The keys are sorted and the entries
 * then moved once each (an entry is large): 0 or PQV_E_NOMEM (nothing
 * moved). */
int entry_sort_by_name(struct entry *e, size_t n, int newest_first, uint32_t *along);
/* entry_same_data(a, b): two files holding the same data: the same size
 * and extents, each the same chunk (format 3: a chunk is its identity) or
 * the same shared extent of a pack (format 2: equal files share one). */
int entry_same_data(const struct entry *a, const struct entry *b);
/* entry_encode(out, e, t, stored_key): append ${e} (its file key as
 * ${stored_key}), adding its strings and packs to ${t}. */
struct buf;
struct cursor;
int entry_encode(struct buf *out, const struct entry *e, struct seg_tables *t,
    const uint8_t *stored_key);
/* entry_decode(c, e, t): the next entry; PQV_E_INTEGRITY if malformed. */
int entry_decode(struct cursor *c, struct entry *e, const struct seg_tables *t);
/* entry_file_encode / entry_file_decode, entry_symlink_encode /
 * entry_symlink_decode: what a file and a link add after the common
 * fields (kinds.c's rows). */
int entry_file_encode(struct buf *b, const struct entry *e, struct seg_tables *t,
    const uint8_t *stored_key);
int entry_file_decode(struct cursor *in, struct entry *e, const struct seg_tables *t);
int entry_symlink_encode(struct buf *b, const struct entry *e, struct seg_tables *t,
    const uint8_t *stored_key);
int entry_symlink_decode(struct cursor *in, struct entry *e, const struct seg_tables *t);
/* entry_device_encode / entry_device_decode: a device node's number
 * (major, minor; FORMAT.md section 13); a FIFO adds nothing. */
int entry_device_encode(struct buf *b, const struct entry *e, struct seg_tables *t,
    const uint8_t *stored_key);
int entry_device_decode(struct cursor *in, struct entry *e, const struct seg_tables *t);
/* entry_tables_pack(t, id, flags, index): the index of pack ${id} (added). */
int entry_tables_pack(struct seg_tables *t, const uint8_t id[PACK_ID_BYTES], uint8_t flags,
    uint64_t *index);
void entry_tables_free(struct seg_tables *t);

/* list_public_entry(e, out): the public form of an entry (list.c). */
int list_public_entry(const struct entry *e, struct pqv_entry *out);

#endif
