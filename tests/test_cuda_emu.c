/* test_cuda_emu.c - the CUDA kernels' own code (cuda_algos.cuh through
 * cuda_emu.h, run on the CPU) against the C reference, pixel for pixel:
 * every algorithm x variant (2px, 4px) x CFA phase, on noise and on a
 * synthetic photograph, at sizes smaller than a tile, wider than a tile,
 * and not multiples of the tile, with several tile heights (the pixels-per-
 * thread knob) and all four output formats (RGBX32: the panorama's
 * texture source). Runs in CI without a GPU; the device itself
 * is checked by test_cuda.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colour.h"
#include "colour_test_util.h"
#include "cuda_emu_api.h"
#include "debayer.h"
#include "debayer_test_util.h"
#include "tap.h"

/* Colour settings on (docs/colour.md): five "cameras" stacked, each a
 * 12-bit packed slab with its own black level, gains, transfer and colour
 * matrix; the slabs go through their tables to 8-bit Bayer, then the C
 * reference, the CPU backend and the emulated kernels demosaic with one
 * conversion matrix per camera (bands of 10 rows, so tiles straddle
 * cameras): all three must agree byte for byte. RGBX32 too (the
 * panorama's input: no matrices, the bands are ignored; no grid). */
static void colour_bands(void)
{
    /* 136: a multiple of 4, as a grid's cameras must be (PC_GRID_TILE_ALIGN) */
    const int w = 136, sh = 10, ncam = 5, h = sh * ncam;
    char err[512] = "";
    uint8_t *rgb = malloc((size_t)w * h * 3), *bay = malloc((size_t)w * h);
    uint16_t *codes = malloc((size_t)w * sh * 2);
    tu_synth(rgb, w, h, 99);
    pc_yuv_coeffs bands[5];
    static pc_colour_tables tabs[5];
    pc_raw_slab slabs[5];
    uint8_t *packs[5];
    static const double ccms[5][9] = {
        {1, 0, 0, 0, 1, 0, 0, 0, 1},
        {1.6, -0.4, -0.2, -0.3, 1.5, -0.2, -0.1, -0.5, 1.6},
        {0, 0, 1, 0, 1, 0, 1, 0, 0},
        {2.5, -1, -0.5, -0.8, 2.6, -0.8, -0.5, -1, 2.5},
        {0.9, 0.1, 0, 0, 1, 0, 0, 0.2, 0.8},
    };
    for (int c = 0; c < ncam; c++) {
        pc_rawfmt f = {12, c & 1 ? PC_PACK_GVSP : PC_PACK_PFNC, PC_CFA_GBRG};
        double cast[3] = {0.5 + 0.1 * c, 1.0, 0.9 - 0.1 * c};
        tc_cast_frame(rgb + (size_t)3 * w * sh * c, w, sh, f.cfa, 12, cast, 64.0 * c, codes);
        uint8_t *packed = malloc(pc_rawfmt_frame_bytes(&f, w, sh));
        tc_pack(&f, codes, (size_t)w * sh, packed);
        pc_colour_cfg cfg;
        pc_colour_cfg_init(&cfg);
        cfg.black_level = 64.0 * c;
        cfg.wb[0] = 1 / cast[0];
        cfg.wb[2] = 1 / cast[2];
        cfg.transfer = (pc_transfer)(c % 3);
        memcpy(cfg.ccm, ccms[c], sizeof cfg.ccm);
        pc_colour_tables *tp = &tabs[c];
        int rc = pc_colour_tables_build(&cfg, 12, tp, err, sizeof err);
        rc = rc ? rc : pc_yuv_coeffs_ccm(PC_MATRIX_BT709, c & 1 ? PC_RANGE_FULL : PC_RANGE_LIMITED, cfg.ccm,
                                         &bands[c], err, sizeof err);
        TAP_CHECK(rc == 0, "camera %d tables and matrix: %s", c, rc ? err : "ok");
        pc_colour_slab(&f, tp, packed, 0, w, sh, bay + (size_t)w * sh * c, (size_t)w);
        packs[c] = packed;
        slabs[c] = (pc_raw_slab){packed, 0, f, tp};
    }
    pc_bayer src = {bay, (size_t)w, w, h, PC_CFA_GBRG, 0};
    pc_cpu *cpu = NULL;
    pc_cpu_open(&cpu, 3, w, h, err, sizeof err);
    for (int algo = 0; algo < PC_ALGO_COUNT; algo++)
        for (int fmt = PC_FMT_NV12; fmt <= PC_FMT_RGBX32; fmt++) {
            /* net: no emulated kernels here; its CPU colour stage is checked
             * in test_backend and test_net (within 1 of its reference) */
            if (algo == PC_ALGO_NET)
                continue;
            pc_picture ref, cp, out;
            tu_pic_alloc(&ref, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 3);
            tu_pic_alloc(&cp, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 1);
            tu_pic_alloc_dev(&out, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 5);
            pc_picture *all[3] = {&ref, &cp, &out};
            for (int i = 0; i < 3; i++) {
                all[i]->bands = bands;
                all[i]->band_rows = sh;
                all[i]->n_bands = ncam;
            }
            int rc = pc_ref_debayer((pc_algo_id)algo, &src, &ref, err, sizeof err);
            tu_pic_fill(&cp, 0xA7);
            rc = rc ? rc : pc_cpu_debayer(cpu, (pc_algo_id)algo, &src, &cp, err, sizeof err);
            int md = 0;
            long ncpu = rc ? -1 : tu_compare(&ref, &cp, &md);
            /* the CPU backend's own colour stage from the raw slabs */
            tu_pic_fill(&cp, 0xA7);
            int rc3 = pc_cpu_debayer_raw(cpu, (pc_algo_id)algo, slabs, ncam, sh, &cp, err, sizeof err);
            long nraw = rc3 ? -1 : tu_compare(&ref, &cp, &md);
            TAP_CHECK(nraw == 0, "CPU backend colour stage from the raw slabs, %s %s: %ld samples differ%s%s",
                      pc_algo_get(algo)->name, pc_pixfmt_name(fmt), nraw, rc3 ? ": " : "", rc3 ? err : "");
            /* the same into a 5x1 grid (encode.layout "grid"): tile c = camera c */
            pc_picture gp;
            tu_pic_alloc_dev(&gp, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 5);
            if (fmt != PC_FMT_RGBX32 && pc_picture_as_grid(&gp, ncam, sh) == 0) {
                gp.bands = bands;
                gp.band_rows = sh;
                gp.n_bands = ncam;
                tu_pic_fill(&gp, 0xA7);
                int rc4 = pc_cpu_debayer_raw(cpu, (pc_algo_id)algo, slabs, ncam, sh, &gp, err, sizeof err);
                long ngrid = rc4 || rc ? -1 : tu_grid_compare(&ref, &gp);
                TAP_CHECK(ngrid == 0, "CPU backend colour stage into a 5x1 grid, %s %s: %ld samples differ%s%s",
                          pc_algo_get(algo)->name, pc_pixfmt_name(fmt), ngrid, rc4 ? ": " : "", rc4 ? err : "");
            } else {
                TAP_CHECK(fmt == PC_FMT_RGBX32, "%s %s: pc_picture_as_grid refuses a 5x1 grid (rgbx32 only)",
                          pc_algo_get(algo)->name, pc_pixfmt_name(fmt));
            }
            tu_pic_free(&gp);
            for (int var = PC_VARIANT_2PX; var <= PC_VARIANT_4PX; var++) {
                int th = var == PC_VARIANT_2PX ? 12 : 64;
                int fused = pc_emu_supports((pc_algo_id)algo);
                if (!fused && var != PC_VARIANT_2PX)
                    continue; /* own code: one kernel sequence, no variants */
                tu_pic_fill(&out, 0xA7);
                int rc2 = rc ? rc
                          : fused ? pc_emu_debayer((pc_algo_id)algo, (pc_variant)var, th, &src, &out, err, sizeof err)
                          : algo == PC_ALGO_MLRI ? pc_emu_mlri(&src, &out, err, sizeof err)
                                                 : PC_ENOTSUP;
                int mdk = 0;
                long nd = rc2 ? -1 : tu_compare(&ref, &out, &mdk);
                /* MLRI: float kernels, the rule of docs/mlri.md; others: exact */
                TAP_CHECK(ncpu == 0 && (algo == PC_ALGO_MLRI ? tu_mlri_rule(nd, mdk, &ref) : nd == 0),
                          "colour on, 5 cameras x 12-bit packed, per-camera matrices: %s %s %s th=%d: CPU backend %ld, "
                          "emulated kernels %ld samples differ from the reference%s%s",
                          pc_algo_get(algo)->name, pc_variant_name(var), pc_pixfmt_name(fmt), th, ncpu, nd,
                          rc2 ? ": " : "", rc2 ? err : "");
            }
            tu_pic_free(&ref);
            tu_pic_free(&cp);
            tu_pic_free(&out);
        }
    pc_cpu_close(cpu);
    for (int c = 0; c < ncam; c++)
        free(packs[c]);
    free(rgb);
    free(bay);
    free(codes);
}

/* encode.layout "grid": the final pass stores each camera's rows in its
 * tile of a grid picture (6 cameras of 10 rows as 3x2 and 2x3; tiles of
 * 12 and 64 rows straddle cameras): the C reference, the CPU backend and
 * the emulated kernels (fused and mlri, both variants, every format; the
 * per-camera matrices still chosen by source row) each give the stacked
 * reference's samples, tile for camera. colour_bands() checks the CPU
 * backend's colour stage into a grid. */
static void grid_tiles(void)
{
    const int w = 136, sh = 10, ncam = 6, h = sh * ncam;
    char err[512] = "";
    uint8_t *rgb = malloc((size_t)w * h * 3), *bay = malloc((size_t)w * h);
    tu_synth(rgb, w, h, 31);
    pc_yuv_coeffs bands[6];
    for (int c = 0; c < ncam; c++)
        pc_yuv_coeffs_get(c & 1 ? PC_MATRIX_BT601 : PC_MATRIX_BT709, c & 2 ? PC_RANGE_FULL : PC_RANGE_LIMITED,
                          &bands[c]);
    pc_cpu *cpu = NULL;
    pc_cpu_open(&cpu, 3, w, h, err, sizeof err);
    pc_bayer src = {bay, (size_t)w, w, h, PC_CFA_GRBG, 0};
    /* GRBG and BGGR: the kernels' row pairs run down and (mirrored) up */
    for (int cols = 2; cols <= 3; cols++) {
        src.cfa = cols == 2 ? PC_CFA_GRBG : PC_CFA_BGGR;
        tu_mosaic(rgb, w, h, bay, w, h, src.cfa);
        for (int algo = 0; algo < PC_ALGO_COUNT; algo++)
            for (int fmt = PC_FMT_RGB24; fmt <= PC_FMT_I420; fmt++) {
                int fused = pc_emu_supports((pc_algo_id)algo);
                if (!fused && algo != PC_ALGO_MLRI)
                    continue;
                pc_picture ref, g;
                tu_pic_alloc(&ref, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 3);
                tu_pic_alloc_dev(&g, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 5);
                int shaped = pc_picture_as_grid(&g, cols, sh) == 0;
                if (fmt != PC_FMT_RGB24) { /* per-camera matrices, by source row */
                    ref.bands = g.bands = bands;
                    ref.band_rows = g.band_rows = sh;
                    ref.n_bands = g.n_bands = ncam;
                }
                int rc = pc_ref_debayer((pc_algo_id)algo, &src, &ref, err, sizeof err);
                TAP_CHECK(rc == 0 && shaped, "grid %dx%d %s %s: stacked reference %s, grid shape %s", cols,
                          ncam / cols, pc_algo_get(algo)->name, pc_pixfmt_name(fmt), rc ? err : "ok",
                          shaped ? "ok" : "refused");
                const char *who[4] = {"C reference", "CPU backend", "emulated 2px", "emulated 4px"};
                for (int k = 0; k < 4 && !rc; k++) {
                    if (k == 3 && !fused)
                        continue; /* mlri: one kernel sequence */
                    tu_pic_fill(&g, 0xA7);
                    int r2 = k == 0 ? pc_ref_debayer((pc_algo_id)algo, &src, &g, err, sizeof err)
                             : k == 1 ? pc_cpu_debayer(cpu, (pc_algo_id)algo, &src, &g, err, sizeof err)
                             : fused ? pc_emu_debayer((pc_algo_id)algo, k == 2 ? PC_VARIANT_2PX : PC_VARIANT_4PX,
                                                      k == 2 ? 12 : 64, &src, &g, err, sizeof err)
                                     : pc_emu_mlri(&src, &g, err, sizeof err);
                    /* emulated mlri keeps the GPU's rule against the reference
                     * (not bit-exact): its grid is compared with its own
                     * stacked picture */
                    pc_picture own = ref;
                    if (!r2 && k == 2 && !fused) {
                        tu_pic_alloc_dev(&own, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 3);
                        own.bands = ref.bands;
                        own.band_rows = ref.band_rows;
                        own.n_bands = ref.n_bands;
                        r2 = pc_emu_mlri(&src, &own, err, sizeof err);
                    }
                    long nd = r2 ? -1 : tu_grid_compare(&own, &g);
                    if (own.plane[0] != ref.plane[0])
                        tu_pic_free(&own);
                    TAP_CHECK(nd == 0, "grid %dx%d, %s %s %s, %s: %ld samples differ from the stacked picture's%s%s",
                              cols, ncam / cols, pc_cfa_name(src.cfa), pc_algo_get(algo)->name, pc_pixfmt_name(fmt),
                              who[k], nd, r2 ? ": " : "", r2 ? err : "");
                }
                tu_pic_free(&ref);
                tu_pic_free(&g);
            }
    }
    /* shapes that are not whole cameras in whole grid rows are refused */
    pc_picture g;
    tu_pic_alloc(&g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
    TAP_CHECK(pc_picture_as_grid(&g, 4, sh) == PC_EINVAL && pc_picture_as_grid(&g, 2, 7) == PC_EINVAL &&
              pc_picture_as_grid(&g, 1, sh) == PC_EINVAL && g.width == w && g.grid_cols == 0,
              "pc_picture_as_grid refuses 6 cameras in 4 columns, 7-row cameras and one column, picture unchanged");
    {
        /* 134-pixel cameras: tile 1 would start at byte 134 of each row, where
         * the kernels' 4-byte stores fault on the device */
        pc_picture n;
        tu_pic_alloc(&n, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, 134, h, 0);
        TAP_CHECK(pc_picture_as_grid(&n, 2, sh) == PC_EINVAL && n.grid_cols == 0,
                  "pc_picture_as_grid refuses cameras 134 pixels wide (tiles off the %d-byte store alignment)",
                  PC_GRID_TILE_ALIGN);
        tu_pic_free(&n);
    }
    {
        /* rgbx32 (the panorama's texture source) has no grid layout:
         * pc_picture_as_grid refuses it, and every debayer refuses one
         * made by hand, naming why */
        pc_picture x;
        tu_pic_alloc_dev(&x, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
        TAP_CHECK(pc_picture_as_grid(&x, 2, sh) == PC_EINVAL && x.grid_cols == 0,
                  "pc_picture_as_grid refuses an rgbx32 picture, picture unchanged");
        x.width *= 2;
        x.height /= 2;
        x.pitch[0] *= 2;
        x.grid_cols = 2;
        x.tile_rows = sh;
        static const char *const who[4] = {"C reference", "CPU backend", "emulated kernels", "emulated mlri"};
        for (int k = 0; k < 4; k++) {
            err[0] = 0;
            int r = k == 0   ? pc_ref_debayer(PC_ALGO_BILINEAR, &src, &x, err, sizeof err)
                    : k == 1 ? pc_cpu_debayer(cpu, PC_ALGO_EDGE, &src, &x, err, sizeof err)
                    : k == 2 ? pc_emu_debayer(PC_ALGO_EDGE, PC_VARIANT_4PX, 12, &src, &x, err, sizeof err)
                             : pc_emu_mlri(&src, &x, err, sizeof err);
            TAP_CHECK(r == PC_EINVAL && strstr(err, "rgbx32") && strstr(err, "grid"),
                      "%s refuses an rgbx32 grid picture: %s", who[k], err);
        }
        tu_pic_free(&x);
    }
    g.grid_cols = 4; /* a grid that does not tile the frame */
    g.tile_rows = sh;
    g.width = 4 * w;
    g.height = h / 4;
    int rc = pc_ref_debayer(PC_ALGO_BILINEAR, &src, &g, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "grid"), "a grid that does not tile the frame is refused: %s", err);
    tu_pic_free(&g);
    pc_cpu_close(cpu);
    free(rgb);
    free(bay);
}

/* The colour pass kernel against the C row function: every format and
 * phase, a width that is not a multiple of the kernel's 4 pixels nor of
 * 10p's group, extreme codes. */
static void colour_pass(void)
{
    static const pc_packing packs[] = {PC_PACK_8, PC_PACK_LE16, PC_PACK_PFNC, PC_PACK_GVSP};
    char err[256] = "";
    uint32_t seed = 5;
    const int h = 22; /* 2 blocks x 2 steps of PC_CRPI rows, the last one partial */
    /* 522; 10: narrower than the left margin, whose samples reflect twice */
    for (int w = 522; w >= 10; w = w == 522 ? 10 : 0)
    for (int pi = 0; pi < 4; pi++)
        for (int bits = 8; bits <= 12; bits += 2) {
            if ((bits == 8) != (packs[pi] == PC_PACK_8))
                continue;
            for (int cfa = 0; cfa < 4; cfa++) {
                pc_rawfmt f = {bits, packs[pi], (pc_cfa)cfa};
                int maxc = (1 << bits) - 1;
                uint16_t *codes = malloc((size_t)w * h * 2);
                for (int i = 0; i < w * h; i++)
                    codes[i] = (uint16_t)(i % 11 == 0 ? (uint32_t)maxc : i % 13 == 0 ? 0u : tu_rng(&seed) & (uint32_t)maxc);
                uint8_t *raw = malloc(pc_rawfmt_frame_bytes(&f, w, h) + 8);
                tc_pack(&f, codes, (size_t)w * h, raw);
                static pc_colour_tables t;
                t.bits = bits;
                for (int c = 0; c < 3; c++)
                    for (int v = 0; v <= maxc; v++)
                        t.lut[c][v] = (uint8_t)(tu_rng(&seed) >> 7);
                /* with the device's margins: 16 bytes left, 22 right of
                 * each row, the reflect-101 mirror of the row */
                const int ml = 16, mr = 22;
                size_t pitch = ml + w + mr;
                uint8_t *a = calloc(pitch * h, 1), *b = calloc(pitch * h, 1);
                pc_colour_slab(&f, &t, raw, 0, w, h, a + ml, pitch);
                for (int y = 0; y < h; y++)
                    for (int j = 0; j < ml + mr; j++) {
                        int x = j < ml ? j - ml : w + (j - ml), sx = x;
                        while (sx < 0 || sx >= w)
                            sx = sx < 0 ? -sx : 2 * (w - 1) - sx;
                        a[y * pitch + ml + x] = a[y * pitch + ml + sx];
                    }
                int rc = pc_emu_colour(&f, &t, raw, w, h, b + ml, pitch, ml, mr, err, sizeof err);
                char name[32];
                pc_rawfmt_name(&f, name, sizeof name);
                TAP_CHECK(rc == 0 && memcmp(a, b, pitch * h) == 0, "colour pass kernel %s width %d: same bytes as the C rows, margins mirrored%s%s",
                          name, w, rc ? ": " : "", rc ? err : "");
                free(codes);
                free(raw);
                free(a);
                free(b);
            }
        }
}

/* The pass as the device runs it per frame: the stacked slabs of three
 * cameras with their own tables in one launch, 2040 wide (every other
 * 8-bit / 12p row starts off a 16-byte boundary), 10 rows each. */
static void colour_pass_cams(void)
{
    static const char *const names[] = {"BayerGB8", "BayerGB12p", "BayerGB12Packed", "BayerGB10"};
    const int w = 2040, rows = 10, ncam = 3, ml = 16, mr = 24;
    char err[256] = "";
    uint32_t seed = 9;
    static pc_colour_tables t[3];
    const pc_colour_tables *tp[3] = {&t[0], &t[1], &t[2]};
    for (unsigned fi = 0; fi < sizeof names / sizeof names[0]; fi++) {
        pc_rawfmt f;
        pc_rawfmt_parse(names[fi], &f, err, sizeof err);
        const int maxc = (1 << f.bits) - 1;
        const size_t src_cam = 2 * (size_t)rows * w, pitch = ml + w + mr;
        uint8_t *raw = calloc(src_cam * ncam + 16, 1), *a = calloc(pitch * rows * ncam, 1),
                *b = calloc(pitch * rows * ncam, 1);
        uint16_t *codes = malloc((size_t)w * rows * 2);
        for (int k = 0; k < ncam; k++) {
            for (int i = 0; i < w * rows; i++)
                codes[i] = (uint16_t)(i % 7 == 0 ? (uint32_t)maxc : tu_rng(&seed) & (uint32_t)maxc);
            tc_pack(&f, codes, (size_t)w * rows, raw + k * src_cam);
            t[k].bits = f.bits;
            for (int c = 0; c < 3; c++)
                for (int v = 0; v <= maxc; v++)
                    t[k].lut[c][v] = (uint8_t)(tu_rng(&seed) >> 7);
            uint8_t *ak = a + (size_t)k * rows * pitch;
            pc_colour_slab(&f, &t[k], raw + k * src_cam, 0, w, rows, ak + ml, pitch);
            for (int y = 0; y < rows; y++)
                for (int j = 0; j < ml + mr; j++) {
                    int x = j < ml ? j - ml : w + (j - ml);
                    ak[y * pitch + ml + x] = ak[y * pitch + ml + (x < 0 ? -x : 2 * (w - 1) - x)];
                }
        }
        int rc = pc_emu_colour_cams(&f, tp, ncam, raw, src_cam, w, rows, b + ml, pitch, ml, mr, err, sizeof err);
        TAP_CHECK(rc == 0 && memcmp(a, b, pitch * rows * ncam) == 0,
                  "colour pass kernel, 3 cameras in one launch, %s width %d: same bytes as the C rows%s%s", names[fi],
                  w, rc ? ": " : "", rc ? err : "");
        free(raw);
        free(a);
        free(b);
        free(codes);
    }
}

/* The reference and the emulated mlri kernels on src into ref and out (out
 * filled with a marker first): the samples that differ (-1 on an error,
 * *rc its code) and the largest difference in *md. */
static long mlri_vs_reference(const pc_bayer *src, pc_picture *ref, pc_picture *out, const int tiles[3], int *rc,
                              int *md, char *err, size_t n)
{
    tu_pic_fill(out, 0xA7);
    *rc = pc_ref_debayer(PC_ALGO_MLRI, src, ref, err, n);
    if (!*rc)
        *rc = pc_emu_mlri_tiles(src, out, tiles[0], tiles[1], tiles[2], err, n);
    *md = 0;
    return *rc ? -1 : tu_compare(ref, out, md);
}

/* MLRI's kernels (cuda_mlri.cuh) against its float reference, under the
 * rule the GPU keeps (docs/mlri.md): every output sample within 1 code
 * value, at least 99.99 % identical (running float sums and reciprocals
 * round differently from the reference; the total is reported).
 * Sizes: the smallest the spec allows, ones not multiples of any tile
 * (DIR 116 x 64, GREEN 128 x 32, RB 104 x 128), one wider than two tiles
 * with partial last tiles, a tall narrow one, and 360x300, where every
 * kernel has tiles far enough from every edge to take its interior
 * (unmirrored, constant-count) instance next to border tiles (two phases
 * there: the emulation of a frame that size takes seconds); noise and a
 * synthetic photograph; all four CFA phases; NV12 always, RGB24, I420 and
 * RGBX32 on two sizes. Destinations as the device takes them
 * (tu_pic_alloc_dev). */
static void mlri_checks(void)
{
    static const int sizes[][2] = {{8, 8}, {10, 14}, {134, 22}, {16, 42}, {262, 12}, {400, 40}, {360, 300}};
    char err[512] = "";
    long total_diff = 0, total = 0;
    for (int si = 0; si < 7; si++) {
        int w = sizes[si][0], h = sizes[si][1];
        uint8_t *rgb = malloc((size_t)w * h * 3), *bay = malloc((size_t)w * h);
        for (int kind = 0; kind < 2; kind++)
            for (int cfa = 0; cfa < 4; cfa++) {
                if (si == 6 && cfa != 1 + kind)
                    continue; /* 360x300: GRBG noise, GBRG photo */
                if (kind == 0)
                    tu_noise(bay, (size_t)w * h, 3000u + si * 10 + cfa);
                else {
                    tu_synth(rgb, w, h, 11u + si);
                    tu_mosaic(rgb, w, h, bay, w, h, (pc_cfa)cfa);
                }
                pc_bayer src = {bay, (size_t)w, w, h, (pc_cfa)cfa, 0};
                for (int fmt = PC_FMT_RGB24; fmt <= PC_FMT_RGBX32; fmt++) {
                    if (fmt != PC_FMT_NV12 && (kind != 0 || (si != 1 && si != 2)))
                        continue;
                    pc_matrix mat = cfa & 1 ? PC_MATRIX_BT601 : PC_MATRIX_BT709;
                    pc_range range = cfa & 2 ? PC_RANGE_FULL : PC_RANGE_LIMITED;
                    pc_picture ref, out;
                    tu_pic_alloc(&ref, (pc_pixfmt)fmt, mat, range, w, h, 3);
                    tu_pic_alloc_dev(&out, (pc_pixfmt)fmt, mat, range, w, h, 5);
                    tu_pic_fill(&out, 0xA7);
                    int rr = pc_ref_debayer(PC_ALGO_MLRI, &src, &ref, err, sizeof err);
                    int rc = rr ? rr : pc_emu_mlri(&src, &out, err, sizeof err);
                    int md = 0;
                    long nd = rc ? -1 : tu_compare(&ref, &out, &md);
                    long n = tu_pic_samples(&ref);
                    TAP_CHECK(rc == 0 && tu_mlri_rule(nd, md, &ref),
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
    /* Short tiles (pc_emu_mlri_tiles: rows per CTA of DIR and RB):
     * many tiles down the frame, tiles shorter than the walkers' lead-in
     * (12 and 24 rows), the frame's last tile cut short. */
    /* ... and DIR's lean variant (its leaving
     * rows computed again, one buffer for two), with short tiles and with
     * the default ones on a frame with interior tiles. */
    static const char *const tile_rows[] = {"2,2", "6,10", "16,4", "6,10", "0,0"};
    static const int tiles[][3] = {{2, 2, 0}, {6, 10, 0}, {16, 4, 0}, {6, 10, 1}, {0, 0, 1}};
    for (int ti = 0; ti < 5; ti++) {
        static const int ts[][2] = {{16, 42}, {134, 22}, {262, 12}, {360, 300}};
        for (int si = 0; si < 4; si++) {
            if ((si == 3) != (ti == 4))
                continue; /* 360x300: only lean with the default tiles */
            int w = ts[si][0], h = ts[si][1];
            uint8_t *bay = malloc((size_t)w * h);
            for (int cfa = 0; cfa < 4; cfa++) {
                if (si == 3 && (cfa == 0 || cfa == 3))
                    continue; /* seconds each: the two phases with odd offsets */
                tu_noise(bay, (size_t)w * h, 5000u + si * 10 + cfa + ti * 100);
                pc_bayer src = {bay, (size_t)w, w, h, (pc_cfa)cfa, 0};
                pc_picture ref, out;
                tu_pic_alloc(&ref, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 3);
                tu_pic_alloc_dev(&out, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 5);
                int rc, md;
                long nd = mlri_vs_reference(&src, &ref, &out, tiles[ti], &rc, &md, err, sizeof err);
                TAP_CHECK(rc == 0 && tu_mlri_rule(nd, md, &ref),
                          "emulated mlri %s nv12 %dx%d noise, tile rows (DIR,RB) %s%s: %ld of %ld samples differ (max %d)%s%s",
                          pc_cfa_name((pc_cfa)cfa), w, h, tile_rows[ti], ti >= 3 ? ", lean DIR" : "", nd,
                          tu_pic_samples(&ref), md, rc ? ": " : "", rc ? err : "");
                total_diff += nd > 0 ? nd : 0;
                total += tu_pic_samples(&ref);
                tu_pic_free(&ref);
                tu_pic_free(&out);
            }
            free(bay);
        }
    }
    /* per-camera matrices (colour bands, docs/colour.md) in the final pass */
    {
        int w = 134, h = 22;
        uint8_t *bay = malloc((size_t)w * h);
        tu_noise(bay, (size_t)w * h, 4711u);
        pc_yuv_coeffs bands[3];
        pc_yuv_coeffs_get(PC_MATRIX_BT601, PC_RANGE_FULL, &bands[0]);
        pc_yuv_coeffs_get(PC_MATRIX_BT709, PC_RANGE_LIMITED, &bands[1]);
        pc_yuv_coeffs_get(PC_MATRIX_BT601, PC_RANGE_LIMITED, &bands[2]);
        for (int fmt = PC_FMT_NV12; fmt <= PC_FMT_I420; fmt++) {
            pc_bayer src = {bay, (size_t)w, w, h, PC_CFA_GRBG, 0};
            pc_picture ref, out;
            tu_pic_alloc(&ref, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 3);
            tu_pic_alloc_dev(&out, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 5);
            ref.bands = out.bands = bands;
            ref.n_bands = out.n_bands = 3;
            ref.band_rows = out.band_rows = 8;
            int rc, md;
            long nd = mlri_vs_reference(&src, &ref, &out, (const int[3]){0, 0, 0}, &rc, &md, err, sizeof err);
            TAP_CHECK(rc == 0 && tu_mlri_rule(nd, md, &ref),
                      "emulated mlri %s %dx%d with 3 colour bands of 8 rows: %ld samples differ (max %d)%s%s",
                      pc_pixfmt_name((pc_pixfmt)fmt), w, h, nd, md, rc ? ": " : "", rc ? err : "");
            tu_pic_free(&ref);
            tu_pic_free(&out);
        }
        free(bay);
    }
    tap_diag("mlri emulation: %ld of %ld samples differ from the reference in all", total_diff, total);
}

int main(void)
{
    mlri_checks();
    colour_pass();
    colour_pass_cams();
    colour_bands();
    grid_tiles();
    static const int sizes[][2] = {{8, 8}, {10, 8}, {24, 12}, {134, 22}, {262, 38}};
    static const int ths[] = {4, 12, 64};
    char err[512] = "";
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
                pc_bayer src = {bay, (size_t)w, w, h, (pc_cfa)cfa, 0};
                for (int algo = 0; algo < PC_ALGO_COUNT; algo++) {
                    if (!pc_emu_supports((pc_algo_id)algo))
                        continue;
                    /* NV12 always; I420, RGB24 and RGBX32 on the noise of
                     * two sizes (10 and 134 wide: one tile and two, both
                     * ending in half a 4px pair, every store path). */
                    for (int fmt = PC_FMT_RGB24; fmt <= PC_FMT_RGBX32; fmt++) {
                        if (fmt != PC_FMT_NV12 && (kind != 0 || (si != 1 && si != 3)))
                            continue;
                        pc_range range = (algo & 1) ? PC_RANGE_FULL : PC_RANGE_LIMITED;
                        pc_matrix mat = (algo & 2) ? PC_MATRIX_BT601 : PC_MATRIX_BT709;
                        pc_picture ref, out;
                        tu_pic_alloc(&ref, (pc_pixfmt)fmt, mat, range, w, h, 3);
                        tu_pic_alloc_dev(&out, (pc_pixfmt)fmt, mat, range, w, h, 5);
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
