/*
 * bench_argon2id.c: time Argon2id t=3, m=64 MiB, p=4 in the shapes the
 * vault uses, ours against Debian's libargon2.
 *
 * Usage: bench_argon2id [runs] [what...]
 *   what: single (one hash, each kernel, 4 threads), slots (the two-slot
 *   unlock: two hashes computed concurrently, several thread counts), or
 *   both (the default).  Prints the median wall time of ${runs} (10).
 */
#include <argon2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto/argon2id_internal.h"
#include "pqvault/argon2id.h"

#define T_COST 3u
#define M_KIB 65536u
#define LANES 4u
#define MAX_RUNS 101

static const char password[] = "correct horse battery staple";
static const uint8_t salt[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

/* One hash to compute: which implementation and how many threads. */
struct job {
    int use_libargon2;
    uint32_t threads;
    uint8_t tag[32];
    int rc;
};

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
run_job(struct job *j)
{
    if (j->use_libargon2)
        j->rc = argon2id_hash_raw(T_COST, M_KIB, LANES, password, strlen(password), salt,
            sizeof(salt), j->tag, sizeof(j->tag));
    else
        j->rc = pqv_argon2id(j->tag, sizeof(j->tag), (const uint8_t *)password,
            strlen(password), salt, sizeof(salt), NULL, 0, NULL, 0, T_COST, M_KIB, LANES,
            j->threads);
}

static void *
job_thread(void *arg)
{
    run_job(arg);
    return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* time_jobs(jobs, n, runs): median ms to run ${n} jobs concurrently. */
static double
time_jobs(struct job *jobs, int n, int runs)
{
    double t[MAX_RUNS];
    pthread_t th[2];

    for (int r = 0; r < runs; r++) {
        double start = now_ms();
        for (int i = 1; i < n; i++)
            pthread_create(&th[i], NULL, job_thread, &jobs[i]);
        run_job(&jobs[0]);
        for (int i = 1; i < n; i++)
            pthread_join(th[i], NULL);
        t[r] = now_ms() - start;
        for (int i = 0; i < n; i++)
            if (jobs[i].rc != 0 || memcmp(jobs[i].tag, jobs[0].tag, 32) != 0) {
                fprintf(stderr, "hash failed or differs (rc %d)\n", jobs[i].rc);
                exit(1);
            }
    }
    qsort(t, (size_t)runs, sizeof(t[0]), cmp_double);
    return t[runs / 2];
}

int
main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 10;
    int do_single = 1, do_slots = 1;

    if (runs < 1 || runs > MAX_RUNS)
        runs = 10;
    if (argc > 2) {
        do_single = strcmp(argv[2], "single") == 0 || strcmp(argv[2], "both") == 0;
        do_slots = strcmp(argv[2], "slots") == 0 || strcmp(argv[2], "both") == 0;
    }
    printf("Argon2id t=%u m=%u KiB p=%u, median of %d runs\n", T_COST, M_KIB, LANES, runs);
    static const char *const kernel_names[] = { "avx512", "avx2", "portable" };
    if (do_single) {
        for (size_t k = 0; k < 3; k++) {
            struct job j = { 0, 4, { 0 }, 0 };
            if (argon2id_prefer_kernel(kernel_names[k]) != 0)
                continue;
            printf("single  ours %-8s threads=4: %7.1f ms\n", pqv_argon2id_impl(),
                time_jobs(&j, 1, runs));
        }
        argon2id_prefer_kernel(NULL);
        struct job j = { 1, 4, { 0 }, 0 };
        printf("single  libargon2     threads=4: %7.1f ms\n", time_jobs(&j, 1, runs));
    }
    if (do_slots) {
        static const uint32_t counts[] = { 1, 2, 4 };
        for (size_t k = 0; k < 2; k++) {
            if (argon2id_prefer_kernel(kernel_names[k]) != 0)
                continue;
            for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
                struct job j[2] = { { 0, counts[i], { 0 }, 0 }, { 0, counts[i], { 0 }, 0 } };
                printf("2 slots ours %-8s threads=%u: %7.1f ms\n", pqv_argon2id_impl(),
                    counts[i], time_jobs(j, 2, runs));
            }
        }
        argon2id_prefer_kernel(NULL);
        struct job j[2] = { { 1, 4, { 0 }, 0 }, { 1, 4, { 0 }, 0 } };
        printf("2 slots libargon2     threads=4: %7.1f ms\n", time_jobs(j, 2, runs));
    }
    return 0;
}
