/* cuda_net.cuh - the CUDA kernels of the learned demosaic (--algo net; the
 * network is in net.h and docs/net.md, its C reference net_reference.c, the
 * weights' fp16 layouts net_gpu.h): fp16 weights and activations on the
 * tensor cores (mma.sync m16n8k16, cuda_mma.cuh), fp32 accumulation.
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
 *             A fragments gathered straight from the 8-bit samples
 *             (reflect-101 by index), 3 x 8 mma per 16 cells
 *   2. CONV   depth - 2 times: a 3x3 64 -> 64 layer as an implicit GEMM
 *   3. CONV   the last layer's filters (64 of its 128 outputs), ReLU
 *   4. CONVU  its masks; epilogue: filters * masks (64) -> U (12 = three
 *             colours at the 2x2 block's four pixels: residual and
 *             upsampler folded) on the tensor cores, 32 bytes per cell
 *   5. TAIL   full resolution: post (3x3, 6 -> 64, ReLU) on the tensor
 *             cores per 16 same-parity pixels, out (64 -> 3) in fp32,
 *             clamp, x 255, round; the destination's format by MLRI's
 *             block writer (stacked, grid, colour bands, NV12/I420/RGB).
 *
 * CONV, the ~98 % of the work (1.03 MFLOP of the 1.11 per half-resolution
 * cell), and why it is shaped so:
 *  - Persistent CTAs, one per SM, each loading the layer's weights (9 x 64
 *    x 64 fp16 = 72 KB) into shared memory once and then walking tiles of
 *    16 x 4 WR cells (WR warps, 4 output rows each). Weights in shared
 *    memory once per SM instead of per tile: 132 x 72 KB per layer.
 *  - The input tile with its 1-cell halo ((4 WR + 2) x 18 cells) comes in
 *    by cp.async, double-buffered (NBUF 2): the next tile loads while the
 *    warps compute this one, so the 256 bytes a cell moves per layer
 *    (0.75 GB per 5-camera frame and layer, ~0.2 ms at 3.5 TB/s) hide
 *    under the ~0.45 ms of mma the layer takes.
 *  - A warp's tile is 4 rows x 16 cells x 64 output channels (128 fp32
 *    accumulators a thread). An m16 fragment is one row of 16 cells, so
 *    the 3 vertical taps of a 4-row tile read 6 input rows: per (dx, k16)
 *    6 ldmatrix.x4 for A and 3 x 4 for B feed 96 mma (42.7 FLOP per byte
 *    of shared memory read; a 32 x 64 warp tile without the row reuse
 *    would be 22, at the limit of the 128 B/clock of an SM).
 *  - No bank conflicts: a cell's 8 chunks of 16 bytes are stored at chunk
 *    k ^ (cell & 7) (cell = its index in the tile), a weight row's at k ^
 *    (cout & 7); the 8 rows of every ldmatrix phase are 8 consecutive cells
 *    or output channels, i.e. 8 distinct 16-byte bank groups (the
 *    emulation counts the wavefronts: tests/test_cuda_emu_net.c).
 *  - Epilogue: bias, ReLU, fp16, staged in the (consumed) input buffer in
 *    the same swizzle, then 16-byte coalesced stores of whole cells.
 *  - Shared memory: 72 KB + NBUF x (4 WR + 2) x 18 x 128 B: WR 8 / NBUF 2
 *    is 225 KB (Hopper: 227 KB per block), WR 4 / NBUF 2 153 KB (A100: 163
 *    KB), WR 2 / NBUF 1 94.5 KB (sm_86/89: 99 KB). The host picks the
 *    largest that fits (cuda_net.cu); PANOCAP_NET_TILE="WR,NBUF" forces one,
 *    e.g. "4,1" on Hopper: 112.5 KB, two CTAs per SM, one computing while
 *    the other loads its tile or stores its outputs.
 *  - Registers (ptxas, sm_90): 211-225 a thread, no spills, with the dx
 *    loop rolled and the k16 loop unrolled (unrolling both spilled).
 * The tiles of a layer that reach past its valid cells compute garbage
 * (they read whatever the plane holds there) that no valid cell reads: a
 * row of A is one cell, its 3x3 window inside the previous layer's valid
 * cells when the cell is valid; stores are masked to the valid cells.
 *
 * Kept open for wgmma (sm_90a): the weights' smem layout (rows of 128 B,
 * 16-byte chunks XOR-swizzled by row & 7) is the 128-byte swizzle of the
 * Hopper descriptors, and the A operand of a row of 16 cells is 16
 * consecutive 128-byte rows; a warpgroup version would keep the tiles,
 * the planes and the launch sequence.
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
#define PC_NET_L1_NT 128                /* L1: threads per CTA (4 warps, 16 cells each at a time) */
#define PC_NET_XW 32                    /* TAIL: tile of 32 x 16 full-resolution pixels */
#define PC_NET_XH 16
#define PC_NET_XNT 256                  /* TAIL: 8 warps, 2 rows each */
#define PC_NET_XRW (PC_NET_XW + 2)      /* staged samples: 34 x 18 */
#define PC_NET_XRH (PC_NET_XH + 2)
#define PC_NET_XUW (PC_NET_XW / 2 + 2)  /* staged U cells: 18 x 10 */
#define PC_NET_XUH (PC_NET_XH / 2 + 2)

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

/* --- CONV ------------------------------------------------------------------ */

struct pc_net_lp {
    const uint16_t *in; /* the previous layer's plane */
    uint16_t *out;      /* this layer's (CONV) */
    const uint16_t *w;  /* fp16 [9][64][64] */
    const float *bias;  /* [64] */
    const uint16_t *f;  /* CONVU: the filters' plane */
    uint16_t *u;        /* CONVU: the U plane (16 fp16 per cell) */
    const uint2 *rfrag; /* CONVU: the 64 -> 16 map, B fragments [4][2][32] */
    const float *rbias; /* CONVU: [16] */
    int l;              /* the layer (2..depth): valid output cells [l, Wn - 1 - l] */
    int tx, ty, ntiles; /* tiles across and down a camera, in all */
    pc_net_geo g;
};

template <int WR, int NBUF>
constexpr size_t pc_net_conv_smem()
{
    return PC_NET_WBYTES + (size_t)NBUF * (4 * WR + 2) * PC_NET_IC * 128;
}
/* The CONV tiles instantiated: (8, 2), (4, 2), (2, 1), (4, 1). */
PC_HD int pc_net_tile_ok(int wr, int nbuf)
{
    return (wr == 8 && nbuf == 2) || (wr == 4 && (nbuf == 1 || nbuf == 2)) || (wr == 2 && nbuf == 1);
}

template <int WR>
PC_DEV void pc_net_tile_pos(const pc_net_lp &p, int t, int &cam, int &ox, int &oy)
{
    const int per = p.tx * p.ty;
    cam = t / per;
    const int r = t - cam * per, y = r / p.tx;
    ox = p.l + PC_NET_TW * (r - y * p.tx);
    oy = p.l + 4 * WR * y;
}

/* The input tile of tile t with its halo, by cp.async: cell q = r * 18 + c
 * of the tile at q * 128, its chunk k at (k ^ (q & 7)) * 16. Cells past the
 * plane are clamped into it (what they hold feeds only invalid outputs). */
template <int WR>
PC_DEV void pc_net_load_tile(const pc_net_lp &p, int t, unsigned char *buf)
{
    constexpr int IR = 4 * WR + 2, NT = 32 * WR;
    int cam, ox, oy;
    pc_net_tile_pos<WR>(p, t, cam, ox, oy);
    for (int i = (int)threadIdx.x; i < IR * PC_NET_IC * 8; i += NT) {
        const int q = i >> 3, k = i & 7, r = q / PC_NET_IC, c = q - r * PC_NET_IC;
        const int cx = pc_net_clampi(ox - 1 + c, 0, p.g.Wp - 1), cy = pc_net_clampi(oy - 1 + r, 0, p.g.Hp - 1);
        pc_cp_async16(buf + q * 128 + ((k ^ (q & 7)) << 4), p.in + pc_net_cell(p.g, cam, cx, cy) * 64 + k * 8);
    }
}

/* Bias, ReLU, fp16: the tile's outputs staged at st (output cell q = row *
 * 16 + col, 128 bytes, chunk n at n ^ (q & 7)), then stored whole. */
template <int WR>
PC_DEV void pc_net_epi_store(const pc_net_lp &p, float (&acc)[4][8][4], unsigned char *st, int cam, int ox, int oy)
{
    constexpr int TR = 4 * WR, NT = 32 * WR;
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5, g = lane >> 2, tq = lane & 3;
    float bv[8][2];
    PC_UNROLL
    for (int n = 0; n < 8; n++) {
        bv[n][0] = __ldg(p.bias + 8 * n + 2 * tq);
        bv[n][1] = __ldg(p.bias + 8 * n + 2 * tq + 1);
    }
    PC_UNROLL
    for (int i = 0; i < 4; i++)
        PC_UNROLL
        for (int h = 0; h < 2; h++) {
            const int q = (4 * warp + i) * PC_NET_TW + g + 8 * h;
            PC_UNROLL
            for (int n = 0; n < 8; n++)
                *(unsigned *)(st + q * 128 + ((n ^ (q & 7)) << 4) + 4 * tq) =
                    pc_h2(pc_net_relu(acc[i][n][2 * h] + bv[n][0]), pc_net_relu(acc[i][n][2 * h + 1] + bv[n][1]));
        }
    __syncthreads();
    const int xe = p.g.Wn - 1 - p.l, ye = p.g.Hn - 1 - p.l;
    for (int i = (int)threadIdx.x; i < TR * PC_NET_TW * 8; i += NT) {
        const int q = i >> 3, k = i & 7, cx = ox + (q & (PC_NET_TW - 1)), cy = oy + q / PC_NET_TW;
        if (cx <= xe && cy <= ye)
            *(uint4 *)(p.out + pc_net_cell(p.g, cam, cx, cy) * 64 + k * 8) =
                *(const uint4 *)(st + q * 128 + ((k ^ (q & 7)) << 4));
    }
}

/* The last layer's masks: P = ReLU(masks) * filters (the filters' tile by
 * cp.async into st, in the staging layout), then U = R P + bias on the
 * tensor cores: P's accumulator fragments of n8 tiles 2 kc and 2 kc + 1 are
 * exactly the A fragment of k16 chunk kc (rows g and g + 8, columns 2t,
 * 2t + 1 and + 8), so P never leaves the registers. */
template <int WR>
PC_DEV void pc_net_epi_u(const pc_net_lp &p, float (&acc)[4][8][4], unsigned char *st, int cam, int ox, int oy)
{
    constexpr int TR = 4 * WR, NT = 32 * WR;
    for (int i = (int)threadIdx.x; i < TR * PC_NET_TW * 8; i += NT) {
        const int q = i >> 3, k = i & 7;
        const int cx = pc_net_clampi(ox + (q & (PC_NET_TW - 1)), 0, p.g.Wp - 1);
        const int cy = pc_net_clampi(oy + q / PC_NET_TW, 0, p.g.Hp - 1);
        pc_cp_async16(st + q * 128 + ((k ^ (q & 7)) << 4), p.f + pc_net_cell(p.g, cam, cx, cy) * 64 + k * 8);
    }
    pc_cp_async_commit();
    pc_cp_async_wait<0>();
    __syncthreads();
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5, g = lane >> 2, tq = lane & 3;
    float bv[8][2], ub[2][2];
    PC_UNROLL
    for (int n = 0; n < 8; n++) {
        bv[n][0] = __ldg(p.bias + 8 * n + 2 * tq);
        bv[n][1] = __ldg(p.bias + 8 * n + 2 * tq + 1);
    }
    unsigned rf[4][2][2];
    PC_UNROLL
    for (int kc = 0; kc < 4; kc++)
        PC_UNROLL
        for (int nt = 0; nt < 2; nt++) {
            const uint2 v = __ldg(p.rfrag + (kc * 2 + nt) * 32 + lane);
            rf[kc][nt][0] = v.x;
            rf[kc][nt][1] = v.y;
        }
    PC_UNROLL
    for (int nt = 0; nt < 2; nt++) {
        ub[nt][0] = __ldg(p.rbias + 8 * nt + 2 * tq);
        ub[nt][1] = __ldg(p.rbias + 8 * nt + 2 * tq + 1);
    }
    const int xe = p.g.Wn - 1 - p.l, ye = p.g.Hn - 1 - p.l;
    PC_UNROLL
    for (int i = 0; i < 4; i++) {
        unsigned pa[4][4];
        PC_UNROLL
        for (int n = 0; n < 8; n++)
            PC_UNROLL
            for (int h = 0; h < 2; h++) {
                const int q = (4 * warp + i) * PC_NET_TW + g + 8 * h;
                const unsigned fv = *(const unsigned *)(st + q * 128 + ((n ^ (q & 7)) << 4) + 4 * tq);
                pa[n >> 1][(n & 1) * 2 + h] = pc_h2(pc_net_relu(acc[i][n][2 * h] + bv[n][0]) * pc_h2_lo(fv),
                                                    pc_net_relu(acc[i][n][2 * h + 1] + bv[n][1]) * pc_h2_hi(fv));
            }
        float u[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
        PC_UNROLL
        for (int kc = 0; kc < 4; kc++)
            PC_UNROLL
            for (int nt = 0; nt < 2; nt++)
                pc_mma_16816(u[nt], pa[kc], rf[kc][nt]);
        __syncwarp();
        const int cy = oy + 4 * warp + i;
        PC_UNROLL
        for (int h = 0; h < 2; h++) {
            const int cx = ox + g + 8 * h;
            if (cx <= xe && cy <= ye)
                PC_UNROLL
                for (int nt = 0; nt < 2; nt++)
                    *(unsigned *)(p.u + pc_net_cell(p.g, cam, cx, cy) * PC_NET_UCH + 8 * nt + 2 * tq) =
                        pc_h2(u[nt][2 * h] + ub[nt][0], u[nt][2 * h + 1] + ub[nt][1]);
        }
    }
}

/* One 3x3 64 -> 64 layer (MODE 0) or the last layer's masks with the U
 * epilogue (MODE 1); WR warps, NBUF input buffers (pc_net_conv_smem). */
template <int WR, int NBUF, int MODE>
PC_DEV void pc_net_conv_body(const pc_net_lp &p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();
#else
    constexpr int TR = 4 * WR, NT = 32 * WR, TB = (TR + 2) * PC_NET_IC * 128;
    PC_SMEM_DECL(sm);
    unsigned char *const wsm = sm, *const ib0 = sm + PC_NET_WBYTES;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int t = (int)blockIdx.x;
    if (t >= p.ntiles)
        return;
    /* the weights: row tap * 64 + cout of 128 bytes, chunk k at k ^ (cout & 7) */
    for (int i = tid; i < 9 * 64 * 8; i += NT) {
        const int row = i >> 3, k = i & 7;
        pc_cp_async16(wsm + row * 128 + ((k ^ (row & 7)) << 4), p.w + row * 64 + k * 8);
    }
    pc_net_load_tile<WR>(p, t, ib0);
    pc_cp_async_commit();
    /* ldmatrix rows: A, lane l gives cell (l & 15) of its m16 row, k half
     * l >> 4 (a0..a3 = cells 0-7 / 8-15 x channels 0-7 / 8-15 of the k16
     * chunk); B (x4 = two n8 tiles), output channel 16 j + (l & 7) + 8 (l
     * >> 4), k half (l >> 3) & 1 (b[2j] = matrices 0, 1; b[2j+1] = 2, 3) */
    const int pa0 = 4 * warp * PC_NET_IC + (lane & 15), kh = lane >> 4;
    const int bco = (lane & 7) + ((lane >> 4) << 3), kb = (lane >> 3) & 1;
    int cur = 0;
    for (; t < p.ntiles; t += (int)gridDim.x) {
        pc_cp_async_wait<0>();
        __syncthreads(); /* tile t landed; everyone is done with the other buffer */
        const int next = t + (int)gridDim.x;
        unsigned char *const ib = ib0 + (NBUF == 2 ? cur * TB : 0);
        if (NBUF == 2 && next < p.ntiles) {
            pc_net_load_tile<WR>(p, next, ib0 + (cur ^ 1) * TB);
            pc_cp_async_commit();
        }
        float acc[4][8][4];
        PC_UNROLL
        for (int i = 0; i < 4; i++)
            PC_UNROLL
            for (int n = 0; n < 8; n++)
                PC_UNROLL
                for (int e = 0; e < 4; e++)
                    acc[i][n][e] = 0.0f;
        PC_NET_DX_UNROLL
        for (int dx = 0; dx < 3; dx++)
            PC_NET_KC_UNROLL
            for (int kc = 0; kc < 4; kc++) {
                unsigned a[6][4]; /* input rows 4 warp + 0 .. 5 of the tile, columns dx .. dx + 15 */
                PC_UNROLL
                for (int i = 0; i < 6; i++) {
                    const int q = pa0 + i * PC_NET_IC + dx;
                    pc_ldsm_x4(a[i], ib + q * 128 + (((2 * kc + kh) ^ (q & 7)) << 4));
                }
                PC_UNROLL
                for (int dy = 0; dy < 3; dy++) {
                    unsigned b[8][2];
                    PC_UNROLL
                    for (int j = 0; j < 4; j++) {
                        const int row = (dy * 3 + dx) * 64 + 16 * j + bco;
                        unsigned r[4];
                        pc_ldsm_x4(r, wsm + row * 128 + (((2 * kc + kb) ^ (row & 7)) << 4));
                        b[2 * j][0] = r[0];
                        b[2 * j][1] = r[1];
                        b[2 * j + 1][0] = r[2];
                        b[2 * j + 1][1] = r[3];
                    }
                    PC_UNROLL
                    for (int i = 0; i < 4; i++)
                        PC_UNROLL
                        for (int n = 0; n < 8; n++)
                            pc_mma_16816(acc[i][n], a[i + dy], b[n]);
                }
            }
        __syncthreads(); /* every warp is done reading ib: it becomes the staging area */
        int cam, ox, oy;
        pc_net_tile_pos<WR>(p, t, cam, ox, oy);
        if (MODE == 0)
            pc_net_epi_store<WR>(p, acc, ib, cam, ox, oy);
        else
            pc_net_epi_u<WR>(p, acc, ib, cam, ox, oy);
        if (NBUF == 1) {
            __syncthreads(); /* the staging is read: the next tile may land there */
            if (next < p.ntiles) {
                pc_net_load_tile<WR>(p, next, ib0);
                pc_cp_async_commit();
            }
        }
        cur ^= 1;
    }
#endif
}

/* --- L1 -------------------------------------------------------------------- */

struct pc_net_l1p {
    const uint8_t *src; /* the 8-bit frame: camera k's rows from k * cam_h */
    size_t pitch;
    uint16_t *out;      /* layer 1's plane */
    const uint2 *frag;  /* B fragments [3][8][32] (net_gpu.h) */
    const float *bias;  /* [64] */
    int segs, units;    /* 16-cell segments per row; ncam x rows x segs */
    pc_net_geo g;
};

/* Camera cam's sample under network input pixel (ix, iy), reflect-101
 * (repeated for cameras smaller than the pad). */
PC_DEV unsigned pc_net_sample(const uint8_t *src, size_t pitch, const pc_net_geo &g, int cam, int ix, int iy)
{
    const int x = pc_fold(ix - g.padx, g.W), y = pc_fold(iy - g.pady, g.cam_h);
    return src[((size_t)cam * g.cam_h + y) * pitch + x];
}

/* Layer 1 of a 16-cell segment per warp: K slot tap * 4 + r (net_gpu.h),
 * so lane t's k pairs 2t, 2t+1 (+ 8) are the two samples of row t & 1 of
 * cell tap 4 kc + (t >> 1) (+ 2): A comes straight from the samples. */
PC_DEV void pc_net_l1_body(const pc_net_l1p &p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();
#else
    PC_SMEM_DECL(sm);
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5, g = lane >> 2, tq = lane & 3;
    unsigned char *const st = sm + warp * 16 * 128;
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
    const int rows = p.g.Hn - 2, xe = p.g.Wn - 2, wpb = (int)blockDim.x >> 5;
    for (int u = (int)blockIdx.x * wpb + warp; u < p.units; u += (int)gridDim.x * wpb) {
        const int seg = u % p.segs, ri = u / p.segs, cam = ri / rows, cy = 1 + ri % rows, cx0 = 1 + PC_NET_TW * seg;
        unsigned a[3][4];
        PC_UNROLL
        for (int kc = 0; kc < 3; kc++)
            PC_UNROLL
            for (int s = 0; s < 2; s++) {
                const int tap = 4 * kc + (tq >> 1) + 2 * s, ty = tap / 3, tx = tap - 3 * ty;
                PC_UNROLL
                for (int h = 0; h < 2; h++) {
                    const int cx = cx0 + g + 8 * h, ix = 2 * (cx + tx - 1), iy = 2 * (cy + ty - 1) + (tq & 1);
                    unsigned v = 0;
                    if (tap < 9) {
                        const unsigned s0 = pc_net_sample(p.src, p.pitch, p.g, cam, ix, iy);
                        const unsigned s1 = pc_net_sample(p.src, p.pitch, p.g, cam, ix + 1, iy);
                        v = pc_h2((float)s0, (float)s1);
                    }
                    a[kc][2 * s + h] = v;
                }
            }
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
        PC_UNROLL
        for (int h = 0; h < 2; h++) {
            const int q = g + 8 * h;
            PC_UNROLL
            for (int n = 0; n < 8; n++)
                *(unsigned *)(st + q * 128 + ((n ^ (q & 7)) << 4) + 4 * tq) =
                    pc_h2(pc_net_relu(acc[n][2 * h] + bv[n][0]), pc_net_relu(acc[n][2 * h + 1] + bv[n][1]));
        }
        __syncwarp();
        PC_UNROLL
        for (int j = 0; j < 4; j++) {
            const int i = lane + 32 * j, q = i >> 3, k = i & 7;
            if (cx0 + q <= xe)
                *(uint4 *)(p.out + pc_net_cell(p.g, cam, cx0 + q, cy) * 64 + k * 8) =
                    *(const uint4 *)(st + q * 128 + ((k ^ (q & 7)) << 4));
        }
        __syncwarp();
    }
#endif
}

/* --- TAIL ------------------------------------------------------------------ */

struct pc_net_tp {
    const uint8_t *src; /* the 8-bit frame */
    size_t pitch;
    const uint16_t *u;      /* the U plane */
    const uint2 *pfrag;     /* post: B fragments [4 parities][3][8][32] */
    const float *pbias;     /* [64] */
    const float *ow, *ob;   /* out: [3][64], [4] */
    int tx, ty, ntiles;     /* 32 x 16 tiles across and down a camera, in all */
    pc_net_geo g;
    pc_mlri_kp o;           /* the destination (pc_mlri_set_dst; o.W = the frame's width) */
};

#define PC_NET_X_PFRAG (4 * 3 * 8 * 32 * 8)
#define PC_NET_X_OFF_RAW PC_NET_X_PFRAG
#define PC_NET_X_OFF_U (PC_NET_X_OFF_RAW + ((PC_NET_XRW * PC_NET_XRH * 2 + 15) & ~15))
#define PC_NET_X_OFF_RGB (PC_NET_X_OFF_U + PC_NET_XUW * PC_NET_XUH * 32)
#define PC_NET_X_OFF_W (PC_NET_X_OFF_RGB + ((PC_NET_XW * PC_NET_XH * 3 + 15) & ~15))
#define PC_NET_X_SMEM (PC_NET_X_OFF_W + (3 * 64 + 4 + 64) * 4)

/* Full resolution, 32 x 16 image-aligned pixels per tile (16 x 8 blocks of
 * the destination's 2x2), warp w rows 2w and 2w + 1. An m16 fragment is 16
 * pixels of one parity (x = 2 i + b of row 2w + a), so one post matrix
 * (per parity: the mosaic's colour at each tap) serves it; K (net_gpu.h):
 * lane t holds taps t, t + 4 (t + 8) with the sample and U's R in its k
 * pair 2t, 2t + 1 and U's G, B in 2t + 8, 2t + 9. post's 64 outputs come
 * out in fp32; out (64 -> 3) is a dot product per lane over its 16
 * channels, then two shuffles sum the 4 lanes of a row. */
PC_DEV void pc_net_tail_body(const pc_net_tp &p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();
#else
    PC_SMEM_DECL(sm);
    const uint2 *const pf = (const uint2 *)sm;
    uint16_t *const raw = (uint16_t *)(sm + PC_NET_X_OFF_RAW);
    uint16_t *const us = (uint16_t *)(sm + PC_NET_X_OFF_U);
    uint8_t *const rgb = sm + PC_NET_X_OFF_RGB;
    float *const ow = (float *)(sm + PC_NET_X_OFF_W), *const ob = ow + 3 * 64, *const pb = ob + 4;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, tq = lane & 3;
    for (int i = tid; i < PC_NET_X_PFRAG / 16; i += PC_NET_XNT)
        ((uint4 *)sm)[i] = __ldg((const uint4 *)p.pfrag + i);
    for (int i = tid; i < 3 * 64; i += PC_NET_XNT)
        ow[i] = __ldg(p.ow + i);
    if (tid < 64)
        pb[tid] = __ldg(p.pbias + tid);
    if (tid < 3)
        ob[tid] = __ldg(p.ob + tid);
    const pc_net_geo &G = p.g;
    for (int t = (int)blockIdx.x; t < p.ntiles; t += (int)gridDim.x) {
        const int per = p.tx * p.ty, cam = t / per, r = t - cam * per, tyi = r / p.tx;
        const int x0 = PC_NET_XW * (r - tyi * p.tx), y0 = PC_NET_XH * tyi;
        const int cx0 = (x0 - 1 + G.padx) >> 1, cy0 = (y0 - 1 + G.pady) >> 1;
        __syncthreads(); /* the previous tile's stores have read rgb; the constants are in */
        for (int i = tid; i < PC_NET_XRW * PC_NET_XRH; i += PC_NET_XNT) {
            const int rr = i / PC_NET_XRW, c = i - rr * PC_NET_XRW;
            const int x = pc_fold(x0 - 1 + c, G.W), y = pc_fold(y0 - 1 + rr, G.cam_h);
            raw[i] = __half_as_ushort(__float2half_rn((float)p.src[((size_t)cam * G.cam_h + y) * p.pitch + x]));
        }
        for (int i = tid; i < PC_NET_XUW * PC_NET_XUH * 2; i += PC_NET_XNT) {
            const int cell = i >> 1, hh = i & 1, rr = cell / PC_NET_XUW, c = cell - rr * PC_NET_XUW;
            const int cx = pc_net_clampi(cx0 + c, 0, G.Wp - 1), cy = pc_net_clampi(cy0 + rr, 0, G.Hp - 1);
            ((uint4 *)us)[i] = __ldg((const uint4 *)(p.u + pc_net_cell(G, cam, cx, cy) * PC_NET_UCH) + hh);
        }
        __syncthreads();
        PC_UNROLL
        for (int a = 0; a < 2; a++) {
            const int yl = 2 * warp + a;
            PC_UNROLL
            for (int b = 0; b < 2; b++) {
                const int par = (((a + G.pady) & 1) << 1) | ((b + G.padx) & 1);
                unsigned af[3][4];
                PC_UNROLL
                for (int kc = 0; kc < 3; kc++) {
                    const int tap = 4 * kc + tq, dy = tap / 3 - 1, dx = tap % 3 - 1;
                    PC_UNROLL
                    for (int h = 0; h < 2; h++) {
                        unsigned lo = 0, hi = 0;
                        if (tap < 9) {
                            const int xl = 2 * (g + 8 * h) + b;
                            const int qx = x0 + xl + dx + G.padx, qy = y0 + yl + dy + G.pady;
                            const uint16_t *uc =
                                us + (((qy >> 1) - cy0) * PC_NET_XUW + (qx >> 1) - cx0) * PC_NET_UCH +
                                (((qy & 1) << 1) | (qx & 1));
                            lo = raw[(yl + 1 + dy) * PC_NET_XRW + xl + 1 + dx] | (unsigned)uc[0] << 16;
                            hi = uc[4] | (unsigned)uc[8] << 16;
                        }
                        af[kc][h] = lo;
                        af[kc][2 + h] = hi;
                    }
                }
                float acc[8][4];
                PC_UNROLL
                for (int n = 0; n < 8; n++)
                    acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
                PC_UNROLL
                for (int kc = 0; kc < 3; kc++)
                    PC_UNROLL
                    for (int n = 0; n < 8; n++) {
                        const uint2 v = pf[((par * 3 + kc) * 8 + n) * 32 + lane];
                        const unsigned bb[2] = {v.x, v.y};
                        pc_mma_16816(acc[n], af[kc], bb);
                    }
                __syncwarp();
                float s[2][3] = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}};
                PC_UNROLL
                for (int n = 0; n < 8; n++)
                    PC_UNROLL
                    for (int e = 0; e < 2; e++) {
                        const int ch = 8 * n + 2 * tq + e;
                        const float h0 = pc_net_relu(acc[n][e] + pb[ch]), h1 = pc_net_relu(acc[n][2 + e] + pb[ch]);
                        PC_UNROLL
                        for (int c = 0; c < 3; c++) {
                            s[0][c] += h0 * ow[c * 64 + ch];
                            s[1][c] += h1 * ow[c * 64 + ch];
                        }
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
    int wr, nbuf;               /* CONV's tile: WR warps, NBUF input buffers */
    int ctas_conv, ctas_l1, ctas_tail;
    pc_mlri_kp o;               /* the destination */
};

enum { PC_NET_K_L1 = 0, PC_NET_K_CONV, PC_NET_K_CONVU, PC_NET_K_TAIL };

/* L is a launcher: L.l1(grid, p), L.conv(mode, wr, nbuf, grid, p),
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
    l1.segs = (g.Wn - 2 + PC_NET_TW - 1) / PC_NET_TW;
    l1.units = g.ncam * (g.Hn - 2) * l1.segs;
    l1.g = g;
    const int l1_warps = PC_NET_L1_NT / 32, l1_ctas = (l1.units + l1_warps - 1) / l1_warps;
    if ((rc = launch.l1(l1_ctas < f.ctas_l1 ? l1_ctas : f.ctas_l1, l1)))
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
        if ((rc = launch.conv(mode, f.wr, f.nbuf, p.ntiles < f.ctas_conv ? p.ntiles : f.ctas_conv, p)))
            return rc;
    }
    pc_net_tp tp;
    tp.src = f.src;
    tp.pitch = f.pitch;
    tp.u = f.uplane;
    tp.pfrag = (const uint2 *)(f.blob + lay.post_frag);
    tp.pbias = (const float *)(f.blob + lay.post_bias);
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
