/*
 * get.c: restoring files and trees (pqv_vault_get, pqv_vault_get_fd) from
 * the catalogue's entries (state.c), format 1 or 2 alike: the name looked
 * up (one block decrypted for a file; the whole catalogue for a tree), then
 * one file to its destination or a tree below it (get_restore.c), its data
 * streamed and verified (get_stream.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "vault/get_internal.h"
#include "vault/kinds.h"
#include "vault/names.h"
#include "vault/select.h"
#include "vault/vault_internal.h"

static const struct pqv_get_options no_options;

/* single_without_writing(r, e, dest, named): a file's get that writes
 * nothing: skipped because ${dest} exists (--skip-existing), or a dry run
 * that says what the real one would do, refusals included (${named}: the
 * path the user named, where a device or FIFO is written into). */
static int
single_without_writing(struct restore *r, const struct entry *e, const char *dest, int named)
{
    struct stat sb;

    if (lstat(dest, &sb) == 0) {
        if (r->opt->skip_existing) {
            r->res.skipped++;
            vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, dest,
                "skipped (exists)");
            return 0;
        }
        if (S_ISDIR(sb.st_mode))
            return error_set(PQV_E_EXISTS, dest, "is a directory");
        if (!(named && (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode)))) {
            if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
                return error_set(PQV_E_EXISTS, dest, "exists and is not a regular file");
            if (!r->opt->force)
                return error_set(PQV_E_EXISTS, dest, "%s",
                    S_ISLNK(sb.st_mode) ? "exists (a symbolic link)" : "already exists");
        }
    }
    r->res.restored++;
    r->res.bytes += e->size;
    vault_report(r->opt->report, r->opt->report_ctx, PQV_REPORT_INFO, dest, "would be restored");
    return 0;
}

/* to_original(v, st, w, norm, opt, original, dir): --to-original: where
 * ${norm} was added from; restored into that place's directory, the
 * components above the name stripped (*${original} the options so
 * changed, ${dir} the destination). */
static int
to_original(pqv_vault *v, struct state *st, const struct names_walk *w, const char *norm,
    const struct pqv_get_options *opt, struct pqv_get_options *original, char dir[4096])
{
    char origin[4096];
    unsigned depth = 0;
    int rc;

    if ((rc = state_load_reporting(v, st, w)) != 0)
        return rc;
    if (state_origin(st, norm, origin, sizeof(origin)) != 0 || origin[0] != '/')
        return error_set(PQV_E_INVAL, norm, "its original place is not recorded (added "
            "from standard input, or by format 1)");
    fsutil_dirname(origin, dir, 4096);
    for (const char *c = norm; (c = strchr(c, '/')) != NULL; c++)
        depth++;
    *original = *opt;
    original->to_original = 0;
    original->strip_components = depth;
    return 0;
}

/* lookup(v, st, w, norm, one, file): ${norm} found: a file, link or
 * device-like entry in ${one} (*${file} set), else the catalogue loaded for
 * a tree.  One name is found without loading the catalogue.  The lookup
 * may meet a damaged block, which may hold the name's newest entry: a
 * file (or a name the readable blocks do not hold) is refused with that
 * error; a tree is restored from the readable blocks (as list shows
 * them), the damage reported (exit 4). */
static int
lookup(pqv_vault *v, struct state *st, const struct names_walk *w, const char *norm,
    struct entry *one, int *file)
{
    struct names_walk quiet = *w;
    struct error_saved lookup_err;
    uint64_t ignored = 0;
    int rc, tree = 0;

    *file = 0;
    memset(one, 0, sizeof(*one));
    rc = state_lookup(v, st, norm, one);
    if (rc == 0 && one->kind != KIND_DIR) {
        *file = 1;
        return 0;
    }
    if (rc == 0 || rc == PQV_E_NOTFOUND || (rc == PQV_E_INTEGRITY && st->format == 1)) {
        entry_clear(one);
        return rc == PQV_E_INTEGRITY ? rc : state_load_reporting(v, st, w);
    }
    if (rc != PQV_E_INTEGRITY)
        return rc;
    error_save(&lookup_err);
    quiet.report = NULL;
    quiet.damaged = &ignored;
    if ((rc = state_load_reporting(v, st, &quiet)) != 0)
        return rc;
    {
        size_t first = state_first_under(st, norm);
        const struct entry *x = state_find(st, norm);
        tree = x != NULL ? x->kind == KIND_DIR
                         : first < st->n && names_under(st->entries[first].name, norm);
    }
    state_free(st);
    if (!tree) {
        error_restore(&lookup_err);
        return PQV_E_INTEGRITY;
    }
    if ((rc = state_current(v, st, w)) == 0)
        rc = state_load_reporting(v, st, w);
    return rc;
}

/* finish_one(r, e, dest, made): after get_restore_one made ${e} (${made}
 * 0): a link, FIFO or device is said and counted now (a file is, when its
 * batch is named). */
static int
finish_one(struct restore *r, const struct entry *e, const char *dest, int made)
{
    if (made == 0 && e->kind != KIND_FILE)
        get_restore_said(r, e, dest, "restored");
    return get_restore_finish(r);
}

/* get_file(r, e, norm, out, out_is_dir): one file, link or device-like
 * entry restored: into the directory ${out} under its stored name (walked
 * without following links), or as the path ${out} itself. */
static int
get_file(struct restore *r, const struct entry *e, const char *norm, const char *out,
    int out_is_dir)
{
    const struct pqv_get_options *opt = r->opt;
    char dest[4096];
    struct stat sb;
    int rc;

    if (!select_keep(opt->include, opt->exclude, e->name, 0)) {
        r->res.excluded++;
        return 0;
    }
    r->single = 1;
    r->progress.total = e->size;
    if (out_is_dir) {
        const char *root = out != NULL ? out : ".";
        const char *rel = get_restore_strip(norm, opt->strip_components);
        if (rel == NULL || *rel == '\0')
            rc = error_set(PQV_E_INVAL, norm, "has fewer than %u+1 components to strip",
                opt->strip_components);
        else if ((rc = get_restore_join(dest, sizeof(dest), root, rel)) != 0)
            ;
        else if (opt->dry_run || (opt->skip_existing && lstat(dest, &sb) == 0))
            rc = single_without_writing(r, e, dest, 0);
        else if ((rc = dest_open(&r->d, root, 1)) == 0 &&
            (rc = get_restore_one(r, e, rel, dest, 0)) >= 0)
            rc = finish_one(r, e, dest, rc);
    } else if (opt->dry_run || (opt->skip_existing && lstat(out, &sb) == 0)) {
        rc = single_without_writing(r, e, out, 1);
    } else {
        /* To the path the user named: its directory is theirs (links
         * followed, created if missing); its last component is the file,
         * which may be a device or FIFO to write into. */
        char dir[4096];
        const char *base = strrchr(out, '/');
        fsutil_dirname(out, dir, sizeof(dir));
        base = base != NULL ? base + 1 : out;
        if (*base == '\0')
            rc = error_set(PQV_E_INVAL, out, "not a file name");
        else if ((rc = dest_open(&r->d, dir, 1)) == 0 &&
            (rc = get_restore_one(r, e, base, out, 1)) >= 0)
            rc = finish_one(r, e, out, rc);
    }
    if (rc == 0 && r->failed > 0) {
        error_restore(&r->first);
        rc = r->worst;
    }
    return rc;
}

/* get_tree(r, norm, out, out_is_dir, damaged): every name under ${norm};
 * exit 4 if anything failed its integrity check, else 1 for failures. */
static int
get_tree(struct restore *r, const char *norm, const char *out, int out_is_dir, uint64_t damaged)
{
    struct stat sb;
    int rc;

    if (out != NULL && !out_is_dir && stat(out, &sb) == 0)
        return error_set(PQV_E_EXISTS, out, "exists and is not a directory");
    rc = get_restore_tree(r, norm, out != NULL ? out : ".", damaged);
    if (rc == 0 && damaged > 0 && r->st->format != 1) {
        /* A damaged block holds entries nobody can count. */
        char failed[64] = "";
        if (r->failed > 0)
            snprintf(failed, sizeof(failed), "%llu entr%s not restored; ",
                (unsigned long long)r->failed, r->failed == 1 ? "y" : "ies");
        return error_set(PQV_E_INTEGRITY, NULL, "%s%llu damaged catalogue block%s: the entries "
            "in %s are lost (reported above)", failed, (unsigned long long)damaged,
            damaged == 1 ? "" : "s", damaged == 1 ? "it" : "them");
    }
    if (rc == 0 && (r->failed > 0 || damaged > 0))
        return error_set(damaged > 0 || r->worst == PQV_E_INTEGRITY ? PQV_E_INTEGRITY : PQV_E_IO,
            NULL, "%llu entr%s not restored%s (reported above)",
            (unsigned long long)(r->failed + damaged), r->failed + damaged == 1 ? "y" : "ies",
            damaged > 0 ? ", damaged records among them" : "");
    return rc;
}

int
get_named(pqv_vault *v, const char *name, const char *out, const struct pqv_get_options *opt)
{
    struct names_walk w = { NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    struct pqv_get_options original;
    char norm[PQV_NAME_MAX + 1], origin_dir[4096];
    struct restore r;
    struct state st;
    struct entry one;
    uint64_t damaged = 0;
    struct stat sb;
    int rc, out_is_dir, file = 0;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (name == NULL)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    if (opt->to_original && out != NULL)
        return error_set(PQV_E_INVAL, out, "a destination and the original place exclude each "
            "other");
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    w.report = opt->report;
    w.report_ctx = opt->report_ctx;
    w.damaged = &damaged;
    if ((rc = state_current(v, &st, &w)) != 0)
        return rc;
    memset(&one, 0, sizeof(one));
    if (opt->to_original) {
        if ((rc = to_original(v, &st, &w, norm, opt, &original, origin_dir)) != 0)
            goto done;
        opt = &original;
        out = origin_dir;
    }
    /* An existing directory, or a path ending in '/' (created). */
    out_is_dir = out == NULL || (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)) ||
        (out[0] != '\0' && out[strlen(out) - 1] == '/');
    if ((rc = lookup(v, &st, &w, norm, &one, &file)) != 0)
        goto done;
    memset(&r, 0, sizeof(r));
    r.batch_max = get_restore_batch_limit();
    r.v = v;
    r.st = &st;
    r.opt = opt;
    r.progress.opt = opt;
    r.d.rootfd = -1;
    r.cur = RESTORE_NO_ENTRY;
    rc = file ? get_file(&r, &one, norm, out, out_is_dir)
              : get_tree(&r, norm, out, out_is_dir, damaged);
    r.res.failed += r.failed;
    if (opt->result != NULL) {
        opt->result->restored += r.res.restored;
        opt->result->bytes += r.res.bytes;
        opt->result->skipped += r.res.skipped;
        opt->result->failed += r.res.failed;
        opt->result->excluded += r.res.excluded;
    }
    get_restore_free(&r);
done:
    entry_clear(&one);
    state_free(&st);
    return rc;
}

int
pqv_vault_get(pqv_vault *v, const char *name, const char *out, const struct pqv_get_options *opt)
{
    int rc;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    return get_named(v, name, out, opt);
}

int
pqv_vault_get_fd(pqv_vault *v, const char *name, int fd, const struct pqv_get_options *opt)
{
    char norm[PQV_NAME_MAX + 1];
    struct get_out sink = { fd, "standard output", 0, 0, 0, 0, NULL, NULL, 0 };
    struct state st, fresh_state;
    struct entry e, fresh;
    int rc;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (name == NULL || fd < 0)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    sink.opt = opt;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    if ((rc = state_current(v, &st, NULL)) != 0)
        return rc;
    if ((rc = state_lookup(v, &st, norm, &e)) != 0) {
        state_free(&st);
        return rc;
    }
    memset(&fresh, 0, sizeof(fresh));
    memset(&fresh_state, 0, sizeof(fresh_state));
    if (e.kind != KIND_FILE) {
        const struct entry_kind *k = kinds_find(e.kind);
        rc = error_set(PQV_E_INVAL, norm, "is a %s, not a regular file (cannot write it to a "
            "stream)", k != NULL ? k->name : "special entry");
    } else {
        sink.total = e.size;
        rc = get_stream_current(v, &st, &e, &sink, &fresh, &fresh_state);
    }
    get_stream_out_free(&sink);
    entry_clear(&fresh);
    entry_clear(&e);
    state_free(&fresh_state);
    state_free(&st);
    return rc;
}