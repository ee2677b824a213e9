/*
 * add.c: storing files and trees: operands -> one transaction -> the
 * result (pqv_vault_add, and pqv_vault_add_path / pqv_vault_add_fd for one
 * operand).
 *
 * Every operand is planned first (add_walk.c), then decided against the
 * catalogue (add_plan.c): an operand that is refused (not found, a special
 * file, a name added from another place, a name another operand also
 * gives) is reported in its own error and left out, and nothing of it is
 * written.  The others are sealed into one transaction (add_seal.c, txn.c):
 * one command, one epoch, one hybrid encapsulation, packs shared across
 * operands (a large add also commits at checkpoints).  An entry that
 * cannot be read is reported and skipped; the rest is stored, and its
 * operand then fails with PQV_E_IO saying how many were not.  The vault's
 * sink (txn.h) says where it all goes: the owner's vault (a format-1 vault
 * is upgraded first) or a write-only writer's batch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "vault/add_internal.h"
#include "vault/snapshots.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

static const struct pqv_add_options no_options;

/* One operand being added. */
struct operand {
    struct pqv_add_operand *op;  /* the caller's (its rc and error set here) */
    struct add_plan plan;
    int refused;                 /* nothing of it is stored */
};

/* refuse(o, rc): operand ${o} is left out for the failure just recorded. */
static void
refuse(struct operand *o, int rc)
{
    struct error_saved s;

    error_save(&s);
    o->refused = 1;
    o->op->rc = rc;
    o->op->error = s.e;
}

/* stream_plan(o): the plan of a descriptor operand: one file, its metadata
 * given (a stream has no inode, owner or ctime of its own). */
static int
stream_plan(struct operand *o)
{
    char norm[PQV_NAME_MAX + 1];
    struct stat fst;
    int rc;

    if (o->op->name == NULL || o->op->fd < 0)
        return error_set(PQV_E_INVAL, NULL, "a descriptor operand needs a name");
    if ((rc = pqv_name_normalize(o->op->name, norm, sizeof(norm))) != 0)
        return rc;
    memset(&fst, 0, sizeof(fst));
    fst.st_mode = S_IFREG | (o->op->mode & 07777);
    fst.st_mtim.tv_sec = (time_t)o->op->mtime_sec;
    fst.st_ctim = fst.st_mtim;
    fst.st_uid = geteuid();
    fst.st_gid = getegid();
    if ((o->plan.root_name = strdup(norm)) == NULL)
        return PQV_E_NOMEM;
    return add_walk_push(&o->plan, NULL, "standard input", norm, KIND_FILE, &fst, NULL);
}

/* plan_one(v, st, o, opt): operand ${o} walked and decided; refused (not
 * an error of the command) if it cannot be. */
/* prefixed(v, o, out): the operand's stored name under the sink's prefix
 * (a writer's credential's), or its own name (NULL: the default). */
static int
prefixed(pqv_vault *v, const struct operand *o, char out[PQV_NAME_MAX + 1], const char **name)
{
    const char *prefix = v->sink->prefix != NULL ? v->sink->prefix(v) : NULL;
    char base[PQV_NAME_MAX + 1];
    int rc;

    *name = o->op->name;
    if (prefix == NULL)
        return 0;
    if (o->op->name != NULL)
        rc = pqv_name_normalize(o->op->name, base, sizeof(base));
    else if (o->op->path != NULL)
        rc = add_walk_default_name(o->op->path, base, sizeof(base));
    else
        rc = error_set(PQV_E_INVAL, NULL, "a descriptor operand needs a name");
    if (rc != 0)
        return rc;
    if (snprintf(out, PQV_NAME_MAX + 1, "%s/%s", prefix, base) > PQV_NAME_MAX)
        return error_set(PQV_E_INVAL, base, "too long a name below the prefix %s", prefix);
    *name = out;
    return 0;
}

/* place_of(path, out, outlen): ${path} made absolute with its directory
 * resolved but not its last component (a link inside a tree is that
 * link's place); -1 if it cannot be. */
static int
place_of(const char *path, char *out, size_t outlen)
{
    char dir[4096], *real;
    const char *base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
    int n;

    if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        if ((real = realpath(path, NULL)) == NULL)
            return -1;
        n = snprintf(out, outlen, "%s", real);
    } else {
        fsutil_dirname(path, dir, sizeof(dir));
        if ((real = realpath(dir, NULL)) == NULL)
            return -1;
        n = snprintf(out, outlen, "%s%s%s", real, strcmp(real, "/") == 0 ? "" : "/", base);
    }
    free(real);
    return n > 0 && (size_t)n < outlen ? 0 : -1;
}

/* name_by_origin(st, path, out): the stored name of ${path} when it was
 * added from there before, or when it lies inside a directory stored from
 * one of its ancestors (add ~/src/big/r1.bin after add ~/src/big updates
 * big/r1.bin; the deepest such directory wins); 0 if there is one.  --name
 * says otherwise. */
static int
name_by_origin(const struct state *st, const char *path, char out[PQV_NAME_MAX + 1])
{
    char place[4096];
    const struct entry *best = NULL;
    size_t best_len = 0;

    if (place_of(path, place, sizeof(place)) != 0)
        return -1;
    for (size_t i = 0; i < st->n; i++) {
        const struct entry *e = &st->entries[i];
        size_t len;
        if (e->origin == NULL || e->kind == KIND_REMOVED)
            continue;
        len = strlen(e->origin);
        if (strcmp(e->origin, place) == 0)
            return snprintf(out, PQV_NAME_MAX + 1, "%s", e->name) > PQV_NAME_MAX ? -1 : 0;
        if (e->kind == KIND_DIR && len > best_len && strncmp(place, e->origin, len) == 0 &&
            place[len] == '/') {
            best = e;
            best_len = len;
        }
    }
    if (best == NULL ||
        snprintf(out, PQV_NAME_MAX + 1, "%s%s", best->name, place + best_len) > PQV_NAME_MAX)
        return -1;
    return pqv_name_normalize(out, out, PQV_NAME_MAX + 1) == 0 ? 0 : (pqv_error_clear(), -1);
}

static int
plan_one(pqv_vault *v, struct state *st, struct operand *o, const struct pqv_add_options *opt)
{
    char named[PQV_NAME_MAX + 1];
    const char *name;
    int rc;

    add_walk_init(&o->plan);
    pqv_error_clear();
    if ((rc = prefixed(v, o, named, &name)) != 0)
        ;
    else if (name == NULL && o->op->path != NULL && v->sink->prefix == NULL &&
        name_by_origin(st, o->op->path, named) == 0)
        rc = add_walk_operand(v, &o->plan, o->op->path, named, opt);
    else if (o->op->path == NULL) {
        const char *given = o->op->name;
        o->op->name = name;
        rc = stream_plan(o);
        o->op->name = given;
    } else {
        rc = add_walk_operand(v, &o->plan, o->op->path, name, opt);
    }
    if (rc == 0)
        rc = add_plan_prepare(st, &o->plan, opt);
    /* A stream is no tree to update: replacing a name takes force. */
    if (rc == 0 && o->op->path == NULL && o->plan.files[0].replacing && !opt->force)
        rc = error_set(PQV_E_EXISTS, o->plan.root_name, "already exists");
    if (rc == 0)
        rc = add_plan_hard_links(&o->plan);
    if (rc == PQV_E_NOMEM)
        return rc;
    if (rc != 0)
        refuse(o, rc);
    return 0;
}

/* clash(a, b): a name that both plans store (both sorted by name, as
 * add_plan_prepare leaves them), or NULL. */
static const char *
clash(const struct add_plan *a, const struct add_plan *b)
{
    size_t i = 0, k = 0;

    while (i < a->n && k < b->n) {
        int c = strcmp(a->files[i].name, b->files[k].name);
        if (c == 0)
            return a->files[i].name;
        if (c < 0)
            i++;
        else
            k++;
    }
    return NULL;
}

/* refuse_clashes(ops, n): an operand that would store a name an earlier
 * one stores is refused (it would be two files under one name). */
static void
refuse_clashes(struct operand *ops, size_t n)
{
    for (size_t k = 1; k < n; k++)
        for (size_t i = 0; i < k && !ops[k].refused; i++) {
            const char *name;
            if (ops[i].refused || (name = clash(&ops[i].plan, &ops[k].plan)) == NULL)
                continue;
            /* (PQV_E_INVAL: no --force helps; a name of its own does.) */
            error_set(PQV_E_INVAL, ops[k].op->path != NULL ? ops[k].op->path : name,
                "would be stored as %s, which %s is stored as too: add one of them on its "
                "own with --name", name, ops[i].op->path != NULL ? ops[i].op->path : "'-'");
            refuse(&ops[k], PQV_E_INVAL);
        }
}

/* say_notes(plan, opt): what the walk found, now that the plan stands. */
static void
say_notes(const struct add_plan *plan, const struct pqv_add_options *opt)
{
    for (size_t i = 0; i < plan->nnotes; i++)
        vault_report(opt->report, opt->report_ctx, plan->notes[i].level, plan->notes[i].subject,
            "%s", plan->notes[i].message);
}

/* seal_plan(a, o, st, res): every entry of one operand's plan into the
 * transaction (a->t), checkpointing a large add. */
static int
seal_plan(struct adder *a, struct operand *o, struct state *st, struct pqv_add_result *res)
{
    const struct pqv_add_options *opt = a->opt;
    struct add_plan *plan = &o->plan;
    int rc = 0;

    a->plan = plan;
    a->res = res;
    for (size_t i = 0; i < plan->n && rc == 0; i++) {
        struct add_file *f = &plan->files[i];
        const struct entry *first;
        if (f->unchanged) {
            /* (Not read: no part of the progress, which counts what is.) */
            res->unchanged++;
            if (opt->verbose)
                vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, f->name, "unchanged");
            continue;
        }
        if (o->op->path == NULL) {
            if ((rc = add_seal_stream(a, o->op->fd, f)) != 0)
                break;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, f->name,
                f->replacing ? "replaced" : "added");
            if ((rc = txn_add(a->t, &a->cur)) == 0)
                add_seal_counted(a, f, 1);
        } else {
            /* A later name of a hard-linked file: the entry already made. */
            first = f->hlgroup != 0 ? add_seal_first_of_group(a, f->hlgroup) : NULL;
            rc = first != NULL ? add_seal_link(a, f, first) : add_seal_file(a, f);
        }
        if (rc == 0)
            rc = a->rc;
        if (rc == 0 && add_seal_checkpoint_due(a))
            rc = add_seal_checkpoint(a, st);
    }
    /* Every file of the operand made (its removals below may name what a
     * file in flight replaces). */
    if (rc == 0)
        rc = add_chunk_drain(a);
    /* Its files read: the directories held for them closed (an add of
     * many operands holds one operand's at a time, not every one's). */
    fsutil_dirs_close(&plan->dirs);
    /* Removed: below a directory that became a file, or gone (--delete). */
    for (size_t i = 0; i < plan->nstale && rc == 0; i++) {
        if ((rc = txn_remove(a->t, plan->stale[i])) == 0) {
            res->removed++;
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, plan->stale[i], "removed");
        }
    }
    return rc;
}

/* add_result(opt, res): the command's counts added to the caller's. */
static void
add_result(const struct pqv_add_options *opt, const struct pqv_add_result *res)
{
    struct pqv_add_result *r = opt->result;

    if (r == NULL)
        return;
    r->files += res->files;
    r->bytes += res->bytes;
    r->failed += res->failed;
    r->added += res->added;
    r->changed += res->changed;
    r->unchanged += res->unchanged;
    r->removed += res->removed;
    r->excluded += res->excluded;
    r->new_bytes += res->new_bytes;
    r->unused_bytes += res->unused_bytes;
}

/* declare_roots(v, ops, n, opt): a writer's batch lists the trees it holds
 * the newer state of (import removes what they no longer have); a tree of
 * which something could not be read or was left out unread is not listed,
 * so that its import removes nothing the vault holds below it. */
static int
declare_roots(pqv_vault *v, struct operand *ops, size_t n, const struct pqv_add_options *opt)
{
    int rc = 0;

    if (v->sink->root == NULL)
        return 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct add_plan *plan = &ops[i].plan;
        if (ops[i].refused || plan->n == 0)
            continue; /* (an operand left out whole: nothing to declare) */
        if (plan->not_stored > 0 || plan->nunreadable > 0) {
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, plan->root_name,
                "not all of it was read (unreadable, or left out by an exclusion): its import "
                "removes nothing below it this time");
            continue;
        }
        rc = v->sink->root(v, plan->root_name);
    }
    return rc;
}

/* read_bytes(plan): what sealing the plan reads: the data of the files
 * not left as they are (a later name of a hard-link group is read with
 * its first); a stream's size is not known before. */
static uint64_t
read_bytes(const struct add_plan *plan)
{
    uint64_t n = 0;

    for (size_t i = 0; i < plan->n; i++) {
        const struct add_file *f = &plan->files[i];
        if (f->kind != KIND_FILE || f->unchanged ||
            (f->link_first != 0 && !plan->files[f->link_first - 1].unchanged))
            continue;
        n += add_plan_data_bytes(&f->st);
    }
    return n;
}

/* store(v, ops, n, st, opt, res): the operands that stand, as one
 * transaction (or a dry run's report). */
static int
store(pqv_vault *v, struct operand *ops, size_t n, struct state *st,
    const struct pqv_add_options *opt, struct pqv_add_result *res)
{
    struct txn t;
    struct adder a;
    int rc;

    size_t standing = 0;

    for (size_t i = 0; i < n; i++)
        standing += !ops[i].refused;
    if (standing == 0)
        return 0; /* every operand refused: nothing to do, not even compaction */
    if (opt->dry_run) {
        for (size_t i = 0; i < n; i++)
            if (!ops[i].refused)
                add_plan_dry_run(&ops[i].plan, opt, res);
        return 0;
    }
    if ((rc = txn_begin(v, st, &t)) != 0)
        return rc;
    if ((rc = add_seal_init(&a, v, &t, st, opt)) == 0) {
        for (size_t i = 0; i < n; i++)
            a.total_bytes += ops[i].refused ? 0 : read_bytes(&ops[i].plan);
        for (size_t i = 0; i < n && rc == 0; i++)
            if (!ops[i].refused)
                rc = seal_plan(&a, &ops[i], st, res);
        /* Chunks written for data no entry keeps (a file left out). */
        if (rc == 0)
            a.unused_bytes += add_chunk_unused(&a);
    }
    if (rc == 0)
        rc = declare_roots(v, ops, n, opt);
    /* The command's epoch is a snapshot (a checkpoint's is not: it is a
     * part of one). */
    struct snapshot snap;
    const char **names = calloc(n + 1, sizeof(*names));
    size_t k = 0;
    memset(&snap, 0, sizeof(snap));
    for (size_t i = 0; names != NULL && i < n; i++)
        if (!ops[i].refused)
            names[k++] = ops[i].op->path != NULL ? ops[i].op->path : ops[i].plan.root_name;
    if (rc == 0 && (names == NULL || (rc = snapshots_info("add", names, k, &snap)) != 0))
        rc = rc != 0 ? rc : PQV_E_NOMEM;
    free(names);
    t.snap = &snap;
    /* Nothing changed: no epoch (an unchanged tree costs no segment). */
    if (rc == 0)
        rc = txn_finish(&t, 0, opt->report, opt->report_ctx);
    else
        txn_abort(&t);
    if (rc == 0) {
        for (size_t i = 0; i < t.nintroduced; i++)
            if (t.created[i]) /* (an adopted pack was written before) */
                a.new_bytes += t.introduced[i].size;
        /* "Stored": what the entries stored use; the rest apart. */
        if (a.unused_bytes > a.new_bytes)
            a.unused_bytes = a.new_bytes;
        res->files = a.files;
        res->bytes = a.bytes;
        res->new_bytes = a.new_bytes - a.unused_bytes;
        res->unused_bytes = a.unused_bytes;
    }
    snapshots_clear(&snap);
    add_seal_free(&a);
    txn_free(&t);
    return rc;
}

int
pqv_vault_add(pqv_vault *v, struct pqv_add_operand *ops, size_t n,
    const struct pqv_add_options *opt)
{
    struct pqv_add_result res;
    struct operand *o = NULL;
    struct state st;
    int rc;

    if (v == NULL || v->sink == NULL || (ops == NULL && n > 0))
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    if ((rc = add_walk_check_options(opt)) != 0)
        return rc;
    /* A dry run writes nothing: the owner's needs the key, not the lock
     * (it reads the state as list does, beside a running writer). */
    if ((rc = opt->dry_run && v->sink == &txn_owner_sink ? vault_require_unlocked(v)
                                                         : v->sink->ready(v)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        ops[i].rc = 0;
        memset(&ops[i].error, 0, sizeof(ops[i].error));
    }
    /* A dry run changes nothing, not even the format (it plans on an older
     * format's state as read). */
    if (!opt->dry_run && (rc = v->sink->prepare(v, opt->report, opt->report_ctx)) != 0)
        return rc;
    if ((rc = v->sink->open_state(v, &st)) != 0)
        return rc;
    if (n > 0 && (o = calloc(n, sizeof(*o))) == NULL) {
        state_free(&st);
        return PQV_E_NOMEM;
    }
    memset(&res, 0, sizeof(res));
    for (size_t i = 0; i < n && rc == 0; i++) {
        o[i].op = &ops[i];
        rc = plan_one(v, &st, &o[i], opt);
    }
    if (rc == 0) {
        refuse_clashes(o, n);
        for (size_t i = 0; i < n && rc == 0; i++)
            if (!o[i].refused) {
                say_notes(&o[i].plan, opt);
                res.excluded += o[i].plan.excluded;
                res.failed += o[i].plan.not_stored;
            }
    }
    if (rc == 0)
        rc = store(v, o, n, &st, opt, &res);
    if (rc == 0) {
        add_result(opt, &res);
        /* Entries that could not be read fail their operand (the rest of
         * it is committed). */
        for (size_t i = 0; i < n; i++)
            if (!o[i].refused && o[i].plan.not_stored > 0) {
                uint64_t k = o[i].plan.not_stored;
                refuse(&o[i], error_set(PQV_E_IO, NULL, "%llu entr%s not stored (reported "
                    "above)", (unsigned long long)k, k == 1 ? "y" : "ies"));
                o[i].refused = 0;
            }
    }
    for (size_t i = 0; i < n && o != NULL; i++)
        add_walk_free(&o[i].plan);
    free(o);
    state_free(&st);
    return rc;
}

/* add_one(v, op, opt): one operand; its failure is the call's. */
static int
add_one(pqv_vault *v, struct pqv_add_operand *op, const struct pqv_add_options *opt)
{
    int rc = pqv_vault_add(v, op, 1, opt);

    if (rc == 0 && op->rc != 0) {
        struct error_saved s;
        s.e = op->error;
        error_restore(&s);
        rc = op->rc;
    }
    return rc;
}

int
pqv_vault_add_path(pqv_vault *v, const char *path, const char *name,
    const struct pqv_add_options *opt)
{
    struct pqv_add_operand op;

    if (path == NULL)
        return PQV_E_INVAL;
    memset(&op, 0, sizeof(op));
    op.path = path;
    op.name = name;
    op.fd = -1;
    return add_one(v, &op, opt);
}

int
pqv_vault_add_fd(pqv_vault *v, int fd, const char *name, uint32_t mode, int64_t mtime_sec,
    const struct pqv_add_options *opt)
{
    struct pqv_add_operand op;

    if (name == NULL || fd < 0)
        return PQV_E_INVAL;
    memset(&op, 0, sizeof(op));
    op.name = name;
    op.fd = fd;
    op.mode = mode;
    op.mtime_sec = mtime_sec;
    return add_one(v, &op, opt);
}
