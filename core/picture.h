/* picture.h - the picture types every module uses: the raw Bayer frame
 * (pc_bayer, its CFA phase), the destination picture (pc_picture: pixel
 * formats, matrix, range, colour bands, the grid layout), its plane
 * geometry, checks and copies, and the fixed-point RGB <-> Y'CbCr of
 * docs/algorithms.md §8. Plain C, no allocation; the inline grid helpers
 * compile for the device too.
 *
 * Conventions (core.h): 0 or a negative PC_E* code with a message in err.
 */
#ifndef PANOCAP_PICTURE_H
#define PANOCAP_PICTURE_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CFA phase: position of the red sample in the top-left 2x2 tile. */
typedef enum pc_cfa {
    PC_CFA_RGGB = 0, /* (ox,oy) = (0,0) */
    PC_CFA_GRBG = 1, /* (1,0) */
    PC_CFA_GBRG = 2, /* (0,1) */
    PC_CFA_BGGR = 3, /* (1,1) */
} pc_cfa;

/* Output pixel formats written by the final pass. */
typedef enum pc_pixfmt {
    PC_FMT_RGB24 = 0, /* packed R,G,B; plane 0 only */
    PC_FMT_NV12 = 1,  /* plane 0 Y (W x H), plane 1 interleaved CbCr (W x H/2) */
    PC_FMT_I420 = 2,  /* plane 0 Y, plane 1 Cb (W/2 x H/2), plane 2 Cr */
    PC_FMT_RGBX32 = 3, /* packed R,G,B,X; plane 0 only, 4*W bytes per row; X written as 255, ignored when read */
} pc_pixfmt;

typedef enum pc_matrix { PC_MATRIX_BT709 = 0, PC_MATRIX_BT601 = 1 } pc_matrix;
typedef enum pc_range { PC_RANGE_LIMITED = 0, PC_RANGE_FULL = 1 } pc_range;

/* Name <-> enum helpers. Return -1 when the name is unknown. */
int pc_cfa_from_name(const char *name);        /* "RGGB" ... (case-insensitive) */
const char *pc_cfa_name(pc_cfa cfa);
int pc_pixfmt_from_name(const char *name);     /* "rgb24", "nv12", "i420", "rgbx32" */
const char *pc_pixfmt_name(pc_pixfmt f);
int pc_matrix_from_name(const char *name);     /* "bt709", "bt601" */
int pc_range_from_name(const char *name);      /* "limited", "full" */

/* A raw Bayer frame in memory (host or device, as the callee documents).
 * cam_rows: the frame is cameras of cam_rows rows stacked (the daemon's
 * 2040x5400 = 5 x 1080), which an algorithm that must not read across a
 * camera's edge demosaics one by one (net: reflect-101 at each camera's own
 * edges, so a panorama shows no camera-edge seam); 0 = one image. Even, at
 * least PC_MIN_DIM, dividing height. */
typedef struct pc_bayer {
    const uint8_t *data;
    size_t pitch;  /* bytes between rows, >= width */
    int width, height;
    pc_cfa cfa;
    int cam_rows;  /* rows per camera; 0 = the whole frame is one image */
} pc_bayer;

/* The Q16 coefficient rows of spec §8: y[3], cb[3], cr[3]. */
typedef struct pc_yuv_coeffs {
    int32_t y[3], cb[3], cr[3];
    int32_t y_offset; /* (16<<16)+(1<<15) limited, (1<<15) full */
} pc_yuv_coeffs;

/* A destination picture. For RGB24 plane[0] holds 3*W bytes per row, for
 * RGBX32 4*W (a 4-byte texel per pixel: what a CUDA texture with hardware
 * filtering samples, uchar4); for NV12 plane[0] = Y, plane[1] = CbCr; for
 * I420 plane[0..2] = Y, Cb, Cr. */
typedef struct pc_picture {
    pc_pixfmt fmt;
    pc_matrix matrix; /* ignored for RGB24 and RGBX32 */
    pc_range range;   /* ignored for RGB24 and RGBX32 */
    uint8_t *plane[3];
    size_t pitch[3];
    int width, height;
    /* Optional per-camera conversion matrices (the colour matrix folded
     * in, docs/colour.md §3): rows [b*band_rows, (b+1)*band_rows) use
     * bands[b], rows past the last band the last one. NULL (default): the
     * §8 coefficients of (matrix, range) everywhere. band_rows is even, so
     * every 2x2 chroma block lies in one band. Not used for RGB24 and
     * RGBX32. */
    const pc_yuv_coeffs *bands;
    int band_rows, n_bands;
    /* Grid layout (encode.layout "grid"): grid_cols > 1 makes this a
     * picture of camera tiles, grid_cols across, each tile_rows rows high
     * and width / grid_cols wide. Source row y (camera t = y / tile_rows)
     * lands in tile column t % grid_cols, tile row t / grid_cols, at the
     * same row within the tile. width, height and the pitches are the
     * grid picture's own; the source it is demosaiced from is
     * (width / grid_cols) x (height * grid_cols) (pc_picture_source_size).
     * 0 (default): the stacked picture, rows as the source's. Not for
     * RGBX32 (refused: a texture source, never an encoder's picture). */
    int grid_cols, tile_rows;
} pc_picture;

/* The helpers below are inline for host and device code alike. */
#ifdef __CUDACC__
#define PC_GRID_HD __host__ __device__ static inline
#else
#define PC_GRID_HD static inline
#endif

/* 1 for the RGB formats (RGB24, RGBX32: no matrix, range or bands, no
 * chroma planes), 0 for the Y'CbCr ones. */
PC_GRID_HD int pc_pixfmt_is_rgb(int fmt)
{
    return fmt == PC_FMT_RGB24 || fmt == PC_FMT_RGBX32;
}

/* Where the demosaic's final pass stores source row y of a grid picture:
 * one definition for the C reference, the CPU backend and the CUDA
 * kernels (and their emulation). The kernels get the grid packed in one
 * int (pc_grid_pack: tile_rows << 8 | grid_cols, 0 = stacked) so that
 * their parameters keep their size and layout. */
PC_GRID_HD int pc_grid_pack(const pc_picture *p)
{
    return p->grid_cols > 1 && p->tile_rows >= 2 ? p->tile_rows << 8 | p->grid_cols : 0;
}

/* The byte offset, from the stacked address (plane + y * pitch + x bytes;
 * chroma row y / 2), of source row y's samples in plane `plane` (0, 1, 2)
 * of pitch `pitch`, fmt a pc_pixfmt, tile_w the source's width. 0 for a
 * stacked picture (grid 0). y even for the chroma planes. */
PC_GRID_HD int pc_grid_offset(int grid, int tile_w, int fmt, int plane, int y, int pitch)
{
    if (!grid)
        return 0;
    const int T = grid >> 8, C = grid & 255;
    const int t = y / T, r = t / C;          /* camera; its tile row */
    const int drow = (r - t) * T;            /* even: T is */
    const int dx = (t - r * C) * tile_w;     /* its tile column's first pixel */
    if (plane == 0)
        return drow * pitch + (fmt == PC_FMT_RGB24 ? 3 * dx : fmt == PC_FMT_RGBX32 ? 4 * dx : dx);
    return (drow / 2) * pitch + (fmt == PC_FMT_NV12 ? dx : dx / 2);
}

/* Plane geometry, the one place that knows how big each plane of a format
 * is (everything that allocates, copies or checks pictures asks here).
 * pc_pixfmt_planes: 1 (RGB24, RGBX32), 2 (NV12), 3 (I420); 0 for an
 * unknown fmt.
 * pc_picture_plane_size: plane `plane` of a width x height picture (width
 * and height even for NV12/I420) is *plane_w samples wide (pixels; CbCr
 * pairs for the NV12 chroma plane), *plane_h rows high and *row_bytes
 * bytes per row without padding. Any out pointer may be NULL. Returns 0, or
 * PC_EINVAL when fmt is unknown or has no such plane. */
int pc_pixfmt_planes(pc_pixfmt fmt);
int pc_picture_plane_size(pc_pixfmt fmt, int width, int height, int plane,
                          int *plane_w, int *plane_h, size_t *row_bytes);

/* Lays out a whole fmt picture of width x height in one buffer: every
 * plane's pitch is its row rounded up to `align` (a power of two, 1 =
 * packed) and the planes follow each other. buf may be NULL (size only;
 * the plane pointers are then offsets from NULL and must not be used).
 * Returns the buffer size in bytes, 0 when fmt is unknown. */
size_t pc_picture_layout(pc_picture *pic, pc_pixfmt fmt, pc_matrix matrix, pc_range range,
                         int width, int height, size_t align, uint8_t *buf);

/* The size of the source a picture is demosaiced from: its own for a
 * stacked picture, (width / grid_cols) x (height * grid_cols) for a grid. */
void pc_picture_source_size(const pc_picture *pic, int *width, int *height);

/* Makes the stacked picture pic (a source-sized layout, any pitches) the
 * grid of `cols` tile columns of tile_rows-row cameras over the same
 * memory: width x cols, height / cols, each pitch x cols (grid row r is
 * stacked rows r*cols .. r*cols+cols-1, so every byte stays inside the
 * allocation). Returns 0, or PC_EINVAL when the rows are not whole
 * cameras, the cameras not whole grid rows, the camera width not a
 * multiple of PC_GRID_TILE_ALIGN or the format RGBX32 (the picture
 * unchanged). */
int pc_picture_as_grid(pc_picture *pic, int cols, int tile_rows);

/* A grid's tiles start at column c * camera width; the kernels store 2 and
 * 4 bytes at once (Y', NV12 CbCr and I420's half-width chroma), so every
 * tile must start on a 4-byte boundary of every plane: camera widths are
 * multiples of 4 (2040 is). */
#define PC_GRID_TILE_ALIGN 4

/* Copies the visible part of every plane of src into dst (host memory,
 * same format and size, any pitches). */
void pc_picture_copy(const pc_picture *dst, const pc_picture *src);

/* dst = src scaled down `scale` times (box filter: each sample the rounded
 * mean of a scale x scale block, chroma of the chroma plane likewise), host
 * memory, NV12 or I420 each (formats may differ); dst's size must be
 * (src->width / scale) & ~1 x (src->height / scale) & ~1. For the preview
 * rendition. Returns 0 or PC_EINVAL. */
int pc_picture_downscale(const pc_picture *dst, const pc_picture *src, int scale);

/* Checks a frame size against the spec; message names the rule broken. */
int pc_check_size(int width, int height, char *err, size_t errlen);

/* Checks that pic matches (width, height), has every plane it needs and
 * pitches at least as wide as a row of that plane. */
int pc_check_picture(const pc_picture *pic, int width, int height,
                     char *err, size_t errlen);

/* Checks a raw Bayer frame: its size (pc_check_size), data, pitch, CFA
 * phase and cam_rows. */
int pc_check_bayer(const pc_bayer *src, char *err, size_t errlen);

/* RGB24 -> YUV (NV12 or I420), the fixed-point conversion of spec §8, as
 * the demosaic's final pass writes it (colour bands, a grid picture's
 * tiles). rgb has 3*width bytes per row at rgb_pitch, width x height the
 * source size of dst (pc_picture_source_size). Any even size from 2x2. */
int pc_rgb_to_yuv(const uint8_t *rgb, size_t rgb_pitch, const pc_picture *dst,
                  char *err, size_t errlen);

/* The other way (yuv_to_rgb.c): an NV12 or I420 picture (host memory, its
 * matrix and range; stacked, no grid) as RGB24 the way a player shows it,
 * the inverse of the matrix above, each 2x2 block's chroma for its four
 * pixels; an RGB24/RGBX32 picture copied. rgb: 3*width bytes per row at
 * rgb_pitch. What the daemon's snapshot of the panorama or a view
 * writes. */
int pc_yuv_to_rgb(const pc_picture *src, uint8_t *rgb, size_t rgb_pitch, char *err, size_t errlen);

/* Imposes the Bayer pattern cfa on a packed RGB24 image (3*w bytes per row
 * at pitch): raw(x,y) = the R, G or B value its site type samples. Any w, h
 * in 1..PC_MAX_DIM (used by tests and panocap-quality). */
int pc_mosaic_from_rgb(const uint8_t *rgb, size_t pitch, int w, int h, pc_cfa cfa,
                       uint8_t *raw, size_t raw_pitch, char *err, size_t errlen);

void pc_yuv_coeffs_get(pc_matrix m, pc_range r, pc_yuv_coeffs *out);

#ifdef __cplusplus
}
#endif
#endif
