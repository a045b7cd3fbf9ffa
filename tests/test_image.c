/* test_image.c - common/image: PPM and PNG round trips, PNG variants
 * (16-bit, RGBA, palette, greyscale refused), and clear errors that name
 * the file for missing, truncated and foreign files; the daemon's writes
 * (pc_image_write_nofollow) refuse a symbolic link or FIFO at the name.
 */
#include "image.h"
#include "panocap_config.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if PANOCAP_HAVE_PNG
#include <png.h>
#endif

static char dir[64];

static const char *tmp(const char *name)
{
    static char buf[4][160];
    static int k;
    k = (k + 1) & 3;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static void fill(uint8_t *rgb, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            rgb[3 * (y * w + x)] = (uint8_t)(x * 19 + y);
            rgb[3 * (y * w + x) + 1] = (uint8_t)(y * 23 + 7);
            rgb[3 * (y * w + x) + 2] = (uint8_t)(x * y);
        }
}

static void ppm(void)
{
    const int w = 13, h = 7;
    uint8_t rgb[13 * 7 * 3];
    fill(rgb, w, h);
    char err[256] = "";
    int rc = pc_image_write_ppm(tmp("a.ppm"), rgb, 3 * w, w, h, err, sizeof err);
    pc_image img;
    int rc2 = pc_image_read(tmp("a.ppm"), &img, err, sizeof err);
    TAP_CHECK(rc == 0 && rc2 == 0 && img.width == w && img.height == h && memcmp(img.rgb, rgb, sizeof rgb) == 0,
              "PPM 13x7 round trip (odd size kept)");
    pc_image_free(&img);

    const char *p = tmp("comment.ppm");
    FILE *f = fopen(p, "wb");
    fprintf(f, "P6\n# a comment\n2 1\n# another\n255\n");
    fwrite("\x01\x02\x03\x04\x05\x06", 1, 6, f);
    fclose(f);
    rc = pc_image_read(p, &img, err, sizeof err);
    TAP_CHECK(rc == 0 && img.width == 2 && img.height == 1 && img.rgb[5] == 6, "PPM header comments skipped");
    pc_image_free(&img);

    write_file(tmp("trunc.ppm"), "P6\n4 4\n255\nabc", 14);
    err[0] = 0;
    rc = pc_image_read(tmp("trunc.ppm"), &img, err, sizeof err);
    TAP_CHECK(rc == PC_IMG_EIO && strstr(err, "trunc.ppm") && strstr(err, "truncated"), "truncated PPM: %s", err);
    write_file(tmp("grey.pgm"), "P5\n2 2\n255\nabcd", 15);
    err[0] = 0;
    rc = pc_image_read(tmp("grey.pgm"), &img, err, sizeof err);
    TAP_CHECK(rc != 0 && strstr(err, "grey.pgm") && strstr(err, "not an RGB image"), "P5 greyscale refused: %s", err);
    write_file(tmp("deep.ppm"), "P6\n1 1\n65535\n\0\0\0\0\0\0", 20);
    err[0] = 0;
    rc = pc_image_read(tmp("deep.ppm"), &img, err, sizeof err);
    TAP_CHECK(rc != 0 && strstr(err, "deep.ppm") && strstr(err, "maxval"), "16-bit PPM refused: %s", err);
}

static void errors(void)
{
    char err[256] = "";
    pc_image img;
    err[0] = 0;
    int rc = pc_image_read(tmp("missing.png"), &img, err, sizeof err);
    TAP_CHECK(rc == PC_IMG_EIO && strstr(err, "missing.png") && img.rgb == NULL, "missing file: %s", err);
    write_file(tmp("text.png"), "hello world\n", 12);
    err[0] = 0;
    rc = pc_image_read(tmp("text.png"), &img, err, sizeof err);
    TAP_CHECK(rc != 0 && strstr(err, "text.png") && strstr(err, "not a PNG or PPM"), "foreign file: %s", err);
    write_file(tmp("empty.ppm"), "", 0);
    err[0] = 0;
    rc = pc_image_read(tmp("empty.ppm"), &img, err, sizeof err);
    TAP_CHECK(rc != 0 && strstr(err, "empty.ppm"), "empty file: %s", err);
    uint8_t px[3] = {1, 2, 3};
    err[0] = 0;
    rc = pc_image_write_ppm("/nonexistent-dir/x.ppm", px, 3, 1, 1, err, sizeof err);
    TAP_CHECK(rc == PC_IMG_EIO && strstr(err, "/nonexistent-dir/x.ppm"), "unwritable path: %s", err);
}

#if PANOCAP_HAVE_PNG
/* Writes a PNG of the given colour type and depth with libpng directly. */
static int write_png_raw(const char *path, int w, int h, int ct, int depth, const uint8_t *rows, size_t rowbytes)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, w, h, depth, ct, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (ct == PNG_COLOR_TYPE_PALETTE) {
        png_color pal[4] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {9, 8, 7}};
        png_set_PLTE(png, info, pal, 4);
    }
    png_write_info(png, info);
    for (int y = 0; y < h; y++)
        png_write_row(png, rows + y * rowbytes);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    fclose(f);
    return 0;
}

static void png(void)
{
    const int w = 11, h = 5;
    uint8_t rgb[11 * 5 * 3];
    fill(rgb, w, h);
    char err[256] = "";
    pc_image img;
    int rc = pc_image_write(tmp("a.png"), rgb, 3 * w, w, h, err, sizeof err);
    int rc2 = pc_image_read(tmp("a.png"), &img, err, sizeof err);
    TAP_CHECK(rc == 0 && rc2 == 0 && img.width == w && img.height == h && memcmp(img.rgb, rgb, sizeof rgb) == 0,
              "PNG 11x5 round trip");
    pc_image_free(&img);

    /* 16-bit RGB: v * 257 reads back as v */
    uint8_t rows16[11 * 5 * 6];
    for (int i = 0; i < w * h * 3; i++)
        rows16[2 * i] = rows16[2 * i + 1] = rgb[i];
    write_png_raw(tmp("deep.png"), w, h, PNG_COLOR_TYPE_RGB, 16, rows16, 6 * w);
    rc = pc_image_read(tmp("deep.png"), &img, err, sizeof err);
    TAP_CHECK(rc == 0 && memcmp(img.rgb, rgb, sizeof rgb) == 0, "16-bit PNG reduced to 8 bits");
    pc_image_free(&img);

    /* RGBA: alpha dropped */
    uint8_t rgba[11 * 5 * 4];
    for (int i = 0; i < w * h; i++) {
        memcpy(rgba + 4 * i, rgb + 3 * i, 3);
        rgba[4 * i + 3] = (uint8_t)i;
    }
    write_png_raw(tmp("alpha.png"), w, h, PNG_COLOR_TYPE_RGBA, 8, rgba, 4 * w);
    rc = pc_image_read(tmp("alpha.png"), &img, err, sizeof err);
    TAP_CHECK(rc == 0 && memcmp(img.rgb, rgb, sizeof rgb) == 0, "RGBA PNG: alpha dropped");
    pc_image_free(&img);

    /* palette: expanded */
    uint8_t idx[4] = {0, 1, 2, 3};
    write_png_raw(tmp("pal.png"), 4, 1, PNG_COLOR_TYPE_PALETTE, 8, idx, 4);
    rc = pc_image_read(tmp("pal.png"), &img, err, sizeof err);
    TAP_CHECK(rc == 0 && img.width == 4 && img.rgb[0] == 255 && img.rgb[4] == 255 && img.rgb[8] == 255 &&
                  img.rgb[9] == 9 && img.rgb[11] == 7,
              "palette PNG expanded to RGB");
    pc_image_free(&img);

    /* greyscale: refused, naming the file */
    uint8_t grey[11 * 5];
    memset(grey, 77, sizeof grey);
    write_png_raw(tmp("grey.png"), w, h, PNG_COLOR_TYPE_GRAY, 8, grey, w);
    err[0] = 0;
    rc = pc_image_read(tmp("grey.png"), &img, err, sizeof err);
    TAP_CHECK(rc == PC_IMG_ENOTSUP && strstr(err, "grey.png") && strstr(err, "not an RGB image"),
              "greyscale PNG refused: %s", err);

    /* truncated PNG */
    FILE *f = fopen(tmp("a.png"), "rb");
    uint8_t buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    write_file(tmp("cut.png"), buf, n / 2);
    err[0] = 0;
    rc = pc_image_read(tmp("cut.png"), &img, err, sizeof err);
    TAP_CHECK(rc == PC_IMG_EIO && strstr(err, "cut.png") && img.rgb == NULL, "truncated PNG: %s", err);
}
#endif

/* pc_image_write_nofollow (the daemon's snapshots): a new file and an
 * existing regular file are written (the old one truncated); a symbolic
 * link at the name is refused and its target left alone (the snapshot
 * path was checked, then a link swapped in was followed); a FIFO is
 * refused without waiting; relative to a folder's descriptor. */
static void nofollow(void)
{
    enum { w = 4, h = 3 };
    uint8_t rgb[3 * w * h];
    for (int i = 0; i < 3 * w * h; i++)
        rgb[i] = (uint8_t)(17 * i);
    char err[256] = "";
    pc_image im = {0};
    const char *p = tmp("nf.ppm");
    int rc = pc_image_write_nofollow(AT_FDCWD, p, rgb, 3 * w, w, h, err, sizeof err);
    int ok = rc == 0 && pc_image_read(p, &im, err, sizeof err) == 0 && im.width == w && !memcmp(im.rgb, rgb, sizeof rgb);
    pc_image_free(&im);
    write_file(p, "0123456789012345678901234567890123456789012345678901234567890123456789", 70);
    rc = pc_image_write_nofollow(AT_FDCWD, p, rgb, 3 * w, w, h, err, sizeof err);
    FILE *f = fopen(p, "rb");
    long size = -1;
    if (f) {
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        fclose(f);
    }
    TAP_CHECK(ok && rc == 0 && size == 11 + 3 * w * h, "nofollow: a new file and an existing one written (%ld bytes)",
              size);
    char target[200], link_path[200];
    snprintf(target, sizeof target, "%s", tmp("victim.txt"));
    snprintf(link_path, sizeof link_path, "%s", tmp("snap.png"));
    write_file(target, "keep me\n", 8);
    ok = symlink(target, link_path) == 0;
    rc = pc_image_write_nofollow(AT_FDCWD, link_path, rgb, 3 * w, w, h, err, sizeof err);
    char back[32] = "";
    f = fopen(target, "rb");
    size_t n = f ? fread(back, 1, sizeof back - 1, f) : 0;
    if (f)
        fclose(f);
    back[n] = '\0';
    TAP_CHECK(ok && rc == PC_IMG_EIO && strstr(err, "snap.png: is a symbolic link: not followed") &&
                  !strcmp(back, "keep me\n"),
              "nofollow: a symbolic link at the name refused, its target untouched (%s)", err);
    unlink(link_path);
    const char *fifo = tmp("fifo.png");
    ok = mkfifo(fifo, 0600) == 0;
    rc = pc_image_write_nofollow(AT_FDCWD, fifo, rgb, 3 * w, w, h, err, sizeof err);
    TAP_CHECK(ok && rc == PC_IMG_EIO && (strstr(err, "not a regular file") || strstr(err, "cannot create")),
              "nofollow: a FIFO refused at once (%s)", err);
    unlink(fifo);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    rc = pc_image_write_nofollow(dfd, "rel.ppm", rgb, 3 * w, w, h, err, sizeof err);
    close(dfd);
    TAP_CHECK(rc == 0 && pc_image_read(tmp("rel.ppm"), &im, err, sizeof err) == 0 && im.height == h,
              "nofollow: a name relative to a folder's descriptor");
    pc_image_free(&im);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/panocap-test-image-XXXXXX");
    if (!mkdtemp(dir))
        return tap_skip_all("cannot create a temporary folder");
    ppm();
    errors();
    nofollow();
#if PANOCAP_HAVE_PNG
    TAP_CHECK(pc_image_have_png(), "PNG support built in");
    png();
#else
    TAP_CHECK(!pc_image_have_png(), "PNG support not built in");
    char err[256] = "";
    uint8_t px[3] = {0};
    TAP_CHECK(pc_image_write_png(tmp("x.png"), px, 3, 1, 1, err, sizeof err) == PC_IMG_ENOTSUP && strstr(err, "x.png"),
              "PNG write without libpng: %s", err);
#endif
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            unlink(tmp(e->d_name));
    if (d)
        closedir(d);
    rmdir(dir);
    return tap_done();
}
