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
 */
#ifndef PANOCAP_CUDA_MMA_CUH
#define PANOCAP_CUDA_MMA_CUH

#include <string.h>

#include "cuda_common.cuh"

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
