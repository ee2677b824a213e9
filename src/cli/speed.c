/*
 * src/cli/speed.c: "pqvault speed", like gocryptfs -speed: in-memory STREAM
 * seal and open throughput of both AEAD suites on 16 MiB buffers, and
 * FrodoKEM key generation, encapsulation and decapsulation times for all
 * six parameter sets (medians), marking the choices of auto mode; then, as
 * cryptsetup benchmark, Argon2id at init's default cost and a small table
 * of costs (medians), and the --kdf that takes about a target time here
 * (kdf_time.c, shared with init --kdf-time).  Uses only the public APIs
 * (aead.h, frodo.h, argon2id.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "cli.h"
#include "pqvault/aead.h"
#include "pqvault/argon2id.h"
#include "pqvault/frodo.h"

#define SPEED_BUF (16u << 20)
#define AEAD_RUNS 3
#define KEM_RUNS 5
#define KDF_RUNS 3
#define KDF_TCOLS 4           /* the table's t = 1..4 */
#define KDF_BUDGET 6.0        /* seconds the table may take */

/* --quick, a first look in a second or two: shorter buffers, fewer runs,
 * a small table in a short budget, and a calibration of one run per cost
 * (kdf_calibrate's quick mode); the lines printed are the same. */
#define QUICK_BUF (4u << 20)
#define QUICK_KEM_RUNS 3
#define QUICK_KDF_RUNS 1
#define QUICK_KDF_BUDGET 0.3

static int kdf_runs = KDF_RUNS;

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
speed_aead(int suite, int selected, size_t buf)
{
    uint8_t key[PQV_AEAD_KEY_BYTES];
    size_t ctlen = (size_t)pqv_stream_sealed_size(buf);
    uint8_t *pt = malloc(buf), *ct = malloc(ctlen);
    double seal[AEAD_RUNS], open[AEAD_RUNS];
    int rc = EXIT_OK;
    if (!pt || !ct) {
        err_msg("out of memory");
        rc = EXIT_ERR;
        goto out;
    }
    memset(pt, 0x5a, buf);
    if (RAND_bytes(key, sizeof(key)) != 1) {
        err_msg("random generator failed");
        rc = EXIT_ERR;
        goto out;
    }
    for (int i = 0; i < AEAD_RUNS; i++) {
        size_t ptlen;
        double t0 = now();
        if (pqv_stream_seal(suite, key, NULL, 0, pt, buf, ct) != 0) {
            err_msg("%s: seal failed", pqv_aead_name(suite));
            rc = EXIT_ERR;
            goto out;
        }
        double t1 = now();
        if (pqv_stream_open(suite, key, NULL, 0, ct, ctlen, pt, &ptlen) != 0 ||
            ptlen != buf) {
            err_msg("%s: open failed", pqv_aead_name(suite));
            rc = EXIT_ERR;
            goto out;
        }
        double t2 = now();
        seal[i] = t1 - t0;
        open[i] = t2 - t1;
    }
    printf("%-20s %9.0f MB/s seal %9.0f MB/s open%s\n", pqv_aead_name(suite),
        (double)buf / median(seal, AEAD_RUNS) / 1e6,
        (double)buf / median(open, AEAD_RUNS) / 1e6,
        selected ? "  (selected in auto mode)" : "");
out:
    free(pt);
    free(ct);
    return rc;
}

static int
speed_kem(const pqv_frodo *p, int selected, int runs)
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
    for (int i = 0; i < runs; i++) {
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
        pqv_frodo_name(p), median(kg, runs) * 1e3, median(en, runs) * 1e3,
        median(de, runs) * 1e3, selected ? "  (selected in auto mode)" : "");
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

/* speed_kdf_median(p, out): the median of kdf_runs runs of cost ${p}; an
 * exit status. */
static int
speed_kdf_median(const struct pqv_kdf_params *p, double *out)
{
    double v[KDF_RUNS];
    for (int i = 0; i < kdf_runs; i++) {
        int rc = kdf_time_run(p, &v[i]);
        if (rc != 0) {
            char mem[32];
            kdf_format_mem(mem, sizeof(mem), p->m_kib);
            err_msg("Argon2id t=%u, m=%s, p=%u: %s", (unsigned)p->t_cost, mem,
                (unsigned)p->lanes, pqv_strerror(rc));
            return EXIT_ERR;
        }
    }
    *out = median(v, kdf_runs);
    return EXIT_OK;
}

/* speed_kdf(target, quick): Argon2id at init's default cost, a table of
 * medians over m (three sizes up to the memory cap) and t = 1..4 within a
 * time budget, and the recommended --kdf for ${target} seconds. */
static int
speed_kdf(double target, int quick)
{
    static const uint32_t full_rows[] = { 64 * 1024, 256 * 1024, 1024 * 1024 };
    static const uint32_t quick_rows[] = { 8 * 1024, 16 * 1024, 32 * 1024 };
    const uint32_t *rows = quick ? quick_rows : full_rows;
    const struct pqv_kdf_params def = pqv_kdf_default;
    double budget = quick ? QUICK_KDF_BUDGET : KDF_BUDGET, start, rate = 0, ms;
    struct kdf_caps caps;
    struct kdf_pick pick;
    char mem[32], avail[64], tm[32], tg[32];
    uint32_t last = 0;
    int rc, skipped = 0, capped = 0;

    kdf_get_caps(&caps, def.lanes);
    kdf_format_mem(mem, sizeof(mem), def.m_kib);
    kdf_runs = quick ? QUICK_KDF_RUNS : KDF_RUNS;
    printf("Argon2id (%s kernel, p=%u lanes in as many threads, median of %d, ms):\n",
        pqv_argon2id_impl(), (unsigned)def.lanes, kdf_runs);
    if ((rc = speed_kdf_median(&def, &ms)) != EXIT_OK)
        return rc;
    printf("  init's default t=%u, m=%s, p=%u: %.0f ms\n", (unsigned)def.t_cost, mem,
        (unsigned)def.lanes, ms * 1e3);
    printf("  %-10s", "m \\ t");
    for (uint32_t t = 1; t <= KDF_TCOLS; t++)
        printf(" %8u", (unsigned)t);
    printf("\n");
    fflush(stdout);
    start = now();
    /* Rows in increasing cost; a cell whose three runs would take the
     * table past its budget (predicted from the last cell measured) is not
     * measured, nor is any after it. */
    for (int r = 0; r < 3; r++) {
        struct pqv_kdf_params p = { 1, rows[r] < caps.m_kib ? rows[r] : caps.m_kib, def.lanes };
        if (p.m_kib <= last)
            continue;   /* scaled down to the cap: already a row */
        last = p.m_kib;
        kdf_format_mem(mem, sizeof(mem), p.m_kib);
        printf("  %-10s", mem);
        for (uint32_t t = 1; t <= KDF_TCOLS; t++) {
            p.t_cost = t;
            if (t > caps.t_cost) {
                printf(" %8s", "-");
                capped = 1;
                continue;
            }
            if (skipped ||
                (rate > 0 && now() - start + kdf_runs * rate * p.m_kib * t > budget)) {
                printf(" %8s", "-");
                skipped = 1;
                continue;
            }
            if ((rc = speed_kdf_median(&p, &ms)) != EXIT_OK) {
                printf("\n");
                return rc;
            }
            rate = ms / ((double)p.m_kib * t);
            printf(" %8.0f", ms * 1e3);
            fflush(stdout);
        }
        printf("\n");
    }
    if (skipped || capped)
        printf("  (-: not measured, %s%s%s)\n", skipped ? "over the table's budget" : "",
            skipped && capped ? " or " : "", capped ? "above the t cap" : "");
    kdf_format_mem(mem, sizeof(mem), caps.m_kib);
    if (caps.avail_kib > 0)
        snprintf(avail, sizeof(avail), "; %llu MiB available",
            (unsigned long long)(caps.avail_kib / 1024));
    else
        snprintf(avail, sizeof(avail), "; available memory unknown");
    printf("caps: m at most %s (%s%s), t at most %u\n", mem, caps.m_why, avail,
        (unsigned)caps.t_cost);
    fflush(stdout);
    if ((rc = kdf_calibrate(target, def.lanes, NULL, quick, &caps, &pick)) != 0) {
        err_msg("Argon2id calibration: %s", pqv_strerror(rc));
        return EXIT_ERR;
    }
    kdf_format_time(tm, sizeof(tm), pick.seconds);
    kdf_format_time(tg, sizeof(tg), target);
    printf("recommended: --kdf t=%u,m=%u,p=%u (about %s here for a target of %s%s)\n",
        (unsigned)pick.p.t_cost, (unsigned)pick.p.m_kib, (unsigned)pick.p.lanes, tm, tg,
        pick.short_of_target ? "; the most within the caps"
        : pick.over_target ? "; the least this calibration tries" : "");
    return EXIT_OK;
}

int
cmd_speed(struct args *a)
{
    const char *val;
    double target = 1.0;
    int id, rc = EXIT_OK, kdf_only = 0, quick = 0;
    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: return arg_stop(a, id);
        case ARG_OPERAND: return usage_error("unexpected operand '%s'", val);
        case OPT_KDFTIME:
            if ((rc = kdf_time_arg("--kdf-time", val, &target)) != EXIT_OK)
                return rc;
            break;
        case OPT_KDFONLY: kdf_only = 1; break;
        case OPT_QUICK: quick = 1; break;
        }
    }
    if (kdf_only)
        return speed_kdf(target, quick);
    static const int suites[] = { PQV_AEAD_AES256GCM, PQV_AEAD_CHACHA20POLY1305 };
    int autos = pqv_aead_auto();
    size_t buf = quick ? QUICK_BUF : SPEED_BUF;
    int kem_runs = quick ? QUICK_KEM_RUNS : KEM_RUNS;
    printf("AEAD (STREAM, 64 KiB segments, %u MiB in memory, median of %d):\n",
        (unsigned)(buf >> 20), AEAD_RUNS);
    for (int i = 0; i < 2 && rc == EXIT_OK; i++)
        rc = speed_aead(suites[i], suites[i] == autos, buf);
    if (rc != EXIT_OK)
        return rc;
    fflush(stdout);
    const pqv_frodo *def = pqv_frodo_find(pqv_default_kem());
    printf("KEM (median of %d):\n", kem_runs);
    for (uint8_t kid = 1; kid <= 6 && rc == EXIT_OK; kid++) {
        const pqv_frodo *p = pqv_frodo_by_id(kid);
        if (p) {
            rc = speed_kem(p, p == def, kem_runs);
            fflush(stdout);
        }
    }
    if (rc != EXIT_OK)
        return rc;
    return speed_kdf(target, quick);
}
