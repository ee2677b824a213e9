/*
 * vault/kinds.h: every kind of entry in one table (kinds.c): its code in
 * the format, its words, its letter in list -l (as ls), the file type it
 * is made from by add, what its entry adds after the common fields
 * (entry.c), and how get restores it (get_restore.c).  Adding a kind is a
 * row here, its public code (include/pqvault/vault.h), its codec in
 * entry.c and its restore in get_restore.c: four files (docs/DESIGN.md
 * section 5).
 */
#ifndef PQV_VAULT_KINDS_H
#define PQV_VAULT_KINDS_H

#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"
#include "util/cursor.h"
#include "vault/entry.h"

struct restore;

struct entry_kind {
    int kind;                    /* KIND_*: the byte in the format */
    const char *name;            /* in words ("symbolic link") */
    const char *json;            /* in list --json ("symlink") */
    char letter;                 /* list -l's first column, as ls */
    mode_t type;                 /* the file type add stores as this kind (S_IF*);
                                    0: none (a removed entry) */
    int stored;                  /* add stores it (sockets are reported, skipped) */
    int in_format2;              /* a format-2 segment may hold it */
    /* encode(b, e, t, stored_key) and decode(in, e, t): what the entry
     * holds after the common fields (NULL: nothing); decode returns
     * PQV_E_INTEGRITY for anything malformed. */
    int (*encode)(struct buf *b, const struct entry *e, struct seg_tables *t,
        const uint8_t *stored_key);
    int (*decode)(struct cursor *in, struct entry *e, const struct seg_tables *t);
    /* restore(r, e, rel, display, allow_device): the entry made at ${rel}
     * below the destination (NULL: never restored). */
    int (*restore)(struct restore *r, const struct entry *e, const char *rel,
        const char *display, int allow_device);
};

/* kinds_find(kind): the row of ${kind}, or NULL if there is none. */
const struct entry_kind *kinds_find(int kind);
/* kinds_of_mode(mode): the row of the file type of ${mode}, or NULL. */
const struct entry_kind *kinds_of_mode(mode_t mode);

#endif
