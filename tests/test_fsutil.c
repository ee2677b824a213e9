/*
 * test_fsutil.c: the walk's directories held open (fsutil_dirs in
 * src/util/fsutil.c): a directory reached again is the descriptor held, a
 * path that leaves the directories held drops only what it leaves, a
 * symbolic link on the way is refused (or followed with FSUTIL_FOLLOW),
 * paths deeper than what is held still open, a failure leaves the cache
 * usable, and nothing leaks a descriptor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pqvault/vault.h"
#include "util/fsutil.h"

static char root[256];

/* open_fds(): descriptors open in this process. */
static int
open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory stream's own */
}

static void
mk(const char *rel)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        perror(p);
}

/* ino_of(fd, name): the inode of ${name} in ${fd} (0 if absent). */
static ino_t
ino_at(int fd, const char *name)
{
    struct stat st;
    return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_ino : 0;
}

static ino_t
ino_path(const char *rel)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    return lstat(p, &st) == 0 ? st.st_ino : 0;
}

static void
test_setup(void)
{
    snprintf(root, sizeof(root), "%s/pqv-fsutil-XXXXXX",
        getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(root) == NULL)
        perror("mkdtemp");
    mk("a");
    mk("a/b");
    mk("a/b/c");
    mk("a/bc");
    mk("x");
    char p[512];
    snprintf(p, sizeof(p), "%s/a/link", root);
    (void)symlink("b", p);
    snprintf(p, sizeof(p), "%s/a/file", root);
    close(open(p, O_CREAT | O_WRONLY, 0644));
}

/* begin(c, rootfd): the test tree's root opened, nothing held; the
 * descriptors open before. */
static int
begin(struct fsutil_dirs *c, int *rootfd)
{
    int before = open_fds();

    *rootfd = open(root, O_RDONLY | O_DIRECTORY);
    fsutil_dirs_init(c, *rootfd, root, FSUTIL_NOCREATE, 0);
    return before + 1;
}

static void
test_reuse_and_prefixes(void)
{
    struct fsutil_dirs c;
    int rootfd, fd = -1, before = begin(&c, &rootfd);

    REQUIRE(rootfd >= 0);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "", &fd), 0);
    CHECK_EQ_INT(fd, rootfd);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/b/c", &fd), 0);
    CHECK_EQ_INT(c.depth, 3);
    CHECK_EQ_INT(ino_at(fd, "."), ino_path("a/b/c"));
    int held = fd;
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/b/c", &fd), 0);
    CHECK_EQ_INT(fd, held); /* the same descriptor, nothing opened */
    CHECK_EQ_INT(open_fds(), before + 3);
    /* "a/bc" shares "a" only (not "a/b": a component, not a prefix). */
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/bc", &fd), 0);
    CHECK_EQ_INT(c.depth, 2);
    CHECK_EQ_INT(ino_at(fd, "."), ino_path("a/bc"));
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a", &fd), 0);
    CHECK_EQ_INT(c.depth, 1);
    CHECK_EQ_INT(ino_at(fd, "."), ino_path("a"));
    CHECK_EQ_INT(fsutil_dirs_open(&c, "x", &fd), 0);
    CHECK_EQ_INT(ino_at(fd, "."), ino_path("x"));
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/b/", &fd), 0);
    CHECK_EQ_INT(ino_at(fd, "."), ino_path("a/b"));
    CHECK_EQ_INT(fsutil_dirs_open(&c, "", &fd), 0);
    CHECK_EQ_INT(fd, rootfd);
    CHECK_EQ_INT(c.depth, 0);
    fsutil_dirs_close(&c);
    CHECK_EQ_INT(open_fds(), before);
    close(rootfd);
}

static void
test_links_and_failures(void)
{
    struct fsutil_dirs c;
    int rootfd, fd = -1, before = begin(&c, &rootfd);

    REQUIRE(rootfd >= 0);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/b", &fd), 0);
    /* A link on the way is never followed; a file is no directory. */
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/link/c", &fd), PQV_E_INVAL);
    CHECK(strstr(pqv_error_last()->reason, "symbolic link") != NULL);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/file", &fd), PQV_E_INVAL);
    CHECK(strstr(pqv_error_last()->reason, "not a directory") != NULL);
    CHECK(fsutil_dirs_open(&c, "a/missing/c", &fd) != 0);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/../x", &fd), PQV_E_INVAL);
    /* Still usable after each failure, and right. */
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/b/c", &fd), 0);
    CHECK_EQ_INT(ino_at(fd, "."), ino_path("a/b/c"));
    fsutil_dirs_close(&c);
    CHECK_EQ_INT(open_fds(), before);

    /* FSUTIL_FOLLOW (add -L) follows it. */
    fsutil_dirs_init(&c, rootfd, root, FSUTIL_NOCREATE | FSUTIL_FOLLOW, 0);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "a/link/c", &fd), 0);
    CHECK_EQ_INT(ino_at(fd, "."), ino_path("a/b/c"));
    fsutil_dirs_close(&c);
    CHECK_EQ_INT(open_fds(), before);
    close(rootfd);
}

static void
test_held_directory_stays(void)
{
    struct fsutil_dirs c;
    char from[512], to[512];
    int rootfd = open(root, O_RDONLY | O_DIRECTORY), fd = -1;

    REQUIRE(rootfd >= 0);
    mk("m");
    mk("m/n");
    fsutil_dirs_init(&c, rootfd, root, FSUTIL_NOCREATE, 0);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "m/n", &fd), 0);
    ino_t was = ino_at(fd, ".");
    /* The path now names a link to elsewhere: what is held is still the
     * directory that was opened, never the link's target. */
    snprintf(from, sizeof(from), "%s/m/n", root);
    snprintf(to, sizeof(to), "%s/m/n.old", root);
    CHECK_EQ_INT(rename(from, to), 0);
    CHECK_EQ_INT(symlink("/", from), 0);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "m/n", &fd), 0);
    CHECK_EQ_INT(ino_at(fd, "."), was);
    fsutil_dirs_close(&c);
    /* Opened afresh, the link is refused. */
    fsutil_dirs_init(&c, rootfd, root, FSUTIL_NOCREATE, 0);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "m/n", &fd), PQV_E_INVAL);
    fsutil_dirs_close(&c);
    close(rootfd);
}

static void
test_deeper_than_held(void)
{
    struct fsutil_dirs c;
    char rel[1024] = "", p[1400];
    int rootfd = open(root, O_RDONLY | O_DIRECTORY), fd = -1, before;

    REQUIRE(rootfd >= 0);
    /* 40 levels, more than the 32 held. */
    for (int i = 0; i < 40; i++) {
        snprintf(rel + strlen(rel), sizeof(rel) - strlen(rel), "%sd%d", i ? "/" : "", i);
        mk(rel);
    }
    before = open_fds();
    fsutil_dirs_init(&c, rootfd, root, FSUTIL_NOCREATE, 0);
    CHECK_EQ_INT(fsutil_dirs_open(&c, rel, &fd), 0);
    CHECK_EQ_INT(c.depth, FSUTIL_DIRS_DEPTH);
    CHECK_EQ_INT(ino_at(fd, "."), ino_path(rel));
    CHECK_EQ_INT(open_fds(), before + FSUTIL_DIRS_DEPTH + 1);
    /* Its parent: again below what is held, the last one closed first. */
    *strrchr(rel, '/') = '\0';
    CHECK_EQ_INT(fsutil_dirs_open(&c, rel, &fd), 0);
    CHECK_EQ_INT(ino_at(fd, "."), ino_path(rel));
    CHECK_EQ_INT(open_fds(), before + FSUTIL_DIRS_DEPTH + 1);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "d0", &fd), 0);
    CHECK_EQ_INT(open_fds(), before + 1);
    fsutil_dirs_close(&c);
    CHECK_EQ_INT(open_fds(), before);
    /* Created when asked (a restore's FSUTIL_CREATE). */
    fsutil_dirs_init(&c, rootfd, root, FSUTIL_CREATE, 0700);
    CHECK_EQ_INT(fsutil_dirs_open(&c, "new/deeper", &fd), 0);
    snprintf(p, sizeof(p), "%s/new/deeper", root);
    struct stat st;
    CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
    fsutil_dirs_close(&c);
    close(rootfd);
}

static void
test_cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    CHECK_EQ_INT(system(cmd), 0);
}

TEST_MAIN(test_setup, test_reuse_and_prefixes, test_links_and_failures, test_held_directory_stays,
    test_deeper_than_held, test_cleanup)
