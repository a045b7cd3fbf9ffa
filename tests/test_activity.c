/* test_activity.c - the follow mode's activity map (render/activity.h) on
 * every implementation: the C reference, the CUDA kernel
 * (cuda_activity.cuh) run by the host emulation (cuda_emu.h) and the
 * backend op (backend.h pc_backend_activity*: CPU always, CUDA where a
 * device is, else a skip saying so).
 *
 *  - The emulated kernel against the reference, frame after frame: the
 *    counts per cell and the 8.8 background model, exactly (integer
 *    math), on a moving synthetic scene (noise, drifting blobs, a global
 *    brightness step), for several parameter sets (1x1 cells, cells that
 *    do not divide the picture, one cell for all, the slowest and fastest
 *    background, thresholds 1 and 255) and picture sizes that are not
 *    multiples of the kernel's 32x8 blocks.
 *  - The backend op in the daemon's order: a small rendition rendered by
 *    the backend (a view moving across the rig, NV12), its activity map,
 *    the counts read after the slot's wait == the reference on the
 *    downloaded luma, frame after frame; the first call counts nothing.
 *  - Bad parameters and pictures: clear errors.
 */
#include "activity.h"
#include "backend.h"
#include "backend_test_util.h"
#include "cuda_emu_activity.h"
#include "debayer_test_util.h"
#include "render.h"
#include "render_synth.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frame t of a scene: fixed noise, blobs moving right, the whole picture
 * brighter from frame 4 on. */
static void scene(uint8_t *l, size_t pitch, int w, int h, int t)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned hsh = (unsigned)x * 73856093u ^ (unsigned)y * 19349663u;
            hsh ^= hsh >> 13;
            int v = 60 + (int)(hsh % 50) + (t >= 4 ? 30 : 0);
            for (int b = 0; b < 3; b++) {
                const int bx = (w / 5) * (b + 1) + 7 * t * (b + 1) - 10, by = h / 2 + (b - 1) * h / 5;
                if ((x - bx) * (x - bx) + (y - by) * (y - by) < 36 + 20 * b)
                    v = 230 - 40 * b;
            }
            l[(size_t)y * pitch + x] = (uint8_t)(v > 255 ? 255 : v);
        }
}

static void check_emulated(void)
{
    static const struct {
        int w, h;
        pc_activity_params p;
    } cases[] = {
        {1076, 162, {6, 12, 16, 16}}, /* 1/8 of the bench's panorama, the daemon's cells */
        {97, 43, {1, 1, 1, 1}},       /* every pixel a cell, the fastest background */
        {97, 43, {12, 255, 7, 5}},    /* the slowest, nothing foreground */
        {97, 43, {3, 20, 97, 43}},    /* one cell */
        {33, 9, {4, 8, 10, 3}},
    };
    char err[256] = "";
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int w = cases[k].w, h = cases[k].h;
        const pc_activity_params *p = &cases[k].p;
        const size_t pitch = (size_t)w + 13, n = (size_t)pc_activity_cells(w, h, p);
        uint8_t *l = malloc(pitch * h);
        uint16_t *bg_ref = malloc(sizeof *bg_ref * w * h), *bg_emu = malloc(sizeof *bg_emu * w * h);
        uint32_t *c_ref = malloc(sizeof *c_ref * n), *c_emu = malloc(sizeof *c_emu * n);
        int bad = 0, rc = 0;
        long total = 0;
        for (int t = 0; t < 8 && !rc; t++) {
            scene(l, pitch, w, h, t);
            memset(c_emu, 0xA5, sizeof *c_emu * n); /* the emulation clears them, as the device's memset */
            pc_activity_ref(l, pitch, w, h, bg_ref, t == 0, p, c_ref);
            rc = pc_emu_activity(l, pitch, w, h, bg_emu, t == 0, p, c_emu, err, sizeof err);
            if (rc) {
                tap_diag("%dx%d: %s", w, h, err);
                break;
            }
            if (memcmp(c_ref, c_emu, sizeof *c_ref * n) || memcmp(bg_ref, bg_emu, sizeof *bg_ref * w * h)) {
                if (!bad)
                    tap_diag("%dx%d frame %d: counts %s, background %s", w, h, t,
                             memcmp(c_ref, c_emu, sizeof *c_ref * n) ? "differ" : "same",
                             memcmp(bg_ref, bg_emu, sizeof *bg_ref * w * h) ? "differs" : "same");
                bad++;
            }
            for (size_t i = 0; i < n; i++)
                total += c_ref[i];
        }
        TAP_CHECK(rc == 0 && bad == 0, "emulated kernel == reference, %dx%d, shift %d, threshold %d, cells %dx%d: "
                  "counts and background, 8 frames (%ld foreground pixels counted)", w, h, p->shift, p->threshold,
                  p->cw, p->ch, total);
        free(l);
        free(bg_ref);
        free(bg_emu);
        free(c_ref);
        free(c_emu);
    }
}

/* --- the backend op, in the daemon's order -------------------------------- */

enum { NCAM = 3, CW = 160, CH = 96, AW = 120, AH = 40 };

static void check_backend(const pc_backend_ops *ops)
{
    char err[256] = "";
    if (!tu_backend_usable(ops))
        return;
    pc_rig rig;
    pc_synth_rig(&rig, NCAM, CW, CH, 40.0, 34.0, PC_PROJ_CYLINDRICAL, 480, 120);
    pc_view_model v;
    pc_rig_rect_view(AW, AH, 30.0, -30.0, 0.0, 0.0, &v);
    pc_render_plan *plan = NULL;
    pc_backend *b = NULL;
    pc_backend_config cfg = {.width = CW, .height = NCAM * CH, .slots = 2, .device = 0, .threads = 2};
    int ok = pc_render_plan_build(&plan, &rig, &v, NULL, NULL, err, sizeof err) == 0 &&
             pc_backend_open(&b, ops, &cfg, err, sizeof err) == 0;
    if (!TAP_CHECK(ok, "backend %s: plan and open (%s)", ops->name, ok ? "ok" : err)) {
        pc_render_plan_free(plan);
        return;
    }
    pc_picture rgb, dem, small, host;
    uint8_t *raw = malloc((size_t)CW * NCAM * CH);
    tu_pic_alloc(&rgb, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 0);
    pc_synth_cameras(&rig, 1.0, NULL, &rgb);
    pc_mosaic_from_rgb(rgb.plane[0], rgb.pitch[0], CW, NCAM * CH, PC_CFA_RGGB, raw, CW, err, sizeof err);
    tu_pic_alloc(&host, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, AW, AH, 0);
    const pc_activity_params ap = {5, 10, 8, 8};
    const int n = pc_activity_cells(AW, AH, &ap);
    uint32_t *counts = pc_backend_host_alloc(ops, sizeof *counts * n), *ref = malloc(sizeof *ref * n);
    uint16_t *bg = malloc(sizeof *bg * AW * AH);
    pc_debayer_config dc = {PC_ALGO_BILINEAR, PC_VARIANT_AUTO, PC_CFA_RGGB, PC_FMT_RGB24, PC_MATRIX_BT709,
                            PC_RANGE_LIMITED};
    pc_render_dev *rd = NULL;
    pc_activity_dev *act = NULL;
    ok = counts && pc_backend_set_algo(b, &dc, err, sizeof err) == 0 &&
         pc_backend_picture_alloc(b, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, &dem, err,
                                  sizeof err) == 0 &&
         pc_backend_render_picture_alloc(b, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, AW, AH, &small, err,
                                         sizeof err) == 0 &&
         pc_backend_render_prepare(b, plan, &rd, err, sizeof err) == 0 &&
         pc_backend_activity_open(b, AW, AH, &act, err, sizeof err) == 0 &&
         pc_backend_upload(b, 0, 0, raw, CW, NCAM * CH, err, sizeof err) == 0 &&
         pc_backend_debayer(b, 0, &dem, err, sizeof err) == 0 && pc_backend_wait(b, 0, err, sizeof err) == 0;
    TAP_CHECK(ok, "backend %s: demosaic, rendition, background model (%s)", ops->name, ok ? "ok" : err);
    int bad = 0, frames = 0, first_zero = 0;
    long total = 0;
    for (int t = 0; ok && t < 10; t++) {
        /* the view pans 2 degrees a frame: the scene moves under it */
        pc_rig_rect_view(AW, AH, 30.0, -30.0 + 2.0 * t, 0.0, 0.0, &v);
        const int slot = t & 1;
        memset(counts, 0xA5, sizeof *counts * n);
        int rc = pc_render_plan_set_view(plan, &v, err, sizeof err);
        if (!rc)
            rc = pc_backend_render_update(b, rd, plan, err, sizeof err);
        if (!rc)
            rc = pc_backend_render(b, slot, rd, &dem, &small, err, sizeof err);
        if (!rc)
            rc = pc_backend_activity(b, slot, &small, act, &ap, counts, err, sizeof err);
        if (!rc)
            rc = pc_backend_download(b, slot, &small, &host, err, sizeof err);
        if (!rc)
            rc = pc_backend_wait(b, slot, err, sizeof err);
        if (rc) {
            tap_diag("backend %s frame %d: %s", ops->name, t, err);
            bad++;
            break;
        }
        pc_activity_ref(host.plane[0], host.pitch[0], AW, AH, bg, t == 0, &ap, ref);
        if (memcmp(counts, ref, sizeof *ref * n)) {
            tap_diag("backend %s frame %d: the counts differ from the reference's", ops->name, t);
            bad++;
        }
        if (t == 0) {
            first_zero = 1;
            for (int i = 0; i < n; i++)
                first_zero &= counts[i] == 0;
        }
        for (int i = 0; i < n; i++)
            total += ref[i];
        frames++;
    }
    TAP_CHECK(ok && bad == 0 && frames == 10 && first_zero && total > 100,
              "backend %s: render + activity per set, the counts after the wait == the reference on the rendition "
              "(%d frames, %ld foreground pixels; the first call counts nothing: %s)", ops->name, frames, total,
              first_zero ? "yes" : "no");
    if (ok) {
        pc_activity_params badp = ap;
        badp.shift = 0;
        int rc = pc_backend_activity(b, 0, &small, act, &badp, counts, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "shift"), "backend %s: shift 0 is refused: %s", ops->name, err);
        badp = ap;
        badp.cw = AW + 1;
        rc = pc_backend_activity(b, 0, &small, act, &badp, counts, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "cell size"), "backend %s: cells wider than the picture are "
                  "refused: %s", ops->name, err);
        rc = pc_backend_activity(b, 0, &dem, act, &ap, counts, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "nv12"), "backend %s: an RGB picture is refused: %s", ops->name,
                  err);
        pc_activity_dev *other = NULL;
        rc = pc_backend_activity_open(b, AW / 2, AH, &other, err, sizeof err);
        if (!rc)
            rc = pc_backend_activity(b, 0, &small, other, &ap, counts, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "120x40") && strstr(err, "60x40"), "backend %s: a picture of "
                  "another size than the background model's is refused: %s", ops->name, err);
        pc_backend_wait(b, 0, err, sizeof err);
        pc_backend_activity_close(b, other);
    }
    pc_backend_activity_close(b, act);
    pc_backend_render_free(b, rd);
    if (ok) {
        pc_backend_picture_free(b, &dem);
        pc_backend_picture_free(b, &small);
    }
    pc_backend_close(b);
    pc_backend_host_free(ops, counts);
    free(ref);
    free(bg);
    free(raw);
    tu_pic_free(&rgb);
    tu_pic_free(&host);
    pc_render_plan_free(plan);
}

int main(void)
{
    check_emulated();
    check_backend(&pc_backend_cpu);
    check_backend(&pc_backend_cuda);
    return tap_done();
}
