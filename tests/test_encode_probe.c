/* test_encode_probe.c - choosing the encoder and refusing bad settings:
 *   - NVENC probe: on a machine without NVENC (no driver here; on an
 *     H100/H200 "unsupported device") the fallback is chosen and ONE
 *     warning line says why and what is used instead (caught through a
 *     pc_logger sink). With PANOCAP_TEST_CUDA_CTX=1 and CUDA built in, the
 *     probe also runs on a real CUDA context (the device machine).
 *   - pc_encoder_list names what this build and machine offer;
 *   - bad input: unknown encoder (the error lists the offer), bitrate 0
 *     or absurd, unwritable path, unknown URL scheme, unknown container,
 *     H.264 with a frame taller than 4096 -> errors naming the setting;
 *   - forced IDR (argument and request), live bitrate change (libx264) or
 *     "needs a restart" (libx265), pts bumps, frames without submit. */
#include "encode_testutil.h"

#include <dlfcn.h>

static pc_encode_config base(int w, int h)
{
    pc_encode_config cfg;
    pc_encode_config_default(&cfg);
    cfg.width = w;
    cfg.height = h;
    cfg.bitrate = 1000000;
    cfg.threads = 1;
    return cfg;
}

static int open_err(pc_encode_config *cfg, char *err, size_t n)
{
    pc_encoder *e = NULL;
    int r = pc_encoder_open(&e, cfg, err, n);
    if (!r)
        pc_encoder_close(e);
    return r;
}

static void nvenc_fallback(void *cuda_ctx, void *cuda_stream, const char *what)
{
    log_keep lk = {.lock = PTHREAD_MUTEX_INITIALIZER};
    pc_logger lg = {log_keep_sink, &lk, PC_LOG_DEBUG};
    pc_encode_config cfg = base(2040, 5400);
    cfg.log = &lg;
    cfg.cuda_ctx = cuda_ctx;
    cfg.cuda_stream = cuda_stream;
    cfg.encoder = "auto";
    char err[2048] = "";
    pc_encoder *e = NULL;
    int r = pc_encoder_open(&e, &cfg, err, sizeof err);
    if (!TAP_CHECK(r == 0, "probe (%s): auto opens an encoder: %s", what,
                   r ? err : pc_encoder_name(e)))
        return;
    const char *name = pc_encoder_name(e);
    int nv = strstr(name, "nvenc") != NULL;
    if (nv) {
        /* a machine with NVENC: nothing to fall back from */
        TAP_CHECK(log_keep_count(&lk, PC_LOG_WARNING, "NVENC", NULL) == 0,
                  "probe (%s): NVENC %s opened (zero copy: %d), no fallback line", what, name,
                  pc_encoder_zero_copy(e));
    } else {
        int lines = log_keep_count(&lk, PC_LOG_WARNING, "NVENC (hevc_nvenc) not available: ",
                                   "; using libx264");
        int all = log_keep_count(&lk, PC_LOG_WARNING, "NVENC", NULL);
        TAP_CHECK(!strcmp(name, "libx264") && lines == 1 && all == 1,
                  "probe (%s): fell back to %s with one warning line", what, name);
        for (int i = 0; i < lk.n; i++)
            if (strstr(lk.lines[i], "not available"))
                printf("# FALLBACK MESSAGE (%s): %s\n", what, lk.lines[i]);
        /* and it encodes: one frame of the full panorama */
        pattern p;
        pattern_init(&p, 2040, 5400);
        r = encode_frames(e, &p, 0, 1, (AVRational){50, 1}, 0, err, sizeof err);
        TAP_CHECK(r == 0, "probe (%s): the fallback encodes a 2040x5400 frame", what);
        pattern_free(&p);
    }
    pc_encoder_close(e);
}

static void bad_input(void)
{
    char err[4096] = "";
    pc_encode_config cfg;
    int r;

    cfg = base(320, 240);
    cfg.encoder = "nosuch264";
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_ENOTSUP && strstr(err, "'nosuch264'") && strstr(err, "libx264 (available)") &&
                  strstr(err, "hevc_nvenc (unavailable"),
              "unknown encoder: %s", err);

    cfg = base(320, 240);
    cfg.bitrate = 0;
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "bitrate 0"), "bitrate 0: %s", err);

    cfg = base(320, 240);
    cfg.bitrate = 50000000000LL;
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "bitrate 50000000000"), "bitrate 50 Gbit/s: %s", err);

    cfg = base(320, 240);
    cfg.encoder = "libx264";
    /* Outputs are checked before anything opens (pc_output_check, the same
     * check --check-config runs), so a path no file can be made at is a
     * configuration error naming it. Missing folders of a recording are
     * created (as root anything can be), so the path is one whose folder
     * can never exist: /dev/null is a file. */
    cfg.outputs[0].url = "/dev/null/panocap/rec.ts";
    cfg.n_outputs = 1;
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "/dev/null/panocap/rec.ts") && strstr(err, "is not a folder"),
              "unwritable path: %s", err);

    cfg.outputs[0].url = "/proc/panocap.ts";
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "/proc/panocap.ts") && strstr(err, "not a place for files"),
              "unwritable path in /proc: %s", err);

    cfg.outputs[0].url = "gopherx://127.0.0.1:5000";
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "unknown URL scheme 'gopherx'") && strstr(err, "udp"),
              "unknown URL scheme: %.200s...", err);

    cfg.outputs[0].url = "/tmp/panocap-test.avi";
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, ".avi"), "unknown container: %s", err);

    cfg.outputs[0].url = "udp://127.0.0.1:5000";
    cfg.outputs[0].format = "matroska";
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "MPEG-TS"), "network output as matroska: %s", err);
    cfg.outputs[0].format = NULL;

    cfg.outputs[0].url = "srt://127.0.0.1:5000";
    cfg.outputs[0].srt_passphrase = "short";
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "srt_passphrase"), "SRT passphrase too short: %s", err);
    cfg.outputs[0].srt_passphrase = NULL;

    /* H.264 NVENC cannot take 5400 rows: forced, or auto with codec h264 */
    cfg = base(2040, 5400);
    cfg.encoder = "h264_nvenc";
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "codec h264") && strstr(err, "4096") &&
                  strstr(err, "2040x5400"),
              "h264_nvenc 2040x5400: %s", err);
    cfg.encoder = NULL;
    cfg.codec = PC_CODEC_H264;
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "codec h264") && strstr(err, "4096"),
              "auto with codec h264 at 2040x5400: %s", err);
    /* but libx264 (no such limit) may be named for it */
    cfg.encoder = "libx264";
    cfg.bitrate = 20000000;
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == 0, "libx264 forced at 2040x5400 opens %s", r ? err : "");

    cfg = base(321, 240);
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "321x240"), "odd width: %s", err);

    cfg = base(320, 240);
    cfg.fps_num = 0;
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "fps"), "fps 0: %s", err);

    cfg = base(320, 240);
    cfg.encoder = "libx264";
    cfg.encoder_options = "nosuchoption=1";
    r = open_err(&cfg, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "encoder_options") && strstr(err, "nosuchoption"),
              "unknown encoder option: %s", err);

    cfg = base(320, 240);
    cfg.encoder = "libsvtav1";
    cfg.outputs[0].url = "/tmp/panocap-av1.ts";
    cfg.n_outputs = 1;
    if (encoder_built("libsvtav1")) {
        r = open_err(&cfg, err, sizeof err);
        TAP_CHECK(r == PC_EINVAL && strstr(err, "AV1") && strstr(err, ".mkv"),
                  "AV1 into .ts: %s", err);
    } else {
        tap_skip("no libsvtav1");
    }
}

typedef struct keys {
    int n, key[64];
} keys;

static void on_packet(void *u, const pc_packet_info *i)
{
    keys *k = u;
    if (k->n < 64)
        k->key[k->n] = i->keyframe;
    k->n++;
}

static void controls(void)
{
    char err[1024] = "";
    pc_encode_config cfg = base(160, 120);
    cfg.encoder = "libx264";
    cfg.gop = 1000;
    keys k = {0};
    cfg.on_packet = on_packet;
    cfg.cb_user = &k;
    pc_encoder *e;
    int r = pc_encoder_open(&e, &cfg, err, sizeof err);
    if (!TAP_CHECK(r == 0, "controls: open libx264 %s", r ? err : ""))
        return;
    r = pc_encoder_submit(e, 0, 0, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "pc_encoder_frame"), "submit without a frame: %s", err);
    pattern p;
    pattern_init(&p, 160, 120);
    pc_picture pic;
    int dev = -1;
    for (int t = 0; t < 12; t++) {
        pc_encoder_frame(e, &pic, &dev, err, sizeof err);
        pattern_fill(&p, &pic, t);
        if (t == 6)
            pc_encoder_request_idr(e);
        int64_t pts = (int64_t)t * 20000000;
        if (t == 9)
            pts = 8 * 20000000; /* not above the previous one: bumped */
        pc_encoder_submit(e, pts, t == 3, err, sizeof err);
    }
    TAP_CHECK(dev == 0 && pic.fmt == PC_FMT_NV12 && pic.pitch[0] >= 160,
              "controls: libx264 gets host NV12 frames (pitch %zu)", pic.pitch[0]);
    TAP_CHECK(k.n == 12 && k.key[0] && k.key[3] && k.key[6] && !k.key[1] && !k.key[2] &&
                  !k.key[4] && !k.key[5] && !k.key[7],
              "controls: keyframes at 0, 3 (force_idr) and 6 (request), none between");
    r = pc_encoder_set_bitrate(e, 3000000, err, sizeof err);
    TAP_CHECK(r == 0, "controls: libx264 takes a live bitrate change %s", r ? err : "");
    pc_encoder_frame(e, &pic, &dev, err, sizeof err);
    pattern_fill(&p, &pic, 12);
    pc_encoder_submit(e, 13 * 20000000LL, 0, err, sizeof err);
    pc_encoder_stats st;
    pc_encoder_stats_get(e, &st);
    TAP_CHECK(st.bitrate == 3000000 && st.pts_bumped == 1 && st.frames_in == 13 &&
                  st.keyframes == 3 && st.last_latency_ns >= 0,
              "controls: stats bitrate %lld, pts bumped %llu, frames %llu, keyframes %llu, "
              "latency %.2f ms", (long long)st.bitrate, (unsigned long long)st.pts_bumped,
              (unsigned long long)st.frames_in, (unsigned long long)st.keyframes,
              st.last_latency_ns / 1e6);
    r = pc_encoder_set_bitrate(e, 0, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "bitrate 0"), "controls: live bitrate 0: %s", err);
    pc_encoder_flush(e, err, sizeof err);
    r = pc_encoder_frame(e, &pic, &dev, err, sizeof err);
    TAP_CHECK(r == PC_EINVAL && strstr(err, "flushed"), "controls: frame after flush: %s", err);
    pc_encoder_close(e);
    pattern_free(&p);

    if (encoder_built("libx265")) {
        cfg = base(160, 120);
        cfg.encoder = "libx265";
        r = pc_encoder_open(&e, &cfg, err, sizeof err);
        if (TAP_CHECK(r == 0, "controls: open libx265 %s", r ? err : "")) {
            pc_encoder_frame(e, &pic, &dev, err, sizeof err);
            TAP_CHECK(pic.fmt == PC_FMT_I420 && pic.plane[2], "controls: libx265 gets I420 frames");
            r = pc_encoder_set_bitrate(e, 3000000, err, sizeof err);
            TAP_CHECK(r == PC_ENOTSUP && strstr(err, "restart"), "controls: libx265: %s", err);
            pc_encoder_close(e);
        }
    } else {
        tap_skip("no libx265");
    }
}

/* Frame threads keep many frames in flight: each packet must still carry
 * its own frame's capture pts and submit time. */
typedef struct inflight {
    int n, bad;
    int64_t before[64], after[64];
} inflight;

static void on_packet_inflight(void *u, const pc_packet_info *i)
{
    inflight *f = u;
    int k = f->n++;
    if (k >= 64 || i->pts_ns != (int64_t)k * 17777778 + 5 || i->submit_ns < f->before[k] ||
        i->submit_ns > f->after[k] || i->out_ns < i->submit_ns)
        f->bad++;
}

static void frames_in_flight(void)
{
    char err[1024] = "";
    pc_encode_config cfg = base(640, 480);
    cfg.encoder = "libx264";
    cfg.threads = 12;
    cfg.frame_threads = 1;
    inflight f = {0};
    cfg.on_packet = on_packet_inflight;
    cfg.cb_user = &f;
    pc_encoder *e;
    int r = pc_encoder_open(&e, &cfg, err, sizeof err);
    if (!TAP_CHECK(r == 0, "in flight: open libx264 with 12 frame threads %s", r ? err : ""))
        return;
    pattern p;
    pattern_init(&p, 640, 480);
    int most = 0;
    for (int t = 0; t < 40; t++) {
        pc_picture pic;
        int dev;
        pc_encoder_frame(e, &pic, &dev, err, sizeof err);
        pattern_fill(&p, &pic, t);
        f.before[t] = pc_now_ns();
        /* 1600 ticks of 1/90000 apart: timestamps that alias in any small
         * table indexed by pts, so only an exact per-frame record passes */
        pc_encoder_submit(e, (int64_t)t * 17777778 + 5, 0, err, sizeof err);
        f.after[t] = pc_now_ns();
        if (t + 1 - f.n > most)
            most = t + 1 - f.n;
    }
    pc_encoder_flush(e, err, sizeof err);
    pc_encoder_close(e);
    TAP_CHECK(f.n == 40 && f.bad == 0 && most > 1,
              "in flight: %d packets, up to %d frames in flight, each with its own capture pts "
              "and submit time (%d wrong)", f.n, most, f.bad);
    pattern_free(&p);
}

int main(void)
{
    av_log_set_level(AV_LOG_ERROR);
    setenv("SVT_LOG", "1", 0);
    /* the list goes to a memory stream, then out as TAP diagnostics */
    char *list = NULL;
    size_t list_len = 0;
    FILE *ls = open_memstream(&list, &list_len);
    int avail = ls ? pc_encoder_list(ls) : -1;
    if (ls)
        fclose(ls);
    TAP_CHECK(avail >= 1 && list && strstr(list, "libx264"),
              "pc_encoder_list: %d encoders open on this machine, libx264 among them", avail);
    if (list)
        tap_diag("%s", list);
    free(list);

    nvenc_fallback(NULL, NULL, "no CUDA context");
    if (getenv("PANOCAP_TEST_CUDA_CTX")) {
        /* the device machine: a real context and stream, as the daemon
         * has (driver API through dlopen: nothing to link here) */
        void *lib = dlopen("libcuda.so.1", RTLD_NOW);
        int (*init)(unsigned) = lib ? (int (*)(unsigned))dlsym(lib, "cuInit") : NULL;
        int (*dget)(int *, int) = lib ? (int (*)(int *, int))dlsym(lib, "cuDeviceGet") : NULL;
        int (*retain)(void **, int) =
            lib ? (int (*)(void **, int))dlsym(lib, "cuDevicePrimaryCtxRetain") : NULL;
        int (*setcur)(void *) = lib ? (int (*)(void *))dlsym(lib, "cuCtxSetCurrent") : NULL;
        int (*screate)(void **, unsigned) =
            lib ? (int (*)(void **, unsigned))dlsym(lib, "cuStreamCreate") : NULL;
        void *ctx = NULL, *stream = NULL;
        int dev = 0;
        if (init && dget && retain && setcur && screate && !init(0) && !dget(&dev, 0) &&
            !retain(&ctx, dev) && !setcur(ctx) && !screate(&stream, 0))
            nvenc_fallback(ctx, stream, "CUDA context of GPU 0");
        else
            tap_skip("PANOCAP_TEST_CUDA_CTX set but no CUDA driver/device");
    }
    bad_input();
    controls();
    frames_in_flight();
    return tap_done();
}
