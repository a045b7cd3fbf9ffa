/* cuda_net_conv.cuh - CONV, the learned demosaic's 3x3 64 -> 64 layers
 * (~98 % of its work: 1.03 MFLOP of the 1.11 per half-resolution cell) as
 * an implicit GEMM on the tensor cores, in two forms that share everything
 * but the inner loop: mma.sync m16n8k16 (compute capability 8.0 and later)
 * and Hopper's warpgroup MMA (wgmma m64n64k16, sm_90a only). Included by
 * cuda_net.cuh (geometry, planes, the launch sequence); compiled by nvcc
 * (cuda_net.cu: mma.sync for every gpu_arch; cuda_net_wg.cu: wgmma for
 * sm_90a) and as host C++ for the emulation (cuda_emu_net.cc: both).
 *
 * GEMM per tap (dy, dx): M = cells, N = 64 output channels, K = 64 input
 * channels; the 9 taps summed into the same accumulators (K = 576).
 *  - Persistent CTAs (one or two per SM), each loading the layer's weights
 *    (9 x 64 x 64 fp16 = 72 KB) into shared memory once and then walking
 *    tiles of 16 x 4 WR cells (WR warps, 4 output rows each): 132 x 72 KB
 *    of weights read per layer instead of 72 KB per tile.
 *  - The input tile with its 1-cell halo ((4 WR + 2) x 18 cells) comes in
 *    by cp.async; with NBUF 2 the next tile loads while this one computes;
 *    with NBUF 1 it is issued as soon as the warps have read this one
 *    (before the epilogue's stores), and the SM's second CTA computes
 *    meanwhile. A cell moves 256 bytes per layer (0.7-0.75 GB per
 *    five-camera frame and layer: ~0.18 ms at 4 TB/s).
 *  - A warp's tile is 4 rows x 16 cells x 64 output channels (128 fp32
 *    accumulators a thread). An m16 fragment is one row of 16 cells, so
 *    the 3 vertical taps of a 4-row tile read 6 input rows: per (dx, k16)
 *    6 ldmatrix.x4 of A feed 3 taps x 4 rows.
 *  - No bank conflicts: a cell's 8 chunks of 16 bytes are stored at chunk
 *    k ^ (cell & 7) (cell = its index in the tile), a weight row's at k ^
 *    (cout & 7) (wgmma_desc.h: pc_net_wsm_offset); the 8 rows of every
 *    ldmatrix phase are 8 consecutive cells or output channels, i.e. 8
 *    distinct 16-byte bank groups (the emulation counts the wavefronts:
 *    tests/test_cuda_emu_net.c).
 *  - Epilogue (plain layers): bias, ReLU, fp16 straight from the
 *    accumulators: the 4 lanes of a quad hold the 4 words of every 16-byte
 *    chunk of a cell, two shuffle exchanges give each lane two whole
 *    chunks, stored as 16 bytes (a warp's store: 8 cells x 64 contiguous
 *    bytes). No shared memory and no barrier, so the next tile's input may
 *    already be landing in the buffer.
 *  - Shared memory: 72 KB + NBUF x (4 WR + 2) x 18 x 128 B: WR 8 / NBUF 2
 *    is 225 KB (Hopper: 227 KB per block), WR 4 / NBUF 2 153 KB (A100: 163
 *    KB), WR 2 / NBUF 1 94.5 KB (sm_86/89: 99 KB), WR 4 / NBUF 1 112.5 KB
 *    (two CTAs per SM on Hopper).
 *  - Registers (ptxas, sm_90): mma.sync 211-225 a thread, no spills, with
 *    the dx loop rolled and the k16 loop unrolled (unrolling both spilled).
 * The tiles of a layer that reach past its valid cells compute garbage
 * (they read whatever the plane holds there) that no valid cell reads: a
 * row of A is one cell, its 3x3 window inside the previous layer's valid
 * cells when the cell is valid; stores are masked to the valid cells.
 *
 * mma.sync (WG 0): per (dx, k16) also 3 x 4 ldmatrix.x4 of B (each warp
 * its own copy of the weights' fragments) for 96 mma; ~405 TFLOP/s a layer
 * on an H200 (docs/net.md), about what mma.sync gives on Hopper.
 *
 * wgmma (WG 1, sm_90a): why this shape.
 *  - The same tiles, loads, planes and epilogues; each group of 4 warps
 *    (a warpgroup: WR 4 or 8) issues wgmma.m64n64k16 with A from REGISTERS
 *    (the RS form): warp w's 16 rows of the instruction are its own 16
 *    cells, and its A fragment is exactly mma.m16n8k16's, so the ldmatrix
 *    of the shifted taps from the swizzled tile stays as it is. Per (dx,
 *    k16) 12 wgmma: rows i = 0..3 of each warp (wgmma i covers output rows
 *    i, 4 + i, 8 + i, 12 + i of the warpgroup) x taps dy = 0..2, A = input
 *    row i + dy; the accumulators land per warp in mma.sync's C layout (16
 *    cells x 64 channels, d[n8][4]), so acc[4][8][4] and the epilogues are
 *    shared.
 *  - B (the tap's weights, [cout][cin]: K-major) is read by the tensor
 *    cores from shared memory through a descriptor: the weights' layout
 *    (rows of 128 bytes, 16-byte chunks XOR row & 7, from a 1024-byte
 *    boundary) is the canonical 128-byte swizzle, tap p / k16 step kc at
 *    weights + 8192 p + 32 kc, 1024 bytes between 8-row groups
 *    (wgmma_desc.h, checked on the CPU against the emulation's decoding of
 *    the ISA's layout). One read of B per warpgroup instead of per warp,
 *    and no B registers.
 *  - Asynchrony: wgmma reads A's registers until its group completes, so
 *    A is double-buffered: step s loads a[s & 1], fences (wgmma.fence:
 *    after the ldmatrix writes and the accumulators' zeroing), issues its
 *    12 wgmma, commits them as one group and waits until at most that
 *    group is pending (wait_group 1): step s - 1's group, which read a[(s
 *    + 1) & 1], is done before step s + 1 overwrites it, and the tensor
 *    cores always have the current group queued while the warps load the
 *    next A. wait_group 0 before the epilogue reads the accumulators.
 *  - The weights arrive by cp.async (an ordinary, generic-proxy write):
 *    fence.proxy.async.shared::cta in every thread after its copies landed,
 *    before the barrier after which wgmma reads them.
 *  - Registers: 128 accumulators + 2 x 24 of A + addresses (ptxas -v on
 *    sm_90a: tools/gpu-net prints it).
 *  Prediction (5 x 2040x1080, 219 GFLOP a layer): the tensor cores' dense
 *  fp16 peak on an H200 is ~1070 TFLOP/s at 1.98 GHz (4096 FLOP/clock/SM),
 *  0.205 ms a layer; 70-80 % of it in the main loop plus the epilogue,
 *  ~0.26-0.30 ms a layer (against 0.54 with mma.sync), bounded by the
 *  tensor cores with the plane traffic (~0.18 ms at 4 TB/s) under it.
 */
#ifndef PANOCAP_CUDA_NET_CONV_CUH
#define PANOCAP_CUDA_NET_CONV_CUH

#ifdef __CUDACC__
/* The CONV kernels' shared memory: the weights from a 1024-byte boundary
 * (the 128-byte swizzle pattern of the wgmma descriptors). The PTX says
 * .align 1024 and the toolchain honours it: nvcc folds a run-time test of
 * the address's low 10 bits to false (a fallback for a misaligned block
 * was compiled out entirely), so none is kept. */
#define PC_NET_SMEM_CONV(name) extern __shared__ __align__(1024) unsigned char name[]
#else
#define PC_NET_SMEM_CONV(name) PC_SMEM_DECL(name)
#endif

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
/* The CONV kernels instantiated: mma.sync (wg 0) with (WR, NBUF) (8, 2),
 * (4, 2), (2, 1), (4, 1); wgmma (wg 1: whole warpgroups) (8, 2), (4, 1). */
PC_HD int pc_net_tile_ok(int wg, int wr, int nbuf)
{
    if (wg)
        return (wr == 8 && nbuf == 2) || (wr == 4 && nbuf == 1);
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

/* Bias, ReLU, fp16 from the accumulators straight to the plane, row by
 * row of the warp (pc_net_store_frag), masked to the valid cells. */
template <int WR>
PC_DEV void pc_net_epi_direct(const pc_net_lp &p, float (&acc)[4][8][4], int cam, int ox, int oy)
{
    const int warp = (int)threadIdx.x >> 5, tq = (int)threadIdx.x & 3;
    float bv[8][2];
    PC_UNROLL
    for (int n = 0; n < 8; n++) {
        bv[n][0] = __ldg(p.bias + 8 * n + 2 * tq);
        bv[n][1] = __ldg(p.bias + 8 * n + 2 * tq + 1);
    }
    const int xe = p.g.Wn - 1 - p.l, ye = p.g.Hn - 1 - p.l;
    PC_UNROLL
    for (int i = 0; i < 4; i++)
        pc_net_store_frag(p.out, p.g, cam, ox, oy + 4 * warp + i, xe, ye, acc[i], bv);
}

/* The last layer's masks: P = ReLU(masks) * filters (the filters' tile by
 * cp.async into st, in the input tile's swizzle), then U = R P + bias on
 * the tensor cores: P's accumulator fragments of n8 tiles 2 kc and 2 kc + 1
 * are exactly the A fragment of k16 chunk kc (rows g and g + 8, columns
 * 2t, 2t + 1 and + 8), so P never leaves the registers. */
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

/* The main loop of one tile, mma.sync: acc += the tile's 3x3 convolution
 * (ib: the input tile, wsm: the weights). */
template <int WR>
PC_DEV void pc_net_conv_mma(float (&acc)[4][8][4], const unsigned char *ib, const unsigned char *wsm)
{
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    /* ldmatrix rows: A, lane l gives cell (l & 15) of its m16 row, k half
     * l >> 4 (a0..a3 = cells 0-7 / 8-15 x channels 0-7 / 8-15 of the k16
     * chunk); B (x4 = two n8 tiles), output channel 16 j + (l & 7) + 8 (l
     * >> 4), k half (l >> 3) & 1 (b[2j] = matrices 0, 1; b[2j+1] = 2, 3) */
    const int pa0 = 4 * warp * PC_NET_IC + (lane & 15), kh = lane >> 4;
    const int bco = (lane & 7) + ((lane >> 4) << 3), kb = (lane >> 3) & 1;
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
    __syncwarp(); /* the accumulators are read next (cuda_mma.cuh's rule for the emulation) */
}

/* The main loop of one tile, wgmma (the file's head says why so): the
 * same A fragments, double-buffered; B through the weights' descriptors
 * (wsm: their shared address). acc is zero and fenced on entry; on return
 * every wgmma is complete and acc may be read. */
template <int WR>
PC_DEV void pc_net_conv_wgmma(float (&acc)[4][8][4], const unsigned char *ib, uint32_t wsm)
{
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const int pa0 = 4 * warp * PC_NET_IC + (lane & 15), kh = lane >> 4;
    unsigned a[2][6][4];
    PC_NET_DX_UNROLL
    for (int dx = 0; dx < 3; dx++)
        PC_UNROLL
        for (int kc = 0; kc < 4; kc++) {
            unsigned(&ak)[6][4] = a[kc & 1]; /* the group that read it last, 2 steps ago, is done */
            PC_UNROLL
            for (int i = 0; i < 6; i++) {
                const int q = pa0 + i * PC_NET_IC + dx;
                pc_ldsm_x4(ak[i], ib + q * 128 + (((2 * kc + kh) ^ (q & 7)) << 4));
            }
            pc_wgmma_fence();
            PC_UNROLL
            for (int dy = 0; dy < 3; dy++) {
                const uint64_t d = pc_net_wdesc(wsm, 3 * dy + dx, kc);
                PC_UNROLL
                for (int i = 0; i < 4; i++)
                    pc_wgmma_64x64x16_rs(acc[i], ak[i + dy], d);
            }
            pc_wgmma_commit();
            pc_wgmma_wait<1>();
        }
    pc_wgmma_wait<0>();
    pc_wgmma_fence_acc(acc);
}

/* One 3x3 64 -> 64 layer (MODE 0) or the last layer's masks with the U
 * epilogue (MODE 1); WR warps, NBUF input buffers (pc_net_conv_smem);
 * WG: wgmma (sm_90a) instead of mma.sync. */
template <int WR, int NBUF, int MODE, int WG>
PC_DEV void pc_net_conv_body(const pc_net_lp &p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();
#else
    constexpr int TR = 4 * WR, NT = 32 * WR, TB = (TR + 2) * PC_NET_IC * 128;
    static_assert(!WG || WR % 4 == 0, "wgmma: whole warpgroups");
    PC_NET_SMEM_CONV(smc);
    unsigned char *const wsm = smc, *const ib0 = smc + PC_NET_WBYTES;
    const int tid = (int)threadIdx.x;
    int t = (int)blockIdx.x;
    if (t >= p.ntiles)
        return;
    /* the weights: row tap * 64 + cout of 128 bytes, chunk k at k ^ (cout & 7) */
    for (int i = tid; i < 9 * 64 * 8; i += NT) {
        const int row = i >> 3, k = i & 7;
        pc_cp_async16(wsm + pc_net_wsm_offset(row, 8 * k), p.w + row * 64 + k * 8);
    }
    pc_net_load_tile<WR>(p, t, ib0);
    pc_cp_async_commit();
    int cur = 0;
    bool first = true;
    for (; t < p.ntiles; t += (int)gridDim.x) {
        pc_cp_async_wait<0>();
        if constexpr (WG != 0) {
            if (first)
                pc_fence_proxy_async(); /* this thread's weights, for the tensor cores' reads */
        }
        first = false;
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
        if constexpr (WG != 0) {
            pc_wgmma_fence_acc(acc);
            pc_net_conv_wgmma<WR>(acc, ib, pc_smem_addr(wsm));
        } else {
            pc_net_conv_mma<WR>(acc, ib, wsm);
        }
        int cam, ox, oy;
        pc_net_tile_pos<WR>(p, t, cam, ox, oy);
        if (MODE == 0) {
            if (NBUF == 1) {
                __syncthreads(); /* every warp has read ib: the next tile may land there */
                if (next < p.ntiles) {
                    pc_net_load_tile<WR>(p, next, ib0);
                    pc_cp_async_commit();
                }
            }
            pc_net_epi_direct<WR>(p, acc, cam, ox, oy);
        } else {
            __syncthreads(); /* every warp is done reading ib: it becomes the staging area */
            pc_net_epi_u<WR>(p, acc, ib, cam, ox, oy);
            if (NBUF == 1) {
                __syncthreads(); /* the staging is read: the next tile may land there */
                if (next < p.ntiles) {
                    pc_net_load_tile<WR>(p, next, ib0);
                    pc_cp_async_commit();
                }
            }
        }
        cur ^= 1;
    }
#endif
}

#endif
