/* backend.c - the table of backends (the device layer, backend.h), the choice between them and
 * the pc_backend_* wrappers (backend.h): they check the arguments common to
 * every backend (slot range, configured algorithm, picture size and
 * format) once here, then call the backend's ops. */
#include "backend.h"

#include "activity.h"
#include "convert.h"
#include "errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* In order of preference for "auto". */
static const pc_backend_ops *const backends[] = {&pc_backend_cuda, &pc_backend_cpu, NULL};

struct pc_backend {
    const pc_backend_ops *ops;
    void *priv;
    pc_backend_config cfg;
    int configured;
    pc_debayer_config dc; /* in force, when configured */
};

const pc_backend_ops *const *pc_backend_list(void) { return backends; }

const pc_backend_ops *pc_backend_find(const char *name)
{
    for (int i = 0; name && backends[i]; i++)
        if (strcasecmp(name, backends[i]->name) == 0)
            return backends[i];
    return NULL;
}

const pc_backend_ops *pc_backend_default(char *note, size_t notelen)
{
    char why[256] = "";
    if (note && notelen)
        note[0] = '\0';
    for (int i = 0; backends[i]; i++) {
        char w[256] = "";
        if (backends[i]->probe(w, sizeof w)) {
            if (i > 0)
                pc_set_err(note, notelen, "%s; using the %s backend", why, backends[i]->name);
            return backends[i];
        }
        if (!why[0])
            snprintf(why, sizeof why, "%s: %s", backends[i]->name, w);
    }
    return &pc_backend_cpu; /* not reached: the CPU backend always probes */
}

int pc_backend_choose(const char *name, const pc_backend_ops **out, char *note, size_t notelen, char *err,
                      size_t errlen)
{
    if (note && notelen)
        note[0] = '\0';
    if (!out) {
        pc_set_err(err, errlen, "pc_backend_choose: out is NULL");
        return PC_EINVAL;
    }
    if (!name || strcasecmp(name, "auto") == 0) {
        *out = pc_backend_default(note, notelen);
        return 0;
    }
    const pc_backend_ops *ops = pc_backend_find(name);
    if (!ops) {
        char names[128] = "auto";
        for (int i = 0; backends[i]; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), ", %s", backends[i]->name);
        pc_set_err(err, errlen, "unknown debayer backend \"%s\" (known: %s)", name, names);
        return PC_EINVAL;
    }
    char why[256] = "";
    if (!ops->probe(why, sizeof why)) {
        pc_set_err(err, errlen, "backend %s: %s", ops->name, why);
        return PC_ENOTSUP;
    }
    *out = ops;
    return 0;
}

int pc_backend_open(pc_backend **out, const pc_backend_ops *ops, const pc_backend_config *cfg, char *err,
                    size_t errlen)
{
    if (!out || !ops || !cfg) {
        pc_set_err(err, errlen, "pc_backend_open: NULL argument");
        return PC_EINVAL;
    }
    *out = NULL;
    int rc = pc_check_size(cfg->width, cfg->height, err, errlen);
    if (rc)
        return rc;
    if (cfg->slots < 1 || cfg->slots > PC_BACKEND_MAX_SLOTS) {
        pc_set_err(err, errlen, "backend %s: %d slots requested, must be 1..%d", ops->name, cfg->slots,
                   PC_BACKEND_MAX_SLOTS);
        return PC_EINVAL;
    }
    if (cfg->cam_rows && (cfg->cam_rows < PC_MIN_DIM || (cfg->cam_rows & 1) || cfg->height % cfg->cam_rows)) {
        pc_set_err(err, errlen, "backend %s: cameras of %d rows must be even, at least %d and divide the %d-row "
                   "frame", ops->name, cfg->cam_rows, PC_MIN_DIM, cfg->height);
        return PC_EINVAL;
    }
    pc_backend *b = calloc(1, sizeof *b);
    if (!b) {
        pc_set_err(err, errlen, "backend %s: out of memory", ops->name);
        return PC_ENOMEM;
    }
    b->ops = ops;
    b->cfg = *cfg;
    rc = ops->open(&b->priv, cfg, err, errlen);
    if (rc) {
        free(b);
        return rc;
    }
    *out = b;
    return 0;
}

void pc_backend_close(pc_backend *b)
{
    if (!b)
        return;
    b->ops->close(b->priv);
    free(b);
}

const pc_backend_ops *pc_backend_get_ops(const pc_backend *b) { return b ? b->ops : NULL; }
const char *pc_backend_name(const pc_backend *b) { return b ? b->ops->name : "none"; }
int pc_backend_slots(const pc_backend *b) { return b ? b->cfg.slots : 0; }
int pc_backend_host_threads(pc_backend *b) { return b && b->ops->host_threads ? b->ops->host_threads(b->priv) : 0; }

void pc_backend_describe(pc_backend *b, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = '\0';
    if (b && b->ops->describe)
        b->ops->describe(b->priv, buf, len);
    else if (b)
        snprintf(buf, len, "%s", b->ops->name);
}

static int check_dc(const pc_backend *b, const pc_debayer_config *dc, const char *fn, char *err, size_t errlen)
{
    if (!b || !dc) {
        pc_set_err(err, errlen, "%s: NULL argument", fn);
        return PC_EINVAL;
    }
    if (!pc_algo_get(dc->algo)) {
        char names[256];
        pc_algo_names(names, sizeof names);
        pc_set_err(err, errlen, "%s (%s backend): unknown algorithm id %d (known: %s)", fn, b->ops->name,
                   (int)dc->algo, names);
        return PC_EINVAL;
    }
    if ((unsigned)dc->variant > PC_VARIANT_4PX || (unsigned)dc->cfa > PC_CFA_BGGR || !pc_pixfmt_planes(dc->fmt) ||
        (unsigned)dc->matrix > PC_MATRIX_BT601 || (unsigned)dc->range > PC_RANGE_FULL) {
        pc_set_err(err, errlen, "%s (%s backend, %s): bad argument (variant %d, cfa %d, format %d, matrix %d, range %d)",
                   fn, b->ops->name, pc_algo_get(dc->algo)->name, (int)dc->variant, (int)dc->cfa, (int)dc->fmt,
                   (int)dc->matrix, (int)dc->range);
        return PC_EINVAL;
    }
    return 0;
}

int pc_backend_prepare_algo(pc_backend *b, const pc_debayer_config *dc, char *err, size_t errlen)
{
    int rc = check_dc(b, dc, "pc_backend_prepare_algo", err, errlen);
    if (rc || !b->ops->prepare_algo)
        return rc;
    rc = b->ops->prepare_algo(b->priv, dc, err, errlen);
    /* Preparing may have switched the backend: put back what is in force
     * (prepared, so immediate). */
    if (b->configured) {
        char e2[256];
        int rc2 = b->ops->set_algo(b->priv, &b->dc, e2, sizeof e2);
        if (rc2 && !rc) {
            pc_set_err(err, errlen, "%s", e2);
            rc = rc2;
        }
    }
    return rc;
}

int pc_backend_set_algo(pc_backend *b, const pc_debayer_config *dc, char *err, size_t errlen)
{
    int rc = check_dc(b, dc, "pc_backend_set_algo", err, errlen);
    if (rc)
        return rc;
    if ((rc = b->ops->set_algo(b->priv, dc, err, errlen)))
        return rc;
    b->dc = *dc;
    b->configured = 1;
    return 0;
}

int pc_backend_get_algo(const pc_backend *b, pc_debayer_config *dc)
{
    if (!b || !b->configured || !dc)
        return PC_EINVAL;
    *dc = b->dc;
    return 0;
}

void pc_backend_get_choice(pc_backend *b, pc_variant *variant, int *tile_rows)
{
    pc_variant v = PC_VARIANT_AUTO;
    int rows = 0;
    if (b && b->configured && b->ops->get_choice)
        b->ops->get_choice(b->priv, &v, &rows);
    if (variant)
        *variant = v;
    if (tile_rows)
        *tile_rows = rows;
}

const char *pc_backend_choice_name(pc_backend *b)
{
    pc_variant v;
    pc_backend_get_choice(b, &v, NULL);
    return v == PC_VARIANT_AUTO ? pc_backend_name(b) : pc_variant_name(v);
}

/* Sides of a picture a backend allocates: 2D pitched allocations of
 * CUDA and FFmpeg's frame sides stay below this. */
#define PICTURE_MAX_SIDE 32768

int pc_backend_picture_alloc(pc_backend *b, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width,
                             int height, pc_picture *out, char *err, size_t errlen)
{
    if (!b || !out || !pc_pixfmt_planes(fmt)) {
        pc_set_err(err, errlen, "pc_backend_picture_alloc: bad arguments (format %d)", (int)fmt);
        return PC_EINVAL;
    }
    int yuv420 = fmt == PC_FMT_NV12 || fmt == PC_FMT_I420;
    if (width < 1 || height < 1 || width > PICTURE_MAX_SIDE || height > PICTURE_MAX_SIDE ||
        (yuv420 && ((width | height) & 1))) {
        pc_set_err(err, errlen, "pc_backend_picture_alloc (%s backend): a %dx%d %s picture: its sides must be "
                   "1..%d%s", b->ops->name, width, height, pc_pixfmt_name(fmt), PICTURE_MAX_SIDE,
                   yuv420 ? " and even (4:2:0 chroma)" : "");
        return PC_EINVAL;
    }
    memset(out, 0, sizeof *out);
    return b->ops->picture_alloc(b->priv, fmt, matrix, range, width, height, out, err, errlen);
}

void pc_backend_picture_free(pc_backend *b, pc_picture *pic)
{
    if (b && pic && pic->plane[0])
        b->ops->picture_free(b->priv, pic);
    if (pic)
        memset(pic->plane, 0, sizeof pic->plane);
}

static int check_slot(const pc_backend *b, int slot, const char *fn, char *err, size_t errlen)
{
    if (!b) {
        pc_set_err(err, errlen, "%s: no backend", fn);
        return PC_EINVAL;
    }
    if (slot < 0 || slot >= b->cfg.slots) {
        pc_set_err(err, errlen, "%s (%s backend): slot %d out of range (0..%d; frame %dx%d)", fn, b->ops->name,
                   slot, b->cfg.slots - 1, b->cfg.width, b->cfg.height);
        return PC_EINVAL;
    }
    return 0;
}

int pc_backend_upload(pc_backend *b, int slot, int row0, const uint8_t *host, size_t pitch, int rows, char *err,
                      size_t errlen)
{
    int rc = check_slot(b, slot, "pc_backend_upload", err, errlen);
    if (rc)
        return rc;
    if (!host || rows <= 0 || row0 < 0 || row0 + rows > b->cfg.height || pitch < (size_t)b->cfg.width) {
        pc_set_err(err, errlen, "pc_backend_upload (%s backend): rows %d..%d of a %dx%d frame from %p (pitch %zu): "
                   "out of range", b->ops->name, row0, row0 + rows - 1, b->cfg.width, b->cfg.height,
                   (const void *)host, pitch);
        return PC_EINVAL;
    }
    return b->ops->upload(b->priv, slot, row0, host, pitch, rows, err, errlen);
}

int pc_backend_set_colour_tables(pc_backend *b, int cam, const pc_colour_tables *t, char *err, size_t errlen)
{
    if (!b || !t || cam < 0 || cam >= PC_BACKEND_MAX_CAMERAS) {
        pc_set_err(err, errlen, "pc_backend_set_colour_tables: camera %d (0..%d) or tables missing", cam,
                   PC_BACKEND_MAX_CAMERAS - 1);
        return PC_EINVAL;
    }
    if (!b->ops->set_colour_tables) {
        pc_set_err(err, errlen, "the %s backend has no colour stage", b->ops->name);
        return PC_ENOTSUP;
    }
    return b->ops->set_colour_tables(b->priv, cam, t, err, errlen);
}

int pc_backend_upload_raw(pc_backend *b, int slot, int row0, const uint8_t *host, size_t pitch,
                          const pc_rawfmt *fmt, int cam, int rows, char *err, size_t errlen)
{
    int rc = check_slot(b, slot, "pc_backend_upload_raw", err, errlen);
    if (rc)
        return rc;
    if (!host || !fmt || rows < 2 || row0 < 0 || row0 + rows > b->cfg.height || ((row0 | rows) & 1) || cam < 0 ||
        cam >= PC_BACKEND_MAX_CAMERAS) {
        pc_set_err(err, errlen, "pc_backend_upload_raw (%s backend): rows %d..%d of a %dx%d frame, camera %d: "
                   "invalid", b->ops->name, row0, row0 + rows - 1, b->cfg.width, b->cfg.height, cam);
        return PC_EINVAL;
    }
    if (!b->ops->upload_raw) {
        pc_set_err(err, errlen, "the %s backend has no colour stage", b->ops->name);
        return PC_ENOTSUP;
    }
    return b->ops->upload_raw(b->priv, slot, row0, host, pitch, fmt, cam, rows, err, errlen);
}

int pc_backend_debayer(pc_backend *b, int slot, const pc_picture *dst, char *err, size_t errlen)
{
    int rc = check_slot(b, slot, "pc_backend_debayer", err, errlen);
    if (rc)
        return rc;
    if (!b->configured) {
        pc_set_err(err, errlen, "pc_backend_debayer (%s backend): no algorithm set (call pc_backend_set_algo)",
                   b->ops->name);
        return PC_EINVAL;
    }
    if (!dst || dst->fmt != b->dc.fmt) {
        pc_set_err(err, errlen, "pc_backend_debayer (%s backend, %s): destination must be %s (got %s)",
                   b->ops->name, pc_algo_get(b->dc.algo)->name, pc_pixfmt_name(b->dc.fmt),
                   dst ? pc_pixfmt_name(dst->fmt) : "none");
        return PC_EINVAL;
    }
    int sw, sh; /* a grid picture's source: the frame */
    pc_picture_source_size(dst, &sw, &sh);
    if (sw != b->cfg.width || sh != b->cfg.height ||
        (!pc_pixfmt_is_rgb(dst->fmt) && (dst->matrix != b->dc.matrix || dst->range != b->dc.range))) {
        pc_set_err(err, errlen, "pc_backend_debayer (%s backend, %s): destination is %dx%d matrix %d range %d, "
                   "the backend makes %dx%d matrix %d range %d", b->ops->name, pc_algo_get(b->dc.algo)->name,
                   sw, sh, (int)dst->matrix, (int)dst->range, b->cfg.width, b->cfg.height,
                   (int)b->dc.matrix, (int)b->dc.range);
        return PC_EINVAL;
    }
    return b->ops->debayer(b->priv, slot, dst, err, errlen);
}

int pc_backend_download(pc_backend *b, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                        size_t errlen)
{
    int rc = check_slot(b, slot, "pc_backend_download", err, errlen);
    if (rc)
        return rc;
    if (!src || !dst || src->fmt != dst->fmt || src->width != dst->width || src->height != dst->height ||
        !pc_pixfmt_planes(src->fmt)) {
        pc_set_err(err, errlen, "pc_backend_download (%s backend): source and destination pictures differ or are "
                   "missing (frame %dx%d)", b->ops->name, b->cfg.width, b->cfg.height);
        return PC_EINVAL;
    }
    for (int i = 0; i < pc_pixfmt_planes(src->fmt); i++) {
        size_t rb;
        pc_picture_plane_size(src->fmt, src->width, src->height, i, NULL, NULL, &rb);
        if (!src->plane[i] || !dst->plane[i] || src->pitch[i] < rb || dst->pitch[i] < rb) {
            pc_set_err(err, errlen, "pc_backend_download (%s backend): plane %d missing or pitch below %zu bytes "
                       "(frame %dx%d)", b->ops->name, i, rb, b->cfg.width, b->cfg.height);
            return PC_EINVAL;
        }
    }
    return b->ops->download(b->priv, slot, src, dst, err, errlen);
}

int pc_backend_wait(pc_backend *b, int slot, char *err, size_t errlen)
{
    int rc = check_slot(b, slot, "pc_backend_wait", err, errlen);
    if (rc)
        return rc;
    return b->ops->wait(b->priv, slot, err, errlen);
}

int pc_backend_downscale(pc_backend *b, int slot, const pc_picture *src, const pc_picture *dst, int scale,
                         char *err, size_t errlen)
{
    int rc = check_slot(b, slot, "pc_backend_downscale", err, errlen);
    if (rc)
        return rc;
    if (!b->ops->downscale) {
        pc_set_err(err, errlen, "pc_backend_downscale: the %s backend cannot scale pictures", b->ops->name);
        return PC_ENOTSUP;
    }
    if (!src || !dst || scale < 1 || src->fmt != PC_FMT_NV12 || dst->fmt != PC_FMT_NV12 ||
        dst->width != ((src->width / scale) & ~1) || dst->height != ((src->height / scale) & ~1)) {
        pc_set_err(err, errlen, "pc_backend_downscale (%s backend): needs NV12 pictures, the destination 1/%d "
                   "of the source (frame %dx%d)", b->ops->name, scale, b->cfg.width, b->cfg.height);
        return PC_EINVAL;
    }
    return b->ops->downscale(b->priv, slot, src, dst, scale, err, errlen);
}

/* --- rendering ------------------------------------------------------- */

#define RENDER_OP(b, op, fn)                                                                       \
    do {                                                                                           \
        if (!(b) || !(b)->ops->op) {                                                               \
            pc_set_err(err, errlen, "%s: the %s backend cannot render pictures from a rig", fn,    \
                       (b) ? (b)->ops->name : "(none)");                                           \
            return (b) ? PC_ENOTSUP : PC_EINVAL;                                                   \
        }                                                                                          \
    } while (0)

int pc_backend_render_prepare(pc_backend *b, const pc_render_plan *plan, pc_render_dev **out, char *err,
                              size_t errlen)
{
    if (out)
        *out = NULL;
    RENDER_OP(b, render_prepare, "pc_backend_render_prepare");
    if (!plan || !out) {
        pc_set_err(err, errlen, "pc_backend_render_prepare: no plan");
        return PC_EINVAL;
    }
    return b->ops->render_prepare(b->priv, plan, out, err, errlen);
}

void pc_backend_render_free(pc_backend *b, pc_render_dev *rd)
{
    if (b && rd && b->ops->render_free)
        b->ops->render_free(b->priv, rd);
}

int pc_backend_render_set_gains(pc_backend *b, pc_render_dev *rd, const float gains[][3], char *err, size_t errlen)
{
    RENDER_OP(b, render_set_gains, "pc_backend_render_set_gains");
    if (!rd || !gains) {
        pc_set_err(err, errlen, "pc_backend_render_set_gains: no prepared plan or no gains");
        return PC_EINVAL;
    }
    return b->ops->render_set_gains(b->priv, rd, gains, err, errlen);
}

int pc_backend_render(pc_backend *b, int slot, pc_render_dev *rd, const pc_picture *src, const pc_picture *dst,
                      char *err, size_t errlen)
{
    RENDER_OP(b, render, "pc_backend_render");
    int rc = check_slot(b, slot, "pc_backend_render", err, errlen);
    if (rc)
        return rc;
    if (!rd || !src || !dst) {
        pc_set_err(err, errlen, "pc_backend_render: no prepared plan, source or destination");
        return PC_EINVAL;
    }
    return b->ops->render(b->priv, slot, rd, src, dst, err, errlen);
}

int pc_backend_render_measure(pc_backend *b, int slot, pc_render_dev *rd, const pc_picture *src, char *err,
                              size_t errlen)
{
    RENDER_OP(b, render_measure, "pc_backend_render_measure");
    int rc = check_slot(b, slot, "pc_backend_render_measure", err, errlen);
    if (rc)
        return rc;
    if (!rd || !src) {
        pc_set_err(err, errlen, "pc_backend_render_measure: no prepared plan or source");
        return PC_EINVAL;
    }
    return b->ops->render_measure(b->priv, slot, rd, src, err, errlen);
}

int pc_backend_render_stats(pc_backend *b, pc_render_dev *rd, pc_render_stats *out, char *err, size_t errlen)
{
    RENDER_OP(b, render_stats, "pc_backend_render_stats");
    if (!rd || !out) {
        pc_set_err(err, errlen, "pc_backend_render_stats: no prepared plan or no output");
        return PC_EINVAL;
    }
    return b->ops->render_stats(b->priv, rd, out, err, errlen);
}

int pc_backend_render_picture_alloc(pc_backend *b, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width,
                                    int height, pc_picture *out, char *err, size_t errlen)
{
    RENDER_OP(b, render_picture_alloc, "pc_backend_render_picture_alloc");
    if (!out || pc_pixfmt_planes(fmt) == 0 || width < 2 || height < 2 || width > PC_MAX_DIM || height > PC_MAX_DIM ||
        (pc_pixfmt_planes(fmt) > 1 && ((width | height) & 1))) {
        pc_set_err(err, errlen, "pc_backend_render_picture_alloc: %dx%d is not a picture size for that format (even "
                   "sizes for YUV, 2..%d)", width, height, PC_MAX_DIM);
        return PC_EINVAL;
    }
    return b->ops->render_picture_alloc(b->priv, fmt, matrix, range, width, height, out, err, errlen);
}

int pc_backend_render_update(pc_backend *b, pc_render_dev *rd, const pc_render_plan *plan, char *err, size_t errlen)
{
    RENDER_OP(b, render_update, "pc_backend_render_update");
    if (!rd || !plan) {
        pc_set_err(err, errlen, "pc_backend_render_update: no prepared plan or no plan");
        return PC_EINVAL;
    }
    return b->ops->render_update(b->priv, rd, plan, err, errlen);
}

/* --- the activity map ------------------------------------------------ */

#define ACTIVITY_OP(b, op, fn)                                                                     \
    do {                                                                                           \
        if (!(b) || !(b)->ops->op) {                                                               \
            pc_set_err(err, errlen, "%s: the %s backend has no activity map", fn,                  \
                       (b) ? (b)->ops->name : "(none)");                                           \
            return (b) ? PC_ENOTSUP : PC_EINVAL;                                                   \
        }                                                                                          \
    } while (0)

int pc_backend_activity_open(pc_backend *b, int w, int h, pc_activity_dev **out, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    ACTIVITY_OP(b, activity_open, "pc_backend_activity_open");
    if (!out || w < 1 || h < 1 || w > PC_MAX_DIM || h > PC_MAX_DIM) {
        pc_set_err(err, errlen, "pc_backend_activity_open: a picture of %dx%d (1..%d)", w, h, PC_MAX_DIM);
        return PC_EINVAL;
    }
    return b->ops->activity_open(b->priv, w, h, out, err, errlen);
}

void pc_backend_activity_close(pc_backend *b, pc_activity_dev *a)
{
    if (b && a && b->ops->activity_close)
        b->ops->activity_close(b->priv, a);
}

int pc_backend_activity(pc_backend *b, int slot, const pc_picture *luma, pc_activity_dev *a,
                        const pc_activity_params *p, uint32_t *counts, char *err, size_t errlen)
{
    ACTIVITY_OP(b, activity, "pc_backend_activity");
    int rc = check_slot(b, slot, "pc_backend_activity", err, errlen);
    if (rc)
        return rc;
    if (!luma || !a || !counts) {
        pc_set_err(err, errlen, "pc_backend_activity: no picture, background model or counts");
        return PC_EINVAL;
    }
    if ((luma->fmt != PC_FMT_NV12 && luma->fmt != PC_FMT_I420) || !luma->plane[0] ||
        luma->pitch[0] < (size_t)(luma->width > 0 ? luma->width : 0)) {
        pc_set_err(err, errlen, "pc_backend_activity: the luma must be an nv12 or i420 picture (got %s %dx%d)",
                   luma->fmt == PC_FMT_RGBX32 ? "rgbx32" : pc_pixfmt_name(luma->fmt), luma->width, luma->height);
        return PC_EINVAL;
    }
    if ((rc = pc_activity_check(p, luma->width, luma->height, err, errlen)))
        return rc;
    return b->ops->activity(b->priv, slot, luma, a, p, counts, err, errlen);
}

/* --- RGB -> YUV ------------------------------------------------------ */

int pc_backend_convert(pc_backend *b, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                       size_t errlen)
{
    if (!b || !b->ops->convert) {
        pc_set_err(err, errlen, "pc_backend_convert: the %s backend cannot convert RGB pictures",
                   b ? b->ops->name : "(none)");
        return b ? PC_ENOTSUP : PC_EINVAL;
    }
    int rc = check_slot(b, slot, "pc_backend_convert", err, errlen);
    if (!rc)
        rc = pc_convert_check(src, dst, err, errlen);
    return rc ? rc : b->ops->convert(b->priv, slot, src, dst, err, errlen);
}

int pc_backend_picture_upload(pc_backend *b, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                              size_t errlen)
{
    if (!b || !b->ops->picture_upload) {
        pc_set_err(err, errlen, "pc_backend_picture_upload: the %s backend cannot upload pictures",
                   b ? b->ops->name : "(none)");
        return b ? PC_ENOTSUP : PC_EINVAL;
    }
    int rc = check_slot(b, slot, "pc_backend_picture_upload", err, errlen);
    if (rc)
        return rc;
    if (!src || !dst || src->fmt != dst->fmt || src->width != dst->width || src->height != dst->height ||
        !pc_pixfmt_planes(src->fmt)) {
        pc_set_err(err, errlen, "pc_backend_picture_upload (%s backend): source and destination pictures differ or "
                   "are missing", b->ops->name);
        return PC_EINVAL;
    }
    for (int i = 0; i < pc_pixfmt_planes(src->fmt); i++) {
        size_t rb;
        pc_picture_plane_size(src->fmt, src->width, src->height, i, NULL, NULL, &rb);
        if (!src->plane[i] || !dst->plane[i] || src->pitch[i] < rb || dst->pitch[i] < rb) {
            pc_set_err(err, errlen, "pc_backend_picture_upload (%s backend): plane %d missing or its pitch under a "
                       "row (%zu bytes)", b->ops->name, i, rb);
            return PC_EINVAL;
        }
    }
    return b->ops->picture_upload(b->priv, slot, src, dst, err, errlen);
}

int pc_backend_host_picture_alloc(const pc_backend_ops *ops, pc_pixfmt fmt, pc_matrix matrix, pc_range range,
                                  int w, int h, pc_picture *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t bytes = pc_picture_layout(out, fmt, matrix, range, w, h, 64, NULL);
    void *mem = bytes ? pc_backend_host_alloc(ops, bytes) : NULL;
    if (!mem) {
        pc_set_err(err, errlen, "host picture %dx%d %s: cannot allocate %zu bytes%s", w, h, pc_pixfmt_name(fmt),
                   bytes, ops && ops->host_alloc ? " of pinned memory" : "");
        memset(out, 0, sizeof *out);
        return PC_ENOMEM;
    }
    pc_picture_layout(out, fmt, matrix, range, w, h, 64, mem);
    return 0;
}

void pc_backend_host_picture_free(const pc_backend_ops *ops, pc_picture *pic)
{
    if (pic && pic->plane[0])
        pc_backend_host_free(ops, pic->plane[0]);
    if (pic)
        memset(pic, 0, sizeof *pic);
}

void *pc_backend_host_alloc(const pc_backend_ops *ops, size_t bytes)
{
    if (ops && ops->host_alloc)
        return ops->host_alloc(bytes);
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 1) == 0 ? p : NULL;
}

void pc_backend_host_free(const pc_backend_ops *ops, void *p)
{
    if (ops && ops->host_alloc)
        ops->host_free(p);
    else
        free(p);
}

void pc_backend_encoder_device(pc_backend *b, void **cu_context, void **stream)
{
    if (cu_context)
        *cu_context = NULL;
    if (stream)
        *stream = NULL;
    if (b && b->ops->encoder_device)
        b->ops->encoder_device(b->priv, cu_context, stream);
}

int pc_backend_set_net(pc_backend *b, const struct pc_net *net, char *err, size_t errlen)
{
    if (!b) {
        pc_set_err(err, errlen, "pc_backend_set_net: backend is NULL");
        return PC_EINVAL;
    }
    if (!b->ops->set_net) {
        pc_set_err(err, errlen, "backend %s cannot run the learned demosaic (no set_net)", b->ops->name);
        return PC_ENOTSUP;
    }
    return b->ops->set_net(b->priv, net, err, errlen);
}
