/* convert_cuda.cu - host side of RGB -> YUV on the GPU (convert_cuda.h):
 * checks, the kernel's parameters (the conversion matrices by value) and
 * one launch of cuda_convert.cuh's kernel on the pc_gpu's compute stream.
 */
#include <cuda_runtime.h>

#include "convert_cuda.h"
#include "cuda_convert.cuh"
#include "errmsg.h"

template <int BPP, int FMT>
static void launch_v(const pc_ckparams &kp, dim3 grid, cudaStream_t s, int vec)
{
    if (vec)
        pc_convert_kernel<BPP, FMT, true><<<grid, dim3(PC_CVX, PC_CVY), 0, s>>>(kp);
    else
        pc_convert_kernel<BPP, FMT, false><<<grid, dim3(PC_CVX, PC_CVY), 0, s>>>(kp);
}

extern "C" int pc_gpu_convert_enqueue(pc_gpu *g, const pc_picture *src, const pc_picture *dst, char *err,
                                      size_t errlen)
{
    if (!g) {
        pc_set_err(err, errlen, "convert: no GPU");
        return PC_EINVAL;
    }
    int rc = pc_convert_check(src, dst, err, errlen);
    if (rc)
        return rc;
    int vec = 0;
    const char *why = pc_ckparams_misaligned(src, dst, &vec);
    if (why) {
        pc_set_err(err, errlen, "convert: %s (the kernel loads and stores 4 bytes at once)", why);
        return PC_EINVAL;
    }
    pc_ckparams kp;
    if (pc_ckparams_set(&kp, src, dst)) {
        pc_set_err(err, errlen, "convert: %d colour bands (at most %d)", dst->n_bands, PC_CV_MAX_BANDS);
        return PC_EINVAL;
    }
    cudaError_t e = cudaSetDevice(pc_gpu_device(g));
    if (e == cudaSuccess) {
        const cudaStream_t s = (cudaStream_t)pc_gpu_stream(g);
        const dim3 grid((unsigned)(((src->width + 3) / 4 + PC_CVX - 1) / PC_CVX),
                        (unsigned)((src->height / 2 + PC_CVY - 1) / PC_CVY));
        const int four = src->fmt == PC_FMT_RGBX32, nv12 = dst->fmt == PC_FMT_NV12;
        if (four)
            nv12 ? launch_v<4, PC_FMT_NV12>(kp, grid, s, vec) : launch_v<4, PC_FMT_I420>(kp, grid, s, vec);
        else
            nv12 ? launch_v<3, PC_FMT_NV12>(kp, grid, s, 0) : launch_v<3, PC_FMT_I420>(kp, grid, s, 0);
        e = cudaGetLastError();
    }
    if (e != cudaSuccess) {
        pc_set_err(err, errlen, "convert: launch failed: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
        return PC_EDEVICE;
    }
    return 0;
}

extern "C" int pc_gpu_convert(pc_gpu *g, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                              size_t errlen)
{
    int rc = pc_gpu_convert_enqueue(g, src, dst, err, errlen);
    return rc ? rc : pc_gpu_slot_mark(g, slot, err, errlen);
}
