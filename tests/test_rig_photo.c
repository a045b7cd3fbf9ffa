/* test_rig_photo.c - the rig's photometry (rig/photometry.c, the
 * camera_model.h formula) against Hugin's renderer: nona's float layers
 * of a synthetic rig whose cameras differ in response curve (EMoR, one
 * non-monotonic, one linear), exposure, white balance and vignetting
 * (Vm5, and a Vm1 that Hugin ignores), for the panorama's output modes
 * (p R0 through image 0's curve, p R1 linear; image 0 linear) and
 * exposure E. The cameras share one geometry equal to the canvas, so every
 * output pixel is exactly its source pixel and only photometry is
 * compared. Also the EMoR curves' own properties and the identity case.
 *
 * Without nona (hugin-tools) the nona checks skip with that reason. */
#include "image.h"
#include "rig.h"
#include "tap.h"
#include "rig_tiff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { W = 64, H = 48, NCAM = 4, N = PC_RIG_RESPONSE_KNOTS };

static int have_tool(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

/* Camera c's 8-bit value of channel ch at (x, y): every level 0..255 in
 * every channel, at positions that differ by camera and channel (so the
 * vignetting sees them all). */
static int pixel_value(int c, int ch, int x, int y)
{
    static const int mul[3] = {1, 7, 13};
    return ((y * W + x) * mul[ch] + 41 * c + 5 * ch) & 255;
}

static int write_cameras(const char *dir, char *err, size_t errlen)
{
    static uint8_t rgb[W * H * 3];
    for (int c = 0; c < NCAM; c++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                for (int ch = 0; ch < 3; ch++)
                    rgb[(y * W + x) * 3 + ch] = (uint8_t)pixel_value(c, ch, x, y);
        char path[512];
        snprintf(path, sizeof path, "%s/cam%d.ppm", dir, c);
        if (pc_image_write_ppm(path, rgb, W * 3, W, H, err, errlen))
            return -1;
    }
    return 0;
}

/* Four cameras with the canvas's geometry and every photometric
 * difference Hugin models. */
static void make_rig(pc_rig *rig, const char *dir, int out_mode, double e, int cam0_linear)
{
    static const double resp[NCAM][5] = {
        {0.3, -0.2, 0.1, 0.05, -0.1}, {-0.6, 0.3, 0.2, -0.1, 0.05}, {0, 0, 0, 0, 0}, {0, 0, 0, 1.0, 0}};
    static const double eev[NCAM] = {0, 0.7, -0.4, 0.3}, er[NCAM] = {1.1, 0.95, 1, 1.05},
                        eb[NCAM] = {0.9, 1.2, 1.05, 0.8};
    static const double vig[NCAM][6] = {
        {1, -0.3, 0.1, -0.05, 3, -2}, {1.1, -0.2, 0, 0, -4, 1}, {1, -0.5, 0, 0, 0, 0}, {1, 0.2, -0.1, 0, 2, 2}};
    memset(rig, 0, sizeof *rig);
    rig->ncam = NCAM;
    rig->pano = (pc_rig_canvas){.proj = PC_PROJ_RECTILINEAR, .w = W, .h = H, .hfov = 50, .exposure = e,
                                .response = out_mode};
    for (int c = 0; c < NCAM; c++) {
        pc_rig_camera *k = &rig->cam[c];
        k->w = W, k->h = H, k->lens = PC_LENS_RECTILINEAR, k->hfov = 50;
        memcpy(k->resp, resp[c], sizeof k->resp);
        k->response = c == 2 || (c == 0 && cam0_linear); /* Rt1 */
        k->eev = eev[c], k->er = er[c], k->eb = eb[c];
        k->va = vig[c][0], k->vb = vig[c][1], k->vc = vig[c][2], k->vd = vig[c][3];
        k->vx = vig[c][4], k->vy = vig[c][5];
        k->vm = 5;
        snprintf(k->file, sizeof k->file, "%s/cam%d.ppm", dir, c);
    }
}

/* Runs nona on rig (written to dir/NAME.pto) for float layers and compares
 * each camera's layer with the model. Returns the largest difference, or
 * -1 on failure. */
static double compare_with_nona(const char *dir, const char *name, pc_rig *rig, int cam2_vm1)
{
    char pto[600], cmd[1600], err[512];
    snprintf(pto, sizeof pto, "%s/%s.pto", dir, name);
    if (!TAP_CHECK(pc_rig_save(rig, pto, err, sizeof err) == 0, "%s: save", name))
        return -1;
    if (cam2_vm1) { /* camera 2's Vb-0.5 written with Vm1: Hugin ignores it */
        snprintf(cmd, sizeof cmd, "sed -i '/cam2.ppm/s/ Vm5/ Vm1/' %s", pto);
        if (system(cmd) != 0)
            return -1;
    }
    /* the reader on what was written: what nona reads is what we model */
    pc_rig back;
    if (pc_rig_load(pto, &back, err, sizeof err)) {
        TAP_CHECK(0, "%s: read back: %s", name, err);
        return -1;
    }
    snprintf(cmd, sizeof cmd, "cd %s && nona -p FLOAT -m TIFF_m -o %s_ %s.pto >/dev/null 2>&1", dir, name, name);
    if (!TAP_CHECK(system(cmd) == 0, "%s: nona ran", name))
        return -1;
    pc_rig_photometry *ph = malloc(sizeof *ph);
    pc_rig_photometry_build(&back, ph);
    double worst = 0;
    for (int c = 0; c < back.ncam; c++) {
        char path[700];
        rig_tiff t;
        snprintf(path, sizeof path, "%s/%s_%04d.tif", dir, name, c);
        if (rig_tiff_read(path, &t, err, sizeof err)) {
            TAP_CHECK(0, "%s: nona's layer %d: %s", name, c, err);
            worst = -1;
            break;
        }
        pc_vig_model vig;
        pc_rig_vig_model(&back, c, &vig);
        int compared = 0;
        for (int y = 0; y < H && t.w == W && t.h == H && t.spp == 4; y++)
            for (int x = 0; x < W; x++) {
                const float *p = t.px + ((size_t)y * W + x) * 4;
                if (p[3] <= 0)
                    continue;
                const float k = 1.0f / pc_vig_factor(&vig, (float)x, (float)y);
                for (int ch = 0; ch < 3; ch++) {
                    const int v = pixel_value(c, ch, x, y);
                    const float model = pc_photo_correct(ph->inv_knots[c], ph->out_resp, N, v / 255.0f,
                                                         ph->gain[c][ch] * k);
                    /* the 8-bit table gives the same */
                    const float model8 = pc_lut_interp(ph->out_resp, N, ph->inv_resp[c][v] * ph->gain[c][ch] * k);
                    /* HDR layers are not clamped; panocap's pictures are */
                    const double got = p[ch] < 0 ? 0 : p[ch] > 1 ? 1 : p[ch];
                    const double e = fmax(fabs(model - got), fabs(model8 - got));
                    if (e > worst)
                        worst = e;
                }
                compared++;
            }
        if (!TAP_CHECK(compared > W * H * 9 / 10, "%s: camera %d: nona's layer %dx%dx%d covers %d pixels", name, c,
                       t.w, t.h, t.spp, compared))
            worst = -1;
        rig_tiff_free(&t);
        if (worst < 0)
            break;
    }
    free(ph);
    return worst;
}

static void check_against_nona(void)
{
    if (!have_tool("nona")) {
        tap_skip("nona (hugin-tools) is not installed: tools/install-deps installs it");
        return;
    }
    char dir[] = "/tmp/pc_test_rig_photoXXXXXX", err[512];
    if (!TAP_CHECK(mkdtemp(dir) != NULL, "temporary folder"))
        return;
    err[0] = '\0';
    if (TAP_CHECK(write_cameras(dir, err, sizeof err) == 0, "camera pictures written %s", err)) {
        static const struct {
            const char *name;
            int mode, cam0_linear;
            double e;
        } runs[] = {{"ldr", 0, 0, 0.25}, {"hdr", 1, 0, -0.5}, {"ldr_lin0", 0, 1, 0}};
        pc_rig rig;
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            make_rig(&rig, dir, runs[r].mode, runs[r].e, runs[r].cam0_linear);
            double worst = compare_with_nona(dir, runs[r].name, &rig, r == 0);
            TAP_CHECK(worst >= 0 && worst < 2e-6,
                      "p R%d E%g%s: 4 cameras (EMoR, non-monotonic EMoR, linear; Eev Er Eb; Vm5 vignetting%s): "
                      "model vs nona's float layers, max difference %.2g (< 2e-6)",
                      runs[r].mode, runs[r].e, runs[r].cam0_linear ? ", image 0 linear with Ra..Re set" : "",
                      r == 0 ? ", a Vm1 one Hugin ignores" : "", worst);
        }
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
}

/* Properties of the curves that hold without Hugin. */
static void check_curves(void)
{
    float f[N], g[N];
    const double zero[5] = {0}, mono[5] = {0.3, -0.2, 0.1, 0.05, -0.1}, bump[5] = {0, 0, 0, 0, -1};
    pc_rig_emor_curve(zero, f);
    TAP_CHECK(f[0] == 0.0f && f[N - 1] == 1.0f && memcmp(f, pc_emor_f0, sizeof f) == 0,
              "Ra..Re = 0 is the mean curve f0, 0 at 0 and 1 at 1");
    pc_rig_emor_curve(mono, f);
    double lin = 0;
    int monotonic = 1;
    for (int i = 0; i < N; i++) {
        double t = pc_emor_f0[i];
        for (int k = 0; k < 5; k++)
            t += (double)(float)mono[k] * pc_emor_h[k][i];
        lin = fmax(lin, fabs(t - f[i]));
        if (i && f[i] < f[i - 1])
            monotonic = 0;
    }
    TAP_CHECK(lin < 1e-7 && monotonic, "a monotonic curve is f0 + sum R_k h_k (%.2g)", lin);
    /* Re = -1 rises above 1 before the end: Hugin clamps to the last knot */
    pc_rig_emor_curve(bump, g);
    int ok = 1;
    for (int i = 1; i < N; i++)
        ok &= g[i] >= g[i - 1] && g[i] <= g[N - 1];
    TAP_CHECK(ok, "Re = -1 (raw curve above 1 mid-way): made monotonic, never above its last knot");

    /* identity: one response everywhere, gains 1, no vignetting */
    pc_rig rig;
    memset(&rig, 0, sizeof rig);
    rig.ncam = 2;
    rig.pano = (pc_rig_canvas){.proj = PC_PROJ_CYLINDRICAL, .w = 400, .h = 100, .hfov = 120};
    for (int c = 0; c < 2; c++) {
        rig.cam[c] = (pc_rig_camera){.w = 64, .h = 48, .hfov = 50, .er = 1, .eb = 1, .va = 1, .vm = 5};
        memcpy(rig.cam[c].resp, mono, sizeof mono);
    }
    pc_rig_photometry *ph = malloc(sizeof *ph);
    pc_rig_photometry_build(&rig, ph);
    double rt = 0;
    for (int v = 0; v < 256; v++)
        rt = fmax(rt, fabs(pc_lut_interp(ph->out_resp, N, ph->inv_resp[1][v]) - v / 255.0));
    TAP_CHECK(ph->identity && !ph->has_vig && rt < 2e-5,
              "same response, gains 1, no vignetting: identity (round trip through the tables %.2g < 2e-5)", rt);
    rig.cam[1].eev = 0.5;
    pc_rig_photometry_build(&rig, ph);
    TAP_CHECK(!ph->identity && fabs(ph->gain[1][1] - sqrt(2.0)) < 1e-6, "Eev 0.5: not identity, gain 2^0.5");
    rig.cam[1].eev = 0;
    rig.cam[1].resp[0] = 0.31;
    pc_rig_photometry_build(&rig, ph);
    TAP_CHECK(!ph->identity, "a camera with another curve: not identity");
    free(ph);
}

int main(void)
{
    check_curves();
    check_against_nona();
    return tap_done();
}
