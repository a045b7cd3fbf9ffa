/* picture_store.h - how 8-bit RGB reaches a destination picture: the §8
 * fixed-point RGB -> Y'CbCr of a 2x2 block (docs/algorithms.md) and the
 * rows a row pair lands in (a grid picture's in its camera's tile). Inline,
 * so that the demosaic reference's final pass (kernels/reference.c) keeps
 * the store in its loops; the out-of-line stores are for the other host
 * code that writes pictures (the render family, convert, net).
 *
 * Private to the kernels' rooms: not installed, not a public API.
 */
#ifndef PANOCAP_PICTURE_STORE_H
#define PANOCAP_PICTURE_STORE_H

#include "picture.h"

#define PC_STORE_INLINE static inline __attribute__((always_inline))

PC_STORE_INLINE int clamp8(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/* Destination rows of one row pair (y, y+1). RGB24, RGBX32: d[j] = row y+j.
 * YUV: d[j] = Y row y+j, c0 = chroma row y/2 (NV12 CbCr or I420 Cb),
 * c1 = I420 Cr row. */
typedef struct dstrows {
    uint8_t *d[2];
    uint8_t *c0, *c1;
} dstrows;

/* Stores one even-aligned 2x2 block of final 8-bit RGB: v[j][i] is pixel
 * (x0+i, y+j). */
PC_STORE_INLINE void store_block(int fmt, const pc_yuv_coeffs *yc, const dstrows *o, int x0,
                           const int v[2][2][3])
{
    if (pc_pixfmt_is_rgb(fmt)) {
        const int bpp = fmt == PC_FMT_RGB24 ? 3 : 4;
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                uint8_t *d = o->d[j] + bpp * (x0 + i);
                for (int c = 0; c < 3; c++)
                    d[c] = (uint8_t)v[j][i][c];
                if (bpp == 4)
                    d[3] = 255;
            }
        return;
    }
    int sr = 0, sg = 0, sb = 0;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            int r = v[j][i][0], g = v[j][i][1], b = v[j][i][2];
            o->d[j][x0 + i] = (uint8_t)clamp8((yc->y[0] * r + yc->y[1] * g + yc->y[2] * b + yc->y_offset) >> 16);
            sr += r;
            sg += g;
            sb += b;
        }
    const int coff = (128 << 18) + (1 << 17);
    int cb = clamp8((yc->cb[0] * sr + yc->cb[1] * sg + yc->cb[2] * sb + coff) >> 18);
    int cr = clamp8((yc->cr[0] * sr + yc->cr[1] * sg + yc->cr[2] * sb + coff) >> 18);
    if (fmt == PC_FMT_NV12) {
        o->c0[x0] = (uint8_t)cb;
        o->c0[x0 + 1] = (uint8_t)cr;
    } else {
        o->c0[x0 >> 1] = (uint8_t)cb;
        o->c1[x0 >> 1] = (uint8_t)cr;
    }
}

/* Rows y, y+1 (y even) of source-row numbering: a grid picture's land in
 * their camera's tile (pc_grid_offset). */
static inline void dstrows_for(const pc_picture *p, int y, dstrows *o)
{
    int off[3] = {0, 0, 0};
    if (p->grid_cols > 1)
        for (int i = 0; i < 3; i++)
            off[i] = pc_grid_offset(pc_grid_pack(p), p->width / p->grid_cols, p->fmt, i, y, (int)p->pitch[i]);
    o->d[0] = p->plane[0] + (size_t)y * p->pitch[0] + off[0];
    o->d[1] = o->d[0] + p->pitch[0];
    o->c0 = o->c1 = NULL;
    if (!pc_pixfmt_is_rgb(p->fmt))
        o->c0 = p->plane[1] + (size_t)(y >> 1) * p->pitch[1] + off[1];
    if (p->fmt == PC_FMT_I420)
        o->c1 = p->plane[2] + (size_t)(y >> 1) * p->pitch[2] + off[2];
}

/* Stores one even-aligned 2x2 block of final 8-bit RGB (v[j][i] is pixel
 * (x0+i, y+j)) in dst's format, through the §8 conversion for YUV. */
void pc_ref_store_block(const pc_picture *dst, const pc_yuv_coeffs *yc, int x0, int y, const int v[2][2][3]);

/* The same for a row pair of RGB: source rows y, y+1 (y even) are s0, s1,
 * w pixels of bpp bytes (3 RGB24, 4 RGBX32: X skipped), stored block by
 * block with yc (pc_rgb_to_yuv's loop; the CPU backend's convert.c). */
void pc_ref_store_rgb_rows(const pc_picture *dst, const pc_yuv_coeffs *yc, int y, const uint8_t *s0,
                           const uint8_t *s1, int bpp, int w);
/* The same for the pixels [xa, xb) of the row pair only (even bounds;
 * s0, s1 still point at pixel 0): a band of columns (net_cpu.c). */
void pc_ref_store_rgb_span(const pc_picture *dst, const pc_yuv_coeffs *yc, int y, const uint8_t *s0,
                           const uint8_t *s1, int bpp, int xa, int xb);

/* pc_check_picture with the smallest size allowed: PC_MIN_DIM for a
 * demosaic's destination, 2 (whole 2x2 blocks) for a conversion's. */
int pc_check_picture_min(const pc_picture *pic, int width, int height, int min_size, char *err, size_t errlen);

#endif
