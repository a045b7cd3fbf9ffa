/* test_convert.c - the unstitched cameras as YUV from their RGB
 * (kernels/convert.h): when the demosaic writes RGB for the renderer, the
 * recorded YUV picture of the cameras is converted from it, and must hold
 * exactly the bytes the demosaic's own final pass would have written.
 *
 *  - For every algorithm (MLRI included): the C reference demosaic into
 *    NV12/I420 (BT.709 limited, BT.601 full), stacked and as a grid of the
 *    cameras, with and without per-camera colour matrices (bands, some
 *    pushing Y' and chroma past their ranges) == the reference demosaic
 *    into RGB24, then pc_rgb_to_yuv into the same picture, byte for byte.
 *  - The implementations against pc_rgb_to_yuv: the CPU backend's threaded
 *    pc_cpu_convert and the CUDA kernel run by the host emulation, from
 *    RGB24 and RGBX32 (16-byte aligned rows, and not), stacked, grid,
 *    bands, and a width of 2 mod 4 (the kernel's single-block edge).
 *  - The backend op in the daemon's order: raw frames demosaiced into RGB
 *    by the backend, pc_backend_convert into a YUV picture of the backend
 *    (stacked, grid, bands) == the backend's own demosaic into that YUV
 *    picture and == pc_rgb_to_yuv of the downloaded RGB (CPU always, CUDA
 *    where a device is, else a skip saying so).
 *  - Bad pictures: clear errors.
 */
#include "backend.h"
#include "backend_test_util.h"
#include "colour.h"
#include "convert.h"
#include "cuda_emu_ops.h"
#include "debayer_test_util.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 96, T = 40, NCAM = 4, H = T * NCAM, COLS = 2 };

/* One output configuration. */
typedef struct cfg {
    const char *name;
    pc_pixfmt fmt;
    pc_matrix m;
    pc_range r;
    int grid, bands;
} cfg;

static const cfg cfgs[] = {
    {"nv12 bt709 limited", PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, 0, 0},
    {"i420 bt601 full", PC_FMT_I420, PC_MATRIX_BT601, PC_RANGE_FULL, 0, 0},
    {"nv12 colour bands", PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, 0, 1},
    {"nv12 grid", PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_FULL, 1, 0},
    {"i420 grid + bands", PC_FMT_I420, PC_MATRIX_BT709, PC_RANGE_LIMITED, 1, 1},
};
#define NCFG (int)(sizeof cfgs / sizeof cfgs[0])

static pc_yuv_coeffs bands[NCAM];

/* Per-camera colour matrices folded into the conversion (docs/colour.md):
 * the identity, a strong saturation (Y' and chroma leave their ranges:
 * the clamps), a channel swap, a mild one. */
static void make_bands(void)
{
    static const double ccms[NCAM][9] = {
        {1, 0, 0, 0, 1, 0, 0, 0, 1},
        {2.5, -1, -0.5, -0.8, 2.6, -0.8, -0.5, -1, 2.5},
        {0, 0, 1, 0, 1, 0, 1, 0, 0},
        {0.9, 0.1, 0, 0, 1, 0, 0, 0.2, 0.8},
    };
    char err[256] = "";
    for (int c = 0; c < NCAM; c++)
        pc_yuv_coeffs_ccm(PC_MATRIX_BT709, PC_RANGE_LIMITED, ccms[c], &bands[c], err, sizeof err);
}

/* A YUV picture of the frame (w x H) for cfg: *mem the allocation (a
 * stacked picture, to free), *pic what the conversion writes and the
 * checks compare (a grid of the cameras over the same memory, bands). */
static void yuv_alloc(const cfg *c, int w, pc_picture *mem, pc_picture *pic)
{
    tu_pic_alloc_dev(mem, c->fmt, c->m, c->r, w, H, 8);
    tu_pic_fill(mem, 0x5A);
    *pic = *mem;
    if (c->grid)
        pc_picture_as_grid(pic, COLS, T);
    if (c->bands) {
        pic->bands = bands;
        pic->n_bands = NCAM;
        pic->band_rows = T;
    }
}

static void check_demosaic_equals_convert(void)
{
    char err[256] = "";
    uint8_t *rgb = malloc((size_t)W * H * 3), *raw = malloc((size_t)W * H);
    tu_synth(rgb, W, H, 7);
    pc_mosaic_from_rgb(rgb, (size_t)W * 3, W, H, PC_CFA_GRBG, raw, W, err, sizeof err);
    const pc_bayer bay = {raw, W, W, H, PC_CFA_GRBG, 0};
    for (int a = 0; a < pc_algo_count(); a++) {
        const pc_algo_desc *d = pc_algo_get((pc_algo_id)a);
        pc_picture drgb;
        tu_pic_alloc(&drgb, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, W, H, 4);
        int rc = pc_ref_debayer(d->id, &bay, &drgb, err, sizeof err);
        int bad = 0;
        for (int k = 0; !rc && k < NCFG; k++) {
            pc_picture ma, pa, mb, pb;
            yuv_alloc(&cfgs[k], W, &ma, &pa);
            yuv_alloc(&cfgs[k], W, &mb, &pb);
            rc = pc_ref_debayer(d->id, &bay, &pa, err, sizeof err);
            if (!rc)
                rc = pc_rgb_to_yuv(drgb.plane[0], drgb.pitch[0], &pb, err, sizeof err);
            int md = 0;
            long nd = rc ? -1 : tu_compare(&pa, &pb, &md);
            if (nd) {
                tap_diag("%s, %s: %ld samples differ (max %d) %s", d->name, cfgs[k].name, nd, md, rc ? err : "");
                bad++;
            }
            tu_pic_free(&ma);
            tu_pic_free(&mb);
        }
        TAP_CHECK(rc == 0 && bad == 0, "%s: the demosaic into YUV == the demosaic into RGB24 then pc_rgb_to_yuv, "
                  "byte for byte (nv12/i420, stacked and grid, with and without colour bands)%s%s", d->name,
                  rc ? ": " : "", rc ? err : "");
        tu_pic_free(&drgb);
    }
    free(rgb);
    free(raw);
}

/* An RGBX32 copy of an RGB24 picture (X = 0x77), rows at pitch. */
static void to_rgbx(const pc_picture *rgb, pc_picture *x, size_t pitch)
{
    memset(x, 0, sizeof *x);
    x->fmt = PC_FMT_RGBX32;
    x->width = rgb->width;
    x->height = rgb->height;
    x->pitch[0] = pitch;
    x->plane[0] = aligned_alloc(64, (pitch * rgb->height + 63) & ~(size_t)63);
    for (int y = 0; y < rgb->height; y++)
        for (int i = 0; i < rgb->width; i++) {
            memcpy(x->plane[0] + (size_t)y * pitch + 4 * i, rgb->plane[0] + (size_t)y * rgb->pitch[0] + 3 * i, 3);
            x->plane[0][(size_t)y * pitch + 4 * i + 3] = 0x77;
        }
}

static void check_implementations(pc_cpu *cpu)
{
    char err[256] = "";
    static const int widths[] = {W, 90}; /* 90: 2 mod 4, the kernel's last thread takes one block */
    for (int wi = 0; wi < 2; wi++) {
        const int w = widths[wi];
        uint8_t *rgb = malloc((size_t)w * H * 3);
        tu_synth(rgb, w, H, 11 + wi);
        pc_picture src[3];
        tu_pic_alloc_dev(&src[0], PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, H, 4);
        for (int y = 0; y < H; y++)
            memcpy(src[0].plane[0] + (size_t)y * src[0].pitch[0], rgb + (size_t)y * w * 3, (size_t)w * 3);
        to_rgbx(&src[0], &src[1], ((size_t)4 * w + 63) & ~(size_t)63); /* 16-byte aligned rows */
        to_rgbx(&src[0], &src[2], (size_t)4 * w + 4);                   /* 4-byte aligned only */
        int cpu_bad = 0, emu_bad = 0, runs = 0;
        for (int k = 0; k < NCFG; k++) {
            if (cfgs[k].grid && w % 4)
                continue; /* a grid's cameras are multiples of 4 wide (PC_GRID_TILE_ALIGN) */
            pc_picture mr, pr;
            yuv_alloc(&cfgs[k], w, &mr, &pr);
            pc_rgb_to_yuv(src[0].plane[0], src[0].pitch[0], &pr, err, sizeof err);
            for (int s = 0; s < 3; s++) {
                pc_picture mo, po;
                int md = 0;
                yuv_alloc(&cfgs[k], w, &mo, &po);
                int rc = pc_cpu_convert(cpu, &src[s], &po, err, sizeof err);
                long nd = rc ? -1 : tu_compare(&pr, &po, &md);
                if (nd) {
                    tap_diag("width %d, %s, source %d: CPU: %ld samples differ %s", w, cfgs[k].name, s, nd,
                             rc ? err : "");
                    cpu_bad++;
                }
                tu_pic_fill(&mo, 0x3C);
                rc = pc_emu_convert(&src[s], &po, err, sizeof err);
                nd = rc ? -1 : tu_compare(&pr, &po, &md);
                if (nd) {
                    tap_diag("width %d, %s, source %d: emulated kernel: %ld samples differ %s", w, cfgs[k].name, s,
                             nd, rc ? err : "");
                    emu_bad++;
                }
                tu_pic_free(&mo);
                runs++;
            }
            tu_pic_free(&mr);
        }
        TAP_CHECK(cpu_bad == 0, "width %d: pc_cpu_convert == pc_rgb_to_yuv, byte for byte (%d runs: rgb24, rgbx32; "
                  "nv12/i420, bands%s)", w, runs, w % 4 ? "" : ", grid");
        TAP_CHECK(emu_bad == 0, "width %d: the emulated CUDA kernel == pc_rgb_to_yuv, byte for byte (%d runs: rgb24, "
                  "rgbx32 with 16-byte and 4-byte aligned rows; nv12/i420, bands%s)", w, runs, w % 4 ? "" : ", grid");
        for (int s = 0; s < 3; s++)
            s ? free(src[s].plane[0]) : tu_pic_free(&src[s]);
        free(rgb);
    }
}

/* --- the backend op ------------------------------------------------------ */

/* Copies a picture of the backend into a host picture of the same
 * geometry (a grid into a grid), then waits. */
static int fetch(pc_backend *b, int slot, const pc_picture *dev, const pc_picture *host, char *err, size_t errlen)
{
    int rc = pc_backend_download(b, slot, dev, host, err, errlen);
    return rc ? rc : pc_backend_wait(b, slot, err, errlen);
}

static void check_backend(const pc_backend_ops *ops)
{
    char err[256] = "";
    if (!tu_backend_usable(ops))
        return;
    pc_backend *b = NULL;
    pc_backend_config cfgb = {.width = W, .height = H, .slots = 2, .device = 0, .threads = 2};
    int rc = pc_backend_open(&b, ops, &cfgb, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "backend %s: open (%s)", ops->name, rc ? err : "ok"))
        return;
    uint8_t *rgb = malloc((size_t)W * H * 3), *raw = malloc((size_t)W * H);
    tu_synth(rgb, W, H, 5);
    pc_mosaic_from_rgb(rgb, (size_t)W * 3, W, H, PC_CFA_RGGB, raw, W, err, sizeof err);
    pc_picture dem, hdem;
    tu_pic_alloc(&hdem, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, W, H, 0);
    pc_debayer_config dc = {PC_ALGO_EDGE, PC_VARIANT_AUTO, PC_CFA_RGGB, PC_FMT_RGB24, PC_MATRIX_BT709,
                            PC_RANGE_LIMITED};
    int ok = pc_backend_set_algo(b, &dc, err, sizeof err) == 0 &&
             pc_backend_picture_alloc(b, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, W, H, &dem, err, sizeof err) == 0 &&
             pc_backend_upload(b, 0, 0, raw, W, H, err, sizeof err) == 0 &&
             pc_backend_debayer(b, 0, &dem, err, sizeof err) == 0 && fetch(b, 0, &dem, &hdem, err, sizeof err) == 0;
    TAP_CHECK(ok, "backend %s: raw frames demosaiced into RGB24 (%s)", ops->name, ok ? "ok" : err);
    int bad_ref = 0, bad_dem = 0, runs = 0;
    for (int k = 0; ok && k < NCFG; k++) {
        const cfg *c = &cfgs[k];
        pc_picture dmem, dpic, dmem2, dpic2, href, hrefp, hout, houtp, hdir, hdirp;
        /* the backend's YUV pictures: one converted, one demosaiced into directly */
        if (pc_backend_picture_alloc(b, c->fmt, c->m, c->r, W, H, &dmem, err, sizeof err) ||
            pc_backend_picture_alloc(b, c->fmt, c->m, c->r, W, H, &dmem2, err, sizeof err)) {
            tap_diag("backend %s: %s", ops->name, err);
            bad_ref++;
            break;
        }
        dpic = dmem;
        dpic2 = dmem2;
        if (c->grid) {
            pc_picture_as_grid(&dpic, COLS, T);
            pc_picture_as_grid(&dpic2, COLS, T);
        }
        if (c->bands) {
            dpic.bands = dpic2.bands = bands;
            dpic.n_bands = dpic2.n_bands = NCAM;
            dpic.band_rows = dpic2.band_rows = T;
        }
        yuv_alloc(c, W, &href, &hrefp);
        yuv_alloc(c, W, &hout, &houtp);
        yuv_alloc(c, W, &hdir, &hdirp);
        pc_rgb_to_yuv(hdem.plane[0], hdem.pitch[0], &hrefp, err, sizeof err);
        pc_debayer_config dy = dc;
        dy.fmt = c->fmt;
        dy.matrix = c->m;
        dy.range = c->r;
        int md = 0;
        rc = pc_backend_convert(b, 1, &dem, &dpic, err, sizeof err);
        if (!rc)
            rc = fetch(b, 1, &dpic, &houtp, err, sizeof err);
        long nd = rc ? -1 : tu_compare(&hrefp, &houtp, &md);
        if (nd) {
            tap_diag("backend %s, %s: convert: %ld samples differ from pc_rgb_to_yuv %s", ops->name, c->name, nd,
                     rc ? err : "");
            bad_ref++;
        }
        /* the backend's own demosaic into this YUV picture, from the same raw frame */
        rc = pc_backend_set_algo(b, &dy, err, sizeof err);
        if (!rc)
            rc = pc_backend_upload(b, 0, 0, raw, W, H, err, sizeof err);
        if (!rc)
            rc = pc_backend_debayer(b, 0, &dpic2, err, sizeof err);
        if (!rc)
            rc = fetch(b, 0, &dpic2, &hdirp, err, sizeof err);
        nd = rc ? -1 : tu_compare(&hdirp, &houtp, &md);
        if (nd) {
            tap_diag("backend %s, %s: the demosaic into it differs from convert in %ld samples %s", ops->name, c->name,
                     nd, rc ? err : "");
            bad_dem++;
        }
        pc_backend_set_algo(b, &dc, err, sizeof err);
        pc_backend_picture_free(b, &dmem);
        pc_backend_picture_free(b, &dmem2);
        tu_pic_free(&href);
        tu_pic_free(&hout);
        tu_pic_free(&hdir);
        runs++;
    }
    TAP_CHECK(ok && bad_ref == 0 && runs == NCFG, "backend %s: pc_backend_convert of its RGB24 demosaic == "
              "pc_rgb_to_yuv of the download (%d pictures: nv12/i420, stacked, grid, colour bands)", ops->name, runs);
    TAP_CHECK(ok && bad_dem == 0 && runs == NCFG, "backend %s: ... == its own demosaic into the same YUV picture",
              ops->name);
    if (ok) {
        pc_picture yuv;
        if (pc_backend_picture_alloc(b, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, W, H, &yuv, err, sizeof err) == 0) {
            rc = pc_backend_convert(b, 0, &dem, &dem, err, sizeof err);
            TAP_CHECK(rc == PC_EINVAL && strstr(err, "nv12 or i420"), "backend %s: an RGB destination is refused: %s",
                      ops->name, err);
            pc_picture half = yuv;
            half.height = H / 2;
            rc = pc_backend_convert(b, 0, &dem, &half, err, sizeof err);
            TAP_CHECK(rc == PC_EINVAL && strstr(err, "96x80") && strstr(err, "96x160"),
                      "backend %s: a destination of another size is refused: %s", ops->name, err);
            rc = pc_backend_convert(b, 0, &yuv, &yuv, err, sizeof err);
            TAP_CHECK(rc == PC_EINVAL && strstr(err, "rgb24 or rgbx32"), "backend %s: a YUV source is refused: %s",
                      ops->name, err);
            rc = pc_backend_convert(b, 5, &dem, &yuv, err, sizeof err);
            TAP_CHECK(rc == PC_EINVAL && strstr(err, "slot 5"), "backend %s: a slot out of range is refused: %s",
                      ops->name, err);
            pc_backend_picture_free(b, &yuv);
        }
        pc_backend_picture_free(b, &dem);
    }
    pc_backend_close(b);
    tu_pic_free(&hdem);
    free(rgb);
    free(raw);
}

int main(void)
{
    char err[256] = "";
    pc_cpu *cpu = NULL;
    if (pc_cpu_open(&cpu, 3, 16, 16, err, sizeof err)) {
        printf("Bail out! pc_cpu_open: %s\n", err);
        return 1;
    }
    make_bands();
    check_demosaic_equals_convert();
    check_implementations(cpu);
    check_backend(&pc_backend_cpu);
    check_backend(&pc_backend_cuda);
    pc_cpu_close(cpu);
    return tap_done();
}
