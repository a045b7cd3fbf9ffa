/* cuda_net.cu - device instantiation and host code of the learned
 * demosaic's kernels (cuda_net.cuh): pc_cuda_net, net's own CUDA
 * implementation for debayer_cuda.cu (cuda_launch.h).
 *
 * open: refuses devices without mma.m16n8k16 and cp.async (compute
 *   capability < 8.0) or without the shared memory of the smallest CONV
 *   tile, picks CONV's tile (WR warps, NBUF input buffers) from the shared
 *   memory a block may have (Hopper 8/2, A100 4/2, sm_86/89 2/1;
 *   PANOCAP_NET_TILE="WR,NBUF" forces one), and sizes the grids.
 * set_net: the weights' blob (net_gpu.h) built on the host and copied to
 *   the device, the planes (two 64-channel, one U) allocated for frames of
 *   up to PC_GPU_MAX_CAMERAS cameras; after the stream's frames in flight
 *   are done (between frames: a new weights file on a live switch).
 * enqueue: depth + 2 launches on the stream, nothing allocated, no
 *   synchronisation (capture-safe).
 * PANOCAP_NET_PROFILE=1 (measurements, tools/gpu-net): timing events
 *   around every launch; each frame's times are read without waiting, when
 *   the next frame is enqueued, and the per-kernel means are printed on
 *   stderr at close.
 * Built into its own static library (kernels/meson.build). */
#include "cuda_launch.h"
#include "cuda_net.cuh"
#include "debayer.h"
#include "debayer_cuda.h"
#include "errmsg.h"

#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

template <int WR, int NBUF, int MODE>
__global__ void __launch_bounds__(32 * WR, 1) pc_net_k_conv(const __grid_constant__ pc_net_lp p)
{
    pc_net_conv_body<WR, NBUF, MODE>(p);
}
__global__ void __launch_bounds__(PC_NET_L1_NT) pc_net_k_l1(const __grid_constant__ pc_net_l1p p) { pc_net_l1_body(p); }
__global__ void __launch_bounds__(PC_NET_XNT, 2) pc_net_k_tail(const __grid_constant__ pc_net_tp p)
{
    pc_net_tail_body(p);
}

#define PC_NET_PROF_MAX (PC_NET_MAX_DEPTH + 2)

struct pc_net_gpu {
    int W, H;
    int wr, nbuf;
    size_t conv_smem;
    int num_sms, ctas_conv, ctas_l1, ctas_tail;
    /* set_net */
    int depth;
    pc_netg_layout lay;
    unsigned char *blob; /* device */
    unsigned char *hblob;
    uint16_t *act[2], *uplane;
    size_t cells;
    /* PANOCAP_NET_PROFILE */
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

/* CONV's tiles (cuda_net.cuh): WR warps, NBUF input buffers; the host
 * takes the first that fits this GPU's shared memory per block, unless
 * PANOCAP_NET_TILE names another that fits. (4, 1) is the alternative for
 * Hopper: two CTAs per SM (2 x 112.5 KB), one computing while the other
 * loads or stores, instead of one CTA prefetching its next tile. */
template <int WR, int NBUF>
static cudaError_t conv_prepare(int *blocks)
{
    const size_t smem = pc_net_conv_smem<WR, NBUF>();
    cudaError_t e = cudaFuncSetAttribute(pc_net_k_conv<WR, NBUF, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(pc_net_k_conv<WR, NBUF, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, pc_net_k_conv<WR, NBUF, 0>, 32 * WR, smem);
    return e;
}
struct conv_cfg {
    int wr, nbuf;
    size_t smem;
    cudaError_t (*prepare)(int *blocks);
};
static const conv_cfg conv_cfgs[] = {
    {8, 2, pc_net_conv_smem<8, 2>(), conv_prepare<8, 2>},
    {4, 2, pc_net_conv_smem<4, 2>(), conv_prepare<4, 2>},
    {2, 1, pc_net_conv_smem<2, 1>(), conv_prepare<2, 1>},
    {4, 1, pc_net_conv_smem<4, 1>(), conv_prepare<4, 1>},
};

static void net_close(void *state)
{
    pc_net_gpu *m = (pc_net_gpu *)state;
    if (!m)
        return;
    if (m->prof && m->frames)
        fprintf(stderr, "net profile (%d frames, mean ms per launch): L1 %.4f  CONV first %.4f last %.4f  "
                "CONV-filters %.4f  CONVU %.4f  TAIL %.4f  all %.4f\n", m->frames, m->ms[0] / m->frames,
                m->depth > 2 ? m->ms[1] / m->frames : 0.0, m->depth > 2 ? m->ms[m->depth - 2] / m->frames : 0.0,
                m->ms[m->depth - 1] / m->frames, m->ms[m->depth] / m->frames, m->ms[m->depth + 1] / m->frames, [&] {
                    double s = 0;
                    for (int i = 0; i < m->depth + 2; i++)
                        s += m->ms[i];
                    return s / m->frames;
                }());
    if (m->prof && m->frames) {
        fprintf(stderr, "net profile per launch:");
        for (int i = 0; i < m->depth + 2; i++)
            fprintf(stderr, " %.4f", m->ms[i] / m->frames);
        fprintf(stderr, "\n");
    }
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
    int dev = 0, major = 0, optin = 0, sms = 0;
    NCK(cudaGetDevice(&dev), "the device");
    NCK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "the device");
    NCK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "the device");
    NCK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "the device");
    if (major < 8 || (size_t)optin < pc_net_conv_smem<2, 1>()) {
        pc_set_err(err, errlen, "net: this GPU (compute capability %d.x, %d bytes of shared memory per block) cannot "
                   "run the net kernels: they need compute capability 8.0 (mma.m16n8k16, cp.async) and %zu bytes (a "
                   "layer's weights and a tile)", major, optin, pc_net_conv_smem<2, 1>());
        return PC_ENOTSUP;
    }
    pc_net_gpu *m = new (std::nothrow) pc_net_gpu();
    if (!m) {
        pc_set_err(err, errlen, "net %dx%d: out of host memory", width, height);
        return PC_ENOMEM;
    }
    m->W = width;
    m->H = height;
    m->num_sms = sms;
    const conv_cfg *cfg = NULL;
    for (const conv_cfg &c : conv_cfgs)
        if (!cfg && (size_t)optin >= c.smem)
            cfg = &c;
    const char *e = getenv("PANOCAP_NET_TILE");
    int fw = 0, fb = 0;
    if (e && sscanf(e, "%d,%d", &fw, &fb) == 2)
        for (const conv_cfg &c : conv_cfgs)
            if (c.wr == fw && c.nbuf == fb && (size_t)optin >= c.smem)
                cfg = &c;
    m->wr = cfg->wr;
    m->nbuf = cfg->nbuf;
    m->conv_smem = cfg->smem;
    int occ = 0, occ_tail = 0;
    cudaError_t ce = cfg->prepare(&occ);
    if (ce == cudaSuccess)
        ce = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_tail, pc_net_k_tail, PC_NET_XNT, PC_NET_X_SMEM);
    if (ce != cudaSuccess || occ < 1 || occ_tail < 1) {
        pc_set_err(err, errlen, "net: the CONV kernel (%d warps, %d buffers, %zu bytes of shared memory) cannot run "
                   "here: %s (%d blocks per SM; this GPU allows %d bytes per block)", m->wr, m->nbuf, m->conv_smem,
                   ce != cudaSuccess ? cudaGetErrorString(ce) : "no block fits", occ, optin);
        delete m;
        return PC_ENOTSUP;
    }
    m->ctas_conv = occ * sms;
    m->ctas_l1 = 8 * sms;
    m->ctas_tail = occ_tail * sms;
    const char *pr = getenv("PANOCAP_NET_PROFILE");
    m->prof = pr && pr[0] == '1';
    for (int i = 0; m->prof && i <= PC_NET_PROF_MAX; i++)
        if ((ce = cudaEventCreate(&m->ev[i])) != cudaSuccess) {
            pc_set_err(err, errlen, "net: cudaEventCreate (profile) failed: %s", cudaGetErrorString(ce));
            net_close(m);
            return PC_EDEVICE;
        }
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
    bool timing = false; /* an event after each launch (PANOCAP_NET_PROFILE) */
    int k = 0;           /* launches so far */
    cudaError_t error = cudaSuccess;
    const char *failed = nullptr;
    int done(const char *name)
    {
        cudaError_t e = cudaGetLastError();
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
        pc_net_k_l1<<<grid, PC_NET_L1_NT, PC_NET_L1_NT / 32 * 16 * 128, s>>>(p);
        return done("L1");
    }
    int conv(int mode, int wr, int nbuf, int grid, const pc_net_lp &p)
    {
        const size_t sm = m->conv_smem;
        if (wr == 8 && nbuf == 2) {
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
        return done(mode ? "CONVU" : "CONV");
    }
    int tail(int grid, const pc_net_tp &p)
    {
        pc_net_k_tail<<<grid, PC_NET_XNT, PC_NET_X_SMEM, s>>>(p);
        return done("TAIL");
    }
};
} // namespace

/* The previous frame's profile, if its events have completed (no wait). */
static void prof_collect(pc_net_gpu *m)
{
    if (!m->pending || cudaEventQuery(m->ev[m->depth + 2]) != cudaSuccess)
        return;
    for (int i = 0; i < m->depth + 2; i++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, m->ev[i], m->ev[i + 1]) == cudaSuccess)
            m->ms[i] += ms;
    }
    m->frames++;
    m->pending = 0;
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
    a.wr = m->wr;
    a.nbuf = m->nbuf;
    a.ctas_conv = m->ctas_conv;
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
        prof_collect(m);
        L.timing = !m->pending; /* the previous frame still runs: this one goes untimed */
        if (L.timing)
            cudaEventRecord(m->ev[0], s);
    }
    const int rc = pc_net_sequence(L, a);
    if (L.timing && !rc)
        m->pending = 1;
    if (rc) {
        pc_set_err(err, errlen, "net kernel %s launch failed: %s (frame %dx%d, %d cameras)", L.failed ? L.failed : "?",
                   cudaGetErrorString(L.error), f->W, f->H, f->H / ch);
        return PC_EDEVICE;
    }
    return 0;
}

const pc_cuda_custom pc_cuda_net = {net_open, net_close, net_enqueue, net_set_net};
