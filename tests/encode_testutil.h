/* encode_testutil.h - shared helpers of the encode tests: a moving
 * synthetic YUV pattern written into the encoder's pictures, a real
 * libavformat/libavcodec decoder that checks what was written (frame
 * count, size, timestamps, PSNR against the pattern), a pc_logger sink
 * that keeps the lines, and temp-dir helpers. Header-only, static. */
#ifndef PANOCAP_ENCODE_TESTUTIL_H
#define PANOCAP_ENCODE_TESTUTIL_H

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>

#include "clock.h"
#include "encode.h"
#include "tap.h"

/* --- the pattern ---------------------------------------------------------
 * Smooth moving waves plus a moving bright box with sharp edges: easy
 * enough for a low-latency encoder to keep PSNR high, moving so motion
 * and timestamps matter. Values are exact functions of (x, y, t). */
typedef struct pattern {
    int w, h;
    double *sx, *cy, *su, *cv; /* per-column / per-row tables */
    int t_cached;
} pattern;

static inline void pattern_init(pattern *p, int w, int h)
{
    memset(p, 0, sizeof *p);
    p->w = w;
    p->h = h;
    p->sx = malloc(sizeof(double) * (size_t)w);
    p->cy = malloc(sizeof(double) * (size_t)h);
    p->su = malloc(sizeof(double) * (size_t)w);
    p->cv = malloc(sizeof(double) * (size_t)h);
    p->t_cached = -1;
}

static inline void pattern_free(pattern *p)
{
    free(p->sx);
    free(p->cy);
    free(p->su);
    free(p->cv);
}

static inline void pattern_tables(pattern *p, int t)
{
    if (p->t_cached == t)
        return;
    for (int x = 0; x < p->w; x++) {
        p->sx[x] = sin((x + 3.0 * t) / 37.0);
        p->su[x] = sin((x / 2 + 1.0 * t) / 29.0);
    }
    for (int y = 0; y < p->h; y++) {
        p->cy[y] = cos((y - 2.0 * t) / 41.0);
        p->cv[y] = cos((y / 2 - 1.0 * t) / 31.0);
    }
    p->t_cached = t;
}

static inline int pattern_in_box(const pattern *p, int x, int y, int t)
{
    int bw = p->w / 4 > 8 ? p->w / 4 : 8, bh = p->h / 6 > 8 ? p->h / 6 : 8;
    int bx = (t * 4) % (p->w - bw), by = (t * 6) % (p->h - bh);
    return x >= bx && x < bx + bw && y >= by && y < by + bh;
}

static inline uint8_t pattern_y(pattern *p, int x, int y, int t)
{
    pattern_tables(p, t);
    if (pattern_in_box(p, x, y, t))
        return 220;
    return (uint8_t)lrint(120 + 60 * p->sx[x] * p->cy[y]);
}

static inline uint8_t pattern_u(pattern *p, int cx, int cy, int t)
{
    pattern_tables(p, t);
    return (uint8_t)lrint(128 + 40 * p->su[cx * 2]);
}

static inline uint8_t pattern_v(pattern *p, int cx, int cy, int t)
{
    pattern_tables(p, t);
    return (uint8_t)lrint(128 + 40 * p->cv[cy * 2]);
}

/* Fills an NV12 or I420 host picture with frame t of the pattern. */
static inline void pattern_fill(pattern *p, const pc_picture *pic, int t)
{
    for (int y = 0; y < pic->height; y++) {
        uint8_t *row = pic->plane[0] + (size_t)y * pic->pitch[0];
        for (int x = 0; x < pic->width; x++)
            row[x] = pattern_y(p, x, y, t);
    }
    for (int y = 0; y < pic->height / 2; y++) {
        if (pic->fmt == PC_FMT_NV12) {
            uint8_t *row = pic->plane[1] + (size_t)y * pic->pitch[1];
            for (int x = 0; x < pic->width / 2; x++) {
                row[2 * x] = pattern_u(p, x, y, t);
                row[2 * x + 1] = pattern_v(p, x, y, t);
            }
        } else {
            uint8_t *u = pic->plane[1] + (size_t)y * pic->pitch[1];
            uint8_t *v = pic->plane[2] + (size_t)y * pic->pitch[2];
            for (int x = 0; x < pic->width / 2; x++) {
                u[x] = pattern_u(p, x, y, t);
                v[x] = pattern_v(p, x, y, t);
            }
        }
    }
}

/* PSNR of a decoded YUV420P frame against pattern frame t (all planes). */
static inline double pattern_psnr(pattern *p, const AVFrame *f, int t)
{
    double se = 0;
    long cnt = 0;
    for (int y = 0; y < p->h; y++) {
        const uint8_t *row = f->data[0] + (size_t)y * f->linesize[0];
        for (int x = 0; x < p->w; x++) {
            int d = row[x] - pattern_y(p, x, y, t);
            se += d * d;
        }
    }
    cnt += (long)p->w * p->h;
    for (int y = 0; y < p->h / 2; y++) {
        const uint8_t *u = f->data[1] + (size_t)y * f->linesize[1];
        const uint8_t *v = f->data[2] + (size_t)y * f->linesize[2];
        for (int x = 0; x < p->w / 2; x++) {
            int du = u[x] - pattern_u(p, x, y, t);
            int dv = v[x] - pattern_v(p, x, y, t);
            se += du * du + dv * dv;
        }
    }
    cnt += (long)p->w * p->h / 2;
    double mse = se / cnt;
    return mse <= 1e-10 ? 99.0 : 10 * log10(255.0 * 255.0 / mse);
}

/* --- decoding what an output wrote ------------------------------------- */
#define DEC_MAX 4096
typedef struct dec_result {
    int frames, errors, width, height;
    int64_t pts[DEC_MAX];      /* stream time base */
    int index[DEC_MAX];        /* pattern frame index from pts */
    double psnr_min, psnr_avg;
    AVRational tb;
    char codec[32];
    enum AVColorRange range;
    enum AVColorSpace space;
    enum AVChromaLocation loc;
    int spacing_ok;            /* every pts step is one frame at fps */
    int keyframes;
    int worst;                 /* frame index of psnr_min */
} dec_result;

/* Decodes every video frame of url (or of an already opened fmt context
 * when ic != NULL), comparing each with the pattern; frame index from the
 * pts relative to the first one, which is pattern frame first_index (-1:
 * found by searching frames 0..999 for the best match, for a stream joined
 * in the middle). fps: nominal rate for spacing. Stops after the frame of
 * index last_index (-1: reads to the end). */
static inline int decode_check_until(const char *url, AVFormatContext *ic, pattern *p,
                                     AVRational fps, int first_index, int last_index,
                                     dec_result *r)
{
    memset(r, 0, sizeof *r);
    r->psnr_min = 1e9;
    r->spacing_ok = 1;
    int own = 0;
    if (!ic) {
        if (avformat_open_input(&ic, url, NULL, NULL) < 0)
            return -1;
        own = 1;
    }
    if (avformat_find_stream_info(ic, NULL) < 0) {
        if (own)
            avformat_close_input(&ic);
        return -2;
    }
    int si = av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (si < 0) {
        if (own)
            avformat_close_input(&ic);
        return -3;
    }
    AVStream *st = ic->streams[si];
    r->tb = st->time_base;
    const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
    AVCodecContext *dc = avcodec_alloc_context3(dec);
    avcodec_parameters_to_context(dc, st->codecpar);
#if defined(__SANITIZE_THREAD__)
    /* one thread under ThreadSanitizer: FFmpeg's frame threads hand decoded
     * frames over through atomics in its own (uninstrumented) code, so
     * every read of them would be a race to TSan */
    dc->thread_count = 1;
#else
    dc->thread_count = 2;
#endif
    if (avcodec_open2(dc, dec, NULL) < 0) {
        avcodec_free_context(&dc);
        if (own)
            avformat_close_input(&ic);
        return -4;
    }
    snprintf(r->codec, sizeof r->codec, "%s", dec->name);
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    int64_t first = AV_NOPTS_VALUE;
    double step = (double)fps.den / fps.num / av_q2d(r->tb); /* ticks per frame */
    double sum = 0;
    int eof = 0;
    while (!eof) {
        int rr = av_read_frame(ic, pkt);
        if (rr < 0) {
            eof = 1;
            avcodec_send_packet(dc, NULL);
        } else {
            if (pkt->stream_index == si && avcodec_send_packet(dc, pkt) < 0)
                r->errors++;
            av_packet_unref(pkt);
        }
        while (avcodec_receive_frame(dc, f) == 0) {
            int64_t pts = f->best_effort_timestamp;
            if (first == AV_NOPTS_VALUE) {
                first = pts;
                if (first_index < 0) {
                    double best = -1;
                    for (int t = 0; t < 1000; t++) {
                        double q = pattern_psnr(p, f, t);
                        if (q > best) {
                            best = q;
                            first_index = t;
                        }
                    }
                }
            }
            int n = r->frames;
            if (n < DEC_MAX) {
                r->pts[n] = pts;
                r->index[n] = first_index + (int)llrint((pts - first) / step);
                if (n > 0 && llabs((pts - r->pts[n - 1]) - (int64_t)llrint(step)) > 1)
                    r->spacing_ok = 0;
                double q = pattern_psnr(p, f, r->index[n]);
                sum += q;
                if (q < r->psnr_min) {
                    r->psnr_min = q;
                    r->worst = r->index[n];
                }
            }
            r->width = f->width;
            r->height = f->height;
            r->range = f->color_range;
            r->space = f->colorspace;
            r->loc = f->chroma_location;
            r->keyframes += f->key_frame ? 1 : 0;
            r->frames++;
            av_frame_unref(f);
            if (last_index >= 0 && n < DEC_MAX && r->index[n] >= last_index) {
                eof = 1;
                break;
            }
        }
    }
    r->psnr_avg = r->frames ? sum / (r->frames < DEC_MAX ? r->frames : DEC_MAX) : 0;
    av_frame_free(&f);
    av_packet_free(&pkt);
    avcodec_free_context(&dc);
    if (own)
        avformat_close_input(&ic);
    return 0;
}

static inline int decode_check(const char *url, AVFormatContext *ic, pattern *p, AVRational fps,
                               int first_index, dec_result *r)
{
    return decode_check_until(url, ic, p, fps, first_index, -1, r);
}

/* --- a pc_logger sink that keeps the lines ------------------------------ */
typedef struct log_keep {
    pthread_mutex_t lock;
    char lines[256][512];
    int levels[256];
    int n;
} log_keep;

static inline void log_keep_sink(void *user, int level, const char *line)
{
    log_keep *k = user;
    pthread_mutex_lock(&k->lock);
    if (level <= PC_LOG_INFO && k->n < 256) { /* FFmpeg's debug lines not kept */
        snprintf(k->lines[k->n], sizeof k->lines[0], "%s", line);
        k->levels[k->n] = level;
        k->n++;
    }
    pthread_mutex_unlock(&k->lock);
    if (level <= PC_LOG_NOTICE)
        tap_diag("log<%d> %s", level, line);
}

/* Lines at or below max_level that contain all of the given substrings. */
static inline int log_keep_count(log_keep *k, int max_level, const char *a, const char *b)
{
    int c = 0;
    pthread_mutex_lock(&k->lock);
    for (int i = 0; i < k->n; i++)
        if (k->levels[i] <= max_level && (!a || strstr(k->lines[i], a)) &&
            (!b || strstr(k->lines[i], b)))
            c++;
    pthread_mutex_unlock(&k->lock);
    return c;
}

/* A fresh temp dir for a test binary. */
static inline const char *test_tmpdir(char *buf, size_t n, const char *name)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(buf, n, "%s/pc-%s-XXXXXX", base, name);
    return mkdtemp(buf);
}

static inline int encoder_built(const char *name) { return avcodec_find_encoder_by_name(name) != NULL; }

/* 1 when this FFmpeg has the output protocol (e.g. "srt"). */
static inline int protocol_built(const char *name)
{
    void *opaque = NULL;
    const char *pr;
    int have = 0;
    while ((pr = avio_enum_protocols(&opaque, 1)))
        have |= !strcmp(pr, name);
    return have;
}

/* A UDP port on 127.0.0.1 that was free a moment ago (bound, read, closed). */
static inline int free_udp_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Encodes frames [t0, t0+count) of the pattern at fps with pts in ns. */
static inline int encode_frames(pc_encoder *e, pattern *p, int t0, int count, AVRational fps,
                                int64_t base_ns, char *err, size_t n)
{
    for (int t = t0; t < t0 + count; t++) {
        pc_picture pic;
        int dev = -1;
        int r = pc_encoder_frame(e, &pic, &dev, err, n);
        if (r)
            return r;
        pattern_fill(p, &pic, t);
        int64_t pts = base_ns + (int64_t)t * 1000000000LL * fps.den / fps.num;
        r = pc_encoder_submit(e, pts, 0, err, n);
        if (r)
            return r;
    }
    return 0;
}

#endif
