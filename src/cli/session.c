/*
 * src/cli/session.c: finding, opening, locking and unlocking the vault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static char *join(const char *a, const char *b)
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

int resolve_location(void)
{
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

int open_vault(pqv_vault **v)
{
    int rc = resolve_location();
    if (rc != EXIT_OK)
        return rc;
    pqv_error_clear();
    rc = location_vault_open(v);
    if (rc != 0) {
        *v = NULL;
        if (rc == PQV_E_NOVAULT) {
            const char *d = pqv_error_detail();
            if (location_is_s3() && strstr(d, "bucket") != NULL)
                err_msg("%s", d); /* the bucket itself is missing */
            else
                err_msg("%s: no vault at this location (create one with "
                    "'pqvault init')", g_cli.vault_dir);
            return EXIT_NOVAULT;
        }
        return lib_error(rc == PQV_E_NOTFOUND && g_cli.keyfile ? g_cli.keyfile
            : g_cli.vault_dir, rc);
    }
    return EXIT_OK;
}

int unlock_vault(pqv_vault *v)
{
    struct secret s;
    int rc = secret_alloc(&s);
    if (rc != EXIT_OK)
        return rc;
    char prompt[512];
    snprintf(prompt, sizeof prompt, "Passphrase for %s: ", g_cli.vault_dir);
    for (int attempt = 0; attempt < 3; attempt++) {
        int tty;
        rc = read_passphrase(&s, prompt, &tty);
        if (rc != EXIT_OK)
            break;
        pqv_error_clear();
        int lrc = pqv_vault_unlock(v, (const uint8_t *)s.buf, s.len);
        if (lrc == 0) {
            rc = EXIT_OK;
            break;
        }
        if (lrc == PQV_E_AUTH && tty && attempt < 2) {
            fprintf(stderr, "pqvault: wrong passphrase, try again\n");
            continue;
        }
        rc = lib_error(NULL, lrc);
        break;
    }
    secret_free(&s);
    return rc;
}

int lock_vault(pqv_vault *v)
{
    char holder[PQV_LOCK_HOLDER_MAX] = "";
    pqv_error_clear();
    int rc = pqv_vault_lock_writer(v, g_cli.wait, holder, sizeof holder);
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

int session(pqv_vault **v, int writer)
{
    int rc = open_vault(v);
    if (rc != EXIT_OK)
        return rc;
    if (writer && (rc = lock_vault(*v)) != EXIT_OK)
        goto fail;
    if ((rc = unlock_vault(*v)) != EXIT_OK)
        goto fail;
    return EXIT_OK;
fail:
    pqv_vault_close(*v);
    *v = NULL;
    return rc;
}
