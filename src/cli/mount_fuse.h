/*
 * src/cli/mount_fuse.h: between cmd_mount.c (the command: options, the
 * daemon, the session's life) and mount_fuse.c (the FUSE operations).
 */
#ifndef PQV_CLI_MOUNT_FUSE_H
#define PQV_CLI_MOUNT_FUSE_H

#ifdef PQV_HAVE_FUSE
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "pqvault/mount.h"

/* The one view served, and what the session learnt at INIT. */
struct mount_ctx {
    pqv_mount *m;
    int ready_fd;                /* daemon: the parent waits on it; -1 once told */
    int daemon;
    volatile int detached;       /* stdio gone: reports go to syslog */
    int no_opendir;              /* the kernel opens directories itself */
    int no_open;                 /* and files: the view keeps them open */
};

extern struct mount_ctx mount_fuse_ctx;
/* The operations (their init tells the waiting parent the mount answers). */
extern const struct fuse_lowlevel_ops mount_fuse_ops;
/* mount_fuse_report: the view's report callback: damage met while
 * serving, each file named once (to syslog once detached). */
void mount_fuse_report(void *ctx, int level, const char *subject, const char *message);
/* mount_fuse_offer: the view's offer callback: file data decrypted ahead
 * of a walk's reads stored in the kernel's page cache (FUSE's
 * NOTIFY_STORE), while mount_fuse_offers(se) has a session (NULL: none
 * from then on, before the session goes). */
int mount_fuse_offer(void *ctx, uint64_t ino, const void *data, size_t len);
void mount_fuse_offers(struct fuse_session *se);
/* mount_fuse_write_counts(): the counts of names listed with and without
 * attributes, of files looked up and of listings dropped, written to
 * pqv_mount_counts_path() if it gives one (the session has ended). */
void mount_fuse_write_counts(void);
#endif

#endif
