/*
 * src/cli/args.c: argument parsing.  Options and operands may be
 * interleaved; "--" ends options; "-" is an operand; long options take
 * their argument as "--opt=VALUE" or "--opt VALUE", short ones as "-oVALUE"
 * or "-o VALUE"; short flags may be grouped ("-lq").  Global options are
 * accepted before and after the command name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pqvault/argon2id.h"

enum {
    G_VAULT = 1001, G_KEYFILE, G_PFILE, G_PFD, G_PCMD, G_QUIET, G_WAIT, G_HELP,
    G_S3_ENDPOINT, G_S3_CA_FILE
};

static const struct optdef global_defs[] = {
    { "vault", 'v', 1, G_VAULT },
    { "keyfile", 0, 1, G_KEYFILE },
    { "passphrase-file", 0, 1, G_PFILE },
    { "passphrase-fd", 0, 1, G_PFD },
    { "passphrase-command", 0, 1, G_PCMD },
    { "quiet", 'q', 0, G_QUIET },
    { "wait", 0, 0, G_WAIT },
    { "help", 'h', 0, G_HELP },
    { "s3-endpoint", 0, 1, G_S3_ENDPOINT },
    { "s3-ca-file", 0, 1, G_S3_CA_FILE },
    { NULL, 0, 0, 0 }
};

int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    unsigned long long v = 0;
    if (s == NULL || *s == '\0')
        return -1;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (d > max || v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int parse_kdf(const char *s, struct pqv_kdf_params *out)
{
    struct pqv_kdf_params k = pqv_kdf_default;
    int seen_t = 0, seen_m = 0, seen_p = 0;
    const char *p = s;
    if (s == NULL || *s == '\0')
        return -1;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[64];
        unsigned long long v;
        if (len < 3 || len >= sizeof item || p[1] != '=')
            return -1;
        memcpy(item, p + 2, len - 2);
        item[len - 2] = '\0';
        if (parse_uint(item, 0xffffffffull, &v) != 0)
            return -1;
        switch (p[0]) {
        case 't':
            if (seen_t++) return -1;
            k.t_cost = (uint32_t)v;
            break;
        case 'm':
            if (seen_m++) return -1;
            k.m_kib = (uint32_t)v;
            break;
        case 'p':
            if (seen_p++) return -1;
            k.lanes = (uint32_t)v;
            break;
        default:
            return -1;
        }
        if (!end)
            break;
        p = end + 1;
    }
    if (k.t_cost < 1 || k.t_cost > PQV_ARGON2_MAX_T ||
        k.lanes < 1 || k.lanes > PQV_ARGON2_MAX_LANES ||
        k.m_kib < PQV_ARGON2_MIN_MKIB || k.m_kib < 8 * k.lanes ||
        k.m_kib > PQV_ARGON2_MAX_MKIB)
        return -1;
    *out = k;
    return 0;
}

static int set_pass_source(int kind, const char *arg, const char *optname)
{
    if (g_cli.pass.kind != PASS_NONE && g_cli.pass.kind != kind)
        return usage_error("%s: only one of --passphrase-file, "
            "--passphrase-fd and --passphrase-command may be given", optname);
    g_cli.pass.kind = kind;
    g_cli.pass.arg = arg;
    if (kind == PASS_FD) {
        unsigned long long fd;
        if (parse_uint(arg, 1000000, &fd) != 0)
            return usage_error("--passphrase-fd: '%s' is not a file descriptor "
                "number", arg);
        g_cli.pass.fd = (int)fd;
    }
    return 0;
}

static int apply_global(int id, const char *val)
{
    switch (id) {
    case G_VAULT:
        if (*val == '\0')
            return usage_error("-v: empty vault directory");
        g_cli.vault_opt = val;
        return 0;
    case G_KEYFILE:
        if (*val == '\0')
            return usage_error("--keyfile: empty file name");
        g_cli.keyfile_opt = val;
        return 0;
    case G_PFILE:
        return set_pass_source(PASS_FILE, val, "--passphrase-file");
    case G_PFD:
        return set_pass_source(PASS_FD, val, "--passphrase-fd");
    case G_PCMD:
        return set_pass_source(PASS_COMMAND, val, "--passphrase-command");
    case G_S3_ENDPOINT:
        if (strncmp(val, "https://", 8) != 0 && strncmp(val, "http://", 7) != 0)
            return usage_error("--s3-endpoint: '%s' is not an http:// or https:// URL", val);
        g_cli.s3_endpoint = val;
        return 0;
    case G_S3_CA_FILE:
        if (*val == '\0')
            return usage_error("--s3-ca-file: empty file name");
        g_cli.s3_ca_file = val;
        return 0;
    case G_QUIET:
        g_cli.quiet = 1;
        return 0;
    case G_WAIT:
        g_cli.wait = 1;
        return 0;
    case G_HELP:
        if (g_cli.cmd) {
            const struct command *c = find_command(g_cli.cmd);
            if (c) {
                print_command_help(c, stdout);
                exit(EXIT_OK);
            }
        }
        return ARG_ERROR; /* handled by main before a command */
    }
    return ARG_ERROR;
}

static const struct optdef *find_long(const struct optdef *defs, const char *name,
    size_t len)
{
    for (int pass = 0; pass < 2; pass++) {
        const struct optdef *d = pass == 0 ? defs : global_defs;
        for (; d && d->id; d++)
            if (d->lng && strlen(d->lng) == len && memcmp(d->lng, name, len) == 0)
                return d;
    }
    return NULL;
}

static const struct optdef *find_short(const struct optdef *defs, char c)
{
    for (int pass = 0; pass < 2; pass++) {
        const struct optdef *d = pass == 0 ? defs : global_defs;
        for (; d && d->id; d++)
            if (d->shrt == c)
                return d;
    }
    return NULL;
}

/* Returns the id of a command option, or 0 after applying a global one. */
static int found(const struct optdef *d, const char *val)
{
    if (d->id >= 1000) {
        if (g_cli.cmd == NULL && d->id == G_HELP)
            return G_HELP; /* main prints the general help */
        return apply_global(d->id, val) == 0 ? 0 : ARG_ERROR;
    }
    return d->id;
}

int next_arg(struct args *a, const struct optdef *defs, const char **val)
{
    for (;;) {
        *val = NULL;
        if (a->cluster && *a->cluster) {
            char c = *a->cluster++;
            const struct optdef *d = find_short(defs, c);
            if (!d) {
                usage_error("unknown option '-%c'", c);
                return ARG_ERROR;
            }
            if (d->has_arg) {
                if (*a->cluster) {
                    *val = a->cluster;
                } else if (a->i < a->argc) {
                    *val = a->argv[a->i++];
                } else {
                    usage_error("option '-%c' needs an argument", c);
                    return ARG_ERROR;
                }
                a->cluster = NULL;
            }
            int id = found(d, *val);
            if (id != 0)
                return id;
            continue;
        }
        a->cluster = NULL;
        if (a->i >= a->argc)
            return ARG_END;
        char *s = a->argv[a->i++];
        if (a->only_operands || s[0] != '-' || s[1] == '\0') {
            *val = s;
            return ARG_OPERAND;
        }
        if (s[1] == '-' && s[2] == '\0') {
            a->only_operands = 1;
            continue;
        }
        if (s[1] == '-') {
            const char *name = s + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            const struct optdef *d = find_long(defs, name, len);
            if (!d) {
                usage_error("unknown option '--%.*s'", (int)len, name);
                return ARG_ERROR;
            }
            if (d->has_arg) {
                if (eq) {
                    *val = eq + 1;
                } else if (a->i < a->argc) {
                    *val = a->argv[a->i++];
                } else {
                    usage_error("option '--%s' needs an argument", d->lng);
                    return ARG_ERROR;
                }
            } else if (eq) {
                usage_error("option '--%s' takes no argument", d->lng);
                return ARG_ERROR;
            }
            int id = found(d, *val);
            if (id != 0)
                return id;
            continue;
        }
        a->cluster = s + 1;
    }
}
