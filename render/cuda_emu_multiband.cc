/* cuda_emu_multiband.cc - runs the multiband kernels (cuda_multiband.cuh)
 * on the CPU through cuda_emu.h, with the device's launch geometry
 * (render_mb_cuda.cu), for pc_emu_render (cuda_emu_render.cc) when the
 * plan's blend is multiband: the pyramid (LEVEL1, REDUCE, COLLAPSE) into
 * host arrays laid out as the device's, then, after the main pass, STRIPS.
 * The two streams of the device become one sequence here; the kernels
 * share nothing but those arrays, so the result is the same. */
#include "cuda_emu.h"

#include "cuda_multiband.cuh"

#include <vector>

template <int P, int T>
static int run_level1(const pc_rkparams &kp, const pc_mbkparams &mk, dim3 grid)
{
    return pc_emu::launch(grid, dim3(PC_MB_NT), PC_MB_SMEM, [&]() { pc_mb_level1_kernel<P, T>(kp, mk); });
}

template <int F, int P, int T>
static int run_strips(const pc_rkparams &kp, const pc_mbkparams &mk, dim3 grid)
{
    return pc_emu::launch(grid, dim3(PC_RBX, PC_RBY), 0, [&]() { pc_mb_strips_kernel<F, P, T>(kp, mk); });
}

template <int F>
static int run_strips_f(const pc_rkparams &kp, const pc_mbkparams &mk, dim3 grid, int photo, int tex)
{
    if (photo)
        return tex ? run_strips<F, 1, 1>(kp, mk, grid) : run_strips<F, 1, 0>(kp, mk, grid);
    return tex ? run_strips<F, 0, 1>(kp, mk, grid) : run_strips<F, 0, 0>(kp, mk, grid);
}

/* The emulated pyramid's arrays, between the two halves of a frame. */
struct pc_emu_mb {
    std::vector<float4> lev[PC_MB_MAX_LEVELS];
    pc_mbkparams mk;
    int maxw[PC_MB_MAX_LEVELS], maxh[PC_MB_MAX_LEVELS];
};

static void emu_mb_params(const pc_render_plan *plan, pc_emu_mb &e)
{
    const struct pc_render_mb *mb = plan->mb;
    memset(&e.mk, 0, sizeof e.mk);
    e.mk.levels = mb->levels;
    e.mk.inv_sw = mb->inv_sw;
    e.mk.strips = mb->strip;
    e.mk.seam = mb->seam;
    e.mk.span = mb->span;
    e.mk.band = mb->band;
    e.mk.tile_strip = mb->tile_strip;
    e.mk.ntx = plan->ntx;
    for (int k = 0; k < PC_MB_MAX_LEVELS; k++)
        e.maxw[k] = e.maxh[k] = 0;
    for (int k = 1; k < mb->levels; k++) {
        /* poisoned, like fresh device memory */
        e.lev[k].assign(2 * (mb->npx[k] ? mb->npx[k] : 1), float4{NAN, NAN, NAN, NAN});
        e.mk.mask[k] = mb->mask[k];
        e.mk.d[k] = e.lev[k].data();
        e.mk.c[k] = e.lev[k].data() + mb->npx[k];
    }
    for (int s = 0; s < mb->nstrips; s++)
        for (int k = 0; k < mb->levels; k++) {
            e.maxw[k] = mb->strip[s].w[k] > e.maxw[k] ? mb->strip[s].w[k] : e.maxw[k];
            e.maxh[k] = mb->strip[s].h[k] > e.maxh[k] ? mb->strip[s].h[k] : e.maxh[k];
        }
}

/* The pyramid of the frame kp, then (after the caller's main pass) the
 * strips: pc_emu_mb_run does both around main(). 0, or -1 (barriers). */
int pc_emu_mb_run(const pc_render_plan *plan, const pc_rkparams &kp, int fmt, int photo, int tex,
                  int (*main_pass)(void *), void *main_arg)
{
    const struct pc_render_mb *mb = plan->mb;
    pc_emu_mb e;
    emu_mb_params(plan, e);
    const int L = mb->levels, ns = mb->nstrips;
    int rc = 0;
    if (ns) {
        const dim3 g1((unsigned)((e.maxw[1] + PC_MB_T1W - 1) / PC_MB_T1W),
                      (unsigned)((e.maxh[1] + PC_MB_T1H - 1) / PC_MB_T1H), (unsigned)ns);
        rc = photo ? (tex ? run_level1<1, 1>(kp, e.mk, g1) : run_level1<1, 0>(kp, e.mk, g1))
                   : (tex ? run_level1<0, 1>(kp, e.mk, g1) : run_level1<0, 0>(kp, e.mk, g1));
        for (int k = 2; k < L && !rc; k++) {
            const dim3 g((unsigned)((e.maxw[k] + PC_MB_LB - 1) / PC_MB_LB),
                         (unsigned)((e.maxh[k] + PC_MB_LB - 1) / PC_MB_LB), (unsigned)ns);
            rc = pc_emu::launch(g, dim3(PC_MB_LB, PC_MB_LB), 0, [&]() { pc_mb_reduce_kernel(e.mk, k); });
        }
        for (int k = L - 2; k >= 1 && !rc; k--) {
            const dim3 g((unsigned)((e.maxw[k] + PC_MB_LB - 1) / PC_MB_LB),
                         (unsigned)((e.maxh[k] + PC_MB_LB - 1) / PC_MB_LB), (unsigned)ns);
            rc = pc_emu::launch(g, dim3(PC_MB_LB, PC_MB_LB), 0, [&]() { pc_mb_collapse_kernel(e.mk, k); });
        }
    }
    if (!rc)
        rc = main_pass(main_arg);
    if (!rc && ns) {
        const dim3 g((unsigned)((e.maxw[0] / 2 + PC_RBX - 1) / PC_RBX), (unsigned)((e.maxh[0] / 2 + PC_RBY - 1) / PC_RBY),
                     (unsigned)ns);
        if (fmt == PC_FMT_NV12)
            rc = run_strips_f<PC_FMT_NV12>(kp, e.mk, g, photo, tex);
        else if (fmt == PC_FMT_I420)
            rc = run_strips_f<PC_FMT_I420>(kp, e.mk, g, photo, tex);
        else
            rc = run_strips_f<PC_FMT_RGB24>(kp, e.mk, g, photo, tex);
    }
    return rc;
}
