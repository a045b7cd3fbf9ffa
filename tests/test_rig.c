/* test_rig.c - the rig module's geometry: the camera model (rig/
 * camera_model.h) against Hugin's own transform (pano_trafo, hugin-tools)
 * on random rigs with every geometric parameter in play; the output crop
 * (p line S), the panorama rendered smaller than its output size (against
 * Hugin's own rescaled project), the virtual cameras (pc_rig_rect_view
 * against a rectilinear project turned with pano_modify --rotate), and the
 * inverses (pc_cam_unproject, pc_view_project) round trip and against
 * pano_trafo's forward transform.
 *
 * Hugin's tools are the outside reference; without them (hugin-tools not
 * installed) the Hugin checks skip with that reason. */
#include "rig.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A small deterministic generator (tests keep no global state). */
static double urand(unsigned long long *s, double lo, double hi)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

static int have_tool(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

/* Random rig of one camera in a random output projection; features
 * switched on by the mask. */
static void random_rig(unsigned long long *s, pc_rig *rig, int fisheye)
{
    memset(rig, 0, sizeof *rig);
    rig->ncam = 1;
    pc_rig_canvas *p = &rig->pano;
    p->proj = (int)urand(s, 0, 3);
    p->w = 400;
    p->h = 200;
    p->hfov = p->proj == PC_PROJ_RECTILINEAR ? urand(s, 60, 120) : urand(s, 60, 180);
    pc_rig_camera *c = &rig->cam[0];
    c->w = 200;
    c->h = 150;
    c->lens = fisheye ? PC_LENS_FISHEYE_FULL : PC_LENS_RECTILINEAR;
    c->hfov = fisheye ? urand(s, 90, 150) : urand(s, 30, 70);
    c->yaw = urand(s, -20, 20);
    c->pitch = urand(s, -15, 15);
    c->roll = urand(s, -10, 10);
    c->a = urand(s, -0.02, 0.02);
    c->b = urand(s, -0.05, 0.05);
    c->c = urand(s, -0.05, 0.05);
    c->d = urand(s, -10, 10);
    c->e = urand(s, -10, 10);
    c->g = urand(s, -0.05, 0.05);
    c->t = urand(s, -0.05, 0.05);
    c->er = c->eb = 1;
    c->va = 1;
    c->vm = 5;
    snprintf(c->file, sizeof c->file, "cam0.png");
}

/* pano_trafo on n points: canvas -> image `image` coordinates (reverse),
 * or image -> canvas. 0, or -1 if it did not answer for every point. */
static int pano_trafo(const char *pto, int image, int reverse, const double *px, const double *py, int n,
                      double *ox, double *oy)
{
    char in[] = "/tmp/pc_test_rig_inXXXXXX";
    int fd = mkstemp(in);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    for (int k = 0; k < n; k++)
        fprintf(f, "%.9f %.9f\n", px[k], py[k]);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "pano_trafo %s %s %d < %s", reverse ? "-r" : "", pto, image, in);
    FILE *pp = popen(cmd, "r");
    int got = 0;
    while (pp && got < n && fscanf(pp, "%lf %lf", &ox[got], &oy[got]) == 2)
        got++;
    if (pp)
        pclose(pp);
    unlink(in);
    return got == n ? 0 : -1;
}

/* Saves rig as DIR/NAME.pto, draws n random points in [0, w-1] x [0, h-1]
 * into (px, py) and has pano_trafo map them for image 0 (canvas -> image
 * when reverse) into (ox, oy). 0, or -1 after a failed check. */
static int save_and_trafo(const pc_rig *rig, const char *dir, const char *name, int reverse, int w, int h,
                          unsigned long long *seed, int n, double *px, double *py, double *ox, double *oy)
{
    char err[512] = "", pto[300];
    snprintf(pto, sizeof pto, "%s/%s.pto", dir, name);
    if (!TAP_CHECK(pc_rig_save(rig, pto, err, sizeof err) == 0, "save %s", pto))
        return -1;
    for (int k = 0; k < n; k++) {
        px[k] = urand(seed, 0, w - 1);
        py[k] = urand(seed, 0, h - 1);
    }
    if (!TAP_CHECK(pano_trafo(pto, 0, reverse, px, py, n, ox, oy) == 0, "pano_trafo%s ran on %s",
                   reverse ? " -r" : "", pto))
        return -1;
    return 0;
}

static int run_quiet(const char *cmd)
{
    char full[2048];
    snprintf(full, sizeof full, "%s >/dev/null 2>&1", cmd);
    return system(full) == 0;
}

static void check_geometry_vs_hugin(void)
{
    if (!have_tool("pano_trafo")) {
        tap_skip("pano_trafo (hugin-tools) is not installed: tools/install-deps installs it");
        return;
    }
    char dir[] = "/tmp/pc_test_rigXXXXXX";
    if (!mkdtemp(dir)) {
        TAP_CHECK(0, "temporary folder");
        return;
    }
    unsigned long long seed = 12345;
    for (int fisheye = 0; fisheye < 2; fisheye++) {
        double worst = 0;
        int compared = 0;
        for (int trial = 0; trial < 20; trial++) {
            pc_rig rig;
            char name[32];
            random_rig(&seed, &rig, fisheye);
            snprintf(name, sizeof name, "%s%d", fisheye ? "fish" : "rect", trial);
            enum { N = 64 };
            double px[N], py[N], hx[N], hy[N];
            if (save_and_trafo(&rig, dir, name, 1, rig.pano.w, rig.pano.h, &seed, N, px, py, hx, hy))
                continue;
            pc_cam_model cm;
            pc_view_model vm;
            pc_rig_camera_model(&rig, 0, &cm);
            pc_rig_panorama_view(&rig, rig.pano.w, rig.pano.h, &vm);
            for (int k = 0; k < N; k++) {
                float ray[3], sx, sy;
                pc_view_ray(&vm, (float)px[k], (float)py[k], ray);
                if (!pc_cam_project(&cm, ray, &sx, &sy))
                    continue; /* outside the image: Hugin's numbers there are extrapolations */
                double e = hypot(sx - hx[k], sy - hy[k]);
                if (e > worst) {
                    worst = e;
                    if (e > 0.01)
                        tap_diag("%s: (%g,%g) -> panocap (%g,%g), pano_trafo (%g,%g)", name, px[k], py[k], sx, sy, hx[k], hy[k]);
                }
                compared++;
            }
        }
        TAP_CHECK(compared > 100 && worst < 0.01,
                  "%s lens, 20 random rigs (yaw pitch roll a b c d e g t, 3 projections): %d points, "
                  "worst distance from pano_trafo %.2g px (< 0.01)",
                  fisheye ? "fisheye" : "rectilinear", compared, worst);
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
}

/* pc_cam_unproject then pc_cam_project over each camera's image: back to
 * the same pixel. Random rigs with every parameter, and lenses whose
 * polynomial folds inside the image (the corners past the fold have no
 * direction: unproject says so). */
static void check_unproject_round_trip(void)
{
    unsigned long long seed = 777;
    for (int fisheye = 0; fisheye < 2; fisheye++) {
        double worst = 0;
        int n = 0, undefined = 0;
        for (int trial = 0; trial < 40; trial++) {
            pc_rig rig;
            random_rig(&seed, &rig, fisheye);
            if (trial >= 30) { /* strong barrel distortion: folds at r = 1.2 (corners at 1.67) */
                rig.cam[0].a = rig.cam[0].b = 0;
                rig.cam[0].c = -0.3;
            }
            pc_cam_model cm;
            pc_rig_camera_model(&rig, 0, &cm);
            for (int j = 0; j <= 30; j++)
                for (int i = 0; i <= 40; i++) {
                    const float x = (float)(cm.w - 1) * i / 40, y = (float)(cm.h - 1) * j / 30;
                    float ray[3], sx, sy;
                    if (!pc_cam_unproject(&cm, x, y, ray)) {
                        undefined++;
                        continue;
                    }
                    pc_cam_project(&cm, ray, &sx, &sy);
                    const double e = hypot(sx - x, sy - y);
                    if (e > worst)
                        worst = e;
                    n++;
                }
        }
        TAP_CHECK(n > 40 * 1200 && worst < 1e-3,
                  "%s lens, 40 random rigs (10 folding inside the image), 41x31 pixels each: unproject then "
                  "project: worst %.2g px (< 1e-3) over %d pixels; %d corner pixels past the fold have no direction",
                  fisheye ? "fisheye" : "rectilinear", worst, n, undefined);
    }
}

/* Camera pixel -> panorama pixel (pc_cam_unproject, pc_view_project)
 * against pano_trafo's forward transform. */
static void check_unproject_vs_hugin(const char *dir)
{
    unsigned long long seed = 4242;
    double worst = 0;
    int compared = 0;
    for (int trial = 0; trial < 24; trial++) {
        pc_rig rig;
        char name[32];
        random_rig(&seed, &rig, trial % 2);
        snprintf(name, sizeof name, "fwd%d", trial);
        enum { N = 48 };
        double sx[N], sy[N], hx[N], hy[N];
        if (save_and_trafo(&rig, dir, name, 0, rig.cam[0].w, rig.cam[0].h, &seed, N, sx, sy, hx, hy))
            continue;
        pc_cam_model cm;
        pc_view_model vm;
        pc_rig_camera_model(&rig, 0, &cm);
        pc_rig_panorama_view(&rig, rig.pano.w, rig.pano.h, &vm);
        for (int k = 0; k < N; k++) {
            float ray[3], x, y;
            if (!pc_cam_unproject(&cm, (float)sx[k], (float)sy[k], ray) || !pc_view_project(&vm, ray, &x, &y))
                continue;
            /* where the projection wraps (cylinder and sphere seams) or goes
             * past the canvas, Hugin's numbers are of another branch */
            if (x < 0 || x > rig.pano.w - 1 || y < 0 || y > rig.pano.h - 1)
                continue;
            const double e = hypot(x - hx[k], y - hy[k]);
            if (e > worst) {
                worst = e;
                if (e > 0.01)
                    tap_diag("%s: (%g,%g) -> panocap (%g,%g), pano_trafo (%g,%g)", name, sx[k], sy[k], x, y, hx[k],
                             hy[k]);
            }
            compared++;
        }
    }
    TAP_CHECK(compared > 500 && worst < 0.01,
              "camera pixel -> panorama pixel (unproject, view project), 24 random rigs, both lenses, 3 "
              "projections: %d points, worst distance from pano_trafo %.2g px (< 0.01)", compared, worst);
}

/* Worst distance, in camera pixels, between where view v (rendering rig's
 * panorama or a virtual camera) samples camera i at n random output
 * pixels and where pano_trafo -r says `pto` samples it at the output
 * pixel + (ox, oy). -1 on failure. */
static double view_vs_hugin(const pc_rig *rig, int i, const pc_view_model *v, const char *pto, int ox, int oy,
                            unsigned long long *seed, int *compared)
{
    enum { N = 160 };
    double px[N], py[N], cx[N], cy[N], hx[N], hy[N];
    for (int k = 0; k < N; k++) {
        px[k] = urand(seed, 0, v->w - 1);
        py[k] = urand(seed, 0, v->h - 1);
        cx[k] = px[k] + ox;
        cy[k] = py[k] + oy;
    }
    if (pano_trafo(pto, i, 1, cx, cy, N, hx, hy))
        return -1;
    pc_cam_model cm;
    pc_rig_camera_model(rig, i, &cm);
    double worst = 0;
    for (int k = 0; k < N; k++) {
        float ray[3], sx, sy;
        pc_view_ray(v, (float)px[k], (float)py[k], ray);
        if (!pc_cam_project(&cm, ray, &sx, &sy))
            continue;
        worst = fmax(worst, hypot(sx - hx[k], sy - hy[k]));
        (*compared)++;
    }
    return worst;
}

/* A rig of two cameras with every lens parameter. */
static void two_camera_rig(unsigned long long *seed, pc_rig *rig, int proj)
{
    random_rig(seed, rig, 0);
    rig->ncam = 2;
    rig->cam[1] = rig->cam[0];
    rig->cam[1].yaw += 35;
    rig->cam[1].pitch = urand(seed, -10, 10);
    snprintf(rig->cam[1].file, sizeof rig->cam[1].file, "cam1.png");
    rig->pano.proj = proj;
    rig->pano.hfov = proj == PC_PROJ_RECTILINEAR ? 110 : 150;
}

/* The output crop (p line S) and the panorama rendered smaller than its
 * output size (pc_rig_panorama_view at w * s, h * s) against Hugin's own
 * rescaled project (pano_modify --canvas=WxH scales the canvas and the
 * crop): the same field of view in fewer pixels. */
static void check_crop_and_scale(const char *dir)
{
    static const double scales[] = {1.0, 0.5, 0.3};
    unsigned long long seed = 99;
    for (int proj = 0; proj < 3; proj++) {
        pc_rig rig;
        two_camera_rig(&seed, &rig, proj);
        rig.pano.w = 800, rig.pano.h = 400;
        rig.pano.crop[0] = 40, rig.pano.crop[1] = 760, rig.pano.crop[2] = 20, rig.pano.crop[3] = 380;
        char pto[300], err[512];
        snprintf(pto, sizeof pto, "%s/crop%d.pto", dir, proj);
        if (!TAP_CHECK(pc_rig_save(&rig, pto, err, sizeof err) == 0, "save %s", pto))
            continue;
        int ow, oh;
        pc_rig_output_size(&rig, &ow, &oh);
        for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
            const double s = scales[k];
            char scaled[400], cmd[1200];
            snprintf(scaled, sizeof scaled, "%s/crop%d_%d.pto", dir, proj, (int)(s * 100));
            snprintf(cmd, sizeof cmd, "pano_modify --canvas=%dx%d -o %s %s", (int)(800 * s + 0.5),
                     (int)(400 * s + 0.5), scaled, pto);
            pc_rig hugin;
            if (!TAP_CHECK(run_quiet(cmd) && pc_rig_load(scaled, &hugin, err, sizeof err) == 0,
                           "pano_modify --canvas=%dx%d", (int)(800 * s + 0.5), (int)(400 * s + 0.5)))
                continue;
            pc_view_model v;
            pc_rig_panorama_view(&rig, (int)(ow * s + 0.5), (int)(oh * s + 0.5), &v);
            double worst = 0;
            int compared = 0;
            for (int i = 0; i < 2; i++)
                worst = fmax(worst, view_vs_hugin(&rig, i, &v, scaled, hugin.pano.crop[0], hugin.pano.crop[2],
                                                  &seed, &compared));
            int hw, hh;
            pc_rig_output_size(&hugin, &hw, &hh);
            TAP_CHECK(worst >= 0 && worst < 0.01 && compared > 60 && hw == v.w && hh == v.h,
                      "projection %d, crop S40,760,20,380 of 800x400, rendered at %dx%d (x%g): sampling as Hugin's "
                      "%dx%d S%d,%d,%d,%d project, %d points, worst %.2g px (< 0.01)",
                      proj, v.w, v.h, s, hugin.pano.w, hugin.pano.h, hugin.pano.crop[0], hugin.pano.crop[1],
                      hugin.pano.crop[2], hugin.pano.crop[3], compared, worst);
        }
    }
}

/* A virtual camera (pc_rig_rect_view: pan, tilt, roll) against Hugin's
 * recipe for one: a rectilinear p line, the rig turned with pano_modify
 * --rotate=-pan,0,0 then --rotate=0,-tilt,0 (then --rotate=0,0,-roll). */
static void check_rect_view(const char *dir)
{
    static const double views[][4] = {
        {30, 10, 0, 70}, {-10, -15, 0, 50}, {15, 20, 0, 90}, {40, -5, 8, 60}, {5, 12, -12, 80}};
    unsigned long long seed = 31337;
    pc_rig rig;
    two_camera_rig(&seed, &rig, PC_PROJ_RECTILINEAR);
    rig.cam[0].yaw = 0, rig.cam[1].yaw = 35;
    for (size_t k = 0; k < sizeof views / sizeof views[0]; k++) {
        const double pan = views[k][0], tilt = views[k][1], roll = views[k][2], hfov = views[k][3];
        rig.pano.w = 200, rig.pano.h = 150, rig.pano.hfov = hfov;
        char pto[300], a[300], b[300], c[300], cmd[1400], err[512];
        snprintf(pto, sizeof pto, "%s/view%zu.pto", dir, k);
        snprintf(a, sizeof a, "%s/view%zu_a.pto", dir, k);
        snprintf(b, sizeof b, "%s/view%zu_b.pto", dir, k);
        snprintf(c, sizeof c, "%s/view%zu_c.pto", dir, k);
        int ok = pc_rig_save(&rig, pto, err, sizeof err) == 0;
        snprintf(cmd, sizeof cmd, "pano_modify --rotate=%g,0,0 -o %s %s", -pan, a, pto);
        ok = ok && run_quiet(cmd);
        snprintf(cmd, sizeof cmd, "pano_modify --rotate=0,%g,0 -o %s %s", -tilt, b, a);
        ok = ok && run_quiet(cmd);
        snprintf(cmd, sizeof cmd, "pano_modify --rotate=0,0,%g -o %s %s", -roll, c, b);
        ok = ok && run_quiet(cmd);
        if (!TAP_CHECK(ok, "pano_modify --rotate on %s", pto))
            continue;
        pc_view_model v;
        pc_rig_rect_view(200, 150, hfov, pan, tilt, roll, &v);
        double worst = 0;
        int compared = 0;
        for (int i = 0; i < 2; i++)
            worst = fmax(worst, view_vs_hugin(&rig, i, &v, c, 0, 0, &seed, &compared));
        TAP_CHECK(worst >= 0 && worst < 0.01 && compared > 30,
                  "virtual camera pan %g tilt %g roll %g hfov %g: sampling as Hugin's turned rectilinear project, "
                  "%d points, worst %.2g px (< 0.01)", pan, tilt, roll, hfov, compared, worst);
    }
}

static void check_views_vs_hugin(void)
{
    if (!have_tool("pano_trafo") || !have_tool("pano_modify")) {
        tap_skip("pano_trafo/pano_modify (hugin-tools) are not installed: tools/install-deps installs them");
        return;
    }
    char dir[] = "/tmp/pc_test_rig_viewXXXXXX";
    if (!TAP_CHECK(mkdtemp(dir) != NULL, "temporary folder"))
        return;
    check_unproject_vs_hugin(dir);
    check_crop_and_scale(dir);
    check_rect_view(dir);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
}

int main(void)
{
    check_geometry_vs_hugin();
    check_unproject_round_trip();
    check_views_vs_hugin();
    return tap_done();
}
