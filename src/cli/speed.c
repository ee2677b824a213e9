/*
 * src/cli/speed.c: "pqvault speed", like gocryptfs -speed: in-memory STREAM
 * seal and open throughput of both AEAD suites on 16 MiB buffers, and
 * FrodoKEM key generation, encapsulation and decapsulation times for all
 * six parameter sets (medians), marking the choices of auto mode.  Uses
 * only the public APIs (aead.h, frodo.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "cli.h"
#include "pqvault/aead.h"
#include "pqvault/frodo.h"

#define SPEED_BUF (16u << 20)
#define AEAD_RUNS 3
#define KEM_RUNS 5

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
speed_aead(int suite, int selected)
{
    uint8_t key[PQV_AEAD_KEY_BYTES];
    size_t ctlen = (size_t)pqv_stream_sealed_size(SPEED_BUF);
    uint8_t *pt = malloc(SPEED_BUF), *ct = malloc(ctlen);
    double seal[AEAD_RUNS], open[AEAD_RUNS];
    int rc = EXIT_OK;
    if (!pt || !ct) {
        err_msg("out of memory");
        rc = EXIT_ERR;
        goto out;
    }
    memset(pt, 0x5a, SPEED_BUF);
    if (RAND_bytes(key, sizeof(key)) != 1) {
        err_msg("random generator failed");
        rc = EXIT_ERR;
        goto out;
    }
    for (int i = 0; i < AEAD_RUNS; i++) {
        size_t ptlen;
        double t0 = now();
        if (pqv_stream_seal(suite, key, NULL, 0, pt, SPEED_BUF, ct) != 0) {
            err_msg("%s: seal failed", pqv_aead_name(suite));
            rc = EXIT_ERR;
            goto out;
        }
        double t1 = now();
        if (pqv_stream_open(suite, key, NULL, 0, ct, ctlen, pt, &ptlen) != 0 ||
            ptlen != SPEED_BUF) {
            err_msg("%s: open failed", pqv_aead_name(suite));
            rc = EXIT_ERR;
            goto out;
        }
        double t2 = now();
        seal[i] = t1 - t0;
        open[i] = t2 - t1;
    }
    printf("%-20s %9.0f MB/s seal %9.0f MB/s open%s\n", pqv_aead_name(suite),
        SPEED_BUF / median(seal, AEAD_RUNS) / 1e6,
        SPEED_BUF / median(open, AEAD_RUNS) / 1e6,
        selected ? "  (selected in auto mode)" : "");
out:
    free(pt);
    free(ct);
    return rc;
}

static int
speed_kem(const pqv_frodo *p, int selected)
{
    size_t pkn = pqv_frodo_publickey_bytes(p), skn = pqv_frodo_secretkey_bytes(p);
    size_t ctn = pqv_frodo_ciphertext_bytes(p), ssn = pqv_frodo_sharedsecret_bytes(p);
    uint8_t *pk = malloc(pkn), *sk = malloc(skn), *ct = malloc(ctn);
    uint8_t *ss1 = malloc(ssn), *ss2 = malloc(ssn);
    double kg[KEM_RUNS], en[KEM_RUNS], de[KEM_RUNS];
    int rc = EXIT_OK;
    if (!pk || !sk || !ct || !ss1 || !ss2) {
        err_msg("out of memory");
        rc = EXIT_ERR;
        goto out;
    }
    for (int i = 0; i < KEM_RUNS; i++) {
        double t0 = now();
        int e = pqv_frodo_keypair(p, pk, sk);
        double t1 = now();
        e |= pqv_frodo_encaps(p, ct, ss1, pk);
        double t2 = now();
        e |= pqv_frodo_decaps(p, ss2, ct, sk);
        double t3 = now();
        if (e != 0 || memcmp(ss1, ss2, ssn) != 0) {
            err_msg("%s: self-test failed", pqv_frodo_name(p));
            rc = EXIT_ERR;
            goto out;
        }
        kg[i] = t1 - t0;
        en[i] = t2 - t1;
        de[i] = t3 - t2;
    }
    printf("%-20s %7.2f ms keygen %7.2f ms encaps %7.2f ms decaps%s\n",
        pqv_frodo_name(p), median(kg, KEM_RUNS) * 1e3, median(en, KEM_RUNS) * 1e3,
        median(de, KEM_RUNS) * 1e3, selected ? "  (selected in auto mode)" : "");
out:
    if (sk)
        memset(sk, 0, skn);
    free(pk);
    free(sk);
    free(ct);
    free(ss1);
    free(ss2);
    return rc;
}

int
cmd_speed(struct args *a)
{
    const char *val;
    int id, rc = EXIT_OK;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        return usage_error("unexpected operand '%s'", val);
    }
    static const int suites[] = { PQV_AEAD_AES256GCM, PQV_AEAD_CHACHA20POLY1305 };
    int autos = pqv_aead_auto();
    printf("AEAD (STREAM, 64 KiB segments, %u MiB in memory, median of %d):\n",
        SPEED_BUF >> 20, AEAD_RUNS);
    for (int i = 0; i < 2 && rc == EXIT_OK; i++)
        rc = speed_aead(suites[i], suites[i] == autos);
    if (rc != EXIT_OK)
        return rc;
    fflush(stdout);
    const pqv_frodo *def = pqv_frodo_find(pqv_default_kem());
    printf("KEM (median of %d):\n", KEM_RUNS);
    for (uint8_t kid = 1; kid <= 6 && rc == EXIT_OK; kid++) {
        const pqv_frodo *p = pqv_frodo_by_id(kid);
        if (p) {
            rc = speed_kem(p, p == def);
            fflush(stdout);
        }
    }
    return rc;
}
