/* panocap-bench - times the demosaicing backends on a full panorama frame.
 *
 *   panocap-bench [--backend cuda|cpu] [--algo NAME|all] [--variant 2px|4px|auto|all]
 *                 [--width 2040 --height 5400] [--iters N] [--format table|tsv]
 *                 [--threads N] [--device N] [--colour FORMAT] [--help] [--version]
 *
 * CUDA: per algorithm and variant, the median and p99 GPU time per frame
 * (CUDA events around each graph replay, after a warm-up, rotating 4
 * distinct input frames and 4 output pictures so the 50-60 MB L2 holds
 * neither), the bytes the frame must move at least (Bayer in + NV12 out)
 * over that time, and the memory floor measured in the same run: a
 * device-to-device cudaMemcpy of (input + output) / 2 bytes, since a copy
 * reads and writes every byte. Also the peak copy bandwidth (1 GiB copy)
 * and, where NPP is built in, NVIDIA NPP's bilinear debayer
 * (nppiCFAToRGB_8u_C1C3R) + RGB -> YUV420 on the same frame as a peer.
 * CPU: the multi-threaded C backend, ms per frame, with its thread count;
 * net (the learned demosaic, --weights FILE or the installed file) each
 * camera on its own as in the daemon, 3 iterations unless --iters says
 * otherwise (seconds per frame here), and its GFLOP/s. On CUDA net runs on
 * the tensor cores (cuda_net.cuh), its cameras from --cam-rows (default:
 * five where the height splits so), and its TFLOP/s is printed too, then
 * every CONV kernel the GPU runs (wgmma on Hopper, the mma.sync tiles)
 * side by side with the GPU time of each launch (net_bench.c).
 *
 * TSV (stdout): algo variant passes median_us p99_us floor_us ratio; the
 * other figures go to stderr as '#' lines.
 *
 * Exit status: 0, 1 on a failure (no device, ...), 64 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "colour.h"
#include "debayer.h"
#include "debayer_cuda.h"
#include "net.h"
#include "net_bench.h"
#include "panocap_config.h"
#include "render_bench.h"
#include "render_rig_bench.h"
#include "tool_cli.h"

#if PANOCAP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#if PANOCAP_HAVE_NPP
#include <nppi_color_conversion.h>
#endif

typedef struct opts {
    const char *backend, *algo, *variant, *format;
    int width, height, iters, threads, device;
    const char *colour; /* --colour FORMAT: time with the colour stage on */
    int render;         /* --render: the render family instead (render_bench.c) */
    const char *rig;    /* --render --rig FILE.pto: the CPU renderer on that rig's pictures (render_rig_bench.c) */
    const char *peer_data; /* --peer-data DIR: with --rig, the inputs of tools/cpu-render-peers */
    int iters_set;      /* --iters given */
    const char *weights; /* --weights FILE: net's weights (NULL: the installed file) */
    int cam_rows;        /* --cam-rows N: the frame's cameras for net (-1: 5 slabs where they fit, 0: one) */
    int mlri_tiles[4];   /* --mlri-tiles DIR,RB[,LEAN] (pc_gpu_mlri_set_tiles); [3]: given */
} opts;

static void usage(FILE *f)
{
    char names[256];
    pc_algo_names(names, sizeof names);
    fprintf(f,
            "usage: panocap-bench [--backend cuda|cpu] [--algo NAME|all] [--variant 2px|4px|auto|all]\n"
            "                     [--width 2040 --height 5400] [--iters N] [--format table|tsv]\n"
            "                     [--threads N (cpu)] [--device N (cuda)] [--colour BayerRG8|BayerRG12p|...]\n"
            "                     [--weights FILE (net)] [--cam-rows N (net; 0 = one image)] [--help] [--version]\n"
            "                     [--mlri-tiles DIR,RB[,LEAN] (cuda, mlri: rows per CTA, lean DIR 0|1)]\n"
            "       panocap-bench --render [--backend cpu] [--iters N] [--threads N] [--device N]\n"
            "       panocap-bench --render --rig FILE.pto [--peer-data DIR] [--iters N (20)] [--threads N]\n"
            "--render: the panorama (5 x 2040x1080 -> 8600x1300) and 1920x1080 views rendered from a synthetic\n"
            "          rig: GPU kernels side by side (rays on the fly, precomputed maps, the per-camera peer; the\n"
            "          panorama blended multiband; the views and the panorama sampled bicubic) with PSNR against\n"
            "          the C reference, then the CPU reference and renderer; then a moving view (set_view on\n"
            "          the host, update + render on the GPU), the activity map at 1/8 of the panorama and the\n"
            "          cameras' RGB -> NV12 at 2040x5400;\n"
            "          --backend cpu: CPU only\n"
            "--rig:    the CPU renderer on that rig's own pictures (its i lines' files): the C reference once,\n"
            "          then 2 threads, every CPU and --threads N, checked against it and timed into I420;\n"
            "          --peer-data DIR writes what tools/cpu-render-peers needs (maps, tables, reference)\n"
            "--colour: the colour stage on (docs/colour.md): 5 cameras with their own tables and colour\n"
            "          matrices; cuda prints the colour pass time per frame, cpu includes it per frame\n"
            "algorithms: %s\n",
            names);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and p99 of n samples (sorts them). */
static void stats(double *v, int n, double *med, double *p99)
{
    qsort(v, n, sizeof *v, cmp_double);
    *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    int k = (int)(0.99 * (n - 1) + 0.5);
    *p99 = v[k];
}

static int tsv(const opts *o) { return strcmp(o->format, "tsv") == 0; }

/* Info lines: on stdout for the table, as '#' lines on stderr for TSV. */
#define INFO(o, ...)                                                                               \
    do {                                                                                           \
        FILE *f_ = tsv(o) ? stderr : stdout;                                                       \
        if (tsv(o))                                                                                \
            fputs("# ", f_);                                                                       \
        fprintf(f_, __VA_ARGS__);                                                                  \
    } while (0)

static void header(const opts *o, const char *unit)
{
    if (tsv(o))
        printf("algo\tvariant\tpasses\tmedian_us\tp99_us\tfloor_us\tratio\n");
    else
        printf("%-17s %-7s %6s %5s %10s %10s %8s %9s %7s %10s %9s\n", "algo", "variant", "passes", "rows",
               unit[0] == 'u' ? "median_us" : "median_ms", unit[0] == 'u' ? "p99_us" : "p99_ms", "GB/s",
               "floor_us", "ratio", "gtx680_us", "vs_paper");
}

static void row(const opts *o, const pc_algo_desc *d, const char *var, int rows, double med, double p99,
                double floor_us, double bytes, int ms)
{
    double scale = ms ? 1000.0 : 1.0; /* med/p99 are in us */
    if (tsv(o)) {
        printf("%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.3f\n", d->name, var, d->passes, med, p99, floor_us,
               floor_us > 0 ? med / floor_us : 0.0);
        return;
    }
    printf("%-17s %-7s %6d %5d %10.2f %10.2f %8.1f %9.2f %7.2f %10.0f %8.0fx\n", d->name, var, d->passes, rows,
           med / scale, p99 / scale, bytes / (med * 1e3), floor_us, floor_us > 0 ? med / floor_us : 0.0,
           d->gtx680_us, d->gtx680_us / med);
}

/* --colour: five cameras' tables (black level, gains, sRGB) and colour
 * matrices, one band of h/5 rows each (the stacked panorama). */
#define BENCH_CAMS 5
static int colour_setup(const opts *o, const pc_rawfmt *f, pc_colour_tables *t, pc_yuv_coeffs *bands)
{
    char err[256];
    for (int c = 0; c < BENCH_CAMS; c++) {
        pc_colour_cfg cfg;
        pc_colour_cfg_init(&cfg);
        cfg.black_level = f->bits == 8 ? 4 : 64;
        cfg.wb[0] = 1.6 + 0.05 * c;
        cfg.wb[2] = 1.3;
        cfg.transfer = PC_TRANSFER_SRGB;
        static const double ccm[9] = {1.5, -0.3, -0.2, -0.2, 1.4, -0.2, -0.1, -0.4, 1.5};
        memcpy(cfg.ccm, ccm, sizeof ccm);
        if (pc_colour_tables_build(&cfg, f->bits, &t[c], err, sizeof err) ||
            pc_yuv_coeffs_ccm(PC_MATRIX_BT709, PC_RANGE_LIMITED, cfg.ccm, &bands[c], err, sizeof err)) {
            fprintf(stderr, "panocap-bench: --colour: %s\n", err);
            return 1;
        }
    }
    (void)o;
    return 0;
}

/* The frame's rows per camera for net: --cam-rows, else five cameras when
 * the height splits so, else one image (net demosaics each on its own). */
static int bench_cam_rows(const opts *o)
{
    const int h = o->height;
    return o->cam_rows >= 0 ? o->cam_rows : h % (2 * BENCH_CAMS) == 0 && h / BENCH_CAMS >= PC_MIN_DIM ? h / BENCH_CAMS : 0;
}

/* ------------------------------------------------------------------------ */
#if PANOCAP_HAVE_CUDA

#define CU(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "panocap-bench: %s failed: %s\n", #call, cudaGetErrorString(e_));      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* Times n async operations, each between two events. */
typedef struct timer {
    cudaEvent_t *ev;
    int n;
} timer;

static int timer_init(timer *t, int n)
{
    t->n = n;
    t->ev = calloc(n + 1, sizeof *t->ev);
    for (int i = 0; i <= n; i++)
        CU(cudaEventCreate(&t->ev[i]));
    return 0;
}

static int timer_collect(timer *t, double *us)
{
    CU(cudaEventSynchronize(t->ev[t->n]));
    for (int i = 0; i < t->n; i++) {
        float ms;
        CU(cudaEventElapsedTime(&ms, t->ev[i], t->ev[i + 1]));
        us[i] = ms * 1000.0;
    }
    return 0;
}

static void timer_free(timer *t)
{
    for (int i = 0; i <= t->n; i++)
        cudaEventDestroy(t->ev[i]);
    free(t->ev);
}

/* D2D copy of `bytes`, rotating 4 buffer pairs; median over iters. */
static int time_copy(cudaStream_t s, size_t bytes, int iters, double *med, double *p99)
{
    void *src[4], *dst[4];
    for (int i = 0; i < 4; i++) {
        CU(cudaMalloc(&src[i], bytes));
        CU(cudaMalloc(&dst[i], bytes));
        CU(cudaMemsetAsync(src[i], 0x31 + i, bytes, s));
    }
    timer t;
    if (timer_init(&t, iters))
        return 1;
    for (int i = 0; i < 8; i++)
        CU(cudaMemcpyAsync(dst[i & 3], src[i & 3], bytes, cudaMemcpyDeviceToDevice, s));
    for (int i = 0; i < iters; i++) {
        CU(cudaEventRecord(t.ev[i], s));
        CU(cudaMemcpyAsync(dst[i & 3], src[(i + 1) & 3], bytes, cudaMemcpyDeviceToDevice, s));
    }
    CU(cudaEventRecord(t.ev[iters], s));
    double *us = malloc(iters * sizeof *us);
    int rc = timer_collect(&t, us);
    if (!rc)
        stats(us, iters, med, p99);
    free(us);
    timer_free(&t);
    for (int i = 0; i < 4; i++) {
        cudaFree(src[i]);
        cudaFree(dst[i]);
    }
    return rc;
}

static int peak_copy(cudaStream_t s, double *gbps)
{
    size_t bytes = (size_t)1 << 30;
    void *a, *b;
    CU(cudaMalloc(&a, bytes));
    CU(cudaMalloc(&b, bytes));
    CU(cudaMemsetAsync(a, 1, bytes, s));
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int i = 0; i < 4; i++) {
        float ms;
        CU(cudaEventRecord(e0, s));
        CU(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
        CU(cudaEventRecord(e1, s));
        CU(cudaEventSynchronize(e1));
        CU(cudaEventElapsedTime(&ms, e0, e1));
        if (i && ms < best)
            best = ms;
    }
    *gbps = 2.0 * bytes / (best * 1e6); /* bytes read + written */
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return 0;
}

#if PANOCAP_HAVE_NPP
/* NPP bilinear debayer + RGB -> YUV420 (planar), rotating 4 inputs. */
static int time_npp(pc_gpu *g, int w, int h, int iters, double *med_cfa, double *med_all)
{
    cudaStream_t s = (cudaStream_t)pc_gpu_stream(g);
    NppStreamContext ctx;
    memset(&ctx, 0, sizeof ctx);
    struct cudaDeviceProp prop;
    int dev;
    CU(cudaGetDevice(&dev));
    CU(cudaGetDeviceProperties(&prop, dev));
    ctx.hStream = s;
    ctx.nCudaDeviceId = dev;
    ctx.nMultiProcessorCount = prop.multiProcessorCount;
    ctx.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
    ctx.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
    ctx.nSharedMemPerBlock = prop.sharedMemPerBlock;
    ctx.nCudaDevAttrComputeCapabilityMajor = prop.major;
    ctx.nCudaDevAttrComputeCapabilityMinor = prop.minor;
    CU(cudaStreamGetFlags(s, &ctx.nStreamFlags));
    Npp8u *rgb[4], *y[4], *u[4], *v[4];
    size_t prgb, py, puv;
    for (int i = 0; i < 4; i++) {
        CU(cudaMallocPitch((void **)&rgb[i], &prgb, 3 * (size_t)w, h));
        CU(cudaMallocPitch((void **)&y[i], &py, w, h));
        CU(cudaMallocPitch((void **)&u[i], &puv, w / 2, h / 2));
        CU(cudaMallocPitch((void **)&v[i], &puv, w / 2, h / 2));
    }
    NppiSize size = {w, h};
    NppiRect roi = {0, 0, w, h};
    size_t in_pitch;
    for (int pass = 0; pass < 2; pass++) {
        timer t;
        if (timer_init(&t, iters))
            return 1;
        for (int i = -5; i < iters; i++) {
            int k = (i + 8) & 3;
            const Npp8u *in = pc_gpu_input(g, k, &in_pitch);
            if (i >= 0)
                CU(cudaEventRecord(t.ev[i], s));
            NppStatus st = nppiCFAToRGB_8u_C1C3R_Ctx(in, (int)in_pitch, size, roi, rgb[k], (int)prgb,
                                                     NPPI_BAYER_RGGB, NPPI_INTER_UNDEFINED, ctx);
            if (st == NPP_SUCCESS && pass == 1) {
                Npp8u *planes[3] = {y[k], u[k], v[k]};
                int steps[3] = {(int)py, (int)puv, (int)puv};
                NppiSize sz = {w, h};
                st = nppiRGBToYUV420_8u_C3P3R_Ctx(rgb[k], (int)prgb, planes, steps, sz, ctx);
            }
            if (st != NPP_SUCCESS) {
                fprintf(stderr, "panocap-bench: NPP call failed with status %d\n", (int)st);
                return 1;
            }
        }
        CU(cudaEventRecord(t.ev[iters], s));
        double *us = malloc(iters * sizeof *us), p99;
        if (timer_collect(&t, us))
            return 1;
        stats(us, iters, pass ? med_all : med_cfa, &p99);
        free(us);
        timer_free(&t);
    }
    for (int i = 0; i < 4; i++) {
        cudaFree(rgb[i]);
        cudaFree(y[i]);
        cudaFree(u[i]);
        cudaFree(v[i]);
    }
    return 0;
}
#endif

static int bench_cuda(const opts *o, const pc_algo_desc **algos, int nalgo, const int *vars, int nvar)
{
    char err[512];
    int w = o->width, h = o->height;
    if (pc_gpu_device_count() == 0) {
        fprintf(stderr, "panocap-bench: no CUDA device\n");
        return 1;
    }
    pc_gpu *g;
    const int cams_h = bench_cam_rows(o);
    if (pc_gpu_open(&g, o->device, w, h, 4, err, sizeof err) || pc_gpu_set_cam_rows(g, cams_h, err, sizeof err) ||
        (o->mlri_tiles[3] &&
         pc_gpu_mlri_set_tiles(g, o->mlri_tiles[0], o->mlri_tiles[1], o->mlri_tiles[2], err, sizeof err))) {
        fprintf(stderr, "panocap-bench: %s\n", err);
        return 1;
    }
    /* net: its weights converted to the device (pc_gpu_set_net) */
    pc_net *net = NULL;
    for (int a = 0; a < nalgo; a++)
        if (algos[a]->id == PC_ALGO_NET && !net) {
            const char *path = o->weights ? o->weights : pc_net_default_path();
            if (pc_net_load(&net, path, err, sizeof err) || pc_gpu_set_net(g, net, err, sizeof err)) {
                fprintf(stderr, "panocap-bench: %s\n", err);
                return 1;
            }
            INFO(o, "net: %s (%s, SHA-256 %.16s...), %d camera(s) of %d rows; %.1f GFLOP a frame\n", net->path,
                 net->name, net->sha256, cams_h ? h / cams_h : 1, cams_h ? cams_h : h,
                 pc_net_flops(net, w, h, cams_h, PC_CFA_RGGB) / 1e9);
        }
    cudaStream_t s = (cudaStream_t)pc_gpu_stream(g);
    /* 4 distinct noise frames, uploaded like camera slabs. */
    uint8_t *host = malloc((size_t)w * h);
    for (int k = 0; k < 4; k++) {
        unsigned x = 0x9E3779B9u * (k + 1);
        for (size_t i = 0; i < (size_t)w * h; i++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            host[i] = (uint8_t)(x >> 9);
        }
        if (pc_gpu_upload_async(g, k, 0, host, w, h, err, sizeof err) || pc_gpu_sync(g, err, sizeof err)) {
            fprintf(stderr, "panocap-bench: %s\n", err);
            return 1;
        }
    }
    free(host);
    pc_picture dst[4];
    for (int k = 0; k < 4; k++)
        if (pc_gpu_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &dst[k], err, sizeof err)) {
            fprintf(stderr, "panocap-bench: %s\n", err);
            return 1;
        }
    const double in_b = (double)w * h, out_b = 1.5 * w * h, bytes = in_b + out_b;
    double floor_us, floor_p99, peak;
    if (time_copy(s, (size_t)(bytes / 2), o->iters, &floor_us, &floor_p99) || peak_copy(s, &peak))
        return 1;
    INFO(o, "device: %s; frame %dx%d: Bayer in %.2f MB + NV12 out %.2f MB\n", pc_gpu_device_name(g), w, h,
         in_b / 1e6, out_b / 1e6);
    INFO(o, "memory floor: D2D copy of %.2f MB: median %.2f us (p99 %.2f), %.0f GB/s read+write\n", bytes / 2e6,
         floor_us, floor_p99, bytes / (floor_us * 1e3));
    INFO(o, "peak copy bandwidth (1 GiB D2D, read+write): %.0f GB/s; the frame's %.2f MB at that rate: %.2f us\n",
         peak, bytes / 1e6, bytes / (peak * 1e3));
    double mus = 0;
    if (pc_gpu_margin_time_us(g, &mus, err, sizeof err) == 0)
        INFO(o, "input margin refresh (done per slab at upload, not in the times below): %.2f us per frame\n", mus);
    static pc_colour_tables ctab[BENCH_CAMS];
    pc_yuv_coeffs cbands[BENCH_CAMS];
    if (o->colour) {
        pc_rawfmt cf;
        pc_rawfmt_parse(o->colour, &cf, err, sizeof err);
        if (colour_setup(o, &cf, ctab, cbands))
            return 1;
        for (int c = 0; c < BENCH_CAMS; c++)
            if (pc_gpu_set_colour_tables(g, c, &ctab[c], err, sizeof err)) {
                fprintf(stderr, "panocap-bench: %s\n", err);
                return 1;
            }
        double cus = 0;
        if (pc_gpu_colour_time_us(g, &cf, BENCH_CAMS, &cus, err, sizeof err)) {
            fprintf(stderr, "panocap-bench: %s\n", err);
            return 1;
        }
        INFO(o, "colour pass %s (unpack + per-colour tables + margins of %d camera slabs, one launch, at upload, "
                "replacing the margin refresh; not in the times below): %.2f us per frame (%.2f MB in)\n",
             o->colour, BENCH_CAMS, cus, pc_rawfmt_frame_bytes(&cf, w, h) / 1e6);
        /* what the colour stage adds at upload: its pass instead of the
         * margin refresh (both one launch per frame) */
        INFO(o, "colour extra at upload: %.2f us per frame (the pass - the margin refresh)\n", cus - mus);
        /* the 4 slots hold raw frames of that format, uploaded per camera
         * slab as the daemon does (its debayer step); their colour pass
         * runs once, before the first debayer of each */
        const int sh = h / BENCH_CAMS;
        size_t sb = pc_rawfmt_frame_bytes(&cf, w, sh);
        uint8_t *raw = malloc(sb + 16);
        unsigned x = 0x2545F491u;
        for (int k = 0; k < 4 && raw; k++)
            for (int c = 0; c < BENCH_CAMS; c++) {
                for (size_t i = 0; i < sb; i++) {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    raw[i] = (uint8_t)(x >> 9);
                }
                if (pc_gpu_upload_raw_async(g, k, c * sh, raw, &cf, c, sh, err, sizeof err) ||
                    pc_gpu_sync(g, err, sizeof err)) {
                    fprintf(stderr, "panocap-bench: %s\n", err);
                    return 1;
                }
            }
        free(raw);
        INFO(o, "final pass with %d per-camera colour matrices (bands of %d rows) in the times below\n", BENCH_CAMS,
             h / BENCH_CAMS & ~1);
        for (int k = 0; k < 4; k++) {
            dst[k].bands = cbands;
            dst[k].n_bands = BENCH_CAMS;
            dst[k].band_rows = h / BENCH_CAMS & ~1;
        }
    }
#if PANOCAP_HAVE_NPP
    double npp_cfa = 0, npp_all = 0;
    if (time_npp(g, w, h, o->iters, &npp_cfa, &npp_all) == 0)
        INFO(o, "NPP peer: nppiCFAToRGB_8u_C1C3R %.2f us; + nppiRGBToYUV420_8u_C3P3R %.2f us (%.2fx floor)\n",
             npp_cfa, npp_all, npp_all / floor_us);
#else
    INFO(o, "NPP peer: not built (meson -Dnpp=enabled where the toolkit has NPP)\n");
#endif
    header(o, "us");
    timer t;
    if (timer_init(&t, o->iters))
        return 1;
    double *us = malloc(o->iters * sizeof *us);
    double bil_med = 0, batch_us[2 * PC_ALGO_COUNT];
    char batch_name[2 * PC_ALGO_COUNT][40];
    int nbatch = 0;
    for (int a = 0; a < nalgo; a++)
        for (int vi = 0; vi < nvar; vi++) {
            pc_variant var = (pc_variant)vars[vi];
            if (algos[a]->variants == 0 && vi > 0)
                continue; /* own code (e.g. mlri): no final-pass variants to compare */
            if (pc_gpu_set_algo(g, algos[a]->id, var, PC_CFA_RGGB, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED,
                                err, sizeof err)) {
                fprintf(stderr, "panocap-bench: %s\n", err);
                return 1;
            }
            pc_variant chosen;
            int rows;
            pc_gpu_get_choice(g, &chosen, &rows);
            for (int i = -10; i < o->iters; i++) {
                if (i >= 0)
                    CU(cudaEventRecord(t.ev[i], s));
                if (pc_gpu_debayer(g, (i + 12) & 3, &dst[(i + 13) & 3], err, sizeof err)) {
                    fprintf(stderr, "panocap-bench: %s\n", err);
                    return 1;
                }
            }
            CU(cudaEventRecord(t.ev[o->iters], s));
            if (timer_collect(&t, us))
                return 1;
            double med, p99;
            stats(us, o->iters, &med, &p99);
            char vname[16];
            snprintf(vname, sizeof vname, "%s%s", var == PC_VARIANT_AUTO ? "auto:" : "", pc_variant_name(chosen));
            row(o, algos[a], vname, rows, med, p99, floor_us, bytes, 0);
            if (algos[a]->id == PC_ALGO_NET)
                INFO(o, "net: %.0f TFLOP/s (the reference's operations over the median time)\n",
                     pc_net_flops(net, w, h, cams_h, PC_CFA_RGGB) / (med * 1e6));
            /* Throughput: the same frames back to back, one event pair
             * around all of them (launch overheads overlap). */
            CU(cudaEventRecord(t.ev[0], s));
            for (int i = 0; i < o->iters; i++)
                if (pc_gpu_debayer(g, i & 3, &dst[(i + 1) & 3], err, sizeof err)) {
                    fprintf(stderr, "panocap-bench: %s\n", err);
                    return 1;
                }
            CU(cudaEventRecord(t.ev[1], s));
            CU(cudaEventSynchronize(t.ev[1]));
            float bms;
            CU(cudaEventElapsedTime(&bms, t.ev[0], t.ev[1]));
            batch_us[nbatch] = bms * 1000.0 / o->iters;
            snprintf(batch_name[nbatch++], 40, "%s %s", algos[a]->name, vname);
            /* net: every CONV kernel this GPU runs, side by side, with
             * each launch's time (net_bench.c) */
            if (algos[a]->id == PC_ALGO_NET &&
                net_bench_convs(g, dst, o->iters, 5, pc_net_flops(net, w, h, cams_h, PC_CFA_RGGB) / 1e9,
                                tsv(o) ? stderr : stdout, tsv(o) ? "# " : ""))
                return 1;
            if (algos[a]->id == PC_ALGO_BILINEAR && (bil_med == 0 || med < bil_med))
                bil_med = med;
        }
    /* Where the per-frame overhead goes: the first algorithm/variant again,
     * launched through the graph or directly, with and without the
     * per-frame timing events of pc_gpu_debayer (not for an algorithm with
     * its own code, which launches on the stream either way). */
    if (algos[0]->variants != 0) {
        static const unsigned modes[4] = {PC_GPU_OPT_FRAME_TIMING, 0, PC_GPU_OPT_STREAM_LAUNCH | PC_GPU_OPT_FRAME_TIMING,
                                          PC_GPU_OPT_STREAM_LAUNCH};
        static const char *mname[4] = {"graph + frame events", "graph", "stream launch + frame events",
                                       "stream launch"};
        pc_gpu_set_algo(g, algos[0]->id, (pc_variant)vars[nvar - 1], PC_CFA_RGGB, PC_FMT_NV12, PC_MATRIX_BT709,
                        PC_RANGE_LIMITED, err, sizeof err);
        for (int m = 0; m < 4; m++) {
            pc_gpu_set_options(g, modes[m]);
            for (int i = -10; i < o->iters; i++) {
                if (i >= 0)
                    CU(cudaEventRecord(t.ev[i], s));
                if (pc_gpu_debayer(g, (i + 12) & 3, &dst[(i + 13) & 3], err, sizeof err))
                    return 1;
            }
            CU(cudaEventRecord(t.ev[o->iters], s));
            if (timer_collect(&t, us))
                return 1;
            double med, p99;
            stats(us, o->iters, &med, &p99);
            CU(cudaEventRecord(t.ev[0], s));
            for (int i = 0; i < o->iters; i++)
                if (pc_gpu_debayer(g, i & 3, &dst[(i + 1) & 3], err, sizeof err))
                    return 1;
            CU(cudaEventRecord(t.ev[1], s));
            CU(cudaEventSynchronize(t.ev[1]));
            float bms;
            CU(cudaEventElapsedTime(&bms, t.ev[0], t.ev[1]));
            INFO(o, "launch mode %-29s %s: median %.2f us, back-to-back %.2f us/frame\n", mname[m], algos[0]->name,
                 med, bms * 1000.0 / o->iters);
        }
        pc_gpu_set_options(g, 0);
    }
    for (int i = 0; i < nbatch; i++)
        INFO(o, "back-to-back throughput %-26s %8.2f us/frame (%.2fx floor)\n", batch_name[i], batch_us[i],
             batch_us[i] / floor_us);
#if PANOCAP_HAVE_NPP
    if (bil_med > 0 && npp_all > 0)
        INFO(o, "bilinear vs NPP debayer + YUV420: %.1fx faster\n", npp_all / bil_med);
#endif
    free(us);
    timer_free(&t);
    for (int k = 0; k < 4; k++)
        pc_gpu_picture_free(g, &dst[k]);
    pc_gpu_close(g);
    pc_net_free(net);
    return 0;
}
#else
static int bench_cuda(const opts *o, const pc_algo_desc **algos, int nalgo, const int *vars, int nvar)
{
    fprintf(stderr, "panocap-bench: built without CUDA\n");
    return 1;
}
#endif

/* ------------------------------------------------------------------------ */
static inline double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* CPU time of the process (every thread), us */
static inline double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The CPU backend through the backend ops table (backend.h), as the
 * daemon drives it: a whole-frame upload (read in place), debayer, wait. */
static int bench_cpu(const opts *o, const pc_algo_desc **algos, int nalgo)
{
    char err[512];
    int w = o->width, h = o->height;
    pc_backend *be;
    const int cams_h = bench_cam_rows(o);
    pc_backend_config bc = {.width = w, .height = h, .slots = 1, .threads = o->threads, .cam_rows = cams_h};
    if (pc_backend_open(&be, &pc_backend_cpu, &bc, err, sizeof err)) {
        fprintf(stderr, "panocap-bench: %s\n", err);
        return 1;
    }
    pc_net *net = NULL;
    for (int a = 0; a < nalgo; a++)
        if (algos[a]->id == PC_ALGO_NET && !net) {
            const char *path = o->weights ? o->weights : pc_net_default_path();
            if (pc_net_load(&net, path, err, sizeof err) || pc_backend_set_net(be, net, err, sizeof err)) {
                fprintf(stderr, "panocap-bench: %s\n", err);
                return 1;
            }
            INFO(o, "net: %s (%s, SHA-256 %.16s...), %d camera(s) of %d rows; %.1f GFLOP a frame\n", net->path,
                 net->name, net->sha256, cams_h ? h / cams_h : 1, cams_h ? cams_h : h,
                 pc_net_flops(net, w, h, cams_h, PC_CFA_RGGB) / 1e9);
        }
    uint8_t *raw[4];
    pc_picture dst;
    if (pc_backend_picture_alloc(be, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &dst, err, sizeof err)) {
        fprintf(stderr, "panocap-bench: %s\n", err);
        return 1;
    }
    for (int k = 0; k < 4; k++) {
        raw[k] = malloc((size_t)w * h);
        unsigned x = 0x9E3779B9u * (k + 1);
        for (size_t i = 0; i < (size_t)w * h; i++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            raw[k][i] = (uint8_t)(x >> 9);
        }
    }
    int threads = pc_backend_host_threads(be);
    INFO(o, "CPU backend: %d threads, frame %dx%d, NV12 out; times in ms per frame; paper = Table II "
            "(single thread, no SIMD)\n", threads, w, h);
    /* --colour: the raw frames in that format (5 camera slabs with their
     * own tables and matrices), through the backend's colour stage */
    static pc_colour_tables ctab[BENCH_CAMS];
    pc_yuv_coeffs cbands[BENCH_CAMS];
    pc_rawfmt cf;
    uint8_t *craw[4] = {NULL, NULL, NULL, NULL};
    size_t sb = 0;
    int sh = h / BENCH_CAMS;
    if (o->colour) {
        pc_rawfmt_parse(o->colour, &cf, err, sizeof err);
        if ((sh & 1) || sh * BENCH_CAMS != h) {
            fprintf(stderr, "panocap-bench: --colour needs a height of 5 even slabs\n");
            return PC_TOOL_EX_USAGE;
        }
        if (colour_setup(o, &cf, ctab, cbands))
            return 1;
        for (int c = 0; c < BENCH_CAMS; c++)
            if (pc_backend_set_colour_tables(be, c, &ctab[c], err, sizeof err)) {
                fprintf(stderr, "panocap-bench: %s\n", err);
                return 1;
            }
        sb = pc_rawfmt_frame_bytes(&cf, w, sh);
        for (int k = 0; k < 4; k++) {
            craw[k] = malloc(sb * BENCH_CAMS);
            unsigned x = 0x9E3779B9u * (k + 7);
            for (size_t i = 0; i < sb * BENCH_CAMS; i++) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                craw[k][i] = (uint8_t)(x >> 9);
            }
        }
        dst.bands = cbands;
        dst.n_bands = BENCH_CAMS;
        dst.band_rows = sh;
        INFO(o, "colour stage on: %s, %d cameras with their own tables and colour matrices (upload_raw per camera slab)\n",
             o->colour, BENCH_CAMS);
    }
    /* Without --colour the frame is uploaded as the 5 camera slabs (stacked
     * by a copy, as the daemon's slabs are) rather than read in place: the
     * honest baseline of --colour, whose slab mapping replaces that copy */
    const int slabs = !o->colour && !(sh & 1) && sh * BENCH_CAMS == h;
    if (slabs)
        INFO(o, "input: %d camera slabs of %d rows uploaded per frame (stacked by a copy, as --colour's slabs are "
                "mapped)\n", BENCH_CAMS, sh);
    else if (!o->colour)
        INFO(o, "input: the whole frame read in place (no stacking copy)\n");
    if (tsv(o))
        header(o, "ms");
    else
        printf("%-17s %-7s %6s %7s %10s %10s %8s %9s %9s\n", "algo", "variant", "passes", "threads", "median_ms",
               "p99_ms", "GB/s", "paper_ms", "vs_paper");
    /* The paper's Table II (ms per 2040x5400 frame, one thread). */
    static const double table2[PC_ALGO_COUNT] = {40.71, 0, 137.59, 110.76, 0, 0, 0};
    double *us = malloc(o->iters * sizeof *us);
    for (int a = 0; a < nalgo; a++) {
        pc_debayer_config dc = {algos[a]->id, PC_VARIANT_AUTO, PC_CFA_RGGB, PC_FMT_NV12, PC_MATRIX_BT709,
                                PC_RANGE_LIMITED};
        if (pc_backend_set_algo(be, &dc, err, sizeof err)) {
            fprintf(stderr, "panocap-bench: %s\n", err);
            return 1;
        }
        /* net: seconds a frame on a few cores; 3 timed (1 warm-up) unless --iters */
        const int net_algo = algos[a]->id == PC_ALGO_NET;
        const int iters = net_algo && !o->iters_set ? 3 : o->iters;
        double cpu0 = 0;
        for (int i = net_algo ? -1 : -2; i < iters; i++) {
            if (i == 0)
                cpu0 = cpu_us();
            double t0 = now_us();
            int up = 0;
            if (o->colour) {
                for (int c = 0; c < BENCH_CAMS && !up; c++)
                    up = pc_backend_upload_raw(be, 0, c * sh, craw[(i + 4) & 3] + sb * c, 0, &cf, c, sh, err,
                                               sizeof err);
            } else if (slabs) {
                /* the baseline of --colour: the same 5 camera slabs, 8-bit,
                 * stacked by upload (the copy the colour stage replaces) */
                for (int c = 0; c < BENCH_CAMS && !up; c++)
                    up = pc_backend_upload(be, 0, c * sh, raw[(i + 4) & 3] + (size_t)c * sh * w, (size_t)w, sh, err,
                                           sizeof err);
            } else {
                up = pc_backend_upload(be, 0, 0, raw[(i + 4) & 3], (size_t)w, h, err, sizeof err);
            }
            if (up || pc_backend_debayer(be, 0, &dst, err, sizeof err) || pc_backend_wait(be, 0, err, sizeof err)) {
                fprintf(stderr, "panocap-bench: %s\n", err);
                return 1;
            }
            if (i >= 0)
                us[i] = now_us() - t0;
        }
        double med, p99;
        stats(us, iters, &med, &p99);
        if (net_algo) {
            /* the process's CPU time too: on a machine others load, the
             * wall time says little about the code */
            const double cpu = (cpu_us() - cpu0) / iters, fl = pc_net_flops(net, w, h, cams_h, PC_CFA_RGGB);
            INFO(o, "net: %.1f GFLOP/s (%d iterations; the reference's operations over the median time); CPU time "
                    "%.0f ms a frame, %.1f GFLOP per CPU-second\n", fl / (med * 1e3), iters, cpu / 1e3,
                 fl / (cpu * 1e3));
        }
        double paper = table2[algos[a]->id] * (double)w * h / (2040.0 * 5400.0);
        if (tsv(o)) {
            row(o, algos[a], "cpu", 0, med, p99, 0, (double)w * h * 2.5, 1);
        } else if (paper > 0) {
            printf("%-17s %-7s %6d %7d %10.2f %10.2f %8.2f %9.2f %8.1fx\n", algos[a]->name, "cpu", algos[a]->passes,
                   threads, med / 1e3, p99 / 1e3, 2.5 * w * h / (med * 1e3), paper, paper * 1e3 / med);
        } else {
            printf("%-17s %-7s %6d %7d %10.2f %10.2f %8.2f %9s %9s\n", algos[a]->name, "cpu", algos[a]->passes,
                   threads, med / 1e3, p99 / 1e3, 2.5 * w * h / (med * 1e3), "-", "-");
        }
    }
    free(us);
    for (int k = 0; k < 4; k++) {
        free(raw[k]);
        free(craw[k]);
    }
    pc_backend_picture_free(be, &dst);
    pc_backend_close(be);
    pc_net_free(net);
    return 0;
}

/* A capture benchmark (frames from Aravis fake cameras through the capture
 * module) can be added as bench_capture() next to these two. */

static const pc_tool tool = {"panocap-bench", usage};

/* Options into *o; returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, opts *o)
{
    enum { O_BACKEND = 256, O_ALGO, O_VARIANT, O_FORMAT, O_WIDTH, O_HEIGHT, O_ITERS, O_THREADS, O_DEVICE, O_COLOUR,
           O_RENDER, O_RIG, O_PEER_DATA, O_WEIGHTS, O_CAM_ROWS, O_MLRI_TILES };
    static const struct option lo[] = {
        {"backend", required_argument, NULL, O_BACKEND}, {"algo", required_argument, NULL, O_ALGO},
        {"variant", required_argument, NULL, O_VARIANT}, {"format", required_argument, NULL, O_FORMAT},
        {"width", required_argument, NULL, O_WIDTH},     {"height", required_argument, NULL, O_HEIGHT},
        {"iters", required_argument, NULL, O_ITERS},     {"threads", required_argument, NULL, O_THREADS},
        {"device", required_argument, NULL, O_DEVICE},   {"colour", required_argument, NULL, O_COLOUR},
        {"render", no_argument, NULL, O_RENDER},         {"rig", required_argument, NULL, O_RIG},
        {"peer-data", required_argument, NULL, O_PEER_DATA},
        {"weights", required_argument, NULL, O_WEIGHTS},
        {"cam-rows", required_argument, NULL, O_CAM_ROWS}, {"mlri-tiles", required_argument, NULL, O_MLRI_TILES},
        PC_TOOL_STD_OPTIONS,
        {NULL, 0, NULL, 0}};
    int ch, rc;
    long long n;
    while ((ch = pc_tool_getopt(&tool, argc, argv, "h", lo)) != -1) {
        rc = 0;
        switch (ch) {
        case O_BACKEND: o->backend = optarg; break;
        case O_ALGO: o->algo = optarg; break;
        case O_VARIANT: o->variant = optarg; break;
        case O_FORMAT: o->format = optarg; break;
        case O_WIDTH: rc = pc_tool_int(&tool, "--width", optarg, 2, 1 << 16, &n), o->width = (int)n; break;
        case O_HEIGHT: rc = pc_tool_int(&tool, "--height", optarg, 2, 1 << 16, &n), o->height = (int)n; break;
        case O_ITERS:
            rc = pc_tool_int(&tool, "--iters", optarg, 5, 1000000, &n), o->iters = (int)n, o->iters_set = 1;
            break;
        case O_THREADS: rc = pc_tool_int(&tool, "--threads", optarg, 0, 1024, &n), o->threads = (int)n; break;
        case O_DEVICE: rc = pc_tool_int(&tool, "--device", optarg, 0, 1024, &n), o->device = (int)n; break;
        case O_COLOUR: o->colour = optarg; break;
        case O_RENDER: o->render = 1; break;
        case O_RIG: o->rig = optarg; break;
        case O_PEER_DATA: o->peer_data = optarg; break;
        case O_WEIGHTS: o->weights = optarg; break;
        case O_CAM_ROWS: rc = pc_tool_int(&tool, "--cam-rows", optarg, 0, 1 << 16, &n), o->cam_rows = (int)n; break;
        case O_MLRI_TILES:
            if (sscanf(optarg, "%d,%d,%d", &o->mlri_tiles[0], &o->mlri_tiles[1], &o->mlri_tiles[2]) < 2)
                return pc_tool_usage_error(&tool, "--mlri-tiles %s: DIR,RB[,LEAN] (numbers)", optarg);
            o->mlri_tiles[3] = 1;
            break;
        case 'h': usage(stdout); return 0;
        default: return pc_tool_std_option(&tool, ch, argv);
        }
        if (rc)
            return rc;
    }
    if ((rc = pc_tool_no_operands(&tool, argc, argv)))
        return rc;
    if (o->cam_rows > 0 && (o->cam_rows < PC_MIN_DIM || (o->cam_rows & 1) || o->height % o->cam_rows))
        return pc_tool_usage_error(&tool, "--cam-rows %d: even, at least %d, dividing --height %d", o->cam_rows,
                                   PC_MIN_DIM, o->height);
    char err[256] = "";
    pc_rawfmt cf;
    if (o->colour && pc_rawfmt_parse(o->colour, &cf, err, sizeof err))
        return pc_tool_usage_error(&tool, "--colour: %s", err);
    if (o->colour && (o->height % (2 * BENCH_CAMS)))
        return pc_tool_usage_error(&tool, "--colour needs a height of %d even slabs (--height %d)", BENCH_CAMS,
                                   o->height);
    err[0] = '\0';
    if (pc_check_size(o->width, o->height, err, sizeof err) || (o->width & 1) || (o->height & 1))
        return pc_tool_usage_error(&tool, "--width/--height: %s", err[0] ? err : "width and height must be even");
    if ((o->rig || o->peer_data) && !o->render)
        return pc_tool_usage_error(&tool, "--rig and --peer-data go with --render");
    if (o->peer_data && !o->rig)
        return pc_tool_usage_error(&tool, "--peer-data needs --rig FILE.pto");
    if (strcmp(o->format, "table") && strcmp(o->format, "tsv"))
        return pc_tool_usage_error(&tool, "--format: unknown format '%s' (known: table, tsv)", o->format);
    if (strcmp(o->backend, "cuda") && strcmp(o->backend, "cpu"))
        return pc_tool_usage_error(&tool, "--backend: unknown backend '%s' (known: cuda, cpu)", o->backend);
    return -1;
}

int main(int argc, char **argv)
{
    opts o = {"cuda", "all", "all", "table", 2040, 5400, 200, 0, 0, NULL, 0, NULL, NULL, 0, NULL, -1, {0, 0, 0, 0}};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (o.render && o.rig) {
        pc_render_rig_bench_opts ro = {o.rig, o.peer_data, o.iters_set ? o.iters : 20, o.threads};
        return pc_render_rig_bench(&ro);
    }
    if (o.render) {
        pc_render_bench_opts ro = {o.iters, 5, o.threads, o.device, strcmp(o.backend, "cpu") != 0, 1};
        return pc_render_bench(&ro);
    }
    const pc_algo_desc *algos[PC_ALGO_COUNT];
    int nalgo = 0;
    if (!strcmp(o.algo, "all")) {
        for (int i = 0; i < PC_ALGO_COUNT; i++)
            algos[nalgo++] = pc_algo_get((pc_algo_id)i);
    } else {
        const pc_algo_desc *d = pc_algo_find(o.algo);
        if (!d) {
            char names[256];
            pc_algo_names(names, sizeof names);
            return pc_tool_usage_error(&tool, "--algo: unknown algorithm '%s' (known: all, %s)", o.algo, names);
        }
        algos[nalgo++] = d;
    }
    int vars[2], nvar = 0;
    if (!strcmp(o.variant, "all")) {
        vars[nvar++] = PC_VARIANT_2PX;
        vars[nvar++] = PC_VARIANT_4PX;
    } else {
        int v = pc_variant_from_name(o.variant);
        if (v < 0)
            return pc_tool_usage_error(&tool, "--variant: unknown variant '%s' (known: 2px, 4px, auto, all)",
                                       o.variant);
        vars[nvar++] = v;
    }
    if (!strcmp(o.backend, "cpu"))
        return bench_cpu(&o, algos, nalgo);
    return bench_cuda(&o, algos, nalgo, vars, nvar);
}
