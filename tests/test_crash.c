/*
 * test_crash.c: crash consistency, exhaustively.  Each scenario runs a vault
 * operation over the crash simulator (crashsim.h), crashing at step 1, 2,
 * ... until the operation completes without reaching the crash point; for
 * each crash point every allowed post-crash state (crashsim_outcome) is
 * reopened and verified (vaultcheck.h): check passes, committed files read
 * back byte-exact, the file being written is wholly old or wholly new (or
 * absent), the key file unlocks, and gc leaves a clean vault.  `get` is
 * crashed on the real file system instead (a child process killed at each
 * durability call).
 *
 * Prints "# <scenario>: N crash points, M outcomes" lines (the figures of
 * docs/TESTING.md).  PQV_CRASH_VERBOSE=1 prints each crash point.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "crashsim.h"
#include "harness.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "vaultcheck.h"
#include "vault_fixture.h"

static char tmpdir[256];
static char recovery[PQV_RECOVERY_CHARS];

static int
add_bytes(pqv_vault *v, const char *name, const uint8_t *data, size_t len, int force)
{
    char path[512];
    struct pqv_add_options opt = { .force = force };

    snprintf(path, sizeof(path), "%s/src.tmpfile", tmpdir);
    vf_write_path(path, data, len);
    int rc = pqv_vault_add_path(v, path, name, &opt);
    unlink(path);
    return rc;
}

/* The state every scenario starts from: a vault with keep/a, keep/empty,
 * old and gone/1, gone/2, all durable. */
static struct crashsim *
base_state(void)
{
    struct crashsim *cs = crashsim_new();
    struct pqv_init_options io = { VC_KEM, 0, &vc_cheap_kdf, 0, NULL, NULL, NULL , 0};
    char fp[PQV_FINGERPRINT_CHARS];
    pqv_vault *v;

    if (pqv_vault_create_storage(crashsim_storage(cs), NULL, NULL, (const uint8_t *)VC_PASS,
            strlen(VC_PASS), &io, recovery, fp) != 0 ||
        vf_open_vault(crashsim_storage(cs), NULL, VC_PASS, &v, 1) != 0) {
        fprintf(stderr, "base: %s\n", pqv_error_detail());
        exit(2);
    }
    /* Unlock tries both slots, and an unused slot has the default (costly)
     * Argon2 parameters: give slot 1 cheap ones too. */
    if (pqv_vault_passwd(v, 1, (const uint8_t *)"slot one", 8, &vc_cheap_kdf) != 0) {
        fprintf(stderr, "base passwd: %s\n", pqv_error_detail());
        exit(2);
    }
    if (add_bytes(v, "keep/a", vf.keep_a, VF_KEEP_A_LEN, 0) != 0 ||
        add_bytes(v, "keep/empty", vf.keep_empty, 0, 0) != 0 ||
        add_bytes(v, "old", vf.old, VF_OLD_LEN, 0) != 0 ||
        add_bytes(v, "gone/1", vf.gone1, VF_GONE_LEN, 0) != 0 ||
        add_bytes(v, "gone/2", vf.gone2, VF_GONE_LEN, 0) != 0) {
        fprintf(stderr, "base add: %s\n", pqv_error_detail());
        exit(2);
    }
    pqv_vault_close(v);
    struct crashsim *snap = crashsim_snapshot(cs);
    crashsim_free(cs);
    return snap;
}

/* A scenario: an operation over the storage and the model of the result. */
struct scenario {
    const char *name;
    int (*op)(pqv_storage *s);
    void (*model)(struct vc_model *m);
    void (*prepare)(struct crashsim *cs);    /* extra set-up, may be NULL */
    int new_pass;                            /* may leave the new passphrase */
    int wide;    /* exhaustive subsets only past CRASHSIM_EXHAUSTIVE pending
                    operations; below, all-kept and all-lost ("add a
                    directory" covers those exhaustively) */
    struct crashsim *(*start)(void);         /* another starting vault, or NULL */
    const char *pass;                        /* its passphrase (NULL: VC_PASS) */
    int import_first;    /* each outcome is imported (pqv_vault_import) before it
                            is verified: inbox batches whole or absent */
};

/* ---- the operations (their models: vault_fixture.h, but for the
 * directories) ---- */

/* add_tree(v, name): add the directory ${tmpdir}/${name} as ${name}. */
static int
add_tree(pqv_vault *v, const char *name)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    return pqv_vault_add_path(v, path, name, NULL);
}

/* add of one file (two objects) */
static int do_add_one(pqv_vault *v) { return add_bytes(v, "new", vf.one, VF_ONE_LEN, 0); }
static int op_add_one(pqv_storage *s) { return vf_with_writer(s, NULL, do_add_one); }

/* add of a directory */
static uint8_t *tree_z;
#define TZ_LEN 1

static int do_add_dir(pqv_vault *v) { return add_tree(v, "tree"); }
static int op_add_dir(pqv_storage *s) { return vf_with_writer(s, NULL, do_add_dir); }

static void
model_add_dir(struct vc_model *m)
{
    vf_model_base(m, "");
    vc_model_dir(m, "tree", 0, 1);
    vc_model_file(m, "tree/x", NULL, 0, 0, vf.tree_x, VF_TX_LEN, 1);
    vc_model_file(m, "tree/y", NULL, 0, 0, vf.tree_y, VF_TY_LEN, 1);
    vc_model_file(m, "tree/empty", NULL, 0, 0, vf.tree_x, 0, 1);
    vc_model_dir(m, "tree/sub", 0, 1);
    vc_model_file(m, "tree/sub/z", NULL, 0, 0, tree_z, TZ_LEN, 1);
}

/* add of a wide directory: more than CRASHSIM_EXHAUSTIVE pending
 * operations, so outcomes are sampled */
#define WIDE_FILES 11

static int do_add_wide(pqv_vault *v) { return add_tree(v, "wide"); }
static int op_add_wide(pqv_storage *s) { return vf_with_writer(s, NULL, do_add_wide); }

static void
model_add_wide(struct vc_model *m)
{
    char name[64];

    vf_model_base(m, "");
    vc_model_dir(m, "wide", 0, 1);
    for (int i = 0; i < WIDE_FILES; i++) {
        snprintf(name, sizeof(name), "wide/f%02d", i);
        vc_model_file(m, name, NULL, 0, 0, vf.tree_x, (size_t)(10 + i), 1);
    }
}

/* add from a descriptor (a pipe) */
static int
do_add_fd(pqv_vault *v)
{
    return vf_add_pipe(v, "piped", vf.piped, VF_PIPED_LEN, 0640);
}
static int op_add_fd(pqv_storage *s) { return vf_with_writer(s, NULL, do_add_fd); }

/* add --force over an existing name */
static int
do_add_force(pqv_vault *v)
{
    return add_bytes(v, "old", vf.replace, VF_REPLACE_LEN, 1);
}
static int op_add_force(pqv_storage *s) { return vf_with_writer(s, NULL, do_add_force); }

/* rm of a file, rm of a directory */
static int do_rm(pqv_vault *v) { return pqv_vault_rm(v, "old", NULL); }
static int op_rm(pqv_storage *s) { return vf_with_writer(s, NULL, do_rm); }
static int do_rm_dir(pqv_vault *v) { return pqv_vault_rm(v, "gone", NULL); }
static int op_rm_dir(pqv_storage *s) { return vf_with_writer(s, NULL, do_rm_dir); }

/* passwd (slot 0, the one that unlocked) and recover */
static int
do_passwd(pqv_vault *v)
{
    return pqv_vault_passwd(v, 0, (const uint8_t *)VC_NEWPASS, strlen(VC_NEWPASS), &vc_cheap_kdf);
}
static int op_passwd(pqv_storage *s) { return vf_with_writer(s, NULL, do_passwd); }

static int
op_recover(pqv_storage *s)
{
    return pqv_vault_recover_storage(s, NULL, NULL, recovery, (const uint8_t *)VC_NEWPASS,
        strlen(VC_NEWPASS), &vc_cheap_kdf);
}

/* gc after a crash left a leftover pack, a format-1 object no entry
 * refers to, and temporaries */
static void
prepare_gc(struct crashsim *cs)
{
    uint8_t *junk = vc_data(500, 99);

    crashsim_set(cs, "packs/ab/ab00112233445566778899aabbccddee", junk, 500);
    crashsim_set(cs, "packs/cd/cd00112233445566778899aabbccddee.tmp-0123456789abcdef", junk, 200);
    crashsim_set(cs, "objects/ef/ef00112233445566778899aabbccddee", junk, 300);
    crashsim_set(cs, "segments/0000000000000099.tmp-0123456789abcdef", junk, 100);
    crashsim_set(cs, "keyfile.tmp-0123456789abcdef", junk, 50);
    free(junk);
}

/* gc folding a chain that holds a removed name into a base (compaction),
 * then deleting the older segments and the removed file's pack */
static void
prepare_gc_compact(struct crashsim *cs)
{
    if (vf_with_writer(crashsim_storage(cs), NULL, do_rm) != 0) {
        fprintf(stderr, "prepare gc compact: %s\n", pqv_error_detail());
        exit(2);
    }
    prepare_gc(cs);
}

static void
model_after_rm(struct vc_model *m)
{
    vf_model_base(m, "old");
    vc_model_file(m, "old", NULL, 0, 0, NULL, 0, 0);
}

/* gc rewriting a pack of format 3 that is mostly unused: "repack" (12
 * files of 4000 bytes, one pack) added, ten of them removed and the
 * snapshots before forgotten; gc copies the two left into a new pack,
 * commits their new records, compacts and deletes the old pack. */
#define REPACK_FILES 12
#define REPACK_KEPT 2
#define REPACK_LEN 4000
static uint8_t *repack_data[REPACK_FILES];

static void
prepare_gc_repack(struct crashsim *cs)
{
    pqv_vault *v;
    char name[64];
    int rc;

    if ((rc = vf_open_vault(crashsim_storage(cs), NULL, VC_PASS, &v, 1)) == 0) {
        struct pqv_forget_options keep1 = { .last = 1 };
        rc = add_tree(v, "repack");
        for (int i = 0; rc == 0 && i < REPACK_FILES - REPACK_KEPT; i++) {
            snprintf(name, sizeof(name), "repack/f%02d", i);
            rc = pqv_vault_rm(v, name, NULL);
        }
        /* (The snapshots before would keep the removed files' data.) */
        if (rc == 0)
            rc = pqv_vault_forget(v, &keep1, NULL);
        pqv_vault_close(v);
    }
    if (rc != 0) {
        fprintf(stderr, "prepare gc repack: %s\n", pqv_error_detail());
        exit(2);
    }
}

static void
model_gc_repack(struct vc_model *m)
{
    char name[64];

    vf_model_base(m, "");
    vc_model_dir(m, "repack", 1, 1);
    for (int i = 0; i < REPACK_FILES; i++) {
        snprintf(name, sizeof(name), "repack/f%02d", i);
        if (i < REPACK_FILES - REPACK_KEPT)
            vc_model_file(m, name, NULL, 0, 0, NULL, 0, 0);
        else
            vc_model_kept(m, name, repack_data[i], REPACK_LEN);
    }
}

/* forget of every snapshot but the newest, then gc: the preparation adds
 * "old" again with other contents (so a forgotten snapshot holds data no
 * kept one needs); forget's epoch, then gc's repacking, compaction and
 * deletions, crashed at every step: the newest state is whole, and a
 * snapshot is either still kept (with all its data) or forgotten. */
static void
prepare_forget(struct crashsim *cs)
{
    pqv_vault *v;
    int rc;

    if ((rc = vf_open_vault(crashsim_storage(cs), NULL, VC_PASS, &v, 1)) == 0) {
        rc = add_bytes(v, "old", vf.replace, VF_REPLACE_LEN, 1);
        pqv_vault_close(v);
    }
    if (rc != 0) {
        fprintf(stderr, "prepare forget: %s\n", pqv_error_detail());
        exit(2);
    }
}

static int
do_forget_gc(pqv_vault *v)
{
    struct pqv_forget_options keep1 = { .last = 1 };
    int rc;

    if ((rc = pqv_vault_forget(v, &keep1, NULL)) != 0)
        return rc;
    return pqv_vault_gc(v, NULL, NULL);
}
static int op_forget_gc(pqv_storage *s) { return vf_with_writer(s, NULL, do_forget_gc); }

static void
model_forget(struct vc_model *m)
{
    vf_model_base(m, "old");
    vc_model_kept(m, "old", vf.replace, VF_REPLACE_LEN);
}

/* upgrade of the format-1 fixture (tests/fixtures/v1-aes) */
#define V1_PASS "fixture passphrase v1"
static struct crashsim *v1_loading;
static struct { uint8_t *data; size_t len; } v1_files[4];
static const char *const v1_names[4] = { "docs/readme.txt", "docs/empty",
    "docs/with space \xc3\xbc.txt", "docs/nested/segments.bin" };

static int
load_v1_file(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    uint8_t *data;
    size_t len;

    (void)st;
    (void)ftw;
    if (flag != FTW_F)
        return 0;
    if (fsutil_read_file(AT_FDCWD, path, &data, &len, 1 << 24) != 0)
        return -1;
    crashsim_set(v1_loading, path + strlen("tests/fixtures/v1-aes/"), data, len);
    free(data);
    return 0;
}

static struct crashsim *
v1_start(void)
{
    pqv_vault *v;

    v1_loading = crashsim_new();
    if (nftw("tests/fixtures/v1-aes", load_v1_file, 8, FTW_PHYS) != 0) {
        fprintf(stderr, "cannot load tests/fixtures/v1-aes (run from the project root)\n");
        exit(2);
    }
    for (size_t i = 0; i < 4; i++) {
        char path[256];
        snprintf(path, sizeof(path), "tests/fixtures/v1-files/%s", v1_names[i]);
        if (fsutil_read_file(AT_FDCWD, path, &v1_files[i].data, &v1_files[i].len, 1 << 24) != 0)
            exit(2);
    }
    /* Slot 1 cheap, as the base's (unlock computes both slots). */
    if (vf_open_vault(crashsim_storage(v1_loading), NULL, V1_PASS, &v, 1) != 0 ||
        pqv_vault_passwd(v, 1, (const uint8_t *)"slot one", 8, &vc_cheap_kdf) != 0) {
        fprintf(stderr, "v1 start: %s\n", pqv_error_detail());
        exit(2);
    }
    pqv_vault_close(v);
    struct crashsim *snap = crashsim_snapshot(v1_loading);
    crashsim_free(v1_loading);
    return snap;
}

static int
op_upgrade(pqv_storage *s)
{
    pqv_vault *v;
    int rc = vf_open_vault(s, NULL, V1_PASS, &v, 1);

    if (rc != 0)
        return rc;
    rc = pqv_vault_upgrade(v, NULL, NULL);
    pqv_vault_close(v);
    return rc;
}

static void
model_upgrade(struct vc_model *m)
{
    memset(m, 0, sizeof(*m));
    for (size_t i = 0; i < 4; i++)
        vc_model_kept(m, v1_names[i], v1_files[i].data, v1_files[i].len);
    vc_model_dir(m, "docs", 1, 1);
    vc_model_dir(m, "docs/nested", 1, 1);
}

static int do_gc(pqv_vault *v) { return pqv_vault_gc(v, NULL, NULL); }
static int op_gc(pqv_storage *s) { return vf_with_writer(s, NULL, do_gc); }

/* write-only add of "new" by the writer "inbox" (registered first, one
 * owner epoch), with its credential alone (no key file read, no lock):
 * stored as inbox/new; then import of that batch */
static int
op_inbox_add(pqv_storage *s)
{
    pqv_vault *v = NULL, *w = NULL;
    char *text = NULL, id[33];
    size_t len = 0;
    int rc;

    if ((rc = vf_open_vault(s, NULL, VC_PASS, &v, 1)) != 0)
        return rc;
    rc = pqv_vault_writer_add(v, "inbox", NULL, &text, &len);
    pqv_vault_close(v);
    if (rc != 0)
        return rc;
    if ((rc = pqv_vault_open_storage_flags(&w, s, NULL, NULL, PQV_OPEN_NO_KEYFILE)) == 0) {
        if ((rc = pqv_vault_inbox_begin(w, (const uint8_t *)text, len)) == 0 &&
            (rc = add_bytes(w, "new", vf.one, VF_ONE_LEN, 0)) == 0)
            rc = pqv_vault_inbox_commit(w, id);
        pqv_vault_close(w);
    }
    OPENSSL_cleanse(text, len);
    free(text);
    return rc;
}

static void
model_inbox_add(struct vc_model *m)
{
    vf_model_base(m, "");
    vc_model_file(m, "inbox/new", NULL, 0, 0, vf.one, VF_ONE_LEN, 1);
}

static void
prepare_inbox(struct crashsim *cs)
{
    if (op_inbox_add(crashsim_storage(cs)) != 0) {
        fprintf(stderr, "prepare inbox: %s\n", pqv_error_detail());
        exit(2);
    }
}

/* revocation of the writer "inbox" (registered by the preparation, which
 * also leaves one of its batches): one owner epoch */
static int do_revoke(pqv_vault *v) { return pqv_vault_writer_revoke(v, "inbox"); }
static int op_revoke(pqv_storage *s) { return vf_with_writer(s, NULL, do_revoke); }

static int do_import(pqv_vault *v) { return pqv_vault_import(v, NULL); }
static int op_import(pqv_storage *s) { return vf_with_writer(s, NULL, do_import); }

/* ---- the driver ---- */

struct figures {
    unsigned long points, outcomes, max_pending;
};

/* verify_outcome(post, sc, completed, why): reopen and verify. */
static int
verify_outcome(struct crashsim *post, const struct scenario *sc, int completed, char *why,
    size_t whylen)
{
    struct vc_model m;
    pqv_vault *v = NULL;
    int rc;

    sc->model(&m);
    rc = vf_open_vault(crashsim_storage(post), NULL, sc->pass != NULL ? sc->pass : VC_PASS, &v, 1);
    if (rc == PQV_E_AUTH && sc->new_pass)
        rc = vf_open_vault(crashsim_storage(post), NULL, VC_NEWPASS, &v, 1);
    else if (rc == 0 && sc->new_pass && completed) {
        /* Completed: the new passphrase must be the one that works now. */
        pqv_vault_close(v);
        rc = vf_open_vault(crashsim_storage(post), NULL, VC_NEWPASS, &v, 1);
    }
    if (rc != 0)
        return vc_fail(why, whylen, "reopen/unlock: %d %s", rc, pqv_error_detail());
    if (sc->import_first && (rc = pqv_vault_import(v, NULL)) != 0) {
        pqv_vault_close(v);
        return vc_fail(why, whylen, "import after the crash: %d %s", rc, pqv_error_detail());
    }
    if (sc->import_first && crashsim_count(post, "inbox/") > crashsim_count(post, ".tmp-")) {
        /* Only an interrupted writer's packs (no commit point) may stay. */
        struct pqv_inbox_batch *b = NULL;
        size_t nb = 0;
        int pending = 0;
        if (pqv_vault_inbox_list(v, &b, &nb) == 0)
            for (size_t i = 0; i < nb; i++)
                pending += b[i].state != PQV_INBOX_INCOMPLETE;
        free(b);
        if (pending > 0) {
            pqv_vault_close(v);
            return vc_fail(why, whylen, "a batch is left after import");
        }
    }
    rc = vc_verify_vault(v, &m, completed, 1, why, whylen, NULL);
    pqv_vault_close(v);
    return rc;
}

static void
run_scenario(const struct scenario *sc, struct crashsim *base, struct figures *fig)
{
    const char *verbose = getenv("PQV_CRASH_VERBOSE");
    char why[512];
    unsigned failures = 0;

    memset(fig, 0, sizeof(*fig));
    struct crashsim *start = base;
    if (sc->start != NULL)
        start = sc->start();
    else if (sc->prepare != NULL)
        start = crashsim_snapshot(base);
    if (sc->prepare != NULL)
        sc->prepare(start);
    for (unsigned long n = 1; n < 10000; n++) {
        struct crashsim *cs = crashsim_snapshot(start);
        crashsim_arm(cs, n);
        int rc = sc->op(crashsim_storage(cs));
        if (!crashsim_crashed(cs)) {
            /* Completed before step n: the final state, all names new. */
            CHECK_EQ_INT(rc, 0);
            if (rc != 0)
                fprintf(stderr, "  %s: completed with %d: %s\n", sc->name, rc, pqv_error_detail());
            CHECK_EQ_INT(crashsim_pending(cs), 0);
            struct crashsim *post = crashsim_outcome(cs, 0);
            if (verify_outcome(post, sc, 1, why, sizeof(why)) != 0) {
                CHECK(!"final state verifies");
                fprintf(stderr, "  %s: completed: %s\n", sc->name, why);
            }
            crashsim_free(post);
            crashsim_free(cs);
            break;
        }
        if (rc == 0) {
            CHECK(!"an operation that crashed reported success");
            fprintf(stderr, "  %s: crash at step %lu but rc 0\n", sc->name, n);
        }
        fig->points++;
        size_t outcomes = crashsim_outcomes(cs);
        if (crashsim_pending(cs) > fig->max_pending)
            fig->max_pending = crashsim_pending(cs);
        if (verbose != NULL)
            fprintf(stderr, "# %s: step %lu: %zu pending, %zu outcomes\n", sc->name, n,
                crashsim_pending(cs), outcomes);
        for (size_t i = 0; i < outcomes; i++) {
            if (sc->wide && crashsim_pending(cs) <= CRASHSIM_EXHAUSTIVE && i >= 2 &&
                i + 2 < outcomes)
                continue;
            struct crashsim *post = crashsim_outcome(cs, i);
            fig->outcomes++;
            if (verify_outcome(post, sc, 0, why, sizeof(why)) != 0) {
                harness_failures++;
                if (failures++ < 5)
                    fprintf(stderr, "  %s: crash at step %lu, outcome %zu of %zu: %s\n", sc->name,
                        n, i, outcomes, why);
            }
            crashsim_free(post);
        }
        crashsim_free(cs);
    }
    if (start != base)
        crashsim_free(start);
    printf("# %s: %lu crash points, %lu outcomes (at most %lu pending name operations)\n",
        sc->name, fig->points, fig->outcomes, fig->max_pending);
    fflush(stdout);
    CHECK(fig->points > 0);
}

static struct crashsim *base;

static void
setup(void)
{
    char path[512];

    snprintf(tmpdir, sizeof(tmpdir), "%s/pqv-crash.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        exit(2);
    }
    vf_make_files(5);
    tree_z = vc_data(TZ_LEN, 9);
    snprintf(path, sizeof(path), "%s/tree", tmpdir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/tree/sub", tmpdir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/tree/x", tmpdir);
    vf_write_path(path, vf.tree_x, VF_TX_LEN);
    snprintf(path, sizeof(path), "%s/tree/y", tmpdir);
    vf_write_path(path, vf.tree_y, VF_TY_LEN);
    snprintf(path, sizeof(path), "%s/tree/empty", tmpdir);
    vf_write_path(path, vf.tree_x, 0);
    snprintf(path, sizeof(path), "%s/tree/sub/z", tmpdir);
    vf_write_path(path, tree_z, TZ_LEN);
    snprintf(path, sizeof(path), "%s/wide", tmpdir);
    mkdir(path, 0755);
    for (int i = 0; i < WIDE_FILES; i++) {
        snprintf(path, sizeof(path), "%s/wide/f%02d", tmpdir, i);
        vf_write_path(path, vf.tree_x, (size_t)(10 + i));
    }
    snprintf(path, sizeof(path), "%s/repack", tmpdir);
    mkdir(path, 0755);
    for (int i = 0; i < REPACK_FILES; i++) {
        repack_data[i] = vc_data(REPACK_LEN, 40 + (unsigned)i);
        snprintf(path, sizeof(path), "%s/repack/f%02d", tmpdir, i);
        vf_write_path(path, repack_data[i], REPACK_LEN);
    }
    base = base_state();
}

static const struct scenario scenarios[] = {
    { "add one file", op_add_one, vf_model_add_one, NULL, 0, 0, NULL, NULL, 0 },
    { "add a directory", op_add_dir, model_add_dir, NULL, 0, 0, NULL, NULL, 0 },
    { "add a wide directory", op_add_wide, model_add_wide, NULL, 0, 1, NULL, NULL, 0 },
    { "add from a pipe", op_add_fd, vf_model_add_fd, NULL, 0, 0, NULL, NULL, 0 },
    { "add --force", op_add_force, vf_model_add_force, NULL, 0, 0, NULL, NULL, 0 },
    { "rm a file", op_rm, vf_model_rm, NULL, 0, 0, NULL, NULL, 0 },
    { "rm a directory", op_rm_dir, vf_model_rm_dir, NULL, 0, 0, NULL, NULL, 0 },
    { "passwd", op_passwd, vf_model_all, NULL, 1, 0, NULL, NULL, 0 },
    { "recover", op_recover, vf_model_all, NULL, 1, 0, NULL, NULL, 0 },
    { "gc", op_gc, vf_model_all, prepare_gc, 0, 0, NULL, NULL, 0 },
    { "gc compacting", op_gc, model_after_rm, prepare_gc_compact, 0, 0, NULL, NULL, 0 },
    { "gc repacking", op_gc, model_gc_repack, prepare_gc_repack, 0, 0, NULL, NULL, 0 },
    { "forget and gc", op_forget_gc, model_forget, prepare_forget, 0, 0, NULL, NULL, 0 },
    { "upgrade", op_upgrade, model_upgrade, NULL, 0, 0, v1_start, V1_PASS, 0 },
    { "write-only add", op_inbox_add, model_inbox_add, NULL, 0, 0, NULL, NULL, 1 },
    { "import", op_import, model_inbox_add, prepare_inbox, 0, 0, NULL, NULL, 1 },
    { "writer revoke", op_revoke, vf_model_all, prepare_inbox, 0, 0, NULL, NULL, 0 },
};

static void
run_named(const char *name)
{
    struct figures fig;

    if (base == NULL)
        setup();
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
        if (strcmp(scenarios[i].name, name) == 0)
            run_scenario(&scenarios[i], base, &fig);
}

static void test_crash_add_one(void) { run_named("add one file"); }
static void test_crash_add_dir(void) { run_named("add a directory"); }
static void test_crash_add_wide(void) { run_named("add a wide directory"); }
static void test_crash_add_fd(void) { run_named("add from a pipe"); }
static void test_crash_add_force(void) { run_named("add --force"); }
static void test_crash_rm(void) { run_named("rm a file"); }
static void test_crash_rm_dir(void) { run_named("rm a directory"); }
static void test_crash_passwd(void) { run_named("passwd"); }
static void test_crash_recover(void) { run_named("recover"); }
static void test_crash_gc(void) { run_named("gc"); }
static void test_crash_gc_compact(void) { run_named("gc compacting"); }
static void test_crash_upgrade(void) { run_named("upgrade"); }
static void test_crash_inbox_add(void) { run_named("write-only add"); }
static void test_crash_import(void) { run_named("import"); }
static void test_crash_revoke(void) { run_named("writer revoke"); }
static void test_crash_gc_repack(void) { run_named("gc repacking"); }
static void test_crash_forget(void) { run_named("forget and gc"); }

/* The simulator itself: pending operations, barriers and outcomes. */
static void
test_crashsim_model(void)
{
    struct crashsim *cs = crashsim_new();
    pqv_storage *s = crashsim_storage(cs);
    const uint8_t a[] = "aaaa", b[] = "bbbb";

    crashsim_arm(cs, 5);
    REQUIRE(s->ops->put(s, "d/x", a, 4) == 0);           /* step 1 */
    REQUIRE(s->ops->barrier(s) == 0);                    /* step 2 */
    REQUIRE(s->ops->put(s, "d/y", b, 4) == 0);           /* step 3 */
    REQUIRE(s->ops->del(s, "d/x") == 0);                 /* step 4 */
    CHECK_EQ_INT(s->ops->put(s, "d/z", b, 4), PQV_E_IO); /* step 5: crash */
    CHECK(crashsim_crashed(cs));
    CHECK_EQ_INT(s->ops->stat(s, "d/y", NULL), PQV_E_IO);
    CHECK_EQ_INT(s->ops->barrier(s), PQV_E_IO);
    CHECK_EQ_INT(crashsim_pending(cs), 3);
    CHECK_EQ_INT(crashsim_outcomes(cs), 16);
    int seen_x = 0, seen_nox = 0, seen_y = 0, seen_temp = 0;
    for (size_t i = 0; i < crashsim_outcomes(cs); i++) {
        struct crashsim *o = crashsim_outcome(cs, i);
        pqv_storage *os = crashsim_storage(o);
        if (os->ops->stat(os, "d/x", NULL) == 0)
            seen_x++;
        else
            seen_nox++;
        if (os->ops->stat(os, "d/y", NULL) == 0)
            seen_y++;
        CHECK_EQ_INT(os->ops->stat(os, "d/z", NULL), PQV_E_NOTFOUND);
        if (crashsim_count(o, PQV_STORAGE_TEMP_MARK) > 0)
            seen_temp++;
        crashsim_free(o);
    }
    CHECK_EQ_INT(seen_x, 8);
    CHECK_EQ_INT(seen_nox, 8);
    CHECK_EQ_INT(seen_y, 8);
    CHECK(seen_temp > 0);
    crashsim_free(cs);
}

/* ---- get on the real file system: a child killed at each durability
 * call (fsync, rename, unlink, mkdir, creating open) ---- */
static volatile unsigned long kill_countdown;

static int
kill_hook(const char *op, const char *path)
{
    (void)path;
    if (strcmp(op, "write") == 0)
        return 0;
    if (--kill_countdown == 0)
        raise(SIGKILL);
    return 0;
}

static void
test_crash_get_realfs(void)
{
    char vdir[512], out[600], dest[700], cmd[800];
    struct pqv_init_options io = { VC_KEM, 0, &vc_cheap_kdf, 0, NULL, NULL, NULL , 0};
    char code[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS];
    uint8_t *data = vc_data(VF_ONE_LEN, 12);
    pqv_vault *v;
    unsigned long points = 0;
    int done = 0;

    if (base == NULL)
        setup();
    snprintf(vdir, sizeof(vdir), "%s/vault", tmpdir);
    snprintf(out, sizeof(out), "%s/out", tmpdir);
    REQUIRE(pqv_vault_create(vdir, NULL, (const uint8_t *)VC_PASS, strlen(VC_PASS), &io, code, fp) == 0);
    REQUIRE(pqv_vault_open(&v, vdir, NULL) == 0);
    REQUIRE(pqv_vault_unlock(v, (const uint8_t *)VC_PASS, strlen(VC_PASS)) == 0);
    char holder[PQV_LOCK_HOLDER_MAX];
    REQUIRE(pqv_vault_lock_writer(v, 0, holder, sizeof(holder)) == 0);
    REQUIRE(add_bytes(v, "f", data, VF_ONE_LEN, 0) == 0);
    pqv_vault_close(v);

    for (unsigned long n = 1; n < 100 && !done; n++) {
        snprintf(dest, sizeof(dest), "%s/sub/f", out);
        fflush(NULL);
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            pqv_vault *cv;
            kill_countdown = n;
            if (pqv_vault_open(&cv, vdir, NULL) != 0 ||
                pqv_vault_unlock(cv, (const uint8_t *)VC_PASS, strlen(VC_PASS)) != 0)
                _exit(3);
            io_fault_hook = kill_hook;
            int rc = pqv_vault_get(cv, "f", dest, NULL);
            io_fault_hook = NULL;
            pqv_vault_close(cv);
            _exit(rc == 0 ? 0 : 4);
        }
        int status;
        REQUIRE(waitpid(pid, &status, 0) == pid);
        struct stat st;
        int exists = stat(dest, &st) == 0;
        if (WIFEXITED(status)) {
            CHECK_EQ_INT(WEXITSTATUS(status), 0);
            done = 1;
        } else {
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
            points++;
        }
        size_t got;
        if (exists) {
            if (!vf_file_holds(dest, data, VF_ONE_LEN, &got)) {
                CHECK(!"a file at the destination name is complete");
                fprintf(stderr, "  get killed at call %lu: %zu bytes at the destination\n", n, got);
            }
        } else {
            if (done)
                CHECK(!"a completed get left its file");
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out);
        if (system(cmd) != 0)
            CHECK(!"cleanup");
    }
    CHECK(done);
    CHECK(points >= 3);
    printf("# get (real file system): %lu kill points\n", points);
    free(data);
}

static void
test_cleanup(void)
{
    char cmd[400];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (tmpdir[0] != '\0' && system(cmd) != 0)
        CHECK(!"cleanup");
    crashsim_free(base);
    base = NULL;
}

TEST_MAIN(test_crashsim_model, test_crash_add_one, test_crash_add_dir, test_crash_add_wide,
    test_crash_add_fd,
    test_crash_add_force, test_crash_rm, test_crash_rm_dir, test_crash_passwd, test_crash_recover,
    test_crash_gc, test_crash_gc_compact, test_crash_upgrade, test_crash_inbox_add, test_crash_import,
    test_crash_revoke, test_crash_gc_repack, test_crash_forget,
    test_crash_get_realfs, test_cleanup)
