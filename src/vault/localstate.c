/*
 * localstate.c: what this machine last saw of a vault (docs/FORMAT.md
 * section 15), so that a storage which serves an older epoch (a rollback)
 * or another history (a fork) is noticed: no peer of pqvault detects a
 * rollback of the whole vault without state kept outside it.
 *
 * The file is small, MAC'd with a key from the seed, written atomically.
 * Without a state directory (a library user who set none) nothing is kept.
 * It is a defence, not a precondition (issue 17: a user without a home
 * could run nothing): when it cannot be read or written, that is said once
 * and the command goes on without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "crypto/kdf.h"
#include "util/durable.h"
#include "util/fsutil.h"
#include "util/util.h"
#include "vault/config.h"
#include "vault/localstate.h"
#include "vault/segment.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

#define STATE_MAX 1024

/* The file's content.  Version 1 of the file (pqvault 0.2.0 and before)
 * has no format line: it was only ever written for format-2 vaults. */
struct local {
    int version;                 /* of the file: 1 or 2 */
    int format;                  /* of the vault as last seen (2 for version 1) */
    uint64_t epoch;
    uint8_t chain[32];
};

/* local_format(v): the format a state recorded now says the vault has:
 * the catalogue's (segments are format 2 also while an upgrade's config
 * still says 1). */
static int
local_format(const pqv_vault *v)
{
    return v->config.version > 2 ? v->config.version : 2;
}

/* state_file_named(v, out, outlen, legacy): the file of this vault at its
 * location in the state directory: VAULTID-LOC, LOC 16 bytes of a hash of
 * where it is (a copy of the vault elsewhere is a vault of its own here,
 * while an older state served at the same place is still a rollback); or
 * with ${legacy}, or without a location, VAULTID alone (pqvault 0.3 and
 * before kept one state per vault id). */
static int
state_file_named(pqv_vault *v, char *out, size_t outlen, int legacy)
{
    static const char tag[] = "pqvault local state location";
    char id[2 * VAULT_ID_BYTES + 1], loc[33];
    uint8_t h[32];
    int n;

    util_hex_encode(id, v->config.vault_id, VAULT_ID_BYTES);
    if (legacy || v->location == NULL) {
        n = snprintf(out, outlen, "%s/%s", v->state_dir, id);
    } else {
        if (kdf_hmac_sha256(h, (const uint8_t *)tag, sizeof(tag) - 1,
                (const uint8_t *)v->location, strlen(v->location)) != 0)
            return PQV_E_CRYPTO;
        util_hex_encode(loc, h, 16);
        n = snprintf(out, outlen, "%s/%s-%s", v->state_dir, id, loc);
    }
    if (n < 0 || (size_t)n >= outlen)
        return error_set(PQV_E_INVAL, v->state_dir, "path too long");
    return 0;
}

/* state_file(v, out): the file of this vault in the state directory. */
static int
state_file(pqv_vault *v, char *out, size_t outlen)
{
    return state_file_named(v, out, outlen, 0);
}

/* unlink_state(v, path): the state file ${path} and its lock file gone
 * (best effort), durably. */
static void
unlink_state(pqv_vault *v, const char *path)
{
    char lockpath[4096 + 8];

    snprintf(lockpath, sizeof(lockpath), "%s.lock", path);
    int gone = unlink(path) == 0;
    gone |= unlink(lockpath) == 0;
    if (gone)
        (void)fsutil_fsync_dir(v->state_dir);
}

/* drop_legacy(v): once this location has a state of its own, the one kept
 * per vault id before (which this location took over) goes: a copy
 * elsewhere must not take the original's for its own. */
static void
drop_legacy(pqv_vault *v)
{
    char path[4096];

    if (v->location != NULL && state_file_named(v, path, sizeof(path), 1) == 0)
        unlink_state(v, path);
}

/* unavailable(v): the local state could not be read or written (the error
 * just set says why): said once through the vault's report callback, not
 * tried again by this vault structure; 0, or PQV_E_NOMEM as it was. */
static int
unavailable(pqv_vault *v, int rc)
{
    const struct pqv_error *e = pqv_error_last();

    if (rc == PQV_E_NOMEM)
        return rc;
    if (!v->state_failed) {
        v->state_failed = 1;
        /* The subject is the state directory (so a caller can tell this
         * report from others); the message names what failed. */
        if (e->code == rc && e->subject[0] != '\0')
            vault_report(v->report, v->report_ctx, PQV_REPORT_WARNING, v->state_dir,
                "cannot keep the local state (%s: %s): a rollback of the vault to an older "
                "copy is not detected without it", e->subject, e->reason);
        else
            vault_report(v->report, v->report_ctx, PQV_REPORT_WARNING, v->state_dir,
                "cannot keep the local state in %s (%s): a rollback of the vault to an older "
                "copy is not detected without it", v->state_dir,
                e->code == rc && e->reason[0] != '\0' ? e->reason : pqv_strerror(rc));
    }
    pqv_error_clear();
    return 0;
}

/* render(v, l, out, len): the file's text, MAC'd. */
static int
render(pqv_vault *v, const struct local *l, char out[STATE_MAX], size_t *len)
{
    char id[2 * VAULT_ID_BYTES + 1], chain[65], mac[65];
    uint8_t m[32];
    int n, rc;

    util_hex_encode(id, v->config.vault_id, VAULT_ID_BYTES);
    util_hex_encode(chain, l->chain, 32);
    if (l->version == 1)
        n = snprintf(out, STATE_MAX, "pqvault-state 1\nvault %s\nepoch %llu\nchain %s\n", id,
            (unsigned long long)l->epoch, chain);
    else
        n = snprintf(out, STATE_MAX, "pqvault-state 2\nvault %s\nformat %d\nepoch %llu\n"
            "chain %s\n", id, l->format, (unsigned long long)l->epoch, chain);
    if ((rc = kdf_hmac_sha256(m, v->state_key, 32, (const uint8_t *)out, (size_t)n)) != 0)
        return rc;
    util_hex_encode(mac, m, 32);
    n += snprintf(out + n, STATE_MAX - (size_t)n, "mac %s\n", mac);
    *len = (size_t)n;
    return 0;
}

/* parse(v, text, len, l): strictly, and the MAC verified. */
static int
parse(pqv_vault *v, const char *text, size_t len, struct local *l)
{
    char again[STATE_MAX], id[2 * VAULT_ID_BYTES + 1], chain[65], copy[STATE_MAX], format[2];
    unsigned long long epoch;
    size_t n;

    util_hex_encode(id, v->config.vault_id, VAULT_ID_BYTES);
    if (len >= STATE_MAX || memchr(text, '\0', len) != NULL)
        return PQV_E_INTEGRITY;
    /* sscanf needs a terminated string: the file's bytes are not. */
    memcpy(copy, text, len);
    copy[len] = '\0';
    if (strncmp(copy, "pqvault-state 1\n", 16) == 0) {
        l->version = 1;
        l->format = 2;
        if (sscanf(copy, "pqvault-state 1\nvault %*32[0-9a-f]\nepoch %llu\nchain %64[0-9a-f]\n",
                &epoch, chain) != 2)
            return PQV_E_INTEGRITY;
    } else {
        l->version = 2;
        if (sscanf(copy, "pqvault-state 2\nvault %*32[0-9a-f]\nformat %1[2-9]\nepoch %llu\n"
                "chain %64[0-9a-f]\n", format, &epoch, chain) != 3)
            return PQV_E_INTEGRITY;
        l->format = format[0] - '0';
    }
    if (util_hex_decode(l->chain, 32, chain) != 0)
        return PQV_E_INTEGRITY;
    l->epoch = epoch;
    /* Rendering again must give exactly these bytes, MAC included. */
    if (render(v, l, again, &n) != 0 || n != len || !util_ct_equal(again, text, n))
        return PQV_E_INTEGRITY;
    return 0;
}

/* read_local(v, path, l): the state file at ${path}: 0, PQV_E_NOTFOUND, or
 * PQV_E_INTEGRITY if damaged. */
static int
read_local(pqv_vault *v, const char *path, struct local *l)
{
    uint8_t *text = NULL;
    size_t len;
    int rc;

    if ((rc = fsutil_read_file(AT_FDCWD, path, &text, &len, STATE_MAX)) != 0)
        return rc;
    rc = parse(v, (const char *)text, len, l);
    free(text);
    return rc;
}

/* record(v, epoch, chain, replace): localstate_record, its failures
 * returned. */
static int
record(pqv_vault *v, uint64_t epoch, const uint8_t chain[32], int replace)
{
    char path[4096], lockpath[4096 + 8], text[STATE_MAX];
    struct local l, now;
    size_t len;
    int rc, lockfd;

    l.version = 2;
    l.format = local_format(v);
    l.epoch = epoch;
    memcpy(l.chain, chain, 32);
    if ((rc = render(v, &l, text, &len)) != 0 || (rc = state_file(v, path, sizeof(path))) != 0)
        return rc;
    if ((rc = fsutil_mkdirs(v->state_dir, 0700)) != 0)
        return rc;
    /* Two commands on this machine may record at once (a reader that saw
     * epoch 6 and a writer that committed 7): under a lock, the newer
     * stays.  The lock is advisory, in a file of its own beside the state
     * (the state file itself is replaced by rename). */
    snprintf(lockpath, sizeof(lockpath), "%s.lock", path);
    if ((lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
        return error_set(PQV_E_IO, lockpath, "open: %s", strerror(errno));
    while (flock(lockfd, LOCK_EX) != 0)
        if (errno != EINTR) {
            rc = error_set(PQV_E_IO, lockpath, "flock: %s", strerror(errno));
            close(lockfd);
            return rc;
        }
    if (!replace && read_local(v, path, &now) == 0 && now.epoch >= epoch) {
        close(lockfd); /* as new or newer already */
        return 0;
    }
    if ((rc = durable_write_file(AT_FDCWD, path, NULL, text, len, 0600, DURABLE_REPLACE)) == 0)
        rc = fsutil_fsync_dir(v->state_dir);
    close(lockfd);
    if (rc == 0)
        drop_legacy(v);
    return rc;
}

int
localstate_record(pqv_vault *v, uint64_t epoch, const uint8_t chain[32], int replace)
{
    int rc;

    if (v->state_dir == NULL || (v->state_failed && !replace))
        return 0;
    /* accept (${replace}) is the owner asking for exactly this: its
     * failure is the command's. */
    if ((rc = record(v, epoch, chain, replace)) != 0 && !replace)
        rc = unavailable(v, rc);
    return rc;
}

void
localstate_forget(pqv_vault *v)
{
    char path[4096];

    if (v->state_dir == NULL || state_file(v, path, sizeof(path)) != 0)
        return;
    unlink_state(v, path);
    pqv_error_clear();
}

/* chain_at(st, epoch, out): chain(epoch) as the state knows it (a segment
 * of the chain, or the base's history); 0 if it does not. */
static int
chain_at(const struct state *st, uint64_t epoch, uint8_t out[32])
{
    const struct segment *s = state_segment(st, epoch);

    if (s != NULL) {
        memcpy(out, s->chain, 32);
        return 1;
    }
    if (st->nsegs > 0 && epoch + 1 == st->segs[0].epoch) {
        memcpy(out, st->segs[0].prev_chain, 32);
        return 1;
    }
    for (size_t i = 0; st->nsegs > 0 && i < st->segs[0].nhistory; i++)
        if (st->segs[0].history[i].epoch == epoch) {
            memcpy(out, st->segs[0].history[i].chain, 32);
            return 1;
        }
    return 0;
}

int
localstate_load(pqv_vault *v, struct localstate *seen)
{
    char path[4096];
    struct local l;
    int rc;

    memset(seen, 0, sizeof(*seen));
    /* Read whatever the config says: a config of format 1 for a vault
     * seen here as format 2 is a downgrade (state_v1_check). */
    if (v->state_dir == NULL || v->state_failed)
        return 0;
    if ((rc = state_file(v, path, sizeof(path))) != 0)
        return rc;
    rc = read_local(v, path, &l);
    if (rc == PQV_E_NOTFOUND && v->location != NULL) {
        /* None at this location yet: the state kept per vault id by an
         * older pqvault, taken over (drop_legacy once recorded here). */
        if ((rc = state_file_named(v, path, sizeof(path), 1)) != 0)
            return rc;
        rc = read_local(v, path, &l);
    }
    if (rc == PQV_E_NOTFOUND)
        return 0;
    if (rc == PQV_E_INTEGRITY)
        return error_set(PQV_E_INTEGRITY, path, "local state is damaged (remove it to accept the "
            "vault as it is)");
    if (rc != 0)
        return unavailable(v, rc); /* unreadable: as if none, said */
    seen->known = 1;
    seen->format = l.format;
    seen->epoch = l.epoch;
    memcpy(seen->chain, l.chain, 32);
    return 0;
}

int
localstate_check(pqv_vault *v, const struct localstate *seen, const struct state *st,
    pqv_report_fn report, void *ctx)
{
    uint8_t known[32];

    if (v->state_dir == NULL || st->format < 2 || (v->state_failed && !seen->known))
        return 0;
    if (!seen->known) {
        int rc = localstate_record(v, st->epoch, st->chain, 0);
        /* (Without a state kept, the warning that says so is enough.) */
        if (rc == 0 && !v->state_failed)
            vault_report(report, ctx, PQV_REPORT_WARNING, NULL,
                "first use of this vault on this machine: accepting its epoch %llu as current",
                (unsigned long long)st->epoch);
        return rc;
    }
    if (seen->format > v->config.version)
        return error_set(PQV_E_INTEGRITY, "config", "downgrade: the config says format %d, but "
            "this vault was seen here as format %d at epoch %llu (a config from before its "
            "upgrade has been put back; if you put the vault back yourself, accept it with "
            "pqvault accept)", v->config.version, seen->format, (unsigned long long)seen->epoch);
    if (st->epoch < seen->epoch)
        return error_set(PQV_E_INTEGRITY, NULL, "rollback: the vault shows epoch %llu, but epoch "
            "%llu was seen here before (an older copy of the vault is being served; if you put "
            "it back yourself, accept it as current with pqvault accept)",
            (unsigned long long)st->epoch, (unsigned long long)seen->epoch);
    if (!chain_at(st, seen->epoch, known))
        return error_set(PQV_E_INTEGRITY, NULL, "fork: epoch %llu, seen here before, is not in "
            "the vault's history (if you put this vault back yourself, accept it with pqvault "
            "accept)", (unsigned long long)seen->epoch);
    if (!util_ct_equal(known, seen->chain, 32))
        return error_set(PQV_E_INTEGRITY, NULL, "fork: the vault's epoch %llu is not the one seen "
            "here before (another history of the vault is being served; if you put it back "
            "yourself, accept it with pqvault accept)",
            (unsigned long long)seen->epoch);
    if (st->epoch > seen->epoch || seen->format < local_format(v))
        return localstate_record(v, st->epoch, st->chain, 0);
    return 0;
}

int
pqv_vault_set_location(pqv_vault *v, const char *location)
{
    char *copy = NULL;

    if (v == NULL || location == NULL || *location == '\0')
        return PQV_E_INVAL;
    if ((copy = strdup(location)) == NULL)
        return PQV_E_NOMEM;
    free(v->location);
    v->location = copy;
    return 0;
}

int
pqv_vault_set_state_dir(pqv_vault *v, const char *dir)
{
    char *copy = NULL;

    if (v == NULL)
        return PQV_E_INVAL;
    if (dir != NULL) {
        /* A relative directory would move with the working directory. */
        if (dir[0] != '/')
            return error_set(PQV_E_INVAL, dir, "the local state directory must be absolute");
        if ((copy = strdup(dir)) == NULL)
            return PQV_E_NOMEM;
    }
    free(v->state_dir);
    v->state_dir = copy;
    return 0;
}

/* accept_v1(v, path, report, ctx): a vault whose config says format 1,
 * taken as it is: a format-1 vault (no segment) is forgotten here (format 1
 * keeps no local state), a half-finished upgrade remembered at its epoch 1.
 * Later segments beside a format-1 config cannot be taken as anything. */
static int
accept_v1(pqv_vault *v, const char *path, pqv_report_fn report, void *report_ctx)
{
    struct localstate seen;
    uint64_t newest;
    uint8_t chain[32];
    int rc;

    if ((rc = vault_reload_config(v)) < 0)
        return rc;
    if (rc == 1)
        return pqv_vault_accept(v, report, report_ctx); /* upgraded meanwhile */
    if ((rc = localstate_load(v, &seen)) != 0 || (rc = state_v1_segments(v, &newest, chain)) != 0)
        return rc;
    if (newest > 1)
        return error_set(PQV_E_INTEGRITY, CONFIG_NAME, "cannot accept a config of format 1 "
            "beside format-2 segments up to epoch %llu (put back the vault's own config, or "
            "remove its segments to take it as the format-1 vault it says it is)",
            (unsigned long long)newest);
    if (newest == 1) {
        vault_report(report, report_ctx, PQV_REPORT_INFO, NULL,
            "accepted epoch 1 as current (a half-finished upgrade: the next writer finishes it)");
        return localstate_record(v, 1, chain, 1);
    }
    if (!seen.known) {
        vault_report(report, report_ctx, PQV_REPORT_INFO, NULL,
            "a format-1 vault: nothing of it is remembered here");
        return 0;
    }
    if (unlink(path) != 0 && errno != ENOENT)
        return error_set(PQV_E_IO, path, "unlink: %s", strerror(errno));
    if ((rc = fsutil_fsync_dir(v->state_dir)) != 0)
        return rc;
    vault_report(report, report_ctx, PQV_REPORT_INFO, NULL,
        "accepted the format-1 vault as it is (epoch %llu of format %d was known here, and is "
        "forgotten; upgrade it to have rollbacks detected again)",
        (unsigned long long)seen.epoch, seen.format);
    return 0;
}

int
pqv_vault_accept(pqv_vault *v, pqv_report_fn report, void *report_ctx)
{
    struct state st;
    char path[4096];
    uint8_t *text = NULL;
    struct local l;
    size_t len;
    int rc, known = 0;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (v->state_dir == NULL)
        return error_set(PQV_E_INVAL, NULL, "no local state directory is set");
    if ((rc = state_file(v, path, sizeof(path))) != 0)
        return rc;
    if (v->config.version < 2)
        return accept_v1(v, path, report, report_ctx);
    /* The vault as it is must verify (chain, key file): only the local
     * memory of it is replaced. */
    if ((rc = state_open(v, &st, NULL)) != 0)
        return rc;
    if (fsutil_read_file(AT_FDCWD, path, &text, &len, STATE_MAX) == 0) {
        known = parse(v, (const char *)text, len, &l) == 0;
        free(text);
    }
    if (known && l.epoch == st.epoch && util_ct_equal(l.chain, st.chain, 32))
        vault_report(report, report_ctx, PQV_REPORT_INFO, NULL,
            "epoch %llu is already the one known here", (unsigned long long)st.epoch);
    else if (known)
        vault_report(report, report_ctx, PQV_REPORT_INFO, NULL,
            "accepted epoch %llu as current (epoch %llu was known here)",
            (unsigned long long)st.epoch, (unsigned long long)l.epoch);
    else
        vault_report(report, report_ctx, PQV_REPORT_INFO, NULL,
            "accepted epoch %llu as current", (unsigned long long)st.epoch);
    rc = localstate_record(v, st.epoch, st.chain, 1);
    state_free(&st);
    return rc;
}
