/* hwcuda.c - an FFmpeg CUDA device context on panocap's own CUcontext and
 * stream, so NVENC reads the frames the debayer wrote on that stream with
 * no copy and no extra synchronisation. Compiled only with CUDA: the
 * AVCUDADeviceContext layout needs <cuda.h>. Without CUDA the stub at the
 * end says so. No CUDA call is made here: libavutil loads libcuda itself. */
#include <stdio.h>

#include "encode_internal.h"

#if PANOCAP_ENCODE_CUDA
#include <cuda.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>

int pc_enc_cuda_device(AVBufferRef **out, void *cuda_ctx, void *cuda_stream,
                       char *err, size_t n)
{
    *out = NULL;
    AVBufferRef *ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
    if (!ref) {
        snprintf(err, n, "av_hwdevice_ctx_alloc(CUDA) failed (out of memory or no CUDA in this FFmpeg)");
        return PC_ENOMEM;
    }
    AVHWDeviceContext *dev = (AVHWDeviceContext *)ref->data;
    AVCUDADeviceContext *cu = dev->hwctx;
    cu->cuda_ctx = (CUcontext)cuda_ctx;
    cu->stream = (CUstream)cuda_stream;
    int r = av_hwdevice_ctx_init(ref);
    if (r < 0) {
        char e[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(r, e, sizeof e);
        snprintf(err, n, "av_hwdevice_ctx_init(CUDA on the caller's context): %s", e);
        av_buffer_unref(&ref);
        return PC_EDEVICE;
    }
    *out = ref;
    return 0;
}
#else
int pc_enc_cuda_device(AVBufferRef **out, void *cuda_ctx, void *cuda_stream,
                       char *err, size_t n)
{
    (void)cuda_ctx;
    (void)cuda_stream;
    *out = NULL;
    snprintf(err, n, "panocap was built without CUDA: no zero-copy NVENC frames");
    return PC_ENOTSUP;
}
#endif
