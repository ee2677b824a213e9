/*
 * vault/readahead.h: reads of packs coalesced over a remote storage
 * (PQV_STORAGE_REMOTE: S3).  A restore, a check or a mount reads a tree's
 * small files in the order an add wrote them, so their chunks follow one
 * another in a pack; over a network each ranged GET costs a round trip
 * (restoring /usr/share/doc, 5,600 files, through 10 ms of latency took
 * 80 s, one GET a chunk).  A small read that starts where the previous
 * read of the same pack ended (or a little further) is served from a
 * window read ahead of it in one request: 256 KiB first, doubling up to
 * 4 MiB as the reads go on, never past the pack's end; any other read, and
 * every large one, goes to the storage as it is.  The windows hold
 * ciphertext only (every chunk is verified when opened), a few of them,
 * least recently used replaced; a reader that needs a window being read
 * waits for it.  The reads that went alone are kept a while too (a chunk
 * shared by many files restored one after another).  A reader that knows
 * what it will read says so first (a plan, below): its reads come in
 * windows over exactly those.  docs/DESIGN.md, "Reading packs over a
 * network" and "A restore's plan".
 */
#ifndef PQV_VAULT_READAHEAD_H
#define PQV_VAULT_READAHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/storage.h"

#define READAHEAD_WINDOWS 4
/* Windows a plan's reads may hold (the first READAHEAD_WINDOWS shared). */
#define READAHEAD_PLANNED_WINDOWS 8
/* Reads a plan holds at most (24 bytes each); a restore's reads past them
 * go unplanned. */
#define READAHEAD_PLAN_MAX (1u << 21)
/* Reads readahead_plan_expect keeps announced at most. */
#define READAHEAD_EXPECT_MAX 8192
#define READAHEAD_STREAMS 8
/* Reads of at least this many bytes go straight to the storage. */
#define READAHEAD_SMALL (256u << 10)
#define READAHEAD_FIRST (256u << 10)
#define READAHEAD_MAX (4u << 20)
/* A read starting at most this far past where the pack's last read ended
 * is the next one (the chunks of a file not restored lie between). */
#define READAHEAD_GAP (64u << 10)
/* Reads that went alone, kept (at most this many, this many bytes; a
 * large one only once read twice lately): a chunk many files share (the
 * same copyright file in dozens of packages' docs) is read again as each
 * file is restored. */
#define READAHEAD_RECENT 32
#define READAHEAD_RECENT_BYTES (8u << 20)

struct readahead;

/* readahead_storage_remote(storage): 1 if ${storage} says each request
 * crosses a network (PQV_STORAGE_REMOTE, ops version 4 on). */
int readahead_storage_remote(const pqv_storage *storage);

/* readahead_new(storage): a read-ahead over ${storage}, or NULL if the
 * storage is not remote (or memory is short: then reads go straight).
 * readahead_free(ra): its windows freed (NULL: nothing). */
struct readahead *readahead_new(pqv_storage *storage);
void readahead_free(struct readahead *ra);

/* readahead_get_range(ra, storage, name, offset, buf, len): exactly ${len}
 * bytes of blob ${name} at ${offset}, as storage->ops->get_range gives
 * them (its errors too); ${ra} NULL: that call alone.  Thread-safe. */
int readahead_get_range(struct readahead *ra, pqv_storage *storage, const char *name,
    uint64_t offset, uint8_t *buf, size_t len);

/*
 * A plan: the reads a restore announces before it starts (each chunk of
 * each file it will restore, as often as it will read it).  A read the
 * plan holds is served from a window that reaches over the planned reads
 * after it in its blob (up to READAHEAD_MAX, across gaps of at most
 * READAHEAD_GAP, never over bytes already read or another window): no
 * size to ask, no small first windows, no bytes nobody will read; a window
 * is freed once every planned read in it was made.  A restore over S3
 * then reads each pack in a few requests, as restic's restorer does, and
 * its workers wait on each other's windows instead of each starting its
 * own.  Reads the plan does not hold go as before.
 *
 * readahead_plan_new(): an empty plan, NULL if memory is short.
 * readahead_plan_add(p, name, off, len): a read of [off, off + len) of
 * blob ${name} announced (again: once more); 0, or PQV_E_NOMEM, or
 * PQV_E_INVAL past READAHEAD_PLAN_MAX reads or for a name too long (the
 * plan keeps what it had).
 * readahead_plan_set(ra, p): ${p} used from now on (taken over; sorted
 * here), the previous plan freed; NULL: none.  ${ra} NULL: ${p} freed.
 * Call it with no read of ${ra} under way (before and after a restore).
 * readahead_plan_free(p): ${p} freed (NULL: nothing).
 */
struct readahead_plan;
struct readahead_plan *readahead_plan_new(void);
/* readahead_plan_expect(ra, name, off, len): one read announced while reads go
 * on (a mount's prefetch queueing a walk's next chunks): added to the
 * plan, made if there is none; past READAHEAD_EXPECT_MAX reads those made
 * and the oldest are dropped (not for a plan readahead_plan_set gave: the
 * two are not mixed).  0, PQV_E_NOMEM, PQV_E_INVAL as readahead_plan_add;
 * ${ra} NULL: 0, nothing. */
int readahead_plan_expect(struct readahead *ra, const char *name, uint64_t off, size_t len);
int readahead_plan_add(struct readahead_plan *p, const char *name, uint64_t off, size_t len);
void readahead_plan_set(struct readahead *ra, struct readahead_plan *p);
void readahead_plan_free(struct readahead_plan *p);

/* readahead_counts(ra, requests, served): the windows read and the reads
 * served from them so far (for tests). */
void readahead_counts(struct readahead *ra, uint64_t *requests, uint64_t *served);
/* readahead_plan_left(ra): the plan's reads still to be made (for tests). */
uint64_t readahead_plan_left(struct readahead *ra);

#endif
