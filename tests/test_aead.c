/*
 * test_aead.c: AEAD suites and STREAM: round trips at the segment
 * boundaries, and every kind of tampering rejected.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "harness.h"
#include "pqvault/aead.h"
#include "util/util.h"

static const size_t sizes[] = { 0, 1, 65535, 65536, 65537, 4u << 20 };
static const int suites[] = { PQV_AEAD_AES256GCM, PQV_AEAD_CHACHA20POLY1305 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint8_t *
random_buf(size_t n)
{
    uint8_t *p = malloc(n + 1);
    if (p != NULL && util_random(p, n + 1) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

static void
test_names_and_auto(void)
{
    CHECK(strcmp(pqv_aead_name(PQV_AEAD_AES256GCM), "AES-256-GCM") == 0);
    CHECK(strcmp(pqv_aead_name(PQV_AEAD_CHACHA20POLY1305), "ChaCha20-Poly1305") == 0);
    CHECK(pqv_aead_name(0) == NULL && pqv_aead_name(3) == NULL);
    CHECK_EQ_INT(pqv_aead_by_name("aes-256-gcm"), PQV_AEAD_AES256GCM);
    CHECK_EQ_INT(pqv_aead_by_name("ChaCha20-Poly1305"), PQV_AEAD_CHACHA20POLY1305);
    CHECK_EQ_INT(pqv_aead_by_name("AES-128-GCM"), 0);
    int a = pqv_aead_auto();
    CHECK(a == PQV_AEAD_AES256GCM || a == PQV_AEAD_CHACHA20POLY1305);
}

/* RFC 8439 section 2.8.2 AEAD test vector (ChaCha20-Poly1305). */
static void
test_chacha_rfc8439(void)
{
    uint8_t key[32], nonce[12], ad[12], out[114 + 16], back[114];
    const char *pt = "Ladies and Gentlemen of the class of '99: If I could offer you "
                     "only one tip for the future, sunscreen would be it.";
    uint8_t tag[16];

    CHECK(util_hex_decode(key, 32, "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f") == 0);
    CHECK(util_hex_decode(nonce, 12, "070000004041424344454647") == 0);
    CHECK(util_hex_decode(ad, 12, "50515253c0c1c2c3c4c5c6c7") == 0);
    CHECK(util_hex_decode(tag, 16, "1ae10b594f09e26a7e902ecbd0600691") == 0);
    REQUIRE(strlen(pt) == 114);
    CHECK(pqv_aead_seal1(PQV_AEAD_CHACHA20POLY1305, key, nonce, ad, 12,
              (const uint8_t *)pt, 114, out) == 0);
    CHECK_MEM(out + 114, tag, 16);
    CHECK(pqv_aead_open1(PQV_AEAD_CHACHA20POLY1305, key, nonce, ad, 12, out, 130, back) == 0);
    CHECK_MEM(back, pt, 114);
    out[0] ^= 1;
    CHECK_EQ_INT(pqv_aead_open1(PQV_AEAD_CHACHA20POLY1305, key, nonce, ad, 12, out, 130, back),
        PQV_E_INTEGRITY);
}

/* NIST GCM test case 16-like check: AES-256-GCM of a known vector
 * (McGrew & Viega test case 14: zero key, zero IV, 16 zero bytes). */
static void
test_gcm_known(void)
{
    uint8_t key[32] = { 0 }, nonce[12] = { 0 }, pt[16] = { 0 }, out[32], expect[32];

    CHECK(util_hex_decode(expect, 32,
              "cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919") == 0);
    CHECK(pqv_aead_seal1(PQV_AEAD_AES256GCM, key, nonce, NULL, 0, pt, 16, out) == 0);
    CHECK_MEM(out, expect, 32);
}

static void
test_stream_sizes(void)
{
    CHECK_EQ_INT(pqv_stream_sealed_size(0), 16);
    CHECK_EQ_INT(pqv_stream_sealed_size(1), 17);
    CHECK_EQ_INT(pqv_stream_sealed_size(65536), 65552);
    CHECK_EQ_INT(pqv_stream_sealed_size(65537), 65536 + 1 + 32);
    for (size_t i = 0; i < NSIZES; i++) {
        uint64_t pt;
        CHECK(pqv_stream_opened_size(pqv_stream_sealed_size(sizes[i]), &pt) == 0);
        CHECK_EQ_INT(pt, sizes[i]);
    }
    uint64_t pt;
    CHECK(pqv_stream_opened_size(0, &pt) != 0);
    CHECK(pqv_stream_opened_size(15, &pt) != 0);
    CHECK(pqv_stream_opened_size(65552 + 16, &pt) != 0); /* empty non-first segment */
    CHECK(pqv_stream_opened_size(65552 + 5, &pt) != 0);
}

/* In-memory round trip and the whole tampering matrix for one size. */
static void
stream_matrix(int suite, size_t n)
{
    uint8_t key[32], key2[32];
    uint8_t *pt = random_buf(n), *ct, *ct2, *back, *mut;
    size_t ctlen = (size_t)pqv_stream_sealed_size(n), got;
    const uint8_t ad[] = "object-ad";

    REQUIRE(pt != NULL);
    REQUIRE(util_random(key, 32) == 0 && util_random(key2, 32) == 0);
    ct = malloc(ctlen);
    ct2 = malloc(ctlen);
    /* Room for the largest plaintext an extended ciphertext could claim. */
    back = malloc(n + 2 * PQV_STREAM_SEGMENT_SEALED);
    mut = malloc(ctlen + PQV_STREAM_SEGMENT_SEALED);
    REQUIRE(ct && ct2 && back && mut);
    CHECK(pqv_stream_seal(suite, key, ad, sizeof(ad), pt, n, ct) == 0);
    CHECK(pqv_stream_open(suite, key, ad, sizeof(ad), ct, ctlen, back, &got) == 0);
    CHECK_EQ_INT(got, n);
    CHECK(n == 0 || memcmp(back, pt, n) == 0);

    /* Ranges of one or two segments open alone, each at its position and
     * as last or not: never moved, never as part of a stream of another
     * length, never ending inside a segment. */
    {
        size_t nsegs = n == 0 ? 1 : (n + PQV_STREAM_SEGMENT_BYTES - 1) / PQV_STREAM_SEGMENT_BYTES;
        for (size_t s = 0; s < nsegs; s++) {
            for (size_t k = 1; k <= 2 && s + k <= nsegs; k++) {
                size_t from = s * PQV_STREAM_SEGMENT_SEALED;
                size_t to = s + k == nsegs ? ctlen : (s + k) * PQV_STREAM_SEGMENT_SEALED;
                size_t pfrom = s * PQV_STREAM_SEGMENT_BYTES;
                CHECK(pqv_stream_open_range(suite, key, ad, sizeof(ad), ct + from, to - from, s, n,
                    back, &got) == 0);
                CHECK_EQ_INT(got, (to - from) - k * PQV_AEAD_TAG_BYTES);
                CHECK(got == 0 || memcmp(back, pt + pfrom, got) == 0);
                CHECK_EQ_INT(pqv_stream_open_range(suite, key, ad, sizeof(ad), ct + from,
                    to - from - 1, s, n, back, &got), PQV_E_INTEGRITY);
                if (s + 1 < nsegs)
                    CHECK_EQ_INT(pqv_stream_open_range(suite, key, ad, sizeof(ad), ct + from,
                        PQV_STREAM_SEGMENT_SEALED, s + 1, n, back, &got), PQV_E_INTEGRITY);
            }
        }
        /* The last segment claimed as a middle one (a longer stream), the
         * first as the last (a shorter one), a range past the end. */
        size_t lastfrom = (nsegs - 1) * PQV_STREAM_SEGMENT_SEALED;
        if (ctlen - lastfrom == PQV_STREAM_SEGMENT_SEALED)
            CHECK_EQ_INT(pqv_stream_open_range(suite, key, ad, sizeof(ad), ct + lastfrom,
                ctlen - lastfrom, nsegs - 1, n + 1, back, &got), PQV_E_INTEGRITY);
        if (nsegs >= 2)
            CHECK_EQ_INT(pqv_stream_open_range(suite, key, ad, sizeof(ad), ct,
                PQV_STREAM_SEGMENT_SEALED, 0, PQV_STREAM_SEGMENT_BYTES, back, &got), PQV_E_INTEGRITY);
        CHECK_EQ_INT(pqv_stream_open_range(suite, key, ad, sizeof(ad), ct, ctlen, nsegs, n, back,
            &got), PQV_E_INTEGRITY);
        CHECK_EQ_INT(pqv_stream_open_range(suite, key2, ad, sizeof(ad), ct + lastfrom,
            ctlen - lastfrom, nsegs - 1, n, back, &got), PQV_E_INTEGRITY);
    }

    /* Wrong key, wrong associated data, wrong suite. */
    CHECK_EQ_INT(pqv_stream_open(suite, key2, ad, sizeof(ad), ct, ctlen, back, &got), PQV_E_INTEGRITY);
    CHECK_EQ_INT(pqv_stream_open(suite, key, ad, sizeof(ad) - 1, ct, ctlen, back, &got), PQV_E_INTEGRITY);
    CHECK(pqv_stream_open(suite == 1 ? 2 : 1, key, ad, sizeof(ad), ct, ctlen, back, &got) != 0);

    /* Flipped bits: first byte, a tag byte, last byte, and one per segment. */
    size_t nseg = (ctlen + PQV_STREAM_SEGMENT_SEALED - 1) / PQV_STREAM_SEGMENT_SEALED;
    size_t positions[] = { 0, ctlen - 1, ctlen / 2, ctlen > 20 ? ctlen - 20 : 0 };
    for (size_t i = 0; i < sizeof(positions) / sizeof(positions[0]); i++) {
        memcpy(mut, ct, ctlen);
        mut[positions[i]] ^= 0x01;
        CHECK_EQ_INT(pqv_stream_open(suite, key, ad, sizeof(ad), mut, ctlen, back, &got), PQV_E_INTEGRITY);
    }
    for (size_t s = 0; s < nseg; s++) {
        memcpy(mut, ct, ctlen);
        mut[s * PQV_STREAM_SEGMENT_SEALED + 7 < ctlen ? s * PQV_STREAM_SEGMENT_SEALED + 7 : ctlen - 1] ^= 0x80;
        CHECK_EQ_INT(pqv_stream_open(suite, key, ad, sizeof(ad), mut, ctlen, back, &got), PQV_E_INTEGRITY);
    }
    /* Truncation at every segment boundary and by one byte. */
    for (size_t s = 1; s < nseg; s++)
        CHECK(pqv_stream_open(suite, key, ad, sizeof(ad), ct, s * PQV_STREAM_SEGMENT_SEALED, back, &got) != 0);
    CHECK(pqv_stream_open(suite, key, ad, sizeof(ad), ct, ctlen - 1, back, &got) != 0);
    /* Appended data: one byte, a whole copy of the last segment. */
    memcpy(mut, ct, ctlen);
    mut[ctlen] = 0;
    CHECK(pqv_stream_open(suite, key, ad, sizeof(ad), mut, ctlen + 1, back, &got) != 0);
    if (nseg >= 2) {
        size_t last = (nseg - 1) * PQV_STREAM_SEGMENT_SEALED;
        memcpy(mut, ct, ctlen);
        memcpy(mut + ctlen, ct + last, ctlen - last);
        CHECK(pqv_stream_open(suite, key, ad, sizeof(ad), mut, ctlen + (ctlen - last), back, &got) != 0);
        /* Swapped first two segments (when both are full). */
        if (nseg >= 3) {
            memcpy(mut, ct, ctlen);
            memcpy(mut, ct + PQV_STREAM_SEGMENT_SEALED, PQV_STREAM_SEGMENT_SEALED);
            memcpy(mut + PQV_STREAM_SEGMENT_SEALED, ct, PQV_STREAM_SEGMENT_SEALED);
            CHECK_EQ_INT(pqv_stream_open(suite, key, ad, sizeof(ad), mut, ctlen, back, &got), PQV_E_INTEGRITY);
            /* Duplicated first segment in place of the second. */
            memcpy(mut, ct, ctlen);
            memcpy(mut + PQV_STREAM_SEGMENT_SEALED, ct, PQV_STREAM_SEGMENT_SEALED);
            CHECK_EQ_INT(pqv_stream_open(suite, key, ad, sizeof(ad), mut, ctlen, back, &got), PQV_E_INTEGRITY);
        }
        /* A segment moved in from another stream of the same length. */
        CHECK(pqv_stream_seal(suite, key2, ad, sizeof(ad), pt, n, ct2) == 0);
        memcpy(mut, ct, ctlen);
        memcpy(mut, ct2, PQV_STREAM_SEGMENT_SEALED);
        CHECK_EQ_INT(pqv_stream_open(suite, key, ad, sizeof(ad), mut, ctlen, back, &got), PQV_E_INTEGRITY);
    }
    /* Zeroed ciphertext. */
    memset(mut, 0, ctlen);
    CHECK_EQ_INT(pqv_stream_open(suite, key, ad, sizeof(ad), mut, ctlen, back, &got), PQV_E_INTEGRITY);
    free(pt);
    free(ct);
    free(ct2);
    free(back);
    free(mut);
}

static void
test_stream_matrix(void)
{
    for (size_t s = 0; s < 2; s++)
        for (size_t i = 0; i < NSIZES; i++)
            stream_matrix(suites[s], sizes[i]);
}

/* Buffers for the streaming API. */
struct membuf {
    uint8_t *data;
    size_t len, cap, pos, chunk;
};

static int
membuf_sink(void *ctx, const uint8_t *buf, size_t len)
{
    struct membuf *m = ctx;
    if (m->len + len > m->cap)
        return PQV_E_IO;
    memcpy(m->data + m->len, buf, len);
    m->len += len;
    return 0;
}

static ssize_t
membuf_source(void *ctx, uint8_t *buf, size_t len)
{
    struct membuf *m = ctx;
    size_t n = m->len - m->pos;
    if (n > len)
        n = len;
    if (m->chunk && n > m->chunk)
        n = m->chunk;
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return (ssize_t)n;
}

/* Stream ${n} bytes through the writer in pieces of ${piece}; compare with
 * the in-memory form; read back in pieces of ${rpiece}. */
static void
streaming_round_trip(int suite, size_t n, size_t piece, size_t rpiece)
{
    uint8_t key[32];
    size_t ctlen = (size_t)pqv_stream_sealed_size(n);
    uint8_t *pt = random_buf(n), *ref = malloc(ctlen), *back = malloc(n + 1);
    struct membuf m = { malloc(ctlen), 0, ctlen, 0, 0 };
    pqv_stream_writer *w;
    pqv_stream_reader *r;
    size_t off = 0;

    REQUIRE(pt && ref && back && m.data);
    REQUIRE(util_random(key, 32) == 0);
    REQUIRE((w = pqv_stream_writer_new(suite, key, (const uint8_t *)"ad", 2, membuf_sink, &m)) != NULL);
    while (off < n) {
        size_t k = n - off < piece ? n - off : piece;
        CHECK(pqv_stream_writer_write(w, pt + off, k) == 0);
        off += k;
    }
    CHECK(pqv_stream_writer_finish(w) == 0);
    CHECK(pqv_stream_writer_write(w, pt, 1) != 0); /* no write after finish */
    pqv_stream_writer_free(w);
    CHECK(pqv_stream_seal(suite, key, (const uint8_t *)"ad", 2, pt, n, ref) == 0);
    CHECK_EQ_INT(m.len, ctlen);
    CHECK(memcmp(m.data, ref, ctlen) == 0);

    m.chunk = 1000; /* the source hands out short reads */
    REQUIRE((r = pqv_stream_reader_new(suite, key, (const uint8_t *)"ad", 2, membuf_source, &m)) != NULL);
    off = 0;
    for (;;) {
        ssize_t got = pqv_stream_reader_read(r, back + off, rpiece);
        REQUIRE(got >= 0);
        if (got == 0)
            break;
        off += (size_t)got;
        REQUIRE(off <= n);
    }
    CHECK_EQ_INT(off, n);
    CHECK(n == 0 || memcmp(back, pt, n) == 0);
    pqv_stream_reader_free(r);

    /* A truncated stream fails at its end, never returns 0 (clean end). */
    if (n > 0) {
        m.pos = 0;
        m.len = ctlen - 1;
        REQUIRE((r = pqv_stream_reader_new(suite, key, (const uint8_t *)"ad", 2, membuf_source, &m)) != NULL);
        ssize_t got;
        do
            got = pqv_stream_reader_read(r, back, 4096);
        while (got > 0);
        CHECK_EQ_INT(got, PQV_E_INTEGRITY);
        pqv_stream_reader_free(r);
        /* Cut at the last segment boundary. */
        if (n > PQV_STREAM_SEGMENT_BYTES) {
            m.pos = 0;
            m.len = ((ctlen - 1) / PQV_STREAM_SEGMENT_SEALED) * PQV_STREAM_SEGMENT_SEALED;
            REQUIRE((r = pqv_stream_reader_new(suite, key, (const uint8_t *)"ad", 2, membuf_source, &m)) != NULL);
            do
                got = pqv_stream_reader_read(r, back, 4096);
            while (got > 0);
            CHECK_EQ_INT(got, PQV_E_INTEGRITY);
            pqv_stream_reader_free(r);
        }
    }
    free(pt);
    free(ref);
    free(back);
    free(m.data);
}

static void
test_streaming_api(void)
{
    for (size_t s = 0; s < 2; s++)
        for (size_t i = 0; i < NSIZES; i++) {
            streaming_round_trip(suites[s], sizes[i], 65536, 65536);
            streaming_round_trip(suites[s], sizes[i], 7919, 333);
            streaming_round_trip(suites[s], sizes[i], 200000, 1 << 20);
            /* Whole segments per write (the last one held back until the
             * next write or finish) and reads of a segment and a byte. */
            streaming_round_trip(suites[s], sizes[i], 131072, 65537);
        }
}

static void
test_aead_bad_args(void)
{
    uint8_t key[32] = { 0 }, nonce[12] = { 0 }, buf[32];
    CHECK(pqv_aead_new(0, key) == NULL);
    CHECK(pqv_aead_new(9, key) == NULL);
    CHECK(pqv_aead_seal1(7, key, nonce, NULL, 0, buf, 0, buf) != 0);
    CHECK_EQ_INT(pqv_aead_open1(PQV_AEAD_AES256GCM, key, nonce, NULL, 0, buf, 15, buf), PQV_E_INTEGRITY);
    pqv_aead_free(NULL);
    pqv_stream_writer_free(NULL);
    pqv_stream_reader_free(NULL);
}

/* RFC 4231 test cases 1, 2, 4, 6 and 7 (HMAC-SHA-256): kdf_hmac_sha256 is
 * RFC 2104 written over SHA-256, keys longer than a block hashed first. */
static void
test_hmac_rfc4231(void)
{
    static const struct {
        const char *key_hex, *msg, *msg_hex, *mac_hex;
        size_t key_repeat;       /* the key's byte, that many times (key_hex: one byte) */
    } v[] = {
        { "0b", "Hi There", NULL,
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", 20 },
        { NULL, "what do ya want for nothing?", NULL,
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", 0 },
        { NULL, NULL, "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
          "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", 0 },
        { "aa", "Test Using Larger Than Block-Size Key - Hash Key First", NULL,
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", 131 },
        { "aa", "This is a test using a larger than block-size key and a larger than block-size "
                "data. The key needs to be hashed before being used by the HMAC algorithm.", NULL,
          "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", 131 },
    };
    uint8_t key[131], msg[64], mac[32], want[32];

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        const uint8_t *m = (const uint8_t *)v[i].msg;
        size_t keylen, msglen = v[i].msg != NULL ? strlen(v[i].msg) : 0;
        if (i == 1) {
            memcpy(key, "Jefe", 4);
            keylen = 4;
        } else if (i == 2) {
            for (keylen = 0; keylen < 25; keylen++)
                key[keylen] = (uint8_t)(keylen + 1);
        } else {
            uint8_t b;
            REQUIRE(util_hex_decode(&b, 1, v[i].key_hex) == 0);
            memset(key, b, v[i].key_repeat);
            keylen = v[i].key_repeat;
        }
        if (v[i].msg_hex != NULL) {
            msglen = strlen(v[i].msg_hex) / 2;
            REQUIRE(util_hex_decode(msg, msglen, v[i].msg_hex) == 0);
            m = msg;
        }
        REQUIRE(util_hex_decode(want, 32, v[i].mac_hex) == 0);
        CHECK(kdf_hmac_sha256(mac, key, keylen, m, msglen) == 0);
        CHECK_MEM(mac, want, 32);
    }
    /* An empty message. */
    REQUIRE(util_hex_decode(want, 32,
        "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad") == 0);
    CHECK(kdf_hmac_sha256(mac, NULL, 0, NULL, 0) == 0);
    CHECK_MEM(mac, want, 32);
}

TEST_MAIN(test_names_and_auto, test_hmac_rfc4231, test_chacha_rfc8439, test_gcm_known,
    test_stream_sizes, test_stream_matrix, test_streaming_api, test_aead_bad_args)
