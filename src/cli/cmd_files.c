/*
 * src/cli/cmd_files.c: rm, check and gc; keep(), shared by the file commands (cmd_add.c, cmd_get.c, cmd_list.c).
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
void
keep(int *status, int rc)
{
    if (*status == EXIT_OK)
        *status = rc;
}

/* seconds_since(t0): seconds on the monotonic clock since ${t0}. */
double
seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* add_report (cli.h): what add and rm report per entry. */

void
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
int
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
