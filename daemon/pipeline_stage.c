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
    pipeline *p;              /* answers the client that asked (token) */
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
        pl_snapshot_done(sj->p, sj->token, rc, rc ? msg : sj->path);
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
            pl_snapshot_done(p, token, -1, "out of memory");
        return;
    }
    if (pl_colour_active(p))
        pl_colour_stack(p, set, raw); /* through the cameras' tables */
    else
        pc_frameset_stack(set, raw, (size_t)p->width);
    *sj = (snapshot_job){&p->snapshots_active, raw, p->width, p->height, p->cfa, p->st.algo, "", &p->d->logger,
                         p, token};
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
            pl_snapshot_done(p, token, -1, "cannot start a thread");
        free(raw);
        free(sj);
    }
    pthread_attr_destroy(&a);
}

/* ----------------------------------------------------------- the stages */

/* Stage thread (or set-up, before it starts): makes algo/variant the
 * algorithm in force, in the backend and in st.algo/variant, and publishes
 * it (algo_in_force, the stats labels). On failure nothing changes. */
int pl_apply_algo(pipeline *p, pc_algo_id algo, pc_variant variant, char *err, size_t errlen)
{
    pc_debayer_config dc = {.algo = algo, .variant = variant, .cfa = p->cfa, .fmt = p->fmt,
                            .matrix = p->st.matrix, .range = p->st.range};
    if (pc_backend_set_algo(p->be, &dc, err, errlen))
        return -1;
    p->st.algo = algo;
    p->st.variant = variant;
    atomic_store(&p->algo_in_force, pl_algo_pack(algo, variant));
    pc_stats_set_algo(p->stats, pc_algo_get(algo)->name, pc_backend_choice_name(p->be));
    return 0;
}

/* Stage thread, after the final pass into slot: for host encoders taking
 * pictures by reference, the download into the slot's pinned host picture
 * and the preview's scaling, queued right after the debayer (the encoder
 * threads only encode); then waits for the slot. CPU backend: its pictures
 * are host pictures already, nothing is queued. */
int pl_finish_slot(pipeline *p, int slot)
{
    char *err = p->st.err;
    size_t n = sizeof p->st.err;
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    if (dev && p->host_ref && pc_backend_download(p->be, slot, &p->pic[slot], &p->host_pic[slot], err, n))
        return -1;
    if (p->preview_gpu &&
        pc_backend_downscale(p->be, slot, &p->pic[slot], &p->prev_pic[slot], p->preview_scale, err, n))
        return -1;
    return pc_backend_wait(p->be, slot, err, n) ? -1 : 0;
}

/* Uploads the set into backend slot `slot` (the stacked panorama as one
 * piece, or slab by slab), demosaics it into picture `slot` and waits
 * (pl_finish_slot): the set goes back to capture right after. */
static int debayer_set(pipeline *p, const pc_frameset *set, int slot)
{
    if (pl_colour_active(p))
        return pl_colour_debayer(p, set, slot);
    p->pic[slot].bands = NULL; /* the plain §8 matrix */
    char *err = p->st.err;
    size_t n = sizeof p->st.err;
    if (set->stacked) {
        if (pc_backend_upload(p->be, slot, 0, set->stacked, set->stacked_pitch, p->height, err, n))
            return -1;
    } else {
        for (int s = 0; s < set->n; s++)
            if (pc_backend_upload(p->be, slot, s * p->slab_h, set->slab[s], set->pitch[s], p->slab_h, err, n))
                return -1;
    }
    if (pc_backend_debayer(p->be, slot, &p->pic[slot], err, n))
        return -1;
    return pl_finish_slot(p, slot);
}

void *pl_stage_main(void *arg)
{
    pipeline *p = arg;
    stage_state *st = &p->st;
    int64_t limit = st->frames_limit;
    pc_set_stats ss;

    while (!atomic_load(&p->stop)) {
        /* The watchdog is fed here, once per loop, also while capture has
         * nothing (cameras down, reconnecting): a hung GPU call or a hung
         * encoder (no free slot comes back) stops the loop and the pings,
         * a camera outage does not. */
        if (st->watchdog) /* daemon.watchdog = false: never ping */
            pc_notify_progress(p->d->notify, 0);
        if (limit > 0 && (int64_t)atomic_load(&p->sets_taken) >= limit)
            break;
        pc_frameset *set = NULL;
        int rc = pc_capture_next(p->cap, 200, &set);
        pc_capture_set_stats(p->cap, &ss);
        if (ss.sets_dropped > st->sets_dropped_seen) {
            pc_stats_dropped(p->stats, (int)(ss.sets_dropped - st->sets_dropped_seen));
            st->sets_dropped_seen = ss.sets_dropped;
        }
        if (rc == PC_CAPTURE_TIMEOUT)
            continue;
        if (rc == PC_CAPTURE_EOF) {
            if (!atomic_load(&p->stop))
                pc_log(&p->d->logger, PC_LOG_NOTICE, "capture: end of the source");
            break;
        }
        if (rc < 0) {
            snprintf(st->err, sizeof st->err, "capture failed (error %d)", rc);
            pl_fail(p, st->err);
            break;
        }
        pc_stats_frame_in(p->stats, __builtin_popcount(set->substituted));
        if (st->raw && pc_raw_writer_write(st->raw, set, st->err, sizeof st->err)) {
            pc_log(&p->d->logger, PC_LOG_ERR, "--record-raw: %s; recording stopped", st->err);
            pc_raw_writer_close(st->raw, NULL, 0);
            st->raw = NULL;
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
        /* between sets: the one place the algorithm in force changes */
        int ra = atomic_exchange(&p->req_algo, -1);
        if (ra >= 0) {
            pc_algo_id old = st->algo, want = pl_algo_of(ra);
            if (pl_apply_algo(p, want, pl_variant_of(ra), st->err, sizeof st->err))
                pc_log(&p->d->logger, PC_LOG_ERR, "algorithm switch to %s failed: %s; keeping %s",
                       pc_algo_get(want)->name, st->err, pc_algo_get(old)->name);
            else
                pc_log(&p->d->logger, PC_LOG_NOTICE, "algorithm switched: %s -> %s (from frame set %" PRIu64 ")",
                       pc_algo_get(old)->name, pc_algo_get(want)->name, set->index);
        }
        job j = {.slot = slot.slot, .index = set->index, .pts_ns = set->pts_ns,
                 .complete_ns = set->t_complete_ns, .start_ns = pc_now_ns()};
        rc = debayer_set(p, set, j.slot);
        j.nv12_ns = pc_now_ns();
        pc_capture_release(p->cap, set);
        if (rc) {
            char msg[700];
            snprintf(msg, sizeof msg, "debayer (%s, %s backend, %dx%d) failed: %s",
                     pc_algo_get(st->algo)->name, pc_backend_name(p->be), p->width, p->height, st->err);
            pl_put(p, &p->free_slots, slot);
            pl_fail(p, msg);
            break;
        }
        atomic_fetch_add(&p->sets_taken, 1);
        pc_web_picture_offer(p->webpic, j.slot); /* the web page's picture, when wanted */
        pl_dispatch(p, j);
    }
    pl_dispatch(p, (job){.slot = -1});
    atomic_store(&p->stage_done, 1);
    return NULL;
}
