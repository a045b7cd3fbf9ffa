/* test_layout.c - encode.layout resolved (config/settings_layout.c): the
 * automatic choice (stacked where the encoder takes the panorama and a
 * software encoder keeps up, else bands of whole cameras) with its reason,
 * and the refusals: band counts that do not divide the cameras, a stacked
 * panorama or a band over the encoder's limit (the error names the limit
 * and the layout that would fit), grid not available. Also through the
 * configuration check: file:key errors. */
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
    char err[512];
    pc_encode_settings e;

    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_AUTO, 0);
    int r = pc_layout_resolve(&e, 5, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_STACKED && lp.bands == 1 && lp.width == W && lp.height == 5400 &&
                  strstr(lp.why, "auto"),
              "5 cameras, auto, software: stacked 2040x5400 (%s)", r ? err : lp.why);

    r = pc_layout_resolve(&e, 16, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_BANDS && lp.bands == 8 && lp.height == 2160 &&
                  strstr(lp.why, "8 bands of 2 cameras"),
              "16 cameras, auto, software: 8 bands of 2 cameras (%s)", r ? err : lp.why);

    r = pc_layout_resolve(&e, 16, W, SLAB, 1, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_BANDS && lp.bands == 4 && lp.height == 4320 &&
                  strstr(lp.why, "too tall") && strstr(lp.why, "NVENC HEVC"),
              "16 cameras, auto, NVENC HEVC: 4 bands of 4320 rows, inside 8192 (%s)", r ? err : lp.why);

    r = pc_layout_resolve(&e, 7, W, SLAB, 1, 16, &lp, err, sizeof err);
    TAP_CHECK(r == 0 && lp.layout == PC_LAYOUT_STACKED && lp.height == 7560,
              "7 cameras, NVENC HEVC: stacked 2040x7560 (%s)", r ? err : lp.why);

    e = enc("libx264", PC_CODEC_HEVC, PC_LAYOUT_STACKED, 0);
    r = pc_layout_resolve(&e, 16, W, SLAB, -1, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "16384") && strstr(err, "2040x17280") && strstr(err, "encode.bands = 2"),
              "stacked 16 cameras with libx264: refused, naming the limit and bands = 2 (%s)", err);

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

    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_STACKED, 2);
    r = pc_layout_resolve(&e, 4, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "needs encode.layout \"bands\""), "bands with layout stacked: refused (%s)", err);

    e = enc("auto", PC_CODEC_HEVC, PC_LAYOUT_GRID, 0);
    r = pc_layout_resolve(&e, 16, W, SLAB, 0, 16, &lp, err, sizeof err);
    TAP_CHECK(r != 0 && strstr(err, "grid") && strstr(err, "bands"), "grid: refused with what to use (%s)", err);

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
    return tap_done();
}
