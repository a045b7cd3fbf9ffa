/* picture_check.c - the checks every entry point does on its pictures
 * (picture.h): a frame size against the spec, a destination picture
 * against a size, a raw Bayer frame; and the Bayer mosaic of an RGB image
 * (tests, panocap-quality). Each message names the rule broken.
 */
#include "picture.h"
#include "picture_store.h"

#include "errmsg.h"

#include <stdint.h>

int pc_check_size(int width, int height, char *err, size_t errlen)
{
    if (width < PC_MIN_DIM || height < PC_MIN_DIM) {
        pc_set_err(err, errlen,
                   "frame size %dx%d: width and height must be at least %d "
                   "(reflect-101 border rule, algorithms.md §1.2)",
                   width, height, PC_MIN_DIM);
        return PC_EINVAL;
    }
    if (width > PC_MAX_DIM || height > PC_MAX_DIM) {
        pc_set_err(err, errlen, "frame size %dx%d: width and height must be at most %d",
                   width, height, PC_MAX_DIM);
        return PC_EINVAL;
    }
    if ((width | height) & 1) {
        pc_set_err(err, errlen,
                   "frame size %dx%d: width and height must be even "
                   "(whole 2x2 Bayer tiles, algorithms.md §1.2)",
                   width, height);
        return PC_EINVAL;
    }
    return PC_OK;
}

/* min_size: PC_MIN_DIM for demosaicing; 2 for the plain RGB -> YUV
 * conversion, which only needs whole 2x2 blocks (picture_store.h). */
int pc_check_picture_min(const pc_picture *pic, int width, int height, int min_size, char *err, size_t errlen)
{
    if (!pic) {
        pc_set_err(err, errlen, "destination picture is NULL");
        return PC_EINVAL;
    }
    int rc = min_size >= PC_MIN_DIM ? pc_check_size(width, height, err, errlen) : PC_OK;
    if (min_size < PC_MIN_DIM &&
        (width < min_size || height < min_size || width > PC_MAX_DIM || height > PC_MAX_DIM || ((width | height) & 1))) {
        pc_set_err(err, errlen, "picture size %dx%d: width and height must be even, %d..%d",
                   width, height, min_size, PC_MAX_DIM);
        rc = PC_EINVAL;
    }
    if (rc)
        return rc;
    int sw, sh;
    pc_picture_source_size(pic, &sw, &sh);
    if (pic->grid_cols > 1 && (pic->tile_rows < 2 || (pic->tile_rows & 1) || height % pic->tile_rows ||
                               (height / pic->tile_rows) % pic->grid_cols || pic->width % pic->grid_cols)) {
        pc_set_err(err, errlen, "destination grid picture %dx%d: %d tile columns of %d-row cameras do not tile a "
                   "%dx%d frame (whole cameras of an even number of rows, whole grid rows)", pic->width, pic->height,
                   pic->grid_cols, pic->tile_rows, width, height);
        return PC_EINVAL;
    }
    if (sw != width || sh != height) {
        pc_set_err(err, errlen, "destination picture is %dx%d%s, frame is %dx%d", pic->width, pic->height,
                   pic->grid_cols > 1 ? " (a grid)" : "", width, height);
        return PC_EINVAL;
    }
    size_t row[3];
    int np = pc_pixfmt_planes(pic->fmt);
    if (!np) {
        pc_set_err(err, errlen, "destination pixel format %d is not rgb24, nv12, i420 or rgbx32",
                   (int)pic->fmt);
        return PC_EINVAL;
    }
    if (pic->grid_cols > 1 && pic->fmt == PC_FMT_RGBX32) {
        pc_set_err(err, errlen, "destination rgbx32 picture %dx%d: a grid of %d tile columns is not supported "
                   "(rgbx32 is a stacked texture source; grids are for the encoder's nv12/i420)", pic->width,
                   pic->height, pic->grid_cols);
        return PC_EINVAL;
    }
    if (pic->bands && (pic->n_bands < 1 || pic->band_rows < 2 || (pic->band_rows & 1))) {
        pc_set_err(err, errlen, "destination picture: %d colour bands of %d rows (need at least one band of an even "
                   "number of rows)", pic->n_bands, pic->band_rows);
        return PC_EINVAL;
    }
    for (int p = 0; p < np; p++) /* the picture's own rows (a grid's are wider) */
        pc_picture_plane_size(pic->fmt, pic->width, pic->height, p, NULL, NULL, &row[p]);
    if (!pc_pixfmt_is_rgb(pic->fmt)) {
        if ((unsigned)pic->matrix > PC_MATRIX_BT601) {
            pc_set_err(err, errlen, "destination matrix %d is not bt709 or bt601", (int)pic->matrix);
            return PC_EINVAL;
        }
        if ((unsigned)pic->range > PC_RANGE_FULL) {
            pc_set_err(err, errlen, "destination range %d is not limited or full", (int)pic->range);
            return PC_EINVAL;
        }
    }
    for (int p = 0; p < np; p++) {
        if (!pic->plane[p]) {
            pc_set_err(err, errlen, "destination %s picture: plane %d is NULL",
                       pc_pixfmt_name(pic->fmt), p);
            return PC_EINVAL;
        }
        if (pic->pitch[p] < row[p]) {
            pc_set_err(err, errlen,
                       "destination %s picture %dx%d: plane %d pitch %zu is less than a row (%zu bytes)",
                       pc_pixfmt_name(pic->fmt), width, height, p, pic->pitch[p], row[p]);
            return PC_EINVAL;
        }
    }
    return PC_OK;
}

int pc_check_picture(const pc_picture *pic, int width, int height, char *err, size_t errlen)
{
    return pc_check_picture_min(pic, width, height, PC_MIN_DIM, err, errlen);
}

int pc_check_bayer(const pc_bayer *src, char *err, size_t errlen)
{
    if (!src) {
        pc_set_err(err, errlen, "source Bayer frame is NULL");
        return PC_EINVAL;
    }
    int rc = pc_check_size(src->width, src->height, err, errlen);
    if (rc)
        return rc;
    if (!src->data) {
        pc_set_err(err, errlen, "source Bayer frame %dx%d: data is NULL", src->width, src->height);
        return PC_EINVAL;
    }
    if (src->pitch < (size_t)src->width) {
        pc_set_err(err, errlen, "source Bayer frame %dx%d: pitch %zu is less than the width",
                   src->width, src->height, src->pitch);
        return PC_EINVAL;
    }
    if ((unsigned)src->cfa > PC_CFA_BGGR) {
        pc_set_err(err, errlen, "source Bayer frame: CFA pattern %d is not RGGB, GRBG, GBRG or BGGR",
                   (int)src->cfa);
        return PC_EINVAL;
    }
    if (src->cam_rows && (src->cam_rows < PC_MIN_DIM || (src->cam_rows & 1) || src->height % src->cam_rows)) {
        pc_set_err(err, errlen, "source Bayer frame %dx%d: cameras of %d rows (cam_rows) must be even, at least %d "
                   "and divide the height", src->width, src->height, src->cam_rows, PC_MIN_DIM);
        return PC_EINVAL;
    }
    return PC_OK;
}

enum { S_R = 0, S_B = 3 }; /* site = a | b<<1 (algorithms.md §1.1) */

int pc_mosaic_from_rgb(const uint8_t *rgb, size_t pitch, int w, int h, pc_cfa cfa,
                       uint8_t *raw, size_t raw_pitch, char *err, size_t errlen)
{
    if (!rgb || !raw) {
        pc_set_err(err, errlen, "mosaic: %s is NULL", rgb ? "raw destination" : "RGB source");
        return PC_EINVAL;
    }
    if (w <= 0 || h <= 0 || w > PC_MAX_DIM || h > PC_MAX_DIM) {
        pc_set_err(err, errlen, "mosaic: size %dx%d is out of range", w, h);
        return PC_EINVAL;
    }
    if ((unsigned)cfa > PC_CFA_BGGR) {
        pc_set_err(err, errlen, "mosaic: CFA pattern %d is not RGGB, GRBG, GBRG or BGGR", (int)cfa);
        return PC_EINVAL;
    }
    if (pitch < 3 * (size_t)w || raw_pitch < (size_t)w) {
        pc_set_err(err, errlen, "mosaic %dx%d: pitch too small (RGB %zu, raw %zu)", w, h, pitch, raw_pitch);
        return PC_EINVAL;
    }
    for (int y = 0; y < h; y++) {
        const uint8_t *s = rgb + (size_t)y * pitch;
        uint8_t *d = raw + (size_t)y * raw_pitch;
        for (int x = 0; x < w; x++) {
            int site = ((x & 1) | (y & 1) << 1) ^ (int)cfa;
            int ch = site == S_R ? 0 : site == S_B ? 2 : 1;
            d[x] = s[3 * x + ch];
        }
    }
    return PC_OK;
}
