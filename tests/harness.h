/*
 * harness.h: a minimal unit-test harness.
 *
 * A test program defines static void functions and ends with
 *     TEST_MAIN(test_one, test_two, ...)
 * Each test prints "ok - name" or "FAIL - name" with the failing checks;
 * the program prints "RESULT <passed> <failed>" last and exits non-zero if
 * any test failed.  tests/run.sh adds the results of all programs up.
 */
#ifndef PQV_TEST_HARNESS_H
#define PQV_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_failures;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            harness_failures++;                                              \
            fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__,         \
                __LINE__, #cond);                                            \
        }                                                                    \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                   \
    do {                                                                     \
        long long ha_ = (long long)(a), hb_ = (long long)(b);                \
        if (ha_ != hb_) {                                                    \
            harness_failures++;                                              \
            fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n",      \
                __FILE__, __LINE__, #a, #b, ha_, hb_);                       \
        }                                                                    \
    } while (0)

#define CHECK_MEM(a, b, n)                                                   \
    do {                                                                     \
        if (memcmp((a), (b), (n)) != 0) {                                    \
            harness_failures++;                                              \
            fprintf(stderr, "  %s:%d: bytes differ: %s vs %s (%zu bytes)\n", \
                __FILE__, __LINE__, #a, #b, (size_t)(n));                    \
        }                                                                    \
    } while (0)

#define CHECK_STR(a, b)                                                      \
    do {                                                                     \
        const char *hsa_ = (a), *hsb_ = (b);                                 \
        if (strcmp(hsa_, hsb_) != 0) {                                       \
            harness_failures++;                                              \
            fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n",  \
                __FILE__, __LINE__, #a, #b, hsa_, hsb_);                     \
        }                                                                    \
    } while (0)

/* Stop the current test (after a failed precondition). */
#define REQUIRE(cond)                                                        \
    do {                                                                     \
        if (!(cond)) {                                                       \
            harness_failures++;                                              \
            fprintf(stderr, "  %s:%d: requirement failed: %s\n", __FILE__,   \
                __LINE__, #cond);                                            \
            return;                                                          \
        }                                                                    \
    } while (0)

typedef void (*harness_fn)(void);

static inline int
harness_run(const char *names, harness_fn *fns, size_t n, int argc, char **argv)
{
    int passed = 0, failed = 0;
    char buf[4096];
    const char *p = names;

    for (size_t i = 0; i < n; i++) {
        /* Split the stringified argument list on commas. */
        size_t len = 0;
        while (*p == ' ' || *p == ',')
            p++;
        while (p[len] != '\0' && p[len] != ',' && len < sizeof(buf) - 1)
            len++;
        memcpy(buf, p, len);
        buf[len] = '\0';
        while (len > 0 && buf[len - 1] == ' ')
            buf[--len] = '\0';
        p += len;
        if (argc > 1 && strstr(buf, argv[1]) == NULL)
            continue;
        int before = harness_failures;
        fns[i]();
        fflush(stderr);
        if (harness_failures == before) {
            printf("ok - %s\n", buf);
            passed++;
        } else {
            printf("FAIL - %s\n", buf);
            failed++;
        }
        fflush(stdout);
    }
    printf("RESULT %d %d\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

#define TEST_MAIN(...)                                                       \
    int main(int argc, char **argv)                                          \
    {                                                                        \
        harness_fn fns[] = { __VA_ARGS__ };                                  \
        return harness_run(#__VA_ARGS__, fns, sizeof(fns) / sizeof(fns[0]),  \
            argc, argv);                                                     \
    }

/* Directory of the shared known-answer vectors, or NULL if absent. */
static inline const char *
harness_kat_dir(void)
{
    const char *d = getenv("PQV_KAT_DIR");
    static char path[] = "../shared/kat";
    FILE *f;
    char probe[4096];

    if (d == NULL)
        d = path;
    snprintf(probe, sizeof(probe), "%s/README.md", d);
    if ((f = fopen(probe, "r")) == NULL)
        return NULL;
    fclose(f);
    return d;
}

#endif
