/*
 * src/cli/cmd_inbox.c: write-only adds: export-recipient, add --recipient
 * (inbox_session), inbox, import.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* A recipient file is about 21 KB (FrodoKEM-976); 64 KiB bounds it. */
#define RECIPIENT_FILE_MAX (64u << 10)

static int
no_operand(const char *val)
{
    return usage_error("unexpected operand '%s'", val);
}

/* ---- export-recipient ---- */

int
cmd_export_recipient(struct args *a)
{
    const char *val, *out = NULL;
    int id, force = 0, unverified = 0;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_OUT)
            out = val;
        else if (id == OPT_FORCE)
            force = 1;
        else if (id == OPT_UNVERIFIED)
            unverified = 1;
        else
            return no_operand(val);
    }
    if (out != NULL && *out == '\0')
        return usage_error("-o: empty file name");
    /* Issue 17: the config and key file are not authenticated to someone
     * without the key, and a writer to the storage can replace both with
     * its own identity under this vault's id.  Verified with the key
     * (a passphrase source, else the terminal), or --unverified, said. */
    int verify = passphrase_given() || (!unverified && tty_available());
    if (!verify && !unverified)
        return usage_error("the recipient is verified with the vault's key: give a passphrase "
            "source (--passphrase-file, --passphrase-fd, --passphrase-command, "
            "PQVAULT_PASSPHRASE), or --unverified to export what the storage says");
    pqv_vault *v;
    int status = verify ? session(&v, 0) : open_vault(&v);
    if (status != EXIT_OK)
        return status;
    char *text = NULL;
    size_t len = 0;
    pqv_error_clear();
    int rc = verify ? pqv_vault_export_recipient(v, &text, &len)
                    : pqv_vault_export_recipient_unverified(v, &text, &len);
    pqv_vault_close(v);
    if (rc != 0)
        return lib_error(NULL, rc);
    if (!verify)
        err_msg("warning: the recipient was not verified against the vault's key (it is what "
            "the storage's config and key file say, which a writer there can forge): check "
            "its fingerprint against 'pqvault info' with the passphrase");
    if (out == NULL || strcmp(out, "-") == 0) {
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
            err_msg("standard output: %s", strerror(errno));
            status = EXIT_ERR;
        }
    } else {
        int fd = open(out, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
            (force ? O_TRUNC : O_EXCL), 0644);
        if (fd < 0 && errno == EEXIST) {
            err_msg("%s: exists (use --force to replace)", out);
            status = EXIT_ERR;
        } else if (fd < 0) {
            err_msg("%s: %s", out, strerror(errno));
            status = EXIT_ERR;
        } else {
            size_t done = 0;
            while (done < len) {
                ssize_t w = write(fd, text + done, len - done);
                if (w < 0 && errno == EINTR)
                    continue;
                if (w <= 0)
                    break;
                done += (size_t)w;
            }
            if (done != len || fsync(fd) != 0) {
                err_msg("%s: %s", out, strerror(errno));
                status = EXIT_ERR;
            }
            close(fd);
        }
    }
    free(text);
    return status;
}

/* ---- add --recipient ---- */

int
inbox_session(pqv_vault **v, const char *recipient)
{
    uint8_t *buf;
    size_t len = 0;
    FILE *f = strcmp(recipient, "-") == 0 ? NULL : fopen(recipient, "rb");

    if (f == NULL) {
        err_msg("%s: %s", recipient, strcmp(recipient, "-") == 0 ? "the recipient cannot be read "
            "from standard input" : strerror(errno));
        return EXIT_ERR;
    }
    if ((buf = malloc(RECIPIENT_FILE_MAX + 1)) == NULL) {
        fclose(f);
        err_msg("out of memory");
        return EXIT_ERR;
    }
    len = fread(buf, 1, RECIPIENT_FILE_MAX + 1, f);
    if (ferror(f)) {
        err_msg("%s: %s", recipient, strerror(errno));
        fclose(f);
        free(buf);
        return EXIT_ERR;
    }
    fclose(f);
    if (len > RECIPIENT_FILE_MAX) {
        err_msg("%s: too large for a recipient", recipient);
        free(buf);
        return EXIT_ERR;
    }
    int status = open_vault_flags(v, PQV_OPEN_NO_KEYFILE);
    if (status != EXIT_OK) {
        free(buf);
        return status;
    }
    pqv_error_clear();
    int rc = pqv_vault_inbox_begin(*v, buf, len);
    free(buf);
    if (rc != 0) {
        status = lib_error(recipient, rc);
        pqv_vault_close(*v);
        *v = NULL;
    }
    return status;
}

/* ---- inbox ---- */

void
inbox_note(pqv_vault *v)
{
    struct pqv_inbox_batch *b = NULL;
    size_t n = 0, pending = 0;

    if (pqv_vault_inbox_list(v, &b, &n) != 0) {
        pqv_error_clear();
        return;
    }
    for (size_t i = 0; i < n; i++)
        pending += b[i].state != PQV_INBOX_INCOMPLETE;
    if (pending > 0 && !g_cli.quiet)
        fprintf(stderr, "pqvault: note: %zu inbox batch%s wait%s (pqvault import)\n", pending,
            pending == 1 ? "" : "es", pending == 1 ? "s" : "");
    free(b);
}

/* keep_status(status, st): the first failure is the command's. */
static void
keep_status(int *status, int st)
{
    if (*status == EXIT_OK)
        *status = st;
}

/* inbox_long(v, id): the entries batch ${id} would import, one a line
 * (kind and mode, owner, size, name). */
static int
inbox_long(pqv_vault *v, const char *id)
{
    struct pqv_entry *e = NULL;
    size_t n = 0;
    int rc;

    pqv_error_clear();
    if ((rc = pqv_vault_inbox_entries(v, id, &e, &n)) != 0)
        return lib_error(id, rc);
    for (size_t i = 0; i < n; i++) {
        char mode[11];
        format_mode(mode, e[i].type, e[i].mode);
        printf("    %s %5lu %5lu %12llu  %s%s%s\n", mode, (unsigned long)e[i].uid,
            (unsigned long)e[i].gid, (unsigned long long)e[i].size, e[i].name,
            e[i].type == PQV_ENTRY_SYMLINK ? " -> " : "",
            e[i].type == PQV_ENTRY_SYMLINK && e[i].target != NULL ? e[i].target : "");
    }
    pqv_entries_free(e, n);
    return EXIT_OK;
}

/* batch_state(b): what a listed batch is, in words. */
static const char *
batch_state(const struct pqv_inbox_batch *b)
{
    switch (b->state) {
    case PQV_INBOX_DAMAGED: return "damaged";
    case PQV_INBOX_INCOMPLETE: return "incomplete (no commit point)";
    case PQV_INBOX_REFUSED: return "refused";
    default: return "pending";
    }
}

int
cmd_inbox(struct args *a)
{
    const char *val;
    int id, lng = 0;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_LONG)
            lng = 1;
        else
            return no_operand(val);
    }
    if (lng && !passphrase_given())
        return usage_error("-l opens the batches: give a passphrase source");
    pqv_vault *v;
    /* With a passphrase source (never a prompt), each batch is opened. */
    int status = open_vault_unlock_if_given(&v);
    if (status != EXIT_OK)
        return status;
    struct pqv_inbox_batch *b = NULL;
    size_t n = 0;
    pqv_error_clear();
    int rc = pqv_vault_inbox_list(v, &b, &n);
    if (rc != 0)
        status = lib_error(NULL, rc);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char when[32] = "-", entries[32] = "-", who[PQV_NAME_MAX + 200] = "";
        if (b[i].time >= 0) {
            time_t t = (time_t)b[i].time;
            struct tm tm;
            if (gmtime_r(&t, &tm) != NULL)
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        }
        if (b[i].entries >= 0)
            snprintf(entries, sizeof(entries), "%lld", (long long)b[i].entries);
        if (b[i].state == PQV_INBOX_PENDING && b[i].entries >= 0)
            snprintf(who, sizeof(who), "  %s%s -> %s", b[i].writer[0] ? "writer " :
                "bare recipient (import --quarantine)", b[i].writer, b[i].prefix);
        printf("%s  %s  %llu bytes  %llu pack%s  %s entries  %s%s%s%s\n", b[i].id, when,
            (unsigned long long)b[i].size, (unsigned long long)b[i].packs,
            b[i].packs == 1 ? "" : "s", entries, batch_state(&b[i]), who,
            b[i].why[0] ? ": " : "", b[i].why);
        if (b[i].state == PQV_INBOX_DAMAGED || b[i].state == PQV_INBOX_REFUSED)
            status = EXIT_INTEGRITY;
        if (lng && b[i].state == PQV_INBOX_PENDING && b[i].entries >= 0)
            keep_status(&status, inbox_long(v, b[i].id));
    }
    free(b);
    pqv_vault_close(v);
    return status;
}

/* ---- import ---- */

int
cmd_import(struct args *a)
{
    const char *val;
    int id, replace = 0, quarantine = 0;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_REPLACE)
            replace = 1;
        else if (id == OPT_QUARANTINE)
            quarantine = 1;
        else
            return no_operand(val);
    }
    pqv_vault *v;
    int status = session(&v, 1);
    if (status != EXIT_OK)
        return status;
    struct pqv_import_result r;
    memset(&r, 0, sizeof(r));
    pqv_error_clear();
    int rc = pqv_vault_import(v, &(struct pqv_import_options){ replace, report_cb, NULL, &r,
        quarantine });
    if (!g_cli.quiet)
        fprintf(stderr, "pqvault: import: %llu batch%s, %llu entries imported (%llu replaced, "
            "%llu removed, %llu batch%s quarantined), %llu imported before, %llu refused\n",
            (unsigned long long)r.batches, r.batches == 1 ? "" : "es",
            (unsigned long long)r.entries, (unsigned long long)r.replaced,
            (unsigned long long)r.removed, (unsigned long long)r.quarantined,
            r.quarantined == 1 ? "" : "es", (unsigned long long)r.already,
            (unsigned long long)r.damaged);
    if (rc != 0)
        status = lib_error(NULL, rc);
    pqv_vault_close(v);
    return status;
}


/* ---- writer ---- */

/* open_secret(out, force, fd): the file a secret goes to, made first (so
 * that nothing is registered when it cannot be written): ${out} created
 * mode 0600 (replaced only with ${force}), or standard output (NULL or
 * "-"), made private when it is a file; an exit status. */
static int
open_secret(const char *out, int force, int *fd)
{
    *fd = STDOUT_FILENO;
    if (out == NULL || strcmp(out, "-") == 0)
        return private_stdout("a writer's credential");
    if ((*fd = open(out, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
             (force ? O_TRUNC : O_EXCL), 0600)) < 0) {
        err_msg(errno == EEXIST ? "%s: exists (use --force to replace)" : "%s: %s", out,
            strerror(errno));
        return EXIT_ERR;
    }
    if (fchmod(*fd, 0600) != 0) {
        err_msg("%s: %s", out, strerror(errno));
        close(*fd);
        return EXIT_ERR;
    }
    return EXIT_OK;
}

/* write_secret(fd, out, text, len): ${text} written and synced. */
static int
write_secret(int fd, const char *out, const char *text, size_t len)
{
    size_t done = 0;

    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (done != len || (fd != STDOUT_FILENO && fsync(fd) != 0)) {
        err_msg("%s: %s", out != NULL ? out : "standard output", strerror(errno));
        return EXIT_ERR;
    }
    return EXIT_OK;
}

static int
writer_list(pqv_vault *v)
{
    struct pqv_writer_info *w = NULL;
    size_t n = 0;
    int rc;

    pqv_error_clear();
    if ((rc = pqv_vault_writers(v, &w, &n)) != 0)
        return lib_error(NULL, rc);
    for (size_t i = 0; i < n; i++)
        printf("%s  prefix %s  generation %llu  since epoch %llu%s\n", w[i].name, w[i].prefix,
            (unsigned long long)w[i].generation, (unsigned long long)w[i].since,
            w[i].revoked ? "  revoked" : "");
    free(w);
    return EXIT_OK;
}

int
cmd_writer(struct args *a)
{
    const char *val, *prefix = NULL, *out = NULL, *ops[3] = { NULL, NULL, NULL };
    int id, force = 0, nops = 0, status;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_PREFIX)
            prefix = val;
        else if (id == OPT_OUT)
            out = val;
        else if (id == OPT_FORCE)
            force = 1;
        else if (nops < 3)
            ops[nops++] = val;
        else
            return no_operand(val);
    }
    if (nops == 0)
        return usage_error("missing 'add NAME', 'list' or 'revoke NAME'");
    int add = strcmp(ops[0], "add") == 0, revoke = strcmp(ops[0], "revoke") == 0;
    if (!add && !revoke && strcmp(ops[0], "list") != 0)
        return usage_error("unknown writer command '%s' (add, list or revoke)", ops[0]);
    if ((add || revoke) != (nops == 2) || nops > 2)
        return usage_error(add || revoke ? "writer %s needs exactly one NAME" :
            "writer list takes no operand", ops[0]);
    if (!add && (prefix != NULL || out != NULL || force))
        return usage_error("--prefix, -o and --force go with 'writer add'");
    pqv_vault *v;
    if ((status = session(&v, add || revoke)) != EXIT_OK)
        return status;
    int fd = -1;
    if (add && (status = open_secret(out, force, &fd)) == EXIT_OK) {
        char *text = NULL;
        size_t len = 0;
        pqv_error_clear();
        int rc = pqv_vault_writer_add(v, ops[1], prefix, &text, &len);
        if (rc != 0) {
            status = lib_error(ops[1], rc);
            if (fd != STDOUT_FILENO)
                (void)unlink(out); /* (made by open_secret, empty) */
        } else {
            status = write_secret(fd, out, text, len);
            if (status == EXIT_OK && !g_cli.quiet)
                fprintf(stderr, "pqvault: writer: %s registered; give its credential to the "
                    "writer only (pqvault -v VAULT add --recipient CREDENTIAL PATH...)\n",
                    ops[1]);
        }
        if (text != NULL)
            memset(text, 0, len);
        free(text);
        if (fd != STDOUT_FILENO)
            close(fd);
    } else if (add) {
        ;
    } else if (revoke) {
        pqv_error_clear();
        int rc = pqv_vault_writer_revoke(v, ops[1]);
        status = rc != 0 ? lib_error(ops[1], rc) : EXIT_OK;
    } else {
        status = writer_list(v);
    }
    pqv_vault_close(v);
    return status;
}
