/* debayer.h - the public C API of panocap's demosaicing library (the
 * demosaic family, kernels/).
 *
 * One header for the algorithm table, the plain C reference (the definition
 * of correctness, see docs/algorithms.md) and the multi-threaded CPU
 * backend built on it. The picture types, error codes and YUV helpers it
 * works on are the core's (core/picture.h); the CUDA backend has its own
 * header, debayer_cuda.h, so that host code which never touches the GPU
 * needs no CUDA headers.
 *
 * Conventions (core.h): functions return 0 on success and a negative PC_E*
 * code on failure, with a human-readable message written to err (errlen
 * bytes, always NUL-terminated when errlen > 0; err may be NULL).
 */
#ifndef PANOCAP_DEBAYER_H
#define PANOCAP_DEBAYER_H

#include <stddef.h>
#include <stdint.h>

#include "picture.h"
#include "pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Final-pass variants (bit mask in the descriptor). */
typedef enum pc_variant {
    PC_VARIANT_AUTO = 0,
    PC_VARIANT_2PX = 1, /* two horizontally adjacent pixels per step */
    PC_VARIANT_4PX = 2, /* one 2x2 block per step */
} pc_variant;

/* Algorithm identifiers, in the order of the paper's Table I. */
typedef enum pc_algo_id {
    PC_ALGO_BILINEAR = 0,
    PC_ALGO_SMOOTH_HUE,
    PC_ALGO_HQ_LINEAR,
    PC_ALGO_EDGE,
    PC_ALGO_HOMOGENEOUS_EDGE,
    PC_ALGO_WD_ORIGINAL,
    PC_ALGO_WD_MODIFIED,
    PC_ALGO_MLRI, /* residual interpolation (not in the paper; docs/mlri.md) */
    PC_ALGO_NET,  /* the learned demosaic (demosaicnet; net.h, docs/net.md) */
    PC_ALGO_COUNT
} pc_algo_id;

struct pc_algo_impl;

/* One entry of the algorithm table (FFmpeg-style descriptor). The CLI,
 * tools and tests all read this table; nothing else lists algorithms.
 * Each backend finds the algorithm's code through its id (a table per
 * backend, checked against PC_ALGO_COUNT at compile time) or, for an
 * algorithm with its own code, through impl: see algo_impl.h, which also
 * says how to add an algorithm. */
typedef struct pc_algo_desc {
    pc_algo_id id;
    const char *name;        /* the --algo name, e.g. "edge" */
    const char *title;       /* e.g. "edge-directed (Hamilton-Adams)" */
    const char *description; /* one line for --list-algos */
    int passes;              /* 1..3 */
    int pass_radius[3];      /* Chebyshev read radius of each pass */
    int radius_total;        /* halo if all passes are fused */
    int temp_bytes_per_pixel;/* device temporaries, per the spec §9 */
    unsigned variants;       /* PC_VARIANT_2PX | PC_VARIANT_4PX */
    double gtx680_us;        /* the paper's Table III total, for comparison */
    const struct pc_algo_impl *impl; /* NULL: fused-stencil passes (the backends'
                                        tables); else its own code (algo_impl.h) */
} pc_algo_desc;

/* The table. pc_algo_count() entries, indexed by pc_algo_id. */
int pc_algo_count(void);
const pc_algo_desc *pc_algo_get(pc_algo_id id);
/* Lookup by --algo name; NULL if unknown. */
const pc_algo_desc *pc_algo_find(const char *name);
/* Writes "bilinear, smooth-hue, ..." into buf (for error messages). */
void pc_algo_names(char *buf, size_t len);

/* Name <-> enum helpers for the final-pass variant. Return -1 when the
 * name is unknown. */
int pc_variant_from_name(const char *name);    /* "2px", "4px", "auto" */
const char *pc_variant_name(pc_variant v);

/* --- The C reference: single-threaded, exact, the definition. --------- */

/* Demosaics src with the algorithm into dst (any pc_pixfmt). Allocates its
 * temporaries internally. */
int pc_ref_debayer(pc_algo_id algo, const pc_bayer *src, const pc_picture *dst,
                   char *err, size_t errlen);

/* --- Multi-threaded CPU backend (same results as the reference). ------- */

typedef struct pc_cpu pc_cpu; /* owns a thread pool (pool.h) and temporaries */

/* threads <= 0: one per online CPU. Temporaries are sized for width x height
 * and allocated once here. */
int pc_cpu_open(pc_cpu **out, int threads, int width, int height,
                char *err, size_t errlen);
int pc_cpu_debayer(pc_cpu *cpu, pc_algo_id algo, const pc_bayer *src,
                   const pc_picture *dst, char *err, size_t errlen);
int pc_cpu_threads(const pc_cpu *cpu);
/* Allocates ahead what algo needs beyond the stencil temporaries (an
 * algorithm with its own code, algo_impl.h), so its first frame does not;
 * nothing to do (0) for the others. */
int pc_cpu_prepare(pc_cpu *cpu, pc_algo_id algo, char *err, size_t errlen);
void pc_cpu_close(pc_cpu *cpu);
/* The context's thread pool, for work on the same threads between frames
 * (the render family's CPU versions, from the thread that calls
 * pc_cpu_debayer). */
pc_pool *pc_cpu_pool(pc_cpu *cpu);

#ifdef __cplusplus
}
#endif
#endif
