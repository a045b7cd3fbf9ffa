/* cuda_net_wg.cu - the device instantiation of the learned demosaic's
 * wgmma CONV kernels (cuda_net_conv.cuh, WG 1) and their two host entries
 * (cuda_net_wg.h). Built for sm_90a alone, in its own static library, when
 * gpu_arch has 90 (kernels/meson.build); cuda_net.cu picks these kernels on
 * a compute capability 9.0 GPU when the binary has their code. */
#include "cuda_net_wg.h"

#include "cuda_net.cuh"

template <int WR, int NBUF, int MODE>
__global__ void __launch_bounds__(32 * WR, 1) pc_net_k_conv_wg(const __grid_constant__ pc_net_lp p)
{
    pc_net_conv_body<WR, NBUF, MODE, 1>(p);
}

template <int WR, int NBUF>
static cudaError_t prepare(size_t smem, int *blocks)
{
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, pc_net_k_conv_wg<WR, NBUF, 0>);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(pc_net_k_conv_wg<WR, NBUF, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(pc_net_k_conv_wg<WR, NBUF, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, pc_net_k_conv_wg<WR, NBUF, 0>, 32 * WR, smem);
    cudaGetLastError(); /* a kernel without code for this GPU leaves its error behind */
    return e;
}

cudaError_t pc_net_wg_prepare(int wr, int nbuf, size_t smem, int *blocks)
{
    *blocks = 0;
    if (wr == 8 && nbuf == 2)
        return prepare<8, 2>(smem, blocks);
    if (wr == 4 && nbuf == 1)
        return prepare<4, 1>(smem, blocks);
    return cudaErrorInvalidValue;
}

cudaError_t pc_net_wg_launch(int mode, int wr, int nbuf, int grid, size_t smem, cudaStream_t s, const pc_net_lp &p)
{
    if (wr == 8 && nbuf == 2) {
        if (mode)
            pc_net_k_conv_wg<8, 2, 1><<<grid, 256, smem, s>>>(p);
        else
            pc_net_k_conv_wg<8, 2, 0><<<grid, 256, smem, s>>>(p);
    } else if (wr == 4 && nbuf == 1) {
        if (mode)
            pc_net_k_conv_wg<4, 1, 1><<<grid, 128, smem, s>>>(p);
        else
            pc_net_k_conv_wg<4, 1, 0><<<grid, 128, smem, s>>>(p);
    } else {
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
