/* capacity.c - the configured pictures' cost to the encoders against a
 * stated throughput (capacity.h). THE TABLE below is the one place the
 * throughputs are stated; README.md "Capacity said up front" lists it
 * with the same sources. */
#include "capacity.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Pixels per second of one core (software: the encoders share the cores
 * they may use) or of one NVENC engine, sustained inside the daemon.
 *
 * libx264 ultrafast is measured end to end: issue 29's device run, the
 * H200 host's 16 cores, the 8614x1290 panorama at 50 fps, encode mean
 * 18.6 ms (p50 14.7, p99 60 ms): 11.1 Mpixel / 18.6 ms / 16 cores = 37
 * Mpixel/s a core. The others are BENCHMARKS.md's panocap-encode-bench
 * figures on the same host (2040x5400, 16 threads: frames/s x 11.0 Mpixel
 * / 16) scaled by what the daemon kept of libx264 ultrafast's bench figure
 * (37 of 69 Mpixel/s a core: 0.54; the pipeline's other threads and the
 * picture's shape). NVENC is stated, not measured here (no NVENC on
 * Hopper): NVIDIA's Video Codec SDK performance tables give several
 * hundred 1080p frames a second per engine at presets P1-P3; 500 MPixel/s
 * (240 fps of 1080p) is a conservative reading. */
typedef struct rate_row {
    const char *encoder, *preset; /* preset "" = the encoder's default (panocap's low-latency one) */
    double px_per_s;
    const char *source;
} rate_row;

static const rate_row rates[] = {
    {"libx264", "ultrafast", 37e6, "measured: 8614x1290 at 50 fps on 16 cores, encode mean 18.6 ms (issue 29)"},
    {"libx264", "", 37e6, "measured: 8614x1290 at 50 fps on 16 cores, encode mean 18.6 ms (issue 29)"},
    {"libx264", "superfast", 28e6, "BENCHMARKS.md 16 cores: 61.6 of ultrafast's 81.5 frames/s (frame threads)"},
    {"libx264", "veryfast", 25e6, "BENCHMARKS.md 16 cores: 54.1 of ultrafast's 81.5 frames/s (frame threads)"},
    {"libx265", "ultrafast", 9.4e6, "BENCHMARKS.md 16 cores: 25.2 frames/s of 2040x5400, x 0.54"},
    {"libx265", "", 9.4e6, "BENCHMARKS.md 16 cores: 25.2 frames/s of 2040x5400, x 0.54"},
    {"libx265", "superfast", 8.6e6, "BENCHMARKS.md 16 cores: 23.2 frames/s of 2040x5400, x 0.54"},
    {"libsvtav1", "13", 16e6, "BENCHMARKS.md 16 cores: 43.9 frames/s of 2040x5400, x 0.54"},
    {"libsvtav1", "12", 15e6, "BENCHMARKS.md 16 cores: 39.9 frames/s of 2040x5400, x 0.54"},
    {"libsvtav1", "", 15e6, "BENCHMARKS.md 16 cores: 39.9 frames/s of 2040x5400, x 0.54"},
    {"libsvtav1", "10", 9.0e6, "BENCHMARKS.md 16 cores: 24.2 frames/s of 2040x5400, x 0.54"},
    {"libsvtav1", "8", 4.2e6, "BENCHMARKS.md 16 cores: 11.4 frames/s of 2040x5400, x 0.54"},
    {"h264_nvenc", "", 500e6, "stated: NVIDIA Video Codec SDK tables, P1-P3, conservative (not measured here)"},
    {"hevc_nvenc", "", 500e6, "stated: NVIDIA Video Codec SDK tables, P1-P3, conservative (not measured here)"},
};

double pc_capacity_rate(const char *encoder, const char *preset, int *per_engine, const char **source)
{
    const char *pre = preset ? preset : "";
    double slowest = 0;
    const char *slow_src = NULL;
    *per_engine = encoder && strstr(encoder, "_nvenc") != NULL;
    for (size_t i = 0; encoder && i < sizeof rates / sizeof *rates; i++) {
        if (strcmp(rates[i].encoder, encoder))
            continue;
        if (*per_engine || !strcmp(rates[i].preset, pre)) {
            *source = rates[i].source;
            return rates[i].px_per_s;
        }
        if (!slowest || rates[i].px_per_s < slowest) {
            slowest = rates[i].px_per_s;
            slow_src = rates[i].source;
        }
    }
    *source = slow_src; /* a preset not in the table: the slowest stated one (slower presets are slower still) */
    return slowest;
}

double pc_capacity_estimate(const pc_capacity_input *in, char *msg, size_t n)
{
    if (n)
        msg[0] = '\0';
    const char *enc = in->encoder && in->encoder[0] && strcmp(in->encoder, "auto") ? in->encoder : NULL;
    int is_auto = !enc;
    if (is_auto)
        enc = in->first_fallback && in->first_fallback[0] ? in->first_fallback : "libx264";
    int per_engine = 0;
    const char *source = NULL;
    double rate = pc_capacity_rate(enc, is_auto ? "" : in->preset, &per_engine, &source);
    if (!(rate > 0) || !(in->fps > 0) || in->cores < 1)
        return 0;
    double units = per_engine ? 1 : in->cores; /* one engine assumed: the GPU may have more */
    double pixels = 0;
    for (int i = 0; i < in->npictures; i++)
        pixels += (double)in->pic[i].width * in->pic[i].height;
    double need = pixels * in->fps, have = rate * units, load = need / have;
    if (load <= PC_CAPACITY_WARN || !n)
        return load;
    char list[600] = "";
    size_t o = 0;
    for (int i = 0; i < in->npictures && o + 1 < sizeof list; i++) {
        int w = snprintf(list + o, sizeof list - o, "%s%s %dx%d", i ? ", " : "", in->pic[i].name, in->pic[i].width,
                         in->pic[i].height);
        if (w < 0)
            break;
        o += (size_t)w < sizeof list - o ? (size_t)w : sizeof list - o - 1;
    }
    /* what would fit: the main picture at the width that leaves the
     * others and the margin room (its height follows the rig's aspect) */
    char fit[200] = "";
    if (in->main_index >= 0 && in->main_index < in->npictures) {
        const pc_capacity_picture *m = &in->pic[in->main_index];
        double others = pixels - (double)m->width * m->height;
        double allowed = PC_CAPACITY_WARN * have / in->fps - others;
        if (allowed > 0 && m->height > 0) {
            int w = (int)floor(sqrt(allowed * m->width / m->height)) & ~15;
            if (w >= 256 && w < m->width)
                snprintf(fit, sizeof fit, "panorama.width = %d (about %dx%d), ", w, w,
                         (int)lround((double)w * m->height / m->width) & ~1);
        }
    }
    char where[64];
    if (per_engine)
        snprintf(where, sizeof where, "one NVENC engine");
    else
        snprintf(where, sizeof where, "%d core%s", in->cores, in->cores == 1 ? "" : "s");
    snprintf(msg, n,
             "capacity: the pictures (%s) at %.4g fps are %.0f Mpixel/s to encode; %s%s on %s holds about %.0f "
             "Mpixel/s (%.0f a %s: %s): %.0f %% of it, above the %.0f %% that leaves room for the encoder's "
             "stalls; expect sets over budget and dropped from live outputs (recordings are queued: "
             "encode.record_queue_seconds). What would fit: %sfewer or smaller views, %s",
             list, in->fps, need / 1e6, enc, is_auto ? " (encoder auto, no NVENC)" : "", where, have / 1e6,
             rate / 1e6, per_engine ? "engine" : "core", source ? source : "stated", 100 * load,
             100 * PC_CAPACITY_WARN, fit,
             per_engine ? "or a GPU with more NVENC engines" : "or NVENC (about 500 Mpixel/s an engine)");
    return load;
}
