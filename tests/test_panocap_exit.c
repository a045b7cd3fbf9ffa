/* test_panocap_exit.c - the panocap executable's exit codes and messages:
 * 0 for --help/--list-algos/--check-config of the example, 64 for usage
 * errors, 78 for configuration errors (each error class of the issue, with
 * file:line and key on stderr, both with --check-config and when starting
 * the daemon, then with "<3>" priorities as a service logs them).
 * One validation: what a run refuses (cameras of different sizes, "null"
 * with other outputs, a bitrate over the encoder's limit, unknown encoder,
 * preset and format names, missing pictures and raw files, a raw file with
 * another camera count, bad UDP/SRT hosts and ports, a block device or an
 * unwritable place as a recording, an integer too large for 64 bits) is
 * refused by --check-config with 78 and the key, and the run refuses it
 * the same way (78, "not starting") before anything starts.
 * argv[1]: the panocap binary, argv[2]: the example config. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "panocap_config.h"
#include "tap.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *exe;
static char dir[] = "/tmp/pc-exit-XXXXXX";
static char out[65536], errs[65536];

static int run_argv(char **argv);

/* Runs exe with args; stdout/stderr captured; returns the exit code. */
static int run(const char *first, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)exe;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return run_argv(argv);
}

/* exe, then the NULL-terminated list a, then the NULL-terminated list b. */
static int run2(const char *const *a, const char *const *b)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)exe;
    for (; *a && argc < 31; a++)
        argv[argc++] = (char *)*a;
    for (; *b && argc < 31; b++)
        argv[argc++] = (char *)*b;
    argv[argc] = NULL;
    return run_argv(argv);
}

static int run_argv(char **argv)
{
    char o[128], e[128];
    snprintf(o, sizeof o, "%s/out", dir);
    snprintf(e, sizeof e, "%s/err", dir);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(o, "w", stdout) || !freopen(e, "w", stderr))
            _exit(120);
        if (chdir(dir) != 0)
            _exit(121);
        execv(exe, argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    FILE *f = fopen(o, "r");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    f = fopen(e, "r");
    n = f ? fread(errs, 1, sizeof errs - 1, f) : 0;
    errs[n] = '\0';
    if (f)
        fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char *conf(const char *name, const char *text)
{
    static char p[16][160];
    static int k;
    char *path = p[k++ % 16];
    snprintf(path, 160, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* A PCRAW1 file (capture/raw_format.md) of one set from 5 cameras 8x8. */
static const char *raw5(void)
{
    static char path[160];
    snprintf(path, sizeof path, "%s/five.raw", dir);
    unsigned char h[32] = {'P', 'C', 'R', 'A', 'W', '1', 32, 0, 8, 0, 0, 0, 8, 0, 0, 0, 5, 0, 0, 8,
                           0x50, 0xc3, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0};
    unsigned char set[24 + 5 * 64] = {'P', 'C', 'S', '1'};
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(h, 1, sizeof h, f);
        fwrite(set, 1, sizeof set, f);
        fclose(f);
    }
    return path;
}

/* Each case twice: --check-config, then a start as systemd does it. */
static void one_validation(void)
{
    char srcfile[200], blk[200], raw[200];
    snprintf(srcfile, sizeof srcfile, "file:%s", raw5());
    snprintf(raw, sizeof raw, "file:%s/missing.raw", dir);
    snprintf(blk, sizeof blk, "%s/sdx", dir);
    int have_blk = mknod(blk, S_IFBLK | 0600, makedev(8, 0)) == 0;
    const char *rate = conf("bitrate.conf", "encode = {\n  bitrate = 900000000;\n};\n");
    const char *huge = conf("huge.conf", "capture = {\n  pool_size = 999999999999999999999999999999;\n};\n");
    const char *wide = conf("wide.conf", "capture = {\n  width = 4294967616;\n};\n");
    char notpic[200];
    snprintf(notpic, sizeof notpic, "capture.image=%s", conf("notapicture.png", "this is text, not a picture\n"));
    /* rigs (Hugin projects) for the 5 default cameras 2040x1080: one good,
     * one of 4 images, one with a bad field on line 3 */
#define IMG(y) "i w2040 h1080 f0 v50 y" #y "\n"
    char rig[200], rig4[200], rigv[200];
    snprintf(rig, sizeof rig, "%s", conf("rig.pto", "p f1 w8600 h1300 v210\n" IMG(-80) IMG(-40) IMG(0) IMG(40) IMG(80)));
    snprintf(rig4, sizeof rig4, "%s", conf("four.pto", "p f1 w8600 h1300 v210\n" IMG(-80) IMG(-40) IMG(0) IMG(40)));
    snprintf(rigv, sizeof rigv, "%s", conf("badv.pto", "p f1 w8600 h1300 v210\n" IMG(-80) "i w2040 h1080 f0 v0 y-40\n"
                                                       IMG(0) IMG(40) IMG(80)));
    char tiny[200];
    snprintf(tiny, sizeof tiny, "%s", conf("tiny.pto", "p f1 w8600 h1300 v210\ni w2040 h1080 f0 v0.001 y-80\n"
                                                      "i w2040 h1080 f0 v0.001 y-40\ni w2040 h1080 f0 v0.001 y0\n"
                                                      "i w2040 h1080 f0 v0.001 y40\ni w2040 h1080 f0 v0.001 y80\n"));
    char square[200];
    snprintf(square, sizeof square, "%s", conf("square.pto", "p f1 w65536 h65536 v210\n" IMG(-80) IMG(-40) IMG(0) IMG(40)
                                                              IMG(80)));
#undef IMG
    struct {
        const char *args[12];
        const char *needle;
        int ffmpeg; /* needs FFmpeg in the build */
    } cases[] = {
        {{"-s", "cameras[1].height=1000"}, "cameras[1]: camera 1 (PCFAKE2): region 2040x1000 differs", 0},
        {{"--output", "null", "--output", "x.ts"}, "outputs[0].url: \"null\"", 0},
        {{"--config", rate}, "bitrate.conf:2: error: encode.bitrate: 900000000 is out of range; allowed: "
                             "100000..800000000", 0},
        {{"--encoder", "libfoo"}, "encode.encoder: encoder \"libfoo\" is not a video encoder", 1},
        {{"--encoder", "libx264", "-s", "encode.preset=turbo"}, "encode.preset: preset \"turbo\"", 1},
        {{"-s", "outputs[0].format=foo"}, "outputs[0].format: output 0 'panocap.ts': format 'foo'", 1},
        {{"-s", "capture.image=/nonexistent/pano.png"}, "capture.image: camera 0: picture /nonexistent/pano.png", 0},
        {{"--source", raw}, "capture.file: raw file ", 0},
        {{"--source", srcfile, "--cameras", "3"}, "has 5 cameras, the configuration 3", 0},
        {{"--output", "udp://127.0.0.1:99999"}, "outputs[0].url: output 0 'udp://127.0.0.1:99999': port", 1},
        {{"--output", "udp://:5000"}, "outputs[0].url: output 0 'udp://:5000': no host", 1},
        {{"--output", "udp://127.0.0.1"}, "outputs[0].url: output 0 'udp://127.0.0.1': no port", 1},
        {{"--output", "srt://host:abc"}, "port \"abc\" is not a number", 1},
        {{"--output", "/proc/rec/x.ts"}, "outputs[0].url: output 0 '/proc/rec/x.ts': cannot create a file", 1},
        {{"--output", have_blk ? blk : "/dev/null/x.ts"}, have_blk ? "is a block device" : "is not a folder", 1},
        {{"--config", huge}, "huge.conf:2: error: capture.pool_size: 999999999999999999999999999999 is out of "
                             "range", 0},
        /* libconfig 1.5 reads 4294967616 as 320: the value as written is refused */
        {{"--config", wide}, "wide.conf:2: error: capture.width: 4294967616 is out of range; allowed: 8..32768", 0},
        /* what the encoder refuses at the start: cameras 8, 10, 14 wide (16..16384) */
        {{"-s", "capture.width=8"}, "error: capture.width: the cameras are 8x1080: the encoder's picture would be "
                                    "8x5400 (layout stacked), and encoders take 16..16384 pixels a side", 0},
        {{"-s", "capture.width=14"}, "error: capture.width: the cameras are 14x1080: the encoder's picture would "
                                     "be 14x5400", 0},
        {{"--cameras", "1", "-s", "capture.height=10"}, "error: capture.height: the cameras are 2040x10: the "
                                                         "encoder's picture would be 2040x10", 0},
        /* the rig (--rig): every error names the .pto's place and panorama.rig */
        {{"--rig", "/nonexistent/rig.pto"}, "error: panorama.rig: /nonexistent/rig.pto: cannot open the rig file: No "
                                            "such file or directory", 0},
        {{"--rig", "/proc/self/mem"}, "error: panorama.rig: /proc/self/mem: read error: Input/output error", 0},
        {{"--rig", notpic + 14}, "notapicture.png: no p line (the panorama's projection and size): not a Hugin project?", 0},
        {{"--rig", rig4}, "four.pto: 4 i lines (images) for 5 cameras", 0},
        {{"--rig", rig, "-s", "capture.height=1000"}, "rig.pto:2: i line (image 0): fields w h: 2040x1080, but camera "
                                                      "0 delivers 2040x1000", 0},
        {{"--rig", rigv}, "error: panorama.rig: ", 0},
        {{"--rig", rigv}, "badv.pto:3: i line (image 1): field v: 0 is not a field of view", 0},
        /* sizes inside 16384 a side that libavcodec does not open (its area):
         * refused here, not by the encoder at the start (exit 1) */
        {{"--rig", square, "-s", "panorama.width=16384"}, "error: panorama.width: panorama.width 16384: 16384x16384, "
         "the field of view of the .pto's 65536x65536, capped to 16254x16254", 0},
        {{"--rig", rig, "-s", "virtual_cameras[0].name=a", "-s", "virtual_cameras[0].width=16384", "-s",
          "virtual_cameras[0].height=16384", "-s", "virtual_cameras[0].outputs=a.ts"},
         "error: virtual_cameras[0].height: 16384x16384 is over the area libavcodec opens", 0},
        /* five cameras at 0.001 degree: no lens; they rendered nothing */
        {{"--rig", tiny}, "error: panorama.rig: ", 0},
        {{"--rig", tiny}, "tiny.pto:2: i line (image 0): field v: 0.001 degrees is narrower than any lens (0.1 <= v "
                          "< 180 degrees for this lens", 0},
        /* virtual cameras */
        {{"-s", "virtual_cameras[0].name=a", "-s", "virtual_cameras[0].outputs=a.ts"},
         "error: virtual_cameras: 1 virtual camera needs a rig: set panorama.rig", 0},
        {{"--rig", rig, "-s", "virtual_cameras[0].name=a", "-s", "virtual_cameras[0].outputs=panocap.ts"},
         "error: virtual_cameras[0].outputs[0].url: \"panocap.ts\" is also outputs[0]'s", 0},
        {{"--rig", rig, "-s", "virtual_cameras[0].name=a", "-s", "virtual_cameras[0].outputs=/proc/v/a.ts"},
         "virtual_cameras[0].outputs[0].url: output 0 '/proc/v/a.ts': cannot create a file", 1},
        /* a picture the fake cameras cannot read */
        {{"-s", notpic}, "capture.image: camera 0: picture ", 0},
        {{"-s", notpic}, "notapicture.png: not a PNG or PPM image", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (cases[i].ffmpeg && !PANOCAP_HAVE_FFMPEG)
            continue;
        const char *const *a = cases[i].args;
        char what[200];
        snprintf(what, sizeof what, "%s %s%s%s%s%s", a[0], a[1], a[2] ? " " : "", a[2] ? a[2] : "", a[2] && a[3] ? " " : "",
                 a[2] && a[3] ? a[3] : "");
        static const char *const check[] = {"--check-config", NULL};
        static const char *const start[] = {"--frames", "1", "--control", "", NULL};
        int rc = run2(a, check);
        int ok = rc == 78 && strstr(errs, cases[i].needle);
        TAP_CHECK(ok, "--check-config %s: 78 and \"%s\"", what, cases[i].needle);
        if (!ok)
            tap_diag("exit %d, stderr: %s", rc, errs);
        /* panocap's own lines only: no encoder library's banner (the
         * libfoo message once opened every known encoder to list them) */
        TAP_CHECK(!strstr(errs, "Svt[") && !strstr(out, "Svt[") && !strstr(errs, "x265 [") &&
                      !strstr(errs, "x264 ["),
                  "--check-config %s: no encoder library lines in the answer", what);
        /* the start says the same: the line of the error --check-config gave */
        char same[1024] = "";
        const char *e = strstr(errs, "error: ");
        if (e) {
            const char *sol = e;
            while (sol > errs && sol[-1] != '\n')
                sol--;
            snprintf(same, sizeof same, "%.*s", (int)strcspn(sol, "\n"), sol);
        }
        rc = run2(a, start);
        ok = rc == 78 && strstr(errs, cases[i].needle) && same[0] && strstr(errs, same) && strstr(errs, "<3>") &&
             strstr(errs, "not starting");
        TAP_CHECK(ok, "starting with %s: 78, \"<3>...%s\" (the line --check-config printed), not starting", what,
                  cases[i].needle);
        if (!ok)
            tap_diag("exit %d, stderr: %s", rc, errs);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return tap_skip_all("usage: test_panocap_exit PANOCAP EXAMPLE");
    exe = argv[1];
    const char *example = argv[2];
    if (!mkdtemp(dir))
        return tap_skip_all("mkdtemp failed");
    unsetenv("NOTIFY_SOCKET");

    int rc = run("--help", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "Usage: panocap"), "--help: 0");
    rc = run("--list-algos", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "homogeneous-edge"), "--list-algos: 0");
    rc = run("--version", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "panocap " PANOCAP_VERSION), "--version: 0");
    rc = run("--help-config", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "deadline_periods"), "--help-config: 0");
    rc = run("--algo", "nope", NULL);
    TAP_CHECK(rc == 64 && strstr(errs, "--algo nope") && strstr(errs, "Try 'panocap --help'"), "bad --algo: 64");
    rc = run("--frobnicate", NULL);
    TAP_CHECK(rc == 64 && strstr(errs, "--frobnicate"), "unknown option: 64");
    rc = run("--check-config", NULL);
    if (PANOCAP_HAVE_FFMPEG)
        TAP_CHECK(rc == 0 && strstr(out, "built-in defaults: OK (5 fake cameras, unstitched 2040x5400"),
                  "--check-config without a file: the defaults are OK");
    else /* the default output panocap.ts needs an encoder: a run would refuse it too */
        TAP_CHECK(rc == 78 && strstr(errs, "this build has no FFmpeg"),
                  "--check-config without a file, no FFmpeg in the build: 78, only \"null\" is possible");
    if (PANOCAP_HAVE_FFMPEG) {
        /* capacity said up front (issue 29): an 8600x1300 panorama at 50 fps
         * on one core (encode.cpus = "0": the same on every machine) is far
         * more than libx264 holds, a 1024-wide one is not */
        const char *big = conf("big.pto", "p f1 w8600 h1300 v210\ni w2040 h1080 f0 v50 y-80\n"
                                          "i w2040 h1080 f0 v50 y-40\ni w2040 h1080 f0 v50 y0\n"
                                          "i w2040 h1080 f0 v50 y40\ni w2040 h1080 f0 v50 y80\n");
        rc = run("--check-config", "--rig", big, "--encoder", "libx264", "-s", "encode.cpus=0", "-o", "x.ts", NULL);
        TAP_CHECK(rc == 0 && strstr(errs, "capacity: the pictures (panorama 8600x1300) at 50 fps") &&
                      strstr(errs, "on 1 core holds about 37 Mpixel/s") && strstr(errs, "What would fit: panorama.width = "),
                  "--check-config of an 8600x1300 panorama on 1 core: 0 and the capacity warning naming the "
                  "picture and what would fit");
        if (!strstr(errs, "capacity:"))
            tap_diag("stderr: %s", errs);
        rc = run("--check-config", "--rig", big, "-s", "panorama.width=1024", "--encoder", "libx264", "-s",
                 "encode.cpus=0", "-o", "x.ts", NULL);
        TAP_CHECK(rc == 0 && !strstr(errs, "capacity:"), "--check-config of a 1024-wide panorama on 1 core: no "
                  "capacity warning");
        rc = run("--check-config", "--rig", big, "-s", "encode.record_queue_seconds=61", "-o", "x.ts", NULL);
        TAP_CHECK(rc == 64 && strstr(errs, "encode.record_queue_seconds: 61 is out of range"),
                  "-s encode.record_queue_seconds=61: 64, out of range");
    }
    rc = run("--source", "gige", "--check-config", NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "needs the cameras list"), "--source gige without cameras: 78");

    if (!PANOCAP_HAVE_LIBCONFIG) {
        rc = run("--config", example, "--check-config", NULL);
        TAP_CHECK(rc == 78 && strstr(errs, "built without libconfig"), "no libconfig: 78 with a clear message");
        return tap_done();
    }
    rc = run("--config", example, "--check-config", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "OK (5 gige cameras, unstitched 2040x5400, algorithm edge, 4 outputs)"),
              "the example config checks OK: %s", out);
    rc = run("--config", example, "--dump-config", NULL);
    const char *dumped = conf("dumped.conf", out);
    int rc2 = run("--config", dumped, "--check-config", NULL);
    TAP_CHECK(rc == 0 && rc2 == 0, "--dump-config output is itself a valid config");

    /* the panorama and a view: checked, dumped, the dump checked again */
    const char *pto = conf("ok.pto", "p f1 w8600 h1300 v210\ni w2040 h1080 f0 v50 y-80\ni w2040 h1080 f0 v50 y-40\n"
                                     "i w2040 h1080 f0 v50 y0\ni w2040 h1080 f0 v50 y40\ni w2040 h1080 f0 v50 y80\n");
    char views[1024];
    snprintf(views, sizeof views,
             "panorama = { rig = \"%s\"; blend = \"seam\"; unstitched_outputs = ( \"cams.ts\" ); };\n"
             "virtual_cameras = ( { name = \"main\"; tilt = -2.0; hfov = 40.0; outputs = ( \"main.ts\" );\n"
             "  presets = ( { name = \"goal\"; pan = -60.0; tilt = 0.0; hfov = 30.0; } ); } );\n",
             pto);
    const char *vconf = conf("views.conf", views);
    rc = run("--config", vconf, "--check-config", NULL);
    int rc1 = rc;
    rc = run("--config", vconf, "--dump-config", NULL);
    int dumped_ok = rc == 0 && strstr(out, "unstitched_outputs = (") && strstr(out, "name = \"goal\";") &&
                    strstr(out, "virtual_cameras = (");
    rc2 = run("--config", conf("views-dumped.conf", out), "--check-config", NULL);
    TAP_CHECK(rc1 == 0 && dumped_ok && rc2 == 0,
              "a panorama with unstitched outputs and a view with presets: checks OK, --dump-config writes them, the "
              "dump checks OK (exit %d, %d)", rc1, rc2);

    static const struct {
        const char *name, *text, *needle;
    } cases[] = {
        {"syntax.conf", "capture = {\n  fps = ;\n};\n", "syntax.conf:2: error: syntax error"},
        {"unknown.conf", "debayer = {\n  algo = \"edge\";\n  varient = \"2px\";\n};\n",
         "unknown.conf:3: error: debayer.varient: unknown setting; did you mean \"variant\"?"},
        {"type.conf", "capture = { cameras = \"five\"; };\n",
         "type.conf:1: error: capture.cameras: expected an integer, got a string (\"five\")"},
        {"range.conf", "\nencode = { gop = 0; };\n", "range.conf:2: error: encode.gop: 0 is out of range; allowed: 1..3000"},
        {"enum.conf", "daemon = { log_level = \"chatty\"; };\n",
         "enum.conf:1: error: daemon.log_level: unknown value \"chatty\"; allowed: err, warning, notice, info, debug"},
        {"dup.conf", "capture = { source = \"gige\"; };\ncameras = (\n { address = \"10.0.0.1\"; },\n { address = \"10.0.0.1\"; }\n);\n",
         "dup.conf:4: error: cameras[1] (10.0.0.1): duplicate camera"},
        {"odd.conf", "capture = {\n  height = 1079;\n};\n", "odd.conf:2: error: capture.height: 1079 is odd"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *p = conf(cases[i].name, cases[i].text);
        rc = run("--config", p, "--check-config", NULL);
        TAP_CHECK(rc == 78 && strstr(errs, cases[i].needle), "%s: exit 78 and \"%s\"", cases[i].name, cases[i].needle);
        if (rc != 78 || !strstr(errs, cases[i].needle))
            tap_diag("stderr: %s", errs);
    }
    /* The same errors when starting the daemon (as systemd does, no
     * --check-config): 78, every error logged with the <3> priority, nothing
     * runs. --frames 1 --output null keeps a wrongly accepted file from
     * running long; the gige case (dup.conf) is left out so that no camera
     * address is ever contacted from here. */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (strstr(cases[i].text, "gige"))
            continue;
        const char *p = conf(cases[i].name, cases[i].text);
        rc = run("--config", p, "--frames", "1", "--output", "null", "--control", "", NULL);
        int ok = rc == 78 && strstr(errs, cases[i].needle) && strstr(errs, "<3>") && strstr(errs, "not starting");
        TAP_CHECK(ok, "starting with %s: exit 78, \"<3>...%s\", not starting", cases[i].name, cases[i].needle);
        if (!ok)
            tap_diag("exit %d, stderr: %s", rc, errs);
    }
    rc = run("--config", "/nonexistent/panocap.conf", "--check-config", NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "/nonexistent/panocap.conf: error: cannot open the configuration file: No such file"),
              "missing file: 78");
    const char *bad = conf("run-bad.conf", "capture = { fps = 0.0; };\n");
    rc = run("--config", bad, NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "<3>") && strstr(errs, "run-bad.conf:1: error: capture.fps") &&
                  strstr(errs, "not starting"),
              "starting with a bad config: 78, errors logged with <3>");
    rc = run("--config", example, "--fps", "0", NULL);
    TAP_CHECK(rc == 64, "bad value on the command line with a good file: 64");
    rc = run("--config", example, "--cameras", "3", "--check-config", NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "every camera must be listed"), "command line contradicting the file: 78");

    one_validation();

    /* one error, one message: a panorama too small with the scene that
     * needs the rig said also "scene 'stadium' needs a rig" though the rig
     * was set (its own error says what to fix) */
    char okrig[200];
    snprintf(okrig, sizeof okrig, "%s", conf("ok.pto", "p f1 w8600 h1300 v210\ni w2040 h1080 f0 v50 y-80\n"
                                                       "i w2040 h1080 f0 v50 y-40\ni w2040 h1080 f0 v50 y0\n"
                                                       "i w2040 h1080 f0 v50 y40\ni w2040 h1080 f0 v50 y80\n"));
    rc = run("--rig", okrig, "-s", "panorama.width=16", "-s", "capture.scene=stadium", "--check-config", NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "error: panorama.width: panorama.width 16: 16x2") && strstr(errs, "1 error") &&
                  !strstr(errs, "needs a rig"),
              "panorama.width 16 with capture.scene: its one error, no \"needs a rig\" (exit %d)", rc);
    if (rc != 78 || strstr(errs, "needs a rig"))
        tap_diag("stderr: %s", errs);
    rc = run("-s", "capture.scene=stadium", "--check-config", NULL);
    TAP_CHECK(rc == 78 && strstr(errs, "error: capture.scene: capture: scene 'stadium' needs a rig"),
              "capture.scene without a rig: \"needs a rig\" still (exit %d)", rc);

    /* Control bytes in what a message quotes (a .pto's field, a config
     * value, an argument) are escaped: no terminal escape or bell reaches
     * the terminal or the journal, from --check-config or the start. */
    {
        const char *esc_pto = conf("esc.pto", "p f1 w8600 h1300 v210\ni w2040 h1080 f0 v35.1\x1b[2J\x1b]0;pwned\x07 "
                                              "y-80\ni w2040 h1080 f0 v50 y-40\ni w2040 h1080 f0 v50 y0\n"
                                              "i w2040 h1080 f0 v50 y40\ni w2040 h1080 f0 v50 y80\n");
        const char *esc_conf = conf("esc.conf", "daemon = { log_level = \"\\x1b[2Jchatty\\x07\"; };\n");
        struct {
            const char *label;
            const char *args[10];
            const char *needle;
            int want;
        } esc[] = {
            {"--check-config, a .pto field", {"--rig", esc_pto, "--check-config"},
             "field v: \"v35.1\\x1b[2J\\x1b]0;pwned\\x07\" is not a number", 78},
            {"the start, a .pto field", {"--rig", esc_pto, "--frames", "1", "--control", ""}, "field v: \"v35.1\\x1b[2J", 78},
            {"--check-config, a config value", {"--config", esc_conf, "--check-config"},
             "unknown value \"\\x1b[2Jchatty\\x07\"", 78},
            {"the start, a config value", {"--config", esc_conf, "--frames", "1", "--output", "null", "--control", ""},
             "\\x1b[2Jchatty", 78},
            {"an argument", {"--algo", "\x1b[2J\x07"}, "\\x1b[2J\\x07", 64},
        };
        for (size_t i = 0; i < sizeof esc / sizeof *esc; i++) {
            static const char *const none[] = {NULL};
            rc = run2(esc[i].args, none);
            int raw = 0;
            for (const char *c = errs; *c; c++)
                raw |= ((unsigned char)*c < 0x20 && *c != '\n') || *c == 0x7f;
            TAP_CHECK(rc == esc[i].want && strstr(errs, esc[i].needle) && !raw,
                      "%s: exit %d, control bytes escaped (\"%s\"), none raw on stderr", esc[i].label, esc[i].want,
                      esc[i].needle);
            if (rc != esc[i].want || !strstr(errs, esc[i].needle) || raw)
                tap_diag("exit %d, stderr: %s", rc, errs);
        }
    }

    /* Numbers past 32 bits, as the issue wrote them (no L): read at full
     * width, through the file and through -s. */
    const char *ok64 = conf("wide-ok.conf", "outputs = ( { url = \"rec/x.ts\"; segment = 60;\n"
                                            "  max_bytes = 5000000000; min_free = 6000000000; max_age = 3153600000; } );\n"
                                            "daemon = { frames = 4294967306; };\n");
    rc = run("--config", ok64, "--dump-config", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "max_bytes = 5000000000L;") && strstr(out, "min_free = 6000000000L;") &&
                  strstr(out, "max_age = 3153600000L;") && strstr(out, "frames = 4294967306L;"),
              "max_bytes 5000000000, min_free 6000000000, max_age 3153600000, frames 4294967306 in a file: "
              "kept whole (exit %d)", rc);
    rc = run("-s", "outputs[0].segment=60", "-s", "outputs[0].max_bytes=5000000000", "--dump-config", NULL);
    TAP_CHECK(rc == 0 && strstr(out, "max_bytes = 5000000000L;"), "-s outputs[0].max_bytes=5000000000: kept whole");

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
    return tap_done();
}
