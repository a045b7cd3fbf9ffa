/* test_config_rig.c - the panorama and virtual_cameras sections against
 * real libconfig files and real Hugin project files (.pto), through what
 * --check-config and the start run (pc_settings_load, pc_settings_validate,
 * pc_settings_check_rig):
 *   - a full configuration is stored as written, checked against its rig,
 *     sized against the encoder (auto, an explicit width, NVENC's limits),
 *     and its views start inside the rig's coverage (moved there with a
 *     warning naming the key);
 *   - every rig error (missing, unreadable, not a .pto, camera count, image
 *     size, a bad field) names the .pto's file and line and field, and the
 *     key panorama.rig at its line in the configuration; masks warn;
 *   - every bad view (duplicate or bad name, odd or oversized picture,
 *     hfov 0, unknown mode, outputs colliding with another picture's, no
 *     rig, too many, presets) names file:line:key;
 *   - the vcam/ structs a view fills start from vcam/'s own defaults, and
 *     the key table's defaults are those;
 *   - reload: what changes live (another rig, the rig rewritten, blend,
 *     a view's pose and presets) and what needs a restart (the width,
 *     adding the rig, the views' list and sizes); the dump loads back the
 *     same, nested lists included; --set reaches the views. */
#include "settings.h"
#include "settings_rig.h"
#include "render.h"
#include "panocap_config.h"
#include "config_testutil.h"
#include "tap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A rig of n cameras 2040x1080 (rectilinear, 50 degrees, 40 degrees apart)
 * into a cylindrical 8600x1300 panorama; image `bad` gets `bad_fields`
 * instead of its "w2040 h1080 f0 v50" (e.g. "w2000 h1080 f0 v50"); extra
 * lines at the end. Line 1 is a comment, 2 the p line, 3 an m line, 4..
 * the images. Returns its path (a static copy, kept until the next call). */
static const char *write_rig(const char *name, int n, int bad, const char *bad_fields, const char *extra)
{
    static char path[256];
    char text[4096];
    size_t o = (size_t)snprintf(text, sizeof text, "# hugin project\np f1 w8600 h1300 v210 E0 R0 n\"TIFF_m\"\nm i0\n");
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "i %s r0 p0 y%d n\"cam%d.png\"\n",
                              i == bad ? bad_fields : "w2040 h1080 f0 v50", -80 + 40 * i, i);
    snprintf(text + o, sizeof text - o, "%s", extra ? extra : "");
    snprintf(path, sizeof path, "%s", write_conf(name, text));
    return path;
}

/* What the start runs on the configuration: load, validate, the rig. */
static int load_checked(const char *name, const char *text, pc_settings *s, pc_diag *d, pc_rig_setup *rs)
{
    pc_settings_defaults(s);
    pc_diag_init(d);
    const char *p = write_conf(name, text);
    if (pc_settings_load(s, p, d) == 0 && pc_settings_validate(s, d) == 0)
        pc_settings_check_rig(s, rs, d);
    return d->errors;
}

/* A configuration with an error: it names file:line, key and the needles. */
static void check_error(const char *what, const char *name, const char *text, int line, const char *key,
                        const char *needle1, const char *needle2)
{
    pc_settings *s = malloc(sizeof *s);
    pc_diag d;
    load_checked(name, text, s, &d, NULL);
    char where[200];
    snprintf(where, sizeof where, "%s:%d: error: %s: ", name, line, key);
    const pc_diag_item *it = find_item(&d, where, needle1, needle2);
    TAP_CHECK(it != NULL, "%s: \"%s\" and \"%s\"%s%s", what, where, needle1, needle2 ? " ... " : "",
              needle2 ? needle2 : "");
    if (!it)
        dump(&d);
    free(s);
}

/* The panorama section naming rig (a path), with the rest of its lines. */
static const char *pano(const char *rig, const char *more)
{
    static char text[4][2048];
    static int k;
    char *t = text[k++ % 4];
    snprintf(t, 2048, "panorama = {\n  rig = \"%s\";\n};\n%s", rig, more ? more : "");
    return t;
}

static void test_accepts(void)
{
    const char *rig = write_rig("rig.pto", 5, -1, NULL, NULL);
    char text[2048];
    snprintf(text, sizeof text,
             "panorama = {\n  rig = \"%s\";\n  blend = \"multiband\";\n  gain_compensation = false;\n"
             "  gain_smoothing = 5.0;\n  unstitched_outputs = ( \"cams.ts\", { url = \"udp://127.0.0.1:5004\"; "
             "options = \"pkt_size=1316\"; } );\n};\n"
             "virtual_cameras = (\n"
             "  { name = \"main\"; pan = 5.0; tilt = -1.0; hfov = 40.0; bitrate = \"6M\";\n"
             "    outputs = ( \"main.ts\", { url = \"udp://127.0.0.1:5002\"; segment = 0; } );\n"
             "    presets = ( { name = \"left-goal\"; pan = -60.0; tilt = 0.0; hfov = 30.0; },\n"
             "                { name = \"centre\"; pan = 0.0; tilt = 0.0; } );\n"
             "    max_speed = 45.0; follow_dead_zone = 0.1; },\n"
             "  { name = \"wide.1\"; width = 1280; height = 720; mode = \"follow\"; hfov = 60.0;\n"
             "    sampler = \"bilinear\"; outputs = ( \"wide.ts\" ); }\n"
             ");\n",
             rig);
    pc_settings *s = malloc(sizeof *s);
    pc_rig_setup *rs = malloc(sizeof *rs);
    pc_diag d;
    int e = load_checked("full.conf", text, s, &d, rs);
    TAP_CHECK(e == 0 && rs->have_rig && rs->rig.ncam == 5, "panorama and 2 virtual cameras: 0 errors, rig read (%d)",
              e);
    if (e)
        dump(&d);
    const pc_panorama_settings *p = &s->panorama;
    TAP_CHECK(pc_settings_stitching(s) && p->blend == PC_RENDER_MULTIBAND && !p->gain_compensation &&
                  p->gain_smoothing_s == 5.0 && p->width == 0 && p->unstitched.count == 2 &&
                  strcmp(p->unstitched.item[0].url, "cams.ts") == 0 &&
                  strcmp(p->unstitched.item[1].options, "pkt_size=1316") == 0 && p->line == 1,
              "panorama: blend, gains, unstitched_outputs (a string and a group) as written");
    TAP_CHECK(p->sampler == PC_RENDER_SAMPLER_AUTO && s->vcams[0].sampler == PC_RENDER_SAMPLER_AUTO &&
                  s->vcams[1].sampler == PC_RENDER_BILINEAR,
              "samplers: the panorama's and a view's auto by default, a view's bilinear as written");
    const pc_vcam_settings *v = &s->vcams[0], *w = &s->vcams[1];
    TAP_CHECK(s->vcam_count == 2 && strcmp(v->name, "main") == 0 && v->width == 1920 && v->height == 1080 &&
                  v->pan == 5.0 && v->tilt == -1.0 && v->hfov == 40.0 && v->bitrate == 6000000 &&
                  v->mode == PC_VCAM_MANUAL && v->outputs.count == 2 &&
                  strcmp(v->outputs.item[1].url, "udp://127.0.0.1:5002") == 0 && v->presets.count == 2 &&
                  strcmp(v->presets.item[0].name, "left-goal") == 0 && v->presets.item[0].pan == -60.0 &&
                  v->presets.item[1].hfov == 0 && v->max_speed == 45.0 && v->follow_dead_zone == 0.1 &&
                  v->line == 9 && v->presets.item[1].line == 12,
              "virtual camera main: size, pose, bitrate, outputs, presets, limits as written (lines %d, %d)", v->line,
              v->presets.item[1].line);
    TAP_CHECK(strcmp(w->name, "wide.1") == 0 && w->width == 1280 && w->mode == PC_VCAM_FOLLOW &&
                  w->bitrate == 8000000 && w->presets.count == 0 && w->max_speed == 30.0,
              "virtual camera wide.1: follow mode, the defaults elsewhere");
    /* main: pan 5, tilt -1 at 40 degrees is seen; wide.1: 60 degrees is
     * wider than the rig's 27.7-degree-high cameras allow at 16:9 */
    const pc_diag_item *moved = find_item(&d, "full.conf:14: warning: virtual_cameras[1].hfov: hfov 60.0 ->", NULL, NULL);
    TAP_CHECK(rs->start[0].pan == 5.0 && rs->start[0].tilt == -1.0 && rs->start[0].hfov == 40.0 && moved &&
                  rs->start[1].hfov < 60.0 && rs->start[1].hfov > 30.0 && d.warnings == 1,
              "start poses: main as configured, wide.1 zoomed in to %.1f degrees with a warning naming "
              "full.conf:14 and virtual_cameras[1].hfov", rs->start[1].hfov);
    if (!moved || d.warnings != 1)
        dump(&d);

    /* the panorama's size: the .pto's, then the encoder's limits */
    int pw, ph;
    char why[512];
    int r = pc_settings_panorama_size(s, &rs->rig, -1, &pw, &ph, why, sizeof why);
    TAP_CHECK(r == 0 && pw == 8600 && ph == 1300, "size: the .pto's 8600x1300 (%s)", why);
    r = pc_settings_panorama_size(s, &rs->rig, 1, &pw, &ph, why, sizeof why);
    TAP_CHECK(r == 1 && pw == 8192 && ph == 1238 && strstr(why, "capped to 8192x1238: NVENC HEVC takes at most 8192"),
              "size with NVENC HEVC: capped to 8192x1238, field of view kept (%s)", why);
    snprintf(s->encode.encoder, sizeof s->encode.encoder, "h264_nvenc");
    s->encode.codec = PC_CODEC_H264;
    r = pc_settings_panorama_size(s, &rs->rig, -1, &pw, &ph, why, sizeof why);
    TAP_CHECK(r == 1 && pw == 4096 && ph == 620 && strstr(why, "NVENC H.264 takes at most 4096"),
              "size with encoder h264_nvenc: 4096x620 (%s)", why);
    snprintf(s->encode.encoder, sizeof s->encode.encoder, "libx264");
    s->panorama.width = 4300;
    r = pc_settings_panorama_size(s, &rs->rig, -1, &pw, &ph, why, sizeof why);
    TAP_CHECK(r == 0 && pw == 4300 && ph == 650 && strstr(why, "panorama.width 4300"),
              "panorama.width 4300: 4300x650, the same field of view (%s)", why);

    /* vcam/'s structs from a view: its values, vcam/'s defaults, and the
     * key table says the same defaults */
    pc_vcam_limits lim, ldef;
    pc_follow_params fp, fdef;
    pc_settings_vcam_limits(v, &lim);
    pc_settings_vcam_follow(v, &fp);
    TAP_CHECK(lim.max_speed == 45.0 && fp.dead_zone == 0.1, "limits and follow parameters from the view's keys");
    pc_settings_vcam_limits(w, &lim);
    pc_settings_vcam_follow(w, &fp);
    pc_vcam_limits_default(&ldef);
    pc_follow_params_default(&fdef);
    TAP_CHECK(memcmp(&lim, &ldef, sizeof lim) == 0 && memcmp(&fp, &fdef, sizeof fp) == 0,
              "a view with no limits given: exactly pc_vcam_limits_default and pc_follow_params_default "
              "(the key table's defaults are vcam/'s)");
    free(rs);
    free(s);
}

static void test_rig_errors(void)
{
    char dir_conf[256], text[1024];
    check_error("missing .pto", "missing.conf", pano("/nonexistent/rig.pto", NULL), 1, "panorama.rig",
                "/nonexistent/rig.pto: cannot open the rig file: No such file or directory", NULL);
    snprintf(dir_conf, sizeof dir_conf, "%s", pano(config_tmpdir, NULL));
    check_error("a folder for a .pto", "folder.conf", dir_conf, 1, "panorama.rig", "read error: Is a directory", NULL);
    check_error("an unreadable .pto (read fails: EIO)", "eio.conf", pano("/proc/self/mem", NULL), 1, "panorama.rig",
                "/proc/self/mem: read error: Input/output error", NULL);
    const char *txt = write_conf("notes.pto", "these are my notes\nabout the rig\n");
    check_error("not a .pto (text)", "text.conf", pano(txt, NULL), 1, "panorama.rig",
                "notes.pto: no p line (the panorama's projection and size): not a Hugin project?", NULL);
    char bin[256];
    snprintf(bin, sizeof bin, "%s/image.pto", config_tmpdir);
    FILE *f = fopen(bin, "wb");
    fwrite("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 1, 16, f);
    fclose(f);
    check_error("not a .pto (binary)", "binary.conf", pano(bin, NULL), 1, "panorama.rig",
                "image.pto:3: a NUL byte: not a Hugin project", NULL);
    check_error("4 images for 5 cameras", "count.conf", pano(write_rig("four.pto", 4, -1, NULL, NULL), NULL), 1,
                "panorama.rig", "four.pto: 4 i lines (images) for 5 cameras", "capture.cameras");
    check_error("an image of another size", "size.conf",
                pano(write_rig("size.pto", 5, 2, "w2000 h1080 f0 v50", NULL), NULL), 1, "panorama.rig",
                "size.pto:6: i line (image 2): fields w h: 2000x1080, but camera 2 delivers 2040x1080", NULL);
    check_error("a bad field", "field.conf", pano(write_rig("field.pto", 5, 1, "w2040 h1080 f0 v0", NULL), NULL), 1,
                "panorama.rig", "field.pto:5: i line (image 1): field v: 0 is not a field of view", NULL);
    check_error("an unknown projection", "proj.conf",
                pano(write_conf("proj.pto", "p f9 w100 h100 v90\ni w2040 h1080 f0 v50\n"), NULL), 1, "panorama.rig",
                "proj.pto:1: p line: field f: projection 9 is not supported", NULL);
    /* the rig on its own line of a longer file: that line */
    snprintf(text, sizeof text, "daemon = { log_level = \"info\"; };\n\npanorama = {\n  blend = \"seam\";\n  rig = \"%s\";\n};\n",
             write_rig("field2.pto", 5, 3, "w2040 h1080 f0 v0", NULL));
    check_error("the rig's error at the panorama section's line", "line.conf", text, 3, "panorama.rig",
                "field2.pto:7: i line (image 3): field v: 0", NULL);
    /* cameras of other sizes than the rig's */
    check_error("rig against cameras 1024x768", "cam.conf",
                pano(write_rig("cam.pto", 5, -1, NULL, NULL), "capture = { width = 1024; height = 768; };\n"), 1,
                "panorama.rig", "i line (image 0): fields w h: 2040x1080, but camera 0 delivers 1024x768", NULL);

    check_error("sampler bicubic with blend multiband", "mbcubic.conf",
                (snprintf(text, sizeof text, "panorama = {\n  rig = \"%s\";\n  blend = \"multiband\";\n  sampler = "
                          "\"bicubic\";\n};\n", write_rig("mbc.pto", 5, -1, NULL, NULL)), text),
                1, "panorama.sampler", "\"bicubic\" with blend \"multiband\": the multiband pyramid samples bilinear",
                NULL);
    check_error("an unknown sampler", "lanczos.conf",
                pano(write_rig("lz.pto", 5, -1, NULL, NULL), "virtual_cameras = ( { name = \"v\"; sampler = \"lanczos\"; "
                     "outputs = ( \"v.ts\" ); } );\n"), 4, "virtual_cameras[0].sampler", "lanczos", "bilinear, bicubic, auto");
    /* masks are read, not applied: a warning */
    pc_settings *s = malloc(sizeof *s);
    pc_diag d;
    int e = load_checked("masks.conf", pano(write_rig("masks.pto", 5, -1, NULL, "k i2 t0 p\"10 10 20 10 20 20\"\n"),
                                            NULL), s, &d, NULL);
    const pc_diag_item *it = find_item(&d, "masks.conf:1: warning: panorama.rig: ", "masks.pto:6: i line (image 2): 1 mask",
                                       "does not apply masks");
    TAP_CHECK(e == 0 && it, "a mask on image 2: accepted with a warning naming masks.pto:6 and panorama.rig");
    if (!it)
        dump(&d);
    /* a canvas of 65536x65536: capped inside 16384 a side and inside
     * libavcodec's area (16384x16384 is not), both sides even; an explicit
     * width of 16384 on it is refused, naming the largest that fits */
    snprintf(text, sizeof text, "panorama = {\n  rig = \"%s\";\n};\n",
             write_conf("square.pto", "p f1 w65536 h65536 v210\ni w2040 h1080 f0 v50 y-80\n"
                        "i w2040 h1080 f0 v50 y-40\ni w2040 h1080 f0 v50 y0\ni w2040 h1080 f0 v50 y40\n"
                        "i w2040 h1080 f0 v50 y80\n"));
    pc_rig_setup *rs = malloc(sizeof *rs);
    e = load_checked("square.conf", text, s, &d, rs);
    int pw = 0, ph = 0;
    char why[512] = "";
    int r = e == 0 ? pc_settings_panorama_size(s, &rs->rig, -1, &pw, &ph, why, sizeof why) : -1;
    TAP_CHECK(r == 1 && pw == 16254 && ph == 16254 && strstr(why, "capped to 16254x16254") &&
                  strstr(why, "(width + 128) x (height + 128)"),
              "a 65536x65536 canvas: capped to 16254x16254, the largest square libavcodec opens (%s)", why);
    free(rs);
    snprintf(text, sizeof text, "panorama = {\n  rig = \"%s/square.pto\";\n  width = 16384;\n};\n", config_tmpdir);
    check_error("panorama.width 16384 on a square canvas: over libavcodec's area", "square16k.conf", text, 1,
                "panorama.width", "capped to 16254x16254", "a width of at most 16254 keeps it inside");
    /* sizes under the encoders' 16 pixels: the message says why. A canvas
     * too long for its height is capped to a sliver (it said "under the
     * 16 pixels" of the 65536x20 canvas); a 1x1 crop names the crop and
     * its size (it said "output size 0x0") */
    check_error("a 65536x20 canvas: capped to a sliver", "long.conf",
                pano(write_conf("long.pto", "p f1 w65536 h20 v210\ni w2040 h1080 f0 v50 y-80\n"
                                "i w2040 h1080 f0 v50 y-40\ni w2040 h1080 f0 v50 y0\ni w2040 h1080 f0 v50 y40\n"
                                "i w2040 h1080 f0 v50 y80\n"), NULL), 1, "panorama.rig",
                "the .pto's output size 65536x20: capped inside a libavcodec software encoder's 16384 pixels a side",
                "the panorama would be 16384x6, under the 16 pixels a side encoders take: its sides are 3277 to 1");
    check_error("a 1x1 crop", "crop1.conf",
                pano(write_conf("crop1.pto", "p f1 w8600 h1300 v210 S100,101,100,101\ni w2040 h1080 f0 v50 y-80\n"
                                "i w2040 h1080 f0 v50 y-40\ni w2040 h1080 f0 v50 y0\ni w2040 h1080 f0 v50 y40\n"
                                "i w2040 h1080 f0 v50 y80\n"), NULL), 1, "panorama.rig",
                "the .pto's output size 1x1 (its crop S100,101,100,101), 0x0 with even sides: under the 16 pixels",
                NULL);
    /* an explicit width the configured encoder cannot take */
    snprintf(text, sizeof text, "encode = { encoder = \"hevc_nvenc\"; };\npanorama = {\n  rig = \"%s\";\n"
             "  width = 10000;\n};\n", write_rig("wide.pto", 5, -1, NULL, NULL));
    check_error("panorama.width 10000 with hevc_nvenc", "wide.conf", text, 2, "panorama.width",
                "panorama.width 10000: 10000x1512, the field of view of the .pto's 8600x1300, capped to 8192x1238: "
                "NVENC HEVC takes at most 8192 pixels a side", "a width of at most 8192 keeps it inside");
    free(s);
}

static void test_vcam_errors(void)
{
    char rig[256];
    snprintf(rig, sizeof rig, "%s", write_rig("v.pto", 5, -1, NULL, NULL));
    char text[2048];
#define VIEWS(...) (snprintf(text, sizeof text, "panorama = { rig = \"%s\"; };\nvirtual_cameras = (\n" __VA_ARGS__ ");\n", \
                             rig), text)
    check_error("duplicate name", "dup.conf",
                VIEWS("  { name = \"main\"; outputs = ( \"a.ts\" ); },\n  { name = \"main\"; outputs = ( \"b.ts\" ); }\n"),
                4, "virtual_cameras[1].name", "duplicate name \"main\" (also virtual_cameras[0], line 3)", NULL);
    check_error("odd width", "odd.conf", VIEWS("  { name = \"a\";\n    width = 1921; outputs = ( \"a.ts\" ); }\n"), 4,
                "virtual_cameras[0].width", "1921 is odd", NULL);
    check_error("hfov 0", "hfov.conf", VIEWS("  { name = \"a\"; hfov = 0.0; outputs = ( \"a.ts\" ); }\n"), 3,
                "virtual_cameras[0].hfov", "0 is out of range; allowed: 1..179 degrees", NULL);
    check_error("unknown mode", "mode.conf", VIEWS("  { name = \"a\"; mode = \"auto\"; outputs = ( \"a.ts\" ); }\n"), 3,
                "virtual_cameras[0].mode", "unknown value \"auto\"; allowed: manual, follow", NULL);
    check_error("output of the main outputs", "coll.conf",
                VIEWS("  { name = \"a\";\n    outputs = ( \"./panocap.ts\" ); }\n"), 4, "virtual_cameras[0].outputs[0].url",
                "\"./panocap.ts\" is also outputs[0]'s", "two pictures cannot write one output");
    check_error("output of another view", "coll2.conf",
                VIEWS("  { name = \"a\"; outputs = ( \"udp://127.0.0.1:5000\" ); },\n"
                      "  { name = \"b\"; outputs = ( { url = \"udp://127.0.0.1:5000\"; } ); }\n"),
                4, "virtual_cameras[1].outputs[0].url", "is also virtual_cameras[0].outputs[0]'s", NULL);
    snprintf(text, sizeof text,
             "panorama = { rig = \"%s\";\n  unstitched_outputs = ( \"cams-%%b.ts\" ); };\n"
             "virtual_cameras = ( { name = \"a\";\n  outputs = ( \"file:cams-3.ts\" ); } );\n", rig);
    check_error("output of the unstitched picture (its %b)", "coll3.conf", text, 4, "virtual_cameras[0].outputs[0].url",
                "\"file:cams-3.ts\" is also panorama.unstitched_outputs[0]'s", NULL);
    check_error("no rig", "norig.conf", "virtual_cameras = (\n  { name = \"a\"; outputs = ( \"a.ts\" ); }\n);\n", 2,
                "virtual_cameras", "1 virtual camera needs a rig: set panorama.rig", "--rig FILE");
    char many[2048];
    size_t o = (size_t)snprintf(many, sizeof many, "panorama = { rig = \"%s\"; };\nvirtual_cameras = (", rig);
    for (int i = 0; i < 9; i++)
        o += (size_t)snprintf(many + o, sizeof many - o, "%s\n  { name = \"v%d\"; outputs = ( \"v%d.ts\" ); }", i ? "," : "",
                              i, i);
    snprintf(many + o, sizeof many - o, ");\n");
    check_error("9 views", "nine.conf", many, 2, "virtual_cameras", "9 virtual cameras; at most 8", NULL);
    check_error("no name", "noname.conf", VIEWS("  { width = 1280; height = 720; outputs = ( \"a.ts\" ); }\n"), 3,
                "virtual_cameras[0].name", "missing: every virtual camera needs a name", NULL);
    check_error("a name with a blank", "badname.conf", VIEWS("  { name = \"main view\"; outputs = ( \"a.ts\" ); }\n"), 3,
                "virtual_cameras[0].name", "\"main view\": a name is letters, digits", NULL);
    check_error("no outputs", "noout.conf", VIEWS("  { name = \"a\"; }\n"), 3, "virtual_cameras[0].outputs",
                "no outputs", NULL);
    check_error("outputs not a list", "outtype.conf", VIEWS("  { name = \"a\";\n    outputs = 5; }\n"), 4,
                "virtual_cameras[0].outputs", "expected a list outputs = ( \"file.ts\", { url = \"...\"; ... } ), got "
                "an integer (5)", NULL);
    check_error("an unknown key", "typo.conf", VIEWS("  { name = \"a\"; outputs = ( \"a.ts\" );\n    hfvo = 40.0; }\n"), 4,
                "virtual_cameras[0].hfvo", "did you mean \"hfov\"", "a virtual camera entry takes");
    snprintf(text, sizeof text, "encode = { codec = \"h264\"; encoder = \"h264_nvenc\"; layout = \"bands\"; };\n"
             "panorama = { rig = \"%s\"; };\nvirtual_cameras = (\n  { name = \"a\"; width = 4800; height = 2700; "
             "outputs = ( \"a.ts\" ); }\n);\n", rig);
    check_error("a picture over NVENC H.264", "h264.conf", text, 4, "virtual_cameras[0].width",
                "4800x2700 is over the limit of NVENC H.264 (4096 pixels a side)", NULL);
    /* inside 16384 a side but over the area libavcodec opens (avcodec_open2
     * answered "Picture size 16384x16384 is invalid" at the start) */
    check_error("a 16384x16384 view: over libavcodec's area", "area.conf",
                VIEWS("  { name = \"a\"; width = 16384; height = 16384;\n    outputs = ( \"a.ts\" ); }\n"), 3,
                "virtual_cameras[0].height", "16384x16384 is over the area libavcodec opens",
                "16384 wide, at most 16128 high");
    check_error("min_hfov over max_hfov", "minmax.conf",
                VIEWS("  { name = \"a\"; min_hfov = 90.0; max_hfov = 60.0; outputs = ( \"a.ts\" ); }\n"), 3,
                "virtual_cameras[0].min_hfov", "90 is wider than max_hfov 60", NULL);
    check_error("duplicate preset", "pdup.conf",
                VIEWS("  { name = \"a\"; outputs = ( \"a.ts\" );\n    presets = ( { name = \"g\"; pan = 1.0; tilt = 0.0; },\n"
                      "      { name = \"g\"; pan = 2.0; tilt = 0.0; } ); }\n"),
                5, "virtual_cameras[0].presets[1].name", "duplicate preset \"g\" (also presets[0], line 4)", NULL);
    check_error("preset name with a space", "pname.conf",
                VIEWS("  { name = \"a\"; outputs = ( \"a.ts\" );\n    presets = ( { name = \"left goal\"; pan = 1.0; "
                      "tilt = 0.0; } ); }\n"),
                4, "virtual_cameras[0].presets[0].name", "\"left goal\": a preset's name is letters, digits", NULL);
    check_error("preset without pan", "ppan.conf",
                VIEWS("  { name = \"a\"; outputs = ( \"a.ts\" );\n    presets = ( { name = \"g\"; tilt = 0.0; } ); }\n"), 4,
                "virtual_cameras[0].presets[0].pan", "missing: every preset needs a pan", NULL);
    check_error("a view taller than the cameras see", "tall.conf",
                VIEWS("  { name = \"a\"; width = 16; height = 4000; outputs = ( \"a.ts\" ); }\n"), 3, "virtual_cameras[0]",
                "no view of aspect 16x4000 fits in what the cameras see", "(panorama.rig)");

    /* a pose outside the coverage: moved inside, a warning naming the key */
    pc_settings *s = malloc(sizeof *s);
    pc_rig_setup *rs = malloc(sizeof *rs);
    pc_diag d;
    int e = load_checked("tilt.conf", VIEWS("  { name = \"a\"; outputs = ( \"a.ts\" );\n    tilt = -40.0; hfov = 30.0;\n"
                                            "    presets = ( { name = \"sky\"; pan = 0.0; tilt = 60.0; } ); }\n"),
                         s, &d, rs);
    const pc_diag_item *wt = find_item(&d, "tilt.conf:3: warning: virtual_cameras[0].tilt: tilt -40.0 ->",
                                       "the view starts at", NULL);
    const pc_diag_item *wp = find_item(&d, "tilt.conf:5: warning: virtual_cameras[0].presets[0].tilt: tilt 60.0 ->",
                                       "preset sky of a", NULL);
    TAP_CHECK(e == 0 && wt && wp && rs->start[0].tilt > -40.0 && rs->start[0].hfov == 30.0,
              "tilt -40 and a preset at tilt 60: accepted, moved to tilt %.1f, warnings naming "
              "virtual_cameras[0].tilt and virtual_cameras[0].presets[0].tilt", rs->start[0].tilt);
    if (!wt || !wp)
        dump(&d);
#undef VIEWS
    free(rs);
    free(s);
}

/* A rig given but no panorama: warnings for what has no effect. */
static void test_panorama_off(void)
{
    pc_settings *s = malloc(sizeof *s);
    pc_diag d;
    int e = load_checked("off.conf", "panorama = {\n  width = 4000;\n  unstitched_outputs = ( \"cams.ts\" );\n};\n", s,
                         &d, NULL);
    TAP_CHECK(e == 0 && find_item(&d, "off.conf:1: warning: panorama.unstitched_outputs: no panorama.rig",
                                  "these 1 output are not written", NULL) &&
                  find_item(&d, "warning: panorama.width: 4000: no panorama.rig", NULL, NULL) && !pc_settings_stitching(s),
              "unstitched_outputs and width without a rig: warnings, no panorama");
    const char *rig = write_rig("off.pto", 5, -1, NULL, NULL);
    char text[512];
    snprintf(text, sizeof text, "panorama = { rig = \"%s\"; enabled = false; };\n"
                                "virtual_cameras = ( { name = \"a\"; outputs = ( \"a.ts\" ); } );\n", rig);
    pc_rig_setup *rs = malloc(sizeof *rs);
    e = load_checked("views-only.conf", text, s, &d, rs);
    TAP_CHECK(e == 0 && !pc_settings_stitching(s) && rs->have_rig,
              "enabled = false: no panorama, the rig still serves the views");
    free(rs);
    free(s);
}

static int load_quiet(const char *name, const char *text, pc_settings *s)
{
    pc_diag d;
    return load_checked(name, text, s, &d, NULL);
}

static void test_reload(void)
{
    char r1[256];
    snprintf(r1, sizeof r1, "%s", write_rig("r1.pto", 5, -1, NULL, NULL));
    char r2[256];
    snprintf(r2, sizeof r2, "%s", write_rig("r2.pto", 5, -1, NULL, "# another calibration\n"));
    pc_settings *a = malloc(sizeof *a), *b = malloc(sizeof *b), *cur = malloc(sizeof *cur);
    pc_settings_delta *dl = malloc(sizeof *dl);
    char text[2048], desc[4096];
    const char *views = "virtual_cameras = (\n  { name = \"main\"; pan = 0.0; outputs = ( \"m.ts\" );\n"
                        "    presets = ( { name = \"g\"; pan = 10.0; tilt = 0.0; } ); },\n"
                        "  { name = \"wide\"; width = 1280; height = 720; outputs = ( \"w.ts\" ); }\n);\n";
#define CONF(rig, pano_more, vcams) \
    (snprintf(text, sizeof text, "panorama = { rig = \"%s\"; %s };\n%s", rig, pano_more, vcams), text)
    int ea = load_quiet("ra.conf", CONF(r1, "blend = \"feather\";", views), a);
    pc_settings_stamp_rig(a);
    int eb = load_quiet("rb.conf", CONF(r2, "blend = \"seam\"; gain_compensation = false; sampler = \"bicubic\";",
                                        "virtual_cameras = (\n  { name = \"main\"; pan = 5.0; tilt = -1.0; mode = \"follow\";"
                                        " outputs = ( \"m.ts\" );\n    presets = ( { name = \"g\"; pan = 12.0; tilt = 0.0; } );"
                                        " },\n  { name = \"wide\"; width = 1280; height = 720; outputs = ( \"w.ts\" ); }\n);\n"),
                     b);
    pc_settings_stamp_rig(b);
    int n = pc_settings_diff(a, b, dl);
    pc_settings_diff_describe(dl, desc, sizeof desc);
    TAP_CHECK(ea == 0 && eb == 0 && n == 8 && dl->restart == 0 && dl->live == (PC_LIVE_RIG | PC_LIVE_BLEND | PC_LIVE_VCAM) &&
                  strstr(desc, "panorama.rig ") && strstr(desc, "r2.pto (live)") && strstr(desc, "panorama.blend feather -> seam (live)") &&
                  strstr(desc, "panorama.sampler auto -> bicubic (live)") &&
                  strstr(desc, "virtual_cameras[0].pan 0 -> 5 (live)") && strstr(desc, "virtual_cameras[0].mode manual -> follow (live)") &&
                  strstr(desc, "virtual_cameras[0].presets g -> g (live)"),
              "another rig, blend, gains, sampler, a view's pan, tilt, mode and presets: all live (%d: %s)", n, desc);
    *cur = *a;
    pc_settings_apply_live(cur, b);
    n = pc_settings_diff(cur, b, dl);
    TAP_CHECK(n == 0 && strcmp(cur->panorama.rig, r2) == 0 && cur->panorama.rig_digest == b->panorama.rig_digest &&
                  cur->vcams[0].presets.item[0].pan == 12.0,
              "apply_live takes them all, the new rig's digest with it");

    /* the same .pto rewritten (recalibrated): live, by its digest */
    load_quiet("rc.conf", CONF(r1, "", views), a);
    pc_settings_stamp_rig(a);
    write_rig("r1.pto", 5, -1, NULL, "# recalibrated\n");
    load_quiet("rc.conf", CONF(r1, "", views), b);
    pc_settings_stamp_rig(b);
    n = pc_settings_diff(a, b, dl);
    pc_settings_diff_describe(dl, desc, sizeof desc);
    TAP_CHECK(n == 1 && dl->live == PC_LIVE_RIG && strstr(desc, "r1.pto (file rewritten) (live)") &&
                  a->panorama.rig_digest && a->panorama.rig_digest != b->panorama.rig_digest,
              "the same .pto rewritten: a live change (%s)", desc);
    pc_settings_stamp_rig(a); /* unchanged file: the same digest */
    TAP_CHECK(a->panorama.rig_digest == b->panorama.rig_digest, "an unchanged .pto: the same digest");

    /* restart: width, enabled, adding the rig, the views' list and sizes */
    load_quiet("rd.conf", CONF(r1, "", views), a);
    load_quiet("re.conf", CONF(r1, "width = 4000; enabled = false;",
                               "virtual_cameras = (\n  { name = \"main\"; width = 1280; height = 720; outputs = ( \"m.ts\" );"
                               " bitrate = 4000000; },\n  { name = \"wide\"; width = 1280; height = 720; outputs = ( \"w2.ts\" ); }\n);\n"),
               b);
    n = pc_settings_diff(a, b, dl);
    pc_settings_diff_describe(dl, desc, sizeof desc);
    TAP_CHECK(dl->restart == 6 && dl->live == PC_LIVE_VCAM && strstr(desc, "panorama.width 0 -> 4000 (needs restart)") &&
                  strstr(desc, "panorama.enabled true -> false (needs restart)") &&
                  strstr(desc, "virtual_cameras[0].width 1920 -> 1280 (needs restart)") &&
                  strstr(desc, "virtual_cameras[0].bitrate 8000000 -> 4000000 (needs restart)") &&
                  strstr(desc, "virtual_cameras[1].outputs w.ts -> w2.ts (needs restart)") &&
                  strstr(desc, "virtual_cameras[0].presets g -> \"\" (live)"),
              "width, enabled, a view's size, bitrate and outputs need a restart; its presets do not (%s)", desc);
    load_quiet("rf.conf", CONF("", "", ""), a);
    load_quiet("rg.conf", CONF(r1, "", views), b);
    n = pc_settings_diff(a, b, dl);
    pc_settings_diff_describe(dl, desc, sizeof desc);
    TAP_CHECK(dl->live == 0 && dl->restart == 2 && strstr(desc, "panorama.rig \"\" -> ") &&
                  strstr(desc, "virtual_cameras none -> main wide (needs restart)"),
              "adding the rig and views: a restart (%s)", desc);
    *cur = *a;
    pc_settings_apply_live(cur, b);
    TAP_CHECK(!cur->panorama.rig[0] && cur->vcam_count == 0, "apply_live leaves the rig and the views for the restart");
    load_quiet("rh.conf", CONF(r1, "", "virtual_cameras = ( { name = \"wide\"; outputs = ( \"w.ts\" ); },\n"
                                       "  { name = \"main\"; outputs = ( \"m.ts\" ); } );\n"), a);
    n = pc_settings_diff(a, b, dl);
    pc_settings_diff_describe(dl, desc, sizeof desc);
    TAP_CHECK(n == 1 && dl->restart == 1 && strstr(desc, "virtual_cameras wide main -> main wide (needs restart)"),
              "the views reordered: one restart item (%s)", desc);
#undef CONF
    free(a);
    free(b);
    free(cur);
    free(dl);
}

/* The dump loads back the same, nested lists and all; --set reaches the
 * views. */
static void test_round_trip(void)
{
    char rig[256];
    snprintf(rig, sizeof rig, "%s", write_rig("rt.pto", 5, -1, NULL, NULL));
    char text[2048];
    snprintf(text, sizeof text,
             "panorama = { rig = \"%s\"; blend = \"seam\"; width = 4300;\n"
             "  unstitched_outputs = ( { url = \"cams.ts\"; segment = 600; max_bytes = \"5G\"; } ); };\n"
             "virtual_cameras = ( { name = \"main\"; tilt = -3.0; hfov = 35.5; mode = \"follow\";\n"
             "  outputs = ( \"m.ts\", { url = \"srt://0.0.0.0:9001\"; options = \"mode=listener\"; } );\n"
             "  presets = ( { name = \"a\"; pan = -30.0; tilt = -2.0; hfov = 30.0; }, { name = \"b\"; pan = 30.0; tilt = -2.0; } );\n"
             "  follow_tilt_offset = 2.5; response = 0.3; } );\n",
             rig);
    pc_settings *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    pc_settings_delta *dl = malloc(sizeof *dl);
    pc_diag d;
    int e = load_checked("rt.conf", text, a, &d, NULL);
    char path[256], desc[2048];
    snprintf(path, sizeof path, "%s/rt-dump.conf", config_tmpdir);
    FILE *f = fopen(path, "w");
    pc_settings_write(a, f);
    fclose(f);
    pc_settings_defaults(b);
    pc_diag_init(&d);
    int rc = pc_settings_load(b, path, &d);
    int n = pc_settings_diff(a, b, dl);
    pc_settings_diff_describe(dl, desc, sizeof desc);
    TAP_CHECK(e == 0 && rc == 0 && n == 0 && b->vcams[0].presets.count == 2 && b->vcams[0].outputs.count == 2 &&
                  b->panorama.unstitched.item[0].max_bytes == 5000000000LL && b->vcams[0].hfov == 35.5 &&
                  strcmp(b->vcams[0].outputs.item[1].options, "mode=listener") == 0,
              "--dump-config with a panorama and a view (outputs, presets) loads back the same (%s)", n ? desc : "");
    if (rc)
        dump(&d);

    char err[512] = "";
    pc_settings_defaults(a);
    rc = pc_settings_set(a, "panorama.rig", rig, err, sizeof err) ||
         pc_settings_set(a, "virtual_cameras[0].name", "main", err, sizeof err) ||
         pc_settings_set(a, "virtual_cameras[0].outputs", "m.ts udp://127.0.0.1:5010", err, sizeof err) ||
         pc_settings_set(a, "virtual_cameras[1].name", "second", err, sizeof err) ||
         pc_settings_set(a, "virtual_cameras[1].outputs", "s.ts", err, sizeof err) ||
         pc_settings_set(a, "virtual_cameras[1].pan", "-20", err, sizeof err) ||
         pc_settings_set(a, "panorama.unstitched_outputs", "cams.ts", err, sizeof err);
    pc_diag_init(&d);
    int v = rc ? -1 : pc_settings_validate(a, &d);
    TAP_CHECK(rc == 0 && v == 0 && a->vcam_count == 2 && a->vcams[0].outputs.count == 2 &&
                  strcmp(a->vcams[0].outputs.item[1].url, "udp://127.0.0.1:5010") == 0 && a->vcams[1].pan == -20.0 &&
                  a->vcams[1].width == 1920 && a->panorama.unstitched.count == 1,
              "--set panorama.rig, virtual_cameras[N].name/outputs/pan, panorama.unstitched_outputs (%s)", rc ? err : "ok");
    if (v)
        dump(&d);
    rc = pc_settings_set(a, "virtual_cameras[0].presets", "a:1,2", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "virtual_cameras[0].presets: a list of preset groups is written in the "
                                    "configuration file"),
              "--set of presets: refused, pointing to the file (%s)", err);
    rc = pc_settings_set(a, "virtual_cameras[8].name", "x", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "index 8 out of range 0..7"), "--set virtual_cameras[8]: out of range (%s)", err);
    rc = pc_settings_set(a, "virtual_cameras[0].width", "1279", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "1279 is odd"), "--set an odd view width: refused (%s)", err);
    rc = pc_settings_set(a, "virtual_cameras[0].zoom", "3", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "a virtual camera entry takes: name, width"), "--set an unknown view key (%s)", err);
    free(a);
    free(b);
    free(dl);
}

/* The example's commented panorama and virtual_cameras sections, as a
 * user uncomments them (the rig pointed at a test one): they load, validate
 * and check against the rig. */
static void test_example(const char *example)
{
    FILE *f = fopen(example, "r");
    char *text = calloc(1, 1 << 17), line[512];
    size_t o = 0;
    int in = 0, blocks = 0;
    char rig[256];
    snprintf(rig, sizeof rig, "%s", write_rig("example.pto", 5, -1, NULL, NULL));
    while (f && text && fgets(line, sizeof line, f) && o + 1024 < (1 << 17)) {
        const char *l = line;
        if (!strcmp(line, "# panorama = {\n") || !strcmp(line, "# virtual_cameras = (\n")) {
            in = 1;
            blocks++;
        }
        if (in)
            l = !strncmp(line, "# ", 2) ? line + 2 : !strcmp(line, "#\n") ? "\n" : line;
        if (in && (!strcmp(l, "};\n") || !strcmp(l, ");\n")))
            in = 0;
        const char *at = strstr(l, "/etc/panocap/rig.pto");
        if (at)
            o += (size_t)snprintf(text + o, (1 << 17) - o, "%.*s%s%s", (int)(at - l), l, rig, at + 20);
        else
            o += (size_t)snprintf(text + o, (1 << 17) - o, "%s", l);
    }
    if (f)
        fclose(f);
    pc_settings *s = malloc(sizeof *s);
    pc_rig_setup *rs = malloc(sizeof *rs);
    pc_diag d;
    int e = text ? load_checked("example-uncommented.conf", text, s, &d, rs) : -1;
    TAP_CHECK(blocks == 2 && e == 0 && rs->have_rig && pc_settings_stitching(s) && s->panorama.unstitched.count == 1 &&
                  s->vcam_count == 2 && s->vcams[0].presets.count == 3 && s->vcams[0].outputs.count == 2 &&
                  s->vcams[1].mode == PC_VCAM_FOLLOW,
              "%s: its commented panorama and virtual_cameras sections, uncommented, load and check (%d blocks, "
              "%d errors)", example, blocks, e);
    if (e)
        dump(&d);
    free(rs);
    free(s);
    free(text);
}

int main(int argc, char **argv)
{
    if (!PANOCAP_HAVE_LIBCONFIG)
        return tap_skip_all("these tests read configuration files: this build has no libconfig");
    if (config_tmpdir_make("pc-config-rig"))
        return 1;
    test_accepts();
    test_rig_errors();
    test_vcam_errors();
    test_panorama_off();
    test_reload();
    test_round_trip();
    test_example(argc > 1 ? argv[1] : "systemd/panocap.conf.example");
    config_tmpdir_remove();
    return tap_done();
}
