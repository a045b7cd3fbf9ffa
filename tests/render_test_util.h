/* render_test_util.h - what the render family's tests (test_render.c,
 * test_render_multiband.c) share: comparing two pictures sample by sample
 * under the rule the GPU kernels keep against the C reference, Hugin's
 * photometry on a synthetic rig, the reference against the CPU renderer
 * and the emulated CUDA kernels in every format, whether a tool is
 * installed, and the daemon's order of a backend render (Bayer frames uploaded, demosaiced
 * into a picture of the backend, rendered, downloaded) against the
 * reference of the downloaded demosaic. Header-only, static inline
 * functions (each test uses a part); no global state. */
#ifndef PANOCAP_RENDER_TEST_UTIL_H
#define PANOCAP_RENDER_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cuda_emu_render.h"
#include "debayer_test_util.h"
#include "render.h"
#include "tap.h"

typedef struct diffstat {
    long n, over1;
    int max;
} diffstat;

static inline diffstat compare(const pc_picture *a, const pc_picture *b)
{
    diffstat d = {0, 0, 0};
    size_t bw[3];
    int rows[3];
    int np = tu_planes(a->fmt, a->width, a->height, bw, rows);
    for (int i = 0; i < np; i++)
        for (int y = 0; y < rows[i]; y++)
            for (size_t x = 0; x < bw[i]; x++) {
                int e = abs((int)a->plane[i][(size_t)y * a->pitch[i] + x] - (int)b->plane[i][(size_t)y * b->pitch[i] + x]);
                d.n++;
                d.over1 += e > 1;
                d.max = e > d.max ? e : d.max;
            }
    return d;
}

/* The rule the GPU kernels keep against the reference. */
static inline int within_rule(diffstat d) { return d.max <= 2 && d.over1 * 1000 <= d.n; }

/* Hugin's photometry on the rig (.pto fields): exposure and white
 * balance per camera, EMoR responses, radial vignetting; the tables from
 * rig/photometry.c (pc_rig_photometry_build, as nona applies them). */
static inline void photometry(pc_rig *rig, pc_rig_photometry *ph)
{
    for (int c = 0; c < rig->ncam; c++) {
        pc_rig_camera *cam = &rig->cam[c];
        cam->eev = 0.3 * (c - 1);
        cam->er = 1.0 + 0.05 * (c - 1);
        cam->eb = 1.0 - 0.04 * (c - 1);
        cam->resp[0] = -0.4 + 0.1 * c;
        cam->resp[1] = 0.1;
        cam->vm = 5;
        cam->va = 1.0;
        cam->vb = -0.12 - 0.02 * c;
        cam->vc = 0.03;
        cam->vx = 3 - c;
        cam->vy = -2;
    }
    pc_rig_photometry_build(rig, ph);
}

/* The CPU renderer's lanes builds (render.h); each test runs those this
 * CPU has. */
static const char *const rt_lanes[] = {"avx512", "avx2", "baseline"};
#define RT_NLANES (int)(sizeof rt_lanes / sizeof rt_lanes[0])

/* Those this CPU runs, comma-separated, into names[64]. */
static inline const char *rt_lanes_usable_names(char names[64])
{
    names[0] = '\0';
    for (int i = 0; i < RT_NLANES; i++)
        if (pc_render_cpu_lanes_usable(rt_lanes[i]))
            snprintf(names + strlen(names), 64 - strlen(names), "%s%s", names[0] ? ", " : "", rt_lanes[i]);
    return names;
}

/* What rt_implementations found: runs, failures, and each emulated
 * kernel's worst comparison. */
typedef struct rt_impl {
    int runs, cpu_bad, emu_bad;
    diffstat worst[PC_GPU_RENDER_VARIANTS];
} rt_impl;

/* plan rendered from the same cameras as RGB24 and RGBX32 (srcs[0], [1])
 * into NV12, I420 (BT.601 full range) and RGB24: the CPU renderer, every
 * lanes build this CPU runs, with the plan's maps and without, against the
 * reference (bit for bit), and
 * the emulated CUDA kernels (cuda_emu_render.h) of `variants` (bit v:
 * PC_GPU_RENDER_v; those of `nv12_only` into NV12 alone) within the rule.
 * Every difference is a diagnostic naming the run. */
static inline rt_impl rt_implementations(pc_cpu *cpu, const pc_render_plan *plan, const pc_picture srcs[2],
                                         unsigned variants, unsigned nv12_only, const char *name)
{
    static const pc_pixfmt dfmts[] = {PC_FMT_NV12, PC_FMT_I420, PC_FMT_RGB24};
    char err[256] = "";
    rt_impl r;
    memset(&r, 0, sizeof r);
    const int w = plan->view.w, h = plan->view.h, photo = plan->photo;
    for (int si = 0; si < 2; si++)
        for (int di = 0; di < 3; di++) {
            const pc_picture *src = &srcs[si];
            const char *sname = src->fmt == PC_FMT_RGBX32 ? "rgbx32" : "rgb24";
            pc_matrix m = di == 1 ? PC_MATRIX_BT601 : PC_MATRIX_BT709;
            pc_range rg = di == 1 ? PC_RANGE_FULL : PC_RANGE_LIMITED;
            pc_picture ref, out;
            tu_pic_alloc_dev(&ref, dfmts[di], m, rg, w, h, 4);
            tu_pic_alloc_dev(&out, dfmts[di], m, rg, w, h, 12);
            tu_pic_fill(&ref, 0xA5);
            if (pc_render_ref(plan, src, &ref, err, sizeof err)) {
                tap_diag("%s: reference: %s", name, err);
                r.cpu_bad++;
            }
            for (int maps = 0; maps < 2; maps++)
                for (int li = 0; li < RT_NLANES; li++) {
                    if (!pc_render_cpu_lanes_usable(rt_lanes[li]))
                        continue;
                    pc_render_plan q = *plan;
                    if (!maps)
                        q.map = NULL, q.map_off = NULL;
                    tu_pic_fill(&out, 0x5A);
                    diffstat d = {0, 0, 0};
                    err[0] = '\0';
                    if (pc_render_cpu_lanes(pc_cpu_pool(cpu), rt_lanes[li], &q, src, &out, err, sizeof err) ||
                        (d = compare(&ref, &out)).max) {
                        tap_diag("%s, %s -> %s, photometry %d, maps %d, lanes %s: CPU differs from the reference: "
                                 "%ld samples over 1, max %d %s", name, sname, pc_pixfmt_name(dfmts[di]), photo, maps,
                                 rt_lanes[li], d.over1, d.max, err);
                        r.cpu_bad++;
                    }
                }
            for (int v = 0; v < PC_GPU_RENDER_VARIANTS; v++) {
                if (!(variants >> v & 1) || ((nv12_only >> v & 1) && di != 0))
                    continue;
                tu_pic_fill(&out, 0x5A);
                if (pc_emu_render(plan, v, src, &out, err, sizeof err)) {
                    tap_diag("%s: emulated %s: %s", name, pc_gpu_render_variant_name(v), err);
                    r.emu_bad++;
                    continue;
                }
                diffstat d = compare(&ref, &out);
                if (!within_rule(d)) {
                    tap_diag("%s, %s -> %s, photometry %d: emulated %s: %ld of %ld samples over 1, max %d", name, sname,
                             pc_pixfmt_name(dfmts[di]), photo, pc_gpu_render_variant_name(v), d.over1, d.n, d.max);
                    r.emu_bad++;
                }
                if (!r.worst[v].n || d.max > r.worst[v].max || d.over1 * r.worst[v].n > r.worst[v].over1 * d.n)
                    r.worst[v] = d;
            }
            r.runs++;
            tu_pic_free(&ref);
            tu_pic_free(&out);
        }
    for (int v = 0; v < PC_GPU_RENDER_VARIANTS; v++)
        if (variants >> v & 1)
            tap_diag("  emulated %-9s worst: %ld of %ld samples over 1 code value, max %d",
                     pc_gpu_render_variant_name(v), r.worst[v].over1, r.worst[v].n, r.worst[v].max);
    return r;
}

static inline int have_tool(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

/* Whether ops can run here; if not, a skip saying why. */
static inline int rt_backend_usable(const pc_backend_ops *ops)
{
    char why[256], msg[300];
    if (ops->probe(why, sizeof why))
        return 1;
    snprintf(msg, sizeof msg, "backend %s: %s", ops->name, why);
    tap_skip(msg);
    return 0;
}

/* A backend set up to render plan from the stacked cameras rgb (host
 * RGB24) the daemon's way: their Bayer frame (RGGB) uploaded to a slot,
 * demosaiced (bilinear) into a picture of the backend, rendered into an
 * NV12 picture of the backend, both downloaded; the reference renders the
 * downloaded demosaic. */
typedef struct rt_backend {
    pc_backend *b;
    pc_render_dev *rd;
    const pc_render_plan *plan;
    pc_picture dem[2], dout, hdem, ref, host;
    uint8_t *raw;
    int w, h, pictures;
    int dev; /* its pictures live on a device: the GPU rule, not bit for bit */
} rt_backend;

static inline void rt_backend_close(rt_backend *r)
{
    if (r->b) {
        pc_backend_render_free(r->b, r->rd);
        for (int i = 0; i < 3; i++)
            if (r->pictures >> i & 1)
                pc_backend_picture_free(r->b, i < 2 ? &r->dem[i] : &r->dout);
        pc_backend_close(r->b);
    }
    free(r->raw);
    tu_pic_free(&r->hdem);
    tu_pic_free(&r->ref);
    tu_pic_free(&r->host);
    memset(r, 0, sizeof *r);
}

/* 0, or the failing call's code with its message in err (then close). */
static inline int rt_backend_open(rt_backend *r, const pc_backend_ops *ops, const pc_render_plan *plan,
                                  const pc_picture *rgb, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->plan = plan;
    r->w = rgb->width;
    r->h = rgb->height;
    r->dev = (ops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    pc_backend_config cfg = {.width = r->w, .height = r->h, .slots = 2, .device = 0, .threads = 2};
    int rc = pc_backend_open(&r->b, ops, &cfg, err, errlen);
    if (rc)
        return rc;
    r->raw = malloc((size_t)r->w * r->h);
    tu_pic_alloc(&r->hdem, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, r->w, r->h, 0);
    tu_pic_alloc_dev(&r->ref, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, plan->view.w, plan->view.h, 0);
    tu_pic_alloc_dev(&r->host, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, plan->view.w, plan->view.h, 0);
    if ((rc = pc_mosaic_from_rgb(rgb->plane[0], rgb->pitch[0], r->w, r->h, PC_CFA_RGGB, r->raw, (size_t)r->w, err,
                                 errlen)))
        return rc;
    pc_debayer_config dc = {PC_ALGO_BILINEAR, PC_VARIANT_AUTO, PC_CFA_RGGB, PC_FMT_RGB24, PC_MATRIX_BT709,
                            PC_RANGE_LIMITED};
    if ((rc = pc_backend_set_algo(r->b, &dc, err, errlen)))
        return rc;
    for (int i = 0; i < 2; i++) {
        if ((rc = pc_backend_picture_alloc(r->b, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, r->w, r->h,
                                           &r->dem[i], err, errlen)))
            return rc;
        r->pictures |= 1 << i;
    }
    if ((rc = pc_backend_render_picture_alloc(r->b, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, plan->view.w,
                                              plan->view.h, &r->dout, err, errlen)))
        return rc;
    r->pictures |= 4;
    return pc_backend_render_prepare(r->b, plan, &r->rd, err, errlen);
}

/* One frame through slot; *d: the render against the reference of the
 * downloaded demosaic. */
static inline int rt_backend_frame(rt_backend *r, int slot, diffstat *d, char *err, size_t errlen)
{
    int rc = pc_backend_upload(r->b, slot, 0, r->raw, (size_t)r->w, r->h, err, errlen);
    if (!rc)
        rc = pc_backend_debayer(r->b, slot, &r->dem[slot], err, errlen);
    if (!rc)
        rc = pc_backend_render(r->b, slot, r->rd, &r->dem[slot], &r->dout, err, errlen);
    if (!rc)
        rc = pc_backend_download(r->b, slot, &r->dout, &r->host, err, errlen);
    if (!rc)
        rc = pc_backend_download(r->b, slot, &r->dem[slot], &r->hdem, err, errlen);
    if (!rc)
        rc = pc_backend_wait(r->b, slot, err, errlen);
    if (!rc)
        rc = pc_render_ref(r->plan, &r->hdem, &r->ref, err, errlen);
    *d = compare(&r->ref, &r->host);
    return rc;
}

#endif
