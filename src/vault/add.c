/*
 * add.c: storing files and trees (pqv_vault_add_path, pqv_vault_add_fd).
 *
 * Files are added in batches.  For each batch, following the commit
 * protocol (docs/DESIGN.md section 3):
 *   1. every object of every file is read, sealed, written to a temporary
 *      name, fsynced and renamed, on the worker pool (at most a window of
 *      objects in flight, so memory is bounded whatever the file sizes);
 *   2. one barrier fsyncs each object directory touched;
 *   3. each file key is wrapped and each record written the same way (the
 *      record's rename is its commit point);
 *   4. one barrier fsyncs each record directory: the batch is durable;
 *   5. objects of records replaced with --force are deleted.
 * A failure before step 3 deletes the batch's objects; a crash leaves at
 * most orphans that check reports and gc removes.
 */
#include <dirent.h>
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

#define BATCH_FILES 256

/* One file or directory to add. */
struct add_file {
    char *path;             /* source path, NULL when read from a descriptor */
    char *name;
    uint8_t hash[NAME_HASH_BYTES];
    int type;
    uint32_t mode;
    int64_t mtime_sec;
    uint32_t mtime_nsec;
    uint64_t size;
    uint32_t nobjects;
    uint8_t (*ids)[OBJECT_ID_BYTES];
    uint8_t file_key[PQV_FILE_KEY_BYTES];
    int replacing;
    struct record old;      /* the record replaced with --force */
};

struct add_plan {
    struct add_file *files;
    size_t n, cap;
    uint64_t total_bytes;
    char **skipped;         /* "path\0what" of files reported as skipped */
    size_t nskipped;
};

/* A unit of work on the pool: one object, or one record. */
struct add_job {
    struct pool_job job;
    pqv_vault *v;
    struct add_file *file;
    uint32_t index;
    int fd;                 /* >= 0: plaintext is already in ${plain} */
    uint8_t *plain, *sealed;
    size_t plain_len, plain_cap, sealed_cap;
    int read_ready;
};

static void
plan_free(struct add_plan *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        struct add_file *f = &plan->files[i];
        free(f->path);
        free(f->name);
        free(f->ids);
        record_clear(&f->old);
        util_wipe(f->file_key, sizeof(f->file_key));
    }
    free(plan->files);
    for (size_t i = 0; i < plan->nskipped; i++)
        free(plan->skipped[i]);
    free(plan->skipped);
    memset(plan, 0, sizeof(*plan));
}

static int
plan_push(struct add_plan *plan, const char *path, const char *name, int type,
    const struct stat *st)
{
    struct add_file *f;

    if (plan->n == plan->cap) {
        size_t cap = plan->cap ? 2 * plan->cap : 64;
        struct add_file *p = realloc(plan->files, cap * sizeof(*p));
        if (p == NULL)
            return PQV_E_NOMEM;
        plan->files = p;
        plan->cap = cap;
    }
    f = &plan->files[plan->n];
    memset(f, 0, sizeof(*f));
    if ((path != NULL && (f->path = strdup(path)) == NULL) || (f->name = strdup(name)) == NULL) {
        free(f->path);
        return PQV_E_NOMEM;
    }
    plan->n++;
    f->type = type;
    if (st != NULL) {
        f->mode = (uint32_t)(st->st_mode & 07777);
        f->mtime_sec = (int64_t)st->st_mtim.tv_sec;
        f->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
        if (type == PQV_ENTRY_FILE) {
            f->size = (uint64_t)st->st_size;
            plan->total_bytes += f->size;
        }
    }
    return 0;
}

/* walk(plan, path, name): add ${path} (and below) to the plan. */
static int
walk(struct add_plan *plan, const char *path, const char *name)
{
    struct dirent **list = NULL;
    struct stat st;
    int rc = 0, n, e;

    if (lstat(path, &st) != 0) {
        e = errno;
        return error_set(error_from_errno(e), path, "%s", strerror(e));
    }
    if (S_ISREG(st.st_mode))
        return plan_push(plan, path, name, PQV_ENTRY_FILE, &st);
    if (!S_ISDIR(st.st_mode)) {
        const char *what = S_ISLNK(st.st_mode) ? "symbolic link" :
            S_ISSOCK(st.st_mode) ? "socket" : S_ISFIFO(st.st_mode) ? "FIFO" :
            (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) ? "device" : "special file";
        /* Reported once the whole add has passed its checks, so a
         * refused add says only why it was refused. */
        char **grown = realloc(plan->skipped, (plan->nskipped + 1) * sizeof(char *));
        if (grown == NULL)
            return PQV_E_NOMEM;
        plan->skipped = grown;
        if (asprintf(&plan->skipped[plan->nskipped], "%s%c%s", path, '\0', what) < 0)
            return PQV_E_NOMEM;
        plan->nskipped++;
        return 0;
    }
    if ((rc = plan_push(plan, path, name, PQV_ENTRY_DIR, &st)) != 0)
        return rc;
    if ((n = scandir(path, &list, NULL, alphasort)) < 0) {
        e = errno;
        return error_set(error_from_errno(e), path, "%s", strerror(e));
    }
    for (int i = 0; i < n; i++) {
        char *cpath = NULL, *cname = NULL;
        if (rc == 0 && strcmp(list[i]->d_name, ".") != 0 && strcmp(list[i]->d_name, "..") != 0) {
            if (asprintf(&cpath, "%s/%s", path, list[i]->d_name) < 0 ||
                asprintf(&cname, "%s/%s", name, list[i]->d_name) < 0) {
                rc = PQV_E_NOMEM;
            } else if (strlen(cname) > PQV_NAME_MAX) {
                rc = error_set(PQV_E_INVAL, cpath, "name too long");
            } else {
                rc = walk(plan, cpath, cname);
            }
            free(cpath);
            free(cname);
        }
        free(list[i]);
    }
    free(list);
    return rc;
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(((const struct add_file *)a)->name, ((const struct add_file *)b)->name);
}

/* prepare(v, plan, opt): hash names, refuse duplicates and (without
 * --force) existing names, load records being replaced.  Nothing is written
 * before every name has passed. */
static int
prepare(pqv_vault *v, struct add_plan *plan, const struct pqv_add_options *opt)
{
    char sname[STORAGE_NAME_MAX];
    int rc;

    qsort(plan->files, plan->n, sizeof(*plan->files), compare_names);
    for (size_t i = 0; i < plan->n; i++) {
        struct add_file *f = &plan->files[i];
        if (i > 0 && strcmp(f->name, plan->files[i - 1].name) == 0)
            return error_set(PQV_E_INVAL, f->name, "given twice");
        if ((rc = names_hash(v, f->name, f->hash)) != 0)
            return rc;
        record_storage_name(f->hash, sname);
        rc = v->storage->ops->stat(v->storage, sname, NULL);
        if (rc == PQV_E_NOTFOUND)
            continue;
        if (rc != 0)
            return rc;
        if (!opt->force)
            return error_set(PQV_E_EXISTS, f->name, "already exists");
        /* Replacing: remember the old objects to delete after the commit. */
        if ((rc = record_read(v, f->name, &f->old)) != 0) {
            if (rc != PQV_E_INTEGRITY)
                return rc;
            /* A damaged record may be replaced; its objects become orphans. */
            memset(&f->old, 0, sizeof(f->old));
        }
        f->replacing = 1;
    }
    return 0;
}

/* Read ${job}'s plaintext from its source file with pread. */
static int
job_read(struct add_job *job)
{
    struct add_file *f = job->file;
    uint64_t offset = (uint64_t)job->index * PQV_OBJECT_MAX_PLAIN;
    int fd, rc = 0, e;
    ssize_t got;

    if ((fd = open(f->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        e = errno;
        return error_set(error_from_errno(e), f->path, "%s", strerror(e));
    }
    /* A short pread (FUSE, NFS) is continued at the right offset. */
    got = fsutil_pread_all(fd, job->plain, job->plain_len, offset, f->path);
    if (got < 0)
        rc = (int)got;
    else if ((size_t)got < job->plain_len)
        rc = error_set(PQV_E_IO, f->path, "file shrank while it was being read");
    close(fd);
    return rc;
}

static void
object_job_run(struct pool_job *pj)
{
    struct add_job *job = (struct add_job *)pj;
    struct add_file *f = job->file;
    char sname[STORAGE_NAME_MAX];
    size_t sealed_len = object_sealed_size(job->plain_len);
    int rc;

    if (!job->read_ready && (rc = job_read(job)) != 0)
        goto out;
    if ((rc = object_seal(job->v->config.aead, f->file_key, f->ids[job->index], job->index,
             job->plain, job->plain_len, job->sealed)) != 0)
        goto out;
    object_storage_name(f->ids[job->index], sname);
    rc = job->v->storage->ops->put(job->v->storage, sname, job->sealed, sealed_len);
out:
    util_wipe(job->plain, job->plain_len);
    job->job.rc = rc;
}

static void
record_job_run(struct pool_job *pj)
{
    struct add_job *job = (struct add_job *)pj;
    struct add_file *f = job->file;
    pqv_vault *v = job->v;
    struct record r;
    char sname[STORAGE_NAME_MAX];
    uint8_t ctx[64 + VAULT_ID_BYTES + NAME_HASH_BYTES];
    uint8_t *buf = NULL;
    size_t len;
    int rc;

    memset(&r, 0, sizeof(r));
    r.entry.name = f->name;
    r.entry.type = f->type;
    r.entry.size = f->size;
    r.entry.mode = f->mode;
    r.entry.mtime_sec = f->mtime_sec;
    r.entry.mtime_nsec = f->mtime_nsec;
    r.entry.aead = f->type == PQV_ENTRY_FILE ? v->config.aead : 0;
    r.entry.nobjects = f->nobjects;
    r.object_ids = f->ids;
    if (f->type == PQV_ENTRY_FILE) {
        r.wrapped_len = pqv_wrap_bytes(v->config.kem);
        if ((r.wrapped = malloc(r.wrapped_len)) == NULL) {
            rc = PQV_E_NOMEM;
            goto out;
        }
        if ((rc = pqv_wrap(v->identity, f->file_key, ctx, record_wrap_context(v, f->hash, ctx),
                 r.wrapped)) != 0)
            goto out;
    }
    if ((rc = record_seal(v, &r, &buf, &len)) != 0)
        goto out;
    record_storage_name(f->hash, sname);
    rc = v->storage->ops->put(v->storage, sname, buf, len);
out:
    free(r.wrapped);
    free(buf);
    job->job.rc = rc;
}

/* A window of jobs in flight with their buffers. */
struct window {
    struct add_job *jobs;
    size_t size, next, oldest, inflight;
    int rc;
    uint64_t done_bytes;
};

static int
window_init(pqv_vault *v, struct window *w)
{
    struct pool *pool = vault_pool(v);

    if (pool == NULL)
        return PQV_E_NOMEM;
    memset(w, 0, sizeof(*w));
    w->size = pool_threads(pool) + WINDOW_EXTRA;
    if ((w->jobs = calloc(w->size, sizeof(*w->jobs))) == NULL)
        return PQV_E_NOMEM;
    return 0;
}

static void
window_free(struct window *w)
{
    for (size_t i = 0; i < w->size; i++) {
        free(w->jobs[i].plain);
        free(w->jobs[i].sealed);
    }
    free(w->jobs);
}

/* Wait for the oldest job in flight; remember the first failure. */
static void
window_retire(pqv_vault *v, struct window *w, const struct pqv_add_options *opt,
    uint64_t total)
{
    struct add_job *job = &w->jobs[w->oldest];
    int rc = pool_wait(vault_pool(v), &job->job);

    if (rc != 0 && w->rc == 0) {
        w->rc = rc;
    }
    w->done_bytes += job->plain_len;
    if (opt->progress != NULL && job->job.run == object_job_run)
        opt->progress(opt->progress_ctx, w->done_bytes, total);
    w->oldest = (w->oldest + 1) % w->size;
    w->inflight--;
}

/* A free job slot with buffers for ${plain_len} bytes (waits if needed). */
static struct add_job *
window_slot(pqv_vault *v, struct window *w, size_t plain_len,
    const struct pqv_add_options *opt, uint64_t total)
{
    struct add_job *job;
    size_t sealed_len = object_sealed_size(plain_len);

    if (w->inflight == w->size)
        window_retire(v, w, opt, total);
    job = &w->jobs[w->next];
    if (job->plain_cap < plain_len || job->plain == NULL) {
        free(job->plain);
        job->plain_cap = plain_len > 0 ? plain_len : 1;
        if ((job->plain = malloc(job->plain_cap)) == NULL) {
            job->plain_cap = 0;
            return NULL;
        }
    }
    if (job->sealed_cap < sealed_len) {
        free(job->sealed);
        job->sealed_cap = sealed_len;
        if ((job->sealed = malloc(sealed_len)) == NULL) {
            job->sealed_cap = 0;
            return NULL;
        }
    }
    job->v = v;
    job->plain_len = plain_len;
    return job;
}

static void
window_submit(pqv_vault *v, struct window *w, struct add_job *job)
{
    pool_submit(vault_pool(v), &job->job);
    w->next = (w->next + 1) % w->size;
    w->inflight++;
}

static void
window_drain(pqv_vault *v, struct window *w, const struct pqv_add_options *opt, uint64_t total)
{
    while (w->inflight > 0)
        window_retire(v, w, opt, total);
}

/* new_file_keys(f): fresh file key and object ids for ${f}. */
static int
new_file_keys(struct add_file *f)
{
    int rc;

    if (f->type != PQV_ENTRY_FILE)
        return 0;
    if ((rc = util_random(f->file_key, sizeof(f->file_key))) != 0)
        return rc;
    f->nobjects = object_count(f->size);
    if (f->nobjects == 0)
        return 0;
    if ((f->ids = malloc((size_t)f->nobjects * OBJECT_ID_BYTES)) == NULL)
        return PQV_E_NOMEM;
    return util_random(f->ids, (size_t)f->nobjects * OBJECT_ID_BYTES);
}

/* delete_objects(v, ids, n): best-effort removal (the caller decides
 * whether a failure matters: leftovers are orphans for gc). */
static int
delete_objects(pqv_vault *v, uint8_t (*ids)[OBJECT_ID_BYTES], uint32_t n)
{
    char sname[STORAGE_NAME_MAX];
    int rc = 0;

    for (uint32_t i = 0; i < n; i++) {
        object_storage_name(ids[i], sname);
        int r = v->storage->ops->del(v->storage, sname);
        if (r != 0 && r != PQV_E_NOTFOUND && rc == 0)
            rc = r;
    }
    return rc;
}

/* commit_records(v, files, n, w, opt): steps 3-5 for files whose objects
 * are durable. */
static int
commit_records(pqv_vault *v, struct add_file *files, size_t n, struct window *w,
    const struct pqv_add_options *opt)
{
    int rc;

    for (size_t i = 0; i < n; i++) {
        struct add_job *job = window_slot(v, w, 0, opt, 0);
        if (job == NULL) {
            w->rc = w->rc ? w->rc : PQV_E_NOMEM;
            break;
        }
        job->file = &files[i];
        job->job.run = record_job_run;
        job->plain_len = 0;
        window_submit(v, w, job);
        if (w->rc != 0)
            break;
    }
    window_drain(v, w, opt, 0);
    /* Even after a failure, make what was renamed durable before
     * reporting: a record that reached its name is committed. */
    if (w->rc != 0) {
        struct error_saved first;
        error_save(&first);
        (void)v->storage->ops->barrier(v->storage);
        error_restore(&first);
        return w->rc;
    }
    rc = v->storage->ops->barrier(v->storage);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (files[i].replacing && files[i].old.entry.nobjects > 0)
            delete_objects(v, files[i].old.object_ids, files[i].old.entry.nobjects);
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, files[i].name,
            files[i].replacing ? "replaced" : "added");
    }
    return v->storage->ops->barrier(v->storage);
}

/* add_batch(v, files, n, w, opt, total): objects, barrier, records. */
static int
add_batch(pqv_vault *v, struct add_file *files, size_t n, struct window *w,
    const struct pqv_add_options *opt, uint64_t total)
{
    struct error_saved first;
    int rc;

    for (size_t i = 0; i < n && w->rc == 0; i++) {
        struct add_file *f = &files[i];
        if ((rc = new_file_keys(f)) != 0) {
            w->rc = rc;
            break;
        }
        for (uint32_t k = 0; k < f->nobjects && w->rc == 0; k++) {
            uint64_t left = f->size - (uint64_t)k * PQV_OBJECT_MAX_PLAIN;
            size_t len = left > PQV_OBJECT_MAX_PLAIN ? PQV_OBJECT_MAX_PLAIN : (size_t)left;
            struct add_job *job = window_slot(v, w, len, opt, total);
            if (job == NULL) {
                w->rc = PQV_E_NOMEM;
                break;
            }
            job->file = f;
            job->index = k;
            job->read_ready = 0;
            job->job.run = object_job_run;
            window_submit(v, w, job);
        }
    }
    window_drain(v, w, opt, total);
    if (w->rc == 0)
        w->rc = v->storage->ops->barrier(v->storage);
    if (w->rc != 0)
        goto fail;
    return commit_records(v, files, n, w, opt);

fail:
    /* Nothing of this batch is committed: remove its objects (keeping the
     * detail of the failure, not of the cleanup). */
    rc = w->rc;
    error_save(&first);
    for (size_t i = 0; i < n; i++)
        if (files[i].ids != NULL)
            delete_objects(v, files[i].ids, files[i].nobjects);
    (void)v->storage->ops->barrier(v->storage);
    error_restore(&first);
    return rc;
}

static int
run_plan(pqv_vault *v, struct add_plan *plan, const struct pqv_add_options *opt)
{
    struct window w;
    int rc;

    if ((rc = prepare(v, plan, opt)) != 0)
        return rc;
    for (size_t i = 0; i < plan->nskipped; i++) {
        const char *path = plan->skipped[i];
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, path, "skipped (%s)",
            path + strlen(path) + 1);
    }
    if ((rc = window_init(v, &w)) != 0)
        return rc;
    for (size_t i = 0; i < plan->n && rc == 0; i += BATCH_FILES) {
        size_t n = plan->n - i < BATCH_FILES ? plan->n - i : BATCH_FILES;
        rc = add_batch(v, plan->files + i, n, &w, opt, plan->total_bytes);
    }
    window_free(&w);
    return rc;
}

static const struct pqv_add_options no_options = { 0, NULL, NULL, NULL, NULL };

int
pqv_vault_add_path(pqv_vault *v, const char *path, const char *name,
    const struct pqv_add_options *opt)
{
    struct add_plan plan;
    char norm[PQV_NAME_MAX + 1];
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (path == NULL)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    if ((rc = pqv_name_normalize(name != NULL ? name : path, norm, sizeof(norm))) != 0)
        return rc;
    memset(&plan, 0, sizeof(plan));
    if ((rc = walk(&plan, path, norm)) == 0)
        rc = run_plan(v, &plan, opt);
    plan_free(&plan);
    return rc;
}

/* Adding from a descriptor: its size is unknown until end of file, so
 * objects are read here, in order, and sealed and written on the pool. */
int
pqv_vault_add_fd(pqv_vault *v, int fd, const char *name, uint32_t mode, int64_t mtime_sec,
    const struct pqv_add_options *opt)
{
    struct add_plan plan;
    struct add_file *f;
    struct window w;
    char norm[PQV_NAME_MAX + 1];
    size_t cap = 0;
    int rc, eof = 0;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (name == NULL || fd < 0)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    if ((rc = pqv_name_normalize(name, norm, sizeof(norm))) != 0)
        return rc;
    memset(&plan, 0, sizeof(plan));
    if ((rc = plan_push(&plan, NULL, norm, PQV_ENTRY_FILE, NULL)) != 0)
        return rc;
    f = &plan.files[0];
    f->mode = mode & 07777;
    f->mtime_sec = mtime_sec;
    if ((rc = prepare(v, &plan, opt)) != 0 || (rc = window_init(v, &w)) != 0) {
        plan_free(&plan);
        return rc;
    }
    if ((rc = util_random(f->file_key, sizeof(f->file_key))) != 0)
        goto out;
    while (!eof && w.rc == 0) {
        struct add_job *job = window_slot(v, &w, PQV_OBJECT_MAX_PLAIN, opt, 0);
        ssize_t got;
        if (job == NULL) {
            w.rc = PQV_E_NOMEM;
            break;
        }
        /* Room and an id for the next object first: once plaintext is
         * read, nothing may fail before it goes to the job that wipes it. */
        if (f->nobjects == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            /* Jobs in flight read f->ids when they run: let them finish
             * before realloc may move (and free) the array. */
            window_drain(v, &w, opt, 0);
            void *p = realloc(f->ids, ncap * OBJECT_ID_BYTES);
            if (p == NULL) {
                w.rc = PQV_E_NOMEM;
                break;
            }
            f->ids = p;
            cap = ncap;
        }
        if ((w.rc = util_random(f->ids[f->nobjects], OBJECT_ID_BYTES)) != 0)
            break;
        if ((got = fsutil_read_all(fd, job->plain, PQV_OBJECT_MAX_PLAIN, "standard input")) < 0) {
            w.rc = (int)got;
            util_wipe(job->plain, PQV_OBJECT_MAX_PLAIN); /* whatever was read */
            break;
        }
        eof = (size_t)got < PQV_OBJECT_MAX_PLAIN;
        if (got == 0)
            break;
        job->file = f;
        job->index = f->nobjects++;
        job->plain_len = (size_t)got;
        job->read_ready = 1;
        job->job.run = object_job_run;
        f->size += (uint64_t)got;
        window_submit(v, &w, job);
    }
    window_drain(v, &w, opt, 0);
    if (w.rc == 0)
        w.rc = v->storage->ops->barrier(v->storage);
    if (w.rc != 0) {
        struct error_saved first;
        rc = w.rc;
        error_save(&first);
        delete_objects(v, f->ids, f->nobjects);
        (void)v->storage->ops->barrier(v->storage);
        error_restore(&first);
        goto out;
    }
    rc = commit_records(v, f, 1, &w, opt);
out:
    window_free(&w);
    plan_free(&plan);
    return rc;
}
