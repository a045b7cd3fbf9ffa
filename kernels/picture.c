/* picture.c - plane geometry of the output formats (debayer.h): how many
 * planes a format has, how big each one is, a one-buffer layout and a
 * host copy. Written once here; the reference's checks, the backends, the
 * pipeline and the tests all ask these functions. */
#include "debayer.h"

#include <string.h>

int pc_pixfmt_planes(pc_pixfmt fmt)
{
    switch (fmt) {
    case PC_FMT_RGB24: return 1;
    case PC_FMT_NV12: return 2;
    case PC_FMT_I420: return 3;
    }
    return 0;
}

int pc_picture_plane_size(pc_pixfmt fmt, int width, int height, int plane, int *plane_w, int *plane_h,
                          size_t *row_bytes)
{
    if (plane < 0 || plane >= pc_pixfmt_planes(fmt))
        return PC_EINVAL;
    int pw = width, ph = height;
    size_t rb = (size_t)width;
    if (fmt == PC_FMT_RGB24) {
        rb = 3 * (size_t)width;
    } else if (plane > 0) { /* 4:2:0 chroma: one sample (NV12: one CbCr pair) per 2x2 block */
        pw = width / 2;
        ph = height / 2;
        rb = fmt == PC_FMT_NV12 ? 2 * (size_t)pw : (size_t)pw;
    }
    if (plane_w)
        *plane_w = pw;
    if (plane_h)
        *plane_h = ph;
    if (row_bytes)
        *row_bytes = rb;
    return 0;
}

size_t pc_picture_layout(pc_picture *pic, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width, int height,
                         size_t align, uint8_t *buf)
{
    memset(pic, 0, sizeof *pic);
    pic->fmt = fmt;
    pic->matrix = matrix;
    pic->range = range;
    pic->width = width;
    pic->height = height;
    if (align < 1)
        align = 1;
    size_t off = 0;
    int np = pc_pixfmt_planes(fmt);
    for (int i = 0; i < np; i++) {
        int rows;
        size_t rb;
        pc_picture_plane_size(fmt, width, height, i, NULL, &rows, &rb);
        pic->pitch[i] = (rb + align - 1) & ~(align - 1);
        pic->plane[i] = buf ? buf + off : NULL;
        off += pic->pitch[i] * (size_t)rows;
    }
    return off;
}

void pc_picture_copy(const pc_picture *dst, const pc_picture *src)
{
    int np = pc_pixfmt_planes(src->fmt);
    for (int i = 0; i < np; i++) {
        int rows;
        size_t rb;
        pc_picture_plane_size(src->fmt, src->width, src->height, i, NULL, &rows, &rb);
        for (int y = 0; y < rows; y++)
            memcpy(dst->plane[i] + (size_t)y * dst->pitch[i], src->plane[i] + (size_t)y * src->pitch[i], rb);
    }
}
