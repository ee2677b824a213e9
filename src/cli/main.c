/*
 * src/cli/main.c: global options, command dispatch, messages and the
 * mapping of library errors to the documented exit statuses.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "cli.h"

struct cli g_cli;

static const struct command commands[] = {
    { "init", cmd_init, "[--kem NAME] [--aead NAME] [--kdf t=N,m=KIB,p=N]",
      "Create a vault and its key file, and print the recovery code once.\n"
      "The passphrase for slot 0 comes from the passphrase sources (asked\n"
      "twice on the terminal).\n"
      "  --kem NAME        FrodoKEM parameter set (FrodoKEM-640-AES, -640-SHAKE,\n"
      "                    -976-AES, -976-SHAKE, -1344-AES, -1344-SHAKE);\n"
      "                    default: FrodoKEM-976-AES with AES instructions,\n"
      "                    FrodoKEM-976-SHAKE otherwise\n"
      "  --aead NAME       default AEAD: AES-256-GCM, ChaCha20-Poly1305 or auto\n"
      "  --kdf t=N,m=KIB,p=N  Argon2id cost of slot 0 (default t=3,m=65536,p=4)\n" },
    { "add", cmd_add, "PATH... [--name NAME] [--force]",
      "Store files and directories (recursively).  '-' reads standard input\n"
      "and needs --name.  Symbolic links, devices, sockets and FIFOs are\n"
      "reported and skipped.\n"
      "  --name NAME       store the single PATH under NAME\n"
      "  -f, --force       replace existing names\n" },
    { "get", cmd_get, "NAME... [-o OUT] [--force]",
      "Restore stored files or directory trees.  A file goes to OUT unless OUT\n"
      "is an existing directory, then to OUT/NAME; a directory restores its\n"
      "tree under OUT (default: the current directory).\n"
      "  -o, --output OUT  destination; '-' writes a regular file to stdout\n"
      "  -f, --force       replace existing files\n" },
    { "list", cmd_list, "[PREFIX] [-l] [--json]",
      "List stored names (sorted), optionally only PREFIX and what is under it.\n"
      "  -l, --long        mode, size, modification time and name\n"
      "  --json            one JSON array of objects (see pqvault(1))\n" },
    { "rm", cmd_rm, "NAME...",
      "Remove stored files (a directory name removes everything under it).\n" },
    { "check", cmd_check, "[--read-data | --no-key]",
      "Verify the config, every record and the presence and size of every\n"
      "object; report problems on stderr and a summary on stdout.\n"
      "  --read-data       also decrypt and verify every object's tags\n"
      "  --no-key          without the passphrase: the structure of the config,\n"
      "                    key file, records and objects only\n" },
    { "passwd", cmd_passwd, "[--slot 0|1] [--clear] [--kdf t=N,m=KIB,p=N]",
      "Set or change the passphrase of a key slot (default: the slot that\n"
      "unlocked).  The current passphrase comes from the passphrase sources,\n"
      "the new one from --new-passphrase-file, --new-passphrase-fd,\n"
      "$PQVAULT_NEW_PASSPHRASE or the terminal (asked twice).\n"
      "  --slot 0|1        the slot to write\n"
      "  --clear           make --slot unused instead (not the slot that unlocked)\n"
      "  --kdf t=N,m=KIB,p=N  Argon2id cost of the slot (default t=3,m=65536,p=4)\n"
      "  --new-passphrase-file FILE, --new-passphrase-fd N  source of the new one\n" },
    { "recover", cmd_recover, "[--recovery-file FILE] [--kdf t=N,m=KIB,p=N]",
      "Write a new key file from the recovery code, slot 0 sealed under a new\n"
      "passphrase (from the passphrase sources; asked twice on the terminal).\n"
      "The code comes from --recovery-file, $PQVAULT_RECOVERY_CODE or the\n"
      "terminal.\n"
      "  --recovery-file FILE  read the recovery code from FILE\n"
      "  --kdf t=N,m=KIB,p=N   Argon2id cost of slot 0\n" },
    { "info", cmd_info, "",
      "Show the vault's format version, id, suites, fingerprint, key slot\n"
      "parameters and counts.  Needs no passphrase.\n" },
    { "speed", cmd_speed, "",
      "Measure the AEAD suites and the FrodoKEM parameter sets on this CPU\n"
      "and mark the choices of auto mode.  Needs no vault.\n" },
    { "gc", cmd_gc, "",
      "Remove orphaned objects and leftover temporary files.\n" },
    { "help", cmd_help, "[COMMAND]",
      "Show the general help or the help of COMMAND.\n" },
    { NULL, NULL, NULL, NULL }
};

const struct command *find_command(const char *name)
{
    for (const struct command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

void print_command_help(const struct command *c, FILE *f)
{
    fprintf(f, "usage: pqvault [GLOBAL OPTIONS] %s%s%s\n\n%s", c->name,
        *c->usage ? " " : "", c->usage, c->help);
    fprintf(f, "\nGlobal options: see 'pqvault --help'.\n");
}

static void print_general_help(FILE *f)
{
    fprintf(f,
        "usage: pqvault [-v VAULT] [--keyfile FILE] [--passphrase-file FILE |\n"
        "               --passphrase-fd N | --passphrase-command CMD] [-q] [--wait]\n"
        "               COMMAND [ARGS...]\n\n"
        "pqvault keeps files encrypted at rest with post-quantum hybrid keys.\n\n"
        "Commands:\n");
    for (const struct command *c = commands; c->name; c++)
        fprintf(f, "  %-8s %s\n", c->name, c->usage);
    fprintf(f,
        "\nGlobal options:\n"
        "  -v, --vault DIR|s3://BUCKET[/PREFIX]\n"
        "                              vault directory or S3 location (default\n"
        "                              $PQVAULT_DIR, else\n"
        "                              ${XDG_DATA_HOME:-$HOME/.local/share}/pqvault)\n"
        "  --keyfile FILE              key file (default $PQVAULT_KEYFILE, else\n"
        "                              VAULT/keyfile)\n"
        "  --passphrase-file FILE      passphrase: first line of FILE\n"
        "  --passphrase-fd N           passphrase: read from descriptor N\n"
        "  --passphrase-command CMD    passphrase: first line of CMD's output\n"
        "                              (else $PQVAULT_PASSPHRASE, else a prompt)\n"
        "  --s3-endpoint URL           S3 endpoint (default $AWS_ENDPOINT_URL, else AWS\n"
        "                              in $AWS_REGION); credentials from\n"
        "                              $AWS_ACCESS_KEY_ID/$AWS_SECRET_ACCESS_KEY or\n"
        "                              ~/.aws/credentials ($AWS_PROFILE)\n"
        "  --s3-ca-file FILE           CA bundle for an https:// endpoint (default\n"
        "                              $AWS_CA_BUNDLE, else the system's)\n"
        "  -q, --quiet                 no progress bar or informational messages\n"
        "  --wait                      wait for another writer's lock\n"
        "  -h, --help                  this help ('pqvault help COMMAND': a command's)\n"
        "  --version                   print the version\n\n"
        "Exit status: 0 success, 1 error, 2 usage, 3 wrong passphrase or recovery\n"
        "code, 4 integrity failure, 5 no vault, 6 locked by another writer.\n"
        "See pqvault(1).\n");
}

int cmd_help(struct args *a)
{
    const char *val;
    const char *topic = NULL;
    int id;
    while ((id = next_arg(a, NULL, &val)) != ARG_END) {
        if (id == ARG_ERROR)
            return EXIT_USAGE;
        if (topic)
            return usage_error("too many operands");
        topic = val;
    }
    if (!topic) {
        print_general_help(stdout);
        return EXIT_OK;
    }
    const struct command *c = find_command(topic);
    if (!c) {
        err_msg("unknown command '%s' (see 'pqvault --help')", topic);
        return EXIT_USAGE;
    }
    print_command_help(c, stdout);
    return EXIT_OK;
}

/* ---- messages ---- */

static void vmsg(const char *fmt, va_list ap)
{
    char buf[8192];
    int n;
    if (g_cli.cmd)
        n = snprintf(buf, sizeof buf, "pqvault: %s: ", g_cli.cmd);
    else
        n = snprintf(buf, sizeof buf, "pqvault: ");
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    /* One line: replace control characters (names may contain them). */
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    fflush(stdout);
    progress_clear_line();
    fprintf(stderr, "%s\n", buf);
}

void err_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
}

int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
    const struct command *c = g_cli.cmd ? find_command(g_cli.cmd) : NULL;
    if (c)
        fprintf(stderr, "usage: pqvault %s%s%s\nTry 'pqvault help %s'.\n",
            c->name, *c->usage ? " " : "", c->usage, c->name);
    else
        fprintf(stderr, "Try 'pqvault --help'.\n");
    return EXIT_USAGE;
}

int exit_status(int rc)
{
    switch (rc) {
    case PQV_OK: return EXIT_OK;
    case PQV_E_AUTH: return EXIT_AUTH;
    case PQV_E_INTEGRITY: return EXIT_INTEGRITY;
    case PQV_E_NOVAULT: return EXIT_NOVAULT;
    case PQV_E_LOCKED: return EXIT_LOCKED;
    default: return EXIT_ERR;
    }
}

int lib_error(const char *what, int rc)
{
    const char *detail = pqv_error_detail();
    const char *why = (detail && *detail) ? detail : pqv_strerror(rc);
    char buf[4096];
    size_t dl = strlen(why);
    /* A detail that ends in ":" or ": " names a subject without a reason. */
    if (dl > 0 && (why[dl - 1] == ':' || (dl > 1 && why[dl - 2] == ':' &&
        why[dl - 1] == ' '))) {
        snprintf(buf, sizeof buf, "%.*s: %s", (int)(dl - (why[dl - 1] == ' ' ? 2 : 1)),
            why, pqv_strerror(rc));
        why = buf;
    }
    const char *hint = "";
    if (rc == PQV_E_EXISTS && g_cli.cmd &&
        (strcmp(g_cli.cmd, "add") == 0 || strcmp(g_cli.cmd, "get") == 0) &&
        strstr(why, "--force") == NULL)
        hint = " (use --force to replace)";
    /* Avoid "x: x: ..." when the detail already names the subject. */
    if (what) {
        size_t wl = strlen(what);
        if (strncmp(why, what, wl) == 0 && (why[wl] == ':' || why[wl] == '/'))
            what = NULL;
        else if (wl >= 8 && strstr(why, what))
            what = NULL;
    }
    if (what)
        err_msg("%s: %s%s", what, why, hint);
    else
        err_msg("%s%s", why, hint);
    return exit_status(rc);
}

void report_cb(void *ctx, int level, const char *subject, const char *message)
{
    (void)ctx;
    if (level < PQV_REPORT_WARNING)
        return;
    if (subject && *subject)
        err_msg("%s: %s", subject, message ? message : "");
    else
        err_msg("%s", message ? message : "");
}

/* ---- main ---- */

static void protect_process(void)
{
    struct rlimit rl = { 0, 0 };
    (void)setrlimit(RLIMIT_CORE, &rl);
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

enum { M_VERSION = 1 };

int main(int argc, char **argv)
{
    static const struct optdef main_defs[] = {
        { "version", 0, 0, M_VERSION },
        { NULL, 0, 0, 0 }
    };
    struct args a = { argc, argv, 1, 0, NULL };
    const char *val;
    const char *cmdname = NULL;
    int id;

    protect_process();
    while (cmdname == NULL && (id = next_arg(&a, main_defs, &val)) != ARG_END) {
        if (id == ARG_ERROR)
            return EXIT_USAGE;
        if (id == M_VERSION) {
            printf("pqvault %s (vault format %d)\n", PQV_VERSION_STRING,
                PQV_FORMAT_VERSION);
            return EXIT_OK;
        }
        if (id >= 1000) { /* --help before a command */
            print_general_help(stdout);
            return EXIT_OK;
        }
        if (id == ARG_OPERAND)
            cmdname = val;
    }
    if (!cmdname) {
        print_general_help(stderr);
        return EXIT_USAGE;
    }
    const struct command *c = find_command(cmdname);
    if (!c) {
        err_msg("unknown command '%s'", cmdname);
        fprintf(stderr, "Try 'pqvault --help'.\n");
        return EXIT_USAGE;
    }
    g_cli.cmd = c->name;
    a.only_operands = 0; /* "--" before the command does not carry over */
    int status = c->run(&a);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        err_msg("standard output: write error");
        if (status == EXIT_OK)
            status = EXIT_ERR;
    }
    location_close();
    free(g_cli.vault_dir);
    return status;
}
