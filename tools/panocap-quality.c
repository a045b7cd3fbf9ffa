/* panocap-quality - measures demosaicing quality on real photographs.
 *
 * For every image: crop to even size, impose a Bayer pattern, demosaic with
 * each selected algorithm (C reference or the multi-threaded CPU backend,
 * which are bit-identical; net's within one code value), and compare with
 * the original: PSNR of green,
 * PSNR of red and blue pooled (as in the paper's Table I) and CPSNR over
 * all three channels, excluding a border of 8 pixels. With several images
 * it also prints the mean (arithmetic mean of the per-image dB figures).
 *
 *   panocap-quality [--algo NAME|all] [--pattern RGGB|GRBG|GBRG|BGGR]
 *                   [--format table|tsv] [--backend ref|cpu|cuda] [--weights FILE] IMAGE...
 *
 * --backend cuda: the GPU path through the backend ops (backend.h) as the
 * daemon drives it (upload, debayer, download), one backend per image size;
 * net's tensor-core kernels within one code value of the reference.
 *
 * Exit status: 0 if every image was measured, 1 if any image failed (the
 * others are still measured), 64 on a usage error.
 */
#include "backend.h"
#include "debayer.h"
#include "image.h"
#include "net.h"
#include "tool_cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BORDER 8

typedef struct psnr3 {
    double g, rb, c;
} psnr3;

static double psnr_of(double sse, double n)
{
    if (n <= 0)
        return NAN;
    if (sse == 0)
        return INFINITY;
    return 10.0 * log10(255.0 * 255.0 * n / sse);
}

static void usage(FILE *f)
{
    char names[256];
    pc_algo_names(names, sizeof names);
    fprintf(f,
            "usage: panocap-quality [options] IMAGE...\n"
            "Imposes a Bayer pattern on each RGB photograph (PNG%s or PPM P6), demosaics it\n"
            "and prints PSNR of green, PSNR of red/blue (pooled) and CPSNR against the\n"
            "original, excluding a border of %d pixels; with several images, also the mean.\n"
            "\n"
            "  --algo NAME|all        algorithm (default all): %s\n"
            "  --pattern RGGB|GRBG|GBRG|BGGR   CFA phase to impose (default RGGB)\n"
            "  --format table|tsv     output format (default table); TSV has the header\n"
            "                         algo<TAB>psnr_g<TAB>psnr_rb<TAB>cpsnr and, per algorithm,\n"
            "                         one row per image in command-line order, then the mean\n"
            "  --backend ref|cpu|cuda C reference (default), multi-threaded CPU backend or the GPU\n"
            "  --weights FILE         net's weights (default: the installed file, %s)\n"
            "  --threads N            CPU backend threads (default: one per CPU)\n"
            "  --list-algos           list the algorithms and exit\n"
            "  --help                 this text\n"
            "  --version              the version\n",
            pc_image_have_png() ? "" : " (not built in)", BORDER, names, pc_net_default_path());
}

static void list_algos(void)
{
    printf("%-18s %6s %8s  %s\n", "name", "passes", "temp B/px", "description");
    for (int i = 0; i < pc_algo_count(); i++) {
        const pc_algo_desc *d = pc_algo_get((pc_algo_id)i);
        printf("%-18s %6d %8d  %s: %s\n", d->name, d->passes, d->temp_bytes_per_pixel, d->title,
               d->description);
    }
}

/* --backend cuda: a CUDA backend for frames of w x h (reopened when the
 * size changes) and its device picture. */
typedef struct gpu_ctx {
    pc_backend *b;
    int w, h;
    pc_picture dev;
} gpu_ctx;

static void gpu_close(gpu_ctx *g)
{
    if (g->b)
        pc_backend_picture_free(g->b, &g->dev);
    pc_backend_close(g->b);
    memset(g, 0, sizeof *g);
}

/* One demosaic of raw (w x h) on the GPU into out (RGB24, 3w bytes a row). */
static int gpu_run(gpu_ctx *g, const pc_net *net, pc_algo_id algo, pc_cfa cfa, const uint8_t *raw, int w, int h,
                   uint8_t *out, char *err, size_t errlen)
{
    int rc = 0;
    if (!g->b || g->w != w || g->h != h) {
        gpu_close(g);
        pc_backend_config bc = {.width = w, .height = h, .slots = 1, .device = 0, .threads = 0, .cam_rows = 0};
        rc = pc_backend_open(&g->b, &pc_backend_cuda, &bc, err, errlen);
        if (!rc && net)
            rc = pc_backend_set_net(g->b, net, err, errlen);
        rc = rc ? rc : pc_backend_picture_alloc(g->b, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &g->dev,
                                                err, errlen);
        if (rc) {
            pc_backend_close(g->b);
            memset(g, 0, sizeof *g);
            return rc;
        }
        g->w = w;
        g->h = h;
    }
    pc_debayer_config dc = {algo, PC_VARIANT_AUTO, cfa, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED};
    pc_picture host;
    memset(&host, 0, sizeof host);
    host.fmt = PC_FMT_RGB24;
    host.width = w;
    host.height = h;
    host.plane[0] = out;
    host.pitch[0] = 3 * (size_t)w;
    rc = pc_backend_set_algo(g->b, &dc, err, errlen);
    rc = rc ? rc : pc_backend_upload(g->b, 0, 0, raw, (size_t)w, h, err, errlen);
    rc = rc ? rc : pc_backend_debayer(g->b, 0, &g->dev, err, errlen);
    rc = rc ? rc : pc_backend_download(g->b, 0, &g->dev, &host, err, errlen);
    rc = rc ? rc : pc_backend_wait(g->b, 0, err, errlen);
    return rc;
}

/* Measures one image for every selected algorithm. Returns 0 or -1 (error
 * printed, naming the file). use_cpu: 0 reference, 1 CPU backend, 2 GPU. */
static int measure(const char *path, pc_cfa cfa, const int *algos, int nalgos, int use_cpu, int threads,
                   const pc_net *net, gpu_ctx *gpu, psnr3 *res)
{
    char err[512];
    pc_image img;
    if (pc_image_read(path, &img, err, sizeof err) != 0) {
        fprintf(stderr, "panocap-quality: %s\n", err);
        return -1;
    }
    int w = img.width & ~1, h = img.height & ~1;
    if (w != img.width || h != img.height)
        fprintf(stderr, "panocap-quality: %s: %dx%d cropped to %dx%d (a Bayer mosaic needs even sizes)\n",
                path, img.width, img.height, w, h);
    int need = 2 * BORDER + 2;
    if (w < need || h < need) {
        fprintf(stderr, "panocap-quality: %s: image %dx%d is too small (at least %dx%d after cropping, "
                        "since a border of %d pixels is excluded)\n",
                path, img.width, img.height, need, need, BORDER);
        pc_image_free(&img);
        return -1;
    }
    if (w > PC_MAX_DIM || h > PC_MAX_DIM) {
        fprintf(stderr, "panocap-quality: %s: image %dx%d is larger than %dx%d\n", path, w, h,
                PC_MAX_DIM, PC_MAX_DIM);
        pc_image_free(&img);
        return -1;
    }
    size_t npx = (size_t)w * (size_t)h;
    uint8_t *raw = malloc(npx), *out = malloc(3 * npx);
    pc_cpu *cpu = NULL;
    int rc = -1;
    if (!raw || !out) {
        fprintf(stderr, "panocap-quality: %s: out of memory for %dx%d\n", path, w, h);
        goto done;
    }
    if (pc_mosaic_from_rgb(img.rgb, img.pitch, w, h, cfa, raw, (size_t)w, err, sizeof err) != 0) {
        fprintf(stderr, "panocap-quality: %s: %s\n", path, err);
        goto done;
    }
    if (use_cpu == 1 && pc_cpu_open(&cpu, threads, w, h, err, sizeof err) != 0) {
        fprintf(stderr, "panocap-quality: %s: %s\n", path, err);
        goto done;
    }
    if (cpu && net)
        pc_cpu_set_net(cpu, net);
    pc_bayer src = {raw, (size_t)w, w, h, cfa, 0};
    pc_picture dst;
    memset(&dst, 0, sizeof dst);
    dst.fmt = PC_FMT_RGB24;
    dst.plane[0] = out;
    dst.pitch[0] = 3 * (size_t)w;
    dst.width = w;
    dst.height = h;
    for (int a = 0; a < nalgos; a++) {
        int e = use_cpu == 2 ? gpu_run(gpu, net, (pc_algo_id)algos[a], cfa, raw, w, h, out, err, sizeof err)
                : use_cpu     ? pc_cpu_debayer(cpu, (pc_algo_id)algos[a], &src, &dst, err, sizeof err)
                : algos[a] == PC_ALGO_NET && net ? pc_net_ref(net, &src, &dst, err, sizeof err)
                                                 : pc_ref_debayer((pc_algo_id)algos[a], &src, &dst, err, sizeof err);
        if (e != 0) {
            fprintf(stderr, "panocap-quality: %s: %s: %s\n", path, pc_algo_get((pc_algo_id)algos[a])->name, err);
            goto done;
        }
        double sse[3] = {0, 0, 0};
        for (int y = BORDER; y < h - BORDER; y++) {
            const uint8_t *o = out + (size_t)y * 3 * (size_t)w, *r = img.rgb + (size_t)y * img.pitch;
            for (int x = 3 * BORDER; x < 3 * (w - BORDER); x += 3)
                for (int c = 0; c < 3; c++) {
                    double d = (double)o[x + c] - (double)r[x + c];
                    sse[c] += d * d;
                }
        }
        double n = (double)(w - 2 * BORDER) * (double)(h - 2 * BORDER);
        res[a].g = psnr_of(sse[1], n);
        res[a].rb = psnr_of(sse[0] + sse[2], 2 * n);
        res[a].c = psnr_of(sse[0] + sse[1] + sse[2], 3 * n);
    }
    rc = 0;
done:
    pc_cpu_close(cpu);
    free(raw);
    free(out);
    pc_image_free(&img);
    return rc;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int main(int argc, char **argv)
{
    const char *algo = "all", *pattern = "RGGB", *format = "table", *backend = "ref", *weights = NULL;
    int threads = 0;
    enum { OPT_LIST = 256, OPT_BACKEND, OPT_THREADS, OPT_WEIGHTS };
    static const struct option opts[] = {
        {"algo", required_argument, NULL, 'a'},
        {"pattern", required_argument, NULL, 'p'},
        {"format", required_argument, NULL, 'f'},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"weights", required_argument, NULL, OPT_WEIGHTS},
        {"list-algos", no_argument, NULL, OPT_LIST},
        PC_TOOL_STD_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    static const pc_tool tool = {"panocap-quality", usage};
    int c, rc;
    long long n;
    while ((c = pc_tool_getopt(&tool, argc, argv, "a:p:f:h", opts)) != -1) {
        switch (c) {
        case 'a': algo = optarg; break;
        case 'p': pattern = optarg; break;
        case 'f': format = optarg; break;
        case OPT_BACKEND: backend = optarg; break;
        case OPT_WEIGHTS: weights = optarg; break;
        case OPT_THREADS:
            if ((rc = pc_tool_int(&tool, "--threads", optarg, 0, 1024, &n)))
                return rc;
            threads = (int)n;
            break;
        case OPT_LIST: list_algos(); return 0;
        case 'h': usage(stdout); return 0;
        default: return pc_tool_std_option(&tool, c, argv);
        }
    }

    int algos[PC_ALGO_COUNT], nalgos = 0;
    if (strcmp(algo, "all") == 0) {
        for (int i = 0; i < pc_algo_count(); i++)
            algos[nalgos++] = i;
    } else {
        const pc_algo_desc *d = pc_algo_find(algo);
        if (!d) {
            char names[256];
            pc_algo_names(names, sizeof names);
            return pc_tool_usage_error(&tool, "--algo: unknown algorithm '%s' (known: all, %s)", algo, names);
        }
        algos[nalgos++] = d->id;
    }
    int cfa = pc_cfa_from_name(pattern);
    if (cfa < 0)
        return pc_tool_usage_error(&tool, "--pattern: unknown pattern '%s' (known: RGGB, GRBG, GBRG, BGGR)",
                                   pattern);
    int tsv;
    if (strcmp(format, "tsv") == 0)
        tsv = 1;
    else if (strcmp(format, "table") == 0)
        tsv = 0;
    else
        return pc_tool_usage_error(&tool, "--format: unknown format '%s' (known: table, tsv)", format);
    int use_cpu;
    if (strcmp(backend, "cpu") == 0)
        use_cpu = 1;
    else if (strcmp(backend, "ref") == 0)
        use_cpu = 0;
    else if (strcmp(backend, "cuda") == 0)
        use_cpu = 2;
    else
        return pc_tool_usage_error(&tool, "--backend: unknown backend '%s' (known: ref, cpu, cuda)", backend);
    int nimg = argc - optind;
    if (nimg <= 0)
        return pc_tool_usage_error(&tool, "no image given");
    /* net's weights, loaded once (with --weights; else each backend loads
     * the installed file) */
    pc_net *net = NULL;
    if (weights) {
        char err[768];
        if (pc_net_load(&net, weights, err, sizeof err)) {
            fprintf(stderr, "panocap-quality: %s\n", err);
            return 1;
        }
    }

    psnr3 *res = calloc((size_t)nimg * PC_ALGO_COUNT, sizeof *res);
    int *ok = calloc((size_t)nimg, sizeof *ok);
    if (!res || !ok) {
        fprintf(stderr, "panocap-quality: out of memory\n");
        return 1;
    }
    int failed = 0, measured = 0;
    gpu_ctx gpu;
    memset(&gpu, 0, sizeof gpu);
    for (int i = 0; i < nimg; i++) {
        ok[i] = measure(argv[optind + i], (pc_cfa)cfa, algos, nalgos, use_cpu, threads, net, &gpu,
                        res + (size_t)i * PC_ALGO_COUNT) == 0;
        if (ok[i])
            measured++;
        else
            failed++;
    }

    const char *note_fmt = "PSNR in dB against the original, %s pattern, %s backend, border of %d pixels "
                           "excluded; psnr_rb pools red and blue; mean = arithmetic mean of the per-image dB";
    if (measured > 0) {
        if (tsv) {
            fprintf(stderr, "# ");
            fprintf(stderr, note_fmt, pc_cfa_name((pc_cfa)cfa), backend, BORDER);
            fprintf(stderr, "\n# rows per algorithm:");
            for (int i = 0; i < nimg; i++)
                if (ok[i])
                    fprintf(stderr, " %s", base_name(argv[optind + i]));
            if (measured > 1)
                fprintf(stderr, " mean");
            fprintf(stderr, "\n");
            printf("algo\tpsnr_g\tpsnr_rb\tcpsnr\n");
        } else {
            printf("%-22s %-18s %8s %8s %8s\n", "image", "algo", "psnr_g", "psnr_rb", "cpsnr");
        }
        psnr3 mean[PC_ALGO_COUNT];
        for (int a = 0; a < nalgos; a++) {
            psnr3 sum = {0, 0, 0};
            for (int i = 0; i < nimg; i++) {
                if (!ok[i])
                    continue;
                psnr3 r = res[(size_t)i * PC_ALGO_COUNT + a];
                sum.g += r.g;
                sum.rb += r.rb;
                sum.c += r.c;
            }
            mean[a].g = sum.g / measured;
            mean[a].rb = sum.rb / measured;
            mean[a].c = sum.c / measured;
        }
        if (tsv) {
            /* per algorithm: one row per image, then the mean */
            for (int a = 0; a < nalgos; a++) {
                const char *name = pc_algo_get((pc_algo_id)algos[a])->name;
                for (int i = 0; i < nimg; i++) {
                    if (!ok[i])
                        continue;
                    psnr3 r = res[(size_t)i * PC_ALGO_COUNT + a];
                    printf("%s\t%.2f\t%.2f\t%.2f\n", name, r.g, r.rb, r.c);
                }
                if (measured > 1)
                    printf("%s\t%.2f\t%.2f\t%.2f\n", name, mean[a].g, mean[a].rb, mean[a].c);
            }
        } else {
            /* per image: one row per algorithm; then the means */
            for (int i = 0; i < nimg; i++) {
                if (!ok[i])
                    continue;
                for (int a = 0; a < nalgos; a++) {
                    psnr3 r = res[(size_t)i * PC_ALGO_COUNT + a];
                    printf("%-22s %-18s %8.2f %8.2f %8.2f\n", base_name(argv[optind + i]),
                           pc_algo_get((pc_algo_id)algos[a])->name, r.g, r.rb, r.c);
                }
            }
            if (measured > 1) {
                char label[48];
                snprintf(label, sizeof label, "mean (%d images)", measured);
                for (int a = 0; a < nalgos; a++)
                    printf("%-22s %-18s %8.2f %8.2f %8.2f\n", label, pc_algo_get((pc_algo_id)algos[a])->name,
                           mean[a].g, mean[a].rb, mean[a].c);
            }
        }
        if (!tsv) {
            printf("# ");
            printf(note_fmt, pc_cfa_name((pc_cfa)cfa), backend, BORDER);
            printf("\n");
        }
    }
    if (failed)
        fprintf(stderr, "panocap-quality: %d of %d images failed\n", failed, nimg);
    gpu_close(&gpu);
    free(res);
    free(ok);
    pc_net_free(net);
    return failed ? 1 : 0;
}
