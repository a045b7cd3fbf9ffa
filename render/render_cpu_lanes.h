/* render_cpu_lanes.h - the CPU renderer's inner loops (render_cpu.c says
 * what they do and why they are fast), private to render_cpu*.c. The
 * first part, the frame, is common; the rest is a build of the loops,
 * made once per file that defines PC_RENDER_LANES (the name of the worker
 * it exports) and PC_RENDER_VL (lanes: 4, 8 or 16) before including
 * this: render_cpu.c for any target with 4 (x86-64's baseline SSE2, NEON:
 * one register), render_cpu_avx2.c with 8 and render_cpu_avx512.c with 16
 * under their `#pragma GCC target`. Where the target has them, a few
 * steps use its instructions (min, blend, square root, test); elsewhere
 * the same lane-by-lane operation in plain C. Every build computes the
 * reference's operations in its order, so every build gives its bytes.
 */
#ifndef PANOCAP_RENDER_CPU_LANES_H
#define PANOCAP_RENDER_CPU_LANES_H

#include "render_host.h"

/* One frame's job, the same for every build: render_cpu.c fills it, each
 * thread runs a build's worker on it. */
typedef struct pc_render_frame {
    const pc_render_plan *p;
    const uint8_t *data; /* camera 0's first row */
    int pitch, bpp;      /* the cameras' row pitch, 3 (RGB24) or 4 (RGBX32) */
    const pc_picture *dst;
    pc_yuv_coeffs yc;
    int next_row; /* the next tile row to render (atomic) */
} pc_render_frame;

typedef void (*pc_render_lanes_fn)(pc_render_frame *f);

#endif

#ifdef PC_RENDER_LANES

#include <string.h>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

/* 32-byte vectors in always-inlined helpers: no call crosses an ABI */
#pragma GCC diagnostic ignored "-Wpsabi"

#define INL static inline __attribute__((always_inline))

#ifndef PC_RENDER_VL
#define PC_RENDER_VL 8
#endif
#define VL PC_RENDER_VL /* lanes: pixels x .. x+VL-1 of one row; 4, 8 or 16 */
#if VL != 4 && VL != 8 && VL != 16
#error "PC_RENDER_VL is 4, 8 or 16"
#endif
typedef float vf __attribute__((vector_size(4 * VL)));
typedef int32_t vi __attribute__((vector_size(4 * VL)));
typedef uint32_t vu __attribute__((vector_size(4 * VL)));
typedef int32_t vh __attribute__((vector_size(2 * VL))); /* half as many lanes: the 2x2 blocks */
typedef uint8_t vu8 __attribute__((vector_size(VL)));

/* One tile (TH rows of TW pixels) is NL lanes: lane L = TW j + i is pixel
 * (x0 + i, y0 + j); a chunk is VL lanes of one row. */
#define TW PC_RENDER_TILE_W
#define TH PC_RENDER_TILE_H
#define NL (TH * TW)
#define NQ (NL / VL)

/* A tile's sums (acc[k][L] = sum w L_k, wsum[L] = sum w) and
 * the per-lane values that pass from one phase of a camera's work to the
 * next (add_camera). */
typedef struct tile_work {
    float acc[3][NL], wsum[NL];
    float w[NL], fa[NL], fb[NL], iv[NL]; /* weight (0: adds nothing), bilinear fractions, 1 / vignetting */
    int32_t off[NL], dj[NL], di[NL];     /* where the sample's 8-byte loads read, the lower row's step, the
                                          * right neighbour's (-1: there is one, 0: the right edge) */
    uint64_t px[2][NL];                  /* each row's two neighbours, RGBX: p00 | p10 << 32, p01 | p11 << 32 */
    float t[3][NL];                      /* table lookups: fraction, knot index, knots i and i+1 */
    int32_t idx[3][NL];
    uint64_t kab[3][NL];
} tile_work;

/* The view and the cameras as the lanes use them: every parameter
 * broadcast once per thread and frame, so that an operation reads it as a
 * memory operand instead of a broadcast instruction each time. */
typedef struct view_vec {
    vf R[9], f, inv_feather, inv_seam;
    int proj, rotated, w, h;
    int general; /* not the plain panorama (cylindrical, not rotated) */
} view_vec;

typedef struct cam_vec {
    vf R[9], f, rn_inv, rmax, a, b, c, d, sx_d, sy_e, g_h, t_w, cx, cy;
    vf x0, x1, y0, y1, ccx, ccy, cr2, sqrt_cr2;
    vf va, vb, vc, vd, vcx, vcy, vq;
    vf gain[3];
    int fisheye, pano, circle, vig;
    const float *inv;    /* f_c^-1's knots */
    const uint8_t *data; /* the camera's first row */
} cam_vec;

/* What a thread renders from: the frame and its own broadcasts. */
typedef struct frame {
    view_vec view;
    cam_vec cam[PC_RENDER_MAX_CAMERAS];
    const float *col, *row, *seam, *out_resp; /* the plan's */
    const uint16_t *tmask;
    int ntx, nty;
    int cam_w, cam_h, pitch;
    const pc_picture *dst;
    pc_yuv_coeffs yc;
} frame;

INL vf splat(float v) { return (vf){0} + v; }
INL vi splati(int v) { return (vi){0} + v; }
INL vf tof(vi v) { return __builtin_convertvector(v, vf); }
INL vi toi(vf v) { return __builtin_convertvector(v, vi); } /* truncation, as (int) */
INL vf ld(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}
INL vi ldi(const int32_t *p)
{
    vi v;
    memcpy(&v, p, sizeof v);
    return v;
}
INL void st(float *p, vf v) { memcpy(p, &v, sizeof v); }
INL void sti(int32_t *p, vi v) { memcpy(p, &v, sizeof v); }

#if defined(__AVX512F__) && VL == 16
/* c ? a : b lane by lane, c all ones or zero (C has no vector ?:): one
 * vpternlogd here */
INL vf fsel(vi c, vf a, vf b) { return (vf)((c & (vi)a) | (~c & (vi)b)); }
/* pc_render_min: minps is a < b ? a : b, the same compare */
INL vf vmin(vf a, vf b) { return (vf)_mm512_min_ps((__m512)a, (__m512)b); }
INL vf vsqrt(vf a) { return (vf)_mm512_sqrt_ps((__m512)a); } /* correctly rounded, as sqrtf */
INL int any(vi m) { return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) != 0; }
#elif defined(__AVX2__) && VL == 8
INL vf fsel(vi c, vf a, vf b) { return (vf)_mm256_blendv_ps((__m256)b, (__m256)a, (__m256)c); }
INL vf vmin(vf a, vf b) { return (vf)_mm256_min_ps((__m256)a, (__m256)b); }
INL vf vsqrt(vf a) { return (vf)_mm256_sqrt_ps((__m256)a); }
INL int any(vi m) { return !_mm256_testz_si256((__m256i)m, (__m256i)m); }
#elif defined(__SSE2__) && VL == 4
INL vf fsel(vi c, vf a, vf b) { return (vf)((c & (vi)a) | (~c & (vi)b)); }
INL vf vmin(vf a, vf b) { return (vf)_mm_min_ps((__m128)a, (__m128)b); }
INL vf vsqrt(vf a) { return (vf)_mm_sqrt_ps((__m128)a); }
INL int any(vi m) { return _mm_movemask_ps((__m128)m) != 0; }
#else
INL vf fsel(vi c, vf a, vf b) { return (vf)((c & (vi)a) | (~c & (vi)b)); }
INL vf vmin(vf a, vf b) { return fsel(a < b, a, b); }
INL vf vsqrt(vf a)
{
    for (int l = 0; l < VL; l++)
        a[l] = sqrtf(a[l]);
    return a;
}
INL int any(vi m)
{
    uint32_t t[VL], o = 0;
    memcpy(t, &m, sizeof t);
    for (int i = 0; i < VL; i++)
        o |= t[i];
    return o != 0;
}
#endif
INL vi lane_index(void)
{
    vi v;
    for (int l = 0; l < VL; l++)
        v[l] = l;
    return v;
}
INL vi isel(vi c, vi a, vi b) { return (vi)fsel(c, (vf)a, (vf)b); }
/* pc_render_clamp01: the same compares, so the same lanes */
INL vf vclamp01(vf v) { return fsel(v < 0.0f, splat(0.0f), fsel(v > 1.0f, splat(1.0f), v)); }

/* The phases that fill 64-bit pairs per lane (fetch, lookup3) store lane
 * l = 4 j + k of a chunk at position perm(l), so that halves() below
 * unpacks them with one shufps per half (which takes elements 0 and 2 of
 * each 128-bit block of two registers), in lane order. */
INL int perm(int l)
{
    const int j = l >> 2, k = l & 3;
    return k < 2 ? 2 * j + k : VL / 2 + 2 * j + k - 2;
}

/* Lanes L .. L+VL-1 of 64-bit pairs (stored in perm order): the low and
 * the high 32-bit halves, in lane order. */
INL void halves(const uint64_t *pr, vu *lo, vu *hi)
{
    vu a, b;
    memcpy(&a, pr, sizeof a);
    memcpy(&b, pr + VL / 2, sizeof b);
#if VL == 4
    *lo = __builtin_shufflevector(a, b, 0, 2, 4, 6);
    *hi = __builtin_shufflevector(a, b, 1, 3, 5, 7);
#elif VL == 8
    *lo = __builtin_shufflevector(a, b, 0, 2, 8, 10, 4, 6, 12, 14);
    *hi = __builtin_shufflevector(a, b, 1, 3, 9, 11, 5, 7, 13, 15);
#else
    *lo = __builtin_shufflevector(a, b, 0, 2, 16, 18, 4, 6, 20, 22, 8, 10, 24, 26, 12, 14, 28, 30);
    *hi = __builtin_shufflevector(a, b, 1, 3, 17, 19, 5, 7, 21, 23, 9, 11, 25, 27, 13, 15, 29, 31);
#endif
}

/* The low bytes of v's lanes (each 0..255): one byte shuffle (AVX-512:
 * vpmovdb), where __builtin_convertvector's narrowing on AVX2 extracts
 * lane by lane. */
INL vu8 bytes(vi v)
{
#if VL == 4
    typedef uint8_t vb __attribute__((vector_size(4 * VL)));
    const vb b = (vb)v;
    return __builtin_shufflevector(b, b, 0, 4, 8, 12);
#elif VL == 8
    typedef uint8_t vb __attribute__((vector_size(4 * VL)));
    const vb b = (vb)v;
    return __builtin_shufflevector(b, b, 0, 4, 8, 12, 16, 20, 24, 28);
#else
    return __builtin_convertvector(v, vu8);
#endif
}

/* Column terms of pixels x .. x+VL-1 (plan.col pairs), zero past the row. */
INL void load_cols(const float *col, int x, int w, vf *c0, vf *c1)
{
    vf lo, hi;
    if (x + VL <= w) {
        lo = ld(col + 2 * x);
        hi = ld(col + 2 * x + VL);
    } else {
        float t[2 * VL] = {0};
        memcpy(t, col + 2 * x, sizeof(float) * 2 * (size_t)(w - x));
        lo = ld(t);
        hi = ld(t + VL);
    }
#if VL == 4
    *c0 = __builtin_shufflevector(lo, hi, 0, 2, 4, 6);
    *c1 = __builtin_shufflevector(lo, hi, 1, 3, 5, 7);
#elif VL == 8
    *c0 = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
    *c1 = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
#else
    *c0 = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    *c1 = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
#endif
}

/* Pairs of neighbouring lanes summed (the 2x2 blocks' columns), and two
 * such vectors interleaved (NV12's Cb Cr) or one split in its even and odd
 * lanes' halves (I420's planes). */
INL vh pair_sums(vi t)
{
#if VL == 4
    return __builtin_shufflevector(t, t, 0, 2) + __builtin_shufflevector(t, t, 1, 3);
#elif VL == 8
    return __builtin_shufflevector(t, t, 0, 2, 4, 6) + __builtin_shufflevector(t, t, 1, 3, 5, 7);
#else
    return __builtin_shufflevector(t, t, 0, 2, 4, 6, 8, 10, 12, 14) +
           __builtin_shufflevector(t, t, 1, 3, 5, 7, 9, 11, 13, 15);
#endif
}
INL vi interleave(vh a, vh b)
{
#if VL == 4
    return __builtin_shufflevector(a, b, 0, 2, 1, 3);
#elif VL == 8
    return __builtin_shufflevector(a, b, 0, 4, 1, 5, 2, 6, 3, 7);
#else
    return __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
#endif
}
INL vi deinterleave(vi v)
{
#if VL == 4
    return __builtin_shufflevector(v, v, 0, 2, 1, 3);
#elif VL == 8
    return __builtin_shufflevector(v, v, 0, 2, 4, 6, 1, 3, 5, 7);
#else
    return __builtin_shufflevector(v, v, 0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
#endif
}

/* Phase 1 of camera cv on lanes L .. L+VL-1 (pixels x .. of row y; k0
 * the row's constant products, see add_camera): pc_cam_project of the
 * view's ray (pc_render_ray), the weight (pc_render_border,
 * pc_render_feather, the seam factor), where the bilinear sample reads and
 * with which fractions, 1 / vignetting. The weight is 0 where the camera
 * adds nothing (outside it, or weight not above 0: pc_render_add's test);
 * such lanes sample pixel (0, 0). Returns whether any lane adds. */
INL int project_lanes(const frame *f, const cam_vec *cv, int c, int x, int y, const vf k0[3], tile_work *tw, int L,
                 const int bpp, const int photo)
{
    const view_vec *vw = &f->view;
    const vi lane = lane_index();
    vf c0, c1;
    load_cols(f->col, x, vw->w, &c0, &c1);
    vf X, Y, Z;
    if (!vw->general) { /* the panorama: ray = (c0, row, c1), its row products in k0 */
        X = cv->R[0] * c0 + k0[0] + cv->R[2] * c1;
        Y = cv->R[3] * c0 + k0[1] + cv->R[5] * c1;
        Z = cv->R[6] * c0 + k0[2] + cv->R[8] * c1;
    } else { /* pc_render_ray in full (pc_proj_combine's lanes) */
        const float r0 = f->row[2 * y], r1 = f->row[2 * y + 1];
        vf q0 = c0, q1 = splat(r0), q2 = c1;
        switch (vw->proj) {
        case PC_PROJ_CYLINDRICAL: break;
        case PC_PROJ_EQUIRECT:
            q0 = r1 * c0;
            q2 = r1 * c1;
            break;
        case PC_PROJ_RECTILINEAR: q2 = vw->f; break;
        default: /* a projection without lanes of its own: pc_proj_combine per lane */
            for (int l = 0; l < VL; l++) {
                const float cl[2] = {c0[l], c1[l]}, rl[2] = {r0, r1};
                float q[3];
                pc_proj_combine(vw->proj, vw->f[0], cl, rl, q);
                q0[l] = q[0], q1[l] = q[1], q2[l] = q[2];
            }
            break;
        }
        vf ray0 = q0, ray1 = q1, ray2 = q2;
        if (vw->rotated) {
            ray0 = vw->R[0] * q0 + vw->R[1] * q1 + vw->R[2] * q2;
            ray1 = vw->R[3] * q0 + vw->R[4] * q1 + vw->R[5] * q2;
            ray2 = vw->R[6] * q0 + vw->R[7] * q1 + vw->R[8] * q2;
        }
        X = cv->R[0] * ray0 + cv->R[1] * ray1 + cv->R[2] * ray2;
        Y = cv->R[3] * ray0 + cv->R[4] * ray1 + cv->R[5] * ray2;
        Z = cv->R[6] * ray0 + cv->R[7] * ray1 + cv->R[8] * ray2;
    }
    vi ok = lane + x < vw->w;
    vf u, v;
    if (cv->pano) { /* a recorded panorama (pc_cam_project's): libm's atan2f, lane by lane */
        for (int l = 0; l < VL; l++) {
            const float hz = sqrtf(X[l] * X[l] + Z[l] * Z[l]);
            u[l] = cv->f[l] * atan2f(X[l], Z[l]);
            if (cv->pano == PC_CAM_PANO_CYL) {
                v[l] = hz > 0.0f ? -cv->f[l] * (Y[l] / hz) : 0.0f;
                if (!(hz > 0.0f))
                    u[l] = -1e9f; /* outside: fails the area test below */
            } else {
                v[l] = -cv->f[l] * atan2f(Y[l], hz);
            }
        }
    } else if (!cv->fisheye) {
        ok &= Z > 0.0f;
        const vf k = cv->f / Z;
        u = k * X;
        v = -k * Y;
    } else { /* atan2f has no lanes: libm's, as the reference */
        vf rxy, th;
        for (int l = 0; l < VL; l++) {
            rxy[l] = sqrtf(X[l] * X[l] + Y[l] * Y[l]);
            th[l] = atan2f(rxy[l], Z[l]);
        }
        const vi pos = rxy > 0.0f;
        const vf k = fsel(pos, cv->f * th / fsel(pos, rxy, splat(1.0f)), splat(0.0f));
        u = k * X;
        v = -k * Y;
    }
    const vf r = vsqrt(u * u + v * v) * cv->rn_inv;
    ok &= r < cv->rmax; /* past the fold: no source (a NaN fails here too) */
    const vf sc = ((cv->a * r + cv->b) * r + cv->c) * r + cv->d;
    u = u * sc + cv->sx_d;
    v = v * sc + cv->sy_e;
    const vf sx = cv->cx + u + cv->g_h * v;
    const vf sy = cv->cy + v + cv->t_w * u;
    ok &= (sx >= cv->x0) & (sx <= cv->x1) & (sy >= cv->y0) & (sy <= cv->y1);
    vf d = vmin(vmin(sx - cv->x0, cv->x1 - sx), vmin(sy - cv->y0, cv->y1 - sy));
    if (cv->circle) {
        const vf ex = sx - cv->ccx, ey = sy - cv->ccy, e2 = ex * ex + ey * ey;
        ok &= e2 < cv->cr2;
        d = vmin(d, cv->sqrt_cr2 - vsqrt(e2));
    }
    vf w = d * vw->inv_feather;
    w = fsel(w < 1.0f, w, splat(1.0f));
    if (f->seam) {
        const float left = f->seam[(size_t)(2 * c) * vw->h + y], right = f->seam[(size_t)(2 * c + 1) * vw->h + y];
        const vf xf = tof(lane + x);
        w *= vclamp01((xf - left) * vw->inv_seam + 0.5f) * vclamp01((right - xf) * vw->inv_seam + 0.5f);
    }
    ok &= w > 0.0f;
    st(tw->w + L, (vf)(ok & (vi)w));
    /* pc_render_bilinear's position; lanes that add nothing read pixel (0, 0) */
    const vf fx = (vf)(ok & (vi)sx), fy = (vf)(ok & (vi)sy);
    const vi i = toi(fx), j = toi(fy);
    st(tw->fa + L, fx - tof(i));
    st(tw->fb + L, fy - tof(j));
    const vi di = i + 1 < f->cam_w;
    /* RGBX32: at the right edge the 8-byte load starts a pixel to the left */
    sti(tw->off + L, j * f->pitch + i * bpp - (bpp == 4 ? ~di & 4 : splati(0)));
    sti(tw->di + L, di);
    sti(tw->dj + L, (j + 1 < f->cam_h) & f->pitch);
    /* pc_render_inv_vig */
    if (photo && cv->vig) {
        const vf dx = sx - cv->vcx, dy = sy - cv->vcy;
        const vf qq = (dx * dx + dy * dy) * cv->vq;
        const vf fv = ((cv->vd * qq + cv->vc) * qq + cv->vb) * qq + cv->va;
        st(tw->iv + L, 1.0f / fsel(fv > 1e-3f, fv, splat(1e-3f)));
    }
    return any(ok);
}

/* Phase 2: the four neighbours of chunk L0's samples, each row's pair
 * RGBX packed in 64 bits (in perm order). RGBX32: one 8-byte load per row,
 * from where phase 1 said (a pixel further left at the right edge, so
 * nothing past the row is read; phase 3 picks the pixels out). RGB24:
 * bytes, the right neighbour already resolved (p10 = p00 at the right
 * edge, in both halves). Nothing but loads and stores: every lane's loads
 * are independent, so many are in flight at once. */
INL void fetch(const uint8_t *cam0, const int bpp, tile_work *tw, int L0)
{
#pragma GCC unroll 16
    for (int l = 0; l < VL; l++) {
        const int L = L0 + l, P = L0 + perm(l);
        const uint8_t *p = cam0 + tw->off[L];
        if (bpp == 4) {
            memcpy(&tw->px[0][P], p, 8);
            memcpy(&tw->px[1][P], p + tw->dj[L], 8);
            continue;
        }
        for (int r = 0; r < 2; r++) {
            const uint8_t *q = p + (r ? tw->dj[L] : 0), *e = q + (tw->di[L] ? 3 : 0);
            const uint64_t a = q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16;
            const uint64_t b = e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16;
            tw->px[r][P] = a | b << 32;
        }
    }
}

/* Knots idx and idx + 1 of table tab[k] for chunk L0's lanes, k = 0..2,
 * as one 8-byte load each (in perm order). */
INL void lookup3(const float *const tab[3], tile_work *tw, int L0)
{
#pragma GCC unroll 16
    for (int l = 0; l < VL; l++)
        for (int k = 0; k < 3; k++)
            memcpy(&tw->kab[k][L0 + perm(l)], tab[k] + tw->idx[k][L0 + l], 8);
}

/* Phase 3 on lanes L .. L+VL-1: pc_render_bilinear's value; with photometry
 * the knot index and fraction of pc_render_linear (finished in phase 4),
 * else the sums. */
INL void sample_lanes(tile_work *tw, int L, const int photo)
{
    const vf fa = ld(tw->fa + L), fb = ld(tw->fb + L);
    const vi di = ldi(tw->di + L);
    vu px0, px1, px2, px3; /* p00 p10 p01 p11: p00 = p10 at the right edge (the high half) */
    halves(tw->px[0] + L, &px0, &px1);
    halves(tw->px[1] + L, &px2, &px3);
    px0 = (vu)isel(di, (vi)px0, (vi)px1);
    px2 = (vu)isel(di, (vi)px2, (vi)px3);
    vf V[3];
    for (int k = 0; k < 3; k++) {
        const vf p00 = tof((vi)(px0 >> (8 * k) & 255)), p10 = tof((vi)(px1 >> (8 * k) & 255));
        const vf p01 = tof((vi)(px2 >> (8 * k) & 255)), p11 = tof((vi)(px3 >> (8 * k) & 255));
        const vf t = p00 + fa * (p10 - p00), u = p01 + fa * (p11 - p01);
        V[k] = t + fb * (u - t);
    }
    if (photo) {
        for (int k = 0; k < 3; k++) {
            const vf pp = V[k] * ((PC_RIG_RESPONSE_KNOTS - 1) / 255.0f);
            vi ii = toi(pp);
            ii = isel(ii < PC_RIG_RESPONSE_KNOTS - 2, ii, splati(PC_RIG_RESPONSE_KNOTS - 2));
            st(tw->t[k] + L, pp - tof(ii));
            sti(tw->idx[k] + L, ii);
        }
        return;
    }
    const vf w = ld(tw->w + L);
    const vi ok = w > 0.0f;
    for (int k = 0; k < 3; k++)
        st(tw->acc[k] + L, fsel(ok, ld(tw->acc[k] + L) + w * V[k], ld(tw->acc[k] + L)));
    st(tw->wsum + L, fsel(ok, ld(tw->wsum + L) + w, ld(tw->wsum + L)));
}

/* Phase 4 with photometry on lanes L .. L+VL-1: L_k = f_c^-1 (interpolated)
 * x gain_k / vig (pc_render_linear), then the sums. */
INL void linear_lanes(const cam_vec *cv, tile_work *tw, int L)
{
    const vf w = ld(tw->w + L);
    const vi ok = w > 0.0f;
    const vf iv = cv->vig ? ld(tw->iv + L) : splat(1.0f);
    for (int k = 0; k < 3; k++) {
        vu a, b;
        halves(tw->kab[k] + L, &a, &b);
        const vf gv = cv->gain[k] * iv;
        const vf v = ((vf)a + ld(tw->t[k] + L) * ((vf)b - (vf)a)) * gv;
        st(tw->acc[k] + L, fsel(ok, ld(tw->acc[k] + L) + w * v, ld(tw->acc[k] + L)));
    }
    st(tw->wsum + L, fsel(ok, ld(tw->wsum + L) + w, ld(tw->wsum + L)));
}

/* Camera c's whole contribution to a tile row pair (n columns from x0):
 * its chunks through the four phases in turn. Each phase is a loop over
 * independent chunks, so the out-of-order core overlaps them; one chunk
 * from start to end is a chain of about 100 dependent operations
 * (division, square root, then loads, twice) that a loop over whole
 * chunks would wait on. */
INL void add_camera(const frame *f, const cam_vec *cv, int c, int x0, int y, int n, int rows, tile_work *tw,
                    const int bpp, const int photo)
{
    int live[NQ], nlive = 0;
    const int qrow = (n + VL - 1) / VL; /* chunks per row */
    for (int j = 0; j < rows; j++) {
        /* the panorama's ray is (col0, row, col1): the row term's products
         * are the same floats for the whole row */
        vf k0[3];
        const vf r0 = splat(f->row[2 * (y + j)]);
        for (int e = 0; e < 3; e++)
            k0[e] = cv->R[3 * e + 1] * r0;
        for (int q = 0; q < qrow; q++)
            if (project_lanes(f, cv, c, x0 + q * VL, y + j, k0, tw, j * TW + q * VL, bpp, photo))
                live[nlive++] = j * TW + q * VL;
    }
    for (int e = 0; e < nlive; e++)
        fetch(cv->data, bpp, tw, live[e]);
    for (int e = 0; e < nlive; e++)
        sample_lanes(tw, live[e], photo);
    if (!photo)
        return;
    const float *const inv[3] = {cv->inv, cv->inv, cv->inv};
    for (int e = 0; e < nlive; e++)
        lookup3(inv, tw, live[e]);
    for (int e = 0; e < nlive; e++)
        linear_lanes(cv, tw, live[e]);
}

/* pc_render_finish, first half, lanes L .. L+VL-1: the normalised value;
 * with photometry the output response's knot index and fraction, its
 * lookups done next. */
INL void normalise_lanes(const frame *f, tile_work *tw, int L, const int photo)
{
    const vf wsum = ld(tw->wsum + L), wmin = f->view.inv_feather;
    const vf sc = 1.0f / fsel(wsum > wmin, wsum, wmin);
    for (int k = 0; k < 3; k++) {
        const vf l = ld(tw->acc[k] + L) * sc;
        if (!photo) {
            st(tw->t[k] + L, l);
            continue;
        }
        const vf pp = vclamp01(l) * (float)(PC_RIG_RESPONSE_KNOTS - 1); /* pc_lut_interp */
        vi ii = toi(pp);
        ii = isel(ii >= PC_RIG_RESPONSE_KNOTS - 1, splati(PC_RIG_RESPONSE_KNOTS - 2), ii);
        st(tw->t[k] + L, pp - tof(ii));
        sti(tw->idx[k] + L, ii);
    }
}

/* pc_render_finish, second half: 8-bit RGB of lanes L .. L+VL-1. */
INL void rgb_lanes(const tile_work *tw, int L, vi rgb[3], const int photo)
{
    const vi seen = ld(tw->wsum + L) > 0.0f;
    for (int k = 0; k < 3; k++) {
        vf l = ld(tw->t[k] + L);
        if (photo) {
            vu a, b;
            halves(tw->kab[k] + L, &a, &b);
            l = ((vf)a + l * ((vf)b - (vf)a)) * 255.0f;
        }
        const vf v = l + 0.5f; /* pc_render_to8 */
        rgb[k] = seen & toi(fsel(v <= 0.0f, splat(0.0f), fsel(v >= 255.0f, splat(255.0f), v)));
    }
}

INL vi vclamp8(vi a)
{
    a = isel(a < 0, splati(0), a);
    return isel(a > 255, splati(255), a);
}

INL void store_bytes(uint8_t *d, vi v, int n)
{
    const vu8 b = bytes(v);
    if (n == VL)
        memcpy(d, &b, VL);
    else
        memcpy(d, &b, (size_t)n);
}

/* Pixels x .. x+n-1 (n even, <= VL) of rows y, y+1, RGB rgb[j], into
 * dst: spec §8's integer formulas (reference.c's store_block) VL pixels
 * at a time for YUV; RGB24 block by block through the reference's store. */
INL void store_lanes(const frame *f, vi rgb[2][3], int x, int y, int n)
{
    const pc_picture *dst = f->dst;
    if (dst->fmt != PC_FMT_NV12 && dst->fmt != PC_FMT_I420) {
        for (int b = 0; b < n; b += 2) {
            int v[2][2][3];
            for (int j = 0; j < 2; j++)
                for (int e = 0; e < 2; e++)
                    for (int k = 0; k < 3; k++)
                        v[j][e][k] = rgb[j][k][b + e];
            pc_ref_store_block(dst, &f->yc, x + b, y, v);
        }
        return;
    }
    const pc_yuv_coeffs *yc = &f->yc;
    for (int j = 0; j < 2; j++) {
        const vi Y = (yc->y[0] * rgb[j][0] + yc->y[1] * rgb[j][1] + yc->y[2] * rgb[j][2] + yc->y_offset) >> 16;
        store_bytes(dst->plane[0] + (size_t)(y + j) * dst->pitch[0] + x, vclamp8(Y), n);
    }
    vh sum[3];
    for (int k = 0; k < 3; k++)
        sum[k] = pair_sums(rgb[0][k] + rgb[1][k]);
    const int coff = (128 << 18) + (1 << 17);
    const vh cb = (yc->cb[0] * sum[0] + yc->cb[1] * sum[1] + yc->cb[2] * sum[2] + coff) >> 18;
    const vh cr = (yc->cr[0] * sum[0] + yc->cr[1] * sum[1] + yc->cr[2] * sum[2] + coff) >> 18;
    const vi cc = vclamp8(interleave(cb, cr)); /* Cb Cr interleaved */
    uint8_t *c0 = dst->plane[1] + (size_t)(y >> 1) * dst->pitch[1];
    if (dst->fmt == PC_FMT_NV12) {
        store_bytes(c0 + x, cc, n);
    } else {
        const vu8 b = bytes(deinterleave(cc));
        memcpy(c0 + (x >> 1), &b, (size_t)n / 2);
        memcpy(dst->plane[2] + (size_t)(y >> 1) * dst->pitch[2] + (x >> 1), (const uint8_t *)&b + VL / 2,
               (size_t)n / 2);
    }
}

/* Tile row ty (output rows 8 ty .. 8 ty + 7), tile by tile: the cameras
 * of the tile's mask in ascending order add to the sums (as the
 * reference's loop over cameras does per pixel), then the pixels are
 * finished and stored, row pair by row pair. */
INL void tile_row(const frame *f, tile_work *tw, int ty, const int bpp, const int photo)
{
    const int w = f->view.w, y0 = ty * TH, rows = f->view.h - y0 < TH ? f->view.h - y0 : TH;
    const uint16_t *mrow = f->tmask + (size_t)ty * f->ntx;
    for (int tx = 0; tx < f->ntx; tx++) {
        const int x0 = tx * TW, n = w - x0 < TW ? w - x0 : TW;
        memset(tw->acc, 0, sizeof tw->acc);
        memset(tw->wsum, 0, sizeof tw->wsum);
        for (unsigned m = mrow[tx]; m; m &= m - 1)
            add_camera(f, &f->cam[__builtin_ctz(m)], __builtin_ctz(m), x0, y0, n, rows, tw, bpp, photo);
        for (int L = 0; L < rows * TW; L += VL)
            normalise_lanes(f, tw, L, photo);
        if (photo) {
            const float *const out[3] = {f->out_resp, f->out_resp, f->out_resp};
            for (int L = 0; L < rows * TW; L += VL)
                lookup3(out, tw, L);
        }
        for (int j = 0; j < rows; j += 2)
            for (int i = 0; i < n; i += VL) {
                vi rgb[2][3];
                rgb_lanes(tw, j * TW + i, rgb[0], photo);
                rgb_lanes(tw, (j + 1) * TW + i, rgb[1], photo);
                store_lanes(f, rgb, x0 + i, y0 + j, n - i < VL ? n - i : VL);
            }
    }
}

/* Every tile row the frame's counter hands out, in one instance per
 * camera format and photometry on/off: their tests leave the loops. */
INL void rows(pc_render_frame *pf, const frame *f, tile_work *tw, const int bpp, const int photo)
{
    for (;;) {
        const int ty = __atomic_fetch_add(&pf->next_row, 1, __ATOMIC_RELAXED);
        if (ty >= f->nty)
            break;
        tile_row(f, tw, ty, bpp, photo);
    }
}
#define PC_RENDER_ROWS(B, P)                                                                                      \
    __attribute__((noinline)) static void rows_##B##_##P(pc_render_frame *pf, const frame *f, tile_work *tw)      \
    {                                                                                                            \
        rows(pf, f, tw, B, P);                                                                                   \
    }
PC_RENDER_ROWS(3, 0)
PC_RENDER_ROWS(3, 1)
PC_RENDER_ROWS(4, 0)
PC_RENDER_ROWS(4, 1)
#undef PC_RENDER_ROWS

static void broadcast(vf *d, const float *s, int n)
{
    for (int i = 0; i < n; i++)
        d[i] = splat(s[i]);
}

/* The thread's broadcasts of the plan (a few KiB: cheap next to a frame). */
static void setup(frame *f, const pc_render_frame *pf)
{
    const pc_render_plan *p = pf->p;
    view_vec *vw = &f->view;
    broadcast(vw->R, p->view.R, 9);
    vw->f = splat(p->view.f);
    vw->inv_feather = splat(p->inv_feather);
    vw->inv_seam = splat(p->inv_seam);
    vw->proj = p->view.proj;
    vw->rotated = p->view.rotated;
    vw->general = p->view.rotated || p->view.proj != PC_PROJ_CYLINDRICAL;
    vw->w = p->view.w;
    vw->h = p->view.h;
    for (int c = 0; c < p->ncam; c++) {
        const pc_cam_model *g = &p->cam[c].geo;
        const pc_vig_model *v = &p->cam[c].vig;
        cam_vec *cv = &f->cam[c];
        broadcast(cv->R, g->R, 9);
        const float gs[] = {g->f,    g->rn_inv, g->rmax, g->a,  g->b,  g->c,   g->d,  g->sx_d,
                            g->sy_e, g->g_h,    g->t_w,  g->cx, g->cy, g->x0,  g->x1, g->y0,
                            g->y1,   g->ccx,    g->ccy,  g->cr2, sqrtf(g->cr2)};
        vf *gd[] = {&cv->f,    &cv->rn_inv, &cv->rmax, &cv->a,  &cv->b,  &cv->c,   &cv->d,  &cv->sx_d,
                    &cv->sy_e, &cv->g_h,    &cv->t_w,  &cv->cx, &cv->cy, &cv->x0,  &cv->x1, &cv->y0,
                    &cv->y1,   &cv->ccx,    &cv->ccy,  &cv->cr2, &cv->sqrt_cr2};
        for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++)
            *gd[i] = splat(gs[i]);
        const float vs[] = {v->va, v->vb, v->vc, v->vd, v->vcx, v->vcy, v->vq};
        vf *vd[] = {&cv->va, &cv->vb, &cv->vc, &cv->vd, &cv->vcx, &cv->vcy, &cv->vq};
        for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
            *vd[i] = splat(vs[i]);
        broadcast(cv->gain, p->cam[c].gain, 3);
        cv->fisheye = g->fisheye;
        cv->pano = g->pano;
        cv->circle = g->circle;
        cv->vig = v->on;
        cv->inv = p->inv_knots[c];
        cv->data = pf->data + (size_t)c * p->cam_h * pf->pitch;
    }
    f->col = p->col;
    f->row = p->row;
    f->seam = p->seam;
    f->out_resp = p->out_resp;
    f->tmask = p->tmask;
    f->ntx = p->ntx;
    f->nty = p->nty;
    f->cam_w = p->cam_w;
    f->cam_h = p->cam_h;
    f->pitch = pf->pitch;
    f->dst = pf->dst;
    f->yc = pf->yc;
}

/* A thread's share of the frame. */
void PC_RENDER_LANES(pc_render_frame *pf)
{
    frame f;        /* 22 KiB (8 lanes) or 44 KiB (16) with 16 cameras */
    tile_work tw;   /* 28 KiB: L1 */
    setup(&f, pf);
    const int photo = pf->p->photo != 0;
    if (pf->bpp == 4)
        (photo ? rows_4_1 : rows_4_0)(pf, &f, &tw);
    else
        (photo ? rows_3_1 : rows_3_0)(pf, &f, &tw);
}

#undef VL
#endif /* PC_RENDER_LANES */
