/* test_encode_sw.c - every software encoder this FFmpeg has (libx264,
 * libx265, libsvtav1) encodes the moving pattern at a small size and at
 * the full 2040x5400 panorama; a real libavformat/libavcodec decoder reads
 * the recording back: frame count, size, timestamps (increasing, one frame
 * at the nominal rate apart), PSNR above a stated threshold, and the VUI
 * colour signalling. Also .mp4/.mkv written side by side with a .ts and
 * closed cleanly are finalised (trailer) and play, and the per-packet and
 * per-write callbacks see the capture timestamps. */
#include "encode_testutil.h"

#include <sys/stat.h>

/* Thresholds (all planes together): the pattern is smooth with one
 * sharp-edged box; at these bitrates every encoder clears them with a
 * margin of several dB (see the diag lines for the measured values). */
#define PSNR_SMALL 40.0
#define PSNR_FULL 35.0

typedef struct cb_count {
    int packets, written[4];
    int64_t first_pts_ns, last_pts_ns;
    int pts_match;
    int64_t expect_base, step;
} cb_count;

static void on_packet(void *u, const pc_packet_info *i)
{
    cb_count *c = u;
    if ((i->pts_ns - c->expect_base) % c->step != 0)
        c->pts_match = 0;
    if (i->out_ns < i->submit_ns)
        c->pts_match = 0;
    c->packets++;
    c->last_pts_ns = i->pts_ns;
}

static void on_written(void *u, int out, int64_t pts_ns, int64_t t)
{
    cb_count *c = u;
    if (out >= 0 && out < 4)
        __atomic_add_fetch(&c->written[out], 1, __ATOMIC_RELAXED);
}

static void run_one(const char *dir, const char *enc, int w, int h, int frames, int64_t bitrate,
                    const char *ext, double thr, pc_matrix mx, pc_range rg)
{
    char path[512], err[1024];
    snprintf(path, sizeof path, "%s/%s-%dx%d.%s", dir, enc, w, h, ext);
    log_keep lk = {.lock = PTHREAD_MUTEX_INITIALIZER};
    pc_logger lg = {log_keep_sink, &lk, PC_LOG_INFO};
    pc_encode_config cfg;
    pc_encode_config_default(&cfg);
    cfg.width = w;
    cfg.height = h;
    cfg.encoder = enc;
    cfg.bitrate = bitrate;
    cfg.threads = 2;
    cfg.matrix = mx;
    cfg.range = rg;
    cfg.outputs[0].url = path;
    cfg.n_outputs = 1;
    cfg.log = &lg;
    cb_count cc = {.pts_match = 1, .expect_base = 1000000000LL * 3600, .step = 20000000};
    cfg.on_packet = on_packet;
    cfg.on_written = on_written;
    cfg.cb_user = &cc;
    pc_encoder *e = NULL;
    int64_t t0 = pc_now_ns();
    int r = pc_encoder_open(&e, &cfg, err, sizeof err);
    if (!TAP_CHECK(r == 0, "%s %dx%d: open (%s)", enc, w, h, r ? err : pc_encoder_codec(e)))
        return;
    pattern p;
    pattern_init(&p, w, h);
    r = encode_frames(e, &p, 0, frames, (AVRational){50, 1}, cc.expect_base, err, sizeof err);
    TAP_CHECK(r == 0, "%s %dx%d: %d frames submitted%s%s", enc, w, h, frames, r ? ": " : "",
              r ? err : "");
    r = pc_encoder_flush(e, err, sizeof err);
    TAP_CHECK(r == 0, "%s: flush %s", enc, r ? err : "");
    pc_encoder_stats st;
    pc_encoder_stats_get(e, &st);
    pc_encoder_close(e);
    double secs = (pc_now_ns() - t0) / 1e9;
    TAP_CHECK(st.frames_in == (uint64_t)frames && st.packets_out == (uint64_t)frames,
              "%s: stats frames_in %llu packets_out %llu", enc,
              (unsigned long long)st.frames_in, (unsigned long long)st.packets_out);
    TAP_CHECK(cc.packets == frames && cc.pts_match && cc.written[0] == frames,
              "%s: callbacks: %d packets with capture pts, %d written", enc, cc.packets,
              cc.written[0]);

    dec_result d;
    r = decode_check(path, NULL, &p, (AVRational){50, 1}, 0, &d);
    TAP_CHECK(r == 0, "%s: %s opens and decodes (%s)", enc, path, d.codec);
    TAP_CHECK(d.frames == frames && d.errors == 0, "%s: decoded %d of %d frames, %d errors", enc,
              d.frames, frames, d.errors);
    TAP_CHECK(d.width == w && d.height == h, "%s: decoded size %dx%d", enc, d.width, d.height);
    int incr = 1;
    for (int i = 1; i < d.frames && i < DEC_MAX; i++)
        if (d.pts[i] <= d.pts[i - 1])
            incr = 0;
    int idx_ok = 1;
    for (int i = 0; i < d.frames && i < DEC_MAX; i++)
        if (d.index[i] != i)
            idx_ok = 0;
    TAP_CHECK(incr && d.spacing_ok && idx_ok,
              "%s: pts increasing, one frame (%d/%d s) apart at 50 fps", enc, d.tb.num, d.tb.den);
    TAP_CHECK(d.psnr_min >= thr, "%s %dx%d: PSNR min %.2f dB avg %.2f dB >= %.1f dB", enc, w, h,
              d.psnr_min, d.psnr_avg, thr);
    tap_diag("%s %dx%d: %d frames in %.2f s (open+encode+close), %.1f kB", enc, w, h, frames,
             secs, st.bytes_out / 1024.0);
    enum AVColorRange er = rg == PC_RANGE_FULL ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    enum AVColorSpace es = mx == PC_MATRIX_BT601 ? AVCOL_SPC_SMPTE170M : AVCOL_SPC_BT709;
    /* .ts: read from the bitstream's VUI; .mkv: the container's colour
     * elements (FFmpeg 5.1's libsvtav1 wrapper passes none to SVT) */
    TAP_CHECK(d.range == er && d.space == es && d.loc == AVCHROMA_LOC_CENTER,
              "%s (%s): signalled range %s, matrix %s, chroma location %s", enc, ext,
              av_color_range_name(d.range), av_color_space_name(d.space),
              av_chroma_location_name(d.loc));
    pattern_free(&p);
}

/* .ts + .mkv + .mp4 + null from one encoder: the containers that need a
 * trailer have it after a clean close and play. */
static void containers(const char *dir)
{
    char ts[512], mkv[512], mp4[512], err[1024];
    snprintf(ts, sizeof ts, "%s/multi.ts", dir);
    snprintf(mkv, sizeof mkv, "%s/multi.mkv", dir);
    snprintf(mp4, sizeof mp4, "%s/multi.mp4", dir);
    pc_encode_config cfg;
    pc_encode_config_default(&cfg);
    cfg.width = 320;
    cfg.height = 240;
    cfg.encoder = "libx264";
    cfg.bitrate = 2000000;
    cfg.threads = 1;
    const char *urls[4] = {ts, mkv, mp4, "null"};
    for (int i = 0; i < 4; i++)
        cfg.outputs[i].url = urls[i];
    cfg.n_outputs = 4;
    cb_count cc = {.pts_match = 1, .expect_base = 0, .step = 20000000};
    cfg.on_written = on_written;
    cfg.cb_user = &cc;
    pc_encoder *e;
    int r = pc_encoder_open(&e, &cfg, err, sizeof err);
    if (!TAP_CHECK(r == 0, "containers: open .ts .mkv .mp4 null: %s", r ? err : "ok"))
        return;
    pattern p;
    pattern_init(&p, 320, 240);
    const int N = 60;
    r = encode_frames(e, &p, 0, N, (AVRational){50, 1}, 0, err, sizeof err);
    TAP_CHECK(r == 0, "containers: %d frames", N);
    pc_encoder_close(e);
    TAP_CHECK(cc.written[0] == N && cc.written[1] == N && cc.written[2] == N && cc.written[3] == N,
              "containers: every output wrote %d packets (%d %d %d %d)", N, cc.written[0],
              cc.written[1], cc.written[2], cc.written[3]);
    for (int i = 0; i < 3; i++) {
        AVFormatContext *ic = NULL;
        int ok = avformat_open_input(&ic, urls[i], NULL, NULL) == 0 &&
                 avformat_find_stream_info(ic, NULL) >= 0;
        double dur = ok && ic->duration > 0 ? ic->duration / (double)AV_TIME_BASE : 0;
        if (ic)
            avformat_close_input(&ic);
        dec_result d;
        r = decode_check(urls[i], NULL, &p, (AVRational){50, 1}, 0, &d);
        TAP_CHECK(ok && r == 0 && d.frames == N && d.psnr_min > PSNR_SMALL && d.spacing_ok,
                  "containers: %s plays: %d frames, duration %.2f s, PSNR min %.1f", urls[i],
                  d.frames, dur, d.psnr_min);
        if (i > 0)
            TAP_CHECK(dur > 1.1 && dur < 1.3, "containers: %s has its index/trailer (duration %.2f s)",
                      urls[i], dur);
    }
    /* the mp4 index (moov) is written by the trailer */
    FILE *f = fopen(mp4, "rb");
    char buf[1 << 16];
    size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    int moov = 0;
    for (size_t i = 0; i + 4 < got; i++)
        if (!memcmp(buf + i, "moov", 4))
            moov = 1;
    struct stat sb;
    if (!moov && stat(mp4, &sb) == 0 && sb.st_size > (off_t)sizeof buf) {
        f = fopen(mp4, "rb");
        fseek(f, -(long)sizeof buf, SEEK_END);
        got = fread(buf, 1, sizeof buf, f);
        fclose(f);
        for (size_t i = 0; i + 4 < got; i++)
            if (!memcmp(buf + i, "moov", 4))
                moov = 1;
    }
    TAP_CHECK(moov, "containers: .mp4 has its moov box (finalised)");
    pattern_free(&p);
}

int main(void)
{
    char dir[256];
    if (!test_tmpdir(dir, sizeof dir, "encsw"))
        return tap_skip_all("cannot make a temp dir");
    setenv("SVT_LOG", "1", 0); /* SVT-AV1: errors only */
    av_log_set_level(AV_LOG_ERROR);

    struct {
        const char *name, *ext;
        int full_frames;
    } encs[] = {
        {"libx264", "ts", 4},
        {"libx265", "ts", 3},
        {"libsvtav1", "mkv", 3},
    };
    for (size_t i = 0; i < sizeof encs / sizeof *encs; i++) {
        if (!encoder_built(encs[i].name)) {
            tap_skip(encs[i].name);
            continue;
        }
        run_one(dir, encs[i].name, 320, 240, 30, 2000000, encs[i].ext, PSNR_SMALL,
                PC_MATRIX_BT709, PC_RANGE_LIMITED);
        run_one(dir, encs[i].name, 2040, 5400, encs[i].full_frames, 20000000, encs[i].ext,
                PSNR_FULL, PC_MATRIX_BT709, PC_RANGE_LIMITED);
    }
    /* the other matrix and range are signalled too */
    if (encoder_built("libx264"))
        run_one(dir, "libx264", 64, 48, 10, 500000, "ts", 30.0, PC_MATRIX_BT601, PC_RANGE_FULL);
    if (encoder_built("libx265"))
        run_one(dir, "libx265", 64, 48, 10, 500000, "mkv", 30.0, PC_MATRIX_BT601, PC_RANGE_FULL);
    if (encoder_built("libx264"))
        containers(dir);
    /* a picture inside 16384 a side but over libavcodec's area: refused by
     * the encoder's own check (the same limit the configuration checks,
     * encode_limits.h), before libavcodec's "Picture size ... is invalid" */
    {
        pc_encode_config cfg;
        pc_encode_config_default(&cfg);
        cfg.width = cfg.height = 16384;
        cfg.encoder = "libx264";
        cfg.bitrate = 2000000;
        cfg.outputs[0].url = "null";
        cfg.n_outputs = 1;
        pc_encoder *e = NULL;
        char err[1024] = "";
        int r = pc_encoder_open(&e, &cfg, err, sizeof err);
        TAP_CHECK(r != 0 && strstr(err, "16384x16384") && strstr(err, "area libavcodec opens") &&
                      strstr(err, "at most 16128 high") && pc_encode_area_ok(16384, 16128) &&
                      !pc_encode_area_ok(16384, 16130) && pc_encode_area_ok(16254, 16254) &&
                      !pc_encode_area_ok(16256, 16256),
                  "16384x16384: refused, over the area libavcodec opens (%s)", err);
        if (r == 0)
            pc_encoder_close(e);
    }

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
    return tap_done();
}
