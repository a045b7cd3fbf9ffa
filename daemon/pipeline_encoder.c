/* pipeline_encoder.c - the encoder threads, one per band of every encoded
 * picture (one band = a whole picture: the panorama, a virtual camera)
 * and one for the preview: each hands its band of a ready picture slot to
 * its encoder by reference (host pictures: a pointer offset into the
 * slot's picture, no copy; the slot is freed when the last thread lets go
 * of it) or downloads it into the encoder's CUDA frame (NVENC zero copy,
 * through the backend); the per-frame times ring that the threads and the
 * output callbacks complete. A thread whose encoder fails stops the
 * pipeline when its picture is required (the main one), else it stops
 * encoding, says so once and the other pictures go on. Thread t's
 * encoder, error buffer and figures belong to thread t (pipeline_int.h);
 * the encoders' set-up is pipeline_pictures.c's. */
#include "pipeline_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* ------------------------------------------------------- per-frame times
 *
 * The counters (frames encoded, packets written per output) are counted
 * when each event happens; the ring only joins one frame set's timestamps
 * for its latencies. An entry is done once the packet of every thread
 * that was encoding when the set was queued (every band of every picture
 * but the preview: `expect`) came out, or its encoder stopped since, and,
 * for every thread, every output that was writing when the set was
 * queued has written that thread's packet or is known to have dropped it:
 * that output failed (its queue is dropped; polled per frame by the
 * thread), or it wrote a later packet of that thread (an output writes
 * its thread's packets in order). So a failing output, or a failed
 * encoder of a picture that is not required, never holds back the others'
 * figures. */

/* t_lock held */
static int times_waiting_locked(pipeline *p, const pending_times *e)
{
    for (int t = 0; t < p->nthreads; t++)
        if (e->waiting[t])
            return 1;
    return 0;
}

/* t_lock held: e's latencies to the stats; an output's write follows its
 * own picture's packet */
static void times_record_locked(pipeline *p, pending_times *e)
{
    for (int i = 0; i < p->npictures; i++)
        for (int o = 0; o < PC_MAX_OUTPUTS; o++)
            e->t.out_packet_ns[p->picture[i].out0 + o] = e->pic_packet_ns[i];
    pc_stats_frame_latency(p->stats, &e->t);
}

/* t_lock held */
static void times_try_finish_locked(pipeline *p, pending_times *e)
{
    if (e->used && !e->expect && !times_waiting_locked(p, e)) {
        times_record_locked(p, e);
        e->used = 0;
    }
}

/* t_lock held: thread t's packet of e is out (or will never come); the
 * set counts as encoded (with all its pictures' bytes) when the last
 * expected one is. */
static void times_packet_done_locked(pipeline *p, pending_times *e, int t)
{
    uint32_t bit = 1u << t;
    if (!(e->expect & bit))
        return;
    e->expect &= ~bit;
    if (!e->expect)
        pc_stats_frame_encoded(p->stats, e->t.packet_bytes);
}

/* Stage thread (pl_dispatch), before the threads get the set; the
 * threads in skip do not get it. */
void pl_times_put(pipeline *p, const job *j, uint32_t skip)
{
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = &p->times[j->index % TIMES_RING];
    if (e->used) /* its packets never all came out: account what we have */
        times_record_locked(p, e);
    memset(e, 0, sizeof *e);
    e->used = 1;
    e->pts_ns = j->pts_ns;
    e->expect = p->encoding & ~skip;
    for (int t = 0; t < p->nthreads; t++)
        e->waiting[t] = (e->expect >> t) & 1u ? p->outputs_live[t] : 0;
    e->t.complete_ns = j->complete_ns;
    e->t.start_ns = j->start_ns;
    e->t.nv12_ns = j->nv12_ns;
    times_try_finish_locked(p, e); /* nothing encodes: done now */
    pthread_mutex_unlock(&p->t_lock);
}

static pending_times *times_find_locked(pipeline *p, int64_t pts)
{
    for (int i = 0; i < TIMES_RING; i++)
        if (p->times[i].used && p->times[i].pts_ns == pts)
            return &p->times[i];
    return NULL;
}

/* Set-up, or b's thread: from now on the sets wait for b's packets (on),
 * or no set waits for them any more (off: its encoder stopped). */
void pl_band_encoding(pipeline *p, pl_band *b, int on)
{
    if (b->preview)
        return;
    uint32_t bit = 1u << b->index;
    pthread_mutex_lock(&p->t_lock);
    if (on) {
        p->encoding |= bit;
    } else {
        p->encoding &= ~bit;
        p->outputs_live[b->index] = 0;
        for (int i = 0; i < TIMES_RING; i++) {
            pending_times *e = &p->times[i];
            if (!e->used)
                continue;
            times_packet_done_locked(p, e, b->index);
            e->waiting[b->index] = 0;
            times_try_finish_locked(p, e);
        }
    }
    pthread_mutex_unlock(&p->t_lock);
}

/* Thread t, per frame: which of its outputs are writing now. A frame
 * waits only for those; one that stopped writing since drops what it
 * had. */
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

/* Thread t: its packet of a set came out. */
static void on_packet(void *user, const pc_packet_info *info)
{
    pl_band *b = user;
    pipeline *p = b->p;
    int t = b->index;
    b->lat_ms[b->nlat++ % BAND_LAT_RING] = (float)((info->out_ns - info->submit_ns) / 1e6);
    pc_stats_picture_packet(p->stats, b->pic->index, b->band == 0, (size_t)info->size);
    pc_stats_picture_encode_ms(p->stats, b->pic->index, (double)(info->out_ns - info->submit_ns) / 1e6);
    pthread_mutex_lock(&p->t_lock);
    uint64_t seq = ++p->packets_seq[t];
    pending_times *e = times_find_locked(p, info->pts_ns);
    if (e && (e->expect & (1u << t))) {
        if (info->out_ns > e->t.packet_ns)
            e->t.packet_ns = info->out_ns;
        if (info->out_ns > e->pic_packet_ns[b->pic->index])
            e->pic_packet_ns[b->pic->index] = info->out_ns;
        e->t.packet_bytes += (size_t)info->size;
        e->seq[t] = seq;
        times_packet_done_locked(p, e, t);
        times_try_finish_locked(p, e);
    } else if (!e && t == 0) /* its entry is gone (ring overrun): still encoded */
        pc_stats_frame_encoded(p->stats, (size_t)info->size);
    pthread_mutex_unlock(&p->t_lock);
}

/* The preview's packets: its own figures only (the frame set's times are
 * the pictures' bands'). */
static void on_preview_packet(void *user, const pc_packet_info *info)
{
    pl_band *b = user;
    b->lat_ms[b->nlat++ % BAND_LAT_RING] = (float)((info->out_ns - info->submit_ns) / 1e6);
}

/* an output's thread: it dropped packets or failed (counted as they happen) */
static void on_output_fault(void *user, int output, int dropped, int errors)
{
    pl_band *b = user;
    pipeline *p = b->p;
    if (output < 0 || output >= PC_MAX_OUTPUTS)
        return;
    pc_stats_output_dropped(p->stats, b->pic->out0 + output, dropped);
    if (b->band == 0 && (b->pic->rec_outputs >> output) & 1u) /* a recording's packets: sets lost from it */
        pc_stats_picture_sets(p->stats, b->pic->index, dropped, 0);
    for (int i = 0; i < errors; i++)
        pc_stats_output_error(p->stats, b->pic->out0 + output);
}

/* An output's thread (the band's thread for 'null'): output `output` of
 * thread t's picture wrote t's packet. The set's written time on that
 * output is the latest of its bands'; the output's written count goes by
 * the picture's band 0's packets (one per frame set). */
static void on_written(void *user, int output, int64_t pts_ns, int64_t written_ns)
{
    pl_band *b = user;
    pipeline *p = b->p;
    if (output < 0 || output >= PC_MAX_OUTPUTS)
        return;
    int slot = b->pic->out0 + output; /* the stats' output slot */
    if (b->band == 0)
        pc_stats_output_written(p->stats, slot);
    unsigned bit = 1u << output;
    int k = b->index;
    pthread_mutex_lock(&p->t_lock);
    pending_times *e = times_find_locked(p, pts_ns);
    if (e && (e->waiting[k] & bit)) {
        if (written_ns > e->t.written_ns[slot])
            e->t.written_ns[slot] = written_ns;
        e->waiting[k] &= ~bit;
        /* what this output has not written of this thread before this packet, it dropped */
        for (int i = 0; e->seq[k] && i < TIMES_RING; i++) {
            pending_times *o = &p->times[i];
            if (o != e && o->used && o->seq[k] && o->seq[k] < e->seq[k] && (o->waiting[k] & bit)) {
                o->waiting[k] &= ~bit;
                times_try_finish_locked(p, o);
            }
        }
        times_try_finish_locked(p, e);
    } else if (e && written_ns > e->t.written_ns[slot])
        e->t.written_ns[slot] = written_ns;
    pthread_mutex_unlock(&p->t_lock);
}

void pl_encoder_callbacks(pl_band *b, pc_encode_config *ec)
{
    ec->on_packet = b->preview ? on_preview_packet : on_packet;
    ec->on_written = b->preview ? NULL : on_written;
    ec->on_output_fault = b->preview ? NULL : on_output_fault;
    ec->cb_user = b;
}

/* Teardown, after the threads: what is left goes to the latencies as it is. */
void pl_times_flush(pipeline *p)
{
    pthread_mutex_lock(&p->t_lock);
    for (int i = 0; i < TIMES_RING; i++)
        if (p->times[i].used) {
            times_record_locked(p, &p->times[i]);
            p->times[i].used = 0;
        }
    pthread_mutex_unlock(&p->t_lock);
}

/* Rows [row0, row0+rows) of picture q (NV12 or I420; row0 and rows even):
 * the same memory, plane pointers moved. */
pc_picture pl_band_picture(const pc_picture *q, int row0, int rows)
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

/* Stage thread: set j (or the end of stream, slot -1) to every thread,
 * but those that skip it (pipeline_record_queue.c: live pictures whose
 * encoder is busy, a recorded picture whose queue is full); a thread of
 * a recorded picture that is behind gets a copy from its queue and does
 * not hold the slot. */
void pl_dispatch(pipeline *p, job j)
{
    job jobs[PL_MAX_ENCODERS];
    uint32_t skip = 0;
    j.qbuf = 0;
    for (int t = 0; t < p->nthreads; t++)
        jobs[t] = j;
    if (j.slot >= 0) {
        skip = pl_recq_plan(p, jobs);
        int refs = 0;
        for (int t = 0; t < p->nthreads; t++)
            refs += !((skip >> t) & 1u) && !jobs[t].qbuf;
        atomic_store(&p->slot_refs[j.slot], refs);
        if (p->have_encoder)
            pl_times_put(p, &j, skip);
        if (!refs) /* every thread skipped it or has its copy */
            pl_put(p, &p->free_slots, (job){.slot = j.slot});
        if (skip & 1u) { /* thread 0 counts the sets done */
            atomic_fetch_add(&p->frames_done, 1);
            atomic_store(&p->last_frame_ns, pc_now_ns());
        }
    }
    for (int t = 0; t < p->nthreads; t++) {
        if ((skip >> t) & 1u)
            continue;
        if (j.slot >= 0)
            atomic_fetch_add(&p->band[t].inflight, 1);
        pl_put(p, &p->band[t].ready, jobs[t]);
    }
}

/* Band b lets go of job j's picture: its queue's buffer or the slot. */
static void job_release(pipeline *p, pl_band *b, const job *j)
{
    if (j->qbuf) {
        void *tok;
        pl_recq_picture(b, j->qbuf - 1, &tok);
        pl_recq_release(tok);
    } else
        pl_slot_release(&p->slot_tok[j->slot]);
}

/* Hands band b of slot `slot`'s picture to its encoder. Host pictures go
 * by reference (the slot is released when the encoder lets go of it); an
 * NVENC CUDA frame gets a device-to-device copy of the band through the
 * backend. */
static int encode_band(pipeline *p, pl_band *b, const job *j)
{
    int slot = j->slot;
    pl_picture *pic = b->pic;
    /* IDR requests go to each band's encoder (pl_request_idr); this one
     * puts the band's keyframes out of step with the others' */
    int idr = 0;
    if (b->idr_gop > 0) {
        uint64_t n = b->since_open++;
        idr = n >= (uint64_t)b->idr_phase && (n - (uint64_t)b->idr_phase) % (uint64_t)b->idr_gop == 0;
    }
    if (j->qbuf) { /* its copy in the recording queue (a host encoder) */
        void *tok;
        const pc_picture *q = pl_recq_picture(b, j->qbuf - 1, &tok);
        return pc_encoder_submit_picture(b->enc, q, pl_recq_release, tok, j->pts_ns, idr, b->err, sizeof b->err);
    }
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    const pc_picture *host = dev ? &pic->host[slot] : &pic->slot[slot];
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
        pc_picture bp = pl_band_picture(host, b->row0, b->rows);
        return pc_encoder_submit_picture(b->enc, &bp, pl_slot_release, &p->slot_tok[slot], j->pts_ns, idr,
                                         b->err, sizeof b->err);
    }
    pc_picture f;
    int on_dev = 0, rc = pc_encoder_frame(b->enc, &f, &on_dev, b->err, sizeof b->err);
    if (!rc && f.fmt != pic->fmt) {
        snprintf(b->err, sizeof b->err, "encoder frame format %s, the picture is made in %s", pc_pixfmt_name(f.fmt),
                 pc_pixfmt_name(pic->fmt));
        rc = -1;
    }
    if (!rc) { /* device -> device (~15 MB at device bandwidth) */
        pc_picture src = pl_band_picture(&pic->slot[slot], b->row0, b->rows);
        rc = pc_backend_download(p->be, slot, &src, &f, b->err, sizeof b->err);
        if (!rc)
            rc = pc_backend_wait(p->be, slot, b->err, sizeof b->err);
    }
    pl_slot_release(&p->slot_tok[slot]);
    if (!rc)
        rc = pc_encoder_submit(b->enc, j->pts_ns, idr, b->err, sizeof b->err);
    return rc;
}

/* Thread t: takes a reopen request for it, if any. */
static void take_reopen(pipeline *p, pl_band *b)
{
    if (b->preview)
        return;
    pthread_mutex_lock(&p->reopen_lock);
    pl_picture_config *next = p->reopen[b->index];
    p->reopen[b->index] = NULL;
    pthread_mutex_unlock(&p->reopen_lock);
    if (next) {
        pl_band_reopen(p, b, next);
        free(next);
    }
}

/* "band 2 of picture vcam:main encoder libx264" */
static void band_name(const pipeline *p, const pl_band *b, char *buf, size_t n)
{
    const pl_picture *pic = b->pic;
    int o = 0;
    if (b->preview)
        o = snprintf(buf, n, "preview");
    else if (pic->nbands > 1)
        o = snprintf(buf, n, "band %d", b->band);
    if (p->npictures > 1 && o >= 0 && (size_t)o < n)
        o += snprintf(buf + o, n - (size_t)o, "%spicture %s", o ? " of " : "", pic->cfg.name);
    if (o >= 0 && (size_t)o < n)
        snprintf(buf + o, n - (size_t)o, "%sencoder %s", o ? " " : "", pc_encoder_name(b->enc));
}

/* Thread t: its encoder failed on a frame (b->err says why). A required
 * picture's failure stops the pipeline, as it always did; any other
 * picture's encoder stops (until a reload reopens it), the rest goes on. */
static void band_failed(pipeline *p, pl_band *b)
{
    char who[160], msg[800];
    band_name(p, b, who, sizeof who);
    snprintf(msg, sizeof msg, "%s: %s", who, b->err);
    if (b->pic->cfg.required || b->preview) {
        pl_fail(p, msg);
        return;
    }
    pc_log(&p->d->logger, PC_LOG_ERR, "%s; its encoding stops, the other pictures go on (a reload of its "
           "outputs opens it again)", msg);
    b->live = 0;
    atomic_fetch_sub(&b->pic->live, 1);
    pc_stats_picture_failure(p->stats, b->pic->index);
    pl_band_encoding(p, b, 0);
    pl_picture_publish(p, b->pic);
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
        if (b->delay_ms > 0 && b->live) { /* encode.debug_delay_ms: a slow encoder, for tests */
            struct timespec ts = {b->delay_ms / 1000, (long)(b->delay_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (b->live && !atomic_load(&p->failed)) {
            if (!b->preview)
                times_poll_outputs(p, b);
            if (encode_band(p, b, &j)) {
                band_failed(p, b);
                if (atomic_load(&p->failed))
                    continue; /* keep draining so the stage thread never waits forever */
            } else
                b->frames++;
        } else {
            job_release(p, b, &j);
            if (b->index == 0 && !p->have_encoder) {
                pc_frame_times t = {.complete_ns = j.complete_ns, .start_ns = j.start_ns, .nv12_ns = j.nv12_ns};
                pc_stats_frame_done(p->stats, &t);
            }
        }
        if (b->index == 0) {
            atomic_fetch_add(&p->frames_done, 1);
            atomic_store(&p->last_frame_ns, pc_now_ns());
        }
        atomic_fetch_sub(&b->inflight, 1);
    }
    if (b->enc && pc_encoder_flush(b->enc, b->err, sizeof b->err)) {
        char who[160];
        band_name(p, b, who, sizeof who);
        pc_log(&p->d->logger, PC_LOG_ERR, "%s flush: %s", who, b->err);
    }
    atomic_fetch_add(&p->enc_done, 1);
    return NULL;
}

/* Control thread: every band's encoder (the preview keeps its own GOP). */
void pl_request_idr(pipeline *p)
{
    pthread_mutex_lock(&p->enc_lock); /* a thread may be swapping its encoder */
    for (int t = 0; t < p->nthreads; t++)
        if (!p->band[t].preview)
            pc_encoder_request_idr(p->band[t].enc);
    pthread_mutex_unlock(&p->enc_lock);
}
