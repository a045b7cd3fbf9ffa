/* cuda_net.cu - device instantiation and host code of the learned
 * demosaic's kernels (cuda_net.cuh): pc_cuda_net, net's own CUDA
 * implementation for debayer_cuda.cu (cuda_launch.h), and the bench/test
 * calls of debayer_cuda.h (pc_gpu_net_*).
 *
 * open: refuses devices without mma.m16n8k16 and cp.async (compute
 *   capability < 8.0) or without the shared memory of the smallest CONV
 *   kernel; lists the CONV kernels this GPU runs (pc_gpu_net_convs), in
 *   the order of preference: wgmma 8/2 and 4/1 (compute capability 9.0 and
 *   a build with their sm_90a code, cuda_net_wg.cu), then mma.sync 8/2
 *   (Hopper), 4/2 (A100), 2/1 (sm_86/89), 4/1; the first is used unless a
 *   bench or test picks another (pc_gpu_net_set_conv). Sizes the grids.
 * set_net: the weights' blob (net_gpu.h) built on the host and copied to
 *   the device, the planes (two 64-channel, one U) allocated for frames of
 *   up to PC_GPU_MAX_CAMERAS cameras; after the stream's frames in flight
 *   are done (between frames: a new weights file on a live switch).
 * enqueue: depth + 2 launches on the stream, nothing allocated, no
 *   synchronisation (capture-safe) unless a bench switched the per-launch
 *   profile on (pc_gpu_net_set_profile: events around every launch, the
 *   previous frame's waited for and summed at each enqueue).
 * No environment variable changes what it computes or how. */
#include "cuda_launch.h"
#include "cuda_net.cuh"
#include "debayer.h"
#include "debayer_cuda.h"
#include "errmsg.h"

#if PC_NET_HAVE_WG
#include "cuda_net_wg.h"
#endif

#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

template <int WR, int NBUF, int MODE>
__global__ void __launch_bounds__(32 * WR, 1) pc_net_k_conv(const __grid_constant__ pc_net_lp p)
{
    pc_net_conv_body<WR, NBUF, MODE, 0>(p);
}
__global__ void __launch_bounds__(PC_NET_L1_NT) pc_net_k_l1(const __grid_constant__ pc_net_l1p p) { pc_net_l1_body(p); }
__global__ void __launch_bounds__(PC_NET_XNT, 2) pc_net_k_tail(const __grid_constant__ pc_net_tp p)
{
    pc_net_tail_body(p);
}

#define PC_NET_PROF_MAX (PC_NET_MAX_DEPTH + 2)

struct pc_net_gpu {
    int W, H;
    int optin, num_sms;
    pc_gpu_net_conv convs[PC_GPU_NET_MAX_CONVS]; /* what this GPU runs, the automatic choice first */
    int nconvs, conv;                            /* ... and the one in use */
    int ctas_l1, ctas_tail;
    /* set_net */
    int depth;
    pc_netg_layout lay;
    unsigned char *blob; /* device */
    unsigned char *hblob;
    uint16_t *act[2], *uplane;
    size_t cells;
    /* pc_gpu_net_set_profile */
    int prof;
    cudaEvent_t ev[PC_NET_PROF_MAX + 1];
    int pending, frames;
    double ms[PC_NET_PROF_MAX];
};

#define NCK(call, what)                                                                                           \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess) {                                                                                  \
            pc_set_err(err, errlen, "net: %s failed: %s (%s; %s)", #call, cudaGetErrorString(e_),                 \
                       cudaGetErrorName(e_), what);                                                               \
            return PC_EDEVICE;                                                                                    \
        }                                                                                                         \
    } while (0)

/* mma.sync CONV kernel (WR, NBUF): its shared memory limit raised to smem,
 * its resident blocks per SM. */
template <int WR, int NBUF>
static cudaError_t mma_prepare(size_t smem, int *blocks)
{
    cudaError_t e = cudaFuncSetAttribute(pc_net_k_conv<WR, NBUF, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(pc_net_k_conv<WR, NBUF, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, pc_net_k_conv<WR, NBUF, 0>, 32 * WR, smem);
    return e;
}
#if PC_NET_HAVE_WG
template <int WR, int NBUF>
static cudaError_t wg_prepare(size_t smem, int *blocks)
{
    return pc_net_wg_prepare(WR, NBUF, smem, blocks);
}
#endif

/* The CONV kernels in the order of preference (cuda_net_conv.cuh says
 * why each exists): on Hopper wgmma, 2 warpgroups sharing a 32 x 16 tile
 * with the next tile prefetched, then one warpgroup per CTA and two CTAs
 * per SM; then mma.sync by the shared memory a block may have. */
struct conv_cfg {
    int wg, wr, nbuf;
    size_t smem;
    cudaError_t (*prepare)(size_t smem, int *blocks);
};
static const conv_cfg conv_cfgs[] = {
#if PC_NET_HAVE_WG
    {1, 8, 2, pc_net_conv_smem<8, 2>(), wg_prepare<8, 2>},
    {1, 4, 1, pc_net_conv_smem<4, 1>(), wg_prepare<4, 1>},
#endif
    {0, 8, 2, pc_net_conv_smem<8, 2>(), mma_prepare<8, 2>},
    {0, 4, 2, pc_net_conv_smem<4, 2>(), mma_prepare<4, 2>},
    {0, 2, 1, pc_net_conv_smem<2, 1>(), mma_prepare<2, 1>},
    {0, 4, 1, pc_net_conv_smem<4, 1>(), mma_prepare<4, 1>},
};

static void net_close(void *state)
{
    pc_net_gpu *m = (pc_net_gpu *)state;
    if (!m)
        return;
    for (int i = 0; i <= PC_NET_PROF_MAX; i++)
        if (m->ev[i])
            cudaEventDestroy(m->ev[i]);
    cudaFree(m->blob);
    cudaFree(m->act[0]);
    cudaFree(m->act[1]);
    cudaFree(m->uplane);
    free(m->hblob);
    delete m;
}

static int net_open(void **state, int width, int height, void *stream, char *err, size_t errlen)
{
    (void)stream;
    *state = NULL;
    int dev = 0, major = 0, minor = 0, optin = 0, sms = 0;
    NCK(cudaGetDevice(&dev), "the device");
    NCK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "the device");
    NCK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), "the device");
    NCK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "the device");
    NCK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "the device");
    if (major < 8 || (size_t)optin < pc_net_conv_smem<2, 1>()) {
        pc_set_err(err, errlen, "net: this GPU (compute capability %d.%d, %d bytes of shared memory per block) "
                   "cannot run the net kernels: they need compute capability 8.0 (mma.m16n8k16, cp.async) and %zu "
                   "bytes (a layer's weights and a tile)", major, minor, optin, pc_net_conv_smem<2, 1>());
        return PC_ENOTSUP;
    }
    pc_net_gpu *m = new (std::nothrow) pc_net_gpu();
    if (!m) {
        pc_set_err(err, errlen, "net %dx%d: out of host memory", width, height);
        return PC_ENOMEM;
    }
    m->W = width;
    m->H = height;
    m->optin = optin;
    m->num_sms = sms;
    cudaError_t ce = cudaSuccess, first = cudaSuccess;
    for (const conv_cfg &c : conv_cfgs) {
        if (m->nconvs == PC_GPU_NET_MAX_CONVS || (size_t)optin < c.smem || (c.wg && (major != 9 || minor != 0)))
            continue;
        int blocks = 0;
        ce = c.prepare(c.smem, &blocks);
        if (ce != cudaSuccess || blocks < 1) {
            first = first != cudaSuccess || c.wg ? first : ce; /* wgmma without code here is not an error */
            continue;
        }
        pc_gpu_net_conv &v = m->convs[m->nconvs++];
        v.wgmma = c.wg;
        v.warps = c.wr;
        v.bufs = c.nbuf;
        v.blocks_per_sm = blocks;
        v.smem = c.smem;
    }
    int occ_tail = 0;
    ce = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_tail, pc_net_k_tail, PC_NET_XNT, PC_NET_X_SMEM);
    if (m->nconvs == 0 || ce != cudaSuccess || occ_tail < 1) {
        pc_set_err(err, errlen, "net: no CONV kernel can run on this GPU (%d bytes of shared memory per block): %s; "
                   "the tail: %s (%d blocks per SM)", optin, cudaGetErrorString(first), cudaGetErrorString(ce),
                   occ_tail);
        delete m;
        return PC_ENOTSUP;
    }
    m->ctas_l1 = 8 * sms;
    m->ctas_tail = occ_tail * sms;
    *state = m;
    return 0;
}

static int net_set_net(void *state, const pc_net *net, void *stream, char *err, size_t errlen)
{
    pc_net_gpu *m = (pc_net_gpu *)state;
    pc_netg_layout lay;
    int rc = pc_netg_plan(net, &lay, err, errlen);
    if (rc)
        return rc;
    /* frames in flight read the old weights and planes */
    NCK(cudaStreamSynchronize((cudaStream_t)stream), "before new weights");
    unsigned char *hb = (unsigned char *)aligned_alloc(256, lay.bytes);
    if (!hb) {
        pc_set_err(err, errlen, "net: out of host memory for the weights (%zu bytes)", lay.bytes);
        return PC_ENOMEM;
    }
    pc_netg_build(net, &lay, hb);
    const size_t cells = pc_net_plane_cells(net->depth, m->W, m->H, PC_GPU_MAX_CAMERAS);
    if (lay.bytes != m->lay.bytes || cells != m->cells) {
        cudaFree(m->blob);
        cudaFree(m->act[0]);
        cudaFree(m->act[1]);
        cudaFree(m->uplane);
        m->blob = NULL;
        m->act[0] = m->act[1] = m->uplane = NULL;
        m->cells = 0;
        m->depth = 0;
        char what[160];
        snprintf(what, sizeof what, "%zu + 2 x %zu + %zu bytes of weights and planes, frame %dx%d", lay.bytes,
                 cells * 128, cells * 2 * PC_NET_UCH, m->W, m->H);
        cudaError_t e = cudaMalloc((void **)&m->blob, lay.bytes);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&m->act[0], cells * 128);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&m->act[1], cells * 128);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&m->uplane, cells * 2 * PC_NET_UCH);
        if (e != cudaSuccess) {
            free(hb);
            pc_set_err(err, errlen, "net: cudaMalloc failed: %s (%s)", cudaGetErrorString(e), what);
            return PC_EDEVICE;
        }
        m->cells = cells;
    }
    cudaError_t e = cudaMemcpy(m->blob, hb, lay.bytes, cudaMemcpyHostToDevice);
    free(m->hblob);
    m->hblob = hb;
    if (e != cudaSuccess) {
        pc_set_err(err, errlen, "net: cudaMemcpy of the weights (%zu bytes) failed: %s", lay.bytes,
                   cudaGetErrorString(e));
        return PC_EDEVICE;
    }
    m->lay = lay;
    m->depth = net->depth;
    return 0;
}

namespace {
struct dev_launcher {
    cudaStream_t s;
    pc_net_gpu *m;
    bool timing = false; /* an event after each launch (the profile) */
    int k = 0;           /* launches so far */
    cudaError_t error = cudaSuccess;
    const char *failed = nullptr;
    int done(const char *name, cudaError_t e)
    {
        if (e == cudaSuccess)
            e = cudaGetLastError();
        if (e != cudaSuccess) {
            error = e;
            failed = name;
            return -1;
        }
        if (timing)
            cudaEventRecord(m->ev[++k], s);
        return 0;
    }
    int l1(int grid, const pc_net_l1p &p)
    {
        pc_net_k_l1<<<grid, PC_NET_L1_NT, PC_NET_L1_SMEM, s>>>(p);
        return done("L1", cudaSuccess);
    }
    int conv(int mode, int wg, int wr, int nbuf, int grid, const pc_net_lp &p)
    {
        const size_t sm = m->convs[m->conv].smem;
        cudaError_t e = cudaSuccess;
        if (wg) {
#if PC_NET_HAVE_WG
            e = pc_net_wg_launch(mode, wr, nbuf, grid, sm, s, p);
#else
            e = cudaErrorInvalidValue;
#endif
        } else if (wr == 8 && nbuf == 2) {
            if (mode)
                pc_net_k_conv<8, 2, 1><<<grid, 256, sm, s>>>(p);
            else
                pc_net_k_conv<8, 2, 0><<<grid, 256, sm, s>>>(p);
        } else if (wr == 4 && nbuf == 2) {
            if (mode)
                pc_net_k_conv<4, 2, 1><<<grid, 128, sm, s>>>(p);
            else
                pc_net_k_conv<4, 2, 0><<<grid, 128, sm, s>>>(p);
        } else if (wr == 4) {
            if (mode)
                pc_net_k_conv<4, 1, 1><<<grid, 128, sm, s>>>(p);
            else
                pc_net_k_conv<4, 1, 0><<<grid, 128, sm, s>>>(p);
        } else {
            if (mode)
                pc_net_k_conv<2, 1, 1><<<grid, 64, sm, s>>>(p);
            else
                pc_net_k_conv<2, 1, 0><<<grid, 64, sm, s>>>(p);
        }
        return done(mode ? "CONVU" : wg ? "CONV (wgmma)" : "CONV", e);
    }
    int tail(int grid, const pc_net_tp &p)
    {
        pc_net_k_tail<<<grid, PC_NET_XNT, PC_NET_X_SMEM, s>>>(p);
        return done("TAIL", cudaSuccess);
    }
};
} // namespace

/* The previous profiled frame's launch times, summed (waits for it). */
static cudaError_t prof_collect(pc_net_gpu *m)
{
    if (!m->pending)
        return cudaSuccess;
    m->pending = 0;
    cudaError_t e = cudaEventSynchronize(m->ev[m->depth + 2]);
    for (int i = 0; i < m->depth + 2 && e == cudaSuccess; i++) {
        float ms = 0;
        e = cudaEventElapsedTime(&ms, m->ev[i], m->ev[i + 1]);
        m->ms[i] += ms;
    }
    m->frames += e == cudaSuccess;
    return e;
}

static int net_enqueue(void *state, const pc_cuda_frame *f, void *stream, char *err, size_t errlen)
{
    pc_net_gpu *m = (pc_net_gpu *)state;
    if (!m || f->W != m->W || f->H != m->H) {
        pc_set_err(err, errlen, "net: opened for %dx%d, cannot take a %dx%d frame", m ? m->W : 0, m ? m->H : 0, f->W,
                   f->H);
        return PC_EINVAL;
    }
    if (!m->blob) {
        pc_set_err(err, errlen, "net: no weights (pc_gpu_set_net)");
        return PC_EINVAL;
    }
    const int ch = f->cam_rows ? f->cam_rows : f->H;
    if (ch < PC_MIN_DIM || (ch & 1) || f->H % ch || f->H / ch > PC_GPU_MAX_CAMERAS) {
        pc_set_err(err, errlen, "net: frame %dx%d of %d-row cameras: the rows per camera must be even, at least %d, "
                   "divide the height, and give at most %d cameras", f->W, f->H, ch, PC_MIN_DIM, PC_GPU_MAX_CAMERAS);
        return PC_EINVAL;
    }
    const pc_gpu_net_conv &cv = m->convs[m->conv];
    pc_net_frame_args a;
    memset(&a, 0, sizeof a);
    a.depth = m->depth;
    pc_net_geo_set(a.g, m->depth, f->W, ch, f->H / ch, f->cfa);
    a.src = f->src;
    a.pitch = f->src_pitch;
    a.act[0] = m->act[0];
    a.act[1] = m->act[1];
    a.uplane = m->uplane;
    a.blob = m->blob;
    a.lay = &m->lay;
    a.wg = cv.wgmma;
    a.wr = cv.warps;
    a.nbuf = cv.bufs;
    a.ctas_conv = cv.blocks_per_sm * m->num_sms;
    a.ctas_l1 = m->ctas_l1;
    a.ctas_tail = m->ctas_tail;
    if (pc_mlri_set_dst(a.o, f->dst, f->yc)) {
        pc_set_err(err, errlen, "net: %d colour bands of %d rows (1..%d bands)", f->dst->n_bands, f->dst->band_rows,
                   PC_KMAX_BANDS);
        return PC_EINVAL;
    }
    a.o.W = f->W;
    a.o.H = f->H;
    cudaStream_t s = (cudaStream_t)stream;
    dev_launcher L;
    L.s = s;
    L.m = m;
    if (m->prof) {
        NCK(prof_collect(m), "the previous frame's profile");
        L.timing = true;
        NCK(cudaEventRecord(m->ev[0], s), "the profile");
    }
    const int rc = pc_net_sequence(L, a);
    if (L.timing && !rc)
        m->pending = 1;
    if (rc) {
        pc_set_err(err, errlen, "net kernel %s launch failed: %s (frame %dx%d, %d cameras, CONV %s %dx%d)",
                   L.failed ? L.failed : "?", cudaGetErrorString(L.error), f->W, f->H, f->H / ch,
                   cv.wgmma ? "wgmma" : "mma.sync", cv.warps, cv.bufs);
        return PC_EDEVICE;
    }
    return 0;
}

const pc_cuda_custom pc_cuda_net = {net_open, net_close, net_enqueue, net_set_net};

/* --- bench and test calls (debayer_cuda.h) ----------------------------------- */

static pc_net_gpu *net_state(pc_gpu *g, char *err, size_t errlen)
{
    return (pc_net_gpu *)pc_gpu_custom_state(g, PC_ALGO_NET, err, errlen);
}

extern "C" int pc_gpu_net_convs(pc_gpu *g, pc_gpu_net_conv *out, int max, char *err, size_t errlen)
{
    pc_net_gpu *m = net_state(g, err, errlen);
    if (!m)
        return PC_EINVAL;
    for (int i = 0; i < m->nconvs && i < max; i++)
        out[i] = m->convs[i];
    return m->nconvs;
}

extern "C" int pc_gpu_net_set_conv(pc_gpu *g, int index, char *err, size_t errlen)
{
    pc_net_gpu *m = net_state(g, err, errlen);
    if (!m)
        return PC_EINVAL;
    if (index < -1 || index >= m->nconvs) {
        pc_set_err(err, errlen, "pc_gpu_net_set_conv: kernel %d of %d (pc_gpu_net_convs), or -1", index, m->nconvs);
        return PC_EINVAL;
    }
    m->conv = index < 0 ? 0 : index;
    return 0;
}

extern "C" int pc_gpu_net_set_profile(pc_gpu *g, int on, char *err, size_t errlen)
{
    pc_net_gpu *m = net_state(g, err, errlen);
    if (!m)
        return PC_EINVAL;
    for (int i = 0; on && i <= PC_NET_PROF_MAX; i++)
        if (!m->ev[i])
            NCK(cudaEventCreate(&m->ev[i]), "the profile's events");
    if (!on)
        NCK(prof_collect(m), "the last profiled frame");
    m->prof = on != 0;
    m->pending = 0;
    m->frames = 0;
    memset(m->ms, 0, sizeof m->ms);
    return 0;
}

extern "C" int pc_gpu_net_profile(pc_gpu *g, double *ms, int max, int *launches, int *frames, char *err,
                                  size_t errlen)
{
    pc_net_gpu *m = net_state(g, err, errlen);
    if (!m)
        return PC_EINVAL;
    NCK(prof_collect(m), "the last profiled frame");
    const int n = m->depth + 2;
    for (int i = 0; i < n && i < max; i++)
        ms[i] = m->frames ? m->ms[i] / m->frames : 0.0;
    *launches = n;
    *frames = m->frames;
    return 0;
}
