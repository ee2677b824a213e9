/*
 * src/cli/cmd_vault.c: init, passwd, recover, info.
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
no_operands(const char *val)
{
    return usage_error("unexpected operand '%s'", val);
}

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

/* ---- info ---- */

/* What a slot line says about use.  An unused slot is random bytes at
 * the default cost (init and passwd --clear write it so: FORMAT.md section
 * 4), the shape of a used one by design: the slot a passphrase opened is
 * known to be in use, and so is a slot at another cost (only sealing a
 * passphrase into a slot sets one); of a slot at the default cost that did
 * not open, nobody without its passphrase can tell. */
#define SLOT_UNKNOWN "in use or unused: not knowable without its passphrase (an unused " \
    "slot is random bytes at the default cost, by design the same as a used one)"
#define SLOT_COSTED "in use (its cost is not the default an unused slot has)"

static int
default_cost(const struct pqv_kdf_params *p)
{
    return p->t_cost == pqv_kdf_default.t_cost && p->m_kib == pqv_kdf_default.m_kib &&
        p->lanes == pqv_kdf_default.lanes;
}

/* reclaimable_line(v, verified): what gc would free, when the catalogue
 * can be read (unlocked): check's structural pass, quietly. */
static void
reclaimable_line(pqv_vault *v, int verified)
{
    struct pqv_check_result r;
    char b[32];
    int rc;

    if (!verified) {
        printf("reclaimable:     not known without the key (the catalogue says which packs "
            "are used: info with a passphrase source counts them, check lists them)\n");
        return;
    }
    memset(&r, 0, sizeof(r));
    pqv_error_clear();
    rc = pqv_vault_check(v, NULL, &r);
    pqv_error_clear();
    if (rc != 0 && rc != PQV_E_INTEGRITY) {
        printf("reclaimable:     not known (%s)\n", pqv_strerror(rc));
        return;
    }
    format_bytes(b, sizeof(b), r.orphan_bytes);
    printf("reclaimable:     %s in %llu leftover%s", b, (unsigned long long)r.orphans,
        r.orphans == 1 ? "" : "s");
    if (r.temporaries > 0)
        printf(" and %llu temporar%s", (unsigned long long)r.temporaries,
            r.temporaries == 1 ? "y" : "ies");
    if (r.orphans + r.temporaries > 0)
        printf(" ('pqvault gc' removes them)");
    if (r.in_flight > 0)
        printf("; %llu being written by a running writer", (unsigned long long)r.in_flight);
    if (rc == PQV_E_INTEGRITY)
        printf("; the vault is damaged: run 'pqvault check'");
    printf("\n");
}

int
cmd_info(struct args *a)
{
    const char *val;
    int id, rc;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        return no_operands(val);
    }
    pqv_vault *v;
    /* Without the key file too: it may be kept elsewhere, or lost. */
    if ((rc = open_vault(&v)) != EXIT_OK)
        return rc;
    struct pqv_error kerr;
    int kstatus = pqv_vault_keyfile_status(v, &kerr);
    /* With a passphrase source that asks nobody (never a prompt), verify
     * what the config says by unlocking. */
    if (kstatus == 0 && passphrase_given() &&
        (rc = unlock_vault(v)) != EXIT_OK) {
        pqv_vault_close(v);
        return rc;
    }
    struct pqv_info in;
    memset(&in, 0, sizeof(in));
    pqv_error_clear();
    int lrc = pqv_vault_info(v, &in);
    if (lrc != 0) {
        rc = lib_error(g_cli.vault_dir, lrc);
        pqv_vault_close(v);
        return rc;
    }
    const char *mark = in.verified ? " (verified)" : " (unverified: unlock to verify)";
    char created[64], rb[32], ob[32];
    format_local_time(created, sizeof(created), in.created, "%Y-%m-%d %H:%M:%S %z");
    format_bytes(rb, sizeof(rb), in.record_bytes);
    format_bytes(ob, sizeof(ob), in.object_bytes);
    printf("vault:           %s\n", g_cli.vault_dir);
    if (g_cli.keyfile)
        printf("key file:        %s", g_cli.keyfile);
    else
        printf("key file:        %s/keyfile", g_cli.vault_dir);
    if (kstatus == PQV_E_NOTFOUND)
        printf(" (not found: if it is kept elsewhere, name it with --keyfile; if it is "
            "lost, 'pqvault recover' writes a new one from the recovery code)\n");
    else if (kstatus != 0)
        printf(" (%s: %s)\n", kstatus == PQV_E_UNSUPPORTED ? "unsupported" : "damaged",
            kerr.reason[0] ? kerr.reason : pqv_strerror(kstatus));
    else
        printf("\n");
    printf("format version:  %d\n", in.format_version);
    printf("vault id:        %s%s\n", in.vault_id, mark);
    printf("KEM:             %s%s\n", in.kem, mark);
    printf("default AEAD:    %s%s\n", in.aead, mark);
    printf("fingerprint:     %s%s\n", in.fingerprint, mark);
    printf("created:         %s%s\n", created, mark);
    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++) {
        const struct pqv_kdf_params *p = &in.slot_params[i];
        if (kstatus != 0) {
            printf("slot %d:          unknown (no key file)\n", i);
            continue;
        }
        printf("slot %d:          Argon2id t=%u, m=%u KiB, p=%u", i, (unsigned)p->t_cost,
            (unsigned)p->m_kib, (unsigned)p->lanes);
        if (!pqv_kdf_within_limit(p, g_cli.have_kdf_limit ? &g_cli.kdf_limit : NULL))
            printf(", above the Argon2id limit (unlocking it needs --kdf-limit)");
        if (in.opened_slot == i)
            printf(" (opened by this passphrase)\n");
        else
            printf(", %s\n", default_cost(p) ? SLOT_UNKNOWN : SLOT_COSTED);
    }
    if (in.format_version >= 2) {
        char sb[32], pb[32];
        format_bytes(sb, sizeof(sb), in.segment_bytes);
        format_bytes(pb, sizeof(pb), in.pack_bytes);
        printf("epoch:           %llu\n", (unsigned long long)in.epoch);
        printf("segments:        %llu (%s)\n", (unsigned long long)in.segments, sb);
        printf("packs:           %llu (%s)\n", (unsigned long long)in.packs, pb);
        if (in.records > 0)
            printf("records:         %llu (%s, left by the upgrade: gc removes them)\n",
                (unsigned long long)in.records, rb);
        if (in.objects > 0)
            printf("objects:         %llu (%s, format-1 data)\n", (unsigned long long)in.objects,
                ob);
    } else {
        printf("records:         %llu (%s)\n", (unsigned long long)in.records, rb);
        printf("objects:         %llu (%s)\n", (unsigned long long)in.objects, ob);
    }
    printf("temporaries:     %llu\n", (unsigned long long)in.temporaries);
    fflush(stdout);
    reclaimable_line(v, in.verified);
    pqv_vault_close(v);
    return EXIT_OK;
}

/* ---- stats ---- */

/* ratio(out, a, b): a/b as "1.87x", or "-" when b is 0. */
static void
ratio(char out[32], uint64_t a, uint64_t b)
{
    if (b == 0)
        snprintf(out, 32, "-");
    else
        snprintf(out, 32, "%.2fx", (double)a / (double)b);
}

static void
json_ratio(uint64_t a, uint64_t b)
{
    if (b == 0)
        printf("null");
    else
        printf("%.4f", (double)a / (double)b);
}

int
cmd_stats(struct args *a)
{
    const char *val;
    int id, json = 0, rc;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_JSON)
            json = 1;
        else
            return no_operands(val);
    }
    pqv_vault *v;
    if ((rc = session(&v, 0)) != EXIT_OK)
        return rc;
    struct pqv_stats st;
    struct pqv_check_result r;
    int crc = 0;
    memset(&r, 0, sizeof(r));
    pqv_error_clear();
    if ((rc = pqv_vault_stats(v, &st)) != 0) {
        rc = lib_error(NULL, rc);
        pqv_vault_close(v);
        return rc;
    }
    /* What gc frees: check's structural pass, quietly (not at a
     * snapshot: leftovers are the whole vault's). */
    if (g_cli.at == NULL) {
        crc = pqv_vault_check(v, NULL, &r);
        pqv_error_clear();
    }
    int leftovers_known = g_cli.at == NULL && (crc == 0 || crc == PQV_E_INTEGRITY);
    if (json) {
        printf("{\"format\": %d, \"epoch\": %llu, \"newest\": %s, \"snapshots\": %llu, "
            "\"entries\": %llu, \"files\": %llu, \"directories\": %llu, \"symlinks\": %llu, "
            "\"size\": %llu, \"data\": %llu, \"chunks\": %llu, \"unique_bytes\": %llu, "
            "\"stored_bytes\": %llu, \"dedup_ratio\": ", st.format,
            (unsigned long long)st.epoch, g_cli.at == NULL ? "true" : "false",
            (unsigned long long)st.snapshots, (unsigned long long)st.entries,
            (unsigned long long)st.files, (unsigned long long)st.dirs,
            (unsigned long long)st.symlinks, (unsigned long long)st.size,
            (unsigned long long)st.data, (unsigned long long)st.pieces,
            (unsigned long long)st.unique_bytes, (unsigned long long)st.stored_bytes);
        json_ratio(st.data, st.unique_bytes);
        printf(", \"compression_ratio\": ");
        json_ratio(st.unique_bytes, st.stored_bytes);
        printf(", \"unlocated_chunks\": %llu, \"packs\": %llu, \"pack_bytes\": %llu, "
            "\"segments\": %llu, \"segment_bytes\": %llu, \"leftovers\": ",
            (unsigned long long)st.unlocated, (unsigned long long)st.packs,
            (unsigned long long)st.pack_bytes, (unsigned long long)st.segments,
            (unsigned long long)st.segment_bytes);
        if (leftovers_known)
            printf("%llu, \"reclaimable_bytes\": %llu, \"temporaries\": %llu}\n",
                (unsigned long long)r.orphans, (unsigned long long)r.orphan_bytes,
                (unsigned long long)r.temporaries);
        else
            printf("null, \"reclaimable_bytes\": null, \"temporaries\": null}\n");
        pqv_vault_close(v);
        return EXIT_OK;
    }
    char n1[32], n2[32], n3[32], n4[32], b1[32], b2[32], b3[32], r1[32], r2[32];
    if (g_cli.at == NULL)
        printf("state:           epoch %llu, the newest", (unsigned long long)st.epoch);
    else
        printf("state:           epoch %llu (snapshot, --at)", (unsigned long long)st.epoch);
    if (st.format >= 3)
        printf("; %llu snapshot%s kept\n", (unsigned long long)st.snapshots,
            st.snapshots == 1 ? "" : "s");
    else
        printf("; no history (format %d)\n", st.format);
    format_count(n1, st.entries);
    format_count(n2, st.files);
    format_count(n3, st.dirs);
    format_count(n4, st.symlinks);
    printf("entries:         %s: %s file%s, %s director%s, %s symbolic link%s\n", n1, n2,
        st.files == 1 ? "" : "s", n3, st.dirs == 1 ? "y" : "ies", n4, st.symlinks == 1 ? "" : "s");
    format_bytes(b1, sizeof(b1), st.size);
    format_bytes(b2, sizeof(b2), st.data);
    printf("logical size:    %s in files (%llu bytes)", b1, (unsigned long long)st.size);
    if (st.data != st.size)
        printf(", %s of data (holes are not stored)", b2);
    printf("\n");
    format_bytes(b1, sizeof(b1), st.unique_bytes);
    format_count(n1, st.pieces);
    ratio(r1, st.data, st.unique_bytes);
    printf("distinct data:   %s in %s %s: deduplication %s\n", b1, n1,
        st.format >= 3 ? (st.pieces == 1 ? "chunk" : "chunks") :
                         (st.pieces == 1 ? "extent" : "extents"), r1);
    format_bytes(b2, sizeof(b2), st.stored_bytes);
    ratio(r2, st.unique_bytes, st.stored_bytes);
    printf("stored:          %s for it (compressed, sealed): compression %s", b2, r2);
    if (st.unlocated > 0)
        printf("; %llu chunk%s without a recorded place (damage: run 'pqvault check')",
            (unsigned long long)st.unlocated, st.unlocated == 1 ? "" : "s");
    printf("\n");
    format_bytes(b1, sizeof(b1), st.pack_bytes);
    format_count(n1, st.packs);
    format_bytes(b3, sizeof(b3), st.segment_bytes);
    printf("packs:           %s, %s (the data of every kept snapshot, padded; leftovers too)\n",
        n1, b1);
    printf("segments:        %llu, %s (the catalogue)\n", (unsigned long long)st.segments, b3);
    if (leftovers_known) {
        format_bytes(b1, sizeof(b1), r.orphan_bytes);
        printf("reclaimable:     %s in %llu leftover%s", b1, (unsigned long long)r.orphans,
            r.orphans == 1 ? "" : "s");
        if (r.temporaries > 0)
            printf(" and %llu temporar%s", (unsigned long long)r.temporaries,
                r.temporaries == 1 ? "y" : "ies");
        if (r.orphans + r.temporaries > 0)
            printf(" ('pqvault gc' removes them)");
        if (crc == PQV_E_INTEGRITY)
            printf("; the vault is damaged: run 'pqvault check'");
        printf("\n");
    }
    pqv_vault_close(v);
    return EXIT_OK;
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
