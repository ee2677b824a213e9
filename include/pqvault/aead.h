/*
 * pqvault/aead.h: the two AEAD suites (AES-256-GCM, ChaCha20-Poly1305, both
 * through OpenSSL) and the STREAM construction over them.
 *
 * STREAM cuts a plaintext into 64 KiB segments.  Segment i (from 0) is sealed
 * with nonce = i as an 11-byte big-endian counter || a last-segment flag byte
 * (1 for the final segment, 0 otherwise), and the caller's associated data.
 * A plaintext of length n has max(1, ceil(n / 65536)) segments; only an empty
 * plaintext has an empty (final) segment.  Reordering, truncation,
 * extension and splicing are therefore detected.  A STREAM key must be used
 * for one stream only: derive it per object (see pqv_kdf in the vault).
 */
#ifndef PQVAULT_AEAD_H
#define PQVAULT_AEAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pqvault/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PQV_AEAD_KEY_BYTES 32
#define PQV_AEAD_NONCE_BYTES 12
#define PQV_AEAD_TAG_BYTES 16

/* Suite identifiers as stored in files.  0 is never a valid suite. */
enum pqv_aead_suite {
    PQV_AEAD_AES256GCM = 1,
    PQV_AEAD_CHACHA20POLY1305 = 2
};

#define PQV_STREAM_SEGMENT_BYTES 65536u
#define PQV_STREAM_SEGMENT_SEALED (PQV_STREAM_SEGMENT_BYTES + PQV_AEAD_TAG_BYTES)

/* pqv_aead_name(suite): "AES-256-GCM", "ChaCha20-Poly1305", or NULL. */
PQV_API const char *pqv_aead_name(int suite);

/* pqv_aead_by_name(name): the suite named ${name} (case-insensitive), or 0. */
PQV_API int pqv_aead_by_name(const char *name);

/* pqv_aead_auto(): AES-256-GCM if the CPU has AES and carry-less multiply
 * instructions, ChaCha20-Poly1305 otherwise. */
PQV_API int pqv_aead_auto(void);

/* A keyed AEAD context: the key schedule is set once, nonces per message. */
typedef struct pqv_aead pqv_aead;

/* pqv_aead_new(suite, key): a context for ${suite} under the 32-byte ${key},
 * or NULL (unknown suite or allocation failure). */
PQV_API pqv_aead *pqv_aead_new(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES]);

/* pqv_aead_free(a): wipe and free ${a}; NULL is a no-op. */
PQV_API void pqv_aead_free(pqv_aead *a);

/* pqv_aead_seal(a, nonce, ad, adlen, pt, ptlen, out): write ptlen + 16
 * bytes (ciphertext || tag) to ${out}; ${out} may equal ${pt}. */
PQV_API int pqv_aead_seal(pqv_aead *a, const uint8_t nonce[PQV_AEAD_NONCE_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *pt, size_t ptlen,
    uint8_t *out) PQV_WARN_UNUSED;

/* pqv_aead_open(a, nonce, ad, adlen, ct, ctlen, out): verify and decrypt
 * ${ctlen} >= 16 bytes into ctlen - 16 bytes at ${out} (may equal ${ct}).
 * Returns PQV_E_INTEGRITY (and wipes ${out}) if the tag does not verify. */
PQV_API int pqv_aead_open(pqv_aead *a, const uint8_t nonce[PQV_AEAD_NONCE_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *ct, size_t ctlen,
    uint8_t *out) PQV_WARN_UNUSED;

/* One-shot forms of the above. */
PQV_API int pqv_aead_seal1(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t nonce[PQV_AEAD_NONCE_BYTES], const uint8_t *ad, size_t adlen,
    const uint8_t *pt, size_t ptlen, uint8_t *out) PQV_WARN_UNUSED;
PQV_API int pqv_aead_open1(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t nonce[PQV_AEAD_NONCE_BYTES], const uint8_t *ad, size_t adlen,
    const uint8_t *ct, size_t ctlen, uint8_t *out) PQV_WARN_UNUSED;

/* pqv_stream_sealed_size(ptlen): the STREAM ciphertext size for ${ptlen}. */
PQV_API uint64_t pqv_stream_sealed_size(uint64_t ptlen);

/* pqv_stream_opened_size(ctlen, ptlen): the plaintext size of a STREAM
 * ciphertext of ${ctlen} bytes, or PQV_E_INTEGRITY if no plaintext seals to
 * exactly that size. */
PQV_API int pqv_stream_opened_size(uint64_t ctlen, uint64_t *ptlen) PQV_WARN_UNUSED;

/* pqv_stream_seal(suite, key, ad, adlen, pt, ptlen, out): seal a whole
 * buffer; ${out} holds pqv_stream_sealed_size(ptlen) bytes. */
PQV_API int pqv_stream_seal(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *pt, size_t ptlen,
    uint8_t *out) PQV_WARN_UNUSED;

/* pqv_stream_open(suite, key, ad, adlen, ct, ctlen, out, ptlen): verify and
 * open a whole STREAM ciphertext into ${out} (size from
 * pqv_stream_opened_size).  On failure ${out} is wiped and PQV_E_INTEGRITY
 * returned. */
PQV_API int pqv_stream_open(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *ct, size_t ctlen,
    uint8_t *out, size_t *ptlen) PQV_WARN_UNUSED;

/* pqv_stream_open_range(suite, key, ad, adlen, ct, ctlen, first, ptotal,
 * out, ptlen): verify and open segments ${first}, ${first} + 1, ... of a
 * STREAM ciphertext whose whole plaintext is ${ptotal} bytes, given only
 * those segments (${ctlen} bytes, from the start of segment ${first}).
 * Each segment is authenticated at its position and as last or not, so
 * the range opens only as a part of that stream; ${ptotal} must itself be
 * authenticated (in ${ad}, as a chunk's blob has it).  The range must end
 * at a segment's end.  On failure ${out} is wiped and PQV_E_INTEGRITY
 * returned. */
PQV_API int pqv_stream_open_range(int suite, const uint8_t key[PQV_AEAD_KEY_BYTES],
    const uint8_t *ad, size_t adlen, const uint8_t *ct, size_t ctlen, uint64_t first,
    uint64_t ptotal, uint8_t *out, size_t *ptlen) PQV_WARN_UNUSED;

/*
 * Streaming API.  A writer seals what is written to it and passes sealed
 * segments to ${sink}; a reader pulls ciphertext from ${source} and returns
 * only authenticated plaintext.  Callbacks return 0 on success (sink) or the
 * number of bytes read, 0 at end of input, or a negative PQV_E_* (source).
 */
typedef int (*pqv_stream_sink)(void *ctx, const uint8_t *buf, size_t len);
typedef ssize_t (*pqv_stream_source)(void *ctx, uint8_t *buf, size_t len);

typedef struct pqv_stream_writer pqv_stream_writer;
typedef struct pqv_stream_reader pqv_stream_reader;

PQV_API pqv_stream_writer *pqv_stream_writer_new(int suite,
    const uint8_t key[PQV_AEAD_KEY_BYTES], const uint8_t *ad, size_t adlen,
    pqv_stream_sink sink, void *sink_ctx);
/* Write ${len} bytes of plaintext. */
PQV_API int pqv_stream_writer_write(pqv_stream_writer *w, const uint8_t *buf,
    size_t len) PQV_WARN_UNUSED;
/* Seal the final segment.  No write may follow. */
PQV_API int pqv_stream_writer_finish(pqv_stream_writer *w) PQV_WARN_UNUSED;
PQV_API void pqv_stream_writer_free(pqv_stream_writer *w);

PQV_API pqv_stream_reader *pqv_stream_reader_new(int suite,
    const uint8_t key[PQV_AEAD_KEY_BYTES], const uint8_t *ad, size_t adlen,
    pqv_stream_source source, void *source_ctx);
/* Read up to ${len} bytes of authenticated plaintext: the number of bytes,
 * 0 once the final segment has been verified and consumed, or a negative
 * PQV_E_* (PQV_E_INTEGRITY for any forgery, truncation or extension). */
PQV_API ssize_t pqv_stream_reader_read(pqv_stream_reader *r, uint8_t *buf, size_t len);
PQV_API void pqv_stream_reader_free(pqv_stream_reader *r);

#ifdef __cplusplus
}
#endif
#endif
