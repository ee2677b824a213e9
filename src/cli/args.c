/*
 * src/cli/args.c: argument parsing.  Options and operands may be
 * interleaved; "--" ends options; "-" is an operand; long options take
 * their argument as "--opt=VALUE" or "--opt VALUE", short ones as "-oVALUE"
 * or "-o VALUE"; short flags may be grouped ("-lq").  Global options are
 * accepted before and after the command name, and applied to the struct
 * cli the caller gives.  A separate value that is itself an option is
 * refused (an attached one may begin with '-').  The parser prints nothing
 * and never exits: errors (with their message in a->error) and help
 * requests are returned.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pqvault/argon2id.h"

int
parse_uint(const char *s, unsigned long long max, unsigned long long *out)
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

int
parse_size(const char *s, uint64_t *out)
{
    char digits[32];
    size_t len = s != NULL ? strlen(s) : 0;
    unsigned long long v, unit = 1;
    int shift = 0;

    if (len == 0 || len >= sizeof(digits))
        return -1;
    switch (s[len - 1]) {
    case 'b': case 'B': shift = 0; len--; break;
    case 'k': case 'K': shift = 10; len--; break;
    case 'm': case 'M': shift = 20; len--; break;
    case 'g': case 'G': shift = 30; len--; break;
    case 't': case 'T': shift = 40; len--; break;
    default: break;
    }
    memcpy(digits, s, len);
    digits[len] = '\0';
    unit <<= shift;
    if (parse_uint(digits, UINT64_MAX / unit, &v) != 0)
        return -1;
    *out = (uint64_t)(v * unit);
    return 0;
}

int
parse_kdf(const char *s, struct pqv_kdf_params *out)
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
        if (len < 3 || len >= sizeof(item) || p[1] != '=')
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

int
parse_duration(const char *s, uint64_t *usec)
{
    uint64_t whole = 0, frac = 0, scale = 1000000;
    const char *p = s;
    if (s == NULL || *p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > DURATION_MAX_UNITS / 10)
            return -2;
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > DURATION_MAX_UNITS)
            return -2;
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        /* Fraction digits in millionths of the unit; finer ones must be
         * digits too, and are dropped. */
        for (; *p >= '0' && *p <= '9'; p++) {
            if (scale > 1) {
                scale /= 10;
                frac += (uint64_t)(*p - '0') * scale;
            }
        }
    }
    if (strcmp(p, "ms") == 0)
        *usec = whole * 1000 + frac / 1000;
    else if (strcmp(p, "s") == 0)
        *usec = whole * 1000000 + frac;
    else
        return -1;
    return 0;
}

int
parse_kdf_limit(const char *s, struct pqv_kdf_limit *out)
{
    struct pqv_kdf_limit k = pqv_kdf_limit_default;
    int seen_t = 0, seen_m = 0;
    const char *p = s;
    if (s == NULL || *s == '\0')
        return -1;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[64];
        unsigned long long v;
        if (len < 3 || len >= sizeof(item) || p[1] != '=')
            return -1;
        memcpy(item, p + 2, len - 2);
        item[len - 2] = '\0';
        if (parse_uint(item, 0xffffffffull, &v) != 0)
            return -1;
        if (p[0] == 't' && !seen_t++)
            k.t_cost = (uint32_t)v;
        else if (p[0] == 'm' && !seen_m++)
            k.m_kib = (uint32_t)v;
        else
            return -1;
        if (!end)
            break;
        p = end + 1;
    }
    if (k.t_cost < 1 || k.t_cost > PQV_ARGON2_MAX_T || k.m_kib < PQV_ARGON2_MIN_MKIB ||
        k.m_kib > PQV_ARGON2_MAX_MKIB)
        return -1;
    *out = k;
    return 0;
}

/* arg_error(a, fmt, ...): record a usage error for the caller to print;
 * returns ARG_ERROR. */
static int
arg_error(struct args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
arg_error(struct args *a, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(a->error, sizeof(a->error), fmt, ap);
    va_end(ap);
    return ARG_ERROR;
}

static int
set_pass_source(struct args *a, int kind, const char *arg, const char *optname)
{
    struct pass_source *ps = &a->g->pass;

    if (ps->kind != PASS_NONE && ps->kind != kind)
        return arg_error(a, "%s: only one of --passphrase-file, --passphrase-fd and "
            "--passphrase-command may be given", optname);
    ps->kind = kind;
    ps->arg = arg;
    if (kind == PASS_FD) {
        unsigned long long fd;
        if (parse_uint(arg, 1000000, &fd) != 0)
            return arg_error(a, "--passphrase-fd: '%s' is not a file descriptor number", arg);
        ps->fd = (int)fd;
    }
    return 0;
}

/* apply_global(a, id, val): apply a global option to a->g; 0, ARG_HELP or
 * ARG_ERROR. */
static int
apply_global(struct args *a, int id, const char *val)
{
    struct cli *g = a->g;

    switch (id) {
    case G_VAULT:
        if (*val == '\0')
            return arg_error(a, "-v: empty vault directory");
        g->vault_opt = val;
        return 0;
    case G_KEYFILE:
        if (*val == '\0')
            return arg_error(a, "--keyfile: empty file name");
        g->keyfile_opt = val;
        return 0;
    case G_PFILE:
        return set_pass_source(a, PASS_FILE, val, "--passphrase-file");
    case G_PFD:
        return set_pass_source(a, PASS_FD, val, "--passphrase-fd");
    case G_PCMD:
        return set_pass_source(a, PASS_COMMAND, val, "--passphrase-command");
    case G_S3_ENDPOINT:
        if (strncmp(val, "https://", 8) != 0 && strncmp(val, "http://", 7) != 0)
            return arg_error(a, "--s3-endpoint: '%s' is not an http:// or https:// URL", val);
        g->s3_endpoint = val;
        return 0;
    case G_S3_CA_FILE:
        if (*val == '\0')
            return arg_error(a, "--s3-ca-file: empty file name");
        g->s3_ca_file = val;
        return 0;
    case G_STATE_DIR:
        if (*val == '\0')
            return arg_error(a, "--state-dir: empty directory name");
        g->state_dir_opt = val;
        return 0;
    case G_AT:
        if (*val == '\0')
            return arg_error(a, "--at: empty snapshot (an epoch, latest, latest~N, a date or "
                "time)");
        g->at = val;
        return 0;
    case G_QUIET:
        g->quiet = 1;
        return 0;
    case G_WAIT:
        g->wait = 1;
        return 0;
    case G_HELP:
        return ARG_HELP;
    case G_KDFLIMIT:
        if (parse_kdf_limit(val, &g->kdf_limit) != 0)
            return arg_error(a, "--kdf-limit: invalid '%s' (expected m=KIB,t=N with "
                "%u<=m<=%u, 1<=t<=%u)", val, PQV_ARGON2_MIN_MKIB, PQV_ARGON2_MAX_MKIB,
                PQV_ARGON2_MAX_T);
        g->have_kdf_limit = 1;
        return 0;
    }
    return arg_error(a, "internal: unknown global option");
}

static const struct optdef *
find_long(const struct optdef *defs, const char *name, size_t len)
{
    for (int pass = 0; pass < 2; pass++) {
        const struct optdef *d = pass == 0 ? defs : global_opts;
        for (; d && d->id; d++)
            if (d->lng && strlen(d->lng) == len && memcmp(d->lng, name, len) == 0)
                return d;
    }
    return NULL;
}

static const struct optdef *
find_short(const struct optdef *defs, char c)
{
    for (int pass = 0; pass < 2; pass++) {
        const struct optdef *d = pass == 0 ? defs : global_opts;
        for (; d && d->id; d++)
            if (d->shrt == c)
                return d;
    }
    return NULL;
}

/* found(a, d, val): the id of a command option, or 0 after applying a
 * global one (ARG_HELP or ARG_ERROR if that says so). */
static int
found(struct args *a, const struct optdef *d, const char *val)
{
    if (d->id >= G_FIRST)
        return apply_global(a, d->id, val);
    return d->id;
}

/* is_option_word(defs, word): whether ${word} would be read as an option
 * of ${defs} (or a global one) or as "--": then it is not taken as the
 * value of the option before it. */
static int
is_option_word(const struct optdef *defs, const char *word)
{
    if (word[0] != '-' || word[1] == '\0')
        return 0;
    if (word[1] != '-')
        return find_short(defs, word[1]) != NULL;
    if (word[2] == '\0')
        return 1;
    const char *eq = strchr(word + 2, '=');
    return find_long(defs, word + 2, eq ? (size_t)(eq - word - 2) : strlen(word + 2)) != NULL;
}

/* has_long(defs, name): whether ${defs} has the long option --${name}. */
static int
has_long(const struct optdef *defs, const char *name)
{
    for (const struct optdef *d = defs; d && d->id; d++)
        if (d->lng && strcmp(d->lng, name) == 0)
            return 1;
    return 0;
}

/* separate_value(a, d, typed, val): the next word as the value of option
 * ${d} (typed as ${typed}: "-v" or "--vault").  A word that is itself an
 * option is refused rather than swallowed ("get NAME -v -o DIR" made "-o"
 * the vault): the value may still begin with '-' when attached
 * ("--name=-x", "-o-x"). */
static int
separate_value(struct args *a, const struct optdef *d, const char *typed, const char **val)
{
    const char *word = a->argv[a->i];

    if (!is_option_word(a->defs, word)) {
        *val = word;
        a->i++;
        return 0;
    }
    int vault = d->id == G_VAULT;
    char attached[96];
    if (d->lng)
        snprintf(attached, sizeof(attached), "--%s=%s", d->lng, word);
    else
        snprintf(attached, sizeof(attached), "-%c%s", d->shrt, word);
    return arg_error(a, "%s: '%s' is an option, not %s (%s%swrite %s if you mean it)",
        typed, word, vault ? "a vault location" : "its value",
        vault && typed[1] == 'v' ? "-v is --vault" : "",
        vault && typed[1] == 'v' ? (has_long(a->defs, "verbose") ?
            "; --verbose names every entry; " : "; ") : "", attached);
}

int
next_arg(struct args *a, const char **val)
{
    const struct optdef *defs = a->defs;

    for (;;) {
        *val = NULL;
        if (a->cluster && *a->cluster) {
            char c = *a->cluster++;
            const struct optdef *d = find_short(defs, c);
            if (d == NULL)
                return arg_error(a, "unknown option '-%c'", c);
            if (d->has_arg) {
                if (*a->cluster) {
                    *val = a->cluster;
                } else if (a->i < a->argc) {
                    char typed[3] = { '-', c, '\0' };
                    if (separate_value(a, d, typed, val) != 0)
                        return ARG_ERROR;
                } else {
                    return arg_error(a, "option '-%c' needs an argument", c);
                }
                a->cluster = NULL;
            }
            int id = found(a, d, *val);
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
            if (d == NULL)
                return arg_error(a, "unknown option '--%.*s'", (int)len, name);
            if (d->has_arg) {
                if (eq) {
                    *val = eq + 1;
                } else if (a->i < a->argc) {
                    if (separate_value(a, d, s, val) != 0)
                        return ARG_ERROR;
                } else {
                    return arg_error(a, "option '--%s' needs an argument", d->lng);
                }
            } else if (eq) {
                return arg_error(a, "option '--%s' takes no argument", d->lng);
            }
            int id = found(a, d, *val);
            if (id != 0)
                return id;
            continue;
        }
        a->cluster = s + 1;
    }
}
