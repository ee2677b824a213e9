/*
 * src/cli/cmd_add.c: add (the operands, --files-from lists, the report and the summary).
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

/* ---- add ---- */

/* add_summary(r, dry, secs, json): the one line every add ends with (a
 * dry run's with -q too: it is what a dry run is for). */
static void
add_summary(const struct pqv_add_result *r, int dry, double secs, int json)
{
    char nw[32], ch[32], un[32], rm[32], ex[32], er[32], rb[32], sb[32], ub[32];

    if (json) {
        printf("{\"summary\": {\"dry_run\": %s, \"new\": %llu, \"changed\": %llu, "
            "\"unchanged\": %llu, \"removed\": %llu, \"excluded\": %llu, \"errors\": %llu, "
            "\"files\": %llu, \"bytes\": %llu, \"stored_bytes\": %llu, \"unused_bytes\": %llu, "
            "\"seconds\": %.3f}}\n",
            dry ? "true" : "false", (unsigned long long)r->added,
            (unsigned long long)r->changed, (unsigned long long)r->unchanged,
            (unsigned long long)r->removed, (unsigned long long)r->excluded,
            (unsigned long long)r->failed, (unsigned long long)r->files,
            (unsigned long long)r->bytes, (unsigned long long)r->new_bytes,
            (unsigned long long)r->unused_bytes, secs);
        return;
    }
    if (g_cli.quiet && !dry)
        return;
    format_count(nw, r->added);
    format_count(ch, r->changed);
    format_count(un, r->unchanged);
    format_count(rm, r->removed);
    format_count(ex, r->excluded);
    format_count(er, r->failed);
    format_bytes(rb, sizeof(rb), r->bytes);
    format_bytes(sb, sizeof(sb), r->new_bytes);
    format_bytes(ub, sizeof(ub), r->unused_bytes);
    fprintf(stderr, "%s %s new, %s changed, %s unchanged, %s removed", dry ? "would add:" :
        "added:", nw, ch, un, rm);
    if (r->excluded > 0)
        fprintf(stderr, ", %s excluded", ex);
    if (r->failed > 0)
        fprintf(stderr, ", %s error%s", er, r->failed == 1 ? "" : "s");
    if (dry)
        fprintf(stderr, "; %s to read\n", rb);
    else if (r->unused_bytes > 0)
        fprintf(stderr, "; %s read, %s stored (and %s written for files left out: gc frees "
            "it), in %.1f s\n", rb, sb, ub, secs);
    else
        fprintf(stderr, "; %s read, %s stored, in %.1f s\n", rb, sb, secs);
}

/* The options and operands of an add. */
struct add_cmd {
    const char *name, *recipient;
    int force, no_compress, follow, one_fs, del, force_read, dry, verbose, json, caches;
    int null, larger;
    uint64_t larger_than;
    pqv_match *exclude;
    const char **paths;          /* the operands (those of --files-from owned, in ${lists}) */
    int npaths, cap, stdin_used;
    const char **from;           /* --files-from FILEs */
    int nfrom;
    char **lists;                /* their contents */
    int nlists;
    const char **tags;           /* --exclude-if-present */
    int ntags;
};

static void
add_cmd_free(struct add_cmd *c)
{
    free(c->paths);
    free(c->from);
    free(c->tags);
    for (int i = 0; i < c->nlists; i++)
        free(c->lists[i]);
    free(c->lists);
    pqv_match_free(c->exclude);
}

/* add_path(c, path): one more operand; 0, or -1 out of memory. */
static int
add_path(struct add_cmd *c, const char *path)
{
    if (c->npaths == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        const char **grown = realloc(c->paths, (size_t)cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        c->paths = grown;
        c->cap = cap;
    }
    c->paths[c->npaths++] = path;
    return 0;
}

/* read_list(c, file): the operands --files-from ${file} lists ('-':
 * standard input), one a line (with -0, NUL-separated), taken as they
 * are: neither comments nor blanks trimmed, as restic's
 * --files-from-verbatim (and --files-from-raw); empty ones skipped. */
static int
read_list(struct add_cmd *c, const char *file)
{
    int from_stdin = strcmp(file, "-") == 0;
    FILE *f = from_stdin ? stdin : fopen(file, "rb");
    char *buf = NULL, **grown;
    size_t len = 0, cap = 0;
    int ch;

    if (f == NULL) {
        err_msg("--files-from: %s: %s", file, strerror(errno));
        return EXIT_ERR;
    }
    while ((ch = getc(f)) != EOF) {
        if (len + 2 > cap) {
            size_t ncap = cap ? 2 * cap : 4096;
            char *nb = realloc(buf, ncap);
            if (nb == NULL)
                goto nomem;
            buf = nb;
            cap = ncap;
        }
        buf[len++] = (char)ch;
    }
    if (ferror(f)) {
        err_msg("--files-from: %s: %s", from_stdin ? "standard input" : file, strerror(errno));
        if (!from_stdin)
            fclose(f);
        free(buf);
        return EXIT_ERR;
    }
    if (!from_stdin)
        fclose(f);
    if (buf == NULL && (buf = malloc(1)) == NULL)
        goto nomem_closed;
    buf[len] = '\0';
    if ((grown = realloc(c->lists, (size_t)(c->nlists + 1) * sizeof(*grown))) == NULL)
        goto nomem_closed;
    c->lists = grown;
    c->lists[c->nlists++] = buf;
    for (size_t i = 0, start = 0; i <= len; i++) {
        if (i < len && buf[i] != (c->null ? '\0' : '\n'))
            continue;
        /* (The last line too, without its newline: cut at its NUL, it
         * would name another file.) */
        if (!c->null && memchr(buf + start, '\0', i - start) != NULL) {
            err_msg("--files-from: %s: a line holds a NUL byte (NUL-separated names: -0)", file);
            return EXIT_ERR;
        }
        buf[i] = '\0';
        /* A listed '-' is the file of that name, not standard input. */
        if (i > start && add_path(c, strcmp(buf + start, "-") == 0 ? "./-" : buf + start) != 0)
            goto nomem_owned;
        start = i + 1;
    }
    return EXIT_OK;
nomem:
    if (!from_stdin)
        fclose(f);
nomem_closed:
    free(buf);
nomem_owned:
    err_msg("out of memory");
    return EXIT_ERR;
}

/* tag_name_ok(val): an --exclude-if-present NAME[:HEADER] the library
 * takes (a file name: not empty, no '/', not '.' or '..', at most 255
 * bytes; a HEADER of at most 256 bytes): a usage error, not exit 1. */
static int
tag_name_ok(const char *val)
{
    size_t n = strcspn(val, ":");

    return n > 0 && n <= 255 && memchr(val, '/', n) == NULL &&
        !(n == 1 && val[0] == '.') && !(n == 2 && val[0] == '.' && val[1] == '.') &&
        (val[n] == '\0' || strlen(val + n + 1) <= 256);
}

/* add_parse(a, c, stop): the command line into ${c}; the exit status
 * (EXIT_OK to go on), *${stop} set when --help or an argument error ended
 * the command. */
static int
add_parse(struct args *a, struct add_cmd *c, int *stop)
{
    const char *val;
    int id, status = EXIT_OK, lists_stdin = 0;

    memset(c, 0, sizeof(*c));
    if ((c->from = calloc((size_t)a->argc + 1, sizeof(*c->from))) == NULL ||
        (c->tags = calloc((size_t)a->argc + 1, sizeof(*c->tags))) == NULL) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    while ((id = next_arg(a, &val)) != ARG_END && status == EXIT_OK) {
        int mrc = 0;
        switch (id) {
        case ARG_ERROR: case ARG_HELP:
            *stop = 1;
            return arg_stop(a, id);
        case OPT_NAME: c->name = val; break;
        case OPT_FORCE: c->force = 1; break;
        case OPT_NOCOMPRESS: c->no_compress = 1; break;
        case OPT_FOLLOW: c->follow = 1; break;
        case OPT_ONEFS: c->one_fs = 1; break;
        case OPT_DELETE: c->del = 1; break;
        case OPT_FORCEREAD: c->force_read = 1; break;
        case OPT_DRYRUN: c->dry = 1; break;
        case OPT_VERBOSE: c->verbose = 1; break;
        case OPT_JSON: c->json = 1; break;
        case OPT_EXCLUDECACHES: c->caches = 1; break;
        case OPT_RECIPIENT: c->recipient = val; break;
        case OPT_NULL: c->null = 1; break;
        case OPT_FILESFROM:
            if (strcmp(val, "-") == 0 && lists_stdin++)
                status = usage_error("--files-from -: standard input given twice");
            c->from[c->nfrom++] = val;
            break;
        case OPT_EXCLUDELARGER:
            if (parse_size(val, &c->larger_than) != 0)
                status = usage_error("--exclude-larger-than: not a size: '%s' (a number of "
                    "bytes, or with a suffix K, M, G or T)", val);
            c->larger = 1;
            break;
        case OPT_EXCLUDEIFPRESENT:
            if (!tag_name_ok(val))
                status = usage_error("--exclude-if-present: not a file name: '%s' (NAME, or "
                    "NAME:HEADER for a file that begins with HEADER, of at most 256 bytes)", val);
            c->tags[c->ntags++] = val;
            break;
        case OPT_EXCLUDE: case OPT_EXCLUDEFROM:
            if (c->exclude == NULL && (mrc = pqv_match_new(&c->exclude, 0)) != 0)
                break;
            mrc = id == OPT_EXCLUDE ? pqv_match_add(c->exclude, val)
                                    : pqv_match_load_file(c->exclude, val);
            if (mrc == PQV_E_INVAL && id == OPT_EXCLUDE)
                status = usage_error("--exclude: %s", pqv_error_detail());
            else if (mrc != 0)
                status = lib_error(id == OPT_EXCLUDEFROM ? val : NULL, mrc);
            mrc = 0;
            break;
        case ARG_OPERAND:
            if (strcmp(val, "-") == 0)
                c->stdin_used++;
            if (add_path(c, val) != 0) {
                err_msg("out of memory");
                return EXIT_ERR;
            }
            break;
        }
        if (mrc != 0)
            status = lib_error(NULL, mrc);
    }
    if (status != EXIT_OK)
        return status;
    if (c->null && c->nfrom == 0)
        return usage_error("-0 is for --files-from (NUL-separated names)");
    if (c->stdin_used && lists_stdin)
        return usage_error("'-' reads the data to store from standard input, which "
            "--files-from - reads the names from: give one of them");
    if (c->npaths == 0 && c->nfrom == 0)
        return usage_error("missing PATH operand");
    if (c->recipient && c->del)
        return usage_error("--delete needs the catalogue: not with --recipient");
    for (int i = 0; i < c->nfrom; i++)
        if ((status = read_list(c, c->from[i])) != EXIT_OK)
            return status;
    if (c->name && c->npaths != 1)
        return usage_error("--name needs exactly one PATH");
    if (c->stdin_used && !c->name)
        return usage_error("'-' (standard input) needs --name");
    if (c->name && *c->name == '\0')
        return usage_error("--name: empty name");
    return EXIT_OK;
}

/* add_commit_batch(v, status): a write-only add's commit point, once every
 * operand that could be added is in it; 0 if it failed. */
static int
add_commit_batch(pqv_vault *v, int *status)
{
    char batch[33];
    int rc;

    pqv_error_clear();
    g_cli.force_hint = 0;
    if ((rc = pqv_vault_inbox_commit(v, batch)) != 0) {
        keep(status, lib_error(NULL, rc));
        return 0;
    }
    if (batch[0] != '\0' && !g_cli.quiet)
        fprintf(stderr, "pqvault: add: inbox batch %s written (the owner imports it with "
            "'pqvault import')\n", batch);
    return 1;
}

/* add_run(v, c): every operand as one command (one epoch, or one inbox
 * batch); the exit status. */
static int
add_run(pqv_vault *v, struct add_cmd *c)
{
    struct pqv_add_operand *ops = calloc((size_t)c->npaths + 1, sizeof(*ops));
    /* A dry run lists what would change (unchanged entries with
     * --verbose); -q leaves its list out, not its summary. */
    struct add_out out = { c->json, c->verbose || c->dry, 0 };
    struct progress *p = c->json || c->dry ? NULL : progress_new("add");
    struct pqv_add_result total;
    struct timespec t0;
    int rc, status = EXIT_OK, worked = 0;
    mode_t um = umask(0);

    umask(um);
    if (ops == NULL) {
        progress_end(p);
        err_msg("out of memory");
        return EXIT_ERR;
    }
    for (int i = 0; i < c->npaths; i++) {
        int is_stdin = strcmp(c->paths[i], "-") == 0;
        ops[i].path = is_stdin ? NULL : c->paths[i];
        ops[i].name = c->name;
        ops[i].fd = is_stdin ? STDIN_FILENO : -1;
        ops[i].mode = 0666u & ~(uint32_t)um;
        ops[i].mtime_sec = (int64_t)time(NULL);
    }
    memset(&total, 0, sizeof(total));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct pqv_add_options opt = {
        .force = c->force, .progress = p ? progress_cb : NULL,
        .progress_ctx = p, .report = add_report, .report_ctx = &out,
        .no_compress = c->no_compress, .follow_links = c->follow, .one_file_system = c->one_fs,
        .result = &total, .force_read = c->force_read, .delete_missing = c->del,
        .dry_run = c->dry, .verbose = c->verbose || c->json, .exclude = c->exclude,
        .exclude_caches = c->caches, .exclude_larger = c->larger,
        .exclude_larger_than = c->larger_than, .exclude_if_present = c->tags,
        .nexclude_if_present = (size_t)c->ntags
    };
    pqv_error_clear();
    /* A dry run reads nothing from standard input. */
    rc = pqv_vault_add(v, ops, (size_t)c->npaths, &opt);
    progress_end(p);
    if (rc != 0) {
        keep(&status, lib_error(NULL, rc));
    } else {
        for (int i = 0; i < c->npaths; i++) {
            if (ops[i].rc == 0 || ops[i].rc == PQV_E_IO)
                worked = 1; /* (PQV_E_IO: some entries not read, the rest stored) */
            if (ops[i].rc != 0)
                keep(&status, operand_failed(&out, c->name ? c->name : c->paths[i], ops[i].rc,
                    &ops[i].error));
            if (ops[i].rc != 0 && ops[i].rc != PQV_E_IO)
                total.failed++;
        }
    }
    /* (--files-from listing nothing: nothing to do, and said so.) */
    if (c->npaths == 0 && rc == 0)
        worked = 1;
    if (c->recipient && worked && !c->dry && !add_commit_batch(v, &status))
        worked = 0;
    /* A summary of what was done: none when every operand was refused. */
    if (worked || c->json)
        add_summary(&total, c->dry, seconds_since(&t0), c->json);
    free(ops);
    return status;
}

int
cmd_add(struct args *a)
{
    struct add_cmd c;
    pqv_vault *v;
    int stop = 0, status = add_parse(a, &c, &stop);

    /* Write-only: the recipient alone, no key file, passphrase or lock.  A
     * dry run takes no lock either: it writes nothing, and reads the state
     * as list does (beside a running writer). */
    if (!stop && status == EXIT_OK && (status = c.recipient ? inbox_session(&v, c.recipient)
                                                   : session(&v, !c.dry)) == EXIT_OK) {
        g_cli.force_hint = !c.force;
        g_cli.nospace_hint = !c.recipient;
        status = add_run(v, &c);
        pqv_vault_close(v);
    }
    add_cmd_free(&c);
    return status;
}
