/* step_render.c - the render step: the stitched panorama from the rig.
 * After the demosaic (which then writes the cameras as RGB for it), every
 * pixel of the panorama is taken from the cameras that see it through the
 * rig's camera model (kernels/render.h: one resampling, blend, photometry
 * and YUV in one pass), into the slot's picture the encoders get.
 *
 * It owns the rig in force: the render plan (host) and its prepared copy
 * in the backend, the gain compensation's filter, and the seams' state.
 * A reload (a rewritten .pto, another blend or gain setting) builds the
 * new plan on the main thread and hands it over under `lock`; the stage
 * thread takes it at the start of a set, so no set waits and none is
 * dropped. blend = seam or multiband places the seams on a worker thread from one
 * set's camera pictures (the first after start or a reload): until they
 * are placed the seams run down the middle of each overlap.
 *
 * Absent without a rig or with panorama.enabled = false. */
#include "pipeline_int.h"
#include "render.h"
#include "settings_rig.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a rig makes: a plan and the settings it was built from. */
typedef struct render_rig {
    pc_rig rig;
    pc_render_plan *plan;
    pc_render_options opt;
    int gain_comp;
    double gain_smoothing_s;
    int seams_placed;      /* blend = seam: placed on a set's pictures (else down the middles) */
    char name[PC_PATH_LEN];
} render_rig;

typedef struct step_render {
    const pl_step_env *env;
    int w, h;              /* the panorama picture (constant) */
    pc_pixfmt in_fmt;      /* what the demosaic writes for it */
    /* stage thread */
    render_rig *cur;
    pc_render_dev *rd;
    pc_render_gain_filter gf;
    int measured;          /* a measurement is queued on the last slot */
    uint64_t sets;
    /* seams: a worker places them from one set's pictures */
    int need_seams;        /* stage thread: download the next set's cameras for it */
    int seam_slot;         /* the slot whose download the worker waits for, -1 none */
    pc_picture seam_pic;   /* host copy of the stacked cameras (pinned) */
    pthread_t seam_thr;
    int seam_running;      /* stage thread: a worker was started and not joined */
    atomic_int seam_done;  /* the worker has finished (handed its rig over or given up) */
    /* handed over under lock: a new rig (reload or seams placed) */
    pthread_mutex_t lock;
    render_rig *next;
    char describe[512];    /* under lock */
} step_render;

static void rig_free(render_rig *r)
{
    if (!r)
        return;
    pc_render_plan_free(r->plan);
    free(r);
}

/* Builds the plan of rig at w x h with the settings' blend (any thread).
 * NULL with err on failure. */
static render_rig *rig_build(const pc_settings *s, const pc_rig *rig, int w, int h, char *err, size_t errlen)
{
    render_rig *r = calloc(1, sizeof *r);
    pc_rig_photometry *photo = malloc(sizeof *photo);
    if (!r || !photo) {
        free(r);
        free(photo);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->rig = *rig;
    snprintf(r->name, sizeof r->name, "%s", s->panorama.rig);
    pc_render_options_default(&r->opt);
    switch (s->panorama.blend) {
    case PC_BLEND_SEAM: r->opt.blend = PC_RENDER_SEAM; break;
    case PC_BLEND_MULTIBAND: r->opt.blend = PC_RENDER_MULTIBAND; break;
    default: r->opt.blend = PC_RENDER_FEATHER; break;
    }
    r->gain_comp = s->panorama.gain_compensation;
    r->gain_smoothing_s = s->panorama.gain_smoothing_s;
    pc_rig_photometry_build(rig, photo);
    pc_view_model view;
    pc_rig_panorama_view(rig, w, h, &view);
    int rc = pc_render_plan_build(&r->plan, rig, &view, photo, &r->opt, err, errlen);
    free(photo);
    if (rc) {
        free(r);
        return NULL;
    }
    return r;
}

static const char *proj_name(int proj)
{
    return proj == PC_PROJ_CYLINDRICAL ? "cylindrical" : proj == PC_PROJ_EQUIRECT ? "equirectangular" : "rectilinear";
}

static void set_describe(step_render *r, const render_rig *rr, const char *seams)
{
    const char *base = strrchr(rr->name, '/');
    pthread_mutex_lock(&r->lock);
    snprintf(r->describe, sizeof r->describe, "%s %dx%d from %s, %s%s%s, gains %s", proj_name(rr->rig.pano.proj),
             r->w, r->h, base ? base + 1 : rr->name, pc_render_blend_name(rr->opt.blend), seams[0] ? " " : "", seams,
             rr->gain_comp ? "compensated" : "as the .pto says");
    pthread_mutex_unlock(&r->lock);
}

static int render_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    pipeline *p = env->p;
    if (!p || !p->rig || !p->rig->have_rig || !pc_settings_stitching(env->s))
        return PL_STEP_ABSENT;
    step_render *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "render: out of memory");
        return -1;
    }
    *priv = r;
    r->env = env;
    r->seam_slot = -1;
    pthread_mutex_init(&r->lock, NULL);
    /* the panorama's size: the .pto's (or panorama.width), capped to what
     * the encoder takes (NVENC when the encoder is auto and it opens) */
    int nvenc = strcmp(env->s->encode.encoder, "auto") == 0
                    ? pc_encoder_opens(env->s->encode.codec == PC_CODEC_H264 ? "h264_nvenc" : "hevc_nvenc")
                    : -1;
    char why[512];
    int capped = pc_settings_panorama_size(env->s, &p->rig->rig, nvenc, &r->w, &r->h, why, sizeof why);
    if (capped < 0) {
        snprintf(err, errlen, "panorama: %s", why);
        return -1;
    }
    pc_log(env->log, capped ? PC_LOG_NOTICE : PC_LOG_INFO, "panorama: %dx%d, %s", r->w, r->h, why);
    if (!(r->cur = rig_build(env->s, &p->rig->rig, r->w, r->h, err, errlen)))
        return -1;
    r->need_seams = r->cur->opt.blend != PC_RENDER_FEATHER; /* seam, multiband: placed on a set */
    /* the demosaic writes the cameras as RGB for the renderer */
    r->in_fmt = PC_FMT_RGBX32; /* 4-byte texels: the GPU samples them through its texture units */
    io->in.fmt = r->in_fmt;
    io->nout = 1;
    io->out[0] = (pl_pic_desc){r->w, r->h, PL_FMT_ANY, "panorama"};
    set_describe(r, r->cur, r->need_seams ? "(down the overlaps' middles until placed)" : "");
    return 0;
}

static void filter_init(step_render *r, const render_rig *rr)
{
    /* one update per set: alpha from the time constant, at most 1 % a set */
    double period = 1.0 / (r->env->fps > 0 ? r->env->fps : 50.0);
    double tc = rr->gain_smoothing_s > 0 ? rr->gain_smoothing_s : 2.0;
    pc_render_gain_filter_init(&r->gf, rr->rig.ncam, (float)(1.0 - exp(-period / tc)), 0.01f);
}

static int render_start(void *priv, const pl_step_env *env, const pl_step_io *io, char *err, size_t errlen)
{
    step_render *r = priv;
    if (pc_backend_render_prepare(env->be, r->cur->plan, &r->rd, err, errlen))
        return -1;
    filter_init(r, r->cur);
    if (r->need_seams &&
        pc_backend_host_picture_alloc(pc_backend_get_ops(env->be), r->in_fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED,
                                      env->width, env->height, &r->seam_pic, err, errlen))
        return -1;
    return 0;
}

/* The seams' worker: a plan like the one in force with its seams placed
 * on the downloaded pictures, handed over as the next rig. */
static void *seam_worker(void *arg)
{
    step_render *r = arg;
    char err[512];
    int64_t t0 = pc_now_ns();
    render_rig *nr = calloc(1, sizeof *nr);
    pc_rig_photometry *photo = malloc(sizeof *photo);
    int ok = 0;
    if (nr && photo) {
        pthread_mutex_lock(&r->lock); /* the stage thread swaps cur under it */
        *nr = *r->cur;
        pthread_mutex_unlock(&r->lock);
        nr->plan = NULL;
        pc_rig_photometry_build(&nr->rig, photo);
        pc_view_model view;
        pc_rig_panorama_view(&nr->rig, r->w, r->h, &view);
        ok = pc_render_plan_build(&nr->plan, &nr->rig, &view, photo, &nr->opt, err, sizeof err) == 0 &&
             pc_render_plan_place_seams(nr->plan, &r->seam_pic, err, sizeof err) == 0;
        nr->seams_placed = ok;
    } else {
        snprintf(err, sizeof err, "out of memory");
    }
    free(photo);
    if (!ok) {
        pc_log(r->env->log, PC_LOG_ERR, "panorama: placing the seams failed: %s; they stay down the overlaps' "
               "middles", err);
        rig_free(nr);
        nr = NULL;
    } else {
        pc_log(r->env->log, PC_LOG_INFO, "panorama: seams placed where the cameras agree (%.0f ms)",
               (pc_now_ns() - t0) / 1e6);
        pthread_mutex_lock(&r->lock);
        if (!r->next) /* a reload's rig wins: its own seams come next */
            r->next = nr, nr = NULL;
        pthread_mutex_unlock(&r->lock);
        rig_free(nr);
    }
    atomic_store(&r->seam_done, 1);
    return NULL;
}

/* Stage thread: a new rig handed over (reload, seams) becomes the one in
 * force: prepared in the backend, the old one freed. */
static void take_next(step_render *r)
{
    pthread_mutex_lock(&r->lock);
    render_rig *nr = r->next;
    r->next = NULL;
    pthread_mutex_unlock(&r->lock);
    if (!nr)
        return;
    char err[512];
    pc_render_dev *rd;
    if (pc_backend_render_prepare(r->env->be, nr->plan, &rd, err, sizeof err)) {
        pc_log(r->env->log, PC_LOG_ERR, "panorama: the new rig %s cannot be prepared: %s; keeping %s", nr->name, err,
               r->cur->name);
        rig_free(nr);
        return;
    }
    pc_backend_render_free(r->env->be, r->rd);
    pthread_mutex_lock(&r->lock);
    render_rig *old = r->cur;
    r->cur = nr;
    pthread_mutex_unlock(&r->lock);
    rig_free(old);
    r->rd = rd;
    r->measured = 0;
    if (r->gf.ncam != nr->rig.ncam || !nr->gain_comp)
        filter_init(r, nr);
    pc_backend_render_set_gains(r->env->be, r->rd, (const float(*)[3])r->gf.g, err, sizeof err);
    /* a reload's rig with blend = seam gets its seams from its first set */
    r->need_seams = nr->opt.blend != PC_RENDER_FEATHER && !nr->seams_placed;
    if (!nr->seams_placed)
        pc_log(r->env->log, PC_LOG_NOTICE, "panorama: rig %s in force from frame set %" PRIu64, nr->name, r->sets);
    set_describe(r, nr, nr->opt.blend == PC_RENDER_FEATHER ? "" : nr->seams_placed ? "(placed where the cameras agree)"
                                                                                : "(down the overlaps' middles until placed)");
}

static int render_run(void *priv, pl_set *set)
{
    step_render *r = priv;
    pc_backend *be = r->env->be;
    char e[512];
    take_next(r);
    /* gain compensation: the last set's overlaps (its slot was waited
     * for) -> solved gains -> filtered -> this set's render */
    if (r->cur->gain_comp && r->measured) {
        pc_render_stats st;
        float target[PC_RENDER_MAX_CAMERAS][3];
        if (pc_backend_render_stats(be, r->rd, &st, e, sizeof e) == 0) {
            pc_render_gains_solve(&st, r->cur->rig.ncam, target);
            pc_render_gain_filter_update(&r->gf, (const float(*)[3])target);
            if (pc_backend_render_set_gains(be, r->rd, (const float(*)[3])r->gf.g, e, sizeof e))
                goto fail;
        }
    }
    if (pc_backend_render(be, set->slot, r->rd, set->in, set->out[0], e, sizeof e))
        goto fail;
    r->measured = 0;
    if (r->cur->gain_comp) {
        if (pc_backend_render_measure(be, set->slot, r->rd, set->in, e, sizeof e))
            goto fail;
        r->measured = 1;
    }
    /* seams: a finished worker is joined; the cameras of the set
     * downloaded last time (its slot was waited for) go to a new one */
    if (r->seam_running && atomic_load(&r->seam_done)) {
        pthread_join(r->seam_thr, NULL);
        r->seam_running = 0;
    }
    if (r->seam_slot >= 0 && !r->seam_running) {
        atomic_store(&r->seam_done, 0);
        if (pthread_create(&r->seam_thr, NULL, seam_worker, r) == 0)
            r->seam_running = 1;
        else
            pc_log(r->env->log, PC_LOG_ERR, "panorama: cannot start a thread to place the seams");
        r->seam_slot = -1;
    }
    if (r->need_seams && !r->seam_running && r->seam_slot < 0) {
        if (pc_backend_download(be, set->slot, set->in, &r->seam_pic, e, sizeof e))
            goto fail;
        r->seam_slot = set->slot;
        r->need_seams = 0;
    }
    r->sets++;
    return 0;
fail:
    snprintf(set->err, set->errlen, "render (panorama %dx%d, %s backend): %s", r->w, r->h, pc_backend_name(be), e);
    return -1;
}

/* Main thread: a rewritten .pto, another blend or gain setting: the new
 * plan is built here and taken by the next set. */
static int render_reload(void *priv, const pc_settings *s, unsigned live, char *msg, size_t msglen)
{
    step_render *r = priv;
    if (!(live & (PC_LIVE_RIG | PC_LIVE_BLEND)))
        return PL_RELOAD_NONE;
    pc_rig_setup *rs = calloc(1, sizeof *rs);
    pc_diag *dg = calloc(1, sizeof *dg);
    int rc = -1;
    if (!rs || !dg) {
        snprintf(msg, msglen, "panorama: out of memory");
        goto out;
    }
    pc_diag_init(dg);
    if (pc_settings_check_rig(s, rs, dg) || !rs->have_rig) {
        snprintf(msg, msglen, "panorama: the rig %s is refused (%s); keeping the one in force", s->panorama.rig,
                 dg->count ? dg->item[0].msg : "not read");
        goto out;
    }
    int w, h;
    char why[512];
    int nvenc = strstr(s->encode.encoder, "nvenc") ? 1 : -1;
    if (pc_settings_panorama_size(s, &rs->rig, nvenc, &w, &h, why, sizeof why) < 0 || abs(h * r->w - w * r->h) > w) {
        snprintf(msg, msglen, "panorama: %s makes a panorama of another shape (%dx%d at this width, running %dx%d); "
                 "that needs a restart", s->panorama.rig, r->w, (int)lround((double)r->w * h / w), r->w, r->h);
        rc = PL_RELOAD_RESTART;
        goto out;
    }
    render_rig *nr = rig_build(s, &rs->rig, r->w, r->h, msg, msglen);
    if (!nr)
        goto out;
    pthread_mutex_lock(&r->lock);
    render_rig *old = r->next;
    r->next = nr;
    pthread_mutex_unlock(&r->lock);
    rig_free(old);
    snprintf(msg, msglen, "panorama: rig %s (%s, gains %s) from the next frame set", s->panorama.rig,
             pc_render_blend_name(nr->opt.blend), nr->gain_comp ? "compensated" : "as the .pto says");
    rc = PL_RELOAD_LIVE;
out:
    free(rs);
    free(dg);
    return rc;
}

static void render_describe(void *priv, char *buf, size_t len)
{
    step_render *r = priv;
    pthread_mutex_lock(&r->lock);
    snprintf(buf, len, "%s", r->describe);
    pthread_mutex_unlock(&r->lock);
}

static void render_close(void *priv)
{
    step_render *r = priv;
    if (!r)
        return;
    if (r->seam_running)
        pthread_join(r->seam_thr, NULL);
    if (r->rd)
        pc_backend_render_free(r->env->be, r->rd);
    rig_free(r->cur);
    rig_free(r->next);
    if (r->seam_pic.plane[0])
        pc_backend_host_picture_free(pc_backend_get_ops(r->env->be), &r->seam_pic);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

const pl_step_ops pl_step_render = {
    .name = "render",
    .flags = PL_STEP_READS | PL_STEP_WRITES,
    .prepare = render_prepare,
    .start = render_start,
    .run = render_run,
    .reload = render_reload,
    .describe = render_describe,
    .close = render_close,
};
