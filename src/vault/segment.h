/*
 * vault/segment.h: catalogue segments of format 2 (segment.c, docs/FORMAT.md
 * sections 10-12): building one, opening its header and head, and its blocks
 * of entries on demand.
 */
#ifndef PQV_VAULT_SEGMENT_H
#define PQV_VAULT_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "util/buf.h"
#include "vault/chunks.h"
#include "vault/entry.h"
#include "vault/names.h"

#define SEGMENT_HEADER_BYTES 72
#define MAX_SEGMENT_BYTES (2ull << 30)  /* read no larger segment */
/* Nor a larger sealed head, read before it is authenticated (about 5
 * million packs in one base, some 20 TiB of stored data). */
#define MAX_SEGMENT_HEAD_BYTES (256u << 20)
enum { SEGMENT_DELTA = 1, SEGMENT_BASE = 2 };
enum { SEGMENT_PART_ENTRIES = 0, SEGMENT_PART_CHUNKS = 1 };

struct seg_block {
    uint8_t first[TAG_BYTES];    /* tag of its first entry */
    uint64_t off, len;           /* after the head; sealed length */
    uint64_t n;                  /* entries */
};

/* A block of chunk records (format 3), after the blocks of entries. */
struct seg_cblock {
    uint64_t off, len;           /* after the head; sealed length */
    uint64_t n;                  /* records */
};

struct seg_history {
    uint64_t epoch;
    uint8_t chain[32];
};

/* An opened segment: header, head, and its sealed blocks. */
/* Head extensions (head version 2, docs/FORMAT.md section 11): typed byte
 * strings after the head's fields, which their owners parse (writers.c); a
 * reader refuses an unknown one marked critical, skips an unknown other. */
enum { SEG_EXT_WRITERS = 1, SEG_EXT_IMPORTED = 2,   /* writers.c */
    SEG_EXT_SNAPSHOT = 3,       /* snapshots.c: a segment's own snapshot */
    SEG_EXT_KEPT = 4,           /* a base: the snapshots kept before it */
    SEG_EXT_FORGET = 5,         /* a delta: snapshots forgotten, pins */
    SEG_EXT_KNOWN = 5 };        /* the last type this pqvault knows */
enum { SEG_EXT_CRITICAL = 1 };          /* extension flags */
#define SEG_EXT_MAX (64u << 20)         /* bytes of one extension */
struct seg_ext {
    uint64_t type;
    uint8_t flags;
    uint8_t *data;
    size_t len;
};
/* segment_ext(s, type): the extension ${type} of ${s}, or NULL. */
struct segment;
const struct seg_ext *segment_ext(const struct segment *s, uint64_t type);
void segment_ext_free(struct seg_ext *ext, size_t n);

struct segment {
    uint64_t epoch;
    int version;                     /* 2, or 3 (format 3: chunk records) */
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
    struct seg_cblock *cblocks;      /* chunk records (format 3) */
    size_t ncblocks;
    uint64_t nchunks;
    uint8_t *blockdata;              /* the sealed blocks, read whole (NULL: read on demand) */
    uint64_t blocklen;
    /* A large segment's blocks are read when needed (state_read_segment):
     * one block alone for a lookup, or one part whole (the entry blocks,
     * SEGMENT_PART_ENTRIES, or the chunk blocks, SEGMENT_PART_CHUNKS) for
     * a walk of them (segment_fetch_part). */
    uint64_t data_off;               /* where the blocks start in the segment's object */
    uint8_t *part[2];                /* each part once read (NULL: not yet) */
    unsigned part_own;               /* bit ${part}: a borrowed segment's own part */
    struct seg_ext *ext;             /* head extensions */
    size_t next;
    uint8_t key[32];                 /* K_seg */
    int cmd_key_known;
    uint8_t cmd_key[32];             /* unwrapped on first need */
    int borrowed;                    /* a copy of a cached segment (segment_cache.h):
                                        segment_free frees nothing it points to */
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
    const struct seg_ext *ext;       /* head extensions (none: a version-1 head) */
    size_t next;
    const struct chunk_rec *chunks;  /* format 3: chunk records, sorted by identity */
    size_t nchunks;
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
/* segment_part_span(s, part, lo, hi): where ${part}'s blocks lie, from the
 * first block's start. */
void segment_part_span(const struct segment *s, int part, uint64_t *lo, uint64_t *hi);
/* segment_fetch_part(v, s, part): ${part} of a segment read on demand read
 * whole, in one request, before its blocks are walked (a no-op when it is
 * already at hand).  A borrowed segment's part is the cache's. */
int segment_fetch_part(pqv_vault *v, struct segment *s, int part);
/* segment_block(v, s, i, out, n): the entries of block ${i}, verified.
 * segment_block_into(v, s, i, es): the same into ${es}, zeroed, with room
 * for segment_block_room(s, i) entries (the count the block's index says,
 * bounded by its bytes: each entry takes 3 at least): all of them set, or
 * none (cleared) on failure. */
int segment_block(pqv_vault *v, const struct segment *s, size_t i, struct entry **out, size_t *n);
size_t segment_block_room(const struct segment *s, size_t i);
int segment_block_into(pqv_vault *v, const struct segment *s, size_t i, struct entry *es);
/* segment_chunks(v, s, i, out, n): the chunk records of chunk block ${i},
 * verified (sorted by identity, each pack in the segment's pack table). */
int segment_chunks(pqv_vault *v, const struct segment *s, size_t i, struct chunk_rec **out,
    size_t *n);
void segment_free(struct segment *s);
/* segment_parse_head(s, plain, len) and segment_parse_chunks(s, i, plain,
 * len, n, out): the parsers of an opened head (s->version, kind, epoch and
 * nblocks set from the header) and of chunk block ${i}'s plaintext (${n}
 * records, their packs from ${s}'s table).  For the fuzzers and tests;
 * segment_open_head and segment_chunks open and call them. */
int segment_parse_head(struct segment *s, const uint8_t *plain, size_t len);
int segment_parse_chunks(const struct segment *s, size_t i, const uint8_t *plain, size_t len,
    uint64_t n, struct chunk_rec **out);

#endif
