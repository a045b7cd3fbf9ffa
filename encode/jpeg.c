/* jpeg.c - still JPEG pictures through libavcodec's mjpeg encoder, for the
 * web page's live picture and thumbnails (pc_jpeg_* in encode.h). The
 * source's YUV (BT.709 or BT.601, limited or full range) is converted to
 * what every JPEG decoder assumes (JFIF: BT.601, full range) by one affine
 * map per sample: the conversion is linear, so converting luma with its
 * 2x2 block's chroma and chroma with the block's mean luma is exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/imgutils.h>

#include "encode.h"

struct pc_jpeg {
    int quality;
    int64_t count;       /* pictures encoded (their pts) */
    AVCodecContext *ctx; /* open for width x height */
    int width, height;
    AVFrame *frame;
    AVPacket *pkt;
    /* the affine map of the last source's (matrix, range):
     * out[k] = m[k][0] * Y + m[k][1] * (Cb - 128) + m[k][2] * (Cr - 128) + m[k][3] */
    int have_map;
    pc_matrix matrix;
    pc_range range;
    float m[3][4];
};

static void kr_kb(pc_matrix mx, double *kr, double *kb)
{
    *kr = mx == PC_MATRIX_BT601 ? 0.299 : 0.2126;
    *kb = mx == PC_MATRIX_BT601 ? 0.114 : 0.0722;
}

/* The map from (matrix, range) YUV to JFIF's YCbCr, through R'G'B'. */
static void build_map(pc_jpeg *j, pc_matrix mx, pc_range rg)
{
    double kr, kb, kr2 = 0.299, kb2 = 0.114;
    kr_kb(mx, &kr, &kb);
    double kg = 1 - kr - kb, kg2 = 1 - kr2 - kb2;
    /* source code values -> Y' (0..1), Pb, Pr (-0.5..0.5) */
    double ys = rg == PC_RANGE_FULL ? 1 / 255.0 : 1 / 219.0, yo = rg == PC_RANGE_FULL ? 0 : -16 / 219.0;
    double cs = rg == PC_RANGE_FULL ? 1 / 255.0 : 1 / 224.0;
    /* R'G'B' as a combination of (Y code, Cb-128, Cr-128, 1) */
    double rgb[3][4] = {
        {ys, 0, 2 * (1 - kr) * cs, yo},
        {ys, -2 * (1 - kb) * kb / kg * cs, -2 * (1 - kr) * kr / kg * cs, yo},
        {ys, 2 * (1 - kb) * cs, 0, yo},
    };
    /* JFIF: Y = 255 (kr2 R + kg2 G + kb2 B), Cb = 128 + 255 (B - Y') / (2 (1 - kb2)), Cr alike */
    double ey[3] = {kr2, kg2, kb2};
    double ecb[3] = {-kr2 / (2 * (1 - kb2)), -kg2 / (2 * (1 - kb2)), 0.5};
    double ecr[3] = {0.5, -kg2 / (2 * (1 - kr2)), -kb2 / (2 * (1 - kr2))};
    const double *e[3] = {ey, ecb, ecr};
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 4; c++) {
            double v = 0;
            for (int i = 0; i < 3; i++)
                v += e[k][i] * rgb[i][c];
            j->m[k][c] = (float)(255 * v + (c == 3 && k > 0 ? 128 : 0));
        }
    j->matrix = mx;
    j->range = rg;
    j->have_map = 1;
}

static uint8_t clamp8(float v) { return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)lrintf(v); }

static void chroma_at(const pc_picture *p, int x, int y, int *cb, int *cr)
{
    if (p->fmt == PC_FMT_NV12) {
        const uint8_t *c = p->plane[1] + (size_t)y * p->pitch[1] + 2 * (size_t)x;
        *cb = c[0];
        *cr = c[1];
    } else {
        *cb = p->plane[1][(size_t)y * p->pitch[1] + (size_t)x];
        *cr = p->plane[2][(size_t)y * p->pitch[2] + (size_t)x];
    }
}

static void convert(pc_jpeg *j, const pc_picture *src, AVFrame *f)
{
    float(*m)[4] = j->m;
    for (int by = 0; by < src->height / 2; by++)
        for (int bx = 0; bx < src->width / 2; bx++) {
            int cb, cr;
            chroma_at(src, bx, by, &cb, &cr);
            float pb = (float)(cb - 128), pr = (float)(cr - 128);
            float ysum = 0;
            for (int dy = 0; dy < 2; dy++)
                for (int dx = 0; dx < 2; dx++) {
                    int x = 2 * bx + dx, y = 2 * by + dy;
                    float yv = src->plane[0][(size_t)y * src->pitch[0] + (size_t)x];
                    ysum += yv;
                    f->data[0][(size_t)y * (size_t)f->linesize[0] + (size_t)x] =
                        clamp8(m[0][0] * yv + m[0][1] * pb + m[0][2] * pr + m[0][3]);
                }
            float ym = ysum / 4;
            f->data[1][(size_t)by * (size_t)f->linesize[1] + (size_t)bx] =
                clamp8(m[1][0] * ym + m[1][1] * pb + m[1][2] * pr + m[1][3]);
            f->data[2][(size_t)by * (size_t)f->linesize[2] + (size_t)bx] =
                clamp8(m[2][0] * ym + m[2][1] * pb + m[2][2] * pr + m[2][3]);
        }
}

int pc_jpeg_open(pc_jpeg **out, int quality, char *err, size_t n)
{
    *out = NULL;
    if (quality < 2 || quality > 31) {
        snprintf(err, n, "JPEG quality %d: 2 (best) .. 31", quality);
        return PC_EINVAL;
    }
    if (!avcodec_find_encoder(AV_CODEC_ID_MJPEG)) {
        snprintf(err, n, "this FFmpeg has no mjpeg encoder");
        return PC_ENOTSUP;
    }
    pc_jpeg *j = calloc(1, sizeof *j);
    if (!j || !(j->frame = av_frame_alloc()) || !(j->pkt = av_packet_alloc())) {
        if (j) {
            av_frame_free(&j->frame);
            free(j);
        }
        snprintf(err, n, "JPEG: out of memory");
        return PC_ENOMEM;
    }
    j->quality = quality;
    *out = j;
    return 0;
}

/* (Re)opens the encoder and its frame for w x h. */
static int open_size(pc_jpeg *j, int w, int h, char *err, size_t n)
{
    avcodec_free_context(&j->ctx);
    av_frame_unref(j->frame);
    j->width = j->height = 0;
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
    AVCodecContext *c = avcodec_alloc_context3(codec);
    if (!c) {
        snprintf(err, n, "JPEG: out of memory");
        return PC_ENOMEM;
    }
    c->width = w;
    c->height = h;
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    c->color_range = AVCOL_RANGE_JPEG; /* JFIF: full range (not the deprecated yuvj formats) */
    c->colorspace = AVCOL_SPC_BT470BG;
    c->time_base = (AVRational){1, 25};
    c->flags |= AV_CODEC_FLAG_QSCALE;
    c->global_quality = FF_QP2LAMBDA * j->quality;
    c->thread_count = 1;
    int r = avcodec_open2(c, codec, NULL);
    if (r < 0) {
        char e[128];
        av_strerror(r, e, sizeof e);
        snprintf(err, n, "JPEG: cannot open mjpeg at %dx%d: %s", w, h, e);
        avcodec_free_context(&c);
        return PC_EINVAL;
    }
    j->frame->format = AV_PIX_FMT_YUV420P;
    j->frame->width = w;
    j->frame->height = h;
    j->frame->color_range = AVCOL_RANGE_JPEG;
    if (av_frame_get_buffer(j->frame, 0) < 0) {
        avcodec_free_context(&c);
        snprintf(err, n, "JPEG: out of memory");
        return PC_ENOMEM;
    }
    j->ctx = c;
    j->width = w;
    j->height = h;
    return 0;
}

int pc_jpeg_encode(pc_jpeg *j, const pc_picture *pic, uint8_t **data, size_t *size, char *err, size_t n)
{
    *data = NULL;
    *size = 0;
    if ((pic->fmt != PC_FMT_NV12 && pic->fmt != PC_FMT_I420) || pic->width < 16 || pic->height < 16 ||
        (pic->width & 1) || (pic->height & 1) || pic->width > 16384 || pic->height > 16384) {
        snprintf(err, n, "JPEG: a %dx%d %s picture: NV12 or I420, even sizes 16..16384", pic->width, pic->height,
                 pc_pixfmt_name(pic->fmt));
        return PC_EINVAL;
    }
    if ((pic->width != j->width || pic->height != j->height) && open_size(j, pic->width, pic->height, err, n))
        return PC_EINVAL;
    if (!j->have_map || j->matrix != pic->matrix || j->range != pic->range)
        build_map(j, pic->matrix, pic->range);
    int r = av_frame_make_writable(j->frame);
    if (r >= 0) {
        convert(j, pic, j->frame);
        j->frame->pts = j->count++;
        j->frame->quality = j->ctx->global_quality;
        r = avcodec_send_frame(j->ctx, j->frame);
    }
    if (r >= 0)
        r = avcodec_receive_packet(j->ctx, j->pkt);
    if (r < 0) {
        char e[128];
        av_strerror(r, e, sizeof e);
        snprintf(err, n, "JPEG: encoding %dx%d failed: %s", pic->width, pic->height, e);
        return PC_EINVAL;
    }
    *data = malloc((size_t)j->pkt->size);
    if (!*data) {
        av_packet_unref(j->pkt);
        snprintf(err, n, "JPEG: out of memory");
        return PC_ENOMEM;
    }
    memcpy(*data, j->pkt->data, (size_t)j->pkt->size);
    *size = (size_t)j->pkt->size;
    av_packet_unref(j->pkt);
    return 0;
}

void pc_jpeg_close(pc_jpeg *j)
{
    if (!j)
        return;
    avcodec_free_context(&j->ctx);
    av_frame_free(&j->frame);
    av_packet_free(&j->pkt);
    free(j);
}
