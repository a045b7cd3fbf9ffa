/* net_bench.c - panocap-bench: the learned demosaic's CONV kernels
 * (cuda_net_conv.cuh: wgmma on Hopper, the mma.sync tiles everywhere) side
 * by side on one GPU in one run, and where each frame's time goes (L1, the
 * 3x3 layers, the last layer's filters and masks, the full-resolution
 * tail), through debayer_cuda.h's bench calls only: no environment
 * variable, nothing the daemon would see. */
#include "net_bench.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* n frames through g, slots and destinations in turn; with times, each
 * frame's GPU time (us; PC_GPU_OPT_FRAME_TIMING). */
static int frames(pc_gpu *g, const pc_picture *dst, int n, double *times, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        const int k = i & 3;
        if (pc_gpu_debayer(g, k, &dst[k], err, errlen) || pc_gpu_slot_wait(g, k, err, errlen))
            return 1;
        if (times && pc_gpu_frame_time_us(g, k, &times[i], err, errlen))
            return 1;
    }
    return 0;
}

int net_bench_convs(pc_gpu *g, const pc_picture *dst, int iters, int prof, double gflop, FILE *out,
                    const char *prefix)
{
    char err[512] = "";
    pc_gpu_net_conv cv[PC_GPU_NET_MAX_CONVS];
    const int n = pc_gpu_net_convs(g, cv, PC_GPU_NET_MAX_CONVS, err, sizeof err);
    if (n < 1) {
        fprintf(stderr, "panocap-bench: net CONV kernels: %s\n", err);
        return 1;
    }
    if (iters < 3)
        iters = 3;
    double *us = malloc((size_t)iters * sizeof *us);
    if (!us)
        return 1;
    fprintf(out, "%snet CONV kernels side by side (GPU ms per frame: median of %d frames, one at a time; per "
            "launch: means of %d profiled frames; * = the automatic choice):\n", prefix, iters, prof);
    fprintf(out, "%s%-16s %7s %9s %8s %8s %9s %15s %8s %8s %8s %9s\n", prefix, "kernel", "blk/SM", "frame_ms",
            "TFLOP/s", "L1", "CONV avg", "CONV min-max", "filters", "CONVU", "TAIL", "sum");
    int rc = 0;
    pc_gpu_set_options(g, PC_GPU_OPT_FRAME_TIMING);
    for (int c = 0; c < n && !rc; c++) {
        char name[32];
        snprintf(name, sizeof name, "%s %dx%d%s", cv[c].wgmma ? "wgmma" : "mma.sync", cv[c].warps, cv[c].bufs,
                 c == 0 ? " *" : "");
        double ms[64];
        int nl = 0, nf = 0;
        rc = pc_gpu_net_set_conv(g, c, err, sizeof err) || frames(g, dst, 5, NULL, err, sizeof err) ||
             frames(g, dst, iters, us, err, sizeof err) || pc_gpu_net_set_profile(g, 1, err, sizeof err) ||
             frames(g, dst, prof, NULL, err, sizeof err) ||
             pc_gpu_net_profile(g, ms, 64, &nl, &nf, err, sizeof err) || pc_gpu_net_set_profile(g, 0, err, sizeof err);
        if (rc) {
            fprintf(stderr, "panocap-bench: net with CONV %s: %s\n", name, err);
            break;
        }
        qsort(us, (size_t)iters, sizeof *us, cmp_double);
        const double med = (iters % 2 ? us[iters / 2] : 0.5 * (us[iters / 2 - 1] + us[iters / 2])) / 1000.0;
        const int D = nl - 2; /* launches: L1, D - 2 layers, filters, CONVU, TAIL */
        double cs = 0, cmin = 1e30, cmax = 0, sum = 0;
        for (int i = 1; i <= D - 2; i++) {
            cs += ms[i];
            cmin = ms[i] < cmin ? ms[i] : cmin;
            cmax = ms[i] > cmax ? ms[i] : cmax;
        }
        for (int i = 0; i < nl; i++)
            sum += ms[i];
        char mm[32];
        snprintf(mm, sizeof mm, "%.4f-%.4f", D > 2 ? cmin : 0.0, cmax);
        fprintf(out, "%s%-16s %7d %9.3f %8.0f %8.4f %9.4f %15s %8.4f %8.4f %8.4f %9.4f\n", prefix, name,
                cv[c].blocks_per_sm, med, gflop / med, ms[0], D > 2 ? cs / (D - 2) : 0.0, mm, ms[D - 1], ms[D],
                ms[D + 1], sum);
        fprintf(out, "%s  %s per launch (ms, %d frames):", prefix, name, nf);
        for (int i = 0; i < nl; i++)
            fprintf(out, " %.4f", ms[i]);
        fprintf(out, "\n");
    }
    pc_gpu_set_options(g, 0);
    free(us);
    if (pc_gpu_net_set_conv(g, -1, err, sizeof err)) {
        fprintf(stderr, "panocap-bench: %s\n", err);
        rc = 1;
    }
    return rc;
}
