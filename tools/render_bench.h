/* render_bench.h - panocap-bench --render (render_bench.c). */
#ifndef PANOCAP_RENDER_BENCH_H
#define PANOCAP_RENDER_BENCH_H

#include "debayer.h"

typedef struct pc_render_bench_opts {
    int iters;     /* GPU frames timed per case */
    int cpu_iters; /* CPU frames timed per case and thread count */
    int threads;   /* an extra CPU thread count (0: none) */
    int device;    /* CUDA device */
    int gpu, cpu;  /* which parts run */
} pc_render_bench_opts;

/* Runs the whole render benchmark, printing as it goes; 0 or 1. */
int pc_render_bench(const pc_render_bench_opts *o);

/* A host picture in one 64-byte aligned buffer with 64-byte pitches
 * (free plane[0]), limited range; 0, or -1 out of memory. */
int pc_bench_host_pic(pc_picture *p, pc_pixfmt fmt, pc_matrix matrix, int w, int h);

#endif
