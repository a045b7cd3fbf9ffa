/* cuda_wd.cu - instantiates the fused kernels of: wdmod, wdorig (cuda_algos.cuh);
 * one file per family so nvcc builds them in parallel. */
#include "cuda_algos.cuh"
#include "cuda_launch.h"

extern const pc_kernel_set pc_kset_wdmod = PC_KSET(pc_alg_wdmod);
extern const pc_kernel_set pc_kset_wdorig = PC_KSET(pc_alg_wdorig);
