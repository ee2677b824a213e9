/*
 * vault/segment_cache.h: the catalogue segments one vault handle has read,
 * kept for the rest of its life so that a command opening the state more
 * than once (resolving --at, then looking a name up, then reading it)
 * reads and authenticates each segment once (segment_cache.c); and the
 * chunk index of the current chain, built once.
 *
 * Why reuse is safe: a segment is named by its epoch and never rewritten
 * once visible (the commit protocol renames it into place whole); what is
 * cached was authenticated when read; and every state assembled from
 * cached segments is checked as a freshly read one is (the chain, the
 * local state).  Only reading handles use it: a handle holding the writer
 * lock reads every segment from the storage (v->locked), and so does a
 * mount, which lives long enough to see segments come and go
 * (v->segcache_off).
 */
#ifndef PQV_VAULT_SEGMENT_CACHE_H
#define PQV_VAULT_SEGMENT_CACHE_H

#include <stdint.h>

#include "vault/chunks.h"
#include "vault/segment.h"

struct pqv_vault;

/* Bytes of segments (sealed blocks and head) one handle keeps at most;
 * a segment read beyond it is the caller's alone, as without the cache. */
#define SEGMENT_CACHE_BUDGET (96u << 20)

/* segment_cache_usable(v): whether ${v} reads through the cache now. */
int segment_cache_usable(const struct pqv_vault *v);

/* segment_cache_find(v, epoch, out): 1 and ${out} a borrowed copy of the
 * cached segment of ${epoch} (segment_free of it frees nothing shared),
 * or 0. */
int segment_cache_find(struct pqv_vault *v, uint64_t epoch, struct segment *out);

/* segment_cache_keep(v, s, bytes): the cache takes ${s} (${bytes} of it
 * read) if the budget allows, leaving in ${s} a borrowed copy; otherwise
 * ${s} stays the caller's.  Never fails: without memory it keeps nothing. */
void segment_cache_keep(struct pqv_vault *v, struct segment *s, uint64_t bytes);

/* segment_cache_part(v, epoch, part, data): the part ${part} of the cached
 * segment of ${epoch} (segment_fetch_part): with ${data} NULL, the one
 * held (NULL: none); otherwise the cache takes ${data} and gives it back,
 * or frees it and gives the one it already holds, or (no such segment)
 * gives NULL and ${data} stays the caller's. */
uint8_t *segment_cache_part(struct pqv_vault *v, uint64_t epoch, int part, uint8_t *data);

/* segment_cache_chunks_find(v, epoch, chain, out): 1 and ${out} a
 * borrowed copy of the chunk index of the chain ending at ${epoch} with
 * ${chain} (chunks_of_state), or 0. */
int segment_cache_chunks_find(struct pqv_vault *v, uint64_t epoch, const uint8_t chain[32],
    struct chunk_index *out);

/* segment_cache_chunks_keep(v, epoch, chain, ix): the cache takes ${ix}
 * (an undamaged chain's whole index) if it holds none yet, leaving in
 * ${ix} a borrowed copy; otherwise ${ix} stays the caller's. */
void segment_cache_chunks_keep(struct pqv_vault *v, uint64_t epoch, const uint8_t chain[32],
    struct chunk_index *ix);

/* segment_cache_free(v): every cached segment freed and its keys wiped
 * (pqv_vault_close). */
void segment_cache_free(struct pqv_vault *v);

#endif
