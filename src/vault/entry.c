/*
 * entry.c: catalogue entries of format 2 (docs/FORMAT.md section 13): the
 * in-memory form, its encoding into a segment block and its strict
 * decoding.  Strings and packs are referred to by index into the segment's
 * string and pack tables (struct seg_tables), built while encoding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/util.h"
#include "vault/chunker.h"
#include "vault/entry.h"
#include "vault/format1.h"
#include "vault/kinds.h"

#define MAX_XATTRS 4096
#define MAX_TARGET 4096

void
entry_clear(struct entry *e)
{
    if (e == NULL)
        return;
    free(e->name);
    free(e->user);
    free(e->group);
    free(e->origin);
    for (size_t i = 0; i < e->nxattrs; i++) {
        free(e->xattrs[i].name);
        free(e->xattrs[i].value);
    }
    free(e->xattrs);
    free(e->extents);
    free(e->target);
    util_wipe(e->key, sizeof(e->key));
    memset(e, 0, sizeof(*e));
}

/* dupstr(s): a copy, or NULL for NULL. */
static int
dupstr(char **out, const char *s)
{
    *out = NULL;
    return s == NULL || (*out = strdup(s)) != NULL ? 0 : PQV_E_NOMEM;
}

int
entry_removed(struct entry *e, const char *name)
{
    memset(e, 0, sizeof(*e));
    e->kind = KIND_REMOVED;
    if ((e->name = strdup(name)) == NULL)
        return PQV_E_NOMEM;
    return 0;
}

int
entry_same_data(const struct entry *a, const struct entry *b)
{
    if (a->kind != KIND_FILE || b->kind != KIND_FILE || a->size != b->size ||
        a->nextents != b->nextents || a->chunked != b->chunked)
        return 0;
    for (uint32_t j = 0; j < a->nextents; j++) {
        const struct extent *x = &a->extents[j], *y = &b->extents[j];
        if (x->file_off != y->file_off || x->plain_len != y->plain_len || x->chunk != y->chunk)
            return 0;
        if (x->chunk ? memcmp(x->chunk_id, y->chunk_id, CHUNK_ID_BYTES) != 0 :
            memcmp(x->pack_id, y->pack_id, PACK_ID_BYTES) != 0 || x->pack_off != y->pack_off ||
            x->stored_len != y->stored_len)
            return 0;
    }
    return 1;
}

int
entry_copy(struct entry *dst, const struct entry *src)
{
    *dst = *src;
    dst->name = dst->user = dst->group = dst->origin = dst->target = NULL;
    dst->xattrs = NULL;
    dst->nxattrs = 0;
    dst->extents = NULL;
    if (dupstr(&dst->name, src->name) != 0 || dupstr(&dst->user, src->user) != 0 ||
        dupstr(&dst->group, src->group) != 0 || dupstr(&dst->origin, src->origin) != 0 ||
        dupstr(&dst->target, src->target) != 0)
        goto nomem;
    if (src->nextents > 0) {
        if ((dst->extents = malloc(src->nextents * sizeof(*dst->extents))) == NULL)
            goto nomem;
        memcpy(dst->extents, src->extents, src->nextents * sizeof(*dst->extents));
    }
    if (src->nxattrs > 0) {
        if ((dst->xattrs = calloc(src->nxattrs, sizeof(*dst->xattrs))) == NULL)
            goto nomem;
        for (size_t i = 0; i < src->nxattrs; i++, dst->nxattrs++) {
            if (dupstr(&dst->xattrs[i].name, src->xattrs[i].name) != 0 ||
                (dst->xattrs[i].value = malloc(src->xattrs[i].len + 1)) == NULL)
                goto nomem;
            memcpy(dst->xattrs[i].value, src->xattrs[i].value, src->xattrs[i].len);
            dst->xattrs[i].len = src->xattrs[i].len;
        }
    }
    return 0;

nomem:
    entry_clear(dst);
    return PQV_E_NOMEM;
}

/* A name's sort key and where its entry was. */
struct sort_key {
    const char *name;
    uint64_t epoch;
    size_t at;
};

static int
compare_oldest(const void *a, const void *b)
{
    const struct sort_key *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    if (x->epoch != y->epoch)
        return x->epoch < y->epoch ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int
compare_newest(const void *a, const void *b)
{
    const struct sort_key *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    if (x->epoch != y->epoch)
        return x->epoch > y->epoch ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

int
entry_sort_by_name(struct entry *e, size_t n, int newest_first, uint32_t *along)
{
    int (*cmp)(const void *, const void *) = newest_first ? compare_newest : compare_oldest;
    struct sort_key *k;

    if (n < 2)
        return 0;
    if ((k = calloc(n, sizeof(*k))) == NULL)
        return PQV_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        k[i].name = e[i].name != NULL ? e[i].name : "";
        k[i].epoch = e[i].epoch;
        k[i].at = i;
    }
    /* (In order already, as a history's merged versions are: qsort's
     * merge sort would still compare about n/2 names a level.) */
    for (size_t i = 1; i < n; i++) {
        if (cmp(&k[i - 1], &k[i]) > 0) {
            qsort(k, n, sizeof(*k), cmp);
            break;
        }
    }
    /* Place i takes what was at k[i].at, along the permutation's cycles;
     * a place done points at itself. */
    for (size_t i = 0; i < n; i++) {
        struct entry keep;
        uint32_t keep_along = 0;
        size_t j = i;
        if (k[i].at == i)
            continue;
        keep = e[i];
        if (along != NULL)
            keep_along = along[i];
        for (;;) {
            size_t from = k[j].at;
            k[j].at = j;
            if (from == i) {
                e[j] = keep;
                if (along != NULL)
                    along[j] = keep_along;
                break;
            }
            e[j] = e[from];
            if (along != NULL)
                along[j] = along[from];
            j = from;
        }
    }
    free(k);
    return 0;
}

/* ---- the string and pack tables of a segment ---- */

void
entry_tables_free(struct seg_tables *t)
{
    for (size_t i = 0; i < t->nstrings; i++)
        free(t->strings[i]);
    free(t->strings);
    free(t->packs);
    memset(t, 0, sizeof(*t));
}

/* string_index(t, s): the index + 1 of ${s} (added if new); 0 for NULL. */
static int
string_index(struct seg_tables *t, const char *s, uint64_t *out)
{
    *out = 0;
    if (s == NULL)
        return 0;
    for (size_t i = 0; i < t->nstrings; i++)
        if (strcmp(t->strings[i], s) == 0) {
            *out = i + 1;
            return 0;
        }
    char **grown = realloc(t->strings, (t->nstrings + 1) * sizeof(*grown));
    if (grown == NULL)
        return PQV_E_NOMEM;
    t->strings = grown;
    if ((t->strings[t->nstrings] = strdup(s)) == NULL)
        return PQV_E_NOMEM;
    *out = ++t->nstrings;
    return 0;
}

int
entry_tables_pack(struct seg_tables *t, const uint8_t id[PACK_ID_BYTES], uint8_t flags,
    uint64_t *index)
{
    /* Most lookups are for the pack added last. */
    for (size_t i = t->npacks; i-- > 0;)
        if (memcmp(t->packs[i].id, id, PACK_ID_BYTES) == 0 &&
            (t->packs[i].flags & PACK_V1_OBJECT) == (flags & PACK_V1_OBJECT)) {
            *index = i;
            return 0;
        }
    if (t->npacks == t->cappacks) {
        size_t cap = t->cappacks ? 2 * t->cappacks : 64;
        struct seg_pack *p = realloc(t->packs, cap * sizeof(*p));
        if (p == NULL)
            return PQV_E_NOMEM;
        t->packs = p;
        t->cappacks = cap;
    }
    memset(&t->packs[t->npacks], 0, sizeof(t->packs[t->npacks]));
    memcpy(t->packs[t->npacks].id, id, PACK_ID_BYTES);
    t->packs[t->npacks].flags = flags & PACK_V1_OBJECT;
    *index = t->npacks++;
    return 0;
}

/* ---- encoding ---- */

int
entry_encode(struct buf *out, const struct entry *e, struct seg_tables *t,
    const uint8_t *stored_key)
{
    const struct entry_kind *k = kinds_find(e->kind);
    struct buf b = { NULL, 0, 0, 0 };
    size_t namelen = strlen(e->name);
    uint64_t user, group, flags = 0;
    int rc;

    if (k == NULL)
        return error_set(PQV_E_INVAL, e->name, "unknown kind of entry (%d)", e->kind);
    /* What a reader refuses is never written. */
    if (!k->in_format2 && !t->special)
        return error_set(PQV_E_UNSUPPORTED, e->name, "a %s is stored in vaults of format 3 only",
            k->name);
    buf_blob(&b, e->name, namelen);
    buf_u8(&b, (uint8_t)e->kind);
    if (e->kind == KIND_REMOVED)
        goto done;
    if ((rc = string_index(t, e->user, &user)) != 0 || (rc = string_index(t, e->group, &group)) != 0)
        goto fail;
    buf_varint(&b, e->perm & 07777);
    buf_varint(&b, e->uid);
    buf_varint(&b, e->gid);
    buf_varint(&b, user);
    buf_varint(&b, group);
    buf_zigzag(&b, e->mtime_sec);
    buf_varint(&b, e->mtime_nsec);
    buf_zigzag(&b, e->ctime_sec);
    buf_varint(&b, e->ctime_nsec);
    buf_varint(&b, e->dev);
    buf_varint(&b, e->ino);
    flags = (e->origin != NULL ? ENTRY_ORIGIN : 0) | (e->hlgroup != 0 ? ENTRY_HLGROUP : 0) |
        (e->nxattrs > 0 ? ENTRY_XATTRS : 0) |
        (e->kind == KIND_FILE && e->has_content ? ENTRY_CONTENT : 0) |
        (e->kind == KIND_FILE && e->chunked ? ENTRY_CHUNKED : 0);
    buf_varint(&b, flags);
    if (e->origin != NULL)
        buf_blob(&b, e->origin, strlen(e->origin));
    if (e->hlgroup != 0)
        buf_varint(&b, e->hlgroup);
    if (e->nxattrs > 0) {
        buf_varint(&b, e->nxattrs);
        for (size_t i = 0; i < e->nxattrs; i++) {
            uint64_t index;
            if ((rc = string_index(t, e->xattrs[i].name, &index)) != 0)
                goto fail;
            buf_varint(&b, index);
            buf_blob(&b, e->xattrs[i].value, e->xattrs[i].len);
        }
    }
    if (e->kind == KIND_FILE && e->has_content)
        buf_bytes(&b, e->content, sizeof(e->content));
    /* What follows is the kind's own (kinds.c). */
    if (k->encode != NULL && (rc = k->encode(&b, e, t, stored_key)) != 0)
        goto fail;
done:
    if (b.nomem) {
        rc = PQV_E_NOMEM;
        goto fail;
    }
    buf_varint(out, b.len);
    buf_bytes(out, b.p, b.len);
    buf_wipe_free(&b);
    return out->nomem ? PQV_E_NOMEM : 0;
fail:
    buf_wipe_free(&b);
    return rc;
}

/* ---- decoding ---- */

/* take_string(c, max, out): a length-prefixed string without NUL bytes. */
static int
take_string(struct cursor *c, size_t max, char **out)
{
    size_t n = (size_t)cursor_varint_max(c, max);
    const uint8_t *p = cursor_take(c, n);

    *out = NULL;
    if (p == NULL || memchr(p, '\0', n) != NULL)
        return PQV_E_INTEGRITY;
    if ((*out = malloc(n + 1)) == NULL)
        return PQV_E_NOMEM;
    memcpy(*out, p, n);
    (*out)[n] = '\0';
    return 0;
}

/* table_string(t, index, out): string table entry index - 1 (0: none). */
static int
table_string(const struct seg_tables *t, uint64_t index, char **out)
{
    *out = NULL;
    if (index == 0)
        return 0;
    if (index > t->nstrings)
        return PQV_E_INTEGRITY;
    return dupstr(out, t->strings[index - 1]);
}

/* ---- what each kind adds (the rows of kinds.c) ---- */

/* A chunked file (format 3): its size, then per chunk its offset in the
 * file, plaintext length and identity; no key (a chunk's comes from the
 * seed and its identity). */
static void
chunks_encode(struct buf *b, const struct entry *e)
{
    buf_varint(b, e->size);
    buf_varint(b, e->nextents);
    for (uint32_t i = 0; i < e->nextents; i++) {
        buf_varint(b, e->extents[i].file_off);
        buf_varint(b, e->extents[i].plain_len);
        buf_bytes(b, e->extents[i].chunk_id, CHUNK_ID_BYTES);
    }
}

static int
chunks_decode(struct cursor *in, struct entry *e)
{
    uint64_t end = 0;

    e->size = cursor_varint_max(in, MAX_FILE_BYTES);
    e->key_state = KEY_NONE;
    /* Each chunk takes at least 34 bytes: bounds the count. */
    e->nextents = (uint32_t)cursor_varint_max(in, cursor_left(in) / 34);
    if (in->bad)
        return PQV_E_INTEGRITY;
    if (e->nextents > 0 && (e->extents = calloc(e->nextents, sizeof(*e->extents))) == NULL)
        return PQV_E_NOMEM;
    for (uint32_t i = 0; i < e->nextents; i++) {
        struct extent *x = &e->extents[i];
        const uint8_t *id;
        x->file_off = cursor_varint(in);
        x->plain_len = (uint32_t)cursor_varint_max(in, CHUNK_MAX);
        if ((id = cursor_take(in, CHUNK_ID_BYTES)) == NULL || x->plain_len == 0 ||
            x->file_off < end || x->file_off > e->size || e->size - x->file_off < x->plain_len)
            return PQV_E_INTEGRITY;
        memcpy(x->chunk_id, id, CHUNK_ID_BYTES);
        x->chunk = 1;
        end = x->file_off + x->plain_len;
    }
    return 0;
}

int
entry_file_encode(struct buf *b, const struct entry *e, struct seg_tables *t,
    const uint8_t *stored_key)
{
    int rc;

    if (e->chunked) {
        chunks_encode(b, e);
        return 0;
    }
    buf_u8(b, (uint8_t)e->suite);
    buf_varint(b, e->size);
    buf_bytes(b, stored_key, PQV_FILE_KEY_BYTES);
    buf_varint(b, e->nextents);
    for (uint32_t i = 0; i < e->nextents; i++) {
        const struct extent *x = &e->extents[i];
        uint64_t pack;
        if ((rc = entry_tables_pack(t, x->pack_id, x->pack_flags, &pack)) != 0)
            return rc;
        buf_varint(b, x->file_off);
        buf_varint(b, x->plain_len);
        buf_varint(b, pack);
        buf_varint(b, x->pack_off);
        buf_varint(b, x->stored_len);
        buf_u8(b, x->flags);
    }
    return 0;
}

int
entry_file_decode(struct cursor *in, struct entry *e, const struct seg_tables *t)
{
    const uint8_t *k;
    uint64_t end = 0;

    if (e->chunked)
        return chunks_decode(in, e);
    e->suite = cursor_u8(in);
    /* Bounded: the extents lie within it, the rest is holes, and no real
     * file's holes reach 1 PiB (a forged size would otherwise be an
     * endless stream of zeros). */
    e->size = cursor_varint_max(in, MAX_FILE_BYTES);
    if ((k = cursor_take(in, PQV_FILE_KEY_BYTES)) == NULL || pqv_aead_name(e->suite) == NULL)
        return PQV_E_INTEGRITY;
    memcpy(e->key, k, PQV_FILE_KEY_BYTES);
    e->key_state = KEY_STORED;
    /* Each extent takes at least 6 bytes: bounds the count. */
    e->nextents = (uint32_t)cursor_varint_max(in, cursor_left(in) / 6);
    if (in->bad)
        return PQV_E_INTEGRITY;
    if (e->nextents > 0 && (e->extents = calloc(e->nextents, sizeof(*e->extents))) == NULL)
        return PQV_E_NOMEM;
    for (uint32_t i = 0; i < e->nextents; i++) {
        struct extent *x = &e->extents[i];
        uint64_t pack;
        x->file_off = cursor_varint(in);
        x->plain_len = (uint32_t)cursor_varint_max(in, PQV_OBJECT_MAX_PLAIN);
        pack = cursor_varint(in);
        x->pack_off = (uint32_t)cursor_varint_max(in, UINT32_MAX);
        x->stored_len = (uint32_t)cursor_varint_max(in, UINT32_MAX);
        x->flags = cursor_u8(in);
        if (in->bad || pack >= t->npacks || (x->flags & ~EXTENT_ZSTD) != 0 ||
            x->plain_len == 0 || x->file_off < end || x->file_off > e->size ||
            e->size - x->file_off < x->plain_len)
            return PQV_E_INTEGRITY;
        end = x->file_off + x->plain_len;
        memcpy(x->pack_id, t->packs[pack].id, PACK_ID_BYTES);
        x->pack_flags = t->packs[pack].flags;
        /* A format-1 object: uncompressed, its plaintext length fixed. */
        if ((x->pack_flags & PACK_V1_OBJECT) && (x->flags != 0 ||
                x->stored_len != object_sealed_size(x->plain_len)))
            return PQV_E_INTEGRITY;
    }
    return 0;
}

int
entry_symlink_encode(struct buf *b, const struct entry *e, struct seg_tables *t,
    const uint8_t *stored_key)
{
    (void)t;
    (void)stored_key;
    buf_blob(b, e->target, strlen(e->target));
    return 0;
}

int
entry_symlink_decode(struct cursor *in, struct entry *e, const struct seg_tables *t)
{
    int rc;

    (void)t;
    if ((rc = take_string(in, MAX_TARGET, &e->target)) != 0)
        return rc;
    return e->target[0] == '\0' ? PQV_E_INTEGRITY : 0;
}

int
entry_device_encode(struct buf *b, const struct entry *e, struct seg_tables *t,
    const uint8_t *stored_key)
{
    (void)t;
    (void)stored_key;
    buf_varint(b, e->rdev_major);
    buf_varint(b, e->rdev_minor);
    return 0;
}

int
entry_device_decode(struct cursor *in, struct entry *e, const struct seg_tables *t)
{
    (void)t;
    e->rdev_major = (uint32_t)cursor_varint_max(in, UINT32_MAX);
    e->rdev_minor = (uint32_t)cursor_varint_max(in, UINT32_MAX);
    return in->bad ? PQV_E_INTEGRITY : 0;
}

int
entry_check_size(const char *name, uint64_t size)
{
    if (size > MAX_FILE_BYTES)
        return error_set(PQV_E_INVAL, name, "larger than a vault stores (%llu bytes; at most "
            "%llu, 1 PiB)", (unsigned long long)size, (unsigned long long)MAX_FILE_BYTES);
    return 0;
}

int
entry_decode(struct cursor *c, struct entry *e, const struct seg_tables *t)
{
    const struct entry_kind *k;
    struct cursor in;
    const uint8_t *body;
    size_t len;
    uint64_t flags, user, group;
    int rc;

    memset(e, 0, sizeof(*e));
    len = (size_t)cursor_varint_max(c, 64u << 20);
    if ((body = cursor_take(c, len)) == NULL)
        return error_set(PQV_E_INTEGRITY, NULL, "entry is truncated");
    cursor_init(&in, body, len);
    if ((rc = take_string(&in, PQV_NAME_MAX, &e->name)) != 0)
        goto bad;
    {
        /* Names are stored normalised: get joins them under its
         * destination, so refuse anything else even when authentic. */
        char norm[PQV_NAME_MAX + 1];
        if (e->name[0] == '\0' || pqv_name_normalize(e->name, norm, sizeof(norm)) != 0 ||
            strcmp(norm, e->name) != 0)
            goto bad;
    }
    e->kind = cursor_u8(&in);
    /* FIFOs and device nodes: in segments of format 3 (and batches) only. */
    if ((k = kinds_find(e->kind)) == NULL || (!k->in_format2 && !t->special))
        goto bad;
    if (e->kind == KIND_REMOVED)
        goto end;
    e->perm = (uint32_t)cursor_varint_max(&in, 07777);
    e->uid = (uint32_t)cursor_varint_max(&in, UINT32_MAX);
    e->gid = (uint32_t)cursor_varint_max(&in, UINT32_MAX);
    user = cursor_varint(&in);
    group = cursor_varint(&in);
    e->mtime_sec = cursor_zigzag(&in);
    e->mtime_nsec = (uint32_t)cursor_varint_max(&in, 999999999);
    e->ctime_sec = cursor_zigzag(&in);
    e->ctime_nsec = (uint32_t)cursor_varint_max(&in, 999999999);
    e->dev = cursor_varint(&in);
    e->ino = cursor_varint(&in);
    flags = cursor_varint_max(&in, ENTRY_ORIGIN | ENTRY_HLGROUP | ENTRY_XATTRS | ENTRY_CONTENT |
        ENTRY_CHUNKED);
    if (in.bad)
        goto bad;
    /* Chunks: files of a format-3 segment only, with no content hash (the
     * chunks are the deduplication). */
    if ((flags & ENTRY_CHUNKED) && (e->kind != KIND_FILE || !t->chunks ||
            (flags & ENTRY_CONTENT)))
        goto bad;
    e->chunked = (flags & ENTRY_CHUNKED) != 0;
    if ((rc = table_string(t, user, &e->user)) != 0 || (rc = table_string(t, group, &e->group)) != 0)
        goto bad;
    if ((flags & ENTRY_ORIGIN) && (rc = take_string(&in, 4096, &e->origin)) != 0)
        goto bad;
    if ((flags & ENTRY_HLGROUP) && (e->hlgroup = cursor_varint(&in)) == 0)
        goto bad;
    if (flags & ENTRY_XATTRS) {
        size_t n = (size_t)cursor_varint_max(&in, MAX_XATTRS);
        if (n == 0 || in.bad)
            goto bad;
        if ((e->xattrs = calloc(n, sizeof(*e->xattrs))) == NULL)
            goto nomem;
        for (size_t i = 0; i < n && !in.bad; i++) {
            struct xattr *x = &e->xattrs[i];
            const uint8_t *v;
            e->nxattrs = i + 1; /* cleared by entry_clear from here on */
            if ((rc = table_string(t, cursor_varint(&in), &x->name)) != 0 || x->name == NULL)
                goto bad;
            x->len = (size_t)cursor_varint_max(&in, MAX_XATTR_VALUE);
            if ((v = cursor_take(&in, x->len)) == NULL || (x->value = malloc(x->len + 1)) == NULL)
                goto bad_or_nomem;
            memcpy(x->value, v, x->len);
        }
    }
    if (flags & ENTRY_CONTENT) {
        const uint8_t *hash;
        if (e->kind != KIND_FILE || (hash = cursor_take(&in, sizeof(e->content))) == NULL)
            goto bad;
        memcpy(e->content, hash, sizeof(e->content));
        e->has_content = 1;
    }
    /* What follows is the kind's own (kinds.c). */
    if (k->decode != NULL && (rc = k->decode(&in, e, t)) != 0) {
        if (rc == PQV_E_NOMEM)
            goto nomem;
        goto bad;
    }
end:
    if (in.bad || cursor_left(&in) != 0)
        goto bad;
    return 0;

bad_or_nomem:
    if (!in.bad)
        goto nomem;
bad:
    entry_clear(e);
    return error_set(PQV_E_INTEGRITY, NULL, "entry is malformed");
nomem:
    entry_clear(e);
    return PQV_E_NOMEM;
}
