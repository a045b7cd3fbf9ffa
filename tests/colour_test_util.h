/* colour_test_util.h - an independent packer for the raw formats of
 * kernels/colour.h, written bit by bit from the format definitions (not
 * with the library's unpacking code), and a synthesised raw camera frame:
 * a neutral scene seen through a colour cast, a black pedestal and a 10 or
 * 12-bit quantiser. Used by test_colour.c and the CUDA emulation test. */
#ifndef PANOCAP_COLOUR_TEST_UTIL_H
#define PANOCAP_COLOUR_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "colour.h"

static inline void tc_put_bit(uint8_t *buf, size_t bit, int v)
{
    if (v)
        buf[bit >> 3] |= (uint8_t)(1u << (bit & 7));
}

/* Packs n codes into buf (zeroed here; pc_rawfmt_frame_bytes bytes). */
static inline void tc_pack(const pc_rawfmt *f, const uint16_t *codes, size_t n, uint8_t *buf)
{
    memset(buf, 0, (n * (size_t)pc_rawfmt_stream_bits(f) + 7) / 8);
    int b = f->bits;
    for (size_t i = 0; i < n; i++) {
        unsigned v = codes[i];
        switch (f->packing) {
        case PC_PACK_8: buf[i] = (uint8_t)v; break;
        case PC_PACK_LE16: buf[2 * i] = (uint8_t)v; buf[2 * i + 1] = (uint8_t)(v >> 8); break;
        case PC_PACK_PFNC:
            for (int k = 0; k < b; k++)
                tc_put_bit(buf, i * (size_t)b + (size_t)k, (v >> k) & 1);
            break;
        case PC_PACK_GVSP: {
            /* the high 8 bits in byte 0 (even sample) or 2 (odd), the low
             * b-8 bits in byte 1 from bit 0 (even) or bit 4 (odd) */
            size_t g = 3 * (i / 2);
            buf[g + ((i & 1) ? 2 : 0)] = (uint8_t)(v >> (b - 8));
            for (int k = 0; k < b - 8; k++)
                tc_put_bit(buf, 8 * (g + 1) + ((i & 1) ? 4 : 0) + (size_t)k, (v >> k) & 1);
            break;
        }
        }
    }
}

/* A raw W x H frame of `bits` codes: scene value s in [0, 1] per pixel
 * (rgb, 8-bit, read as linear s = v/255), multiplied by cast[c], plus a
 * pedestal `black`, quantised to the nearest code and clipped. */
static inline void tc_cast_frame(const uint8_t *rgb, int w, int h, pc_cfa cfa, int bits, const double cast[3],
                                 double black, uint16_t *codes)
{
    static const int ch[4] = {0, 1, 1, 2};
    double maxc = (1 << bits) - 1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int c = ch[((x & 1) | (y & 1) << 1) ^ (int)cfa];
            double s = rgb[(size_t)3 * (y * w + x) + c] / 255.0;
            double v = floor(black + s * cast[c] * (maxc - black) + 0.5);
            codes[(size_t)y * w + x] = (uint16_t)(v < 0 ? 0 : v > maxc ? maxc : v);
        }
}

#endif
