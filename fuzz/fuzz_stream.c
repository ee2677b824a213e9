/*
 * fuzz_stream.c: libFuzzer target for STREAM opening (pqv_stream_open, the
 * streaming reader pqv_stream_reader_*) and object_open, under a fixed key.
 * The first byte picks the mode, the second the reader's chunk size:
 *   mode 0: the rest is a STREAM ciphertext: open it in memory and with the
 *           reader (both must agree: authentication cannot be forged, so
 *           both fail), as a range of segments of a stream of a chosen
 *           length (must fail too), and as an object (8-byte header first);
 *   mode 1: the rest, repeated to a length the third byte scales (up to
 *           ~250 KiB, several segments), is a plaintext: seal it, open it
 *           both ways (must round-trip), open a range of its segments
 *           alone (must give that part), then cut or extend the ciphertext
 *           at a chosen point (must fail both ways, and as a range).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "pqvault/aead.h"
#include "vault/format1.h"
#include "vault/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t key[32] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };
static const uint8_t ad[] = "fuzz associated data";

struct src {
    const uint8_t *p;
    size_t left, chunk;
};

static ssize_t
source(void *ctx, uint8_t *buf, size_t len)
{
    struct src *s = ctx;
    size_t n = len < s->chunk ? len : s->chunk;

    if (n > s->left)
        n = s->left;
    memcpy(buf, s->p, n);
    s->p += n;
    s->left -= n;
    return (ssize_t)n;
}

/* read_all: the reader's plaintext into ${out} (capacity ${cap}, at least
 * the ciphertext's length + 1, which no plaintext reaches); its length, or
 * -1 on any error. */
static long
read_all(const uint8_t *ct, size_t len, size_t chunk, uint8_t *out, size_t cap)
{
    struct src s = { ct, len, chunk };
    pqv_stream_reader *r = pqv_stream_reader_new(PQV_AEAD_CHACHA20POLY1305, key, ad, sizeof(ad),
        source, &s);
    size_t got = 0;
    long rc = -1;

    if (r == NULL)
        abort();
    for (;;) {
        size_t want = cap - got < chunk ? cap - got : chunk;
        if (want == 0)
            abort(); /* more plaintext than ciphertext */
        ssize_t n = pqv_stream_reader_read(r, out + got, want);
        if (n < 0)
            break;
        if (n == 0) {
            rc = (long)got;
            break;
        }
        got += (size_t)n;
    }
    pqv_stream_reader_free(r);
    return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t chunk, ptlen;
    uint8_t *pt, *ct, *out;

    if (size < 3)
        return 0;
    chunk = (size_t)data[1] * 509 + 1;
    if ((data[0] & 1) == 0) {
        const uint8_t *c = data + 2;
        size_t clen = size - 2, got;
        uint64_t plen;
        if ((out = malloc(clen + 1)) == NULL)
            return 0;
        int rc = pqv_stream_open(PQV_AEAD_CHACHA20POLY1305, key, ad, sizeof(ad), c, clen, out, &got);
        long n = read_all(c, clen, chunk, out, clen + 1);
        if (rc == 0 || n >= 0)
            abort(); /* a forgery */
        if (pqv_stream_open_range(PQV_AEAD_CHACHA20POLY1305, key, ad, sizeof(ad), c, clen,
                data[1] % 8, (uint64_t)data[1] * 40000 + clen, out, &got) == 0)
            abort();
        if (clen >= OBJECT_HEADER_BYTES &&
            pqv_stream_opened_size(clen - OBJECT_HEADER_BYTES, &plen) == 0 &&
            object_open(PQV_AEAD_CHACHA20POLY1305, key, c, 0, c, clen, out, (size_t)plen) == 0)
            abort();
        free(out);
        return 0;
    }
    ptlen = ((size_t)data[2] * 1000 + size) % 250000;
    if ((pt = malloc(ptlen + 1)) == NULL)
        return 0;
    for (size_t i = 0; i < ptlen; i++)
        pt[i] = (size > 3 ? data[3 + i % (size - 3)] : 0) ^ (uint8_t)(i >> 16);
    size_t ctlen = (size_t)pqv_stream_sealed_size(ptlen);
    ct = malloc(ctlen + 1);
    out = malloc(ctlen + 2);
    if (ct == NULL || out == NULL)
        abort();
    size_t got;
    uint64_t back;
    if (pqv_stream_seal(PQV_AEAD_CHACHA20POLY1305, key, ad, sizeof(ad), pt, ptlen, ct) != 0 ||
        pqv_stream_opened_size(ctlen, &back) != 0 || back != ptlen ||
        pqv_stream_open(PQV_AEAD_CHACHA20POLY1305, key, ad, sizeof(ad), ct, ctlen, out, &got) != 0 ||
        got != ptlen || memcmp(out, pt, ptlen) != 0)
        abort();
    memset(out, 0, ptlen);
    if (read_all(ct, ctlen, chunk, out, ctlen + 1) != (long)ptlen || memcmp(out, pt, ptlen) != 0)
        abort();
    /* Segments from a chosen one to the end, and that one alone. */
    {
        size_t nseg = ptlen == 0 ? 1 : (ptlen + PQV_STREAM_SEGMENT_BYTES - 1) / PQV_STREAM_SEGMENT_BYTES;
        size_t first = data[2] % nseg, from = first * PQV_STREAM_SEGMENT_SEALED;
        size_t one = first + 1 == nseg ? ctlen - from : PQV_STREAM_SEGMENT_SEALED;
        if (pqv_stream_open_range(PQV_AEAD_CHACHA20POLY1305, key, ad, sizeof(ad), ct + from,
                ctlen - from, first, ptlen, out, &got) != 0 ||
            got != ptlen - first * PQV_STREAM_SEGMENT_BYTES ||
            memcmp(out, pt + first * PQV_STREAM_SEGMENT_BYTES, got) != 0)
            abort();
        if (pqv_stream_open_range(PQV_AEAD_CHACHA20POLY1305, key, ad, sizeof(ad), ct + from, one,
                first, ptlen, out, &got) != 0 ||
            got != one - PQV_AEAD_TAG_BYTES ||
            memcmp(out, pt + first * PQV_STREAM_SEGMENT_BYTES, got) != 0)
            abort();
        /* Short by a byte: never opens. */
        if (pqv_stream_open_range(PQV_AEAD_CHACHA20POLY1305, key, ad, sizeof(ad), ct + from,
                one - 1, first, ptlen, out, &got) == 0)
            abort();
    }
    /* Cut at a chosen point (never the full length), or extend by one. */
    size_t cut = (size_t)data[1] * 4099 % (ctlen + 1);
    if (cut == ctlen) {
        ct[ctlen] = 0;
        cut = ctlen + 1;
    }
    if (pqv_stream_open(PQV_AEAD_CHACHA20POLY1305, key, ad, sizeof(ad), ct, cut, out, &got) == 0 ||
        read_all(ct, cut, chunk, out, ctlen + 2) >= 0)
        abort();
    free(pt);
    free(ct);
    free(out);
    return 0;
}
