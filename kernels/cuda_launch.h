/* cuda_launch.h - private interface between the per-family kernel files
 * (cuda_linear.cu, cuda_hue.cu, cuda_edge.cu, cuda_wd.cu) and the host
 * code of debayer_cuda.cu: the CUDA implementation of each algorithm, as
 * either
 *  - a fused-stencil kernel set (pc_kernel_set): one kernel per variant x
 *    output format, instantiated from cuda_algos.cuh with PC_KSET, plus the
 *    shared memory a CTA needs for a tile height; debayer_cuda.cu captures,
 *    tunes and replays it as a one-node CUDA graph; or
 *  - its own implementation (pc_cuda_custom), for an algorithm outside the
 *    one-fused-kernel model (float arithmetic, large windows, several
 *    kernels with temporaries, e.g. residual interpolation): debayer_cuda.cu
 *    gives it the input slot and the destination and it enqueues whatever
 *    it needs on the compute stream.
 * The table pc_cuda_algos (debayer_cuda.cu) has one entry per pc_algo_id,
 * checked at compile time. Host C++ (nvcc) only.
 */
#ifndef PANOCAP_CUDA_LAUNCH_H
#define PANOCAP_CUDA_LAUNCH_H

#include <stddef.h>

#include "cuda_common.cuh" /* PC_KFMT_* */
#include "debayer.h"

/* The kernels' template arguments are the public enums themselves. */
static_assert(PC_FMT_RGB24 == 0 && PC_FMT_NV12 == 1 && PC_FMT_I420 == 2 && PC_FMT_RGBX32 == 3,
              "pc_kernel_set.fn is indexed by pc_pixfmt");
static_assert(PC_VARIANT_2PX == 1 && PC_VARIANT_4PX == 2, "pc_kernel_set.fn is indexed by pc_variant");

struct pc_kernel_set {
    /* [pc_variant: AUTO (none), 2PX, 4PX][kernel format: pc_pixfmt RGB24,
     * NV12, I420, RGBX32, then NV12 and I420 + PC_KFMT_COL, then all six
     * again + PC_KFMT_GRID, where RGBX32's is NULL (cuda_common.cuh)] */
    const void *fn[3][PC_KFMT_COUNT];
    size_t (*smem)(int var, int th);
    int rp; /* raw halo rows (for reporting) */
    /* Writes n bands (PC_KBAND ints each) into this kernel file's
     * pc_cbands, enqueued on stream (a cudaStream_t); a CUDA error code. */
    int (*set_bands)(const int *v, int n, void *stream);
};

extern const pc_kernel_set pc_kset_bilinear, pc_kset_hqlinear, pc_kset_smoothhue,
    pc_kset_edge, pc_kset_hed, pc_kset_wdorig, pc_kset_wdmod;

/* One frame for an algorithm's own CUDA implementation. */
struct pc_cuda_frame {
    const uint8_t *src; /* the input slot in device memory: pixel (0,0) of a W x H
                           raw panorama, 16-byte aligned; every row has PC_HX bytes
                           of reflect-101 margin on the left and at least PC_HX on
                           the right (cuda_common.cuh), already filled */
    size_t src_pitch;   /* a multiple of 256 */
    int W, H;
    int cam_rows;       /* rows per camera of the stacked frame (pc_gpu_set_cam_rows);
                           0: the whole frame is one image */
    pc_cfa cfa;
    const pc_picture *dst; /* device picture in the configured format, matrix, range */
    pc_yuv_coeffs yc;      /* the §8 coefficients of dst's matrix and range */
};

/* An algorithm's own CUDA implementation. open is called once per pc_gpu,
 * on the first pc_gpu_set_algo to the algorithm (it allocates everything,
 * e.g. float temporaries, for W x H frames: nothing per frame); close from
 * pc_gpu_close. enqueue puts the whole demosaic of one frame on stream s
 * (a cudaStream_t) and must not synchronise. set_net (NULL for algorithms
 * without weights) takes the learned demosaic's weights (net.h): after
 * open, and again whenever pc_gpu_set_net gives new ones, between frames
 * (it may wait for the stream's frames in flight). All return 0 or a
 * negative PC_E* code with a message naming the CUDA call. */
struct pc_net;
struct pc_cuda_custom {
    int (*open)(void **state, int W, int H, void *stream, char *err, size_t errlen);
    void (*close)(void *state);
    int (*enqueue)(void *state, const pc_cuda_frame *f, void *stream, char *err, size_t errlen);
    int (*set_net)(void *state, const struct pc_net *net, void *stream, char *err, size_t errlen);
};

/* Algorithm algo's own-implementation state in g (debayer_cuda.cu), opened
 * if it was not yet; NULL with a message on an error. For the bench and
 * test calls of such an algorithm (cuda_net.cu: pc_gpu_net_*). */
struct pc_gpu;
void *pc_gpu_custom_state(struct pc_gpu *g, int algo, char *err, size_t errlen);

/* Algorithms with their own CUDA code. */
extern const pc_cuda_custom pc_cuda_mlri; /* cuda_mlri.cu */
extern const pc_cuda_custom pc_cuda_net;  /* cuda_net.cu */

/* The CUDA implementation of one algorithm: exactly one of ks, custom. */
struct pc_cuda_algo {
    pc_algo_id id;
    const pc_kernel_set *ks;
    const pc_cuda_custom *custom;
};

#ifdef PANOCAP_CUDA_KERNEL_CUH /* only in the files that instantiate kernels */
#define PC_KSET_ROW(A, V)                                                                        \
    {(const void *)pc_debayer_kernel<A, V, PC_FMT_RGB24>,                                        \
     (const void *)pc_debayer_kernel<A, V, PC_FMT_NV12>,                                         \
     (const void *)pc_debayer_kernel<A, V, PC_FMT_I420>,                                         \
     (const void *)pc_debayer_kernel<A, V, PC_FMT_RGBX32>,                                       \
     (const void *)pc_debayer_kernel<A, V, PC_FMT_NV12 + PC_KFMT_COL>,                           \
     (const void *)pc_debayer_kernel<A, V, PC_FMT_I420 + PC_KFMT_COL>,                           \
     (const void *)pc_debayer_kernel<A, V, PC_KFMT_GRID + PC_FMT_RGB24>,                         \
     (const void *)pc_debayer_kernel<A, V, PC_KFMT_GRID + PC_FMT_NV12>,                          \
     (const void *)pc_debayer_kernel<A, V, PC_KFMT_GRID + PC_FMT_I420>,                          \
     NULL, /* RGBX32 has no grid */                                                              \
     (const void *)pc_debayer_kernel<A, V, PC_KFMT_GRID + PC_FMT_NV12 + PC_KFMT_COL>,            \
     (const void *)pc_debayer_kernel<A, V, PC_KFMT_GRID + PC_FMT_I420 + PC_KFMT_COL>}
#define PC_KSET(A)                                                                               \
    {{{NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},                    \
      PC_KSET_ROW(A, PC_VARIANT_2PX), PC_KSET_ROW(A, PC_VARIANT_4PX)},                           \
     pc_smem_of<A>, A::RP, pc_set_cbands}

static inline int pc_set_cbands(const int *v, int n, void *stream)
{
    return (int)cudaMemcpyToSymbolAsync(pc_cbands, v, sizeof(int) * PC_KBAND * (size_t)n, 0, cudaMemcpyHostToDevice,
                                        (cudaStream_t)stream);
}

template <class A>
static size_t pc_smem_of(int var, int th)
{
    return var == PC_VARIANT_4PX ? pc_kernel_smem<A, PC_VARIANT_4PX>(th) : pc_kernel_smem<A, PC_VARIANT_2PX>(th);
}

#endif /* PANOCAP_CUDA_KERNEL_CUH */

#endif
