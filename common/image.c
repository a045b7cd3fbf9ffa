/* image.c - RGB24 image files: PNG through libpng (when PANOCAP_HAVE_PNG)
 * and binary PPM (P6, maxval 255). See image.h. */
#include "image.h"

#include "errmsg.h"

#include "panocap_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#if PANOCAP_HAVE_PNG
#include <png.h>
#include <setjmp.h>
#endif

/* Files larger than this in either dimension are refused (the demosaicing
 * code takes up to 32768; this keeps width*height*3 far from overflow). */
#define IMG_MAX_DIM 65536

int pc_image_have_png(void) { return PANOCAP_HAVE_PNG; }

void pc_image_free(pc_image *img)
{
    if (!img)
        return;
    free(img->rgb);
    memset(img, 0, sizeof *img);
}

static int alloc_image(pc_image *img, int w, int h, const char *path, char *err, size_t errlen)
{
    if (w <= 0 || h <= 0 || w > IMG_MAX_DIM || h > IMG_MAX_DIM) {
        pc_set_err(err, errlen, "%s: image size %dx%d is out of range (1..%d)", path, w, h, IMG_MAX_DIM);
        return PC_IMG_EIO;
    }
    img->width = w;
    img->height = h;
    img->pitch = 3 * (size_t)w;
    img->rgb = malloc(img->pitch * (size_t)h);
    if (!img->rgb) {
        pc_set_err(err, errlen, "%s: cannot allocate %dx%d RGB image", path, w, h);
        return PC_IMG_ENOMEM;
    }
    return PC_IMG_OK;
}

/* ------------------------------------------------------------------------
 * PPM (P6)
 * ---------------------------------------------------------------------- */

/* Next header integer, skipping whitespace and '#' comments. */
static int ppm_int(FILE *f, int *out)
{
    int c;
    for (;;) {
        c = fgetc(f);
        if (c == '#') {
            while (c != '\n' && c != EOF)
                c = fgetc(f);
        } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            break;
        }
    }
    if (c < '0' || c > '9')
        return -1;
    long v = 0;
    while (c >= '0' && c <= '9') {
        v = v * 10 + (c - '0');
        if (v > 100000000)
            return -1;
        c = fgetc(f);
    }
    /* exactly one whitespace character ends the value (after maxval it
     * separates the header from the pixels) */
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        return -1;
    *out = (int)v;
    return 0;
}

static int read_ppm(FILE *f, const char *path, pc_image *img, char *err, size_t errlen)
{
    char magic[2];
    if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P') {
        pc_set_err(err, errlen, "%s: not a PPM file", path);
        return PC_IMG_EIO;
    }
    if (magic[1] != '6') {
        pc_set_err(err, errlen, "%s: PNM type P%c is not supported (only binary RGB PPM, P6)%s", path,
                   magic[1], magic[1] == '5' || magic[1] == '2' ? ": not an RGB image" : "");
        return magic[1] == '5' || magic[1] == '2' ? PC_IMG_ENOTSUP : PC_IMG_EIO;
    }
    int w, h, maxval;
    if (ppm_int(f, &w) || ppm_int(f, &h) || ppm_int(f, &maxval)) {
        pc_set_err(err, errlen, "%s: malformed PPM header", path);
        return PC_IMG_EIO;
    }
    if (maxval != 255) {
        pc_set_err(err, errlen, "%s: PPM maxval %d is not supported (only 255)", path, maxval);
        return PC_IMG_ENOTSUP;
    }
    int rc = alloc_image(img, w, h, path, err, errlen);
    if (rc)
        return rc;
    size_t n = img->pitch * (size_t)h;
    if (fread(img->rgb, 1, n, f) != n) {
        pc_set_err(err, errlen, "%s: PPM pixel data truncated (%dx%d needs %zu bytes)", path, w, h, n);
        pc_image_free(img);
        return PC_IMG_EIO;
    }
    return PC_IMG_OK;
}

static int bad_image(const char *path, const uint8_t *rgb, size_t pitch, int width, int height, char *err,
                     size_t errlen)
{
    if (!path || !rgb || width <= 0 || height <= 0 || pitch < 3 * (size_t)width) {
        pc_set_err(err, errlen, "%s: invalid image to write (%dx%d, pitch %zu)", path ? path : "(null)",
                   width, height, pitch);
        return PC_IMG_EINVAL;
    }
    return 0;
}

/* Writes the PPM into f (closed here). */
static int ppm_to(FILE *f, const char *path, const uint8_t *rgb, size_t pitch, int width, int height, char *err,
                  size_t errlen)
{
    int ok = fprintf(f, "P6\n%d %d\n255\n", width, height) > 0;
    for (int y = 0; ok && y < height; y++)
        ok = fwrite(rgb + (size_t)y * pitch, 1, 3 * (size_t)width, f) == 3 * (size_t)width;
    if (fclose(f) != 0)
        ok = 0;
    if (!ok) {
        pc_set_err(err, errlen, "%s: write failed: %s", path, strerror(errno));
        return PC_IMG_EIO;
    }
    return PC_IMG_OK;
}

int pc_image_write_ppm(const char *path, const uint8_t *rgb, size_t pitch, int width, int height,
                       char *err, size_t errlen)
{
    int rc = bad_image(path, rgb, pitch, width, height, err, errlen);
    if (rc)
        return rc;
    FILE *f = fopen(path, "wb");
    if (!f) {
        pc_set_err(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return PC_IMG_EIO;
    }
    return ppm_to(f, path, rgb, pitch, width, height, err, errlen);
}

/* ------------------------------------------------------------------------
 * PNG
 * ---------------------------------------------------------------------- */

#if PANOCAP_HAVE_PNG
typedef struct png_errctx {
    jmp_buf jmp;
    char msg[200];
} png_errctx;

static void png_err_fn(png_structp png, png_const_charp msg)
{
    png_errctx *ctx = png_get_error_ptr(png);
    snprintf(ctx->msg, sizeof ctx->msg, "%s", msg);
    longjmp(ctx->jmp, 1);
}

static void png_warn_fn(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

static int read_png(FILE *f, const char *path, pc_image *img, char *err, size_t errlen)
{
    png_errctx ctx;
    ctx.msg[0] = '\0';
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_err_fn, png_warn_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *volatile rows = NULL;
    if (!png || !info) {
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        pc_set_err(err, errlen, "%s: cannot initialise libpng", path);
        return PC_IMG_ENOMEM;
    }
    if (setjmp(ctx.jmp)) {
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        pc_image_free(img);
        pc_set_err(err, errlen, "%s: corrupt or truncated PNG: %s", path, ctx.msg);
        return PC_IMG_EIO;
    }
    png_init_io(png, f);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    int ct = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    if (ct == PNG_COLOR_TYPE_GRAY || ct == PNG_COLOR_TYPE_GRAY_ALPHA) {
        png_destroy_read_struct(&png, &info, NULL);
        pc_set_err(err, errlen, "%s: not an RGB image (greyscale PNG, %d-bit)", path, depth);
        return PC_IMG_ENOTSUP;
    }
    if (ct == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (depth == 16)
        png_set_scale_16(png); /* rounds to 8 bits */
    png_set_strip_alpha(png);
    if (png_get_interlace_type(png, info) != PNG_INTERLACE_NONE)
        png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != 3 * (size_t)w || png_get_bit_depth(png, info) != 8) {
        png_destroy_read_struct(&png, &info, NULL);
        pc_set_err(err, errlen, "%s: unsupported PNG layout (colour type %d, %d-bit)", path, ct, depth);
        return PC_IMG_ENOTSUP;
    }
    int rc = alloc_image(img, (int)(w > IMG_MAX_DIM ? IMG_MAX_DIM + 1 : w),
                         (int)(h > IMG_MAX_DIM ? IMG_MAX_DIM + 1 : h), path, err, errlen);
    if (rc) {
        png_destroy_read_struct(&png, &info, NULL);
        return rc;
    }
    rows = malloc(sizeof(png_bytep) * h);
    if (!rows) {
        png_destroy_read_struct(&png, &info, NULL);
        pc_image_free(img);
        pc_set_err(err, errlen, "%s: out of memory", path);
        return PC_IMG_ENOMEM;
    }
    for (png_uint_32 y = 0; y < h; y++)
        rows[y] = img->rgb + (size_t)y * img->pitch;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    return PC_IMG_OK;
}
#endif

#if PANOCAP_HAVE_PNG
/* Writes the PNG into f (closed here). */
static int png_to(FILE *f, const char *path, const uint8_t *rgb, size_t pitch, int width, int height, char *err,
                  size_t errlen)
{
    png_errctx ctx;
    ctx.msg[0] = '\0';
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, png_err_fn, png_warn_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(png ? &png : NULL, NULL);
        fclose(f);
        pc_set_err(err, errlen, "%s: cannot initialise libpng", path);
        return PC_IMG_ENOMEM;
    }
    if (setjmp(ctx.jmp)) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        pc_set_err(err, errlen, "%s: PNG write failed: %s", path, ctx.msg);
        return PC_IMG_EIO;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 3);
    png_write_info(png, info);
    for (int y = 0; y < height; y++)
        png_write_row(png, (png_const_bytep)(rgb + (size_t)y * pitch));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0) {
        pc_set_err(err, errlen, "%s: write failed: %s", path, strerror(errno));
        return PC_IMG_EIO;
    }
    return PC_IMG_OK;
}
#endif

int pc_image_write_png(const char *path, const uint8_t *rgb, size_t pitch, int width, int height,
                       char *err, size_t errlen)
{
#if PANOCAP_HAVE_PNG
    int rc = bad_image(path, rgb, pitch, width, height, err, errlen);
    if (rc)
        return rc;
    FILE *f = fopen(path, "wb");
    if (!f) {
        pc_set_err(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return PC_IMG_EIO;
    }
    return png_to(f, path, rgb, pitch, width, height, err, errlen);
#else
    (void)rgb, (void)pitch, (void)width, (void)height;
    pc_set_err(err, errlen, "%s: PNG support is not built in (libpng not found); write a .ppm instead",
               path ? path : "(null)");
    return PC_IMG_ENOTSUP;
#endif
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcasecmp(s + n - m, suf) == 0;
}

int pc_image_write(const char *path, const uint8_t *rgb, size_t pitch, int width, int height,
                   char *err, size_t errlen)
{
    if (path && has_suffix(path, ".png"))
        return pc_image_write_png(path, rgb, pitch, width, height, err, errlen);
    return pc_image_write_ppm(path, rgb, pitch, width, height, err, errlen);
}

int pc_image_write_nofollow(int dirfd, const char *path, const uint8_t *rgb, size_t pitch, int width, int height,
                            char *err, size_t errlen)
{
    int rc = bad_image(path, rgb, pitch, width, height, err, errlen);
    if (rc)
        return rc;
    const int png = has_suffix(path, ".png");
#if !PANOCAP_HAVE_PNG
    if (png)
        return pc_image_write_png(path, rgb, pitch, width, height, err, errlen); /* says it is not built in */
#endif
    /* the name as it is: a symbolic link there (swapped in since the name
     * was checked) is refused, not followed; O_NONBLOCK: a FIFO there does
     * not wait for a reader; only a regular file is truncated and written */
    int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == ELOOP)
            pc_set_err(err, errlen, "%s: is a symbolic link: not followed, nothing written", path);
        else
            pc_set_err(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return PC_IMG_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        pc_set_err(err, errlen, "%s: exists and is not a regular file: nothing written", path);
        return PC_IMG_EIO;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = NULL;
    if (ftruncate(fd, 0) != 0 || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "wb"))) {
        pc_set_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        close(fd);
        return PC_IMG_EIO;
    }
#if PANOCAP_HAVE_PNG
    if (png)
        return png_to(f, path, rgb, pitch, width, height, err, errlen);
#endif
    return ppm_to(f, path, rgb, pitch, width, height, err, errlen);
}

int pc_image_read(const char *path, pc_image *img, char *err, size_t errlen)
{
    if (!img) {
        pc_set_err(err, errlen, "%s: image is NULL", path ? path : "(null)");
        return PC_IMG_EINVAL;
    }
    memset(img, 0, sizeof *img);
    if (!path) {
        pc_set_err(err, errlen, "image path is NULL");
        return PC_IMG_EINVAL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        pc_set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return PC_IMG_EIO;
    }
    unsigned char sig[8];
    size_t n = fread(sig, 1, sizeof sig, f);
    rewind(f);
    int rc;
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n == 8 && memcmp(sig, png_sig, 8) == 0) {
#if PANOCAP_HAVE_PNG
        rc = read_png(f, path, img, err, errlen);
#else
        pc_set_err(err, errlen, "%s: PNG support is not built in (libpng not found); convert to PPM (P6)",
                   path);
        rc = PC_IMG_ENOTSUP;
#endif
    } else if (n >= 2 && sig[0] == 'P' && sig[1] >= '1' && sig[1] <= '7') {
        rc = read_ppm(f, path, img, err, errlen);
    } else if (n == 0) {
        pc_set_err(err, errlen, "%s: empty file", path);
        rc = PC_IMG_EIO;
    } else {
        pc_set_err(err, errlen, "%s: not a PNG or PPM image", path);
        rc = PC_IMG_EIO;
    }
    fclose(f);
    return rc;
}
