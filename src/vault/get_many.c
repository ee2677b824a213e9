/*
 * get_many.c: the operands of one get as one restore (pqv_vault_get_many).
 * The catalogue is loaded once and each operand's entries selected
 * (select.c); an entry is restored once, for the first operand that names
 * it.  Operands that name nothing, or whose destination files exist, are
 * left out before anything is written (their entries may then come with a
 * later operand that names them too: the choice is made again until it
 * holds); then every entry is restored in name order, in batches that span
 * the operands (get_restore.c), below one destination, or with
 * --to-original one per directory the names were added from, against one
 * progress total.  A failed entry is reported and counted against the
 * operand it came with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/fsutil.h"
#include "vault/get_internal.h"
#include "vault/names.h"
#include "vault/select.h"
#include "vault/vault_internal.h"

static const struct pqv_get_options no_options;

/* A destination: the directory entries are restored below, and how many
 * leading components their names lose there. */
struct group {
    char *dir;
    unsigned strip;
};

struct many {
    struct state st;
    struct pqv_name_operand *ops;
    struct select_op *sel;
    size_t n;
    const struct pqv_get_options *opt;
    const char *out;
    uint64_t damaged;
    long *op_of;                 /* op_of[i]: the operand entry i comes with, -1: none */
    size_t *root_of;             /* the length of the name it is named by */
    size_t *group_of;            /* its destination */
    unsigned char *exists;       /* 0 unknown, 1 no, 2 a file is at its destination */
    unsigned char *keep;
    struct group *groups;
    size_t ngroups;
    uint64_t *failed;            /* failed[k]: entries of operand k not restored */
    int *worst;                  /* the worst failure among them */
    long claiming;               /* the operand whose entries are being claimed */
};

/* refuse(op, rc): ${op} is left out: its failure (the current one). */
static void
refuse(struct pqv_name_operand *op, int rc)
{
    op->rc = rc;
    op->error = *pqv_error_last();
    if (op->error.code == 0)
        op->error.code = rc;
}

static int
claim(void *ctx, size_t i, size_t root_len)
{
    struct many *m = ctx;

    m->ops[m->claiming].selected++;
    if (m->op_of[i] < 0) {
        m->op_of[i] = m->claiming;
        m->root_of[i] = root_len;
    }
    return 0;
}

/* group_for(m, dir, strip, g): the destination (${dir}, ${strip}), added
 * if new. */
static int
group_for(struct many *m, const char *dir, unsigned strip, size_t *g)
{
    struct group *grown;

    for (size_t k = 0; k < m->ngroups; k++)
        if (m->groups[k].strip == strip && strcmp(m->groups[k].dir, dir) == 0) {
            *g = k;
            return 0;
        }
    if ((grown = realloc(m->groups, (m->ngroups + 1) * sizeof(*grown))) == NULL)
        return PQV_E_NOMEM;
    m->groups = grown;
    if ((grown[m->ngroups].dir = strdup(dir)) == NULL)
        return PQV_E_NOMEM;
    grown[m->ngroups].strip = strip;
    *g = m->ngroups++;
    return 0;
}

/* place(m, changed): each claimed entry's destination: --to-original the
 * directory its root was added from, its components above the root
 * stripped (an operand whose origin is not recorded is left out, and
 * *${changed} set); else the one destination. */
static int
place(struct many *m, int *changed)
{
    const char *prev = NULL;
    size_t prev_len = 0, g = 0;
    int rc;

    for (size_t i = 0; i < m->st.n; i++) {
        const char *name = m->st.entries[i].name;
        char root[PQV_NAME_MAX + 1], origin[4096], dir[4096];
        unsigned depth = 0;
        if (m->op_of[i] < 0)
            continue;
        if (!m->opt->to_original) {
            m->group_of[i] = 0;
            continue;
        }
        if (prev != NULL && prev_len == m->root_of[i] && strncmp(prev, name, prev_len) == 0) {
            m->group_of[i] = g; /* the same root as the entry before */
            continue;
        }
        snprintf(root, sizeof(root), "%.*s", (int)m->root_of[i], name);
        if (state_origin(&m->st, root, origin, sizeof(origin)) != 0 || origin[0] != '/') {
            struct pqv_name_operand *op = &m->ops[m->op_of[i]];
            if (op->rc == 0) {
                refuse(op, error_set(PQV_E_INVAL, root, "its original place is not recorded "
                    "(added from standard input, or by format 1)"));
                *changed = 1;
            }
            m->op_of[i] = -1;
            prev = NULL;
            continue;
        }
        fsutil_dirname(origin, dir, sizeof(dir));
        for (const char *c = root; (c = strchr(c, '/')) != NULL; c++)
            depth++;
        if ((rc = group_for(m, dir, depth, &g)) != 0)
            return rc;
        m->group_of[i] = g;
        prev = name;
        prev_len = m->root_of[i];
    }
    return 0;
}

/* existing(m, changed): an operand with a file whose destination exists
 * is left out (without force or skip_existing), *${changed} set. */
static int
existing(struct many *m, int *changed)
{
    const struct pqv_get_options *opt = m->opt;

    if (opt->force || opt->skip_existing)
        return 0;
    for (size_t g = 0; g < m->ngroups; g++) {
        struct dest d;
        int opened;
        memset(&d, 0, sizeof(d));
        d.rootfd = -1;
        /* (A destination that is not there holds nothing.) */
        opened = dest_open(&d, m->groups[g].dir, 0) == 0;
        pqv_error_clear();
        for (size_t i = 0; i < m->st.n; i++) {
            const struct entry *e = &m->st.entries[i];
            struct pqv_name_operand *op;
            const char *rel;
            char path[4096];
            if (!m->keep[i] || m->group_of[i] != g || e->kind == KIND_DIR)
                continue;
            rel = get_restore_strip(e->name, m->groups[g].strip);
            if (rel == NULL || *rel == '\0')
                continue;
            if (m->exists[i] == 0)
                m->exists[i] = opened && dest_exists(&d, rel) ? 2 : 1;
            op = &m->ops[m->op_of[i]];
            if (m->exists[i] != 2 || op->rc != 0)
                continue;
            if (get_restore_join(path, sizeof(path), m->groups[g].dir, rel) == 0)
                error_set(PQV_E_EXISTS, path, "already exists");
            else
                error_set(PQV_E_EXISTS, e->name, "already exists");
            refuse(op, PQV_E_EXISTS);
            *changed = 1;
        }
        dest_close(&d);
    }
    return 0;
}

/* stripped_away(m, k): operand ${k} names one file that --strip-components
 * leaves no name (an error, as for pqv_vault_get; a tree's such entries
 * are skipped). */
static int
stripped_away(const struct many *m, size_t k)
{
    const struct select_op *sel = &m->sel[k];
    const struct entry *e;
    const char *rel;

    if (sel->norm == NULL || m->opt->to_original || m->opt->strip_components == 0 ||
        (e = state_find(&m->st, sel->norm)) == NULL || e->kind == KIND_DIR)
        return 0;
    rel = get_restore_strip(e->name, m->opt->strip_components);
    return rel == NULL || *rel == '\0';
}

/* choose(m, r): which operand each entry comes with, where it goes and
 * whether it is kept, made again while operands are left out; the kept
 * entries' totals in ${r}. */
static int
choose(struct many *m, struct restore *r)
{
    int rc, first = 1, changed;

    do {
        changed = 0;
        for (size_t i = 0; i < m->st.n; i++)
            m->op_of[i] = -1;
        for (size_t k = 0; k < m->n; k++) {
            struct pqv_name_operand *op = &m->ops[k];
            if (op->rc != 0)
                continue;
            op->selected = 0;
            m->claiming = (long)k;
            if ((rc = select_each(&m->st, &m->sel[k], claim, m)) != 0)
                return rc;
            if (!first)
                continue;
            pqv_error_clear();
            if (op->selected == 0 && m->damaged > 0)
                refuse(op, error_set(PQV_E_INTEGRITY, NULL, "not found, and %llu damaged %s%s "
                    "could not be examined", (unsigned long long)m->damaged,
                    m->st.format == 1 ? "record" : "catalogue block",
                    m->damaged == 1 ? "" : "s"));
            else if (op->selected == 0)
                refuse(op, error_set(PQV_E_NOTFOUND, NULL, "not found"));
            else if (stripped_away(m, k))
                refuse(op, error_set(PQV_E_INVAL, m->sel[k].norm, "has fewer than %u+1 "
                    "components to strip", m->opt->strip_components));
            if (op->rc != 0)
                changed = 1;
        }
        if (changed) {
            first = 0;
            continue; /* their entries may come with another operand */
        }
        first = 0;
        if ((rc = place(m, &changed)) != 0)
            return rc;
        if (changed)
            continue;
        r->res.excluded = 0;
        r->progress.total = 0;
        for (size_t i = 0; i < m->st.n; i++)
            m->keep[i] = m->op_of[i] >= 0;
        get_restore_filter(r, m->keep);
        if ((rc = existing(m, &changed)) != 0)
            return rc;
    } while (changed);
    return 0;
}

static void
entry_failed(void *ctx, size_t idx, int rc)
{
    struct many *m = ctx;
    long k;

    if (idx == RESTORE_NO_ENTRY || idx >= m->st.n || (k = m->op_of[idx]) < 0)
        return;
    m->failed[k]++;
    if (rc == PQV_E_INTEGRITY || m->worst[k] == 0)
        m->worst[k] = rc;
}

/* restore(v, m, r): every destination's entries. */
static int
restore(pqv_vault *v, struct many *m, struct restore *r)
{
    struct pqv_get_options gopt = *m->opt;
    unsigned char *keep = calloc(m->st.n + 1, 1);
    int rc = 0;

    if (keep == NULL)
        return PQV_E_NOMEM;
    r->v = v;
    r->st = &m->st;
    r->opt = &gopt;
    r->progress.opt = m->opt;
    r->failed_cb = entry_failed;
    r->failed_ctx = m;
    gopt.to_original = 0;
    for (size_t g = 0; g < m->ngroups && rc == 0; g++) {
        size_t kept = 0;
        for (size_t i = 0; i < m->st.n; i++)
            kept += keep[i] = m->keep[i] && m->op_of[i] >= 0 &&
                m->ops[m->op_of[i]].rc == 0 && m->group_of[i] == g;
        if (kept == 0)
            continue;
        gopt.strip_components = m->groups[g].strip;
        rc = get_restore_entries(r, keep, m->groups[g].dir, 0);
    }
    free(keep);
    return rc;
}

/* get_one(v, op, out, opt): one name: pqv_vault_get's, its failure the
 * operand's (counted once in opt->result if it counted nothing). */
static int
get_one(pqv_vault *v, struct pqv_name_operand *op, const char *out,
    const struct pqv_get_options *opt)
{
    struct pqv_get_result *res = opt->result;
    uint64_t before = res != NULL ? res->restored : 0;
    uint64_t counted = res != NULL ? res->restored + res->skipped + res->failed : 0;
    int rc;

    pqv_error_clear();
    rc = get_named(v, op->name, out, opt);
    if (rc == PQV_E_NOMEM)
        return rc;
    if (rc != 0)
        refuse(op, rc);
    /* Refused whole (not found, exists...): one error; a tree that carried
     * on past failures counted its own. */
    if (rc != 0 && res != NULL && res->restored + res->skipped + res->failed == counted)
        res->failed++;
    op->selected = res != NULL ? res->restored - before : 0;
    return 0;
}

int
pqv_vault_get_many(pqv_vault *v, struct pqv_name_operand *ops, size_t n, const char *out,
    const struct pqv_get_options *opt)
{
    struct names_walk w = { NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    struct many m;
    struct restore r;
    struct stat sb;
    int rc;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (opt == NULL)
        opt = &no_options;
    if (ops == NULL && n > 0)
        return PQV_E_INVAL;
    if (opt->to_original && out != NULL)
        return error_set(PQV_E_INVAL, out, "a destination and the original place exclude each "
            "other");
    for (size_t i = 0; i < n; i++) {
        ops[i].rc = 0;
        ops[i].selected = 0;
        memset(&ops[i].error, 0, sizeof(ops[i].error));
        if (ops[i].name == NULL)
            refuse(&ops[i], error_set(PQV_E_INVAL, NULL, "no name"));
    }
    if (n == 0)
        return 0;
    if (n == 1 && ops[0].rc == 0 &&
        !((ops[0].flags & PQV_OPERAND_GLOB) && pqv_match_is_glob(ops[0].name)))
        return get_one(v, &ops[0], out, opt);
    if (out != NULL && stat(out, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return error_set(PQV_E_EXISTS, out, "exists and is not a directory");

    memset(&m, 0, sizeof(m));
    memset(&r, 0, sizeof(r));
    r.batch_max = get_restore_batch_limit();
    r.d.rootfd = -1;
    r.cur = RESTORE_NO_ENTRY;
    r.opt = opt;
    m.ops = ops;
    m.n = n;
    m.opt = opt;
    m.out = out;
    w.report = opt->report;
    w.report_ctx = opt->report_ctx;
    w.damaged = &m.damaged;
    if ((rc = state_current(v, &m.st, &w)) != 0)
        return rc;
    if ((rc = state_load_reporting(v, &m.st, &w)) != 0)
        goto done;
    r.st = &m.st;
    rc = PQV_E_NOMEM;
    if ((m.sel = calloc(n, sizeof(*m.sel))) == NULL ||
        (m.op_of = calloc(m.st.n + 1, sizeof(*m.op_of))) == NULL ||
        (m.root_of = calloc(m.st.n + 1, sizeof(*m.root_of))) == NULL ||
        (m.group_of = calloc(m.st.n + 1, sizeof(*m.group_of))) == NULL ||
        (m.exists = calloc(m.st.n + 1, 1)) == NULL ||
        (m.keep = calloc(m.st.n + 1, 1)) == NULL ||
        (m.failed = calloc(n, sizeof(*m.failed))) == NULL ||
        (m.worst = calloc(n, sizeof(*m.worst))) == NULL)
        goto done;
    for (size_t k = 0; k < n; k++) {
        if (ops[k].rc != 0)
            continue;
        pqv_error_clear();
        if ((rc = select_op_init(&m.sel[k], ops[k].name,
                 (ops[k].flags & PQV_OPERAND_GLOB) != 0, &m.st)) == PQV_E_NOMEM)
            goto done;
        if (rc != 0)
            refuse(&ops[k], rc);
    }
    if (!opt->to_original && (rc = group_for(&m, out != NULL ? out : ".", opt->strip_components,
        &(size_t){ 0 })) != 0)
        goto done;
    if ((rc = choose(&m, &r)) != 0 || (rc = restore(v, &m, &r)) != 0)
        goto done;
    for (size_t k = 0; k < n; k++)
        if (ops[k].rc == 0 && m.failed[k] > 0) {
            error_set(m.worst[k] == PQV_E_INTEGRITY ? PQV_E_INTEGRITY : PQV_E_IO, NULL,
                "%llu entr%s not restored (reported above)", (unsigned long long)m.failed[k],
                m.failed[k] == 1 ? "y" : "ies");
            refuse(&ops[k], m.worst[k] == PQV_E_INTEGRITY ? PQV_E_INTEGRITY : PQV_E_IO);
        }
    if (m.damaged > 0)
        /* A damaged block holds entries nobody can count. */
        rc = m.st.format == 1
            ? error_set(PQV_E_INTEGRITY, NULL, "%llu damaged record%s could not be read: the "
                "entries %s held are lost (reported above)", (unsigned long long)m.damaged,
                m.damaged == 1 ? "" : "s", m.damaged == 1 ? "it" : "they")
            : error_set(PQV_E_INTEGRITY, NULL, "%llu damaged catalogue block%s: the entries in "
                "%s are lost (reported above)", (unsigned long long)m.damaged,
                m.damaged == 1 ? "" : "s", m.damaged == 1 ? "it" : "them");
done:
    r.res.failed += r.failed;
    for (size_t k = 0; m.failed != NULL && k < n; k++)
        if (ops[k].rc != 0 && m.failed[k] == 0)
            r.res.failed++; /* refused whole: one error */
    if (opt->result != NULL) {
        opt->result->restored += r.res.restored;
        opt->result->bytes += r.res.bytes;
        opt->result->skipped += r.res.skipped;
        opt->result->failed += r.res.failed;
        opt->result->excluded += r.res.excluded;
    }
    get_restore_free(&r);
    for (size_t k = 0; m.sel != NULL && k < n; k++)
        select_op_free(&m.sel[k]);
    for (size_t g = 0; g < m.ngroups; g++)
        free(m.groups[g].dir);
    free(m.groups);
    free(m.sel);
    free(m.op_of);
    free(m.root_of);
    free(m.group_of);
    free(m.exists);
    free(m.keep);
    free(m.failed);
    free(m.worst);
    state_free(&m.st);
    return rc;
}
