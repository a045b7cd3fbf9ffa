/* render_cpu_avx512.c - the CPU renderer's inner loops (render_cpu_lanes.h)
 * compiled for AVX-512 with 16 lanes: half the vector instructions of the
 * AVX2 build for the same pixels (selects in one vpternlogd, narrowing in
 * one vpmovdb); the scalar loads of pixels and response knots stay as
 * they are. render_cpu.c runs it where the CPU has AVX-512 F, VL, BW and
 * DQ (x86-64 only; elsewhere the file is empty). Nothing is fused into a
 * multiply-add: these do not enable FMA, and the kernels build with
 * -ffp-contract=off. */
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq")
#define PC_RENDER_LANES pc_render_lanes_avx512
#define PC_RENDER_VL 16
#include "render_cpu_lanes.h"
#endif
