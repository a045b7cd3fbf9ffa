/* cuda_activity.cuh - the activity map's CUDA kernel (activity.h): per
 * pixel the background update and the foreground test, per cell the count
 * of foreground pixels. Integer throughout, the reference's formulas, so
 * the counts are pc_activity_ref's exactly. Compiles under nvcc and, after
 * cuda_emu.h, as host C++ (cuda_emu_ops.cc), so CI checks it without a GPU.
 *
 * The picture is small (1/8 of the panorama: ~1075x162, 175 k pixels, 0.9
 * MB of luma and background moved): one launch of 32x8-pixel CTAs, a
 * thread per pixel (a warp reads 32 consecutive luma bytes and 64
 * background bytes). A CTA counts into shared memory (the cells it
 * touches, at most PC_ACT_CELLS_X x PC_ACT_CELLS_Y of them), then adds its
 * non-zero cells to the global counts with one atomic each; the counts
 * are cleared before the launch (cudaMemsetAsync). Integer additions
 * commute, so the atomics' order changes nothing.
 */
#ifndef PANOCAP_CUDA_ACTIVITY_CUH
#define PANOCAP_CUDA_ACTIVITY_CUH

#include <stdint.h>

#include "activity.h"
#include "cuda_dev.cuh"

#define PC_ACT_BX 32
#define PC_ACT_BY 8
#ifdef __CUDACC__
#define PC_ABOUNDS __launch_bounds__(PC_ACT_BX * PC_ACT_BY)
#else
#define PC_ABOUNDS
#endif

struct pc_akparams {
    const uint8_t *luma;
    int pitch;
    int w, h;
    uint16_t *bg;     /* w * h, 8.8 */
    uint32_t *counts; /* cells, cleared */
    int init;         /* 1: set the background, count nothing */
    int shift, threshold, cw, ch, gw;
};

/* Host: the cells one CTA can touch across and down (its 32 x 8 pixels
 * start anywhere in a cell). */
static inline int pc_act_cells_x(int cw) { return (PC_ACT_BX - 1) / cw + 2; }
static inline int pc_act_cells_y(int ch) { return (PC_ACT_BY - 1) / ch + 2; }

static inline void pc_akparams_set(pc_akparams *k, const uint8_t *luma, int pitch, int w, int h, uint16_t *bg,
                                   uint32_t *counts, int init, const pc_activity_params *p)
{
    k->luma = luma;
    k->pitch = pitch;
    k->w = w;
    k->h = h;
    k->bg = bg;
    k->counts = counts;
    k->init = init;
    k->shift = p->shift;
    k->threshold = p->threshold;
    k->cw = p->cw;
    k->ch = p->ch;
    k->gw = (w + p->cw - 1) / p->cw;
}

/* Shared memory: pc_act_cells_x(cw) * pc_act_cells_y(ch) counters.
 * static: the host emulation's copy and nvcc's host stub would otherwise
 * both define the name. */
static PC_KERNEL void PC_ABOUNDS pc_activity_kernel(const pc_akparams p)
{
    PC_SMEM_DECL(smem_raw);
    unsigned *cnt = (unsigned *)smem_raw;
    const int x0 = (int)blockIdx.x * PC_ACT_BX, y0 = (int)blockIdx.y * PC_ACT_BY;
    const int cx0 = x0 / p.cw, cy0 = y0 / p.ch;
    const int xl = min(x0 + PC_ACT_BX, p.w) - 1, yl = min(y0 + PC_ACT_BY, p.h) - 1;
    const int lcx = xl / p.cw - cx0 + 1, lcy = yl / p.ch - cy0 + 1;
    const int tid = (int)(threadIdx.y * PC_ACT_BX + threadIdx.x);
    for (int i = tid; i < lcx * lcy; i += PC_ACT_BX * PC_ACT_BY)
        cnt[i] = 0;
    __syncthreads();
    const int x = x0 + (int)threadIdx.x, y = y0 + (int)threadIdx.y;
    if (x < p.w && y < p.h) {
        const int L = p.luma[(size_t)y * p.pitch + x];
        uint16_t *b = p.bg + (size_t)y * p.w + x;
        const int B = *b;
        if (p.init) {
            *b = (uint16_t)(L << 8);
        } else {
            const int d = L - (B >> 8);
            if (d > p.threshold || -d > p.threshold)
                atomicAdd(&cnt[(y / p.ch - cy0) * lcx + (x / p.cw - cx0)], 1u);
            *b = (uint16_t)(B + (((L << 8) - B) >> p.shift));
        }
    }
    __syncthreads();
    for (int i = tid; i < lcx * lcy; i += PC_ACT_BX * PC_ACT_BY)
        if (cnt[i])
            atomicAdd(&p.counts[(size_t)(cy0 + i / lcx) * p.gw + cx0 + i % lcx], cnt[i]);
}

#endif
