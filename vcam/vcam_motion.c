/* vcam_motion.c - how a virtual camera moves: a critically damped
 * second-order follower per axis (pan, tilt, hfov) chasing a setpoint, with
 * its speed and acceleration bounded, so that no command makes the picture
 * jump or jerk. The setpoint itself is the goal (SMOOTH), or travels to it
 * at a given speed (SPEED) or over a given time with ease in/out
 * (DURATION).
 *
 * Why this shape: a broadcast camera operator's moves start and stop
 * softly; a first-order filter (exponential smoothing) starts with a jump
 * in speed, and a bare rate limit starts with a jump in acceleration. The
 * second-order follower x'' = w^2 (s - x) - 2 w x' has neither, never
 * overshoots (critically damped), and its bounds make long moves a
 * trapezoid in speed: accelerate at most max_accel, cruise at most
 * max_speed, brake early enough to stop at the goal (|v| <= sqrt(2 a d)).
 */
#include "vcam.h"

#include <math.h>
#include <string.h>

void pc_vcam_limits_default(pc_vcam_limits *l)
{
    memset(l, 0, sizeof *l);
    l->max_speed = 30.0;      /* a brisk pan: the pitch's width in ~5 s */
    l->max_accel = 60.0;      /* full speed in 0.5 s */
    l->max_zoom_speed = 20.0;
    l->max_zoom_accel = 40.0;
    l->response_s = 0.15;
    l->min_hfov = 5.0;
    l->max_hfov = 120.0;
}

void pc_vcam_motion_init(pc_vcam_motion *m, const pc_vcam_limits *lim, pc_vcam_pose start)
{
    memset(m, 0, sizeof *m);
    m->lim = *lim;
    m->cur = m->goal = m->from = m->set = start;
    m->mode = PC_VCAM_MOVE_SMOOTH;
    m->vcap_pan = m->vcap_tilt = lim->max_speed;
}

void pc_vcam_motion_go(pc_vcam_motion *m, pc_vcam_pose goal, pc_vcam_move mode, double value)
{
    m->from = m->set;
    m->goal = goal;
    m->mode = mode;
    m->value = value;
    m->t = 0.0;
    m->t_end = 0.0;
    double dp = pc_pan_delta(m->from.pan, goal.pan), dt = goal.tilt - m->from.tilt;
    double dist = sqrt(dp * dp + dt * dt);
    m->vcap_pan = m->vcap_tilt = m->lim.max_speed;
    m->pace = 0.0;
    m->pace_zoom = 0;
    m->pace_why = PC_VCAM_PACE_ASKED;
    if (mode == PC_VCAM_MOVE_SPEED) {
        const double dz = fabs(goal.hfov - m->from.hfov);
        if (dist > 0) {
            double v = value > 0 ? value : m->lim.max_speed;
            if (v > m->lim.max_speed) {
                v = m->lim.max_speed;
                m->pace_why = PC_VCAM_PACE_MAX_SPEED;
            }
            /* the follower too keeps to the asked speed along the path (a
             * little room across it, for corrections) */
            m->vcap_pan = fmax(v * fabs(dp) / dist, 0.05 * v);
            m->vcap_tilt = fmax(v * fabs(dt) / dist, 0.05 * v);
            /* hfov changes over the same time, within its own speed: a
             * longer zoom slows the whole move */
            double tz = dz / m->lim.max_zoom_speed;
            m->t_end = fmax(dist / v, tz);
            m->pace = dist / m->t_end;
            if (tz > dist / v)
                m->pace_why = PC_VCAM_PACE_ZOOM_TIME;
        } else {
            /* a zoom alone: the speed is the hfov's, within its limit (it
             * ran at max_zoom_speed whatever was asked) */
            double vz = value > 0 ? value : m->lim.max_zoom_speed;
            if (vz > m->lim.max_zoom_speed) {
                vz = m->lim.max_zoom_speed;
                m->pace_why = PC_VCAM_PACE_MAX_ZOOM;
            }
            m->t_end = dz / vz;
            m->pace = vz;
            m->pace_zoom = 1;
        }
    } else if (mode == PC_VCAM_MOVE_DURATION) {
        m->t_end = value > 0 ? value : 0.0;
    }
    if (m->t_end <= 0.0) {
        m->mode = PC_VCAM_MOVE_SMOOTH;
        m->set = goal;
    }
}

/* One axis over h seconds: critically damped towards s moving at vs (the
 * setpoint's own speed, fed forward so a path is tracked without lag),
 * bounded. */
/* The braking bound's deceleration, as a fraction of max_accel (axis_step). */
#define BRAKE 0.9

static void axis_step(double *x, double *v, double s, double vs, double w, double vmax, double amax, double h)
{
    double e = s - *x;
    double a = w * w * e + 2.0 * w * (vs - *v);
    if (a > amax)
        a = amax;
    if (a < -amax)
        a = -amax;
    double nv = *v + a * h;
    /* brake in time: a speed towards the setpoint above sqrt(2 a d) could
     * not stop at it; but never brake harder than amax: a setpoint that
     * jumps towards a moving view (the follow mode's target turning
     * round) is passed a little and come back to, not stopped with a
     * jerk. The bound is the curve of braking at BRAKE x amax: near the
     * end the follower's own pull (w^2 e - 2 w v) brakes less than amax
     * and the view drifts above the curve; with the margin it gets back
     * onto it at amax and arrives without passing the setpoint (a stop
     * at full speed came back 0.035 degrees with the curve at amax) */
    double vstop = sqrt(2.0 * BRAKE * amax * fabs(e)) + fabs(vs);
    double lim = vmax < vstop ? vmax : vstop;
    if (e * nv > 0 && fabs(nv) > lim) {
        const double slowest = fabs(*v) - amax * h, mag = lim > slowest ? lim : slowest;
        if (mag < fabs(nv))
            nv = nv > 0 ? mag : -mag;
    }
    if (nv > vmax)
        nv = vmax;
    if (nv < -vmax)
        nv = -vmax;
    *v = nv;
    *x += nv * h;
}

static double stop_dist(double v, double a) { return v * fabs(v) / (2.0 * BRAKE * a); }

pc_vcam_pose pc_vcam_stop_pose(const pc_vcam_limits *l, pc_vcam_pose cur, pc_vcam_pose vel)
{
    pc_vcam_pose p = {cur.pan + stop_dist(vel.pan, l->max_accel), cur.tilt + stop_dist(vel.tilt, l->max_accel),
                      cur.hfov + stop_dist(vel.hfov, l->max_zoom_accel)};
    return p;
}

pc_vcam_pose pc_vcam_motion_step(pc_vcam_motion *m, double dt)
{
    if (!(dt > 0))
        return m->cur;
    const pc_vcam_limits *l = &m->lim;
    const double w = 1.0 / (l->response_s > 1e-3 ? l->response_s : 1e-3);
    /* sub-steps of at most 2 ms keep the follower stable and the braking
     * bound exact enough whatever the frame period */
    int n = (int)ceil(dt / 0.002);
    double h = dt / n;
    for (int i = 0; i < n; i++) {
        pc_vcam_pose vs = {0, 0, 0}; /* the setpoint's speed */
        if (m->mode != PC_VCAM_MOVE_SMOOTH) {
            m->t += h;
            double tau = m->t_end > 0 ? m->t / m->t_end : 1.0;
            if (tau > 1.0)
                tau = 1.0;
            /* SPEED: constant speed along the path; DURATION: ease in/out
             * (smoothstep; dk its derivative over time) */
            const int ease = m->mode == PC_VCAM_MOVE_DURATION;
            double k = ease ? tau * tau * (3.0 - 2.0 * tau) : tau;
            double dk = tau >= 1.0 ? 0.0 : (ease ? 6.0 * tau * (1.0 - tau) : 1.0) / m->t_end;
            const double dp = pc_pan_delta(m->from.pan, m->goal.pan), dt_ = m->goal.tilt - m->from.tilt,
                         dz = m->goal.hfov - m->from.hfov;
            m->set.pan = m->from.pan + k * dp;
            m->set.tilt = m->from.tilt + k * dt_;
            m->set.hfov = m->from.hfov + k * dz;
            vs = (pc_vcam_pose){dk * dp, dk * dt_, dk * dz};
            if (tau >= 1.0)
                m->mode = PC_VCAM_MOVE_SMOOTH;
        } else {
            m->set = m->goal;
        }
        /* pan chases the setpoint the short way round */
        double sp = m->cur.pan + pc_pan_delta(m->cur.pan, m->set.pan);
        axis_step(&m->cur.pan, &m->vel.pan, sp, vs.pan, w, m->vcap_pan, l->max_accel, h);
        axis_step(&m->cur.tilt, &m->vel.tilt, m->set.tilt, vs.tilt, w, m->vcap_tilt, l->max_accel, h);
        axis_step(&m->cur.hfov, &m->vel.hfov, m->set.hfov, vs.hfov, w, l->max_zoom_speed, l->max_zoom_accel, h);
    }
    if (m->cur.pan > 180.0)
        m->cur.pan -= 360.0;
    if (m->cur.pan <= -180.0)
        m->cur.pan += 360.0;
    return m->cur;
}

int pc_vcam_motion_moving(const pc_vcam_motion *m)
{
    const double eps = 1e-3;
    return m->mode != PC_VCAM_MOVE_SMOOTH || fabs(pc_pan_delta(m->cur.pan, m->goal.pan)) > eps ||
           fabs(m->cur.tilt - m->goal.tilt) > eps || fabs(m->cur.hfov - m->goal.hfov) > eps ||
           fabs(m->vel.pan) > eps || fabs(m->vel.tilt) > eps || fabs(m->vel.hfov) > eps;
}
