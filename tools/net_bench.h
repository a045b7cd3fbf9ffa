/* net_bench.h - panocap-bench's side-by-side timing of the learned
 * demosaic's CUDA kernels (net_bench.c). */
#ifndef PANOCAP_NET_BENCH_H
#define PANOCAP_NET_BENCH_H

#include <stdio.h>

#include "debayer_cuda.h"

/* For g with net selected (pc_gpu_set_algo) and its weights set: every
 * CONV kernel the GPU runs (pc_gpu_net_convs: wgmma and the mma.sync
 * tiles), each timed on the same frames (slots 0..3 into dst[0..3] in
 * turn): the median GPU time of `iters` frames, then `prof` frames with
 * the per-launch profile (pc_gpu_net_set_profile). Prints a table, each
 * line after `prefix` on out; gflop: the frame's operations, for TFLOP/s.
 * Leaves the automatic kernel selected. 0, or 1 with the error on stderr. */
int net_bench_convs(pc_gpu *g, const pc_picture *dst, int iters, int prof, double gflop, FILE *out,
                    const char *prefix);

#endif
