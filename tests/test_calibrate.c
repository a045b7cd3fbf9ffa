/* test_calibrate.c - panocap-calibrate on a synthetic rig whose truth is
 * known. A procedural scene (an equirectangular picture of 150,000 random
 * shapes) is rendered by Hugin's own nona into five rectilinear cameras of
 * 640x360, 50 degrees wide, about 42 degrees apart (15 % overlaps), each
 * turned by its own yaw, pitch and roll and with its own exposure and
 * white balance (nona's photometric model, the one the .pto describes).
 * The calibration must find each camera's yaw/pitch/roll relative to the
 * middle camera within 0.3 degrees (-l levels the whole rig, so only
 * relative angles are defined), report control points for every overlap,
 * and recover exposure and white balance (bounds below); from image files
 * (both --optimise modes), from a .pcraw recording of Bayer mosaics of the
 * renders, and from a running panocap whose fake cameras show the renders
 * (snapshot-cameras on its control socket). With camera 2 replaced by an
 * unrelated photograph it must refuse (exit 2) naming overlaps 1-2 and
 * 2-3; without hugin-tools in PATH it says how to install it (exit 69);
 * a failing step is named with its log; bad input names the camera or
 * file (exit 1).
 * argv: panocap-calibrate, panocap, capture/sample.png. */
#include "capture.h"
#include "debayer.h"
#include "image.h"
#include "rig.h"
#include "run_testutil.h"
#include "tap.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NCAM 5
#define CW 640
#define CH 360
#define HFOV 50.0
#define SW 6144 /* the scene: 360 x 90 degrees, equirectangular */
#define SH 1536
#define ANGLE_BOUND 0.3  /* degrees, relative yaw/pitch/roll */
#define EEV_BOUND 0.05   /* EV */
#define WB_BOUND 0.02    /* Er, Eb */

static const double truth[NCAM][3] = {/* yaw, pitch, roll (degrees) */
                                      {-84.3, 1.2, 0.6},
                                      {-41.9, -0.8, -1.1},
                                      {0.4, 0.5, 0.3},
                                      {42.6, -1.5, 1.4},
                                      {83.8, 0.9, -0.7}};
static const double truth_eev[NCAM] = {0, 0.3, -0.2, 0.5, 0.1};
static const double truth_er[NCAM] = {1, 1.05, 0.95, 1.1, 1};
static const double truth_eb[NCAM] = {1, 0.95, 1.05, 0.9, 1};

static const double DEG = 3.14159265358979323846 / 180.0;

/* world <- camera, panotools' yaw * pitch * roll (rig/rig_model.c) */
static void rotation(const double ypr[3], double m[9])
{
    const double y = ypr[0] * DEG, p = ypr[1] * DEG, r = ypr[2] * DEG;
    const double Y[9] = {cos(y), 0, sin(y), 0, 1, 0, -sin(y), 0, cos(y)};
    const double P[9] = {1, 0, 0, 0, cos(p), sin(p), 0, -sin(p), cos(p)};
    const double R[9] = {cos(r), sin(r), 0, -sin(r), cos(r), 0, 0, 0, 1};
    double yp[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            yp[3 * i + j] = Y[3 * i] * P[j] + Y[3 * i + 1] * P[3 + j] + Y[3 * i + 2] * P[6 + j];
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m[3 * i + j] = yp[3 * i] * R[j] + yp[3 * i + 1] * R[3 + j] + yp[3 * i + 2] * R[6 + j];
}

/* yaw, pitch, roll of a rotation m = yaw * pitch * roll */
static void angles(const double m[9], double ypr[3])
{
    ypr[0] = atan2(m[2], m[8]) / DEG;
    ypr[1] = asin(fmax(-1, fmin(1, m[5]))) / DEG;
    ypr[2] = atan2(-m[3], m[4]) / DEG;
}

/* yaw/pitch/roll of camera i relative to camera ref: ref^T * i */
static void relative(const double a[3], const double ref[3], double out[3])
{
    double ma[9], mr[9], m[9];
    rotation(a, ma);
    rotation(ref, mr);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m[3 * i + j] = mr[i] * ma[j] + mr[3 + i] * ma[3 + j] + mr[6 + i] * ma[6 + j];
    angles(m, out);
}

/* --------------------------------------------------------- the scene */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double rnd(void) /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* Random discs, bars and triangles of every colour, 2 to 24 pixels in
 * radius (many small, few large: a Pareto law), on grey: texture at every
 * scale for cpfind, no large flat areas that match anywhere. */
static int make_scene(const char *path)
{
    uint8_t *px = malloc((size_t)SW * SH * 3);
    if (!px)
        return -1;
    memset(px, 128, (size_t)SW * SH * 3);
    for (int k = 0; k < 150000; k++) {
        int cx = (int)(rnd() * SW), cy = (int)(rnd() * SH);
        int s = (int)(2 + 5 * (pow(1 - rnd(), -0.5) - 1));
        s = s > 24 ? 24 : s;
        uint8_t c[3] = {(uint8_t)(rnd() * 256), (uint8_t)(rnd() * 256), (uint8_t)(rnd() * 256)};
        int type = (int)(rnd() * 3);
        for (int y = cy - s; y <= cy + s; y++) {
            if (y < 0 || y >= SH)
                continue;
            for (int x = cx - s; x <= cx + s; x++) {
                int dx = x - cx, dy = y - cy, in;
                if (type == 0)
                    in = dx * dx + dy * dy <= s * s;
                else if (type == 1)
                    in = 2 * abs(dy) <= s;
                else /* apex up: |dx| <= (dy + s) / 2 */
                    in = 2 * abs(dx) <= dy + s;
                if (in)
                    memcpy(px + ((size_t)y * SW + (size_t)((x + SW) % SW)) * 3, c, 3);
            }
        }
    }
    char err[256] = "";
    int rc = pc_image_write_ppm(path, px, (size_t)SW * 3, SW, SH, err, sizeof err);
    free(px);
    return rc;
}

/* Runs argv[0] from PATH in dir; its output into dir/log. Exit status. */
static int spawn(const char *dir, char *const argv[])
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(dir) != 0 || !freopen("render.log", "a", stdout) || !freopen("render.log", "a", stderr))
            _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Camera i's view of the scene, rendered by nona: the panorama is the
 * camera (rectilinear, its field of view, its exposure E); the scene is
 * the one input image, turned by the camera's inverse rotation, with
 * white balance 1/Er, 1/Eb (a camera pixel = response(L 2^-Eev (Er,1,Eb))). */
static int render_camera(const char *dir, int i)
{
    double m[9], inv[9], ypr[3];
    rotation(truth[i], m);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            inv[3 * r + c] = m[3 * c + r];
    angles(inv, ypr);
    char pto[PATH_MAX], name[32];
    snprintf(pto, sizeof pto, "%s/render%d.pto", dir, i);
    FILE *f = fopen(pto, "w");
    if (!f)
        return -1;
    fprintf(f, "p f0 w%d h%d v%g E%g R0 n\"TIFF_m c:NONE\"\nm i2\n", CW, CH, HFOV, truth_eev[i]);
    fprintf(f, "i w%d h%d f4 v360 y%.9f p%.9f r%.9f Eev0 Er%.9f Eb%.9f n\"scene.ppm\"\n", SW, SH, ypr[0], ypr[1],
            ypr[2], 1 / truth_er[i], 1 / truth_eb[i]);
    fclose(f);
    snprintf(name, sizeof name, "cam%d", i);
    char rel[32];
    snprintf(rel, sizeof rel, "render%d.pto", i);
    char *argv[] = {"nona", "-m", "PNG", "-o", name, rel, NULL};
    return spawn(dir, argv);
}

/* ------------------------------------------------------------ checks */

static rt_result res;

/* Runs panocap-calibrate with args (NULL-terminated). */
static int calibrate(const char *exe, const char *const args[])
{
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)exe;
    for (int i = 0; args[i] && n < 39; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    return rt_run(&res, argv);
}

/* The report's overlap lines "a-b points ...": every neighbour pair has
 * at least min points. Returns the smallest count, -1 if a pair is absent. */
static int overlap_points(const char *out)
{
    int seen[NCAM] = {0}, least = INT_MAX;
    for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        int a, b, pts;
        if (sscanf(l, " %d-%d %d", &a, &b, &pts) == 3 && b == a + 1 && a >= 0 && b < NCAM) {
            seen[a] = 1;
            if (pts < least)
                least = pts;
        }
    }
    for (int a = 0; a + 1 < NCAM; a++)
        if (!seen[a])
            return -1;
    return least;
}

/* Checks a written rig against the truth: relative angles to camera 2,
 * and (photo) exposure and white balance relative to camera 0. With
 * scaled, the fields of view were fitted too: over 15 % overlaps they
 * trade against the yaws (a rig 1 % narrower in every camera, turned 1 %
 * less between cameras, stitches as well), so the yaws are compared with
 * the truth's scaled by the fitted mean field of view over the true one. */
static void check_rig(const char *what, const char *path, int photo, int scaled)
{
    pc_rig rig;
    char err[1024] = "";
    int ok = pc_rig_load(path, &rig, err, sizeof err) == 0 && pc_rig_check_cameras(&rig, NCAM, CW, CH, err,
                                                                                   sizeof err) == 0;
    TAP_CHECK(ok, "%s: %s reads back as a rig of %d cameras of %dx%d%s%s", what, path, NCAM, CW, CH, ok ? "" : ": ",
              ok ? "" : err);
    if (!ok)
        return;
    double worst = 0, est[NCAM][3], scale = 0;
    char table[2048] = "";
    for (int i = 0; i < NCAM; i++) {
        est[i][0] = rig.cam[i].yaw;
        est[i][1] = rig.cam[i].pitch;
        est[i][2] = rig.cam[i].roll;
        scale += rig.cam[i].hfov / HFOV / NCAM;
    }
    if (!scaled)
        scale = 1;
    for (int i = 0; i < NCAM; i++) {
        double t[3], e[3];
        relative(truth[i], truth[2], t);
        relative(est[i], est[2], e);
        t[0] *= scale;
        for (int k = 0; k < 3; k++)
            worst = fmax(worst, fabs(e[k] - t[k]));
        snprintf(table + strlen(table), sizeof table - strlen(table),
                 "camera %d: truth %8.3f %7.3f %7.3f  recovered %8.3f %7.3f %7.3f  (hfov %.3f)\n", i, t[0], t[1],
                 t[2], e[0], e[1], e[2], rig.cam[i].hfov);
    }
    tap_diag("%s: yaw pitch roll relative to camera 2%s\n%s", what,
             scaled ? " (the truth's yaw scaled by the fitted fields of view)" : "", table);
    TAP_CHECK(worst <= ANGLE_BOUND, "%s: every camera's yaw/pitch/roll relative to camera 2 within %.1f deg "
                                    "(worst %.3f deg%s)",
              what, ANGLE_BOUND, worst, scaled ? ", yaws scaled by the fitted field of view" : "");
    if (scaled)
        TAP_CHECK(fabs(scale - 1) < 0.02, "%s: the fitted fields of view are %.2f %% off the truth's on average",
                  what, 100 * (scale - 1));
    if (!photo)
        return;
    double we = 0, ww = 0;
    for (int i = 0; i < NCAM; i++) {
        we = fmax(we, fabs(rig.cam[i].eev - truth_eev[i]));
        ww = fmax(ww, fmax(fabs(rig.cam[i].er - truth_er[i]), fabs(rig.cam[i].eb - truth_eb[i])));
    }
    TAP_CHECK(we <= EEV_BOUND && ww <= WB_BOUND,
              "%s: exposure within %.2f EV (worst %.3f), white balance Er/Eb within %.2f (worst %.3f) of the truth",
              what, EEV_BOUND, we, WB_BOUND, ww);
}

/* ------------------------------------------------------------ inputs */

/* The renders as Bayer mosaics (RGGB) in a .pcraw of two frame sets. */
static int write_pcraw(const char *dir, const char *path)
{
    pc_raw_writer *w = NULL;
    char err[512] = "";
    uint8_t *raw[NCAM] = {0};
    int rc = -1;
    if (pc_raw_writer_open(&w, path, CW, CH, NCAM, PC_CFA_RGGB, 25, err, sizeof err))
        goto out;
    pc_frameset set = {.n = NCAM, .width = CW, .height = CH, .cfa = PC_CFA_RGGB};
    for (int i = 0; i < NCAM; i++) {
        char p[PATH_MAX];
        pc_image img;
        snprintf(p, sizeof p, "%s/cam%d.png", dir, i);
        if (pc_image_read(p, &img, err, sizeof err))
            goto out;
        raw[i] = malloc((size_t)CW * CH);
        int bad = !raw[i] || pc_mosaic_from_rgb(img.rgb, img.pitch, CW, CH, PC_CFA_RGGB, raw[i], CW, err, sizeof err);
        pc_image_free(&img);
        if (bad)
            goto out;
        set.slab[i] = raw[i];
        set.pitch[i] = CW;
    }
    for (int k = 0; k < 2; k++) {
        set.index = (uint64_t)k;
        set.pts_ns = 40000000LL * k;
        if (pc_raw_writer_write(w, &set, err, sizeof err))
            goto out;
    }
    rc = 0;
out:
    if (w && pc_raw_writer_close(w, err, sizeof err))
        rc = -1;
    for (int i = 0; i < NCAM; i++)
        free(raw[i]);
    if (rc)
        tap_diag("pcraw: %s", err);
    return rc;
}

/* An unrelated photograph as camera 2: sample.png scaled to cover 640x360
 * (nearest sample) and centre-cropped. */
static int write_unrelated(const char *sample, const char *path)
{
    pc_image img;
    char err[512] = "";
    if (pc_image_read(sample, &img, err, sizeof err))
        return -1;
    uint8_t *px = malloc((size_t)CW * CH * 3);
    double s = fmax((double)CW / img.width, (double)CH / img.height);
    double ox = (img.width * s - CW) / 2, oy = (img.height * s - CH) / 2;
    for (int y = 0; px && y < CH; y++)
        for (int x = 0; x < CW; x++) {
            int sx = (int)((x + ox) / s), sy = (int)((y + oy) / s);
            sx = sx < img.width ? sx : img.width - 1;
            sy = sy < img.height ? sy : img.height - 1;
            memcpy(px + ((size_t)y * CW + x) * 3, img.rgb + (size_t)sy * img.pitch + (size_t)sx * 3, 3);
        }
    int rc = px ? pc_image_write(path, px, (size_t)CW * 3, CW, CH, err, sizeof err) : -1;
    free(px);
    pc_image_free(&img);
    return rc;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* The renders one above the other, 640 x (5*360): fake camera i shows
 * band i of capture.image, exactly when the picture has that size. */
static int write_stacked(const char *dir)
{
    uint8_t *px = malloc((size_t)CW * CH * NCAM * 3);
    char p[PATH_MAX], err[512];
    int rc = px ? 0 : -1;
    for (int i = 0; i < NCAM && !rc; i++) {
        pc_image img;
        snprintf(p, sizeof p, "%s/cam%d.png", dir, i);
        if ((rc = pc_image_read(p, &img, err, sizeof err)))
            break;
        for (int y = 0; y < CH; y++)
            memcpy(px + ((size_t)i * CH + y) * CW * 3, img.rgb + (size_t)y * img.pitch, (size_t)CW * 3);
        pc_image_free(&img);
    }
    snprintf(p, sizeof p, "%s/stacked.png", dir);
    if (!rc)
        rc = pc_image_write(p, px, (size_t)CW * 3, CW, CH * NCAM, err, sizeof err);
    free(px);
    return rc;
}

/* A panocap whose five fake cameras show the renders; its control socket
 * and snapshot folder in dir. Returns its pid (0 when it did not start). */
static pid_t start_daemon(const char *panocap, const char *dir, char *sock, size_t n)
{
    if (write_stacked(dir))
        return 0;
    char conf[PATH_MAX], snaps[PATH_MAX];
    snprintf(conf, sizeof conf, "%s/panocap.conf", dir);
    snprintf(snaps, sizeof snaps, "%s/snapshots", dir);
    snprintf(sock, n, "%s/control.sock", dir);
    mkdir(snaps, 0755);
    FILE *f = fopen(conf, "w");
    if (!f)
        return 0;
    fprintf(f, "capture = { source = \"fake\"; cameras = %d; width = %d; height = %d; fps = 10;\n"
               "            image = \"%s/stacked.png\"; };\n",
            NCAM, CW, CH, dir);
    fprintf(f, "daemon = { control = \"%s\"; snapshot_dir = \"%s\"; };\n", sock, snaps);
    fclose(f);
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/panocap.log", dir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(log, "w", stdout) || !freopen(log, "a", stderr))
            _exit(126);
        execl(panocap, panocap, "--config", conf, "--output", "null", "--duration", "120", "--stats-interval", "0",
              (char *)NULL);
        _exit(127);
    }
    for (int k = 0; pid > 0 && k < 1200; k++) { /* up to 120 s for the socket (a busy machine) */
        struct stat st;
        if (stat(sock, &st) == 0)
            return pid;
        usleep(100000);
    }
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_calibrate PANOCAP-CALIBRATE PANOCAP SAMPLE.png\n");
        return 2;
    }
    const char *exe = argv[1], *panocap = argv[2], *sample = argv[3];
    double t0 = now_s();
    char dir[] = "/tmp/pc-calibrate-XXXXXX";
    if (!mkdtemp(dir))
        return tap_skip_all("mkdtemp failed");

    /* hugin-tools is what this test checks against: tools/install-deps
     * installs it, so its absence is a failure, not a skip */
    char *nona_v[] = {"nona", "--help", NULL};
    int have_nona = spawn(dir, nona_v) != 127;
    TAP_CHECK(have_nona, "Hugin's nona is installed (hugin-tools; tools/install-deps installs it)");
    if (!have_nona)
        return tap_done();

    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/scene.ppm", dir);
    TAP_CHECK(make_scene(path) == 0, "a %dx%d equirectangular scene of random shapes", SW, SH);
    int rendered = 0;
    for (int i = 0; i < NCAM; i++)
        rendered += render_camera(dir, i) == 0;
    TAP_CHECK(rendered == NCAM, "nona renders the %d cameras (%dx%d, %.0f deg, exposure and white balance of "
                                "their own)", NCAM, CW, CH, HFOV);
    unlink(path);
    if (rendered != NCAM)
        return tap_done();
    double t_render = now_s() - t0;

    char cams[NCAM][PATH_MAX], out[PATH_MAX];
    for (int i = 0; i < NCAM; i++)
        snprintf(cams[i], sizeof cams[i], "%s/cam%d.png", dir, i);

    /* 1. image files, positions only (the lenses are known exactly) */
    snprintf(out, sizeof out, "%s/positions.pto", dir);
    double t = now_s();
    const char *a1[] = {"--hfov", "50", "--optimise", "positions", "-o", out, cams[0], cams[1], cams[2], cams[3],
                        cams[4], NULL};
    int rc = calibrate(exe, a1);
    double t_pos = now_s() - t;
    TAP_CHECK(rc == 0, "image files, --optimise positions: exit %d%s%s", rc, rc ? ": " : "", rc ? res.err : "");
    tap_diag("%s", res.out);
    int least = overlap_points(res.out);
    TAP_CHECK(least >= 6, "the report lists control points for overlaps 0-1 .. 3-4 (fewest: %d)", least);
    TAP_CHECK(strstr(res.out, "error mean ") && strstr(res.out, "max "), "the report gives the mean and largest "
                                                                         "control point error");
    check_rig("positions", out, 1, 0);

    /* 2. the default: autooptimiser -a (fields of view and distortion too) */
    snprintf(out, sizeof out, "%s/auto.pto", dir);
    const char *a2[] = {"-q", "--hfov", "50", "-o", out, cams[0], cams[1], cams[2], cams[3], cams[4], NULL};
    rc = calibrate(exe, a2);
    TAP_CHECK(rc == 0, "image files, the default (--optimise auto): exit %d%s%s", rc, rc ? ": " : "",
              rc ? res.err : "");
    check_rig("auto", out, 1, 1);

    /* 3. camera 2 replaced by an unrelated photograph: refused */
    char other[PATH_MAX];
    snprintf(other, sizeof other, "%s/unrelated.png", dir);
    TAP_CHECK(write_unrelated(sample, other) == 0, "an unrelated photograph of %dx%d (%s)", CW, CH, sample);
    snprintf(out, sizeof out, "%s/unrelated.pto", dir);
    const char *a3[] = {"-q", "--hfov", "50", "-o", out, cams[0], cams[1], other, cams[3], cams[4], NULL};
    rc = calibrate(exe, a3);
    struct stat st;
    TAP_CHECK(rc == 2 && strstr(res.err, "refused") && strstr(res.err, "overlap 1-2") &&
                  strstr(res.err, "overlap 2-3") && stat(out, &st) != 0,
              "camera 2 unrelated: refused (exit %d), naming overlaps 1-2 and 2-3, nothing written: %s", rc, res.err);

    /* 4. a .pcraw recording: Bayer mosaics, demosaiced by the tool */
    char raw[PATH_MAX];
    snprintf(raw, sizeof raw, "%s/rig.pcraw", dir);
    TAP_CHECK(write_pcraw(dir, raw) == 0, "a .pcraw of two frame sets (RGGB mosaics of the renders)");
    snprintf(out, sizeof out, "%s/raw.pto", dir);
    const char *a4[] = {"-q", "--hfov", "50", "--optimise", "positions", "--photometric", "full", "--raw", raw,
                        "--set", "1", "--algo", "hq-linear", "-o", out, NULL};
    rc = calibrate(exe, a4);
    TAP_CHECK(rc == 0, "--raw (set 1, hq-linear), --photometric full: exit %d%s%s", rc, rc ? ": " : "",
              rc ? res.err : "");
    check_rig("raw", out, 0, 0);

    /* 5. a running panocap: its next frame set through the control socket */
    char sock[PATH_MAX] = "";
    pid_t pid = 0;
    if (strcmp(panocap, "-") == 0)
        tap_skip("--daemon: panocap is built without Aravis (no fake cameras)");
    else {
        pid = start_daemon(panocap, dir, sock, sizeof sock);
        TAP_CHECK(pid > 0, "panocap with fake cameras showing the renders, control socket %s", sock);
    }
    if (pid > 0) {
        snprintf(out, sizeof out, "%s/daemon.pto", dir);
        const char *a5[] = {"-q", "--hfov", "50", "--optimise", "positions", "--photometric", "none", "--daemon",
                            sock, "-o", out, NULL};
        rc = calibrate(exe, a5);
        TAP_CHECK(rc == 0, "--daemon: exit %d%s%s", rc, rc ? ": " : "", rc ? res.err : "");
        check_rig("daemon", out, 0, 0);
        snprintf(path, sizeof path, "%s/snapshots/calibrate/cam4.png", dir);
        TAP_CHECK(stat(path, &st) == 0, "the daemon wrote its pictures into its snapshot folder (%s)", path);
        kill(pid, SIGTERM);
        int status = 0;
        waitpid(pid, &status, 0);
        TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "panocap stopped cleanly (status 0x%x)", status);
    }

    /* 6. without hugin-tools: how to install it */
    const char *env_path = getenv("PATH");
    char *orig_path = strdup(env_path ? env_path : "/usr/bin:/bin");
    setenv("PATH", dir, 1); /* no Hugin tool in there */
    const char *a6[] = {"--hfov", "50", "-o", out, cams[0], cams[1], NULL};
    rc = calibrate(exe, a6);
    setenv("PATH", orig_path, 1);
    TAP_CHECK(rc == 69 && strstr(res.err, "hugin-tools") && strstr(res.err, "apt-get install hugin-tools"),
              "hugin-tools missing: exit %d, says how to install it: %s", rc, res.err);

    /* 7. a step that fails: named, with its exit status and its log's end */
    char fakebin[PATH_MAX], fake[PATH_MAX + 16];
    snprintf(fakebin, sizeof fakebin, "%s/fakebin", dir);
    snprintf(fake, sizeof fake, "%s/cpfind", fakebin);
    mkdir(fakebin, 0755);
    FILE *ff = fopen(fake, "w");
    if (ff) {
        fputs("#!/bin/sh\necho 'cpfind: cannot allocate the keypoints' >&2\nexit 3\n", ff);
        fclose(ff);
        chmod(fake, 0755);
    }
    size_t fl = strlen(fakebin) + strlen(orig_path) + 2;
    char *fakepath = malloc(fl);
    if (fakepath)
        snprintf(fakepath, fl, "%s:%s", fakebin, orig_path);
    setenv("PATH", fakepath ? fakepath : fakebin, 1); /* a cpfind that fails, the real tools behind it */
    rc = calibrate(exe, a6);
    setenv("PATH", orig_path, 1);
    free(fakepath);
    free(orig_path);
    TAP_CHECK(rc == 1 && strstr(res.err, "cpfind failed (exit status 3)") && strstr(res.err, "3-cpfind.log") &&
                  strstr(res.err, "cannot allocate the keypoints"),
              "a failing step (cpfind exits 3): exit %d, names the step, its log and its last line: %s", rc, res.err);

    /* 8. bad input: the camera or file named, exit 1; usage: 64 */
    const char *a7[] = {"--hfov", "50", "-o", out, cams[0], other, sample, NULL};
    rc = calibrate(exe, a7);
    TAP_CHECK(rc == 1 && strstr(res.err, "camera 2") && strstr(res.err, "600x400"),
              "pictures of different sizes: exit %d, names the camera: %s", rc, res.err);
    snprintf(path, sizeof path, "%s/missing.png", dir);
    const char *a8[] = {"--hfov", "50", "-o", out, cams[0], path, NULL};
    rc = calibrate(exe, a8);
    TAP_CHECK(rc == 1 && strstr(res.err, "missing.png"), "a missing picture: exit %d: %s", rc, res.err);
    snprintf(path, sizeof path, "%s/nobody.sock", dir);
    const char *a9[] = {"--hfov", "50", "-o", out, "--daemon", path, NULL};
    rc = calibrate(exe, a9);
    TAP_CHECK(rc == 1 && strstr(res.err, "control socket") && strstr(res.err, "nobody.sock"),
              "no daemon on the socket: exit %d: %s", rc, res.err);
    const char *a10[] = {"-o", out, cams[0], cams[1], NULL};
    rc = calibrate(exe, a10);
    TAP_CHECK(rc == 64 && strstr(res.err, "--hfov"), "no field of view: usage error %d: %s", rc, res.err);

    tap_diag("rendering %.1f s, one calibration (positions) %.1f s, the whole test %.1f s", t_render, t_pos,
             now_s() - t0);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (tap_failed_ == 0 && system(cmd) != 0)
        tap_diag("could not remove %s", dir);
    return tap_done();
}
