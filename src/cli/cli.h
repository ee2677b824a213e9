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

#ifndef PQV_VERSION_STRING
#define PQV_VERSION_STRING "0.1.0"
#endif

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
    char *vault_dir;           /* resolved vault directory (malloc'd) */
    const char *keyfile;       /* resolved key file or NULL (the default) */
    struct pass_source pass;
    int quiet;
    int wait;
};

extern struct cli g_cli;

/* ---- messages (main.c) ---- */

/* err_msg(fmt, ...): one line "pqvault: CMD: ..." on stderr. */
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* lib_error(what, rc): report library failure ${rc} about ${what} (may be
 * NULL) and return the exit status it maps to. */
int lib_error(const char *what, int rc);
/* exit_status(rc): the exit status of library code ${rc}. */
int exit_status(int rc);
/* usage_error(fmt, ...): the message, the command's brief usage; returns 2. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* report_cb: a pqv_report_fn printing warnings and errors on stderr. */
void report_cb(void *ctx, int level, const char *subject, const char *message);

/* ---- argument parsing (args.c) ---- */

struct optdef {
    const char *lng;   /* long name without "--", or NULL */
    char shrt;         /* short letter or 0 */
    int has_arg;
    int id;            /* > 0 */
};

struct args {
    int argc;
    char **argv;
    int i;             /* next argv index */
    int only_operands; /* after "--" */
    const char *cluster; /* rest of a short-option cluster */
};

enum { ARG_END = -1, ARG_ERROR = -2, ARG_OPERAND = 0 };

/* next_arg(a, defs, val): the id of the next option (its argument in
 * *${val}), ARG_OPERAND (the operand in *${val}), ARG_END, or ARG_ERROR
 * (after printing a usage error).  Global options are recognised too and
 * applied to g_cli (they are never returned). */
int next_arg(struct args *a, const struct optdef *defs, const char **val);
/* apply_global(id, val): apply a global option; returns 0 or ARG_ERROR. */
int parse_uint(const char *s, unsigned long long max, unsigned long long *out);
/* parse_kdf(s, out): strict "t=N,m=KIB,p=N" (any order, each at most once,
 * missing keys from the default); 0 or -1. */
int parse_kdf(const char *s, struct pqv_kdf_params *out);

/* ---- commands ---- */

struct command {
    const char *name;
    int (*run)(struct args *a);
    const char *usage;   /* after "pqvault NAME " */
    const char *help;    /* description and options */
};

const struct command *find_command(const char *name);
void print_command_help(const struct command *c, FILE *f);

int cmd_init(struct args *a);
int cmd_add(struct args *a);
int cmd_get(struct args *a);
int cmd_list(struct args *a);
int cmd_rm(struct args *a);
int cmd_check(struct args *a);
int cmd_passwd(struct args *a);
int cmd_recover(struct args *a);
int cmd_info(struct args *a);
int cmd_speed(struct args *a);
int cmd_gc(struct args *a);
int cmd_help(struct args *a);

/* ---- vault helpers (session.c) ---- */

/* resolve_location(): fill g_cli.vault_dir and g_cli.keyfile; exit status. */
int resolve_location(void);
/* open_vault(v): resolve and open; exit status (message printed). */
int open_vault(pqv_vault **v);
/* unlock_vault(v): read the passphrase and unlock; exit status. */
int unlock_vault(pqv_vault *v);
/* lock_vault(v): take the writer lock (waiting with --wait); exit status. */
int lock_vault(pqv_vault *v);
/* session(v, writer): open, (lock,) unlock; exit status. */
int session(pqv_vault **v, int writer);

/* ---- vault location (location.c) ---- */

/* location_is_s3(): whether the resolved location is an s3:// URL. */
int location_is_s3(void);
/* location_vault_open / _create / _recover: pqv_vault_open, pqv_vault_create
 * and pqv_vault_recover for the resolved location: a local directory, or an
 * s3:// URL whose storages (the bucket, and --keyfile's directory) are
 * opened once and kept until location_close().  Library return codes. */
int location_vault_open(pqv_vault **v);
int location_vault_create(const uint8_t *pass, size_t passlen,
    const struct pqv_init_options *opt, char recovery[PQV_RECOVERY_CHARS],
    char fingerprint[PQV_FINGERPRINT_CHARS]);
int location_vault_recover(const char *code, const uint8_t *pass, size_t passlen,
    const struct pqv_kdf_params *kdf);
/* location_close(): close the storages (after every pqv_vault_close). */
void location_close(void);

/* ---- passphrases (passphrase.c) ---- */

struct secret {
    char *buf;      /* NUL-terminated, locked in memory where allowed */
    size_t len;
    size_t cap;
};

#define SECRET_MAX 4096

int secret_alloc(struct secret *s);
void secret_free(struct secret *s);

/* Read the unlock passphrase from g_cli.pass, then $PQVAULT_PASSPHRASE,
 * then the terminal (prompt).  *${from_tty} says whether it was prompted.
 * Returns an exit status (message printed on failure). */
int read_passphrase(struct secret *s, const char *prompt, int *from_tty);
/* Read a passphrase to set: from ${src} (kind PASS_NONE: then from the
 * environment variable ${env}, then the terminal, asked twice).  Empty
 * passphrases are refused.  Returns an exit status. */
int read_new_passphrase(struct secret *s, const struct pass_source *src,
    const char *env);
/* Read a recovery code from ${file} (NULL: $PQVAULT_RECOVERY_CODE, then a
 * prompt).  Returns an exit status. */
int read_recovery_code(struct secret *s, const char *file);
/* tty_available(): whether /dev/tty can be opened. */
int tty_available(void);

/* ---- progress (progress.c) ---- */

struct progress;
/* progress_new(label): a progress bar on stderr, or NULL when stderr is not
 * a terminal or -q was given. */
struct progress *progress_new(const char *label);
void progress_cb(void *ctx, uint64_t done, uint64_t total);
/* progress_clear_line(): clear the active bar's line before a message (the
 * bar is redrawn at the next update). */
void progress_clear_line(void);
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

#endif
