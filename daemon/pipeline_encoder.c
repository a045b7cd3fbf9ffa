/* pipeline_encoder.c - the encoder threads, one per band of the layout (one
 * band = the stacked panorama) and one for the preview: each hands its band
 * of a ready picture slot to its encoder by reference (host pictures: a
 * pointer offset into the slot, no copy; the slot is freed when the last
 * band's encoder lets go of it) or downloads it into the encoder's CUDA
 * frame (NVENC zero copy, through the backend); the encoders' set-up (and
 * their reopening when a reload changed the outputs), the per-frame times
 * ring that the band threads and output callbacks complete, and the
 * per-band figures for the summary. Band b's encoder, error buffer and
 * figures belong to band b's thread (pipeline_int.h). */
#include "pipeline_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int open_encoder(pipeline *p, pl_band *b, const pc_settings *s, pc_encoder **out, pc_pixfmt *fmt,
                        char *err, size_t errlen);
/* A band's encoder (re)opened with settings s: its keyframe phase (pl_band). */
static void band_opened(pipeline *p, pl_band *b, const pc_settings *s)
{
    b->since_open = 0;
    b->idr_gop = b->preview || p->nbands < 2 ? 0 : s->encode.gop;
    b->idr_phase = b->idr_gop ? (int)((int64_t)b->index * b->idr_gop / p->nbands) : 0;
}

static void reopen_encoder(pipeline *p, pl_band *b, const pc_settings *next);

/* ------------------------------------------------------- per-frame times
 *
 * The counters (frames encoded, packets written per output) are counted
 * when each event happens; the ring only joins one frame set's timestamps
 * for its latencies. An entry is done once every band's packet came out
 * and, for every band, every output that was writing when the set was
 * queued has written that band's packet or is known to have dropped it:
 * that output failed (its queue is dropped; polled per frame by the band's
 * thread), or it wrote a later packet of that band (an output writes its
 * band's packets in order). So a failing output never holds back the
 * others' figures. The preview's packets are not part of the set's times. */

/* t_lock held */
static int times_waiting_locked(pipeline *p, const pending_times *e)
{
    for (int b = 0; b < p->nbands; b++)
        if (e->waiting[b])
            return 1;
    return 0;
}

/* t_lock held */
static void times_try_finish_locked(pipeline *p, pending_times *e)
{
    if (e->used && e->packets_left <= 0 && !times_waiting_locked(p, e)) {
        pc_stats_frame_latency(p->stats, &e->t);
        e->used = 0;
    }
}

/* Stage thread (pl_dispatch), before the bands get the set. */
void pl_times_put(pipeline *p, const job *j)
{
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = &p->times[j->index % TIMES_RING];
    if (e->used) /* its packets never all came out: account what we have */
        pc_stats_frame_latency(p->stats, &e->t);
    memset(e, 0, sizeof *e);
    e->used = 1;
    e->pts_ns = j->pts_ns;
    for (int b = 0; b < p->nbands; b++)
        e->waiting[b] = p->outputs_live[b];
    e->packets_left = p->nbands;
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

/* Band b's thread, per frame: which of its outputs are writing now. A
 * frame waits only for those; one that stopped writing since drops what
 * it had. */
static void times_poll_outputs(pipeline *p, pl_band *b)
{
    pc_encoder_stats es;
    pc_encoder_stats_get(b->enc, &es);
    unsigned live = 0;
    for (int o = 0; o < es.n_outputs && o < PC_MAX_OUTPUTS; o++)
        if (es.outputs[o].state == PC_OUT_OK)
            live |= 1u << o;
    pthread_mutex_lock(&p->t_lock);
    p->outputs_live[b->index] = live;
    for (int i = 0; i < TIMES_RING; i++) {
        p->times[i].waiting[b->index] &= live;
        times_try_finish_locked(p, &p->times[i]);
    }
    pthread_mutex_unlock(&p->t_lock);
}

/* Band b's thread: its packet of a set came out. The set counts as encoded
 * (with all its bands' bytes) when the last band's packet does. */
static void on_packet(void *user, const pc_packet_info *info)
{
    pl_band *b = user;
    pipeline *p = b->p;
    b->lat_ms[b->nlat++ % BAND_LAT_RING] = (float)((info->out_ns - info->submit_ns) / 1e6);
    pthread_mutex_lock(&p->t_lock);
    uint64_t seq = ++p->packets_seq[b->index];
    pending_times *e = times_find_locked(p, info->pts_ns);
    if (e && !e->seq[b->index]) {
        if (info->out_ns > e->t.packet_ns)
            e->t.packet_ns = info->out_ns;
        e->t.packet_bytes += (size_t)info->size;
        e->seq[b->index] = seq;
        if (--e->packets_left <= 0)
            pc_stats_frame_encoded(p->stats, e->t.packet_bytes);
        times_try_finish_locked(p, e);
    } else if (!e && b->index == 0) /* its entry is gone (ring overrun): still encoded */
        pc_stats_frame_encoded(p->stats, (size_t)info->size);
    pthread_mutex_unlock(&p->t_lock);
}

/* The preview's packets: its own figures only (the frame set's times are
 * the bands'). */
static void on_preview_packet(void *user, const pc_packet_info *info)
{
    pl_band *b = user;
    b->lat_ms[b->nlat++ % BAND_LAT_RING] = (float)((info->out_ns - info->submit_ns) / 1e6);
}

/* an output's thread: it dropped packets or failed (counted as they happen) */
static void on_output_fault(void *user, int output, int dropped, int errors)
{
    pipeline *p = ((pl_band *)user)->p;
    pc_stats_output_dropped(p->stats, output, dropped);
    for (int i = 0; i < errors; i++)
        pc_stats_output_error(p->stats, output);
}

/* An output's thread (the band's thread for 'null'): output `output` of
 * band b wrote its packet. The set's written time on that output is the
 * latest of its bands'; the output's written count goes by band 0's
 * packets (one per frame set). */
static void on_written(void *user, int output, int64_t pts_ns, int64_t written_ns)
{
    pl_band *b = user;
    pipeline *p = b->p;
    if (output < 0 || output >= PC_MAX_OUTPUTS)
        return;
    if (b->index == 0)
        pc_stats_output_written(p->stats, output);
    unsigned bit = 1u << output;
    int k = b->index;
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = times_find_locked(p, pts_ns);
    if (e && (e->waiting[k] & bit)) {
        if (written_ns > e->t.written_ns[output])
            e->t.written_ns[output] = written_ns;
        e->waiting[k] &= ~bit;
        /* what this output has not written of this band before this packet, it dropped */
        for (int i = 0; e->seq[k] && i < TIMES_RING; i++) {
            pending_times *o = &p->times[i];
            if (o != e && o->used && o->seq[k] && o->seq[k] < e->seq[k] && (o->waiting[k] & bit)) {
                o->waiting[k] &= ~bit;
                times_try_finish_locked(p, o);
            }
        }
        times_try_finish_locked(p, e);
    } else if (e && written_ns > e->t.written_ns[output])
        e->t.written_ns[output] = written_ns;
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

/* Rows [row0, row0+rows) of picture q (NV12 or I420; row0 and rows even):
 * the same memory, plane pointers moved. */
static pc_picture band_of(const pc_picture *q, int row0, int rows)
{
    pc_picture b = *q;
    b.height = rows;
    b.plane[0] = q->plane[0] + (size_t)row0 * q->pitch[0];
    for (int i = 1; i < 3; i++)
        if (q->plane[i])
            b.plane[i] = q->plane[i] + (size_t)(row0 / 2) * q->pitch[i];
    return b;
}

void pl_slot_release(void *token)
{
    pl_slot_token *t = token;
    if (atomic_fetch_sub(&t->p->slot_refs[t->slot], 1) == 1)
        pl_put(t->p, &t->p->free_slots, (job){.slot = t->slot});
}

void pl_dispatch(pipeline *p, job j)
{
    if (j.slot >= 0) {
        atomic_store(&p->slot_refs[j.slot], p->nthreads);
        if (p->have_encoder)
            pl_times_put(p, &j);
    }
    for (int b = 0; b < p->nthreads; b++)
        pl_put(p, &p->band[b].ready, j);
}

/* Hands band b of slot `slot` to its encoder. Host pictures go by
 * reference (the slot is released when the encoder lets go of it); an
 * NVENC CUDA frame gets a device-to-device copy of the band through the
 * backend. */
static int encode_band(pipeline *p, pl_band *b, const job *j)
{
    int slot = j->slot;
    /* IDR requests go to each band's encoder (pl_request_idr); this one
     * puts the band's keyframes out of step with the others' */
    int idr = 0;
    if (b->idr_gop > 0) {
        uint64_t n = b->since_open++;
        idr = n >= (uint64_t)b->idr_phase && (n - (uint64_t)b->idr_phase) % (uint64_t)b->idr_gop == 0;
    }
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    const pc_picture *host = dev ? &p->host_pic[slot] : &p->pic[slot];
    if (b->preview && p->preview_gpu) /* scaled by the backend: by reference */
        return pc_encoder_submit_picture(b->enc, &p->prev_pic[slot], pl_slot_release, &p->slot_tok[slot], j->pts_ns,
                                         idr, b->err, sizeof b->err);
    if (b->preview) { /* scaled on this thread into the preview encoder's own frame */
        pc_picture f;
        int on_dev = 0, rc = pc_encoder_frame(b->enc, &f, &on_dev, b->err, sizeof b->err);
        if (!rc && (on_dev || pc_picture_downscale(&f, host, p->preview_scale))) {
            snprintf(b->err, sizeof b->err, "preview: cannot scale %dx%d %s into the encoder's %dx%d %s frame",
                     host->width, host->height, pc_pixfmt_name(host->fmt), f.width, f.height, pc_pixfmt_name(f.fmt));
            rc = -1;
        }
        pl_slot_release(&p->slot_tok[slot]);
        return rc ? rc : pc_encoder_submit(b->enc, j->pts_ns, idr, b->err, sizeof b->err);
    }
    if (!pc_encoder_zero_copy(b->enc)) {
        pc_picture bp = band_of(host, b->row0, b->rows);
        return pc_encoder_submit_picture(b->enc, &bp, pl_slot_release, &p->slot_tok[slot], j->pts_ns, idr,
                                         b->err, sizeof b->err);
    }
    pc_picture f;
    int on_dev = 0, rc = pc_encoder_frame(b->enc, &f, &on_dev, b->err, sizeof b->err);
    if (!rc && f.fmt != p->fmt) {
        snprintf(b->err, sizeof b->err, "encoder frame format %s, pipeline makes %s", pc_pixfmt_name(f.fmt),
                 pc_pixfmt_name(p->fmt));
        rc = -1;
    }
    if (!rc) { /* device -> device (~15 MB at device bandwidth) */
        pc_picture src = band_of(&p->pic[slot], b->row0, b->rows);
        rc = pc_backend_download(p->be, slot, &src, &f, b->err, sizeof b->err);
        if (!rc)
            rc = pc_backend_wait(p->be, slot, b->err, sizeof b->err);
    }
    pl_slot_release(&p->slot_tok[slot]);
    if (!rc)
        rc = pc_encoder_submit(b->enc, j->pts_ns, idr, b->err, sizeof b->err);
    return rc;
}

/* Band b's thread: takes a reopen request for it, if any. */
static void take_reopen(pipeline *p, pl_band *b)
{
    if (b->preview)
        return;
    pthread_mutex_lock(&p->reopen_lock);
    pc_settings *next = p->reopen[b->index];
    p->reopen[b->index] = NULL;
    pthread_mutex_unlock(&p->reopen_lock);
    if (next) {
        reopen_encoder(p, b, next);
        free(next);
    }
}

void *pl_encoder_main(void *arg)
{
    pl_band *b = arg;
    pipeline *p = b->p;
    job j;
    while (pl_take(p, &b->ready, &j, 0)) {
        if (j.slot < 0)
            break;
        take_reopen(p, b);
        if (p->have_encoder && !atomic_load(&p->failed)) {
            if (!b->preview)
                times_poll_outputs(p, b);
            if (encode_band(p, b, &j)) {
                char msg[800];
                if (b->preview)
                    snprintf(msg, sizeof msg, "preview encoder %s: %s", pc_encoder_name(b->enc), b->err);
                else if (p->nbands > 1)
                    snprintf(msg, sizeof msg, "band %d encoder %s: %s", b->index, pc_encoder_name(b->enc), b->err);
                else
                    snprintf(msg, sizeof msg, "encoder %s: %s", pc_encoder_name(b->enc), b->err);
                pl_fail(p, msg);
                continue; /* keep draining so the stage thread never waits forever */
            }
            b->frames++;
        } else {
            pl_slot_release(&p->slot_tok[j.slot]);
            if (b->index == 0 && !p->have_encoder) {
                pc_frame_times t = {.complete_ns = j.complete_ns, .start_ns = j.start_ns, .nv12_ns = j.nv12_ns};
                pc_stats_frame_done(p->stats, &t);
            }
        }
        if (b->index == 0) {
            atomic_fetch_add(&p->frames_done, 1);
            atomic_store(&p->last_frame_ns, pc_now_ns());
        }
    }
    if (p->have_encoder && b->enc && pc_encoder_flush(b->enc, b->err, sizeof b->err))
        pc_log(&p->d->logger, PC_LOG_ERR, "band %d encoder flush: %s", b->index, b->err);
    atomic_fetch_add(&p->enc_done, 1);
    return NULL;
}

/* Teardown, after the band threads. */
void pl_bands_close(pipeline *p)
{
    for (int b = 0; b < p->nthreads; b++) {
        pc_encoder_close(p->band[b].enc); /* writes trailers, ends playlists */
        p->band[b].enc = NULL;
    }
    pc_mux_close(p->mux); /* the bands' shared outputs, once every band's encoder has drained */
    p->mux = NULL;
}

/* Control thread: every band's encoder (the preview keeps its own GOP). */
void pl_request_idr(pipeline *p)
{
    pthread_mutex_lock(&p->enc_lock); /* a band's thread may be swapping its encoder */
    for (int b = 0; b < p->nbands; b++)
        pc_encoder_request_idr(p->band[b].enc);
    pthread_mutex_unlock(&p->enc_lock);
}

/* Main thread (reload): encode.bitrate is the whole panorama's, shared by
 * the bands. */
int pl_set_bitrate(pipeline *p, int64_t bitrate, char *err, size_t n)
{
    int rc = 0;
    pthread_mutex_lock(&p->enc_lock);
    for (int b = 0; b < p->nbands && !rc; b++)
        rc = pc_encoder_set_bitrate(p->band[b].enc, bitrate / p->nbands, err, n);
    pthread_mutex_unlock(&p->enc_lock);
    return rc ? -1 : 0;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Per band: encoder, rows, frames and encode latency p50/p99/max (main
 * thread, after the band threads ended). */
void pl_bands_summary(pipeline *p, char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    if (!p->have_encoder)
        return;
    int w = snprintf(buf, n, "layout: %s, %d band%s of %dx%d (%s)\n", pc_layout_name(p->plan.layout), p->nbands,
                     p->nbands == 1 ? "" : "s", p->plan.width, p->plan.height, p->plan.why);
    off = w > 0 && (size_t)w < n ? (size_t)w : n - 1;
    float *tmp = malloc(sizeof(float) * BAND_LAT_RING);
    if (!tmp)
        return;
    for (int i = 0; i < p->nthreads && off + 1 < n; i++) {
        pl_band *b = &p->band[i];
        size_t k = b->nlat < BAND_LAT_RING ? (size_t)b->nlat : BAND_LAT_RING;
        memcpy(tmp, b->lat_ms, k * sizeof *tmp);
        qsort(tmp, k, sizeof *tmp, cmp_float);
        double p50 = k ? tmp[k / 2] : 0, p99 = k ? tmp[(k * 99) / 100 < k ? (k * 99) / 100 : k - 1] : 0,
               mx = k ? tmp[k - 1] : 0;
        const char *name = b->enc ? pc_encoder_name(b->enc) : "";
        if (b->preview)
            w = snprintf(buf + off, n - off, "  preview 1/%d %4dx%-5d %-10s frames %6llu  encode p50 %6.2f  p99 %6.2f  "
                         "max %6.2f ms\n", p->preview_scale, b->rows, b->row0, name,
                         (unsigned long long)b->frames, p50, p99, mx);
        else
            w = snprintf(buf + off, n - off, "  band %d  rows %5d-%-5d %-10s frames %6llu  encode p50 %6.2f  p99 %6.2f  "
                         "max %6.2f ms\n", i, b->row0, b->row0 + b->rows - 1, name, (unsigned long long)b->frames,
                         p50, p99, mx);
        if (w > 0)
            off += (size_t)w < n - off ? (size_t)w : n - off - 1;
    }
    free(tmp);
}

/* url with "%b" replaced by the band number (one output per band). */
static int band_url(const char *url, int band, int nbands, char *out, size_t n, char *err, size_t errn)
{
    const char *m = strstr(url, "%b");
    if (nbands == 1 && !m) {
        snprintf(out, n, "%s", url);
        return 0;
    }
    if (!m) {
        snprintf(err, errn, "output %s: with %d bands (encode.band_outputs \"separate\") each output URL needs "
                 "%%b, the band number, e.g. \"pano-%%b.ts\"", url, nbands);
        return -1;
    }
    snprintf(out, n, "%.*s%d%s", (int)(m - url), url, band, m + 2);
    return 0;
}

/* An output's settings as the encoder takes them, with its URL. */
static void output_config(pc_output_config *o, const pc_output_settings *so, const char *url)
{
    o->url = url;
    o->format = so->format[0] ? so->format : NULL;
    o->segment_seconds = so->segment_s;
    o->options = so->options[0] ? so->options : NULL;
    o->max_bytes = so->max_bytes;
    o->max_age_s = so->max_age_s;
    o->min_free = so->min_free;
}

/* err prefixed with "band b: " when there are several bands. */
static void band_prefix(pipeline *p, pl_band *b, char *err, size_t errlen)
{
    if (p->nbands <= 1 || errlen < 32)
        return;
    char pre[24];
    int l = snprintf(pre, sizeof pre, "band %d: ", b->index);
    size_t keep = errlen - 1 - (size_t)l;
    memmove(err + l, err, keep);
    memcpy(err, pre, (size_t)l);
    err[errlen - 1] = '\0';
}

/* Opens band b's encoder for the outputs of s into *out and says which
 * picture format it takes. Set-up (main thread) or reopen (band b's
 * thread). */
static int open_encoder(pipeline *p, pl_band *b, const pc_settings *s, pc_encoder **out, pc_pixfmt *fmt,
                        char *err, size_t errlen)
{
    pc_encode_config ec;
    char urls[PC_ENCODE_MAX_OUTPUTS][PC_URL_LEN + 16];
    char label[32] = "";
    pc_encode_config_default(&ec);
    ec.width = p->plan.width;
    ec.height = p->plan.height;
    /* 50 -> 50/1; 29.97 -> 29970/1000 */
    ec.fps_den = fabs(p->fps - lround(p->fps)) < 1e-9 ? 1 : 1000;
    ec.fps_num = (int)lround(p->fps * ec.fps_den);
    ec.encoder = s->encode.encoder;
    for (int i = 0; i < s->encode.fallback.count && i < PC_ENCODE_MAX_FALLBACKS; i++)
        ec.fallbacks[i] = s->encode.fallback.item[i];
    ec.codec = (pc_codec)s->encode.codec;
    /* encode.bitrate is the whole panorama's: shared by the bands */
    ec.bitrate = s->encode.bitrate / p->nbands;
    if (ec.bitrate < 100000)
        ec.bitrate = 100000;
    ec.gop = s->encode.gop;
    ec.preset = s->encode.preset[0] ? s->encode.preset : NULL;
    ec.threads = s->encode.threads;
    ec.encoder_options = s->encode.options[0] ? s->encode.options : NULL;
    if (!ec.threads && p->nbands > 1) { /* the cores shared by the bands' encoders */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        ec.threads = cores > p->nbands ? (int)(cores / p->nbands) : 1;
    }
    ec.matrix = s->debayer.matrix;
    ec.range = s->debayer.range;
    if (p->nbands > 1) {
        snprintf(label, sizeof label, "band %d", b->index);
        ec.label = label;
    }
    pc_backend_encoder_device(p->be, &ec.cuda_ctx, &ec.cuda_stream); /* NULL: none */
    ec.n_outputs = 0;
    ec.mux = p->mux;
    ec.mux_stream = b->index;
    for (int i = 0; i < s->output_count && i < PC_ENCODE_MAX_OUTPUTS && !p->mux; i++) {
        pc_output_config *o = &ec.outputs[ec.n_outputs++];
        if (band_url(s->outputs[i].url, b->index, p->nbands, urls[i], sizeof urls[i], err, errlen))
            return -1;
        output_config(o, &s->outputs[i], urls[i]);
    }
    ec.on_packet = on_packet;
    ec.on_written = on_written;
    ec.on_output_fault = on_output_fault;
    ec.cb_user = b;
    ec.log = &p->d->logger;
    pc_encoder *e = NULL;
    if (pc_encoder_open(&e, &ec, err, errlen)) {
        band_prefix(p, b, err, errlen);
        return -1;
    }
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
    pc_log(&p->d->logger, PC_LOG_INFO, "encoder%s%s: %s (%s%s), %dx%d, %d output%s", label[0] ? " " : "", label,
           pc_encoder_name(e), pc_encoder_codec(e), pc_encoder_zero_copy(e) ? ", zero copy from CUDA" : "",
           ec.width, ec.height, p->mux ? s->output_count : ec.n_outputs,
           (p->mux ? s->output_count : ec.n_outputs) == 1 ? "" : "s");
    return 0;
}

/* Band b's thread, between frames: the outputs changed on reload (next is
 * the reload's copy of the new settings for this band). The new encoder
 * (with the new outputs) opens first, so a bad output keeps the old one
 * running; then the old one drains and finalises its outputs. Viewers see
 * an IDR and the stream goes on. */
static void reopen_encoder(pipeline *p, pl_band *b, const pc_settings *next)
{
    pc_encoder *fresh = NULL;
    pc_pixfmt fmt;
    if (open_encoder(p, b, next, &fresh, &fmt, b->err, sizeof b->err)) {
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: new outputs not opened (%s); the running outputs stay", b->err);
        return;
    }
    pc_encoder *old = b->enc;
    if (fmt != p->fmt || pc_encoder_zero_copy(fresh) != pc_encoder_zero_copy(old)) {
        /* a different encoder came up: cannot feed it */
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: the new encoder takes %s%s, the pipeline makes %s%s; "
               "the running outputs stay", pc_pixfmt_name(fmt), pc_encoder_zero_copy(fresh) ? " CUDA frames" : "",
               pc_pixfmt_name(p->fmt), pc_encoder_zero_copy(old) ? " CUDA frames" : "");
        pc_encoder_close(fresh);
        return;
    }
    pthread_mutex_lock(&p->enc_lock);
    b->enc = fresh;
    pthread_mutex_unlock(&p->enc_lock);
    band_opened(p, b, next);
    if (pc_encoder_flush(old, b->err, sizeof b->err))
        pc_log(&p->d->logger, PC_LOG_WARNING, "reload: draining the old encoder: %s", b->err);
    pc_encoder_close(old);
    if (b->index == 0) {
        const char *names[PC_MAX_OUTPUTS];
        for (int i = 0; i < next->output_count; i++)
            names[i] = next->outputs[i].url;
        pc_stats_set_outputs(p->stats, next->output_count, names);
        pc_log(&p->d->logger, PC_LOG_NOTICE, "reload: now writing to %d output%s", next->output_count,
               next->output_count == 1 ? "" : "s");
    }
}

/* The preview rendition (set-up): the whole picture scaled down
 * preview_scale times (by the backend into pinned pictures, or on the
 * preview's thread from the host picture) into its own encoder, to its own
 * output. */
static int open_preview(pipeline *p)
{
    const pc_settings *s = p->s;
    pl_band *b = &p->band[p->nbands];
    pc_encode_config ec;
    pc_encode_config_default(&ec);
    int k = p->preview_scale;
    ec.width = (p->pic_w / k) & ~1; /* the whole picture (a grid's) scaled */
    ec.height = (p->pic_h / k) & ~1;
    ec.fps_den = fabs(p->fps - lround(p->fps)) < 1e-9 ? 1 : 1000;
    ec.fps_num = (int)lround(p->fps * ec.fps_den);
    ec.encoder = s->encode.encoder;
    for (int i = 0; i < s->encode.fallback.count && i < PC_ENCODE_MAX_FALLBACKS; i++)
        ec.fallbacks[i] = s->encode.fallback.item[i];
    ec.codec = (pc_codec)s->encode.codec;
    ec.bitrate = s->encode.preview_bitrate;
    ec.gop = s->encode.gop;
    ec.preset = s->encode.preset[0] ? s->encode.preset : NULL;
    ec.threads = 2;
    ec.matrix = s->debayer.matrix;
    ec.range = s->debayer.range;
    ec.label = "preview";
    ec.n_outputs = 1;
    ec.outputs[0].url = s->encode.preview_url;
    ec.on_packet = on_preview_packet;
    ec.cb_user = b;
    ec.log = &p->d->logger;
    if (pc_encoder_open(&b->enc, &ec, p->err, sizeof p->err)) {
        char tmp[sizeof p->err];
        memcpy(tmp, p->err, sizeof tmp);
        snprintf(p->err, sizeof p->err, "preview: %.*s", (int)sizeof p->err - 16, tmp);
        return -1;
    }
    b->preview = 1;
    b->row0 = ec.height; /* for the summary: the preview's size */
    b->rows = ec.width;
    p->nthreads = p->nbands + 1;
    pc_picture f;
    int on_dev = 0;
    if (pc_encoder_frame(b->enc, &f, &on_dev, p->err, sizeof p->err))
        return -1;
    /* Device pictures: scaled there and downloaded small, when the encoder
     * takes NV12 like the pipeline; else scaled on its thread from the host
     * picture */
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    p->preview_gpu = dev && p->bops->downscale && f.fmt == PC_FMT_NV12 && p->fmt == PC_FMT_NV12;
    if (!p->preview_gpu)
        p->host_ref = 1;
    pc_log(&p->d->logger, PC_LOG_INFO, "preview: %s %dx%d (1/%d, scaled on the %s), %.2f Mbit/s, to %s",
           pc_encoder_name(b->enc), ec.width, ec.height, k, p->preview_gpu ? "GPU" : "CPU", ec.bitrate / 1e6,
           s->encode.preview_url);
    return 0;
}

/* encode.band_outputs "streams": every configured output gets one video
 * stream per band, fed by the bands' encoders (pc_mux); it opens when the
 * last band's encoder does. */
static int open_band_mux(pipeline *p)
{
    const pc_settings *s = p->s;
    pc_output_config oc[PC_ENCODE_MAX_OUTPUTS];
    int n = 0;
    memset(oc, 0, sizeof oc);
    for (int i = 0; i < s->output_count && i < PC_ENCODE_MAX_OUTPUTS; i++) {
        if (strstr(s->outputs[i].url, "%b")) {
            snprintf(p->err, sizeof p->err, "output %s: %%b (one output per band) needs encode.band_outputs = "
                     "\"separate\"; with \"streams\" (the default) each output holds the %d bands as %d video "
                     "streams", s->outputs[i].url, p->nbands, p->nbands);
            return -1;
        }
        output_config(&oc[n++], &s->outputs[i], s->outputs[i].url);
    }
    if (pc_mux_create(&p->mux, p->nbands, oc, n, p->err, sizeof p->err))
        return -1;
    pc_log(&p->d->logger, PC_LOG_INFO, "encode: %d output%s with %d video streams each, one per band "
           "(encode.band_outputs \"streams\")", n, n == 1 ? "" : "s", p->nbands);
    return 0;
}

/* Resolves the layout and opens one encoder per band (set-up); logs the
 * choice, the NVENC sessions in use and which band fell back to what. */
static int open_encoders(pipeline *p)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* encoder auto: whether NVENC will encode decides the automatic layout */
    int nvenc = -1;
    if (strcmp(p->s->encode.encoder, "auto") == 0)
        nvenc = pc_encoder_opens(p->s->encode.codec == PC_CODEC_H264 ? "h264_nvenc" : "hevc_nvenc");
    if (p->pic_w != p->width || p->pic_h != p->height) {
        /* a step made a picture of its own (not the stacked cameras): the
         * layouts of camera slabs do not apply, it is one picture */
        if (p->s->encode.layout == PC_LAYOUT_GRID || p->s->encode.layout == PC_LAYOUT_BANDS) {
            snprintf(p->err, sizeof p->err, "encode.layout %s cuts the stacked cameras, but the stage makes one "
                     "%dx%d picture; use \"stacked\" or \"auto\"", pc_layout_name(p->s->encode.layout), p->pic_w,
                     p->pic_h);
            return -1;
        }
        snprintf(p->plan.why, sizeof p->plan.why, "one %dx%d picture, as the stage's last step makes it", p->pic_w,
                 p->pic_h);
    } else if (pc_layout_resolve(&p->s->encode, p->ncam, p->width, p->slab_h, nvenc, cores > 0 ? (int)cores : 1,
                                 &p->plan, p->err, sizeof p->err))
        return -1;
    if (p->plan.layout == PC_LAYOUT_GRID) {
        p->pic_w = p->plan.width;
        p->pic_h = p->plan.height;
    }
    if (p->plan.bands > PL_MAX_BANDS) {
        snprintf(p->err, sizeof p->err, "encode.bands: %d bands, at most %d", p->plan.bands, PL_MAX_BANDS);
        return -1;
    }
    p->nbands = p->plan.bands;
    if (p->nbands > 1 && p->s->encode.band_outputs == PC_BAND_OUTPUTS_STREAMS && open_band_mux(p))
        return -1;
    pc_log(&p->d->logger, PC_LOG_INFO, "encode.layout %s: %s", pc_layout_name(p->plan.layout), p->plan.why);
    nvenc = 0;
    char fell[512] = "";
    for (int i = 0; i < p->nbands; i++) {
        pl_band *b = &p->band[i];
        pc_pixfmt fmt;
        if (open_encoder(p, b, p->s, &b->enc, &fmt, p->err, sizeof p->err))
            return -1;
        band_opened(p, b, p->s);
        if (i == 0)
            p->fmt = fmt;
        else if (fmt != p->fmt) {
            snprintf(p->err, sizeof p->err, "band %d: encoder %s takes %s, band 0's %s takes %s; give every band "
                     "the same kind of encoder (encode.encoder)", i, pc_encoder_name(b->enc), pc_pixfmt_name(fmt),
                     pc_encoder_name(p->band[0].enc), pc_pixfmt_name(p->fmt));
            return -1;
        }
        int is_nv = strstr(pc_encoder_name(b->enc), "_nvenc") != NULL;
        nvenc += is_nv;
        if (!is_nv && p->nbands > 1) {
            size_t l = strlen(fell);
            snprintf(fell + l, sizeof fell - l, "%s%d", l ? "," : "", i);
        }
    }
    p->have_encoder = 1;
    if (p->preview_scale && open_preview(p))
        return -1;
    if (p->nbands > 1)
        pc_log(&p->d->logger, PC_LOG_INFO, "encode: %d band encoders, %d NVENC session%s%s%s%s", p->nbands, nvenc,
               nvenc == 1 ? "" : "s", fell[0] ? "; bands " : "", fell,
               !fell[0] ? "" : strcmp(p->s->encode.encoder, "auto") ? " on the configured software encoder"
                                                                    : " on software encoders (each band's line above says why)");
    return 0;
}

/* Set-up: the bands, their encoders (none for output null) and the slot
 * tokens. */
int pl_open_encoder_or_null(pipeline *p)
{
    int real = 0;
    for (int i = 0; i < p->s->output_count; i++)
        real += !pl_is_null_url(p->s->outputs[i].url);
    p->fmt = PC_FMT_NV12;
    p->nbands = 1;
    p->nthreads = 1;
    /* pic_w x pic_h: the stage's last picture (pl_stage_prepare), the
     * stacked cameras unless a step makes another */
    p->plan = (pc_layout_plan){.layout = PC_LAYOUT_STACKED, .bands = 1, .width = p->pic_w, .height = p->pic_h};
    for (int i = 0; i <= PL_MAX_BANDS; i++) {
        pl_band *b = &p->band[i];
        b->p = p;
        b->index = i;
        b->ready.cap = MAX_SLOTS + 2;
    }
    for (int i = 0; i < MAX_SLOTS; i++)
        p->slot_tok[i] = (pl_slot_token){p, i};
    if (!real) {
        pc_log(&p->d->logger, PC_LOG_INFO, "output null: demosaicing only, no encoder");
    } else if (real != p->s->output_count) {
        snprintf(p->err, sizeof p->err, "output \"null\" cannot be combined with other outputs");
        return -1;
    } else if (open_encoders(p)) /* without FFmpeg, encode_stub.c's pc_encoder_open says so */
        return -1;
    if (p->nthreads < p->nbands)
        p->nthreads = p->nbands;
    int rows = p->pic_h / p->nbands;
    for (int i = 0; i < p->nbands; i++) {
        p->band[i].row0 = i * rows;
        p->band[i].rows = rows;
    }
    for (int i = 0; i < p->nbands && p->have_encoder; i++)
        p->host_ref |= !pc_encoder_zero_copy(p->band[i].enc);
    return 0;
}
