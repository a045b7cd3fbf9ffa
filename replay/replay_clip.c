/* replay_clip.c - a clip re-framed from a recorded panorama (replay.h):
 * decode (replay_decode.c) -> the frame as RGB (the inverse of the
 * encoder's matrix, pc_yuv_to_rgb) -> the view at the path's pose of that
 * time, drawn by the render family from the panorama seen as a camera
 * (pc_rig_panorama_source; a moving view through pc_render_plan_set_view,
 * as the live views) through the backend ops (the CPU's, or CUDA's where
 * it runs: the frame uploaded into a device picture, the view downloaded
 * into the encoder's frame) -> the encoder module
 * (libx264 by default) -> the clip file. With the follow path, every
 * decoded frame from a few seconds before t0 also feeds the follow mode
 * exactly as the daemon's render step does (a small panorama, 1/8 of the
 * .pto's size, its activity map, pc_follow_update, pc_vcam_clamp, the
 * motion stepped a frame period). */
#include "replay_int.h"

#include "activity.h"
#include "backend.h"
#include "encode.h"
#include "errmsg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FOLLOW_WARMUP_S 3.0 /* the follow mode runs from this long before t0: background and framing settled */

/* the daemon's activity parameters (daemon/step_render.c) */
static const pc_activity_params act_par = {.shift = 6, .threshold = 12, .cw = 8, .ch = 8};

void pc_replay_config_default(pc_replay_config *c)
{
    memset(c, 0, sizeof *c);
    c->t1 = -1;
    c->slow = 1;
    c->width = 1920;
    c->height = 1080;
    pc_replay_path_default(&c->path, (pc_vcam_pose){0, 0, 60});
}

typedef struct clip {
    const pc_replay_config *cfg;
    rp_decoder dec;
    pc_rig src;                /* the panorama as a camera */
    pc_backend *be;
    const pc_backend_ops *ops;
    int device;                /* the backend's pictures are device memory */
    uint8_t *rgb24;            /* the decoded frame as RGB24 (pc_yuv_to_rgb) */
    pc_picture host;           /* ... as RGBX32 in the backend's host memory (pinned for CUDA) */
    pc_picture dev;            /* ... in the backend's memory (device only; else rgb is host) */
    pc_picture rgb;            /* what the renderer draws from: host or dev */
    pc_picture view_pic;       /* device only: the view, downloaded into the encoder's frame */
    int have_rgb;              /* rgb holds the current frame */
    pc_render_plan *plan;      /* the view */
    pc_render_dev *rd;
    pc_vcam_pose drawn;        /* the pose plan points at */
    pc_encoder *enc;
    /* follow */
    pc_vcam_coverage cov;
    pc_render_plan *small;
    pc_render_dev *small_rd;
    pc_picture small_pic;
    pc_activity_dev *act;
    uint32_t *counts;          /* the backend's host memory */
    pc_follow_grid *grid;
    pc_follow fol;
    pc_vcam_motion mot;
    int act_init;              /* the first frame set the background */
} clip;

static pc_matrix matrix_of(const AVFrame *f)
{
    return f->colorspace == AVCOL_SPC_BT470BG || f->colorspace == AVCOL_SPC_SMPTE170M ? PC_MATRIX_BT601
                                                                                       : PC_MATRIX_BT709;
}

/* The decoder's frame as RGBX32 into c->rgb (uploaded where the backend
 * renders from device memory). */
static int to_rgb(clip *c, char *err, size_t errlen)
{
    if (c->have_rgb)
        return 0;
    const AVFrame *f = c->dec.frame;
    pc_picture yuv = {.fmt = PC_FMT_I420, .matrix = matrix_of(f),
                      .range = f->color_range == AVCOL_RANGE_JPEG || f->format == AV_PIX_FMT_YUVJ420P
                                   ? PC_RANGE_FULL : PC_RANGE_LIMITED,
                      .width = f->width, .height = f->height};
    for (int i = 0; i < 3; i++) {
        yuv.plane[i] = f->data[i];
        yuv.pitch[i] = (size_t)f->linesize[i];
    }
    const size_t p24 = 3 * (size_t)f->width;
    int rc = pc_yuv_to_rgb(&yuv, c->rgb24, p24, err, errlen);
    if (rc)
        return rc;
    for (int y = 0; y < f->height; y++) { /* RGBX32: the GPU samples 4-byte texels through its texture units */
        const uint8_t *s = c->rgb24 + (size_t)y * p24;
        uint8_t *d = c->host.plane[0] + (size_t)y * c->host.pitch[0];
        for (int x = 0; x < f->width; x++, s += 3, d += 4) {
            d[0] = s[0];
            d[1] = s[1];
            d[2] = s[2];
            d[3] = 255;
        }
    }
    if (c->device && (rc = pc_backend_picture_upload(c->be, 0, &c->host, &c->dev, err, errlen)))
        return rc;
    c->have_rgb = 1;
    return 0;
}

static void view_of(const clip *c, pc_vcam_pose p, pc_view_model *v)
{
    pc_rig_rect_view(c->cfg->width, c->cfg->height, p.hfov, p.pan, p.tilt, 0.0, v);
}

/* The follow mode's small panorama, grid and coverage. */
static int follow_open(clip *c, char *err, size_t errlen)
{
    const pc_replay_config *cfg = c->cfg;
    int ow, oh, d = 8;
    pc_rig_output_size(cfg->rig, &ow, &oh);
    while (((ow / d + act_par.cw - 1) / act_par.cw) * ((oh / d + act_par.ch - 1) / act_par.ch) > PC_FOLLOW_MAX_CELLS)
        d *= 2;
    int sw = (ow / d) & ~1, sh = (oh / d) & ~1;
    sw = sw < 16 ? 16 : sw;
    sh = sh < 16 ? 16 : sh;
    pc_view_model sv;
    pc_rig_panorama_view(&c->src, sw, sh, &sv);
    int rc = pc_render_plan_build(&c->small, &c->src, &sv, NULL, NULL, err, errlen);
    if (!rc)
        rc = pc_backend_render_prepare(c->be, c->small, &c->small_rd, err, errlen);
    if (!rc)
        rc = pc_backend_render_picture_alloc(c->be, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, sw, sh,
                                             &c->small_pic, err, errlen);
    if (!rc)
        rc = pc_backend_activity_open(c->be, sw, sh, &c->act, err, errlen);
    if (rc)
        return rc;
    c->counts = pc_backend_host_alloc(c->ops, sizeof *c->counts * (size_t)pc_activity_cells(sw, sh, &act_par));
    c->grid = malloc(sizeof *c->grid);
    if (!c->counts || !c->grid) {
        pc_set_err(err, errlen, "follow: out of memory");
        return PC_ENOMEM;
    }
    if (pc_follow_grid_init(c->grid, &sv, act_par.cw, act_par.ch)) {
        pc_set_err(err, errlen, "follow: the grid of %dx%d cells does not fit", sw / act_par.cw, sh / act_par.ch);
        return PC_EINVAL;
    }
    pc_follow_init(&c->fol, &cfg->path.fpar, cfg->path.pose);
    pc_vcam_motion_init(&c->mot, &cfg->path.lim, cfg->path.pose);
    return 0;
}

/* One decoded frame through the follow mode (daemon/vcams.c's order). */
static int follow_frame(clip *c, double dt, char *err, size_t errlen)
{
    int rc = to_rgb(c, err, errlen);
    if (!rc)
        rc = pc_backend_render(c->be, 0, c->small_rd, &c->rgb, &c->small_pic, err, errlen);
    if (!rc) /* the first one sets the background and counts nothing */
        rc = pc_backend_activity(c->be, 0, &c->small_pic, c->act, &act_par, c->counts, err, errlen);
    if (!rc)
        rc = pc_backend_wait(c->be, 0, err, errlen);
    if (rc)
        return rc;
    pc_vcam_pose g;
    if (c->act_init && pc_follow_update(&c->fol, c->grid, c->counts, dt, &g)) {
        char why[160];
        pc_vcam_clamp(&c->cov, &c->cfg->path.lim, &g, why, sizeof why);
        pc_vcam_motion_go(&c->mot, g, PC_VCAM_MOVE_SMOOTH, 0);
    }
    c->act_init = 1;
    pc_vcam_motion_step(&c->mot, dt);
    return 0;
}

/* The view at pose p drawn from the current frame into the encoder's next
 * picture, submitted as output frame k. */
static int draw(clip *c, pc_vcam_pose p, int k, char *err, size_t errlen)
{
    int rc = to_rgb(c, err, errlen);
    if (rc)
        return rc;
    if (p.pan != c->drawn.pan || p.tilt != c->drawn.tilt || p.hfov != c->drawn.hfov) {
        pc_view_model v;
        view_of(c, p, &v);
        if ((rc = pc_render_plan_set_view(c->plan, &v, err, errlen)) ||
            (rc = pc_backend_render_update(c->be, c->rd, c->plan, err, errlen)))
            return rc;
        c->drawn = p;
    }
    pc_picture out;
    int on_dev = 0;
    if ((rc = pc_encoder_frame(c->enc, &out, &on_dev, err, errlen)))
        return rc;
    if (on_dev) {
        pc_set_err(err, errlen, "clip: the encoder takes device frames; a host encoder is needed (libx264)");
        return PC_ENOTSUP;
    }
    if (c->device)
        rc = pc_backend_render(c->be, 0, c->rd, &c->rgb, &c->view_pic, err, errlen);
    if (!rc)
        rc = c->device ? pc_backend_download(c->be, 0, &c->view_pic, &out, err, errlen)
                       : pc_backend_render(c->be, 0, c->rd, &c->rgb, &out, err, errlen);
    if (!rc)
        rc = pc_backend_wait(c->be, 0, err, errlen);
    if (rc)
        return rc;
    const AVRational fps = c->dec.fps;
    return pc_encoder_submit(c->enc, (int64_t)k * 1000000000LL * fps.den / fps.num, k == 0, err, errlen);
}

static int check_config(const pc_replay_config *cfg, char *err, size_t errlen)
{
    if (!cfg->rig || !cfg->inputs || cfg->ninputs < 1 || cfg->ninputs > PC_REPLAY_MAX_INPUTS || !cfg->output ||
        !*cfg->output) {
        pc_set_err(err, errlen, "clip: %s", !cfg->rig ? "no rig" : !cfg->output || !*cfg->output ? "no output file"
                   : "1..64 input files");
        return PC_EINVAL;
    }
    if (cfg->width < 16 || cfg->height < 16 || (cfg->width & 1) || (cfg->height & 1) || cfg->width > 8192 ||
        cfg->height > 8192) {
        pc_set_err(err, errlen, "clip: size %dx%d: even sides, 16..8192", cfg->width, cfg->height);
        return PC_EINVAL;
    }
    if (!(cfg->t0 >= 0) || !isfinite(cfg->t0) || !isfinite(cfg->t1) || (cfg->t1 >= 0 && !(cfg->t1 > cfg->t0))) {
        pc_set_err(err, errlen, "clip: from %g s to %g s: the start at 0 or later, the end after it", cfg->t0,
                   cfg->t1);
        return PC_EINVAL;
    }
    const double slow = cfg->slow ? cfg->slow : 1;
    if (!(slow >= 1 && slow <= PC_REPLAY_MAX_SLOW)) {
        pc_set_err(err, errlen, "clip: slow-down %g: 1..%g", slow, PC_REPLAY_MAX_SLOW);
        return PC_EINVAL;
    }
    const pc_replay_path *p = &cfg->path;
    if (p->kind == PC_REPLAY_KEYFRAMES ? p->nkf < 1 || !p->kf
                                       : !(p->pose.hfov >= PC_RIG_MIN_HFOV && p->pose.hfov < 180) ||
                                             !(fabs(p->pose.tilt) <= 90) || !(fabs(p->pose.pan) <= 360)) {
        pc_set_err(err, errlen, "clip: %s", p->kind == PC_REPLAY_KEYFRAMES ? "no keyframes"
                   : "pose: pan within +-360, tilt within +-90, hfov 0.1..180 degrees");
        return PC_EINVAL;
    }
    return 0;
}

int pc_replay_clip(const pc_replay_config *cfg, pc_replay_result *res, char *err, size_t errlen)
{
    pc_replay_result r0;
    if (!res)
        res = &r0;
    memset(res, 0, sizeof *res);
    int rc = check_config(cfg, err, errlen);
    if (rc)
        return rc;
    clip *c = calloc(1, sizeof *c);
    if (!c) {
        pc_set_err(err, errlen, "clip: out of memory");
        return PC_ENOMEM;
    }
    c->cfg = cfg;
    int opened = 0;
    if ((rc = rp_decoder_open(&c->dec, cfg->inputs, cfg->ninputs, err, errlen)))
        goto out;
    const int w = c->dec.w, h = c->dec.h;
    res->src_w = w;
    res->src_h = h;
    res->fps_num = c->dec.fps.num;
    res->fps_den = c->dec.fps.den;
    /* the recording against the rig */
    {
        int ow, oh;
        pc_rig_output_size(cfg->rig, &ow, &oh);
        const int want = cfg->panorama_width ? cfg->panorama_width : (ow / 2) * 2;
        char e2[400];
        if (pc_rig_panorama_source(cfg->rig, w, h, &c->src, e2, sizeof e2)) {
            pc_set_err(err, errlen, "%s: %s", cfg->inputs[0], e2);
            rc = PC_EINVAL;
            goto out;
        }
        if (w != want) {
            pc_set_err(err, errlen, "%s: the recording is %d wide, but %s %d (%s): %s", cfg->inputs[0], w,
                       cfg->panorama_width ? "panorama.width is" : "the .pto's output is", want,
                       cfg->panorama_width ? "as given" : cfg->rig->path,
                       cfg->panorama_width ? "give the panorama.width the recording was made with"
                                           : "give the recording's panorama.width (--panorama-width), or the "
                                             "encoder's cap, if it was made with one");
            rc = PC_EINVAL;
            goto out;
        }
    }
    const double fps = av_q2d(c->dec.fps), period = 1.0 / fps, slow = cfg->slow ? cfg->slow : 1;
    const double len = c->dec.len_s;
    const double t1 = cfg->t1 >= 0 ? cfg->t1 : len;
    if (len > 0 && (cfg->t0 >= len || t1 > len + 0.5 * period)) {
        pc_set_err(err, errlen, "clip: from %g s to %g s: the recording (%d file%s) is %.3f s long", cfg->t0, t1,
                   cfg->ninputs, cfg->ninputs > 1 ? "s" : "", len);
        rc = PC_EINVAL;
        goto out;
    }
    if (!(t1 > cfg->t0)) {
        pc_set_err(err, errlen, "clip: from %g s to the end (%g s): nothing to render", cfg->t0, t1);
        rc = PC_EINVAL;
        goto out;
    }
    const int total = (int)lround((t1 - cfg->t0) * fps * slow);
    if (total < 1) {
        pc_set_err(err, errlen, "clip: from %g s to %g s is less than one frame (%.4f s)", cfg->t0, t1, period);
        rc = PC_EINVAL;
        goto out;
    }
    /* the backend, the pictures and the plans */
    pc_backend_config bc = {.width = w, .height = h, .slots = 1, .threads = cfg->threads};
    if ((rc = pc_backend_choose(cfg->backend ? cfg->backend : "auto", &c->ops, res->note, sizeof res->note, err,
                                errlen)) ||
        (rc = pc_backend_open(&c->be, c->ops, &bc, err, errlen)))
        goto out;
    snprintf(res->backend, sizeof res->backend, "%s", c->ops->name);
    c->device = (c->ops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    c->rgb24 = malloc(3 * (size_t)w * h);
    if (!c->rgb24) {
        pc_set_err(err, errlen, "clip: out of memory for a %dx%d frame", w, h);
        rc = PC_ENOMEM;
        goto out;
    }
    if ((rc = pc_backend_host_picture_alloc(c->ops, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &c->host,
                                            err, errlen)))
        goto out;
    c->rgb = c->host;
    if (c->device) {
        if ((rc = pc_backend_render_picture_alloc(c->be, PC_FMT_RGBX32, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h,
                                                  &c->dev, err, errlen)) ||
            (rc = pc_backend_render_picture_alloc(c->be, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, cfg->width,
                                                  cfg->height, &c->view_pic, err, errlen)))
            goto out;
        c->rgb = c->dev;
    }
    pc_render_options opt;
    pc_render_options_default(&opt);
    opt.sampler = cfg->sampler;
    pc_replay_stepper st;
    pc_replay_stepper_init(&st, &cfg->path);
    c->drawn = pc_replay_stepper_at(&st, cfg->t0, period);
    if (cfg->path.kind == PC_REPLAY_FOLLOW)
        c->drawn = cfg->path.pose;
    pc_view_model v;
    view_of(c, c->drawn, &v);
    if ((rc = pc_render_plan_build(&c->plan, &c->src, &v, NULL, &opt, err, errlen)) ||
        (rc = pc_backend_render_prepare(c->be, c->plan, &c->rd, err, errlen)))
        goto out;
    if (pc_vcam_coverage_init(&c->cov, &c->src, cfg->width, cfg->height, err, errlen)) {
        rc = PC_EINVAL;
        goto out;
    }
    if (cfg->path.kind == PC_REPLAY_FOLLOW && (rc = follow_open(c, err, errlen)))
        goto out;
    /* a pose the live views would clamp: drawn as asked (black where the
     * panorama has nothing), said once */
    for (int i = 0; i < (cfg->path.kind == PC_REPLAY_KEYFRAMES ? cfg->path.nkf : 1); i++) {
        const pc_replay_keyframe *k = cfg->path.kind == PC_REPLAY_KEYFRAMES ? &cfg->path.kf[i] : NULL;
        pc_vcam_pose q = k ? (pc_vcam_pose){k->pan, k->tilt, k->hfov} : cfg->path.pose;
        pc_vcam_limits lim = cfg->path.lim;
        lim.min_hfov = PC_RIG_MIN_HFOV;
        lim.max_hfov = 179.9;
        char why[160];
        if (cfg->path.kind != PC_REPLAY_FOLLOW && pc_vcam_clamp(&c->cov, &lim, &q, why, sizeof why)) {
            snprintf(res->warning, sizeof res->warning, "%s pan %g tilt %g hfov %g sees past the panorama (black "
                     "there): %s", k ? "keyframe" : "the pose", k ? k->pan : cfg->path.pose.pan,
                     k ? k->tilt : cfg->path.pose.tilt, k ? k->hfov : cfg->path.pose.hfov, why);
            break;
        }
    }
    /* the encoder */
    pc_encode_config ec;
    pc_encode_config_default(&ec);
    ec.width = cfg->width;
    ec.height = cfg->height;
    ec.fps_num = c->dec.fps.num;
    ec.fps_den = c->dec.fps.den;
    ec.encoder = cfg->encoder ? cfg->encoder : "libx264";
    ec.codec = PC_CODEC_H264;
    ec.bitrate = cfg->bitrate > 0 ? cfg->bitrate : (int64_t)(0.15 * cfg->width * cfg->height * fps);
    ec.preset = cfg->preset ? cfg->preset : "veryfast";
    ec.outputs[0].url = cfg->output;
    ec.outputs[0].queue_packets = 4096;
    ec.n_outputs = 1;
    ec.log = cfg->log;
    if ((rc = pc_encoder_open(&c->enc, &ec, err, errlen)))
        goto out;
    opened = 1;
    /* the frames */
    const double t_follow = cfg->path.kind == PC_REPLAY_FOLLOW ? fmax(0.0, cfg->t0 - FOLLOW_WARMUP_S) : INFINITY;
    int have = 0, k = 0;
    /* a clip far into the first file: the first frame (its times' origin),
     * then a seek to the keyframe before where reading must start (the
     * follow mode's warm-up, half a second of margin) */
    const double t_read = fmin(cfg->t0, t_follow) - 0.5;
    if (!cfg->no_seek && t_read > 2.0) {
        if ((rc = rp_decoder_next(&c->dec, err, errlen)) < 0)
            goto out;
        have = rc == 1;
        if (have && (rc = rp_decoder_seek(&c->dec, t_read, err, errlen)) < 0)
            goto out;
        res->seeked = rc == 1;
        rc = 0;
    }
    for (; k < total; k++) {
        const double ts = cfg->t0 + k / (fps * slow);
        /* the frame nearest ts: read on while the next one starts before
         * ts + half a period */
        while (!have || c->dec.t < ts - 0.5 * period) {
            rc = rp_decoder_next(&c->dec, err, errlen);
            if (rc < 0)
                goto out;
            if (rc == 0)
                break;
            have = 1;
            c->have_rgb = 0;
            if (c->dec.t >= t_follow - 0.5 * period && (rc = follow_frame(c, period, err, errlen)))
                goto out;
        }
        rc = 0;
        if (!have || c->dec.t < ts - period) {
            pc_set_err(err, errlen, "clip: the recording ends at %.3f s (%d frames), before %.3f s (--to %g)",
                       have ? c->dec.t + period : 0.0, c->dec.frames, ts, t1);
            rc = PC_EINVAL;
            goto out;
        }
        pc_vcam_pose p = cfg->path.kind == PC_REPLAY_FOLLOW ? c->mot.cur : pc_replay_stepper_at(&st, ts, period);
        if ((rc = draw(c, p, k, err, errlen)))
            goto out;
        res->last = p;
        if (cfg->progress)
            cfg->progress(cfg->user, k + 1, total);
        if (cfg->cancel && cfg->cancel(cfg->user)) {
            pc_set_err(err, errlen, "clip: cancelled after %d of %d frames", k + 1, total);
            rc = PC_REPLAY_ECANCELED;
            goto out;
        }
    }
    if ((rc = pc_encoder_flush(c->enc, err, errlen)))
        goto out;
    pc_encoder_stats es;
    pc_encoder_stats_get(c->enc, &es);
    if (es.outputs[0].packets_dropped || es.outputs[0].failures) {
        pc_set_err(err, errlen, "%s: %llu packets not written (%s)", cfg->output,
                   (unsigned long long)es.outputs[0].packets_dropped,
                   es.outputs[0].last_error[0] ? es.outputs[0].last_error : "the output fell behind");
        rc = PC_EIO;
        goto out;
    }
    res->frames = k;
    res->duration_s = k * period;
    res->src_frames = c->dec.frames;
    res->rec_end_s = c->dec.last_t + period;
out:
    pc_encoder_close(c->enc);
    if (rc && opened)
        unlink(cfg->output); /* no partial clip */
    pc_backend_render_free(c->be, c->rd);
    pc_backend_render_free(c->be, c->small_rd);
    pc_backend_activity_close(c->be, c->act);
    if (c->dev.plane[0])
        pc_backend_picture_free(c->be, &c->dev);
    if (c->view_pic.plane[0])
        pc_backend_picture_free(c->be, &c->view_pic);
    if (c->small_pic.plane[0])
        pc_backend_picture_free(c->be, &c->small_pic);
    pc_backend_host_picture_free(c->ops, &c->host);
    if (c->counts)
        pc_backend_host_free(c->ops, c->counts);
    pc_backend_close(c->be);
    pc_render_plan_free(c->plan);
    pc_render_plan_free(c->small);
    free(c->rgb24);
    free(c->grid);
    rp_decoder_close(&c->dec);
    free(c);
    return rc;
}
