/* cuda_linear.cu - instantiates the fused kernels of: bilinear, hqlinear (cuda_algos.cuh);
 * one file per family so nvcc builds them in parallel. */
#include "cuda_algos.cuh"
#include "cuda_launch.h"

extern const pc_kernel_set pc_kset_bilinear = PC_KSET(pc_alg_bilinear);
extern const pc_kernel_set pc_kset_hqlinear = PC_KSET(pc_alg_hqlinear);
