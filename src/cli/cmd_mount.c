/*
 * src/cli/cmd_mount.c: pqvault mount MOUNTPOINT: the library's read-only
 * view of the vault (include/pqvault/mount.h) served through libfuse3's
 * low-level interface (docs/DESIGN.md "Mount", docs/CLI.md "Mount").
 *
 * Without -f the command returns once the file system answers: it forks
 * first, before anything is unlocked or any thread started (so that the
 * key, the locked memory and the threads all live in the one process that
 * serves), and the parent waits on a pipe for the child's word that FUSE's
 * INIT was answered, or for its exit status.  Built without libfuse3
 * (pkg-config fuse3 failed: no PQV_HAVE_FUSE), mount says so and fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>


#include "cli.h"
#include "pqvault/mount.h"

#include "mount_fuse.h"

/* The most --cache-size may ask for. */
#define CACHE_MAX (64ull << 30)

struct mount_args {
    const char *mountpoint;
    int foreground;
    int allow_other;
    size_t cache;
    int done;                    /* --help given: nothing more to do */
};

/* mount_parse(a, ma): the options and the one operand; exit status. */
static int
mount_parse(struct args *a, struct mount_args *ma)
{
    const char *val;
    uint64_t size;
    int id;

    memset(ma, 0, sizeof(*ma));
    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP:
            ma->done = 1;
            return arg_stop(a, id);
        case OPT_FOREGROUND: ma->foreground = 1; break;
        case OPT_ALLOW_OTHER: ma->allow_other = 1; break;
        case OPT_CACHE_SIZE:
            if (parse_size(val, &size) != 0 || size < PQV_MOUNT_CACHE_MIN || size > CACHE_MAX)
                return usage_error("--cache-size: not a size of 8M to 64G: '%s'", val);
            ma->cache = (size_t)size;
            break;
        case ARG_OPERAND:
            if (ma->mountpoint != NULL)
                return usage_error("one MOUNTPOINT only");
            ma->mountpoint = val;
            break;
        }
    }
    if (ma->mountpoint == NULL)
        return usage_error("a MOUNTPOINT is needed");
    return EXIT_OK;
}

#ifndef PQV_HAVE_FUSE

int
cmd_mount(struct args *a)
{
    struct mount_args ma;
    int status = mount_parse(a, &ma);

    if (status != EXIT_OK || ma.done)
        return status;
    err_msg("this pqvault was built without FUSE (libfuse3-dev was missing): mount is not "
        "available (install libfuse3-dev and fuse3, then build again)");
    return EXIT_ERR;
}

#else

/* default_signals(): SIGINT, SIGTERM and SIGHUP back to their default
 * (main.c's handler removes temporaries and dies), so that libfuse's
 * handlers, which only replace a default one, unmount on them; one the
 * caller ignores stays ignored. */
static void
default_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            (void)signal(sigs[i], SIG_DFL);
    }
}

/* serve(ma, mnt): unlock, open the view, mount, serve until unmounted;
 * an exit status. */
static int
serve(const struct mount_args *ma, const char *mnt)
{
    char opts[128];
    char *argv[] = { (char *)"pqvault", (char *)"-o", opts, NULL };
    struct fuse_args args = FUSE_ARGS_INIT(3, argv);
    struct pqv_mount_options mo;
    struct fuse_session *se = NULL;
    struct fuse_loop_config *cfg;
    pqv_vault *v;
    int status, rc;

    if ((status = session(&v, 0)) != EXIT_OK)
        return status;
    memset(&mo, 0, sizeof(mo));
    mo.cache_bytes = ma->cache;
    mo.uid = (uint32_t)getuid();
    mo.gid = (uint32_t)getgid();
    mo.report = mount_fuse_report;
    mo.offer = mount_fuse_offer;
    pqv_error_clear();
    if ((rc = pqv_mount_open(v, &mo, &mount_fuse_ctx.m)) != 0) {
        status = lib_error(NULL, rc);
        pqv_vault_close(v);
        return status;
    }
    /* nodev, nosuid: stored device nodes and set-id bits are shown, never
     * acted on. */
    snprintf(opts, sizeof(opts),
        "ro,nodev,nosuid,default_permissions,fsname=pqvault,subtype=pqvault%s",
        ma->allow_other ? ",allow_other" : "");
    status = EXIT_ERR;
    if ((se = fuse_session_new(&args, &mount_fuse_ops, sizeof(mount_fuse_ops), &mount_fuse_ctx)) == NULL) {
        err_msg("%s: FUSE refused the mount options", ma->mountpoint);
        goto done;
    }
    default_signals();
    if (fuse_set_signal_handlers(se) != 0) {
        err_msg("cannot set the signal handlers");
        goto done;
    }
    if (fuse_session_mount(se, mnt) != 0) {
        /* (libfuse said why on stderr: "fuse: ...") */
        err_msg("%s: cannot mount (is /dev/fuse there, and fusermount3 installed?)",
            ma->mountpoint);
        fuse_remove_signal_handlers(se);
        goto done;
    }
    if (mount_fuse_ctx.daemon) {
        (void)setsid();
        if (chdir("/") != 0) {
            /* (nothing depends on the working directory) */
        }
    } else if (!g_cli.quiet) {
        err_msg("%s mounted (read-only); unmount with 'fusermount3 -u %s' or Ctrl-C",
            mnt, mnt);
    }
    if ((cfg = fuse_loop_cfg_create()) == NULL) {
        rc = -ENOMEM;
    } else {
        fuse_loop_cfg_set_max_threads(cfg, 16);
        mount_fuse_offers(se);
        rc = fuse_session_loop_mt(se, cfg);
        mount_fuse_offers(NULL);
        fuse_loop_cfg_destroy(cfg);
    }
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
    /* A signal (rc > 0) or fusermount3 -u (0) is how a mount ends. */
    status = rc < 0 ? EXIT_ERR : EXIT_OK;
    if (rc < 0)
        err_msg("%s: the FUSE session failed: %s", mnt, strerror(-rc));
done:
    if (se != NULL) {
        fuse_session_destroy(se);
        mount_fuse_write_counts();
    }
    fuse_opt_free_args(&args); /* (fuse_session_new may have copied and added to them) */
    pqv_mount_close(mount_fuse_ctx.m);
    mount_fuse_ctx.m = NULL;
    pqv_vault_close(v);
    return status;
}

int
cmd_mount(struct args *a)
{
    struct mount_args ma;
    char mnt[PATH_MAX];
    struct stat st;
    int status, pipefd[2];
    pid_t pid;

    if ((status = mount_parse(a, &ma)) != EXIT_OK || ma.done)
        return status;
    if ((status = resolve_location()) != EXIT_OK)
        return status;
    if (stat(ma.mountpoint, &st) != 0 || realpath(ma.mountpoint, mnt) == NULL) {
        err_msg("%s: %s", ma.mountpoint, strerror(errno));
        return EXIT_ERR;
    }
    if (!S_ISDIR(st.st_mode)) {
        err_msg("%s: not a directory", ma.mountpoint);
        return EXIT_ERR;
    }
    mount_fuse_ctx.ready_fd = -1;
    /* One malloc arena for the server's threads (set before any exists):
     * with one per thread (up to 16 FUSE workers and the prefetch threads)
     * the chunks freed from the cache stayed in each thread's arena, and
     * a server that had read a tree and then a 1 GiB file held 186 MiB
     * where it needs 141 (bench/mount.sh's sequence), reading as fast. */
    (void)mallopt(M_ARENA_MAX, 1);
    /* And memory freed kept for the next read: with glibc's defaults each
     * random read's 64 KiB buffers grew the heap again (or were mapped
     * anew) and faulted their pages in, 0.3 ms of the 0.4-0.5 ms a random
     * 4 KiB read took on this VM (perf: page faults under the pread).  At
     * most 64 MiB is kept free at the heap's top; buffers over 16 MiB
     * (none the reads use) are mapped. */
    (void)mallopt(M_MMAP_THRESHOLD, 16 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
    if (ma.foreground)
        return serve(&ma, mnt);
    /* Fork before unlocking: the key, its locked memory and the threads
     * must be the serving process's. */
    if (pipe(pipefd) != 0) {
        err_msg("pipe: %s", strerror(errno));
        return EXIT_ERR;
    }
    fflush(stdout);
    fflush(stderr);
    if ((pid = fork()) < 0) {
        err_msg("fork: %s", strerror(errno));
        return EXIT_ERR;
    }
    if (pid == 0) {
        close(pipefd[0]);
        mount_fuse_ctx.ready_fd = pipefd[1];
        mount_fuse_ctx.daemon = 1;
        status = serve(&ma, mnt);
        if (mount_fuse_ctx.ready_fd >= 0)
            close(mount_fuse_ctx.ready_fd);
        return status;
    }
    close(pipefd[1]);
    for (;;) {
        char ok;
        ssize_t n = read(pipefd[0], &ok, 1);
        int wst;
        if (n < 0 && errno == EINTR)
            continue;
        close(pipefd[0]);
        if (n == 1)
            return EXIT_OK; /* mounted and answering; the child serves on */
        /* The child ended before the mount was ready: its status. */
        while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
            ;
        return WIFEXITED(wst) ? WEXITSTATUS(wst) : EXIT_ERR;
    }
}

#endif
