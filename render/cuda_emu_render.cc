/* cuda_emu_render.cc - runs the render kernels (cuda_render.cuh) on the
 * CPU through cuda_emu.h, with the launch geometry the device uses
 * (render_cuda.cu), so tests/test_render.c checks the kernel code itself
 * against the C reference in CI, where there is no GPU. The texture unit
 * is cuda_emu.h's software one. */
#include "cuda_emu.h"

#include "cuda_emu_render.h"
#include "cuda_render.cuh"
#include "errmsg.h"
#include "render_multiband.h"

#include <vector>

/* cuda_emu_multiband.cc: a multiband plan's pyramid, main_pass(arg), then
 * its strips. */
int pc_emu_mb_run(const pc_render_plan *plan, const pc_rkparams &kp, int fmt, int photo, int tex,
                  int (*main_pass)(void *), void *main_arg);

template <int F, int P, int T>
static int run_ray(const pc_rkparams &kp, dim3 grid, int map)
{
    return pc_emu::launch(grid, dim3(PC_RBX, PC_RBY), 0, [&]() {
        if (map)
            pc_render_map_kernel<F, P, T>(kp);
        else
            pc_render_ray_kernel<F, P, T>(kp);
    });
}

template <int F, int P>
static int run_fp(const pc_rkparams &kp, dim3 grid, int map, int tex)
{
    /* tex as render_cuda.cu's launch_fp: bit 1 bicubic (ray kernel only) */
    if (tex & 2)
        return pc_emu::launch(grid, dim3(PC_RBX, PC_RBY), 0, [&]() {
            if (tex & 1)
                pc_render_ray_kernel<F, P, 3>(kp);
            else
                pc_render_ray_kernel<F, P, 2>(kp);
        });
    return tex ? run_ray<F, P, 1>(kp, grid, map) : run_ray<F, P, 0>(kp, grid, map);
}

template <int F>
static int run_f(const pc_rkparams &kp, dim3 grid, int map, int tex, int photo)
{
    return photo ? run_fp<F, 1>(kp, grid, map, tex) : run_fp<F, 0>(kp, grid, map, tex);
}

template <int F, int P>
static int run_peer(const pc_render_plan *plan, const pc_rkparams &kp, dim3 grid)
{
    std::vector<float4> acc((size_t)kp.w * kp.h, float4{0.0f, 0.0f, 0.0f, 0.0f});
    int rc = 0;
    for (int c = 0; c < kp.ncam && !rc; c++) {
        pc_peer_cam pc;
        float *mem;
        if (pc_peer_build(plan, c, &pc, &mem))
            return -2;
        if (mem)
            rc = pc_emu::launch(dim3((pc.w + 31) / 32, (pc.h + 7) / 8), dim3(32, 8), 0,
                                [&]() { pc_peer_remap_kernel<P>(kp, c, pc, acc.data()); });
        free(mem);
    }
    if (!rc)
        rc = pc_emu::launch(grid, dim3(PC_RBX, PC_RBY), 0, [&]() { pc_peer_final_kernel<F, P>(kp, acc.data()); });
    return rc;
}

/* The device-side copy the kernels get, here the plan's own host arrays
 * (and the photometric tables as pairs, in lut2: keep it while kp is used). */
static void params_of(const pc_render_plan *plan, pc_rkparams *kp, std::vector<float2> &lut2)
{
    pc_rkparams_plan(kp, plan);
    lut2.resize((size_t)(plan->ncam + 1) * PC_RIG_RESPONSE_KNOTS);
    pc_rlut_pairs_plan(plan, lut2.data());
    kp->lut2 = lut2.data();
    kp->col = (const float2 *)plan->col;
    kp->row = (const float2 *)plan->row;
    kp->tmask = plan->tmask;
    kp->inv_knots = &plan->inv_knots[0][0];
    kp->out_resp = plan->out_resp;
    kp->seam = plan->seam;
    kp->map_off = plan->map_off;
    kp->map = (const float4 *)plan->map;
}

extern "C" int pc_emu_render(const pc_render_plan *plan, int variant, const pc_picture *src, const pc_picture *dst,
                             char *err, size_t errlen)
{
    int rc = pc_render_check(plan, src, dst, err, errlen);
    if (rc)
        return rc;
    if ((unsigned)variant >= PC_GPU_RENDER_VARIANTS || (variant == PC_GPU_RENDER_MAP && !plan->map) ||
        ((plan->mb || plan->sampler) && variant != PC_GPU_RENDER_RAY && variant != PC_GPU_RENDER_RAY_LOADS)) {
        pc_set_err(err, errlen, "pc_emu_render: variant %d%s", variant,
                   plan->mb ? ": blend multiband runs with the ray kernels"
                   : plan->sampler ? ": sampler bicubic runs with the ray kernels"
                   : variant == PC_GPU_RENDER_MAP ? " needs a plan with maps" : " is unknown");
        return PC_EINVAL;
    }
    pc_rkparams kp;
    std::vector<float2> lut2;
    params_of(plan, &kp, lut2);
    pc_rkparams_pictures(&kp, src, dst);
    pc_emu_tex tex = {src->plane[0], src->pitch[0], src->width, src->height};
    kp.tex = &tex;
    const int use_tex = src->fmt == PC_FMT_RGBX32 && (variant == PC_GPU_RENDER_RAY || variant == PC_GPU_RENDER_MAP);
    const dim3 grid((unsigned)((kp.w / 2 + PC_RBX - 1) / PC_RBX), (unsigned)((kp.h / 2 + PC_RBY - 1) / PC_RBY));
    const int map = variant == PC_GPU_RENDER_MAP, photo = plan->photo;
    if (plan->mb) { /* the main pass without the strips' tiles, between the pyramid and the strips */
        kp.tmask = plan->mb->tmask_rest;
        struct mainp {
            const pc_rkparams *kp;
            dim3 grid;
            int fmt, use_tex, photo;
        } mp = {&kp, grid, dst->fmt, use_tex, photo};
        rc = pc_emu_mb_run(plan, kp, dst->fmt, photo, use_tex, [](void *arg) {
            const mainp *m = (const mainp *)arg;
            if (m->fmt == PC_FMT_NV12)
                return run_f<PC_FMT_NV12>(*m->kp, m->grid, 0, m->use_tex, m->photo);
            if (m->fmt == PC_FMT_I420)
                return run_f<PC_FMT_I420>(*m->kp, m->grid, 0, m->use_tex, m->photo);
            return run_f<PC_FMT_RGB24>(*m->kp, m->grid, 0, m->use_tex, m->photo);
        }, &mp);
    } else if (variant == PC_GPU_RENDER_PEER) {
        if (dst->fmt == PC_FMT_NV12)
            rc = photo ? run_peer<PC_FMT_NV12, 1>(plan, kp, grid) : run_peer<PC_FMT_NV12, 0>(plan, kp, grid);
        else if (dst->fmt == PC_FMT_I420)
            rc = photo ? run_peer<PC_FMT_I420, 1>(plan, kp, grid) : run_peer<PC_FMT_I420, 0>(plan, kp, grid);
        else
            rc = photo ? run_peer<PC_FMT_RGB24, 1>(plan, kp, grid) : run_peer<PC_FMT_RGB24, 0>(plan, kp, grid);
    } else {
        const int samp = use_tex | (plan->sampler == PC_RENDER_BICUBIC ? 2 : 0);
        if (dst->fmt == PC_FMT_NV12)
            rc = run_f<PC_FMT_NV12>(kp, grid, map, samp, photo);
        else if (dst->fmt == PC_FMT_I420)
            rc = run_f<PC_FMT_I420>(kp, grid, map, samp, photo);
        else
            rc = run_f<PC_FMT_RGB24>(kp, grid, map, samp, photo);
    }
    if (rc) {
        pc_set_err(err, errlen, "pc_emu_render: %s", rc == -2 ? "out of memory" : "threads disagree on barriers");
        return rc == -2 ? PC_ENOMEM : PC_EINVAL;
    }
    return 0;
}

extern "C" int pc_emu_render_measure(const pc_render_plan *plan, const pc_picture *src, pc_render_stats *st,
                                     char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    if (!plan || !src || (src->fmt != PC_FMT_RGB24 && src->fmt != PC_FMT_RGBX32) || src->width != plan->cam_w ||
        src->height != plan->ncam * plan->cam_h) {
        pc_set_err(err, errlen, "pc_emu_render_measure: the source must be the cameras stacked");
        return PC_EINVAL;
    }
    if (!plan->npairs)
        return 0;
    pc_rkparams kp;
    std::vector<float2> lut2;
    params_of(plan, &kp, lut2);
    kp.src = src->plane[0];
    kp.src_pitch = (int)src->pitch[0];
    kp.bpp = src->fmt == PC_FMT_RGBX32 ? 4 : 3;
    pc_emu_tex tex = {src->plane[0], src->pitch[0], src->width, src->height};
    kp.tex = &tex;
    std::vector<pc_rpair> pairs(plan->npairs);
    std::vector<uint32_t> xy(pc_rpairs_pack(plan, pairs.data(), NULL) + 1);
    pc_rpairs_pack(plan, NULL, xy.data());
    std::vector<float> pgain(3 * PC_RENDER_MAX_CAMERAS), out(8 * plan->npairs, -1.0f);
    memcpy(pgain.data(), plan->photo_gain, sizeof plan->photo_gain);
    const int use_tex = src->fmt == PC_FMT_RGBX32;
    int rc = pc_emu::launch(dim3(plan->npairs), dim3(PC_RMEAS_NT), sizeof(float) * 7 * PC_RMEAS_NT, [&]() {
        if (use_tex)
            pc_render_measure_kernel<1>(kp, pairs.data(), xy.data(), pgain.data(), out.data());
        else
            pc_render_measure_kernel<0>(kp, pairs.data(), xy.data(), pgain.data(), out.data());
    });
    if (rc) {
        pc_set_err(err, errlen, "pc_emu_render_measure: threads disagree on barriers");
        return PC_EINVAL;
    }
    pc_rstats_unpack(plan, out.data(), st);
    return 0;
}
