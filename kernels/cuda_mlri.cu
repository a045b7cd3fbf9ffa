/* cuda_mlri.cu - device instantiation and host launch code of the MLRI
 * kernels (cuda_mlri.cuh). Built into its own static library with
 * -fmad=false (kernels/meson.build): no multiply-add is contracted, so the
 * float results follow the C reference operation for operation. */
#include "cuda_mlri.cuh"
#include "cuda_mlri.h"
#include "debayer.h"
#include "errmsg.h"

#include <new>
#include <stdio.h>
#include <string.h>

__global__ void __launch_bounds__(PC_MLRI_NT) pc_mlri_k_dir(pc_mlri_kp k) { pc_mlri_dir_body(k); }
__global__ void __launch_bounds__(PC_MLRI_NT) pc_mlri_k_green(pc_mlri_kp k) { pc_mlri_green_body(k); }
__global__ void __launch_bounds__(PC_MLRI_NT) pc_mlri_k_abrb(pc_mlri_kp k) { pc_mlri_abrb_body(k); }
__global__ void __launch_bounds__(PC_MLRI_NT) pc_mlri_k_tentrb(pc_mlri_kp k) { pc_mlri_tentrb_body(k); }
__global__ void __launch_bounds__(PC_MLRI_NT) pc_mlri_k_final(pc_mlri_kp k) { pc_mlri_final_body(k); }

struct pc_mlri_gpu {
    int W, H;
    float *buf;
    size_t bytes;
};

int pc_mlri_gpu_open(pc_mlri_gpu **out, int width, int height, char *err, size_t errlen)
{
    *out = NULL;
    pc_mlri_gpu *m = new (std::nothrow) pc_mlri_gpu();
    if (!m) {
        pc_set_err(err, errlen, "mlri %dx%d: out of host memory", width, height);
        return PC_ENOMEM;
    }
    m->W = width;
    m->H = height;
    m->bytes = (size_t)PC_MLRI_GPU_PLANES * width * height * sizeof(float);
    /* DIR keeps its staged products and a/b tiles in 80 KB of shared
     * memory: above the 48 KB default, so opt in once (sm_70+). */
    cudaError_t e = cudaFuncSetAttribute(pc_mlri_k_dir, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)pc_mlri_dir_smem());
    if (e != cudaSuccess) {
        pc_set_err(err, errlen, "cudaFuncSetAttribute(mlri dir kernel, %zu bytes of shared memory) failed: %s",
                   pc_mlri_dir_smem(), cudaGetErrorString(e));
        delete m;
        return PC_EDEVICE;
    }
    e = cudaMalloc((void **)&m->buf, m->bytes);
    if (e != cudaSuccess) {
        pc_set_err(err, errlen, "cudaMalloc(%zu bytes of mlri temporaries, frame %dx%d) failed: %s", m->bytes,
                   width, height, cudaGetErrorString(e));
        delete m;
        return PC_EDEVICE;
    }
    *out = m;
    return 0;
}

void pc_mlri_gpu_close(pc_mlri_gpu *m)
{
    if (!m)
        return;
    cudaFree(m->buf);
    delete m;
}

size_t pc_mlri_gpu_bytes(const pc_mlri_gpu *m) { return m ? m->bytes : 0; }

namespace {
struct dev_launcher {
    cudaStream_t s;
    int operator()(int kind, dim3 grid, dim3 block, size_t smem, const pc_mlri_kp &kp)
    {
        switch (kind) {
        case PC_MLRI_K_DIR: pc_mlri_k_dir<<<grid, block, smem, s>>>(kp); break;
        case PC_MLRI_K_GREEN: pc_mlri_k_green<<<grid, block, smem, s>>>(kp); break;
        case PC_MLRI_K_ABRB: pc_mlri_k_abrb<<<grid, block, smem, s>>>(kp); break;
        case PC_MLRI_K_TENTRB: pc_mlri_k_tentrb<<<grid, block, smem, s>>>(kp); break;
        default: pc_mlri_k_final<<<grid, block, smem, s>>>(kp); break;
        }
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) {
            failed = kind;
            error = e;
            return -1;
        }
        return 0;
    }
    int failed = -1;
    cudaError_t error = cudaSuccess;
};
} // namespace

int pc_mlri_gpu_run(pc_mlri_gpu *m, cudaStream_t s, const pc_kparams *kp, int kfmt, char *err, size_t errlen)
{
    if (!m || kp->W != m->W || kp->H != m->H) {
        pc_set_err(err, errlen, "mlri: temporaries for %dx%d cannot take a %dx%d frame", m ? m->W : 0, m ? m->H : 0,
                   kp->W, kp->H);
        return PC_EINVAL;
    }
    pc_mlri_kp k;
    memset(&k, 0, sizeof k);
    k.src = kp->src;
    k.sp = kp->src_pitch;
    k.W = kp->W;
    k.H = kp->H;
    k.ox = kp->ox;
    k.oy = kp->oy;
    k.wh = (size_t)kp->W * kp->H;
    k.ab = m->buf;
    k.uv = m->buf + 4 * k.wh;
    k.g = m->buf + 8 * k.wh;
    k.t = m->buf + 9 * k.wh;
    k.fmt = kfmt;
    k.d0 = kp->d0;
    k.d1 = kp->d1;
    k.d2 = kp->d2;
    k.p0 = kp->p0;
    k.p1 = kp->p1;
    k.p2 = kp->p2;
    for (int i = 0; i < 3; i++) {
        k.cy[i] = kp->cy[i];
        k.cb[i] = kp->cb[i];
        k.cr[i] = kp->cr[i];
    }
    k.yoff = kp->yoff;
    dev_launcher L;
    L.s = s;
    if (pc_mlri_sequence(L, k)) {
        static const char *const names[] = {"dir", "green", "ab-rb", "tent-rb", "final"};
        pc_set_err(err, errlen, "mlri kernel %s launch failed: %s (frame %dx%d)",
                   L.failed >= 0 && L.failed < 5 ? names[L.failed] : "?", cudaGetErrorString(L.error), kp->W, kp->H);
        return PC_EDEVICE;
    }
    return 0;
}
