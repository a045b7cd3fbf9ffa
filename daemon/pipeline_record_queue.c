/* pipeline_record_queue.c - recordings keep every set: each band of a
 * picture with a recording (an output that is a path: .ts, .mkv, .mp4,
 * .m3u8) is fed through a bounded queue of encode.record_queue_seconds of
 * host pictures, so that an encoder stall (libx264's p99 three times its
 * mean on a busy host) or a disk stall does not hold back the stage
 * thread, fill the capture's pool and drop whole sets from every output.
 *
 * Where it sits: before the encoder, raw pictures. A stall of the encoder
 * is what lost sets (the packets of a set that was never encoded cannot
 * be queued after it); a disk stall is absorbed after the encoder by the
 * recording's packet queue, sized to the same seconds
 * (pipeline_pictures.c's output_config).
 *
 * How, per set, on the stage thread (pl_dispatch -> pl_recq_plan):
 *   - a recorded picture's band whose thread is idle takes the slot by
 *     reference, as before (no copy: the steady state costs nothing);
 *   - one whose thread is still busy with earlier sets gets a copy of its
 *     rows in a buffer of its queue (the slot is not held: the stage goes
 *     on); buffers are allocated at first use and kept;
 *   - no free buffer in one of the picture's bands: the set is dropped
 *     from that picture (all its bands: the bands of one output stay in
 *     step), counted (panocap_picture_recording_sets_dropped_total) and
 *     said in the log, the first at once, then once per 10 s;
 *   - a picture without a recording (live outputs only) and a live
 *     preview skip a set while their thread is still busy with an earlier
 *     one and no picture slot is free (the stage would wait for them:
 *     counted, panocap_picture_live_sets_skipped_total,
 *     panocap_preview_sets_skipped_total), so that they never hold the
 *     picture slots the recordings need. A preview whose output is a
 *     recording has no queue (it is scaled from the slot on its thread)
 *     and never skips: it holds the slot as before. Without any recording queue
 *     nothing changes: a slow encoder holds the slots and the capture
 *     drops whole sets (panocap_frames_dropped_total), as before.
 * The live outputs of a recorded picture get every set too, late by the
 * queue's depth while it drains (the price of one encoder for both).
 *
 * Memory: each queue holds ceil(seconds x fps) pictures of its band's
 * size; the sum is stated at start and refused when it exceeds half the
 * host's memory. NVENC zero-copy bands (device pictures) have no queue. */
#include "pipeline_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SAY_EVERY_NS 10000000000LL /* drops and skips: the first at once, then once per 10 s */

typedef struct recq_tok {
    struct pl_recq *q;
    int buf;
} recq_tok;

typedef struct pl_recq {
    pipeline *p;
    int cap;          /* pictures it holds */
    size_t bytes;     /* one picture */
    pc_pixfmt fmt;
    int width, rows;
    int nfree;        /* q_lock */
    int *free;        /* q_lock: the free buffers */
    uint8_t **mem;    /* [cap]: the stage thread allocates at first use */
    pc_picture *pic;  /* [cap] */
    recq_tok *tok;    /* [cap] */
    job *items;       /* the band's ready queue, larger */
} pl_recq;

int pl_is_recording_url(const char *url)
{
    return url && url[0] && !strstr(url, "://") && strcmp(url, "null") != 0;
}

/* "2.5 GB" */
static void human_bytes(double b, char *buf, size_t n)
{
    if (b >= 1e9)
        snprintf(buf, n, "%.1f GB", b / 1e9);
    else
        snprintf(buf, n, "%.1f MB", b / 1e6);
}

/* Band b can be queued: a host encoder taking host pictures (the CPU
 * backend's slots or the pinned copies of the GPU's). */
static int band_queueable(const pipeline *p, const pl_band *b)
{
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    return !b->preview && b->enc && !pc_encoder_zero_copy(b->enc) && (!dev || b->pic->host_ref);
}

int pl_recq_setup(pipeline *p)
{
    double total = 0;
    char what[600] = "";
    size_t wo = 0;
    for (int t = 0; t < p->nthreads; t++)
        p->band[t].delay_ms = p->picture[0].cfg.encode.debug_delay_ms;
    for (int i = 0; i < p->npictures; i++) {
        pl_picture *pic = &p->picture[i];
        const pl_picture_config *c = &pic->cfg;
        pic->rec_outputs = 0;
        for (int o = 0; o < c->output_count && o < PC_MAX_OUTPUTS; o++)
            if (pl_is_recording_url(c->outputs[o].url))
                pic->rec_outputs |= 1u << o;
        for (int k = pic->first; k < pic->first + pic->nbands; k++)
            p->band[k].delay_ms = c->encode.debug_delay_ms;
        double secs = c->encode.record_queue_s;
        if (!pic->encoded || !pic->rec_outputs || !(secs > 0) || atomic_load(&pic->live) <= 0)
            continue;
        int cap = (int)ceil(secs * p->fps);
        if (cap < 1)
            cap = 1;
        int queued = 0;
        double pic_bytes = 0;
        for (int k = pic->first; k < pic->first + pic->nbands; k++) {
            pl_band *b = &p->band[k];
            if (!band_queueable(p, b))
                continue;
            pc_picture probe;
            size_t bytes = pc_picture_layout(&probe, pic->fmt, p->st.matrix, p->st.range, pic->plan.width, b->rows,
                                             64, NULL);
            pl_recq *q = calloc(1, sizeof *q);
            if (q) {
                q->free = calloc((size_t)cap, sizeof *q->free);
                q->mem = calloc((size_t)cap, sizeof *q->mem);
                q->pic = calloc((size_t)cap, sizeof *q->pic);
                q->tok = calloc((size_t)cap, sizeof *q->tok);
                q->items = calloc((size_t)cap + MAX_SLOTS + 2, sizeof *q->items);
            }
            if (!q || !q->free || !q->mem || !q->pic || !q->tok || !q->items || !bytes) {
                b->rq = q; /* freed by the teardown */
                snprintf(p->err, sizeof p->err, "picture %s: out of memory for its recording queue", c->name);
                return -1;
            }
            q->p = p;
            q->cap = cap;
            q->bytes = bytes;
            q->fmt = pic->fmt;
            q->width = pic->plan.width;
            q->rows = b->rows;
            for (int n = 0; n < cap; n++) {
                q->free[n] = cap - 1 - n;
                q->tok[n] = (recq_tok){q, n};
            }
            q->nfree = cap;
            b->rq = q;
            /* the band's jobs: the slots' and every queued picture's */
            b->ready.item = q->items;
            b->ready.cap = cap + MAX_SLOTS + 2;
            pic_bytes += (double)bytes * cap;
            queued++;
        }
        if (!queued)
            continue;
        pic->recorded = 1;
        p->recq_on = 1;
        total += pic_bytes;
        char hb[32];
        human_bytes(pic_bytes, hb, sizeof hb);
        int w = snprintf(what + wo, sizeof what - wo, "%s%s %.3g s = %d sets (%s)", wo ? ", " : "", c->name, secs,
                         cap, hb);
        if (w > 0)
            wo += (size_t)w < sizeof what - wo ? (size_t)w : sizeof what - wo - 1;
    }
    if (!p->recq_on)
        return 0;
    p->preview_live = !pl_is_recording_url(p->picture[0].cfg.encode.preview_url);
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    double mem = pages > 0 && psize > 0 ? (double)pages * (double)psize : 0;
    char hb[32], hm[32];
    human_bytes(total, hb, sizeof hb);
    human_bytes(mem, hm, sizeof hm);
    if (mem > 0 && total > mem / 2) {
        snprintf(p->err, sizeof p->err, "encode.record_queue_seconds: the recording queues (%s) would take up to %s "
                 "of host memory, more than half of this host's %s; set fewer seconds (or 0: none)", what, hb, hm);
        return -1;
    }
    pc_log(&p->d->logger, PC_LOG_INFO, "recording queues: %s; up to %s of host memory (of %s), allocated as "
           "used; pictures without a recording skip a set while their encoder is busy and no slot is free", what,
           hb, hm);
    return 0;
}

void pl_recq_teardown(pipeline *p)
{
    for (int t = 0; t < PL_MAX_ENCODERS; t++) {
        pl_band *b = &p->band[t];
        pl_recq *q = b->rq;
        if (!q)
            continue;
        for (int n = 0; q->mem && n < q->cap; n++)
            free(q->mem[n]);
        free(q->free);
        free(q->mem);
        free(q->pic);
        free(q->tok);
        b->ready.item = b->ready.small;
        b->ready.cap = MAX_SLOTS + 2;
        free(q->items);
        free(q);
        b->rq = NULL;
    }
}

void pl_recq_release(void *opaque)
{
    recq_tok *t = opaque;
    pipeline *p = t->q->p;
    pthread_mutex_lock(&p->q_lock);
    t->q->free[t->q->nfree++] = t->buf;
    pthread_mutex_unlock(&p->q_lock);
}

const pc_picture *pl_recq_picture(pl_band *b, int buf, void **token)
{
    *token = &b->rq->tok[buf];
    return &b->rq->pic[buf];
}

/* Stage thread: a free buffer of q (allocated at first use), or -1 with
 * why (full, or no memory). */
static int take_buffer(pipeline *p, pl_recq *q, const char **why)
{
    pthread_mutex_lock(&p->q_lock);
    int buf = q->nfree > 0 ? q->free[--q->nfree] : -1;
    pthread_mutex_unlock(&p->q_lock);
    if (buf < 0) {
        *why = "its recording queue is full: the encoder is behind by the queue's length";
        return -1;
    }
    if (!q->mem[buf]) {
        q->mem[buf] = malloc(q->bytes);
        if (!q->mem[buf]) {
            pl_recq_release(&q->tok[buf]);
            *why = "no host memory for one more queued picture";
            return -1;
        }
        pc_picture_layout(&q->pic[buf], q->fmt, p->st.matrix, p->st.range, q->width, q->rows, 64, q->mem[buf]);
    }
    return buf;
}

/* Stage thread: no picture slot is free now (the next set would wait). */
static int no_free_slot(pipeline *p)
{
    pthread_mutex_lock(&p->q_lock);
    int none = p->free_slots.count == 0;
    pthread_mutex_unlock(&p->q_lock);
    return none;
}

static int busiest(const pipeline *p, int first, int n)
{
    int m = 0;
    for (int k = first; k < first + n; k++) {
        int v = atomic_load(&p->band[k].inflight);
        m = v > m ? v : m;
    }
    return m;
}

/* Stage thread: says n more sets dropped or skipped for who, the first
 * at once, then once per SAY_EVERY_NS. */
static void say(pipeline *p, const char *who, const char *what, uint64_t total, uint64_t *said, int64_t *said_ns,
                uint64_t index, const char *why, int level)
{
    int64_t now = pc_now_ns();
    if (*said && now - *said_ns < SAY_EVERY_NS)
        return;
    if (!*said)
        pc_log(&p->d->logger, level, "%s: frame set %" PRIu64 " %s: %s", who, index, what, why);
    else
        pc_log(&p->d->logger, level, "%s: %" PRIu64 " more sets %s in %.0f s (%" PRIu64 " in all): %s", who,
               total - *said, what, (double)(now - *said_ns) * 1e-9, total, why);
    *said = total;
    *said_ns = now;
}

uint32_t pl_recq_plan(pipeline *p, job *jobs)
{
    if (!p->recq_on)
        return 0;
    uint32_t skip = 0;
    const job *j = &jobs[0];
    int starved = no_free_slot(p);
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    for (int i = 0; i < p->npictures; i++) {
        pl_picture *pic = &p->picture[i];
        if (!pic->encoded || atomic_load(&pic->live) <= 0)
            continue;
        uint32_t mask = (uint32_t)(((1ull << pic->nbands) - 1) << pic->first);
        char who[PL_PIC_NAME + 16];
        snprintf(who, sizeof who, "picture %s", pic->cfg.name);
        if (!pic->recorded) {
            if (starved && busiest(p, pic->first, pic->nbands) > 0) {
                skip |= mask;
                pic->live_skipped++;
                pc_stats_picture_sets(p->stats, i, 0, 1);
                say(p, who, "skipped by its live outputs", pic->live_skipped, &pic->said_skipped, &pic->said_ns,
                    j->index, "its encoder is still busy with an earlier set and no picture slot is free (it has "
                    "no recording to keep them for)", PC_LOG_NOTICE);
            }
            continue;
        }
        /* the busy bands get a copy; all of the picture's or none */
        int buf[PL_MAX_BANDS];
        const char *why = NULL;
        int ok = 1;
        for (int b = 0; b < pic->nbands; b++) {
            pl_band *bd = &p->band[pic->first + b];
            buf[b] = -1;
            /* (the picture is live: checked above; a band's own live flag is its thread's) */
            if (ok && bd->rq && atomic_load(&bd->inflight) > 0 && (buf[b] = take_buffer(p, bd->rq, &why)) < 0)
                ok = 0;
        }
        if (!ok) {
            for (int b = 0; b < pic->nbands; b++)
                if (buf[b] >= 0)
                    pl_recq_release(&p->band[pic->first + b].rq->tok[buf[b]]);
            skip |= mask;
            pic->rec_dropped++;
            pc_stats_picture_sets(p->stats, i, 1, 0);
            say(p, who, "dropped from its recordings", pic->rec_dropped, &pic->said_dropped, &pic->said_ns, j->index,
                why, PC_LOG_WARNING);
            continue;
        }
        for (int b = 0; b < pic->nbands; b++) {
            if (buf[b] < 0)
                continue;
            pl_band *bd = &p->band[pic->first + b];
            pc_picture src = pl_band_picture(dev ? &pic->host[j->slot] : &pic->slot[j->slot], bd->row0, bd->rows);
            pc_picture_copy(&bd->rq->pic[buf[b]], &src);
            jobs[bd->index].qbuf = buf[b] + 1;
        }
    }
    for (int t = 0; t < p->nthreads; t++) {
        pl_band *b = &p->band[t];
        if (b->preview && p->preview_live && starved && atomic_load(&b->inflight) > 0) {
            skip |= 1u << t;
            p->preview_skipped++;
            pc_stats_picture_sets(p->stats, -1, 0, 1);
            say(p, "preview", "skipped", p->preview_skipped, &p->preview_said, &p->preview_said_ns, j->index,
                "its encoder is still busy with an earlier set and no picture slot is free", PC_LOG_NOTICE);
        }
    }
    return skip;
}
