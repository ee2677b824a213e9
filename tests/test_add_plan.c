/*
 * test_add_plan.c: an add's plan against the catalogue (src/vault/add_plan.c):
 * add_plan_prepare, add_plan_hard_links and add_plan_dry_run over plans and
 * loaded states the test builds by hand (no vault, no file system), then
 * once over a plan walked from a real tree by add_walk_operand.  What is
 * unchanged, changed or new; what --delete removes and what it keeps
 * (excluded names, names below an unreadable directory, names outside the
 * operand); a directory replaced by a file; names below a stored file; a
 * root added from elsewhere; hard-link groups; the dry run's counts.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "entry_fixture.h"
#include "harness.h"
#include "pqvault/aead.h"
#include "pqvault/match.h"
#include "pqvault/vault.h"
#include "vault/add_internal.h"
#include "vault/entry.h"
#include "vault/state.h"

/* ---- a loaded state, by hand ---- */

/* A stored entry: what add compares (kind, inode, times, size, target) and
 * where it was added from. */
struct rec {
    const char *name;
    int kind;
    uint64_t ino;
    int64_t mtime;
    uint32_t mtime_nsec;
    int64_t ctime;
    uint32_t ctime_nsec;
    uint64_t size;
    const char *target;
    const char *origin;
};

static int
compare_entries(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* state_of(st, recs, n): a loaded format-2 state of ${recs}, sorted by name
 * as state_load leaves it. */
static void
state_of(struct state *st, const struct rec *recs, size_t n)
{
    memset(st, 0, sizeof(*st));
    st->format = 2;
    st->loaded = 1;
    st->entries = calloc(n + 1, sizeof(*st->entries));
    if (st->entries == NULL)
        exit(2);
    for (size_t i = 0; i < n; i++) {
        struct entry *e = &st->entries[i];
        ef_init(e, recs[i].name, recs[i].kind);
        e->ino = recs[i].ino;
        e->dev = 1;
        e->mtime_sec = recs[i].mtime;
        e->mtime_nsec = recs[i].mtime_nsec;
        e->ctime_sec = recs[i].ctime;
        e->ctime_nsec = recs[i].ctime_nsec;
        e->size = recs[i].size;
        e->target = ef_dup(recs[i].target);
        e->origin = ef_dup(recs[i].origin);
        e->perm = recs[i].kind == KIND_DIR ? 0755 : 0644;
        e->epoch = 1;
    }
    st->n = n;
    qsort(st->entries, n, sizeof(*st->entries), compare_entries);
}

#define NRECS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- a plan, by hand ---- */

static struct stat
stat_of(const struct rec *r)
{
    struct stat s;

    memset(&s, 0, sizeof(s));
    s.st_mode = r->kind == KIND_DIR ? S_IFDIR | 0755 : r->kind == KIND_SYMLINK ? S_IFLNK | 0777
                                                                              : S_IFREG | 0644;
    s.st_dev = 1;
    s.st_ino = (ino_t)r->ino;
    s.st_nlink = r->kind == KIND_DIR ? 2 : 1;
    s.st_size = (off_t)r->size;
    s.st_blocks = (blkcnt_t)((r->size + 511) / 512); /* not sparse */
    s.st_mtim.tv_sec = (time_t)r->mtime;
    s.st_mtim.tv_nsec = (long)r->mtime_nsec;
    s.st_ctim.tv_sec = (time_t)r->ctime;
    s.st_ctim.tv_nsec = (long)r->ctime_nsec;
    return s;
}

/* plan_of(plan, root, origin, recs, n): the plan of an operand stored as
 * ${root} from ${origin}, the walk having found ${recs}. */
static void
plan_of(struct add_plan *plan, const char *root, const char *origin, const struct rec *recs,
    size_t n)
{
    add_walk_init(plan);
    plan->root_name = ef_dup(root);
    plan->origin = ef_dup(origin);
    for (size_t i = 0; i < n; i++) {
        struct stat s = stat_of(&recs[i]);
        if (add_walk_push(plan, recs[i].name, recs[i].name, recs[i].name, recs[i].kind, &s,
                recs[i].target) != 0)
            exit(2);
    }
}

static const struct add_file *
planned(const struct add_plan *plan, const char *name)
{
    for (size_t i = 0; i < plan->n; i++)
        if (strcmp(plan->files[i].name, name) == 0)
            return &plan->files[i];
    return NULL;
}

static int
compare_strs(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* stale_is(plan, want): the plan removes exactly the names ${want}
 * (NULL-terminated), each once; differences printed. */
static int
stale_is(const struct add_plan *plan, const char *const *want)
{
    size_t nwant = 0, ok = 1;

    while (want[nwant] != NULL)
        nwant++;
    if (plan->nstale > 0)
        qsort(plan->stale, plan->nstale, sizeof(*plan->stale), compare_strs);
    for (size_t i = 0; i < plan->nstale; i++) {
        int found = 0;
        for (size_t k = 0; k < nwant; k++)
            found |= strcmp(plan->stale[i], want[k]) == 0;
        if (!found || (i > 0 && strcmp(plan->stale[i - 1], plan->stale[i]) == 0)) {
            fprintf(stderr, "  removed, and should not be: %s\n", plan->stale[i]);
            ok = 0;
        }
    }
    for (size_t k = 0; k < nwant; k++) {
        int found = 0;
        for (size_t i = 0; i < plan->nstale; i++)
            found |= strcmp(plan->stale[i], want[k]) == 0;
        if (!found) {
            fprintf(stderr, "  not removed, and should be: %s\n", want[k]);
            ok = 0;
        }
    }
    return (int)ok;
}

static const struct pqv_add_options no_opt;

/* ---- unchanged, changed, new ---- */

/* An entry recorded with the same kind, inode, mtime, ctime and size (and
 * a link's target) is unchanged; any one of them different makes it
 * changed (stored again, "replacing"); force_read stores every entry
 * again.  The device is not compared (pqv_vault_add_path's contract names
 * the five above). */
static void
test_unchanged_or_changed(void)
{
    static const struct rec file = { "r", KIND_FILE, 10, 100, 5, 200, 6, 1000, NULL, "/src/r" };
    static const struct rec link = { "r", KIND_SYMLINK, 11, 100, 5, 200, 6, 7, "target", "/src/r" };
    static const struct rec dir = { "r", KIND_DIR, 12, 100, 5, 200, 6, 4096, NULL, "/src/r" };
    struct {
        const char *what;
        const struct rec *stored;
        struct rec walked;
        int force_read, dev_differs;
        int unchanged;
    } cases[] = {
        { "file as recorded", &file, file, 0, 0, 1 },
        { "file on another device", &file, file, 0, 1, 1 },
        { "file of another size", &file, file, 0, 0, 0 },
        { "file of another mtime", &file, file, 0, 0, 0 },
        { "file of another mtime nanosecond", &file, file, 0, 0, 0 },
        { "file of another ctime", &file, file, 0, 0, 0 },
        { "file of another ctime nanosecond", &file, file, 0, 0, 0 },
        { "file of another inode", &file, file, 0, 0, 0 },
        { "file now a directory", &file, dir, 0, 0, 0 },
        { "file, force_read", &file, file, 1, 0, 0 },
        { "link as recorded", &link, link, 0, 0, 1 },
        { "link to another target", &link, link, 0, 0, 0 },
        { "link now a file", &link, file, 0, 0, 0 },
        { "directory as recorded", &dir, dir, 0, 0, 1 },
        { "directory of another size (not compared)", &dir, dir, 0, 0, 1 },
        { "directory of another ctime", &dir, dir, 0, 0, 0 },
    };

    cases[2].walked.size++;
    cases[3].walked.mtime++;
    cases[4].walked.mtime_nsec++;
    cases[5].walked.ctime--;
    cases[6].walked.ctime_nsec++;
    cases[7].walked.ino++;
    cases[8].walked.ino = file.ino;
    cases[8].walked.mtime = file.mtime;
    cases[11].walked.target = "another";
    cases[12].walked.ino = link.ino;
    cases[14].walked.size = 8192;
    cases[15].walked.ctime++;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct state st;
        struct add_plan plan;
        struct pqv_add_options opt = no_opt;
        const struct add_file *f;
        state_of(&st, cases[i].stored, 1);
        plan_of(&plan, "r", "/src/r", &cases[i].walked, 1);
        if (cases[i].dev_differs)
            plan.files[0].st.st_dev = 2;
        opt.force_read = cases[i].force_read;
        CHECK_EQ_INT(add_plan_prepare(&st, &plan, &opt), 0);
        f = planned(&plan, "r");
        if (f == NULL || f->unchanged != cases[i].unchanged || f->replacing == cases[i].unchanged) {
            CHECK(!"decided wrong");
            fprintf(stderr, "  case \"%s\": unchanged %d replacing %d\n", cases[i].what,
                f ? f->unchanged : -1, f ? f->replacing : -1);
        }
        CHECK_EQ_INT(plan.nstale, 0);
        add_walk_free(&plan);
        state_free(&st);
    }
}

/* A name the state does not hold is new: neither unchanged nor replacing;
 * the plan is sorted by name; nothing else is touched. */
static void
test_new_names(void)
{
    static const struct rec stored[] = {
        { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, "/src/r" },
        { "r/a", KIND_FILE, 2, 10, 0, 10, 0, 5, NULL, NULL },
    };
    static const struct rec walked[] = {
        { "r/new", KIND_FILE, 3, 10, 0, 10, 0, 5, NULL, NULL },
        { "r/a", KIND_FILE, 2, 10, 0, 10, 0, 5, NULL, NULL },
        { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, NULL },
        { "r/new-dir", KIND_DIR, 4, 10, 0, 10, 0, 0, NULL, NULL },
    };
    struct state st;
    struct add_plan plan;
    const struct add_file *f;

    state_of(&st, stored, NRECS(stored));
    plan_of(&plan, "r", "/src/r", walked, NRECS(walked));
    CHECK_EQ_INT(add_plan_prepare(&st, &plan, &no_opt), 0);
    for (size_t i = 1; i < plan.n; i++)
        CHECK(strcmp(plan.files[i - 1].name, plan.files[i].name) < 0);
    CHECK((f = planned(&plan, "r/new")) != NULL && !f->unchanged && !f->replacing);
    CHECK((f = planned(&plan, "r/new-dir")) != NULL && !f->unchanged && !f->replacing);
    CHECK((f = planned(&plan, "r/a")) != NULL && f->unchanged);
    CHECK((f = planned(&plan, "r")) != NULL && f->unchanged);
    CHECK_EQ_INT(plan.nstale, 0);
    add_walk_free(&plan);
    state_free(&st);
}

/* A name given twice in one plan is refused. */
static void
test_given_twice(void)
{
    static const struct rec walked[] = {
        { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, NULL },
        { "r/a", KIND_FILE, 2, 10, 0, 10, 0, 5, NULL, NULL },
        { "r/a", KIND_FILE, 3, 10, 0, 10, 0, 5, NULL, NULL },
    };
    struct state st;
    struct add_plan plan;

    state_of(&st, NULL, 0);
    plan_of(&plan, "r", "/src/r", walked, NRECS(walked));
    CHECK_EQ_INT(add_plan_prepare(&st, &plan, &no_opt), PQV_E_INVAL);
    add_walk_free(&plan);
    state_free(&st);
}

/* ---- --delete ---- */

/* The tree stored as "r" had more names than the walk finds now. */
static const struct rec stored_tree[] = {
    { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, "/src/r" },
    { "r/a", KIND_FILE, 2, 10, 0, 10, 0, 5, NULL, NULL },
    { "r/b", KIND_FILE, 3, 10, 0, 10, 0, 5, NULL, NULL },
    { "r/sub", KIND_DIR, 4, 10, 0, 10, 0, 0, NULL, NULL },
    { "r/sub/c", KIND_FILE, 5, 10, 0, 10, 0, 5, NULL, NULL },
    { "r/x.tmp", KIND_FILE, 6, 10, 0, 10, 0, 5, NULL, NULL },
    { "r/sub/y.tmp", KIND_FILE, 7, 10, 0, 10, 0, 5, NULL, NULL },
    { "r/cache", KIND_DIR, 8, 10, 0, 10, 0, 0, NULL, NULL },
    { "r/cache/blob", KIND_FILE, 9, 10, 0, 10, 0, 5, NULL, NULL },
    { "r/cache/deeper", KIND_DIR, 10, 10, 0, 10, 0, 0, NULL, NULL },
    { "r/cache/deeper/blob", KIND_FILE, 11, 10, 0, 10, 0, 5, NULL, NULL },
    { "r/locked", KIND_DIR, 12, 10, 0, 10, 0, 0, NULL, NULL },
    { "r/locked/secret", KIND_FILE, 13, 10, 0, 10, 0, 5, NULL, NULL },
    /* outside the operand */
    { "q", KIND_FILE, 14, 10, 0, 10, 0, 5, NULL, "/src/q" },
    { "rr", KIND_FILE, 15, 10, 0, 10, 0, 5, NULL, "/src/rr" },
    { "s/x", KIND_FILE, 16, 10, 0, 10, 0, 5, NULL, "/src/s/x" },
};

/* What the walk finds: r, r/a and r/sub (r/locked could not be read; x.tmp,
 * cache and the .tmp below sub were excluded). */
static const struct rec walked_tree[] = {
    { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, NULL },
    { "r/a", KIND_FILE, 2, 10, 0, 10, 0, 5, NULL, NULL },
    { "r/sub", KIND_DIR, 4, 10, 0, 10, 0, 0, NULL, NULL },
};

/* delete_plan(st, plan, m, delete): the walked tree prepared against the
 * stored one, r/locked unreadable, ${m} the exclusion rules. */
static int
delete_plan(struct state *st, struct add_plan *plan, const pqv_match *m, int delete_missing,
    const struct rec *stored, size_t nstored)
{
    struct pqv_add_options opt = no_opt;

    state_of(st, stored, nstored);
    plan_of(plan, "r", "/src/r", walked_tree, NRECS(walked_tree));
    plan->unreadable = calloc(1, sizeof(char *));
    if (plan->unreadable == NULL)
        exit(2);
    plan->unreadable[0] = ef_dup("r/locked");
    plan->nunreadable = 1;
    opt.delete_missing = delete_missing;
    opt.exclude = m;
    return add_plan_prepare(st, plan, &opt);
}

static pqv_match *
rules(const char *const *patterns)
{
    pqv_match *m = NULL;

    if (pqv_match_new(&m, 0) != 0)
        exit(2);
    for (; *patterns != NULL; patterns++)
        if (pqv_match_add(m, *patterns) != 0)
            exit(2);
    return m;
}

/* Without --delete nothing gone is removed; with it, the stored names below
 * the operand that the walk did not find are, and only those: not names
 * outside the operand, not what is below the unreadable directory. */
static void
test_delete_missing(void)
{
    static const char *const none[] = { NULL };
    static const char *const gone[] = { "r/b", "r/sub/c", "r/x.tmp", "r/sub/y.tmp", "r/cache",
        "r/cache/blob", "r/cache/deeper", "r/cache/deeper/blob", NULL };
    struct state st;
    struct add_plan plan;

    CHECK_EQ_INT(delete_plan(&st, &plan, NULL, 0, stored_tree, NRECS(stored_tree)), 0);
    CHECK(stale_is(&plan, none));
    add_walk_free(&plan);
    state_free(&st);
    CHECK_EQ_INT(delete_plan(&st, &plan, NULL, 1, stored_tree, NRECS(stored_tree)), 0);
    CHECK(stale_is(&plan, gone));
    add_walk_free(&plan);
    state_free(&st);
}

/* With --delete, names the exclusion rules leave out are kept (as rsync
 * keeps them), tested relative to the operand: a pattern of files at any
 * depth, and a directory pattern, whose directory keeps everything below
 * it too (the walk never descends into an excluded directory). */
static void
test_delete_keeps_excluded(void)
{
    static const char *const patterns[] = { "*.tmp", "cache/", NULL };
    static const char *const gone[] = { "r/b", "r/sub/c", NULL };
    static const char *const anchored[] = { "/x.tmp", NULL };
    static const char *const gone_anchored[] = { "r/b", "r/sub/c", "r/sub/y.tmp", "r/cache",
        "r/cache/blob", "r/cache/deeper", "r/cache/deeper/blob", NULL };
    struct state st;
    struct add_plan plan;
    pqv_match *m = rules(patterns);

    CHECK_EQ_INT(delete_plan(&st, &plan, m, 1, stored_tree, NRECS(stored_tree)), 0);
    CHECK(stale_is(&plan, gone));
    add_walk_free(&plan);
    state_free(&st);
    pqv_match_free(m);
    /* An anchored pattern keeps its name only. */
    m = rules(anchored);
    CHECK_EQ_INT(delete_plan(&st, &plan, m, 1, stored_tree, NRECS(stored_tree)), 0);
    CHECK(stale_is(&plan, gone_anchored));
    add_walk_free(&plan);
    state_free(&st);
    pqv_match_free(m);
}

/* Names that sort between the operand and its children ("r-1", "r.bak":
 * '-' and '.' sort before '/') change nothing: --delete still finds the
 * operand's gone names, and leaves the neighbours alone; with any number
 * of names before them (the binary search for "r" takes every path). */
static void
test_delete_with_neighbours(void)
{
    static const char *const gone[] = { "r/b", "r/sub/c", "r/x.tmp", "r/sub/y.tmp", "r/cache",
        "r/cache/blob", "r/cache/deeper", "r/cache/deeper/blob", NULL };
    static char names[16][8];

    for (size_t before = 0; before < 16; before++) {
        struct rec stored[16 + NRECS(stored_tree) + 3];
        struct state st;
        struct add_plan plan;
        size_t n = 0;
        for (size_t i = 0; i < before; i++) {
            snprintf(names[i], sizeof(names[i]), "a%02zu", i);
            stored[n++] = (struct rec){ names[i], KIND_FILE, 100 + i, 10, 0, 10, 0, 5, NULL, "/x" };
        }
        memcpy(stored + n, stored_tree, sizeof(stored_tree));
        n += NRECS(stored_tree);
        stored[n++] = (struct rec){ "r-1", KIND_FILE, 20, 10, 0, 10, 0, 5, NULL, "/a" };
        stored[n++] = (struct rec){ "r.bak", KIND_DIR, 21, 10, 0, 10, 0, 0, NULL, "/b" };
        stored[n++] = (struct rec){ "r.bak/old", KIND_FILE, 22, 10, 0, 10, 0, 5, NULL, NULL };
        CHECK_EQ_INT(delete_plan(&st, &plan, NULL, 1, stored, n), 0);
        if (!stale_is(&plan, gone)) {
            CHECK(!"--delete missed names");
            fprintf(stderr, "  with %zu names before it\n", before);
        }
        add_walk_free(&plan);
        state_free(&st);
    }
}

/* ---- a directory replaced by a file; names below files ---- */

/* A stored directory that the walk finds as a file (or a link) is stored
 * again and everything below it removed in the same epoch; so is a
 * directory the catalogue knows only as the prefix of other names. */
static void
test_directory_becomes_file(void)
{
    static const struct rec stored[] = {
        { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, "/src/r" },
        { "r/a", KIND_FILE, 2, 10, 0, 10, 0, 5, NULL, NULL },
        { "r/b", KIND_DIR, 3, 10, 0, 10, 0, 0, NULL, NULL },
        { "r/b/c", KIND_FILE, 4, 10, 0, 10, 0, 5, NULL, NULL },
        { "implied/x", KIND_FILE, 5, 10, 0, 10, 0, 5, NULL, "/src/implied/x" },
        { "implied/y/z", KIND_FILE, 6, 10, 0, 10, 0, 5, NULL, "/src/implied/y/z" },
        { "rr", KIND_FILE, 7, 10, 0, 10, 0, 5, NULL, "/src/rr" },
    };
    static const struct rec as_file = { "r", KIND_FILE, 1, 10, 0, 11, 0, 5, NULL, NULL };
    static const struct rec as_link = { "r", KIND_SYMLINK, 1, 10, 0, 11, 0, 5, "t", NULL };
    static const struct rec implied = { "implied", KIND_FILE, 9, 10, 0, 10, 0, 5, NULL, NULL };
    static const struct rec implied_dir = { "implied", KIND_DIR, 9, 10, 0, 10, 0, 0, NULL, NULL };
    static const char *const below_r[] = { "r/a", "r/b", "r/b/c", NULL };
    static const char *const below_implied[] = { "implied/x", "implied/y/z", NULL };
    static const char *const none[] = { NULL };
    struct state st;
    struct add_plan plan;
    const struct add_file *f;

    state_of(&st, stored, NRECS(stored));
    plan_of(&plan, "r", "/src/r", &as_file, 1);
    CHECK_EQ_INT(add_plan_prepare(&st, &plan, &no_opt), 0);
    CHECK((f = planned(&plan, "r")) != NULL && f->replacing);
    CHECK(stale_is(&plan, below_r));
    add_walk_free(&plan);
    plan_of(&plan, "r", "/src/r", &as_link, 1);
    CHECK_EQ_INT(add_plan_prepare(&st, &plan, &no_opt), 0);
    CHECK(stale_is(&plan, below_r));
    add_walk_free(&plan);
    plan_of(&plan, "implied", NULL, &implied, 1);
    CHECK_EQ_INT(add_plan_prepare(&st, &plan, &no_opt), 0);
    CHECK((f = planned(&plan, "implied")) != NULL && !f->replacing && !f->unchanged);
    CHECK(stale_is(&plan, below_implied));
    add_walk_free(&plan);
    /* Made a directory: nothing removed. */
    plan_of(&plan, "implied", NULL, &implied_dir, 1);
    CHECK_EQ_INT(add_plan_prepare(&st, &plan, &no_opt), 0);
    CHECK(stale_is(&plan, none));
    add_walk_free(&plan);
    state_free(&st);
}

/* The same with neighbours that sort between the directory and its
 * children ("r-1", "r.bak": '-' and '.' sort before '/'): everything below
 * "r" is still removed, the neighbours are not; with any number of names
 * before them (the binary search for "r" takes every path). */
static void
test_directory_becomes_file_with_neighbours(void)
{
    static const struct rec tail[] = {
        { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, "/src/r" },
        { "r-1", KIND_FILE, 7, 10, 0, 10, 0, 5, NULL, "/src/r-1" },
        { "r.bak", KIND_FILE, 8, 10, 0, 10, 0, 5, NULL, "/src/r.bak" },
        { "r/a", KIND_FILE, 2, 10, 0, 10, 0, 5, NULL, NULL },
        { "r/b", KIND_DIR, 3, 10, 0, 10, 0, 0, NULL, NULL },
        { "r/b/c", KIND_FILE, 4, 10, 0, 10, 0, 5, NULL, NULL },
    };
    static const struct rec as_file = { "r", KIND_FILE, 1, 10, 0, 11, 0, 5, NULL, NULL };
    static const char *const below_r[] = { "r/a", "r/b", "r/b/c", NULL };
    static char names[16][8];

    for (size_t before = 0; before < 16; before++) {
        struct rec more[16 + NRECS(tail)];
        struct state st;
        struct add_plan plan;
        size_t n = 0;
        for (size_t i = 0; i < before; i++) {
            snprintf(names[i], sizeof(names[i]), "a%02zu", i);
            more[n++] = (struct rec){ names[i], KIND_FILE, 100 + i, 10, 0, 10, 0, 5, NULL, "/x" };
        }
        memcpy(more + n, tail, sizeof(tail));
        n += NRECS(tail);
        state_of(&st, more, n);
        plan_of(&plan, "r", "/src/r", &as_file, 1);
        CHECK_EQ_INT(add_plan_prepare(&st, &plan, &no_opt), 0);
        if (!stale_is(&plan, below_r)) {
            CHECK(!"not everything below the directory is removed");
            fprintf(stderr, "  with %zu names before it\n", before);
        }
        add_walk_free(&plan);
        state_free(&st);
    }
}

/* A name below a stored file or link is refused (PQV_E_EXISTS), at any
 * depth, unless this add makes that file a directory; below a directory,
 * or below a name that only starts like the file, it is fine. */
static void
test_name_below_file(void)
{
    static const struct rec stored[] = {
        { "f", KIND_FILE, 1, 10, 0, 10, 0, 5, NULL, "/src/f" },
        { "a", KIND_DIR, 2, 10, 0, 10, 0, 0, NULL, "/src/a" },
        { "a/f", KIND_FILE, 3, 10, 0, 10, 0, 5, NULL, NULL },
        { "l", KIND_SYMLINK, 4, 10, 0, 10, 0, 1, "f", "/src/l" },
        { "d", KIND_DIR, 5, 10, 0, 10, 0, 0, NULL, "/src/d" },
    };
    static const struct rec f_x[] = { { "f/x", KIND_FILE, 9, 1, 0, 1, 0, 1, NULL, NULL } };
    static const struct rec deep[] = { { "a/f/g/h", KIND_FILE, 9, 1, 0, 1, 0, 1, NULL, NULL } };
    static const struct rec l_x[] = { { "l/x", KIND_DIR, 9, 1, 0, 1, 0, 0, NULL, NULL } };
    static const struct rec d_x[] = { { "d/x", KIND_FILE, 9, 1, 0, 1, 0, 1, NULL, NULL } };
    static const struct rec f2_x[] = { { "f2/x", KIND_FILE, 9, 1, 0, 1, 0, 1, NULL, NULL } };
    static const struct rec f_dir[] = {
        { "f", KIND_DIR, 1, 10, 0, 11, 0, 0, NULL, NULL },
        { "f/x", KIND_FILE, 9, 1, 0, 1, 0, 1, NULL, NULL },
    };
    static const struct rec deep_dirs[] = {
        { "a/f", KIND_DIR, 3, 10, 0, 11, 0, 0, NULL, NULL },
        { "a/f/g", KIND_DIR, 8, 10, 0, 11, 0, 0, NULL, NULL },
        { "a/f/g/h", KIND_FILE, 9, 1, 0, 1, 0, 1, NULL, NULL },
    };
    const struct {
        const char *what, *root;
        const struct rec *walked;
        size_t n;
        int rc;
    } cases[] = {
        { "below a file", "f/x", f_x, 1, PQV_E_EXISTS },
        { "deep below a file", "a/f/g/h", deep, 1, PQV_E_EXISTS },
        { "below a link", "l/x", l_x, 1, PQV_E_EXISTS },
        { "below a directory", "d/x", d_x, 1, 0 },
        { "below a name that starts like a file", "f2/x", f2_x, 1, 0 },
        { "the file made a directory", "f", f_dir, 2, 0 },
        { "the file made a directory, deep", "a/f", deep_dirs, 3, 0 },
    };
    struct state st;

    state_of(&st, stored, NRECS(stored));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct add_plan plan;
        int rc;
        plan_of(&plan, cases[i].root, NULL, cases[i].walked, cases[i].n);
        if ((rc = add_plan_prepare(&st, &plan, &no_opt)) != cases[i].rc) {
            CHECK(!"decided wrong");
            fprintf(stderr, "  case \"%s\": %d\n", cases[i].what, rc);
        }
        if (rc == PQV_E_EXISTS)
            CHECK(strstr(pqv_error_last()->reason, "is a file in the vault") != NULL);
        add_walk_free(&plan);
    }
    state_free(&st);
}

/* The same root name from another origin is another tree: refused
 * (PQV_E_EXISTS) unless force; the same origin, an unknown one (a
 * stream), or a name the vault does not hold are fine; a root below a
 * stored tree inherits its ancestor's origin. */
static void
test_root_from_another_origin(void)
{
    static const struct rec stored[] = {
        { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, "/src/one" },
        { "r/a", KIND_FILE, 2, 10, 0, 10, 0, 5, NULL, NULL },
        { "r/a2", KIND_FILE, 3, 10, 0, 10, 0, 5, NULL, NULL },
    };
    static const struct rec r[] = { { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, NULL } };
    static const struct rec ra[] = { { "r/a", KIND_FILE, 2, 10, 0, 10, 0, 5, NULL, NULL } };
    static const struct rec rnew[] = { { "r/new", KIND_FILE, 9, 10, 0, 10, 0, 5, NULL, NULL } };
    const struct {
        const char *what, *root, *origin;
        const struct rec *walked;
        int force, rc;
    } cases[] = {
        { "another origin", "r", "/src/two", r, 0, PQV_E_EXISTS },
        { "another origin, force", "r", "/src/two", r, 1, 0 },
        { "the same origin", "r", "/src/one", r, 0, 0 },
        { "an origin that starts like it", "r", "/src/one2", r, 0, PQV_E_EXISTS },
        { "no origin (a stream)", "r", NULL, r, 0, 0 },
        { "below: the inherited origin", "r/a", "/src/one/a", ra, 0, 0 },
        { "below: another origin", "r/a", "/elsewhere/a", ra, 0, PQV_E_EXISTS },
        { "a new name below", "r/new", "/elsewhere/new", rnew, 0, 0 },
    };
    struct state st;

    state_of(&st, stored, NRECS(stored));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct add_plan plan;
        struct pqv_add_options opt = no_opt;
        int rc;
        plan_of(&plan, cases[i].root, cases[i].origin, cases[i].walked, 1);
        opt.force = cases[i].force;
        if ((rc = add_plan_prepare(&st, &plan, &opt)) != cases[i].rc) {
            CHECK(!"decided wrong");
            fprintf(stderr, "  case \"%s\": %d\n", cases[i].what, rc);
        }
        add_walk_free(&plan);
    }
    state_free(&st);
}

/* ---- hard links ---- */

/* Files of one device and inode with more than one link share one nonzero
 * group id; another such file has another id; a single name of a file of
 * several links, a file of one link, a directory, or the same inode on
 * another device get none. */
static void
test_hard_links(void)
{
    struct {
        const char *name;
        int kind;
        dev_t dev;
        ino_t ino;
        nlink_t nlink;
    } files[] = {
        { "a", KIND_FILE, 1, 100, 3 }, { "b", KIND_FILE, 1, 100, 3 }, { "c", KIND_FILE, 1, 100, 3 },
        { "d", KIND_FILE, 1, 200, 2 }, { "e", KIND_FILE, 1, 300, 2 }, { "f", KIND_FILE, 2, 300, 2 },
        { "g", KIND_FILE, 1, 400, 2 }, { "h", KIND_FILE, 1, 400, 2 }, { "i", KIND_FILE, 1, 500, 1 },
        { "j", KIND_DIR, 1, 600, 4 }, { "k", KIND_DIR, 1, 600, 4 }, { "l", KIND_SYMLINK, 1, 700, 2 },
        { "m", KIND_SYMLINK, 1, 700, 2 },
    };
    struct add_plan plan;
    uint64_t g[sizeof(files) / sizeof(files[0])];

    add_walk_init(&plan);
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        struct stat s;
        memset(&s, 0, sizeof(s));
        s.st_mode = files[i].kind == KIND_DIR ? S_IFDIR : files[i].kind == KIND_FILE ? S_IFREG
                                                                                      : S_IFLNK;
        s.st_dev = files[i].dev;
        s.st_ino = files[i].ino;
        s.st_nlink = files[i].nlink;
        REQUIRE(add_walk_push(&plan, files[i].name, files[i].name, files[i].name, files[i].kind, &s,
                    files[i].kind == KIND_SYMLINK ? "t" : NULL) == 0);
    }
    REQUIRE(add_plan_hard_links(&plan) == 0);
    for (size_t i = 0; i < plan.n; i++)
        g[i] = plan.files[i].hlgroup;
    CHECK(g[0] != 0 && g[0] == g[1] && g[1] == g[2]);
    CHECK_EQ_INT(g[3], 0);
    CHECK_EQ_INT(g[4], 0);
    CHECK_EQ_INT(g[5], 0);
    CHECK(g[6] != 0 && g[6] == g[7] && g[6] != g[0]);
    CHECK_EQ_INT(g[8], 0);
    CHECK_EQ_INT(g[9], 0);
    CHECK_EQ_INT(g[10], 0);
    CHECK_EQ_INT(g[11], 0);
    CHECK_EQ_INT(g[12], 0);
    add_walk_free(&plan);
}

/* ---- the dry run ---- */

struct said {
    char lines[16][128];
    size_t n;
};

static void
collect(void *ctx, int level, const char *subject, const char *message)
{
    struct said *s = ctx;

    (void)level;
    if (s->n < 16)
        snprintf(s->lines[s->n++], sizeof(s->lines[0]), "%s: %s", subject, message);
}

static int
was_said(const struct said *s, const char *line)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->lines[i], line) == 0)
            return 1;
    return 0;
}

/* The dry run counts what add would do: added and changed entries of every
 * kind, files and their bytes (not those unchanged), removals; and says
 * each (the unchanged ones only when verbose). */
static void
test_dry_run(void)
{
    static const struct rec stored[] = {
        { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, "/src/r" },
        { "r/changed", KIND_FILE, 2, 10, 0, 10, 0, 50, NULL, NULL },
        { "r/same", KIND_FILE, 3, 10, 0, 10, 0, 1000, NULL, NULL },
        { "r/gone", KIND_FILE, 4, 10, 0, 10, 0, 7, NULL, NULL },
        { "r/olddir", KIND_DIR, 5, 10, 0, 10, 0, 0, NULL, NULL },
        { "r/olddir/x", KIND_FILE, 6, 10, 0, 10, 0, 9, NULL, NULL },
    };
    static const struct rec walked[] = {
        { "r", KIND_DIR, 1, 10, 0, 10, 0, 0, NULL, NULL },
        { "r/changed", KIND_FILE, 2, 10, 0, 10, 0, 60, NULL, NULL },
        { "r/same", KIND_FILE, 3, 10, 0, 10, 0, 1000, NULL, NULL },
        { "r/new", KIND_FILE, 7, 10, 0, 10, 0, 100, NULL, NULL },
        { "r/newdir", KIND_DIR, 8, 10, 0, 10, 0, 0, NULL, NULL },
        { "r/link", KIND_SYMLINK, 9, 10, 0, 10, 0, 3, "new", NULL },
        { "r/olddir", KIND_FILE, 5, 10, 0, 11, 0, 40, NULL, NULL },
    };
    struct state st;
    struct add_plan plan;
    struct pqv_add_options opt = no_opt;
    struct pqv_add_result res;
    struct said said;

    state_of(&st, stored, NRECS(stored));
    plan_of(&plan, "r", "/src/r", walked, NRECS(walked));
    opt.delete_missing = 1;
    REQUIRE(add_plan_prepare(&st, &plan, &opt) == 0);
    memset(&res, 0, sizeof(res));
    memset(&said, 0, sizeof(said));
    opt.report = collect;
    opt.report_ctx = &said;
    add_plan_dry_run(&plan, &opt, &res);
    CHECK_EQ_INT(res.added, 3);       /* new, newdir, link */
    CHECK_EQ_INT(res.changed, 2);     /* changed, olddir (now a file) */
    CHECK_EQ_INT(res.unchanged, 2);   /* r, same */
    CHECK_EQ_INT(res.removed, 2);     /* gone, olddir/x */
    CHECK_EQ_INT(res.files, 3);       /* changed, new, olddir */
    CHECK_EQ_INT(res.bytes, 60 + 100 + 40);
    CHECK(was_said(&said, "r/new: would be added"));
    CHECK(was_said(&said, "r/changed: would be stored again (changed)"));
    CHECK(was_said(&said, "r/gone: would be removed"));
    CHECK(was_said(&said, "r/olddir/x: would be removed"));
    CHECK(!was_said(&said, "r/same: unchanged"));
    CHECK_EQ_INT(said.n, 3 + 2 + 2);
    /* verbose: the unchanged too; counts add up on the same result. */
    memset(&said, 0, sizeof(said));
    opt.verbose = 1;
    add_plan_dry_run(&plan, &opt, &res);
    CHECK(was_said(&said, "r/same: unchanged"));
    CHECK_EQ_INT(said.n, 3 + 2 + 2 + 2);
    CHECK_EQ_INT(res.added, 6);
    add_walk_free(&plan);
    state_free(&st);
}

/* ---- a walked tree ---- */

static const struct pqv_kdf_params cheap = { 1, 64, 1 };
static const uint8_t pass[] = "add plan test passphrase";

static int
put(const char *dir, const char *rel, const char *text)
{
    char p[700];
    FILE *f;

    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    if ((f = fopen(p, "wb")) == NULL)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* recorded(st, plan): the state an add of ${plan} would leave (the
 * catalogue's fields from the walk's stat), as state_load sorts it. */
static void
recorded(struct state *st, const struct add_plan *plan)
{
    memset(st, 0, sizeof(*st));
    st->format = 2;
    st->loaded = 1;
    REQUIRE((st->entries = calloc(plan->n + 1, sizeof(*st->entries))) != NULL);
    for (size_t i = 0; i < plan->n; i++) {
        const struct add_file *f = &plan->files[i];
        struct entry *e = &st->entries[i];
        ef_init(e, f->name, f->kind);
        e->ino = (uint64_t)f->st.st_ino;
        e->dev = (uint64_t)f->st.st_dev;
        e->mtime_sec = f->st.st_mtim.tv_sec;
        e->mtime_nsec = (uint32_t)f->st.st_mtim.tv_nsec;
        e->ctime_sec = f->st.st_ctim.tv_sec;
        e->ctime_nsec = (uint32_t)f->st.st_ctim.tv_nsec;
        e->size = f->kind == KIND_FILE ? (uint64_t)f->st.st_size : 0;
        e->target = ef_dup(f->target);
        e->hlgroup = f->hlgroup;
        if (strcmp(f->name, plan->root_name) == 0)
            e->origin = ef_dup(plan->origin);
    }
    st->n = plan->n;
    qsort(st->entries, st->n, sizeof(*st->entries), compare_entries);
}

/* A real tree walked by add_walk_operand and recorded as an add would
 * record it: walked again, everything is unchanged; after a file grows, a
 * file is removed and one is created, the first is changed, the second is
 * removed by --delete, the third is new; its hard links share a group; the
 * same tree under another stored name's origin is refused. */
static void
test_walked_tree(void)
{
    char root[256], dir[512], src[512], p[700], rec[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS];
    struct pqv_init_options init = { "FrodoKEM-640-SHAKE", PQV_AEAD_CHACHA20POLY1305, &cheap, 2,
        NULL, NULL, NULL , 0};
    struct pqv_add_options opt = no_opt;
    static const char *const gone[] = { "t/sub/b.txt", NULL };
    pqv_vault *v = NULL;
    struct add_plan plan;
    struct state st;
    const struct add_file *f, *h1, *h2;

    snprintf(root, sizeof(root), "%s/pqv-addplan-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(root) != NULL);
    snprintf(dir, sizeof(dir), "%s/vault", root);
    snprintf(src, sizeof(src), "%s/t", root);
    REQUIRE(mkdir(src, 0700) == 0);
    snprintf(p, sizeof(p), "%s/sub", src);
    REQUIRE(mkdir(p, 0700) == 0);
    REQUIRE(put(src, "a.txt", "a") == 0);
    REQUIRE(put(src, "sub/b.txt", "b") == 0);
    REQUIRE(put(src, "hard1", "h") == 0);
    snprintf(p, sizeof(p), "%s/hard1", src);
    {
        char q[700];
        snprintf(q, sizeof(q), "%s/sub/hard2", src);
        REQUIRE(link(p, q) == 0);
        snprintf(q, sizeof(q), "%s/link", src);
        REQUIRE(symlink("a.txt", q) == 0);
    }
    REQUIRE(pqv_vault_create(dir, NULL, pass, sizeof(pass) - 1, &init, rec, fp) == 0);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    REQUIRE(pqv_vault_unlock(v, pass, sizeof(pass) - 1) == 0);

    add_walk_init(&plan);
    REQUIRE(add_walk_operand(v, &plan, src, NULL, &opt) == 0);
    CHECK(plan.root_name != NULL && strcmp(plan.root_name, "t") == 0);
    CHECK(plan.origin != NULL && plan.origin[0] == '/');
    CHECK_EQ_INT(plan.n, 7); /* t, a.txt, sub, sub/b.txt, sub/hard2, hard1, link */
    state_of(&st, NULL, 0);
    REQUIRE(add_plan_prepare(&st, &plan, &opt) == 0);
    REQUIRE(add_plan_hard_links(&plan) == 0);
    for (size_t i = 0; i < plan.n; i++)
        CHECK(!plan.files[i].unchanged && !plan.files[i].replacing);
    h1 = planned(&plan, "t/hard1");
    h2 = planned(&plan, "t/sub/hard2");
    CHECK(h1 != NULL && h2 != NULL && h1->hlgroup != 0 && h1->hlgroup == h2->hlgroup);
    CHECK((f = planned(&plan, "t/link")) != NULL && f->kind == KIND_SYMLINK &&
        strcmp(f->target, "a.txt") == 0);
    state_free(&st);
    recorded(&st, &plan);
    add_walk_free(&plan);

    /* Again, unmodified: all unchanged. */
    add_walk_init(&plan);
    REQUIRE(add_walk_operand(v, &plan, src, NULL, &opt) == 0);
    REQUIRE(add_plan_prepare(&st, &plan, &opt) == 0);
    for (size_t i = 0; i < plan.n; i++)
        if (!plan.files[i].unchanged) {
            CHECK(!"a file walked again is not unchanged");
            fprintf(stderr, "  %s\n", plan.files[i].name);
        }
    add_walk_free(&plan);

    /* Modified: a.txt grows, sub/b.txt goes, c.txt comes. */
    REQUIRE(put(src, "a.txt", "a, longer") == 0);
    snprintf(p, sizeof(p), "%s/sub/b.txt", src);
    REQUIRE(unlink(p) == 0);
    REQUIRE(put(src, "c.txt", "c") == 0);
    add_walk_init(&plan);
    opt.delete_missing = 1;
    REQUIRE(add_walk_operand(v, &plan, src, NULL, &opt) == 0);
    REQUIRE(add_plan_prepare(&st, &plan, &opt) == 0);
    CHECK((f = planned(&plan, "t/a.txt")) != NULL && f->replacing);
    CHECK((f = planned(&plan, "t/c.txt")) != NULL && !f->replacing && !f->unchanged);
    CHECK((f = planned(&plan, "t/hard1")) != NULL && f->unchanged);
    CHECK(stale_is(&plan, gone));
    add_walk_free(&plan);

    /* Another tree under the same stored name. */
    snprintf(p, sizeof(p), "%s/sub", src);
    add_walk_init(&plan);
    REQUIRE(add_walk_operand(v, &plan, p, "t", &no_opt) == 0);
    CHECK_EQ_INT(add_plan_prepare(&st, &plan, &no_opt), PQV_E_EXISTS);
    add_walk_free(&plan);

    state_free(&st);
    pqv_vault_close(v);
    snprintf(p, sizeof(p), "rm -rf '%s'", root);
    CHECK(system(p) == 0);
}

/* --exclude-caches with --delete: a directory holding a CACHEDIR.TAG is
 * left out by the walk, so what the vault holds of it (stored by an add
 * without the option) is an excluded name, which --delete keeps
 * (docs/CLI.md: "--delete never removes excluded names"). */
static void
test_walked_tree_caches(void)
{
    static const char sig[] = "Signature: 8a477f597d28d172789f06886806bc55";
    char root[256], dir[512], src[512], p[700], rec[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS];
    struct pqv_init_options init = { "FrodoKEM-640-SHAKE", PQV_AEAD_CHACHA20POLY1305, &cheap, 2,
        NULL, NULL, NULL , 0};
    struct pqv_add_options opt = no_opt;
    static const char *const gone[] = { "t/old.txt", NULL };
    pqv_vault *v = NULL;
    struct add_plan plan;
    struct state st;

    snprintf(root, sizeof(root), "%s/pqv-addplan-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(root) != NULL);
    snprintf(dir, sizeof(dir), "%s/vault", root);
    snprintf(src, sizeof(src), "%s/t", root);
    REQUIRE(mkdir(src, 0700) == 0);
    snprintf(p, sizeof(p), "%s/cache", src);
    REQUIRE(mkdir(p, 0700) == 0);
    REQUIRE(put(src, "cache/CACHEDIR.TAG", sig) == 0);
    REQUIRE(put(src, "cache/blob", "b") == 0);
    REQUIRE(put(src, "old.txt", "o") == 0);
    REQUIRE(pqv_vault_create(dir, NULL, pass, sizeof(pass) - 1, &init, rec, fp) == 0);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    REQUIRE(pqv_vault_unlock(v, pass, sizeof(pass) - 1) == 0);
    /* Stored without --exclude-caches. */
    add_walk_init(&plan);
    REQUIRE(add_walk_operand(v, &plan, src, NULL, &opt) == 0);
    CHECK(planned(&plan, "t/cache/blob") != NULL);
    recorded(&st, &plan);
    add_walk_free(&plan);
    /* Then with it, and --delete, old.txt gone. */
    snprintf(p, sizeof(p), "%s/old.txt", src);
    REQUIRE(unlink(p) == 0);
    opt.exclude_caches = 1;
    opt.delete_missing = 1;
    add_walk_init(&plan);
    REQUIRE(add_walk_operand(v, &plan, src, NULL, &opt) == 0);
    CHECK(planned(&plan, "t/cache") == NULL);
    CHECK_EQ_INT(plan.excluded, 1);
    REQUIRE(add_plan_prepare(&st, &plan, &opt) == 0);
    CHECK(stale_is(&plan, gone));
    add_walk_free(&plan);
    state_free(&st);
    pqv_vault_close(v);
    snprintf(p, sizeof(p), "rm -rf '%s'", root);
    CHECK(system(p) == 0);
}

TEST_MAIN(test_unchanged_or_changed, test_new_names, test_given_twice, test_delete_missing,
    test_delete_keeps_excluded, test_delete_with_neighbours, test_directory_becomes_file,
    test_directory_becomes_file_with_neighbours, test_name_below_file,
    test_root_from_another_origin, test_hard_links, test_dry_run, test_walked_tree,
    test_walked_tree_caches)
