/* settings_layout.c - resolves encode.layout / encode.bands / encode.grid
 * into the pictures the encoder(s) get: stacked (one picture), grid (the
 * cameras tiled C x R in one picture) or bands (K pictures of whole camera
 * slabs, one encoder each), with the reason for an automatic choice and
 * clear errors for layouts an encoder cannot take.
 * Pure function of the settings, the camera geometry and the machine
 * (NVENC or not, cores): used by the configuration check and the daemon. */
#include "settings.h"

#include "picture.h"       /* PC_GRID_TILE_ALIGN */
#include "encode_limits.h" /* the encoder's picture sides */

#include <stdio.h>
#include <string.h>

/* Largest picture side libavcodec's encoders are opened with. */
#define SW_LIMIT PC_ENCODE_MAX_SIDE

/* The largest picture one software encoder is given whole: one 2040x1080
 * camera (libx264 ultrafast, 16-core host, BENCHMARKS.md: one camera per
 * encoder with 1-3 threads ran at 56-123 fps; the 2040x5400 stacked
 * picture with 16 threads missed the 20 ms budget 272 times in 3003). */
#define SW_ONE_ENCODER_PIXELS (2040LL * 1080)

static int is_nvenc_name(const char *n) { return strstr(n, "_nvenc") != NULL; }

/* A w x h picture the encoder would refuse: over its side limit, or over
 * the area libavcodec opens (encode_limits.h). */
static int too_big(long long w, long long h, int limit)
{
    return w > limit || h > limit || !pc_encode_area_ok(w, h);
}

/* What an error adds when a picture inside the side limit is over the area. */
static const char *area_note(long long w, long long h, int limit)
{
    return w <= limit && h <= limit && !pc_encode_area_ok(w, h)
               ? ", and libavcodec opens no picture whose (width + 128) x (height + 128) passes 268435455"
               : "";
}

int pc_encoder_side_limit(const pc_encode_settings *e, int nvenc, const char **name)
{
    if (is_nvenc_name(e->encoder))
        nvenc = 1;
    else if (strcmp(e->encoder, "auto") != 0)
        nvenc = 0;
    if (name)
        *name = nvenc == 1 ? (e->codec == PC_CODEC_H264 ? "NVENC H.264" : "NVENC HEVC")
                           : "a libavcodec software encoder";
    return nvenc == 1 ? (e->codec == PC_CODEC_H264 ? 4096 : 8192) : SW_LIMIT;
}

/* The smallest divisor k of ncam with whole-camera bands the encoder
 * takes (limit a side, libavcodec's area); 0 when even one camera is too
 * big. */
static int bands_fitting(int ncam, int width, int slab_h, int limit)
{
    for (int k = 1; k <= ncam; k++)
        if (ncam % k == 0 && !too_big(width, (long long)(ncam / k) * slab_h, limit))
            return k;
    return 0;
}

/* The divisors k >= from of n, "1, 2, 4, 8, 16", or as grid shapes
 * (shapes = 1: "2x8, 4x4, 8x2", k columns of n / k rows). */
static void list_divisors(int n, int from, int shapes, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int k = from; k <= n && off < len; k++)
        if (n % k == 0) {
            int w = shapes ? snprintf(buf + off, len - off, "%s%dx%d", off ? ", " : "", k, n / k)
                           : snprintf(buf + off, len - off, "%s%d", off ? ", " : "", k);
            if (w > 0)
                off += (size_t)w;
        }
}

static void divisors(int n, char *buf, size_t len) { list_divisors(n, 1, 0, buf, len); }

/* The grid of ncam tiles (columns >= 2, columns x rows = ncam) inside
 * limit a side that is closest to square (smallest long side / short
 * side); 0 when none fits. */
static int grid_fitting(int ncam, int width, int slab_h, int limit)
{
    int best = 0;
    double best_r = 0;
    if (width % PC_GRID_TILE_ALIGN)
        return 0; /* tiles would start off the kernels' store alignment */
    for (int c = 2; c <= ncam; c++) {
        if (ncam % c)
            continue;
        long long gw = (long long)c * width, gh = (long long)(ncam / c) * slab_h;
        if (too_big(gw, gh, limit))
            continue;
        double r = gw > gh ? (double)gw / (double)gh : (double)gh / (double)gw;
        if (!best || r < best_r) {
            best = c;
            best_r = r;
        }
    }
    return best;
}

/* "CxR" (also "C*R", "C X R"): 0, or -1 when it is not two positive counts. */
static int parse_grid(const char *g, int *cols, int *rows)
{
    char x, tail;
    int n = sscanf(g, "%d %c %d %c", cols, &x, rows, &tail);
    if (n != 3 || (x != 'x' && x != 'X' && x != '*') || *cols < 1 || *rows < 1)
        return -1;
    return 0;
}

/* "2x8, 4x4, 8x2": the grids of ncam tiles with at least 2 columns. */
static void grid_shapes(int ncam, char *buf, size_t len)
{
    list_divisors(ncam, 2, 1, buf, len);
    if (!buf[0])
        snprintf(buf, len, "none");
}

/* What would fit instead, for an error message: a grid, else bands. */
static void fits_instead(int ncam, int width, int slab_h, int limit, int want_grid, char *buf, size_t len)
{
    int gc = want_grid ? grid_fitting(ncam, width, slab_h, limit) : 0;
    int k = bands_fitting(ncam, width, slab_h, limit);
    if (k == 1)
        snprintf(buf, len, "use encode.layout = \"stacked\" (%dx%d)", width, ncam * slab_h);
    else if (gc && k)
        snprintf(buf, len, "use encode.layout = \"grid\" (encode.grid = \"%dx%d\", %dx%d) or \"bands\" with "
                 "encode.bands = %d (%dx%d each)", gc, ncam / gc, gc * width, (ncam / gc) * slab_h, k, width,
                 (ncam / k) * slab_h);
    else if (k)
        snprintf(buf, len, "use encode.layout = \"bands\" with encode.bands = %d (%dx%d each)", k, width,
                 (ncam / k) * slab_h);
    else
        snprintf(buf, len, "and so is one camera (%dx%d)", width, slab_h);
}

static void set_stacked(pc_layout_plan *out, int width, int H)
{
    out->layout = PC_LAYOUT_STACKED;
    out->bands = 1;
    out->width = width;
    out->height = H;
}

static void set_grid(pc_layout_plan *out, int ncam, int width, int slab_h, int cols)
{
    out->layout = PC_LAYOUT_GRID;
    out->bands = 1;
    out->grid_cols = cols;
    out->grid_rows = ncam / cols;
    out->width = cols * width;
    out->height = (ncam / cols) * slab_h;
}

static void set_bands(pc_layout_plan *out, int ncam, int width, int slab_h, int k)
{
    out->layout = PC_LAYOUT_BANDS;
    out->bands = k;
    out->width = width;
    out->height = (ncam / k) * slab_h;
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
    const char *limit_name;
    int limit = pc_encoder_side_limit(e, nvenc, &limit_name);
    const char *how = e->layout == PC_LAYOUT_AUTO ? "auto" : "configured";
    int H = ncam * slab_h;
    char divs[128], shapes[160], alt[256];
    divisors(ncam, divs, sizeof divs);
    grid_shapes(ncam, shapes, sizeof shapes);

    if (e->bands && e->layout != PC_LAYOUT_BANDS && e->layout != PC_LAYOUT_AUTO) {
        snprintf(err, n, "encode.bands = %d needs encode.layout \"bands\" (it is \"%s\")", e->bands,
                 pc_layout_name((pc_layout)e->layout));
        return -1;
    }
    if (e->grid[0] && (e->bands || (e->layout != PC_LAYOUT_GRID && e->layout != PC_LAYOUT_AUTO))) {
        snprintf(err, n, "encode.grid = \"%s\" needs encode.layout \"grid\" (it is \"%s\")%s", e->grid,
                 pc_layout_name((pc_layout)e->layout), e->bands ? " and no encode.bands" : "");
        return -1;
    }
    if (e->bands && ncam % e->bands) {
        snprintf(err, n, "encode.bands = %d does not divide the %d cameras: a band holds whole "
                 "cameras; possible: %s", e->bands, ncam, divs);
        return -1;
    }
    int fit = bands_fitting(ncam, width, slab_h, limit);

    if (e->layout == PC_LAYOUT_GRID || e->grid[0]) {
        int c = 0, r = 0;
        if (width % PC_GRID_TILE_ALIGN) {
            snprintf(err, n, "encode.layout \"grid\": the cameras are %d pixels wide; a grid's tiles need a "
                     "multiple of %d (the final pass stores 2 and 4 bytes at once); use \"bands\" (divisors of %d: "
                     "%s) or \"stacked\"", width, PC_GRID_TILE_ALIGN, ncam, divs);
            return -1;
        }
        if (e->grid[0]) {
            if (parse_grid(e->grid, &c, &r)) {
                snprintf(err, n, "encode.grid = \"%s\": write it as columns x rows, e.g. \"%.*s\" (the grids of "
                         "the %d cameras: %s)", e->grid, (int)strcspn(shapes, ","), shapes, ncam, shapes);
                return -1;
            }
            if (c * r != ncam || c < 2) {
                snprintf(err, n, "encode.grid = \"%s\": %s; a grid of the %d cameras (one tile each, at least 2 "
                         "columns) is one of: %s", e->grid,
                         c < 2 ? "one column is the stacked layout" : "its tiles are not the cameras", ncam, shapes);
                return -1;
            }
            if (too_big((long long)c * width, (long long)r * slab_h, limit)) {
                fits_instead(ncam, width, slab_h, limit, 1, alt, sizeof alt);
                snprintf(err, n, "encode.layout \"grid\" %dx%d: the %dx%d picture is over the limit of %s (%d "
                         "pixels a side%s); %s", c, r, c * width, r * slab_h, limit_name, limit,
                         area_note((long long)c * width, (long long)r * slab_h, limit), alt);
                return -1;
            }
        } else if (!(c = grid_fitting(ncam, width, slab_h, limit))) {
            fits_instead(ncam, width, slab_h, limit, 0, alt, sizeof alt);
            snprintf(err, n, "encode.layout \"grid\": no grid of the %d cameras (%dx%d each; %s) fits %s (%d "
                     "pixels a side); %s", ncam, width, slab_h, shapes, limit_name, limit, alt);
            return -1;
        }
        set_grid(out, ncam, width, slab_h, c);
        snprintf(out->why, sizeof out->why, "%s: grid %dx%d of the %d cameras, %dx%d inside %s (limit %d)",
                 e->grid[0] ? "configured" : "closest to square", out->grid_cols, out->grid_rows, ncam, out->width,
                 out->height, limit_name, limit);
        return 0;
    }
    if (e->layout == PC_LAYOUT_STACKED) {
        if (too_big(width, H, limit)) {
            fits_instead(ncam, width, slab_h, limit, 1, alt, sizeof alt);
            snprintf(err, n, "encode.layout \"stacked\": the %dx%d panorama is over the limit of %s (%d pixels a "
                     "side%s); %s", width, H, limit_name, limit, area_note(width, H, limit), alt);
            return -1;
        }
        set_stacked(out, width, H);
        snprintf(out->why, sizeof out->why, "configured: %dx%d fits %s (limit %d)", width, H, limit_name, limit);
        return 0;
    }
    /* encode.bands = 0 counts the bands by the rule of layout auto, so
     * that "bands" and "auto" agree: a software encoder one-camera bands
     * (one band when the whole panorama is small), NVENC the fewest bands
     * inside its limit */
    int sw_small = ncam == 1 || (long long)width * H <= SW_ONE_ENCODER_PIXELS;
    int auto_k = nvenc == 1 ? (fit ? fit : ncam) : sw_small ? 1 : ncam;
    if (e->layout == PC_LAYOUT_BANDS || e->bands) {
        int k = e->bands ? e->bands : auto_k;
        if (too_big(width, (long long)(ncam / k) * slab_h, limit)) {
            snprintf(err, n, "encode.bands = %d: bands of %dx%d are over the limit of %s (%d pixels a "
                     "side%s); use encode.bands = %d or more (a divisor of %d: %s)", k, width,
                     (ncam / k) * slab_h, limit_name, limit, area_note(width, (long long)(ncam / k) * slab_h, limit),
                     fit ? fit : ncam, ncam, divs);
            return -1;
        }
        set_bands(out, ncam, width, slab_h, k);
        const char *count = e->bands ? "" : nvenc == 1 ? ", the fewest inside the limit (encode.bands = 0, as auto)"
                                       : sw_small ? ", the panorama is small enough for one software encoder "
                                                    "(encode.bands = 0, as auto)"
                                                  : ", one camera each: a software encoder scales best so "
                                                    "(encode.bands = 0, as auto)";
        snprintf(out->why, sizeof out->why, "%s: %d band%s of %d camera%s (%dx%d each)%s", how, k,
                 k == 1 ? "" : "s", ncam / k, ncam / k == 1 ? "" : "s", width, (ncam / k) * slab_h, count);
        return 0;
    }
    /* auto */
    if (!fit) {
        snprintf(err, n, "encode.layout auto: one camera (%dx%d) is over the limit of %s (%d%s)", width, slab_h,
                 limit_name, limit, area_note(width, slab_h, limit));
        return -1;
    }
    if (nvenc != 1) {
        /* software: independent one-camera encoders scale far better than
         * one encoder's threads (16-core host, libx264 ultrafast,
         * BENCHMARKS.md: 5 cameras stacked with 16 threads 272 of 3003
         * frames over the 20 ms budget, 5 bands x 3 threads none; 16
         * cameras 8 bands x 2 threads 1304 over, 16 x 1 thread 484) */
        if (sw_small) {
            set_stacked(out, width, H);
            snprintf(out->why, sizeof out->why, "auto: the %dx%d panorama is small enough for one software encoder "
                     "(up to 2040x1080)", width, H);
            return 0;
        }
        set_bands(out, ncam, width, slab_h, ncam);
        int th = cores / ncam > 1 ? cores / ncam : 1;
        char tb[96];
        if (e->threads)
            snprintf(tb, sizeof tb, "encode.threads = %d each", e->threads);
        else
            snprintf(tb, sizeof tb, "%d thread%s each (%d core%s / %d cameras)", th, th == 1 ? "" : "s", cores,
                     cores == 1 ? "" : "s", ncam);
        snprintf(out->why, sizeof out->why, "auto: %s encoder: one-camera bands scale best (%d bands of %dx%d), %s",
                 nvenc == 0 ? "a software" : "no NVENC known, the rule of a software", ncam, width, slab_h, tb);
        return 0;
    }
    if (!too_big(width, H, limit)) {
        set_stacked(out, width, H);
        snprintf(out->why, sizeof out->why, "auto: %dx%d fits %s (limit %d)", width, H, limit_name, limit);
        return 0;
    }
    int gc = grid_fitting(ncam, width, slab_h, limit);
    if (gc) {
        set_grid(out, ncam, width, slab_h, gc);
        snprintf(out->why, sizeof out->why, "auto: the %dx%d panorama is too tall for %s (limit %d); grid %dx%d "
                 "(%dx%d), one NVENC session", width, H, limit_name, limit, out->grid_cols, out->grid_rows,
                 out->width, out->height);
        return 0;
    }
    set_bands(out, ncam, width, slab_h, fit);
    snprintf(out->why, sizeof out->why, "auto: the %dx%d panorama is too tall for %s (limit %d) and no grid of "
             "the cameras fits; %d bands of %d camera%s (%dx%d each)", width, H, limit_name, limit, fit,
             ncam / fit, ncam / fit == 1 ? "" : "s", width, out->height);
    return 0;
}
