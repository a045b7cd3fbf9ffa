/* unpack.c - raw sensor pixel formats (colour.h): names, sizes, the
 * reference unpacking of every packing, and the hot-path row function that
 * unpacks and maps through the per-colour tables in one go (the CPU
 * backend's colour stage; the CUDA kernel in cuda_colour.cuh decodes with
 * the same formulas, pc_unpack_sample below). */
#include "colour.h"
#include "errmsg.h"

#include <stdio.h>
#include <string.h>

#include "unpack_formulas.h"

static const char *const cfa_tag[4] = {"RG", "GR", "GB", "BG"};

int pc_rawfmt_parse(const char *name, pc_rawfmt *out, char *err, size_t errlen)
{
    static const struct { const char *suffix; int bits; pc_packing p; } forms[] = {
        {"8", 8, PC_PACK_8},          {"10", 10, PC_PACK_LE16},     {"12", 12, PC_PACK_LE16},
        {"10p", 10, PC_PACK_PFNC},    {"12p", 12, PC_PACK_PFNC},    {"10Packed", 10, PC_PACK_GVSP},
        {"12Packed", 12, PC_PACK_GVSP},
    };
    if (name && strncmp(name, "Bayer", 5) == 0 && strlen(name) > 7) {
        for (int c = 0; c < 4; c++) {
            if (strncmp(name + 5, cfa_tag[c], 2) != 0)
                continue;
            for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
                if (strcmp(name + 7, forms[i].suffix) == 0) {
                    out->bits = forms[i].bits;
                    out->packing = forms[i].p;
                    out->cfa = (pc_cfa)c;
                    return PC_OK;
                }
        }
    }
    pc_set_err(err, errlen,
               "unknown pixel format \"%s\" (known: Bayer{RG,GR,GB,BG} followed by 8, 10, 12, "
               "10p, 12p, 10Packed or 12Packed, e.g. BayerRG12p)",
               name ? name : "(null)");
    return PC_EINVAL;
}

void pc_rawfmt_name(const pc_rawfmt *f, char *buf, size_t len)
{
    static const char *const pk[] = {"", "", "p", "Packed"};
    if (!len)
        return;
    snprintf(buf, len, "Bayer%s%d%s", cfa_tag[f->cfa & 3], f->bits, pk[f->packing & 3]);
}

int pc_rawfmt_stream_bits(const pc_rawfmt *f)
{
    switch (f->packing) {
    case PC_PACK_8: return 8;
    case PC_PACK_LE16: return 16;
    case PC_PACK_GVSP: return 12; /* 3 bytes per 2 samples, 10- or 12-bit */
    default: return f->bits;
    }
}

size_t pc_rawfmt_frame_bytes(const pc_rawfmt *f, int width, int height)
{
    return ((size_t)width * (size_t)height * (size_t)pc_rawfmt_stream_bits(f) + 7) / 8;
}

double pc_rawfmt_rate_bytes(const pc_rawfmt *f, int width, int height, double fps)
{
    return (double)pc_rawfmt_frame_bytes(f, width, height) * fps;
}

void pc_unpack_row(const pc_rawfmt *f, const uint8_t *frame, int width, int y, uint16_t *dst)
{
    size_t n0 = (size_t)y * (size_t)width;
    for (int x = 0; x < width; x++)
        dst[x] = (uint16_t)pc_unpack_sample(frame, f->packing, f->bits, n0 + (size_t)x);
}

/* The colour (0 R, 1 G, 2 B) of the even and odd columns of row y. */
static void row_colours(pc_cfa cfa, int y, int *c0, int *c1)
{
    static const int ch[4] = {0, 1, 1, 2}; /* site R, Gr, Gb, B */
    *c0 = ch[((y & 1) << 1) ^ (int)cfa];
    *c1 = ch[(1 | (y & 1) << 1) ^ (int)cfa];
}

void pc_colour_row(const pc_rawfmt *f, const pc_colour_tables *t, const uint8_t *frame, int width, int y,
                   uint8_t *dst)
{
    int c0, c1;
    row_colours(f->cfa, y, &c0, &c1);
    const uint8_t *l0 = t->lut[c0], *l1 = t->lut[c1];
    const unsigned mask = (1u << f->bits) - 1;
    size_t n0 = (size_t)y * (size_t)width;
    switch (f->packing) {
    case PC_PACK_8: {
        const uint8_t *s = frame + n0;
        int x = 0;
        /* 8 pixels per step: one 8-byte load, one 8-byte store */
        for (; x + 8 <= width; x += 8) {
            uint64_t v, o = 0;
            memcpy(&v, s + x, 8);
            for (int i = 0; i < 8; i += 2) {
                o |= (uint64_t)l0[(v >> (8 * i)) & 0xff] << (8 * i);
                o |= (uint64_t)l1[(v >> (8 * i + 8)) & 0xff] << (8 * i + 8);
            }
            memcpy(dst + x, &o, 8);
        }
        for (; x < width; x += 2) {
            dst[x] = l0[s[x]];
            dst[x + 1] = l1[s[x + 1]];
        }
        break;
    }
    case PC_PACK_LE16: {
        const uint8_t *s = frame + 2 * n0;
        int x = 0;
        for (; x + 4 <= width; x += 4) {
            uint64_t v;
            memcpy(&v, s + 2 * x, 8);
            uint32_t o = (uint32_t)l0[v & mask] | (uint32_t)l1[(v >> 16) & mask] << 8 |
                         (uint32_t)l0[(v >> 32) & mask] << 16 | (uint32_t)l1[(v >> 48) & mask] << 24;
            memcpy(dst + x, &o, 4);
        }
        for (; x < width; x += 2) {
            dst[x] = l0[(s[2 * x] | s[2 * x + 1] << 8) & mask];
            dst[x + 1] = l1[(s[2 * x + 2] | s[2 * x + 3] << 8) & mask];
        }
        break;
    }
    case PC_PACK_GVSP: {
        /* even widths: every row starts on a 3-byte group */
        const uint8_t *s = frame + 3 * (n0 / 2);
        const int hs = f->bits - 8;
        const unsigned lm = (1u << hs) - 1;
        for (int x = 0; x < width; x += 2, s += 3) {
            dst[x] = l0[(unsigned)s[0] << hs | (s[1] & lm)];
            dst[x + 1] = l1[(unsigned)s[2] << hs | ((s[1] >> 4) & lm)];
        }
        break;
    }
    default:
        if (f->bits == 12) {
            const uint8_t *s = frame + 3 * (n0 / 2);
            int x = 0;
            /* 8 pixels = 12 bytes per step */
            for (; x + 8 <= width; x += 8, s += 12) {
                uint64_t a;
                uint32_t b;
                memcpy(&a, s, 8);
                memcpy(&b, s + 8, 4);
                unsigned c[8] = {(unsigned)a & 0xfff, (unsigned)(a >> 12) & 0xfff, (unsigned)(a >> 24) & 0xfff,
                                 (unsigned)(a >> 36) & 0xfff, (unsigned)(a >> 48) & 0xfff,
                                 (unsigned)((a >> 60) | (uint64_t)b << 4) & 0xfff, (b >> 8) & 0xfff, b >> 20};
                uint64_t o = 0;
                for (int i = 0; i < 8; i += 2)
                    o |= (uint64_t)l0[c[i]] << (8 * i) | (uint64_t)l1[c[i + 1]] << (8 * i + 8);
                memcpy(dst + x, &o, 8);
            }
            for (; x < width; x += 2, s += 3) {
                dst[x] = l0[s[0] | (s[1] & 15u) << 8];
                dst[x + 1] = l1[s[1] >> 4 | (unsigned)s[2] << 4];
            }
        } else {
            for (int x = 0; x < width; x += 2) {
                dst[x] = l0[pc_unpack_sample(frame, PC_PACK_PFNC, 10, n0 + (size_t)x)];
                dst[x + 1] = l1[pc_unpack_sample(frame, PC_PACK_PFNC, 10, n0 + (size_t)x + 1)];
            }
        }
        break;
    }
}

void pc_colour_slab(const pc_rawfmt *f, const pc_colour_tables *t, const uint8_t *src, size_t src_pitch,
                    int width, int height, uint8_t *dst, size_t dst_pitch)
{
    pc_colour_rows(f, t, src, src_pitch, width, 0, height, dst, dst_pitch);
}

void pc_colour_rows(const pc_rawfmt *f, const pc_colour_tables *t, const uint8_t *src, size_t src_pitch,
                    int width, int y0, int y1, uint8_t *dst, size_t dst_pitch)
{
    int pitched = src_pitch && (f->packing == PC_PACK_8 || f->packing == PC_PACK_LE16);
    size_t tight = f->packing == PC_PACK_8 ? (size_t)width : 2 * (size_t)width;
    for (int y = y0; y < y1; y++) {
        uint8_t *d = dst + (size_t)y * dst_pitch;
        if (pitched && src_pitch != tight) {
            /* rows at their own pitch: present row y as row 0 of a frame
             * whose first row has row y's colours (same parity) */
            const uint8_t *row = src + (size_t)y * src_pitch;
            if (f->packing == PC_PACK_8 && t->identity)
                memcpy(d, row, (size_t)width);
            else
                pc_colour_row(&(pc_rawfmt){f->bits, f->packing, (pc_cfa)((int)f->cfa ^ ((y & 1) << 1))},
                              t, row, width, 0, d);
            continue;
        }
        if (f->packing == PC_PACK_8 && t->identity)
            memcpy(d, src + (size_t)y * width, (size_t)width);
        else
            pc_colour_row(f, t, src, width, y, d);
    }
}
