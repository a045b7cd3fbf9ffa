/* test_layout.c - encode.layout resolved (config/settings_layout.c): the
 * automatic choice (software encoders: one-camera bands; NVENC: stacked
 * if it fits, else a grid, else bands) with its reason,
 * and the refusals: band counts that do not divide the cameras, a stacked
 * panorama, a grid or a band over the encoder's limit (the error names the
 * limit and the layout that would fit), grids that are not the cameras.
 * Also through the configuration check: file:key errors. */
#include "tap.h"

#include "settings.h"

#include <string.h>

#define W 2040
#define SLAB 1080

static pc_encode_settings enc(const char *encoder, int codec, int layout, int bands)
{
    pc_encode_settings e;
    memset(&e, 0, sizeof e);
    snprintf(e.encoder, sizeof e.encoder, "%s", encoder);
    e.codec = codec;
    e.layout = layout;
    e.bands = bands;
    return e;
}

int main(void)
{
    pc_layout_plan lp;
    char err[512] = "";
    pc_encode_settings e;

    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_AUTO, 0);
    int r = pc_layout_resolve(&e, 5, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_BANDS && lp.bands == 5 && lp.width == W && lp.height == SLAB &&
                  strstr(lp.why, "auto") && strstr(lp.why, "3 threads each (16 cores / 5 cameras)"),
              "5 cameras, auto, software, 16 cores: 5 one-camera bands of 3 threads each (%s)", r ? err : lp.why);

    r = pc_layout_resolve(&e, 16, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_BANDS && lp.bands == 16 && lp.height == SLAB &&
                  strstr(lp.why, "16 bands of 2040x1080") && strstr(lp.why, "1 thread each"),
              "16 cameras, auto, software: 16 one-camera bands, 1 thread each (%s)", r ? err : lp.why);

    r = pc_layout_resolve(&e, 1, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_STACKED && lp.height == SLAB,
              "1 camera, auto, software: stacked (%s)", r ? err : lp.why);

    r = pc_layout_resolve(&e, 2, 640, 360, 0, 2, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_STACKED && lp.height == 720 && strstr(lp.why, "small enough"),
              "2 cameras of 640x360, auto, software: stacked, small enough for one encoder (%s)", r ? err : lp.why);

    r = pc_layout_resolve(&e, 16, W, SLAB, 1, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_GRID && lp.bands == 1 && lp.grid_cols == 4 && lp.grid_rows == 4 &&
                  lp.width == 8160 && lp.height == 4320 && strstr(lp.why, "too tall") && strstr(lp.why, "NVENC HEVC"),
              "16 cameras, auto, NVENC HEVC: grid 4x4 = 8160x4320, inside 8192 (%s)", r ? err : lp.why);

    r = pc_layout_resolve(&e, 7, W, SLAB, 1, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_STACKED && lp.height == 7560,
              "7 cameras, NVENC HEVC: stacked 2040x7560 (%s)", r ? err : lp.why);

    r = pc_layout_resolve(&e, 11, W, SLAB, 1, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_BANDS && lp.bands == 11 && strstr(lp.why, "no grid"),
              "11 cameras, NVENC HEVC: too tall, no grid of 11 fits: 11 bands (%s)", r ? err : lp.why);

    /* grid: configured, its shape, and its refusals */
    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_GRID, 0);
    r = pc_layout_resolve(&e, 16, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_GRID && lp.grid_cols == 4 && lp.width == 8160 && lp.height == 4320 &&
                  strstr(lp.why, "closest to square"),
              "grid, 16 cameras: 4x4 (closest to square) (%s)", r ? err : lp.why);
    r = pc_layout_resolve(&e, 6, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.grid_cols == 2 && lp.grid_rows == 3 && lp.width == 4080 && lp.height == 3240,
              "grid, 6 cameras: 2x3 = 4080x3240 (%s)", r ? err : lp.why);
    snprintf(e.grid, sizeof e.grid, "8x2");
    r = pc_layout_resolve(&e, 16, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.grid_cols == 8 && lp.grid_rows == 2 && lp.width == 16320 && lp.height == 2160 &&
                  strstr(lp.why, "configured"),
              "encode.grid \"8x2\", software: 16320x2160 (%s)", r ? err : lp.why);
    e = enc("hevc_nvenc", PC_CODEC_HEVC, PC_LAYOUT_GRID, 0);
    snprintf(e.grid, sizeof e.grid, "8x2");
    r = pc_layout_resolve(&e, 16, W, SLAB, -1, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "NVENC HEVC") && strstr(err, "8192") && strstr(err, "16320x2160") &&
                  strstr(err, "encode.grid = \"4x4\"") && strstr(err, "encode.bands = 4"),
              "encode.grid \"8x2\" with hevc_nvenc: refused, naming 8192 and the 4x4 grid that fits (%s)", err);
    e = enc("h264_nvenc", PC_CODEC_H264, PC_LAYOUT_GRID, 0);
    r = pc_layout_resolve(&e, 16, W, SLAB, -1, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "no grid") && strstr(err, "4096") && strstr(err, "encode.bands = 8"),
              "grid of 16 cameras with h264_nvenc: no grid fits 4096, bands = 8 would (%s)", err);
    e = enc("hevc_nvenc", PC_CODEC_HEVC, PC_LAYOUT_GRID, 0);
    r = pc_layout_resolve(&e, 5, W, SLAB, -1, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "8192") && strstr(err, "encode.layout = \"stacked\" (2040x5400)"),
              "grid of 5 cameras with hevc_nvenc (5x1 = 10200 wide): refused, stacked would fit (%s)", err);
    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_GRID, 0);
    snprintf(e.grid, sizeof e.grid, "3x5");
    r = pc_layout_resolve(&e, 16, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "not the cameras") && strstr(err, "2x8, 4x4, 8x2"),
              "encode.grid \"3x5\" of 16 cameras: refused, listing the grids of 16 (%s)", err);
    snprintf(e.grid, sizeof e.grid, "four");
    r = pc_layout_resolve(&e, 16, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "columns x rows"), "encode.grid \"four\": refused, how to write it (%s)", err);
    e = enc("hevc_nvenc", PC_CODEC_HEVC, PC_LAYOUT_GRID, 0);
    r = pc_layout_resolve(&e, 6, 262, 26, 1, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "262 pixels wide") && strstr(err, "multiple of 4") && strstr(err, "bands"),
              "grid of cameras 262 pixels wide: refused (tiles off the kernels' store alignment), bands named (%s)",
              err);
    e = enc("hevc_nvenc", PC_CODEC_HEVC, PC_LAYOUT_AUTO, 0);
    r = pc_layout_resolve(&e, 16, 2042, SLAB, 1, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_BANDS, "16 cameras 2042 wide, auto, NVENC HEVC: no grid, bands (%s)",
              r ? err : lp.why);
    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_BANDS, 0);
    snprintf(e.grid, sizeof e.grid, "4x4");
    r = pc_layout_resolve(&e, 16, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "needs encode.layout \"grid\""), "encode.grid with layout bands: refused (%s)",
              err);

    e = enc("libx264", PC_CODEC_HEVC, PC_LAYOUT_STACKED, 0);
    r = pc_layout_resolve(&e, 16, W, SLAB, -1, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "16384") && strstr(err, "2040x17280") && strstr(err, "encode.bands = 2"),
              "stacked 16 cameras with libx264: refused, naming the limit and bands = 2 (%s)", err);

    /* 8 cameras 16384x2040 stacked: inside 16384 a side, over libavcodec's
     * area (16384x16320); bands of 4 cameras fit */
    e = enc("libx264", PC_CODEC_HEVC, PC_LAYOUT_STACKED, 0);
    r = pc_layout_resolve(&e, 8, 16384, 2040, -1, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "16384x16320") && strstr(err, "(width + 128) x (height + 128)") &&
                  strstr(err, "encode.bands = 2"),
              "stacked 8 cameras 16384x2040 with libx264: refused, over libavcodec's area, bands = 2 named (%s)", err);

    e = enc("hevc_nvenc", PC_CODEC_HEVC, PC_LAYOUT_STACKED, 0);
    r = pc_layout_resolve(&e, 16, W, SLAB, -1, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "NVENC HEVC") && strstr(err, "8192") && strstr(err, "encode.bands = 4") &&
                  strstr(err, "2040x4320"),
              "stacked 16 cameras with hevc_nvenc: refused, naming 8192 and bands = 4 of 2040x4320 (%s)", err);

    e = enc("h264_nvenc", PC_CODEC_H264, PC_LAYOUT_BANDS, 2);
    r = pc_layout_resolve(&e, 8, W, SLAB, -1, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "NVENC H.264") && strstr(err, "4096") && strstr(err, "encode.bands = 4"),
              "2 bands of 4 cameras with h264_nvenc (4320 rows): refused, naming 4096 and bands = 4 (%s)", err);

    e = enc("h264_nvenc", PC_CODEC_H264, PC_LAYOUT_AUTO, 0);
    r = pc_layout_resolve(&e, 5, W, SLAB, -1, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_BANDS && lp.bands == 5 && strstr(lp.why, "NVENC H.264 (limit 4096)"),
              "5 cameras, auto, h264_nvenc: 5 bands of one camera, inside 4096 (%s)", r ? err : lp.why);

    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_BANDS, 3);
    r = pc_layout_resolve(&e, 5, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "does not divide the 5 cameras") && strstr(err, "possible: 1, 5"),
              "3 bands of 5 cameras: refused with the reason and the possible counts (%s)", err);

    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_BANDS, 5);
    r = pc_layout_resolve(&e, 5, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_BANDS && lp.bands == 5 && lp.height == SLAB,
              "5 bands of 5 cameras: one camera each (%s)", r ? err : lp.why);

    /* layout bands with bands = 0 counts the bands as auto does (a 2-core
     * machine got one band of all cameras from "bands", one-camera bands
     * from "auto") */
    for (int cores = 2; cores <= 16; cores += 14) {
        pc_layout_plan la;
        pc_encode_settings ea = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_AUTO, 0);
        e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_BANDS, 0);
        r = pc_layout_resolve(&e, 5, W, SLAB, 0, cores, &lp, err, sizeof err);
        int ra = pc_layout_resolve(&ea, 5, W, SLAB, 0, cores, &la, err, sizeof err);
        TAP_CHECK(r == 0 && ra == 0 && lp.layout == PC_LAYOUT_BANDS && lp.bands == la.bands && lp.bands == 5 &&
                      strstr(lp.why, "as auto"),
                  "software, %d cores: layout bands with bands = 0 gives the bands auto gives (%d and %d: %s)", cores,
                  lp.bands, la.bands, r ? err : lp.why);
    }
    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_BANDS, 0);
    r = pc_layout_resolve(&e, 2, 640, 360, 0, 2, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.bands == 1 && strstr(lp.why, "small enough"),
              "software, a small panorama: bands = 0 is one band, as auto's one picture (%s)", r ? err : lp.why);
    e = enc("hevc_nvenc", PC_CODEC_HEVC, PC_LAYOUT_BANDS, 0);
    r = pc_layout_resolve(&e, 16, W, SLAB, 1, 2, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.bands == 4 && lp.height == 4 * SLAB && strstr(lp.why, "fewest"),
              "NVENC HEVC, 16 cameras: bands = 0 is the fewest bands inside 8192 (4 of 4 cameras: %s)",
              r ? err : lp.why);

    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_STACKED, 2);
    r = pc_layout_resolve(&e, 4, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "needs encode.layout \"bands\""), "bands with layout stacked: refused (%s)", err);

    /* through the configuration check (key and message) */
    static pc_settings s;
    pc_settings_defaults(&s);
    char msg[2048];
    int rc = pc_settings_set(&s, "capture.cameras", "5", msg, sizeof msg);
    rc |= pc_settings_set(&s, "encode.layout", "bands", msg, sizeof msg);
    rc |= pc_settings_set(&s, "encode.bands", "2", msg, sizeof msg);
    pc_settings_finish(&s);
    TAP_CHECK(rc == 0, "encode.layout/encode.bands are settings (%s)", rc ? msg : "ok");
    static pc_diag d;
    pc_diag_init(&d);
    pc_settings_validate(&s, &d);
    int found = 0;
    for (int i = 0; i < d.count; i++) {
        pc_diag_format(&d.item[i], msg, sizeof msg);
        if (d.item[i].severity == PC_DIAG_ERROR && strstr(msg, "encode.bands") && strstr(msg, "does not divide"))
            found = 1;
        tap_diag("%s", msg);
    }
    TAP_CHECK(d.errors > 0 && found, "configuration check: encode.bands = 2 of 5 cameras is an error");

    /* a grid over NVENC's limit: an error at encode.grid naming it */
    pc_settings_defaults(&s);
    rc = pc_settings_set(&s, "capture.cameras", "16", msg, sizeof msg);
    rc |= pc_settings_set(&s, "encode.encoder", "hevc_nvenc", msg, sizeof msg);
    rc |= pc_settings_set(&s, "encode.layout", "grid", msg, sizeof msg);
    rc |= pc_settings_set(&s, "encode.grid", "8x2", msg, sizeof msg);
    pc_settings_finish(&s);
    TAP_CHECK(rc == 0, "encode.grid is a setting (%s)", rc ? msg : "ok");
    pc_diag_init(&d);
    pc_settings_validate(&s, &d);
    found = 0;
    for (int i = 0; i < d.count; i++) {
        pc_diag_format(&d.item[i], msg, sizeof msg);
        if (d.item[i].severity == PC_DIAG_ERROR && strstr(msg, "encode.grid") && strstr(msg, "8192") &&
            strstr(msg, "\"4x4\""))
            found = 1;
        tap_diag("%s", msg);
    }
    TAP_CHECK(found, "configuration check: a 16320-wide grid for hevc_nvenc is an error at encode.grid naming 8192 "
              "and the 4x4 grid");
    return tap_done();
}
