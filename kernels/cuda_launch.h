/* cuda_launch.h - private table between the per-family kernel files
 * (cuda_linear.cu, cuda_hue.cu, cuda_edge.cu, cuda_wd.cu) and the host
 * code of debayer_cuda.cu: one kernel per variant x output format, and the
 * shared memory a CTA needs for a tile height. Host C++ only. */
#ifndef PANOCAP_CUDA_LAUNCH_H
#define PANOCAP_CUDA_LAUNCH_H

#include <stddef.h>

struct pc_kernel_set {
    const void *fn[2][3]; /* [PC_KVAR_2PX/4PX][PC_KFMT_NV12/I420/RGB24] */
    size_t (*smem)(int var, int th);
    int rp; /* raw halo rows (for reporting) */
};

extern const pc_kernel_set pc_kset_bilinear, pc_kset_hqlinear, pc_kset_smoothhue,
    pc_kset_edge, pc_kset_hed, pc_kset_wdorig, pc_kset_wdmod;

#ifdef PANOCAP_CUDA_KERNEL_CUH /* only in the files that instantiate kernels */
#define PC_KSET(A)                                                                               \
    {{{(const void *)pc_debayer_kernel<A, PC_KVAR_2PX, PC_KFMT_NV12>,                            \
       (const void *)pc_debayer_kernel<A, PC_KVAR_2PX, PC_KFMT_I420>,                            \
       (const void *)pc_debayer_kernel<A, PC_KVAR_2PX, PC_KFMT_RGB24>},                          \
      {(const void *)pc_debayer_kernel<A, PC_KVAR_4PX, PC_KFMT_NV12>,                            \
       (const void *)pc_debayer_kernel<A, PC_KVAR_4PX, PC_KFMT_I420>,                            \
       (const void *)pc_debayer_kernel<A, PC_KVAR_4PX, PC_KFMT_RGB24>}},                         \
     pc_smem_of<A>, A::RP}

template <class A>
static size_t pc_smem_of(int var, int th)
{
    return var == PC_KVAR_4PX ? pc_kernel_smem<A, PC_KVAR_4PX>(th) : pc_kernel_smem<A, PC_KVAR_2PX>(th);
}

#endif /* PANOCAP_CUDA_KERNEL_CUH */

#endif
