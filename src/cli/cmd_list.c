/*
 * src/cli/cmd_list.c: list (prefixes and patterns, --depth, -l, --json).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pqvault/aead.h"
#include "pqvault/match.h"

/* ---- list ---- */

/* An operand of list: a prefix (a stored name and what is below it) or,
 * when it has glob characters, a pattern over whole names. */
struct list_operand {
    const char *arg;        /* as given, for messages */
    char *prefix;           /* normalised; "" for everything; NULL: a pattern */
    pqv_match *pattern;
    int found;              /* some stored name matches it */
};

#define LIST_DEPTH_MAX 4096

static const char *
entry_type_name(int type)
{
    return pqv_entry_type_name(type);
}

static void
list_json(const struct pqv_entry *e, const size_t *idx, size_t n)
{
    printf("[");
    for (size_t k = 0; k < n; k++) {
        const struct pqv_entry *x = &e[idx[k]];
        char t[64];
        const char *aead = x->type == PQV_ENTRY_FILE ? pqv_aead_name(x->aead) : NULL;
        format_utc_rfc3339(t, sizeof(t), x->mtime_sec, x->mtime_nsec);
        printf("%s\n  {\"name\": ", k ? "," : "");
        json_string(stdout, x->name);
        printf(", \"type\": \"%s\", \"size\": %llu, \"mode\": \"%04o\", "
            "\"mtime\": \"%s\", \"mtime_unix\": %lld, \"aead\": ",
            entry_type_name(x->type), (unsigned long long)x->size,
            (unsigned)(x->mode & 07777u), t, (long long)x->mtime_sec);
        if (aead)
            json_string(stdout, aead);
        else
            printf("null");
        printf(", \"objects\": %u, \"target\": ", (unsigned)x->nobjects);
        /* Keys of format 2 (after format 1's, which keep their order). */
        if (x->target)
            json_string(stdout, x->target);
        else
            printf("null");
        printf(", \"uid\": %u, \"gid\": %u, \"user\": ", (unsigned)x->uid, (unsigned)x->gid);
        if (x->user)
            json_string(stdout, x->user);
        else
            printf("null");
        printf(", \"group\": ");
        if (x->group)
            json_string(stdout, x->group);
        else
            printf("null");
        printf(", \"link_group\": %llu, \"holes\": %llu", (unsigned long long)x->link_group,
            (unsigned long long)x->holes);
        /* A device node's number (its type is "chardev" or "blockdev"). */
        if (x->type == PQV_ENTRY_CHARDEV || x->type == PQV_ENTRY_BLOCKDEV)
            printf(", \"rdev_major\": %u, \"rdev_minor\": %u", (unsigned)x->rdev_major,
                (unsigned)x->rdev_minor);
        printf("}");
    }
    printf("%s]\n", n ? "\n" : "");
}

/* The owner and group columns, as ls: the name when the vault has it,
 * else the number. */
static void
owner_text(char *out, size_t outlen, const char *name, uint32_t id)
{
    if (name != NULL)
        snprintf(out, outlen, "%s", name);
    else
        snprintf(out, outlen, "%u", (unsigned)id);
}

/* size_text(out, outlen, n, human): the size column (entry_size_text: a
 * device node shows its number instead, "major, minor", as ls). */
static void
size_text(char *out, size_t outlen, uint64_t n, int human)
{
    if (human)
        format_size_human(out, outlen, n);
    else
        snprintf(out, outlen, "%llu", (unsigned long long)n);
}

static void
entry_size_text(char *out, size_t outlen, const struct pqv_entry *x, int human)
{
    if (x->type == PQV_ENTRY_CHARDEV || x->type == PQV_ENTRY_BLOCKDEV)
        snprintf(out, outlen, "%u, %u", (unsigned)x->rdev_major, (unsigned)x->rdev_minor);
    else
        size_text(out, outlen, x->size, human);
}

/* list_long(e, idx, n, escape, human): mode, owner and group (when the
 * vault records owners: format 1 records none), size, time, name (and a
 * link's target); then the totals line. */
static void
list_long(const struct pqv_entry *e, const size_t *idx, size_t n, int escape, int human)
{
    int ws = 1, wu = 1, wg = 1, owners = 0;
    uint64_t bytes = 0, files = 0;
    char b[64];

    for (size_t k = 0; k < n; k++) {
        const struct pqv_entry *x = &e[idx[k]];
        if (x->uid != 0 || x->gid != 0 || x->user != NULL || x->group != NULL)
            owners = 1;
    }
    for (size_t k = 0; k < n; k++) {
        const struct pqv_entry *x = &e[idx[k]];
        int l;
        entry_size_text(b, sizeof(b), x, human);
        if ((l = (int)strlen(b)) > ws)
            ws = l;
        owner_text(b, sizeof(b), x->user, x->uid);
        if (owners && (l = (int)strlen(b)) > wu)
            wu = l;
        owner_text(b, sizeof(b), x->group, x->gid);
        if (owners && (l = (int)strlen(b)) > wg)
            wg = l;
    }
    for (size_t k = 0; k < n; k++) {
        const struct pqv_entry *x = &e[idx[k]];
        char mode[11], t[64], u[64], g[64];
        format_mode(mode, x->type, x->mode);
        format_local_time(t, sizeof(t), x->mtime_sec, "%Y-%m-%d %H:%M");
        entry_size_text(b, sizeof(b), x, human);
        printf("%s ", mode);
        if (owners) {
            owner_text(u, sizeof(u), x->user, x->uid);
            owner_text(g, sizeof(g), x->group, x->gid);
            printf("%-*s %-*s ", wu, u, wg, g);
        }
        printf("%*s %s ", ws, b, t);
        print_name(stdout, x->name, escape);
        if (x->type == PQV_ENTRY_SYMLINK && x->target != NULL) {
            fputs(" -> ", stdout);
            print_name(stdout, x->target, escape);
        }
        putchar('\n');
        if (x->type == PQV_ENTRY_FILE) {
            bytes += x->size;
            files++;
        }
    }
    /* "7 entries, 2.4 MiB in 6 files"; exact to a pipe (and with --bytes):
     * "7 entries, 2501505 bytes in 6 files". */
    if (human && bytes >= 1024)
        format_bytes(b, sizeof(b), bytes);
    else
        snprintf(b, sizeof(b), "%llu byte%s", (unsigned long long)bytes, bytes == 1 ? "" : "s");
    printf("%zu entr%s, %s in %llu file%s\n", n, n == 1 ? "y" : "ies", b,
        (unsigned long long)files, files == 1 ? "" : "s");
}

/* below(name, prefix, depth): whether ${name} is ${prefix} or under it, at
 * most ${depth} components below (0: any depth). */
static int
below(const char *name, const char *prefix, unsigned long long depth)
{
    size_t pl = strlen(prefix);
    const char *rest;
    unsigned long long d = 0;

    if (pl == 0) {
        rest = name;
        d = 1;
    } else if (strncmp(name, prefix, pl) != 0 || (name[pl] != '\0' && name[pl] != '/')) {
        return 0;
    } else {
        rest = name + pl;
    }
    if (depth == 0)
        return 1;
    for (; *rest; rest++)
        if (*rest == '/' && ++d > depth)
            return 0;
    return d <= depth;
}

/* list_operand_init(op, arg): the operand ${arg}; exit status (message
 * printed). */
static int
list_operand_init(struct list_operand *op, const char *arg)
{
    int rc;

    memset(op, 0, sizeof(*op));
    op->arg = arg;
    pqv_error_clear();
    if (pqv_match_is_glob(arg)) {
        if ((rc = pqv_match_new(&op->pattern, PQV_MATCH_ANCHORED)) != 0 ||
            (rc = pqv_match_add(op->pattern, arg)) != 0)
            return lib_error(arg, rc);
        return EXIT_OK;
    }
    if ((op->prefix = malloc(PQV_NAME_MAX + 1)) == NULL) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    op->prefix[0] = '\0';
    if (*arg != '\0' && (rc = pqv_name_normalize(arg, op->prefix, PQV_NAME_MAX + 1)) != 0)
        return lib_error(arg, rc);
    return EXIT_OK;
}

static void
list_operands_free(struct list_operand *ops, size_t n)
{
    for (size_t i = 0; ops != NULL && i < n; i++) {
        free(ops[i].prefix);
        pqv_match_free(ops[i].pattern);
    }
    free(ops);
}

int
cmd_list(struct args *a)
{
    const char *val;
    int id, lng = 0, json = 0, bytes = 0, status = EXIT_OK;
    unsigned long long depth = 0;
    size_t nops = 0;
    struct list_operand *ops = calloc((size_t)a->argc + 1, sizeof(*ops));
    if (ops == NULL) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    while (status == EXIT_OK && (id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP:
            list_operands_free(ops, nops);
            return arg_stop(a, id);
        case OPT_LONG: lng = 1; break;
        case OPT_JSON: json = 1; break;
        case OPT_BYTES: bytes = 1; break;
        case OPT_DEPTH:
            if (parse_uint(val, LIST_DEPTH_MAX, &depth) != 0 || depth == 0)
                status = usage_error("--depth: expected a number from 1 to %d, not '%s'",
                    LIST_DEPTH_MAX, val);
            break;
        case ARG_OPERAND:
            status = list_operand_init(&ops[nops++], val);
            break;
        }
    }
    if (status == EXIT_OK && lng && json)
        status = usage_error("-l and --json exclude each other");
    pqv_vault *v = NULL;
    if (status == EXIT_OK)
        status = session(&v, 0);
    if (status != EXIT_OK) {
        list_operands_free(ops, nops);
        return status;
    }

    /* One listing for every operand. */
    struct pqv_entry *e = NULL;
    size_t n = 0, shown = 0, *idx = NULL;
    pqv_error_clear();
    int rc = pqv_vault_list(v, NULL, &(struct pqv_list_options){ report_cb, NULL }, &e, &n);
    if (rc != 0 && rc != PQV_E_INTEGRITY) {
        status = lib_error(NULL, rc);
        goto done;
    }
    /* The listing's failure, said after the names (the operands' lookups
     * below record and clear their own). */
    struct pqv_error listed = *pqv_error_last();
    if ((idx = calloc(n + 1, sizeof(*idx))) == NULL) {
        err_msg("out of memory");
        keep(&status, EXIT_ERR);
        goto done;
    }
    /* A stored name with glob characters is that name ("photo[1].jpg"),
     * as get and rm take it. */
    for (size_t k = 0; k < nops; k++) {
        char *norm;
        if (ops[k].pattern == NULL || (norm = malloc(PQV_NAME_MAX + 1)) == NULL)
            continue;
        int stored = 0;
        if (pqv_name_normalize(ops[k].arg, norm, PQV_NAME_MAX + 1) == 0)
            for (size_t i = 0; i < n && !stored; i++)
                stored = below(e[i].name, norm, 0);
        pqv_error_clear();
        if (stored) {
            pqv_match_free(ops[k].pattern);
            ops[k].pattern = NULL;
            ops[k].prefix = norm;
        } else {
            free(norm);
        }
    }
    for (size_t i = 0; i < n; i++) {
        int take = nops == 0 && below(e[i].name, "", depth);
        for (size_t k = 0; k < nops; k++) {
            struct list_operand *op = &ops[k];
            if (op->pattern != NULL) {
                if (pqv_match_test(op->pattern, e[i].name, e[i].type == PQV_ENTRY_DIR)) {
                    op->found = 1;
                    take = 1;
                }
            } else if (below(e[i].name, op->prefix, 0)) {
                op->found = 1;
                take |= below(e[i].name, op->prefix, depth);
            }
        }
        if (take)
            idx[shown++] = i;
    }
    int tty = isatty(STDOUT_FILENO);
    if (json) {
        list_json(e, idx, shown);
    } else if (lng) {
        list_long(e, idx, shown, tty, tty && !bytes);
    } else {
        for (size_t k = 0; k < shown; k++) {
            print_name(stdout, e[idx[k]].name, tty);
            putchar('\n');
        }
    }
    /* Damaged records were reported, the others listed.  As get, an
     * operand naming nothing is an error, the others are listed (with
     * damaged records, what it names may be among them: not said). */
    if (rc == PQV_E_INTEGRITY) {
        char msg[4096];
        status = lib_error_text_of(msg, sizeof(msg), nops == 1 ? ops[0].arg : NULL, rc, &listed);
        err_msg("%s", msg);
    }
    for (size_t k = 0; rc == 0 && k < nops; k++)
        if (!ops[k].found) {
            err_msg("%s: not found", ops[k].arg);
            keep(&status, EXIT_ERR);
        }
    inbox_note(v);
done:
    free(idx);
    pqv_entries_free(e, n);
    pqv_vault_close(v);
    list_operands_free(ops, nops);
    return status;
}
