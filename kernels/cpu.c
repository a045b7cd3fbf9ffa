/* cpu.c - the multi-threaded CPU demosaicing backend.
 *
 * The core's thread pool (pool.h), created once in pc_cpu_open together
 * with the full-frame temporaries, runs the reference's pass functions
 * (reference_passes.h) on horizontal bands of row pairs: band i of n covers
 * row pairs [i*P/n, (i+1)*P/n). A barrier separates the passes (pass p+1
 * reads pass p's output across band edges), and the pool's last barrier
 * tells the caller that the frame is complete. The caller's thread works as
 * band 0, so n threads means n-1 pool threads. Because the pass code is the
 * same, the output is bit-identical to pc_ref_debayer.
 *
 * An algorithm with its own code (algo_impl.h) runs its cpu_run, which
 * hands bands to the same threads through pc_cpu_parallel (or its
 * reference when it has no cpu_run).
 *
 * One pc_cpu_debayer call at a time per context (calls are serialised by a
 * mutex); nothing is allocated after pc_cpu_open, except the scratch of an
 * own-code algorithm that needs more than the stencil temporaries (once,
 * by pc_cpu_prepare or its first frame).
 */
#include "colour.h"
#include "net_impl.h"
#include "reference_passes.h"

#include "algo_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pc_cpu {
    int width, height;
    uint8_t *temp;
    size_t temp_bytes;
    pc_pool *pool;

    pthread_mutex_t call_mu; /* one frame at a time */
    pc_job job;              /* the frame being processed */
    /* Colour stage of pc_cpu_debayer_raw (pre_n == 0: none): the slabs,
     * mapped into bayer (width x height) before pass 0. */
    const pc_raw_slab *pre;
    int pre_n, pre_h;
    uint8_t *bayer;
    /* the learned demosaic (net_impl.h): the weights set (borrowed), else
     * the default file's (owned), and its line buffers */
    const pc_net *net;
    pc_net *own_net;
    uint8_t *net_temp;
    size_t net_temp_bytes;
};

/* Colour stage: rows [y0, y1) of the panorama from the camera slabs
 * they fall in, through their tables, into cpu->bayer. */
static void map_rows(pc_cpu *cpu, const pc_raw_slab *slabs, int n, int slab_h, int w, int y0, int y1)
{
    for (int s = y0 / slab_h; s < n && s * slab_h < y1; s++) {
        int a = y0 - s * slab_h, b = y1 - s * slab_h;
        a = a < 0 ? 0 : a;
        b = b > slab_h ? slab_h : b;
        pc_colour_rows(&slabs[s].fmt, slabs[s].tables, slabs[s].data, slabs[s].pitch, w, a, b,
                       cpu->bayer + (size_t)s * slab_h * w, (size_t)w);
    }
}

/* The pending job's passes on band `index` of n (a pc_pool_run task): the
 * pool's barrier between the passes, its last one after the task. */
static void job_band(void *arg, int index, int n)
{
    pc_cpu *cpu = arg;
    /* A private copy: after the last barrier the caller may already be
     * setting up the next frame in cpu->job. */
    const pc_job jobcopy = cpu->job;
    const pc_job *job = &jobcopy;
    int pairs = job->h / 2;
    int y0 = 2 * (int)((int64_t)pairs * index / n);
    int y1 = 2 * (int)((int64_t)pairs * (index + 1) / n);
    if (cpu->pre_n) {
        /* this band's rows of every slab they fall in, then wait: pass 0
         * reads across band edges */
        map_rows(cpu, cpu->pre, cpu->pre_n, cpu->pre_h, job->w, y0, y1);
        if (job->npasses)
            pc_pool_barrier(cpu->pool);
    }
    for (int p = 0; p < job->npasses; p++) {
        pc_job_pass(job, p, y0, y1);
        if (p + 1 < job->npasses)
            pc_pool_barrier(cpu->pool);
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
    pc_cpu *cpu = calloc(1, sizeof *cpu);
    if (!cpu) {
        pc_set_err(err, errlen, "CPU backend: out of memory");
        return PC_ENOMEM;
    }
    cpu->width = width;
    cpu->height = height;
    pthread_mutex_init(&cpu->call_mu, NULL);
    cpu->temp_bytes = (size_t)PC_JOB_MAX_PLANES * (size_t)width * (size_t)height;
    if (posix_memalign((void **)&cpu->temp, 64, cpu->temp_bytes) != 0) {
        pc_set_err(err, errlen, "CPU backend %dx%d: cannot allocate %zu bytes of temporaries",
                   width, height, cpu->temp_bytes);
        cpu->temp = NULL;
        pc_cpu_close(cpu);
        return PC_ENOMEM;
    }
    /* Touch the temporaries once so the first frame does not page-fault. */
    memset(cpu->temp, 0, cpu->temp_bytes);
    rc = pc_pool_open(&cpu->pool, threads, "pc-cpu", err, errlen);
    if (rc) {
        pc_cpu_close(cpu);
        return rc;
    }
    *out = cpu;
    return PC_OK;
}

void pc_cpu_parallel(pc_cpu *cpu, pc_band_fn fn, void *arg) { pc_pool_run(cpu->pool, fn, arg); }

pc_pool *pc_cpu_pool(pc_cpu *cpu) { return cpu ? cpu->pool : NULL; }

/* Grows the scratch to what d needs for width x height (under call_mu). */
static int reserve_temp(pc_cpu *cpu, const pc_algo_desc *d, int width, int height, char *err, size_t errlen)
{
    size_t need = d->impl && d->impl->temp_bytes ? d->impl->temp_bytes(width, height) : 0;
    if (need <= cpu->temp_bytes)
        return PC_OK;
    uint8_t *t = NULL;
    if (posix_memalign((void **)&t, 64, need) != 0) {
        pc_set_err(err, errlen, "CPU backend %dx%d, %s: cannot allocate %zu bytes of scratch", width, height, d->name,
                   need);
        return PC_ENOMEM;
    }
    memset(t, 0, need);
    free(cpu->temp);
    cpu->temp = t;
    cpu->temp_bytes = need;
    return PC_OK;
}

int pc_cpu_prepare(pc_cpu *cpu, pc_algo_id algo, char *err, size_t errlen)
{
    const pc_algo_desc *d = pc_algo_get(algo);
    if (!cpu || !d) {
        pc_set_err(err, errlen, "pc_cpu_prepare: %s", cpu ? "unknown algorithm" : "context is NULL");
        return PC_EINVAL;
    }
    pthread_mutex_lock(&cpu->call_mu);
    int rc = reserve_temp(cpu, d, cpu->width, cpu->height, err, errlen);
    if (!rc && d->impl && d->impl->cpu_prepare)
        rc = d->impl->cpu_prepare(cpu, err, errlen);
    pthread_mutex_unlock(&cpu->call_mu);
    return rc;
}

int pc_cpu_width(const pc_cpu *cpu) { return cpu ? cpu->width : 0; }

void pc_cpu_set_net(pc_cpu *cpu, const pc_net *net)
{
    pthread_mutex_lock(&cpu->call_mu);
    cpu->net = net;
    pthread_mutex_unlock(&cpu->call_mu);
}

/* under call_mu (cpu_run, cpu_prepare) */
const pc_net *pc_cpu_get_net(pc_cpu *cpu, char *err, size_t errlen)
{
    if (cpu->net)
        return cpu->net;
    if (!cpu->own_net && pc_net_load(&cpu->own_net, pc_net_default_path(), err, errlen) != PC_OK)
        return NULL;
    return cpu->own_net;
}

/* under call_mu */
int pc_cpu_net_scratch(pc_cpu *cpu, size_t bytes, uint8_t **out, char *err, size_t errlen)
{
    if (bytes > cpu->net_temp_bytes) {
        uint8_t *t = NULL;
        if (posix_memalign((void **)&t, 64, bytes) != 0) {
            pc_set_err(err, errlen, "CPU backend, net: cannot allocate %zu bytes of line buffers", bytes);
            return PC_ENOMEM;
        }
        memset(t, 0, bytes);
        free(cpu->net_temp);
        cpu->net_temp = t;
        cpu->net_temp_bytes = bytes;
    }
    if (out)
        *out = cpu->net_temp;
    return PC_OK;
}

/* An algorithm with its own code: its cpu_run on the pool, or its
 * reference on this thread. */
static int own_debayer(pc_cpu *cpu, const pc_algo_desc *d, const pc_bayer *src, const pc_picture *dst, char *err,
                       size_t errlen)
{
    int rc = pc_debayer_check(d->id, src, dst, err, errlen);
    if (rc)
        return rc;
    if (!d->impl->cpu_run)
        return d->impl->ref_run(src, dst, err, errlen);
    pthread_mutex_lock(&cpu->call_mu);
    rc = reserve_temp(cpu, d, src->width, src->height, err, errlen);
    if (!rc)
        rc = d->impl->cpu_run(cpu, cpu->temp, src, dst, err, errlen);
    pthread_mutex_unlock(&cpu->call_mu);
    return rc;
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
    const pc_algo_desc *d = pc_algo_get(algo);
    if (d && d->impl)
        return own_debayer(cpu, d, src, dst, err, errlen);
    pthread_mutex_lock(&cpu->call_mu);
    pc_job job;
    int rc = pc_job_setup(&job, algo, src, dst, cpu->temp, cpu->temp_bytes, err, errlen);
    if (rc) {
        pthread_mutex_unlock(&cpu->call_mu);
        return rc;
    }
    cpu->job = job;
    pc_pool_run(cpu->pool, job_band, cpu); /* returns when all bands are done */
    pthread_mutex_unlock(&cpu->call_mu);
    return PC_OK;
}

int pc_cpu_threads(const pc_cpu *cpu) { return cpu ? pc_pool_threads(cpu->pool) : 0; }

void pc_cpu_close(pc_cpu *cpu)
{
    if (!cpu)
        return;
    pc_pool_close(cpu->pool);
    pthread_mutex_destroy(&cpu->call_mu);
    free(cpu->temp);
    free(cpu->bayer);
    free(cpu->net_temp);
    pc_net_free(cpu->own_net);
    free(cpu);
}

/* The colour stage as a pc_cpu_parallel task (own-code algorithms). */
typedef struct colour_task {
    pc_cpu *cpu;
    const pc_raw_slab *slabs;
    int n, slab_h, w, h;
} colour_task;

static void colour_band(void *arg, int band, int nbands)
{
    colour_task *t = arg;
    int pairs = t->h / 2;
    int y0 = 2 * (int)((int64_t)pairs * band / nbands), y1 = 2 * (int)((int64_t)pairs * (band + 1) / nbands);
    map_rows(t->cpu, t->slabs, t->n, t->slab_h, t->w, y0, y1);
}

int pc_cpu_debayer_raw(pc_cpu *cpu, pc_algo_id algo, const pc_raw_slab *slabs, int n, int slab_h,
                       const pc_picture *dst, char *err, size_t errlen)
{
    int sw = 0, sh = 0; /* the source's size (a grid picture's differs from its own) */
    if (dst)
        pc_picture_source_size(dst, &sw, &sh);
    if (!cpu || !slabs || !dst || n < 1 || slab_h < 2 || (slab_h & 1) || (long)n * slab_h != sh) {
        pc_set_err(err, errlen, "CPU backend colour stage: %d slabs of %d rows do not make the %d-row picture", n,
                   slab_h, sh);
        return PC_EINVAL;
    }
    for (int s = 0; s < n; s++)
        if (!slabs[s].data || !slabs[s].tables || slabs[s].tables->bits != slabs[s].fmt.bits ||
            slabs[s].fmt.cfa != slabs[0].fmt.cfa) {
            pc_set_err(err, errlen, "CPU backend colour stage: slab %d has no data, no tables, tables for another "
                       "bit depth or another CFA phase than slab 0", s);
            return PC_EINVAL;
        }
    if ((size_t)sw * (size_t)sh > (size_t)cpu->width * (size_t)cpu->height) {
        pc_set_err(err, errlen, "CPU backend opened for %dx%d cannot take a %dx%d frame", cpu->width, cpu->height,
                   sw, sh);
        return PC_EINVAL;
    }
    if (!cpu->bayer && !(cpu->bayer = malloc((size_t)cpu->width * cpu->height))) {
        pc_set_err(err, errlen, "CPU backend colour stage: out of memory");
        return PC_ENOMEM;
    }
    /* each slab is a camera (net demosaics them one by one) */
    pc_bayer src = {cpu->bayer, (size_t)sw, sw, sh, slabs[0].fmt.cfa, slab_h >= PC_MIN_DIM ? slab_h : 0};
    const pc_algo_desc *d = pc_algo_get(algo);
    if (d && d->impl) {
        /* an algorithm with its own code: map the slabs on the pool, then
         * run it on the 8-bit panorama */
        colour_task t = {cpu, slabs, n, slab_h, sw, sh};
        pthread_mutex_lock(&cpu->call_mu);
        pc_cpu_parallel(cpu, colour_band, &t);
        pthread_mutex_unlock(&cpu->call_mu);
        return own_debayer(cpu, d, &src, dst, err, errlen);
    }
    pthread_mutex_lock(&cpu->call_mu);
    pc_job job;
    int rc = pc_job_setup(&job, algo, &src, dst, cpu->temp, cpu->temp_bytes, err, errlen);
    if (rc) {
        pthread_mutex_unlock(&cpu->call_mu);
        return rc;
    }
    cpu->job = job;
    cpu->pre = slabs;
    cpu->pre_n = n;
    cpu->pre_h = slab_h;
    pc_pool_run(cpu->pool, job_band, cpu); /* returns when all bands are done */
    cpu->pre_n = 0;
    pthread_mutex_unlock(&cpu->call_mu);
    return PC_OK;
}
