/* test_reframe.c - the recorded panorama as a camera of the rig
 * (pc_rig_panorama_source, camera_model.h's PANORAMIC and EQUIRECT lenses)
 * and the replay path (replay/replay.h):
 *   - for cylindrical, equirectangular and rectilinear p lines, cropped or
 *     not, at the .pto's size and at a panorama.width: the source camera's
 *     pc_cam_project lands where pc_view_project of the panorama view puts
 *     a direction (within 2e-3 px), pc_cam_unproject returns it;
 *   - a size whose aspect is not the rig's is refused, naming the p line;
 *   - the example stadium rig's panorama (cropped far below its horizon),
 *     at its full (even) width and small ones: the coverage's home is in
 *     the picture, the views the live ones show are covered, not clamped;
 *   - a view drawn from a rendered panorama: the CPU backend's lanes == the
 *     reference bit for bit, the emulated CUDA ray kernels within the rule,
 *     set_view (a moving view) == a fresh plan, and the view against the
 *     same view drawn from the cameras (PSNR floor, the figure printed);
 *   - the backend's picture upload (the decoded frame into its memory);
 *   - the clip core (pc_replay_clip) on two parts of a libx264 recording:
 *     frames and duration exact across the parts, progress, cancel (no
 *     file left), times past the end, a panorama.width it was not made with;
 *     a clip far into a recording entered by a seek == read from the start;
 *   - keyframe files: parsed, errors naming the line; the keyframe path
 *     is at each keyframe's pose at its time (within the live motion's
 *     lag), within the speed limit, and settles after the last.
 */
#include "backend.h"
#include "encode.h"
#include "log.h"
#include "cuda_emu_render.h"
#include "debayer_test_util.h"
#include "render.h"
#include "render_synth.h"
#include "render_test_util.h"
#include "replay.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCAM 3
#define CW 320
#define CH 240
#define DETAIL 1.0

static double urand(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / (double)(1ULL << 53);
}

/* --- geometry ------------------------------------------------------------ */

static void check_geometry(void)
{
    static const struct {
        int proj;
        double hfov;
        int w, h, crop[4];
        int rec_w; /* 0: the output size */
        const char *name;
    } cases[] = {
        {PC_PROJ_CYLINDRICAL, 170, 2000, 800, {0, 0, 0, 0}, 0, "cylindrical"},
        {PC_PROJ_CYLINDRICAL, 170, 2000, 800, {0, 0, 0, 0}, 640, "cylindrical, panorama.width 640"},
        {PC_PROJ_CYLINDRICAL, 120, 1800, 900, {100, 1700, 150, 750}, 800, "cylindrical, cropped, width 800"},
        {PC_PROJ_EQUIRECT, 360, 2048, 1024, {0, 0, 0, 0}, 1024, "equirectangular 360x180, width 1024"},
        {PC_PROJ_EQUIRECT, 150, 1500, 700, {50, 1450, 60, 640}, 0, "equirectangular, cropped"},
        {PC_PROJ_RECTILINEAR, 100, 1600, 900, {0, 0, 0, 0}, 800, "rectilinear, width 800"},
        {PC_PROJ_RECTILINEAR, 90, 1600, 1000, {200, 1400, 100, 900}, 0, "rectilinear, cropped"},
    };
    unsigned long long seed = 27;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pc_rig rig, src;
        memset(&rig, 0, sizeof rig);
        rig.ncam = 1;
        snprintf(rig.path, sizeof rig.path, "rig.pto");
        rig.pano = (pc_rig_canvas){.proj = cases[k].proj, .w = cases[k].w, .h = cases[k].h, .hfov = cases[k].hfov,
                                   .line = 1};
        memcpy(rig.pano.crop, cases[k].crop, sizeof rig.pano.crop);
        int ow, oh;
        pc_rig_output_size(&rig, &ow, &oh);
        const int w = cases[k].rec_w ? cases[k].rec_w : ow;
        const int h = (int)lround((double)w * oh / ow / 2) * 2;
        char err[400] = "";
        if (!TAP_CHECK(pc_rig_panorama_source(&rig, w, h, &src, err, sizeof err) == 0, "%s: source camera %dx%d (%s)",
                       cases[k].name, w, h, err))
            continue;
        pc_view_model v;
        pc_rig_panorama_view(&rig, w, h, &v);
        pc_cam_model m;
        pc_rig_camera_model(&src, 0, &m);
        double worst = 0, worst_back = 0;
        int n = 0, agree = 0;
        for (int i = 0; i < 4000; i++) {
            /* a pixel of the recording (and a little outside), its direction */
            float x = (float)(urand(&seed) * (w + 20) - 10), y = (float)(urand(&seed) * (h + 20) - 10), ray[3];
            pc_view_ray(&v, x, y, ray);
            float sx, sy, vx, vy;
            const int in = pc_cam_project(&m, ray, &sx, &sy);
            const int ok = pc_view_project(&v, ray, &vx, &vy);
            const int inside = vx >= 0 && vx <= w - 1 && vy >= 0 && vy <= h - 1;
            if (!ok)
                continue;
            n++;
            agree += in == inside || fabs(vx) < 0.01 || fabs(vy) < 0.01 || fabs(vx - (w - 1)) < 0.01 ||
                     fabs(vy - (h - 1)) < 0.01;
            if (sx > -1e8f)
                worst = fmax(worst, fmax(fabs(sx - vx), fabs(sy - vy)));
            float back[3], bx, by;
            if (in && pc_cam_unproject(&m, sx, sy, back) && pc_view_project(&v, back, &bx, &by))
                worst_back = fmax(worst_back, fmax(fabs(bx - vx), fabs(by - vy)));
        }
        const double tol = 2e-3 * fmax(1.0, w / 1000.0);
        TAP_CHECK(n > 3000 && agree == n && worst < tol && worst_back < tol,
                  "%s at %dx%d: the source camera sees each direction where the panorama shows it (max %.2g px over "
                  "%d directions, inside where the picture is: %d of them), pc_cam_unproject returns it (max %.2g px)",
                  cases[k].name, w, h, worst, n, agree, worst_back);
    }
    /* the wrong size */
    pc_rig rig, src;
    memset(&rig, 0, sizeof rig);
    rig.ncam = 1;
    snprintf(rig.path, sizeof rig.path, "stadium.pto");
    rig.pano = (pc_rig_canvas){.proj = PC_PROJ_CYLINDRICAL, .w = 2000, .h = 800, .hfov = 170, .line = 3};
    char err[400] = "";
    int rc = pc_rig_panorama_source(&rig, 640, 360, &src, err, sizeof err);
    tap_diag("640x360 against 2000x800: %s", err);
    TAP_CHECK(rc != 0 && strstr(err, "stadium.pto:3: p line") && strstr(err, "640x360") && strstr(err, "2000x800") &&
                  strstr(err, "256 high"),
              "a 640x360 recording against a 2000x800 panorama: refused, naming the .pto's p line, both sizes and the "
              "height a 640-wide panorama of it has");
    TAP_CHECK(pc_rig_panorama_source(&rig, 640, 256, &src, err, sizeof err) == 0 &&
                  pc_rig_panorama_source(&rig, 640, 258, &src, err, sizeof err) != 0,
              "640x256 fits it (2000x800 scaled), 640x258 does not");
}

/* The example stadium rig's recorded panorama: its canvas (cylindrical,
 * v160, 9034x2800) is cropped to what the cameras see, 8711x1048 well
 * below the canvas's horizon (tilt about -2.7 to -20.4). Its source
 * camera's axis (pan 0, tilt 0) sees nothing of it: the coverage's home
 * must be where the picture's middle looks, or no clip of it can start
 * (the bug: "no view of aspect 1920x1080 fits in what the cameras see"). */
static void check_stadium_rig(const char *pto)
{
    char err[400] = "";
    pc_rig rig;
    if (!TAP_CHECK(pc_rig_load(pto, &rig, err, sizeof err) == 0, "%s loads (%s)", pto, err))
        return;
    pc_vcam_coverage live;
    if (!TAP_CHECK(pc_vcam_coverage_init(&live, &rig, 1920, 1080, err, sizeof err) == 0,
                   "the live views' coverage of %s (%s)", pto, err))
        return;
    int ow, oh;
    pc_rig_output_size(&rig, &ow, &oh);
    /* the daemon's panorama.width=0 (the .pto's width, even: 8710), and small ones */
    const int widths[] = {(ow / 2) * 2, 1024, 640};
    for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++) {
        const int w = widths[k], h = (int)lround((double)w * oh / ow / 2) * 2;
        pc_rig src;
        err[0] = '\0';
        if (!TAP_CHECK(pc_rig_panorama_source(&rig, w, h, &src, err, sizeof err) == 0,
                       "stadium5 panorama %dx%d: source camera (%s)", w, h, err))
            continue;
        pc_vcam_coverage cov;
        const int rc = pc_vcam_coverage_init(&cov, &src, 1920, 1080, err, sizeof err);
        tap_diag("stadium5 panorama %dx%d: home pan %.2f tilt %.2f, max hfov %.2f (live: home tilt %.2f, max hfov "
                 "%.2f)", w, h, cov.home.pan, cov.home.tilt, cov.max_hfov, live.home.tilt, live.max_hfov);
        if (!TAP_CHECK(rc == 0, "stadium5 panorama %dx%d: a 1920x1080 view fits in it (%s)", w, h, rc ? err : "ok"))
            continue;
        TAP_CHECK(cov.home.tilt < -8 && cov.home.tilt > -16 && fabs(cov.home.pan) < 1 && cov.max_hfov > 25 &&
                      cov.max_hfov < 40,
                  "stadium5 panorama %dx%d: home in the middle of the picture (pan %.2f, tilt %.2f; the crop is "
                  "tilt -2.7 to -20.4), the widest 16:9 view %.2f (17.6 degrees high)", w, h, cov.home.pan,
                  cov.home.tilt, cov.max_hfov);
        /* the poses of the report, and the live views' pan range */
        int ok = 1, clamped = 0;
        char why[200] = "";
        for (int pan = -30; pan <= 30; pan += 10) {
            const pc_vcam_pose p = {pan, -12, 25};
            pc_vcam_limits lim;
            pc_vcam_limits_default(&lim);
            lim.min_hfov = 1;
            lim.max_hfov = 179.9;
            pc_vcam_pose q = p;
            ok &= pc_vcam_covered(&live, p) && pc_vcam_covered(&cov, p);
            if (pc_vcam_clamp(&cov, &lim, &q, why, sizeof why) && !clamped) {
                clamped = 1;
                tap_diag("pan %d tilt -12 hfov 25 clamped: %s", pan, why);
            }
        }
        TAP_CHECK(ok && !clamped, "stadium5 panorama %dx%d: views at pan -30..30, tilt -12, hfov 25 are covered "
                  "by the cameras and by the panorama, none clamped", w, h);
    }
}

/* --- rendering ------------------------------------------------------------ */

static double psnr_rgb(const pc_picture *a, const pc_picture *b)
{
    double sse = 0;
    long n = 0;
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < 3 * a->width; x++) {
            const double d =
                (double)a->plane[0][(size_t)y * a->pitch[0] + x] - b->plane[0][(size_t)y * b->pitch[0] + x];
            sse += d * d;
            n++;
        }
    return sse == 0 ? 99.0 : 10.0 * log10(255.0 * 255.0 * n / sse);
}

static void check_render(pc_cpu *cpu)
{
    char err[400] = "", names[64];
    for (int proj = PC_PROJ_CYLINDRICAL; proj <= PC_PROJ_EQUIRECT; proj++) {
        const char *pname = proj == PC_PROJ_CYLINDRICAL ? "cylindrical" : "equirectangular";
        pc_rig rig, src;
        /* the panorama at about twice the view's pixels a degree: 3 x 60
         * degree cameras 320 wide (5.3 px/deg); panorama 1280 over 140
         * degrees (9.1 px/deg); a view 256 over 40 (6.4 px/deg) */
        pc_synth_rig(&rig, NCAM, CW, CH, 60.0, 40.0, proj, 1280, 480);
        rig.pano.hfov = 140;
        pc_view_model pv;
        pc_rig_panorama_view(&rig, 1280, 480, &pv);
        pc_render_plan *pplan = NULL, *direct = NULL, *re = NULL, *re2 = NULL;
        pc_picture cams, pano, from_cams, from_pano, out;
        tu_pic_alloc_dev(&cams, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 8);
        pc_synth_cameras(&rig, DETAIL, NULL, &cams);
        tu_pic_alloc_dev(&pano, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, 1280, 480, 8);
        pc_render_options opt;
        pc_render_options_default(&opt);
        int ok = pc_render_plan_build(&pplan, &rig, &pv, NULL, &opt, err, sizeof err) == 0 &&
                 pc_render_ref(pplan, &cams, &pano, err, sizeof err) == 0 &&
                 pc_rig_panorama_source(&rig, 1280, 480, &src, err, sizeof err) == 0;
        if (!TAP_CHECK(ok, "%s: the panorama rendered from the cameras, its source camera (%s)", pname, err))
            continue;
        const double poses[3][3] = {{0, 0, 40}, {-25, -8, 30}, {20, 10, 50}};
        tu_pic_alloc_dev(&from_cams, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, 256, 144, 8);
        tu_pic_alloc_dev(&from_pano, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, 256, 144, 8);
        tu_pic_alloc_dev(&out, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, 256, 144, 8);
        pc_picture ref_nv12;
        tu_pic_alloc_dev(&ref_nv12, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, 256, 144, 8);
        double worst_psnr = 99;
        int lanes_bad = 0, lanes_runs = 0, emu_bad = 0, emu_runs = 0, move_bad = 0;
        for (int i = 0; i < 3; i++) {
            pc_view_model v;
            pc_rig_rect_view(256, 144, poses[i][2], poses[i][0], poses[i][1], 0, &v);
            if (pc_render_plan_build(&direct, &rig, &v, NULL, &opt, err, sizeof err) ||
                pc_render_plan_build(&re, &src, &v, NULL, &opt, err, sizeof err) ||
                pc_render_ref(direct, &cams, &from_cams, err, sizeof err) ||
                pc_render_ref(re, &pano, &from_pano, err, sizeof err) ||
                pc_render_ref(re, &pano, &ref_nv12, err, sizeof err)) {
                TAP_CHECK(0, "%s, pose %d: plans and renders: %s", pname, i, err);
                break;
            }
            double p = psnr_rgb(&from_cams, &from_pano);
            worst_psnr = fmin(worst_psnr, p);
            tap_diag("%s, pan %g tilt %g hfov %g: re-framed from the panorama against drawn from the cameras: %.2f dB",
                     pname, poses[i][0], poses[i][1], poses[i][2], p);
            for (int k = 0; k < RT_NLANES; k++) {
                if (!pc_render_cpu_lanes_usable(rt_lanes[k]))
                    continue;
                tu_pic_fill(&out, 0x5A);
                lanes_runs++;
                if (pc_render_cpu_lanes(pc_cpu_pool(cpu), rt_lanes[k], re, &pano, &out, err, sizeof err) ||
                    compare(&ref_nv12, &out).max)
                    lanes_bad++;
            }
            for (int var = PC_GPU_RENDER_RAY; var <= PC_GPU_RENDER_RAY_LOADS; var++) {
                /* the texture kernel takes RGBX32 only: loads for RGB24 */
                if (var == PC_GPU_RENDER_RAY)
                    continue;
                tu_pic_fill(&out, 0x5A);
                emu_runs++;
                diffstat d = {0, 0, 0};
                if (pc_emu_render(re, var, &pano, &out, err, sizeof err) ||
                    !within_rule(d = compare(&ref_nv12, &out))) {
                    tap_diag("%s: emulated %s: max %d, %ld of %ld over 1 %s", pname, pc_gpu_render_variant_name(var),
                             d.max, d.over1, d.n, err);
                    emu_bad++;
                }
            }
            /* a moving view: the plan of pose 0 moved here renders the same bytes */
            if (i > 0) {
                pc_view_model v0;
                pc_rig_rect_view(256, 144, poses[0][2], poses[0][0], poses[0][1], 0, &v0);
                tu_pic_fill(&out, 0x5A);
                if (pc_render_plan_build(&re2, &src, &v0, NULL, &opt, err, sizeof err) ||
                    pc_render_plan_set_view(re2, &v, err, sizeof err) ||
                    pc_render_ref(re2, &pano, &out, err, sizeof err) ||
                    compare(&ref_nv12, &out).max)
                    move_bad++;
                pc_render_plan_free(re2);
                re2 = NULL;
            }
            pc_render_plan_free(direct);
            pc_render_plan_free(re);
            direct = re = NULL;
        }
        TAP_CHECK(worst_psnr > 33.0, "%s: views re-framed from the panorama against the same views drawn from the "
                  "cameras: worst %.2f dB over 3 poses (> 33)", pname, worst_psnr);
        TAP_CHECK(lanes_bad == 0 && lanes_runs >= 3, "%s: the CPU backend's lanes (%s) == the reference, bit for bit, "
                  "drawing from the panorama camera (%d runs)", pname, rt_lanes_usable_names(names), lanes_runs);
        TAP_CHECK(emu_bad == 0 && emu_runs == 3, "%s: the emulated CUDA ray kernel (loads; the general projection) "
                  "within 1 code value on >= 99.9 %% of samples, max 2 (%d runs)", pname, emu_runs);
        TAP_CHECK(move_bad == 0, "%s: a moving view (pc_render_plan_set_view) from the panorama camera renders the "
                  "bytes of a plan built at its pose", pname);
        tu_pic_free(&cams);
        tu_pic_free(&pano);
        tu_pic_free(&from_cams);
        tu_pic_free(&from_pano);
        tu_pic_free(&out);
        tu_pic_free(&ref_nv12);
        pc_render_plan_free(pplan);
    }
}

/* --- the clip core: parts of a recording, progress, cancel --------------- */

/* n frames of the synthetic panorama (rendered from the cameras), encoded
 * by libx264 at 50 fps into path, timestamps from 0. */
static int write_part(const char *path, const pc_render_plan *pplan, const pc_picture *cams, int n, char *err,
                      size_t errlen)
{
    pc_encode_config ec;
    pc_encode_config_default(&ec);
    ec.width = pplan->view.w;
    ec.height = pplan->view.h;
    ec.fps_num = 50;
    ec.fps_den = 1;
    ec.encoder = "libx264";
    ec.codec = PC_CODEC_H264;
    ec.bitrate = 8000000;
    ec.outputs[0].url = path;
    ec.n_outputs = 1;
    pc_logger quiet = {NULL, NULL, PC_LOG_WARNING};
    ec.log = &quiet;
    pc_encoder *e = NULL;
    int rc = pc_encoder_open(&e, &ec, err, errlen);
    for (int k = 0; !rc && k < n; k++) {
        pc_picture pic;
        int on_dev = 0;
        rc = pc_encoder_frame(e, &pic, &on_dev, err, errlen);
        if (!rc)
            rc = pc_render_ref(pplan, cams, &pic, err, errlen);
        /* each frame its own: a bar whose luma is the frame's number */
        for (int y = 0; !rc && y < 16; y++)
            memset(pic.plane[0] + (size_t)y * pic.pitch[0], 16 + (k * 7) % 220, (size_t)pic.width);
        if (!rc)
            rc = pc_encoder_submit(e, (int64_t)k * 20000000, 0, err, errlen);
    }
    if (!rc)
        rc = pc_encoder_flush(e, err, errlen);
    pc_encoder_close(e);
    return rc;
}

typedef struct progress_log {
    int calls, last, total, cancel_after;
} progress_log;

static void on_progress(void *user, int done, int total)
{
    progress_log *l = user;
    l->calls++;
    l->last = done;
    l->total = total;
}

static int on_cancel(void *user)
{
    const progress_log *l = user;
    return l->cancel_after > 0 && l->last >= l->cancel_after;
}

static void check_clip(void)
{
    char err[512] = "";
    pc_rig rig;
    pc_synth_rig(&rig, NCAM, CW, CH, 60.0, 40.0, PC_PROJ_CYLINDRICAL, 640, 240);
    rig.pano.hfov = 140;
    snprintf(rig.path, sizeof rig.path, "synth.pto");
    pc_view_model pv;
    pc_rig_panorama_view(&rig, 640, 240, &pv);
    pc_render_plan *pplan = NULL;
    pc_picture cams;
    tu_pic_alloc_dev(&cams, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, CW, NCAM * CH, 8);
    pc_synth_cameras(&rig, DETAIL, NULL, &cams);
    char dir[] = "/tmp/pc-reframe-XXXXXX", part[2][64], out[64];
    int ok = mkdtemp(dir) != NULL && pc_render_plan_build(&pplan, &rig, &pv, NULL, NULL, err, sizeof err) == 0;
    for (int i = 0; ok && i < 2; i++) {
        snprintf(part[i], sizeof part[i], "%s/part%d.ts", dir, i + 1);
        ok = write_part(part[i], pplan, &cams, 25, err, sizeof err) == 0;
    }
    snprintf(out, sizeof out, "%s/clip.mp4", dir);
    if (!TAP_CHECK(ok, "two parts of a recording, 25 frames each, written by libx264 (%s)", err)) {
        tu_pic_free(&cams);
        pc_render_plan_free(pplan);
        return;
    }
    const char *inputs[2] = {part[0], part[1]};
    pc_replay_config cfg;
    pc_replay_config_default(&cfg);
    cfg.rig = &rig;
    cfg.panorama_width = 640;
    cfg.inputs = inputs;
    cfg.ninputs = 2;
    cfg.t0 = 0.3;
    cfg.t1 = 0.7;
    cfg.width = 160;
    cfg.height = 90;
    cfg.path.pose = (pc_vcam_pose){-10, 0, 40};
    cfg.output = out;
    cfg.backend = "cpu";
    cfg.threads = 2;
    progress_log pl = {0, 0, 0, 0};
    cfg.progress = on_progress;
    cfg.cancel = on_cancel;
    cfg.user = &pl;
    pc_logger quiet = {NULL, NULL, PC_LOG_WARNING};
    cfg.log = &quiet;
    pc_replay_result res;
    int rc = pc_replay_clip(&cfg, &res, err, sizeof err);
    TAP_CHECK(rc == 0 && res.frames == 20 && fabs(res.duration_s - 0.4) < 1e-9 && res.src_w == 640 &&
                  res.src_h == 240 && pl.calls == 20 && pl.last == 20 && pl.total == 20 && access(out, F_OK) == 0 &&
                  !strcmp(res.backend, "cpu"),
              "a clip of 0.3..0.7 s across the two parts (the second's timestamps start over, its frames follow on): "
              "%d frames, %.3f s, progress %d calls up to %d of %d, %d frames decoded (%s)", res.frames,
              res.duration_s, pl.calls, pl.last, pl.total, res.src_frames, rc ? err : "");
    TAP_CHECK(rc == 0 && res.src_frames >= 35 && res.src_frames <= 50, "it read on into the second part (%d frames "
              "decoded of 50)", res.src_frames);
    unlink(out);
    pl = (progress_log){0, 0, 0, 3};
    rc = pc_replay_clip(&cfg, &res, err, sizeof err);
    TAP_CHECK(rc == PC_REPLAY_ECANCELED && pl.calls == 3 && access(out, F_OK) != 0 && strstr(err, "cancelled after 3"),
              "cancelled after 3 frames: rc %d, no clip left behind, \"%s\"", rc, err);
    pl.cancel_after = 0;
    cfg.t1 = 1.5;
    rc = pc_replay_clip(&cfg, &res, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "to 1.5 s") && strstr(err, "(2 files) is 1.000 s long") &&
                  access(out, F_OK) != 0,
              "an end past the two parts: \"%s\"", err);
    cfg.t1 = 0.7;
    cfg.panorama_width = 320;
    rc = pc_replay_clip(&cfg, &res, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "the recording is 640 wide, but panorama.width is 320"),
              "a panorama.width the recording was not made with: \"%s\"", err);
    /* a clip far into a longer recording: entered by a seek, the same bytes
     * as read from the start */
    char longp[64], a[64], b[64];
    snprintf(longp, sizeof longp, "%s/long.ts", dir);
    snprintf(a, sizeof a, "%s/seek.mp4", dir);
    snprintf(b, sizeof b, "%s/read.mp4", dir);
    const char *one[1] = {longp};
    cfg.inputs = one;
    cfg.ninputs = 1;
    cfg.panorama_width = 640;
    cfg.t0 = 5.0;
    cfg.t1 = 5.3;
    cfg.progress = NULL;
    cfg.cancel = NULL;
    pc_replay_result rs, rr;
    cfg.output = a;
    int rc1 = write_part(longp, pplan, &cams, 300, err, sizeof err);
    if (!rc1)
        rc1 = pc_replay_clip(&cfg, &rs, err, sizeof err);
    cfg.output = b;
    cfg.no_seek = 1;
    int rc2 = rc1 ? rc1 : pc_replay_clip(&cfg, &rr, err, sizeof err);
    int same = 0;
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    if (fa && fb) {
        same = 1;
        for (int ca, cb; same;) {
            ca = fgetc(fa);
            cb = fgetc(fb);
            same = ca == cb;
            if (ca == EOF)
                break;
        }
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    TAP_CHECK(rc1 == 0 && rc2 == 0 && rs.seeked && !rr.seeked && rs.frames == 15 && rr.frames == 15 && same &&
                  rs.src_frames < rr.src_frames,
              "5.0..5.3 s of a 6 s recording: entered by a seek (%d frames decoded) or read from the start (%d): "
              "15 frames each, the same clip byte for byte%s%s", rc1 ? 0 : rs.src_frames, rc2 ? 0 : rr.src_frames,
              err[0] && (rc1 || rc2) ? ": " : "", rc1 || rc2 ? err : "");
    unlink(a);
    unlink(b);
    unlink(longp);
    unlink(part[0]);
    unlink(part[1]);
    rmdir(dir);
    tu_pic_free(&cams);
    pc_render_plan_free(pplan);
}

/* --- the backend's picture upload (a decoded frame into its memory) ------- */

static void check_upload(void)
{
    char err[256] = "", err2[256] = "";
    pc_backend *be = NULL;
    pc_backend_config bc = {.width = 64, .height = 32, .slots = 1, .threads = 1};
    pc_picture host, dst, small;
    memset(&dst, 0, sizeof dst);
    memset(&small, 0, sizeof small);
    int ok = pc_backend_open(&be, &pc_backend_cpu, &bc, err, sizeof err) == 0 &&
             pc_backend_host_picture_alloc(&pc_backend_cpu, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, 64, 32,
                                           &host, err, sizeof err) == 0 &&
             pc_backend_render_picture_alloc(be, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, 64, 32, &dst, err,
                                             sizeof err) == 0 &&
             pc_backend_render_picture_alloc(be, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, 32, 32, &small,
                                             err, sizeof err) == 0;
    int same = 0, refused = 0;
    if (ok) {
        for (int y = 0; y < 32; y++)
            for (int x = 0; x < 256; x++)
                host.plane[0][(size_t)y * host.pitch[0] + x] = (uint8_t)(x * 7 + y * 13);
        ok = pc_backend_picture_upload(be, 0, &host, &dst, err, sizeof err) == 0 &&
             pc_backend_wait(be, 0, err, sizeof err) == 0;
        same = 1;
        for (int y = 0; y < 32; y++)
            same &= !memcmp(host.plane[0] + (size_t)y * host.pitch[0], dst.plane[0] + (size_t)y * dst.pitch[0], 256);
        refused = pc_backend_picture_upload(be, 0, &host, &small, err2, sizeof err2) == PC_EINVAL &&
                  strstr(err2, "differ") != NULL;
    }
    TAP_CHECK(ok && same, "the CPU backend's picture upload: a host RGBX32 picture into one of the backend, byte for "
              "byte%s%s", err[0] ? ": " : "", err);
    TAP_CHECK(refused, "an upload into a picture of another size is refused: %s", err2);
    if (dst.plane[0])
        pc_backend_picture_free(be, &dst);
    if (small.plane[0])
        pc_backend_picture_free(be, &small);
    pc_backend_host_picture_free(&pc_backend_cpu, &host);
    pc_backend_close(be);
}

/* --- keyframes ------------------------------------------------------------ */

static void check_keyframes(void)
{
    pc_replay_keyframe *kf = NULL;
    int n = 0;
    char err[400] = "";
    const char *good = "# time pan tilt hfov\n0 -20 -10 40\n\n2.0, 10, -5, 30  # comment\n4 10 -5 50\r\n";
    int rc = pc_replay_keyframes_parse(good, "kf.txt", &kf, &n, err, sizeof err);
    TAP_CHECK(rc == 0 && n == 3 && kf[1].t == 2.0 && kf[1].pan == 10 && kf[2].hfov == 50,
              "a keyframe file with comments, commas, blank lines and CRLF: 3 keyframes (%s)", err);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"0 0 0 40\n1 0 0\n", "kf.txt:2: field 4 (hfov): missing"},
        {"0 0 0 40\n1 x 0 40\n", "kf.txt:2: field 2 (pan): not a number"},
        {"0 0 0 40\n2 0 0 40\n2 1 0 40\n", "kf.txt:3: time 2: not after the previous keyframe's 2"},
        {"0 0 0 40 7\n", "kf.txt:1: \"7\" after the four fields"},
        {"0 0 95 40\n", "kf.txt:1: pan 0, tilt 95"},
        {"-1 0 0 40\n", "kf.txt:1: time -1: before the recording's start"},
        {"# nothing\n", "kf.txt: no keyframe"},
    };
    int bad_ok = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pc_replay_keyframe *k2 = NULL;
        int n2 = 0;
        err[0] = 0;
        int r = pc_replay_keyframes_parse(bad[i].text, "kf.txt", &k2, &n2, err, sizeof err);
        if (r && strstr(err, bad[i].want) && !k2)
            bad_ok++;
        else
            tap_diag("keyframes \"%s\": rc %d, \"%s\" (expected \"%s\")", bad[i].text, r, err, bad[i].want);
        free(k2);
    }
    TAP_CHECK(bad_ok == (int)(sizeof bad / sizeof bad[0]), "bad keyframe files refused, naming line and field (%d "
              "of %zu)", bad_ok, sizeof bad / sizeof bad[0]);
    if (rc)
        return;
    pc_replay_path path;
    pc_replay_path_default(&path, (pc_vcam_pose){0, 0, 60});
    path.kind = PC_REPLAY_KEYFRAMES;
    path.kf = kf;
    path.nkf = n;
    pc_replay_stepper st;
    pc_replay_stepper_init(&st, &path);
    const double dt = 0.02;
    double worst_at = 0, prev_pan = -20, max_step = 0;
    int hold = 1;
    for (int i = 0; i <= 350; i++) {
        const double t = i * dt;
        pc_vcam_pose p = pc_replay_stepper_at(&st, t, dt);
        for (int j = 0; j < n; j++)
            if (fabs(t - kf[j].t) < 1e-9)
                worst_at = fmax(worst_at, fmax(fabs(p.pan - kf[j].pan), fmax(fabs(p.tilt - kf[j].tilt),
                                                                          fabs(p.hfov - kf[j].hfov))));
        max_step = fmax(max_step, fabs(p.pan - prev_pan));
        prev_pan = p.pan;
        if (t > 5.5 + 1e-9)
            hold &= fabs(p.pan - 10) < 0.01 && fabs(p.hfov - 50) < 0.01;
        if (i == 50)
            tap_diag("keyframes: at 1.0 s pan %.3f tilt %.3f hfov %.3f (between -20/-10/40 and 10/-5/30)", p.pan,
                     p.tilt, p.hfov);
    }
    /* the live views' follower arrives with a little lag and settles (a
     * 30 degree move in 2 s: within 0.7 degrees at the keyframe's time) */
    TAP_CHECK(worst_at < 1.0, "the keyframe path is at every keyframe's pose at its time within 1 degree (worst "
              "%.4f degrees: the live views' motion, eased in and out)", worst_at);
    TAP_CHECK(max_step <= path.lim.max_speed * dt + 1e-9 && hold, "the pan never moves faster than the live views' "
              "limit (%.3f degrees a frame at most, %.3f allowed); after the last keyframe it settles there", max_step,
              path.lim.max_speed * dt);
    pc_replay_stepper_init(&st, &path);
    pc_vcam_pose early = pc_replay_stepper_at(&st, 0.0, dt);
    TAP_CHECK(early.pan == -20 && early.tilt == -10 && early.hfov == 40, "at the first keyframe's time: its pose");
    free(kf);
}

int main(int argc, char **argv)
{
    char err[256];
    check_geometry();
    if (argc > 1)
        check_stadium_rig(argv[1]);
    else
        printf("Bail out! usage: test_reframe RIG.pto (rig/examples/stadium5.pto)\n");
    check_keyframes();
    check_upload();
    check_clip();
    pc_cpu *cpu = NULL;
    if (pc_cpu_open(&cpu, 2, 16, 16, err, sizeof err)) {
        printf("Bail out! pc_cpu_open: %s\n", err);
        return 1;
    }
    check_render(cpu);
    pc_cpu_close(cpu);
    return tap_done();
}
