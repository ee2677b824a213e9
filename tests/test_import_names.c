/*
 * test_import_names.c: where an imported entry goes (src/vault/import_names.c):
 * import_names_taken and import_names_blocked over a loaded state and a
 * list of the batch's entries already imported, built by hand.  A name is
 * taken in the state or among the new ones (the new ones first); a name is
 * blocked by its shallowest ancestor that is not a directory (a file or a
 * link, stored or new), at any depth; directories, implied directories,
 * the name itself and names that only start like a file block nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry_fixture.h"
#include "harness.h"
#include "pqvault/vault.h"
#include "vault/import_internal.h"
#include "vault/state.h"

struct named {
    const char *name;
    int kind;
};

/* The state: directories d and x, files f, d/f, a/b/c/d, a link l, a file
 * s, and implied/a/b/c (its ancestors implied, not stored). */
static const struct named stored[] = {
    { "a/b/c/d", KIND_FILE }, { "d", KIND_DIR }, { "d/f", KIND_FILE }, { "f", KIND_FILE },
    { "implied/a/b/c", KIND_FILE }, { "l", KIND_SYMLINK }, { "s", KIND_FILE }, { "x", KIND_DIR },
};

/* The batch's entries imported so far, sorted by name (as import keeps
 * them): a file d/newf, a file n, a directory nd, a directory s (over the
 * stored file s). */
static const struct named imported[] = {
    { "d/newf", KIND_FILE }, { "n", KIND_FILE }, { "nd", KIND_DIR }, { "s", KIND_DIR },
};
#define NSTORED (sizeof(stored) / sizeof(stored[0]))
#define NIMPORTED (sizeof(imported) / sizeof(imported[0]))

static struct state st;
static struct entry news_e[NIMPORTED], *news[NIMPORTED];

static int
compare_entries(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static void
setup(void)
{
    memset(&st, 0, sizeof(st));
    st.format = 2;
    st.loaded = 1;
    if ((st.entries = calloc(NSTORED, sizeof(*st.entries))) == NULL)
        exit(2);
    for (size_t i = 0; i < NSTORED; i++)
        ef_init(&st.entries[i], stored[i].name, stored[i].kind);
    st.n = NSTORED;
    qsort(st.entries, st.n, sizeof(*st.entries), compare_entries);
    for (size_t i = 0; i < NIMPORTED; i++) {
        ef_init(&news_e[i], imported[i].name, imported[i].kind);
        news[i] = &news_e[i];
    }
}

static void
teardown(void)
{
    state_free(&st);
    for (size_t i = 0; i < NIMPORTED; i++)
        entry_clear(&news_e[i]);
}

/* import_names_is_dir: directories only (NULL is none). */
static void
test_is_dir(void)
{
    struct entry e;

    CHECK(!import_names_is_dir(NULL));
    ef_init(&e, "x", KIND_DIR);
    CHECK(import_names_is_dir(&e));
    e.kind = KIND_FILE;
    CHECK(!import_names_is_dir(&e));
    e.kind = KIND_SYMLINK;
    CHECK(!import_names_is_dir(&e));
    entry_clear(&e);
}

/* A name is taken by the state's entry or a new one, the new one first
 * (it is this epoch's); an implied directory or a name that only starts
 * like a stored one is not taken. */
static void
test_taken(void)
{
    const struct entry *e;

    setup();
    CHECK((e = import_names_taken(&st, news, NIMPORTED, "f")) != NULL && e->kind == KIND_FILE &&
        e == state_find(&st, "f"));
    CHECK((e = import_names_taken(&st, news, NIMPORTED, "d/f")) != NULL && strcmp(e->name, "d/f") == 0);
    CHECK((e = import_names_taken(&st, news, NIMPORTED, "n")) == news[1]);
    CHECK((e = import_names_taken(&st, news, NIMPORTED, "d/newf")) == news[0]);
    /* s: stored a file, imported a directory: the import's. */
    CHECK((e = import_names_taken(&st, news, NIMPORTED, "s")) == news[3] && e->kind == KIND_DIR);
    CHECK(import_names_taken(&st, news, 0, "s") == state_find(&st, "s"));
    CHECK(import_names_taken(&st, news, NIMPORTED, "implied") == NULL);
    CHECK(import_names_taken(&st, news, NIMPORTED, "implied/a") == NULL);
    CHECK(import_names_taken(&st, news, NIMPORTED, "ff") == NULL);
    CHECK(import_names_taken(&st, news, NIMPORTED, "d/f/x") == NULL);
    CHECK(import_names_taken(&st, news, NIMPORTED, "nothing") == NULL);
    CHECK(import_names_taken(&st, NULL, 0, "n") == NULL);
    teardown();
}

/* Each name: blocked or not, and at which ancestor (its length). */
static void
test_blocked(void)
{
    static char long_name[PQV_NAME_MAX + 1];
    const struct {
        const char *name;
        int blocked;
        size_t at;
    } cases[] = {
        { "f/x", 1, 1 },                 /* below a stored file */
        { "f/x/y/z", 1, 1 },             /* deep below it */
        { "d/f/x", 1, 3 },               /* below a stored file in a directory */
        { "l/x", 1, 1 },                 /* below a link */
        { "a/b/c/d/e/f/g", 1, 7 },       /* below a deep file */
        { "n/x", 1, 1 },                 /* below a new file */
        { "d/newf/x/y", 1, 6 },          /* below a new file in a stored directory */
        { "d/x", 0, 0 },                 /* below a stored directory */
        { "x/y/z", 0, 0 },
        { "nd/x", 0, 0 },                /* below a new directory */
        { "s/x", 0, 0 },                 /* below a file made a directory by the import */
        { "implied/a/b/x", 0, 0 },       /* below implied directories */
        { "implied/a/b/c", 0, 0 },       /* the file itself: not its own ancestor */
        { "f", 0, 0 },
        { "top", 0, 0 },                 /* no ancestor */
        { "ff/x", 0, 0 },                /* starts like a file */
        { "f.d/x", 0, 0 },
        { "new/deep/name", 0, 0 },       /* nothing stored above it */
        { long_name, 1, 1 },             /* the longest name, below f */
    };

    memset(long_name, 'x', PQV_NAME_MAX);
    long_name[0] = 'f';
    long_name[1] = '/';
    long_name[PQV_NAME_MAX] = '\0';
    setup();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t at = 12345;
        int b = import_names_blocked(&st, news, NIMPORTED, cases[i].name, &at);
        if (b != cases[i].blocked || (b && at != cases[i].at) || (!b && at != 12345)) {
            CHECK(!"decided wrong");
            fprintf(stderr, "  %.40s: blocked %d at %zu\n", cases[i].name, b, at);
        }
    }
    /* Without the new entries, n/x is free and s/x is below a file. */
    {
        size_t at = 0;
        CHECK(!import_names_blocked(&st, news, 0, "n/x", &at));
        CHECK(import_names_blocked(&st, news, 0, "s/x", &at) && at == 1);
    }
    teardown();
}

TEST_MAIN(test_is_dir, test_taken, test_blocked)
