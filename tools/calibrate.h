/* calibrate.h - the parts of panocap-calibrate (tools/panocap-calibrate.c,
 * the driver): where the frame set comes from (calibrate_input.c), running
 * Hugin's command-line tools step by step (calibrate_hugin.c), and judging
 * the result with panocap's own camera model (calibrate_check.c).
 *
 * Every function returns 0, or -1 with a message in err that names what
 * failed (the file, the step, the camera). The work folder holds the
 * camera pictures (cam0.png ..), each step's project and each tool's log.
 */
#ifndef PANOCAP_CALIBRATE_H
#define PANOCAP_CALIBRATE_H

#include <stddef.h>

#include "rig.h"

#define CAL_MAX_CAMERAS PC_RIG_MAX_CAMERAS

/* ---------------------------------------------- calibrate_input.c */

/* The camera pictures of one frame set, written as WORK/cam<i>.png; n and
 * the common size come back. */
typedef struct cal_pictures {
    int n, w, h;
    char what[160]; /* where they came from, for the report */
} cal_pictures;

/* Image files (PNG or PPM), one per camera in order, all of one size. */
int cal_input_images(const char *work, char *const files[], int nfiles, cal_pictures *out, char *err,
                     size_t errlen);
/* Frame set `set` (0 = the first) of a .pcraw recording, each camera's
 * slab demosaiced on its own with algorithm `algo` (the C reference);
 * 10/12-bit samples keep their 8 most significant bits. */
int cal_input_raw(const char *work, const char *path, long set, const char *algo, cal_pictures *out, char *err,
                  size_t errlen);
/* The next frame set of a running panocap: `snapshot-cameras NAME` on its
 * control socket, then the pictures it wrote (read where the daemon put
 * them, copied into work). timeout_s bounds the wait for the answer. */
int cal_input_daemon(const char *work, const char *socket_path, const char *name, int timeout_s,
                     cal_pictures *out, char *err, size_t errlen);

/* ---------------------------------------------- calibrate_hugin.c */

/* The Hugin tools the chain runs, in the order it runs them. */
extern const char *const cal_hugin_tools[];

/* 0 when every tool of cal_hugin_tools is an executable in PATH; else -1
 * with the missing one's name in missing. */
int cal_hugin_check(char *missing, size_t n);

typedef struct cal_runner {
    const char *work; /* the tools run in this folder; logs go here */
    int quiet;        /* no progress lines */
    int step, nsteps; /* for "[3/7]" */
    double seconds;   /* of the last step */
} cal_runner;

/* Runs argv (argv[0] looked up in PATH) in r->work with stdin from
 * /dev/null and stdout+stderr into WORK/<log>, waits. -1 when it cannot
 * start or exits non-zero / by a signal: err names the step, the exit
 * status and the log, with the log's last line. */
int cal_run(cal_runner *r, const char *log, char *const argv[], char *err, size_t errlen);

/* The last "Average (rms) distance between Controlpoints" an optimiser log
 * shows (Hugin's own unit), or -1 when none. */
double cal_optimiser_rms(const char *log_path);

/* Copies the project in -> out with the response (Ra..Re) and vignetting
 * (Va..Vd, Vx, Vy) of every image linked to image 0's: the cameras of a
 * rig are one model, and one lens per camera would let the photometric
 * optimiser fit each camera's vignetting from the overlaps alone (at the
 * image borders only, where it is not determined). */
int cal_link_photometry(const char *in, const char *out, char *err, size_t errlen);

/* Copies the project in -> out with every image's n"..." replaced by the
 * absolute path of that file in folder (so out may live anywhere). */
int cal_write_final(const char *in, const char *folder, const char *out, char *err, size_t errlen);

/* ---------------------------------------------- calibrate_check.c */

/* A control point of a .pto `c` line: (x, y) in image n is (X, Y) in
 * image N; t 0 is a normal point (1, 2: line points). */
typedef struct cal_cp {
    int n, N, t;
    double x, y, X, Y;
} cal_cp;

/* Reads the `c` lines of a project. *cps is malloc'd (free it). */
int cal_read_cps(const char *pto, cal_cp **cps, int *ncps, char *err, size_t errlen);

/* A control point's error in source pixels: how far camera N sees the
 * direction of (x, y) in n from (X, Y), and the other way round; the mean
 * of both. 1e6 when a direction is not in front of a camera. */
double cal_cp_error(const pc_cam_model *cams, const cal_cp *cp);

/* Fraction of camera a's picture (a grid of samples) that camera b sees. */
double cal_overlap(const pc_cam_model *a, const pc_cam_model *b);

/* Which pairs of cameras must share control points. */
enum { CAL_PAIRS_LINEAR, CAL_PAIRS_RING, CAL_PAIRS_ALL };

typedef struct cal_pair {
    int a, b;        /* a < b */
    int points;      /* normal control points between them */
    double mean, max;/* their errors (pixels); 0 without points or a rig */
    double overlap;  /* fraction of a that b sees (with a rig), else -1 */
    int required;    /* must have at least min_points */
} cal_pair;

typedef struct cal_report {
    int npairs;
    cal_pair pair[CAL_MAX_CAMERAS * (CAL_MAX_CAMERAS - 1) / 2];
    int points;            /* normal control points in all */
    double mean, max;      /* over all of them (with a rig) */
    int connected;         /* the cameras form one group through pairs with points */
} cal_report;

/* Fraction of camera a's picture that b must see for an `all` pair to be
 * required (calibrate with --pairs all). */
#define CAL_ALL_MIN_OVERLAP 0.05

/* Counts the control points per pair and, with rig (may be NULL: before
 * the optimiser), their errors and the pairs' overlaps; marks the pairs
 * the arrangement requires (min_points decides connectivity). */
void cal_evaluate(const pc_rig *rig, int ncam, const cal_cp *cps, int ncps, int pairs, int min_points,
                  cal_report *out);

#endif
