/* test_scene.c - the simulated stadium (capture/scene.h) on the example
 * rig (argv[1], rig/examples/stadium5.pto): the inverse camera model
 * against pc_cam_project, the ball appearing where the camera model and
 * the panorama's projection put it, the match (deterministic, continuous,
 * plausible speeds, the play crossing halves), rendering independent of
 * threads and tiling, and the fake cameras' pre-rendered frames equal to
 * direct renderings of the same times, with motion. */
#include "rig.h"
#include "scene.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static pc_rig rig_full, rig4, rig8;
static pc_scene_eye eye, eye2;

/* 1. pixel -> ray -> pixel, every camera, a grid over the picture and its
 * corners (the eye's rays are the camera model's). */
static void test_round_trip(void)
{
    double worst = 0;
    int bad = 0;
    for (int c = 0; c < rig_full.ncam; c++) {
        pc_cam_model cm;
        pc_rig_camera_model(&rig_full, c, &cm);
        pc_scene_eye_camera(&rig_full, c, &eye);
        for (int j = 0; j <= 20; j++)
            for (int i = 0; i <= 20; i++) {
                float x = -0.5f + (cm.w * i) / 20.0f, y = -0.5f + (cm.h * j) / 20.0f, ray[3], sx, sy;
                if (!pc_scene_eye_ray(&eye, x, y, ray)) {
                    bad++;
                    continue;
                }
                pc_cam_project(&cm, ray, &sx, &sy);
                worst = fmax(worst, hypot(sx - x, sy - y));
            }
    }
    TAP_CHECK(bad == 0 && worst < 2e-3, "camera pixel -> ray -> pc_cam_project: worst %.2g px over 5 x 441 "
              "points (< 0.002), %d without a ray", worst, bad);

}

/* 2. the match */
static void test_motion(const pc_scene *s, const pc_scene *s_same, const pc_scene *s_other)
{
    pc_scene_object a[PC_SCENE_MAX_OBJECTS], b[PC_SCENE_MAX_OBJECTS], prev[PC_SCENE_MAX_OBJECTS];
    int n = pc_scene_objects(s, 3.7, a, PC_SCENE_MAX_OBJECTS);
    TAP_CHECK(n == 24 && a[0].kind == PC_SCENE_BALL && a[1].kind == PC_SCENE_GOALKEEPER && a[1].team == 0 &&
                  a[12].kind == PC_SCENE_GOALKEEPER && a[12].team == 1 && a[23].kind == PC_SCENE_REFEREE,
              "24 objects: ball, team 0 (goalkeeper first), team 1, referee");
    pc_scene_objects(s_same, 3.7, b, PC_SCENE_MAX_OBJECTS);
    TAP_CHECK(!memcmp(a, b, sizeof(pc_scene_object) * n), "the same seed, the same positions");
    pc_scene_objects(s_other, 3.7, b, PC_SCENE_MAX_OBJECTS);
    TAP_CHECK(a[0].x != b[0].x && a[5].y != b[5].y, "another seed, another match");

    const double dt = 0.02;
    double vmax_people = 0, vmax_ball = 0, jump = 0, xmin = 1e9, xmax = -1e9, zmax = 0;
    int outside = 0;
    pc_scene_objects(s, 0.0, prev, PC_SCENE_MAX_OBJECTS);
    for (int k = 1; k <= 90 * 50; k++) {
        pc_scene_objects(s, k * dt, a, PC_SCENE_MAX_OBJECTS);
        for (int i = 0; i < n; i++) {
            double v = sqrt(a[i].vx * a[i].vx + a[i].vy * a[i].vy + a[i].vz * a[i].vz);
            double step = sqrt(pow(a[i].x - prev[i].x, 2) + pow(a[i].y - prev[i].y, 2) + pow(a[i].z - prev[i].z, 2));
            if (i == 0) {
                vmax_ball = fmax(vmax_ball, v);
                xmin = fmin(xmin, a[i].x), xmax = fmax(xmax, a[i].x), zmax = fmax(zmax, a[i].z);
            } else {
                vmax_people = fmax(vmax_people, v);
            }
            jump = fmax(jump, step / dt);
            outside += fabs(a[i].x) > 54.0 || fabs(a[i].y) > 35.5;
        }
        memcpy(prev, a, sizeof a);
    }
    TAP_CHECK(outside == 0, "90 s: everyone stays on the pitch (|x| <= 54, |y| <= 35.5 m): %d outside", outside);
    TAP_CHECK(vmax_people > 3.0 && vmax_people < 10.0, "people run at most %.1f m/s (3 .. 10)", vmax_people);
    TAP_CHECK(vmax_ball > 8.0 && vmax_ball < 40.0 && zmax > 1.0, "the ball: passes up to %.1f m/s (8 .. 40), "
              "lofted up to %.1f m", vmax_ball, zmax);
    TAP_CHECK(jump < 40.0, "no jumps: the largest move in 20 ms is %.2f m (%.1f m/s)", jump * dt, jump);
    TAP_CHECK(xmin < -20.0 && xmax > 20.0, "the play crosses halves: the ball's x spans %.1f .. %.1f m", xmin, xmax);
}

/* Centroid of the pixels where the ball makes the picture bluer (the ball
 * is white; grass and shadows are not blue): a window rendered with the
 * ball alone and without it. */
static int ball_centroid(const pc_scene *s, const pc_scene_eye *e, double t, float px, float py, float *cx,
                         float *cy)
{
    enum { R = 16 };
    uint8_t with[(2 * R) * (2 * R) * 3], without[(2 * R) * (2 * R) * 3];
    int x0 = (int)lroundf(px) - R, y0 = (int)lroundf(py) - R;
    char err[256] = "";
    if (pc_scene_render(s, e, t, PC_SCENE_BALL_ONLY, 1, x0, y0, 2 * R, 2 * R, with, 6 * R, err, sizeof err) ||
        pc_scene_render(s, e, t, PC_SCENE_STATIC, 1, x0, y0, 2 * R, 2 * R, without, 6 * R, err, sizeof err))
        return 0;
    double sx = 0, sy = 0, n = 0;
    for (int j = 0; j < 2 * R; j++)
        for (int i = 0; i < 2 * R; i++) {
            int k = (j * 2 * R + i) * 3 + 2;
            if (with[k] - without[k] > 40)
                sx += x0 + i, sy += y0 + j, n++;
        }
    if (n < 4)
        return 0;
    *cx = (float)(sx / n);
    *cy = (float)(sy / n);
    return 1;
}

/* Centroid of a white mark on the grass around (px, py): the excess over
 * a plane fitted to the window's border (the grass), weighted. */
static int mark_centroid(const pc_scene *s, const pc_scene_eye *e, float px, float py, float *cx, float *cy)
{
    enum { RX = 14, RY = 8, W = 2 * RX + 1, H = 2 * RY + 1 };
    uint8_t rgb[W * H * 3];
    int x0 = (int)lroundf(px) - RX, y0 = (int)lroundf(py) - RY;
    char err[256] = "";
    if (pc_scene_render(s, e, 0.0, PC_SCENE_STATIC, 1, x0, y0, W, H, rgb, 3 * W, err, sizeof err))
        return 0;
    /* least squares v = a + b i + c j over the border pixels */
    double m[3][4] = {{0}};
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            if (i > 1 && i < W - 2 && j > 1 && j < H - 2)
                continue;
            const uint8_t *q = &rgb[(j * W + i) * 3];
            double v = q[0] + q[1] + q[2], f[3] = {1, i, j};
            for (int r = 0; r < 3; r++) {
                for (int c = 0; c < 3; c++)
                    m[r][c] += f[r] * f[c];
                m[r][3] += f[r] * v;
            }
        }
    for (int r = 0; r < 3; r++) /* Gauss-Jordan */
        for (int q = 0; q < 3; q++)
            if (q != r) {
                double k = m[q][r] / m[r][r];
                for (int c = 0; c < 4; c++)
                    m[q][c] -= k * m[r][c];
            }
    double a = m[0][3] / m[0][0], b = m[1][3] / m[1][1], c = m[2][3] / m[2][2];
    double sx = 0, sy = 0, sw = 0;
    for (int j = 2; j < H - 2; j++)
        for (int i = 2; i < W - 2; i++) {
            const uint8_t *q = &rgb[(j * W + i) * 3];
            double ex = q[0] + q[1] + q[2] - (a + b * i + c * j);
            if (ex > 30.0) /* the spot, not the grass (stripes step by ~15) */
                sx += ex * (x0 + i), sy += ex * (y0 + j), sw += ex;
        }
    if (sw < 100.0)
        return 0;
    *cx = (float)(sx / sw);
    *cy = (float)(sy / sw);
    return 1;
}

/* 3a. known points: the penalty spots (white discs of 22 cm at 11 m from
 * each goal line) where the camera model and the panorama put them. */
static void test_spots(const pc_scene *s)
{
    int ow, oh;
    pc_rig_output_size(&rig_full, &ow, &oh);
    pc_view_model pano;
    pc_rig_panorama_view(&rig_full, ow, oh, &pano);
    pc_scene_eye_view(&pano, &rig_full, &eye2);
    for (int k = 0; k < 2; k++) {
        const double spot[3] = {k ? 41.5 : -41.5, 0.0, 0.0};
        float ray[3], x, y, cx, cy;
        pc_scene_ray_to(spot, ray);
        int seen = 0;
        double worst = 0;
        for (int c = 0; c < rig_full.ncam; c++) {
            pc_cam_model cm;
            pc_rig_camera_model(&rig_full, c, &cm);
            if (!pc_cam_project(&cm, ray, &x, &y) || x < 20 || y < 20 || x > cm.w - 20 || y > cm.h - 20)
                continue;
            pc_scene_eye_camera(&rig_full, c, &eye);
            if (!mark_centroid(s, &eye, x, y, &cx, &cy)) {
                worst = 1e9;
                continue;
            }
            tap_diag("penalty spot %d in camera %d: predicted (%.3f, %.3f), seen (%.3f, %.3f)", k, c, x, y, cx, cy);
            worst = fmax(worst, hypot(cx - x, cy - y));
            seen++;
        }
        TAP_CHECK(seen >= 1 && worst < 0.15, "penalty spot at x = %+.1f m: in the %d camera(s) that see it, "
                  "where pc_cam_project puts it (worst %.3f px, < 0.15)", spot[0], seen, worst);
        int ok = pc_view_project(&pano, ray, &x, &y) && mark_centroid(s, &eye2, x, y, &cx, &cy);
        TAP_CHECK(ok && hypot(cx - x, cy - y) < 0.15, "... and in the panorama where its projection puts it: "
                  "(%.3f, %.3f) vs (%.3f, %.3f)", cx, cy, x, y);
    }
}

/* 3b. the ball where the models put it, in the cameras that see it and in
 * the panorama. The centroid of its blue excess leans to its sunlit side
 * (about a quarter of its radius: up to 0.8 px for the 6 px ball), hence
 * the bound of 1 px: this checks the moving objects' frame, not sub-pixel
 * geometry (3a does). */
static void test_ball(const pc_scene *s)
{
    int ow, oh;
    pc_rig_output_size(&rig_full, &ow, &oh);
    pc_view_model pano;
    pc_rig_panorama_view(&rig_full, ow, oh, &pano);
    double worst_cam = 0, worst_pano = 0;
    int found_cam = 0, found_pano = 0;
    for (double t = 0.5; t < 200.0 && (found_cam < 6 || found_pano < 3); t += 1.37) {
        pc_scene_object o[PC_SCENE_MAX_OBJECTS];
        pc_scene_objects(s, t, o, PC_SCENE_MAX_OBJECTS);
        double ball[3] = {o[0].x, o[0].y, o[0].z};
        if (o[0].z > 0.5)
            continue;
        float ray[3], x, y, cx, cy;
        pc_scene_ray_to(ball, ray);
        for (int c = 0; c < rig_full.ncam && found_cam < 6; c++) {
            pc_cam_model cm;
            pc_rig_camera_model(&rig_full, c, &cm);
            if (!pc_cam_project(&cm, ray, &x, &y) || x < 20 || y < 20 || x > cm.w - 20 || y > cm.h - 20)
                continue;
            pc_scene_eye_camera(&rig_full, c, &eye);
            if (ball_centroid(s, &eye, t, x, y, &cx, &cy)) {
                double d = hypot(cx - x, cy - y);
                if (d > worst_cam)
                    tap_diag("t %.2f camera %d: ball predicted at (%.2f, %.2f), seen at (%.2f, %.2f)", t, c, x, y,
                             cx, cy);
                worst_cam = fmax(worst_cam, d);
                found_cam++;
            }
        }
        if (found_pano < 3 && pc_view_project(&pano, ray, &x, &y) && x > 20 && y > 20 && x < ow - 20 &&
            y < oh - 20) {
            pc_scene_eye_view(&pano, &rig_full, &eye2);
            if (ball_centroid(s, &eye2, t, x, y, &cx, &cy)) {
                worst_pano = fmax(worst_pano, hypot(cx - x, cy - y));
                found_pano++;
            }
        }
    }
    TAP_CHECK(found_cam >= 6 && worst_cam < 1.0, "the ball appears where pc_cam_project puts it: worst %.3f px "
              "over %d camera views (< 1, its shading)", worst_cam, found_cam);
    TAP_CHECK(found_pano >= 3 && worst_pano < 1.0, "... and where the panorama's projection puts it: worst "
              "%.3f px over %d moments (< 1)", worst_pano, found_pano);
}

/* 4. threads and tiling do not change a pixel */
static void test_determinism(const pc_scene *s)
{
    pc_scene_eye_camera(&rig4, 2, &eye);
    const int w = eye.w, h = eye.h;
    uint8_t *a = malloc((size_t)w * h * 3), *b = malloc((size_t)w * h * 3), *r = malloc(200 * 150 * 3);
    char err[256] = "";
    int ok = !pc_scene_render(s, &eye, 21.3, 0, 1, 0, 0, w, h, a, 3 * (size_t)w, err, sizeof err) &&
             !pc_scene_render(s, &eye, 21.3, 0, 3, 0, 0, w, h, b, 3 * (size_t)w, err, sizeof err);
    TAP_CHECK(ok && !memcmp(a, b, (size_t)w * h * 3), "camera 2 (%dx%d): 1 thread and 3 threads render the same", w, h);
    ok = !pc_scene_render(s, &eye, 21.3, 0, 2, 97, 33, 200, 150, r, 600, err, sizeof err);
    int same = ok;
    for (int j = 0; j < 150 && same; j++)
        same = !memcmp(r + (size_t)j * 600, a + ((size_t)(33 + j) * w + 97) * 3, 600);
    TAP_CHECK(same, "a rectangle (200x150 at 97,33) renders as that part of the whole picture");
    int differ = 0;
    pc_scene_render(s, &eye, 21.3, PC_SCENE_STATIC, 2, 0, 0, w, h, b, 3 * (size_t)w, err, sizeof err);
    for (size_t k = 0; k < (size_t)w * h * 3; k++)
        differ += a[k] != b[k];
    TAP_CHECK(differ > 500, "the moving objects change %d values of camera 2", differ);
    free(a);
    free(b);
    free(r);
}

/* 5. the fake cameras' frames: each equals the mosaic of a direct
 * rendering at its time; the loop goes back and forth; frames move */
static void test_loop(const pc_scene *s)
{
    const double fps = 50.0;
    pc_scene_loop *l = NULL;
    char err[256] = "";
    int rc = pc_scene_loop_create(&l, s, &rig8, rig8.ncam, PC_CFA_GRBG, fps, 0.3, 2, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "loop of 0.3 s for 5 cameras of %dx%d: %s", rig8.cam[0].w, rig8.cam[0].h,
                   rc ? err : "built"))
        return;
    pc_scene_loop_info info;
    pc_scene_loop_info_get(l, &info);
    int tri = info.frames == 15;
    for (uint64_t n = 0; n < 60; n++) {
        uint64_t m = n % 28, k = m < 15 ? m : 28 - m;
        tri &= fabs(pc_scene_loop_time(l, n) - k / fps) < 1e-9;
    }
    TAP_CHECK(tri, "15 frames played 0..14, 13..1, 0..14: frame n shows time tri(n) / fps");
    const int w = rig8.cam[0].w, h = rig8.cam[0].h;
    uint8_t *rgb = malloc((size_t)w * h * 3), *want = malloc((size_t)w * h), *got = malloc((size_t)w * h),
            *first = malloc((size_t)w * h);
    int same = 1, moved = 0;
    const uint64_t ns[] = {0, 6, 14, 23, 31};
    for (int q = 0; q < 5; q++)
        for (int c = 0; c < rig8.ncam; c++) {
            pc_scene_eye_camera(&rig8, c, &eye);
            pc_scene_render(s, &eye, pc_scene_loop_time(l, ns[q]), 0, 2, 0, 0, w, h, rgb, 3 * (size_t)w, err,
                            sizeof err);
            pc_mosaic_from_rgb(rgb, 3 * (size_t)w, w, h, PC_CFA_GRBG, want, (size_t)w, NULL, 0);
            pc_scene_loop_fill(l, c, ns[q], got, (size_t)w);
            if (memcmp(want, got, (size_t)w * h)) {
                int nd = 0;
                for (size_t k = 0; k < (size_t)w * h; k++)
                    nd += want[k] != got[k];
                tap_diag("frame %llu camera %d: %d values differ from the direct rendering",
                         (unsigned long long)ns[q], c, nd);
                same = 0;
            }
            if (c == 2 && q == 0)
                memcpy(first, got, (size_t)w * h);
            if (c == 2 && q == 2)
                moved = memcmp(first, got, (size_t)w * h) != 0;
        }
    TAP_CHECK(same, "every frame checked is the background plus its patches == a direct rendering at its "
              "time, value for value (5 frames x 5 cameras)");
    TAP_CHECK(moved, "camera 2's frame 14 differs from frame 0 (motion)");
    TAP_CHECK(info.patch_pixels > 0 && info.patch_pixels < 0.3 * 5 * w * h,
              "patches: %.0f pixels per frame set (%.1f %% of the cameras' pixels)", info.patch_pixels,
              100.0 * info.patch_pixels / (5.0 * w * h));
    pc_scene_loop *bad = NULL;
    TAP_CHECK(pc_scene_loop_create(&bad, s, &rig8, 6, PC_CFA_RGGB, 50, 1, 1, err, sizeof err) == PC_EINVAL &&
                  strstr(err, "6 cameras") && strstr(err, "has 5"),
              "a loop of more cameras than the rig has is refused: %s", err);
    free(rgb);
    free(want);
    free(got);
    free(first);
    pc_scene_loop_destroy(l);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_scene RIG.pto\n");
        return 2;
    }
    char err[512] = "";
    if (!TAP_CHECK(pc_rig_load(argv[1], &rig_full, err, sizeof err) == 0, "the example rig loads: %s",
                   rig_full.ncam ? argv[1] : err))
        return tap_done();
    rig4 = rig_full;
    pc_scene_rig_scale(&rig4, 4);
    rig8 = rig_full;
    pc_scene_rig_scale(&rig8, 8);
    pc_scene *s = NULL, *s2 = NULL, *s3 = NULL, *bad = NULL;
    TAP_CHECK(pc_scene_create(&bad, "arena", 1, err, sizeof err) == PC_EINVAL && !bad && strstr(err, "arena") &&
                  strstr(err, "stadium"),
              "an unknown scene is refused naming the known ones: %s", err);
    if (pc_scene_create(&s, "stadium", 7, err, sizeof err) || pc_scene_create(&s2, "stadium", 7, err, sizeof err) ||
        pc_scene_create(&s3, "stadium", 8, err, sizeof err)) {
        TAP_CHECK(0, "scene: %s", err);
        return tap_done();
    }
    test_round_trip();
    test_motion(s, s2, s3);
    test_spots(s);
    test_ball(s);
    test_determinism(s);
    test_loop(s);
    pc_scene_destroy(s);
    pc_scene_destroy(s2);
    pc_scene_destroy(s3);
    return tap_done();
}
