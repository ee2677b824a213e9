/*
 * snapshots_each.c: every entry that the current state or a kept snapshot
 * is made from (vault/snapshots.h, snapshots_each_entry): what gc and
 * check must keep and verify.  Each generation's segments are walked
 * newest first, remembering for each name the epoch of its newer entry:
 * an entry belongs to the states from its own epoch to that one's, and is
 * given when a state to give (a kept snapshot, or the newest) lies there.
 * An older generation's segments are each verified against the chain
 * values the current chain carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vault/chunks.h"
#include "vault/names.h"
#include "vault/snapshots.h"
#include "vault/state.h"
#include "vault/vault_internal.h"

/* Names met so far in a generation (walked newest first), each with the
 * epoch of its newer entry: an entry of epoch k whose name's next entry
 * is at epoch j belongs to the states of epochs k .. j-1. */
struct later {
    struct { char *name; uint64_t epoch; } *slot;
    size_t cap, n;
};

static uint64_t
name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* later_swap(l, name, epoch, old): the epoch recorded for ${name} (or
 * UINT64_MAX) in *${old}, replaced by ${epoch}. */
static int
later_swap(struct later *l, const char *name, uint64_t epoch, uint64_t *old)
{
    size_t k;

    if (2 * (l->n + 1) > l->cap) {
        struct later bigger = { NULL, l->cap ? 2 * l->cap : 1024, 0 };
        if ((bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot))) == NULL)
            return PQV_E_NOMEM;
        for (size_t i = 0; i < l->cap; i++)
            if (l->slot[i].name != NULL) {
                k = name_hash(l->slot[i].name) & (bigger.cap - 1);
                while (bigger.slot[k].name != NULL)
                    k = (k + 1) & (bigger.cap - 1);
                bigger.slot[k] = l->slot[i];
                bigger.n++;
            }
        free(l->slot);
        *l = bigger;
    }
    for (k = name_hash(name) & (l->cap - 1); l->slot[k].name != NULL; k = (k + 1) & (l->cap - 1))
        if (strcmp(l->slot[k].name, name) == 0) {
            *old = l->slot[k].epoch;
            l->slot[k].epoch = epoch;
            return 0;
        }
    if ((l->slot[k].name = strdup(name)) == NULL)
        return PQV_E_NOMEM;
    l->slot[k].epoch = epoch;
    l->n++;
    *old = UINT64_MAX;
    return 0;
}

static void
later_free(struct later *l)
{
    for (size_t i = 0; i < l->cap; i++)
        free(l->slot[i].name);
    free(l->slot);
    memset(l, 0, sizeof(*l));
}

/* A generation being walked: the epochs of the states it must give. */
struct walk {
    pqv_vault *v;
    const struct names_walk *w;
    const struct chunk_index *index;
    const uint64_t *keep;        /* ascending */
    size_t nkeep;
    struct later later;
    int (*fn)(void *ctx, const struct entry *e);
    void *ctx;
};

/* wanted(wk, from, to): a state to give lies in [from, to). */
static int
wanted(const struct walk *wk, uint64_t from, uint64_t to)
{
    size_t lo = 0, hi = wk->nkeep;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (wk->keep[mid] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < wk->nkeep && wk->keep[lo] < to;
}

/* each_in(wk, s): ${fn} on the entries of segment ${s} that a state to
 * give holds (the generation is walked newest first). */
static int
each_in(struct walk *wk, struct segment *s)
{
    int rc;

    if ((rc = segment_fetch_part(wk->v, s, SEGMENT_PART_ENTRIES)) != 0)
        return rc;
    for (size_t b = 0; b < s->nblocks && rc == 0; b++) {
        struct entry *es;
        size_t n;
        if ((rc = segment_block(wk->v, s, b, &es, &n)) != 0) {
            char sname[STORAGE_NAME_MAX];
            if (rc != PQV_E_INTEGRITY || wk->w == NULL || wk->w->damaged == NULL)
                return rc;
            segment_name(s->epoch, sname);
            (*wk->w->damaged)++;
            vault_report(wk->w->report, wk->w->report_ctx, PQV_REPORT_ERROR, sname, "%s",
                pqv_error_last()->reason);
            rc = 0;
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            uint64_t next = UINT64_MAX;
            if (rc == 0)
                rc = later_swap(&wk->later, es[k].name, s->epoch, &next);
            if (rc == 0 && wanted(wk, s->epoch, next)) {
                chunks_locate(wk->index, &es[k]);
                rc = wk->fn(wk->ctx, &es[k]);
            }
            entry_clear(&es[k]);
        }
        free(es);
    }
    return rc;
}

int
snapshots_each_entry(pqv_vault *v, struct state *cur, const struct snapshots *kept,
    const struct names_walk *w, int (*fn)(void *ctx, const struct entry *e), void *ctx)
{
    struct walk wk;
    uint64_t *keep;
    size_t n = 0;
    int rc = 0;

    memset(&wk, 0, sizeof(wk));
    if ((keep = calloc(kept->n + 1, sizeof(*keep))) == NULL)
        return PQV_E_NOMEM;
    wk.v = v;
    wk.w = w;
    wk.index = &cur->chunks;
    wk.fn = fn;
    wk.ctx = ctx;
    /* The current generation: its kept snapshots and its newest state. */
    for (size_t i = 0; i < kept->n; i++)
        if (kept->s[i].epoch >= cur->base)
            keep[n++] = kept->s[i].epoch;
    keep[n++] = cur->epoch;
    wk.keep = keep;
    wk.nkeep = n;
    /* (The current chain's damaged blocks were reported when it was
     * loaded: skipped quietly here.) */
    uint64_t ignored = 0;
    struct names_walk quiet = { NULL, NULL, &ignored, NULL, NULL, NULL, NULL };
    wk.w = w != NULL ? &quiet : NULL;
    for (size_t i = cur->nsegs; i-- > 0 && rc == 0;)
        rc = each_in(&wk, &cur->segs[i]);
    wk.w = w;
    later_free(&wk.later);
    /* Each older generation that kept snapshots need, from its last kept
     * snapshot down to its base; each segment verified against the chain
     * values the current chain carries. */
    for (size_t i = kept->n; i-- > 0 && rc == 0;) {
        const struct snapshot *last = &kept->s[i];
        uint64_t base = last->base;
        if (last->epoch >= cur->base)
            continue;
        n = 0;
        for (size_t k = 0; k <= i; k++)
            if (kept->s[k].base == base)
                keep[n++] = kept->s[k].epoch;
        wk.nkeep = n;
        for (uint64_t e = last->epoch; e >= base && rc == 0; e--) {
            struct segment s;
            uint8_t want[32];
            char sname[STORAGE_NAME_MAX];
            segment_name(e, sname);
            if ((rc = state_read_segment(v, e, &s)) != 0) {
                if (rc == PQV_E_NOTFOUND)
                    rc = error_set(PQV_E_INTEGRITY, sname, "is missing (a kept snapshot needs "
                        "it: deleted?)");
                break;
            }
            if (snapshots_expected_chain(cur, e, want) != 0 || !util_ct_equal(want, s.chain, 32))
                rc = error_set(PQV_E_INTEGRITY, sname, "is not the segment the chain recorded "
                    "for epoch %llu (replaced or moved)", (unsigned long long)e);
            if (rc == 0)
                rc = each_in(&wk, &s);
            segment_free(&s);
            if (e == 0)
                break;
        }
        later_free(&wk.later);
        /* (The generation's other kept snapshots were walked with it.) */
        while (i > 0 && kept->s[i - 1].base == base)
            i--;
    }
    later_free(&wk.later);
    free(keep);
    return rc;
}
