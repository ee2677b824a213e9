/*
 * vault/chunker.h: content-defined chunking, keyed so that chunk
 * boundaries reveal nothing of the key (chunker.c, docs/FORMAT.md section
 * 21, docs/SECURITY.md "Deduplication").
 *
 * The construction is "UHF-then-PRF" (Truong, Merz, Scarlata, Günther,
 * Paterson, "Breaking and Fixing Content-Defined Chunking", CCS 2025,
 * ePrint 2025/558: the Chk-PHTE family): at every position a rolling Rabin
 * fingerprint of the 64 bytes before it, modulo a secret irreducible
 * polynomial of degree 64, is encrypted with AES-128 under a secret key,
 * and only that output decides a cut.  Observed boundaries are then
 * pseudorandom functions of the content: unlike chunkers that cut on bits
 * of a keyed rolling hash (restic's, borg 1's, Tarsnap's), they give an
 * observer no equations about the key.  Sizes follow FastCDC's normalised
 * chunking: no cut before CHUNK_MIN, a stricter condition up to the
 * normal size and a looser one after it, a forced cut at CHUNK_MAX.
 */
#ifndef PQV_VAULT_CHUNKER_H
#define PQV_VAULT_CHUNKER_H

#include <stddef.h>
#include <stdint.h>

/* Chunk sizes (bytes of plaintext): docs/BENCHMARKS.md measures them. */
#define CHUNK_MIN (128u << 10)
#define CHUNK_NORMAL (512u << 10)
#define CHUNK_MAX (2u << 20)
#define CHUNK_WINDOW 64             /* bytes the fingerprint covers */
#define CHUNKER_KEY_BYTES 32

struct chunker;

/* chunker_new(out, key): a chunker keyed by ${key} (32 secret bytes: the
 * Rabin polynomial and the AES key are derived from it).  Its setup runs in
 * time independent of the key. */
int chunker_new(struct chunker **out, const uint8_t key[CHUNKER_KEY_BYTES]);
void chunker_free(struct chunker *c);

/* chunker_next(c, data, len, final, cut): the length of the chunk that
 * starts at ${data}: *${cut} = the first boundary in data[0, len) (at most
 * CHUNK_MAX), and 0 returned; with ${final} (no more data follows) the
 * whole rest is a chunk when no boundary is found.  *${cut} = 0 when more
 * data is needed to decide (len < CHUNK_MAX and not final). */
int chunker_next(struct chunker *c, const uint8_t *data, size_t len, int final, size_t *cut);

/* chunker_polynomial(c): the secret modulus (its low 64 bits; x^64 is
 * implicit), for the tests and the format's test vectors. */
uint64_t chunker_polynomial(const struct chunker *c);

#endif
