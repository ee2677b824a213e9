/*
 * src/cli/main.c: global options, command dispatch, messages and the
 * mapping of library errors to the documented exit statuses.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"

struct cli g_cli;

/* What runs each command (commands.c has the tables and texts). */
static int (*const run_command[CMD_COUNT])(struct args *) = {
    [CMD_INIT] = cmd_init, [CMD_ADD] = cmd_add, [CMD_GET] = cmd_get, [CMD_LIST] = cmd_list,
    [CMD_RM] = cmd_rm, [CMD_CHECK] = cmd_check, [CMD_PASSWD] = cmd_passwd,
    [CMD_RECOVER] = cmd_recover, [CMD_INFO] = cmd_info, [CMD_SPEED] = cmd_speed,
    [CMD_GC] = cmd_gc, [CMD_HELP] = cmd_help, [CMD_UPGRADE] = cmd_upgrade,
    [CMD_ACCEPT] = cmd_accept, [CMD_COPY] = cmd_copy,
    [CMD_EXPORT_RECIPIENT] = cmd_export_recipient, [CMD_INBOX] = cmd_inbox,
    [CMD_IMPORT] = cmd_import, [CMD_WRITER] = cmd_writer, [CMD_LOG] = cmd_log,
    [CMD_DIFF] = cmd_diff, [CMD_VERSIONS] = cmd_versions, [CMD_FORGET] = cmd_forget,
    [CMD_PIN] = cmd_pin, [CMD_UNPIN] = cmd_unpin, [CMD_STATS] = cmd_stats,
    [CMD_MOUNT] = cmd_mount,
};

int
arg_stop(struct args *a, int id)
{
    const struct command *c;

    if (id == ARG_HELP) {
        if (g_cli.cmd != NULL && (c = command_find(g_cli.cmd)) != NULL)
            command_print_help(c, stdout);
        else
            commands_print_general_help(stdout);
        return EXIT_OK;
    }
    return usage_error("%s", a->error);
}

/* unknown_command(word): say that ${word} is no command, with the one it
 * probably meant. */
static void
unknown_command(const char *word)
{
    const char *guess = command_suggest(word);

    if (guess != NULL)
        err_msg("unknown command '%s' (did you mean '%s'?)", word, guess);
    else
        err_msg("unknown command '%s'", word);
    fprintf(stderr, "Try 'pqvault --help'.\n");
}

int
cmd_help(struct args *a)
{
    const char *val;
    const char *topic = NULL;
    int id;

    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (topic)
            return usage_error("too many operands");
        topic = val;
    }
    if (!topic) {
        commands_print_general_help(stdout);
        return EXIT_OK;
    }
    const struct command *c = command_find(topic);
    if (!c) {
        unknown_command(topic);
        return EXIT_USAGE;
    }
    command_print_help(c, stdout);
    return EXIT_OK;
}

/* ---- messages ---- */

static void
vmsg(const char *fmt, va_list ap)
{
    char buf[8192];
    int n;
    if (g_cli.cmd)
        n = snprintf(buf, sizeof(buf), "pqvault: %s: ", g_cli.cmd);
    else
        n = snprintf(buf, sizeof(buf), "pqvault: ");
    vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
    /* One line: replace control characters (names may contain them). */
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    fflush(stdout);
    struct progress *bar = progress_hide();
    fprintf(stderr, "%s\n", buf);
    progress_show(bar);
}

void
err_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
}

int
usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
    const struct command *c = g_cli.cmd ? command_find(g_cli.cmd) : NULL;
    if (c)
        fprintf(stderr, "usage: pqvault %s%s%s\nTry 'pqvault help %s'.\n",
            c->name, *c->usage ? " " : "", c->usage, c->name);
    else
        fprintf(stderr, "Try 'pqvault --help'.\n");
    return EXIT_USAGE;
}

int
exit_status(int rc)
{
    switch (rc) {
    case PQV_OK: return EXIT_OK;
    case PQV_E_AUTH: return EXIT_AUTH;
    case PQV_E_INTEGRITY: return EXIT_INTEGRITY;
    case PQV_E_NOVAULT: return EXIT_NOVAULT;
    case PQV_E_LOCKED: return EXIT_LOCKED;
    case PQV_E_LIMIT: return EXIT_ERR; /* a cost to accept, not damage */
    default: return EXIT_ERR;
    }
}

int
lib_error_text(char *buf, size_t n, const char *what, int rc)
{
    return lib_error_text_of(buf, n, what, rc, pqv_error_last());
}

int
lib_error_text_of(char *buf, size_t n, const char *what, int rc, const struct pqv_error *e)
{
    const char *subject = e->code == rc ? e->subject : "";
    const char *reason = e->code == rc && e->reason[0] ? e->reason : pqv_strerror(rc);
    const char *hint = "";

    /* Hints about this program's flags are chosen here, from the code and
     * the command, never by the library. */
    if (rc == PQV_E_EXISTS && g_cli.force_hint)
        hint = " (use --force to replace)";
    else if (rc == PQV_E_NOTFOUND && g_cli.keyfile_hint)
        hint = " (make a new one with 'pqvault recover')";
    else if (rc == PQV_E_NOSPACE && g_cli.nospace_hint)
        hint = " (free space: 'pqvault rm' what is no longer needed, 'pqvault forget' the "
               "snapshots that keep it, then 'pqvault gc': they run on a full disk)";
    /* Name ${what} (the operand) unless the subject is it or within it. */
    if (what && *subject && strncmp(subject, what, strlen(what)) == 0)
        what = NULL;
    if (what && *subject)
        snprintf(buf, n, "%s: %s: %s%s", what, subject, reason, hint);
    else if (what || *subject)
        snprintf(buf, n, "%s: %s%s", what ? what : subject, reason, hint);
    else
        snprintf(buf, n, "%s%s", reason, hint);
    return exit_status(rc);
}

int
lib_error(const char *what, int rc)
{
    char buf[4096];
    int status = lib_error_text(buf, sizeof(buf), what, rc);

    err_msg("%s", buf);
    return status;
}

void
report_cb(void *ctx, int level, const char *subject, const char *message)
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

/* on_signal(sig): interrupted (Ctrl-C, kill, a closed terminal or pipe):
 * remove the temporary files being written (no partial plaintext is left
 * at a restore destination), say what an interrupted writer leaves, then
 * die of the signal as if unhandled.  Async-signal-safe calls only. */
static void
on_signal(int sig)
{
    static const char add_msg[] = "pqvault: add: interrupted: what was committed stays (an "
        "add is one commit, and so is each checkpoint of a large one; run the same add again to "
        "continue); packs written since are left for 'pqvault gc'\n";
    static const char msg[] = "pqvault: interrupted: temporary files removed\n";

    pqv_remove_temporaries();
    if (sig != SIGPIPE && progress_line_shown()) {
        /* The message on a line of its own, not after the bar's. */
        if (write(STDERR_FILENO, "\r\033[K", 4) < 0) {
            /* nothing to do */
        }
    }
    if (sig != SIGPIPE) {
        if (g_cli.cmd != NULL && strcmp(g_cli.cmd, "add") == 0) {
            if (write(STDERR_FILENO, add_msg, sizeof(add_msg) - 1) < 0) {
                /* nothing to do */
            }
        } else if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
            /* nothing to do */
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void
catch_interrupts(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask); /* one handler at a time */
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old;
        /* A signal the caller ignores (a shell's background job and
         * SIGINT, nohup and SIGHUP) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        (void)sigaction(sigs[i], &sa, NULL);
    }
}

static void
protect_process(void)
{
    struct rlimit rl = { 0, 0 };
    (void)setrlimit(RLIMIT_CORE, &rl);
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* heap_in_huge_pages(): reserve the main thread's heap in one piece and
 * ask for transparent huge pages on it.  A re-add of the kernel tree
 * (83,731 entries) takes 28,000 page faults to build its 120-140 MiB of
 * catalogue, walk and index, and a fault is dear on a virtual machine
 * (15 us here, against 1-2 on bare metal); in 2 MiB pages the same work
 * takes 2,000 of them (re-add 1.5-1.6 s -> 1.0-1.3 s, docs/DESIGN.md).
 * glibc grows the heap by brk, and a region that brk adds later would not
 * carry the advice, so the heap is grown once by HEAP_RESERVE (address
 * space only: nothing is touched, nothing counts in the RSS until used)
 * and advised whole.  The thresholds are pinned at what glibc's adaptive
 * ones reach after the first large free (32 MiB for mmap, the reserve
 * plus 64 MiB for giving memory back), so that the reservation is not
 * trimmed away and large buffers are served as before.  Other threads'
 * arenas keep small pages: the workers' buffers are touched sparsely, and
 * whole huge pages would count in the RSS.  Where malloc is not glibc's
 * heap (valgrind, sanitizers), the heap does not move and nothing is
 * advised.  Not for mount: its server lives long, and there the RSS
 * counts more than the faults of loading a tree (docs/DESIGN.md).  The
 * add's workers give back what they freed now and then (add_chunk.c,
 * TRIM_KEEP: this reserve stays). */
#define HEAP_RESERVE ((size_t)256 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)
static void
heap_in_huge_pages(void)
{
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE) && defined(M_TOP_PAD)
    uintptr_t lo, hi;
    void *p;

    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, (int)(HEAP_RESERVE + ((size_t)64 << 20)));
    (void)mallopt(M_TOP_PAD, (int)HEAP_RESERVE);
    lo = (uintptr_t)sbrk(0);
    p = malloc(HUGE_PAGE); /* more than the top holds: the heap grows */
    hi = (uintptr_t)sbrk(0);
    (void)mallopt(M_TOP_PAD, 128 << 10); /* glibc's default */
    free(p);
    lo = (lo + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    hi &= ~(HUGE_PAGE - 1);
    if (p != NULL && hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#endif
}

int
main(int argc, char **argv)
{
    struct args a = { argc, argv, 1, 0, NULL, main_opts, &g_cli, "" };
    const char *val;
    const char *cmdname = NULL;
    int id;

    protect_process();
    catch_interrupts();
    while (cmdname == NULL && (id = next_arg(&a, &val)) != ARG_END) {
        if (id == ARG_ERROR)
            return arg_stop(&a, id);
        if (id == OPT_VERSION) {
            printf("pqvault %s (vault format %d)\n", PQV_VERSION_STRING,
                PQV_FORMAT_VERSION);
            return EXIT_OK;
        }
        if (id == ARG_HELP) { /* --help before a command */
            commands_print_general_help(stdout);
            return EXIT_OK;
        }
        if (id == ARG_OPERAND)
            cmdname = val;
    }
    if (!cmdname && g_cli.vault_opt != NULL && command_find(g_cli.vault_opt) != NULL) {
        /* "pqvault -v list": the command was taken as the vault. */
        err_msg("-v: '%s' is a command, not a vault location (-v DIR comes first: "
            "pqvault -v DIR %s)", g_cli.vault_opt, g_cli.vault_opt);
        fprintf(stderr, "Try 'pqvault --help'.\n");
        return EXIT_USAGE;
    }
    if (!cmdname) {
        commands_print_general_help(stderr);
        return EXIT_USAGE;
    }
    const struct command *c = command_find(cmdname);
    if (!c) {
        unknown_command(cmdname);
        return EXIT_USAGE;
    }
    g_cli.cmd = c->name;
    if (c->id != CMD_MOUNT)
        heap_in_huge_pages();
    a.only_operands = 0; /* "--" before the command does not carry over */
    a.defs = c->opts;
    int status = run_command[c->id](&a);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        err_msg("standard output: write error");
        if (status == EXIT_OK)
            status = EXIT_ERR;
    }
    location_close();
    free(g_cli.vault_dir);
    return status;
}
