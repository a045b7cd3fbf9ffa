/* cuda_convert.cuh - RGB -> YUV of the unstitched cameras (convert.h) on
 * the GPU: the demosaic's final-pass conversion (spec §8, 2x2 blocks,
 * colour bands by source row, grid tiles by pc_grid_offset) applied to an
 * RGB24/RGBX32 picture, so the bytes are pc_rgb_to_yuv's. Compiles under
 * nvcc and, after cuda_emu.h, as host C++ (cuda_emu_ops.cc).
 *
 * Memory-bound (2040x5400 RGBX32 -> NV12: 44 MB read, 16.5 MB written, ~20
 * us at 3 TB/s): a thread takes two horizontally adjacent 2x2 blocks (4x2
 * pixels), reads each row's 16 (RGBX32: one 16-byte load where the rows
 * are 16-byte aligned) or 12 bytes (RGB24: three 4-byte loads), and stores
 * Y and NV12 CbCr 4 bytes at once, I420 chroma 2: a warp moves whole
 * sectors. A picture whose width is 2 mod 4 ends in a single block
 * (2-byte stores).
 */
#ifndef PANOCAP_CUDA_CONVERT_CUH
#define PANOCAP_CUDA_CONVERT_CUH

#include <stdint.h>
#include <string.h>

#include "cuda_common.cuh"

#define PC_CVX 64 /* threads across (256 pixels) */
#define PC_CVY 4  /* row pairs */
#define PC_CV_MAX_BANDS 16
#ifdef __CUDACC__
#define PC_CBOUNDS __launch_bounds__(PC_CVX * PC_CVY)
#else
#define PC_CBOUNDS
#endif

struct pc_ckparams {
    const uint8_t *src;
    int src_pitch;
    int w, h;               /* the source (stacked cameras) */
    uint8_t *d0, *d1, *d2;
    int p0, p1, p2;
    int grid;               /* pc_grid_pack(dst); 0 stacked */
    int band_rows, n_bands; /* n_bands >= 1; band b of source row y: min(y / band_rows, n_bands - 1) */
    int m[PC_CV_MAX_BANDS][10]; /* per band: y[3] cb[3] cr[3] y_offset (pc_yuv_coeffs) */
};

/* Host: the parameters of src -> dst (both checked: pc_convert_check).
 * -1 when dst has more bands than the kernel takes. */
static inline int pc_ckparams_set(pc_ckparams *k, const pc_picture *src, const pc_picture *dst)
{
    memset(k, 0, sizeof *k);
    k->src = src->plane[0];
    k->src_pitch = (int)src->pitch[0];
    k->w = src->width;
    k->h = src->height;
    k->d0 = dst->plane[0];
    k->d1 = dst->plane[1];
    k->d2 = dst->plane[2];
    k->p0 = (int)dst->pitch[0];
    k->p1 = (int)dst->pitch[1];
    k->p2 = (int)dst->pitch[2];
    k->grid = pc_grid_pack(dst);
    k->n_bands = dst->bands ? dst->n_bands : 1;
    k->band_rows = dst->bands ? dst->band_rows : 2;
    if (k->n_bands > PC_CV_MAX_BANDS)
        return -1;
    for (int b = 0; b < k->n_bands; b++) {
        pc_yuv_coeffs yc;
        if (dst->bands)
            yc = dst->bands[b];
        else
            pc_yuv_coeffs_get(dst->matrix, dst->range, &yc);
        for (int i = 0; i < 3; i++) {
            k->m[b][i] = yc.y[i];
            k->m[b][3 + i] = yc.cb[i];
            k->m[b][6 + i] = yc.cr[i];
        }
        k->m[b][9] = yc.y_offset;
    }
    return 0;
}

/* Host: what keeps the kernel from these pictures (its 4-byte loads and
 * stores need 4-byte aligned planes and pitches), or NULL; *vec: the
 * source's rows are 16-byte aligned (RGBX32 read 16 bytes at once). */
static inline const char *pc_ckparams_misaligned(const pc_picture *src, const pc_picture *dst, int *vec)
{
    if (((uintptr_t)src->plane[0] | src->pitch[0]) & 3)
        return "the source's plane or pitch is not a multiple of 4 bytes";
    for (int i = 0; i < pc_pixfmt_planes(dst->fmt); i++)
        if (((uintptr_t)dst->plane[i] | dst->pitch[i]) & 3)
            return "a destination plane or pitch is not a multiple of 4 bytes";
    *vec = !(((uintptr_t)src->plane[0] | src->pitch[0]) & 15);
    return NULL;
}

PC_DEV void pc_cv_store16(uint8_t *d, unsigned v)
{
#ifndef __CUDACC__
    pc_emu_check_align(d, 2);
#endif
    *(uint16_t *)d = (uint16_t)v;
}

PC_DEV void pc_cv_store32(uint8_t *d, unsigned v)
{
#ifndef __CUDACC__
    pc_emu_check_align(d, 4);
#endif
    *(uint32_t *)d = v;
}

PC_DEV int pc_cv_clamp8(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

/* One row's pixels x .. x+3 (n = 4) or x .. x+1 (n = 2) as R, G, B. */
template <int BPP, bool VEC>
PC_DEV void pc_cv_load(const uint8_t *r, int n, int v[4][3])
{
    uint32_t u[4];
    if (BPP == 4) {
        if (VEC && n == 4) {
            const uint4 q = *(const uint4 *)r;
            u[0] = q.x, u[1] = q.y, u[2] = q.z, u[3] = q.w;
        } else {
            PC_UNROLL
            for (int i = 0; i < 4; i++)
                u[i] = i < n ? ((const uint32_t *)r)[i] : 0u;
        }
        PC_UNROLL
        for (int i = 0; i < 4; i++) {
            v[i][0] = (int)(u[i] & 255u);
            v[i][1] = (int)(u[i] >> 8 & 255u);
            v[i][2] = (int)(u[i] >> 16 & 255u);
        }
    } else if (n == 4) { /* 12 bytes, 4-byte aligned (x is a multiple of 4) */
        const uint32_t a = ((const uint32_t *)r)[0], b = ((const uint32_t *)r)[1], c = ((const uint32_t *)r)[2];
        const uint8_t q[12] = {(uint8_t)a, (uint8_t)(a >> 8), (uint8_t)(a >> 16), (uint8_t)(a >> 24),
                               (uint8_t)b, (uint8_t)(b >> 8), (uint8_t)(b >> 16), (uint8_t)(b >> 24),
                               (uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16), (uint8_t)(c >> 24)};
        PC_UNROLL
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++)
                v[i][k] = q[3 * i + k];
    } else {
        PC_UNROLL
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++)
                v[i][k] = i < 2 ? r[3 * i + k] : 0;
    }
}

template <int BPP, int FMT, bool VEC>
PC_KERNEL void PC_CBOUNDS pc_convert_kernel(const __grid_constant__ pc_ckparams p)
{
    const int x = 4 * (int)(blockIdx.x * PC_CVX + threadIdx.x), y = 2 * (int)(blockIdx.y * PC_CVY + threadIdx.y);
    if (x >= p.w || y >= p.h)
        return;
    const int n = x + 2 < p.w ? 4 : 2; /* pixels across: two blocks, or the last one */
    int v[2][4][3];
    const uint8_t *s = p.src + (size_t)y * p.src_pitch + (size_t)BPP * x;
    pc_cv_load<BPP, VEC>(s, n, v[0]);
    pc_cv_load<BPP, VEC>(s + p.src_pitch, n, v[1]);
    int b = y / p.band_rows;
    b = b < p.n_bands - 1 ? b : p.n_bands - 1;
    const int *m = p.m[b];
    unsigned yw[2] = {0u, 0u}, cb[2] = {0u, 0u}, cr[2] = {0u, 0u};
    PC_UNROLL
    for (int k = 0; k < 2; k++) { /* the blocks */
        if (2 * k >= n)
            continue;
        int sr = 0, sg = 0, sb = 0;
        PC_UNROLL
        for (int j = 0; j < 2; j++)
            PC_UNROLL
            for (int i = 0; i < 2; i++) {
                const int *q = v[j][2 * k + i];
                const unsigned Y = (unsigned)pc_cv_clamp8((m[0] * q[0] + m[1] * q[1] + m[2] * q[2] + m[9]) >> 16);
                yw[j] |= Y << (8 * (2 * k + i));
                sr += q[0];
                sg += q[1];
                sb += q[2];
            }
        const int coff = (128 << 18) + (1 << 17);
        cb[k] = (unsigned)pc_cv_clamp8((m[3] * sr + m[4] * sg + m[5] * sb + coff) >> 18);
        cr[k] = (unsigned)pc_cv_clamp8((m[6] * sr + m[7] * sg + m[8] * sb + coff) >> 18);
    }
    const int g0 = p.grid ? pc_grid_offset(p.grid, p.w, FMT, 0, y, p.p0) : 0;
    uint8_t *yt = p.d0 + (size_t)y * p.p0 + g0 + x;
    const int g1 = p.grid ? pc_grid_offset(p.grid, p.w, FMT, 1, y, p.p1) : 0;
    if (n == 4) {
        pc_cv_store32(yt, yw[0]);
        pc_cv_store32(yt + p.p0, yw[1]);
    } else {
        pc_cv_store16(yt, yw[0]);
        pc_cv_store16(yt + p.p0, yw[1]);
    }
    if (FMT == PC_FMT_NV12) {
        uint8_t *c = p.d1 + (size_t)(y >> 1) * p.p1 + g1 + x;
        if (n == 4)
            pc_cv_store32(c, cb[0] | cr[0] << 8 | cb[1] << 16 | cr[1] << 24);
        else
            pc_cv_store16(c, cb[0] | cr[0] << 8);
    } else {
        const int g2 = p.grid ? pc_grid_offset(p.grid, p.w, FMT, 2, y, p.p2) : 0;
        uint8_t *c1 = p.d1 + (size_t)(y >> 1) * p.p1 + g1 + (x >> 1);
        uint8_t *c2 = p.d2 + (size_t)(y >> 1) * p.p2 + g2 + (x >> 1);
        if (n == 4) {
            pc_cv_store16(c1, cb[0] | cb[1] << 8);
            pc_cv_store16(c2, cr[0] | cr[1] << 8);
        } else {
            *c1 = (uint8_t)cb[0];
            *c2 = (uint8_t)cr[0];
        }
    }
}

#endif
