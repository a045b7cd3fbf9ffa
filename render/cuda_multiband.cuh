/* cuda_multiband.cuh - the CUDA kernels of blend = multiband
 * (render_multiband.h defines it): the overlaps' strips blended band by
 * band, next to the main render pass (cuda_render.cuh) that does every
 * other pixel. Compiles under nvcc and, after cuda_emu.h, as host C++
 * (cuda_emu_multiband.cc), so CI checks these kernels against the C
 * reference without a GPU.
 *
 * A frame (render_mb_cuda.cu launches it):
 *   side stream, from the frame's start:
 *     LEVEL1   the cameras -> D_0 -> D_1: a CTA samples both cameras over
 *              the level-0 pixels under a 32x16 tile of level 1 (plus the
 *              reduce's 3-pixel halo: 67x35) into shared memory, then
 *              reduces along x and along y there; D_0 never leaves the SM
 *     REDUCE   D_k from D_{k-1}, k = 2 .. L-1 (25 taps, from L2), and at
 *              the top level C_{L-1} = G_{L-1} D_{L-1}
 *     COLLAPSE C_k, k = L-2 .. 1 (9 + 9 taps of level k+1)
 *   compute stream: the main pass with the strips' tiles taken out of
 *     the camera masks (cuda_render.cuh's kernel, unchanged: it writes
 *     those tiles black), then, once the side stream is done,
 *     STRIPS   each strip's 2x2 blocks in its blend zone's tiles (the
 *              main pass has the others): the one or two cameras the
 *              pixel's side of the seam needs, expand(C_1) and, on a's
 *              side, expand(D_1) from a 3x3 neighbourhood of level 1,
 *              the blend, the output response and YUV (pc_rfinish).
 * The pyramid runs beside the main pass (its small launches overlap it);
 * only STRIPS waits for both.
 *
 * The two numbers (METHOD.md) for panocap-bench's 8600x1300 panorama of
 * five 2040x1080 cameras, its seams placed: the four strips span 2.52 M
 * output pixels (22.5 % of the picture; their overlaps lean with the
 * cameras' pitch and roll), D is sampled at 1.29 M of them (within
 * `depend` of the seams), and the blend zone's tiles hold 0.91 M (8.2 %).
 * The feather pass samples ~12.4 M camera pixels (two in the overlaps);
 * here the main pass samples ~9.1 M (one camera per pixel outside the
 * zone tiles), LEVEL1 2 per D pixel with its tiles' halo (~2.9 M), STRIPS
 * ~1.05 per pixel (~1.0 M): ~13 M texture fetches with their photometry,
 * about 1.05 times the feather pass's. Bytes: D_1 and C_1 (float4 over
 * the rectangles' 0.63 M level-1 pixels: 10 MB apiece) written once and
 * read from L2 a few times, the masks (G_1..: 3.4 MB), the coarser levels
 * (a third of level 1): ~50 MB of L2 traffic that the 50 MB L2 mostly
 * keeps from DRAM, against the main pass's 61 MB floor. So the blend
 * should cost the main pass's time plus the pyramid's L2 traffic and its
 * short launches, which the side stream overlaps with the main pass, plus
 * STRIPS after the join: estimated the feather pass's time + 8 to 12 us
 * (+20 us were nothing to overlap).
 */
#ifndef PANOCAP_CUDA_MULTIBAND_CUH
#define PANOCAP_CUDA_MULTIBAND_CUH

#include "cuda_render.cuh"
#include "render_multiband.h"

/* LEVEL1's tile of level 1, its level-0 region and threads. */
#define PC_MB_T1W 32
#define PC_MB_T1H 16
#define PC_MB_RW (2 * PC_MB_T1W + 3)
#define PC_MB_RH (2 * PC_MB_T1H + 3)
#define PC_MB_NT 256
#define PC_MB_SMEM (sizeof(float) * 3 * (PC_MB_RH * PC_MB_RW + PC_MB_RH * PC_MB_T1W))
/* REDUCE and COLLAPSE: 16x16 threads, a pixel each; STRIPS: PC_RBX x
 * PC_RBY threads, a 2x2 block each (the main pass's shape). */
#define PC_MB_LB 16

/* The multiband's device data, by value. */
struct pc_mbkparams {
    int levels;
    float inv_sw;
    const pc_mb_strip *strips;
    const float *seam;
    const int *span;
    const int *band;                     /* per strip row: where D_0 is computed */
    const int8_t *tile_strip;            /* the strip of each output tile (render_multiband.h) */
    int ntx;
    const float *mask[PC_MB_MAX_LEVELS]; /* G_k, k >= 1 */
    float4 *d[PC_MB_MAX_LEVELS];         /* D_k, k >= 1 */
    float4 *c[PC_MB_MAX_LEVELS];         /* C_k, k >= 1 */
};

/* Both cameras of strip S at output pixel (x, y): whether each sees it and
 * how far inside; their corrected samples where want[e] (and it sees it). */
template <int PHOTO, int TEX>
PC_DEV void pc_mb_project(const pc_rkparams &p, const pc_mb_strip &S, int x, int y, float sx[2], float sy[2], int ok[2],
                          float d[2])
{
    const float2 cc = p.col[x], rr = p.row[y];
    const float c2[2] = {cc.x, cc.y}, r2[2] = {rr.x, rr.y};
    float ray[3];
    pc_render_ray(&p.view, c2, r2, ray);
    PC_UNROLL
    for (int e = 0; e < 2; e++) {
        const int c = e ? S.b : S.a;
        ok[e] = 0;
        d[e] = 0.0f;
        if (!pc_cam_project(&p.cam[c].geo, ray, &sx[e], &sy[e]))
            continue;
        d[e] = pc_render_border(&p.cam[c].geo, sx[e], sy[e]);
        ok[e] = d[e] > 0.0f;
    }
}

template <int PHOTO, int TEX>
PC_DEV void pc_mb_sample(const pc_rkparams &p, int c, float sx, float sy, float v[3])
{
    pc_rsample_raw<TEX>(p, c, sx, sy, v);
    if (PHOTO) {
        const pc_render_cam &C = p.cam[c];
        const float iv = p.has_vig ? pc_render_inv_vig(&C.vig, sx, sy) : 1.0f;
        const float2 *lut = p.lut2 + PC_RIG_RESPONSE_KNOTS * c;
        PC_UNROLL
        for (int ch = 0; ch < 3; ch++)
            v[ch] = pc_rlinear<TEX>(lut, v[ch], C.gain[ch] * iv);
    } else {
        PC_UNROLL
        for (int ch = 0; ch < 3; ch++)
            v[ch] *= PC_RUNIT(TEX);
    }
}

/* LEVEL1: D_1 of a 32x16 tile of strip blockIdx.z. */
template <int PHOTO, int TEX>
PC_KERNEL void PC_RBOUNDS(PC_MB_NT) pc_mb_level1_kernel(const __grid_constant__ pc_rkparams p,
                                                         const __grid_constant__ pc_mbkparams m)
{
    PC_SMEM_DECL(smem_raw);
    float *d0 = (float *)smem_raw;                  /* [3][RH][RW] */
    float *hr = d0 + 3 * PC_MB_RH * PC_MB_RW;       /* [3][RH][T1W] */
    const pc_mb_strip &S = m.strips[blockIdx.z];
    const int I0 = (int)blockIdx.x * PC_MB_T1W, J0 = (int)blockIdx.y * PC_MB_T1H;
    if (I0 >= S.w[1] || J0 >= S.h[1])
        return; /* the whole CTA: no barrier below is skipped by part of it */
    const int tid = (int)threadIdx.x;
    for (int q = tid; q < PC_MB_RH * PC_MB_RW; q += PC_MB_NT) {
        const int cx = q % PC_MB_RW, cy = q / PC_MB_RW;
        const int j = pc_mb_clampi(2 * J0 - 2 + cy, S.h[0]);
        const int *span = m.span + 2 * (S.seam_off + (size_t)j), *band = m.band + 2 * (S.seam_off + (size_t)j);
        const int x0 = S.x0 + pc_mb_clampi(2 * I0 - 2 + cx, S.w[0]);
        float v[3] = {0.0f, 0.0f, 0.0f};
        if (span[0] <= span[1] && x0 >= band[0] && x0 <= band[1]) {
            const int x = x0 < span[0] ? span[0] : (x0 > span[1] ? span[1] : x0);
            float sx[2], sy[2], dd[2], va[3], vb[3];
            int ok[2];
            pc_mb_project<PHOTO, TEX>(p, S, x, S.y0 + j, sx, sy, ok, dd);
            if (ok[0] && ok[1]) {
                pc_mb_sample<PHOTO, TEX>(p, S.a, sx[0], sy[0], va);
                pc_mb_sample<PHOTO, TEX>(p, S.b, sx[1], sy[1], vb);
                PC_UNROLL
                for (int ch = 0; ch < 3; ch++)
                    v[ch] = va[ch] - vb[ch];
            }
        }
        PC_UNROLL
        for (int ch = 0; ch < 3; ch++)
            d0[(ch * PC_MB_RH + cy) * PC_MB_RW + cx] = v[ch];
    }
    __syncthreads();
    for (int q = tid; q < 3 * PC_MB_RH * PC_MB_T1W; q += PC_MB_NT) {
        const int hx = q % PC_MB_T1W, r = q / PC_MB_T1W; /* r = ch * RH + cy */
        const float *s = d0 + r * PC_MB_RW + 2 * hx;
        hr[q] = pc_mb_reduce5(s[0], s[1], s[2], s[3], s[4]);
    }
    __syncthreads();
    for (int q = tid; q < PC_MB_T1W * PC_MB_T1H; q += PC_MB_NT) {
        const int hx = q % PC_MB_T1W, hy = q / PC_MB_T1W;
        const int i = I0 + hx, j = J0 + hy;
        if (i >= S.w[1] || j >= S.h[1])
            continue;
        float v[3];
        PC_UNROLL
        for (int ch = 0; ch < 3; ch++) {
            const float *s = hr + (ch * PC_MB_RH + 2 * hy) * PC_MB_T1W + hx;
            v[ch] = pc_mb_reduce5(s[0], s[PC_MB_T1W], s[2 * PC_MB_T1W], s[3 * PC_MB_T1W], s[4 * PC_MB_T1W]);
        }
        m.d[1][S.off[1] + (size_t)j * S.w[1] + i] = make_float4(v[0], v[1], v[2], 0.0f);
    }
}

/* The pixel of level k that this thread of a 16x16 block has; 0 past the
 * strip's level. */
PC_DEV int pc_mb_level_px(const pc_mb_strip &S, int k, int &i, int &j)
{
    i = (int)(blockIdx.x * PC_MB_LB + threadIdx.x);
    j = (int)(blockIdx.y * PC_MB_LB + threadIdx.y);
    return i < S.w[k] && j < S.h[k];
}

/* REDUCE: D_k from D_{k-1}; at the top level also C_k = G_k D_k. */
static PC_KERNEL void pc_mb_reduce_kernel(const __grid_constant__ pc_mbkparams m, int k)
{
    const pc_mb_strip &S = m.strips[blockIdx.z];
    int i, j;
    if (!pc_mb_level_px(S, k, i, j))
        return;
    const int w = S.w[k - 1], h = S.h[k - 1];
    const float4 *src = m.d[k - 1] + S.off[k - 1];
    float r[3][5];
    PC_UNROLL
    for (int t = 0; t < 5; t++) {
        const float4 *row = src + (size_t)pc_mb_clampi(2 * j - 2 + t, h) * w;
        const float4 a0 = row[pc_mb_clampi(2 * i - 2, w)], a1 = row[pc_mb_clampi(2 * i - 1, w)],
                     a2 = row[pc_mb_clampi(2 * i, w)], a3 = row[pc_mb_clampi(2 * i + 1, w)],
                     a4 = row[pc_mb_clampi(2 * i + 2, w)];
        r[0][t] = pc_mb_reduce5(a0.x, a1.x, a2.x, a3.x, a4.x);
        r[1][t] = pc_mb_reduce5(a0.y, a1.y, a2.y, a3.y, a4.y);
        r[2][t] = pc_mb_reduce5(a0.z, a1.z, a2.z, a3.z, a4.z);
    }
    float v[3];
    PC_UNROLL
    for (int ch = 0; ch < 3; ch++)
        v[ch] = pc_mb_reduce5(r[ch][0], r[ch][1], r[ch][2], r[ch][3], r[ch][4]);
    const size_t o = S.off[k] + (size_t)j * S.w[k] + i;
    m.d[k][o] = make_float4(v[0], v[1], v[2], 0.0f);
    if (k == m.levels - 1) {
        const float g = m.mask[k][o];
        m.c[k][o] = make_float4(g * v[0], g * v[1], g * v[2], 0.0f);
    }
}

/* expand of a level-(k+1) array (w x h) at level-k pixel (x, y), 3 channels. */
PC_DEV void pc_mb_expand4(const float4 *src, int w, int h, int x, int y, float out[3])
{
    const int mx = x >> 1, ny = y >> 1;
    const int c0 = pc_mb_clampi(mx - 1, w), c1 = pc_mb_clampi(mx, w), c2 = pc_mb_clampi(mx + 1, w);
    float r[3][3];
    PC_UNROLL
    for (int t = 0; t < 3; t++) {
        const float4 *row = src + (size_t)pc_mb_clampi(ny - 1 + t, h) * w;
        const float4 a = row[c0], b = row[c1], c = row[c2];
        r[0][t] = pc_mb_expand3(x & 1, a.x, b.x, c.x);
        r[1][t] = pc_mb_expand3(x & 1, a.y, b.y, c.y);
        r[2][t] = pc_mb_expand3(x & 1, a.z, b.z, c.z);
    }
    PC_UNROLL
    for (int ch = 0; ch < 3; ch++)
        out[ch] = pc_mb_expand3(y & 1, r[ch][0], r[ch][1], r[ch][2]);
}

/* COLLAPSE: C_k from G_k, D_k and level k+1's D and C. */
static PC_KERNEL void pc_mb_collapse_kernel(const __grid_constant__ pc_mbkparams m, int k)
{
    const pc_mb_strip &S = m.strips[blockIdx.z];
    int i, j;
    if (!pc_mb_level_px(S, k, i, j))
        return;
    float ed[3], ec[3];
    pc_mb_expand4(m.d[k + 1] + S.off[k + 1], S.w[k + 1], S.h[k + 1], i, j, ed);
    pc_mb_expand4(m.c[k + 1] + S.off[k + 1], S.w[k + 1], S.h[k + 1], i, j, ec);
    const size_t o = S.off[k] + (size_t)j * S.w[k] + i;
    const float g = m.mask[k][o];
    const float4 d = m.d[k][o];
    m.c[k][o] = make_float4(pc_mb_collapse(g, d.x, ed[0], ec[0]), pc_mb_collapse(g, d.y, ed[1], ec[1]),
                            pc_mb_collapse(g, d.z, ed[2], ec[2]), 0.0f);
}

/* expand of a level-1 array (w x h) at the four pixels of level-0 block
 * (2m, 2n): its 3x3 neighbourhood read once, out[k] pixel (k & 1, k >> 1). */
PC_DEV void pc_mb_expand_block(const float4 *src, int w, int h, int mx, int ny, float out[4][3])
{
    const int c0 = pc_mb_clampi(mx - 1, w), c1 = pc_mb_clampi(mx, w), c2 = pc_mb_clampi(mx + 1, w);
    float r[2][3][3]; /* [x parity][channel][row] */
    PC_UNROLL
    for (int t = 0; t < 3; t++) {
        const float4 *row = src + (size_t)pc_mb_clampi(ny - 1 + t, h) * w;
        const float4 a = row[c0], b = row[c1], c = row[c2];
        PC_UNROLL
        for (int px = 0; px < 2; px++) {
            r[px][0][t] = pc_mb_expand3(px, a.x, b.x, c.x);
            r[px][1][t] = pc_mb_expand3(px, a.y, b.y, c.y);
            r[px][2][t] = pc_mb_expand3(px, a.z, b.z, c.z);
        }
    }
    PC_UNROLL
    for (int k = 0; k < 4; k++)
        PC_UNROLL
        for (int ch = 0; ch < 3; ch++)
            out[k][ch] = pc_mb_expand3(k >> 1, r[k & 1][ch][0], r[k & 1][ch][1], r[k & 1][ch][2]);
}

/* STRIPS: the 2x2 block of strip blockIdx.z this thread has: the cameras
 * each pixel needs (a's side of the seam a, b's side b, both on the ramp;
 * the other where one does not see it), then the blend. */
template <int FMT, int PHOTO, int TEX>
PC_KERNEL void PC_RBOUNDS(PC_RBX * PC_RBY) pc_mb_strips_kernel(const __grid_constant__ pc_rkparams p,
                                                                const __grid_constant__ pc_mbkparams m)
{
    const pc_mb_strip &S = m.strips[blockIdx.z];
    const int bi = 2 * (int)(blockIdx.x * PC_RBX + threadIdx.x), bj = 2 * (int)(blockIdx.y * PC_RBY + threadIdx.y);
    if (bi >= S.w[0] || bj >= S.h[0])
        return;
    const int x = S.x0 + bi, y = S.y0 + bj;
    if (m.tile_strip[(size_t)(y / PC_RENDER_TILE_H) * m.ntx + x / PC_RENDER_TILE_W] != (int)blockIdx.z)
        return; /* beyond the blend zone: the main pass's (a whole warp: one tile) */
    float a[4][3], b[4][3], cover[4], g0[4], ws[4];
    int any = 0, any_a = 0;
    PC_UNROLL
    for (int k = 0; k < 4; k++) {
        const int xk = x + (k & 1), yk = y + (k >> 1);
        float sx[2], sy[2], dd[2], va[3] = {0.0f, 0.0f, 0.0f}, vb[3] = {0.0f, 0.0f, 0.0f};
        int ok[2];
        pc_mb_project<PHOTO, TEX>(p, S, xk, yk, sx, sy, ok, dd);
        g0[k] = pc_mb_g0((float)xk, m.seam[S.seam_off + (size_t)(bj + (k >> 1))], m.inv_sw);
        if (ok[0] && (g0[k] > 0.0f || !ok[1]))
            pc_mb_sample<PHOTO, TEX>(p, S.a, sx[0], sy[0], va);
        if (ok[1] && (g0[k] < 1.0f || !ok[0]))
            pc_mb_sample<PHOTO, TEX>(p, S.b, sx[1], sy[1], vb);
        PC_UNROLL
        for (int ch = 0; ch < 3; ch++) {
            a[k][ch] = ok[0] ? va[ch] : vb[ch];
            b[k][ch] = ok[1] ? vb[ch] : va[ch];
        }
        cover[k] = pc_mb_cover(ok[0], dd[0], ok[1], dd[1]);
        ws[k] = ok[0] || ok[1] ? 1.0f : 0.0f;
        any |= ws[k] > 0.0f;
        any_a |= ws[k] > 0.0f && g0[k] > 0.0f;
    }
    float ec[4][3], ed[4][3], acc[4][3];
    if (any)
        pc_mb_expand_block(m.c[1] + S.off[1], S.w[1], S.h[1], bi >> 1, bj >> 1, ec);
    if (any_a)
        pc_mb_expand_block(m.d[1] + S.off[1], S.w[1], S.h[1], bi >> 1, bj >> 1, ed);
    PC_UNROLL
    for (int k = 0; k < 4; k++)
        PC_UNROLL
        for (int ch = 0; ch < 3; ch++)
            acc[k][ch] = ws[k] > 0.0f ? pc_mb_final(g0[k], a[k][ch], b[k][ch], ec[k][ch], any_a ? ed[k][ch] : 0.0f,
                                                    cover[k])
                                      : 0.0f;
    pc_rfinish<FMT, PHOTO>(p, x, y, acc, ws);
}

#endif
