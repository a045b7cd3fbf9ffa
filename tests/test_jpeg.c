/* test_jpeg.c - encode/jpeg.c (the web page's live picture): an RGB test
 * card (colour patches and a grey ramp) turned into YUV here, by the
 * formulas of BT.709 limited range and of BT.601 full range (NV12 and
 * I420), encoded, decoded by libavcodec's mjpeg DECODER and turned back to
 * RGB the way every JPEG viewer does (JFIF: BT.601 full range): the colours
 * come back (PSNR against the card over 35 dB), whatever YUV went in. A new
 * size in the same pc_jpeg works; pictures it cannot take are refused. */
#include "encode.h"
#include "tap.h"

#include <libavcodec/avcodec.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint8_t clamp8(double v) { return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)lrint(v); }

/* The card: 32x32 patches of saturated and pastel colours, a grey ramp row. */
static void card(uint8_t *rgb, int w, int h)
{
    static const uint8_t pal[][3] = {{230, 30, 30}, {30, 200, 40}, {40, 60, 220}, {240, 220, 40},
                                     {20, 200, 210}, {210, 40, 200}, {250, 250, 250}, {10, 10, 10},
                                     {180, 120, 90}, {120, 160, 200}};
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = rgb + 3 * ((size_t)y * w + x);
            if (y >= h - 32) {
                p[0] = p[1] = p[2] = (uint8_t)(x * 255 / (w - 1));
            } else {
                const uint8_t *c = pal[((x / 32) + 3 * (y / 32)) % 10];
                memcpy(p, c, 3);
            }
        }
}

static void to_yuv(const uint8_t *rgb, int w, int h, pc_picture *pic, uint8_t *buf)
{
    double kr = pic->matrix == PC_MATRIX_BT601 ? 0.299 : 0.2126, kb = pic->matrix == PC_MATRIX_BT601 ? 0.114 : 0.0722;
    double kg = 1 - kr - kb;
    int full = pic->range == PC_RANGE_FULL;
    pic->plane[0] = buf;
    pic->pitch[0] = (size_t)w + 6; /* pitches wider than the picture */
    uint8_t *c = buf + pic->pitch[0] * h;
    if (pic->fmt == PC_FMT_NV12) {
        pic->plane[1] = c;
        pic->pitch[1] = (size_t)w + 10;
    } else {
        pic->plane[1] = c;
        pic->pitch[1] = (size_t)w / 2 + 4;
        pic->plane[2] = c + pic->pitch[1] * (h / 2);
        pic->pitch[2] = pic->pitch[1];
    }
    pic->width = w;
    pic->height = h;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *p = rgb + 3 * ((size_t)y * w + x);
            double yy = (kr * p[0] + kg * p[1] + kb * p[2]) / 255;
            pic->plane[0][(size_t)y * pic->pitch[0] + x] = clamp8(full ? 255 * yy : 16 + 219 * yy);
        }
    for (int y = 0; y < h / 2; y++)
        for (int x = 0; x < w / 2; x++) {
            double pb = 0, pr = 0;
            for (int k = 0; k < 4; k++) {
                const uint8_t *p = rgb + 3 * ((size_t)(2 * y + k / 2) * w + 2 * x + k % 2);
                double yy = (kr * p[0] + kg * p[1] + kb * p[2]) / 255;
                pb += (p[2] / 255.0 - yy) / (2 * (1 - kb)) / 4;
                pr += (p[0] / 255.0 - yy) / (2 * (1 - kr)) / 4;
            }
            uint8_t cb = clamp8(128 + (full ? 255 : 224) * pb), cr = clamp8(128 + (full ? 255 : 224) * pr);
            if (pic->fmt == PC_FMT_NV12) {
                pic->plane[1][(size_t)y * pic->pitch[1] + 2 * x] = cb;
                pic->plane[1][(size_t)y * pic->pitch[1] + 2 * x + 1] = cr;
            } else {
                pic->plane[1][(size_t)y * pic->pitch[1] + x] = cb;
                pic->plane[2][(size_t)y * pic->pitch[2] + x] = cr;
            }
        }
}

/* Decodes the JPEG with libavcodec and compares it, as RGB by JFIF's
 * rules, with the card: PSNR in dB, or -1 when it does not decode. */
static double decoded_psnr(const uint8_t *jpg, size_t len, const uint8_t *rgb, int w, int h)
{
    const AVCodec *dec = avcodec_find_decoder(AV_CODEC_ID_MJPEG);
    AVCodecContext *c = dec ? avcodec_alloc_context3(dec) : NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    double psnr = -1;
    if (!c || !pkt || !f || avcodec_open2(c, dec, NULL) < 0)
        goto out;
    pkt->data = (uint8_t *)jpg;
    pkt->size = (int)len;
    if (avcodec_send_packet(c, pkt) < 0 || avcodec_receive_frame(c, f) < 0 || f->width != w || f->height != h)
        goto out;
    if (f->format != AV_PIX_FMT_YUVJ420P && f->format != AV_PIX_FMT_YUV420P)
        goto out;
    double se = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double yy = f->data[0][(size_t)y * f->linesize[0] + x];
            double cb = f->data[1][(size_t)(y / 2) * f->linesize[1] + x / 2] - 128.0;
            double cr = f->data[2][(size_t)(y / 2) * f->linesize[2] + x / 2] - 128.0;
            double out[3] = {yy + 1.402 * cr, yy - 0.344136 * cb - 0.714136 * cr, yy + 1.772 * cb};
            for (int k = 0; k < 3; k++) {
                double d = clamp8(out[k]) - rgb[3 * ((size_t)y * w + x) + k];
                se += d * d;
            }
        }
    double mse = se / (3.0 * w * h);
    psnr = mse > 0 ? 10 * log10(255.0 * 255.0 / mse) : 99;
out:
    av_frame_free(&f);
    av_packet_free(&pkt);
    avcodec_free_context(&c);
    return psnr;
}

int main(void)
{
    char err[256] = "";
    pc_jpeg *j;
    if (!TAP_CHECK(pc_jpeg_open(&j, 3, err, sizeof err) == 0, "pc_jpeg_open: %s", j ? "" : err))
        return tap_done();
    static const struct {
        pc_pixfmt fmt;
        pc_matrix mx;
        pc_range rg;
        int w, h;
    } cases[] = {
        {PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, 320, 192},
        {PC_FMT_I420, PC_MATRIX_BT601, PC_RANGE_FULL, 320, 192},
        {PC_FMT_NV12, PC_MATRIX_BT601, PC_RANGE_LIMITED, 256, 96}, /* a new size: reopened */
        {PC_FMT_I420, PC_MATRIX_BT709, PC_RANGE_FULL, 322, 98},     /* not a multiple of 16 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int w = cases[i].w, h = cases[i].h;
        uint8_t *rgb = malloc((size_t)w * h * 3), *buf = calloc(1, (size_t)(w + 16) * h * 2);
        card(rgb, w, h);
        pc_picture pic = {.fmt = cases[i].fmt, .matrix = cases[i].mx, .range = cases[i].rg};
        to_yuv(rgb, w, h, &pic, buf);
        uint8_t *jpg = NULL;
        size_t len = 0;
        int r = pc_jpeg_encode(j, &pic, &jpg, &len, err, sizeof err);
        int marks = r == 0 && len > 4 && jpg[0] == 0xFF && jpg[1] == 0xD8 && jpg[len - 2] == 0xFF &&
                    jpg[len - 1] == 0xD9;
        double psnr = marks ? decoded_psnr(jpg, len, rgb, w, h) : -1;
        TAP_CHECK(marks && psnr > 35, "%dx%d %s %s %s: a JPEG of %zu bytes, decoded to the card's colours at "
                  "%.1f dB%s%s", w, h, pc_pixfmt_name(cases[i].fmt), cases[i].mx == PC_MATRIX_BT709 ? "bt709" : "bt601",
                  cases[i].rg == PC_RANGE_FULL ? "full" : "limited", len, psnr, r ? ": " : "", r ? err : "");
        free(jpg);
        free(rgb);
        free(buf);
    }
    uint8_t px[64 * 64 * 3] = {0};
    pc_picture bad = {.fmt = PC_FMT_RGB24, .plane = {px}, .pitch = {64 * 3}, .width = 64, .height = 64};
    uint8_t *jpg = NULL;
    size_t len = 0;
    TAP_CHECK(pc_jpeg_encode(j, &bad, &jpg, &len, err, sizeof err) == PC_EINVAL && !jpg && strstr(err, "NV12 or I420"),
              "an RGB24 picture is refused: %s", err);
    bad = (pc_picture){.fmt = PC_FMT_NV12, .plane = {px, px}, .pitch = {64, 64}, .width = 63, .height = 64};
    TAP_CHECK(pc_jpeg_encode(j, &bad, &jpg, &len, err, sizeof err) == PC_EINVAL && strstr(err, "even sizes"),
              "an odd width is refused: %s", err);
    pc_jpeg_close(j);
    pc_jpeg *k = NULL;
    TAP_CHECK(pc_jpeg_open(&k, 1, err, sizeof err) == PC_EINVAL && !k, "quality 1 is refused: %s", err);
    return tap_done();
}
