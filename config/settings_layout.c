/* settings_layout.c - resolves encode.layout / encode.bands into the
 * pictures the encoder(s) get: stacked (one picture) or bands (K pictures
 * of whole camera slabs, one encoder each), with the reason for an
 * automatic choice and clear errors for layouts an encoder cannot take.
 * Pure function of the settings, the camera geometry and the machine
 * (NVENC or not, cores): used by the configuration check and the daemon. */
#include "settings.h"

#include <stdio.h>
#include <string.h>

/* Largest picture side libavcodec's encoders are opened with (encode/). */
#define SW_LIMIT 16384
/* Rows of a 2040-wide picture libx264 ultrafast encodes at 50 fps on the
 * 16-core host (5 cameras, BENCHMARKS.md); taller pictures are cut. */
#define SW_REALTIME_PIXELS (2040 * 5400)

static int nvenc_limit(const pc_encode_settings *e) { return e->codec == PC_CODEC_H264 ? 4096 : 8192; }

static int is_nvenc_name(const char *n) { return strstr(n, "_nvenc") != NULL; }

/* The smallest divisor k of ncam with whole-camera bands of at most
 * max_rows rows and max_pixels pixels; 0 when even one camera is too big. */
static int bands_fitting(int ncam, int width, int slab_h, int max_rows, long long max_pixels)
{
    for (int k = 1; k <= ncam; k++)
        if (ncam % k == 0 && (ncam / k) * slab_h <= max_rows &&
            (long long)width * (ncam / k) * slab_h <= max_pixels)
            return k;
    return 0;
}

static void divisors(int n, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int k = 1; k <= n && off < len; k++)
        if (n % k == 0) {
            int w = snprintf(buf + off, len - off, "%s%d", off ? ", " : "", k);
            if (w > 0)
                off += (size_t)w;
        }
}

int pc_layout_resolve(const pc_encode_settings *e, int ncam, int width, int slab_h, int nvenc, int cores,
                      pc_layout_plan *out, char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    if (ncam < 1 || width < 2 || slab_h < 2) {
        snprintf(err, n, "encode.layout: no cameras");
        return -1;
    }
    if (cores < 1)
        cores = 1;
    /* nvenc: 1 = NVENC will encode, 0 = a software encoder, -1 = unknown */
    if (is_nvenc_name(e->encoder))
        nvenc = 1;
    else if (strcmp(e->encoder, "auto") != 0)
        nvenc = 0;
    int limit = nvenc == 1 ? nvenc_limit(e) : SW_LIMIT;
    const char *limit_name = nvenc == 1 ? (e->codec == PC_CODEC_H264 ? "NVENC H.264" : "NVENC HEVC")
                                        : "libavcodec's software encoders";
    int H = ncam * slab_h;
    char divs[128];
    divisors(ncam, divs, sizeof divs);

    if (e->layout == PC_LAYOUT_GRID) {
        snprintf(err, n, "encode.layout \"grid\" is not available in this version; use \"bands\" "
                 "(whole cameras per encoder, divisors of %d: %s) or \"stacked\"", ncam, divs);
        return -1;
    }
    if (e->bands && e->layout != PC_LAYOUT_BANDS && e->layout != PC_LAYOUT_AUTO) {
        snprintf(err, n, "encode.bands = %d needs encode.layout \"bands\" (it is \"%s\")", e->bands,
                 pc_layout_name((pc_layout)e->layout));
        return -1;
    }
    if (e->bands && ncam % e->bands) {
        snprintf(err, n, "encode.bands = %d does not divide the %d cameras: a band holds whole "
                 "cameras; possible: %s", e->bands, ncam, divs);
        return -1;
    }
    int fit = bands_fitting(ncam, width, slab_h, limit, (long long)limit * limit);
    if (e->layout == PC_LAYOUT_STACKED || (e->layout == PC_LAYOUT_AUTO && !e->bands)) {
        int rt = nvenc == 1 || (long long)width * H <= SW_REALTIME_PIXELS;
        if (H <= limit && width <= limit && (e->layout == PC_LAYOUT_STACKED || rt)) {
            out->layout = PC_LAYOUT_STACKED;
            out->bands = 1;
            snprintf(out->why, sizeof out->why, "%s: %dx%d fits %s (limit %d)",
                     e->layout == PC_LAYOUT_AUTO ? "auto" : "configured", width, H, limit_name, limit);
        } else if (e->layout == PC_LAYOUT_STACKED) {
            if (fit)
                snprintf(err, n, "encode.layout \"stacked\": the %dx%d panorama is over the limit of "
                         "%s (%d pixels a side); use encode.layout = \"bands\" with encode.bands = %d "
                         "(%dx%d each)", width, H, limit_name, limit, fit, width, H / fit);
            else
                snprintf(err, n, "encode.layout \"stacked\": the %dx%d panorama is over the limit of "
                         "%s (%d pixels a side), and so is one camera", width, H, limit_name, limit);
            return -1;
        } else {
            /* auto, too tall or too slow for one encoder */
            int k = fit;
            if (nvenc != 1) {
                /* software: independent encoders scale far better than one
                 * encoder's slices (16 one-camera libx264 on 16 cores:
                 * 56-75 fps each); at most 2 cameras per band, and as
                 * many bands as keep one thread each */
                int cams = ncam % 2 == 0 ? 2 : 1;
                k = ncam / cams;
                if (k < fit)
                    k = fit;
            }
            if (!k) {
                snprintf(err, n, "encode.layout auto: one camera (%dx%d) is over the limit of %s (%d)", width,
                         slab_h, limit_name, limit);
                return -1;
            }
            out->layout = PC_LAYOUT_BANDS;
            out->bands = k;
            char reason[128];
            if (H > limit || width > limit)
                snprintf(reason, sizeof reason, "too tall for %s (limit %d)", nvenc == 1 ? limit_name
                         : "one software encoder", limit);
            else
                snprintf(reason, sizeof reason, "too big for one software encoder at the frame rate (about "
                         "2040x5400 at 50 fps on 16 cores)");
            snprintf(out->why, sizeof out->why, "auto: the %dx%d panorama is %s; %d bands of %d camera%s "
                     "(%dx%d each), %d core%s", width, H, reason, k, ncam / k, ncam / k == 1 ? "" : "s", width,
                     H / k, cores, cores == 1 ? "" : "s");
        }
    } else { /* bands (or auto with a band count) */
        int k = e->bands ? e->bands : (fit ? fit : ncam);
        if ((ncam / k) * slab_h > limit) {
            snprintf(err, n, "encode.bands = %d: bands of %dx%d are over the limit of %s (%d pixels a "
                     "side); use encode.bands = %d or more (a divisor of %d: %s)", k, width,
                     (ncam / k) * slab_h, limit_name, limit, fit ? fit : ncam, ncam, divs);
            return -1;
        }
        out->layout = PC_LAYOUT_BANDS;
        out->bands = k;
        snprintf(out->why, sizeof out->why, "configured: %d band%s of %d camera%s (%dx%d each)", k,
                 k == 1 ? "" : "s", ncam / k, ncam / k == 1 ? "" : "s", width, (ncam / k) * slab_h);
    }
    out->width = width;
    out->height = H / out->bands;
    return 0;
}
