/*
 * get_restore.c: entries restored into a destination (dest.c): each kind
 * as it is restored (files through the batches of get_batch.c), symbolic
 * links recreated (never followed), names that were hard links of one file
 * linked again, directories given their attributes last, deepest first;
 * no name ever points at unsynced or unverified data (docs/DESIGN.md
 * section 3).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/io.h"
#include "util/pool.h"
#include "util/util.h"
#include "vault/fsmeta.h"
#include "vault/get_internal.h"
#include "vault/kinds.h"
#include "vault/names.h"
#include "vault/pack.h"
#include "vault/readahead.h"
#include "vault/select.h"
#include "vault/vault_internal.h"

/* get_restore_said(r, e, what): said and counted. */
void
get_restore_said(struct restore *r, const struct entry *e, const char *name, const char *what)
{
    r->res.restored++;
    if (e != NULL && e->kind == KIND_FILE)
        r->res.bytes += e->size;
    vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, name, "%s", what);
}

/* get_restore_strip(name, n): ${name} without its first ${n} components; NULL if it has
 * no more (get --strip-components, as tar's). */
const char *
get_restore_strip(const char *name, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const char *slash = strchr(name, '/');
        if (slash == NULL)
            return NULL;
        name = slash + 1;
    }
    return name;
}

/* get_restore_batch_limit(): files per batch: RESTORE_BATCH_FILES, or fewer if the
 * descriptor limit (four per batch slot, and room for the rest) is low. */
size_t
get_restore_batch_limit(void)
{
    struct rlimit rl;
    size_t n = RESTORE_BATCH_FILES;

    /* Two batches open at once (one written, one synced), two
     * descriptors per file. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < 4 * RESTORE_BATCH_FILES + 128)
        n = rl.rlim_cur > 128 + 4 * 4 ? (size_t)(rl.rlim_cur - 128) / 4 : 4;
    return n;
}

/* get_restore_failure(r, subject, rc): report and count a failed entry. */
void
get_restore_failure(struct restore *r, const char *subject, int rc)
{
    const struct pqv_error *err = pqv_error_last();
    const char *who = err->subject[0] != '\0' && r->d.root != NULL &&
        strncmp(err->subject, r->d.root, strlen(r->d.root)) == 0 ? err->subject : subject;

    if (!r->single)
        vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_ERROR, who, "%s",
            err->reason[0] != '\0' ? err->reason : pqv_strerror(rc));
    else if (r->failed == 0)
        error_save(&r->first);
    r->failed++;
    if (rc == PQV_E_INTEGRITY || r->worst == 0)
        r->worst = rc;
    if (r->failed_cb != NULL)
        r->failed_cb(r->failed_ctx, r->cur, rc);
}

int
get_restore_join(char *out, size_t outlen, const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    /* "out/" and "/" name the directory as "out" and "": one slash. */
    int n = snprintf(out, outlen, "%.*s/%s", (int)(dl > 0 && dir[dl - 1] == '/' ? dl - 1 : dl),
        dir, name);

    if (n < 0 || (size_t)n >= outlen)
        return error_set(PQV_E_INVAL, name, "path too long");
    return 0;
}

int
get_restore_dir(struct restore *r, const struct entry *e, const char *rel, const char *display,
    int allow_device)
{
    (void)e;
    (void)display;
    (void)allow_device;
    return dest_make_dir(&r->d, rel);
}

int
get_restore_symlink(struct restore *r, const struct entry *e, const char *rel,
    const char *display, int allow_device)
{
    struct durable_meta meta;

    (void)allow_device;
    fsmeta_durable_meta(e, &meta);
    return dest_symlink(&r->d, rel, display, e->target, r->opt->force, &meta);
}

int
get_restore_special(struct restore *r, const struct entry *e, const char *rel,
    const char *display, int allow_device)
{
    const struct entry_kind *k = kinds_find(e->kind);
    struct fsmeta_xattrs xo = { e, display, r->opt->report, r->opt->report_ctx };
    struct durable_meta meta;

    (void)allow_device;
    /* mknod(2) of a device needs CAP_MKNOD: reported and skipped (as tar
     * does), the rest restored. */
    if (KIND_IS_DEVICE(e->kind) && geteuid() != 0)
        return error_set(PQV_E_UNSUPPORTED, display, "not restored: a %s needs root", k->name);
    fsmeta_durable_meta(e, &meta);
    meta.attrs = e->nxattrs > 0 ? fsmeta_xattrs_cb : NULL;
    meta.attrs_ctx = &xo;
    return dest_node(&r->d, rel, display, k->type, makedev(e->rdev_major, e->rdev_minor),
        r->opt->force, &meta);
}

int
get_restore_file(struct restore *r, const struct entry *e, const char *rel, const char *display,
    int allow_device)
{
    if (e->hlgroup != 0) {
        /* Another name of a file restored in this run: linked after the
         * files are named. */
        for (size_t i = 0; i < r->nlinks; i++)
            if (r->links[i].group == e->hlgroup) {
                void *grown = realloc(r->later, (r->nlater + 1) * sizeof(*r->later));
                if (grown == NULL)
                    return PQV_E_NOMEM;
                r->later = grown;
                if ((r->later[r->nlater].rel = strdup(rel)) == NULL ||
                    (r->later[r->nlater].display = strdup(display)) == NULL) {
                    free(r->later[r->nlater].rel);
                    return PQV_E_NOMEM;
                }
                r->later[r->nlater].idx = r->cur;
                r->later[r->nlater++].group = e->hlgroup;
                return 1; /* queued */
            }
        struct hardlink *grown = realloc(r->links, (r->nlinks + 1) * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        r->links = grown;
        if ((r->links[r->nlinks].first = strdup(rel)) == NULL)
            return PQV_E_NOMEM;
        r->links[r->nlinks++].group = e->hlgroup;
    }
    return get_batch_file(r, e, rel, display, allow_device);
}

int
get_restore_one(struct restore *r, const struct entry *e, const char *rel, const char *display,
    int allow_device)
{
    const struct entry_kind *k = kinds_find(e->kind);

    if (k == NULL || k->restore == NULL)
        return error_set(PQV_E_INTEGRITY, display, "an entry of kind %d cannot be restored",
            e->kind);
    return k->restore(r, e, rel, display, allow_device);
}

void
get_restore_free(struct restore *r)
{
    get_batch_free(r);
    for (size_t i = 0; i < r->nlinks; i++)
        free(r->links[i].first);
    free(r->links);
    for (size_t i = 0; i < r->nlater; i++) {
        free(r->later[i].rel);
        free(r->later[i].display);
    }
    free(r->later);
    state_free(&r->fresh_state);
    get_stream_out_free(&r->progress);
    dest_close(&r->d);
}

/* get_restore_finish(r): the last batch, then the hard links. */
int
get_restore_finish(struct restore *r)
{
    int rc = get_batch_flush(r, 1);

    for (size_t i = 0; rc == 0 && i < r->nlater; i++) {
        const char *first = NULL;
        for (size_t k = 0; k < r->nlinks && first == NULL; k++)
            if (r->links[k].group == r->later[i].group)
                first = r->links[k].first;
        int lrc = dest_hardlink(&r->d, first, r->later[i].rel, r->later[i].display, r->opt->force);
        r->cur = r->later[i].idx;
        if (lrc != 0)
            get_restore_failure(r, r->later[i].display, lrc);
        else
            get_restore_said(r, NULL, r->later[i].rel, "restored (hard link)");
    }
    r->cur = RESTORE_NO_ENTRY;
    if (rc == 0 && (rc = dest_sync_dirs(&r->d)) != 0)
        get_restore_failure(r, r->d.root, rc);
    return rc;
}

/* next_dest(r): the destination closed, the hard links it held
 * forgotten: another one can follow. */
static void
next_dest(struct restore *r)
{
    for (size_t i = 0; i < r->nlinks; i++)
        free(r->links[i].first);
    free(r->links);
    r->links = NULL;
    r->nlinks = 0;
    for (size_t i = 0; i < r->nlater; i++) {
        free(r->later[i].rel);
        free(r->later[i].display);
    }
    free(r->later);
    r->later = NULL;
    r->nlater = 0;
    dest_close(&r->d);
    memset(&r->d, 0, sizeof(r->d));
    r->d.rootfd = -1;
}

void
get_restore_filter(struct restore *r, unsigned char *sel)
{
    const struct state *st = r->st;
    const struct pqv_match *inc = r->opt->include, *exc = r->opt->exclude;

    /* Bit 1: selected, bit 2: kept. */
    for (size_t i = 0; i < st->n; i++) {
        const struct entry *e = &st->entries[i];
        if (!sel[i])
            continue;
        sel[i] = 1;
        if (inc == NULL && exc == NULL) {
            sel[i] |= 2;
            continue;
        }
        if (!select_keep(inc, exc, e->name, e->kind == KIND_DIR))
            continue;
        sel[i] |= 2;
        /* The directories above it that are selected come with it. */
        if (inc != NULL) {
            char prefix[PQV_NAME_MAX + 1];
            size_t len = strlen(e->name);
            if (len > PQV_NAME_MAX)
                continue;
            memcpy(prefix, e->name, len + 1);
            for (size_t k = len; k-- > 0;)
                if (prefix[k] == '/') {
                    const struct entry *up;
                    prefix[k] = '\0';
                    if ((up = state_find(st, prefix)) != NULL && (sel[up - st->entries] & 1))
                        sel[up - st->entries] |= 2;
                }
        }
    }
    for (size_t i = 0; i < st->n; i++) {
        if (sel[i] == 1)
            r->res.excluded++;
        sel[i] = (sel[i] & 2) != 0;
        if (sel[i] && st->entries[i].kind == KIND_FILE)
            r->progress.total += st->entries[i].size;
    }
}

/* get_restore_tree(r, prefix, out): every entry under ${prefix}. */
int
get_restore_tree(struct restore *r, const char *prefix, const char *out, uint64_t damaged)
{
    struct state *st = r->st;
    size_t first = state_first_under(st, prefix);
    unsigned char *sel;
    int rc;

    if (first >= st->n || !names_under(st->entries[first].name, prefix))
        return damaged > 0 ? error_set(PQV_E_INTEGRITY, NULL, "not found, and %llu damaged "
            "%s%s could not be examined", (unsigned long long)damaged,
            st->format == 1 ? "record" : "catalogue block", damaged == 1 ? "" : "s")
                           : error_set(PQV_E_NOTFOUND, NULL, "not found");
    if ((sel = calloc(st->n + 1, 1)) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = first; i < st->n && names_under(st->entries[i].name, prefix);
         i = state_next_under(st, prefix, i))
        sel[i] = 1;
    get_restore_filter(r, sel);
    rc = get_restore_entries(r, sel, out, 1);
    free(sel);
    return rc;
}

static int
compare_group(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* plan_reads(r, keep, first, end, have_dest): a remote storage's
 * read-ahead told of every stored extent the restore of the kept entries
 * in [first, end) will read (readahead.h: each pack then comes in a few
 * requests), a file's hard links once (they are linked, not read), none
 * of a file --skip-existing will skip (a window would bring its bytes for
 * nothing: a restore resumed would read again all it had); for as many
 * as a plan holds.  Nothing if the storage is local. */
static void
plan_reads(struct restore *r, const unsigned char *keep, size_t first, size_t end,
    int have_dest)
{
    struct readahead_plan *p;
    char sname[STORAGE_NAME_MAX];
    uint64_t off, *groups = NULL;
    unsigned char *planned = NULL;
    size_t ngroups = 0;

    if (r->v->readahead == NULL || r->opt->dry_run || (p = readahead_plan_new()) == NULL)
        return;
    /* The hard-link groups, each to be planned once. */
    for (size_t i = first; i < end; i++)
        ngroups += keep[i] && r->st->entries[i].kind == KIND_FILE &&
            r->st->entries[i].hlgroup != 0;
    if (ngroups > 0) {
        size_t n = 0;
        groups = malloc(ngroups * sizeof(*groups));
        planned = calloc(ngroups, 1);
        if (groups == NULL || planned == NULL)
            goto full; /* (no plan: reads as before) */
        for (size_t i = first; i < end; i++)
            if (keep[i] && r->st->entries[i].kind == KIND_FILE && r->st->entries[i].hlgroup != 0)
                groups[n++] = r->st->entries[i].hlgroup;
        qsort(groups, ngroups, sizeof(*groups), compare_group);
    }
    for (size_t i = first; i < end; i++) {
        const struct entry *e = &r->st->entries[i];
        const char *rel;
        if (!keep[i] || e->kind != KIND_FILE ||
            (rel = get_restore_strip(e->name, r->opt->strip_components)) == NULL ||
            *rel == '\0' || (r->opt->skip_existing && have_dest && dest_exists(&r->d, rel)))
            continue;
        if (e->hlgroup != 0) {
            uint64_t *g = util_search(&e->hlgroup, groups, ngroups, sizeof(*groups),
                compare_group);
            if (g == NULL)
                continue;
            /* (Equal groups sort together: the first of them marks all.) */
            while (g > groups && g[-1] == e->hlgroup)
                g--;
            if (planned[g - groups])
                continue;
            planned[g - groups] = 1;
        }
        for (uint32_t k = 0; k < e->nextents; k++) {
            const struct extent *x = &e->extents[k];
            if (pack_extent_place(x, sname, &off) &&
                readahead_plan_add(p, sname, off, x->stored_len) != 0)
                goto set; /* (the rest read unplanned) */
        }
    }
set:
    readahead_plan_set(r->v->readahead, p);
    p = NULL;
full:
    readahead_plan_free(p);
    free(groups);
    free(planned);
}

int
get_restore_entries(struct restore *r, const unsigned char *keep, const char *out, int check)
{
    struct state *st = r->st;
    size_t first = 0, end = 0;
    int rc;

    for (size_t i = 0; i < st->n; i++)
        if (keep[i]) {
            if (end == 0)
                first = i;
            end = i + 1;
        }
    r->cur = RESTORE_NO_ENTRY;
    /* A dry run creates nothing, not even the destination. */
    struct stat sb;
    int have_dest = !r->opt->dry_run || (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode));
    if (have_dest && (rc = dest_open(&r->d, out, !r->opt->dry_run)) != 0)
        return rc;
    r->d.batched = 1;
    /* Refuse before writing anything if any destination file exists. */
    for (size_t i = first; check && i < end && !r->opt->force && !r->opt->skip_existing &&
         have_dest; i++) {
        const struct entry *e = &st->entries[i];
        const char *rel = get_restore_strip(e->name, r->opt->strip_components);
        char dest[4096];
        if (!keep[i] || e->kind == KIND_DIR || rel == NULL || *rel == '\0')
            continue;
        if ((rc = get_restore_join(dest, sizeof(dest), out, rel)) != 0)
            goto done;
        if (dest_exists(&r->d, rel)) {
            rc = error_set(PQV_E_EXISTS, dest, "already exists");
            goto done;
        }
    }
    plan_reads(r, keep, first, end, have_dest);
    /* Everything in name order (parents before children)... */
    for (size_t i = first; i < end; i++) {
        const struct entry *e = &st->entries[i];
        const char *rel = get_restore_strip(e->name, r->opt->strip_components);
        char dest[4096];
        if (!keep[i] || rel == NULL || *rel == '\0')
            continue; /* not wanted, or stripped away */
        r->cur = i;
        if ((rc = get_restore_join(dest, sizeof(dest), out, rel)) != 0)
            goto done;
        if (r->opt->skip_existing && e->kind != KIND_DIR && have_dest && dest_exists(&r->d, rel)) {
            r->res.skipped++;
            vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, dest,
                "skipped (exists)");
            continue;
        }
        if (r->opt->dry_run) {
            r->res.restored++;
            if (e->kind == KIND_FILE)
                r->res.bytes += e->size;
            vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, dest,
                "would be restored");
            continue;
        }
        rc = get_restore_one(r, e, rel, dest, 0);
        if (rc == PQV_E_NOMEM)
            goto done;
        if (rc < 0) {
            /* Reported, and the rest restored (as tar and restic do). */
            get_restore_failure(r, e->name, rc);
            continue;
        }
        if (rc == 0 && e->kind != KIND_FILE) {
            /* Reported with the files around it, in name order. */
            struct pending *p = get_batch_next(r);
            if (p == NULL) {
                rc = PQV_E_NOMEM;
                goto done;
            }
            r->nbatch++;
            memset(p, 0, sizeof(*p));
            p->f.fd = p->f.dirfd = -1;
            p->f.tmp.fd = -1;
            p->f.tmp.slot = -1;
            p->done = 1;
            p->e = e;
            p->idx = i;
            if (r->nbatch == r->batch_max && (rc = get_batch_flush(r, 0)) != 0)
                goto done;
        }
    }
    r->cur = RESTORE_NO_ENTRY;
    rc = 0;
    if (r->opt->dry_run)
        goto done;
    if ((rc = get_restore_finish(r)) != 0)
        goto done;
    /* ...then directories' attributes, deepest first, since creating a
     * file inside a directory changes its mtime. */
    for (size_t i = end; i-- > first;) {
        const struct entry *e = &st->entries[i];
        const char *rel = get_restore_strip(e->name, r->opt->strip_components);
        struct durable_meta meta;
        char dest[4096];
        struct fsmeta_xattrs xo = { e, dest, r->opt->report, r->opt->report_ctx };
        if (!keep[i] || e->kind != KIND_DIR || rel == NULL || *rel == '\0' ||
            get_restore_join(dest, sizeof(dest), out, rel) != 0)
            continue;
        fsmeta_durable_meta(e, &meta);
        meta.attrs = e->nxattrs > 0 ? fsmeta_xattrs_cb : NULL;
        meta.attrs_ctx = &xo;
        r->cur = i;
        if ((rc = dest_set_dir_meta(&r->d, rel, dest, &meta)) != 0)
            get_restore_failure(r, dest, rc);
    }
    r->cur = RESTORE_NO_ENTRY;
    /* The directories made and their attributes, all at once. */
    if ((rc = dest_sync_all(&r->d)) != 0)
        get_restore_failure(r, r->d.root, rc);
    rc = 0;
done:
    r->cur = RESTORE_NO_ENTRY;
    readahead_plan_set(r->v->readahead, NULL);
    if (rc == 0)
        next_dest(r);
    return rc;
}
