/* test_render_multiband.c - blend = multiband (render/render_multiband.h):
 * the overlaps of a rig's cameras blended band by band around the seams.
 *
 *  - The zones the blend touches (reach, per number of levels) and the
 *    strips of a synthetic 3-camera rig: whole mask tiles, inside the
 *    picture, the seams keeping `reach` from the overlaps' edges; what the
 *    zones leave out (tiles beyond the blend zone, D beyond `depend`)
 *    changes no sample of the reference.
 *  - The C reference against the CPU renderer (bit for bit, every lanes
 *    build this CPU runs, with and without the plan's maps) and against the CUDA kernels run by the host
 *    emulation (cuda_emu.h: the real kernel code; the ray kernel through
 *    the texture unit and with plain loads): every sample within 1 code
 *    value on >= 99.9 % of samples, never more than 2 (the GPU samples with
 *    the texture unit's 8-bit weights), for 256x128 cameras into a 640x160
 *    cylindrical panorama (3 and 4 levels) and a rectilinear view, RGB24
 *    and RGBX32 cameras, NV12/I420/RGB24, photometry off and on.
 *  - Constant cameras give a constant panorama (feather, seam and
 *    multiband, exactly), and at the covered area's edge seam and
 *    multiband fade it no more than the feather blend does.
 *  - An exposure step between two cameras is spread smoothly over the blend
 *    zone (no pixel-to-pixel step above a sixth of it, where the seam
 *    render steps at once), and outside the zone each camera is exactly
 *    itself; a texture seen misregistered by the second camera (a yaw
 *    error) shows no ghost: near the seam the fine detail is one camera's,
 *    where the feather blend mixes both.
 *  - The backend ops (CPU; CUDA where a device is), determinism, errors.
 *  - The simulated stadium (capture/scene.h) through the example rig
 *    (argv[1], rig/examples/stadium5.pto) at 1/4 of its size (4 levels):
 *    feather, seam and multiband against the scene's ground truth, PSNR
 *    over the whole panorama, the overlaps and elsewhere, and the colour
 *    step across the seams; the blend zones no more than 1 dB worse than
 *    elsewhere for seam and multiband; with the .pto's exposures of two
 *    cameras off by 0.1 EV, multiband's colour step under 0.6 times the
 *    seam render's, and under a level once gain compensation runs; nona +
 *    enblend on the same pictures for comparison (where hugin-tools and
 *    enblend are installed). `test_render_multiband RIG --scale K`
 *    measures at 1/K instead (K = 1: the full 8710x1048 panorama, 5
 *    levels; docs/panorama.md's figures).
 */
#include "backend.h"
#include "cuda_emu_render.h"
#include "debayer_test_util.h"
#include "render.h"
#include "render_host.h"
#include "render_multiband.h"
#include "render_synth.h"
#include "render_test_util.h"
#include "scene.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NCAM = 3, CW = 256, CH = 128, PW = 640, PH = 160 };
#define HFOV 40.0
#define STEP 28.0 /* overlaps of ~12 degrees: ~80 output pixels */
#define DETAIL 1.0

/* The synthetic rig's plan: blend, levels, a view (rect: a virtual camera
 * across the overlap of cameras 0 and 1), photometry, maps. */
static int plan_of(pc_rig *rig, pc_render_blend blend, int levels, int rect, int photo, int maps, pc_render_plan **plan,
                   char *err, size_t errlen)
{
    pc_synth_rig(rig, NCAM, CW, CH, HFOV, STEP, PC_PROJ_CYLINDRICAL, PW, PH);
    pc_rig_photometry *ph = malloc(sizeof *ph);
    if (photo)
        photometry(rig, ph);
    pc_view_model view;
    if (rect)
        pc_rig_rect_view(320, 180, 36.0, -14.0, -2.0, 1.0, &view);
    else
        pc_rig_panorama_view(rig, PW, PH, &view);
    pc_render_options opt;
    pc_render_options_default(&opt);
    opt.blend = blend;
    opt.levels = levels;
    opt.maps = maps;
    int rc = pc_render_plan_build(plan, rig, &view, photo ? ph : NULL, &opt, err, errlen);
    free(ph);
    return rc;
}

static void cameras(const pc_rig *rig, pc_picture *src, pc_pixfmt fmt, const float (*gain)[3])
{
    tu_pic_alloc_dev(src, fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 8);
    pc_synth_cameras(rig, DETAIL, gain, src);
}

/* --- zones and strips ---------------------------------------------------- */

static void check_strips(void)
{
    char err[256] = "";
    int reach[PC_MB_MAX_LEVELS + 1] = {0}, depend[PC_MB_MAX_LEVELS + 1] = {0};
    for (int L = PC_MB_MIN_LEVELS; L <= PC_MB_MAX_LEVELS; L++)
        reach[L] = pc_render_mb_reach(L, 0.5f, &depend[L]);
    tap_diag("blend zone (2-pixel ramp): levels 3..6 change pixels up to %d, %d, %d, %d output pixels from the seam "
             "and read D up to %d, %d, %d, %d", reach[3], reach[4], reach[5], reach[6], depend[3], depend[4], depend[5],
             depend[6]);
    TAP_CHECK(reach[3] < reach[4] && reach[4] < reach[5] && reach[5] < reach[6] && reach[5] <= 2 * 32,
              "blend zone: grows with the levels, 5 levels within 64 output pixels of the seam (%d)", reach[5]);
    pc_rig rig;
    pc_render_plan *p;
    int rc = plan_of(&rig, PC_RENDER_MULTIBAND, 4, 0, 0, 0, &p, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "multiband plan, 4 levels (%s)", rc ? err : "ok"))
        return;
    const struct pc_render_mb *mb = p->mb;
    int ok = mb->nstrips == NCAM - 1, inside = 1, seam_room = 1, shrank = 1;
    int built_w[PC_MB_MAX_STRIPS];
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) { /* the seams placed: the strips shrink to them */
            pc_picture src;
            cameras(&rig, &src, PC_FMT_RGB24, NULL);
            if (pc_render_plan_place_seams(p, &src, err, sizeof err))
                TAP_CHECK(0, "strips: seams placed: %s", err);
            tu_pic_free(&src);
        }
        for (int s = 0; s < mb->nstrips; s++) {
            const pc_mb_strip *st = &mb->strip[s];
            ok &= st->a == s && st->b == s + 1 && st->x0 % PC_RENDER_TILE_W == 0 && st->y0 % PC_RENDER_TILE_H == 0 &&
                  (st->w[0] % PC_RENDER_TILE_W == 0 || st->x0 + st->w[0] == p->view.w) && st->h[0] % 2 == 0;
            inside &= st->x0 >= 0 && st->y0 >= 0 && st->x0 + st->w[0] <= p->view.w && st->y0 + st->h[0] <= p->view.h;
            if (pass == 0)
                built_w[s] = st->w[0];
            else
                shrank &= st->w[0] <= built_w[s];
            for (int j = 0; j < st->h[0]; j++) {
                const int y = st->y0 + j, *span = mb->span + 2 * (st->seam_off + (size_t)j);
                const float seam = mb->seam[st->seam_off + (size_t)j];
                if (p->seam_next[(size_t)st->a * p->view.h + y] != st->b)
                    continue;
                /* the zone the blend changes lies in the strip, and in the
                 * overlap where that is wide enough */
                seam_room &= seam - mb->reach >= st->x0 && seam + mb->reach < st->x0 + st->w[0];
                if (span[1] - span[0] >= 2 * mb->reach + 2 && span[0] > st->x0 && span[1] < st->x0 + st->w[0] - 1)
                    seam_room &= seam - mb->reach >= span[0] - 0.5f && seam + mb->reach <= span[1] + 0.5f;
            }
            tap_diag("strip %d|%d%s: output x %d..%d, y %d..%d (%d levels: %dx%d .. %dx%d)", st->a, st->b,
                     pass ? " (seams placed)" : "", st->x0, st->x0 + st->w[0] - 1, st->y0, st->y0 + st->h[0] - 1,
                     mb->levels, st->w[0], st->h[0], st->w[mb->levels - 1], st->h[mb->levels - 1]);
        }
    }
    TAP_CHECK(ok && inside, "strips: one per overlap, whole 32x8 tiles inside the picture");
    TAP_CHECK(seam_room, "strips: every seam keeps the blend zone (%d px) inside its overlap and its strip, before "
              "and after the seams are placed", mb->reach);
    TAP_CHECK(shrank, "strips: placing the seams never widens a strip");
    long claimed = 0;
    for (int t = 0; t < p->ntx * p->nty; t++)
        claimed += mb->tile_strip[t] >= 0 && mb->tmask_rest[t] == 0;
    TAP_CHECK(claimed > 0, "strips: %ld tiles taken out of the main pass's masks", claimed);
    pc_render_plan_free(p);
}

/* What the zones leave out changes nothing: the reference rendered as
 * planned (the strips' pixels from the blend zone's tiles, D computed
 * within depend of the seams) and with every tile of the strips' rectangles
 * blended and D computed everywhere in them agree, up to the rounding of
 * a pixel that is one camera's either way. */
static void check_zones(void)
{
    char err[256] = "";
    pc_rig rig;
    pc_render_plan *p;
    if (!TAP_CHECK(plan_of(&rig, PC_RENDER_MULTIBAND, 4, 0, 1, 0, &p, err, sizeof err) == 0, "zones: plan"))
        return;
    struct pc_render_mb *mb = p->mb;
    pc_picture src, out[2];
    cameras(&rig, &src, PC_FMT_RGB24, NULL);
    pc_render_plan_place_seams(p, &src, err, sizeof err);
    const size_t nt = (size_t)p->ntx * p->nty;
    long zone_tiles = 0, rect_tiles = 0, banded = 0, cols = 0;
    for (size_t t = 0; t < nt; t++)
        zone_tiles += mb->tile_strip[t] >= 0;
    int rc = 0;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        tu_pic_alloc(&out[pass], PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, PW, PH, 0);
        if (pass == 1) /* the whole rectangles, D everywhere */
            for (int s = 0; s < mb->nstrips; s++) {
                const pc_mb_strip *st = &mb->strip[s];
                for (int j = 0; j < st->h[0]; j++) {
                    int *band = mb->band + 2 * (st->seam_off + (size_t)j);
                    banded += band[1] - band[0] + 1 < st->w[0];
                    cols += st->w[0];
                    band[0] = st->x0 - 1;
                    band[1] = st->x0 + st->w[0];
                }
                for (int y = st->y0; y < st->y0 + st->h[0]; y += PC_RENDER_TILE_H)
                    for (int x = st->x0; x < st->x0 + st->w[0]; x += PC_RENDER_TILE_W) {
                        const size_t t = (size_t)(y / PC_RENDER_TILE_H) * p->ntx + x / PC_RENDER_TILE_W;
                        mb->tile_strip[t] = (int8_t)s;
                        mb->tmask_rest[t] = 0;
                        rect_tiles++;
                    }
            }
        rc = pc_render_ref(p, &src, &out[pass], err, sizeof err);
    }
    diffstat d = compare(&out[0], &out[1]);
    long differ = 0;
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < 3 * PW; x++)
            differ += out[0].plane[0][(size_t)y * out[0].pitch[0] + x] != out[1].plane[0][(size_t)y * out[1].pitch[0] + x];
    tap_diag("zones: %ld of the strips' %ld tiles blended, D computed in a band narrower than the strip in %ld rows; "
             "%ld of %ld samples differ from blending the whole strips, by at most %d", zone_tiles, rect_tiles,
             banded, differ, d.n, d.max);
    TAP_CHECK(rc == 0 && zone_tiles < rect_tiles && d.max <= 1 && differ * 2000 <= d.n, "zones: the blend zone's "
              "tiles and D's band give the whole strips' blend (%ld samples off by one of %ld, none by more)", differ,
              d.n);
    tu_pic_free(&out[0]);
    tu_pic_free(&out[1]);
    tu_pic_free(&src);
    pc_render_plan_free(p);
}

/* --- reference == CPU, emulated kernels within the rule ---------------- */

static void check_implementations(pc_cpu *cpu)
{
    static const struct {
        const char *name;
        int levels, rect;
    } cases[] = {{"cylindrical 640x160, 3 levels", 3, 0}, {"cylindrical 640x160, 4 levels", 4, 0},
                 {"view 320x180 across cameras 0|1, 3 levels", 3, 1}};
    char err[256] = "", names[64];
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int photo = 0; photo < 2; photo++) {
            pc_rig rig;
            pc_render_plan *plan;
            int rc = plan_of(&rig, PC_RENDER_MULTIBAND, cases[ci].levels, cases[ci].rect, photo, 1, &plan, err,
                             sizeof err);
            if (!TAP_CHECK(rc == 0, "%s, photometry %s: plan (%s)", cases[ci].name, photo ? "on" : "off",
                           rc ? err : "ok"))
                continue;
            pc_picture srcs[2];
            cameras(&rig, &srcs[0], PC_FMT_RGB24, NULL);
            cameras(&rig, &srcs[1], PC_FMT_RGBX32, NULL);
            rc = pc_render_plan_place_seams(plan, &srcs[0], err, sizeof err);
            if (rc)
                TAP_CHECK(0, "%s: seams placed: %s", cases[ci].name, err);
            /* the kernels that take a multiband plan, in every format */
            const unsigned ray = 1u << PC_GPU_RENDER_RAY | 1u << PC_GPU_RENDER_RAY_LOADS;
            rt_impl r = rt_implementations(cpu, plan, srcs, ray, 0, cases[ci].name);
            TAP_CHECK(rc == 0 && r.cpu_bad == 0, "%s, photometry %s: CPU renderer (lanes %s; plans with and without "
                      "maps) == reference, bit for bit (%d runs: rgb24/rgbx32 cameras -> nv12/i420/rgb24)",
                      cases[ci].name, photo ? "on" : "off", rt_lanes_usable_names(names), r.runs);
            TAP_CHECK(r.emu_bad == 0, "%s, photometry %s: emulated CUDA kernels (pyramid, main pass, strips; texture "
                      "and plain loads) within 1 code value on >= 99.9 %% of samples, max 2", cases[ci].name,
                      photo ? "on" : "off");
            tu_pic_free(&srcs[0]);
            tu_pic_free(&srcs[1]);
            pc_render_plan_free(plan);
        }
}

/* --- behaviour ------------------------------------------------------------- */

/* Output pixel (x, y) seen by camera c alone, 8-bit RGB (the reference's
 * pixel with the mask of c only, no seams). */
static void camera_alone(const pc_render_plan *p, const pc_picture *src, int c, int x, int y, int rgb[3])
{
    const pc_render_src s = pc_render_src_of(src);
    float ray[3];
    pc_view_ray(&p->view, (float)x, (float)y, ray);
    pc_render_px(p, &s, ray, x, y, 1u << c, NULL, rgb);
}

static int seen_by(const pc_render_plan *p, int c, int x, int y)
{
    float ray[3], sx, sy;
    pc_view_ray(&p->view, (float)x, (float)y, ray);
    return pc_cam_project(&p->cam[c].geo, ray, &sx, &sy) && pc_render_border(&p->cam[c].geo, sx, sy) >= 1.0f;
}

static int render_rgb(pc_cpu *cpu, const pc_render_plan *p, const pc_picture *src, pc_picture *out)
{
    char err[256] = "";
    tu_pic_alloc(out, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, p->view.w, p->view.h, 0);
    int rc = pc_render_cpu(pc_cpu_pool(cpu), p, src, out, err, sizeof err);
    if (rc)
        tap_diag("render: %s", err);
    return rc;
}

/* Constant cameras: every blend gives the constant wherever a camera sees
 * the pixel a source pixel or more inside its border, and the feather
 * blend's own fade where none does (the covered area's edge, which the
 * feather normalisation fades over its last source pixel). At an
 * overlap's ends (its top and bottom, where one camera's coverage stops)
 * the seam render once handed pixels to a camera that saw them at its
 * very edge, alone, and faded them towards black, and multiband faded the
 * edge by the larger of the two cameras' border distances, darker than
 * the feather blend where both see the pixel within a source pixel. */
static void check_constant(pc_cpu *cpu)
{
    char err[256] = "";
    pc_picture feather = {0};
    for (int b = 0; b < 3; b++) {
        pc_rig rig;
        pc_render_plan *p;
        if (plan_of(&rig, (pc_render_blend)b, 4, 0, 0, 0, &p, err, sizeof err)) {
            TAP_CHECK(0, "constant: plan: %s", err);
            continue;
        }
        pc_picture src, out;
        tu_pic_alloc(&src, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 0);
        for (int y = 0; y < NCAM * CH; y++)
            for (int x = 0; x < CW; x++) {
                uint8_t *q = src.plane[0] + (size_t)y * src.pitch[0] + 3 * x;
                q[0] = 90, q[1] = 150, q[2] = 210;
            }
        long n = 0, off = 0, edge = 0, darker = 0;
        if (b != PC_RENDER_FEATHER && pc_render_plan_place_seams(p, &src, err, sizeof err))
            tap_diag("place seams: %s", err);
        if (!render_rgb(cpu, p, &src, &out))
            for (int y = 0; y < PH; y++)
                for (int x = 0; x < PW; x++) {
                    int any = 0;
                    for (int c = 0; c < NCAM; c++)
                        any |= seen_by(p, c, x, y);
                    const uint8_t *q = out.plane[0] + (size_t)y * out.pitch[0] + 3 * x;
                    if (!any) {
                        const uint8_t *f = b ? feather.plane[0] + (size_t)y * feather.pitch[0] + 3 * x : q;
                        edge += f[0] != 0;
                        darker += q[0] + 1 < f[0] || q[1] + 1 < f[1] || q[2] + 1 < f[2];
                        continue;
                    }
                    n++;
                    off += q[0] != 90 || q[1] != 150 || q[2] != 210;
                }
        TAP_CHECK(n > PW * PH / 2 && off == 0, "constant cameras, blend %s: %ld covered pixels, %ld not (90, 150, 210)",
                  pc_render_blend_name((pc_render_blend)b), n, off);
        if (b)
            TAP_CHECK(edge > 0 && darker == 0, "constant cameras, blend %s: at the covered area's edge (%ld pixels "
                      "the feather blend fades) %ld darker than the feather blend",
                      pc_render_blend_name((pc_render_blend)b), edge, darker);
        tu_pic_free(&src);
        if (b)
            tu_pic_free(&out);
        else
            feather = out;
        pc_render_plan_free(p);
    }
    tu_pic_free(&feather);
}

/* Cameras that differ in exposure by 30 % (flat grey): across the seam of
 * cameras 0 and 1, the width of the transition (10 % to 90 % of the step),
 * the largest change between neighbouring pixels, any overshoot, and the
 * pixels beyond the blend zone that are not their camera's own value. */
static void check_exposure_step(pc_cpu *cpu)
{
    char err[256] = "";
    const int lo = 120, hi = 156; /* camera 0's and camera 1's grey */
    double jump[3] = {0, 0, 0}, width[3] = {0, 0, 0};
    long rows[3] = {0, 0, 0}, wrong = 0, checked = 0, over = 0;
    for (int b = 1; b < 3; b++) {
        pc_rig rig;
        pc_render_plan *p;
        if (plan_of(&rig, (pc_render_blend)b, 4, 0, 0, 0, &p, err, sizeof err)) {
            TAP_CHECK(0, "exposure step: plan: %s", err);
            continue;
        }
        pc_picture src, out;
        tu_pic_alloc(&src, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 0);
        for (int y = 0; y < NCAM * CH; y++)
            for (int x = 0; x < CW; x++)
                memset(src.plane[0] + (size_t)y * src.pitch[0] + 3 * x, y / CH == 1 ? hi : lo, 3);
        if (!render_rgb(cpu, p, &src, &out)) {
            const int reach = p->mb ? p->mb->reach : 0;
            for (int y = PH / 4; y < 3 * PH / 4; y++) {
                if (p->seam_next[y] != 1)
                    continue;
                const float seam = p->seam[(size_t)1 * PH + y];
                int x10 = -1, x90 = -1, full = 1;
                for (int x = (int)seam - 60; x < (int)seam + 60; x++) {
                    if (x < 1 || x >= PW || !seen_by(p, 0, x, y) || !seen_by(p, 1, x, y) || !seen_by(p, 0, x - 1, y) ||
                        !seen_by(p, 1, x - 1, y)) {
                        full &= x < 1 || x >= PW || (x < seam - 40 || x > seam + 40);
                        continue;
                    }
                    const uint8_t *q = out.plane[0] + (size_t)y * out.pitch[0] + 3 * x;
                    const double d = fabs((double)q[1] - q[1 - 3]);
                    jump[b] = d > jump[b] ? d : jump[b];
                    over += q[1] < lo - 1 || q[1] > hi + 1;
                    if (x10 < 0 && q[1] >= lo + 0.1 * (hi - lo))
                        x10 = x;
                    if (x90 < 0 && q[1] >= lo + 0.9 * (hi - lo))
                        x90 = x;
                    if (b == PC_RENDER_MULTIBAND && fabsf((float)x - seam) > (float)reach + 1) {
                        int own[3];
                        camera_alone(p, &src, x < seam ? 0 : 1, x, y, own);
                        checked++;
                        wrong += own[0] != q[0] || own[1] != q[1] || own[2] != q[2];
                    }
                }
                if (full && x10 >= 0 && x90 >= 0) {
                    width[b] += x90 - x10;
                    rows[b]++;
                }
            }
        }
        tu_pic_free(&src);
        tu_pic_free(&out);
        pc_render_plan_free(p);
    }
    for (int b = 1; b < 3; b++)
        width[b] /= rows[b] ? rows[b] : 1;
    const int step = hi - lo;
    tap_diag("an exposure step of %d levels across the seam: 10-90 %% over %.1f px (seam, its %d-px ramp), %.1f px "
             "(multiband, 4 levels); at most %.0f and %.0f levels between neighbouring pixels", step,
             width[PC_RENDER_SEAM], 8, width[PC_RENDER_MULTIBAND], jump[PC_RENDER_SEAM], jump[PC_RENDER_MULTIBAND]);
    TAP_CHECK(rows[1] > 20 && rows[2] > 20 && width[PC_RENDER_MULTIBAND] >= 2 * width[PC_RENDER_SEAM] &&
              jump[PC_RENDER_MULTIBAND] <= step / 6.0 && over == 0, "exposure step: multiband spreads it over %.1f px "
              "(>= twice the seam render's %.1f), at most %.0f levels between neighbours (<= %.0f), no overshoot (%ld)",
              width[PC_RENDER_MULTIBAND], width[PC_RENDER_SEAM], jump[PC_RENDER_MULTIBAND], step / 6.0, over);
    TAP_CHECK(checked > 1000 && wrong == 0, "exposure step: beyond the blend zone every pixel is its own camera's "
              "(%ld of %ld differ)", wrong, checked);
}

/* Camera 1's picture rendered from a rig turned by 0.25 degrees (about 1.5
 * camera pixels: a misregistration); the fine detail near the seam, on
 * either side, against that side's camera alone. HF = the pixel minus the
 * mean of its 3x3 neighbourhood (green). */
static void check_no_ghost(pc_cpu *cpu)
{
    char err[256] = "";
    double ghost[3] = {0, 0, 0};
    long n[3] = {0, 0, 0};
    for (int b = 0; b < 3; b++) {
        pc_rig rig, moved;
        pc_render_plan *p;
        if (plan_of(&rig, (pc_render_blend)b, 4, 0, 0, 0, &p, err, sizeof err)) {
            TAP_CHECK(0, "ghosts: plan: %s", err);
            continue;
        }
        pc_picture src, src1, out, alone[2];
        cameras(&rig, &src, PC_FMT_RGB24, NULL);
        moved = rig;
        moved.cam[1].yaw += 0.25;
        cameras(&moved, &src1, PC_FMT_RGB24, NULL);
        for (int y = 0; y < CH; y++)
            memcpy(src.plane[0] + (size_t)(CH + y) * src.pitch[0], src1.plane[0] + (size_t)(CH + y) * src1.pitch[0],
                   3 * CW);
        if (p->seam && pc_render_plan_place_seams(p, &src, err, sizeof err))
            TAP_CHECK(0, "ghosts: seams: %s", err);
        for (int e = 0; e < 2; e++) {
            tu_pic_alloc(&alone[e], PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, PW, PH, 0);
            for (int y = 0; y < PH; y++)
                for (int x = 0; x < PW; x++) {
                    int v[3];
                    camera_alone(p, &src, e, x, y, v);
                    for (int k = 0; k < 3; k++)
                        alone[e].plane[0][(size_t)y * alone[e].pitch[0] + 3 * x + k] = (uint8_t)v[k];
                }
        }
        if (!render_rgb(cpu, p, &src, &out))
            for (int y = 2; y < PH - 2; y++) {
                /* the seam of blend seam/multiband; feather: the overlap's middle */
                int lo = PW, hi = -1;
                for (int x = 2; x < PW - 2; x++)
                    if (seen_by(p, 0, x, y) && seen_by(p, 1, x, y)) {
                        lo = x < lo ? x : lo;
                        hi = x > hi ? x : hi;
                    }
                if (hi - lo < 40)
                    continue;
                const float seam = p->seam ? p->seam[(size_t)1 * PH + y] : 0.5f * (float)(lo + hi);
                for (int x = lo + 3; x <= hi - 3; x++) {
                    const float dist = fabsf((float)x - seam);
                    if (dist < 3 || dist > 12)
                        continue;
                    const pc_picture *own = &alone[x < seam ? 0 : 1];
                    double hf[2];
                    for (int e = 0; e < 2; e++) {
                        const pc_picture *q = e ? own : &out;
                        double sum = 0;
                        for (int dy = -1; dy <= 1; dy++)
                            for (int dx = -1; dx <= 1; dx++)
                                sum += q->plane[0][(size_t)(y + dy) * q->pitch[0] + 3 * (x + dx) + 1];
                        hf[e] = q->plane[0][(size_t)y * q->pitch[0] + 3 * x + 1] - sum / 9;
                    }
                    ghost[b] += fabs(hf[0] - hf[1]);
                    n[b]++;
                }
            }
        tu_pic_free(&alone[0]);
        tu_pic_free(&alone[1]);
        tu_pic_free(&src);
        tu_pic_free(&src1);
        tu_pic_free(&out);
        pc_render_plan_free(p);
    }
    for (int b = 0; b < 3; b++)
        ghost[b] /= n[b] ? n[b] : 1;
    tap_diag("misregistered by 0.25 degrees: fine detail 3..12 px from the seam differs from that side's camera by "
             "%.2f (feather), %.2f (seam), %.2f (multiband) levels on average", ghost[0], ghost[1], ghost[2]);
    TAP_CHECK(n[2] > 500 && ghost[2] < 0.5 * ghost[0], "no ghost: near the seam the multiband's fine detail is one "
              "camera's (%.2f levels from it, under half the feather blend's %.2f)", ghost[2], ghost[0]);
}

static void check_deterministic(pc_cpu *cpu)
{
    char err[256] = "";
    pc_rig rig;
    pc_render_plan *p;
    if (!TAP_CHECK(plan_of(&rig, PC_RENDER_MULTIBAND, 4, 0, 1, 0, &p, err, sizeof err) == 0, "determinism: plan"))
        return;
    pc_picture src, a, b;
    cameras(&rig, &src, PC_FMT_RGBX32, NULL);
    pc_render_plan_place_seams(p, &src, err, sizeof err);
    const struct pc_render_mb *mb = p->mb;
    float *m1 = malloc(sizeof(float) * mb->npx[1]);
    memcpy(m1, mb->mask[1], sizeof(float) * mb->npx[1]);
    int same = !render_rgb(cpu, p, &src, &a);
    for (int i = 0; i < 3 && same; i++) {
        same &= !render_rgb(cpu, p, &src, &b) && compare(&a, &b).max == 0;
        tu_pic_free(&b);
    }
    TAP_CHECK(same && memcmp(m1, mb->mask[1], sizeof(float) * mb->npx[1]) == 0, "determinism: the same frame "
              "renders to the same bytes every time on 3 threads; the masks do not change with frames");
    free(m1);
    tu_pic_free(&a);
    tu_pic_free(&src);
    pc_render_plan_free(p);
}

/* --- the backend ops ---------------------------------------------------- */

/* A multiband plan through a backend, the daemon's way (rt_backend). */
static void check_backend(const pc_backend_ops *ops)
{
    char err[256] = "";
    if (!rt_backend_usable(ops))
        return;
    pc_rig rig;
    pc_render_plan *plan;
    if (!TAP_CHECK(plan_of(&rig, PC_RENDER_MULTIBAND, 4, 0, 1, 0, &plan, err, sizeof err) == 0, "backend %s: plan",
                   ops->name))
        return;
    pc_picture rgb;
    cameras(&rig, &rgb, PC_FMT_RGB24, NULL);
    pc_render_plan_place_seams(plan, &rgb, err, sizeof err);
    rt_backend r;
    diffstat d = {0, 0, 0};
    int rc = rt_backend_open(&r, ops, plan, &rgb, err, sizeof err);
    if (!rc)
        rc = rt_backend_frame(&r, 0, &d, err, sizeof err);
    TAP_CHECK(rc == 0 && (r.dev ? within_rule(d) : d.max == 0), "backend %s: demosaic + multiband render == "
              "reference of the demosaic%s: %ld samples over 1, max %d%s%s", ops->name,
              r.dev ? ", within the rule" : ", bit for bit", d.over1, d.max, rc ? ": " : "", rc ? err : "");
    rt_backend_close(&r);
    tu_pic_free(&rgb);
    pc_render_plan_free(plan);
}

/* --- errors ----------------------------------------------------------------- */

static void check_errors(void)
{
    char err[256] = "";
    pc_rig rig;
    pc_render_plan *p = NULL;
    int rc = plan_of(&rig, PC_RENDER_MULTIBAND, 2, 0, 0, 0, &p, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && !p && strstr(err, "levels 2") && strstr(err, "3..6"), "2 levels refused: %s", err);
    rc = plan_of(&rig, PC_RENDER_MULTIBAND, 7, 0, 0, 0, &p, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && !p && strstr(err, "levels 7"), "7 levels refused: %s", err);
    /* narrow cameras (64 px) and 6 levels: the blend zones of two overlaps meet */
    pc_synth_rig(&rig, 4, 64, 48, 40.0, 30.0, PC_PROJ_CYLINDRICAL, 256, 64);
    pc_view_model view;
    pc_rig_panorama_view(&rig, 256, 64, &view);
    pc_render_options opt;
    pc_render_options_default(&opt);
    opt.blend = PC_RENDER_MULTIBAND;
    opt.levels = 6;
    rc = pc_render_plan_build(&p, &rig, &view, NULL, &opt, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && !p && strstr(err, "multiband") && strstr(err, "cameras"),
              "blend zones that would meet are refused: %s", err);
    TAP_CHECK(pc_render_blend_from_name("multiband") == PC_RENDER_MULTIBAND &&
              !strcmp(pc_render_blend_name(PC_RENDER_MULTIBAND), "multiband"), "blend names: multiband");
}

/* --- the simulated stadium ------------------------------------------------ */

typedef struct zones {
    double se[3];
    long n[3]; /* all, overlaps, elsewhere */
} zones;

static double psnr_of(double se, long n) { return n ? 10 * log10(255.0 * 255.0 * 3 * n / (se > 0 ? se : 1e-9)) : 0; }

/* out (w x h RGB, pitch) against truth (packed RGB), per zone (overlap: a
 * pixel two cameras see). */
static zones zone_psnr(const uint8_t *out, size_t pitch, int spp, const uint8_t *truth, const uint8_t *overlap, int w,
                       int h)
{
    zones z;
    memset(&z, 0, sizeof z);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double se = 0;
            for (int k = 0; k < 3; k++) {
                const double d = (double)out[(size_t)y * pitch + (size_t)spp * x + k] - truth[3 * ((size_t)y * w + x) + k];
                se += d * d;
            }
            const int zi = overlap[(size_t)y * w + x] ? 1 : 2;
            z.se[0] += se, z.n[0]++;
            z.se[zi] += se, z.n[zi]++;
        }
    return z;
}

/* nona + enblend on the camera pictures: the stitched panorama (w x h
 * RGB, malloc'd; enblend writes the canvas it blends, here the whole
 * crop, which the cameras cover), or NULL with the reason. */
static uint8_t *enblend_of(const pc_rig *rig0, const pc_picture *cams, int w, int h, char *why, size_t whylen)
{
    char dir[] = "/tmp/pc_test_mbXXXXXX", cmd[2000], path[600], err[256];
    if (!mkdtemp(dir)) {
        snprintf(why, whylen, "no temporary folder");
        return NULL;
    }
    pc_rig rig = *rig0;
    int ok = 1;
    for (int c = 0; c < rig.ncam && ok; c++) {
        snprintf(rig.cam[c].file, sizeof rig.cam[c].file, "%s/cam%d.ppm", dir, c);
        FILE *f = fopen(rig.cam[c].file, "wb");
        ok = f != NULL;
        if (f) {
            fprintf(f, "P6\n%d %d\n255\n", rig.cam[c].w, rig.cam[c].h);
            for (int y = 0; y < rig.cam[c].h; y++)
                fwrite(cams->plane[0] + (size_t)(c * rig.cam[c].h + y) * cams->pitch[0], 1, 3 * (size_t)rig.cam[c].w, f);
            ok = fclose(f) == 0;
        }
    }
    snprintf(path, sizeof path, "%s/rig.pto", dir);
    ok = ok && pc_rig_save(&rig, path, err, sizeof err) == 0;
    snprintf(cmd, sizeof cmd, "cd %s && nona -m TIFF_m -o layer rig.pto >log 2>&1 && enblend -o stitched.ppm "
             "layer0*.tif >>log 2>&1", dir);
    ok = ok && system(cmd) == 0;
    snprintf(path, sizeof path, "%s/stitched.ppm", dir);
    FILE *f = ok ? fopen(path, "rb") : NULL;
    int hdr[3] = {0, 0, 0}, nh = 0, pw, ph, maxv;
    uint8_t *rgb = NULL;
    /* P6, then width, height and maxval with '#' comments between (VIGRA
     * writes one, and as maxval the largest value present: the samples
     * are 8-bit values as they are) */
    if (f && fgetc(f) == 'P' && fgetc(f) == '6')
        while (nh < 3) {
            int c = fgetc(f);
            if (c == '#')
                while (c != '\n' && c != EOF)
                    c = fgetc(f);
            else if (c >= '0' && c <= '9') {
                ungetc(c, f);
                if (fscanf(f, "%d", &hdr[nh++]) != 1)
                    break;
            } else if (c == EOF)
                break;
        }
    pw = hdr[0], ph = hdr[1], maxv = hdr[2];
    if (nh == 3 && fgetc(f) != EOF && pw == w && ph == h && maxv > 0 && maxv <= 255) {
        rgb = malloc((size_t)w * h * 3);
        if (rgb && fread(rgb, 1, (size_t)w * h * 3, f) != (size_t)w * h * 3) {
            free(rgb);
            rgb = NULL;
        }
    }
    if (f)
        fclose(f);
    if (!ok)
        snprintf(why, whylen, "nona or enblend failed (%s/log)", dir);
    else if (!rgb)
        snprintf(why, whylen, "enblend's picture: %dx%d (maxval %d), not the %dx%d panorama", pw, ph, maxv, w, h);
    if (rgb) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0)
            tap_diag("could not remove %s", dir);
    }
    return rgb;
}

/* The stadium through the example rig at 1/scale: the cameras' pictures,
 * the ground truth, which output pixels two cameras see. */
typedef struct stadium {
    pc_rig rig;
    int w, h, scale, levels;
    pc_view_model view;
    pc_picture cams;
    uint8_t *truth, *overlap;
} stadium;

static int stadium_make(stadium *sd, const char *rig_path, int scale)
{
    char err[256] = "";
    memset(sd, 0, sizeof *sd);
    sd->scale = scale;
    /* the default 5 levels at full size and half (overlaps of ~300 and
     * ~150 px, a blend zone of +-61), one fewer per further halving, at
     * least 3 */
    sd->levels = 6;
    for (int k = scale; k > 1 && sd->levels > PC_MB_MIN_LEVELS; k /= 2)
        sd->levels--;
    sd->levels = sd->levels > PC_MB_DEFAULT_LEVELS ? PC_MB_DEFAULT_LEVELS : sd->levels;
    pc_rig *rig = &sd->rig;
    if (!TAP_CHECK(pc_rig_load(rig_path, rig, err, sizeof err) == 0, "scene: the example rig loads (%s)",
                   rig->ncam ? rig_path : err))
        return -1;
    if (scale > 1)
        pc_scene_rig_scale(rig, scale);
    int w, h;
    pc_rig_output_size(rig, &w, &h);
    rig->pano.crop[1] -= w & 1; /* the renderer's output is even */
    rig->pano.crop[3] -= h & 1;
    pc_rig_output_size(rig, &sd->w, &sd->h);
    w = sd->w, h = sd->h;
    const int cw = rig->cam[0].w, ch = rig->cam[0].h, n = rig->ncam;
    pc_scene *scene = NULL;
    if (!TAP_CHECK(pc_scene_create(&scene, "stadium", 1, err, sizeof err) == 0, "scene: stadium (%s)", err))
        return -1;
    const double t = 12.5;
    tu_pic_alloc(&sd->cams, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, cw, n * ch, 0);
    sd->truth = malloc((size_t)w * h * 3);
    sd->overlap = calloc((size_t)w * h, 1);
    pc_scene_eye *eye = malloc(sizeof *eye);
    int rc = 0;
    for (int c = 0; c < n && !rc; c++) {
        pc_scene_eye_camera(rig, c, eye);
        rc = pc_scene_render(scene, eye, t, 0, 0, 0, 0, cw, ch, sd->cams.plane[0] + (size_t)c * ch * sd->cams.pitch[0],
                             sd->cams.pitch[0], err, sizeof err);
    }
    pc_rig_panorama_view(rig, w, h, &sd->view);
    if (!rc) {
        pc_scene_eye_view(&sd->view, rig, eye);
        rc = pc_scene_render(scene, eye, t, 0, 0, 0, 0, w, h, sd->truth, 3 * (size_t)w, err, sizeof err);
    }
    free(eye);
    pc_scene_destroy(scene);
    pc_render_plan *p = NULL;
    if (!rc && !(rc = pc_render_plan_build(&p, rig, &sd->view, NULL, NULL, err, sizeof err)))
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int k = 0;
                for (int c = 0; c < n; c++)
                    k += seen_by(p, c, x, y);
                sd->overlap[(size_t)y * w + x] = k >= 2;
            }
    pc_render_plan_free(p);
    return TAP_CHECK(rc == 0, "scene: %d cameras %dx%d and the ground truth %dx%d rendered (%s)", n, cw, ch, w, h,
                     rc ? err : "ok") ? 0 : -1;
}

static void stadium_free(stadium *sd)
{
    free(sd->truth);
    free(sd->overlap);
    tu_pic_free(&sd->cams);
}

/* One stitch's figures: PSNR over all, the overlaps and elsewhere; the
 * colour step across the seams (the largest, over the overlaps and the
 * channels, of the mean error 1..4 px left of the seam minus 1..4 px right
 * of it, averaged over the rows first: 8-bit levels). */
typedef struct stitched {
    double ps[3], step;
} stitched;

#define STEP_BAND 4

/* The colour step of out (RGB24 w x h) against the truth, across the
 * seams of plan p (feather, or no plan: the overlaps' middles). */
static double seam_step(const stadium *sd, const uint8_t *out, size_t pitch, const pc_render_plan *p)
{
    const int w = sd->w, h = sd->h, n = sd->rig.ncam;
    double worst = 0;
    for (int k = 0; k + 1 < n; k++) {
        double acc[3] = {0, 0, 0};
        long rows = 0;
        for (int y = 0; y < h; y++) {
            /* overlap k: the k-th run of pixels two cameras see in this row */
            int lo = -1, hi = -1, run = -1;
            for (int x = 0; x < w; x++) {
                const int o = sd->overlap[(size_t)y * w + x], prev = x ? sd->overlap[(size_t)y * w + x - 1] : 0;
                if (o && !prev && ++run == k)
                    lo = x;
                if (run == k && o)
                    hi = x;
            }
            if (lo < 0)
                continue;
            float s = 0.5f * (float)(lo + hi);
            if (p && p->seam && p->seam_next[(size_t)k * h + y] == k + 1)
                s = p->seam[(size_t)(2 * k + 1) * h + y];
            const int xs = (int)lrintf(s);
            if (xs - STEP_BAND < 0 || xs + STEP_BAND >= w)
                continue;
            for (int c = 0; c < 3; c++) {
                double l = 0, r = 0;
                for (int d = 1; d <= STEP_BAND; d++) {
                    l += (double)out[(size_t)y * pitch + 3 * (xs - d) + c] - sd->truth[3 * ((size_t)y * w + xs - d) + c];
                    r += (double)out[(size_t)y * pitch + 3 * (xs + d) + c] - sd->truth[3 * ((size_t)y * w + xs + d) + c];
                }
                acc[c] += (l - r) / STEP_BAND;
            }
            rows++;
        }
        for (int c = 0; rows && c < 3; c++)
            worst = fmax(worst, fabs(acc[c] / rows));
    }
    return worst;
}

/* Stitches the stadium's cameras with `blend`, through rig (its
 * photometry: the example's, or one with a calibration error), with the
 * gains gain compensation solves on the overlaps if gain_comp. */
static int stitch(pc_cpu *cpu, const stadium *sd, const pc_rig *rig, pc_render_blend blend, int gain_comp,
                  stitched *res)
{
    char err[256] = "";
    pc_rig_photometry *ph = malloc(sizeof *ph);
    pc_rig r = *rig;
    pc_rig_photometry_build(&r, ph);
    pc_render_options opt;
    pc_render_options_default(&opt);
    opt.blend = blend;
    opt.maps = 1;
    opt.levels = sd->levels;
    pc_render_plan *p;
    int rc = pc_render_plan_build(&p, &r, &sd->view, ph, &opt, err, sizeof err);
    free(ph);
    if (!TAP_CHECK(rc == 0, "scene: %s plan (%s)", pc_render_blend_name(blend), rc ? err : "ok"))
        return -1;
    if (p->seam)
        pc_render_plan_place_seams(p, &sd->cams, err, sizeof err);
    if (p->mb && !gain_comp && rig == &sd->rig) {
        pc_mb_sizes z;
        pc_render_mb_sizes(p, &z);
        const double all = (double)sd->w * sd->h;
        tap_diag("multiband: %d levels; its %d strips (seams placed) span %.2f M pixels (%.1f %% of the panorama), "
                 "D sampled at %.2f M of them, the blend zone's tiles (+- %d px) %.2f M (%.1f %%)", p->mb->levels,
                 p->mb->nstrips, z.strips / 1e6, 100.0 * z.strips / all, z.sampled / 1e6, p->mb->reach, z.zone / 1e6,
                 100.0 * z.zone / all);
    }
    if (gain_comp) {
        pc_render_stats st;
        float g[PC_RENDER_MAX_CAMERAS][3];
        pc_render_measure_ref(p, &sd->cams, &st, err, sizeof err);
        pc_render_gains_solve(&st, p->ncam, g);
        pc_render_plan_set_gains(p, (const float(*)[3])g);
    }
    pc_picture out;
    rc = render_rgb(cpu, p, &sd->cams, &out);
    if (!rc) {
        zones z = zone_psnr(out.plane[0], out.pitch[0], 3, sd->truth, sd->overlap, sd->w, sd->h);
        for (int k = 0; k < 3; k++)
            res->ps[k] = psnr_of(z.se[k], z.n[k]);
        res->step = seam_step(sd, out.plane[0], out.pitch[0], p);
    }
    tu_pic_free(&out);
    pc_render_plan_free(p);
    return rc;
}

static void report(const char *name, const stitched *r)
{
    tap_diag("  %-12s PSNR %.2f dB overall, %.2f in the overlaps, %.2f elsewhere (%+.2f dB); colour step across "
             "the seams %.2f levels", name, r->ps[0], r->ps[1], r->ps[2], r->ps[1] - r->ps[2], r->step);
}

static void check_scene(pc_cpu *cpu, const char *rig_path, int scale, int enforce)
{
    static const char *const names[] = {"feather", "seam", "multiband"};
    stadium sd;
    if (stadium_make(&sd, rig_path, scale)) {
        stadium_free(&sd);
        return;
    }
    long nov = 0;
    for (size_t i = 0; i < (size_t)sd.w * sd.h; i++)
        nov += sd.overlap[i];
    tap_diag("the stadium at 1/%d: %dx%d, %.1f %% of it in overlaps, multiband with %d levels; the example rig's "
             "calibration (exact):", scale, sd.w, sd.h, 100.0 * nov / ((double)sd.w * sd.h), sd.levels);
    stitched r[3][3]; /* [calibrated, exposure error, + gain compensation][blend] */
    int ok[3][3] = {{0}};
    for (int b = 0; b < 3; b++)
        if (!stitch(cpu, &sd, &sd.rig, (pc_render_blend)b, 0, &r[0][b])) {
            ok[0][b] = 1;
            report(names[b], &r[0][b]);
        }
    if (have_tool("nona") && have_tool("enblend")) {
        char why[300];
        uint8_t *e = enblend_of(&sd.rig, &sd.cams, sd.w, sd.h, why, sizeof why);
        if (e) {
            stitched re;
            zones z = zone_psnr(e, 3 * (size_t)sd.w, 3, sd.truth, sd.overlap, sd.w, sd.h);
            for (int k = 0; k < 3; k++)
                re.ps[k] = psnr_of(z.se[k], z.n[k]);
            re.step = seam_step(&sd, e, 3 * (size_t)sd.w, NULL);
            report("nona+enblend", &re);
            free(e);
        } else {
            tap_diag("nona + enblend: %s", why);
        }
    } else {
        tap_diag("nona / enblend not installed: no comparison with Hugin's stitch");
    }
    /* a calibration error: the .pto says cameras 1 and 3 are 0.1 EV
     * brighter and darker than they are */
    pc_rig bad = sd.rig;
    bad.cam[1].eev += 0.1;
    bad.cam[3].eev -= 0.1;
    for (int g = 1; g < 3; g++) {
        tap_diag("the .pto's exposures of cameras 1 and 3 off by +-0.1 EV%s:", g == 2 ? ", gain compensation on" : "");
        for (int b = 0; b < 3; b++)
            if (!stitch(cpu, &sd, &bad, (pc_render_blend)b, g == 2, &r[g][b])) {
                ok[g][b] = 1;
                report(names[b], &r[g][b]);
            }
    }
    if (enforce) {
        for (int b = 1; b < 3; b++)
            if (ok[0][b])
                TAP_CHECK(r[0][b].ps[1] >= r[0][b].ps[2] - 1.0, "scene, blend %s: the overlaps %.2f dB, no more "
                          "than 1 dB worse than elsewhere (%.2f)", names[b], r[0][b].ps[1], r[0][b].ps[2]);
        if (ok[0][0] && ok[0][2])
            TAP_CHECK(r[0][2].ps[0] >= r[0][0].ps[0] - 0.5, "scene: multiband %.2f dB overall, at least feather's "
                      "%.2f - 0.5", r[0][2].ps[0], r[0][0].ps[0]);
        if (ok[1][1] && ok[1][2])
            TAP_CHECK(r[1][2].step < 0.6 * r[1][1].step, "scene, exposure error: multiband's colour step across the "
                      "seams %.2f levels, under 0.6 times the seam render's %.2f", r[1][2].step, r[1][1].step);
        if (ok[2][2])
            TAP_CHECK(r[2][2].step < 1.0, "scene, exposure error, gain compensation: multiband's colour step across "
                      "the seams %.2f levels (< 1)", r[2][2].step);
    }
    stadium_free(&sd);
}

int main(int argc, char **argv)
{
    char err[256] = "";
    int scale = 4;
    const char *rig_path = argc > 1 ? argv[1] : NULL;
    if (argc > 3 && !strcmp(argv[2], "--scale"))
        scale = atoi(argv[3]);
    pc_cpu *cpu = NULL;
    if (pc_cpu_open(&cpu, 3, 16, 16, err, sizeof err)) {
        printf("Bail out! pc_cpu_open: %s\n", err);
        return 1;
    }
    if (argc > 3) { /* a measurement only */
        check_scene(cpu, rig_path, scale < 1 ? 1 : scale, 0);
        pc_cpu_close(cpu);
        return tap_done();
    }
    check_errors();
    check_strips();
    check_zones();
    check_implementations(cpu);
    check_constant(cpu);
    check_exposure_step(cpu);
    check_no_ghost(cpu);
    check_deterministic(cpu);
    check_backend(&pc_backend_cpu);
    check_backend(&pc_backend_cuda);
    if (rig_path)
        check_scene(cpu, rig_path, scale, 1);
    else
        tap_skip("scene: no rig given (argv[1]: rig/examples/stadium5.pto)");
    pc_cpu_close(cpu);
    return tap_done();
}
