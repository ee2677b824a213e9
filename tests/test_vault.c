/*
 * test_vault.c: the vault library end to end on a real directory: create,
 * unlock, add, list, get, rm, replace, check, gc, passwd, recover, lock,
 * and the tampering the catalogue must detect.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "pqvault/aead.h"
#include "pqvault/vault.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "util/util.h"

static const struct pqv_check_options read_data_opt = { 1, NULL, NULL };

static const struct pqv_kdf_params cheap = { 1, 64, 1 };
static const uint8_t pass[] = "vault test passphrase";
#define PASS pass, sizeof(pass) - 1

static char root[256];
static char recovery[PQV_RECOVERY_CHARS];

static void
path_of(char *out, size_t n, const char *rel)
{
    snprintf(out, n, "%s/%s", root, rel);
}

static void
write_file(const char *rel, const uint8_t *data, size_t len, mode_t mode)
{
    char p[512];
    FILE *f;

    path_of(p, sizeof(p), rel);
    f = fopen(p, "wb");
    if (f == NULL) {
        perror(p);
        return;
    }
    if (len > 0 && fwrite(data, 1, len, f) != len)
        perror("fwrite");
    fclose(f);
    chmod(p, mode);
}

static int
same_file(const char *a_rel, const char *b_rel)
{
    char a[512], b[512], cmd[1200];

    path_of(a, sizeof(a), a_rel);
    path_of(b, sizeof(b), b_rel);
    snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

static pqv_vault *
open_vault(void)
{
    char dir[512];
    pqv_vault *v = NULL;

    path_of(dir, sizeof(dir), "vault");
    if (pqv_vault_open(&v, dir, NULL) != 0)
        return NULL;
    if (pqv_vault_unlock(v, PASS) != 0 || pqv_vault_lock_writer(v, 0, NULL, 0) != 0) {
        pqv_vault_close(v);
        return NULL;
    }
    return v;
}

static size_t
count_files(const char *rel)
{
    char cmd[600], p[512];
    FILE *f;
    size_t n = 0;

    path_of(p, sizeof(p), rel);
    snprintf(cmd, sizeof(cmd), "find '%s' -type f | wc -l", p);
    if ((f = popen(cmd, "r")) != NULL) {
        if (fscanf(f, "%zu", &n) != 1)
            n = 0;
        pclose(f);
    }
    return n;
}

static void
test_create_and_unlock(void)
{
    char dir[512], fp[PQV_FINGERPRINT_CHARS];
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", PQV_AEAD_CHACHA20POLY1305, &cheap,
        0, NULL, NULL, NULL , 0};
    struct pqv_info info;
    pqv_vault *v = NULL;

    path_of(dir, sizeof(dir), "vault");
    REQUIRE(pqv_vault_create(dir, NULL, PASS, &opt, recovery, fp) == 0);
    CHECK_EQ_INT(strlen(recovery), PQV_RECOVERY_CHARS - 1);
    CHECK(strncmp(fp, "pqv1-", 5) == 0);
    /* A second init refuses. */
    CHECK_EQ_INT(pqv_vault_create(dir, NULL, PASS, &opt, recovery + 0, fp), PQV_E_EXISTS);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    CHECK_EQ_INT(pqv_vault_unlock(v, (const uint8_t *)"nope", 4), PQV_E_AUTH);
    CHECK(pqv_vault_unlock(v, PASS) == 0);
    CHECK_EQ_INT(pqv_vault_slot(v), 0);
    CHECK(pqv_vault_info(v, &info) == 0);
    CHECK(strcmp(info.kem, "FrodoKEM-640-SHAKE") == 0);
    CHECK(strcmp(info.aead, "ChaCha20-Poly1305") == 0);
    CHECK(strcmp(info.fingerprint, fp) == 0);
    CHECK_EQ_INT(info.records, 0);
    CHECK_EQ_INT(info.format_version, PQV_FORMAT_DEFAULT);
    pqv_vault_close(v);
    /* No vault elsewhere. */
    CHECK_EQ_INT(pqv_vault_open(&v, "/nonexistent/pqv", NULL), PQV_E_NOVAULT);
    path_of(dir, sizeof(dir), "");
    CHECK_EQ_INT(pqv_vault_open(&v, dir, NULL), PQV_E_NOVAULT);
}

static void
test_name_normalize(void)
{
    char out[PQV_NAME_MAX + 1];
    struct {
        const char *in, *out;
    } ok[] = {
        { "a", "a" }, { "./a/b/", "a/b" }, { "/abs//path/", "abs/path" },
        { "a/./b", "a/b" }, { "-dash", "-dash" }, { "sp ace/ü", "sp ace/ü" },
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        CHECK(pqv_name_normalize(ok[i].in, out, sizeof(out)) == 0);
        CHECK(strcmp(out, ok[i].out) == 0);
    }
    CHECK_EQ_INT(pqv_name_normalize("", out, sizeof(out)), PQV_E_INVAL);
    CHECK_EQ_INT(pqv_name_normalize("/", out, sizeof(out)), PQV_E_INVAL);
    CHECK_EQ_INT(pqv_name_normalize("a/../b", out, sizeof(out)), PQV_E_INVAL);
    CHECK_EQ_INT(pqv_name_normalize("..", out, sizeof(out)), PQV_E_INVAL);
}

static uint8_t *
pattern(size_t n, uint8_t seed)
{
    uint8_t *p = malloc(n + 1);
    for (size_t i = 0; p != NULL && i < n; i++)
        p[i] = (uint8_t)(i * 31 + seed + (i >> 13));
    return p;
}

static void
test_add_get_sizes(void)
{
    static const size_t sizes[] = { 0, 1, 65536, 4u << 20, (4u << 20) + 1, 9u << 20 };
    pqv_vault *v = open_vault();
    char src[64], path[512], out[512];

    REQUIRE(v != NULL);
    path_of(path, sizeof(path), "src");
    mkdir(path, 0755);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint8_t *data = pattern(sizes[i], (uint8_t)i);
        snprintf(src, sizeof(src), "src/f%zu", i);
        write_file(src, data, sizes[i], 0640);
        free(data);
    }
    CHECK(pqv_vault_add_path(v, path, "src", NULL) == 0);
    path_of(out, sizeof(out), "out");
    CHECK(pqv_vault_get(v, "src", out, NULL) == 0);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char a[64], b[64];
        struct stat sa, sb;
        snprintf(a, sizeof(a), "src/f%zu", i);
        snprintf(b, sizeof(b), "out/src/f%zu", i);
        CHECK(same_file(a, b));
        path_of(path, sizeof(path), a);
        stat(path, &sa);
        path_of(path, sizeof(path), b);
        CHECK(stat(path, &sb) == 0);
        CHECK_EQ_INT(sa.st_mode & 07777, sb.st_mode & 07777);
        CHECK_EQ_INT(sa.st_mtim.tv_sec, sb.st_mtim.tv_sec);
        CHECK_EQ_INT(sa.st_mtim.tv_nsec, sb.st_mtim.tv_nsec);
    }
    /* One add, one segment; the data in few packs (the pattern
     * compresses). */
    CHECK_EQ_INT(count_files("vault/segments"), 2);
    size_t packs = count_files("vault/packs");
    CHECK(packs >= 1 && packs <= 8);
    struct pqv_entry e;
    CHECK(pqv_vault_lookup(v, "src/f4", &e) == 0);
    CHECK_EQ_INT(e.size, (4u << 20) + 1);
    /* Chunks of at most 2 MiB (format 3): at least three. */
    CHECK(e.nobjects >= 3);
    CHECK_EQ_INT(e.type, PQV_ENTRY_FILE);
    pqv_entry_clear(&e);
    CHECK_EQ_INT(pqv_vault_lookup(v, "src/nothing", &e), PQV_E_NOTFOUND);
    /* Refuses to overwrite; --force replaces. */
    CHECK_EQ_INT(pqv_vault_get(v, "src/f1", out, NULL), PQV_E_EXISTS);
    struct pqv_get_options force = { .force = 1 };
    CHECK(pqv_vault_get(v, "src/f1", out, &force) == 0);
    struct pqv_check_result res;
    CHECK(pqv_vault_check(v, &read_data_opt, &res) == 0);
    CHECK_EQ_INT(res.records, 7);
    CHECK_EQ_INT(res.objects, packs);
    CHECK_EQ_INT(res.damaged + res.orphans + res.temporaries, 0);
    pqv_vault_close(v);
}

static void
test_list_prefix(void)
{
    pqv_vault *v = open_vault();
    struct pqv_entry *es;
    size_t n;

    REQUIRE(v != NULL);
    CHECK(pqv_vault_list(v, NULL, NULL, &es, &n) == 0);
    CHECK_EQ_INT(n, 7);
    CHECK(n > 0 && strcmp(es[0].name, "src") == 0 && es[0].type == PQV_ENTRY_DIR);
    for (size_t i = 1; i < n; i++)
        CHECK(strcmp(es[i - 1].name, es[i].name) < 0);
    pqv_entries_free(es, n);
    CHECK(pqv_vault_list(v, "src/f1", NULL, &es, &n) == 0);
    CHECK_EQ_INT(n, 1);
    pqv_entries_free(es, n);
    CHECK(pqv_vault_list(v, "sr", NULL, &es, &n) == 0); /* not a path prefix */
    CHECK_EQ_INT(n, 0);
    pqv_entries_free(es, n);
    pqv_vault_close(v);
}

static void
test_replace_and_rm(void)
{
    pqv_vault *v = open_vault();
    char path[512], out[512];
    uint8_t *data = pattern(100, 9);
    struct pqv_add_options force = { .force = 1 };

    REQUIRE(v != NULL && data != NULL);
    write_file("new", data, 100, 0600);
    path_of(path, sizeof(path), "new");
    /* Another file than the one src/f5 was added from: refused. */
    CHECK_EQ_INT(pqv_vault_add_path(v, path, "src/f5", NULL), PQV_E_EXISTS);
    CHECK(strstr(pqv_error_detail(), "added from") != NULL);
    size_t before = count_files("vault/packs");
    CHECK(pqv_vault_add_path(v, path, "src/f5", &force) == 0);
    /* A new pack; the old data stays until gc (other names share packs). */
    CHECK_EQ_INT(count_files("vault/packs"), before + 1);
    path_of(out, sizeof(out), "replaced");
    CHECK(pqv_vault_get(v, "src/f5", out, NULL) == 0);
    CHECK(same_file("new", "replaced"));
    CHECK(pqv_vault_rm(v, "src/f5", NULL) == 0);
    CHECK_EQ_INT(pqv_vault_rm(v, "src/f5", NULL), PQV_E_NOTFOUND);
    /* The snapshots before keep the data: gc removes nothing of it ... */
    struct pqv_check_result res;
    CHECK(pqv_vault_gc(v, NULL, &res) == 0);
    CHECK_EQ_INT(res.repacked, 0);
    CHECK_EQ_INT(count_files("vault/packs"), before + 1);
    /* ... until they are forgotten: then the new pack goes (nothing
     * refers to it now), and an old one that held the replaced data is
     * rewritten without it; the others stay. */
    struct pqv_forget_options keep1 = { .last = 1 };
    CHECK(pqv_vault_forget(v, &keep1, NULL) == 0);
    CHECK(pqv_vault_gc(v, NULL, &res) == 0);
    CHECK_EQ_INT(res.removed >= 1 + res.repacked, 1);
    CHECK_EQ_INT(count_files("vault/packs"), before);
    CHECK(pqv_vault_check(v, &read_data_opt, &res) == 0);
    struct pqv_entry e;
    CHECK_EQ_INT(pqv_vault_lookup(v, "src/f5", &e), PQV_E_NOTFOUND);
    free(data);
    pqv_vault_close(v);
}

static void
test_add_fd_pipe(void)
{
    pqv_vault *v = open_vault();
    int fds[2];
    /* 17 objects: more than the first allocation of object ids (16), so
     * the id array grows while objects are in flight (a use after free
     * that ASan caught in a 300 MiB pipe test). */
    size_t n = (68u << 20) + 123;
    uint8_t *data = pattern(n, 3);
    char out[512];

    REQUIRE(v != NULL && data != NULL && pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        size_t off = 0;
        while (off < n) {
            ssize_t w = write(fds[1], data + off, n - off > (1u << 20) ? (1u << 20) : n - off);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    CHECK(pqv_vault_add_fd(v, fds[0], "piped", 0644, 1700000000, NULL) == 0);
    close(fds[0]);
    waitpid(pid, NULL, 0);
    write_file("piped.orig", data, n, 0644);
    path_of(out, sizeof(out), "piped.back");
    CHECK(pqv_vault_get(v, "piped", out, NULL) == 0);
    CHECK(same_file("piped.orig", "piped.back"));
    struct stat st;
    CHECK(stat(out, &st) == 0 && st.st_mtim.tv_sec == 1700000000);
    free(data);
    pqv_vault_close(v);
}

/* Run ${cmd} in the test directory. */
static int
sh(const char *fmt, const char *arg)
{
    char cmd[2048], inner[1500];

    snprintf(inner, sizeof(inner), fmt, arg);
    snprintf(cmd, sizeof(cmd), "cd '%s' && %s", root, inner);
    return system(cmd);
}

static void
test_swapped_records_detected(void)
{
    pqv_vault *v = open_vault();
    struct pqv_entry *es;
    struct pqv_check_result res;
    size_t n;
    char path[512], out[512], out2[512];

    REQUIRE(v != NULL);
    /* Two segments swapped: the catalogue does not verify. */
    CHECK(sh("cd vault/segments && set -- $(ls | sort | tail -n 2) && [ $# -eq 2 ] && cp $1 swap.tmp && "
             "cp $2 $1 && cp swap.tmp $2 && rm swap.tmp%s", "") == 0);
    CHECK_EQ_INT(pqv_vault_list(v, NULL, NULL, &es, &n), PQV_E_INTEGRITY);
    CHECK_EQ_INT(pqv_vault_check(v, NULL, &res), PQV_E_INTEGRITY);
    CHECK_EQ_INT(res.damaged, 1);
    CHECK(sh("cd vault/segments && set -- $(ls | sort | tail -n 2) && [ $# -eq 2 ] && cp $1 swap.tmp && "
             "cp $2 $1 && cp swap.tmp $2 && rm swap.tmp%s", "") == 0);
    CHECK(pqv_vault_check(v, NULL, &res) == 0);
    /* Two packs of the same size (two one-byte files added apart) swapped:
     * sizes match, data does not; get fails and writes nothing. */
    write_file("one-a", (const uint8_t *)"a", 1, 0644);
    write_file("one-b", (const uint8_t *)"b", 1, 0644);
    path_of(path, sizeof(path), "one-a");
    CHECK(pqv_vault_add_path(v, path, "one-a", NULL) == 0);
    CHECK(sh("ls vault/packs/*/* | sort > packs.before%s", "") == 0);
    path_of(path, sizeof(path), "one-b");
    CHECK(pqv_vault_add_path(v, path, "one-b", NULL) == 0);
    CHECK(sh("mkdir -p saved && rm -rf saved/packs && cp -r vault/packs saved/ && "
             "a=$(ls vault/packs/*/* | sort | comm -13 packs.before -); "
             "b=$(find vault/packs -type f -size $(stat -c %%s \"$a\")c | grep -v \"$a\" | head -n 1); "
             "[ -n \"$b\" ] && cp \"$a\" swap.tmp && cp \"$b\" \"$a\" && cp swap.tmp \"$b\"%s", "") == 0);
    path_of(out, sizeof(out), "moved-a");
    path_of(out2, sizeof(out2), "moved-b");
    CHECK_EQ_INT(pqv_vault_get(v, "one-b", out2, NULL), PQV_E_INTEGRITY);
    struct stat st;
    CHECK(stat(out2, &st) != 0); /* the failed get wrote nothing */
    CHECK_EQ_INT(sh("ls -a '%s' 2>/dev/null | grep -q pqvault", root), 256); /* no temp left */
    CHECK(pqv_vault_check(v, NULL, &res) == 0); /* sizes are right */
    CHECK_EQ_INT(pqv_vault_check(v, &read_data_opt, &res), PQV_E_INTEGRITY);
    CHECK_EQ_INT(res.damaged, 2); /* each pack fails its hash */
    CHECK(sh("rm -rf vault/packs && cp -r saved/packs vault/%s", "") == 0);
    /* (Reopened: an open vault keeps its directories open, and these were
     * replaced under it.) */
    pqv_vault_close(v);
    REQUIRE((v = open_vault()) != NULL);
    CHECK(pqv_vault_check(v, &read_data_opt, &res) == 0);
    CHECK(pqv_vault_get(v, "one-a", out, NULL) == 0);
    CHECK(pqv_vault_rm(v, "one-a", NULL) == 0 && pqv_vault_rm(v, "one-b", NULL) == 0);
    pqv_vault_close(v);
}

static void
test_config_tamper(void)
{
    pqv_vault *v = NULL;
    char dir[512];

    path_of(dir, sizeof(dir), "vault");
    CHECK(sh("cp vault/config config.bak && sed -i 's/^created \\(.*\\)/created 1\\1/' vault/config%s", "") == 0);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    CHECK_EQ_INT(pqv_vault_unlock(v, PASS), PQV_E_INTEGRITY);
    pqv_vault_close(v);
    CHECK(sh("printf 'garbage\\n' > vault/config%s", "") == 0);
    CHECK_EQ_INT(pqv_vault_open(&v, dir, NULL), PQV_E_INTEGRITY);
    CHECK(sh("cp config.bak vault/config%s", "") == 0);
    REQUIRE((v = open_vault()) != NULL);
    pqv_vault_close(v);
}

static void
test_lock_exclusive(void)
{
    pqv_vault *a = open_vault(), *b = NULL;
    char dir[512];
    char holder[PQV_LOCK_HOLDER_MAX] = "";

    REQUIRE(a != NULL);
    path_of(dir, sizeof(dir), "vault");
    REQUIRE(pqv_vault_open(&b, dir, NULL) == 0);
    /* flock conflicts between open file descriptions, even in-process. */
    CHECK_EQ_INT(pqv_vault_lock_writer(b, 0, holder, sizeof(holder)), PQV_E_LOCKED);
    { char want[64]; snprintf(want, sizeof(want), "pid %ld", (long)getpid()); CHECK(strcmp(holder, want) == 0); }
    CHECK(strstr(pqv_error_detail(), "pid") != NULL);
    pqv_vault_close(a);
    CHECK(pqv_vault_lock_writer(b, 0, holder, sizeof(holder)) == 0);
    pqv_vault_close(b);
}

static void
test_passwd_and_recover(void)
{
    pqv_vault *v = open_vault();
    char dir[512];

    REQUIRE(v != NULL);
    CHECK(pqv_vault_passwd(v, 1, (const uint8_t *)"second", 6, &cheap) == 0);
    CHECK_EQ_INT(pqv_vault_clear_slot(v, 0), PQV_E_INVAL); /* the slot in use */
    pqv_vault_close(v);
    path_of(dir, sizeof(dir), "vault");
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    CHECK(pqv_vault_unlock(v, (const uint8_t *)"second", 6) == 0);
    CHECK_EQ_INT(pqv_vault_slot(v), 1);
    CHECK(pqv_vault_lock_writer(v, 0, NULL, 0) == 0);
    CHECK(pqv_vault_clear_slot(v, 0) == 0);
    pqv_vault_close(v);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    CHECK_EQ_INT(pqv_vault_unlock(v, PASS), PQV_E_AUTH);
    pqv_vault_close(v);

    /* Lose the key file; recover it from the code. */
    CHECK(sh("rm vault/keyfile%s", "") == 0);
    CHECK_EQ_INT(pqv_vault_open(&v, dir, NULL), PQV_E_NOTFOUND);
    char bad[PQV_RECOVERY_CHARS];
    memcpy(bad, recovery, sizeof(bad));
    bad[0] = bad[0] == 'A' ? 'B' : 'A';
    CHECK_EQ_INT(pqv_vault_recover(dir, NULL, bad, PASS, &cheap), PQV_E_AUTH);
    CHECK(pqv_vault_recover(dir, NULL, recovery, PASS, &cheap) == 0);
    REQUIRE((v = open_vault()) != NULL);
    struct pqv_check_result res;
    CHECK(pqv_vault_check(v, &read_data_opt, &res) == 0);
    pqv_vault_close(v);
}

static void
test_gc_orphans(void)
{
    pqv_vault *v = open_vault();
    struct pqv_check_result res;

    REQUIRE(v != NULL);
    CHECK(pqv_vault_gc(v, NULL, &res) == 0); /* what earlier tests left */
    CHECK(sh("mkdir -p vault/packs/ab && head -c 100 /dev/urandom > vault/packs/ab/ab000000000000000000000000000000 && "
             "echo x > vault/packs/ab/ab000000000000000000000000000001.tmp-0011223344556677%s", "") == 0);
    CHECK(pqv_vault_check(v, NULL, &res) == 0);
    CHECK_EQ_INT(res.orphans, 1);
    CHECK_EQ_INT(res.temporaries, 1);
    CHECK(pqv_vault_gc(v, NULL, &res) == 0);
    CHECK_EQ_INT(res.removed, 2);
    CHECK(pqv_vault_check(v, NULL, &res) == 0);
    CHECK_EQ_INT(res.orphans + res.temporaries, 0);
    pqv_vault_close(v);
}

/* Counting report callback. */
static int warnings;
static void
count_warnings(void *ctx, int level, const char *subject, const char *message)
{
    (void)ctx;
    (void)subject;
    (void)message;
    if (level == PQV_REPORT_WARNING)
        warnings++;
}

/* Regressions from the CLI review: init creates missing parents; a refused
 * add reports only its refusal (no "skipped" warnings first); the ".."
 * hint about --name is given by add only. */
static void
test_review_regressions(void)
{
    char dir[512], tree[512], fp[PQV_FINGERPRINT_CHARS], code[PQV_RECOVERY_CHARS];
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", 0, &cheap, 0, NULL, NULL, NULL , 0};
    struct pqv_add_options add = { .force = 0, .report = count_warnings };
    pqv_vault *v = NULL;

    path_of(dir, sizeof(dir), "deep/er/vault2");
    CHECK(pqv_vault_create(dir, NULL, PASS, &opt, code, fp) == 0);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    REQUIRE(pqv_vault_unlock(v, PASS) == 0 && pqv_vault_lock_writer(v, 0, NULL, 0) == 0);
    /* A socket: reported and skipped (a FIFO is stored). */
    CHECK(sh("mkdir -p linktree && rm -f linktree/p && python3 -c 'import socket; "
        "socket.socket(socket.AF_UNIX).bind(\"linktree/p\")' && echo x > linktree/f%s", "") == 0);
    path_of(tree, sizeof(tree), "linktree");
    warnings = 0;
    CHECK(pqv_vault_add_path(v, tree, "linktree", &add) == 0);
    CHECK_EQ_INT(warnings, 1);
    /* Added again: an update (the socket said again); another tree under
     * the same name: refused, with only the refusal. */
    warnings = 0;
    CHECK_EQ_INT(pqv_vault_add_path(v, tree, "linktree", &add), 0);
    CHECK_EQ_INT(warnings, 1);
    CHECK(sh("mkdir -p other/linktree && rm -f other/linktree/p && python3 -c 'import socket; "
        "socket.socket(socket.AF_UNIX).bind(\"other/linktree/p\")'%s", "") == 0);
    path_of(tree, sizeof(tree), "other/linktree");
    warnings = 0;
    CHECK_EQ_INT(pqv_vault_add_path(v, tree, "linktree", &add), PQV_E_EXISTS);
    CHECK_EQ_INT(warnings, 0);
    path_of(tree, sizeof(tree), "linktree");
    /* The library names the problem; hints about CLI flags are the CLI's.
     * (A path's stored name is its last component: "../x" is stored as x.) */
    CHECK_EQ_INT(pqv_vault_add_path(v, tree, "../x", &add), PQV_E_INVAL);
    CHECK(strstr(pqv_error_detail(), "\"..\"") != NULL);
    CHECK(strstr(pqv_error_detail(), "--") == NULL);
    CHECK_EQ_INT(pqv_error_last()->code, PQV_E_INVAL);
    CHECK_EQ_INT(pqv_vault_get(v, "../x", NULL, NULL), PQV_E_INVAL);
    CHECK(strstr(pqv_error_detail(), "--") == NULL);
    pqv_vault_close(v);
}

/* A storage that forwards to the local backend and, at the first read of
 * an object, lets a concurrent writer act: a reader without a lock racing
 * with add --force or rm. */
struct hook_storage {
    pqv_storage base;
    pqv_storage *inner;
    int fired;
    void (*hook)(void);
};
static struct hook_storage hooked;

static int h_put(pqv_storage *s, const char *n, const uint8_t *d, size_t l)
{ return hooked.inner->ops->put(hooked.inner, n, d, l); (void)s; }
static int h_get(pqv_storage *s, const char *n, uint8_t **d, size_t *l, size_t m)
{
    (void)s;
    if (!hooked.fired && (strncmp(n, "objects/", 8) == 0 || strncmp(n, "packs/", 6) == 0)) {
        hooked.fired = 1;
        hooked.hook();
    }
    return hooked.inner->ops->get(hooked.inner, n, d, l, m);
}
static int h_stat(pqv_storage *s, const char *n, uint64_t *z)
{ (void)s; return hooked.inner->ops->stat(hooked.inner, n, z); }
static int h_list(pqv_storage *s, const char *p, pqv_storage_list_fn f, void *c)
{ (void)s; return hooked.inner->ops->list(hooked.inner, p, f, c); }
static int h_del(pqv_storage *s, const char *n) { (void)s; return hooked.inner->ops->del(hooked.inner, n); }
static int h_barrier(pqv_storage *s) { (void)s; return hooked.inner->ops->barrier(hooked.inner); }
static int h_put_new(pqv_storage *s, const char *n, const uint8_t *d, size_t l)
{ (void)s; return hooked.inner->ops->put_new(hooked.inner, n, d, l); }
/* When set: the one pack whose reading fires the hook. */
static char hook_only[256];
static int h_get_range(pqv_storage *s, const char *n, uint64_t o, uint8_t *b, size_t l)
{
    (void)s;
    if (!hooked.fired && strncmp(n, "packs/", 6) == 0 &&
        (hook_only[0] == '\0' || strcmp(n, hook_only) == 0)) {
        hooked.fired = 1;
        hooked.hook();
    }
    return hooked.inner->ops->get_range(hooked.inner, n, o, b, l);
}
static int h_lock(pqv_storage *s, int w, char *h, size_t hl)
{ (void)s; return hooked.inner->ops->lock(hooked.inner, w, h, hl); }
static void h_unlock(pqv_storage *s) { (void)s; hooked.inner->ops->unlock(hooked.inner); }
static void h_close(pqv_storage *s) { (void)s; }
static const struct pqv_storage_ops hook_ops = {
    .version = PQV_STORAGE_OPS_VERSION, .put = h_put, .put_new = h_put_new, .get = h_get,
    .get_range = h_get_range, .stat = h_stat, .list = h_list, .del = h_del,
    .barrier = h_barrier, .lock = h_lock, .unlock = h_unlock, .close = h_close,
};

/* hooked_reader(hook): the test vault opened and unlocked over the hooked
 * storage, ${hook} to run at its first read of a pack; NULL on failure. */
static pqv_vault *
hooked_reader(void (*hook)(void))
{
    char dir[512];
    pqv_vault *r = NULL;

    path_of(dir, sizeof(dir), "vault");
    if (pqv_storage_local_open(&hooked.inner, dir, 0) != 0)
        return NULL;
    hooked.base.ops = &hook_ops;
    hooked.fired = 0;
    hooked.hook = hook;
    if (pqv_vault_open_storage(&r, &hooked.base, NULL, NULL) != 0)
        return NULL;
    if (pqv_vault_unlock(r, PASS) != 0) {
        pqv_vault_close(r);
        return NULL;
    }
    return r;
}

static void
replace_racefile(void)
{
    pqv_vault *w = open_vault();
    char path[512];
    struct pqv_add_options force = { .force = 1 };

    path_of(path, sizeof(path), "race.new");
    /* Replaced, the old snapshots forgotten, then the old data collected:
     * the reader's snapshot loses its pack. */
    struct pqv_forget_options keep1 = { .last = 1 };
    if (w == NULL || pqv_vault_add_path(w, path, "race", &force) != 0 ||
        pqv_vault_forget(w, &keep1, NULL) != 0 || pqv_vault_gc(w, NULL, NULL) != 0)
        fprintf(stderr, "  writer failed: %s\n", pqv_error_detail());
    pqv_vault_close(w);
}

static void
remove_racefile(void)
{
    pqv_vault *w = open_vault();

    struct pqv_forget_options keep1 = { .last = 1 };
    if (w == NULL || pqv_vault_rm(w, "race", NULL) != 0 ||
        pqv_vault_forget(w, &keep1, NULL) != 0 || pqv_vault_gc(w, NULL, NULL) != 0)
        fprintf(stderr, "  writer failed: %s\n", pqv_error_detail());
    pqv_vault_close(w);
}

/* Regression (found in review of the crash harness): a get racing with a
 * writer that replaced or removed the file reported "object missing"
 * (integrity failure); now it restarts from the new version, or says the
 * file was removed. */
static void
test_reader_races_writer(void)
{
    char path[512], out[512];
    uint8_t *old = pattern(5000, 1), *new = pattern(7000, 2);
    pqv_vault *w, *r = NULL;

    REQUIRE(old != NULL && new != NULL);
    write_file("race.old", old, 5000, 0644);
    write_file("race.new", new, 7000, 0600);
    REQUIRE((w = open_vault()) != NULL);
    path_of(path, sizeof(path), "race.old");
    CHECK(pqv_vault_add_path(w, path, "race", NULL) == 0);
    pqv_vault_close(w);

    REQUIRE((r = hooked_reader(replace_racefile)) != NULL);
    path_of(out, sizeof(out), "race.got");
    CHECK(pqv_vault_get(r, "race", out, NULL) == 0);
    CHECK(hooked.fired);
    CHECK(same_file("race.new", "race.got"));
    struct stat st;
    CHECK(stat(out, &st) == 0 && (st.st_mode & 07777) == 0600); /* new metadata */
    /* Removed while read (and its data collected): not found and nothing
     * written, or the state from before the removal whole (the reader
     * still held the pack open); never anything else. */
    hooked.fired = 0;
    hooked.hook = remove_racefile;
    path_of(out, sizeof(out), "race.got2");
    int got = pqv_vault_get(r, "race", out, NULL);
    CHECK(got == PQV_E_NOTFOUND || got == 0);
    if (got == PQV_E_NOTFOUND)
        CHECK(stat(out, &st) != 0);
    else
        CHECK(same_file("race.new", "race.got2"));
    pqv_vault_close(r);
    hooked.inner->ops->close(hooked.inner);
    free(old);
    free(new);
}


static void
replace_tree_file(void)
{
    pqv_vault *w = open_vault();
    char path[512];
    struct pqv_add_options force = { .force = 1 };
    struct pqv_forget_options keep1 = { .last = 1 };

    path_of(path, sizeof(path), "rtree.new");
    if (w == NULL || pqv_vault_add_path(w, path, "rt/a", &force) != 0 ||
        pqv_vault_forget(w, &keep1, NULL) != 0 || pqv_vault_gc(w, NULL, NULL) != 0)
        fprintf(stderr, "  writer failed: %s\n", pqv_error_detail());
    pqv_vault_close(w);
}

/* A tree's small files are written on the worker pool (get_restore.c);
 * one whose data a writer collected while the tree was restored is read
 * again on the restoring thread, from the catalogue read again: its new
 * version (shorter, another mode) whole, the other files as they were.
 * (Before the pool wrote them, the same path ran on one thread.) */
static void
test_tree_reader_races_writer(void)
{
    char path[512], out[512];
    uint8_t *old = pattern(7000, 3), *new = pattern(5000, 4), *b = pattern(3000, 5);
    pqv_vault *w, *r = NULL;
    struct stat st;

    REQUIRE(old != NULL && new != NULL && b != NULL);
    CHECK(sh("rm -rf rtree rtree.got && mkdir -p rtree", NULL) == 0);
    write_file("rtree/a", old, 7000, 0644);
    write_file("rtree.b", b, 3000, 0644);
    write_file("rtree.new", new, 5000, 0600);
    /* rt/a and rt/b in packs of their own: collecting a's removes its pack. */
    CHECK(sh("cd vault && find packs -type f | sort > ../packs.before", NULL) == 0);
    REQUIRE((w = open_vault()) != NULL);
    path_of(path, sizeof(path), "rtree");
    CHECK(pqv_vault_add_path(w, path, "rt", NULL) == 0);
    pqv_vault_close(w);
    /* (The pool reads a and b at once: only a's pack fires the writer.) */
    char cmd[700];
    FILE *f;
    snprintf(cmd, sizeof(cmd), "cd '%s/vault' && find packs -type f | sort | comm -13 ../packs.before -",
        root);
    REQUIRE((f = popen(cmd, "r")) != NULL);
    CHECK(fgets(hook_only, sizeof(hook_only), f) != NULL);
    pclose(f);
    hook_only[strcspn(hook_only, "\n")] = '\0';
    CHECK(strncmp(hook_only, "packs/", 6) == 0);
    REQUIRE((w = open_vault()) != NULL);
    path_of(path, sizeof(path), "rtree.b");
    CHECK(pqv_vault_add_path(w, path, "rt/b", NULL) == 0);
    pqv_vault_close(w);

    REQUIRE((r = hooked_reader(replace_tree_file)) != NULL);
    path_of(out, sizeof(out), "rtree.got");
    CHECK(pqv_vault_get(r, "rt", out, NULL) == 0);
    CHECK(hooked.fired);
    CHECK(same_file("rtree.new", "rtree.got/rt/a"));
    CHECK(same_file("rtree.b", "rtree.got/rt/b"));
    path_of(out, sizeof(out), "rtree.got/rt/a");
    CHECK(stat(out, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_size == 5000);
    CHECK(sh("test -z \"$(ls -A rtree.got/rt | grep pqvault.tmp)\"", NULL) == 0);
    hook_only[0] = '\0';
    pqv_vault_close(r);
    hooked.inner->ops->close(hooked.inner);
    free(old);
    free(new);
    free(b);
}

/* Recorder of durability calls (io_fault_hook hook): "op path" lines. */
static char io_log[64][600];
static size_t io_nlog;

static int
io_record(const char *op, const char *path)
{
    struct stat st;

    if (strcmp(op, "mkdir") == 0 && stat(path, &st) == 0)
        return 0; /* exists: this mkdir creates nothing */
    if (io_nlog < sizeof(io_log) / sizeof(io_log[0]))
        snprintf(io_log[io_nlog++], sizeof(io_log[0]), "%s %s", op, path);
    return 0;
}

/* Whether io_log holds "fsync ${dir}" after entry ${after}. */
static int
io_fsynced_after(size_t after, const char *dir)
{
    char want[700];

    snprintf(want, sizeof(want), "fsync %.600s", dir);
    for (size_t i = after + 1; i < io_nlog; i++)
        if (strncmp(io_log[i], want, sizeof(io_log[0])) == 0 ||
            strncmp(io_log[i], "syncfs ", 7) == 0) /* the whole file system (one here) */
            return 1;
    return 0;
}

/* Bug (review): get created missing destination directories without
 * fsyncing their parents, and restored directory modes and times without
 * fsyncing them: after a power loss the restored file (or directory) could
 * be gone although get had reported success.  Every directory get creates
 * must be fsynced in its parent (or its file system synced: a tree
 * restore's batches end with syncfs) before get returns. */
static void
test_get_new_dirs_durable(void)
{
    char path[512], out[512];
    uint8_t *data = pattern(3000, 9);
    pqv_vault *v;

    REQUIRE(data != NULL);
    sh("mkdir -p '%s/gdsrc/sub/deeper'", root);
    write_file("gdsrc/sub/deeper/f", data, 3000, 0644);
    REQUIRE((v = open_vault()) != NULL);
    path_of(path, sizeof(path), "gdsrc");
    CHECK(pqv_vault_add_path(v, path, "gd", NULL) == 0);
    /* A file into missing directories. */
    io_nlog = 0;
    io_fault_hook = io_record;
    path_of(out, sizeof(out), "gdout1/a/b/f");
    CHECK(pqv_vault_get(v, "gd/sub/deeper/f", out, NULL) == 0);
    io_fault_hook = NULL;
    for (size_t i = 0; i < io_nlog; i++) {
        if (strncmp(io_log[i], "mkdir ", 6) != 0)
            continue;
        char parent[600];
        fsutil_dirname(io_log[i] + 6, parent, sizeof(parent));
        if (!io_fsynced_after(i, parent)) {
            fprintf(stderr, "  %s: parent not fsynced\n", io_log[i]);
            CHECK(0);
        }
    }
    CHECK(same_file("gdsrc/sub/deeper/f", "gdout1/a/b/f"));
    /* A tree into a missing directory: its directories too. */
    io_nlog = 0;
    io_fault_hook = io_record;
    path_of(out, sizeof(out), "gdout2/x");
    CHECK(pqv_vault_get(v, "gd", out, NULL) == 0);
    io_fault_hook = NULL;
    size_t mkdirs = 0;
    for (size_t i = 0; i < io_nlog; i++) {
        if (strncmp(io_log[i], "mkdir ", 6) != 0)
            continue;
        char parent[600];
        mkdirs++;
        fsutil_dirname(io_log[i] + 6, parent, sizeof(parent));
        if (!io_fsynced_after(i, parent)) {
            fprintf(stderr, "  %s: parent not fsynced\n", io_log[i]);
            CHECK(0);
        }
    }
    CHECK(mkdirs >= 4); /* gdout2, gdout2/x, .../gd, .../sub, .../deeper */
    CHECK(same_file("gdsrc/sub/deeper/f", "gdout2/x/gd/sub/deeper/f"));
    pqv_vault_close(v);
    free(data);
}

/* Directories fsynced during an operation (through the fault hook). */
static char synced[64][512];
static int nsynced;
static int
record_fsyncs(const char *op, const char *path)
{
    struct stat st;
    if (strcmp(op, "fsync") == 0 && nsynced < 64 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(synced[nsynced++], sizeof(synced[0]), "%s", path);
    return 0;
}

/* Regression (review): a shard directory left by a command that crashed
 * before syncing its parent was reused without syncing that parent, so a
 * power loss could lose objects a committed record names.  Now each
 * directory's parent is synced once per session, existing or not (packs
 * in format 2). */
static void
test_existing_shard_parent_synced(void)
{
    pqv_vault *v = open_vault();
    char path[512], objects[512];
    int found = 0;

    REQUIRE(v != NULL);
    /* Every shard of packs/ exists, as after earlier (crashed) commands. */
    CHECK(sh("for a in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do for b in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do "
             "mkdir -p vault/packs/$a$b; done; done%s", "") == 0);
    write_file("shardtest", (const uint8_t *)"x", 1, 0644);
    path_of(path, sizeof(path), "shardtest");
    path_of(objects, sizeof(objects), "vault/packs");
    nsynced = 0;
    io_fault_hook = record_fsyncs;
    CHECK(pqv_vault_add_path(v, path, "shardtest", NULL) == 0);
    io_fault_hook = NULL;
    for (int i = 0; i < nsynced; i++)
        found |= strcmp(synced[i], objects) == 0;
    CHECK(found);
    pqv_vault_close(v);
}

/* Regression: a hard link whose first name a checkpoint had committed
 * failed "file key not available" (the new transaction had no command
 * key: nothing in it had asked for a file key). */
static void
test_hard_link_after_checkpoint(void)
{
    pqv_vault *v = open_vault();
    char path[512], out[512];

    REQUIRE(v != NULL);
    /* hl/b/sparse (600 MiB, all hole) makes a checkpoint (every 512 MiB
     * read) between hl/a/one and its second name hl/c/three. */
    CHECK(sh("cd '%s' && mkdir -p hl/a hl/b hl/c && printf 'shared\\n' >hl/a/one && "
             "truncate -s 600M hl/b/sparse && ln hl/a/one hl/c/three", root) == 0);
    path_of(path, sizeof(path), "hl");
    CHECK(pqv_vault_add_path(v, path, "hl", NULL) == 0);
    CHECK(count_files("vault/segments") >= 3);
    path_of(out, sizeof(out), "hl.out");
    CHECK(pqv_vault_get(v, "hl", out, NULL) == 0);
    CHECK(same_file("hl/a/one", "hl.out/hl/c/three"));
    CHECK(sh("cd '%s' && test $(stat -c %%h hl.out/hl/c/three) -eq 2 && "
             "test $(stat -c %%i hl.out/hl/c/three) -eq $(stat -c %%i hl.out/hl/a/one)", root) == 0);
    pqv_vault_close(v);
}

/* Regression (review): an uppercase copy of a record (records/AB/AB12...)
 * loaded as a second record (the name listed twice).  Only the lowercase
 * spelling the vault writes is accepted; anything else is damage (a pack
 * in format 2). */
static void
test_uppercase_copy_rejected(void)
{
    pqv_vault *v = open_vault();
    struct pqv_check_result res;

    REQUIRE(v != NULL);
    CHECK(sh("f=$(find vault/packs -type f | sort | head -n 1); b=$(basename \"$f\" | tr a-f A-F); "
             "d=vault/packs/$(echo \"$b\" | cut -c1-2); mkdir -p \"$d\" && cp \"$f\" \"$d/$b\"%s", "") == 0);
    CHECK_EQ_INT(pqv_vault_check(v, NULL, &res), PQV_E_INTEGRITY);
    CHECK_EQ_INT(res.damaged, 1);
    CHECK(sh("find vault/packs -type f -name '*[A-F]*' -delete; find vault/packs -type d -empty -delete%s", "") == 0);
    CHECK(pqv_vault_check(v, NULL, &res) == 0);
    pqv_vault_close(v);
}

/* Names reported "restored" by a tree get, in order. */
static char restored[64][64];
static int nrestored;
static void
collect_restored(void *ctx, int level, const char *subject, const char *message)
{
    (void)ctx;
    (void)level;
    if (strcmp(message, "restored") == 0 && nrestored < 64)
        snprintf(restored[nrestored++], sizeof(restored[0]), "%s", subject);
}

/* Regression (review): a tree get walked the catalogue in storage order
 * (by name hash) although it relies on name order: parents before
 * children, and directory modes and times applied deepest first. */
static void
test_tree_get_in_name_order(void)
{
    pqv_vault *v = open_vault();
    char path[512], out[512];
    struct pqv_get_options opt = { .report = collect_restored };

    REQUIRE(v != NULL);
    CHECK(sh("mkdir -p order/a/b order/c && for f in 1 2 3 4 5 6; do echo $f > order/a/f$f; "
             "echo $f > order/a/b/g$f; echo $f > order/c/h$f; done%s", "") == 0);
    path_of(path, sizeof(path), "order");
    CHECK(pqv_vault_add_path(v, path, "order", NULL) == 0);
    path_of(out, sizeof(out), "order-out");
    nrestored = 0;
    CHECK(pqv_vault_get(v, "order", out, &opt) == 0);
    CHECK_EQ_INT(nrestored, 22);
    for (int i = 1; i < nrestored; i++)
        CHECK(strcmp(restored[i - 1], restored[i]) < 0);
    pqv_vault_close(v);
}

/* ---- issue 9 (key file and passphrase items) ---- */

/* cli(args, err): run the program (PQV_BIN, else build/pqvault) in the
 * test directory with ${args} (a shell fragment), stderr to ${err}; its
 * exit status, or -1. */
static int
cli(const char *args, const char *err)
{
    static char bin[600];
    char cmd[1400];
    int rc;

    if (bin[0] == '\0') {
        const char *b = getenv("PQV_BIN");
        char cwd[400];
        if (b != NULL)
            snprintf(bin, sizeof(bin), "%s", b);
        else if (getcwd(cwd, sizeof(cwd)) != NULL)
            snprintf(bin, sizeof(bin), "%s/build/pqvault", cwd);
    }
    snprintf(cmd, sizeof(cmd), "%s 2>'%s' </dev/null >/dev/null", args, err);
    setenv("PQV", bin, 1);
    rc = sh("%s", cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* An empty passphrase is refused before any Argon2id work; a key file
 * whose passphrase ends in "\n" (what PQVAULT_PASSPHRASE="pw\n" set before
 * every source dropped its line end) still opens from that variable, with
 * a warning that says how to leave it behind, and from no other source. */
static void
test_empty_and_legacy_eol_passphrases(void)
{
    char dir[512], rec[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS];
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", 0, &cheap, 0, NULL, NULL, NULL , 0};
    pqv_vault *v = NULL;

    path_of(dir, sizeof(dir), "legacy");
    REQUIRE(pqv_vault_create(dir, NULL, (const uint8_t *)"pw\n", 3, &opt, rec, fp) == 0);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    pqv_error_clear();
    CHECK_EQ_INT(pqv_vault_unlock(v, (const uint8_t *)"", 0), PQV_E_INVAL);
    CHECK(strstr(pqv_error_detail(), "empty passphrase") != NULL);
    CHECK_EQ_INT(pqv_vault_unlock(v, (const uint8_t *)"pw\n", 3), 0);
    pqv_vault_close(v);

    CHECK_EQ_INT(cli("PQVAULT_PASSPHRASE='pw\n' \"$PQV\" -v legacy list", "legacy.err"), 0);
    CHECK(sh("grep -q \"set the passphrase again with 'pqvault passwd'\" legacy.err%s", "") == 0);
    CHECK(sh("printf 'pw\\n' >legacy.pass%s", "") == 0);
    CHECK_EQ_INT(cli("\"$PQV\" -v legacy --passphrase-file legacy.pass list", "legacy.err"), 3);
    CHECK_EQ_INT(cli("PQVAULT_PASSPHRASE=pw \"$PQV\" -v legacy list", "legacy.err"), 3);
    /* passwd from that variable sets "pw" (the line end dropped) */
    CHECK_EQ_INT(cli("PQVAULT_PASSPHRASE='pw\n' PQVAULT_NEW_PASSPHRASE='pw\n' \"$PQV\" -v legacy "
        "passwd --kdf t=1,m=64,p=1", "legacy.err"), 0);
    CHECK_EQ_INT(cli("\"$PQV\" -v legacy --passphrase-file legacy.pass list", "legacy.err"), 0);
    CHECK(sh("! grep -q warning legacy.err%s", "") == 0);
}

/* report callback counting warnings and errors */
struct report_count {
    int warnings, errors;
    char last[600];
};

static void
count_reports(void *ctx, int level, const char *subject, const char *message)
{
    struct report_count *c = ctx;

    if (level == PQV_REPORT_WARNING)
        c->warnings++;
    if (level == PQV_REPORT_ERROR)
        c->errors++;
    snprintf(c->last, sizeof(c->last), "%s: %s", subject, message);
}

/* A vault opens for info and the keyless check without its key file
 * (PQV_OPEN_KEYFILE_OPTIONAL); keyed use still needs it; info says what it
 * verified and which slot opened. */
static void
test_open_without_keyfile_and_info(void)
{
    char dir[512], rec[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS];
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", 0, &cheap, 0, NULL, NULL, NULL , 0};
    struct pqv_check_result res;
    struct report_count rc = { 0, 0, "" };
    struct pqv_check_options copt = { 0, count_reports, &rc };
    struct pqv_error kerr;
    struct pqv_info in;
    pqv_vault *v = NULL;

    path_of(dir, sizeof(dir), "nokey");
    REQUIRE(pqv_vault_create(dir, NULL, PASS, &opt, rec, fp) == 0);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    CHECK_EQ_INT(pqv_vault_keyfile_status(v, &kerr), 0);
    CHECK(pqv_vault_info(v, &in) == 0);
    CHECK(!in.verified && in.opened_slot == -1 && in.keyfile_status == 0);
    CHECK(pqv_vault_unlock(v, PASS) == 0);
    CHECK(pqv_vault_info(v, &in) == 0);
    CHECK(in.verified && in.opened_slot == 0);
    CHECK(strcmp(in.fingerprint, fp) == 0);
    pqv_vault_close(v);

    CHECK(sh("mv nokey/keyfile nokey.kf%s", "") == 0);
    CHECK_EQ_INT(pqv_vault_open(&v, dir, NULL), PQV_E_NOTFOUND);
    CHECK_EQ_INT(pqv_vault_open_flags(&v, dir, NULL, 4), PQV_E_INVAL);
    /* A write-only writer's open: the config only, the key file never read. */
    REQUIRE(pqv_vault_open_flags(&v, dir, NULL, PQV_OPEN_NO_KEYFILE) == 0);
    CHECK(pqv_vault_keyfile(v) == NULL);
    CHECK(pqv_vault_unlock(v, PASS) != 0);
    pqv_vault_close(v);
    REQUIRE(pqv_vault_open_flags(&v, dir, NULL, PQV_OPEN_KEYFILE_OPTIONAL) == 0);
    CHECK_EQ_INT(pqv_vault_keyfile_status(v, &kerr), PQV_E_NOTFOUND);
    CHECK(strstr(kerr.reason, "key file not found") != NULL);
    CHECK(pqv_vault_keyfile(v) == NULL);
    CHECK(pqv_vault_info(v, &in) == 0);
    CHECK(in.keyfile_status == PQV_E_NOTFOUND && !in.verified && in.slot_params[0].m_kib == 0);
    CHECK(strcmp(in.fingerprint, fp) == 0);
    CHECK(pqv_vault_check(v, &copt, &res) == 0);
    CHECK_EQ_INT(rc.warnings, 1);
    CHECK(strstr(rc.last, "key file not checked") != NULL);
    /* Without the key, the epoch is the newest segment's with a sound
     * header (check --no-key prints format 2's line). */
    CHECK_EQ_INT(res.epoch, 1);
    CHECK_EQ_INT(res.segments, 1);
    pqv_error_clear();
    CHECK_EQ_INT(pqv_vault_unlock(v, PASS), PQV_E_NOTFOUND);
    CHECK(strstr(pqv_error_detail(), "key file not found") != NULL);
    pqv_vault_close(v);

    /* A key file in a directory that does not exist; a damaged one. */
    char kf[600];
    path_of(kf, sizeof(kf), "no/such/dir/keyfile");
    CHECK_EQ_INT(pqv_vault_open(&v, dir, kf), PQV_E_NOTFOUND);
    REQUIRE(pqv_vault_open_flags(&v, dir, kf, PQV_OPEN_KEYFILE_OPTIONAL) == 0);
    CHECK_EQ_INT(pqv_vault_keyfile_status(v, NULL), PQV_E_NOTFOUND);
    pqv_vault_close(v);
    CHECK(sh("cp nokey.kf nokey/keyfile && printf 'X' | dd of=nokey/keyfile bs=1 seek=100 "
        "conv=notrunc 2>/dev/null%s", "") == 0);
    CHECK_EQ_INT(pqv_vault_open(&v, dir, NULL), PQV_E_INTEGRITY);
    REQUIRE(pqv_vault_open_flags(&v, dir, NULL, PQV_OPEN_KEYFILE_OPTIONAL) == 0);
    rc.warnings = rc.errors = 0;
    CHECK_EQ_INT(pqv_vault_check(v, &copt, &res), PQV_E_INTEGRITY);
    CHECK_EQ_INT(rc.errors, 1);
    CHECK_EQ_INT(res.damaged, 1);
    pqv_vault_close(v);
    /* With the key file given where it is kept, everything as usual. */
    path_of(kf, sizeof(kf), "nokey.kf");
    REQUIRE(pqv_vault_open_flags(&v, dir, kf, PQV_OPEN_KEYFILE_OPTIONAL) == 0);
    CHECK_EQ_INT(pqv_vault_keyfile_status(v, NULL), 0);
    CHECK(pqv_vault_unlock(v, PASS) == 0);
    pqv_vault_close(v);
}

/* Recovery in two steps: the code is checked (checksum, this vault's)
 * before anything needs a new passphrase; then the key file is written. */
static void
test_recover_in_two_steps(void)
{
    char dir[512], other[512], rec[PQV_RECOVERY_CHARS], rec2[PQV_RECOVERY_CHARS];
    char fp[PQV_FINGERPRINT_CHARS], bad[PQV_RECOVERY_CHARS];
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", 0, &cheap, 0, NULL, NULL, NULL , 0};
    pqv_vault *v = NULL;

    path_of(dir, sizeof(dir), "rec2");
    path_of(other, sizeof(other), "rec2-other");
    REQUIRE(pqv_vault_create(dir, NULL, PASS, &opt, rec, fp) == 0);
    REQUIRE(pqv_vault_create(other, NULL, PASS, &opt, rec2, fp) == 0);
    memcpy(bad, rec, sizeof(bad));
    bad[0] = bad[0] == 'A' ? 'B' : 'A';
    CHECK(sh("rm rec2/keyfile%s", "") == 0);
    REQUIRE(pqv_vault_open_flags(&v, dir, NULL, PQV_OPEN_KEYFILE_OPTIONAL) == 0);
    pqv_error_clear();
    CHECK_EQ_INT(pqv_vault_unlock_recovery(v, bad), PQV_E_AUTH);
    CHECK(strstr(pqv_error_detail(), "checksum") != NULL);
    CHECK_EQ_INT(pqv_vault_unlock_recovery(v, rec2), PQV_E_AUTH);
    CHECK(strstr(pqv_error_detail(), "belongs to another vault") != NULL);
    CHECK_EQ_INT(pqv_vault_recover_keyfile(v, PASS, &cheap), PQV_E_INVAL); /* not unlocked */
    CHECK(pqv_vault_unlock_recovery(v, rec) == 0);
    CHECK_EQ_INT(pqv_vault_slot(v), -1);
    CHECK_EQ_INT(pqv_vault_recover_keyfile(v, PASS, &cheap), PQV_E_INVAL); /* no writer lock */
    CHECK(pqv_vault_lock_writer(v, 0, NULL, 0) == 0);
    CHECK_EQ_INT(pqv_vault_recover_keyfile(v, (const uint8_t *)"", 0, &cheap), PQV_E_INVAL);
    CHECK(pqv_vault_recover_keyfile(v, (const uint8_t *)"recovered", 9, &cheap) == 0);
    CHECK_EQ_INT(pqv_vault_keyfile_status(v, NULL), 0);
    pqv_vault_close(v);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    CHECK_EQ_INT(pqv_vault_unlock(v, PASS), PQV_E_AUTH);
    CHECK(pqv_vault_unlock(v, (const uint8_t *)"recovered", 9) == 0);
    pqv_vault_close(v);
    /* the convenience function over a damaged key file */
    CHECK(sh("printf 'X' | dd of=rec2/keyfile bs=1 seek=90 conv=notrunc 2>/dev/null%s", "") == 0);
    CHECK_EQ_INT(pqv_vault_open(&v, dir, NULL), PQV_E_INTEGRITY);
    CHECK_EQ_INT(pqv_vault_recover(dir, NULL, rec2, PASS, &cheap), PQV_E_AUTH);
    CHECK(pqv_vault_recover(dir, NULL, rec, PASS, &cheap) == 0);
    REQUIRE(pqv_vault_open(&v, dir, NULL) == 0);
    CHECK(pqv_vault_unlock(v, PASS) == 0);
    pqv_vault_close(v);
}

static void
setup(void)
{
    snprintf(root, sizeof(root), "%s/pqv-vault-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(root) == NULL) {
        perror("mkdtemp");
        exit(1);
    }
}

static void
teardown(void)
{
    sh("cd / && rm -rf '%s'", root);
}

static void test_setup(void) { setup(); }
static void test_teardown(void) { if (getenv("PQV_KEEP") == NULL) teardown(); }

TEST_MAIN(test_setup, test_create_and_unlock, test_name_normalize, test_add_get_sizes,
    test_list_prefix, test_replace_and_rm, test_add_fd_pipe, test_swapped_records_detected,
    test_config_tamper, test_lock_exclusive, test_passwd_and_recover, test_gc_orphans,
    test_review_regressions, test_reader_races_writer, test_tree_reader_races_writer, test_existing_shard_parent_synced,
    test_uppercase_copy_rejected, test_hard_link_after_checkpoint, test_tree_get_in_name_order, test_get_new_dirs_durable,
    test_empty_and_legacy_eol_passphrases, test_open_without_keyfile_and_info,
    test_recover_in_two_steps, test_teardown)
