/*
 * vault/state.h: the catalogue's current state (state.c): the verified chain
 * of segments, every entry loaded on demand, lookups by name, file keys.
 * Format 1 is seen through it (records as entries).
 */
#ifndef PQV_VAULT_STATE_H
#define PQV_VAULT_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "util/error.h"
#include "vault/chunks.h"
#include "vault/entry.h"
#include "vault/names.h"
#include "vault/segment.h"

struct record;

struct state {
    int format;                  /* 1 or 2 */
    uint64_t epoch, base;        /* newest epoch, its base (format 2) */
    uint8_t chain[32];           /* chain(epoch) */
    struct segment *segs;        /* base first, newest last */
    size_t nsegs;
    struct entry *entries;       /* every entry, sorted by name, once loaded */
    size_t n;
    int loaded;
    uint64_t xattr_entries;      /* once loaded: entries with extended attributes in
                                    its segments, the superseded ones included */
    struct chunk_index chunks;   /* format 3: every chunk record of the chain */
    int chunks_loaded;
    uint64_t chunks_damaged;     /* chunk blocks that did not open: their records unknown */
    struct error_saved chunks_error; /* the first one's failure */
};
/* state_open(v, st, w): the current state (format 2: heads and chain
 * verified; format 1: every record loaded).  ${w} as for names_walk. */
int state_open(pqv_vault *v, struct state *st, const struct names_walk *w);
/* state_v1_check(v): a config of format 1 is believed only for a
 * format-1 vault (no segment, not seen here as format 2) or a half-finished
 * upgrade (segment 1 alone, its base, verifying; if seen here, seen at epoch
 * 1 with its chain value); anything else is a downgrade (PQV_E_INTEGRITY).
 * v->config is replaced if the vault was upgraded meanwhile.  Unlocked
 * vaults only (a no-op otherwise, and for format 2). */
int state_v1_check(pqv_vault *v);
/* state_newest_epoch(v, w, epoch): the newest epoch of segments/ (0: no
 * segment).  ${w} as for names_walk. */
int state_newest_epoch(pqv_vault *v, const struct names_walk *w, uint64_t *epoch);
/* state_v1_load(v, st, w): every record of a format-1 vault as an entry
 * in ${st} (unsorted; state_load sorts them). */
int state_v1_load(pqv_vault *v, struct state *st, const struct names_walk *w);
/* state_v1_lookup(v, name, out): the format-1 record of ${name} as an entry. */
int state_v1_lookup(pqv_vault *v, const char *name, struct entry *out);
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
 * ${prefix} or below it (if there is none: st->n, or an entry that is not
 * under it); state_next_under(st, prefix, i): after the entry ${i} under
 * ${prefix}, the next one (or, after the last, one that is not under it).
 * The entries below a prefix are contiguous, but the prefix itself may be
 * apart from them: "prefix-1" or "prefix.bak" sort between ('-' and '.'
 * come before '/'), so iterate with
 *     for (i = state_first_under(st, p); i < st->n && names_under(st->entries[i].name, p);
 *          i = state_next_under(st, p, i)) */
size_t state_first_under(const struct state *st, const char *prefix);
size_t state_next_under(const struct state *st, const char *prefix, size_t i);
/* state_segment(st, epoch): the segment of ${epoch} in the chain, or NULL. */
const struct segment *state_segment(const struct state *st, uint64_t epoch);
/* state_v1_entry_of_record(r, e): a format-1 record as an entry (its extents are
 * its objects, KEY_V1: its key comes from its record when data is read). */
int state_v1_entry_of_record(const struct record *r, struct entry *e);
/* state_origin(st, name, out, outlen): where ${name} was added from (its
 * recorded origin, or its nearest ancestor's with the rest of the name);
 * 0, or -1 if unknown.  ${st} loaded. */
int state_origin(const struct state *st, const char *name, char *out, size_t outlen);
/* state_file_key(v, st, e, key): the clear file key of ${e}. */
int state_file_key(pqv_vault *v, struct state *st, const struct entry *e,
    uint8_t key[PQV_FILE_KEY_BYTES]);
void state_free(struct state *st);

/* state_read_entries(v, st, w, out, n): every entry of ${st}'s segments
 * (a name once per segment that has it), in one array: a damaged block's
 * entries left out and reported through ${w} when it counts damage (else
 * the failure). */
int state_read_entries(pqv_vault *v, struct state *st, const struct names_walk *w,
    struct entry **out, size_t *n);

#endif
