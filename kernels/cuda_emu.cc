/* cuda_emu.cc - runs the real CUDA kernel code (cuda_algos.cuh,
 * cuda_kernel.cuh) on the CPU through cuda_emu.h, for the emulation test
 * (tests/test_cuda_emu.c): the kernels' tiling, halo mirroring, phase
 * normalisation, both final-pass variants and all output formats are
 * checked against the C reference in CI, where there is no GPU. */
#include "cuda_emu.h"

#include "cuda_algos.cuh"
#include "cuda_colour.cuh"
#include "cuda_emu_api.h"
#include "cuda_mlri.cuh"
#include "debayer_cuda.h" /* pc_gpu_dst_align: the device's contract */

#include <stdio.h>

template <class A, int VAR>
static void kernel_of(int fmt, const pc_kparams &kp)
{
    constexpr int G = PC_KFMT_GRID;
    if (fmt == G + PC_FMT_NV12) pc_debayer_kernel<A, VAR, G + PC_FMT_NV12>(kp);
    else if (fmt == G + PC_FMT_I420) pc_debayer_kernel<A, VAR, G + PC_FMT_I420>(kp);
    else if (fmt == G + PC_FMT_NV12 + PC_KFMT_COL) pc_debayer_kernel<A, VAR, G + PC_FMT_NV12 + PC_KFMT_COL>(kp);
    else if (fmt == G + PC_FMT_I420 + PC_KFMT_COL) pc_debayer_kernel<A, VAR, G + PC_FMT_I420 + PC_KFMT_COL>(kp);
    else if (fmt == G + PC_FMT_RGB24) pc_debayer_kernel<A, VAR, G + PC_FMT_RGB24>(kp);
    else if (fmt == PC_FMT_NV12) pc_debayer_kernel<A, VAR, PC_FMT_NV12>(kp);
    else if (fmt == PC_FMT_I420) pc_debayer_kernel<A, VAR, PC_FMT_I420>(kp);
    else if (fmt == PC_FMT_NV12 + PC_KFMT_COL) pc_debayer_kernel<A, VAR, PC_FMT_NV12 + PC_KFMT_COL>(kp);
    else if (fmt == PC_FMT_I420 + PC_KFMT_COL) pc_debayer_kernel<A, VAR, PC_FMT_I420 + PC_KFMT_COL>(kp);
    else if (fmt == PC_FMT_RGBX32) pc_debayer_kernel<A, VAR, PC_FMT_RGBX32>(kp);
    else pc_debayer_kernel<A, VAR, PC_FMT_RGB24>(kp);
}

/* var: PC_VARIANT_2PX/4PX; fmt: pc_pixfmt. */
template <class A>
static int run(int var, int fmt, int th, const pc_kparams &kp, int W, int H)
{
    /* A small persistent grid (like the device's one wave of CTAs) so that
     * CTAs walk several tiles and the prefetch path is exercised. */
    int ntiles = ((W + PC_TW - 1) / PC_TW) * ((H + th - 1) / th);
    dim3 grid(ntiles < 3 ? ntiles : 3);
    const bool v4 = var == PC_VARIANT_4PX;
    size_t smem = v4 ? pc_kernel_smem<A, PC_VARIANT_4PX>(th) : pc_kernel_smem<A, PC_VARIANT_2PX>(th);
    return pc_emu::launch(grid, dim3(PC_NT), smem, [&]() {
        if (v4)
            kernel_of<A, PC_VARIANT_4PX>(fmt, kp);
        else
            kernel_of<A, PC_VARIANT_2PX>(fmt, kp);
    });
}

/* The emulated kernel of every algorithm, indexed by pc_algo_id (the same
 * fused kernels as the CUDA table in debayer_cuda.cu); run = nullptr for
 * an algorithm with its own CUDA implementation, which is not emulated. */
struct emu_algo {
    pc_algo_id id;
    int (*run)(int var, int fmt, int th, const pc_kparams &kp, int W, int H);
};
static constexpr emu_algo emu_algos[] = {
    {PC_ALGO_BILINEAR, run<pc_alg_bilinear>},
    {PC_ALGO_SMOOTH_HUE, run<pc_alg_smoothhue>},
    {PC_ALGO_HQ_LINEAR, run<pc_alg_hqlinear>},
    {PC_ALGO_EDGE, run<pc_alg_edge>},
    {PC_ALGO_HOMOGENEOUS_EDGE, run<pc_alg_hed>},
    {PC_ALGO_WD_ORIGINAL, run<pc_alg_wdorig>},
    {PC_ALGO_WD_MODIFIED, run<pc_alg_wdmod>},
    {PC_ALGO_MLRI, nullptr}, /* own kernels: pc_emu_mlri */
    {PC_ALGO_NET, nullptr},  /* own kernels (cuda_net.cuh) */
};
static_assert(sizeof emu_algos / sizeof emu_algos[0] == PC_ALGO_COUNT,
              "emu_algos needs one entry per pc_algo_id (debayer.h)");
static constexpr bool emu_algos_in_order()
{
    for (int i = 0; i < PC_ALGO_COUNT; i++)
        if (emu_algos[i].id != i)
            return false;
    return true;
}
static_assert(emu_algos_in_order(), "emu_algos: entries in pc_algo_id order");

extern "C" int pc_emu_supports(pc_algo_id algo)
{
    return (unsigned)algo < PC_ALGO_COUNT && emu_algos[algo].run != nullptr;
}

/* The device's contract for a destination (debayer_cuda.cu, check_pic):
 * the kernels store 2 and 4 bytes at once, 8 and 16 for RGBX32, so plane
 * pointers and pitches are multiples of pc_gpu_dst_align; RGBX32 has no
 * grid kernels. */
static int check_dst(const pc_picture *dst, const char *who, char *err, size_t errlen)
{
    const size_t align = pc_gpu_dst_align(dst->fmt);
    for (int i = 0; i < pc_pixfmt_planes(dst->fmt); i++)
        if (((uintptr_t)dst->plane[i] & (align - 1)) || (dst->pitch[i] & (align - 1))) {
            snprintf(err, errlen, "%s: %s destination plane %d: pointer %p / pitch %zu not multiples of %zu (the "
                     "kernels' widest stores)", who, pc_pixfmt_name(dst->fmt), i, (void *)dst->plane[i],
                     dst->pitch[i], align);
            return PC_EINVAL;
        }
    if (dst->grid_cols > 1 && dst->fmt == PC_FMT_RGBX32) {
        snprintf(err, errlen, "%s: an rgbx32 picture has no grid layout (no grid kernel)", who);
        return PC_EINVAL;
    }
    return 0;
}

extern "C" int pc_emu_debayer(pc_algo_id algo, pc_variant variant, int th, const pc_bayer *src,
                              const pc_picture *dst, char *err, size_t errlen)
{
    const int W = src->width, H = src->height;
    if (th < 4 || (th & 3) || (variant != PC_VARIANT_2PX && variant != PC_VARIANT_4PX)) {
        snprintf(err, errlen, "pc_emu_debayer: bad tile height %d or variant", th);
        return PC_EINVAL;
    }
    if (!pc_emu_supports(algo)) {
        snprintf(err, errlen, "pc_emu_debayer: algorithm %d has no fused kernel to emulate", (int)algo);
        return PC_ENOTSUP;
    }
    /* Like a device input slot: 16-byte aligned, a pitch multiple of 16,
     * and mirrored margins of PC_HX bytes left and up to 16 bytes past the
     * last tile on the right (debayer_cuda.cu, pc_margin_kernel). */
    const int ntx = (W + PC_TW - 1) / PC_TW, mr = ntx * PC_TW + PC_HX - W;
    size_t pitch = ((size_t)PC_HX + W + mr + 15) & ~(size_t)15;
    uint8_t *base = (uint8_t *)aligned_alloc(16, pitch * H);
    if (!base) {
        snprintf(err, errlen, "pc_emu_debayer: out of memory");
        return PC_ENOMEM;
    }
    uint8_t *buf = base + PC_HX;
    for (int y = 0; y < H; y++) {
        for (int x = -PC_HX; x < W + mr; x++)
            buf[(ptrdiff_t)y * (ptrdiff_t)pitch + x] = src->data[(size_t)y * src->pitch + pc_fold(x, W)];
    }
    if (check_dst(dst, "pc_emu_debayer", err, errlen)) {
        free(base);
        return PC_EINVAL;
    }
    pc_yuv_coeffs yc;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &yc);
    pc_kparams kp;
    memset(&kp, 0, sizeof kp);
    kp.src = buf;
    kp.src_pitch = (int)pitch;
    kp.W = W;
    kp.H = H;
    kp.ox = src->cfa == PC_CFA_GRBG || src->cfa == PC_CFA_BGGR;
    kp.oy = src->cfa == PC_CFA_GBRG || src->cfa == PC_CFA_BGGR;
    kp.th = th;
    kp.d0 = dst->plane[0];
    kp.d1 = dst->plane[1];
    kp.d2 = dst->plane[2];
    kp.p0 = (int)dst->pitch[0];
    kp.p1 = (int)dst->pitch[1];
    kp.p2 = (int)dst->pitch[2];
    kp.grid = pc_grid_pack(dst);
    /* the conversion matrices as the device holds them (debayer_cuda.cu,
     * set_bands) */
    const pc_yuv_coeffs *bl = dst->bands ? dst->bands : &yc;
    int nb = dst->bands ? dst->n_bands : 1;
    if (nb > PC_KMAX_BANDS || (dst->bands && (dst->band_rows < 2 || (dst->band_rows & 1)))) {
        free(base);
        snprintf(err, errlen, "pc_emu_debayer: %d bands of %d rows", nb, dst->band_rows);
        return PC_EINVAL;
    }
    int bands[PC_KMAX_BANDS * PC_KBAND] = {0};
    for (int i = 0; i < nb; i++) {
        for (int k = 0; k < 3; k++) {
            bands[PC_KBAND * i + k] = bl[i].y[k];
            bands[PC_KBAND * i + 3 + k] = bl[i].cb[k];
            bands[PC_KBAND * i + 6 + k] = bl[i].cr[k];
        }
        bands[PC_KBAND * i + 9] = bl[i].y_offset;
    }
    kp.bands = bands;
    kp.n_bands = nb;
    kp.band_mul = nb > 1 ? (unsigned)((1ull << 32) / (unsigned)dst->band_rows + 1) : 0u;
    memcpy(kp.m0, bands, sizeof kp.m0);
    memcpy(pc_cbands, bands, sizeof bands); /* the +COL kernels' constant memory */
    /* the kernel the device picks (debayer_cuda.cu, pc_gpu_debayer) */
    const int kfmt = (!pc_pixfmt_is_rgb(dst->fmt) && !pc_bands_plain(bands, nb) ? dst->fmt + PC_KFMT_COL : dst->fmt) +
                     (dst->grid_cols > 1 ? PC_KFMT_GRID : 0);
    int rc = emu_algos[algo].run(variant, kfmt, th, kp, W, H);
    free(base);
    if (rc) {
        snprintf(err, errlen, "pc_emu_debayer: threads of a block disagree on barriers (algorithm %d)", (int)algo);
        return PC_EINVAL;
    }
    return 0;
}

/* MLRI: the same launch sequence as the device (pc_mlri_sequence), each
 * kernel run through the emulator; temporaries poisoned with NaN so a
 * read of anything a kernel did not write shows. */
extern "C" int pc_emu_mlri(const pc_bayer *src, const pc_picture *dst, char *err, size_t errlen)
{
    return pc_emu_mlri_tiles(src, dst, 0, 0, 0, err, errlen);
}

extern "C" int pc_emu_mlri_tiles(const pc_bayer *src, const pc_picture *dst, int dir_rows, int rb_rows, int dir_lean,
                                 char *err, size_t errlen)
{
    if (pc_mlri_tiles_check(dir_rows, rb_rows, dir_lean)) {
        snprintf(err, errlen, "pc_emu_mlri_tiles: rows per CTA %d, %d or lean %d out of range", dir_rows, rb_rows,
                 dir_lean);
        return PC_EINVAL;
    }
    const int W = src->width, H = src->height;
    if (check_dst(dst, "pc_emu_mlri", err, errlen))
        return PC_EINVAL;
    size_t wh = (size_t)W * H;
    std::vector<float> tmp((size_t)PC_MLRI_GPU_PLANES * wh, NAN);
    pc_yuv_coeffs yc;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &yc);
    pc_mlri_kp k;
    memset(&k, 0, sizeof k);
    k.src = src->data;
    k.sp = (int)src->pitch;
    k.W = W;
    k.H = H;
    k.ox = src->cfa == PC_CFA_GRBG || src->cfa == PC_CFA_BGGR;
    k.oy = src->cfa == PC_CFA_GBRG || src->cfa == PC_CFA_BGGR;
    k.wh = wh;
    k.uv = tmp.data();
    k.g = k.uv + 4 * wh;
    k.dth = dir_rows;
    k.bth = rb_rows;
    k.dir_lean = dir_lean;
    if (pc_mlri_set_dst(k, dst, yc)) {
        snprintf(err, errlen, "pc_emu_mlri: %d colour bands (at most %d)", dst->n_bands, PC_KMAX_BANDS);
        return PC_EINVAL;
    }
    auto L = [](int kind, dim3 grid, dim3 block, size_t smem, const pc_mlri_kp &kp) {
        return pc_emu::launch(grid, block, smem, [&]() {
            switch (kind) {
            case PC_MLRI_K_DIR: pc_mlri_dir_body<0>(kp); break;
            case PC_MLRI_K_DIR_LEAN: pc_mlri_dir_body<1>(kp); break;
            case PC_MLRI_K_GREEN: pc_mlri_green_body(kp); break;
            default: pc_mlri_rb_body(kp); break;
            }
        });
    };
    if (pc_mlri_sequence(L, k)) {
        snprintf(err, errlen, "pc_emu_mlri: threads of a block disagree on barriers");
        return PC_EINVAL;
    }
    return 0;
}

extern "C" int pc_emu_colour_cams(const pc_rawfmt *f, const pc_colour_tables *const *t, int ncam, const uint8_t *src,
                                  size_t src_cam, int W, int rows, uint8_t *dst, size_t dst_pitch, int ml, int mr,
                                  char *err, size_t errlen)
{
    if (ncam < 1 || ncam > 16) {
        snprintf(err, errlen, "pc_emu_colour_cams: %d cameras", ncam);
        return PC_EINVAL;
    }
    /* the device table layout: per camera 3 x PC_CLUT_STRIDE */
    std::vector<uint8_t> lut((size_t)ncam * 3 * PC_CLUT_STRIDE, 0);
    for (int k = 0; k < ncam; k++)
        for (int c = 0; c < 3; c++)
            memcpy(lut.data() + ((size_t)k * 3 + c) * PC_CLUT_STRIDE, t[k]->lut[c], (size_t)1 << t[k]->bits);
    pc_cparams p;
    memset(&p, 0, sizeof p);
    p.src = src;
    p.src_cam = (long long)src_cam;
    p.lut = lut.data();
    p.dst = dst;
    p.dst_pitch = (long long)dst_pitch;
    p.W = W;
    p.rows = rows;
    p.packing = (int)f->packing;
    p.bits = f->bits;
    p.cfa = (int)f->cfa;
    p.ml = ml;
    p.mr = mr;
    /* the cameras in reverse order (blocks i * cpc.. take camera ncam-1-i),
     * a few persistent CTAs each, so that each walks several row groups */
    p.ncam = ncam;
    for (int k = 0; k < ncam; k++)
        p.cams |= (unsigned long long)(ncam - 1 - k) << (4 * k);
    p.cpc = rows / PC_CRPI < 2 ? 1 : 2;
    if (pc_emu::launch(dim3(ncam * p.cpc), dim3(PC_CNT), pc_colour_smem(p.bits, W), [&]() { pc_colour_kernel(p); })) {
        snprintf(err, errlen, "pc_emu_colour: barrier mismatch");
        return PC_EINVAL;
    }
    return 0;
}

extern "C" int pc_emu_colour(const pc_rawfmt *f, const pc_colour_tables *t, const uint8_t *src, int W, int rows,
                             uint8_t *dst, size_t dst_pitch, int ml, int mr, char *err, size_t errlen)
{
    return pc_emu_colour_cams(f, &t, 1, src, 0, W, rows, dst, dst_pitch, ml, mr, err, errlen);
}
