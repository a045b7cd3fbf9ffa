/* backend_cpu.c - the CPU debayer backend behind the ops table (backend.h):
 * the multi-threaded pc_cpu (kernels/cpu.c, bit-identical to the
 * reference) and, on its thread pool, the render family's CPU versions
 * (render/), host pictures, and one raw panorama per input slot.
 *
 * Everything is synchronous: debayer returns with the picture written and
 * wait has nothing to wait for. A slot's input is either the caller's
 * memory, read in place (one upload covering the whole frame, e.g. a frame
 * set capture stacked already: no copy), or the slot's own panorama that
 * partial uploads (camera slabs) are stacked into; that panorama is
 * allocated on the slot's first partial upload.
 */
#include "backend.h"

#include "activity.h"
#include "convert.h"
#include "errmsg.h"
#include "net.h"
#include "render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cpu_backend {
    pc_cpu *cpu;
    int w, h, slots;
    int cam_rows; /* pc_backend_config.cam_rows */
    pc_debayer_config dc;
    const uint8_t *in[PC_BACKEND_MAX_SLOTS]; /* the slot's input (NULL: none) */
    size_t in_pitch[PC_BACKEND_MAX_SLOTS];
    int in_place[PC_BACKEND_MAX_SLOTS];      /* in[] is the caller's memory */
    uint8_t *pano[PC_BACKEND_MAX_SLOTS];     /* stacked slabs */
    size_t pano_pitch;
    /* colour stage: tables per camera (allocated on first use) and each
     * slot's raw slabs, in row order, read in place by debayer */
    pc_colour_tables *tables[PC_BACKEND_MAX_CAMERAS];
    pc_raw_slab raw[PC_BACKEND_MAX_SLOTS][PC_BACKEND_MAX_CAMERAS];
    int raw_row0[PC_BACKEND_MAX_SLOTS][PC_BACKEND_MAX_CAMERAS];
    int nraw[PC_BACKEND_MAX_SLOTS], raw_rows[PC_BACKEND_MAX_SLOTS];
} cpu_backend;

static size_t round64(size_t v) { return (v + 63) & ~(size_t)63; }

static int cpu_probe(char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    return 1;
}

static void cpu_close(void *priv)
{
    cpu_backend *c = priv;
    if (!c)
        return;
    pc_cpu_close(c->cpu);
    for (int i = 0; i < PC_BACKEND_MAX_SLOTS; i++)
        free(c->pano[i]);
    for (int i = 0; i < PC_BACKEND_MAX_CAMERAS; i++)
        free(c->tables[i]);
    free(c);
}

static int cpu_open(void **priv, const pc_backend_config *cfg, char *err, size_t errlen)
{
    cpu_backend *c = calloc(1, sizeof *c);
    if (!c) {
        pc_set_err(err, errlen, "CPU backend: out of memory");
        return PC_ENOMEM;
    }
    c->w = cfg->width;
    c->h = cfg->height;
    c->slots = cfg->slots;
    c->cam_rows = cfg->cam_rows;
    c->pano_pitch = round64((size_t)cfg->width);
    int rc = pc_cpu_open(&c->cpu, cfg->threads, cfg->width, cfg->height, err, errlen);
    if (rc) {
        free(c);
        return rc;
    }
    *priv = c;
    return 0;
}

static void cpu_describe(void *priv, char *buf, size_t len)
{
    cpu_backend *c = priv;
    int n = pc_cpu_threads(c->cpu);
    snprintf(buf, len, "CPU, %d thread%s", n, n == 1 ? "" : "s");
}

static int cpu_host_threads(void *priv) { return pc_cpu_threads(((cpu_backend *)priv)->cpu); }

static int cpu_set_algo(void *priv, const pc_debayer_config *dc, char *err, size_t errlen)
{
    cpu_backend *c = priv;
    /* its scratch now (mlri: 28 bytes per pixel; nothing when prepared
     * before), so that no frame allocates */
    int rc = pc_cpu_prepare(c->cpu, dc->algo, err, errlen);
    if (rc)
        return rc;
    c->dc = *dc;
    return 0;
}

static int cpu_prepare_algo(void *priv, const pc_debayer_config *dc, char *err, size_t errlen)
{
    cpu_backend *c = priv;
    return pc_cpu_prepare(c->cpu, dc->algo, err, errlen);
}

static int cpu_picture_alloc(void *priv, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width, int height,
                             pc_picture *out, char *err, size_t errlen)
{
    (void)priv;
    size_t bytes = pc_picture_layout(out, fmt, matrix, range, width, height, 64, NULL);
    uint8_t *mem = bytes ? aligned_alloc(64, round64(bytes)) : NULL;
    if (!mem) {
        pc_set_err(err, errlen, "CPU backend: out of memory for a %dx%d %s picture (%zu bytes)", width, height,
                   pc_pixfmt_name(fmt), bytes);
        return PC_ENOMEM;
    }
    pc_picture_layout(out, fmt, matrix, range, width, height, 64, mem);
    return 0;
}

static void cpu_picture_free(void *priv, pc_picture *pic)
{
    free(pic->plane[0]); /* one allocation, plane 0 first */
}

static int cpu_upload(void *priv, int slot, int row0, const uint8_t *host, size_t pitch, int rows, char *err,
                      size_t errlen)
{
    cpu_backend *c = priv;
    if (row0 == 0 && rows == c->h) { /* the whole frame: read it in place */
        c->in[slot] = host;
        c->in_pitch[slot] = pitch;
        c->in_place[slot] = 1;
        c->nraw[slot] = 0;
        return 0;
    }
    if (!c->pano[slot]) {
        c->pano[slot] = aligned_alloc(64, c->pano_pitch * (size_t)c->h);
        if (!c->pano[slot]) {
            pc_set_err(err, errlen, "CPU backend: out of memory for the %dx%d panorama of slot %d", c->w, c->h, slot);
            return PC_ENOMEM;
        }
    }
    for (int y = 0; y < rows; y++)
        memcpy(c->pano[slot] + (size_t)(row0 + y) * c->pano_pitch, host + (size_t)y * pitch, (size_t)c->w);
    c->in[slot] = c->pano[slot];
    c->in_pitch[slot] = c->pano_pitch;
    c->in_place[slot] = 0;
    c->nraw[slot] = 0;
    return 0;
}

static int cpu_set_colour_tables(void *priv, int cam, const pc_colour_tables *t, char *err, size_t errlen)
{
    cpu_backend *c = priv;
    if (!c->tables[cam] && !(c->tables[cam] = malloc(sizeof *t))) {
        pc_set_err(err, errlen, "CPU backend: out of memory for camera %d's colour tables", cam);
        return PC_ENOMEM;
    }
    *c->tables[cam] = *t;
    return 0;
}

static int cpu_upload_raw(void *priv, int slot, int row0, const uint8_t *host, size_t pitch, const pc_rawfmt *fmt,
                          int cam, int rows, char *err, size_t errlen)
{
    cpu_backend *c = priv;
    if (!c->tables[cam] || c->tables[cam]->bits != fmt->bits) {
        pc_set_err(err, errlen, "CPU backend: camera %d has no colour tables for %d-bit data", cam, fmt->bits);
        return PC_EINVAL;
    }
    int n = c->nraw[slot];
    if (n && (rows != c->raw_rows[slot] || row0 != c->raw_row0[slot][n - 1] + rows))
        n = 0; /* a new frame (slabs come top to bottom, of one height) */
    if (n >= PC_BACKEND_MAX_CAMERAS) {
        pc_set_err(err, errlen, "CPU backend: more than %d raw slabs in slot %d", PC_BACKEND_MAX_CAMERAS, slot);
        return PC_EINVAL;
    }
    if (n == 0 && row0 != 0) {
        pc_set_err(err, errlen, "CPU backend: raw slabs must come top to bottom (first at row %d)", row0);
        return PC_EINVAL;
    }
    c->raw[slot][n] = (pc_raw_slab){host, pitch, *fmt, c->tables[cam]};
    c->raw_row0[slot][n] = row0;
    c->raw_rows[slot] = rows;
    c->nraw[slot] = n + 1;
    c->in[slot] = NULL;
    return 0;
}

static int cpu_debayer(void *priv, int slot, const pc_picture *dst, char *err, size_t errlen)
{
    cpu_backend *c = priv;
    if (c->nraw[slot] && !c->in[slot]) {
        int n = c->nraw[slot];
        if (n * c->raw_rows[slot] != c->h) {
            pc_set_err(err, errlen, "CPU backend: raw slabs of slot %d cover %d of %d rows", slot,
                       n * c->raw_rows[slot], c->h);
            return PC_EINVAL;
        }
        return pc_cpu_debayer_raw(c->cpu, c->dc.algo, c->raw[slot], n, c->raw_rows[slot], dst, err, errlen);
    }
    if (!c->in[slot]) {
        pc_set_err(err, errlen, "CPU backend: slot %d has no input (upload a frame first)", slot);
        return PC_EINVAL;
    }
    pc_bayer b = {c->in[slot], c->in_pitch[slot], c->w, c->h, c->dc.cfa, c->cam_rows};
    return pc_cpu_debayer(c->cpu, c->dc.algo, &b, dst, err, errlen);
}

static int cpu_download(void *priv, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                        size_t errlen)
{
    pc_picture_copy(dst, src);
    return 0;
}

static int cpu_picture_upload(void *priv, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                              size_t errlen)
{
    (void)priv;
    (void)slot;
    (void)err;
    (void)errlen;
    pc_picture_copy(dst, src);
    return 0;
}

static int cpu_downscale(void *priv, int slot, const pc_picture *src, const pc_picture *dst, int scale,
                         char *err, size_t errlen)
{
    (void)priv;
    (void)slot;
    if (pc_picture_downscale(dst, src, scale)) {
        pc_set_err(err, errlen, "downscale: cannot scale %dx%d %s 1/%d into %dx%d %s", src->width, src->height,
                   pc_pixfmt_name(src->fmt), scale, dst->width, dst->height, pc_pixfmt_name(dst->fmt));
        return PC_EINVAL;
    }
    return 0;
}

static int cpu_wait(void *priv, int slot, char *err, size_t errlen)
{
    cpu_backend *c = priv;
    c->nraw[slot] = 0; /* the caller may reuse the raw slabs' memory */
    /* The caller may reuse its memory now: forget it. */
    if (c->in_place[slot]) {
        c->in[slot] = NULL;
        c->in_place[slot] = 0;
    }
    return 0;
}

/* --- rendering (render.h): pc_render_cpu on the same threads ---------- */

/* The caller's plan, copied shallowly (its tables are shared and must
 * outlive this) so that gains can change here, and the last statistics. */
struct pc_render_dev {
    pc_render_plan plan;
    pc_render_stats stats;
};

static int cpu_render_prepare(void *priv, const pc_render_plan *plan, pc_render_dev **out, char *err, size_t errlen)
{
    pc_render_dev *rd = calloc(1, sizeof *rd);
    if (!rd) {
        pc_set_err(err, errlen, "CPU backend: out of memory for a render plan");
        return PC_ENOMEM;
    }
    rd->plan = *plan;
    *out = rd;
    return 0;
}

static void cpu_render_free(void *priv, pc_render_dev *rd) { free(rd); }

static int cpu_render_set_gains(void *priv, pc_render_dev *rd, const float gains[][3], char *err, size_t errlen)
{
    for (int c = 0; c < rd->plan.ncam; c++)
        for (int k = 0; k < 3; k++)
            if (!(gains[c][k] > 0.0f && gains[c][k] < 100.0f)) {
                pc_set_err(err, errlen, "render: set gains: camera %d's gain %g is out of range (0..100)", c,
                           (double)gains[c][k]);
                return PC_EINVAL;
            }
    pc_render_plan_set_gains(&rd->plan, gains);
    return 0;
}

static int cpu_render(void *priv, int slot, pc_render_dev *rd, const pc_picture *src, const pc_picture *dst,
                      char *err, size_t errlen)
{
    cpu_backend *c = priv;
    return pc_render_cpu(pc_cpu_pool(c->cpu), &rd->plan, src, dst, err, errlen);
}

static int cpu_render_measure(void *priv, int slot, pc_render_dev *rd, const pc_picture *src, char *err,
                              size_t errlen)
{
    return pc_render_measure_ref(&rd->plan, src, &rd->stats, err, errlen);
}

static int cpu_render_stats(void *priv, pc_render_dev *rd, pc_render_stats *out, char *err, size_t errlen)
{
    *out = rd->stats;
    return 0;
}

/* The moved plan's view; its arrays are the same ones, shared (the
 * gains set on rd stay). */
static int cpu_render_update(void *priv, pc_render_dev *rd, const pc_render_plan *plan, char *err, size_t errlen)
{
    pc_render_plan *q = &rd->plan;
    if (plan->view.w != q->view.w || plan->view.h != q->view.h || plan->ncam != q->ncam || plan->col != q->col ||
        plan->row != q->row || plan->tmask != q->tmask) {
        pc_set_err(err, errlen, "render update: the plan is not the one this renderer was prepared from (%dx%d, %d "
                   "cameras; prepared: %dx%d, %d)", plan->view.w, plan->view.h, plan->ncam, q->view.w, q->view.h,
                   q->ncam);
        return PC_EINVAL;
    }
    q->view = plan->view;
    q->npairs = plan->npairs;
    memcpy(q->pair, plan->pair, sizeof q->pair);
    return 0;
}

/* --- the activity map (activity.h): the reference, in place ----------- */

struct pc_activity_dev {
    int w, h, init;
    uint16_t *bg;
};

static int cpu_activity_open(void *priv, int w, int h, pc_activity_dev **out, char *err, size_t errlen)
{
    pc_activity_dev *a = calloc(1, sizeof *a);
    if (a)
        a->bg = malloc(sizeof *a->bg * (size_t)w * h);
    if (!a || !a->bg) {
        free(a);
        pc_set_err(err, errlen, "CPU backend: out of memory for a %dx%d activity map", w, h);
        return PC_ENOMEM;
    }
    a->w = w;
    a->h = h;
    a->init = 1;
    *out = a;
    return 0;
}

static void cpu_activity_close(void *priv, pc_activity_dev *a)
{
    free(a->bg);
    free(a);
}

static int cpu_activity(void *priv, int slot, const pc_picture *luma, pc_activity_dev *a, const pc_activity_params *p,
                        uint32_t *counts, char *err, size_t errlen)
{
    if (luma->width != a->w || luma->height != a->h) {
        pc_set_err(err, errlen, "activity map: a %dx%d picture for a %dx%d background model", luma->width,
                   luma->height, a->w, a->h);
        return PC_EINVAL;
    }
    pc_activity_ref(luma->plane[0], luma->pitch[0], a->w, a->h, a->bg, a->init, p, counts);
    a->init = 0;
    return 0;
}

static int cpu_convert(void *priv, int slot, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    cpu_backend *c = priv;
    return pc_cpu_convert(c->cpu, src, dst, err, errlen);
}

static int cpu_set_net(void *priv, const pc_net *net, char *err, size_t errlen)
{
    cpu_backend *c = priv;
    pc_cpu_set_net(c->cpu, net);
    return 0;
}

static int cpu_render_picture_alloc(void *priv, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width,
                                    int height, pc_picture *out, char *err, size_t errlen)
{
    size_t bytes = pc_picture_layout(out, fmt, matrix, range, width, height, 64, NULL);
    uint8_t *mem = bytes ? aligned_alloc(64, round64(bytes)) : NULL;
    if (!mem) {
        pc_set_err(err, errlen, "CPU backend: out of memory for a %dx%d picture (%zu bytes)", width, height, bytes);
        return PC_ENOMEM;
    }
    pc_picture_layout(out, fmt, matrix, range, width, height, 64, mem);
    return 0;
}

const pc_backend_ops pc_backend_cpu = {
    .name = "cpu",
    .description = "multi-threaded C on the host (bit-identical to the reference; net within 1 code value)",
    .flags = 0,
    .probe = cpu_probe,
    .open = cpu_open,
    .close = cpu_close,
    .describe = cpu_describe,
    .host_threads = cpu_host_threads,
    .prepare_algo = cpu_prepare_algo,
    .set_algo = cpu_set_algo,
    .picture_alloc = cpu_picture_alloc,
    .picture_free = cpu_picture_free,
    .upload = cpu_upload,
    .debayer = cpu_debayer,
    .download = cpu_download,
    .downscale = cpu_downscale,
    .wait = cpu_wait,
    .set_colour_tables = cpu_set_colour_tables,
    .upload_raw = cpu_upload_raw,
    .render_prepare = cpu_render_prepare,
    .render_free = cpu_render_free,
    .render_set_gains = cpu_render_set_gains,
    .render = cpu_render,
    .render_measure = cpu_render_measure,
    .render_stats = cpu_render_stats,
    .render_picture_alloc = cpu_render_picture_alloc,
    .render_update = cpu_render_update,
    .activity_open = cpu_activity_open,
    .activity_close = cpu_activity_close,
    .activity = cpu_activity,
    .convert = cpu_convert,
    .set_net = cpu_set_net,
    .picture_upload = cpu_picture_upload,
};
