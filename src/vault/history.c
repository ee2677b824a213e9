/*
 * history.c: the public side of history (include/pqvault/vault.h,
 * "History"): the kept snapshots, naming one, reading commands at one,
 * forget and its policy (restic's semantics), pins, the versions of a name
 * and the differences between two states.  The chain's side is
 * snapshots.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"
#include "vault/entry.h"
#include "vault/names.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

void
pqv_vault_set_at(pqv_vault *v, uint64_t epoch)
{
    if (v != NULL)
        v->at_epoch = epoch;
}

/* current(v, st, kept): the newest state (whatever --at says) and its kept
 * snapshots. */
static int
current(pqv_vault *v, struct state *st, struct snapshots *kept)
{
    uint64_t at = v->at_epoch;
    int rc;

    memset(kept, 0, sizeof(*kept));
    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (v->config.version < 3)
        return error_set(PQV_E_UNSUPPORTED, NULL, "history needs a vault of format 3 (run "
            "pqvault upgrade; it keeps what it holds)");
    v->at_epoch = 0;
    rc = state_current(v, st, NULL);
    v->at_epoch = at;
    if (rc != 0)
        return rc;
    if ((rc = snapshots_load(st, kept)) != 0)
        state_free(st);
    return rc;
}

static int
dupstr(char **out, const char *s)
{
    *out = NULL;
    if (s == NULL)
        return 0;
    return (*out = strdup(s)) == NULL ? PQV_E_NOMEM : 0;
}

/* public_of(sn, out): a snapshot in its public form. */
static int
public_of(const struct snapshot *sn, struct pqv_snapshot *out)
{
    memset(out, 0, sizeof(*out));
    out->epoch = sn->epoch;
    out->time = sn->time;
    out->pinned = (sn->flags & SNAP_PINNED) != 0;
    out->added = sn->added;
    out->changed = sn->changed;
    out->removed = sn->removed;
    out->bytes_new = sn->bytes_new;
    if (dupstr(&out->host, sn->host) != 0 || dupstr(&out->user, sn->user) != 0 ||
        dupstr(&out->command, sn->command) != 0)
        return PQV_E_NOMEM;
    if (sn->noperands > 0 && (out->operands = calloc(sn->noperands, sizeof(char *))) == NULL)
        return PQV_E_NOMEM;
    for (; out->noperands < sn->noperands; out->noperands++)
        if (dupstr(&out->operands[out->noperands], sn->operands[out->noperands]) != 0)
            return PQV_E_NOMEM;
    return 0;
}

static void
public_clear(struct pqv_snapshot *s)
{
    free(s->host);
    free(s->user);
    free(s->command);
    for (size_t k = 0; k < s->noperands; k++)
        free(s->operands[k]);
    free(s->operands);
    memset(s, 0, sizeof(*s));
}

void
pqv_snapshots_free(struct pqv_snapshot *s, size_t n)
{
    for (size_t i = 0; s != NULL && i < n; i++)
        public_clear(&s[i]);
    free(s);
}

int
pqv_vault_snapshots(pqv_vault *v, struct pqv_snapshot **out, size_t *n)
{
    struct snapshots kept;
    struct state st;
    int rc;

    if (v == NULL || out == NULL || n == NULL)
        return PQV_E_INVAL;
    *out = NULL;
    *n = 0;
    if ((rc = current(v, &st, &kept)) != 0)
        return rc;
    if ((*out = calloc(kept.n + 1, sizeof(**out))) == NULL)
        rc = PQV_E_NOMEM;
    for (size_t i = 0; rc == 0 && i < kept.n; i++, (*n)++)
        rc = public_of(&kept.s[i], &(*out)[i]);
    if (rc != 0) {
        pqv_snapshots_free(*out, kept.n + 1);
        *out = NULL;
        *n = 0;
    }
    snapshots_free(&kept);
    state_free(&st);
    return rc;
}

int
pqv_vault_resolve_snapshot(pqv_vault *v, const char *spec, uint64_t *epoch)
{
    struct snapshots kept;
    struct state st;
    int rc;

    if (v == NULL || spec == NULL || epoch == NULL)
        return PQV_E_INVAL;
    if ((rc = current(v, &st, &kept)) != 0)
        return rc;
    rc = snapshots_resolve(&kept, spec, epoch);
    snapshots_free(&kept);
    state_free(&st);
    return rc;
}

/* ---- forget ---- */

/* bucket(t, unit): the calendar bucket of ${t} (local time): the hour,
 * day, ISO week, month or year it falls in, as a number that orders them. */
enum { B_HOUR, B_DAY, B_WEEK, B_MONTH, B_YEAR, B_KINDS };
static long long
bucket(int64_t t, int unit)
{
    time_t tt = (time_t)t;
    struct tm tm;
    char week[16];

    localtime_r(&tt, &tm);
    switch (unit) {
    case B_HOUR: return ((long long)(tm.tm_year * 1000 + tm.tm_yday)) * 24 + tm.tm_hour;
    case B_DAY: return (long long)tm.tm_year * 1000 + tm.tm_yday;
    case B_WEEK:
        strftime(week, sizeof(week), "%G%V", &tm);
        return atoll(week);
    case B_MONTH: return (long long)tm.tm_year * 12 + tm.tm_mon;
    default: return tm.tm_year;
    }
}

static const char *const bucket_names[B_KINDS] = { "hourly", "daily", "weekly", "monthly",
    "yearly" };

/* decide(kept, opt, keep, why): which snapshots the policy keeps, and by
 * which rule (restic's forget: newest first; each rule keeps the newest
 * snapshot of each of its newest N buckets that have one). */
static void
decide(const struct snapshots *kept, const struct pqv_forget_options *opt, int *keep,
    char (*why)[96])
{
    unsigned want[B_KINDS] = { opt->hourly, opt->daily, opt->weekly, opt->monthly, opt->yearly };
    long long last[B_KINDS];
    unsigned got[B_KINDS] = { 0, 0, 0, 0, 0 };
    int have[B_KINDS] = { 0, 0, 0, 0, 0 };
    int by_name = opt->nepochs > 0;
    int64_t newest = kept->n > 0 ? kept->s[kept->n - 1].time : 0;

    for (size_t k = kept->n; k-- > 0;) {
        const struct snapshot *sn = &kept->s[k];
        size_t rank = kept->n - 1 - k;
        keep[k] = 0;
        why[k][0] = '\0';
        if (by_name) {
            keep[k] = 1;
            for (size_t i = 0; i < opt->nepochs; i++)
                if (opt->epochs[i] == sn->epoch)
                    keep[k] = 0;
            snprintf(why[k], sizeof(why[k]), keep[k] ? "not named" : "named");
        }
        if (!by_name && rank < opt->last) {
            keep[k] = 1;
            snprintf(why[k], sizeof(why[k]), "last %u", opt->last);
        }
        for (int b = 0; b < B_KINDS && !by_name; b++) {
            long long at = bucket(sn->time, b);
            if (want[b] == 0 || (have[b] && at == last[b]))
                continue;
            have[b] = 1;
            last[b] = at;
            if (got[b]++ < want[b]) {
                size_t l = strlen(why[k]);
                keep[k] = 1;
                snprintf(why[k] + l, sizeof(why[k]) - l, "%s%s %u", l > 0 ? ", " : "",
                    bucket_names[b], got[b]);
            }
        }
        if (!by_name && opt->within > 0 && newest - sn->time <= opt->within) {
            size_t l = strlen(why[k]);
            keep[k] = 1;
            snprintf(why[k] + l, sizeof(why[k]) - l, "%swithin %llds", l > 0 ? ", " : "",
                (long long)opt->within);
        }
        if (sn->flags & SNAP_PINNED) {
            size_t l = strlen(why[k]);
            keep[k] = 1;
            snprintf(why[k] + l, sizeof(why[k]) - l, "%spinned", l > 0 ? ", " : "");
        }
    }
}

/* commit_forget(v, st, forgotten, n, pins, npins, unpins, nunpins): the
 * epoch that records it. */
static int
commit_forget(pqv_vault *v, struct state *st, const uint64_t *forgotten, size_t n,
    const uint64_t *pins, size_t npins, const uint64_t *unpins, size_t nunpins)
{
    struct seg_ext x;
    struct txn t;
    int rc;

    if ((rc = txn_begin(v, st, &t)) != 0)
        return rc;
    if ((rc = snapshots_ext_forget(forgotten, n, pins, npins, unpins, nunpins, &x)) == 0 &&
        (rc = txn_put_ext(&t, &x)) == 0)
        rc = txn_finish(&t, TXN_EVEN_EMPTY, NULL, NULL);
    else
        txn_abort(&t);
    txn_free(&t);
    return rc;
}

static int
forget(pqv_vault *v, const struct pqv_forget_options *opt, uint64_t *forgotten)
{
    struct snapshots kept;
    struct state st;
    int *keep = NULL, rc;
    char (*why)[96] = NULL;
    uint64_t *gone = NULL;
    size_t ngone = 0;

    if (v == NULL || opt == NULL)
        return PQV_E_INVAL;
    if (forgotten != NULL)
        *forgotten = 0;
    if ((rc = opt->dry_run ? vault_require_unlocked(v) : vault_require_writer(v)) != 0)
        return rc;
    if (opt->nepochs == 0 && opt->last == 0 && opt->hourly == 0 && opt->daily == 0 &&
        opt->weekly == 0 && opt->monthly == 0 && opt->yearly == 0 && opt->within <= 0)
        return error_set(PQV_E_INVAL, NULL, "no policy: say what to keep (--keep-last, "
            "--keep-daily, ...) or which snapshots to forget");
    if ((rc = current(v, &st, &kept)) != 0)
        return rc;
    for (size_t i = 0; i < opt->nepochs && rc == 0; i++) {
        const struct snapshot *sn = snapshots_find(&kept, opt->epochs[i]);
        if (sn == NULL)
            rc = error_set(PQV_E_NOTFOUND, NULL, "no snapshot of epoch %llu is kept",
                (unsigned long long)opt->epochs[i]);
        else if (sn->flags & SNAP_PINNED)
            rc = error_set(PQV_E_INVAL, NULL, "snapshot %llu is pinned (unpin it first)",
                (unsigned long long)opt->epochs[i]);
    }
    if (rc == 0 && ((keep = calloc(kept.n + 1, sizeof(*keep))) == NULL ||
                       (why = calloc(kept.n + 1, sizeof(*why))) == NULL ||
                       (gone = calloc(kept.n + 1, sizeof(*gone))) == NULL))
        rc = PQV_E_NOMEM;
    if (rc == 0) {
        decide(&kept, opt, keep, why);
        for (size_t i = kept.n; i-- > 0 && rc == 0;) {
            if (!keep[i])
                gone[ngone++] = kept.s[i].epoch;
            if (opt->decided != NULL) {
                struct pqv_snapshot pub;
                if ((rc = public_of(&kept.s[i], &pub)) == 0)
                    opt->decided(opt->ctx, &pub, keep[i], why[i]);
                public_clear(&pub);
            }
        }
    }
    if (rc == 0 && ngone > 0 && !opt->dry_run)
        rc = commit_forget(v, &st, gone, ngone, NULL, 0, NULL, 0);
    if (rc == 0 && forgotten != NULL)
        *forgotten = ngone;
    free(keep);
    free(why);
    free(gone);
    snapshots_free(&kept);
    state_free(&st);
    return rc;
}

int
pqv_vault_pin(pqv_vault *v, uint64_t epoch, int pinned)
{
    struct snapshots kept;
    struct state st;
    const struct snapshot *sn;
    int rc;

    if (v == NULL)
        return PQV_E_INVAL;
    if ((rc = vault_require_writer(v)) != 0 || (rc = current(v, &st, &kept)) != 0)
        return rc;
    if ((sn = snapshots_find(&kept, epoch)) == NULL)
        rc = error_set(PQV_E_NOTFOUND, NULL, "no snapshot of epoch %llu is kept",
            (unsigned long long)epoch);
    else if (((sn->flags & SNAP_PINNED) != 0) != (pinned != 0))
        rc = pinned ? commit_forget(v, &st, NULL, 0, &epoch, 1, NULL, 0)
                    : commit_forget(v, &st, NULL, 0, NULL, 0, &epoch, 1);
    snapshots_free(&kept);
    state_free(&st);
    return rc;
}

/* ---- comparing states ---- */

/* changes(a, b): what differs between two entries of one name. */
static unsigned
changes(const struct entry *a, const struct entry *b)
{
    unsigned f = 0;

    if (a->kind != b->kind)
        return PQV_CHANGED_KIND;
    if (a->kind == KIND_FILE && !entry_same_data(a, b))
        f |= PQV_CHANGED_CONTENT;
    if (a->kind == KIND_SYMLINK && strcmp(a->target, b->target) != 0)
        f |= PQV_CHANGED_TARGET;
    if (KIND_IS_DEVICE(a->kind) && (a->rdev_major != b->rdev_major ||
            a->rdev_minor != b->rdev_minor))
        f |= PQV_CHANGED_DEVICE;
    if (a->perm != b->perm)
        f |= PQV_CHANGED_MODE;
    if (a->uid != b->uid || a->gid != b->gid)
        f |= PQV_CHANGED_OWNER;
    if (a->kind != KIND_DIR && (a->mtime_sec != b->mtime_sec || a->mtime_nsec != b->mtime_nsec))
        f |= PQV_CHANGED_TIME;
    return f;
}

/* state_at(v, epoch, st): the loaded state of snapshot ${epoch} (0: the
 * newest). */
static int
state_at(pqv_vault *v, uint64_t epoch, struct state *st)
{
    uint64_t at = v->at_epoch;
    int rc;

    v->at_epoch = epoch;
    rc = state_current(v, st, NULL);
    v->at_epoch = at;
    if (rc == 0 && (rc = state_load(v, st)) != 0)
        state_free(st);
    return rc;
}

void
pqv_changes_free(struct pqv_change *c, size_t n)
{
    for (size_t i = 0; c != NULL && i < n; i++) {
        pqv_entry_clear(&c[i].before);
        pqv_entry_clear(&c[i].after);
    }
    free(c);
}

int
pqv_vault_diff(pqv_vault *v, uint64_t from, uint64_t to, const char *prefix,
    struct pqv_change **out, size_t *n)
{
    char norm[PQV_NAME_MAX + 1] = "";
    struct state a, b;
    struct pqv_change *c = NULL;
    size_t k = 0, cap = 0, i, j;
    int rc;

    if (v == NULL || out == NULL || n == NULL)
        return PQV_E_INVAL;
    *out = NULL;
    *n = 0;
    if (v->config.version < 3)
        return error_set(PQV_E_UNSUPPORTED, NULL, "history needs a vault of format 3");
    if (prefix != NULL && prefix[0] != '\0' &&
        (rc = pqv_name_normalize(prefix, norm, sizeof(norm))) != 0)
        return rc;
    if ((rc = state_at(v, from, &a)) != 0)
        return rc;
    if ((rc = state_at(v, to, &b)) != 0) {
        state_free(&a);
        return rc;
    }
    i = state_first_under(&a, norm);
    j = state_first_under(&b, norm);
    while (rc == 0) {
        int in_a = i < a.n && names_under(a.entries[i].name, norm);
        int in_b = j < b.n && names_under(b.entries[j].name, norm);
        int cmp;
        struct pqv_change ch;
        if (!in_a && !in_b)
            break;
        cmp = !in_a ? 1 : !in_b ? -1 : strcmp(a.entries[i].name, b.entries[j].name);
        memset(&ch, 0, sizeof(ch));
        if (cmp < 0) {
            ch.what = PQV_DIFF_REMOVED;
            rc = list_public_entry(&a.entries[i], &ch.before);
        } else if (cmp > 0) {
            ch.what = PQV_DIFF_ADDED;
            rc = list_public_entry(&b.entries[j], &ch.after);
        } else if ((ch.fields = changes(&a.entries[i], &b.entries[j])) != 0) {
            ch.what = PQV_DIFF_CHANGED;
            if ((rc = list_public_entry(&a.entries[i], &ch.before)) == 0)
                rc = list_public_entry(&b.entries[j], &ch.after);
        }
        if (cmp <= 0)
            i = state_next_under(&a, norm, i);
        if (cmp >= 0)
            j = state_next_under(&b, norm, j);
        if (rc != 0 || ch.what == 0) {
            pqv_entry_clear(&ch.before);
            pqv_entry_clear(&ch.after);
            continue;
        }
        if (k == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            struct pqv_change *grown = realloc(c, ncap * sizeof(*grown));
            if (grown == NULL) {
                pqv_entry_clear(&ch.before);
                pqv_entry_clear(&ch.after);
                rc = PQV_E_NOMEM;
                break;
            }
            c = grown;
            cap = ncap;
        }
        c[k++] = ch;
    }
    state_free(&a);
    state_free(&b);
    if (rc != 0) {
        pqv_changes_free(c, k);
        return rc;
    }
    *out = c;
    *n = k;
    return 0;
}

/* ---- the versions of a name ---- */

struct collect {
    const char *name;
    struct entry *e;             /* every entry of the name, any epoch */
    size_t n, cap;
};

static int
collect_name(void *ctx, const struct entry *e)
{
    struct collect *c = ctx;

    if (strcmp(e->name, c->name) != 0)
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        struct entry *grown = realloc(c->e, cap * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        c->e = grown;
        c->cap = cap;
    }
    return entry_copy(&c->e[c->n++], e);
}

void
pqv_versions_free(struct pqv_version *ver, size_t n)
{
    for (size_t i = 0; ver != NULL && i < n; i++)
        pqv_entry_clear(&ver[i].entry);
    free(ver);
}

int
pqv_vault_versions(pqv_vault *v, const char *name, struct pqv_version **out, size_t *n)
{
    char norm[PQV_NAME_MAX + 1];
    struct snapshots kept;
    struct state st;
    struct collect col;
    struct pqv_version *ver = NULL;
    const struct entry *prev = NULL;
    int had = -1, rc;
    size_t k = 0;

    if (v == NULL || name == NULL || out == NULL || n == NULL)
        return PQV_E_INVAL;
    *out = NULL;
    *n = 0;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    if ((rc = current(v, &st, &kept)) != 0)
        return rc;
    memset(&col, 0, sizeof(col));
    col.name = norm;
    if ((rc = chunks_of_state(v, &st, NULL)) == 0)
        rc = snapshots_each_entry(v, &st, &kept, NULL, collect_name, &col);
    if (rc == 0 && (ver = calloc(kept.n + 1, sizeof(*ver))) == NULL)
        rc = PQV_E_NOMEM;
    /* In each kept snapshot, the name's newest entry of its generation at
     * or before it. */
    for (size_t s = 0; rc == 0 && s < kept.n; s++) {
        const struct snapshot *sn = &kept.s[s];
        const struct entry *at = NULL;
        for (size_t i = 0; i < col.n; i++)
            if (col.e[i].epoch >= sn->base && col.e[i].epoch <= sn->epoch &&
                (at == NULL || col.e[i].epoch > at->epoch))
                at = &col.e[i];
        int present = at != NULL && at->kind != KIND_REMOVED;
        if (present == had && (!present || changes(prev, at) == 0)) {
            ver[k - 1].last = sn->epoch;
            continue;
        }
        memset(&ver[k], 0, sizeof(ver[k]));
        ver[k].epoch = ver[k].last = sn->epoch;
        ver[k].time = sn->time;
        ver[k].present = present;
        if (present)
            rc = list_public_entry(at, &ver[k].entry);
        k++;
        had = present;
        prev = at;
    }
    for (size_t i = 0; i < col.n; i++)
        entry_clear(&col.e[i]);
    free(col.e);
    snapshots_free(&kept);
    state_free(&st);
    if (rc != 0) {
        pqv_versions_free(ver, k);
        return rc;
    }
    *out = ver;
    *n = k;
    return 0;
}

/* (A command that frees space: its commit may use the reserve.) */
int
pqv_vault_forget(pqv_vault *v, const struct pqv_forget_options *opt, uint64_t *forgotten)
{
    int rc, saved = v != NULL ? v->reserve_use : 0;

    if (v == NULL)
        return PQV_E_INVAL;
    v->reserve_use = 1;
    rc = forget(v, opt, forgotten);
    v->reserve_use = saved;
    return rc;
}
