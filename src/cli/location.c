/*
 * src/cli/location.c: where the vault lives: a local directory (the
 * library opens it) or an s3:// URL, for which the CLI opens the storages
 * itself (pqv_storage_s3_open, and a local one for --keyfile) and hands
 * them to the *_storage variants of the vault calls.  The storages stay
 * open until location_close() at exit, after every pqv_vault_close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static struct {
    int open;
    pqv_storage *storage;      /* the bucket */
    pqv_storage *key_storage;  /* --keyfile's directory, or NULL */
    char *key_name;            /* --keyfile's base name, or NULL */
} loc;

int
location_is_s3(void)
{
    return g_cli.vault_dir != NULL && pqv_s3_is_url(g_cli.vault_dir);
}

/* s3_lease_seconds(): $PQVAULT_S3_LEASE_SECONDS (for tests: a short lease
 * to see one expire), else 0 (the default). */
static unsigned
s3_lease_seconds(void)
{
    const char *v = getenv("PQVAULT_S3_LEASE_SECONDS");
    unsigned long long n;
    if (v == NULL || *v == '\0' || parse_uint(v, PQV_S3_LEASE_MAX, &n) != 0 ||
        n < PQV_S3_LEASE_MIN)
        return 0;
    return (unsigned)n;
}

/* open_storage_for_location(create): open the bucket (and the directory
 * of --keyfile) once.  Returns a library code with the detail set. */
static int
open_storage_for_location(int create)
{
    struct pqv_s3_config cfg;
    int rc;

    if (loc.open)
        return 0;
    if ((rc = pqv_s3_config_from_env(&cfg, g_cli.s3_endpoint, g_cli.s3_ca_file)) != 0) {
        pqv_s3_config_clear(&cfg);
        return rc;
    }
    cfg.lease_seconds = s3_lease_seconds();
    rc = pqv_storage_s3_open(&loc.storage, g_cli.vault_dir, &cfg, create);
    pqv_s3_config_clear(&cfg);
    if (rc != 0) {
        loc.storage = NULL;
        return rc;
    }
    if (g_cli.keyfile != NULL) {
        const char *slash = strrchr(g_cli.keyfile, '/');
        char *dir = slash == NULL ? strdup(".")
            : slash == g_cli.keyfile ? strdup("/")
            : strndup(g_cli.keyfile, (size_t)(slash - g_cli.keyfile));
        const char *base = slash == NULL ? g_cli.keyfile : slash + 1;
        if (dir == NULL || *base == '\0' || (loc.key_name = strdup(base)) == NULL) {
            free(dir);
            location_close();
            return *base == '\0' ? PQV_E_INVAL : PQV_E_NOMEM;
        }
        rc = pqv_storage_local_open(&loc.key_storage, dir, 0);
        free(dir);
        if (rc != 0) {
            loc.key_storage = NULL;
            location_close();
            return rc;
        }
    }
    loc.open = 1;
    return 0;
}

int
location_vault_open(pqv_vault **v, unsigned flags, int *storage_failed)
{
    int rc;

    *storage_failed = 0;
    if (!location_is_s3())
        return pqv_vault_open_flags(v, g_cli.vault_dir, g_cli.keyfile, flags);
    if ((rc = open_storage_for_location(0)) != 0) {
        *storage_failed = 1; /* the bucket itself, not the vault in it */
        return rc;
    }
    return pqv_vault_open_storage_flags(v, loc.storage, loc.key_storage, loc.key_name, flags);
}

int
location_vault_create(const uint8_t *pass, size_t passlen,
    const struct pqv_init_options *opt, char recovery[PQV_RECOVERY_CHARS],
    char fingerprint[PQV_FINGERPRINT_CHARS])
{
    int rc;

    if (!location_is_s3())
        return pqv_vault_create(g_cli.vault_dir, g_cli.keyfile, pass, passlen, opt,
            recovery, fingerprint);
    if ((rc = open_storage_for_location(1)) != 0)
        return rc;
    return pqv_vault_create_storage(loc.storage, loc.key_storage, loc.key_name, pass,
        passlen, opt, recovery, fingerprint);
}

void
location_close(void)
{
    if (loc.key_storage != NULL)
        loc.key_storage->ops->close(loc.key_storage);
    if (loc.storage != NULL)
        loc.storage->ops->close(loc.storage);
    free(loc.key_name);
    memset(&loc, 0, sizeof loc);
}

int
location_open_other(const char *where, pqv_storage **out)
{
    struct pqv_s3_config cfg;
    int rc;

    *out = NULL;
    if (!pqv_s3_is_url(where))
        return pqv_storage_local_open(out, where, 1);
    if ((rc = pqv_s3_config_from_env(&cfg, g_cli.s3_endpoint, g_cli.s3_ca_file)) == 0)
        rc = pqv_storage_s3_open(out, where, &cfg, 1);
    pqv_s3_config_clear(&cfg);
    if (rc != 0)
        *out = NULL;
    return rc;
}
