/* test_capture_scene.c - Aravis's in-process fake cameras showing the
 * simulated stadium through a rig (pc_capture_config.scene): every slab is
 * its camera's view at the scene time its frame id names, value for value
 * (a direct rendering mosaiced with the cameras' pattern), the slabs of a
 * set show one moment, the picture moves from set to set, and scene
 * settings that cannot work are refused with a message naming the
 * setting (and the .pto's line). Then the GigE Vision simulators showing
 * the same scene (pc_sim_set_scene), received over GigE Vision in a
 * private network namespace (skipped with the reason where there is
 * none). argv[1]: the example rig. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "clock.h"
#include "rig.h"
#include "scene.h"
#include "simulator.h"
#include "sanitizer.h"
#include "tap.h"

#define N 5
#define FPS 25.0
#define SECONDS 0.4 /* 10 frames, played back and forth */

static pc_rig rig;

static void quiet_sink(void *user, int level, const char *line)
{
    (void)user;
    if (level <= PC_LOG_WARNING)
        fprintf(stderr, "# log <%d> %s\n", level, line);
}
static const pc_logger quiet = {quiet_sink, NULL, PC_LOG_INFO};

static void base_config(pc_capture_config *cfg)
{
    pc_capture_config_init(cfg);
    cfg->source = PC_SOURCE_FAKE;
    cfg->n_cameras = N;
    cfg->fps = FPS;
    cfg->pool_sets = 8;
    cfg->deadline_periods = 4;
    cfg->log = &quiet;
    cfg->scene = "stadium";
    cfg->scene_rig = &rig;
    cfg->scene_seconds = SECONDS;
    cfg->scene_seed = 3;
    for (int i = 0; i < N; i++) {
        cfg->cam[i].cfa = PC_CFA_BGGR;
        cfg->cam[i].width = rig.cam[i].w;
        cfg->cam[i].height = rig.cam[i].h;
    }
}

/* The expected mosaic of camera c at frame k of the loop (cached). */
static uint8_t *expected[32][N];

static const uint8_t *want(const pc_scene *s, int c, double t)
{
    int k = (int)lround(t * FPS);
    if (k < 0 || k >= 32)
        return NULL;
    if (!expected[k][c]) {
        static pc_scene_eye eye;
        const int w = rig.cam[c].w, h = rig.cam[c].h;
        uint8_t *rgb = malloc((size_t)w * h * 3);
        expected[k][c] = malloc((size_t)w * h);
        pc_scene_eye_camera(&rig, c, &eye);
        char err[256] = "";
        pc_scene_render(s, &eye, k / FPS, 0, 0, 0, 0, w, h, rgb, 3 * (size_t)w, err, sizeof err);
        pc_mosaic_from_rgb(rgb, 3 * (size_t)w, w, h, PC_CFA_BGGR, expected[k][c], (size_t)w, NULL, 0);
        free(rgb);
    }
    return expected[k][c];
}

static void test_run(void)
{
    pc_capture_config cfg;
    base_config(&cfg);
    char err[512] = "";
    pc_capture *cap = NULL;
    int rc = pc_capture_open(&cap, &cfg, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "5 fake cameras %dx%d show the stadium through the rig: %s", rig.cam[0].w,
                   rig.cam[0].h, rc ? err : "opened"))
        return;
    TAP_CHECK(isnan(pc_capture_scene_time(NULL, 0)) && fabs(pc_capture_scene_time(cap, 3) - 3 / FPS) < 1e-9 &&
                  fabs(pc_capture_scene_time(cap, 12) - 6 / FPS) < 1e-9,
              "frame id n shows the loop's frame tri(n): 3 -> %.2f s, 12 -> %.2f s",
              pc_capture_scene_time(cap, 3), pc_capture_scene_time(cap, 12));
    rc = pc_capture_start(cap, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "started: %s", rc ? err : "ok")) {
        pc_capture_close(cap);
        return;
    }
    pc_scene *s;
    pc_scene_create(&s, "stadium", 3, err, sizeof err);
    int sets = 0, slabs = 0, match = 0, one_moment = 0, complete = 0, moved = 0;
    double first_t = -1;
    uint8_t *first2 = NULL;
    const int w = rig.cam[0].w, h = rig.cam[0].h;
    /* until 21 complete sets (every slab live): how many sets that takes
     * is the machine's speed (a descheduled fake camera's slab is
     * substituted), so the run waits for them, bounded only for one that
     * stopped */
    int64_t t0 = pc_now_ns();
    while (complete <= 20 && pc_now_ns() - t0 < (int64_t)(tu_bound(60) * 1e9)) {
        pc_frameset *fs;
        rc = pc_capture_next(cap, 2000, &fs);
        if (rc == PC_CAPTURE_TIMEOUT)
            continue;
        if (rc)
            break;
        sets++;
        int same = 1;
        for (int k = 0; k < fs->n; k++) {
            if (fs->frame_id[k] != fs->frame_id[0])
                same = 0;
            if ((fs->substituted >> k) & 1)
                continue;
            int c = fs->camera[k];
            double t = pc_capture_scene_time(cap, fs->frame_id[k]);
            const uint8_t *e = want(s, c, t);
            slabs++;
            int ok = e != NULL;
            for (int y = 0; y < h && ok; y++)
                ok = !memcmp(fs->slab[k] + (size_t)y * fs->pitch[k], e + (size_t)y * w, (size_t)w);
            match += ok;
            if (!ok)
                tap_diag("set %llu slab %d (camera %d, frame %llu, t %.2f): not the scene at its time",
                         (unsigned long long)fs->index, k, c, (unsigned long long)fs->frame_id[k], t);
            if (c == 2 && first_t < 0) {
                first_t = t;
                first2 = malloc((size_t)w * h);
                for (int y = 0; y < h; y++)
                    memcpy(first2 + (size_t)y * w, fs->slab[k] + (size_t)y * fs->pitch[k], (size_t)w);
            } else if (c == 2 && t != first_t && first2) {
                for (int y = 0; y < h && !moved; y++)
                    moved = memcmp(first2 + (size_t)y * w, fs->slab[k] + (size_t)y * fs->pitch[k], (size_t)w) != 0;
            }
        }
        if (!fs->substituted) {
            complete++;
            one_moment += same;
        }
        pc_capture_release(cap, fs);
    }
    TAP_CHECK((rc == 0 || rc == PC_CAPTURE_TIMEOUT) && slabs > 100 && match == slabs,
              "%d sets: every one of %d live slabs is its camera's view at its scene time, value for value "
              "(%d match)", sets, slabs, match);
    TAP_CHECK(complete > 20 && one_moment == complete, "the slabs of a complete set show one moment (one frame "
              "id): %d of %d complete sets", one_moment, complete);
    TAP_CHECK(moved, "the middle camera's picture moves from moment to moment");
    pc_camera_stats st[N];
    pc_capture_stats(cap, st, N);
    double fill = 0;
    for (int i = 0; i < N; i++)
        fill += st[i].fake_fill_cpu_ns / 1e6 / (double)(st[i].frames_received ? st[i].frames_received : 1);
    tap_diag("drawing a %dx%d scene frame: %.3f ms CPU on average", w, h, fill / N);
    free(first2);
    pc_scene_destroy(s);
    pc_capture_close(cap);
}

static void expect_refused(pc_capture_config *cfg, const char *what, const char *needle1, const char *needle2)
{
    char err[512] = "";
    int rc = pc_capture_check(cfg, err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, needle1) && (!needle2 || strstr(err, needle2)), "%s is refused: %s", what, err);
}

static void test_bad(void)
{
    pc_capture_config cfg;
    base_config(&cfg);
    char err[512] = "";
    TAP_CHECK(pc_capture_check(&cfg, err, sizeof err) == 0, "the scene configuration passes the check: %s",
              err[0] ? err : "ok");
    cfg.scene = "arena";
    expect_refused(&cfg, "an unknown scene", "scene 'arena' is not known", "stadium");
    base_config(&cfg);
    cfg.source = PC_SOURCE_GIGE;
    for (int i = 0; i < N; i++)
        cfg.cam[i].address = i == 0 ? "10.0.0.1" : i == 1 ? "10.0.0.2" : i == 2 ? "10.0.0.3" : i == 3 ? "10.0.0.4" : "10.0.0.5";
    expect_refused(&cfg, "a scene for GigE cameras", "fake cameras only", "gige");
    base_config(&cfg);
    cfg.scene_rig = NULL;
    expect_refused(&cfg, "a scene without a rig", "needs a rig", NULL);
    base_config(&cfg);
    cfg.n_cameras = 4;
    expect_refused(&cfg, "a rig of 5 cameras for 4", "5 i lines (images) for 4 cameras", rig.path);
    base_config(&cfg);
    for (int i = 0; i < N; i++)
        cfg.cam[i].width = 512;
    expect_refused(&cfg, "cameras of another size than the rig's", "fields w h", "camera 0 delivers 512x");
    base_config(&cfg);
    cfg.scene_seconds = -1;
    expect_refused(&cfg, "a negative scene length", "scene length -1 s is out of range", NULL);
}

/* The simulators show the scene too: every slab received over GigE
 * Vision is one of the loop's frames of its camera, one moment per set. */
static void test_gige(void)
{
    char err[512] = "";
    pc_sim *sim = NULL;
    pc_scene *s = NULL;
    pc_scene_loop *loop = NULL;
    int rc = pc_sim_open(&sim, N, rig.cam[0].w, rig.cam[0].h, PC_CFA_BGGR, NULL, err, sizeof err);
    if (!rc)
        rc = pc_scene_create(&s, "stadium", 3, err, sizeof err);
    if (!rc)
        rc = pc_scene_loop_create(&loop, s, &rig, N, PC_CFA_BGGR, FPS, SECONDS, 0, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "5 GigE Vision simulators on 127.0.0.1-5 showing the stadium: %s", rc ? err : "ok")) {
        pc_sim_close(sim);
        pc_scene_destroy(s);
        return;
    }
    pc_sim_set_fps_hint(sim, FPS);
    pc_sim_set_scene(sim, loop);
    pc_capture_config cfg;
    base_config(&cfg);
    cfg.source = PC_SOURCE_GIGE;
    cfg.scene = NULL;
    for (int i = 0; i < N; i++)
        cfg.cam[i].address = pc_sim_address(sim, i);
    pc_capture *cap = NULL;
    rc = pc_capture_open(&cap, &cfg, err, sizeof err);
    if (!rc)
        rc = pc_capture_start(cap, err, sizeof err);
    int sets = 0, slabs = 0, known = 0, complete = 0, one_moment = 0;
    const int w = rig.cam[0].w, h = rig.cam[0].h;
    int64_t t0 = pc_now_ns();
    while (!rc && complete <= 12 && pc_now_ns() - t0 < (int64_t)(tu_bound(60) * 1e9)) {
        pc_frameset *fs;
        int r = pc_capture_next(cap, 3000, &fs);
        if (r == PC_CAPTURE_TIMEOUT)
            continue; /* a busy machine: wait on */
        if (r)
            break;
        sets++;
        /* the loop frames each slab equals (a camera that sees nothing
         * move equals all of them): a set shows one moment when some
         * frame is in every slab's list */
        unsigned common = ~0u;
        for (int k = 0; k < fs->n; k++) {
            if ((fs->substituted >> k) & 1)
                continue;
            int c = fs->camera[k];
            unsigned which = 0;
            for (int f = 0; f < (int)lround(SECONDS * FPS); f++) {
                const uint8_t *e = want(s, c, f / FPS);
                int ok = 1;
                for (int y = 0; y < h && ok; y++)
                    ok = !memcmp(fs->slab[k] + (size_t)y * fs->pitch[k], e + (size_t)y * w, (size_t)w);
                which |= (unsigned)ok << f;
            }
            slabs++;
            known += which != 0;
            common &= which;
        }
        if (!fs->substituted) {
            complete++;
            one_moment += common != 0;
        }
        pc_capture_release(cap, fs);
    }
    TAP_CHECK(!rc && slabs > 60 && known == slabs, "%d sets over GigE Vision: each of %d live slabs "
              "is one of its camera's scene frames (%d are)%s%s", sets, slabs, known, rc ? ": " : "", rc ? err : "");
    TAP_CHECK(complete > 12 && one_moment == complete, "the slabs of a complete set show one moment: %d of %d",
              one_moment, complete);
    pc_capture_close(cap);
    pc_sim_set_scene(sim, NULL);
    pc_sim_close(sim);
    pc_scene_loop_destroy(loop);
    pc_scene_destroy(s);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_capture_scene RIG.pto\n");
        return 2;
    }
    char err[512] = "";
    /* re-executes under unshare -rn (the simulators' part needs it) */
    int netns = pc_netns_enter(argc, argv, N, err, sizeof err) == 0;
    char why[600];
    snprintf(why, sizeof why, "GigE simulators: %s", err);
    if (!TAP_CHECK(pc_rig_load(argv[1], &rig, err, sizeof err) == 0, "the example rig loads: %s",
                   rig.ncam ? argv[1] : err))
        return tap_done();
    pc_scene_rig_scale(&rig, 8);
    test_bad();
    test_run();
    if (netns)
        test_gige();
    else
        tap_skip(why);
    for (int k = 0; k < 32; k++)
        for (int c = 0; c < N; c++)
            free(expected[k][c]);
    return tap_done();
}
