/* cuda_net.cuh - the CUDA kernels of the learned demosaic (--algo net; the
 * network is in net.h and docs/net.md, its C reference net_reference.c, the
 * weights' fp16 layouts net_gpu.h): fp16 weights and activations on the
 * tensor cores (mma.sync m16n8k16 and, on Hopper, wgmma: cuda_mma.cuh),
 * fp32 accumulation.
 * Compiled by nvcc (cuda_net.cu) and, after cuda_emu.h, as host C++ for
 * the emulation test (cuda_emu_net.cc), like cuda_mlri.cuh.
 *
 * A frame is its cameras (cam_rows rows each) side by side in planes of
 * half-resolution cells, one plane per camera: cell (cx, cy) is the
 * network's 2x2 input block at input pixels (2 cx, 2 cy), i.e. camera pixel
 * (2 cx - padx, 2 cy - pady) (net_impl.h's geometry: reflect-101 at the
 * camera's own edges, the GRBG block grid). Activations are NHWC fp16, 64
 * channels = 128 bytes per cell; every layer writes its valid cells
 * [l, Wn - 1 - l] x [l, Hn - 1 - l] (unpadded 3x3 convolutions shrink by
 * one cell a side) in place in a plane of fixed size, two planes ping-pong.
 * Launches per frame (all cameras in each, 1..16):
 *   1. L1     raw slot -> layer 1 (pack folded into conv 1, 36 -> 64):
 *             a tile's samples staged once as fp16 (reflect-101 there),
 *             A fragments as 4-byte loads, 3 x 8 mma per 16 cells
 *   2. CONV   depth - 2 times: a 3x3 64 -> 64 layer as an implicit GEMM
 *   3. CONV   the last layer's filters (64 of its 128 outputs), ReLU
 *   4. CONVU  its masks; epilogue: filters * masks (64) -> U (12 = three
 *             colours at the 2x2 block's four pixels: residual and
 *             upsampler folded) on the tensor cores, 32 bytes per cell
 *   5. TAIL   full resolution: post (3x3, 6 -> 64, ReLU) on the tensor
 *             cores per 16 same-parity pixels from staged 8-byte features
 *             (sample, U's three colours), out (64 -> 3) in fp32,
 *             clamp, x 255, round; the destination's format by MLRI's
 *             block writer (stacked, grid, colour bands, NV12/I420/RGB).
 *
 * CONV, the ~98 % of the work, is in cuda_net_conv.cuh (its shape and the
 * reasons), as mma.sync m16n8k16 kernels for every GPU of compute
 * capability 8.0+ and wgmma (warpgroup MMA) kernels for Hopper's sm_90a,
 * chosen per GPU by the host (cuda_net.cu); both share tiles, loads and
 * epilogues.
 */
#ifndef PANOCAP_CUDA_NET_CUH
#define PANOCAP_CUDA_NET_CUH

#include "cuda_mlri.cuh" /* pc_mlri_kp, pc_mlri_set_dst, pc_mlri_store_block: the destination's writer */
#include "cuda_mma.cuh"
#include "net_gpu.h"

#define PC_NET_TW 16                    /* CONV tile width (cells): one m16 fragment row */
#define PC_NET_IC (PC_NET_TW + 2)       /* input tile width with its halo */
#define PC_NET_WBYTES (9 * 64 * 128)    /* a layer's weights in shared memory */
#define PC_NET_UCH 16                   /* U channels stored per cell (12 used) */
#define PC_NET_L1_NT 128                /* L1: threads per CTA (4 warps, one row of the tile each) */
#define PC_NET_XW 32                    /* TAIL: tile of 32 x 16 full-resolution pixels */
#define PC_NET_XH 16
#define PC_NET_XNT 256                  /* TAIL: 8 warps, 2 rows each */
#define PC_NET_XRW (PC_NET_XW + 2)      /* staged features: 34 x 18 */
#define PC_NET_XRH (PC_NET_XH + 2)

#if defined(__CUDACC__) && !defined(PC_NET_DX_UNROLL)
#define PC_NET_DX_UNROLL _Pragma("unroll 1")
#define PC_NET_KC_UNROLL _Pragma("unroll")
#elif !defined(PC_NET_DX_UNROLL)
#define PC_NET_DX_UNROLL
#define PC_NET_KC_UNROLL
#endif

/* One frame's geometry (pc_net_geo_set). */
struct pc_net_geo {
    int W, cam_h, ncam; /* frame width, rows per camera, cameras */
    int padx, pady;     /* input pixels before the camera's first column / row */
    int Wn, Hn;         /* the network's input cells per camera */
    int Wp, Hp;         /* the planes' cells per camera (allocated) */
};

/* The frame's geometry for net (depth D): pad = margin + 0 or 1 so that
 * the input starts on a G R / B G block (net_impl.h). Planes of Wp x Hp
 * cells fit any CFA phase: Wp = W / 2 + 2 D + 2. Host. */
inline void pc_net_geo_set(pc_net_geo &g, int depth, int W, int cam_h, int ncam, pc_cfa cfa)
{
    const int M = 2 * depth + 1;
    const int ox = cfa == PC_CFA_GRBG || cfa == PC_CFA_BGGR, oy = cfa == PC_CFA_GBRG || cfa == PC_CFA_BGGR;
    const int bx = (ox + 1) & 1, by = oy;
    g.W = W;
    g.cam_h = cam_h;
    g.ncam = ncam;
    g.padx = M + ((bx + M) & 1);
    g.pady = M + ((by + M) & 1);
    g.Wn = W / 2 + g.padx;
    g.Hn = cam_h / 2 + g.pady;
    g.Wp = W / 2 + M + 1;
    g.Hp = cam_h / 2 + M + 1;
}

/* Cells of one 64-channel plane for frames of W x H in ncam_max cameras
 * at most (each camera's margins), any CFA phase. Host. */
inline size_t pc_net_plane_cells(int depth, int W, int H, int ncam_max)
{
    const int M = 2 * depth + 1;
    return ((size_t)H / 2 + (size_t)(M + 1) * ncam_max) * ((size_t)W / 2 + M + 1);
}

PC_DEV size_t pc_net_cell(const pc_net_geo &g, int cam, int cx, int cy)
{
    return ((size_t)cam * g.Hp + cy) * g.Wp + cx;
}
PC_DEV int pc_net_clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
PC_DEV float pc_net_relu(float v) { return v > 0.0f ? v : 0.0f; }
/* The reference's output code value: clamped, x 255, + 0.5, truncated. */
PC_DEV int pc_net_code(float v) { return (int)(__saturatef(v) * 255.0f + 0.5f); }

/* v[j] of lane t (t = lane & 3) is word t of 16-byte chunk j (0..3) of a
 * row the 4 lanes of a quad hold; afterwards lane t holds chunk t whole
 * (v[w] = its word w): a 4 x 4 transpose in two exchanges, with lane t ^ 1
 * (the words of the other parity) and with lane t ^ 2. */
PC_DEV void pc_net_quad_transpose(unsigned (&v)[4], int t)
{
    const bool p = (t & 1) != 0, q = (t & 2) != 0;
    unsigned r0 = __shfl_xor_sync(0xFFFFFFFFu, p ? v[0] : v[1], 1);
    unsigned r1 = __shfl_xor_sync(0xFFFFFFFFu, p ? v[2] : v[3], 1);
    const unsigned o0 = p ? r0 : v[0], o1 = p ? v[1] : r0, o2 = p ? r1 : v[2], o3 = p ? v[3] : r1;
    r0 = __shfl_xor_sync(0xFFFFFFFFu, q ? o0 : o2, 2);
    r1 = __shfl_xor_sync(0xFFFFFFFFu, q ? o1 : o3, 2);
    v[0] = q ? r0 : o0;
    v[1] = q ? r1 : o1;
    v[2] = q ? o2 : r0;
    v[3] = q ? o3 : r1;
}

/* A fragment's 16 cells x 64 channels (mma.m16n8k16's C layout per n8
 * block, fp32: cells cx0 + g and cx0 + g + 8 of row cy) to the plane out:
 * bias, ReLU, fp16; the quad transposes the packed channel pairs of chunks
 * 0-3 and 4-7, and lane t stores chunks t and t + 4 of its cell, 16 bytes
 * each (a warp's store: 8 cells x 64 contiguous bytes). Only cells up to
 * (xe, ye) are stored. No shared memory, no barrier. */
PC_DEV void pc_net_store_frag(uint16_t *out, const pc_net_geo &G, int cam, int cx0, int cy, int xe, int ye,
                              const float (&acc)[8][4], const float (&bv)[8][2])
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
    PC_UNROLL
    for (int h = 0; h < 2; h++) {
        unsigned v[2][4];
        PC_UNROLL
        for (int n = 0; n < 8; n++)
            v[n >> 2][n & 3] =
                pc_h2(pc_net_relu(acc[n][2 * h] + bv[n][0]), pc_net_relu(acc[n][2 * h + 1] + bv[n][1]));
        pc_net_quad_transpose(v[0], tq);
        pc_net_quad_transpose(v[1], tq);
        const int cx = cx0 + g + 8 * h;
        if (cx <= xe && cy <= ye) {
            uint16_t *o = out + pc_net_cell(G, cam, cx, cy) * 64;
            *(uint4 *)(o + 8 * tq) = make_uint4(v[0][0], v[0][1], v[0][2], v[0][3]);
            *(uint4 *)(o + 8 * (tq + 4)) = make_uint4(v[1][0], v[1][1], v[1][2], v[1][3]);
        }
    }
}

/* --- CONV (cuda_net_conv.cuh: mma.sync and wgmma) --------------------------- */

#include "cuda_net_conv.cuh"

/* --- L1 -------------------------------------------------------------------- */

#define PC_NET_L1_TW 64                        /* L1 tile: 64 cells across, */
#define PC_NET_L1_TH (PC_NET_L1_NT / 32)       /* one row per warp */
#define PC_NET_L1_SW (2 * PC_NET_L1_TW + 4)    /* its samples with the 1-cell halo: 132 x 12 */
#define PC_NET_L1_SH (2 * PC_NET_L1_TH + 4)
#define PC_NET_L1_SMEM (PC_NET_L1_SW * PC_NET_L1_SH * 2)

struct pc_net_l1p {
    const uint8_t *src; /* the 8-bit frame: camera k's rows from k * cam_h */
    size_t pitch;
    uint16_t *out;      /* layer 1's plane */
    const uint2 *frag;  /* B fragments [3][8][32] (net_gpu.h) */
    const float *bias;  /* [64] */
    int tx, ty, ntiles; /* 64 x 4-cell tiles across and down a camera, in all */
    pc_net_geo g;
};

/* Camera cam's sample under network input pixel (ix, iy), reflect-101
 * (repeated for cameras smaller than the pad). */
PC_DEV unsigned pc_net_sample(const uint8_t *src, size_t pitch, const pc_net_geo &g, int cam, int ix, int iy)
{
    const int x = pc_fold(ix - g.padx, g.W), y = pc_fold(iy - g.pady, g.cam_h);
    return src[((size_t)cam * g.cam_h + y) * pitch + x];
}

/* Layer 1 (pack folded into conv 1: 36 -> 64 a cell), 64 x 4 cells a
 * tile: the tile's 132 x 12 input samples (reflect-101 applied once, here)
 * staged as fp16, row-major; warp w computes row w in four fragments of 16
 * cells. K slot tap * 4 + r (net_gpu.h), so lane t's k pairs 2t, 2t+1 (+ 8)
 * are the two samples of row t & 1 of cell tap 4 kc + (t >> 1) (+ 2): one
 * 4-byte load from the staged samples each, at an offset fixed per lane.
 * Outputs: bias, ReLU, fp16, stored from the registers (pc_net_store_frag).
 * Prediction (5 x 2040x1080): bound by writing the plane, 3.0 M cells x 128
 * bytes = 0.38 GB, ~0.12 ms at 3.2-3.5 TB/s (was 0.33 ms gathering 24
 * bytes a lane and fragment straight from the frame with the fold on each);
 * the samples (11 MB) and the 24 mma per 16 cells are far below it. */
PC_DEV void pc_net_l1_body(const pc_net_l1p &p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();
#else
    PC_SMEM_DECL(sm);
    uint16_t *const st = (uint16_t *)sm;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, tq = lane & 3;
    unsigned bf[3][8][2];
    float bv[8][2];
    PC_UNROLL
    for (int kc = 0; kc < 3; kc++)
        PC_UNROLL
        for (int n = 0; n < 8; n++) {
            const uint2 v = __ldg(p.frag + (kc * 8 + n) * 32 + lane);
            bf[kc][n][0] = v.x;
            bf[kc][n][1] = v.y;
        }
    PC_UNROLL
    for (int n = 0; n < 8; n++) {
        bv[n][0] = __ldg(p.bias + 8 * n + 2 * tq);
        bv[n][1] = __ldg(p.bias + 8 * n + 2 * tq + 1);
    }
    /* this lane's taps: the staged offset of the sample pair of its cell (0,
     * 0) of row 0, per (kc, s); -1 past tap 8 (zero in A) */
    int toff[3][2];
    PC_UNROLL
    for (int kc = 0; kc < 3; kc++)
        PC_UNROLL
        for (int s = 0; s < 2; s++) {
            const int tap = 4 * kc + (tq >> 1) + 2 * s, ty = tap / 3, tx = tap - 3 * ty;
            toff[kc][s] = tap < 9 ? (2 * ty + (tq & 1)) * PC_NET_L1_SW + 2 * tx : -1;
        }
    const pc_net_geo &G = p.g;
    const int xe = G.Wn - 2, ye = G.Hn - 2;
    for (int t = (int)blockIdx.x; t < p.ntiles; t += (int)gridDim.x) {
        const int per = p.tx * p.ty, cam = t / per, r = t - cam * per, tyi = r / p.tx;
        const int cx0 = 1 + PC_NET_L1_TW * (r - tyi * p.tx), cy0 = 1 + PC_NET_L1_TH * tyi;
        __syncthreads(); /* the previous tile's samples are read */
        for (int i = tid; i < PC_NET_L1_SW * PC_NET_L1_SH; i += PC_NET_L1_NT) {
            const int sy = i / PC_NET_L1_SW, sx = i - sy * PC_NET_L1_SW;
            st[i] = __half_as_ushort(
                __float2half_rn((float)pc_net_sample(p.src, p.pitch, G, cam, 2 * (cx0 - 1) + sx, 2 * (cy0 - 1) + sy)));
        }
        __syncthreads();
        const int cy = cy0 + warp;
        const uint16_t *const row = st + 2 * warp * PC_NET_L1_SW + 2 * g;
        PC_NET_DX_UNROLL
        for (int seg = 0; seg < PC_NET_L1_TW / 16; seg++) {
            unsigned a[3][4];
            PC_UNROLL
            for (int kc = 0; kc < 3; kc++)
                PC_UNROLL
                for (int s = 0; s < 2; s++)
                    PC_UNROLL
                    for (int h = 0; h < 2; h++)
                        a[kc][2 * s + h] =
                            toff[kc][s] < 0 ? 0u : *(const unsigned *)(row + toff[kc][s] + 2 * (16 * seg + 8 * h));
            float acc[8][4];
            PC_UNROLL
            for (int n = 0; n < 8; n++)
                acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
            PC_UNROLL
            for (int kc = 0; kc < 3; kc++)
                PC_UNROLL
                for (int n = 0; n < 8; n++)
                    pc_mma_16816(acc[n], a[kc], bf[kc][n]);
            __syncwarp();
            pc_net_store_frag(p.out, G, cam, cx0 + 16 * seg, cy, xe, ye, acc, bv);
        }
    }
#endif
}

/* --- TAIL ------------------------------------------------------------------ */

struct pc_net_tp {
    const uint8_t *src; /* the 8-bit frame */
    size_t pitch;
    const uint16_t *u;      /* the U plane */
    const uint2 *pfrag;     /* post: B fragments [4 parities][3][8][32], its bias in K slots 34, 35 */
    const float *ow, *ob;   /* out: [3][64], [4] */
    int tx, ty, ntiles;     /* 32 x 16 tiles across and down a camera, in all */
    pc_net_geo g;
    pc_mlri_kp o;           /* the destination (pc_mlri_set_dst; o.W = the frame's width) */
};

#define PC_NET_X_PFRAG (4 * 3 * 8 * 32 * 8)
#define PC_NET_X_OFF_F PC_NET_X_PFRAG
#define PC_NET_X_OFF_RGB (PC_NET_X_OFF_F + PC_NET_XRW * PC_NET_XRH * 8)
#define PC_NET_X_OFF_W (PC_NET_X_OFF_RGB + ((PC_NET_XW * PC_NET_XH * 3 + 15) & ~15))
#define PC_NET_X_SMEM (PC_NET_X_OFF_W + (3 * 64 + 4) * 4)

/* Full resolution, 32 x 16 image-aligned pixels per tile (16 x 8 blocks of
 * the destination's 2x2). First the tile's 34 x 18 pixels with their halo
 * are staged as features of 8 bytes, {sample, U's R, G, B at the pixel} in
 * fp16 (the sample reflect-101, U from its cell and the pixel's place in
 * the 2x2 block), so an A register pair is one 8-byte load. An m16
 * fragment is 16 pixels of one parity (x = 2 i + b of row y), so one post
 * matrix (per parity: the mosaic's colour at each tap) serves it; warp w
 * takes rows w and w + 8 (the same row parity) and, per column parity b,
 * holds that matrix's B fragments in registers for both. K (net_gpu.h):
 * lane t holds taps t, t + 4 (t + 8) with the sample and U's R in its k
 * pair 2t, 2t + 1 and U's G, B in 2t + 8, 2t + 9; tap 9's first pair is
 * {1, 1} against post's bias split in two fp16 (slots 34, 35), so the
 * accumulators start from the bias to ~fp32 precision. post's 64 outputs
 * come out in fp32; ReLU; out (64 -> 3) is a dot product per lane over its
 * 16 channels in fp32, then two shuffles sum the 4 lanes of a row.
 * Prediction (5 x 2040x1080, 11 M pixels): ~0.3 ms (was 0.78), bound by
 * issue: post is 68 GFLOP on mma.sync (~0.17 ms at the ~400 TFLOP/s it
 * gives on Hopper) and the fp32 epilogue ~190 instructions a lane per 16
 * pixels, half of what the per-element gathers, bias and smem weight loads
 * took. */
PC_DEV void pc_net_tail_body(const pc_net_tp &p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();
#else
    PC_SMEM_DECL(sm);
    const uint2 *const pf = (const uint2 *)sm;
    uint2 *const feat = (uint2 *)(sm + PC_NET_X_OFF_F);
    uint8_t *const rgb = sm + PC_NET_X_OFF_RGB;
    float *const ow = (float *)(sm + PC_NET_X_OFF_W), *const ob = ow + 3 * 64;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, tq = lane & 3;
    for (int i = tid; i < PC_NET_X_PFRAG / 16; i += PC_NET_XNT)
        ((uint4 *)sm)[i] = __ldg((const uint4 *)p.pfrag + i);
    for (int i = tid; i < 3 * 64; i += PC_NET_XNT)
        ow[i] = __ldg(p.ow + i);
    if (tid < 3)
        ob[tid] = __ldg(p.ob + tid);
    /* this lane's taps t, t + 4, t + 8: their feature offsets from the
     * pixel's (tap 9: the bias slots; 10, 11: zero) */
    int foff[3];
    PC_UNROLL
    for (int kc = 0; kc < 3; kc++) {
        const int tap = 4 * kc + tq;
        foff[kc] = tap < 9 ? (tap / 3) * PC_NET_XRW + tap % 3 : -1 - (tap == 9);
    }
    const pc_net_geo &G = p.g;
    for (int t = (int)blockIdx.x; t < p.ntiles; t += (int)gridDim.x) {
        const int per = p.tx * p.ty, cam = t / per, r = t - cam * per, tyi = r / p.tx;
        const int x0 = PC_NET_XW * (r - tyi * p.tx), y0 = PC_NET_XH * tyi;
        __syncthreads(); /* the previous tile's stores have read rgb; the constants are in */
        for (int i = tid; i < PC_NET_XRW * PC_NET_XRH; i += PC_NET_XNT) {
            const int rr = i / PC_NET_XRW, c = i - rr * PC_NET_XRW;
            const int x = x0 - 1 + c, y = y0 - 1 + rr, qx = x + G.padx, qy = y + G.pady;
            const unsigned s = __half_as_ushort(__float2half_rn(
                (float)p.src[((size_t)cam * G.cam_h + pc_fold(y, G.cam_h)) * p.pitch + pc_fold(x, G.W)]));
            const uint16_t *uc =
                p.u + pc_net_cell(G, cam, pc_net_clampi(qx >> 1, 0, G.Wp - 1), pc_net_clampi(qy >> 1, 0, G.Hp - 1)) *
                          PC_NET_UCH +
                (((qy & 1) << 1) | (qx & 1));
            feat[i] = make_uint2(s | (unsigned)__ldg(uc) << 16, __ldg(uc + 4) | (unsigned)__ldg(uc + 8) << 16);
        }
        __syncthreads();
        PC_NET_DX_UNROLL
        for (int b = 0; b < 2; b++) {
            const int par = (((warp + G.pady) & 1) << 1) | ((b + G.padx) & 1);
            unsigned bb[3][8][2];
            PC_UNROLL
            for (int kc = 0; kc < 3; kc++)
                PC_UNROLL
                for (int n = 0; n < 8; n++) {
                    const uint2 v = pf[((par * 3 + kc) * 8 + n) * 32 + lane];
                    bb[kc][n][0] = v.x;
                    bb[kc][n][1] = v.y;
                }
            PC_UNROLL
            for (int rw = 0; rw < 2; rw++) {
                const int yl = warp + 8 * rw;
                const uint2 *const fb = feat + yl * PC_NET_XRW + 2 * g + b;
                unsigned af[3][4];
                PC_UNROLL
                for (int kc = 0; kc < 3; kc++)
                    PC_UNROLL
                    for (int h = 0; h < 2; h++) {
                        uint2 v = make_uint2(foff[kc] == -2 ? 0x3C003C00u : 0u, 0u);
                        if (foff[kc] >= 0)
                            v = fb[foff[kc] + 16 * h];
                        af[kc][h] = v.x;
                        af[kc][2 + h] = v.y;
                    }
                float acc[8][4];
                PC_UNROLL
                for (int n = 0; n < 8; n++)
                    acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
                PC_UNROLL
                for (int kc = 0; kc < 3; kc++)
                    PC_UNROLL
                    for (int n = 0; n < 8; n++)
                        pc_mma_16816(acc[n], af[kc], bb[kc][n]);
                __syncwarp();
                float s[2][3] = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}};
                PC_UNROLL
                for (int n = 0; n < 8; n++)
                    PC_UNROLL
                    for (int c = 0; c < 3; c++) {
                        const float2 w = *(const float2 *)(ow + c * 64 + 8 * n + 2 * tq);
                        s[0][c] += pc_net_relu(acc[n][0]) * w.x;
                        s[0][c] += pc_net_relu(acc[n][1]) * w.y;
                        s[1][c] += pc_net_relu(acc[n][2]) * w.x;
                        s[1][c] += pc_net_relu(acc[n][3]) * w.y;
                    }
                PC_UNROLL
                for (int m = 1; m <= 2; m <<= 1)
                    PC_UNROLL
                    for (int h = 0; h < 2; h++)
                        PC_UNROLL
                        for (int c = 0; c < 3; c++)
                            s[h][c] += __shfl_xor_sync(0xFFFFFFFFu, s[h][c], m);
                if (tq < 2) {
                    const int xl = 2 * (g + 8 * tq) + b;
                    PC_UNROLL
                    for (int c = 0; c < 3; c++)
                        rgb[(yl * PC_NET_XW + xl) * 3 + c] = (uint8_t)pc_net_code((tq ? s[1][c] : s[0][c]) + ob[c]);
                }
            }
        }
        __syncthreads();
        for (int i = tid; i < (PC_NET_XW / 2) * (PC_NET_XH / 2); i += PC_NET_XNT) {
            const int bx = i % (PC_NET_XW / 2), by = i / (PC_NET_XW / 2), X = x0 + 2 * bx, Y = y0 + 2 * by;
            if (X >= G.W || Y >= G.cam_h)
                continue;
            int v[2][2][3];
            for (int j = 0; j < 2; j++)
                for (int k = 0; k < 2; k++)
                    for (int c = 0; c < 3; c++)
                        v[j][k][c] = rgb[((2 * by + j) * PC_NET_XW + 2 * bx + k) * 3 + c];
            pc_mlri_store_block(p.o, X, cam * G.cam_h + Y, v);
        }
    }
#endif
}

/* --- the launch sequence ---------------------------------------------------- */

/* One frame, for the device host code (cuda_net.cu) and the emulation
 * (cuda_emu_net.cc): the planes, the weights (a blob of net_gpu.h's layout
 * in the launches' memory), the grid sizes. */
struct pc_net_frame_args {
    pc_net_geo g;
    int depth;
    const uint8_t *src;
    size_t pitch;
    uint16_t *act[2]; /* the 64-channel planes */
    uint16_t *uplane;
    const unsigned char *blob;
    const pc_netg_layout *lay;
    int wg, wr, nbuf;           /* CONV's kernel: wgmma or mma.sync, WR warps, NBUF input buffers */
    int ctas_conv, ctas_l1, ctas_tail;
    pc_mlri_kp o;               /* the destination */
};

enum { PC_NET_K_L1 = 0, PC_NET_K_CONV, PC_NET_K_CONVU, PC_NET_K_TAIL };

/* L is a launcher: L.l1(grid, p), L.conv(mode, wg, wr, nbuf, grid, p),
 * L.tail(grid, p), each returning 0 or an error. Launches depth + 2
 * kernels; returns the first error. */
template <class L>
int pc_net_sequence(L &launch, const pc_net_frame_args &f)
{
    const pc_net_geo &g = f.g;
    const pc_netg_layout &lay = *f.lay;
    const int D = f.depth, TR = 4 * f.wr;
    int rc;
    pc_net_l1p l1;
    l1.src = f.src;
    l1.pitch = f.pitch;
    l1.out = f.act[0];
    l1.frag = (const uint2 *)(f.blob + lay.l1_frag);
    l1.bias = (const float *)(f.blob + lay.l1_bias);
    l1.tx = (g.Wn - 2 + PC_NET_L1_TW - 1) / PC_NET_L1_TW;
    l1.ty = (g.Hn - 2 + PC_NET_L1_TH - 1) / PC_NET_L1_TH;
    l1.ntiles = g.ncam * l1.tx * l1.ty;
    l1.g = g;
    if ((rc = launch.l1(l1.ntiles < f.ctas_l1 ? l1.ntiles : f.ctas_l1, l1)))
        return rc;
    /* conv k: k < D - 2 layer k + 2 (act[k % 2] -> act[(k + 1) % 2]); then
     * layer D's filters and masks, both from X = layer D - 1 */
    const int X = (D - 2) & 1;
    for (int k = 0; k < D; k++) {
        pc_net_lp p;
        memset(&p, 0, sizeof p);
        p.l = k < D - 2 ? k + 2 : D;
        p.in = f.act[k < D - 2 ? k & 1 : X];
        p.out = k < D - 2 ? f.act[(k + 1) & 1] : k == D - 2 ? f.act[X ^ 1] : nullptr;
        p.w = (const uint16_t *)(f.blob + lay.conv[k]);
        p.bias = (const float *)(f.blob + lay.bias[k]);
        p.tx = (g.Wn - 2 * p.l + PC_NET_TW - 1) / PC_NET_TW;
        p.ty = (g.Hn - 2 * p.l + TR - 1) / TR;
        p.ntiles = g.ncam * p.tx * p.ty;
        p.g = g;
        const int mode = k == D - 1;
        if (mode) {
            p.f = f.act[X ^ 1];
            p.u = f.uplane;
            p.rfrag = (const uint2 *)(f.blob + lay.r_frag);
            p.rbias = (const float *)(f.blob + lay.r_bias);
        }
        if ((rc = launch.conv(mode, f.wg, f.wr, f.nbuf, p.ntiles < f.ctas_conv ? p.ntiles : f.ctas_conv, p)))
            return rc;
    }
    pc_net_tp tp;
    tp.src = f.src;
    tp.pitch = f.pitch;
    tp.u = f.uplane;
    tp.pfrag = (const uint2 *)(f.blob + lay.post_frag);
    tp.ow = (const float *)(f.blob + lay.out_w);
    tp.ob = (const float *)(f.blob + lay.out_b);
    tp.tx = (g.W + PC_NET_XW - 1) / PC_NET_XW;
    tp.ty = (g.cam_h + PC_NET_XH - 1) / PC_NET_XH;
    tp.ntiles = g.ncam * tp.tx * tp.ty;
    tp.g = g;
    tp.o = f.o;
    return launch.tail(tp.ntiles < f.ctas_tail ? tp.ntiles : f.ctas_tail, tp);
}

#endif
