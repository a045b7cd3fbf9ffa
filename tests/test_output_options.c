/* test_output_options.c - outputs[].options reach libavformat, and what an
 * output can never open is refused before anything is opened:
 *   - pc_output_check refuses bad ports and hosts (udp://127.0.0.1:99999,
 *     udp://:5000, udp://127.0.0.1, srt://host:abc), a block device, a
 *     directory or a place where no file can be made (/proc) as a
 *     recording, unknown option keys and bad values; missing folders are
 *     made when the recording opens;
 *   - UDP with options "pkt_size=376": every datagram on the wire is at
 *     most 376 bytes and most are exactly 376 (the default is 1316);
 *   - SRT with options "mode=listener,passphrase=...": a caller without
 *     the passphrase and one with a wrong one get nothing, the caller with
 *     the right one decodes the stream;
 *   - RTMP: rtmp://HOST[:PORT]/APP/KEY checked (host, key, FLV only,
 *     H.264 only), and no message shows the stream key: pc_url_mask on
 *     RTMP keys, passwords and SRT passphrases;
 *   - an SRT caller whose peer never answers keeps failing and retrying:
 *     FFmpeg's own error line is logged at error level once, not on every
 *     retry.
 * Everything stays on 127.0.0.1 and in a temp dir. */
#include "encode_testutil.h"
#include "encode_internal.h"
#include "urlmask.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static const AVRational FPS = {50, 1};

static pc_encode_config small_cfg(void)
{
    pc_encode_config cfg;
    pc_encode_config_default(&cfg);
    cfg.width = 320;
    cfg.height = 240;
    cfg.encoder = "libx264";
    cfg.bitrate = 1500000;
    cfg.threads = 1;
    cfg.gop = 25;
    return cfg;
}

static int check_url(const char *url, const char *options, char *err, size_t n)
{
    pc_output_config oc = {.url = url, .options = options};
    err[0] = '\0';
    return pc_output_check(0, &oc, err, n);
}

static void refused(const char *url, const char *options, const char *want)
{
    char err[512] = "";
    int r = check_url(url, options, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, want), "check refuses %s%s%s: %s", url,
              options ? " with options " : "", options ? options : "", err);
}

static void masked(const char *url, const char *want)
{
    char m[512];
    pc_url_mask(url, m, sizeof m);
    TAP_CHECK(!strcmp(m, want), "pc_url_mask(%s) = %s (want %s)", url, m, want);
}

static void rtmp_checks(void)
{
    const char *key = "s3cr3t-StreamKey-42";
    masked("rtmp://127.0.0.1/live/s3cr3t-StreamKey-42", "rtmp://127.0.0.1/live/****");
    masked("rtmps://a.rtmp.youtube.com:443/live2/abcd-efgh-ijkl?backup=1", "rtmps://a.rtmp.youtube.com:443/live2/****");
    masked("RTMP://h/app/a/b", "RTMP://h/app/****");
    masked("rtmp://h/app", "rtmp://h/app");
    masked("srt://h:9000?mode=caller&passphrase=0123456789&latency=20",
           "srt://h:9000?mode=caller&passphrase=****&latency=20");
    masked("udp://user:pw@h:5000", "udp://user:****@h:5000");
    masked("/rec/a.ts", "/rec/a.ts");
    masked("null", "null");
    char text[256];
    snprintf(text, sizeof text, "x 'rtmp://h/live/%s' y %s z", key, key);
    pc_url_redact(text, sizeof text, "rtmp://h/live/s3cr3t-StreamKey-42");
    TAP_CHECK(!strstr(text, key) && !strcmp(text, "x 'rtmp://h/live/****' y **** z"),
              "pc_url_redact masks the URL and the bare key: %s", text);

    char err[512] = "";
    int r = check_url("rtmp://127.0.0.1/live/s3cr3t-StreamKey-42", NULL, err, sizeof err);
    TAP_CHECK(r == 0, "check accepts rtmp://127.0.0.1/live/KEY (no port: 1935) %s", err);
    r = check_url("rtmp://127.0.0.1:19350/live/s3cr3t-StreamKey-42", NULL, err, sizeof err);
    TAP_CHECK(r == 0, "check accepts rtmp://127.0.0.1:19350/live/KEY %s", err);
    r = check_url("rtmps://a.rtmp.youtube.com/live2/s3cr3t-StreamKey-42", NULL, err, sizeof err);
    TAP_CHECK(r == 0, "check accepts rtmps://HOST/APP/KEY %s", err);
    refused("rtmp://127.0.0.1/live", NULL, "no application and stream key");
    refused("rtmp:///live/key", NULL, "no host");
    refused("rtmp://127.0.0.1:0/live/key", NULL, "1..65535");
    pc_output_config oc = {.url = "rtmp://127.0.0.1/live/s3cr3t-StreamKey-42", .format = "mpegts"};
    r = pc_output_check(0, &oc, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "RTMP carries FLV") && !strstr(err, key) && strstr(err, "live/****"),
              "check refuses MPEG-TS over RTMP, key masked: %s", err);
    oc.format = NULL;
    r = pc_out_check(2, &oc, AV_CODEC_ID_HEVC, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "output 2") && strstr(err, "H.264 only") && strstr(err, "hevc") &&
              !strstr(err, key) && strstr(err, "rtmp://127.0.0.1/live/****"),
              "an HEVC picture to RTMP is refused naming the output, key masked: %s", err);
    err[0] = '\0';
    r = pc_out_check(0, &oc, AV_CODEC_ID_H264, err, sizeof err);
    TAP_CHECK(r == 0, "an H.264 picture to RTMP is accepted %s", err);
    r = check_url("rtmp://127.0.0.1/live/s3cr3t-StreamKey-42", "rtmp_live=nonsense", err, sizeof err);
    TAP_CHECK(r != 0 && !strstr(err, key), "a bad RTMP option is refused, key masked: %s", err);
}

static void checks(const char *dir)
{
    char err[512] = "", path[512];
    refused("udp://127.0.0.1:99999", NULL, "1..65535");
    refused("udp://:5000", NULL, "no host");
    refused("udp://127.0.0.1", NULL, "no port");
    refused("srt://host:abc", NULL, "not a number");
    refused("/proc/no/such/folder/x.ts", NULL, "cannot create a file in the folder /proc");
    refused("/proc/x.ts", NULL, "cannot create a file");
    snprintf(path, sizeof path, "%s/a/b/x.ts", dir);
    int r0 = check_url(path, NULL, err, sizeof err);
    TAP_CHECK(r0 == 0, "check accepts a recording in folders still to be made (%s) %s", path, err);
    refused(dir, NULL, "directory");
    snprintf(path, sizeof path, "%s/blk", dir);
    if (mknod(path, S_IFBLK | 0600, makedev(7, 0)) == 0)
        refused(path, NULL, "block device");
    else
        tap_skip("cannot make a block device node here");
    refused("udp://127.0.0.1:5000", "pkt_size", "not key=value");
    refused("udp://127.0.0.1:5000", "no_such_option=1", "not an option");
    refused("udp://127.0.0.1:5000", "pkt_size=abc", "not a valid value");
    snprintf(path, sizeof path, "%s/live.m3u8", dir);
    refused(path, "hls_list_size=-3", "not a valid value");
    int r = check_url(path, "hls_list_size=5,hls_time=1", err, sizeof err);
    TAP_CHECK(r == 0, "check accepts HLS options hls_list_size=5,hls_time=1 %s", err);
    r = check_url("udp://[::1]:5000", "pkt_size=376", err, sizeof err);
    TAP_CHECK(r == 0, "check accepts udp://[::1]:5000 with pkt_size=376 %s", err);
    void *opaque = NULL;
    const char *pr;
    int have_srt = 0;
    while ((pr = avio_enum_protocols(&opaque, 1)))
        have_srt |= !strcmp(pr, "srt");
    if (have_srt) {
        refused("srt://127.0.0.1:9000", "passphrase=short", "10 to 79");
        refused("srt://127.0.0.1:9000", "mode=server", "not a valid value");
        r = check_url("srt://:9000", "mode=listener,passphrase=0123456789ab", err, sizeof err);
        TAP_CHECK(r == 0, "check accepts an SRT listener without a host %s", err);
    } else {
        tap_skip("this FFmpeg has no SRT");
    }
}

/* --- UDP: pkt_size seen on the wire ---------------------------------- */
static void udp_pkt_size(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rcv = 8 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    socklen_t l = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &l)) {
        TAP_CHECK(0, "udp: bind 127.0.0.1");
        close(fd);
        return;
    }
    char url[128], err[512];
    snprintf(url, sizeof url, "udp://127.0.0.1:%d", ntohs(a.sin_port));
    pc_encode_config cfg = small_cfg();
    cfg.outputs[0].url = url;
    cfg.outputs[0].options = "pkt_size=376";
    cfg.n_outputs = 1;
    pc_encoder *e;
    int r = pc_encoder_open(&e, &cfg, err, sizeof err);
    if (!TAP_CHECK(r == 0, "udp: open %s with pkt_size=376 %s", url, r ? err : "")) {
        close(fd);
        return;
    }
    pattern p;
    pattern_init(&p, 320, 240);
    r = encode_frames(e, &p, 0, 50, FPS, 0, err, sizeof err);
    pc_encoder_close(e);
    pattern_free(&p);
    int dgrams = 0, over = 0, exact = 0;
    uint8_t dg[65536];
    struct pollfd pfd = {fd, POLLIN, 0};
    while (poll(&pfd, 1, 500) > 0) {
        ssize_t k = recv(fd, dg, sizeof dg, 0);
        if (k <= 0)
            break;
        dgrams++;
        over += k > 376;
        exact += k == 376;
    }
    close(fd);
    TAP_CHECK(r == 0 && dgrams > 0 && over == 0 && exact > dgrams / 2,
              "udp: %d datagrams, none over 376 bytes, %d of exactly 376 (pkt_size from options)",
              dgrams, exact);
}

/* --- SRT: the passphrase from options encrypts ----------------------- */
typedef struct srt_reader {
    char url[256];
    dec_result d;
    int r;         /* 0 decoded, -10 could not connect */
    int tries;     /* connection attempts, 100 ms apart */
    pattern *p;
    atomic_int joined, done; /* connected; finished (decoded or gave up) */
} srt_reader;

static void *srt_thread(void *arg)
{
    srt_reader *s = arg;
    int r = -1;
    for (int i = 0; i < s->tries && r < 0; i++) {
        AVFormatContext *ic = avformat_alloc_context();
        AVDictionary *o = NULL;
        av_dict_set(&o, "timeout", "2000000", 0); /* us: connect and read */
        r = avformat_open_input(&ic, s->url, av_find_input_format("mpegts"), &o);
        av_dict_free(&o);
        if (r >= 0) {
            atomic_store(&s->joined, 1);
            s->r = decode_check(NULL, ic, s->p, FPS, -1, &s->d);
            avformat_close_input(&ic);
            atomic_store(&s->done, 1);
            return NULL;
        }
        usleep(100000);
    }
    s->r = -10;
    atomic_store(&s->done, 1);
    return NULL;
}

/* Starts a listener with the passphrase in options, one caller with
 * caller_args; frames paced at 50 fps until 150 after the caller joined
 * (how long it takes to join is the machine's speed), or until it gave up
 * (at least 150; bounded at 60 s). */
static void srt_run(int port, const char *caller_args, int tries, srt_reader *s, pattern *pr)
{
    char url[128], opts[256], err[512];
    snprintf(url, sizeof url, "srt://127.0.0.1:%d", port);
    snprintf(opts, sizeof opts, "mode=listener,passphrase=panocap-secret-1234,latency=500000");
    pc_encode_config cfg = small_cfg();
    cfg.outputs[0].url = url;
    cfg.outputs[0].options = opts;
    cfg.n_outputs = 1;
    memset(s, 0, sizeof *s);
    s->p = pr;
    s->r = -1;
    s->tries = tries;
    snprintf(s->url, sizeof s->url, "srt://127.0.0.1:%d?mode=caller&latency=500000%s", port,
             caller_args);
    pc_encoder *e;
    int r = pc_encoder_open(&e, &cfg, err, sizeof err);
    if (!TAP_CHECK(r == 0, "srt: open listener %s %s", url, r ? err : ""))
        return;
    pattern p;
    pattern_init(&p, 320, 240);
    pthread_t th;
    pthread_create(&th, NULL, srt_thread, s);
    int64_t t0 = pc_now_ns();
    int end = 150, joined = 0;
    for (int t = 0; t < end && !r; t++) {
        if (!joined && atomic_load(&s->joined)) {
            joined = 1;
            end = t + 150;
        } else if (!joined && t == end - 1 && !atomic_load(&s->done) && pc_now_ns() - t0 < 60000000000LL) {
            end++; /* the caller is still trying */
        }
        r = encode_frames(e, &p, t, 1, FPS, 0, err, sizeof err);
        int64_t due = t0 + (int64_t)(t + 1) * 20000000, now = pc_now_ns();
        if (due > now)
            usleep((useconds_t)((due - now) / 1000));
    }
    pthread_join(th, NULL);
    pc_encoder_close(e);
    pattern_free(&p);
}

static void srt_passphrase(void)
{
    if (!protocol_built("srt")) {
        tap_skip("this FFmpeg has no SRT");
        return;
    }
    int port = free_udp_port(); /* for SRT */
    pattern prd;
    pattern_init(&prd, 320, 240);
    srt_reader s;
    srt_run(port, "&passphrase=panocap-secret-1234", 20, &s, &prd);
    TAP_CHECK(s.r == 0 && s.d.frames >= 25 && s.d.errors == 0 && s.d.psnr_min > 40,
              "srt: the caller with the passphrase decodes %d frames, PSNR min %.1f dB", s.d.frames,
              s.d.psnr_min);
    srt_run(port, "", 3, &s, &prd);
    TAP_CHECK(s.r != 0 && s.d.frames == 0,
              "srt: a caller without the passphrase gets nothing (r %d, %d frames)", s.r, s.d.frames);
    srt_run(port, "&passphrase=wrong-secret-0000", 3, &s, &prd);
    TAP_CHECK(s.r != 0 && s.d.frames == 0,
              "srt: a caller with a wrong passphrase gets nothing (r %d, %d frames)", s.r, s.d.frames);
    pattern_free(&prd);
}

static void srt_retries_quiet(void)
{
    if (!protocol_built("srt")) {
        tap_skip("this FFmpeg has no SRT");
        return;
    }
    char url[128], err[512];
    snprintf(url, sizeof url, "srt://127.0.0.1:%d", free_udp_port()); /* nobody answers there */
    int level = av_log_get_level();
    av_log_set_level(AV_LOG_WARNING);
    static log_keep k = {.lock = PTHREAD_MUTEX_INITIALIZER};
    pc_logger lg = {.sink = log_keep_sink, .user = &k, .max_level = PC_LOG_DEBUG};
    pc_encode_config cfg = small_cfg();
    cfg.outputs[0].url = url;
    cfg.outputs[0].options = "connect_timeout=200";
    cfg.n_outputs = 1;
    cfg.log = &lg;
    pc_encoder *e;
    int r = pc_encoder_open(&e, &cfg, err, sizeof err);
    if (!TAP_CHECK(r == 0, "srt: open a caller to %s %s", url, r ? err : "")) {
        av_log_set_level(level);
        return;
    }
    pattern p;
    pattern_init(&p, 320, 240);
    int64_t t0 = pc_now_ns();
    for (int t = 0; t < 200 && !r; t++) { /* 4 s at 50 fps: retries after 0.5, 1, 2 s */
        r = encode_frames(e, &p, t, 1, FPS, 0, err, sizeof err);
        int64_t due = t0 + (int64_t)(t + 1) * 20000000, now = pc_now_ns();
        if (due > now)
            usleep((useconds_t)((due - now) / 1000));
    }
    pc_encoder_stats st;
    pc_encoder_stats_get(e, &st);
    pc_encoder_close(e);
    pattern_free(&p);
    av_log_set_level(level);
    int loud = log_keep_count(&k, PC_LOG_WARNING, "ffmpeg:", NULL);
    TAP_CHECK(st.outputs[0].failures >= 3 && loud >= 1 && loud <= 2,
              "srt: %llu failed connects, FFmpeg's reason logged %d time(s) at error level (then debug)",
              (unsigned long long)st.outputs[0].failures, loud);
}

int main(void)
{
    char dir[256];
    if (!test_tmpdir(dir, sizeof dir, "outopts"))
        return tap_skip_all("cannot make a temp dir");
    av_log_set_level(getenv("PC_TEST_AVLOG") ? AV_LOG_DEBUG : AV_LOG_QUIET);
    if (!encoder_built("libx264"))
        return tap_skip_all("this FFmpeg has no libx264");
    if (!getenv("PC_TEST_ONLY") || strstr(getenv("PC_TEST_ONLY"), "check"))
        checks(dir);
    if (!getenv("PC_TEST_ONLY") || strstr(getenv("PC_TEST_ONLY"), "rtmp"))
        rtmp_checks();
    if (!getenv("PC_TEST_ONLY") || strstr(getenv("PC_TEST_ONLY"), "udp"))
        udp_pkt_size();
    {
        char path[400], err[512];
        snprintf(path, sizeof path, "%s/made/by/open/rec.ts", dir);
        pc_encode_config cfg = small_cfg();
        cfg.outputs[0].url = path;
        cfg.n_outputs = 1;
        pc_encoder *e;
        int r = pc_encoder_open(&e, &cfg, err, sizeof err);
        if (!r)
            pc_encoder_close(e);
        TAP_CHECK(r == 0 && access(path, F_OK) == 0, "a recording in missing folders: they are made (%s) %s",
                  path, r ? err : "");
    }
    if (!getenv("PC_TEST_ONLY") || strstr(getenv("PC_TEST_ONLY"), "srt")) {
        srt_passphrase();
        srt_retries_quiet();
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", dir);
    return tap_done();
}
