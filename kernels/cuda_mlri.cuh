/* cuda_mlri.cuh - the CUDA kernels of MLRI (minimised-Laplacian residual
 * interpolation; the C reference is mlri_reference.c, the method
 * docs/mlri.md). Compiled by nvcc (cuda_mlri.cu) and, after cuda_emu.h, as
 * host C++ for the emulation test (cuda_emu.cc), like cuda_kernel.cuh.
 *
 * Five kernels, six launches per frame (the reference's 24 row stages,
 * fused):
 *   1. DIR(d)    d = h, v: per CFA class, the guided filter's slope and
 *                intercept (kept in shared memory), their window means and
 *                the own/other estimates -> u_d, v_d
 *   2. GREEN     colour differences, weights, full green -> g
 *   3. AB_RB     red and blue guided filters (11x11) -> 4 planes
 *   4. TENT_RB   tentative red and blue -> tR, tB
 *   5. FINAL     residual interpolation, rounding, RGB24/NV12/I420
 *
 * Why this shape is fast:
 *  - Every box sum is separable and taken from shared memory: a CTA stages
 *    the per-site products (I*p, I*I, guide, target) of its tile plus halo
 *    once, then for each output row sums columns (each thread one column)
 *    and rows (each thread one output pixel). A 7x7 class-restricted box
 *    costs 4 + 4 adds per quantity instead of 16 loads, and the staged
 *    products are computed once per site instead of once per window.
 *  - Rows of 128 pixels per CTA, one thread per column: every global load
 *    and store of a float plane is a whole 512-byte coalesced row (160
 *    threads, so the halo columns need no second step).
 *  - The colour differences of both directions are never written to global
 *    memory: GREEN recomputes them for its tile + 4 halo in shared memory
 *    from u, v (the difference needs one neighbour; the weights read it 40
 *    times per pixel).
 *  - The last pass writes the destination format directly (no RGB plane).
 *
 * Bit-for-bit rule: every value is computed with the same float operations
 * in the same order as the reference (sums: per column top to bottom,
 * then columns left to right; the same mirrored indices), and cuda_mlri.cu
 * is compiled with -fmad=false so no multiply-add is contracted. The
 * emulation test checks equality; the GPU test allows 1 code value on
 * 0.01 % of the samples (docs/mlri.md) in case a device division or
 * rounding ever differs.
 */
#ifndef PANOCAP_CUDA_MLRI_CUH
#define PANOCAP_CUDA_MLRI_CUH

#include "cuda_common.cuh"
#include "debayer.h"
#include "mlri_formulas.h"

/* Tile: 128 columns x PC_MLRI_TH rows; 160 threads (5 warps) per CTA, so
 * that the column loops over the tile plus its halo (134-140 columns) take
 * one step, not a second step for 6-12 threads that every other warp would
 * wait for at the next barrier; the per-pixel steps use 128 of them, one
 * thread per column. 8 rows keep AB_RB
 * (18 staged rows x 138 columns x 4 floats + column sums, 42 KB) under the
 * 48 KB of dynamic shared memory granted without opt-in, and DIR at 80 KB
 * (opted in; two CTAs per SM on sm_80+), while the halo costs of the
 * 6-row (DIR) and 10-row (AB_RB) staging stay below 2.5x. */
#define PC_MLRI_NT 160
#define PC_MLRI_TW 128
#define PC_MLRI_TH 8
/* Shared-memory row stride: the tile plus the largest halo (5) each side. */
#define PC_MLRI_QS (PC_MLRI_TW + 2 * PC_MLRI_R_RB)

struct pc_mlri_kp {
    const uint8_t *src;
    int sp; /* raw pitch */
    int W, H, ox, oy;
    size_t wh; /* W * H: plane stride */
    float *ab; /* 8 planes: (a, b) per class c = px | py << 1; AB_RB uses 4 */
    float *uv; /* 4 planes: u_h, v_h, u_v, v_v */
    float *g;  /* full green */
    float *t;  /* tR, tB */
    int d;     /* direction of AB_GREEN / TENT_GREEN: 0 = h, 1 = v */
    int fmt;   /* pc_pixfmt */
    uint8_t *d0, *d1, *d2;
    int p0, p1, p2;
    /* §8 coefficients per band of band_rows rows (per-camera matrices,
     * docs/colour.md); one band of the plain ones when the picture has none */
    pc_yuv_coeffs bands[PC_KMAX_BANDS];
    int n_bands, band_rows;
    int grid; /* a grid picture's tiles (pc_grid_pack, pc_grid_offset); 0: stacked */
};

/* reflect-101. IN = 1: the caller's block reads nothing outside the frame
 * (interior tiles, most of them), so the index is used as it is: the same
 * values, without the two compares and selects per read (the weights of
 * GREEN alone make 90 reads per pixel). */
template <int IN = 0>
PC_DEV int pc_mlri_mir(int i, int n)
{
    return IN ? i : i < 0 ? -i : i >= n ? 2 * n - 2 - i : i;
}
template <int IN = 0>
PC_DEV float pc_mlri_raw(const pc_mlri_kp &k, int x, int y)
{
    return (float)k.src[(size_t)pc_mlri_mir<IN>(y, k.H) * k.sp + pc_mlri_mir<IN>(x, k.W)];
}
template <int IN = 0>
PC_DEV float pc_mlri_pl(const pc_mlri_kp &k, const float *p, int x, int y)
{
    return p[(size_t)pc_mlri_mir<IN>(y, k.H) * k.W + pc_mlri_mir<IN>(x, k.W)];
}
/* Whether every read within `reach` of the tile at (x0, y0) (TW x TH) is
 * inside the frame: the block may then run its IN = 1 instance. */
PC_DEV int pc_mlri_interior(const pc_mlri_kp &k, int x0, int y0, int reach);
PC_DEV int pc_mlri_imax(int a, int b) { return a > b ? a : b; }
PC_DEV int pc_mlri_imin(int a, int b) { return a < b ? a : b; }

/* Directional guide: mean of the two neighbours along (dx, dy). */
template <int IN = 0>
PC_DEV float pc_mlri_gd(const pc_mlri_kp &k, int x, int y, int dx, int dy)
{
    return 0.5f * (pc_mlri_raw<IN>(k, x - dx, y - dy) + pc_mlri_raw<IN>(k, x + dx, y + dy));
}

/* Staged products of one site (reference: site_q). */
template <int IN = 0>
PC_DEV void pc_mlri_q(const pc_mlri_kp &k, int green, int dx, int dy, int x, int y, float q[4])
{
    float I, p, gd, t = pc_mlri_raw<IN>(k, x, y);
    if (green) {
        int xm = pc_mlri_mir<IN>(x - 2 * dx, k.W), ym = pc_mlri_mir<IN>(y - 2 * dy, k.H);
        int xp = pc_mlri_mir<IN>(x + 2 * dx, k.W), yp = pc_mlri_mir<IN>(y + 2 * dy, k.H);
        gd = pc_mlri_gd<IN>(k, x, y, dx, dy);
        I = 2.0f * gd - pc_mlri_gd<IN>(k, xm, ym, dx, dy) - pc_mlri_gd<IN>(k, xp, yp, dx, dy);
        p = 2.0f * t - pc_mlri_raw<IN>(k, xm, ym) - pc_mlri_raw<IN>(k, xp, yp);
    } else {
        gd = pc_mlri_pl<IN>(k, k.g, x, y);
        I = 4.0f * gd - pc_mlri_pl<IN>(k, k.g, x - 2, y) - pc_mlri_pl<IN>(k, k.g, x + 2, y) -
            pc_mlri_pl<IN>(k, k.g, x, y - 2) - pc_mlri_pl<IN>(k, k.g, x, y + 2);
        p = 4.0f * t - pc_mlri_raw<IN>(k, x - 2, y) - pc_mlri_raw<IN>(k, x + 2, y) - pc_mlri_raw<IN>(k, x, y - 2) -
            pc_mlri_raw<IN>(k, x, y + 2);
    }
    q[0] = I * p;
    q[1] = I * I;
    q[2] = gd;
    q[3] = t;
}

PC_DEV int pc_mlri_interior(const pc_mlri_kp &k, int x0, int y0, int reach)
{
    return x0 - reach >= 0 && x0 + PC_MLRI_TW + reach <= k.W && y0 - reach >= 0 &&
           y0 + PC_MLRI_TH + reach <= k.H;
}

/* First and last index of parity par in [c - r, c + r] clipped to [0, n). */
PC_DEV int pc_mlri_lo(int c, int r, int par)
{
    int a = pc_mlri_imax(0, c - r);
    return (a & 1) != par ? a + 1 : a;
}

/* DIR(d): the whole directional green step of one direction for a tile,
 * a and b never leaving shared memory (they would be 8 float planes, 64
 * bytes per pixel written and read again per direction: the largest cost
 * of the unfused form). The per-site products are staged once for the tile
 * + 6 halo; then, per class pair (d = h: the two classes of the rows of one
 * parity; d = v: of the columns of one parity), a and b for the tile + 3
 * halo (column sums, then row sums, as the reference), then their window
 * means for the tile's pixels of that parity and the own/other estimates
 * u_d, v_d. Both passes reuse the same staged products. */
#define PC_MLRI_DQR (PC_MLRI_TH + 4 * PC_MLRI_R_GREEN)
#define PC_MLRI_DQS (PC_MLRI_TW + 4 * PC_MLRI_R_GREEN)
#define PC_MLRI_DAR (PC_MLRI_TH + 2 * PC_MLRI_R_GREEN)
#define PC_MLRI_DAS (PC_MLRI_TW + 2 * PC_MLRI_R_GREEN)

template <int IN>
PC_DEV void pc_mlri_dir_impl(const pc_mlri_kp &k)
{
    const int R = PC_MLRI_R_GREEN;
    const int W = k.W, H = k.H, tid = threadIdx.x, d = k.d;
    const int dx = d == 0, dy = d == 1;
    const int x0 = blockIdx.x * PC_MLRI_TW, y0 = blockIdx.y * PC_MLRI_TH;
    const int ac0 = pc_mlri_imax(0, x0 - R), ac1 = pc_mlri_imin(W, x0 + PC_MLRI_TW + R);
    const int ar0 = pc_mlri_imax(0, y0 - R), ar1 = pc_mlri_imin(H, y0 + PC_MLRI_TH + R);
    const int qc0 = pc_mlri_imax(0, ac0 - R), qc1 = pc_mlri_imin(W, ac1 + R);
    const int qr0 = pc_mlri_imax(0, ar0 - R), qr1 = pc_mlri_imin(H, ar1 + R);
    const int nqc = qc1 - qc0, nqr = qr1 - qr0, nac = ac1 - ac0;
    PC_SMEM_DECL(smem);
    float *q = (float *)smem;                              /* [4][DQR][DQS] */
    float *V = q + 4 * PC_MLRI_DQR * PC_MLRI_DQS;          /* [2 slots][4][DQS] */
    float *AB = V + 8 * PC_MLRI_DQS;                       /* [2 slots x (a, b)][DAR][DAS] */
    float *V2 = AB + 4 * PC_MLRI_DAR * PC_MLRI_DAS;        /* [4][DAS] */
    const int qplane = PC_MLRI_DQR * PC_MLRI_DQS, aplane = PC_MLRI_DAR * PC_MLRI_DAS;
    for (int i = tid; i < nqr * nqc; i += PC_MLRI_NT) {
        int xi = i % nqc, yi = i / nqc;
        float qq[4];
        pc_mlri_q<IN>(k, 1, dx, dy, qc0 + xi, qr0 + yi, qq);
        for (int j = 0; j < 4; j++)
            q[j * qplane + yi * PC_MLRI_DQS + xi] = qq[j];
    }
    __syncthreads();
    const int yend = pc_mlri_imin(y0 + PC_MLRI_TH, H);
    for (int pass = 0; pass < 2; pass++) {
        /* a, b of the pass's two classes (slot s: d = h (s, pass), d = v
         * (pass, s)) on rows [ar0, ar1) x columns [ac0, ac1) */
        for (int yr = ar0; yr < ar1; yr++) {
            const int yb = pc_mlri_imin(H - 1, yr + R);
            for (int xi = tid; xi < nqc; xi += PC_MLRI_NT) {
                const int xq = qc0 + xi;
                for (int sl = 0; sl < 2; sl++) {
                    int px = d == 0 ? sl : pass, py = d == 0 ? pass : sl;
                    if ((xq & 1) != px)
                        continue;
                    for (int j = 0; j < 4; j++) {
                        float sm = 0;
                        for (int yy = pc_mlri_lo(yr, R, py); yy <= yb; yy += 2)
                            sm += q[j * qplane + (yy - qr0) * PC_MLRI_DQS + xi];
                        V[(sl * 4 + j) * PC_MLRI_DQS + xi] = sm;
                    }
                }
            }
            __syncthreads();
            for (int xi = tid; xi < nac; xi += PC_MLRI_NT) {
                const int xr = ac0 + xi, xb = pc_mlri_imin(W - 1, xr + R);
                for (int sl = 0; sl < 2; sl++) {
                    int px = d == 0 ? sl : pass, py = d == 0 ? pass : sl;
                    int ya = pc_mlri_lo(yr, R, py), xa = pc_mlri_lo(xr, R, px);
                    int ny = ya <= yb ? (yb - ya) / 2 + 1 : 0, nx = xa <= xb ? (xb - xa) / 2 + 1 : 0;
                    float sm[4] = {0, 0, 0, 0};
                    for (int xx = xa; xx <= xb; xx += 2)
                        for (int j = 0; j < 4; j++)
                            sm[j] += V[(sl * 4 + j) * PC_MLRI_DQS + xx - qc0];
                    int n = nx * ny;
                    float a, b;
                    pc_mlri_ab((float)(n ? n : 1), sm[0], sm[1], sm[2], sm[3], &a, &b);
                    AB[(2 * sl) * aplane + (yr - ar0) * PC_MLRI_DAS + xi] = a;
                    AB[(2 * sl + 1) * aplane + (yr - ar0) * PC_MLRI_DAS + xi] = b;
                }
            }
            __syncthreads();
        }
        /* window means and the estimates for the tile's pixels of this pass */
        for (int y = y0; y < yend; y++) {
            if (d == 0 && (y & 1) != pass)
                continue; /* uniform over the block */
            const int ya = pc_mlri_imax(0, y - R), yb = pc_mlri_imin(H - 1, y + R), ny = yb - ya + 1;
            for (int xi = tid; xi < nac; xi += PC_MLRI_NT)
                for (int pl = 0; pl < 4; pl++) {
                    float sm = 0;
                    for (int yy = ya; yy <= yb; yy++)
                        sm += AB[pl * aplane + (yy - ar0) * PC_MLRI_DAS + xi];
                    V2[pl * PC_MLRI_DAS + xi] = sm;
                }
            __syncthreads();
            const int x = x0 + tid;
            if (tid < PC_MLRI_TW && x < W && (d == 0 || (x & 1) == pass)) {
                const int xa = pc_mlri_imax(0, x - R), xb = pc_mlri_imin(W - 1, x + R);
                const float n = (float)((xb - xa + 1) * ny);
                const size_t o = (size_t)y * W + x;
                for (int sl = 0; sl < 2; sl++) {
                    int px = d == 0 ? sl : pass, py = d == 0 ? pass : sl;
                    float sa = 0, sb = 0;
                    for (int xx = xa; xx <= xb; xx++) {
                        sa += V2[(2 * sl) * PC_MLRI_DAS + xx - ac0];
                        sb += V2[(2 * sl + 1) * PC_MLRI_DAS + xx - ac0];
                    }
                    float ma = sa / n, mb = sb / n;
                    int own = (x & 1) == px && (y & 1) == py;
                    float gv = own ? pc_mlri_gd<IN>(k, x, y, dx, dy) : pc_mlri_raw<IN>(k, x, y);
                    k.uv[(size_t)(2 * d + !own) * k.wh + o] = pc_mlri_clip(ma * gv + mb);
                }
            }
            __syncthreads();
        }
    }
}

/* Reach of DIR's reads around its tile: 6 rows/columns of a/b and staged
 * products, 3 more for the products' own stencil. */
PC_DEV void pc_mlri_dir_body(const pc_mlri_kp &k)
{
    if (pc_mlri_interior(k, blockIdx.x * PC_MLRI_TW, blockIdx.y * PC_MLRI_TH, 3 * PC_MLRI_R_GREEN))
        pc_mlri_dir_impl<1>(k);
    else
        pc_mlri_dir_impl<0>(k);
}

PC_HD size_t pc_mlri_dir_smem(void)
{
    return ((size_t)4 * PC_MLRI_DQR * PC_MLRI_DQS + 8 * PC_MLRI_DQS + 4 * PC_MLRI_DAR * PC_MLRI_DAS +
            4 * PC_MLRI_DAS) *
           sizeof(float);
}

/* AB_RB: a and b of the red class (ox, oy) to planes 0, 1 and of the blue
 * class to planes 2, 3, radius 5, at every pixel (written to global memory:
 * the 11x11 window means of TENT_RB would need a 10-row halo of them). */
template <int IN>
PC_DEV void pc_mlri_abrb_impl(const pc_mlri_kp &k)
{
    const int R = PC_MLRI_R_RB;
    const int W = k.W, H = k.H, tid = threadIdx.x;
    const int x0 = blockIdx.x * PC_MLRI_TW, y0 = blockIdx.y * PC_MLRI_TH;
    const int cx0 = pc_mlri_imax(0, x0 - R), cx1 = pc_mlri_imin(W, x0 + PC_MLRI_TW + R);
    const int ry0 = pc_mlri_imax(0, y0 - R), ry1 = pc_mlri_imin(H, y0 + PC_MLRI_TH + R);
    const int ncols = cx1 - cx0, nrows = ry1 - ry0;
    PC_SMEM_DECL(smem);
    float *q = (float *)smem; /* [4][nrows][QS] */
    const int qplane = (PC_MLRI_TH + 2 * R) * PC_MLRI_QS;
    float *V = q + 4 * qplane; /* [2 row parities][4][QS] */
    /* Stage the products of the red and blue sites of the tile + halo. */
    for (int i = tid; i < nrows * ncols; i += PC_MLRI_NT) {
        int xi = i % ncols, yi = i / ncols, x = cx0 + xi, y = ry0 + yi;
        if (((x ^ k.ox) & 1) != ((y ^ k.oy) & 1))
            continue;
        float qq[4];
        pc_mlri_q<IN>(k, 0, 0, 0, x, y, qq);
        for (int j = 0; j < 4; j++)
            q[j * qplane + yi * PC_MLRI_QS + xi] = qq[j];
    }
    __syncthreads();
    const int yend = pc_mlri_imin(y0 + PC_MLRI_TH, H);
    for (int y = y0; y < yend; y++) {
        const int yb = pc_mlri_imin(H - 1, y + R);
        /* Column sums over the rows of the class living in this column. */
        for (int xi = tid; xi < ncols; xi += PC_MLRI_NT) {
            for (int py = 0; py < 2; py++) {
                if (py != (((cx0 + xi) ^ k.ox ^ k.oy) & 1))
                    continue;
                for (int j = 0; j < 4; j++) {
                    float s = 0;
                    for (int yy = pc_mlri_lo(y, R, py); yy <= yb; yy += 2)
                        s += q[j * qplane + (yy - ry0) * PC_MLRI_QS + xi];
                    V[(py * 4 + j) * PC_MLRI_QS + xi] = s;
                }
            }
        }
        __syncthreads();
        const int x = x0 + tid;
        if (tid < PC_MLRI_TW && x < W) {
            const int xb = pc_mlri_imin(W - 1, x + R);
            for (int c = 0; c < 2; c++) {
                int px = k.ox ^ c, py = k.oy ^ c;
                int ya = pc_mlri_lo(y, R, py), xa = pc_mlri_lo(x, R, px);
                int ny = ya <= yb ? (yb - ya) / 2 + 1 : 0, nx = xa <= xb ? (xb - xa) / 2 + 1 : 0;
                float s[4] = {0, 0, 0, 0};
                for (int xx = xa; xx <= xb; xx += 2)
                    for (int j = 0; j < 4; j++)
                        s[j] += V[(py * 4 + j) * PC_MLRI_QS + xx - cx0];
                int n = nx * ny;
                float a, b;
                pc_mlri_ab((float)(n ? n : 1), s[0], s[1], s[2], s[3], &a, &b);
                size_t o = (size_t)y * W + x;
                k.ab[(size_t)(2 * c) * k.wh + o] = a;
                k.ab[(size_t)(2 * c + 1) * k.wh + o] = b;
            }
        }
        __syncthreads();
    }
}

/* Reach: the 5-row/column window halo plus the 2-D Laplacian's 2. */
PC_DEV void pc_mlri_abrb_body(const pc_mlri_kp &k)
{
    if (pc_mlri_interior(k, blockIdx.x * PC_MLRI_TW, blockIdx.y * PC_MLRI_TH, PC_MLRI_R_RB + 2))
        pc_mlri_abrb_impl<1>(k);
    else
        pc_mlri_abrb_impl<0>(k);
}

PC_HD size_t pc_mlri_abrb_smem(void)
{
    return (size_t)(4 * (PC_MLRI_TH + 2 * PC_MLRI_R_RB) + 8) * PC_MLRI_QS * sizeof(float);
}

/* TENT_RB: window means (11x11, column sums first) of red's and blue's a
 * and b, and the tentative red and blue with the full green as the guide. */
PC_DEV void pc_mlri_tentrb_body(const pc_mlri_kp &k)
{
    const int R = PC_MLRI_R_RB;
    const int W = k.W, H = k.H, tid = threadIdx.x;
    const int x0 = blockIdx.x * PC_MLRI_TW, y0 = blockIdx.y * PC_MLRI_TH;
    const int cx0 = pc_mlri_imax(0, x0 - R), cx1 = pc_mlri_imin(W, x0 + PC_MLRI_TW + R);
    const int ncols = cx1 - cx0;
    const int nplanes = 4;
    PC_SMEM_DECL(smem);
    float *V = (float *)smem; /* [4][QS] */
    const int yend = pc_mlri_imin(y0 + PC_MLRI_TH, H);
    for (int y = y0; y < yend; y++) {
        const int ya = pc_mlri_imax(0, y - R), yb = pc_mlri_imin(H - 1, y + R), ny = yb - ya + 1;
        for (int xi = tid; xi < ncols; xi += PC_MLRI_NT) {
            const size_t col = (size_t)(cx0 + xi);
            for (int pl = 0; pl < nplanes; pl++) {
                const float *P = k.ab + (size_t)pl * k.wh + col;
                float s = 0;
                for (int yy = ya; yy <= yb; yy++)
                    s += P[(size_t)yy * W];
                V[pl * PC_MLRI_QS + xi] = s;
            }
        }
        __syncthreads();
        const int x = x0 + tid;
        if (tid < PC_MLRI_TW && x < W) {
            const int xa = pc_mlri_imax(0, x - R), xb = pc_mlri_imin(W - 1, x + R);
            const float n = (float)((xb - xa + 1) * ny);
            const size_t o = (size_t)y * W + x;
            for (int c = 0; c < 2; c++) {
                float sa = 0, sb = 0;
                for (int xx = xa; xx <= xb; xx++) {
                    sa += V[(2 * c) * PC_MLRI_QS + xx - cx0];
                    sb += V[(2 * c + 1) * PC_MLRI_QS + xx - cx0];
                }
                float ma = sa / n, mb = sb / n;
                k.t[(size_t)c * k.wh + o] = pc_mlri_clip(ma * k.g[o] + mb);
            }
        }
        __syncthreads();
    }
}

PC_HD size_t pc_mlri_tentrb_smem(void) { return (size_t)4 * PC_MLRI_QS * sizeof(float); }

/* GREEN: colour differences of both directions for the tile + 4 halo
 * (in-image coordinates; every read index is mirrored exactly as in the
 * reference, which keeps it inside that region), then the weighted
 * combination. */
#define PC_MLRI_GH 4
#define PC_MLRI_GS (PC_MLRI_TW + 2 * PC_MLRI_GH)

template <int IN>
PC_DEV float pc_mlri_grad3(const float *D, int rx0, int ry0, int W, int H, int dx, int dy, int x, int y)
{
    float s = 0;
    for (int b = -1; b <= 1; b++)
        for (int a = -1; a <= 1; a++) {
            int xx = pc_mlri_mir<IN>(x + a, W), yy = pc_mlri_mir<IN>(y + b, H);
            float t = D[(pc_mlri_mir<IN>(yy - dy, H) - ry0) * PC_MLRI_GS + pc_mlri_mir<IN>(xx - dx, W) - rx0] -
                      D[(pc_mlri_mir<IN>(yy + dy, H) - ry0) * PC_MLRI_GS + pc_mlri_mir<IN>(xx + dx, W) - rx0];
            s += t < 0 ? -t : t;
        }
    return s;
}

template <int IN>
PC_DEV float pc_mlri_side(const float *D, int rx0, int ry0, int W, int H, int sx, int sy, int x, int y)
{
    const float gw[5] = {PC_MLRI_GW0, PC_MLRI_GW1, PC_MLRI_GW2, PC_MLRI_GW3, PC_MLRI_GW4};
    float s = 0;
    for (int kk = 4; kk >= 0; kk--)
        s += gw[kk] * D[(pc_mlri_mir<IN>(y + kk * sy, H) - ry0) * PC_MLRI_GS + pc_mlri_mir<IN>(x + kk * sx, W) - rx0];
    return s;
}

template <int IN>
PC_DEV void pc_mlri_green_impl(const pc_mlri_kp &k)
{
    const int W = k.W, H = k.H, tid = threadIdx.x;
    const int x0 = blockIdx.x * PC_MLRI_TW, y0 = blockIdx.y * PC_MLRI_TH;
    const int rx0 = pc_mlri_imax(0, x0 - PC_MLRI_GH), rx1 = pc_mlri_imin(W, x0 + PC_MLRI_TW + PC_MLRI_GH);
    const int ry0 = pc_mlri_imax(0, y0 - PC_MLRI_GH), ry1 = pc_mlri_imin(H, y0 + PC_MLRI_TH + PC_MLRI_GH);
    const int ncols = rx1 - rx0, nrows = ry1 - ry0;
    PC_SMEM_DECL(smem);
    float *Dh = (float *)smem, *Dv = Dh + (PC_MLRI_TH + 2 * PC_MLRI_GH) * PC_MLRI_GS;
    for (int i = tid; i < nrows * ncols; i += PC_MLRI_NT) {
        int xi = i % ncols, yi = i / ncols, x = rx0 + xi, y = ry0 + yi;
        float m = pc_mlri_raw<IN>(k, x, y);
        int gsite = ((x ^ k.ox) & 1) != ((y ^ k.oy) & 1);
        for (int d = 0; d < 2; d++) {
            int dx = d == 0, dy = d == 1;
            const float *U = k.uv + (size_t)(2 * d) * k.wh, *Vp = k.uv + (size_t)(2 * d + 1) * k.wh;
            float rm = pc_mlri_raw<IN>(k, x - dx, y - dy) - pc_mlri_pl<IN>(k, U, x - dx, y - dy);
            float rp = pc_mlri_raw<IN>(k, x + dx, y + dy) - pc_mlri_pl<IN>(k, U, x + dx, y + dy);
            float est = pc_mlri_clip(Vp[(size_t)y * W + x] + 0.5f * (rm + rp));
            (d ? Dv : Dh)[yi * PC_MLRI_GS + xi] = gsite ? m - est : est - m;
        }
    }
    __syncthreads();
    const int x = x0 + tid;
    if (tid >= PC_MLRI_TW || x >= W)
        return; /* no barrier follows */
    const int yend = pc_mlri_imin(y0 + PC_MLRI_TH, H);
    for (int y = y0; y < yend; y++) {
        float m = pc_mlri_raw<IN>(k, x, y);
        int gsite = ((x ^ k.ox) & 1) != ((y ^ k.oy) & 1);
        float g = m;
        if (!gsite) {
            float wn = pc_mlri_w(pc_mlri_grad3<IN>(Dv, rx0, ry0, W, H, 0, 1, x, pc_mlri_mir<IN>(y - 1, H)));
            float ws = pc_mlri_w(pc_mlri_grad3<IN>(Dv, rx0, ry0, W, H, 0, 1, x, pc_mlri_mir<IN>(y + 1, H)));
            float ww = pc_mlri_w(pc_mlri_grad3<IN>(Dh, rx0, ry0, W, H, 1, 0, pc_mlri_mir<IN>(x - 1, W), y));
            float we = pc_mlri_w(pc_mlri_grad3<IN>(Dh, rx0, ry0, W, H, 1, 0, pc_mlri_mir<IN>(x + 1, W), y));
            float num = wn * pc_mlri_side<IN>(Dv, rx0, ry0, W, H, 0, -1, x, y) +
                        ws * pc_mlri_side<IN>(Dv, rx0, ry0, W, H, 0, 1, x, y) +
                        ww * pc_mlri_side<IN>(Dh, rx0, ry0, W, H, -1, 0, x, y) +
                        we * pc_mlri_side<IN>(Dh, rx0, ry0, W, H, 1, 0, x, y);
            g = pc_mlri_clip(m + num / (wn + ws + ww + we));
        }
        k.g[(size_t)y * W + x] = g;
    }
}

/* Reach: the 4-pixel halo of colour differences, each reading 1 more. */
PC_DEV void pc_mlri_green_body(const pc_mlri_kp &k)
{
    if (pc_mlri_interior(k, blockIdx.x * PC_MLRI_TW, blockIdx.y * PC_MLRI_TH, PC_MLRI_GH + 1))
        pc_mlri_green_impl<1>(k);
    else
        pc_mlri_green_impl<0>(k);
}

PC_HD size_t pc_mlri_green_smem(void)
{
    return (size_t)2 * (PC_MLRI_TH + 2 * PC_MLRI_GH) * PC_MLRI_GS * sizeof(float);
}

/* FINAL: one 2x2 block per thread (the NV12 chroma block). */
PC_DEV float pc_mlri_final_c(const pc_mlri_kp &k, const float *t, int cx, int cy, int x, int y)
{
    int sx = (x & 1) != cx, sy = (y & 1) != cy;
#define PC_MLRI_RES(a, b) (pc_mlri_raw(k, x + (a), y + (b)) - pc_mlri_pl(k, t, x + (a), y + (b)))
    float tv = t[(size_t)y * k.W + x], res;
    if (!sx && !sy)
        return pc_mlri_raw(k, x, y);
    if (sx && !sy)
        res = 0.5f * (PC_MLRI_RES(-1, 0) + PC_MLRI_RES(1, 0));
    else if (!sx && sy)
        res = 0.5f * (PC_MLRI_RES(0, -1) + PC_MLRI_RES(0, 1));
    else
        res = 0.25f * (PC_MLRI_RES(-1, -1) + PC_MLRI_RES(1, -1) + PC_MLRI_RES(-1, 1) + PC_MLRI_RES(1, 1));
#undef PC_MLRI_RES
    return pc_mlri_clip(tv + res);
}

PC_DEV void pc_mlri_final_body(const pc_mlri_kp &k)
{
    const int bx = blockIdx.x * PC_MLRI_NT + threadIdx.x, by = blockIdx.y;
    const int x0 = 2 * bx, y = 2 * by;
    if (x0 >= k.W)
        return;
    int v[2][2][3];
    for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++) {
            int x = x0 + a, yy = y + b;
            v[b][a][0] = pc_mlri_u8(pc_mlri_final_c(k, k.t, k.ox, k.oy, x, yy));
            v[b][a][1] = pc_mlri_u8(k.g[(size_t)yy * k.W + x]);
            v[b][a][2] = pc_mlri_u8(pc_mlri_final_c(k, k.t + k.wh, k.ox ^ 1, k.oy ^ 1, x, yy));
        }
    /* a grid picture: the block's camera tile (0 when stacked) */
    const int go[3] = {pc_grid_offset(k.grid, k.W, k.fmt, 0, y, k.p0), pc_grid_offset(k.grid, k.W, k.fmt, 1, y, k.p1),
                       pc_grid_offset(k.grid, k.W, k.fmt, 2, y, k.p2)};
    if (k.fmt == PC_FMT_RGB24) {
        for (int b = 0; b < 2; b++)
            for (int a = 0; a < 2; a++)
                for (int c = 0; c < 3; c++)
                    k.d0[(size_t)(y + b) * k.p0 + go[0] + 3 * (x0 + a) + c] = (uint8_t)v[b][a][c];
        return;
    }
    /* §8: Y' per pixel, Cb/Cr from the block's sums (as store_block), with
     * the coefficients of the block's band. */
    int band = k.n_bands > 1 ? y / k.band_rows : 0;
    const pc_yuv_coeffs &c = k.bands[band < k.n_bands ? band : k.n_bands - 1];
    int sr = 0, sg = 0, sb = 0;
    for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++) {
            int r = v[b][a][0], g = v[b][a][1], bl = v[b][a][2];
            int yv = (c.y[0] * r + c.y[1] * g + c.y[2] * bl + c.y_offset) >> 16;
            k.d0[(size_t)(y + b) * k.p0 + go[0] + x0 + a] = (uint8_t)(yv < 0 ? 0 : yv > 255 ? 255 : yv);
            sr += r;
            sg += g;
            sb += bl;
        }
    const int coff = (128 << 18) + (1 << 17);
    int cb = (c.cb[0] * sr + c.cb[1] * sg + c.cb[2] * sb + coff) >> 18;
    int cr = (c.cr[0] * sr + c.cr[1] * sg + c.cr[2] * sb + coff) >> 18;
    cb = cb < 0 ? 0 : cb > 255 ? 255 : cb;
    cr = cr < 0 ? 0 : cr > 255 ? 255 : cr;
    if (k.fmt == PC_FMT_NV12) {
        k.d1[(size_t)by * k.p1 + go[1] + x0] = (uint8_t)cb;
        k.d1[(size_t)by * k.p1 + go[1] + x0 + 1] = (uint8_t)cr;
    } else {
        k.d1[(size_t)by * k.p1 + go[1] + bx] = (uint8_t)cb;
        k.d2[(size_t)by * k.p2 + go[2] + bx] = (uint8_t)cr;
    }
}

/* Fills kp's destination fields from a picture: planes, format and the
 * coefficients (its per-camera bands, else yc for every row). Returns -1
 * when the picture has more bands than the kernel parameters hold. */
PC_HD int pc_mlri_set_dst(pc_mlri_kp &k, const pc_picture *d, const pc_yuv_coeffs &yc)
{
    k.fmt = d->fmt;
    k.d0 = d->plane[0];
    k.d1 = d->plane[1];
    k.d2 = d->plane[2];
    k.p0 = (int)d->pitch[0];
    k.p1 = (int)d->pitch[1];
    k.p2 = (int)d->pitch[2];
    k.grid = pc_grid_pack(d);
    if (d->bands && d->fmt != PC_FMT_RGB24) {
        if (d->n_bands < 1 || d->n_bands > PC_KMAX_BANDS || d->band_rows < 2)
            return -1;
        for (int i = 0; i < d->n_bands; i++)
            k.bands[i] = d->bands[i];
        k.n_bands = d->n_bands;
        k.band_rows = d->band_rows;
    } else {
        k.bands[0] = yc;
        k.n_bands = 1;
        k.band_rows = d->height;
    }
    return 0;
}

/* The launch sequence, shared by the device host code (cuda_mlri.cu) and
 * the emulation (cuda_emu.cc). L(kind, grid, block, smem, kp) launches one
 * kernel (PC_MLRI_K_*). Returns the first nonzero L result. */
enum { PC_MLRI_K_DIR = 0, PC_MLRI_K_GREEN, PC_MLRI_K_ABRB, PC_MLRI_K_TENTRB, PC_MLRI_K_FINAL };
#define PC_MLRI_LAUNCHES 6

template <class L>
int pc_mlri_sequence(L &launch, pc_mlri_kp kp)
{
    dim3 tiles((kp.W + PC_MLRI_TW - 1) / PC_MLRI_TW, (kp.H + PC_MLRI_TH - 1) / PC_MLRI_TH);
    dim3 blk(PC_MLRI_NT);
    int rc;
    for (int d = 0; d < 2; d++) {
        kp.d = d;
        if ((rc = launch(PC_MLRI_K_DIR, tiles, blk, pc_mlri_dir_smem(), kp)))
            return rc;
    }
    if ((rc = launch(PC_MLRI_K_GREEN, tiles, blk, pc_mlri_green_smem(), kp)))
        return rc;
    if ((rc = launch(PC_MLRI_K_ABRB, tiles, blk, pc_mlri_abrb_smem(), kp)))
        return rc;
    if ((rc = launch(PC_MLRI_K_TENTRB, tiles, blk, pc_mlri_tentrb_smem(), kp)))
        return rc;
    dim3 blocks((kp.W / 2 + PC_MLRI_NT - 1) / PC_MLRI_NT, kp.H / 2);
    return launch(PC_MLRI_K_FINAL, blocks, blk, 0, kp);
}

/* Device temporaries: a/b of red and blue (4), u/v of both directions (4),
 * green (1), tentative red and blue (2) float planes. */
#define PC_MLRI_GPU_PLANES 11

#endif
