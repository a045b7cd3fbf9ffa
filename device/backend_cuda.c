/* backend_cuda.c - the CUDA debayer backend behind the ops table
 * (backend.h): a thin adapter over pc_gpu (gpu.h, debayer_cuda.h, and the
 * render family's render_cuda.h, activity_cuda.h). Plain C. Built without
 * CUDA, pc_gpu is the stub (kernels/debayer_cuda_stub.c, render/
 * render_cuda_stub.c): probe then says
 * "this build has no CUDA support" and nothing else is ever called. */
#include "activity_cuda.h"
#include "backend.h"
#include "convert_cuda.h"
#include "debayer_cuda.h"
#include "errmsg.h"
#include "panocap_config.h"
#include "render_cuda.h"

#include <stdio.h>

static int cuda_probe(char *why, size_t whylen)
{
    if (pc_gpu_device_count() > 0)
        return 1;
    pc_set_err(why, whylen, "%s", PANOCAP_HAVE_CUDA ? "no CUDA device is usable on this machine"
                                                    : "this build has no CUDA support (meson -Dcuda=enabled)");
    return 0;
}

static int cuda_open(void **priv, const pc_backend_config *cfg, char *err, size_t errlen)
{
    int rc = pc_gpu_open((pc_gpu **)priv, cfg->device, cfg->width, cfg->height, cfg->slots, err, errlen);
    if (!rc && (rc = pc_gpu_set_cam_rows(*priv, cfg->cam_rows, err, errlen))) {
        pc_gpu_close(*priv);
        *priv = NULL;
    }
    return rc;
}

static void cuda_close(void *priv) { pc_gpu_close(priv); }

static void cuda_describe(void *priv, char *buf, size_t len)
{
    snprintf(buf, len, "GPU %s", pc_gpu_device_name(priv));
}

static int cuda_set_algo(void *priv, const pc_debayer_config *dc, char *err, size_t errlen)
{
    return pc_gpu_set_algo(priv, dc->algo, dc->variant, dc->cfa, dc->fmt, dc->matrix, dc->range, err, errlen);
}

static void cuda_get_choice(void *priv, pc_variant *variant, int *tile_rows)
{
    pc_gpu_get_choice(priv, variant, tile_rows);
}

static int cuda_picture_alloc(void *priv, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width, int height,
                              pc_picture *out, char *err, size_t errlen)
{
    return pc_gpu_picture_alloc(priv, fmt, matrix, range, width, height, out, err, errlen);
}

static void cuda_picture_free(void *priv, pc_picture *pic) { pc_gpu_picture_free(priv, pic); }

static int cuda_upload(void *priv, int slot, int row0, const uint8_t *host, size_t pitch, int rows, char *err,
                       size_t errlen)
{
    return pc_gpu_upload_async(priv, slot, row0, host, pitch, rows, err, errlen);
}

static int cuda_set_colour_tables(void *priv, int cam, const pc_colour_tables *t, char *err, size_t errlen)
{
    return pc_gpu_set_colour_tables(priv, cam, t, err, errlen);
}

static int cuda_upload_raw(void *priv, int slot, int row0, const uint8_t *host, size_t pitch, const pc_rawfmt *fmt,
                           int cam, int rows, char *err, size_t errlen)
{
    (void)pitch; /* the stream as sent: tight */
    return pc_gpu_upload_raw_async(priv, slot, row0, host, fmt, cam, rows, err, errlen);
}

static int cuda_debayer(void *priv, int slot, const pc_picture *dst, char *err, size_t errlen)
{
    return pc_gpu_debayer(priv, slot, dst, err, errlen);
}

static int cuda_download(void *priv, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                         size_t errlen)
{
    return pc_gpu_download_async(priv, slot, src, dst, err, errlen);
}

static int cuda_downscale(void *priv, int slot, const pc_picture *src, const pc_picture *dst, int scale,
                          char *err, size_t errlen)
{
    return pc_gpu_downscale_async(priv, slot, src, dst, scale, err, errlen);
}

static int cuda_wait(void *priv, int slot, char *err, size_t errlen)
{
    return pc_gpu_slot_wait(priv, slot, err, errlen);
}

static void *cuda_host_alloc(size_t bytes)
{
    void *p = NULL;
    return pc_gpu_host_alloc(bytes, &p, NULL, 0) == 0 ? p : NULL;
}

static void cuda_encoder_device(void *priv, void **cu_context, void **stream)
{
    *cu_context = pc_gpu_cu_context(priv);
    *stream = pc_gpu_stream(priv);
}

/* Rendering: a pc_render_dev is a pc_gpu_renderer (render_cuda.h). */
static int cuda_render_prepare(void *priv, const pc_render_plan *plan, pc_render_dev **out, char *err, size_t errlen)
{
    return pc_gpu_render_prepare(priv, plan, 0, (pc_gpu_renderer **)out, err, errlen);
}

static void cuda_render_free(void *priv, pc_render_dev *rd) { pc_gpu_render_free((pc_gpu_renderer *)rd); }

static int cuda_render_set_gains(void *priv, pc_render_dev *rd, const float gains[][3], char *err, size_t errlen)
{
    return pc_gpu_render_set_gains((pc_gpu_renderer *)rd, gains, err, errlen);
}

static int cuda_render(void *priv, int slot, pc_render_dev *rd, const pc_picture *src, const pc_picture *dst,
                       char *err, size_t errlen)
{
    return pc_gpu_render(priv, slot, (pc_gpu_renderer *)rd, src, dst, err, errlen);
}

static int cuda_render_measure(void *priv, int slot, pc_render_dev *rd, const pc_picture *src, char *err,
                               size_t errlen)
{
    return pc_gpu_render_measure(priv, slot, (pc_gpu_renderer *)rd, src, err, errlen);
}

static int cuda_render_stats(void *priv, pc_render_dev *rd, pc_render_stats *out, char *err, size_t errlen)
{
    return pc_gpu_render_stats((pc_gpu_renderer *)rd, out, err, errlen);
}

static int cuda_render_picture_alloc(void *priv, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width,
                                     int height, pc_picture *out, char *err, size_t errlen)
{
    return pc_gpu_render_picture_alloc(priv, fmt, matrix, range, width, height, out, err, errlen);
}

static int cuda_render_update(void *priv, pc_render_dev *rd, const pc_render_plan *plan, char *err, size_t errlen)
{
    return pc_gpu_render_update((pc_gpu_renderer *)rd, plan, err, errlen);
}

/* The activity map: a pc_activity_dev is a pc_gpu_activity (activity_cuda.h). */
static int cuda_activity_open(void *priv, int w, int h, pc_activity_dev **out, char *err, size_t errlen)
{
    return pc_gpu_activity_open(priv, w, h, (pc_gpu_activity **)out, err, errlen);
}

static void cuda_activity_close(void *priv, pc_activity_dev *a) { pc_gpu_activity_close((pc_gpu_activity *)a); }

static int cuda_activity(void *priv, int slot, const pc_picture *luma, pc_activity_dev *a, const pc_activity_params *p,
                         uint32_t *counts, char *err, size_t errlen)
{
    return pc_gpu_activity_run(priv, slot, (pc_gpu_activity *)a, luma, p, counts, err, errlen);
}

static int cuda_convert(void *priv, int slot, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    return pc_gpu_convert(priv, slot, src, dst, err, errlen);
}

/* The weights are converted to the device's fp16 copy here: net need not
 * outlive the call. */
static int cuda_picture_upload(void *priv, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                               size_t errlen)
{
    return pc_gpu_picture_upload_async(priv, slot, src, dst, err, errlen);
}

static int cuda_set_net(void *priv, const struct pc_net *net, char *err, size_t errlen)
{
    return pc_gpu_set_net(priv, net, err, errlen);
}

const pc_backend_ops pc_backend_cuda = {
    .name = "cuda",
    .description = "CUDA kernels on an NVIDIA GPU, one fused kernel per frame",
    .flags = PC_BACKEND_DEVICE_PICTURES,
    .probe = cuda_probe,
    .open = cuda_open,
    .close = cuda_close,
    .describe = cuda_describe,
    .prepare_algo = cuda_set_algo, /* captures and tunes; the wrapper restores the one in force */
    .set_algo = cuda_set_algo,
    .get_choice = cuda_get_choice,
    .picture_alloc = cuda_picture_alloc,
    .picture_free = cuda_picture_free,
    .upload = cuda_upload,
    .set_colour_tables = cuda_set_colour_tables,
    .upload_raw = cuda_upload_raw,
    .debayer = cuda_debayer,
    .download = cuda_download,
    .downscale = cuda_downscale,
    .wait = cuda_wait,
    .host_alloc = cuda_host_alloc,
    .host_free = pc_gpu_host_free,
    .encoder_device = cuda_encoder_device,
    .render_prepare = cuda_render_prepare,
    .render_free = cuda_render_free,
    .render_set_gains = cuda_render_set_gains,
    .render = cuda_render,
    .render_measure = cuda_render_measure,
    .render_stats = cuda_render_stats,
    .render_picture_alloc = cuda_render_picture_alloc,
    .render_update = cuda_render_update,
    .activity_open = cuda_activity_open,
    .activity_close = cuda_activity_close,
    .activity = cuda_activity,
    .convert = cuda_convert,
    .set_net = cuda_set_net,
    .picture_upload = cuda_picture_upload,
};
