/* render_bench.h - panocap-bench --render (render_bench.c). */
#ifndef PANOCAP_RENDER_BENCH_H
#define PANOCAP_RENDER_BENCH_H

#include <stddef.h>

#include "picture.h"
#include "rig.h"

typedef struct pc_render_bench_opts {
    int iters;     /* GPU frames timed per case */
    int cpu_iters; /* CPU frames timed per case and thread count */
    int threads;   /* an extra CPU thread count (0: none) */
    int device;    /* CUDA device */
    int gpu, cpu;  /* which parts run */
} pc_render_bench_opts;

/* Runs the whole render benchmark, printing as it goes; 0 or 1. */
int pc_render_bench(const pc_render_bench_opts *o);

/* Helpers of the render benchmarks (render_bench.c). A host picture in
 * one 64-byte aligned buffer, 64-byte pitches (free plane[0]), limited
 * range, BT.709 or the matrix given; 0, or -1 out of memory. */
int pc_rbench_host_pic(pc_picture *p, pc_pixfmt fmt, int w, int h);
int pc_rbench_host_pic_matrix(pc_picture *p, pc_pixfmt fmt, pc_matrix matrix, int w, int h);
/* PSNR (dB, 99 when equal) over every sample of two pictures of one
 * format, the largest difference, the share (%) differing by more than 1. */
double pc_rbench_psnr(const pc_picture *a, const pc_picture *b, int *maxd, double *over1);
/* Median and p99 of n samples (sorts them). */
void pc_rbench_med_p99(double *v, int n, double *med, double *p99);
/* CUDA builds only: copies every plane of src into dst (same format and
 * size; host or device memory each, cudaMemcpyDefault), 0 or -1; and the
 * median time (us) of a device-to-device copy of bytes (read + write: the
 * memory floor of moving 2 x bytes). */
int pc_rbench_copy_pic(const pc_picture *dst, const pc_picture *src);
double pc_rbench_copy_us(size_t bytes);

/* Its second part (render_bench_ops.c): moving views, the activity map and
 * RGB -> YUV, on the first part's rig, photometry and cameras (cams[0]
 * RGBX32, cams[1] the same as RGB24, host memory); 0 or 1. */
int pc_render_bench_ops(const pc_render_bench_opts *o, const pc_rig *rig, const pc_rig_photometry *ph,
                        const pc_picture cams[2]);

#endif
