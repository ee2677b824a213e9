/*
 * snapshots.c: history (vault/snapshots.h, docs/FORMAT.md section 26).
 */
#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/cursor.h"
#include "util/util.h"
#include "vault/chunks.h"
#include "vault/names.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

/* Bounds of what a snapshot says (what a writer never exceeds). */
#define SNAP_STRING_MAX 4096
#define SNAP_OPERANDS_MAX 1024

void
snapshots_clear(struct snapshot *sn)
{
    free(sn->host);
    free(sn->user);
    free(sn->command);
    for (size_t i = 0; i < sn->noperands; i++)
        free(sn->operands[i]);
    free(sn->operands);
    memset(sn, 0, sizeof(*sn));
}

void
snapshots_free(struct snapshots *s)
{
    for (size_t i = 0; i < s->n; i++)
        snapshots_clear(&s->s[i]);
    free(s->s);
    memset(s, 0, sizeof(*s));
}

const struct snapshot *
snapshots_find(const struct snapshots *s, uint64_t epoch)
{
    size_t lo = 0, hi = s->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->s[mid].epoch == epoch)
            return &s->s[mid];
        if (s->s[mid].epoch < epoch)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- encoding ---- */

static void
put_string(struct buf *b, const char *s)
{
    buf_blob(b, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

/* put_own(b, sn): a snapshot without its epoch and base. */
static void
put_own(struct buf *b, const struct snapshot *sn)
{
    buf_be64(b, (uint64_t)sn->time);
    buf_varint(b, sn->flags);
    put_string(b, sn->host);
    put_string(b, sn->user);
    put_string(b, sn->command);
    buf_varint(b, sn->noperands);
    for (size_t i = 0; i < sn->noperands; i++)
        put_string(b, sn->operands[i]);
    buf_varint(b, sn->added);
    buf_varint(b, sn->changed);
    buf_varint(b, sn->removed);
    buf_varint(b, sn->bytes_new);
}

static int
ext_of(struct seg_ext *ext, uint64_t type, struct buf *b)
{
    if (b->nomem) {
        buf_wipe_free(b);
        return PQV_E_NOMEM;
    }
    ext->type = type;
    ext->flags = SEG_EXT_CRITICAL;
    ext->data = b->p;
    ext->len = b->len;
    memset(b, 0, sizeof(*b));
    return 0;
}

int
snapshots_ext_own(const struct snapshot *sn, struct seg_ext *ext)
{
    struct buf b = { NULL, 0, 0, 0 };

    put_own(&b, sn);
    return ext_of(ext, SEG_EXT_SNAPSHOT, &b);
}

int
snapshots_ext_kept(const struct snapshots *s, struct seg_ext *ext)
{
    struct buf b = { NULL, 0, 0, 0 };

    buf_varint(&b, s->n);
    for (size_t i = 0; i < s->n; i++) {
        buf_varint(&b, s->s[i].epoch);
        buf_varint(&b, s->s[i].base);
        put_own(&b, &s->s[i]);
    }
    return ext_of(ext, SEG_EXT_KEPT, &b);
}

static void
put_epochs(struct buf *b, const uint64_t *e, size_t n)
{
    buf_varint(b, n);
    for (size_t i = 0; i < n; i++)
        buf_varint(b, e[i]);
}

int
snapshots_ext_forget(const uint64_t *forgotten, size_t n, const uint64_t *pins, size_t npins,
    const uint64_t *unpins, size_t nunpins, struct seg_ext *ext)
{
    struct buf b = { NULL, 0, 0, 0 };

    put_epochs(&b, forgotten, n);
    put_epochs(&b, pins, npins);
    put_epochs(&b, unpins, nunpins);
    return ext_of(ext, SEG_EXT_FORGET, &b);
}

/* ---- decoding ---- */

static int
take_string(struct cursor *c, char **out)
{
    size_t n = (size_t)cursor_varint_max(c, SNAP_STRING_MAX);
    const uint8_t *p = cursor_take(c, n);

    if (p == NULL || memchr(p, '\0', n) != NULL)
        return PQV_E_INTEGRITY;
    if ((*out = malloc(n + 1)) == NULL)
        return PQV_E_NOMEM;
    memcpy(*out, p, n);
    (*out)[n] = '\0';
    return 0;
}

static int
get_own(struct cursor *c, struct snapshot *sn)
{
    int rc;

    sn->time = (int64_t)cursor_be64(c);
    sn->flags = (unsigned)cursor_varint_max(c, SNAP_PINNED);
    if ((rc = take_string(c, &sn->host)) != 0 || (rc = take_string(c, &sn->user)) != 0 ||
        (rc = take_string(c, &sn->command)) != 0)
        return rc;
    size_t n = (size_t)cursor_varint_max(c, SNAP_OPERANDS_MAX);
    if (c->bad || n > cursor_left(c))
        return PQV_E_INTEGRITY;
    if (n > 0 && (sn->operands = calloc(n, sizeof(*sn->operands))) == NULL)
        return PQV_E_NOMEM;
    for (; sn->noperands < n; sn->noperands++)
        if ((rc = take_string(c, &sn->operands[sn->noperands])) != 0)
            return rc;
    sn->added = cursor_varint(c);
    sn->changed = cursor_varint(c);
    sn->removed = cursor_varint(c);
    sn->bytes_new = cursor_varint(c);
    return c->bad ? PQV_E_INTEGRITY : 0;
}

/* push(s, sn): append (moved); epochs must ascend. */
static int
push(struct snapshots *s, struct snapshot *sn)
{
    struct snapshot *grown;

    if (s->n > 0 && sn->epoch <= s->s[s->n - 1].epoch)
        return PQV_E_INTEGRITY;
    if ((grown = realloc(s->s, (s->n + 1) * sizeof(*grown))) == NULL)
        return PQV_E_NOMEM;
    s->s = grown;
    s->s[s->n++] = *sn;
    memset(sn, 0, sizeof(*sn));
    return 0;
}

static int
parse_kept(struct snapshots *s, const struct seg_ext *x, uint64_t base_epoch)
{
    struct cursor c;
    uint64_t n;
    int rc = 0;

    cursor_init(&c, x->data, x->len);
    n = cursor_varint_max(&c, cursor_left(&c) / 16);
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        struct snapshot sn;
        memset(&sn, 0, sizeof(sn));
        sn.epoch = cursor_varint(&c);
        sn.base = cursor_varint(&c);
        /* Each kept one lies before this base, after its own base. */
        if ((rc = get_own(&c, &sn)) == 0 && (sn.epoch >= base_epoch || sn.base > sn.epoch ||
                sn.base == 0))
            rc = PQV_E_INTEGRITY;
        if (rc == 0)
            rc = push(s, &sn);
        snapshots_clear(&sn);
    }
    if (rc == 0 && (c.bad || cursor_left(&c) != 0))
        rc = PQV_E_INTEGRITY;
    return rc;
}

static int
take_epochs(struct cursor *c, uint64_t **out, size_t *n)
{
    *n = (size_t)cursor_varint_max(c, cursor_left(c));
    *out = NULL;
    if (c->bad)
        return PQV_E_INTEGRITY;
    if (*n > 0 && (*out = calloc(*n, sizeof(**out))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < *n; i++)
        (*out)[i] = cursor_varint(c);
    return c->bad ? PQV_E_INTEGRITY : 0;
}

static int
apply_forget(struct snapshots *s, const struct seg_ext *x)
{
    struct cursor c;
    uint64_t *e[3] = { NULL, NULL, NULL };
    size_t n[3] = { 0, 0, 0 };
    int rc = 0;

    cursor_init(&c, x->data, x->len);
    for (int k = 0; k < 3 && rc == 0; k++)
        rc = take_epochs(&c, &e[k], &n[k]);
    if (rc == 0 && cursor_left(&c) != 0)
        rc = PQV_E_INTEGRITY;
    /* Only kept snapshots are forgotten or pinned (a forged forget naming
     * others is refused). */
    for (int k = 0; k < 3 && rc == 0; k++)
        for (size_t i = 0; i < n[k] && rc == 0; i++) {
            struct snapshot *sn = (struct snapshot *)snapshots_find(s, e[k][i]);
            if (sn == NULL)
                rc = PQV_E_INTEGRITY;
            else if (k == 1)
                sn->flags |= SNAP_PINNED;
            else if (k == 2)
                sn->flags &= ~(unsigned)SNAP_PINNED;
            else if (sn->flags & SNAP_PINNED)
                rc = PQV_E_INTEGRITY; /* a pinned one is never forgotten */
        }
    if (rc == 0) {
        size_t k = 0;
        for (size_t i = 0; i < s->n; i++) {
            int gone = 0;
            for (size_t j = 0; j < n[0] && !gone; j++)
                gone = s->s[i].epoch == e[0][j];
            if (gone)
                snapshots_clear(&s->s[i]);
            else
                s->s[k++] = s->s[i];
        }
        s->n = k;
    }
    for (int k = 0; k < 3; k++)
        free(e[k]);
    return rc;
}

int
snapshots_load(const struct state *st, struct snapshots *out)
{
    int rc = 0;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < st->nsegs && rc == 0; i++) {
        const struct segment *s = &st->segs[i];
        const struct seg_ext *x;
        int base = s->kind == SEGMENT_BASE;
        /* Each where it belongs (a kept list in a base; a snapshot and a
         * forget in a delta), and critical (FORMAT.md section 26). */
        for (size_t k = 0; k < s->next && rc == 0; k++) {
            const struct seg_ext *e = &s->ext[k];
            if ((e->type == SEG_EXT_KEPT && !base) ||
                ((e->type == SEG_EXT_SNAPSHOT || e->type == SEG_EXT_FORGET) && base) ||
                ((e->type == SEG_EXT_KEPT || e->type == SEG_EXT_SNAPSHOT ||
                     e->type == SEG_EXT_FORGET) && !(e->flags & SEG_EXT_CRITICAL)))
                rc = PQV_E_INTEGRITY;
        }
        if (rc == 0 && i == 0 && (x = segment_ext(s, SEG_EXT_KEPT)) != NULL)
            rc = parse_kept(out, x, s->epoch);
        if (rc == 0 && i > 0 && (x = segment_ext(s, SEG_EXT_FORGET)) != NULL)
            rc = apply_forget(out, x);
        if (rc == 0 && (x = segment_ext(s, SEG_EXT_SNAPSHOT)) != NULL) {
            struct snapshot sn;
            struct cursor c;
            memset(&sn, 0, sizeof(sn));
            cursor_init(&c, x->data, x->len);
            sn.epoch = s->epoch;
            sn.base = st->segs[0].epoch;
            if ((rc = get_own(&c, &sn)) == 0 && cursor_left(&c) != 0)
                rc = PQV_E_INTEGRITY;
            if (rc == 0)
                rc = push(out, &sn);
            snapshots_clear(&sn);
        }
        if (rc == PQV_E_INTEGRITY) {
            char sname[STORAGE_NAME_MAX];
            segment_name(s->epoch, sname);
            rc = error_set(PQV_E_INTEGRITY, sname, "its list of snapshots is malformed");
        }
    }
    if (rc != 0)
        snapshots_free(out);
    return rc;
}

/* ---- what a new snapshot says ---- */

static int
dup_into(char **out, const char *s)
{
    size_t n = strlen(s);

    if (n > SNAP_STRING_MAX)
        n = SNAP_STRING_MAX;
    if ((*out = malloc(n + 1)) == NULL)
        return PQV_E_NOMEM;
    memcpy(*out, s, n);
    (*out)[n] = '\0';
    return 0;
}

int
snapshots_info(const char *command, const char *const *operands, size_t n, struct snapshot *sn)
{
    char host[256], user[64];
    struct passwd pw, *pwp = NULL;
    char pwbuf[1024];
    int rc;

    memset(sn, 0, sizeof(*sn));
    sn->time = (int64_t)time(NULL);
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "?");
    host[sizeof(host) - 1] = '\0';
    if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 && pwp != NULL)
        snprintf(user, sizeof(user), "%s", pw.pw_name);
    else
        snprintf(user, sizeof(user), "%lu", (unsigned long)geteuid());
    if (n > SNAP_OPERANDS_MAX)
        n = SNAP_OPERANDS_MAX;
    if ((rc = dup_into(&sn->host, host)) != 0 || (rc = dup_into(&sn->user, user)) != 0 ||
        (rc = dup_into(&sn->command, command)) != 0)
        goto fail;
    if (n > 0 && (sn->operands = calloc(n, sizeof(*sn->operands))) == NULL) {
        rc = PQV_E_NOMEM;
        goto fail;
    }
    for (; sn->noperands < n; sn->noperands++)
        if ((rc = dup_into(&sn->operands[sn->noperands], operands[sn->noperands])) != 0)
            goto fail;
    return 0;
fail:
    snapshots_clear(sn);
    return rc;
}

/* ---- restoring one ---- */

int
snapshots_needed(const struct snapshots *s, const struct state *st, uint64_t epoch)
{
    if (epoch >= st->base)
        return 1;
    for (size_t i = 0; i < s->n; i++)
        if (s->s[i].base <= epoch && epoch <= s->s[i].epoch)
            return 1;
    return 0;
}

/* expected_chain(cur, epoch, out): chain(epoch) as the current chain
 * knows it: its own segments', or its base's history. */
int
snapshots_expected_chain(const struct state *cur, uint64_t epoch, uint8_t out[32])
{
    const struct segment *base = &cur->segs[0];
    size_t lo = 0, hi = base->nhistory;

    if (epoch >= cur->base) {
        const struct segment *s = state_segment(cur, epoch);
        if (s == NULL)
            return -1;
        memcpy(out, s->chain, 32);
        return 0;
    }
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (base->history[mid].epoch == epoch) {
            memcpy(out, base->history[mid].chain, 32);
            return 0;
        }
        if (base->history[mid].epoch < epoch)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int
snapshots_state(pqv_vault *v, struct state *cur, const struct snapshot *sn, struct state *st)
{
    uint8_t want[32], prev[32];
    int rc;

    memset(st, 0, sizeof(*st));
    st->format = cur->format;
    if ((rc = chunks_of_state(v, cur, NULL)) != 0)
        return rc;
    if ((st->segs = calloc((size_t)(sn->epoch - sn->base + 1), sizeof(*st->segs))) == NULL)
        return PQV_E_NOMEM;
    for (uint64_t e = sn->base; e <= sn->epoch; e++) {
        struct segment *s = &st->segs[st->nsegs];
        char sname[STORAGE_NAME_MAX];
        segment_name(e, sname);
        if ((rc = state_read_segment(v, e, s)) != 0) {
            if (rc == PQV_E_NOTFOUND)
                rc = error_set(PQV_E_INTEGRITY, sname, "is missing (snapshot %llu needs it: "
                    "deleted?)", (unsigned long long)sn->epoch);
            goto fail;
        }
        st->nsegs++;
        /* The very segment the chain recorded, in its place. */
        if (snapshots_expected_chain(cur, e, want) != 0 || !util_ct_equal(want, s->chain, 32) ||
            (e == sn->base ? s->kind != SEGMENT_BASE
                           : s->kind != SEGMENT_DELTA || s->base != sn->base ||
                                 !util_ct_equal(s->prev_chain, prev, 32))) {
            rc = error_set(PQV_E_INTEGRITY, sname, "is not the segment the chain recorded for "
                "epoch %llu (replaced or moved)", (unsigned long long)e);
            goto fail;
        }
        memcpy(prev, s->chain, 32);
    }
    st->epoch = sn->epoch;
    st->base = sn->base;
    memcpy(st->chain, prev, 32);
    /* The chunks' places are the current chain's (a repack may have moved
     * them since). */
    st->chunks = cur->chunks;
    st->chunks_loaded = 1;
    memset(&cur->chunks, 0, sizeof(cur->chunks));
    cur->chunks_loaded = 0;
    return 0;
fail:
    state_free(st);
    return rc;
}

/* ---- naming one ---- */

/* parse_time(spec, day, t): "YYYY-MM-DD" (*day set: the whole day, its
 * end in *t) or "YYYY-MM-DD[T ]HH:MM[:SS]", local time. */
static int
parse_time(const char *spec, int *day, int64_t *t)
{
    struct tm tm;
    int y, mo, d, h = 0, mi = 0, s = 0, used = 0;
    char sep;

    memset(&tm, 0, sizeof(tm));
    *day = 0;
    if (sscanf(spec, "%4d-%2d-%2d%n", &y, &mo, &d, &used) != 3 || used != 10)
        return PQV_E_INVAL;
    if (spec[10] == '\0') {
        *day = 1;
        h = 23;
        mi = 59;
        s = 59;
    } else {
        sep = spec[10];
        used = 0;
        if ((sep != 'T' && sep != ' ') ||
            (sscanf(spec + 11, "%2d:%2d:%2d%n", &h, &mi, &s, &used) != 3 &&
                (s = 0, used = 0, sscanf(spec + 11, "%2d:%2d%n", &h, &mi, &used) != 2)) ||
            spec[11 + used] != '\0')
            return PQV_E_INVAL;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return PQV_E_INVAL;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    tm.tm_isdst = -1;
    *t = (int64_t)mktime(&tm);
    return 0;
}

int
snapshots_resolve(const struct snapshots *s, const char *spec, uint64_t *epoch)
{
    if (s->n == 0)
        return error_set(PQV_E_NOTFOUND, spec, "the vault keeps no snapshot");
    if (strcmp(spec, "latest") == 0 || strncmp(spec, "latest~", 7) == 0) {
        unsigned long long back = 0;
        char *end = NULL;
        if (spec[6] == '~') {
            if (!isdigit((unsigned char)spec[7]) ||
                (back = strtoull(spec + 7, &end, 10), *end != '\0'))
                return error_set(PQV_E_INVAL, spec, "not a snapshot (latest~N: N a count)");
        }
        if (back >= s->n)
            return error_set(PQV_E_NOTFOUND, spec, "no such snapshot: the vault keeps %zu",
                s->n);
        *epoch = s->s[s->n - 1 - back].epoch;
        return 0;
    }
    if (isdigit((unsigned char)spec[0]) && strlen(spec) != 10 && strchr(spec, '-') == NULL) {
        char *end = NULL;
        unsigned long long e = strtoull(spec, &end, 10);
        if (*end != '\0')
            return error_set(PQV_E_INVAL, spec, "not a snapshot (an epoch, latest, latest~N, "
                "a date YYYY-MM-DD or a time YYYY-MM-DDTHH:MM)");
        if (snapshots_find(s, e) == NULL)
            return error_set(PQV_E_NOTFOUND, spec, "no snapshot of epoch %llu is kept (log "
                "lists them)", e);
        *epoch = e;
        return 0;
    }
    int day;
    int64_t t;
    if (parse_time(spec, &day, &t) != 0)
        return error_set(PQV_E_INVAL, spec, "not a snapshot (an epoch, latest, latest~N, a "
            "date YYYY-MM-DD or a time YYYY-MM-DDTHH:MM)");
    for (size_t i = s->n; i-- > 0;) {
        if (s->s[i].time > t)
            continue;
        if (day && s->s[i].time <= t - 86400)
            break; /* before that day */
        *epoch = s->s[i].epoch;
        return 0;
    }
    return error_set(PQV_E_NOTFOUND, spec, day ? "no snapshot of that day" :
        "no snapshot at or before that time");
}
