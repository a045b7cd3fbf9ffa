/* cuda_render.cuh - the CUDA kernels of the render family (render.h): a
 * panorama or a virtual-camera view from the stacked demosaiced cameras,
 * blend, photometry and YUV in one pass. Compiles under nvcc and, after
 * cuda_emu.h, as host C++ (cuda_emu_render.cc), so CI checks the kernels
 * against the C reference without a GPU.
 *
 * The two numbers (METHOD.md), five 2040x1080 cameras into 8600x1300
 * NV12 on an H100: bytes at least the cameras once (RGBX32 44 MB, RGB24
 * 33 MB) and the panorama once (16.8 MB): 61 MB, about 20 us at 3 TB/s;
 * arithmetic about 13 M camera samples (1.2 cameras per pixel) of ~80
 * flops and one filtered texture fetch each: ~1 GFLOP (nothing for the
 * chip) and 13 M fetches (the texture units do ~0.9 G filtered fetches per
 * ms). So the kernel should be bound by memory and the texture path. ncu
 * said otherwise (an H200, 2026-11-26: 72 % of the issue slots busy, 35 %
 * occupancy, 1400 instructions per warp for 128 pixels): it is bound by
 * instruction issue, and the last round of work took instructions out
 * (163 -> 104 us for the panorama, 37.6 -> 24.5 us for a 1080p view, same
 * machine and bench; then 104 -> 85 us and 25 -> 21.4 us on an H100, the
 * camera loop 511 -> 330 SASS instructions: pc_rcam's constants folded on
 * the host, the seam factor a template argument): the photometry's tables
 * read as pairs through the magic-number index (pc_rlut: no float <-> int
 * conversions, which run at a quarter of the FMA rate), the projection
 * of a rectilinear rig without a branch (pc_rproject_rect: the general
 * pc_cam_project compiled to a branch, a divergence barrier and reloaded
 * camera parameters per test), the division as reciprocal and multiply
 * (PC_RIG_DIV), one table address as one wide multiply-add. The design
 * below is otherwise about bytes and fetches:
 *
 *   RAY (the fast kernel, pc_render_ray_kernel): one thread per 2x2
 *     output block (4 Y + one CbCr, the paper's 4-pixel final pass), a
 *     warp 32x4 pixels inside one 32x8 mask tile, so the camera loop is
 *     warp-uniform and runs over the one or two cameras of the tile only;
 *     the ray computed on the fly from per-column and per-row terms (no
 *     trig per pixel, no map bytes); the camera parameters are kernel
 *     parameters (__grid_constant__: the constant bank, read with a
 *     uniform index); RGBX32 cameras are sampled through a texture with
 *     hardware bilinear filtering (one instruction, the texture cache's 2D
 *     locality); RGB24 ones with four 3-byte loads each (pc_render_bilinear_q8,
 *     the same weights as the texture unit's). Output leaves as 16-bit
 *     stores: a warp writes 32-byte sectors.
 *   MAP (pc_render_map_kernel): the same, but the source positions come
 *     from precomputed maps (8 bytes per pixel per camera, laid out so a
 *     warp reads 1 KiB in a row): more bytes, less arithmetic. The device
 *     run measures both (DESIGN.md: "measure both").
 *   PEER (pc_peer_remap_kernel + pc_peer_final_kernel): the straightforward
 *     way the issue benchmarks against: per camera, a kernel over its
 *     output box with precomputed float maps and weight maps, bilinear
 *     (float weights), LUT photometry, accumulated into a float RGBW
 *     picture; then a normalise + YUV pass that also clears it. It keeps
 *     render_formulas.h's plain table lookups (pc_render_linear,
 *     pc_render_finish), none of the tricks above: it stands for what a
 *     straightforward implementation costs.
 * and pc_render_measure_kernel: gain compensation's overlap statistics,
 * one block per camera pair over its sparse samples, reduced in shared
 * memory in a fixed order (deterministic).
 */
#ifndef PANOCAP_CUDA_RENDER_CUH
#define PANOCAP_CUDA_RENDER_CUH

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_dev.cuh"
#include "render.h"
#include "render_formulas.h"

/* A CTA: 16 x 8 threads, each a 2x2 block: 32 x 16 output pixels, two
 * mask tiles high; a warp (16 x 2 threads) is 32 x 4 pixels of one tile. */
#define PC_RBX 16
#define PC_RBY 8
#define PC_RCOFF ((128 << 18) + (1 << 17))
/* Threads of the measuring kernel (one CTA per camera pair). */
#define PC_RMEAS_NT 256
#ifdef __CUDACC__
#define PC_RBOUNDS(n) __launch_bounds__(n)
#else
#define PC_RBOUNDS(n)
#endif

/* A rectilinear camera as pc_rcamera_rect reads it: pc_cam_project's,
 * pc_render_border's and the vignetting's constants with everything that
 * does not depend on the pixel folded in on the host (pc_rcam_of), so the
 * per-sample arithmetic is what is left. Positions are in the stacked
 * texture's coordinates, tx = sx + 0.5, ty = sy + c cam_h + 0.5 (what
 * tex2D takes: no adds per sample). */
struct pc_rcam {
    float R[9];           /* rows f rn_inv R[0..2], -f rn_inv R[3..5], R[6..8]: (X, Y) / Z = (u, v) rn_inv */
    float rmax;
    float a, b, c, d;     /* the radial polynomial times 1 / rn_inv */
    float g_h, t_w;       /* shear */
    float x0, y0;         /* where (u, v) = 0 lands: the centre, lens shift and texture offset */
    float xc, yc, hw, hh; /* the valid area: centre and half sizes */
    float vcx, vcy;       /* vignetting centre */
    float va, vb, vc, vd; /* and polynomial in dx^2 + dy^2 (vq folded in); 1, 0, 0, 0 where off */
};

/* Everything a render kernel reads, by value (the constant bank). */
struct pc_rkparams {
    uint8_t *d0, *d1, *d2; /* output planes */
    int p0, p1, p2;
    int w, h;              /* output size (even) */
    int m[10];             /* spec §8: y[3] cb[3] cr[3] y_offset (pc_yuv_coeffs) */
    const uint8_t *src;    /* the stacked cameras (camera 0's first row) */
    int src_pitch, bpp;    /* bpp 3 RGB24, 4 RGBX32 */
    cudaTextureObject_t tex; /* RGBX32 through the texture unit (TEX kernels) */
    int cam_w, cam_h, ncam;
    pc_view_model view;
    const float2 *col, *row; /* the plan's ray terms */
    const uint16_t *tmask;
    int ntx;
    float inv_feather;
    int has_vig;
    const float *inv_knots; /* ncam x PC_RIG_RESPONSE_KNOTS */
    const float *out_resp; /* PC_RIG_RESPONSE_KNOTS */
    const float2 *lut2;    /* the same as pairs (pc_rlut_pairs): ncam inverse responses, then out_resp */
    int rect;              /* every camera rectilinear, no circular crop: pc_rcamera_rect */
    const float *seam;     /* blend = seam: the plan's seams, else NULL */
    float inv_seam;
    const uint32_t *map_off; /* MAP */
    const float4 *map;
    pc_render_cam cam[PC_RENDER_MAX_CAMERAS];
    pc_rcam rc[PC_RENDER_MAX_CAMERAS]; /* rect: the same cameras for pc_rcamera_rect */
};

/* Host: camera c (stacked at row c cam_h) as pc_rcam; the folding in
 * double, so each constant is rounded once. */
static inline void pc_rcam_of(const pc_render_cam *C, int c, int cam_h, pc_rcam *o)
{
    const pc_cam_model *g = &C->geo;
    const pc_vig_model *v = &C->vig;
    const double fr = (double)g->f * g->rn_inv, rn = 1.0 / g->rn_inv;
    const double ox = 0.5, oy = (double)c * cam_h + 0.5;
    for (int i = 0; i < 3; i++) {
        o->R[i] = (float)(fr * g->R[i]);
        o->R[3 + i] = (float)(-fr * g->R[3 + i]);
        o->R[6 + i] = g->R[6 + i];
    }
    o->rmax = g->rmax;
    o->a = (float)(g->a * rn);
    o->b = (float)(g->b * rn);
    o->c = (float)(g->c * rn);
    o->d = (float)(g->d * rn);
    o->g_h = g->g_h;
    o->t_w = g->t_w;
    o->x0 = (float)(g->cx + (double)g->sx_d + (double)g->g_h * g->sy_e + ox);
    o->y0 = (float)(g->cy + (double)g->sy_e + (double)g->t_w * g->sx_d + oy);
    o->xc = (float)(0.5 * ((double)g->x0 + g->x1) + ox);
    o->yc = (float)(0.5 * ((double)g->y0 + g->y1) + oy);
    o->hw = (float)(0.5 * ((double)g->x1 - g->x0));
    o->hh = (float)(0.5 * ((double)g->y1 - g->y0));
    o->vcx = (float)(v->vcx + ox);
    o->vcy = (float)(v->vcy + oy);
    const double q = v->vq;
    o->va = v->on ? v->va : 1.0f;
    o->vb = v->on ? (float)(v->vb * q) : 0.0f;
    o->vc = v->on ? (float)(v->vc * q * q) : 0.0f;
    o->vd = v->on ? (float)(v->vd * q * q * q) : 0.0f;
}

/* Host: the plan's part of the parameters (device pointers are the
 * caller's: tables, masks, LUTs, seams, maps). */
static inline void pc_rkparams_plan(pc_rkparams *k, const pc_render_plan *p)
{
    memset(k, 0, sizeof *k);
    k->w = p->view.w;
    k->h = p->view.h;
    k->cam_w = p->cam_w;
    k->cam_h = p->cam_h;
    k->ncam = p->ncam;
    k->view = p->view;
    k->ntx = p->ntx;
    k->inv_feather = p->inv_feather;
    k->has_vig = p->has_vig;
    k->inv_seam = p->inv_seam;
    memcpy(k->cam, p->cam, sizeof p->cam);
    k->rect = 1;
    for (int c = 0; c < p->ncam; c++) {
        k->rect &= !p->cam[c].geo.fisheye && !p->cam[c].geo.pano && !p->cam[c].geo.circle;
        pc_rcam_of(&p->cam[c], c, p->cam_h, &k->rc[c]);
    }
}

/* Host: the pictures' part. */
static inline void pc_rkparams_pictures(pc_rkparams *k, const pc_picture *src, const pc_picture *dst)
{
    pc_yuv_coeffs yc;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &yc);
    for (int i = 0; i < 3; i++) {
        k->m[i] = yc.y[i];
        k->m[3 + i] = yc.cb[i];
        k->m[6 + i] = yc.cr[i];
    }
    k->m[9] = yc.y_offset;
    k->src = src->plane[0];
    k->src_pitch = (int)src->pitch[0];
    k->bpp = src->fmt == PC_FMT_RGBX32 ? 4 : 3;
    k->d0 = dst->plane[0];
    k->d1 = dst->plane[1];
    k->d2 = dst->plane[2];
    k->p0 = (int)dst->pitch[0];
    k->p1 = (int)dst->pitch[1];
    k->p2 = (int)dst->pitch[2];
}

/* The photometric tables as the pixel kernels read them: segment i (knots
 * i and i + 1) as the pair (knot i's value, its step to knot i + 1), so
 * that one 8-byte load fetches both; the last knot is (its value, 0).
 * Host; out[n]. */
static inline void pc_rlut_pairs(const float *knots, int n, float2 *out)
{
    for (int i = 0; i < n; i++)
        out[i] = make_float2(knots[i], i + 1 < n ? knots[i + 1] - knots[i] : 0.0f);
}

/* Host: every table of plan p as pairs, what pc_rkparams.lut2 points to:
 * the ncam inverse responses, then the output response; out[(ncam + 1) x
 * PC_RIG_RESPONSE_KNOTS]. */
static inline void pc_rlut_pairs_plan(const pc_render_plan *p, float2 *out)
{
    for (int c = 0; c < p->ncam; c++)
        pc_rlut_pairs(p->inv_knots[c], PC_RIG_RESPONSE_KNOTS, out + (size_t)c * PC_RIG_RESPONSE_KNOTS);
    pc_rlut_pairs(p->out_resp, PC_RIG_RESPONSE_KNOTS, out + (size_t)p->ncam * PC_RIG_RESPONSE_KNOTS);
}

static_assert((PC_RIG_RESPONSE_KNOTS & (PC_RIG_RESPONSE_KNOTS - 1)) == 0, "pc_rlut masks a power of two");

/* Linear interpolation in a pair table at v * scale (knot units, in
 * [0, PC_RIG_RESPONSE_KNOTS - 1]): pc_lut_interp's value up to rounding,
 * in 4 FMA-pipe instructions, the address and one load, no conversion.
 * The kernels are bound by instruction issue (ncu: 72 % of the issue
 * slots busy, a third of it the photometry), and pc_render_linear's
 * float -> int -> float conversions run at a quarter of the FMA rate. The
 * magic number 1.5 * 2^23 added with the product in one multiply-add
 * rounded down (FFMA.RM) leaves i = floor(v * scale) in the low mantissa
 * bits exactly (at the end, the last pair, whose step is 0), and v *
 * scale - i in [0, 1) is one more multiply-add from knot i. (Rounding to
 * nearest took q = v * scale - 1/2, an add of the magic and one to take
 * it off again: 5 instructions, and the tables from the segments'
 * middles.) No clamp: v * scale >= 0 always (texture samples, bilinear
 * mixes of bytes, saturated sums), and v * scale <= n - 1 (up to a
 * rounding, which stays below n). */
template <int SAT = 0>
PC_DEV float pc_rlut(const float2 *lut, float v, float scale)
{
    const float f = __fmaf_rd(v, scale, 12582912.0f);
    /* f's bits are 0x4B400000 + i: the table's address less 8 x 0x4B400000
     * plus 8 x the bits is pair i, with no mask (one instruction per
     * lookup less). That needs 0 <= v * scale < n, which every caller
     * keeps (above); the emulation checks it. */
    const unsigned b = __float_as_uint(f);
#ifdef __CUDA_ARCH__
    /* as one wide multiply-add (or a LEA pair): written in C (lut[i]),
     * the compiler shifts, masks and adds in 64 bits, 4 to 5 instructions */
    const float2 *a;
    asm("mad.wide.u32 %0, %1, 8, %2;" : "=l"(a) : "r"(b), "l"((uintptr_t)lut - 8ull * 0x4B400000u));
    const float2 k = __ldg(a);
#else
    const unsigned i = b - 0x4B400000u;
    if (i >= PC_RIG_RESPONSE_KNOTS) {
        fprintf(stderr, "pc_rlut: %g x %g is off the table\n", (double)v, (double)scale);
        abort();
    }
    const float2 k = lut[i];
#endif
    const float t = fmaf(v, scale, 12582912.0f - f);
#ifdef __CUDA_ARCH__
    if (SAT) { /* __saturatef(fmaf()) under -ftz stays two instructions */
        float r;
        asm("fma.rn.ftz.sat.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(t), "f"(k.y), "f"(k.x));
        return r;
    }
#endif
    return SAT ? __saturatef(fmaf(t, k.y, k.x)) : fmaf(t, k.y, k.x);
}

/* A value in 0..255 rounded to 8 bits: pc_render_to8's value (ties go to
 * even, not up: a rare 1-code difference inside render.h's rule) without
 * a float -> int conversion. */
PC_DEV int pc_rto8(float v)
{
    v = fminf(fmaxf(v, 0.0f), 255.0f);
    return __float_as_int(v + 12582912.0f) - 0x4B400000;
}

/* sampler = bicubic through the texture unit: pc_render_bicubic's 12
 * taps as 5 filtered fetches. On each axis the middle two weights are
 * >= 0, so one linear fetch at i + w2 / (w1 + w2), times w1 + w2, gives
 * both (the trick of GPU Gems 2, ch. 20, for the middle pair only: the
 * outer weights are negative): the middle 2x2 in one fetch, each outer
 * pair of rows or columns in one more, fetched at the outer pixel's
 * centre along its own axis. The 4 corners are not in the definition
 * (render_formulas.h says why: with them it is 9 fetches, and a 1080p
 * view took 39.8 us against 24.7 us bilinear on an H200, bound by the
 * texture unit's ~0.9 G fetches per ms). The outer rows are clamped to
 * the camera's own rows (the texture holds the stacked cameras; its clamp
 * does the columns). The texture unit rounds the fetches' positions to
 * 1/256 px, as in bilinear sampling. Unit 0..1, clamped there. */
PC_DEV void pc_rcubic_tex(const pc_rkparams &p, int c, float sx, float sy, float v[3])
{
    const float fx = floorf(sx), fy = floorf(sy);
    float wx[4], wy[4];
    pc_render_cubic_weights(sx - fx, wx);
    pc_render_cubic_weights(sy - fy, wy);
    const float gx = wx[1] + wx[2], gy = wy[1] + wy[2];
    const float top = (float)(c * p.cam_h) + 0.5f;
    const float mx = fx + 0.5f + __fdividef(wx[2], gx), my = top + fy + __fdividef(wy[2], gy);
    const float4 m = tex2D<float4>(p.tex, mx, my);
    const float4 l = tex2D<float4>(p.tex, fx - 0.5f, my);
    const float4 r = tex2D<float4>(p.tex, fx + 2.5f, my);
    const float4 t = tex2D<float4>(p.tex, mx, top + fmaxf(fy - 1.0f, 0.0f));
    const float4 b = tex2D<float4>(p.tex, mx, top + fminf(fy + 2.0f, (float)(p.cam_h - 1)));
    const float cm = gx * gy, cl = wx[0] * gy, cr = wx[3] * gy, ct = gx * wy[0], cb = gx * wy[3];
    const float n = __fdividef(1.0f, cm + (cl + cr) + (ct + cb));
    v[0] = __saturatef(n * fmaf(cm, m.x, fmaf(cl, l.x, fmaf(cr, r.x, fmaf(ct, t.x, cb * b.x)))));
    v[1] = __saturatef(n * fmaf(cm, m.y, fmaf(cl, l.y, fmaf(cr, r.y, fmaf(ct, t.y, cb * b.y)))));
    v[2] = __saturatef(n * fmaf(cm, m.z, fmaf(cl, l.z, fmaf(cr, r.z, fmaf(ct, t.z, cb * b.z)))));
}

/* The texture's bilinear sample at texture position (tx, ty) of the
 * stacked cameras, 0..1 (pc_rsample_raw<1> after its offsets). */
PC_DEV void pc_rsample_tex(const pc_rkparams &p, float tx, float ty, float v[3])
{
    const float4 t = tex2D<float4>(p.tex, tx, ty);
    v[0] = t.x;
    v[1] = t.y;
    v[2] = t.z;
}

/* Camera c's sample at (sx, sy) in the sampler's own unit: 0..1 from the
 * texture unit, 0..255 from plain loads; times PC_RUNIT(TEX) it is
 * 0..255. (Scaling once where the value is used saves a multiply per
 * channel and sample.) TEX: bit 0 the texture unit (RGBX32 cameras),
 * bit 1 sampler = bicubic; 0 bilinear loads, 1 bilinear texture, 2
 * bicubic loads (pc_render_bicubic itself), 3 bicubic texture. */
#define PC_RUNIT(TEX) (((TEX) & 1) ? 255.0f : 1.0f)
template <int TEX>
PC_DEV void pc_rsample_raw(const pc_rkparams &p, int c, float sx, float sy, float v[3])
{
    if (TEX == 3) {
        pc_rcubic_tex(p, c, sx, sy, v);
    } else if (TEX == 2) {
        pc_render_bicubic(p.src + (size_t)c * p.cam_h * p.src_pitch, (size_t)p.src_pitch, p.bpp, p.cam_w, p.cam_h, sx,
                          sy, v);
    } else if (TEX) {
        pc_rsample_tex(p, sx + 0.5f, sy + (float)(c * p.cam_h) + 0.5f, v);
    } else {
        pc_render_bilinear_q8(p.src + (size_t)c * p.cam_h * p.src_pitch, (size_t)p.src_pitch, p.bpp, p.cam_w,
                              p.cam_h, sx, sy, v);
    }
}

/* Photometry of a raw sample (pc_rsample_raw) of camera c, gv = its gain
 * over the vignetting factor: pc_render_linear through the pair table. */
template <int TEX>
PC_DEV float pc_rlinear(const float2 *lut, float raw, float gv)
{
    return pc_rlut(lut, raw, PC_RUNIT(TEX) * ((PC_RIG_RESPONSE_KNOTS - 1) / 255.0f)) * gv;
}

/* Camera c's bilinear sample at (sx, sy), 0..255. */
template <int TEX>
PC_DEV void pc_rsample(const pc_rkparams &p, int c, float sx, float sy, float v[3])
{
    pc_rsample_raw<TEX>(p, c, sx, sy, v);
    PC_UNROLL
    for (int ch = 0; ch < 3; ch++)
        v[ch] *= PC_RUNIT(TEX);
}

/* One sample's share of its pixel: acc += w L, ws += w, where L is the
 * raw sample v (pc_rsample_raw) through the photometry: f_c^-1 from the
 * pair table lut, times the camera's gain over the vignetting factor
 * (iv = 1 / the factor, the caller's: pc_render_inv_vig). The weight takes
 * the vignetting once, the gains after: two multiplies fewer than gain x
 * vignetting per channel. */
template <int PHOTO, int TEX>
PC_DEV void pc_raccumulate(const pc_render_cam &C, const float2 *lut, float w, float iv, const float v[3],
                           float acc[3], float &ws)
{
    if (PHOTO) {
        const float wv = w * iv;
        PC_UNROLL
        for (int ch = 0; ch < 3; ch++)
            acc[ch] = fmaf(wv * C.gain[ch], pc_rlinear<TEX>(lut, v[ch], 1.0f), acc[ch]);
    } else {
        const float wu = w * PC_RUNIT(TEX);
        PC_UNROLL
        for (int ch = 0; ch < 3; ch++)
            acc[ch] += wu * v[ch];
    }
    ws += w;
}

/* One camera's contributions to the thread's 4 pixels, those it sees
 * (ok[k]) at (sx[k], sy[k]), in three phases so that the four samples are
 * fetched back to back (their latencies overlap) instead of each waiting
 * for the previous pixel's arithmetic: the weights, the samples, then the
 * photometry and the sums. The camera's gains and table are read once. */
template <int PHOTO, int TEX>
PC_DEV void pc_rcamera(const pc_rkparams &p, int c, const float sx[4], const float sy[4], const int ok[4], int x,
                       int y, float acc[4][3], float ws[4])
{
    const pc_render_cam &C = p.cam[c];
    float w[4], v[4][3];
    PC_UNROLL
    for (int k = 0; k < 4; k++) {
        w[k] = 0.0f;
        if (!ok[k])
            continue;
        w[k] = pc_render_feather(pc_render_border(&C.geo, sx[k], sy[k]), p.inv_feather);
        if (p.seam) {
            const int yo = y + (k >> 1);
            w[k] *= pc_render_seam_factor((float)(x + (k & 1)), p.seam[(size_t)(2 * c) * p.h + yo],
                                          p.seam[(size_t)(2 * c + 1) * p.h + yo], p.inv_seam);
        }
    }
    PC_UNROLL
    for (int k = 0; k < 4; k++)
        if (w[k] > 0.0f)
            pc_rsample_raw<TEX>(p, c, sx[k], sy[k], v[k]);
    const float2 *lut = p.lut2 + PC_RIG_RESPONSE_KNOTS * c;
    PC_UNROLL
    for (int k = 0; k < 4; k++)
        if (w[k] > 0.0f) {
            /* pc_render_inv_vig, computed and then chosen: no branch on the camera */
            float iv = 1.0f;
            if (PHOTO && p.has_vig) {
                const float f = pc_vig_factor_poly(&C.vig, sx[k], sy[k]);
                iv = C.vig.on ? __fdividef(1.0f, fmaxf(f, 1e-3f)) : 1.0f;
            }
            pc_raccumulate<PHOTO, TEX>(C, lut, w[k], iv, v[k], acc[k], ws[k]);
        }
}

/* |v| that folds into the instruction using it (FADD's absolute operand):
 * under -ftz=true fabsf is abs.ftz.f32, which ptxas keeps as an FADD of
 * its own (|v| - 0, to flush a denormal); plain abs.f32 folds. */
PC_DEV float pc_rabs(float v)
{
#ifdef __CUDA_ARCH__
    float r;
    asm("abs.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
#else
    return fabsf(v);
#endif
}

/* pc_cam_project for a rectilinear camera without a circular crop, in
 * its order of operations but without a branch and with pc_rcam's folded
 * constants: every test becomes a predicate; the texture position (tx,
 * ty) and the distance d to the valid area's border (pc_render_border)
 * come back, garbage where the camera does not see the ray (0 returned).
 * The general version compiles to a branch per test and reloads the
 * camera's parameters behind each (SASS of the panorama kernel: 156
 * constant loads, 111 branches and 53 divergence barriers for 4 pixels).
 * The folding (f and rn_inv in R, so no multiply by k and none by rn_inv;
 * the lens shift, centre and texture offset in x0, y0; 1 / rn_inv in the
 * polynomial) leaves 2 FFMA per coordinate where there were 3 and an add,
 * and the border from the centre, hw - |tx - xc| (FADD with an absolute
 * operand), 5 instructions where x - x0, x1 - x, ... took 7: 34 instead
 * of 40 per sample. */
PC_DEV int pc_rproject_rect(const pc_rcam &c, const float ray[3], float &tx, float &ty, float &d)
{
    const float X = c.R[0] * ray[0] + c.R[1] * ray[1] + c.R[2] * ray[2];
    const float Y = c.R[3] * ray[0] + c.R[4] * ray[1] + c.R[5] * ray[2];
    const float Z = c.R[6] * ray[0] + c.R[7] * ray[1] + c.R[8] * ray[2];
    const float iz = PC_RIG_DIV(1.0f, Z);
    const float u = X * iz, v = Y * iz; /* pc_cam_project's u, v times rn_inv */
    const float r = sqrtf(u * u + v * v);
    const float s = ((c.a * r + c.b) * r + c.c) * r + c.d;
    tx = fmaf(s, fmaf(c.g_h, v, u), c.x0);
    ty = fmaf(s, fmaf(c.t_w, u, v), c.y0);
    /* >= 0 exactly where the position is inside, so one test does
     * pc_cam_project's four (fminf drops a NaN, but a NaN position has a
     * NaN r, which fails r < rmax) */
    d = fminf(c.hw - pc_rabs(tx - c.xc), c.hh - pc_rabs(ty - c.yc));
    return (Z > 0.0f) & (r < c.rmax) & (d >= 0.0f);
}

/* pc_rcamera for the ray kernel on a rig of such cameras (pc_rkparams.rect):
 * the four projections, weights, samples and photometry without a branch
 * (a pixel the camera does not see weighs 0 and samples texture position
 * (0, 0), pixel (0, 0) of camera c for the loads). SEAM: p.seam is set, a
 * template argument because the compiler predicates the seam factor's
 * code instead of branching around it: 60 instructions and 8 loads per
 * camera issued for nothing in a feather blend. */
template <int PHOTO, int TEX, int SEAM>
PC_DEV void pc_rcamera_rect(const pc_rkparams &p, int c, const float ray[4][3], int x, int y, float acc[4][3],
                            float ws[4])
{
    const pc_rcam &R = p.rc[c];
    float tx[4], ty[4], sx[4], sy[4], w[4], v[4][3];
    PC_UNROLL
    for (int k = 0; k < 4; k++) {
        float d;
        const int ok = pc_rproject_rect(R, ray[k], tx[k], ty[k], d);
        float wk = __saturatef(d * p.inv_feather); /* pc_render_feather: d >= 0 where ok */
        if (SEAM) {
            const int yo = y + (k >> 1);
            wk *= pc_render_seam_factor((float)(x + (k & 1)), p.seam[(size_t)(2 * c) * p.h + yo],
                                        p.seam[(size_t)(2 * c + 1) * p.h + yo], p.inv_seam);
        }
        w[k] = ok ? wk : 0.0f;
        if (TEX != 1) { /* the loads and bicubic take camera c's own pixel position */
            sx[k] = ok ? tx[k] - 0.5f : 0.0f;
            sy[k] = ok ? ty[k] - ((float)(c * p.cam_h) + 0.5f) : 0.0f;
        }
        tx[k] = ok ? tx[k] : 0.0f;
        ty[k] = ok ? ty[k] : 0.0f;
    }
    PC_UNROLL
    for (int k = 0; k < 4; k++)
        if (TEX == 1)
            pc_rsample_tex(p, tx[k], ty[k], v[k]);
        else
            pc_rsample_raw<TEX>(p, c, sx[k], sy[k], v[k]);
    const float2 *lut = p.lut2 + PC_RIG_RESPONSE_KNOTS * c;
    const pc_render_cam &C = p.cam[c];
    PC_UNROLL
    for (int k = 0; k < 4; k++) {
        /* pc_render_inv_vig with the dx^2 + dy^2 polynomial, 1 for a
         * camera without vignetting: no test of vig.on, and none of
         * p.has_vig either, which the compiler predicated (the instructions
         * issued anyway, with the polynomial's constants reloaded per
         * sample and a select of 1: 8 instructions and 12 constant loads
         * more per camera than computing it) */
        float iv = 1.0f;
        if (PHOTO) {
            const float dx = tx[k] - R.vcx, dy = ty[k] - R.vcy, q = dx * dx + dy * dy;
            iv = __fdividef(1.0f, fmaxf(((R.vd * q + R.vc) * q + R.vb) * q + R.va, 1e-3f));
        }
        pc_raccumulate<PHOTO, TEX>(C, lut, w[k], iv, v[k], acc[k], ws[k]);
    }
}

PC_DEV void pc_rstore_u16(uint8_t *d, unsigned v)
{
#ifndef __CUDACC__
    pc_emu_check_align(d, 2);
#endif
    *(uint16_t *)d = (uint16_t)v;
}

/* One pixel from its sums: pc_render_finish, the output response
 * through the pair table and 8-bit rounding without conversions. */
template <int PHOTO>
PC_DEV void pc_rfinish_px(const pc_rkparams &p, const float acc[3], float ws, int rgb[3])
{
    const float s = __fdividef(1.0f, fmaxf(ws, p.inv_feather));
    PC_UNROLL
    for (int k = 0; k < 3; k++) {
        const float l = acc[k] * s;
        /* photometry: f_o is within [0, 1] after the saturation, so the
         * 8-bit rounding needs no clamp */
        rgb[k] = !(ws > 0.0f) ? 0
                 : PHOTO ? __float_as_int(fmaf(pc_rlut<1>(p.lut2 + PC_RIG_RESPONSE_KNOTS * p.ncam, __saturatef(l),
                                                          PC_RIG_RESPONSE_KNOTS - 1),
                                              255.0f, 12582912.0f)) - 0x4B400000
                         : pc_rto8(l);
    }
}

/* The 2x2 block at (x, y): pixels (0,0) (1,0) (0,1) (1,1) from their sums,
 * stored as the reference's store_block does (spec §8). */
template <int FMT, int PHOTO, int FAST = 1>
PC_DEV void pc_rfinish(const pc_rkparams &p, int x, int y, const float acc[4][3], const float ws[4])
{
    int v[4][3];
    PC_UNROLL
    for (int k = 0; k < 4; k++)
        if (FAST)
            pc_rfinish_px<PHOTO>(p, acc[k], ws[k], v[k]);
        else /* the peer: the formulas as written (render_formulas.h) */
            pc_render_finish(acc[k], ws[k], p.inv_feather, PHOTO, p.out_resp, PC_RIG_RESPONSE_KNOTS, v[k]);
    if (FMT == PC_FMT_RGB24) { /* 6 bytes per row at 3x: x even, so 16-bit stores */
        uint8_t *t = p.d0 + (size_t)y * p.p0 + 3 * (size_t)x, *b = t + p.p0;
        pc_rstore_u16(t, (unsigned)v[0][0] | (unsigned)v[0][1] << 8);
        pc_rstore_u16(t + 2, (unsigned)v[0][2] | (unsigned)v[1][0] << 8);
        pc_rstore_u16(t + 4, (unsigned)v[1][1] | (unsigned)v[1][2] << 8);
        pc_rstore_u16(b, (unsigned)v[2][0] | (unsigned)v[2][1] << 8);
        pc_rstore_u16(b + 2, (unsigned)v[2][2] | (unsigned)v[3][0] << 8);
        pc_rstore_u16(b + 4, (unsigned)v[3][1] | (unsigned)v[3][2] << 8);
        return;
    }
    const int *m = p.m;
    int Y[4], sr = 0, sg = 0, sb = 0;
    PC_UNROLL
    for (int k = 0; k < 4; k++) {
        Y[k] = pc_clamp8((m[0] * v[k][0] + m[1] * v[k][1] + m[2] * v[k][2] + m[9]) >> 16);
        sr += v[k][0];
        sg += v[k][1];
        sb += v[k][2];
    }
    const int cb = pc_clamp8((m[3] * sr + m[4] * sg + m[5] * sb + PC_RCOFF) >> 18);
    const int cr = pc_clamp8((m[6] * sr + m[7] * sg + m[8] * sb + PC_RCOFF) >> 18);
    uint8_t *yt = p.d0 + (size_t)y * p.p0 + x;
    pc_rstore_u16(yt, (unsigned)Y[0] | (unsigned)Y[1] << 8);
    pc_rstore_u16(yt + p.p0, (unsigned)Y[2] | (unsigned)Y[3] << 8);
    if (FMT == PC_FMT_NV12) {
        pc_rstore_u16(p.d1 + (size_t)(y >> 1) * p.p1 + x, (unsigned)cb | (unsigned)cr << 8);
    } else {
        p.d1[(size_t)(y >> 1) * p.p1 + (x >> 1)] = (uint8_t)cb;
        p.d2[(size_t)(y >> 1) * p.p2 + (x >> 1)] = (uint8_t)cr;
    }
}

/* The block of this thread: (x, y) its top-left pixel; 0 past the picture. */
PC_DEV int pc_rblock(const pc_rkparams &p, int &x, int &y)
{
    x = 2 * (int)(blockIdx.x * PC_RBX + threadIdx.x);
    y = 2 * (int)(blockIdx.y * PC_RBY + threadIdx.y);
    return x < p.w && y < p.h;
}

/* The ray kernel's CTAs per SM asked of the register allocator
 * (__launch_bounds__' second argument; 0: none, 80 registers, 6 CTAs).
 * A tuning knob for -DPC_RAY_MINB=N builds: 7 (72 registers, 20 bytes
 * spilled) measured 2 % faster on the panorama and no faster on views, 8
 * (64, 240 bytes spilled) slower (H200, 2026-11-26). */
#ifndef PC_RAY_MINB
#define PC_RAY_MINB 0
#endif
#if defined(__CUDACC__) && PC_RAY_MINB > 0
#define PC_RAY_BOUNDS __launch_bounds__(PC_RBX * PC_RBY, PC_RAY_MINB)
#else
#define PC_RAY_BOUNDS PC_RBOUNDS(PC_RBX * PC_RBY)
#endif

/* RAY: positions computed on the fly. */
template <int FMT, int PHOTO, int TEX>
PC_KERNEL void PC_RAY_BOUNDS pc_render_ray_kernel(const __grid_constant__ pc_rkparams p)
{
    int x, y;
    if (!pc_rblock(p, x, y))
        return;
    const unsigned mask = p.tmask[(size_t)(y / PC_RENDER_TILE_H) * p.ntx + x / PC_RENDER_TILE_W];
    float ray[4][3];
    {
        const float2 c0 = p.col[x], c1 = p.col[x + 1], r0 = p.row[y], r1 = p.row[y + 1];
        const float cc[2][2] = {{c0.x, c0.y}, {c1.x, c1.y}}, rr[2][2] = {{r0.x, r0.y}, {r1.x, r1.y}};
        PC_UNROLL
        for (int k = 0; k < 4; k++)
            pc_render_ray(&p.view, cc[k & 1], rr[k >> 1], ray[k]);
    }
    float acc[4][3] = {{0.0f}}, ws[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (p.rect && !p.seam) { /* kernel parameters: the same way for every thread */
        for (unsigned m = mask; m; m &= m - 1)
            pc_rcamera_rect<PHOTO, TEX, 0>(p, __ffs(m) - 1, ray, x, y, acc, ws);
    } else if (p.rect) {
        for (unsigned m = mask; m; m &= m - 1)
            pc_rcamera_rect<PHOTO, TEX, 1>(p, __ffs(m) - 1, ray, x, y, acc, ws);
    } else {
        for (unsigned m = mask; m; m &= m - 1) {
            const int c = __ffs(m) - 1;
            float sx[4], sy[4];
            int ok[4];
            PC_UNROLL
            for (int k = 0; k < 4; k++)
                ok[k] = pc_cam_project(&p.cam[c].geo, ray[k], &sx[k], &sy[k]);
            pc_rcamera<PHOTO, TEX>(p, c, sx, sy, ok, x, y, acc, ws);
        }
    }
    pc_rfinish<FMT, PHOTO>(p, x, y, acc, ws);
}

/* MAP: positions from the precomputed maps (render.h's layout). */
template <int FMT, int PHOTO, int TEX>
PC_KERNEL void PC_RBOUNDS(PC_RBX * PC_RBY) pc_render_map_kernel(const __grid_constant__ pc_rkparams p)
{
    int x, y;
    if (!pc_rblock(p, x, y))
        return;
    const size_t t = (size_t)(y / PC_RENDER_TILE_H) * p.ntx + x / PC_RENDER_TILE_W;
    const unsigned mask = p.tmask[t];
    const int blk = 16 * ((y >> 1) & 3) + ((x >> 1) & 15);
    const float4 *q = p.map + p.map_off[t] / 2 + 2 * blk;
    float acc[4][3] = {{0.0f}}, ws[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (unsigned m = mask; m; m &= m - 1, q += 128) {
        const float4 q0 = q[0], q1 = q[1];
        const float sx[4] = {q0.x, q0.z, q1.x, q1.z}, sy[4] = {q0.y, q0.w, q1.y, q1.w};
        const int ok[4] = {sx[0] > -1e8f, sx[1] > -1e8f, sx[2] > -1e8f, sx[3] > -1e8f};
        pc_rcamera<PHOTO, TEX>(p, __ffs(m) - 1, sx, sy, ok, x, y, acc, ws);
    }
    pc_rfinish<FMT, PHOTO>(p, x, y, acc, ws);
}

/* --- PEER: the straightforward per-camera remap ------------------------ */

/* Camera c's box of the output and its maps (x, y: -1 where unseen) and
 * feather weights, floats, box-sized. */
struct pc_peer_cam {
    int x0, y0, w, h;
    const float *mx, *my, *wt;
};

/* Host: camera c's box (the tiles of its mask) and maps; malloc'd, the
 * caller frees mx (one allocation for the three). 0, or -1 (no memory;
 * a camera seen nowhere gets an empty box). */
static inline int pc_peer_build(const pc_render_plan *p, int c, pc_peer_cam *pc, float **mem)
{
    int tx0 = p->ntx, tx1 = -1, ty0 = p->nty, ty1 = -1;
    for (int ty = 0; ty < p->nty; ty++)
        for (int tx = 0; tx < p->ntx; tx++)
            if (p->tmask[(size_t)ty * p->ntx + tx] >> c & 1) {
                tx0 = tx < tx0 ? tx : tx0;
                tx1 = tx > tx1 ? tx : tx1;
                ty0 = ty < ty0 ? ty : ty0;
                ty1 = ty > ty1 ? ty : ty1;
            }
    memset(pc, 0, sizeof *pc);
    *mem = NULL;
    if (tx1 < 0)
        return 0;
    pc->x0 = tx0 * PC_RENDER_TILE_W;
    pc->y0 = ty0 * PC_RENDER_TILE_H;
    int x1 = (tx1 + 1) * PC_RENDER_TILE_W, y1 = (ty1 + 1) * PC_RENDER_TILE_H;
    x1 = x1 < p->view.w ? x1 : p->view.w;
    y1 = y1 < p->view.h ? y1 : p->view.h;
    pc->w = x1 - pc->x0;
    pc->h = y1 - pc->y0;
    const size_t n = (size_t)pc->w * pc->h;
    float *m = (float *)malloc(sizeof(float) * 3 * n);
    if (!m)
        return -1;
    for (int j = 0; j < pc->h; j++)
        for (int i = 0; i < pc->w; i++) {
            const int x = pc->x0 + i, y = pc->y0 + j;
            const size_t k = (size_t)j * pc->w + i;
            float ray[3], sx, sy, w = 0.0f;
            pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
            if (pc_cam_project(&p->cam[c].geo, ray, &sx, &sy)) {
                w = pc_render_feather(pc_render_border(&p->cam[c].geo, sx, sy), p->inv_feather);
                if (p->seam)
                    w *= pc_render_seam_factor((float)x, p->seam[(size_t)(2 * c) * p->view.h + y],
                                               p->seam[(size_t)(2 * c + 1) * p->view.h + y], p->inv_seam);
            }
            m[k] = w > 0.0f ? sx : -1.0f;
            m[n + k] = sy;
            m[2 * n + k] = w;
        }
    pc->mx = m;
    pc->my = m + n;
    pc->wt = m + 2 * n;
    *mem = m;
    return 0;
}

/* One camera over its box: acc (output-sized RGBW, floats) += w * L. */
template <int PHOTO>
PC_KERNEL void pc_peer_remap_kernel(const __grid_constant__ pc_rkparams p, int c, pc_peer_cam pc, float4 *acc)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x), j = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (i >= pc.w || j >= pc.h)
        return;
    const size_t k = (size_t)j * pc.w + i;
    const float sx = pc.mx[k];
    if (sx < 0.0f)
        return;
    const float sy = pc.my[k], w = pc.wt[k];
    float v[3];
    pc_render_bilinear(p.src + (size_t)c * p.cam_h * p.src_pitch, (size_t)p.src_pitch, p.bpp, p.cam_w, p.cam_h, sx,
                       sy, v);
    if (PHOTO) {
        const float iv = pc_render_inv_vig(&p.cam[c].vig, sx, sy);
        for (int ch = 0; ch < 3; ch++)
            v[ch] = pc_render_linear(p.inv_knots + PC_RIG_RESPONSE_KNOTS * c, v[ch], p.cam[c].gain[ch] * iv);
    }
    float4 *a = acc + (size_t)(pc.y0 + j) * p.w + pc.x0 + i;
    float4 s = *a;
    s.x += w * v[0];
    s.y += w * v[1];
    s.z += w * v[2];
    s.w += w;
    *a = s;
}

/* Normalise + YUV, one 2x2 block per thread; clears acc for the next frame. */
template <int FMT, int PHOTO>
PC_KERNEL void PC_RBOUNDS(PC_RBX * PC_RBY) pc_peer_final_kernel(const __grid_constant__ pc_rkparams p,
                                                                      float4 *acc)
{
    int x, y;
    if (!pc_rblock(p, x, y))
        return;
    float a[4][3], ws[4];
    PC_UNROLL
    for (int k = 0; k < 4; k++) {
        float4 *q = acc + (size_t)(y + (k >> 1)) * p.w + x + (k & 1);
        const float4 s = *q;
        a[k][0] = s.x;
        a[k][1] = s.y;
        a[k][2] = s.z;
        ws[k] = s.w;
        *q = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    pc_rfinish<FMT, PHOTO, 0>(p, x, y, a, ws);
}

/* --- gain compensation's statistics ----------------------------------- */

struct pc_rpair {
    int a, b, n, off; /* cameras, samples, first sample in the xy array */
};

/* One CTA per pair: out[8 * pair + 0] = samples used, [1..3] camera a's
 * sums, [4..6] camera b's (linear, the .pto's gain pgain[c][3], no
 * compensation); the same clipping rule as pc_render_measure_ref. */
template <int TEX>
PC_KERNEL void PC_RBOUNDS(PC_RMEAS_NT) pc_render_measure_kernel(const __grid_constant__ pc_rkparams p,
                                                                       const pc_rpair *pairs, const uint32_t *xy,
                                                                       const float *pgain, float *out)
{
    PC_SMEM_DECL(smem_raw);
    float *red = (float *)smem_raw; /* 7 x PC_RMEAS_NT */
    const pc_rpair pr = pairs[blockIdx.x];
    const int tid = (int)threadIdx.x;
    float s[7] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = tid; i < pr.n; i += PC_RMEAS_NT) {
        const uint32_t q = xy[pr.off + i];
        const int x = (int)(q & 0xFFFF), y = (int)(q >> 16);
        const float2 cc = p.col[x], rr = p.row[y];
        const float c2[2] = {cc.x, cc.y}, r2[2] = {rr.x, rr.y};
        float ray[3], v[2][3], sx[2], sy[2];
        pc_render_ray(&p.view, c2, r2, ray);
        int ok = pc_cam_project(&p.cam[pr.a].geo, ray, &sx[0], &sy[0]) &&
                 pc_cam_project(&p.cam[pr.b].geo, ray, &sx[1], &sy[1]);
        if (!ok)
            continue;
        for (int e = 0; e < 2; e++) {
            pc_rsample<TEX>(p, e ? pr.b : pr.a, sx[e], sy[e], v[e]);
            for (int ch = 0; ch < 3; ch++)
                ok &= v[e][ch] >= 3.0f && v[e][ch] <= 252.0f;
        }
        if (!ok)
            continue;
        s[0] += 1.0f;
        for (int e = 0; e < 2; e++) {
            const int c = e ? pr.b : pr.a;
            const float iv = pc_render_inv_vig(&p.cam[c].vig, sx[e], sy[e]);
            for (int ch = 0; ch < 3; ch++)
                s[1 + 3 * e + ch] += pc_render_linear(p.inv_knots + PC_RIG_RESPONSE_KNOTS * c, v[e][ch], pgain[3 * c + ch] * iv);
        }
    }
    for (int k = 0; k < 7; k++)
        red[k * PC_RMEAS_NT + tid] = s[k];
    __syncthreads();
    for (int half = PC_RMEAS_NT / 2; half > 0; half >>= 1) {
        if (tid < half)
            for (int k = 0; k < 7; k++)
                red[k * PC_RMEAS_NT + tid] += red[k * PC_RMEAS_NT + tid + half];
        __syncthreads();
    }
    if (tid < 7)
        out[8 * blockIdx.x + tid] = red[tid * PC_RMEAS_NT];
}

/* Host: the plan's overlap samples as the measuring kernel reads them
 * (pairs[npairs], xy: every pair's samples in a row); the number of
 * samples. Call with NULL arrays for the count only. */
static inline int pc_rpairs_pack(const pc_render_plan *p, pc_rpair *pairs, uint32_t *xy)
{
    int off = 0;
    for (int k = 0; k < p->npairs; k++) {
        if (pairs) {
            pairs[k].a = p->pair[k].a;
            pairs[k].b = p->pair[k].b;
            pairs[k].n = p->pair[k].n;
            pairs[k].off = off;
        }
        if (xy)
            memcpy(xy + off, p->pair[k].xy, sizeof *xy * p->pair[k].n);
        off += p->pair[k].n;
    }
    return off;
}

/* Host: the kernel's sums (8 floats per pair) as pc_render_stats. */
static inline void pc_rstats_unpack(const pc_render_plan *p, const float *out, pc_render_stats *st)
{
    memset(st, 0, sizeof *st);
    st->npairs = p->npairs;
    for (int k = 0; k < p->npairs; k++) {
        st->pair[k].a = p->pair[k].a;
        st->pair[k].b = p->pair[k].b;
        st->pair[k].n = (int)out[8 * k];
        for (int ch = 0; ch < 3; ch++) {
            st->pair[k].sum_a[ch] = out[8 * k + 1 + ch];
            st->pair[k].sum_b[ch] = out[8 * k + 4 + ch];
        }
    }
}

#endif
