/* cuda_mma.cuh - the warp-level matrix instructions of the tensor-core
 * kernels (cuda_net.cuh) as small inline functions: PTX under nvcc, the
 * CPU emulation's versions (cuda_emu_warp.h) after cuda_emu.h, same names
 * and arguments, so one kernel source serves both.
 *
 *   pc_mma_16816(d, a, b)   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32,
 *                           d += A B (fragments as in the PTX ISA, "Matrix
 *                           Fragments for mma.m16n8k16 with floating point
 *                           type"; cuda_emu_sched.cc spells them out)
 *   pc_ldsm_x{1,2,4}[_t]    ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16
 *   pc_cp_async16           cp.async.cg.shared.global, 16 bytes
 *   pc_cp_async_commit / pc_cp_async_wait<N>   commit_group / wait_group N
 *   pc_h2 / pc_h2_lo / pc_h2_hi   two floats <-> one .f16x2 register
 *                           (round to nearest even; low half = first)
 *
 * The rule the kernels keep for the emulation: an mma's accumulators are
 * read only after the warp's next ldmatrix, shuffle, __syncwarp() or
 * __syncthreads() (the emulation executes the warp's mma there; the
 * device has them done at once, so this costs nothing on the device).
 *
 * sm_80 and later (mma.m16n8k16 and cp.async): the kernels are built for
 * every gpu_arch, but on older devices their bodies trap and the host
 * refuses the algorithm at open (cuda_net.cu).
 *
 * Hopper's warpgroup MMA (sm_90a only: built in cuda_net_wg.cu with
 * -gencode arch=compute_90a,code=sm_90a; elsewhere these trap):
 *   pc_wgmma_64x64x16_rs(d, a, desc)   wgmma.mma_async.sync.aligned.m64n64k16
 *                           .f32.f16.f16, d += A B: A from registers (per warp
 *                           its 16 rows, mma.m16n8k16's A fragment), B (K x N =
 *                           16 x 64) from shared memory through descriptor desc
 *                           (wgmma_desc.h), d per warp mma.m16n8k16's C
 *                           fragment of each n8 block: d[n][0..3]
 *   pc_wgmma_fence()        wgmma.fence.sync.aligned: before the first wgmma
 *                           and after any other write of its A or d registers
 *   pc_wgmma_commit()       wgmma.commit_group.sync.aligned
 *   pc_wgmma_wait<N>()      wgmma.wait_group.sync.aligned N: all but the N
 *                           most recent groups done; only then may A's
 *                           registers be rewritten and d be read
 *   pc_wgmma_fence_acc(d)   keeps the compiler from moving other accesses
 *                           of d across it (no instruction; CUTLASS's
 *                           warpgroup_fence_operand)
 *   pc_fence_proxy_async()  fence.proxy.async.shared::cta: shared memory
 *                           written by ordinary stores or cp.async, visible
 *                           to the tensor cores' (async proxy) reads after
 *                           the next barrier
 * The emulation (cuda_emu_warp.h) executes a warp's wgmma at its wait_group,
 * reading B through the descriptor as the ISA defines it.
 */
#ifndef PANOCAP_CUDA_MMA_CUH
#define PANOCAP_CUDA_MMA_CUH

#include <string.h>

#include "cuda_common.cuh"
#include "wgmma_desc.h"

#ifdef __CUDACC__
#include <cuda_fp16.h>

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define PC_MMA_OK 1
#else
#define PC_MMA_OK 0
#endif

PC_DEV unsigned pc_smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

PC_DEV void pc_mma_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
#if PC_MMA_OK
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    __trap();
#endif
}

PC_DEV void pc_ldsm_x1(unsigned (&r)[1], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(pc_smem_addr(p)));
}
PC_DEV void pc_ldsm_x2(unsigned (&r)[2], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1])
                 : "r"(pc_smem_addr(p)));
}
PC_DEV void pc_ldsm_x4(unsigned (&r)[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(pc_smem_addr(p)));
}
PC_DEV void pc_ldsm_x1_t(unsigned (&r)[1], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(pc_smem_addr(p)));
}
PC_DEV void pc_ldsm_x2_t(unsigned (&r)[2], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1])
                 : "r"(pc_smem_addr(p)));
}
PC_DEV void pc_ldsm_x4_t(unsigned (&r)[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(pc_smem_addr(p)));
}

PC_DEV void pc_cp_async16(void *smem, const void *gmem)
{
#if PC_MMA_OK
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(pc_smem_addr(smem)), "l"(gmem) : "memory");
#else
    __trap();
#endif
}
PC_DEV void pc_cp_async_commit()
{
#if PC_MMA_OK
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
PC_DEV void pc_cp_async_wait()
{
#if PC_MMA_OK
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PC_WGMMA_OK 1
#else
#define PC_WGMMA_OK 0
#endif

PC_DEV void pc_wgmma_fence()
{
#if PC_WGMMA_OK
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
    __trap();
#endif
}
PC_DEV void pc_wgmma_commit()
{
#if PC_WGMMA_OK
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N>
PC_DEV void pc_wgmma_wait()
{
#if PC_WGMMA_OK
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
PC_DEV void pc_fence_proxy_async()
{
#if PC_WGMMA_OK
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
template <int R, int C>
PC_DEV void pc_wgmma_fence_acc(float (&d)[R][C][4])
{
    PC_UNROLL
    for (int i = 0; i < R; i++)
        PC_UNROLL
        for (int j = 0; j < C; j++)
            PC_UNROLL
            for (int e = 0; e < 4; e++)
                asm volatile("" : "+f"(d[i][j][e])::"memory");
}
PC_DEV void pc_wgmma_64x64x16_rs(float (&d)[8][4], const unsigned (&a)[4], uint64_t desc)
{
#if PC_WGMMA_OK
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                 "{%32, %33, %34, %35}, %36, p, 1, 1, 0;\n"
                 "}\n"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),
                   "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]),
                   "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),
                   "+f"(d[7][2]), "+f"(d[7][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
#else
    __trap();
#endif
}
#endif /* __CUDACC__ */

/* Two floats as one .f16x2 register (lo in bits 0-15), and back. */
PC_DEV unsigned pc_h2(float lo, float hi)
{
    const __half2 h = __floats2half2_rn(lo, hi);
    unsigned u;
    memcpy(&u, &h, 4);
    return u;
}
PC_DEV float pc_h2_lo(unsigned u)
{
    __half2 h;
    memcpy(&h, &u, 4);
    return __low2float(h);
}
PC_DEV float pc_h2_hi(unsigned u)
{
    __half2 h;
    memcpy(&h, &u, 4);
    return __high2float(h);
}

#endif
