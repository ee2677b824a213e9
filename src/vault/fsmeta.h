/*
 * vault/fsmeta.h: file-system metadata to entries and back (fsmeta.c): what
 * add reads of a file (stat, owner names, extended attributes) into an
 * entry, and what get sets from an entry (owner, mode, times, attributes).
 */
#ifndef PQV_VAULT_FSMETA_H
#define PQV_VAULT_FSMETA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "pqvault/vault.h"
#include "util/durable.h"
#include "vault/entry.h"

/* A small cache of user and group names (getpwuid_r and getgrgid_r are
 * slow when every file of a tree asks). */
struct fsmeta_names {
    struct { uint32_t id; char *name; int group; } *e;
    size_t n;
};
void fsmeta_names_free(struct fsmeta_names *c);

/* fsmeta_read_xattrs(fd, e, path, report, ctx): the extended attributes of
 * the file open at ${fd} into ${e}: user.* always, the others when root
 * (only root restores them); ${fd} may be an O_PATH descriptor (a FIFO or
 * device node).  Not supported by the file system: none; an
 * attribute that cannot be read is reported and left out. */
int fsmeta_read_xattrs(int fd, struct entry *e, const char *path, pqv_report_fn report,
    void *report_ctx);

/* fsmeta_fill_entry(e, name, kind, st, target, hlgroup, cache): ${e} as the
 * entry of ${name}: its kind and the metadata of ${st} (owner names from
 * ${cache}), a link's ${target}, its hard-link group. */
int fsmeta_fill_entry(struct entry *e, const char *name, int kind, const struct stat *st,
    const char *target, uint64_t hlgroup, struct fsmeta_names *cache);

/* fsmeta_owner(e, uid, gid): as root, the owner to restore: by name when
 * the name exists here (as tar does), else by number; 0 (nothing to set)
 * when not root or when the entry keeps no owner (format 1). */
int fsmeta_owner(const struct entry *e, uid_t *uid, gid_t *gid);
/* fsmeta_durable_meta(e, m): what a restored file of ${e} is given: mode,
 * times, owner (fsmeta_owner). */
void fsmeta_durable_meta(const struct entry *e, struct durable_meta *m);
/* fsmeta_set_xattrs(fd, e, display, report, ctx): (${fd} may be an O_PATH
 * descriptor) user.* attributes always,
 * the others (security., trusted., system.) as root only; a file system
 * that takes none is reported, not an error. */
void fsmeta_set_xattrs(int fd, const struct entry *e, const char *display, pqv_report_fn report,
    void *report_ctx);
/* What fsmeta_xattrs_cb needs: durable_meta's attrs step sets the
 * attributes after the owner and mode and before the times (a chown
 * clears security.capability). */
struct fsmeta_xattrs {
    const struct entry *e;
    const char *display;
    pqv_report_fn report;
    void *report_ctx;
};
void fsmeta_xattrs_cb(int fd, void *ctx);

#endif
