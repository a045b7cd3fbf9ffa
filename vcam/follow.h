/* follow.h - the follow mode of a virtual camera: where the play is, from
 * an activity grid (render/activity.h: foreground pixels of a small
 * panorama against its background model, counted per cell), to a goal
 * pose for the camera's motion (vcam.h), like a camera operator would
 * frame it:
 *   - the target is where the play is densest: the centre of the window
 *     (about half the view's width) in pan holding the most activity,
 *     kept while no other holds clearly more (robust to a lone warm-up
 *     player or a steward on the touchline, and closer to the ball than
 *     the median or the centroid of everyone), its tilt the median of
 *     that window's active cells;
 *   - lead room: the target moves ahead in the direction the play moves;
 *   - zoom from the spread of the activity (its 10th..90th percentile in
 *     pan, with a margin), so everyone who plays is in the picture;
 *   - a dead zone: while the target stays near the middle of the view the
 *     goal does not move at all, so a still play gives a still picture;
 *     once it leaves it, the goal follows the target continuously (no
 *     start-stop steps) until the play settles again;
 *   - the goal is smoothed (first order) and then followed by the bounded
 *     second-order motion, clamped to the rig's coverage.
 */
#ifndef PANOCAP_FOLLOW_H
#define PANOCAP_FOLLOW_H

#include <stdint.h>

#include "vcam.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_FOLLOW_MAX_CELLS 8192

/* What the activity grid's cells are: the direction of each cell's
 * centre, computed once per rig (pc_follow_grid_init). */
typedef struct pc_follow_grid {
    int gw, gh;                      /* cells across and down */
    float pan[PC_FOLLOW_MAX_CELLS];  /* degrees */
    float tilt[PC_FOLLOW_MAX_CELLS]; /* degrees */
} pc_follow_grid;

/* Cells of cw x ch pixels over a picture rendered through view v (the
 * small panorama the activity map is made of). -1 if too many cells. */
int pc_follow_grid_init(pc_follow_grid *g, const pc_view_model *v, int cw, int ch);

typedef struct pc_follow_params {
    double min_activity;   /* active pixels below which the play is "nowhere": hold the view */
    double window;         /* degrees: the target is the centre of the window this wide in pan
                            * that holds the most activity (about half the view's width) */
    double window_keep;    /* the window where the play was stays unless another holds 1 + this
                            * times its activity */
    double dead_zone;      /* fraction of the view's width: no move while the target is this close to the goal */
    double lead_s;         /* lead room: seconds of the play's motion ahead of it */
    double lead_max;       /* at most this fraction of the view's width */
    double smooth_s;       /* time constant of the target's smoothing */
    double zoom_margin;    /* hfov = spread * (1 + 2 margin) ... */
    double min_hfov, max_hfov;
    double tilt_offset;    /* degrees added to the target's tilt (frame the players, not their feet) */
} pc_follow_params;

void pc_follow_params_default(pc_follow_params *p);

typedef struct pc_follow {
    pc_follow_params par;
    int have;              /* a target was seen */
    double pan, tilt, hfov;/* the smoothed target */
    double win;            /* the window's centre (the target before smoothing) */
    double vpan;           /* the play's pan speed (smoothed), degrees/s */
    pc_vcam_pose goal;     /* the last goal handed to the motion */
    int tracking;          /* the target left the dead zone: goals follow it until it settles */
    double activity;       /* the last grid's total (for status) */
} pc_follow;

void pc_follow_init(pc_follow *f, const pc_follow_params *par, pc_vcam_pose start);
/* One activity grid (counts per cell, g->gw * g->gh of them) dt seconds
 * after the last: updates the target and returns 1 with a new goal in
 * *goal when the camera should move, 0 when it should stay. */
int pc_follow_update(pc_follow *f, const pc_follow_grid *g, const uint32_t *counts, double dt, pc_vcam_pose *goal);

#ifdef __cplusplus
}
#endif
#endif
