/* pool.c - the CPU thread pool (pool.h).
 *
 * threads - 1 workers wait on a condition variable for the next round (a
 * generation counter under the mutex); a round runs the task on every
 * thread, the caller's as band 0, and a barrier tells the caller that every
 * band has returned. pc_pool_barrier is the same barrier, for a task that
 * has several passes.
 */
#include "pool.h"

#include "core.h"
#include "errmsg.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct pc_pool {
    int nthreads;
    pthread_t *threads; /* nthreads - 1 workers */
    int started;        /* how many of them were created */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_barrier_t bar;
    int have_barrier;
    uint64_t gen; /* incremented per round, under mu */
    int quit;
    pc_band_fn task; /* with gen, under mu */
    void *task_arg;
};

typedef struct worker_arg {
    pc_pool *pool;
    int index;
} worker_arg;

static void *worker_main(void *p)
{
    worker_arg *wa = p;
    pc_pool *pool = wa->pool;
    int index = wa->index;
    free(wa);
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool->mu);
        while (pool->gen == seen && !pool->quit)
            pthread_cond_wait(&pool->cv, &pool->mu);
        int quit = pool->quit;
        seen = pool->gen;
        pc_band_fn task = pool->task;
        void *task_arg = pool->task_arg;
        pthread_mutex_unlock(&pool->mu);
        if (quit)
            return NULL;
        task(task_arg, index, pool->nthreads);
        pthread_barrier_wait(&pool->bar);
    }
}

int pc_pool_open(pc_pool **out, int threads, const char *name, char *err, size_t errlen)
{
    if (!out) {
        pc_set_err(err, errlen, "thread pool: output pointer is NULL");
        return PC_EINVAL;
    }
    *out = NULL;
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (threads > PC_POOL_MAX_THREADS)
        threads = PC_POOL_MAX_THREADS;
    pc_pool *pool = calloc(1, sizeof *pool);
    if (!pool) {
        pc_set_err(err, errlen, "thread pool: out of memory");
        return PC_ENOMEM;
    }
    pool->nthreads = threads;
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->cv, NULL);
    if (pthread_barrier_init(&pool->bar, NULL, (unsigned)threads) != 0) {
        pc_set_err(err, errlen, "thread pool: pthread_barrier_init(%d) failed", threads);
        pc_pool_close(pool);
        return PC_ENOMEM;
    }
    pool->have_barrier = 1;
    if (threads > 1) {
        pool->threads = calloc((size_t)threads - 1, sizeof *pool->threads);
        if (!pool->threads) {
            pc_set_err(err, errlen, "thread pool: out of memory");
            pc_pool_close(pool);
            return PC_ENOMEM;
        }
        for (int i = 1; i < threads; i++) {
            worker_arg *wa = malloc(sizeof *wa);
            if (wa) {
                wa->pool = pool;
                wa->index = i;
            }
            int e = wa ? pthread_create(&pool->threads[i - 1], NULL, worker_main, wa) : -1;
            if (e != 0) {
                free(wa);
                pc_set_err(err, errlen, "thread pool: cannot start worker thread %d of %d", i, threads);
                pc_pool_close(pool);
                return PC_ENOMEM;
            }
            pool->started++;
            char tname[16];
            snprintf(tname, sizeof tname, "%.10s-%d", name ? name : "pc-pool", i);
            pthread_setname_np(pool->threads[i - 1], tname);
        }
    }
    *out = pool;
    return PC_OK;
}

void pc_pool_close(pc_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->mu);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->cv);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->started; i++)
        pthread_join(pool->threads[i], NULL);
    free(pool->threads);
    if (pool->have_barrier)
        pthread_barrier_destroy(&pool->bar);
    pthread_cond_destroy(&pool->cv);
    pthread_mutex_destroy(&pool->mu);
    free(pool);
}

int pc_pool_threads(const pc_pool *pool) { return pool ? pool->nthreads : 0; }

void pc_pool_run(pc_pool *pool, pc_band_fn fn, void *arg)
{
    if (pool->nthreads == 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&pool->mu);
    pool->task = fn;
    pool->task_arg = arg;
    pool->gen++;
    pthread_cond_broadcast(&pool->cv);
    pthread_mutex_unlock(&pool->mu);
    fn(arg, 0, pool->nthreads);
    pthread_barrier_wait(&pool->bar); /* every band returned */
}

void pc_pool_barrier(pc_pool *pool)
{
    if (pool->nthreads > 1)
        pthread_barrier_wait(&pool->bar);
}
