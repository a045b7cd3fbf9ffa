/* yuv_to_rgb.c - a picture the encoders get (NV12, I420; RGB24/RGBX32
 * copied) back to RGB24 on the host, as a player shows it: the inverse of
 * spec §8's conversion (pc_yuv_coeffs_get, the picture's matrix and
 * range) in double precision, each 2x2 block's chroma sample for its four
 * pixels (the kernels write the block's mean), rounded and clamped. What
 * the daemon's snapshot of the panorama or a view writes (the stream's
 * picture before the encoder); a round trip through pc_rgb_to_yuv changes
 * a luma value by at most 1 where no channel clamps. */
#include "picture.h"

#include "errmsg.h"

#include <math.h>
#include <string.h>

static uint8_t clamp8(double v) { return v <= 0.0 ? 0 : v >= 255.0 ? 255 : (uint8_t)lrint(v); }

int pc_yuv_to_rgb(const pc_picture *src, uint8_t *rgb, size_t rgb_pitch, char *err, size_t errlen)
{
    if (!src || !rgb || src->width < 2 || src->height < 2 || rgb_pitch < 3 * (size_t)src->width) {
        pc_set_err(err, errlen, "yuv to rgb: bad arguments (%dx%d, pitch %zu)", src ? src->width : 0,
                   src ? src->height : 0, rgb_pitch);
        return PC_EINVAL;
    }
    if (src->fmt == PC_FMT_RGB24 || src->fmt == PC_FMT_RGBX32) {
        const int bpp = src->fmt == PC_FMT_RGB24 ? 3 : 4;
        for (int y = 0; y < src->height; y++) {
            const uint8_t *s = src->plane[0] + (size_t)y * src->pitch[0];
            uint8_t *d = rgb + (size_t)y * rgb_pitch;
            for (int x = 0; x < src->width; x++)
                memcpy(d + 3 * x, s + bpp * x, 3);
        }
        return 0;
    }
    if ((src->fmt != PC_FMT_NV12 && src->fmt != PC_FMT_I420) || (src->width & 1) || (src->height & 1) ||
        src->grid_cols > 1) {
        pc_set_err(err, errlen, "yuv to rgb: a %dx%d %s%s picture is not NV12 or I420 of even sides", src->width,
                   src->height, pc_pixfmt_name(src->fmt), src->grid_cols > 1 ? " grid" : "");
        return PC_EINVAL;
    }
    /* Y = (y . rgb) / 2^16 + yo, Cb = (cb . rgb) / 2^16 + 128, Cr alike:
     * the 3x3 matrix inverted once */
    pc_yuv_coeffs c;
    pc_yuv_coeffs_get(src->matrix, src->range, &c);
    double m[3][3], inv[3][3];
    for (int k = 0; k < 3; k++) {
        m[0][k] = c.y[k] / 65536.0;
        m[1][k] = c.cb[k] / 65536.0;
        m[2][k] = c.cr[k] / 65536.0;
    }
    const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                       m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                       m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            /* the cofactor of m[j][i], over the determinant */
            const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            inv[i][j] = (m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]) / det;
        }
    const double yo = src->range == PC_RANGE_FULL ? 0.0 : 16.0;
    for (int y = 0; y < src->height; y++) {
        const uint8_t *yr = src->plane[0] + (size_t)y * src->pitch[0];
        uint8_t *d = rgb + (size_t)y * rgb_pitch;
        for (int x = 0; x < src->width; x++) {
            const uint8_t *cb, *cr;
            if (src->fmt == PC_FMT_NV12) {
                cb = src->plane[1] + (size_t)(y / 2) * src->pitch[1] + 2 * (size_t)(x / 2);
                cr = cb + 1;
            } else {
                cb = src->plane[1] + (size_t)(y / 2) * src->pitch[1] + (size_t)(x / 2);
                cr = src->plane[2] + (size_t)(y / 2) * src->pitch[2] + (size_t)(x / 2);
            }
            const double v[3] = {yr[x] - yo, *cb - 128.0, *cr - 128.0};
            for (int k = 0; k < 3; k++)
                d[3 * x + k] = clamp8(inv[k][0] * v[0] + inv[k][1] * v[1] + inv[k][2] * v[2]);
        }
    }
    return 0;
}
