/* cuda_net_wg.h - the wgmma CONV kernels of the learned demosaic
 * (cuda_net_conv.cuh with WG 1) for cuda_net.cu's host code. They are
 * compiled in their own library (cuda_net_wg.cu, kernels/meson.build) for
 * sm_90a only (-gencode arch=compute_90a,code=sm_90a: wgmma exists on
 * Hopper's "a" target alone, with no PTX another GPU could compile), and
 * only when gpu_arch has 90; cuda_net.cu then has PC_NET_HAVE_WG 1. Host
 * C++ (nvcc). */
#ifndef PANOCAP_CUDA_NET_WG_H
#define PANOCAP_CUDA_NET_WG_H

#include <cuda_runtime_api.h>
#include <stddef.h>

struct pc_net_lp;

/* Whether this binary has the wgmma kernel of (wr, nbuf) for the current
 * device (cudaFuncGetAttributes: no code for it but on a compute
 * capability 9.0 GPU); then raises its dynamic shared memory limit to smem
 * and gives its resident blocks per SM. cudaSuccess, or the reason, the
 * runtime's last error cleared. */
cudaError_t pc_net_wg_prepare(int wr, int nbuf, size_t smem, int *blocks);
/* Launches the wgmma CONV kernel (mode 0: a plain layer, 1: CONVU) on s. */
cudaError_t pc_net_wg_launch(int mode, int wr, int nbuf, int grid, size_t smem, cudaStream_t s, const pc_net_lp &p);

#endif
