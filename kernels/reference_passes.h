/* reference_passes.h - private interface between the C reference
 * (reference.c) and the multi-threaded CPU backend (cpu.c).
 *
 * A demosaic "job" describes one frame: the algorithm, the raw input, the
 * destination picture and the full-frame temporary planes. Each pass of the
 * algorithm is a function over a band of rows [y0, y1) (both even) that
 * reads the whole frame (through the reflect-101 rule of algorithms.md §1.2)
 * and writes only its band. The reference runs every pass over [0, H); the
 * CPU backend splits the rows into bands, one per thread, with a barrier
 * between passes. Both call the same pass code, so they agree bit for bit.
 *
 * Not installed and not part of the public API.
 */
#ifndef PANOCAP_REFERENCE_PASSES_H
#define PANOCAP_REFERENCE_PASSES_H

#include "debayer.h"
#include "errmsg.h"
#include "picture_store.h" /* pc_ref_store_block, pc_ref_store_rgb_rows/span */

/* Most temporary planes (W x H bytes each) any algorithm needs. */
#define PC_JOB_MAX_PLANES 4

typedef struct pc_job {
    pc_algo_id algo;
    int npasses;
    int kinds[3];               /* pass kind per pass (reference.c) */
    int w, h;
    int cfa;                    /* pc_cfa value; site = (i | j<<1) ^ cfa */
    const uint8_t *raw;
    size_t raw_pitch;
    /* Temporary planes, pitch w. Which are used depends on the algorithm:
     * g: T2.g (full-resolution green); ta/tb/tc: HED {gh, gv, pref},
     * WD original {r, b}. T2.c and T4.c are the raw sample itself and are
     * read straight from raw (same value, no copy). */
    uint8_t *g, *ta, *tb, *tc;
    pc_picture dst;
    pc_yuv_coeffs yc;
    /* Tests only: 1 = evaluate the interior with the scalar formulas too
     * (the vector instantiation must give the same bytes). */
    int scalar_only;
} pc_job;

/* Number of W x H temporary planes the algorithm needs (0..4), or -1 if
 * the id is unknown or the algorithm has its own implementation (not a
 * pass list; algo_impl.h). */
int pc_job_planes(pc_algo_id algo);

/* The checks every debayer entry does, whatever implements the algorithm:
 * a known id, a valid Bayer frame, a destination that fits it. */
int pc_debayer_check(pc_algo_id algo, const pc_bayer *src, const pc_picture *dst,
                     char *err, size_t errlen);

/* Validates algo, src and dst (sizes, pointers, pitches, formats) and fills
 * job. temp must hold pc_job_planes(algo) * W * H bytes (temp_bytes says how
 * many it holds). Returns 0 or a negative PC_E* code with a message. */
int pc_job_setup(pc_job *job, pc_algo_id algo, const pc_bayer *src,
                 const pc_picture *dst, uint8_t *temp, size_t temp_bytes,
                 char *err, size_t errlen);

/* Runs pass number `pass` (0-based) over rows [y0, y1); y0 and y1 even.
 * Pass p may only start once pass p-1 is complete on every row. */
void pc_job_pass(const pc_job *job, int pass, int y0, int y1);

#endif
