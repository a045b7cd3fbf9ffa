/* cuda_edge.cu - instantiates the fused kernels of: edge, hed (cuda_algos.cuh);
 * one file per family so nvcc builds them in parallel. */
#include "cuda_algos.cuh"
#include "cuda_launch.h"

extern const pc_kernel_set pc_kset_edge = PC_KSET(pc_alg_edge);
extern const pc_kernel_set pc_kset_hed = PC_KSET(pc_alg_hed);
