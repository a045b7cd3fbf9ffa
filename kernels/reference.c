/* reference.c - the plain C demosaicing reference: the definition of
 * correctness for every other implementation (CPU backend, CUDA kernels).
 *
 * It implements the seven algorithms of docs/algorithms.md
 * exactly: integer arithmetic only, reflect-101 on every read of every
 * buffer in every pass, and the fixed-point RGB -> Y'CbCr of §8 fused into
 * the final pass (RGB24, NV12, I420; RGBX32 is RGB24 with a fourth byte,
 * 255, per pixel) through the core's inline block store (picture_store.h;
 * the checks and the §8 coefficients are the core's too).
 *
 * Structure. Each algorithm is a list of pass "kinds"; each kind has ONE
 * per-pixel formula, written once in reference_formulas.h and instantiated
 * twice here:
 *  - scalar (T = int): the definition. It runs the border blocks, where
 *    every column index is mirrored (interior = 0), and the interior blocks
 *    the vector steps do not cover (interior = 1, direct indices);
 *  - vector (T = 8 lanes of int32, GCC generic vectors, AVX2 clone): the
 *    interior in steps of 8 blocks. Tests check it equals the scalar form
 *    byte for byte (pc_job.scalar_only).
 * Rows are read through a table of row pointers built per row pair with
 * the reflect-101 rule applied to the row index, so top and bottom rows
 * need no special case. The row driver works on even-aligned 2x2 blocks
 * (also the NV12 chroma blocks); interior loops are specialised per kind,
 * CFA phase and output format so that site types are constants.
 * Each pass is a function over a band of row pairs writing full-frame
 * temporaries (reference_passes.h); the CPU backend runs the bands on its
 * threads.
 */
#include "reference_passes.h"
#include "picture_store.h"

#include "algo_impl.h"

/* The vector helpers are all inlined; their by-value vector ABI never
 * crosses a call. */
#pragma GCC diagnostic ignored "-Wpsabi"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* §1.3: arithmetic right shift of negative numbers is required. */
_Static_assert((-3 >> 1) == -2, "right shift of negative int must be arithmetic");

#define PC_INLINE static inline __attribute__((always_inline))

/* ------------------------------------------------------------------------
 * §1: sites, border rule, arithmetic helpers
 * ---------------------------------------------------------------------- */

enum { S_R = 0, S_GR = 1, S_GB = 2, S_B = 3 }; /* site = a | b<<1 (§1.1) */

/* §1.2 reflect-101. One reflection suffices: radius <= 3 < n. */
PC_INLINE int mir(int i, int n) { return i < 0 ? -i : i >= n ? 2 * n - 2 - i : i; }

PC_INLINE int iabs(int v) { return v < 0 ? -v : v; }

/* ------------------------------------------------------------------------
 * Row tables: the rows y-3 .. y+4 of every buffer, reflected (§1.2).
 * ---------------------------------------------------------------------- */

#define RMAX 3
#define NROWS (2 * RMAX + 2)

typedef struct rowtab {
    const uint8_t *raw[NROWS], *g[NROWS], *ta[NROWS], *tb[NROWS], *tc[NROWS];
} rowtab;

static void rowtab_fill(const pc_job *jb, int y, rowtab *t)
{
    for (int k = 0; k < NROWS; k++) {
        size_t yy = (size_t)mir(y - RMAX + k, jb->h);
        size_t off = yy * (size_t)jb->w;
        t->raw[k] = jb->raw + yy * jb->raw_pitch;
        t->g[k] = jb->g ? jb->g + off : NULL;
        t->ta[k] = jb->ta ? jb->ta + off : NULL;
        t->tb[k] = jb->tb ? jb->tb + off : NULL;
        t->tc[k] = jb->tc ? jb->tc + off : NULL;
    }
}

/* ------------------------------------------------------------------------
 * Pass kinds
 * ---------------------------------------------------------------------- */

enum {
    K_BIL,   /* §2 bilinear (final) */
    K_SH1,   /* §3 pass 1: bilinear green -> g */
    K_SH2,   /* §3 pass 2: hue ratios (final) */
    K_HQ,    /* §4 Malvar-He-Cutler (final) */
    K_ED1,   /* §5 pass 1: directional green -> g */
    K_EDF,   /* §5 pass 2: colour differences (final; also HED p3, WD-mod p2) */
    K_HED1,  /* §6 pass 1: gh, gv, pref -> ta, tb, tc */
    K_HED2,  /* §6 pass 2: homogeneity vote -> g */
    K_WD1,   /* §7.2 pass 1: weighted-directions green -> g */
    K_WDO2,  /* §7.2 pass 2: R at B, B at R along diagonals -> ta (r), tb (b) */
    K_WDO3,  /* §7.2 pass 3: R, B at G along axes (final) */
    K_COUNT
};

/* radius: Chebyshev read radius (algorithms.md §9); nout: temporary
 * planes written by a non-final kind. */
#define KRADIUS(K) ((K) == K_WD1 || (K) == K_WDO2 || (K) == K_WDO3 ? 3 \
                    : (K) == K_HQ || (K) == K_ED1 || (K) == K_HED1 ? 2 : 1)
#define KFINAL(K) ((K) == K_BIL || (K) == K_SH2 || (K) == K_HQ || (K) == K_EDF || (K) == K_WDO3)
#define KNOUT(K) (KFINAL(K) ? 3 : (K) == K_HED1 ? 3 : (K) == K_WDO2 ? 2 : 1)

#define PXPASS t, j, x, w, site, in

/* ------------------------------------------------------------------------
 * Scalar instantiation of the formulas: the definition.
 * ---------------------------------------------------------------------- */

/* §3: truncating unsigned division */
PC_INLINE int hue_q_s(int c, int g) { return (int)(((uint32_t)(c + 1) << 12) / (uint32_t)(g + 1)); }

/* §7.1: WDI = CLAMP8(FDIV(N + M, 2M)) with Q_a = product of the other
 * three D, N = sum E_a Q_a, M = sum Q_a, all int64. */
PC_INLINE int wd_combine_s(const int E[4], const int D[4])
{
    int64_t p01 = (int64_t)D[0] * D[1], p23 = (int64_t)D[2] * D[3];
    int64_t q0 = D[1] * p23, q1 = D[0] * p23, q2 = D[3] * p01, q3 = D[2] * p01;
    int64_t n = E[0] * q0 + E[1] * q1 + E[2] * q2 + E[3] * q3;
    int64_t m = q0 + q1 + q2 + q3;
    int64_t a = n + m, b = 2 * m;
    /* FDIV: floor division (b > 0) */
    int64_t q = a / b;
    if (a % b != 0 && a < 0)
        q -= 1;
    return q < 0 ? 0 : q > 255 ? 255 : (int)q;
}

#define FN(n) n##_s
#define T int
#define PXARGS const rowtab *t, int j, int x, int w, int site, int in
/* reflect-101 on the column only in the border path (rows are reflected
 * in the row table) */
#define COL(dx) ((in) ? x + (dx) : mir(x + (dx), w))
#define RD(buf, dx, dy) ((int)t->buf[RMAX + j + (dy)][COL(dx)])
#define P(dx, dy) RD(raw, dx, dy)
#define G(dx, dy) RD(g, dx, dy)
#define TA(dx, dy) RD(ta, dx, dy)
#define TB(dx, dy) RD(tb, dx, dy)
#define PREF(dx, dy) ((int)(int8_t)t->tc[RMAX + j + (dy)][COL(dx)])
#define ABS(a) iabs(a)
#define CLAMP8(a) clamp8(a)
#define SEL(c, a, b) ((c) ? (a) : (b))
#define LT(a, b) ((a) < (b))
#define HUE_Q(c, g) hue_q_s(c, g)
#define WD_COMBINE(E, D) wd_combine_s(E, D)
#include "reference_formulas.h"
#undef FN
#undef T
#undef PXARGS
#undef RD
#undef P
#undef G
#undef TA
#undef TB
#undef PREF
#undef ABS
#undef CLAMP8
#undef SEL
#undef LT
#undef HUE_Q
#undef WD_COMBINE

/* ------------------------------------------------------------------------
 * Vector instantiation: 16 lanes = the same pixel of 16 consecutive 2x2
 * blocks (lane k is pixel x + 2k). Interior only. GCC generic vectors, so
 * it builds for any target; the interior loops get an AVX2 clone.
 * ---------------------------------------------------------------------- */

#define VL 8
typedef int32_t vi __attribute__((vector_size(4 * VL)));
typedef uint16_t vu16 __attribute__((vector_size(2 * VL)));
typedef int16_t vs16 __attribute__((vector_size(2 * VL)));
typedef uint8_t vu8 __attribute__((vector_size(VL)));
typedef float vf __attribute__((vector_size(4 * VL)));
typedef double vd __attribute__((vector_size(8 * VL)));

/* bytes p[0], p[2], ..., p[30] (reads p[0..31]) */
PC_INLINE vi vld(const uint8_t *p)
{
    vu16 u;
    memcpy(&u, p, sizeof u);
    return __builtin_convertvector(u & 0xff, vi);
}
PC_INLINE vi vlds(const uint8_t *p)
{
    vs16 u;
    memcpy(&u, p, sizeof u);
    return __builtin_convertvector((vs16)(u << 8) >> 8, vi);
}
/* p[2k] = a[k], p[2k+1] = b[k] (low bytes) */
PC_INLINE void vst_pair(uint8_t *p, vi a, vi b)
{
    vu16 u = (__builtin_convertvector(a, vu16) & 0xff) | (__builtin_convertvector(b, vu16) << 8);
    memcpy(p, &u, sizeof u);
}
PC_INLINE void vst16(uint8_t *p, vi a)
{
    vu8 u = __builtin_convertvector(a, vu8);
    memcpy(p, &u, sizeof u);
}

#define VSEL(c, a, b) (((c) & (a)) | (~(c) & (b)))
PC_INLINE vi vabs(vi a) { return VSEL(a < 0, -a, a); }
PC_INLINE vi vclamp8(vi a)
{
    a = VSEL(a < 0, 0, a);
    return VSEL(a > 255, 255, a);
}

/* §3 truncating division, exactly, in float: n = (c+1) << 12 <= 2^20 and
 * d = g+1 <= 256 are exact floats. If n/d is not an integer it is at least
 * 1/d away from one, while the rounding error of the float quotient is at
 * most half an ulp of n/d <= 2^20/d, i.e. 2^-4/d: so truncating the float
 * quotient gives floor(n/d). */
PC_INLINE vi hue_q_v(vi c, vi g)
{
    vf f = __builtin_convertvector((c + 1) << 12, vf) / __builtin_convertvector(g + 1, vf);
    return __builtin_convertvector(f, vi);
}

/* §7.1 exactly, in double. Every D < 2^11, so Q < 2^34, M < 2^35,
 * |N| < 2^45: all products and sums are exact integers in double, and so
 * are a = N + M and b = 2M < 2^36. The quotient a/b lies in (-128, 384)
 * (N/M is a weighted mean of E in [-255, 765]). If a/b is not an integer
 * it is at least 1/b > 2^-36 away from one, while the rounding error of
 * the division is at most half an ulp of 2^9, 2^-44: so the truncated
 * double quotient is floor(a/b) for a >= 0. For a < 0 it is <= 0, which
 * the clamp maps to 0, as CLAMP8(FDIV) does. */
PC_INLINE vi wd_combine_v(const vi E[4], const vi D[4])
{
    /* The same N and M, grouped so that most of the work is exact int32:
     * D0*D1, D2*D3 < 2^22, E0*D1 + E1*D0 < 2^22 in magnitude. Then
     * M = (D0+D1) D2 D3 + (D2+D3) D0 D1 and N = (E0 D1 + E1 D0) D2 D3 +
     * (E2 D3 + E3 D2) D0 D1, each product < 2^44: exact in double. */
    vi p01 = D[0] * D[1], p23 = D[2] * D[3];
    vi s01 = D[0] + D[1], s23 = D[2] + D[3];
    vi t01 = E[0] * D[1] + E[1] * D[0], t23 = E[2] * D[3] + E[3] * D[2];
    vd dp01 = __builtin_convertvector(p01, vd), dp23 = __builtin_convertvector(p23, vd);
    vd m = __builtin_convertvector(s01, vd) * dp23 + __builtin_convertvector(s23, vd) * dp01;
    vd n = __builtin_convertvector(t01, vd) * dp23 + __builtin_convertvector(t23, vd) * dp01;
    return vclamp8(__builtin_convertvector((n + m) / (m + m), vi));
}

#define FN(n) n##_v
#define T vi
#define PXARGS const rowtab *t, int j, int x, int w, int site, int in
#define RD(buf, dx, dy) vld(t->buf[RMAX + j + (dy)] + x + (dx))
#define P(dx, dy) RD(raw, dx, dy)
#define G(dx, dy) RD(g, dx, dy)
#define TA(dx, dy) RD(ta, dx, dy)
#define TB(dx, dy) RD(tb, dx, dy)
#define PREF(dx, dy) vlds(t->tc[RMAX + j + (dy)] + x + (dx))
#define ABS(a) vabs(a)
#define CLAMP8(a) vclamp8(a)
#define SEL(c, a, b) VSEL(c, a, b)
#define LT(a, b) ((a) < (b))
#define HUE_Q(c, g) hue_q_v(c, g)
#define WD_COMBINE(E, D) wd_combine_v(E, D)
#include "reference_formulas.h"
#undef FN
#undef T
#undef PXARGS
#undef RD
#undef P
#undef G
#undef TA
#undef TB
#undef PREF
#undef ABS
#undef CLAMP8
#undef SEL
#undef LT
#undef HUE_Q
#undef WD_COMBINE

/* ------------------------------------------------------------------------
 * Row-pair driver
 * ---------------------------------------------------------------------- */

/* Outputs of one row pair: temporary plane rows (o[j][n] = plane n of row
 * y+j) or destination rows. */
typedef struct outrows {
    uint8_t *o[2][3];
    dstrows d;
    pc_yuv_coeffs yc;
} outrows;

/* One 2x2 block at (x0, y), scalar. cfa, in and fmt are constants in the
 * interior instantiations and run-time values at the borders. */
PC_INLINE void block_s(int K, const rowtab *t, const outrows *o, int x0, int w, int cfa, int in, int fmt)
{
    if (KFINAL(K)) {
        int v[2][2][3];
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++)
                px_kind_s(K, t, j, x0 + i, w, (i | j << 1) ^ cfa, in, v[j][i]);
        store_block(fmt, &o->yc, &o->d, x0, (const int(*)[2][3])v);
    } else {
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                int v[3];
                px_kind_s(K, t, j, x0 + i, w, (i | j << 1) ^ cfa, in, v);
                for (int n = 0; n < KNOUT(K); n++)
                    o->o[j][n][x0 + i] = (uint8_t)v[n];
            }
    }
}

/* 16 consecutive 2x2 blocks starting at x0, vector. */
PC_INLINE void block_v(int K, const rowtab *t, const outrows *o, int x0, int w, int cfa, int fmt)
{
    vi v[2][2][3];
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++)
            px_kind_v(K, t, j, x0 + i, w, (i | j << 1) ^ cfa, 1, v[j][i]);
    if (!KFINAL(K)) {
        for (int j = 0; j < 2; j++)
            for (int n = 0; n < KNOUT(K); n++)
                vst_pair(o->o[j][n] + x0, v[j][0][n], v[j][1][n]);
        return;
    }
    if (fmt == PC_FMT_RGB24) {
        for (int j = 0; j < 2; j++) {
            uint8_t *d = o->d.d[j] + 3 * (size_t)x0;
            for (int k = 0; k < VL; k++)
                for (int i = 0; i < 2; i++)
                    for (int c = 0; c < 3; c++)
                        d[6 * k + 3 * i + c] = (uint8_t)v[j][i][c][k];
        }
        return;
    }
    if (fmt == PC_FMT_RGBX32) {
        /* a texel per pixel built in the lanes (lane k: pixel x0 + 2k + i),
         * then the two pixels of each block interleaved: one 64-byte store
         * per row instead of 48 byte stores */
        for (int j = 0; j < 2; j++) {
            vi p[2];
            for (int i = 0; i < 2; i++)
                p[i] = (v[j][i][0] & 0xff) | (v[j][i][1] & 0xff) << 8 | (v[j][i][2] & 0xff) << 16 | (int32_t)0xff000000;
            uint32_t t[2 * VL];
            for (int k = 0; k < VL; k++) {
                t[2 * k] = (uint32_t)p[0][k];
                t[2 * k + 1] = (uint32_t)p[1][k];
            }
            memcpy(o->d.d[j] + 4 * (size_t)x0, t, sizeof t);
        }
        return;
    }
    const pc_yuv_coeffs *yc = &o->yc;
    vi sr = v[0][0][0] + v[0][1][0] + v[1][0][0] + v[1][1][0];
    vi sg = v[0][0][1] + v[0][1][1] + v[1][0][1] + v[1][1][1];
    vi sb = v[0][0][2] + v[0][1][2] + v[1][0][2] + v[1][1][2];
    for (int j = 0; j < 2; j++) {
        vi y0 = (yc->y[0] * v[j][0][0] + yc->y[1] * v[j][0][1] + yc->y[2] * v[j][0][2] + yc->y_offset) >> 16;
        vi y1 = (yc->y[0] * v[j][1][0] + yc->y[1] * v[j][1][1] + yc->y[2] * v[j][1][2] + yc->y_offset) >> 16;
        vst_pair(o->d.d[j] + x0, vclamp8(y0), vclamp8(y1));
    }
    const int coff = (128 << 18) + (1 << 17);
    vi cb = vclamp8((yc->cb[0] * sr + yc->cb[1] * sg + yc->cb[2] * sb + coff) >> 18);
    vi cr = vclamp8((yc->cr[0] * sr + yc->cr[1] * sg + yc->cr[2] * sb + coff) >> 18);
    if (fmt == PC_FMT_NV12) {
        vst_pair(o->d.c0 + x0, cb, cr);
    } else {
        vst16(o->d.c0 + (x0 >> 1), cb);
        vst16(o->d.c1 + (x0 >> 1), cr);
    }
}

/* Interior of a row pair: vector steps of 2*VL pixels on [xa, xv), then
 * scalar blocks on [xv, xe). Specialised per kind and CFA phase; the
 * output format is a run-time switch once per step. */
typedef void (*interior_fn)(const rowtab *t, const outrows *o, int xa, int xv, int xe, int w, int fmt);

/* An AVX2 clone chosen at load time on x86-64 (GNU ifunc); elsewhere the
 * generic vectors map to whatever the target has. Not under
 * ThreadSanitizer: the ifunc resolver runs during relocation, before the
 * TSan runtime is set up, and its instrumented code crashes there. */
#if defined(__x86_64__) && defined(__linux__) && !defined(PC_NO_CLONES) && !defined(__SANITIZE_THREAD__)
#define PC_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PC_CLONES
#endif

#define DEF_INTERIOR(K, CFA)                                                                     \
    PC_CLONES static void interior_##K##_##CFA(                                                 \
        const rowtab *t, const outrows *o, int xa, int xv, int xe, int w, int fmt)               \
    {                                                                                           \
        const rowtab tl = *t; /* local copies: output stores cannot alias them */               \
        const outrows ol = *o;                                                                  \
        int x0 = xa;                                                                            \
        for (; x0 < xv; x0 += 2 * VL)                                                           \
            block_v(K, &tl, &ol, x0, w, CFA, fmt);                                              \
        for (; x0 < xe; x0 += 2)                                                                \
            block_s(K, &tl, &ol, x0, w, CFA, 1, fmt);                                           \
    }
#define DEF_INTERIOR4(K) DEF_INTERIOR(K, 0) DEF_INTERIOR(K, 1) DEF_INTERIOR(K, 2) DEF_INTERIOR(K, 3)

DEF_INTERIOR4(K_BIL)
DEF_INTERIOR4(K_SH1)
DEF_INTERIOR4(K_SH2)
DEF_INTERIOR4(K_HQ)
DEF_INTERIOR4(K_ED1)
DEF_INTERIOR4(K_EDF)
DEF_INTERIOR4(K_HED1)
DEF_INTERIOR4(K_HED2)
DEF_INTERIOR4(K_WD1)
DEF_INTERIOR4(K_WDO2)
DEF_INTERIOR4(K_WDO3)

#define TAB4(K) [K] = {interior_##K##_0, interior_##K##_1, interior_##K##_2, interior_##K##_3}
static const interior_fn interior_tab[K_COUNT][4] = {
    TAB4(K_BIL), TAB4(K_SH1), TAB4(K_SH2), TAB4(K_HQ), TAB4(K_ED1), TAB4(K_EDF),
    TAB4(K_HED1), TAB4(K_HED2), TAB4(K_WD1), TAB4(K_WDO2), TAB4(K_WDO3),
};

/* Border blocks: every column index mirrored, sites and format at run time. */
static void border_block(int K, const rowtab *t, const outrows *o, int x0, int w, int cfa, int fmt)
{
    switch (K) {
#define BB(KK) case KK: block_s(KK, t, o, x0, w, cfa, 0, fmt); break;
        BB(K_BIL) BB(K_SH1) BB(K_SH2) BB(K_HQ) BB(K_ED1) BB(K_EDF)
        BB(K_HED1) BB(K_HED2) BB(K_WD1) BB(K_WDO2) BB(K_WDO3)
#undef BB
    }
}

static int kind_radius(int K) { return KRADIUS(K); }

void pc_job_pass(const pc_job *jb, int pass, int y0, int y1)
{
    if (pass < 0 || pass >= jb->npasses)
        return;
    int K = jb->kinds[pass];
    int R = kind_radius(K), w = jb->w;
    int fmt = KFINAL(K) ? (int)jb->dst.fmt : 0;
    /* Interior blocks: footprint [x0 - R, x0 + 1 + R] inside [0, w). */
    int xa = (R + 1) & ~1;
    int xe = ((w - 2 - R) & ~1) + 2;
    if (xe < xa)
        xe = xa;
    if (xa > w)
        xa = xe = w;
    /* Vector steps: the widest load reads byte x0 + 32 + R. */
    int xv = xa;
    if (!jb->scalar_only)
        while (xv + 2 * VL + 1 + R <= w && xv + 2 * VL <= xe)
            xv += 2 * VL;
    interior_fn fn = interior_tab[K][jb->cfa];
    outrows o;
    memset(&o, 0, sizeof o);
    o.yc = jb->yc;
    uint8_t *planes[3] = {NULL, NULL, NULL};
    switch (K) {
    case K_SH1: case K_ED1: case K_HED2: case K_WD1: planes[0] = jb->g; break;
    case K_HED1: planes[0] = jb->ta; planes[1] = jb->tb; planes[2] = jb->tc; break;
    case K_WDO2: planes[0] = jb->ta; planes[1] = jb->tb; break;
    default: break;
    }
    for (int y = y0 & ~1; y < y1; y += 2) {
        rowtab t;
        rowtab_fill(jb, y, &t);
        if (KFINAL(K)) {
            dstrows_for(&jb->dst, y, &o.d);
            if (jb->dst.bands) {
                int b = y / jb->dst.band_rows;
                o.yc = jb->dst.bands[b < jb->dst.n_bands ? b : jb->dst.n_bands - 1];
            }
        } else {
            for (int j = 0; j < 2; j++)
                for (int n = 0; n < 3; n++)
                    o.o[j][n] = planes[n] ? planes[n] + (size_t)(y + j) * (size_t)w : NULL;
        }
        for (int x0 = 0; x0 < xa; x0 += 2)
            border_block(K, &t, &o, x0, w, jb->cfa, fmt);
        fn(&t, &o, xa, xv, xe, w, fmt);
        for (int x0 = xe; x0 < w; x0 += 2)
            border_block(K, &t, &o, x0, w, jb->cfa, fmt);
    }
}

/* ------------------------------------------------------------------------
 * Jobs and the reference entry point
 * ---------------------------------------------------------------------- */

/* The reference's implementation of every algorithm, indexed by
 * pc_algo_id: its W x H temporary planes and its passes (the kinds above,
 * in order; the last one is final). An algorithm with its own code
 * (pc_algo_desc.impl, algo_impl.h) is REF_OWN here. A new algorithm adds
 * its line; the count is checked at compile time, a forgotten line in the
 * middle (npasses 0) at run time. */
typedef struct ref_algo {
    int planes;
    int npasses;
    int kinds[3];
} ref_algo;
#define REF_OWN {0, 0, {0}}
static const ref_algo ref_algos[] = {
    [PC_ALGO_BILINEAR] = {0, 1, {K_BIL}},
    [PC_ALGO_SMOOTH_HUE] = {1, 2, {K_SH1, K_SH2}},
    [PC_ALGO_HQ_LINEAR] = {0, 1, {K_HQ}},
    [PC_ALGO_EDGE] = {1, 2, {K_ED1, K_EDF}},
    [PC_ALGO_HOMOGENEOUS_EDGE] = {4, 3, {K_HED1, K_HED2, K_EDF}},
    [PC_ALGO_WD_ORIGINAL] = {3, 3, {K_WD1, K_WDO2, K_WDO3}},
    [PC_ALGO_WD_MODIFIED] = {1, 2, {K_WD1, K_EDF}},
    [PC_ALGO_MLRI] = REF_OWN, /* mlri_reference.c */
    [PC_ALGO_NET] = REF_OWN,  /* net_reference.c */
};
_Static_assert(sizeof ref_algos / sizeof ref_algos[0] == PC_ALGO_COUNT,
               "ref_algos needs one entry per pc_algo_id (debayer.h)");

int pc_job_planes(pc_algo_id algo)
{
    if ((unsigned)algo >= PC_ALGO_COUNT || ref_algos[algo].npasses == 0)
        return -1;
    return ref_algos[algo].planes;
}

int pc_debayer_check(pc_algo_id algo, const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen)
{
    if (!pc_algo_get(algo)) {
        char names[256];
        pc_algo_names(names, sizeof names);
        pc_set_err(err, errlen, "unknown algorithm id %d (known: %s)", (int)algo, names);
        return PC_EINVAL;
    }
    int rc = pc_check_bayer(src, err, errlen);
    if (rc)
        return rc;
    return pc_check_picture(dst, src->width, src->height, err, errlen);
}

static int job_validate(pc_algo_id algo, const pc_bayer *src, const pc_picture *dst,
                        char *err, size_t errlen)
{
    int rc = pc_debayer_check(algo, src, dst, err, errlen);
    if (rc)
        return rc;
    if (pc_job_planes(algo) < 0) {
        pc_set_err(err, errlen, "%s: not a pass-list algorithm (%s)", pc_algo_get(algo)->name,
                   pc_algo_get(algo)->impl ? "it has its own implementation, algo_impl.h"
                                           : "its line in reference.c's ref_algos is missing");
        return PC_EINVAL;
    }
    return PC_OK;
}

int pc_job_setup(pc_job *job, pc_algo_id algo, const pc_bayer *src, const pc_picture *dst,
                 uint8_t *temp, size_t temp_bytes, char *err, size_t errlen)
{
    if (!job) {
        pc_set_err(err, errlen, "job is NULL");
        return PC_EINVAL;
    }
    int rc = job_validate(algo, src, dst, err, errlen);
    if (rc)
        return rc;
    int np = pc_job_planes(algo);
    size_t plane = (size_t)src->width * (size_t)src->height;
    if (np && (!temp || temp_bytes / plane < (size_t)np)) {
        pc_set_err(err, errlen, "%s %dx%d: temporaries need %zu bytes, %zu given",
                   pc_algo_get(algo)->name, src->width, src->height, (size_t)np * plane, temp_bytes);
        return PC_EINVAL;
    }
    memset(job, 0, sizeof *job);
    job->algo = algo;
    job->w = src->width;
    job->h = src->height;
    job->cfa = (int)src->cfa;
    job->raw = src->data;
    job->raw_pitch = src->pitch;
    job->dst = *dst;
    if (!pc_pixfmt_is_rgb(dst->fmt))
        pc_yuv_coeffs_get(dst->matrix, dst->range, &job->yc);
    uint8_t *pl[PC_JOB_MAX_PLANES] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < np; i++)
        pl[i] = temp + (size_t)i * plane;
    job->g = pl[0];
    job->ta = pl[1];
    job->tb = pl[2];
    job->tc = pl[3];
    const ref_algo *ra = &ref_algos[algo];
    job->npasses = ra->npasses;
    for (int p = 0; p < ra->npasses; p++)
        job->kinds[p] = ra->kinds[p];
    return PC_OK;
}

int pc_ref_debayer(pc_algo_id algo, const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen)
{
    const pc_algo_desc *d = pc_algo_get(algo);
    if (d && d->impl) { /* its own code (algo_impl.h) */
        int rc = pc_debayer_check(algo, src, dst, err, errlen);
        return rc ? rc : d->impl->ref_run(src, dst, err, errlen);
    }
    int rc = job_validate(algo, src, dst, err, errlen);
    if (rc)
        return rc;
    int np = pc_job_planes(algo);
    size_t bytes = (size_t)np * (size_t)src->width * (size_t)src->height;
    uint8_t *temp = NULL;
    if (np) {
        temp = malloc(bytes);
        if (!temp) {
            pc_set_err(err, errlen, "%s %dx%d: cannot allocate %zu bytes of temporaries",
                       pc_algo_get(algo)->name, src->width, src->height, bytes);
            return PC_ENOMEM;
        }
    }
    pc_job job;
    rc = pc_job_setup(&job, algo, src, dst, temp, bytes, err, errlen);
    if (rc == PC_OK)
        for (int p = 0; p < job.npasses; p++)
            pc_job_pass(&job, p, 0, job.h);
    free(temp);
    return rc;
}
