/* pipeline_stage.c - the stage thread: takes a frame set from capture,
 * uploads/stacks it, runs the algorithm in force into a free picture slot,
 * gives the set back to capture and queues the slot for the encoder thread.
 * Also the snapshot requests (copied from the set, written off-thread). */
#include "pipeline_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

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
    if (pl_colour_active(p))
        pl_colour_stack(p, set, raw); /* through the cameras' tables */
    else
        pc_frameset_stack(set, raw, (size_t)p->width);
    *sj = (snapshot_job){&p->snapshots_active, raw, p->width, p->height, p->cfa, p->algo, "", &p->d->logger,
                         p->ctl, token};
    snprintf(sj->path, sizeof sj->path, "%s", path);
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

int pl_apply_algo(pipeline *p, pc_algo_id algo, pc_variant variant)
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

#if PANOCAP_HAVE_CUDA
int pl_gpu_finish(pipeline *p, int slot)
{
    /* software encoders: the download to the slot's pinned picture, queued
     * right after the final pass (the encoder threads only encode) */
    if (p->host_ref &&
        pc_gpu_download_async(p->gpu, slot, &p->pic[slot], &p->host_pic[slot], p->err, sizeof p->err))
        return -1;
    if (p->preview_gpu && pc_gpu_downscale_async(p->gpu, slot, &p->pic[slot], &p->prev_pic[slot],
                                                 p->s->encode.preview_scale, p->err, sizeof p->err))
        return -1;
    return pc_gpu_slot_wait(p->gpu, slot, p->err, sizeof p->err) ? -1 : 0;
}
#endif

static int debayer_set(pipeline *p, const pc_frameset *set, int slot)
{
    if (pl_colour_active(p))
        return pl_colour_debayer(p, set, slot);
    p->pic[slot].bands = NULL; /* the plain §8 matrix */
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
        return pl_gpu_finish(p, slot);
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

void *pl_stage_main(void *arg)
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
            pl_fail(p, p->err);
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
        if (!pl_take(p, &p->free_slots, &slot, 0)) {
            pc_capture_release(p->cap, set);
            break;
        }
        int ra = atomic_exchange(&p->req_algo, -1);
        if (ra >= 0) {
            pc_algo_id old = p->algo;
            if (pl_apply_algo(p, (pc_algo_id)ra, (pc_variant)atomic_load(&p->req_variant)))
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
            pl_put(p, &p->free_slots, slot);
            pl_fail(p, msg);
            break;
        }
        atomic_fetch_add(&p->sets_taken, 1);
        pl_dispatch(p, j);
    }
    pl_dispatch(p, (job){.slot = -1});
    atomic_store(&p->stage_done, 1);
    return NULL;
}
