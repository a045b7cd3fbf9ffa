/* rig.h - the camera rig: a Hugin project file (.pto) read into panocap's
 * one camera model (camera_model.h), and what every renderer derives from
 * it (per-camera geometry, the output projection, the photometric tables).
 *
 * Reading (all errors name the file, the line and the field):
 *   pc_rig rig;
 *   pc_rig_load("/etc/panocap/rig.pto", &rig, err, sizeof err);
 *   pc_rig_check_cameras(&rig, ncam, width, height, err, sizeof err);
 * Deriving (host; the results are plain structs for kernels' parameters):
 *   pc_rig_camera_model(&rig, i, &cam_model);      // camera i's geometry
 *   pc_rig_vig_model(&rig, i, &vig);               // camera i's vignetting
 *   pc_rig_panorama_view(&rig, w, h, &view);       // the p line, at w x h
 *   pc_rig_rect_view(w, h, hfov, pan, tilt, roll, &view); // a virtual camera
 *   pc_rig_photometry_build(&rig, photo);          // gains and tables
 * Per pixel (camera_model.h, host and CUDA): pc_view_ray, pc_cam_project,
 * their inverses pc_cam_unproject and pc_view_project, pc_vig_factor,
 * pc_photo_correct. The output projections, their table and pan/tilt
 * angles of a direction: projection.h.
 *
 * Units: angles in the .pto and in pc_rig are degrees, as Hugin writes
 * them; the derived models are radians/pixels in float.
 */
#ifndef PANOCAP_RIG_H
#define PANOCAP_RIG_H

#include <stddef.h>

#include "camera_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_RIG_MAX_CAMERAS 16
#define PC_RIG_PATH_LEN 1024
#define PC_RIG_RESPONSE_KNOTS 1024 /* the EMoR curves' knots (Hugin's LUT size) */
/* The narrowest field of view (degrees) a camera or the canvas may have:
 * the longest telephoto lenses see about 1 degree, and below 0.1 the
 * camera model's single-precision rays no longer tell a camera's pixels
 * apart (a 2040-pixel camera at 0.01 degree: 9e-8 radian a pixel, float's
 * own step); v1e-300 or five cameras at v0.001 rendered nothing at all. */
#define PC_RIG_MIN_HFOV 0.1

/* One `i` line as written (variables linked with `=N` resolved). */
typedef struct pc_rig_camera {
    int w, h;                  /* image size */
    int lens;                  /* PC_LENS_* (f) */
    double hfov;               /* v, degrees */
    double yaw, pitch, roll;   /* y p r, degrees */
    double a, b, c;            /* radial distortion; d = 1 - a - b - c */
    double d, e;               /* lens shift, pixels */
    double g, t;               /* shear */
    double eev, er, eb;        /* Eev (EV), Er, Eb */
    double va, vb, vc, vd, vx, vy; /* vignetting */
    int vm;                    /* Vm: Hugin's vignetting mode; only 5 corrects
                                * (Hugin reads any other as none; the reader then
                                * sets va..vd to 1 0 0 0). A rig built by hand
                                * needs vm = 5 for its va..vd to count */
    int response;              /* Rt: 0 the EMoR curve Ra..Re, 1 linear */
    double resp[5];            /* Ra..Re (EMoR coefficients) */
    int crop[4];               /* S (or C): left, right, top, bottom as written;
                                * all 0 = whole image. A circular fisheye's crop
                                * may pass the image's edges (its circle does) */
    int disabled;              /* "#-hugin ... disabled": Hugin leaves the image
                                * out of the panorama (it still maps to its camera) */
    int masks;                 /* k lines (masks) on this image: read, not applied */
    char file[PC_RIG_PATH_LEN];/* n"..." */
    int line;                  /* line of the .pto */
} pc_rig_camera;

/* The `p` line. */
typedef struct pc_rig_canvas {
    int proj;                  /* PC_PROJ_* (projection.h; written as its .pto f code) */
    int w, h;                  /* full canvas */
    double hfov;               /* v, degrees */
    int crop[4];               /* S: left, right, top, bottom; all 0 = none */
    double exposure;           /* E (EV) */
    int response;              /* R: 0 = the response of image 0, 1 = linear */
    int line;
} pc_rig_canvas;

typedef struct pc_rig {
    int ncam;
    pc_rig_camera cam[PC_RIG_MAX_CAMERAS];
    pc_rig_canvas pano;
    char path[PC_RIG_PATH_LEN];
} pc_rig;

/* Reads a .pto file. Returns 0, or -1 with "FILE:LINE: ..." in err. */
int pc_rig_load(const char *path, pc_rig *rig, char *err, size_t errlen);
/* The same from text in memory; name is used in messages. */
int pc_rig_parse(const char *text, const char *name, pc_rig *rig, char *err, size_t errlen);
/* Writes rig as a .pto that Hugin reads (pano_modify, nona); 0 or -1. */
int pc_rig_save(const pc_rig *rig, const char *path, char *err, size_t errlen);

/* Checks the rig against panocap's cameras: ncam cameras of w x h each
 * (the .pto's cameras map to panocap's in order). 0, or -1 naming the
 * line and field that disagrees. */
int pc_rig_check_cameras(const pc_rig *rig, int ncam, int w, int h, char *err, size_t errlen);

/* Output size of the panorama: the crop's, else the canvas's. */
void pc_rig_output_size(const pc_rig *rig, int *w, int *h);

/* Derived models (camera_model.h). */
void pc_rig_camera_model(const pc_rig *rig, int i, pc_cam_model *out);
void pc_rig_vig_model(const pc_rig *rig, int i, pc_vig_model *out);
/* The panorama of the `p` line rendered at w x h (the output size, or a
 * smaller one with the same field of view when an encoder caps it: one
 * scale s = w / output width for both axes, as Hugin's own rescaled
 * project, pano_modify --canvas, when the numbers are whole). Output pixel
 * (0, 0) is the crop's first pixel. */
void pc_rig_panorama_view(const pc_rig *rig, int w, int h, pc_view_model *out);
/* A rectilinear virtual camera: w x h, horizontal field of view hfov
 * (degrees), looking at pan (yaw, + right), tilt (pitch, + up), roll
 * (+ clockwise as the camera's roll): what Hugin renders from a `p f0 w h
 * v<hfov>` project turned by pano_modify --rotate=-pan,0,0, then
 * --rotate=0,-tilt,0, then --rotate=0,0,-roll (tests/test_rig.c). */
void pc_rig_rect_view(int w, int h, double hfov, double pan, double tilt, double roll, pc_view_model *out);

/* The recorded panorama as a camera (replays, re-framing after the fact):
 * out becomes a rig of one camera, rig's panorama as panocap wrote it at
 * w x h (the output size, or panorama.width's: the same field of view,
 * pc_rig_panorama_view's scale), so that the render family draws any view
 * from a decoded panorama frame as from a camera. Its lens is the p
 * line's projection (PC_LENS_RECTILINEAR, PC_LENS_PANORAMIC for a
 * cylinder, PC_LENS_EQUIRECT), its hfov the canvas's over w pixels, no
 * distortion, rotation 0, the crop's offset from the canvas's centre its
 * lens shift d, e; out's p line is rig's (pc_rig_panorama_view of out is
 * the recording's picture). For every direction, pc_cam_project of the
 * camera and pc_view_project of pc_rig_panorama_view(rig, w, h) give the
 * same position (tests/test_reframe.c). No photometry: the panorama's
 * pixels are already the output's. 0, or -1 with a message in err when
 * w x h is not a size panocap writes for this rig (its aspect is not the
 * output size's within one pixel of rounding to even sides). */
int pc_rig_panorama_source(const pc_rig *rig, int w, int h, pc_rig *out, char *err, size_t errlen);

/* Photometry (camera_model.h's formulas as tables; rig/photometry.c).
 * For camera c, channel ch (0 R, 1 G, 2 B), source position (x, y) and
 * camera value V in [0, 1]:
 *   out = pc_photo_correct(inv_knots[c], out_resp, PC_RIG_RESPONSE_KNOTS,
 *                          V, gain[c][ch] / pc_vig_factor(&vig_c, x, y))
 * or, for an 8-bit value v: out_resp at inv_resp[c][v] * gain / vig.
 * About 85 KB: allocate it, do not put it on a small stack. */
typedef struct pc_rig_photometry {
    int identity;              /* 1: out == V up to the tables' round trip
                                * (< 1e-5, 0.003 of an 8-bit level): gains 1, no
                                * vignetting, every camera's response the
                                * output's; renderers may skip the correction */
    int has_vig;               /* some camera has vignetting (Vm5) */
    float gain[PC_RIG_MAX_CAMERAS][3]; /* 2^Eev / (Er, 1, Eb) * 2^-E */
    /* f_c^-1 of each camera, 1024 knots over [0, 1]: Hugin's inverse table
     * (linear radiance), for any value (an interpolated sample) */
    float inv_knots[PC_RIG_MAX_CAMERAS][PC_RIG_RESPONSE_KNOTS];
    /* the same at the 8-bit values v/255 */
    float inv_resp[PC_RIG_MAX_CAMERAS][256];
    /* f_o: the output response, 1024 knots over [0, 1] */
    float out_resp[PC_RIG_RESPONSE_KNOTS];
} pc_rig_photometry;

void pc_rig_photometry_build(const pc_rig *rig, pc_rig_photometry *out);

/* The EMoR response curve of coefficients r[5] (Ra..Re) at
 * PC_RIG_RESPONSE_KNOTS knots over [0, 1], made monotonic as Hugin does
 * (vigra_ext::enforceMonotonicity: no knot above the last, none below its
 * left neighbour). */
void pc_rig_emor_curve(const double r[5], float *knots);

/* The EMoR model's mean curve f0 and first five basis curves h1..h5 at
 * PC_RIG_RESPONSE_KNOTS knots (rig/emor_table.c, measured through Hugin's
 * nona by tools/measure-emor). */
extern const float pc_emor_f0[PC_RIG_RESPONSE_KNOTS];
extern const float pc_emor_h[5][PC_RIG_RESPONSE_KNOTS];

#ifdef __cplusplus
}
#endif
#endif
