/* cuda_mlri.cuh - the CUDA kernels of MLRI (minimised-Laplacian residual
 * interpolation; the C reference is mlri_reference.c, the method
 * docs/mlri.md). Compiled by nvcc (cuda_mlri.cu) and, after cuda_emu.h, as
 * host C++ for the emulation test (cuda_emu.cc), like cuda_kernel.cuh.
 *
 * Three kernels, three launches per frame (the reference's 24 row stages,
 * fused):
 *   1. DIR    grid z = direction (h, v) in one launch: per CFA class the
 *             green guided filter's slope and intercept, their 7x7 window
 *             means and the own/other estimates -> u_d, v_d (4 planes)
 *   2. GREEN  colour differences, weights, full green -> g (1 plane)
 *   3. RB     red and blue guided filters (11x11), their window means, the
 *             tentative red and blue, residual interpolation, rounding and
 *             RGB24/RGBX32/NV12/I420 out (no plane: the tentative values live in
 *             a ring of rows in shared memory)
 *
 * Why this shape is fast (the cost model: an H100 issues ~2,500 thread
 * instructions per pixel of a 2040x5400 frame in 1 ms, and moves a float
 * plane there and back in ~30 us):
 *  - Column walkers. DIR and RB are "one thread per column, walking down
 *    a tall tile" (64 / 72 rows by default): every box sum is
 *    separable, and its vertical half is a running sum in registers (add
 *    the row entering the window, subtract the row leaving it, read back
 *    from a per-column ring in shared memory that only its own thread
 *    touches). A window of any height then costs 2 adds per row instead of
 *    2r+1, and the halo of 2r rows is paid once per tile, not per 8 rows
 *    (the previous kernels recomputed every window from scratch on 8-row
 *    tiles: 2.5x the rows, 7-11 adds per sum). Only the horizontal half
 *    reads neighbours, from shared row buffers.
 *  - Four rows per step, so the parity of every row in the unrolled step
 *    is a compile-time constant (tiles start on even rows): the CFA class
 *    bookkeeping (which sums belong to which class) costs nothing, and a
 *    barrier is shared by 4 rows.
 *  - The horizontal halves swap roles: a thread takes 4 adjacent columns
 *    of one row and slides the window along them, so each column is read
 *    once for 4 pixels and a pixel's sum costs 1-2 additions after the
 *    first (a thread per column would read 7 or 11 columns per pixel).
 *  - The green sums are exact (the guide and target are sums of 8-bit
 *    samples: 2 I p, 4 I^2, 2 guide, target are integers and fit in 24
 *    bits over a 7x7 class window, so float sums of them are exact in any
 *    order): the running sums cannot drift and the slopes and intercepts
 *    see the reference's window sums exactly.
 *  - 16-byte vector loads and stores of shared memory (4 sums per site in
 *    one float4): a quarter of the shared-memory instructions.
 *  - Slopes and intercepts never reach device memory (they would be 8
 *    float planes per direction and 4 for red/blue); nor do the tentative
 *    red and blue (RB finishes each row pair as soon as its 3x3
 *    neighbourhood exists, from a ring of 8 rows in shared memory).
 *    Device temporaries: 5 float planes (u, v per direction and green)
 *    instead of 11.
 *  - Divisions: the guided filter's 5 divisions per class become one
 *    reciprocal of the site count (a compile-time constant away from the
 *    frame border) and one division.
 *  - Tiles away from the frame border run an instance without the
 *    reflect-101 index folding and with constant window counts.
 *
 * The rule the kernels keep against the reference (docs/mlri.md): every
 * output sample within 1 code value, at least 99.99 % identical. Running
 * and sliding float sums (red/blue, and the window means of a and b) and
 * the reciprocal-based divisions round differently from the reference's
 * top-to-bottom sums and true divisions; the running sums restart from
 * zero at every tile, so their rounding error cannot grow past one tile.
 * Built with -fmad=false and true divisions, the device rounds exactly as
 * the emulation (tests/test_cuda_emu.c) does: what the emulation finds
 * there is what the device does.
 */
#ifndef PANOCAP_CUDA_MLRI_CUH
#define PANOCAP_CUDA_MLRI_CUH

#include "cuda_common.cuh"
#include "debayer.h"
#include "mlri_formulas.h"

#include <stdio.h>
#include <stdlib.h>

/* Threads per CTA of every MLRI kernel: one per staged column of a walker.
 * 128 = 4 warps; the halo columns (12 for DIR, 24 for RB) stay under 20 %. */
#define PC_MLRI_NT 128

struct pc_mlri_kp {
    const uint8_t *src;
    int sp; /* raw pitch */
    int W, H, ox, oy;
    size_t wh; /* W * H: plane stride */
    float *uv; /* 4 planes: u_h, v_h, u_v, v_v */
    float *g;  /* full green */
    int dth, bth; /* rows per CTA of DIR and RB (even; pc_mlri_sequence: 0 = the defaults) */
    int dir_lean; /* DIR's lean variant (pc_mlri_dir_sm_lean) */
    int fmt;      /* pc_pixfmt */
    uint8_t *d0, *d1, *d2;
    int p0, p1, p2;
    /* §8 coefficients per band of band_rows rows (per-camera matrices,
     * docs/colour.md); one band of the plain ones when the picture has none */
    pc_yuv_coeffs bands[PC_KMAX_BANDS];
    int n_bands, band_rows;
    int grid; /* a grid picture's tiles (pc_grid_pack, pc_grid_offset); 0: stacked */
};

/* 16-byte vectors: one shared-memory instruction moves the 4 sums of a
 * site (alignas: nvcc emits 128-bit loads and stores for them). */
struct alignas(16) pc_mlri_f4 {
    float x, y, z, w;
};
struct alignas(8) pc_mlri_f2 {
    float x, y;
};
PC_DEV void pc_mlri_sub(pc_mlri_f4 &a, const pc_mlri_f4 &b)
{
    a.x -= b.x;
    a.y -= b.y;
    a.z -= b.z;
    a.w -= b.w;
}
PC_DEV void pc_mlri_add(pc_mlri_f4 &a, const pc_mlri_f4 &b)
{
    a.x += b.x;
    a.y += b.y;
    a.z += b.z;
    a.w += b.w;
}
/* a += b - c, the running-sum step */
PC_DEV void pc_mlri_slide(pc_mlri_f4 &a, const pc_mlri_f4 &b, const pc_mlri_f4 &c)
{
    a.x += b.x - c.x;
    a.y += b.y - c.y;
    a.z += b.z - c.z;
    a.w += b.w - c.w;
}

/* reflect-101. IN = 1: the caller's block reads nothing outside the frame
 * (interior tiles, most of them), so the index is used as it is: the same
 * values, without the two compares and selects per read. */
template <int IN = 0>
PC_DEV int pc_mlri_mir(int i, int n)
{
    return IN ? i : i < 0 ? -i : i >= n ? 2 * n - 2 - i : i;
}
template <int IN = 0>
PC_DEV int pc_mlri_rawi(const pc_mlri_kp &k, int x, int y)
{
    return k.src[(size_t)pc_mlri_mir<IN>(y, k.H) * k.sp + pc_mlri_mir<IN>(x, k.W)];
}
template <int IN = 0>
PC_DEV float pc_mlri_raw(const pc_mlri_kp &k, int x, int y)
{
    return (float)pc_mlri_rawi<IN>(k, x, y);
}
template <int IN = 0>
PC_DEV float pc_mlri_pl(const pc_mlri_kp &k, const float *p, int x, int y)
{
    return p[(size_t)pc_mlri_mir<IN>(y, k.H) * k.W + pc_mlri_mir<IN>(x, k.W)];
}
PC_DEV int pc_mlri_imax(int a, int b) { return a > b ? a : b; }

/* Position of column c in a shared row buffer of 16-byte elements. A
 * 16-byte load serves 8 lanes per shared-memory wavefront; where each lane
 * reads column 4 g + o (the sliding horizontal sums: lane g, offset o) the
 * 8 lanes of a wavefront would hit only 2 of the 8 bank groups (4-way
 * conflicts, 4x the time). XOR-ing bits 2-4 of c into bits 0-2 (a
 * permutation inside every aligned group of 8) spreads them over all 8
 * for every offset, and keeps lane = column accesses conflict-free. */
PC_DEV int pc_mlri_sw(int c) { return c ^ ((c >> 2) & 7); }
PC_DEV int pc_mlri_imin(int a, int b) { return a < b ? a : b; }

/* Whether the rectangle [x0 - reach, x1 + reach) x [y0 - reach, y1 + reach)
 * lies inside the frame: a block whose reads all fall there may run its
 * IN = 1 instance. */
PC_DEV int pc_mlri_inside(const pc_mlri_kp &k, int x0, int x1, int y0, int y1, int reach)
{
    return x0 - reach >= 0 && x1 + reach <= k.W && y0 - reach >= 0 && y1 + reach <= k.H;
}

/* Number of integers of parity par in [lo, hi] (lo >= 0). */
PC_DEV int pc_mlri_npar(int lo, int hi, int par)
{
    if ((lo & 1) != par)
        lo++;
    return lo <= hi ? (hi - lo) / 2 + 1 : 0;
}

/* 1 / n for a window count (border tiles only: the interior instances use
 * compile-time constants); n = 0 (an empty class window) counts as 1, as
 * in the reference (its sums are 0 then). A true division, correctly
 * rounded like the constants: a fast reciprocal here made the border
 * tiles of small frames differ from the reference 10x more often. */
PC_DEV float pc_mlri_rcp(int n) { return 1.0f / (float)(n > 0 ? n : 1); }

/* The guided filter's slope and intercept from the window sums of one
 * class (reference: pc_mlri_ab): the same formula with the count's
 * reciprocal rn, a = mean(I p) / max(mean(I I), floor), b = mean(t) -
 * a mean(guide). One division instead of five. It is a true division
 * (not __fdividef): with it, and with no contracted multiply-adds
 * (-fmad=false), the device computes exactly what the emulation computes,
 * so the emulation test predicts the device's differences sample for
 * sample. */
PC_DEV void pc_mlri_ab_fast(float sip, float sii, float sg, float st, float rn, float &a, float &b)
{
    float mii = sii * rn;
    mii = mii < PC_MLRI_VAR_MIN ? PC_MLRI_VAR_MIN : mii;
    a = (sip * rn) / mii;
    b = st * rn - a * (sg * rn);
}

/* ---- DIR: the directional green estimates -------------------------------
 *
 * A CTA walks k.dth output rows of PC_MLRI_DTW columns; thread t owns
 * column xq = x0 - 6 + t of the tile plus its 6-column halo (3 for the
 * a/b window, 3 for the class window that makes a/b). Per step of 4 rows:
 *   A  (thread = column) the site products q of the 4 entering rows and
 *      the running vertical class sums V[row parity] over the 7 rows
 *      around the a/b row 3 above -> row buffer v;
 *   B  (thread = 4 adjacent columns of one row: 32 threads per row) the
 *      horizontal class sums over 7 columns, slid along the 4 columns
 *      (each column read once for 4 pixels, about 3 additions per pixel
 *      and sum instead of 6), a and b of every class -> buffer ab;
 *   C  (thread = column) the running vertical sums of a and b over the 7
 *      rows around the output row 3 above -> buffer va (in place of ab);
 *   D  (thread = 4 columns of one row) the horizontal a/b sums over 7
 *      columns, slid the same way, of the 2 classes the output row needs,
 *      the own and other estimates.
 * Three barriers per 4 rows (five in the lean variant, below). The walk
 * starts 8 rows above the tile; ring slots and sums start at zero, which
 * is also what rows outside the frame hold (the reference sums over the
 * window clipped to the frame). */
#define PC_MLRI_DHALO (2 * PC_MLRI_R_GREEN)
#define PC_MLRI_DTW (PC_MLRI_NT - 2 * PC_MLRI_DHALO)
/* Default rows per CTA (kp.dth; any even number works): 64 (measured on
 * an H100 at 2040x5400: 4 % faster in all than 128, whose 3.9 waves of 3
 * CTAs per SM leave more of the last one idle than the rows walked above
 * and below the tile (8 + 6: 22 % at 64) cost). */
#define PC_MLRI_DTH 64
#define PC_MLRI_DWIN (2 * PC_MLRI_R_GREEN + 1)
#define PC_MLRI_DRS 4 /* rows per step */

struct pc_mlri_dir_sm {
    pc_mlri_f4 qr[PC_MLRI_DWIN][PC_MLRI_NT];    /* ring: q of the last 7 rows, per column */
    pc_mlri_f4 ar[PC_MLRI_DWIN][2][PC_MLRI_NT]; /* ring: a/b of the last 7 a/b rows */
    pc_mlri_f4 v[PC_MLRI_DRS][2][PC_MLRI_NT];   /* [row of step][row parity]: vertical class sums */
    pc_mlri_f4 ab[PC_MLRI_DRS][2][PC_MLRI_NT];  /* [row of step][j]: a/b, then their vertical sums */
};

/* The lean variant (kp.dir_lean): no q ring (the leaving rows' products
 * are computed again: the same values) and one buffer for v and ab (two
 * more barriers per step keep their uses apart): 44 KB instead of 74, so 4
 * CTAs per SM fit instead of 3 (with at most 128 registers). */
struct pc_mlri_dir_sm_lean {
    pc_mlri_f4 ar[PC_MLRI_DWIN][2][PC_MLRI_NT];
    pc_mlri_f4 vab[PC_MLRI_DRS][2][PC_MLRI_NT];
};

PC_HD size_t pc_mlri_dir_smem(int lean) { return lean ? sizeof(pc_mlri_dir_sm_lean) : sizeof(pc_mlri_dir_sm); }

/* Site products along direction D (0 = h, 1 = v), computed in integers
 * and stored as floats (reference: site_q, whose values are these over 2,
 * 4, 2 and 1): 2 I p, 4 I^2, 2 guide, target. Every one is an integer
 * below 2^21 and every window sum of them below 2^24, so float sums of
 * them are exact in any order: the running and sliding sums cannot drift,
 * and float adds run at twice the rate of integer adds (and the 4
 * conversions per site happen once, not once per window). Zero outside
 * the frame. */
template <int D, int IN>
PC_DEV pc_mlri_f4 pc_mlri_dir_q(const pc_mlri_kp &k, int x, int y)
{
    pc_mlri_f4 q = {0, 0, 0, 0};
    if (!IN && (x < 0 || x >= k.W || y < 0 || y >= k.H))
        return q;
    const int dx = D == 0, dy = D == 1;
    const int xm = pc_mlri_mir<IN>(x - 2 * dx, k.W), ym = pc_mlri_mir<IN>(y - 2 * dy, k.H);
    const int xp = pc_mlri_mir<IN>(x + 2 * dx, k.W), yp = pc_mlri_mir<IN>(y + 2 * dy, k.H);
    const int t = pc_mlri_rawi<IN>(k, x, y);
    const int g2 = pc_mlri_rawi<IN>(k, x - dx, y - dy) + pc_mlri_rawi<IN>(k, x + dx, y + dy);
    const int g2m = pc_mlri_rawi<IN>(k, xm - dx, ym - dy) + pc_mlri_rawi<IN>(k, xm + dx, ym + dy);
    const int g2p = pc_mlri_rawi<IN>(k, xp - dx, yp - dy) + pc_mlri_rawi<IN>(k, xp + dx, yp + dy);
    const int i2 = 2 * g2 - g2m - g2p;
    const int p = 2 * t - pc_mlri_rawi<IN>(k, xm, ym) - pc_mlri_rawi<IN>(k, xp, yp);
    q.x = (float)(i2 * p);
    q.y = (float)(i2 * i2);
    q.z = (float)g2;
    q.w = (float)t;
    return q;
}

/* a and b from the class sums S (scaled as pc_mlri_dir_q): pc_mlri_ab_fast
 * of (S.x / 2, S.y / 4, S.z / 2, S.w), with the powers of 2 folded into
 * the reciprocal (exact: the same roundings, one multiply fewer each). */
PC_DEV void pc_mlri_ab_scaled(const pc_mlri_f4 &S, float rn, float &a, float &b)
{
    const float rn2 = 0.5f * rn, rn4 = 0.25f * rn;
    float mii = S.y * rn4;
    mii = mii < PC_MLRI_VAR_MIN ? PC_MLRI_VAR_MIN : mii;
    a = (S.x * rn2) / mii;
    b = S.w * rn - a * (S.z * rn2);
}

PC_DEV pc_mlri_f4 pc_mlri_f4_add(const pc_mlri_f4 &a, const pc_mlri_f4 &b)
{
    pc_mlri_f4 r = {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w};
    return r;
}
PC_DEV pc_mlri_f4 pc_mlri_f4_sub(const pc_mlri_f4 &a, const pc_mlri_f4 &b)
{
    pc_mlri_f4 r = {a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w};
    return r;
}
/* (x, y, z, w) -> (z, w, x, y): the same class pair seen from a column of
 * the other parity. */
PC_DEV pc_mlri_f4 pc_mlri_f4_swap(const pc_mlri_f4 &a)
{
    pc_mlri_f4 r = {a.z, a.w, a.x, a.y};
    return r;
}

template <int D, int IN, int LEAN>
PC_DEV void pc_mlri_dir_impl(const pc_mlri_kp &k)
{
    const int R = PC_MLRI_R_GREEN, NT = PC_MLRI_NT, RS = PC_MLRI_DRS;
    const int t = threadIdx.x, W = k.W, H = k.H;
    const int x0 = blockIdx.x * PC_MLRI_DTW, y0 = blockIdx.y * k.dth;
    const int qc0 = x0 - 2 * R, xq = qc0 + t; /* this thread's column (qc0 even) */
    /* B and D: row r of the step, columns c0 .. c0 + 3 of the tile */
    const int r = t >> 5, c0 = 4 * (t & 31);
    PC_SMEM_DECL(smem);
    pc_mlri_f4(*qr)[PC_MLRI_NT], (*ar)[2][PC_MLRI_NT], (*vb)[2][PC_MLRI_NT], (*ab)[2][PC_MLRI_NT];
    if (LEAN) {
        pc_mlri_dir_sm_lean &sl = *(pc_mlri_dir_sm_lean *)(void *)smem;
        qr = nullptr;
        ar = sl.ar;
        vb = ab = sl.vab;
    } else {
        pc_mlri_dir_sm &sf = *(pc_mlri_dir_sm *)(void *)smem;
        qr = sf.qr;
        ar = sf.ar;
        vb = sf.v;
        ab = sf.ab;
    }
    const pc_mlri_f4 zf = {0, 0, 0, 0};
    for (int j = 0; j < PC_MLRI_DWIN; j++) {
        if (!LEAN)
            qr[j][t] = zf;
        ar[j][0][t] = zf;
        ar[j][1][t] = zf;
    }
    pc_mlri_f4 V[2] = {zf, zf}, A[2] = {zf, zf};
    int qslot = 0, aslot = 0;
    const int rows = pc_mlri_imin(k.dth, H - y0);
    const int nsteps = (rows + 10 + RS - 1) / RS + 1;
    for (int i = 0; i < nsteps; i++) {
        const int rq0 = y0 - 8 + RS * i; /* even */
        /* A: rows rq0 + kk enter (parity kk & 1), rows rq0 + kk - 7 leave
         * (lean: computed again; rows above the walk's first never
         * entered and leave as 0; the shared buffer is D's until all of
         * D is done) */
        if (LEAN)
            __syncthreads();
        PC_UNROLL
        for (int kk = 0; kk < RS; kk++) {
            const int pk = kk & 1;
            const pc_mlri_f4 q = pc_mlri_dir_q<D, IN>(k, xq, rq0 + kk);
            pc_mlri_f4 old;
            if (LEAN) {
                old = rq0 + kk - PC_MLRI_DWIN >= y0 - 8 ? pc_mlri_dir_q<D, IN>(k, xq, rq0 + kk - PC_MLRI_DWIN) : zf;
            } else {
                old = qr[qslot][t];
                qr[qslot][t] = q;
                qslot = qslot == PC_MLRI_DWIN - 1 ? 0 : qslot + 1;
            }
            pc_mlri_add(V[pk], q);
            pc_mlri_sub(V[pk ^ 1], old);
            vb[kk][0][pc_mlri_sw(t)] = V[0];
            vb[kk][1][pc_mlri_sw(t)] = V[1];
        }
        __syncthreads();
        /* B: a/b row ra = rq0 - 3 + r (parity (r + 1) & 1); its class
         * window is full from i >= 2 (ra >= y0 - 3). Columns c0 + p, p = 0..3,
         * read columns c0 - 3 .. c0 + 6 (clamped into the tile: the results
         * of the 3 edge columns each side are never used). */
        const int ra = rq0 - R + r, pa = (r + 1) & 1;
        if (i >= 2) {
            pc_mlri_f4 col[2][10];
            PC_UNROLL
            for (int u = 0; u < 10; u++) {
                const int c = pc_mlri_imin(NT - 1, pc_mlri_imax(0, c0 - R + u));
                col[0][u] = vb[r][0][pc_mlri_sw(c)];
                col[1][u] = vb[r][1][pc_mlri_sw(c)];
            }
            if (LEAN)
                __syncthreads(); /* every v read before ab, in its place, is written */
            /* per row parity: sums over the columns of the parity of c0
             * (E) and of the other (O) for each of the 4 pixels */
            pc_mlri_f4 Sp[2][4][2]; /* [py][pixel][sx: same parity as the pixel, other] */
            PC_UNROLL
            for (int py = 0; py < 2; py++) {
                const pc_mlri_f4 *cc = col[py] + R; /* cc[u]: column c0 + u, u = -3 .. 6 */
                pc_mlri_f4 E = pc_mlri_f4_add(pc_mlri_f4_add(cc[-2], cc[0]), cc[2]);
                pc_mlri_f4 O = pc_mlri_f4_add(pc_mlri_f4_add(cc[-3], cc[-1]), pc_mlri_f4_add(cc[1], cc[3]));
                Sp[py][0][0] = E;
                Sp[py][0][1] = O;
                O = pc_mlri_f4_sub(O, cc[-3]); /* -1, 1, 3 */
                E = pc_mlri_f4_add(E, cc[4]);  /* -2, 0, 2, 4 */
                Sp[py][1][0] = O;
                Sp[py][1][1] = E;
                E = pc_mlri_f4_sub(E, cc[-2]); /* 0, 2, 4 */
                O = pc_mlri_f4_add(O, cc[5]);  /* -1, 1, 3, 5 */
                Sp[py][2][0] = E;
                Sp[py][2][1] = O;
                O = pc_mlri_f4_sub(O, cc[-1]); /* 1, 3, 5 */
                E = pc_mlri_f4_add(E, cc[6]);  /* 0, 2, 4, 6 */
                Sp[py][3][0] = O;
                Sp[py][3][1] = E;
            }
            const int cy0 = pc_mlri_imax(0, ra - R), cy1 = pc_mlri_imin(H - 1, ra + R);
            const bool rowin = IN || (ra >= 0 && ra < H);
            PC_UNROLL
            for (int p = 0; p < 4; p++) {
                const int c = c0 + p, x = qc0 + c;
                pc_mlri_f4 AB[2] = {zf, zf};
                if (IN || (rowin && x >= 0 && x < W)) {
                    const int cx0 = pc_mlri_imax(0, x - R), cx1 = pc_mlri_imin(W - 1, x + R);
                    float ab[2][2][2]; /* [py][sx][a, b] */
                    PC_UNROLL
                    for (int py = 0; py < 2; py++) {
                        const int ny = IN ? (py == pa ? R : R + 1) : pc_mlri_npar(cy0, cy1, py);
                        PC_UNROLL
                        for (int sx = 0; sx < 2; sx++) {
                            const int nx = IN ? (sx ? R + 1 : R) : pc_mlri_npar(cx0, cx1, (x & 1) ^ sx);
                            const float rn = IN ? 1.0f / (float)(nx * ny) : pc_mlri_rcp(nx * ny);
                            pc_mlri_ab_scaled(Sp[py][p][sx], rn, ab[py][sx][0], ab[py][sx][1]);
                        }
                    }
                    /* layouts that let D read its 2 classes in one vector:
                     * h: [py] = (a, b same column parity, a, b other);
                     * v: [sx] = (a, b row parity 0, a, b row parity 1) */
                    PC_UNROLL
                    for (int j = 0; j < 2; j++) {
                        const float *p0 = D == 0 ? ab[j][0] : ab[0][j];
                        const float *p1 = D == 0 ? ab[j][1] : ab[1][j];
                        AB[j].x = p0[0];
                        AB[j].y = p0[1];
                        AB[j].z = p1[0];
                        AB[j].w = p1[1];
                    }
                }
                ab[r][0][pc_mlri_sw(c)] = AB[0];
                ab[r][1][pc_mlri_sw(c)] = AB[1];
            }
        }
        __syncthreads();
        /* C: the a/b rows enter the running 7-row sums of this column */
        if (i >= 2) {
            PC_UNROLL
            for (int kk = 0; kk < RS; kk++)
                PC_UNROLL
                for (int j = 0; j < 2; j++) {
                    const pc_mlri_f4 e = ab[kk][j][pc_mlri_sw(t)];
                    const pc_mlri_f4 old = ar[aslot][j][t];
                    ar[aslot][j][t] = e;
                    pc_mlri_slide(A[j], e, old);
                    ab[kk][j][pc_mlri_sw(t)] = A[j];
                    if (j == 1)
                        aslot = aslot == PC_MLRI_DWIN - 1 ? 0 : aslot + 1;
                }
        }
        __syncthreads();
        /* D: output row ro = rq0 - 6 + r (parity r & 1), from the a/b
         * windows entered since i = 2: ro >= y0. Pixels c0 + p with
         * 6 <= c0 + p < 122; columns c0 - 3 .. c0 + 6. */
        const int ro = rq0 - 2 * R + r, pr = r & 1;
        if (ro >= y0 && ro < y0 + rows && c0 >= 4 && c0 < NT - 4) {
            /* own/other pairs from the parity of c0 (T0) and of c0 + 1 (T1) */
            pc_mlri_f4 T0[10], T1[10];
            PC_UNROLL
            for (int u = 0; u < 10; u++) {
                const int c = c0 - R + u, odd = (u - R) & 1; /* column parity relative to c0 */
                if (D == 0) {
                    const pc_mlri_f4 v = ab[r][pr][pc_mlri_sw(c)];
                    T0[u] = odd ? pc_mlri_f4_swap(v) : v;
                    T1[u] = pc_mlri_f4_swap(T0[u]);
                } else {
                    const pc_mlri_f4 v0 = ab[r][odd][pc_mlri_sw(c)], v1 = ab[r][odd ^ 1][pc_mlri_sw(c)];
                    T0[u] = pr ? pc_mlri_f4_swap(v0) : v0;
                    T1[u] = pr ? pc_mlri_f4_swap(v1) : v1;
                }
            }
            pc_mlri_f4 Wp[4];
            {
                const pc_mlri_f4 *a = T0 + R, *b = T1 + R; /* a[u], b[u]: column c0 + u */
                pc_mlri_f4 w0 = pc_mlri_f4_add(pc_mlri_f4_add(pc_mlri_f4_add(a[-3], a[-2]), pc_mlri_f4_add(a[-1], a[0])),
                                               pc_mlri_f4_add(pc_mlri_f4_add(a[1], a[2]), a[3]));
                pc_mlri_f4 w1 = pc_mlri_f4_add(pc_mlri_f4_add(pc_mlri_f4_add(b[-2], b[-1]), pc_mlri_f4_add(b[0], b[1])),
                                               pc_mlri_f4_add(pc_mlri_f4_add(b[2], b[3]), b[4]));
                Wp[0] = w0;
                Wp[1] = w1;
                Wp[2] = pc_mlri_f4_sub(pc_mlri_f4_add(w0, pc_mlri_f4_add(a[4], a[5])), pc_mlri_f4_add(a[-3], a[-2]));
                Wp[3] = pc_mlri_f4_sub(pc_mlri_f4_add(w1, pc_mlri_f4_add(b[5], b[6])), pc_mlri_f4_add(b[-2], b[-1]));
            }
            const int ncy = IN ? 2 * R + 1 : pc_mlri_imin(H - 1, ro + R) - pc_mlri_imax(0, ro - R) + 1;
            const int dx = D == 0, dy = D == 1;
            float uo[4], vo[4];
            PC_UNROLL
            for (int p = 0; p < 4; p++) {
                /* x >= W: a column past the frame's edge (8-pixel-wide
                 * frames), never stored; clamped so its reads stay inside */
                const int x = IN ? qc0 + c0 + p : pc_mlri_imin(qc0 + c0 + p, W - 1);
                const int ncx = IN ? 2 * R + 1 : pc_mlri_imin(W - 1, x + R) - pc_mlri_imax(0, x - R) + 1;
                const float rc = IN ? 1.0f / (float)((2 * R + 1) * (2 * R + 1)) : pc_mlri_rcp(ncx * ncy);
                const float gd = 0.5f * (pc_mlri_raw<IN>(k, x - dx, ro - dy) + pc_mlri_raw<IN>(k, x + dx, ro + dy));
                const float m = pc_mlri_raw<IN>(k, x, ro);
                uo[p] = pc_mlri_clip((Wp[p].x * rc) * gd + Wp[p].y * rc);
                vo[p] = pc_mlri_clip((Wp[p].z * rc) * m + Wp[p].w * rc);
            }
            /* pairs of adjacent pixels (x even) as one 8-byte store */
            PC_UNROLL
            for (int p = 0; p < 4; p += 2) {
                const int c = c0 + p, x = qc0 + c;
                if (c >= 2 * R && c < NT - 2 * R && x < W) {
                    const size_t o = (size_t)ro * W + x;
                    pc_mlri_f2 u2 = {uo[p], uo[p + 1]}, v2 = {vo[p], vo[p + 1]};
                    *(pc_mlri_f2 *)(void *)(k.uv + (size_t)(2 * D) * k.wh + o) = u2;
                    *(pc_mlri_f2 *)(void *)(k.uv + (size_t)(2 * D + 1) * k.wh + o) = v2;
                }
            }
        }
    }
}

/* Reach of DIR's reads around its tile: 8 rows of lead-in (and up to 11
 * past the end: the last step), 3 more for the products' own stencil. */
template <int D, int LEAN>
PC_DEV void pc_mlri_dir_dir(const pc_mlri_kp &k)
{
    const int x0 = blockIdx.x * PC_MLRI_DTW, y0 = blockIdx.y * k.dth;
    if (pc_mlri_inside(k, x0 - 2 * PC_MLRI_R_GREEN, x0 - 2 * PC_MLRI_R_GREEN + PC_MLRI_NT, y0, y0 + k.dth, 16))
        pc_mlri_dir_impl<D, 1, LEAN>(k);
    else
        pc_mlri_dir_impl<D, 0, LEAN>(k);
}

template <int LEAN>
PC_DEV void pc_mlri_dir_body(const pc_mlri_kp &k)
{
    if (blockIdx.z == 0)
        pc_mlri_dir_dir<0, LEAN>(k);
    else
        pc_mlri_dir_dir<1, LEAN>(k);
}

/* ---- GREEN: colour differences of both directions for the tile + 4 halo
 * (in-image coordinates; every read index is mirrored exactly as in the
 * reference, which keeps it inside that region) staged in shared memory,
 * then the weighted combination. 32-row tiles: the 8 halo rows of
 * differences cost 25 % (they cost 100 % on the 8-row tiles this kernel
 * had); 43.5 KB of shared memory, under the 48 KB granted without opt-in. */
#define PC_MLRI_GTW 128
#define PC_MLRI_GTH 32
#define PC_MLRI_GH 4
#define PC_MLRI_GS (PC_MLRI_GTW + 2 * PC_MLRI_GH)
/* Staged row yi, column xi (xi = x - rx0, rx0 even): even columns first,
 * then odd ones. The weights' threads read one site of each column pair,
 * so a warp reads columns of one parity: consecutive words here, where a
 * plain row would put lanes 2 words apart (2-way bank conflicts). */
#define PC_MLRI_GI(yi, xi) ((yi) * PC_MLRI_GS + ((xi) & 1) * (PC_MLRI_GS / 2) + ((xi) >> 1))

template <int IN>
PC_DEV float pc_mlri_grad3(const float *D, int rx0, int ry0, int W, int H, int dx, int dy, int x, int y)
{
    float s = 0;
    for (int b = -1; b <= 1; b++)
        for (int a = -1; a <= 1; a++) {
            int xx = pc_mlri_mir<IN>(x + a, W), yy = pc_mlri_mir<IN>(y + b, H);
            float t = D[PC_MLRI_GI(pc_mlri_mir<IN>(yy - dy, H) - ry0, pc_mlri_mir<IN>(xx - dx, W) - rx0)] -
                      D[PC_MLRI_GI(pc_mlri_mir<IN>(yy + dy, H) - ry0, pc_mlri_mir<IN>(xx + dx, W) - rx0)];
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
        s += gw[kk] * D[PC_MLRI_GI(pc_mlri_mir<IN>(y + kk * sy, H) - ry0, pc_mlri_mir<IN>(x + kk * sx, W) - rx0)];
    return s;
}

/* Interior versions: the staged difference at (x + dx, y + dy) for a
 * pixel whose staged column has parity P (x - rx0 = P mod 2; a warp's
 * pixels share it), base = its row * GS + its column / 2. Every offset is
 * then a compile-time constant (one load with an immediate offset); the
 * generic index above costs ~4 integer instructions per load, ~90 loads
 * per pixel. Same values, same order as the reference. */
template <int P>
PC_DEV float pc_mlri_gat(const float *D, int base, int dx, int dy)
{
    return D[base + dy * PC_MLRI_GS + ((P ^ (dx & 1)) ? PC_MLRI_GS / 2 : 0) + ((P + dx) >> 1)];
}
template <int P>
PC_DEV float pc_mlri_grad3_in(const float *D, int base, int dx, int dy, int cx, int cy)
{
    float s = 0;
    for (int b = -1; b <= 1; b++)
        for (int a = -1; a <= 1; a++) {
            float t = pc_mlri_gat<P>(D, base, cx + a - dx, cy + b - dy) - pc_mlri_gat<P>(D, base, cx + a + dx, cy + b + dy);
            s += t < 0 ? -t : t;
        }
    return s;
}
template <int P>
PC_DEV float pc_mlri_side_in(const float *D, int base, int sx, int sy)
{
    const float gw[5] = {PC_MLRI_GW0, PC_MLRI_GW1, PC_MLRI_GW2, PC_MLRI_GW3, PC_MLRI_GW4};
    float s = 0;
    for (int kk = 4; kk >= 0; kk--)
        s += gw[kk] * pc_mlri_gat<P>(D, base, kk * sx, kk * sy);
    return s;
}

/* The green of the red/blue site (x, y): P < 0 the generic (mirrored)
 * reads, else the interior ones for staged-column parity P. */
template <int IN, int P>
PC_DEV float pc_mlri_green_at(const pc_mlri_kp &k, const float *Dh, const float *Dv, int rx0, int ry0, int x, int y)
{
    const int W = k.W, H = k.H;
    float wn, ws, ww, we, sn, ss, sw, se;
    if (P < 0) {
        wn = pc_mlri_w(pc_mlri_grad3<IN>(Dv, rx0, ry0, W, H, 0, 1, x, pc_mlri_mir<IN>(y - 1, H)));
        ws = pc_mlri_w(pc_mlri_grad3<IN>(Dv, rx0, ry0, W, H, 0, 1, x, pc_mlri_mir<IN>(y + 1, H)));
        ww = pc_mlri_w(pc_mlri_grad3<IN>(Dh, rx0, ry0, W, H, 1, 0, pc_mlri_mir<IN>(x - 1, W), y));
        we = pc_mlri_w(pc_mlri_grad3<IN>(Dh, rx0, ry0, W, H, 1, 0, pc_mlri_mir<IN>(x + 1, W), y));
        sn = pc_mlri_side<IN>(Dv, rx0, ry0, W, H, 0, -1, x, y);
        ss = pc_mlri_side<IN>(Dv, rx0, ry0, W, H, 0, 1, x, y);
        sw = pc_mlri_side<IN>(Dh, rx0, ry0, W, H, -1, 0, x, y);
        se = pc_mlri_side<IN>(Dh, rx0, ry0, W, H, 1, 0, x, y);
    } else {
        const int PP = P < 0 ? 0 : P;
        const int base = (y - ry0) * PC_MLRI_GS + ((x - rx0) >> 1);
        wn = pc_mlri_w(pc_mlri_grad3_in<PP>(Dv, base, 0, 1, 0, -1));
        ws = pc_mlri_w(pc_mlri_grad3_in<PP>(Dv, base, 0, 1, 0, 1));
        ww = pc_mlri_w(pc_mlri_grad3_in<PP>(Dh, base, 1, 0, -1, 0));
        we = pc_mlri_w(pc_mlri_grad3_in<PP>(Dh, base, 1, 0, 1, 0));
        sn = pc_mlri_side_in<PP>(Dv, base, 0, -1);
        ss = pc_mlri_side_in<PP>(Dv, base, 0, 1);
        sw = pc_mlri_side_in<PP>(Dh, base, -1, 0);
        se = pc_mlri_side_in<PP>(Dh, base, 1, 0);
    }
    const float num = wn * sn + ws * ss + ww * sw + we * se;
    return pc_mlri_clip(pc_mlri_raw<IN>(k, x, y) + num / (wn + ws + ww + we));
}

template <int IN>
PC_DEV void pc_mlri_green_impl(const pc_mlri_kp &k)
{
    const int W = k.W, H = k.H, tid = threadIdx.x;
    const int x0 = blockIdx.x * PC_MLRI_GTW, y0 = blockIdx.y * PC_MLRI_GTH;
    const int rx0 = pc_mlri_imax(0, x0 - PC_MLRI_GH), rx1 = pc_mlri_imin(W, x0 + PC_MLRI_GTW + PC_MLRI_GH);
    const int ry0 = pc_mlri_imax(0, y0 - PC_MLRI_GH), ry1 = pc_mlri_imin(H, y0 + PC_MLRI_GTH + PC_MLRI_GH);
    /* interior: the staged width is a constant, so i / ncols below is a
     * multiply and shift rather than a ~20-instruction division */
    const int ncols = IN ? PC_MLRI_GS : rx1 - rx0, nrows = ry1 - ry0;
    PC_SMEM_DECL(smem);
    float *Dh = (float *)smem, *Dv = Dh + (PC_MLRI_GTH + 2 * PC_MLRI_GH) * PC_MLRI_GS;
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
            (d ? Dv : Dh)[PC_MLRI_GI(yi, xi)] = gsite ? m - est : est - m;
        }
    }
    __syncthreads();
    /* One red/blue site per thread and row: thread t takes column pair
     * t mod 64 of row y0 + 2j + t / 64 and computes the pair's non-green
     * site (and copies its green one). A thread per column would leave
     * every other lane of a warp idle through the weights (the sites
     * alternate along a row). */
    const int xp = x0 + 2 * (tid & 63);
    if (xp >= W)
        return; /* no barrier follows */
    const int yend = pc_mlri_imin(y0 + PC_MLRI_GTH, H);
    for (int y = y0 + (tid >> 6); y < yend; y += 2) {
        const int x = xp + ((y ^ k.ox ^ k.oy) & 1), xg = x ^ 1;
        k.g[(size_t)y * W + xg] = pc_mlri_raw<IN>(k, xg, y);
        float g;
        if (!IN)
            g = pc_mlri_green_at<IN, -1>(k, Dh, Dv, rx0, ry0, x, y);
        else if ((x - rx0) & 1) /* the same for the whole warp (one row) */
            g = pc_mlri_green_at<IN, 1>(k, Dh, Dv, rx0, ry0, x, y);
        else
            g = pc_mlri_green_at<IN, 0>(k, Dh, Dv, rx0, ry0, x, y);
        k.g[(size_t)y * W + x] = g;
    }
}

/* Reach: the 4-pixel halo of colour differences, each reading 1 more. */
PC_DEV void pc_mlri_green_body(const pc_mlri_kp &k)
{
    if (pc_mlri_inside(k, blockIdx.x * PC_MLRI_GTW, blockIdx.x * PC_MLRI_GTW + PC_MLRI_GTW, blockIdx.y * PC_MLRI_GTH,
                       blockIdx.y * PC_MLRI_GTH + PC_MLRI_GTH, PC_MLRI_GH + 1))
        pc_mlri_green_impl<1>(k);
    else
        pc_mlri_green_impl<0>(k);
}

PC_HD size_t pc_mlri_green_smem(void)
{
    return (size_t)2 * (PC_MLRI_GTH + 2 * PC_MLRI_GH) * PC_MLRI_GS * sizeof(float);
}


/* ---- RB: red and blue, and the output -----------------------------------
 *
 * A CTA walks k.bth output rows of PC_MLRI_BTW columns; thread t owns
 * column xq = x0 - 12 + t (halo: 1 for the residual interpolation, 5 for
 * the a/b window, 5 for the class window, 1 more so that the tile width,
 * 104, keeps the output's 2x2 blocks and 8-byte rows aligned). Per step of
 * 4 rows:
 *   A  (thread = column) the site products of the two red or blue sites
 *      the column has among the 4 entering rows and of the two leaving
 *      (each column holds one class, on rows of one parity: every thread
 *      computes exactly four sites per step, none idles), and the running
 *      vertical sum over the 11 rows around the a/b row 5 above -> row
 *      buffer v;
 *   B  (thread = 4 adjacent columns of one row) horizontal sums over 11
 *      columns (even offsets: this column's class, odd: the other), slid
 *      along the 4 columns (14 vector loads for 4 pixels instead of 44),
 *      a and b of red and blue -> buffer ab;
 *   B2 (thread = column) the running vertical a/b sums over 11 rows ->
 *      buffer ab, in place;
 *   C  (thread = 4 columns of one row) horizontal a/b sums over 11 columns,
 *      slid the same way, the tentative red and blue of the row 10 above
 *      the entering one -> a ring of 2 steps' rows in shared memory;
 *   D  (thread = 2x2 block: 104 of 128 threads) the residual interpolation
 *      of red and blue from that ring, rounding, the destination format.
 * Four barriers per 4 rows. The walk starts 12 rows above the tile. */
#define PC_MLRI_BHALO 12
#define PC_MLRI_BTW (PC_MLRI_NT - 2 * PC_MLRI_BHALO)
/* Default rows per CTA (kp.bth; any even number): 72, measured best on an
 * H100 at 2040x5400 (1216 us in all, against 1230 at 104 and 1236 at
 * 128): 20 x 75 CTAs, 4 per SM, 2.8 waves. */
#define PC_MLRI_BTH 72
#define PC_MLRI_BWIN (2 * PC_MLRI_R_RB + 1)
#define PC_MLRI_BRS 4 /* rows per step */

struct pc_mlri_rb_sm {
    pc_mlri_f4 ar[PC_MLRI_BWIN][PC_MLRI_NT];       /* ring: a/b (red, blue) of the last 11 rows */
    pc_mlri_f4 v[PC_MLRI_BRS][PC_MLRI_NT];         /* [row of step]: vertical class sums */
    pc_mlri_f4 ab[PC_MLRI_BRS][PC_MLRI_NT];        /* [row of step]: a/b, then their vertical sums */
    pc_mlri_f2 tr[2][PC_MLRI_BRS][PC_MLRI_NT];     /* [step parity][row]: tentative (red, blue) */
};

PC_HD size_t pc_mlri_rb_smem(void) { return sizeof(pc_mlri_rb_sm); }

/* Site products of the red/blue filter at (x, y) (reference: site_q with
 * green = 0): I p, I I, green, target with the 2-D Laplacians. */
template <int IN>
PC_DEV pc_mlri_f4 pc_mlri_rb_q(const pc_mlri_kp &k, int x, int y)
{
    pc_mlri_f4 q = {0, 0, 0, 0};
    if (!IN && (x < 0 || x >= k.W || y < 0 || y >= k.H))
        return q;
    const float gd = k.g[(size_t)y * k.W + x], t = pc_mlri_raw<IN>(k, x, y);
    const float I = 4.0f * gd - pc_mlri_pl<IN>(k, k.g, x - 2, y) - pc_mlri_pl<IN>(k, k.g, x + 2, y) -
                    pc_mlri_pl<IN>(k, k.g, x, y - 2) - pc_mlri_pl<IN>(k, k.g, x, y + 2);
    const float p = 4.0f * t - pc_mlri_raw<IN>(k, x - 2, y) - pc_mlri_raw<IN>(k, x + 2, y) -
                    pc_mlri_raw<IN>(k, x, y - 2) - pc_mlri_raw<IN>(k, x, y + 2);
    q.x = I * p;
    q.y = I * I;
    q.z = gd;
    q.w = t;
    return q;
}

/* Writes the 2x2 block at (x0, y) (v[row][col][R, G, B], 8-bit) in the
 * destination format: §8 Y' per pixel, Cb/Cr from the block's sums (as
 * pc_ref_store_block), with the coefficients of the block's band. */
PC_DEV void pc_mlri_store_block(const pc_mlri_kp &k, int x0, int y, const int v[2][2][3])
{
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
    if (k.fmt == PC_FMT_RGBX32) { /* a block row is two texels: one 8-byte store (x0 even) */
        for (int b = 0; b < 2; b++)
            pc_store_u64(k.d0 + (size_t)(y + b) * k.p0 + go[0] + 4 * x0,
                         pc_rgbx(v[b][0][0], v[b][0][1], v[b][0][2]), pc_rgbx(v[b][1][0], v[b][1][1], v[b][1][2]));
        return;
    }
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
    const int by = y / 2;
    if (k.fmt == PC_FMT_NV12) {
        k.d1[(size_t)by * k.p1 + go[1] + x0] = (uint8_t)cb;
        k.d1[(size_t)by * k.p1 + go[1] + x0 + 1] = (uint8_t)cr;
    } else {
        k.d1[(size_t)by * k.p1 + go[1] + x0 / 2] = (uint8_t)cb;
        k.d2[(size_t)by * k.p2 + go[2] + x0 / 2] = (uint8_t)cr;
    }
}

template <int IN>
PC_DEV void pc_mlri_rb_impl(const pc_mlri_kp &k)
{
    const int R = PC_MLRI_R_RB, NT = PC_MLRI_NT, HB = PC_MLRI_BHALO, RS = PC_MLRI_BRS;
    const int t = threadIdx.x, W = k.W, H = k.H;
    const int x0 = blockIdx.x * PC_MLRI_BTW, y0 = blockIdx.y * k.bth;
    const int qc0 = x0 - HB, xq = qc0 + t; /* qc0 even */
    /* B and C: row r of the step, tile columns c0 .. c0 + 3 */
    const int r = t >> 5, c0 = 4 * (t & 31);
    PC_SMEM_DECL(smem);
    pc_mlri_rb_sm &s = *(pc_mlri_rb_sm *)(void *)smem;
    const pc_mlri_f4 zf = {0, 0, 0, 0};
    for (int j = 0; j < PC_MLRI_BWIN; j++)
        s.ar[j][t] = zf;
    /* This column's class: red (x = ox mod 2: rows oy mod 2) or blue. Its
     * sites are on rows of parity crow: rq0 + crow and rq0 + crow + 2. */
    const int crow = ((xq ^ k.ox) & 1) == 0 ? k.oy : k.oy ^ 1;
    /* The class of tile column c0 (even): red iff qc0 + c0 = ox mod 2; its
     * rows' parity; column c0 + 1 has the other class. */
    const int red0 = ((qc0 ^ k.ox) & 1) == 0, crow0 = red0 ? k.oy : k.oy ^ 1;
    pc_mlri_f4 V = zf, A = zf;
    int aslot = 0;
    const int rows = pc_mlri_imin(k.bth, H - y0);
    const int nsteps = (rows + 20 + RS - 1) / RS + 1;
    for (int i = 0; i < nsteps; i++) {
        const int rq0 = y0 - HB + RS * i; /* even */
        /* A: the sites of rows rq0 + crow and rq0 + crow + 2 enter; the
         * sites 11 rows above the other two rows leave (rows rq0 - 10 -
         * crow and 2 below). The leaving ones are computed again rather
         * than kept in a ring: the same values, and the 12 KB a ring would
         * take keep RB at 4 CTAs per SM instead of 3 (its warps wait on
         * shared memory and barriers: more of them hide more). Sites above
         * the walk's first row never entered: they leave as 0. */
        {
            const int rl = rq0 - 10 - crow, r0 = y0 - HB;
            const pc_mlri_f4 q0 = pc_mlri_rb_q<IN>(k, xq, rq0 + crow);
            const pc_mlri_f4 q1 = pc_mlri_rb_q<IN>(k, xq, rq0 + crow + 2);
            const pc_mlri_f4 o0 = rl >= r0 ? pc_mlri_rb_q<IN>(k, xq, rl) : zf;
            const pc_mlri_f4 o1 = rl + 2 >= r0 ? pc_mlri_rb_q<IN>(k, xq, rl + 2) : zf;
            PC_UNROLL
            for (int kk = 0; kk < RS; kk++) {
                const int in = (kk & 1) == crow;
                const pc_mlri_f4 &q = kk < 2 ? q0 : q1, &o = kk < 2 ? o0 : o1;
                V.x += in ? q.x : -o.x;
                V.y += in ? q.y : -o.y;
                V.z += in ? q.z : -o.z;
                V.w += in ? q.w : -o.w;
                s.v[kk][pc_mlri_sw(t)] = V;
            }
        }
        __syncthreads();
        /* B: a/b row ra = rq0 - 5 + r at tile columns c0 + p; reads columns
         * c0 - 5 .. c0 + 8 (clamped into the tile: the results of the 5
         * edge columns each side are never used) */
        const int ra = rq0 - R + r;
        {
            pc_mlri_f4 cc_[14];
            PC_UNROLL
            for (int u = 0; u < 14; u++)
                cc_[u] = s.v[r][pc_mlri_sw(pc_mlri_imin(NT - 1, pc_mlri_imax(0, c0 - R + u)))];
            const pc_mlri_f4 *cc = cc_ + R; /* cc[u]: column c0 + u, u = -5 .. 8 */
            pc_mlri_f4 S[4][2]; /* [pixel][class of c0, the other] */
            pc_mlri_f4 E = pc_mlri_f4_add(pc_mlri_f4_add(pc_mlri_f4_add(cc[-4], cc[-2]), pc_mlri_f4_add(cc[0], cc[2])), cc[4]);
            pc_mlri_f4 O = pc_mlri_f4_add(pc_mlri_f4_add(pc_mlri_f4_add(cc[-5], cc[-3]), pc_mlri_f4_add(cc[-1], cc[1])),
                                          pc_mlri_f4_add(cc[3], cc[5]));
            S[0][0] = E;
            S[0][1] = O;
            O = pc_mlri_f4_sub(O, cc[-5]); /* -3 .. 5 odd */
            E = pc_mlri_f4_add(E, cc[6]);  /* -4 .. 6 even */
            S[1][0] = E;
            S[1][1] = O;
            E = pc_mlri_f4_sub(E, cc[-4]); /* -2 .. 6 */
            O = pc_mlri_f4_add(O, cc[7]);  /* -3 .. 7 */
            S[2][0] = E;
            S[2][1] = O;
            O = pc_mlri_f4_sub(O, cc[-3]); /* -1 .. 7 */
            E = pc_mlri_f4_add(E, cc[8]);  /* -2 .. 8 */
            S[3][0] = E;
            S[3][1] = O;
            const bool rowin = IN || (ra >= 0 && ra < H);
            const int cy0 = pc_mlri_imax(0, ra - R), cy1 = pc_mlri_imin(H - 1, ra + R);
            /* rows of the class of c0 in the window: the same parity as ra
             * (R of them inside the frame) or not (R + 1) */
            const int same0 = ((ra ^ crow0) & 1) == 0;
            const int ny0 = IN ? (same0 ? R : R + 1) : pc_mlri_npar(cy0, cy1, crow0);
            const int ny1 = IN ? (same0 ? R + 1 : R) : pc_mlri_npar(cy0, cy1, crow0 ^ 1);
            PC_UNROLL
            for (int p = 0; p < 4; p++) {
                const int c = c0 + p, x = qc0 + c;
                pc_mlri_f4 AB = zf;
                if (IN || (rowin && x >= 0 && x < W)) {
                    /* class of c0: columns of c0's parity in [x - 5, x + 5] */
                    const int cx0 = pc_mlri_imax(0, x - R), cx1 = pc_mlri_imin(W - 1, x + R);
                    const int nx0 = IN ? ((p & 1) ? R + 1 : R) : pc_mlri_npar(cx0, cx1, (qc0 + c0) & 1);
                    const int nx1 = IN ? ((p & 1) ? R : R + 1) : pc_mlri_npar(cx0, cx1, ((qc0 + c0) & 1) ^ 1);
                    const float rn0 = IN ? 1.0f / (float)(nx0 * ny0) : pc_mlri_rcp(nx0 * ny0);
                    const float rn1 = IN ? 1.0f / (float)(nx1 * ny1) : pc_mlri_rcp(nx1 * ny1);
                    const pc_mlri_f4 &S0 = S[p][0], &S1 = S[p][1];
                    float a0, b0, a1, b1;
                    pc_mlri_ab_fast(S0.x, S0.y, S0.z, S0.w, rn0, a0, b0);
                    pc_mlri_ab_fast(S1.x, S1.y, S1.z, S1.w, rn1, a1, b1);
                    AB.x = red0 ? a0 : a1;
                    AB.y = red0 ? b0 : b1;
                    AB.z = red0 ? a1 : a0;
                    AB.w = red0 ? b1 : b0;
                }
                s.ab[r][pc_mlri_sw(c)] = AB;
            }
        }
        __syncthreads();
        /* B2: a/b rows whose class windows are full (ra >= y0 - 7, i.e.
         * 4 i + kk >= 10) enter the running 11-row sums of this column */
        PC_UNROLL
        for (int kk = 0; kk < RS; kk++)
            if (RS * i + kk >= 2 * R) {
                const pc_mlri_f4 ab = s.ab[kk][pc_mlri_sw(t)];
                const pc_mlri_f4 old = s.ar[aslot][t];
                s.ar[aslot][t] = ab;
                aslot = aslot == PC_MLRI_BWIN - 1 ? 0 : aslot + 1;
                pc_mlri_slide(A, ab, old);
                s.ab[kk][pc_mlri_sw(t)] = A;
            }
        __syncthreads();
        /* C: tentative row rt = rq0 - 10 + r at tile columns c0 + p, once
         * its a/b window is full (rt >= y0 - 2: 4 i + r >= 20); columns
         * c0 - 5 .. c0 + 8, clamped; ring slot i & 1 */
        const int rt = rq0 - 2 * R + r;
        if (RS * i + r >= 4 * R) {
            pc_mlri_f4 cc_[14];
            PC_UNROLL
            for (int u = 0; u < 14; u++)
                cc_[u] = s.ab[r][pc_mlri_sw(pc_mlri_imin(NT - 1, pc_mlri_imax(0, c0 - R + u)))];
            const pc_mlri_f4 *cc = cc_ + R;
            pc_mlri_f4 Wp[4];
            Wp[0] = pc_mlri_f4_add(
                pc_mlri_f4_add(pc_mlri_f4_add(pc_mlri_f4_add(cc[-5], cc[-4]), pc_mlri_f4_add(cc[-3], cc[-2])),
                               pc_mlri_f4_add(pc_mlri_f4_add(cc[-1], cc[0]), pc_mlri_f4_add(cc[1], cc[2]))),
                pc_mlri_f4_add(pc_mlri_f4_add(cc[3], cc[4]), cc[5]));
            PC_UNROLL
            for (int p = 1; p < 4; p++)
                Wp[p] = pc_mlri_f4_add(Wp[p - 1], pc_mlri_f4_sub(cc[p + R], cc[p - R - 1]));
            const bool rowin = IN || (rt >= 0 && rt < H);
            const int ncy = IN ? 2 * R + 1 : pc_mlri_imin(H - 1, rt + R) - pc_mlri_imax(0, rt - R) + 1;
            PC_UNROLL
            for (int p = 0; p < 4; p++) {
                const int c = c0 + p, x = qc0 + c;
                pc_mlri_f2 tv = {0, 0};
                if (IN || (rowin && x >= 0 && x < W)) {
                    const int ncx = IN ? 2 * R + 1 : pc_mlri_imin(W - 1, x + R) - pc_mlri_imax(0, x - R) + 1;
                    const float rc = IN ? 1.0f / (float)((2 * R + 1) * (2 * R + 1)) : pc_mlri_rcp(ncx * ncy);
                    const float g = k.g[(size_t)rt * W + x];
                    tv.x = pc_mlri_clip((Wp[p].x * rc) * g + Wp[p].y * rc);
                    tv.y = pc_mlri_clip((Wp[p].z * rc) * g + Wp[p].w * rc);
                }
                s.tr[i & 1][r][c] = tv;
            }
        }
        __syncthreads();
        /* D: output rows T - 2 .. T + 1 (T = rq0 - 10, the first tentative
         * row of this step), needing tentative rows T - 3 .. T + 3 (steps
         * i - 1, i); one 2x2 block per thread: row pair t / 52, column
         * pair t mod 52 */
        const int bp = t / (PC_MLRI_BTW / 2), cp = t - bp * (PC_MLRI_BTW / 2);
        const int ro = rq0 - 2 * R - 2 + 2 * bp, xb = x0 + 2 * cp;
        if (t < PC_MLRI_BTW && ro >= y0 && ro < y0 + rows && xb < W) {
            int v[2][2][3];
            PC_UNROLL
            for (int b = 0; b < 2; b++)
                PC_UNROLL
                for (int a = 0; a < 2; a++) {
                    const int x = xb + a, y = ro + b;
                    /* tentative value c (0 red, 1 blue) at an in-frame site:
                     * row my was made by step (my - y0 + 22) / 4 */
#define PC_MLRI_TV(c, xx, yy)                                                                                     \
    ([&](int mx, int my) {                                                                                       \
        const int ri = my - y0 + HB + 2 * R;                                                                      \
        const pc_mlri_f2 e = s.tr[(ri >> 2) & 1][ri & 3][mx - qc0];                                               \
        return (c) ? e.y : e.x;                                                                                   \
    }(pc_mlri_mir<IN>(xx, W), pc_mlri_mir<IN>(yy, H)))
#define PC_MLRI_RES(c, da, db) (pc_mlri_raw<IN>(k, x + (da), y + (db)) - PC_MLRI_TV(c, x + (da), y + (db)))
                    float out[2];
                    PC_UNROLL
                    for (int c = 0; c < 2; c++) {
                        const int cx = k.ox ^ c, cy = k.oy ^ c;
                        const int sx = (x & 1) != cx, sy = (y & 1) != cy;
                        if (!sx && !sy) {
                            out[c] = pc_mlri_raw<IN>(k, x, y);
                            continue;
                        }
                        float res;
                        if (sx && !sy)
                            res = 0.5f * (PC_MLRI_RES(c, -1, 0) + PC_MLRI_RES(c, 1, 0));
                        else if (!sx && sy)
                            res = 0.5f * (PC_MLRI_RES(c, 0, -1) + PC_MLRI_RES(c, 0, 1));
                        else
                            res = 0.25f * (PC_MLRI_RES(c, -1, -1) + PC_MLRI_RES(c, 1, -1) + PC_MLRI_RES(c, -1, 1) +
                                           PC_MLRI_RES(c, 1, 1));
                        out[c] = pc_mlri_clip(PC_MLRI_TV(c, x, y) + res);
                    }
#undef PC_MLRI_RES
#undef PC_MLRI_TV
                    v[b][a][0] = pc_mlri_u8(out[0]);
                    v[b][a][1] = pc_mlri_u8(k.g[(size_t)y * W + x]);
                    v[b][a][2] = pc_mlri_u8(out[1]);
                }
            pc_mlri_store_block(k, xb, ro, v);
        }
    }
}

/* Reach of RB's reads: its columns, 12 rows of lead-in (and up to 14 past
 * the tile: the last step), 2 more for the products' Laplacians. */
PC_DEV void pc_mlri_rb_body(const pc_mlri_kp &k)
{
    const int x0 = blockIdx.x * PC_MLRI_BTW, y0 = blockIdx.y * k.bth;
    if (pc_mlri_inside(k, x0 - PC_MLRI_BHALO, x0 - PC_MLRI_BHALO + PC_MLRI_NT, y0, y0 + k.bth, 18))
        pc_mlri_rb_impl<1>(k);
    else
        pc_mlri_rb_impl<0>(k);
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
    if (d->bands && !pc_pixfmt_is_rgb(d->fmt)) {
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
enum { PC_MLRI_K_DIR = 0, PC_MLRI_K_GREEN, PC_MLRI_K_RB, PC_MLRI_K_DIR_LEAN };
#define PC_MLRI_LAUNCHES 3

template <class L>
int pc_mlri_sequence(L &launch, pc_mlri_kp kp)
{
    dim3 blk(PC_MLRI_NT);
    int rc;
    kp.dth = kp.dth >= 2 ? kp.dth & ~1 : PC_MLRI_DTH;
    kp.bth = kp.bth >= 2 ? kp.bth & ~1 : PC_MLRI_BTH;
    dim3 gd((kp.W + PC_MLRI_DTW - 1) / PC_MLRI_DTW, (kp.H + kp.dth - 1) / kp.dth, 2);
    if ((rc = launch(kp.dir_lean ? PC_MLRI_K_DIR_LEAN : PC_MLRI_K_DIR, gd, blk, pc_mlri_dir_smem(kp.dir_lean), kp)))
        return rc;
    dim3 gg((kp.W + PC_MLRI_GTW - 1) / PC_MLRI_GTW, (kp.H + PC_MLRI_GTH - 1) / PC_MLRI_GTH);
    if ((rc = launch(PC_MLRI_K_GREEN, gg, blk, pc_mlri_green_smem(), kp)))
        return rc;
    dim3 gr((kp.W + PC_MLRI_BTW - 1) / PC_MLRI_BTW, (kp.H + kp.bth - 1) / kp.bth);
    return launch(PC_MLRI_K_RB, gr, blk, pc_mlri_rb_smem(), kp);
}

/* Checks the measurement knobs of pc_gpu_mlri_set_tiles and
 * pc_emu_mlri_tiles: rows per CTA of DIR and RB (0 = the default, else
 * 2..4096; odd numbers are rounded down to even by pc_mlri_sequence) and
 * DIR's lean variant (0 or 1). Host code; 0 or -1. */
inline int pc_mlri_tiles_check(int dir_rows, int rb_rows, int dir_lean)
{
    const bool rows_ok = (dir_rows == 0 || (dir_rows >= 2 && dir_rows <= 4096)) &&
                         (rb_rows == 0 || (rb_rows >= 2 && rb_rows <= 4096));
    return rows_ok && (dir_lean == 0 || dir_lean == 1) ? 0 : -1;
}

/* Device temporaries: u/v of both directions (4) and green (1) float
 * planes. */
#define PC_MLRI_GPU_PLANES 5

#endif
