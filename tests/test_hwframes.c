/* test_hwframes.c - the zero-copy path on a GPU (skips without a CUDA
 * device; the GPU machine runs it through tools/gpu-e2e): the final pass
 * writes into frames of an AV_PIX_FMT_CUDA frame pool (hw_frames_ctx on
 * panocap's own CUDA context and stream, encode/hwcuda.c), the frames are
 * read back with av_hwframe_transfer_data and compared sample for sample
 * with the CPU reference, for every layout:
 *   stacked  the final pass (pc_gpu_debayer) writes the pool frame itself;
 *   bands    5 pool frames of 2040x1080, each a device-to-device copy of
 *            its band of the picture slot (what the daemon does for NVENC);
 *   grid     one 10200x1080 pool frame (5x1 tiles): the final pass stores
 *            each camera's rows in its tile (pc_picture grid_cols);
 * then NVENC is opened per band on CUDA frames (hevc_nvenc): each band
 * either opens, encodes a frame and gives a packet, or is refused with the
 * driver's reason; an automatic encoder per band ("band b" in its log
 * line) always opens (NVENC or the software fallback), and the number of
 * NVENC sessions is reported. */
#include "tap.h"

#include "debayer.h"
#include "debayer_cuda.h"
#include "encode_internal.h"

#include <libavutil/hwcontext.h>
#include <stdlib.h>
#include <string.h>

#define W 2040
#define SLAB 1080
#define NCAM 5
#define H (SLAB * NCAM)

/* Rows [row0, row0+rows) of an NV12 picture: the same memory. */
static pc_picture rows_of(const pc_picture *q, int row0, int rows)
{
    pc_picture b = *q;
    b.height = rows;
    b.plane[0] = q->plane[0] + (size_t)row0 * q->pitch[0];
    b.plane[1] = q->plane[1] + (size_t)(row0 / 2) * q->pitch[1];
    return b;
}

static pc_picture of_frame(const AVFrame *f)
{
    return (pc_picture){.fmt = PC_FMT_NV12, .matrix = PC_MATRIX_BT709, .range = PC_RANGE_LIMITED,
                        .plane = {f->data[0], f->data[1]}, .pitch = {(size_t)f->linesize[0], (size_t)f->linesize[1]},
                        .width = f->width, .height = f->height};
}

/* Samples of the host frame sw (NV12) that differ from rows row0.. of ref. */
static long diff_nv12(const AVFrame *sw, const uint8_t *ry, const uint8_t *ruv, int row0)
{
    long bad = 0;
    for (int y = 0; y < sw->height; y++)
        bad += memcmp(sw->data[0] + (size_t)y * sw->linesize[0], ry + (size_t)(row0 + y) * W, W) != 0;
    for (int y = 0; y < sw->height / 2; y++)
        bad += memcmp(sw->data[1] + (size_t)y * sw->linesize[1], ruv + (size_t)(row0 / 2 + y) * W, W) != 0;
    return bad; /* rows that differ */
}

static int frames_ctx(AVBufferRef *dev, int w, int h, AVBufferRef **out, char *err, size_t n)
{
    *out = av_hwframe_ctx_alloc(dev);
    if (!*out) {
        snprintf(err, n, "av_hwframe_ctx_alloc failed");
        return -1;
    }
    AVHWFramesContext *fc = (AVHWFramesContext *)(*out)->data;
    fc->format = AV_PIX_FMT_CUDA;
    fc->sw_format = AV_PIX_FMT_NV12;
    fc->width = w;
    fc->height = h;
    int r = av_hwframe_ctx_init(*out);
    if (r < 0) {
        av_strerror(r, err, n);
        av_buffer_unref(out);
        return -1;
    }
    return 0;
}

static void on_packet(void *u, const pc_packet_info *i)
{
    (void)i;
    (*(int *)u)++;
}

int main(void)
{
    int ndev = pc_gpu_device_count();
    if (ndev == 0)
        return tap_skip_all("no CUDA device (or built without CUDA): the zero-copy path needs a GPU");
    char err[1024] = "";
    size_t ysz = (size_t)W * H;
    uint8_t *raw = malloc(ysz), *ry = malloc(ysz), *ruv = malloc(ysz / 2);
    if (!raw || !ry || !ruv)
        return tap_skip_all("out of memory");
    uint32_t s = 12345;
    for (size_t i = 0; i < ysz; i++) { /* smooth ramps plus noise: every formula's branches */
        s = s * 1664525u + 1013904223u;
        raw[i] = (uint8_t)(((i % W) / 8 + (i / W) / 5) + (s >> 28));
    }
    pc_bayer b = {raw, W, W, H, PC_CFA_RGGB, 0};
    pc_picture ref = {.fmt = PC_FMT_NV12, .matrix = PC_MATRIX_BT709, .range = PC_RANGE_LIMITED,
                      .plane = {ry, ruv}, .pitch = {W, W}, .width = W, .height = H};
    TAP_CHECK(pc_ref_debayer(PC_ALGO_EDGE, &b, &ref, err, sizeof err) == 0, "CPU reference (edge, NV12)");

    pc_gpu *g = NULL;
    int rc = pc_gpu_open(&g, 0, W, H, 2, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "pc_gpu_open %dx%d (%s)", W, H, rc ? err : pc_gpu_device_name(g)))
        return tap_done();
    rc = pc_gpu_set_algo(g, PC_ALGO_EDGE, PC_VARIANT_AUTO, PC_CFA_RGGB, PC_FMT_NV12, PC_MATRIX_BT709,
                         PC_RANGE_LIMITED, err, sizeof err);
    rc = rc ? rc : pc_gpu_upload_async(g, 0, 0, raw, W, H, err, sizeof err);
    TAP_CHECK(rc == 0, "edge on the GPU, raw panorama uploaded (%s)", rc ? err : "ok");

    AVBufferRef *dev = NULL;
    rc = pc_enc_cuda_device(&dev, pc_gpu_cu_context(g), pc_gpu_stream(g), err, sizeof err);
    if (!TAP_CHECK(rc == 0, "FFmpeg CUDA device on panocap's context and stream (%s)", rc ? err : "ok"))
        return tap_done();

    /* stacked: the final pass writes the pool frame */
    AVBufferRef *fs = NULL;
    AVFrame *hw = av_frame_alloc(), *sw = av_frame_alloc();
    rc = frames_ctx(dev, W, H, &fs, err, sizeof err);
    rc = rc ? rc : av_hwframe_get_buffer(fs, hw, 0);
    if (!rc) {
        pc_picture dst = of_frame(hw);
        rc = pc_gpu_debayer(g, 0, &dst, err, sizeof err);
        rc = rc ? rc : pc_gpu_slot_wait(g, 0, err, sizeof err);
        rc = rc ? rc : av_hwframe_transfer_data(sw, hw, 0);
    }
    long bad = rc ? -1 : diff_nv12(sw, ry, ruv, 0);
    TAP_CHECK(rc == 0 && bad == 0 && sw->width == W && sw->height == H,
              "stacked: final pass into an AV_PIX_FMT_CUDA pool frame (pitch %d), read back with "
              "av_hwframe_transfer_data = reference sample for sample (%ld rows differ) %s",
              hw->linesize[0], bad, rc ? err : "");
    av_frame_unref(hw);
    av_frame_unref(sw);
    av_buffer_unref(&fs);

    /* bands: slot picture -> each band's pool frame, device to device */
    pc_picture slotpic;
    rc = pc_gpu_picture_alloc(g, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, W, H, &slotpic, err, sizeof err);
    rc = rc ? rc : pc_gpu_upload_async(g, 1, 0, raw, W, H, err, sizeof err);
    rc = rc ? rc : pc_gpu_debayer(g, 1, &slotpic, err, sizeof err);
    AVBufferRef *fb = NULL;
    rc = rc ? rc : frames_ctx(dev, W, SLAB, &fb, err, sizeof err);
    int bands_ok = 0;
    for (int k = 0; k < NCAM && !rc; k++) {
        if ((rc = av_hwframe_get_buffer(fb, hw, 0)) < 0)
            break;
        pc_picture src = rows_of(&slotpic, k * SLAB, SLAB), dst = of_frame(hw);
        rc = pc_gpu_download_async(g, 1, &src, &dst, err, sizeof err);
        rc = rc ? rc : pc_gpu_slot_wait(g, 1, err, sizeof err);
        rc = rc ? rc : av_hwframe_transfer_data(sw, hw, 0);
        long d = rc ? -1 : diff_nv12(sw, ry, ruv, k * SLAB);
        bands_ok += d == 0;
        if (d)
            tap_diag("band %d: %ld rows differ", k, d);
        av_frame_unref(hw);
        av_frame_unref(sw);
    }
    TAP_CHECK(rc == 0 && bands_ok == NCAM, "bands: %d of %d pool frames of %dx%d = their rows of the reference "
              "sample for sample %s", bands_ok, NCAM, W, SLAB, rc ? err : "");

    /* grid: the final pass writes each camera's rows straight into its
     * tile of one 5x1 pool frame (10200x1080): no copy */
    AVBufferRef *fg = NULL;
    long gbad = -1;
    int rg = rc ? rc : frames_ctx(dev, W * NCAM, SLAB, &fg, err, sizeof err);
    rg = rg ? rg : av_hwframe_get_buffer(fg, hw, 0);
    if (!rg) {
        pc_picture dst = of_frame(hw);
        dst.grid_cols = NCAM;
        dst.tile_rows = SLAB;
        rg = pc_gpu_debayer(g, 1, &dst, err, sizeof err);
        rg = rg ? rg : pc_gpu_slot_wait(g, 1, err, sizeof err);
        rg = rg ? rg : av_hwframe_transfer_data(sw, hw, 0);
    }
    if (!rg && sw->width == W * NCAM && sw->height == SLAB) {
        gbad = 0; /* rows of a tile that differ from their camera's rows of the reference */
        for (int t = 0; t < NCAM; t++) {
            for (int y = 0; y < SLAB; y++)
                gbad += memcmp(sw->data[0] + (size_t)y * sw->linesize[0] + (size_t)t * W,
                               ry + (size_t)(t * SLAB + y) * W, W) != 0;
            for (int y = 0; y < SLAB / 2; y++)
                gbad += memcmp(sw->data[1] + (size_t)y * sw->linesize[1] + (size_t)t * W,
                               ruv + (size_t)(t * SLAB / 2 + y) * W, W) != 0;
        }
    }
    TAP_CHECK(rg == 0 && gbad == 0,
              "grid: final pass into a %dx%d AV_PIX_FMT_CUDA pool frame (5x1 tiles, pitch %d), read back: tile c = "
              "rows c*%d.. of the reference sample for sample (%ld rows differ) %s", W * NCAM, SLAB, hw->linesize[0],
              SLAB, gbad, rg ? err : "");
    av_frame_unref(hw);
    av_frame_unref(sw);
    av_buffer_unref(&fg);

    /* preview: scaled on the GPU (pc_gpu_downscale_async) = pc_picture_downscale */
    {
        int k = 4, pw = (W / k) & ~1, ph = (H / k) & ~1;
        uint8_t *gy = malloc((size_t)pw * ph * 3 / 2), *cy = malloc((size_t)pw * ph * 3 / 2);
        pc_picture gp = {.fmt = PC_FMT_NV12, .plane = {gy, gy + (size_t)pw * ph}, .pitch = {pw, pw}, .width = pw,
                         .height = ph};
        pc_picture cp = {.fmt = PC_FMT_NV12, .plane = {cy, cy + (size_t)pw * ph}, .pitch = {pw, pw}, .width = pw,
                         .height = ph};
        int r2 = gy && cy ? pc_gpu_downscale_async(g, 1, &slotpic, &gp, k, err, sizeof err) : -1;
        r2 = r2 ? r2 : pc_gpu_slot_wait(g, 1, err, sizeof err);
        r2 = r2 ? r2 : pc_picture_downscale(&cp, &ref, k);
        TAP_CHECK(r2 == 0 && memcmp(gy, cy, (size_t)pw * ph * 3 / 2) == 0,
                  "preview: the slot scaled down 4x on the GPU = pc_picture_downscale of the reference, %dx%d, "
                  "sample for sample %s", pw, ph, r2 ? err : "");
        free(gy);
        free(cy);
    }

    /* NVENC per band on CUDA frames, then an automatic encoder per band */
    int opened = 0, refused = 0, encoded = 0, n_packets = 0;
    for (int k = 0; k < NCAM; k++) {
        pc_encode_config c;
        pc_encode_config_default(&c);
        c.width = W;
        c.height = SLAB;
        c.bitrate = 4000000;
        c.encoder = "hevc_nvenc";
        c.cuda_ctx = pc_gpu_cu_context(g);
        c.cuda_stream = pc_gpu_stream(g);
        c.on_packet = on_packet;
        c.cb_user = &n_packets;
        char label[16];
        snprintf(label, sizeof label, "band %d", k);
        c.label = label;
        pc_logger quiet = {NULL, NULL, PC_LOG_WARNING};
        c.log = &quiet;
        pc_encoder *e = NULL;
        if (pc_encoder_open(&e, &c, err, sizeof err)) {
            refused++;
            tap_diag("band %d: hevc_nvenc refused: %s", k, err);
            continue;
        }
        opened++;
        pc_picture f;
        int on_dev = 0;
        int before = n_packets;
        rc = pc_encoder_frame(e, &f, &on_dev, err, sizeof err);
        if (!rc && on_dev) {
            pc_picture src = rows_of(&slotpic, k * SLAB, SLAB);
            rc = pc_gpu_download_async(g, 1, &src, &f, err, sizeof err);
            rc = rc ? rc : pc_gpu_slot_wait(g, 1, err, sizeof err);
        }
        rc = rc ? rc : pc_encoder_submit(e, 0, 1, err, sizeof err);
        rc = rc ? rc : pc_encoder_flush(e, err, sizeof err);
        encoded += rc == 0 && n_packets > before;
        tap_diag("band %d: %s opened (%s), %s", k, pc_encoder_name(e), on_dev ? "CUDA frames" : "host frames",
                 rc ? err : "one frame encoded");
        pc_encoder_close(e);
    }
    TAP_CHECK(opened + refused == NCAM && encoded == opened,
              "NVENC per band: %d opened and encoded a frame, %d refused with the driver's reason", opened, refused);
    int nv = 0, any = 0;
    for (int k = 0; k < NCAM; k++) {
        pc_encode_config c;
        pc_encode_config_default(&c);
        c.width = W;
        c.height = SLAB;
        c.bitrate = 4000000;
        c.cuda_ctx = pc_gpu_cu_context(g);
        c.cuda_stream = pc_gpu_stream(g);
        char label[16];
        snprintf(label, sizeof label, "band %d", k);
        c.label = label;
        pc_encoder *e = NULL;
        if (pc_encoder_open(&e, &c, err, sizeof err) == 0) {
            any++;
            nv += strstr(pc_encoder_name(e), "_nvenc") != NULL;
            pc_encoder_close(e);
        } else
            tap_diag("band %d: %s", k, err);
    }
    TAP_CHECK(any == NCAM, "encoder auto per band: all %d open (%d NVENC sessions, %d on the software fallback)",
              any, nv, any - nv);

    pc_gpu_picture_free(g, &slotpic);
    av_buffer_unref(&fb);
    av_frame_free(&hw);
    av_frame_free(&sw);
    av_buffer_unref(&dev);
    pc_gpu_close(g);
    free(raw);
    free(ry);
    free(ruv);
    return tap_done();
}
