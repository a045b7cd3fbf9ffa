/* eval_follow.c - (d) the follow mode on the synthetic match, run the way
 * the daemon runs it, frame by frame at 50 fps:
 *
 *   the fake cameras' frames (pc_scene_loop: the match as each camera of
 *   the rig sees it, Bayer RGGB; the rig shrunk --follow-camera-scale
 *   times to keep the CPU time sane) -> the demosaic (edge, the daemon's
 *   default) -> a small panorama by the render family (1/8 of the .pto's
 *   output size, the .pto's photometry, NV12: its luma plane) ->
 *   pc_activity_ref -> pc_follow_update -> pc_vcam_clamp ->
 *   pc_vcam_motion_go / pc_vcam_motion_step (the daemon's order,
 *   daemon/vcams.c), a 1920x1080 view;
 *
 * and against the scene's known positions at each frame's time:
 *  - the ball inside the middle 60 % of the view's width (and of its
 *    height), on what share of the frames after a 2 s warm-up (the
 *    background model learns the pitch, the first framing settles);
 *  - the largest pan speed and acceleration, against the limits;
 *  - while the play is still (the players' centroid has moved less than
 *    STILL_CENTROID and the ball less than STILL_BALL degrees a second,
 *    in pan as the rig sees them, in every half second from STILL_BEFORE
 *    before the frame to STILL_AFTER after it: the view has had time to
 *    settle): the frame-to-frame |delta pan| (max and 99th percentile;
 *    bound STILL_MAX_STEP, a sixth of the speed limit: a view settling,
 *    never a pan), the shake (its change from frame to frame, bound by
 *    the motion's acceleration limit) and how often the pan turns back
 *    (a reversal: delta pan flips sign, both steps above 0.001 degrees);
 *  - DIR/follow.csv (every frame) and DIR/follow.png: pan against time,
 *    the view's width (grey) and its middle 60 % (light blue), the view's
 *    pan (blue), the ball's (red), the players' centroid (green), still
 *    frames marked yellow along the bottom, a grid line every 10 s and
 *    every 10 degrees (0 degrees darker).
 */
#include "eval.h"

#include "activity.h"
#include "follow.h"
#include "image.h"
#include "vcam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FPS 50.0
#define WARMUP_S 2.0
#define VIEW_W 1920
#define VIEW_H 1080
#define STILL_CENTROID 1.0 /* degrees per second */
#define STILL_BALL 2.0     /* degrees per second */
#define STILL_BEFORE 1.5   /* seconds the play has been still */
#define STILL_AFTER 0.5    /* and stays still */
#define STILL_MAX_STEP 0.1 /* degrees per frame (5 deg/s): a view that settles, not one that pans */

/* The activity map's parameters (render/activity.h): background forgets
 * in ~1.3 s at 50 fps, a luma step of 12 is foreground, 8x8 cells. */
static const pc_activity_params act_par = {.shift = 6, .threshold = 12, .cw = 8, .ch = 8};

typedef struct frame {
    double t;
    pc_vcam_pose p;
    double ball_pan, ball_tilt, cen_pan;
    double bx, by; /* the ball in the view, 0..1 (NaN: behind it) */
    int still;
    double activity;
} frame;


static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* --- the plot ----------------------------------------------------------- */

typedef struct plot {
    int w, h;
    uint8_t *rgb;
    double t0, t1, p0, p1;
} plot;

static void put(plot *g, int x, int y, const uint8_t c[3])
{
    if (x >= 0 && y >= 0 && x < g->w && y < g->h)
        memcpy(g->rgb + 3 * ((size_t)y * g->w + x), c, 3);
}
static int px(const plot *g, double t) { return (int)lround((t - g->t0) / (g->t1 - g->t0) * (g->w - 1)); }
static int py(const plot *g, double p) { return (int)lround((g->p1 - p) / (g->p1 - g->p0) * (g->h - 1)); }

static void vspan(plot *g, int x, double a, double b, const uint8_t c[3])
{
    int y0 = py(g, fmax(a, b)), y1 = py(g, fmin(a, b));
    for (int y = y0; y <= y1; y++)
        put(g, x, y, c);
}

/* A line from (t, p) to (t2, p2), two pixels thick. */
static void line(plot *g, double t, double p, double t2, double p2, const uint8_t c[3])
{
    int x0 = px(g, t), y0 = py(g, p), x1 = px(g, t2), y1 = py(g, p2);
    int n = abs(x1 - x0) > abs(y1 - y0) ? abs(x1 - x0) : abs(y1 - y0);
    for (int i = 0; i <= n; i++) {
        int x = n ? x0 + (x1 - x0) * i / n : x0, y = n ? y0 + (y1 - y0) * i / n : y0;
        put(g, x, y, c);
        put(g, x, y + 1, c);
    }
}

static int write_plot(ev_ctx *e, const frame *f, int n)
{
    static const uint8_t white[3] = {255, 255, 255}, grid[3] = {215, 215, 215}, axis[3] = {120, 120, 120},
                         grey[3] = {232, 232, 232}, band[3] = {200, 222, 250}, blue[3] = {20, 60, 200},
                         red[3] = {220, 30, 30}, green[3] = {30, 150, 60}, yellow[3] = {240, 200, 0};
    double lo = 0, hi = 0; /* the pan range shown: everything drawn, whole tens of degrees */
    for (int i = 0; i < n; i++) {
        lo = fmin(lo, fmin(f[i].ball_pan, f[i].p.pan - f[i].p.hfov / 2));
        hi = fmax(hi, fmax(f[i].ball_pan, f[i].p.pan + f[i].p.hfov / 2));
    }
    plot g = {1600, 600, NULL, f[0].t, f[n - 1].t, floor(lo / 10 - 0.2) * 10, ceil(hi / 10 + 0.2) * 10};
    if (!(g.rgb = malloc((size_t)g.w * g.h * 3)))
        return -1;
    for (size_t i = 0; i < (size_t)g.w * g.h; i++)
        memcpy(g.rgb + 3 * i, white, 3);
    for (int i = 0; i < n; i++) { /* the view's width and its middle 60 % */
        const double half = f[i].p.hfov / 2, mid = atan(0.6 * tan(half * M_PI / 180)) * 180 / M_PI;
        vspan(&g, px(&g, f[i].t), f[i].p.pan - half, f[i].p.pan + half, grey);
        vspan(&g, px(&g, f[i].t), f[i].p.pan - mid, f[i].p.pan + mid, band);
    }
    for (double t = ceil(g.t0 / 10) * 10; t <= g.t1; t += 10)
        for (int y = 0; y < g.h; y += 2)
            put(&g, px(&g, t), y, grid);
    for (double p = g.p0; p <= g.p1; p += 10)
        for (int x = 0; x < g.w; x += 2)
            put(&g, x, py(&g, p), p == 0 ? axis : grid);
    for (int i = 0; i < n; i++)
        if (f[i].still)
            for (int y = g.h - 8; y < g.h; y++)
                put(&g, px(&g, f[i].t), y, yellow);
    for (int i = 1; i < n; i++) {
        line(&g, f[i - 1].t, f[i - 1].cen_pan, f[i].t, f[i].cen_pan, green);
        line(&g, f[i - 1].t, f[i - 1].ball_pan, f[i].t, f[i].ball_pan, red);
    }
    for (int i = 1; i < n; i++)
        line(&g, f[i - 1].t, f[i - 1].p.pan, f[i].t, f[i].p.pan, blue);
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/follow.png", e->dir);
    int rc = pc_image_write(path, g.rgb, 3 * (size_t)g.w, g.w, g.h, err, sizeof err);
    if (rc)
        fprintf(stderr, "panocap-eval: %s\n", err);
    free(g.rgb);
    return rc ? -1 : 0;
}

/* --- the run ------------------------------------------------------------ */

typedef struct follow_run {
    pc_rig rig;
    pc_scene_loop *loop;
    pc_cpu *cpu;
    pc_render_plan *plan;
    pc_picture rgbx, small;
    uint8_t *bayer;
    uint16_t *bg;
    uint32_t *counts;
    pc_follow_grid *grid;
} follow_run;

static void run_free(follow_run *r)
{
    pc_scene_loop_destroy(r->loop);
    if (r->cpu)
        pc_cpu_close(r->cpu);
    pc_render_plan_free(r->plan);
    ev_pic_free(&r->rgbx);
    ev_pic_free(&r->small);
    free(r->bayer);
    free(r->bg);
    free(r->counts);
    free(r->grid);
}

static int run_setup(ev_ctx *e, follow_run *r, int *pw, int *ph)
{
    char err[1024];
    memset(r, 0, sizeof *r);
    if (pc_rig_load(e->rig_path, &r->rig, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: %s\n", err);
        return -1;
    }
    int ow, oh;
    pc_rig_output_size(&r->rig, &ow, &oh);
    *pw = (ow / 8) & ~1;
    *ph = (oh / 8) & ~1;
    if (e->follow_cam_scale > 1)
        pc_scene_rig_scale(&r->rig, e->follow_cam_scale);
    const int cw = r->rig.cam[0].w, ch = r->rig.cam[0].h, n = r->rig.ncam;
    pc_rig_photometry *photo = malloc(sizeof *photo);
    pc_view_model v;
    pc_rig_panorama_view(&r->rig, *pw, *ph, &v);
    if (!photo)
        return -1;
    pc_rig_photometry_build(&r->rig, photo);
    int rc = pc_render_plan_build(&r->plan, &r->rig, &v, photo, NULL, err, sizeof err);
    free(photo);
    if (rc || pc_cpu_open(&r->cpu, e->threads, cw, n * ch, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: follow: %s\n", err);
        return -1;
    }
    r->bayer = malloc((size_t)cw * ch * n);
    r->bg = malloc((size_t)*pw * *ph * sizeof *r->bg);
    r->counts = calloc((size_t)pc_activity_cells(*pw, *ph, &act_par), sizeof *r->counts);
    r->grid = malloc(sizeof *r->grid);
    if (!r->bayer || !r->bg || !r->counts || !r->grid || ev_pic_alloc(&r->rgbx, PC_FMT_RGBX32, cw, n * ch) ||
        ev_pic_alloc(&r->small, PC_FMT_NV12, *pw, *ph) || pc_follow_grid_init(r->grid, &v, act_par.cw, act_par.ch))
        return -1;
    printf("  cameras %dx%d (the rig shrunk %g times), activity panorama %dx%d, %dx%d cells of %dx%d\n", cw, ch,
           e->follow_cam_scale, *pw, *ph, r->grid->gw, r->grid->gh, act_par.cw, act_par.ch);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (pc_scene_loop_create(&r->loop, e->scene, &r->rig, n, PC_CFA_RGGB, FPS, e->follow_s, e->threads, err,
                             sizeof err)) {
        fprintf(stderr, "panocap-eval: follow: %s\n", err);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("  the match's frames: %.0f s at %.0f fps rendered in %.1f s\n", e->follow_s, FPS,
           (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
    return 0;
}

/* One frame set through the daemon's chain: the activity grid in counts. */
static int run_frame(follow_run *r, uint64_t k, int pw, int ph)
{
    char err[512];
    const int cw = r->rig.cam[0].w, ch = r->rig.cam[0].h, n = r->rig.ncam;
    for (int c = 0; c < n; c++)
        pc_scene_loop_fill(r->loop, c, k, r->bayer + (size_t)c * cw * ch, (size_t)cw);
    pc_bayer b = {r->bayer, (size_t)cw, cw, n * ch, PC_CFA_RGGB, 0};
    if (pc_cpu_debayer(r->cpu, PC_ALGO_EDGE, &b, &r->rgbx, err, sizeof err) ||
        pc_render_cpu(pc_cpu_pool(r->cpu), r->plan, &r->rgbx, &r->small, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: follow, frame %llu: %s\n", (unsigned long long)k, err);
        return -1;
    }
    pc_activity_ref(r->small.plane[0], r->small.pitch[0], pw, ph, r->bg, k == 0, &act_par, r->counts);
    return 0;
}

int ev_follow(ev_ctx *e)
{
    printf("\n== (d) follow mode on the synthetic match (%.0f s at %.0f fps, seed %llu)\n", e->follow_s, FPS,
           (unsigned long long)e->seed);
    follow_run r;
    int pw, ph;
    const int n = (int)lround(e->follow_s * FPS);
    frame *f = calloc((size_t)n, sizeof *f);
    if (!f || run_setup(e, &r, &pw, &ph)) {
        free(f);
        run_free(&r);
        return -1;
    }
    char err[512], why[160];
    pc_vcam_coverage cov;
    pc_vcam_limits lim;
    pc_follow_params par;
    pc_vcam_limits_default(&lim);
    pc_follow_params_default(&par);
    if (pc_vcam_coverage_init(&cov, &r.rig, VIEW_W, VIEW_H, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: follow: %s\n", err);
        free(f);
        run_free(&r);
        return -1;
    }
    pc_vcam_pose start = {cov.home.pan, cov.home.tilt, fmin(40.0, cov.max_hfov)};
    pc_vcam_motion m;
    pc_follow fo;
    pc_vcam_motion_init(&m, &lim, start);
    pc_follow_init(&fo, &par, start);
    const double dt = 1.0 / FPS;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = 0;
    for (int k = 0; k < n && !rc; k++) {
        if ((rc = run_frame(&r, (uint64_t)k, pw, ph)))
            break;
        pc_vcam_pose goal;
        if (k > 0 && pc_follow_update(&fo, r.grid, r.counts, dt, &goal)) {
            pc_vcam_clamp(&cov, &lim, &goal, why, sizeof why);
            pc_vcam_motion_go(&m, goal, PC_VCAM_MOVE_SMOOTH, 0);
        }
        frame *q = &f[k];
        q->p = pc_vcam_motion_step(&m, dt);
        q->t = pc_scene_loop_time(r.loop, (uint64_t)k);
        q->activity = fo.activity;
        pc_scene_object obj[PC_SCENE_MAX_OBJECTS];
        int no = pc_scene_objects(e->scene, q->t, obj, PC_SCENE_MAX_OBJECTS);
        float ray[3];
        const double bp[3] = {obj[0].x, obj[0].y, obj[0].z};
        pc_scene_ray_to(bp, ray);
        pc_ray_pan_tilt(ray[0], ray[1], ray[2], &q->ball_pan, &q->ball_tilt);
        pc_view_model v;
        float bx, by;
        pc_rig_rect_view(VIEW_W, VIEW_H, q->p.hfov, q->p.pan, q->p.tilt, 0.0, &v);
        if (pc_view_project(&v, ray, &bx, &by))
            q->bx = bx / (VIEW_W - 1), q->by = by / (VIEW_H - 1);
        else
            q->bx = q->by = NAN;
        double sx = 0, sz = 0;
        int np = 0;
        for (int i = 1; i < no; i++)
            if (obj[i].kind == PC_SCENE_PLAYER) {
                const double pp[3] = {obj[i].x, obj[i].y, obj[i].z + 0.5 * obj[i].height};
                pc_scene_ray_to(pp, ray);
                double a;
                pc_ray_pan_tilt(ray[0], ray[1], ray[2], &a, NULL);
                a = a * M_PI / 180;
                sx += sin(a), sz += cos(a), np++;
            }
        q->cen_pan = 0;
        if (np)
            pc_ray_pan_tilt(sx, 0, sz, &q->cen_pan, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double run_s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (rc) {
        free(f);
        run_free(&r);
        return -1;
    }
    /* still frames: the play has been still for STILL_BEFORE and stays
     * so STILL_AFTER more (the view has that long to settle): in every
     * half second of that time the centroid and the ball moved less than
     * their bounds */
    const int step = (int)lround(0.1 * FPS), half = (int)lround(0.5 * FPS);
    const int before = (int)lround(STILL_BEFORE * FPS), after = (int)lround(STILL_AFTER * FPS);
    for (int k = before; k + after < n; k++) {
        int st = 1;
        for (int j = k - before; st && j + half <= k + after; j += step)
            st = fabs(f[j + half].cen_pan - f[j].cen_pan) / (half * dt) < STILL_CENTROID &&
                 fabs(f[j + half].ball_pan - f[j].ball_pan) / (half * dt) < STILL_BALL;
        f[k].still = st;
    }
    /* the figures, after the warm-up */
    const int k0 = (int)lround(WARMUP_S * FPS);
    int frames = 0, in_w = 0, in_both = 0, in_view = 0, still = 0, reversals = 0;
    double vmax = 0, amax = 0, zmax = 0, shake = 0;
    double *dstill = malloc(sizeof(double) * (size_t)n);
    if (!dstill) {
        free(f);
        run_free(&r);
        return -1;
    }
    for (int k = k0; k < n; k++) {
        const frame *q = &f[k];
        frames++;
        const int inw = q->bx >= 0.2 && q->bx <= 0.8, inh = q->by >= 0.2 && q->by <= 0.8;
        in_w += inw;
        in_both += inw && inh;
        in_view += q->bx >= 0 && q->bx <= 1 && q->by >= 0 && q->by <= 1;
        const double d = q->p.pan - f[k - 1].p.pan, dprev = f[k - 1].p.pan - f[k - 2].p.pan;
        vmax = fmax(vmax, fabs(d) / dt);
        zmax = fmax(zmax, fabs(q->p.hfov - f[k - 1].p.hfov) / dt);
        amax = fmax(amax, fabs(d - dprev) / (dt * dt));
        if (q->still) {
            dstill[still++] = fabs(d);
            shake = fmax(shake, fabs(d - dprev));
            reversals += d * dprev < 0 && fabs(d) > 1e-3 && fabs(dprev) > 1e-3;
        }
    }
    qsort(dstill, (size_t)still, sizeof *dstill, cmp_double);
    const double smax = still ? dstill[still - 1] : 0, s99 = still ? dstill[(int)floor(0.99 * (still - 1))] : 0;
    const double ppd = VIEW_W / f[n - 1].p.hfov; /* output pixels per degree near the centre */
    const double shake_lim = lim.max_accel * dt * dt;
    const double pct_w = 100.0 * in_w / frames, pct_b = 100.0 * in_both / frames, pct_v = 100.0 * in_view / frames;
    printf("  ran %d frame sets in %.1f s (%.1f ms each: loop frame, demosaic, render, activity, follow)\n", n, run_s,
           1e3 * run_s / n);
    printf("  ball inside the middle 60 %% of the view: %.1f %% of %d frames across (%.1f %% across and down); in the "
           "view at all %.1f %%\n", pct_w, frames, pct_b, pct_v);
    printf("  pan speed at most %.2f deg/s (limit %.0f), acceleration %.1f deg/s^2 (limit %.0f), zoom %.2f deg/s "
           "(limit %.0f)\n", vmax, lim.max_speed, amax, lim.max_accel, zmax, lim.max_zoom_speed);
    printf("  still play (the players' centroid < %.1f deg/s and the ball < %.1f deg/s in every half second from "
           "%.1f s before to %.1f s after): %d frames (%.1f %%)\n", STILL_CENTROID, STILL_BALL, STILL_BEFORE,
           STILL_AFTER, still, 100.0 * still / frames);
    printf("    |delta pan| per frame: max %.4f deg (%.2f px), p99 %.4f deg (%.2f px); change of it (shake) max %.4f "
           "deg; %d reversals\n", smax, smax * ppd, s99, s99 * ppd, shake, reversals);
    ev_add_fig(e, "follow.ball_mid60_pct", pct_w);
    ev_add_fig(e, "follow.ball_mid60_both_pct", pct_b);
    ev_add_fig(e, "follow.ball_in_view_pct", pct_v);
    ev_add_fig(e, "follow.max_pan_speed", vmax);
    ev_add_fig(e, "follow.max_pan_accel", amax);
    ev_add_fig(e, "follow.pan_speed_limit", lim.max_speed);
    ev_add_fig(e, "follow.pan_accel_limit", lim.max_accel);
    ev_add_fig(e, "follow.still_frames", still);
    ev_add_fig(e, "follow.still_max_dpan", smax);
    ev_add_fig(e, "follow.still_p99_dpan", s99);
    ev_add_fig(e, "follow.still_shake", shake);
    ev_add_fig(e, "follow.still_reversals", reversals);
    ev_add_row(e, "d", "ball in the middle 60 % of the view's width", ">= 90 %", pct_w >= 90.0, "%.1f %% (%.1f %% "
               "width and height)", pct_w, pct_b);
    char target[64];
    snprintf(target, sizeof target, "<= %.0f deg/s", lim.max_speed);
    ev_add_row(e, "d", "max pan speed", target, vmax <= lim.max_speed * 1.001, "%.2f deg/s", vmax);
    snprintf(target, sizeof target, "<= %.0f deg/s^2", lim.max_accel);
    ev_add_row(e, "d", "max pan acceleration", target, amax <= lim.max_accel * 1.001, "%.1f deg/s^2", amax);
    snprintf(target, sizeof target, "<= %.2f deg", STILL_MAX_STEP);
    ev_add_row(e, "d", "still play: abs(delta pan) per frame, max; p99", target,
               still > 0 ? smax <= STILL_MAX_STEP : -1, "%.3f; %.3f deg (%.1f; %.1f px), %d fr", smax, s99,
               smax * ppd, s99 * ppd, still);
    snprintf(target, sizeof target, "<= %.3f deg; 0", shake_lim);
    ev_add_row(e, "d", "still play: shake abs(delta^2 pan) max; reversals", target,
               still > 0 ? shake <= shake_lim * 1.001 && reversals == 0 : -1, "%.4f deg; %d", shake, reversals);
    /* every frame, and the plot */
    char path[1024];
    snprintf(path, sizeof path, "%s/follow.csv", e->dir);
    FILE *csv = fopen(path, "w");
    if (csv) {
        fprintf(csv, "t,pan,tilt,hfov,ball_pan,ball_tilt,centroid_pan,ball_x,ball_y,still,activity\n");
        for (int k = 0; k < n; k++)
            fprintf(csv, "%.3f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%d,%.0f\n", f[k].t, f[k].p.pan, f[k].p.tilt,
                    f[k].p.hfov, f[k].ball_pan, f[k].ball_tilt, f[k].cen_pan, f[k].bx, f[k].by, f[k].still,
                    f[k].activity);
    }
    rc = !csv || fclose(csv) || write_plot(e, f, n) ? -1 : 0;
    if (rc)
        fprintf(stderr, "panocap-eval: follow: writing %s or follow.png failed\n", path);
    else
        printf("  %s/follow.csv, %s/follow.png (pan against time: view blue, ball red, players' centroid green)\n",
               e->dir, e->dir);
    free(dstill);
    free(f);
    run_free(&r);
    return rc;
}
