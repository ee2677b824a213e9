/*
 * mount_fixture.h: set-up shared by the tests of the mounted view
 * (test_mount.c, test_mount_cache.c; header-only, static inline, so that
 * a test using only some of it draws no unused-function warning): the
 * vault (a 20 MiB random file, a small tree, a link, an odd name, many
 * small files, two directories whose paths sort apart from their names,
 * copies), views opened on it, lookups by path, counting a listing.
 */
#ifndef PQV_TEST_MOUNT_FIXTURE_H
#define PQV_TEST_MOUNT_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pqvault/aead.h"
#include "pqvault/mount.h"
#include "pqvault/recovery.h"
#include "pqvault/vault.h"
#include "util/util.h"
#include "vault/chunk.h"
#include "vault/chunker.h"
#include "vault/entry.h"
#include "vault/mount_internal.h"
#include "vault/pack.h"
#include "vault_fixture.h"
static const struct pqv_kdf_params cheap = { 1, 256, 1 };
static const char pass[] = "correct horse";

#define BIG_BYTES (20u << 20)
#define MANY (MOUNT_FILES_KEPT + 6)
#define ORDER_FILES 10
#define DUP_COPIES 3
#define DUP_BYTES "the same bytes in three files\n"
#define TWO_SMALL 4
#define TWO_BYTES (CHUNK_MAX + (512u << 10))
/* zz/long: LONG_BYTES, sparse: LONG_DATA random bytes at each multiple of
 * LONG_EVERY, holes between. */
#define LONG_BYTES (80u << 20)
#define LONG_EVERY (8u << 20)
#define LONG_DATA (64u << 10)

static char dir[64], src[96], vdir[96];
static uint8_t *big, *two_z, *long_data;

/* A deterministic generator (xorshift64*), so a failure replays. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static inline uint64_t
next_random(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static inline void
write_src(const char *name, const uint8_t *data, size_t len)
{
    char path[160];

    snprintf(path, sizeof(path), "%s/%s", src, name);
    vf_write_path(path, data, len);
}

/* The vault: src/big (20 MiB random, chunks of 64 KiB segments stored
 * uncompressed), a small tree, a link, a file named with odd bytes, many
 * small files, order/apt/ and order/apt-x/, dup/ (copies), two/ (small
 * files, then z: random, longer than a chunk can be, and z2, its copy),
 * zz/long (a sparse file larger than MOUNT_DROP_MIN_FILE). */
static inline void
make_vault(void)
{
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", PQV_AEAD_AES256GCM, &cheap,
        0, NULL, NULL, NULL, 0 };
    char recovery[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS], path[160];
    pqv_vault *v;

    snprintf(dir, sizeof(dir), "/tmp/pqvmount.XXXXXX");
    SETUP(mkdtemp(dir) != NULL);
    snprintf(src, sizeof(src), "%s/src", dir);
    snprintf(vdir, sizeof(vdir), "%s/v", dir);
    SETUP(mkdir(src, 0700) == 0);
    SETUP((big = malloc(BIG_BYTES)) != NULL);
    SETUP(util_random(big, BIG_BYTES) == 0);
    write_src("big", big, BIG_BYTES);
    snprintf(path, sizeof(path), "%s/sub", src);
    SETUP(mkdir(path, 0755) == 0);
    snprintf(path, sizeof(path), "%s/sub/deeper", src);
    SETUP(mkdir(path, 0755) == 0);
    write_src("sub/a", (const uint8_t *)"alpha\n", 6);
    write_src("sub/deeper/b", (const uint8_t *)"beta\n", 5);
    write_src("sp ace\tand\x01odd", (const uint8_t *)"odd\n", 4);
    snprintf(path, sizeof(path), "%s/link", src);
    SETUP(symlink("sub/a", path) == 0);
    /* More small files than the view keeps open (MOUNT_FILES_KEPT). */
    snprintf(path, sizeof(path), "%s/many", src);
    SETUP(mkdir(path, 0755) == 0);
    for (int i = 0; i < MANY; i++) {
        char name[32], body[32];
        snprintf(name, sizeof(name), "many/f%03d", i);
        snprintf(body, sizeof(body), "file %d\n", i);
        write_src(name, (const uint8_t *)body, strlen(body));
    }
    /* Two directories whose paths sort apart from their names: every
     * path below apt-x/ sorts before those below apt/ ('-' before '/'),
     * while a walk of the tree lists, and copies, apt/ first. */
    snprintf(path, sizeof(path), "%s/order", src);
    SETUP(mkdir(path, 0755) == 0);
    for (int d = 0; d < 2; d++) {
        snprintf(path, sizeof(path), "%s/order/%s", src, d == 0 ? "apt" : "apt-x");
        SETUP(mkdir(path, 0755) == 0);
        for (int i = 0; i < ORDER_FILES; i++) {
            char name[48], body[64];
            snprintf(name, sizeof(name), "order/%s/f%d", d == 0 ? "apt" : "apt-x", i);
            snprintf(body, sizeof(body), "%s\n", name);
            write_src(name, (const uint8_t *)body, strlen(body));
        }
    }
    /* Copies: dup/b0, b1 and b2 hold the same bytes (stored once), after
     * two files of their own. */
    snprintf(path, sizeof(path), "%s/dup", src);
    SETUP(mkdir(path, 0755) == 0);
    write_src("dup/a0", (const uint8_t *)"dup a0\n", 7);
    write_src("dup/a1", (const uint8_t *)"dup a1\n", 7);
    for (int i = 0; i < DUP_COPIES; i++) {
        char name[32];
        snprintf(name, sizeof(name), "dup/b%d", i);
        write_src(name, (const uint8_t *)DUP_BYTES, strlen(DUP_BYTES));
    }
    snprintf(path, sizeof(path), "%s/two", src);
    SETUP(mkdir(path, 0755) == 0);
    for (int i = 0; i < TWO_SMALL; i++) {
        char name[32];
        snprintf(name, sizeof(name), "two/s%d", i);
        write_src(name, (const uint8_t *)name, strlen(name));
    }
    SETUP((two_z = malloc(TWO_BYTES)) != NULL);
    for (size_t i = 0; i + 8 <= TWO_BYTES; i += 8) {
        uint64_t r = next_random();
        memcpy(two_z + i, &r, 8);
    }
    write_src("two/z", two_z, TWO_BYTES);
    write_src("two/z2", two_z, TWO_BYTES);
    snprintf(path, sizeof(path), "%s/zz", src);
    SETUP(mkdir(path, 0755) == 0);
    snprintf(path, sizeof(path), "%s/zz/long", src);
    SETUP((long_data = malloc(LONG_BYTES / LONG_EVERY * LONG_DATA)) != NULL);
    SETUP(util_random(long_data, LONG_BYTES / LONG_EVERY * LONG_DATA) == 0);
    {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        SETUP(fd >= 0 && ftruncate(fd, LONG_BYTES) == 0);
        for (uint32_t k = 0; k < LONG_BYTES / LONG_EVERY; k++)
            SETUP(pwrite(fd, long_data + (size_t)k * LONG_DATA, LONG_DATA,
                      (off_t)k * LONG_EVERY) == (ssize_t)LONG_DATA);
        SETUP(close(fd) == 0);
    }
    SETUP(pqv_vault_create(vdir, NULL, (const uint8_t *)pass, strlen(pass), &opt, recovery,
        fp) == 0);
    SETUP(vf_open_vault(NULL, vdir, pass, &v, 1) == 0);
    SETUP(pqv_vault_add_path(v, src, "t", NULL) == 0);
    pqv_vault_close(v);
}

static void remove_vault(void);

/* make_vault once, removed at exit. */
static inline void
ensure_vault(void)
{
    if (big != NULL)
        return;
    make_vault();
    atexit(remove_vault);
}

static inline void
remove_vault(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "  could not remove %s\n", dir);
    free(big);
    free(two_z);
    free(long_data);
}

static pqv_vault *vault;

static inline pqv_mount *
open_view_cache(size_t cache_bytes)
{
    struct pqv_mount_options opt = { 0 };
    pqv_mount *m = NULL;

    opt.cache_bytes = cache_bytes;
    ensure_vault();
    SETUP(vf_open_vault(NULL, vdir, pass, &vault, 0) == 0);
    SETUP(pqv_mount_open(vault, &opt, &m) == 0);
    return m;
}

static inline pqv_mount *
open_view(void)
{
    return open_view_cache(0);
}

static inline void
close_view(pqv_mount *m)
{
    pqv_mount_close(m);
    pqv_vault_close(vault);
    vault = NULL;
}

static inline uint64_t
lookup_path(pqv_mount *m, const char *path)
{
    char comp[256];
    struct pqv_mount_attr a;
    uint64_t ino = PQV_MOUNT_ROOT;

    while (*path != 0) {
        size_t n = strcspn(path, "/");
        SETUP(n < sizeof(comp));
        memcpy(comp, path, n);
        comp[n] = 0;
        if (pqv_mount_lookup(m, ino, comp, &a) != 0)
            return 0;
        ino = a.ino;
        path += n + (path[n] == '/');
    }
    return ino;
}

static inline int
count_entry(void *ctx, const char *name, const struct pqv_mount_attr *attr, uint64_t next)
{
    (void)name;
    (void)attr;
    (void)next;
    (*(unsigned *)ctx)++;
    return 0;
}

#endif
