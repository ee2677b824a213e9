/*
 * src/cli/session.c: finding, opening, locking and unlocking the vault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli.h"

static char *
join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

/* absolute(path): ${path}, below the working directory if relative
 * (malloc'd), or NULL. */
static char *
absolute(const char *path)
{
    char cwd[4096];

    if (path[0] == '/')
        return strdup(path);
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        return NULL;
    return join(cwd, path);
}

const char *
cli_state_dir(void)
{
    static char *dir;
    static int done;

    if (!done) {
        const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
        const char *env = getenv("PQVAULT_STATE_DIR");
        done = 1;
        /* The option and our own variable name the directory itself;
         * relative XDG values are ignored, as the XDG spec says. */
        if (g_cli.state_dir_opt != NULL)
            dir = absolute(g_cli.state_dir_opt);
        else if (env != NULL && env[0] != '\0')
            dir = absolute(env);
        else if (xdg != NULL && xdg[0] == '/')
            dir = join(xdg, "pqvault");
        else if (home != NULL && home[0] == '/')
            dir = join(home, ".local/state/pqvault");
        if (dir == NULL)
            report_cb(NULL, PQV_REPORT_WARNING, NULL, "no local state directory (set HOME or "
                "XDG_STATE_HOME): a rollback of the vault to an older copy will not be noticed");
    }
    return dir;
}

void
state_report_cb(void *ctx, int level, const char *subject, const char *message)
{
    static int said;
    const char *dir = cli_state_dir();

    /* About the state directory (its reports name it as their subject):
     * once, with the ways to choose another; anything else as usual. */
    if (subject == NULL || dir == NULL || strcmp(subject, dir) != 0) {
        report_cb(ctx, level, subject, message);
        return;
    }
    if (level < PQV_REPORT_WARNING || said)
        return;
    said = 1;
    err_msg("warning: %s (set XDG_STATE_HOME, PQVAULT_STATE_DIR or --state-dir to a "
        "directory you can write)", message != NULL ? message : "");
}

int
resolve_location(void)
{
    /* --at: the reading commands that read a state, only (a writer never
     * writes a snapshot; copy copies the whole history). */
    if (g_cli.at != NULL && g_cli.cmd != NULL && strcmp(g_cli.cmd, "list") != 0 &&
        strcmp(g_cli.cmd, "get") != 0 && strcmp(g_cli.cmd, "check") != 0 &&
        strcmp(g_cli.cmd, "stats") != 0 && strcmp(g_cli.cmd, "mount") != 0)
        return usage_error("--at is for list, get, check, stats and mount (a snapshot is read, "
            "never written; copy copies the whole history)");
    if (g_cli.vault_dir)
        return EXIT_OK;
    const char *env = getenv("PQVAULT_DIR");
    if (g_cli.vault_opt) {
        g_cli.vault_dir = strdup(g_cli.vault_opt);
    } else if (env && *env) {
        g_cli.vault_dir = strdup(env);
    } else {
        const char *xdg = getenv("XDG_DATA_HOME");
        if (xdg && *xdg == '/') {
            g_cli.vault_dir = join(xdg, "pqvault");
        } else {
            const char *home = getenv("HOME");
            if (!home || !*home) {
                err_msg("no vault location: use -v DIR or set PQVAULT_DIR "
                    "(HOME is not set)");
                return EXIT_ERR;
            }
            g_cli.vault_dir = join(home, ".local/share/pqvault");
        }
    }
    if (!g_cli.vault_dir) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    const char *kf = getenv("PQVAULT_KEYFILE");
    if (g_cli.keyfile_opt)
        g_cli.keyfile = g_cli.keyfile_opt;
    else if (kf && *kf)
        g_cli.keyfile = kf;
    else
        g_cli.keyfile = NULL;
    return EXIT_OK;
}

/* open_with(v, flags): resolve the location and open with ${flags}; exit
 * status (message printed). */
/* set_s3_location(v): a bucket's local state is kept per endpoint and URL
 * (as the library keeps a local vault's per directory): a copy in another
 * bucket is a vault of its own here. */
static int
set_s3_location(pqv_vault *v)
{
    const char *endpoint = g_cli.s3_endpoint;
    char where[8192];

    if (endpoint == NULL)
        endpoint = getenv("AWS_ENDPOINT_URL_S3");
    if (endpoint == NULL)
        endpoint = getenv("AWS_ENDPOINT_URL");
    if (snprintf(where, sizeof(where), "%s %s", endpoint != NULL ? endpoint : "aws",
            g_cli.vault_dir) >= (int)sizeof(where))
        return PQV_E_INVAL;
    return pqv_vault_set_location(v, where);
}

static int
open_with(pqv_vault **v, unsigned flags)
{
    int rc = resolve_location();
    if (rc != EXIT_OK)
        return rc;
    pqv_error_clear();
    int storage_failed;
    rc = location_vault_open(v, flags, &storage_failed);
    if (rc != 0) {
        *v = NULL;
        if (rc == PQV_E_NOVAULT && storage_failed)
            return lib_error(NULL, rc); /* the bucket itself is missing */
        struct stat st;
        if (rc == PQV_E_NOVAULT && !location_is_s3() && stat(g_cli.vault_dir, &st) == 0 &&
            !S_ISDIR(st.st_mode)) {
            /* "create one with init" would fail too: say what is there. */
            err_msg("%s: %s, not a vault directory", g_cli.vault_dir,
                S_ISREG(st.st_mode) ? "is a file" : "is not a directory");
            return EXIT_NOVAULT;
        }
        if (rc == PQV_E_NOVAULT) {
            err_msg("%s: no vault at this location (create one with "
                "'pqvault init')", g_cli.vault_dir);
            return EXIT_NOVAULT;
        }
        g_cli.keyfile_hint = rc == PQV_E_NOTFOUND;
        rc = lib_error(rc == PQV_E_NOTFOUND && g_cli.keyfile ? g_cli.keyfile
            : g_cli.vault_dir, rc);
        g_cli.keyfile_hint = 0;
        return rc;
    }
    if ((rc = pqv_vault_set_report(*v, state_report_cb, NULL)) != 0 ||
        (rc = pqv_vault_set_state_dir(*v, cli_state_dir())) != 0 ||
        (location_is_s3() && (rc = set_s3_location(*v)) != 0) ||
        (g_cli.have_kdf_limit && (rc = pqv_vault_set_kdf_limit(*v, &g_cli.kdf_limit)) != 0)) {
        rc = lib_error(NULL, rc);
        pqv_vault_close(*v);
        *v = NULL;
        return rc;
    }
    return EXIT_OK;
}

int
open_vault_flags(pqv_vault **v, unsigned flags)
{
    return open_with(v, flags);
}

int
open_vault(pqv_vault **v)
{
    return open_with(v, PQV_OPEN_KEYFILE_OPTIONAL);
}

/* limit_error(v): report that the key file asks more Argon2id work than
 * the limit allows, with the --kdf-limit that would accept it (the choice
 * to trust that key file is the user's); exit status. */
static int
limit_error(pqv_vault *v)
{
    const pqv_keyfile *kf = pqv_vault_keyfile(v);
    struct pqv_kdf_limit need = g_cli.have_kdf_limit ? g_cli.kdf_limit : pqv_kdf_limit_default;

    for (int i = 0; kf != NULL && i < PQV_KEYFILE_SLOTS; i++) {
        struct pqv_kdf_params p = pqv_keyfile_slot_params(kf, i);
        if (p.m_kib > need.m_kib)
            need.m_kib = p.m_kib;
        if (p.t_cost > need.t_cost)
            need.t_cost = p.t_cost;
    }
    err_msg("%s (if you trust this key file: --kdf-limit m=%u,t=%u)", pqv_error_detail(),
        (unsigned)need.m_kib, (unsigned)need.t_cost);
    return exit_status(PQV_E_LIMIT);
}

/* unlock_with(v, s): unlock ${v} with ${s}; the library's code.  Earlier
 * versions kept a line end at the end of $PQVAULT_PASSPHRASE as part of
 * the passphrase set with it (init, passwd, recover): a key file sealed
 * that way opens only with it, so that is tried once more when the
 * variable ended in one, with a word on how to leave it behind. */
static int
unlock_with(pqv_vault *v, struct secret *s)
{
    int lrc = pqv_vault_unlock(v, (const uint8_t *)s->buf, s->len);

    if (lrc == PQV_E_AUTH && s->from_env && s->eol_len > 0 &&
        s->len + s->eol_len < s->cap) {
        memcpy(s->buf + s->len, s->eol, s->eol_len);
        pqv_error_clear();
        lrc = pqv_vault_unlock(v, (const uint8_t *)s->buf, s->len + s->eol_len);
        OPENSSL_cleanse(s->buf + s->len, s->eol_len);
        if (lrc == 0)
            err_msg("warning: this key file's passphrase ends in the line end of "
                "PQVAULT_PASSPHRASE (earlier versions kept it); no other source can give "
                "it: set the passphrase again with 'pqvault passwd'");
    }
    return lrc;
}

int
passphrase_given(void)
{
    return g_cli.pass.kind != PASS_NONE || getenv("PQVAULT_PASSPHRASE") != NULL;
}

int
open_vault_unlock_if_given(pqv_vault **v)
{
    int status = open_vault(v);

    if (status == EXIT_OK && passphrase_given() && (status = unlock_vault(*v)) != EXIT_OK) {
        pqv_vault_close(*v);
        *v = NULL;
    }
    return status;
}

int
unlock_vault(pqv_vault *v)
{
    struct secret s;
    int rc = secret_alloc(&s);
    if (rc != EXIT_OK)
        return rc;
    char prompt[512];
    snprintf(prompt, sizeof(prompt), "Passphrase for %s: ", g_cli.vault_dir);
    for (int attempt = 0; attempt < 3; attempt++) {
        int tty;
        rc = read_passphrase(&s, prompt, &tty);
        if (rc != EXIT_OK)
            break;
        /* Refused here, before any Argon2id: no key file slot holds an
         * empty passphrase (init, passwd and recover refuse one). */
        if (s.len == 0) {
            err_msg("empty passphrase refused");
            rc = EXIT_ERR;
            if (tty && attempt < 2)
                continue;
            break;
        }
        pqv_error_clear();
        int lrc = unlock_with(v, &s);
        if (lrc == 0) {
            rc = EXIT_OK;
            break;
        }
        if (lrc == PQV_E_AUTH && tty && attempt < 2) {
            fprintf(stderr, "pqvault: wrong passphrase, try again\n");
            continue;
        }
        rc = lrc == PQV_E_LIMIT ? limit_error(v) : lib_error(NULL, lrc);
        break;
    }
    secret_free(&s);
    return rc;
}

int
lock_vault(pqv_vault *v)
{
    char holder[PQV_LOCK_HOLDER_MAX] = "";
    pqv_error_clear();
    int rc = pqv_vault_lock_writer(v, g_cli.wait, holder, sizeof(holder));
    if (rc == PQV_E_LOCKED) {
        if (holder[0] != '\0')
            err_msg("vault is locked by another writer (%s)", holder);
        else
            err_msg("vault is locked by another writer");
        return EXIT_LOCKED;
    }
    if (rc != 0)
        return lib_error(NULL, rc);
    return EXIT_OK;
}

int
session(pqv_vault **v, int writer)
{
    int rc = open_with(v, 0);
    if (rc != EXIT_OK)
        return rc;
    if (writer && (rc = lock_vault(*v)) != EXIT_OK)
        goto fail;
    if ((rc = unlock_vault(*v)) != EXIT_OK || (rc = apply_at(*v, g_cli.at)) != EXIT_OK)
        goto fail;
    return EXIT_OK;
fail:
    pqv_vault_close(*v);
    *v = NULL;
    return rc;
}
