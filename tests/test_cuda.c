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
 *
 * net (the learned demosaic, fp16 tensor cores) has its own checks and
 * rule (test_net, below); "test_cuda net" runs those alone.
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
#include "net.h"
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
        if (algo == PC_ALGO_NET)
            continue; /* its own checks (test_net): a reference of minutes per frame */
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
            if (algo == PC_ALGO_NET)
                continue; /* the colour stage is before any algorithm; net's own checks: test_net */
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
            if ((!all_algos && a != PC_ALGO_EDGE && a != PC_ALGO_BILINEAR && a != PC_ALGO_MLRI) || a == PC_ALGO_NET)
                continue; /* net: its grids in test_net */
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


/* --- net: the learned demosaic on the tensor cores (docs/net.md) ---------
 * fp16 weights and activations: its rule against the C reference is every
 * sample but at most 0.1 % within 1 code value (the count further, the
 * number differing and the largest difference are printed). Small frames
 * against the reference itself, on every phase and format; photographs
 * and 2040x5400 (five cameras) against the CPU backend, which is the
 * reference's on all but ~0.001 % of the samples (tests/test_net.c), the
 * reference taking minutes there. */
static int net_rule(long over1, const pc_picture *ref)
{
    return over1 >= 0 && over1 * 1000 <= tu_pic_samples(ref);
}

/* Runs net on the GPU over bay (uploaded to slot 0) into dev, downloaded
 * to host. */
static int net_gpu(pc_gpu *g, const uint8_t *bay, int w, int h, pc_cfa cfa, const pc_picture *dev,
                   const pc_picture *host)
{
    int rc = upload(g, 0, bay, w, h) ? PC_EDEVICE : 0;
    rc = rc ? rc : pc_gpu_set_algo(g, PC_ALGO_NET, PC_VARIANT_AUTO, cfa, dev->fmt, dev->matrix, dev->range, err,
                                   sizeof err);
    dev_poison(dev, 0x5A);
    tu_pic_fill(host, 0xA5);
    rc = rc ? rc : pc_gpu_debayer(g, 0, dev, err, sizeof err);
    rc = rc ? rc : pc_gpu_download_async(g, 0, dev, host, err, sizeof err);
    rc = rc ? rc : pc_gpu_slot_wait(g, 0, err, sizeof err);
    return rc;
}

/* A frame of ncam cameras of w x ch, mosaiced from rgb (iw x ih, mirror-
 * tiled), on the GPU against the reference (use_cpu: the CPU backend),
 * once with each CONV kernel the GPU runs (pc_gpu_net_convs: wgmma on
 * Hopper, every mma.sync tile), the same rule for each; on small frames
 * also every output format from the same network output (the automatic
 * kernel). */
static void net_case(const pc_net *net, const uint8_t *rgb, int iw, int ih, int w, int ch, int ncam, pc_cfa cfa,
                     int use_cpu, int formats, const char *what)
{
    const int h = ch * ncam;
    uint8_t *bay = malloc((size_t)w * h);
    tu_mosaic(rgb, iw, ih, bay, w, h, cfa);
    pc_bayer src = {bay, (size_t)w, w, h, cfa, ncam > 1 ? ch : 0};
    pc_picture ref, host, dev;
    tu_pic_alloc(&ref, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
    tu_pic_alloc(&host, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 8);
    int rc;
    if (use_cpu) {
        pc_cpu *cpu = NULL;
        rc = pc_cpu_open(&cpu, 0, w, h, err, sizeof err);
        if (!rc)
            pc_cpu_set_net(cpu, net);
        rc = rc ? rc : pc_cpu_debayer(cpu, PC_ALGO_NET, &src, &ref, err, sizeof err);
        pc_cpu_close(cpu);
    } else {
        rc = pc_net_ref(net, &src, &ref, err, sizeof err);
    }
    TAP_CHECK(rc == 0, "net %s %s %dx%d (%d camera%s): the %s: %s", pc_cfa_name(cfa), what, w, h, ncam,
              ncam > 1 ? "s" : "", use_cpu ? "CPU backend" : "C reference", rc ? err : "ok");
    pc_gpu *g = NULL;
    rc = rc ? rc : pc_gpu_open(&g, 0, w, h, 1, err, sizeof err);
    rc = rc ? rc : pc_gpu_set_cam_rows(g, src.cam_rows, err, sizeof err);
    rc = rc ? rc : pc_gpu_set_net(g, net, err, sizeof err);
    rc = rc ? rc : pc_gpu_picture_alloc(g, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &dev, err, sizeof err);
    pc_gpu_net_conv cv[PC_GPU_NET_MAX_CONVS];
    const int nconv = rc ? 1 : pc_gpu_net_convs(g, cv, PC_GPU_NET_MAX_CONVS, err, sizeof err);
    if (nconv < 1)
        rc = nconv;
    int md = 0;
    for (int c = nconv - 1; c >= 0; c--) { /* the automatic kernel last: the formats below use its output */
        char kname[40] = "?";
        if (!rc)
            snprintf(kname, sizeof kname, "%s %dx%d%s", cv[c].wgmma ? "wgmma" : "mma.sync", cv[c].warps, cv[c].bufs,
                     c == 0 ? ", automatic" : "");
        int r = rc ? rc : pc_gpu_net_set_conv(g, c, err, sizeof err);
        r = r ? r : net_gpu(g, bay, w, h, cfa, &dev, &host);
        md = 0;
        const long over = r ? -1 : tu_count_over(&host, &ref, 1, &md), nd = r ? -1 : tu_compare(&host, &ref, &md);
        TAP_CHECK(net_rule(over, &ref), "net %s %s %dx%d (%d camera%s) rgb24, CONV %s, against the %s: %ld of %ld "
                  "samples off by more than 1 (at most 0.1 %%); %ld differ (%.3f %%), max %d%s%s", pc_cfa_name(cfa),
                  what, w, h, ncam, ncam > 1 ? "s" : "", kname, use_cpu ? "CPU backend" : "reference", over,
                  tu_pic_samples(&ref), nd, 100.0 * nd / tu_pic_samples(&ref), md, r ? " -- " : "", r ? err : "");
        rc = rc ? rc : r;
    }
    /* the other formats: the final pass's writer of the same RGB (the
     * network's arithmetic is the same whatever the format) */
    for (int fi = 0; formats && fi < 4 && !rc; fi++) {
        static const pc_pixfmt fmts[4] = {PC_FMT_RGBX32, PC_FMT_NV12, PC_FMT_I420, PC_FMT_NV12};
        pc_picture d2, h2, want;
        /* a grid of the cameras: theirs must be a multiple of
         * PC_GRID_TILE_ALIGN wide (pc_picture_as_grid, as the layout
         * settings ask), so not every case has one (the 72-wide cameras of
         * every phase and the 260-wide ones do) */
        const int grid = fi == 3 && ncam > 1 && w % PC_GRID_TILE_ALIGN == 0;
        if (fi == 3 && !grid)
            break;
        rc = pc_gpu_picture_alloc(g, fmts[fi], PC_MATRIX_BT601, PC_RANGE_FULL, w, h, &d2, err, sizeof err);
        tu_pic_alloc(&h2, fmts[fi], PC_MATRIX_BT601, PC_RANGE_FULL, w, h, 8);
        tu_pic_alloc(&want, fmts[fi], PC_MATRIX_BT601, PC_RANGE_FULL, w, h, 0);
        if (grid && !rc && (pc_picture_as_grid(&d2, ncam, ch) || pc_picture_as_grid(&h2, ncam, ch) ||
                            pc_picture_as_grid(&want, ncam, ch))) {
            snprintf(err, sizeof err, "pc_picture_as_grid refused %d cameras of %dx%d", ncam, w, ch);
            rc = PC_EINVAL;
        }
        rc = rc ? rc : net_gpu(g, bay, w, h, cfa, &d2, &h2);
        long d = -1;
        if (!rc && fmts[fi] == PC_FMT_RGBX32) {
            d = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    const uint8_t *a = h2.plane[0] + (size_t)y * h2.pitch[0] + 4 * (size_t)x;
                    const uint8_t *b = host.plane[0] + (size_t)y * host.pitch[0] + 3 * (size_t)x;
                    d += a[0] != b[0] || a[1] != b[1] || a[2] != b[2] || a[3] != 255;
                }
        } else if (!rc && !pc_rgb_to_yuv(host.plane[0], host.pitch[0], &want, err, sizeof err)) {
            d = tu_compare(&h2, &want, &md);
        }
        TAP_CHECK(d == 0, "net %s %s %dx%d %s%s: the rgb24 output through the final pass's writer (%ld samples "
                  "differ)%s%s", pc_cfa_name(cfa), what, w, h, pc_pixfmt_name(fmts[fi]), grid ? " grid" : "", d,
                  rc ? " -- " : "", rc ? err : "");
        pc_gpu_picture_free(g, &d2);
        tu_pic_free(&h2);
        tu_pic_free(&want);
    }
    if (g)
        pc_gpu_picture_free(g, &dev);
    pc_gpu_close(g);
    tu_pic_free(&ref);
    tu_pic_free(&host);
    free(bay);
}

/* GPU only: camera k of a stacked frame equals camera k demosaiced alone;
 * new weights take effect, refused ones leave the old in force. */
static void net_device_only(const pc_net *net, int w, int ch, int ncam)
{
    const int h = ch * ncam, k = ncam - 1;
    int md = 0;
    uint8_t *rgb = malloc((size_t)w * h * 3), *bay = malloc((size_t)w * h);
    tu_synth(rgb, w, h, 1234u);
    tu_mosaic(rgb, w, h, bay, w, h, PC_CFA_GRBG);
    pc_gpu *g = NULL, *g1 = NULL;
    pc_picture dev, host, dev1, host1;
    tu_pic_alloc(&host, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
    tu_pic_alloc(&host1, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, ch, 0);
    int rc = pc_gpu_open(&g, 0, w, h, 1, err, sizeof err);
    rc = rc ? rc : pc_gpu_set_cam_rows(g, ch, err, sizeof err);
    rc = rc ? rc : pc_gpu_picture_alloc(g, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &dev, err, sizeof err);
    rc = rc ? rc : pc_gpu_set_net(g, net, err, sizeof err);
    rc = rc ? rc : net_gpu(g, bay, w, h, PC_CFA_GRBG, &dev, &host);
    int rc1 = pc_gpu_open(&g1, 0, w, ch, 1, err, sizeof err);
    rc1 = rc1 ? rc1 : pc_gpu_picture_alloc(g1, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, ch, &dev1, err,
                                           sizeof err);
    rc1 = rc1 ? rc1 : pc_gpu_set_net(g1, net, err, sizeof err);
    rc1 = rc1 ? rc1 : net_gpu(g1, bay + (size_t)k * ch * w, w, ch, PC_CFA_GRBG, &dev1, &host1);
    long nd = 0;
    for (int y = 0; y < ch && !rc && !rc1; y++)
        nd += memcmp(host.plane[0] + (size_t)(k * ch + y) * host.pitch[0], host1.plane[0] + (size_t)y * host1.pitch[0],
                     3 * (size_t)w) != 0;
    TAP_CHECK(!rc && !rc1 && nd == 0, "net %dx%d, %d cameras: camera %d alone is the stacked frame's (%ld rows "
              "differ)%s%s", w, h, ncam, k, nd, rc || rc1 ? " -- " : "", rc || rc1 ? err : "");
    if (!rc) {
        /* weights: a model the kernels cannot take is refused and the old
         * stay; changed weights change the picture; the old ones back give
         * it back */
        pc_net narrow = *net, shifted = *net;
        narrow.width = 32;
        float ob[3] = {net->out.b[0] + 0.25f, net->out.b[1] + 0.25f, net->out.b[2] + 0.25f};
        shifted.out.b = ob;
        err[0] = 0;
        int r = pc_gpu_set_net(g, &narrow, err, sizeof err);
        TAP_CHECK(r == PC_EINVAL && strstr(err, "width"), "net: a model of width 32 refused: %s", err);
        pc_picture h2;
        tu_pic_alloc(&h2, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
        r = net_gpu(g, bay, w, h, PC_CFA_GRBG, &dev, &h2);
        TAP_CHECK(r == 0 && tu_compare(&h2, &host, &md) == 0, "net: the weights in force stay after a refusal");
        r = pc_gpu_set_net(g, &shifted, err, sizeof err);
        r = r ? r : net_gpu(g, bay, w, h, PC_CFA_GRBG, &dev, &h2);
        long brighter = 0, n = (long)w * h * 3;
        for (int y = 0; y < h && !r; y++)
            for (int x = 0; x < 3 * w; x++)
                brighter += h2.plane[0][(size_t)y * h2.pitch[0] + x] > host.plane[0][(size_t)y * host.pitch[0] + x];
        TAP_CHECK(r == 0 && brighter > n / 2, "net: output biases + 0.25 take effect at once (%ld of %ld samples "
                  "brighter)%s%s", brighter, n, r ? " -- " : "", r ? err : "");
        r = pc_gpu_set_net(g, net, err, sizeof err);
        r = r ? r : net_gpu(g, bay, w, h, PC_CFA_GRBG, &dev, &h2);
        TAP_CHECK(r == 0 && tu_compare(&h2, &host, &md) == 0, "net: the published weights back give the same "
                  "picture%s%s", r ? " -- " : "", r ? err : "");
        tu_pic_free(&h2);
    }
    if (g)
        pc_gpu_picture_free(g, &dev);
    if (g1)
        pc_gpu_picture_free(g1, &dev1);
    pc_gpu_close(g);
    pc_gpu_close(g1);
    tu_pic_free(&host);
    tu_pic_free(&host1);
    free(rgb);
    free(bay);
}

static void test_net(uint8_t *const photo[2], const int pw[2], const int ph[2])
{
    pc_net *net = NULL;
    const char *path = pc_net_default_path();
    int rc = pc_net_load(&net, path, err, sizeof err);
    TAP_CHECK(rc == 0, "net weights %s: %s", path, rc ? err : "loaded");
    if (rc)
        return;
    /* the CONV kernels this GPU runs: on a Hopper GPU (compute capability
     * 9.0) of a build with gpu_arch 90 the wgmma ones come first (the
     * automatic choice); no wgmma anywhere else */
    pc_gpu *g = NULL;
    {
        pc_gpu_net_conv cv[PC_GPU_NET_MAX_CONVS];
        int major = 0, minor = 0;
#if PANOCAP_HAVE_CUDA
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
            major = prop.major;
            minor = prop.minor;
        }
#endif
        const int hopper = major == 9 && minor == 0;
        rc = pc_gpu_open(&g, 0, 64, 64, 1, err, sizeof err);
        const int n = rc ? rc : pc_gpu_net_convs(g, cv, PC_GPU_NET_MAX_CONVS, err, sizeof err);
        int nwg = 0, order = 1;
        char list[256] = "";
        for (int i = 0; i < n; i++) {
            nwg += cv[i].wgmma;
            order = order && (i == 0 || cv[i].wgmma <= cv[i - 1].wgmma);
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s %dx%d (%d/SM)", i ? ", " : "",
                     cv[i].wgmma ? "wgmma" : "mma.sync", cv[i].warps, cv[i].bufs, cv[i].blocks_per_sm);
        }
        const int want = hopper && PC_TEST_NET_WG;
        TAP_CHECK(n > 0 && order && (nwg > 0) == want, "net CONV kernels on this GPU (compute capability %d.%d, "
                  "build %s gpu_arch 90): %s%s%s", major, minor, PC_TEST_NET_WG ? "with" : "without", list,
                  n > 0 ? "" : " -- ", n > 0 ? "" : err);
        pc_gpu_close(g);
        g = NULL;
    }
    /* refused: rows per camera that do not divide the frame; 17 cameras */
    rc = pc_gpu_open(&g, 0, 64, 136, 1, err, sizeof err);
    TAP_CHECK(rc == 0 && pc_gpu_set_cam_rows(g, 10, err, sizeof err) == PC_EINVAL, "cam_rows 10 of 136 refused: %s",
              err);
    pc_picture d;
    int r = rc ? rc : pc_gpu_set_cam_rows(g, 8, err, sizeof err);
    r = r ? r : pc_gpu_picture_alloc(g, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, 64, 136, &d, err, sizeof err);
    r = r ? r : pc_gpu_set_algo(g, PC_ALGO_NET, PC_VARIANT_AUTO, PC_CFA_RGGB, PC_FMT_RGB24, PC_MATRIX_BT709,
                                PC_RANGE_LIMITED, err, sizeof err);
    err[0] = 0;
    TAP_CHECK(r == 0 && pc_gpu_debayer(g, 0, &d, err, sizeof err) == PC_EINVAL && strstr(err, "at most 16"),
              "net: 17 cameras of 8 rows refused: %s", err);
    if (!r)
        pc_gpu_picture_free(g, &d);
    pc_gpu_close(g);
    const int sw = 72, sh = 80;
    uint8_t *syn = malloc((size_t)sw * sh * 3);
    tu_synth(syn, sw, sh, 77u);
    for (int c = 0; c < 4; c++)
        net_case(net, syn, sw, sh, 72, 40, 2, (pc_cfa)c, 0, 1, "synthetic photo");
    net_case(net, syn, sw, sh, 8, 8, 1, PC_CFA_RGGB, 0, 1, "synthetic photo");
    net_case(net, syn, sw, sh, 24, 12, 1, PC_CFA_BGGR, 0, 1, "synthetic photo");
    net_case(net, syn, sw, sh, 262, 38, 2, PC_CFA_GRBG, 0, 1, "synthetic photo");
    net_case(net, syn, sw, sh, 260, 38, 2, PC_CFA_GBRG, 0, 1, "synthetic photo");
    free(syn);
    static const char *const names[2] = {"astronaut", "coffee"};
    for (int i = 0; i < 2; i++)
        if (photo[i])
            net_case(net, photo[i], pw[i], ph[i], 256, 128, 2, (pc_cfa)(1 + i), 0, 0, names[i]);
    /* a Kodak and a McMaster photograph whole (tools/gpu-net converts
     * them to PPM into $PC_TEST_IMAGES), against the CPU backend */
    const char *dir = getenv("PC_TEST_IMAGES");
    static const char *const evals[2] = {"kodim05", "mcm01"};
    for (int i = 0; i < 2 && dir; i++) {
        char pth[1024];
        int ew = 0, eh = 0;
        snprintf(pth, sizeof pth, "%s/%s.ppm", dir, evals[i]);
        uint8_t *img = tu_load_ppm(pth, &ew, &eh);
        if (!img) {
            tap_diag("no photograph %s (PC_TEST_IMAGES)", pth);
            continue;
        }
        net_case(net, img, ew, eh, ew & ~1, eh & ~1, 1, PC_CFA_RGGB, 1, 0, evals[i]);
        free(img);
    }
    /* 2040x5400: five cameras, as the daemon's */
    uint8_t *big = malloc((size_t)2040 * 5400 * 3);
    tu_synth(big, 2040, 5400, 99u);
    net_case(net, big, 2040, 5400, 2040, 1080, 5, PC_CFA_RGGB, 1, 1, "synthetic photo");
    free(big);
    if (photo[0])
        net_case(net, photo[0], pw[0], ph[0], 2040, 1080, 5, PC_CFA_GBRG, 1, 0, names[0]);
    /* sixteen cameras (the largest frame the planes are sized for) */
    net_device_only(net, 2040, 1080, 16);
    pc_net_free(net);
}

int main(int argc, char **argv)
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
    /* "test_cuda net": the learned demosaic's checks alone (tools/gpu-net) */
    if (argc > 1 && strcmp(argv[1], "net") == 0) {
        test_net(photo, pw, ph);
        free(photo[0]);
        free(photo[1]);
        return tap_done();
    }

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
                        if ((a == PC_ALGO_MLRI && v == PC_VARIANT_4PX) || a == PC_ALGO_NET)
                            continue; /* one code path, no variants; net: test_net */
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
                        if ((si == 5 && a != PC_ALGO_EDGE && a != PC_ALGO_BILINEAR && a != PC_ALGO_MLRI) ||
                            a == PC_ALGO_NET)
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
    test_net(photo, pw, ph);
    free(photo[0]);
    free(photo[1]);
    return tap_done();
}
