/* fakepic.c - what a fake camera shows: its band of a picture (a photograph
 * file read with common/image.h, or a built-in synthetic panorama),
 * mosaiced with its Bayer pattern,
 * plus a moving element (the frame counter in binary blocks, and a bar that
 * walks along the bottom rows) so that repeated or stale frames show.
 *
 * The picture is scaled to cover width x (parts*height) and centre-cropped
 * (bilinear; exactly pixel for pixel when it already has that size); the
 * camera with part p shows rows p*height .. p*height+height-1 of it.
 * Rendering happens once, at open; each frame is a memcpy plus the counter.
 */
#include "capture_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

struct pc_fakepic {
    int width, height;
    pc_cfa cfa;
    uint8_t *mosaic; /* width x height */
};

/* colour of a CFA site: 0 R, 1 G, 2 B */
static int cfa_colour(pc_cfa cfa, int x, int y)
{
    int ox = (cfa == PC_CFA_GRBG || cfa == PC_CFA_BGGR);
    int oy = (cfa == PC_CFA_GBRG || cfa == PC_CFA_BGGR);
    int mx = (x & 1) == ox, my = (y & 1) == oy;
    if (mx && my)
        return 0;
    if (!mx && !my)
        return 2;
    return 1;
}

/* A synthetic panorama with smooth colour areas, sharp edges and fine
 * detail, so that demosaicing differences and the band order are visible.
 * The waves are sin(a(x) + b(y)) and cos(c(y) - d(x)), expanded with the
 * angle-sum rules so only one row and one column of sines are computed. */
typedef struct synth_tab {
    double *sa, *ca, *sd, *cd; /* per column */
} synth_tab;

static void synth_row(const synth_tab *tb, int Y, int W, int H, int cfa_y, pc_cfa cfa, uint8_t *out)
{
    double v = (double)Y / H;
    double sb = sin(6.2831853 * v * 0.25), cb = cos(6.2831853 * v * 0.25);
    double sc = sin(6.2831853 * v * 2.0), cc = cos(6.2831853 * v * 2.0);
    int cell = W / 12 > 0 ? W / 12 : 1;
    int cy = Y % cell - cell / 2;
    int lines = (Y % (H / 5 > 0 ? H / 5 : 1)) < H / 40;
    for (int x = 0; x < W; x++) {
        double r = 0.5 + 0.45 * (tb->sa[x] * cb + tb->ca[x] * sb);
        double g = 0.5 + 0.45 * (cc * tb->cd[x] + sc * tb->sd[x]);
        double b = 0.15 + 0.8 * v;
        int cx = x % cell - cell / 2;
        if ((double)cx * cx + (double)cy * cy < cell * (double)cell * 0.09) {
            r = 1.0 - r;
            g = 0.9;
            b = 1.0 - b;
        }
        if (lines && ((x + Y) / 3) % 4 == 0)
            r = g = b = 0.05;
        int c = cfa_colour(cfa, x, cfa_y);
        double val = c == 0 ? r : c == 1 ? g : b;
        int q = (int)(val * 255.0 + 0.5);
        out[x] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
    }
}

int pc_fakepic_create(pc_fakepic **out, const char *image, int part, int parts, int width,
                      int height, pc_cfa cfa, char *err, size_t errlen)
{
    *out = NULL;
    pc_fakepic *p = calloc(1, sizeof *p);
    if (!p || !(p->mosaic = malloc((size_t)width * height))) {
        free(p);
        PC_ERR(err, errlen, "fake camera picture: out of memory");
        return PC_ENOMEM;
    }
    p->width = width;
    p->height = height;
    p->cfa = cfa;
    int TW = width, TH = height * parts;
    if (!image) {
        synth_tab tb;
        double *all = malloc(sizeof(double) * 4 * (size_t)TW);
        if (!all) {
            free(p->mosaic);
            free(p);
            PC_ERR(err, errlen, "fake camera picture: out of memory");
            return PC_ENOMEM;
        }
        tb.sa = all;
        tb.ca = all + TW;
        tb.sd = all + 2 * TW;
        tb.cd = all + 3 * TW;
        for (int x = 0; x < TW; x++) {
            double u = (double)x / TW;
            tb.sa[x] = sin(6.2831853 * u * 1.5);
            tb.ca[x] = cos(6.2831853 * u * 1.5);
            tb.sd[x] = sin(6.2831853 * u * 0.5);
            tb.cd[x] = cos(6.2831853 * u * 0.5);
        }
        for (int y = 0; y < height; y++)
            synth_row(&tb, part * height + y, TW, TH, y, cfa, p->mosaic + (size_t)y * width);
        free(all);
        *out = p;
        return 0;
    }
    pc_image img;
    int rc = pc_image_read(image, &img, err, errlen);
    if (rc) {
        free(p->mosaic);
        free(p);
        return rc == PC_IMG_ENOMEM ? PC_ENOMEM : rc == PC_IMG_ENOTSUP ? PC_ENOTSUP : PC_EIO;
    }
    const uint8_t *rgb = img.rgb;
    int iw = img.width, ih = img.height;
    size_t ip = img.pitch;
    double s = fmax((double)TW / iw, (double)TH / ih);
    double x0 = (iw - TW / s) / 2.0, y0 = (ih - TH / s) / 2.0;
    for (int y = 0; y < height; y++) {
        int Y = part * height + y;
        double sy = (Y + 0.5) / s + y0 - 0.5;
        if (sy < 0)
            sy = 0;
        if (sy > ih - 1)
            sy = ih - 1;
        int iy = (int)sy;
        double fy = sy - iy;
        int iy1 = iy + 1 < ih ? iy + 1 : iy;
        for (int x = 0; x < width; x++) {
            double sx = (x + 0.5) / s + x0 - 0.5;
            if (sx < 0)
                sx = 0;
            if (sx > iw - 1)
                sx = iw - 1;
            int ix = (int)sx;
            double fx = sx - ix;
            int ix1 = ix + 1 < iw ? ix + 1 : ix;
            int c = cfa_colour(cfa, x, y);
            double a = rgb[(size_t)iy * ip + ix * 3 + c], b = rgb[(size_t)iy * ip + ix1 * 3 + c];
            double d = rgb[(size_t)iy1 * ip + ix * 3 + c], e = rgb[(size_t)iy1 * ip + ix1 * 3 + c];
            double v = (a * (1 - fx) + b * fx) * (1 - fy) + (d * (1 - fx) + e * fx) * fy;
            p->mosaic[(size_t)y * width + x] = (uint8_t)lrint(v);
        }
    }
    pc_image_free(&img);
    *out = p;
    return 0;
}

void pc_fakepic_fill(const pc_fakepic *p, uint8_t *dst, size_t pitch, int w, int h,
                     uint64_t counter)
{
    int cw = w < p->width ? w : p->width, ch = h < p->height ? h : p->height;
    if (w == p->width && h <= p->height && pitch == (size_t)w) {
        memcpy(dst, p->mosaic, (size_t)w * h);
    } else {
        for (int y = 0; y < ch; y++)
            memcpy(dst + (size_t)y * pitch, p->mosaic + (size_t)y * p->width, (size_t)cw);
    }
    if (w >= PC_FAKE_COUNTER_COLS && h >= PC_FAKE_COUNTER_ROWS + PC_FAKE_BAR_ROWS) {
        for (int y = 0; y < PC_FAKE_COUNTER_ROWS; y++)
            for (int b = 0; b < 32; b++)
                memset(dst + (size_t)y * pitch + b * 8, ((counter >> b) & 1) ? 255 : 0, 8);
        int bx = (int)((counter * 8) % (uint64_t)(w - 7));
        for (int y = h - PC_FAKE_BAR_ROWS; y < h; y++)
            memset(dst + (size_t)y * pitch + bx, 255, 8);
    }
}

void pc_fakepic_destroy(pc_fakepic *p)
{
    if (!p)
        return;
    free(p->mosaic);
    free(p);
}

int64_t pc_fake_counter_read(const uint8_t *slab, size_t pitch, int width, int height)
{
    if (!slab || width < PC_FAKE_COUNTER_COLS || height < PC_FAKE_COUNTER_ROWS + PC_FAKE_BAR_ROWS)
        return -1;
    uint64_t v = 0;
    for (int b = 0; b < 32; b++) {
        uint8_t first = slab[b * 8];
        if (first != 0 && first != 255)
            return -1;
        for (int y = 0; y < PC_FAKE_COUNTER_ROWS; y++)
            for (int x = 0; x < 8; x++)
                if (slab[(size_t)y * pitch + b * 8 + x] != first)
                    return -1;
        if (first)
            v |= 1ull << b;
    }
    return (int64_t)v;
}
