/*
 * src/cli/cli.h: shared declarations of the pqvault command-line program.
 * The program is a thin layer over libpqvault (include/pqvault/vault.h):
 * argument parsing, passphrase sources, messages, output formatting and
 * the progress bar.  docs/CLI.md records the decisions made here.
 */
#ifndef PQV_CLI_H
#define PQV_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pqvault/vault.h"

/* PQV_VERSION_STRING comes from the Makefile's VERSION. */

/* Documented, stable exit statuses. */
enum {
    EXIT_OK = 0,
    EXIT_ERR = 1,      /* other error: I/O, not found, already exists */
    EXIT_USAGE = 2,    /* usage error */
    EXIT_AUTH = 3,     /* wrong passphrase or recovery code */
    EXIT_INTEGRITY = 4,/* corruption or tampering detected */
    EXIT_NOVAULT = 5,  /* no vault at that location */
    EXIT_LOCKED = 6    /* vault locked by another writer */
};

/* Where the passphrase used to unlock comes from. */
enum pass_source_kind {
    PASS_NONE = 0, PASS_FILE, PASS_FD, PASS_COMMAND, PASS_ENV, PASS_TTY
};

struct pass_source {
    int kind;            /* PASS_FILE, PASS_FD, PASS_COMMAND or PASS_NONE */
    const char *arg;     /* file name or command */
    int fd;
};

/* Global state from the global options. */
struct cli {
    const char *cmd;           /* command name, for messages */
    const char *vault_opt;     /* -v */
    const char *keyfile_opt;   /* --keyfile */
    const char *s3_endpoint;   /* --s3-endpoint */
    const char *s3_ca_file;    /* --s3-ca-file */
    const char *state_dir_opt; /* --state-dir */
    char *vault_dir;           /* resolved vault directory (malloc'd) */
    const char *keyfile;       /* resolved key file or NULL (the default) */
    struct pass_source pass;
    int quiet;
    int wait;
    int force_hint;            /* lib_error: "already exists" may suggest --force */
    int keyfile_hint;          /* lib_error: "not found" is the key file */
    int nospace_hint;          /* lib_error: "no space" may suggest rm and gc (add) */
    struct pqv_kdf_limit kdf_limit; /* --kdf-limit (if have_kdf_limit) */
    int have_kdf_limit;
    const char *at;            /* --at SNAP (reading commands) */
};

extern struct cli g_cli;

/* ---- messages (main.c) ---- */

/* err_msg(fmt, ...): one line "pqvault: CMD: ..." on stderr. */
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* lib_error(what, rc): report library failure ${rc} about ${what} (may be
 * NULL) and return the exit status it maps to. */
int lib_error(const char *what, int rc);
/* lib_error_text(buf, n, what, rc): the message lib_error(what, rc)
 * prints after "pqvault: CMD: ", in ${buf}; the exit status. */
int lib_error_text(char *buf, size_t n, const char *what, int rc);
/* lib_error_text_of(buf, n, what, rc, e): the same for the failure ${e}
 * (an operand's, kept apart from the thread's last one). */
int lib_error_text_of(char *buf, size_t n, const char *what, int rc, const struct pqv_error *e);
/* exit_status(rc): the exit status of library code ${rc}. */
int exit_status(int rc);
/* usage_error(fmt, ...): the message, the command's brief usage; returns 2. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* no_operands(val): a command that takes no operand was given ${val}. */
static inline int
no_operands(const char *val)
{
    return usage_error("unexpected operand '%s'", val);
}
/* report_cb: a pqv_report_fn printing warnings and errors on stderr. */
void report_cb(void *ctx, int level, const char *subject, const char *message);

/* ---- commands and options (commands.c) ---- */

/* Option ids: command options below G_FIRST, global options from it. */
enum opt_id {
    OPT_NAME = 1, OPT_FORCE, OPT_OUT, OPT_LONG, OPT_JSON, OPT_READDATA, OPT_NOKEY,
    OPT_KEM, OPT_AEAD, OPT_KDF, OPT_SLOT, OPT_CLEAR, OPT_NEWFILE, OPT_NEWFD,
    OPT_RECFILE, OPT_VERSION, OPT_NOCOMPRESS, OPT_FOLLOW, OPT_ONEFS,
    OPT_DELETE, OPT_FORCEREAD, OPT_DRYRUN, OPT_VERBOSE, OPT_EXCLUDE, OPT_EXCLUDEFROM,
    OPT_EXCLUDECACHES, OPT_STRIP, OPT_SKIPEXISTING, OPT_TOORIGINAL, OPT_TO, OPT_BYTES, OPT_DEPTH,
    OPT_KDFTIME, OPT_KDFONLY, OPT_QUICK, OPT_RECIPIENT, OPT_REPLACE, OPT_UNVERIFIED,
    OPT_QUARANTINE, OPT_PREFIX, OPT_SHARED_INBOX, OPT_COUNT, OPT_KEEP_LAST, OPT_KEEP_HOURLY,
    OPT_KEEP_DAILY, OPT_KEEP_WEEKLY, OPT_KEEP_MONTHLY, OPT_KEEP_YEARLY, OPT_KEEP_WITHIN,
    OPT_REPAIR_INDEX, OPT_FILESFROM, OPT_NULL, OPT_EXCLUDELARGER, OPT_EXCLUDEIFPRESENT,
    OPT_INCLUDE, OPT_FOREGROUND, OPT_CACHE_SIZE, OPT_ALLOW_OTHER,
    G_FIRST = 1000,
    G_VAULT = G_FIRST, G_KEYFILE, G_PFILE, G_PFD, G_PCMD, G_QUIET, G_WAIT, G_HELP,
    G_KDFLIMIT, G_S3_ENDPOINT, G_S3_CA_FILE, G_STATE_DIR, G_AT
};

struct optdef {
    const char *lng;   /* long name without "--", or NULL */
    char shrt;         /* short letter or 0 */
    int has_arg;
    int id;            /* enum opt_id */
};

enum cmd_id {
    CMD_INIT = 1, CMD_ADD, CMD_GET, CMD_LIST, CMD_RM, CMD_CHECK, CMD_PASSWD,
    CMD_RECOVER, CMD_INFO, CMD_SPEED, CMD_GC, CMD_HELP, CMD_UPGRADE, CMD_ACCEPT, CMD_COPY,
    CMD_EXPORT_RECIPIENT, CMD_INBOX, CMD_IMPORT, CMD_WRITER, CMD_LOG, CMD_DIFF, CMD_VERSIONS,
    CMD_FORGET, CMD_PIN, CMD_UNPIN, CMD_STATS, CMD_MOUNT, CMD_COUNT
};

struct command {
    const char *name;
    int id;                      /* enum cmd_id */
    const struct optdef *opts;   /* its options (global ones always apply) */
    const char *usage;           /* after "pqvault NAME " */
    const char *help;            /* description and options */
};

extern const struct command commands[];   /* ends with a NULL name */
extern const struct optdef global_opts[];
extern const struct optdef main_opts[];   /* before the command: --version */

const struct command *command_find(const char *name);
/* command_suggest(word): the command ${word} probably meant (another
 * tool's word for it, or a typo of its name: at most 2 edits), or NULL. */
const char *command_suggest(const char *word);
void command_print_help(const struct command *c, FILE *f);
void commands_print_general_help(FILE *f);

/* ---- argument parsing (args.c) ---- */

struct args {
    int argc;
    char **argv;
    int i;                       /* next argv index */
    int only_operands;           /* after "--" */
    const char *cluster;         /* rest of a short-option cluster */
    const struct optdef *defs;   /* the command's options */
    struct cli *g;               /* where global options go */
    char error[512];             /* the usage error of ARG_ERROR */
};

enum { ARG_END = -1, ARG_ERROR = -2, ARG_HELP = -3, ARG_OPERAND = 0 };

/* next_arg(a, val): the id of the next option of a->defs (its argument in
 * *${val}), ARG_OPERAND (the operand in *${val}), ARG_END, ARG_HELP (-h or
 * --help), or ARG_ERROR (the message in a->error).  Global options are
 * applied to a->g and never returned. */
int next_arg(struct args *a, const char **val);
int parse_uint(const char *s, unsigned long long max, unsigned long long *out);
/* parse_size(s, out): a size as restic takes it: digits, then at most one
 * of b/B (bytes), k/K, m/M, g/G, t/T (powers of 1024); 0 or -1. */
int parse_size(const char *s, uint64_t *out);
/* parse_kdf(s, out): strict "t=N,m=KIB,p=N" (any order, each at most once,
 * missing keys from the default); 0 or -1. */
int parse_kdf(const char *s, struct pqv_kdf_params *out);
/* parse_kdf_limit(s, out): strict "m=KIB,t=N" (any order, each at most
 * once, missing keys from pqv_kdf_limit_default; m and t within the
 * format's maxima); 0 or -1. */
int parse_kdf_limit(const char *s, struct pqv_kdf_limit *out);

/* parse_duration(s, usec): strict "N[.F]ms" or "N[.F]s" (decimal digits,
 * an optional fraction with at least one digit, the unit; no sign, space or
 * anything after) into microseconds (fraction digits finer than that are
 * dropped); 0, -1 (not a duration) or -2 (more than DURATION_MAX_UNITS of
 * its unit). */
#define DURATION_MAX_UNITS 1000000000u
int parse_duration(const char *s, uint64_t *usec);

/* ---- commands (cmd_*.c, speed.c, main.c) ---- */

/* arg_stop(a, id): what a command returns when next_arg gave ARG_ERROR
 * (the usage error printed: 2) or ARG_HELP (the command's help: 0). */
int arg_stop(struct args *a, int id);

int cmd_init(struct args *a);
int cmd_add(struct args *a);
int cmd_get(struct args *a);
int cmd_list(struct args *a);
int cmd_rm(struct args *a);
int cmd_check(struct args *a);
int cmd_passwd(struct args *a);
int cmd_recover(struct args *a);
int cmd_info(struct args *a);
int cmd_stats(struct args *a);
int cmd_speed(struct args *a);
int cmd_gc(struct args *a);
int cmd_upgrade(struct args *a);
int cmd_accept(struct args *a);
int cmd_copy(struct args *a);
int cmd_help(struct args *a);
int cmd_export_recipient(struct args *a);
int cmd_inbox(struct args *a);
int cmd_import(struct args *a);
int cmd_writer(struct args *a);
int cmd_log(struct args *a);
int cmd_diff(struct args *a);
int cmd_versions(struct args *a);
int cmd_forget(struct args *a);
int cmd_pin(struct args *a);
int cmd_unpin(struct args *a);
int cmd_mount(struct args *a);
/* apply_at(v, spec): --at SNAP: reading commands read that snapshot. */
int apply_at(pqv_vault *v, const char *spec);

/* private_stdout(what): standard output may receive a secret (${what}: the
 * recovery code, a writer's credential): when it is a regular file
 * (pqvault init > recovery-code.txt, made 0644 under umask 022), it is made
 * mode 0600 if it is ours; one that another user owns, or that stays
 * readable or writable by others (a file system without modes), is
 * refused.  Pipes, terminals and devices are left as they are.  Exit
 * status (output.c). */
int private_stdout(const char *what);
/* inbox_session(v, recipient): ${v} opened as a write-only writer with the
 * recipient file ${recipient} (no key file, no passphrase, no lock). */
int inbox_session(pqv_vault **v, const char *recipient);
/* inbox_note(v): "N inbox batches wait" on stderr when there are any. */
void inbox_note(pqv_vault *v);

/* ---- Argon2id timing (kdf_time.c): speed and init --kdf-time ---- */

/* --kdf-time bounds, microseconds. */
#define KDF_TIME_MIN_US 100000u
#define KDF_TIME_MAX_US 60000000u

/* The most an Argon2id cost picked here may ask for: m and t within the
 * reader limit (--kdf-limit, else pqv_kdf_limit_default, so that an unlock
 * needs no --kdf-limit), m also within half of the available memory (and
 * of RLIMIT_AS when set). */
struct kdf_caps {
    struct pqv_kdf_limit limit;   /* the reader limit the caps come from */
    uint32_t m_kib;
    uint32_t t_cost;
    uint64_t avail_kib;   /* MemAvailable (0: unknown) */
    const char *m_why;    /* what set m_kib */
};

/* A cost picked for a target time, and its measured time. */
struct kdf_pick {
    struct pqv_kdf_params p;
    double seconds;       /* one run of p, measured last */
    int short_of_target;  /* the caps reached, still below the target */
    int over_target;      /* the least cost already above the target */
};

/* kdf_time_arg(opt, val, seconds): parse --kdf-time's DURATION; an exit
 * status (usage error printed). */
int kdf_time_arg(const char *opt, const char *val, double *seconds);
/* kdf_get_caps(c, lanes): the caps on this machine now. */
void kdf_get_caps(struct kdf_caps *c, uint32_t lanes);
/* kdf_time_run(p, seconds): one pqv_argon2id of cost ${p} (lanes threads)
 * over a fixed, non-secret input; a library code. */
int kdf_time_run(const struct pqv_kdf_params *p, double *seconds);
/* kdf_time_unlock(p, other, caps, seconds): the Argon2id work of one
 * unlock of a key file with one slot at ${p} and the other at ${other}
 * (NULL: unused, the default cost), as pqv_keyfile_unlock_limited does it
 * under caps->limit: both at once when their memory fits the limit, else
 * one after the other (the other not at all above the limit); a library
 * code. */
int kdf_time_unlock(const struct pqv_kdf_params *p, const struct pqv_kdf_params *other,
    const struct kdf_caps *caps, double *seconds);
/* kdf_calibrate(target, lanes, other, quick, caps, out): the cost, with
 * ${lanes} lanes (at least 8 MiB), of a slot whose unlock
 * (kdf_time_unlock, the other slot at ${other}) takes about ${target}
 * seconds here: m grows (whole MiB) up to the cap, then t; measured, not
 * only extrapolated (the last cost's time, the faster of two runs up to a
 * 5 s target, is in out->seconds).  Takes about 3 to 6 times ${target};
 * with ${quick} one run per cost and at most two corrected costs, about
 * 1.5 to 2.5 times.  A library code (PQV_E_NOMEM). */
int kdf_calibrate(double target, uint32_t lanes, const struct pqv_kdf_params *other, int quick,
    const struct kdf_caps *caps, struct kdf_pick *out);
/* kdf_format_mem(buf, n, m_kib): "64 MiB", or "48 KiB" below a whole MiB. */
void kdf_format_mem(char *buf, size_t n, uint32_t m_kib);
/* kdf_format_time(buf, n, seconds): "850 ms" below a second, else "1.2 s". */
void kdf_format_time(char *buf, size_t n, double seconds);

/* ---- vault helpers (session.c) ---- */

/* cli_state_dir(): where this machine remembers the vaults' epochs:
 * --state-dir, else $PQVAULT_STATE_DIR (relative ones made absolute), else
 * ${XDG_STATE_HOME:-$HOME/.local/state}/pqvault (each only if absolute), or
 * NULL (then nothing is remembered, and a warning says so once). */
const char *cli_state_dir(void);
/* state_report_cb: the vault's own report callback (pqv_vault_set_report,
 * pqv_init_options.report): that the local state cannot be kept (a report
 * whose subject is the state directory) is said once per run, with the
 * ways to choose another directory; others as report_cb. */
void state_report_cb(void *ctx, int level, const char *subject, const char *message);
/* resolve_location(): fill g_cli.vault_dir and g_cli.keyfile; exit status. */
int resolve_location(void);
/* open_vault(v): resolve and open for what needs no key (info, check
 * --no-key): a missing, damaged or unsupported key file is no failure
 * (PQV_OPEN_KEYFILE_OPTIONAL); exit status (message printed). */
int open_vault(pqv_vault **v);
int open_vault_flags(pqv_vault **v, unsigned flags);
/* passphrase_given(): a passphrase source that asks nobody (a file, fd,
 * command or $PQVAULT_PASSPHRASE; never a prompt): info, inbox and
 * export-recipient unlock only then, to verify what they show. */
int passphrase_given(void);
/* open_vault_unlock_if_given(v): open_vault, then unlock_vault when
 * passphrase_given(); exit status (${v} closed on failure). */
int open_vault_unlock_if_given(pqv_vault **v);
/* unlock_vault(v): read the passphrase and unlock; exit status.  A key
 * file slot above the Argon2id limit is reported with the --kdf-limit that
 * would accept it. */
int unlock_vault(pqv_vault *v);
/* lock_vault(v): take the writer lock (waiting with --wait); exit status. */
int lock_vault(pqv_vault *v);
/* session(v, writer): open (the key file required), (lock,) unlock; exit
 * status. */
int session(pqv_vault **v, int writer);

/* ---- vault location (location.c) ---- */

/* location_is_s3(): whether the resolved location is an s3:// URL. */
int location_is_s3(void);
/* location_vault_open(v, flags, storage_failed) / location_vault_create:
 * pqv_vault_open_flags and pqv_vault_create for the resolved location: a
 * local directory, or an s3:// URL whose storages (the bucket, and
 * --keyfile's directory) are opened once and kept until location_close().
 * *${storage_failed} says the storage itself could not be opened (a
 * missing bucket).  Library return codes. */
/* location_open_other(where, out): a second storage (copy --to): a
 * directory (created if missing) or an s3:// URL, with the same S3 settings
 * as the vault's.  A library code. */
int location_open_other(const char *where, pqv_storage **out);
int location_vault_open(pqv_vault **v, unsigned flags, int *storage_failed);
int location_vault_create(const uint8_t *pass, size_t passlen,
    const struct pqv_init_options *opt, char recovery[PQV_RECOVERY_CHARS],
    char fingerprint[PQV_FINGERPRINT_CHARS]);
/* location_close(): close the storages (after every pqv_vault_close). */
void location_close(void);

/* ---- passphrases (passphrase.c) ---- */

struct secret {
    char *buf;      /* NUL-terminated, locked in memory where allowed */
    size_t len;
    size_t cap;
    char eol[2];    /* the line end read after it ("\n", "\r\n" or "\r"), */
    size_t eol_len; /* which is not part of it */
    int from_env;   /* it came from the environment */
};

#define SECRET_MAX 4096

int secret_alloc(struct secret *s);
void secret_free(struct secret *s);

/* Every source is read alike: its first line, without one trailing "\n",
 * "\r\n" or "\r" (kept in s->eol); for the environment, the whole value
 * so read. */

/* Read the unlock passphrase from g_cli.pass, then $PQVAULT_PASSPHRASE,
 * then the terminal (prompt).  *${from_tty} says whether it was prompted.
 * The caller refuses an empty one (s->len 0).  Returns an exit status
 * (message printed on failure). */
int read_passphrase(struct secret *s, const char *prompt, int *from_tty);
/* Read a passphrase to set: from ${src} (kind PASS_NONE: then from the
 * environment variable ${env}, then the terminal, asked twice).  Empty
 * passphrases and passphrases with a line break inside (which no file or
 * terminal could give back) are refused; a weak one (passphrase_strength)
 * is set with a warning on stderr, once per run.  Returns an exit
 * status. */
int read_new_passphrase(struct secret *s, const struct pass_source *src,
    const char *env);
/* passphrase_strength(p, len, chars, bits): whether the passphrase ${p}
 * is weak by a simple estimate (docs/CLI.md): fewer than
 * WEAK_PASSPHRASE_CHARS characters (UTF-8 sequences count as one), or
 * fewer than WEAK_PASSPHRASE_BITS bits, counted as min(characters, 2 x
 * distinct bytes) x log2(the size of the classes used: 26 lower case, 26
 * upper case, 10 digits, 33 for anything else).  No dictionary. */
#define WEAK_PASSPHRASE_CHARS 12
#define WEAK_PASSPHRASE_BITS 50
int passphrase_strength(const char *p, size_t len, unsigned *chars, unsigned *bits);
/* Read a recovery code from ${file} (NULL: $PQVAULT_RECOVERY_CODE, then a
 * prompt with echo on: the code replaces a lost passphrase, it is read off
 * paper).  *${from_tty} says whether it was prompted.  Returns an exit
 * status. */
int read_recovery_code(struct secret *s, const char *file, int *from_tty);
/* tty_say(fmt, ...): one line "pqvault: CMD: ..." on the terminal itself
 * (what may quote a secret typed there, never on stderr, which may be a
 * log); on stderr only when there is no terminal. */
void tty_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- recovery codes (recovery_code.c) ---- */

/* recovery_code_problem(code, why, n, show_group): 0 when ${code} is a
 * well-formed recovery code whose checksum matches; else 1 with what is
 * wrong in ${why}: the first group (or character, when typed without
 * separators) not in the alphabet, the first group not of 4 symbols, the
 * count of symbols, or the checksum.  ${show_group}: quote the bad group
 * (for the terminal it was typed on only). */
int recovery_code_problem(const char *code, char *why, size_t n, int show_group);
/* tty_available(): whether /dev/tty can be opened. */
int tty_available(void);

/* ---- progress (progress.c) ---- */

struct progress;
/* progress_new(label): a progress bar on stderr, or NULL when stderr is not
 * a terminal or -q was given. */
struct progress *progress_new(const char *label);
void progress_cb(void *ctx, uint64_t done, uint64_t total);
/* progress_hide(): before printing anything else on the terminal while
 * a bar may be shown: clear its line and hold the bar (no thread draws
 * it) until progress_show(p), which draws it again.  NULL (nothing to do)
 * when no bar is active. */
struct progress *progress_hide(void);
void progress_show(struct progress *p);
/* progress_line_shown(): whether a bar's line is on the terminal now
 * (async-signal-safe: for the interrupt handler). */
int progress_line_shown(void);
/* progress_end(p): clear the bar's line and free. */
void progress_end(struct progress *p);

/* ---- output (output.c) ---- */

void format_mode(char out[11], int type, uint32_t mode);
void format_local_time(char *out, size_t outlen, int64_t sec, const char *fmt);
void format_utc_rfc3339(char *out, size_t outlen, int64_t sec, uint32_t nsec);
/* json_string(f, s): ${s} as a JSON string (valid UTF-8 kept, control
 * characters escaped, invalid bytes as \udcXX). */
void json_string(FILE *f, const char *s);
void format_bytes(char *out, size_t outlen, uint64_t n);
/* format_count(out, n): 1234567 as "1,234,567". */
void format_count(char out[32], uint64_t n);
/* format_size_human(out, outlen, n): ${n} bytes as ls -lh shows them: as is
 * below 1024, else rounded up with a unit K, M, G, T, P, E (1.0K, 4.5G,
 * 23M: one decimal below 10). */
void format_size_human(char *out, size_t outlen, uint64_t n);
/* print_name(f, name, escape): a stored name; if ${escape} (a terminal)
 * quoted as GNU ls's shell-escape style does: as is when nothing needs it,
 * else 'in single quotes' ("it's" in double quotes), with controls, bytes
 * that are not UTF-8 and line-reordering characters as $'\n' parts. */
void print_name(FILE *f, const char *name, int escape);

/* What add and rm report (cmd_files.c): with --json one object per entry
 * on stdout; with --verbose every entry on stderr; otherwise warnings and
 * errors only.  add_report is their pqv_report_fn (ctx: a struct add_out);
 * operand_failed(o, operand, rc, e) reports an operand's failure ${rc}
 * (${e}): the error line, and with --json its own object {"name":
 * OPERAND, "operand": true, "error": WHY}; the exit status. */
struct add_out {
    int json, verbose;
    uint64_t errors;
};
void add_report(void *ctx, int level, const char *subject, const char *message);
int operand_failed(const struct add_out *o, const char *operand, int rc,
    const struct pqv_error *e);
/* keep(status, rc): the first failure's status wins (cmd_files.c). */
void keep(int *status, int rc);
/* seconds_since(t0): seconds on the monotonic clock since ${t0}. */
struct timespec;
double seconds_since(const struct timespec *t0);

#endif
