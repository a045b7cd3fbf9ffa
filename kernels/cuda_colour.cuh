/* cuda_colour.cuh - the GPU colour stage (docs/colour.md §1-2): one small
 * pass per frame (all its cameras' slabs in one launch) that unpacks the
 * raw samples (any format of colour.h, pc_unpack_sample) and maps each
 * through its camera's table of its CFA colour into the 8-bit panorama
 * the demosaic kernels read.
 * Compiles under nvcc and, after cuda_emu.h, on the host for the
 * emulation test. */
#ifndef PANOCAP_CUDA_COLOUR_CUH
#define PANOCAP_CUDA_COLOUR_CUH

#include "cuda_common.cuh"
#include "cuda_kernel.cuh" /* pc_cp16: asynchronous copies into shared memory */
#include "unpack_formulas.h"

/* Table layout on the device: 3 colours x PC_CLUT_STRIDE codes. */
#define PC_CLUT_STRIDE 4096
/* Threads per block, threads per row (a block takes PC_CNT / PC_CTPR rows
 * at a time) and pixels per thread and step (one 16-byte store). Blocks
 * of 1024 threads (fewer table copies) with margins written without
 * barriers ran the one-launch pass at 50 us for 8-bit on an H100, this
 * geometry (as before) at 11.55 us. */
#define PC_CNT 256
#define PC_CTPR 128
#define PC_CRPI (PC_CNT / PC_CTPR)
#define PC_CPX 16

/* One launch maps the slabs of ncam cameras of the same format and
 * height (the stacked panorama: one launch per frame, not per slab):
 * camera k = cams[i]'s raw stream at src + k * src_cam, its tables at
 * lut + k * 3 * PC_CLUT_STRIDE, its row 0 at dst + k * rows * dst_pitch;
 * blocks [i * cpc, (i + 1) * cpc) take camera cams[i]. */
struct pc_cparams {
    const uint8_t *src; /* camera 0's raw stream (sample n = y*W + x) */
    long long src_cam;  /* bytes from one camera's stream to the next's */
    const uint8_t *lut; /* camera 0's tables, 3 x PC_CLUT_STRIDE each */
    uint8_t *dst;       /* row 0 of camera 0 in the 8-bit panorama */
    long long dst_pitch;
    int W, rows;        /* rows per camera */
    int packing, bits, cfa;
    int ml, mr; /* left/right margin bytes to fill with the reflect-101
                 * mirror (what pc_margin_kernel does), 0 for none */
    int ncam, cpc;
    /* camera i at bits [4i, 4i + 4) (an array indexed by block would make
     * nvcc copy the whole parameter block to local memory) */
    unsigned long long cams;
};

/* Dynamic shared memory of the colour pass: the three tables of the
 * format's codes. */
PC_HD size_t pc_colour_smem(int bits, int W)
{
    return 3 * ((size_t)1 << bits) + PC_CRPI * (((size_t)W + 15) & ~(size_t)15);
}

/* Why it is fast (a streaming pass at memory speed): each thread moves
 * 16 pixels per step with 16-byte loads/stores where aligned (8-bit: one
 * load; 12p: three 8-byte loads of the 24-byte group; 16-bit containers:
 * two 16-byte loads); the tables of the format's codes are copied once per
 * CTA into shared memory (persistent CTAs walk their camera's rows with
 * stride PC_CRPI * cpc), so the lookups are LDS, not L1/L2 gathers; and
 * the rows' margins are written from the rows kept in shared memory, so
 * the separate margin pass (a second read of every row's edges) is not
 * needed. */
PC_DEV void pc_colour_unpack16(const pc_cparams &p, const uint8_t *s, size_t n0, unsigned *c)
{
    /* 8-bit and 12p rows start at any multiple of 4 bytes for an even
     * width that is not a multiple of 16 (2040: every odd row of 8-bit
     * input starts 8 bytes into a 16-byte line, of 12p 4 bytes into an
     * 8-byte one), so those take 4-byte loads: the bytes a warp reads are
     * the same lines either way, and no row falls back to the per-sample
     * path (which it did, doubling the pass's time) */
    if (p.packing == 0 && (((uintptr_t)(s + n0)) & 3) == 0) {
        unsigned ww[4];
        if ((((uintptr_t)(s + n0)) & 15) == 0) {
            const uint4 w = *(const uint4 *)(s + n0);
            ww[0] = w.x, ww[1] = w.y, ww[2] = w.z, ww[3] = w.w;
        } else {
            const unsigned *q = (const unsigned *)(s + n0);
            PC_UNROLL
            for (int i = 0; i < 4; i++)
                ww[i] = q[i];
        }
        PC_UNROLL
        for (int i = 0; i < 16; i++)
            c[i] = (ww[i >> 2] >> (8 * (i & 3))) & 0xff;
        return;
    }
    if (p.packing == 1 && (((uintptr_t)(s + 2 * n0)) & 15) == 0) {
        const uint4 a = *(const uint4 *)(s + 2 * n0), b = *(const uint4 *)(s + 2 * n0 + 16);
        const unsigned ww[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}, m = (1u << p.bits) - 1;
        PC_UNROLL
        for (int i = 0; i < 16; i++)
            c[i] = (ww[i >> 1] >> (16 * (i & 1))) & m;
        return;
    }
    if (p.packing == 2 && p.bits == 12 && (((uintptr_t)(s + 3 * (n0 >> 1))) & 3) == 0) {
        /* 16 samples = 24 bytes of an LSB-first 12-bit stream */
        unsigned ww[7];
        if ((((uintptr_t)(s + 3 * (n0 >> 1))) & 7) == 0) {
            const uint2 *q = (const uint2 *)(s + 3 * (n0 >> 1));
            const uint2 a = q[0], b = q[1], d = q[2];
            ww[0] = a.x, ww[1] = a.y, ww[2] = b.x, ww[3] = b.y, ww[4] = d.x, ww[5] = d.y;
        } else {
            const unsigned *q = (const unsigned *)(s + 3 * (n0 >> 1));
            PC_UNROLL
            for (int i = 0; i < 6; i++)
                ww[i] = q[i];
        }
        ww[6] = 0;
        PC_UNROLL
        for (int i = 0; i < 16; i++) {
            const int bit = 12 * i, k = bit >> 5, sh = bit & 31;
            const unsigned lo = ww[k] >> sh, hi = sh > 20 ? ww[k + 1] << (32 - sh) : 0u;
            c[i] = (lo | hi) & 0xfff;
        }
        return;
    }
    PC_UNROLL
    for (int i = 0; i < 16; i++)
        c[i] = pc_unpack_sample(s, p.packing, p.bits, n0 + i);
}

/* Grid: ncam x cpc persistent CTAs of PC_CNT threads (cpc at most rows /
 * PC_CRPI); dynamic shared memory pc_colour_smem(bits, W). */
#ifdef __CUDACC__
#define PC_CBOUNDS __launch_bounds__(PC_CNT)
#else
#define PC_CBOUNDS
#endif
PC_KERNEL void PC_CBOUNDS pc_colour_kernel(pc_cparams p)
{
    PC_SMEM_DECL(sm);
    const int L = 1 << p.bits, t = threadIdx.x;
    const int ci = (int)blockIdx.x / p.cpc, blk = (int)blockIdx.x - ci * p.cpc;
    const int cam = (int)(p.cams >> (4 * ci)) & 15;
    const uint8_t *src = p.src + cam * p.src_cam, *lut = p.lut + cam * 3 * PC_CLUT_STRIDE;
    uint8_t *dst = p.dst + (long long)cam * p.rows * p.dst_pitch;
    const int half = t / PC_CTPR, tt = t - half * PC_CTPR;
    /* The tables go into shared memory by asynchronous copies (L is a
     * multiple of 16), and this thread's first chunk is loaded while they
     * are in flight: a block often takes one step only (135 blocks of 8
     * rows for a 1080-row slab), so the two round trips to memory would
     * otherwise follow each other. */
    for (int i = 16 * t; i < 3 * L; i += 16 * PC_CNT) {
        const int c = i / L;
        pc_cp16(sm + i, lut + c * PC_CLUT_STRIDE + (i - c * L));
    }
    pc_cp_commit();
    unsigned c[16];
    bool pre = PC_CRPI * blk + half < p.rows && PC_CPX * tt + PC_CPX <= p.W; /* c holds it */
    if (pre)
        pc_colour_unpack16(p, src, (size_t)(PC_CRPI * blk + half) * (size_t)p.W + (size_t)(PC_CPX * tt), c);
    const bool margins = (p.ml | p.mr) != 0;
    const int W16 = (p.W + 15) & ~15;
    uint8_t *srow = sm + 3 * L + half * W16;
    pc_cp_wait<0>();
    __syncthreads();
    for (int y0 = PC_CRPI * blk; y0 < p.rows; y0 += PC_CRPI * p.cpc) {
        const int y = y0 + half;
        /* the tables of the even and odd columns of this row */
        const uint8_t *l0 = sm + L * pc_site_colour((y & 1) << 1, p.cfa);
        const uint8_t *l1 = sm + L * pc_site_colour(1 | (y & 1) << 1, p.cfa);
        uint8_t *d = dst + (long long)y * p.dst_pitch;
        for (int x0 = PC_CPX * tt; y < p.rows && x0 < p.W; x0 += PC_CPX * PC_CTPR) {
            const size_t n0 = (size_t)y * (size_t)p.W + (size_t)x0;
            const int x1 = x0 + PC_CPX <= p.W ? x0 + PC_CPX : p.W;
            if (x1 == x0 + PC_CPX) {
                if (!pre) /* else: the first chunk, loaded above */
                    pc_colour_unpack16(p, src, n0, c);
                pre = false;
                unsigned v[4] = {0, 0, 0, 0};
                PC_UNROLL
                for (int i = 0; i < 16; i += 2) {
                    v[i >> 2] |= (unsigned)l0[c[i]] << (8 * (i & 3));
                    v[i >> 2] |= (unsigned)l1[c[i + 1]] << (8 * (i & 3) + 8);
                }
                const uint4 o = make_uint4(v[0], v[1], v[2], v[3]);
                if ((((uintptr_t)(d + x0)) & 15) == 0) {
                    *(uint4 *)(d + x0) = o;
                } else {
                    for (int i = 0; i < 16; i++)
                        d[x0 + i] = (uint8_t)(v[i >> 2] >> (8 * (i & 3)));
                }
                if (margins)
                    *(uint4 *)(srow + x0) = o;
            } else {
                for (int i = 0; x0 + i < p.W; i += 2) { /* W is even */
                    const uint8_t a = l0[pc_unpack_sample(src, p.packing, p.bits, n0 + i)];
                    const uint8_t b = l1[pc_unpack_sample(src, p.packing, p.bits, n0 + i + 1)];
                    d[x0 + i] = a;
                    d[x0 + i + 1] = b;
                    if (margins) {
                        srow[x0 + i] = a;
                        srow[x0 + i + 1] = b;
                    }
                }
            }
        }
        if (margins) { /* from the rows kept in shared memory */
            __syncthreads();
            for (int j = tt; y < p.rows && j < p.ml + p.mr; j += PC_CTPR) {
                const int x = j < p.ml ? j - p.ml : p.W + (j - p.ml);
                d[x] = srow[pc_fold(x, p.W)];
            }
            __syncthreads();
        }
    }
}

#endif
