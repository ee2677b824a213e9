/*
 * vault/writers.h: write-only writers the owner issued, and the inbox
 * batches imported (writers.c, docs/FORMAT.md section 19, docs/DESIGN.md
 * section 6).  Both are kept in the chain, in the head extensions of every
 * segment (each carries the whole registry forward, as the superseded key
 * file hashes are): a writer is registered, revoked and its batches
 * recorded by epochs of their own, and compaction keeps them.
 */
#ifndef PQV_VAULT_WRITERS_H
#define PQV_VAULT_WRITERS_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "vault/inbox.h"
#include "vault/segment.h"

#define WRITER_NAME_MAX 64
#define WRITER_KEY_BYTES 32             /* the MAC key of its batches */

/* A writer the owner issued a credential to. */
struct writer {
    char name[WRITER_NAME_MAX + 1];     /* [A-Za-z0-9._-], 1 to 64 bytes */
    char *prefix;                       /* the stored names it may write, under this */
    uint64_t generation;                /* bumped when the name is issued again */
    uint64_t since;                     /* the epoch that issued it */
    int revoked;
};

/* A batch imported (its files then deleted: confirmed once an import
 * finds them gone). */
struct imported {
    uint8_t id[BATCH_ID_BYTES];
    uint64_t epoch;
    int confirmed;
};

struct registry {
    struct writer *w;                   /* by name */
    size_t nw;
    struct imported *imp;               /* by id */
    size_t nimp;
};

/* writers_load(s, r): the registry that segment ${s} carries
 * (PQV_E_INTEGRITY if its extensions are malformed). */
int writers_load(const struct segment *s, struct registry *r);
/* writers_ext(r, ext, n): the registry as head extensions (none for an
 * empty one); free with segment_ext_free. */
int writers_ext(const struct registry *r, struct seg_ext **ext, size_t *n);
void writers_free(struct registry *r);

/* writers_find(r, name): the writer ${name}, or NULL. */
struct writer *writers_find(const struct registry *r, const char *name);
/* writers_add(r, name, prefix, epoch): issue ${name} (again: a new
 * generation, its earlier credentials refused from now on). */
int writers_add(struct registry *r, const char *name, const char *prefix, uint64_t epoch,
    struct writer **out);
/* writers_valid_name(name): [A-Za-z0-9._-]{1,64}, not "." or "..". */
int writers_valid_name(const char *name);

/* writers_imported(r, id): the record of batch ${id}, or NULL. */
struct imported *writers_imported(const struct registry *r, const uint8_t id[BATCH_ID_BYTES]);
/* writers_record(r, id, epoch): batch ${id} imported in ${epoch}. */
int writers_record(struct registry *r, const uint8_t id[BATCH_ID_BYTES], uint64_t epoch);

/* writers_key(v, name, generation, key): the writer's MAC key, derived
 * from the seed (unlocked ${v}): HKDF-Expand(key("writers"),
 * "pqvault/v2/writer" || generation (8) || name). */
int writers_key(const pqv_vault *v, const char *name, uint64_t generation,
    uint8_t key[WRITER_KEY_BYTES]);

#endif
