/*
 * get.c: restoring files and trees (pqv_vault_get, pqv_vault_get_fd).
 *
 * Objects are read and opened on the worker pool, a bounded window ahead;
 * the plaintext is written in order.  For a file, into a temporary file
 * beside the destination: only when every tag has verified is it given its
 * mode and mtime, fsynced and renamed to its name (without replacing an
 * existing file unless forced), and its directory fsynced.  No
 * unauthenticated or partial plaintext ever sits at the destination name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/util.h"
#include "vault/vault_internal.h"


struct get_job {
    struct pool_job job;
    pqv_vault *v;
    const struct record *r;
    const uint8_t *file_key;
    uint32_t index;
    uint8_t *plain;
    size_t plain_len;
};

static void
get_job_run(struct pool_job *pj)
{
    struct get_job *job = (struct get_job *)pj;
    const struct record *r = job->r;
    char sname[STORAGE_NAME_MAX];
    uint8_t *buf;
    size_t len;
    int rc;

    object_storage_name(r->object_ids[job->index], sname);
    rc = job->v->storage->ops->get(job->v->storage, sname, &buf, &len,
        object_sealed_size(job->plain_len) + 1);
    if (rc == PQV_E_NOTFOUND) {
        /* NOTFOUND, not yet INTEGRITY: stream_current() first asks whether
         * a writer replaced or removed the file while we read it. */
        rc = error_set(PQV_E_NOTFOUND, NULL, "object %u (%s) is missing", job->index, sname);
    } else if (rc == PQV_E_INTEGRITY) {
        rc = error_set(PQV_E_INTEGRITY, NULL, "object %u (%s) has the wrong size", job->index, sname);
    } else if (rc == 0) {
        rc = object_open(r->entry.aead, job->file_key, r->object_ids[job->index], job->index, buf,
            len, job->plain, job->plain_len);
        if (rc == PQV_E_INTEGRITY) {
            char why[PQV_ERROR_REASON_MAX];
            snprintf(why, sizeof(why), "%s", pqv_error_last()->reason);
            rc = error_set(rc, NULL, "object %u (%s): %s", job->index, sname, why);
        }
        free(buf);
    }
    job->job.rc = rc;
}

/* Output of a restore: a descriptor and its name for messages. */
struct sink {
    int fd;
    const char *name;
    uint64_t done, total;
    const struct pqv_get_options *opt;
    int writeback;  /* 1: a file of ours, fsynced at the end: start the
                     * write-back of each object's plaintext as soon as it is
                     * written (sync_file_range), so that the disk works
                     * while later objects are read and opened and the final
                     * fsync (still the durability point) has little left */
};

/* stream_file(v, r, out): unwrap the file key and write the plaintext of
 * ${r} to ${out} in order, verifying every object. */
static int
stream_file(pqv_vault *v, const struct record *r, struct sink *out)
{
    uint8_t file_key[PQV_FILE_KEY_BYTES];
    struct pool *pool = vault_pool(v);
    struct get_job *jobs = NULL;
    size_t window, submitted = 0, retired = 0;
    uint32_t n = r->entry.nobjects;
    uint64_t offset = 0;
    int rc, failed = 0;

    if (pool == NULL)
        return PQV_E_NOMEM;
    if ((rc = record_unwrap_file_key(v, r, file_key)) != 0)
        return rc;
    window = pool_threads(pool) + WINDOW_EXTRA;
    if (window > n)
        window = n;
    if (n > 0 && (jobs = calloc(window, sizeof(*jobs))) == NULL) {
        rc = PQV_E_NOMEM;
        goto done;
    }
    while (retired < n) {
        /* Keep the window full. */
        while (!failed && submitted < n && submitted - retired < window) {
            struct get_job *job = &jobs[submitted % window];
            uint64_t left = r->entry.size - (uint64_t)submitted * PQV_OBJECT_MAX_PLAIN;
            job->plain_len = left > PQV_OBJECT_MAX_PLAIN ? PQV_OBJECT_MAX_PLAIN : (size_t)left;
            if (job->plain == NULL && (job->plain = malloc(PQV_OBJECT_MAX_PLAIN)) == NULL) {
                rc = PQV_E_NOMEM;
                failed = 1;
                break;
            }
            job->v = v;
            job->r = r;
            job->file_key = file_key;
            job->index = (uint32_t)submitted;
            job->job.run = get_job_run;
            pool_submit(pool, &job->job);
            submitted++;
        }
        if (retired == submitted)
            break;
        struct get_job *job = &jobs[retired % window];
        int jrc = pool_wait(pool, &job->job);
        retired++;
        if (jrc != 0 && !failed) {
            rc = jrc;
            failed = 1;
        }
        if (!failed) {
            if ((rc = fsutil_write_all(out->fd, job->plain, job->plain_len, out->name)) != 0)
                failed = 1;
            else if (out->writeback && job->plain_len > 0)
                (void)sync_file_range(out->fd, (off_t)offset, (off_t)job->plain_len,
                    SYNC_FILE_RANGE_WRITE); /* advisory: errors surface at fsync */
            offset += job->plain_len;
            out->done += job->plain_len;
            if (out->opt->progress != NULL)
                out->opt->progress(out->opt->progress_ctx, out->done, out->total);
        }
    }
done:
    /* The plaintext buffers are reused from object to object and wiped
     * once here (not after every object: 4 MiB of wiping per object cost
     * as much as the decryption). */
    for (size_t i = 0; jobs != NULL && i < window; i++) {
        if (jobs[i].plain != NULL)
            util_wipe(jobs[i].plain, PQV_OBJECT_MAX_PLAIN);
        free(jobs[i].plain);
    }
    free(jobs);
    util_wipe(file_key, sizeof(file_key));
    return rc;
}

/* same_objects(a, b): whether two records name the same objects. */
static int
same_objects(const struct record *a, const struct record *b)
{
    return a->entry.nobjects == b->entry.nobjects &&
        (a->entry.nobjects == 0 ||
            memcmp(a->object_ids, b->object_ids, (size_t)a->entry.nobjects * OBJECT_ID_BYTES) == 0);
}

/*
 * stream_current(v, r, out, fresh): stream_file, tolerating writers.  Readers
 * take no lock, so an add --force or rm may delete the objects of the record
 * we read before we reach them.  If an object is missing, read the record
 * again: if it is gone, the file was removed meanwhile (PQV_E_NOTFOUND); if
 * it names other objects, start again from it (it is then left in ${fresh},
 * whose metadata the caller must use); if it is the same, the object is
 * really missing (PQV_E_INTEGRITY).  Output is rewound for a retry, which
 * only a file allows (or a stream nothing was written to yet).
 */
static int
stream_current(pqv_vault *v, const struct record *r, struct sink *out, struct record *fresh)
{
    struct error_saved first;
    int rc, tries;

    rc = stream_file(v, r, out);
    for (tries = 0; rc == PQV_E_NOTFOUND && tries < 3; tries++) {
        struct record now;
        int rr;

        error_save(&first);
        rr = record_read(v, r->entry.name, &now);
        if (rr == PQV_E_NOTFOUND)
            return error_set(PQV_E_NOTFOUND, NULL, "removed while it was being read");
        if (rr != 0)
            return rr;
        if (same_objects(&now, r)) {
            record_clear(&now);
            error_restore(&first);
            return error_subject(PQV_E_INTEGRITY, pqv_error_last()->subject);
        }
        if (out->done > 0 && (ftruncate(out->fd, 0) != 0 || lseek(out->fd, 0, SEEK_SET) != 0)) {
            record_clear(&now);
            return error_set(PQV_E_IO, out->name, "replaced by another writer while being read");
        }
        out->done = 0;
        out->total = now.entry.size;
        record_clear(fresh);
        *fresh = now;
        r = fresh;
        rc = stream_file(v, r, out);
    }
    if (rc == PQV_E_NOTFOUND)
        rc = error_subject(PQV_E_INTEGRITY, pqv_error_last()->subject);
    return rc;
}

/* restore_file(v, r, d, rel, display, opt, allow_device, progress):
 * restore ${r} at ${rel} below the destination ${d}. */
static int
restore_file(pqv_vault *v, const struct record *r, struct dest *d, const char *rel,
    const char *display, const struct pqv_get_options *opt, int allow_device,
    struct sink *progress)
{
    struct durable_meta meta;
    struct dest_file f;
    struct record fresh;
    int rc;

    if ((rc = dest_open_file(&f, d, rel, display, opt->force, allow_device)) != 0)
        return rc;
    progress->fd = f.fd;
    progress->name = display;
    progress->writeback = !f.device;
    memset(&fresh, 0, sizeof(fresh));
    rc = stream_current(v, r, progress, &fresh);
    progress->writeback = 0;
    if (fresh.entry.name != NULL)
        r = &fresh; /* replaced meanwhile: restore the new version's metadata */
    if (rc != 0) {
        dest_close_file(&f);
        record_clear(&fresh);
        return rc;
    }
    /* Every tag verified: now the file may become what it claims to be. */
    meta.mode = r->entry.mode & 07777;
    meta.mtime.tv_sec = r->entry.mtime_sec;
    meta.mtime.tv_nsec = r->entry.mtime_nsec;
    rc = dest_commit_file(&f, &meta, opt->force);
    record_clear(&fresh);
    return rc;
}

static int
join_path(char *out, size_t outlen, const char *dir, const char *name)
{
    int n = snprintf(out, outlen, "%s/%s", dir, name);

    if (n < 0 || (size_t)n >= outlen)
        return error_set(PQV_E_INVAL, name, "path too long");
    return 0;
}

static const struct pqv_get_options no_options = { 0, NULL, NULL, NULL, NULL };

/* restore_tree(v, prefix, out, opt): every entry under ${prefix}. */
static int
restore_tree(pqv_vault *v, const char *prefix, const char *out, const struct pqv_get_options *opt)
{
    struct names_walk w = { opt->report, opt->report_ctx, NULL, NULL, NULL, NULL, NULL };
    struct catalogue cat;
    struct sink progress = { -1, NULL, 0, 0, opt, 0 };
    struct dest d;
    size_t matched = 0;
    uint64_t damaged = 0, failed = 0;
    int rc, worst = 0;

    /* A damaged record is reported and the rest restored. */
    w.damaged = &damaged;
    if ((rc = catalogue_load(v, &cat, &w)) != 0)
        return rc;
    /* Name order: parents before children below, deepest first in reverse. */
    catalogue_sort(&cat);
    for (size_t i = 0; i < cat.n; i++) {
        if (names_under(cat.records[i].entry.name, prefix)) {
            matched++;
            progress.total += cat.records[i].entry.size;
        }
    }
    if (matched == 0) {
        catalogue_free(&cat);
        if (damaged > 0)
            return error_set(PQV_E_INTEGRITY, NULL, "not found, and %llu damaged record%s "
                "could not be examined", (unsigned long long)damaged, damaged == 1 ? "" : "s");
        return error_set(PQV_E_NOTFOUND, NULL, "not found");
    }
    if ((rc = dest_open(&d, out, 1)) != 0) {
        catalogue_free(&cat);
        return rc;
    }
    /* Refuse before writing anything if any destination file exists. */
    for (size_t i = 0; i < cat.n && !opt->force; i++) {
        const struct pqv_entry *e = &cat.records[i].entry;
        char dest[4096];
        if (e->type != PQV_ENTRY_FILE || !names_under(e->name, prefix))
            continue;
        if ((rc = join_path(dest, sizeof(dest), out, e->name)) != 0)
            goto done;
        if (dest_exists(&d, e->name)) {
            rc = error_set(PQV_E_EXISTS, dest, "already exists");
            goto done;
        }
    }
    /* Files first (sorted by name, so parents come before children)... */
    for (size_t i = 0; i < cat.n; i++) {
        const struct pqv_entry *e = &cat.records[i].entry;
        char dest[4096];
        if (!names_under(e->name, prefix))
            continue;
        if ((rc = join_path(dest, sizeof(dest), out, e->name)) != 0)
            goto done;
        if (e->type == PQV_ENTRY_DIR)
            rc = dest_make_dir(&d, e->name);
        else
            rc = restore_file(v, &cat.records[i], &d, e->name, dest, opt, 0, &progress);
        if (rc == PQV_E_NOMEM)
            goto done;
        if (rc != 0) {
            /* Reported, and the rest restored (as tar and restic do); the
             * worst failure decides the result. */
            const struct pqv_error *err = pqv_error_last();
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR,
                strncmp(err->subject, out, strlen(out)) == 0 ? err->subject : e->name, "%s",
                err->reason[0] ? err->reason : pqv_strerror(rc));
            failed++;
            if (worst != PQV_E_INTEGRITY)
                worst = rc;
            continue;
        }
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, e->name, "restored");
    }
    /* ...then directory modes and times, deepest first, since creating a
     * file inside a directory changes its mtime. */
    for (size_t i = cat.n; i-- > 0;) {
        const struct pqv_entry *e = &cat.records[i].entry;
        struct durable_meta meta;
        char dest[4096];
        if (e->type != PQV_ENTRY_DIR || !names_under(e->name, prefix))
            continue;
        if ((rc = join_path(dest, sizeof(dest), out, e->name)) != 0)
            goto done;
        meta.mode = e->mode & 07777;
        meta.mtime.tv_sec = e->mtime_sec;
        meta.mtime.tv_nsec = e->mtime_nsec;
        if (dest_set_dir_meta(&d, e->name, dest, &meta) != 0) {
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, dest, "%s",
                pqv_error_last()->reason);
            failed++;
            if (worst == 0)
                worst = pqv_error_last()->code;
        }
    }
    rc = 0;
    /* Exit 4 if anything failed its integrity check, else 1. */
    if (damaged > 0 || worst == PQV_E_INTEGRITY)
        worst = PQV_E_INTEGRITY;
    else
        worst = PQV_E_IO;
    if (failed > 0 || damaged > 0)
        rc = error_set(worst, NULL, "%llu entr%s not restored%s (reported above)",
            (unsigned long long)(failed + damaged), failed + damaged == 1 ? "y" : "ies",
            damaged > 0 ? ", damaged records among them" : "");
done:
    dest_close(&d);
    catalogue_free(&cat);
    return rc;
}

int
pqv_vault_get(pqv_vault *v, const char *name, const char *out, const struct pqv_get_options *opt)
{
    char norm[PQV_NAME_MAX + 1], dest[4096];
    struct sink progress = { -1, NULL, 0, 0, NULL, 0 };
    struct record r;
    struct stat st;
    int rc, out_is_dir;

    if ((rc = vault_require_unlocked(v)) != 0)
        return rc;
    if (name == NULL)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    progress.opt = opt;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    /* An existing directory, or a path ending in '/' (created). */
    out_is_dir = out == NULL || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) ||
        (out[0] != '\0' && out[strlen(out) - 1] == '/');
    rc = record_read(v, norm, &r);
    if (rc == 0 && r.entry.type == PQV_ENTRY_FILE) {
        struct dest d;
        progress.total = r.entry.size;
        if (out_is_dir) {
            /* Into a directory: the stored name below it, walked without
             * following links. */
            const char *root = out != NULL ? out : ".";
            if ((rc = join_path(dest, sizeof(dest), root, norm)) == 0 &&
                (rc = dest_open(&d, root, 1)) == 0) {
                rc = restore_file(v, &r, &d, norm, dest, opt, 0, &progress);
                dest_close(&d);
            }
        } else {
            /* To the path the user named: its directory is theirs (links
             * followed, created if missing); its last component is the
             * file, which may be a device or FIFO to write into. */
            char dir[4096];
            const char *base = strrchr(out, '/');
            fsutil_dirname(out, dir, sizeof(dir));
            base = base != NULL ? base + 1 : out;
            if (*base == '\0') {
                rc = error_set(PQV_E_INVAL, out, "not a file name");
            } else if ((rc = dest_open(&d, dir, 1)) == 0) {
                rc = restore_file(v, &r, &d, base, out, opt, 1, &progress);
                dest_close(&d);
            }
        }
        if (rc == 0)
            vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, norm, "restored");
        record_clear(&r);
        return rc;
    }
    if (rc == 0)
        record_clear(&r);
    else if (rc != PQV_E_NOTFOUND)
        return rc;
    /* A directory, stored as such or only as a prefix of names. */
    if (out != NULL && !out_is_dir && stat(out, &st) == 0)
        return error_set(PQV_E_EXISTS, out, "exists and is not a directory");
    return restore_tree(v, norm, out != NULL ? out : ".", opt);
}

int
pqv_vault_get_fd(pqv_vault *v, const char *name, int fd, const struct pqv_get_options *opt)
{
    char norm[PQV_NAME_MAX + 1];
    struct sink sink = { fd, "standard output", 0, 0, NULL, 0 };
    struct record r, fresh;
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
    if ((rc = record_read(v, norm, &r)) != 0)
        return rc;
    if (r.entry.type != PQV_ENTRY_FILE) {
        record_clear(&r);
        return error_set(PQV_E_INVAL, NULL, "is a directory (cannot write a tree to a stream)");
    }
    sink.total = r.entry.size;
    memset(&fresh, 0, sizeof(fresh));
    rc = stream_current(v, &r, &sink, &fresh);
    record_clear(&fresh);
    record_clear(&r);
    return rc;
}
