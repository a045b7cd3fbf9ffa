/* image.h - reading and writing RGB24 images (PNG through libpng when it
 * is built in, and binary PPM always) for snapshots, tests and the
 * quality tools.
 *
 * Images in memory are packed 8-bit R,G,B, rows of 3*width bytes at pitch
 * bytes. Odd sizes are kept as they are; cropping is the caller's business.
 * Functions return 0 or a negative PC_IMG_E* code and write a message that
 * names the file into err (errlen bytes, always NUL-terminated).
 */
#ifndef PANOCAP_IMAGE_H
#define PANOCAP_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PC_IMG_OK = 0,
    PC_IMG_EINVAL = -1,  /* bad argument */
    PC_IMG_ENOMEM = -2,  /* allocation failed */
    PC_IMG_ENOTSUP = -4, /* format not built in (PNG without libpng) or not RGB */
    PC_IMG_EIO = -5,     /* cannot open, read or write; corrupt or truncated */
};

typedef struct pc_image {
    int width, height;
    size_t pitch; /* bytes between rows, >= 3*width */
    uint8_t *rgb; /* owned; free with pc_image_free */
} pc_image;

/* 1 if PNG support is built in. */
int pc_image_have_png(void);

/* Reads a PNG or a binary PPM (P6, maxval 255), chosen by the file's first
 * bytes. PNG: 8-bit RGB or RGBA (alpha dropped), 16-bit reduced to 8 bits,
 * palette images expanded to RGB; greyscale is refused ("not an RGB
 * image"). On success img owns a new buffer. */
int pc_image_read(const char *path, pc_image *img, char *err, size_t errlen);

/* Writes RGB24 pixels. pc_image_write picks the format from the file name:
 * ".png" (when built in) or anything else as PPM. */
int pc_image_write_png(const char *path, const uint8_t *rgb, size_t pitch, int width, int height,
                       char *err, size_t errlen);
int pc_image_write_ppm(const char *path, const uint8_t *rgb, size_t pitch, int width, int height,
                       char *err, size_t errlen);
int pc_image_write(const char *path, const uint8_t *rgb, size_t pitch, int width, int height,
                   char *err, size_t errlen);

/* The same as pc_image_write for a file the daemon writes on request (a
 * snapshot): path (relative to dirfd, or AT_FDCWD) is opened with
 * O_NOFOLLOW, so a symbolic link put at the name after it was checked is
 * refused ("is a symbolic link: not followed"), not followed; only a
 * regular file (or a new one, mode 0644) is written, truncated first. */
int pc_image_write_nofollow(int dirfd, const char *path, const uint8_t *rgb, size_t pitch, int width, int height,
                            char *err, size_t errlen);

void pc_image_free(pc_image *img);

#ifdef __cplusplus
}
#endif
#endif
