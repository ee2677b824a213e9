/*
 * src/cli/kdf_time.c: Argon2id timing on this machine, in one place for
 * "speed" (its table and recommendation) and "init --kdf-time" (the cost
 * of slot 0): the caps a picked cost stays within, one timed run of the
 * library's pqv_argon2id, and the calibration that picks a cost for a
 * target time.  The input hashed is fixed and not secret: no passphrase is
 * ever involved.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "cli.h"
#include "pqvault/argon2id.h"

#define MIB 1024u

int
kdf_time_arg(const char *opt, const char *val, double *seconds)
{
    uint64_t us;
    int rc = parse_duration(val, &us);
    if (rc == -1)
        return usage_error("%s: invalid duration '%s' (expected digits, an optional "
            "fraction and the unit ms or s: 500ms, 1s, 2.5s)", opt, val);
    if (rc != 0 || us < KDF_TIME_MIN_US || us > KDF_TIME_MAX_US)
        return usage_error("%s: '%s' is out of range (100ms to 60s)", opt, val);
    *seconds = (double)us / 1e6;
    return EXIT_OK;
}

/* mem_available_kib(): MemAvailable from /proc/meminfo, else the free
 * pages sysconf counts; 0 when neither is known. */
static uint64_t
mem_available_kib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    int found = 0;
    if (f != NULL) {
        while (!found && fgets(line, sizeof(line), f) != NULL)
            found = sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
        fclose(f);
    }
    if (found)
        return kb;
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && size > 0)
        return (uint64_t)pages * (uint64_t)size / 1024;
    return 0;
}

void
kdf_get_caps(struct kdf_caps *c, uint32_t lanes)
{
    const struct pqv_kdf_limit *lim = g_cli.have_kdf_limit ? &g_cli.kdf_limit
        : &pqv_kdf_limit_default;
    uint64_t m = lim->m_kib;
    struct rlimit rl;
    c->limit = *lim;
    c->m_why = g_cli.have_kdf_limit ? "the --kdf-limit" : "the default --kdf-limit";
    c->avail_kib = mem_available_kib();
    if (c->avail_kib > 0 && c->avail_kib / 2 < m) {
        m = c->avail_kib / 2;
        c->m_why = "half the available memory";
    }
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)rl.rlim_cur / 2048 < m) {
        m = (uint64_t)rl.rlim_cur / 2048;
        c->m_why = "half the address space limit";
    }
    if (m >= MIB)
        m -= m % MIB;
    if (m < 8ull * lanes)
        m = 8ull * lanes;
    if (m < PQV_ARGON2_MIN_MKIB)
        m = PQV_ARGON2_MIN_MKIB;
    c->m_kib = (uint32_t)m;
    c->t_cost = lim->t_cost;
}

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
kdf_time_run(const struct pqv_kdf_params *p, double *seconds)
{
    static const uint8_t pwd[] = "pqvault speed";
    static const uint8_t salt[16] = "pqvault kdf time";
    uint8_t out[32];
    double t0 = now();
    int rc = pqv_argon2id(out, sizeof(out), pwd, sizeof(pwd) - 1, salt, sizeof(salt),
        NULL, 0, NULL, 0, p->t_cost, p->m_kib, p->lanes, p->lanes);
    *seconds = now() - t0;
    /* Not a secret; cleared all the same. */
    memset(out, 0, sizeof(out));
    return rc;
}

struct slot_run {
    struct pqv_kdf_params p;
    double seconds;
    int rc;
};

static void *
slot_run(void *arg)
{
    struct slot_run *r = arg;
    r->rc = kdf_time_run(&r->p, &r->seconds);
    return NULL;
}

int
kdf_time_unlock(const struct pqv_kdf_params *p, const struct pqv_kdf_params *other_slot,
    const struct kdf_caps *caps, double *seconds)
{
    struct slot_run other = { other_slot ? *other_slot : pqv_kdf_default, 0, 0 };
    double t0 = now(), s0;
    int rc;

    if (!pqv_kdf_within_limit(&other.p, &caps->limit))
        return kdf_time_run(p, seconds);   /* skipped by the unlock too */
    if ((uint64_t)p->m_kib + other.p.m_kib <= caps->limit.m_kib) {
        /* Both at once, slot 1 in a second thread, as the unlock does. */
        pthread_t thread;
        int started = pthread_create(&thread, NULL, slot_run, &other) == 0;
        rc = kdf_time_run(p, &s0);
        if (started)
            pthread_join(thread, NULL);
        else
            slot_run(&other);
    } else {
        rc = kdf_time_run(p, &s0);
        if (rc == 0)
            slot_run(&other);
    }
    *seconds = now() - t0;
    return rc != 0 ? rc : other.rc;
}

/* round_m(kib, lanes, cap): ${kib} rounded to a whole MiB (to a multiple of
 * 8 lanes below one), within [8 * lanes, cap]. */
static uint32_t
round_m(double kib, uint32_t lanes, uint32_t cap)
{
    uint32_t lo = 8 * lanes < PQV_ARGON2_MIN_MKIB ? PQV_ARGON2_MIN_MKIB : 8 * lanes;
    uint32_t m;
    if (kib >= (double)cap)
        return cap;
    if (kib >= MIB)
        m = (uint32_t)(kib / MIB + 0.5) * MIB;
    else
        m = (uint32_t)(kib / (8.0 * lanes)) * 8 * lanes;
    if (m > cap)
        m = cap;
    return m < lo ? lo : m;
}

/* choose(work, least, lanes, caps, p): the cost doing about ${work}
 * KiB-passes, at least ${least} KiB at one pass: t = 1 and m = work up to
 * the memory cap, then the fewest passes that keep m within it (allowing
 * 10% less work than asked rather than a pass more over less memory). */
static void
choose(double work, uint32_t least, uint32_t lanes, const struct kdf_caps *caps,
    struct pqv_kdf_params *p)
{
    double x = work / ((double)caps->m_kib * 1.1);
    uint32_t t = 1;
    if (x >= (double)caps->t_cost)
        t = caps->t_cost;
    else if (x > 1)
        t = (uint32_t)x + ((double)(uint32_t)x < x);
    p->lanes = lanes;
    p->t_cost = t;
    p->m_kib = round_m(work / t, lanes, caps->m_kib);
    if (t == 1 && p->m_kib < least)
        p->m_kib = least;
}

/* estimate(w, s, n, target): the work for ${target} seconds from the last
 * two measurements (w[1], s[1] the newer): on the line through them when
 * time grew with work, else in proportion to the last; within 1/8 to 8
 * times the last work. */
static double
estimate(const double w[2], const double s[2], int n, double target)
{
    double last = s[1] > 1e-6 ? s[1] : 1e-6, e = w[1] * target / last;
    if (n >= 2 && w[1] != w[0] && (s[1] - s[0]) / (w[1] - w[0]) > 0)
        e = w[1] + (target - s[1]) * (w[1] - w[0]) / (s[1] - s[0]);
    if (e < w[1] / 8)
        e = w[1] / 8;
    if (e > w[1] * 8)
        e = w[1] * 8;
    return e;
}

/* measure(p, caps, runs, s): the fastest of ${runs} unlocks at ${p}: a
 * loaded machine only ever slows a run down. */
static int
measure(const struct pqv_kdf_params *p, const struct pqv_kdf_params *other,
    const struct kdf_caps *caps, int runs, double *s)
{
    for (int i = 0; i < runs; i++) {
        double x;
        int rc = kdf_time_unlock(p, other, caps, &x);
        if (rc != 0)
            return rc;
        if (i == 0 || x < *s)
            *s = x;
    }
    return 0;
}

/* off(s, target): how far ${s} is from ${target}, as a factor >= 1. */
static double
off(double s, double target)
{
    s = s > 1e-6 ? s : 1e-6;
    return s > target ? s / target : target / s;
}

int
kdf_calibrate(double target, uint32_t lanes, const struct pqv_kdf_params *other, int quick,
    const struct kdf_caps *caps, struct kdf_pick *out)
{
    const uint32_t least = round_m(8.0 * MIB, lanes, caps->m_kib);
    struct pqv_kdf_params p = { 1, least, lanes }, best;
    double s, best_s, w[2] = { 0, 0 }, ts[2] = { 0, 0 };
    double first = target / 4 < 1.0 ? target / 4 : 1.0;
    /* Quick (speed --quick): one run per cost and at most two corrected
     * costs, about 1.5 to 2.5 times the target in all. */
    int rc, n = 0, runs = target <= 5 && !quick ? 2 : 1, rounds = quick ? 2 : 4;

    memset(out, 0, sizeof(*out));
    /* Grow m at t = 1 until an unlock takes long enough to extrapolate
     * from (a quarter of the target, at most 1 s), or m reaches the cap.
     * Each time is the fastest of two runs (one above 5 s). */
    for (;;) {
        if ((rc = measure(&p, other, caps, runs, &s)) != 0)
            return rc;
        w[0] = w[1], ts[0] = ts[1], n++;
        w[1] = p.m_kib, ts[1] = s;
        best = p, best_s = s;   /* each larger, so nearer the target */
        if (s >= first || p.m_kib >= caps->m_kib)
            break;
        double f = s > 0 ? first / s : 8;
        f = f < 2 ? 2 : f > 8 ? 8 : f;
        p.m_kib = round_m((double)p.m_kib * f, lanes, caps->m_kib);
    }
    /* The time is about a constant (the other slot, starting threads,
     * touching pages) plus a part linear in m * t: estimate the work from
     * the last two measurements, measure the cost chosen, and correct from
     * that (at most four costs). */
    for (int round = 0; round < rounds; round++) {
        struct pqv_kdf_params q;
        if (off(s, target) < 1.15)
            break;   /* close enough, the growth's last cost included */
        choose(estimate(w, ts, n, target), least, lanes, caps, &q);
        if (memcmp(&q, &p, sizeof(q)) == 0)
            break;   /* the same cost again: s is its time */
        p = q;
        if ((rc = measure(&p, other, caps, runs, &s)) != 0)
            return rc;
        w[0] = w[1], ts[0] = ts[1], n++;
        w[1] = (double)p.m_kib * p.t_cost, ts[1] = s;
        if (off(s, target) < off(best_s, target))
            best = p, best_s = s;
    }
    /* The cost measured nearest the target, with its own time. */
    p = best, s = best_s;
    out->p = p;
    out->seconds = s;
    out->short_of_target = p.m_kib >= caps->m_kib && p.t_cost >= caps->t_cost &&
        s < target * 0.87;
    out->over_target = p.t_cost == 1 && p.m_kib <= least && s > target * 1.15;
    return 0;
}

void
kdf_format_mem(char *buf, size_t n, uint32_t m_kib)
{
    if (m_kib % MIB == 0)
        snprintf(buf, n, "%u MiB", m_kib / MIB);
    else
        snprintf(buf, n, "%u KiB", m_kib);
}

void
kdf_format_time(char *buf, size_t n, double seconds)
{
    if (seconds < 0.9995)
        snprintf(buf, n, "%.0f ms", seconds * 1e3);
    else
        snprintf(buf, n, "%.1f s", seconds);
}
