/*
 * entry_fixture.h: catalogue entries for the unit tests of the entry codec
 * and of segments (header-only; static inline functions, so that a test
 * using only some of them draws no unused-function warning): setting an
 * entry's strings, adding extents and extended attributes, and comparing
 * two entries field by field (the first difference is printed).
 */
#ifndef PQV_TEST_ENTRY_FIXTURE_H
#define PQV_TEST_ENTRY_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vault/entry.h"

/* ef_dup(s): a copy of ${s} (NULL for NULL); exits 2 without memory. */
static inline char *
ef_dup(const char *s)
{
    char *p;

    if (s == NULL)
        return NULL;
    if ((p = strdup(s)) == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* ef_init(e, name, kind): an entry with only its name and kind set. */
static inline void
ef_init(struct entry *e, const char *name, int kind)
{
    memset(e, 0, sizeof(*e));
    e->name = ef_dup(name);
    e->kind = kind;
}

/* ef_extent(e, off, plain, pack_id_byte, pack_off, stored, flags, pack_flags):
 * one more extent, its pack id 16 times ${pack_id_byte}. */
static inline void
ef_extent(struct entry *e, uint64_t off, uint32_t plain, uint8_t pack_id_byte, uint32_t pack_off,
    uint32_t stored, uint8_t flags, uint8_t pack_flags)
{
    struct extent *x = realloc(e->extents, (e->nextents + 1) * sizeof(*x));

    if (x == NULL)
        exit(2);
    e->extents = x;
    x = &e->extents[e->nextents++];
    memset(x, 0, sizeof(*x));
    x->file_off = off;
    x->plain_len = plain;
    memset(x->pack_id, pack_id_byte, PACK_ID_BYTES);
    x->pack_off = pack_off;
    x->stored_len = stored;
    x->flags = flags;
    x->pack_flags = pack_flags;
}

/* ef_xattr(e, name, value, len): one more extended attribute. */
static inline void
ef_xattr(struct entry *e, const char *name, const void *value, size_t len)
{
    struct xattr *x = realloc(e->xattrs, (e->nxattrs + 1) * sizeof(*x));

    if (x == NULL)
        exit(2);
    e->xattrs = x;
    x = &e->xattrs[e->nxattrs++];
    x->name = ef_dup(name);
    if ((x->value = malloc(len + 1)) == NULL)
        exit(2);
    if (len > 0)
        memcpy(x->value, value, len);
    x->len = len;
}

static inline int
ef_str_eq(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* ef_equal(a, b): whether the entries hold the same fields (not the file
 * key nor the epoch: the codec stores the key as given, a segment XORs it;
 * of an extent's pack flags only the format-1 bit, as every reader: a
 * decoded extent also carries its pack's PACK_INTRODUCED); the first
 * difference is printed. */
static inline int
ef_equal(const struct entry *a, const struct entry *b)
{
#define EF_DIFF(what)                                                                 \
    do {                                                                              \
        fprintf(stderr, "  entry %s: %s differs\n", a->name ? a->name : "?", what);   \
        return 0;                                                                     \
    } while (0)
    if (!ef_str_eq(a->name, b->name))
        EF_DIFF("name");
    if (a->kind != b->kind)
        EF_DIFF("kind");
    if (a->perm != b->perm || a->uid != b->uid || a->gid != b->gid)
        EF_DIFF("perm/uid/gid");
    if (!ef_str_eq(a->user, b->user) || !ef_str_eq(a->group, b->group))
        EF_DIFF("user/group");
    if (a->mtime_sec != b->mtime_sec || a->mtime_nsec != b->mtime_nsec ||
        a->ctime_sec != b->ctime_sec || a->ctime_nsec != b->ctime_nsec)
        EF_DIFF("times");
    if (a->dev != b->dev || a->ino != b->ino)
        EF_DIFF("dev/ino");
    if (!ef_str_eq(a->origin, b->origin))
        EF_DIFF("origin");
    if (a->hlgroup != b->hlgroup)
        EF_DIFF("hlgroup");
    if (a->has_content != b->has_content ||
        (a->has_content && memcmp(a->content, b->content, sizeof(a->content)) != 0))
        EF_DIFF("content hash");
    if (a->nxattrs != b->nxattrs)
        EF_DIFF("xattr count");
    for (size_t i = 0; i < a->nxattrs; i++)
        if (!ef_str_eq(a->xattrs[i].name, b->xattrs[i].name) || a->xattrs[i].len != b->xattrs[i].len ||
            (a->xattrs[i].len > 0 && memcmp(a->xattrs[i].value, b->xattrs[i].value, a->xattrs[i].len) != 0))
            EF_DIFF("xattr");
    if (a->kind == KIND_FILE && (a->suite != b->suite || a->size != b->size))
        EF_DIFF("suite/size");
    if (a->nextents != b->nextents)
        EF_DIFF("extent count");
    for (uint32_t i = 0; i < a->nextents; i++) {
        const struct extent *x = &a->extents[i], *y = &b->extents[i];
        if (x->file_off != y->file_off || x->plain_len != y->plain_len ||
            x->stored_len != y->stored_len || x->pack_off != y->pack_off || x->flags != y->flags ||
            memcmp(x->pack_id, y->pack_id, PACK_ID_BYTES) != 0 ||
            (x->pack_flags & PACK_V1_OBJECT) != (y->pack_flags & PACK_V1_OBJECT))
            EF_DIFF("extent");
    }
    if (!ef_str_eq(a->target, b->target))
        EF_DIFF("target");
    if (a->rdev_major != b->rdev_major || a->rdev_minor != b->rdev_minor)
        EF_DIFF("device number");
    return 1;
#undef EF_DIFF
}

#endif
