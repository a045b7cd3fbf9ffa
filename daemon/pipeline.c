/* pipeline.c - the running daemon: capture -> debayer -> encode -> outputs.
 *
 * Threads and who owns what:
 *   capture threads  (capture/)  group camera frames into frame sets; when
 *                    this pipeline is slow the capture pool is full and whole
 *                    sets are dropped there, counted (the one drop point).
 *   stage thread     (here)      takes a set, uploads its slabs by DMA into
 *                    the device panorama (CUDA) or stacks them (CPU), runs the
 *                    chosen algorithm into picture slot k, waits for it, gives
 *                    the set back to capture and queues slot k for encoding.
 *   encoder thread   (here)      copies slot k into the encoder's frame (a
 *                    device-to-device copy into NVENC's CUDA frame, or a
 *                    download / memcpy into a software encoder's frame),
 *                    frees the slot and submits the frame; the packets go to
 *                    the outputs' own threads (encode/).
 *   main thread      (here)      signals, reloads, the status line, stop.
 *   control thread   (control.c) status / metrics / live algorithm switch.
 * Between the stage and encoder threads sit `in_flight` picture slots (a
 * fixed pool): the GPU stage works on set k+1 while set k is encoded. Nothing
 * in the steady state allocates.
 *
 * Timestamps per set: complete (capture), start and NV12 ready (stage),
 * packet out and written per output (encoder callbacks); they meet in a small
 * ring keyed by pts and go to pc_stats once every output wrote the frame.
 */
#include "pipeline.h"

#include "capture.h"
#include "clock.h"
#include "control.h"
#include "debayer.h"
#include "image.h"
#include "panocap_config.h"
#include "stats.h"
#if PANOCAP_HAVE_CUDA
#include "debayer_cuda.h"
#endif
#if PANOCAP_HAVE_FFMPEG
#include "encode.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SLOTS 8
#define TIMES_RING 128

typedef struct job {
    int slot;        /* picture slot, -1 = end of stream */
    uint64_t index;  /* frame-set number */
    int64_t pts_ns;
    int64_t complete_ns, start_ns, nv12_ns;
} job;

/* Bounded FIFO of jobs or slot numbers (capacity MAX_SLOTS + 1). */
typedef struct fifo {
    job item[MAX_SLOTS + 2];
    int head, count, cap;
} fifo;

typedef struct pending_times {
    int used;
    int outputs_left;
    pc_frame_times t;
    int64_t pts_ns;
} pending_times;

typedef struct pipeline {
    pc_daemon *d;
    pc_settings *s;
    char err[512];

    /* parts */
    pc_stats *stats;
    pc_capture *cap;
    pc_control *ctl;
    pc_raw_writer *raw;
    int use_cuda;
#if PANOCAP_HAVE_CUDA
    pc_gpu *gpu;
#endif
    pc_cpu *cpu;
    uint8_t *host_pano;   /* CPU backend: stacked panorama */
    size_t host_pano_pitch;
#if PANOCAP_HAVE_FFMPEG
    pc_encoder *enc;
#endif
    int have_encoder;
    int width, height, slab_h, ncam;
    pc_cfa cfa;
    double fps;

    /* picture slots (device pictures for CUDA, host pictures for CPU) */
    int nslots;
    pc_picture pic[MAX_SLOTS];
    pc_pixfmt fmt;

    /* algorithm in force (stage thread), requests from other threads */
    pc_algo_id algo;
    pc_variant variant;
    atomic_int req_algo;    /* -1: none */
    atomic_int req_variant;
    atomic_int req_idr;

    /* snapshot request (control thread / --snapshot -> stage thread) */
    pthread_mutex_t snap_lock;
    char snap_path[PC_PATH_LEN];
    unsigned long long snap_token; /* the control client waiting for it */

    /* queues between stage and encoder threads */
    pthread_mutex_t q_lock;
    pthread_cond_t q_cond;
    fifo free_slots, ready;

    /* per-frame times, keyed by pts (encoder + output threads) */
    pthread_mutex_t t_lock;
    pending_times times[TIMES_RING];

    /* threads and state */
    pthread_t stage_thr, enc_thr;
    int stage_started, enc_started;
    atomic_int stop;        /* 1: stop taking frame sets */
    atomic_int stage_done, enc_done;
    atomic_int failed;      /* a stage failed: exit 1 */
    atomic_int snapshots_active; /* snapshot threads still writing (waited for at exit) */
    atomic_int reopen_outputs;   /* reload changed the outputs: encoder thread reopens */
    atomic_uint_fast64_t sets_taken, frames_done;
    uint64_t sets_dropped_seen;
    pc_camera_stats camstats[PC_CAPTURE_MAX_CAMERAS];
    pc_camera_metrics cammetrics[PC_CAPTURE_MAX_CAMERAS];
    pthread_mutex_t metrics_lock;
} pipeline;

#if PANOCAP_HAVE_FFMPEG
static int open_encoder(pipeline *p);
static void reopen_encoder(pipeline *p);
#endif

/* ---------------------------------------------------------------- queues */

static void fifo_push(fifo *f, job j)
{
    f->item[(f->head + f->count) % f->cap] = j;
    f->count++;
}

static job fifo_pop(fifo *f)
{
    job j = f->item[f->head];
    f->head = (f->head + 1) % f->cap;
    f->count--;
    return j;
}

/* Blocks until q has an item or stop (for the free-slot queue). */
static int take(pipeline *p, fifo *q, job *out, int honour_stop)
{
    pthread_mutex_lock(&p->q_lock);
    while (q->count == 0 && !(honour_stop && atomic_load(&p->stop)))
        pthread_cond_wait(&p->q_cond, &p->q_lock);
    int ok = q->count > 0;
    if (ok)
        *out = fifo_pop(q);
    pthread_mutex_unlock(&p->q_lock);
    return ok;
}

static void put(pipeline *p, fifo *q, job j)
{
    pthread_mutex_lock(&p->q_lock);
    fifo_push(q, j);
    pthread_cond_broadcast(&p->q_cond);
    pthread_mutex_unlock(&p->q_lock);
}

static void wake_all(pipeline *p)
{
    pthread_mutex_lock(&p->q_lock);
    pthread_cond_broadcast(&p->q_cond);
    pthread_mutex_unlock(&p->q_lock);
}

static void fail(pipeline *p, const char *what)
{
    pc_log(&p->d->logger, PC_LOG_ERR, "%s", what);
    atomic_store(&p->failed, 1);
    atomic_store(&p->stop, 1);
    wake_all(p);
}

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

static void times_flush(pipeline *p)
{
    pthread_mutex_lock(&p->t_lock);
    for (int i = 0; i < TIMES_RING; i++)
        if (p->times[i].used)
            times_finish_locked(p, &p->times[i]);
    pthread_mutex_unlock(&p->t_lock);
}

/* ----------------------------------------------------------- snapshots */

typedef struct snapshot_job {
    atomic_int *active; /* the pipeline's count of snapshots being written */
    uint8_t *raw;
    int width, height;
    pc_cfa cfa;
    pc_algo_id algo;
    char path[PC_PATH_LEN];
    const pc_logger *log;
    pc_control *ctl;          /* answers the client that asked (token) */
    unsigned long long token; /* 0: asked by --snapshot */
} snapshot_job;

/* Runs detached: demosaics the copied raw panorama with the algorithm in
 * force (the reference is bit-identical to every backend) and writes a PNG.
 * Off the stage thread so a snapshot never delays the stream. */
static void *snapshot_thread(void *arg)
{
    snapshot_job *sj = arg;
    char err[256], msg[PC_PATH_LEN + 300];
    size_t pitch = (size_t)sj->width * 3;
    uint8_t *rgb = malloc(pitch * (size_t)sj->height);
    int rc = -1;
    pc_bayer b = {sj->raw, (size_t)sj->width, sj->width, sj->height, sj->cfa};
    pc_picture pic = {.fmt = PC_FMT_RGB24, .plane = {rgb}, .pitch = {pitch},
                      .width = sj->width, .height = sj->height};
    if (!rgb)
        snprintf(msg, sizeof msg, "snapshot %s: out of memory", sj->path);
    else if (pc_ref_debayer(sj->algo, &b, &pic, err, sizeof err))
        snprintf(msg, sizeof msg, "snapshot %s: %s", sj->path, err);
    else if (pc_image_write(sj->path, rgb, pitch, sj->width, sj->height, err, sizeof err))
        snprintf(msg, sizeof msg, "snapshot: %s", err);
    else
        rc = 0;
    if (rc)
        pc_log(sj->log, PC_LOG_ERR, "%s", msg);
    else
        pc_log(sj->log, PC_LOG_NOTICE, "snapshot written to %s (%dx%d, %s)", sj->path, sj->width,
               sj->height, pc_algo_get(sj->algo)->name);
    if (sj->token)
        pc_control_done(sj->ctl, sj->token, rc, rc ? msg : sj->path);
    free(rgb);
    free(sj->raw);
    atomic_fetch_sub(sj->active, 1);
    free(sj);
    return NULL;
}

/* Stage thread, while it still holds the set: copy the raw panorama. */
static void snapshot_take(pipeline *p, const pc_frameset *set)
{
    char path[PC_PATH_LEN];
    pthread_mutex_lock(&p->snap_lock);
    snprintf(path, sizeof path, "%s", p->snap_path);
    unsigned long long token = p->snap_token;
    p->snap_path[0] = '\0';
    p->snap_token = 0;
    pthread_mutex_unlock(&p->snap_lock);
    if (!path[0])
        return;
    snapshot_job *sj = calloc(1, sizeof *sj);
    uint8_t *raw = malloc((size_t)p->width * p->height);
    if (!sj || !raw) {
        free(sj);
        free(raw);
        pc_log(&p->d->logger, PC_LOG_ERR, "snapshot %s: out of memory", path);
        if (token)
            pc_control_done(p->ctl, token, -1, "out of memory");
        return;
    }
    pc_frameset_stack(set, raw, (size_t)p->width);
    *sj = (snapshot_job){&p->snapshots_active, raw, p->width, p->height, p->cfa, p->algo, "", &p->d->logger, NULL, 0};
    snprintf(sj->path, sizeof sj->path, "%s", path);
    sj->ctl = p->ctl;
    sj->token = token;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    atomic_fetch_add(&p->snapshots_active, 1);
    if (pthread_create(&t, &a, snapshot_thread, sj)) {
        atomic_fetch_sub(&p->snapshots_active, 1);
        pc_log(&p->d->logger, PC_LOG_ERR, "snapshot %s: cannot start a thread", path);
        if (token)
            pc_control_done(p->ctl, token, -1, "cannot start a thread");
        free(raw);
        free(sj);
    }
    pthread_attr_destroy(&a);
}

/* ----------------------------------------------------------- the stages */

static int apply_algo(pipeline *p, pc_algo_id algo, pc_variant variant)
{
#if PANOCAP_HAVE_CUDA
    if (p->use_cuda) {
        if (pc_gpu_set_algo(p->gpu, algo, variant, p->cfa, p->fmt, p->s->debayer.matrix,
                            p->s->debayer.range, p->err, sizeof p->err))
            return -1;
        pc_variant chosen;
        int rows;
        pc_gpu_get_choice(p->gpu, &chosen, &rows);
        p->algo = algo;
        p->variant = variant;
        pc_stats_set_algo(p->stats, pc_algo_get(algo)->name, pc_variant_name(chosen));
        return 0;
    }
#endif
    p->algo = algo;
    p->variant = variant;
    pc_stats_set_algo(p->stats, pc_algo_get(algo)->name, "cpu");
    return 0;
}

static int debayer_set(pipeline *p, const pc_frameset *set, int slot)
{
#if PANOCAP_HAVE_CUDA
    if (p->use_cuda) {
        if (set->stacked) {
            if (pc_gpu_upload_async(p->gpu, slot, 0, set->stacked, set->stacked_pitch, p->height,
                                    p->err, sizeof p->err))
                return -1;
        } else {
            for (int s = 0; s < set->n; s++)
                if (pc_gpu_upload_async(p->gpu, slot, s * p->slab_h, set->slab[s], set->pitch[s],
                                        p->slab_h, p->err, sizeof p->err))
                    return -1;
        }
        if (pc_gpu_debayer(p->gpu, slot, &p->pic[slot], p->err, sizeof p->err))
            return -1;
        return pc_gpu_slot_wait(p->gpu, slot, p->err, sizeof p->err) ? -1 : 0;
    }
#endif
    const uint8_t *raw = set->stacked;
    size_t pitch = set->stacked_pitch;
    if (!raw) {
        pc_frameset_stack(set, p->host_pano, p->host_pano_pitch);
        raw = p->host_pano;
        pitch = p->host_pano_pitch;
    }
    pc_bayer b = {raw, pitch, p->width, p->height, p->cfa};
    return pc_cpu_debayer(p->cpu, p->algo, &b, &p->pic[slot], p->err, sizeof p->err) ? -1 : 0;
}

static void *stage_main(void *arg)
{
    pipeline *p = arg;
    int64_t limit = p->s->daemon.frames;
    pc_set_stats ss;

    while (!atomic_load(&p->stop)) {
        /* The watchdog is fed here, once per loop, also while capture has
         * nothing (cameras down, reconnecting): a hung GPU call or a hung
         * encoder (no free slot comes back) stops the loop and the pings,
         * a camera outage does not. */
        if (p->s->daemon.watchdog) /* daemon.watchdog = false: never ping */
            pc_notify_progress(p->d->notify, 0);
        if (limit > 0 && (int64_t)atomic_load(&p->sets_taken) >= limit)
            break;
        pc_frameset *set = NULL;
        int rc = pc_capture_next(p->cap, 200, &set);
        pc_capture_set_stats(p->cap, &ss);
        if (ss.sets_dropped > p->sets_dropped_seen) {
            pc_stats_dropped(p->stats, (int)(ss.sets_dropped - p->sets_dropped_seen));
            p->sets_dropped_seen = ss.sets_dropped;
        }
        if (rc == PC_CAPTURE_TIMEOUT)
            continue;
        if (rc == PC_CAPTURE_EOF) {
            if (!atomic_load(&p->stop))
                pc_log(&p->d->logger, PC_LOG_NOTICE, "capture: end of the source");
            break;
        }
        if (rc < 0) {
            snprintf(p->err, sizeof p->err, "capture failed (error %d)", rc);
            fail(p, p->err);
            break;
        }
        pc_stats_frame_in(p->stats, __builtin_popcount(set->substituted));
        if (p->raw && pc_raw_writer_write(p->raw, set, p->err, sizeof p->err)) {
            pc_log(&p->d->logger, PC_LOG_ERR, "--record-raw: %s; recording stopped", p->err);
            pc_raw_writer_close(p->raw, NULL, 0);
            p->raw = NULL;
        }
        snapshot_take(p, set);

        /* A set taken from capture (counted in, maybe recorded) is always
         * processed, even when a stop comes meanwhile: the encoder thread
         * keeps freeing slots until the end of stream, so this wait ends. */
        job slot;
        if (!take(p, &p->free_slots, &slot, 0)) {
            pc_capture_release(p->cap, set);
            break;
        }
        int ra = atomic_exchange(&p->req_algo, -1);
        if (ra >= 0) {
            pc_algo_id old = p->algo;
            if (apply_algo(p, (pc_algo_id)ra, (pc_variant)atomic_load(&p->req_variant)))
                pc_log(&p->d->logger, PC_LOG_ERR, "algorithm switch to %s failed: %s; keeping %s",
                       pc_algo_get(ra)->name, p->err, pc_algo_get(old)->name);
            else
                pc_log(&p->d->logger, PC_LOG_NOTICE, "algorithm switched: %s -> %s (from frame set %" PRIu64 ")",
                       pc_algo_get(old)->name, pc_algo_get(ra)->name, set->index);
        }
        job j = {.slot = slot.slot, .index = set->index, .pts_ns = set->pts_ns,
                 .complete_ns = set->t_complete_ns, .start_ns = pc_now_ns()};
        rc = debayer_set(p, set, j.slot);
        j.nv12_ns = pc_now_ns();
        pc_capture_release(p->cap, set);
        if (rc) {
            char msg[700];
            snprintf(msg, sizeof msg, "debayer (%s, %s backend, %dx%d) failed: %s",
                     pc_algo_get(p->algo)->name, p->use_cuda ? "cuda" : "cpu", p->width, p->height, p->err);
            put(p, &p->free_slots, slot);
            fail(p, msg);
            break;
        }
        atomic_fetch_add(&p->sets_taken, 1);
        put(p, &p->ready, j);
    }
    put(p, &p->ready, (job){.slot = -1});
    atomic_store(&p->stage_done, 1);
    return NULL;
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

static void *encoder_main(void *arg)
{
    pipeline *p = arg;
    job j;
    while (take(p, &p->ready, &j, 0)) {
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
            put(p, &p->free_slots, (job){.slot = j.slot});
            if (!rc) {
                times_put(p, &j);
                rc = pc_encoder_submit(p->enc, j.pts_ns, atomic_exchange(&p->req_idr, 0), p->err,
                                       sizeof p->err);
            }
            if (rc) {
                char msg[700];
                snprintf(msg, sizeof msg, "encoder %s: %s", pc_encoder_name(p->enc), p->err);
                fail(p, msg);
                continue; /* keep draining so the stage thread never waits forever */
            }
        } else
#endif
        {
            put(p, &p->free_slots, (job){.slot = j.slot});
            pc_frame_times t = {.complete_ns = j.complete_ns, .start_ns = j.start_ns, .nv12_ns = j.nv12_ns};
            pc_stats_frame_done(p->stats, &t);
        }
        atomic_fetch_add(&p->frames_done, 1);
    }
#if PANOCAP_HAVE_FFMPEG
    if (p->have_encoder && pc_encoder_flush(p->enc, p->err, sizeof p->err))
        pc_log(&p->d->logger, PC_LOG_ERR, "encoder flush: %s", p->err);
#endif
    atomic_store(&p->enc_done, 1);
    return NULL;
}

/* ------------------------------------------------------- control socket */

static void fill_camera_metrics(pipeline *p, int *n)
{
    int64_t now = pc_now_ns();
    *n = pc_capture_stats(p->cap, p->camstats, PC_CAPTURE_MAX_CAMERAS);
    if (*n > PC_CAPTURE_MAX_CAMERAS)
        *n = PC_CAPTURE_MAX_CAMERAS;
    for (int i = 0; i < *n; i++) {
        const pc_camera_stats *c = &p->camstats[i];
        pc_camera_metrics *m = &p->cammetrics[i];
        *m = (pc_camera_metrics){
            .name = c->name, .serial = c->serial, .frames = c->frames_completed,
            .timeouts = c->frames_failed[PC_FAIL_TIMEOUT],
            .missing_packets = c->frames_failed[PC_FAIL_MISSING_PACKETS],
            .size_mismatch = c->frames_failed[PC_FAIL_SIZE_MISMATCH],
            .other_failures = c->frames_failed[PC_FAIL_WRONG_PACKET_ID] + c->frames_failed[PC_FAIL_ABORTED] +
                              c->frames_failed[PC_FAIL_OTHER],
            .packets_resent = c->packets_resent, .packets_missing = c->packets_missing,
            .substituted = c->frames_substituted, .reconnects = c->reconnects,
            .connected = c->state == PC_CAM_STREAMING,
            .last_frame_age_s = c->last_arrival_ns ? (now - c->last_arrival_ns) / 1e9 : -1.0,
        };
    }
}

static int ctl_status(void *user, char *buf, size_t len)
{
    pipeline *p = user;
    pc_stats_snapshot snap;
    pc_stats_snapshot_get(p->stats, &snap);
    pc_stats_format_line(&snap, buf, len);
    return 0;
}

static int ctl_metrics(void *user, char *buf, size_t len)
{
    pipeline *p = user;
    pc_stats_snapshot snap;
    pc_stats_snapshot_get(p->stats, &snap);
    pthread_mutex_lock(&p->metrics_lock);
    int n;
    fill_camera_metrics(p, &n);
    int r = pc_stats_format_prometheus(&snap, p->cammetrics, n, buf, len);
    pthread_mutex_unlock(&p->metrics_lock);
    return r < 0 ? -1 : 0;
}

static int ctl_set_algo(void *user, pc_algo_id algo, pc_variant variant, char *err, size_t errlen)
{
    pipeline *p = user;
    atomic_store(&p->req_variant, (int)variant);
    atomic_store(&p->req_algo, (int)algo);
    return 0;
}

static int ctl_snapshot(void *user, const char *path, unsigned long long token, char *err, size_t errlen)
{
    pipeline *p = user;
    if (!path || !path[0] || strlen(path) >= PC_PATH_LEN) {
        snprintf(err, errlen, "snapshot needs a path shorter than %d bytes", PC_PATH_LEN);
        return -1;
    }
    pthread_mutex_lock(&p->snap_lock);
    int busy = p->snap_path[0] != '\0';
    if (!busy) {
        snprintf(p->snap_path, sizeof p->snap_path, "%s", path);
        p->snap_token = token;
    }
    pthread_mutex_unlock(&p->snap_lock);
    if (busy)
        snprintf(err, errlen, "another snapshot is waiting for the next frame set; try again");
    return busy ? -1 : 0;
}

static int ctl_idr(void *user, char *err, size_t errlen)
{
    pipeline *p = user;
#if PANOCAP_HAVE_FFMPEG
    if (p->have_encoder) {
        pc_encoder_request_idr(p->enc);
        return 0;
    }
#endif
    snprintf(err, errlen, "no encoder is running (--output null)");
    return -1;
}

static int ctl_reload(void *user, char *err, size_t errlen)
{
    pipeline *p = user;
    pc_signals_request(p->d->signals, PC_SIG_RELOAD);
    return 0;
}

/* ------------------------------------------------------------- set-up */

static void *pinned_alloc(size_t n, void *user)
{
#if PANOCAP_HAVE_CUDA
    void *ptr = NULL;
    if (pc_gpu_host_alloc(n, &ptr, NULL, 0) == 0)
        return ptr;
#endif
    return NULL;
}

static void pinned_free(void *ptr, void *user)
{
#if PANOCAP_HAVE_CUDA
    pc_gpu_host_free(ptr);
#endif
}

static int is_null_url(const char *u) { return strcmp(u, "null") == 0; }

static int open_capture(pipeline *p)
{
    const pc_settings *s = p->s;
    pc_capture_config cc;
    pc_capture_config_init(&cc);
    cc.source = (pc_source_kind)s->capture.source;
    cc.file = s->capture.file;
    cc.file_realtime = 1;
    cc.file_loop = s->capture.file_loop;
    cc.n_cameras = s->capture.source == PC_SOURCE_FILE ? 0 : s->capture.cameras;
    cc.fps = s->capture.fps;
    cc.deadline_periods = s->capture.deadline_periods;
    cc.pool_sets = s->capture.pool_size;
    cc.log = &p->d->logger;
    if (p->use_cuda) {
        cc.alloc = pinned_alloc;
        cc.free = pinned_free;
    }
    /* Fake cameras with no picture configured show the bundled photograph
     * (installed, or in the source tree when run from a build folder). */
    const char *picture = s->capture.image[0] ? s->capture.image : NULL;
    if (!picture && s->capture.source == PC_SOURCE_FAKE) {
        if (access(PANOCAP_SAMPLE_IMAGE, R_OK) == 0)
            picture = PANOCAP_SAMPLE_IMAGE;
        else if (access(PANOCAP_SAMPLE_IMAGE_SRC, R_OK) == 0)
            picture = PANOCAP_SAMPLE_IMAGE_SRC;
        if (picture && !pc_image_have_png())
            picture = NULL;
        if (!picture)
            pc_log(&p->d->logger, PC_LOG_WARNING, "fake cameras: bundled photograph not found or no PNG support; "
                   "showing a synthetic picture");
    }
    for (int i = 0; i < s->capture.cameras && i < PC_CAPTURE_MAX_CAMERAS; i++) {
        const pc_camera_settings *c = &s->cameras[i];
        pc_camera_config *k = &cc.cam[i];
        pc_camera_config_init(k);
        k->address = c->address[0] ? c->address : c->serial[0] ? c->serial : NULL;
        k->cfa = (pc_cfa)c->pattern;
        k->width = c->width;
        k->height = c->height;
        k->offset_x = c->offset_x;
        k->offset_y = c->offset_y;
        k->exposure_us = c->exposure_us > 0 ? c->exposure_us : NAN;
        k->gain = c->gain_db >= 0 ? c->gain_db : NAN;
        k->packet_size = c->packet_size;
        k->packet_delay_ns = c->packet_delay_ns;
        k->socket_buffer = c->socket_buffer;
        k->resend = c->resend;
        k->packet_timeout_ms = c->packet_timeout_ms;
        k->frame_retention_ms = c->frame_retention_ms;
        k->trigger = (pc_trigger_mode)c->trigger;
        k->trigger_line = c->trigger_source[0] ? c->trigger_source : NULL;
        k->image = c->image[0] ? c->image : picture;
        k->slab = c->slab;
        k->image_part = c->slab;
        k->image_parts = s->capture.cameras;
    }
    if (pc_capture_open(&p->cap, &cc, p->err, sizeof p->err))
        return -1;
    double fps;
    p->ncam = pc_capture_n_cameras(p->cap);
    pc_capture_geometry(p->cap, &p->width, &p->slab_h, &p->cfa, &fps);
    p->height = p->slab_h * p->ncam;
    p->fps = fps > 0 ? fps : s->capture.fps;
    return 0;
}

static int open_backend(pipeline *p)
{
    const pc_settings *s = p->s;
    int want = s->debayer.backend;
    int ndev = 0;
#if PANOCAP_HAVE_CUDA
    ndev = pc_gpu_device_count();
#endif
    if (want == PC_BACKEND_CUDA && ndev == 0) {
        snprintf(p->err, sizeof p->err, "--backend cuda: %s",
                 PANOCAP_HAVE_CUDA ? "no CUDA device is usable on this machine"
                                   : "this build has no CUDA support (meson -Dcuda=enabled)");
        return -1;
    }
    p->use_cuda = want != PC_BACKEND_CPU && ndev > 0;
    if (want == PC_BACKEND_AUTO && !p->use_cuda)
        pc_log(&p->d->logger, PC_LOG_WARNING, "no CUDA device%s: using the CPU backend",
               PANOCAP_HAVE_CUDA ? "" : " (built without CUDA)");
    return 0;
}

static int open_debayer(pipeline *p)
{
    const pc_settings *s = p->s;
#if PANOCAP_HAVE_CUDA
    if (p->use_cuda) {
        for (int i = 0; i < p->nslots; i++)
            if (pc_gpu_picture_alloc(p->gpu, p->fmt, s->debayer.matrix, s->debayer.range, &p->pic[i], p->err,
                                     sizeof p->err))
                return -1;
        pc_log(&p->d->logger, PC_LOG_INFO, "GPU: %s, %d frame sets in flight", pc_gpu_device_name(p->gpu),
               p->nslots);
    } else
#endif
    {
        if (pc_cpu_open(&p->cpu, s->debayer.cpu_threads, p->width, p->height, p->err, sizeof p->err))
            return -1;
        p->host_pano_pitch = ((size_t)p->width + 63) & ~(size_t)63;
        p->host_pano = aligned_alloc(64, p->host_pano_pitch * (size_t)p->height);
        if (!p->host_pano) {
            snprintf(p->err, sizeof p->err, "out of memory for the %dx%d panorama", p->width, p->height);
            return -1;
        }
        size_t pitch = p->host_pano_pitch;
        for (int i = 0; i < p->nslots; i++) {
            pc_picture *q = &p->pic[i];
            *q = (pc_picture){.fmt = p->fmt, .matrix = s->debayer.matrix, .range = s->debayer.range,
                              .width = p->width, .height = p->height};
            size_t ysz = pitch * (size_t)p->height, csz = pitch * (size_t)(p->height / 2);
            uint8_t *mem = aligned_alloc(64, ysz + csz);
            if (!mem) {
                snprintf(p->err, sizeof p->err, "out of memory for picture slots");
                return -1;
            }
            q->plane[0] = mem;
            q->pitch[0] = pitch;
            if (p->fmt == PC_FMT_NV12) {
                q->plane[1] = mem + ysz;
                q->pitch[1] = pitch;
            } else {
                q->plane[1] = mem + ysz;
                q->pitch[1] = pitch / 2;
                q->plane[2] = mem + ysz + (pitch / 2) * (size_t)(p->height / 2);
                q->pitch[2] = pitch / 2;
            }
        }
        pc_log(&p->d->logger, PC_LOG_INFO, "CPU backend: %d threads, %d frame sets in flight",
               pc_cpu_threads(p->cpu), p->nslots);
    }
#if PANOCAP_HAVE_CUDA
    /* Prepare every algorithm once (graph capture, variant and tile
     * measurement: tens of ms each) so that a live switch later costs
     * nothing on the stage thread. */
    if (p->use_cuda)
        for (int a = 0; a < pc_algo_count(); a++)
            if (a != s->debayer.algo && apply_algo(p, (pc_algo_id)a, (pc_variant)s->debayer.variant))
                pc_log(&p->d->logger, PC_LOG_WARNING, "GPU: preparing %s failed: %s", pc_algo_get(a)->name, p->err);
#endif
    return apply_algo(p, (pc_algo_id)s->debayer.algo, (pc_variant)s->debayer.variant);
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
    }
    ec.on_packet = on_packet;
    ec.on_written = on_written;
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

static int open_encoder_or_null(pipeline *p)
{
    int real = 0;
    for (int i = 0; i < p->s->output_count; i++)
        real += !is_null_url(p->s->outputs[i].url);
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

/* ------------------------------------------------------------ reload */

static void do_reload(pipeline *p)
{
    pc_daemon *d = p->d;
    pc_notify_reloading(d->notify);
    pc_settings *next = malloc(sizeof *next);
    pc_settings_delta *delta = malloc(sizeof *delta);
    pc_diag *diag = malloc(sizeof *diag);
    if (!next || !delta || !diag) {
        pc_log(&d->logger, PC_LOG_ERR, "reload: out of memory");
        goto out;
    }
    pc_diag_init(diag);
    int rc = pc_cli_reload(d->cli, &d->settings, next, delta, diag);
    for (int i = 0; i < diag->count; i++) {
        char line[900];
        pc_diag_format(&diag->item[i], line, sizeof line);
        pc_log(&d->logger, diag->item[i].severity == PC_DIAG_ERROR ? PC_LOG_ERR : PC_LOG_WARNING, "%s", line);
    }
    if (rc != PC_EXIT_OK) {
        pc_log(&d->logger, PC_LOG_ERR, "reload: configuration rejected, keeping the running settings");
        goto out;
    }
    if (!delta->changes) {
        pc_log(&d->logger, PC_LOG_NOTICE, "reload: nothing changed");
        goto out;
    }
    char desc[2048];
    pc_settings_diff_describe(delta, desc, sizeof desc);
    pc_log(&d->logger, PC_LOG_NOTICE, "reload: %s", desc);
    unsigned live = delta->live;
    if (live & PC_LIVE_OUTPUTS) {
        int was_null = !p->have_encoder, now_null = 1;
        for (int i = 0; i < next->output_count; i++)
            now_null &= is_null_url(next->outputs[i].url);
        if (was_null || now_null) {
            pc_log(&d->logger, PC_LOG_WARNING, "reload: switching %s output null needs a restart "
                   "(the running outputs stay)", was_null ? "from" : "to");
            live &= ~PC_LIVE_OUTPUTS;
            memcpy(next->outputs, d->settings.outputs, sizeof next->outputs);
            next->output_count = d->settings.output_count;
        }
    }
    if (live & PC_LIVE_BITRATE) {
#if PANOCAP_HAVE_FFMPEG
        char err[256];
        if (p->have_encoder && pc_encoder_set_bitrate(p->enc, next->encode.bitrate, err, sizeof err)) {
            pc_log(&d->logger, PC_LOG_WARNING, "reload: bitrate: %s", err);
            next->encode.bitrate = d->settings.encode.bitrate;
        }
#endif
    }
    pc_settings_apply_live(&d->settings, next);
    if (live & PC_LIVE_LOG_LEVEL)
        d->logger.max_level = d->settings.daemon.log_level;
    if (live & PC_LIVE_OUTPUTS)
        atomic_store(&p->reopen_outputs, 1);
    if (live & (PC_LIVE_ALGO | PC_LIVE_VARIANT)) {
        atomic_store(&p->req_variant, d->settings.debayer.variant);
        atomic_store(&p->req_algo, d->settings.debayer.algo);
    }
    if (delta->restart)
        pc_log(&d->logger, PC_LOG_WARNING, "reload: %d changed setting%s need%s a restart to take effect",
               delta->restart, delta->restart == 1 ? "" : "s", delta->restart == 1 ? "s" : "");
out:
    pc_notify_ready(d->notify, "reloaded");
    free(next);
    free(delta);
    free(diag);
}

/* ------------------------------------------------------------- run */

static void status_tick(pipeline *p)
{
    pc_stats_snapshot snap;
    char line[512];
    pc_stats_snapshot_get(p->stats, &snap);
    pc_stats_format_line(&snap, line, sizeof line);
    pc_stats_print_status(line, p->d->stderr_tty, stderr, &p->d->logger);
    pc_notify_status(p->d->notify, line);
}

static void teardown(pipeline *p)
{
    atomic_store(&p->stop, 1);
    wake_all(p);
    if (p->cap)
        pc_capture_stop(p->cap);
    if (p->stage_started)
        pthread_join(p->stage_thr, NULL);
    else if (p->enc_started) /* nobody else will end the encoder's stream */
        put(p, &p->ready, (job){.slot = -1});
    if (p->enc_started)
        pthread_join(p->enc_thr, NULL);
    /* A snapshot being written must not be cut off by the exit (and it
     * answers its client through the control socket). */
    for (int i = 0; i < 3000 && atomic_load(&p->snapshots_active) > 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (p->ctl && atomic_load(&p->snapshots_active) == 0)
        pc_control_stop(p->ctl);
#if PANOCAP_HAVE_FFMPEG
    pc_encoder_close(p->enc); /* writes trailers, ends playlists */
#endif
    if (p->stats)
        times_flush(p);
    if (p->raw && pc_raw_writer_close(p->raw, p->err, sizeof p->err))
        pc_log(&p->d->logger, PC_LOG_ERR, "--record-raw: %s", p->err);
    if (p->cap)
        pc_capture_close(p->cap);
#if PANOCAP_HAVE_CUDA
    if (p->gpu) {
        for (int i = 0; i < p->nslots; i++)
            pc_gpu_picture_free(p->gpu, &p->pic[i]);
        pc_gpu_close(p->gpu);
    }
#endif
    if (p->cpu) {
        for (int i = 0; i < p->nslots; i++)
            free(p->pic[i].plane[0]);
        pc_cpu_close(p->cpu);
    }
    free(p->host_pano);
}

int pc_run_pipeline(pc_daemon *d)
{
    pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        pc_log(&d->logger, PC_LOG_ERR, "out of memory");
        return PC_EXIT_RUNTIME;
    }
    p->d = d;
    p->s = &d->settings;
    atomic_init(&p->req_algo, -1);
    pthread_mutex_init(&p->q_lock, NULL);
    pthread_cond_init(&p->q_cond, NULL);
    pthread_mutex_init(&p->t_lock, NULL);
    pthread_mutex_init(&p->snap_lock, NULL);
    pthread_mutex_init(&p->metrics_lock, NULL);
    p->free_slots.cap = p->ready.cap = MAX_SLOTS + 2;
    int rc = PC_EXIT_RUNTIME;
    const char *step = "";

    step = "backend";
    if (open_backend(p))
        goto fail;
    pc_notify_extend_timeout(d->notify, 30000000);
    step = "capture";
    if (open_capture(p))
        goto fail;

    /* stats: before the encoder, whose callbacks report into it */
    pc_stats_config sc = {.fps = p->fps, .budget_ms = pc_settings_budget_ms(p->s),
                          .window_s = p->s->daemon.stats_window_s, .outputs = p->s->output_count};
    for (int i = 0; i < p->s->output_count; i++)
        sc.output_names[i] = p->s->outputs[i].url;
    step = "stats";
    if (pc_stats_open(&p->stats, &sc, p->err, sizeof p->err))
        goto fail;

    /* The frame size is checked before anything is allocated for it. */
    step = "frame size";
    if (pc_check_size(p->width, p->height, p->err, sizeof p->err))
        goto fail;
    p->nslots = p->s->debayer.in_flight < 1 ? 1 : p->s->debayer.in_flight > MAX_SLOTS ? MAX_SLOTS
                                                                                       : p->s->debayer.in_flight;
#if PANOCAP_HAVE_CUDA
    /* The GPU comes before the encoder, which is built on its CUDA context. */
    step = "GPU";
    if (p->use_cuda && pc_gpu_open(&p->gpu, 0, p->width, p->height, p->nslots, p->err, sizeof p->err))
        goto fail;
#endif
    pc_notify_extend_timeout(d->notify, 30000000);
    step = "encoder";
    if (open_encoder_or_null(p))
        goto fail;
    step = "debayer";
    if (open_debayer(p))
        goto fail;

    if (p->s->daemon.record_raw[0] &&
        pc_raw_writer_open(&p->raw, p->s->daemon.record_raw, p->width, p->slab_h, p->ncam, p->cfa, p->fps,
                           p->err, sizeof p->err)) {
        step = "--record-raw";
        goto fail;
    }
    if (p->s->daemon.snapshot[0])
        snprintf(p->snap_path, sizeof p->snap_path, "%s", p->s->daemon.snapshot);

    if (p->s->daemon.control[0]) {
        pc_control_ops ops = {.user = p, .status = ctl_status, .metrics = ctl_metrics, .set_algo = ctl_set_algo,
                              .snapshot = ctl_snapshot, .idr = ctl_idr, .reload = ctl_reload};
        if (pc_control_start(&p->ctl, p->s->daemon.control, &ops, &d->logger, p->err, sizeof p->err))
            pc_log(&d->logger, PC_LOG_WARNING, "control socket off: %s", p->err);
    }

    for (int i = 0; i < p->nslots; i++)
        fifo_push(&p->free_slots, (job){.slot = i});
    step = "capture start";
    if (pc_capture_start(p->cap, p->err, sizeof p->err))
        goto fail;
    if (pthread_create(&p->enc_thr, NULL, encoder_main, p) == 0)
        p->enc_started = 1;
    /* Cameras, GPU and outputs are up: READY=1 now, before the stage thread
     * (which feeds the watchdog) starts, so WATCHDOG=1 never precedes it. */
    char ready[256];
    snprintf(ready, sizeof ready, "running: %d cameras %dx%d -> %dx%d, %s, %s backend", p->ncam, p->width,
             p->slab_h, p->width, p->height, pc_algo_get(p->algo)->name, p->use_cuda ? "cuda" : "cpu");
    if (p->enc_started) {
        pc_log(&d->logger, PC_LOG_NOTICE, "%s", ready);
        pc_notify_ready(d->notify, ready);
    }
    if (p->enc_started && pthread_create(&p->stage_thr, NULL, stage_main, p) == 0)
        p->stage_started = 1;
    if (!p->enc_started || !p->stage_started) {
        snprintf(p->err, sizeof p->err, "cannot start the pipeline threads");
        step = "threads";
        goto fail;
    }

    int64_t t0 = pc_now_ns(), next_tick = t0;
    double interval = p->s->daemon.stats_interval_s;
    int64_t deadline = p->s->daemon.duration_s > 0 ? t0 + (int64_t)(p->s->daemon.duration_s * 1e9) : 0;
    for (;;) {
        int ev = pc_signals_wait(d->signals, 100);
        if (ev & PC_SIG_STOP) {
            pc_log(&d->logger, PC_LOG_NOTICE, "stopping (signal): draining the pipeline");
            break;
        }
        if (ev & PC_SIG_RELOAD)
            do_reload(p);
        if (atomic_load(&p->enc_done) || atomic_load(&p->failed))
            break;
        if (atomic_load(&p->stage_done) && atomic_load(&p->enc_done))
            break;
        int64_t now = pc_now_ns();
        if (deadline && now >= deadline) {
            pc_log(&d->logger, PC_LOG_NOTICE, "--duration reached: stopping");
            break;
        }
        if (interval > 0 && now >= next_tick) {
            if (now > t0)
                status_tick(p);
            next_tick = now + (int64_t)(interval * 1e9);
        }
    }
    pc_notify_stopping(d->notify, "draining");
    /* Stop taking sets; the encoder thread drains what the stage made. */
    atomic_store(&p->stop, 1);
    wake_all(p);
    if (p->stage_started) {
        pthread_join(p->stage_thr, NULL);
        p->stage_started = 0;
    }
    if (p->enc_started) {
        pthread_join(p->enc_thr, NULL);
        p->enc_started = 0;
    }
    if (d->stderr_tty && interval > 0)
        fputc('\n', stderr);
    rc = atomic_load(&p->failed) ? PC_EXIT_RUNTIME : PC_EXIT_OK;
    teardown(p);
    {
        pc_stats_snapshot snap;
        char sum[4096];
        pc_stats_snapshot_get(p->stats, &snap);
        pc_stats_format_summary(&snap, sum, sizeof sum);
        pc_log(&d->logger, PC_LOG_NOTICE, "stopped after %" PRIu64 " frame sets (summary on stdout)",
               (uint64_t)atomic_load(&p->frames_done));
        fprintf(stdout, "%s", sum);
        fflush(stdout);
    }
    goto out;

fail:
    pc_log(&d->logger, PC_LOG_ERR, "%s: %s", step, p->err);
    teardown(p);
out:
    pc_stats_close(p->stats);
    pthread_mutex_destroy(&p->q_lock);
    pthread_cond_destroy(&p->q_cond);
    pthread_mutex_destroy(&p->t_lock);
    pthread_mutex_destroy(&p->snap_lock);
    pthread_mutex_destroy(&p->metrics_lock);
    free(p);
    return rc;
}

int pc_list_cameras(pc_daemon *d)
{
    char err[512];
    if (pc_capture_list_cameras(stdout, err, sizeof err) < 0) {
        pc_log(&d->logger, PC_LOG_ERR, "--list-cameras: %s", err);
        return PC_EXIT_RUNTIME;
    }
    return PC_EXIT_OK;
}
