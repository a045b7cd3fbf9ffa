/* pipeline_stage.c - the stage thread: takes a frame set from capture,
 * hands it down the list of steps (pipeline_step.h) once - the steps
 * before the first slot step while the set waits for a free picture
 * slot, the rest with slot k, which writes every encoded picture's slot k
 * - waits for the slot, gives the set back to capture and queues slot k
 * for the encoder threads. And the list in force: adding a step is one
 * entry of stage_steps[]. */
#include "pipeline_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* The stage thread's steps, in order (a step not needed with the
 * settings leaves itself out at prepare). */
static const pl_step_ops *const stage_steps[] = {
    &pl_step_raw_record, /* the set as captured, to the .pcraw file */
    &pl_step_colour,     /* tables and white balance: pl_set.colour */
    &pl_step_debayer,    /* upload + demosaic into the slot's picture (RGB for the render step) */
    &pl_step_render,     /* the panorama and the virtual cameras from the rig (when one is configured) */
    &pl_step_snapshot,   /* a requested PNG of what the stream shows (the slot's pictures written) */
    &pl_step_web_picture, /* the web page's live picture, when watched (last: the finished picture) */
};

/* What pc_run_pipeline runs: these steps, the settings' pictures. */
const pl_spec pl_default_spec = {stage_steps, (int)(sizeof stage_steps / sizeof stage_steps[0]),
                                 pl_settings_picture, NULL};

/* The intermediate pictures: in the backend's memory, of any size. */
static int picture_alloc(void *user, const pl_pic_desc *d, pc_picture *out, char *err, size_t errlen)
{
    pipeline *p = user;
    return pc_backend_picture_alloc(p->be, (pc_pixfmt)d->fmt, p->st.matrix, p->st.range, d->width, d->height, out,
                                    err, errlen)
               ? -1
               : 0;
}

static void picture_free(void *user, pc_picture *pic) { pc_backend_picture_free(((pipeline *)user)->be, pic); }

int pl_stage_prepare(pipeline *p, const char **failed)
{
    pl_step_env *env = &p->step_env;
    *env = (pl_step_env){.p = p, .s = p->s, .log = &p->d->logger, .be = p->be, .width = p->width,
                         .height = p->height, .slab_h = p->slab_h, .ncam = p->ncam, .cfa = p->cfa, .fps = p->fps,
                         .nslots = p->nslots};
    pc_capture_rawfmt(p->cap, &env->rawfmt);
    return pl_steps_prepare(&p->steps, p->spec->steps, p->spec->nsteps, env, failed, p->err, sizeof p->err);
}

int pl_stage_start(pipeline *p, const char **failed)
{
    pl_pic_alloc a = {picture_alloc, picture_free, p};
    int fmt[PL_MAX_PICTURES];
    for (int i = 0; i < p->npictures; i++)
        fmt[i] = p->picture[i].fmt;
    if (pl_steps_start(&p->steps, &p->step_env, fmt, p->nslots, &a, failed, p->err, sizeof p->err))
        return -1;
    char what[1024];
    pl_steps_describe(&p->steps, what, sizeof what);
    pc_log(&p->d->logger, PC_LOG_INFO, "stage: %s", what);
    return 0;
}

/* Stage thread, after the last step wrote slot's pictures: for host
 * encoders taking pictures by reference, one download per picture into
 * its slot's pinned host picture (while one of its encoders encodes) and
 * the preview's scaling of picture 0, queued right after the last step
 * (the encoder threads only encode); then waits for the slot. CPU
 * backend: its pictures are host pictures already, nothing is queued. */
static int finish_slot(pipeline *p, int slot, char *err, size_t n)
{
    int dev = (p->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    for (int i = 0; i < p->npictures && dev; i++) {
        pl_picture *pic = &p->picture[i];
        if (pic->host_ref && atomic_load(&pic->live) > 0 &&
            pc_backend_download(p->be, slot, &pic->slot[slot], &pic->host[slot], err, n)) {
            if (i > 0) { /* name the picture */
                char e[400];
                snprintf(e, sizeof e, "%s", err);
                snprintf(err, n, "picture %s: %.360s", pic->cfg.name, e);
            }
            return -1;
        }
    }
    if (p->preview_gpu && pc_backend_downscale(p->be, slot, &p->picture[0].slot[slot], &p->prev_pic[slot],
                                               p->preview_scale, err, n))
        return -1;
    return pc_backend_wait(p->be, slot, err, n) ? -1 : 0;
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

        /* the steps that read only the set, while it waits for a slot */
        pl_steps *l = &p->steps;
        pl_set ps = {.frames = set, .slot = -1, .err = st->err, .errlen = sizeof st->err};
        if (pl_steps_run(l, 0, l->first_slot, &ps)) {
            pc_capture_release(p->cap, set);
            pl_fail(p, st->err);
            break;
        }
        /* A set taken from capture (counted in, maybe recorded) is always
         * processed, even when a stop comes meanwhile: the encoder thread
         * keeps freeing slots until the end of stream, so this wait ends. */
        job slot;
        if (!pl_take(p, &p->free_slots, &slot, 0)) {
            pc_capture_release(p->cap, set);
            break;
        }
        job j = {.slot = slot.slot, .index = set->index, .pts_ns = set->pts_ns,
                 .complete_ns = set->t_complete_ns, .start_ns = pc_now_ns()};
        ps.slot = slot.slot;
        ps.npictures = p->npictures;
        for (int i = 0; i < p->npictures; i++)
            ps.picture[i] = &p->picture[i].slot[slot.slot];
        rc = pl_steps_run(l, l->first_slot, l->n, &ps);
        char e[400];
        if (!rc && finish_slot(p, j.slot, e, sizeof e)) {
            snprintf(st->err, sizeof st->err, "frame set %" PRIu64 " in picture slot %d (%s backend): %s", set->index,
                     j.slot, pc_backend_name(p->be), e);
            rc = -1;
        }
        j.nv12_ns = pc_now_ns();
        pc_capture_release(p->cap, set);
        if (rc) {
            pl_put(p, &p->free_slots, slot);
            pl_fail(p, st->err);
            break;
        }
        atomic_fetch_add(&p->sets_taken, 1);
        pl_dispatch(p, j);
    }
    pl_dispatch(p, (job){.slot = -1});
    atomic_store(&p->stage_done, 1);
    return NULL;
}
