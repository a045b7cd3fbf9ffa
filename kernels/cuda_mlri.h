/* cuda_mlri.h - host side of the MLRI CUDA kernels (cuda_mlri.cu), for
 * debayer_cuda.cu: device temporaries allocated once per frame size (at
 * pc_gpu_open, so switching to mlri live costs nothing) and the per-frame
 * launch sequence on a stream. Host C++ only; not part of the public API. */
#ifndef PANOCAP_CUDA_MLRI_H
#define PANOCAP_CUDA_MLRI_H

#include <cuda_runtime.h>
#include <stddef.h>

struct pc_kparams;
struct pc_mlri_gpu;

/* Device temporaries for width x height frames (11 float planes). */
int pc_mlri_gpu_open(pc_mlri_gpu **out, int width, int height, char *err, size_t errlen);
void pc_mlri_gpu_close(pc_mlri_gpu *m);
/* Bytes of device memory it holds. */
size_t pc_mlri_gpu_bytes(const pc_mlri_gpu *m);

/* Enqueues the whole demosaic of kp.src into kp's destination planes
 * (kfmt = PC_KFMT_*) on stream s: 6 kernel launches. */
int pc_mlri_gpu_run(pc_mlri_gpu *m, cudaStream_t s, const pc_kparams *kp, int kfmt, char *err, size_t errlen);

#endif
