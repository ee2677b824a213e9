/*
 * src/cli/cmd_files.c: add, get, list, rm, check, gc.
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

/* The first failure's status wins; later ones are reported too. */
static void
keep(int *status, int rc)
{
    if (*status == EXIT_OK)
        *status = rc;
}

/* ---- add ---- */

/* What add reports: with --json one object per entry on stdout; with
 * --verbose every entry on stderr; otherwise warnings and errors only. */
struct add_out {
    int json, verbose;
    uint64_t errors;
};

static void
add_report(void *ctx, int level, const char *subject, const char *message)
{
    struct add_out *o = ctx;

    if (level == PQV_REPORT_ERROR)
        o->errors++;
    if (o->json && subject != NULL && *subject != '\0') {
        printf("{\"name\": ");
        json_string(stdout, subject);
        printf(", \"%s\": ", level == PQV_REPORT_INFO ? "action" :
            level == PQV_REPORT_WARNING ? "warning" : "error");
        json_string(stdout, message != NULL ? message : "");
        printf("}\n");
        if (level == PQV_REPORT_INFO)
            return;
    }
    if (level == PQV_REPORT_INFO) {
        if (o->verbose && !g_cli.quiet) {
            struct progress *bar = progress_hide();
            if (subject != NULL && *subject != '\0')
                fprintf(stderr, "%s: %s\n", subject, message);
            else
                fprintf(stderr, "%s\n", message);
            progress_show(bar);
        }
        return;
    }
    report_cb(NULL, level, subject, message);
}

/* operand_failed(o, operand, rc, e): report the failure ${rc} (${e}) of an operand:
 * the error line on stderr, and with --json its own object on stdout,
 * {"name": OPERAND, "operand": true, "error": WHY} (WHY is the stderr
 * line's after "pqvault: CMD: OPERAND: "), so that a script sees which
 * operand failed and why; the exit status. */
static int
operand_failed(const struct add_out *o, const char *operand, int rc, const struct pqv_error *e)
{
    char msg[4096];
    int status = lib_error_text_of(msg, sizeof(msg), operand, rc, e);
    size_t len = strlen(operand);

    err_msg("%s", msg);
    if (o->json) {
        const char *why = msg;
        if (strncmp(msg, operand, len) == 0 && msg[len] == ':' && msg[len + 1] == ' ')
            why = msg + len + 2;
        printf("{\"name\": ");
        json_string(stdout, operand);
        printf(", \"operand\": true, \"error\": ");
        json_string(stdout, why);
        printf("}\n");
    }
    return status;
}

static double
seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

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

/* ---- get ---- */

/* is_stored_dir(v, name): ${name} is a directory in the vault (which -o -
 * cannot write); a lookup that fails is get's to report. */
static int
is_stored_dir(pqv_vault *v, const char *name)
{
    struct pqv_entry e;
    int dir;

    memset(&e, 0, sizeof(e));
    if (pqv_vault_lookup(v, name, &e) != 0) {
        pqv_error_clear();
        return 0;
    }
    dir = e.type == PQV_ENTRY_DIR;
    pqv_entry_clear(&e);
    return dir;
}

/* get_summary(total, dry, json, secs): the line (or JSON object) that ends
 * a get. */
static void
get_summary(const struct pqv_get_result *total, int dry, int json, double secs)
{
    char b[32];

    format_bytes(b, sizeof(b), total->bytes);
    if (json)
        printf("{\"summary\": {\"dry_run\": %s, \"restored\": %llu, \"bytes\": %llu, "
            "\"skipped\": %llu, \"errors\": %llu, \"excluded\": %llu, \"seconds\": %.3f}}\n",
            dry ? "true" : "false", (unsigned long long)total->restored,
            (unsigned long long)total->bytes, (unsigned long long)total->skipped,
            (unsigned long long)total->failed, (unsigned long long)total->excluded, secs);
    else if (!g_cli.quiet) {
        fprintf(stderr, "%s %llu entr%s, %s", dry ? "would restore:" : "restored:",
            (unsigned long long)total->restored, total->restored == 1 ? "y" : "ies", b);
        if (total->skipped > 0)
            fprintf(stderr, ", %llu skipped (existing)", (unsigned long long)total->skipped);
        if (total->excluded > 0)
            fprintf(stderr, ", %llu excluded", (unsigned long long)total->excluded);
        if (total->failed > 0)
            fprintf(stderr, ", %llu error%s", (unsigned long long)total->failed,
                total->failed == 1 ? "" : "s");
        if (dry)
            fprintf(stderr, "\n");
        else
            fprintf(stderr, " in %.1f s\n", secs);
    }
}

/* get_match_add(set, val, what): one --include or --exclude pattern; the
 * exit status. */
static int
get_match_add(pqv_match **set, const char *val, const char *what)
{
    int rc;

    if (*set == NULL && (rc = pqv_match_new(set, 0)) != 0)
        return lib_error(NULL, rc);
    if ((rc = pqv_match_add(*set, val)) == PQV_E_INVAL)
        return usage_error("%s: %s", what, pqv_error_detail());
    return rc != 0 ? lib_error(NULL, rc) : EXIT_OK;
}

/* get_stdout(v, names, n, opt, rep, total): -o -: each regular file named,
 * in turn, to standard output; a pattern (unless it is itself a stored
 * name, as pqv_vault_get_many takes it) writes the files it matches, in
 * name order.  The exit status. */
static int
get_stdout(pqv_vault *v, const char **names, int n, const struct pqv_get_options *opt,
    const struct add_out *rep, struct pqv_get_result *total)
{
    struct pqv_entry *e = NULL;
    size_t ne = 0;
    int status = EXIT_OK, listed = 0, rc;

    for (int i = 0; i < n; i++) {
        const char *one = names[i];
        pqv_match *m = NULL;
        size_t k = 0, found = 0;
        char norm[PQV_NAME_MAX + 1];
        if (pqv_match_is_glob(names[i])) {
            if (!listed) {
                pqv_error_clear();
                if ((rc = pqv_vault_list(v, NULL, &(struct pqv_list_options){ report_cb, NULL },
                         &e, &ne)) != 0 && rc != PQV_E_INTEGRITY) {
                    keep(&status, lib_error(NULL, rc));
                    break;
                }
                listed = 1;
            }
            int stored = 0;
            if (pqv_name_normalize(names[i], norm, sizeof(norm)) == 0) {
                size_t len = strlen(norm);
                for (size_t j = 0; j < ne && !stored; j++)
                    stored = strncmp(e[j].name, norm, len) == 0 &&
                        (e[j].name[len] == '\0' || e[j].name[len] == '/');
            }
            pqv_error_clear();
            if (!stored) {
                if ((rc = pqv_match_new(&m, PQV_MATCH_ANCHORED)) != 0 ||
                    (rc = pqv_match_add(m, names[i])) != 0) {
                    pqv_match_free(m);
                    keep(&status, lib_error(names[i], rc));
                    total->failed++;
                    continue;
                }
                one = NULL;
            }
        }
        /* A name once, or each entry the pattern matches. */
        for (;;) {
            const char *name = one;
            if (m != NULL) {
                while (k < ne && !pqv_match_test(m, e[k].name, e[k].type == PQV_ENTRY_DIR))
                    k++;
                if (k == ne)
                    break;
                name = e[k++].name;
                found++;
            }
            uint64_t counted = total->restored + total->skipped + total->failed;
            pqv_error_clear();
            if (is_stored_dir(v, name)) {
                err_msg("%s: is a directory (cannot write it to standard output)", name);
                keep(&status, EXIT_ERR);
                total->failed++;
            } else if ((rc = pqv_vault_get_fd(v, name, STDOUT_FILENO, opt)) != 0) {
                keep(&status, operand_failed(rep, name, rc, pqv_error_last()));
                if (total->restored + total->skipped + total->failed == counted)
                    total->failed++;
            }
            if (m == NULL)
                break;
        }
        if (m != NULL && found == 0) {
            err_msg("%s: not found", names[i]);
            keep(&status, EXIT_ERR);
            total->failed++;
        }
        pqv_match_free(m);
    }
    pqv_entries_free(e, ne);
    return status;
}

int
cmd_get(struct args *a)
{
    const char *val, *out = NULL;
    int force = 0, id, n = 0, skip = 0, orig = 0, dry = 0, verbose = 0, json = 0, globs = 0;
    unsigned long long strip_n = 0;
    pqv_match *include = NULL, *exclude = NULL;
    const char **names = calloc((size_t)a->argc + 1, sizeof *names);
    int status = EXIT_OK;
    if (!names) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    while ((id = next_arg(a, &val)) != ARG_END && status == EXIT_OK) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP:
            free(names);
            pqv_match_free(include);
            pqv_match_free(exclude);
            return arg_stop(a, id);
        case OPT_OUT: out = val; break;
        case OPT_FORCE: force = 1; break;
        case OPT_SKIPEXISTING: skip = 1; break;
        case OPT_TOORIGINAL: orig = 1; break;
        case OPT_DRYRUN: dry = 1; break;
        case OPT_VERBOSE: verbose = 1; break;
        case OPT_JSON: json = 1; break;
        case OPT_INCLUDE: status = get_match_add(&include, val, "--include"); break;
        case OPT_EXCLUDE: status = get_match_add(&exclude, val, "--exclude"); break;
        case OPT_STRIP:
            if (parse_uint(val, 4096, &strip_n) != 0)
                status = usage_error("--strip-components: not a count: '%s'", val);
            break;
        case ARG_OPERAND:
            globs |= pqv_match_is_glob(val);
            names[n++] = val;
            break;
        }
    }
    int to_stdout = out && strcmp(out, "-") == 0;
    char *outdir = NULL;
    if (status != EXIT_OK)
        ;
    else if (n == 0)
        status = usage_error("missing NAME operand");
    else if (out && *out == '\0')
        status = usage_error("-o: empty destination");
    else if (force && skip)
        status = usage_error("--force and --skip-existing exclude each other");
    else if (orig && out)
        status = usage_error("--to-original and -o exclude each other");
    else if (to_stdout && (dry || strip_n > 0 || skip || json))
        status = usage_error("-o -: no --dry-run, --strip-components, --skip-existing or "
            "--json (standard output is the file's data)");
    else if (to_stdout && (include || exclude))
        status = usage_error("-o -: no --include or --exclude (they choose in trees; standard "
            "output takes files)");
    else if ((n > 1 || globs) && out && !to_stdout && out[strlen(out) - 1] != '/' &&
        (outdir = malloc(strlen(out) + 2)) != NULL) {
        /* Several names, or a pattern: OUT is a directory (created if
         * missing). */
        strcpy(outdir, out);
        strcat(outdir, "/");
        out = outdir;
    }
    pqv_vault *v = NULL;
    struct pqv_name_operand *ops = NULL;
    if (status == EXIT_OK && (ops = calloc((size_t)n, sizeof(*ops))) == NULL) {
        err_msg("out of memory");
        status = EXIT_ERR;
    }
    if (status != EXIT_OK || (status = session(&v, 0)) != EXIT_OK)
        goto done;

    g_cli.force_hint = !force && !skip;
    struct add_out rep = { json, verbose || dry, 0 };
    struct pqv_get_result total;
    struct timespec t0;
    struct progress *p = json || dry || to_stdout ? NULL : progress_new("get");
    memset(&total, 0, sizeof(total));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct pqv_get_options opt = {
        .force = force, .progress = p ? progress_cb : NULL,
        .progress_ctx = p, .report = add_report, .report_ctx = &rep,
        .strip_components = (unsigned)strip_n, .skip_existing = skip, .dry_run = dry,
        .to_original = orig, .result = &total, .include = include, .exclude = exclude
    };
    int worked = 0;
    if (to_stdout) {
        status = get_stdout(v, names, n, &opt, &rep, &total);
    } else {
        /* Every operand in one restore: one catalogue load, batches across
         * the operands, one progress total. */
        for (int i = 0; i < n; i++) {
            ops[i].name = names[i];
            ops[i].flags = PQV_OPERAND_GLOB;
        }
        pqv_error_clear();
        int rc = pqv_vault_get_many(v, ops, (size_t)n, out, &opt);
        progress_end(p);
        for (int i = 0; i < n; i++) {
            if (ops[i].rc == 0)
                worked = 1;
            else
                keep(&status, operand_failed(&rep, names[i], ops[i].rc, &ops[i].error));
        }
        if (rc != 0)
            keep(&status, lib_error(NULL, rc));
        if (total.restored > 0 || total.skipped > 0)
            worked = 1;
    }
    if (!to_stdout && (worked || json))
        get_summary(&total, dry, json, seconds_since(&t0));
done:
    if (v != NULL)
        pqv_vault_close(v);
    pqv_match_free(include);
    pqv_match_free(exclude);
    free(ops);
    free(names);
    free(outdir);
    return status;
}

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

/* ---- rm ---- */

int
cmd_rm(struct args *a)
{
    const char *val;
    int id, n = 0, dry = 0, verbose = 0;
    const char **names = calloc((size_t)a->argc + 1, sizeof *names);
    if (!names) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP) {
            free(names);
            return arg_stop(a, id);
        }
        if (id == OPT_DRYRUN)
            dry = 1;
        else if (id == OPT_VERBOSE)
            verbose = 1;
        else
            names[n++] = val;
    }
    if (n == 0) {
        free(names);
        return usage_error("missing NAME operand");
    }
    /* Every operand in one command: one epoch, one snapshot. */
    struct pqv_name_operand *ops = calloc((size_t)n, sizeof(*ops));
    pqv_vault *v;
    int status = ops == NULL ? (err_msg("out of memory"), EXIT_ERR) : session(&v, 1);
    if (status == EXIT_OK) {
        struct add_out rep = { 0, verbose || dry, 0 };
        uint64_t removed = 0;
        int worked = 0;
        for (int i = 0; i < n; i++) {
            ops[i].name = names[i];
            ops[i].flags = PQV_OPERAND_GLOB;
        }
        pqv_error_clear();
        int rc = pqv_vault_rm_many(v, ops, (size_t)n, &(struct pqv_rm_options){ add_report,
            &rep, dry, &removed });
        if (rc != 0) {
            keep(&status, lib_error(NULL, rc));
        } else {
            for (int i = 0; i < n; i++)
                if (ops[i].rc != 0)
                    keep(&status, operand_failed(&rep, names[i], ops[i].rc, &ops[i].error));
                else
                    worked = 1;
        }
        if (worked && !g_cli.quiet)
            fprintf(stderr, "%s %llu entr%s\n", dry ? "would remove:" : "removed:",
                (unsigned long long)removed, removed == 1 ? "y" : "ies");
        pqv_vault_close(v);
    }
    free(ops);
    free(names);
    return status;
}

/* ---- check, gc ---- */

/* print_counts(r, no_key): the summary line; without the key, format 2's
 * has no entry count (entries are sealed). */
static void
print_counts(const struct pqv_check_result *r, int no_key)
{
    if (r->format >= 2 || r->epoch > 0) {
        char entries[48] = "";
        if (!no_key)
            snprintf(entries, sizeof(entries), "entries: %llu, ", (unsigned long long)r->records);
        printf("epoch: %llu, segments: %llu, %spacks: %llu, bytes: %llu, "
            "damaged: %llu, missing: %llu, leftovers: %llu, temporaries: %llu\n",
            (unsigned long long)r->epoch, (unsigned long long)r->segments, entries,
            (unsigned long long)r->objects,
            (unsigned long long)r->bytes, (unsigned long long)r->damaged,
            (unsigned long long)r->missing, (unsigned long long)r->orphans,
            (unsigned long long)r->temporaries);
        if (r->in_flight > 0)
            printf("written by a running writer: %llu\n", (unsigned long long)r->in_flight);
        if (r->inbox > 0)
            printf("inbox: %llu batch%s waiting (pqvault import), %llu of them damaged\n",
                (unsigned long long)r->inbox, r->inbox == 1 ? "" : "es",
                (unsigned long long)r->inbox_damaged);
        return;
    }
    printf("records: %llu, objects: %llu, bytes: %llu, damaged: %llu, "
        "missing: %llu, orphans: %llu, temporaries: %llu\n",
        (unsigned long long)r->records, (unsigned long long)r->objects,
        (unsigned long long)r->bytes, (unsigned long long)r->damaged,
        (unsigned long long)r->missing, (unsigned long long)r->orphans,
        (unsigned long long)r->temporaries);
    if (r->in_flight > 0)
        printf("objects of a running writer: %llu\n", (unsigned long long)r->in_flight);
}

/* check_report: problems as report_cb says them; with --verbose (ctx
 * non-NULL) also what is no problem: each leftover, each temporary, what a
 * running writer is writing. */
static void
check_report(void *ctx, int level, const char *subject, const char *message)
{
    if (level == PQV_REPORT_INFO && ctx != NULL) {
        if (subject != NULL && *subject != '\0')
            err_msg("%s: %s", subject, message != NULL ? message : "");
        else
            err_msg("%s", message != NULL ? message : "");
        return;
    }
    report_cb(NULL, level, subject, message);
}

/* leftovers_line(r, verbose): what interrupted commands left, in one line
 * on stderr (the list is --verbose's). */
static void
leftovers_line(const struct pqv_check_result *r, int verbose)
{
    char b[32], what[160] = "";

    if (r->orphans == 0 && r->temporaries == 0)
        return;
    format_bytes(b, sizeof(b), r->orphan_bytes);
    if (r->orphans > 0)
        snprintf(what, sizeof(what), "%llu leftover%s (%s) no %sentry refers to%s",
            (unsigned long long)r->orphans, r->orphans == 1 ? "" : "s", b,
            r->damaged > 0 ? "readable " : "", r->temporaries > 0 ? ", and " : "");
    if (r->temporaries > 0)
        snprintf(what + strlen(what), sizeof(what) - strlen(what), "%llu temporary file%s",
            (unsigned long long)r->temporaries, r->temporaries == 1 ? "" : "s");
    /* While damaged, a block that does not open may refer to them (each
     * was said): gc refuses until the damage is repaired. */
    if (r->damaged > 0)
        err_msg("%s: 'pqvault gc' removes %s once the damage is repaired", what,
            r->orphans + r->temporaries == 1 ? "it" : "them");
    else
        err_msg("%s: what interrupted commands leave, not damage; 'pqvault gc' removes %s%s",
            what, r->orphans + r->temporaries == 1 ? "it" : "them",
            verbose ? "" : " (check --verbose lists them)");
}

int
cmd_check(struct args *a)
{
    const char *val;
    int id, read_data = 0, no_key = 0, repair = 0, verbose = 0;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_READDATA)
            read_data = 1;
        else if (id == OPT_NOKEY)
            no_key = 1;
        else if (id == OPT_REPAIR_INDEX)
            repair = 1;
        else if (id == OPT_VERBOSE)
            verbose = 1;
        else
            return usage_error("unexpected operand '%s'", val);
    }
    if (no_key && read_data)
        return usage_error("--read-data needs the key: not with --no-key");
    if (no_key && repair)
        return usage_error("--repair-index needs the key: not with --no-key");
    pqv_vault *v;
    /* Without the key: structure only, no passphrase asked. */
    int status = no_key ? open_vault(&v) : session(&v, repair);
    if (status != EXIT_OK)
        return status;
    if (repair) {
        uint64_t found = 0, lost = 0;
        int rrc;
        pqv_error_clear();
        if ((rrc = pqv_vault_repair_index(v, report_cb, NULL, &found, &lost)) != 0) {
            status = lib_error(NULL, rrc);
            pqv_vault_close(v);
            return status;
        }
        printf("index repaired: %llu chunk record%s recovered from the packs' tables, %llu "
            "still lost\n", (unsigned long long)found, found == 1 ? "" : "s",
            (unsigned long long)lost);
    }
    struct pqv_check_result r;
    memset(&r, 0, sizeof(r));
    pqv_error_clear();
    int rc = pqv_vault_check(v, &(struct pqv_check_options){ read_data, check_report,
        verbose ? &verbose : NULL }, &r);
    if (rc == 0 || rc == PQV_E_INTEGRITY) {
        print_counts(&r, no_key);
        fflush(stdout);
        leftovers_line(&r, verbose);
    }
    if (rc == PQV_E_INTEGRITY) {
        err_msg("vault damaged: %llu damaged, %llu missing",
            (unsigned long long)r.damaged, (unsigned long long)r.missing);
        status = EXIT_INTEGRITY;
    } else if (rc != 0) {
        status = lib_error(NULL, rc);
    }
    pqv_vault_close(v);
    return status;
}

int
cmd_gc(struct args *a)
{
    const char *val;
    int id;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        return usage_error("unexpected operand '%s'", val);
    }
    pqv_vault *v;
    int status = session(&v, 1);
    if (status != EXIT_OK)
        return status;
    struct pqv_check_result r;
    memset(&r, 0, sizeof(r));
    pqv_error_clear();
    int rc = pqv_vault_gc(v, &(struct pqv_check_options){ 0, report_cb, NULL }, &r);
    if (rc == 0 && r.format >= 2) {
        printf("removed: %llu (leftovers: %llu, temporaries: %llu)\n",
            (unsigned long long)r.removed, (unsigned long long)r.orphans,
            (unsigned long long)r.temporaries);
        if (r.repacked > 0)
            printf("rewritten: %llu pack%s without their unused chunks\n",
                (unsigned long long)r.repacked, r.repacked == 1 ? "" : "s");
    }
    else if (rc == 0)
        printf("removed: %llu (orphans: %llu, temporaries: %llu)\n",
            (unsigned long long)r.removed, (unsigned long long)r.orphans,
            (unsigned long long)r.temporaries);
    else
        status = lib_error(NULL, rc);
    pqv_vault_close(v);
    return status;
}
