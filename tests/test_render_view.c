/* test_render_view.c - moving views (render.h pc_render_plan_set_view and
 * the backend op pc_backend_render_update): a virtual camera's plan turned
 * and zoomed every frame.
 *
 *  - The camera masks set_view computes are conservative, checked
 *    exhaustively: for every pixel of every view and every camera that
 *    sees it (the renderer's own ray from the plan's terms, and the
 *    reference's pc_view_ray, through pc_cam_project), that camera is in
 *    its tile's mask. Three rigs (the synthetic one with distortion, lens
 *    shift, pitch and roll; full-frame fisheyes of 150 degrees with a
 *    circular fisheye cropped to its circle; lenses whose distortion
 *    polynomial folds inside the image, with a crop rectangle and shear),
 *    hundreds of views each: panned past the rig's edges and all the way
 *    round (cameras behind the view), tilted to the zenith and nadir,
 *    rolled, hfov 1.5 to 150 degrees, sizes whose tiles do not divide
 *    them. How many mask bits are spare is reported.
 *  - set_view + render == a plan built for that view + render: the C
 *    reference and the CPU backend's renderer (every lanes build this CPU
 *    runs) bit for bit, the emulated
 *    CUDA kernels (texture and plain loads) byte for byte the same as on
 *    the fresh plan, along a path of moving views with photometry on.
 *  - The backend op: prepare once, then set_view + pc_backend_render_update
 *    + render per frame == the reference of a fresh plan (CPU bit for bit;
 *    CUDA where a device is, else a skip saying so).
 *  - Refusals (seam blending, precomputed maps, another size, another
 *    projection, a field of view too narrow): a clear message, the plan
 *    unchanged.
 */
#include "backend.h"
#include "backend_test_util.h"
#include "cuda_emu_render.h"
#include "debayer_test_util.h"
#include "render.h"
#include "render_formulas.h"
#include "render_synth.h"
#include "render_test_util.h" /* rt_lanes */
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NCAM = 3, CW = 160, CH = 96 };
#define DETAIL 1.0

enum { RIG_SYNTH, RIG_FISHEYE, RIG_FOLD, NRIGS };
static const char *const rig_names[NRIGS] = {"synthetic (distortion, shift, pitch, roll)",
                                             "fisheyes 150 deg (one cropped to its circle)",
                                             "folding distortion, crop, shear"};

static void make_rig(pc_rig *rig, int kind)
{
    pc_synth_rig(rig, NCAM, CW, CH, 40.0, 34.0, PC_PROJ_CYLINDRICAL, 480, 120);
    if (kind == RIG_FISHEYE) {
        for (int c = 0; c < NCAM; c++) {
            pc_rig_camera *cam = &rig->cam[c];
            cam->lens = c == 1 ? PC_LENS_FISHEYE_CIRCULAR : PC_LENS_FISHEYE_FULL;
            cam->hfov = 150;
            cam->yaw = 110.0 * (c - 1);
            cam->b = -0.02;
        }
        /* Hugin's circular crop: the disc inscribed in S, passing the image's edges */
        rig->cam[1].crop[0] = 10, rig->cam[1].crop[1] = 150, rig->cam[1].crop[2] = -22, rig->cam[1].crop[3] = 118;
    } else if (kind == RIG_FOLD) {
        for (int c = 0; c < NCAM; c++) {
            pc_rig_camera *cam = &rig->cam[c];
            cam->a = 0.0;
            cam->b = -0.22 + 0.02 * c; /* r s(r) peaks at r ~ 1.4, inside the image (corner radius 1.94) */
            cam->c = 0.0;
            cam->g = 4.0 * (c - 1);
            cam->t = -3.0 * (c - 1);
        }
        rig->cam[2].crop[0] = 12, rig->cam[2].crop[1] = 150, rig->cam[2].crop[2] = 5, rig->cam[2].crop[3] = 90;
    }
}

static int plan_for(const pc_rig *rig, const pc_view_model *v, const pc_rig_photometry *ph, pc_render_plan **plan)
{
    char err[256] = "";
    int rc = pc_render_plan_build(plan, rig, v, ph, NULL, err, sizeof err);
    if (rc)
        tap_diag("plan: %s", err);
    return rc;
}

/* --- conservative masks, exhaustively ------------------------------------ */

typedef struct maskstat {
    long misses;   /* a pixel some camera sees, that camera not in its tile's mask */
    long bits;     /* (tile, camera) bits set */
    long needed;   /* of them, bits some pixel of the tile needs */
    char first[160];
} maskstat;

static void check_masks(const pc_render_plan *p, maskstat *st)
{
    const int ntiles = p->ntx * p->nty;
    uint16_t *need = calloc((size_t)ntiles, sizeof *need);
    for (int y = 0; y < p->view.h; y++)
        for (int x = 0; x < p->view.w; x++) {
            const int t = (y / PC_RENDER_TILE_H) * p->ntx + x / PC_RENDER_TILE_W;
            float r1[3], r2[3], sx, sy;
            pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, r1);
            pc_view_ray(&p->view, (float)x, (float)y, r2);
            for (int c = 0; c < p->ncam; c++) {
                const int seen = pc_cam_project(&p->cam[c].geo, r1, &sx, &sy) |
                                 pc_cam_project(&p->cam[c].geo, r2, &sx, &sy);
                if (!seen)
                    continue;
                need[t] |= (uint16_t)(1u << c);
                if (!(p->tmask[t] >> c & 1)) {
                    if (!st->misses++)
                        snprintf(st->first, sizeof st->first, "camera %d sees pixel (%d, %d), not in tile (%d, %d)'s "
                                 "mask", c, x, y, x / PC_RENDER_TILE_W, y / PC_RENDER_TILE_H);
                }
            }
        }
    for (int t = 0; t < ntiles; t++) {
        st->bits += __builtin_popcount(p->tmask[t]);
        st->needed += __builtin_popcount(p->tmask[t] & need[t]);
    }
    free(need);
}

/* A deterministic spread of poses: every pan round the circle, tilts to the
 * poles, rolls, fields of view from 1.5 to 150 degrees. */
static void pose(int i, double *pan, double *tilt, double *roll, double *hfov)
{
    static const double hf[] = {1.5, 5, 20, 40, 70, 110, 150};
    unsigned h = (unsigned)i * 2654435761u;
    *pan = -200.0 + 400.0 * ((h >> 8) & 1023) / 1023.0;
    *tilt = -95.0 + 190.0 * ((h >> 18) & 1023) / 1023.0;
    *roll = ((h >> 4) & 15) < 4 ? -40.0 + 80.0 * ((h >> 4) & 15) / 3.0 : 0.0;
    *hfov = hf[i % 7];
    if (i % 5 < 3) /* near the rig: the overlaps and its edges */
        *tilt *= 0.3, *pan *= 0.45;
}

static void check_conservative(void)
{
    static const int sizes[][2] = {{160, 90}, {98, 62}};
    char err[256] = "";
    for (int kind = 0; kind < NRIGS; kind++) {
        pc_rig rig;
        make_rig(&rig, kind);
        for (int si = 0; si < 2; si++) {
            const int w = sizes[si][0], h = sizes[si][1];
            pc_view_model v;
            pc_render_plan *plan;
            pc_rig_rect_view(w, h, 40.0, 0.0, 0.0, 0.0, &v);
            if (!TAP_CHECK(plan_for(&rig, &v, NULL, &plan) == 0, "%s %dx%d: plan", rig_names[kind], w, h))
                continue;
            maskstat st = {0, 0, 0, ""}, built = {0, 0, 0, ""};
            int nviews = 0, failed = 0, some_behind = 0, some_none = 0;
            for (int i = 0; i < 240; i++) {
                double pan, tilt, roll, hfov;
                pose(i, &pan, &tilt, &roll, &hfov);
                if (i == 1) /* straight behind the rig's middle camera */
                    pan = 180, tilt = 0, roll = 0, hfov = 60;
                pc_rig_rect_view(w, h, hfov, pan, tilt, roll, &v);
                if (pc_render_plan_set_view(plan, &v, err, sizeof err)) {
                    if (!failed++)
                        tap_diag("set_view pan %.1f tilt %.1f roll %.1f hfov %.1f: %s", pan, tilt, roll, hfov, err);
                    continue;
                }
                const long before = st.misses;
                check_masks(plan, &st);
                if (st.misses > before && before == 0)
                    tap_diag("pan %.1f tilt %.1f roll %.1f hfov %.1f: %s", pan, tilt, roll, hfov, st.first);
                pc_render_plan *fresh; /* how tight pc_render_plan_build's masks are, for comparison */
                if (plan_for(&rig, &v, NULL, &fresh) == 0) {
                    check_masks(fresh, &built);
                    pc_render_plan_free(fresh);
                }
                unsigned all = 0;
                for (int t = 0; t < plan->ntx * plan->nty; t++)
                    all |= plan->tmask[t];
                some_none += all == 0;
                some_behind += all != (1u << NCAM) - 1;
                nviews++;
            }
            TAP_CHECK(failed == 0 && st.misses == 0,
                      "%s, %dx%d views: set_view's masks hold every camera that sees a pixel of the tile, over %d "
                      "views (%ld pixels missed; %d views with a camera behind or out of view, %d seeing nothing); "
                      "%.1f %% of the mask bits needed (pc_render_plan_build's: %.1f %%)", rig_names[kind], w, h,
                      nviews, st.misses, some_behind, some_none, st.bits ? 100.0 * st.needed / st.bits : 100.0,
                      built.bits ? 100.0 * built.needed / built.bits : 100.0);
            pc_render_plan_free(plan);
        }
    }
}

/* --- set_view + render == fresh plan + render ---------------------------- */

static void path_pose(int i, double *pan, double *tilt, double *hfov)
{
    *pan = -75.0 + 150.0 * i / 11.0; /* past both edges of the rig (its cameras span -54..54) */
    *tilt = 8.0 * sin(i * 0.9);
    *hfov = 25.0 + 15.0 * cos(i * 0.7);
}

static void check_render_same(pc_cpu *cpu)
{
    char err[256] = "", names[64];
    pc_rig rig;
    make_rig(&rig, RIG_SYNTH);
    pc_rig_photometry *ph = malloc(sizeof *ph);
    for (int c = 0; c < NCAM; c++) { /* Hugin's photometry on */
        pc_rig_camera *cam = &rig.cam[c];
        cam->eev = 0.3 * (c - 1);
        cam->er = 1.0 + 0.05 * (c - 1);
        cam->resp[0] = -0.3;
        cam->vm = 5;
        cam->va = 1.0;
        cam->vb = -0.1;
    }
    pc_rig_photometry_build(&rig, ph);
    const int w = 160, h = 90;
    pc_view_model v;
    pc_rig_rect_view(w, h, 40.0, 0.0, 0.0, 0.0, &v);
    pc_render_plan *moved;
    if (!TAP_CHECK(plan_for(&rig, &v, ph, &moved) == 0, "moving view: plan")) {
        free(ph);
        return;
    }
    pc_picture src[2], a, b;
    tu_pic_alloc_dev(&src[0], PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 8);
    tu_pic_alloc_dev(&src[1], PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 8);
    pc_synth_cameras(&rig, DETAIL, NULL, &src[0]);
    pc_synth_cameras(&rig, DETAIL, NULL, &src[1]);
    tu_pic_alloc_dev(&a, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 4);
    tu_pic_alloc_dev(&b, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 12);
    int cpu_bad = 0, emu_bad = 0, steps = 0, md;
    for (int i = 0; i < 12; i++) {
        double pan, tilt, hfov;
        path_pose(i, &pan, &tilt, &hfov);
        pc_rig_rect_view(w, h, hfov, pan, tilt, 0.0, &v);
        pc_render_plan *fresh;
        if (pc_render_plan_set_view(moved, &v, err, sizeof err) || plan_for(&rig, &v, ph, &fresh)) {
            tap_diag("pan %.1f: %s", pan, err);
            cpu_bad++;
            continue;
        }
        for (int s = 0; s < 2; s++) {
            tu_pic_fill(&b, 0x22);
            if (pc_render_ref(fresh, &src[s], &b, err, sizeof err)) {
                tap_diag("pan %.1f: reference: %s", pan, err);
                cpu_bad++;
            }
            for (int li = 0; li < RT_NLANES; li++) {
                if (!pc_render_cpu_lanes_usable(rt_lanes[li]))
                    continue;
                tu_pic_fill(&a, 0x11);
                int rc = pc_render_cpu_lanes(pc_cpu_pool(cpu), rt_lanes[li], moved, &src[s], &a, err, sizeof err);
                if (rc || tu_compare(&a, &b, &md)) {
                    tap_diag("pan %.1f tilt %.1f hfov %.1f, %s, lanes %s: the moved plan's CPU render differs from "
                             "the fresh plan's reference (max %d) %s", pan, tilt, hfov, s ? "rgbx32" : "rgb24",
                             rt_lanes[li], md, rc ? err : "");
                    cpu_bad++;
                }
            }
            for (int var = PC_GPU_RENDER_RAY; var <= PC_GPU_RENDER_RAY_LOADS; var++) {
                tu_pic_fill(&a, 0x33);
                tu_pic_fill(&b, 0x44);
                int rc = pc_emu_render(moved, var, &src[s], &a, err, sizeof err) ||
                         pc_emu_render(fresh, var, &src[s], &b, err, sizeof err);
                if (rc || tu_compare(&a, &b, &md)) {
                    tap_diag("pan %.1f, %s: emulated %s differs between the moved and the fresh plan (max %d) %s", pan,
                             s ? "rgbx32" : "rgb24", pc_gpu_render_variant_name(var), md, rc ? err : "");
                    emu_bad++;
                }
            }
        }
        pc_render_plan_free(fresh);
        steps++;
    }
    TAP_CHECK(cpu_bad == 0 && steps == 12, "moving view (pan -75..75 past the rig's edges, tilt, hfov 10..40, "
              "photometry on): set_view + CPU render (lanes %s) == a fresh plan's reference, bit for bit, %d frames, "
              "rgb24 and rgbx32 cameras", rt_lanes_usable_names(names), steps);
    TAP_CHECK(emu_bad == 0, "moving view: the emulated CUDA kernels (ray through the texture, ray with loads) write "
              "the same bytes on the moved plan as on a fresh one");
    tu_pic_free(&src[0]);
    tu_pic_free(&src[1]);
    tu_pic_free(&a);
    tu_pic_free(&b);
    pc_render_plan_free(moved);
    free(ph);
}

/* --- the backend op ------------------------------------------------------ */

static void check_backend(const pc_backend_ops *ops)
{
    char err[256] = "";
    if (!tu_backend_usable(ops))
        return;
    pc_rig rig;
    make_rig(&rig, RIG_SYNTH);
    const int w = 160, h = 90;
    pc_view_model v;
    pc_rig_rect_view(w, h, 40.0, -20.0, 0.0, 0.0, &v);
    pc_render_plan *plan;
    if (!TAP_CHECK(plan_for(&rig, &v, NULL, &plan) == 0, "backend %s: plan", ops->name))
        return;
    pc_backend *b = NULL;
    pc_backend_config cfg = {.width = CW, .height = NCAM * CH, .slots = 2, .device = 0, .threads = 2};
    int orc = pc_backend_open(&b, ops, &cfg, err, sizeof err);
    if (!TAP_CHECK(orc == 0, "backend %s: open (%s)", ops->name, orc ? err : "ok")) {
        pc_render_plan_free(plan);
        return;
    }
    /* the daemon's order: Bayer frames demosaiced into a picture of the
     * backend, rendered from there; the reference renders the download */
    pc_picture rgb, dem, dout, hdem, ref, host;
    uint8_t *raw = malloc((size_t)CW * NCAM * CH);
    tu_pic_alloc(&rgb, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 0);
    pc_synth_cameras(&rig, DETAIL, NULL, &rgb);
    pc_mosaic_from_rgb(rgb.plane[0], rgb.pitch[0], CW, NCAM * CH, PC_CFA_RGGB, raw, CW, err, sizeof err);
    tu_pic_alloc(&hdem, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 0);
    tu_pic_alloc_dev(&ref, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
    tu_pic_alloc_dev(&host, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
    pc_debayer_config dc = {PC_ALGO_BILINEAR, PC_VARIANT_AUTO, PC_CFA_RGGB, PC_FMT_RGB24, PC_MATRIX_BT709,
                            PC_RANGE_LIMITED};
    int ok = pc_backend_set_algo(b, &dc, err, sizeof err) == 0 &&
             pc_backend_picture_alloc(b, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, &dem, err,
                                      sizeof err) == 0 &&
             pc_backend_render_picture_alloc(b, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &dout, err,
                                             sizeof err) == 0;
    pc_render_dev *rd = NULL;
    if (ok)
        ok = pc_backend_render_prepare(b, plan, &rd, err, sizeof err) == 0;
    ok = ok && pc_backend_upload(b, 0, 0, raw, CW, NCAM * CH, err, sizeof err) == 0 &&
         pc_backend_debayer(b, 0, &dem, err, sizeof err) == 0 &&
         pc_backend_download(b, 0, &dem, &hdem, err, sizeof err) == 0 && pc_backend_wait(b, 0, err, sizeof err) == 0;
    TAP_CHECK(ok, "backend %s: demosaic, render picture, prepared plan (%s)", ops->name, ok ? "ok" : err);
    const int dev = (ops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    int bad = 0, frames = 0, worst = 0;
    for (int i = 0; ok && i < 12; i++) {
        double pan, tilt, hfov;
        path_pose(i, &pan, &tilt, &hfov);
        pc_rig_rect_view(w, h, hfov, pan, tilt, 0.0, &v);
        const int slot = i & 1;
        pc_render_plan *fresh = NULL;
        int rc = pc_render_plan_set_view(plan, &v, err, sizeof err);
        if (!rc)
            rc = pc_backend_render_update(b, rd, plan, err, sizeof err);
        if (!rc)
            rc = pc_backend_render(b, slot, rd, &dem, &dout, err, sizeof err);
        if (!rc)
            rc = pc_backend_download(b, slot, &dout, &host, err, sizeof err);
        if (!rc)
            rc = pc_backend_wait(b, slot, err, sizeof err);
        if (!rc)
            rc = plan_for(&rig, &v, NULL, &fresh);
        if (!rc)
            rc = pc_render_ref(fresh, &hdem, &ref, err, sizeof err);
        int md = 0;
        /* CUDA: the kernel's texture sampling, within the rule of render.h
         * (1 code value on >= 99.9 %, at most 2); the CPU: exact */
        long nd = rc ? -1 : tu_count_over(&ref, &host, dev ? 1 : 0, &md);
        if (rc || (dev ? md > 2 || nd * 1000 > tu_pic_samples(&ref) : nd != 0)) {
            tap_diag("backend %s, pan %.1f tilt %.1f hfov %.1f: %ld samples differ (CUDA: by more than 1), max %d %s",
                     ops->name, pan, tilt,
                     hfov, nd, md, rc ? err : "");
            bad++;
        }
        worst = md > worst ? md : worst;
        pc_render_plan_free(fresh);
        frames++;
    }
    TAP_CHECK(ok && bad == 0 && frames == 12, "backend %s: set_view + render_update + render per frame == a fresh "
              "plan's reference (%s), %d frames past both edges of the rig, largest difference %d", ops->name,
              dev ? "within 1 code value on >= 99.9 %, at most 2" : "bit for bit", frames, worst);
    /* a plan the renderer was not prepared from */
    if (ok) {
        pc_render_plan *other;
        pc_rig_rect_view(w + 2, h, 40.0, 0.0, 0.0, 0.0, &v);
        if (plan_for(&rig, &v, NULL, &other) == 0) {
            int rc = pc_backend_render_update(b, rd, other, err, sizeof err);
            TAP_CHECK(rc == PC_EINVAL && strstr(err, "162x90"), "backend %s: update with another plan is refused: %s",
                      ops->name, err);
            pc_render_plan_free(other);
        }
    }
    pc_backend_render_free(b, rd);
    if (ok) {
        pc_backend_picture_free(b, &dem);
        pc_backend_picture_free(b, &dout);
    }
    pc_backend_close(b);
    free(raw);
    tu_pic_free(&rgb);
    tu_pic_free(&hdem);
    tu_pic_free(&ref);
    tu_pic_free(&host);
    pc_render_plan_free(plan);
}

/* --- refusals -------------------------------------------------------------- */

static void check_errors(void)
{
    char err[256] = "";
    pc_rig rig;
    make_rig(&rig, RIG_SYNTH);
    pc_view_model v, w2;
    pc_rig_rect_view(160, 90, 40.0, 0.0, 0.0, 0.0, &v);
    pc_render_options opt;
    pc_render_options_default(&opt);
    pc_render_plan *p;
    opt.blend = PC_RENDER_SEAM;
    pc_view_model pano;
    pc_rig_panorama_view(&rig, 480, 120, &pano);
    pano.proj = PC_PROJ_CYLINDRICAL;
    if (pc_render_plan_build(&p, &rig, &pano, NULL, &opt, err, sizeof err) == 0) {
        pc_rig_rect_view(480, 120, 40.0, 5.0, 0.0, 0.0, &w2);
        int rc = pc_render_plan_set_view(p, &w2, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "seams") && strstr(err, "feather"),
                  "set_view on a seam-blended plan is refused: %s", err);
        pc_render_plan_free(p);
    }
    opt.blend = PC_RENDER_FEATHER;
    opt.maps = 1;
    if (pc_render_plan_build(&p, &rig, &v, NULL, &opt, err, sizeof err) == 0) {
        pc_rig_rect_view(160, 90, 40.0, 5.0, 0.0, 0.0, &w2);
        int rc = pc_render_plan_set_view(p, &w2, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "maps"), "set_view on a plan with maps is refused: %s", err);
        pc_render_plan_free(p);
    }
    if (plan_for(&rig, &v, NULL, &p) == 0) {
        const pc_view_model keep = p->view;
        uint16_t m0 = p->tmask[0];
        pc_rig_rect_view(162, 90, 40.0, 5.0, 0.0, 0.0, &w2);
        int rc = pc_render_plan_set_view(p, &w2, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "162x90") && strstr(err, "160x90"),
                  "set_view to another size is refused: %s", err);
        w2 = pano;
        w2.w = 160, w2.h = 90;
        rc = pc_render_plan_set_view(p, &w2, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "rectilinear"), "set_view to a cylindrical view is refused: %s",
                  err);
        pc_rig_rect_view(160, 90, 0.0005, 5.0, 0.0, 0.0, &w2);
        rc = pc_render_plan_set_view(p, &w2, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "narrow"), "set_view to a field of view of 0.0005 degrees is "
                  "refused: %s", err);
        TAP_CHECK(memcmp(&keep, &p->view, sizeof keep) == 0 && p->tmask[0] == m0,
                  "a refused set_view leaves the plan as it was");
        rc = pc_render_plan_set_view(p, NULL, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "NULL"), "set_view without a view is refused: %s", err);
        pc_render_plan_free(p);
    }
}

int main(void)
{
    char err[256] = "";
    pc_cpu *cpu = NULL;
    if (pc_cpu_open(&cpu, 2, 16, 16, err, sizeof err)) {
        printf("Bail out! pc_cpu_open: %s\n", err);
        return 1;
    }
    check_errors();
    check_conservative();
    check_render_same(cpu);
    check_backend(&pc_backend_cpu);
    check_backend(&pc_backend_cuda);
    pc_cpu_close(cpu);
    return tap_done();
}
