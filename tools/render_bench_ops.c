/* render_bench_ops.c - panocap-bench --render, second part: what the
 * daemon's render step adds for virtual cameras and the follow mode, on
 * the first part's rig and cameras (render_bench.c):
 *
 *   moving views  a 1920x1080 view (and four) flying a pan/tilt/zoom path
 *                 (pan -60..60, hfov 50 -> 12 -> 50): per frame the host's
 *                 pc_render_plan_set_view (one core; the first call samples
 *                 the cameras' borders), then on the GPU the update (the
 *                 new ray terms and masks copied through pinned staging)
 *                 and the render, timed by CUDA events, next to the same
 *                 render of a view that does not move; the last frame
 *                 against the C reference of a plan built for its view.
 *   activity      the follow mode's activity map on a 1/8 panorama
 *                 (1076x162 NV12 rendered by the GPU), two renditions in
 *                 turn so that much of it is foreground: the kernel, the
 *                 counts' clear and their copy to pinned memory per call;
 *                 the counts against the reference; the CPU backend's
 *                 (the reference) per call.
 *   convert       the unstitched cameras 2040x5400 from RGB to NV12
 *                 (RGBX32, RGB24; and the grid of the 5 cameras with their
 *                 colour matrices), against pc_rgb_to_yuv byte for byte and
 *                 the memory floor; the CPU backend's on 2 and all CPUs.
 *
 * GPU timings: every call queued behind a host gate (a host function the
 * stream waits in until all are queued), CUDA events between them, so
 * they measure the GPU and not the host's launch rate; median and p99.
 */
#include "render_bench.h"

#include "activity.h"
#include "activity_cuda.h"
#include "colour.h"
#include "convert.h"
#include "convert_cuda.h"
#include "debayer_cuda.h"
#include "panocap_config.h"
#include "render.h"
#include "render_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if PANOCAP_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <sched.h>
#include <stdatomic.h>
#endif

#define VIEW_W 1920
#define VIEW_H 1080
#define NVIEWS 4
#define ACT_W 1076 /* the panorama (8600x1300) / 8, even */
#define ACT_H 162
#define ROT 3

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Median, p99 and max of n samples (sorts a copy). */
static void stats(const double *v, int n, double *med, double *p99, double *max)
{
    double *s = malloc(sizeof *s * n);
    memcpy(s, v, sizeof *s * n);
    pc_rbench_med_p99(s, n, med, p99);
    *max = s[n - 1];
    free(s);
}

/* Frame i of n of the path: pan -60 -> 60 -> -60, tilt -6..0, hfov 50 ->
 * 12 -> 50 (zooming in 4x: the masks' outlines are refined on the way). */
static void path(int i, int n, int k, double *pan, double *tilt, double *hfov)
{
    const double t = (double)i / n, PI = 3.14159265358979;
    *pan = -60.0 * cos(2 * PI * t) + 8.0 * k;
    *tilt = -3.0 - 3.0 * sin(4 * PI * t);
    *hfov = 31.0 + 19.0 * cos(2 * PI * t) - 2.0 * k;
}

/* --- moving views on the host: pc_render_plan_set_view ------------------- */

static int bench_set_view(const pc_render_bench_opts *o, const pc_rig *rig, const pc_rig_photometry *ph)
{
    char err[256];
    pc_view_model v;
    pc_render_plan *p;
    const int n = o->iters > 50 ? o->iters : 50;
    pc_rig_rect_view(VIEW_W, VIEW_H, 50.0, -60.0, -3.0, 0.0, &v);
    if (pc_render_plan_build(&p, rig, &v, ph, NULL, err, sizeof err)) {
        fprintf(stderr, "panocap-bench --render: %s\n", err);
        return 1;
    }
    double *us = malloc(sizeof *us * n), first = 0, cams = 0;
    for (int i = 0; i < n; i++) {
        double pan, tilt, hfov;
        path(i, n, 0, &pan, &tilt, &hfov);
        pc_rig_rect_view(VIEW_W, VIEW_H, hfov, pan, tilt, 0.0, &v);
        const double t0 = now_us();
        if (pc_render_plan_set_view(p, &v, err, sizeof err)) {
            fprintf(stderr, "panocap-bench --render: set_view: %s\n", err);
            return 1;
        }
        us[i] = now_us() - t0;
        if (i == 0)
            first = us[0];
        long bits = 0, seen = 0;
        for (int t = 0; t < p->ntx * p->nty; t++) {
            bits += __builtin_popcount(p->tmask[t]);
            seen += p->tmask[t] != 0;
        }
        cams += seen ? (double)bits / seen : 0;
    }
    double med, p99, max;
    stats(us + 1, n - 1, &med, &p99, &max);
    printf("# moving view %dx%d from %d cameras %dx%d, %d frames of a path (pan -60..60, tilt -6..0, hfov 50 -> 12 -> "
           "50)\n", VIEW_W, VIEW_H, p->ncam, p->cam_w, p->cam_h, n);
    printf("set_view (host, 1 core): first call %.0f us (samples the cameras' borders), then median %.1f us, p99 %.1f "
           "us, max %.1f us (target < 300: %s); %.2f cameras per seen tile\n", first, med, p99, max,
           p99 < 300 ? "yes" : "no", cams / n);
    free(us);
    pc_render_plan_free(p);
    return 0;
}

/* --- the activity map and convert on the CPU ------------------------------ */

static int bench_cpu_ops(const pc_render_bench_opts *o, const pc_rig *rig, const pc_picture cams[2])
{
    char err[256];
    /* activity: the CPU backend runs the reference */
    pc_view_model v;
    pc_render_plan *p;
    pc_rig_panorama_view(rig, ACT_W, ACT_H, &v);
    if (pc_render_plan_build(&p, rig, &v, NULL, NULL, err, sizeof err)) {
        fprintf(stderr, "panocap-bench --render: %s\n", err);
        return 1;
    }
    pc_picture small[2];
    if (pc_rbench_host_pic(&small[0], PC_FMT_NV12, ACT_W, ACT_H) ||
        pc_rbench_host_pic(&small[1], PC_FMT_NV12, ACT_W, ACT_H))
        return 1;
    pc_render_ref(p, &cams[0], &small[0], err, sizeof err);
    const float dim[16][3] = {{0.7f, 0.7f, 0.7f}, {0.7f, 0.7f, 0.7f}, {0.7f, 0.7f, 0.7f}, {0.7f, 0.7f, 0.7f},
                              {0.7f, 0.7f, 0.7f}};
    pc_render_plan_set_gains(p, dim);
    pc_render_ref(p, &cams[0], &small[1], err, sizeof err);
    const pc_activity_params ap = {6, 12, 16, 16};
    const int ncell = pc_activity_cells(ACT_W, ACT_H, &ap), n = 200;
    uint16_t *bg = malloc(sizeof *bg * ACT_W * ACT_H);
    uint32_t *counts = malloc(sizeof *counts * ncell);
    double *us = malloc(sizeof *us * n), med, p99, max;
    long fg = 0;
    for (int i = 0; i < n; i++) {
        const double t0 = now_us();
        pc_activity_ref(small[i & 1].plane[0], small[i & 1].pitch[0], ACT_W, ACT_H, bg, i == 0, &ap, counts);
        us[i] = now_us() - t0;
        for (int c = 0; c < ncell && i == n - 1; c++)
            fg += counts[c];
    }
    stats(us + 1, n - 1, &med, &p99, &max);
    printf("activity map %dx%d (cells 16x16, shift 6, threshold 12), CPU reference (the CPU backend's, 1 thread): "
           "median %.1f us, p99 %.1f us; %ld foreground pixels in the last frame\n", ACT_W, ACT_H, med, p99, fg);
    free(bg);
    free(counts);
    free(us);
    free(small[0].plane[0]);
    free(small[1].plane[0]);
    pc_render_plan_free(p);
    /* convert on the CPU backend's threads */
    pc_picture ref, out;
    const int W = cams[0].width, H = cams[0].height;
    if (pc_rbench_host_pic(&ref, PC_FMT_NV12, W, H) || pc_rbench_host_pic(&out, PC_FMT_NV12, W, H))
        return 1;
    pc_rgb_to_yuv(cams[1].plane[0], cams[1].pitch[0], &ref, err, sizeof err);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int threads[3] = {2, (int)(online > 0 ? online : 1), o->threads};
    for (int k = 0; k < 3; k++) {
        if (threads[k] <= 0 || (k == 1 && threads[1] == 2) || (k == 2 && (threads[2] == 2 || threads[2] == threads[1])))
            continue;
        pc_cpu *cpu = NULL;
        if (pc_cpu_open(&cpu, threads[k], 16, 16, err, sizeof err)) {
            fprintf(stderr, "panocap-bench --render: %s\n", err);
            return 1;
        }
        for (int s = 0; s < 2; s++) {
            const int it = o->cpu_iters > 0 ? o->cpu_iters : 5;
            double *ms = malloc(sizeof *ms * it);
            int bad = 0, md;
            double o1;
            for (int i = 0; i < it; i++) {
                const double t0 = now_us();
                bad |= pc_cpu_convert(cpu, &cams[s], &out, err, sizeof err) != 0;
                ms[i] = (now_us() - t0) / 1e3;
            }
            bad |= pc_rbench_psnr(&ref, &out, &md, &o1) < 99;
            stats(ms, it, &med, &p99, &max);
            printf("convert %dx%d %s -> nv12, CPU backend, %d threads: median %.2f ms%s\n", W, H,
                   s ? "rgb24" : "rgbx32", threads[k], med,
                   bad ? "  DIFFERS FROM pc_rgb_to_yuv" : " (== pc_rgb_to_yuv)");
            free(ms);
            if (bad)
                return 1;
        }
        pc_cpu_close(cpu);
    }
    free(ref.plane[0]);
    free(out.plane[0]);
    return 0;
}

/* ------------------------------------------------------------------------ */
#if PANOCAP_HAVE_CUDA

/* The host gate: a host function the stream waits in until released. */
static void CUDART_CB gate_wait(void *arg)
{
    atomic_int *g = arg;
    while (!atomic_load(g))
        sched_yield();
}

typedef int (*enqueue_fn)(void *ctx, int i, char *err, size_t errlen);

/* iters calls of fn (after warmup ones) queued behind the gate, events
 * between them: us[i] = the GPU time of call i. */
static int time_queued(cudaStream_t s, int warmup, int iters, enqueue_fn fn, void *ctx, double *us, char *err,
                       size_t errlen)
{
    int rc = 0;
    for (int i = 0; i < warmup && !rc; i++)
        rc = fn(ctx, i, err, errlen);
    if (rc || cudaStreamSynchronize(s) != cudaSuccess)
        return rc ? rc : -1;
    cudaEvent_t *ev = calloc((size_t)iters + 1, sizeof *ev);
    for (int i = 0; i <= iters; i++)
        cudaEventCreate(&ev[i]);
    atomic_int gate = 0;
    cudaLaunchHostFunc(s, gate_wait, &gate);
    for (int i = 0; i < iters && !rc; i++) {
        cudaEventRecord(ev[i], s);
        rc = fn(ctx, warmup + i, err, errlen);
    }
    cudaEventRecord(ev[iters], s);
    atomic_store(&gate, 1);
    if (cudaStreamSynchronize(s) != cudaSuccess && !rc) {
        snprintf(err, errlen, "%s", cudaGetErrorString(cudaGetLastError()));
        rc = -1;
    }
    for (int i = 0; i < iters && !rc; i++) {
        float ms = 0;
        cudaEventElapsedTime(&ms, ev[i], ev[i + 1]);
        us[i] = ms * 1e3;
    }
    for (int i = 0; i <= iters; i++)
        cudaEventDestroy(ev[i]);
    free(ev);
    return rc;
}

/* One frame of n moving views: the host's set_view for each, then behind
 * the gate the updates and renders between two events. */
typedef struct mover {
    int n, moving;
    pc_render_plan *plan[NVIEWS];
    pc_gpu_renderer *r[NVIEWS];
    const pc_picture *src;
    pc_picture out[NVIEWS];
} mover;

static int fly(pc_gpu *g, mover *m, int frames, double *host_set, double *host_upd, double *dev, char *err,
               size_t errlen)
{
    cudaStream_t s = (cudaStream_t)pc_gpu_stream(g);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    int rc = 0;
    for (int i = 0; i < frames && !rc; i++) {
        double ts = 0, tu = 0;
        for (int k = 0; k < m->n && m->moving && !rc; k++) {
            double pan, tilt, hfov;
            pc_view_model v;
            path(i, frames, k, &pan, &tilt, &hfov);
            pc_rig_rect_view(VIEW_W, VIEW_H, hfov, pan, tilt, 0.0, &v);
            const double t0 = now_us();
            rc = pc_render_plan_set_view(m->plan[k], &v, err, errlen);
            ts += now_us() - t0;
        }
        atomic_int gate = 0;
        cudaLaunchHostFunc(s, gate_wait, &gate);
        cudaEventRecord(e0, s);
        for (int k = 0; k < m->n && !rc; k++) {
            if (m->moving) {
                const double t0 = now_us();
                rc = pc_gpu_render_update(m->r[k], m->plan[k], err, errlen);
                tu += now_us() - t0;
            }
            if (!rc)
                rc = pc_gpu_render_enqueue(m->r[k], PC_GPU_RENDER_RAY, m->src, &m->out[k], err, errlen);
        }
        cudaEventRecord(e1, s);
        atomic_store(&gate, 1);
        if (cudaEventSynchronize(e1) != cudaSuccess && !rc) {
            snprintf(err, errlen, "%s", cudaGetErrorString(cudaGetLastError()));
            rc = -1;
        }
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (host_set)
            host_set[i] = ts;
        if (host_upd)
            host_upd[i] = tu;
        dev[i] = ms * 1e3;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return rc;
}

static int bench_moving_gpu(const pc_render_bench_opts *o, pc_gpu *g, const pc_rig *rig, const pc_rig_photometry *ph,
                            const pc_picture *dsrc, const pc_picture *hsrc)
{
    char err[512];
    const int frames = o->iters > 20 ? o->iters : 20;
    double *hs = malloc(sizeof(double) * frames), *hu = malloc(sizeof(double) * frames);
    double *dm = malloc(sizeof(double) * frames), *df = malloc(sizeof(double) * frames);
    int rc = 0;
    for (int nv = 1; nv <= NVIEWS && !rc; nv += NVIEWS - 1) {
        mover m;
        memset(&m, 0, sizeof m);
        m.n = nv;
        m.src = dsrc;
        for (int k = 0; k < nv && !rc; k++) {
            pc_view_model v;
            double pan, tilt, hfov;
            path(0, frames, k, &pan, &tilt, &hfov);
            pc_rig_rect_view(VIEW_W, VIEW_H, hfov, pan, tilt, 0.0, &v);
            rc = pc_render_plan_build(&m.plan[k], rig, &v, ph, NULL, err, sizeof err);
            if (!rc)
                rc = pc_gpu_render_prepare(g, m.plan[k], 0, &m.r[k], err, sizeof err);
            if (!rc)
                rc = pc_gpu_render_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, VIEW_W, VIEW_H,
                                                 &m.out[k], err, sizeof err);
        }
        /* a render each outside the gate first (the source's texture object
         * is made then), then the same views standing still, then moving */
        for (int k = 0; k < nv && !rc; k++)
            rc = pc_gpu_render_enqueue(m.r[k], PC_GPU_RENDER_RAY, m.src, &m.out[k], err, sizeof err);
        if (!rc && cudaDeviceSynchronize() != cudaSuccess) {
            snprintf(err, sizeof err, "%s", cudaGetErrorString(cudaGetLastError()));
            rc = -1;
        }
        if (!rc)
            rc = fly(g, &m, 10, NULL, NULL, df, err, sizeof err); /* warm-up */
        if (!rc)
            rc = fly(g, &m, frames, NULL, NULL, df, err, sizeof err);
        m.moving = 1;
        if (!rc)
            rc = fly(g, &m, frames, hs, hu, dm, err, sizeof err);
        double fmed, fp99, mmed, mp99, smed, sp99, umed, up99, max;
        if (!rc) {
            stats(df, frames, &fmed, &fp99, &max);
            stats(dm, frames, &mmed, &mp99, &max);
            stats(hs + 1, frames - 1, &smed, &sp99, &max);
            stats(hu, frames, &umed, &up99, &max);
            printf("%d moving view%s %dx%d, GPU per frame (update + render, events): median %.1f us, p99 %.1f us; the "
                   "same views standing still: median %.1f us, p99 %.1f us; host per frame: set_view %.1f us "
                   "(p99 %.1f), update %.1f us (p99 %.1f)\n", nv, nv > 1 ? "s" : "", VIEW_W, VIEW_H, mmed, mp99,
                   fmed, fp99, smed, sp99, umed, up99);
        }
        /* the last frame against the C reference of a plan built for its view */
        for (int k = 0; k < nv && !rc && k < 1; k++) {
            pc_picture host, ref;
            pc_render_plan *fresh;
            pc_view_model v = m.plan[k]->view;
            if (pc_rbench_host_pic(&host, PC_FMT_NV12, VIEW_W, VIEW_H) ||
                pc_rbench_host_pic(&ref, PC_FMT_NV12, VIEW_W, VIEW_H))
                break;
            rc = pc_render_plan_build(&fresh, rig, &v, ph, NULL, err, sizeof err);
            if (!rc)
                rc = pc_render_ref(fresh, hsrc, &ref, err, sizeof err);
            if (!rc && (cudaDeviceSynchronize() != cudaSuccess || pc_rbench_copy_pic(&host, &m.out[k])))
                rc = -1;
            if (!rc) {
                int md;
                double o1, q = pc_rbench_psnr(&host, &ref, &md, &o1);
                const int ok = md <= 2 && o1 <= 0.1;
                printf("# the moved view's last frame against the C reference of a plan built for its view: PSNR "
                       "%.2f dB, %.3f %% of the samples more than 1 code value off, max %d (%s)\n", q, o1, md,
                       ok ? "within render.h's rule" : "OUTSIDE render.h's rule");
                rc = ok ? 0 : -1;
                if (!ok)
                    snprintf(err, sizeof err, "the moved view's render is outside the rule");
            }
            pc_render_plan_free(fresh);
            free(host.plane[0]);
            free(ref.plane[0]);
        }
        for (int k = 0; k < nv; k++) {
            pc_gpu_render_free(m.r[k]);
            pc_gpu_picture_free(g, &m.out[k]);
            pc_render_plan_free(m.plan[k]);
        }
    }
    if (rc)
        fprintf(stderr, "panocap-bench --render: moving views: %s\n", err);
    free(hs);
    free(hu);
    free(dm);
    free(df);
    return rc ? 1 : 0;
}

typedef struct act_ctx {
    pc_gpu_activity *a;
    const pc_picture *small;
    const pc_activity_params *p;
    uint32_t *counts;
} act_ctx;

static int act_enqueue(void *ctx, int i, char *err, size_t errlen)
{
    act_ctx *c = ctx;
    return pc_gpu_activity_enqueue(c->a, &c->small[i & 1], c->p, c->counts, err, errlen);
}

static int bench_activity_gpu(const pc_render_bench_opts *o, pc_gpu *g, const pc_rig *rig, const pc_picture *dsrc)
{
    char err[512];
    pc_view_model v;
    pc_render_plan *p = NULL;
    pc_gpu_renderer *r = NULL;
    pc_gpu_activity *a = NULL;
    pc_picture small[2], hsmall;
    const pc_activity_params ap = {6, 12, 16, 16};
    const int ncell = pc_activity_cells(ACT_W, ACT_H, &ap);
    uint32_t *counts = NULL, *ref = malloc(sizeof *ref * ncell);
    uint16_t *bg = malloc(sizeof *bg * ACT_W * ACT_H);
    double *us = malloc(sizeof *us * o->iters);
    pc_rig_panorama_view(rig, ACT_W, ACT_H, &v);
    int rc = pc_render_plan_build(&p, rig, &v, NULL, NULL, err, sizeof err);
    if (!rc)
        rc = pc_gpu_render_prepare(g, p, 0, &r, err, sizeof err);
    for (int k = 0; k < 2 && !rc; k++) {
        rc = pc_gpu_render_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, ACT_W, ACT_H, &small[k],
                                         err, sizeof err);
        const float dim[16][3] = {{0.7f, 0.7f, 0.7f}, {0.7f, 0.7f, 0.7f}, {0.7f, 0.7f, 0.7f}, {0.7f, 0.7f, 0.7f},
                                  {0.7f, 0.7f, 0.7f}};
        if (!rc && k == 1)
            rc = pc_gpu_render_set_gains(r, dim, err, sizeof err);
        if (!rc)
            rc = pc_gpu_render_enqueue(r, PC_GPU_RENDER_RAY, dsrc, &small[k], err, sizeof err);
    }
    if (!rc)
        rc = pc_gpu_activity_open(g, ACT_W, ACT_H, &a, err, sizeof err);
    if (!rc)
        rc = pc_gpu_host_alloc(sizeof *counts * ncell, (void **)&counts, err, sizeof err);
    act_ctx c = {a, small, &ap, counts};
    if (!rc)
        rc = time_queued((cudaStream_t)pc_gpu_stream(g), 10, o->iters, act_enqueue, &c, us, err, sizeof err);
    if (!rc) {
        /* the counts of the last call (rendition (10 + iters - 1) & 1) against the
         * reference run over the same sequence of renditions */
        if (pc_rbench_host_pic(&hsmall, PC_FMT_NV12, ACT_W, ACT_H) == 0) {
            long fg = 0;
            int same = 1;
            pc_picture hs[2];
            pc_rbench_host_pic(&hs[0], PC_FMT_NV12, ACT_W, ACT_H);
            pc_rbench_host_pic(&hs[1], PC_FMT_NV12, ACT_W, ACT_H);
            pc_rbench_copy_pic(&hs[0], &small[0]);
            pc_rbench_copy_pic(&hs[1], &small[1]);
            for (int i = 0; i < 10 + o->iters; i++)
                pc_activity_ref(hs[i & 1].plane[0], hs[i & 1].pitch[0], ACT_W, ACT_H, bg, i == 0, &ap, ref);
            for (int k = 0; k < ncell; k++) {
                same &= ref[k] == counts[k];
                fg += counts[k];
            }
            double med, p99, max;
            stats(us, o->iters, &med, &p99, &max);
            printf("activity map %dx%d on the GPU (clear + kernel + counts to pinned memory, %d cells): "
                   "median %.1f us, p99 %.1f us; %ld foreground pixels in the last call, counts %s the reference's\n",
                   ACT_W, ACT_H, ncell, med, p99, fg, same ? "==" : "DIFFER FROM");
            rc = same ? 0 : -1;
            free(hs[0].plane[0]);
            free(hs[1].plane[0]);
            free(hsmall.plane[0]);
        }
    } else {
        fprintf(stderr, "panocap-bench --render: activity map: %s\n", err);
    }
    pc_gpu_activity_close(a);
    pc_gpu_render_free(r);
    for (int k = 0; k < 2; k++)
        pc_gpu_picture_free(g, &small[k]);
    pc_gpu_host_free(counts);
    pc_render_plan_free(p);
    free(ref);
    free(bg);
    free(us);
    return rc ? 1 : 0;
}

typedef struct conv_ctx {
    pc_gpu *g;
    const pc_picture *src, *dst; /* ROT each */
} conv_ctx;

static int conv_enqueue(void *ctx, int i, char *err, size_t errlen)
{
    conv_ctx *c = ctx;
    return pc_gpu_convert_enqueue(c->g, &c->src[i % ROT], &c->dst[i % ROT], err, errlen);
}

static int bench_convert_gpu(const pc_render_bench_opts *o, pc_gpu *g, const pc_picture cams[2])
{
    char err[512];
    const int W = cams[0].width, H = cams[0].height, ncam = H / 1080 > 0 ? H / 1080 : 1;
    pc_picture src[2][ROT], dst[ROT], host, ref;
    pc_yuv_coeffs bands[16];
    for (int c = 0; c < ncam && c < 16; c++) { /* the cameras' colour matrices, as the colour stage folds them in */
        const double s = 1.0 + 0.1 * c;
        const double ccm[9] = {s, 1 - s, 0, 0, 1, 0, 0, 1 - s, s};
        pc_yuv_coeffs_ccm(PC_MATRIX_BT709, PC_RANGE_LIMITED, ccm, &bands[c], err, sizeof err);
    }
    int rc = 0;
    memset(src, 0, sizeof src);
    memset(dst, 0, sizeof dst);
    for (int f = 0; f < 2 && !rc; f++)
        for (int k = 0; k < ROT && !rc; k++) {
            rc = pc_gpu_render_picture_alloc(g, f ? PC_FMT_RGB24 : PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, W,
                                             H, &src[f][k], err, sizeof err);
            if (!rc && pc_rbench_copy_pic(&src[f][k], &cams[f]))
                rc = -1;
        }
    for (int k = 0; k < ROT && !rc; k++)
        rc = pc_gpu_render_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, W, H, &dst[k], err,
                                         sizeof err);
    if (rc || pc_rbench_host_pic(&host, PC_FMT_NV12, W, H) || pc_rbench_host_pic(&ref, PC_FMT_NV12, W, H)) {
        fprintf(stderr, "panocap-bench --render: convert: %s\n", rc ? err : "out of memory");
        return 1;
    }
    double *us = malloc(sizeof *us * o->iters);
    const double fl4 = pc_rbench_copy_us((size_t)(W * H * 4 + W * H * 3 / 2) / 2);
    const double fl3 = pc_rbench_copy_us((size_t)(W * H * 3 + W * H * 3 / 2) / 2);
    static const char *const names[] = {"rgbx32 -> nv12", "rgb24 -> nv12", "rgbx32 -> nv12 grid, 5 colour matrices"};
    for (int c = 0; c < 3 && !rc; c++) {
        pc_picture d[ROT], hv = host, rv = ref;
        for (int k = 0; k < ROT; k++) {
            d[k] = dst[k];
            if (c == 2) {
                pc_picture_as_grid(&d[k], ncam, H / ncam);
                d[k].bands = bands;
                d[k].n_bands = ncam;
                d[k].band_rows = H / ncam;
            }
        }
        if (c == 2) {
            pc_picture_as_grid(&hv, ncam, H / ncam);
            pc_picture_as_grid(&rv, ncam, H / ncam);
            rv.bands = bands;
            rv.n_bands = ncam;
            rv.band_rows = H / ncam;
        }
        conv_ctx cx = {g, src[c == 1], d};
        rc = time_queued((cudaStream_t)pc_gpu_stream(g), 10, o->iters, conv_enqueue, &cx, us, err, sizeof err);
        /* a fresh conversion of the first source against the reference */
        if (!rc)
            rc = pc_gpu_convert_enqueue(g, &src[c == 1][0], &d[0], err, sizeof err);
        if (!rc && (cudaDeviceSynchronize() != cudaSuccess || pc_rbench_copy_pic(&hv, &d[0])))
            rc = -1;
        if (rc)
            break;
        pc_rgb_to_yuv(cams[1].plane[0], cams[1].pitch[0], &rv, err, sizeof err);
        int md;
        double o1;
        const int nd = pc_rbench_psnr(&hv, &rv, &md, &o1) < 99;
        double med, p99, max;
        stats(us, o->iters, &med, &p99, &max);
        const double fl = c == 1 ? fl3 : fl4;
        printf("convert %dx%d %-40s GPU: median %6.1f us, p99 %6.1f us, %.2fx the memory floor (%.1f us); %s\n", W, H,
               names[c], med, p99, med / fl, fl, nd ? "DIFFERS FROM pc_rgb_to_yuv" : "== pc_rgb_to_yuv");
        if (nd)
            rc = -1;
    }
    if (rc)
        fprintf(stderr, "panocap-bench --render: convert: %s\n", err);
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < ROT; k++)
            pc_gpu_picture_free(g, &src[f][k]);
    for (int k = 0; k < ROT; k++)
        pc_gpu_picture_free(g, &dst[k]);
    free(host.plane[0]);
    free(ref.plane[0]);
    free(us);
    return rc ? 1 : 0;
}

static int bench_gpu_ops(const pc_render_bench_opts *o, const pc_rig *rig, const pc_rig_photometry *ph,
                         const pc_picture cams[2])
{
    char err[512];
    pc_gpu *g = NULL;
    if (pc_gpu_device_count() <= 0) {
        printf("# GPU: no CUDA device here: moving views, activity and convert GPU timings skipped\n");
        return 0;
    }
    if (pc_gpu_open(&g, o->device, cams[0].width, cams[0].height, 1, err, sizeof err)) {
        fprintf(stderr, "panocap-bench --render: %s\n", err);
        return 1;
    }
    printf("# GPU %s: moving views, the activity map, convert (%d calls each after 10 warm-up, median and p99)\n",
           pc_gpu_device_name(g), o->iters);
    pc_picture dsrc;
    int rc = pc_gpu_render_picture_alloc(g, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, cams[0].width,
                                         cams[0].height, &dsrc, err, sizeof err);
    if (rc || pc_rbench_copy_pic(&dsrc, &cams[0])) {
        fprintf(stderr, "panocap-bench --render: cameras on the device: %s\n", rc ? err : "copy failed");
        pc_gpu_close(g);
        return 1;
    }
    rc = bench_moving_gpu(o, g, rig, ph, &dsrc, &cams[0]);
    if (!rc)
        rc = bench_activity_gpu(o, g, rig, &dsrc);
    if (!rc)
        rc = bench_convert_gpu(o, g, cams);
    pc_gpu_picture_free(g, &dsrc);
    pc_gpu_close(g);
    return rc;
}
#else
static int bench_gpu_ops(const pc_render_bench_opts *o, const pc_rig *rig, const pc_rig_photometry *ph,
                         const pc_picture cams[2])
{
    printf("# GPU: this build has no CUDA support: moving views, activity and convert GPU timings skipped\n");
    return 0;
}
#endif

int pc_render_bench_ops(const pc_render_bench_opts *o, const pc_rig *rig, const pc_rig_photometry *ph,
                        const pc_picture cams[2])
{
    int rc = bench_set_view(o, rig, ph);
    if (!rc && o->gpu)
        rc = bench_gpu_ops(o, rig, ph, cams);
    if (!rc && o->cpu)
        rc = bench_cpu_ops(o, rig, cams);
    return rc;
}
