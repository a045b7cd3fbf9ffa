/* debayer_test_util.h - test inputs and comparisons shared by the kernel
 * tests (test_reference.c, test_yuv.c, test_cpu_backend.c, test_cuda.c,
 * test_cuda_emu.c): the xorshift generator and seeded uniform noise, a
 * synthetic natural-looking image, PPM loading, mosaicking, packed and
 * padded picture layouts on the host, poisoning and pixel-exact comparison
 * with a count of differing samples and the largest difference.
 * Header-only, static inline functions (each test uses a part). */
#ifndef PANOCAP_DEBAYER_TEST_UTIL_H
#define PANOCAP_DEBAYER_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debayer.h"
#include "debayer_cuda.h" /* pc_gpu_dst_align */

static inline uint32_t tu_rng(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static inline void tu_noise(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t s = seed | 1;
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(tu_rng(&s) >> 11);
}

/* A synthetic "photograph": smooth shading, a few hard-edged discs and
 * stripes of different colours, fine texture and a little noise; enough
 * to drive every direction/tie/clamp path of the algorithms the way a
 * natural image does. rgb is w*h*3. */
static inline void tu_synth(uint8_t *rgb, int w, int h, uint32_t seed)
{
    uint32_t s = seed | 1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double fx = (double)x / 97.0, fy = (double)y / 61.0;
            double base[3] = {120 + 80 * sin(fx) * cos(fy * 0.7), 110 + 90 * cos(fx * 0.5 + fy),
                              100 + 70 * sin(fx * 0.3 - fy * 0.8)};
            int disc = ((x % 173) - 86) * ((x % 173) - 86) + ((y % 131) - 65) * ((y % 131) - 65) < 40 * 40;
            int stripe = ((x + 2 * y) / 5) % 7 == 0;
            for (int c = 0; c < 3; c++) {
                double v = base[c];
                if (disc)
                    v = c == (x / 173 + y / 131) % 3 ? 235 : 25;
                if (stripe && x > w / 3)
                    v = 255 - v;
                v += 12 * sin(x * 1.3 + c) * sin(y * 0.9);
                v += (double)(tu_rng(&s) % 9) - 4;
                rgb[(size_t)3 * (y * w + x) + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
}

/* Loads a binary PPM (P6, maxval 255). Returns malloc'ed RGB or NULL. */
static inline uint8_t *tu_load_ppm(const char *path, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    int maxv = 0;
    uint8_t *rgb = NULL;
    if (fscanf(f, "P6 %d %d %d", w, h, &maxv) == 3 && maxv == 255 && *w > 0 && *h > 0 && fgetc(f) != EOF) {
        size_t n = (size_t)*w * *h * 3;
        rgb = (uint8_t *)malloc(n);
        if (rgb && fread(rgb, 1, n, f) != n) {
            free(rgb);
            rgb = NULL;
        }
    }
    fclose(f);
    return rgb;
}

/* Mosaics an image of iw x ih (mirror-tiled to w x h) into a Bayer frame. */
static inline void tu_mosaic(const uint8_t *rgb, int iw, int ih, uint8_t *bayer, int w, int h, pc_cfa cfa)
{
    int ox = cfa == PC_CFA_GRBG || cfa == PC_CFA_BGGR, oy = cfa == PC_CFA_GBRG || cfa == PC_CFA_BGGR;
    for (int y = 0; y < h; y++) {
        int sy = (y / ih) & 1 ? ih - 1 - y % ih : y % ih;
        for (int x = 0; x < w; x++) {
            int sx = (x / iw) & 1 ? iw - 1 - x % iw : x % iw;
            int a = (x - ox) & 1, b = (y - oy) & 1;
            int c = (a == 0 && b == 0) ? 0 : (a == 1 && b == 1) ? 2 : 1;
            bayer[(size_t)y * w + x] = rgb[((size_t)sy * iw + sx) * 3 + c];
        }
    }
}

/* Plane geometry of a picture of fmt (bytes per row, rows), from the
 * library's one geometry helper; returns the number of planes. */
static inline int tu_planes(pc_pixfmt fmt, int w, int h, size_t bw[3], int rows[3])
{
    int np = pc_pixfmt_planes(fmt);
    for (int i = 0; i < np; i++)
        pc_picture_plane_size(fmt, w, h, i, NULL, &rows[i], &bw[i]);
    return np;
}

/* Samples in the whole picture (all planes). */
static inline long tu_pic_samples(const pc_picture *p)
{
    size_t bw[3];
    int rows[3];
    int np = tu_planes(p->fmt, p->width, p->height, bw, rows);
    long n = 0;
    for (int i = 0; i < np; i++)
        n += (long)bw[i] * rows[i];
    return n;
}

/* The rule MLRI's kernels keep against its float reference (docs/mlri.md),
 * on the device and in the emulation: every output sample within 1 code
 * value, at least 99.99 % identical. nd = differing samples (-1: the run
 * failed), md = the largest difference. */
static inline int tu_mlri_rule(long nd, int md, const pc_picture *ref)
{
    return nd >= 0 && md <= 1 && nd * 10000 <= tu_pic_samples(ref);
}

/* The rule the learned demosaic's CPU backend and CUDA path keep against
 * its float reference (docs/net.md): every output sample within 1 code
 * value, at least 99.9 % identical (sums in another order, fused
 * multiply-adds, fp16 on the GPU). */
static inline int tu_net_rule(long nd, int md, const pc_picture *ref)
{
    return nd >= 0 && md <= 1 && nd * 1000 <= tu_pic_samples(ref);
}

/* A packed picture in one buffer: RGB24 (pitch 3w), RGBX32 (4w), NV12 or
 * I420 (pitch w, w/2). buf may be NULL (size only). Returns its size in bytes. */
static inline size_t tu_pic_layout(pc_picture *p, int fmt, int matrix, int range, int w, int h, uint8_t *buf)
{
    return pc_picture_layout(p, (pc_pixfmt)fmt, (pc_matrix)matrix, (pc_range)range, w, h, 1, buf);
}

/* Host picture with pitch = row bytes + pad (pad catches pitch bugs). */
static inline int tu_pic_alloc(pc_picture *p, pc_pixfmt fmt, pc_matrix m, pc_range r, int w, int h, size_t pad)
{
    memset(p, 0, sizeof *p);
    p->fmt = fmt;
    p->matrix = m;
    p->range = r;
    p->width = w;
    p->height = h;
    size_t bw[3];
    int rows[3];
    int np = tu_planes(fmt, w, h, bw, rows);
    for (int i = 0; i < np; i++) {
        p->pitch[i] = bw[i] + pad;
        p->plane[i] = (uint8_t *)malloc(p->pitch[i] * rows[i]);
        if (!p->plane[i])
            return -1;
    }
    return 0;
}

/* Host picture laid out as the CUDA kernels require of a destination (and
 * as pc_gpu_debayer checks): every pitch a multiple of pc_gpu_dst_align
 * (4: they store 2 and 4 bytes at once; 16 for RGBX32), at least row
 * bytes + pad, so pitch != row bytes still catches pitch bugs; malloc's
 * planes are 16-byte aligned. For the kernels' CPU emulation. */
static inline int tu_pic_alloc_dev(pc_picture *p, pc_pixfmt fmt, pc_matrix m, pc_range r, int w, int h, size_t pad)
{
    if (tu_pic_alloc(p, fmt, m, r, w, h, 0))
        return -1;
    size_t bw[3];
    int rows[3];
    int np = tu_planes(fmt, w, h, bw, rows);
    for (int i = 0; i < np; i++) {
        free(p->plane[i]);
        size_t a = pc_gpu_dst_align(fmt);
        p->pitch[i] = (bw[i] + pad + a - 1) & ~(a - 1);
        p->plane[i] = (uint8_t *)malloc(p->pitch[i] * rows[i]);
        if (!p->plane[i])
            return -1;
    }
    return 0;
}

static inline void tu_pic_free(pc_picture *p)
{
    for (int i = 0; i < 3; i++) {
        free(p->plane[i]);
        p->plane[i] = NULL;
    }
}

static inline void tu_pic_fill(const pc_picture *p, int v)
{
    size_t bw[3];
    int rows[3];
    int np = tu_planes(p->fmt, p->width, p->height, bw, rows);
    for (int i = 0; i < np; i++)
        memset(p->plane[i], v, p->pitch[i] * rows[i]);
}

/* Counts the samples (visible part of every plane) that differ by more
 * than tol; *maxdiff the largest difference. */
static inline long tu_count_over(const pc_picture *a, const pc_picture *b, int tol, int *maxdiff)
{
    size_t bw[3];
    int rows[3];
    int np = tu_planes(a->fmt, a->width, a->height, bw, rows);
    long n = 0;
    int md = 0;
    for (int i = 0; i < np; i++)
        for (int y = 0; y < rows[i]; y++) {
            const uint8_t *ra = a->plane[i] + (size_t)y * a->pitch[i], *rb = b->plane[i] + (size_t)y * b->pitch[i];
            for (size_t x = 0; x < bw[i]; x++) {
                const int d = abs((int)ra[x] - (int)rb[x]);
                n += d > tol;
                md = d > md ? d : md;
            }
        }
    *maxdiff = md;
    return n;
}

/* Counts differing samples over the visible part of every plane. */
static inline long tu_compare(const pc_picture *a, const pc_picture *b, int *maxdiff)
{
    return tu_count_over(a, b, 0, maxdiff);
}

/* Counts the samples of the stacked picture s that differ from their
 * place in the grid picture g (encode.layout "grid": camera t, tile_rows
 * rows of s, at tile column t % grid_cols, tile row t / grid_cols). Written
 * from that definition, not through pc_grid_offsets, so that it checks it.
 * -1 when g is not a grid of s's cameras. */
static inline long tu_grid_compare(const pc_picture *s, const pc_picture *g)
{
    int C = g->grid_cols, T = g->tile_rows;
    if (C < 2 || T < 2 || g->fmt != s->fmt || g->width != s->width * C || g->height * C != s->height)
        return -1;
    size_t bw[3];
    int rows[3];
    int np = tu_planes(s->fmt, s->width, s->height, bw, rows);
    long n = 0;
    for (int i = 0; i < np; i++) {
        int tr = i > 0 && s->fmt != PC_FMT_RGB24 ? T / 2 : T; /* the plane's rows per camera */
        for (int y = 0; y < rows[i]; y++) {
            int t = y / tr, gy = (t / C) * tr + y % tr;
            const uint8_t *rs = s->plane[i] + (size_t)y * s->pitch[i];
            const uint8_t *rg = g->plane[i] + (size_t)gy * g->pitch[i] + (size_t)(t % C) * bw[i];
            for (size_t x = 0; x < bw[i]; x++)
                n += rs[x] != rg[x];
        }
    }
    return n;
}

#endif
