/*
 * frodo.c: FrodoKEM (the standard salted variant of the FrodoKEM ISO
 * standardisation proposal; not eFrodoKEM), all six parameter sets, written
 * from the specification.  See include/pqvault/frodo.h for the API.
 *
 * Notation follows the specification: n x n matrix A generated from seedA
 * (AES-128 or SHAKE128), secret S (n x nbar, kept transposed as S^T),
 * errors E, E', E'', nbar = mbar = 8, q = 2^D, B bits encoded per entry.
 *
 * A is never materialised: it is generated FRODO_ROW_BLOCK rows at a time
 * and consumed immediately, which keeps the working set in L1/L2 cache.
 * Every operation allocates one scratch area, and wipes and frees it on
 * every path.
 */
#include "pqvault/frodo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "crypto/cpu.h"
#include "crypto/frodo_internal.h"
#include "util/util.h"

/* Rows of A generated per batch (every n is a multiple of 8). */
#define FRODO_ROW_BLOCK 8
/* Domain separators of the specification for the two SHAKE(seedSE) uses. */
#define FRODO_DS_KEYGEN 0x5F
#define FRODO_DS_ENCAPS 0x96
#define FRODO_SEEDA_BYTES 16
#define FRODO_MAX_SEC 32  /* largest len_s = len_k = len_mu = len_pkh */
#define FRODO_MAX_SEEDSE 64
#define FRODO_Z_BYTES 16   /* len_z = 128 bits for every set */

struct pqv_frodo {
    const char *name;
    uint8_t id;
    uint16_t n;
    uint8_t logq;       /* D: q = 2^D */
    uint8_t extracted;  /* B: bits of mu per matrix entry */
    uint8_t sec;        /* len_s = len_mu = len_k = len_pkh = len_ss */
    uint8_t seedse;     /* len_seedSE */
    uint8_t salt;       /* len_salt */
    uint8_t aes;        /* 1: A from AES-128, 0: from SHAKE128 */
    uint8_t shake256;   /* hash: 1 SHAKE256, 0 SHAKE128 */
    uint8_t cdf_len;
    const uint16_t *cdf; /* CDF table T_chi of the error distribution */
};

static const uint16_t cdf_640[] = { 4643, 13363, 20579, 25843, 29227, 31145,
    32103, 32525, 32689, 32745, 32762, 32766, 32767 };
static const uint16_t cdf_976[] = { 5638, 15915, 23689, 28571, 31116, 32217,
    32613, 32731, 32760, 32766, 32767 };
static const uint16_t cdf_1344[] = { 9142, 23462, 30338, 32361, 32725,
    32765, 32767 };

#define CDF(t) (uint8_t)(sizeof(t) / sizeof((t)[0])), (t)
static const struct pqv_frodo frodo_sets[6] = {
    { "FrodoKEM-640-AES", 1, 640, 15, 2, 16, 32, 32, 1, 0, CDF(cdf_640) },
    { "FrodoKEM-640-SHAKE", 2, 640, 15, 2, 16, 32, 32, 0, 0, CDF(cdf_640) },
    { "FrodoKEM-976-AES", 3, 976, 16, 3, 24, 48, 48, 1, 1, CDF(cdf_976) },
    { "FrodoKEM-976-SHAKE", 4, 976, 16, 3, 24, 48, 48, 0, 1, CDF(cdf_976) },
    { "FrodoKEM-1344-AES", 5, 1344, 16, 4, 32, 64, 64, 1, 1, CDF(cdf_1344) },
    { "FrodoKEM-1344-SHAKE", 6, 1344, 16, 4, 32, 64, 64, 0, 1, CDF(cdf_1344) },
};
#undef CDF

/* ---- Parameter-set lookup and sizes ---------------------------------- */

const pqv_frodo *
pqv_frodo_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < 6; i++)
        if (strcmp(frodo_sets[i].name, name) == 0)
            return &frodo_sets[i];
    return NULL;
}

const char *
pqv_frodo_name(const pqv_frodo *p)
{
    return p == NULL ? NULL : p->name;
}

uint8_t
pqv_frodo_id(const pqv_frodo *p)
{
    return p == NULL ? 0 : p->id;
}

const pqv_frodo *
pqv_frodo_by_id(uint8_t id)
{
    if (id < 1 || id > 6)
        return NULL;
    return &frodo_sets[id - 1];
}

/* Bytes of Pack(M) for a matrix of ${entries} entries of D bits. */
static size_t
packed_bytes(const pqv_frodo *p, size_t entries)
{
    return entries * p->logq / 8;
}

size_t
pqv_frodo_publickey_bytes(const pqv_frodo *p)
{
    return p == NULL ? 0
                     : FRODO_SEEDA_BYTES + packed_bytes(p, (size_t)p->n * FRODO_NBAR);
}

size_t
pqv_frodo_secretkey_bytes(const pqv_frodo *p)
{
    /* s || seedA || b || S^T (16-bit entries) || pkh */
    return p == NULL ? 0
                     : p->sec + pqv_frodo_publickey_bytes(p) +
            2 * (size_t)p->n * FRODO_NBAR + p->sec;
}

size_t
pqv_frodo_ciphertext_bytes(const pqv_frodo *p)
{
    /* c1 = Pack(B') || c2 = Pack(C) || salt */
    return p == NULL ? 0
                     : packed_bytes(p, (size_t)p->n * FRODO_NBAR) +
            packed_bytes(p, FRODO_NBAR * FRODO_NBAR) + p->salt;
}

size_t
pqv_frodo_sharedsecret_bytes(const pqv_frodo *p)
{
    return p == NULL ? 0 : p->sec;
}

size_t
pqv_frodo_keypair_coins_bytes(const pqv_frodo *p)
{
    return p == NULL ? 0 : (size_t)p->sec + p->seedse + FRODO_Z_BYTES;
}

size_t
pqv_frodo_encaps_coins_bytes(const pqv_frodo *p)
{
    return p == NULL ? 0 : (size_t)p->sec + p->salt;
}

/* ---- Primitives: SHAKE, kernels --------------------------------------- */

static EVP_MD *md_shake128, *md_shake256;
static pthread_once_t md_once = PTHREAD_ONCE_INIT;

/* Fetch the SHAKE implementations once: an explicit fetch avoids the
 * implicit per-call fetch that EVP_shake128() costs under OpenSSL 3. */
static void
fetch_mds(void)
{
    md_shake128 = EVP_MD_fetch(NULL, "SHAKE128", NULL);
    md_shake256 = EVP_MD_fetch(NULL, "SHAKE256", NULL);
}

/* One input piece for shake(). */
struct chunk {
    const void *p;
    size_t n;
};

/*
 * shake(ctx, md, out, outlen, parts, nparts): out = SHAKE(concatenation of
 * the ${nparts} chunks, ${outlen} bytes) with ${md}, reusing ${ctx}.
 * Returns 0 or -1 if libcrypto fails.
 */
static int
shake(EVP_MD_CTX *ctx, const EVP_MD *md, uint8_t *out, size_t outlen,
    const struct chunk *parts, size_t nparts)
{
    if (EVP_DigestInit_ex2(ctx, md, NULL) != 1)
        return -1;
    for (size_t i = 0; i < nparts; i++)
        if (parts[i].n > 0 && EVP_DigestUpdate(ctx, parts[i].p, parts[i].n) != 1)
            return -1;
    return EVP_DigestFinalXOF(ctx, out, outlen) == 1 ? 0 : -1;
}

/*
 * The byte strings of the specification (SHAKE and AES output, A's entries)
 * are little-endian 16-bit words; on a little-endian host they can be used
 * in place.  Big-endian support would need a conversion in gen_rows() and
 * after each SHAKE into a word array.
 */
#if !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
#error "frodo.c: big-endian hosts are not supported"
#endif

/* Portable instances of the kernels in frodo_internal.h. */
static void
rows_dot_portable(uint16_t *out, const uint16_t *rows, size_t nrows, size_t n,
    const uint16_t *st)
{
    frodo_rows_dot_generic(out, rows, nrows, n, st);
}

static void
cols_axpy_portable(uint16_t *out, const uint16_t *coef, const uint16_t *rows,
    size_t nrows, size_t n)
{
    frodo_cols_axpy_generic(out, coef, rows, nrows, n);
}

static void
sample_portable(uint16_t *w, size_t count, const uint16_t *cdf, size_t cdf_len)
{
    frodo_sample_generic(w, count, cdf, cdf_len);
}

/* ---- Per-operation context -------------------------------------------- */

/* Everything one operation needs from libcrypto, created once per call. */
struct frodo_ctx {
    const pqv_frodo *p;
    const EVP_MD *hash;      /* SHAKE128 or SHAKE256 per parameter set */
    EVP_MD_CTX *md;          /* reusable hashing context */
    EVP_CIPHER_CTX *aes;     /* AES-128-ECB keyed with seedA (AES sets) */
    uint8_t *aes_in;         /* AES input blocks of FRODO_ROW_BLOCK rows */
    frodo_rows_dot_fn rows_dot;
    frodo_cols_axpy_fn cols_axpy;
    frodo_sample_fn sample;
    frodo_rows4_fn shake_x4; /* four-way SHAKE128 rows of A, or NULL */
};

/* ctx_init(c, p): set up ${c} for ${p}; 0 or -1 (then ctx_free is safe). */
static int
ctx_init(struct frodo_ctx *c, const pqv_frodo *p)
{
    memset(c, 0, sizeof(*c));
    c->p = p;
    if (pthread_once(&md_once, fetch_mds) != 0 || md_shake128 == NULL ||
        md_shake256 == NULL)
        return -1;
    c->hash = p->shake256 ? md_shake256 : md_shake128;
    if ((c->md = EVP_MD_CTX_new()) == NULL)
        return -1;
    if (cpu_has_avx2()) {
        c->rows_dot = frodo_avx2_rows_dot;
        c->cols_axpy = frodo_avx2_cols_axpy;
        c->sample = frodo_avx2_sample;
        c->shake_x4 = cpu_has_avx512() ? frodo_avx512_shake128_rows4
                                           : frodo_avx2_shake128_rows4;
    } else {
        c->rows_dot = rows_dot_portable;
        c->cols_axpy = cols_axpy_portable;
        c->sample = sample_portable;
    }
    return 0;
}

static void
ctx_free(struct frodo_ctx *c)
{
    EVP_MD_CTX_free(c->md);
    EVP_CIPHER_CTX_free(c->aes);
    free(c->aes_in); /* public data: counters only */
    c->md = NULL;
    c->aes = NULL;
    c->aes_in = NULL;
}

/* hash(c, out, outlen, parts, nparts): the parameter set's SHAKE. */
static int
hash(struct frodo_ctx *c, uint8_t *out, size_t outlen,
    const struct chunk *parts, size_t nparts)
{
    return shake(c->md, c->hash, out, outlen, parts, nparts);
}

/* ---- Generation of A -------------------------------------------------- */

/*
 * gen_begin(c, seedA): prepare generating A from ${seedA}; 0 or -1.  For
 * AES this keys the cipher and builds the input blocks of one batch of
 * rows, <i> || <j> || 0^96 (16-bit little-endian i and j), of which only
 * the row numbers i change from batch to batch.
 */
static int
gen_begin(struct frodo_ctx *c, const uint8_t *seedA)
{
    size_t n = c->p->n;

    if (!c->p->aes)
        return 0;
    if (c->aes == NULL) {
        if ((c->aes = EVP_CIPHER_CTX_new()) == NULL ||
            (c->aes_in = calloc(FRODO_ROW_BLOCK * n, sizeof(uint16_t))) == NULL)
            return -1;
        for (size_t r = 0; r < FRODO_ROW_BLOCK; r++)
            for (size_t j = 0; j < n; j += 8) {
                uint8_t *blk = c->aes_in + 2 * (r * n + j);
                blk[2] = (uint8_t)j;
                blk[3] = (uint8_t)(j >> 8);
            }
    }
    if (EVP_EncryptInit_ex(c->aes, EVP_aes_128_ecb(), NULL, seedA, NULL) != 1 ||
        EVP_CIPHER_CTX_set_padding(c->aes, 0) != 1)
        return -1;
    return 0;
}

/*
 * gen_rows(c, seedA, rows, first): write the FRODO_ROW_BLOCK rows from
 * ${first} of A (each n entries) to ${rows}.  AES: A[i][j..j+7] =
 * AES128_seedA(<i> || <j> || 0^96) read as eight little-endian 16-bit
 * entries; the whole batch is one ECB call.  SHAKE: row i =
 * SHAKE128(<i> || seedA, 2n bytes) with <i> 16-bit little-endian.
 */
static int
gen_rows(struct frodo_ctx *c, const uint8_t *seedA, uint16_t *rows,
    size_t first)
{
    size_t n = c->p->n;

    if (c->p->aes) {
        int outl = 0, len = (int)(FRODO_ROW_BLOCK * n * 2);
        for (size_t r = 0; r < FRODO_ROW_BLOCK; r++)
            for (size_t j = 0; j < n; j += 8) {
                uint8_t *blk = c->aes_in + 2 * (r * n + j);
                blk[0] = (uint8_t)(first + r);
                blk[1] = (uint8_t)((first + r) >> 8);
            }
        if (EVP_EncryptUpdate(c->aes, (uint8_t *)rows, &outl, c->aes_in, len) != 1 ||
            outl != len)
            return -1;
    } else if (c->shake_x4 != NULL) {
        for (size_t r = 0; r < FRODO_ROW_BLOCK; r += 4)
            c->shake_x4(rows + r * n, n, first + r, seedA);
    } else {
        for (size_t r = 0; r < FRODO_ROW_BLOCK; r++) {
            uint8_t idx[2] = { (uint8_t)(first + r), (uint8_t)((first + r) >> 8) };
            struct chunk in[2] = { { idx, 2 }, { seedA, FRODO_SEEDA_BYTES } };
            if (shake(c->md, md_shake128, (uint8_t *)(rows + r * n), 2 * n, in, 2) != 0)
                return -1;
        }
    }
    return 0;
}

/*
 * mul_add_as_plus_e(c, seedA, out, st, rows): out (n x 8, holding E on
 * entry) += A S, with S given transposed as ${st} (8 x n).  ${rows} is
 * scratch for FRODO_ROW_BLOCK rows of A.
 */
static int
mul_add_as_plus_e(struct frodo_ctx *c, const uint8_t *seedA, uint16_t *out,
    const uint16_t *st, uint16_t *rows)
{
    size_t n = c->p->n;

    if (gen_begin(c, seedA) != 0)
        return -1;
    for (size_t i = 0; i < n; i += FRODO_ROW_BLOCK) {
        if (gen_rows(c, seedA, rows, i) != 0)
            return -1;
        c->rows_dot(out + i * FRODO_NBAR, rows, FRODO_ROW_BLOCK, n, st);
    }
    return 0;
}

/*
 * mul_add_sa_plus_e(c, seedA, out, sp, rows): out (8 x n, holding E' on
 * entry) += S' A with S' = ${sp} (8 x n).  ${rows} as above.
 */
static int
mul_add_sa_plus_e(struct frodo_ctx *c, const uint8_t *seedA, uint16_t *out,
    const uint16_t *sp, uint16_t *rows)
{
    size_t n = c->p->n;
    uint16_t coef[FRODO_NBAR * FRODO_ROW_BLOCK];

    if (gen_begin(c, seedA) != 0)
        return -1;
    for (size_t i = 0; i < n; i += FRODO_ROW_BLOCK) {
        if (gen_rows(c, seedA, rows, i) != 0) {
            util_wipe(coef, sizeof(coef));
            return -1;
        }
        /* The block's columns of S', laid out as the kernel wants them. */
        for (size_t k = 0; k < FRODO_NBAR; k++)
            for (size_t r = 0; r < FRODO_ROW_BLOCK; r++)
                coef[k * FRODO_ROW_BLOCK + r] = sp[k * n + i + r];
        c->cols_axpy(out, coef, rows, FRODO_ROW_BLOCK, n);
    }
    util_wipe(coef, sizeof(coef));
    return 0;
}

/*
 * mul_add_sb_plus_e(p, out, sp, b): out (8 x 8, holding E'' on entry) +=
 * S' B with S' = ${sp} (8 x n) and B = ${b} (n x 8).
 */
static void
mul_add_sb_plus_e(const pqv_frodo *p, uint16_t *out, const uint16_t *sp,
    const uint16_t *b)
{
    size_t n = p->n;

    for (size_t i = 0; i < FRODO_NBAR; i++) {
        uint16_t acc[FRODO_NBAR];
        memcpy(acc, out + i * FRODO_NBAR, sizeof(acc));
        for (size_t j = 0; j < n; j++) {
            uint32_t s = sp[i * n + j];
            for (size_t k = 0; k < FRODO_NBAR; k++)
                acc[k] = (uint16_t)(acc[k] + s * b[j * FRODO_NBAR + k]);
        }
        memcpy(out + i * FRODO_NBAR, acc, sizeof(acc));
        util_wipe(acc, sizeof(acc));
    }
}

/* ---- Sampling, encoding, packing -------------------------------------- */

/* sample(c, w, count): frodo_sample_generic() with the set's CDF table. */
static void
sample(struct frodo_ctx *c, uint16_t *w, size_t count)
{
    c->sample(w, count, c->p->cdf, c->p->cdf_len);
}

/*
 * encode(p, out, mu): out (8 x 8) = Frodo.Encode(mu): entry e takes bits
 * e*B .. e*B+B-1 of ${mu} (a little-endian bit string), times q / 2^B.
 * Indices depend only on public positions, never on mu's value.
 */
static void
encode(const pqv_frodo *p, uint16_t *out, const uint8_t *mu)
{
    unsigned b = p->extracted;

    for (size_t e = 0; e < FRODO_NBAR * FRODO_NBAR; e++) {
        uint32_t v = 0;
        for (unsigned k = 0; k < b; k++) {
            size_t t = e * b + k;
            v |= (uint32_t)((mu[t >> 3] >> (t & 7)) & 1) << k;
        }
        out[e] = (uint16_t)(v << (p->logq - b));
    }
}

/*
 * decode(p, mu, in): mu = Frodo.Decode(in): each entry rounded to its B
 * most significant bits (mod q), written back as in encode().
 */
static void
decode(const pqv_frodo *p, uint8_t *mu, const uint16_t *in)
{
    unsigned b = p->extracted, d = p->logq;
    uint32_t qmask = (uint32_t)((1u << d) - 1);

    memset(mu, 0, (size_t)b * FRODO_NBAR * FRODO_NBAR / 8);
    for (size_t e = 0; e < FRODO_NBAR * FRODO_NBAR; e++) {
        uint32_t v = (((in[e] & qmask) + (1u << (d - b - 1))) >> (d - b)) &
            ((1u << b) - 1);
        for (unsigned k = 0; k < b; k++) {
            size_t t = e * b + k;
            mu[t >> 3] = (uint8_t)(mu[t >> 3] | (((v >> k) & 1) << (t & 7)));
        }
    }
}

/* pack(p, out, in, count): Frodo.Pack: the D low bits of every entry,
 * most significant bit first, concatenated. */
static void
pack(const pqv_frodo *p, uint8_t *out, const uint16_t *in, size_t count)
{
    unsigned d = p->logq;
    uint32_t acc = 0;
    unsigned bits = 0;

    for (size_t i = 0; i < count; i++) {
        acc = (acc << d) | (in[i] & ((1u << d) - 1));
        bits += d;
        while (bits >= 8) {
            bits -= 8;
            *out++ = (uint8_t)(acc >> bits);
        }
    }
    /* count * d is a multiple of 8 for every use, so nothing is left. */
}

/* unpack(p, out, in, count): Frodo.Unpack, the inverse of pack(). */
static void
unpack(const pqv_frodo *p, uint16_t *out, const uint8_t *in, size_t count)
{
    unsigned d = p->logq;
    uint32_t acc = 0;
    unsigned bits = 0;

    for (size_t i = 0; i < count; i++) {
        while (bits < d) {
            acc = (acc << 8) | *in++;
            bits += 8;
        }
        bits -= d;
        out[i] = (uint16_t)((acc >> bits) & ((1u << d) - 1));
    }
}

/* Load ${count} little-endian 16-bit words. */
static void
load_le16(uint16_t *out, const uint8_t *in, size_t count)
{
    for (size_t i = 0; i < count; i++)
        out[i] = (uint16_t)(in[2 * i] | (in[2 * i + 1] << 8));
}

/* Store ${count} 16-bit words little-endian. */
static void
store_le16(uint8_t *out, const uint16_t *in, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        out[2 * i] = (uint8_t)in[i];
        out[2 * i + 1] = (uint8_t)(in[i] >> 8);
    }
}

/* ---- Key generation ---------------------------------------------------- */

int
pqv_frodo_keypair_derand(const pqv_frodo *p, uint8_t *pk, uint8_t *sk,
    const uint8_t *coins)
{
    struct frodo_ctx c;
    size_t n, nn;
    uint16_t *work, *st, *e, *rows;
    int rc = -1;

    if (p == NULL || pk == NULL || sk == NULL || coins == NULL)
        return PQV_E_INVAL;
    n = p->n;
    nn = n * FRODO_NBAR;
    /* Scratch: S^T and E (sampled in place), then FRODO_ROW_BLOCK rows. */
    size_t words = 2 * nn + FRODO_ROW_BLOCK * n;
    if ((work = malloc(words * sizeof(uint16_t))) == NULL)
        return PQV_E_NOMEM;
    st = work;
    e = work + nn;
    rows = work + 2 * nn;
    if (ctx_init(&c, p) != 0)
        goto out;

    const uint8_t *s = coins, *seedse = coins + p->sec,
                  *z = coins + p->sec + p->seedse;
    uint8_t *seedA = pk;
    uint8_t ds = FRODO_DS_KEYGEN;

    /* seedA = SHAKE(z); (S^T, E) from SHAKE(0x5F || seedSE). */
    struct chunk zin[1] = { { z, FRODO_Z_BYTES } };
    struct chunk sein[2] = { { &ds, 1 }, { seedse, p->seedse } };
    if (hash(&c, seedA, FRODO_SEEDA_BYTES, zin, 1) != 0 ||
        hash(&c, (uint8_t *)work, 2 * nn * sizeof(uint16_t), sein, 2) != 0)
        goto out;
    sample(&c, work, 2 * nn);

    /* B = A S + E, accumulated into E; pk = seedA || Pack(B). */
    if (mul_add_as_plus_e(&c, seedA, e, st, rows) != 0)
        goto out;
    pack(p, pk + FRODO_SEEDA_BYTES, e, nn);

    /* sk = s || pk || S^T || pkh with pkh = SHAKE(pk). */
    size_t pklen = pqv_frodo_publickey_bytes(p);
    uint8_t *skp = sk;
    memcpy(skp, s, p->sec);
    skp += p->sec;
    memcpy(skp, pk, pklen);
    skp += pklen;
    store_le16(skp, st, nn);
    skp += 2 * nn;
    struct chunk pkin[1] = { { pk, pklen } };
    if (hash(&c, skp, p->sec, pkin, 1) != 0)
        goto out;
    rc = 0;
out:
    ctx_free(&c);
    util_wipe(work, words * sizeof(uint16_t));
    free(work);
    if (rc != 0) {
        /* Leave no partial secret key behind. */
        util_wipe(sk, pqv_frodo_secretkey_bytes(p));
        return PQV_E_CRYPTO;
    }
    return 0;
}

/* ---- Encryption core shared by Encaps and Decaps ---------------------- */

/* Scratch of the encryption core, in 16-bit words, for n. */
static size_t
enc_words(size_t n)
{
    /* S', E' (-> B'), E''(-> V -> C), B, rows of A, Encode(mu) */
    return 3 * n * FRODO_NBAR + 2 * FRODO_NBAR * FRODO_NBAR + FRODO_ROW_BLOCK * n;
}

/*
 * encrypt_core(c, seedA, b_packed, seedse, mu, work, bp, cc): compute from
 * seedSE the matrices S', E', E'' (SHAKE(0x96 || seedSE)), then
 * B' = S' A + E' into ${bp} (8 x n) and C = S' B + E'' + Encode(mu) into
 * ${cc} (8 x 8), with A from ${seedA} and B = Unpack(${b_packed}).  Both
 * results are reduced modulo q.  ${work} is enc_words(n) words of
 * scratch, containing ${bp} and ${cc} (see the layout below).
 */
static int
encrypt_core(struct frodo_ctx *c, const uint8_t *seedA,
    const uint8_t *b_packed, const uint8_t *seedse, const uint8_t *mu,
    uint16_t *work)
{
    const pqv_frodo *p = c->p;
    size_t n = p->n, nn = n * FRODO_NBAR, n64 = FRODO_NBAR * FRODO_NBAR;
    uint16_t *sp = work, *bp = work + nn, *cc = work + 2 * nn;
    uint16_t *bmat = work + 2 * nn + n64, *enc = bmat + nn,
             *rows = enc + n64;
    uint8_t ds = FRODO_DS_ENCAPS;
    struct chunk in[2] = { { &ds, 1 }, { seedse, p->seedse } };
    uint16_t qmask = (uint16_t)((1u << p->logq) - 1);

    /* S', E', E'' are consecutive in work: exactly the SHAKE output. */
    if (hash(c, (uint8_t *)work, (2 * nn + n64) * sizeof(uint16_t), in, 2) != 0)
        return -1;
    sample(c, work, 2 * nn + n64);

    /* B' = S' A + E' */
    if (mul_add_sa_plus_e(c, seedA, bp, sp, rows) != 0)
        return -1;
    for (size_t i = 0; i < nn; i++)
        bp[i] &= qmask;

    /* C = S' B + E'' + Encode(mu) */
    unpack(p, bmat, b_packed, nn);
    mul_add_sb_plus_e(p, cc, sp, bmat);
    encode(p, enc, mu);
    for (size_t i = 0; i < n64; i++)
        cc[i] = (uint16_t)((cc[i] + enc[i]) & qmask);
    return 0;
}

/*
 * derive_encrypt(c, pkh, mu, salt, seedA, b_packed, seedse_k, work): what
 * encapsulation and decapsulation's re-encryption share: seedSE || k =
 * SHAKE(pkh || mu || salt) into ${seedse_k}, then encrypt_core with that
 * seedSE (B' at work + nn, C right after it).  0 or -1; the result
 * depends only on failures of the hash, never on the data.
 */
static int
derive_encrypt(struct frodo_ctx *c, const uint8_t *pkh, const uint8_t *mu,
    const uint8_t *salt, const uint8_t *seedA, const uint8_t *b_packed,
    uint8_t *seedse_k, uint16_t *work)
{
    const pqv_frodo *p = c->p;
    struct chunk gin[3] = { { pkh, p->sec }, { mu, p->sec }, { salt, p->salt } };

    if (hash(c, seedse_k, (size_t)p->seedse + p->sec, gin, 3) != 0)
        return -1;
    return encrypt_core(c, seedA, b_packed, seedse_k, mu, work);
}

/* shared_secret(c, ss, ct, k): ss = SHAKE(c1 || c2 || salt || k). */
static int
shared_secret(struct frodo_ctx *c, uint8_t *ss, const uint8_t *ct,
    const uint8_t *k)
{
    const pqv_frodo *p = c->p;
    size_t ctlen = packed_bytes(p, p->n * FRODO_NBAR) +
        packed_bytes(p, FRODO_NBAR * FRODO_NBAR) + p->salt;
    struct chunk sin[2] = { { ct, ctlen }, { k, p->sec } };

    return hash(c, ss, p->sec, sin, 2);
}

/*
 * finish(c, p, work, words, ss, rc): the common end of encapsulation and
 * decapsulation: free the context, wipe and free ${work} (${words}
 * words); on failure (${rc} != 0) wipe ${ss} and return PQV_E_CRYPTO.
 */
static int
finish(struct frodo_ctx *c, const pqv_frodo *p, uint16_t *work, size_t words,
    uint8_t *ss, int rc)
{
    ctx_free(c);
    util_wipe(work, words * sizeof(uint16_t));
    free(work);
    if (rc != 0) {
        util_wipe(ss, p->sec);
        return PQV_E_CRYPTO;
    }
    return 0;
}

/* ---- Encapsulation ---------------------------------------------------- */

int
pqv_frodo_encaps_derand(const pqv_frodo *p, uint8_t *ct, uint8_t *ss,
    const uint8_t *pk, const uint8_t *coins)
{
    struct frodo_ctx c;
    uint16_t *work;
    uint8_t pkh[FRODO_MAX_SEC], seedse_k[FRODO_MAX_SEEDSE + FRODO_MAX_SEC];
    int rc = -1;

    if (p == NULL || ct == NULL || ss == NULL || pk == NULL || coins == NULL)
        return PQV_E_INVAL;
    size_t n = p->n, nn = n * FRODO_NBAR, words = enc_words(n);
    size_t c1len = packed_bytes(p, nn),
           c2len = packed_bytes(p, FRODO_NBAR * FRODO_NBAR);
    const uint8_t *mu = coins, *salt = coins + p->sec;
    if ((work = malloc(words * sizeof(uint16_t))) == NULL)
        return PQV_E_NOMEM;
    if (ctx_init(&c, p) != 0)
        goto out;

    /* pkh = SHAKE(pk); seedSE || k = SHAKE(pkh || mu || salt); encrypt */
    struct chunk pkin[1] = { { pk, pqv_frodo_publickey_bytes(p) } };
    if (hash(&c, pkh, p->sec, pkin, 1) != 0 ||
        derive_encrypt(&c, pkh, mu, salt, pk, pk + FRODO_SEEDA_BYTES, seedse_k,
            work) != 0)
        goto out;
    /* ct = Pack(B') || Pack(C) || salt */
    memcpy(ct + c1len + c2len, salt, p->salt);
    pack(p, ct, work + nn, nn);
    pack(p, ct + c1len, work + 2 * nn, FRODO_NBAR * FRODO_NBAR);

    /* ss = SHAKE(c1 || c2 || salt || k) */
    if (shared_secret(&c, ss, ct, seedse_k + p->seedse) != 0)
        goto out;
    rc = 0;
out:
    util_wipe(seedse_k, sizeof(seedse_k));
    util_wipe(pkh, sizeof(pkh));
    return finish(&c, p, work, words, ss, rc);
}

/* ---- Decapsulation ---------------------------------------------------- */

/*
 * pqv_frodo_decaps: mu' = Decode(C - B' S); re-encrypt with the seedSE'
 * and k' derived from mu'; if (B'' || C') equals the received (B' || C)
 * the secret is SHAKE(c1 || c2 || salt || k'), otherwise (implicit
 * rejection) SHAKE(c1 || c2 || salt || s).  The comparison and the choice
 * between k' and s are constant time; no branch depends on secrets.
 */
int
pqv_frodo_decaps(const pqv_frodo *p, uint8_t *ss, const uint8_t *ct,
    const uint8_t *sk)
{
    struct frodo_ctx c;
    uint16_t *work, *recv;
    uint8_t mu[FRODO_MAX_SEC], kbar[FRODO_MAX_SEC];
    uint8_t seedse_k[FRODO_MAX_SEEDSE + FRODO_MAX_SEC];
    int rc = -1;

    if (p == NULL || ss == NULL || ct == NULL || sk == NULL)
        return PQV_E_INVAL;
    size_t n = p->n, nn = n * FRODO_NBAR, n64 = FRODO_NBAR * FRODO_NBAR;
    size_t c1len = packed_bytes(p, nn), c2len = packed_bytes(p, n64);
    size_t pklen = pqv_frodo_publickey_bytes(p);
    const uint8_t *s = sk, *seedA = sk + p->sec, *bpk = seedA + FRODO_SEEDA_BYTES;
    const uint8_t *st_bytes = sk + p->sec + pklen;
    const uint8_t *pkh = st_bytes + 2 * nn;
    const uint8_t *salt = ct + c1len + c2len;
    /* Scratch: the encryption core's, then received B' and C, then S^T
     * and the 8 x 8 product B' S. */
    size_t words = enc_words(n) + nn + n64 + nn + n64;
    if ((work = malloc(words * sizeof(uint16_t))) == NULL)
        return PQV_E_NOMEM;
    recv = work + enc_words(n);
    uint16_t *recv_c = recv + nn, *st = recv_c + n64, *m = st + nn;
    if (ctx_init(&c, p) != 0)
        goto out;

    /* M = C - B' S, mu' = Decode(M) */
    unpack(p, recv, ct, nn);
    unpack(p, recv_c, ct + c1len, n64);
    load_le16(st, st_bytes, nn);
    memset(m, 0, n64 * sizeof(uint16_t));
    c.rows_dot(m, recv, FRODO_NBAR, n, st);
    for (size_t i = 0; i < n64; i++)
        m[i] = (uint16_t)(recv_c[i] - m[i]);
    decode(p, mu, m);

    /* seedSE' || k' = SHAKE(pkh || mu' || salt), then re-encrypt. */
    if (derive_encrypt(&c, pkh, mu, salt, seedA, bpk, seedse_k, work) != 0)
        goto out;

    /* The encryption core left B'' at work + nn and C' right after it,
     * exactly as the received B' || C are laid out in recv. */
    int equal = util_ct_equal(work + nn, recv, (nn + n64) * sizeof(uint16_t));
    uint8_t keep = (uint8_t)(0 - (unsigned)equal); /* 0xFF: k', 0x00: s */
    const uint8_t *kp = seedse_k + p->seedse;
    for (size_t i = 0; i < p->sec; i++)
        kbar[i] = (uint8_t)((kp[i] & keep) | (s[i] & (uint8_t)~keep));

    /* ss = SHAKE(c1 || c2 || salt || kbar) */
    if (shared_secret(&c, ss, ct, kbar) != 0)
        goto out;
    rc = 0;
out:
    util_wipe(mu, sizeof(mu));
    util_wipe(kbar, sizeof(kbar));
    util_wipe(seedse_k, sizeof(seedse_k));
    return finish(&c, p, work, words, ss, rc);
}

/* ---- Randomised wrappers ---------------------------------------------- */

int
pqv_frodo_keypair(const pqv_frodo *p, uint8_t *pk, uint8_t *sk)
{
    uint8_t coins[FRODO_MAX_SEC + FRODO_MAX_SEEDSE + FRODO_Z_BYTES];
    int rc;

    if (p == NULL || pk == NULL || sk == NULL)
        return PQV_E_INVAL;
    if ((rc = util_random(coins, pqv_frodo_keypair_coins_bytes(p))) != 0)
        return rc;
    rc = pqv_frodo_keypair_derand(p, pk, sk, coins);
    util_wipe(coins, sizeof(coins));
    return rc;
}

int
pqv_frodo_encaps(const pqv_frodo *p, uint8_t *ct, uint8_t *ss,
    const uint8_t *pk)
{
    uint8_t coins[FRODO_MAX_SEC + 64];
    int rc;

    if (p == NULL || ct == NULL || ss == NULL || pk == NULL)
        return PQV_E_INVAL;
    if ((rc = util_random(coins, pqv_frodo_encaps_coins_bytes(p))) != 0)
        return rc;
    rc = pqv_frodo_encaps_derand(p, ct, ss, pk, coins);
    util_wipe(coins, sizeof(coins));
    return rc;
}
