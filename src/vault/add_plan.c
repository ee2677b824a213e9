/*
 * add_plan.c: an add's plan against the catalogue.  Each planned entry is
 * new, changed (stored again) or unchanged (recorded as the walk found it:
 * left as it is); names below a directory that becomes a file, and with
 * --delete names gone from the source, are removed in the same epoch.  The
 * checks that refuse an add (a name added from another place, a name below
 * a stored file) run here, before anything is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "pqvault/match.h"
#include "util/util.h"
#include "vault/add_internal.h"
#include "vault/names.h"
#include "vault/vault_internal.h"

static int
compare_names(const void *a, const void *b)
{
    return strcmp(((const struct add_file *)a)->name, ((const struct add_file *)b)->name);
}

/* planned_dir(plan, name): whether the plan stores ${name} as a directory. */
static int
planned_dir(const struct add_plan *plan, const char *name)
{
    struct add_file key, *hit;

    key.name = (char *)name;
    hit = util_search(&key, plan->files, plan->n, sizeof(*plan->files), compare_names);
    return hit != NULL && hit->kind == KIND_DIR;
}

/* check_parents(plan, st, name): no parent of ${name} may be a file (or a
 * link) in the vault, unless this add makes it a directory. */
static int
check_parents(const struct add_plan *plan, const struct state *st, const char *name)
{
    char parent[PQV_NAME_MAX + 1];

    for (const char *p = strchr(name, '/'); p != NULL; p = strchr(p + 1, '/')) {
        const struct entry *e;
        snprintf(parent, sizeof(parent), "%.*s", (int)(p - name), name);
        if ((e = state_find(st, parent)) != NULL && e->kind != KIND_DIR &&
            !planned_dir(plan, parent))
            return error_set(PQV_E_EXISTS, name, "%s is a file in the vault: nothing can be "
                "stored below it", parent);
    }
    return 0;
}

/* keep_stale(plan, st, name): the names below ${name}, a directory being
 * replaced by a file, to remove in the same epoch. */
static int
keep_stale(struct add_plan *plan, const struct state *st, const char *name)
{
    for (size_t i = state_first_under(st, name); i < st->n && names_under(st->entries[i].name,
         name); i = state_next_under(st, name, i)) {
        char **grown;
        if (strcmp(st->entries[i].name, name) == 0)
            continue;
        if ((grown = realloc(plan->stale, (plan->nstale + 1) * sizeof(*grown))) == NULL)
            return PQV_E_NOMEM;
        plan->stale = grown;
        if ((plan->stale[plan->nstale] = strdup(st->entries[i].name)) == NULL)
            return PQV_E_NOMEM;
        plan->nstale++;
    }
    return 0;
}

/* recorded_as_is(old, f): whether ${old} records ${f} as the walk found it:
 * the same kind, inode, mtime and ctime (any change of content, mode,
 * owner, links or extended attributes moves the ctime), a file's size and
 * a link's target; restic decides so too. */
static int
recorded_as_is(const struct entry *old, const struct add_file *f)
{
    if (old->kind != f->kind || old->ino != (uint64_t)f->st.st_ino ||
        old->mtime_sec != (int64_t)f->st.st_mtim.tv_sec ||
        old->mtime_nsec != (uint32_t)f->st.st_mtim.tv_nsec ||
        old->ctime_sec != (int64_t)f->st.st_ctim.tv_sec ||
        old->ctime_nsec != (uint32_t)f->st.st_ctim.tv_nsec)
        return 0;
    if (f->kind == KIND_FILE)
        return old->size == (uint64_t)f->st.st_size;
    if (f->kind == KIND_SYMLINK)
        return old->target != NULL && f->target != NULL && strcmp(old->target, f->target) == 0;
    if (KIND_IS_DEVICE(f->kind))
        return old->rdev_major == major(f->st.st_rdev) && old->rdev_minor == minor(f->st.st_rdev);
    return 1;
}

/* excluded(m, rel, is_dir): whether the exclusion rules leave out ${rel}
 * (relative to the operand): it, or a directory above it (the walk never
 * descends into a directory it leaves out). */
static int
excluded(const struct pqv_match *m, const char *rel, int is_dir)
{
    char dir[PQV_NAME_MAX + 1];

    for (const char *s = strchr(rel, '/'); s != NULL; s = strchr(s + 1, '/')) {
        snprintf(dir, sizeof(dir), "%.*s", (int)(s - rel), rel);
        if (pqv_match_test(m, dir, 1))
            return 1;
    }
    return pqv_match_test(m, rel, is_dir);
}

/* gone_names(st, plan, opt): --delete: the stored names below the operand
 * that the walk did not find, as removals; not those the exclusion rules
 * leave out (rsync keeps them too) nor those below a directory that could
 * not be read. */
static int
gone_names(const struct state *st, struct add_plan *plan, const struct pqv_add_options *opt)
{
    size_t root_len = strlen(plan->root_name);

    for (size_t i = state_first_under(st, plan->root_name);
         i < st->n && names_under(st->entries[i].name, plan->root_name);
         i = state_next_under(st, plan->root_name, i)) {
        const struct entry *e = &st->entries[i];
        struct add_file key;
        int keep = 0;
        char **grown;
        key.name = e->name;
        if (util_search(&key, plan->files, plan->n, sizeof(*plan->files), compare_names) != NULL)
            continue;
        for (size_t k = 0; k < plan->nunreadable && !keep; k++)
            keep = names_under(e->name, plan->unreadable[k]);
        if (opt->exclude != NULL && strlen(e->name) > root_len)
            keep |= excluded(opt->exclude, e->name + root_len + 1, e->kind == KIND_DIR);
        for (size_t k = 0; k < plan->nstale && !keep; k++)
            keep = strcmp(plan->stale[k], e->name) == 0;
        if (keep)
            continue;
        if ((grown = realloc(plan->stale, (plan->nstale + 1) * sizeof(*grown))) == NULL)
            return PQV_E_NOMEM;
        plan->stale = grown;
        if ((plan->stale[plan->nstale] = strdup(e->name)) == NULL)
            return PQV_E_NOMEM;
        plan->nstale++;
    }
    return 0;
}

/* add_plan_prepare(st, plan, opt): decide, for every entry of the plan, whether it
 * is new, changed (stored again) or unchanged (left as it is), and refuse
 * before anything is written: duplicates, a name added from another place
 * (without force), names that would be both a file and a directory. */
int
add_plan_prepare(struct state *st, struct add_plan *plan, const struct pqv_add_options *opt)
{
    const struct entry *root;
    int rc = 0, replace_tree = 0;

    util_sort(plan->files, plan->n, sizeof(*plan->files), compare_names);
    /* The same name from another place is another tree, not an update:
     * refused, or with force the stored tree replaced by this one (what
     * --delete does: the names this source lacks are removed, and the
     * root records its new origin). */
    root = plan->root_name != NULL ? state_find(st, plan->root_name) : NULL;
    if (root != NULL && plan->origin != NULL) {
        char was[PQV_NAME_MAX + 4096];
        if (state_origin(st, plan->root_name, was, sizeof(was)) == 0 &&
            strcmp(was, plan->origin) != 0) {
            if (!opt->force)
                return error_set(PQV_E_EXISTS, plan->root_name, "already exists, added from %s",
                    was);
            replace_tree = 1;
        }
    }
    for (size_t i = 0; i < plan->n && rc == 0; i++) {
        struct add_file *f = &plan->files[i];
        const struct entry *old;
        size_t below;
        if (i > 0 && strcmp(f->name, plan->files[i - 1].name) == 0)
            return error_set(PQV_E_INVAL, f->name, "given twice");
        if ((rc = check_parents(plan, st, f->name)) != 0)
            return rc;
        old = state_find(st, f->name);
        below = state_first_under(st, f->name);
        if (old != NULL)
            below++;
        if (old == NULL && below < st->n && names_under(st->entries[below].name, f->name)) {
            /* Stored only as the prefix of other names: a directory. */
            if (f->kind != KIND_DIR)
                rc = keep_stale(plan, st, f->name);
            continue;
        }
        if (old == NULL)
            continue;
        if (recorded_as_is(old, f) && !(replace_tree && strcmp(f->name, plan->root_name) == 0)) {
            /* --force-read reads a regular file all the same: stored
             * again only if what it holds differs (add_seal_same_content). */
            if (opt->force_read && f->kind == KIND_FILE)
                f->reread = f->replacing = 1;
            else
                f->unchanged = 1;
            continue;
        }
        /* Stored again: its newer entry wins; a directory that becomes a
         * file leaves nothing below it. */
        f->replacing = 1;
        if (f->kind != KIND_DIR)
            rc = keep_stale(plan, st, f->name);
    }
    if (rc == 0 && (opt->delete_missing || replace_tree) && plan->root_name != NULL)
        rc = gone_names(st, plan, opt);
    return rc;
}

/* add_plan_hard_links(plan): names of one file (same device and inode, more than
 * one link) get one group id; the data is read once. */
int
add_plan_hard_links(struct add_plan *plan)
{
    struct { dev_t dev; ino_t ino; size_t first; } *seen = NULL;
    size_t nseen = 0;
    int rc = 0;

    for (size_t i = 0; i < plan->n && rc == 0; i++) {
        struct add_file *f = &plan->files[i];
        size_t k;
        if (f->kind != KIND_FILE || f->st.st_nlink < 2)
            continue;
        for (k = 0; k < nseen; k++)
            if (seen[k].dev == f->st.st_dev && seen[k].ino == f->st.st_ino)
                break;
        if (k < nseen) {
            struct add_file *first = &plan->files[seen[k].first];
            if (first->hlgroup == 0)
                rc = util_random(&first->hlgroup, sizeof(first->hlgroup));
            first->hlgroup |= 1; /* nonzero */
            f->hlgroup = first->hlgroup;
            f->link_first = seen[k].first + 1;
            continue;
        }
        void *grown = realloc(seen, (nseen + 1) * sizeof(*seen));
        if (grown == NULL) {
            rc = PQV_E_NOMEM;
            break;
        }
        seen = grown;
        seen[nseen].dev = f->st.st_dev;
        seen[nseen].ino = f->st.st_ino;
        seen[nseen].first = i;
        nseen++;
    }
    free(seen);
    return rc;
}

uint64_t
add_plan_data_bytes(const struct stat *st)
{
    uint64_t size = st->st_size > 0 ? (uint64_t)st->st_size : 0;
    uint64_t blocks = st->st_blocks > 0 ? (uint64_t)st->st_blocks * 512 : 0;

    /* Fewer blocks than the size: a sparse file, of which add_seal_regions
     * reads the data regions only (an estimate: blocks also hold a little
     * metadata on some file systems). */
    return blocks < size ? blocks : size;
}

/* say(opt, level, subject, message): a report, if wanted. */
static void
say(const struct pqv_add_options *opt, const char *subject, const char *message)
{
    vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, subject, "%s", message);
}

/* add_plan_dry_run(plan, opt, res): what the add would do, said and counted. */
void
add_plan_dry_run(const struct add_plan *plan, const struct pqv_add_options *opt, struct pqv_add_result *res)
{
    for (size_t i = 0; i < plan->n; i++) {
        const struct add_file *f = &plan->files[i];
        if (f->unchanged || f->reread) {
            /* (--force-read: read again, and stored again only if its
             * content differs, which only reading tells.) */
            res->unchanged++;
            if (f->reread)
                res->bytes += add_plan_data_bytes(&f->st);
            if (opt->verbose)
                say(opt, f->name, f->reread ? "would be read again (recorded as unchanged)" :
                    "unchanged");
            continue;
        }
        if (f->replacing)
            res->changed++;
        else
            res->added++;
        if (f->kind == KIND_FILE) {
            res->files++;
            if (f->link_first == 0 || plan->files[f->link_first - 1].unchanged)
                res->bytes += add_plan_data_bytes(&f->st);
        }
        say(opt, f->name, f->replacing ? "would be stored again (changed)" : "would be added");
    }
    for (size_t i = 0; i < plan->nstale; i++) {
        res->removed++;
        say(opt, plan->stale[i], "would be removed");
    }
}
