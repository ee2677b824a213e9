/*
 * pool.h: a bounded worker pool.  Jobs are queued in order and run by a
 * fixed number of threads; a caller waits for a particular job, which lets
 * it bound the number of jobs (and buffers) in flight and consume results
 * in order while later jobs are still running.
 */
#ifndef PQV_POOL_H
#define PQV_POOL_H

#include "util/error.h"

struct pool_job {
    void (*run)(struct pool_job *job);  /* sets job->rc */
    int rc;
    int done;                          /* set by the pool, under its mutex */
    struct error_saved error;          /* the failure of a failed run, carried
                                          to the waiting thread (errors are
                                          per thread) */
    struct pool_job *next;
};

struct pool;

/* pool_new(threads): a pool of ${threads} workers (0: a default from the
 * number of CPUs), or NULL. */
struct pool *pool_new(unsigned threads);

/* pool_threads(pool): the number of workers. */
unsigned pool_threads(const struct pool *pool);

/* pool_submit(pool, job): queue ${job}; never blocks. */
void pool_submit(struct pool *pool, struct pool_job *job);

/* pool_wait(pool, job): block until ${job} has run; returns job->rc. */
int pool_wait(struct pool *pool, struct pool_job *job);

/* pool_free(pool): finish queued jobs, stop the workers, free. */
void pool_free(struct pool *pool);

#endif
