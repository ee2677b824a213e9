/*
 * vault/txn.h: one writing command of format 2, one epoch (txn.c,
 * docs/DESIGN.md section 3).
 */
#ifndef PQV_VAULT_TXN_H
#define PQV_VAULT_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/vault.h"
#include "util/buf.h"
#include "vault/names.h"
#include "vault/entry.h"
#include "vault/segment.h"
#include "vault/state.h"

struct txn;
struct snapshot;

/*
 * Where a transaction's packs go and how it commits, handed to the
 * transaction by the vault structure (v->sink) rather than tested as a mode
 * in every module (as restic's packer manager is handed a queueFn): the
 * owner's vault (txn_owner_sink: packs/, segment N+1, compaction) or a
 * write-only writer's batch (inbox.c: inbox/<B>/, the batch file).
 */
struct txn_sink {
    /* ready(v): 0 if ${v} may write through this sink (the owner: unlocked,
     * writer lock held). */
    int (*ready)(const pqv_vault *v);
    /* prepare(v, report, ctx): before a command plans (the owner: upgrade
     * an older format). */
    int (*prepare)(pqv_vault *v, pqv_report_fn report, void *ctx);
    /* open_state(v, st): the state a command builds on, loaded (a writer
     * sees none: every name is new to it). */
    int (*open_state)(pqv_vault *v, struct state *st);
    /* pack_name(v, id, out): the storage name of pack ${id}. */
    void (*pack_name)(const pqv_vault *v, const uint8_t id[PACK_ID_BYTES],
        char out[STORAGE_NAME_MAX]);
    /* take(v, t): the commit, once the packs are durable: NULL for the
     * owner's segment (txn_commit), else the entries handed over. */
    int (*take)(pqv_vault *v, const struct txn *t);
    /* after(v, report, ctx): once a command committed (the owner: compact
     * a long chain); a failure is reported, the commit stands (only running
     * out of memory is returned). */
    int (*after)(pqv_vault *v, pqv_report_fn report, void *ctx);
    /* release(ctx): the sink's context freed with the vault structure. */
    void (*release)(void *ctx);
    /* prefix(v): a stored name every operand goes under (a writer's
     * credential's), or NULL; NULL for none. */
    const char *(*prefix)(const pqv_vault *v);
    /* root(v, name): an operand stored as ${name} (a writer's batch lists
     * them); NULL for none. */
    int (*root)(pqv_vault *v, const char *name);
    int command_key;             /* file keys stored under a wrapped command key */
    int content_hashes;          /* key("dedup") is known: equal files found */
    int chunks;                  /* format 3's chunks (the owner: the seed's keys) */
    int devices;                 /* device nodes stored (a write-only writer's
                                    batch holds none: docs/SECURITY.md) */
    int uses_keyfile;            /* the key file is this writer's (a write-only
                                    writer never touches it, not even by stat) */
};

/* The owner's sink: packs in packs/, segment N+1, compaction. */
extern const struct txn_sink txn_owner_sink;

struct txn {
    pqv_vault *v;
    struct state *st;            /* what it builds on */
    uint8_t cmd_key[32];         /* K_cmd, made with the first file key */
    uint8_t *wrap;
    size_t wraplen;
    struct entry **entries;      /* new entries (owned) */
    size_t n, cap;
    struct seg_pack *introduced; /* packs introduced */
    unsigned char *created;      /* created[i]: introduced[i] is this command's */
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
    struct seg_ext *ext;         /* head extensions of the new segment: carried
                                    from the newest one unless a command sets them */
    size_t next;
    int pack3;                   /* the pack being filled is of format 3 */
    struct chunk_rec *pack_recs; /* its chunks (its table) */
    size_t npack_recs, cappack_recs;
    struct chunk_rec *chunks;    /* format 3: the segment's chunk records */
    size_t nchunks, capchunks;
    struct snapshot *snap;       /* the command, if its epoch is a snapshot (not owned;
                                    its counts filled at the commit) */
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
/* txn_put_chunk(t, blob, r): append a chunk's blob (r->stored_len bytes)
 * to the current pack of format 3 and record it (r's pack and offset set);
 * a full pack is written. */
int txn_put_chunk(struct txn *t, const uint8_t *blob, struct chunk_rec *r);
/* txn_record_chunk(t, r): a chunk record for the segment, its blob already
 * in a pack (one adopted, or moved by a repack). */
int txn_record_chunk(struct txn *t, const struct chunk_rec *r);
/* txn_introduce(t, sp, created): record ${sp} as a pack this command
 * introduces (its size and hash go into the segment); ${created}: this
 * command made it, so a failure before the commit removes it (a command
 * never deletes a pack it did not create). */
int txn_introduce(struct txn *t, const struct seg_pack *sp, int created);
/* txn_add(t, e): a new entry (moved: ${e} is left empty). */
int txn_add(struct txn *t, struct entry *e);
/* txn_set_ext(t, ext, n): the new segment's head extensions (moved:
 * ${ext} is the transaction's now). */
void txn_set_ext(struct txn *t, struct seg_ext *ext, size_t n);
/* txn_put_ext(t, x): the new segment's extension ${x} (moved), replacing
 * one of its type. */
int txn_put_ext(struct txn *t, struct seg_ext *x);
/* txn_remove(t, name): a removed entry for ${name} (entry_removed). */
int txn_remove(struct txn *t, const char *name);
/* txn_commit(t, kind, all, nall, history, nhistory): steps 2-4; a delta
 * holds the added entries, a base ${all} (every entry of the state) and
 * ${history}.  On failure before the commit point the packs are removed. */
int txn_commit(struct txn *t, int kind, struct entry *const *all, size_t nall,
    const struct seg_history *history, size_t nhistory);
/* Flags of txn_finish. */
enum { TXN_EVEN_EMPTY = 1 };        /* commit an epoch with no entries (passwd) */
/* txn_finish(t, flags, report, ctx): every writing command's end: the
 * delta committed (none for a transaction with no entries, unless
 * TXN_EVEN_EMPTY), or the packs removed on failure; then the sink's after
 * step (compaction). */
int txn_finish(struct txn *t, int flags, pqv_report_fn report, void *ctx);
/* txn_abort(t): remove the packs written (best effort). */
void txn_abort(struct txn *t);
void txn_free(struct txn *t);

#endif
