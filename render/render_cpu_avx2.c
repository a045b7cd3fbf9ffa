/* render_cpu_avx2.c - the CPU renderer's inner loops (render_cpu_lanes.h)
 * compiled for AVX2: 8 lanes in one register, and its min, blend, square
 * root and test instructions. render_cpu.c runs it where the CPU has
 * AVX2 (x86-64 only; elsewhere the file is empty). Nothing is fused into
 * a multiply-add: "avx2" does not enable FMA, and the kernels build with
 * -ffp-contract=off. */
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx2")
#define PC_RENDER_LANES pc_render_lanes_avx2
#include "render_cpu_lanes.h"
#endif
