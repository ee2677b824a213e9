/*
 * vault/chunks.h: where format 3's chunks are (chunks.c, docs/FORMAT.md
 * section 23): the chunk records a segment carries (a chunk's identity,
 * its pack and place, its lengths and blob flags), and the index of every
 * record of the chain, newest first, by identity.
 *
 * The index lives in memory only, rebuilt from the chain by every command
 * that needs it: it is as authenticated as the segments it comes from, and
 * nothing of it can be lost or stale on its own.  An open-addressing table
 * of 64-byte records kept at most 3/4 full: about 86 bytes per chunk.
 */
#ifndef PQV_VAULT_CHUNKS_H
#define PQV_VAULT_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#include "vault/chunk.h"
#include "vault/entry.h"
#include "pqvault/vault.h"

/* A chunk's place (FORMAT.md section 23). */
struct chunk_rec {
    uint8_t id[CHUNK_ID_BYTES];
    uint8_t pack_id[PACK_ID_BYTES];
    uint32_t pack_off;           /* from the end of the pack's 8-byte header */
    uint32_t stored_len;         /* the blob's length */
    uint32_t plain_len;
    uint8_t flags;               /* blob flags (chunk.h) */
};

struct chunk_index {
    struct chunk_rec *slots;     /* id all zeros: empty */
    size_t cap, n;
    int borrowed;                /* a copy of a cached index (segment_cache.h): read only,
                                    chunks_free frees nothing */
};

/* chunks_put(ix, r): record ${r}, replacing an older record of its id
 * (callers go from the oldest segment to the newest). */
int chunks_put(struct chunk_index *ix, const struct chunk_rec *r);
/* chunks_reserve(ix, n): room for ${n} records without growing. */
int chunks_reserve(struct chunk_index *ix, size_t n);
/* chunks_find(ix, id): the record of ${id}, or NULL. */
const struct chunk_rec *chunks_find(const struct chunk_index *ix, const uint8_t id[CHUNK_ID_BYTES]);
/* chunks_get(ix, id): the same, to change (its identity must stay). */
struct chunk_rec *chunks_get(struct chunk_index *ix, const uint8_t id[CHUNK_ID_BYTES]);
void chunks_free(struct chunk_index *ix);

/* chunks_sort(recs, n): by identity (how a segment stores them). */
void chunks_sort(struct chunk_rec *recs, size_t n);
/* chunks_locate(ix, e): the places of ${e}'s chunks from ${ix} (a chunk
 * without a record stays unlocated: reading it is an integrity error). */
void chunks_locate(const struct chunk_index *ix, struct entry *e);

/* chunks_of_state(v, st, w): st->chunks loaded from every segment of the
 * chain, oldest first (a newer record of an identity replaces an older
 * one: a repack moved it).  A damaged chunk block is skipped (its chunks
 * are then unlocated) and counted in st->chunks_damaged; with ${w}
 * counting damage it is reported, without the first one's failure is
 * returned (PQV_E_INTEGRITY), the index loaded all the same. */
struct state;
struct names_walk;
int chunks_of_state(pqv_vault *v, struct state *st, const struct names_walk *w);

#endif
