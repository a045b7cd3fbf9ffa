/* vcams.h - the running daemon's virtual cameras: one owner (the render
 * step, on the stage thread) steps their motion once per frame set and
 * renders them at the poses it gets; operators (control socket, HTTP API,
 * web page) talk to them from their own threads through commands that are
 * checked, clamped to the rig's coverage and answered at once, and take
 * effect from the next set.
 *
 *   set-up      pl_vcams_open(settings, rig)        main thread
 *   per set     pl_vcams_step(v, dt, activity)      stage thread (the render step)
 *   commands    pl_vcams_command(v, line)           any thread (control, HTTP)
 *   reading     pl_vcams_status(v, out)             any thread (status, metrics, page)
 *   reload      pl_vcams_reload(v, settings)        main thread (live pose/mode/presets/limits)
 *
 * Thread safety: one mutex guards the shared state (commands in, poses
 * out); the stage thread holds it for microseconds per set.
 */
#ifndef PANOCAP_VCAMS_H
#define PANOCAP_VCAMS_H

#include <stddef.h>
#include <stdint.h>

#include "follow.h"
#include "rig.h"
#include "settings.h"
#include "vcam.h"

typedef struct pl_vcams pl_vcams;

/* What one virtual camera is doing, for status lines, metrics and the
 * web page. */
typedef struct pl_vcam_status {
    char name[PC_NAME_LEN];
    int width, height;
    pc_vcam_pose pose;   /* where it points now */
    pc_vcam_pose goal;   /* where it is going */
    int follow;          /* 1: follow mode */
    int moving;
    double activity;     /* follow mode: the last activity total */
    uint64_t commands;   /* commands applied */
    uint64_t clamped;    /* commands the coverage or the limits changed */
    char last_clamp[160];/* the last clamp's reason ("" = none) */
    int npresets;
    char presets[PC_MAX_PRESETS][PC_NAME_LEN];
} pl_vcam_status;

/* From s->vcams (poses already clamped by the settings' check: starts)
 * and the rig. 0, or -1 with err. */
int pl_vcams_open(pl_vcams **out, const pc_settings *s, const pc_rig *rig, const pc_vcam_pose *starts, double fps,
                  char *err, size_t errlen);
void pl_vcams_close(pl_vcams *v);
int pl_vcams_count(const pl_vcams *v);

/* Stage thread, once per frame set, dt seconds after the last (frame
 * periods, dropped sets included, so motion keeps time). counts: the
 * follow mode's activity grid for this set (NULL: none this set). Fills
 * poses[i] for every view. */
void pl_vcams_step(pl_vcams *v, double dt, const uint32_t *counts, pc_vcam_pose *poses);
/* The activity grid's geometry the follow mode reads counts in (set by the
 * render step once it knows the small panorama it renders). */
void pl_vcams_set_grid(pl_vcams *v, const pc_follow_grid *g);
/* 1 when some view is in follow mode (the render step then makes the
 * activity map). */
int pl_vcams_want_activity(pl_vcams *v);

/* Any thread: one command, as the control socket's text after "vcam "
 * (the HTTP API builds the same text). Grammar:
 *   NAME                                     -> status of NAME
 *   NAME goto PAN TILT [HFOV] [speed S | time T]
 *   NAME move DPAN DTILT [DHFOV] [speed S | time T]   relative
 *   NAME zoom HFOV [speed S | time T]
 *   NAME preset PNAME [speed S | time T]
 *   NAME save PNAME                           the current pose as a preset (until reload)
 *   NAME follow on|off
 *   NAME stop                                 stay where it is now
 * Answers "OK ..." (with the pose it will go to and, when clamped, why)
 * or "ERR ..." naming what is wrong; a bad command changes nothing. */
int pl_vcams_command(pl_vcams *v, const char *cmd, char *answer, size_t len);

/* Any thread: the status of every view; returns how many (<= max). */
int pl_vcams_status(pl_vcams *v, pl_vcam_status *out, int max);

/* Main thread: live settings of the views (pose, mode, presets, limits,
 * follow parameters) from a reload; the list of names is the same (the
 * settings' diff makes anything else a restart). */
int pl_vcams_reload(pl_vcams *v, const pc_settings *s, const pc_vcam_pose *starts, char *msg, size_t msglen);

#endif
