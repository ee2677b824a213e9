/*
 * src/cli/cmd_vault.c: init, passwd, recover, upgrade, accept, copy (info and
 * stats in cmd_info.c).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "pqvault/aead.h"
#include "pqvault/frodo.h"

static int
kdf_arg(const char *val, struct pqv_kdf_params *k)
{
    if (parse_kdf(val, k) != 0)
        return usage_error("--kdf: invalid '%s' (expected t=N,m=KIB,p=N with "
            "1<=t<=64, 1<=p<=64, 8*p<=m<=4194304)", val);
    return EXIT_OK;
}

/* kdf_cost_warning(p, slot): a cost above what readers accept by default
 * is allowed (up to the format's maximum), but every unlock with it will
 * need --kdf-limit: say so before the work starts. */
static void
kdf_cost_warning(const struct pqv_kdf_params *p, int slot)
{
    if (pqv_kdf_within_limit(p, NULL))
        return;
    err_msg("warning: slot %d's Argon2id cost (m=%u KiB, t=%u) is above what readers "
        "accept by default (m=%u KiB, t=%u): unlocking with this passphrase will need "
        "--kdf-limit m=%u,t=%u", slot, (unsigned)p->m_kib, (unsigned)p->t_cost,
        PQV_KDF_LIMIT_MKIB, PQV_KDF_LIMIT_T,
        (unsigned)(p->m_kib > PQV_KDF_LIMIT_MKIB ? p->m_kib : PQV_KDF_LIMIT_MKIB),
        (unsigned)(p->t_cost > PQV_KDF_LIMIT_T ? p->t_cost : PQV_KDF_LIMIT_T));
}

/* ---- init ---- */

/* kdf_for_time(target, other, kdf): calibrate a slot's cost for ${target}
 * seconds here, the other slot at ${other} (NULL: unused, the default
 * cost), as speed recommends it (kdf_time.c), and say what was picked; an
 * exit status. */
static int
kdf_for_time(double target, const struct pqv_kdf_params *other, struct pqv_kdf_params *kdf)
{
    struct kdf_caps caps;
    struct kdf_pick pick;
    char mem[32], tm[32], cap[32];
    int rc;

    kdf_get_caps(&caps, pqv_kdf_default.lanes);
    if ((rc = kdf_calibrate(target, pqv_kdf_default.lanes, other, 0, &caps, &pick)) != 0) {
        err_msg("--kdf-time: Argon2id calibration: %s", pqv_strerror(rc));
        return EXIT_ERR;
    }
    *kdf = pick.p;
    if (g_cli.quiet)
        return EXIT_OK;
    kdf_format_mem(mem, sizeof(mem), pick.p.m_kib);
    kdf_format_time(tm, sizeof(tm), pick.seconds);
    fprintf(stderr, "kdf: Argon2id t=%u, m=%s, p=%u (about %s here)\n",
        (unsigned)pick.p.t_cost, mem, (unsigned)pick.p.lanes, tm);
    if (pick.short_of_target) {
        kdf_format_mem(cap, sizeof(cap), caps.m_kib);
        fprintf(stderr, "kdf: that is the most within the caps (m at most %s: %s; "
            "t at most %u): the target is not reached\n", cap, caps.m_why,
            (unsigned)caps.t_cost);
    } else if (pick.over_target) {
        fprintf(stderr, "kdf: that is the least cost tried: the target is not reached\n");
    }
    if ((uint64_t)pick.p.m_kib * pick.p.t_cost <
        (uint64_t)pqv_kdf_default.m_kib * pqv_kdf_default.t_cost)
        fprintf(stderr, "kdf: note: less work than the default (t=%u, m=%u MiB, p=%u)\n",
            (unsigned)pqv_kdf_default.t_cost, (unsigned)(pqv_kdf_default.m_kib / 1024),
            (unsigned)pqv_kdf_default.lanes);
    return EXIT_OK;
}

/* init_room(force): whether the local vault directory can take a new
 * vault: missing (created), empty (lost+found aside: a file system of its
 * own), already a vault (the library says so), or holding other files and
 * ${force}.  A regular file is never one.  An exit status (message
 * printed). */
static int
init_room(int force)
{
    const char *dir = g_cli.vault_dir;
    struct stat st;

    if (stat(dir, &st) != 0)
        return EXIT_OK;   /* created, or the library's error */
    if (!S_ISDIR(st.st_mode)) {
        err_msg("%s: %s, not a vault directory", dir, S_ISREG(st.st_mode) ? "is a file"
            : "is not a directory");
        return EXIT_ERR;
    }
    if (force)
        return EXIT_OK;
    char config[PATH_MAX];
    if (snprintf(config, sizeof(config), "%s/config", dir) < (int)sizeof(config) &&
        lstat(config, &st) == 0)
        return EXIT_OK;   /* "a vault already exists here" */
    DIR *d = opendir(dir);
    if (d == NULL)
        return EXIT_OK;   /* the library reports why it cannot be used */
    struct dirent *e;
    char first[256] = "";
    unsigned long others = 0;
    while ((e = readdir(d)) != NULL) {
        /* A vault's own names (what an interrupted init leaves: the
         * library starts over, or refuses more than that) are not the
         * user's files. */
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strcmp(e->d_name, "lost+found") == 0 || strcmp(e->d_name, "keyfile") == 0 ||
            strcmp(e->d_name, "segments") == 0 || strcmp(e->d_name, "inbox") == 0 ||
            strcmp(e->d_name, "packs") == 0 || strcmp(e->d_name, "lock") == 0 ||
            strcmp(e->d_name, "reserve") == 0 ||
            strstr(e->d_name, ".tmp-") != NULL)
            continue;
        if (others++ == 0)
            snprintf(first, sizeof(first), "%s", e->d_name);
    }
    closedir(d);
    if (others == 0)
        return EXIT_OK;
    char more[48] = "";
    if (others > 1)
        snprintf(more, sizeof(more), " and %lu more", others - 1);
    err_msg("%s: the directory is not empty and holds no vault ('%s'%s): choose a new or "
        "empty directory, or use --force to create the vault among these files", dir, first,
        more);
    return EXIT_ERR;
}

/* unreachable_parents(dir): a shared inbox needs every directory above the
 * vault searchable by others; said for each that is not (the vault works
 * for the owner either way: a warning). */
static void
unreachable_parents(const char *dir)
{
    char path[PATH_MAX], *slash;
    struct stat st;

    if (realpath(dir, path) == NULL)
        return;
    while ((slash = strrchr(path, '/')) != NULL) {
        if (slash == path)
            slash[1] = '\0';
        else
            *slash = '\0';
        if (stat(path, &st) == 0 && (st.st_mode & 0001) == 0)
            fprintf(stderr, "pqvault: init: warning: other users' writers cannot reach the vault "
                "through %s (mode %04o): chmod o+x %s\n", path, (unsigned)(st.st_mode & 07777),
                path);
        if (slash == path)
            break;
    }
}

int
cmd_init(struct args *a)
{
    const char *val;
    struct pqv_kdf_params kdf;
    double kdf_time = 0;
    int have_kdf = 0, have_kdf_time = 0, force = 0, id, rc;
    struct pqv_init_options opt = { NULL, 0, NULL, 0, NULL, NULL, NULL , 0};
    opt.state_dir = cli_state_dir();
    opt.report = state_report_cb;
    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: return arg_stop(a, id);
        case ARG_OPERAND: return no_operands(val);
        case OPT_KEM: {
            const pqv_frodo *p = pqv_frodo_find(val);
            if (!p)
                return usage_error("--kem: unknown parameter set '%s' (one of "
                    "FrodoKEM-640-AES, FrodoKEM-640-SHAKE, FrodoKEM-976-AES, "
                    "FrodoKEM-976-SHAKE, FrodoKEM-1344-AES, FrodoKEM-1344-SHAKE)",
                    val);
            opt.kem = pqv_frodo_name(p);
            break;
        }
        case OPT_AEAD:
            if (strcmp(val, "auto") == 0) {
                opt.aead = 0;
            } else if ((opt.aead = pqv_aead_by_name(val)) == 0) {
                return usage_error("--aead: unknown suite '%s' (AES-256-GCM, "
                    "ChaCha20-Poly1305 or auto)", val);
            }
            break;
        case OPT_KDF:
            if ((rc = kdf_arg(val, &kdf)) != EXIT_OK)
                return rc;
            have_kdf = 1;
            break;
        case OPT_KDFTIME:
            if ((rc = kdf_time_arg("--kdf-time", val, &kdf_time)) != EXIT_OK)
                return rc;
            have_kdf_time = 1;
            break;
        case OPT_FORCE:
            force = 1;
            break;
        case OPT_SHARED_INBOX:
            opt.flags |= PQV_INIT_SHARED_INBOX;
            break;
        }
    }
    if (have_kdf && have_kdf_time)
        return usage_error("only one of --kdf and --kdf-time may be given");
    if (have_kdf) {
        opt.kdf = &kdf;
        kdf_cost_warning(&kdf, 0);
    }
    if ((rc = resolve_location()) != EXIT_OK)
        return rc;
    if ((opt.flags & PQV_INIT_SHARED_INBOX) != 0 && location_is_s3())
        return usage_error("--shared-inbox: for a local vault; on S3 a bucket policy lets "
            "writers put objects under inbox/ (docs/S3.md)");
    /* A local directory only: a bucket prefix is the library's to judge. */
    if (!location_is_s3() && (rc = init_room(force)) != EXIT_OK)
        return rc;
    /* Where the recovery code goes: private before anything is created. */
    if ((rc = private_stdout("the recovery code")) != EXIT_OK)
        return rc;
    /* Calibrated before the passphrase is read: it is held no longer, and
     * the pick is said before the prompt. */
    if (have_kdf_time) {
        if ((rc = kdf_for_time(kdf_time, NULL, &kdf)) != EXIT_OK)
            return rc;
        opt.kdf = &kdf;
        kdf_cost_warning(&kdf, 0);
    }

    struct secret s;
    if ((rc = secret_alloc(&s)) != EXIT_OK)
        return rc;
    if ((rc = read_new_passphrase(&s, &g_cli.pass, "PQVAULT_PASSPHRASE")) != EXIT_OK) {
        secret_free(&s);
        return rc;
    }
    char recovery[PQV_RECOVERY_CHARS];
    char fp[PQV_FINGERPRINT_CHARS];
    pqv_error_clear();
    int lrc = location_vault_create((const uint8_t *)s.buf, s.len, &opt, recovery, fp);
    secret_free(&s);
    if (lrc != 0)
        return lib_error(g_cli.vault_dir, lrc);
    if (!g_cli.quiet)
        fprintf(stderr,
            "pqvault: created vault %s\n"
            "fingerprint: %s\n"
            "recovery code (on standard output): write this down; it is shown only once.\n"
            "'pqvault recover' rebuilds the key file from it.\n",
            g_cli.vault_dir, fp);
    printf("%s\n", recovery);
    fflush(stdout);
    OPENSSL_cleanse(recovery, sizeof(recovery));
    if ((opt.flags & PQV_INIT_SHARED_INBOX) != 0)
        unreachable_parents(g_cli.vault_dir);
    return EXIT_OK;
}

/* ---- passwd ---- */

int
cmd_passwd(struct args *a)
{
    const char *val;
    struct pqv_kdf_params kdf;
    struct pass_source newsrc = { PASS_NONE, NULL, -1 };
    int have_kdf = 0, have_kdf_time = 0, slot = -1, clear = 0, id, rc;
    double kdf_time = 0;
    unsigned long long u;
    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: return arg_stop(a, id);
        case ARG_OPERAND: return no_operands(val);
        case OPT_SLOT:
            if (parse_uint(val, 1, &u) != 0)
                return usage_error("--slot: must be 0 or 1, not '%s'", val);
            slot = (int)u;
            break;
        case OPT_CLEAR: clear = 1; break;
        case OPT_KDF:
            if ((rc = kdf_arg(val, &kdf)) != EXIT_OK)
                return rc;
            have_kdf = 1;
            break;
        case OPT_KDFTIME:
            if ((rc = kdf_time_arg("--kdf-time", val, &kdf_time)) != EXIT_OK)
                return rc;
            have_kdf_time = 1;
            break;
        case OPT_NEWFILE:
        case OPT_NEWFD:
            if (newsrc.kind != PASS_NONE)
                return usage_error("only one of --new-passphrase-file and "
                    "--new-passphrase-fd may be given");
            newsrc.arg = val;
            if (id == OPT_NEWFILE) {
                newsrc.kind = PASS_FILE;
            } else {
                if (parse_uint(val, 1000000, &u) != 0)
                    return usage_error("--new-passphrase-fd: '%s' is not a file "
                        "descriptor number", val);
                newsrc.kind = PASS_FD;
                newsrc.fd = (int)u;
            }
            break;
        }
    }
    if (clear && slot < 0)
        return usage_error("--clear needs --slot");
    if (have_kdf && have_kdf_time)
        return usage_error("only one of --kdf and --kdf-time may be given");
    if (clear && (have_kdf || have_kdf_time || newsrc.kind != PASS_NONE))
        return usage_error("--clear takes no --kdf, --kdf-time or new passphrase");

    pqv_vault *v;
    if ((rc = session(&v, 1)) != EXIT_OK)
        return rc;
    if (slot < 0)
        slot = pqv_vault_slot(v) >= 0 ? pqv_vault_slot(v) : 0;
    /* Calibrated once the slot is known (the other one is computed at
     * every unlock too, at its own cost) and before the new passphrase is
     * read, so that it is held no longer. */
    if (have_kdf_time) {
        const pqv_keyfile *kf = pqv_vault_keyfile(v);
        struct pqv_kdf_params other = pqv_kdf_default;
        if (kf != NULL)
            other = pqv_keyfile_slot_params(kf, 1 - slot);
        if ((rc = kdf_for_time(kdf_time, &other, &kdf)) != EXIT_OK) {
            pqv_vault_close(v);
            return rc;
        }
        have_kdf = 1;
    }
    if (have_kdf && !clear)
        kdf_cost_warning(&kdf, slot);
    char what[16];
    snprintf(what, sizeof(what), "slot %d", slot);
    if (clear) {
        pqv_error_clear();
        int lrc = pqv_vault_clear_slot(v, slot);
        rc = lrc ? lib_error(what, lrc) : EXIT_OK;
        if (lrc == 0 && !g_cli.quiet)
            fprintf(stderr, "pqvault: passwd: slot %d cleared\n", slot);
        pqv_vault_close(v);
        return rc;
    }
    struct secret s;
    if ((rc = secret_alloc(&s)) != EXIT_OK) {
        pqv_vault_close(v);
        return rc;
    }
    rc = read_new_passphrase(&s, &newsrc, "PQVAULT_NEW_PASSPHRASE");
    if (rc == EXIT_OK) {
        pqv_error_clear();
        int lrc = pqv_vault_passwd(v, slot, (const uint8_t *)s.buf, s.len,
            have_kdf ? &kdf : NULL);
        rc = lrc ? lib_error(what, lrc) : EXIT_OK;
        if (lrc == 0 && !g_cli.quiet)
            fprintf(stderr, "pqvault: passwd: passphrase of slot %d set\n", slot);
    }
    secret_free(&s);
    pqv_vault_close(v);
    return rc;
}

/* ---- recover ---- */

int
cmd_recover(struct args *a)
{
    const char *val, *recfile = NULL;
    struct pqv_kdf_params kdf;
    double kdf_time = 0;
    int have_kdf = 0, have_kdf_time = 0, id, rc;
    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: return arg_stop(a, id);
        case ARG_OPERAND: return no_operands(val);
        case OPT_RECFILE: recfile = val; break;
        case OPT_KDF:
            if ((rc = kdf_arg(val, &kdf)) != EXIT_OK)
                return rc;
            have_kdf = 1;
            break;
        case OPT_KDFTIME:
            if ((rc = kdf_time_arg("--kdf-time", val, &kdf_time)) != EXIT_OK)
                return rc;
            have_kdf_time = 1;
            break;
        }
    }
    if (have_kdf && have_kdf_time)
        return usage_error("only one of --kdf and --kdf-time may be given");
    if (have_kdf)
        kdf_cost_warning(&kdf, 0);
    /* The key file may be missing or damaged: that is what recover is for. */
    pqv_vault *v;
    if ((rc = open_vault(&v)) != EXIT_OK)
        return rc;
    if ((rc = lock_vault(v)) != EXIT_OK) {
        pqv_vault_close(v);
        return rc;
    }
    struct secret code, s;
    if ((rc = secret_alloc(&code)) != EXIT_OK)
        goto out0;
    if ((rc = secret_alloc(&s)) != EXIT_OK)
        goto out1;
    /* The code first: a typo, or another vault's code, is reported before
     * anyone is asked for a new passphrase.  Typed on the terminal it is
     * asked again (3 tries, as a passphrase), with what was wrong. */
    int lrc = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        char why[256];
        int tty;
        if ((rc = read_recovery_code(&code, recfile, &tty)) != EXIT_OK)
            goto out2;
        int last = !tty || attempt == 2;
        if (recovery_code_problem(code.buf, why, sizeof(why), tty)) {
            if (!last) {
                tty_say("%s; try again", why);
                OPENSSL_cleanse(why, sizeof(why));
                continue;
            }
            /* stderr may be a log: the bad group's symbols are not quoted. */
            (void)recovery_code_problem(code.buf, why, sizeof(why), 0);
            err_msg("invalid recovery code: %s", why);
            rc = EXIT_AUTH;
            goto out2;
        }
        pqv_error_clear();
        lrc = pqv_vault_unlock_recovery(v, code.buf);
        if (lrc == PQV_E_AUTH) {
            const struct pqv_error *e = pqv_error_last();
            snprintf(why, sizeof(why), "%.200s", e->reason[0] ? e->reason
                : "not this vault's recovery code");
            if (!last) {
                tty_say("%s; try again", why);
                continue;
            }
            err_msg("invalid recovery code: %s", why);
            rc = EXIT_AUTH;
            goto out2;
        } else if (lrc != 0) {
            rc = lib_error(g_cli.vault_dir, lrc);
            goto out2;
        }
        break;
    }
    secret_free(&code);
    /* Once the code is known good, before the new passphrase is read: the
     * new key file's slot 1 is unused (the default cost), as after init. */
    if (have_kdf_time) {
        if ((rc = kdf_for_time(kdf_time, NULL, &kdf)) != EXIT_OK)
            goto out2;
        have_kdf = 1;
        kdf_cost_warning(&kdf, 0);
    }
    if ((rc = read_new_passphrase(&s, &g_cli.pass, "PQVAULT_PASSPHRASE")) != EXIT_OK)
        goto out2;
    pqv_error_clear();
    lrc = pqv_vault_recover_keyfile(v, (const uint8_t *)s.buf, s.len, have_kdf ? &kdf : NULL);
    if (lrc != 0) {
        rc = lib_error(g_cli.vault_dir, lrc);
    } else {
        rc = EXIT_OK;
        if (!g_cli.quiet)
            fprintf(stderr, "pqvault: recover: new key file written; slot 0 has "
                "the new passphrase, slot 1 is unused\n");
    }
out2:
    secret_free(&s);
out1:
    secret_free(&code);
out0:
    pqv_vault_close(v);
    return rc;
}

/* ---- upgrade, accept ---- */

/* stdout_cb: informational reports on standard output (what was done). */
static void
stdout_cb(void *ctx, int level, const char *subject, const char *message)
{
    if (level >= PQV_REPORT_WARNING) {
        report_cb(ctx, level, subject, message);
        return;
    }
    /* stdout may be the terminal the bar is drawn on. */
    struct progress *bar = progress_hide();
    if (subject != NULL && *subject != '\0')
        printf("%s: %s\n", subject, message);
    else
        printf("%s\n", message);
    fflush(stdout);
    progress_show(bar);
}

int
cmd_upgrade(struct args *a)
{
    const char *val;
    int id;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        return no_operands(val);
    }
    pqv_vault *v;
    int status = session(&v, 1);
    if (status != EXIT_OK)
        return status;
    struct pqv_info in;
    pqv_error_clear();
    int rc = pqv_vault_info(v, &in);
    if (rc == 0 && in.format_version >= PQV_FORMAT_DEFAULT) {
        printf("already format %d\n", in.format_version);
    } else if (rc == 0 && (rc = pqv_vault_upgrade(v, report_cb, NULL)) == 0 &&
        (rc = pqv_vault_info(v, &in)) == 0) {
        printf("upgraded to format %d\n", in.format_version);
    }
    if (rc != 0)
        status = lib_error(NULL, rc);
    pqv_vault_close(v);
    return status;
}

int
cmd_accept(struct args *a)
{
    const char *val;
    int id;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        return no_operands(val);
    }
    pqv_vault *v;
    int status = session(&v, 0);
    if (status != EXIT_OK)
        return status;
    pqv_error_clear();
    int rc = pqv_vault_accept(v, stdout_cb, NULL);
    if (rc != 0)
        status = lib_error(NULL, rc);
    pqv_vault_close(v);
    return status;
}

/* ---- copy ---- */

int
cmd_copy(struct args *a)
{
    const char *val, *to = NULL;
    int id, verbose = 0;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_TO)
            to = val;
        else if (id == OPT_VERBOSE)
            verbose = 1;
        else
            return no_operands(val);
    }
    if (to == NULL || *to == '\0')
        return usage_error("missing --to DESTINATION");
    pqv_vault *v;
    int status = session(&v, 0);
    if (status != EXIT_OK)
        return status;
    pqv_storage *dest = NULL;
    pqv_error_clear();
    int rc = location_open_other(to, &dest);
    if (rc != 0) {
        status = lib_error(to, rc);
        pqv_vault_close(v);
        return status;
    }
    struct pqv_copy_result r;
    struct pqv_copy_options opt = { verbose ? stdout_cb : report_cb, NULL, NULL, NULL };
    struct progress *p = progress_new("copy");
    opt.progress = p ? progress_cb : NULL;
    opt.progress_ctx = p;
    memset(&r, 0, sizeof(r));
    rc = pqv_vault_copy(v, dest, &opt, &r);
    progress_end(p);
    if (rc != 0) {
        status = lib_error(to, rc);
    } else if (!g_cli.quiet) {
        char b[32];
        format_bytes(b, sizeof(b), r.bytes);
        fprintf(stderr, "copied: epoch %llu, %llu blobs (%s), %llu already there\n",
            (unsigned long long)r.epoch, (unsigned long long)r.copied, b,
            (unsigned long long)r.skipped);
    }
    dest->ops->close(dest);
    pqv_vault_close(v);
    return status;
}
