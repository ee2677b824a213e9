/*
 * vault/add_internal.h: the stages of add, shared by add_*.c only (as
 * tarsnap's multitape_internal.h is by multitape_*.c):
 *   add_walk.c   an operand's tree walked into a plan: directories, links,
 *                exclusions, the vault's own files, notes for later
 *   add_plan.c   the plan against the catalogue: unchanged, changed, gone,
 *                names below files, hard links, the dry run
 *   add_seal.c   the files read, sealed on the worker pool and appended to
 *                packs: holes, a file re-read when it changes, equal files
 *                stored once, checkpoints
 *   add_chunk.c  format 3: the files cut into chunks, identified, sealed
 *                on the pool and retired in order into packs
 *   add_adopt.c  the packs an interrupted command left, adopted
 *   add.c        operands -> one transaction -> the result
 * Metadata (stat, owners, extended attributes) comes from fsmeta.c.
 */
#ifndef PQV_VAULT_ADD_INTERNAL_H
#define PQV_VAULT_ADD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "pqvault/vault.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/pool.h"
#include "vault/entry.h"
#include "vault/fsmeta.h"
#include "vault/state.h"
#include "vault/txn.h"

/* ---- the plan (add_walk.c builds it, add_plan.c decides it) ---- */

/* One file, directory or symbolic link to add. */
struct add_file {
    char *rel;              /* below the plan's root; NULL: from a descriptor */
    char *path;             /* for messages */
    char *name;
    int kind;               /* KIND_FILE, KIND_DIR, KIND_SYMLINK */
    struct stat st;         /* at the walk (a file's is replaced at its open) */
    char *target;           /* symbolic links */
    uint64_t hlgroup;       /* nonzero: one of several names of one file */
    int replacing;          /* stored before: stored again (changed) */
    int unchanged;          /* stored before as it is now: left as it is */
    int reread;             /* recorded as it is now, read all the same (--force-read):
                               stored again only if its content differs */
    size_t link_first;      /* a later name of a hard-link group: 1 + the index of
                               its first name (whose data is read), else 0 */
};

/* Something the walk found, reported once the add has passed its checks
 * (so a refused add says only why it was refused). */
struct note {
    int level;
    char *subject, *message;
};

/* What one operand adds. */
struct add_plan {
    struct add_file *files;
    size_t n, cap;
    int rootfd;             /* the directory the tree is read from */
    char *root;             /* its path */
    char *origin;           /* the operand's absolute path, recorded */
    int follow;             /* -L: links below the root are followed */
    struct fsutil_dirs dirs; /* the directories of the files being read, held
                               (reading them, one thread) */
    struct note *notes;
    size_t nnotes;
    uint64_t not_stored;    /* entries reported and skipped */
    char **stale;           /* names to remove: below a directory replaced by a
                               file, or gone from the source (--delete) */
    size_t nstale;
    uint64_t excluded;      /* entries the exclusion rules left out */
    char *root_name;        /* the operand's stored name */
    char **unreadable;      /* stored names of directories that could not be read,
                               or left out as caches: --delete keeps what the
                               vault holds there */
    size_t nunreadable;
};

/* ---- add_walk.c ---- */

/* add_walk_init(plan): an empty plan. */
void add_walk_init(struct add_plan *plan);
void add_walk_free(struct add_plan *plan);
/* add_walk_note(plan, level, subject, fmt, ...): remember a report for
 * later; an error also counts the entry as not stored. */
int add_walk_note(struct add_plan *plan, int level, const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* add_walk_push(plan, rel, path, name, kind, st, target): one more entry. */
int add_walk_push(struct add_plan *plan, const char *rel, const char *path, const char *name,
    int kind, const struct stat *st, const char *target);
/* add_walk_kind_name(mode): what a file that is not stored is, in words. */
const char *add_walk_kind_name(mode_t mode);
/* add_walk_operand(v, plan, path, name, opt): the plan of operand ${path}
 * stored as ${name} (NULL: its last component, add_walk_default_name):
 * the file, link or whole tree, walked without following a link below it.
 * Refused (nothing planned) for a special file or the vault's own files. */
int add_walk_operand(pqv_vault *v, struct add_plan *plan, const char *path, const char *name,
    const struct pqv_add_options *opt);
/* add_walk_check_options(opt): PQV_E_INVAL (said) for exclusion options
 * that are not well formed (an --exclude-if-present that is no file name). */
int add_walk_check_options(const struct pqv_add_options *opt);
/* add_walk_default_name(path, out, outlen): the stored name of ${path}
 * when none is given: its last component (as cp, rsync and tar -C do). */
int add_walk_default_name(const char *path, char *out, size_t outlen);

/* ---- add_plan.c ---- */

/* add_plan_prepare(st, plan, opt): decide, for every entry of the plan,
 * whether it is new, changed (stored again) or unchanged (left as it is),
 * and refuse before anything is written: duplicates, a name added from
 * another place (without force), names that would be both a file and a
 * directory. */
int add_plan_prepare(struct state *st, struct add_plan *plan, const struct pqv_add_options *opt);
/* add_plan_hard_links(plan): names of one file (same device and inode,
 * more than one link) get one group id; the data is read once. */
int add_plan_hard_links(struct add_plan *plan);
/* add_plan_data_bytes(st): the bytes of data a regular file holds (its
 * size, less the holes its block count shows), what reading it reads. */
uint64_t add_plan_data_bytes(const struct stat *st);
/* add_plan_dry_run(plan, opt, res): what the add would do, said and counted. */
void add_plan_dry_run(const struct add_plan *plan, const struct pqv_add_options *opt,
    struct pqv_add_result *res);

/* ---- add_seal.c ---- */

/* The files of one extent already in the vault or in this add, by the
 * keyed hash of their content: an equal file shares their key and data,
 * as hard links do. */
struct dedup {
    const struct entry **slots;  /* open addressing, NULL: empty */
    size_t cap, n;
};

struct add_job;
struct chunk_pipe;

/* The window of extents in flight, and what the add counts. */
struct adder {
    pqv_vault *v;
    struct txn *t;
    struct add_plan *plan;       /* the operand being sealed */
    const struct pqv_add_options *opt;
    struct add_job *jobs;
    size_t size, next, oldest, inflight;
    int rc;                      /* a failure that ends the add */
    uint64_t done_bytes, total_bytes;   /* data read, of the data to read */
    struct fsmeta_names names;
    struct entry cur;            /* the file being read */
    int cur_state;               /* FILE_OK, FILE_FAILED, FILE_CHANGED */
    const struct entry *cur_same; /* a stored file of the same content */
    uint64_t files, bytes, new_bytes;
    uint64_t unused_bytes;       /* written to packs, referred to by no entry made */
    uint64_t cur_put;            /* format 2: bytes of the file being read put in packs */
    struct dedup dedup;
    struct entry **kept;         /* entries of earlier checkpoints */
    size_t nkept;
    uint64_t since_checkpoint_bytes, since_checkpoint_entries;
    struct pqv_add_result *res;  /* the command's counts */
    struct chunk_pipe *pipe;     /* format 3: the chunks in flight (add_chunk.c) */
};

enum { FILE_OK = 0, FILE_FAILED = 1, FILE_CHANGED = 2 };
/* A file that changes while it is read is read again, up to this many
 * times in all, then refused. */
#define READ_ATTEMPTS 3

/* add_seal_init(v, a, t, opt): the window, over transaction ${t}; the
 * files of ${st} known for equal contents. */
int add_seal_init(struct adder *a, pqv_vault *v, struct txn *t, struct state *st,
    const struct pqv_add_options *opt);
void add_seal_free(struct adder *a);
/* add_seal_file(a, f): ${f} (of a->plan) as an entry of the transaction
 * (reported and skipped if it cannot be read consistently). */
int add_seal_file(struct adder *a, struct add_file *f);
/* add_seal_link(a, f, first): ${f} shares the entry of ${first} (read
 * before it in name order: the first name of its hard-link group). */
int add_seal_link(struct adder *a, struct add_file *f, const struct entry *first);
/* add_seal_first_of_group(a, group): the entry already made for a
 * hard-link group, or NULL. */
const struct entry *add_seal_first_of_group(struct adder *a, uint64_t group);
/* add_seal_checkpoint_due(a): a large add commits at checkpoints (every
 * CHECKPOINT_BYTES or CHECKPOINT_ENTRIES), so that an interrupted add
 * keeps most of its work. */
int add_seal_checkpoint_due(const struct adder *a);
/* add_seal_checkpoint(a, st): commit the entries so far as an epoch and
 * begin the next transaction on it. */
int add_seal_checkpoint(struct adder *a, struct state *st);
/* add_seal_stream(a, fd, f): the file ${f} read from ${fd} until end of
 * file (its size unknown until then), in order, sealed on the pool; the
 * entry is left in a->cur. */
int add_seal_stream(struct adder *a, int fd, const struct add_file *f);
/* add_seal_commit(a, f, e): the entry ${e} of ${f} (moved) into the
 * transaction, said and counted. */
int add_seal_commit(struct adder *a, struct add_file *f, struct entry *e);
/* add_seal_counted(a, f, read): an entry of ${f} made (its data read). */
void add_seal_counted(struct adder *a, const struct add_file *f, int read);
/* add_seal_same_content(old, e): whether the entry ${e} just read holds
 * the data of the stored ${old} (the same chunks, or the same shared
 * extents). */
int add_seal_same_content(const struct entry *old, const struct entry *e);
/* add_seal_data_bytes(e): the plaintext bytes of ${e}'s extents (its
 * data, holes not counted). */
uint64_t add_seal_data_bytes(const struct entry *e);
/* add_seal_reread(a, f, e): ${f} was read again (force_read) into ${e}:
 * 1 if it holds what is stored (said and counted as unchanged: not stored
 * again), else 0. */
int add_seal_reread(struct adder *a, const struct add_file *f, const struct entry *e);
/* A region of a file's data (holes are what lies between regions). */
struct add_region {
    uint64_t off, len;
};
/* add_seal_regions(fd, st, out, n): where ${fd} holds data: SEEK_DATA
 * and SEEK_HOLE for a sparse file, one region otherwise. */
int add_seal_regions(int fd, const struct stat *st, struct add_region **out, size_t *n);

/* ---- add_chunk.c (format 3) ---- */

/* add_chunk_init(a, st): the pipeline of chunks over ${st}'s records,
 * with the packs an interrupted command left adopted. */
int add_chunk_init(struct adder *a, struct state *st);
void add_chunk_free(struct adder *a);
/* add_chunk_file(a, f): ${f}'s data into chunks; its entry made once its
 * last chunk retires (reported and skipped if it cannot be read). */
int add_chunk_file(struct adder *a, struct add_file *f);
/* add_chunk_stream(a, fd, f): as add_seal_stream, in chunks. */
int add_chunk_stream(struct adder *a, int fd, const struct add_file *f);
/* add_chunk_drain(a): every chunk retired, every file's entry made. */
int add_chunk_drain(struct adder *a);
/* add_chunk_unused(a): the bytes of the chunks this add wrote that none of
 * its entries (a->kept and the transaction's) refers to: a file left out,
 * a file's reads before it changed.  Once, at the end (it marks them). */
uint64_t add_chunk_unused(struct adder *a);

/* ---- add_adopt.c ---- */

/* A pack left by an interrupted command, whose chunks may be used. */
struct adoptable {
    struct seg_pack sp;
    int introduced;              /* into the transaction already */
};
/* add_adopt(v, st, known, adopted, packs, npacks): the packs of format 3
 * no segment of ${st} names, read: each sound one appended to *${packs}
 * (with its size and hash, to be introduced by the segment that uses it),
 * each of its chunks that ${known} lacks and whose blob opens put in
 * ${adopted}. */
struct chunk_index;
int add_adopt(pqv_vault *v, const struct state *st, const struct chunk_index *known,
    struct chunk_index *adopted, struct adoptable **packs, size_t *npacks);



#endif
