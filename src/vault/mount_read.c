/*
 * mount_read.c: reading files of the mounted view (vault/mount_internal.h):
 * a read's bytes from the chunks (format 3) or extents (formats 1 and 2)
 * it touches, holes as zeros, through the cache of decrypted chunks
 * (mount_cache.c); whether it is a sequential reader's (whole chunks, the
 * next ones prefetched) or a random one (only the 64 KiB segments it
 * touches, where the chunk allows); SEEK_DATA and SEEK_HOLE from the
 * extents.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "vault/chunk.h"
#include "vault/mount_internal.h"

/* ---- files ---- */

/* first_extent(e, off): the first extent ending after ${off}. */
static uint32_t
first_extent(const struct entry *e, uint64_t off)
{
    uint32_t lo = 0, hi = e->nextents;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (e->extents[mid].file_off + e->extents[mid].plain_len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* in_parts(x): a chunk a random read opens only the segments of: stored
 * uncompressed (a zstd frame opens only whole) and larger than one. */
static int
in_parts(const struct extent *x)
{
    return x->chunk && x->located && (x->flags & BLOB_ZSTD) == 0 &&
        x->plain_len > PQV_STREAM_SEGMENT_BYTES;
}

int
pqv_mount_read(struct pqv_mount_file *f, uint8_t *buf, size_t len, uint64_t off, size_t *got)
{
    struct pqv_mount *m;
    const struct entry *e;
    uint64_t pos, end;
    uint32_t i;
    int rc, sequential;

    if (f == NULL || got == NULL || (buf == NULL && len > 0))
        return -EINVAL;
    m = f->m;
    e = &f->e;
    *got = 0;
    if (off >= e->size || len == 0)
        return 0;
    if (len > e->size - off)
        len = (size_t)(e->size - off);
    pos = off;
    end = off + len;
    /* A reader going on from where it stopped (or starting) reads whole
     * chunks, and the next ones are decrypted meanwhile; a random read
     * opens only the 64 KiB segments it touches where the chunk allows.
     * ("Where it stopped": within MOUNT_SEQUENTIAL_SLACK of the furthest
     * read.) */
    pthread_mutex_lock(&m->lock);
    sequential = off == 0 || (f->read_before && off + MOUNT_SEQUENTIAL_SLACK >= f->next_off &&
                                 off <= f->next_off + MOUNT_SEQUENTIAL_SLACK);
    pthread_mutex_unlock(&m->lock);
    i = first_extent(e, off);
    while (pos < end) {
        const struct extent *x = i < e->nextents ? &e->extents[i] : NULL;
        if (x != NULL && x->file_off + x->plain_len <= pos) {
            i++;
            continue;
        }
        if (x != NULL && x->file_off <= pos) {
            struct mount_chunk *ce;
            uint64_t xe = x->file_off + x->plain_len, in = pos - x->file_off, take;
            uint32_t segment = !sequential && in_parts(x)
                ? (uint32_t)(in / PQV_STREAM_SEGMENT_BYTES) : MOUNT_WHOLE;
            if ((rc = mount_cache_get(f, i, segment, &ce)) != 0) {
                util_wipe(buf, (size_t)(pos - off));
                mount_report(m, e->name);
                return rc == PQV_E_NOMEM ? -ENOMEM : -EIO;
            }
            if (ce->len != (ce->segment == MOUNT_WHOLE ? x->plain_len
                                                       : mount_cache_segment_len(x, ce->segment))) {
                /* A chunk cached for another entry of the same identity
                 * but another length (only a forged or damaged segment
                 * could say so): never read past what was decrypted. */
                pthread_mutex_lock(&m->lock);
                mount_cache_put(m, ce);
                pthread_mutex_unlock(&m->lock);
                util_wipe(buf, (size_t)(pos - off));
                error_set(PQV_E_INTEGRITY, e->name, "chunk %u: its length differs from "
                    "that of the same chunk elsewhere", i);
                mount_report(m, e->name);
                return -EIO;
            }
            take = (xe < end ? xe : end) - pos;
            if (take > (uint64_t)ce->base + ce->len - in)
                take = (uint64_t)ce->base + ce->len - in;
            memcpy(buf + (pos - off), ce->data + (in - ce->base), (size_t)take);
            pthread_mutex_lock(&m->lock);
            mount_cache_put(m, ce);
            pthread_mutex_unlock(&m->lock);
            pos += take;
            if (pos >= xe)
                i++;
        } else {
            /* A hole, up to the next extent. */
            uint64_t to = x != NULL && x->file_off < end ? x->file_off : end;
            memset(buf + (pos - off), 0, (size_t)(to - pos));
            pos = to;
        }
    }
    pthread_mutex_lock(&m->lock);
    if (end > f->next_off || !sequential)
        f->next_off = end;
    f->read_before = 1;
    if (sequential)
        mount_cache_prefetch(f, first_extent(e, end));
    pthread_mutex_unlock(&m->lock);
    *got = len;
    return 0;
}

int
pqv_mount_seek(struct pqv_mount_file *f, uint64_t off, int whence, uint64_t *out)
{
    const struct entry *e;
    uint32_t i;
    uint64_t pos;

    if (f == NULL || out == NULL)
        return -EINVAL;
    e = &f->e;
    if (whence != SEEK_DATA && whence != SEEK_HOLE)
        return -EINVAL;
    if (off >= e->size)
        return -ENXIO;
    i = first_extent(e, off);
    if (whence == SEEK_DATA) {
        if (i >= e->nextents)
            return -ENXIO;
        *out = e->extents[i].file_off > off ? e->extents[i].file_off : off;
        return 0;
    }
    if (i >= e->nextents || e->extents[i].file_off > off) {
        *out = off;
        return 0;
    }
    pos = e->extents[i].file_off + e->extents[i].plain_len;
    while (++i < e->nextents && e->extents[i].file_off == pos)
        pos += e->extents[i].plain_len;
    *out = pos < e->size ? pos : e->size;
    return 0;
}

void
pqv_mount_file_close(struct pqv_mount_file *f)
{
    struct pqv_mount *m;

    if (f == NULL)
        return;
    m = f->m;
    pthread_mutex_lock(&m->lock);
    if (f->prev != NULL)
        f->prev->next = f->next;
    else
        m->files = f->next;
    if (f->next != NULL)
        f->next->prev = f->prev;
    pthread_mutex_unlock(&m->lock);
    entry_clear(&f->e);
    util_unpin_memory(f, sizeof(*f));
    free(f);
}
