/* test_cuda_emu_net.c - the learned demosaic's CUDA kernels (cuda_net.cuh,
 * run on the CPU through cuda_emu.h: the same source, fp16 and mma.sync
 * emulated exactly) against its C reference (net_reference.c) with the
 * published weights, on two stacked cameras of 72x40:
 *  - every CFA phase, each with another of CONV's tiles (the device picks
 *    one per GPU: 8 warps / 2 buffers on Hopper, 4/2 on A100, 2/1 on
 *    sm_86/89, 4/1 the two-CTA alternative): RGB within 1 code value of
 *    the reference on at least 99.9 % of the samples (the GPU rule,
 *    docs/net.md: fp16 activations and weights), the largest difference
 *    and the counts reported;
 *  - every output format from the same network output: RGBX32 the RGB24
 *    bytes with X = 255, NV12 and I420 (stacked with per-camera colour
 *    bands, and a grid) byte for byte what pc_rgb_to_yuv makes of the
 *    emulated RGB24, i.e. the final pass's writer is exact;
 *  - the cameras do not see each other: camera 1 demosaiced alone is the
 *    stacked frame's camera 1, byte for byte;
 *  - every ldmatrix free of shared-memory bank conflicts (the swizzle);
 *  - weights the kernels cannot take are refused with the reason.
 * The device runs the same code (tests/test_cuda.c, tools/gpu-net). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "cuda_emu_api.h"
#include "debayer.h"
#include "debayer_cuda.h"
#include "debayer_test_util.h"
#include "net.h"
#include "tap.h"

enum { W = 72, CH = 40, NCAM = 2, H = CH * NCAM };

/* The RGB of every pixel of p (RGBX32) against rgb (RGB24), and X == 255. */
static long rgbx_vs_rgb(const pc_picture *p, const pc_picture *rgb)
{
    long n = 0;
    for (int y = 0; y < p->height; y++)
        for (int x = 0; x < p->width; x++) {
            const uint8_t *a = p->plane[0] + (size_t)y * p->pitch[0] + 4 * (size_t)x;
            const uint8_t *b = rgb->plane[0] + (size_t)y * rgb->pitch[0] + 3 * (size_t)x;
            n += a[0] != b[0] || a[1] != b[1] || a[2] != b[2] || a[3] != 255;
        }
    return n;
}

static void phase(const pc_net *net, const uint8_t *rgb, pc_cfa cfa, int wg, int wr, int nbuf, pc_picture *keep_rgb)
{
    char err[512] = "";
    uint8_t *bay = malloc((size_t)W * H);
    tu_mosaic(rgb, W, H, bay, W, H, cfa);
    pc_bayer src = {bay, (size_t)W, W, H, cfa, CH};
    char cfan[4][40];
    static const char *const cfa_names[4] = {"RGGB", "GRBG", "GBRG", "BGGR"};
    for (int i = 0; i < 4; i++)
        snprintf(cfan[i], sizeof cfan[i], "%s, CONV %s %dx%d", cfa_names[i], wg ? "wgmma" : "mma.sync", wr, nbuf);
    pc_picture ref, out[6], want;
    tu_pic_alloc(&ref, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, W, H, 3);
    int rc = pc_net_ref(net, &src, &ref, err, sizeof err);
    TAP_CHECK(rc == 0, "%s: the C reference: %s", cfan[cfa], rc ? err : "ok");
    /* RGB24, RGBX32, NV12 and I420 stacked (bands per camera on one
     * phase), NV12 and I420 as a grid of the two cameras */
    pc_yuv_coeffs bands[NCAM];
    pc_yuv_coeffs_get(PC_MATRIX_BT709, PC_RANGE_FULL, &bands[0]);
    pc_yuv_coeffs_get(PC_MATRIX_BT601, PC_RANGE_LIMITED, &bands[1]);
    const pc_pixfmt fmts[6] = {PC_FMT_RGB24, PC_FMT_RGBX32, PC_FMT_NV12, PC_FMT_I420, PC_FMT_NV12, PC_FMT_I420};
    const pc_picture *dst[6];
    for (int i = 0; i < 6; i++) {
        tu_pic_alloc_dev(&out[i], fmts[i], PC_MATRIX_BT709, PC_RANGE_LIMITED, W, H, 4);
        tu_pic_fill(&out[i], 0xA7);
        if (i >= 4)
            pc_picture_as_grid(&out[i], 2, CH);
        if (i >= 2 && (cfa & 1)) {
            out[i].bands = bands;
            out[i].band_rows = CH;
            out[i].n_bands = NCAM;
        }
        dst[i] = &out[i];
    }
    pc_emu_counts cnt;
    pc_emu_counts_get(&cnt, 1);
    rc = rc ? rc : pc_emu_net(net, &src, CH, dst, 6, wg, wr, nbuf, err, sizeof err);
    pc_emu_counts_get(&cnt, 1);
    TAP_CHECK(rc == 0, "%s: the emulated kernels ran: %s", cfan[cfa], rc ? err : "ok");
    int md = 0;
    const long over = rc ? -1 : tu_count_over(&out[0], &ref, 1, &md), nd = rc ? -1 : tu_compare(&out[0], &ref, &md);
    const long ns = tu_pic_samples(&ref);
    TAP_CHECK(rc == 0 && over * 1000 <= ns,
              "%s: RGB within 1 code value of the reference on >= 99.9 %% of samples: %ld of %ld further (max "
              "difference %d; %ld differ, %.2f %%)",
              cfan[cfa], over, ns, md, nd, 100.0 * nd / ns);
    TAP_CHECK(rc == 0 && rgbx_vs_rgb(&out[1], &out[0]) == 0, "%s: RGBX32 is the RGB24 output with X = 255",
              cfan[cfa]);
    for (int i = 2; i < 6 && !rc; i++) {
        tu_pic_alloc(&want, fmts[i], PC_MATRIX_BT709, PC_RANGE_LIMITED, W, H, 1);
        if (i >= 4)
            pc_picture_as_grid(&want, 2, CH);
        want.bands = out[i].bands;
        want.band_rows = out[i].band_rows;
        want.n_bands = out[i].n_bands;
        int r2 = pc_rgb_to_yuv(out[0].plane[0], out[0].pitch[0], &want, err, sizeof err);
        const long d = r2 ? -1 : tu_compare(&out[i], &want, &md);
        TAP_CHECK(d == 0, "%s: %s%s%s is the final pass's conversion of the emulated RGB24 (%ld samples differ%s%s)",
                  cfan[cfa], pc_pixfmt_name(fmts[i]), i >= 4 ? " grid" : " stacked",
                  out[i].bands ? " with per-camera bands" : "", d, r2 ? ": " : "", r2 ? err : "");
        tu_pic_free(&want);
    }
    TAP_CHECK(rc == 0 && cnt.ldsm_phases > 0 && cnt.ldsm_wavefronts == cnt.ldsm_phases && (cnt.wgmma > 0) == (wg != 0),
              "%s: %llu ldmatrix phases took %llu shared-memory wavefronts (no bank conflicts); %llu mma.sync, %llu "
              "wgmma (per warp)", cfan[cfa], cnt.ldsm_phases, cnt.ldsm_wavefronts, cnt.mma, cnt.wgmma);
    if (keep_rgb)
        *keep_rgb = out[0];
    else
        tu_pic_free(&out[0]);
    for (int i = 1; i < 6; i++)
        tu_pic_free(&out[i]);
    tu_pic_free(&ref);
    free(bay);
}

int main(int argc, char **argv)
{
    char err[512] = "";
    pc_net *net = NULL;
    const char *path = argc > 1 ? argv[1] : pc_net_default_path();
    int rc = pc_net_load(&net, path, err, sizeof err);
    TAP_CHECK(rc == 0, "weights %s: %s", path, rc ? err : "loaded");
    if (rc)
        return tap_done();
    uint8_t *rgb = malloc((size_t)W * H * 3);
    tu_synth(rgb, W, H, 77);
    static const int tiles[4][2] = {{8, 2}, {4, 2}, {2, 1}, {4, 1}};
    pc_picture stacked;
    for (int c = 0; c < 4; c++)
        phase(net, rgb, (pc_cfa)c, 0, tiles[c][0], tiles[c][1], c == 0 ? &stacked : NULL);
    /* the wgmma kernels (Hopper's), both on every phase */
    for (int c = 0; c < 4; c++)
        phase(net, rgb, (pc_cfa)c, 1, c & 1 ? 4 : 8, c & 1 ? 1 : 2, NULL);

    /* camera 1 alone (the whole frame one image) == the stacked frame's */
    uint8_t *bay = malloc((size_t)W * H);
    tu_mosaic(rgb, W, H, bay, W, H, PC_CFA_RGGB);
    pc_bayer one = {bay + (size_t)W * CH, (size_t)W, W, CH, PC_CFA_RGGB, 0};
    pc_picture alone;
    tu_pic_alloc_dev(&alone, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, W, CH, 4);
    const pc_picture *d1[1] = {&alone};
    rc = pc_emu_net(net, &one, 0, d1, 1, 0, 8, 2, err, sizeof err);
    long nd = 0;
    for (int y = 0; y < CH && !rc; y++)
        nd += memcmp(alone.plane[0] + (size_t)y * alone.pitch[0],
                     stacked.plane[0] + (size_t)(CH + y) * stacked.pitch[0], 3 * (size_t)W) != 0;
    TAP_CHECK(rc == 0 && nd == 0, "camera 1 alone is the stacked frame's camera 1 (%ld rows differ%s%s)", nd,
              rc ? "; " : "", rc ? err : "");
    tu_pic_free(&alone);
    tu_pic_free(&stacked);

    /* a model the kernels cannot take: its width */
    pc_net narrow = *net;
    narrow.width = 32;
    pc_picture p;
    tu_pic_alloc_dev(&p, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, W, CH, 4);
    const pc_picture *d2[1] = {&p};
    err[0] = 0;
    rc = pc_emu_net(&narrow, &one, 0, d2, 1, 0, 8, 2, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "width 64"), "a model of width 32 is refused: %s", err);
    tu_pic_free(&p);
    free(bay);
    free(rgb);
    pc_net_free(net);
    return tap_done();
}
