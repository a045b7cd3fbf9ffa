/* render_cuda.h - the render family on the GPU (render.h; the kernels are
 * cuda_render.cuh), as a plain C API over an open pc_gpu (gpu.h):
 * its compute stream runs the renders, after the slot's demosaic.
 *
 *   pc_gpu_render_prepare(g, plan, wants, &r)  device copy of the plan
 *       (ray tables, camera masks, photometric tables, seams; the maps
 *       and the peer's data when asked); the camera parameters travel as
 *       kernel parameters. Allocates; once per rig/view.
 *   pc_gpu_render(g, slot, r, src, dst)  per frame set: enqueues the render
 *       of the device picture src (the stacked cameras, RGBX32 or RGB24)
 *       into dst (device NV12/I420/RGB24 of the plan's size, e.g. an
 *       encoder's CUDA frame); pc_gpu_slot_wait(g, slot) covers it.
 *       RGBX32 sources are read through a texture object made on the
 *       first use of each picture (kept for the next frames). A plan
 *       blended multiband also runs its pyramid on a side stream beside
 *       the main pass, then its strips on the compute stream
 *       (render_mb_cuda.h); the ray kernels only.
 *   pc_gpu_render_set_gains(r, gains)  gain compensation: the next
 *       renders use them (kernel parameters: no copy, no pass).
 *   pc_gpu_render_update(r, plan)  a moved view (pc_render_plan_set_view
 *       on the plan r was prepared from): the ray terms and masks are
 *       copied into pinned staging and from there, asynchronously, to
 *       the device on the compute stream, so renders queued before still
 *       read the old ones; the view itself travels by value in the next
 *       launches. Two staging buffers (allocated by prepare: an update
 *       allocates nothing), each with an event: the host refills one only
 *       once the copy queued from it two updates ago has run (it waits
 *       there if the GPU is that far behind).
 *   pc_gpu_render_measure / pc_gpu_render_stats  the overlap statistics
 *       of gain compensation, on the slot's picture, read after the wait.
 *
 * Built without CUDA, every call returns PC_ENOTSUP (render_cuda_stub.c).
 */
#ifndef PANOCAP_RENDER_CUDA_H
#define PANOCAP_RENDER_CUDA_H

#include "gpu.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_gpu_renderer pc_gpu_renderer;

/* The kernels (cuda_render.cuh), for pc_gpu_render_enqueue and timing. */
typedef enum pc_gpu_render_variant {
    PC_GPU_RENDER_RAY = 0,       /* rays on the fly; RGBX32 through the texture unit */
    PC_GPU_RENDER_RAY_LOADS = 1, /* rays on the fly; plain loads, no texture */
    PC_GPU_RENDER_MAP = 2,       /* precomputed maps (prepared with PC_GPU_RENDER_WANT_MAP) */
    PC_GPU_RENDER_PEER = 3,      /* the straightforward per-camera remap (PC_GPU_RENDER_WANT_PEER) */
    PC_GPU_RENDER_VARIANTS = 4,
} pc_gpu_render_variant;
const char *pc_gpu_render_variant_name(int variant); /* "ray", "ray-loads", "map", "peer" */

#define PC_GPU_RENDER_WANT_MAP 1u  /* the plan must have maps (pc_render_options.maps) */
#define PC_GPU_RENDER_WANT_PEER 2u

int pc_gpu_render_prepare(pc_gpu *g, const pc_render_plan *plan, unsigned wants, pc_gpu_renderer **out, char *err,
                          size_t errlen);
/* Waits for the renders in flight, frees everything; NULL is fine. */
void pc_gpu_render_free(pc_gpu_renderer *r);

int pc_gpu_render_set_gains(pc_gpu_renderer *r, const float gains[][3], char *err, size_t errlen);

/* A moved view, from the next render on (see above). The plan must be the
 * one r was prepared from (same size and cameras), moved by
 * pc_render_plan_set_view. */
int pc_gpu_render_update(pc_gpu_renderer *r, const pc_render_plan *plan, char *err, size_t errlen);

/* Enqueues the render of src into dst on the compute stream, then marks
 * the slot (pc_gpu_slot_mark). */
int pc_gpu_render(pc_gpu *g, int slot, pc_gpu_renderer *r, const pc_picture *src, const pc_picture *dst, char *err,
                  size_t errlen);
/* The same with a chosen kernel and no slot (benchmarks, tests). */
int pc_gpu_render_enqueue(pc_gpu_renderer *r, int variant, const pc_picture *src, const pc_picture *dst, char *err,
                          size_t errlen);

/* Enqueues the overlap statistics of src and their copy to the host;
 * pc_gpu_render_stats returns them once pc_gpu_slot_wait(g, slot) did. */
int pc_gpu_render_measure(pc_gpu *g, int slot, pc_gpu_renderer *r, const pc_picture *src, char *err, size_t errlen);
int pc_gpu_render_stats(pc_gpu_renderer *r, pc_render_stats *st, char *err, size_t errlen);

/* A device picture of any size and format (RGBX32 included), one
 * cudaMallocPitch per plane; free with pc_gpu_picture_free. */
int pc_gpu_render_picture_alloc(pc_gpu *g, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width, int height,
                                pc_picture *out, char *err, size_t errlen);

/* Times iters frames (after warmup ones) of n renders each: render k
 * with variant[k] from src[i % nsrc] into dst[k * ndst + i % ndst] (the
 * rotation keeps the inputs and outputs out of L2). us[i]: GPU time of
 * frame i, CUDA events around it, the frames enqueued back to back. */
int pc_gpu_render_time(int n, pc_gpu_renderer *const *r, const int *variant, const pc_picture *src, int nsrc,
                       const pc_picture *dst, int ndst, int warmup, int iters, double *us, char *err,
                       size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
