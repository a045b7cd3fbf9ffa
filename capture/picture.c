/* picture.c - loads an RGB24 picture for the fake cameras: binary or ASCII
 * PPM always, PNG when panocap is built with libpng. (A stand-in until the
 * shared image loader of common/ exists; the fake cameras only need RGB.)
 */
#include "capture_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "panocap_config.h"
#if PANOCAP_HAVE_PNG
#include <png.h>
#endif

static int ppm_token(FILE *f, long *v)
{
    int ch;
    do {
        ch = fgetc(f);
        if (ch == '#')
            while (ch != '\n' && ch != EOF)
                ch = fgetc(f);
    } while (ch != EOF && isspace(ch));
    if (ch == EOF || !isdigit(ch))
        return -1;
    long x = 0;
    while (ch != EOF && isdigit(ch)) {
        x = x * 10 + (ch - '0');
        if (x > 1000000)
            return -1;
        ch = fgetc(f);
    }
    *v = x;
    return 0;
}

static int load_ppm(FILE *f, const char *path, uint8_t **rgb, int *w, int *h, char *err, size_t errlen)
{
    char m[2];
    if (fread(m, 1, 2, f) != 2 || m[0] != 'P' || (m[1] != '6' && m[1] != '3')) {
        PC_ERR(err, errlen, "%s: not a PPM (P6/P3) file", path);
        return PC_EIO;
    }
    long W, H, maxv;
    if (ppm_token(f, &W) || ppm_token(f, &H) || ppm_token(f, &maxv) || W < 1 || H < 1 ||
        maxv < 1 || maxv > 65535) {
        PC_ERR(err, errlen, "%s: bad PPM header", path);
        return PC_EIO;
    }
    size_t n = (size_t)W * H * 3;
    uint8_t *p = malloc(n);
    if (!p) {
        PC_ERR(err, errlen, "%s: %ldx%ld picture does not fit in memory", path, W, H);
        return PC_ENOMEM;
    }
    int ok = 1;
    if (m[1] == '6') {
        if (maxv < 256) {
            ok = fread(p, 1, n, f) == n;
        } else {
            for (size_t i = 0; i < n && ok; i++) {
                int a = fgetc(f), b = fgetc(f);
                ok = b != EOF;
                p[i] = (uint8_t)((((a << 8) | b) * 255 + maxv / 2) / maxv);
            }
        }
    } else {
        for (size_t i = 0; i < n && ok; i++) {
            long v;
            ok = ppm_token(f, &v) == 0 && v <= maxv;
            p[i] = ok ? (uint8_t)((v * 255 + maxv / 2) / maxv) : 0;
        }
    }
    if (ok && maxv != 255 && m[1] == '6' && maxv < 256)
        for (size_t i = 0; i < n; i++)
            p[i] = (uint8_t)((p[i] * 255 + maxv / 2) / maxv);
    if (!ok) {
        free(p);
        PC_ERR(err, errlen, "%s: PPM pixel data is truncated", path);
        return PC_EIO;
    }
    *rgb = p;
    *w = (int)W;
    *h = (int)H;
    return 0;
}

#if PANOCAP_HAVE_PNG
static int load_png(FILE *f, const char *path, uint8_t **rgb, int *w, int *h, char *err, size_t errlen)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_stdio(&img, f)) {
        PC_ERR(err, errlen, "%s: %s", path, img.message);
        return PC_EIO;
    }
    img.format = PNG_FORMAT_RGB;
    size_t n = PNG_IMAGE_SIZE(img);
    uint8_t *p = malloc(n);
    if (!p) {
        png_image_free(&img);
        PC_ERR(err, errlen, "%s: picture does not fit in memory", path);
        return PC_ENOMEM;
    }
    if (!png_image_finish_read(&img, NULL, p, 0, NULL)) {
        free(p);
        PC_ERR(err, errlen, "%s: %s", path, img.message);
        png_image_free(&img);
        return PC_EIO;
    }
    *rgb = p;
    *w = (int)img.width;
    *h = (int)img.height;
    return 0;
}
#endif

int pc_load_rgb(const char *path, uint8_t **rgb, int *w, int *h, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        PC_ERR(err, errlen, "%s: %s", path, strerror(errno));
        return PC_EIO;
    }
    unsigned char sig[8] = {0};
    size_t got = fread(sig, 1, 8, f);
    rewind(f);
    int rc;
    if (got == 8 && memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0) {
#if PANOCAP_HAVE_PNG
        rc = load_png(f, path, rgb, w, h, err, errlen);
#else
        PC_ERR(err, errlen, "%s: PNG pictures need libpng, and this build has none (use a PPM)", path);
        rc = PC_ENOTSUP;
#endif
    } else {
        rc = load_ppm(f, path, rgb, w, h, err, errlen);
    }
    fclose(f);
    return rc;
}
