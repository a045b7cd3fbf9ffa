/* test_daemon_e2e.c - panocap end to end, as CI runs it (CPU backend, software
 * encoder): the real executable with 5 in-process fake cameras fed the
 * bundled photograph,
 *   panocap --source fake --frames 60 --algo edge --output DIR/out.ts
 *           --record-raw DIR/raw.pcraw --stats-interval 1
 * then out.ts decoded with libavformat/libavcodec: exit 0, exactly 60 frames
 * of 2040x5400, pts strictly increasing, the summary on stdout agrees with
 * what was decoded, and each decoded frame i is raw set i of the recording
 * (the sets actually processed, in order; capture drops sets when the CPU
 * backend is slower than 50 fps) demosaiced by the reference
 * (pc_ref_debayer, edge, NV12): the fake cameras' frame counters read back
 * from the decoded picture equal the recording's, and the Y plane's PSNR is
 * above the threshold below. Two negative controls prove the comparison can
 * fail: the same frame against a different raw set (the counters and the
 * moving bar differ) and against another algorithm's output (bilinear).
 * In a sanitizer build 20 frames, not 60 (the same checks on each; the
 * instrumented pipeline and comparisons run about 1 frame a second).
 * argv[1]: the panocap executable. */
#include "daemon_testutil.h"

#include "capture.h"
#include "debayer.h"
#include "sanitizer.h"

#define W 2040
#define SLAB_H 1080
#define NCAM 5
#define H (SLAB_H * NCAM)
static int FRAMES = 60; /* frames encoded and checked (main: fewer under a sanitizer) */

/* Y-plane PSNR of the decoded frames against the reference, whole picture.
 * Measured on the 2-core dev machine with libx264 (ultrafast, zerolatency,
 * CBR 20 Mbit/s, gop 50 -- the fallback CI gets), 4 runs: min 45.45 dB
 * (frame 1, right after the I frame), mean 53.1-53.2 dB over the 60 frames
 * (the still photograph gains in the P frames). A few dB below the min. */
#define PSNR_MIN_DB 42.0
/* The moving parts of every slab (frame-counter blocks, the bar in the
 * bottom rows): against the right raw set measured min 44.5 dB; against the
 * previous raw set (other counters, the bar elsewhere) max 23.6 dB. So a
 * frame paired with the wrong set cannot pass. */
#define PSNR_MOVING_MIN_DB 40.0
#define PSNR_MOVING_WRONG_MAX_DB 30.0
/* Another algorithm (bilinear instead of edge) on the right raw set: the
 * two differ only near edges, so over the whole frame the PSNR gap is small
 * (measured: mean of frames 1, 30, 59 51.5 dB against edge, 49.4-49.5 dB
 * against bilinear; frame 1 alone 45.45 vs 45.09). The decisive measure is
 * the projection of the decoded picture onto the bilinear->edge difference,
 * t = <dec - bil, edge - bil> / |edge - bil|^2 (1 = edge, 0 = bilinear):
 * measured 0.874 .. 0.923. */
#define ALGO_PROJ_MIN 0.6
#define ALGO_GAP_MIN_DB 1.0

typedef struct ctx {
    pc_raw_reader *rr;
    pc_raw_info info;
    uint8_t *raw, *prev_y, *ref_y, *ref_uv, *bil_y, *bil_uv;
    int prev_valid;
    int64_t prev_counter[NCAM], counter[NCAM];
    int repeats; /* sets whose every slab repeats the previous set's frame (not compared) */
    int raw_ok, raw_sets, counter_frames, counter_bad, counter_unreadable;
    double psnr_min, psnr_sum, mov_min, mov_wrong_max;
    int psnr_n, mov_wrong_n, worst;
    int algo_n;
    double proj_min, algo_psnr_edge, algo_psnr_bil;
    double t_ref;
    char err[512];
} ctx;

/* Reads the fake camera's frame counter (32 blocks of 8x8, white = 1) back
 * from the decoded Y plane of slab s: block interiors, clearly dark or
 * clearly bright; -1 when a block is neither. */
static int64_t counter_from_y(const uint8_t *y, size_t pitch, int s)
{
    uint64_t v = 0;
    for (int b = 0; b < 32; b++) {
        int sum = 0;
        for (int yy = 2; yy < 6; yy++)
            for (int xx = 2; xx < 6; xx++)
                sum += y[(size_t)(s * SLAB_H + yy) * pitch + b * 8 + xx];
        int mean = sum / 16;
        if (mean > 180)
            v |= 1ull << b;
        else if (mean > 70)
            return -1;
    }
    return (int64_t)v;
}

/* SSE over the moving parts of every slab: counter rows (full 256 columns)
 * and the bar rows (full width). */
/* over the slabs in mask (bit s = slab s) */
static double moving_sse(const uint8_t *a, size_t ap, const uint8_t *b, size_t bp, unsigned mask, double *count)
{
    double se = 0;
    *count = 0;
    for (int s = 0; s < NCAM; s++) {
        if (!(mask >> s & 1))
            continue;
        se += dt_sse(a, ap, b, bp, 0, s * SLAB_H, PC_FAKE_COUNTER_COLS, PC_FAKE_COUNTER_ROWS);
        se += dt_sse(a, ap, b, bp, 0, s * SLAB_H + SLAB_H - PC_FAKE_BAR_ROWS, W, PC_FAKE_BAR_ROWS);
        *count += PC_FAKE_COUNTER_COLS * PC_FAKE_COUNTER_ROWS + (double)W * PC_FAKE_BAR_ROWS;
    }
    return se;
}

static int ref_nv12(ctx *c, pc_algo_id algo, uint8_t *y, uint8_t *uv)
{
    pc_bayer b = {c->raw, W, W, H, c->info.cfa, 0};
    pc_picture p = {.fmt = PC_FMT_NV12, .matrix = PC_MATRIX_BT709, .range = PC_RANGE_LIMITED,
                    .plane = {y, uv}, .pitch = {W, W}, .width = W, .height = H};
    return pc_ref_debayer(algo, &b, &p, c->err, sizeof c->err);
}

static int on_frame(void *user, int i, const AVFrame *f)
{
    ctx *c = user;
    if (f->width != W || f->height != H)
        return 0;
    uint64_t index;
    int64_t pts;
    uint32_t subst;
    int r = pc_raw_reader_read(c->rr, c->raw, &index, &pts, &subst, c->err, sizeof c->err);
    if (r != 0) {
        if (c->raw_ok)
            tap_diag("raw set %d: %s", i, r == PC_CAPTURE_EOF ? "end of the recording" : c->err);
        c->raw_ok = 0;
        return 1;
    }
    c->raw_sets++;
    const uint8_t *dy = f->data[0];
    size_t dp = (size_t)f->linesize[0];

    /* identity: the counters burned into the slabs */
    c->counter_frames++;
    for (int s = 0; s < NCAM; s++) {
        int64_t want = pc_fake_counter_read(c->raw + (size_t)s * W * SLAB_H, W, W, SLAB_H);
        c->counter[s] = want;
        int64_t got = counter_from_y(dy, dp, s);
        if (got < 0 || want < 0)
            c->counter_unreadable++;
        else if (got != want) {
            if (c->counter_bad++ < 5)
                tap_diag("frame %d slab %d: counter %lld decoded, %lld in raw set %d", i, s, (long long)got,
                         (long long)want, i);
        }
    }

    double t0 = dt_now();
    if (ref_nv12(c, PC_ALGO_EDGE, c->ref_y, c->ref_uv)) {
        tap_diag("reference: %s", c->err);
        c->raw_ok = 0;
        return 1;
    }
    c->t_ref += dt_now() - t0;
    double q = dt_psnr(dt_sse(dy, dp, c->ref_y, W, 0, 0, W, H), (double)W * H);
    c->psnr_sum += q;
    c->psnr_n++;
    if (q < c->psnr_min) {
        c->psnr_min = q;
        c->worst = i;
    }
    double n = 0;
    double mse_sum = moving_sse(dy, dp, c->ref_y, W, (1u << NCAM) - 1, &n);
    double mq = dt_psnr(mse_sum, n);
    if (mq < c->mov_min)
        c->mov_min = mq;
    /* The control needs different frames: a slab that repeats the previous
     * set's frame (its camera late, the slab substituted by its last frame:
     * seen under a sanitizer on a loaded machine, up to all five at once)
     * is the same picture there, so only the slabs whose frame changed are
     * compared, and a set with none is counted, not compared. */
    unsigned changed = 0;
    for (int s = 0; s < NCAM; s++)
        if (!(c->counter[s] >= 0 && c->counter[s] == c->prev_counter[s]))
            changed |= 1u << s;
    int repeat = c->prev_valid && !changed;
    c->repeats += repeat;
    if (c->prev_valid && !repeat) {
        double wse = moving_sse(dy, dp, c->prev_y, W, changed, &n);
        double wq = dt_psnr(wse, n);
        if (wq > c->mov_wrong_max)
            c->mov_wrong_max = wq;
        c->mov_wrong_n++;
    }

    /* wrong algorithm, on three frames (the reference costs ~1 s a frame) */
    if (i == 1 || i == FRAMES / 2 || i == FRAMES - 1) {
        if (ref_nv12(c, PC_ALGO_BILINEAR, c->bil_y, c->bil_uv) == 0) {
            /* t = <dec - bil, edge - bil> / |edge - bil|^2 */
            double num = 0, den = 0, se_b = 0;
            for (int y = 0; y < H; y++) {
                const uint8_t *a = dy + (size_t)y * dp, *e = c->ref_y + (size_t)y * W, *b = c->bil_y + (size_t)y * W;
                for (int x = 0; x < W; x++) {
                    double d = e[x] - b[x];
                    num += (a[x] - b[x]) * d;
                    den += d * d;
                    se_b += (a[x] - b[x]) * (a[x] - b[x]);
                }
            }
            double t = den > 0 ? num / den : 0;
            double qb = dt_psnr(se_b, (double)W * H);
            tap_diag("frame %d: PSNR %.2f dB against edge, %.2f dB against bilinear; projection onto "
                     "bilinear->edge %.3f", i, q, qb, t);
            if (c->algo_n == 0 || t < c->proj_min)
                c->proj_min = t;
            c->algo_psnr_edge += q;
            c->algo_psnr_bil += qb;
            c->algo_n++;
        } else
            tap_diag("reference bilinear: %s", c->err);
    }
    uint8_t *tmp = c->prev_y;
    c->prev_y = c->ref_y;
    c->ref_y = tmp;
    c->prev_valid = 1;
    memcpy(c->prev_counter, c->counter, sizeof c->counter);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_e2e PANOCAP");
    dt_guard_children();
    char dir[256];
    if (!dt_tmpdir(dir, sizeof dir, "e2e"))
        return tap_skip_all("mkdtemp failed");
    char out[300], raw[300];
    snprintf(out, sizeof out, "%s/out.ts", dir);
    snprintf(raw, sizeof raw, "%s/raw.pcraw", dir);

    if (tu_sanitized()) {
        FRAMES = 20;
        tap_diag("sanitizer build: %d frames, not 60 (same checks)", FRAMES);
    }
    char frames[16];
    snprintf(frames, sizeof frames, "%d", FRAMES);
    char *args[] = {argv[1], "--source", "fake", "--frames", frames, "--algo", "edge", "--output", out,
                    "--record-raw", raw, "--stats-interval", "1", "--control", "", "-s", "encode.layout=stacked", NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "panocap", args, NULL) == 0, "panocap started"))
        return tap_done();
    int rc = dt_wait(&ch, 150);
    double run_s = dt_now() - ch.started;
    char *sum = dt_slurp(ch.out);
    TAP_CHECK(rc == 0, "panocap --source fake --frames %d --algo edge ... exited %d after %.1f s", FRAMES, rc,
              run_s);
    if (rc != 0)
        dt_diag_file("panocap stderr", ch.err, 4000);
    long in = -1, enc = -1, dropped = -1;
    int sum_ok = dt_parse_summary(sum, &in, &enc, &dropped) == 0;
    TAP_CHECK(sum_ok && in == FRAMES && enc == FRAMES,
              "summary on stdout: %ld frame sets in, %ld encoded (%ld dropped by capture while the CPU "
              "backend was busy)", in, enc, dropped);
    if (!sum_ok)
        tap_diag("stdout: %s", sum);
    char want_out[400];
    snprintf(want_out, sizeof want_out, "output 0 %s: %d written, 0 dropped, 0 errors", out, FRAMES);
    TAP_CHECK(sum && strstr(sum, want_out), "summary: \"%s\"", want_out);
    TAP_CHECK(dt_contains(ch.err, "<6>edge/cpu |"), "status lines on stderr with a <6> priority");
    TAP_CHECK(dt_contains(ch.err, "<5>running: 5 cameras 2040x1080 -> 2040x5400, edge, cpu backend") &&
                  !dt_contains(ch.err, "synthetic picture"),
              "log: 5 fake cameras showing the bundled photograph, 2040x5400, edge, CPU backend");

    ctx c = {.psnr_min = 1e9, .mov_min = 1e9, .raw_ok = 1};
    rc = pc_raw_reader_open(&c.rr, raw, &c.info, c.err, sizeof c.err);
    TAP_CHECK(rc == 0 && c.info.n_sets == (uint64_t)FRAMES && c.info.width == W && c.info.height == SLAB_H &&
                  c.info.n_cameras == NCAM,
              "--record-raw: %llu sets of %d x %dx%d %s (%s)", (unsigned long long)c.info.n_sets,
              c.info.n_cameras, c.info.width, c.info.height, rc == 0 ? pc_cfa_name(c.info.cfa) : "-",
              rc ? c.err : "ok");
    if (rc != 0) {
        free(sum);
        dt_rmtree(dir);
        return tap_done();
    }
    size_t ysz = (size_t)W * H;
    c.raw = malloc(ysz);
    c.prev_y = malloc(ysz);
    c.ref_y = malloc(ysz);
    c.ref_uv = malloc(ysz / 2);
    c.bil_y = malloc(ysz);
    c.bil_uv = malloc(ysz / 2);
    if (!c.raw || !c.prev_y || !c.ref_y || !c.ref_uv || !c.bil_y || !c.bil_uv)
        return tap_skip_all("out of memory");

    double t0 = dt_now();
    dt_decoded d;
    rc = dt_decode(out, on_frame, &c, &d);
    double dec_s = dt_now() - t0;
    pc_raw_reader_close(c.rr);

    TAP_CHECK(rc == 0 && d.frames == FRAMES && d.errors == 0,
              "out.ts decodes (%s): %d frames, %d decode errors", d.codec, d.frames, d.errors);
    TAP_CHECK(d.width == W && d.height == H && d.sizes_ok, "every frame %dx%d", d.width, d.height);
    TAP_CHECK(d.pts_increasing && d.frames > 1, "pts strictly increasing (%lld .. %lld in 1/%d s)",
              (long long)d.first_pts, (long long)d.last_pts, d.tb.den);
    TAP_CHECK(d.frames == enc, "decoded frames = the summary's encoded count (%d, %ld)", d.frames, enc);
    TAP_CHECK(c.raw_ok && c.raw_sets == d.frames, "one raw set per decoded frame (%d sets read)", c.raw_sets);
    TAP_CHECK(c.counter_frames == FRAMES && c.counter_bad == 0 && c.counter_unreadable == 0,
              "frame i is raw set i: all %d frame counters read from the decoded pictures match the "
              "recording (%d mismatched, %d unreadable)", c.counter_frames * NCAM, c.counter_bad,
              c.counter_unreadable);
    double mean = c.psnr_n ? c.psnr_sum / c.psnr_n : 0;
    TAP_CHECK(c.psnr_n == FRAMES && c.psnr_min > PSNR_MIN_DB,
              "picture = raw set demosaiced by the reference (edge, NV12): Y PSNR min %.2f dB (frame %d), "
              "mean %.2f dB over %d frames (threshold %.1f dB)", c.psnr_min, c.worst, mean, c.psnr_n,
              PSNR_MIN_DB);
    TAP_CHECK(c.mov_wrong_n == FRAMES - 1 - c.repeats && c.mov_wrong_n >= (FRAMES - 1) / 2 &&
                  c.mov_min > PSNR_MOVING_MIN_DB && c.mov_wrong_max < PSNR_MOVING_WRONG_MAX_DB,
              "mismatch detected: moving parts %.2f dB min against the right raw set, %.2f dB max against "
              "the previous one over %d pairs (%d repeated sets not compared; thresholds %.0f / %.0f dB)",
              c.mov_min, c.mov_wrong_max, c.mov_wrong_n, c.repeats, PSNR_MOVING_MIN_DB, PSNR_MOVING_WRONG_MAX_DB);
    double pe = c.algo_n ? c.algo_psnr_edge / c.algo_n : 0, pb = c.algo_n ? c.algo_psnr_bil / c.algo_n : 0;
    TAP_CHECK(c.algo_n == 3 && c.proj_min > ALGO_PROJ_MIN && pe > pb + ALGO_GAP_MIN_DB,
              "wrong algorithm detected: %.2f dB against bilinear, %.2f dB against edge (mean of 3 frames, "
              "gap > %.1f dB); projection onto the bilinear->edge difference min %.3f (> %.1f)", pb, pe,
              ALGO_GAP_MIN_DB, c.proj_min, ALGO_PROJ_MIN);
    tap_diag("timings: panocap %.1f s, decode + reference %.1f s (reference %.1f s)", run_s, dec_s, c.t_ref);

    free(c.raw);
    free(c.prev_y);
    free(c.ref_y);
    free(c.ref_uv);
    free(c.bil_y);
    free(c.bil_uv);
    free(sum);
    dt_rmtree(dir);
    return tap_done();
}
