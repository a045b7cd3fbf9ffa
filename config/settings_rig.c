/* settings_rig.c - the panorama's and the virtual cameras' settings against
 * the rig they name (settings_rig.h): the .pto read and checked against the
 * cameras, the panorama's picture size against the encoder, the views'
 * initial poses and presets against what the cameras see, and the vcam/
 * structs filled from a view's settings. */
#include "settings_rig.h"

#include "encode_limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the panorama's size ------------------------------------------------ */

static int even_down(double v) { return (int)floor(v / 2) * 2; }
static int even_near(double v) { return (int)lround(v / 2) * 2; }

int pc_settings_panorama_size(const pc_settings *s, const pc_rig *rig, int nvenc, int *w, int *h, char *why,
                              size_t whylen)
{
    int ow, oh;
    pc_rig_output_size(rig, &ow, &oh);
    int W = s->panorama.width ? s->panorama.width : even_down(ow);
    int H = even_near((double)W * oh / ow);
    char from[200], even[48] = "", crop[64] = "";
    const int *c = rig->pano.crop;
    if (s->panorama.width) {
        snprintf(from, sizeof from, "panorama.width %d: %dx%d, the field of view of the .pto's %dx%d", W, W, H, ow,
                 oh);
    } else { /* the .pto's own numbers, then what even sides make of them */
        if (c[1] > c[0])
            snprintf(crop, sizeof crop, " (its crop S%d,%d,%d,%d)", c[0], c[1], c[2], c[3]);
        if (W != ow || H != oh)
            snprintf(even, sizeof even, ", %dx%d with even sides", W, H);
        snprintf(from, sizeof from, "the .pto's output size %dx%d%s%s", ow, oh, crop, even);
    }
    const char *lname;
    int limit = pc_encoder_side_limit(&s->encode, nvenc, &lname);
    int capped = 0;
    if (W > limit || H > limit || !pc_encode_area_ok(W, H)) {
        /* the side limit first, then narrower until libavcodec's area
         * holds it too (16384x16384 has the sides but not the area) */
        double k = fmin(1.0, fmin((double)limit / W, (double)limit / H));
        int W2 = even_down(W * k), H2 = 0, by_area = 0;
        for (; W2 > 0; W2 -= 2) {
            H2 = even_near((double)W2 * oh / ow);
            if (H2 > limit)
                H2 = even_down(limit);
            if (pc_encode_area_ok(W2, H2))
                break;
            by_area = 1;
        }
        snprintf(why, whylen, "%s, capped to %dx%d: %s takes at most %d pixels a side%s", from, W2, H2, lname, limit,
                 by_area ? ", and libavcodec opens no picture whose (width + 128) x (height + 128) passes 268435455"
                         : "");
        W = W2;
        H = H2;
        capped = 1;
    } else {
        snprintf(why, whylen, "%s", from);
    }
    *w = W;
    *h = H;
    if (W < PC_ENCODE_MIN_SIDE || H < PC_ENCODE_MIN_SIDE) {
        /* the cap made a side too short: the canvas is too long for its
         * height (or too high for its width), not too small */
        if (capped)
            snprintf(why, whylen, "%s: capped inside %s's %d pixels a side (and libavcodec's area), the panorama would "
                     "be %dx%d, under the %d pixels a side encoders take: its sides are %.0f to 1; give the .pto a "
                     "canvas closer to the cameras' field of view (crop it, or its v)", from, lname, limit, W, H,
                     PC_ENCODE_MIN_SIDE, fmax((double)ow / oh, (double)oh / ow));
        else
            snprintf(why, whylen, "%s: under the %d pixels a side encoders take", from, PC_ENCODE_MIN_SIDE);
        return -1;
    }
    return capped;
}

/* --- a view's vcam/ structs --------------------------------------------- */

void pc_settings_vcam_limits(const pc_vcam_settings *v, pc_vcam_limits *out)
{
    pc_vcam_limits_default(out);
    out->max_speed = v->max_speed;
    out->max_accel = v->max_accel;
    out->max_zoom_speed = v->max_zoom_speed;
    out->max_zoom_accel = v->max_zoom_accel;
    out->response_s = v->response_s;
    out->min_hfov = v->min_hfov;
    out->max_hfov = v->max_hfov;
}

void pc_settings_vcam_follow(const pc_vcam_settings *v, pc_follow_params *out)
{
    pc_follow_params_default(out);
    out->dead_zone = v->follow_dead_zone;
    out->lead_s = v->follow_lead_s;
    out->lead_max = v->follow_lead_max;
    out->smooth_s = v->follow_smoothing_s;
    out->zoom_margin = v->follow_zoom_margin;
    out->min_hfov = v->follow_min_hfov;
    out->max_hfov = v->follow_max_hfov;
    out->tilt_offset = v->follow_tilt_offset;
}

/* --- the rig file's digest ---------------------------------------------- */

void pc_settings_stamp_rig(pc_settings *s)
{
    s->panorama.rig_digest = 0;
    if (!s->panorama.rig[0])
        return;
    FILE *f = fopen(s->panorama.rig, "rb");
    if (!f)
        return;
    uint64_t h = 14695981039346656037ULL; /* FNV-1a, 64 bits */
    unsigned char buf[8192];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0 && total < (64u << 20)) {
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 1099511628211ULL;
        total += n;
    }
    if (!ferror(f))
        s->panorama.rig_digest = h ? h : 1;
    fclose(f);
}

/* --- the check ------------------------------------------------------------ */

#define ERR(line, key, ...) (errors++, pc_diag_add(d, PC_DIAG_ERROR, file, line, key, __VA_ARGS__))
#define WARN(line, key, ...) pc_diag_add(d, PC_DIAG_WARNING, file, line, key, __VA_ARGS__)

/* The rig against the cameras, and what it holds that panocap does not
 * apply. */
static int check_cameras(const pc_settings *s, const pc_rig *rig, pc_diag *d)
{
    const char *file = s->config_file;
    const int line = s->panorama.line, n = s->capture.cameras;
    int errors = 0, uniform = 1;
    char err[PC_RIG_PATH_LEN + 256];
    for (int i = 1; i < n && i < PC_MAX_CAMERAS; i++)
        uniform &= s->cameras[i].width == s->cameras[0].width && s->cameras[i].height == s->cameras[0].height;
    if (rig->ncam != n || uniform) {
        if (pc_rig_check_cameras(rig, n, s->cameras[0].width, s->cameras[0].height, err, sizeof err))
            ERR(line, "panorama.rig", "%s (%s)", err,
                rig->ncam != n ? "capture.cameras, or the length of the cameras list" : "the cameras' width and height");
    } else {
        for (int i = 0; i < n; i++) {
            const pc_rig_camera *c = &rig->cam[i];
            if (c->w != s->cameras[i].width || c->h != s->cameras[i].height) {
                ERR(line, "panorama.rig", "%s:%d: i line (image %d): fields w h: %dx%d, but camera %d delivers %dx%d "
                    "(cameras[%d]'s width and height)", rig->path, c->line, i, c->w, c->h, i, s->cameras[i].width,
                    s->cameras[i].height, i);
                break;
            }
        }
    }
    for (int i = 0; i < rig->ncam; i++) {
        const pc_rig_camera *c = &rig->cam[i];
        if (c->masks)
            WARN(line, "panorama.rig", "%s:%d: i line (image %d): %d mask%s (k lines): panocap does not apply masks; "
                 "the overlaps are blended as if unmasked", rig->path, c->line, i, c->masks, c->masks == 1 ? "" : "s");
        if (c->disabled)
            WARN(line, "panorama.rig", "%s:%d: i line (image %d) is disabled in the project: Hugin leaves camera %d "
                 "out of the panorama", rig->path, c->line, i, i);
    }
    return errors;
}

/* The stitched picture's size against the encoder. */
static int check_size(const pc_settings *s, const pc_rig *rig, pc_diag *d)
{
    const char *file = s->config_file;
    const int line = s->panorama.line;
    int errors = 0, w, h, ow, oh;
    char why[512];
    const char *key = s->panorama.width ? "panorama.width" : "panorama.rig";
    int r = pc_settings_panorama_size(s, rig, -1, &w, &h, why, sizeof why);
    pc_rig_output_size(rig, &ow, &oh);
    if (r < 0)
        ERR(line, key, "%s", why);
    else if (r > 0 && s->panorama.width) /* asked for, not capped: auto is */
        ERR(line, key, "%s; a width of at most %d keeps it inside (or 0: the largest that fits)", why, w);
    else if (s->panorama.width > ow)
        WARN(line, key, "%d is wider than the .pto's output (%dx%d): the cameras' pictures are stretched",
             s->panorama.width, ow, oh);
    int sc = s->encode.preview_scale;
    if (r >= 0 && sc && (w / sc < PC_ENCODE_MIN_SIDE || h / sc < PC_ENCODE_MIN_SIDE))
        ERR(s->encode.line, "encode.preview_scale", "%d: the %dx%d panorama would be smaller than %d pixels", sc, w,
            h, PC_ENCODE_MIN_SIDE);
    return errors;
}

/* The first axis pc_vcam_clamp changed ("hfov 60.0 -> 47.4" comes first):
 * the key of the warning. Changes below what the message shows (a tenth
 * of a degree) are rounding on the way back towards the rig's centre. */
static const char *moved_axis(pc_vcam_pose a, pc_vcam_pose b)
{
    if (fabs(a.hfov - b.hfov) >= 0.05)
        return "hfov";
    /* pan and tilt as pc_vcam_clamp words them: in tenths, or in
     * thousandths when neither moved a tenth */
    const double dp = fabs(a.pan - b.pan), dt = fabs(a.tilt - b.tilt);
    return dp >= (fmax(dp, dt) >= 0.05 ? 0.05 : 0.0005) ? "pan" : "tilt";
}

/* An angle as the messages show it: no "-0.0". */
static double shown(double deg) { return fabs(deg) < 0.05 ? 0.0 : deg; }

/* Each view's pose and presets inside the coverage of the rig. */
static int check_views(const pc_settings *s, const pc_rig *rig, pc_rig_setup *out, pc_diag *d)
{
    const char *file = s->config_file;
    int errors = 0;
    char key[160], err[PC_RIG_PATH_LEN + 256], why[320];
    pc_vcam_coverage *cov = malloc(sizeof *cov);
    if (!cov) {
        ERR(0, "virtual_cameras", "out of memory");
        return errors;
    }
    for (int i = 0; i < s->vcam_count; i++) {
        const pc_vcam_settings *v = &s->vcams[i];
        pc_vcam_pose p = {v->pan, v->tilt, v->hfov};
        if (out)
            out->start[i] = p;
        snprintf(key, sizeof key, "virtual_cameras[%d]", i);
        if (pc_vcam_coverage_init(cov, rig, v->width, v->height, err, sizeof err)) {
            ERR(v->line, key, "%s (panorama.rig)", err);
            continue;
        }
        pc_vcam_limits lim;
        pc_settings_vcam_limits(v, &lim);
        pc_vcam_pose q = p;
        if (pc_vcam_clamp(cov, &lim, &q, why, sizeof why)) {
            snprintf(key, sizeof key, "virtual_cameras[%d].%s", i, moved_axis(p, q));
            WARN(v->line, key, "%s (%s): the view starts at pan %.1f, tilt %.1f, hfov %.1f", why, v->name, shown(q.pan),
                 shown(q.tilt), q.hfov);
        }
        if (out)
            out->start[i] = q;
        for (int j = 0; j < v->presets.count; j++) {
            const pc_vcam_preset *pr = &v->presets.item[j];
            pc_vcam_pose a = {pr->pan, pr->tilt, pr->hfov > 0 ? pr->hfov : v->hfov}, b = a;
            if (pc_vcam_clamp(cov, &lim, &b, why, sizeof why)) {
                snprintf(key, sizeof key, "virtual_cameras[%d].presets[%d].%s", i, j, moved_axis(a, b));
                WARN(pr->line, key, "%s (preset %s of %s): it goes to pan %.1f, tilt %.1f, hfov %.1f", why, pr->name,
                     v->name, shown(b.pan), shown(b.tilt), b.hfov);
            }
        }
    }
    free(cov);
    return errors;
}

int pc_settings_check_rig(const pc_settings *s, pc_rig_setup *out, pc_diag *d)
{
    const char *file = s->config_file;
    int errors = 0;
    if (out)
        out->have_rig = 0;
    if (!s->panorama.rig[0])
        return 0;
    pc_rig_setup *rs = out ? out : malloc(sizeof *rs);
    if (!rs) {
        ERR(s->panorama.line, "panorama.rig", "out of memory");
        return errors;
    }
    char err[PC_RIG_PATH_LEN + 256];
    if (pc_rig_load(s->panorama.rig, &rs->rig, err, sizeof err)) {
        ERR(s->panorama.line, "panorama.rig", "%s", err);
    } else {
        errors += check_cameras(s, &rs->rig, d);
        if (!errors && pc_settings_stitching(s))
            errors += check_size(s, &rs->rig, d);
        if (!errors)
            errors += check_views(s, &rs->rig, rs, d);
        rs->have_rig = !errors;
    }
    if (!out)
        free(rs);
    return errors;
}
