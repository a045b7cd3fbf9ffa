/* test_cuda.c - the CUDA backend against the C reference, on the GPU.
 *
 * For every algorithm x variant (2px, 4px) x CFA phase the NV12 output of
 * the device must equal the reference on every sample (count of differing
 * samples and the largest difference are printed), on uniform noise, on a
 * synthetic photograph and on the PPM photographs found in
 * $PC_TEST_IMAGES (astronaut.ppm, coffee.ppm), at 2040x5400 and at awkward
 * sizes (smaller than a tile, widths not multiples of 32/128). Small sizes
 * also run with forced tile heights (the pixels-per-thread knob). I420,
 * RGB24 and RGBX32 are spot-checked (RGBX32 refused as a grid or with a
 * pitch off its 16-byte stores); sizes
 * below 8 and other bad arguments must fail cleanly; three slots in
 * flight at once must not disturb each other.
 * Outputs are poisoned before every run. Skips where there is no device.
 *
 * MLRI (float, docs/mlri.md) keeps a looser rule than the integer
 * algorithms: every sample within 1 code value of the reference and at
 * least 99.99 % identical (its kernels use running float sums, fast
 * divisions and multiply-adds, so a few samples per million may differ by
 * 1; the count is printed); it has no tile heights or variants to sweep.
 * Colour stage (docs/colour.md): five cameras of every raw format through
 * pc_gpu_upload_raw_async with their own tables, and per-camera matrices
 * in the final pass, against the C rows and the reference.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colour.h"
#include "colour_test_util.h"
#include "debayer.h"
#include "debayer_cuda.h"
#include "debayer_test_util.h"
#include "panocap_config.h"
#include "tap.h"

#if PANOCAP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static char err[1024] = "";

/* Poisons a device picture. */
static void dev_poison(const pc_picture *p, int v)
{
#if PANOCAP_HAVE_CUDA
    size_t bw[3];
    int rows[3];
    int np = tu_planes(p->fmt, p->width, p->height, bw, rows);
    for (int i = 0; i < np; i++)
        cudaMemset2D(p->plane[i], p->pitch[i], v, bw[i], rows[i]);
#else
    (void)p;
    (void)v;
#endif
}

/* --- references computed in parallel ------------------------------------- */
typedef struct refjob {
    const uint8_t *bayer[4]; /* per CFA */
    int w, h;
    pc_picture out[4][PC_ALGO_COUNT];
    int next;
    pthread_mutex_t mu;
    int failed;
} refjob;

static void *ref_worker(void *arg)
{
    refjob *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        int k = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (k >= 4 * PC_ALGO_COUNT)
            return NULL;
        int cfa = k / PC_ALGO_COUNT, algo = k % PC_ALGO_COUNT;
        pc_bayer src = {j->bayer[cfa], (size_t)j->w, j->w, j->h, (pc_cfa)cfa, 0};
        char e[256];
        /* MLRI's float reference takes seconds per megapixel: large frames
         * go through the CPU backend (bit-identical, 4 threads). */
        if (algo == PC_ALGO_MLRI && (long)j->w * j->h > 1000000) {
            pc_cpu *cpu = NULL;
            if (pc_cpu_open(&cpu, 4, j->w, j->h, e, sizeof e) ||
                pc_cpu_debayer(cpu, PC_ALGO_MLRI, &src, &j->out[cfa][algo], e, sizeof e)) {
                fprintf(stderr, "reference (CPU backend): %s\n", e);
                j->failed = 1;
            }
            pc_cpu_close(cpu);
            continue;
        }
        if (pc_ref_debayer((pc_algo_id)algo, &src, &j->out[cfa][algo], e, sizeof e)) {
            fprintf(stderr, "reference: %s\n", e);
            j->failed = 1;
        }
    }
}

static int refs_compute(refjob *j)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > 32)
        n = 32;
    pthread_t th[32];
    j->next = 0;
    j->failed = 0;
    pthread_mutex_init(&j->mu, NULL);
    for (long i = 0; i < n; i++)
        pthread_create(&th[i], NULL, ref_worker, j);
    for (long i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&j->mu);
    return j->failed ? -1 : 0;
}

/* Uploads a Bayer frame to slot in 5 slabs, like the capture path. */
static int upload(pc_gpu *g, int slot, const uint8_t *bay, int w, int h)
{
    int slab = (h / 5) & ~1;
    for (int i = 0, row = 0; i < 5; i++) {
        int rows = i == 4 ? h - row : slab;
        if (rows <= 0)
            continue;
        if (pc_gpu_upload_async(g, slot, row, bay + (size_t)row * w, (size_t)w, rows, err, sizeof err))
            return -1;
        row += rows;
    }
    return 0;
}

/* The rule of the algorithm: equal, or for MLRI within 1 code value on at
 * most 0.01 % of the samples. */
static int within_rule(pc_algo_id algo, long nd, int md, const pc_picture *ref)
{
    return algo == PC_ALGO_MLRI ? tu_mlri_rule(nd, md, ref) : nd == 0;
}

/* Runs one configuration on the GPU and compares with ref. */
static void run_one(pc_gpu *g, int slot, pc_algo_id algo, pc_variant var, pc_cfa cfa, int th, const pc_picture *dev,
                    const pc_picture *host, const pc_picture *ref, const char *what)
{
    const char *an = pc_algo_get(algo)->name;
    int rc = pc_gpu_set_algo(g, algo, var, cfa, dev->fmt, dev->matrix, dev->range, err, sizeof err);
    if (!rc && th)
        rc = pc_gpu_set_tile_rows(g, th, err, sizeof err);
    int used_th = 0;
    pc_gpu_get_choice(g, NULL, &used_th);
    dev_poison(dev, 0x5A);
    tu_pic_fill(host, 0xA5);
    if (!rc)
        rc = pc_gpu_debayer(g, slot, dev, err, sizeof err);
    if (!rc)
        rc = pc_gpu_download_async(g, slot, dev, host, err, sizeof err);
    if (!rc)
        rc = pc_gpu_slot_wait(g, slot, err, sizeof err);
    int md = 0;
    long nd = rc ? -1 : tu_compare(ref, host, &md);
    TAP_CHECK(within_rule(algo, nd, md, ref), "%s %s %s %s %dx%d th=%d %s: %ld samples differ (max %d)%s%s", an, pc_variant_name(var),
              pc_cfa_name(cfa), pc_pixfmt_name(dev->fmt), dev->width, dev->height, used_th, what, nd, md,
              rc ? " -- " : "", rc ? err : "");
}

static void test_bad_args(void)
{
    static const int bad[][2] = {{2, 2}, {6, 4}, {7, 8}, {8, 6}, {9, 10}, {0, 0}};
    pc_gpu *g = NULL;
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = pc_gpu_open(&g, 0, bad[i][0], bad[i][1], 2, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && g == NULL && strstr(err, "at least 8"),
                  "pc_gpu_open %dx%d refused: rc %d, \"%s\"", bad[i][0], bad[i][1], rc, err);
    }
    TAP_CHECK(pc_gpu_open(&g, 0, 64, 64, 0, err, sizeof err) == PC_EINVAL, "0 slots refused: %s", err);
    TAP_CHECK(pc_gpu_open(&g, 99, 64, 64, 2, err, sizeof err) == PC_EINVAL, "device 99 refused: %s", err);
    TAP_CHECK(pc_gpu_open(NULL, 0, 64, 64, 2, err, sizeof err) == PC_EINVAL, "NULL out refused: %s", err);
    int rc = pc_gpu_open(&g, 0, 64, 32, 2, err, sizeof err);
    TAP_CHECK(rc == 0, "pc_gpu_open 64x32: %s", rc ? err : "ok");
    if (rc)
        return;
    pc_picture dev;
    rc = pc_gpu_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, 64, 32, &dev, err, sizeof err);
    TAP_CHECK(rc == 0, "picture alloc: %s", rc ? err : "ok");
    TAP_CHECK(pc_gpu_debayer(g, 0, &dev, err, sizeof err) == PC_EINVAL, "debayer before set_algo refused: %s", err);
    TAP_CHECK(pc_gpu_set_algo(g, (pc_algo_id)99, PC_VARIANT_4PX, PC_CFA_RGGB, PC_FMT_NV12, PC_MATRIX_BT709,
                              PC_RANGE_LIMITED, err, sizeof err) == PC_EINVAL && strstr(err, "bilinear"),
              "unknown algorithm refused: %s", err);
    TAP_CHECK(pc_gpu_set_algo(g, PC_ALGO_EDGE, PC_VARIANT_4PX, (pc_cfa)7, PC_FMT_NV12, PC_MATRIX_BT709,
                              PC_RANGE_LIMITED, err, sizeof err) == PC_EINVAL, "bad CFA refused: %s", err);
    TAP_CHECK(pc_gpu_set_algo(g, PC_ALGO_EDGE, (pc_variant)9, PC_CFA_RGGB, PC_FMT_NV12, PC_MATRIX_BT709,
                              PC_RANGE_LIMITED, err, sizeof err) == PC_EINVAL, "bad variant refused: %s", err);
    TAP_CHECK(pc_gpu_set_algo(g, PC_ALGO_EDGE, PC_VARIANT_AUTO, PC_CFA_RGGB, PC_FMT_NV12, PC_MATRIX_BT709,
                              PC_RANGE_LIMITED, err, sizeof err) == 0, "auto variant: %s", err);
    pc_variant v;
    int th;
    pc_gpu_get_choice(g, &v, &th);
    TAP_CHECK((v == PC_VARIANT_2PX || v == PC_VARIANT_4PX) && th >= 4, "auto chose %s, %d rows per tile",
              pc_variant_name(v), th);
    TAP_CHECK(pc_gpu_set_tile_rows(g, 6, err, sizeof err) == PC_EINVAL, "tile height 6 refused: %s", err);
    TAP_CHECK(pc_gpu_debayer(g, 5, &dev, err, sizeof err) == PC_EINVAL, "slot 5 refused: %s", err);
    pc_picture bad_pic = dev;
    bad_pic.width = 62;
    TAP_CHECK(pc_gpu_debayer(g, 0, &bad_pic, err, sizeof err) == PC_EINVAL, "wrong size refused: %s", err);
    bad_pic = dev;
    bad_pic.pitch[1] = 63;
    TAP_CHECK(pc_gpu_debayer(g, 0, &bad_pic, err, sizeof err) == PC_EINVAL, "odd pitch refused: %s", err);
    bad_pic = dev;
    bad_pic.fmt = PC_FMT_I420;
    TAP_CHECK(pc_gpu_debayer(g, 0, &bad_pic, err, sizeof err) == PC_EINVAL, "format mismatch refused: %s", err);
    /* RGBX32: 16-byte stores, no grid kernels */
    pc_picture xp;
    rc = pc_gpu_picture_alloc(g, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, 64, 32, &xp, err, sizeof err);
    rc = rc ? rc : pc_gpu_set_algo(g, PC_ALGO_EDGE, PC_VARIANT_4PX, PC_CFA_RGGB, PC_FMT_RGBX32, PC_MATRIX_BT709,
                                   PC_RANGE_LIMITED, err, sizeof err);
    rc = rc ? rc : pc_gpu_debayer(g, 0, &xp, err, sizeof err);
    rc = rc ? rc : pc_gpu_slot_wait(g, 0, err, sizeof err);
    TAP_CHECK(rc == 0 && xp.pitch[0] % 16 == 0, "rgbx32 picture (pitch %zu) demosaiced: %s", xp.pitch[0],
              rc ? err : "ok");
    bad_pic = xp;
    bad_pic.pitch[0] = 4 * 64 + 8; /* a multiple of 8, not of 16 */
    err[0] = 0;
    TAP_CHECK(pc_gpu_debayer(g, 0, &bad_pic, err, sizeof err) == PC_EINVAL && strstr(err, "multiples of 16"),
              "rgbx32 pitch off the 16-byte stores refused: %s", err);
    bad_pic = xp;
    bad_pic.width *= 2;
    bad_pic.height /= 2;
    bad_pic.pitch[0] *= 2;
    bad_pic.grid_cols = 2;
    bad_pic.tile_rows = 16;
    err[0] = 0;
    TAP_CHECK(pc_gpu_debayer(g, 0, &bad_pic, err, sizeof err) == PC_EINVAL && strstr(err, "grid"),
              "rgbx32 grid picture refused: %s", err);
    pc_gpu_picture_free(g, &xp);
    TAP_CHECK(pc_gpu_upload_async(g, 0, 30, (const uint8_t *)err, 64, 4, err, sizeof err) == PC_EINVAL,
              "upload past the last row refused: %s", err);
    TAP_CHECK(pc_gpu_stream(g) != NULL && pc_gpu_cu_context(g) != NULL, "stream and CUcontext available");
    pc_gpu_picture_free(g, &dev);
    pc_gpu_close(g);
}

/* Three slots in flight: uploads, debayers and downloads enqueued back to
 * back, waited for at the end. */
static void test_in_flight(int w, int h)
{
    pc_gpu *g;
    if (pc_gpu_open(&g, 0, w, h, 3, err, sizeof err)) {
        TAP_CHECK(0, "open for in-flight test: %s", err);
        return;
    }
    pc_gpu_set_options(g, PC_GPU_OPT_FRAME_TIMING);
    pc_algo_id algos[3] = {PC_ALGO_EDGE, PC_ALGO_MLRI, PC_ALGO_WD_MODIFIED};
    uint8_t *bay[3];
    pc_picture dev[3], host[3], ref[3];
    void *pinned = NULL;
    size_t fsz = (size_t)w * h;
    int rc = pc_gpu_host_alloc(3 * fsz, &pinned, err, sizeof err);
    TAP_CHECK(rc == 0, "pinned host memory: %s", rc ? err : "ok");
    if (rc)
        return;
    for (int s = 0; s < 3; s++) {
        bay[s] = (uint8_t *)pinned + s * fsz;
        tu_noise(bay[s], fsz, 77u + s);
        pc_gpu_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &dev[s], err, sizeof err);
        tu_pic_alloc(&host[s], PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
        tu_pic_alloc(&ref[s], PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
        pc_bayer src = {bay[s], (size_t)w, w, h, PC_CFA_GRBG, 0};
        if (algos[s] == PC_ALGO_MLRI) { /* seconds single-threaded: the CPU backend */
            pc_cpu *cpu = NULL;
            if (pc_cpu_open(&cpu, 0, w, h, err, sizeof err) == 0)
                pc_cpu_debayer(cpu, algos[s], &src, &ref[s], err, sizeof err);
            pc_cpu_close(cpu);
        } else {
            pc_ref_debayer(algos[s], &src, &ref[s], err, sizeof err);
        }
        dev_poison(&dev[s], 0x33);
        tu_pic_fill(&host[s], 0xCC);
    }
    rc = 0;
    for (int s = 0; s < 3 && !rc; s++) {
        rc = upload(g, s, bay[s], w, h);
        if (!rc)
            rc = pc_gpu_set_algo(g, algos[s], PC_VARIANT_AUTO, PC_CFA_GRBG, PC_FMT_NV12, PC_MATRIX_BT709,
                                 PC_RANGE_LIMITED, err, sizeof err);
        if (!rc)
            rc = pc_gpu_debayer(g, s, &dev[s], err, sizeof err);
        if (!rc)
            rc = pc_gpu_download_async(g, s, &dev[s], &host[s], err, sizeof err);
    }
    if (!rc)
        rc = pc_gpu_sync(g, err, sizeof err);
    for (int s = 0; s < 3; s++) {
        int md = 0;
        long nd = rc ? -1 : tu_compare(&ref[s], &host[s], &md);
        double us = 0;
        pc_gpu_frame_time_us(g, s, &us, err, sizeof err);
        TAP_CHECK(within_rule(algos[s], nd, md, &ref[s]), "in flight: slot %d %s %dx%d: %ld samples differ (max %d), %.1f us%s%s", s,
                  pc_algo_get(algos[s])->name, w, h, nd, md, us, rc ? " -- " : "", rc ? err : "");
        pc_gpu_picture_free(g, &dev[s]);
        tu_pic_free(&host[s]);
        tu_pic_free(&ref[s]);
    }
    pc_gpu_host_free(pinned);
    pc_gpu_close(g);
}

/* Colour on: 5 cameras x every raw format; GPU == C colour rows + reference
 * with per-camera matrices. */
static void test_colour(int w, int sh)
{
    const int ncam = 5, h = sh * ncam;
    static const char *const fmts[] = {"BayerGB8", "BayerGB10", "BayerGB12", "BayerGB10p", "BayerGB12p",
                                       "BayerGB10Packed", "BayerGB12Packed"};
    pc_gpu *g = NULL;
    if (pc_gpu_open(&g, 0, w, h, 2, err, sizeof err)) {
        TAP_CHECK(0, "colour: pc_gpu_open %dx%d: %s", w, h, err);
        return;
    }
    uint8_t *rgb = malloc((size_t)w * h * 3), *bay = malloc((size_t)w * h);
    uint16_t *codes = malloc((size_t)w * sh * 2);
    tu_synth(rgb, w, h, 3);
    static pc_colour_tables tabs[5];
    pc_yuv_coeffs bands[5];
    for (unsigned fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
        pc_rawfmt f;
        pc_rawfmt_parse(fmts[fi], &f, err, sizeof err);
        size_t sb = pc_rawfmt_frame_bytes(&f, w, sh);
        uint8_t *packed = NULL;
        pc_gpu_host_alloc(sb * ncam + 16, (void **)&packed, err, sizeof err);
        int rc = packed ? 0 : -1;
        for (int c = 0; c < ncam && !rc; c++) {
            double cast[3] = {0.5 + 0.1 * c, 1, 0.9 - 0.1 * c};
            tc_cast_frame(rgb + (size_t)3 * w * sh * c, w, sh, f.cfa, f.bits, cast, 4.0 * c, codes);
            tc_pack(&f, codes, (size_t)w * sh, packed + sb * c);
            pc_colour_cfg cfg;
            pc_colour_cfg_init(&cfg);
            cfg.black_level = 4.0 * c;
            cfg.wb[0] = 1 / cast[0];
            cfg.wb[2] = 1 / cast[2];
            cfg.transfer = (pc_transfer)(c % 3);
            cfg.ccm[1] = -0.1 * c;
            cfg.ccm[0] = 1 + 0.1 * c;
            rc = pc_colour_tables_build(&cfg, f.bits, &tabs[c], err, sizeof err) ||
                 pc_yuv_coeffs_ccm(PC_MATRIX_BT709, PC_RANGE_LIMITED, cfg.ccm, &bands[c], err, sizeof err) ||
                 pc_gpu_set_colour_tables(g, c, &tabs[c], err, sizeof err);
            pc_colour_slab(&f, &tabs[c], packed + sb * c, 0, w, sh, bay + (size_t)w * sh * c, (size_t)w);
        }
        for (int c = 0; c < ncam && !rc; c++)
            rc = pc_gpu_upload_raw_async(g, 0, c * sh, packed + sb * c, &f, c, sh, err, sizeof err);
        pc_bayer src = {bay, (size_t)w, w, h, f.cfa, 0};
        pc_picture ref, host, dev;
        tu_pic_alloc(&ref, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
        tu_pic_alloc(&host, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
        pc_gpu_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &dev, err, sizeof err);
        ref.bands = dev.bands = bands;
        ref.band_rows = dev.band_rows = sh;
        ref.n_bands = dev.n_bands = ncam;
        for (int algo = 0; algo < PC_ALGO_COUNT && !rc; algo++) {
            if (pc_ref_debayer((pc_algo_id)algo, &src, &ref, err, sizeof err)) {
                TAP_CHECK(0, "reference: %s", err);
                continue;
            }
            char what[96];
            snprintf(what, sizeof what, "colour on, 5 cameras of %s", fmts[fi]);
            run_one(g, 0, (pc_algo_id)algo, PC_VARIANT_AUTO, f.cfa, 0, &dev, &host, &ref, what);
        }
        if (rc)
            TAP_CHECK(0, "colour %s: %s", fmts[fi], err);
        tu_pic_free(&ref);
        tu_pic_free(&host);
        pc_gpu_picture_free(g, &dev);
        pc_gpu_host_free(packed);
    }
    free(rgb);
    free(bay);
    free(codes);
    pc_gpu_close(g);
}

/* encode.layout "grid" on the device: ncam cameras of sh rows as a grid of
 * `cols` tile columns, the final pass storing each camera's rows in its
 * tile. Every algorithm, both variants, every format: the grid's tiles are
 * the device's stacked picture, byte for byte (the stacked picture is
 * checked against the reference by the other tests; MLRI included, its
 * float arithmetic being the same in both). */
static void test_grid(int w, int sh, int ncam, int cols, int all_algos)
{
    const int h = sh * ncam;
    pc_gpu *g = NULL;
    if (pc_gpu_open(&g, 0, w, h, 2, err, sizeof err)) {
        TAP_CHECK(0, "grid: pc_gpu_open %dx%d: %s", w, h, err);
        return;
    }
    uint8_t *rgb = malloc((size_t)w * h * 3), *bay = malloc((size_t)w * h);
    tu_synth(rgb, w, h, 77u);
    tu_mosaic(rgb, w, h, bay, w, h, PC_CFA_GBRG);
    int rc = upload(g, 0, bay, w, h);
    for (int fmt = PC_FMT_RGB24; fmt <= PC_FMT_I420 && !rc; fmt++) {
        pc_picture ds, dg, hs, hg;
        rc = pc_gpu_picture_alloc(g, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &ds, err, sizeof err);
        rc = rc ? rc
                : pc_gpu_picture_alloc(g, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &dg, err, sizeof err);
        tu_pic_alloc(&hs, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 8);
        tu_pic_alloc(&hg, (pc_pixfmt)fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 8);
        int shaped = !rc && pc_picture_as_grid(&dg, cols, sh) == 0 && pc_picture_as_grid(&hg, cols, sh) == 0;
        for (int a = 0; a < PC_ALGO_COUNT && shaped; a++) {
            if (!all_algos && a != PC_ALGO_EDGE && a != PC_ALGO_BILINEAR && a != PC_ALGO_MLRI)
                continue;
            for (int v = PC_VARIANT_2PX; v <= PC_VARIANT_4PX; v++) {
                if (a == PC_ALGO_MLRI && v == PC_VARIANT_4PX)
                    continue;
                int r = pc_gpu_set_algo(g, (pc_algo_id)a, (pc_variant)v, PC_CFA_GBRG, (pc_pixfmt)fmt,
                                        PC_MATRIX_BT709, PC_RANGE_LIMITED, err, sizeof err);
                dev_poison(&dg, 0x5A);
                tu_pic_fill(&hg, 0xA5);
                r = r ? r : pc_gpu_debayer(g, 0, &ds, err, sizeof err);
                r = r ? r : pc_gpu_download_async(g, 0, &ds, &hs, err, sizeof err);
                r = r ? r : pc_gpu_debayer(g, 0, &dg, err, sizeof err);
                r = r ? r : pc_gpu_download_async(g, 0, &dg, &hg, err, sizeof err);
                r = r ? r : pc_gpu_slot_wait(g, 0, err, sizeof err);
                long nd = r ? -1 : tu_grid_compare(&hs, &hg);
                TAP_CHECK(nd == 0, "grid %dx%d of %dx%d cameras (%dx%d), %s %s %s: %ld samples differ from the stacked "
                          "picture's%s%s", cols, ncam / cols, w, sh, dg.width, dg.height, pc_algo_get(a)->name,
                          pc_variant_name((pc_variant)v), pc_pixfmt_name((pc_pixfmt)fmt), nd, r ? " -- " : "",
                          r ? err : "");
            }
        }
        if (!shaped)
            TAP_CHECK(0, "grid %dx%d of %dx%d cameras: pictures %s", cols, ncam / cols, w, sh, rc ? err : "not shaped");
        pc_gpu_picture_free(g, &ds);
        pc_gpu_picture_free(g, &dg);
        tu_pic_free(&hs);
        tu_pic_free(&hg);
    }
    if (rc)
        TAP_CHECK(0, "grid %dx%d: %s", w, h, err);
    free(rgb);
    free(bay);
    pc_gpu_close(g);
}

int main(void)
{
    int ndev = pc_gpu_device_count();
    if (ndev == 0)
        return tap_skip_all("no CUDA device: cudaGetDeviceCount found none (or built without CUDA)");

    test_bad_args();

    /* Photographs, if the caller has PPMs for us. */
    const char *dir = getenv("PC_TEST_IMAGES");
    const char *names[] = {"astronaut", "coffee"};
    uint8_t *photo[2] = {NULL, NULL};
    int pw[2] = {0, 0}, ph[2] = {0, 0};
    for (int i = 0; i < 2 && dir; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.ppm", dir, names[i]);
        photo[i] = tu_load_ppm(path, &pw[i], &ph[i]);
        if (!photo[i])
            tap_diag("no photograph %s (PC_TEST_IMAGES)", path);
    }
    if (!dir)
        tap_diag("PC_TEST_IMAGES not set: photographs skipped, synthetic photograph only");

    static const int sizes[][2] = {{8, 8}, {10, 8}, {24, 12}, {1030, 22}, {2042, 1082}, {2040, 5400}};
    for (unsigned si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int w = sizes[si][0], h = sizes[si][1];
        int small = w * h <= 1030 * 22;
        pc_gpu *g;
        if (pc_gpu_open(&g, 0, w, h, 2, err, sizeof err)) {
            TAP_CHECK(0, "pc_gpu_open %dx%d: %s", w, h, err);
            continue;
        }
        if (si == 0)
            tap_diag("device: %s", pc_gpu_device_name(g));
        pc_picture dev, host;
        pc_gpu_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &dev, err, sizeof err);
        tu_pic_alloc(&host, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 16);
        refjob *rj = calloc(1, sizeof *rj);
        rj->w = w;
        rj->h = h;
        uint8_t *bay[4], *rgb = malloc((size_t)w * h * 3);
        for (int c = 0; c < 4; c++) {
            bay[c] = malloc((size_t)w * h);
            rj->bayer[c] = bay[c];
            for (int a = 0; a < PC_ALGO_COUNT; a++)
                tu_pic_alloc(&rj->out[c][a], PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
        }
        for (int kind = 0; kind < 4; kind++) {
            const char *what = kind == 0 ? "noise" : kind == 1 ? "synthetic photo" : names[kind - 2];
            if (kind >= 2 && !photo[kind - 2])
                continue;
            if (kind == 1)
                tu_synth(rgb, w, h, 99u);
            for (int c = 0; c < 4; c++) {
                if (kind == 0)
                    tu_noise(bay[c], (size_t)w * h, 4242u + 17 * si + c);
                else if (kind == 1)
                    tu_mosaic(rgb, w, h, bay[c], w, h, (pc_cfa)c);
                else
                    tu_mosaic(photo[kind - 2], pw[kind - 2], ph[kind - 2], bay[c], w, h, (pc_cfa)c);
            }
            if (refs_compute(rj)) {
                TAP_CHECK(0, "reference failed at %dx%d", w, h);
                continue;
            }
            for (int c = 0; c < 4; c++) {
                if (upload(g, c & 1, bay[c], w, h)) {
                    TAP_CHECK(0, "upload %dx%d: %s", w, h, err);
                    continue;
                }
                for (int a = 0; a < PC_ALGO_COUNT; a++)
                    for (int v = PC_VARIANT_2PX; v <= PC_VARIANT_4PX; v++) {
                        if (a == PC_ALGO_MLRI && v == PC_VARIANT_4PX)
                            continue; /* one code path, no variants */
                        run_one(g, c & 1, (pc_algo_id)a, (pc_variant)v, (pc_cfa)c, 0, &dev, &host, &rj->out[c][a],
                                what);
                        if (small && kind == 0 && a != PC_ALGO_MLRI) {
                            static const int ths[] = {4, 12, 64};
                            for (int t = 0; t < 3; t++)
                                run_one(g, c & 1, (pc_algo_id)a, (pc_variant)v, (pc_cfa)c, ths[t], &dev, &host,
                                        &rj->out[c][a], what);
                        }
                    }
            }
        }
        /* I420, RGB24 and RGBX32 spot checks (noise, RGGB and BGGR, full
         * range BT.601). */
        if (si == 1 || si == 3 || si == 5) {
            static const pc_pixfmt spot[] = {PC_FMT_RGB24, PC_FMT_I420, PC_FMT_RGBX32};
            for (int fi = 0; fi < 3; fi++) {
                const pc_pixfmt fmt = spot[fi];
                pc_picture d2, h2, r2;
                pc_gpu_picture_alloc(g, (pc_pixfmt)fmt, PC_MATRIX_BT601, PC_RANGE_FULL, w, h, &d2, err, sizeof err);
                tu_pic_alloc(&h2, (pc_pixfmt)fmt, PC_MATRIX_BT601, PC_RANGE_FULL, w, h, 8);
                tu_pic_alloc(&r2, (pc_pixfmt)fmt, PC_MATRIX_BT601, PC_RANGE_FULL, w, h, 0);
                for (int c = 0; c < 4; c += 3) {
                    tu_noise(bay[c], (size_t)w * h, 555u + c);
                    upload(g, 0, bay[c], w, h);
                    pc_bayer src = {bay[c], (size_t)w, w, h, (pc_cfa)c, 0};
                    for (int a = 0; a < PC_ALGO_COUNT; a++) {
                        if (si == 5 && a != PC_ALGO_EDGE && a != PC_ALGO_BILINEAR && a != PC_ALGO_MLRI)
                            continue;
                        if (a == PC_ALGO_MLRI && (long)w * h > 1000000) { /* reference via the CPU backend */
                            pc_cpu *cpu = NULL;
                            if (pc_cpu_open(&cpu, 0, w, h, err, sizeof err) == 0)
                                pc_cpu_debayer(cpu, (pc_algo_id)a, &src, &r2, err, sizeof err);
                            pc_cpu_close(cpu);
                            run_one(g, 0, (pc_algo_id)a, PC_VARIANT_2PX, (pc_cfa)c, 0, &d2, &h2, &r2, "noise");
                            continue;
                        }
                        pc_ref_debayer((pc_algo_id)a, &src, &r2, err, sizeof err);
                        for (int v = PC_VARIANT_2PX; v <= PC_VARIANT_4PX; v++)
                            run_one(g, 0, (pc_algo_id)a, (pc_variant)v, (pc_cfa)c, 0, &d2, &h2, &r2, "noise");
                    }
                }
                pc_gpu_picture_free(g, &d2);
                tu_pic_free(&h2);
                tu_pic_free(&r2);
            }
        }
        for (int c = 0; c < 4; c++) {
            free(bay[c]);
            for (int a = 0; a < PC_ALGO_COUNT; a++)
                tu_pic_free(&rj->out[c][a]);
        }
        free(rj);
        free(rgb);
        tu_pic_free(&host);
        pc_gpu_picture_free(g, &dev);
        pc_gpu_close(g);
    }
    test_in_flight(2040, 5400);
    test_colour(262, 24);
    test_colour(2040, 1080);
    test_grid(264, 26, 6, 3, 1);
    test_grid(264, 26, 6, 2, 1);
    test_grid(2040, 1080, 16, 4, 0);
    free(photo[0]);
    free(photo[1]);
    return tap_done();
}
