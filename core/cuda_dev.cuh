/* cuda_dev.cuh - what device code of every room (the demosaic kernels'
 * cuda_common.cuh, the render and activity kernels) writes its functions
 * with: PC_DEV, PC_KERNEL, PC_HD, PC_UNROLL, PC_SMEM_DECL, and the 8-bit
 * clamp.
 *
 * Compiles under nvcc (device code) and, after cuda_emu.h, as host C++ for
 * the emulation tests, so everything here is inline with no CUDA-only
 * syntax beyond what cuda_emu.h provides.
 */
#ifndef PANOCAP_CUDA_DEV_CUH
#define PANOCAP_CUDA_DEV_CUH

#ifdef __CUDACC__
#define PC_DEV __device__ __forceinline__
#define PC_KERNEL __global__
#define PC_HD __host__ __device__ inline
#define PC_UNROLL _Pragma("unroll")
/* Declares `name` as the block's dynamic shared memory. */
#define PC_SMEM_DECL(name) extern __shared__ __align__(16) unsigned char name[]
#else
#ifndef PANOCAP_CUDA_EMU_H
#error "include cuda_emu.h before cuda_dev.cuh (or cuda_common.cuh) when compiling for the host"
#endif
#define PC_DEV inline
#define PC_KERNEL
#define PC_HD inline
#define PC_UNROLL
#define PC_SMEM_DECL(name) unsigned char *name = pc_emu::current()->smem.data()
#endif

/* CLAMP8 = max(min(v, 255), 0): one DPX instruction (VIMNMX.RELU) on
 * sm_90, two min/max elsewhere. */
PC_DEV int pc_clamp8(int v) { return __vimin_s32_relu(v, 255); }

#endif
