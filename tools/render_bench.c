/* render_bench.c - panocap-bench --render: the render family (render.h)
 * timed side by side in one run, one command, no interaction:
 *
 * GPU (CUDA events around each frame, the frames queued back to back
 * behind a holding kernel, 3 source and 3 destination pictures in
 * rotation so the 50 MB L2 holds neither; median and p99 over --iters):
 *   (a) the panorama: 5 cameras 2040x1080 -> 8600x1300 cylindrical NV12,
 *   (b) one 1920x1080 view, (c) four 1920x1080 views in one frame
 *   (and both again with sampler = bicubic, the views' default, and the
 *   panorama as well, panorama.sampler = bicubic: the ray kernels only),
 * each with our kernel (rays on the fly through the texture unit; with
 * plain loads; from RGB24 cameras), the precomputed-map variant and the
 * peer (per-camera kernels with float maps and weight maps, LUT
 * photometry, a normalise + YUV pass); (d) the panorama with blend =
 * multiband (render_multiband.h: its seams placed on the cameras, the
 * pyramid beside the main pass), with the ray kernels, next to (a)'s
 * feather blend; every output compared with the C
 * reference (PSNR over all NV12 samples, largest difference); and the
 * memory floor measured in the same run (a device-to-device copy of the
 * bytes a frame must move at least).
 * CPU: the reference (1 thread) and the CPU backend's renderer on 2 and
 * on all online CPUs (and --threads N), ms per frame.
 * Then render_bench_ops.c: moving views, the activity map, RGB -> YUV.
 *
 * The rig is synthetic (render_synth.h; yaw -60..60 step 30, hfov 38,
 * ~15 % overlaps, distortion, lens shift, pitch/roll), with Hugin's
 * photometry on (pc_rig_photometry_build: an EMoR response, exposure and
 * white balance per camera, vignetting); the cameras show a procedural
 * scene. Nothing is read from disk.
 */
#include "render_bench.h"

#include "debayer_cuda.h"
#include "panocap_config.h"
#include "render.h"
#include "render_cuda.h"
#include "render_multiband.h"
#include "render_synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if PANOCAP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define NCAM 5
#define CAM_W 2040
#define CAM_H 1080
#define PANO_W 8600
#define PANO_H 1300
#define VIEW_W 1920
#define VIEW_H 1080
#define NVIEWS 4
#define ROT 3 /* pictures in rotation */
/* the cases: the panorama with and without the photometry, one view, four,
 * the panorama blended multiband */
enum { J_PANO, J_PANO_FLAT, J_VIEW, J_VIEWS, J_PANO_MB, J_VIEW_CUBIC, J_VIEWS_CUBIC, J_PANO_CUBIC, NJOBS };
#define PANORAMA_JOB(j) ((j) == J_PANO || (j) == J_PANO_FLAT || (j) == J_PANO_MB || (j) == J_PANO_CUBIC)
#define CUBIC_JOB(j) ((j) == J_VIEW_CUBIC || (j) == J_VIEWS_CUBIC || (j) == J_PANO_CUBIC)
/* the one view is the first of the four: its plan and reference shared */
#define FIRST_OF_VIEWS(j, k) (((j) == J_VIEWS || (j) == J_VIEWS_CUBIC) && (k) == 0)

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void pc_rbench_med_p99(double *v, int n, double *med, double *p99)
{
    qsort(v, n, sizeof *v, cmp_double);
    *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    *p99 = v[(int)(0.99 * (n - 1) + 0.5)];
}

int pc_rbench_host_pic_matrix(pc_picture *p, pc_pixfmt fmt, pc_matrix matrix, int w, int h)
{
    size_t n = pc_picture_layout(p, fmt, matrix, PC_RANGE_LIMITED, w, h, 64, NULL);
    uint8_t *m = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (!m)
        return -1;
    pc_picture_layout(p, fmt, matrix, PC_RANGE_LIMITED, w, h, 64, m);
    return 0;
}

int pc_rbench_host_pic(pc_picture *p, pc_pixfmt fmt, int w, int h)
{
    return pc_rbench_host_pic_matrix(p, fmt, PC_MATRIX_BT709, w, h);
}

double pc_rbench_psnr(const pc_picture *a, const pc_picture *b, int *maxd, double *over1)
{
    double se = 0;
    long n = 0, o1 = 0;
    int md = 0;
    for (int i = 0; i < pc_pixfmt_planes(a->fmt); i++) {
        size_t rb;
        int rows;
        pc_picture_plane_size(a->fmt, a->width, a->height, i, NULL, &rows, &rb);
        for (int y = 0; y < rows; y++)
            for (size_t x = 0; x < rb; x++) {
                int d = abs((int)a->plane[i][(size_t)y * a->pitch[i] + x] - (int)b->plane[i][(size_t)y * b->pitch[i] + x]);
                se += (double)d * d;
                md = d > md ? d : md;
                o1 += d > 1;
                n++;
            }
    }
    *maxd = md;
    *over1 = 100.0 * o1 / n;
    return se > 0 ? 10 * log10(255.0 * 255.0 * n / se) : 99.0;
}

/* The rig, its photometry and the pictures. */
typedef struct scene {
    pc_rig rig;
    pc_rig_photometry ph;
    pc_picture cams[2]; /* RGBX32, RGB24 (host) */
} scene;

/* Hugin's photometry as a calibrated rig has it: exposure and white
 * balance per camera, one EMoR response, radial vignetting (.pto fields;
 * the tables of rig/photometry.c). */
static void make_photometry(scene *s)
{
    for (int c = 0; c < NCAM; c++) {
        pc_rig_camera *cam = &s->rig.cam[c];
        cam->eev = 0.15 * (c - 2);
        cam->er = 1.0 + 0.03 * (c - 2);
        cam->eb = 1.0 - 0.02 * (c - 2);
        cam->resp[0] = -0.3;
        cam->resp[1] = 0.1;
        cam->vm = 5;
        cam->va = 1.0;
        cam->vb = -0.15;
        cam->vc = 0.04;
    }
    pc_rig_photometry_build(&s->rig, &s->ph);
}

static int make_scene(scene *s)
{
    pc_synth_rig(&s->rig, NCAM, CAM_W, CAM_H, 38.0, 30.0, PC_PROJ_CYLINDRICAL, PANO_W, PANO_H);
    make_photometry(s);
    if (pc_rbench_host_pic(&s->cams[0], PC_FMT_RGBX32, CAM_W, NCAM * CAM_H) ||
        pc_rbench_host_pic(&s->cams[1], PC_FMT_RGB24, CAM_W, NCAM * CAM_H))
        return -1;
    const double detail = 38.0 / CAM_W * 3; /* features of ~3 camera pixels */
    pc_synth_cameras(&s->rig, detail, NULL, &s->cams[0]);
    for (int y = 0; y < NCAM * CAM_H; y++) /* the same pictures as RGB24 */
        for (int x = 0; x < CAM_W; x++)
            memcpy(s->cams[1].plane[0] + (size_t)y * s->cams[1].pitch[0] + 3 * x,
                   s->cams[0].plane[0] + (size_t)y * s->cams[0].pitch[0] + 4 * x, 3);
    return 0;
}

typedef struct job {
    const char *name;
    int nplans;
    pc_render_plan *plan[NVIEWS];
    pc_picture ref[NVIEWS]; /* the C reference's output (NV12) */
    double ref_ms;
} job;

static int make_jobs(scene *s, job *jobs, int maps, char *err, size_t errlen)
{
    pc_render_options opt;
    pc_render_options_default(&opt);
    opt.maps = maps;
    pc_view_model v;
    memset(jobs, 0, NJOBS * sizeof *jobs);
    jobs[J_PANO].name = "panorama 8600x1300";
    jobs[J_PANO_FLAT].name = "panorama, no photo";
    jobs[J_VIEW].name = "view 1920x1080";
    jobs[J_VIEWS].name = "4 views 1920x1080";
    jobs[J_PANO_MB].name = "panorama multiband";
    jobs[J_VIEW_CUBIC].name = "view bicubic";
    jobs[J_VIEWS_CUBIC].name = "4 views bicubic";
    jobs[J_PANO_CUBIC].name = "panorama bicubic";
    jobs[J_PANO_CUBIC].nplans = 1;
    jobs[J_PANO].nplans = jobs[J_PANO_FLAT].nplans = jobs[J_VIEW].nplans = jobs[J_PANO_MB].nplans = 1;
    jobs[J_VIEW_CUBIC].nplans = 1;
    jobs[J_VIEWS].nplans = jobs[J_VIEWS_CUBIC].nplans = NVIEWS;
    pc_rig_panorama_view(&s->rig, PANO_W, PANO_H, &v);
    int rc = pc_render_plan_build(&jobs[J_PANO].plan[0], &s->rig, &v, &s->ph, &opt, err, errlen);
    if (!rc)
        rc = pc_render_plan_build(&jobs[J_PANO_FLAT].plan[0], &s->rig, &v, NULL, &opt, err, errlen);
    static const double pans[NVIEWS] = {-40, -12, 14, 41};
    for (int k = 0; !rc && k < NVIEWS; k++) {
        pc_rig_rect_view(VIEW_W, VIEW_H, 36.0, pans[k], -3.0, 0.0, &v);
        rc = pc_render_plan_build(&jobs[J_VIEWS].plan[k], &s->rig, &v, &s->ph, &opt, err, errlen);
    }
    if (!rc)
        jobs[J_VIEW].plan[0] = jobs[J_VIEWS].plan[0];
    pc_render_options cubic = opt;
    cubic.maps = 0;
    cubic.sampler = PC_RENDER_BICUBIC;
    for (int k = 0; !rc && k < NVIEWS; k++) {
        pc_rig_rect_view(VIEW_W, VIEW_H, 36.0, pans[k], -3.0, 0.0, &v);
        rc = pc_render_plan_build(&jobs[J_VIEWS_CUBIC].plan[k], &s->rig, &v, &s->ph, &cubic, err, errlen);
    }
    if (!rc)
        jobs[J_VIEW_CUBIC].plan[0] = jobs[J_VIEWS_CUBIC].plan[0];
    if (!rc) { /* the panorama as panorama.sampler = "bicubic" has it */
        pc_rig_panorama_view(&s->rig, PANO_W, PANO_H, &v);
        rc = pc_render_plan_build(&jobs[J_PANO_CUBIC].plan[0], &s->rig, &v, &s->ph, &cubic, err, errlen);
    }
    if (!rc) { /* the same panorama, blended multiband, its seams placed on the cameras */
        pc_rig_panorama_view(&s->rig, PANO_W, PANO_H, &v);
        opt.blend = PC_RENDER_MULTIBAND;
        rc = pc_render_plan_build(&jobs[J_PANO_MB].plan[0], &s->rig, &v, &s->ph, &opt, err, errlen);
        if (!rc)
            rc = pc_render_plan_place_seams(jobs[J_PANO_MB].plan[0], &s->cams[0], err, errlen);
    }
    return rc;
}

/* The C reference of every job's plans (one frame each; timed). */
static int references(scene *s, job *jobs, char *err, size_t errlen)
{
    for (int j = 0; j < NJOBS; j++) {
        for (int k = 0; k < jobs[j].nplans; k++) {
            if (FIRST_OF_VIEWS(j, k)) { /* the one view's */
                jobs[j].ref[0] = jobs[j - 1].ref[0];
                jobs[j].ref_ms += jobs[j - 1].ref_ms;
                continue;
            }
            const pc_render_plan *p = jobs[j].plan[k];
            if (pc_rbench_host_pic(&jobs[j].ref[k], PC_FMT_NV12, p->view.w, p->view.h))
                return -1;
            double t0 = now_ms();
            if (pc_render_ref(p, &s->cams[0], &jobs[j].ref[k], err, errlen))
                return -1;
            jobs[j].ref_ms += now_ms() - t0;
        }
    }
    return 0;
}

/* The share of tiles some camera sees (%), and the cameras per such tile. */
static double coverage(const pc_render_plan *p, double *per_tile)
{
    long seen = 0, cams = 0, n = (long)p->ntx * p->nty;
    for (long t = 0; t < n; t++) {
        seen += p->tmask[t] != 0;
        cams += __builtin_popcount(p->tmask[t]);
    }
    *per_tile = seen ? (double)cams / seen : 0;
    return 100.0 * seen / n;
}

/* ------------------------------------------------------------------------ */
#if PANOCAP_HAVE_CUDA

#define CKB(call)                                                                                  \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "panocap-bench --render: %s: %s\n", #call, cudaGetErrorString(e_));    \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

double pc_rbench_copy_us(size_t bytes)
{
    void *a = NULL, *b = NULL;
    cudaEvent_t e0, e1;
    double v[21];
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        cudaFree(a);
        return 0;
    }
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaMemset(a, 1, bytes);
    for (int i = -3; i < 21; i++) {
        cudaEventRecord(e0, 0);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 0)
            v[i] = ms * 1e3;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    double med, p99;
    pc_rbench_med_p99(v, 21, &med, &p99);
    return med;
}

int pc_rbench_copy_pic(const pc_picture *dst, const pc_picture *src)
{
    for (int i = 0; i < pc_pixfmt_planes(src->fmt); i++) {
        size_t rb;
        int rows;
        pc_picture_plane_size(src->fmt, src->width, src->height, i, NULL, &rows, &rb);
        if (cudaMemcpy2D(dst->plane[i], dst->pitch[i], src->plane[i], src->pitch[i], rb, rows, cudaMemcpyDefault) !=
            cudaSuccess)
            return -1;
    }
    return 0;
}

static int bench_gpu(const pc_render_bench_opts *o, scene *s, job *jobs)
{
    char err[512];
    pc_gpu *g = NULL;
    if (pc_gpu_device_count() <= 0) {
        printf("# GPU: no CUDA device here: GPU timings skipped\n");
        return 0;
    }
    if (pc_gpu_open(&g, o->device, CAM_W, NCAM * CAM_H, 1, err, sizeof err)) {
        fprintf(stderr, "panocap-bench --render: %s\n", err);
        return 1;
    }
    printf("# GPU: %s; CUDA events per frame, %d frames after 10 warm-up, median and p99; %d source and %d "
           "output pictures in rotation\n", pc_gpu_device_name(g), o->iters, ROT, ROT);
    pc_picture dsrc[2][ROT];
    for (int f = 0; f < 2; f++)
        for (int r = 0; r < ROT; r++) {
            if (pc_gpu_render_picture_alloc(g, f ? PC_FMT_RGB24 : PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED,
                                            CAM_W, NCAM * CAM_H, &dsrc[f][r], err, sizeof err) ||
                pc_rbench_copy_pic(&dsrc[f][r], &s->cams[f])) {
                fprintf(stderr, "panocap-bench --render: cameras on the device: %s\n", err);
                return 1;
            }
        }
    const double src_mb = (double)CAM_W * NCAM * CAM_H * 4 / 1e6;
    printf("# memory floor (cudaMemcpy D2D of the bytes a frame moves at least: RGBX32 cameras read once, NV12 "
           "written once):\n");
    double floor_us[NJOBS], best[NJOBS], peer[NJOBS];
    int quality = 1;
    for (int j = 0; j < NJOBS; j++) {
        double out_mb = 0;
        for (int k = 0; k < jobs[j].nplans; k++)
            out_mb += 1.5 * jobs[j].plan[k]->view.w * jobs[j].plan[k]->view.h / 1e6;
        /* a view reads only the cameras it sees: count their share */
        double in_mb = PANORAMA_JOB(j) ? src_mb : 0;
        for (int k = 0; !PANORAMA_JOB(j) && k < jobs[j].nplans; k++) {
            unsigned all = 0;
            for (long t = 0; t < (long)jobs[j].plan[k]->ntx * jobs[j].plan[k]->nty; t++)
                all |= jobs[j].plan[k]->tmask[t];
            in_mb += src_mb * __builtin_popcount(all) / NCAM;
        }
        floor_us[j] = pc_rbench_copy_us((size_t)((in_mb + out_mb) * 1e6 / 2));
        printf("#   %-20s %7.1f MB in, %5.1f MB out: %7.1f us\n", jobs[j].name, in_mb, out_mb, floor_us[j]);
    }
    printf("%-20s %-10s %-6s %10s %10s %8s %9s %8s %8s %9s\n", "case", "kernel", "cams", "median_us", "p99_us",
           "vs_floor", "psnr_dB", "max_diff", "over1_%", "vs_peer");
    double *us = malloc(sizeof *us * o->iters);
    int rc = 0;
    for (int j = 0; j < NJOBS && !rc; j++) {
        pc_gpu_renderer *r[NVIEWS] = {NULL};
        pc_picture dout[NVIEWS * ROT], host[NVIEWS];
        memset(dout, 0, sizeof dout);
        for (int k = 0; k < jobs[j].nplans && !rc; k++) {
            const pc_render_plan *p = jobs[j].plan[k];
            rc = pc_gpu_render_prepare(g, p, j == J_PANO_MB || CUBIC_JOB(j) ? 0
                                             : PC_GPU_RENDER_WANT_MAP | PC_GPU_RENDER_WANT_PEER, &r[k], err, sizeof err);
            for (int q = 0; !rc && q < ROT; q++)
                rc = pc_gpu_render_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, p->view.w,
                                                 p->view.h, &dout[k * ROT + q], err, sizeof err);
            if (!rc && pc_rbench_host_pic(&host[k], PC_FMT_NV12, p->view.w, p->view.h))
                rc = -1;
        }
        if (rc) {
            fprintf(stderr, "panocap-bench --render: %s: %s\n", jobs[j].name, err);
            break;
        }
        static const struct {
            int variant, src;
        } runs[] = {{PC_GPU_RENDER_RAY, 0}, {PC_GPU_RENDER_RAY_LOADS, 0}, {PC_GPU_RENDER_RAY, 1},
                    {PC_GPU_RENDER_MAP, 0}, {PC_GPU_RENDER_PEER, 0}};
        /* multiband and bicubic: the ray kernels (the others are refused),
         * against the bilinear job's peer */
        const int nruns = j == J_PANO_MB || CUBIC_JOB(j) ? 3 : (int)(sizeof runs / sizeof runs[0]);
        double med[8], p99[8], ps[8], ov[8];
        int md[8];
        for (int v = 0; v < nruns && !rc; v++) {
            int var[NVIEWS];
            for (int k = 0; k < NVIEWS; k++)
                var[k] = runs[v].variant;
            rc = pc_gpu_render_time(jobs[j].nplans, r, var, dsrc[runs[v].src], ROT, dout, ROT, 10, o->iters, us, err,
                                    sizeof err);
            if (rc)
                break;
            pc_rbench_med_p99(us, o->iters, &med[v], &p99[v]);
            /* quality: a fresh frame from source 0 into output 0 of each plan */
            ps[v] = 99;
            md[v] = 0;
            ov[v] = 0;
            for (int k = 0; k < jobs[j].nplans && !rc; k++) {
                CKB(cudaMemset2D(dout[k * ROT].plane[0], dout[k * ROT].pitch[0], 0xA5, (size_t)dout[k * ROT].width,
                                 (size_t)dout[k * ROT].height));
                rc = pc_gpu_render_enqueue(r[k], runs[v].variant, &dsrc[runs[v].src][0], &dout[k * ROT], err,
                                           sizeof err);
                if (!rc && (cudaDeviceSynchronize() != cudaSuccess || pc_rbench_copy_pic(&host[k], &dout[k * ROT]))) {
                    snprintf(err, sizeof err, "%s", cudaGetErrorString(cudaGetLastError()));
                    rc = -1;
                }
                int m;
                double o1, q = rc ? 0 : pc_rbench_psnr(&host[k], &jobs[j].ref[k], &m, &o1);
                ps[v] = q < ps[v] ? q : ps[v];
                md[v] = m > md[v] ? m : md[v];
                ov[v] = o1 > ov[v] ? o1 : ov[v];
            }
        }
        if (rc) {
            fprintf(stderr, "panocap-bench --render: %s: %s\n", jobs[j].name, err);
            break;
        }
        const double peer_us = j == J_PANO_MB || j == J_PANO_CUBIC ? peer[J_PANO]
                               : j == J_VIEW_CUBIC ? peer[J_VIEW] : j == J_VIEWS_CUBIC ? peer[J_VIEWS] : med[nruns - 1];
        for (int v = 0; v < nruns; v++) {
            printf("%-20s %-10s %-6s %10.1f %10.1f %7.2fx %9.2f %8d %8.3f %8.2fx\n", jobs[j].name,
                   pc_gpu_render_variant_name(runs[v].variant), runs[v].src ? "rgb24" : "rgbx32", med[v], p99[v],
                   med[v] / floor_us[j], ps[v], md[v], ov[v], peer_us / med[v]);
            quality &= md[v] <= 2 && ov[v] <= 0.1;
        }
        best[j] = med[0]; /* ray, RGBX32 through the texture unit: the kernel the daemon runs */
        peer[j] = peer_us;
        for (int k = 0; k < jobs[j].nplans; k++) {
            pc_gpu_render_free(r[k]);
            for (int q = 0; q < ROT; q++)
                pc_gpu_picture_free(g, &dout[k * ROT + q]);
            free(host[k].plane[0]);
        }
    }
    free(us);
    if (!rc) {
        printf("# quality: every kernel within 1 code value of the C reference on >= 99.9 %% of samples, never more "
               "than 2: %s\n", quality ? "yes" : "NO");
        printf("# targets (ray, rgbx32): panorama %.1f us (<= 100: %s), %.2fx the peer (>= 4: %s); one view %.1f us "
               "(<= 30: %s); four views %.1f us\n", best[J_PANO], best[J_PANO] <= 100 ? "yes" : "no",
               peer[J_PANO] / best[J_PANO], peer[J_PANO] >= 4 * best[J_PANO] ? "yes" : "no", best[J_VIEW],
               best[J_VIEW] <= 30 ? "yes" : "no", best[J_VIEWS]);
        printf("# multiband (ray, rgbx32): panorama %.1f us (<= 100: %s), %.1f us more than the feather blend's %.1f, "
               "%.2fx the peer\n", best[J_PANO_MB], best[J_PANO_MB] <= 100 ? "yes" : "no", best[J_PANO_MB] - best[J_PANO],
               best[J_PANO], peer[J_PANO] / best[J_PANO_MB]);
        printf("# bicubic (ray, rgbx32; the views' default sampler): one view %.1f us (<= 30: %s), four views %.1f "
               "us; the panorama %.1f us (%.1f us more than bilinear's %.1f)\n", best[J_VIEW_CUBIC],
               best[J_VIEW_CUBIC] <= 30 ? "yes" : "no", best[J_VIEWS_CUBIC], best[J_PANO_CUBIC],
               best[J_PANO_CUBIC] - best[J_PANO], best[J_PANO]);
    }
    for (int f = 0; f < 2; f++)
        for (int q = 0; q < ROT; q++)
            pc_gpu_picture_free(g, &dsrc[f][q]);
    pc_gpu_close(g);
    return rc ? 1 : 0;
}
#else
static int bench_gpu(const pc_render_bench_opts *o, scene *s, job *jobs)
{
    printf("# GPU: this build has no CUDA support (meson -Dcuda=enabled): GPU timings skipped\n");
    return 0;
}
#endif

/* ------------------------------------------------------------------------ */

static int bench_cpu(const pc_render_bench_opts *o, scene *s, job *jobs)
{
    char err[256];
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int nt[3] = {2, (int)(online > 0 ? online : 1), o->threads}, nn = 0;
    int list[3];
    for (int i = 0; i < 3; i++) {
        int dup = nt[i] <= 0;
        for (int k = 0; k < nn; k++)
            dup |= list[k] == nt[i];
        if (!dup)
            list[nn++] = nt[i];
    }
    printf("# CPU: %ld online CPUs; the reference once per case (1 thread), the CPU backend's renderer (%s lanes, "
           "bit-identical to it) %d frames per thread count\n", online, pc_render_cpu_best_lanes(), o->cpu_iters);
    printf("%-20s %-10s %7s %10s %10s\n", "case", "cpu", "threads", "median_ms", "vs_ref");
    for (int j = 0; j < NJOBS; j++) {
        printf("%-20s %-10s %7d %10.1f %9.1fx\n", jobs[j].name, "reference", 1, jobs[j].ref_ms, 1.0);
        for (int t = 0; t < nn; t++) {
            pc_cpu *cpu = NULL;
            if (pc_cpu_open(&cpu, list[t], 16, 16, err, sizeof err)) {
                fprintf(stderr, "panocap-bench --render: %s\n", err);
                return 1;
            }
            pc_picture out[NVIEWS];
            for (int k = 0; k < jobs[j].nplans; k++)
                if (pc_rbench_host_pic(&out[k], PC_FMT_NV12, jobs[j].plan[k]->view.w, jobs[j].plan[k]->view.h))
                    return 1;
            double *ms = malloc(sizeof *ms * o->cpu_iters);
            int bad = 0;
            for (int i = 0; i < o->cpu_iters; i++) {
                double t0 = now_ms();
                for (int k = 0; k < jobs[j].nplans; k++)
                    bad |= pc_render_cpu(pc_cpu_pool(cpu), jobs[j].plan[k], &s->cams[0], &out[k], err, sizeof err) != 0;
                ms[i] = now_ms() - t0;
            }
            for (int k = 0; k < jobs[j].nplans; k++) {
                int m;
                double o1;
                if (pc_rbench_psnr(&out[k], &jobs[j].ref[k], &m, &o1) < 99)
                    bad = 1;
                free(out[k].plane[0]);
            }
            double med, p99;
            pc_rbench_med_p99(ms, o->cpu_iters, &med, &p99);
            printf("%-20s %-10s %7d %10.1f %9.1fx%s\n", jobs[j].name, "cpu", list[t], med, jobs[j].ref_ms / med,
                   bad ? "  DIFFERS FROM THE REFERENCE" : "");
            free(ms);
            pc_cpu_close(cpu);
            if (bad)
                return 1;
        }
    }
    return 0;
}

int pc_render_bench(const pc_render_bench_opts *o)
{
    char err[512];
    scene *s = calloc(1, sizeof *s); /* the photometry's tables: 85 KB */
    job jobs[NJOBS];
    double t0 = now_ms();
    if (!s)
        return 1;
    printf("# panocap-bench --render: %d cameras %dx%d (rectilinear, hfov 38, yaw -60..60 step 30, distortion and "
           "lens shift), Hugin photometry on (EMoR response, exposure and white balance per camera, vignetting)\n",
           NCAM, CAM_W, CAM_H);
    if (make_scene(s)) {
        fprintf(stderr, "panocap-bench --render: out of memory for the cameras\n");
        return 1;
    }
    if (make_jobs(s, jobs, 1, err, sizeof err)) { /* maps: the GPU map variant, and the CPU renderer reads them */
        fprintf(stderr, "panocap-bench --render: %s\n", err);
        return 1;
    }
    double per_tile;
    const double cov = coverage(jobs[J_PANO].plan[0], &per_tile);
    printf("# cases: %s (%.1f %% of its 32x8 tiles seen by a camera, %.2f cameras per seen tile), the same without "
           "the photometry, %s, %s (pan -40 -12 14 41, tilt -3, hfov 36); NV12 BT.709 limited\n", jobs[J_PANO].name,
           cov, per_tile, jobs[J_VIEW].name, jobs[J_VIEWS].name);
    const pc_render_plan *mbp = jobs[J_PANO_MB].plan[0];
    pc_mb_sizes z;
    pc_render_mb_sizes(mbp, &z);
    const double all = (double)PANO_W * PANO_H;
    printf("# %s: %d levels; its %d strips (the seams placed) span %.2f M output pixels (%.1f %% of the panorama; "
           "levels 1..%d %.2f M), D sampled at %.2f M of them, the blend zone's tiles (+- %d px) %.2f M (%.1f %%)\n",
           jobs[J_PANO_MB].name, mbp->mb->levels, mbp->mb->nstrips, z.strips / 1e6, 100.0 * z.strips / all,
           mbp->mb->levels - 1, z.coarser / 1e6, z.sampled / 1e6, mbp->mb->reach, z.zone / 1e6, 100.0 * z.zone / all);
    if (references(s, jobs, err, sizeof err)) {
        fprintf(stderr, "panocap-bench --render: reference: %s\n", err);
        return 1;
    }
    printf("# set-up (scene, plans, maps, C references) %.1f s\n", (now_ms() - t0) / 1e3);
    int rc = o->gpu ? bench_gpu(o, s, jobs) : 0;
    if (!rc && o->cpu)
        rc = bench_cpu(o, s, jobs);
    if (!rc)
        rc = pc_render_bench_ops(o, &s->rig, &s->ph, s->cams);
    return rc;
}
