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
 *   the web     pl_vcams_map / pl_vcams_outline     any thread: the live picture's
 *               page's  directions, and where a view lies in it (vcams_map.c)
 *
 * Thread safety: one mutex guards the shared state (commands in, poses
 * out); the stage thread holds it for microseconds per set. The expensive
 * parts run outside it: a command's coverage clamp (tens to a couple of
 * hundred microseconds) and the follow mode's target (the stage thread's
 * own state) - a command whose view changed meanwhile is re-done, so two
 * operators' relative moves both count. The rig's coverage changes only
 * with a reload of another rig, under a read-write lock the clamps read.
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

#define PL_VCAMS_CMD_MAX 512 /* bytes of one command (longer: ERR) */

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
    double min_hfov, max_hfov; /* the zoom range commands get: the limits within the rig's coverage */
    double max_speed;    /* pan/tilt, degrees per second */
    uint64_t commands;   /* commands applied */
    uint64_t clamped;    /* commands the coverage or the limits changed */
    uint64_t refused;    /* commands naming this view that were refused (ERR) */
    char last_clamp[160];/* the last clamp's reason ("" = none) */
    int npresets;
    char presets[PC_MAX_PRESETS][PC_NAME_LEN];
} pl_vcam_status;

/* What a command did, for callers that answer in another form than the
 * text (the HTTP API's JSON). */
typedef struct pl_vcam_result {
    int view;            /* the view it named, -1 = none (unknown, or the list) */
    int changed;         /* 1: it changed the view (a move, follow, save) */
    pc_vcam_pose goal;   /* the (clamped) pose the view goes to */
    int clamped;         /* 1: the coverage or the limits changed the asked pose */
    char why[160];       /* ... why */
    int follow_off;      /* 1: it took the view out of follow mode */
} pl_vcam_result;

/* From s->vcams (poses already clamped by the settings' check: starts;
 * NULL: clamped here) and the rig. 0, or -1 with err. */
int pl_vcams_open(pl_vcams **out, const pc_settings *s, const pc_rig *rig, const pc_vcam_pose *starts, double fps,
                  char *err, size_t errlen);
void pl_vcams_close(pl_vcams *v);
int pl_vcams_count(const pl_vcams *v);
/* The view's index by name, or -1. */
int pl_vcams_find(const pl_vcams *v, const char *name);
/* Any thread: a copy of the rig's camera models (as the coverage sees
 * them); returns how many (<= max). */
int pl_vcams_rig_cameras(pl_vcams *v, pc_cam_model *out, int max);
/* Any thread: the rig's panorama (its p line) rendered at w x h, as the
 * render step draws it (pc_rig_panorama_view of the rig in force). */
void pl_vcams_panorama_view(pl_vcams *v, int w, int h, pc_view_model *out);

/* Stage thread, once per frame set, dt seconds after the last (frame
 * periods, dropped sets included, so motion keeps time). counts: the
 * follow mode's activity grid for this set (NULL: none this set). Fills
 * poses[i] for every view. */
void pl_vcams_step(pl_vcams *v, double dt, const uint32_t *counts, pc_vcam_pose *poses);
/* The activity grid's geometry the follow mode reads counts in (set by the
 * render step once it knows the small panorama it renders; from the
 * thread that steps, or before stepping starts). */
void pl_vcams_set_grid(pl_vcams *v, const pc_follow_grid *g);
/* 1 when some view is in follow mode (the render step then makes the
 * activity map). */
int pl_vcams_want_activity(pl_vcams *v);

/* Any thread: one command, as the control socket's text after "vcam "
 * (the HTTP API builds the same text). Grammar (verbs and on/off in any
 * case; names exact; numbers plain decimals, finite):
 *   (nothing)                                -> one status line per view, then "OK N views"
 *   NAME                                     -> status of NAME
 *   NAME goto PAN TILT [HFOV] [speed S | time T]
 *   NAME move DPAN DTILT [DHFOV] [speed S | time T]   relative to where it is going
 *   NAME zoom HFOV [speed S | time T]
 *   NAME preset PNAME [speed S | time T]
 *   NAME save PNAME                           the current pose as a preset (until reload)
 *   NAME follow on|off
 *   NAME stop                                 stay where it is now
 * Ranges: PAN -180..180, TILT -90..90, HFOV 1..179, DPAN -360..360,
 * DTILT -180..180, DHFOV -178..178, S 0.1..1000 deg/s (the view's
 * max_speed caps it; a move that only zooms: the zoom's speed, capped by
 * max_zoom_speed), T 0.05..600 s.
 * A move (goto, move, zoom, preset, stop) in follow mode turns follow off
 * (the answer says so); `follow on` hands the view back.
 * Answers "OK ..." (with the pose it will go to and, when clamped, why)
 * or "ERR ..." naming what is wrong; a bad command changes nothing.
 * Returns 0 (OK) or -1 (ERR). */
int pl_vcams_command(pl_vcams *v, const char *cmd, char *answer, size_t len);
/* The same, and what it did in *res (NULL: not wanted). */
int pl_vcams_exec(pl_vcams *v, const char *cmd, char *answer, size_t len, pl_vcam_result *res);

/* Any thread: the status of every view; returns how many (<= max). */
int pl_vcams_status(pl_vcams *v, pl_vcam_status *out, int max);
/* One line of st, without a newline: "main 1920x1080: pan 1.0 tilt ... manual, still, ..." */
void pl_vcams_status_line(const pl_vcam_status *st, char *buf, size_t len);

/* Main thread: live settings of the views (pose, mode, presets, limits,
 * follow parameters) from a reload; the list of names is the same (the
 * settings' diff makes anything else a restart). A changed pose or mode
 * is applied (the view moves there smoothly); an unchanged one leaves the
 * view where its operator put it. rig: another rig (its coverage is
 * rebuilt; the views are clamped into it), NULL = the same. starts: as
 * for open (NULL: clamped here). msg says what changed. 0, or -1 with msg
 * (nothing changed). */
int pl_vcams_reload(pl_vcams *v, const pc_settings *s, const pc_rig *rig, const pc_vcam_pose *starts, char *msg,
                    size_t msglen);

/* --- the web page's geometry (vcams_map.c) -------------------------------- */

#define PL_VCAMS_MAX_TILES PC_RIG_MAX_CAMERAS
#define PL_VCAMS_MAP_POINTS 4096 /* grid points of a map, all tiles together */

/* A picture the web page shows, as the map sees it: either the cameras'
 * pictures side by side (tiles: camera tile[i].cam's whole frame, scaled,
 * at tile[i].x, y), or a rendering through a view model (the panorama),
 * scaled by `scale` (picture pixel = model pixel / scale). */
typedef struct pl_vcams_picture {
    int width, height;   /* the picture's size, pixels */
    int ntiles;          /* > 0: the cameras side by side */
    struct {
        int cam;
        double x, y, w, h; /* the tile in the picture */
    } tile[PL_VCAMS_MAX_TILES];
    pc_view_model view;  /* ntiles == 0: the picture's projection */
    double scale;
} pl_vcams_picture;

/* Directions of grid points over each tile of the picture (one tile for a
 * rendering): the page interpolates within a tile (never across two: the
 * cameras' edges do not meet in the strip) to turn a click into a pan and
 * tilt. Each tile cols x rows points from its top-left to its
 * bottom-right corner; seen[k] 0 where no direction maps there. */
typedef struct pl_vcams_map {
    int ntiles;
    struct {
        double x, y, w, h;
        int cols, rows, first; /* its points: [first, first + cols * rows) */
    } tile[PL_VCAMS_MAX_TILES];
    int npoints;
    float pan[PL_VCAMS_MAP_POINTS], tilt[PL_VCAMS_MAP_POINTS];
    unsigned char seen[PL_VCAMS_MAP_POINTS];
} pl_vcams_map;

/* Fills map for pic (about 8 points per 100 pixels of a tile, at least 5
 * a side). -1 with err when the picture cannot be mapped. */
int pl_vcams_map_make(pl_vcams *v, const pl_vcams_picture *pic, pl_vcams_map *map, char *err, size_t errlen);

/* Where view i at pose p lies in pic: its border as polylines of picture
 * pixels (a view seen across two cameras of the strip is drawn in both
 * tiles). xy[2k], xy[2k+1]: the points; starts[j]: where polyline j
 * begins (nlines of them, the last ending at the returned count).
 * Returns the number of points (<= max). */
int pl_vcams_outline(pl_vcams *v, int i, pc_vcam_pose p, const pl_vcams_picture *pic, float *xy, int max,
                     int *starts, int maxlines, int *nlines);

#endif
