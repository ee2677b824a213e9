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

struct pool {
    pthread_mutex_t mutex;
    pthread_cond_t work;       /* a job was queued, or stopping */
    pthread_cond_t finished;   /* a job completed */
    struct pool_job *head, *tail;
    int stopping;
    unsigned nthreads;
    pthread_t threads[MAX_THREADS];
};

static void *
worker(void *arg)
{
    struct pool *pool = arg;

    pthread_mutex_lock(&pool->mutex);
    for (;;) {
        while (pool->head == NULL && !pool->stopping)
            pthread_cond_wait(&pool->work, &pool->mutex);
        if (pool->head == NULL)
            break;
        struct pool_job *job = pool->head;
        pool->head = job->next;
        if (pool->head == NULL)
            pool->tail = NULL;
        pthread_mutex_unlock(&pool->mutex);
        job->run(job);
        if (job->rc != 0)
            error_save(&job->error);
        pthread_mutex_lock(&pool->mutex);
        job->done = 1;
        pthread_cond_broadcast(&pool->finished);
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

struct pool *
pool_new(unsigned threads)
{
    struct pool *pool;

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
        pool_free(pool);
        return NULL;
    }
    return pool;
}

unsigned
pool_threads(const struct pool *pool)
{
    return pool->nthreads;
}

void
pool_submit(struct pool *pool, struct pool_job *job)
{
    job->done = 0;
    job->rc = 0;
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
pool_wait(struct pool *pool, struct pool_job *job)
{
    pthread_mutex_lock(&pool->mutex);
    while (!job->done)
        pthread_cond_wait(&pool->finished, &pool->mutex);
    pthread_mutex_unlock(&pool->mutex);
    if (job->rc != 0)
        error_restore(&job->error);
    return job->rc;
}

void
pool_free(struct pool *pool)
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
