/*
 * add.c: storing files and trees (pqv_vault_add_path, pqv_vault_add_fd).
 *
 * A tree is walked from a descriptor of the directory the user named, one
 * component at a time, never following a link (a directory replaced by a
 * link during the walk is not followed out of the tree).  Each file is read
 * through one descriptor (source.c): what is stored is one state of the file,
 * never a mix; a file that changes while it is read is read again, up to
 * READ_ATTEMPTS times, then refused.  An entry that cannot be read is
 * reported and skipped; everything else is stored, and the add then fails
 * (PQV_E_IO) saying how many entries were not.
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
 *   5. objects of replaced records are deleted, and the entries left below
 *      a directory that became a file.
 * A failure before step 3 deletes the batch's objects; a crash leaves at
 * most orphans that check reports and gc removes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/util.h"
#include "vault/vault_internal.h"

#define BATCH_FILES 256
#define READ_ATTEMPTS 3

enum { FILE_OK = 0, FILE_FAILED = 1, FILE_CHANGED = 2 };

/* One file or directory to add. */
struct add_file {
    char *rel;              /* below the plan's root; NULL: from a descriptor */
    char *path;             /* for messages */
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
    struct record old;      /* the record replaced (its object ids) */
    struct source src;      /* open while its objects are read */
    int state;              /* FILE_OK, FILE_FAILED (reported), FILE_CHANGED */
    int attempts;
};

/* Something the walk found, reported once the add has passed its checks
 * (so a refused add says only why it was refused). */
struct note {
    int level;
    char *subject, *message;
};

struct add_plan {
    struct add_file *files;
    size_t n, cap;
    uint64_t total_bytes;
    int rootfd;             /* the directory the tree is read from */
    char *root;             /* its path */
    struct note *notes;
    size_t nnotes;
    uint64_t not_stored;    /* entries reported and skipped */
    struct record *stale;   /* entries below a directory replaced by a file */
    size_t nstale;
};

/* A unit of work on the pool: one object, or one record. */
struct add_job {
    struct pool_job job;
    pqv_vault *v;
    struct add_file *file;
    uint32_t index;
    uint8_t *plain, *sealed;
    size_t plain_len, plain_cap, sealed_cap;
    int read_ready;         /* the plaintext is in ${plain} already */
    int read_rc;            /* reading the source failed (or SOURCE_CHANGED) */
    struct error_saved read_error; /* why (errors are per thread) */
    int last;               /* the file's last object */
};

static void
file_clear(struct add_file *f)
{
    free(f->rel);
    free(f->path);
    free(f->name);
    free(f->ids);
    record_clear(&f->old);
    source_close(&f->src);
    util_wipe(f->file_key, sizeof(f->file_key));
}

static void
plan_free(struct add_plan *plan)
{
    for (size_t i = 0; i < plan->n; i++)
        file_clear(&plan->files[i]);
    free(plan->files);
    for (size_t i = 0; i < plan->nnotes; i++) {
        free(plan->notes[i].subject);
        free(plan->notes[i].message);
    }
    free(plan->notes);
    for (size_t i = 0; i < plan->nstale; i++)
        record_clear(&plan->stale[i]);
    free(plan->stale);
    if (plan->rootfd >= 0)
        close(plan->rootfd);
    free(plan->root);
    memset(plan, 0, sizeof(*plan));
    plan->rootfd = -1;
}

/* note(plan, level, subject, fmt, ...): remember a report for later; an
 * error also counts the entry as not stored. */
static int
note(struct add_plan *plan, int level, const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
note(struct add_plan *plan, int level, const char *subject, const char *fmt, ...)
{
    struct note *grown = realloc(plan->notes, (plan->nnotes + 1) * sizeof(*grown));
    struct note *n;
    va_list ap;
    int rc;

    if (grown == NULL)
        return PQV_E_NOMEM;
    plan->notes = grown;
    n = &plan->notes[plan->nnotes];
    va_start(ap, fmt);
    rc = vasprintf(&n->message, fmt, ap);
    va_end(ap);
    if (rc < 0 || (n->subject = strdup(subject)) == NULL) {
        if (rc >= 0)
            free(n->message);
        return PQV_E_NOMEM;
    }
    n->level = level;
    plan->nnotes++;
    if (level == PQV_REPORT_ERROR)
        plan->not_stored++;
    return 0;
}

static int
plan_push(struct add_plan *plan, const char *rel, const char *path, const char *name, int type,
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
    f->src.fd = -1;
    if ((rel != NULL && (f->rel = strdup(rel)) == NULL) || (f->path = strdup(path)) == NULL ||
        (f->name = strdup(name)) == NULL) {
        free(f->rel);
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

/* kind_name(mode): what a file that is not stored is, in words. */
static const char *
kind_name(mode_t mode)
{
    return S_ISLNK(mode) ? "symbolic link" : S_ISSOCK(mode) ? "socket" :
        S_ISFIFO(mode) ? "FIFO" : (S_ISCHR(mode) || S_ISBLK(mode)) ? "device" : "special file";
}

/* A directory entry read during the walk. */
struct dirent_stat {
    char *name;
    struct stat st;
};

static int
compare_dirents(const void *a, const void *b)
{
    return strcmp(((const struct dirent_stat *)a)->name, ((const struct dirent_stat *)b)->name);
}

/* read_dir(plan, rel, path, out, n): the entries of the directory ${rel}
 * below the root with their lstat, sorted by name. */
static int
read_dir(struct add_plan *plan, const char *rel, const char *path, struct dirent_stat **out,
    size_t *n)
{
    struct dirent_stat *list = NULL;
    size_t k = 0, cap = 0;
    struct dirent *de;
    DIR *d;
    int fd, rc;

    if ((rc = fsutil_open_dirs(plan->rootfd, plan->root, rel, FSUTIL_NOCREATE, 0, &fd)) != 0)
        return error_subject(rc, path);
    if ((d = fdopendir(fd)) == NULL) {
        rc = error_errno(path, "open directory", errno);
        close(fd);
        return rc;
    }
    while ((errno = 0, de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (k == cap) {
            cap = cap ? 2 * cap : 32;
            struct dirent_stat *p = realloc(list, cap * sizeof(*p));
            if (p == NULL) {
                rc = PQV_E_NOMEM;
                goto fail;
            }
            list = p;
        }
        if (fstatat(dirfd(d), de->d_name, &list[k].st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* vanished meanwhile */
        if ((list[k].name = strdup(de->d_name)) == NULL) {
            rc = PQV_E_NOMEM;
            goto fail;
        }
        k++;
    }
    if (errno != 0) {
        rc = error_errno(path, "read directory", errno);
        goto fail;
    }
    closedir(d);
    qsort(list, k, sizeof(*list), compare_dirents);
    *out = list;
    *n = k;
    return 0;

fail:
    closedir(d);
    for (size_t i = 0; i < k; i++)
        free(list[i].name);
    free(list);
    return rc;
}

/* walk(plan, rel, path, name): add the directory ${rel} (below the root,
 * ${path} in messages) and what is below it to the plan, as ${name}. */
static int
walk(struct add_plan *plan, const char *rel, const char *path, const char *name,
    const struct stat *st)
{
    struct dirent_stat *list = NULL;
    size_t n = 0;
    int rc;

    if ((rc = read_dir(plan, rel, path, &list, &n)) != 0) {
        if (rc == PQV_E_NOMEM)
            return rc;
        /* Unreadable: reported, and the rest of the tree is stored. */
        return note(plan, PQV_REPORT_ERROR, path, "not stored: %s", pqv_error_last()->reason);
    }
    rc = plan_push(plan, rel, path, name, PQV_ENTRY_DIR, st);
    for (size_t i = 0; i < n; i++) {
        char *crel = NULL, *cpath = NULL, *cname = NULL;
        const struct stat *cst = &list[i].st;
        if (rc != 0)
            goto next;
        if (asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "", list[i].name) < 0 ||
            asprintf(&cpath, "%s/%s", path, list[i].name) < 0 ||
            asprintf(&cname, "%s/%s", name, list[i].name) < 0) {
            crel = cpath = cname = NULL; /* (asprintf leaves them undefined) */
            rc = PQV_E_NOMEM;
        } else if (strlen(cname) > PQV_NAME_MAX) {
            rc = note(plan, PQV_REPORT_ERROR, cpath, "not stored: its name would be longer "
                "than %d bytes", PQV_NAME_MAX);
        } else if (S_ISREG(cst->st_mode)) {
            rc = plan_push(plan, crel, cpath, cname, PQV_ENTRY_FILE, cst);
        } else if (S_ISDIR(cst->st_mode)) {
            rc = walk(plan, crel, cpath, cname, cst);
        } else {
            rc = note(plan, PQV_REPORT_WARNING, cpath, "skipped (%s)", kind_name(cst->st_mode));
        }
next:
        free(crel);
        free(cpath);
        free(cname);
        free(list[i].name);
    }
    free(list);
    return rc;
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(((const struct add_file *)a)->name, ((const struct add_file *)b)->name);
}

static int
compare_records(const void *a, const void *b)
{
    return strcmp(((const struct record *)a)->entry.name, ((const struct record *)b)->entry.name);
}

/* find(cat, name): the catalogue's record named ${name} (sorted), or NULL. */
static struct record *
find(const struct catalogue *cat, const char *name)
{
    struct record key;

    key.entry.name = (char *)name;
    return bsearch(&key, cat->records, cat->n, sizeof(*cat->records), compare_records);
}

/* first_below(cat, name): index of the first record below "${name}/". */
static size_t
first_below(const struct catalogue *cat, const char *name)
{
    size_t lo = 0, hi = cat->n, len = strlen(name);

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *m = cat->records[mid].entry.name;
        int c = strncmp(m, name, len);
        if (c < 0 || (c == 0 && (unsigned char)m[len] < '/'))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* planned_dir(plan, name): whether the plan stores ${name} as a directory. */
static int
planned_dir(const struct add_plan *plan, const char *name)
{
    struct add_file key, *hit;

    key.name = (char *)name;
    hit = bsearch(&key, plan->files, plan->n, sizeof(*plan->files), compare_names);
    return hit != NULL && hit->type == PQV_ENTRY_DIR;
}

/* check_parents(plan, cat, name): no parent of ${name} may be a file in
 * the vault (unless this add makes it a directory). */
static int
check_parents(const struct add_plan *plan, const struct catalogue *cat, const char *name)
{
    char parent[PQV_NAME_MAX + 1];

    for (const char *p = strchr(name, '/'); p != NULL; p = strchr(p + 1, '/')) {
        struct record *r;
        snprintf(parent, sizeof(parent), "%.*s", (int)(p - name), name);
        if ((r = find(cat, parent)) != NULL && r->entry.type == PQV_ENTRY_FILE &&
            !planned_dir(plan, parent))
            return error_set(PQV_E_EXISTS, name, "%s is a file in the vault: nothing can be "
                "stored below it", parent);
    }
    return 0;
}

/* keep_stale(plan, cat, name): remember the entries below ${name}, a
 * directory being replaced by a file, to remove after the commit. */
static int
keep_stale(struct add_plan *plan, struct catalogue *cat, const char *name)
{
    for (size_t i = first_below(cat, name); i < cat->n && names_under(cat->records[i].entry.name,
         name); i++) {
        struct record *grown = realloc(plan->stale, (plan->nstale + 1) * sizeof(*grown));
        if (grown == NULL)
            return PQV_E_NOMEM;
        plan->stale = grown;
        plan->stale[plan->nstale++] = cat->records[i];
        memset(&cat->records[i], 0, sizeof(cat->records[i])); /* moved */
        cat->records[i].entry.name = strdup(plan->stale[plan->nstale - 1].entry.name);
        if (cat->records[i].entry.name == NULL)
            return PQV_E_NOMEM;
    }
    return 0;
}

/* prepare(v, plan, opt): hash names, refuse duplicates, existing names
 * (without force) and names that would be both a file and a directory;
 * take over the records being replaced.  Nothing is written before every
 * name has passed. */
static int
prepare(pqv_vault *v, struct add_plan *plan, const struct pqv_add_options *opt)
{
    struct names_walk w = { opt->report, opt->report_ctx, NULL, NULL, NULL, NULL, NULL };
    struct catalogue cat;
    uint64_t damaged = 0;
    int rc;

    qsort(plan->files, plan->n, sizeof(*plan->files), compare_names);
    w.damaged = &damaged;
    if ((rc = catalogue_load(v, &cat, &w)) != 0)
        return rc;
    qsort(cat.records, cat.n, sizeof(*cat.records), compare_records);
    for (size_t i = 0; i < plan->n && rc == 0; i++) {
        struct add_file *f = &plan->files[i];
        struct record *old;
        if (i > 0 && strcmp(f->name, plan->files[i - 1].name) == 0) {
            rc = error_set(PQV_E_INVAL, f->name, "given twice");
            break;
        }
        if ((rc = names_hash(v, f->name, f->hash)) != 0 ||
            (rc = check_parents(plan, &cat, f->name)) != 0)
            break;
        old = find(&cat, f->name);
        if (old == NULL && f->type == PQV_ENTRY_FILE && first_below(&cat, f->name) < cat.n &&
            names_under(cat.records[first_below(&cat, f->name)].entry.name, f->name)) {
            /* Stored only as the prefix of other names: a directory. */
            if (!opt->force) {
                rc = error_set(PQV_E_EXISTS, f->name, "already exists (a directory)");
                break;
            }
            rc = keep_stale(plan, &cat, f->name);
            continue;
        }
        if (old == NULL)
            continue;
        if (!opt->force) {
            rc = error_set(PQV_E_EXISTS, f->name, "already exists");
            break;
        }
        /* Replacing: the old objects are deleted after the commit, and a
         * directory that becomes a file leaves nothing below it. */
        f->replacing = 1;
        f->old = *old;
        memset(old, 0, sizeof(*old));
        if ((old->entry.name = strdup(f->name)) == NULL) {
            rc = PQV_E_NOMEM;
            break;
        }
        if (f->type == PQV_ENTRY_FILE)
            rc = keep_stale(plan, &cat, f->name);
    }
    catalogue_free(&cat);
    if (rc == 0 && damaged > 0)
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, NULL,
            "%llu damaged record%s could not be compared with the names added (run check)",
            (unsigned long long)damaged, damaged == 1 ? "" : "s");
    return rc;
}

static void
object_job_run(struct pool_job *pj)
{
    struct add_job *job = (struct add_job *)pj;
    struct add_file *f = job->file;
    char sname[STORAGE_NAME_MAX];
    size_t sealed_len = object_sealed_size(job->plain_len);
    int rc = 0;

    if (!job->read_ready) {
        job->read_rc = source_read(&f->src, (uint64_t)job->index * PQV_OBJECT_MAX_PLAIN,
            job->plain, job->plain_len, f->path);
        if (job->read_rc != 0) {
            error_save(&job->read_error);
            goto out; /* the file's problem, not the add's */
        }
    }
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
    struct add_plan *plan;
};

static int
window_init(pqv_vault *v, struct window *w, struct add_plan *plan)
{
    struct pool *pool = vault_pool(v);

    if (pool == NULL)
        return PQV_E_NOMEM;
    memset(w, 0, sizeof(*w));
    w->plan = plan;
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

/* finish_read(w, f): the last object of ${f} was read: was the file the
 * same from its first byte to its last? */
static void
finish_read(struct window *w, struct add_file *f)
{
    int rc;

    if (f->rel != NULL && f->state == FILE_OK) {
        rc = source_unchanged(&f->src, w->plan->rootfd, w->plan->root, f->rel, f->path);
        if (rc == SOURCE_CHANGED)
            f->state = FILE_CHANGED;
        else if (rc != 0)
            f->state = FILE_FAILED;
    }
    source_close(&f->src);
}

/* Wait for the oldest job in flight; remember the first failure. */
static void
window_retire(pqv_vault *v, struct window *w, const struct pqv_add_options *opt, uint64_t total)
{
    struct add_job *job = &w->jobs[w->oldest];
    int rc = pool_wait(vault_pool(v), &job->job);

    if (rc != 0 && w->rc == 0)
        w->rc = rc;
    if (job->job.run == object_job_run) {
        struct add_file *f = job->file;
        if (job->read_rc != 0 && f->state == FILE_OK) {
            if (job->read_rc == SOURCE_CHANGED) {
                f->state = FILE_CHANGED;
            } else {
                f->state = FILE_FAILED;
                error_restore(&job->read_error);
                vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path,
                    "not stored: %s", pqv_error_last()->reason);
                w->plan->not_stored++;
            }
        }
        if (job->last)
            finish_read(w, f);
        w->done_bytes += job->plain_len;
        if (opt->progress != NULL)
            opt->progress(opt->progress_ctx, w->done_bytes, total);
    }
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
    job->read_rc = 0;
    job->last = 0;
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

    free(f->ids);
    f->ids = NULL;
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

/* commit_records(v, files, n, w, opt): steps 3-4 for the files of a batch
 * read whole and unchanged. */
static int
commit_records(pqv_vault *v, struct add_file *files, size_t n, struct window *w,
    const struct pqv_add_options *opt)
{
    for (size_t i = 0; i < n; i++) {
        if (files[i].state != FILE_OK)
            continue;
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
    return v->storage->ops->barrier(v->storage);
}

/* after_commit(v, files, n, opt): step 5, and the reports. */
static int
after_commit(pqv_vault *v, struct add_file *files, size_t n, const struct pqv_add_options *opt)
{
    for (size_t i = 0; i < n; i++) {
        if (files[i].state != FILE_OK)
            continue;
        if (files[i].replacing && files[i].old.entry.nobjects > 0)
            delete_objects(v, files[i].old.object_ids, files[i].old.entry.nobjects);
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, files[i].name,
            files[i].replacing ? "replaced" : "added");
    }
    return v->storage->ops->barrier(v->storage);
}

/* open_source(v, w, f, opt): open ${f} for reading and take what is stored
 * from the state it has now. */
static int
open_source(struct window *w, struct add_file *f, const struct pqv_add_options *opt)
{
    int rc = source_open(&f->src, w->plan->rootfd, w->plan->root, f->rel, f->path);

    if (rc == PQV_E_NOMEM)
        return rc;
    if (rc != 0) {
        f->state = FILE_FAILED;
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path, "not stored: %s",
            pqv_error_last()->reason);
        w->plan->not_stored++;
        return 0;
    }
    f->mode = (uint32_t)(f->src.st.st_mode & 07777);
    f->mtime_sec = (int64_t)f->src.st.st_mtim.tv_sec;
    f->mtime_nsec = (uint32_t)f->src.st.st_mtim.tv_nsec;
    f->size = (uint64_t)f->src.st.st_size;
    return 0;
}

/* read_batch(v, files, n, w, opt, total): steps 1-2. */
static int
read_batch(pqv_vault *v, struct add_file *files, size_t n, struct window *w,
    const struct pqv_add_options *opt, uint64_t total)
{
    int rc;

    for (size_t i = 0; i < n && w->rc == 0; i++) {
        struct add_file *f = &files[i];
        f->state = FILE_OK;
        f->attempts++;
        if (f->type == PQV_ENTRY_FILE && f->rel != NULL) {
            if ((rc = open_source(w, f, opt)) != 0) {
                w->rc = rc;
                break;
            }
            if (f->state != FILE_OK)
                continue;
        }
        if ((rc = new_file_keys(f)) != 0) {
            w->rc = rc;
            break;
        }
        if (f->nobjects == 0 && f->type == PQV_ENTRY_FILE)
            finish_read(w, f);
        for (uint32_t k = 0; k < f->nobjects && w->rc == 0; k++) {
            struct add_job *job = window_slot(v, w, object_plain_len(&(struct pqv_entry){
                .size = f->size }, k), opt, total);
            if (job == NULL) {
                w->rc = PQV_E_NOMEM;
                break;
            }
            job->file = f;
            job->index = k;
            job->read_ready = 0;
            job->last = k + 1 == f->nobjects;
            job->job.run = object_job_run;
            window_submit(v, w, job);
        }
    }
    window_drain(v, w, opt, total);
    if (w->rc == 0)
        w->rc = v->storage->ops->barrier(v->storage);
    return w->rc;
}

/* drop_objects(v, files, n, all): delete the objects written for files
 * that will not be committed (all of them if ${all}). */
static void
drop_objects(pqv_vault *v, struct add_file *files, size_t n, int all)
{
    struct error_saved first;

    error_save(&first);
    for (size_t i = 0; i < n; i++)
        if (files[i].ids != NULL && (all || files[i].state != FILE_OK))
            delete_objects(v, files[i].ids, files[i].nobjects);
    (void)v->storage->ops->barrier(v->storage);
    error_restore(&first);
}

/* add_batch(v, files, n, w, opt, total): a batch, and again the files that
 * changed while they were read. */
static int
add_batch(pqv_vault *v, struct add_file *files, size_t n, struct window *w,
    const struct pqv_add_options *opt, uint64_t total)
{
    int rc, again;

    do {
        if ((rc = read_batch(v, files, n, w, opt, total)) != 0) {
            /* Nothing of this batch is committed: remove its objects. */
            drop_objects(v, files, n, 1);
            return rc;
        }
        drop_objects(v, files, n, 0);
        if ((rc = commit_records(v, files, n, w, opt)) != 0)
            return rc;
        if ((rc = after_commit(v, files, n, opt)) != 0)
            return rc;
        /* Files that changed while they were read: read again (a new
         * file key, new objects), and only those. */
        again = 0;
        for (size_t i = 0; i < n; i++) {
            struct add_file *f = &files[i];
            if (f->state == FILE_OK)
                f->state = -1; /* done */
            else if (f->state == FILE_CHANGED && f->attempts < READ_ATTEMPTS)
                again = 1;
            else if (f->state == FILE_CHANGED) {
                vault_report(opt->report, opt->report_ctx, PQV_REPORT_ERROR, f->path,
                    "not stored: it changed while it was being read, %d times", f->attempts);
                w->plan->not_stored++;
                f->state = -1;
            } else {
                f->state = -1; /* failed: reported */
            }
        }
        if (again) {
            /* Keep only the files to read again at the front. */
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (files[i].state != FILE_CHANGED)
                    continue;
                vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, files[i].path,
                    "changed while it was being read: reading it again");
                if (k != i) {
                    struct add_file t = files[k];
                    files[k] = files[i];
                    files[i] = t;
                }
                k++;
            }
            n = k;
        }
    } while (again);
    return 0;
}

/* remove_stale(v, plan, opt): entries left below directories that became
 * files: their records (commit points), then their objects. */
static int
remove_stale(pqv_vault *v, struct add_plan *plan, const struct pqv_add_options *opt)
{
    char sname[STORAGE_NAME_MAX];
    uint8_t hash[NAME_HASH_BYTES];
    int rc;

    if (plan->nstale == 0)
        return 0;
    for (size_t i = 0; i < plan->nstale; i++) {
        if ((rc = names_hash(v, plan->stale[i].entry.name, hash)) != 0)
            return rc;
        record_storage_name(hash, sname);
        rc = v->storage->ops->del(v->storage, sname);
        if (rc != 0 && rc != PQV_E_NOTFOUND)
            return rc;
    }
    if ((rc = v->storage->ops->barrier(v->storage)) != 0)
        return rc;
    for (size_t i = 0; i < plan->nstale; i++) {
        struct record *r = &plan->stale[i];
        if (r->entry.nobjects > 0)
            delete_objects(v, r->object_ids, r->entry.nobjects);
        vault_report(opt->report, opt->report_ctx, PQV_REPORT_INFO, r->entry.name,
            "removed (below what is now a file)");
    }
    return v->storage->ops->barrier(v->storage);
}

static int
run_plan(pqv_vault *v, struct add_plan *plan, const struct pqv_add_options *opt)
{
    struct window w;
    int rc;

    if ((rc = prepare(v, plan, opt)) != 0)
        return rc;
    for (size_t i = 0; i < plan->nnotes; i++)
        vault_report(opt->report, opt->report_ctx, plan->notes[i].level, plan->notes[i].subject,
            "%s", plan->notes[i].message);
    if ((rc = window_init(v, &w, plan)) != 0)
        return rc;
    for (size_t i = 0; i < plan->n && rc == 0; i += BATCH_FILES) {
        size_t n = plan->n - i < BATCH_FILES ? plan->n - i : BATCH_FILES;
        rc = add_batch(v, plan->files + i, n, &w, opt, plan->total_bytes);
    }
    window_free(&w);
    if (rc == 0)
        rc = remove_stale(v, plan, opt);
    if (rc == 0 && plan->not_stored > 0)
        rc = error_set(PQV_E_IO, NULL, "%llu entr%s not stored (reported above)",
            (unsigned long long)plan->not_stored, plan->not_stored == 1 ? "y" : "ies");
    return rc;
}

static const struct pqv_add_options no_options = { 0, NULL, NULL, NULL, NULL };

/* default_name(path, out, outlen): the stored name of ${path} when none is
 * given: its last component (as cp, rsync and tar -C do), "." and ".."
 * resolved to the directory's own name. */
static int
default_name(const char *path, char *out, size_t outlen)
{
    char *real = NULL;
    const char *base;
    size_t n = strlen(path);
    int rc;

    while (n > 1 && path[n - 1] == '/')
        n--;
    base = path + n;
    while (base > path && base[-1] != '/')
        base--;
    if ((size_t)(path + n - base) == 0 || (path + n - base == 1 && *base == '.') ||
        (path + n - base == 2 && base[0] == '.' && base[1] == '.')) {
        if ((real = realpath(path, NULL)) == NULL)
            return error_errno(path, "resolve", errno);
        base = strrchr(real, '/') != NULL ? strrchr(real, '/') + 1 : real;
        n = strlen(real);
        if (*base == '\0') {
            free(real);
            return error_set(PQV_E_INVAL, path, "has no name of its own (the root directory)");
        }
        rc = pqv_name_normalize(base, out, outlen);
        free(real);
        return rc;
    }
    if ((size_t)(path + n - base) >= outlen)
        return error_set(PQV_E_INVAL, path, "name too long");
    memcpy(out, base, (size_t)(path + n - base));
    out[path + n - base] = '\0';
    return pqv_name_normalize(out, out, outlen);
}

/* open_operand(plan, path, st, rel): the directory the tree is read from
 * (the operand itself, or its parent for a file), and the operand's path
 * below it. */
static int
open_operand(struct add_plan *plan, const char *path, const struct stat *st, const char **rel)
{
    char dir[4096];
    const char *base;

    if (S_ISDIR(st->st_mode)) {
        snprintf(dir, sizeof(dir), "%s", path);
        *rel = "";
    } else {
        fsutil_dirname(path, dir, sizeof(dir));
        base = strrchr(path, '/');
        *rel = base != NULL ? base + 1 : path;
    }
    /* The operand's own path is the user's to point anywhere: links in it
     * are followed (as cd would); nothing below it is. */
    if ((plan->rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return error_errno(dir, "open directory", errno);
    if ((plan->root = strdup(dir)) == NULL)
        return PQV_E_NOMEM;
    return 0;
}

int
pqv_vault_add_path(pqv_vault *v, const char *path, const char *name,
    const struct pqv_add_options *opt)
{
    struct add_plan plan;
    char norm[PQV_NAME_MAX + 1];
    const char *rel;
    struct stat st;
    int rc;

    if ((rc = vault_require_writer(v)) != 0)
        return rc;
    if (path == NULL)
        return PQV_E_INVAL;
    if (opt == NULL)
        opt = &no_options;
    if ((rc = name != NULL ? pqv_name_normalize(name, norm, sizeof(norm))
                           : default_name(path, norm, sizeof(norm))) != 0)
        return rc;
    if (lstat(path, &st) != 0)
        return error_errno(path, "stat", errno);
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return error_set(PQV_E_INVAL, path, "is a %s: not stored (regular files and "
            "directories are)", kind_name(st.st_mode));
    memset(&plan, 0, sizeof(plan));
    plan.rootfd = -1;
    if ((rc = open_operand(&plan, path, &st, &rel)) == 0) {
        if (S_ISREG(st.st_mode))
            rc = plan_push(&plan, rel, path, norm, PQV_ENTRY_FILE, &st);
        else
            rc = walk(&plan, rel, path, norm, &st);
    }
    if (rc == 0)
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
    plan.rootfd = -1;
    if ((rc = plan_push(&plan, NULL, "standard input", norm, PQV_ENTRY_FILE, NULL)) != 0)
        return rc;
    f = &plan.files[0];
    f->mode = mode & 07777;
    f->mtime_sec = mtime_sec;
    if ((rc = prepare(v, &plan, opt)) != 0 || (rc = window_init(v, &w, &plan)) != 0) {
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
        rc = w.rc;
        drop_objects(v, f, 1, 1);
        goto out;
    }
    f->state = FILE_OK;
    if ((rc = commit_records(v, f, 1, &w, opt)) == 0 && (rc = after_commit(v, f, 1, opt)) == 0)
        rc = remove_stale(v, &plan, opt);
out:
    window_free(&w);
    plan_free(&plan);
    return rc;
}
