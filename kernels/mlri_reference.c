/* mlri_reference.c - the C reference of the MLRI demosaic (minimised-
 * Laplacian residual interpolation, Kiku, Monno, Tanaka, Okutomi 2014):
 * the definition of correctness for the CPU backend and the CUDA kernels.
 *
 * The method (docs/mlri.md has the derivation and the parameter sources):
 *  1. Green, per direction d (horizontal, vertical) and per CFA class c
 *     (R, Gr, Gb, B): a guided filter over the 7x7 window that regresses
 *     the Laplacian (along d) of the raw samples of class c on the
 *     Laplacian of the tentative guide rawd = mean of the two d-neighbours,
 *     through the origin (stages AB), then evaluates it at every pixel of
 *     the rows (d = h) or columns (d = v) holding class c (stages TENT):
 *     at class c itself with the guide rawd ("own", plane u), at the other
 *     class of that row/column with the raw sample ("other", plane v).
 *     Residuals (raw - own estimate) are interpolated linearly along d and
 *     added to the other estimate, giving the colour difference G - C
 *     along d at every pixel (stage DIF, planes dh, dv).
 *  2. The four one-sided Gaussian-smoothed colour differences (N, S, W, E)
 *     are combined with inverse-squared-gradient weights (stage GREEN).
 *  3. Red and blue: the same guided filter with 11x11 windows and the 2-D
 *     Laplacian, guide = full green, then bilinear residual interpolation
 *     (stages AB/TENT per colour and FINAL, which also writes RGB24,
 *     RGBX32, NV12 or I420 through the spec's §8 fixed-point conversion).
 *
 * Border rule: the small stencils (neighbour means, Laplacians, gradients,
 * residual interpolation) read through reflect-101 like every other
 * algorithm here (it keeps the CFA phase); the guided filters' box sums run
 * over the window clipped to the frame, divided by the number of samples
 * actually summed (what the authors' boxfilter + N normalisation does).
 *
 * Summation order (so that the CPU bands and the GPU kernels can agree):
 * every window sum is the sum, left to right, of per-column sums taken top
 * to bottom.
 */
#include "mlri.h"
#include "mlri_formulas.h"
#include "reference_passes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int mir(int i, int n) { return i < 0 ? -i : i >= n ? 2 * n - 2 - i : i; }
static inline int imax(int a, int b) { return a > b ? a : b; }
static inline int imin(int a, int b) { return a < b ? a : b; }

/* Stage numbering: 0..17 green (per direction d: 4 x (AB, TENT) then DIF),
 * 18 GREEN, 19/20 red AB/TENT, 21/22 blue AB/TENT, 23 FINAL. */
enum { ST_DIF0 = 8, ST_GREEN = 18, ST_RB = 19, ST_FINAL = 23 };

size_t pc_mlri_scratch_floats(int width) { return 4 * (size_t)width; }

static inline float rawf(const pc_mlri_job *j, int x, int y)
{
    return (float)j->raw[(size_t)mir(y, j->h) * j->raw_pitch + (size_t)mir(x, j->w)];
}
static inline float plane(const pc_mlri_job *j, const float *p, int x, int y)
{
    return p[(size_t)mir(y, j->h) * (size_t)j->w + (size_t)mir(x, j->w)];
}

/* Directional tentative guide: mean of the two neighbours along (dx, dy). */
static inline float guide_d(const pc_mlri_job *j, int x, int y, int dx, int dy)
{
    return 0.5f * (rawf(j, x - dx, y - dy) + rawf(j, x + dx, y + dy));
}

/* The four summed quantities of one site (q[0] = I*p, q[1] = I*I,
 * q[2] = guide, q[3] = target). Green stages: 1-D Laplacian along d of the
 * directional guide and of the raw samples. Red/blue: 2-D Laplacian (step
 * 2) of the green plane and of the raw samples. Each level mirrors its own
 * reads (the guide at a mirrored site is computed there). */
static inline void site_q(const pc_mlri_job *j, int green, int dx, int dy, int x, int y, float q[4])
{
    float I, p, gd, t = rawf(j, x, y);
    if (green) {
        int xm = mir(x - 2 * dx, j->w), ym = mir(y - 2 * dy, j->h);
        int xp = mir(x + 2 * dx, j->w), yp = mir(y + 2 * dy, j->h);
        gd = guide_d(j, x, y, dx, dy);
        I = 2.0f * gd - guide_d(j, xm, ym, dx, dy) - guide_d(j, xp, yp, dx, dy);
        p = 2.0f * t - rawf(j, xm, ym) - rawf(j, xp, yp);
    } else {
        gd = plane(j, j->g, x, y);
        I = 4.0f * gd - plane(j, j->g, x - 2, y) - plane(j, j->g, x + 2, y) - plane(j, j->g, x, y - 2) -
            plane(j, j->g, x, y + 2);
        p = 4.0f * t - rawf(j, x - 2, y) - rawf(j, x + 2, y) - rawf(j, x, y - 2) - rawf(j, x, y + 2);
    }
    q[0] = I * p;
    q[1] = I * I;
    q[2] = gd;
    q[3] = t;
}

/* AB: a and b of class (px, py) at every pixel of rows [y0, y1). */
static void stage_ab(const pc_mlri_job *j, int green, int dx, int dy, int px, int py, int r, int y0, int y1,
                     float *scratch)
{
    const int W = j->w, H = j->h;
    float *cs[4];
    for (int k = 0; k < 4; k++)
        cs[k] = scratch + (size_t)k * W;
    for (int y = y0; y < y1; y++) {
        int ya = imax(0, y - r), yb = imin(H - 1, y + r);
        if ((ya & 1) != py)
            ya++;
        int ny = ya <= yb ? (yb - ya) / 2 + 1 : 0;
        for (int x = px; x < W; x += 2) {
            float s[4] = {0, 0, 0, 0};
            for (int yy = ya; yy <= yb; yy += 2) {
                float q[4];
                site_q(j, green, dx, dy, x, yy, q);
                for (int k = 0; k < 4; k++)
                    s[k] += q[k];
            }
            for (int k = 0; k < 4; k++)
                cs[k][x] = s[k];
        }
        float *arow = j->a + (size_t)y * W, *brow = j->b + (size_t)y * W;
        for (int x = 0; x < W; x++) {
            int xa = imax(0, x - r), xb = imin(W - 1, x + r);
            if ((xa & 1) != px)
                xa++;
            int nx = xa <= xb ? (xb - xa) / 2 + 1 : 0;
            float s[4] = {0, 0, 0, 0};
            for (int xx = xa; xx <= xb; xx += 2)
                for (int k = 0; k < 4; k++)
                    s[k] += cs[k][xx];
            int n = nx * ny;
            pc_mlri_ab((float)(n ? n : 1), s[0], s[1], s[2], s[3], &arow[x], &brow[x]);
        }
    }
}

/* Window means of a and b at (x, y): sum of the column sums cs (a) and
 * cs + W (b) of row y over [x-r, x+r] clipped, over the clipped count. */
static inline void mean_ab(const float *cs, int W, int x, int r, int ny, float *ma, float *mb)
{
    int xa = imax(0, x - r), xb = imin(W - 1, x + r);
    float sa = 0, sb = 0;
    for (int xx = xa; xx <= xb; xx++) {
        sa += cs[xx];
        sb += cs[W + xx];
    }
    float n = (float)((xb - xa + 1) * ny);
    *ma = sa / n;
    *mb = sb / n;
}

/* Column sums of a and b over rows [y-r, y+r] clipped into cs[0..2W). */
static int colsum_ab(const pc_mlri_job *j, int y, int r, float *cs)
{
    const int W = j->w, H = j->h;
    int ya = imax(0, y - r), yb = imin(H - 1, y + r);
    for (int x = 0; x < W; x++) {
        float sa = 0, sb = 0;
        for (int yy = ya; yy <= yb; yy++) {
            sa += j->a[(size_t)yy * W + x];
            sb += j->b[(size_t)yy * W + x];
        }
        cs[x] = sa;
        cs[W + x] = sb;
    }
    return yb - ya + 1;
}

/* TENT of the green step: the filter of class (px, py) evaluated at the
 * pixels of its rows (dx = 1) or columns (dy = 1): own class -> u with the
 * directional guide, the other class -> v with the raw sample. */
static void stage_tent_green(const pc_mlri_job *j, int dx, int dy, int px, int py, int y0, int y1, float *cs)
{
    const int W = j->w, r = PC_MLRI_R_GREEN;
    for (int y = y0; y < y1; y++) {
        if (dx && (y & 1) != py)
            continue;
        int ny = colsum_ab(j, y, r, cs);
        for (int x = dx ? 0 : px; x < W; x += dx ? 1 : 2) {
            float ma, mb;
            mean_ab(cs, W, x, r, ny, &ma, &mb);
            size_t o = (size_t)y * W + x;
            int own = (x & 1) == px && (y & 1) == py;
            if (own)
                j->u[o] = pc_mlri_clip(ma * guide_d(j, x, y, dx, dy) + mb);
            else
                j->v[o] = pc_mlri_clip(ma * rawf(j, x, y) + mb);
        }
    }
}

/* DIF: colour difference G - C along (dx, dy): the other-class estimate
 * plus the mean residual of the two neighbours (which are own-class sites). */
static void stage_dif(const pc_mlri_job *j, int dx, int dy, int y0, int y1)
{
    const int W = j->w;
    float *out = dx ? j->dh : j->dv;
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < W; x++) {
            float rm = rawf(j, x - dx, y - dy) - plane(j, j->u, x - dx, y - dy);
            float rp = rawf(j, x + dx, y + dy) - plane(j, j->u, x + dx, y + dy);
            float est = pc_mlri_clip(j->v[(size_t)y * W + x] + 0.5f * (rm + rp));
            float m = rawf(j, x, y);
            int gsite = ((x ^ j->ox) & 1) != ((y ^ j->oy) & 1);
            out[(size_t)y * W + x] = gsite ? m - est : est - m;
        }
}

/* 3x3 sum of |d(x-1) - d(x+1)| along (dx, dy) around (x, y). */
static inline float grad3(const pc_mlri_job *j, const float *d, int dx, int dy, int x, int y)
{
    float s = 0;
    for (int b = -1; b <= 1; b++)
        for (int a = -1; a <= 1; a++) {
            int xx = mir(x + a, j->w), yy = mir(y + b, j->h);
            float t = plane(j, d, xx - dx, yy - dy) - plane(j, d, xx + dx, yy + dy);
            s += t < 0 ? -t : t;
        }
    return s;
}

/* One-sided Gaussian mean of d over distances 0..4 in direction (sx, sy). */
static inline float side(const pc_mlri_job *j, const float *d, int sx, int sy, int x, int y)
{
    static const float gw[5] = {PC_MLRI_GW0, PC_MLRI_GW1, PC_MLRI_GW2, PC_MLRI_GW3, PC_MLRI_GW4};
    float s = 0;
    for (int k = 4; k >= 0; k--)
        s += gw[k] * plane(j, d, x + k * sx, y + k * sy);
    return s;
}

static void stage_green(const pc_mlri_job *j, int y0, int y1)
{
    const int W = j->w;
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < W; x++) {
            float m = rawf(j, x, y);
            int gsite = ((x ^ j->ox) & 1) != ((y ^ j->oy) & 1);
            float g = m;
            if (!gsite) {
                float wn = pc_mlri_w(grad3(j, j->dv, 0, 1, x, mir(y - 1, j->h)));
                float ws = pc_mlri_w(grad3(j, j->dv, 0, 1, x, mir(y + 1, j->h)));
                float ww = pc_mlri_w(grad3(j, j->dh, 1, 0, mir(x - 1, j->w), y));
                float we = pc_mlri_w(grad3(j, j->dh, 1, 0, mir(x + 1, j->w), y));
                float num = wn * side(j, j->dv, 0, -1, x, y) + ws * side(j, j->dv, 0, 1, x, y) +
                            ww * side(j, j->dh, -1, 0, x, y) + we * side(j, j->dh, 1, 0, x, y);
                g = pc_mlri_clip(m + num / (wn + ws + ww + we));
            }
            j->g[(size_t)y * W + x] = g;
        }
}

/* TENT of red/blue: the filter evaluated at every pixel with the green. */
static void stage_tent_rb(const pc_mlri_job *j, float *out, int y0, int y1, float *cs)
{
    const int W = j->w, r = PC_MLRI_R_RB;
    for (int y = y0; y < y1; y++) {
        int ny = colsum_ab(j, y, r, cs);
        for (int x = 0; x < W; x++) {
            float ma, mb;
            mean_ab(cs, W, x, r, ny, &ma, &mb);
            size_t o = (size_t)y * W + x;
            out[o] = pc_mlri_clip(ma * j->g[o] + mb);
        }
    }
}

/* Red (t = u, class (cx, cy)) or blue (t = v) at (x, y): the raw sample at
 * its own sites, else the tentative value plus the bilinear interpolation
 * of the residuals raw - t of the 2 or 4 nearest own sites. */
static inline float final_c(const pc_mlri_job *j, const float *t, int cx, int cy, int x, int y)
{
    int sx = (x & 1) != cx, sy = (y & 1) != cy;
#define RES(a, b) (rawf(j, x + (a), y + (b)) - plane(j, t, x + (a), y + (b)))
    float tv = t[(size_t)y * j->w + x], res;
    if (!sx && !sy)
        return rawf(j, x, y);
    if (sx && !sy)
        res = 0.5f * (RES(-1, 0) + RES(1, 0));
    else if (!sx && sy)
        res = 0.5f * (RES(0, -1) + RES(0, 1));
    else
        res = 0.25f * (RES(-1, -1) + RES(1, -1) + RES(-1, 1) + RES(1, 1));
#undef RES
    return pc_mlri_clip(tv + res);
}

static void stage_final(const pc_mlri_job *j, int y0, int y1)
{
    for (int y = y0; y < y1; y += 2) {
        /* per-camera matrices (docs/colour.md), as every final pass */
        const pc_yuv_coeffs *yc = &j->yc;
        if (j->dst.bands) {
            int band = y / j->dst.band_rows;
            yc = &j->dst.bands[band < j->dst.n_bands ? band : j->dst.n_bands - 1];
        }
        for (int x0 = 0; x0 < j->w; x0 += 2) {
            int v[2][2][3];
            for (int b = 0; b < 2; b++)
                for (int a = 0; a < 2; a++) {
                    int x = x0 + a, yy = y + b;
                    v[b][a][0] = pc_mlri_u8(final_c(j, j->u, j->ox, j->oy, x, yy));
                    v[b][a][1] = pc_mlri_u8(j->g[(size_t)yy * j->w + x]);
                    v[b][a][2] = pc_mlri_u8(final_c(j, j->v, j->ox ^ 1, j->oy ^ 1, x, yy));
                }
            pc_ref_store_block(&j->dst, yc, x0, y, v);
        }
    }
}

void pc_mlri_stage(const pc_mlri_job *j, int stage, int y0, int y1, float *scratch)
{
    if (stage < ST_GREEN) {
        int d = stage / 9, k = stage % 9;
        int dx = d == 0, dy = d == 1;
        if (k == ST_DIF0) {
            stage_dif(j, dx, dy, y0, y1);
            return;
        }
        int c = k / 2, px = c & 1, py = c >> 1;
        if (k & 1)
            stage_tent_green(j, dx, dy, px, py, y0, y1, scratch);
        else
            stage_ab(j, 1, dx, dy, px, py, PC_MLRI_R_GREEN, y0, y1, scratch);
        return;
    }
    switch (stage) {
    case ST_GREEN: stage_green(j, y0, y1); break;
    case ST_RB + 0: stage_ab(j, 0, 0, 0, j->ox, j->oy, PC_MLRI_R_RB, y0, y1, scratch); break;
    case ST_RB + 1: stage_tent_rb(j, j->u, y0, y1, scratch); break;
    case ST_RB + 2: stage_ab(j, 0, 0, 0, j->ox ^ 1, j->oy ^ 1, PC_MLRI_R_RB, y0, y1, scratch); break;
    case ST_RB + 3: stage_tent_rb(j, j->v, y0, y1, scratch); break;
    case ST_FINAL: stage_final(j, y0, y1); break;
    default: break;
    }
}

int pc_mlri_setup(pc_mlri_job *job, const pc_bayer *src, const pc_picture *dst, float *temp,
                  size_t temp_floats, char *err, size_t errlen)
{
    int rc = pc_debayer_check(PC_ALGO_MLRI, src, dst, err, errlen);
    if (rc)
        return rc;
    size_t npx = (size_t)src->width * (size_t)src->height;
    if (!temp || temp_floats < PC_MLRI_PLANES * npx) {
        pc_set_err(err, errlen, "mlri %dx%d: temporaries too small (%zu floats, need %zu)", src->width,
                   src->height, temp_floats, PC_MLRI_PLANES * npx);
        return PC_EINVAL;
    }
    memset(job, 0, sizeof *job);
    job->w = src->width;
    job->h = src->height;
    job->ox = src->cfa == PC_CFA_GRBG || src->cfa == PC_CFA_BGGR;
    job->oy = src->cfa == PC_CFA_GBRG || src->cfa == PC_CFA_BGGR;
    job->raw = src->data;
    job->raw_pitch = src->pitch;
    float **pl[PC_MLRI_PLANES] = {&job->a, &job->b, &job->u, &job->v, &job->dh, &job->dv, &job->g};
    for (int i = 0; i < PC_MLRI_PLANES; i++)
        *pl[i] = temp + (size_t)i * npx;
    job->dst = *dst;
    if (!pc_pixfmt_is_rgb(dst->fmt))
        pc_yuv_coeffs_get(dst->matrix, dst->range, &job->yc);
    return PC_OK;
}

int pc_mlri_ref(const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen)
{
    int rc = pc_debayer_check(PC_ALGO_MLRI, src, dst, err, errlen);
    if (rc)
        return rc;
    size_t nf = PC_MLRI_PLANES * (size_t)src->width * (size_t)src->height;
    size_t ns = pc_mlri_scratch_floats(src->width);
    float *temp = malloc((nf + ns) * sizeof(float));
    if (!temp) {
        pc_set_err(err, errlen, "mlri %dx%d: cannot allocate %zu bytes of temporaries", src->width, src->height,
                   (nf + ns) * sizeof(float));
        return PC_ENOMEM;
    }
    pc_mlri_job job;
    rc = pc_mlri_setup(&job, src, dst, temp, nf, err, errlen);
    for (int s = 0; rc == PC_OK && s < PC_MLRI_STAGES; s++)
        pc_mlri_stage(&job, s, 0, job.h, temp + nf);
    free(temp);
    return rc;
}

/* --- the CPU backend's version (algo_impl.h): the same stages on row bands
 * of the backend's pool, one pc_cpu_parallel call per stage (its return is
 * the barrier between stages), so the result is identical to pc_mlri_ref.
 * Temporaries: the planes, then one scratch per band for up to
 * PC_MLRI_MAX_BANDS bands (the pool's largest thread count). */
#define PC_MLRI_MAX_BANDS 256

static size_t mlri_temp_bytes(int width, int height)
{
    return (PC_MLRI_PLANES * (size_t)width * (size_t)height +
            PC_MLRI_MAX_BANDS * pc_mlri_scratch_floats(width)) * sizeof(float);
}

typedef struct mlri_bands {
    const pc_mlri_job *job;
    int stage;
    float *scratch;
    size_t scratch_floats;
} mlri_bands;

static void mlri_band(void *arg, int band, int nbands)
{
    const mlri_bands *b = arg;
    int pairs = b->job->h / 2;
    int y0 = 2 * (int)((int64_t)pairs * band / nbands), y1 = 2 * (int)((int64_t)pairs * (band + 1) / nbands);
    pc_mlri_stage(b->job, b->stage, y0, y1, b->scratch + (size_t)band * b->scratch_floats);
}

static int mlri_cpu_run(pc_cpu *cpu, uint8_t *temp, const pc_bayer *src, const pc_picture *dst, char *err,
                        size_t errlen)
{
    size_t nf = PC_MLRI_PLANES * (size_t)src->width * (size_t)src->height;
    pc_mlri_job job;
    int rc = pc_mlri_setup(&job, src, dst, (float *)(void *)temp, nf, err, errlen);
    if (rc)
        return rc;
    mlri_bands b = {&job, 0, (float *)(void *)temp + nf, pc_mlri_scratch_floats(src->width)};
    for (b.stage = 0; b.stage < PC_MLRI_STAGES; b.stage++)
        pc_cpu_parallel(cpu, mlri_band, &b);
    return PC_OK;
}

const pc_algo_impl pc_mlri_impl = {pc_mlri_ref, mlri_temp_bytes, mlri_cpu_run, NULL};
