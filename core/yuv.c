/* yuv.c - the fixed-point RGB -> Y'CbCr of docs/algorithms.md §8
 * (picture.h): the Q16 coefficients of each matrix and range, the block
 * and row stores (picture_store.h) and the whole-picture conversion
 * pc_rgb_to_yuv. The demosaic's final pass stores through the same inline
 * code, so both agree byte for byte.
 */
#include "picture.h"
#include "picture_store.h"

#include "errmsg.h"

#include <string.h>

void pc_yuv_coeffs_get(pc_matrix m, pc_range r, pc_yuv_coeffs *out)
{
    static const int32_t tab[2][2][9] = {
        /* BT.709 */ {
            /* limited */ {11966, 40254, 4064, -6596, -22189, 28785, 28784, -26145, -2639},
            /* full */ {13933, 46871, 4732, -7509, -25259, 32768, 32768, -29763, -3005}},
        /* BT.601 */ {
            /* limited */ {16829, 33039, 6416, -9714, -19070, 28784, 28784, -24103, -4681},
            /* full */ {19595, 38470, 7471, -11058, -21710, 32768, 32768, -27439, -5329}},
    };
    if (!out)
        return;
    int mi = m == PC_MATRIX_BT601 ? 1 : 0;
    int ri = r == PC_RANGE_FULL ? 1 : 0;
    const int32_t *t = tab[mi][ri];
    for (int i = 0; i < 3; i++) {
        out->y[i] = t[i];
        out->cb[i] = t[3 + i];
        out->cr[i] = t[6 + i];
    }
    out->y_offset = ri ? (1 << 15) : (16 << 16) + (1 << 15);
}

void pc_ref_store_block(const pc_picture *dst, const pc_yuv_coeffs *yc, int x0, int y, const int v[2][2][3])
{
    dstrows o;
    dstrows_for(dst, y, &o);
    store_block(dst->fmt, yc, &o, x0, v);
}

void pc_ref_store_rgb_rows(const pc_picture *dst, const pc_yuv_coeffs *yc, int y, const uint8_t *s0,
                           const uint8_t *s1, int bpp, int w)
{
    pc_ref_store_rgb_span(dst, yc, y, s0, s1, bpp, 0, w);
}

void pc_ref_store_rgb_span(const pc_picture *dst, const pc_yuv_coeffs *yc, int y, const uint8_t *s0,
                           const uint8_t *s1, int bpp, int x0a, int x0b)
{
    dstrows o;
    dstrows_for(dst, y, &o);
    for (int x0 = x0a; x0 < x0b; x0 += 2) {
        int v[2][2][3];
        for (int i = 0; i < 2; i++)
            for (int c = 0; c < 3; c++) {
                v[0][i][c] = s0[bpp * (x0 + i) + c];
                v[1][i][c] = s1[bpp * (x0 + i) + c];
            }
        store_block(dst->fmt, yc, &o, x0, (const int(*)[2][3])v);
    }
}

int pc_rgb_to_yuv(const uint8_t *rgb, size_t rgb_pitch, const pc_picture *dst, char *err, size_t errlen)
{
    if (!dst) {
        pc_set_err(err, errlen, "destination picture is NULL");
        return PC_EINVAL;
    }
    if (!rgb) {
        pc_set_err(err, errlen, "RGB source is NULL");
        return PC_EINVAL;
    }
    if (dst->fmt != PC_FMT_NV12 && dst->fmt != PC_FMT_I420) {
        pc_set_err(err, errlen, "RGB -> YUV: destination format %s is not nv12 or i420",
                   pc_pixfmt_name(dst->fmt));
        return PC_EINVAL;
    }
    /* the RGB is the source: a grid picture's own size is its tiles' */
    int sw, sh;
    pc_picture_source_size(dst, &sw, &sh);
    int rc = pc_check_picture_min(dst, sw, sh, 2, err, errlen);
    if (rc)
        return rc;
    if (rgb_pitch < 3 * (size_t)sw) {
        pc_set_err(err, errlen, "RGB source %dx%d: pitch %zu is less than a row (%zu bytes)",
                   sw, sh, rgb_pitch, 3 * (size_t)sw);
        return PC_EINVAL;
    }
    pc_yuv_coeffs yc;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &yc);
    for (int y = 0; y < sh; y += 2) {
        if (dst->bands) {
            int b = y / dst->band_rows;
            yc = dst->bands[b < dst->n_bands ? b : dst->n_bands - 1];
        }
        const uint8_t *s0 = rgb + (size_t)y * rgb_pitch;
        pc_ref_store_rgb_rows(dst, &yc, y, s0, s0 + rgb_pitch, 3, sw);
    }
    return PC_OK;
}
