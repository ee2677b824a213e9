/*
 * pool.h: a bounded worker pool.  Jobs are queued in order and run by a
 * fixed number of threads; a caller waits for a particular job, which lets
 * it bound the number of jobs (and buffers) in flight and consume results
 * in order while later jobs are still running.
 */
#ifndef PQV_POOL_H
#define PQV_POOL_H

struct pqv_job {
    void (*run)(struct pqv_job *job);  /* sets job->rc */
    int rc;
    int done;                          /* set by the pool, under its mutex */
    char detail[256];                  /* error detail of a failed run, carried
                                          to the waiting thread (details are
                                          per thread) */
    struct pqv_job *next;
};

typedef struct pqv_pool pqv_pool;

/* pqv_pool_new(threads): a pool of ${threads} workers (0: a default from the
 * number of CPUs), or NULL. */
pqv_pool *pqv_pool_new(unsigned threads);

/* pqv_pool_threads(pool): the number of workers. */
unsigned pqv_pool_threads(const pqv_pool *pool);

/* pqv_pool_submit(pool, job): queue ${job}; never blocks. */
void pqv_pool_submit(pqv_pool *pool, struct pqv_job *job);

/* pqv_pool_wait(pool, job): block until ${job} has run; returns job->rc. */
int pqv_pool_wait(pqv_pool *pool, struct pqv_job *job);

/* pqv_pool_free(pool): finish queued jobs, stop the workers, free. */
void pqv_pool_free(pqv_pool *pool);

#endif
