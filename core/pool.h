/* pool.h - the CPU thread pool: a fixed set of threads, started once, that
 * run one function on horizontal bands of a frame and return together.
 * The demosaic family's CPU backend (pc_cpu, debayer.h) and the render
 * family's CPU versions (render.h) run their bands on it.
 *
 * One pc_pool_run at a time per pool (the callers serialise: the CPU
 * backend's calls come from one thread). Nothing is allocated after
 * pc_pool_open.
 */
#ifndef PANOCAP_POOL_H
#define PANOCAP_POOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_pool pc_pool;

/* A band of work: called with band = 0..nbands-1, one band per thread, all
 * at once. */
typedef void (*pc_band_fn)(void *arg, int band, int nbands);

/* Most threads a pool runs (more requested are capped). */
#define PC_POOL_MAX_THREADS 256

/* threads <= 0: one per online CPU. threads - 1 are started (the caller
 * works as band 0), named "<name>-<i>" (name: at most 10 characters).
 * Returns 0 or PC_ENOMEM with a message. */
int pc_pool_open(pc_pool **out, int threads, const char *name, char *err, size_t errlen);
void pc_pool_close(pc_pool *pool);
int pc_pool_threads(const pc_pool *pool);

/* Runs fn(arg, band, n) on every thread of the pool (band 0 on the calling
 * thread) and returns when all have returned: one call per pass, so a pass
 * may read everything the previous call wrote. */
void pc_pool_run(pc_pool *pool, pc_band_fn fn, void *arg);

/* Inside a pc_pool_run function: waits until every band has reached it
 * (every band must call it the same number of times). For several passes
 * in one run. */
void pc_pool_barrier(pc_pool *pool);

#ifdef __cplusplus
}
#endif
#endif
