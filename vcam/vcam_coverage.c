/* vcam_coverage.c - what the rig's cameras see, for virtual cameras: a view
 * is allowed only where every pixel of it is seen by some camera, so that
 * an operator's drag or the follow mode can never show a grey corner.
 * Tested on the view's border (8 points a side) and centre through the same
 * camera model the renderer uses (rig/camera_model.h). */
#include "vcam.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SIDE_POINTS 8

static int ray_seen(const pc_vcam_coverage *c, const float ray[3])
{
    for (int i = 0; i < c->ncam; i++) {
        float sx, sy;
        if (pc_cam_project(&c->cam[i], ray, &sx, &sy))
            return 1;
    }
    return 0;
}

int pc_vcam_covered(const pc_vcam_coverage *c, pc_vcam_pose p)
{
    if (!(p.hfov > 0 && p.hfov < 180))
        return 0;
    /* a nominal 1000-pixel-wide view: only directions matter */
    const int w = 1000, h = (int)lround(1000 * c->aspect);
    pc_view_model v;
    pc_rig_rect_view(w, h, p.hfov, p.pan, p.tilt, 0.0, &v);
    float ray[3];
    pc_view_ray(&v, (w - 1) / 2.0f, (h - 1) / 2.0f, ray);
    if (!ray_seen(c, ray))
        return 0;
    for (int k = 0; k <= SIDE_POINTS; k++) {
        const float fx = (float)(w - 1) * k / SIDE_POINTS, fy = (float)(h - 1) * k / SIDE_POINTS;
        const float pts[4][2] = {{fx, 0}, {fx, (float)(h - 1)}, {0, fy}, {(float)(w - 1), fy}};
        for (int s = 0; s < 4; s++) {
            pc_view_ray(&v, pts[s][0], pts[s][1], ray);
            if (!ray_seen(c, ray))
                return 0;
        }
    }
    return 1;
}

/* The widest view at p's pan and tilt between lo (covered) and hi that
 * the cameras cover (bisection: coverage shrinks as the view widens for
 * any rig without holes). */
static double widest(const pc_vcam_coverage *c, pc_vcam_pose p, double lo, double hi)
{
    for (int k = 0; k < 40; k++) {
        p.hfov = 0.5 * (lo + hi);
        if (pc_vcam_covered(c, p))
            lo = p.hfov;
        else
            hi = p.hfov;
    }
    return lo;
}

/* The direction of the middle of camera m's valid area (its picture, or
 * its crop) as a pose's pan and tilt; p unchanged where it maps to none. */
static void picture_middle(const pc_cam_model *m, pc_vcam_pose *p)
{
    float ray[3];
    if (!pc_cam_unproject(m, 0.5f * (m->x0 + m->x1), 0.5f * (m->y0 + m->y1), ray))
        return;
    const double hz = hypot(ray[0], ray[2]);
    if (!(hz > 0.0))
        return;
    p->pan = atan2(ray[0], ray[2]) * 180 / M_PI;
    p->tilt = atan2(ray[1], hz) * 180 / M_PI;
}

int pc_vcam_coverage_init(pc_vcam_coverage *c, const pc_rig *rig, int w, int h, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->ncam = rig->ncam;
    for (int i = 0; i < rig->ncam; i++)
        pc_rig_camera_model(rig, i, &c->cam[i]);
    c->aspect = (double)h / w;
    /* home: the cameras' mean yaw (as unit vectors, so yaws of -170 and
     * 170 average to 180, not 0) and mean pitch */
    double sx = 0, sz = 0, tilt = 0;
    for (int i = 0; i < rig->ncam; i++) {
        const double y = rig->cam[i].yaw * M_PI / 180;
        sx += sin(y);
        sz += cos(y);
        tilt += rig->cam[i].pitch;
    }
    pc_ray_pan_tilt(sx, 0, sz, &c->home.pan, NULL);
    c->home.tilt = tilt / rig->ncam;
    c->home.hfov = 1.0;
    if (!pc_vcam_covered(c, c->home)) { /* a rig with a hole in the middle */
        c->home.pan = rig->cam[0].yaw;
        c->home.tilt = rig->cam[0].pitch;
    }
    /* a camera whose picture is far off its axis (a recorded panorama
     * seen as a camera, pc_rig_panorama_source: its crop is a lens shift,
     * and a stadium rig's panorama, cropped to what the cameras see, lies
     * well below the canvas's horizon): where its picture's middle looks */
    for (int i = 0; i < rig->ncam && !pc_vcam_covered(c, c->home); i++)
        picture_middle(&c->cam[i], &c->home);
    if (!pc_vcam_covered(c, c->home)) {
        snprintf(err, errlen, "%s: no view of aspect %dx%d fits in what the cameras see", rig->path, w, h);
        return -1;
    }
    c->max_hfov = widest(c, c->home, 1.0, 179.0);
    c->home.hfov = c->max_hfov;
    return 0;
}

/* An angle as the messages show it at dec decimals (1 or 3): no "-0.0". */
static double shown_at(double deg, int dec) { return fabs(deg) < (dec == 1 ? 0.05 : 0.0005) ? 0.0 : deg; }

int pc_vcam_clamp(const pc_vcam_coverage *c, const pc_vcam_limits *lim, pc_vcam_pose *p, char *why, size_t whylen)
{
    const pc_vcam_pose want = *p;
    char msg[256] = "";
    size_t n = 0;
    if (whylen)
        why[0] = '\0';
    double hmax = lim->max_hfov < c->max_hfov ? lim->max_hfov : c->max_hfov;
    double hmin = lim->min_hfov < hmax ? lim->min_hfov : hmax;
    if (!(p->hfov >= hmin)) {
        p->hfov = hmin;
        n += (size_t)snprintf(msg + n, sizeof msg - n, "hfov %.1f -> %.1f: the narrowest view allowed", want.hfov,
                              p->hfov);
    } else if (p->hfov > hmax) {
        p->hfov = hmax;
        n += (size_t)snprintf(msg + n, sizeof msg - n, "hfov %.1f -> %.1f: the widest view the %s", want.hfov,
                              p->hfov, hmax == c->max_hfov ? "cameras cover" : "limits allow");
    }
    if (!pc_vcam_covered(c, *p)) {
        /* the cameras cover less height away from home (a rectilinear
         * camera's edges see a shorter vertical angle): too wide for this
         * pan at home's tilt, the view narrows to the widest there rather
         * than leave the pan it was asked for */
        pc_vcam_pose level = *p;
        level.tilt = c->home.tilt;
        const double asked = p->hfov;
        level.hfov = hmin;
        if (!pc_vcam_covered(c, (pc_vcam_pose){p->pan, c->home.tilt, asked}) && pc_vcam_covered(c, level)) {
            p->hfov = widest(c, level, hmin, asked);
            if (n && n < sizeof msg)
                n += (size_t)snprintf(msg + n, sizeof msg - n, "; ");
            if (n < sizeof msg)
                n += (size_t)snprintf(msg + n, sizeof msg - n, "hfov %.1f -> %.1f: the widest view the cameras "
                                      "cover at pan %.1f", asked, p->hfov, p->pan);
        }
    }
    if (!pc_vcam_covered(c, *p)) {
        /* along the line from home (covered at any hfov <= max_hfov) */
        pc_vcam_pose h = c->home, q = *p;
        h.hfov = p->hfov;
        /* a view that only looks too high or too low keeps its pan: where
         * the cameras cover it at home's tilt, the line runs from there
         * (the tilt alone moves) */
        pc_vcam_pose level = *p;
        level.tilt = h.tilt;
        if (pc_vcam_covered(c, level))
            h = level;
        const double dp = pc_pan_delta(h.pan, p->pan), dt = p->tilt - h.tilt;
        double lo = 0.0, hi = 1.0;
        for (int k = 0; k < 40; k++) {
            double m = 0.5 * (lo + hi);
            q.pan = h.pan + m * dp;
            q.tilt = h.tilt + m * dt;
            if (pc_vcam_covered(c, q))
                lo = m;
            else
                hi = m;
        }
        p->pan = h.pan + lo * dp;
        p->tilt = h.tilt + lo * dt;
        if (p->pan > 180.0)
            p->pan -= 360.0;
        if (p->pan <= -180.0)
            p->pan += 360.0;
        const double cp = pc_pan_delta(want.pan, p->pan), ct = p->tilt - want.tilt;
        /* the axes that moved, in tenths of a degree; a move under a tenth
         * (a pose just past the edge) in thousandths, so the answer never
         * reads "clamped: : the cameras see nothing further "; under a
         * thousandth it is not worth a word */
        const double big = fmax(fabs(cp), fabs(ct));
        const int dec = big >= 0.05 ? 1 : 3;
        const double thr = big >= 0.05 ? 0.05 : 0.0005;
        const int sp = fabs(cp) >= thr, st = fabs(ct) >= thr;
        if ((sp || st) && n && n < sizeof msg)
            n += (size_t)snprintf(msg + n, sizeof msg - n, "; ");
        if (sp && n < sizeof msg)
            n += (size_t)snprintf(msg + n, sizeof msg - n, "pan %.*f -> %.*f%s", dec, shown_at(want.pan, dec), dec,
                                  shown_at(p->pan, dec), st ? ", " : "");
        if (st && n < sizeof msg)
            n += (size_t)snprintf(msg + n, sizeof msg - n, "tilt %.*f -> %.*f", dec, shown_at(want.tilt, dec), dec,
                                  shown_at(p->tilt, dec));
        if ((sp || st) && n < sizeof msg)
            n += (size_t)snprintf(msg + n, sizeof msg - n, ": the cameras see nothing further %s%s%s",
                                  sp ? (cp < 0 ? "right" : "left") : "", sp && st ? " or " : "",
                                  st ? (ct < 0 ? "up" : "down") : "");
    }
    if (whylen)
        snprintf(why, whylen, "%s", msg);
    return msg[0] != '\0';
}
