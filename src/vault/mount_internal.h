/*
 * vault/mount_internal.h: the read-only file-system view of a vault
 * (include/pqvault/mount.h), shared by mount*.c only:
 *   mount.c       the view's life, node numbers, trees loaded on demand and
 *                 unloaded when memory runs over, files opened
 *   mount_ops.c   the node operations: attributes, lookup, directories,
 *                 links, extended attributes
 *   mount_tree.c  a tree of nodes over sorted entries (parents, children in
 *                 name order, directories made up for parents no entry
 *                 names, hard-link groups)
 *   mount_versions.c  the versions/ tree's entries, from every kept
 *                 generation
 *   mount_xattrs.c  whether any state shown has extended attributes
 *   mount_cache.c a bounded cache of decrypted chunks and segments, filled
 *                 on demand and ahead of sequential readers and walks by
 *                 prefetch threads; a walk's next files offered to the
 *                 kernel's page cache
 *   mount_memory.c  locked buffers by size class, the read buffers
 *   mount_file.c  open files (kept open for a kernel that opens none):
 *                 reads through the cache, walks; SEEK_DATA and SEEK_HOLE
 * docs/DESIGN.md "Mount" says why it is built so.
 */
#ifndef PQV_VAULT_MOUNT_INTERNAL_H
#define PQV_VAULT_MOUNT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "pqvault/mount.h"
#include "util/error.h"
#include "vault/entry.h"
#include "vault/snapshots.h"
#include "vault/state.h"

#define MOUNT_NONE UINT32_MAX
/* Loaded trees beyond the root are unloaded, least recently used first,
 * while they hold more than this (a tree is loaded again when needed: its
 * node numbers do not change). */
#define MOUNT_TREES_BUDGET (96u << 20)
/* Chunks decrypted ahead of a sequential reader, at most (and bytes). */
#define MOUNT_PREFETCH_CHUNKS 6
#define MOUNT_PREFETCH_BYTES (8u << 20)
/* Over a remote storage (S3), where a chunk's read waits on the network
 * more than on a CPU: more of them ahead, more threads fetching them (two
 * threads, one per CPU here, read a 256 MiB file through a mount at a
 * third of get's speed through 10 ms of latency). */
#define MOUNT_PREFETCH_CHUNKS_REMOTE 16
#define MOUNT_PREFETCH_BYTES_REMOTE (24u << 20)
#define MOUNT_PREFETCH_THREADS_REMOTE 8
#define MOUNT_PREFETCH_QUEUE 64
/* A read is a sequential reader's when it starts within this of where the
 * furthest read so far ended (the kernel's readahead, 128 KiB a request,
 * and FUSE's worker threads deliver such a reader's requests slightly out
 * of order); any other is a random read. */
#define MOUNT_SEQUENTIAL_SLACK (2u << 20)
/* A file of at least MOUNT_DROP_MIN_FILE bytes read sequentially keeps in
 * the kernel's page cache only about its last MOUNT_DROP_BEHIND bytes
 * behind the reader, dropped in steps of MOUNT_DROP_STEP (aligned to
 * MOUNT_DROP_ALIGN, a whole number of pages of any size), except near
 * another reader of the same open file that read within the last
 * MOUNT_DROP_ACTIVE ticks (pqv_mount_read_behind; docs/DESIGN.md, "A large
 * file streams through"). */
#define MOUNT_DROP_MIN_FILE (64u << 20)
#define MOUNT_DROP_BEHIND (16u << 20)
#define MOUNT_DROP_STEP (8u << 20)
#define MOUNT_DROP_ALIGN (1u << 20)
#define MOUNT_DROP_ACTIVE 256
/* Readers told apart in one open file (a file the view keeps open for a
 * kernel that opens nothing is shared by all of its readers): their
 * streams of reads followed, the least recently used replaced. */
#define MOUNT_STREAMS 4
/* Files the view keeps open for a kernel that sends no OPEN or RELEASE
 * (pqv_mount_file_get), the least recently used closed beyond these; and
 * closed files' locked memory kept for the next one opened. */
#define MOUNT_FILES_KEPT 64
#define MOUNT_PREFETCH_THREADS_MAX 4   /* (one per CPU, at most; remote: above) */
/* A chunk stored in at most this many bytes is read into buffers of its
 * own size, not a pooled pair. */
#define MOUNT_SMALL_READ (256u << 10)
/* Read buffers (sealed + scratch, about 8 MiB a pair) kept for reuse. */
#define MOUNT_BUFFERS_KEPT 4
/* Sealed buffers of one STREAM segment (64 KiB + tag) kept for reuse: one
 * made per random read faulted its pages in every time. */
#define MOUNT_SEGBUFS_KEPT 16
/* Locked buffers of small chunks (by size class, up to 256 KiB) and chunk
 * records kept for reuse, wiped, at most these many bytes and records. */
#define MOUNT_POOL_CLASSES 12
#define MOUNT_POOL_BYTES (4u << 20)
#define MOUNT_POOL_PER_CLASS 256
#define MOUNT_SPARE_CHUNKS 256
/* A walk (files read from their starts in the tree's walk order, each
 * within this many places of the one before): the next files' first
 * chunks are decrypted ahead, at most these many files and bytes, among
 * at most this many places. */
#define MOUNT_WALK_GAP 8
#define MOUNT_WALK_FILES 32
#define MOUNT_WALK_BYTES (4u << 20)
#define MOUNT_WALK_NODES 256
/* Over a network, a walk's files further on (of at most MOUNT_WALK_BYTES
 * each) announced to the read-ahead, so that the pack windows reach over
 * them: at most these many places ahead, these many stored bytes a
 * step. */
#define MOUNT_TELL_NODES 1024
#define MOUNT_TELL_BYTES (8u << 20)
/* Files one chunk is offered as, at most (copies met by a walk). */
#define MOUNT_CHUNK_OFFERS 8
/* Files whose damage is reported by name (then: no more names). */
#define MOUNT_REPORTED_MAX 256
/* A cached chunk's key: 'C' || chunk identity, 'S' || chunk identity ||
 * segment (one STREAM segment of an uncompressed chunk, for a random
 * read), or 'X' || pack id || offset. */
#define MOUNT_KEY_BYTES 37
/* A chunk read whole, not one segment of it. */
#define MOUNT_WHOLE UINT32_MAX

/* ---- trees (mount_tree.c) ---- */

struct mount_node {
    const char *comp;            /* its name in its directory ("" for the root) */
    uint32_t entry;              /* index in the tree's entries; MOUNT_NONE: root, made up */
    uint32_t parent;
    uint32_t kids, nkids;        /* its children: tree->kids[kids .. kids + nkids) */
    uint32_t inode;              /* the node whose number it has (a hard link: the first) */
    uint32_t nlink;
    uint32_t dir_pages;          /* a directory's size, in 4 KiB */
    uint8_t hidden;              /* looked up, not listed (versions/: a name's own directory) */
};

enum { TREE_UNLOADED = 0, TREE_LOADING, TREE_LOADED };
enum { TREE_STATE = 1, TREE_VERSIONS };

struct mount_tree {
    uint32_t id;                 /* node numbers: id << 32 | node */
    int kind;                    /* TREE_STATE, TREE_VERSIONS */
    const struct snapshot *sn;   /* TREE_STATE: the snapshot; NULL: the newest state */
    int64_t time;                /* what its root shows as times */
    int status;                  /* TREE_* */
    unsigned refs;
    int pinned;                  /* never unloaded */
    uint64_t used;               /* last use, for unloading */
    struct state st;             /* its state (TREE_STATE, unless the current one) */
    struct state *keys;          /* the state file keys come from (NULL: clear already) */
    struct entry *entries;       /* sorted by name */
    size_t n;
    struct entry *own;           /* TREE_VERSIONS: entries of its own */
    uint32_t *groups;            /* TREE_VERSIONS: by entry, 0 or its name's group
                                    (mount_versions_build) */
    char **group_names;          /* TREE_VERSIONS: by group (from 1), the name of its
                                    hidden directory, or NULL: none */
    uint32_t ngroups;
    uint32_t *group_dir;         /* by group: its directory's node, or MOUNT_NONE */
    uint32_t *alias;             /* by node: the root tree's node whose number it
                                    shows (the same inode), or MOUNT_NONE; NULL: none */
    struct mount_node *nodes;
    uint32_t nnodes;
    uint32_t *kids;
    /* The order of a walk of its directories, depth first, each one's
     * children in name order (cp -a, tar, rsync, grep -r, find):
     * walk_rank[node] is its place (MOUNT_NONE: left out of the tree),
     * walk_order[place] the node there, nwalk places. */
    uint32_t *walk_rank, *walk_order;
    uint32_t nwalk;
    char **made;                 /* names of the directories made up */
    size_t nmade;
    uint64_t bytes;              /* memory it holds, about */
    uint64_t data;               /* bytes of its files' data */
};

/* mount_tree_build(t): t->nodes over t->entries (sorted by name): node 0
 * the root, node i + 1 entry i, then directories made up for parents
 * missing.  Entries below a non-directory, and a second entry of a name,
 * are left out of the tree.  With t->group_names, each named group gets a
 * directory of that name made up and hidden (looked up, not listed),
 * whose children are the group's entries (t->groups), wherever they are;
 * if that name is already a directory, the entries join it instead. */
int mount_tree_build(struct mount_tree *t);
/* mount_tree_node_bytes(t): the memory its nodes hold, about (without its
 * entries'). */
uint64_t mount_tree_node_bytes(const struct mount_tree *t);
/* mount_tree_unbuild(t): the nodes freed (the entries stay). */
void mount_tree_unbuild(struct mount_tree *t);
/* mount_tree_find(t, name): the node of the entry named ${name}, or
 * MOUNT_NONE (a binary search of the entries). */
uint32_t mount_tree_find(const struct mount_tree *t, const char *name);
/* mount_tree_child(t, dir, name): the child ${name} of node ${dir}, or
 * MOUNT_NONE. */
uint32_t mount_tree_child(const struct mount_tree *t, uint32_t dir, const char *name);
/* mount_tree_entry(t, node): its entry, or NULL (the root, one made up). */
const struct entry *mount_tree_entry(const struct mount_tree *t, uint32_t node);

/* A table of names (not owned) to values: made-up directories, versions'
 * names.  mount_tree_table_put(t, name, len, value): ${name} (${len}
 * bytes, kept by the caller) recorded; mount_tree_table_get(t, name,
 * len): its value, or MOUNT_NONE. */
struct name_slot {
    const char *name;
    size_t len;
    uint32_t value;
};

struct name_table {
    struct name_slot *slots;
    size_t cap, n;
};
int mount_tree_table_put(struct name_table *t, const char *name, size_t len, uint32_t value);
uint32_t mount_tree_table_get(const struct name_table *t, const char *name, size_t len);

/* ---- versions/ (mount_versions.c) ---- */

/* mount_versions_build(m, out, groups, n, names, ngroups): the entries of
 * the versions/ tree, sorted, and their groups: every directory of the
 * kept snapshots (its newest entry), and for each name a file or link in
 * some kept snapshot its distinct versions, each named by
 * mount_versions_name in the name's directory (file keys in clear, chunks
 * placed), all of group k for the k-th such name; ${names}[k] that name
 * if it was never a directory (it gets a hidden directory), else NULL. */
int mount_versions_build(struct pqv_mount *m, struct entry **out, uint32_t **groups, size_t *n,
    char ***names, uint32_t *ngroups);
/* mount_versions_name(comp, snap, out): the name in versions/ of the
 * version of the name ${comp} (one component) first in snapshot ${snap}:
 * STEM.SNAP.EXT (EXT: from the last dot on, as os.path.splitext, up to
 * MOUNT_VERSION_EXT_MAX bytes; none for a leading dot), at most
 * MOUNT_VERSION_NAME_MAX bytes (the stem cut at a character's start). */
#define MOUNT_VERSION_NAME_MAX 255
#define MOUNT_VERSION_EXT_MAX 32
void mount_versions_name(const char *comp, const char *snap, char out[MOUNT_VERSION_NAME_MAX + 1]);
/* mount_versions_same(a, b): the same version of a file or link: kind, data,
 * target, mode, owner, times, attributes. */
int mount_versions_same(const struct entry *a, const struct entry *b);

/* ---- the cache (mount_cache.c) and open files (mount_file.c) ---- */

enum { CHUNK_LOADING = 1, CHUNK_READY, CHUNK_FAILED };

/* An offer of a chunk: ${len} bytes of it as file ${ino}'s first ones,
 * as soon as it is read if ${now} (the file's directory is listed), else
 * once its directory's listing goes on. */
struct mount_offer {
    uint64_t ino;
    uint32_t len;
    int now;
};

struct mount_chunk {
    uint8_t key[MOUNT_KEY_BYTES];
    int state;                   /* CHUNK_* */
    int rc;                      /* CHUNK_FAILED: why */
    struct error_saved error;
    unsigned refs;
    int queued;                  /* waiting for a prefetch thread */
    uint32_t served;             /* bytes reads took of it (whole), at most len */
    int read_whole;              /* reads took all of it: out once unused */
    int wanted_again;            /* asked for after that: kept */
    /* Once read: offered (opt.offer) as the first bytes of these files
     * (a walk meets copies of a file, whose data is stored once). */
    struct mount_offer offers[MOUNT_CHUNK_OFFERS];
    unsigned noffers;
    uint8_t *data;
    uint32_t len;
    uint32_t cap;                /* ${data}'s size (a pool's class: at least len) */
    uint32_t segment;            /* MOUNT_WHOLE, or the segment it holds */
    uint32_t base;               /* where ${data} starts in the chunk */
    struct mount_chunk *hnext;   /* in its hash bucket */
    struct mount_chunk *prev, *next;   /* least recently used last */
    /* What reading it takes (while LOADING). */
    int suite;
    uint32_t index;
    struct extent x;
    uint8_t file_key[PQV_FILE_KEY_BYTES];
};

struct mount_buffers {
    uint8_t *sealed, *scratch;
    struct mount_buffers *next;
};

struct mount_cache {
    struct mount_chunk **buckets;
    size_t nbuckets;             /* a power of 2 */
    struct mount_chunk *head, *tail;
    uint64_t bytes, budget;
    uint64_t hits, misses, prefetched, offered, bytes_opened;
    uint64_t pending_offers;     /* chunks whose offer waits for a listing */
    struct mount_chunk *queue[MOUNT_PREFETCH_QUEUE];
    size_t qhead, qlen;
    pthread_t threads[MOUNT_PREFETCH_THREADS_REMOTE > MOUNT_PREFETCH_THREADS_MAX
        ? MOUNT_PREFETCH_THREADS_REMOTE : MOUNT_PREFETCH_THREADS_MAX];
    unsigned nthreads;
    unsigned idle;               /* threads waiting for work */
    int remote;                  /* the vault's storage is remote */
    int stop;
    pthread_cond_t work;         /* the queue has a chunk, or stop */
    struct mount_buffers *free_buffers;
    unsigned nfree_buffers;
    uint8_t *free_segbufs[MOUNT_SEGBUFS_KEPT];
    unsigned nfree_segbufs;
    /* Locked buffers kept by size class, wiped; chunk records kept (through
     * hnext), wiped: locking and unlocking each split and merged the
     * heap's mappings, a seventh of the server's time reading small files. */
    uint8_t *pool[MOUNT_POOL_CLASSES][MOUNT_POOL_PER_CLASS];
    unsigned npool[MOUNT_POOL_CLASSES];
    uint64_t pool_bytes;
    struct mount_chunk *spare_chunks;
    unsigned nspare_chunks;
};

/* A reader's stream of reads in a file: who reads, where its furthest
 * read ended, whether it read before (a first read is sequential only at
 * 0), when it last read (the file's tick), whether its last read was
 * sequential, and up to where the page cache was told to drop what it
 * left behind. */
struct mount_stream {
    uint64_t reader, next, used, dropped;
    int read_before, sequential;
};

struct pqv_mount_file {
    struct pqv_mount *m;
    struct entry e;              /* a copy: chunks placed, file key in clear */
    /* Its readers' streams (under m->lock). */
    struct mount_stream streams[MOUNT_STREAMS];
    unsigned nstreams;
    uint64_t tick;
    struct pqv_mount_file *prev, *next;   /* m's open files */
    /* Kept open by the view (pqv_mount_file_get): its node, the readers
     * holding it, its place in m->kept (most recently used first). */
    uint64_t ino;
    unsigned refs;
    int kept;
    struct pqv_mount_file *kprev, *knext;
};

/* mount_file_walk_listed(m, tree, node): directory ${node} of ${tree} is
 * being listed from its start: a walk going on (cp -a lists each
 * directory as it reaches it) reads the files after it ahead, as a file
 * read from its start does; none starts (${tree} not 0: not the history
 * directories; m->lock not held). */
void mount_file_walk_listed(struct pqv_mount *m, uint32_t tree, uint32_t node);
/* mount_file_spares_free(m): the closed files' memory kept for reuse given
 * back (every file closed first: mount_cache_free). */
void mount_file_spares_free(struct pqv_mount *m);

/* The cache's memory (mount_memory.c).  mount_memory_get(m, len, cap): a
 * locked buffer of at least ${len} bytes, zero (a kept one of its size
 * class if any), its size in *${cap}; NULL if out of memory.
 * mount_memory_put(m, p, cap): ${p}, wiped by the caller, kept or given
 * back; mount_memory_give(c, p, cap) the same with m->lock held.
 * mount_memory_buffers_get(m, scratch) / _put(m, b): a pair of read
 * buffers, the scratch one (locked) only if ${scratch}.
 * mount_memory_segbuf_get(m) / _put(m, p): a sealed buffer of one STREAM
 * segment.  mount_memory_free(c): all that is kept given back (the
 * view closing). */
uint8_t *mount_memory_get(struct pqv_mount *m, size_t len, uint32_t *cap);
void mount_memory_put(struct pqv_mount *m, uint8_t *p, uint32_t cap);
void mount_memory_give(struct mount_cache *c, uint8_t *p, uint32_t cap);
struct mount_buffers *mount_memory_buffers_get(struct pqv_mount *m, int scratch);
void mount_memory_buffers_put(struct pqv_mount *m, struct mount_buffers *b);
uint8_t *mount_memory_segbuf_get(struct pqv_mount *m);
void mount_memory_segbuf_put(struct pqv_mount *m, uint8_t *p);
void mount_memory_free(struct mount_cache *c);

/* mount_cache_init(m) / mount_cache_free(m): the cache and prefetch
 * threads; free wipes every chunk and closes every file still open. */
int mount_cache_init(struct pqv_mount *m);
void mount_cache_free(struct pqv_mount *m);
/* mount_cache_get(f, index, segment, out): extent ${index} of ${f},
 * decrypted (whole, or only ${segment} of it unless it is cached whole),
 * referenced; mount_cache_put(m, ce) gives the reference back (m->lock
 * held).  mount_cache_prefetch(f, from): the extents from ${from} on
 * queued for the prefetch threads, up to the limits (m->lock held).
 * mount_cache_segment_len(x, segment): the plaintext bytes of that
 * segment of ${x}. */
int mount_cache_get(struct pqv_mount_file *f, uint32_t index, uint32_t segment,
    struct mount_chunk **out);
void mount_cache_put(struct pqv_mount *m, struct mount_chunk *ce);
/* mount_cache_put_served(m, ce, n): the same, by a read that took ${n}
 * bytes of ${ce} (whole): once reads have taken all of it, it leaves the
 * cache as soon as nobody holds it (the kernel's page cache holds it),
 * unless it was asked for again after that. */
void mount_cache_put_served(struct pqv_mount *m, struct mount_chunk *ce, uint64_t n);
void mount_cache_prefetch(struct pqv_mount_file *f, uint32_t from);
/* mount_cache_wake(c): a chunk was just queued: a waiting prefetch thread
 * woken for it, unless as many were for those queued before (each wake
 * is a futex call, and the thread woken then waits for m->lock; about
 * 1,000 fewer futex calls of 17,000 in a cp -a of /usr/share/doc; m->lock
 * held). */
void mount_cache_wake(struct mount_cache *c);
/* mount_cache_queue_again(m, e, i): extent ${i} of ${e} queued as
 * mount_cache_queue does, or, cached or on its way already (for another file of the same
 * data the reader reads first), kept once that file has read it: the
 * reader reads it again (m->lock held). */
void mount_cache_queue_again(struct pqv_mount *m, const struct entry *e, uint32_t i);
/* mount_cache_queue(m, e, from, chunks, bytes): the extents of ${e} from
 * ${from} on, at most ${chunks} of them and about ${bytes}, queued for the
 * prefetch threads unless cached (chunks only where no file key is needed:
 * the caller's part for extents of formats 1 and 2); -1 once the queue is
 * full (m->lock held). */
int mount_cache_queue(struct pqv_mount *m, const struct entry *e, uint32_t from, unsigned chunks,
    uint64_t bytes);
/* mount_cache_find(c, key): the cached chunk of ${key}, or NULL.
 * mount_cache_key(e, index, segment, key): the key of extent ${index} of
 * ${e} (MOUNT_WHOLE, or one segment of it).  mount_cache_served(ce, n):
 * ${n} more bytes of ${ce} read, or taken by the kernel's page cache.
 * (m->lock held.) */
struct mount_chunk *mount_cache_find(const struct mount_cache *c,
    const uint8_t key[MOUNT_KEY_BYTES]);
void mount_cache_key(const struct entry *e, uint32_t index, uint32_t segment,
    uint8_t key[MOUNT_KEY_BYTES]);
void mount_cache_served(struct mount_chunk *ce, uint64_t n);
uint32_t mount_cache_segment_len(const struct extent *x, uint32_t segment);

/* ---- a walk's offers (mount_offer.c) ---- */

/* mount_offer_queue(m, e, ino, len, now):
 * ${e}'s first chunk queued so (or found cached: another file of the same
 * data), to be offered (opt.offer: ${len} bytes, as file ${ino}'s, by a
 * prefetch thread) as soon as it is read if ${now} (its directory is
 * listed), else once its directory's listing goes on
 * (mount_offer_listed). */
int mount_offer_queue(struct pqv_mount *m, const struct entry *e, uint64_t ino,
    uint32_t len, int now);
/* mount_offer_listed(m, e): ${e} is listed (its directory's listing
 * goes on: the kernel has its inode): its first chunk, if read for a walk
 * and not offered yet for want of that inode, queued first for a
 * prefetch thread to offer (or offered here, m->lock let go meanwhile,
 * when the queue is full or there is no prefetch thread); if not read
 * yet, offered as soon as it is (m->lock held). */
void mount_offer_listed(struct pqv_mount *m, const struct entry *e);
/* mount_offer_make(m, ce, all): ${ce}, read, offered as the files it is
 * to be offered as (those listed, or ${all}); m->lock held, let go
 * meanwhile, the caller's reference keeps ${ce}. */
void mount_offer_make(struct pqv_mount *m, struct mount_chunk *ce, int all);

/* ---- the view (mount.c) ---- */

struct pqv_mount {
    pqv_vault *v;
    struct pqv_mount_options opt;
    pthread_mutex_t lock;        /* trees' status, references, the cache, open files */
    pthread_cond_t cond;         /* a tree loaded, a chunk read */
    pthread_mutex_t load_lock;   /* one tree loads at a time; file keys recovered */
    struct state cur;            /* the current state, loaded: the chain, the chunk index */
    struct snapshots kept;
    struct mount_tree *trees;    /* [1] the root, [2 + k] kept snapshot k, then versions/ */
    uint32_t ntrees, versions;
    char (*snap_names)[40];      /* kept snapshot k's directory name */
    char snap_dir[32], vers_dir[32];   /* their names at the root */
    uint64_t tick, trees_bytes, trees_budget;   /* (the budget: MOUNT_TREES_BUDGET) */
    int64_t newest_time;
    /* Loading ahead (mount_load_ahead): the tree wanted next (0: none),
     * the tree last walked, whether a load ahead runs; loads a request
     * waits for (which go first). */
    pthread_t ahead_thread;
    int ahead_started, ahead_made, ahead_stop, ahead_busy;
    uint32_t ahead_want, ahead_last;
    unsigned waiting_loads;
    struct mount_cache cache;
    struct pqv_mount_file *files;
    /* Files kept open (pqv_mount_file_get), most recently used first; the
     * locked memory of closed ones, wiped, for the next opened. */
    struct pqv_mount_file *kept_files, *kept_last;
    unsigned nkept;
    struct pqv_mount_file *spare_files[MOUNT_FILES_KEPT];
    unsigned nspare_files;
    /* The file last read from its start: its tree and its place in the
     * tree's walk order (a walk: mount_file.c's walk_ahead). */
    uint32_t walk_tree, walk_at;
    uint32_t walk_end;           /* the last place of walk_tree looked at ahead */
    uint32_t walk_told;          /* over a network: the place of walk_tree up to
                                    which files were announced (announce_ahead) */
    size_t page_size;
    char **reported;             /* names whose damage was reported */
    size_t nreported;
    /* Whether any state shown has extended attributes (mount_xattrs.c):
     * MOUNT_XATTRS_*, the thread reading older generations to know. */
    int xattrs;
    int xattrs_started, xattrs_made, xattrs_stop;
    pthread_t xattrs_thread;
};

/* ---- extended attributes anywhere (mount_xattrs.c) ---- */

enum { MOUNT_XATTRS_UNKNOWN = 0, MOUNT_XATTRS_NONE, MOUNT_XATTRS_SOME };
/* mount_xattrs_init(m): m->xattrs from the current state loaded (and
 * unknown if kept snapshots of older generations must be read to know).
 * mount_xattrs_stop(m): the thread reading them stopped and joined (the
 * view closing). */
void mount_xattrs_init(struct pqv_mount *m);
void mount_xattrs_stop(struct pqv_mount *m);

/* mount_walk(m, w, damaged): a names walk that reports damage through the
 * view's report callback and counts it in *${damaged}. */
struct names_walk;
void mount_walk(const struct pqv_mount *m, struct names_walk *w, uint64_t *damaged);
/* mount_report(m, name): the thread's failure reported once for ${name}. */
void mount_report(struct pqv_mount *m, const char *name);

/* The view's own nodes, in tree 0. */
enum { VNODE_SNAPSHOTS = 2, VNODE_LATEST = 3 };
/* mount_ino(tree, node): a node's number (tree 1's node 0: the root, 1).
 * mount_decode(m, ino, tree, node): back, 0, or -ENOENT for a number the
 * view never gave.  mount_errno(rc): a library failure as a file system's
 * answer. */
uint64_t mount_ino(uint32_t tree, uint32_t node);
int mount_decode(const struct pqv_mount *m, uint64_t ino, uint32_t *tree, uint32_t *node);
int mount_errno(int rc);
/* mount_ops_alias(m, t): t->alias for a snapshot's tree or versions/:
 * each file, link or special file that the root's tree holds under its
 * name (a version: under the name it is a version of) with the same
 * attributes, data, target and extended attributes, neither a hard link,
 * shows the root's node's number: one inode wherever it shows.  The
 * kernel then makes no inode of its own for it in a walk, and `diff -r`
 * of two snapshots takes an unchanged file as the same file. */
int mount_ops_alias(struct pqv_mount *m, struct mount_tree *t);
/* mount_load_ahead(m): from now on (a listing of the root: a walk may
 * follow), the tree after the one a walk is in (in the order a listing of
 * the root shows them: the root's, the snapshots oldest first, versions/)
 * is loaded on a thread of its own while the walk goes on, room made by
 * unloading what the walk left (never the tree it is in), nothing if
 * there is no room, never while a request waits for a load.  `find` of the
 * whole view then finds the next tree loaded, on the other core. */
void mount_load_ahead(struct pqv_mount *m);
/* mount_get_tree(m, id, out): tree ${id} loaded (if it was not) and
 * referenced; mount_put_tree(m, t): the reference given back (the tree may
 * be unloaded from then on). */
int mount_get_tree(struct pqv_mount *m, uint32_t id, struct mount_tree **out);
void mount_put_tree(struct pqv_mount *m, struct mount_tree *t);

#endif
