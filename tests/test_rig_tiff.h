/* test_rig_tiff.h - reads the TIFF files Hugin's nona writes with
 * n"TIFF_m c:NONE" (uncompressed, interleaved, strips; 8/16/32-bit unsigned
 * or 32-bit float samples), for the rig tests that compare panocap with
 * nona's layers. Only what those files use; anything else is refused with
 * a message. Header-only test helper: no global state. */
#ifndef PANOCAP_TEST_RIG_TIFF_H
#define PANOCAP_TEST_RIG_TIFF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rig_tiff {
    int w, h, spp;    /* samples per pixel (RGBA: 4) */
    float *px;        /* w * h * spp values as stored (8-bit: 0..255) */
    int xoff, yoff;   /* XPosition/YPosition in pixels (a cropped layer's place) */
} rig_tiff;

static inline uint32_t rig_tiff_u16_(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t rig_tiff_u32_(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 0, or -1 with the reason in err. */
static inline int rig_tiff_read(const char *path, rig_tiff *t, char *err, size_t errlen)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path; /* messages: the file's name */
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%.200s: cannot open", base);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = size > 8 ? malloc((size_t)size) : NULL;
    int ok = b && fread(b, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok || memcmp(b, "II*\0", 4) != 0) {
        snprintf(err, errlen, "%.200s: not a little-endian TIFF", base);
        free(b);
        return -1;
    }
    uint32_t ifd = rig_tiff_u32_(b + 4), bits = 0, fmt = 1, comp = 1, planar = 1, rows = 0;
    uint32_t offs = 0, noffs = 0, xres[2] = {0, 1}, xpos[2] = {0, 1}, ypos[2] = {0, 1};
    if (ifd + 2 > (uint32_t)size)
        goto bad;
    for (uint32_t n = rig_tiff_u16_(b + ifd), k = 0; k < n; k++) {
        const uint8_t *e = b + ifd + 2 + 12 * k;
        if (e + 12 > b + size)
            goto bad;
        uint32_t tag = rig_tiff_u16_(e), type = rig_tiff_u16_(e + 2), cnt = rig_tiff_u32_(e + 4);
        /* a value that does not fit the entry is at an offset: the first one */
        const int inline_value = (type == 3 && cnt <= 2) || (type == 4 && cnt <= 1);
        uint32_t v = type == 3 && inline_value ? rig_tiff_u16_(e + 8) : rig_tiff_u32_(e + 8);
        const uint8_t *at = !inline_value && (type == 3 || type == 4) ? b + v : NULL;
        if (at && at + 4 > b + size)
            goto bad;
        uint32_t first = at ? (type == 3 ? rig_tiff_u16_(at) : rig_tiff_u32_(at)) : v;
        switch (tag) {
        case 256: t->w = (int)first; break;
        case 257: t->h = (int)first; break;
        case 258: bits = first; break;
        case 259: comp = first; break;
        case 273: offs = v; noffs = cnt; if (cnt == 1) offs = first; break;
        case 277: t->spp = (int)first; break;
        case 278: rows = first; break;
        case 284: planar = first; break;
        case 339: fmt = first; break;
        case 282: case 286: case 287:
            if (v + 8 <= (uint32_t)size) {
                uint32_t *r = tag == 282 ? xres : tag == 286 ? xpos : ypos;
                r[0] = rig_tiff_u32_(b + v), r[1] = rig_tiff_u32_(b + v + 4);
            }
            break;
        }
    }
    if (comp != 1 || planar != 1 || t->w <= 0 || t->h <= 0 || t->spp <= 0 ||
        !((bits == 32 && fmt == 3) || ((bits == 8 || bits == 16 || bits == 32) && fmt == 1))) {
        snprintf(err, errlen, "%.200s: unsupported TIFF (compression %u, planar %u, %u bits, format %u)", base, comp,
                 planar, bits, fmt);
        free(b);
        return -1;
    }
    if (!rows || rows > (uint32_t)t->h)
        rows = (uint32_t)t->h;
    size_t bps = bits / 8, rowbytes = (size_t)t->w * t->spp * bps;
    t->px = malloc((size_t)t->w * t->h * t->spp * sizeof *t->px);
    if (!t->px)
        goto bad;
    for (uint32_t s = 0; s * rows < (uint32_t)t->h; s++) {
        uint32_t o = noffs == 1 ? offs : (offs + 4 * s + 4 <= (uint32_t)size ? rig_tiff_u32_(b + offs + 4 * s) : 0);
        uint32_t nrows = (uint32_t)t->h - s * rows < rows ? (uint32_t)t->h - s * rows : rows;
        if (s >= noffs || (uint64_t)o + nrows * rowbytes > (uint64_t)size)
            goto bad;
        for (size_t i = 0; i < nrows * (size_t)t->w * t->spp; i++) {
            const uint8_t *p = b + o + i * bps;
            float *d = t->px + (size_t)s * rows * t->w * t->spp + i;
            if (fmt == 3) {
                uint32_t u = rig_tiff_u32_(p);
                memcpy(d, &u, 4);
            } else {
                *d = (float)(bits == 8 ? p[0] : bits == 16 ? rig_tiff_u16_(p) : rig_tiff_u32_(p));
            }
        }
    }
    if (xres[0] && xres[1] && xpos[1] && ypos[1]) {
        const double dpi = (double)xres[0] / xres[1];
        t->xoff = (int)(dpi * xpos[0] / xpos[1] + 0.5);
        t->yoff = (int)(dpi * ypos[0] / ypos[1] + 0.5);
    }
    free(b);
    return 0;
bad:
    snprintf(err, errlen, "%.200s: truncated or corrupt TIFF", base);
    free(b);
    free(t->px);
    t->px = NULL;
    return -1;
}

static inline void rig_tiff_free(rig_tiff *t)
{
    free(t->px);
    t->px = NULL;
}

#endif
