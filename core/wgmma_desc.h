/* wgmma_desc.h - the shared-memory matrix descriptor of Hopper's warpgroup
 * MMA (wgmma.mma_async, sm_90a) as plain integer functions, so that one
 * definition serves the device kernels (cuda_net.cuh builds its B
 * descriptors with pc_wgmma_desc_k128), the CPU emulation of wgmma
 * (cuda_emu_sched.cc reads B through pc_wgmma_desc_addr: the hardware's
 * addressing as the PTX ISA defines it, decoded from the descriptor's
 * fields) and the tests that check one against the other on the CPU
 * (tests/test_cuda_emu_net.c): no GPU can run in CI, so the layout math is
 * proven here, and the device run (tests/test_cuda.c) checks the rest.
 *
 * The descriptor (PTX ISA, "Matrix Descriptor Format" of the
 * asynchronous warpgroup-level matrix instructions), 64 bits:
 *   bits  0-13  the matrix's start address in the shared window, >> 4
 *   bits 16-29  leading-dimension byte offset >> 4 (not used by a K-major
 *               swizzled layout whose K extent fits in the swizzle: 1)
 *   bits 32-45  stride-dimension byte offset (SBO) >> 4: from one group
 *               of 8 rows (M or N) to the next
 *   bits 49-51  base offset: 0 when the swizzle pattern starts on a
 *               1024-byte boundary (the kernels' case; others unsupported here)
 *   bits 62-63  swizzle mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte
 *
 * Only the layout the net kernels use is decoded: K-major, 16-bit
 * elements, 128-byte swizzle (the ISA's canonical layout; CUTLASS writes
 * it Swizzle<3,4,3> o ((8,n),2):((8,SBO),1) in 16-byte units). Row n (the
 * N index of B) is 128 bytes at start + (n / 8) * SBO + (n % 8) * 128,
 * element k (K) at 2 k bytes in it; then the swizzle: the 16-byte chunk
 * bits (4-6) of that address XOR its row bits (7-9). A k16 step of the
 * instruction inside the 128-byte rows is the start address + 32 bytes.
 *
 * Plain C (static inline): C tests, C++ (the emulation) and CUDA device
 * code (PC_WGD adds __host__ __device__ under nvcc).
 */
#ifndef PANOCAP_WGMMA_DESC_H
#define PANOCAP_WGMMA_DESC_H

#include <stdint.h>

#ifdef __CUDACC__
#define PC_WGD static __host__ __device__ __forceinline__
#else
#define PC_WGD static inline
#endif

#define PC_WGMMA_SWIZZLE_128B 1u

/* A K-major, 128-byte-swizzled operand at shared address saddr (its first
 * 8-row group on a 1024-byte boundary, or 32 k16 bytes past one), sbo
 * bytes between 8-row groups. */
PC_WGD uint64_t pc_wgmma_desc_k128(uint32_t saddr, uint32_t sbo)
{
    return (uint64_t)((saddr >> 4) & 0x3FFFu) | (uint64_t)1u << 16 | (uint64_t)((sbo >> 4) & 0x3FFFu) << 32 |
           (uint64_t)PC_WGMMA_SWIZZLE_128B << 62;
}

/* The descriptor's fields. */
PC_WGD uint32_t pc_wgmma_desc_start(uint64_t d) { return (uint32_t)(d & 0x3FFFu) << 4; }
PC_WGD uint32_t pc_wgmma_desc_sbo(uint64_t d) { return (uint32_t)((d >> 32) & 0x3FFFu) << 4; }
PC_WGD unsigned pc_wgmma_desc_swizzle(uint64_t d) { return (unsigned)(d >> 62); }
PC_WGD unsigned pc_wgmma_desc_base(uint64_t d) { return (unsigned)((d >> 49) & 7u); }

/* The shared address of element (k, n) of a K-major 16-bit operand that
 * the hardware reads through descriptor d, or UINT32_MAX for a layout this
 * file does not decode (a swizzle other than 128-byte, a base offset). */
PC_WGD uint32_t pc_wgmma_desc_addr(uint64_t d, int k, int n)
{
    if (pc_wgmma_desc_swizzle(d) != PC_WGMMA_SWIZZLE_128B || pc_wgmma_desc_base(d) != 0)
        return UINT32_MAX;
    const uint32_t a = pc_wgmma_desc_start(d) + (uint32_t)(n >> 3) * pc_wgmma_desc_sbo(d) + (uint32_t)(n & 7) * 128u +
                       (uint32_t)k * 2u;
    return a ^ (((a >> 7) & 7u) << 4);
}

/* The net kernels' layout of a layer's weights in shared memory (the
 * mma.sync and wgmma kernels alike, cuda_net.cuh): row r = tap * 64 +
 * cout of 128 bytes (64 input channels), 16-byte chunk c (channels 8 c ..
 * 8 c + 7) at chunk c ^ (r & 7); the byte offset of input channel k of
 * row r. With the rows from a 1024-byte boundary this is the 128-byte
 * swizzle above. */
PC_WGD uint32_t pc_net_wsm_offset(int r, int k)
{
    return (uint32_t)r * 128u + ((((uint32_t)k >> 3) ^ ((uint32_t)r & 7u)) << 4) + ((uint32_t)k & 7u) * 2u;
}

/* The B descriptor of tap p (0..8) and k16 step kc (0..3) of a layer
 * whose weights start at shared address wsm (1024-aligned): B[k][n] =
 * weight (cout n, cin 16 kc + k) of the tap. */
PC_WGD uint64_t pc_net_wdesc(uint32_t wsm, int p, int kc)
{
    return pc_wgmma_desc_k128(wsm + (uint32_t)p * 64u * 128u + (uint32_t)kc * 32u, 1024u);
}

#endif
