/* activity_cuda.cu - host side of the activity map on the GPU
 * (activity_cuda.h): the background model and counts in device memory,
 * one clear, one launch of cuda_activity.cuh's kernel and one copy of the
 * counts per set on the pc_gpu's compute stream. Nothing per set
 * allocates.
 */
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include "activity_cuda.h"
#include "cuda_activity.cuh"
#include "errmsg.h"

struct pc_gpu_activity {
    pc_gpu *g;
    int device;
    cudaStream_t cs;
    int w, h, init;
    uint16_t *d_bg;
    uint32_t *d_counts; /* room for w * h cells (1x1 cells), so any parameters fit */
};

#define CKA(call)                                                                                  \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            pc_set_err(err, errlen, "activity map: %s failed: %s (%s)", #call, cudaGetErrorString(e_), \
                       cudaGetErrorName(e_));                                                      \
            return PC_EDEVICE;                                                                     \
        }                                                                                          \
    } while (0)

extern "C" void pc_gpu_activity_close(pc_gpu_activity *a)
{
    if (!a)
        return;
    cudaSetDevice(a->device);
    cudaStreamSynchronize(a->cs);
    if (a->d_bg)
        cudaFree(a->d_bg);
    if (a->d_counts)
        cudaFree(a->d_counts);
    free(a);
}

static int open_(pc_gpu_activity *a, char *err, size_t errlen)
{
    CKA(cudaSetDevice(a->device));
    CKA(cudaMalloc((void **)&a->d_bg, sizeof(uint16_t) * (size_t)a->w * a->h));
    CKA(cudaMalloc((void **)&a->d_counts, sizeof(uint32_t) * (size_t)a->w * a->h));
    return 0;
}

extern "C" int pc_gpu_activity_open(pc_gpu *g, int w, int h, pc_gpu_activity **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!g || w < 1 || h < 1 || w > PC_MAX_DIM || h > PC_MAX_DIM) {
        pc_set_err(err, errlen, "activity map: no GPU, or a picture of %dx%d (1..%d)", w, h, PC_MAX_DIM);
        return PC_EINVAL;
    }
    pc_gpu_activity *a = (pc_gpu_activity *)calloc(1, sizeof *a);
    if (!a) {
        pc_set_err(err, errlen, "activity map: out of memory");
        return PC_ENOMEM;
    }
    a->g = g;
    a->device = pc_gpu_device(g);
    a->cs = (cudaStream_t)pc_gpu_stream(g);
    a->w = w;
    a->h = h;
    a->init = 1;
    int rc = open_(a, err, errlen);
    if (rc) {
        pc_gpu_activity_close(a);
        return rc;
    }
    *out = a;
    return 0;
}

extern "C" int pc_gpu_activity_enqueue(pc_gpu_activity *a, const pc_picture *luma, const pc_activity_params *p,
                                       uint32_t *counts, char *err, size_t errlen)
{
    if (!a || !luma || !counts) {
        pc_set_err(err, errlen, "activity map: no state, picture or counts");
        return PC_EINVAL;
    }
    int rc = pc_activity_check(p, a->w, a->h, err, errlen);
    if (rc)
        return rc;
    if ((luma->fmt != PC_FMT_NV12 && luma->fmt != PC_FMT_I420) || luma->width != a->w || luma->height != a->h ||
        !luma->plane[0]) {
        pc_set_err(err, errlen, "activity map: the luma must be an nv12 or i420 picture of %dx%d (got %dx%d)", a->w,
                   a->h, luma->width, luma->height);
        return PC_EINVAL;
    }
    const size_t ncells = (size_t)pc_activity_cells(a->w, a->h, p);
    CKA(cudaSetDevice(a->device));
    CKA(cudaMemsetAsync(a->d_counts, 0, sizeof(uint32_t) * ncells, a->cs));
    pc_akparams kp;
    pc_akparams_set(&kp, luma->plane[0], (int)luma->pitch[0], a->w, a->h, a->d_bg, a->d_counts, a->init, p);
    const dim3 grid((unsigned)((a->w + PC_ACT_BX - 1) / PC_ACT_BX), (unsigned)((a->h + PC_ACT_BY - 1) / PC_ACT_BY));
    const size_t smem = sizeof(unsigned) * (size_t)pc_act_cells_x(p->cw) * pc_act_cells_y(p->ch);
    pc_activity_kernel<<<grid, dim3(PC_ACT_BX, PC_ACT_BY), smem, a->cs>>>(kp);
    CKA(cudaGetLastError());
    CKA(cudaMemcpyAsync(counts, a->d_counts, sizeof(uint32_t) * ncells, cudaMemcpyDeviceToHost, a->cs));
    a->init = 0;
    return 0;
}

extern "C" int pc_gpu_activity_run(pc_gpu *g, int slot, pc_gpu_activity *a, const pc_picture *luma,
                               const pc_activity_params *p, uint32_t *counts, char *err, size_t errlen)
{
    int rc = pc_gpu_activity_enqueue(a, luma, p, counts, err, errlen);
    return rc ? rc : pc_gpu_slot_mark(g, slot, err, errlen);
}
