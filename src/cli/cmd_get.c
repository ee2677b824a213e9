/*
 * src/cli/cmd_get.c: get (operands and patterns, --include/--exclude, -o -, the summary).
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
