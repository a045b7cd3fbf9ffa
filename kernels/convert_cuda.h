/* convert_cuda.h - RGB -> YUV of the unstitched cameras (convert.h) on the
 * GPU, a plain C API over an open pc_gpu (debayer_cuda.h); the kernel is
 * cuda_convert.cuh.
 *
 *   pc_gpu_convert(g, slot, src, dst)  enqueues the conversion of the
 *       device picture src (RGB24/RGBX32, e.g. the slot's demosaic) into
 *       dst (device NV12/I420: stacked, a grid, bands allowed) on the
 *       compute stream, then marks the slot; pc_gpu_slot_wait covers it.
 *       The planes' pointers and pitches must be multiples of 4 (the
 *       kernel loads and stores 4 bytes at once): device allocations are.
 *
 * Built without CUDA, every call returns PC_ENOTSUP (ops_cuda_stub.c).
 */
#ifndef PANOCAP_CONVERT_CUDA_H
#define PANOCAP_CONVERT_CUDA_H

#include "convert.h"
#include "debayer_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

int pc_gpu_convert(pc_gpu *g, int slot, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen);
/* The same without a slot (benchmarks). */
int pc_gpu_convert_enqueue(pc_gpu *g, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
