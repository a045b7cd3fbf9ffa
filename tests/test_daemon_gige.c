/* test_daemon_gige.c - panocap end to end over the real GigE Vision protocol:
 * five Aravis camera simulators (ArvGvFakeCamera, in this test process) on
 * 127.0.0.1-5 inside a private network namespace (the test re-executes
 * itself under `unshare -rn`, capture/simulator.h; nothing is started outside
 * it), a config file with capture.source = "gige" and the five cameras by
 * address, and the real daemon as a child process (it inherits the
 * namespace):
 *   panocap --config FILE --frames 30 --output DIR/out.ts
 * Checks: exit 0, 30 decoded frames of 2040x5400, the summary agrees, and
 * each camera's picture is in its slab (the simulators show bands of the
 * photograph; every decoded slab is compared with the reference
 * demosaicing of that band, outside the moving counter and bar). The
 * simulators skip frames now and then (simulator.h), so slabs substituted
 * with a camera's previous frame are allowed: they show the same picture.
 * Then a camera address nobody answers: the daemon starts with the four
 * that answer (a warning names the absent one, its slab is mid-grey and
 * substituted in every set) and runs to the end, exit 0.
 * argv[1]: panocap, argv[2]: the photograph (capture/sample.png).
 * In a sanitizer build the simulators are 512x216 (the same checks: the
 * instrumented daemon took more than the capture's 2 s start-up window to
 * get a first frame of all five 2040x1080 streams).
 * Debugging: PC_TEST_VERBOSE=1 prints every slab's counter, PC_TEST_RECORD=
 * FILE adds --record-raw FILE to the run. */
#include "daemon_testutil.h"

#include "capture.h"
#include "debayer.h"
#include "image.h"
#include "sanitizer.h"
#include "simulator.h"

static int W = 2040, SLAB_H = 1080; /* one camera (main: smaller under a sanitizer) */
#define NCAM 5
#define H (SLAB_H * NCAM)
#define FRAMES 30
/* 10 fps: the five 2040x1080 simulators, their 110 MB/s over loopback and
 * the CPU pipeline share two cores; the daemon cannot take more anyway. */
#define FPS 10.0
/* Per slab, Y PSNR against the reference demosaicing of its band (static
 * rows only). Measured on the 2-core dev machine: min 53.2 dB (libx264 at
 * 20 Mbit/s on this smooth, upscaled photograph). A slab against another
 * camera's band: at most 13.2 dB (the negative control below). */
#define SLAB_PSNR_MIN_DB 35.0
#define SLAB_WRONG_MAX_DB 25.0
/* static rows of a slab: below the counter and demosaic radius, above the bar */
#define ROW0 16
#define ROW1 (SLAB_H - PC_FAKE_BAR_ROWS - 8)

static const char *exe;
static char dir[256];

/* The photograph scaled to cover W x H and centre-cropped (bilinear), so
 * that the simulators show it pixel for pixel. */
static uint8_t *cover(const pc_image *im)
{
    uint8_t *o = malloc((size_t)W * H * 3);
    if (!o)
        return NULL;
    double s = fmax((double)W / im->width, (double)H / im->height);
    double ox = (im->width * s - W) / 2, oy = (im->height * s - H) / 2;
    for (int y = 0; y < H; y++) {
        double sy = (y + oy + 0.5) / s - 0.5;
        int y0 = (int)floor(sy);
        double fy = sy - y0;
        int ya = y0 < 0 ? 0 : y0 >= im->height ? im->height - 1 : y0;
        int yb = y0 + 1 < 0 ? 0 : y0 + 1 >= im->height ? im->height - 1 : y0 + 1;
        for (int x = 0; x < W; x++) {
            double sx = (x + ox + 0.5) / s - 0.5;
            int x0 = (int)floor(sx);
            double fx = sx - x0;
            int xa = x0 < 0 ? 0 : x0 >= im->width ? im->width - 1 : x0;
            int xb = x0 + 1 < 0 ? 0 : x0 + 1 >= im->width ? im->width - 1 : x0 + 1;
            for (int c = 0; c < 3; c++) {
                double v = (1 - fy) * ((1 - fx) * im->rgb[ya * im->pitch + xa * 3 + c] +
                                       fx * im->rgb[ya * im->pitch + xb * 3 + c]) +
                           fy * ((1 - fx) * im->rgb[yb * im->pitch + xa * 3 + c] +
                                 fx * im->rgb[yb * im->pitch + xb * 3 + c]);
                o[((size_t)y * W + x) * 3 + c] = (uint8_t)lrint(v);
            }
        }
    }
    return o;
}

typedef struct ctx {
    uint8_t *ref_y;
    double slab_min;
    int slab_min_frame, slab_min_slab, low;
    int64_t last_cnt[NCAM];
    int counter_bad, counter_back;
    double wrong_max; /* frame 0, each slab against the next camera's band */
} ctx;

static int on_frame(void *user, int i, const AVFrame *f)
{
    ctx *c = user;
    if (f->width != W || f->height != H)
        return 0;
    for (int s = 0; s < NCAM; s++) {
        int y0 = s * SLAB_H + ROW0, n = ROW1 - ROW0;
        double q = dt_psnr(dt_sse(f->data[0], (size_t)f->linesize[0], c->ref_y, W, 0, y0, W, n), (double)W * n);
        if (q < c->slab_min) {
            c->slab_min = q;
            c->slab_min_frame = i;
            c->slab_min_slab = s;
        }
        if (i == 0) {
            int o = ((s + 1) % NCAM) * SLAB_H + ROW0;
            double se = 0;
            for (int y = 0; y < n; y++)
                se += dt_sse(f->data[0] + (size_t)(y0 + y) * f->linesize[0], 0, c->ref_y + (size_t)(o + y) * W, 0,
                             0, 0, W, 1);
            double wq = dt_psnr(se, (double)W * n);
            if (wq > c->wrong_max)
                c->wrong_max = wq;
        }
        if (q < SLAB_PSNR_MIN_DB && c->low++ < 5)
            tap_diag("frame %d slab %d: %.2f dB against its band", i, s, q);
        /* the simulator's frame counter, read back: never goes backwards
         * (a substituted slab repeats the previous frame) */
        uint64_t v = 0;
        int ok = 1;
        for (int b = 0; b < 32 && ok; b++) {
            int sum = 0;
            for (int yy = 2; yy < 6; yy++)
                for (int xx = 2; xx < 6; xx++)
                    sum += f->data[0][(size_t)(s * SLAB_H + yy) * f->linesize[0] + b * 8 + xx];
            if (sum / 16 > 180)
                v |= 1ull << b;
            else if (sum / 16 > 70)
                ok = 0;
        }
        if (!ok)
            c->counter_bad++;
        else {
            if (c->last_cnt[s] >= 0 && (int64_t)v < c->last_cnt[s] && c->counter_back++ < 5)
                tap_diag("frame %d slab %d: frame counter %llu after %lld", i, s, (unsigned long long)v,
                         (long long)c->last_cnt[s]);
            if (getenv("PC_TEST_VERBOSE"))
                tap_diag("frame %d slab %d: counter %llu", i, s, (unsigned long long)v);
            c->last_cnt[s] = (int64_t)v;
        }
    }
    return 0;
}

static void write_config(const char *path, const char *last_address)
{
    char text[2048];
    snprintf(text, sizeof text,
             "# written by test_daemon_gige\n"
             "capture = {\n"
             "  source = \"gige\";\n"
             "  fps = %.1f;\n"
             "  deadline_periods = 3.0;\n"
             "  packet_size = 8192;\n"
             "  width = %d;\n"
             "  height = %d;\n"
             "};\n"
             "cameras = (\n"
             "  { name = \"a\"; address = \"127.0.0.1\"; },\n"
             "  { name = \"b\"; address = \"127.0.0.2\"; },\n"
             "  { name = \"c\"; address = \"127.0.0.3\"; },\n"
             "  { name = \"d\"; address = \"127.0.0.4\"; },\n"
             "  { name = \"e\"; address = \"%s\"; }\n"
             ");\n"
             "debayer = { algo = \"edge\"; backend = \"cpu\"; };\n"
             "encode = { layout = \"stacked\"; };\n"
             "outputs = ( \"%s/unused.ts\" );\n"
             "daemon = { control = \"\"; stats_interval = 1.0; };\n",
             FPS, W, SLAB_H, last_address, dir);
    if (dt_write_file(path, text))
        tap_diag("cannot write %s", path);
}

int main(int argc, char **argv)
{
    char err[512] = "";
    if (argc < 3)
        return tap_skip_all("usage: test_daemon_gige PANOCAP PHOTOGRAPH");
    if (tu_sanitized()) {
        W = 512;
        SLAB_H = 216;
    }
    if (pc_netns_enter(argc, argv, NCAM, err, sizeof err) != 0)
        return tap_skip_all(err);
    dt_guard_children();
    exe = argv[1];
    tap_diag("inside a private network namespace (only lo, with 127.0.0.1-%d)", NCAM);
    if (tu_sanitized())
        tap_diag("sanitizer build: simulators of %dx%d, not 2040x1080 (same checks)", W, SLAB_H);
    if (!dt_tmpdir(dir, sizeof dir, "e2e-gige"))
        return tap_skip_all("mkdtemp failed");

    /* the picture the simulators show, and its reference demosaicing */
    pc_image im;
    if (pc_image_read(argv[2], &im, err, sizeof err)) {
        dt_rmtree(dir);
        return tap_skip_all(err);
    }
    uint8_t *rgb = cover(&im);
    pc_image_free(&im);
    char pic[300];
    snprintf(pic, sizeof pic, "%s/panorama.ppm", dir);
    uint8_t *mosaic = malloc((size_t)W * H);
    ctx c = {.slab_min = 1e9, .ref_y = malloc((size_t)W * H)};
    uint8_t *uv = malloc((size_t)W * H / 2);
    if (!rgb || !mosaic || !c.ref_y || !uv || pc_image_write_ppm(pic, rgb, (size_t)W * 3, W, H, err, sizeof err) ||
        pc_mosaic_from_rgb(rgb, (size_t)W * 3, W, H, PC_CFA_RGGB, mosaic, W, err, sizeof err)) {
        dt_rmtree(dir);
        return tap_skip_all("cannot prepare the picture");
    }
    pc_bayer b = {mosaic, W, W, H, PC_CFA_RGGB, 0};
    pc_picture ref = {.fmt = PC_FMT_NV12, .plane = {c.ref_y, uv}, .pitch = {W, W}, .width = W, .height = H};
    if (pc_ref_debayer(PC_ALGO_EDGE, &b, &ref, err, sizeof err)) {
        dt_rmtree(dir);
        return tap_skip_all(err);
    }
    free(rgb);
    free(mosaic);
    free(uv);
    for (int s = 0; s < NCAM; s++)
        c.last_cnt[s] = -1;

    pc_sim *sim = NULL;
    int rc = pc_sim_open(&sim, NCAM, W, SLAB_H, PC_CFA_RGGB, pic, err, sizeof err);
    if (!TAP_CHECK(rc == 0, "5 GigE Vision simulators (%dx%d BayerRG8) on 127.0.0.1-5: %s", W, SLAB_H,
                   rc ? err : "ok")) {
        dt_rmtree(dir);
        return tap_done();
    }
    pc_sim_set_fps_hint(sim, FPS);

    /* --- the daemon on the simulators --- */
    char conf[300], out[300];
    snprintf(conf, sizeof conf, "%s/panocap.conf", dir);
    snprintf(out, sizeof out, "%s/out.ts", dir);
    write_config(conf, "127.0.0.5");
    char *args[] = {(char *)exe, "--config", conf, "--frames", "30", "--output", out, NULL, NULL, NULL};
    if (getenv("PC_TEST_RECORD")) { /* debugging: the raw sets too */
        args[7] = "--record-raw";
        args[8] = getenv("PC_TEST_RECORD");
    }
    dt_child ch;
    uint64_t skips0 = 0;
    for (int k = 0; k < NCAM; k++)
        skips0 += pc_sim_skipped(sim, k);
    if (!TAP_CHECK(dt_spawn(&ch, dir, "panocap", args, NULL) == 0, "panocap --config FILE --frames 30 started"))
        goto done;
    rc = dt_wait(&ch, 120);
    double run_s = dt_now() - ch.started;
    uint64_t skips = 0;
    for (int k = 0; k < NCAM; k++)
        skips += pc_sim_skipped(sim, k);
    skips -= skips0;
    TAP_CHECK(rc == 0, "exit %d after %.1f s", rc, run_s);
    if (rc != 0)
        dt_diag_file("panocap stderr", ch.err, 4000);
    int opened = 1;
    for (int k = 0; k < NCAM; k++) {
        char want[64];
        snprintf(want, sizeof want, "camera %d (127.0.0.%d): ", k, k + 1);
        opened &= dt_contains(ch.err, want);
    }
    char running[128];
    snprintf(running, sizeof running, "running: 5 cameras %dx%d -> %dx%d, edge, cpu backend", W, SLAB_H, W, H);
    TAP_CHECK(opened && dt_contains(ch.err, running), "log: the 5 cameras opened by address, \"%s\"", running);
    char *sum = dt_slurp(ch.out);
    long in = -1, enc = -1, dropped = -1;
    int parsed = dt_parse_summary(sum, &in, &enc, &dropped) == 0;
    TAP_CHECK(parsed && in == FRAMES && enc == FRAMES,
              "summary: %ld frame sets in, %ld encoded, %ld dropped", in, enc, dropped);
    const char *sl = sum ? strstr(sum, "summary: ") : NULL;
    tap_diag("%.*s; the simulators skipped %llu frame times", sl ? (int)strcspn(sl, "\n") : 0, sl ? sl : "",
             (unsigned long long)skips);
    free(sum);

    dt_decoded d;
    rc = dt_decode(out, on_frame, &c, &d);
    TAP_CHECK(rc == 0 && d.frames == FRAMES && d.errors == 0, "out.ts decodes: %d frames (%s), %d errors", d.frames,
              d.codec, d.errors);
    TAP_CHECK(d.width == W && d.height == H && d.sizes_ok && d.pts_increasing,
              "every frame %dx%d, pts strictly increasing", d.width, d.height);
    TAP_CHECK(c.low == 0 && d.frames > 0,
              "each camera's band of the photograph in its slab in every frame: Y PSNR against the reference "
              "min %.2f dB (frame %d, slab %d; threshold %.0f dB)", c.slab_min, c.slab_min_frame, c.slab_min_slab,
              SLAB_PSNR_MIN_DB);
    TAP_CHECK(c.wrong_max < SLAB_WRONG_MAX_DB, "negative control: a slab against another camera's band "
              "gives at most %.2f dB (< %.0f dB)", c.wrong_max, SLAB_WRONG_MAX_DB);
    TAP_CHECK(c.counter_bad == 0 && c.counter_back == 0,
              "the simulators' frame counters read back from every slab, never going backwards (%d unreadable, "
              "%d backwards)", c.counter_bad, c.counter_back);

    /* --- the daemon stopped for 2 s (SIGSTOP: a debugger, a frozen VM) ---
     * The frame periods it slept through are counted as dropped, every
     * period gets a set or is counted (the capture's closing line: periods
     * == sets emitted), and it runs on to its 40 frames. */
    char *args3[] = {(char *)exe, "--config", conf, "--frames", "40", "--output", out, NULL};
    if (TAP_CHECK(dt_spawn(&ch, dir, "stall", args3, NULL) == 0, "panocap --frames 40 started (to be stopped)")) {
        int stopped = dt_wait_for_text(ch.err, "running: ", 60, &ch);
        dt_sleep(1.0);
        stopped = stopped && kill(ch.pid, SIGSTOP) == 0;
        dt_sleep(2.0);
        kill(ch.pid, SIGCONT);
        rc = dt_wait(&ch, 90);
        sum = dt_slurp(ch.out);
        parsed = dt_parse_summary(sum, &in, &enc, &dropped) == 0;
        char *log = dt_slurp(ch.err);
        unsigned long long periods = 0, emitted = 1;
        const char *cl = log ? strstr(log, " frame periods, ") : NULL; /* the capture's closing line */
        while (cl && cl > log && cl[-1] != ' ' && cl[-1] != '\n')
            cl--;
        int closing = cl && sscanf(cl, "%llu frame periods, %llu sets emitted", &periods, &emitted) == 2;
        /* the cameras were not at fault: no reconnection (each worker
         * sees that it did not run, not that its camera went quiet) */
        int recon = log && (strstr(log, "no frame for too long") || strstr(log, "reconnected"));
        TAP_CHECK(stopped && rc == 0 && parsed && enc == 40 && dropped >= 5 && closing && periods == emitted &&
                      !recon,
                  "stopped 2 s at 10 fps: exit %d, %ld encoded, %ld dropped (>= 5), capture counted %llu frame "
                  "periods and %llu sets, %s", rc, enc, dropped, periods, emitted,
                  recon ? "cameras reconnected" : "no camera reconnected");
        if (rc != 0 || !closing || recon)
            dt_diag_file("panocap stderr", ch.err, 3000);
        rc = dt_decode(out, NULL, NULL, &d);
        TAP_CHECK(rc == 0 && d.frames == 40 && d.errors == 0 && d.pts_increasing,
                  "... and its out.ts decodes: %d frames, %d errors, pts increasing", d.frames, d.errors);
        free(sum);
        free(log);
    }

    /* --- a camera address nobody answers: start without it --- */
    write_config(conf, "127.0.0.9");
    char *args2[] = {(char *)exe, "--config", conf, "--frames", "20", "--output", out, NULL};
    if (TAP_CHECK(dt_spawn(&ch, dir, "badcam", args2, NULL) == 0, "panocap with camera 4 at 127.0.0.9 started")) {
        rc = dt_wait(&ch, 90);
        run_s = dt_now() - ch.started;
        int named = dt_contains(ch.err, "<4>") && dt_contains(ch.err, "camera 4 (127.0.0.9)") &&
                    dt_contains(ch.err, "no GigE Vision camera answers") &&
                    dt_contains(ch.err, "4 of 5 cameras streaming");
        sum = dt_slurp(ch.out);
        long subst = -1;
        const char *sp = sum ? strstr(sum, " substituted (") : NULL;
        if (sp)
            subst = strtol(sp + 14, NULL, 10);
        parsed = dt_parse_summary(sum, &in, &enc, NULL) == 0;
        TAP_CHECK(rc == 0 && named && parsed && enc == 20 && subst >= 20,
                  "camera 4 absent at start: runs with the other four (exit %d after %.1f s), a warning names "
                  "camera 4 (127.0.0.9), %ld sets encoded, %ld slabs substituted", rc, run_s, enc, subst);
        if (rc != 0 || !named)
            dt_diag_file("panocap stderr", ch.err, 2000);
        free(sum);
    }

done:
    pc_sim_close(sim);
    free(c.ref_y);
    dt_rmtree(dir);
    return tap_done();
}
