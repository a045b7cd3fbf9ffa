/* cuda_hue.cu - instantiates the fused kernels of: smoothhue (cuda_algos.cuh);
 * one file per family so nvcc builds them in parallel. */
#include "cuda_algos.cuh"
#include "cuda_launch.h"

extern const pc_kernel_set pc_kset_smoothhue = PC_KSET(pc_alg_smoothhue);
