/* render.h - the kernel family "render a picture from the rig": every
 * output pixel of a panorama or a virtual-camera view is taken from the
 * demosaiced cameras that see it, through the rig's camera model
 * (rig/camera_model.h), blended, photometrically corrected and written as
 * NV12, I420 or RGB24 in one pass.
 *
 * Per output pixel (x, y) (render_formulas.h is the one definition of
 * each step, shared by the C reference, the CPU backend and the CUDA
 * kernels):
 *   ray      = view projection^-1 (x, y)                  (pc_view_ray)
 *   for each camera c, in ascending order, that sees ray  (pc_cam_project):
 *     (sx, sy) = its source position; d = distance from (sx, sy) to the
 *                border of c's valid area, in source pixels
 *     w_c      = min(d / feather, 1)       (x the seam factor with blend = seam
 *                                          or multiband)
 *     V        = bilinear sample of camera c at (sx, sy): the four pixels
 *                around it, weights (1-a)(1-b), a(1-b), (1-a)b, ab; the
 *                valid area lies inside the image, so the right/bottom
 *                neighbour is needed only where its weight is not 0 and is
 *                clamped to the image (no pixel outside a camera is read;
 *                nothing of the camera below in the stack bleeds in).
 *                With sampler = bicubic, the 4x4 pixels around it less
 *                the corners, weighted by Keys' cubic with a = -0.75 on
 *                each axis (nona's default interpolator, libpano13's
 *                poly3) and normalised, neighbours clamped to the image,
 *                V clamped to 0..255
 *     L_c      = V                                    (identity photometry), or
 *                f_c^-1(V) * gain_c / vig_c(sx, sy)   (camera_model.h's
 *                pc_photo_correct: the tables of pc_rig_photometry)
 *   out = sum w_c L_c / max(sum w_c, 1 / feather), then f_o (photometry);
 *         black where no camera sees the pixel. The max() makes the edge
 *         of the covered area fade out over its last source pixel instead
 *         of ending in a hard, aliased step (and keeps every
 *         implementation's output continuous in the sampling positions).
 *   8-bit RGB = round(out), then 2x2 blocks to YUV by spec §8 (the
 *   demosaic's final pass; pc_yuv_coeffs).
 *
 * With blend = multiband the pixels around each seam (whole strips of
 * mask tiles) are instead the overlap's two cameras blended band by band
 * (Burt & Adelson's Laplacian pyramids; render_multiband.h defines it).
 *
 * The weights depend only on the rig and the view (and the seam placed
 * once), never on the pictures: nothing flickers.
 *
 * Input: the demosaiced cameras stacked, camera i = rows [i*H, (i+1)*H) of
 * one RGB24 or RGBX32 picture (the layout the demosaic writes). Output: a
 * picture of the plan's view size (even), NV12/I420/RGB24.
 *
 * Implementations, checked against each other (tests/test_render.c):
 *   pc_render_ref   C reference, single-threaded, float: the definition;
 *   pc_render_cpu   the CPU backend's, on its thread pool (pool.h), 4, 8 or 16
 *                   pixels per instruction (render_cpu.c): bit-identical;
 *   CUDA            render/cuda_render.cuh (render_cuda.h), within
 *                   1 code value on >= 99.9 % of samples, at most 2
 *                   (hardware bilinear filtering has 8-bit weights).
 * The daemon uses them through the backend ops (backend.h: render_*).
 */
#ifndef PANOCAP_RENDER_H
#define PANOCAP_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "picture.h"
#include "pool.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_RENDER_MAX_CAMERAS PC_RIG_MAX_CAMERAS
/* Output tiles of the camera masks: every pixel of a tile can only be
 * seen by the cameras of its mask, so each kernel thread loops over the
 * one or two cameras of its tile, the same for a whole warp. */
#define PC_RENDER_TILE_W 32
#define PC_RENDER_TILE_H 8
/* Overlap samples per camera pair for gain compensation. */
#define PC_RENDER_GAIN_SAMPLES 2048
#define PC_RENDER_MAX_PAIRS 32

/* How overlapping cameras are mixed: the one enum of the blends, that the
 * configuration (panorama.blend), the daemon and the tools use with the
 * names below (pc_render_blend_name; render_plan.c's table). */
typedef enum pc_render_blend {
    PC_RENDER_FEATHER = 0, /* ramps by distance to each camera's border */
    PC_RENDER_SEAM = 1,    /* a seam where the cameras agree, narrow feather across it */
    PC_RENDER_MULTIBAND = 2, /* the seam's overlaps blended band by band (render_multiband.h) */
    PC_RENDER_BLEND_COUNT
} pc_render_blend;

/* How a camera picture is sampled at a source position: the one enum of
 * the samplers (panorama.sampler, virtual_cameras[].sampler, the tools). */
typedef enum pc_render_sampler {
    PC_RENDER_BILINEAR = 0, /* 2x2 pixels: the fastest */
    PC_RENDER_BICUBIC = 1,  /* 12 pixels, Keys a = -0.75 (nona's poly3): sharper where a view magnifies */
    PC_RENDER_SAMPLER_AUTO = 2, /* a choice, not a sampler (plans refuse it): bicubic on a GPU backend,
                                 * bilinear on the CPU one (pc_render_sampler_resolve) */
    PC_RENDER_SAMPLER_COUNT
} pc_render_sampler;

typedef struct pc_render_options {
    pc_render_blend blend;
    pc_render_sampler sampler; /* bicubic: not with blend = multiband (its pyramid samples bilinear) */
    float feather;    /* ramp width in source pixels; 0: min(w, h) / 16 (>= 2) */
    float seam_width; /* PC_RENDER_SEAM: ramp across the seam, output pixels; 0: 8
                       * (PC_RENDER_MULTIBAND: the finest level's ramp; 0: 2) */
    int levels;       /* PC_RENDER_MULTIBAND: pyramid levels, 3..6; 0: 5 */
    int maps;         /* also build the precomputed maps (pc_render_plan.map): 8 bytes
                       * per output pixel per camera that may see it; the GPU's map
                       * variant needs them (the CPU renderer computes its rays in
                       * SIMD lanes, cheaper than reading maps: render_cpu.c; only
                       * its multiband strips read them, render_mb_host.c) */
} pc_render_options;

void pc_render_options_default(pc_render_options *o);
/* The names: "feather" / "seam" / "multiband"; from_name is
 * case-insensitive, -1 if unknown; name gives "?" out of range. */
int pc_render_blend_count(void);
int pc_render_blend_from_name(const char *name);
const char *pc_render_blend_name(pc_render_blend b);
/* "bilinear" / "bicubic" / "auto", as the blends. */
int pc_render_sampler_count(void);
int pc_render_sampler_from_name(const char *name);
const char *pc_render_sampler_name(pc_render_sampler s);
/* The sampler a plan gets for s: auto is bicubic where the backend
 * renders on a device (gpu 1), bilinear on the CPU one (its SIMD lanes
 * sample bilinear; bicubic there takes the reference's pixel, ~10x the
 * time); the others as they are. */
pc_render_sampler pc_render_sampler_resolve(pc_render_sampler s, int gpu);

/* One camera as the kernels see it. */
typedef struct pc_render_cam {
    pc_cam_model geo;
    pc_vig_model vig;
    float gain[3]; /* photometry: the .pto's gain x the compensation gain */
} pc_render_cam;

/* A camera pair that overlaps in the output, for gain compensation: up to
 * PC_RENDER_GAIN_SAMPLES output pixels both cameras see well inside their
 * valid areas (x, y packed as x | y << 16). */
typedef struct pc_render_pair {
    int a, b;
    int n;
    uint32_t *xy;
} pc_render_pair;

/* Everything a renderer needs, built once per rig and view (host memory;
 * the backends copy it to where their kernels run). */
typedef struct pc_render_plan {
    int ncam;
    int cam_w, cam_h;          /* each camera's picture (the stacked source: cam_w x ncam*cam_h) */
    pc_view_model view;        /* the output projection; view.w x view.h pixels (even) */
    pc_render_cam cam[PC_RENDER_MAX_CAMERAS];
    float inv_feather;         /* 1 / feather ramp (source px) */
    pc_render_sampler sampler;
    /* photometry: 0 identity (L = V, no tables), 1 the tables below */
    int photo;
    int has_vig;
    float photo_gain[PC_RENDER_MAX_CAMERAS][3]; /* the .pto's (pc_rig_photometry.gain) */
    float comp_gain[PC_RENDER_MAX_CAMERAS][3];  /* gain compensation (1: none) */
    /* f_c^-1 and f_o: PC_RIG_RESPONSE_KNOTS knots over [0, 1] (rig.h) */
    float inv_knots[PC_RENDER_MAX_CAMERAS][PC_RIG_RESPONSE_KNOTS];
    float out_resp[PC_RIG_RESPONSE_KNOTS];
    int resp_identity; /* the tables are the identity: photo follows the gains only */
    /* the view's ray terms, a pair of floats per output column (col,
     * view.w pairs) and per row (row, view.h pairs): pc_view_ray's values
     * computed once (render_formulas.h, pc_render_terms) */
    float *col, *row;
    /* camera masks: bit c of tmask[ty * ntx + tx] = camera c may see
     * some pixel of tile (tx, ty) (conservative) */
    int ntx, nty;
    uint16_t *tmask;
    /* blend = seam: per camera and output row, the seams left and right
     * of it (output x; -1e30 / 1e30 where it has no neighbour there):
     * seam[(2 * c + side) * view.h + y], side 0 left, 1 right */
    pc_render_blend blend;
    float inv_seam;
    float *seam;
    /* and where seams may go (render_seam.c): the camera right of camera
     * c in row y, seam_next[c * view.h + y] (-1: none), and the range of
     * output x its seam may take, seam_lim[2 * (c * view.h + y)] .. [+1] */
    int8_t *seam_next;
    float *seam_lim;
    /* blend = multiband (render_multiband.h; NULL otherwise): the strips
     * around the seams, their masks, the host renderers' work area */
    struct pc_render_mb *mb;
    /* gain compensation's overlap samples */
    int npairs;
    pc_render_pair pair[PC_RENDER_MAX_PAIRS];
    /* options.maps: the precomputed maps (the MAP kernel variant), the
     * source position (x, y) of every output pixel in every camera of
     * its tile's mask: tile t's entries start at map_off[t] (in pairs of
     * floats), popcount(tmask[t]) blocks of 256, one per camera in mask
     * order; within one, 2x2 block (bx, by) of the tile (bx < 16, by < 4)
     * holds its pixels (0,0) (1,0) (0,1) (1,1) at 4 * (16 * by + bx) + k,
     * so a thread reads its block's 32 bytes at once and a warp 1 KiB in
     * a row. A pixel the camera does not see holds -1e9. */
    uint32_t *map_off;
    float *map;
    size_t map_entries;
    /* pc_render_plan_set_view's cache (render_view.c): each camera's
     * border as world directions, built on the first call */
    struct pc_render_outline *outline;
} pc_render_plan;

/* Builds the plan of rig's cameras (cam_w x cam_h each, rig->ncam of them)
 * seen through view (pc_rig_panorama_view / pc_rig_rect_view). photo: the
 * rig's photometry (pc_rig_photometry_build), or NULL for none. opt NULL:
 * defaults. 0, or PC_EINVAL/PC_ENOMEM naming what is wrong. */
int pc_render_plan_build(pc_render_plan **out, const pc_rig *rig, const pc_view_model *view,
                         const pc_rig_photometry *photo, const pc_render_options *opt, char *err, size_t errlen);
void pc_render_plan_free(pc_render_plan *p);

/* The gain-compensation gains (ncam x RGB, 1 = none): the cameras' gains
 * become photo_gain x comp_gain. Host plan only; a backend's prepared
 * copy gets them through pc_backend_render_set_gains. */
void pc_render_plan_set_gains(pc_render_plan *p, const float gains[][3]);

/* blend = seam or multiband: places each overlap's seam where the cameras agree on the
 * stacked camera picture src (host memory, RGB24/RGBX32; the first good
 * frame set, or on request), by dynamic programming over the overlap's
 * rows. Until then the seams run down the middle of each overlap. A
 * backend's prepared copy keeps the seams it was prepared with: prepare it
 * again (pc_backend_render_prepare) to use new ones. A plan with blend =
 * seam or multiband needs the cameras side by side in one row;
 * pc_render_plan_build refuses another rig, saying where (multiband also
 * one whose blend zones would meet, or take in a third camera). With
 * multiband the strips and masks follow the new seams. */
int pc_render_plan_place_seams(pc_render_plan *p, const pc_picture *src, char *err, size_t errlen);

/* Checks src (RGB24/RGBX32, cam_w x ncam*cam_h) and dst (NV12/I420/RGB24,
 * view size, no grid or bands) against the plan; the message names what
 * differs. */
int pc_render_check(const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen);

/* The C reference: single-threaded, the definition. A multiband plan
 * holds the host renderers' per-frame work area: one host render of a
 * plan at a time (this and pc_render_cpu). */
int pc_render_ref(const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen);

/* The CPU backend's version on its pool's threads (pc_pool_run, pc_cpu_pool; call it
 * from the thread that calls pc_cpu_debayer): bit-identical to
 * pc_render_ref. */
int pc_render_cpu(pc_pool *cpu, const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err,
                  size_t errlen);
/* Its inner loops come in builds for instruction sets: "avx512" and
 * "avx2" (x86-64 CPUs that have them) and "baseline" (x86-64's SSE2, or
 * plain C elsewhere), all bit-identical. pc_render_cpu runs the best one
 * the CPU has, which pc_render_cpu_best_lanes names; pc_render_cpu_lanes
 * runs the one named (tests, benchmarks), PC_EINVAL where
 * pc_render_cpu_lanes_usable says this build or CPU has no such one. A
 * multiband plan's strips are render_mb_host.c's, the rest goes through
 * the lanes. */
const char *pc_render_cpu_best_lanes(void);
int pc_render_cpu_lanes_usable(const char *lanes);
int pc_render_cpu_lanes(pc_pool *cpu, const char *lanes, const pc_render_plan *p, const pc_picture *src,
                        const pc_picture *dst, char *err, size_t errlen);

/* --- Moving views (virtual cameras) ----------------------------------- */

/* Points the plan at another view of the same size: a virtual camera's
 * pose of this frame (pc_rig_rect_view: pan, tilt, roll, hfov). Recomputes
 * the ray terms and the camera masks (conservative, as pc_render_plan_build's:
 * render_view.c says how) in about 50 us for 1920x1080 on one core, so it
 * runs every frame the view moves. The first call also samples the
 * cameras' borders (0.2-0.6 ms), finely enough for views down to 8x
 * narrower; a view narrower still samples them again, finer. A daemon
 * calls it once at set-up with its narrowest view (the motion limits'
 * smallest hfov), and no frame pays for sampling. Then render, or hand
 * the change to a backend's prepared copy with pc_backend_render_update
 * BEFORE its next render or measure (the CPU backend's copy shares the
 * plan's arrays, so until then it would mix the new masks with the old
 * view). A plan that
 * set_view moved renders the same bytes as a plan built for that view.
 * Only feather-blended rectilinear views without maps move; gain
 * compensation's overlap samples are dropped (a view takes the panorama's
 * gains through pc_render_plan_set_gains / pc_backend_render_set_gains).
 * 0, or PC_EINVAL naming what is wrong (the plan unchanged), PC_ENOMEM. */
int pc_render_plan_set_view(pc_render_plan *p, const pc_view_model *view, char *err, size_t errlen);

/* --- Gain compensation (panorama.gain_compensation) ------------------ */

/* What the cameras show on their overlaps: per pair, the sums over n
 * samples (those where no channel of either camera clips) of each
 * camera's linear value (after the response, vignetting and the .pto's
 * gain, before compensation); sum / n is the mean. */
typedef struct pc_render_stats {
    int npairs;
    struct {
        int a, b;
        int n;              /* samples used */
        double sum_a[3], sum_b[3];
    } pair[PC_RENDER_MAX_PAIRS];
} pc_render_stats;

/* Measures them on src (host memory). */
int pc_render_measure_ref(const pc_render_plan *p, const pc_picture *src, pc_render_stats *st, char *err,
                          size_t errlen);
/* The gains that equalise the overlaps (least squares of their relative
 * differences with a faint prior pulling each gain to 1: Hugin/OpenCV's
 * gain compensator, as exact in a dark channel as in a bright one):
 * ncam x RGB. */
void pc_render_gains_solve(const pc_render_stats *st, int ncam, float gains[][3]);

/* Slow, bounded filtering of the solved gains over time, so the picture
 * never flickers: each update moves every gain by alpha of the way to its
 * target, at most max_step (relative) per update. */
typedef struct pc_render_gain_filter {
    int ncam;
    float alpha, max_step;
    float g[PC_RENDER_MAX_CAMERAS][3];
} pc_render_gain_filter;
void pc_render_gain_filter_init(pc_render_gain_filter *f, int ncam, float alpha, float max_step);
void pc_render_gain_filter_update(pc_render_gain_filter *f, const float target[][3]);

#ifdef __cplusplus
}
#endif
#endif
