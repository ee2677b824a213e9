/*
 * test_state_under.c: the names of a loaded state under a prefix
 * (src/vault/state.c: state_first_under, state_next_under, state_find,
 * state_origin) and the commands that walk them (list, get of a tree, rm).
 * Names such as "r-1" or "r.bak" sort between "r" and "r/..." ('-' and '.'
 * come before '/'), so "r" and what is below it are not contiguous: every
 * subset of a set of such names, under every prefix, is walked and
 * compared with the names a plain filter keeps; then a real vault holding
 * "r", "r-1", "r.bak" and "r/..." lists, restores and removes "r" whole.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "entry_fixture.h"
#include "harness.h"
#include "pqvault/aead.h"
#include "pqvault/vault.h"
#include "vault/names.h"
#include "vault/state.h"

/* Names that sort around "r" and its children. */
static const char *const universe[] = { "a", "q", "r", "r!", "r-1", "r.bak", "r.bak/x", "r/a",
    "r/b", "r/b/c", "r/b-c", "r0", "rr/x" };
#define NU (sizeof(universe) / sizeof(universe[0]))

static int
compare_entries(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* state_of(st, mask): a loaded state of the names of ${universe} in ${mask}. */
static void
state_of(struct state *st, unsigned mask)
{
    memset(st, 0, sizeof(*st));
    st->format = 2;
    st->loaded = 1;
    if ((st->entries = calloc(NU, sizeof(*st->entries))) == NULL)
        exit(2);
    for (size_t i = 0; i < NU; i++)
        if (mask & (1u << i))
            ef_init(&st->entries[st->n++], universe[i], KIND_FILE);
    qsort(st->entries, st->n, sizeof(*st->entries), compare_entries);
}

/* For every subset of the names and every prefix, state_first_under and
 * state_next_under visit exactly the names names_under keeps, in name
 * order, each once; state_find finds exactly the names held. */
static void
test_every_subset_every_prefix(void)
{
    static const char *const prefixes[] = { "r", "r/b", "r.bak", "r-1", "q", "a", "rr", "r0", "x",
        "r/b/c", "" };
    size_t failures = 0;

    for (unsigned mask = 0; mask < (1u << NU); mask++) {
        struct state st;
        state_of(&st, mask);
        for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
            const char *prefix = prefixes[p];
            size_t want[NU], nwant = 0, got[NU + 1], ngot = 0;
            for (size_t i = 0; i < st.n; i++)
                if (names_under(st.entries[i].name, prefix))
                    want[nwant++] = i;
            for (size_t i = state_first_under(&st, prefix);
                 i < st.n && names_under(st.entries[i].name, prefix) && ngot <= NU;
                 i = state_next_under(&st, prefix, i))
                got[ngot++] = i;
            if (ngot != nwant || memcmp(got, want, nwant * sizeof(*want)) != 0) {
                if (failures++ < 5) {
                    fprintf(stderr, "  under \"%s\" of", prefix);
                    for (size_t i = 0; i < st.n; i++)
                        fprintf(stderr, " %s", st.entries[i].name);
                    fprintf(stderr, ": visited %zu of %zu\n", ngot, nwant);
                }
            }
        }
        for (size_t i = 0; i < NU; i++) {
            const struct entry *e = state_find(&st, universe[i]);
            if ((e != NULL) != ((mask & (1u << i)) != 0) ||
                (e != NULL && strcmp(e->name, universe[i]) != 0))
                failures++;
        }
        state_free(&st);
    }
    CHECK_EQ_INT(failures, 0);
}

/* state_origin: a name's own origin, else its nearest ancestor's with the
 * rest of the name; none (-1) when no ancestor has one. */
static void
test_origin(void)
{
    struct state st;
    char out[256];

    memset(&st, 0, sizeof(st));
    st.loaded = 1;
    REQUIRE((st.entries = calloc(5, sizeof(*st.entries))) != NULL);
    ef_init(&st.entries[0], "a", KIND_DIR);
    st.entries[0].origin = ef_dup("/src/a");
    ef_init(&st.entries[1], "a/b", KIND_DIR);
    ef_init(&st.entries[2], "a/b/c", KIND_FILE);
    ef_init(&st.entries[3], "a/own", KIND_FILE);
    st.entries[3].origin = ef_dup("/elsewhere/own");
    ef_init(&st.entries[4], "z", KIND_FILE);
    st.n = 5;
    CHECK(state_origin(&st, "a", out, sizeof(out)) == 0 && strcmp(out, "/src/a") == 0);
    CHECK(state_origin(&st, "a/b/c", out, sizeof(out)) == 0 && strcmp(out, "/src/a/b/c") == 0);
    CHECK(state_origin(&st, "a/own", out, sizeof(out)) == 0 &&
        strcmp(out, "/elsewhere/own") == 0);
    CHECK(state_origin(&st, "a/not/stored", out, sizeof(out)) == 0 &&
        strcmp(out, "/src/a/not/stored") == 0);
    CHECK_EQ_INT(state_origin(&st, "z", out, sizeof(out)), -1);
    CHECK_EQ_INT(state_origin(&st, "y/x", out, sizeof(out)), -1);
    CHECK_EQ_INT(state_origin(&st, "a/b/c", out, 5), -1); /* does not fit */
    state_free(&st);
}

/* ---- the commands, over a real vault ---- */

static const struct pqv_kdf_params cheap = { 1, 64, 1 };
static const uint8_t pass[] = "state test passphrase";

static void
put(const char *path)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL)
        exit(2);
    fputs("data", f);
    fclose(f);
}

/* listed(v, prefix, want): pqv_vault_list of ${prefix} gives exactly the
 * names ${want} (one string, space-separated, in order). */
static int
listed(pqv_vault *v, const char *prefix, const char *want)
{
    struct pqv_entry *es = NULL;
    size_t n = 0;
    char got[1024] = "";
    int rc = pqv_vault_list(v, prefix, NULL, &es, &n);

    for (size_t i = 0; rc == 0 && i < n; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "", es[i].name);
    if (rc == 0)
        pqv_entries_free(es, n);
    if (rc != 0 || strcmp(got, want) != 0) {
        fprintf(stderr, "  list %s: %d \"%s\", not \"%s\"\n", prefix ? prefix : "(all)", rc, got,
            want);
        return 0;
    }
    return 1;
}

/* A vault holding a directory "r" (r/a, r/b/c), its neighbours "r-1" and
 * "r.bak", and 0 to 7 names before them: list "r" gives "r" and all below
 * it, get "r" restores all of it, rm "r" removes all of it and nothing
 * else.  (Before the fix, depending on the names before them, "r" itself
 * was left out, or everything below it: get restored an empty directory,
 * rm left "r/a" and "r/b/c" behind.) */
static void
test_list_get_rm_with_neighbours(void)
{
    char root[256], p[700], rec[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS];
    struct pqv_init_options init = { "FrodoKEM-640-SHAKE", PQV_AEAD_CHACHA20POLY1305, &cheap, 2,
        NULL, NULL, NULL , 0};
    static const char *const ops[] = { "r", "r-1", "r.bak" };

    snprintf(root, sizeof(root), "%s/pqv-under-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(root) != NULL);
    snprintf(p, sizeof(p), "%s/src", root);
    REQUIRE(mkdir(p, 0700) == 0);
    snprintf(p, sizeof(p), "%s/src/r", root);
    REQUIRE(mkdir(p, 0700) == 0);
    snprintf(p, sizeof(p), "%s/src/r/b", root);
    REQUIRE(mkdir(p, 0700) == 0);
    snprintf(p, sizeof(p), "%s/src/r/a", root);
    put(p);
    snprintf(p, sizeof(p), "%s/src/r/b/c", root);
    put(p);
    snprintf(p, sizeof(p), "%s/src/r-1", root);
    put(p);
    snprintf(p, sizeof(p), "%s/src/r.bak", root);
    put(p);
    for (int before = 0; before < 8; before++) {
        struct pqv_add_options ao;
        struct pqv_get_options go;
        struct pqv_rm_options ro;
        struct stat sb;
        pqv_vault *v = NULL;
        char vdir[512], out[512], all[512] = "";
        snprintf(vdir, sizeof(vdir), "%s/vault%d", root, before);
        REQUIRE(pqv_vault_create(vdir, NULL, pass, sizeof(pass) - 1, &init, rec, fp) == 0);
        REQUIRE(pqv_vault_open(&v, vdir, NULL) == 0);
        REQUIRE(pqv_vault_unlock(v, pass, sizeof(pass) - 1) == 0);
        REQUIRE(pqv_vault_lock_writer(v, 0, NULL, 0) == 0);
        memset(&ao, 0, sizeof(ao));
        for (size_t i = 0; i < 3; i++) {
            snprintf(p, sizeof(p), "%s/src/%s", root, ops[i]);
            CHECK_EQ_INT(pqv_vault_add_path(v, p, NULL, &ao), 0);
        }
        for (int i = 0; i < before; i++) {
            char name[16];
            snprintf(name, sizeof(name), "a%d", i);
            snprintf(p, sizeof(p), "%s/src/r-1", root);
            CHECK_EQ_INT(pqv_vault_add_path(v, p, name, &ao), 0);
            snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s ", name);
        }
        CHECK(listed(v, "r", "r r/a r/b r/b/c"));
        CHECK(listed(v, "r/b", "r/b r/b/c"));
        CHECK(listed(v, "r.bak", "r.bak"));
        memset(&go, 0, sizeof(go));
        snprintf(out, sizeof(out), "%s/out%d", root, before);
        CHECK_EQ_INT(pqv_vault_get(v, "r", out, &go), 0);
        snprintf(p, sizeof(p), "%s/r/a", out);
        CHECK(stat(p, &sb) == 0 && S_ISREG(sb.st_mode));
        snprintf(p, sizeof(p), "%s/r/b/c", out);
        CHECK(stat(p, &sb) == 0 && S_ISREG(sb.st_mode));
        snprintf(p, sizeof(p), "%s/r-1", out);
        CHECK(stat(p, &sb) != 0);
        memset(&ro, 0, sizeof(ro));
        CHECK_EQ_INT(pqv_vault_rm(v, "r", &ro), 0);
        snprintf(all + strlen(all), sizeof(all) - strlen(all), "r-1 r.bak");
        CHECK(listed(v, NULL, all));
        pqv_vault_close(v);
    }
    snprintf(p, sizeof(p), "rm -rf '%s'", root);
    CHECK(system(p) == 0);
}

TEST_MAIN(test_every_subset_every_prefix, test_origin, test_list_get_rm_with_neighbours)
