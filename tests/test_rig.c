/* test_rig.c - the rig module: the camera model (rig/camera_model.h)
 * against Hugin's own transform (pano_trafo, hugin-tools) on random rigs
 * with every geometric parameter in play, and the .pto reader.
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

/* pano_trafo -r: canvas -> image 0 coordinates for n points. */
static int hugin_inverse(const char *pto, const double *px, const double *py, int n, double *sx, double *sy)
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
    snprintf(cmd, sizeof cmd, "pano_trafo -r %s 0 < %s", pto, in);
    FILE *pp = popen(cmd, "r");
    int got = 0;
    while (pp && got < n && fscanf(pp, "%lf %lf", &sx[got], &sy[got]) == 2)
        got++;
    if (pp)
        pclose(pp);
    unlink(in);
    return got == n ? 0 : -1;
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
            char err[512], pto[300];
            random_rig(&seed, &rig, fisheye);
            snprintf(pto, sizeof pto, "%s/%s%d.pto", dir, fisheye ? "fish" : "rect", trial);
            if (!TAP_CHECK(pc_rig_save(&rig, pto, err, sizeof err) == 0, "save %s", pto))
                continue;
            enum { N = 64 };
            double px[N], py[N], hx[N], hy[N];
            for (int k = 0; k < N; k++) {
                px[k] = urand(&seed, 0, rig.pano.w - 1);
                py[k] = urand(&seed, 0, rig.pano.h - 1);
            }
            if (!TAP_CHECK(hugin_inverse(pto, px, py, N, hx, hy) == 0, "pano_trafo ran on %s", pto))
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
                        tap_diag("%s: (%g,%g) -> panocap (%g,%g), pano_trafo (%g,%g)", pto, px[k], py[k], sx, sy, hx[k], hy[k]);
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

int main(void)
{
    check_geometry_vs_hugin();
    return tap_done();
}
