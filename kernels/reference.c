/* reference.c - the plain C demosaicing reference: the definition of
 * correctness for every other implementation (CPU backend, CUDA kernels).
 *
 * It implements the seven algorithms of ../shared/reference/algorithms.md
 * exactly: integer arithmetic only, reflect-101 on every read of every
 * buffer in every pass, and the fixed-point RGB -> Y'CbCr of §8 fused into
 * the final pass (RGB24, NV12, I420).
 *
 * Structure. Each algorithm is a list of pass "kinds". Each kind has ONE
 * per-pixel formula, a static inline function of (site type, interior
 * flag). The row driver calls it on 2x2 blocks (even-aligned, so they are
 * also the NV12 chroma blocks):
 *  - rows are read through a table of row pointers built per row pair with
 *    the reflect-101 rule applied to the row index, so top and bottom rows
 *    need no special case;
 *  - columns: blocks whose whole footprint is inside the image use
 *    direct indices (interior = 1, a compile-time constant, specialised per
 *    CFA phase and output format so the site types are constants); the few
 *    blocks at the left and right edges mirror every column index
 *    (interior = 0).
 * The formula text is the same in both cases; only the COL() macro differs.
 */
#include "reference_passes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* §1.3: arithmetic right shift of negative numbers is required. */
_Static_assert((-3 >> 1) == -2, "right shift of negative int must be arithmetic");

#define PC_INLINE static inline __attribute__((always_inline))

void pc_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------------
 * Checks
 * ---------------------------------------------------------------------- */

int pc_check_size(int width, int height, char *err, size_t errlen)
{
    if (width < PC_MIN_DIM || height < PC_MIN_DIM) {
        pc_set_err(err, errlen,
                   "frame size %dx%d: width and height must be at least %d "
                   "(reflect-101 border rule, algorithms.md §1.2)",
                   width, height, PC_MIN_DIM);
        return PC_EINVAL;
    }
    if (width > PC_MAX_DIM || height > PC_MAX_DIM) {
        pc_set_err(err, errlen, "frame size %dx%d: width and height must be at most %d",
                   width, height, PC_MAX_DIM);
        return PC_EINVAL;
    }
    if ((width | height) & 1) {
        pc_set_err(err, errlen,
                   "frame size %dx%d: width and height must be even "
                   "(whole 2x2 Bayer tiles, algorithms.md §1.2)",
                   width, height);
        return PC_EINVAL;
    }
    return PC_OK;
}

int pc_check_picture(const pc_picture *pic, int width, int height, char *err, size_t errlen)
{
    if (!pic) {
        pc_set_err(err, errlen, "destination picture is NULL");
        return PC_EINVAL;
    }
    int rc = pc_check_size(width, height, err, errlen);
    if (rc)
        return rc;
    if (pic->width != width || pic->height != height) {
        pc_set_err(err, errlen, "destination picture is %dx%d, frame is %dx%d",
                   pic->width, pic->height, width, height);
        return PC_EINVAL;
    }
    size_t row[3];
    int np;
    switch (pic->fmt) {
    case PC_FMT_RGB24: np = 1; row[0] = 3 * (size_t)width; break;
    case PC_FMT_NV12: np = 2; row[0] = row[1] = (size_t)width; break;
    case PC_FMT_I420: np = 3; row[0] = (size_t)width; row[1] = row[2] = (size_t)width / 2; break;
    default:
        pc_set_err(err, errlen, "destination pixel format %d is not rgb24, nv12 or i420",
                   (int)pic->fmt);
        return PC_EINVAL;
    }
    if (pic->fmt != PC_FMT_RGB24) {
        if ((unsigned)pic->matrix > PC_MATRIX_BT601) {
            pc_set_err(err, errlen, "destination matrix %d is not bt709 or bt601", (int)pic->matrix);
            return PC_EINVAL;
        }
        if ((unsigned)pic->range > PC_RANGE_FULL) {
            pc_set_err(err, errlen, "destination range %d is not limited or full", (int)pic->range);
            return PC_EINVAL;
        }
    }
    for (int p = 0; p < np; p++) {
        if (!pic->plane[p]) {
            pc_set_err(err, errlen, "destination %s picture: plane %d is NULL",
                       pc_pixfmt_name(pic->fmt), p);
            return PC_EINVAL;
        }
        if (pic->pitch[p] < row[p]) {
            pc_set_err(err, errlen,
                       "destination %s picture %dx%d: plane %d pitch %zu is less than a row (%zu bytes)",
                       pc_pixfmt_name(pic->fmt), width, height, p, pic->pitch[p], row[p]);
            return PC_EINVAL;
        }
    }
    return PC_OK;
}

static int check_bayer(const pc_bayer *src, char *err, size_t errlen)
{
    if (!src) {
        pc_set_err(err, errlen, "source Bayer frame is NULL");
        return PC_EINVAL;
    }
    int rc = pc_check_size(src->width, src->height, err, errlen);
    if (rc)
        return rc;
    if (!src->data) {
        pc_set_err(err, errlen, "source Bayer frame %dx%d: data is NULL", src->width, src->height);
        return PC_EINVAL;
    }
    if (src->pitch < (size_t)src->width) {
        pc_set_err(err, errlen, "source Bayer frame %dx%d: pitch %zu is less than the width",
                   src->width, src->height, src->pitch);
        return PC_EINVAL;
    }
    if ((unsigned)src->cfa > PC_CFA_BGGR) {
        pc_set_err(err, errlen, "source Bayer frame: CFA pattern %d is not RGGB, GRBG, GBRG or BGGR",
                   (int)src->cfa);
        return PC_EINVAL;
    }
    return PC_OK;
}

/* ------------------------------------------------------------------------
 * §8: Q16 coefficients (the table values, literally) and the block store
 * ---------------------------------------------------------------------- */

void pc_yuv_coeffs_get(pc_matrix m, pc_range r, pc_yuv_coeffs *out)
{
    static const int32_t tab[2][2][9] = {
        /* BT.709 */ {
            /* limited */ {11966, 40254, 4064, -6596, -22189, 28785, 28784, -26145, -2639},
            /* full */ {13933, 46871, 4732, -7509, -25259, 32768, 32768, -29763, -3005}},
        /* BT.601 */ {
            /* limited */ {16829, 33039, 6416, -9714, -19070, 28784, 28784, -24103, -4681},
            /* full */ {19595, 38470, 7471, -11058, -21710, 32768, 32768, -27439, -5329}},
    };
    if (!out)
        return;
    int mi = m == PC_MATRIX_BT601 ? 1 : 0;
    int ri = r == PC_RANGE_FULL ? 1 : 0;
    const int32_t *t = tab[mi][ri];
    for (int i = 0; i < 3; i++) {
        out->y[i] = t[i];
        out->cb[i] = t[3 + i];
        out->cr[i] = t[6 + i];
    }
    out->y_offset = ri ? (1 << 15) : (16 << 16) + (1 << 15);
}

PC_INLINE int clamp8(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/* Destination rows of one row pair (y, y+1). RGB24: d[j] = row y+j.
 * YUV: d[j] = Y row y+j, c0 = chroma row y/2 (NV12 CbCr or I420 Cb),
 * c1 = I420 Cr row. */
typedef struct dstrows {
    uint8_t *d[2];
    uint8_t *c0, *c1;
} dstrows;

/* Stores one even-aligned 2x2 block of final 8-bit RGB: v[j][i] is pixel
 * (x0+i, y+j). */
PC_INLINE void store_block(int fmt, const pc_yuv_coeffs *yc, const dstrows *o, int x0,
                           const int v[2][2][3])
{
    if (fmt == PC_FMT_RGB24) {
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++)
                for (int c = 0; c < 3; c++)
                    o->d[j][3 * (x0 + i) + c] = (uint8_t)v[j][i][c];
        return;
    }
    int sr = 0, sg = 0, sb = 0;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            int r = v[j][i][0], g = v[j][i][1], b = v[j][i][2];
            o->d[j][x0 + i] = (uint8_t)clamp8((yc->y[0] * r + yc->y[1] * g + yc->y[2] * b + yc->y_offset) >> 16);
            sr += r;
            sg += g;
            sb += b;
        }
    const int coff = (128 << 18) + (1 << 17);
    int cb = clamp8((yc->cb[0] * sr + yc->cb[1] * sg + yc->cb[2] * sb + coff) >> 18);
    int cr = clamp8((yc->cr[0] * sr + yc->cr[1] * sg + yc->cr[2] * sb + coff) >> 18);
    if (fmt == PC_FMT_NV12) {
        o->c0[x0] = (uint8_t)cb;
        o->c0[x0 + 1] = (uint8_t)cr;
    } else {
        o->c0[x0 >> 1] = (uint8_t)cb;
        o->c1[x0 >> 1] = (uint8_t)cr;
    }
}

static void dstrows_for(const pc_picture *p, int y, dstrows *o)
{
    o->d[0] = p->plane[0] + (size_t)y * p->pitch[0];
    o->d[1] = o->d[0] + p->pitch[0];
    o->c0 = o->c1 = NULL;
    if (p->fmt != PC_FMT_RGB24)
        o->c0 = p->plane[1] + (size_t)(y >> 1) * p->pitch[1];
    if (p->fmt == PC_FMT_I420)
        o->c1 = p->plane[2] + (size_t)(y >> 1) * p->pitch[2];
}

int pc_rgb_to_yuv(const uint8_t *rgb, size_t rgb_pitch, const pc_picture *dst, char *err, size_t errlen)
{
    if (!dst) {
        pc_set_err(err, errlen, "destination picture is NULL");
        return PC_EINVAL;
    }
    if (!rgb) {
        pc_set_err(err, errlen, "RGB source is NULL");
        return PC_EINVAL;
    }
    if (dst->fmt != PC_FMT_NV12 && dst->fmt != PC_FMT_I420) {
        pc_set_err(err, errlen, "RGB -> YUV: destination format %s is not nv12 or i420",
                   pc_pixfmt_name(dst->fmt));
        return PC_EINVAL;
    }
    int rc = pc_check_picture(dst, dst->width, dst->height, err, errlen);
    if (rc)
        return rc;
    if (rgb_pitch < 3 * (size_t)dst->width) {
        pc_set_err(err, errlen, "RGB source %dx%d: pitch %zu is less than a row (%zu bytes)",
                   dst->width, dst->height, rgb_pitch, 3 * (size_t)dst->width);
        return PC_EINVAL;
    }
    pc_yuv_coeffs yc;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &yc);
    for (int y = 0; y < dst->height; y += 2) {
        dstrows o;
        dstrows_for(dst, y, &o);
        const uint8_t *s0 = rgb + (size_t)y * rgb_pitch, *s1 = s0 + rgb_pitch;
        for (int x0 = 0; x0 < dst->width; x0 += 2) {
            int v[2][2][3];
            for (int i = 0; i < 2; i++)
                for (int c = 0; c < 3; c++) {
                    v[0][i][c] = s0[3 * (x0 + i) + c];
                    v[1][i][c] = s1[3 * (x0 + i) + c];
                }
            store_block(dst->fmt, &yc, &o, x0, v);
        }
    }
    return PC_OK;
}

/* ------------------------------------------------------------------------
 * §1: sites, border rule, arithmetic helpers
 * ---------------------------------------------------------------------- */

enum { S_R = 0, S_GR = 1, S_GB = 2, S_B = 3 }; /* site = a | b<<1 (§1.1) */

/* §1.2 reflect-101. One reflection suffices: radius <= 3 < n. */
PC_INLINE int mir(int i, int n) { return i < 0 ? -i : i >= n ? 2 * n - 2 - i : i; }

/* §1.3 round-half-up shift (arithmetic >>). */
PC_INLINE int rs(int v, int k) { return (v + (1 << (k - 1))) >> k; }

PC_INLINE int iabs(int v) { return v < 0 ? -v : v; }

int pc_mosaic_from_rgb(const uint8_t *rgb, size_t pitch, int w, int h, pc_cfa cfa,
                       uint8_t *raw, size_t raw_pitch, char *err, size_t errlen)
{
    if (!rgb || !raw) {
        pc_set_err(err, errlen, "mosaic: %s is NULL", rgb ? "raw destination" : "RGB source");
        return PC_EINVAL;
    }
    if (w <= 0 || h <= 0 || w > PC_MAX_DIM || h > PC_MAX_DIM) {
        pc_set_err(err, errlen, "mosaic: size %dx%d is out of range", w, h);
        return PC_EINVAL;
    }
    if ((unsigned)cfa > PC_CFA_BGGR) {
        pc_set_err(err, errlen, "mosaic: CFA pattern %d is not RGGB, GRBG, GBRG or BGGR", (int)cfa);
        return PC_EINVAL;
    }
    if (pitch < 3 * (size_t)w || raw_pitch < (size_t)w) {
        pc_set_err(err, errlen, "mosaic %dx%d: pitch too small (RGB %zu, raw %zu)", w, h, pitch, raw_pitch);
        return PC_EINVAL;
    }
    for (int y = 0; y < h; y++) {
        const uint8_t *s = rgb + (size_t)y * pitch;
        uint8_t *d = raw + (size_t)y * raw_pitch;
        for (int x = 0; x < w; x++) {
            int site = ((x & 1) | (y & 1) << 1) ^ (int)cfa;
            int ch = site == S_R ? 0 : site == S_B ? 2 : 1;
            d[x] = s[3 * x + ch];
        }
    }
    return PC_OK;
}

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

/* Inside a per-pixel formula: t (row table), j (row in the pair), x, w,
 * in (compile-time interior flag). COL mirrors only in the border path. */
#define PXARGS const rowtab *t, int j, int x, int w, int site, int in
#define PXPASS t, j, x, w, site, in
#define COL(dx) ((in) ? x + (dx) : mir(x + (dx), w))
#define RD(buf, dx, dy) ((int)t->buf[RMAX + j + (dy)][COL(dx)])
#define RDS(buf, dx, dy) ((int)(int8_t)t->buf[RMAX + j + (dy)][COL(dx)])
#define P(dx, dy) RD(raw, dx, dy)  /* raw sample = T2.c = T4.c */
#define G(dx, dy) RD(g, dx, dy)    /* T2.g / T4.g */
#define TA(dx, dy) RD(ta, dx, dy)
#define TB(dx, dy) RD(tb, dx, dy)
#define PREF(dx, dy) RDS(tc, dx, dy)

#define SUM_HOR(F) (F(-1, 0) + F(1, 0))
#define SUM_VER(F) (F(0, -1) + F(0, 1))
#define SUM_CROSS(F) (SUM_HOR(F) + SUM_VER(F))
#define SUM_DIAG(F) (F(-1, -1) + F(1, -1) + F(-1, 1) + F(1, 1))

/* ------------------------------------------------------------------------
 * The per-pixel formulas, one per pass kind. Final kinds write v[0..2] =
 * R, G, B; other kinds write v[0..nout-1] to their temporary planes.
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

static const struct {
    int radius, final, nout;
} kind_info[K_COUNT] = {
    [K_BIL] = {1, 1, 3},  [K_SH1] = {1, 0, 1},  [K_SH2] = {1, 1, 3},  [K_HQ] = {2, 1, 3},
    [K_ED1] = {2, 0, 1},  [K_EDF] = {1, 1, 3},  [K_HED1] = {2, 0, 3}, [K_HED2] = {1, 0, 1},
    [K_WD1] = {3, 0, 1},  [K_WDO2] = {3, 0, 2}, [K_WDO3] = {3, 1, 3},
};
/* Same values as constant expressions, for the specialised drivers. */
#define KRADIUS(K) ((K) == K_WD1 || (K) == K_WDO2 || (K) == K_WDO3 ? 3 \
                    : (K) == K_HQ || (K) == K_ED1 || (K) == K_HED1 ? 2 : 1)
#define KFINAL(K) ((K) == K_BIL || (K) == K_SH2 || (K) == K_HQ || (K) == K_EDF || (K) == K_WDO3)

/* §2 */
PC_INLINE void px_bilinear(PXARGS, int *v)
{
    int p = P(0, 0);
    switch (site) {
    case S_R: v[0] = p; v[1] = rs(SUM_CROSS(P), 2); v[2] = rs(SUM_DIAG(P), 2); break;
    case S_GR: v[1] = p; v[0] = rs(SUM_HOR(P), 1); v[2] = rs(SUM_VER(P), 1); break;
    case S_GB: v[1] = p; v[2] = rs(SUM_HOR(P), 1); v[0] = rs(SUM_VER(P), 1); break;
    default: v[2] = p; v[1] = rs(SUM_CROSS(P), 2); v[0] = rs(SUM_DIAG(P), 2); break;
    }
}

/* §3 pass 1 */
PC_INLINE void px_sh1(PXARGS, int *v)
{
    v[0] = (site == S_GR || site == S_GB) ? P(0, 0) : rs(SUM_CROSS(P), 2);
}

/* §3 integer hue form: q_k = ((c_k+1)<<12) / (g_k+1), truncating. */
PC_INLINE uint32_t hue_q(int c, int g) { return ((uint32_t)(c + 1) << 12) / (uint32_t)(g + 1); }
#define HQK(dx, dy) hue_q(P(dx, dy), G(dx, dy))
/* HUE(S) with n = 2 (s = 13) or n = 4 (s = 14) */
PC_INLINE int hue_fin(int g0, uint32_t sumq, int s)
{
    return clamp8((int)(((uint32_t)(g0 + 1) * sumq + (1u << (s - 1))) >> s) - 1);
}

/* §3 pass 2 */
PC_INLINE void px_sh2(PXARGS, int *v)
{
    int g0 = G(0, 0);
    v[1] = g0;
    switch (site) {
    case S_R: v[0] = P(0, 0); v[2] = hue_fin(g0, SUM_DIAG(HQK), 14); break;
    case S_GR: v[0] = hue_fin(g0, SUM_HOR(HQK), 13); v[2] = hue_fin(g0, SUM_VER(HQK), 13); break;
    case S_GB: v[2] = hue_fin(g0, SUM_HOR(HQK), 13); v[0] = hue_fin(g0, SUM_VER(HQK), 13); break;
    default: v[2] = P(0, 0); v[0] = hue_fin(g0, SUM_DIAG(HQK), 14); break;
    }
}

/* §4: the four kernel shapes in sixteenths, value = CLAMP8(RS(k, 4)). */
#define MHC_G() (8 * P(0, 0) + 4 * SUM_CROSS(P) - 2 * (P(-2, 0) + P(2, 0) + P(0, -2) + P(0, 2)))
#define MHC_H() (10 * P(0, 0) + 8 * SUM_HOR(P) - 2 * (P(-2, 0) + P(2, 0)) - 2 * SUM_DIAG(P) \
                 + (P(0, -2) + P(0, 2)))
#define MHC_V() (10 * P(0, 0) + 8 * SUM_VER(P) - 2 * (P(0, -2) + P(0, 2)) - 2 * SUM_DIAG(P) \
                 + (P(-2, 0) + P(2, 0)))
#define MHC_D() (12 * P(0, 0) + 4 * SUM_DIAG(P) - 3 * (P(-2, 0) + P(2, 0) + P(0, -2) + P(0, 2)))

PC_INLINE void px_hq(PXARGS, int *v)
{
    switch (site) {
    case S_R: v[0] = P(0, 0); v[1] = clamp8(rs(MHC_G(), 4)); v[2] = clamp8(rs(MHC_D(), 4)); break;
    case S_GR: v[1] = P(0, 0); v[0] = clamp8(rs(MHC_H(), 4)); v[2] = clamp8(rs(MHC_V(), 4)); break;
    case S_GB: v[1] = P(0, 0); v[0] = clamp8(rs(MHC_V(), 4)); v[2] = clamp8(rs(MHC_H(), 4)); break;
    default: v[2] = P(0, 0); v[1] = clamp8(rs(MHC_G(), 4)); v[0] = clamp8(rs(MHC_D(), 4)); break;
    }
}

/* §5 classifier and predictors, from raw samples (valid at any site). */
#define ED_TERMS()                                                           \
    int c_ = P(0, 0), l_ = P(-1, 0), r_ = P(1, 0), u_ = P(0, -1), d_ = P(0, 1); \
    int ll_ = P(-2, 0), rr_ = P(2, 0), uu_ = P(0, -2), dd_ = P(0, 2);          \
    int dH = iabs(l_ - r_) + iabs(2 * c_ - ll_ - rr_);                       \
    int dV = iabs(u_ - d_) + iabs(2 * c_ - uu_ - dd_);                       \
    int gH = 2 * (l_ + r_) + 2 * c_ - ll_ - rr_;                             \
    int gV = 2 * (u_ + d_) + 2 * c_ - uu_ - dd_

/* §5 pass 1 */
PC_INLINE void px_ed1(PXARGS, int *v)
{
    if (site == S_GR || site == S_GB) {
        v[0] = P(0, 0);
        return;
    }
    ED_TERMS();
    v[0] = dH < dV ? clamp8(rs(gH, 2)) : dV < dH ? clamp8(rs(gV, 2)) : clamp8(rs(gH + gV, 3));
}

/* §5 pass 2: CD = sum over S of (T2.c - T2.g) */
#define CDK(dx, dy) (P(dx, dy) - G(dx, dy))
PC_INLINE void px_edf(PXARGS, int *v)
{
    int g0 = G(0, 0);
    v[1] = g0;
    switch (site) {
    case S_R: v[0] = P(0, 0); v[2] = clamp8(rs(4 * g0 + SUM_DIAG(CDK), 2)); break;
    case S_GR: v[0] = clamp8(rs(2 * g0 + SUM_HOR(CDK), 1)); v[2] = clamp8(rs(2 * g0 + SUM_VER(CDK), 1)); break;
    case S_GB: v[2] = clamp8(rs(2 * g0 + SUM_HOR(CDK), 1)); v[0] = clamp8(rs(2 * g0 + SUM_VER(CDK), 1)); break;
    default: v[2] = P(0, 0); v[0] = clamp8(rs(4 * g0 + SUM_DIAG(CDK), 2)); break;
    }
}

/* §6 pass 1: v = {gh, gv, pref (int8 as byte)} at every pixel */
PC_INLINE void px_hed1(PXARGS, int *v)
{
    ED_TERMS();
    v[2] = (uint8_t)(int8_t)(dH < dV ? 1 : dV < dH ? -1 : 0);
    if (site == S_GR || site == S_GB) {
        v[0] = v[1] = c_;
    } else {
        v[0] = clamp8(rs(gH, 2));
        v[1] = clamp8(rs(gV, 2));
    }
}

/* §6 pass 2 */
PC_INLINE void px_hed2(PXARGS, int *v)
{
    if (site == S_GR || site == S_GB) {
        v[0] = P(0, 0);
        return;
    }
    int s = PREF(-1, -1) + PREF(0, -1) + PREF(1, -1) + PREF(-1, 0) + PREF(0, 0) + PREF(1, 0) +
            PREF(-1, 1) + PREF(0, 1) + PREF(1, 1);
    int gh = TA(0, 0), gv = TB(0, 0);
    v[0] = s > 0 ? gh : s < 0 ? gv : rs(gh + gv, 1);
}

/* §7.1 WDI: combine four directional estimates E (twice scale) with
 * weights 1/D exactly in int64. */
PC_INLINE int wd_combine(const int E[4], const int D[4])
{
    int64_t p01 = (int64_t)D[0] * D[1], p23 = (int64_t)D[2] * D[3];
    int64_t q0 = D[1] * p23, q1 = D[0] * p23, q2 = D[3] * p01, q3 = D[2] * p01;
    int64_t n = E[0] * q0 + E[1] * q1 + E[2] * q2 + E[3] * q3;
    int64_t m = q0 + q1 + q2 + q3;
    int64_t a = n + m, b = 2 * m;
    /* CLAMP8(FDIV(a, b)): b > 0, so a < 0 means a negative floor -> 0. */
    if (a < 0)
        return 0;
    int64_t q = a / b;
    return q > 255 ? 255 : (int)q;
}

/* One direction a = (ax, ay) with perpendicular p = (qx, qy). X and C are
 * reader macros F(dx, dy). */
#define WD_DIR(X, C, k, ax, ay, qx, qy)                                                   \
    do {                                                                                  \
        int xa_ = X(ax, ay), c2a_ = C(2 * (ax), 2 * (ay));                                \
        E[k] = 2 * xa_ + C0 - c2a_;                                                       \
        D[k] = 2 * (1 + iabs(X(-(ax), -(ay)) - xa_) + iabs(xa_ - X(3 * (ax), 3 * (ay))) + \
                    iabs(C0 - c2a_)) +                                                    \
               iabs(X(-(qx), -(qy)) - X(2 * (ax) - (qx), 2 * (ay) - (qy))) +             \
               iabs(X(qx, qy) - X(2 * (ax) + (qx), 2 * (ay) + (qy)));                    \
    } while (0)

/* AXIS = N, S, W, E with p = (1,0) for N/S and (0,1) for W/E */
#define WDI_AXIS(X, C, out)                      \
    do {                                         \
        int E[4], D[4], C0 = C(0, 0);            \
        WD_DIR(X, C, 0, 0, -1, 1, 0);            \
        WD_DIR(X, C, 1, 0, 1, 1, 0);             \
        WD_DIR(X, C, 2, -1, 0, 0, 1);            \
        WD_DIR(X, C, 3, 1, 0, 0, 1);             \
        out = wd_combine(E, D);                  \
    } while (0)

/* DIAG4 with p = (ax, -ay) */
#define WDI_DIAG(X, C, out)                      \
    do {                                         \
        int E[4], D[4], C0 = C(0, 0);            \
        WD_DIR(X, C, 0, -1, -1, -1, 1);          \
        WD_DIR(X, C, 1, 1, -1, 1, 1);            \
        WD_DIR(X, C, 2, -1, 1, -1, -1);          \
        WD_DIR(X, C, 3, 1, 1, 1, -1);            \
        out = wd_combine(E, D);                  \
    } while (0)

/* §7.2 pass 1 */
PC_INLINE void px_wd1(PXARGS, int *v)
{
    if (site == S_GR || site == S_GB) {
        v[0] = P(0, 0);
        return;
    }
    WDI_AXIS(P, P, v[0]);
}

/* §7.2 pass 2: v = {r, b}; zero at G sites (never read) */
PC_INLINE void px_wdo2(PXARGS, int *v)
{
    switch (site) {
    case S_R: v[0] = P(0, 0); WDI_DIAG(P, G, v[1]); break;
    case S_B: v[1] = P(0, 0); WDI_DIAG(P, G, v[0]); break;
    default: v[0] = v[1] = 0; break;
    }
}

/* §7.2 pass 3 */
PC_INLINE void px_wdo3(PXARGS, int *v)
{
    v[1] = G(0, 0);
    if (site == S_GR || site == S_GB) {
        WDI_AXIS(TA, G, v[0]);
        WDI_AXIS(TB, G, v[2]);
    } else {
        v[0] = TA(0, 0);
        v[2] = TB(0, 0);
    }
}

PC_INLINE void px_kind(int K, PXARGS, int *v)
{
    switch (K) {
    case K_BIL: px_bilinear(PXPASS, v); break;
    case K_SH1: px_sh1(PXPASS, v); break;
    case K_SH2: px_sh2(PXPASS, v); break;
    case K_HQ: px_hq(PXPASS, v); break;
    case K_ED1: px_ed1(PXPASS, v); break;
    case K_EDF: px_edf(PXPASS, v); break;
    case K_HED1: px_hed1(PXPASS, v); break;
    case K_HED2: px_hed2(PXPASS, v); break;
    case K_WD1: px_wd1(PXPASS, v); break;
    case K_WDO2: px_wdo2(PXPASS, v); break;
    case K_WDO3: px_wdo3(PXPASS, v); break;
    }
}

/* ------------------------------------------------------------------------
 * Row-pair driver
 * ---------------------------------------------------------------------- */

/* Outputs of one row pair: temporary plane rows (o[j][n] = plane n of row
 * y+j) or destination rows. */
typedef struct outrows {
    uint8_t *o[2][3];
    dstrows d;
    const pc_yuv_coeffs *yc;
} outrows;

/* One 2x2 block at (x0, y). cfa, in and fmt are constants in the interior
 * instantiations and run-time values at the borders. */
PC_INLINE void block(int K, const rowtab *t, const outrows *o, int x0, int w, int cfa, int in, int fmt)
{
    if (KFINAL(K)) {
        int v[2][2][3];
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++)
                px_kind(K, t, j, x0 + i, w, (i | j << 1) ^ cfa, in, v[j][i]);
        store_block(fmt, o->yc, &o->d, x0, (const int(*)[2][3])v);
    } else {
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                int v[3];
                px_kind(K, t, j, x0 + i, w, (i | j << 1) ^ cfa, in, v);
                for (int n = 0; n < kind_info[K].nout; n++)
                    o->o[j][n][x0 + i] = (uint8_t)v[n];
            }
    }
}

typedef void (*interior_fn)(const rowtab *t, const outrows *o, int xa, int xe, int w);

#define DEF_INTERIOR(K, CFA, FMT)                                                               \
    static void interior_##K##_##CFA##_##FMT(const rowtab *t, const outrows *o, int xa, int xe, \
                                             int w)                                            \
    {                                                                                          \
        for (int x0 = xa; x0 < xe; x0 += 2)                                                    \
            block(K, t, o, x0, w, CFA, 1, FMT);                                                \
    }
#define DEF_INTERIOR_NF(K) \
    DEF_INTERIOR(K, 0, 0) DEF_INTERIOR(K, 1, 0) DEF_INTERIOR(K, 2, 0) DEF_INTERIOR(K, 3, 0)
#define DEF_INTERIOR_F1(K, CFA) DEF_INTERIOR(K, CFA, 0) DEF_INTERIOR(K, CFA, 1) DEF_INTERIOR(K, CFA, 2)
#define DEF_INTERIOR_F(K) \
    DEF_INTERIOR_F1(K, 0) DEF_INTERIOR_F1(K, 1) DEF_INTERIOR_F1(K, 2) DEF_INTERIOR_F1(K, 3)

DEF_INTERIOR_F(K_BIL)
DEF_INTERIOR_NF(K_SH1)
DEF_INTERIOR_F(K_SH2)
DEF_INTERIOR_F(K_HQ)
DEF_INTERIOR_NF(K_ED1)
DEF_INTERIOR_F(K_EDF)
DEF_INTERIOR_NF(K_HED1)
DEF_INTERIOR_NF(K_HED2)
DEF_INTERIOR_NF(K_WD1)
DEF_INTERIOR_NF(K_WDO2)
DEF_INTERIOR_F(K_WDO3)

#define TAB_NF(K) [K] = {{interior_##K##_0_0, interior_##K##_0_0, interior_##K##_0_0}, \
                         {interior_##K##_1_0, interior_##K##_1_0, interior_##K##_1_0}, \
                         {interior_##K##_2_0, interior_##K##_2_0, interior_##K##_2_0}, \
                         {interior_##K##_3_0, interior_##K##_3_0, interior_##K##_3_0}}
#define TAB_F(K) [K] = {{interior_##K##_0_0, interior_##K##_0_1, interior_##K##_0_2}, \
                        {interior_##K##_1_0, interior_##K##_1_1, interior_##K##_1_2}, \
                        {interior_##K##_2_0, interior_##K##_2_1, interior_##K##_2_2}, \
                        {interior_##K##_3_0, interior_##K##_3_1, interior_##K##_3_2}}

static const interior_fn interior_tab[K_COUNT][4][3] = {
    TAB_F(K_BIL), TAB_NF(K_SH1), TAB_F(K_SH2), TAB_F(K_HQ), TAB_NF(K_ED1), TAB_F(K_EDF),
    TAB_NF(K_HED1), TAB_NF(K_HED2), TAB_NF(K_WD1), TAB_NF(K_WDO2), TAB_F(K_WDO3),
};

/* Border blocks: every column index mirrored, sites and format at run time. */
static void border_block(int K, const rowtab *t, const outrows *o, int x0, int w, int cfa, int fmt)
{
    switch (K) {
#define BB(KK) case KK: block(KK, t, o, x0, w, cfa, 0, fmt); break;
        BB(K_BIL) BB(K_SH1) BB(K_SH2) BB(K_HQ) BB(K_ED1) BB(K_EDF)
        BB(K_HED1) BB(K_HED2) BB(K_WD1) BB(K_WDO2) BB(K_WDO3)
#undef BB
    }
}

void pc_job_pass(const pc_job *jb, int pass, int y0, int y1)
{
    if (pass < 0 || pass >= jb->npasses)
        return;
    int K = jb->kinds[pass];
    int R = kind_info[K].radius, w = jb->w;
    int fmt = kind_info[K].final ? (int)jb->dst.fmt : 0;
    /* interior blocks: x0 >= R and x0 + 1 + R <= w - 1 */
    int xa = (R + 1) & ~1;
    int xe = ((w - 2 - R) & ~1) + 2;
    if (xe < xa)
        xe = xa;
    if (xa > w)
        xa = xe = w;
    interior_fn fn = interior_tab[K][jb->cfa][fmt];
    outrows o;
    memset(&o, 0, sizeof o);
    o.yc = &jb->yc;
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
        if (kind_info[K].final) {
            dstrows_for(&jb->dst, y, &o.d);
        } else {
            for (int j = 0; j < 2; j++)
                for (int n = 0; n < 3; n++)
                    o.o[j][n] = planes[n] ? planes[n] + (size_t)(y + j) * (size_t)w : NULL;
        }
        for (int x0 = 0; x0 < xa; x0 += 2)
            border_block(K, &t, &o, x0, w, jb->cfa, fmt);
        fn(&t, &o, xa, xe, w);
        for (int x0 = xe; x0 < w; x0 += 2)
            border_block(K, &t, &o, x0, w, jb->cfa, fmt);
    }
}

/* ------------------------------------------------------------------------
 * Jobs and the reference entry point
 * ---------------------------------------------------------------------- */

int pc_job_planes(pc_algo_id algo)
{
    switch (algo) {
    case PC_ALGO_BILINEAR: case PC_ALGO_HQ_LINEAR: return 0;
    case PC_ALGO_SMOOTH_HUE: case PC_ALGO_EDGE: case PC_ALGO_WD_MODIFIED: return 1;
    case PC_ALGO_WD_ORIGINAL: return 3;
    case PC_ALGO_HOMOGENEOUS_EDGE: return 4;
    default: return -1;
    }
}

static int job_validate(pc_algo_id algo, const pc_bayer *src, const pc_picture *dst,
                        char *err, size_t errlen)
{
    if (pc_job_planes(algo) < 0) {
        char names[160];
        pc_algo_names(names, sizeof names);
        pc_set_err(err, errlen, "unknown algorithm id %d (known: %s)", (int)algo, names);
        return PC_EINVAL;
    }
    int rc = check_bayer(src, err, errlen);
    if (rc)
        return rc;
    return pc_check_picture(dst, src->width, src->height, err, errlen);
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
    if (dst->fmt != PC_FMT_RGB24)
        pc_yuv_coeffs_get(dst->matrix, dst->range, &job->yc);
    uint8_t *pl[PC_JOB_MAX_PLANES] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < np; i++)
        pl[i] = temp + (size_t)i * plane;
    job->g = pl[0];
    job->ta = pl[1];
    job->tb = pl[2];
    job->tc = pl[3];
    switch (algo) {
    case PC_ALGO_BILINEAR: job->npasses = 1; job->kinds[0] = K_BIL; break;
    case PC_ALGO_SMOOTH_HUE: job->npasses = 2; job->kinds[0] = K_SH1; job->kinds[1] = K_SH2; break;
    case PC_ALGO_HQ_LINEAR: job->npasses = 1; job->kinds[0] = K_HQ; break;
    case PC_ALGO_EDGE: job->npasses = 2; job->kinds[0] = K_ED1; job->kinds[1] = K_EDF; break;
    case PC_ALGO_HOMOGENEOUS_EDGE:
        job->npasses = 3; job->kinds[0] = K_HED1; job->kinds[1] = K_HED2; job->kinds[2] = K_EDF; break;
    case PC_ALGO_WD_ORIGINAL:
        job->npasses = 3; job->kinds[0] = K_WD1; job->kinds[1] = K_WDO2; job->kinds[2] = K_WDO3; break;
    case PC_ALGO_WD_MODIFIED: job->npasses = 2; job->kinds[0] = K_WD1; job->kinds[1] = K_EDF; break;
    default: break;
    }
    return PC_OK;
}

int pc_ref_debayer(pc_algo_id algo, const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen)
{
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
