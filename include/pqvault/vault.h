/*
 * pqvault/vault.h: the vault: a directory holding a config, a key file, a
 * lock file and the sharded records/ and objects/ of every stored file (see
 * docs/FORMAT.md for the bytes and docs/DESIGN.md for the commit protocol).
 *
 * Typical use:
 *   pqv_vault_open(&v, dir, NULL)         read config and key file
 *   pqv_vault_unlock(v, pass, len)        Argon2id, identity, config MAC
 *   pqv_vault_lock_writer(v, 0, h, n)     before any change
 *   pqv_vault_add_path / get / list / rm / check / gc / passwd
 *   pqv_vault_close(v)
 * Every function returns 0 or a negative PQV_E_* code with a detail in
 * pqv_error_detail().  Nothing here prints: messages go through callbacks.
 */
#ifndef PQVAULT_VAULT_H
#define PQVAULT_VAULT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pqvault/common.h"
#include "pqvault/identity.h"
#include "pqvault/keyfile.h"
#include "pqvault/recovery.h"
#include "pqvault/storage.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PQV_FORMAT_VERSION 3       /* the newest format this library reads and writes */
#define PQV_FORMAT_DEFAULT 3       /* what pqv_vault_create writes unless told */
#define PQV_OBJECT_MAX_PLAIN (4u << 20)   /* 4 MiB of plaintext per object */
#define PQV_NAME_MAX 4096                 /* bytes in a stored name */

typedef struct pqv_vault pqv_vault;

/* Types of entries (the codes of the catalogue's kinds; 4 is reserved).
 * FIFOs and device nodes are stored by vaults of format 3 only. */
enum pqv_entry_type { PQV_ENTRY_FILE = 1, PQV_ENTRY_DIR = 2, PQV_ENTRY_SYMLINK = 3,
    PQV_ENTRY_FIFO = 5, PQV_ENTRY_CHARDEV = 6, PQV_ENTRY_BLOCKDEV = 7 };

/* pqv_entry_type_name(type): the type in one word ("file", "dir",
 * "symlink", "fifo", "chardev", "blockdev"), as list --json writes it;
 * "unknown" for another value. */
PQV_API const char *pqv_entry_type_name(int type);
/* pqv_entry_type_letter(type): its letter in a long listing, as ls writes
 * it ('-', 'd', 'l', 'p', 'c', 'b'); '?' for another value. */
PQV_API char pqv_entry_type_letter(int type);

/* One stored file, directory, symbolic link, FIFO or device node, as
 * listed. */
struct pqv_entry {
    char *name;             /* '/'-separated relative name */
    int type;               /* PQV_ENTRY_* */
    uint64_t size;          /* plaintext bytes (0 for a directory) */
    uint32_t mode;          /* permission bits (07777) */
    int64_t mtime_sec;
    uint32_t mtime_nsec;
    int aead;               /* suite of the file's data */
    uint32_t nobjects;      /* extents (objects in format 1) */
    char *target;           /* a symbolic link's target, else NULL */
    uint32_t uid, gid;      /* owner and group (format 2; 0 in format 1) */
    char *user, *group;     /* their names when known, else NULL */
    uint64_t link_group;    /* nonzero: hard links of one file share it */
    uint64_t holes;         /* bytes of a sparse file not stored (holes) */
    uint32_t rdev_major;    /* a device node's device number, else 0 */
    uint32_t rdev_minor;
};

/* Severity of a reported event. */
enum pqv_report_level { PQV_REPORT_INFO = 0, PQV_REPORT_WARNING = 1, PQV_REPORT_ERROR = 2 };

/* Progress: ${done} of ${total} bytes (total 0 if unknown). */
typedef void (*pqv_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* A report about ${subject} (a file name, record or object). */
typedef void (*pqv_report_fn)(void *ctx, int level, const char *subject,
    const char *message);

/* Options of pqv_vault_create. */
struct pqv_init_options {
    const char *kem;                     /* FrodoKEM set name; NULL: auto */
    int aead;                            /* default suite; 0: auto */
    const struct pqv_kdf_params *kdf;    /* NULL: pqv_kdf_default */
    int format;                          /* 1, 2 or 3; 0: PQV_FORMAT_DEFAULT */
    const char *state_dir;               /* local state directory (format 2; NULL: none) */
    pqv_report_fn report;                /* NULL, or as pqv_vault_set_report's */
    void *report_ctx;
    unsigned flags;                      /* PQV_INIT_* */
};
/* PQV_INIT_SHARED_INBOX: a local vault that other Unix users' write-only
 * writers add to: its directory 0711 (searchable, not listable), its config
 * 0644 (kept so when it is rewritten); inbox/ is 1733 in every vault.  The
 * key file, segments/ and packs/ stay the owner's.  PQV_E_INVAL on S3,
 * where a bucket policy does this (docs/S3.md). */
#define PQV_INIT_SHARED_INBOX 1u

/* pqv_default_kem(): FrodoKEM-976-AES where the CPU has AES instructions,
 * FrodoKEM-976-SHAKE otherwise. */
PQV_API const char *pqv_default_kem(void);

/*
 * pqv_vault_create(dir, keyfile, pass, passlen, opt, recovery, fingerprint):
 * create a vault in ${dir} (created if missing; it must be empty of vault
 * files) with its key file at ${keyfile} (NULL: ${dir}/keyfile), slot 0
 * sealed under ${pass}.  Writes the recovery code and the identity
 * fingerprint.  PQV_E_EXISTS if a vault or key file is already there.
 */
PQV_API int pqv_vault_create(const char *dir, const char *keyfile, const uint8_t *pass,
    size_t passlen, const struct pqv_init_options *opt,
    char recovery[PQV_RECOVERY_CHARS],
    char fingerprint[PQV_FINGERPRINT_CHARS]) PQV_WARN_UNUSED;

/* pqv_vault_open(out, dir, keyfile): open the vault in ${dir}: parse its
 * config and key file (${keyfile} NULL: ${dir}/keyfile).  No passphrase is
 * needed.  PQV_E_NOVAULT if there is no vault config at ${dir};
 * PQV_E_NOTFOUND if the key file is missing. */
PQV_API int pqv_vault_open(pqv_vault **out, const char *dir, const char *keyfile) PQV_WARN_UNUSED;

/* Flags of pqv_vault_open_flags. */
#define PQV_OPEN_KEYFILE_OPTIONAL 1u
/* PQV_OPEN_NO_KEYFILE: read the config only, never the key file (a
 * write-only writer, pqv_vault_inbox_begin). */
#define PQV_OPEN_NO_KEYFILE 2u

/*
 * pqv_vault_open_flags(out, dir, keyfile, flags): pqv_vault_open; with
 * PQV_OPEN_KEYFILE_OPTIONAL a key file that is missing (or whose directory
 * is), damaged or of an unsupported version does not fail the open: such
 * a vault can be inspected (pqv_vault_info, pqv_vault_check without the
 * key, which reports the key file) or unlocked with its recovery code
 * (pqv_vault_unlock_recovery); pqv_vault_unlock fails with the key file's
 * error, and pqv_vault_keyfile_status tells it.  Keyed commands keep
 * pqv_vault_open, which fails without the key file.
 */
PQV_API int pqv_vault_open_flags(pqv_vault **out, const char *dir, const char *keyfile,
    unsigned flags) PQV_WARN_UNUSED;

/* pqv_vault_keyfile_status(v, err): 0 if the key file was read at open,
 * else the code reading it gave (PQV_E_NOTFOUND: missing; PQV_E_INTEGRITY:
 * damaged; PQV_E_UNSUPPORTED: another version), its subject and reason
 * copied to *${err} if not NULL. */
PQV_API int pqv_vault_keyfile_status(const pqv_vault *v, struct pqv_error *err);

/* pqv_vault_unlock(v, pass, passlen): unlock the key file (both slots at
 * once), derive the identity and verify the config's MAC.  PQV_E_AUTH for a
 * wrong passphrase or a key file of another vault; PQV_E_INVAL for an empty
 * passphrase (refused before any Argon2id work: create, passwd and recover
 * never set one); PQV_E_LIMIT if no slot opened and a slot was not computed
 * because its cost is above the vault's Argon2id limit
 * (pqv_vault_set_kdf_limit; the reason names the slot and its cost). */
PQV_API int pqv_vault_unlock(pqv_vault *v, const uint8_t *pass, size_t passlen) PQV_WARN_UNUSED;

/* pqv_vault_set_kdf_limit(v, limit): the Argon2id cost pqv_vault_unlock
 * computes for a key file slot (NULL: pqv_kdf_limit_default, 1 GiB and 16
 * passes; see pqvault/keyfile.h).  A slot above it is not computed: when
 * no slot within it opens, unlock fails with PQV_E_LIMIT, before any
 * Argon2id work if every slot is above it.  Both slots are computed at
 * once only while their memory together stays within limit->m_kib.
 * PQV_E_INVAL for a zero field. */
PQV_API int pqv_vault_set_kdf_limit(pqv_vault *v, const struct pqv_kdf_limit *limit) PQV_WARN_UNUSED;

/* pqv_vault_keyfile(v): the key file read at open (its slots' costs:
 * pqv_keyfile_slot_params), or NULL if there is none. */
PQV_API const pqv_keyfile *pqv_vault_keyfile(const pqv_vault *v);

/* pqv_vault_lock_writer(v, wait, holder, holderlen): take the exclusive
 * writer lock (local: flock, freed when the holder dies).  PQV_E_LOCKED with
 * ${holder} naming the holder (e.g. "pid 1234"; may be empty) if another
 * writer has it and ${wait} is 0. */
PQV_API int pqv_vault_lock_writer(pqv_vault *v, int wait, char *holder, size_t holderlen) PQV_WARN_UNUSED;

/* pqv_vault_close(v): release the lock, wipe secrets, free; NULL is a no-op. */
PQV_API void pqv_vault_close(pqv_vault *v);

/* pqv_name_normalize(in, out, outlen): the stored name for the path ${in}:
 * leading "/" and "./" removed, repeated and trailing "/" collapsed.
 * PQV_E_INVAL for an empty name or one with "." or ".." components. */
PQV_API int pqv_name_normalize(const char *in, char *out, size_t outlen) PQV_WARN_UNUSED;

/* What an add did (added to, so one result can total several adds). */
struct pqv_add_result {
    uint64_t files;             /* regular files stored (new or changed; hard links once) */
    uint64_t bytes;             /* bytes of data read: of the files stored, and of those
                                   read again (force_read) and found unchanged; holes are
                                   not read (a dry run: what it would read) */
    uint64_t failed;            /* entries reported and not stored */
    uint64_t added, changed;    /* entries (of every kind) new to the vault, stored again */
    uint64_t unchanged;         /* entries left as they are: found as recorded, or read
                                   again (force_read) and found to hold what is stored */
    uint64_t removed;           /* entries removed (--delete, or below a directory that
                                   became a file) */
    uint64_t excluded;          /* entries left out by the exclusion rules */
    uint64_t new_bytes;         /* bytes written to packs for the entries stored (after
                                   compression; data stored already is not written) */
    uint64_t unused_bytes;      /* bytes written to packs that no stored entry uses: a
                                   file left out (it kept changing) after some of its
                                   data was written; gc's repacking frees them */
};

/* Options of pqv_vault_add_path and pqv_vault_add_fd. */
struct pqv_add_options {
    int force;                  /* replace names added from another place */
    pqv_progress_fn progress;
    void *progress_ctx;
    pqv_report_fn report;       /* entries not stored; with verbose, each entry */
    void *report_ctx;
    int no_compress;            /* never zstd (format 2) */
    int follow_links;           /* -L: store what links point to */
    int one_file_system;        /* do not cross into other file systems */
    struct pqv_add_result *result;  /* NULL: not wanted */
    int force_read;             /* read every regular file, even one recorded as
                                   unchanged (stored again only if its data differs:
                                   format 3 compares its chunks) */
    int delete_missing;         /* remove stored names below the operand that are gone */
    int dry_run;                /* decide and report, write nothing (needs the key,
                                   not the writer lock: nothing in the vault changes) */
    int verbose;                /* report every entry (PQV_REPORT_INFO), unchanged too */
    const struct pqv_match *exclude;  /* names left out (pqvault/match.h), or NULL;
                                         tested relative to the operand */
    int exclude_caches;         /* leave out directories holding a CACHEDIR.TAG */
    int exclude_larger;         /* leave out regular files of more than
                                   ${exclude_larger_than} bytes (restic's rule) */
    uint64_t exclude_larger_than;
    const char *const *exclude_if_present;  /* leave out directories holding a file of
                                   one of these names; "NAME:HEADER": only if that
                                   file begins with HEADER (restic's syntax) */
    size_t nexclude_if_present;
};

struct pqv_match;

/*
 * pqv_vault_add_path(v, path, name, opt): store the file, symbolic link or
 * directory tree at ${path} under ${name} (NULL: the last component of
 * ${path}).  Adding again what is stored already updates it: an entry
 * recorded with the same kind, size, mtime, ctime and inode is left as it
 * is (unless opt->force_read), the others are stored again, names gone
 * from the source are kept (removed with opt->delete_missing).  A name
 * that was added from another place (its recorded origin differs) is
 * refused with PQV_E_EXISTS unless opt->force.  Regular files,
 * directories, symbolic links, FIFOs and device nodes are stored with
 * owner, group, mode, times and extended attributes (a device with its
 * device number); hard links as links; holes are not stored.  The
 * exclusion options leave names out (counted in the result's excluded;
 * with delete_missing, what the vault holds of them stays): ${exclude}'s
 * patterns below ${path}, the others ${path} itself too.  Sockets are
 * reported (PQV_REPORT_WARNING) and skipped; an entry that cannot be read, or keeps
 * changing while it is read, is reported (PQV_REPORT_ERROR) and skipped,
 * the rest is stored and the call returns PQV_E_IO.  Nothing is written
 * before the whole tree has passed its checks.  An add commits once, at
 * its end, and a large one also at checkpoints (every 512 MiB or 20,000
 * entries), each a consistent epoch of whole files: an interrupted add
 * keeps what it checkpointed, and the same add run again continues from
 * there.  The vault's own directory and key file are never stored.  A
 * format-1 vault is upgraded to format 2 first.  Requires unlock+lock.
 */
PQV_API int pqv_vault_add_path(pqv_vault *v, const char *path, const char *name,
    const struct pqv_add_options *opt) PQV_WARN_UNUSED;

/* One operand of pqv_vault_add. */
struct pqv_add_operand {
    const char *path;           /* a file, link or directory; NULL: read ${fd} */
    const char *name;           /* its stored name (NULL: the last component of
                                   ${path}); required with ${fd} */
    int fd;                     /* with ${path} NULL: read until end of file
                                   (a pipe is fine), stored as a regular file */
    uint32_t mode;              /* with ${fd}: its permission bits and mtime */
    int64_t mtime_sec;
    int rc;                     /* out: 0, or why this operand was refused or
                                   failed (then ${error} says so) */
    struct pqv_error error;     /* out: that failure, as pqv_error_last would */
};

/*
 * pqv_vault_add(v, ops, n, opt): every operand as pqv_vault_add_path and
 * pqv_vault_add_fd describe, in one transaction: one epoch, one hybrid
 * encapsulation, packs shared.  An operand that is refused (not found, a
 * special file, a name added from another place, a name an earlier
 * operand also stores) is left out with its own ${rc} and ${error} and
 * nothing of it is written; one whose entries could not all be read has
 * ${rc} PQV_E_IO (the rest of it is stored).  Returns 0 once the command
 * committed (or had nothing to commit), each operand's ${rc} telling its
 * fate; else the failure of the whole command (nothing committed since the
 * last checkpoint; pqv_error_last says why).  Requires unlock+lock, or a
 * write-only writer (pqv_vault_inbox_begin); a dry run needs no lock (it
 * writes nothing and reads the state as a reader does).
 */
PQV_API int pqv_vault_add(pqv_vault *v, struct pqv_add_operand *ops, size_t n,
    const struct pqv_add_options *opt) PQV_WARN_UNUSED;

/* pqv_vault_add_fd(v, fd, name, mode, mtime, opt): store what is read from
 * ${fd} until end of file (a pipe is fine) as the regular file ${name}. */
PQV_API int pqv_vault_add_fd(pqv_vault *v, int fd, const char *name, uint32_t mode,
    int64_t mtime_sec, const struct pqv_add_options *opt) PQV_WARN_UNUSED;

/* pqv_vault_lookup(v, name, entry): the entry stored under exactly ${name}
 * (no KEM operation).  PQV_E_NOTFOUND if none.  Free with pqv_entry_clear. */
PQV_API int pqv_vault_lookup(pqv_vault *v, const char *name, struct pqv_entry *entry) PQV_WARN_UNUSED;
PQV_API void pqv_entry_clear(struct pqv_entry *entry);

/* Options of pqv_vault_list. */
struct pqv_list_options {
    pqv_report_fn report;       /* damaged records */
    void *report_ctx;
};

/* pqv_vault_list(v, prefix, opt, entries, n): every entry whose name is
 * ${prefix} or starts with "${prefix}/" (NULL or "": all), sorted by name,
 * without any KEM decapsulation.  A record that fails to open is reported
 * through ${opt} (may be NULL) and skipped: the others are listed, and the
 * call returns PQV_E_INTEGRITY with *${entries} and *${n} set all the same.
 * Free with pqv_entries_free. */
PQV_API int pqv_vault_list(pqv_vault *v, const char *prefix, const struct pqv_list_options *opt,
    struct pqv_entry **entries,
    size_t *n) PQV_WARN_UNUSED;
PQV_API void pqv_entries_free(struct pqv_entry *entries, size_t n);

/* Options of pqv_vault_get. */
/* What a get did (added to). */
struct pqv_get_result {
    uint64_t restored;          /* entries restored (files, directories, links) */
    uint64_t bytes;             /* plaintext bytes of the files */
    uint64_t skipped;           /* existing destinations left (skip_existing) */
    uint64_t failed;            /* entries reported and not restored (pqv_vault_get_many:
                                   and one for each operand refused whole) */
    uint64_t excluded;          /* entries left out by opt->include and opt->exclude */
};

/*
 * One operand of pqv_vault_get_many and pqv_vault_rm_many: a stored name
 * (a directory with everything below it) or, with PQV_OPERAND_GLOB and
 * glob characters in it (pqv_match_is_glob), a pattern over whole names
 * as list's operands are (pqvault/match.h, PQV_MATCH_ANCHORED: "*.txt" is
 * a top-level name, "**" any depth): every entry it matches, a directory
 * with everything below it.  An operand that is itself a stored name (or
 * has names below it) is that name, glob characters or not ("photo[1].jpg").
 */
struct pqv_name_operand {
    const char *name;
    unsigned flags;             /* PQV_OPERAND_* */
    uint64_t selected;          /* out: the entries it names */
    int rc;                     /* out: 0, or why it was refused or failed (PQV_E_NOTFOUND:
                                   it names nothing); then ${error} says so */
    struct pqv_error error;     /* out: that failure, as pqv_error_last would */
};
/* Flags of struct pqv_name_operand. */
#define PQV_OPERAND_GLOB 1u     /* a pattern if it has glob characters */

struct pqv_get_options {
    int force;                  /* replace existing destination files */
    pqv_progress_fn progress;
    void *progress_ctx;
    pqv_report_fn report;       /* each entry restored (PQV_REPORT_INFO), failures */
    void *report_ctx;
    unsigned strip_components;  /* drop this many leading components of each name
                                   (names with no more are not restored) */
    int skip_existing;          /* leave existing destination files as they are */
    int dry_run;                /* say what would be restored, write nothing */
    int to_original;            /* restore where the name was added from (its
                                   recorded origin); ${out} must be NULL */
    struct pqv_get_result *result;  /* NULL: not wanted */
    const struct pqv_match *include;  /* NULL, or only the names it matches, what is
                                         below them and the directories above them
                                         (pqvault/match.h, whole stored names) */
    const struct pqv_match *exclude;  /* NULL, or names left out with what is below
                                         them (whole stored names) */
};

/*
 * pqv_vault_get(v, name, out, opt): restore ${name}.  A file is written to
 * ${out} if ${out} is not an existing directory, else to ${out}/${name}; a
 * directory (a directory entry, or names under "${name}/") restores its
 * tree under ${out}/ (${out} NULL: the current directory).  Each file is
 * written to a temporary file beside its destination, every tag verified,
 * mode and mtime set, fsynced, then renamed (refusing to replace an
 * existing file unless opt->force) and its directory fsynced.  On failure
 * nothing is left at the destination names of files not completed.
 */
PQV_API int pqv_vault_get(pqv_vault *v, const char *name, const char *out,
    const struct pqv_get_options *opt) PQV_WARN_UNUSED;

/*
 * pqv_vault_get_many(v, ops, n, out, opt): restore every operand as one
 * restore (one catalogue load, files written in batches across operands,
 * one progress total), each entry once, below the directory ${out}
 * (created if missing; NULL: the current directory) under its stored
 * name (with opt->to_original: where each name was added from).  One
 * operand that is a name (no pattern) is pqv_vault_get's (${out} may then
 * name the file).  An operand that names nothing (PQV_E_NOTFOUND), or
 * whose destination files exist (PQV_E_EXISTS, without opt->force or
 * opt->skip_existing), is left out before anything is written, with its
 * own ${rc} and ${error}; one some of whose entries could not be restored
 * (reported) has PQV_E_IO or PQV_E_INTEGRITY.  Returns 0 once every
 * operand had its turn; else the failure of the whole restore (damaged
 * catalogue blocks: PQV_E_INTEGRITY after the rest is restored).
 * Requires unlock.
 */
PQV_API int pqv_vault_get_many(pqv_vault *v, struct pqv_name_operand *ops, size_t n,
    const char *out, const struct pqv_get_options *opt) PQV_WARN_UNUSED;

/* pqv_vault_get_fd(v, name, fd, opt): write the regular file ${name} to
 * ${fd} (for stdout).  Only authenticated plaintext is written, but a
 * failure may come after part of it has been. */
PQV_API int pqv_vault_get_fd(pqv_vault *v, const char *name, int fd,
    const struct pqv_get_options *opt) PQV_WARN_UNUSED;

/* Options of pqv_vault_rm. */
struct pqv_rm_options {
    pqv_report_fn report;       /* removed names, objects left for gc */
    void *report_ctx;
    int dry_run;                /* say what would be removed, change nothing */
    uint64_t *removed;          /* NULL, or added the number of entries removed */
};

/* pqv_vault_rm(v, name, opt): remove ${name} (a directory: with everything
 * under it): pqv_vault_rm_many of one name.  PQV_E_NOTFOUND if nothing
 * matches.  ${opt} may be NULL. */
PQV_API int pqv_vault_rm(pqv_vault *v, const char *name,
    const struct pqv_rm_options *opt) PQV_WARN_UNUSED;

/*
 * pqv_vault_rm_many(v, ops, n, opt): remove what every operand names (a
 * directory with everything under it) in one transaction: format 2 and
 * later, one epoch and one snapshot (its operands those that named
 * something); the data stays in packs until gc.  An operand that names
 * nothing is left out with its own ${rc} (PQV_E_NOTFOUND) and ${error}; a
 * name that is not among the readable entries while catalogue blocks are
 * damaged is removed in case it is in one of them (reported), a pattern
 * then fails (PQV_E_INTEGRITY).  Format 1: each name removed on its own
 * (each record's unlink its commit point), no pattern and no dry run
 * (PQV_E_UNSUPPORTED).  Returns 0 once the command committed (or had
 * nothing to commit); else the failure of the whole command (nothing
 * removed).  Requires unlock+lock.
 */
PQV_API int pqv_vault_rm_many(pqv_vault *v, struct pqv_name_operand *ops, size_t n,
    const struct pqv_rm_options *opt) PQV_WARN_UNUSED;

/* pqv_vault_upgrade(v, report, ctx): upgrade a format-1 vault to format 2
 * (or finish an interrupted upgrade); 0 at once for format 2.  Adding to
 * a format-1 vault upgrades it too.  A damaged record stops it
 * (PQV_E_INTEGRITY; rm the damaged name first).  Requires unlock+lock. */
PQV_API int pqv_vault_upgrade(pqv_vault *v, pqv_report_fn report, void *report_ctx) PQV_WARN_UNUSED;

/* pqv_vault_set_state_dir(v, dir): where this machine remembers the epoch
 * and chain value it last saw of each format-2 vault (an absolute path,
 * created 0700 on first use; NULL: nothing remembered, no rollback or fork
 * detection beyond the vault's own chain).  Set before unlocking reads.
 * The local state is a defence, not a precondition: when it cannot be read
 * or written (no home, a read-only directory, a full disk), that is said
 * once through the vault's report callback (pqv_vault_set_report) and the
 * operation goes on without it (pqv_vault_accept excepted, which fails);
 * a damaged state file is still PQV_E_INTEGRITY. */
PQV_API int pqv_vault_set_state_dir(pqv_vault *v, const char *dir) PQV_WARN_UNUSED;

/* pqv_vault_set_location(v, location): where this vault is, for its local
 * state: the state is kept per vault and location, so a copy elsewhere
 * (copy --to, a mirror) is a vault of its own to this machine, while an
 * older state served at the same location is still a rollback.  A local
 * vault's location is its directory's real path, set when it is opened;
 * over a given storage (S3) the caller names it (the CLI: the endpoint and
 * URL), else the state is kept per vault id alone.  Set before unlocking
 * reads. */
PQV_API int pqv_vault_set_location(pqv_vault *v, const char *location) PQV_WARN_UNUSED;

/* pqv_vault_set_report(v, fn, ctx): where ${v} reports what no operation's
 * own callback carries, at PQV_REPORT_WARNING: today only that the local
 * state cannot be kept (and that rollbacks are then not detected), with the
 * state directory as the subject.  NULL: not reported.  (pqv_vault_create
 * reports there too that it removed what an interrupted init left.) */
PQV_API int pqv_vault_set_report(pqv_vault *v, pqv_report_fn fn, void *ctx) PQV_WARN_UNUSED;

/* pqv_vault_accept(v, report, ctx): take the vault as it is now (its chain
 * verified) as current in the local state, after a rollback or fork error
 * the owner knows the cause of (a vault restored from a copy).  Requires
 * unlock. */
PQV_API int pqv_vault_accept(pqv_vault *v, pqv_report_fn report, void *report_ctx) PQV_WARN_UNUSED;

/* Options and result of pqv_vault_copy. */
struct pqv_copy_options {
    pqv_report_fn report;       /* each blob copied; the key file left behind */
    void *report_ctx;
    pqv_progress_fn progress;   /* data blobs done, of all */
    void *progress_ctx;
};
struct pqv_copy_result {
    uint64_t copied, bytes;     /* blobs written, their bytes */
    uint64_t skipped;           /* found at the destination already (verified) */
    uint64_t epoch;             /* the epoch copied */
};

/* pqv_vault_copy(v, to, opt, result): copy the vault's current state to
 * the storage ${to} (another directory, a bucket) blob for blob, without
 * re-encryption: every pack and object its entries refer to (each verified
 * against its recorded hash, or its extents opened), its segments from
 * the base (each opened again), its key file if it lives in the vault,
 * and its config last.  Leftovers are not copied.  Run again after an
 * interruption, it continues (blobs already there are verified, not
 * copied).  PQV_E_EXISTS if ${to} holds another vault or another history
 * of this one.  Requires unlock; format 2. */
PQV_API int pqv_vault_copy(pqv_vault *v, pqv_storage *to, const struct pqv_copy_options *opt,
    struct pqv_copy_result *result) PQV_WARN_UNUSED;

/* Counts gathered by check and gc. */
struct pqv_check_result {
    int format;                        /* the vault's format version */
    uint64_t records, objects, bytes;  /* entries; packs and objects; their bytes */
    uint64_t epoch, segments;          /* format 2: newest epoch, segments in its chain */
    uint64_t damaged;        /* records or objects that failed verification */
    uint64_t missing;        /* objects named by a record but absent */
    uint64_t orphans;        /* leftovers: objects no record names (packs, segments,
                                records no kept state needs) */
    uint64_t orphan_bytes;   /* their bytes (what gc frees of them) */
    uint64_t in_flight;      /* the same while another writer runs: its own, likely */
    uint64_t temporaries;    /* leftover temporary files */
    uint64_t removed;        /* gc: files removed */
    uint64_t repacked;       /* gc: packs rewritten without their unused chunks (format 3) */
    uint64_t inbox;          /* inbox batches waiting for import (format 2) */
    uint64_t inbox_damaged;  /* among them, those that do not open (reported; not
                                counted as damage: a write-only writer may put
                                anything in the inbox, see pqv_vault_import) */
};

/* Options of pqv_vault_check and pqv_vault_gc. */
struct pqv_check_options {
    int read_data;              /* check: also every object's tags */
    pqv_report_fn report;       /* each problem, naming the file */
    void *report_ctx;
};

/* pqv_vault_check(v, opt, result): verify the config,
 * every record (tag, structure, name binding) and the presence and size of
 * every object; with opt->read_data also every object's tags.  Each problem
 * is reported naming the file; returns PQV_E_INTEGRITY if any damage was
 * found, 0 otherwise (orphans and temporaries are not damage: each is
 * reported at PQV_REPORT_INFO, at PQV_REPORT_WARNING while the vault is
 * damaged, and counted with its bytes).
 * On a vault that is opened but not unlocked, checks what needs no key:
 * config and key file structure (at open), every record's header and
 * length, every object's name and size (read_data is ignored).  ${opt} may
 * be NULL. */
PQV_API int pqv_vault_check(pqv_vault *v, const struct pqv_check_options *opt,
    struct pqv_check_result *result) PQV_WARN_UNUSED;

/* pqv_vault_repair_index(v, report, ctx, recovered, lost): format 3: the
 * chunks a kept state uses that no chunk record places (a damaged chunk
 * block) looked for in the packs' own tables, and those found recorded
 * again (one epoch); *${recovered} found, *${lost} still without a place.
 * Requires unlock+lock. */
PQV_API int pqv_vault_repair_index(pqv_vault *v, pqv_report_fn report, void *ctx,
    uint64_t *recovered, uint64_t *lost) PQV_WARN_UNUSED;

/* pqv_vault_gc(v, opt, result): remove orphaned objects and leftover
 * temporary files (opt->read_data is ignored; ${opt} may be NULL).
 * Requires unlock+lock. */
PQV_API int pqv_vault_gc(pqv_vault *v, const struct pqv_check_options *opt,
    struct pqv_check_result *result) PQV_WARN_UNUSED;

/* What info shows; available without unlocking.  Without unlocking, the
 * suites, fingerprint, vault id and creation time come from the config,
 * whose MAC needs the key: they are what the storage says, unverified
 * (an attacker with write access may have written them); once the vault
 * is unlocked they are verified (config MAC, identity hash, key file KEM). */
struct pqv_info {
    int format_version;
    char vault_id[33];
    char kem[32];
    char aead[32];
    char fingerprint[PQV_FINGERPRINT_CHARS];
    int64_t created;
    uint64_t records, record_bytes;      /* format 1 (or left by an upgrade) */
    uint64_t objects, object_bytes;      /* format-1 objects */
    uint64_t segments, segment_bytes;    /* format 2: the catalogue */
    uint64_t packs, pack_bytes;          /* format 2: file data */
    uint64_t epoch;                      /* format 2: the newest segment's epoch */
    uint64_t temporaries;
    struct pqv_kdf_params slot_params[PQV_KEYFILE_SLOTS]; /* zero without a key file */
    int keyfile_status;      /* pqv_vault_keyfile_status: 0 if the key file was read */
    int verified;            /* 1 if unlocked: the config's fields above are verified */
    int opened_slot;         /* the slot that unlocked, -1; an unused slot is random
                                bytes, indistinguishable from a used one */
};

PQV_API int pqv_vault_info(pqv_vault *v, struct pqv_info *info) PQV_WARN_UNUSED;

/* What pqv_vault_stats counts (restic's stats): a state's entries and
 * sizes, the distinct data its files use, and the storage. */
struct pqv_stats {
    int format;
    uint64_t epoch;              /* the state counted: the newest, or the snapshot
                                    pqv_vault_set_at names */
    uint64_t snapshots;          /* snapshots the chain keeps (format 3) */
    uint64_t entries, files, dirs, symlinks, others;
    uint64_t size;               /* logical: the files' sizes (each name counted) */
    uint64_t data;               /* the same without holes (what their extents hold) */
    uint64_t pieces;             /* distinct chunks (format 3; stored extents before)
                                    the files use */
    uint64_t unique_bytes;       /* their plaintext bytes (data / unique_bytes: the
                                    deduplication ratio) */
    uint64_t stored_bytes;       /* their stored blobs' bytes, compressed and sealed
                                    (unique_bytes / stored_bytes: compression) */
    uint64_t unlocated;          /* chunks without a recorded place (damage: check) */
    uint64_t packs, pack_bytes;  /* pack files (and format-1 objects) in the storage:
                                    every kept snapshot's data, and leftovers */
    uint64_t segments, segment_bytes;  /* the catalogue's files */
};

/* pqv_vault_stats(v, out): the counts of ${out} (reads the catalogue, no
 * data).  Requires unlock. */
PQV_API int pqv_vault_stats(pqv_vault *v, struct pqv_stats *out) PQV_WARN_UNUSED;

/* pqv_vault_passwd(v, slot, pass, passlen, kdf): seal the seed into ${slot}
 * under a new passphrase and save the key file atomically.  Requires
 * unlock+lock.  ${kdf} NULL: the slot keeps the default cost. */
PQV_API int pqv_vault_passwd(pqv_vault *v, int slot, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *kdf) PQV_WARN_UNUSED;

/* pqv_vault_clear_slot(v, slot): make ${slot} unused (random bytes).  Refused
 * (PQV_E_INVAL) for the slot that unlocked this session. */
PQV_API int pqv_vault_clear_slot(pqv_vault *v, int slot) PQV_WARN_UNUSED;

/*
 * Recovery in two steps, so that a program can check the code before it
 * asks for a new passphrase:
 * pqv_vault_unlock_recovery(v, code): unlock ${v} with its recovery code
 * instead of a passphrase: the code's checksum, the identity it derives
 * against the config's identity hash, the config's MAC.  Needs no key file
 * (open with PQV_OPEN_KEYFILE_OPTIONAL: it may be missing or damaged).
 * PQV_E_AUTH (with the reason: checksum, length, character, or "belongs to
 * another vault") if the code is not this vault's; PQV_E_INTEGRITY if the
 * config fails its MAC.  The vault is then unlocked (pqv_vault_slot -1).
 */
PQV_API int pqv_vault_unlock_recovery(pqv_vault *v, const char *code) PQV_WARN_UNUSED;

/* pqv_vault_recover_keyfile(v, pass, passlen, kdf): write a new key file
 * for ${v} (unlocked, by its code or a passphrase; writer lock held): slot
 * 0 sealed under ${pass} (${kdf} NULL: the default cost), slot 1 unused;
 * it replaces any key file there atomically and durably.  PQV_E_INVAL for
 * an empty passphrase (before any Argon2id work). */
PQV_API int pqv_vault_recover_keyfile(pqv_vault *v, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *kdf) PQV_WARN_UNUSED;

/* pqv_vault_recover(dir, keyfile, code, pass, passlen, kdf): both steps on
 * the vault in ${dir} (opened with PQV_OPEN_KEYFILE_OPTIONAL, writer lock
 * taken without waiting): a new key file from its recovery code, slot 0
 * sealed under ${pass}.  PQV_E_AUTH if the code is invalid or belongs to
 * another vault; PQV_E_LOCKED if another writer holds the lock. */
PQV_API int pqv_vault_recover(const char *dir, const char *keyfile, const char *code,
    const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *kdf) PQV_WARN_UNUSED;

/*
 * The same over given storages (tests plug in a crash simulator; another
 * backend plugs in here).  ${key_storage} NULL means ${storage}; ${key_name}
 * NULL means "keyfile".  The storages are not taken over: close them after
 * pqv_vault_close.
 */
PQV_API int pqv_vault_create_storage(pqv_storage *storage, pqv_storage *key_storage,
    const char *key_name, const uint8_t *pass, size_t passlen,
    const struct pqv_init_options *opt, char recovery[PQV_RECOVERY_CHARS],
    char fingerprint[PQV_FINGERPRINT_CHARS]) PQV_WARN_UNUSED;
PQV_API int pqv_vault_open_storage(pqv_vault **out, pqv_storage *storage,
    pqv_storage *key_storage, const char *key_name) PQV_WARN_UNUSED;
PQV_API int pqv_vault_open_storage_flags(pqv_vault **out, pqv_storage *storage,
    pqv_storage *key_storage, const char *key_name, unsigned flags) PQV_WARN_UNUSED;
PQV_API int pqv_vault_recover_storage(pqv_storage *storage, pqv_storage *key_storage,
    const char *key_name, const char *code, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *kdf) PQV_WARN_UNUSED;

/*
 * Write-only adds (docs/FORMAT.md section 18).  A recipient is the vault's
 * public identity as text ("pqvault-recipient 1", vault id, fingerprint,
 * KEM, format, the base64 public identity).
 *
 * pqv_vault_export_recipient(v, text, len): the recipient of ${v} (a
 * NUL-terminated string, free with free()), from the key file's public
 * part checked against the config's identity hash, the config's MAC and
 * the unlocked identity: ${v} must be unlocked (PQV_E_INVAL otherwise).
 * PQV_E_INTEGRITY if they disagree.
 *
 * pqv_vault_export_recipient_unverified(v, text, len): the same without
 * the key (unlocked or not, only the key file's public part against the
 * config's identity hash): what the storage says, which a writer to the
 * storage may have forged, config and key file together, with another
 * identity (issue 17).  Tell the user so.
 */
PQV_API int pqv_vault_export_recipient(pqv_vault *v, char **text, size_t *len) PQV_WARN_UNUSED;
PQV_API int pqv_vault_export_recipient_unverified(pqv_vault *v, char **text, size_t *len)
    PQV_WARN_UNUSED;

/*
 * Writers the owner issues credentials to (docs/DESIGN.md section 6).  A
 * credential is the recipient plus the writer's name, the prefix it may
 * write under, its generation and a MAC key (secret: whoever holds it can
 * add batches under the prefix).  Import accepts a writer's batches only
 * while it is registered and not revoked, and only under its prefix.
 *
 * pqv_vault_writer_add(v, name, prefix, text, len): register the writer
 * ${name} (1 to 64 of [A-Za-z0-9._-]) for names under ${prefix} (NULL:
 * ${name}; printable ASCII without spaces; no other writer's prefix may
 * overlap it), or issue it again (a new generation: its older credentials
 * are refused from then on); one epoch.  Its credential in *${text}
 * (malloc'd, secret: wipe and free).  Requires unlock+lock.
 * pqv_vault_writer_revoke(v, name): its later batches are refused; one
 * epoch.  pqv_vault_writers(v, out, n): the registered writers (free).
 */
struct pqv_writer_info {
    char name[65];
    char prefix[PQV_NAME_MAX + 1];
    uint64_t generation;
    uint64_t since;                 /* the epoch that issued it */
    int revoked;
};
PQV_API int pqv_vault_writer_add(pqv_vault *v, const char *name, const char *prefix, char **text,
    size_t *len) PQV_WARN_UNUSED;
PQV_API int pqv_vault_writer_revoke(pqv_vault *v, const char *name) PQV_WARN_UNUSED;
PQV_API int pqv_vault_writers(pqv_vault *v, struct pqv_writer_info **out, size_t *n)
    PQV_WARN_UNUSED;

/* pqv_recipient_parse(text, len, vault_id, pub, publen): strict parse of a
 * recipient: its vault id (16 bytes) and public identity (malloc'd).
 * PQV_E_INVAL if malformed, PQV_E_INTEGRITY if the key does not match its
 * own fingerprint line. */
PQV_API int pqv_recipient_parse(const uint8_t *text, size_t len, uint8_t vault_id[16],
    uint8_t **pub, size_t *publen) PQV_WARN_UNUSED;

/* pqv_vault_inbox_begin(v, recipient, len): make ${v} (opened, not
 * unlocked: PQV_OPEN_NO_KEYFILE) a write-only writer: later
 * pqv_vault_add_path / pqv_vault_add_fd calls write into one inbox batch,
 * which pqv_vault_inbox_commit commits.  PQV_E_AUTH if the recipient is
 * another vault's (vault id, fingerprint or KEM differ from the config). */
PQV_API int pqv_vault_inbox_begin(pqv_vault *v, const uint8_t *recipient, size_t len) PQV_WARN_UNUSED;

/* pqv_vault_inbox_commit(v, id): write the batch's commit point (create-
 * only) after its packs are durable; ${id} receives its hex id ("" if the
 * batch was empty: nothing written). */
PQV_API int pqv_vault_inbox_commit(pqv_vault *v, char id[33]) PQV_WARN_UNUSED;

/* A pending inbox batch. */
struct pqv_inbox_batch {
    char id[33];             /* hex batch id */
    uint64_t size;           /* bytes of its .batch file and packs */
    uint64_t packs;          /* pack files present */
    int64_t time;            /* unlocked: when written (batch body), else -1 */
    uint32_t time_nsec;      /* and its nanoseconds (a writer's batch; else 0) */
    int64_t entries;         /* unlocked: entries, else -1 */
    int state;               /* PQV_INBOX_* */
    char writer[65];         /* unlocked: the writer it authenticates as; "" for the
                                bare recipient's (or when refused: see why) */
    char prefix[PQV_NAME_MAX + 1];  /* unlocked: where it would be imported */
    char why[256];           /* PQV_INBOX_DAMAGED, PQV_INBOX_REFUSED: why */
};
enum { PQV_INBOX_PENDING = 0, PQV_INBOX_DAMAGED = 1, PQV_INBOX_INCOMPLETE = 2,
    PQV_INBOX_REFUSED = 3 /* an unknown or revoked writer, a bad MAC, a replay */ };

/* pqv_vault_inbox_list(v, out, n): the batches waiting in the inbox (and,
 * as PQV_INBOX_INCOMPLETE, pack directories without a commit point).
 * Unlocked, each batch is opened and verified (PQV_INBOX_DAMAGED if it does
 * not).  Free with free(). */
PQV_API int pqv_vault_inbox_list(pqv_vault *v, struct pqv_inbox_batch **out, size_t *n) PQV_WARN_UNUSED;
/* pqv_vault_inbox_entries(v, id, entries, n): what batch ${id} holds, as
 * import would store it (names under the writer's prefix, or under
 * quarantine/ stripped), without importing it; unlocked.  Free with
 * pqv_entries_free. */
PQV_API int pqv_vault_inbox_entries(pqv_vault *v, const char *id, struct pqv_entry **entries,
    size_t *n) PQV_WARN_UNUSED;

struct pqv_import_result {
    uint64_t batches, entries;
    uint64_t renamed;            /* (always 0 since writers have prefixes) */
    uint64_t replaced;           /* names of a writer replaced by its newer state */
    uint64_t already;            /* imported before, their deletion finished */
    uint64_t damaged;            /* refused: damaged, not authenticated, replayed */
    uint64_t removed;            /* names below a writer's roots it no longer has */
    uint64_t quarantined;        /* bare-recipient batches put under quarantine/ */
};
struct pqv_import_options {
    int replace;                 /* (ignored: a writer's batch replaces its own names) */
    pqv_report_fn report;
    void *report_ctx;
    struct pqv_import_result *result;
    int quarantine;              /* bare-recipient batches under quarantine/, stripped */
};
/* pqv_vault_import(v, opt): fold every inbox batch that authenticates as a
 * registered writer's (pqv_vault_writer_add) into the vault, one epoch per
 * batch, under the writer's prefix only; with ${quarantine} also the bare
 * recipient's, below quarantine/ with owners, set-id bits and system
 * attributes dropped.  A batch that is damaged, not authenticated, of a
 * revoked writer, outside its prefix or replayed is reported, left, and
 * makes the call return PQV_E_INTEGRITY once the others are imported.
 * Requires unlock+lock. */
PQV_API int pqv_vault_import(pqv_vault *v, const struct pqv_import_options *opt) PQV_WARN_UNUSED;

/*
 * History (format 3, docs/FORMAT.md section 26).  Every epoch whose
 * command changed names (add, rm, import) is a snapshot; the chain keeps
 * them until forget removes some, and says which it keeps.
 */
struct pqv_snapshot {
    uint64_t epoch;
    int64_t time;            /* unix seconds */
    int pinned;              /* forget never removes it */
    char *host, *user, *command;
    char **operands;
    size_t noperands;
    uint64_t added, changed, removed;   /* names */
    uint64_t bytes_new;      /* bytes of the packs it wrote */
};
/* pqv_vault_snapshots(v, out, n): the kept snapshots, oldest first (free
 * with pqv_snapshots_free).  Requires unlock. */
PQV_API int pqv_vault_snapshots(pqv_vault *v, struct pqv_snapshot **out, size_t *n)
    PQV_WARN_UNUSED;
PQV_API void pqv_snapshots_free(struct pqv_snapshot *s, size_t n);
/* pqv_vault_resolve_snapshot(v, spec, epoch): the kept snapshot ${spec}
 * names: an epoch, "latest", "latest~N", a date "YYYY-MM-DD" (that day's
 * newest) or a time "YYYY-MM-DDTHH:MM[:SS]" (the newest at or before it),
 * local time.  PQV_E_NOTFOUND, PQV_E_INVAL (said).  Requires unlock. */
PQV_API int pqv_vault_resolve_snapshot(pqv_vault *v, const char *spec, uint64_t *epoch)
    PQV_WARN_UNUSED;
/* pqv_vault_set_at(v, epoch): reading commands (list, lookup, get, check)
 * read the state of snapshot ${epoch} (0: the newest state). */
PQV_API void pqv_vault_set_at(pqv_vault *v, uint64_t epoch);

/* Retention, with restic's vocabulary and semantics: a snapshot is kept if
 * any rule keeps it (the newest ${last}; the newest of each of the newest
 * ${hourly} hours, ${daily} days, ${weekly} ISO weeks, ${monthly} months,
 * ${yearly} years that have snapshots, local time; every one within
 * ${within} seconds of the newest), or it is pinned, or the rules are all
 * zero and it is not among ${epochs}; the others are forgotten.  ${epochs}
 * (if any) are forgotten by name instead (a pinned one is refused). */
struct pqv_forget_options {
    unsigned last, hourly, daily, weekly, monthly, yearly;
    int64_t within;
    const uint64_t *epochs;
    size_t nepochs;
    int dry_run;
    /* each snapshot's fate: kept (and why) or forgotten */
    void (*decided)(void *ctx, const struct pqv_snapshot *s, int kept, const char *why);
    void *ctx;
};
/* pqv_vault_forget(v, opt, forgotten): forget snapshots (one epoch that
 * records it; their data stays until gc); *${forgotten} how many.
 * Requires unlock+lock. */
PQV_API int pqv_vault_forget(pqv_vault *v, const struct pqv_forget_options *opt,
    uint64_t *forgotten) PQV_WARN_UNUSED;
/* pqv_vault_pin(v, epoch, pinned): pin or unpin a kept snapshot (one
 * epoch).  Requires unlock+lock. */
PQV_API int pqv_vault_pin(pqv_vault *v, uint64_t epoch, int pinned) PQV_WARN_UNUSED;

/* A name's state in a snapshot, for versions and diff. */
struct pqv_version {
    uint64_t epoch;          /* the first kept snapshot with this version */
    uint64_t last;           /* the last one with it */
    int64_t time;            /* that first snapshot's */
    int present;             /* 0: the name did not exist there */
    struct pqv_entry entry;  /* if present */
};
/* pqv_vault_versions(v, name, out, n): the distinct versions of ${name}
 * across the kept snapshots, oldest first (a version: content, kind,
 * metadata; absent counts as one).  Free with pqv_versions_free. */
PQV_API int pqv_vault_versions(pqv_vault *v, const char *name, struct pqv_version **out,
    size_t *n) PQV_WARN_UNUSED;
PQV_API void pqv_versions_free(struct pqv_version *ver, size_t n);

enum { PQV_DIFF_ADDED = 1, PQV_DIFF_REMOVED = 2, PQV_DIFF_CHANGED = 3 };
struct pqv_change {
    int what;                /* PQV_DIFF_* */
    struct pqv_entry before, after;  /* removed: before; added: after; changed: both */
    unsigned fields;         /* changed: PQV_CHANGED_* */
};
enum { PQV_CHANGED_CONTENT = 1, PQV_CHANGED_KIND = 2, PQV_CHANGED_MODE = 4,
    PQV_CHANGED_OWNER = 8, PQV_CHANGED_TIME = 16, PQV_CHANGED_TARGET = 32,
    PQV_CHANGED_DEVICE = 64 /* a device node's number */ };
/* pqv_vault_diff(v, from, to, prefix, out, n): what changed below
 * ${prefix} (NULL: everything) from snapshot ${from} to snapshot ${to}
 * (0: the newest state), in name order.  Free with pqv_changes_free. */
PQV_API int pqv_vault_diff(pqv_vault *v, uint64_t from, uint64_t to, const char *prefix,
    struct pqv_change **out, size_t *n) PQV_WARN_UNUSED;
PQV_API void pqv_changes_free(struct pqv_change *c, size_t n);

/* pqv_vault_slot(v): the slot that unlocked ${v}, or -1. */
PQV_API int pqv_vault_slot(const pqv_vault *v);

#ifdef __cplusplus
}
#endif
#endif
