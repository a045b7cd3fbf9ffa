/* settings_validate.c - defaults (from the key table), finishing (camera
 * keys not given come from capture's defaults), derived values and the
 * cross-field validation that reports every problem at once. */
#include "settings_keys.h"

#include "debayer.h"
#include "encode_limits.h"
#include "net.h"
#include "render.h"
#include "cpulist.h"
#include "netaddr.h"
#include "urlmask.h"
#include "settings_colour.h"
#include "panocap_config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

/* --- defaults and finishing -------------------------------------------- */

static void apply_defaults(const pc_key *keys, int n, void *base)
{
    char err[256];
    for (int i = 0; i < n; i++) {
        /* Defaults bypass the range check only where they are a sentinel
         * (slab -1 = list position). */
        if (pc_key_parse_(&keys[i], keys[i].def, base, err, sizeof err) != 0) {
            double v = strtod(keys[i].def, NULL);
            if (keys[i].type == PC_KT_INT)
                *(int *)pc_key_field_(&keys[i], base) = (int)v;
        }
    }
}

void pc_camera_defaults_(pc_camera_settings *c)
{
    memset(c, 0, sizeof *c);
    apply_defaults(pc_camera_keys_, pc_ncamera_keys_, c);
}

void pc_list_entry_defaults_(const pc_list_desc *L, void *entry)
{
    memset(entry, 0, L->entry_size);
    apply_defaults(L->keys, L->nkeys, entry);
}

void pc_output_defaults_(pc_output_settings *o) { pc_list_entry_defaults_(&pc_picture_outputs_list_, o); }

void pc_settings_defaults(pc_settings *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < pc_nsections_; i++)
        if (pc_sections_[i].kind == PC_SEC_GROUP)
            apply_defaults(pc_sections_[i].keys, pc_sections_[i].nkeys, (char *)s + pc_sections_[i].off);
    pc_camera_defaults_(&s->capture.camera);
    for (int i = 0; i < PC_MAX_CAMERAS; i++)
        pc_camera_defaults_(&s->cameras[i]);
    s->output_count = 1;
    pc_output_defaults_(&s->outputs[0]);
    snprintf(s->outputs[0].url, sizeof s->outputs[0].url, "panocap.ts");
    s->outputs[0].set_mask = 1;
    pc_settings_finish(s);
}

void pc_settings_finish(pc_settings *s)
{
    for (int i = 0; i < PC_MAX_CAMERAS; i++) {
        pc_camera_settings *c = &s->cameras[i];
        for (int j = 0; j < pc_ncamera_keys_; j++) {
            const pc_key *k = &pc_camera_keys_[j];
            if (c->set_mask & (1u << j))
                continue;
            if (strcmp(k->name, "slab") == 0)
                c->slab = i;
            else
                memcpy(pc_key_field_(k, c), pc_key_cfield_(k, &s->capture.camera), pc_key_field_size_(k));
        }
    }
}
/* --- derived values and validation ------------------------------------ */

int pc_settings_stitching(const pc_settings *s) { return s->panorama.rig[0] && s->panorama.enabled; }

int pc_settings_panorama_width(const pc_settings *s) { return s->cameras[0].width; }

int pc_settings_panorama_height(const pc_settings *s)
{
    int h = 0;
    for (int i = 0; i < s->capture.cameras && i < PC_MAX_CAMERAS; i++)
        h += s->cameras[i].height;
    return h;
}

double pc_settings_budget_ms(const pc_settings *s)
{
    if (s->daemon.budget_ms > 0)
        return s->daemon.budget_ms;
    return s->capture.fps > 0 ? 1000.0 / s->capture.fps : 20.0;
}

const char *pc_settings_net_weights(const pc_settings *s)
{
    return s->debayer.net_weights[0] ? s->debayer.net_weights : pc_net_default_path();
}

int pc_settings_camera_for_slab(const pc_settings *s, int slab)
{
    for (int i = 0; i < s->capture.cameras && i < PC_MAX_CAMERAS; i++)
        if (s->cameras[i].slab == slab)
            return i;
    return -1;
}

static const char *cam_label(const pc_settings *s, int i, char *buf, size_t len)
{
    const pc_camera_settings *c = &s->cameras[i];
    const char *id = c->name[0] ? c->name : c->serial[0] ? c->serial : c->address;
    if (id[0])
        snprintf(buf, len, "cameras[%d] (%s)", i, id);
    else
        snprintf(buf, len, "cameras[%d]", i);
    return buf;
}

static int cam_line(const pc_settings *s, int i)
{
    return s->cameras[i].line ? s->cameras[i].line : s->capture.line;
}

/* Where a camera size key was given: "cameras[i].width" in the first
 * entry that sets it, else the capture default "capture.width". */
static int size_key(const pc_settings *s, const char *name, char *key, size_t n)
{
    const pc_key *k = pc_key_find_(pc_camera_keys_, pc_ncamera_keys_, name);
    unsigned bit = k ? 1u << pc_key_index_(pc_camera_keys_, k) : 0;
    for (int i = 0; i < s->capture.cameras && i < s->cameras_listed; i++)
        if (s->cameras[i].set_mask & bit) {
            snprintf(key, n, "cameras[%d].%s", i, name);
            return cam_line(s, i);
        }
    snprintf(key, n, "capture.%s", name);
    return s->capture.line;
}

/* The encoder's picture sides (encode_limits.h): a plan whose pictures it
 * would refuse at the start is refused here, naming the camera size. */
static int check_picture_sides(const pc_settings *s, pc_diag *d, const pc_layout_plan *lp, const char *which)
{
    char key[64];
    int bad_w = lp->width < PC_ENCODE_MIN_SIDE, bad_h = lp->height < PC_ENCODE_MIN_SIDE;
    if (!bad_w && !bad_h)
        return 0;
    int line = size_key(s, bad_w ? "width" : "height", key, sizeof key);
    pc_diag_add(d, PC_DIAG_ERROR, s->config_file, line, key,
                "the cameras are %dx%d: the encoder's picture would be %dx%d (%s %s), and encoders take %d..%d "
                "pixels a side; make the cameras at least %d pixels %s, or use the output \"null\" (no encoder)",
                s->cameras[0].width, s->cameras[0].height, lp->width, lp->height, which,
                pc_layout_name(lp->layout), PC_ENCODE_MIN_SIDE, PC_ENCODE_MAX_SIDE, PC_ENCODE_MIN_SIDE,
                bad_w ? "wide" : "high");
    return 1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

#define ERR(line, key, ...) (errors++, pc_diag_add(d, PC_DIAG_ERROR, file, line, key, __VA_ARGS__))
#define WARN(line, key, ...) pc_diag_add(d, PC_DIAG_WARNING, file, line, key, __VA_ARGS__)

/* One picture's outputs (prefix "outputs", "panorama.unstitched_outputs",
 * "virtual_cameras[0].outputs"): a URL each, known schemes, "null"
 * alone, no duplicates, options as key=value. Returns the errors added. */
static int check_outputs(const pc_settings *s, pc_diag *d, const char *prefix, const pc_output_settings *outs, int n)
{
    const char *file = s->config_file;
    int errors = 0;
    char key[160];
    for (int i = 0; i < n; i++) {
        const pc_output_settings *o = &outs[i];
        int line = o->line;
        snprintf(key, sizeof key, "%s[%d].url", prefix, i);
        if (!o->url[0]) {
            ERR(line, key, "missing or empty URL");
            continue;
        }
        char shown[PC_URL_LEN];
        pc_url_mask(o->url, shown, sizeof shown); /* messages never show a stream key */
        const char *sep = strstr(o->url, "://");
        if (sep) {
            static const char *const schemes[] = {"udp", "srt", "tcp", "rtp", "rtmp", "rtmps", "file"};
            size_t sl = (size_t)(sep - o->url);
            int ok = 0;
            for (size_t j = 0; j < sizeof schemes / sizeof schemes[0]; j++)
                ok |= strlen(schemes[j]) == sl && strncasecmp(o->url, schemes[j], sl) == 0;
            if (!ok)
                ERR(line, key, "unknown URL scheme \"%.*s\" in \"%s\"; allowed: udp://, srt://, tcp://, "
                    "rtp://, rtmp://, rtmps://, file:// or a plain path, or \"null\"", (int)sl, shown, shown);
            else if (pc_url_is_rtmp(o->url) && s->encode.codec != PC_CODEC_H264)
                ERR(line, key, "\"%s\": RTMP carries H.264 only (FLV, this FFmpeg) and encode.codec is "
                    "\"%s\"; set encode.codec = \"h264\" (every picture shares it) or drop this output",
                    shown, pc_codec_name((pc_codec)s->encode.codec));
        }
        if (strcmp(o->url, "null") == 0 && n > 1)
            ERR(line, key, "\"null\" (demosaic only, no encoder) cannot be combined with other outputs");
        for (int j = 0; j < i; j++)
            if (strcmp(o->url, outs[j].url) == 0)
                ERR(line, key, "duplicate output \"%s\" (also %s[%d])", shown, prefix, j);
        if (o->options[0]) {
            char opts[PC_OPTS_LEN];
            snprintf(opts, sizeof opts, "%s", o->options);
            char *save = NULL;
            for (char *t = strtok_r(opts, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(t, '=');
                if (!eq || eq == t) {
                    snprintf(key, sizeof key, "%s[%d].options", prefix, i);
                    ERR(line, key, "\"%s\" is not key=value (options are \"key=value,key=value\")", t);
                    break;
                }
            }
        }
    }
    return errors;
}

/* The panorama's settings that need no file (the .pto itself:
 * settings_rig.c). */
static int validate_panorama(const pc_settings *s, pc_diag *d)
{
    const char *file = s->config_file;
    const pc_panorama_settings *p = &s->panorama;
    int errors = 0;
    if (p->sampler == PC_RENDER_BICUBIC && p->blend == PC_RENDER_MULTIBAND)
        ERR(p->line, "panorama.sampler",
            "\"bicubic\" with blend \"multiband\": the multiband pyramid samples bilinear; use sampler "
            "\"bilinear\", or blend \"feather\" or \"seam\"");
    if (pc_settings_stitching(s)) {
        errors += check_outputs(s, d, "panorama.unstitched_outputs", p->unstitched.item, p->unstitched.count);
        return errors;
    }
    const char *why = p->rig[0] ? "panorama.enabled is false" : "no panorama.rig";
    if (p->unstitched.count)
        WARN(p->line, "panorama.unstitched_outputs",
             "%s: the outputs carry the unstitched cameras already; these %d output%s are not written", why,
             p->unstitched.count, p->unstitched.count == 1 ? "" : "s");
    if (p->width)
        WARN(p->line, "panorama.width", "%d: %s, so there is no panorama to size", p->width, why);
    return errors;
}

/* Where another entry is, for a message: "line 7", or "the command line"
 * for one that -s made (PC_LINE_CMDLINE). */
static const char *at_line(int line, char *buf, size_t n)
{
    if (line == PC_LINE_CMDLINE)
        snprintf(buf, n, "the command line");
    else
        snprintf(buf, n, "line %d", line);
    return buf;
}

/* A view's name: control commands, HTTP paths and metric labels carry it. */
int pc_settings_name_ok(const char *n)
{
    size_t len = strlen(n);
    return len > 0 && len < PC_NAME_LEN &&
           strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == len;
}

static int validate_vcams(const pc_settings *s, pc_diag *d)
{
    const char *file = s->config_file;
    int errors = 0;
    char key[160], pre[96], where[32];
    if (s->vcam_count > 0 && !s->panorama.rig[0])
        ERR(s->vcams[0].line, "virtual_cameras",
            "%d virtual camera%s need%s a rig: set panorama.rig to the Hugin project (.pto) of the cameras (or "
            "--rig FILE)", s->vcam_count, s->vcam_count == 1 ? "" : "s", s->vcam_count == 1 ? "s" : "");
    const char *lname = NULL;
    int limit = pc_encoder_side_limit(&s->encode, -1, &lname);
    for (int i = 0; i < s->vcam_count; i++) {
        const pc_vcam_settings *v = &s->vcams[i];
        int line = v->line;
        snprintf(pre, sizeof pre, "virtual_cameras[%d]", i);
        snprintf(key, sizeof key, "%s.name", pre);
        if (!v->name[0])
            ERR(line, key, "missing: every virtual camera needs a name");
        else if (!pc_settings_name_ok(v->name))
            ERR(line, key, "\"%s\": a name is letters, digits, '-', '_' and '.' (control commands, HTTP paths "
                "and metrics carry it)", v->name);
        for (int j = 0; j < i && v->name[0]; j++)
            if (strcmp(v->name, s->vcams[j].name) == 0)
                ERR(line, key, "duplicate name \"%s\" (also virtual_cameras[%d], %s)", v->name, j,
                    at_line(s->vcams[j].line, where, sizeof where));
        if ((v->width | v->height) & 1) {
            snprintf(key, sizeof key, "%s.%s", pre, v->width & 1 ? "width" : "height");
            ERR(line, key, "odd size %dx%d; the picture is 4:2:0 YUV, both sides even", v->width, v->height);
        }
        if (v->width > limit || v->height > limit) {
            snprintf(key, sizeof key, "%s.%s", pre, v->width > limit ? "width" : "height");
            ERR(line, key, "%dx%d is over the limit of %s (%d pixels a side)", v->width, v->height, lname, limit);
        } else if (!pc_encode_area_ok(v->width, v->height)) { /* every encoder: libavcodec's own check */
            snprintf(key, sizeof key, "%s.height", pre);
            ERR(line, key, "%dx%d is over the area libavcodec opens: (width + 128) x (height + 128) at most %lld; "
                "%d wide, at most %d high", v->width, v->height, PC_ENCODE_MAX_AREA, v->width,
                pc_encode_area_max_height(v->width));
        }
        if (v->min_hfov > v->max_hfov) {
            snprintf(key, sizeof key, "%s.min_hfov", pre);
            ERR(line, key, "%g is wider than max_hfov %g", v->min_hfov, v->max_hfov);
        }
        if (v->follow_min_hfov > v->follow_max_hfov) {
            snprintf(key, sizeof key, "%s.follow_min_hfov", pre);
            ERR(line, key, "%g is wider than follow_max_hfov %g", v->follow_min_hfov, v->follow_max_hfov);
        }
        snprintf(key, sizeof key, "%s.outputs", pre);
        if (v->outputs.count == 0)
            ERR(line, key, "no outputs: a virtual camera is encoded to its own outputs; give at least one (a "
                "file, udp://..., or \"null\" to render without encoding)");
        errors += check_outputs(s, d, key, v->outputs.item, v->outputs.count);
        for (int j = 0; j < v->presets.count; j++) {
            const pc_vcam_preset *p = &v->presets.item[j];
            snprintf(key, sizeof key, "%s.presets[%d].name", pre, j);
            if (!p->name[0])
                ERR(p->line, key, "missing: every preset needs a name");
            else if (!pc_settings_name_ok(p->name))
                ERR(p->line, key, "\"%s\": a preset's name is letters, digits, '-', '_' and '.' (the control "
                    "command `vcam VIEW preset NAME` and the web API carry it)", p->name);
            for (int k = 0; k < j && p->name[0]; k++)
                if (strcmp(p->name, v->presets.item[k].name) == 0)
                    ERR(p->line, key, "duplicate preset \"%s\" (also presets[%d], line %d)", p->name, k,
                        v->presets.item[k].line);
        }
    }
    return errors;
}

/* An output's place, for comparing pictures' outputs: "file:" and "./"
 * taken off (the same file either way). */
static const char *url_place(const char *u)
{
    if (strncmp(u, "file:", 5) == 0)
        u += strncmp(u, "file://", 7) == 0 ? 7 : 5;
    while (strncmp(u, "./", 2) == 0)
        u += 2;
    return u;
}

/* 1 when a and b are one place; a "%b" (the band number) stands for any
 * band. */
static int same_place(const char *a, const char *b)
{
    a = url_place(a);
    b = url_place(b);
    if (!strstr(a, "%b") && !strstr(b, "%b"))
        return strcmp(a, b) == 0;
    char x[PC_URL_LEN + 8], y[PC_URL_LEN + 8];
    for (int i = 0; i < PC_MAX_CAMERAS; i++)
        for (int j = 0; j < PC_MAX_CAMERAS; j++) {
            const char *ma = strstr(a, "%b"), *mb = strstr(b, "%b");
            if (ma)
                snprintf(x, sizeof x, "%.*s%d%s", (int)(ma - a), a, i, ma + 2);
            else
                snprintf(x, sizeof x, "%s", a);
            if (mb)
                snprintf(y, sizeof y, "%.*s%d%s", (int)(mb - b), b, j, mb + 2);
            else
                snprintf(y, sizeof y, "%s", b);
            if (strcmp(x, y) == 0)
                return 1;
        }
    return 0;
}

/* Two pictures writing one place (a file, a UDP port): the main outputs,
 * the unstitched outputs and every virtual camera's. */
static int check_output_collisions(const pc_settings *s, pc_diag *d)
{
    const char *file = s->config_file;
    int errors = 0;
    typedef struct {
        const pc_output_settings *o;
        char key[96];
        int picture;
    } place;
    place *all = malloc(sizeof *all * (PC_MAX_OUTPUTS + PC_MAX_PICTURE_OUTPUTS * (1 + PC_MAX_VCAMS)));
    if (!all)
        return 0;
    int n = 0;
    for (int i = 0; i < s->output_count; i++, n++) {
        all[n].o = &s->outputs[i];
        all[n].picture = 0;
        snprintf(all[n].key, sizeof all[n].key, "outputs[%d]", i);
    }
    if (pc_settings_stitching(s))
        for (int i = 0; i < s->panorama.unstitched.count; i++, n++) {
            all[n].o = &s->panorama.unstitched.item[i];
            all[n].picture = 1;
            snprintf(all[n].key, sizeof all[n].key, "panorama.unstitched_outputs[%d]", i);
        }
    for (int v = 0; v < s->vcam_count; v++)
        for (int i = 0; i < s->vcams[v].outputs.count; i++, n++) {
            all[n].o = &s->vcams[v].outputs.item[i];
            all[n].picture = 2 + v;
            snprintf(all[n].key, sizeof all[n].key, "virtual_cameras[%d].outputs[%d]", v, i);
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            if (all[i].picture == all[j].picture || !strcmp(all[i].o->url, "null") || !all[i].o->url[0] ||
                !same_place(all[i].o->url, all[j].o->url))
                continue;
            char key[128], where[32];
            snprintf(key, sizeof key, "%s.url", all[i].key);
            char shown[PC_URL_LEN];
            ERR(all[i].o->line, key, "\"%s\" is also %s's (%s): two pictures cannot write one output",
                pc_url_mask(all[i].o->url, shown, sizeof shown), all[j].key, at_line(all[j].o->line, where, sizeof where));
            break;
        }
    free(all);
    return errors;
}

int pc_settings_validate(const pc_settings *s, pc_diag *d)
{
    const char *file = s->config_file;
    int errors = 0;
    char key[96], la[96], lb[96];
    int n = s->capture.cameras;
    if (n < 1 || n > PC_MAX_CAMERAS) {
        ERR(s->capture.line, "capture.cameras", "%d cameras; allowed: 1..%d", n, PC_MAX_CAMERAS);
        return -1;
    }

    /* Sources. */
    if (s->capture.source == PC_SOURCE_GIGE) {
        if (s->cameras_listed == 0)
            ERR(s->capture.line, "cameras",
                "source \"gige\" needs the cameras list, each with an address or serial "
                "(cameras are never opened as \"first found\")");
        else if (s->cameras_listed != n)
            ERR(s->capture.line, "capture.cameras",
                "%d cameras, but the cameras list has %d entries; with source \"gige\" every "
                "camera must be listed", n, s->cameras_listed);
        for (int i = 0; i < n && i < s->cameras_listed; i++) {
            const pc_camera_settings *c = &s->cameras[i];
            if (!c->address[0] && !c->serial[0])
                ERR(cam_line(s, i), cam_label(s, i, la, sizeof la),
                    "no address or serial; a GigE camera is opened by IP address, device id or serial");
        }
    } else if (s->cameras_listed > n) {
        WARN(s->capture.line, "capture.cameras", "%d cameras: only the first %d of the %d listed are used",
             n, n, s->cameras_listed);
    }
    if (s->capture.source == PC_SOURCE_FILE && !s->capture.file[0])
        ERR(s->capture.line, "capture.file", "source \"file\" needs a file (capture.file, or --source file:PATH)");

    /* Camera identities, slabs, sizes, patterns. */
    int slab_owner[PC_MAX_CAMERAS];
    for (int i = 0; i < PC_MAX_CAMERAS; i++)
        slab_owner[i] = -1;
    for (int i = 0; i < n; i++) {
        const pc_camera_settings *c = &s->cameras[i];
        for (int j = 0; j < i; j++) {
            const pc_camera_settings *o = &s->cameras[j];
            if (c->address[0] && strcmp(c->address, o->address) == 0)
                ERR(cam_line(s, i), cam_label(s, i, la, sizeof la),
                    "duplicate camera: address \"%s\" is also used by %s (line %d)", c->address,
                    cam_label(s, j, lb, sizeof lb), cam_line(s, j));
            if (c->serial[0] && strcmp(c->serial, o->serial) == 0)
                ERR(cam_line(s, i), cam_label(s, i, la, sizeof la),
                    "duplicate camera: serial \"%s\" is also used by %s (line %d)", c->serial,
                    cam_label(s, j, lb, sizeof lb), cam_line(s, j));
            if (c->name[0] && strcmp(c->name, o->name) == 0)
                ERR(cam_line(s, i), cam_label(s, i, la, sizeof la),
                    "duplicate camera name \"%s\" (also %s)", c->name, cam_label(s, j, lb, sizeof lb));
        }
        snprintf(key, sizeof key, "cameras[%d].slab", i);
        if (c->slab < 0 || c->slab >= n)
            ERR(cam_line(s, i), key, "slab %d is out of range; with %d cameras: 0..%d", c->slab, n, n - 1);
        else if (slab_owner[c->slab] >= 0)
            ERR(cam_line(s, i), key, "slab %d is also given to %s; each slab needs exactly one camera",
                c->slab, cam_label(s, slab_owner[c->slab], lb, sizeof lb));
        else
            slab_owner[c->slab] = i;
        /* Sizes set through code paths that bypass the key checks. */
        if ((c->width | c->height | c->offset_x | c->offset_y) & 1) {
            snprintf(key, sizeof key, "cameras[%d]", i);
            ERR(cam_line(s, i), key, "odd size or offset (%dx%d at %d,%d); all must be even (whole 2x2 Bayer tiles)",
                c->width, c->height, c->offset_x, c->offset_y);
        }
        if (i > 0 && c->width != s->cameras[0].width) {
            snprintf(key, sizeof key, "cameras[%d].width", i);
            ERR(cam_line(s, i), key,
                "%d differs from %s's %d; every camera must have the same width to stack into one panorama",
                c->width, cam_label(s, 0, lb, sizeof lb), s->cameras[0].width);
        }
        if (i > 0 && c->pattern != s->cameras[0].pattern) {
            snprintf(key, sizeof key, "cameras[%d].pattern", i);
            ERR(cam_line(s, i), key,
                "%s differs from %s's %s; the panorama is demosaiced as one image, so every "
                "camera needs the same pattern (adjust offset_x/offset_y by one pixel to change phase)",
                pc_cfa_name((pc_cfa)c->pattern), cam_label(s, 0, lb, sizeof lb),
                pc_cfa_name((pc_cfa)s->cameras[0].pattern));
        }
        /* Colour keys (docs/colour.md), and the link budget of the format. */
        pc_camera_colour cc;
        char ckey[32], cerr[400];
        if (pc_settings_camera_colour(c, &cc, ckey, sizeof ckey, cerr, sizeof cerr)) {
            snprintf(key, sizeof key, "cameras[%d].%s", i, ckey);
            ERR(cam_line(s, i), key, "%s", cerr);
        } else if (s->capture.source == PC_SOURCE_FAKE && cc.fmt.packing != PC_PACK_8 && !cc.fmt_auto) {
            snprintf(key, sizeof key, "cameras[%d].pixel_format", i);
            ERR(cam_line(s, i), key, "%s: fake cameras send 8-bit Bayer only (replay a recording with source "
                "\"file\" for other formats)", c->pixel_format);
            pc_camera_colour_free(&cc);
        } else {
            double rate = pc_rawfmt_rate_bytes(&cc.fmt, c->width, c->height, s->capture.fps);
            if (s->capture.source == PC_SOURCE_GIGE && rate > PC_GIGE_PAYLOAD_BYTES_S && !cc.fmt_auto) {
                char fn[32];
                pc_rawfmt_name(&cc.fmt, fn, sizeof fn);
                snprintf(key, sizeof key, "cameras[%d].pixel_format", i);
                WARN(cam_line(s, i), key,
                     "%s at %dx%d and %g fps needs %.0f MB/s, more than a gigabit link carries (about %.0f MB/s): "
                     "frames will be lost unless the link is faster (lower the rate, the region or the bit depth)",
                     fn, c->width, c->height, s->capture.fps, rate / 1e6, PC_GIGE_PAYLOAD_BYTES_S / 1e6);
            }
            pc_camera_colour_free(&cc);
        }
        if (c->exposure_us > 0 && s->capture.fps > 0 && c->exposure_us > 1e6 / s->capture.fps) {
            snprintf(key, sizeof key, "cameras[%d].exposure", i);
            WARN(cam_line(s, i), key, "%g us is longer than the frame period (%g us at %g fps); "
                 "the camera cannot keep the frame rate", c->exposure_us, 1e6 / s->capture.fps,
                 s->capture.fps);
        }
    }
    int W = pc_settings_panorama_width(s), H = pc_settings_panorama_height(s);
    /* The spec's frame limits (kernels/debayer.h); checked here rather than
     * with pc_check_size so that config links only the algorithm table. */
    if (W < PC_MIN_DIM || H < PC_MIN_DIM || W > PC_MAX_DIM || H > PC_MAX_DIM)
        ERR(s->capture.line, "cameras", "panorama %dx%d is outside %d..%d pixels in width or height", W, H,
            PC_MIN_DIM, PC_MAX_DIM);

    /* Debayer. */
    const pc_algo_desc *ad = pc_algo_get((pc_algo_id)s->debayer.algo);
    if (!ad)
        ERR(s->debayer.line, "debayer.algo", "invalid algorithm id %d", s->debayer.algo);
    else if (s->debayer.variant != PC_VARIANT_AUTO && !(ad->variants & (unsigned)s->debayer.variant))
        ERR(s->debayer.line, "debayer.variant", "algorithm %s has no %s variant", ad->name,
            pc_variant_name((pc_variant)s->debayer.variant));
    if (s->debayer.backend == PC_BACKEND_CUDA && !PANOCAP_HAVE_CUDA)
        ERR(s->debayer.line, "debayer.backend",
            "\"cuda\": this panocap was built without CUDA; allowed here: auto, cpu");
    /* The learned demosaic's weights, loaded and checked as the daemon
     * will (net.h): an error where net runs from the start, a warning where
     * they are configured for a later live switch. */
    if (s->debayer.algo == PC_ALGO_NET || s->debayer.net_weights[0]) {
        char e[700];
        pc_net *net = NULL;
        if (pc_net_load(&net, pc_settings_net_weights(s), e, sizeof e)) {
            if (s->debayer.algo == PC_ALGO_NET)
                ERR(s->debayer.line, s->debayer.net_weights[0] ? "debayer.net_weights" : "debayer.algo",
                    "algorithm net: %s", e);
            else
                WARN(s->debayer.line, "debayer.net_weights", "%s: a live switch to net will fail", e);
        }
        pc_net_free(net);
    }

    /* Encoder. */
    const char *enc = s->encode.encoder;
    if (!enc[0])
        ERR(s->encode.line, "encode.encoder", "empty; use \"auto\" or an FFmpeg encoder name");
    /* The unstitched picture: the outputs' without a panorama, the
     * unstitched_outputs' with one; its layout is checked where it is
     * encoded. */
    const int stitching = pc_settings_stitching(s);
    const pc_output_settings *uo = stitching ? s->panorama.unstitched.item : s->outputs;
    const int un = stitching ? s->panorama.unstitched.count : s->output_count;
    /* The layout: bands not dividing the cameras, a picture over the
     * encoder's limit, grid. The picture an encoder gets is a band's. */
    pc_layout_plan lp = {0};
    char lerr[512];
    if (W > 0 && H > 0 && n > 0 && n <= PC_MAX_CAMERAS && (!stitching || un > 0)) {
        if (pc_layout_resolve(&s->encode, n, W, H / n, -1, 1, &lp, lerr, sizeof lerr))
            ERR(s->encode.line, s->encode.grid[0] && strstr(lerr, "grid")            ? "encode.grid"
                                : s->encode.bands && !strstr(lerr, "encode.layout") ? "encode.bands"
                                                                                     : "encode.layout",
                "%s", lerr);
        else
            H = lp.height;
    }
    int EW = lp.width > 0 ? lp.width : W; /* the encoder's picture: a grid is wider */
    int encodes = 0;
    for (int i = 0; i < un; i++)
        encodes |= strcmp(uo[i].url, "null") != 0;
    if (encodes && lp.width > 0)
        errors += check_picture_sides(s, d, &lp, "layout");
    if (s->encode.preview_scale && !s->encode.preview_url[0])
        ERR(s->encode.line, "encode.preview_url", "encode.preview_scale = %d needs the preview's output URL",
            s->encode.preview_scale);
    int PH = pc_settings_panorama_height(s);
    if (!stitching && s->encode.preview_scale && W > 0 && PH > 0 && /* a stitched one: settings_rig.c */
        (W / s->encode.preview_scale < 16 || PH / s->encode.preview_scale < 16))
        ERR(s->encode.line, "encode.preview_scale", "%d: the %dx%d panorama would be smaller than 16 pixels",
            s->encode.preview_scale, W, PH);
    if (encodes && s->encode.codec == PC_CODEC_H264 && ends_with(enc, "_nvenc") && (EW > 4096 || H > 4096))
        ERR(s->encode.line, "encode.codec",
            "h264 with encoder %s: NVENC H.264 is limited to 4096x4096 and the picture is %dx%d; "
            "use codec \"hevc\" (hevc_nvenc, up to 8192) or a software encoder", enc, EW, H);
    /* encoder auto: where NVENC opens, the layout is NVENC's (stacked, grid
     * or bands inside its limit); no layout of these cameras fits NVENC
     * H.264 when even one camera is over 4096 */
    pc_layout_plan nv;
    if (encodes && s->encode.codec == PC_CODEC_H264 && strcmp(enc, "auto") == 0 && W > 0 && H > 0 && n > 0 &&
        n <= PC_MAX_CAMERAS && pc_layout_resolve(&s->encode, n, W, pc_settings_panorama_height(s) / n, 1, 1, &nv, lerr,
                                                 sizeof lerr))
        WARN(s->encode.line, "encode.codec",
             "h264: NVENC H.264 cannot take these cameras (%s); the fallback encoders will be used; codec "
             "\"hevc\" keeps NVENC", lerr);
    for (int i = 0; i < s->encode.fallback.count; i++)
        if (!s->encode.fallback.item[i][0])
            ERR(s->encode.line, "encode.fallback", "entry %d is empty", i);
    if (strcmp(enc, "auto") == 0 && s->encode.fallback.count == 0)
        WARN(s->encode.line, "encode.fallback",
             "empty: where NVENC cannot open there is no encoder to fall back to");

    /* Outputs: each picture's, then across pictures. */
    if (s->output_count == 0)
        ERR(0, "outputs", "no outputs; give at least one (a file, udp://..., or \"null\" to discard)");
    errors += check_outputs(s, d, "outputs", s->outputs, s->output_count);
    errors += validate_panorama(s, d);
    errors += validate_vcams(s, d);
    errors += check_output_collisions(s, d);

    /* Daemon. */
    double period_ms = 1000.0 / s->capture.fps;
    if (s->daemon.budget_ms > period_ms)
        WARN(s->daemon.line, "daemon.budget_ms",
             "%g ms is longer than the frame period (%.3g ms at %g fps): frames within budget can "
             "still pile up", s->daemon.budget_ms, period_ms, s->capture.fps);
    if (strlen(s->daemon.control) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        ERR(s->daemon.line, "daemon.control", "path is too long for a UNIX socket (%zu characters; at most %zu)",
            strlen(s->daemon.control), sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
    if (s->daemon.stats_interval_s > 0 && s->daemon.stats_interval_s > s->daemon.stats_window_s)
        WARN(s->daemon.line, "daemon.stats_interval",
             "%g s is longer than the stats window (%g s): percentiles cover only part of each interval",
             s->daemon.stats_interval_s, s->daemon.stats_window_s);
    cpu_set_t cpus;
    char why_cpu[256];
    if (s->daemon.capture_cpus[0] && pc_cpulist_parse(s->daemon.capture_cpus, &cpus, why_cpu, sizeof why_cpu) < 0)
        ERR(s->daemon.line, "daemon.capture_cpus", "%s", why_cpu);
    if (s->encode.cpus[0] && pc_cpulist_parse(s->encode.cpus, &cpus, why_cpu, sizeof why_cpu) < 0)
        ERR(s->encode.line, "encode.cpus", "%s", why_cpu);
    if (s->debayer.gpu[0]) {
        const char *g = s->debayer.gpu;
        size_t digits = strspn(g, "0123456789");
        int uuid = (!strncmp(g, "GPU-", 4) || !strncmp(g, "MIG-", 4)) && strlen(g) >= 12 &&
                   strspn(g + 4, "0123456789abcdefABCDEF-/") == strlen(g + 4);
        if (!(digits == strlen(g) && digits <= 3) && !uuid)
            ERR(s->debayer.line, "debayer.gpu",
                "\"%s\" is neither a device index (\"0\", \"1\"...) nor a UUID (\"GPU-8c4f...\" as nvidia-smi -L "
                "prints it)", g);
        else if (!PANOCAP_HAVE_CUDA || s->debayer.backend == PC_BACKEND_CPU)
            WARN(s->debayer.line, "debayer.gpu", "%s: \"%s\" selects the GPU of NVENC only",
                 PANOCAP_HAVE_CUDA ? "backend is cpu" : "this build has no CUDA", g);
    }
    if (s->daemon.metrics_listen[0]) {
        struct sockaddr_storage ss;
        socklen_t sl;
        char why[256];
        if (!PANOCAP_HAVE_HTTP)
            ERR(s->daemon.line, "daemon.metrics_listen",
                "this panocap was built without libmicrohttpd, so it cannot serve HTTP metrics (install "
                "libmicrohttpd-dev and rebuild, or use the control socket: curl --unix-socket SOCKET "
                "http://localhost/metrics)");
        else if (pc_parse_listen(s->daemon.metrics_listen, &ss, &sl, why, sizeof why))
            ERR(s->daemon.line, "daemon.metrics_listen", "%s", why);
    }
    if (s->daemon.http_listen[0]) {
        struct sockaddr_storage ss;
        socklen_t sl;
        char why[256];
        if (!PANOCAP_HAVE_HTTP)
            ERR(s->daemon.line, "daemon.http_listen",
                "this panocap was built without libmicrohttpd, so it cannot serve the web page (install "
                "libmicrohttpd-dev and rebuild)");
        else if (pc_parse_listen(s->daemon.http_listen, &ss, &sl, why, sizeof why))
            ERR(s->daemon.line, "daemon.http_listen", "%s", why);
    } else if (s->daemon.http_token_file[0]) {
        WARN(s->daemon.line, "daemon.http_token_file", "has no effect without daemon.http_listen");
    }
    for (int i = 0; i < s->daemon.http_allowed_hosts.count; i++) {
        char why[256];
        if (pc_host_pattern_ok(s->daemon.http_allowed_hosts.item[i], why, sizeof why))
            ERR(s->daemon.line, "daemon.http_allowed_hosts", "entry %d: %s", i, why);
    }
    if (s->daemon.http_allowed_hosts.count && !s->daemon.http_listen[0])
        WARN(s->daemon.line, "daemon.http_allowed_hosts", "has no effect without daemon.http_listen");
#undef ERR
#undef WARN
    return errors ? -1 : 0;
}
