/*
 * src/cli/cmd_vault.c: init, passwd, recover, info.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "pqvault/aead.h"
#include "pqvault/frodo.h"

enum { OPT_KEM = 1, OPT_AEAD, OPT_KDF, OPT_SLOT, OPT_CLEAR, OPT_NEWFILE,
    OPT_NEWFD, OPT_RECFILE };

static int no_operands(const char *val)
{
    return usage_error("unexpected operand '%s'", val);
}

static int kdf_arg(const char *val, struct pqv_kdf_params *k)
{
    if (parse_kdf(val, k) != 0)
        return usage_error("--kdf: invalid '%s' (expected t=N,m=KIB,p=N with "
            "1<=t<=64, 1<=p<=64, 8*p<=m<=4194304)", val);
    return EXIT_OK;
}

/* ---- init ---- */

/* make_parents(path): create the missing parent directories of ${path}
 * (mode 0700), like mkdir -p, so that the default location
 * ~/.local/share/pqvault works on a fresh account. */
static int make_parents(const char *path)
{
    char *p = strdup(path);
    if (!p) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    char *slash = strrchr(p, '/');
    if (slash && slash != p) {
        *slash = '\0';
        for (char *q = p + 1; ; q++) {
            if (*q == '/' || *q == '\0') {
                char c = *q;
                *q = '\0';
                if (mkdir(p, 0700) != 0 && errno != EEXIST) {
                    err_msg("%s: %s", p, strerror(errno));
                    free(p);
                    return EXIT_ERR;
                }
                *q = c;
                if (c == '\0')
                    break;
            }
        }
    }
    free(p);
    return EXIT_OK;
}

int cmd_init(struct args *a)
{
    static const struct optdef defs[] = {
        { "kem", 0, 1, OPT_KEM }, { "aead", 0, 1, OPT_AEAD },
        { "kdf", 0, 1, OPT_KDF }, { NULL, 0, 0, 0 }
    };
    const char *val;
    struct pqv_kdf_params kdf;
    int have_kdf = 0, id, rc;
    struct pqv_init_options opt = { NULL, 0, NULL };
    while ((id = next_arg(a, defs, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: return EXIT_USAGE;
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
        }
    }
    if (have_kdf)
        opt.kdf = &kdf;
    if ((rc = resolve_location()) != EXIT_OK)
        return rc;
    if (!location_is_s3() && (rc = make_parents(g_cli.vault_dir)) != EXIT_OK)
        return rc;

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
    OPENSSL_cleanse(recovery, sizeof recovery);
    return EXIT_OK;
}

/* ---- passwd ---- */

int cmd_passwd(struct args *a)
{
    static const struct optdef defs[] = {
        { "slot", 0, 1, OPT_SLOT }, { "clear", 0, 0, OPT_CLEAR },
        { "kdf", 0, 1, OPT_KDF }, { "new-passphrase-file", 0, 1, OPT_NEWFILE },
        { "new-passphrase-fd", 0, 1, OPT_NEWFD }, { NULL, 0, 0, 0 }
    };
    const char *val;
    struct pqv_kdf_params kdf;
    struct pass_source newsrc = { PASS_NONE, NULL, -1 };
    int have_kdf = 0, slot = -1, clear = 0, id, rc;
    unsigned long long u;
    while ((id = next_arg(a, defs, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: return EXIT_USAGE;
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
    if (clear && (have_kdf || newsrc.kind != PASS_NONE))
        return usage_error("--clear takes no --kdf or new passphrase");

    pqv_vault *v;
    if ((rc = session(&v, 1)) != EXIT_OK)
        return rc;
    if (slot < 0)
        slot = pqv_vault_slot(v) >= 0 ? pqv_vault_slot(v) : 0;
    char what[16];
    snprintf(what, sizeof what, "slot %d", slot);
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

int cmd_recover(struct args *a)
{
    static const struct optdef defs[] = {
        { "recovery-file", 0, 1, OPT_RECFILE }, { "kdf", 0, 1, OPT_KDF },
        { NULL, 0, 0, 0 }
    };
    const char *val, *recfile = NULL;
    struct pqv_kdf_params kdf;
    int have_kdf = 0, id, rc;
    while ((id = next_arg(a, defs, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: return EXIT_USAGE;
        case ARG_OPERAND: return no_operands(val);
        case OPT_RECFILE: recfile = val; break;
        case OPT_KDF:
            if ((rc = kdf_arg(val, &kdf)) != EXIT_OK)
                return rc;
            have_kdf = 1;
            break;
        }
    }
    if ((rc = resolve_location()) != EXIT_OK)
        return rc;
    /* Hold the writer lock if the vault can be opened at all (the key file
     * may be missing: that is what recover is for). */
    pqv_vault *v = NULL;
    if (location_vault_open(&v) == 0) {
        if ((rc = lock_vault(v)) != EXIT_OK) {
            pqv_vault_close(v);
            return rc;
        }
    } else {
        v = NULL;
    }
    struct secret code, s;
    if ((rc = secret_alloc(&code)) != EXIT_OK)
        goto out0;
    if ((rc = secret_alloc(&s)) != EXIT_OK)
        goto out1;
    if ((rc = read_recovery_code(&code, recfile)) != EXIT_OK)
        goto out2;
    if ((rc = read_new_passphrase(&s, &g_cli.pass, "PQVAULT_PASSPHRASE")) != EXIT_OK)
        goto out2;
    pqv_error_clear();
    int lrc = location_vault_recover(code.buf, (const uint8_t *)s.buf, s.len,
        have_kdf ? &kdf : NULL);
    if (lrc == PQV_E_AUTH) {
        const char *d = pqv_error_detail();
        err_msg("invalid recovery code%s%s", d && *d ? ": " : "", d ? d : "");
        rc = EXIT_AUTH;
    } else if (lrc != 0) {
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

int cmd_info(struct args *a)
{
    const char *val;
    int id, rc;
    while ((id = next_arg(a, NULL, &val)) != ARG_END) {
        if (id == ARG_ERROR)
            return EXIT_USAGE;
        return no_operands(val);
    }
    pqv_vault *v;
    if ((rc = open_vault(&v)) != EXIT_OK)
        return rc;
    struct pqv_info in;
    memset(&in, 0, sizeof in);
    pqv_error_clear();
    int lrc = pqv_vault_info(v, &in);
    if (lrc != 0) {
        rc = lib_error(g_cli.vault_dir, lrc);
        pqv_vault_close(v);
        return rc;
    }
    char created[64], rb[32], ob[32];
    format_local_time(created, sizeof created, in.created, "%Y-%m-%d %H:%M:%S %z");
    format_bytes(rb, sizeof rb, in.record_bytes);
    format_bytes(ob, sizeof ob, in.object_bytes);
    printf("vault:           %s\n", g_cli.vault_dir);
    if (g_cli.keyfile)
        printf("key file:        %s\n", g_cli.keyfile);
    else
        printf("key file:        %s/keyfile\n", g_cli.vault_dir);
    printf("format version:  %d\n", in.format_version);
    printf("vault id:        %s\n", in.vault_id);
    printf("KEM:             %s\n", in.kem);
    printf("default AEAD:    %s\n", in.aead);
    printf("fingerprint:     %s\n", in.fingerprint);
    printf("created:         %s\n", created);
    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++)
        printf("slot %d:          Argon2id t=%u, m=%u KiB, p=%u\n", i,
            (unsigned)in.slot_params[i].t_cost, (unsigned)in.slot_params[i].m_kib,
            (unsigned)in.slot_params[i].lanes);
    printf("records:         %llu (%s)\n", (unsigned long long)in.records, rb);
    printf("objects:         %llu (%s)\n", (unsigned long long)in.objects, ob);
    printf("temporaries:     %llu\n", (unsigned long long)in.temporaries);
    pqv_vault_close(v);
    return EXIT_OK;
}
