/* replay_decode.c - the recorded panorama's frames in order, from one or
 * more files (consecutive parts of one recording), with their times in
 * seconds from the first frame (replay_int.h). libavformat/libavcodec,
 * software decoding on the CPU's threads. A file whose timestamps start
 * over (a new recording's, a segment's muxer) follows on from the last
 * frame of the one before, one frame period later. */
#include "replay_int.h"

#include "errmsg.h"

#include <libavutil/pixdesc.h>
#include <math.h>
#include <string.h>

static void close_file(rp_decoder *d)
{
    avcodec_free_context(&d->cc);
    avformat_close_input(&d->fc);
    d->stream = -1;
}

void rp_decoder_close(rp_decoder *d)
{
    close_file(d);
    av_frame_free(&d->frame);
    av_packet_free(&d->pkt);
}

static int open_file(rp_decoder *d, int i, char *err, size_t errlen)
{
    const char *path = d->inputs[i];
    char e[128];
    int rc = avformat_open_input(&d->fc, path, NULL, NULL);
    if (rc < 0) {
        av_strerror(rc, e, sizeof e);
        pc_set_err(err, errlen, "%s: cannot open: %s", path, e);
        return PC_EIO;
    }
    if ((rc = avformat_find_stream_info(d->fc, NULL)) < 0) {
        av_strerror(rc, e, sizeof e);
        pc_set_err(err, errlen, "%s: not a video file libavformat reads: %s", path, e);
        return PC_EIO;
    }
    const AVCodec *codec = NULL;
    d->stream = av_find_best_stream(d->fc, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (d->stream < 0 || !codec) {
        pc_set_err(err, errlen, "%s: no video stream panocap can decode (%s)", path,
                   d->stream == AVERROR_DECODER_NOT_FOUND ? "no decoder for its codec" : "none in the file");
        return PC_EIO;
    }
    AVStream *st = d->fc->streams[d->stream];
    if (!(d->cc = avcodec_alloc_context3(codec)) || avcodec_parameters_to_context(d->cc, st->codecpar) < 0) {
        pc_set_err(err, errlen, "%s: out of memory for the decoder", path);
        return PC_ENOMEM;
    }
    d->cc->thread_count = 0; /* libavcodec: one per CPU */
    if ((rc = avcodec_open2(d->cc, codec, NULL)) < 0) {
        av_strerror(rc, e, sizeof e);
        pc_set_err(err, errlen, "%s: decoder %s: %s", path, codec->name, e);
        return PC_EIO;
    }
    AVRational fr = st->avg_frame_rate.num > 0 ? st->avg_frame_rate : st->r_frame_rate;
    if (fr.num <= 0 || fr.den <= 0) {
        pc_set_err(err, errlen, "%s: the video stream has no frame rate", path);
        return PC_EIO;
    }
    const int w = st->codecpar->width, h = st->codecpar->height;
    if (i == 0) {
        d->fps = fr;
        d->w = w;
        d->h = h;
    } else if (w != d->w || h != d->h || av_cmp_q(fr, d->fps)) {
        pc_set_err(err, errlen, "%s: %dx%d at %d/%d fps, but %s is %dx%d at %d/%d fps: not parts of one recording",
                   path, w, h, fr.num, fr.den, d->inputs[0], d->w, d->h, d->fps.num, d->fps.den);
        return PC_EINVAL;
    }
    d->file = i;
    d->file_first = 1;
    d->eof = 0;
    return 0;
}

int rp_decoder_open(rp_decoder *d, const char *const *inputs, int n, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->inputs = inputs;
    d->ninputs = n;
    d->stream = -1;
    d->last_t = -1;
    if (!(d->frame = av_frame_alloc()) || !(d->pkt = av_packet_alloc())) {
        pc_set_err(err, errlen, "decoder: out of memory");
        return PC_ENOMEM;
    }
    /* every file opens (and agrees) before any frame is rendered; the
     * recording's length from the containers' durations */
    for (int i = 0; i < n; i++) {
        int rc = open_file(d, i, err, errlen);
        if (rc)
            return rc;
        double dur = d->fc->duration > 0 ? d->fc->duration / (double)AV_TIME_BASE : 0;
        d->len_s += dur;
        if (i == 0)
            d->len0_s = dur;
        if (i < n - 1)
            close_file(d);
    }
    close_file(d);
    return open_file(d, 0, err, errlen);
}

/* The next decoded frame of the current file into d->frame: 1, 0 at its
 * end, or an error. */
static int next_in_file(rp_decoder *d, char *err, size_t errlen)
{
    char e[128];
    for (;;) {
        int rc = avcodec_receive_frame(d->cc, d->frame);
        if (rc == 0)
            return 1;
        if (rc == AVERROR_EOF)
            return 0;
        if (rc != AVERROR(EAGAIN)) {
            av_strerror(rc, e, sizeof e);
            pc_set_err(err, errlen, "%s: decoding frame %d: %s", d->inputs[d->file], d->frames, e);
            return PC_EIO;
        }
        if (d->eof)
            return 0;
        rc = av_read_frame(d->fc, d->pkt);
        if (rc == AVERROR_EOF) {
            d->eof = 1;
            avcodec_send_packet(d->cc, NULL);
            continue;
        }
        if (rc < 0) {
            av_strerror(rc, e, sizeof e);
            pc_set_err(err, errlen, "%s: reading after frame %d: %s", d->inputs[d->file], d->frames, e);
            return PC_EIO;
        }
        if (d->pkt->stream_index == d->stream) {
            rc = avcodec_send_packet(d->cc, d->pkt);
            if (rc < 0 && rc != AVERROR(EAGAIN) && rc != AVERROR_INVALIDDATA) {
                av_packet_unref(d->pkt);
                av_strerror(rc, e, sizeof e);
                pc_set_err(err, errlen, "%s: decoding after frame %d: %s", d->inputs[d->file], d->frames, e);
                return PC_EIO;
            }
        }
        av_packet_unref(d->pkt);
    }
}

int rp_decoder_next(rp_decoder *d, char *err, size_t errlen)
{
    for (;;) {
        if (!d->fc)
            return 0;
        int rc = next_in_file(d, err, errlen);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            close_file(d);
            if (d->file + 1 >= d->ninputs)
                return 0;
            if ((rc = open_file(d, d->file + 1, err, errlen)))
                return rc;
            continue;
        }
        const AVFrame *f = d->frame;
        if (f->width != d->w || f->height != d->h) {
            pc_set_err(err, errlen, "%s: frame %d is %dx%d, the stream %dx%d", d->inputs[d->file], d->frames, f->width,
                       f->height, d->w, d->h);
            return PC_EINVAL;
        }
        if (f->format != AV_PIX_FMT_YUV420P && f->format != AV_PIX_FMT_YUVJ420P) {
            const char *name = av_get_pix_fmt_name(f->format);
            pc_set_err(err, errlen, "%s: frames are %s: panocap re-frames 4:2:0 8-bit panoramas (yuv420p)",
                       d->inputs[d->file], name ? name : "of an unknown pixel format");
            return PC_EINVAL;
        }
        const double period = (double)d->fps.den / d->fps.num;
        int64_t pts = f->best_effort_timestamp;
        double raw = pts == AV_NOPTS_VALUE ? NAN : pts * av_q2d(d->fc->streams[d->stream]->time_base);
        if (d->file_first) { /* where this file's times start */
            if (d->file == 0 || !isfinite(raw))
                d->base = isfinite(raw) ? raw : 0;
            else if (raw - d->base <= d->last_t)
                d->base = raw - (d->last_t + period);
            d->file_first = 0;
        }
        double t = isfinite(raw) ? raw - d->base : d->last_t + period;
        if (d->frames && t <= d->last_t) /* a timestamp going back: one period on */
            t = d->last_t + period;
        d->t = t;
        d->last_t = t;
        d->frames++;
        return 1;
    }
}

/* Seeks the current file to the last keyframe at or before its time t: a
 * seek to t - back, then packets skipped up to the first keyframe of the
 * stream; one past t sends the seek further back (2, 4, 8... s). 1 with
 * the keyframe sent to the decoder, 0 when none was found (the file is
 * then read from its start again). */
static int seek_keyframe(rp_decoder *d, double t)
{
    const AVStream *st = d->fc->streams[d->stream];
    const double tb = av_q2d(st->time_base);
    for (double back = 2.0; t - back > d->t; back *= 2) {
        const int64_t ts = (int64_t)floor((t - back + d->base) / tb);
        if (av_seek_frame(d->fc, d->stream, ts, AVSEEK_FLAG_BACKWARD) < 0)
            break;
        for (;;) {
            if (av_read_frame(d->fc, d->pkt) < 0)
                break;
            if (d->pkt->stream_index != d->stream || !(d->pkt->flags & AV_PKT_FLAG_KEY) ||
                d->pkt->pts == AV_NOPTS_VALUE) {
                av_packet_unref(d->pkt);
                continue;
            }
            const double tk = d->pkt->pts * tb - d->base;
            if (tk > t || tk <= d->t) { /* past t (or before what was read): further back */
                av_packet_unref(d->pkt);
                break;
            }
            avcodec_flush_buffers(d->cc);
            d->eof = 0;
            const int rc = avcodec_send_packet(d->cc, d->pkt);
            av_packet_unref(d->pkt);
            if (rc < 0)
                break;
            return 1;
        }
    }
    return 0;
}

int rp_decoder_seek(rp_decoder *d, double t, char *err, size_t errlen)
{
    if (!d->fc || d->file != 0 || d->frames < 1 || !(t > d->t + 2.0) || !(t < d->len0_s - 0.5))
        return 0;
    if (seek_keyframe(d, t))
        return 1;
    /* no keyframe found before t: the first file from its start again */
    close_file(d);
    d->frames = 0;
    d->last_t = -1;
    return open_file(d, 0, err, errlen);
}
