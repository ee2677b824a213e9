/*
 * fuzz_mount.c: libFuzzer target for the mounted view's lookup code
 * (include/pqvault/mount.h, what FUSE hands it from any local user): paths
 * walked name by name from the root through the newest state, snapshots/
 * and versions/ of a small vault made once (two snapshots; directories,
 * files, a symbolic link, a hard link, a file with an extended attribute
 * where the file system allows it), then the node reached asked for its
 * attributes, link target, attributes' names and the one named by the
 * last component, its directory listing from a chosen position, and its
 * data at a chosen offset.  The input: byte 0 picks the starting node
 * (the root, or a number made of the next 8 bytes), the rest is the path,
 * components split at '/' (so any byte but NUL and '/' is in a name; a
 * NUL ends the path, what follows is the xattr name).  Every answer must
 * be 0 or a negative errno; anything else, a crash, or a node found whose
 * attributes cannot be read, is a failure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "pqvault/aead.h"
#include "pqvault/mount.h"
#include "pqvault/recovery.h"
#include "pqvault/vault.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const struct pqv_kdf_params cheap = { 1, 256, 1 };
static const char pass[] = "fuzz pass";
static char dir[64], vdir[96];
static pqv_vault *vault;
static pqv_mount *view;

static void
put(const char *name, const char *text)
{
    char path[160];
    FILE *f;

    snprintf(path, sizeof(path), "%s/src/%s", dir, name);
    if ((f = fopen(path, "w")) == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

static void
cleanup(void)
{
    char cmd[128];

    pqv_mount_close(view);
    pqv_vault_close(vault);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz_mount: could not remove %s\n", dir);
}

static void
add_tree(void)
{
    char src[96], holder[PQV_LOCK_HOLDER_MAX];
    pqv_vault *v;

    snprintf(src, sizeof(src), "%s/src", dir);
    if (pqv_vault_open(&v, vdir, NULL) != 0 ||
        pqv_vault_unlock(v, (const uint8_t *)pass, strlen(pass)) != 0 ||
        pqv_vault_lock_writer(v, 0, holder, sizeof(holder)) != 0 ||
        pqv_vault_add_path(v, src, "t", NULL) != 0)
        abort();
    pqv_vault_close(v);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", PQV_AEAD_AES256GCM, &cheap,
        0, NULL, NULL, NULL, 0 };
    struct pqv_mount_options mo = { 0 };
    char recovery[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS], path[160], other[160];

    (void)argc;
    (void)argv;
    snprintf(dir, sizeof(dir), "%s/pqvfuzzmount.XXXXXX",
        getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(dir) == NULL)
        abort();
    snprintf(path, sizeof(path), "%s/src", dir);
    if (mkdir(path, 0700) != 0)
        abort();
    snprintf(path, sizeof(path), "%s/src/sub", dir);
    if (mkdir(path, 0755) != 0)
        abort();
    put("a", "alpha\n");
    put("sub/b", "beta\n");
    put("sp ace\x01", "odd\n");
    snprintf(path, sizeof(path), "%s/src/link", dir);
    if (symlink("sub/b", path) != 0)
        abort();
    snprintf(other, sizeof(other), "%s/src/hard", dir);
    snprintf(path, sizeof(path), "%s/src/a", dir);
    if (link(path, other) != 0)
        abort();
    (void)setxattr(path, "user.fuzz", "value", 5, 0); /* where allowed */
    snprintf(vdir, sizeof(vdir), "%s/v", dir);
    if (pqv_vault_create(vdir, NULL, (const uint8_t *)pass, strlen(pass), &opt, recovery, fp) != 0)
        abort();
    add_tree();
    put("a", "alpha, second version\n");
    put("new", "new\n");
    add_tree();
    if (pqv_vault_open(&vault, vdir, NULL) != 0 ||
        pqv_vault_unlock(vault, (const uint8_t *)pass, strlen(pass)) != 0 ||
        pqv_mount_open(vault, &mo, &view) != 0)
        abort();
    atexit(cleanup);
    return 0;
}

static void
errno_or_zero(int rc)
{
    if (rc > 0 || rc < -4095)
        abort();
}

static int
count_entry(void *ctx, const char *name, const struct pqv_mount_attr *attr, uint64_t next)
{
    unsigned *n = ctx;

    if (name == NULL || attr == NULL || next == 0)
        abort();
    return ++*n >= 64;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pqv_mount_attr a;
    uint64_t ino = PQV_MOUNT_ROOT;
    char name[1024], xname[256], buf[512];
    size_t i = 1, n, got;
    int rc = 0;

    if (size < 1)
        return 0;
    if (data[0] & 1) {
        ino = 0;
        for (; i < 9 && i < size; i++)
            ino = ino << 8 | data[i];
    }
    /* The path: components up to a NUL. */
    while (i < size && data[i] != 0) {
        n = 0;
        while (i < size && data[i] != 0 && data[i] != '/' && n < sizeof(name) - 1)
            name[n++] = (char)data[i++];
        name[n] = 0;
        if (i < size && data[i] == '/')
            i++;
        rc = pqv_mount_lookup(view, ino, name, &a);
        errno_or_zero(rc);
        if (rc != 0)
            break;
        if (a.ino == 0)
            abort();
        ino = a.ino;
        if (pqv_mount_getattr(view, ino, &a) != 0)
            abort(); /* found, but no attributes */
    }
    if (i < size && data[i] == 0)
        i++;
    n = 0;
    while (i < size && n < sizeof(xname) - 1)
        xname[n++] = (char)data[i++];
    xname[n] = 0;

    /* The node reached (or the one that stopped the walk). */
    errno_or_zero(pqv_mount_getattr(view, ino, &a));
    errno_or_zero(pqv_mount_readlink(view, ino, buf, (size_t)(data[0] >> 1) % sizeof(buf) + 1));
    errno_or_zero(pqv_mount_listxattr(view, ino, buf, (size_t)(data[0] >> 2) % sizeof(buf), &got));
    errno_or_zero(pqv_mount_getxattr(view, ino, xname, buf, sizeof(buf), &got));
    unsigned count = 0;
    errno_or_zero(pqv_mount_readdir(view, ino, (uint64_t)(data[0] >> 3), count_entry, &count));
    pqv_mount_file *f = NULL;
    rc = pqv_mount_file_open(view, ino, &f);
    errno_or_zero(rc);
    if (rc == 0) {
        uint64_t out;
        errno_or_zero(pqv_mount_read(f, (uint8_t *)buf, sizeof(buf), (uint64_t)(data[0] >> 4), &got));
        errno_or_zero(pqv_mount_seek(f, (uint64_t)(data[0] >> 5), SEEK_HOLE, &out));
        pqv_mount_file_close(f);
    }
    return 0;
}
