/*
 * bench_micro.c: the primitive rows of the prior versions' table, FrodoKEM
 * for all six parameter sets and AEAD throughput beside OpenSSL's raw speed,
 * printed as Markdown tables (median and p10-p90 of each row).
 *
 * Usage: bench_micro [scale]
 *   scale multiplies the number of samples (default 1; 0.2 for a quick run).
 * Environment: CIRCL="keygen encaps decaps" (microseconds, from
 * ../shared/bench/circl-frodo.sh) adds CIRCL's FrodoKEM-640-SHAKE times and
 * the ratio beside ours.
 *
 * Rows that compare two implementations interleave their samples (one of
 * each per iteration) so that load from other processes hits both alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "crypto/cpu.h"
#include "pqvault/aead.h"
#include "pqvault/frodo.h"
#include "pqvault/identity.h"
#include "pqvault/keyfile.h"
#include "pqvault/vault.h"
#include "util/util.h"
#include "vault/format1.h"

#define MAX_SAMPLES 4000

static double scale = 1.0;

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Summary of a sample: median, 10th and 90th percentiles. */
struct stat {
    double med, p10, p90;
};

static struct stat
summarise(double *v, int n)
{
    struct stat s;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s.p10 = v[(int)(0.1 * (n - 1) + 0.5)];
    s.p90 = v[(int)(0.9 * (n - 1) + 0.5)];
    return s;
}

static int
runs(int base)
{
    int n = (int)(base * scale + 0.5);
    if (n < 5)
        n = 5;
    return n > MAX_SAMPLES ? MAX_SAMPLES : n;
}

static void
die(const char *what)
{
    fprintf(stderr, "bench_micro: %s failed\n", what);
    exit(1);
}

static char *
fmt_ms(char *buf, size_t len, struct stat s)
{
    int prec = s.med < 1 ? 3 : s.med < 10 ? 2 : 1;
    snprintf(buf, len, "%.*f (%.*f-%.*f)", prec, s.med, prec, s.p10, prec, s.p90);
    return buf;
}

/* ---- The six primitive rows -------------------------------------------- */

struct fixture {
    const pqv_frodo *kem;
    pqv_identity *id;
    uint8_t seed[PQV_SEED_BYTES];
    uint8_t file_key[PQV_FILE_KEY_BYTES];
    uint8_t *wrapped;
    size_t wrapped_len;
};

static const uint8_t wrap_ctx[] = "pqvault/bench/context";

static void
row_derive(const pqv_frodo *kem, double *v, int n)
{
    uint8_t seed[PQV_SEED_BYTES] = { 1 };
    for (int i = 0; i < n; i++) {
        pqv_identity *id;
        seed[1] = (uint8_t)i;
        double t0 = now_ms();
        if (pqv_identity_derive(&id, kem, seed) != 0)
            die("pqv_identity_derive");
        v[i] = now_ms() - t0;
        pqv_identity_free(id);
    }
}

static void
row_wrap(struct fixture *f, double *v, int n)
{
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (pqv_wrap(f->id, f->file_key, wrap_ctx, sizeof(wrap_ctx), f->wrapped) != 0)
            die("pqv_wrap");
        v[i] = now_ms() - t0;
    }
}

static void
row_unwrap(struct fixture *f, double *v, int n)
{
    uint8_t key[PQV_FILE_KEY_BYTES];
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (pqv_unwrap(f->id, f->wrapped, f->wrapped_len, wrap_ctx, sizeof(wrap_ctx), key) != 0)
            die("pqv_unwrap");
        v[i] = now_ms() - t0;
    }
}

/* One 4 MiB object: wrap a fresh file key, seal; unwrap, open. */
static void
row_object(struct fixture *f, int suite, double *v, int n)
{
    size_t len = 4u << 20, slen = object_sealed_size(len);
    uint8_t *plain = malloc(len), *sealed = malloc(slen), *back = malloc(len);
    uint8_t oid[OBJECT_ID_BYTES] = { 7 }, fk[PQV_FILE_KEY_BYTES], fk2[PQV_FILE_KEY_BYTES];

    if (plain == NULL || sealed == NULL || back == NULL)
        die("malloc");
    memset(plain, 0x5a, len);
    memset(back, 0, len);
    memset(sealed, 0, slen);
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (util_random(fk, sizeof(fk)) != 0 ||
            pqv_wrap(f->id, fk, wrap_ctx, sizeof(wrap_ctx), f->wrapped) != 0 ||
            object_seal(suite, fk, oid, 0, plain, len, sealed) != 0 ||
            pqv_unwrap(f->id, f->wrapped, f->wrapped_len, wrap_ctx, sizeof(wrap_ctx), fk2) != 0 ||
            object_open(suite, fk2, oid, 0, sealed, slen, back, len) != 0)
            die("object round trip");
        v[i] = now_ms() - t0;
    }
    free(plain);
    free(sealed);
    free(back);
}

/* STREAM through the streaming API, 64 KiB buffers both ways. */
struct membuf {
    uint8_t *p;
    size_t len, pos;
};

static int
mem_sink(void *ctx, const uint8_t *buf, size_t len)
{
    struct membuf *m = ctx;
    memcpy(m->p + m->len, buf, len);
    m->len += len;
    return 0;
}

static ssize_t
mem_source(void *ctx, uint8_t *buf, size_t len)
{
    struct membuf *m = ctx;
    size_t take = m->len - m->pos < len ? m->len - m->pos : len;
    memcpy(buf, m->p + m->pos, take);
    m->pos += take;
    return (ssize_t)take;
}

static void
row_stream(int suite, double *v, int n)
{
    size_t total = 64u << 20, chunk = 64u << 10;
    uint8_t key[PQV_AEAD_KEY_BYTES] = { 3 }, ad[16] = { 0 };
    uint8_t *buf = malloc(chunk);
    struct membuf m = { malloc(pqv_stream_sealed_size(total)), 0, 0 };

    if (buf == NULL || m.p == NULL)
        die("malloc");
    memset(buf, 0x33, chunk);
    memset(m.p, 0, pqv_stream_sealed_size(total));
    for (int i = 0; i < n; i++) {
        m.len = m.pos = 0;
        double t0 = now_ms();
        pqv_stream_writer *w = pqv_stream_writer_new(suite, key, ad, sizeof(ad), mem_sink, &m);
        if (w == NULL)
            die("writer");
        for (size_t off = 0; off < total; off += chunk)
            if (pqv_stream_writer_write(w, buf, chunk) != 0)
                die("writer_write");
        if (pqv_stream_writer_finish(w) != 0)
            die("writer_finish");
        pqv_stream_writer_free(w);
        pqv_stream_reader *r = pqv_stream_reader_new(suite, key, ad, sizeof(ad), mem_source, &m);
        if (r == NULL)
            die("reader");
        size_t got = 0;
        ssize_t k;
        while ((k = pqv_stream_reader_read(r, buf, chunk)) > 0)
            got += (size_t)k;
        if (k < 0 || got != total)
            die("reader_read");
        pqv_stream_reader_free(r);
        v[i] = now_ms() - t0;
    }
    free(buf);
    free(m.p);
}

static void
row_unlock(const pqv_frodo *kem, double *v, int n)
{
    uint8_t seed[PQV_SEED_BYTES] = { 9 }, out[PQV_SEED_BYTES];
    static const char pass[] = "correct horse battery staple";
    pqv_identity *id, *id2;
    pqv_keyfile *kf;

    if (pqv_identity_derive(&id, kem, seed) != 0 ||
        pqv_keyfile_create(&kf, id, seed, (const uint8_t *)pass, strlen(pass), NULL) != 0)
        die("keyfile_create");
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (pqv_keyfile_unlock(kf, (const uint8_t *)pass, strlen(pass), out, &id2, NULL) != 0)
            die("keyfile_unlock");
        v[i] = now_ms() - t0;
        pqv_identity_free(id2);
    }
    pqv_keyfile_free(kf);
    pqv_identity_free(id);
}

static void
primitives(const pqv_frodo *kem, int suite, char cells[6][64])
{
    static double v[MAX_SAMPLES];
    struct fixture f = { .kem = kem };
    int n;

    memset(f.seed, 0x42, sizeof(f.seed));
    memset(f.file_key, 0x17, sizeof(f.file_key));
    if (pqv_identity_derive(&f.id, kem, f.seed) != 0)
        die("pqv_identity_derive");
    f.wrapped_len = pqv_wrap_bytes(kem);
    if ((f.wrapped = malloc(f.wrapped_len)) == NULL)
        die("malloc");

    row_derive(kem, v, n = runs(60));
    fmt_ms(cells[0], 64, summarise(v, n));
    row_wrap(&f, v, n = runs(200));
    fmt_ms(cells[1], 64, summarise(v, n));
    row_unwrap(&f, v, n = runs(200));
    fmt_ms(cells[2], 64, summarise(v, n));
    row_object(&f, suite, v, n = runs(40));
    fmt_ms(cells[3], 64, summarise(v, n));
    row_stream(suite, v, n = runs(15));
    fmt_ms(cells[4], 64, summarise(v, n));
    row_unlock(kem, v, n = runs(15));
    fmt_ms(cells[5], 64, summarise(v, n));

    free(f.wrapped);
    pqv_identity_free(f.id);
}

/* ---- FrodoKEM ------------------------------------------------------------ */

static void
frodo_rows(double circl[3])
{
    static double kg[MAX_SAMPLES], en[MAX_SAMPLES], de[MAX_SAMPLES];
    static const char *names[6] = { "FrodoKEM-640-AES", "FrodoKEM-640-SHAKE",
        "FrodoKEM-976-AES", "FrodoKEM-976-SHAKE", "FrodoKEM-1344-AES",
        "FrodoKEM-1344-SHAKE" };
    char a[64], b[64], c[64];

    printf("\n### FrodoKEM (ms, median (p10-p90)), %s kernels\n\n",
        cpu_has_avx512() ? "AVX2 (Keccak: AVX-512VL)"
                             : cpu_has_avx2() ? "AVX2" : "portable");
    printf("| parameter set | keygen | encaps | decaps |\n| --- | --- | --- | --- |\n");
    for (int s = 0; s < 6; s++) {
        const pqv_frodo *p = pqv_frodo_find(names[s]);
        uint8_t *pk = malloc(pqv_frodo_publickey_bytes(p)),
                *sk = malloc(pqv_frodo_secretkey_bytes(p)),
                *ct = malloc(pqv_frodo_ciphertext_bytes(p)), ss[32], ss2[32];
        int n = runs(s < 2 ? 300 : s < 4 ? 200 : 120);
        if (pk == NULL || sk == NULL || ct == NULL)
            die("malloc");
        for (int i = 0; i < n; i++) {
            double t0 = now_ms();
            if (pqv_frodo_keypair(p, pk, sk) != 0)
                die("keypair");
            double t1 = now_ms();
            if (pqv_frodo_encaps(p, ct, ss, pk) != 0)
                die("encaps");
            double t2 = now_ms();
            if (pqv_frodo_decaps(p, ss2, ct, sk) != 0 ||
                memcmp(ss, ss2, pqv_frodo_sharedsecret_bytes(p)) != 0)
                die("decaps");
            double t3 = now_ms();
            kg[i] = t1 - t0, en[i] = t2 - t1, de[i] = t3 - t2;
        }
        struct stat sk_ = summarise(kg, n), se = summarise(en, n), sd = summarise(de, n);
        printf("| %s | %s | %s | %s |\n", names[s], fmt_ms(a, 64, sk_), fmt_ms(b, 64, se),
            fmt_ms(c, 64, sd));
        if (s == 1 && circl != NULL)
            printf("| CIRCL (Go) 640-SHAKE, same run | %.2f | %.2f | %.2f |\n"
                   "| ratio CIRCL / pqvault | %.1fx | %.1fx | %.1fx |\n",
                circl[0] / 1e3, circl[1] / 1e3, circl[2] / 1e3, circl[0] / 1e3 / sk_.med,
                circl[1] / 1e3 / se.med, circl[2] / 1e3 / sd.med);
        free(pk);
        free(sk);
        free(ct);
    }
}

/* ---- AEAD throughput ------------------------------------------------------ */

/* OpenSSL's raw speed: EVP on 16 KiB blocks (like `openssl speed -evp`),
 * one nonce per block, over ${len} bytes. */
static void
openssl_raw(EVP_CIPHER_CTX *ctx, uint8_t *buf, size_t len, uint8_t *tag)
{
    uint8_t nonce[12] = { 0 };
    int outl;
    for (size_t off = 0; off < len; off += 16384) {
        nonce[0]++;
        if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1 ||
            EVP_EncryptUpdate(ctx, buf + off, &outl, buf + off, 16384) != 1 ||
            EVP_EncryptFinal_ex(ctx, buf + off, &outl) != 1 ||
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1)
            die("EVP");
    }
}

static void
aead_rows(void)
{
    static double raw[MAX_SAMPLES], seal[MAX_SAMPLES], open_[MAX_SAMPLES];
    static double sseal[MAX_SAMPLES], sopen[MAX_SAMPLES];
    size_t chunk = 64u << 10;
    size_t len = 4u << 20, slen = (size_t)pqv_stream_sealed_size(len);
    uint8_t *pt = malloc(len), *ct = malloc(slen), *back = malloc(len), *rawbuf = malloc(len);
    uint8_t key[32] = { 5 }, tag[16], ad[40] = { 0 };
    int suites[2] = { PQV_AEAD_AES256GCM, PQV_AEAD_CHACHA20POLY1305 };

    if (pt == NULL || ct == NULL || back == NULL || rawbuf == NULL)
        die("malloc");
    memset(pt, 0x61, len);
    memset(ct, 0, slen);
    memset(back, 0, len);
    memset(rawbuf, 0, len);
    printf("\n### AEAD throughput (GB/s, median (p10-p90); 4 MiB buffers, one core)\n\n");
    printf("| suite | OpenSSL raw (EVP, 16 KiB blocks) | STREAM seal | STREAM open | streaming API seal | streaming API open | in-memory seal / open vs raw | streaming seal / open vs raw |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int s = 0; s < 2; s++) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        size_t got;
        int n = runs(60);
        if (ctx == NULL ||
            EVP_EncryptInit_ex(ctx, s == 0 ? EVP_aes_256_gcm() : EVP_chacha20_poly1305(), NULL,
                key, NULL) != 1)
            die("EVP init");
        for (int i = -2; i < n; i++) {
            double t0 = now_ms();
            openssl_raw(ctx, rawbuf, len, tag);
            double t1 = now_ms();
            if (pqv_stream_seal(suites[s], key, ad, sizeof(ad), pt, len, ct) != 0)
                die("stream_seal");
            double t2 = now_ms();
            if (pqv_stream_open(suites[s], key, ad, sizeof(ad), ct, slen, back, &got) != 0)
                die("stream_open");
            double t3 = now_ms();
            /* The streaming API with 64 KiB buffers, into and out of memory. */
            struct membuf m = { ct, 0, 0 };
            pqv_stream_writer *w =
                pqv_stream_writer_new(suites[s], key, ad, sizeof(ad), mem_sink, &m);
            if (w == NULL)
                die("writer");
            for (size_t off = 0; off < len; off += chunk)
                if (pqv_stream_writer_write(w, pt + off, chunk) != 0)
                    die("writer_write");
            if (pqv_stream_writer_finish(w) != 0)
                die("writer_finish");
            pqv_stream_writer_free(w);
            double t4 = now_ms();
            pqv_stream_reader *rd =
                pqv_stream_reader_new(suites[s], key, ad, sizeof(ad), mem_source, &m);
            if (rd == NULL)
                die("reader");
            ssize_t k;
            got = 0;
            while ((k = pqv_stream_reader_read(rd, back + got, chunk)) > 0)
                got += (size_t)k;
            if (k < 0 || got != len)
                die("reader_read");
            pqv_stream_reader_free(rd);
            double t5 = now_ms();
            if (i < 0)
                continue; /* warm-up */
            sseal[i] = len / 1e6 / (t4 - t3);
            sopen[i] = len / 1e6 / (t5 - t4);
            raw[i] = len / 1e6 / (t1 - t0);
            seal[i] = len / 1e6 / (t2 - t1);
            open_[i] = len / 1e6 / (t3 - t2);
        }
        EVP_CIPHER_CTX_free(ctx);
        struct stat r = summarise(raw, n), a = summarise(seal, n), b = summarise(open_, n);
        struct stat c = summarise(sseal, n), d = summarise(sopen, n);
        printf("| %s | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | "
               "%.2f (%.2f-%.2f) | %.0f%% / %.0f%% | %.0f%% / %.0f%% |\n",
            pqv_aead_name(suites[s]), r.med, r.p10, r.p90, a.med, a.p10, a.p90, b.med, b.p10,
            b.p90, c.med, c.p10, c.p90, d.med, d.p10, d.p90, 100 * a.med / r.med,
            100 * b.med / r.med, 100 * c.med / r.med, 100 * d.med / r.med);
    }
    free(pt);
    free(ct);
    free(back);
    free(rawbuf);
}

int
main(int argc, char **argv)
{
    static const char *rows[6] = { "Derive hybrid identity from seed",
        "Wrap file key (both encapsulations)", "Unwrap file key (both decapsulations)",
        "Encrypt and decrypt one 4 MiB object (with wrap/unwrap)",
        "STREAM seal and open, 64 MiB, streaming API (64 KiB buffers)",
        "Unlock key file (Argon2id t=3 m=64 MiB p=4, both slots)" };
    char def[6][64], old[6][64];
    double circl[3];
    int have_circl = 0;
    const char *env;

    if (argc > 1)
        scale = atof(argv[1]);
    if (scale <= 0)
        scale = 1;
    if ((env = getenv("CIRCL")) != NULL &&
        sscanf(env, "%lf %lf %lf", &circl[0], &circl[1], &circl[2]) == 3 && circl[0] > 0)
        have_circl = 1;

    const pqv_frodo *kdef = pqv_frodo_find(pqv_default_kem());
    const pqv_frodo *k640 = pqv_frodo_find("FrodoKEM-640-SHAKE");
    int suite = pqv_aead_auto();
    primitives(kdef, suite, def);
    primitives(k640, suite, old);
    printf("### Primitives (ms, median (p10-p90)); AEAD %s\n\n", pqv_aead_name(suite));
    printf("| Primitive | pqvault, %s (default) | pqvault, FrodoKEM-640-SHAKE | Go 0.5 (i7-7700) | Rust 0.6 (i7-7700) |\n"
           "| --- | --- | --- | --- | --- |\n",
        pqv_frodo_name(kdef));
    static const char *go[6] = { "5.6", "7.4-8.0", "7.6-8.3", "19.9-20.1", "89-92", "121-125" };
    static const char *rust[6] = { "3.0", "3.1", "3.1", "19.0-19.5", "187-188", "129" };
    for (int i = 0; i < 6; i++)
        printf("| %s | %s | %s | %s | %s |\n", rows[i], def[i], old[i], go[i], rust[i]);
    frodo_rows(have_circl ? circl : NULL);
    if (!have_circl)
        printf("\n(CIRCL not measured in this run: %s)\n",
            env != NULL && *env ? env : "no CIRCL figures given");
    aead_rows();
    return 0;
}
