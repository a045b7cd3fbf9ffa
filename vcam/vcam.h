/* vcam.h - virtual cameras: where a perspective view of the rig points and
 * how it gets there. Pure logic, no pixels: the renderer (render/render.h)
 * draws the view at the pose this module says.
 *
 *   pose      pan (degrees, + right), tilt (degrees, + up), hfov (degrees)
 *   motion    a critically damped second-order follower per axis, with a
 *             speed and an acceleration bound: a command never makes the
 *             picture jump, whatever it asks (pc_vcam_motion_*)
 *   coverage  what the rig's cameras see: a view is only allowed where every
 *             pixel of it is seen by some camera (pc_vcam_clamp moves and
 *             zooms a pose back inside and says why)
 *
 * Time is whatever the caller steps with (the frame period in the daemon,
 * so motion is the same at any load: a dropped set still advances time).
 */
#ifndef PANOCAP_VCAM_H
#define PANOCAP_VCAM_H

#include <stddef.h>

#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_vcam_pose {
    double pan, tilt, hfov; /* degrees */
} pc_vcam_pose;

/* Bounds of the motion; pc_vcam_limits_default fills sane broadcast ones. */
typedef struct pc_vcam_limits {
    double max_speed;      /* pan/tilt, degrees per second */
    double max_accel;      /* pan/tilt, degrees per second^2 */
    double max_zoom_speed; /* hfov, degrees per second */
    double max_zoom_accel; /* hfov, degrees per second^2 */
    double response_s;     /* the follower's time constant: 1/omega */
    double min_hfov, max_hfov;
} pc_vcam_limits;

void pc_vcam_limits_default(pc_vcam_limits *l);

/* How a commanded pose is reached. */
typedef enum pc_vcam_move {
    PC_VCAM_MOVE_SMOOTH = 0, /* as fast as the limits allow, critically damped */
    PC_VCAM_MOVE_SPEED,      /* at most `value` degrees per second: pan/tilt (hfov over the same time,
                              * within max_zoom_speed); a move that only zooms: the hfov's */
    PC_VCAM_MOVE_DURATION,   /* arriving after `value` seconds (ease in and out) */
} pc_vcam_move;

/* Why a SPEED move runs at another speed than asked (pc_vcam_motion.pace). */
typedef enum pc_vcam_pace {
    PC_VCAM_PACE_ASKED = 0,  /* as asked */
    PC_VCAM_PACE_MAX_SPEED,  /* capped to max_speed (pan/tilt) */
    PC_VCAM_PACE_MAX_ZOOM,   /* a zoom alone, capped to max_zoom_speed */
    PC_VCAM_PACE_ZOOM_TIME,  /* slower: its zoom takes longer at max_zoom_speed */
} pc_vcam_pace;

/* One view's motion state (owned by whoever steps it: the daemon's stage
 * thread; commands reach it as requests). */
typedef struct pc_vcam_motion {
    pc_vcam_limits lim;
    pc_vcam_pose cur, vel;        /* where the view is, and how fast it moves */
    pc_vcam_pose goal;            /* the commanded pose */
    pc_vcam_pose from;            /* setpoint path start (SPEED, DURATION) */
    pc_vcam_pose set;             /* the setpoint the follower chases now */
    pc_vcam_move mode;
    double value;                 /* speed (deg/s) or duration (s) */
    double t, t_end;              /* time along the path, its end */
    double vcap_pan, vcap_tilt;   /* this move's speed bounds (SPEED: the
                                   * asked speed split along the path) */
    /* SPEED: the move's speed as it runs, degrees per second, and why it
     * is not the one asked (what a command's answer says) */
    double pace;
    int pace_zoom;                /* 1: the move only zooms: pace is the hfov's */
    pc_vcam_pace pace_why;
} pc_vcam_motion;

void pc_vcam_motion_init(pc_vcam_motion *m, const pc_vcam_limits *lim, pc_vcam_pose start);
/* A new goal (already clamped by the caller). value: see pc_vcam_move. */
void pc_vcam_motion_go(pc_vcam_motion *m, pc_vcam_pose goal, pc_vcam_move mode, double value);
/* Advances the motion by dt seconds; returns the new pose. */
pc_vcam_pose pc_vcam_motion_step(pc_vcam_motion *m, double dt);
/* Where a view at cur moving at vel comes to rest braking as the motion
 * does (its bound's curve): the goal of a stop that never comes back. */
pc_vcam_pose pc_vcam_stop_pose(const pc_vcam_limits *l, pc_vcam_pose cur, pc_vcam_pose vel);
/* 1 while the view is still moving towards its goal. */
int pc_vcam_motion_moving(const pc_vcam_motion *m);

/* --- coverage ---------------------------------------------------------- */

/* The rig's cameras as the coverage test sees them. */
typedef struct pc_vcam_coverage {
    int ncam;
    pc_cam_model cam[PC_RIG_MAX_CAMERAS];
    double aspect;          /* view height / width */
    pc_vcam_pose home;      /* a pose known to be covered: the rig's centre */
    double max_hfov;        /* the widest covered view at home */
} pc_vcam_coverage;

/* Prepares the coverage of rig for views of aspect h/w. -1 with a reason
 * when no view of that aspect fits in what the cameras see. */
int pc_vcam_coverage_init(pc_vcam_coverage *c, const pc_rig *rig, int w, int h, char *err, size_t errlen);
/* 1 when every pixel of a view at pose p is seen by some camera (checked
 * on the view's border, 8 points per side, and its centre). */
int pc_vcam_covered(const pc_vcam_coverage *c, pc_vcam_pose p);
/* Moves p inside the coverage and the limits: hfov first into
 * [min_hfov, min(max_hfov, widest covered)]; then, where the cameras
 * cover the view's pan at home's tilt only narrower, hfov down to the
 * widest covered there; then pan/tilt along the line towards home until
 * covered, the tilt alone where the view is covered at its pan and home's
 * tilt (a view asked too wide, too high or too low keeps its pan: the
 * follow mode's goals, a click on the far touchline). Returns 0 when p was already allowed, 1 when
 * it changed (why says what and why, e.g. "pan 80.0 -> 61.4: the cameras
 * see nothing further right"). */
int pc_vcam_clamp(const pc_vcam_coverage *c, const pc_vcam_limits *lim, pc_vcam_pose *p, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
