/*
 * src/cli/cmd_inbox.c: write-only adds: export-recipient, add --recipient
 * (inbox_session), inbox, import.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int
cmd_inbox(struct args *a)
{
    const char *val;
    int id;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        return no_operand(val);
    }
    pqv_vault *v;
    /* With a passphrase source (never a prompt), each batch is opened. */
    int status = open_vault_unlock_if_given(&v);
    if (status != EXIT_OK)
        return status;
    struct pqv_inbox_batch *b = NULL;
    size_t n = 0;
    pqv_error_clear();
    int rc = pqv_vault_inbox_list(v, &b, &n);
    if (rc != 0) {
        status = lib_error(NULL, rc);
    } else {
        for (size_t i = 0; i < n; i++) {
            char when[32] = "-", entries[32] = "-";
            if (b[i].time >= 0) {
                time_t t = (time_t)b[i].time;
                struct tm tm;
                if (gmtime_r(&t, &tm) != NULL)
                    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
            }
            if (b[i].entries >= 0)
                snprintf(entries, sizeof(entries), "%lld", (long long)b[i].entries);
            printf("%s  %s  %llu bytes  %llu pack%s  %s entries  %s\n", b[i].id, when,
                (unsigned long long)b[i].size, (unsigned long long)b[i].packs,
                b[i].packs == 1 ? "" : "s", entries,
                b[i].state == PQV_INBOX_DAMAGED ? "damaged"
                : b[i].state == PQV_INBOX_INCOMPLETE ? "incomplete (no commit point)"
                : "pending");
            if (b[i].state == PQV_INBOX_DAMAGED)
                status = EXIT_INTEGRITY;
        }
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
    int id, replace = 0;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_REPLACE)
            replace = 1;
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
    int rc = pqv_vault_import(v, &(struct pqv_import_options){ replace, report_cb, NULL, &r });
    if (!g_cli.quiet)
        fprintf(stderr, "pqvault: import: %llu batch%s, %llu entries imported (%llu renamed, "
            "%llu replaced), %llu imported before, %llu damaged\n",
            (unsigned long long)r.batches, r.batches == 1 ? "" : "es",
            (unsigned long long)r.entries, (unsigned long long)r.renamed,
            (unsigned long long)r.replaced, (unsigned long long)r.already,
            (unsigned long long)r.damaged);
    if (rc != 0)
        status = lib_error(NULL, rc);
    pqv_vault_close(v);
    return status;
}
