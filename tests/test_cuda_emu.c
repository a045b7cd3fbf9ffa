/* test_cuda_emu.c - the CUDA kernels' own code (cuda_algos.cuh through
 * cuda_emu.h, run on the CPU) against the C reference, pixel for pixel:
 * every algorithm x variant (2px, 4px) x CFA phase, on noise and on a
 * synthetic photograph, at sizes smaller than a tile, wider than a tile,
 * and not multiples of the tile, with several tile heights (the pixels-per-
 * thread knob) and all three output formats. Runs in CI without a GPU; the
 * device itself is checked by test_cuda.c. */
#include <stdio.h>
#include <stdlib.h>

#include "cuda_emu_api.h"
#include "debayer.h"
#include "debayer_test_util.h"
#include "tap.h"

/* Samples in the whole picture (all planes). */
static long pic_samples(const pc_picture *p)
{
    size_t bw[3];
    int rows[3];
    int np = tu_planes(p->fmt, p->width, p->height, bw, rows);
    long n = 0;
    for (int i = 0; i < np; i++)
        n += (long)bw[i] * rows[i];
    return n;
}

/* MLRI's kernels (cuda_mlri.cuh) against its float reference, under the
 * rule the GPU keeps (docs/mlri.md): every output sample within 1 code
 * value, at least 99.99 % identical. The emulation follows the reference
 * operation for operation, so it is expected (and reported) to be exact.
 * Sizes: the smallest the spec allows, one not a multiple of the 8-row
 * tile, one wider than a 128-px tile with a partial last tile, a tall
 * narrow one, one with interior tiles; noise and a synthetic photograph; all four CFA phases; NV12
 * always, RGB24 and I420 on two of them. */
static void mlri_checks(void)
{
    /* 400x40 has tiles far enough from every edge to take the kernels'
     * interior (unmirrored) instances, next to border tiles. */
    static const int sizes[][2] = {{8, 8}, {10, 14}, {134, 22}, {16, 42}, {262, 12}, {400, 40}};
    char err[512];
    long total_diff = 0, total = 0;
    for (int si = 0; si < 6; si++) {
        int w = sizes[si][0], h = sizes[si][1];
        uint8_t *rgb = malloc((size_t)w * h * 3), *bay = malloc((size_t)w * h);
        for (int kind = 0; kind < 2; kind++)
            for (int cfa = 0; cfa < 4; cfa++) {
                if (kind == 0)
                    tu_noise(bay, (size_t)w * h, 3000u + si * 10 + cfa);
                else {
                    tu_synth(rgb, w, h, 11u + si);
                    tu_mosaic(rgb, w, h, bay, w, h, (pc_cfa)cfa);
                }
                pc_bayer src = {bay, (size_t)w, w, h, (pc_cfa)cfa};
                for (int fmt = PC_FMT_RGB24; fmt <= PC_FMT_I420; fmt++) {
                    if (fmt != PC_FMT_NV12 && (kind != 0 || (si != 1 && si != 2)))
                        continue;
                    pc_matrix mat = cfa & 1 ? PC_MATRIX_BT601 : PC_MATRIX_BT709;
                    pc_range range = cfa & 2 ? PC_RANGE_FULL : PC_RANGE_LIMITED;
                    pc_picture ref, out;
                    tu_pic_alloc(&ref, (pc_pixfmt)fmt, mat, range, w, h, 3);
                    tu_pic_alloc(&out, (pc_pixfmt)fmt, mat, range, w, h, 5);
                    tu_pic_fill(&out, 0xA7);
                    int rr = pc_ref_debayer(PC_ALGO_MLRI, &src, &ref, err, sizeof err);
                    int rc = rr ? rr : pc_emu_mlri(&src, &out, err, sizeof err);
                    int md = 0;
                    long nd = rc ? -1 : tu_compare(&ref, &out, &md);
                    long n = pic_samples(&ref);
                    TAP_CHECK(rc == 0 && md <= 1 && nd * 10000 <= n,
                              "emulated mlri %s %s %dx%d %s: %ld of %ld samples differ (max %d)%s%s",
                              pc_cfa_name((pc_cfa)cfa), pc_pixfmt_name((pc_pixfmt)fmt), w, h,
                              kind ? "synthetic photo" : "noise", nd, n, md, rc ? ": " : "", rc ? err : "");
                    total_diff += nd > 0 ? nd : 0;
                    total += n;
                    tu_pic_free(&ref);
                    tu_pic_free(&out);
                }
            }
        free(rgb);
        free(bay);
    }
    tap_diag("mlri emulation: %ld of %ld samples differ from the reference in all", total_diff, total);
}

int main(void)
{
    mlri_checks();
    static const int sizes[][2] = {{8, 8}, {10, 8}, {24, 12}, {134, 22}, {262, 38}};
    static const int ths[] = {4, 12, 64};
    char err[512];
    int n_sizes = (int)(sizeof sizes / sizeof sizes[0]);
    /* An algorithm with its own CUDA implementation has no fused kernel to
     * emulate (test_cuda.c checks it on a device). */
    for (int algo = 0; algo < PC_ALGO_COUNT; algo++)
        if (!pc_emu_supports((pc_algo_id)algo)) {
            char why[128];
            snprintf(why, sizeof why, "%s: own CUDA implementation, not emulated", pc_algo_get(algo)->name);
            tap_skip(why);
        }
    for (int si = 0; si < n_sizes; si++) {
        int w = sizes[si][0], h = sizes[si][1];
        uint8_t *rgb = malloc((size_t)w * h * 3), *bay = malloc((size_t)w * h);
        for (int kind = 0; kind < 2; kind++) {
            for (int cfa = 0; cfa < 4; cfa++) {
                if (kind == 0)
                    tu_noise(bay, (size_t)w * h, 1000u + si * 10 + cfa);
                else {
                    tu_synth(rgb, w, h, 7u + si);
                    tu_mosaic(rgb, w, h, bay, w, h, (pc_cfa)cfa);
                }
                pc_bayer src = {bay, (size_t)w, w, h, (pc_cfa)cfa};
                for (int algo = 0; algo < PC_ALGO_COUNT; algo++) {
                    if (!pc_emu_supports((pc_algo_id)algo))
                        continue; /* own code: mlri_checks() */
                    /* NV12 always; I420 and RGB24 on the noise of two sizes. */
                    for (int fmt = PC_FMT_RGB24; fmt <= PC_FMT_I420; fmt++) {
                        if (fmt != PC_FMT_NV12 && (kind != 0 || (si != 1 && si != 3)))
                            continue;
                        pc_range range = (algo & 1) ? PC_RANGE_FULL : PC_RANGE_LIMITED;
                        pc_matrix mat = (algo & 2) ? PC_MATRIX_BT601 : PC_MATRIX_BT709;
                        pc_picture ref, out;
                        tu_pic_alloc(&ref, (pc_pixfmt)fmt, mat, range, w, h, 3);
                        tu_pic_alloc(&out, (pc_pixfmt)fmt, mat, range, w, h, 5);
                        if (pc_ref_debayer((pc_algo_id)algo, &src, &ref, err, sizeof err)) {
                            TAP_CHECK(0, "reference %s: %s", pc_algo_get(algo)->name, err);
                            continue;
                        }
                        for (int var = PC_VARIANT_2PX; var <= PC_VARIANT_4PX; var++) {
                            int th = ths[(si + cfa + var) % 3];
                            tu_pic_fill(&out, 0xA7); /* poison */
                            int rc = pc_emu_debayer((pc_algo_id)algo, (pc_variant)var, th, &src, &out, err, sizeof err);
                            int md = 0;
                            long nd = rc ? -1 : tu_compare(&ref, &out, &md);
                            TAP_CHECK(nd == 0, "emulated %s %s %s %s %dx%d th=%d %s: %ld samples differ (max %d)%s%s",
                                      pc_algo_get(algo)->name, pc_variant_name(var), pc_cfa_name(cfa),
                                      pc_pixfmt_name(fmt), w, h, th, kind ? "synthetic photo" : "noise", nd, md,
                                      rc ? " " : "", rc ? err : "");
                        }
                        tu_pic_free(&ref);
                        tu_pic_free(&out);
                    }
                }
            }
        }
        free(rgb);
        free(bay);
    }
    return tap_done();
}
