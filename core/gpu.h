/* gpu.h - the GPU device context every room shares, as a plain C API: no
 * CUDA header is needed to use it (streams and contexts are void*).
 *
 * One pc_gpu serves one frame size on one device: its streams (uploads,
 * compute), per-slot input buffers and events, device and pinned host
 * memory. The render family (render_cuda.h), the activity map and the
 * encoders' CUDA frames use only this part; the demosaic family's calls on
 * the same context (pc_gpu_set_algo, pc_gpu_upload_async, pc_gpu_debayer,
 * the colour stage) are in kernels/debayer_cuda.h. Both are implemented
 * in kernels/debayer_cuda.cu, since the context holds the demosaic's input
 * ring, graph cache and tuning (or by the stub without CUDA, whose
 * pc_gpu_device_count() is 0).
 *
 * Errors: 0 or a negative PC_E* code (core.h), with a message naming the
 * CUDA call and the frame size.
 */
#ifndef PANOCAP_GPU_H
#define PANOCAP_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "picture.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_gpu pc_gpu;

#define PC_GPU_MAX_SLOTS 8

/* Number of usable CUDA devices; 0 (not an error) when there is no device
 * or no driver, or when the library was built without CUDA. */
int pc_gpu_device_count(void);

/* Opens `device` for frames of width x height (spec sizes: even, >= 8)
 * with `slots` input buffers (1..PC_GPU_MAX_SLOTS). */
int pc_gpu_open(pc_gpu **out, int device, int width, int height, int slots,
                char *err, size_t errlen);
void pc_gpu_close(pc_gpu *g);

const char *pc_gpu_device_name(const pc_gpu *g);
int pc_gpu_slots(const pc_gpu *g);

/* The alignment, in bytes, that the kernels' stores need of every plane
 * pointer and pitch of a destination in fmt: 4 (they store 2 and 4 bytes
 * of Y' and chroma at once), 16 for RGBX32 (a thread's four texels of a
 * row are one 16-byte store). pc_gpu_picture_alloc's pictures and CUDA
 * textures' (pitch a multiple of 32) have it. */
static inline size_t pc_gpu_dst_align(pc_pixfmt fmt)
{
    return fmt == PC_FMT_RGBX32 ? 16 : 4;
}

/* Enqueues copies of every plane of dev into host (same format and size)
 * on the compute stream, after the slot's debayer. "host" may also be
 * device memory (an NVENC CUDA frame): the direction comes from the
 * pointers (cudaMemcpyDefault, unified addressing). */
int pc_gpu_download_async(pc_gpu *g, int slot, const pc_picture *dev, const pc_picture *host,
                          char *err, size_t errlen);
/* The other way: host (host memory, pinned for a truly asynchronous
 * copy) into dev (a device picture of the same format and size), on the
 * compute stream; slot's wait says it is done (replay/: a decoded
 * panorama frame the renderer draws from). */
int pc_gpu_picture_upload_async(pc_gpu *g, int slot, const pc_picture *host, const pc_picture *dev, char *err,
                                size_t errlen);

/* Enqueues, on the compute stream after the slot's debayer, the device
 * NV12 picture dev scaled down `scale` times by a box filter
 * (bit-identical to pc_picture_downscale) into dst (NV12, host or device
 * memory, (width/scale)&~1 x (height/scale)&~1), staged on the device. For
 * the preview rendition. */
int pc_gpu_downscale_async(pc_gpu *g, int slot, const pc_picture *dev, const pc_picture *dst, int scale,
                           char *err, size_t errlen);

/* For work another module enqueues on the compute stream (pc_gpu_stream)
 * after the slot's debayer, e.g. the renderer (render_cuda.h): records the
 * slot's completion event after it, so that pc_gpu_slot_wait covers it. */
int pc_gpu_slot_mark(pc_gpu *g, int slot, char *err, size_t errlen);
/* The CUDA device index g was opened on. */
int pc_gpu_device(const pc_gpu *g);

/* Waits until everything enqueued for `slot` (debayer, download) is done. */
int pc_gpu_slot_wait(pc_gpu *g, int slot, char *err, size_t errlen);
/* Waits for all work of this pc_gpu. */
int pc_gpu_sync(pc_gpu *g, char *err, size_t errlen);

/* The compute stream (cudaStream_t) and the device's primary context
 * (CUcontext), e.g. for FFmpeg's AVCUDADeviceContext. */
void *pc_gpu_stream(pc_gpu *g);
void *pc_gpu_cu_context(pc_gpu *g);

/* Device pictures of width x height (cudaMallocPitch per plane): the
 * frame's size for the debayer, any size for a picture rendered from it;
 * free with pc_gpu_picture_free. */
int pc_gpu_picture_alloc(pc_gpu *g, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width, int height,
                         pc_picture *out, char *err, size_t errlen);
void pc_gpu_picture_free(pc_gpu *g, pc_picture *pic);

/* Pinned (page-locked) host memory for capture buffers and downloads. */
int pc_gpu_host_alloc(size_t bytes, void **out, char *err, size_t errlen);
void pc_gpu_host_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
