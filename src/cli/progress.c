/*
 * src/cli/progress.c: a progress bar on stderr, drawn only when stderr is
 * a terminal and -q was not given, at most ten times a second.  The
 * library may call the callback from worker threads: a mutex serialises it.
 * Anything else printed while a bar is shown (messages, --verbose lines,
 * the interrupt message) clears its line first and draws it again after
 * (progress_hide, progress_show), so the two never share a line.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

struct progress {
    pthread_mutex_t mu;
    const char *label;
    double start, last;
    int drawn;
    char line[160];   /* what is drawn, to draw again after a message */
};

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The bar being drawn, so that messages can clear its line first. */
static _Atomic(struct progress *) active;
/* Whether a bar's line is on the terminal now: read by the interrupt
 * handler, which may not take the mutex. */
static volatile sig_atomic_t line_shown;

int
progress_line_shown(void)
{
    return line_shown;
}

struct progress *
progress_hide(void)
{
    struct progress *p = active;
    if (!p)
        return NULL;
    /* Held until progress_show: no worker draws the bar mid-message. */
    pthread_mutex_lock(&p->mu);
    if (p->drawn && line_shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        line_shown = 0;
    }
    return p;
}

void
progress_show(struct progress *p)
{
    if (!p)
        return;
    if (p->drawn) {
        fprintf(stderr, "\r%s\033[K", p->line);
        fflush(stderr);
        line_shown = 1;
    }
    pthread_mutex_unlock(&p->mu);
}

struct progress *
progress_new(const char *label)
{
    if (g_cli.quiet || !isatty(STDERR_FILENO))
        return NULL;
    struct progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    p->label = label;
    p->start = now();
    p->last = 0;
    active = p;
    return p;
}

void
progress_cb(void *ctx, uint64_t done, uint64_t total)
{
    struct progress *p = ctx;
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    double t = now();
    if (t - p->last < 0.1 && !(total && done >= total)) {
        pthread_mutex_unlock(&p->mu);
        return;
    }
    p->last = t;
    char d[32], tt[32], rate[32];
    format_bytes(d, sizeof(d), done);
    double el = t - p->start;
    format_bytes(rate, sizeof(rate), el > 0.05 ? (uint64_t)((double)done / el) : 0);
    char *line = p->line;
    size_t linelen = sizeof(p->line);
    if (total) {
        int pct = (int)(done >= total ? 100 : done * 100 / total);
        char bar[31];
        int fill = pct * 30 / 100;
        memset(bar, '#', (size_t)fill);
        memset(bar + fill, '.', (size_t)(30 - fill));
        bar[30] = '\0';
        format_bytes(tt, sizeof(tt), total);
        snprintf(line, linelen, "%s %3d%% [%s] %s / %s  %s/s", p->label,
            pct, bar, d, tt, rate);
    } else {
        snprintf(line, linelen, "%s %s  %s/s", p->label, d, rate);
    }
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn = 1;
    line_shown = 1;
    pthread_mutex_unlock(&p->mu);
}

void
progress_end(struct progress *p)
{
    if (!p)
        return;
    active = NULL;
    if (p->drawn) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    line_shown = 0;
    pthread_mutex_destroy(&p->mu);
    free(p);
}
