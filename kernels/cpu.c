/* cpu.c - the multi-threaded CPU demosaicing backend.
 *
 * A persistent pool of threads, created once in pc_cpu_open together with
 * the full-frame temporaries, runs the reference's pass functions
 * (reference_passes.h) on horizontal bands of row pairs: band i of n covers
 * row pairs [i*P/n, (i+1)*P/n). A barrier separates the passes (pass p+1
 * reads pass p's output across band edges), and a last barrier tells the
 * caller that the frame is complete. The caller's thread works as band 0,
 * so n threads means n-1 pool threads. Because the pass code is the same,
 * the output is bit-identical to pc_ref_debayer.
 *
 * MLRI (mlri.h) runs the same way over its own float planes and stages,
 * with a private scratch row buffer per band; its temporaries (28 bytes per
 * pixel plus 16 bytes per column and thread) are allocated in pc_cpu_open
 * too, so switching to it costs nothing.
 *
 * One pc_cpu_debayer call at a time per context (calls are serialised by a
 * mutex); nothing is allocated after pc_cpu_open.
 */
#include "reference_passes.h"
#include "mlri.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PC_CPU_MAX_THREADS 256

struct pc_cpu {
    int nthreads;
    int width, height;
    uint8_t *temp;
    size_t temp_bytes;
    float *mtemp;        /* MLRI planes, then one scratch per thread */
    size_t mplane_floats, mscratch_floats;

    pthread_t *threads; /* nthreads - 1 pool threads */
    int started;        /* how many of them were created */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_barrier_t bar;
    int have_barrier;
    uint64_t gen; /* incremented per frame, under mu */
    int quit;

    pthread_mutex_t call_mu; /* one frame at a time */
    pc_job job;              /* the frame being processed */
    int is_mlri;             /* this frame runs mjob instead of job */
    pc_mlri_job mjob;
};

typedef struct worker_arg {
    pc_cpu *cpu;
    int index;
} worker_arg;

static void run_band(pc_cpu *cpu, int index)
{
    /* A private copy: after the last barrier the caller may already be
     * setting up the next frame in cpu->job. */
    const pc_job jobcopy = cpu->job;
    const pc_job *job = &jobcopy;
    int n = cpu->nthreads;
    if (cpu->is_mlri) {
        const pc_mlri_job mj = cpu->mjob;
        int pairs = mj.h / 2;
        int y0 = 2 * (int)((int64_t)pairs * index / n);
        int y1 = 2 * (int)((int64_t)pairs * (index + 1) / n);
        float *scratch = cpu->mtemp + cpu->mplane_floats + (size_t)index * cpu->mscratch_floats;
        for (int s = 0; s < PC_MLRI_STAGES; s++) {
            pc_mlri_stage(&mj, s, y0, y1, scratch);
            pthread_barrier_wait(&cpu->bar);
        }
        return;
    }
    int pairs = job->h / 2;
    int y0 = 2 * (int)((int64_t)pairs * index / n);
    int y1 = 2 * (int)((int64_t)pairs * (index + 1) / n);
    for (int p = 0; p < job->npasses; p++) {
        pc_job_pass(job, p, y0, y1);
        pthread_barrier_wait(&cpu->bar);
    }
}

static void *worker_main(void *p)
{
    worker_arg *wa = p;
    pc_cpu *cpu = wa->cpu;
    int index = wa->index;
    free(wa);
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&cpu->mu);
        while (cpu->gen == seen && !cpu->quit)
            pthread_cond_wait(&cpu->cv, &cpu->mu);
        int quit = cpu->quit;
        seen = cpu->gen;
        pthread_mutex_unlock(&cpu->mu);
        if (quit)
            return NULL;
        run_band(cpu, index);
    }
}

int pc_cpu_open(pc_cpu **out, int threads, int width, int height, char *err, size_t errlen)
{
    if (!out) {
        pc_set_err(err, errlen, "CPU backend: output pointer is NULL");
        return PC_EINVAL;
    }
    *out = NULL;
    int rc = pc_check_size(width, height, err, errlen);
    if (rc)
        return rc;
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (threads > PC_CPU_MAX_THREADS)
        threads = PC_CPU_MAX_THREADS;

    pc_cpu *cpu = calloc(1, sizeof *cpu);
    if (!cpu) {
        pc_set_err(err, errlen, "CPU backend: out of memory");
        return PC_ENOMEM;
    }
    cpu->nthreads = threads;
    cpu->width = width;
    cpu->height = height;
    cpu->temp_bytes = (size_t)PC_JOB_MAX_PLANES * (size_t)width * (size_t)height;
    if (posix_memalign((void **)&cpu->temp, 64, cpu->temp_bytes) != 0) {
        pc_set_err(err, errlen, "CPU backend %dx%d: cannot allocate %zu bytes of temporaries",
                   width, height, cpu->temp_bytes);
        free(cpu);
        return PC_ENOMEM;
    }
    cpu->mplane_floats = PC_MLRI_PLANES * (size_t)width * (size_t)height;
    cpu->mscratch_floats = pc_mlri_scratch_floats(width);
    size_t mbytes = (cpu->mplane_floats + (size_t)threads * cpu->mscratch_floats) * sizeof(float);
    if (posix_memalign((void **)&cpu->mtemp, 64, mbytes) != 0) {
        pc_set_err(err, errlen, "CPU backend %dx%d: cannot allocate %zu bytes of mlri temporaries",
                   width, height, mbytes);
        free(cpu->temp);
        free(cpu);
        return PC_ENOMEM;
    }
    /* Touch the temporaries once so the first frame does not page-fault. */
    memset(cpu->temp, 0, cpu->temp_bytes);
    memset(cpu->mtemp, 0, mbytes);
    pthread_mutex_init(&cpu->mu, NULL);
    pthread_mutex_init(&cpu->call_mu, NULL);
    pthread_cond_init(&cpu->cv, NULL);
    if (pthread_barrier_init(&cpu->bar, NULL, (unsigned)threads) != 0) {
        pc_set_err(err, errlen, "CPU backend: pthread_barrier_init(%d) failed", threads);
        pc_cpu_close(cpu);
        return PC_ENOMEM;
    }
    cpu->have_barrier = 1;
    if (threads > 1) {
        cpu->threads = calloc((size_t)threads - 1, sizeof *cpu->threads);
        if (!cpu->threads) {
            pc_set_err(err, errlen, "CPU backend: out of memory");
            pc_cpu_close(cpu);
            return PC_ENOMEM;
        }
        for (int i = 1; i < threads; i++) {
            worker_arg *wa = malloc(sizeof *wa);
            if (wa) {
                wa->cpu = cpu;
                wa->index = i;
            }
            int e = wa ? pthread_create(&cpu->threads[i - 1], NULL, worker_main, wa) : -1;
            if (e != 0) {
                free(wa);
                pc_set_err(err, errlen, "CPU backend: cannot start worker thread %d of %d", i, threads);
                pc_cpu_close(cpu);
                return PC_ENOMEM;
            }
            cpu->started++;
            char name[16];
            snprintf(name, sizeof name, "pc-cpu-%d", i);
            pthread_setname_np(cpu->threads[i - 1], name);
        }
    }
    *out = cpu;
    return PC_OK;
}

int pc_cpu_debayer(pc_cpu *cpu, pc_algo_id algo, const pc_bayer *src, const pc_picture *dst,
                   char *err, size_t errlen)
{
    if (!cpu) {
        pc_set_err(err, errlen, "CPU backend: context is NULL");
        return PC_EINVAL;
    }
    /* Frames of any valid size up to the opened pixel count fit the
     * temporaries (their planes are pitched by the frame width). */
    if (src && pc_check_size(src->width, src->height, NULL, 0) == PC_OK &&
        (size_t)src->width * (size_t)src->height > (size_t)cpu->width * (size_t)cpu->height) {
        pc_set_err(err, errlen, "CPU backend opened for %dx%d cannot take a %dx%d frame",
                   cpu->width, cpu->height, src->width, src->height);
        return PC_EINVAL;
    }
    /* MLRI's per-thread scratch rows are as wide as the opened width. */
    if (algo == PC_ALGO_MLRI && src && src->width > cpu->width) {
        pc_set_err(err, errlen, "CPU backend opened for %dx%d cannot take a %dx%d mlri frame (wider)",
                   cpu->width, cpu->height, src->width, src->height);
        return PC_EINVAL;
    }
    pthread_mutex_lock(&cpu->call_mu);
    pc_job job;
    memset(&job, 0, sizeof job);
    int is_mlri = algo == PC_ALGO_MLRI;
    int rc = is_mlri ? pc_mlri_setup(&cpu->mjob, src, dst, cpu->mtemp, cpu->mplane_floats, err, errlen)
                     : pc_job_setup(&job, algo, src, dst, cpu->temp, cpu->temp_bytes, err, errlen);
    if (rc) {
        pthread_mutex_unlock(&cpu->call_mu);
        return rc;
    }
    cpu->job = job;
    cpu->is_mlri = is_mlri;
    if (cpu->nthreads > 1) {
        pthread_mutex_lock(&cpu->mu);
        cpu->gen++;
        pthread_cond_broadcast(&cpu->cv);
        pthread_mutex_unlock(&cpu->mu);
        run_band(cpu, 0); /* returns after the last barrier: all bands done */
    } else if (is_mlri) {
        for (int s = 0; s < PC_MLRI_STAGES; s++)
            pc_mlri_stage(&cpu->mjob, s, 0, cpu->mjob.h, cpu->mtemp + cpu->mplane_floats);
    } else {
        for (int p = 0; p < job.npasses; p++)
            pc_job_pass(&cpu->job, p, 0, job.h);
    }
    pthread_mutex_unlock(&cpu->call_mu);
    return PC_OK;
}

int pc_cpu_threads(const pc_cpu *cpu) { return cpu ? cpu->nthreads : 0; }

void pc_cpu_close(pc_cpu *cpu)
{
    if (!cpu)
        return;
    pthread_mutex_lock(&cpu->mu);
    cpu->quit = 1;
    pthread_cond_broadcast(&cpu->cv);
    pthread_mutex_unlock(&cpu->mu);
    for (int i = 0; i < cpu->started; i++)
        pthread_join(cpu->threads[i], NULL);
    free(cpu->threads);
    if (cpu->have_barrier)
        pthread_barrier_destroy(&cpu->bar);
    pthread_cond_destroy(&cpu->cv);
    pthread_mutex_destroy(&cpu->mu);
    pthread_mutex_destroy(&cpu->call_mu);
    free(cpu->temp);
    free(cpu->mtemp);
    free(cpu);
}
