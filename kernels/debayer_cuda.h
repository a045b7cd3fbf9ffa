/* debayer_cuda.h - the CUDA backend of the demosaicing library, as a plain C
 * API: no CUDA header is needed to use it (streams and contexts are void*).
 * The device context these calls work on (pc_gpu: open, close, streams,
 * slots, downloads, device pictures, pinned memory) is the core's gpu.h.
 *
 * One pc_gpu serves one frame size on one device. pc_gpu_open allocates
 * everything once: `slots` raw input panoramas (device, 16-byte aligned
 * pitch), two streams (uploads, compute), per-slot events, and a scratch
 * picture used to time kernel variants. Nothing in the per-frame calls
 * allocates.
 *
 * Per frame (slot = one input buffer; keep 2-3 slots in flight):
 *   pc_gpu_upload_async(g, slot, row0, host, pitch, rows)   x 5 camera slabs
 *       cudaMemcpy2DAsync on the upload stream: the DMA engine stacks the
 *       slabs into the device panorama; it first waits until the kernel
 *       that last read this slot has finished.
 *   pc_gpu_debayer(g, slot, dst)       the whole algorithm as one CUDA graph
 *       replay on the compute stream, after the slot's uploads; dst is any
 *       device picture (e.g. an encoder's CUDA frame, pointers and pitches
 *       may change every frame) and receives NV12/I420/RGB24/RGBX32
 *       directly.
 *   pc_gpu_download_async(g, slot, dev, host)   optional, to pinned memory
 *   pc_gpu_slot_wait(g, slot)          host waits for that slot's work
 * pc_gpu_set_algo may be called between frames to switch algorithm,
 * variant, CFA, matrix, range or format live; graphs and tuning results
 * are cached per configuration.
 *
 * Errors: 0 or a negative PC_E* code (core.h), with a message naming
 * the CUDA call, the algorithm and the frame size.
 */
#ifndef PANOCAP_DEBAYER_CUDA_H
#define PANOCAP_DEBAYER_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "colour.h"
#include "debayer.h"
#include "gpu.h"
#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Selects what pc_gpu_debayer computes. variant AUTO picks the faster of
 * 2px and 4px as measured on this GPU (once per algorithm and format, then
 * cached); the pixels per thread (tile height) are likewise measured per
 * variant. The first call for a configuration takes a few milliseconds
 * (graph capture, and the measurement if not cached); later switches to
 * it are immediate. */
int pc_gpu_set_algo(pc_gpu *g, pc_algo_id algo, pc_variant variant, pc_cfa cfa,
                    pc_pixfmt fmt, pc_matrix matrix, pc_range range,
                    char *err, size_t errlen);

/* The learned demosaic's weights (net.h, loaded by pc_net_load) for
 * --algo net: checked against what the tensor-core kernels take (width 64:
 * net_gpu.h), converted to their fp16 layout and copied to the device here
 * (waiting for the frames in flight; the net state and its planes, ~0.3 KB
 * a pixel of the frame, are allocated now if net was not selected yet), so
 * net need not outlive the call. NULL: the default file
 * (pc_net_default_path), loaded at the next pc_gpu_set_algo of net. On an
 * error (a model the kernels cannot run, no device memory) the message
 * says why. */
int pc_gpu_set_net(pc_gpu *g, const pc_net *net, char *err, size_t errlen);

/* Rows per camera of the frames (pc_bayer.cam_rows: the stacked layout);
 * 0 = the whole frame is one image. Even, at least PC_MIN_DIM, dividing
 * the height. Algorithms that demosaic each camera on its own (net) take
 * it from the next frame on; the others ignore it. */
int pc_gpu_set_cam_rows(pc_gpu *g, int cam_rows, char *err, size_t errlen);

/* The variant (PC_VARIANT_2PX/4PX) and tile height in use since the last
 * successful pc_gpu_set_algo. */
void pc_gpu_get_choice(const pc_gpu *g, pc_variant *variant, int *tile_rows);

/* Forces the tile height (rows per tile, a multiple of 4 from 4 to 64; the
 * pixels-per-thread knob) for the current configuration; 0 restores the
 * measured choice. For benchmarks and tests. */
int pc_gpu_set_tile_rows(pc_gpu *g, int rows, char *err, size_t errlen);

/* Options (bit mask), for measurements; 0 is the default:
 * PC_GPU_OPT_STREAM_LAUNCH: launch the kernel with cudaLaunchKernel
 *   instead of replaying the configuration's CUDA graph;
 * PC_GPU_OPT_FRAME_TIMING: a timed event pair around each frame, for
 *   pc_gpu_frame_time_us (costs about 1 us of GPU time per frame; off by
 *   default, when a single untimed event marks the slot's completion). */
#define PC_GPU_OPT_STREAM_LAUNCH 1u
#define PC_GPU_OPT_FRAME_TIMING 2u
void pc_gpu_set_options(pc_gpu *g, unsigned options);

/* --- net on CUDA: for benchmarks and tests only ----------------------------
 * Nothing here changes what is computed (the same network, the same rule
 * against the reference: docs/net.md), only how fast; the daemon never
 * calls it. net's 3x3 layers run one of several CONV kernels
 * (cuda_net_conv.cuh): wgmma (Hopper's warpgroup MMA: a GPU of compute
 * capability 9.0 and a build whose gpu_arch has 90) or mma.sync (compute
 * capability 8.0 and later), each with `warps` warps a block and `bufs`
 * input-tile buffers. The automatic choice is the first this GPU runs in
 * pc_gpu_net_convs's order. */
typedef struct pc_gpu_net_conv {
    int wgmma;         /* 1: wgmma (sm_90a), 0: mma.sync */
    int warps, bufs;
    int blocks_per_sm; /* resident blocks per multiprocessor */
    size_t smem;       /* shared memory per block, bytes */
} pc_gpu_net_conv;
#define PC_GPU_NET_MAX_CONVS 8
/* The CONV kernels this GPU can run, the automatic choice first (net's
 * state is opened if it was not): their number (at most max are written),
 * or a negative PC_E* code. */
int pc_gpu_net_convs(pc_gpu *g, pc_gpu_net_conv *out, int max, char *err, size_t errlen);
/* net's layers run CONV kernel `index` of pc_gpu_net_convs from the next
 * frame on; -1: the automatic choice again. */
int pc_gpu_net_set_conv(pc_gpu *g, int index, char *err, size_t errlen);
/* Per-launch GPU times of net's frames. While on, each frame's launches
 * (L1, the depth CONV layers, CONVU, TAIL: depth + 2) are timed by events,
 * and every enqueue first waits for the previous frame's (frames do not
 * overlap: for measurements only). pc_gpu_net_profile writes the mean ms
 * of each launch over the frames timed since the profile was switched on
 * (at most max; *launches = depth + 2, *frames = the frames timed), after
 * waiting for the last one. */
int pc_gpu_net_set_profile(pc_gpu *g, int on, char *err, size_t errlen);
int pc_gpu_net_profile(pc_gpu *g, double *ms, int max, int *launches, int *frames, char *err, size_t errlen);

/* --- mlri on CUDA: for benchmarks and tests only ---------------------------
 * Nothing here changes what is computed (docs/mlri.md), only how fast; the
 * daemon never calls it. Rows per CTA of mlri's two walkers, DIR and RB
 * (0 = the default; else 2..4096, rounded down to even), and DIR's lean
 * variant (1: the leaving rows' products computed again, one row buffer
 * for two: 4 CTAs per SM instead of 3), from the next frame on; mlri's
 * state is opened if it was not. tools/gpu-mlri sweeps them through
 * panocap-bench --mlri-tiles. */
int pc_gpu_mlri_set_tiles(pc_gpu *g, int dir_rows, int rb_rows, int dir_lean, char *err, size_t errlen);

/* --- colour stage (docs/colour.md) -----------------------------------------
 * Cameras that send other than 8-bit data, or have colour settings, are
 * uploaded raw and go through the colour pass (one small kernel per frame,
 * on the upload stream): unpack, then the camera's per-colour table, into
 * the slot's 8-bit panorama, then the margins. */
#define PC_GPU_MAX_CAMERAS 16
/* Copies camera cam's tables to the device, on the upload stream: raw
 * uploads enqueued after this call use them, earlier ones the old ones. */
int pc_gpu_set_colour_tables(pc_gpu *g, int cam, const pc_colour_tables *t, char *err, size_t errlen);
/* Copies a raw slab (the stream of rows x width samples in format f,
 * pc_rawfmt_frame_bytes(f, W, rows) bytes at host) into a device staging
 * buffer and maps it with camera cam's tables into rows [row0, row0+rows)
 * of the slot (row0 and rows even). The slabs of the stacked layout
 * (row0 = cam * rows, one format) are mapped together, in one launch
 * enqueued by the slot's next pc_gpu_debayer; other slabs at once. */
int pc_gpu_upload_raw_async(pc_gpu *g, int slot, int row0, const uint8_t *host, const pc_rawfmt *f, int cam,
                            int rows, char *err, size_t errlen);
/* GPU time of the colour pass over one whole frame of ncam stacked camera
 * slabs in format f (as the raw uploads run it: one launch, data already
 * on the device), in microseconds. */
int pc_gpu_colour_time_us(pc_gpu *g, const pc_rawfmt *f, int ncam, double *us, char *err, size_t errlen);

/* Device pointer and pitch of input slot `slot` (width x height bytes). */
uint8_t *pc_gpu_input(pc_gpu *g, int slot, size_t *pitch);

/* Copies rows [row0, row0+rows) of the slot's panorama from host memory
 * (pinned for a truly asynchronous copy) on the upload stream, then
 * refreshes those rows' mirrored margins (a tiny kernel on the same stream:
 * the slot buffer has 16 bytes of margin left and right of the image that
 * hold the reflect-101 samples, so the debayer kernels need no edge code). */
int pc_gpu_upload_async(pc_gpu *g, int slot, int row0, const uint8_t *host,
                        size_t host_pitch, int rows, char *err, size_t errlen);

/* For callers that write into pc_gpu_input() themselves (instead of
 * pc_gpu_upload_async): enqueues, on the upload stream, the refresh of the
 * mirrored margins of those rows that the kernels rely on. Enqueue it after
 * the writes, on the upload stream's order (or synchronise first). */
int pc_gpu_input_written(pc_gpu *g, int slot, int row0, int rows, char *err, size_t errlen);

/* GPU time of refreshing the margins of one whole frame (the per-slab
 * work of pc_gpu_upload_async besides the copy), in microseconds. */
int pc_gpu_margin_time_us(pc_gpu *g, double *us, char *err, size_t errlen);

/* Enqueues the demosaic of `slot` into the device picture dst (format,
 * size, matrix and range as set by pc_gpu_set_algo; plane pointers and
 * pitches must be multiples of pc_gpu_dst_align(format)). A grid picture
 * (pc_picture.grid_cols) is refused for RGBX32. */
int pc_gpu_debayer(pc_gpu *g, int slot, const pc_picture *dst, char *err, size_t errlen);

/* GPU time of the slot's last debayer (graph replay), in microseconds,
 * once it has completed (call after pc_gpu_slot_wait); needs
 * PC_GPU_OPT_FRAME_TIMING (pc_gpu_set_options). */
int pc_gpu_frame_time_us(pc_gpu *g, int slot, double *us, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
