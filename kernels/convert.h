/* convert.h - the unstitched cameras as YUV from their RGB: when the
 * panorama is the main picture, the demosaic writes RGB (RGBX32/RGB24) for
 * the renderer, and the stacked cameras (or the grid of them) that are
 * also recorded are converted from that picture into NV12/I420.
 *
 * The bytes are exactly those the demosaic's own final pass writes into
 * the same YUV picture from the same RGB: spec §8's fixed-point
 * conversion of each 2x2 block (the chroma of the block's sum), the
 * picture's colour bands (per-camera matrices) by source row, a grid
 * picture's tiles (pc_grid_offset). pc_rgb_to_yuv (debayer.h) is the
 * definition (RGB24 only; an RGBX32 source is the same with X skipped);
 * tests/test_convert.c checks that the demosaic into NV12 equals the
 * demosaic into RGB24 then this conversion, for every algorithm.
 *
 * Implementations: pc_cpu_convert on the CPU backend's threads, the CUDA
 * kernel (cuda_convert.cuh, convert_cuda.h); through the backend op
 * pc_backend_convert (backend.h).
 */
#ifndef PANOCAP_CONVERT_H
#define PANOCAP_CONVERT_H

#include "debayer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* src: RGB24 or RGBX32, W x H (W, H even, >= 8); dst: NV12 or I420 whose
 * source size (pc_picture_source_size) is W x H: stacked, or a grid
 * picture (pc_picture_as_grid), with or without bands. 0, or PC_EINVAL
 * with a message naming what differs. */
int pc_convert_check(const pc_picture *src, const pc_picture *dst, char *err, size_t errlen);

/* The conversion on cpu's threads (pc_cpu_parallel; from the thread that
 * calls pc_cpu_debayer): bit-identical to pc_rgb_to_yuv. */
int pc_cpu_convert(pc_cpu *cpu, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
