/*
 * reserve.c: the reserve (reserve.h).  The storage keeps it (storage.h,
 * reserve op: the local directory's "reserve" file; S3 has none); here is
 * when it is made, used and reported.
 *
 *   made       at init, by a writing command that finds it missing or
 *              short (before it writes: add fills the disk only up to it),
 *              and by gc once it has freed space (with a warning if it
 *              still does not fit);
 *   used       when a commit of rm, forget or gc (its segment: txn.c) fails
 *              for lack of space: the reserve is released and the commit
 *              tried once more; add never uses it;
 *   never      read, copied, listed, or taken for a stray or a leftover.
 */
#include <string.h>

#include "util/util.h"
#include "vault/reserve.h"
#include "vault/vault_internal.h"

static int
has_reserve(const pqv_vault *v)
{
    const struct pqv_storage_ops *o = v->storage->ops;

    return o->version >= 3 && o->reserve != NULL;
}

int
reserve_ensure(pqv_vault *v, pqv_report_fn report, void *ctx, int loud)
{
    uint64_t have = 0;
    int rc;

    if (!has_reserve(v))
        return 0;
    rc = v->storage->ops->reserve(v->storage, PQV_RESERVE_STAT, 0, &have);
    if (rc == 0 && have >= VAULT_RESERVE_BYTES)
        return 0;
    if (rc == 0 || rc == PQV_E_NOTFOUND)
        rc = v->storage->ops->reserve(v->storage, PQV_RESERVE_MAKE, VAULT_RESERVE_BYTES, &have);
    if (rc == 0)
        return 1;
    if (rc == PQV_E_NOSPACE) {
        if (loud)
            vault_report(report, ctx, PQV_REPORT_WARNING, "reserve", "warning: no room for the "
                "reserve (%u MiB kept for rm and gc on a full disk): free more space (pqvault rm, "
                "forget, gc), the next writing command makes it", VAULT_RESERVE_BYTES >> 20);
    } else if (rc != PQV_E_UNSUPPORTED) {
        const struct pqv_error *e = pqv_error_last();
        vault_report(report, ctx, PQV_REPORT_WARNING, "reserve", "warning: not made (%s): "
            "rm and gc may not run on a full disk; the next writing command tries again",
            e->reason[0] != '\0' ? e->reason : pqv_strerror(rc));
    }
    pqv_error_clear();
    return 0;
}

int
reserve_short(pqv_vault *v)
{
    uint64_t have = 0;
    int rc;

    if (!has_reserve(v))
        return 0;
    rc = v->storage->ops->reserve(v->storage, PQV_RESERVE_STAT, 0, &have);
    pqv_error_clear();
    return rc == PQV_E_NOTFOUND || (rc == 0 && have < VAULT_RESERVE_BYTES);
}

int
reserve_release(pqv_vault *v)
{
    struct error_saved saved;
    int rc;

    if (!v->reserve_use || !has_reserve(v))
        return 0;
    error_save(&saved);
    rc = v->storage->ops->reserve(v->storage, PQV_RESERVE_RELEASE, 0, NULL);
    /* Removed but its directory not synced: the space is free all the
     * same (a crash that brings the reserve back costs nothing). */
    if (rc != 0 && rc != PQV_E_NOTFOUND && rc != PQV_E_INTEGRITY &&
        v->storage->ops->reserve(v->storage, PQV_RESERVE_STAT, 0, NULL) == PQV_E_NOTFOUND)
        rc = 0;
    error_restore(&saved);
    return rc == 0;
}

void
reserve_check(pqv_vault *v, pqv_report_fn report, void *ctx)
{
    uint64_t have = 0;
    int rc;

    if (!has_reserve(v))
        return;
    rc = v->storage->ops->reserve(v->storage, PQV_RESERVE_STAT, 0, &have);
    if (rc == PQV_E_INTEGRITY)
        vault_report(report, ctx, PQV_REPORT_WARNING, "reserve", "%s (no room is kept for rm "
            "and gc on a full disk: remove it, the next writing command makes the reserve)",
            pqv_error_last()->reason);
    else if (rc == PQV_E_NOTFOUND || (rc == 0 && have < VAULT_RESERVE_BYTES))
        vault_report(report, ctx, PQV_REPORT_INFO, "reserve", "%s (the next writing command "
            "makes it, if space allows)", rc == 0 ? "short" : "missing");
    pqv_error_clear();
}
