/* algo_impl.h - where each backend finds an algorithm's implementation, and
 * the hooks for an algorithm that brings its own code.
 *
 * Two kinds of algorithm:
 *  1. Fused-stencil algorithms (the seven of the paper): integer per-pixel
 *     formulas with a small read radius, 1-3 passes. Each backend has a
 *     table indexed by pc_algo_id whose length is checked at compile time
 *     against PC_ALGO_COUNT:
 *       reference / CPU  reference.c   ref_algos[]      temp planes + pass kinds
 *       CUDA             debayer_cuda.cu pc_cuda_algos[] kernel set (PC_KSET)
 *       CUDA emulation   cuda_emu.cc   emu_algos[]      run<pc_alg_xxx>
 *     The descriptor's impl is NULL.
 *  2. Algorithms with their own code (e.g. residual interpolation: float,
 *     guided filters with large windows, several passes): the descriptor's
 *     impl points to a pc_algo_impl below with the reference (and,
 *     optionally, a multi-threaded CPU version); on CUDA, the algorithm's
 *     line in pc_cuda_algos has a pc_cuda_custom (cuda_launch.h) instead of
 *     a kernel set; ref_algos has REF_OWN and emu_algos a nullptr run.
 *
 * How to add an algorithm (say "foo"):
 *   - debayer.h: PC_ALGO_FOO before PC_ALGO_COUNT (the ids are indexes).
 *   - algos.c: its descriptor (name, title, description, passes, radii,
 *     temporaries, variants, ...; kind 2: variants 0, since 2px/4px are
 *     final-pass variants of the fused kernels and only "auto" applies, and
 *     the last field impl = &pc_foo_impl).
 *   - Kind 1: its formulas in reference_formulas.h + pass kinds in
 *     reference.c (the K_ enum, DEF_INTERIOR4, TAB4, border_block) and its
 *     ref_algos line; its device struct pc_alg_foo in cuda_algos.cuh, a
 *     PC_KSET in one of cuda_{linear,hue,edge,wd}.cu (extern in
 *     cuda_launch.h), its pc_cuda_algos line and its emu_algos line.
 *   - Kind 2: kernels/foo.c with `const pc_algo_impl pc_foo_impl` (listed in
 *     kernels/meson.build's kernels_src); kernels/cuda_foo.cu with
 *     `const pc_cuda_custom pc_cuda_foo` (listed with the .cu files);
 *     pc_cuda_algos: {PC_ALGO_FOO, nullptr, &pc_cuda_foo}; ref_algos:
 *     [PC_ALGO_FOO] = REF_OWN; emu_algos: {PC_ALGO_FOO, nullptr}.
 *   - The compile-time checks name any table left out; the tests iterate
 *     PC_ALGO_COUNT, so test_reference, test_cpu_backend, test_backend and
 *     test_cuda cover the new algorithm without edits (test_cuda_emu skips
 *     kind 2 with a message).
 * Nothing else selects algorithms: the CLI, config, control socket, tools
 * and the pipeline all go through the descriptor table and pc_backend.
 */
#ifndef PANOCAP_ALGO_IMPL_H
#define PANOCAP_ALGO_IMPL_H

#include "debayer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs fn(arg, band, n) on every thread of cpu's pool (pc_pool_run,
 * pool.h: band 0 on the calling thread) and returns when all have
 * returned: one call per pass, so a pass may read everything the previous
 * call wrote. For cpu_run. */
void pc_cpu_parallel(pc_cpu *cpu, pc_band_fn fn, void *arg);

/* An algorithm's own host implementation (pc_algo_desc.impl). The
 * arguments are checked before these are called (known algorithm, valid
 * Bayer frame, destination of its size with every plane); all return 0
 * or a negative PC_E* code with a message. */
typedef struct pc_algo_impl {
    /* Required: the definition, single-threaded, exact. Allocates its own
     * temporaries. */
    int (*ref_run)(const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen);
    /* Scratch bytes cpu_run needs for a width x height frame; the CPU
     * backend allocates them once (pc_cpu_prepare, or the first frame).
     * NULL: none. */
    size_t (*temp_bytes)(int width, int height);
    /* Optional: the multi-threaded version (pc_cpu_parallel), same bytes as
     * ref_run. temp holds temp_bytes(width, height) bytes, 64-byte aligned.
     * NULL: the CPU backend calls ref_run. */
    int (*cpu_run)(pc_cpu *cpu, uint8_t *temp, const pc_bayer *src, const pc_picture *dst,
                   char *err, size_t errlen);
    /* Optional: what cpu_run needs beyond temp_bytes, made ready ahead
     * (pc_cpu_prepare) so that no frame loads or allocates it (net: its
     * weights and line buffers). NULL: nothing. */
    int (*cpu_prepare)(pc_cpu *cpu, char *err, size_t errlen);
} pc_algo_impl;

/* The frame width the CPU backend was opened for (pc_cpu_open). */
int pc_cpu_width(const pc_cpu *cpu);

#ifdef __cplusplus
}
#endif
#endif
