/* panocap-scene - pictures and ground truth of the simulated stadium
 * (capture/scene.h) as the cameras of a Hugin rig (.pto) see it, for the
 * panorama, virtual-camera and calibration checks and for a look at the
 * fake cameras' scene:
 *
 *   DIR/cam<i>.png    camera i's picture (RGB, its own photometry)
 *   DIR/rig.pto       the rig with its images named cam<i>.png (nona reads it)
 *   DIR/panorama.png  the scene rendered directly in the p line's projection
 *                     and crop: the ground truth of a stitched panorama
 *   DIR/view.png      with --view: a rectilinear view at pan/tilt/hfov
 *   DIR/objects.csv   ball, players, referee: positions, velocities and
 *                     where each appears in the panorama, view and cameras
 *
 *   panocap-scene --rig FILE.pto --out DIR [--time T] [--seed N] [--only LIST]
 *                 [--view PAN,TILT,HFOV[,WxH]] [--panorama-width W]
 *                 [--scale K] [--static] [--threads N] | --coverage
 *
 * Exit status: 0 done, 1 a file could not be read or written (the message
 * names it, a .pto error its line and field), 64 usage error.
 */
#include "capture.h"
#include "image.h"
#include "rig.h"
#include "scene.h"
#include "tool_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { OUT_CAMERAS = 1, OUT_PANORAMA = 2, OUT_VIEW = 4, OUT_OBJECTS = 8 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: panocap-scene --rig FILE.pto --out DIR [options]\n"
            "Renders the simulated stadium as the cameras of a Hugin rig see it at scene time T:\n"
            "DIR/cam<i>.png (each camera, with its exposure, white balance, vignetting and\n"
            "response), DIR/rig.pto (the rig naming those pictures), DIR/panorama.png (the scene\n"
            "rendered directly in the p line's projection and crop: the ground truth),\n"
            "DIR/view.png (with --view) and DIR/objects.csv (who is where).\n"
            "\n"
            "  -r, --rig FILE         the rig (.pto); its cameras are the scene's cameras\n"
            "  -o, --out DIR          output folder (created if missing)\n"
            "  -t, --time T           scene time in seconds (default 0)\n"
            "      --seed N           the match (default 1; the same seed, the same motion)\n"
            "      --only LIST        comma-separated: cameras, panorama, view, objects\n"
            "                         (default: all of them; view only with --view)\n"
            "      --view PAN,TILT,HFOV[,WxH]  a rectilinear view (degrees; default 1920x1080)\n"
            "      --panorama-width W render the panorama W wide (default: the p line's output\n"
            "                         size; the height follows the crop's aspect)\n"
            "      --scale K          shrink the rig first: every size, lens shift and crop / K\n"
            "                         (the scaled rig is what DIR/rig.pto holds)\n"
            "      --static           leave the ball, players and referee out\n"
            "      --threads N        render threads (default: one per CPU)\n"
            "      --coverage         print the largest rectangle of the p line's canvas that the\n"
            "                         cameras cover completely (a crop S for the p line) and exit\n"
            "      --loop SECONDS     build the fake cameras' frames (SECONDS of the match at --fps,\n"
            "                         Bayer RGGB) as the fake source does, report their cost (render\n"
            "                         time, memory, time to draw a frame) and exit\n"
            "      --fps F            frame rate for --loop (default 50)\n"
            "      --pcraw FILE       with --loop: also write its frames (forwards and backwards,\n"
            "                         as the fake cameras play them) as a raw recording that\n"
            "                         panocap replays (--source file:FILE, capture.file_loop):\n"
            "                         the scene on a machine without Aravis\n"
            "  -h, --help             this text\n"
            "      --version          the version\n");
}

static int parse_size(const char *s, int *w, int *h)
{
    char *end;
    long a = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X'))
        return -1;
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (end == p || *end || a < 2 || b < 2 || a > 65536 || b > 65536)
        return -1;
    *w = (int)a;
    *h = (int)b;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int render_png(const pc_scene *s, const pc_scene_eye *eye, double t, int flags, int threads,
                      const char *path)
{
    char err[512];
    uint8_t *rgb = malloc((size_t)eye->w * eye->h * 3);
    if (!rgb) {
        fprintf(stderr, "panocap-scene: %s: out of memory for %dx%d\n", path, eye->w, eye->h);
        return 1;
    }
    double t0 = now_s();
    int rc = pc_scene_render(s, eye, t, flags, threads, 0, 0, eye->w, eye->h, rgb, 3 * (size_t)eye->w, err,
                             sizeof err);
    double dt = now_s() - t0;
    if (!rc)
        rc = pc_image_write(path, rgb, 3 * (size_t)eye->w, eye->w, eye->h, err, sizeof err);
    free(rgb);
    if (rc) {
        fprintf(stderr, "panocap-scene: %s\n", err);
        return 1;
    }
    printf("%s: %dx%d, rendered in %.3f s\n", path, eye->w, eye->h, dt);
    return 0;
}

/* The largest canvas rectangle every pixel of which some camera sees. */
static int coverage(const pc_rig *rig)
{
    pc_rig full = *rig;
    memset(full.pano.crop, 0, sizeof full.pano.crop);
    pc_view_model v;
    pc_rig_panorama_view(&full, full.pano.w, full.pano.h, &v);
    pc_cam_model cm[PC_RIG_MAX_CAMERAS];
    for (int i = 0; i < rig->ncam; i++)
        pc_rig_camera_model(rig, i, &cm[i]);
    const int W = v.w, H = v.h;
    int *L = malloc(sizeof(int) * H), *R = malloc(sizeof(int) * H);
    if (!L || !R) {
        free(L);
        free(R);
        fprintf(stderr, "panocap-scene: out of memory\n");
        return 1;
    }
    /* per row the longest run of covered columns */
    for (int y = 0; y < H; y++) {
        int best = 0, run = 0;
        L[y] = 0;
        R[y] = -1;
        for (int x = 0; x <= W; x++) {
            int cov = 0;
            if (x < W) {
                float ray[3], sx, sy;
                pc_view_ray(&v, (float)x, (float)y, ray);
                for (int i = 0; i < rig->ncam && !cov; i++)
                    cov = pc_cam_project(&cm[i], ray, &sx, &sy);
            }
            if (cov) {
                run++;
            } else {
                if (run > best) {
                    best = run;
                    L[y] = x - run;
                    R[y] = x - 1;
                }
                run = 0;
            }
        }
    }
    long long area = 0;
    int bl = 0, br = -1, bt = 0, bb = -1;
    for (int t = 0; t < H; t++) {
        int l = L[t], r = R[t];
        for (int b = t; b < H && r >= l; b++) {
            l = L[b] > l ? L[b] : l;
            r = R[b] < r ? R[b] : r;
            long long a = (long long)(r - l + 1) * (b - t + 1);
            if (r >= l && a > area)
                area = a, bl = l, br = r, bt = t, bb = b;
        }
    }
    free(L);
    free(R);
    if (area == 0) {
        fprintf(stderr, "panocap-scene: no canvas pixel is seen by a camera\n");
        return 1;
    }
    printf("S%d,%d,%d,%d\n", bl, br + 1, bt, bb + 1);
    return 0;
}

static int write_objects(const pc_scene *s, const pc_rig *rig, double t, const pc_view_model *pano,
                         const pc_view_model *view, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "panocap-scene: %s: %s\n", path, strerror(errno));
        return 1;
    }
    pc_scene_object obj[PC_SCENE_MAX_OBJECTS];
    int n = pc_scene_objects(s, t, obj, PC_SCENE_MAX_OBJECTS);
    fprintf(f, "t,kind,team,number,x,y,z,vx,vy,vz,pano_x,pano_y");
    if (view)
        fprintf(f, ",view_x,view_y");
    for (int i = 0; i < rig->ncam; i++)
        fprintf(f, ",cam%d_x,cam%d_y", i, i);
    fprintf(f, "\n");
    for (int k = 0; k < n; k++) {
        const pc_scene_object *o = &obj[k];
        const double c[3] = {o->x, o->y, o->kind == PC_SCENE_BALL ? o->z : o->z + 0.5 * o->height};
        float ray[3], x, y;
        pc_scene_ray_to(c, ray);
        fprintf(f, "%.4f,%s,%d,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f", t, pc_scene_kind_name(o->kind), o->team,
                o->number, o->x, o->y, o->z, o->vx, o->vy, o->vz);
        const pc_view_model *vs[2] = {pano, view};
        for (int q = 0; q < 2; q++) {
            if (!vs[q])
                continue;
            if (pc_view_project(vs[q], ray, &x, &y))
                fprintf(f, ",%.3f,%.3f", x, y);
            else
                fprintf(f, ",,");
        }
        for (int i = 0; i < rig->ncam; i++) {
            pc_cam_model cm;
            pc_rig_camera_model(rig, i, &cm);
            if (pc_cam_project(&cm, ray, &x, &y))
                fprintf(f, ",%.3f,%.3f", x, y);
            else
                fprintf(f, ",,");
        }
        fprintf(f, "\n");
    }
    if (fclose(f)) {
        fprintf(stderr, "panocap-scene: %s: write error: %s\n", path, strerror(errno));
        return 1;
    }
    printf("%s: %d objects at t = %g s\n", path, n, t);
    return 0;
}

/* The loop's frames n_frames long as a .pcraw (capture/raw_format.md). */
static int write_pcraw(const pc_scene_loop *l, const pc_rig *rig, uint64_t n, double fps, const char *path)
{
    char err[512];
    const int w = rig->cam[0].w, h = rig->cam[0].h;
    for (int i = 1; i < rig->ncam; i++)
        if (rig->cam[i].w != w || rig->cam[i].h != h) {
            fprintf(stderr, "panocap-scene: --pcraw: camera %d is %dx%d, camera 0 %dx%d; a recording holds cameras "
                    "of one size\n", i, rig->cam[i].w, rig->cam[i].h, w, h);
            return 1;
        }
    uint8_t *buf = malloc((size_t)w * h * rig->ncam);
    pc_raw_writer *wr = NULL;
    if (!buf || pc_raw_writer_open(&wr, path, w, h, rig->ncam, PC_CFA_RGGB, fps, err, sizeof err)) {
        fprintf(stderr, "panocap-scene: --pcraw %s: %s\n", path, buf ? err : "out of memory");
        free(buf);
        return 1;
    }
    pc_frameset fs;
    memset(&fs, 0, sizeof fs);
    fs.n = rig->ncam;
    fs.width = w;
    fs.height = h;
    fs.cfa = PC_CFA_RGGB;
    fs.fmt = (pc_rawfmt){.bits = 8, .cfa = PC_CFA_RGGB};
    fs.slab_bytes = (size_t)w * h;
    for (int i = 0; i < rig->ncam; i++) {
        fs.slab[i] = buf + (size_t)i * w * h;
        fs.pitch[i] = (size_t)w;
        fs.camera[i] = i;
    }
    fs.stacked = buf;
    fs.stacked_pitch = (size_t)w;
    int rc = 0;
    for (uint64_t k = 0; k < n && !rc; k++) {
        for (int i = 0; i < rig->ncam; i++)
            pc_scene_loop_fill(l, i, k, buf + (size_t)i * w * h, (size_t)w);
        fs.index = k;
        fs.pts_ns = (int64_t)(k * 1e9 / fps);
        rc = pc_raw_writer_write(wr, &fs, err, sizeof err);
    }
    if (!rc)
        rc = pc_raw_writer_close(wr, err, sizeof err);
    else
        pc_raw_writer_close(wr, NULL, 0);
    free(buf);
    if (rc) {
        fprintf(stderr, "panocap-scene: --pcraw %s: %s\n", path, err);
        return 1;
    }
    printf("%s: %llu frame sets of %d cameras %dx%d (RGGB) at %g fps\n", path, (unsigned long long)n, rig->ncam, w, h,
           fps);
    return 0;
}

/* The fake source's frames: what building them costs, and drawing one. */
static int loop_bench(const pc_rig *rig, uint64_t seed, double seconds, double fps, int threads, const char *pcraw)
{
    char err[512];
    pc_scene *s;
    pc_scene_loop *l;
    if (pc_scene_create(&s, "stadium", seed, err, sizeof err) ||
        pc_scene_loop_create(&l, s, rig, rig->ncam, PC_CFA_RGGB, fps, seconds, threads, err, sizeof err)) {
        fprintf(stderr, "panocap-scene: %s\n", err);
        return 1;
    }
    pc_scene_loop_info info;
    pc_scene_loop_info_get(l, &info);
    size_t max = 0;
    for (int i = 0; i < rig->ncam; i++)
        max = (size_t)rig->cam[i].w * rig->cam[i].h > max ? (size_t)rig->cam[i].w * rig->cam[i].h : max;
    uint8_t *buf = malloc(max);
    if (!buf) {
        fprintf(stderr, "panocap-scene: out of memory\n");
        return 1;
    }
    const uint64_t n = 2 * (uint64_t)info.frames - 2;
    double t0 = now_s();
    for (uint64_t k = 0; k < n; k++)
        for (int i = 0; i < rig->ncam; i++)
            pc_scene_loop_fill(l, i, k, buf, (size_t)rig->cam[i].w);
    double fill = (now_s() - t0) / (double)(n * rig->ncam);
    printf("loop: %d cameras, %d frames (%.2f s at %g fps, played forwards and backwards)\n", rig->ncam,
           info.frames, seconds, fps);
    printf("built in %.2f s (%d threads): backgrounds and %.0f patch pixels per frame set\n", info.render_s,
           threads ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN), info.patch_pixels);
    printf("memory %.1f MB; drawing one camera frame %.3f ms (one core: %.0f frame sets/s)\n",
           info.bytes / 1e6, fill * 1e3, 1.0 / (fill * rig->ncam));
    free(buf);
    int rc = pcraw ? write_pcraw(l, rig, n, fps, pcraw) : 0;
    pc_scene_loop_destroy(l);
    pc_scene_destroy(s);
    return rc;
}

int main(int argc, char **argv)
{
    static const pc_tool tool = {"panocap-scene", usage};
    enum { O_SEED = 1000, O_ONLY, O_VIEW, O_PANOW, O_SCALE, O_STATIC, O_THREADS, O_COVERAGE, O_LOOP, O_FPS, O_PCRAW };
    static const struct option opts[] = {
        {"rig", required_argument, NULL, 'r'}, {"out", required_argument, NULL, 'o'},
        {"time", required_argument, NULL, 't'}, {"seed", required_argument, NULL, O_SEED},
        {"only", required_argument, NULL, O_ONLY}, {"view", required_argument, NULL, O_VIEW},
        {"panorama-width", required_argument, NULL, O_PANOW}, {"scale", required_argument, NULL, O_SCALE},
        {"static", no_argument, NULL, O_STATIC}, {"threads", required_argument, NULL, O_THREADS},
        {"coverage", no_argument, NULL, O_COVERAGE}, {"loop", required_argument, NULL, O_LOOP},
        {"fps", required_argument, NULL, O_FPS}, {"pcraw", required_argument, NULL, O_PCRAW}, PC_TOOL_STD_OPTIONS, {NULL, 0, NULL, 0},
    };
    const char *rig_path = NULL, *dir = NULL, *only = NULL, *view_arg = NULL, *pcraw = NULL;
    double t = 0.0, scale = 1.0, pan = 0, tilt = 0, hfov = 0, loop_s = 0, fps = 50;
    long long seed = 1, threads = 0, pano_w = 0;
    int flags = 0, want_coverage = 0, vw = 1920, vh = 1080, c, rc;
    while ((c = pc_tool_getopt(&tool, argc, argv, "r:o:t:h", opts)) != -1) {
        switch (c) {
        case 'r': rig_path = optarg; break;
        case 'o': dir = optarg; break;
        case 't':
            if ((rc = pc_tool_double(&tool, "--time", optarg, -1e6, 1e6, &t)))
                return rc;
            break;
        case O_SEED:
            if ((rc = pc_tool_int(&tool, "--seed", optarg, 0, (long long)1 << 62, &seed)))
                return rc;
            break;
        case O_ONLY: only = optarg; break;
        case O_VIEW: view_arg = optarg; break;
        case O_PANOW:
            if ((rc = pc_tool_int(&tool, "--panorama-width", optarg, 16, 65536, &pano_w)))
                return rc;
            break;
        case O_SCALE:
            if ((rc = pc_tool_double(&tool, "--scale", optarg, 1.0, 100.0, &scale)))
                return rc;
            break;
        case O_STATIC: flags |= PC_SCENE_STATIC; break;
        case O_THREADS:
            if ((rc = pc_tool_int(&tool, "--threads", optarg, 0, 64, &threads)))
                return rc;
            break;
        case O_COVERAGE: want_coverage = 1; break;
        case O_LOOP:
            if ((rc = pc_tool_double(&tool, "--loop", optarg, 0.04, 600, &loop_s)))
                return rc;
            break;
        case O_FPS:
            if ((rc = pc_tool_double(&tool, "--fps", optarg, 1, 1000, &fps)))
                return rc;
            break;
        case O_PCRAW: pcraw = optarg; break;
        case 'h': usage(stdout); return 0;
        default: return pc_tool_std_option(&tool, c, argv);
        }
    }
    if ((rc = pc_tool_no_operands(&tool, argc, argv)))
        return rc;
    if (!rig_path)
        return pc_tool_usage_error(&tool, "--rig: no rig given");
    if (view_arg) {
        char size[64] = "";
        int k = sscanf(view_arg, "%lf,%lf,%lf,%63s", &pan, &tilt, &hfov, size);
        if (k < 3 || !(hfov > 0.5 && hfov < 179.0) || fabs(pan) > 360 || fabs(tilt) > 90 ||
            (k == 4 && parse_size(size, &vw, &vh)))
            return pc_tool_usage_error(&tool, "--view: '%s' is not PAN,TILT,HFOV[,WxH] (degrees; 0 < HFOV < 179)",
                                       view_arg);
    }
    int outputs = OUT_CAMERAS | OUT_PANORAMA | OUT_OBJECTS | (view_arg ? OUT_VIEW : 0);
    if (only) {
        outputs = 0;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", only);
        for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            if (!strcmp(w, "cameras"))
                outputs |= OUT_CAMERAS;
            else if (!strcmp(w, "panorama"))
                outputs |= OUT_PANORAMA;
            else if (!strcmp(w, "view"))
                outputs |= OUT_VIEW;
            else if (!strcmp(w, "objects"))
                outputs |= OUT_OBJECTS;
            else
                return pc_tool_usage_error(&tool, "--only: '%s' is not one of cameras, panorama, view, objects", w);
        }
        if ((outputs & OUT_VIEW) && !view_arg)
            return pc_tool_usage_error(&tool, "--only view needs --view PAN,TILT,HFOV");
    }
    if (!dir && !want_coverage && !loop_s)
        return pc_tool_usage_error(&tool, "--out: no output folder given");

    char err[512];
    static pc_rig rig;
    if (pc_rig_load(rig_path, &rig, err, sizeof err)) {
        fprintf(stderr, "panocap-scene: %s\n", err);
        return 1;
    }
    if (scale != 1.0)
        pc_scene_rig_scale(&rig, scale);
    if (want_coverage)
        return coverage(&rig);
    if (loop_s)
        return loop_bench(&rig, (uint64_t)seed, loop_s, fps, (int)threads, pcraw);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "panocap-scene: %s: cannot create: %s\n", dir, strerror(errno));
        return 1;
    }
    pc_scene *s;
    if (pc_scene_create(&s, "stadium", (uint64_t)seed, err, sizeof err)) {
        fprintf(stderr, "panocap-scene: %s\n", err);
        return 1;
    }
    char path[4096];
    int fail = 0;
    for (int i = 0; i < rig.ncam; i++)
        snprintf(rig.cam[i].file, sizeof rig.cam[i].file, "cam%d.png", i);
    if (outputs & OUT_CAMERAS) {
        static pc_scene_eye eye;
        for (int i = 0; i < rig.ncam && !fail; i++) {
            pc_scene_eye_camera(&rig, i, &eye);
            snprintf(path, sizeof path, "%s/cam%d.png", dir, i);
            fail = render_png(s, &eye, t, flags, (int)threads, path);
        }
        snprintf(path, sizeof path, "%s/rig.pto", dir);
        if (!fail && pc_rig_save(&rig, path, err, sizeof err)) {
            fprintf(stderr, "panocap-scene: %s\n", err);
            fail = 1;
        }
    }
    int ow, oh;
    pc_rig_output_size(&rig, &ow, &oh);
    if (pano_w) {
        oh = (int)lround((double)oh * pano_w / ow);
        ow = (int)pano_w;
    }
    pc_view_model pano, view;
    pc_rig_panorama_view(&rig, ow, oh, &pano);
    pc_rig_rect_view(vw, vh, hfov, pan, tilt, 0.0, &view);
    if (!fail && (outputs & OUT_PANORAMA)) {
        static pc_scene_eye eye;
        pc_scene_eye_view(&pano, &rig, &eye);
        snprintf(path, sizeof path, "%s/panorama.png", dir);
        fail = render_png(s, &eye, t, flags, (int)threads, path);
    }
    if (!fail && (outputs & OUT_VIEW)) {
        static pc_scene_eye eye;
        pc_scene_eye_view(&view, &rig, &eye);
        snprintf(path, sizeof path, "%s/view.png", dir);
        fail = render_png(s, &eye, t, flags, (int)threads, path);
    }
    if (!fail && (outputs & OUT_OBJECTS)) {
        snprintf(path, sizeof path, "%s/objects.csv", dir);
        fail = write_objects(s, &rig, t, &pano, view_arg ? &view : NULL, path);
    }
    pc_scene_destroy(s);
    return fail ? 1 : 0;
}
