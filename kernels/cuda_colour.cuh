/* cuda_colour.cuh - the GPU colour stage (docs/colour.md §1-2): one small
 * pass per camera slab at upload that unpacks the raw samples (any format
 * of colour.h, pc_unpack_sample) and maps each through its camera's table
 * of its CFA colour into the 8-bit panorama the demosaic kernels read.
 * Compiles under nvcc and, after cuda_emu.h, on the host for the
 * emulation test. */
#ifndef PANOCAP_CUDA_COLOUR_CUH
#define PANOCAP_CUDA_COLOUR_CUH

#include "cuda_common.cuh"
#include "unpack_formulas.h"

/* Table layout on the device: 3 colours x PC_CLUT_STRIDE codes. */
#define PC_CLUT_STRIDE 4096
/* Threads per block and pixels per thread of the colour pass. */
#define PC_CNT 128
#define PC_CPX 4

struct pc_cparams {
    const uint8_t *src; /* the slab's raw stream (sample n = y*W + x) */
    const uint8_t *lut; /* 3 x PC_CLUT_STRIDE */
    uint8_t *dst;       /* row 0 of the slab in the 8-bit panorama */
    long long dst_pitch;
    int W, rows;
    int packing, bits, cfa;
};

/* Grid: (ceil(W / (PC_CNT*PC_CPX)), rows); thread: PC_CPX consecutive
 * pixels of one row, written as one 4-byte store when whole. */
PC_KERNEL void pc_colour_kernel(pc_cparams p)
{
    const int y = blockIdx.y;
    const int x0 = (blockIdx.x * PC_CNT + threadIdx.x) * PC_CPX;
    if (x0 >= p.W || y >= p.rows)
        return;
    /* colours of the even and odd columns of this row (site = (x&1 |
     * (y&1)<<1) ^ cfa; R -> 0, Gr/Gb -> 1, B -> 2) */
    const int s0 = ((y & 1) << 1) ^ p.cfa, s1 = (1 | (y & 1) << 1) ^ p.cfa;
    const uint8_t *l0 = p.lut + PC_CLUT_STRIDE * (s0 == 0 ? 0 : s0 == 3 ? 2 : 1);
    const uint8_t *l1 = p.lut + PC_CLUT_STRIDE * (s1 == 0 ? 0 : s1 == 3 ? 2 : 1);
    const size_t n0 = (size_t)y * (size_t)p.W + (size_t)x0;
    uint8_t *d = p.dst + (long long)y * p.dst_pitch + x0;
    if (x0 + PC_CPX <= p.W) {
        unsigned c[PC_CPX];
        if ((n0 & 3) == 0 && p.packing != 3 && !(p.packing == 2 && p.bits == 10)) {
            /* whole aligned words: 8-bit 4 bytes (one load), 16-bit
             * containers 8 bytes (two), 12p 6 bytes (three 16-bit) */
            if (p.packing == 0) {
                const unsigned w = *(const unsigned *)(p.src + n0);
                PC_UNROLL
                for (int i = 0; i < 4; i++)
                    c[i] = (w >> (8 * i)) & 0xff;
            } else if (p.packing == 1) {
                const unsigned *q = (const unsigned *)(p.src + 2 * n0);
                const unsigned a = q[0], b = q[1], m = (1u << p.bits) - 1;
                c[0] = a & m;
                c[1] = (a >> 16) & m;
                c[2] = b & m;
                c[3] = (b >> 16) & m;
            } else {
                const uint16_t *q = (const uint16_t *)(p.src + 3 * (n0 >> 1));
                const unsigned a = q[0], b = q[1], d = q[2];
                c[0] = a & 0xfff;
                c[1] = (a >> 12) | ((b & 0xff) << 4);
                c[2] = (b >> 8) | ((d & 0xf) << 8);
                c[3] = d >> 4;
            }
        } else {
            PC_UNROLL
            for (int i = 0; i < PC_CPX; i++)
                c[i] = pc_unpack_sample(p.src, p.packing, p.bits, n0 + i);
        }
        unsigned v = 0;
        PC_UNROLL
        for (int i = 0; i < PC_CPX; i += 2) {
            v |= (unsigned)l0[c[i]] << (8 * i);
            v |= (unsigned)l1[c[i + 1]] << (8 * i + 8);
        }
        if ((((uintptr_t)d) & 3) == 0) {
            *(uint32_t *)d = v;
            return;
        }
        for (int i = 0; i < PC_CPX; i++)
            d[i] = (uint8_t)(v >> (8 * i));
        return;
    }
    for (int i = 0; x0 + i < p.W; i += 2) { /* W is even */
        d[i] = l0[pc_unpack_sample(p.src, p.packing, p.bits, n0 + i)];
        d[i + 1] = l1[pc_unpack_sample(p.src, p.packing, p.bits, n0 + i + 1)];
    }
}

#endif
