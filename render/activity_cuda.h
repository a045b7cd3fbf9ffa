/* activity_cuda.h - the activity map (activity.h) on the GPU, a plain C
 * API over an open pc_gpu (gpu.h); the kernel is
 * cuda_activity.cuh. Its compute stream runs it after the slot's work.
 *
 *   pc_gpu_activity_open(g, w, h, &a)  the background model (w * h 8.8
 *       values) and the counts in device memory; allocates, once
 *   pc_gpu_activity_run(g, slot, a, luma, p, counts)  per set: clears the
 *       counts, runs the kernel on luma's Y plane (device memory, w x h),
 *       copies the counts (pc_activity_cells of them) to counts, host
 *       memory that should be pinned (pc_gpu_host_alloc) for the copy to
 *       be asynchronous; read them after pc_gpu_slot_wait(g, slot). The
 *       first call after open sets the background and counts nothing.
 *
 * Built without CUDA, every call returns PC_ENOTSUP (ops_cuda_stub.c).
 */
#ifndef PANOCAP_ACTIVITY_CUDA_H
#define PANOCAP_ACTIVITY_CUDA_H

#include "activity.h"
#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_gpu_activity pc_gpu_activity;

int pc_gpu_activity_open(pc_gpu *g, int w, int h, pc_gpu_activity **out, char *err, size_t errlen);
/* Waits for the work in flight, frees everything; NULL is fine. */
void pc_gpu_activity_close(pc_gpu_activity *a);
int pc_gpu_activity_run(pc_gpu *g, int slot, pc_gpu_activity *a, const pc_picture *luma, const pc_activity_params *p,
                    uint32_t *counts, char *err, size_t errlen);
/* The same without a slot (benchmarks): enqueued on the compute stream. */
int pc_gpu_activity_enqueue(pc_gpu_activity *a, const pc_picture *luma, const pc_activity_params *p,
                            uint32_t *counts, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
