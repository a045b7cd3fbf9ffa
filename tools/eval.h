/* eval.h - panocap-eval's parts (tools/panocap-eval.c runs them): the
 * quality of the panorama and of the virtual cameras, measured on the
 * simulated stadium (capture/scene.h) seen through a Hugin rig, against
 * Hugin's own tools (nona, enblend, pano_trafo, pano_modify) and against
 * the scene's ground truth.
 *
 *   eval_util.c      the context: the rig at the evaluated scale, the
 *                    scene's camera pictures (RGB and through the
 *                    demosaic), pictures, errors, commands, .pto files,
 *                    nona's layers, the report's figures and rows
 *   eval_geometry.c  (a) panocap's remap of the RGB pictures against
 *                    nona's layers, nona -c and pano_trafo
 *   eval_panorama.c  (b) the stitched panorama from Bayer cameras against
 *                    the scene, nona + enblend beside it; blend zones;
 *                    the colour step at the seams
 *   eval_views.c     (c) virtual-camera views against nona and the scene
 *   eval_follow.c    (d) follow mode on the synthetic match
 *
 * Everything is deterministic (the scene is a function of seed and time,
 * every renderer is single-answer C), CPU only. Hugin's tools run through
 * the shell in the work folder; each command is printed and logged
 * (DIR/commands.log), so that anyone can repeat it.
 */
#ifndef PANOCAP_EVAL_H
#define PANOCAP_EVAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "debayer.h"
#include "render.h"
#include "rig.h"
#include "scene.h"

#define EV_MAX_ROWS 96
#define EV_MAX_FIGS 512
#define EV_MAX_ALGOS PC_ALGO_COUNT

/* A line of the closing table: what was measured, the figure, the target
 * and whether it is met (1), missed (0) or has no target (-1). */
typedef struct ev_row {
    char part[8];
    char what[96];
    char figure[96];
    char target[64];
    int pass;
} ev_row;

/* A named number (DIR/figures.txt, one "name value" a line: what the CI
 * test reads). */
typedef struct ev_fig {
    char name[64];
    double v;
} ev_fig;

typedef struct ev_ctx {
    /* settings */
    char dir[512];          /* work folder: pictures, .pto files, nona's layers, results */
    char rig_path[512];
    double scale;           /* the rig shrunk by this (1: full size) */
    double t;               /* scene time of the still parts (a, b, c) */
    uint64_t seed;
    int threads;            /* 0: one per CPU */
    unsigned parts;         /* EV_PART_* */
    int algos[EV_MAX_ALGOS];/* the demosaics to measure (pc_algo_id), nalgos of them */
    int nalgos;
    double follow_s;        /* (d): seconds of the match */
    double follow_cam_scale;/* (d): the cameras' extra shrink */
    int keep;               /* keep the big intermediate files (nona's layers) */
    int sampler;            /* (b): the panorama's pc_render_sampler for feather and seam (multiband's
                             * pyramid samples bilinear); EV_PANORAMA_SAMPLER unless --sampler */
    /* state */
    pc_rig rig;             /* the rig at the evaluated scale, images cam<i>.png in dir */
    int ncam, cam_w, cam_h;
    int pano_w, pano_h;
    pc_scene *scene;
    pc_cpu *cpu;            /* the demosaic's and the renderer's threads */
    pc_rig_photometry *photo;
    pc_picture cams;        /* the scene's camera pictures, RGB24, stacked */
    FILE *log;              /* DIR/commands.log */
    int have_hugin;         /* nona, enblend, pano_trafo, pano_modify on PATH */
    /* results */
    ev_row row[EV_MAX_ROWS];
    int nrows;
    ev_fig fig[EV_MAX_FIGS];
    int nfigs;
    float comp_gains[PC_RIG_MAX_CAMERAS][3]; /* (b)'s solved gain compensation, for (c) */
    int have_comp_gains;
} ev_ctx;

/* What the daemon's panorama.sampler default, auto (config/settings_keys.c),
 * renders on a GPU backend: what (b) evaluates unless told otherwise. */
#define EV_PANORAMA_SAMPLER PC_RENDER_BICUBIC

enum { EV_PART_GEOMETRY = 1, EV_PART_PANORAMA = 2, EV_PART_VIEWS = 4, EV_PART_FOLLOW = 8 };

/* --- eval_util.c ----------------------------------------------------- */

/* Loads the rig, shrinks it, renders the cameras' pictures at e->t into
 * e->cams and DIR/cam<i>.png, writes DIR/rig.pto. 0 or -1 (printed). */
int ev_setup(ev_ctx *e);
void ev_teardown(ev_ctx *e);

/* Squared error over RGB samples: se / (3 n) is the MSE of n pixels. */
typedef struct ev_err {
    double se;
    long n;
} ev_err;
double ev_psnr(ev_err a);
/* se of pixel a (RGB, 3 bytes) against b (bpp bytes, RGB first). */
static inline double ev_px_se(const uint8_t *a, const uint8_t *b)
{
    double s = 0;
    for (int k = 0; k < 3; k++) {
        const double d = (double)a[k] - (double)b[k];
        s += d * d;
    }
    return s;
}

/* Squared error of RGB24 picture a against b over the pixels whose mask
 * byte has `bit`. */
ev_err ev_err_masked(const pc_picture *a, const pc_picture *b, const uint8_t *mask, uint8_t bit);

int ev_pic_alloc(pc_picture *p, pc_pixfmt fmt, int w, int h);
void ev_pic_free(pc_picture *p);
/* Row y's first byte of plane 0. */
static inline uint8_t *ev_row_ptr(const pc_picture *p, int y) { return p->plane[0] + (size_t)y * p->pitch[0]; }
int ev_write_png(ev_ctx *e, const char *name, const pc_picture *rgb);

/* The panorama of rig's p line at its own output size and scale (what
 * nona renders), the last column or row left out where the size is odd
 * (the renderer writes even sizes): e->pano_w x e->pano_h. */
void ev_pano_view(const pc_rig *rig, pc_view_model *v);

/* The scene's direct rendering (the ground truth) through view v with the
 * rig's panorama photometry, RGB24. */
int ev_render_truth(ev_ctx *e, const pc_view_model *v, pc_picture *out);

/* The stacked camera pictures of e->cams mosaiced (RGGB) and demosaiced by
 * algo into RGBX32, as the daemon's demosaic writes them for its render
 * step. out allocated here. */
int ev_demosaic(ev_ctx *e, pc_algo_id algo, pc_picture *out);

/* The plan of rig's camera c alone (the p line of the whole rig), with
 * the whole rig's photometry (photo NULL: none) as nona's layer c has it:
 * camera c's response and gains, the output response of image 0. */
int ev_plan_one(ev_ctx *e, const pc_rig *rig, int c, const pc_view_model *v, const pc_rig_photometry *photo,
                int sampler /* pc_render_sampler */, pc_render_plan **out);
/* The camera rows of stacked picture src that are camera c's. */
pc_picture ev_cam_of(const pc_picture *src, int c, int cam_h);
/* Renders plan from src into a new RGB24 picture out (CPU backend's renderer). */
int ev_render(ev_ctx *e, const pc_render_plan *plan, const pc_picture *src, pc_picture *out);
/* Pixel (x, y) of v is seen by camera cm at least `margin` source pixels
 * inside its valid area; *sx, *sy where. */
int ev_sees(const pc_cam_model *cm, const pc_view_model *v, int x, int y, float margin, float *sx, float *sy);

/* Sets `bit` in mask (v->w x v->h) where some camera of e->rig sees the
 * pixel at full weight (one source pixel inside its border). */
void ev_cover_mask(ev_ctx *e, const pc_view_model *v, uint8_t *mask, uint8_t bit);

/* Runs a shell command in the work folder (printed, logged with its
 * output in DIR/commands.log). 0 when it exits 0. */
int ev_sh(ev_ctx *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes rig as DIR/name with the m line's interpolator (nona's -i: 0
 * poly3, its default; 5 bilinear). 0 or -1. */
int ev_save_pto(ev_ctx *e, const pc_rig *rig, const char *name, int interp);
/* The rig with the photometry neutral: exposures 0, white balance 1, no
 * vignetting (the pictures keep theirs: a comparison of the remap only). */
void ev_rig_neutral(pc_rig *rig);

/* An RGBA8 picture as nona or enblend wrote it (TIFF, c:NONE), placed on
 * the w x h output picture whose first pixel is canvas pixel (ox, oy)
 * (the p line's crop: the files say where they lie on the canvas); alpha
 * 0 outside. */
typedef struct ev_layer {
    int w, h;
    uint8_t *rgba;
} ev_layer;
int ev_layer_read(ev_ctx *e, const char *name, int w, int h, int ox, int oy, ev_layer *l);
/* nona -c's coordinate image (UINT16, one sample) the same way; -1 outside. */
int ev_coord_read(ev_ctx *e, const char *name, int w, int h, int ox, int oy, float **out);
void ev_layer_free(ev_layer *l);
/* A picture's RGB as a new RGB24 picture (enblend's panorama, to compare
 * and write); `bit` cleared in mask where its alpha is not 255. */
int ev_layer_rgb(const ev_layer *l, pc_picture *out, uint8_t *mask, uint8_t bit);

/* Results: a row of the table, a named figure. */
void ev_add_row(ev_ctx *e, const char *part, const char *what, const char *target, int pass, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void ev_add_fig(ev_ctx *e, const char *name, double v);
/* "%.2f dB", or "n/a" for NaN */
const char *ev_db(char *buf, size_t len, double v);

/* --- the parts ------------------------------------------------------- */
int ev_geometry(ev_ctx *e);
int ev_panorama(ev_ctx *e);
int ev_views(ev_ctx *e);
int ev_follow(ev_ctx *e);

#endif
