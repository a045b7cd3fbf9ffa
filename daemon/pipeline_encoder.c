/* pipeline_encoder.c - the encoder thread: copies a ready picture slot into
 * the encoder's frame, frees the slot and submits the frame; the encoder's
 * set-up (and its reopening when a reload changed the outputs) and the
 * per-frame times ring that the encoder and output callbacks complete. */
#include "pipeline_int.h"

#include <math.h>
#include <stdio.h>

#if PANOCAP_HAVE_FFMPEG
static int open_encoder(pipeline *p);
static void reopen_encoder(pipeline *p);
#endif

/* ------------------------------------------------------- per-frame times */

static void times_finish_locked(pipeline *p, pending_times *e)
{
    pc_stats_frame_done(p->stats, &e->t);
    e->used = 0;
}

static void times_put(pipeline *p, const job *j)
{
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = &p->times[j->index % TIMES_RING];
    if (e->used) /* never completed by every output: account what we have */
        times_finish_locked(p, e);
    memset(e, 0, sizeof *e);
    e->used = 1;
    e->pts_ns = j->pts_ns;
    e->outputs_left = p->s->output_count;
    e->t.complete_ns = j->complete_ns;
    e->t.start_ns = j->start_ns;
    e->t.nv12_ns = j->nv12_ns;
    pthread_mutex_unlock(&p->t_lock);
}

static pending_times *times_find_locked(pipeline *p, int64_t pts)
{
    for (int i = 0; i < TIMES_RING; i++)
        if (p->times[i].used && p->times[i].pts_ns == pts)
            return &p->times[i];
    return NULL;
}

#if PANOCAP_HAVE_FFMPEG
static void on_packet(void *user, const pc_packet_info *info)
{
    pipeline *p = user;
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = times_find_locked(p, info->pts_ns);
    if (e) {
        e->t.packet_ns = info->out_ns;
        e->t.packet_bytes = (size_t)info->size;
        if (e->outputs_left <= 0)
            times_finish_locked(p, e);
    }
    pthread_mutex_unlock(&p->t_lock);
}

static void on_output_fault(void *user, int output, int dropped, int errors)
{
    pipeline *p = user;
    pc_stats_output_dropped(p->stats, output, dropped);
    for (int i = 0; i < errors; i++)
        pc_stats_output_error(p->stats, output);
}

static void on_written(void *user, int output, int64_t pts_ns, int64_t written_ns)
{
    pipeline *p = user;
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = times_find_locked(p, pts_ns);
    if (e && output >= 0 && output < PC_MAX_OUTPUTS && !e->t.written_ns[output]) {
        e->t.written_ns[output] = written_ns;
        if (--e->outputs_left <= 0 && e->t.packet_ns)
            times_finish_locked(p, e);
    }
    pthread_mutex_unlock(&p->t_lock);
}
#endif

void pl_times_flush(pipeline *p)
{
    pthread_mutex_lock(&p->t_lock);
    for (int i = 0; i < TIMES_RING; i++)
        if (p->times[i].used)
            times_finish_locked(p, &p->times[i]);
    pthread_mutex_unlock(&p->t_lock);
}

/* Copies slot `slot` into the encoder frame dst (device or host memory). */
static int copy_to_encoder(pipeline *p, int slot, const pc_picture *dst)
{
#if PANOCAP_HAVE_CUDA
    if (p->use_cuda) {
        /* Device -> device (NVENC frame, ~15 MB at device bandwidth) or
         * device -> host (software encoder). */
        if (pc_gpu_download_async(p->gpu, slot, &p->pic[slot], dst, p->err, sizeof p->err))
            return -1;
        return pc_gpu_slot_wait(p->gpu, slot, p->err, sizeof p->err) ? -1 : 0;
    }
#endif
    const pc_picture *src = &p->pic[slot];
    int planes = src->fmt == PC_FMT_NV12 ? 2 : 3;
    for (int i = 0; i < planes; i++) {
        int w = (src->fmt == PC_FMT_I420 && i > 0) ? p->width / 2 : p->width;
        int h = i == 0 ? p->height : p->height / 2;
        for (int y = 0; y < h; y++)
            memcpy(dst->plane[i] + (size_t)y * dst->pitch[i], src->plane[i] + (size_t)y * src->pitch[i],
                   (size_t)w);
    }
    return 0;
}

void *pl_encoder_main(void *arg)
{
    pipeline *p = arg;
    job j;
    while (pl_take(p, &p->ready, &j, 0)) {
        if (j.slot < 0)
            break;
#if PANOCAP_HAVE_FFMPEG
        if (atomic_exchange(&p->reopen_outputs, 0))
            reopen_encoder(p);
        if (p->have_encoder && !atomic_load(&p->failed)) {
            pc_picture f;
            int on_dev = 0;
            int rc = pc_encoder_frame(p->enc, &f, &on_dev, p->err, sizeof p->err);
            if (!rc && f.fmt != p->fmt) {
                snprintf(p->err, sizeof p->err, "encoder frame format %s, pipeline makes %s",
                         pc_pixfmt_name(f.fmt), pc_pixfmt_name(p->fmt));
                rc = -1;
            }
            if (!rc)
                rc = copy_to_encoder(p, j.slot, &f);
            pl_put(p, &p->free_slots, (job){.slot = j.slot});
            if (!rc) {
                times_put(p, &j);
                rc = pc_encoder_submit(p->enc, j.pts_ns, atomic_exchange(&p->req_idr, 0), p->err,
                                       sizeof p->err);
            }
            if (rc) {
                char msg[700];
                snprintf(msg, sizeof msg, "encoder %s: %s", pc_encoder_name(p->enc), p->err);
                pl_fail(p, msg);
                continue; /* keep draining so the stage thread never waits forever */
            }
        } else
#endif
        {
            pl_put(p, &p->free_slots, (job){.slot = j.slot});
            pc_frame_times t = {.complete_ns = j.complete_ns, .start_ns = j.start_ns, .nv12_ns = j.nv12_ns};
            pc_stats_frame_done(p->stats, &t);
        }
        atomic_fetch_add(&p->frames_done, 1);
        atomic_store(&p->last_frame_ns, pc_now_ns());
    }
#if PANOCAP_HAVE_FFMPEG
    if (p->have_encoder && pc_encoder_flush(p->enc, p->err, sizeof p->err))
        pc_log(&p->d->logger, PC_LOG_ERR, "encoder flush: %s", p->err);
#endif
    atomic_store(&p->enc_done, 1);
    return NULL;
}

#if PANOCAP_HAVE_FFMPEG
static int open_encoder(pipeline *p)
{
    const pc_settings *s = p->s;
    pc_encode_config ec;
    pc_encode_config_default(&ec);
    ec.width = p->width;
    ec.height = p->height;
    /* 50 -> 50/1; 29.97 -> 29970/1000 */
    ec.fps_den = fabs(p->fps - lround(p->fps)) < 1e-9 ? 1 : 1000;
    ec.fps_num = (int)lround(p->fps * ec.fps_den);
    ec.encoder = s->encode.encoder;
    for (int i = 0; i < s->encode.fallback.count && i < PC_ENCODE_MAX_FALLBACKS; i++)
        ec.fallbacks[i] = s->encode.fallback.item[i];
    ec.codec = (pc_codec)s->encode.codec;
    ec.bitrate = s->encode.bitrate;
    ec.gop = s->encode.gop;
    ec.preset = s->encode.preset[0] ? s->encode.preset : NULL;
    ec.threads = s->encode.threads;
    ec.matrix = s->debayer.matrix;
    ec.range = s->debayer.range;
#if PANOCAP_HAVE_CUDA
    if (p->use_cuda) {
        ec.cuda_ctx = pc_gpu_cu_context(p->gpu);
        ec.cuda_stream = pc_gpu_stream(p->gpu);
    }
#endif
    ec.n_outputs = 0;
    for (int i = 0; i < s->output_count && i < PC_ENCODE_MAX_OUTPUTS; i++) {
        pc_output_config *o = &ec.outputs[ec.n_outputs++];
        o->url = s->outputs[i].url;
        o->format = s->outputs[i].format[0] ? s->outputs[i].format : NULL;
        o->segment_seconds = s->outputs[i].segment_s;
        o->options = s->outputs[i].options[0] ? s->outputs[i].options : NULL;
        o->max_bytes = s->outputs[i].max_bytes;
        o->max_age_s = s->outputs[i].max_age_s;
        o->min_free = s->outputs[i].min_free;
    }
    ec.on_packet = on_packet;
    ec.on_written = on_written;
    ec.on_output_fault = on_output_fault;
    ec.cb_user = p;
    ec.log = &p->d->logger;
    if (pc_encoder_open(&p->enc, &ec, p->err, sizeof p->err))
        return -1;
    p->have_encoder = 1;
    /* The pipeline produces what the encoder takes: NV12 for NVENC and
     * libx264, I420 for encoders without NV12 input. */
    pc_picture f;
    int on_dev;
    if (pc_encoder_frame(p->enc, &f, &on_dev, p->err, sizeof p->err))
        return -1;
    p->fmt = f.fmt;
    pc_log(&p->d->logger, PC_LOG_INFO, "encoder: %s (%s%s), %d output%s", pc_encoder_name(p->enc),
           pc_encoder_codec(p->enc), pc_encoder_zero_copy(p->enc) ? ", zero copy from CUDA" : "",
           ec.n_outputs, ec.n_outputs == 1 ? "" : "s");
    return 0;
}

/* Encoder thread, between frames: the outputs changed on reload. The new
 * encoder (with the new outputs) opens first, so a bad output keeps the old
 * one running; then the old one drains and finalises its outputs. Viewers
 * see an IDR and the stream goes on. */
static void reopen_encoder(pipeline *p)
{
    pc_encoder *old = p->enc;
    pc_pixfmt fmt = p->fmt;
    p->enc = NULL;
    if (open_encoder(p)) {
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: new outputs not opened (%s); the running outputs stay", p->err);
        p->enc = old;
        p->fmt = fmt;
        return;
    }
    if (p->fmt != fmt) { /* a different encoder came up: cannot feed it */
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: the new encoder takes %s, the pipeline makes %s; "
               "the running outputs stay", pc_pixfmt_name(p->fmt), pc_pixfmt_name(fmt));
        pc_encoder_close(p->enc);
        p->enc = old;
        p->fmt = fmt;
        return;
    }
    const char *names[PC_MAX_OUTPUTS];
    for (int i = 0; i < p->s->output_count; i++)
        names[i] = p->s->outputs[i].url;
    if (pc_encoder_flush(old, p->err, sizeof p->err))
        pc_log(&p->d->logger, PC_LOG_WARNING, "reload: draining the old encoder: %s", p->err);
    pc_encoder_close(old);
    pc_stats_set_outputs(p->stats, p->s->output_count, names);
    pc_log(&p->d->logger, PC_LOG_NOTICE, "reload: now writing to %d output%s", p->s->output_count,
           p->s->output_count == 1 ? "" : "s");
}
#endif

int pl_open_encoder_or_null(pipeline *p)
{
    int real = 0;
    for (int i = 0; i < p->s->output_count; i++)
        real += !pl_is_null_url(p->s->outputs[i].url);
    p->fmt = PC_FMT_NV12;
    if (!real) {
        pc_log(&p->d->logger, PC_LOG_INFO, "output null: demosaicing only, no encoder");
        return 0;
    }
    if (real != p->s->output_count) {
        snprintf(p->err, sizeof p->err, "output \"null\" cannot be combined with other outputs");
        return -1;
    }
#if PANOCAP_HAVE_FFMPEG
    return open_encoder(p);
#else
    snprintf(p->err, sizeof p->err,
             "this build has no FFmpeg (meson -Dffmpeg=enabled): only --output null is possible");
    return -1;
#endif
}
