/* render_mb_cuda.h - blend = multiband on the GPU (render_mb_cuda.cu: the
 * kernels of cuda_multiband.cuh around render_cuda.cu's main pass).
 * Private to the CUDA renderer: C++, nvcc translation units only. */
#ifndef PANOCAP_RENDER_MB_CUDA_H
#define PANOCAP_RENDER_MB_CUDA_H

#include <cuda_runtime.h>

#include "cuda_render.cuh"

struct pc_gpu_mb;

/* The plan's multiband data on the current device, a side stream and its
 * events. Once per rig/view (with the renderer's prepare). */
int pc_gpu_mb_prepare(const pc_render_plan *plan, pc_gpu_mb **out, char *err, size_t errlen);
/* Waits for its work, frees everything; NULL is fine. */
void pc_gpu_mb_free(pc_gpu_mb *m);

/* Before a frame's main pass on cs: enqueues the pyramid on the side
 * stream, after everything cs holds so far; *tmask: the camera masks the
 * main pass must use (the strips' tiles cleared). kp: the frame's
 * parameters (pictures filled). */
int pc_gpu_mb_begin(pc_gpu_mb *m, const pc_rkparams &kp, int photo, int tex, cudaStream_t cs, const uint16_t **tmask,
                    char *err, size_t errlen);
/* After the main pass: the strips' pixels on cs, once the pyramid is done. */
int pc_gpu_mb_end(pc_gpu_mb *m, const pc_rkparams &kp, int fmt, int photo, int tex, cudaStream_t cs, char *err,
                  size_t errlen);

#endif
