/* test_cli.c - the command line: every option of the daemon issue parses,
 * overrides beat the configuration file, usage errors return 64 with a
 * message naming the option, --list-algos prints the whole algorithm table
 * and --help documents every option of the table. Calls pc_cli_parse and
 * friends directly (no process). */
#include "cli.h"
#include "debayer.h"
#include "panocap_config.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse(pc_cli *cli, char *err, size_t len, ...)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = "panocap";
    va_list ap;
    va_start(ap, len);
    for (char *a; (a = va_arg(ap, char *)) && argc < 63;)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    err[0] = '\0';
    return pc_cli_parse(cli, argc, argv, err, len);
}

#define PARSE(cli, err, ...) parse(cli, err, sizeof err, __VA_ARGS__, (char *)NULL)

static char *capture_out(void (*fn)(FILE *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f);
    fclose(f);
    return buf;
}

static void usage_error(const char *what, const char *needle, int rc, const char *err)
{
    int ok = rc == PC_EXIT_USAGE && strstr(err, needle) != NULL;
    TAP_CHECK(ok, "%s: exit 64 and message names it (%s)", what, err);
}

int main(void)
{
    pc_cli *cli = calloc(1, sizeof *cli);
    pc_settings *s = malloc(sizeof *s);
    pc_diag *d = malloc(sizeof *d);
    char err[1024] = "";
    int rc;

    /* No arguments: run with the embedded defaults (no config file here). */
    rc = PARSE(cli, err, "--check-config");
    TAP_CHECK(rc == 0 && cli->action == PC_ACTION_CHECK_CONFIG, "--check-config parses");
    rc = parse(cli, err, sizeof err, (char *)NULL);
    TAP_CHECK(rc == 0 && cli->action == PC_ACTION_RUN && cli->nsets == 0 && !cli->config[0], "no arguments: run");
    if (access(pc_cli_default_config_path(), F_OK) != 0) {
        pc_diag_init(d);
        rc = pc_cli_load_settings(cli, s, d);
        TAP_CHECK(rc == PC_EXIT_OK && pc_cli_config_path(cli) == NULL && s->capture.source == PC_SOURCE_FAKE &&
                      s->capture.cameras == 5 && s->debayer.algo == PC_ALGO_EDGE && s->output_count == 1 &&
                      strcmp(s->outputs[0].url, "panocap.ts") == 0,
                  "no config file: embedded defaults (5 fake cameras, edge, panocap.ts)");
    } else {
        tap_skip("a default config file exists on this machine");
    }

    /* Every option of the issue's command line. */
    rc = PARSE(cli, err, "--algo", "bilinear", "--variant", "4px", "--source", "fake", "--cameras", "3", "--fps", "25",
               "--image", "/tmp/pic.png", "--output", "a.ts", "--output", "udp://127.0.0.1:5000", "--encoder",
               "libx264", "--bitrate", "8M", "--backend", "cpu", "--frames", "60", "--duration", "2.5",
               "--stats-interval", "0.5", "--snapshot", "/tmp/snap.png", "--log-level", "debug", "--control",
               "/tmp/x.sock", "--record-raw", "/tmp/raw.bin", "--codec", "h264");
    TAP_CHECK(rc == 0 && cli->action == PC_ACTION_RUN, "all issue options parse (%s)", err);
    pc_diag_init(d);
    rc = pc_cli_load_settings(cli, s, d);
    TAP_CHECK(rc == PC_EXIT_OK, "and load (%d errors)", d->errors);
    TAP_CHECK(s->debayer.algo == PC_ALGO_BILINEAR && s->debayer.variant == PC_VARIANT_4PX &&
                  s->capture.source == PC_SOURCE_FAKE && s->capture.cameras == 3 && s->capture.fps == 25.0 &&
                  strcmp(s->capture.image, "/tmp/pic.png") == 0 && s->output_count == 2 &&
                  strcmp(s->outputs[1].url, "udp://127.0.0.1:5000") == 0 && strcmp(s->encode.encoder, "libx264") == 0 &&
                  s->encode.bitrate == 8000000 && s->debayer.backend == PC_BACKEND_CPU && s->daemon.frames == 60 &&
                  s->daemon.duration_s == 2.5 && s->daemon.stats_interval_s == 0.5 &&
                  strcmp(s->daemon.snapshot, "/tmp/snap.png") == 0 && s->daemon.log_level == 7 &&
                  strcmp(s->daemon.control, "/tmp/x.sock") == 0 && strcmp(s->daemon.record_raw, "/tmp/raw.bin") == 0 &&
                  s->encode.codec == PC_CODEC_H264,
              "every option lands in its setting");
    rc = PARSE(cli, err, "--source", "file:/tmp/set.raw", "-s", "cameras[1].exposure=900", "--set",
               "capture.width=1024", "-a", "hq-linear", "-n", "2", "-o", "x.ts", "-e", "libx265", "-b", "1000k", "-f",
               "5", "-d", "1");
    pc_diag_init(d);
    TAP_CHECK(rc == 0 && pc_cli_load_settings(cli, s, d) == PC_EXIT_OK && s->capture.source == PC_SOURCE_FILE &&
                  strcmp(s->capture.file, "/tmp/set.raw") == 0 && s->cameras[1].exposure_us == 900.0 &&
                  s->cameras[0].width == 1024 && s->debayer.algo == PC_ALGO_HQ_LINEAR && s->capture.cameras == 2 &&
                  s->encode.bitrate == 1000000 && s->daemon.frames == 5,
              "short options, --source file:PATH and --set");

    /* The command line wins over the file; --output replaces its outputs. */
    if (PANOCAP_HAVE_LIBCONFIG) {
        char path[] = "/tmp/pc-cli-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");
        fputs("debayer = { algo = \"wd-original\"; };\ncapture = { fps = 30.0; image = \"file.png\"; };\n"
              "cameras = ( { serial = \"a\"; image = \"own.png\"; }, { serial = \"b\"; } );\n"
              "outputs = ( \"file1.ts\", \"file2.ts\" );\nencode = { bitrate = 4000000; };\n",
              f);
        fclose(f);
        rc = PARSE(cli, err, "--config", path, "--algo", "edge", "--output", "cli.ts", "--image", "cli.png");
        pc_diag_init(d);
        rc = rc ? rc : pc_cli_load_settings(cli, s, d);
        TAP_CHECK(rc == 0 && s->debayer.algo == PC_ALGO_EDGE && s->capture.fps == 30.0 && s->encode.bitrate == 4000000 &&
                      s->output_count == 1 && strcmp(s->outputs[0].url, "cli.ts") == 0 &&
                      strcmp(s->capture.image, "cli.png") == 0 && s->cameras[0].image[0] == '\0' &&
                      s->capture.cameras == 2,
                  "overrides win over the file, the rest of the file stays");
        /* Reload: the same file and overrides again, diff against before. */
        pc_settings *next = malloc(sizeof *next);
        pc_settings_delta delta;
        f = fopen(path, "w");
        fputs("debayer = { algo = \"bilinear\"; variant = \"2px\"; };\ncapture = { fps = 25.0; };\n"
              "cameras = ( { serial = \"a\"; }, { serial = \"b\"; } );\nencode = { bitrate = 6000000; };\n",
              f);
        fclose(f);
        pc_diag_init(d);
        rc = pc_cli_reload(cli, s, next, &delta, d);
        TAP_CHECK(rc == 0 && next->debayer.algo == PC_ALGO_EDGE && next->debayer.variant == PC_VARIANT_2PX &&
                      (delta.live & PC_LIVE_VARIANT) && (delta.live & PC_LIVE_BITRATE) && !(delta.live & PC_LIVE_ALGO) &&
                      delta.restart == 1,
                  "reload: --algo still wins, variant and bitrate live, fps needs a restart");
        f = fopen(path, "w");
        fputs("debayer = { algo = \"nope\"; };\n", f);
        fclose(f);
        pc_diag_init(d);
        rc = pc_cli_reload(cli, s, next, &delta, d);
        TAP_CHECK(rc == PC_EXIT_CONFIG && d->errors == 1, "reload of a broken file: 78, the caller keeps its settings");
        /* -s on an entry the file does not have (any more): the entry is
         * the command line's, and its errors say so (they named the file,
         * with no line and no word of the command line) */
        f = fopen(path, "w");
        fputs("debayer = { algo = \"edge\"; };\n", f);
        fclose(f);
        rc = PARSE(cli, err, "--config", path, "-s", "virtual_cameras[0].hfov=40");
        pc_diag_init(d);
        rc = rc ? rc : pc_cli_reload(cli, s, next, &delta, d);
        int named = d->count > 0;
        char want[400];
        snprintf(want, sizeof want, "comes from -s on the command line alone: %s has no such entry, and every reload "
                 "applies -s again)", path);
        char first[900] = "";
        for (int i = 0; i < d->count; i++) {
            named &= !strcmp(d->item[i].file, "command line") && d->item[i].line == 0 &&
                     !strncmp(d->item[i].key, "virtual_cameras", 15) && strstr(d->item[i].msg, want) != NULL;
            if (!strcmp(d->item[i].key, "virtual_cameras[0].name"))
                pc_diag_format(&d->item[i], first, sizeof first);
        }
        TAP_CHECK(rc == PC_EXIT_CONFIG && d->errors >= 2 && named &&
                      !strncmp(first, "command line: error: virtual_cameras[0].name: missing", 53) &&
                      strstr(first, "(virtual_cameras[0] comes from -s on the command line alone"),
                  "reload with -s virtual_cameras[0].hfov=40 and a file without it: 78, each error the command "
                  "line's, saying so: %s", first);
        rc = PARSE(cli, err, "--config", "/nonexistent.conf");
        pc_diag_init(d);
        TAP_CHECK(rc == 0 && pc_cli_load_settings(cli, s, d) == PC_EXIT_CONFIG && d->count == 1 &&
                      strstr(d->item[0].msg, "cannot open"),
                  "--config with a missing file: 78");
        unlink(path);
        free(next);
    } else {
        tap_skip("no libconfig");
        tap_skip("no libconfig");
        tap_skip("no libconfig");
        tap_skip("no libconfig");
    }

    /* --rig: the panorama's rig; a reload re-reads it, takes a rewritten
     * file as a live change and refuses a broken one. */
    {
        char rig[] = "/tmp/pc-cli-rig-XXXXXX";
        int fd = mkstemp(rig);
        static const char *const good = "p f1 w8600 h1300 v210\n"
                                        "i w2040 h1080 f0 v50 y-80\ni w2040 h1080 f0 v50 y-40\ni w2040 h1080 f0 v50 y0\n"
                                        "i w2040 h1080 f0 v50 y40\ni w2040 h1080 f0 v50 y80\n";
        FILE *f = fdopen(fd, "w");
        fputs(good, f);
        fclose(f);
        rc = PARSE(cli, err, "--rig", rig);
        pc_diag_init(d);
        rc = rc ? rc : pc_cli_load_settings(cli, s, d);
        TAP_CHECK(rc == 0 && strcmp(s->panorama.rig, rig) == 0 && s->panorama.rig_digest != 0 && pc_settings_stitching(s),
                  "--rig FILE: panorama.rig, its digest taken");
        pc_settings *next = malloc(sizeof *next);
        pc_settings_delta delta;
        pc_diag_init(d);
        rc = pc_cli_reload(cli, s, next, &delta, d);
        TAP_CHECK(rc == 0 && delta.changes == 0, "reload, the .pto unchanged: no change");
        f = fopen(rig, "w");
        fprintf(f, "# recalibrated\n%s", good);
        fclose(f);
        pc_diag_init(d);
        rc = pc_cli_reload(cli, s, next, &delta, d);
        TAP_CHECK(rc == 0 && delta.changes == 1 && delta.live == PC_LIVE_RIG && delta.restart == 0,
                  "reload, the .pto rewritten: a live rig change");
        f = fopen(rig, "w");
        fputs("p f1 w8600 h1300 v210\ni w2040 h1080 f0 v50\n", f);
        fclose(f);
        pc_diag_init(d);
        rc = pc_cli_reload(cli, s, next, &delta, d);
        TAP_CHECK(rc == PC_EXIT_CONFIG && d->errors == 1 && strcmp(d->item[0].key, "panorama.rig") == 0 &&
                      strstr(d->item[0].msg, "1 i lines (images) for 5 cameras"),
                  "reload, the .pto now of 1 camera: 78 naming panorama.rig, the running rig stays");
        unlink(rig);
        free(next);
    }

    /* Usage errors: 64 and the option named. */
    rc = PARSE(cli, err, "--algo", "edgy");
    usage_error("unknown algorithm", "--algo edgy: unknown value \"edgy\"; allowed: bilinear", rc, err);
    rc = PARSE(cli, err, "--alog", "edge");
    usage_error("mistyped option", "\"--alog\" (did you mean --algo?)", rc, err);
    rc = PARSE(cli, err, "--fps");
    usage_error("missing value", "--fps needs a value", rc, err);
    rc = PARSE(cli, err, "-a");
    usage_error("missing value (short)", "--algo needs a value", rc, err);
    rc = PARSE(cli, err, "--fps", "0");
    usage_error("out of range", "--fps 0: 0 is out of range; allowed: 1..1000", rc, err);
    rc = PARSE(cli, err, "--cameras", "three");
    usage_error("not a number", "--cameras three: \"three\" is not a number", rc, err);
    rc = PARSE(cli, err, "--variant", "8px");
    usage_error("bad variant", "--variant 8px", rc, err);
    rc = PARSE(cli, err, "--backend", "opencl");
    usage_error("bad backend", "allowed: auto, cuda, cpu", rc, err);
    rc = PARSE(cli, err, "--source", "usb");
    usage_error("bad source", "allowed: gige, fake, file:PATH", rc, err);
    rc = PARSE(cli, err, "--source", "file");
    usage_error("file source without path", "file:PATH", rc, err);
    rc = PARSE(cli, err, "--bitrate", "0");
    usage_error("bitrate 0", "--bitrate 0", rc, err);
    rc = PARSE(cli, err, "--set", "debayer.algo");
    usage_error("--set without =", "expected KEY=VALUE", rc, err);
    rc = PARSE(cli, err, "--set", "debayer.algorithm=edge");
    usage_error("--set unknown key", "did you mean \"algo\"", rc, err);
    rc = PARSE(cli, err, "--list-algos", "--check-config");
    usage_error("two actions", "--list-algos and --check-config cannot be combined", rc, err);
    rc = PARSE(cli, err, "stray");
    usage_error("stray argument", "unexpected argument \"stray\"", rc, err);
    rc = PARSE(cli, err, "-x");
    usage_error("unknown short option", "unknown option -x", rc, err);
    rc = PARSE(cli, err, "--output", "");
    usage_error("empty output", "--output: empty URL", rc, err);
    rc = PARSE(cli, err, "-o", "1", "-o", "2", "-o", "3", "-o", "4", "-o", "5", "-o", "6", "-o", "7", "-o", "8", "-o", "9");
    usage_error("too many outputs", "too many outputs", rc, err);

    /* --help wins over everything; actions. */
    rc = PARSE(cli, err, "--list-algos", "--help");
    TAP_CHECK(rc == 0 && cli->action == PC_ACTION_HELP, "--help with another action: help");
    rc = PARSE(cli, err, "-V");
    TAP_CHECK(rc == 0 && cli->action == PC_ACTION_VERSION, "-V: version");
    static const struct {
        const char *opt;
        pc_action a;
    } acts[] = {{"--list-algos", PC_ACTION_LIST_ALGOS}, {"--list-cameras", PC_ACTION_LIST_CAMERAS},
                {"--check-config", PC_ACTION_CHECK_CONFIG}, {"--dump-config", PC_ACTION_DUMP_CONFIG},
                {"--help-config", PC_ACTION_HELP_CONFIG}, {"--version", PC_ACTION_VERSION}, {"--help", PC_ACTION_HELP}};
    int all = 1;
    for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
        all &= PARSE(cli, err, acts[i].opt) == 0 && cli->action == acts[i].a;
    TAP_CHECK(all, "every action option selects its action");

    /* --list-algos: every algorithm of the table, the default marked. */
    char *text = capture_out(pc_cli_list_algos);
    int lines = 0, found = 0;
    for (char *p = text; *p; p++)
        lines += *p == '\n';
    for (int i = 0; i < pc_algo_count(); i++) {
        char pat[64];
        snprintf(pat, sizeof pat, "\n%s ", pc_algo_get((pc_algo_id)i)->name);
        found += strstr(text, pat) != NULL;
    }
    TAP_CHECK(pc_algo_count() == PC_ALGO_COUNT && PC_ALGO_COUNT == 9 && found == 9 && lines == 10 &&
                  strstr(text, "(default)"),
              "--list-algos lists all %d algorithms (header + %d lines)", found, lines - 1);
    free(text);

    /* --help documents every option of the table and of the issue. */
    text = capture_out(pc_cli_usage);
    int missing = 0;
    for (int i = 0; i < pc_cli_option_count(); i++) {
        char pat[64];
        snprintf(pat, sizeof pat, "--%s", pc_cli_option_name(i));
        if (!strstr(text, pat)) {
            tap_diag("--help lacks %s", pat);
            missing++;
        }
    }
    static const char *const issue_opts[] = {
        "--config FILE", "--algo NAME", "--variant", "--source", "--cameras N", "--fps N", "--image FILE",
        "--output URL", "--encoder NAME", "--bitrate N", "--backend", "--frames N", "--duration S",
        "--stats-interval S", "--list-algos", "--list-cameras", "--check-config", "--snapshot FILE", "--version",
        "--help"};
    for (size_t i = 0; i < sizeof issue_opts / sizeof *issue_opts; i++)
        if (!strstr(text, issue_opts[i])) {
            tap_diag("--help lacks %s", issue_opts[i]);
            missing++;
        }
    TAP_CHECK(missing == 0 && strstr(text, "64 usage error") && strstr(text, "78 configuration error") &&
                  strstr(text, "edge, homogeneous-edge"),
              "--help documents all %d options, exit codes and algorithms", pc_cli_option_count());
    free(text);

    free(cli);
    free(s);
    free(d);
    return tap_done();
}
