/* picture.c - plane geometry of the output formats (picture.h): how many
 * planes a format has, how big each one is, a one-buffer layout and a
 * host copy; and the names of the CFA phases, formats, matrices and
 * ranges. Written once here; the checks, the backends, the pipeline and
 * the tests all ask these functions. */
#include "picture.h"

#include <string.h>
#include <strings.h>

static int index_of(const char *name, const char *const *names, int n)
{
    if (!name)
        return -1;
    for (int i = 0; i < n; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

static const char *const cfa_names[] = {"RGGB", "GRBG", "GBRG", "BGGR"};
static const char *const pixfmt_names[] = {"rgb24", "nv12", "i420", "rgbx32"};
static const char *const matrix_names[] = {"bt709", "bt601"};
static const char *const range_names[] = {"limited", "full"};

int pc_cfa_from_name(const char *n) { return index_of(n, cfa_names, 4); }
const char *pc_cfa_name(pc_cfa c) { return (unsigned)c < 4 ? cfa_names[c] : "?"; }
int pc_pixfmt_from_name(const char *n) { return index_of(n, pixfmt_names, 4); }
const char *pc_pixfmt_name(pc_pixfmt f) { return (unsigned)f < 4 ? pixfmt_names[f] : "?"; }
int pc_matrix_from_name(const char *n) { return index_of(n, matrix_names, 2); }
int pc_range_from_name(const char *n) { return index_of(n, range_names, 2); }

int pc_pixfmt_planes(pc_pixfmt fmt)
{
    switch (fmt) {
    case PC_FMT_RGB24: return 1;
    case PC_FMT_NV12: return 2;
    case PC_FMT_I420: return 3;
    case PC_FMT_RGBX32: return 1;
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
    if (pc_pixfmt_is_rgb(fmt)) {
        rb = (fmt == PC_FMT_RGB24 ? 3 : 4) * (size_t)width;
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

void pc_picture_source_size(const pc_picture *pic, int *width, int *height)
{
    int c = pic->grid_cols > 1 ? pic->grid_cols : 1;
    *width = pic->width / c;
    *height = pic->height * c;
}

int pc_picture_as_grid(pc_picture *pic, int cols, int tile_rows)
{
    /* RGBX32 has no grid: it is the panorama's texture source, never an
     * encoder's picture, and leaving it out spares the CUDA kernel sets
     * their grid instances (build time). */
    if (cols < 2 || tile_rows < 2 || (tile_rows & 1) || pic->grid_cols > 1 || pic->height % tile_rows ||
        (pic->height / tile_rows) % cols || pic->width % PC_GRID_TILE_ALIGN || pic->fmt == PC_FMT_RGBX32)
        return PC_EINVAL;
    pic->width *= cols;
    pic->height /= cols;
    for (int i = 0; i < 3; i++)
        pic->pitch[i] *= (size_t)cols;
    pic->grid_cols = cols;
    pic->tile_rows = tile_rows;
    return 0;
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

/* chroma sample c (0 = Cb, 1 = Cr) at (x, y) of an NV12 or I420 picture */
static inline uint8_t *chroma_at(const pc_picture *p, int c, int x, int y)
{
    if (p->fmt == PC_FMT_NV12)
        return p->plane[1] + (size_t)y * p->pitch[1] + 2 * (size_t)x + c;
    return p->plane[1 + c] + (size_t)y * p->pitch[1 + c] + (size_t)x;
}

int pc_picture_downscale(const pc_picture *dst, const pc_picture *src, int scale)
{
    int ok_fmt = (src->fmt == PC_FMT_NV12 || src->fmt == PC_FMT_I420) &&
                 (dst->fmt == PC_FMT_NV12 || dst->fmt == PC_FMT_I420);
    if (!ok_fmt || scale < 1 || dst->width != ((src->width / scale) & ~1) ||
        dst->height != ((src->height / scale) & ~1) || dst->width < 2 || dst->height < 2)
        return PC_EINVAL;
    unsigned n = (unsigned)(scale * scale), half = n / 2;
    for (int y = 0; y < dst->height; y++) {
        uint8_t *o = dst->plane[0] + (size_t)y * dst->pitch[0];
        for (int x = 0; x < dst->width; x++) {
            unsigned sum = 0;
            for (int j = 0; j < scale; j++) {
                const uint8_t *r = src->plane[0] + (size_t)(y * scale + j) * src->pitch[0] + (size_t)x * scale;
                for (int i = 0; i < scale; i++)
                    sum += r[i];
            }
            o[x] = (uint8_t)((sum + half) / n);
        }
    }
    for (int y = 0; y < dst->height / 2; y++)
        for (int x = 0; x < dst->width / 2; x++)
            for (int c = 0; c < 2; c++) {
                unsigned sum = 0;
                for (int j = 0; j < scale; j++)
                    for (int i = 0; i < scale; i++)
                        sum += *chroma_at(src, c, x * scale + i, y * scale + j);
                *chroma_at(dst, c, x, y) = (uint8_t)((sum + half) / n);
            }
    return 0;
}
