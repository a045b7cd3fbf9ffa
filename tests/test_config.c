/* test_config.c - the settings loader and validator against real libconfig
 * files: the installed example parses and validates; every error class
 * (syntax, unknown key, wrong type, out of range, bad name, duplicate
 * camera, odd size, missing file...) is reported with file, line, key and
 * what is allowed, and all errors of a file are collected; command-line
 * style overrides, reload diffs and the dump/load round trip.
 * argv[1]: path of systemd/panocap.conf.example. */
#include "settings.h"
#include "debayer.h"
#include "panocap_config.h"
#include "config_testutil.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Loads text as file `name`, then validates; returns total errors. */
static int load_text(const char *name, const char *text, pc_settings *s, pc_diag *d)
{
    pc_settings_defaults(s);
    pc_diag_init(d);
    const char *p = write_conf(name, text);
    if (pc_settings_load(s, p, d) == 0)
        pc_settings_validate(s, d);
    return d->errors;
}

static void check_error(const char *what, const char *name, const char *text, int line, const char *key,
                        const char *needle1, const char *needle2)
{
    pc_settings s;
    pc_diag d;
    load_text(name, text, &s, &d);
    char where[160];
    snprintf(where, sizeof where, "%s:%d:", name, line);
    const pc_diag_item *it = find_item(&d, where, needle1, needle2);
    int ok = it && (!key || strcmp(it->key, key) == 0) && it->severity == PC_DIAG_ERROR;
    TAP_CHECK(ok, "%s: error names file:line %s, key %s and \"%s\"", what, where, key ? key : "-",
              needle1 ? needle1 : "");
    if (!ok)
        dump(&d);
}

/* Colour keys (docs/colour.md): each bad value names file, line and key. */
static void test_colour_errors(void)
{
    check_error("unknown pixel format", "cfmt.conf",
                "cameras = (\n  { serial = \"A\"; },\n  { serial = \"B\"; pixel_format = \"BayerRG14\"; }\n);\n", 3,
                "cameras[1].pixel_format", "unknown pixel format \"BayerRG14\"", "12Packed");
    check_error("12-bit fake camera", "cfake.conf",
                "capture = { source = \"fake\"; };\ncameras = (\n  { serial = \"A\"; pixel_format = \"BayerRG12\"; }\n);\n", 3,
                "cameras[0].pixel_format", "fake cameras send 8-bit Bayer only", NULL);
    check_error("black level above white", "cblack.conf",
                "cameras = (\n  { serial = \"A\";\n    pixel_format = \"BayerRG12p\"; black_level = 5000.0; }\n);\n", 2,
                "cameras[0].black_level", "below the white level", NULL);
    check_error("matrix with NaN", "cnan.conf",
                "cameras = (\n  { serial = \"A\"; ccm = \"1,0,0, 0,nan,0, 0,0,1\"; }\n);\n", 2, "cameras[0].ccm",
                "row 2, column 2", NULL);
    check_error("absurd matrix", "cbig.conf",
                "cameras = (\n  { serial = \"A\"; ccm = \"1,0,0, 0,1,0, 0,0,1e9\"; }\n);\n", 2, "cameras[0].ccm",
                "within +-8", NULL);
    check_error("matrix of 8 numbers", "c8.conf", "cameras = (\n  { serial = \"A\"; ccm = \"1,0,0,0,1,0,0,0\"; }\n);\n",
                2, "cameras[0].ccm", "8 numbers, 9 needed", NULL);
    check_error("bad gains", "cwb.conf", "capture = {\n  wb_gains = \"1.5, green\";\n};\ncameras = ( { serial = \"A\"; } );\n",
                4, "cameras[0].wb_gains", "not a number", NULL);
    char lut[300];
    snprintf(lut, sizeof lut, "%s/short.lut", config_tmpdir);
    FILE *f = fopen(lut, "w");
    for (int i = 0; i < 256; i++)
        fprintf(f, "%d\n", i);
    fclose(f);
    char text[600];
    snprintf(text, sizeof text,
             "cameras = (\n  { serial = \"A\"; pixel_format = \"BayerRG10p\"; transfer = \"%s\"; }\n);\n", lut);
    check_error("LUT file of the wrong length", "clut.conf", text, 2, "cameras[0].transfer", "short.lut:256:",
                "exactly 1024");
    pc_settings s;
    pc_diag d;
    int e = load_text("cok.conf",
                      "capture = { source = \"gige\"; };\ncameras = (\n  { address = \"10.0.0.1\"; pixel_format = "
                      "\"BayerRG12p\";\n    black_level = 64.0; wb_gains = \"auto\"; ccm = \"1.5,-0.3,-0.2, -0.2,1.4,-0.2, "
                      "-0.1,-0.4,1.5\"; transfer = \"2.2\"; }\n);\n",
                      &s, &d);
    const pc_diag_item *w = find_item(&d, "cok.conf:3:", "165 MB/s", "gigabit");
    TAP_CHECK(e == 0 && w && w->severity == PC_DIAG_WARNING && strcmp(w->key, "cameras[0].pixel_format") == 0,
              "12-bit 2040x1080 at 50 fps over GigE: accepted, with a link warning naming file:line:key");
    if (e || !w)
        dump(&d);
}

static void test_defaults(void)
{
    pc_settings s;
    pc_diag d;
    pc_settings_defaults(&s);
    pc_diag_init(&d);
    int rc = pc_settings_validate(&s, &d);
    TAP_CHECK(rc == 0 && d.errors == 0, "embedded defaults validate (%d errors)", d.errors);
    TAP_CHECK(s.capture.source == PC_SOURCE_FAKE && s.capture.cameras == 5 && s.capture.fps == 50.0,
              "defaults: 5 fake cameras at 50 fps");
    TAP_CHECK(s.cameras[4].width == 2040 && s.cameras[4].height == 1080 && s.cameras[4].slab == 4 &&
                  s.cameras[4].pattern == PC_CFA_RGGB,
              "defaults: cameras 2040x1080 RGGB, slab = position");
    TAP_CHECK(pc_settings_panorama_width(&s) == 2040 && pc_settings_panorama_height(&s) == 5400,
              "defaults: panorama 2040x5400");
    TAP_CHECK(s.debayer.algo == PC_ALGO_EDGE && s.encode.codec == PC_CODEC_HEVC &&
                  strcmp(s.encode.encoder, "auto") == 0 && s.encode.fallback.count == 3 &&
                  strcmp(s.encode.fallback.item[0], "libx264") == 0,
              "defaults: algo edge, hevc, auto encoder, fallback libx264,...");
    TAP_CHECK(s.output_count == 1 && strcmp(s.outputs[0].url, "panocap.ts") == 0, "defaults: output panocap.ts");
    TAP_CHECK(pc_settings_budget_ms(&s) == 20.0, "default budget = one frame period = 20 ms");
}

static void test_example(const char *example)
{
    pc_settings s;
    pc_diag d;
    pc_settings_defaults(&s);
    pc_diag_init(&d);
    int rc = pc_settings_load(&s, example, &d);
    TAP_CHECK(rc == 0 && d.errors == 0, "example config %s loads (%d errors)", example, d.errors);
    dump(&d);
    rc = pc_settings_validate(&s, &d);
    TAP_CHECK(rc == 0 && d.errors == 0 && d.warnings == 0, "example config validates (%d errors, %d warnings)",
              d.errors, d.warnings);
    dump(&d);
    TAP_CHECK(s.capture.source == PC_SOURCE_GIGE && s.capture.cameras == 5 && s.cameras_listed == 5,
              "example: gige, 5 listed cameras");
    TAP_CHECK(s.cameras[2].exposure_us == 4000.0 && s.cameras[0].exposure_us == 0.0 &&
                  s.cameras[2].gain_db == 3.0 && s.cameras[1].gain_db < 0,
              "example: per-camera exposure/gain override, others keep the default");
    int all = 1;
    for (int i = 0; i < 5; i++)
        all &= s.cameras[i].packet_size == 8192 && s.cameras[i].width == 2040 && s.cameras[i].slab == i;
    TAP_CHECK(all, "example: capture defaults (packet_size 8192) reach every camera");
    TAP_CHECK(s.cameras[4].socket_buffer == 16777216 && s.cameras[4].packet_delay_ns == 2000 &&
                  strcmp(s.cameras[4].address, "192.168.15.10") == 0 && strcmp(s.cameras[4].name, "right") == 0,
              "example: camera 4 own settings");
    TAP_CHECK(s.output_count == 4 && s.outputs[0].segment_s == 3600 &&
                  strcmp(s.outputs[1].options, "pkt_size=1316,ttl=4") == 0 && strcmp(s.outputs[3].format, "hls") == 0,
              "example: 4 outputs with options");
    TAP_CHECK(s.encode.bitrate == 20000000 && s.encode.gop == 50 && s.encode.fallback.count == 3,
              "example: encode section");
    TAP_CHECK(s.cameras[0].line > 0 && s.cameras[1].line > s.cameras[0].line, "example: camera lines recorded (%d, %d)",
              s.cameras[0].line, s.cameras[1].line);
}

static void test_errors(void)
{
    check_error("syntax error", "syntax.conf",
                "capture = {\n  fps = 50.0;\n  width = ;\n};\n", 3, "", "syntax error", NULL);
    check_error("unknown key with suggestion", "typo.conf",
                "# comment\ndebayer = {\n  algorythm = \"edge\";\n};\n", 3, "debayer.algorythm",
                "did you mean \"algo\"", "algo, variant, matrix");
    check_error("unknown key in a camera entry", "camkey.conf",
                "capture = { source = \"fake\"; };\ncameras = (\n  { serial = \"A\"; },\n  { serial = \"B\"; exposre = 100.0; }\n);\n",
                4, "cameras[1].exposre", "did you mean \"exposure\"", NULL);
    check_error("unknown section", "section.conf", "\n\ndebayr = { algo = \"edge\"; };\n", 3, "debayr",
                "unknown section", "did you mean \"debayer\"");
    check_error("key outside its section", "toplevel.conf", "algo = \"edge\";\n", 1, "algo",
                "debayer = { algo", NULL);
    check_error("per-camera key in capture", "capaddr.conf", "capture = {\n  address = \"1.2.3.4\";\n};\n", 2,
                "capture.address", "cameras list", NULL);
    check_error("wrong type (string for a number)", "type.conf", "capture = {\n  fps = \"fifty\";\n};\n", 2,
                "capture.fps", "expected a number, got a string (\"fifty\")", NULL);
    check_error("wrong type (float for an integer)", "type2.conf", "capture = {\n\n  width = 2040.5;\n};\n", 3,
                "capture.width", "expected an integer, got a float", NULL);
    check_error("wrong type (bool)", "type3.conf", "daemon = { watchdog = \"yes\"; };\n", 1, "daemon.watchdog",
                "expected a boolean", NULL);
    check_error("wrong type (group for a section)", "type4.conf", "encode = 5;\n", 1, "encode",
                "expected a group", NULL);
    check_error("out of range", "range.conf", "capture = {\n  fps = 0.0;\n};\n", 2, "capture.fps",
                "out of range; allowed: 1..1000 fps", NULL);
    check_error("out of range (camera count)", "range2.conf", "capture = { cameras = 17; };\n", 1,
                "capture.cameras", "allowed: 1..16", NULL);
    check_error("out of range with auto", "range3.conf", "capture = { packet_size = 100; };\n", 1,
                "capture.packet_size", "576..16384 bytes, or 0", NULL);
    char all[512];
    pc_algo_names(all, sizeof all);
    check_error("unknown algorithm lists all algorithms", "algo.conf", "debayer = {\n  algo = \"edgy\";\n};\n", 2,
                "debayer.algo", "unknown value \"edgy\"", all);
    check_error("unknown pattern", "pattern.conf", "capture = { pattern = \"RGBG\"; };\n", 1, "capture.pattern",
                "allowed: RGGB, GRBG, GBRG, BGGR", NULL);
    check_error("unknown variant", "variant.conf", "debayer = { variant = \"8px\"; };\n", 1, "debayer.variant",
                "allowed: auto, 2px, 4px", NULL);
    check_error("unknown matrix", "matrix.conf", "debayer = { matrix = \"bt2020\"; };\n", 1, "debayer.matrix",
                "allowed: bt709, bt601", NULL);
    check_error("unknown range", "yrange.conf", "debayer = { range = \"studio\"; };\n", 1, "debayer.range",
                "allowed: limited, full", NULL);
    check_error("unknown log level", "level.conf", "daemon = { log_level = \"loud\"; };\n", 1, "daemon.log_level",
                "allowed: err, warning, notice, info, debug", NULL);
    check_error("odd size", "odd.conf",
                "capture = { source = \"gige\"; };\ncameras = (\n  { address = \"10.0.0.1\"; },\n  { address = \"10.0.0.2\";\n    width = 2041; }\n);\n",
                5, "cameras[1].width", "2041 is odd", NULL);
    check_error("duplicate camera address", "dup.conf",
                "capture = { source = \"gige\"; };\ncameras = (\n  { address = \"10.0.0.1\"; },\n  { address = \"10.0.0.2\"; },\n  { address = \"10.0.0.1\"; }\n);\n",
                5, "cameras[2] (10.0.0.1)", "duplicate camera: address \"10.0.0.1\" is also used by cameras[0]", "line 3");
    check_error("duplicate camera serial", "dups.conf",
                "capture = { source = \"gige\"; };\ncameras = (\n  { serial = \"S1\"; },\n  { serial = \"S1\"; }\n);\n",
                4, NULL, "duplicate camera: serial \"S1\"", NULL);
    check_error("duplicate slab", "slab.conf",
                "capture = { source = \"gige\"; };\ncameras = (\n  { serial = \"S1\"; slab = 1; },\n  { serial = \"S2\"; slab = 1; }\n);\n",
                4, "cameras[1].slab", "slab 1 is also given to cameras[0]", NULL);
    check_error("gige camera without identity", "noid.conf",
                "capture = { source = \"gige\"; };\ncameras = (\n  { serial = \"S1\"; },\n  { name = \"x\"; }\n);\n",
                4, "cameras[1] (x)", "no address or serial", NULL);
    check_error("gige without cameras list", "nolist.conf", "capture = {\n  source = \"gige\";\n};\n", 1, "cameras",
                "needs the cameras list", NULL);
    check_error("mixed patterns", "mixpat.conf",
                "cameras = (\n  { serial = \"a\"; },\n  { serial = \"b\"; pattern = \"GRBG\"; }\n);\n", 3,
                "cameras[1].pattern", "same pattern", NULL);
    /* layout stacked: with the default layout auto, bands are chosen
     * instead (tests/test_layout.c) */
    check_error("h264 on NVENC too tall", "h264.conf",
                "encode = {\n  codec = \"h264\";\n  encoder = \"h264_nvenc\";\n  layout = \"stacked\";\n};\n", 1,
                "encode.codec", "limited to 4096", "2040x5400");
    check_error("output without url", "nourl.conf", "outputs = (\n  { options = \"a=b\"; }\n);\n", 2, "outputs[0].url",
                "every output needs a url", NULL);
    check_error("unknown output key", "outkey.conf", "outputs = ( { url = \"a.ts\"; segmnet = 60; } );\n", 1,
                "outputs[0].segmnet", "did you mean \"segment\"", NULL);
    check_error("unknown URL scheme", "scheme.conf", "outputs = (\n  \"rtsp://x:554/a\" );\n", 2, "outputs[0].url",
                "unknown URL scheme \"rtsp\"", NULL);
    check_error("RTMP with HEVC", "rtmphevc.conf",
                "outputs = (\n  \"rtmp://127.0.0.1/live/s3cr3t-StreamKey-42\" );\n", 2, "outputs[0].url",
                "RTMP carries H.264 only", "rtmp://127.0.0.1/live/****");
    {
        pc_settings s;
        pc_diag d;
        load_text("rtmph264.conf", "encode = { codec = \"h264\"; };\noutputs = ( \"rtmps://a.example/live2/s3cr3t-StreamKey-42\",\n"
                  "  \"rtmp://a.example/live2/s3cr3t-StreamKey-42\" );\n", &s, &d);
        int ok = d.errors == 0;
        for (int i = 0; i < d.count; i++)
            ok &= !strstr(d.item[i].msg, "s3cr3t");
        TAP_CHECK(ok, "rtmp:// and rtmps:// outputs with codec h264: valid, no message shows the key");
        if (!ok)
            dump(&d);
    }
    check_error("duplicate output", "dupout.conf", "outputs = ( \"a.ts\",\n \"a.ts\" );\n", 2, "outputs[1].url",
                "duplicate output", NULL);
    check_error("bad bitrate text", "bitrate.conf", "encode = { bitrate = \"fast\"; };\n", 1, "encode.bitrate",
                "not a number (suffixes: k, M, G, T = x1000; Ki, Mi, Gi, Ti = x1024)", NULL);
    check_error("bitrate out of range", "bitrate2.conf", "encode = { bitrate = 0; };\n", 1, "encode.bitrate",
                "0 is out of range", NULL);
    check_error("fallback entry not a string", "fallback.conf", "encode = { fallback = [ 1, 2 ]; };\n", 1,
                "encode.fallback", "expected a string", NULL);

    /* Missing file, and a directory. */
    pc_settings s;
    pc_diag d;
    pc_settings_defaults(&s);
    pc_diag_init(&d);
    int rc = pc_settings_load(&s, "/nonexistent/panocap.conf", &d);
    TAP_CHECK(rc < 0 && find_item(&d, "/nonexistent/panocap.conf: ", "No such file or directory", NULL),
              "missing file: error names the file and the reason");
    pc_diag_init(&d);
    rc = pc_settings_load(&s, config_tmpdir, &d);
    TAP_CHECK(rc < 0 && find_item(&d, "is a directory", NULL, NULL), "a directory is refused");

    /* Every error of a file is collected, each with its own line. */
    load_text("many.conf",
              "capture = {\n  fps = 0.0;\n  widht = 2040;\n};\n"
              "debayer = {\n  algo = \"nope\";\n  cpu_threads = \"4\";\n};\n"
              "daemon = { bogus = 1; };\n",
              &s, &d);
    int lines_ok = find_item(&d, "many.conf:2:", "capture.fps", NULL) &&
                   find_item(&d, "many.conf:3:", "capture.widht", "did you mean \"width\"") &&
                   find_item(&d, "many.conf:6:", "debayer.algo", NULL) &&
                   find_item(&d, "many.conf:7:", "debayer.cpu_threads", "expected an integer") &&
                   find_item(&d, "many.conf:9:", "daemon.bogus", NULL);
    TAP_CHECK(d.errors == 5 && lines_ok, "5 errors in one file: all 5 reported with their lines (%d)", d.errors);
    if (!lines_ok)
        dump(&d);
}

static void test_accepts(void)
{
    pc_settings s;
    pc_diag d;
    int e = load_text("ok1.conf",
                      "encode = { bitrate = \"12.5M\"; codec = \"h264\"; encoder = \"libx264\"; };\n"
                      "capture = { fps = 25; cameras = 3; width = 1024; height = 768; };\n"
                      "outputs = ( \"a.ts\", { url = \"udp://127.0.0.1:5000\"; options = \"pkt_size=1316\"; } );\n"
                      "daemon = { frames = 60; budget_ms = 30; };\n",
                      &s, &d);
    TAP_CHECK(e == 0, "integer for a float key, string with suffix for bitrate, h264 with libx264 (%d errors)", e);
    dump(&d);
    TAP_CHECK(s.encode.bitrate == 12500000 && s.capture.fps == 25.0 && s.daemon.frames == 60 &&
                  pc_settings_panorama_height(&s) == 3 * 768 && s.output_count == 2,
              "values stored: bitrate 12.5M, fps 25, 3x768 rows, 2 outputs");
    TAP_CHECK(d.warnings == 0, "budget 30 ms at 25 fps: no warning");

    /* h264 on auto: NVENC H.264 (4096) takes 5 cameras as bands, not one
     * 4800-wide camera */
    e = load_text("warn.conf", "daemon = { budget_ms = 50.0; };\nencode = { codec = \"h264\"; };\n"
                  "capture = { width = 4800; };\n", &s, &d);
    TAP_CHECK(e == 0 && d.warnings == 2 && find_item(&d, "warning: daemon.budget_ms", "longer than the frame period", NULL) &&
                  find_item(&d, "warning: encode.codec", "fallback", NULL),
              "budget over the frame period and h264 on auto: warnings, not errors");

    /* The camera count follows the list unless given. */
    e = load_text("count.conf", "cameras = ( { serial = \"a\"; }, { serial = \"b\"; } );\n", &s, &d);
    TAP_CHECK(e == 0 && s.capture.cameras == 2 && s.cameras_listed == 2, "camera count = list length (2)");
    e = load_text("count2.conf", "capture = { cameras = 4; };\ncameras = ( { serial = \"a\"; image = \"x.png\"; } );\n",
                  &s, &d);
    TAP_CHECK(e == 0 && s.capture.cameras == 4 && strcmp(s.cameras[0].image, "x.png") == 0 &&
                  s.cameras[3].slab == 3,
              "fake source: count 4 with one listed camera, others from defaults");

    /* Includes are resolved relative to the including file. */
    write_conf("inc-part.conf", "debayer = { algo = \"bilinear\"; };\n");
    e = load_text("inc.conf", "@include \"inc-part.conf\"\ndaemon = { log_level = \"debug\"; };\n", &s, &d);
    TAP_CHECK(e == 0 && s.debayer.algo == PC_ALGO_BILINEAR && s.daemon.log_level == 7, "@include works");
    e = load_text("inc2.conf", "@include \"inc-bad.conf\"\n", &s, &d);
    write_conf("inc-bad.conf", "debayer = {\n algo = \"zzz\";\n};\n");
    e = load_text("inc2.conf", "@include \"inc-bad.conf\"\n", &s, &d);
    TAP_CHECK(e == 1 && find_item(&d, "inc-bad.conf:2:", "debayer.algo", NULL), "error inside an included file names that file");
}

static void test_set(void)
{
    pc_settings s;
    char err[512] = "";
    pc_settings_defaults(&s);
    TAP_CHECK(pc_settings_set(&s, "debayer.algo", "hq-linear", err, sizeof err) == 0 &&
                  s.debayer.algo == PC_ALGO_HQ_LINEAR,
              "set debayer.algo");
    TAP_CHECK(pc_settings_set(&s, "cameras[1].width", "1024", err, sizeof err) == 0 &&
                  pc_settings_set(&s, "capture.width", "2048", err, sizeof err) == 0 &&
                  s.cameras[0].width == 2048 && s.cameras[1].width == 1024 && s.cameras[4].width == 2048,
              "camera default reaches cameras that did not set it");
    TAP_CHECK(pc_settings_set(&s, "encode.bitrate", "8M", err, sizeof err) == 0 && s.encode.bitrate == 8000000,
              "bitrate 8M");
    TAP_CHECK(pc_settings_set(&s, "encode.fallback", "libx265, libx264", err, sizeof err) == 0 &&
                  s.encode.fallback.count == 2 && strcmp(s.encode.fallback.item[1], "libx264") == 0,
              "fallback list from text");
    int rc = pc_settings_set(&s, "capture.fsp", "50", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "capture.fsp: unknown setting") && strstr(err, "did you mean \"fps\""),
              "unknown key: %s", err);
    rc = pc_settings_set(&s, "capture.fps", "fast", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "capture.fps") && strstr(err, "not a number"), "bad number: %s", err);
    rc = pc_settings_set(&s, "capture.height", "1081", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "odd"), "odd height: %s", err);
    rc = pc_settings_set(&s, "nosuch.key", "1", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "unknown section \"nosuch\""), "unknown section: %s", err);
    rc = pc_settings_set(&s, "cameras.width", "1", err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "needs an index"), "list without index: %s", err);
    TAP_CHECK(pc_settings_set(&s, "outputs[1].url", "udp://127.0.0.1:1234", err, sizeof err) == 0 &&
                  s.output_count == 2,
              "outputs[1].url appends an output");
    const char *urls[] = {"x.ts", "null"};
    TAP_CHECK(pc_settings_set_outputs(&s, urls, 2, err, sizeof err) == 0 && s.output_count == 2 &&
                  strcmp(s.outputs[1].url, "null") == 0,
              "set_outputs replaces the list");
}

static void test_diff(const char *example)
{
    pc_settings a, b;
    pc_settings_delta d;
    char err[256] = "", text[2048];
    pc_settings_defaults(&a);
    b = a;
    TAP_CHECK(pc_settings_diff(&a, &b, &d) == 0 && d.live == 0 && d.restart == 0, "identical: no changes");
    pc_settings_set(&b, "debayer.algo", "bilinear", err, sizeof err);
    pc_settings_set(&b, "debayer.variant", "4px", err, sizeof err);
    pc_settings_set(&b, "encode.bitrate", "5M", err, sizeof err);
    pc_settings_set(&b, "daemon.log_level", "debug", err, sizeof err);
    const char *urls[] = {"other.ts"};
    pc_settings_set_outputs(&b, urls, 1, err, sizeof err);
    int n = pc_settings_diff(&a, &b, &d);
    TAP_CHECK(n == 5 && d.restart == 0 &&
                  d.live == (PC_LIVE_ALGO | PC_LIVE_VARIANT | PC_LIVE_BITRATE | PC_LIVE_LOG_LEVEL | PC_LIVE_OUTPUTS),
              "algo, variant, bitrate, log level, outputs: all live (%d changes, live 0x%x)", n, d.live);
    pc_settings_set(&b, "capture.fps", "25", err, sizeof err);
    pc_settings_set(&b, "cameras[2].exposure", "1000", err, sizeof err);
    n = pc_settings_diff(&a, &b, &d);
    pc_settings_diff_describe(&d, text, sizeof text);
    TAP_CHECK(n == 7 && d.restart == 2 && strstr(text, "capture.fps 50 -> 25 (needs restart)") &&
                  strstr(text, "cameras[2].exposure 0 -> 1000 (needs restart)") &&
                  strstr(text, "debayer.algo edge -> bilinear (live)"),
              "fps and a camera's exposure need a restart: %s", text);

    /* Applying a reload keeps what needs a restart. */
    pc_settings cur = a;
    pc_settings_apply_live(&cur, &b);
    n = pc_settings_diff(&cur, &b, &d);
    TAP_CHECK(cur.debayer.algo == PC_ALGO_BILINEAR && cur.debayer.variant == PC_VARIANT_4PX &&
                  cur.encode.bitrate == 5000000 && cur.daemon.log_level == 7 && cur.output_count == 1 &&
                  strcmp(cur.outputs[0].url, "other.ts") == 0 && cur.capture.fps == 50.0 &&
                  cur.cameras[2].exposure_us == 0 && n == 2 && d.live == 0 && d.restart == 2,
              "apply_live takes the 5 live settings, leaves fps and exposure for a restart");

    /* Written settings load back identical. */
    if (!PANOCAP_HAVE_LIBCONFIG) {
        tap_skip("round trip needs libconfig");
        return;
    }
    pc_diag dg;
    pc_settings_defaults(&a);
    pc_diag_init(&dg);
    pc_settings_load(&a, example, &dg);
    char path[128];
    snprintf(path, sizeof path, "%s/dump.conf", config_tmpdir);
    FILE *f = fopen(path, "w");
    pc_settings_write(&a, f);
    fclose(f);
    pc_settings_defaults(&b);
    pc_diag_init(&dg);
    int rc = pc_settings_load(&b, path, &dg);
    n = pc_settings_diff(&a, &b, &d);
    pc_settings_diff_describe(&d, text, sizeof text);
    TAP_CHECK(rc == 0 && n == 0, "dump of the example loads back with no difference (%s)", text);
    dump(&dg);
}

static void test_reference(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    pc_settings_print_reference(f);
    fclose(f);
    int missing = 0;
    char name[96];
    for (int i = 0; i < pc_settings_key_count(); i++) {
        pc_settings_key_name(i, name, sizeof name);
        const char *k = strchr(name, '.') + 1;
        char pat[100];
        snprintf(pat, sizeof pat, "  %s (", k);
        if (!strstr(buf, pat)) {
            tap_diag("reference lacks %s", name);
            missing++;
        }
    }
    TAP_CHECK(missing == 0 && pc_settings_key_count() > 50, "--help-config reference documents all %d keys",
              pc_settings_key_count());
    free(buf);
}

int main(int argc, char **argv)
{
    const char *example = argc > 1 ? argv[1] : "systemd/panocap.conf.example";
    if (config_tmpdir_make("pc-config"))
        return 1;
    test_defaults();
    test_set();
    test_reference();
    if (PANOCAP_HAVE_LIBCONFIG) {
        test_example(example);
        test_errors();
        test_colour_errors();
        test_accepts();
    } else {
        pc_settings s;
        pc_diag d;
        pc_settings_defaults(&s);
        pc_diag_init(&d);
        int rc = pc_settings_load(&s, example, &d);
        TAP_CHECK(rc < 0 && find_item(&d, "built without libconfig", NULL, NULL),
                  "without libconfig: a clear error");
    }
    test_diff(example);
    config_tmpdir_remove();
    return tap_done();
}
