/* mlri.h - private interface of the MLRI demosaic (minimised-Laplacian
 * residual interpolation) between its C reference (mlri_reference.c), the
 * multi-threaded CPU backend (through pc_mlri_impl, algo_impl.h) and the
 * tests.
 *
 * Like reference_passes.h, a frame is a job run as a fixed list of stages;
 * each stage is a function over a band of rows [y0, y1) (even bounds) that
 * reads full-frame planes written by earlier stages and writes only its
 * band. The reference runs every stage over [0, H); the CPU backend splits
 * rows into bands with a barrier between stages; the results are identical
 * because every output value is computed by the same code in the same
 * order whatever the band. Arithmetic is float (docs/mlri.md).
 */
#ifndef PANOCAP_MLRI_H
#define PANOCAP_MLRI_H

#include "algo_impl.h"
#include "debayer.h"

/* Full-frame float planes (pitch = width) a job needs. */
#define PC_MLRI_PLANES 7
/* Stages per frame. */
#define PC_MLRI_STAGES 24

typedef struct pc_mlri_job {
    int w, h;
    int ox, oy; /* position of the red sample in the top-left 2x2 tile */
    const uint8_t *raw;
    size_t raw_pitch;
    /* a, b: guided-filter coefficients of the current stage pair;
     * u, v: directional estimates (own class / other class), later the
     * red and blue tentative planes; dh, dv: horizontal and vertical
     * colour differences; g: the full green. */
    float *a, *b, *u, *v, *dh, *dv, *g;
    pc_picture dst;
    pc_yuv_coeffs yc;
} pc_mlri_job;

/* Floats of scratch one band (thread) needs for frames of this width. */
size_t pc_mlri_scratch_floats(int width);

/* Validates src/dst and fills job; temp holds temp_floats floats, at least
 * PC_MLRI_PLANES * W * H. */
int pc_mlri_setup(pc_mlri_job *job, const pc_bayer *src, const pc_picture *dst, float *temp,
                  size_t temp_floats, char *err, size_t errlen);

/* Runs stage `stage` (0 .. PC_MLRI_STAGES-1) over rows [y0, y1), both even,
 * with pc_mlri_scratch_floats(W) floats of private scratch. */
void pc_mlri_stage(const pc_mlri_job *job, int stage, int y0, int y1, float *scratch);

/* The whole frame, single-threaded (allocates its temporaries). */
int pc_mlri_ref(const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen);

/* The descriptor's impl (algo_impl.h): pc_mlri_ref, and the CPU backend's
 * version on its pool (bit-identical). */
extern const pc_algo_impl pc_mlri_impl;

#endif
