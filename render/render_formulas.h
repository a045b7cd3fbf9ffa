/* render_formulas.h - the per-pixel steps of the render kernel family
 * (render.h), written once as plain inline functions on float that the C
 * reference, the CPU backend and the CUDA kernels (and their host
 * emulation) all call: what differs between the implementations is only
 * how the work is organised and how a camera pixel is sampled (exact
 * float weights on the host, the texture unit's 8-bit weights on the
 * GPU), never the formulas.
 */
#ifndef PANOCAP_RENDER_FORMULAS_H
#define PANOCAP_RENDER_FORMULAS_H

#include <stdint.h>

#include "camera_model.h"

/* rig.h's table size; camera_model.h's users that include no rig.h */
#ifndef PC_RIG_RESPONSE_KNOTS
#define PC_RIG_RESPONSE_KNOTS 1024
#endif

#ifdef __CUDACC__
#define PC_RENDER_HD __host__ __device__ static inline
#else
#include <math.h>
#define PC_RENDER_HD static inline
#endif

/* The column and row terms of output pixel (x, y) (pc_render_plan.col/row,
 * two floats each; projection.h, pc_proj_col/pc_proj_row): the column's
 * depend on x only, the row's on y only. pc_render_ray combines them into
 * pc_view_ray's ray (same operations, same order: the same floats). */
PC_RENDER_HD void pc_render_terms(const pc_view_model *v, float x, float y, float col[2], float row[2])
{
    const float dx = x + v->ox - v->cx, dy = v->cy - (y + v->oy);
    pc_proj_col(v->proj, v->f, dx, col);
    pc_proj_row(v->proj, v->f, dy, row);
}

PC_RENDER_HD void pc_render_ray(const pc_view_model *v, const float *col, const float *row, float ray[3])
{
    float q[3];
    pc_proj_combine(v->proj, v->f, col, row, q);
    if (!v->rotated) {
        ray[0] = q[0], ray[1] = q[1], ray[2] = q[2];
        return;
    }
    for (int i = 0; i < 3; i++)
        ray[i] = v->R[3 * i] * q[0] + v->R[3 * i + 1] * q[1] + v->R[3 * i + 2] * q[2];
}

/* Distance in source pixels from (sx, sy), a position camera c sees
 * (pc_cam_project returned 1), to the border of its valid area: the
 * rectangle [x0, x1] x [y0, y1], and for a circular fisheye the disc of
 * centre (ccx, ccy), squared radius cr2 in it. >= 0 inside; the host's
 * tile masks also use it outside (negative there). */
/* min of two floats without NaN handling: one instruction everywhere
 * (fminf is a libm call on the host without -ffinite-math-only) */
PC_RENDER_HD float pc_render_min(float a, float b) { return a < b ? a : b; }

PC_RENDER_HD float pc_render_border(const pc_cam_model *c, float sx, float sy)
{
    float d = pc_render_min(pc_render_min(sx - c->x0, c->x1 - sx), pc_render_min(sy - c->y0, c->y1 - sy));
    if (c->circle) {
        const float ex = sx - c->ccx, ey = sy - c->ccy;
        d = pc_render_min(d, sqrtf(c->cr2) - sqrtf(ex * ex + ey * ey));
    }
    return d;
}

/* The feather weight: a ramp over `feather` source pixels from the border. */
PC_RENDER_HD float pc_render_feather(float d, float inv_feather)
{
    const float w = d * inv_feather;
    return w < 1.0f ? w : 1.0f;
}

PC_RENDER_HD float pc_render_clamp01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

/* blend = seam: the factor of a camera whose seams in this row are at
 * output x = left and right (a ramp of 1 / inv_sw pixels across each). */
PC_RENDER_HD float pc_render_seam_factor(float x, float left, float right, float inv_sw)
{
    return pc_render_clamp01((x - left) * inv_sw + 0.5f) * pc_render_clamp01((right - x) * inv_sw + 0.5f);
}

/* Exact bilinear sample (the reference's) of a camera picture: cam0 its
 * first row, pitch, bpp 3 (RGB24) or 4 (RGBX32), w x h, at (sx, sy) in
 * [0, w-1] x [0, h-1]; v[0..2] in 0..255. The right/bottom neighbour is
 * clamped to the picture (its weight is 0 there). */
PC_RENDER_HD void pc_render_bilinear(const uint8_t *cam0, size_t pitch, int bpp, int w, int h, float sx, float sy,
                                     float v[3])
{
    const int i = (int)sx, j = (int)sy;
    const float a = sx - (float)i, b = sy - (float)j;
    const int di = i + 1 < w ? bpp : 0;
    const size_t dj = j + 1 < h ? pitch : 0;
    const uint8_t *p = cam0 + (size_t)j * pitch + (size_t)i * bpp;
    for (int k = 0; k < 3; k++) {
        const float p00 = p[k], p10 = p[di + k], p01 = p[dj + k], p11 = p[dj + di + k];
        const float t = p00 + a * (p10 - p00), u = p01 + a * (p11 - p01);
        v[k] = t + b * (u - t);
    }
}

/* The GPU's bilinear sample: the texture unit's rule (CUDA programming
 * guide, linear filtering: weights in 9-bit fixed point with 8 fractional
 * bits, taken here as rounded to nearest), written out for the kernels that
 * sample without a texture (RGB24 sources) so that every GPU path samples
 * alike. Same arguments as pc_render_bilinear. */
PC_RENDER_HD void pc_render_bilinear_q8(const uint8_t *cam0, size_t pitch, int bpp, int w, int h, float sx, float sy,
                                        float v[3])
{
    const int i = (int)sx, j = (int)sy;
    const float a = rintf((sx - (float)i) * 256.0f) * (1.0f / 256.0f);
    const float b = rintf((sy - (float)j) * 256.0f) * (1.0f / 256.0f);
    const int di = i + 1 < w ? bpp : 0;
    const size_t dj = j + 1 < h ? pitch : 0;
    const uint8_t *p = cam0 + (size_t)j * pitch + (size_t)i * bpp;
    for (int k = 0; k < 3; k++) {
        const float p00 = p[k], p10 = p[di + k], p01 = p[dj + k], p11 = p[dj + di + k];
        v[k] = (1.0f - a) * (1.0f - b) * p00 + a * (1.0f - b) * p10 + (1.0f - a) * b * p01 + a * b * p11;
    }
}

/* Keys' cubic convolution weights of the pixels i-1, i, i+1, i+2 for a
 * position i + t (0 <= t < 1), a = -0.75: libpano13's poly3, nona's
 * default interpolator (a = -0.5 measured 0.1-0.2 dB further from the
 * scene on the example rig's views). The outer two are <= 0; the four
 * sum to 1 up to rounding. */
#define PC_RENDER_CUBIC_A (-0.75f)
PC_RENDER_HD void pc_render_cubic_weights(float t, float w[4])
{
    const float A = PC_RENDER_CUBIC_A, s = 1.0f - t;
    w[0] = A * t * s * s;
    w[1] = ((A + 2.0f) * t - (A + 3.0f)) * t * t + 1.0f;
    w[2] = ((A + 2.0f) * s - (A + 3.0f)) * s * s + 1.0f;
    w[3] = A * t * t * s;
}

PC_RENDER_HD int pc_render_clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* Bicubic sample (sampler = bicubic): the 4x4 pixels around (sx, sy)
 * without the four corners, each weighted by Keys' weights of its column
 * times those of its row, divided by the sum of those 12 weights;
 * neighbours outside the picture clamped to its edge, the value clamped to
 * 0..255 (the negative lobes overshoot at sharp edges). Same arguments as
 * pc_render_bilinear.
 * Why without the corners: their weights are products of two outer
 * (negative) weights, at most 0.0123 together, and on the GPU they cost 4
 * of 9 texture fetches (cuda_render.cuh, pc_rcubic_tex: 5 fetches, the
 * texture unit's throughput bounds the kernel; a 1080p view took 39.8 us
 * with 9 on an H200). On the example rig's views the scene PSNR is the
 * same to 0.04 dB with or without them (panocap-eval), and against nona's
 * full 16-tap cubic 54.2-54.9 dB instead of 55.4-55.7. */
PC_RENDER_HD void pc_render_bicubic(const uint8_t *cam0, size_t pitch, int bpp, int w, int h, float sx, float sy,
                                    float v[3])
{
    const int i = (int)sx, j = (int)sy;
    float wx[4], wy[4];
    pc_render_cubic_weights(sx - (float)i, wx);
    pc_render_cubic_weights(sy - (float)j, wy);
    int xo[4];
    for (int a = 0; a < 4; a++)
        xo[a] = pc_render_clampi(i - 1 + a, 0, w - 1) * bpp;
    float s[3] = {0.0f, 0.0f, 0.0f}, ws = 0.0f;
    for (int b = 0; b < 4; b++) {
        const uint8_t *row = cam0 + (size_t)pc_render_clampi(j - 1 + b, 0, h - 1) * pitch;
        const int outer_row = b == 0 || b == 3;
        for (int a = outer_row; a < 4 - outer_row; a++) {
            const float wab = wx[a] * wy[b];
            ws += wab;
            for (int k = 0; k < 3; k++)
                s[k] += wab * row[xo[a] + k];
        }
    }
    for (int k = 0; k < 3; k++) {
        const float u = s[k] / ws;
        v[k] = u < 0.0f ? 0.0f : (u > 255.0f ? 255.0f : u);
    }
}

/* The plan's sampler (pc_render_plan.sampler) at (sx, sy). */
PC_RENDER_HD void pc_render_sample_at(int sampler, const uint8_t *cam0, size_t pitch, int bpp, int w, int h, float sx,
                                      float sy, float v[3])
{
    if (sampler)
        pc_render_bicubic(cam0, pitch, bpp, w, h, sx, sy, v);
    else
        pc_render_bilinear(cam0, pitch, bpp, w, h, sx, sy, v);
}

/* 1 / the vignetting factor at (sx, sy) (1 for a camera without); a
 * factor under 1/1000 (a nonsense polynomial far out) counts as 1/1000. */
PC_RENDER_HD float pc_render_inv_vig(const pc_vig_model *v, float sx, float sy)
{
    if (!v->on)
        return 1.0f;
    const float f = pc_vig_factor(v, sx, sy);
    return 1.0f / (f > 1e-3f ? f : 1e-3f);
}

/* Photometry of one sample: L = f_c^-1(V / 255) * gain / vig, inv the
 * PC_RIG_RESPONSE_KNOTS knots of f_c^-1 over [0, 1], linearly interpolated
 * (pc_photo_correct's inner step; V is a bilinear mix of 8-bit values, so
 * 0 <= V <= 255 up to rounding: no clamping, one multiply to the knot
 * scale). gv = gain over the vignetting factor (pc_render_inv_vig). */
PC_RENDER_HD float pc_render_linear(const float *inv, float v, float gv)
{
    const float p = v * ((PC_RIG_RESPONSE_KNOTS - 1) / 255.0f);
    int i = (int)p;
    i = i < PC_RIG_RESPONSE_KNOTS - 2 ? i : PC_RIG_RESPONSE_KNOTS - 2;
    const float t = p - (float)i, a = inv[i];
    return (a + t * (inv[i + 1] - a)) * gv;
}

/* A value in 0..255 rounded to 8 bits. */
PC_RENDER_HD int pc_render_to8(float v)
{
    v += 0.5f;
    return v <= 0.0f ? 0 : (v >= 255.0f ? 255 : (int)v);
}

/* The pixel from its sums: acc[k] = sum w_c L_c,k, wsum = sum w_c, wmin =
 * 1 / feather (the coverage edge's fade). photo: L is linear and goes
 * through the output response out_resp (PC_RIG_RESPONSE_KNOTS knots);
 * else L is already 0..255. rgb: 8-bit; black where nothing is seen. */
PC_RENDER_HD void pc_render_finish(const float acc[3], float wsum, float wmin, int photo, const float *out_resp,
                                   int nknots, int rgb[3])
{
    if (!(wsum > 0.0f)) {
        rgb[0] = rgb[1] = rgb[2] = 0;
        return;
    }
    const float s = 1.0f / (wsum > wmin ? wsum : wmin);
    for (int k = 0; k < 3; k++) {
        const float l = acc[k] * s;
        rgb[k] = pc_render_to8(photo ? pc_lut_interp(out_resp, nknots, l) * 255.0f : l);
    }
}

#endif
