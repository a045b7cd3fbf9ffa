/* render_multiband.h - blend = multiband (render.h, PC_RENDER_MULTIBAND):
 * Burt and Adelson's multi-band blend ("A multiresolution spline with
 * application to image mosaics", 1983; what enblend does) of each overlap
 * of two cameras side by side, across the seam render_seam.c places where
 * the cameras agree. Private to render/: the plan's multiband part, the
 * per-pixel formulas shared by the C reference, the CPU renderer and the
 * CUDA kernels, and the host renderers' entry points.
 *
 * The definition. Each overlap of cameras a (left) and b (right) gets a
 * strip: a rectangle of output pixels around its seam, in whole 32x8 mask
 * tiles, wide enough that the blend changes nothing outside it. In the
 * strip, with A and B the two cameras' corrected values (render.h's L_c:
 * the bilinear sample through the photometry) and L levels:
 *   D_0 = A - B at (clamp(x, lo_y, hi_y), y), [lo_y, hi_y] the first and
 *         last columns of row y that both cameras see; 0 where that pixel
 *         is not seen by both, or the row has none (D carries on flat past
 *         the overlap's ends, so the coarse levels see no false edge
 *         there), and 0 farther than `depend` from every seam of the rows
 *         within `depend` (no pixel the blend changes reads D there)
 *   D_k = reduce(D_{k-1})        k = 1..L-1   (Gaussian pyramid of D)
 *   G_0 = clamp01((seam - x) / seam_width + 0.5): a's share at the finest
 *         level, the seam render's ramp (render_formulas.h)
 *   G_k = reduce(G_{k-1})                      (fixed per rig and seam)
 *   C_{L-1} = G_{L-1} D_{L-1}
 *   C_k = G_k (D_k - expand(D_{k+1})) + expand(C_{k+1})   k = L-2..1
 *   out = G_0 (A + expand(C_1) - expand(D_1)) + (1 - G_0) (B + expand(C_1))
 * which is the standard blend of the two cameras' Laplacian pyramids with
 * the mask's Gaussian pyramid, collapsed (sum over k of G_k Lap_k(A) +
 * (1 - G_k) Lap_k(B)), written through the difference D = A - B: only one
 * pyramid per overlap, and away from the seam, where every G_k is exactly
 * 0 or 1, it reduces to B or A exactly (so the strip's edge is seamless).
 * A camera that does not see a strip pixel takes the other's value there
 * (A := B or B := A); where neither does, the pixel is black. The output
 * is faded over the covered area's last source pixel as render.h's feather
 * normalisation does (cover = min(1, the sum of the border distances)), then
 * goes through the output response and to 8 bits as every render does.
 *   reduce: w = (1 4 6 4 1) / 16 along x then along y, level k+1 pixel i
 *           from level k pixels 2i-2 .. 2i+2, indices clamped to the level;
 *   expand: level k pixel 2m from m-1, m, m+1 with 1/8 3/4 1/8, pixel
 *           2m+1 from m, m+1 with 1/2 1/2, along x then along y, clamped.
 * Outside the strips, and in their tiles beyond the blend zone (more than
 * `reach` from every seam of the rows within `reach`), the picture is the
 * seam render (render.h), whose weights are there one camera's alone:
 * the blend's own value there.
 *
 * The strips' geometry, the masks G_k and the seams are fixed per rig and
 * seam placement (a strip spans the range its seam may take +- the blend
 * zone, and shrinks to the seam as placed: pc_render_plan_place_seams
 * updates them); only the pyramid of D is computed per frame. Nothing
 * flickers.
 */
#ifndef PANOCAP_RENDER_MULTIBAND_H
#define PANOCAP_RENDER_MULTIBAND_H

#include <stddef.h>
#include <stdint.h>

#include "render.h"
#include "render_formulas.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_MB_MIN_LEVELS 3
#define PC_MB_MAX_LEVELS 6
#define PC_MB_DEFAULT_LEVELS 5
#define PC_MB_MAX_STRIPS PC_RENDER_MAX_PAIRS

/* One overlap's strip. Level k of it is w[k] x h[k] pixels (w[0] x h[0]
 * output pixels from (x0, y0), then halved, rounded up); in the plan's
 * per-level arrays its pixel (i, j) is at off[k] + j * w[k] + i. */
typedef struct pc_mb_strip {
    int a, b;     /* the cameras left and right of its seam */
    int x0, y0;   /* its top-left output pixel: multiples of PC_RENDER_TILE_W and _H */
    int w[PC_MB_MAX_LEVELS], h[PC_MB_MAX_LEVELS];
    size_t off[PC_MB_MAX_LEVELS];
    size_t seam_off; /* its rows' seams at pc_render_mb.seam + seam_off (an output column per row)
                      * and spans at span + 2 * seam_off ([lo_y, hi_y]; lo > hi: none) */
} pc_mb_strip;

/* The plan's multiband part (pc_render_plan.mb). */
struct pc_render_mb {
    int levels;
    float inv_sw;      /* 1 / the seam ramp at level 0 (output pixels) */
    int reach;         /* the blend changes no pixel farther than this from a seam (output pixels):
                        * the seams keep that far inside the overlap */
    int depend;        /* ... and reads no D farther than this (D_0 is 0 beyond) */
    int nstrips;
    pc_mb_strip strip[PC_MB_MAX_STRIPS];
    size_t npx[PC_MB_MAX_LEVELS]; /* every strip's pixels at level k */
    size_t nseam;                 /* every strip's rows */
    float *seam;
    int *span;
    int *band;         /* per strip row (at 2 * (seam_off + j)): the columns [lo, hi] where D_0 is computed */
    float *mask[PC_MB_MAX_LEVELS]; /* G_k, k >= 1, one float per pixel (mask[0] NULL: G_0 from the seam) */
    int8_t *tile_strip;            /* per output tile: the strip whose blend gives its pixels (those
                                    * within the blend zone of its seam), -1 the main pass */
    uint16_t *tmask_rest;          /* the plan's camera masks with those tiles cleared */
    /* the host renderers' work area (one frame of the plan at a time):
     * D_k and C_k, 3 floats (RGB) per pixel of level k (C_0 unused) */
    float *d[PC_MB_MAX_LEVELS], *c[PC_MB_MAX_LEVELS];
};

/* --- per-pixel formulas (the reference, the CPU, the CUDA kernels) ---- */

/* The 5-tap binomial filter of reduce, in one order everywhere. */
PC_RENDER_HD float pc_mb_reduce5(float a0, float a1, float a2, float a3, float a4)
{
    return 0.0625f * a0 + 0.25f * a1 + 0.375f * a2 + 0.25f * a3 + 0.0625f * a4;
}

/* expand along one axis: the value at level-k index x (odd: 2m+1, else
 * 2m) from level k+1's m-1, m, m+1 (clamped by the caller). */
PC_RENDER_HD float pc_mb_expand3(int odd, float lo, float mid, float hi)
{
    return odd ? 0.5f * mid + 0.5f * hi : 0.125f * lo + 0.75f * mid + 0.125f * hi;
}

PC_RENDER_HD int pc_mb_clampi(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

/* G_0: a's share at output column x of a row whose seam is at column s. */
PC_RENDER_HD float pc_mb_g0(float x, float s, float inv_sw) { return pc_render_clamp01((s - x) * inv_sw + 0.5f); }

/* Level-k pixel (i, j) of reduce(src), src level k-1 of w x h pixels, nc
 * floats per pixel (channel ch at +ch), rows stride pixels apart. */
PC_RENDER_HD float pc_mb_reduce_px(const float *src, int w, int h, size_t stride, int nc, int ch, int i, int j)
{
    float r[5];
    for (int t = 0; t < 5; t++) {
        const float *row = src + (size_t)pc_mb_clampi(2 * j - 2 + t, h) * stride * nc + ch;
        r[t] = pc_mb_reduce5(row[(size_t)pc_mb_clampi(2 * i - 2, w) * nc], row[(size_t)pc_mb_clampi(2 * i - 1, w) * nc],
                             row[(size_t)pc_mb_clampi(2 * i, w) * nc], row[(size_t)pc_mb_clampi(2 * i + 1, w) * nc],
                             row[(size_t)pc_mb_clampi(2 * i + 2, w) * nc]);
    }
    return pc_mb_reduce5(r[0], r[1], r[2], r[3], r[4]);
}

/* Level-k pixel (x, y) of expand(src), src level k+1 of w x h pixels. */
PC_RENDER_HD float pc_mb_expand_px(const float *src, int w, int h, size_t stride, int nc, int ch, int x, int y)
{
    const int m = x >> 1, n = y >> 1;
    const int c0 = pc_mb_clampi(m - 1, w), c1 = pc_mb_clampi(m, w), c2 = pc_mb_clampi(m + 1, w);
    float r[3];
    for (int t = 0; t < 3; t++) {
        const float *row = src + (size_t)pc_mb_clampi(n - 1 + t, h) * stride * nc + ch;
        r[t] = pc_mb_expand3(x & 1, row[(size_t)c0 * nc], row[(size_t)c1 * nc], row[(size_t)c2 * nc]);
    }
    return pc_mb_expand3(y & 1, r[0], r[1], r[2]);
}

/* One level of the collapse: C_k from G_k, D_k and the expansions of
 * D_{k+1} and C_{k+1} at the pixel. */
PC_RENDER_HD float pc_mb_collapse(float g, float d, float ed, float ec) { return g * (d - ed) + ec; }

/* The strip pixel from the two cameras' values (after the A := B / B := A
 * rule), G_0 and the expansions of C_1 and D_1 there (ed only read where
 * g0 > 0), times cover. */
PC_RENDER_HD float pc_mb_final(float g0, float a, float b, float ec, float ed, float cover)
{
    float v = b + ec;
    if (g0 > 0.0f)
        v = g0 * (a + ec - ed) + (1.0f - g0) * v;
    return v * cover;
}

/* cover: the fade of the covered area's edge over its last source pixel,
 * from the border distances of the cameras that see the pixel, as the
 * feather normalisation fades it (render.h: sum w L / max(sum w, 1 /
 * feather), w = min(d / feather, 1): min(1, da + db) on a flat picture).
 * The larger distance alone darkened the overlaps' ends, where both
 * cameras see the pixel within a source pixel of their borders, to as
 * little as half of the feather blend's value. */
PC_RENDER_HD float pc_mb_cover(int va, float da, int vb, float db)
{
    const float d = va && vb ? da + db : (va ? da : db);
    return d < 1.0f ? d : 1.0f;
}

/* --- host side ---------------------------------------------------------- */

/* render_multiband.c: builds p->mb from p's seams (pc_render_plan_build
 * calls it: the strips from the range the seams may take, so that only
 * the seams and masks change when they are placed); updates the seams and
 * masks from p's seams (pc_render_plan_place_seams); frees it. */
int pc_render_mb_build(pc_render_plan *p, int levels, char *err, size_t errlen);
int pc_render_mb_update(pc_render_plan *p, char *err, size_t errlen);
void pc_render_mb_free(struct pc_render_mb *mb);
/* How far from a seam the blend of `levels` levels and a seam ramp of
 * 1 / inv_sw pixels changes pixels (the seams' margin from the overlap's
 * edges), and (depend, if not NULL) how far from it D is read. */
int pc_render_mb_reach(int levels, float inv_sw, int *depend);

/* What a multiband plan blends per frame (benchmarks, tests): the
 * strips' output pixels (level 0) and their coarser levels' pixels, the
 * pixels where D is sampled, those of the blend zone's tiles. */
typedef struct pc_mb_sizes {
    size_t strips, coarser, sampled, zone;
} pc_mb_sizes;
void pc_render_mb_sizes(const pc_render_plan *p, pc_mb_sizes *out);

/* render_mb_host.c: the C reference and the CPU renderer of a multiband
 * plan (pc_render_ref and pc_render_cpu_lanes hand them the plan; lanes:
 * the CPU renderer's build that renders everything outside the strips,
 * pc_render_cpu_lanes's name, checked by it). */
int pc_render_mb_ref(const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err,
                     size_t errlen);
int pc_render_mb_cpu(pc_pool *cpu, const char *lanes, const pc_render_plan *p, const pc_picture *src,
                     const pc_picture *dst, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
