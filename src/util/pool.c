/*
 * pool.c: the bounded worker pool (see pool.h).
 */
#include "util/pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/util.h"

#define MAX_THREADS 16

struct pqv_pool {
    pthread_mutex_t mutex;
    pthread_cond_t work;       /* a job was queued, or stopping */
    pthread_cond_t finished;   /* a job completed */
    struct pqv_job *head, *tail;
    int stopping;
    unsigned nthreads;
    pthread_t threads[MAX_THREADS];
};

static void *
worker(void *arg)
{
    pqv_pool *pool = arg;

    pthread_mutex_lock(&pool->mutex);
    for (;;) {
        while (pool->head == NULL && !pool->stopping)
            pthread_cond_wait(&pool->work, &pool->mutex);
        if (pool->head == NULL)
            break;
        struct pqv_job *job = pool->head;
        pool->head = job->next;
        if (pool->head == NULL)
            pool->tail = NULL;
        pthread_mutex_unlock(&pool->mutex);
        job->run(job);
        if (job->rc != 0)
            snprintf(job->detail, sizeof(job->detail), "%s", pqv_error_detail());
        pthread_mutex_lock(&pool->mutex);
        job->done = 1;
        pthread_cond_broadcast(&pool->finished);
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

pqv_pool *
pqv_pool_new(unsigned threads)
{
    pqv_pool *pool;

    if (threads == 0) {
        /* Sealing is CPU work, but every object also waits on an fsync:
         * twice the CPUs keeps both the cores and the disk busy. */
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus < 1 ? 2 : (unsigned)(2 * cpus);
        if (threads < 4)
            threads = 4;
    }
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if ((pool = calloc(1, sizeof(*pool))) == NULL)
        return NULL;
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->work, NULL);
    pthread_cond_init(&pool->finished, NULL);
    for (unsigned i = 0; i < threads; i++) {
        if (pthread_create(&pool->threads[i], NULL, worker, pool) != 0)
            break;
        pool->nthreads++;
    }
    if (pool->nthreads == 0) {
        pqv_pool_free(pool);
        return NULL;
    }
    return pool;
}

unsigned
pqv_pool_threads(const pqv_pool *pool)
{
    return pool->nthreads;
}

void
pqv_pool_submit(pqv_pool *pool, struct pqv_job *job)
{
    job->done = 0;
    job->rc = 0;
    job->detail[0] = '\0';
    job->next = NULL;
    pthread_mutex_lock(&pool->mutex);
    if (pool->tail != NULL)
        pool->tail->next = job;
    else
        pool->head = job;
    pool->tail = job;
    pthread_cond_signal(&pool->work);
    pthread_mutex_unlock(&pool->mutex);
}

int
pqv_pool_wait(pqv_pool *pool, struct pqv_job *job)
{
    pthread_mutex_lock(&pool->mutex);
    while (!job->done)
        pthread_cond_wait(&pool->finished, &pool->mutex);
    pthread_mutex_unlock(&pool->mutex);
    if (job->rc != 0 && job->detail[0] != '\0')
        pqv_set_error(job->rc, "%s", job->detail);
    return job->rc;
}

void
pqv_pool_free(pqv_pool *pool)
{
    if (pool == NULL)
        return;
    pthread_mutex_lock(&pool->mutex);
    pool->stopping = 1;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->mutex);
    for (unsigned i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->work);
    pthread_cond_destroy(&pool->finished);
    pthread_mutex_destroy(&pool->mutex);
    free(pool);
}
