/* cuda_mlri.cu - device instantiation and host code of the MLRI kernels
 * (cuda_mlri.cuh): pc_cuda_mlri, MLRI's own CUDA implementation for
 * debayer_cuda.cu (cuda_launch.h): float temporaries allocated once when
 * the algorithm is first selected (the daemon selects every algorithm at
 * start, so a live switch allocates nothing), 3 launches per frame; and
 * pc_gpu_mlri_set_tiles, the walkers' tile rows for benches and tests.
 * Built into its own static library (kernels/meson.build). */
#include "cuda_mlri.cuh"
#include "cuda_launch.h"
#include "debayer.h"
#include "debayer_cuda.h" /* pc_gpu_mlri_set_tiles */
#include "errmsg.h"

#include <new>
#include <stdio.h>
#include <string.h>

__global__ void __launch_bounds__(PC_MLRI_NT) pc_mlri_k_dir(pc_mlri_kp k) { pc_mlri_dir_body<0>(k); }
/* 4 CTAs per SM (its shared memory allows 4): at most 128 registers */
__global__ void __launch_bounds__(PC_MLRI_NT, 4) pc_mlri_k_dir_lean(pc_mlri_kp k) { pc_mlri_dir_body<1>(k); }
__global__ void __launch_bounds__(PC_MLRI_NT) pc_mlri_k_green(pc_mlri_kp k) { pc_mlri_green_body(k); }
/* 4 CTAs per SM (its shared memory allows 4): at most 128 registers */
__global__ void __launch_bounds__(PC_MLRI_NT, 4) pc_mlri_k_rb(pc_mlri_kp k) { pc_mlri_rb_body(k); }

struct pc_mlri_gpu {
    int W, H;
    int dth, bth, lean; /* pc_gpu_mlri_set_tiles (benches, tests); 0: the defaults */
    float *buf;
    size_t bytes;
};

static int mlri_open(void **state, int width, int height, void *stream, char *err, size_t errlen)
{
    (void)stream;
    *state = NULL;
    pc_mlri_gpu *m = new (std::nothrow) pc_mlri_gpu();
    if (!m) {
        pc_set_err(err, errlen, "mlri %dx%d: out of host memory", width, height);
        return PC_ENOMEM;
    }
    m->W = width;
    m->H = height;
    m->bytes = (size_t)PC_MLRI_GPU_PLANES * width * height * sizeof(float);
    /* DIR and RB keep their rings and row buffers in ~58 KB of shared
     * memory: above the 48 KB default, so opt in once (sm_70+). */
    cudaError_t e = cudaFuncSetAttribute(pc_mlri_k_dir, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)pc_mlri_dir_smem(0));
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(pc_mlri_k_rb, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)pc_mlri_rb_smem());
    if (e != cudaSuccess) {
        pc_set_err(err, errlen,
                   "cudaFuncSetAttribute(mlri kernels, %zu / %zu bytes of shared memory) failed: %s",
                   pc_mlri_dir_smem(0), pc_mlri_rb_smem(), cudaGetErrorString(e));
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
    *state = m;
    return 0;
}

static void mlri_close(void *state)
{
    pc_mlri_gpu *m = (pc_mlri_gpu *)state;
    if (!m)
        return;
    cudaFree(m->buf);
    delete m;
}

namespace {
struct dev_launcher {
    cudaStream_t s;
    int operator()(int kind, dim3 grid, dim3 block, size_t smem, const pc_mlri_kp &kp)
    {
        switch (kind) {
        case PC_MLRI_K_DIR: pc_mlri_k_dir<<<grid, block, smem, s>>>(kp); break;
        case PC_MLRI_K_DIR_LEAN: pc_mlri_k_dir_lean<<<grid, block, smem, s>>>(kp); break;
        case PC_MLRI_K_GREEN: pc_mlri_k_green<<<grid, block, smem, s>>>(kp); break;
        default: pc_mlri_k_rb<<<grid, block, smem, s>>>(kp); break;
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

static int mlri_enqueue(void *state, const pc_cuda_frame *f, void *stream, char *err, size_t errlen)
{
    pc_mlri_gpu *m = (pc_mlri_gpu *)state;
    if (!m || f->W != m->W || f->H != m->H) {
        pc_set_err(err, errlen, "mlri: temporaries for %dx%d cannot take a %dx%d frame", m ? m->W : 0, m ? m->H : 0,
                   f->W, f->H);
        return PC_EINVAL;
    }
    const pc_picture *d = f->dst;
    pc_mlri_kp k;
    memset(&k, 0, sizeof k);
    k.src = f->src;
    k.sp = (int)f->src_pitch;
    k.W = f->W;
    k.H = f->H;
    k.ox = f->cfa == PC_CFA_GRBG || f->cfa == PC_CFA_BGGR;
    k.oy = f->cfa == PC_CFA_GBRG || f->cfa == PC_CFA_BGGR;
    k.wh = (size_t)f->W * f->H;
    k.uv = m->buf;
    k.g = m->buf + 4 * k.wh;
    k.dth = m->dth;
    k.bth = m->bth;
    k.dir_lean = m->lean;
    if (pc_mlri_set_dst(k, d, f->yc)) {
        pc_set_err(err, errlen, "mlri: %d colour bands of %d rows (1..%d bands of an even number of rows)", d->n_bands,
                   d->band_rows, PC_KMAX_BANDS);
        return PC_EINVAL;
    }
    dev_launcher L;
    L.s = (cudaStream_t)stream;
    if (pc_mlri_sequence(L, k)) {
        static const char *const names[] = {"dir", "green", "rb", "dir-lean"};
        pc_set_err(err, errlen, "mlri kernel %s launch failed: %s (frame %dx%d)",
                   L.failed >= 0 && L.failed < 4 ? names[L.failed] : "?", cudaGetErrorString(L.error), f->W, f->H);
        return PC_EDEVICE;
    }
    return 0;
}

const pc_cuda_custom pc_cuda_mlri = {mlri_open, mlri_close, mlri_enqueue, NULL};

extern "C" int pc_gpu_mlri_set_tiles(pc_gpu *g, int dir_rows, int rb_rows, int dir_lean, char *err, size_t errlen)
{
    if (pc_mlri_tiles_check(dir_rows, rb_rows, dir_lean)) {
        pc_set_err(err, errlen, "pc_gpu_mlri_set_tiles: rows per CTA %d (DIR) and %d (RB) must be 0 or 2..4096, "
                   "the lean DIR 0 or 1 (%d)", dir_rows, rb_rows, dir_lean);
        return PC_EINVAL;
    }
    pc_mlri_gpu *m = (pc_mlri_gpu *)pc_gpu_custom_state(g, PC_ALGO_MLRI, err, errlen);
    if (!m)
        return PC_EDEVICE;
    m->dth = dir_rows;
    m->bth = rb_rows;
    m->lean = dir_lean;
    return 0;
}
