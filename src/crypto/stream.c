/*
 * stream.c: the STREAM construction (see pqvault/aead.h) over one keyed
 * AEAD context, in-memory and as a streaming writer and reader.
 */
#include "pqvault/aead.h"

#include <stdlib.h>

#include "util/util.h"

#define SEG PQV_STREAM_SEGMENT_BYTES
#define SEG_SEALED PQV_STREAM_SEGMENT_SEALED

/* Nonce of segment ${counter}: 11-byte big-endian counter || last flag. */
static void
segment_nonce(uint8_t nonce[PQV_AEAD_NONCE_BYTES], uint64_t counter, int last)
{
    memset(nonce, 0, 3);
    util_store_be64(nonce + 3, counter);
    nonce[11] = last ? 1 : 0;
}

uint64_t
pqv_stream_sealed_size(uint64_t ptlen)
{
    uint64_t segments = ptlen == 0 ? 1 : (ptlen + SEG - 1) / SEG;

    return ptlen + segments * PQV_AEAD_TAG_BYTES;
}

int
pqv_stream_opened_size(uint64_t ctlen, uint64_t *ptlen)
{
    uint64_t full = ctlen / SEG_SEALED, rest = ctlen % SEG_SEALED;

    /* Every segment but the last is full; the last holds 1..SEG bytes
     * (or 0 bytes when it is the only one). */
    if (rest == 0) {
        if (full == 0)
            return error_set(PQV_E_INTEGRITY, NULL, "empty STREAM ciphertext");
        *ptlen = full * SEG;
        return 0;
    }
    if (rest < PQV_AEAD_TAG_BYTES || (rest == PQV_AEAD_TAG_BYTES && full > 0))
        return error_set(PQV_E_INTEGRITY, NULL, "STREAM ciphertext has an impossible length");
    *ptlen = full * SEG + (rest - PQV_AEAD_TAG_BYTES);
    return 0;
}

int
pqv_stream_seal(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *pt, size_t ptlen,
    uint8_t *out)
{
    uint8_t nonce[PQV_AEAD_NONCE_BYTES];
    pqv_aead *a;
    uint64_t counter = 0;
    int rc = 0;

    if ((a = pqv_aead_new(suite, key)) == NULL)
        return pqv_aead_name(suite) == NULL ? PQV_E_UNSUPPORTED : PQV_E_NOMEM;
    do {
        size_t n = ptlen > SEG ? SEG : ptlen;
        int last = (ptlen == n);
        segment_nonce(nonce, counter++, last);
        if ((rc = pqv_aead_seal(a, nonce, ad, adlen, pt, n, out)) != 0)
            break;
        pt += n;
        ptlen -= n;
        out += n + PQV_AEAD_TAG_BYTES;
    } while (ptlen > 0);
    pqv_aead_free(a);
    return rc;
}

int
pqv_stream_open(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *ct, size_t ctlen,
    uint8_t *out, size_t *ptlen)
{
    uint64_t total = 0;
    int rc;

    /* The whole stream: the range of every segment, from the first. */
    if ((rc = pqv_stream_opened_size(ctlen, &total)) != 0)
        return rc;
    return pqv_stream_open_range(suite, key, ad, adlen, ct, ctlen, 0, total, out, ptlen);
}

int
pqv_stream_open_range(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *ct, size_t ctlen, uint64_t first,
    uint64_t ptotal, uint8_t *out, size_t *ptlen)
{
    uint8_t nonce[PQV_AEAD_NONCE_BYTES];
    uint64_t nsegments = ptotal == 0 ? 1 : (ptotal + SEG - 1) / SEG;
    uint64_t last_plain = ptotal - (nsegments - 1) * SEG, counter = first;
    uint8_t *start = out;
    pqv_aead *a;
    int rc = 0;

    if (first >= nsegments || ctlen == 0)
        return error_set(PQV_E_INTEGRITY, NULL, "STREAM range outside the stream");
    if ((a = pqv_aead_new(suite, key)) == NULL)
        return pqv_aead_name(suite) == NULL ? PQV_E_UNSUPPORTED : PQV_E_NOMEM;
    while (ctlen > 0) {
        int last = counter == nsegments - 1;
        size_t n = last ? (size_t)last_plain + PQV_AEAD_TAG_BYTES : SEG_SEALED;
        if (counter >= nsegments || ctlen < n) {
            util_wipe(start, (size_t)(out - start));
            rc = error_set(PQV_E_INTEGRITY, NULL, "STREAM range does not end at a segment's end");
            break;
        }
        segment_nonce(nonce, counter++, last);
        if ((rc = pqv_aead_open(a, nonce, ad, adlen, ct, n, out)) != 0) {
            util_wipe(start, (size_t)(out - start));
            break;
        }
        ct += n;
        ctlen -= n;
        out += n - PQV_AEAD_TAG_BYTES;
    }
    pqv_aead_free(a);
    if (rc == 0)
        *ptlen = (size_t)(out - start);
    return rc;
}

/* ---- Streaming writer ---------------------------------------------------- */

struct pqv_stream_writer {
    pqv_aead *aead;
    uint8_t *ad;
    size_t adlen;
    pqv_stream_sink sink;
    void *sink_ctx;
    uint64_t counter;
    uint8_t *pending;   /* plaintext not yet sealed: SEG bytes */
    size_t npending;
    uint8_t *sealed;    /* one sealed segment: SEG_SEALED bytes */
    int held;           /* 1: sealed holds a full non-final segment, not yet
                         * passed to the sink (see pqv_stream_writer_write) */
    int state;          /* 0 open, 1 finished, -1 failed */
};

pqv_stream_writer *
pqv_stream_writer_new(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t *ad, size_t adlen, pqv_stream_sink sink, void *sink_ctx)
{
    pqv_stream_writer *w;

    if (sink == NULL || (ad == NULL && adlen > 0))
        return NULL;
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return NULL;
    w->sink = sink;
    w->sink_ctx = sink_ctx;
    w->adlen = adlen;
    if ((w->ad = malloc(adlen + 1)) == NULL)
        goto err;
    if (adlen > 0)
        memcpy(w->ad, ad, adlen);
    if ((w->pending = malloc(SEG)) == NULL || (w->sealed = malloc(SEG_SEALED)) == NULL)
        goto err;
    if ((w->aead = pqv_aead_new(suite, key)) == NULL)
        goto err;
    return w;

err:
    pqv_stream_writer_free(w);
    return NULL;
}

/* Seal ${n} bytes at ${pt} as the next segment into w->sealed. */
static int
writer_seal(pqv_stream_writer *w, const uint8_t *pt, size_t n, int last)
{
    uint8_t nonce[PQV_AEAD_NONCE_BYTES];

    if (w->counter == UINT64_MAX)
        return error_set(PQV_E_INVAL, NULL, "STREAM counter exhausted");
    segment_nonce(nonce, w->counter++, last);
    return pqv_aead_seal(w->aead, nonce, w->ad, w->adlen, pt, n, w->sealed);
}

/* Seal ${n} bytes at ${pt} as the next segment and hand it to the sink. */
static int
writer_emit(pqv_stream_writer *w, const uint8_t *pt, size_t n, int last)
{
    int rc;

    if ((rc = writer_seal(w, pt, n, last)) != 0)
        return rc;
    return w->sink(w->sink_ctx, w->sealed, n + PQV_AEAD_TAG_BYTES);
}

int
pqv_stream_writer_write(pqv_stream_writer *w, const uint8_t *buf, size_t len)
{
    int rc;

    if (w == NULL || w->state != 0)
        return PQV_E_INVAL;
    while (len > 0) {
        /* More data follows a held segment or a full pending one: neither
         * is the last one. */
        if (w->held) {
            if ((rc = w->sink(w->sink_ctx, w->sealed, SEG_SEALED)) != 0)
                goto fail;
            w->held = 0;
        }
        if (w->npending == SEG) {
            if ((rc = writer_emit(w, w->pending, SEG, 0)) != 0)
                goto fail;
            w->npending = 0;
        }
        /* Seal whole segments straight from the caller's buffer.  Whether
         * the last of them ends the stream is not known yet: it is sealed
         * as a non-final segment and held back; the next write passes it
         * on, and pqv_stream_writer_finish() re-seals it as the final one
         * (the held ciphertext is never released). */
        if (w->npending == 0 && len >= SEG) {
            if ((rc = writer_seal(w, buf, SEG, 0)) != 0)
                goto fail;
            buf += SEG;
            len -= SEG;
            if (len == 0)
                w->held = 1;
            else if ((rc = w->sink(w->sink_ctx, w->sealed, SEG_SEALED)) != 0)
                goto fail;
            continue;
        }
        size_t take = SEG - w->npending < len ? SEG - w->npending : len;
        memcpy(w->pending + w->npending, buf, take);
        w->npending += take;
        buf += take;
        len -= take;
    }
    return 0;

fail:
    w->state = -1;
    return rc;
}

int
pqv_stream_writer_finish(pqv_stream_writer *w)
{
    int rc;

    if (w == NULL || w->state != 0)
        return PQV_E_INVAL;
    if (w->held) {
        /* The held segment is the final one: recover its plaintext and
         * seal it again under the same counter with the final flag. */
        uint8_t nonce[PQV_AEAD_NONCE_BYTES];
        segment_nonce(nonce, --w->counter, 0);
        if ((rc = pqv_aead_open(w->aead, nonce, w->ad, w->adlen, w->sealed, SEG_SEALED,
                 w->pending)) != 0) {
            w->state = -1;
            return rc;
        }
        w->held = 0;
        w->npending = SEG;
    }
    rc = writer_emit(w, w->pending, w->npending, 1);
    w->state = rc == 0 ? 1 : -1;
    return rc;
}

void
pqv_stream_writer_free(pqv_stream_writer *w)
{
    if (w == NULL)
        return;
    pqv_aead_free(w->aead);
    if (w->pending != NULL) {
        util_wipe(w->pending, SEG);
        free(w->pending);
    }
    free(w->sealed);
    free(w->ad);
    free(w);
}

/* ---- Streaming reader ---------------------------------------------------- */

struct pqv_stream_reader {
    pqv_aead *aead;
    uint8_t *ad;
    size_t adlen;
    pqv_stream_source source;
    void *source_ctx;
    uint64_t counter;
    uint8_t *in;        /* ciphertext: one segment plus one look-ahead byte */
    size_t nin;
    int source_eof;
    uint8_t *plain;     /* authenticated plaintext of the current segment */
    size_t nplain, plain_pos;
    int state;          /* 0 reading, 1 final segment verified, -1 failed */
    int error;
};

pqv_stream_reader *
pqv_stream_reader_new(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t *ad, size_t adlen, pqv_stream_source source, void *source_ctx)
{
    pqv_stream_reader *r;

    if (source == NULL || (ad == NULL && adlen > 0))
        return NULL;
    if ((r = calloc(1, sizeof(*r))) == NULL)
        return NULL;
    r->source = source;
    r->source_ctx = source_ctx;
    r->adlen = adlen;
    if ((r->ad = malloc(adlen + 1)) == NULL)
        goto err;
    if (adlen > 0)
        memcpy(r->ad, ad, adlen);
    if ((r->in = malloc(SEG_SEALED + 1)) == NULL || (r->plain = malloc(SEG)) == NULL)
        goto err;
    if ((r->aead = pqv_aead_new(suite, key)) == NULL)
        goto err;
    return r;

err:
    pqv_stream_reader_free(r);
    return NULL;
}

/* Fill the input buffer to one segment plus one byte, or to end of input. */
static int
reader_fill(pqv_stream_reader *r)
{
    while (!r->source_eof && r->nin < SEG_SEALED + 1) {
        ssize_t got = r->source(r->source_ctx, r->in + r->nin, SEG_SEALED + 1 - r->nin);
        if (got < 0)
            return (int)got;
        if (got == 0)
            r->source_eof = 1;
        r->nin += (size_t)got;
    }
    return 0;
}

/* Authenticate and decrypt the next segment into ${dst}: r->plain, or the
 * caller's buffer when it has room for a whole segment (no copy).  Sets
 * *${got} to the segment's plaintext length. */
static int
reader_next_segment(pqv_stream_reader *r, uint8_t *dst, size_t *got)
{
    uint8_t nonce[PQV_AEAD_NONCE_BYTES];
    size_t n;
    int last, rc;

    if ((rc = reader_fill(r)) != 0)
        return rc;
    /* The look-ahead byte tells whether this segment is the final one. */
    last = r->nin <= SEG_SEALED;
    n = last ? r->nin : SEG_SEALED;
    if (n < PQV_AEAD_TAG_BYTES)
        return error_set(PQV_E_INTEGRITY, NULL, "STREAM ciphertext truncated");
    if (r->counter == UINT64_MAX)
        return error_set(PQV_E_INTEGRITY, NULL, "STREAM counter exhausted");
    segment_nonce(nonce, r->counter++, last);
    if ((rc = pqv_aead_open(r->aead, nonce, r->ad, r->adlen, r->in, n, dst)) != 0)
        return rc == PQV_E_INTEGRITY
            ? error_set(PQV_E_INTEGRITY, NULL, "STREAM segment %llu failed authentication", (unsigned long long)(r->counter - 1))
            : rc;
    *got = n - PQV_AEAD_TAG_BYTES;
    if (last) {
        r->nin = 0;
        r->state = 1;
    } else {
        r->in[0] = r->in[SEG_SEALED];
        r->nin = 1;
    }
    return 0;
}

ssize_t
pqv_stream_reader_read(pqv_stream_reader *r, uint8_t *buf, size_t len)
{
    size_t done = 0;
    int rc;

    if (r == NULL)
        return PQV_E_INVAL;
    if (r->state < 0)
        return r->error;
    while (done < len) {
        if (r->plain_pos == r->nplain) {
            if (r->state == 1)
                break;
            /* Room for a whole segment: decrypt straight into ${buf}. */
            int direct = len - done >= SEG;
            size_t got = 0;
            if ((rc = reader_next_segment(r, direct ? buf + done : r->plain, &got)) != 0) {
                r->state = -1;
                r->error = rc;
                /* Bytes already returned were authenticated; report the
                 * failure now rather than a short count. */
                return rc;
            }
            if (direct) {
                r->nplain = r->plain_pos = 0;
                done += got;
            } else {
                r->nplain = got;
                r->plain_pos = 0;
            }
            continue;
        }
        size_t take = r->nplain - r->plain_pos;
        if (take > len - done)
            take = len - done;
        memcpy(buf + done, r->plain + r->plain_pos, take);
        r->plain_pos += take;
        done += take;
    }
    return (ssize_t)done;
}

void
pqv_stream_reader_free(pqv_stream_reader *r)
{
    if (r == NULL)
        return;
    pqv_aead_free(r->aead);
    if (r->plain != NULL) {
        util_wipe(r->plain, SEG);
        free(r->plain);
    }
    free(r->in);
    free(r->ad);
    free(r);
}
