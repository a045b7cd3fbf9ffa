/* check.c - module checks shared by --check-config and the run (check.h). */
#include "check.h"

#include "capacity.h"
#include "cpulist.h"

#include "image.h"
#include "panocap_config.h"
#include "settings_rig.h"
#if PANOCAP_HAVE_FFMPEG
#include "encode.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pc_check_capture_config(const pc_settings *s, const struct pc_rig *rig, pc_capture_config *cc,
                             const pc_logger *lg)
{
    pc_capture_config_init(cc);
    cc->source = (pc_source_kind)s->capture.source;
    cc->file = s->capture.file;
    cc->file_realtime = 1;
    cc->file_loop = s->capture.file_loop;
    /* the file source takes its camera count from the file; a different
     * count in the settings is an error, not silently ignored */
    cc->n_cameras = s->capture.cameras;
    cc->fps = s->capture.fps;
    cc->deadline_periods = s->capture.deadline_periods;
    cc->max_skew_ms = s->capture.max_skew_ms;
    cc->pool_sets = s->capture.pool_size;
    cc->log = lg;
    /* a scene seen through the rig (capture.scene; capture refuses it
     * without a rig, naming what is missing) */
    if (s->capture.scene[0]) {
        cc->scene = s->capture.scene;
        cc->scene_rig = rig;
        cc->scene_seconds = s->capture.scene_seconds;
        cc->scene_seed = (uint64_t)s->capture.scene_seed;
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
        if (!picture && lg)
            pc_log(lg, PC_LOG_WARNING, "fake cameras: bundled photograph not found or no PNG support; "
                   "showing a synthetic picture");
    }
    for (int i = 0; i < s->capture.cameras && i < PC_CAPTURE_MAX_CAMERAS; i++) {
        const pc_camera_settings *c = &s->cameras[i];
        pc_camera_config *k = &cc->cam[i];
        pc_camera_config_init(k);
        k->address = c->address[0] ? c->address : c->serial[0] ? c->serial : NULL;
        k->cfa = (pc_cfa)c->pattern;
        k->pixel_format = c->pixel_format[0] ? c->pixel_format : NULL;
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
        /* a camera's own picture is shown whole; the shared one in bands */
        k->image_part = c->image[0] ? 0 : c->slab;
        k->image_parts = c->image[0] ? 1 : s->capture.cameras;
    }
}

/* The camera a capture message names ("camera 3 (...)"), or -1. */
static int camera_of(const char *msg)
{
    int i;
    return sscanf(msg, "camera %d", &i) == 1 ? i : -1;
}

#if PANOCAP_HAVE_FFMPEG
/* One picture's outputs as the encoder would open them (prefix: the key of
 * the list, "outputs" or "virtual_cameras[0].outputs"). */
static int check_outputs(const pc_settings *s, pc_diag *d, const char *prefix, const pc_output_settings *outs, int n)
{
    char err[1024], key[160];
    int errors = 0;
    for (int i = 0; i < n; i++) {
        const pc_output_settings *o = &outs[i];
        if (!strcmp(o->url, "null"))
            continue;
        pc_output_config oc = {.url = o->url, .format = o->format[0] ? o->format : NULL,
                               .segment_seconds = o->segment_s, .options = o->options[0] ? o->options : NULL,
                               .max_bytes = o->max_bytes, .max_age_s = o->max_age_s, .min_free = o->min_free};
        if (pc_output_check(i, &oc, err, sizeof err)) {
            snprintf(key, sizeof key, "%s[%d].%s", prefix, i,
                     strstr(err, "options:") ? "options" : strstr(err, "format") ? "format" : "url");
            errors++;
            pc_diag_add(d, PC_DIAG_ERROR, s->config_file, o->line, key, "%s", err);
        }
    }
    return errors;
}
#endif

static int real_outputs(const pc_output_settings *o, int n)
{
    int r = 0;
    for (int i = 0; i < n; i++)
        r += strcmp(o[i].url, "null") != 0;
    return r;
}

static void add_picture(pc_capacity_input *in, const char *name, int w, int h)
{
    if (in->npictures >= PC_CAPACITY_MAX_PICTURES || w <= 0 || h <= 0)
        return;
    pc_capacity_picture *p = &in->pic[in->npictures++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->width = w;
    p->height = h;
}

/* What the configured pictures cost the encoders (capacity.c): a warning
 * when this host is unlikely to hold it. rs: the rig as read. */
static void check_capacity(const pc_settings *s, const pc_rig_setup *rs, pc_diag *d)
{
    pc_capacity_input in = {.encoder = s->encode.encoder, .preset = s->encode.preset,
                            .first_fallback = s->encode.fallback.count ? s->encode.fallback.item[0] : NULL,
                            .fps = s->capture.fps, .main_index = -1};
    cpu_set_t set;
    char e[160];
    in.cores = s->encode.cpus[0] ? pc_cpulist_parse(s->encode.cpus, &set, e, sizeof e) : -1;
    if (in.cores < 1)
        in.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    int stitched = pc_settings_stitching(s) && rs->have_rig;
    int mw = pc_settings_panorama_width(s), mh = pc_settings_panorama_height(s);
    char why[256];
    if (stitched && pc_settings_panorama_size(s, &rs->rig, -1, &mw, &mh, why, sizeof why) < 0)
        return;
    if (real_outputs(s->outputs, s->output_count)) {
        if (stitched)
            in.main_index = in.npictures;
        add_picture(&in, stitched ? "panorama" : "cameras", mw, mh);
        if (s->encode.preview_scale > 1)
            add_picture(&in, "preview", (mw / s->encode.preview_scale) & ~1, (mh / s->encode.preview_scale) & ~1);
    }
    if (stitched && real_outputs(s->panorama.unstitched.item, s->panorama.unstitched.count))
        add_picture(&in, "unstitched", pc_settings_panorama_width(s), pc_settings_panorama_height(s));
    for (int v = 0; v < s->vcam_count; v++)
        if (real_outputs(s->vcams[v].outputs.item, s->vcams[v].outputs.count)) {
            char name[64];
            snprintf(name, sizeof name, "view %s", s->vcams[v].name);
            add_picture(&in, name, s->vcams[v].width, s->vcams[v].height);
        }
    if (!in.npictures)
        return;
    char msg[1400];
    pc_capacity_estimate(&in, msg, sizeof msg);
    if (msg[0])
        pc_diag_add(d, PC_DIAG_WARNING, s->config_file, s->encode.line, "encode", "%s", msg);
}

int pc_check_modules(const pc_settings *s, pc_diag *d)
{
    const char *file = s->config_file;
    int errors = 0;
    char err[1024], key[96];
#define ERR(line, k, ...) (errors++, pc_diag_add(d, PC_DIAG_ERROR, file, line, k, __VA_ARGS__))

    /* the rig (panorama and virtual cameras): read, against the cameras,
     * the encoder and its coverage; the scene's cameras look through it */
    pc_rig_setup *rs = calloc(1, sizeof *rs);
    if (!rs) {
        ERR(0, "", "out of memory");
        return errors;
    }
    errors += pc_settings_check_rig(s, rs, d);

    /* capture */
    pc_capture_config cc;
    pc_logger quiet = {.max_level = PC_LOG_ERR};
    pc_check_capture_config(s, rs->have_rig ? &rs->rig : NULL, &cc, &quiet);
    if (pc_capture_check(&cc, err, sizeof err)) {
        int cam = camera_of(err);
        if (cam >= 0 && cam < s->capture.cameras && strstr(err, ": picture ") && !s->cameras[cam].image[0] &&
            s->capture.image[0]) {
            ERR(s->capture.line, "capture.image", "%s", err); /* every camera's picture */
        } else if (s->capture.scene[0] && strstr(err, "scene")) {
            /* a rig that is set but has errors of its own: those say what
             * to fix ("needs a rig" would say it is not set) */
            if (!(s->panorama.rig[0] && !rs->have_rig && strstr(err, "needs a rig")))
                ERR(s->capture.line, "capture.scene", "%s", err);
        } else if (cam >= 0 && cam < s->capture.cameras) {
            snprintf(key, sizeof key, "cameras[%d]", cam);
            ERR(s->cameras[cam].line ? s->cameras[cam].line : s->capture.line, key, "%s", err);
        } else {
            ERR(s->capture.line, s->capture.source == PC_SOURCE_FILE ? "capture.file" : "capture", "%s", err);
        }
    }


    /* encoders and outputs: every picture's */
    int real = 0;
    for (int i = 0; i < s->output_count; i++)
        real += strcmp(s->outputs[i].url, "null") != 0;
    for (int i = 0; pc_settings_stitching(s) && i < s->panorama.unstitched.count; i++)
        real += strcmp(s->panorama.unstitched.item[i].url, "null") != 0;
    for (int v = 0; v < s->vcam_count; v++)
        for (int i = 0; i < s->vcams[v].outputs.count; i++)
            real += strcmp(s->vcams[v].outputs.item[i].url, "null") != 0;
#if PANOCAP_HAVE_FFMPEG
    if (real) {
        if (pc_encoder_check_name("encoder", s->encode.encoder, s->encode.preset, err, sizeof err))
            ERR(s->encode.line, strstr(err, "preset") == err ? "encode.preset" : "encode.encoder", "%s", err);
        for (int i = 0; i < s->encode.fallback.count; i++)
            if (pc_encoder_check_name("fallback encoder", s->encode.fallback.item[i], NULL, err, sizeof err))
                ERR(s->encode.line, "encode.fallback", "%s", err);
    }
    errors += check_outputs(s, d, "outputs", s->outputs, s->output_count);
    if (pc_settings_stitching(s))
        errors += check_outputs(s, d, "panorama.unstitched_outputs", s->panorama.unstitched.item,
                                s->panorama.unstitched.count);
    for (int v = 0; v < s->vcam_count; v++) {
        snprintf(key, sizeof key, "virtual_cameras[%d].outputs", v);
        errors += check_outputs(s, d, key, s->vcams[v].outputs.item, s->vcams[v].outputs.count);
    }
    if (!errors)
        check_capacity(s, rs, d);
#else
    if (real)
        ERR(s->output_count ? s->outputs[0].line : 0, "outputs",
            "this build has no FFmpeg (meson -Dffmpeg=enabled): only the output \"null\" is possible");
#endif
#undef ERR
    free(rs);
    return errors;
}
