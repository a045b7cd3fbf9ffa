/* render_mb_cuda.cu - host side of blend = multiband on the GPU
 * (render_mb_cuda.h; kernels in cuda_multiband.cuh): the plan's strips,
 * seams, spans and masks on the device, the pyramid's levels (allocated
 * once), a side stream of high priority for the pyramid so that its short
 * launches run beside the main pass, and the two events that fork it from
 * and join it back to the compute stream. Nothing per frame allocates.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_multiband.cuh"
#include "errmsg.h"
#include "render_mb_cuda.h"

struct pc_gpu_mb {
    cudaStream_t ms;
    cudaEvent_t fork, join;
    pc_mbkparams kp;
    int nstrips, maxw[PC_MB_MAX_LEVELS], maxh[PC_MB_MAX_LEVELS];
    /* device memory */
    pc_mb_strip *d_strips;
    float *d_seam, *d_mask[PC_MB_MAX_LEVELS];
    int *d_span, *d_band;
    int8_t *d_tile_strip;
    float4 *d_lev[PC_MB_MAX_LEVELS]; /* D_k then C_k, k >= 1 */
    uint16_t *d_tmask_rest;
};

#define CKM(call)                                                                                  \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            pc_set_err(err, errlen, "render multiband: %s failed: %s (%s)", #call,                 \
                       cudaGetErrorString(e_), cudaGetErrorName(e_));                              \
            return PC_EDEVICE;                                                                     \
        }                                                                                          \
    } while (0)

template <class T>
static int up(T **d, const void *h, size_t bytes, char *err, size_t errlen)
{
    CKM(cudaMalloc((void **)d, bytes ? bytes : 16));
    if (bytes)
        CKM(cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice));
    return 0;
}

void pc_gpu_mb_free(pc_gpu_mb *m)
{
    if (!m)
        return;
    if (m->ms) {
        cudaStreamSynchronize(m->ms);
        cudaStreamDestroy(m->ms);
    }
    if (m->fork)
        cudaEventDestroy(m->fork);
    if (m->join)
        cudaEventDestroy(m->join);
    void *ptrs[] = {m->d_strips, m->d_seam, m->d_span, m->d_band, m->d_tmask_rest, m->d_tile_strip};
    for (void *p : ptrs)
        if (p)
            cudaFree(p);
    for (int k = 0; k < PC_MB_MAX_LEVELS; k++) {
        if (m->d_mask[k])
            cudaFree(m->d_mask[k]);
        if (m->d_lev[k])
            cudaFree(m->d_lev[k]);
    }
    free(m);
}

static int prepare(pc_gpu_mb *m, const pc_render_plan *p, char *err, size_t errlen)
{
    const struct pc_render_mb *mb = p->mb;
    const int L = mb->levels;
    int lo, hi;
    CKM(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CKM(cudaStreamCreateWithPriority(&m->ms, cudaStreamNonBlocking, hi));
    CKM(cudaEventCreateWithFlags(&m->fork, cudaEventDisableTiming));
    CKM(cudaEventCreateWithFlags(&m->join, cudaEventDisableTiming));
    int rc;
    if ((rc = up(&m->d_strips, mb->strip, sizeof(pc_mb_strip) * mb->nstrips, err, errlen)) ||
        (rc = up(&m->d_seam, mb->seam, sizeof(float) * mb->nseam, err, errlen)) ||
        (rc = up(&m->d_span, mb->span, sizeof(int) * 2 * mb->nseam, err, errlen)) ||
        (rc = up(&m->d_band, mb->band, sizeof(int) * 2 * mb->nseam, err, errlen)) ||
        (rc = up(&m->d_tmask_rest, mb->tmask_rest, sizeof(uint16_t) * p->ntx * p->nty, err, errlen)) ||
        (rc = up(&m->d_tile_strip, mb->tile_strip, (size_t)p->ntx * p->nty, err, errlen)))
        return rc;
    memset(&m->kp, 0, sizeof m->kp);
    m->kp.levels = L;
    m->kp.inv_sw = mb->inv_sw;
    m->kp.strips = m->d_strips;
    m->kp.seam = m->d_seam;
    m->kp.span = m->d_span;
    m->kp.band = m->d_band;
    m->kp.tile_strip = m->d_tile_strip;
    m->kp.ntx = p->ntx;
    for (int k = 1; k < L; k++) {
        if ((rc = up(&m->d_mask[k], mb->mask[k], sizeof(float) * mb->npx[k], err, errlen)))
            return rc;
        /* D_k, and C_k after it (C is not needed at level 0) */
        CKM(cudaMalloc((void **)&m->d_lev[k], sizeof(float4) * 2 * (mb->npx[k] ? mb->npx[k] : 1)));
        m->kp.mask[k] = m->d_mask[k];
        m->kp.d[k] = m->d_lev[k];
        m->kp.c[k] = m->d_lev[k] + mb->npx[k];
    }
    m->nstrips = mb->nstrips;
    for (int s = 0; s < mb->nstrips; s++)
        for (int k = 0; k < L; k++) {
            m->maxw[k] = mb->strip[s].w[k] > m->maxw[k] ? mb->strip[s].w[k] : m->maxw[k];
            m->maxh[k] = mb->strip[s].h[k] > m->maxh[k] ? mb->strip[s].h[k] : m->maxh[k];
        }
    return 0;
}

int pc_gpu_mb_prepare(const pc_render_plan *plan, pc_gpu_mb **out, char *err, size_t errlen)
{
    *out = NULL;
    pc_gpu_mb *m = (pc_gpu_mb *)calloc(1, sizeof *m);
    if (!m) {
        pc_set_err(err, errlen, "render multiband: out of memory");
        return PC_ENOMEM;
    }
    int rc = prepare(m, plan, err, errlen);
    if (rc) {
        pc_gpu_mb_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

template <int P, int T>
static void launch_level1(const pc_rkparams &kp, const pc_mbkparams &mk, dim3 grid, cudaStream_t s)
{
    pc_mb_level1_kernel<P, T><<<grid, PC_MB_NT, PC_MB_SMEM, s>>>(kp, mk);
}

int pc_gpu_mb_begin(pc_gpu_mb *m, const pc_rkparams &kp, int photo, int tex, cudaStream_t cs, const uint16_t **tmask,
                    char *err, size_t errlen)
{
    *tmask = m->d_tmask_rest;
    if (!m->nstrips)
        return 0;
    const int L = m->kp.levels;
    CKM(cudaEventRecord(m->fork, cs));
    CKM(cudaStreamWaitEvent(m->ms, m->fork, 0));
    const dim3 g1((unsigned)((m->maxw[1] + PC_MB_T1W - 1) / PC_MB_T1W),
                  (unsigned)((m->maxh[1] + PC_MB_T1H - 1) / PC_MB_T1H), (unsigned)m->nstrips);
    if (photo)
        tex ? launch_level1<1, 1>(kp, m->kp, g1, m->ms) : launch_level1<1, 0>(kp, m->kp, g1, m->ms);
    else
        tex ? launch_level1<0, 1>(kp, m->kp, g1, m->ms) : launch_level1<0, 0>(kp, m->kp, g1, m->ms);
    CKM(cudaGetLastError());
    const dim3 lb(PC_MB_LB, PC_MB_LB);
    for (int k = 2; k < L; k++) {
        const dim3 g((unsigned)((m->maxw[k] + PC_MB_LB - 1) / PC_MB_LB), (unsigned)((m->maxh[k] + PC_MB_LB - 1) / PC_MB_LB),
                     (unsigned)m->nstrips);
        pc_mb_reduce_kernel<<<g, lb, 0, m->ms>>>(m->kp, k);
    }
    for (int k = L - 2; k >= 1; k--) {
        const dim3 g((unsigned)((m->maxw[k] + PC_MB_LB - 1) / PC_MB_LB), (unsigned)((m->maxh[k] + PC_MB_LB - 1) / PC_MB_LB),
                     (unsigned)m->nstrips);
        pc_mb_collapse_kernel<<<g, lb, 0, m->ms>>>(m->kp, k);
    }
    CKM(cudaGetLastError());
    CKM(cudaEventRecord(m->join, m->ms));
    return 0;
}

template <int F, int P, int T>
static void launch_strips(const pc_rkparams &kp, const pc_mbkparams &mk, dim3 grid, cudaStream_t s)
{
    pc_mb_strips_kernel<F, P, T><<<grid, dim3(PC_RBX, PC_RBY), 0, s>>>(kp, mk);
}

template <int F>
static void launch_strips_f(const pc_rkparams &kp, const pc_mbkparams &mk, dim3 grid, cudaStream_t s, int photo,
                            int tex)
{
    if (photo)
        tex ? launch_strips<F, 1, 1>(kp, mk, grid, s) : launch_strips<F, 1, 0>(kp, mk, grid, s);
    else
        tex ? launch_strips<F, 0, 1>(kp, mk, grid, s) : launch_strips<F, 0, 0>(kp, mk, grid, s);
}

int pc_gpu_mb_end(pc_gpu_mb *m, const pc_rkparams &kp, int fmt, int photo, int tex, cudaStream_t cs, char *err,
                  size_t errlen)
{
    if (!m->nstrips)
        return 0;
    CKM(cudaStreamWaitEvent(cs, m->join, 0));
    const dim3 g((unsigned)((m->maxw[0] / 2 + PC_RBX - 1) / PC_RBX), (unsigned)((m->maxh[0] / 2 + PC_RBY - 1) / PC_RBY),
                 (unsigned)m->nstrips);
    if (fmt == PC_FMT_NV12)
        launch_strips_f<PC_FMT_NV12>(kp, m->kp, g, cs, photo, tex);
    else if (fmt == PC_FMT_I420)
        launch_strips_f<PC_FMT_I420>(kp, m->kp, g, cs, photo, tex);
    else
        launch_strips_f<PC_FMT_RGB24>(kp, m->kp, g, cs, photo, tex);
    CKM(cudaGetLastError());
    return 0;
}
