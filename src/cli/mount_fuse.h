/*
 * src/cli/mount_fuse.h: between cmd_mount.c (the command: options, the
 * daemon, the session's life) and mount_fuse.c (the FUSE operations).
 */
#ifndef PQV_CLI_MOUNT_FUSE_H
#define PQV_CLI_MOUNT_FUSE_H

#ifdef PQV_HAVE_FUSE
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <sys/stat.h>

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

/* Attributes and names never change while mounted (the view is the vault
 * as it was at mount time): the kernel may keep them as long as it likes. */
#define MOUNT_FUSE_TIMEOUT 86400.0

/* The operations by stage: names and listings (mount_fuse_names.c),
 * reads (mount_fuse_read.c); mount_fuse.c holds the table. */
void mount_fuse_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void mount_fuse_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void mount_fuse_op_readlink(fuse_req_t req, fuse_ino_t ino);
void mount_fuse_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void mount_fuse_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi);
void mount_fuse_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi);
void mount_fuse_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void mount_fuse_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
    struct fuse_file_info *fi);
void mount_fuse_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void mount_fuse_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
    struct fuse_file_info *fi);
/* mount_fuse_to_stat(a, st): the view's attributes as stat(2)'s. */
void mount_fuse_to_stat(const struct pqv_mount_attr *a, struct stat *st);
/* mount_fuse_inval_inode(ino, off, len): the kernel's cached attributes of
 * ${ino} dropped, and its pages in [off, off + len) (len 0: to the end),
 * while a session serves; 0 or an error. */
int mount_fuse_inval_inode(uint64_t ino, uint64_t off, uint64_t len);
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
 * attributes and of listings dropped, written to
 * pqv_mount_counts_path() if it gives one (the session has ended). */
void mount_fuse_write_counts(void);
#endif

#endif
