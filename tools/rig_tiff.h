/* rig_tiff.h - reads the TIFF files Hugin's nona writes with
 * n"TIFF_m c:NONE" (uncompressed, interleaved, strips; 8/16/32-bit unsigned
 * or 32-bit float samples) and the panoramas enblend writes (LZW: enblend
 * 4.2 compresses whatever --compression says), for the rig tests and
 * panocap-eval, which compare panocap with them. Only what those files
 * use; anything else is refused with a message. Header-only: no global
 * state. */
#ifndef PANOCAP_RIG_TIFF_H
#define PANOCAP_RIG_TIFF_H

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

/* TIFF's LZW (compression 5: codes of 9 to 12 bits, most significant bit
 * first, 256 clear, 257 end, the code width growing one code early):
 * src (n bytes) into dst (cap bytes). Returns the bytes written, or -1 on
 * a code that cannot be. */
static inline long rig_tiff_unlzw(const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
    enum { MAXC = 4096 };
    uint16_t *prefix = malloc(MAXC * sizeof *prefix), *len = malloc(MAXC * sizeof *len);
    uint8_t *last = malloc(MAXC), *first = malloc(MAXC);
    long out = -1;
    if (!prefix || !len || !last || !first)
        goto done;
    for (int i = 0; i < 256; i++)
        prefix[i] = 0, len[i] = 1, last[i] = first[i] = (uint8_t)i;
    size_t bit = 0, o = 0;
    int width = 9, next = 258, prev = -1;
    while (bit + (size_t)width <= 8 * n) {
        int code = 0;
        for (int k = 0; k < width; k++, bit++)
            code = code << 1 | (src[bit >> 3] >> (7 - (bit & 7)) & 1);
        if (code == 257)
            break;
        if (code == 256) {
            width = 9, next = 258, prev = -1;
            continue;
        }
        if (code > next || (prev < 0 && code > 255) || (code == next && prev < 0))
            goto done;
        int add = prev >= 0 && next < MAXC;
        if (add) { /* the new entry: prev's string + the first byte of code's (prev's when code is new) */
            prefix[next] = (uint16_t)prev;
            len[next] = (uint16_t)(len[prev] + 1);
            first[next] = first[prev];
            last[next] = code == next ? first[prev] : first[code];
        }
        if (o + len[code] > cap)
            goto done;
        for (int c = code, i = len[code] - 1; i >= 0; i--, c = prefix[c])
            dst[o + (size_t)i] = last[c];
        o += len[code];
        if (add && ++next + 1 >= (1 << width) && width < 12)
            width++;
        prev = code;
    }
    out = (long)o;
done:
    free(prefix);
    free(len);
    free(last);
    free(first);
    return out;
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
    uint32_t cnts = 0, cnttype = 4; /* strip byte counts (compressed strips) */
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
        case 279: cnts = cnt == 1 ? first : v; cnttype = cnt == 1 ? 0 : type; break;
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
    if ((comp != 1 && comp != 5) || planar != 1 || t->w <= 0 || t->h <= 0 || t->spp <= 0 ||
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
        const uint8_t *strip = b + o;
        uint8_t *unz = NULL;
        if (comp == 5) { /* LZW (enblend's output): the strip decoded first */
            uint32_t sc = cnttype == 0 ? cnts
                          : cnttype == 3 ? (cnts + 2 * s + 2 <= (uint32_t)size ? rig_tiff_u16_(b + cnts + 2 * s) : 0)
                                         : (cnts + 4 * s + 4 <= (uint32_t)size ? rig_tiff_u32_(b + cnts + 4 * s) : 0);
            if (s >= noffs || (uint64_t)o + sc > (uint64_t)size || !(unz = malloc(nrows * rowbytes)) ||
                rig_tiff_unlzw(b + o, sc, unz, nrows * rowbytes) != (long)(nrows * rowbytes)) {
                free(unz);
                goto bad;
            }
            strip = unz;
        } else if (s >= noffs || (uint64_t)o + nrows * rowbytes > (uint64_t)size) {
            goto bad;
        }
        for (size_t i = 0; i < nrows * (size_t)t->w * t->spp; i++) {
            const uint8_t *p = strip + i * bps;
            float *d = t->px + (size_t)s * rows * t->w * t->spp + i;
            if (fmt == 3) {
                uint32_t u = rig_tiff_u32_(p);
                memcpy(d, &u, 4);
            } else {
                *d = (float)(bits == 8 ? p[0] : bits == 16 ? rig_tiff_u16_(p) : rig_tiff_u32_(p));
            }
        }
        free(unz);
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
