/* test_vcam.c - virtual cameras' logic: the motion never jumps (speed and
 * acceleration within their bounds on every frame, no overshoot, arrival;
 * a goal jumping towards a fast view is passed, not braked for with a
 * jerk), moves at a speed or over a duration, and the coverage clamp keeps
 * a view inside what a 5-camera rig sees and says why (keeping the pan
 * asked where only the tilt or the width is out); the activity map; the
 * follow mode frames a moving play, holds still on a still one, goes where
 * the play is densest and does not hop between two equal groups. */
#include "activity.h"
#include "follow.h"
#include "tap.h"
#include "vcam.h"

#include <stdint.h>
#include <stdlib.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Five 2040x1080 cameras, 30 degrees apart, 40 degrees wide each
 * (about 25 % overlap), looking 10 degrees down. */
static void five_camera_rig(pc_rig *rig)
{
    memset(rig, 0, sizeof *rig);
    rig->ncam = 5;
    rig->pano = (pc_rig_canvas){.proj = PC_PROJ_CYLINDRICAL, .w = 8000, .h = 1400, .hfov = 160};
    snprintf(rig->path, sizeof rig->path, "five.pto");
    for (int i = 0; i < 5; i++) {
        pc_rig_camera *c = &rig->cam[i];
        c->w = 2040;
        c->h = 1080;
        c->hfov = 40;
        c->yaw = -60 + 30 * i;
        c->pitch = -10;
        c->er = c->eb = 1;
        c->va = 1;
    }
}

/* Runs m for secs at fps; checks bounds on every frame. Returns frames. */
typedef struct run_stats {
    double max_speed, max_accel, max_zoom_speed, overshoot;
    int frames, arrived_frame;
} run_stats;

static run_stats run(pc_vcam_motion *m, double secs, double fps)
{
    run_stats r = {0};
    r.arrived_frame = -1;
    const double dt = 1.0 / fps;
    pc_vcam_pose prev = m->cur, goal = m->goal, start = m->cur;
    double pv = 0, pz = 0, ptv = 0;
    int n = (int)(secs * fps);
    for (int i = 0; i < n; i++) {
        pc_vcam_pose p = pc_vcam_motion_step(m, dt);
        double vp = (p.pan - prev.pan) / dt, vt = (p.tilt - prev.tilt) / dt, vz = (p.hfov - prev.hfov) / dt;
        double sp = sqrt(vp * vp + vt * vt);
        if (fabs(vp) > r.max_speed)
            r.max_speed = fabs(vp);
        if (fabs(vt) > r.max_speed)
            r.max_speed = fabs(vt);
        if (fabs(vz) > r.max_zoom_speed)
            r.max_zoom_speed = fabs(vz);
        if (i > 0) {
            double ap = fabs(vp - pv) / dt, at = fabs(vt - ptv) / dt;
            if (ap > r.max_accel)
                r.max_accel = ap;
            if (at > r.max_accel)
                r.max_accel = at;
        }
        (void)sp;
        (void)pz;
        pv = vp;
        ptv = vt;
        pz = vz;
        /* overshoot: beyond the goal, in the direction of travel */
        double dir = goal.pan - start.pan;
        double over = dir > 0 ? p.pan - goal.pan : goal.pan - p.pan;
        if (dir != 0 && over > r.overshoot)
            r.overshoot = over;
        if (r.arrived_frame < 0 && fabs(p.pan - goal.pan) < 0.05 && fabs(p.tilt - goal.tilt) < 0.05 &&
            fabs(p.hfov - goal.hfov) < 0.05)
            r.arrived_frame = i;
        prev = p;
    }
    r.frames = n;
    return r;
}

static void check_motion(void)
{
    pc_vcam_limits lim;
    pc_vcam_limits_default(&lim);
    pc_vcam_motion m;
    const double fps = 50;
    /* a long pan: trapezoid in speed, bounded, no overshoot */
    pc_vcam_motion_init(&m, &lim, (pc_vcam_pose){-40, -10, 40});
    pc_vcam_motion_go(&m, (pc_vcam_pose){40, -5, 30}, PC_VCAM_MOVE_SMOOTH, 0);
    run_stats r = run(&m, 8, fps);
    TAP_CHECK(r.max_speed <= lim.max_speed * 1.001, "80-degree pan: speed at most %.1f deg/s (max %.2f)",
              lim.max_speed, r.max_speed);
    /* a per-frame difference of a bounded acceleration: a_max plus the
     * discretisation of one frame */
    TAP_CHECK(r.max_accel <= lim.max_accel * 1.05, "80-degree pan: acceleration at most %.0f deg/s^2 (max %.1f)",
              lim.max_accel, r.max_accel);
    TAP_CHECK(r.overshoot < 0.01, "80-degree pan: no overshoot (%.4f deg)", r.overshoot);
    TAP_CHECK(r.arrived_frame > 0 && r.arrived_frame < 8 * fps,
              "80-degree pan: arrives (frame %d, %.2f s; at least 80/%.0f = %.2f s)", r.arrived_frame,
              r.arrived_frame / fps, lim.max_speed, 80 / lim.max_speed);
    TAP_CHECK(r.max_zoom_speed <= lim.max_zoom_speed * 1.001, "zoom speed at most %.1f deg/s (max %.2f)",
              lim.max_zoom_speed, r.max_zoom_speed);
    TAP_CHECK(!pc_vcam_motion_moving(&m), "still after arriving");

    /* a small step: critically damped, no overshoot, smooth start */
    pc_vcam_motion_init(&m, &lim, (pc_vcam_pose){0, 0, 40});
    pc_vcam_motion_go(&m, (pc_vcam_pose){1, 0, 40}, PC_VCAM_MOVE_SMOOTH, 0);
    pc_vcam_pose p1 = pc_vcam_motion_step(&m, 1 / fps);
    TAP_CHECK(p1.pan > 0 && p1.pan < 0.05, "1-degree step: the first frame moves %.4f deg (no jump)", p1.pan);
    r = run(&m, 3, fps);
    TAP_CHECK(r.overshoot < 1e-3 && r.arrived_frame > 0, "1-degree step: arrives at frame %d, overshoot %.5f",
              r.arrived_frame, r.overshoot);

    /* at a given speed */
    pc_vcam_motion_init(&m, &lim, (pc_vcam_pose){-20, 0, 40});
    pc_vcam_motion_go(&m, (pc_vcam_pose){20, 0, 40}, PC_VCAM_MOVE_SPEED, 10);
    r = run(&m, 8, fps);
    TAP_CHECK(r.max_speed <= 10 * 1.02 && r.max_speed > 9, "40 degrees at 10 deg/s: top speed %.2f",
              r.max_speed);
    TAP_CHECK(r.arrived_frame > 3.9 * fps && r.arrived_frame < 4.5 * fps,
              "40 degrees at 10 deg/s: within 0.05 deg after %.2f s (a 4 s path)",
              r.arrived_frame / fps);

    /* over a given duration */
    pc_vcam_motion_init(&m, &lim, (pc_vcam_pose){0, 0, 40});
    pc_vcam_motion_go(&m, (pc_vcam_pose){10, -5, 20}, PC_VCAM_MOVE_DURATION, 3);
    r = run(&m, 6, fps);
    TAP_CHECK(r.arrived_frame > 2.5 * fps && r.arrived_frame < 3.3 * fps,
              "a 3 s move: within 0.05 deg after %.2f s", r.arrived_frame / fps);
    TAP_CHECK(r.max_accel <= lim.max_accel * 1.05, "a 3 s move: acceleration bounded (%.1f)", r.max_accel);

    /* a new goal mid-move: no jump in speed */
    pc_vcam_motion_init(&m, &lim, (pc_vcam_pose){-40, 0, 40});
    pc_vcam_motion_go(&m, (pc_vcam_pose){40, 0, 40}, PC_VCAM_MOVE_SMOOTH, 0);
    run(&m, 1.5, fps);
    pc_vcam_motion_go(&m, (pc_vcam_pose){-30, 0, 40}, PC_VCAM_MOVE_SMOOTH, 0);
    m.goal = (pc_vcam_pose){-30, 0, 40};
    r = run(&m, 8, fps);
    TAP_CHECK(r.max_accel <= lim.max_accel * 1.05 && r.max_speed <= lim.max_speed * 1.001,
              "reversal mid-move: speed %.1f and acceleration %.1f within bounds", r.max_speed, r.max_accel);

    /* a goal that jumps back towards a view moving fast (the follow
     * mode's target turning round): it brakes at most max_accel, passes
     * the goal a little and comes back, no jerk */
    pc_vcam_motion_init(&m, &lim, (pc_vcam_pose){-30, 0, 40});
    pc_vcam_motion_go(&m, (pc_vcam_pose){30, 0, 40}, PC_VCAM_MOVE_SMOOTH, 0);
    run(&m, 1.2, fps); /* at full speed by now */
    pc_vcam_motion_go(&m, (pc_vcam_pose){m.cur.pan + 2.0, 0, 40}, PC_VCAM_MOVE_SMOOTH, 0);
    double jpan = m.cur.pan, jv = m.vel.pan, jacc = 0;
    for (int i = 0; i < 3 * 50; i++) {
        pc_vcam_pose p = pc_vcam_motion_step(&m, 1 / fps);
        double v = (p.pan - jpan) * fps;
        jacc = fmax(jacc, fabs(v - jv) * fps);
        jv = v;
        jpan = p.pan;
    }
    TAP_CHECK(jacc <= lim.max_accel * 1.05, "goal jumping 2 degrees ahead of a view at %.0f deg/s: acceleration "
              "%.1f deg/s^2 (<= %.0f)", lim.max_speed, jacc, lim.max_accel);
    TAP_CHECK(fabs(m.cur.pan - m.goal.pan) < 0.05, "... and it settles on that goal (%.3f off)",
              m.cur.pan - m.goal.pan);

    /* pan wraps the short way round */
    pc_vcam_motion_init(&m, &lim, (pc_vcam_pose){170, 0, 40});
    pc_vcam_motion_go(&m, (pc_vcam_pose){-170, 0, 40}, PC_VCAM_MOVE_SMOOTH, 0);
    for (int i = 0; i < 200; i++)
        pc_vcam_motion_step(&m, 1 / fps);
    TAP_CHECK(fabs(m.cur.pan - (-170)) < 0.01, "170 -> -170 the short way (20 degrees): pan %.3f", m.cur.pan);
}

static void check_coverage(void)
{
    pc_rig rig;
    five_camera_rig(&rig);
    pc_vcam_coverage cov;
    char err[256] = "", why[256];
    TAP_CHECK(pc_vcam_coverage_init(&cov, &rig, 1920, 1080, err, sizeof err) == 0, "coverage of a 5-camera rig");
    TAP_CHECK(fabs(cov.home.pan) < 0.01 && fabs(cov.home.tilt + 10) < 0.01, "home at the rig's centre (%.2f, %.2f)",
              cov.home.pan, cov.home.tilt);
    /* cameras cover yaw -80..80 (20 each side) and 10 +- ~11.6 vertically */
    TAP_CHECK(cov.max_hfov > 35 && cov.max_hfov < 45, "widest 16:9 view at home: %.1f degrees", cov.max_hfov);
    pc_vcam_limits lim;
    pc_vcam_limits_default(&lim);
    pc_vcam_pose p = {10, -10, 30};
    TAP_CHECK(pc_vcam_clamp(&cov, &lim, &p, why, sizeof why) == 0 && p.pan == 10 && why[0] == '\0',
              "a covered pose is left alone");
    p = (pc_vcam_pose){85, -10, 30};
    int ch = pc_vcam_clamp(&cov, &lim, &p, why, sizeof why);
    TAP_CHECK(ch == 1 && p.pan < 85 && p.pan > 50 && strstr(why, "right"), "pan 85 clamped to %.2f: \"%s\"", p.pan,
              why);
    TAP_CHECK(pc_vcam_covered(&cov, p), "the clamped pose is covered");
    pc_vcam_pose q = p;
    q.pan += 0.5;
    TAP_CHECK(!pc_vcam_covered(&cov, q), "half a degree further right is not (the clamp is tight)");
    p = (pc_vcam_pose){0, 40, 20};
    ch = pc_vcam_clamp(&cov, &lim, &p, why, sizeof why);
    TAP_CHECK(ch == 1 && p.tilt < 0 && strstr(why, "up") && pc_vcam_covered(&cov, p), "tilt 40 -> %.2f: \"%s\"",
              p.tilt, why);
    /* a view asked too high at the side keeps its pan: the tilt alone
     * comes down (the follow mode's goals, a click on the far touchline) */
    p = (pc_vcam_pose){50, 5, 20};
    ch = pc_vcam_clamp(&cov, &lim, &p, why, sizeof why);
    TAP_CHECK(ch == 1 && p.pan == 50 && p.tilt < 5 && pc_vcam_covered(&cov, p) && strstr(why, "tilt") &&
              !strstr(why, "pan"), "pan 50 tilt 5 -> pan %.2f tilt %.2f: \"%s\"", p.pan, p.tilt, why);
    /* as wide as home allows, further out where the cameras cover less
     * height: narrower, at the pan asked */
    p = (pc_vcam_pose){65, cov.home.tilt, cov.max_hfov};
    if (!pc_vcam_covered(&cov, p)) {
        ch = pc_vcam_clamp(&cov, &lim, &p, why, sizeof why);
        TAP_CHECK(ch == 1 && p.pan == 65 && p.hfov < cov.max_hfov && pc_vcam_covered(&cov, p) &&
                      strstr(why, "at pan 65.0"),
                  "pan 65 at the widest hfov -> hfov %.2f, pan %.2f: \"%s\"", p.hfov, p.pan, why);
    } else {
        TAP_CHECK(0, "pan 65 at home's widest hfov (%.1f) should not be covered on this rig", cov.max_hfov);
    }
    p = (pc_vcam_pose){0, -10, 100};
    ch = pc_vcam_clamp(&cov, &lim, &p, why, sizeof why);
    TAP_CHECK(ch == 1 && fabs(p.hfov - cov.max_hfov) < 1e-9 && strstr(why, "hfov"), "hfov 100 -> %.1f: \"%s\"",
              p.hfov, why);
    p = (pc_vcam_pose){0, -10, 1};
    ch = pc_vcam_clamp(&cov, &lim, &p, why, sizeof why);
    TAP_CHECK(ch == 1 && p.hfov == lim.min_hfov, "hfov 1 -> %.1f (the narrowest allowed): \"%s\"", p.hfov, why);
    p = (pc_vcam_pose){-179, 60, 150};
    pc_vcam_clamp(&cov, &lim, &p, why, sizeof why);
    TAP_CHECK(pc_vcam_covered(&cov, p), "a pose behind the rig comes back covered: %.1f %.1f %.1f (\"%s\")", p.pan,
              p.tilt, p.hfov, why);
}

/* The cell nearest (pan, tilt) gets w more. */
static void add_blob(const pc_follow_grid *g, uint32_t *counts, double pan, double tilt, uint32_t w)
{
    int best = 0;
    double bd = 1e9;
    for (int i = 0; i < g->gw * g->gh; i++) {
        double d = fabs(g->pan[i] - pan) + fabs(g->tilt[i] - tilt);
        if (d < bd)
            bd = d, best = i;
    }
    counts[best] += w;
}

/* Activity grid of a synthetic play: 22 players within +-spread/2 of
 * centre (pan), each lighting the cells around it, plus noise cells. */
static void play_counts(const pc_follow_grid *g, double centre, double spread, double tilt, unsigned *seed,
                        uint32_t *counts, int noise)
{
    memset(counts, 0, (size_t)g->gw * g->gh * sizeof *counts);
    for (int k = 0; k < 22; k++)
        add_blob(g, counts, centre + spread * ((k * 37 % 22) / 21.0 - 0.5), tilt, 30);
    for (int k = 0; k < noise; k++)
        counts[rand_r(seed) % (g->gw * g->gh)] += 3;
}

static void check_follow(void)
{
    pc_rig rig;
    five_camera_rig(&rig);
    pc_view_model small;
    pc_rig_panorama_view(&rig, rig.pano.w / 8, rig.pano.h / 8, &small);
    static pc_follow_grid g;
    int grc = pc_follow_grid_init(&g, &small, 8, 8);
    TAP_CHECK(grc == 0 && g.gw == 125 && g.gh == 22, "follow grid: %dx%d cells of 8x8 over a %dx%d panorama", g.gw,
              g.gh, small.w, small.h);
    TAP_CHECK(fabs(g.pan[g.gw / 2] - 0) < 1.0 && g.pan[0] < -70 && g.pan[g.gw - 1] > 70,
              "cells span the panorama: pan %.1f .. %.1f", g.pan[0], g.pan[g.gw - 1]);
    pc_vcam_coverage cov;
    char err[256] = "", why[256];
    pc_vcam_coverage_init(&cov, &rig, 1920, 1080, err, sizeof err);
    pc_vcam_limits lim;
    pc_vcam_limits_default(&lim);
    pc_follow_params par;
    pc_follow_params_default(&par);
    pc_vcam_motion m;
    pc_follow f;
    pc_vcam_pose start = {0, -10, 30};
    pc_vcam_motion_init(&m, &lim, start);
    pc_follow_init(&f, &par, start);
    uint32_t *counts = calloc((size_t)g.gw * g.gh, sizeof *counts);
    unsigned seed = 7;
    const double fps = 50, dt = 1 / fps;
    int inside = 0, frames = 0;
    double max_speed = 0, prev_pan = start.pan;
    /* the play moves across the pitch and back (pan -40 .. 40 over 20 s) */
    for (int i = 0; i < 30 * 50; i++) {
        double t = i * dt;
        double centre = 40 * sin(2 * M_PI * t / 20);
        play_counts(&g, centre, 20, -12, &seed, counts, 20);
        pc_vcam_pose goal;
        if (pc_follow_update(&f, &g, counts, dt, &goal)) {
            pc_vcam_clamp(&cov, &lim, &goal, why, sizeof why);
            pc_vcam_motion_go(&m, goal, PC_VCAM_MOVE_SMOOTH, 0);
        }
        pc_vcam_pose p = pc_vcam_motion_step(&m, dt);
        double v = fabs(p.pan - prev_pan) / dt;
        if (v > max_speed)
            max_speed = v;
        prev_pan = p.pan;
        if (t > 2) { /* after the first framing */
            frames++;
            /* the play's centre in the view's middle 60 % */
            double x = tan((centre - p.pan) * M_PI / 180) / tan(p.hfov / 2 * M_PI / 180);
            inside += fabs(x) <= 0.6;
        }
    }
    TAP_CHECK(inside >= 0.9 * frames, "follow: the play's centre inside the middle 60 %% of the view on %d of %d "
              "frames (%.1f %%, >= 90 %%)", inside, frames, 100.0 * inside / frames);
    TAP_CHECK(max_speed <= lim.max_speed * 1.001, "follow: pan speed at most %.1f deg/s (max %.2f)", lim.max_speed,
              max_speed);
    /* a still play with flickering noise: the picture settles and stays */
    pc_vcam_pose settled = {0};
    double jitter = 0;
    for (int i = 0; i < 10 * 50; i++) {
        play_counts(&g, 12, 20, -12, &seed, counts, 40);
        pc_vcam_pose goal;
        if (pc_follow_update(&f, &g, counts, dt, &goal)) {
            pc_vcam_clamp(&cov, &lim, &goal, why, sizeof why);
            pc_vcam_motion_go(&m, goal, PC_VCAM_MOVE_SMOOTH, 0);
        }
        pc_vcam_pose p = pc_vcam_motion_step(&m, dt);
        if (i == 5 * 50)
            settled = p;
        if (i > 5 * 50) {
            double j = fmax(fabs(p.pan - settled.pan), fmax(fabs(p.tilt - settled.tilt), fabs(p.hfov - settled.hfov)));
            if (j > jitter)
                jitter = j;
        }
    }
    TAP_CHECK(jitter < 1e-6, "still play with flickering noise: the view moves %.2g deg in the last 5 s (< 1e-6)",
              jitter);
    /* nobody: the view holds */
    memset(counts, 0, (size_t)g.gw * g.gh * sizeof *counts);
    pc_vcam_pose goal;
    TAP_CHECK(!pc_follow_update(&f, &g, counts, dt, &goal), "no activity: no new goal");

    /* where the play is densest, not the middle of everyone: eight
     * players fighting for the ball at pan 25, fourteen spread over
     * -45 .. 45 (their median near 0) */
    pc_follow_init(&f, &par, start);
    for (int i = 0; i < 3 * 50; i++) {
        memset(counts, 0, (size_t)g.gw * g.gh * sizeof *counts);
        for (int k = 0; k < 8; k++)
            add_blob(&g, counts, 23 + 0.5 * k, -12, 30);
        for (int k = 0; k < 14; k++)
            add_blob(&g, counts, -45 + 90 * k / 13.0, -12, 30);
        pc_follow_update(&f, &g, counts, dt, &goal);
    }
    TAP_CHECK(fabs(f.win - 24.75) < 2.0 && fabs(f.pan - 24.75) < 2.5, "a dense group at pan 25 and a spread one: "
              "the target %.2f, the window %.2f (the median would be near 0)", f.pan, f.win);
    /* two groups of equal weight: the target stays with the one it had,
     * however the counts flicker (no back and forth) */
    pc_follow_init(&f, &par, (pc_vcam_pose){-20, -10, 30});
    double lo = 1e9, hi = -1e9;
    for (int i = 0; i < 5 * 50; i++) {
        memset(counts, 0, (size_t)g.gw * g.gh * sizeof *counts);
        for (int k = 0; k < 6; k++) {
            add_blob(&g, counts, -21 + 0.4 * k, -12, 30 + (i + k) % 5);
            add_blob(&g, counts, 19 + 0.4 * k, -12, 30 + (i + 2 * k) % 7);
        }
        pc_follow_update(&f, &g, counts, dt, &goal);
        if (i > 0) {
            lo = fmin(lo, f.win);
            hi = fmax(hi, f.win);
        }
    }
    TAP_CHECK(hi - lo < 1.0 && fabs(lo + 20) < 2.0, "two equal groups at -20 and 20, starting at -20: the window "
              "stays within %.2f .. %.2f", lo, hi);
    free(counts);
}

static void check_activity(void)
{
    enum { W = 40, H = 20 };
    pc_activity_params p = {.shift = 2, .threshold = 10, .cw = 8, .ch = 8};
    uint8_t luma[W * H];
    uint16_t bg[W * H];
    uint32_t counts[15];
    memset(luma, 100, sizeof luma);
    pc_activity_ref(luma, W, W, H, bg, 1, &p, counts);
    TAP_CHECK(bg[0] == 100 << 8 && counts[0] == 0, "activity: init sets the background");
    luma[3 * W + 20] = 200; /* one bright pixel in cell (2, 0) */
    luma[12 * W + 39] = 50; /* one dark pixel in cell (4, 1) */
    luma[12 * W + 38] = 105; /* within the threshold */
    pc_activity_ref(luma, W, W, H, bg, 0, &p, counts);
    TAP_CHECK(pc_activity_cells(W, H, &p) == 15 && counts[2] == 1 && counts[5 + 4] == 1 && counts[0] == 0,
              "activity: one foreground pixel in cells 2 and 9 (%u %u)", counts[2], counts[9]);
    TAP_CHECK(bg[3 * W + 20] == (100 << 8) + ((100 << 8) >> 2), "activity: background moves a quarter of the way "
              "(%u)", bg[3 * W + 20]);
    for (int i = 0; i < 40; i++)
        pc_activity_ref(luma, W, W, H, bg, 0, &p, counts);
    TAP_CHECK(counts[2] == 0 && counts[9] == 0, "activity: a change that stays fades into the background");
}

/* rig/projection.h: the table of output projections, directions as
 * pan/tilt and the pan difference the short way round. */
static void check_projections(void)
{
    int ok = 1;
    for (int i = 0; i < PC_PROJ_COUNT; i++) {
        const pc_proj_desc *d = pc_proj_get(i);
        ok = ok && d && (int)d->id == i && pc_proj_from_pto(d->pto) == d && strcmp(pc_proj_name(i), d->name) == 0;
        /* the formulas' round trip at a pixel off the centre */
        const float f = 500.0f, dx = 123.0f, dy = -45.0f;
        float q[3], x, y;
        pc_proj_ray(i, f, dx, dy, q);
        ok = ok && pc_proj_project(i, f, q, &x, &y) && fabsf(x - dx) < 1e-2f && fabsf(y - dy) < 1e-2f;
        /* the per-column and per-row terms give pc_proj_ray's floats */
        float c[2], r[2], q2[3];
        pc_proj_col(i, f, dx, c);
        pc_proj_row(i, f, dy, r);
        pc_proj_combine(i, f, c, r, q2);
        ok = ok && !memcmp(q, q2, sizeof q);
    }
    char list[256];
    pc_proj_pto_list(list, sizeof list);
    TAP_CHECK(ok && !pc_proj_get(PC_PROJ_COUNT) && !pc_proj_get(-1) && !pc_proj_from_pto(5) &&
                  strcmp(pc_proj_name(PC_PROJ_COUNT), "?") == 0 &&
                  strcmp(list, "0 rectilinear, 1 cylindrical, 2 equirectangular") == 0,
              "projections: one table entry each, .pto codes and names, ray and project round trip (%s)", list);
    double pan, tilt;
    pc_ray_pan_tilt(-1, 1, 0, &pan, &tilt);
    int dirs = fabs(pan + 90) < 1e-12 && fabs(tilt - 45) < 1e-12;
    pc_ray_pan_tilt(0, -2, -2, &pan, NULL);
    dirs = dirs && fabs(fabs(pan) - 180) < 1e-12;
    pc_ray_pan_tilt(0, 0, 3, NULL, &tilt);
    TAP_CHECK(dirs && tilt == 0, "pan/tilt of a direction: left and up 45, behind, ahead");
    TAP_CHECK(pc_pan_delta(170, -170) == 20 && pc_pan_delta(-170, 170) == -20 && pc_pan_delta(10, 30) == 20 &&
                  pc_pan_delta(0, 720 + 90) == 90 && pc_pan_delta(0, -450) == -90,
              "pan delta: the short way round, across 180 and whole turns");
}

int main(void)
{
    check_projections();
    check_motion();
    check_coverage();
    check_activity();
    check_follow();
    return tap_done();
}
