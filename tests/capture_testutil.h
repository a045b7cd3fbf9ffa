/* capture_testutil.h - helpers shared by the capture tests: a test
 * panorama written as a PPM, the Bayer mosaic the tests expect a fake
 * camera to show (computed here, independently of the library), a
 * per-slab content check, and a private temporary folder. */
#ifndef PANOCAP_CAPTURE_TESTUTIL_H
#define PANOCAP_CAPTURE_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"

/* A W x H RGB picture whose every band of band_h rows looks different. */
static inline uint8_t *tu_panorama(int W, int H, int band_h)
{
    uint8_t *p = malloc((size_t)W * H * 3);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *q = p + ((size_t)y * W + x) * 3;
            int band = y / band_h;
            q[0] = (uint8_t)(x + 3 * y);
            q[1] = (uint8_t)((5 * x) ^ y);
            q[2] = (uint8_t)(band * 47 + x / 8 + 13);
        }
    return p;
}

static inline int tu_write_ppm(const char *path, const uint8_t *rgb, int W, int H)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fprintf(f, "P6\n%d %d\n255\n", W, H);
    size_t n = (size_t)W * H * 3;
    int ok = fwrite(rgb, 1, n, f) == n;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* The mosaic of band `part` (rows part*h ..) for pattern cfa. */
static inline void tu_mosaic(const uint8_t *rgb, int W, int h, int part, pc_cfa cfa, uint8_t *out)
{
    int ox = (cfa == PC_CFA_GRBG || cfa == PC_CFA_BGGR), oy = (cfa == PC_CFA_GBRG || cfa == PC_CFA_BGGR);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < W; x++) {
            int mx = (x & 1) == ox, my = (y & 1) == oy;
            int c = (mx && my) ? 0 : (!mx && !my) ? 2 : 1;
            out[(size_t)y * W + x] = rgb[(((size_t)part * h + y) * W + x) * 3 + c];
        }
}

/* Slab equals the expected mosaic outside the counter blocks and the bar. */
static inline int tu_slab_matches(const uint8_t *slab, size_t pitch, const uint8_t *want, int W, int h)
{
    for (int y = 0; y < h - PC_FAKE_BAR_ROWS; y++) {
        int x0 = y < PC_FAKE_COUNTER_ROWS ? PC_FAKE_COUNTER_COLS : 0;
        if (memcmp(slab + (size_t)y * pitch + x0, want + (size_t)y * W + x0, (size_t)(W - x0)) != 0)
            return 0;
    }
    return 1;
}

static inline const char *tu_tmpdir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/pc-capture-test-XXXXXX");
        if (!mkdtemp(dir))
            return "/tmp";
    }
    return dir;
}

static inline long tu_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

#endif
