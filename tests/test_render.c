/* test_render.c - the render kernel family (render/render.h): a panorama
 * or a virtual-camera view from the stacked cameras of a rig.
 *
 *  - The C reference against the CPU backend's version (bit-identical)
 *    and against the CUDA kernels run by the host emulation (cuda_emu.h:
 *    the real kernel code; every variant: on-the-fly rays through the
 *    texture unit and with plain loads, precomputed maps, and the
 *    per-camera peer): every output sample within 1 code value on at
 *    least 99.9 % of samples and never more than 2 (the GPU samples with
 *    the texture unit's 8-bit weights), on a 3-camera 160x96 rig into a
 *    480x120 cylindrical and a 240x120 equirectangular panorama and a
 *    160x90 view, RGB24 and RGBX32 cameras, NV12/I420/RGB24, with and
 *    without photometry (responses, vignetting, gains), feather and seam
 *    blending.
 *  - The backend ops (backend.h render_*), CPU always, CUDA where a device
 *    is (else a skip saying so).
 *  - Gain compensation: the overlap statistics (reference == emulated
 *    kernel), the solved gains against the cameras' known exposure
 *    differences, the filter's bounded steps, the colour step at the
 *    overlaps before and after; the solver alone on a dark channel's
 *    statistics (as exact as a bright one's).
 *  - Seams: placed where the cameras agree (around an object one camera
 *    sees and the other does not), fixed, inside their overlap.
 *  - Against Hugin's nona (hugin-tools; skipped with the reason where it
 *    is missing): per camera, the reference's sampling positions against
 *    nona -c's coordinate images (UINT16, rounded by nona: ours must round
 *    to theirs within 0.1 px of the rounding boundary) and pano_trafo's
 *    sub-pixel positions (within 0.1 px), and the remapped RGB against
 *    nona's layers with its bilinear interpolator (m i5): PSNR >= 40 dB
 *    over the area both cover; nona's default (poly3, m i0) reported.
 */
#include "backend.h"
#include "cuda_emu_render.h"
#include "debayer_test_util.h"
#include "render.h"
#include "render_formulas.h"
#include "render_synth.h"
#include "render_test_util.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NCAM = 3, CW = 160, CH = 96 };
#define DETAIL 1.0 /* scene features, degrees: about 4 camera pixels */

typedef struct geom {
    const char *name;
    int proj, w, h;           /* view */
    int rect_view;            /* 1: a virtual camera (pan/tilt/hfov) */
    pc_render_blend blend;
    pc_render_sampler sampler;
} geom;

static const geom geoms[] = {
    {"cylindrical 480x120", PC_PROJ_CYLINDRICAL, 480, 120, 0, PC_RENDER_FEATHER, PC_RENDER_BILINEAR},
    {"equirectangular 240x120", PC_PROJ_EQUIRECT, 240, 120, 0, PC_RENDER_FEATHER, PC_RENDER_BILINEAR},
    {"view 160x90 (pan 10, tilt -5, roll 2, hfov 40)", PC_PROJ_RECTILINEAR, 160, 90, 1, PC_RENDER_FEATHER, PC_RENDER_BILINEAR},
    {"cylindrical 480x120, blend seam", PC_PROJ_CYLINDRICAL, 480, 120, 0, PC_RENDER_SEAM, PC_RENDER_BILINEAR},
    {"cylindrical 480x120, bicubic", PC_PROJ_CYLINDRICAL, 480, 120, 0, PC_RENDER_FEATHER, PC_RENDER_BICUBIC},
    {"view 160x90 (pan 10, tilt -5, roll 2, hfov 40), bicubic", PC_PROJ_RECTILINEAR, 160, 90, 1, PC_RENDER_FEATHER,
     PC_RENDER_BICUBIC},
    {"cylindrical 480x120, blend seam, bicubic", PC_PROJ_CYLINDRICAL, 480, 120, 0, PC_RENDER_SEAM, PC_RENDER_BICUBIC},
};

static void make_rig(pc_rig *rig, int proj)
{
    pc_synth_rig(rig, NCAM, CW, CH, 40.0, 34.0, proj, 480, 120);
    if (proj == PC_PROJ_EQUIRECT) {
        rig->pano.w = 240;
        rig->pano.h = 120;
        rig->pano.hfov = 120;
    }
}

static int plan_for(const geom *g, pc_rig *rig, int photo, int maps, pc_render_plan **plan)
{
    char err[256] = "";
    pc_rig_photometry *ph = malloc(sizeof *ph); /* 85 KB */
    make_rig(rig, g->proj);
    if (photo)
        photometry(rig, ph);
    pc_view_model view;
    if (g->rect_view)
        pc_rig_rect_view(g->w, g->h, 40.0, 10.0, -5.0, 2.0, &view);
    else
        pc_rig_panorama_view(rig, g->w, g->h, &view);
    pc_render_options opt;
    pc_render_options_default(&opt);
    opt.blend = g->blend;
    opt.sampler = g->sampler;
    opt.maps = maps && g->sampler == PC_RENDER_BILINEAR;
    if (g->blend == PC_RENDER_SEAM) { /* overlaps of ~27 output pixels: narrow ramps leave the seam room */
        opt.feather = 2;
        opt.seam_width = 2;
    }
    int rc = pc_render_plan_build(plan, rig, &view, photo ? ph : NULL, &opt, err, sizeof err);
    if (rc)
        tap_diag("plan %s: %s", g->name, err);
    free(ph);
    return rc;
}

static void alloc_src(pc_picture *src, pc_pixfmt fmt, const pc_rig *rig, const float (*gain)[3])
{
    tu_pic_alloc_dev(src, fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 8);
    pc_synth_cameras(rig, DETAIL, gain, src);
}

/* --- reference == CPU, emulated kernels within the rule ---------------- */

static void check_implementations(pc_cpu *cpu)
{
    char err[256] = "", names[64];
    for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++)
        for (int photo = 0; photo < 2; photo++) {
            const geom *g = &geoms[gi];
            pc_rig rig;
            pc_render_plan *plan;
            if (!TAP_CHECK(plan_for(g, &rig, photo, 1, &plan) == 0, "%s, photometry %s: plan", g->name,
                           photo ? "on" : "off"))
                continue;
            pc_picture srcs[2];
            alloc_src(&srcs[0], PC_FMT_RGB24, &rig, NULL);
            alloc_src(&srcs[1], PC_FMT_RGBX32, &rig, NULL);
            int placed = plan->blend != PC_RENDER_SEAM || pc_render_plan_place_seams(plan, &srcs[0], err, sizeof err) == 0;
            if (!placed)
                TAP_CHECK(0, "%s: seams placed: %s", g->name, err);
            /* every format through the fast kernel (the texture for RGBX32,
             * loads for RGB24); the other kernels into NV12 */
            /* bicubic: the ray kernels only, every format */
            const unsigned all = g->sampler == PC_RENDER_BICUBIC
                                     ? (1u << PC_GPU_RENDER_RAY) | (1u << PC_GPU_RENDER_RAY_LOADS)
                                     : (1u << PC_GPU_RENDER_VARIANTS) - 1;
            const unsigned nv12_only = g->sampler == PC_RENDER_BICUBIC ? 0 : all & ~(1u << PC_GPU_RENDER_RAY);
            rt_impl r = rt_implementations(cpu, plan, srcs, all, nv12_only, g->name);
            TAP_CHECK(placed && r.cpu_bad == 0, "%s, photometry %s: CPU backend (lanes %s; plans with and without "
                      "maps) == reference, bit for bit (%d runs: rgb24/rgbx32 cameras -> nv12/i420/rgb24)", g->name,
                      photo ? "on" : "off", rt_lanes_usable_names(names), r.runs);
            TAP_CHECK(r.emu_bad == 0, "%s, photometry %s: emulated CUDA kernels (%s) within 1 code value on >= "
                      "99.9 %% of samples, max 2", g->name, photo ? "on" : "off",
                      g->sampler == PC_RENDER_BICUBIC ? "ray, ray-loads" : "ray, ray-loads, map, peer");
            tu_pic_free(&srcs[0]);
            tu_pic_free(&srcs[1]);
            pc_render_plan_free(plan);
        }
}

/* --- fisheye lenses on the CPU (and the emulated kernels) ---------------- */

/* The CPU backend's lanes take a fisheye's atan2f lane by lane and the
 * circular crop's test and border in the lanes: equidistant fisheyes,
 * full-frame and circular (a crop circle past the image's top and
 * bottom), into a cylindrical panorama and a turned rectilinear view,
 * with the photometry, every lanes build this CPU runs: bit for bit the
 * reference. */
static void check_cpu_fisheye(pc_cpu *cpu)
{
    static const int lenses[] = {PC_LENS_FISHEYE_FULL, PC_LENS_FISHEYE_CIRCULAR};
    char err[256] = "", names[64];
    int bad = 0, runs = 0, emu_bad = 0, emu_runs = 0;
    pc_rig_photometry *ph = malloc(sizeof *ph);
    for (int li = 0; li < 2; li++)
        for (int vi = 0; vi < 2; vi++) {
            pc_rig rig;
            pc_synth_rig(&rig, NCAM, CW, CH, 100.0, 80.0, PC_PROJ_CYLINDRICAL, 480, 120);
            for (int c = 0; c < NCAM; c++) {
                rig.cam[c].lens = lenses[li];
                if (lenses[li] == PC_LENS_FISHEYE_CIRCULAR) {
                    const int crop[4] = {5, CW - 5, -27, CH + 27};
                    memcpy(rig.cam[c].crop, crop, sizeof crop);
                }
            }
            photometry(&rig, ph);
            pc_view_model view;
            if (vi)
                pc_rig_rect_view(200, 120, 70.0, 10.0, -5.0, 3.0, &view);
            else
                pc_rig_panorama_view(&rig, 480, 120, &view);
            pc_render_plan *plan;
            if (pc_render_plan_build(&plan, &rig, &view, ph, NULL, err, sizeof err)) {
                tap_diag("fisheye %d, view %d: plan: %s", lenses[li], vi, err);
                bad++;
                continue;
            }
            pc_picture src, ref, out;
            alloc_src(&src, PC_FMT_RGBX32, &rig, NULL);
            tu_pic_alloc_dev(&ref, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, view.w, view.h, 4);
            tu_pic_alloc_dev(&out, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, view.w, view.h, 12);
            if (pc_render_ref(plan, &src, &ref, err, sizeof err))
                bad++;
            for (int k = 0; k < RT_NLANES; k++) {
                const char *lanes = rt_lanes[k];
                if (!pc_render_cpu_lanes_usable(lanes))
                    continue;
                tu_pic_fill(&out, 0x5A);
                if (pc_render_cpu_lanes(pc_cpu_pool(cpu), lanes, plan, &src, &out, err, sizeof err) ||
                    compare(&ref, &out).max != 0) {
                    tap_diag("fisheye %d, view %d, lanes %s: CPU differs from the reference: max %d %s", lenses[li],
                             vi, lanes, compare(&ref, &out).max, err);
                    bad++;
                }
                runs++;
            }
            /* the ray kernels' general projection (a rig not all
             * rectilinear: pc_rkparams.rect = 0), emulated */
            for (int v = PC_GPU_RENDER_RAY; v <= PC_GPU_RENDER_RAY_LOADS; v++) {
                tu_pic_fill(&out, 0x5A);
                diffstat d = {0, 0, 0};
                if (pc_emu_render(plan, v, &src, &out, err, sizeof err) || !within_rule(d = compare(&ref, &out))) {
                    tap_diag("fisheye %d, view %d: emulated %s: %ld of %ld samples over 1, max %d %s", lenses[li], vi,
                             pc_gpu_render_variant_name(v), d.over1, d.n, d.max, err);
                    emu_bad++;
                }
                emu_runs++;
            }
            tu_pic_free(&src);
            tu_pic_free(&ref);
            tu_pic_free(&out);
            pc_render_plan_free(plan);
        }
    free(ph);
    TAP_CHECK(bad == 0 && runs >= 4, "fisheye lenses (full frame, circular crop) into a panorama and a view: CPU "
              "backend (lanes %s) == reference, bit for bit (%d runs)", rt_lanes_usable_names(names), runs);
    TAP_CHECK(emu_bad == 0 && emu_runs == 8, "fisheye lenses: the emulated ray kernels (texture and loads; the "
              "general projection) within 1 code value on >= 99.9 %% of samples, max 2 (%d runs)", emu_runs);
}

/* --- the backend ops ---------------------------------------------------- */

/* The daemon's order: the cameras' Bayer frames uploaded and demosaiced
 * into a picture of the backend (RGB24), rendered from there into a
 * render picture, downloaded; the reference renders the downloaded
 * demosaic. */
static void check_backend(const pc_backend_ops *ops, const geom *g)
{
    char err[256] = "";
    if (!rt_backend_usable(ops))
        return;
    pc_rig rig;
    pc_render_plan *plan;
    if (!TAP_CHECK(plan_for(g, &rig, 1, 0, &plan) == 0, "backend %s: plan %s", ops->name, g->name))
        return;
    pc_picture rgb;
    tu_pic_alloc(&rgb, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 0);
    pc_synth_cameras(&rig, DETAIL, NULL, &rgb);
    rt_backend r;
    int rc = rt_backend_open(&r, ops, plan, &rgb, err, sizeof err);
    int ok = TAP_CHECK(rc == 0, "backend %s: open, demosaic and render pictures, render_prepare (%s)", ops->name,
                       rc ? err : "ok");
    for (int round = 0; ok && round < 2; round++) {
        if (round == 1) {
            const float gains[NCAM][3] = {{1.1f, 1.0f, 0.95f}, {1.0f, 1.0f, 1.0f}, {0.9f, 1.05f, 1.0f}};
            pc_render_plan_set_gains(plan, gains);
            rc = pc_backend_render_set_gains(r.b, r.rd, gains, err, sizeof err);
            ok = TAP_CHECK(rc == 0, "backend %s: set_gains (%s)", ops->name, rc ? err : "ok");
        }
        diffstat d;
        rc = rt_backend_frame(&r, round, &d, err, sizeof err);
        TAP_CHECK(rc == 0 && (r.dev ? within_rule(d) : d.max == 0),
                  "backend %s, %s: demosaic + render (gains %s) == reference of the demosaic%s: %ld samples over 1, "
                  "max %d%s%s", ops->name, g->name, round ? "set" : "1", r.dev ? ", within the rule" : ", bit for bit",
                  d.over1, d.max, rc ? ": " : "", rc ? err : "");
    }
    if (ok) {
        pc_render_stats st, st_ref;
        rc = pc_backend_render_measure(r.b, 1, r.rd, &r.dem[1], err, sizeof err);
        if (!rc)
            rc = pc_backend_wait(r.b, 1, err, sizeof err);
        if (!rc)
            rc = pc_backend_render_stats(r.b, r.rd, &st, err, sizeof err);
        pc_render_measure_ref(plan, &r.hdem, &st_ref, err, sizeof err);
        double worst = 0;
        for (int k = 0; !rc && k < st.npairs; k++)
            for (int ch = 0; ch < 3; ch++) {
                double a = st.pair[k].sum_a[ch] / (st.pair[k].n ? st.pair[k].n : 1);
                double rr = st_ref.pair[k].sum_a[ch] / (st_ref.pair[k].n ? st_ref.pair[k].n : 1);
                worst = fabs(a - rr) > worst ? fabs(a - rr) : worst;
            }
        TAP_CHECK(rc == 0 && st.npairs == st_ref.npairs && st.npairs > 0 && worst < 2e-3,
                  "backend %s: measure + stats: %d overlaps, means within %.1e of the reference's", ops->name,
                  st.npairs, worst);
    }
    rt_backend_close(&r);
    tu_pic_free(&rgb);
    pc_render_plan_free(plan);
}

/* --- gain compensation --------------------------------------------------- */

static double overlap_step(const pc_render_plan *p, const pc_picture *src)
{
    /* the mean absolute difference (8-bit) between the two cameras of each
     * overlap, each corrected as the renderer does, over the samples */
    pc_render_stats st;
    char err[256] = "";
    pc_render_plan q = *p;
    float ones[PC_RENDER_MAX_CAMERAS][3];
    for (int c = 0; c < p->ncam; c++)
        for (int k = 0; k < 3; k++) {
            ones[c][k] = 1;
            q.photo_gain[c][k] = p->cam[c].gain[k]; /* measure with the gains in force */
        }
    (void)ones;
    pc_render_measure_ref(&q, src, &st, err, sizeof err);
    double s = 0;
    int n = 0;
    for (int k = 0; k < st.npairs; k++)
        for (int ch = 0; ch < 3; ch++) {
            s += 255.0 * fabs(st.pair[k].sum_a[ch] - st.pair[k].sum_b[ch]) / st.pair[k].n;
            n++;
        }
    return n ? s / n : 0;
}

/* Solves the gains of st into g and returns how far they leave the
 * cameras' exposures expo apart: the largest |g_c expo_c / (g_0 expo_0) - 1|
 * (what makes the cameras agree, up to the common scale the prior settles). */
static double solve_against(const pc_render_stats *st, const float expo[NCAM][3], float g[][3])
{
    pc_render_gains_solve(st, NCAM, g);
    double worst = 0;
    for (int c = 1; c < NCAM; c++)
        for (int k = 0; k < 3; k++) {
            double r = (g[c][k] * expo[c][k]) / (g[0][k] * expo[0][k]);
            worst = fmax(worst, fabs(r - 1));
        }
    tap_diag("solved gains: %.3f %.3f %.3f | %.3f %.3f %.3f | %.3f %.3f %.3f", g[0][0], g[0][1], g[0][2], g[1][0],
             g[1][1], g[1][2], g[2][0], g[2][1], g[2][2]);
    return worst;
}

/* A dark channel, on the overlap statistics themselves (no sampling
 * noise): five cameras in a row whose overlaps show linear means of 0.06,
 * 0.14 and 0.045 (R G B: the simulated stadium's, whose blue is dark) at
 * the stadium rig's exposures (2^Eev / Er, 2^Eev, 2^Eev / Eb). The gains
 * must make every overlap agree in every channel as exactly as in a bright
 * one: the solver once weighed the overlaps' absolute differences, so
 * that its prior, the same in every channel, outweighed a dark overlap's
 * data and left 4.6 % of the exposure ratio in the blue (a colour step of
 * 1.15 levels in the full-size panorama; 0.4 % in the green). */
static void check_gain_dark_channel(void)
{
    enum { N5 = 5 };
    const double eev[N5] = {0.2, -0.1, 0.0, 0.3, -0.3}, er[N5] = {1.03, 0.97, 1.0, 1.05, 0.96},
                 eb[N5] = {0.97, 1.04, 1.0, 0.95, 1.03}, mean[3] = {0.06, 0.14, 0.045};
    double expo[N5][3];
    for (int c = 0; c < N5; c++) {
        expo[c][0] = pow(2.0, -eev[c]) * er[c];
        expo[c][1] = pow(2.0, -eev[c]);
        expo[c][2] = pow(2.0, -eev[c]) * eb[c];
    }
    pc_render_stats st;
    memset(&st, 0, sizeof st);
    st.npairs = N5 - 1;
    for (int k = 0; k < st.npairs; k++) {
        st.pair[k].a = k;
        st.pair[k].b = k + 1;
        st.pair[k].n = 1900 + 30 * k;
        for (int ch = 0; ch < 3; ch++) { /* the scene's mean seen through each camera's exposure */
            st.pair[k].sum_a[ch] = st.pair[k].n * mean[ch] * expo[k][ch] / expo[2][ch];
            st.pair[k].sum_b[ch] = st.pair[k].n * mean[ch] * expo[k + 1][ch] / expo[2][ch];
        }
    }
    float g[PC_RENDER_MAX_CAMERAS][3];
    pc_render_gains_solve(&st, N5, g);
    double worst[3] = {0, 0, 0}, mg[3] = {0, 0, 0};
    for (int ch = 0; ch < 3; ch++)
        for (int c = 0; c < N5; c++) {
            worst[ch] = fmax(worst[ch], fabs(g[c][ch] * expo[c][ch] / (g[0][ch] * expo[0][ch]) - 1));
            mg[ch] += g[c][ch] / N5;
        }
    TAP_CHECK(fmax(worst[0], fmax(worst[1], worst[2])) < 1e-3, "gain compensation, dark channel: the solved gains "
              "equalise the exposures within %.3f %% %.3f %% %.3f %% (R G B; < 0.1 %%)", 100 * worst[0],
              100 * worst[1], 100 * worst[2]);
    TAP_CHECK(fabs(mg[0] - 1) < 0.05 && fabs(mg[1] - 1) < 0.05 && fabs(mg[2] - 1) < 0.05, "gain compensation, "
              "dark channel: the prior settles the common scale (mean gains %.3f %.3f %.3f, within 5 %% of 1)", mg[0],
              mg[1], mg[2]);
}

static void check_gain_compensation(void)
{
    char err[256] = "";
    pc_rig rig;
    pc_render_plan *plan;
    if (!TAP_CHECK(plan_for(&geoms[0], &rig, 0, 0, &plan) == 0, "gain compensation: plan"))
        return;
    /* camera 1 a third of a stop darker, camera 2 brighter and bluer */
    const float expo[NCAM][3] = {{1.0f, 1.0f, 1.0f}, {0.8f, 0.8f, 0.8f}, {1.12f, 1.1f, 1.25f}};
    pc_picture src;
    tu_pic_alloc_dev(&src, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 0);
    pc_synth_cameras(&rig, DETAIL, expo, &src);
    pc_render_stats st, st_emu;
    int rc = pc_render_measure_ref(plan, &src, &st, err, sizeof err);
    TAP_CHECK(rc == 0 && st.npairs == NCAM - 1, "gain compensation: %d overlaps measured (%s)", st.npairs,
              rc ? err : "ok");
    rc = pc_emu_render_measure(plan, &src, &st_emu, err, sizeof err);
    double worst = 0;
    int nsame = 1;
    for (int k = 0; !rc && k < st.npairs; k++) {
        nsame &= abs(st.pair[k].n - st_emu.pair[k].n) <= st.pair[k].n / 100 + 1;
        for (int ch = 0; ch < 3; ch++) {
            double a = st.pair[k].sum_a[ch] / st.pair[k].n, e = st_emu.pair[k].sum_a[ch] / st_emu.pair[k].n;
            double b = st.pair[k].sum_b[ch] / st.pair[k].n, f = st_emu.pair[k].sum_b[ch] / st_emu.pair[k].n;
            worst = fmax(worst, fmax(fabs(a - e), fabs(b - f)));
        }
    }
    TAP_CHECK(rc == 0 && nsame && worst < 2e-3, "gain compensation: the emulated kernel's statistics == the "
              "reference's (means within %.1e)", worst);
    float g[PC_RENDER_MAX_CAMERAS][3];
    const double worst_ratio = solve_against(&st, expo, g);
    TAP_CHECK(worst_ratio < 0.02, "gain compensation: solved gains equalise the cameras' exposures within %.1f %% "
              "(< 2 %%)", 100 * worst_ratio);
    const double before = overlap_step(plan, &src);
    /* the filter: bounded steps, converging */
    pc_render_gain_filter f;
    pc_render_gain_filter_init(&f, NCAM, 0.2f, 0.02f);
    double max_step = 0;
    for (int i = 0; i < 200; i++) {
        float prev[PC_RENDER_MAX_CAMERAS][3];
        memcpy(prev, f.g, sizeof prev);
        pc_render_gain_filter_update(&f, (const float(*)[3])g);
        for (int c = 0; c < NCAM; c++)
            for (int k = 0; k < 3; k++)
                max_step = fmax(max_step, fabs(f.g[c][k] - prev[c][k]) / prev[c][k]);
    }
    double resid = 0;
    for (int c = 0; c < NCAM; c++)
        for (int k = 0; k < 3; k++)
            resid = fmax(resid, fabs(f.g[c][k] - g[c][k]));
    TAP_CHECK(max_step <= 0.02 + 1e-6 && resid < 1e-3, "gain filter: steps at most %.2f %% (bound 2 %%), reaches "
              "the target within %.1e after 200 updates", 100 * max_step, resid);
    pc_render_plan_set_gains(plan, (const float(*)[3])f.g);
    const double after = overlap_step(plan, &src);
    TAP_CHECK(before > 10 && after < 1.0, "gain compensation: the colour step across the overlaps %.1f code values "
              "before, %.2f after (< 1)", before, after);
    tu_pic_free(&src);
    pc_render_plan_free(plan);
}

/* --- seams ---------------------------------------------------------------- */

static void check_seams(pc_cpu *cpu)
{
    char err[256] = "";
    pc_rig rig;
    pc_render_plan *plan;
    if (!TAP_CHECK(plan_for(&geoms[3], &rig, 0, 0, &plan) == 0, "seams: plan"))
        return;
    pc_picture src;
    alloc_src(&src, PC_FMT_RGB24, &rig, NULL);
    /* an object camera 0 sees in its overlap with camera 1 and camera 1
     * does not (parallax): a red block over the middle of the overlap in
     * rows 30..70 of the output */
    const int h = plan->view.h;
    int ylo = 30, yhi = 70, xlo = 0, xhi = 0;
    {
        const float *lim = plan->seam_lim + 2 * ((size_t)0 * h + 50);
        xlo = (int)ceilf(lim[0]) + 1;
        xhi = xlo + (int)(0.3f * (lim[1] - lim[0]));
        tap_diag("seam range in row 50: %.1f .. %.1f; the object: columns %d .. %d, rows %d .. %d", lim[0], lim[1],
                 xlo, xhi, ylo, yhi);
    }
    for (int y = ylo; y <= yhi; y++)
        for (int x = xlo; x <= xhi; x++) {
            float ray[3], sx, sy;
            pc_view_ray(&plan->view, (float)x, (float)y, ray);
            if (!pc_cam_project(&plan->cam[0].geo, ray, &sx, &sy))
                continue;
            for (int dy = 0; dy < 2; dy++)
                for (int dx = 0; dx < 2; dx++) {
                    uint8_t *p = src.plane[0] + (size_t)((int)sy + dy) * src.pitch[0] + 3 * ((int)sx + dx);
                    p[0] = 250, p[1] = 10, p[2] = 10;
                }
        }
    int rc = pc_render_plan_place_seams(plan, &src, err, sizeof err);
    int inside = 1, crosses = 0, smooth = 1;
    float prev = -1;
    for (int y = 0; y < h; y++) {
        if (plan->seam_next[y] != 1)
            continue;
        const float s = plan->seam[(size_t)1 * h + y], *lim = plan->seam_lim + 2 * (size_t)y;
        const int in = s >= floorf(lim[0]) - 0.5f && s <= ceilf(lim[1]) + 0.5f;
        /* one column per row, where the range lets it (at the ends of an
         * overlap the range itself jumps as its shape changes) */
        const float reach = prev < lim[0] - 1 ? lim[0] - 1 - prev : (prev > lim[1] + 1 ? prev - lim[1] - 1 : 0);
        const int sm = prev < 0 || reach > 0 || fabsf(s - prev) <= 1.0f;
        const int cr = y >= ylo && y <= yhi && s >= xlo - 1 && s <= xhi + 1;
        if (!in || !sm || cr)
            tap_diag("row %d: seam %.1f, range %.1f .. %.1f%s%s%s", y, s, lim[0], lim[1], in ? "" : ", outside",
                     sm ? "" : ", jumps", cr ? ", on the object" : "");
        inside &= in;
        smooth &= sm;
        crosses += cr;
        prev = s;
        if (plan->seam[(size_t)2 * h + y] != s) /* camera 1's left seam is the same */
            inside = 0;
    }
    TAP_CHECK(rc == 0 && inside && smooth, "seams: placed inside the overlap where both cameras have full weight, "
              "one column per row at most where the overlap allows (%s)", rc ? err : "ok");
    TAP_CHECK(crosses == 0, "seams: the seam goes around the object only one camera sees (%d rows cross it)", crosses);
    pc_picture ref, out;
    tu_pic_alloc_dev(&ref, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, plan->view.w, h, 0);
    tu_pic_alloc_dev(&out, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, plan->view.w, h, 0);
    pc_render_ref(plan, &src, &ref, err, sizeof err);
    pc_render_cpu(pc_cpu_pool(cpu), plan, &src, &out, err, sizeof err);
    TAP_CHECK(compare(&ref, &out).max == 0, "seams: CPU backend == reference with the placed seams");
    /* a second placement on the same pictures gives the same seams (fixed
     * per rig: nothing moves between frames) */
    float *first = malloc(sizeof *first * 2 * NCAM * h);
    memcpy(first, plan->seam, sizeof *first * 2 * NCAM * h);
    pc_render_plan_place_seams(plan, &src, err, sizeof err);
    TAP_CHECK(memcmp(first, plan->seam, sizeof *first * 2 * NCAM * h) == 0, "seams: placing again on the same "
              "pictures gives the same seams");
    free(first);
    tu_pic_free(&ref);
    tu_pic_free(&out);
    tu_pic_free(&src);
    pc_render_plan_free(plan);
}

/* --- against Hugin's nona ----------------------------------------------- */

/* A baseline TIFF as nona writes it with c:NONE (little-endian,
 * uncompressed strips, chunky samples of 8 or 16 bits): the samples, w x h
 * x spp of bps bits, malloc'd; NULL (with a diagnostic) otherwise. */
static void *read_tiff(const char *path, int *w, int *h, int *spp, int *bps)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tap_diag("%s: cannot open", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    size_t got = b ? fread(b, 1, (size_t)n, f) : 0;
    fclose(f);
    void *out = NULL;
#define U16(o) ((uint32_t)b[o] | (uint32_t)b[(o) + 1] << 8)
#define U32(o) (U16(o) | U16((o) + 2) << 16)
    if (!b || got != (size_t)n || n < 8 || b[0] != 'I' || b[1] != 'I') {
        tap_diag("%s: not a little-endian TIFF", path);
        free(b);
        return NULL;
    }
    uint32_t ifd = U32(4), offs = 0, counts = 0, nstrips = 0, comp = 1, planar = 1;
    *w = *h = *bps = 0;
    *spp = 1;
    int rps = 0, otype = 4, ctype = 4;
    for (uint32_t k = 0, ne = U16(ifd); k < ne && ifd + 2 + 12 * k + 12 <= (uint32_t)n; k++) {
        const uint32_t e = ifd + 2 + 12 * k, tag = U16(e), type = U16(e + 2), cnt = U32(e + 4);
        const uint32_t val = type == 3 ? U16(e + 8) : U32(e + 8);
        switch (tag) {
        case 256: *w = (int)val; break;
        case 257: *h = (int)val; break;
        case 258: *bps = cnt == 1 ? (int)val : (int)U16(U32(e + 8)); break;
        case 259: comp = val; break;
        case 273: offs = cnt == 1 ? e + 8 : U32(e + 8), nstrips = cnt, otype = (int)type; break;
        case 277: *spp = (int)val; break;
        case 278: rps = (int)val; break;
        case 279: counts = cnt == 1 ? e + 8 : U32(e + 8), ctype = (int)type; break;
        case 284: planar = val; break;
        }
    }
    const size_t total = (size_t)*w * *h * *spp * (*bps / 8);
    if (comp != 1 || planar != 1 || !nstrips || (*bps != 8 && *bps != 16) || !total || rps <= 0) {
        tap_diag("%s: a TIFF this reader does not take (compression %u, planar %u, %d bits)", path, comp, planar,
                 *bps);
        free(b);
        return NULL;
    }
    uint8_t *o = malloc(total);
    size_t at = 0;
    for (uint32_t sidx = 0; o && sidx < nstrips; sidx++) {
        uint32_t so = otype == 3 ? U16(offs + 2 * sidx) : U32(offs + 4 * sidx);
        uint32_t sc = ctype == 3 ? U16(counts + 2 * sidx) : U32(counts + 4 * sidx);
        if ((size_t)so + sc > (size_t)n || at + sc > total)
            break;
        memcpy(o + at, b + so, sc);
        at += sc;
    }
#undef U16
#undef U32
    free(b);
    if (!o || at != total) {
        tap_diag("%s: truncated", path);
        free(o);
        return NULL;
    }
    out = o;
    return out;
}

static int write_ppm(const char *path, const uint8_t *rgb, size_t pitch, int w, int h)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fprintf(f, "P6\n%d %d\n255\n", w, h);
    for (int y = 0; y < h; y++)
        fwrite(rgb + (size_t)y * pitch, 1, 3 * (size_t)w, f);
    return fclose(f);
}

/* The .pto rig with the `m` line's interpolator set (pc_rig_save writes
 * m i0). */
static int save_pto(const pc_rig *rig, const char *path, int interp)
{
    char err[256] = "", tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (pc_rig_save(rig, tmp, err, sizeof err)) {
        tap_diag("%s", err);
        return -1;
    }
    FILE *in = fopen(tmp, "r"), *out = fopen(path, "w");
    char line[8192];
    while (in && out && fgets(line, sizeof line, in)) {
        if (!strncmp(line, "m ", 2))
            fprintf(out, "m i%d\n", interp);
        else
            fputs(line, out);
    }
    int rc = in && out ? 0 : -1;
    if (in)
        fclose(in);
    if (out && fclose(out))
        rc = -1;
    unlink(tmp);
    return rc;
}

/* pano_trafo -r: canvas -> image c coordinates for n points. */
static int pano_trafo(const char *dir, const char *pto, int c, const double *px, const double *py, int n, double *sx,
                      double *sy)
{
    char in[400], cmd[1200];
    snprintf(in, sizeof in, "%s/points.txt", dir);
    FILE *f = fopen(in, "w");
    if (!f)
        return -1;
    for (int k = 0; k < n; k++)
        fprintf(f, "%.6f %.6f\n", px[k], py[k]);
    fclose(f);
    snprintf(cmd, sizeof cmd, "pano_trafo -r %s %d < %s", pto, c, in);
    FILE *pp = popen(cmd, "r");
    int got = 0;
    while (pp && got < n && fscanf(pp, "%lf %lf", &sx[got], &sy[got]) == 2)
        got++;
    if (pp)
        pclose(pp);
    return got == n ? 0 : -1;
}

/* Output pixel (x, y) of a one-camera plan is in the area both cover:
 * nona's layer (RGBA) has it (alpha 255) and our camera sees it at full
 * weight (a source pixel inside its border); *sx, *sy: where. */
static int both_cover(const pc_render_plan *plan, const uint8_t *layer, int x, int y, float *sx, float *sy)
{
    float ray[3];
    pc_view_ray(&plan->view, (float)x, (float)y, ray);
    return layer[4 * ((size_t)y * plan->view.w + x) + 3] == 255 && pc_cam_project(&plan->cam[0].geo, ray, sx, sy) &&
           pc_render_border(&plan->cam[0].geo, *sx, *sy) >= 1.0f;
}

/* The squared RGB difference of our RGB24 layer and nona's RGBA one at (x, y). */
static double pixel_se(const pc_picture *out, const uint8_t *layer, int x, int y)
{
    double se = 0;
    for (int k = 0; k < 3; k++) {
        const double d = (double)out->plane[0][(size_t)y * out->pitch[0] + 3 * x + k] -
                         layer[4 * ((size_t)y * out->width + x) + k];
        se += d * d;
    }
    return se;
}

/* The same rig with Hugin's photometry on (exposure, white balance, EMoR
 * responses, vignetting): nona's corrected layers against ours. */
static void check_nona_photometry(const char *dir, const pc_rig *rig0, const pc_picture *cams)
{
    char err[256] = "", path[600], cmd[1300], pto[400];
    pc_rig rig = *rig0;
    pc_rig_photometry *ph = malloc(sizeof *ph), *ph1 = malloc(sizeof *ph1);
    photometry(&rig, ph);
    snprintf(pto, sizeof pto, "%s/photometry.pto", dir);
    snprintf(cmd, sizeof cmd, "nona -o %s/ph %s >>%s/nona.log 2>&1", dir, pto, dir);
    int ok = TAP_CHECK(save_pto(&rig, pto, 5) == 0 && system(cmd) == 0, "nona: ran on the rig with photometry "
                       "(Eev, Er, Eb, EMoR responses, vignetting Vm5)");
    double worst = 1e9;
    for (int c = 0; ok && c < NCAM; c++) {
        /* camera c alone, corrected to the output response of the whole
         * rig's image 0 (as nona's layers are) */
        pc_rig one = rig;
        one.ncam = 1;
        one.cam[0] = rig.cam[c];
        *ph1 = *ph;
        memcpy(ph1->gain[0], ph->gain[c], sizeof ph->gain[0]);
        memcpy(ph1->inv_knots[0], ph->inv_knots[c], sizeof ph->inv_knots[0]);
        ph1->identity = 0;
        pc_view_model view;
        pc_rig_panorama_view(&one, 480, 120, &view);
        pc_render_plan *plan;
        if (!TAP_CHECK(pc_render_plan_build(&plan, &one, &view, ph1, NULL, err, sizeof err) == 0,
                       "nona photometry: camera %d's plan%s%s", c, err[0] ? ": " : "", err))
            break;
        pc_picture src = *cams, out;
        src.plane[0] = cams->plane[0] + (size_t)c * CH * cams->pitch[0];
        src.height = CH;
        tu_pic_alloc(&out, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, 480, 120, 0);
        pc_render_ref(plan, &src, &out, err, sizeof err);
        int w, h, spp, bps;
        snprintf(path, sizeof path, "%s/ph%04d.tif", dir, c);
        uint8_t *lay = read_tiff(path, &w, &h, &spp, &bps);
        double se = 0;
        long n = 0;
        for (int y = 0; lay && w == 480 && h == 120 && spp == 4 && bps == 8 && y < 120; y++)
            for (int x = 0; x < 480; x++) {
                float sx, sy;
                if (both_cover(plan, lay, x, y, &sx, &sy)) {
                    se += pixel_se(&out, lay, x, y);
                    n++;
                }
            }
        const double ps = n ? 10 * log10(255.0 * 255 * 3 * n / (se > 0 ? se : 1e-9)) : 0;
        tap_diag("camera %d with photometry: %ld pixels both cover, PSNR against nona %.2f dB", c, n, ps);
        worst = n > 10000 ? fmin(worst, ps) : 0;
        free(lay);
        tu_pic_free(&out);
        pc_render_plan_free(plan);
    }
    if (ok)
        TAP_CHECK(worst >= 40.0, "nona with photometry (bilinear, m i5): corrected RGB within PSNR %.2f dB (>= 40) "
                  "over the area both cover", worst);
    free(ph);
    free(ph1);
}

static void check_nona(void)
{
    if (!have_tool("nona") || !have_tool("pano_trafo")) {
        tap_skip("nona / pano_trafo (hugin-tools) not installed: tools/install-deps installs them");
        return;
    }
    char dir[] = "/tmp/pc_test_renderXXXXXX", err[256], path[600], cmd[1600];
    if (!TAP_CHECK(mkdtemp(dir) != NULL, "nona: a temporary folder"))
        return;
    pc_rig rig;
    make_rig(&rig, PC_PROJ_CYLINDRICAL);
    pc_picture cams;
    alloc_src(&cams, PC_FMT_RGB24, &rig, NULL);
    int ok = 1;
    for (int c = 0; c < NCAM; c++) {
        snprintf(rig.cam[c].file, sizeof rig.cam[c].file, "%s/cam%d.ppm", dir, c);
        ok &= write_ppm(rig.cam[c].file, cams.plane[0] + (size_t)c * CH * cams.pitch[0], cams.pitch[0], CW, CH) == 0;
    }
    char pto5[400], pto0[400];
    snprintf(pto5, sizeof pto5, "%s/bilinear.pto", dir);
    snprintf(pto0, sizeof pto0, "%s/poly3.pto", dir);
    ok &= save_pto(&rig, pto5, 5) == 0 && save_pto(&rig, pto0, 0) == 0;
    snprintf(cmd, sizeof cmd, "nona -c -o %s/bl %s >%s/nona.log 2>&1 && nona -o %s/p3 %s >>%s/nona.log 2>&1", dir, pto5,
             dir, dir, pto0, dir);
    ok = TAP_CHECK(ok && system(cmd) == 0, "nona: ran on a 3-camera rig (m i5 with -c, and m i0)");
    double worst_psnr = 1e9, worst_p3 = 1e9, worst_round = 0, worst_sub = 0;
    long compared = 0, rounded_same = 0, near_half = 0;
    for (int c = 0; ok && c < NCAM; c++) {
        /* our layer: the rig of camera c alone, its picture alone */
        pc_rig one = rig;
        one.ncam = 1;
        one.cam[0] = rig.cam[c];
        pc_view_model view;
        pc_rig_panorama_view(&one, 480, 120, &view);
        pc_render_plan *plan;
        if (!TAP_CHECK(pc_render_plan_build(&plan, &one, &view, NULL, NULL, err, sizeof err) == 0, "nona: camera %d's "
                       "plan%s%s", c, err[0] ? ": " : "", err))
            break;
        pc_picture src = cams, out;
        src.plane[0] = cams.plane[0] + (size_t)c * CH * cams.pitch[0];
        src.height = CH;
        tu_pic_alloc(&out, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, 480, 120, 0);
        pc_render_ref(plan, &src, &out, err, sizeof err);
        int w, h, spp, bps, w2, h2, spp2, bps2, w3, h3, s3, b3, w4, h4, s4, b4;
        snprintf(path, sizeof path, "%s/bl%04d.tif", dir, c);
        uint8_t *bl = read_tiff(path, &w, &h, &spp, &bps);
        snprintf(path, sizeof path, "%s/bl%04d_x.tif", dir, c);
        uint16_t *cx = read_tiff(path, &w2, &h2, &spp2, &bps2);
        snprintf(path, sizeof path, "%s/bl%04d_y.tif", dir, c);
        uint16_t *cy = read_tiff(path, &w3, &h3, &s3, &b3);
        snprintf(path, sizeof path, "%s/p3%04d.tif", dir, c);
        uint8_t *p3 = read_tiff(path, &w4, &h4, &s4, &b4);
        if (!TAP_CHECK(bl && cx && cy && p3 && w == 480 && h == 120 && spp == 4 && bps == 8 && w2 == 480 &&
                           bps2 == 16 && w3 == 480 && b3 == 16 && w4 == 480 && s4 == 4,
                       "nona: camera %d's layer and coordinate images read (480x120 RGBA8, UINT16)", c)) {
            free(bl), free(cx), free(cy), free(p3);
            tu_pic_free(&out);
            pc_render_plan_free(plan);
            ok = 0;
            break;
        }
        double se = 0, se3 = 0;
        long n = 0;
        enum { NS = 48 };
        double px[NS], py[NS], ox[NS], oy[NS], hx[NS], hy[NS];
        int ns = 0;
        for (int y = 0; y < 120; y++)
            for (int x = 0; x < 480; x++) {
                const size_t i = (size_t)y * 480 + x;
                float sx, sy;
                if (!both_cover(plan, bl, x, y, &sx, &sy))
                    continue;
                se += pixel_se(&out, bl, x, y);
                se3 += pixel_se(&out, p3, x, y);
                n++;
                /* nona -c: the source position rounded to whole pixels */
                const double ex = fabs(sx - cx[i]), ey = fabs(sy - cy[i]);
                worst_round = fmax(worst_round, fmax(ex, ey));
                rounded_same += lrintf(sx) == cx[i] && lrintf(sy) == cy[i];
                near_half += fabs(sx - floor(sx) - 0.5) < 0.1 || fabs(sy - floor(sy) - 0.5) < 0.1;
                if (ns < NS && (x * 7 + y * 13) % 97 == 0) {
                    px[ns] = x, py[ns] = y, ox[ns] = sx, oy[ns] = sy;
                    ns++;
                }
            }
        compared += n;
        const double ps = n ? 10 * log10(255.0 * 255 * 3 * n / (se > 0 ? se : 1e-9)) : 0;
        const double ps3 = n ? 10 * log10(255.0 * 255 * 3 * n / (se3 > 0 ? se3 : 1e-9)) : 0;
        worst_psnr = fmin(worst_psnr, ps);
        worst_p3 = fmin(worst_p3, ps3);
        tap_diag("camera %d: %ld pixels both cover; PSNR against nona: %.2f dB bilinear (m i5), %.2f dB poly3 (m i0)",
                 c, n, ps, ps3);
        if (ns && pano_trafo(dir, pto5, c, px, py, ns, hx, hy) == 0)
            for (int k = 0; k < ns; k++)
                worst_sub = fmax(worst_sub, hypot(ox[k] - hx[k], oy[k] - hy[k]));
        else
            worst_sub = 1e9;
        free(bl), free(cx), free(cy), free(p3);
        tu_pic_free(&out);
        pc_render_plan_free(plan);
    }
    if (ok) {
        TAP_CHECK(compared > 10000 && worst_round <= 0.6, "nona -c: %ld pixels; our sampling positions round to "
                  "nona's coordinates (%.2f %% the same whole pixel; worst distance %.3f px <= 0.6: within 0.1 px of "
                  "the rounding)", compared, 100.0 * rounded_same / (compared ? compared : 1), worst_round);
        TAP_CHECK(worst_sub < 0.1, "pano_trafo: our sampling positions within %.2g px of Hugin's sub-pixel ones "
                  "(< 0.1)", worst_sub);
        TAP_CHECK(worst_psnr >= 40.0, "nona (bilinear, m i5): remapped RGB within PSNR %.2f dB (>= 40) over the area "
                  "both cover", worst_psnr);
        tap_diag("nona's default interpolator (poly3, m i0) against our bilinear: %.2f dB (worst camera)", worst_p3);
    }
    if (ok)
        check_nona_photometry(dir, &rig, &cams);
    tu_pic_free(&cams);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
}

/* --- errors ----------------------------------------------------------------- */

static void check_errors(void)
{
    char err[256] = "";
    pc_rig rig;
    pc_render_plan *plan = NULL;
    make_rig(&rig, PC_PROJ_CYLINDRICAL);
    pc_view_model view;
    pc_rig_panorama_view(&rig, 481, 120, &view);
    int rc = pc_render_plan_build(&plan, &rig, &view, NULL, NULL, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && !plan && strstr(err, "481x120") && strstr(err, "even"),
              "plan: an odd output width is refused: %s", err);
    rig.cam[1].w = 150;
    pc_rig_panorama_view(&rig, 480, 120, &view);
    rc = pc_render_plan_build(&plan, &rig, &view, NULL, NULL, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "synthetic.pto:4") && strstr(err, "image 1"),
              "plan: cameras of different sizes are refused, naming the line: %s", err);
    make_rig(&rig, PC_PROJ_CYLINDRICAL);
    rc = pc_render_plan_build(&plan, &rig, &view, NULL, NULL, err, sizeof err);
    TAP_CHECK(rc == 0, "plan: builds (%s)", rc ? err : "ok");
    if (rc)
        return;
    pc_picture src, dst;
    alloc_src(&src, PC_FMT_RGB24, &rig, NULL);
    tu_pic_alloc_dev(&dst, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, 320, 120, 0);
    rc = pc_render_ref(plan, &src, &dst, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "320x120") && strstr(err, "480x120"),
              "render: a destination of the wrong size is refused: %s", err);
    src.height -= 2;
    rc = pc_render_ref(plan, &src, &dst, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "stacked"), "render: a source of the wrong size is refused: %s", err);
    src.height += 2;
    tu_pic_free(&src);
    tu_pic_free(&dst);
    pc_render_plan_free(plan);
}

/* Keys' cubic convolution kernel, a = -0.75, in double, written from
 * its definition (Keys 1981, libpano13's poly3) rather than as weights. */
static double keys(double x)
{
    const double A = -0.75;
    x = fabs(x);
    if (x < 1)
        return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2)
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0;
}

/* The bicubic sampler's definition (render_formulas.h): the sum of Keys'
 * kernel in double over the 4x4 neighbours less the corners, divided by
 * those weights' sum, at positions over a picture, edges included
 * (neighbours clamped); interpolating (the pixel itself at a pixel's
 * position); a constant picture constant up to its edges; the overshoot
 * at a sharp edge clamped to 0..255; sharper than bilinear across an
 * edge; a plan asking for it with multiband is refused. */
static void check_bicubic(void)
{
    enum { W = 9, H = 7 };
    uint8_t pic[H][W * 3], step[H][W * 3], flat[H][W * 3];
    uint32_t seed = 12345;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int k = 0; k < 3; k++) {
                seed = seed * 1664525u + 1013904223u;
                pic[y][3 * x + k] = (uint8_t)(60 + (seed >> 24) % 120); /* no clamping inside 0..255 */
                step[y][3 * x + k] = x < 4 ? 0 : 255;
                flat[y][3 * x + k] = 77;
            }
    double worst_def = 0, worst_px = 0, worst_flat = 0;
    for (float sy = 0.0f; sy <= H - 1; sy += 0.37f)
        for (float sx = 0.0f; sx <= W - 1; sx += 0.29f) {
            float v[3];
            pc_render_bicubic(&pic[0][0], W * 3, 3, W, H, sx, sy, v);
            for (int k = 0; k < 3; k++) {
                double d = 0, ws = 0;
                for (int j = (int)sy - 1; j <= (int)sy + 2; j++)
                    for (int i = (int)sx - 1; i <= (int)sx + 2; i++) {
                        if ((i == (int)sx - 1 || i == (int)sx + 2) && (j == (int)sy - 1 || j == (int)sy + 2))
                            continue; /* a corner */
                        const int ci = i < 0 ? 0 : (i > W - 1 ? W - 1 : i), cj = j < 0 ? 0 : (j > H - 1 ? H - 1 : j);
                        d += keys(sx - i) * keys(sy - j) * pic[cj][3 * ci + k];
                        ws += keys(sx - i) * keys(sy - j);
                    }
                worst_def = fmax(worst_def, fabs(v[k] - d / ws));
            }
            pc_render_bicubic(&flat[0][0], W * 3, 3, W, H, sx, sy, v);
            worst_flat = fmax(worst_flat, fabs(v[0] - 77.0));
        }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float v[3];
            pc_render_bicubic(&pic[0][0], W * 3, 3, W, H, (float)x, (float)y, v);
            worst_px = fmax(worst_px, fabs(v[1] - pic[y][3 * x + 1]));
        }
    TAP_CHECK(worst_def < 1e-3 && worst_px < 1e-4 && worst_flat < 1e-3,
              "bicubic: Keys' kernel (a = -0.75) summed in double over 4x4 clamped neighbours less the corners, "
              "normalised (off by %.1e), the "
              "pixel at its own position (%.1e), a constant picture constant up to its edges (%.1e)", worst_def,
              worst_px, worst_flat);
    float lo[3], hi[3], bl[3], bc[3], bl2[3], bc2[3];
    pc_render_bicubic(&step[0][0], W * 3, 3, W, H, 2.8f, 3.0f, lo); /* unclamped: -24.5 */
    pc_render_bicubic(&step[0][0], W * 3, 3, W, H, 4.2f, 3.0f, hi); /* unclamped: 279.5 */
    TAP_CHECK(lo[0] == 0.0f && hi[0] == 255.0f,
              "bicubic: the overshoot at a step edge clamped to 0..255 (%.2f at 2.8, %.2f at 4.2)", lo[0], hi[0]);
    pc_render_bilinear(&step[0][0], W * 3, 3, W, H, 3.3f, 3.0f, bl);
    pc_render_bicubic(&step[0][0], W * 3, 3, W, H, 3.3f, 3.0f, bc);
    pc_render_bilinear(&step[0][0], W * 3, 3, W, H, 3.7f, 3.0f, bl2);
    pc_render_bicubic(&step[0][0], W * 3, 3, W, H, 3.7f, 3.0f, bc2);
    TAP_CHECK(bc[0] < bl[0] - 3.0f && bc2[0] > bl2[0] + 3.0f,
              "bicubic: sharper than bilinear across an edge (at 3.3: %.1f against %.1f; at 3.7: %.1f against %.1f)",
              bc[0], bl[0], bc2[0], bl2[0]);
    pc_rig rig;
    pc_render_plan *plan = NULL;
    char err[256] = "";
    make_rig(&rig, PC_PROJ_CYLINDRICAL);
    pc_view_model view;
    pc_rig_panorama_view(&rig, 480, 120, &view);
    pc_render_options opt;
    pc_render_options_default(&opt);
    opt.sampler = PC_RENDER_BICUBIC;
    opt.blend = PC_RENDER_MULTIBAND;
    int rc = pc_render_plan_build(&plan, &rig, &view, NULL, &opt, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && !plan && strstr(err, "bicubic") && strstr(err, "multiband"),
              "plan: sampler bicubic with blend multiband is refused, saying why: %s", err);
    /* the checks of the bicubic plans above can tell the samplers apart:
     * on the test's scene the two references differ by more than the
     * rule allows, and the emulated kernels follow the bicubic one */
    pc_render_plan *pl[2] = {NULL, NULL};
    pc_picture src, ref[2], out;
    int ok = plan_for(&geoms[2], &rig, 1, 0, &pl[0]) == 0 && plan_for(&geoms[5], &rig, 1, 0, &pl[1]) == 0;
    diffstat dref = {0, 0, 0}, demu[2] = {{0, 0, 0}, {0, 0, 0}};
    if (ok) {
        alloc_src(&src, PC_FMT_RGBX32, &rig, NULL);
        for (int k = 0; k < 2; k++)
            tu_pic_alloc_dev(&ref[k], PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, geoms[5].w, geoms[5].h, 4);
        tu_pic_alloc_dev(&out, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, geoms[5].w, geoms[5].h, 4);
        ok = pc_render_ref(pl[0], &src, &ref[0], err, sizeof err) == 0 &&
             pc_render_ref(pl[1], &src, &ref[1], err, sizeof err) == 0 &&
             pc_emu_render(pl[1], PC_GPU_RENDER_RAY, &src, &out, err, sizeof err) == 0;
        dref = compare(&ref[0], &ref[1]);
        demu[0] = compare(&ref[0], &out);
        demu[1] = compare(&ref[1], &out);
        for (int k = 0; k < 2; k++)
            tu_pic_free(&ref[k]);
        tu_pic_free(&out);
        tu_pic_free(&src);
    }
    TAP_CHECK(ok && !within_rule(dref) && !within_rule(demu[0]) && within_rule(demu[1]),
              "bicubic against bilinear on the view: references %ld of %ld samples over 1 apart (max %d); the "
              "emulated ray kernel %ld over 1 from the bilinear one, %ld from the bicubic one", dref.over1, dref.n,
              dref.max, demu[0].over1, demu[1].over1);
    pc_render_plan_free(pl[0]);
    pc_render_plan_free(pl[1]);
    TAP_CHECK(pc_render_sampler_from_name("bicubic") == PC_RENDER_BICUBIC &&
              pc_render_sampler_from_name("bilinear") == PC_RENDER_BILINEAR &&
              pc_render_sampler_from_name("lanczos") == -1 &&
              strcmp(pc_render_sampler_name(PC_RENDER_BICUBIC), "bicubic") == 0,
              "sampler names: bilinear, bicubic; others unknown");
    /* the one table the configuration reads too: auto, any case, and what auto becomes */
    TAP_CHECK(pc_render_sampler_count() == 3 && pc_render_sampler_from_name("Auto") == PC_RENDER_SAMPLER_AUTO &&
                  strcmp(pc_render_sampler_name(PC_RENDER_SAMPLER_COUNT), "?") == 0 &&
                  pc_render_sampler_resolve(PC_RENDER_SAMPLER_AUTO, 1) == PC_RENDER_BICUBIC &&
                  pc_render_sampler_resolve(PC_RENDER_SAMPLER_AUTO, 0) == PC_RENDER_BILINEAR &&
                  pc_render_sampler_resolve(PC_RENDER_BICUBIC, 0) == PC_RENDER_BICUBIC &&
                  pc_render_blend_count() == 3 && pc_render_blend_from_name("MultiBand") == PC_RENDER_MULTIBAND &&
                  strcmp(pc_render_blend_name(PC_RENDER_SEAM), "seam") == 0 && pc_render_blend_from_name(NULL) == -1,
              "sampler and blend tables: auto (bicubic on a GPU, bilinear on the CPU), names in any case");
    pc_render_options o;
    pc_render_options_default(&o);
    o.sampler = PC_RENDER_SAMPLER_AUTO;
    pc_render_plan *none = NULL;
    char aerr[300] = "";
    pc_view_model vm;
    pc_rig_rect_view(64, 48, 60, 0, 0, 0, &vm);
    TAP_CHECK(pc_render_plan_build(&none, &rig, &vm, NULL, &o, aerr, sizeof aerr) == PC_EINVAL && !none &&
                  strstr(aerr, "sampler 2 (auto)"),
              "a plan refuses sampler auto: %s", aerr);
}

int main(void)
{
    char err[256] = "";
    pc_cpu *cpu = NULL;
    if (pc_cpu_open(&cpu, 3, 16, 16, err, sizeof err)) {
        printf("Bail out! pc_cpu_open: %s\n", err);
        return 1;
    }
    check_errors();
    check_implementations(cpu);
    check_cpu_fisheye(cpu);
    check_bicubic();
    check_backend(&pc_backend_cpu, &geoms[0]);
    check_backend(&pc_backend_cuda, &geoms[0]);
    check_backend(&pc_backend_cpu, &geoms[5]); /* the bicubic view */
    check_backend(&pc_backend_cuda, &geoms[5]);
    check_gain_compensation();
    check_gain_dark_channel();
    check_seams(cpu);
    check_nona();
    pc_cpu_close(cpu);
    return tap_done();
}
