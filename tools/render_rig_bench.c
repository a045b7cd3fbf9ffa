/* render_rig_bench.c - panocap-bench --render --rig FILE.pto: the CPU
 * renderer timed on a rig's own pictures, and what its peers need to run
 * on the same ones (tools/cpu-render-peers):
 *
 *   - the rig (.pto) and its camera pictures (PNG or PPM, the files its i
 *     lines name, relative to the .pto's folder), stacked as the demosaic
 *     writes them for the render step (RGBX32);
 *   - the panorama at the .pto's output size (each side rounded down to
 *     even), Hugin's photometry, feather blend: the daemon's plan;
 *   - the C reference once (RGB24, one thread, timed); then pc_render_cpu
 *     (its best lanes) on 2 threads, on every online CPU and on --threads
 *     N: first into RGB24, compared with the reference byte for byte, then
 *     timed into I420 BT.601 limited range (what OpenCV's
 *     COLOR_RGB2YUV_I420 writes), --iters frames after 2 warm-up frames:
 *     median and fastest wall ms per frame, and the median process CPU
 *     time per frame (all threads);
 *   - with --peer-data DIR: reference.npy (the reference's RGB, H x W x 3
 *     uint8), map<i>.npy (camera i's source position, x then y, of every
 *     output pixel of its box: pc_view_ray + pc_cam_project, float32, -1e4
 *     where it sees nothing: cv2.remap's map) and peer.json (the boxes,
 *     each camera's valid area, gains and vignetting, the response tables,
 *     the feather width).
 *
 * Result lines start with a keyword and hold key=value pairs, so that a
 * script reads them: "reference ...", "cpu-render ...".
 */
#include "render_rig_bench.h"

#include "debayer.h" /* pc_cpu: the threads pc_render_cpu runs on */
#include "errmsg.h"
#include "render_bench.h" /* pc_rbench_host_pic_matrix */
#include "image.h"
#include "render.h"
#include "rig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double clock_ms(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double now_ms(void) { return clock_ms(CLOCK_MONOTONIC); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The pictures the rig's i lines name, stacked into src (RGBX32). */
static int load_cameras(const char *pto, const pc_rig *rig, pc_picture *src)
{
    char dir[4096], path[8192], err[512];
    snprintf(dir, sizeof dir, "%s", pto);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
    const int w = rig->cam[0].w, h = rig->cam[0].h;
    if (pc_rbench_host_pic_matrix(src, PC_FMT_RGBX32, PC_MATRIX_BT709, w, rig->ncam * h)) {
        fprintf(stderr, "panocap-bench --render --rig: out of memory for %d cameras of %dx%d\n", rig->ncam, w, h);
        return -1;
    }
    for (int c = 0; c < rig->ncam; c++) {
        const char *f = rig->cam[c].file;
        snprintf(path, sizeof path, "%s%s", f[0] == '/' ? "" : dir, f);
        pc_image img;
        if (!f[0]) {
            fprintf(stderr, "panocap-bench --render --rig: %s:%d: image %d names no picture (n\"...\")\n", pto,
                    rig->cam[c].line, c);
            return -1;
        }
        if (pc_image_read(path, &img, err, sizeof err)) {
            fprintf(stderr, "panocap-bench --render --rig: camera %d: %s\n", c, err);
            return -1;
        }
        if (img.width != w || img.height != h) {
            fprintf(stderr, "panocap-bench --render --rig: %s is %dx%d, but %s:%d says %dx%d (every camera %dx%d)\n",
                    path, img.width, img.height, pto, rig->cam[c].line, rig->cam[c].w, rig->cam[c].h, w, h);
            pc_image_free(&img);
            return -1;
        }
        for (int y = 0; y < h; y++) {
            const uint8_t *s = img.rgb + (size_t)y * img.pitch;
            uint8_t *d = src->plane[0] + ((size_t)c * h + y) * src->pitch[0];
            for (int x = 0; x < w; x++) {
                d[4 * x] = s[3 * x];
                d[4 * x + 1] = s[3 * x + 1];
                d[4 * x + 2] = s[3 * x + 2];
                d[4 * x + 3] = 255;
            }
        }
        pc_image_free(&img);
    }
    return 0;
}

/* --- --peer-data ---------------------------------------------------------- */

/* A NumPy .npy file (format 1.0): descr '<f4' or '|u1', C order; rows of
 * row_bytes at pitch. */
static int write_npy(const char *path, const char *descr, const int *shape, int nd, const void *data, int rows,
                     size_t row_bytes, size_t pitch)
{
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < nd; i++)
        n += snprintf(hdr + n, sizeof hdr - n, "%d,%s", shape[i], i + 1 < nd ? " " : "");
    n += snprintf(hdr + n, sizeof hdr - n, "), }");
    while ((10 + n + 1) % 64)
        hdr[n++] = ' ';
    hdr[n++] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "panocap-bench --render --rig: %s: %s\n", path, strerror(errno));
        return -1;
    }
    const unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255),
                                     (unsigned char)(n >> 8)};
    int ok = fwrite(magic, 1, 10, f) == 10 && fwrite(hdr, 1, (size_t)n, f) == (size_t)n;
    for (int y = 0; ok && y < rows; y++)
        ok = fwrite((const uint8_t *)data + (size_t)y * pitch, 1, row_bytes, f) == row_bytes;
    if (fclose(f) || !ok) {
        fprintf(stderr, "panocap-bench --render --rig: %s: write failed\n", path);
        return -1;
    }
    return 0;
}

static void json_floats(FILE *f, const float *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.9g", i ? "," : "", (double)v[i]);
    fputc(']', f);
}

/* Camera c's box (the output pixels it sees, from its tiles) and map. */
static int write_map(const char *dir, const pc_render_plan *p, int c, int box[4])
{
    int x0 = p->view.w, x1 = -1, y0 = p->view.h, y1 = -1;
    for (int ty = 0; ty < p->nty; ty++)
        for (int tx = 0; tx < p->ntx; tx++) {
            if (!(p->tmask[(size_t)ty * p->ntx + tx] >> c & 1))
                continue;
            for (int y = ty * PC_RENDER_TILE_H; y < (ty + 1) * PC_RENDER_TILE_H && y < p->view.h; y++)
                for (int x = tx * PC_RENDER_TILE_W; x < (tx + 1) * PC_RENDER_TILE_W && x < p->view.w; x++) {
                    float ray[3], sx, sy;
                    pc_view_ray(&p->view, (float)x, (float)y, ray);
                    if (!pc_cam_project(&p->cam[c].geo, ray, &sx, &sy))
                        continue;
                    x0 = x < x0 ? x : x0;
                    x1 = x > x1 ? x : x1;
                    y0 = y < y0 ? y : y0;
                    y1 = y > y1 ? y : y1;
                }
        }
    if (x1 < 0) { /* sees nothing: a 2x2 box of nothing */
        x0 = y0 = 0;
        x1 = y1 = 1;
    }
    box[0] = x0, box[1] = y0, box[2] = x1 - x0 + 1, box[3] = y1 - y0 + 1;
    float *m = malloc(sizeof *m * 2 * (size_t)box[2] * box[3]);
    if (!m) {
        fprintf(stderr, "panocap-bench --render --rig: out of memory for camera %d's map\n", c);
        return -1;
    }
    for (int y = 0; y < box[3]; y++)
        for (int x = 0; x < box[2]; x++) {
            float ray[3], sx, sy, *e = m + 2 * ((size_t)y * box[2] + x);
            pc_view_ray(&p->view, (float)(x0 + x), (float)(y0 + y), ray);
            const int seen = pc_cam_project(&p->cam[c].geo, ray, &sx, &sy);
            e[0] = seen ? sx : -1e4f;
            e[1] = seen ? sy : -1e4f;
        }
    char path[8192];
    snprintf(path, sizeof path, "%s/map%d.npy", dir, c);
    const int shape[3] = {box[3], box[2], 2};
    int rc = write_npy(path, "<f4", shape, 3, m, box[3], sizeof *m * 2 * box[2], sizeof *m * 2 * box[2]);
    free(m);
    return rc;
}

static int write_peer_data(const char *dir, const char *pto, const pc_rig *rig, const pc_render_plan *p,
                           const pc_picture *ref)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "panocap-bench --render --rig: --peer-data %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char path[8192];
    snprintf(path, sizeof path, "%s/reference.npy", dir);
    const int rshape[3] = {p->view.h, p->view.w, 3};
    if (write_npy(path, "|u1", rshape, 3, ref->plane[0], p->view.h, 3 * (size_t)p->view.w, ref->pitch[0]))
        return -1;
    int box[PC_RENDER_MAX_CAMERAS][4];
    for (int c = 0; c < p->ncam; c++)
        if (write_map(dir, p, c, box[c]))
            return -1;
    snprintf(path, sizeof path, "%s/peer.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "panocap-bench --render --rig: %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\"rig\": \"%s\", \"width\": %d, \"height\": %d, \"photo\": %d, \"inv_feather\": %.9g,\n", pto,
            p->view.w, p->view.h, p->photo, (double)p->inv_feather);
    fprintf(f, " \"out_knots\": ");
    json_floats(f, p->out_resp, PC_RIG_RESPONSE_KNOTS);
    fprintf(f, ",\n \"cameras\": [\n");
    for (int c = 0; c < p->ncam; c++) {
        const pc_cam_model *g = &p->cam[c].geo;
        const pc_vig_model *v = &p->cam[c].vig;
        fprintf(f, "  {\"picture\": \"%s\", \"map\": \"map%d.npy\", \"box\": [%d, %d, %d, %d],\n", rig->cam[c].file,
                c, box[c][0], box[c][1], box[c][2], box[c][3]);
        fprintf(f, "   \"valid\": [%.9g, %.9g, %.9g, %.9g], \"circle\": %d, \"gain\": [%.9g, %.9g, %.9g],\n",
                (double)g->x0, (double)g->x1, (double)g->y0, (double)g->y1, g->circle, (double)p->cam[c].gain[0],
                (double)p->cam[c].gain[1], (double)p->cam[c].gain[2]);
        fprintf(f, "   \"vig\": {\"on\": %d, \"va\": %.9g, \"vb\": %.9g, \"vc\": %.9g, \"vd\": %.9g, \"vcx\": %.9g, "
                   "\"vcy\": %.9g, \"vq\": %.9g},\n   \"inv_knots\": ",
                v->on, (double)v->va, (double)v->vb, (double)v->vc, (double)v->vd, (double)v->vcx, (double)v->vcy,
                (double)v->vq);
        json_floats(f, p->inv_knots[c], PC_RIG_RESPONSE_KNOTS);
        fprintf(f, "}%s\n", c + 1 < p->ncam ? "," : "");
    }
    fprintf(f, " ]}\n");
    if (fclose(f)) {
        fprintf(stderr, "panocap-bench --render --rig: %s: write failed\n", path);
        return -1;
    }
    printf("# peer data: %s (reference.npy, map0..%d.npy, peer.json)\n", dir, p->ncam - 1);
    return 0;
}

/* --- timing --------------------------------------------------------------- */

static int same_rgb(const pc_picture *a, const pc_picture *b)
{
    for (int y = 0; y < a->height; y++)
        if (memcmp(a->plane[0] + (size_t)y * a->pitch[0], b->plane[0] + (size_t)y * b->pitch[0],
                   3 * (size_t)a->width))
            return 0;
    return 1;
}

static int time_cpu(const pc_render_plan *p, const pc_picture *src, const pc_picture *ref, int threads, int iters)
{
    char err[512];
    pc_cpu *cpu = NULL;
    pc_picture rgb, yuv;
    if (pc_cpu_open(&cpu, threads, 16, 16, err, sizeof err)) {
        fprintf(stderr, "panocap-bench --render --rig: %s\n", err);
        return -1;
    }
    if (pc_rbench_host_pic_matrix(&rgb, PC_FMT_RGB24, PC_MATRIX_BT601, p->view.w, p->view.h) ||
        pc_rbench_host_pic_matrix(&yuv, PC_FMT_I420, PC_MATRIX_BT601, p->view.w, p->view.h)) {
        fprintf(stderr, "panocap-bench --render --rig: out of memory for the panorama\n");
        return -1;
    }
    double *ms = malloc(sizeof *ms * 2 * iters), *cpu_ms = ms + iters;
    int rc = ms ? pc_render_cpu(pc_cpu_pool(cpu), p, src, &rgb, err, sizeof err) : -1;
    const int same = !rc && same_rgb(&rgb, ref);
    for (int i = -2; !rc && i < iters; i++) {
        const double t0 = now_ms(), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        rc = pc_render_cpu(pc_cpu_pool(cpu), p, src, &yuv, err, sizeof err);
        if (i >= 0) {
            ms[i] = now_ms() - t0;
            cpu_ms[i] = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
        }
    }
    if (rc) {
        fprintf(stderr, "panocap-bench --render --rig: %s\n", ms ? err : "out of memory");
    } else {
        qsort(ms, iters, sizeof *ms, cmp_double);
        qsort(cpu_ms, iters, sizeof *ms, cmp_double);
        printf("cpu-render lanes=%s threads=%d median_ms=%.2f min_ms=%.2f cpu_ms=%.2f frames=%d identical=%s\n",
               pc_render_cpu_best_lanes(), threads, ms[iters / 2], ms[0], cpu_ms[iters / 2], iters,
               same ? "yes" : "NO");
    }
    free(ms);
    free(rgb.plane[0]);
    free(yuv.plane[0]);
    pc_cpu_close(cpu);
    return rc || !same ? -1 : 0;
}

int pc_render_rig_bench(const pc_render_rig_bench_opts *o)
{
    char err[512];
    pc_rig rig;
    pc_picture src, ref;
    if (pc_rig_load(o->rig, &rig, err, sizeof err)) {
        fprintf(stderr, "panocap-bench --render --rig: %s\n", err);
        return 1;
    }
    for (int c = 1; c < rig.ncam; c++)
        if (rig.cam[c].w != rig.cam[0].w || rig.cam[c].h != rig.cam[0].h) {
            fprintf(stderr, "panocap-bench --render --rig: %s:%d: image %d is %dx%d, image 0 %dx%d (one size for "
                    "all)\n", o->rig, rig.cam[c].line, c, rig.cam[c].w, rig.cam[c].h, rig.cam[0].w, rig.cam[0].h);
            return 1;
        }
    if (load_cameras(o->rig, &rig, &src))
        return 1;
    int ow, oh;
    pc_rig_output_size(&rig, &ow, &oh);
    const int w = ow & ~1, h = oh & ~1;
    pc_view_model view;
    pc_rig_panorama_view(&rig, w, h, &view);
    pc_rig_photometry *ph = malloc(sizeof *ph);
    pc_render_plan *plan = NULL;
    if (!ph) {
        fprintf(stderr, "panocap-bench --render --rig: out of memory\n");
        return 1;
    }
    pc_rig_photometry_build(&rig, ph);
    const double t0 = now_ms();
    int rc = pc_render_plan_build(&plan, &rig, &view, ph, NULL, err, sizeof err);
    free(ph);
    if (rc) {
        fprintf(stderr, "panocap-bench --render --rig: %s\n", err);
        return 1;
    }
    double load[1] = {-1};
    getloadavg(load, 1);
    printf("# panocap-bench --render --rig %s: %d cameras %dx%d -> %dx%d panorama%s, feather blend, photometry %s; "
           "plan %.0f ms; load average %.2f\n", o->rig, rig.ncam, rig.cam[0].w, rig.cam[0].h, w, h,
           w != ow || h != oh ? " (the .pto's output size rounded down to even)" : "", plan->photo ? "on" : "off",
           now_ms() - t0, load[0]);
    if (pc_rbench_host_pic_matrix(&ref, PC_FMT_RGB24, PC_MATRIX_BT601, w, h)) {
        fprintf(stderr, "panocap-bench --render --rig: out of memory for the panorama\n");
        return 1;
    }
    const double t1 = now_ms();
    if (pc_render_ref(plan, &src, &ref, err, sizeof err)) {
        fprintf(stderr, "panocap-bench --render --rig: reference: %s\n", err);
        return 1;
    }
    printf("reference threads=1 ms=%.1f\n", now_ms() - t1);
    fflush(stdout);
    rc = o->peer_data ? write_peer_data(o->peer_data, o->rig, &rig, plan, &ref) : 0;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int want[3] = {2, (int)(online > 0 ? online : 1), o->threads};
    int done[3], ndone = 0;
    for (int i = 0; !rc && i < 3; i++) {
        int dup = want[i] <= 0;
        for (int k = 0; k < ndone; k++)
            dup |= done[k] == want[i];
        if (dup)
            continue;
        done[ndone++] = want[i];
        rc = time_cpu(plan, &src, &ref, want[i], o->iters);
        fflush(stdout);
    }
    pc_render_plan_free(plan);
    free(src.plane[0]);
    free(ref.plane[0]);
    return rc ? 1 : 0;
}
