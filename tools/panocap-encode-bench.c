/* panocap-encode-bench - encoder throughput at the panorama size through
 * the same encode library the daemon uses (pc_encoder_*, no output).
 *
 * For each configuration (encoder:preset[:sliced]) it encodes --frames
 * frames of a moving pattern with sensor-like noise and prints frames/s,
 * ms/frame (wall time per frame in steady state, after --warmup frames),
 * the submit->packet latency (mean and max) and the bitrate produced. The
 * frames are the encoder's own host frames, filled once (the library
 * rotates 4), so the timing is the encoder's alone; the 50 fps budget is
 * 20 ms per frame.
 *
 *   panocap-encode-bench [--size 2040x5400] [--frames 60] [--warmup 5]
 *       [--threads N] [--bitrate 20000000] [--config libx264:ultrafast ...]
 *       [--realtime] [--bands K] [--list] [--help] [--version]
 *
 * --bands K cuts the picture into K bands (as the daemon's encode.layout
 * bands): K encoders of WxH/K on K threads at once, each with --threads
 * threads (0: the cores shared out), the bitrate shared; one row per band.
 *
 * --realtime submits at the nominal 50 fps (one frame every 20 ms) instead
 * of as fast as the encoder takes frames: frames/s is then capped at 50 and
 * the latency column is the per-frame delay the daemon would see.
 *
 * Exit status: 0, 1 when a configuration failed, 64 on a usage error.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "encode.h"
#include "tool_cli.h"

typedef struct lat {
    double sum, max;
    int n;
    int64_t submit_after; /* ignore warm-up packets */
    int64_t bytes;
} lat;

static void on_packet(void *u, const pc_packet_info *i)
{
    lat *l = u;
    if (i->submit_ns < l->submit_after)
        return;
    double ms = (i->out_ns - i->submit_ns) / 1e6;
    l->sum += ms;
    if (ms > l->max)
        l->max = ms;
    l->n++;
    l->bytes += i->size;
}

/* Moving waves, a moving box and +-6 of hashed noise (a sensor's grain
 * makes encoders work; a clean synthetic picture flatters them). */
static void fill(const pc_picture *p, int t)
{
    for (int y = 0; y < p->height; y++) {
        uint8_t *row = p->plane[0] + (size_t)y * p->pitch[0];
        double cy = cos((y - 2.0 * t) / 41.0);
        for (int x = 0; x < p->width; x++) {
            uint32_t h = (uint32_t)(x * 73856093u) ^ (uint32_t)(y * 19349663u) ^ (uint32_t)(t * 83492791u);
            h ^= h >> 13;
            h *= 0x5bd1e995u;
            h ^= h >> 15;
            int v = (int)lrint(120 + 60 * sin((x + 3.0 * t) / 37.0) * cy) + (int)(h % 13) - 6;
            if (x > (t * 16) % p->width && x < (t * 16) % p->width + 300 && y % 1080 < 400)
                v = 220;
            row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    for (int y = 0; y < p->height / 2; y++) {
        for (int x = 0; x < p->width / 2; x++) {
            uint8_t u = (uint8_t)lrint(128 + 40 * sin((x + 1.0 * t) / 29.0));
            uint8_t v = (uint8_t)lrint(128 + 40 * cos((y - 1.0 * t) / 31.0));
            if (p->fmt == PC_FMT_NV12) {
                p->plane[1][(size_t)y * p->pitch[1] + 2 * x] = u;
                p->plane[1][(size_t)y * p->pitch[1] + 2 * x + 1] = v;
            } else {
                p->plane[1][(size_t)y * p->pitch[1] + x] = u;
                p->plane[2][(size_t)y * p->pitch[2] + x] = v;
            }
        }
    }
}

typedef struct band_run {
    const char *config;
    int w, h, frames, warmup, threads, realtime;
    long long bitrate;
    const pc_logger *log;
    /* results */
    char name[64], preset[32], err[2048];
    const char *threading;
    int failed;
    lat l;
    double fps, mbps;
} band_run;

/* One encoder: open, encode r->frames frames (paced at 50 fps with
 * --realtime), flush, close. Runs on its own thread with --bands. */
static void *band_main(void *arg)
{
    band_run *r = arg;
    char mode[16] = "";
    sscanf(r->config, "%63[^:]:%31[^:]:%15s", r->name, r->preset, mode);
    int sliced = strcmp(mode, "frame") != 0;
    pc_encode_config cfg;
    pc_encode_config_default(&cfg);
    cfg.width = r->w;
    cfg.height = r->h;
    cfg.encoder = r->name;
    cfg.preset = r->preset[0] ? r->preset : NULL;
    cfg.threads = r->threads;
    cfg.bitrate = r->bitrate;
    cfg.frame_threads = sliced ? 0 : 1;
    cfg.log = r->log;
    r->l.submit_after = INT64_MAX;
    cfg.on_packet = on_packet;
    cfg.cb_user = &r->l;
    char *err = r->err;
    size_t errn = sizeof r->err;
    pc_encoder *e;
    r->threading = !strcmp(r->name, "libx264") ? (sliced ? "sliced" : "frame")
                 : !strcmp(r->name, "libx265") ? "pools, 1 frame" : "lp";
    if (pc_encoder_open(&e, &cfg, err, errn)) {
        r->failed = 1;
        return NULL;
    }
    uint8_t *filled[8] = {0};
    int nfilled = 0;
    int64_t t_start = 0;
    int rc = 0;
    for (int t = 0; t < r->frames && !rc; t++) {
        if (r->realtime && t > r->warmup) { /* paced from the first timed frame on */
            int64_t due = t_start + (int64_t)(t - r->warmup) * 20000000, now = pc_now_ns();
            if (due > now)
                usleep((useconds_t)((due - now) / 1000));
        }
        pc_picture pic;
        int dev;
        rc = pc_encoder_frame(e, &pic, &dev, err, errn);
        if (rc)
            break;
        int known = 0;
        for (int k = 0; k < nfilled; k++)
            known |= filled[k] == pic.plane[0];
        if (!known) {
            fill(&pic, t);
            if (nfilled < 8)
                filled[nfilled++] = pic.plane[0];
        }
        if (t == r->warmup) {
            t_start = pc_now_ns();
            r->l.submit_after = t_start;
        }
        rc = pc_encoder_submit(e, (int64_t)t * 20000000, 0, err, errn);
    }
    if (!rc)
        rc = pc_encoder_flush(e, err, errn);
    int64_t t_end = pc_now_ns();
    pc_encoder_close(e);
    if (rc) {
        r->failed = 1;
        return NULL;
    }
    double secs = (t_end - t_start) / 1e9;
    r->fps = (r->frames - r->warmup) / secs;
    r->mbps = r->l.n ? r->l.bytes * 8.0 / r->l.n * 50 / 1e6 : 0;
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: panocap-encode-bench [--size WxH] [--frames N] [--warmup N] [--threads N]\n"
            "       [--bitrate BPS] [--config ENCODER:PRESET[:sliced]]... [--realtime] [--bands K] [--list]\n"
            "       [--help] [--version]\n"
            "  libx264 threading: ENCODER:PRESET:frame (frame threads) or :sliced (the default)\n"
            "default configs: libx264:ultrafast libx264:superfast libx264:veryfast\n"
            "       libx264:ultrafast:frame libx265:ultrafast libx265:superfast\n"
            "       libsvtav1:12 libsvtav1:10\n");
}

int main(int argc, char **argv)
{
    int w = 2040, h = 5400, frames = 60, warmup = 5, threads = 0, realtime = 0, bands = 1;
    long long bitrate = 20000000;
    const char *configs[32];
    int nc = 0;
    static const pc_tool tool = {"panocap-encode-bench", usage};
    enum { O_LIST = 256, O_REALTIME, O_SIZE, O_FRAMES, O_WARMUP, O_THREADS, O_BITRATE, O_CONFIG, O_BANDS };
    static const struct option lo[] = {
        {"list", no_argument, NULL, O_LIST},           {"realtime", no_argument, NULL, O_REALTIME},
        {"size", required_argument, NULL, O_SIZE},     {"frames", required_argument, NULL, O_FRAMES},
        {"warmup", required_argument, NULL, O_WARMUP}, {"threads", required_argument, NULL, O_THREADS},
        {"bitrate", required_argument, NULL, O_BITRATE}, {"config", required_argument, NULL, O_CONFIG},
        {"bands", required_argument, NULL, O_BANDS},
        PC_TOOL_STD_OPTIONS,                            {NULL, 0, NULL, 0}};
    int ch, rc;
    long long n;
    char tail;
    while ((ch = pc_tool_getopt(&tool, argc, argv, "", lo)) != -1) {
        rc = 0;
        switch (ch) {
        case O_LIST: pc_encoder_list(stdout); return 0;
        case O_REALTIME: realtime = 1; break;
        case O_SIZE:
            if (sscanf(optarg, "%dx%d%c", &w, &h, &tail) != 2 || w < 2 || h < 2 || w > 16384 || h > 16384 * 64)
                return pc_tool_usage_error(&tool, "--size: '%s' is not WIDTHxHEIGHT (2..16384 each; "
                                           "the height up to 64 bands of 16384)", optarg);
            break;
        case O_FRAMES: rc = pc_tool_int(&tool, "--frames", optarg, 2, 1000000, &n), frames = (int)n; break;
        case O_WARMUP: rc = pc_tool_int(&tool, "--warmup", optarg, 0, 1000000, &n), warmup = (int)n; break;
        case O_BANDS: rc = pc_tool_int(&tool, "--bands", optarg, 1, 64, &n), bands = (int)n; break;
        case O_THREADS: rc = pc_tool_int(&tool, "--threads", optarg, 0, 1024, &n), threads = (int)n; break;
        case O_BITRATE: rc = pc_tool_int(&tool, "--bitrate", optarg, 1000, 2000000000, &bitrate); break;
        case O_CONFIG:
            if (nc == (int)(sizeof configs / sizeof *configs))
                return pc_tool_usage_error(&tool, "--config: at most %d configurations", nc);
            configs[nc++] = optarg;
            break;
        default: return pc_tool_std_option(&tool, ch, argv);
        }
        if (rc)
            return rc;
    }
    if ((rc = pc_tool_no_operands(&tool, argc, argv)))
        return rc;
    if (frames <= warmup)
        return pc_tool_usage_error(&tool, "--frames (%d) must exceed --warmup (%d)", frames, warmup);
    if (h % bands || (h / bands) % 2 || h / bands > 16384)
        return pc_tool_usage_error(&tool, "--bands %d: must cut the height %d into even bands of at most 16384",
                                   bands, h);
    if (!nc) {
        static const char *def[] = {"libx264:ultrafast", "libx264:superfast",
                                    "libx264:veryfast", "libx264:ultrafast:frame",
                                    "libx265:ultrafast", "libx265:superfast",
                                    "libsvtav1:12", "libsvtav1:10"};
        for (size_t i = 0; i < sizeof def / sizeof *def; i++)
            configs[nc++] = def[i];
    }
    setenv("SVT_LOG", "1", 0);
    pc_logger quiet = {NULL, NULL, PC_LOG_WARNING};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("# panocap-encode-bench: %dx%d, %d frames (%d warm-up), threads %d (%s), %ld CPUs, "
           "CBR %.1f Mbit/s, 50 fps budget 20 ms/frame%s\n",
           w, h, frames, warmup, threads, threads ? "set" : "encoder's choice", cpus,
           bitrate / 1e6, realtime ? ", frames submitted in real time (50 fps)" : "");
    printf("| encoder | preset | threading | frames/s | ms/frame | latency mean / max ms | "
           "Mbit/s at 50 fps | 50 fps? |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    fflush(stdout);
    int fails = 0;
    for (int c = 0; c < nc; c++) {
        band_run br[64];
        pthread_t thr[64];
        int started[64] = {0};
        for (int k = 0; k < bands; k++) {
            br[k] = (band_run){.config = configs[c], .w = w, .h = h / bands, .frames = frames, .warmup = warmup,
                               .threads = threads ? threads : (bands > 1 ? (int)(cpus / bands > 0 ? cpus / bands : 1) : 0),
                               .realtime = realtime, .bitrate = bitrate / bands, .log = &quiet};
            started[k] = pthread_create(&thr[k], NULL, band_main, &br[k]) == 0;
            if (!started[k])
                band_main(&br[k]);
        }
        for (int k = 0; k < bands; k++) {
            if (started[k])
                pthread_join(thr[k], NULL);
            band_run *r = &br[k];
            char label[80];
            if (bands > 1)
                snprintf(label, sizeof label, "%s (band %d of %d, %dx%d, %d threads)", r->name, k, bands, w, h / bands,
                         r->threads);
            else
                snprintf(label, sizeof label, "%s", r->name);
            if (r->failed) {
                printf("| %s | %s | - | failed: %s | | | | |\n", label, r->preset, r->err);
                fails++;
                continue;
            }
            printf("| %s | %s | %s | %.1f | %.1f | %.1f / %.1f | %.1f | %s |\n", label,
                   r->preset[0] ? r->preset : "default", r->threading, r->fps, 1000.0 / r->fps,
                   r->l.n ? r->l.sum / r->l.n : 0, r->l.max, r->mbps, r->fps >= 50 ? "yes" : "no");
        }
        fflush(stdout);
    }
    return fails ? 1 : 0;
}
