/* pipeline_encoder.c - the encoder thread: copies a ready picture slot into
 * the encoder's frame, frees the slot and submits the frame; the encoder's
 * set-up (and its reopening when a reload changed the outputs) and the
 * per-frame times ring that the encoder and output callbacks complete. */
#include "pipeline_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int open_encoder(pipeline *p, const pc_settings *s, pc_encoder **out, pc_pixfmt *fmt, char *err,
                        size_t errlen);
static void reopen_encoder(pipeline *p, const pc_settings *next);

/* ------------------------------------------------------- per-frame times
 *
 * The counters (frames encoded, packets written per output) are counted
 * when each event happens; the ring only joins one frame's timestamps for
 * its latencies. An entry is done once its packet came out and every
 * output that was writing when it was queued has written it or is known to
 * have dropped it: that output failed (its queue is dropped; polled per
 * frame), or it wrote a later packet (outputs write in packet order). So a
 * failing output never holds back the others' figures. */

/* t_lock held */
static void times_try_finish_locked(pipeline *p, pending_times *e)
{
    if (e->used && e->seq && !e->waiting) {
        pc_stats_frame_latency(p->stats, &e->t);
        e->used = 0;
    }
}

static void times_put(pipeline *p, const job *j)
{
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = &p->times[j->index % TIMES_RING];
    if (e->used) /* its packet never came out: account what we have */
        pc_stats_frame_latency(p->stats, &e->t);
    memset(e, 0, sizeof *e);
    e->used = 1;
    e->pts_ns = j->pts_ns;
    e->waiting = p->outputs_live;
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

/* Encoder thread, per frame: which outputs are writing now. A frame
 * waits only for those; one that stopped writing since drops what it had. */
static void times_poll_outputs(pipeline *p)
{
    pc_encoder_stats es;
    pc_encoder_stats_get(p->en.enc, &es);
    unsigned live = 0;
    for (int o = 0; o < es.n_outputs && o < PC_MAX_OUTPUTS; o++)
        if (es.outputs[o].state == PC_OUT_OK)
            live |= 1u << o;
    pthread_mutex_lock(&p->t_lock);
    p->outputs_live = live;
    for (int i = 0; i < TIMES_RING; i++) {
        p->times[i].waiting &= live;
        times_try_finish_locked(p, &p->times[i]);
    }
    pthread_mutex_unlock(&p->t_lock);
}

/* encoder thread */
static void on_packet(void *user, const pc_packet_info *info)
{
    pipeline *p = user;
    pc_stats_frame_encoded(p->stats, (size_t)info->size);
    pthread_mutex_lock(&p->t_lock);
    uint64_t seq = ++p->packets_seq;
    pending_times *e = times_find_locked(p, info->pts_ns);
    if (e && !e->seq) {
        e->t.packet_ns = info->out_ns;
        e->t.packet_bytes = (size_t)info->size;
        e->seq = seq;
        times_try_finish_locked(p, e);
    }
    pthread_mutex_unlock(&p->t_lock);
}

/* an output's thread: it dropped packets or failed (counted as they happen) */
static void on_output_fault(void *user, int output, int dropped, int errors)
{
    pipeline *p = user;
    pc_stats_output_dropped(p->stats, output, dropped);
    for (int i = 0; i < errors; i++)
        pc_stats_output_error(p->stats, output);
}

/* an output's thread (the encoder thread for 'null') */
static void on_written(void *user, int output, int64_t pts_ns, int64_t written_ns)
{
    pipeline *p = user;
    if (output < 0 || output >= PC_MAX_OUTPUTS)
        return;
    pc_stats_output_written(p->stats, output);
    unsigned bit = 1u << output;
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = times_find_locked(p, pts_ns);
    if (e && !e->t.written_ns[output]) {
        e->t.written_ns[output] = written_ns;
        e->waiting &= ~bit;
        /* what this output has not written before this packet, it dropped */
        for (int i = 0; e->seq && i < TIMES_RING; i++) {
            pending_times *o = &p->times[i];
            if (o != e && o->used && o->seq && o->seq < e->seq && (o->waiting & bit)) {
                o->waiting &= ~bit;
                times_try_finish_locked(p, o);
            }
        }
        times_try_finish_locked(p, e);
    }
    pthread_mutex_unlock(&p->t_lock);
}

/* Teardown, after the threads: what is left goes to the latencies as it is. */
void pl_times_flush(pipeline *p)
{
    pthread_mutex_lock(&p->t_lock);
    for (int i = 0; i < TIMES_RING; i++)
        if (p->times[i].used) {
            pc_stats_frame_latency(p->stats, &p->times[i].t);
            p->times[i].used = 0;
        }
    pthread_mutex_unlock(&p->t_lock);
}

/* Copies picture `slot` into the encoder frame dst: device to device (an
 * NVENC CUDA frame), device to host, or host to host (a software encoder). */
static int copy_to_encoder(pipeline *p, int slot, const pc_picture *dst)
{
    encoder_state *en = &p->en;
    if (pc_backend_download(p->be, slot, &p->pic[slot], dst, en->err, sizeof en->err))
        return -1;
    return pc_backend_wait(p->be, slot, en->err, sizeof en->err) ? -1 : 0;
}

void *pl_encoder_main(void *arg)
{
    pipeline *p = arg;
    encoder_state *en = &p->en;
    job j;
    while (pl_take(p, &p->ready, &j, 0)) {
        if (j.slot < 0)
            break;
        pthread_mutex_lock(&p->reopen_lock);
        pc_settings *next = p->reopen;
        p->reopen = NULL;
        pthread_mutex_unlock(&p->reopen_lock);
        if (next) {
            reopen_encoder(p, next);
            free(next);
        }
        if (p->have_encoder && !atomic_load(&p->failed)) {
            pc_picture f;
            int on_dev = 0;
            int rc = pc_encoder_frame(en->enc, &f, &on_dev, en->err, sizeof en->err);
            if (!rc && f.fmt != p->fmt) {
                snprintf(en->err, sizeof en->err, "encoder frame format %s, pipeline makes %s",
                         pc_pixfmt_name(f.fmt), pc_pixfmt_name(p->fmt));
                rc = -1;
            }
            if (!rc)
                rc = copy_to_encoder(p, j.slot, &f);
            pl_put(p, &p->free_slots, (job){.slot = j.slot});
            if (!rc) {
                times_poll_outputs(p);
                times_put(p, &j);
                rc = pc_encoder_submit(en->enc, j.pts_ns, atomic_exchange(&p->req_idr, 0), en->err,
                                       sizeof en->err);
            }
            if (rc) {
                char msg[700];
                snprintf(msg, sizeof msg, "encoder %s: %s", pc_encoder_name(en->enc), en->err);
                pl_fail(p, msg);
                continue; /* keep draining so the stage thread never waits forever */
            }
        } else {
            pl_put(p, &p->free_slots, (job){.slot = j.slot});
            pc_frame_times t = {.complete_ns = j.complete_ns, .start_ns = j.start_ns, .nv12_ns = j.nv12_ns};
            pc_stats_frame_done(p->stats, &t);
        }
        atomic_fetch_add(&p->frames_done, 1);
        atomic_store(&p->last_frame_ns, pc_now_ns());
    }
    if (p->have_encoder && pc_encoder_flush(en->enc, en->err, sizeof en->err))
        pc_log(&p->d->logger, PC_LOG_ERR, "encoder flush: %s", en->err);
    atomic_store(&p->enc_done, 1);
    return NULL;
}

/* Opens an encoder for the outputs of s into *out and says which picture
 * format it takes. Set-up (main thread) or reopen (encoder thread). */
static int open_encoder(pipeline *p, const pc_settings *s, pc_encoder **out, pc_pixfmt *fmt, char *err,
                        size_t errlen)
{
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
    pc_backend_encoder_device(p->be, &ec.cuda_ctx, &ec.cuda_stream); /* NULL: none */
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
    pc_encoder *e = NULL;
    if (pc_encoder_open(&e, &ec, err, errlen))
        return -1;
    /* The pipeline produces what the encoder takes: NV12 for NVENC and
     * libx264, I420 for encoders without NV12 input. */
    pc_picture f;
    int on_dev;
    if (pc_encoder_frame(e, &f, &on_dev, err, errlen)) {
        pc_encoder_close(e);
        return -1;
    }
    *fmt = f.fmt;
    *out = e;
    pc_log(&p->d->logger, PC_LOG_INFO, "encoder: %s (%s%s), %d output%s", pc_encoder_name(e),
           pc_encoder_codec(e), pc_encoder_zero_copy(e) ? ", zero copy from CUDA" : "",
           ec.n_outputs, ec.n_outputs == 1 ? "" : "s");
    return 0;
}

/* Encoder thread, between frames: the outputs changed on reload (next is
 * the reload's copy of the new settings). The new encoder (with the new
 * outputs) opens first, so a bad output keeps the old one running; then the
 * old one drains and finalises its outputs. Viewers see an IDR and the
 * stream goes on. */
static void reopen_encoder(pipeline *p, const pc_settings *next)
{
    encoder_state *en = &p->en;
    pc_encoder *fresh = NULL;
    pc_pixfmt fmt;
    if (open_encoder(p, next, &fresh, &fmt, en->err, sizeof en->err)) {
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: new outputs not opened (%s); the running outputs stay",
               en->err);
        return;
    }
    if (fmt != p->fmt) { /* a different encoder came up: cannot feed it */
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: the new encoder takes %s, the pipeline makes %s; "
               "the running outputs stay", pc_pixfmt_name(fmt), pc_pixfmt_name(p->fmt));
        pc_encoder_close(fresh);
        return;
    }
    pc_encoder *old = en->enc;
    pthread_mutex_lock(&p->enc_lock);
    en->enc = fresh;
    pthread_mutex_unlock(&p->enc_lock);
    if (pc_encoder_flush(old, en->err, sizeof en->err))
        pc_log(&p->d->logger, PC_LOG_WARNING, "reload: draining the old encoder: %s", en->err);
    pc_encoder_close(old);
    const char *names[PC_MAX_OUTPUTS];
    for (int i = 0; i < next->output_count; i++)
        names[i] = next->outputs[i].url;
    pc_stats_set_outputs(p->stats, next->output_count, names);
    pc_log(&p->d->logger, PC_LOG_NOTICE, "reload: now writing to %d output%s", next->output_count,
           next->output_count == 1 ? "" : "s");
}

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
    /* without FFmpeg, encode_stub.c's pc_encoder_open says so */
    if (open_encoder(p, p->s, &p->en.enc, &p->fmt, p->err, sizeof p->err))
        return -1;
    p->have_encoder = 1;
    return 0;
}
