/* encoder.c - the pc_encoder: picks and opens the encoder (NVENC probe,
 * software fallback list, forced names), hands out frames (CUDA pool
 * frames for zero copy, host frames otherwise), encodes with capture
 * timestamps and fans the packets out to the outputs (outputs.c). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/hwcontext.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#include "clock.h"
#include "encode_internal.h"

#define ENC_TB ((AVRational){1, 90000})
#define RING 4      /* host frames handed out in turn */
#define PTS_FIFO 256 /* frames in flight we can map back to capture time */
#define MIN_BITRATE PC_ENCODE_MIN_BITRATE
#define MAX_BITRATE PC_ENCODE_MAX_BITRATE

static const char *const default_fallbacks[] = {"libx264", "libx265", "libsvtav1"};
static const char *const known_encoders[] = {"hevc_nvenc", "h264_nvenc", "libx264", "libx265",
                                             "libsvtav1"};

struct pc_encoder {
    pc_encode_config cfg; /* strings below are our copies */
    char *preset, *encoder_options;
    const pc_logger *log;
    char name[32];
    const char *codec_name;
    AVCodecContext *avctx;
    AVBufferRef *hwdev, *hwframes;
    int zero_copy;
    enum AVPixelFormat sw_fmt; /* NV12 or YUV420P (host frames) */
    AVFrame *ring[RING];
    int ring_next;
    AVFrame *cur;  /* the frame handed out by pc_encoder_frame */
    AVFrame *hwf;  /* CUDA frame handed out */
    AVFrame *ext;  /* caller's picture (pc_encoder_submit_picture) */
    AVPacket *pkt;
    int live_bitrate;

    int have_first;
    int64_t first_ns, last_pts;
    /* frames submitted and not yet out, in order (no B-frames: packets
     * leave in submission order; a frame the encoder drops is skipped) */
    struct {
        int64_t pts, pts_ns, submit_ns;
    } fifo[PTS_FIFO];
    int fifo_head, fifo_count;

    atomic_int idr_req;
    atomic_llong pending_bitrate;
    int flushed;

    pthread_mutex_t st_lock;
    pc_encoder_stats st;

    pc_out *outs[PC_ENCODE_MAX_OUTPUTS];
    int n_outs;
    pc_mux *mux;     /* shared outputs (cfg.mux) once attached, else NULL */
    int mux_stream;
};

static int is_nvenc(const char *name) { return strstr(name, "_nvenc") != NULL; }

static const char *nvenc_name(pc_codec c) { return c == PC_CODEC_H264 ? "h264_nvenc" : "hevc_nvenc"; }

static const char *errs(int r, char *b, size_t n)
{
    av_strerror(r, b, n);
    return b;
}

/* "k=v:k=v" (':' inside values is not supported) -> av_opt_set on avctx
 * and its private options. */
static int apply_user_options(AVCodecContext *c, const char *opts, char *err, size_t n)
{
    if (!opts || !opts[0])
        return 0;
    char *copy = strdup(opts), *save = NULL;
    if (!copy)
        return PC_ENOMEM;
    int ret = 0;
    for (char *kv = strtok_r(copy, ":", &save); kv; kv = strtok_r(NULL, ":", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(err, n, "encoder_options: '%s' is not key=value", kv);
            ret = PC_EINVAL;
            break;
        }
        *eq = '\0';
        int r = av_opt_set(c, kv, eq + 1, AV_OPT_SEARCH_CHILDREN);
        if (r < 0) {
            char e[AV_ERROR_MAX_STRING_SIZE];
            snprintf(err, n, "encoder_options: %s=%s rejected by %s: %s", kv, eq + 1,
                     c->codec->name, errs(r, e, sizeof e));
            ret = PC_EINVAL;
            break;
        }
    }
    free(copy);
    return ret;
}

static int supports_fmt(const AVCodec *codec, enum AVPixelFormat f)
{
    if (!codec->pix_fmts)
        return 0;
    for (const enum AVPixelFormat *p = codec->pix_fmts; *p != AV_PIX_FMT_NONE; p++)
        if (*p == f)
            return 1;
    return 0;
}

/* The encoder's settings, low latency first. */
static int configure(pc_encoder *e, AVCodecContext *c, const char *name, char *err, size_t n)
{
    const pc_encode_config *cfg = &e->cfg;
    char buf[256];
    c->width = cfg->width;
    c->height = cfg->height;
    c->time_base = ENC_TB;
    c->framerate = (AVRational){cfg->fps_num, cfg->fps_den};
    c->gop_size = cfg->gop > 0 ? cfg->gop : (int)(2.0 * cfg->fps_num / cfg->fps_den + 0.5);
    c->max_b_frames = 0;
    c->bit_rate = cfg->bitrate;
    c->rc_max_rate = cfg->bitrate;
    c->rc_min_rate = cfg->bitrate;
    int vbv_ms = cfg->vbv_ms > 0 ? cfg->vbv_ms : 500;
    c->rc_buffer_size = (int)(cfg->bitrate * vbv_ms / 1000 > INT_MAX ? INT_MAX
                                                                      : cfg->bitrate * vbv_ms / 1000);
    c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    c->thread_count = cfg->threads > 0 ? cfg->threads : 0;
    c->color_range = cfg->range == PC_RANGE_FULL ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    if (cfg->matrix == PC_MATRIX_BT601) {
        c->colorspace = AVCOL_SPC_SMPTE170M;
        c->color_primaries = AVCOL_PRI_SMPTE170M;
        c->color_trc = AVCOL_TRC_SMPTE170M;
    } else {
        c->colorspace = AVCOL_SPC_BT709;
        c->color_primaries = AVCOL_PRI_BT709;
        c->color_trc = AVCOL_TRC_BT709;
    }
    /* the kernels average each 2x2 block: chroma sited at the centre */
    c->chroma_sample_location = AVCHROMA_LOC_CENTER;

    void *p = c->priv_data;
    if (is_nvenc(name)) {
        av_opt_set(p, "preset", e->preset ? e->preset : "p2", 0);
        av_opt_set(p, "tune", "ull", 0);
        av_opt_set(p, "rc", "cbr", 0);
        av_opt_set_int(p, "zerolatency", 1, 0);
        av_opt_set_int(p, "delay", 0, 0);
        av_opt_set_int(p, "rc-lookahead", 0, 0);
        av_opt_set_int(p, "forced-idr", 1, 0);
    } else if (!strcmp(name, "libx264")) {
        av_opt_set(p, "preset", e->preset ? e->preset : "ultrafast", 0);
        av_opt_set(p, "tune", "zerolatency", 0);
        av_opt_set_int(p, "rc-lookahead", 0, 0);
        av_opt_set_int(p, "forced-idr", 1, 0);
        if (cfg->frame_threads > 0)
            av_opt_set(p, "x264-params", "sliced-threads=0", 0);
    } else if (!strcmp(name, "libx265")) {
        av_opt_set(p, "preset", e->preset ? e->preset : "ultrafast", 0);
        av_opt_set(p, "tune", "zerolatency", 0);
        av_opt_set_int(p, "forced-idr", 1, 0);
        snprintf(buf, sizeof buf, "log-level=error:bframes=0:rc-lookahead=0%s",
                 cfg->threads > 0 ? "" : "");
        if (cfg->threads > 0)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ":pools=%d", cfg->threads);
        av_opt_set(p, "x265-params", buf, 0);
    } else if (!strcmp(name, "libsvtav1")) {
        int preset = 12;
        if (e->preset) {
            char *end;
            long v = strtol(e->preset, &end, 10);
            if (*end || v < -1 || v > 13) {
                snprintf(err, n, "preset '%s' for libsvtav1: a number from 0 (slow) to 13 (fast)",
                         e->preset);
                return PC_EINVAL;
            }
            preset = (int)v;
        }
        av_opt_set_int(p, "preset", preset, 0);
        c->rc_max_rate = 0; /* SVT's CBR takes the target only (max must exceed it) */
        /* low-delay prediction (no reordering) and CBR */
        snprintf(buf, sizeof buf, "pred-struct=1:rc=2");
        if (cfg->threads > 0)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ":lp=%d", cfg->threads);
        av_opt_set(p, "svtav1-params", buf, 0);
    } else if (e->preset) {
        if (av_opt_set(p, "preset", e->preset, 0) < 0) {
            snprintf(err, n, "preset '%s': %s has no such preset option", e->preset, name);
            return PC_EINVAL;
        }
    }
    return apply_user_options(c, e->encoder_options, err, n);
}

/* Tries to open one encoder. 0: e->avctx is open. Otherwise why in
 * reason; PC_EINVAL means a configuration error (not worth a fallback). */
static int try_open(pc_encoder *e, const char *name, int use_cuda, char *reason, size_t n)
{
    const AVCodec *codec = avcodec_find_encoder_by_name(name);
    if (!codec) {
        snprintf(reason, n, "not in this FFmpeg build");
        return PC_ENOTSUP;
    }
    if (codec->type != AVMEDIA_TYPE_VIDEO) {
        snprintf(reason, n, "not a video encoder");
        return PC_EINVAL;
    }
    if (!strcmp(name, "h264_nvenc") && (e->cfg.width > 4096 || e->cfg.height > 4096)) {
        snprintf(reason, n, "codec h264: H.264 NVENC takes at most 4096x4096 and the frame is "
                 "%dx%d; use codec hevc (the default, up to 8192x8192)",
                 e->cfg.width, e->cfg.height);
        return PC_EINVAL;
    }
    AVCodecContext *c = avcodec_alloc_context3(codec);
    AVBufferRef *dev = NULL, *frames = NULL;
    if (!c) {
        snprintf(reason, n, "out of memory");
        return PC_ENOMEM;
    }
    int r = configure(e, c, name, reason, n);
    if (r) {
        avcodec_free_context(&c);
        return r;
    }
    if (use_cuda) {
        r = pc_enc_cuda_device(&dev, e->cfg.cuda_ctx, e->cfg.cuda_stream, reason, n);
        if (r) {
            avcodec_free_context(&c);
            return r == PC_ENOTSUP ? PC_ENOTSUP : PC_EDEVICE;
        }
        frames = av_hwframe_ctx_alloc(dev);
        if (!frames) {
            snprintf(reason, n, "av_hwframe_ctx_alloc failed");
            av_buffer_unref(&dev);
            avcodec_free_context(&c);
            return PC_ENOMEM;
        }
        AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
        fc->format = AV_PIX_FMT_CUDA;
        fc->sw_format = AV_PIX_FMT_NV12;
        fc->width = e->cfg.width;
        fc->height = e->cfg.height;
        fc->initial_pool_size = 0; /* the CUDA pool grows as needed; warmed below */
        r = av_hwframe_ctx_init(frames);
        if (r < 0) {
            char eb[AV_ERROR_MAX_STRING_SIZE];
            snprintf(reason, n, "av_hwframe_ctx_init(CUDA, NV12 %dx%d): %s", e->cfg.width,
                     e->cfg.height, errs(r, eb, sizeof eb));
            av_buffer_unref(&frames);
            av_buffer_unref(&dev);
            avcodec_free_context(&c);
            return PC_EDEVICE;
        }
        c->pix_fmt = AV_PIX_FMT_CUDA;
        c->sw_pix_fmt = AV_PIX_FMT_NV12;
        c->hw_frames_ctx = av_buffer_ref(frames);
    } else if (supports_fmt(codec, AV_PIX_FMT_NV12)) {
        c->pix_fmt = AV_PIX_FMT_NV12;
    } else if (supports_fmt(codec, AV_PIX_FMT_YUV420P)) {
        c->pix_fmt = AV_PIX_FMT_YUV420P;
    } else {
        snprintf(reason, n, "takes neither NV12 nor YUV420P");
        avcodec_free_context(&c);
        return PC_ENOTSUP;
    }

    char cap[512];
    pc_avlog_capture_start(cap, sizeof cap);
    r = avcodec_open2(c, codec, NULL);
    pc_avlog_capture_stop();
    if (r < 0) {
        char eb[AV_ERROR_MAX_STRING_SIZE];
        errs(r, eb, sizeof eb);
        if (cap[0])
            snprintf(reason, n, "%s", cap);
        else
            snprintf(reason, n, "avcodec_open2: %s", eb);
        if (is_nvenc(name)) { /* what FFmpeg's words mean here */
            const char *hint = strstr(reason, "libcuda") ? " [no NVIDIA driver]"
                             : strstr(reason, "nvidia-encode") ? " [the driver has no NVENC library]"
                             : strstr(reason, "unsupported device") ? " [this GPU has no NVENC]"
                             : strstr(reason, "No capable devices") ? " [no NVENC-capable GPU]"
                             : "";
            size_t l = strlen(reason);
            if (hint[0] && l + strlen(hint) + 1 < n)
                memcpy(reason + l, hint, strlen(hint) + 1);
        }
        av_buffer_unref(&frames);
        av_buffer_unref(&dev);
        avcodec_free_context(&c);
        return PC_ENOTSUP;
    }
    e->avctx = c;
    e->hwdev = dev;
    e->hwframes = frames;
    e->zero_copy = use_cuda;
    e->sw_fmt = use_cuda ? AV_PIX_FMT_NV12 : c->pix_fmt;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->codec_name = avcodec_get_name(codec->id);
    e->live_bitrate = is_nvenc(name) || !strcmp(name, "libx264");
    return 0;
}

/* Frees an opened encoder context after sending it end-of-stream: SVT-AV1
 * 1.4 hangs in deinit ("deinit called without sending EOS!") without one,
 * and waits forever for the EOS packet of a stream that had no frame, so
 * an unfed libsvtav1 gets one grey frame first. */
static void close_codec(AVCodecContext **c, int fed)
{
    if (!*c)
        return;
    if (avcodec_is_open(*c)) {
        if (!fed && !strcmp((*c)->codec->name, "libsvtav1")) {
            AVFrame *f = av_frame_alloc();
            if (f) {
                f->format = (*c)->pix_fmt;
                f->width = (*c)->width;
                f->height = (*c)->height;
                if (av_frame_get_buffer(f, 0) >= 0) {
                    for (int i = 0; i < 3 && f->data[i]; i++)
                        memset(f->data[i], 128, (size_t)f->linesize[i] * (i ? (f->height + 1) / 2 : f->height));
                    f->pts = 0;
                    avcodec_send_frame(*c, f);
                }
                av_frame_free(&f);
            }
        }
        if (avcodec_send_frame(*c, NULL) >= 0) {
            AVPacket *p = av_packet_alloc();
            while (p && avcodec_receive_packet(*c, p) >= 0)
                av_packet_unref(p);
            av_packet_free(&p);
        }
    }
    avcodec_free_context(c);
}

static int validate(const pc_encode_config *cfg, char *err, size_t n)
{
    if (cfg->width < PC_ENCODE_MIN_SIDE || cfg->height < PC_ENCODE_MIN_SIDE || cfg->width > PC_ENCODE_MAX_SIDE ||
        cfg->height > PC_ENCODE_MAX_SIDE || (cfg->width & 1) || (cfg->height & 1)) {
        snprintf(err, n, "frame size %dx%d: width and height must be even, %d..%d", cfg->width, cfg->height,
                 PC_ENCODE_MIN_SIDE, PC_ENCODE_MAX_SIDE);
        return PC_EINVAL;
    }
    if (!pc_encode_area_ok(cfg->width, cfg->height)) {
        snprintf(err, n, "frame size %dx%d: over the area libavcodec opens ((width + 128) x (height + 128) at most "
                 "%lld; %d wide: at most %d high)", cfg->width, cfg->height, PC_ENCODE_MAX_AREA, cfg->width,
                 pc_encode_area_max_height(cfg->width));
        return PC_EINVAL;
    }
    if (cfg->fps_num <= 0 || cfg->fps_den <= 0 || (double)cfg->fps_num / cfg->fps_den > 1000) {
        snprintf(err, n, "fps %d/%d: must be a positive rate up to 1000", cfg->fps_num,
                 cfg->fps_den);
        return PC_EINVAL;
    }
    if (cfg->bitrate < MIN_BITRATE || cfg->bitrate > MAX_BITRATE) {
        snprintf(err, n, "bitrate %lld bit/s: must be between %lld (100 kbit/s) and %lld "
                 "(800 Mbit/s)", (long long)cfg->bitrate, MIN_BITRATE, MAX_BITRATE);
        return PC_EINVAL;
    }
    if (cfg->gop < 0 || cfg->gop > 100000) {
        snprintf(err, n, "gop %d: frames between keyframes, 1..100000 (0 = 2 s)", cfg->gop);
        return PC_EINVAL;
    }
    if (cfg->threads < 0 || cfg->threads > 256) {
        snprintf(err, n, "threads %d: 0 (encoder decides) to 256", cfg->threads);
        return PC_EINVAL;
    }
    if (cfg->vbv_ms < 0 || cfg->vbv_ms > 10000) {
        snprintf(err, n, "vbv_ms %d: 0 (500) to 10000", cfg->vbv_ms);
        return PC_EINVAL;
    }
    if (cfg->codec != PC_CODEC_HEVC && cfg->codec != PC_CODEC_H264) {
        snprintf(err, n, "codec %d: hevc or h264", (int)cfg->codec);
        return PC_EINVAL;
    }
    if (cfg->matrix != PC_MATRIX_BT709 && cfg->matrix != PC_MATRIX_BT601) {
        snprintf(err, n, "matrix %d: bt709 or bt601", (int)cfg->matrix);
        return PC_EINVAL;
    }
    if (cfg->range != PC_RANGE_LIMITED && cfg->range != PC_RANGE_FULL) {
        snprintf(err, n, "range %d: limited or full", (int)cfg->range);
        return PC_EINVAL;
    }
    if (cfg->n_outputs < 0 || cfg->n_outputs > PC_ENCODE_MAX_OUTPUTS) {
        snprintf(err, n, "n_outputs %d: 0..%d", cfg->n_outputs, PC_ENCODE_MAX_OUTPUTS);
        return PC_EINVAL;
    }
    return 0;
}

static void request_idr_hook(void *enc) { pc_encoder_request_idr(enc); }

/* Opens encoder `name` at a small size on host frames and closes it:
 * 0, or nonzero with the reason in why. */
static int probe_encoder(const char *name, char *why, size_t n)
{
    pc_encoder probe;
    memset(&probe, 0, sizeof probe);
    pc_encode_config_default(&probe.cfg);
    probe.cfg.width = 256;
    probe.cfg.height = 256;
    probe.cfg.bitrate = 1000000;
    probe.cfg.threads = 1;
    int r = try_open(&probe, name, 0, why, n);
    if (!r)
        close_codec(&probe.avctx, 0);
    return r;
}

int pc_encoder_opens(const char *name)
{
    char why[512];
    return probe_encoder(name, why, sizeof why) == 0;
}

/* Fills buf with the encoders known to panocap and whether they open
 * (probed at a small size on host frames). */
static int list_encoders(char *buf, size_t n, int lines)
{
    int avail = 0;
    size_t off = 0;
    if (n)
        buf[0] = '\0';
    for (size_t i = 0; i < sizeof known_encoders / sizeof *known_encoders; i++) {
        const char *name = known_encoders[i];
        char why[512];
        int r = probe_encoder(name, why, sizeof why);
        if (!r)
            avail++;
        int w;
        if (lines)
            w = snprintf(buf + off, n - off, "  %-12s %s%s\n", name,
                         r ? "unavailable: " : "available", r ? why : "");
        else
            w = snprintf(buf + off, n - off, "%s%s (%s%s)", off ? ", " : "", name,
                         r ? "unavailable: " : "available", r ? why : "");
        if (w > 0)
            off += (size_t)w < n - off ? (size_t)w : n - off - 1;
    }
    return avail;
}

int pc_encoder_list_str(char *buf, size_t n) { return list_encoders(buf, n, 0); }

int pc_encoder_list(FILE *out)
{
    char buf[4096];
    int a = list_encoders(buf, sizeof buf, 1);
    fprintf(out, "encoders (libavcodec %s):\n%s", AV_STRINGIFY(LIBAVCODEC_VERSION), buf);
    return a;
}

static void free_encoder(pc_encoder *e)
{
    for (int i = 0; i < e->n_outs; i++)
        pc_out_close(e->outs[i], 5000);
    if (e->mux)
        pc_mux_detach(e->mux, e->mux_stream); /* the mux's owner closes it */
    for (int i = 0; i < RING; i++)
        av_frame_free(&e->ring[i]);
    av_frame_free(&e->hwf);
    av_frame_free(&e->ext);
    if (e->flushed)
        avcodec_free_context(&e->avctx);
    else
        close_codec(&e->avctx, e->st.frames_in > 0);
    av_packet_free(&e->pkt);
    av_buffer_unref(&e->hwframes);
    av_buffer_unref(&e->hwdev);
    pthread_mutex_destroy(&e->st_lock);
    free(e->preset);
    free(e->encoder_options);
    free(e);
}

int pc_encoder_open(pc_encoder **out, const pc_encode_config *cfg, char *err, size_t n)
{
    char tmp[8];
    if (!err || !n) {
        err = tmp;
        n = sizeof tmp;
    }
    err[0] = '\0';
    if (!out || !cfg) {
        snprintf(err, n, "pc_encoder_open: NULL argument");
        return PC_EINVAL;
    }
    *out = NULL;
    int r = validate(cfg, err, n);
    if (r)
        return r;
    pc_avlog_bind(cfg->log);

    pc_encoder *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, n, "out of memory");
        return PC_ENOMEM;
    }
    pthread_mutex_init(&e->st_lock, NULL);
    e->cfg = *cfg;
    e->log = cfg->log;
    e->preset = cfg->preset ? strdup(cfg->preset) : NULL;
    e->encoder_options = cfg->encoder_options ? strdup(cfg->encoder_options) : NULL;
    e->cfg.preset = e->preset;
    e->cfg.encoder_options = e->encoder_options;
    e->cfg.encoder = NULL;
    e->cfg.label = NULL; /* the caller's string: used during open only */
    for (int i = 0; i < PC_ENCODE_MAX_FALLBACKS; i++)
        e->cfg.fallbacks[i] = NULL;
    for (int i = 0; i < PC_ENCODE_MAX_OUTPUTS; i++)
        memset(&e->cfg.outputs[i], 0, sizeof e->cfg.outputs[i]);
    atomic_init(&e->idr_req, 0);
    atomic_init(&e->pending_bitrate, 0);

    /* outputs' URLs and containers first: cheap, and a typo should not
     * wait for an encoder probe (codec checked again once known) */
    for (int i = 0; i < cfg->n_outputs; i++) {
        r = pc_out_check(i, &cfg->outputs[i], AV_CODEC_ID_NONE, err, n);
        if (r) {
            free_encoder(e);
            return r;
        }
    }

    const char *forced = cfg->encoder && cfg->encoder[0] && strcmp(cfg->encoder, "auto") != 0
                             ? cfg->encoder : NULL;
    char why[512], nv_why[512] = "", others[1024] = "";
    const char *nv = NULL;
    if (forced) {
        int use_cuda = is_nvenc(forced) && cfg->cuda_ctx != NULL;
        r = try_open(e, forced, use_cuda, why, sizeof why);
        if (r && use_cuda && r != PC_EINVAL) {
            /* CUDA frames failed: NVENC may still open on host frames */
            char why2[512];
            if (!try_open(e, forced, 0, why2, sizeof why2)) {
                pc_log(e->log, PC_LOG_WARNING, "encode: %s on CUDA frames failed (%s); "
                       "using it on host frames (one upload per frame)", forced, why);
                r = 0;
            }
        }
        if (r) {
            if (r == PC_EINVAL) {
                snprintf(err, n, "encoder %s: %s", forced, why);
            } else {
                char list[2048];
                pc_encoder_list_str(list, sizeof list);
                snprintf(err, n, "encoder '%s' cannot be used: %s. This build and machine "
                         "offer: %s", forced, why, list);
            }
            free_encoder(e);
            return r == PC_EINVAL ? PC_EINVAL : PC_ENOTSUP;
        }
    } else {
        nv = nvenc_name(cfg->codec);
        int use_cuda = cfg->cuda_ctx != NULL;
        r = try_open(e, nv, use_cuda, nv_why, sizeof nv_why);
        if (r == PC_EINVAL) {
            snprintf(err, n, "encoder auto (NVENC %s): %s", nv, nv_why);
            free_encoder(e);
            return r;
        }
        if (r && use_cuda) {
            char why2[512];
            if (!try_open(e, nv, 0, why2, sizeof why2)) {
                pc_log(e->log, PC_LOG_WARNING, "encode: %s on CUDA frames failed (%s); "
                       "using it on host frames (one upload per frame)", nv, nv_why);
                r = 0;
            }
        }
        if (r) {
            int k = 0;
            const char *const *list = cfg->fallbacks[0] ? cfg->fallbacks : default_fallbacks;
            int cnt = cfg->fallbacks[0] ? PC_ENCODE_MAX_FALLBACKS : 3;
            for (k = 0; k < cnt && list[k]; k++) {
                if (!strcmp(list[k], "auto") || !strcmp(list[k], nv))
                    continue;
                r = try_open(e, list[k], 0, why, sizeof why);
                if (!r)
                    break;
                size_t l = strlen(others);
                snprintf(others + l, sizeof others - l, "%s%s: %s", l ? "; " : "", list[k], why);
                if (r == PC_EINVAL) {
                    snprintf(err, n, "fallback encoder %s: %s", list[k], why);
                    free_encoder(e);
                    return r;
                }
            }
            if (r) {
                snprintf(err, n, "no encoder opens: %s: %s; %s", nv, nv_why, others);
                free_encoder(e);
                return PC_ENOTSUP;
            }
            /* the one line that says why and what instead */
            char desc[160] = "";
            if (!strcmp(e->name, "libx264"))
                snprintf(desc, sizeof desc, " (preset %s, tune zerolatency, %s threads)",
                         e->preset ? e->preset : "ultrafast",
                         cfg->frame_threads > 0 ? "frame" : "sliced");
            else if (!strcmp(e->name, "libx265"))
                snprintf(desc, sizeof desc, " (preset %s, tune zerolatency)",
                         e->preset ? e->preset : "ultrafast");
            else if (!strcmp(e->name, "libsvtav1"))
                snprintf(desc, sizeof desc, " (preset %s, low delay)", e->preset ? e->preset : "12");
            pc_log(e->log, PC_LOG_WARNING,
                   "encode%s%s: NVENC (%s) not available: %s; using %s%s instead%s%s", cfg->label ? " " : "",
                   cfg->label ? cfg->label : "", nv, nv_why, e->name, desc, others[0] ? ", after " : "", others);
        }
    }
    pc_log(e->log, PC_LOG_INFO, "encode%s%s: %s (%s) %dx%d @ %d/%d fps, CBR %.2f Mbit/s, gop %d, %s",
           cfg->label ? " " : "", cfg->label ? cfg->label : "", e->name, e->codec_name, cfg->width, cfg->height, cfg->fps_num, cfg->fps_den,
           cfg->bitrate / 1e6, e->avctx->gop_size,
           e->zero_copy ? "zero-copy CUDA frames" : av_get_pix_fmt_name(e->sw_fmt));

    e->pkt = av_packet_alloc();
    e->ext = av_frame_alloc();
    if (!e->pkt || !e->ext) {
        snprintf(err, n, "out of memory");
        free_encoder(e);
        return PC_ENOMEM;
    }
    /* frames: allocated once here */
    if (e->zero_copy) {
        AVFrame *warm[RING] = {0};
        e->hwf = av_frame_alloc();
        for (int i = 0; i < RING && e->hwf; i++) {
            warm[i] = av_frame_alloc();
            r = warm[i] ? av_hwframe_get_buffer(e->hwframes, warm[i], 0) : AVERROR(ENOMEM);
            if (r < 0) {
                char eb[AV_ERROR_MAX_STRING_SIZE];
                snprintf(err, n, "av_hwframe_get_buffer (CUDA NV12 %dx%d): %s", cfg->width,
                         cfg->height, errs(r, eb, sizeof eb));
                for (int j = 0; j <= i; j++)
                    av_frame_free(&warm[j]);
                free_encoder(e);
                return PC_EDEVICE;
            }
        }
        for (int i = 0; i < RING; i++)
            av_frame_free(&warm[i]);
        if (!e->hwf) {
            snprintf(err, n, "out of memory");
            free_encoder(e);
            return PC_ENOMEM;
        }
    } else {
        for (int i = 0; i < RING; i++) {
            e->ring[i] = av_frame_alloc();
            if (!e->ring[i]) {
                snprintf(err, n, "out of memory");
                free_encoder(e);
                return PC_ENOMEM;
            }
            e->ring[i]->format = e->sw_fmt;
            e->ring[i]->width = cfg->width;
            e->ring[i]->height = cfg->height;
            r = av_frame_get_buffer(e->ring[i], 64);
            if (r < 0) {
                snprintf(err, n, "out of memory for %dx%d host frames", cfg->width, cfg->height);
                free_encoder(e);
                return PC_ENOMEM;
            }
        }
    }

    AVCodecParameters *par = avcodec_parameters_alloc();
    if (!par || avcodec_parameters_from_context(par, e->avctx) < 0) {
        avcodec_parameters_free(&par);
        snprintf(err, n, "out of memory");
        free_encoder(e);
        return PC_ENOMEM;
    }
    pc_out_env env = {
        .par = par,
        .enc_tb = ENC_TB,
        .fps = (AVRational){cfg->fps_num, cfg->fps_den},
        .encoder_name = e->name,
        .log = e->log,
        .request_idr = request_idr_hook,
        .enc = e,
        .on_written = cfg->on_written,
        .on_fault = cfg->on_output_fault,
        .cb_user = cfg->cb_user,
    };
    if (cfg->mux) {
        r = pc_mux_attach(cfg->mux, cfg->mux_stream, &env, err, n);
        if (r) {
            avcodec_parameters_free(&par);
            free_encoder(e);
            return r;
        }
        e->mux = cfg->mux;
        e->mux_stream = cfg->mux_stream;
    }
    for (int i = 0; i < cfg->n_outputs && !cfg->mux; i++) {
        r = pc_out_open(&e->outs[i], i, &cfg->outputs[i], &env, err, n);
        if (r) {
            avcodec_parameters_free(&par);
            free_encoder(e);
            return r;
        }
        e->n_outs = i + 1;
    }
    avcodec_parameters_free(&par);
    e->st.bitrate = cfg->bitrate;
    e->st.n_outputs = cfg->mux ? 0 : cfg->n_outputs;
    *out = e;
    return 0;
}

int pc_encoder_frame(pc_encoder *e, pc_picture *pic, int *on_device, char *err, size_t n)
{
    char tmp[8];
    if (!err || !n) {
        err = tmp;
        n = sizeof tmp;
    }
    if (!e || !pic) {
        snprintf(err, n, "pc_encoder_frame: NULL argument");
        return PC_EINVAL;
    }
    if (e->flushed) {
        snprintf(err, n, "pc_encoder_frame: the encoder was flushed");
        return PC_EINVAL;
    }
    memset(pic, 0, sizeof *pic);
    pic->width = e->cfg.width;
    pic->height = e->cfg.height;
    pic->matrix = e->cfg.matrix;
    pic->range = e->cfg.range;
    AVFrame *f;
    if (e->zero_copy) {
        av_frame_unref(e->hwf);
        int r = av_hwframe_get_buffer(e->hwframes, e->hwf, 0);
        if (r < 0) {
            char eb[AV_ERROR_MAX_STRING_SIZE];
            snprintf(err, n, "av_hwframe_get_buffer (CUDA pool): %s", errs(r, eb, sizeof eb));
            return PC_EDEVICE;
        }
        f = e->hwf;
        pic->fmt = PC_FMT_NV12;
        if (on_device)
            *on_device = 1;
    } else {
        /* the next ring frame the encoder no longer references */
        f = NULL;
        for (int k = 0; k < RING && !f; k++) {
            AVFrame *c = e->ring[(e->ring_next + k) % RING];
            if (av_frame_is_writable(c)) {
                f = c;
                e->ring_next = (e->ring_next + k + 1) % RING;
            }
        }
        if (!f) { /* all held: copy-on-write one (allocates; not expected) */
            f = e->ring[e->ring_next];
            e->ring_next = (e->ring_next + 1) % RING;
            int r = av_frame_make_writable(f);
            if (r < 0) {
                snprintf(err, n, "pc_encoder_frame: out of memory for a host frame");
                return PC_ENOMEM;
            }
            pc_log(e->log, PC_LOG_DEBUG, "encode: all %d host frames held by %s; allocated one",
                   RING, e->name);
        }
        pic->fmt = e->sw_fmt == AV_PIX_FMT_NV12 ? PC_FMT_NV12 : PC_FMT_I420;
        if (on_device)
            *on_device = 0;
    }
    int planes = pic->fmt == PC_FMT_I420 ? 3 : 2;
    for (int i = 0; i < planes; i++) {
        pic->plane[i] = f->data[i];
        pic->pitch[i] = (size_t)f->linesize[i];
    }
    e->cur = f;
    return 0;
}

/* Sends the packets the encoder has ready to the callback and outputs. */
static int drain(pc_encoder *e, char *err, size_t n)
{
    int r;
    while ((r = avcodec_receive_packet(e->avctx, e->pkt)) == 0) {
        int64_t now = pc_now_ns();
        AVPacket *p = e->pkt;
        int64_t pts_ns = e->first_ns + av_rescale_q(p->pts, ENC_TB, (AVRational){1, 1000000000});
        int64_t submit_ns = now;
        while (e->fifo_count) {
            int h = e->fifo_head;
            if (e->fifo[h].pts > p->pts)
                break; /* not ours (should not happen without reordering) */
            e->fifo_head = (h + 1) % PTS_FIFO;
            e->fifo_count--;
            if (e->fifo[h].pts == p->pts) {
                pts_ns = e->fifo[h].pts_ns;
                submit_ns = e->fifo[h].submit_ns;
                break;
            }
        }
        int key = !!(p->flags & AV_PKT_FLAG_KEY);
        pthread_mutex_lock(&e->st_lock);
        e->st.packets_out++;
        e->st.bytes_out += (uint64_t)p->size;
        e->st.keyframes += (uint64_t)key;
        e->st.last_pts_ns = pts_ns;
        e->st.last_out_ns = now;
        e->st.last_latency_ns = now - submit_ns;
        pthread_mutex_unlock(&e->st_lock);
        if (e->cfg.on_packet) {
            pc_packet_info info = {pts_ns, submit_ns, now, p->size, key};
            e->cfg.on_packet(e->cfg.cb_user, &info);
        }
        for (int i = 0; i < e->n_outs; i++)
            pc_out_push(e->outs[i], p, pts_ns);
        if (e->mux)
            pc_mux_push(e->mux, e->mux_stream, p, pts_ns);
        av_packet_unref(p);
    }
    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF)
        return 0;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    snprintf(err, n, "avcodec_receive_packet (%s): %s", e->name, errs(r, eb, sizeof eb));
    return PC_EIO;
}

int pc_encoder_submit(pc_encoder *e, int64_t pts_ns, int force_idr, char *err, size_t n)
{
    char tmp[8];
    if (!err || !n) {
        err = tmp;
        n = sizeof tmp;
    }
    if (!e || !e->cur) {
        snprintf(err, n, "pc_encoder_submit: no frame (call pc_encoder_frame first)");
        return PC_EINVAL;
    }
    pc_avlog_bind(e->log);
    int64_t nb = atomic_exchange(&e->pending_bitrate, 0);
    if (nb > 0) {
        e->avctx->bit_rate = nb;
        e->avctx->rc_max_rate = nb;
        e->avctx->rc_min_rate = nb;
        int vbv_ms = e->cfg.vbv_ms > 0 ? e->cfg.vbv_ms : 500;
        e->avctx->rc_buffer_size = (int)(nb * vbv_ms / 1000 > INT_MAX ? INT_MAX : nb * vbv_ms / 1000);
        pthread_mutex_lock(&e->st_lock);
        e->st.bitrate = nb;
        pthread_mutex_unlock(&e->st_lock);
        pc_log(e->log, PC_LOG_INFO, "encode: %s bitrate now %.2f Mbit/s", e->name, nb / 1e6);
    }
    if (!e->have_first) {
        e->have_first = 1;
        e->first_ns = pts_ns;
        e->last_pts = -1;
    }
    int64_t pts = av_rescale_q_rnd(pts_ns - e->first_ns, (AVRational){1, 1000000000}, ENC_TB,
                                   AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
    int bumped = 0;
    if (pts <= e->last_pts) {
        pts = e->last_pts + 1;
        bumped = 1;
    }
    e->last_pts = pts;
    AVFrame *f = e->cur;
    f->pts = pts;
    int idr = force_idr || atomic_exchange(&e->idr_req, 0);
    f->pict_type = idr ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
    f->color_range = e->avctx->color_range;
    f->colorspace = e->avctx->colorspace;
    f->color_primaries = e->avctx->color_primaries;
    f->color_trc = e->avctx->color_trc;
    f->chroma_location = e->avctx->chroma_sample_location;
    int64_t now = pc_now_ns();
    if (e->fifo_count == PTS_FIFO) { /* more in flight than any encoder keeps: drop the oldest */
        e->fifo_head = (e->fifo_head + 1) % PTS_FIFO;
        e->fifo_count--;
    }
    int slot = (e->fifo_head + e->fifo_count) % PTS_FIFO;
    e->fifo[slot].pts = pts;
    e->fifo[slot].pts_ns = pts_ns;
    e->fifo[slot].submit_ns = now;
    e->fifo_count++;

    int r = avcodec_send_frame(e->avctx, f);
    if (f == e->hwf || f == e->ext)
        av_frame_unref(f); /* the encoder holds its own reference */
    e->cur = NULL;
    pthread_mutex_lock(&e->st_lock);
    e->st.frames_in++;
    e->st.pts_bumped += (uint64_t)bumped;
    pthread_mutex_unlock(&e->st_lock);
    if (r < 0) {
        char eb[AV_ERROR_MAX_STRING_SIZE];
        snprintf(err, n, "avcodec_send_frame (%s, pts %lld): %s", e->name, (long long)pts,
                 errs(r, eb, sizeof eb));
        return PC_EIO;
    }
    return drain(e, err, n);
}

typedef struct ext_release {
    void (*fn)(void *);
    void *opaque;
} ext_release;

static void ext_free(void *opaque, uint8_t *data)
{
    (void)data;
    ext_release *r = opaque;
    if (r) {
        r->fn(r->opaque);
        free(r);
    }
}

static void ext_keep(void *opaque, uint8_t *data)
{
    (void)opaque;
    (void)data;
}

int pc_encoder_submit_picture(pc_encoder *e, const pc_picture *pic, void (*release)(void *),
                              void *opaque, int64_t pts_ns, int force_idr, char *err, size_t n)
{
    char tmp[8];
    if (!err || !n) {
        err = tmp;
        n = sizeof tmp;
    }
    ext_release *rel = release ? malloc(sizeof *rel) : NULL;
    if (release && !rel) {
        release(opaque);
        snprintf(err, n, "pc_encoder_submit_picture: out of memory");
        return PC_ENOMEM;
    }
    if (rel)
        *rel = (ext_release){release, opaque};
    const char *bad = !e || !pic ? "NULL argument"
                    : e->flushed ? "the encoder was flushed"
                    : e->zero_copy ? "the encoder takes CUDA frames (use pc_encoder_frame)"
                    : pic->width != e->cfg.width || pic->height != e->cfg.height ? "picture size differs"
                    : (pic->fmt == PC_FMT_NV12) != (e->sw_fmt == AV_PIX_FMT_NV12) ||
                              (pic->fmt != PC_FMT_NV12 && pic->fmt != PC_FMT_I420)
                          ? "picture format differs" : NULL;
    if (bad) {
        if (e && pic)
            snprintf(err, n, "pc_encoder_submit_picture: %s (%s %dx%d given, %s %dx%d expected)", bad,
                     pc_pixfmt_name(pic->fmt), pic->width, pic->height, av_get_pix_fmt_name(e->sw_fmt),
                     e->cfg.width, e->cfg.height);
        else
            snprintf(err, n, "pc_encoder_submit_picture: %s", bad);
        ext_free(rel, NULL);
        return PC_EINVAL;
    }
    AVFrame *f = e->ext;
    av_frame_unref(f);
    f->format = e->sw_fmt;
    f->width = pic->width;
    f->height = pic->height;
    int planes = pic->fmt == PC_FMT_I420 ? 3 : 2;
    for (int i = 0; i < planes; i++) {
        size_t rows = i ? (size_t)(pic->height + 1) / 2 : (size_t)pic->height;
        /* the first plane's buffer carries the release; the others only
         * describe their memory */
        f->buf[i] = av_buffer_create(pic->plane[i], pic->pitch[i] * rows, i ? ext_keep : ext_free,
                                     i ? NULL : rel, 0);
        if (!f->buf[i]) {
            if (!i)
                ext_free(rel, NULL);
            av_frame_unref(f);
            snprintf(err, n, "pc_encoder_submit_picture: out of memory");
            return PC_ENOMEM;
        }
        f->data[i] = pic->plane[i];
        f->linesize[i] = (int)pic->pitch[i];
    }
    e->cur = f;
    return pc_encoder_submit(e, pts_ns, force_idr, err, n);
}

int pc_encoder_flush(pc_encoder *e, char *err, size_t n)
{
    char tmp[8];
    if (!err || !n) {
        err = tmp;
        n = sizeof tmp;
    }
    if (!e) {
        snprintf(err, n, "pc_encoder_flush: NULL encoder");
        return PC_EINVAL;
    }
    if (e->flushed)
        return 0;
    pc_avlog_bind(e->log);
    e->flushed = 1;
    e->cur = NULL;
    int r = avcodec_send_frame(e->avctx, NULL);
    if (r < 0 && r != AVERROR_EOF) {
        char eb[AV_ERROR_MAX_STRING_SIZE];
        snprintf(err, n, "avcodec_send_frame (%s, flush): %s", e->name, errs(r, eb, sizeof eb));
        return PC_EIO;
    }
    return drain(e, err, n);
}

void pc_encoder_close(pc_encoder *e)
{
    if (!e)
        return;
    char err[256];
    if (!e->flushed && pc_encoder_flush(e, err, sizeof err))
        pc_log(e->log, PC_LOG_WARNING, "encode: flush on close: %s", err);
    free_encoder(e);
}

void pc_encoder_request_idr(pc_encoder *e)
{
    if (e)
        atomic_store(&e->idr_req, 1);
}

int pc_encoder_set_bitrate(pc_encoder *e, int64_t bitrate, char *err, size_t n)
{
    char tmp[8];
    if (!err || !n) {
        err = tmp;
        n = sizeof tmp;
    }
    if (!e) {
        snprintf(err, n, "pc_encoder_set_bitrate: NULL encoder");
        return PC_EINVAL;
    }
    if (bitrate < MIN_BITRATE || bitrate > MAX_BITRATE) {
        snprintf(err, n, "bitrate %lld bit/s: must be between %lld and %lld", (long long)bitrate,
                 MIN_BITRATE, MAX_BITRATE);
        return PC_EINVAL;
    }
    if (!e->live_bitrate) {
        snprintf(err, n, "bitrate: %s cannot change its bitrate while running; needs a restart",
                 e->name);
        return PC_ENOTSUP;
    }
    atomic_store(&e->pending_bitrate, bitrate);
    return 0;
}

const char *pc_encoder_name(const pc_encoder *e) { return e ? e->name : ""; }
const char *pc_encoder_codec(const pc_encoder *e) { return e ? e->codec_name : ""; }
int pc_encoder_zero_copy(const pc_encoder *e) { return e ? e->zero_copy : 0; }

void pc_encoder_stats_get(pc_encoder *e, pc_encoder_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!e)
        return;
    pthread_mutex_lock(&e->st_lock);
    *st = e->st;
    pthread_mutex_unlock(&e->st_lock);
    st->n_outputs = e->n_outs;
    for (int i = 0; i < e->n_outs; i++)
        pc_out_stats(e->outs[i], &st->outputs[i]);
    if (e->mux)
        st->n_outputs = pc_mux_stats(e->mux, st->outputs);
}

int pc_encoder_check_name(const char *what, const char *name, const char *preset, char *err, size_t n)
{
    if (!name || !name[0] || strcmp(name, "auto") == 0)
        return 0;
    const AVCodec *c = avcodec_find_encoder_by_name(name);
    if (!c || c->type != AVMEDIA_TYPE_VIDEO) {
        /* Names only: a check opens nothing (opening libsvtav1 prints its
         * 20-line banner on stderr, into --check-config's answer). */
        char list[512] = "";
        size_t off = 0;
        for (size_t i = 0; i < sizeof known_encoders / sizeof *known_encoders && off + 1 < sizeof list; i++)
            if (avcodec_find_encoder_by_name(known_encoders[i]))
                off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", off ? ", " : "", known_encoders[i]);
        snprintf(err, n, "%s \"%s\" is not a video encoder of this FFmpeg build (known to panocap and built "
                 "in: %s; or \"auto\": NVENC, else the first of them that opens)", what, name, list);
        return PC_EINVAL;
    }
    if (!preset || !preset[0])
        return 0;
    static const char *const x26x[] = {"ultrafast", "superfast", "veryfast", "faster", "fast",
                                       "medium", "slow", "slower", "veryslow", "placebo"};
    if (!strcmp(name, "libx264") || !strcmp(name, "libx265")) {
        for (size_t i = 0; i < sizeof x26x / sizeof *x26x; i++)
            if (!strcmp(preset, x26x[i]))
                return 0;
        snprintf(err, n, "preset \"%s\" is not one of %s's: ultrafast, superfast, veryfast, faster, fast, "
                 "medium, slow, slower, veryslow, placebo", preset, name);
        return PC_EINVAL;
    }
    const AVOption *o = c->priv_class ? av_opt_find((void *)&c->priv_class, "preset", NULL, 0,
                                                    AV_OPT_SEARCH_FAKE_OBJ) : NULL;
    if (!o)
        return 0; /* no preset option: the encoder says at open */
    if (o->type == AV_OPT_TYPE_INT || o->type == AV_OPT_TYPE_INT64) {
        if (o->unit && av_opt_find((void *)&c->priv_class, preset, o->unit, 0, AV_OPT_SEARCH_FAKE_OBJ))
            return 0;
        char *end;
        double v = strtod(preset, &end);
        if (end != preset && !*end && v >= o->min && v <= o->max)
            return 0;
        char names[512] = "";
        size_t off = 0;
        for (const AVOption *k = c->priv_class->option; o->unit && k && k->name && off + 1 < sizeof names; k++)
            if (k->type == AV_OPT_TYPE_CONST && k->unit && !strcmp(k->unit, o->unit))
                off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", off ? ", " : "", k->name);
        snprintf(err, n, "preset \"%s\" is not a preset of %s (%s%s%g..%g)", preset, name, names,
                 names[0] ? "; or " : "", o->min, o->max);
        return PC_EINVAL;
    }
    return 0;
}
