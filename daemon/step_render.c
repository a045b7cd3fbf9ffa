/* step_render.c - the render step: the stitched panorama and the virtual
 * cameras from the rig. After the demosaic (which then writes the cameras
 * as RGB for it), every pixel of each picture is taken from the cameras
 * that see it through the rig's camera model (render/render.h: one
 * resampling, blend, photometry and YUV in one pass), into the slot's
 * pictures the encoders get:
 *
 *   out[0]            the panorama ("panorama"), or without one (panorama
 *                     .enabled = false) the stacked cameras ("cameras")
 *   out[1..K]         each virtual camera ("vcam:NAME"), rendered directly
 *                     from the cameras at the pose its motion reached this
 *                     set (pc_render_plan_set_view when it moved)
 *   out[K+1]          the unstitched cameras for recording ("unstitched",
 *                     panorama.unstitched_outputs), converted from the
 *                     demosaic's RGB (pc_backend_convert)
 *
 * The views' motion is stepped here once per set (pl_vcams_step, time by
 * the sets' numbers); the follow mode's activity map is made from a small
 * panorama (1/8 of the .pto's size) rendered after the pictures and read
 * by the next set, so its cost never sits before an encoder.
 *
 * It owns the rig in force: the render plans (host) and their prepared
 * copies in the backend, the gain compensation's filter (the views take
 * the panorama's gains), the seams' state, the activity model. A reload
 * (a rewritten .pto, another blend or gain setting) builds the new plans
 * on the main thread and hands them over under `lock`; the stage thread
 * takes them at the start of a set, so no set waits and none is dropped.
 * blend = seam or multiband places the panorama's seams on a worker
 * thread from one set's camera pictures (the first after start or a
 * reload): until they are placed the seams run down the middle of each
 * overlap.
 *
 * Absent without a rig, or with neither a panorama nor virtual cameras. */
#include "pipeline_int.h"
#include "activity.h"
#include "render.h"
#include "settings_rig.h"
#include "vcams.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The follow mode's activity map: the parameters panocap-eval's follow
 * figures were measured with (tools/eval_follow.c), on a panorama of 1/8
 * the .pto's size (shrunk further where its cells would not fit the
 * follow grid). */
static const pc_activity_params act_par = {.shift = 6, .threshold = 12, .cw = 8, .ch = 8};

/* What a rig makes: its plans and the settings they were built from. */
typedef struct render_rig {
    pc_rig rig;
    uint64_t gen;          /* which build (a seam placement is for one) */
    pc_render_plan *plan;  /* the panorama; without one, the small panorama (gains, activity) */
    pc_render_plan *small; /* with a panorama and views: the follow mode's small panorama */
    int sw, sh;            /* the small panorama's size */
    int nviews;
    pc_render_plan *view[PC_MAX_VCAMS]; /* moved by set_view on the stage thread */
    pc_vcam_pose at[PC_MAX_VCAMS];      /* where each points now */
    pc_render_options opt;
    int gain_comp;
    double gain_smoothing_s;
    int seams_placed;      /* blend = seam: placed on a set's pictures (else down the middles) */
    char name[PC_PATH_LEN];
} render_rig;

/* A virtual camera's picture (constant after prepare). */
typedef struct render_view {
    char name[PC_NAME_LEN];
    int w, h;
    int out;               /* its index in set->out */
    double min_hfov;       /* the narrowest it gets: set_view samples the borders for it once */
} render_view;

typedef struct step_render {
    const pl_step_env *env;
    pl_vcams *vcams;       /* NULL: no views */
    int stitch;            /* out[0] is the panorama (else the stacked cameras, converted) */
    int w, h;              /* the panorama picture (constant; stitch only) */
    int unstitched;        /* out[] index of the unstitched cameras, 0 = none */
    int nviews;
    render_view view[PC_MAX_VCAMS];
    pc_pixfmt in_fmt;      /* what the demosaic writes for it */
    /* stage thread */
    render_rig *cur;
    pc_render_dev *rd;                /* cur->plan's */
    pc_render_dev *small_rd;          /* cur->small's (NULL: rd renders the small panorama) */
    pc_render_dev *vrd[PC_MAX_VCAMS]; /* cur->view[i]'s */
    pc_render_gain_filter gf;
    int measured;          /* a measurement is queued on the last slot */
    uint64_t sets;
    uint64_t last_index;   /* the last set's number (the views' time) */
    int have_last;
    pc_vcam_pose pose[PC_MAX_VCAMS];
    /* the follow mode's activity map, from the small panorama */
    pc_activity_dev *act;
    pc_picture small_pic;  /* NV12 in the backend, sw x sh */
    uint32_t *counts;      /* host (pinned): the last set's cells */
    int counts_ready;      /* counts are the last set's */
    int sw, sh;            /* what small_pic and counts are sized for */
    int act_failed;        /* the activity map failed: logged once, the views hold */
    /* seams: a worker places them from one set's pictures */
    int need_seams;        /* stage thread: download the next set's cameras for it */
    int seam_slot;         /* the slot whose download the worker waits for, -1 none */
    pc_picture seam_pic;   /* host copy of the stacked cameras (pinned) */
    pthread_t seam_thr;
    int seam_running;      /* stage thread: a worker was started and not joined */
    atomic_int seam_done;  /* the worker has finished (handed its plan over or given up) */
    /* handed over under lock: a new rig (reload), a seam-placed plan */
    pthread_mutex_t lock;
    render_rig *next;
    pc_render_plan *placed;/* the panorama of rig build placed_gen, its seams placed */
    uint64_t placed_gen;
    uint64_t gens;         /* builds so far */
    char describe[512];    /* under lock */
} step_render;

static void rig_free(render_rig *r)
{
    if (!r)
        return;
    pc_render_plan_free(r->plan);
    pc_render_plan_free(r->small);
    for (int i = 0; i < r->nviews; i++)
        pc_render_plan_free(r->view[i]);
    free(r);
}

/* The small panorama of rig: 1/8 of its .pto size, smaller where its
 * cells would be more than the follow grid holds. */
static void small_size(const pc_rig *rig, int *w, int *h)
{
    int ow, oh;
    pc_rig_output_size(rig, &ow, &oh);
    int d = 8;
    while (((ow / d + act_par.cw - 1) / act_par.cw) * ((oh / d + act_par.ch - 1) / act_par.ch) > PC_FOLLOW_MAX_CELLS)
        d *= 2;
    *w = (ow / d) & ~1;
    *h = (oh / d) & ~1;
    if (*w < 16)
        *w = 16;
    if (*h < 16)
        *h = 16;
}

/* The follow mode's grid: the cells of rr's small panorama, handed to
 * the views (at set-up, and for each new rig). 0, or -1 with err. */
static int follow_grid(step_render *r, const render_rig *rr, char *err, size_t errlen)
{
    pc_follow_grid *grid = malloc(sizeof *grid);
    pc_view_model sv;
    pc_rig_panorama_view(&rr->rig, rr->sw, rr->sh, &sv);
    int rc = !grid || pc_follow_grid_init(grid, &sv, act_par.cw, act_par.ch) ? -1 : 0;
    if (rc)
        snprintf(err, errlen, "virtual cameras: the follow mode's grid of %dx%d cells does not fit",
                 rr->sw / act_par.cw, rr->sh / act_par.ch);
    else
        pl_vcams_set_grid(r->vcams, grid);
    free(grid);
    return rc;
}

/* Points a view's plan at pose p (set_view; the plan's size fixed). */
static int view_point(pc_render_plan *plan, const render_view *v, pc_vcam_pose p, char *err, size_t errlen)
{
    pc_view_model vm;
    pc_rig_rect_view(v->w, v->h, p.hfov, p.pan, p.tilt, 0.0, &vm);
    return pc_render_plan_set_view(plan, &vm, err, errlen);
}

/* The sampler a plan gets for a panorama.sampler or a view's: auto is
 * bicubic on a device backend, bilinear on the CPU one (BENCHMARKS.md),
 * and bilinear with blend multiband (its pyramid samples bilinear; the
 * configuration refuses bicubic written with it). */
static pc_render_sampler sampler_of(const step_render *r, int s, int blend)
{
    if (s == PC_RENDER_SAMPLER_AUTO && blend == PC_RENDER_MULTIBAND)
        return PC_RENDER_BILINEAR;
    return pc_render_sampler_resolve((pc_render_sampler)s, pc_backend_host_threads(r->env->be) == 0);
}

/* Builds the plans of rig with the settings' blend (any thread): the
 * panorama (or the small one), the small one, each view at poses[i].
 * NULL with err on failure. */
static render_rig *rig_build(step_render *r, const pc_settings *s, const pc_rig *rig, const pc_vcam_pose *poses,
                             char *err, size_t errlen)
{
    render_rig *rr = calloc(1, sizeof *rr);
    pc_rig_photometry *photo = malloc(sizeof *photo);
    if (!rr || !photo) {
        free(rr);
        free(photo);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    rr->rig = *rig;
    snprintf(rr->name, sizeof rr->name, "%s", s->panorama.rig);
    pc_render_options_default(&rr->opt);
    /* without a panorama: measured only, feather */
    rr->opt.blend = r->stitch ? (pc_render_blend)s->panorama.blend : PC_RENDER_FEATHER;
    /* multiband with bicubic is refused by the config check */
    rr->opt.sampler = r->stitch ? sampler_of(r, s->panorama.sampler, s->panorama.blend) : PC_RENDER_BILINEAR;
    if (rr->opt.blend == PC_RENDER_MULTIBAND)
        rr->opt.sampler = PC_RENDER_BILINEAR; /* auto */
    rr->gain_comp = s->panorama.gain_compensation;
    rr->gain_smoothing_s = s->panorama.gain_smoothing_s;
    pthread_mutex_lock(&r->lock);
    rr->gen = ++r->gens;
    pthread_mutex_unlock(&r->lock);
    small_size(rig, &rr->sw, &rr->sh);
    pc_rig_photometry_build(rig, photo);
    pc_view_model view;
    pc_rig_panorama_view(rig, r->stitch ? r->w : rr->sw, r->stitch ? r->h : rr->sh, &view);
    int rc = pc_render_plan_build(&rr->plan, rig, &view, photo, &rr->opt, err, errlen);
    pc_render_options feather;
    pc_render_options_default(&feather); /* moving views and the small panorama: feather, no maps */
    if (!rc && r->stitch && r->nviews) {
        pc_rig_panorama_view(rig, rr->sw, rr->sh, &view);
        rc = pc_render_plan_build(&rr->small, rig, &view, photo, &feather, err, errlen);
    }
    for (int i = 0; !rc && i < r->nviews; i++) {
        const render_view *v = &r->view[i];
        pc_vcam_pose narrow = poses[i];
        narrow.hfov = v->min_hfov > 0 && v->min_hfov < poses[i].hfov ? v->min_hfov : poses[i].hfov;
        char e[400] = "";
        pc_rig_rect_view(v->w, v->h, poses[i].hfov, poses[i].pan, poses[i].tilt, 0.0, &view);
        pc_render_options vo = feather;
        vo.sampler = sampler_of(r, i < s->vcam_count ? s->vcams[i].sampler : PC_RENDER_SAMPLER_AUTO, -1);
        rc = pc_render_plan_build(&rr->view[i], rig, &view, photo, &vo, e, sizeof e);
        rr->nviews = i + (rr->view[i] != NULL);
        /* the first set_view samples the cameras' borders for the
         * narrowest view, so that no frame pays for it */
        if (!rc)
            rc = view_point(rr->view[i], v, narrow, e, sizeof e) || view_point(rr->view[i], v, poses[i], e, sizeof e);
        if (rc)
            snprintf(err, errlen, "virtual camera %s: %s", v->name, e);
        rr->at[i] = poses[i];
    }
    free(photo);
    if (rc) {
        rig_free(rr);
        return NULL;
    }
    return rr;
}

/* The backend's copies of rr's plans (stage thread, or start). All or
 * none: 0, or -1 with err and nothing prepared. */
static int rig_prepare(step_render *r, const render_rig *rr, pc_render_dev **rd, pc_render_dev **small_rd,
                       pc_render_dev **vrd, char *err, size_t errlen)
{
    pc_backend *be = r->env->be;
    *rd = *small_rd = NULL;
    memset(vrd, 0, sizeof *vrd * PC_MAX_VCAMS);
    int rc = pc_backend_render_prepare(be, rr->plan, rd, err, errlen);
    if (!rc && rr->small)
        rc = pc_backend_render_prepare(be, rr->small, small_rd, err, errlen);
    for (int i = 0; !rc && i < rr->nviews; i++)
        if ((rc = pc_backend_render_prepare(be, rr->view[i], &vrd[i], err, errlen))) {
            char e[400];
            snprintf(e, sizeof e, "%s", err);
            snprintf(err, errlen, "virtual camera %s: %s", r->view[i].name, e);
        }
    if (rc) {
        pc_backend_render_free(be, *rd);
        pc_backend_render_free(be, *small_rd);
        for (int i = 0; i < PC_MAX_VCAMS; i++)
            pc_backend_render_free(be, vrd[i]);
        *rd = *small_rd = NULL;
        memset(vrd, 0, sizeof *vrd * PC_MAX_VCAMS);
        return -1;
    }
    return 0;
}

static void rds_free(step_render *r)
{
    pc_backend *be = r->env->be;
    pc_backend_render_free(be, r->rd);
    pc_backend_render_free(be, r->small_rd);
    for (int i = 0; i < PC_MAX_VCAMS; i++)
        pc_backend_render_free(be, r->vrd[i]);
    r->rd = r->small_rd = NULL;
    memset(r->vrd, 0, sizeof r->vrd);
}

static void set_describe(step_render *r, const render_rig *rr, const char *seams)
{
    const char *base = strrchr(rr->name, '/');
    char views[96] = "";
    int cubic = 0;
    for (int i = 0; i < rr->nviews; i++)
        cubic += rr->view[i]->sampler == PC_RENDER_BICUBIC;
    const char *cub = pc_render_sampler_name(PC_RENDER_BICUBIC), *lin = pc_render_sampler_name(PC_RENDER_BILINEAR);
    char mixed[40];
    snprintf(mixed, sizeof mixed, "%s and %s", cub, lin);
    if (r->nviews)
        snprintf(views, sizeof views, "; %d virtual camera%s (%s)", r->nviews, r->nviews == 1 ? "" : "s",
                 cubic == rr->nviews ? cub : cubic ? mixed : lin);
    pthread_mutex_lock(&r->lock);
    if (r->stitch)
        snprintf(r->describe, sizeof r->describe, "%s %dx%d from %s, %s%s%s, %s, gains %s%s%s",
                 pc_proj_name(rr->rig.pano.proj), r->w, r->h, base ? base + 1 : rr->name,
                 pc_render_blend_name(rr->opt.blend), seams[0] ? " " : "", seams,
                 pc_render_sampler_name(rr->opt.sampler),
                 rr->gain_comp ? "compensated" : "as the .pto says", views,
                 r->unstitched ? "; unstitched cameras" : "");
    else
        snprintf(r->describe, sizeof r->describe, "the stacked cameras (no panorama) and, from %s, gains %s%s",
                 base ? base + 1 : rr->name, rr->gain_comp ? "compensated" : "as the .pto says", views);
    pthread_mutex_unlock(&r->lock);
}

static int render_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    pipeline *p = env->p;
    if (!p || !p->rig || !p->rig->have_rig)
        return PL_STEP_ABSENT;
    int stitch = pc_settings_stitching(env->s);
    int nviews = p->vcams ? pl_vcams_count(p->vcams) : 0;
    if (!stitch && !nviews)
        return PL_STEP_ABSENT;
    step_render *r = calloc(1, sizeof *r);
    pl_vcam_status *st = calloc(PC_MAX_VCAMS, sizeof *st);
    if (!r || !st) {
        free(r);
        free(st);
        snprintf(err, errlen, "render: out of memory");
        return -1;
    }
    *priv = r;
    r->env = env;
    r->seam_slot = -1;
    r->stitch = stitch;
    pthread_mutex_init(&r->lock, NULL);
    int rc = -1;
    if (stitch) {
        /* the panorama's size: the .pto's (or panorama.width), capped to
         * what the encoder takes (NVENC when the encoder is auto and it
         * opens) */
        int nvenc = strcmp(env->s->encode.encoder, "auto") == 0
                        ? pc_encoder_opens(env->s->encode.codec == PC_CODEC_H264 ? "h264_nvenc" : "hevc_nvenc")
                        : -1;
        char why[512];
        int capped = pc_settings_panorama_size(env->s, &p->rig->rig, nvenc, &r->w, &r->h, why, sizeof why);
        if (capped < 0) {
            snprintf(err, errlen, "panorama: %s", why);
            goto out;
        }
        pc_log(env->log, capped ? PC_LOG_NOTICE : PC_LOG_INFO, "panorama: %dx%d, %s", r->w, r->h, why);
    }
    /* the pictures: the panorama or the cameras, the views, the unstitched cameras */
    io->nout = 0;
    io->out[io->nout++] = stitch ? (pl_pic_desc){r->w, r->h, PL_FMT_ANY, "panorama"}
                                 : (pl_pic_desc){env->width, env->height, PL_FMT_ANY, "cameras"};
    if (nviews) {
        r->vcams = p->vcams;
        r->nviews = pl_vcams_status(p->vcams, st, PC_MAX_VCAMS);
    }
    int want = 1 + r->nviews + (stitch && env->s->panorama.unstitched.count > 0);
    if (want > PL_MAX_PICTURES) {
        snprintf(err, errlen, "render: %d pictures (the panorama, %d virtual cameras, the unstitched cameras); at "
                 "most %d", want, r->nviews, PL_MAX_PICTURES);
        goto out;
    }
    for (int i = 0; i < r->nviews; i++) {
        render_view *v = &r->view[i];
        snprintf(v->name, sizeof v->name, "%s", st[i].name);
        v->w = st[i].width;
        v->h = st[i].height;
        v->min_hfov = st[i].min_hfov;
        v->out = io->nout;
        r->pose[i] = st[i].pose;
        pl_pic_desc *d = &io->out[io->nout++];
        *d = (pl_pic_desc){v->w, v->h, PL_FMT_ANY, ""};
        snprintf(d->name, sizeof d->name, "vcam:%s", v->name);
    }
    if (stitch && env->s->panorama.unstitched.count) {
        r->unstitched = io->nout;
        io->out[io->nout++] = (pl_pic_desc){env->width, env->height, PL_FMT_ANY, "unstitched"};
    }
    if (!(r->cur = rig_build(r, env->s, &p->rig->rig, r->pose, err, errlen)))
        goto out;
    r->need_seams = r->cur->opt.blend != PC_RENDER_FEATHER; /* seam, multiband: placed on a set */
    /* the demosaic writes the cameras as RGB for the renderer */
    r->in_fmt = PC_FMT_RGBX32; /* 4-byte texels: the GPU samples them through its texture units */
    io->in.fmt = r->in_fmt;
    if (r->nviews && follow_grid(r, r->cur, err, errlen))
        goto out;
    set_describe(r, r->cur, r->need_seams ? "(down the overlaps' middles until placed)" : "");
    rc = 0;
out:
    free(st);
    return rc;
}

static void filter_init(step_render *r, const render_rig *rr)
{
    /* one update per set: alpha from the time constant, at most 1 % a set */
    double period = 1.0 / (r->env->fps > 0 ? r->env->fps : 50.0);
    double tc = rr->gain_smoothing_s > 0 ? rr->gain_smoothing_s : 2.0;
    pc_render_gain_filter_init(&r->gf, rr->rig.ncam, (float)(1.0 - exp(-period / tc)), 0.01f);
}

/* The follow mode's small picture and counts for rr's small panorama
 * (again when another rig changes its size; the background starts
 * afresh). Stage thread or start. */
static int follow_alloc(step_render *r, const render_rig *rr, char *err, size_t errlen)
{
    if (!r->nviews || (r->sw == rr->sw && r->sh == rr->sh && r->counts))
        return 0;
    pc_backend *be = r->env->be;
    const pc_backend_ops *ops = pc_backend_get_ops(be);
    pc_backend_activity_close(be, r->act);
    r->act = NULL;
    r->counts_ready = 0;
    if (r->small_pic.plane[0])
        pc_backend_picture_free(be, &r->small_pic);
    memset(&r->small_pic, 0, sizeof r->small_pic);
    pc_backend_host_free(ops, r->counts);
    r->counts = NULL;
    r->sw = r->sh = 0;
    size_t n = (size_t)pc_activity_cells(rr->sw, rr->sh, &act_par);
    if (pc_backend_picture_alloc(be, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, rr->sw, rr->sh, &r->small_pic,
                                 err, errlen))
        return -1;
    if (!(r->counts = pc_backend_host_alloc(ops, n * sizeof *r->counts))) {
        snprintf(err, errlen, "virtual cameras: out of memory for %zu activity cells", n);
        return -1;
    }
    r->sw = rr->sw;
    r->sh = rr->sh;
    return 0;
}

static int render_start(void *priv, const pl_step_env *env, const pl_step_io *io, char *err, size_t errlen)
{
    (void)io;
    step_render *r = priv;
    if (rig_prepare(r, r->cur, &r->rd, &r->small_rd, r->vrd, err, errlen))
        return -1;
    filter_init(r, r->cur);
    if (r->need_seams &&
        pc_backend_host_picture_alloc(pc_backend_get_ops(env->be), r->in_fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED,
                                      env->width, env->height, &r->seam_pic, err, errlen))
        return -1;
    return follow_alloc(r, r->cur, err, errlen);
}

/* The seams' worker: the panorama's plan of the rig in force built again
 * with its seams placed on the downloaded pictures, handed over for that
 * rig build. */
static void *seam_worker(void *arg)
{
    step_render *r = arg;
    char err[512] = "";
    int64_t t0 = pc_now_ns();
    pc_rig_photometry *photo = malloc(sizeof *photo);
    pc_rig *rig = malloc(sizeof *rig);
    pc_render_plan *plan = NULL;
    pc_render_options opt;
    uint64_t gen = 0;
    int ok = 0;
    if (photo && rig) {
        pthread_mutex_lock(&r->lock); /* the stage thread swaps cur under it */
        *rig = r->cur->rig;
        opt = r->cur->opt;
        gen = r->cur->gen;
        pthread_mutex_unlock(&r->lock);
        pc_rig_photometry_build(rig, photo);
        pc_view_model view;
        pc_rig_panorama_view(rig, r->w, r->h, &view);
        ok = pc_render_plan_build(&plan, rig, &view, photo, &opt, err, sizeof err) == 0 &&
             pc_render_plan_place_seams(plan, &r->seam_pic, err, sizeof err) == 0;
    } else {
        snprintf(err, sizeof err, "out of memory");
    }
    free(photo);
    free(rig);
    if (!ok) {
        pc_log(r->env->log, PC_LOG_ERR, "panorama: placing the seams failed: %s; they stay down the overlaps' "
               "middles", err);
        pc_render_plan_free(plan);
    } else {
        pc_log(r->env->log, PC_LOG_INFO, "panorama: seams placed where the cameras agree (%.0f ms)",
               (pc_now_ns() - t0) / 1e6);
        pthread_mutex_lock(&r->lock);
        pc_render_plan *old = r->placed;
        r->placed = plan;
        r->placed_gen = gen;
        pthread_mutex_unlock(&r->lock);
        pc_render_plan_free(old);
    }
    atomic_store(&r->seam_done, 1);
    return NULL;
}

/* Stage thread: a seam-placed panorama for the rig in force replaces its
 * panorama plan (one for a rig since replaced is dropped). */
static void take_placed(step_render *r)
{
    pthread_mutex_lock(&r->lock);
    pc_render_plan *plan = r->placed;
    uint64_t gen = r->placed_gen;
    r->placed = NULL;
    pthread_mutex_unlock(&r->lock);
    if (!plan)
        return;
    char err[512] = "";
    pc_render_dev *rd;
    if (gen != r->cur->gen || pc_backend_render_prepare(r->env->be, plan, &rd, err, sizeof err)) {
        if (err[0])
            pc_log(r->env->log, PC_LOG_ERR, "panorama: the seam-placed plan cannot be prepared: %s; the seams stay "
                   "down the overlaps' middles", err);
        pc_render_plan_free(plan);
        return;
    }
    pc_backend_render_set_gains(r->env->be, rd, (const float(*)[3])r->gf.g, err, sizeof err);
    pc_backend_render_free(r->env->be, r->rd);
    r->rd = rd;
    r->measured = 0;
    pthread_mutex_lock(&r->lock);
    pc_render_plan *old = r->cur->plan;
    r->cur->plan = plan;
    r->cur->seams_placed = 1;
    pthread_mutex_unlock(&r->lock);
    pc_render_plan_free(old);
    set_describe(r, r->cur, "(placed where the cameras agree)");
}

/* Stage thread: a new rig handed over by a reload becomes the one in
 * force: all its plans prepared in the backend, the old ones freed. */
static void take_next(step_render *r)
{
    pthread_mutex_lock(&r->lock);
    render_rig *nr = r->next;
    r->next = NULL;
    pthread_mutex_unlock(&r->lock);
    if (!nr) {
        take_placed(r);
        return;
    }
    char err[512] = "";
    pc_render_dev *rd, *small_rd, *vrd[PC_MAX_VCAMS];
    if (rig_prepare(r, nr, &rd, &small_rd, vrd, err, sizeof err) || follow_alloc(r, nr, err, sizeof err)) {
        pc_log(r->env->log, PC_LOG_ERR, "panorama: the new rig %s cannot be prepared: %s; keeping %s", nr->name, err,
               r->cur->name);
        rig_free(nr);
        return;
    }
    rds_free(r);
    r->rd = rd;
    r->small_rd = small_rd;
    memcpy(r->vrd, vrd, sizeof r->vrd);
    pthread_mutex_lock(&r->lock);
    render_rig *old = r->cur;
    r->cur = nr;
    pthread_mutex_unlock(&r->lock);
    rig_free(old);
    r->measured = 0;
    if (r->gf.ncam != nr->rig.ncam || !nr->gain_comp)
        filter_init(r, nr);
    pc_backend_render_set_gains(r->env->be, r->rd, (const float(*)[3])r->gf.g, err, sizeof err);
    for (int i = 0; i < nr->nviews; i++)
        pc_backend_render_set_gains(r->env->be, r->vrd[i], (const float(*)[3])r->gf.g, err, sizeof err);
    if (r->nviews) { /* the follow grid of the new rig's small panorama; the background starts afresh */
        if (follow_grid(r, nr, err, sizeof err))
            pc_log(r->env->log, PC_LOG_ERR, "panorama: rig %s: %s; the follow mode keeps the old grid", nr->name, err);
        pc_backend_activity_close(r->env->be, r->act);
        r->act = NULL;
        r->counts_ready = 0;
    }
    /* a reload's rig with blend = seam gets its seams from its first set */
    r->need_seams = r->stitch && nr->opt.blend != PC_RENDER_FEATHER;
    pc_log(r->env->log, PC_LOG_NOTICE, "panorama: rig %s in force from frame set %" PRIu64, nr->name, r->sets);
    set_describe(r, nr, nr->opt.blend == PC_RENDER_FEATHER ? "" : "(down the overlaps' middles until placed)");
}

/* The views: their motion stepped to this set (with the last set's
 * activity), each one that moved pointed at its new pose. */
static int views_step(step_render *r, const pl_set *set, char *e, size_t n)
{
    uint64_t idx = set->frames->index;
    double fps = r->env->fps > 0 ? r->env->fps : 25.0;
    double dt = r->have_last && idx > r->last_index ? (double)(idx - r->last_index) / fps : 1.0 / fps;
    r->last_index = idx;
    r->have_last = 1;
    pl_vcams_step(r->vcams, dt, r->counts_ready ? r->counts : NULL, r->pose);
    r->counts_ready = 0;
    render_rig *rr = r->cur;
    for (int i = 0; i < rr->nviews; i++) {
        pc_vcam_pose q = r->pose[i];
        if (q.pan == rr->at[i].pan && q.tilt == rr->at[i].tilt && q.hfov == rr->at[i].hfov)
            continue;
        char w[400] = "";
        if (view_point(rr->view[i], &r->view[i], q, w, sizeof w) ||
            pc_backend_render_update(r->env->be, r->vrd[i], rr->view[i], w, sizeof w)) {
            snprintf(e, n, "virtual camera %s at pan %.2f tilt %.2f hfov %.2f: %s", r->view[i].name, q.pan, q.tilt,
                     q.hfov, w);
            return -1;
        }
        rr->at[i] = q;
    }
    return 0;
}

/* The follow mode: the small panorama rendered after the pictures and its
 * activity counted, read by the next set. A failure is logged once and
 * the views hold (the pictures go on). */
static void follow_run(step_render *r, pl_set *set)
{
    pc_backend *be = r->env->be;
    if (!pl_vcams_want_activity(r->vcams)) {
        if (r->act) { /* follow turned off: the background starts afresh next time */
            pc_backend_activity_close(be, r->act);
            r->act = NULL;
        }
        return;
    }
    if (r->act_failed || !r->counts)
        return;
    char e[512] = "";
    int rc = r->act ? 0 : pc_backend_activity_open(be, r->sw, r->sh, &r->act, e, sizeof e);
    if (!rc)
        rc = pc_backend_render(be, set->slot, r->small_rd ? r->small_rd : r->rd, set->in, &r->small_pic, e, sizeof e);
    if (!rc)
        rc = pc_backend_activity(be, set->slot, &r->small_pic, r->act, &act_par, r->counts, e, sizeof e);
    if (rc) {
        pc_log(r->env->log, PC_LOG_ERR, "virtual cameras: the follow mode's activity map (%dx%d, %s backend) failed: "
               "%s; views in follow mode hold where they are", r->sw, r->sh, pc_backend_name(be), e);
        r->act_failed = 1;
        return;
    }
    r->counts_ready = 1;
}

static int render_run(void *priv, pl_set *set)
{
    step_render *r = priv;
    pc_backend *be = r->env->be;
    char e[512] = "";
    /* what a failure names: the picture 0 it was making, or the unstitched cameras */
    const char *what = r->stitch ? "panorama" : "cameras to YUV";
    int ww = r->stitch ? r->w : r->env->width, wh = r->stitch ? r->h : r->env->height;
    take_next(r);
    /* gain compensation: the last set's overlaps (its slot was waited
     * for) -> solved gains -> filtered -> this set's render, the views' too */
    if (r->cur->gain_comp && r->measured) {
        pc_render_stats st;
        float target[PC_RENDER_MAX_CAMERAS][3];
        if (pc_backend_render_stats(be, r->rd, &st, e, sizeof e) == 0) {
            pc_render_gains_solve(&st, r->cur->rig.ncam, target);
            pc_render_gain_filter_update(&r->gf, (const float(*)[3])target);
            if (pc_backend_render_set_gains(be, r->rd, (const float(*)[3])r->gf.g, e, sizeof e))
                goto fail;
            for (int i = 0; i < r->cur->nviews; i++)
                if (pc_backend_render_set_gains(be, r->vrd[i], (const float(*)[3])r->gf.g, e, sizeof e))
                    goto fail;
        }
    }
    if (r->nviews && views_step(r, set, e, sizeof e))
        goto fail_views;
    if (r->stitch ? pc_backend_render(be, set->slot, r->rd, set->in, set->out[0], e, sizeof e)
                  : pc_backend_convert(be, set->slot, set->in, set->out[0], e, sizeof e))
        goto fail;
    for (int i = 0; i < r->cur->nviews; i++)
        if (pc_backend_render(be, set->slot, r->vrd[i], set->in, set->out[r->view[i].out], e, sizeof e)) {
            char w[512];
            snprintf(w, sizeof w, "%s", e);
            snprintf(e, sizeof e, "virtual camera %s (%dx%d): %.400s", r->view[i].name, r->view[i].w, r->view[i].h, w);
            goto fail_views;
        }
    if (r->unstitched && pc_backend_convert(be, set->slot, set->in, set->out[r->unstitched], e, sizeof e)) {
        what = "unstitched cameras";
        ww = r->env->width;
        wh = r->env->height;
        goto fail;
    }
    r->measured = 0;
    if (r->cur->gain_comp) {
        if (pc_backend_render_measure(be, set->slot, r->rd, set->in, e, sizeof e))
            goto fail;
        r->measured = 1;
    }
    if (r->nviews)
        follow_run(r, set);
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
    snprintf(set->err, set->errlen, "render (%s %dx%d, %s backend): %s", what, ww, wh, pc_backend_name(be), e);
    return -1;
fail_views:
    snprintf(set->err, set->errlen, "render (%s backend): %s", pc_backend_name(be), e);
    return -1;
}

/* Main thread: a rewritten .pto, another blend or gain setting: the new
 * plans are built here (the views at the poses they have now) and taken
 * by the next set. */
static int render_reload(void *priv, const pc_settings *s, unsigned live, char *msg, size_t msglen)
{
    step_render *r = priv;
    if (!(live & (PC_LIVE_RIG | PC_LIVE_BLEND)))
        return PL_RELOAD_NONE;
    pc_rig_setup *rs = calloc(1, sizeof *rs);
    pc_diag *dg = calloc(1, sizeof *dg);
    pl_vcam_status *st = calloc(PC_MAX_VCAMS, sizeof *st);
    int rc = -1;
    if (!rs || !dg || !st) {
        snprintf(msg, msglen, "panorama: out of memory");
        goto out;
    }
    pc_diag_init(dg);
    if (pc_settings_check_rig(s, rs, dg) || !rs->have_rig) {
        snprintf(msg, msglen, "panorama: the rig %s is refused (%s); keeping the one in force", s->panorama.rig,
                 dg->count ? dg->item[0].msg : "not read");
        goto out;
    }
    if (r->stitch) {
        int w, h;
        char why[512];
        int nvenc = strstr(s->encode.encoder, "nvenc") ? 1 : -1;
        if (pc_settings_panorama_size(s, &rs->rig, nvenc, &w, &h, why, sizeof why) < 0 ||
            abs(h * r->w - w * r->h) > w) {
            snprintf(msg, msglen, "panorama: %s makes a panorama of another shape (%dx%d at this width, running "
                     "%dx%d); that needs a restart", s->panorama.rig, r->w, (int)lround((double)r->w * h / w), r->w,
                     r->h);
            rc = PL_RELOAD_RESTART;
            goto out;
        }
    }
    pc_vcam_pose poses[PC_MAX_VCAMS];
    int n = r->vcams ? pl_vcams_status(r->vcams, st, PC_MAX_VCAMS) : 0;
    for (int i = 0; i < r->nviews; i++)
        poses[i] = i < n ? st[i].pose : r->pose[i];
    render_rig *nr = rig_build(r, s, &rs->rig, poses, msg, msglen);
    if (!nr)
        goto out;
    pthread_mutex_lock(&r->lock);
    render_rig *old = r->next;
    r->next = nr;
    pthread_mutex_unlock(&r->lock);
    rig_free(old);
    snprintf(msg, msglen, "panorama: rig %s (%s, %s, gains %s) from the next frame set", s->panorama.rig,
             pc_render_blend_name(nr->opt.blend), pc_render_sampler_name(nr->opt.sampler),
             nr->gain_comp ? "compensated" : "as the .pto says");
    rc = PL_RELOAD_LIVE;
out:
    free(rs);
    free(dg);
    free(st);
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
    if (r->env->be) {
        rds_free(r);
        pc_backend_activity_close(r->env->be, r->act);
        if (r->small_pic.plane[0])
            pc_backend_picture_free(r->env->be, &r->small_pic);
        pc_backend_host_free(pc_backend_get_ops(r->env->be), r->counts);
    }
    rig_free(r->cur);
    rig_free(r->next);
    pc_render_plan_free(r->placed);
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
