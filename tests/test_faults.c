/*
 * test_faults.c: injected I/O faults at every durability-relevant system
 * call of each vault operation, countdown style (like SQLite's I/O error
 * tests): call number N of open (creating), write, fsync, rename, unlink,
 * mkdir and rmdir fails, for N = 1, 2, ... until the operation completes
 * without reaching N; once failing a single time, once failing from N on.
 * Faults: EIO, ENOSPC, EDQUOT, and a short write (once: the write is retried
 * and must succeed; persistent: every later write fails with ENOSPC, like a
 * disk filling up).
 *
 * A failed operation must return the right code (PQV_E_IO, PQV_E_NOSPACE)
 * with a detail naming the cause, leave no temporary file in the vault or
 * beside a get's destination, and leave the vault as it was: check passes,
 * every earlier file reads back byte-exact, the name being written is
 * absent or old (or, if the fault came after the commit point, wholly new),
 * and once gc has collected orphans the files of the vault are exactly
 * those before the operation.
 *
 * Prints "# <scenario>: N runs, F faults injected" lines (docs/TESTING.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "vaultcheck.h"
#include "vault_fixture.h"

static char tmpdir[256], vdir[300], srcdir[300], outdir[300], cmdbuf[1200];
static char recovery[PQV_RECOVERY_CHARS];

/* ---- the fault hook ---- */

enum { MODE_ONCE = 0, MODE_PERSISTENT = 1 };

static pthread_mutex_t hook_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
    unsigned long n, count, fired;
    int mode, err;
    int committed;            /* a commit-point call went through */
    int fault_after_commit;   /* the first fault came after one */
    int full;                 /* after a persistent short write */
    int fired_unlink;         /* a fault hit an unlink */
    char first_op[16];
} F;

/* Commit points: a segment's link (format 2), the config's rename (the
 * upgrade), a record's or key file's rename, a record's unlink (format 1). */
static int
is_commit(const char *op, const char *path)
{
    if (strcmp(op, "rename") == 0)
        return (strstr(path, "/segments/") != NULL && strstr(path, ".tmp-") == NULL) ||
            (strlen(path) >= 7 && strcmp(path + strlen(path) - 7, "/config") == 0) ||
            strstr(path, "/records/") != NULL ||
            (strlen(path) >= 8 && strcmp(path + strlen(path) - 8, "/keyfile") == 0) ||
            strncmp(path, outdir, strlen(outdir)) == 0;
    if (strcmp(op, "unlink") == 0)
        return strstr(path, "/records/") != NULL && strstr(path, ".tmp-") == NULL;
    return 0;
}

static int
fault_hook(const char *op, const char *path)
{
    int e = 0;

    /* Reads of the files being added are input, not durable state: their
     * failures are tested at the command line (tests/cli/hostile.sh). */
    if (strcmp(op, "read") == 0)
        return 0;
    pthread_mutex_lock(&hook_mutex);
    if (F.full && strcmp(op, "write") == 0) {
        e = ENOSPC;
    } else {
        F.count++;
        if (F.count == F.n || (F.mode == MODE_PERSISTENT && F.count > F.n)) {
            e = F.err;
            if (e == IO_FAULT_SHORT && strcmp(op, "write") != 0)
                e = F.mode == MODE_PERSISTENT ? ENOSPC : 0;
            else if (e == IO_FAULT_SHORT && F.mode == MODE_PERSISTENT)
                F.full = 1;
        }
    }
    if (e != 0) {
        if (F.fired++ == 0) {
            F.fault_after_commit = F.committed;
            snprintf(F.first_op, sizeof(F.first_op), "%s", op);
        }
        if (strcmp(op, "unlink") == 0)
            F.fired_unlink = 1;
    } else if (is_commit(op, path)) {
        F.committed = 1;
    }
    pthread_mutex_unlock(&hook_mutex);
    return e;
}

static void
hook_arm(unsigned long n, int mode, int err)
{
    memset(&F, 0, sizeof(F));
    F.n = n;
    F.mode = mode;
    F.err = err;
    io_fault_hook = fault_hook;
}

static void
hook_off(void)
{
    io_fault_hook = NULL;
}

/* ---- the vault on disk ---- */

static void
run_cmd(const char *fmt, const char *arg)
{
    char cmd[1024];

    snprintf(cmd, sizeof(cmd), fmt, arg);
    if (system(cmd) != 0) {
        fprintf(stderr, "failed: %s\n", cmd);
        exit(2);
    }
}

static int
add_bytes(pqv_vault *v, const char *name, int force)
{
    char path[600];
    struct pqv_add_options opt = { .force = force };

    snprintf(path, sizeof(path), "%s/%s", srcdir, name);
    return pqv_vault_add_path(v, path, name, &opt);
}

/* fresh_vault(): the starting state of every scenario. */
static void
fresh_vault(void)
{
    struct pqv_init_options io = { VC_KEM, 0, &vc_cheap_kdf, 0, NULL, NULL, NULL , 0};
    char fp[PQV_FINGERPRINT_CHARS];
    pqv_vault *v;

    static int have_template;

    /* Made once, then copied: creating costs an unlock with the default
     * Argon2 parameters of the unused slot. */
    if (have_template) {
        snprintf(cmdbuf, sizeof(cmdbuf), "rm -rf '%s' && cp -a '%s.template' '%s'", vdir, vdir, vdir);
        if (system(cmdbuf) != 0)
            exit(2);
        return;
    }
    run_cmd("rm -rf '%s'", vdir);
    if (pqv_vault_create(vdir, NULL, (const uint8_t *)VC_PASS, strlen(VC_PASS), &io, recovery,
            fp) != 0 ||
        vf_open_vault(NULL, vdir, VC_PASS, &v, 1) != 0 ||
        pqv_vault_passwd(v, 1, (const uint8_t *)"slot one", 8, &vc_cheap_kdf) != 0 ||
        add_bytes(v, "keep/a", 0) != 0 ||
        add_bytes(v, "keep/empty", 0) != 0 ||
        add_bytes(v, "old", 0) != 0 ||
        add_bytes(v, "gone/1", 0) != 0 ||
        add_bytes(v, "gone/2", 0) != 0) {
        fprintf(stderr, "fresh vault: %s\n", pqv_error_detail());
        exit(2);
    }
    pqv_vault_close(v);
    snprintf(cmdbuf, sizeof(cmdbuf), "cp -a '%s' '%s.template'", vdir, vdir);
    if (system(cmdbuf) != 0)
        exit(2);
    have_template = 1;
}

/* ---- a listing of the vault's files, to compare states ---- */

static char *listing;
static size_t listing_len, listing_cap;
static unsigned long temps_found;

static int
list_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F)
        return 0;
    if (strstr(path, ".tmp-") != NULL)
        temps_found++;
    if (strcmp(path + strlen(path) - 5, "/lock") == 0)
        return 0;
    uint32_t h = 2166136261u;
    FILE *f = fopen(path, "rb");
    uint8_t buf[65536];
    size_t got;
    while (f != NULL && (got = fread(buf, 1, sizeof(buf), f)) > 0)
        for (size_t i = 0; i < got; i++)
            h = (h ^ buf[i]) * 16777619u;
    if (f != NULL)
        fclose(f);
    char line[700];
    int n = snprintf(line, sizeof(line), "%s %lld %08x\n", path, (long long)st->st_size, h);
    if (listing_len + (size_t)n + 1 > listing_cap) {
        listing_cap = 2 * (listing_cap + (size_t)n + 1024);
        listing = realloc(listing, listing_cap);
    }
    memcpy(listing + listing_len, line, (size_t)n + 1);
    listing_len += (size_t)n;
    return 0;
}

/* dir_state(dir, temps): the files under ${dir} (names, sizes, hashes; the
 * order of nftw is stable for an unchanged directory); counts temporaries. */
static char *
dir_state(const char *dir, unsigned long *temps)
{
    listing = NULL;
    listing_len = listing_cap = 0;
    temps_found = 0;
    nftw(dir, list_one, 16, FTW_PHYS);
    if (temps != NULL)
        *temps = temps_found;
    return listing != NULL ? listing : strdup("");
}

/* ---- scenarios ---- */

struct scenario {
    const char *name;
    int (*op)(void);
    void (*model)(struct vc_model *m);
    void (*prepare)(void);
    int new_pass;
    int is_get;
};

/* with_writer(fn): ${fn} on the vault, unlocked and locked. */
static int
with_writer(int (*fn)(pqv_vault *v))
{
    return vf_with_writer(NULL, vdir, fn);
}

/* The models but that of add of a directory: vault_fixture.h. */
static int do_add_one(pqv_vault *v) { return add_bytes(v, "new", 0); }
static int op_add_one(void) { return with_writer(do_add_one); }

static int
do_add_dir(pqv_vault *v)
{
    char path[600];

    snprintf(path, sizeof(path), "%s/tree", srcdir);
    return pqv_vault_add_path(v, path, "tree", NULL);
}
static int op_add_dir(void) { return with_writer(do_add_dir); }
static void
model_add_dir(struct vc_model *m)
{
    vf_model_base(m, "");
    vc_model_dir(m, "tree", 0, 1);
    vc_model_file(m, "tree/x", NULL, 0, 0, vf.tree_x, VF_TX_LEN, 1);
    vc_model_file(m, "tree/y", NULL, 0, 0, vf.tree_y, VF_TY_LEN, 1);
    vc_model_dir(m, "tree/sub", 0, 1);
    vc_model_file(m, "tree/sub/x", NULL, 0, 0, vf.tree_x, VF_TX_LEN, 1);
}

static int
do_add_fd(pqv_vault *v)
{
    return vf_add_pipe(v, "piped", vf.piped, VF_PIPED_LEN, 0600);
}
static int op_add_fd(void) { return with_writer(do_add_fd); }

static int
do_add_force(pqv_vault *v)
{
    char path[600];
    struct pqv_add_options opt = { .force = 1 };

    snprintf(path, sizeof(path), "%s/replacement", srcdir);
    return pqv_vault_add_path(v, path, "old", &opt);
}
static int op_add_force(void) { return with_writer(do_add_force); }

static int do_rm(pqv_vault *v) { return pqv_vault_rm(v, "old", NULL); }
static int op_rm(void) { return with_writer(do_rm); }

static int do_rm_dir(pqv_vault *v) { return pqv_vault_rm(v, "gone", NULL); }
static int op_rm_dir(void) { return with_writer(do_rm_dir); }

static int
do_passwd(pqv_vault *v)
{
    return pqv_vault_passwd(v, 0, (const uint8_t *)VC_NEWPASS, strlen(VC_NEWPASS), &vc_cheap_kdf);
}
static int op_passwd(void) { return with_writer(do_passwd); }

static int
op_recover(void)
{
    return pqv_vault_recover(vdir, NULL, recovery, (const uint8_t *)VC_NEWPASS,
        strlen(VC_NEWPASS), &vc_cheap_kdf);
}

static void
prepare_gc(void)
{
    char path[700];
    uint8_t *junk = vc_data(500, 99);

    snprintf(path, sizeof(path), "%s/packs/ab", vdir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/packs/ab/ab00112233445566778899aabbccddee", vdir);
    vf_write_path(path, junk, 500);
    snprintf(path, sizeof(path), "%s/packs/ab/ab00112233445566778899aabbccddee.tmp-0123456789abcdef", vdir);
    vf_write_path(path, junk, 200);
    snprintf(path, sizeof(path), "%s/config.tmp-0123456789abcdef", vdir);
    vf_write_path(path, junk, 20);
    free(junk);
}

static int do_gc(pqv_vault *v) { return pqv_vault_gc(v, NULL, NULL); }
static int op_gc(void) { return with_writer(do_gc); }

static int
op_get(void)
{
    char dest[700];
    pqv_vault *v;
    int rc = vf_open_vault(NULL, vdir, VC_PASS, &v, 0);

    if (rc != 0)
        return rc;
    snprintf(dest, sizeof(dest), "%s/sub/old", outdir);
    rc = pqv_vault_get(v, "old", dest, NULL);
    pqv_vault_close(v);
    return rc;
}

static const struct scenario scenarios[] = {
    { "add one file", op_add_one, vf_model_add_one, NULL, 0, 0 },
    { "add a directory", op_add_dir, model_add_dir, NULL, 0, 0 },
    { "add from a pipe", op_add_fd, vf_model_add_fd, NULL, 0, 0 },
    { "add --force", op_add_force, vf_model_add_force, NULL, 0, 0 },
    { "rm a file", op_rm, vf_model_rm, NULL, 0, 0 },
    { "rm a directory", op_rm_dir, vf_model_rm_dir, NULL, 0, 0 },
    { "passwd", op_passwd, vf_model_all, NULL, 1, 0 },
    { "recover", op_recover, vf_model_all, NULL, 1, 0 },
    { "gc", op_gc, vf_model_all, prepare_gc, 0, 0 },
    { "get", op_get, vf_model_all, NULL, 0, 1 },
};

static const struct {
    const char *name;
    int err, expect;
    const char *message;
} faults[] = {
    { "EIO", EIO, PQV_E_IO, "Input/output error" },
    { "ENOSPC", ENOSPC, PQV_E_NOSPACE, "No space left on device" },
    { "EDQUOT", EDQUOT, PQV_E_NOSPACE, "Disk quota exceeded" },
    { "short write", IO_FAULT_SHORT, PQV_E_NOSPACE, "No space left on device" },
};

/* get_dest_ok(): the get's destination is absent or complete; no hidden
 * temporary beside it. */
static int
get_dest_check(int completed, char *why, size_t whylen)
{
    char dest[700];
    unsigned long temps;
    struct stat st;

    snprintf(dest, sizeof(dest), "%s/sub/old", outdir);
    free(dir_state(outdir, &temps));
    if (temps != 0)
        return vc_fail(why, whylen, "%lu temporaries beside the destination", temps);
    if (stat(dest, &st) != 0)
        return completed ? vc_fail(why, whylen, "completed get left no file") : 0;
    size_t got;
    if (!vf_file_holds(dest, vf.old, VF_OLD_LEN, &got))
        return vc_fail(why, whylen, "destination holds %zu bytes, not the file", got);
    if (!completed && !F.committed)
        return vc_fail(why, whylen, "failed get left its destination");
    return 0;
}

/* verify(sc, rc, before, still_old): the state after one run. */
static int
verify(const struct scenario *sc, int rc, const char *before, int *still_old, char *why,
    size_t whylen)
{
    struct vc_model m;
    pqv_vault *v;
    unsigned long temps;
    int completed = rc == 0, r;

    *still_old = 0;
    free(dir_state(vdir, &temps));
    if (temps != 0 && !F.fired_unlink && !sc->prepare)
        return vc_fail(why, whylen, "%lu temporary files left in the vault", temps);
    sc->model(&m);
    /* Records are written in parallel: once any commit point was passed
     * (even after the fault, by another worker), those names may be new;
     * each file is still all-or-nothing. */
    if (!completed && !F.committed) {
        /* Nothing was committed: every name must be in its old state. */
        for (size_t i = 0; i < m.n; i++) {
            m.w[i].new_present = m.w[i].old_present;
            m.w[i].new_data = m.w[i].old_data;
            m.w[i].new_len = m.w[i].old_len;
        }
    }
    r = vf_open_vault(NULL, vdir, VC_PASS, &v, 1);
    if (r == PQV_E_AUTH && sc->new_pass && (completed || F.committed))
        r = vf_open_vault(NULL, vdir, VC_NEWPASS, &v, 1);
    if (r != 0)
        return vc_fail(why, whylen, "reopen/unlock: %d %s", r, pqv_error_detail());
    if (sc->is_get && get_dest_check(completed, why, whylen) != 0) {
        pqv_vault_close(v);
        return -1;
    }
    r = vc_verify_vault(v, &m, sc->is_get ? 0 : completed, 1, why, whylen, NULL);
    pqv_vault_close(v);
    if (r != 0)
        return r;
    /* After gc, is the vault exactly as before?  Then the next run may
     * start from it. */
    char *after = dir_state(vdir, NULL);
    *still_old = strcmp(after, before) == 0;
    if (!completed && !F.committed && !*still_old && !sc->prepare) {
        free(after);
        return vc_fail(why, whylen, "the vault's files changed although nothing was committed");
    }
    free(after);
    return 0;
}

static void
run_faults(const struct scenario *sc)
{
    unsigned long runs = 0, injected = 0, failures = 0;
    char why[600];
    int need_fresh = 1;

    for (size_t f = 0; f < sizeof(faults) / sizeof(faults[0]); f++)
        for (int mode = MODE_ONCE; mode <= MODE_PERSISTENT; mode++) {
            for (unsigned long n = 1; n < 2000; n++) {
                if (need_fresh) {
                    fresh_vault();
                    need_fresh = 0;
                }
                if (sc->prepare != NULL)
                    sc->prepare();
                char *before = dir_state(vdir, NULL);
                run_cmd("rm -rf '%s'", outdir);
                pqv_error_clear();
                hook_arm(n, mode, faults[f].err);
                int rc = sc->op();
                hook_off();
                runs++;
                injected += F.fired;
                int fired = F.fired > 0, still_old = 0, bad = 0;
                char detail[300];
                snprintf(detail, sizeof(detail), "%s", pqv_error_detail());
                if (rc != 0 && !fired) {
                    bad = snprintf(why, sizeof(why), "failed with %d without a fault: %s", rc, detail);
                } else if (rc != 0 && rc != faults[f].expect) {
                    bad = snprintf(why, sizeof(why), "returned %d, expected %d: %s", rc,
                        faults[f].expect, detail);
                } else if (rc != 0 && strstr(detail, faults[f].message) == NULL) {
                    bad = snprintf(why, sizeof(why), "message does not give the cause: \"%s\"",
                        detail);
                } else if (verify(sc, rc, before, &still_old, why, sizeof(why)) != 0) {
                    bad = 1;
                }
                free(before);
                if (bad) {
                    harness_failures++;
                    if (failures++ < 6)
                        fprintf(stderr, "  %s, %s %s at call %lu (%s): %s\n", sc->name, faults[f].name,
                            mode == MODE_ONCE ? "once" : "from then on", n, F.first_op, why);
                    still_old = 0;
                }
                if (!still_old || sc->prepare != NULL)
                    need_fresh = 1;
                if (!fired)
                    break; /* completed before call n */
            }
        }
    printf("# %s: %lu runs, %lu faults injected\n", sc->name, runs, injected);
    fflush(stdout);
}

static void
setup(void)
{
    char path[700];

    if (tmpdir[0] != '\0')
        return;
    /* Faults are injected, not real: a memory file system (no waiting on
     * fsync) keeps the run short where there is one. */
    const char *base = getenv("TMPDIR");
    if (base == NULL)
        base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(tmpdir, sizeof(tmpdir), "%s/pqv-faults.XXXXXX", base);
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        exit(2);
    }
    snprintf(vdir, sizeof(vdir), "%s/vault", tmpdir);
    snprintf(srcdir, sizeof(srcdir), "%s/src", tmpdir);
    snprintf(outdir, sizeof(outdir), "%s/out", tmpdir);
    vf_make_files(4); /* gone/2 repeats gone/1 */
    snprintf(cmdbuf, sizeof(cmdbuf), "mkdir -p '%s/keep' '%s/gone' '%s/tree/sub'", srcdir, srcdir, srcdir);
    if (system(cmdbuf) != 0)
        exit(2);
#define PUT(rel, data, len)                                          \
    do {                                                             \
        snprintf(path, sizeof(path), "%s/%s", srcdir, rel);          \
        vf_write_path(path, data, len);                              \
    } while (0)
    PUT("keep/a", vf.keep_a, VF_KEEP_A_LEN);
    PUT("keep/empty", vf.keep_empty, 0);
    PUT("old", vf.old, VF_OLD_LEN);
    PUT("gone/1", vf.gone1, VF_GONE_LEN);
    PUT("gone/2", vf.gone2, VF_GONE_LEN);
    PUT("new", vf.one, VF_ONE_LEN);
    PUT("tree/x", vf.tree_x, VF_TX_LEN);
    PUT("tree/y", vf.tree_y, VF_TY_LEN);
    PUT("tree/sub/x", vf.tree_x, VF_TX_LEN);
    PUT("replacement", vf.replace, VF_REPLACE_LEN);
#undef PUT
}

static void
run_named(const char *name)
{
    setup();
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
        if (strcmp(scenarios[i].name, name) == 0)
            run_faults(&scenarios[i]);
}

static void test_faults_add_one(void) { run_named("add one file"); }
static void test_faults_add_dir(void) { run_named("add a directory"); }
static void test_faults_add_fd(void) { run_named("add from a pipe"); }
static void test_faults_add_force(void) { run_named("add --force"); }
static void test_faults_rm(void) { run_named("rm a file"); }
static void test_faults_rm_dir(void) { run_named("rm a directory"); }
static void test_faults_passwd(void) { run_named("passwd"); }
static void test_faults_recover(void) { run_named("recover"); }
static void test_faults_gc(void) { run_named("gc"); }
static void test_faults_get(void) { run_named("get"); }

static void
test_cleanup(void)
{
    if (tmpdir[0] != '\0')
        run_cmd("rm -rf '%s'", tmpdir);
}

TEST_MAIN(test_faults_add_one, test_faults_add_dir, test_faults_add_fd, test_faults_add_force,
    test_faults_rm, test_faults_rm_dir, test_faults_passwd, test_faults_recover, test_faults_gc,
    test_faults_get, test_cleanup)
