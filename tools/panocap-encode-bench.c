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
 *       [--realtime] [--bands K] [--list]
 *
 * --bands K cuts the picture into K bands (as the daemon's encode.layout
 * bands): K encoders of WxH/K on K threads at once, each with --threads
 * threads (0: the cores shared out), the bitrate shared; one row per band.
 *
 * --realtime submits at the nominal 50 fps (one frame every 20 ms) instead
 * of as fast as the encoder takes frames: frames/s is then capped at 50 and
 * the latency column is the per-frame delay the daemon would see.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "encode.h"

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

static void usage(void)
{
    fprintf(stderr,
            "usage: panocap-encode-bench [--size WxH] [--frames N] [--warmup N] [--threads N]\n"
            "       [--bitrate BPS] [--config ENCODER:PRESET[:sliced]]... [--realtime] [--bands K] [--list]\n"
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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) {
            pc_encoder_list(stdout);
            return 0;
        } else if (!strcmp(a, "--realtime")) {
            realtime = 1;
        } else if (!strcmp(a, "--size") && v && sscanf(v, "%dx%d", &w, &h) == 2) {
            i++;
        } else if (!strcmp(a, "--frames") && v) {
            frames = atoi(v), i++;
        } else if (!strcmp(a, "--warmup") && v) {
            warmup = atoi(v), i++;
        } else if (!strcmp(a, "--bands") && v) {
            bands = atoi(v), i++;
        } else if (!strcmp(a, "--threads") && v) {
            threads = atoi(v), i++;
        } else if (!strcmp(a, "--bitrate") && v) {
            bitrate = atoll(v), i++;
        } else if (!strcmp(a, "--config") && v && nc < 32) {
            configs[nc++] = v, i++;
        } else {
            usage();
            return 2;
        }
    }
    if (bands < 1 || bands > 64 || h % bands || (h / bands) % 2) {
        fprintf(stderr, "panocap-encode-bench: --bands %d: 1..64, dividing the height %d into even bands\n", bands, h);
        return 2;
    }
    if (frames <= warmup || frames < 2) {
        fprintf(stderr, "panocap-encode-bench: --frames must exceed --warmup\n");
        return 2;
    }
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
