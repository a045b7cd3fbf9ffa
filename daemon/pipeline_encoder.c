/* pipeline_encoder.c - the encoder threads, one per band of the layout (one
 * band = the stacked panorama): each hands its band of a ready picture slot
 * to its encoder by reference (host pictures: a pointer offset into the
 * slot, no copy; the slot is freed when the last band's encoder lets go of
 * it) or copies it into the encoder's CUDA frame (NVENC zero copy); the
 * encoders' set-up (and their reopening when a reload changed the outputs),
 * the per-frame times ring that the encoder and output callbacks complete,
 * and the per-band figures for the summary. */
#include "pipeline_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if PANOCAP_HAVE_FFMPEG
static int open_encoder(pipeline *p, pl_band *b);
static void reopen_encoder(pipeline *p, pl_band *b);
#endif

/* ------------------------------------------------------- per-frame times */

static void times_finish_locked(pipeline *p, pending_times *e)
{
    pc_stats_frame_done(p->stats, &e->t);
    e->used = 0;
}

void pl_times_put(pipeline *p, const job *j)
{
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = &p->times[j->index % TIMES_RING];
    if (e->used) /* never completed by every output: account what we have */
        times_finish_locked(p, e);
    memset(e, 0, sizeof *e);
    e->used = 1;
    e->pts_ns = j->pts_ns;
    e->outputs_left = p->s->output_count * p->nbands;
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

#if PANOCAP_HAVE_FFMPEG
/* Called on the band's thread: the last band's packet completes the set. */
static void on_packet(void *user, const pc_packet_info *info)
{
    pl_band *b = user;
    pipeline *p = b->p;
    b->lat_ms[b->nlat++ % BAND_LAT_RING] = (float)((info->out_ns - info->submit_ns) / 1e6);
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = times_find_locked(p, info->pts_ns);
    if (e) {
        if (info->out_ns > e->t.packet_ns)
            e->t.packet_ns = info->out_ns;
        e->t.packet_bytes += (size_t)info->size;
        if (--e->packets_left <= 0 && e->outputs_left <= 0)
            times_finish_locked(p, e);
    }
    pthread_mutex_unlock(&p->t_lock);
}

/* The preview's packets: its own figures only (the frame set's times are
 * the bands'). */
static void on_preview_packet(void *user, const pc_packet_info *info)
{
    pl_band *b = user;
    b->lat_ms[b->nlat++ % BAND_LAT_RING] = (float)((info->out_ns - info->submit_ns) / 1e6);
}

static void on_output_fault(void *user, int output, int dropped, int errors)
{
    pipeline *p = ((pl_band *)user)->p;
    pc_stats_output_dropped(p->stats, output, dropped);
    for (int i = 0; i < errors; i++)
        pc_stats_output_error(p->stats, output);
}

/* Output `output` of one band wrote its packet: the set is written to
 * that output when every band's is (the latest time counts). */
static void on_written(void *user, int output, int64_t pts_ns, int64_t written_ns)
{
    pipeline *p = ((pl_band *)user)->p;
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = times_find_locked(p, pts_ns);
    if (e && output >= 0 && output < PC_MAX_OUTPUTS) {
        if (written_ns > e->t.written_ns[output])
            e->t.written_ns[output] = written_ns;
        if (--e->outputs_left <= 0 && e->packets_left <= 0)
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

#if PANOCAP_HAVE_FFMPEG
/* Hands band b of slot `slot` to its encoder. Host pictures go by
 * reference (the slot is released when the encoder lets go of it); an
 * NVENC CUDA frame gets a device-to-device copy of the band. */
static int encode_band(pipeline *p, pl_band *b, const job *j)
{
    int slot = j->slot;
    int idr = 0; /* IDR requests go to each band's encoder (pl_request_idr) */
    if (b->preview && p->preview_gpu) /* scaled on the GPU: by reference */
        return pc_encoder_submit_picture(b->enc, &p->prev_pic[slot], pl_slot_release, &p->slot_tok[slot], j->pts_ns,
                                         idr, b->err, sizeof b->err);
    if (b->preview) { /* scaled on this thread into the preview encoder's own frame */
        pc_picture f;
        int on_dev = 0, rc = pc_encoder_frame(b->enc, &f, &on_dev, b->err, sizeof b->err);
        const pc_picture *src = p->use_cuda ? &p->host_pic[slot] : &p->pic[slot];
        if (!rc && (on_dev || pc_picture_downscale(&f, src, p->s->encode.preview_scale))) {
            snprintf(b->err, sizeof b->err, "preview: cannot scale %dx%d %s into the encoder's %dx%d %s frame",
                     src->width, src->height, pc_pixfmt_name(src->fmt), f.width, f.height, pc_pixfmt_name(f.fmt));
            rc = -1;
        }
        pl_slot_release(&p->slot_tok[slot]);
        return rc ? rc : pc_encoder_submit(b->enc, j->pts_ns, idr, b->err, sizeof b->err);
    }
    if (!pc_encoder_zero_copy(b->enc)) {
        const pc_picture *src = p->use_cuda ? &p->host_pic[slot] : &p->pic[slot];
        pc_picture bp = band_of(src, b->row0, b->rows);
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
#if PANOCAP_HAVE_CUDA
    if (!rc && p->use_cuda) {
        /* device -> device (~15 MB at device bandwidth) */
        pc_picture src = band_of(&p->pic[slot], b->row0, b->rows);
        rc = pc_gpu_download_async(p->gpu, slot, &src, &f, b->err, sizeof b->err);
        if (!rc)
            rc = pc_gpu_slot_wait(p->gpu, slot, b->err, sizeof b->err);
    }
#endif
    pl_slot_release(&p->slot_tok[slot]);
    if (!rc)
        rc = pc_encoder_submit(b->enc, j->pts_ns, idr, b->err, sizeof b->err);
    return rc;
}
#endif

void *pl_encoder_main(void *arg)
{
    pl_band *b = arg;
    pipeline *p = b->p;
    job j;
    while (pl_take(p, &b->ready, &j, 0)) {
        if (j.slot < 0)
            break;
#if PANOCAP_HAVE_FFMPEG
        if (atomic_fetch_and(&p->reopen_outputs, ~(1 << b->index)) & (1 << b->index)) {
            pthread_mutex_lock(&p->reopen_lock);
            reopen_encoder(p, b);
            pthread_mutex_unlock(&p->reopen_lock);
        }
        if (p->have_encoder && !atomic_load(&p->failed)) {
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
        } else
#endif
        {
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
#if PANOCAP_HAVE_FFMPEG
    if (p->have_encoder && b->enc && pc_encoder_flush(b->enc, b->err, sizeof b->err))
        pc_log(&p->d->logger, PC_LOG_ERR, "band %d encoder flush: %s", b->index, b->err);
#endif
    atomic_fetch_add(&p->enc_done, 1);
    return NULL;
}

void pl_bands_close(pipeline *p)
{
#if PANOCAP_HAVE_FFMPEG
    for (int b = 0; b < p->nthreads; b++) {
        pc_encoder_close(p->band[b].enc); /* writes trailers, ends playlists */
        p->band[b].enc = NULL;
    }
    pc_mux_close(p->mux); /* the bands' shared outputs, once every band's encoder has drained */
    p->mux = NULL;
#else
    (void)p;
#endif
}

void pl_request_idr(pipeline *p)
{
#if PANOCAP_HAVE_FFMPEG
    for (int b = 0; b < p->nbands; b++)
        pc_encoder_request_idr(p->band[b].enc);
#else
    (void)p;
#endif
}

int pl_set_bitrate(pipeline *p, int64_t bitrate, char *err, size_t n)
{
#if PANOCAP_HAVE_FFMPEG
    for (int b = 0; b < p->nbands; b++)
        if (pc_encoder_set_bitrate(p->band[b].enc, bitrate / p->nbands, err, n))
            return -1;
    return 0;
#else
    (void)p;
    (void)bitrate;
    snprintf(err, n, "no encoder");
    return -1;
#endif
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Per band: encoder, rows, frames and encode latency p50/p99/max (after
 * the band threads ended). */
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
#if PANOCAP_HAVE_FFMPEG
        const char *name = pc_encoder_name(b->enc);
#else
        const char *name = "";
#endif
        if (b->preview)
            w = snprintf(buf + off, n - off, "  preview 1/%d %4dx%-5d %-10s frames %6llu  encode p50 %6.2f  p99 %6.2f  "
                         "max %6.2f ms\n", p->s->encode.preview_scale, b->rows, b->row0, name,
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

#if PANOCAP_HAVE_FFMPEG
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

static int open_encoder(pipeline *p, pl_band *b)
{
    const pc_settings *s = p->s;
    pc_encode_config ec;
    char urls[PC_ENCODE_MAX_OUTPUTS][PC_URL_LEN + 16];
    char label[32];
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
#if PANOCAP_HAVE_CUDA
    if (p->use_cuda) {
        ec.cuda_ctx = pc_gpu_cu_context(p->gpu);
        ec.cuda_stream = pc_gpu_stream(p->gpu);
    }
#endif
    ec.n_outputs = 0;
    ec.mux = p->mux;
    ec.mux_stream = b->index;
    for (int i = 0; i < s->output_count && i < PC_ENCODE_MAX_OUTPUTS && !p->mux; i++) {
        pc_output_config *o = &ec.outputs[ec.n_outputs++];
        if (band_url(s->outputs[i].url, b->index, p->nbands, urls[i], sizeof urls[i], p->err, sizeof p->err))
            return -1;
        output_config(o, &s->outputs[i], urls[i]);
    }
    ec.on_packet = on_packet;
    ec.on_written = on_written;
    ec.on_output_fault = on_output_fault;
    ec.cb_user = b;
    ec.log = &p->d->logger;
    if (pc_encoder_open(&b->enc, &ec, p->err, sizeof p->err)) {
        if (p->nbands > 1) {
            char pre[24];
            int l = snprintf(pre, sizeof pre, "band %d: ", b->index);
            size_t keep = sizeof p->err - 1 - (size_t)l;
            memmove(p->err + l, p->err, keep);
            memcpy(p->err, pre, (size_t)l);
            p->err[sizeof p->err - 1] = '\0';
        }
        return -1;
    }
    /* The pipeline produces what the encoder takes: NV12 for NVENC and
     * libx264, I420 for encoders without NV12 input. */
    pc_picture f;
    int on_dev;
    if (pc_encoder_frame(b->enc, &f, &on_dev, p->err, sizeof p->err))
        return -1;
    if (b->index > 0 && f.fmt != p->fmt) {
        snprintf(p->err, sizeof p->err, "band %d: encoder %s takes %s, band 0's %s takes %s; give every band "
                 "the same kind of encoder (encode.encoder)", b->index, pc_encoder_name(b->enc),
                 pc_pixfmt_name(f.fmt), pc_encoder_name(p->band[0].enc), pc_pixfmt_name(p->fmt));
        return -1;
    }
    p->fmt = f.fmt;
    pc_log(&p->d->logger, PC_LOG_INFO, "encoder%s%s: %s (%s%s), %dx%d, %d output%s", label[0] && p->nbands > 1 ? " " : "",
           p->nbands > 1 ? label : "", pc_encoder_name(b->enc), pc_encoder_codec(b->enc),
           pc_encoder_zero_copy(b->enc) ? ", zero copy from CUDA" : "", ec.width, ec.height,
           p->mux ? s->output_count : ec.n_outputs, (p->mux ? s->output_count : ec.n_outputs) == 1 ? "" : "s");
    return 0;
}

/* Band b's thread, between frames: the outputs changed on reload. The new
 * encoder (with the new outputs) opens first, so a bad output keeps the old
 * one running; then the old one drains and finalises its outputs. Viewers
 * see an IDR and the stream goes on. */
static void reopen_encoder(pipeline *p, pl_band *b)
{
    pc_encoder *old = b->enc;
    pc_pixfmt fmt = p->fmt;
    b->enc = NULL;
    if (open_encoder(p, b)) {
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: new outputs not opened (%s); the running outputs stay", p->err);
        b->enc = old;
        p->fmt = fmt;
        return;
    }
    if (p->fmt != fmt || pc_encoder_zero_copy(b->enc) != pc_encoder_zero_copy(old)) {
        /* a different encoder came up: cannot feed it */
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: the new encoder takes %s%s, the pipeline makes %s%s; "
               "the running outputs stay", pc_pixfmt_name(p->fmt), pc_encoder_zero_copy(b->enc) ? " CUDA frames" : "",
               pc_pixfmt_name(fmt), pc_encoder_zero_copy(old) ? " CUDA frames" : "");
        pc_encoder_close(b->enc);
        b->enc = old;
        p->fmt = fmt;
        return;
    }
    if (pc_encoder_flush(old, b->err, sizeof b->err))
        pc_log(&p->d->logger, PC_LOG_WARNING, "reload: draining the old encoder: %s", b->err);
    pc_encoder_close(old);
    if (b->index == 0) {
        const char *names[PC_MAX_OUTPUTS];
        for (int i = 0; i < p->s->output_count; i++)
            names[i] = p->s->outputs[i].url;
        pc_stats_set_outputs(p->stats, p->s->output_count, names);
        pc_log(&p->d->logger, PC_LOG_NOTICE, "reload: now writing to %d output%s", p->s->output_count,
               p->s->output_count == 1 ? "" : "s");
    }
}

/* The preview rendition: the whole picture scaled down preview_scale
 * times (pc_picture_downscale, from the host picture) into its own
 * encoder's host frames, to its own output. */
static int open_preview(pipeline *p)
{
    const pc_settings *s = p->s;
    pl_band *b = &p->band[p->nbands];
    pc_encode_config ec;
    pc_encode_config_default(&ec);
    int k = s->encode.preview_scale;
    ec.width = (p->width / k) & ~1;
    ec.height = (p->height / k) & ~1;
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
    /* GPU: scaled there and downloaded small, when the encoder takes NV12
     * like the pipeline; else scaled here from the host picture */
    p->preview_gpu = p->use_cuda && f.fmt == PC_FMT_NV12 && p->fmt == PC_FMT_NV12;
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

/* Resolves the layout and opens one encoder per band; logs the choice, the
 * NVENC sessions in use and which band fell back to what. */
static int open_encoders(pipeline *p)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (pc_layout_resolve(&p->s->encode, p->ncam, p->width, p->slab_h, -1, cores > 0 ? (int)cores : 1, &p->plan,
                          p->err, sizeof p->err))
        return -1;
    if (p->plan.bands > PL_MAX_BANDS) {
        snprintf(p->err, sizeof p->err, "encode.bands: %d bands, at most %d", p->plan.bands, PL_MAX_BANDS);
        return -1;
    }
    p->nbands = p->plan.bands;
    p->have_encoder = 1;
    if (p->nbands > 1 && p->s->encode.band_outputs == PC_BAND_OUTPUTS_STREAMS && open_band_mux(p))
        return -1;
    pc_log(&p->d->logger, PC_LOG_INFO, "encode.layout %s: %s", pc_layout_name(p->plan.layout), p->plan.why);
    int nvenc = 0;
    char fell[512] = "";
    for (int i = 0; i < p->nbands; i++) {
        pl_band *b = &p->band[i];
        if (open_encoder(p, b))
            return -1;
        int is_nv = strstr(pc_encoder_name(b->enc), "_nvenc") != NULL;
        nvenc += is_nv;
        if (!is_nv && p->nbands > 1) {
            size_t l = strlen(fell);
            snprintf(fell + l, sizeof fell - l, "%s%d", l ? "," : "", i);
        }
    }
    if (p->s->encode.preview_scale && open_preview(p))
        return -1;
    if (p->nbands > 1)
        pc_log(&p->d->logger, PC_LOG_INFO, "encode: %d band encoders, %d NVENC session%s%s%s%s", p->nbands, nvenc,
               nvenc == 1 ? "" : "s", fell[0] ? "; bands " : "", fell,
               !fell[0] ? "" : strcmp(p->s->encode.encoder, "auto") ? " on the configured software encoder"
                                                                    : " on software encoders (each band's line above says why)");
    return 0;
}
#endif

int pl_open_encoder_or_null(pipeline *p)
{
    int real = 0;
    for (int i = 0; i < p->s->output_count; i++)
        real += !pl_is_null_url(p->s->outputs[i].url);
    p->fmt = PC_FMT_NV12;
    p->nbands = 1;
    p->nthreads = 1;
    p->plan = (pc_layout_plan){.layout = PC_LAYOUT_STACKED, .bands = 1, .width = p->width, .height = p->height};
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
    } else {
#if PANOCAP_HAVE_FFMPEG
        if (open_encoders(p))
            return -1;
#else
        snprintf(p->err, sizeof p->err,
                 "this build has no FFmpeg (meson -Dffmpeg=enabled): only --output null is possible");
        return -1;
#endif
    }
    if (p->nthreads < p->nbands)
        p->nthreads = p->nbands;
    int rows = p->height / p->nbands;
    for (int i = 0; i < p->nbands; i++) {
        p->band[i].row0 = i * rows;
        p->band[i].rows = rows;
    }
#if PANOCAP_HAVE_FFMPEG
    for (int i = 0; i < p->nbands && p->have_encoder; i++)
        p->host_ref |= !pc_encoder_zero_copy(p->band[i].enc);
#endif
    return 0;
}
