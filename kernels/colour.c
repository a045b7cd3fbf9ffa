/* colour.c - the host side of the colour stage (colour.h, docs/colour.md):
 * settings checks, the per-colour lookup tables, the colour matrix folded
 * into the Q16 Y'CbCr matrix, transfer LUT files, and the automatic white
 * balance estimator. Everything here runs off the hot path (at start, on
 * reload, or once every few frame sets for the white balance). */
#include "colour.h"
#include "errmsg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const transfer_names[] = {"linear", "srgb", "bt709", "gamma", "lut"};

int pc_transfer_from_name(const char *name)
{
    for (int i = 0; name && i < 3; i++)
        if (strcasecmp(name, transfer_names[i]) == 0)
            return i;
    return -1;
}

const char *pc_transfer_name(pc_transfer t) { return (unsigned)t < 5 ? transfer_names[t] : "?"; }

void pc_colour_cfg_init(pc_colour_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->wb[0] = c->wb[1] = c->wb[2] = 1.0;
    c->ccm[0] = c->ccm[4] = c->ccm[8] = 1.0;
    c->transfer = PC_TRANSFER_LINEAR;
    c->gamma = 2.2;
}

static double white_of(const pc_colour_cfg *c, int bits)
{
    return c->white_level > 0 ? c->white_level : (double)((1 << bits) - 1);
}

int pc_colour_cfg_check(const pc_colour_cfg *c, int bits, char *err, size_t errlen)
{
    if (bits != 8 && bits != 10 && bits != 12) {
        pc_set_err(err, errlen, "bit depth %d is not 8, 10 or 12", bits);
        return PC_EINVAL;
    }
    int maxc = (1 << bits) - 1;
    double white = white_of(c, bits);
    if (!isfinite(c->white_level) || white > maxc) {
        pc_set_err(err, errlen, "white_level %g is above the largest %d-bit code %d", c->white_level, bits, maxc);
        return PC_EINVAL;
    }
    if (!isfinite(c->black_level) || c->black_level < 0 || c->black_level >= white) {
        pc_set_err(err, errlen, "black_level %g must be at least 0 and below the white level %g (%d-bit codes)",
                   c->black_level, white, bits);
        return PC_EINVAL;
    }
    static const char *const cn[3] = {"red", "green", "blue"};
    for (int i = 0; i < 3; i++)
        if (!isfinite(c->wb[i]) || !(c->wb[i] > 0) || c->wb[i] > PC_WB_MAX) {
            pc_set_err(err, errlen, "wb_gains: %s gain %g is not a number in (0, %g]", cn[i], c->wb[i], PC_WB_MAX);
            return PC_EINVAL;
        }
    for (int i = 0; i < 9; i++)
        if (!isfinite(c->ccm[i]) || fabs(c->ccm[i]) > PC_CCM_MAX) {
            pc_set_err(err, errlen, "ccm: entry %d (row %d, column %d) = %g is not a number within +-%g",
                       i + 1, i / 3 + 1, i % 3 + 1, c->ccm[i], PC_CCM_MAX);
            return PC_EINVAL;
        }
    switch (c->transfer) {
    case PC_TRANSFER_LINEAR: case PC_TRANSFER_SRGB: case PC_TRANSFER_BT709: break;
    case PC_TRANSFER_GAMMA:
        if (!isfinite(c->gamma) || c->gamma < 0.1 || c->gamma > 10) {
            pc_set_err(err, errlen, "transfer: gamma %g is not within 0.1..10", c->gamma);
            return PC_EINVAL;
        }
        break;
    case PC_TRANSFER_LUT:
        if (!c->lut || c->lut_len != (1 << bits)) {
            pc_set_err(err, errlen, "transfer: the LUT has %d entries, a %d-bit format needs %d (one per code)",
                       c->lut ? c->lut_len : 0, bits, 1 << bits);
            return PC_EINVAL;
        }
        break;
    default:
        pc_set_err(err, errlen, "transfer %d is not linear, srgb, bt709, a gamma value or a LUT file",
                   (int)c->transfer);
        return PC_EINVAL;
    }
    return PC_OK;
}

int pc_colour_cfg_is_identity(const pc_colour_cfg *c, int bits)
{
    static const double id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (bits != 8 || c->black_level != 0 || white_of(c, 8) != 255 || c->transfer != PC_TRANSFER_LINEAR)
        return 0;
    for (int i = 0; i < 3; i++)
        if (c->wb[i] != 1.0)
            return 0;
    for (int i = 0; i < 9; i++)
        if (c->ccm[i] != id[i])
            return 0;
    return 1;
}

/* docs/colour.md §2: the transfer curve on [0, 1]. */
static double transfer_eval(const pc_colour_cfg *c, double x)
{
    switch (c->transfer) {
    case PC_TRANSFER_SRGB: return x <= 0.0031308 ? 12.92 * x : 1.055 * pow(x, 1 / 2.4) - 0.055;
    case PC_TRANSFER_BT709: return x < 0.018 ? 4.5 * x : 1.099 * pow(x, 0.45) - 0.099;
    case PC_TRANSFER_GAMMA: return pow(x, 1 / c->gamma);
    default: return x;
    }
}

int pc_colour_tables_build(const pc_colour_cfg *c, int bits, pc_colour_tables *t, char *err, size_t errlen)
{
    int rc = pc_colour_cfg_check(c, bits, err, errlen);
    if (rc)
        return rc;
    memset(t, 0, sizeof *t);
    t->bits = bits;
    int n = 1 << bits, ident = bits == 8;
    double black = c->black_level, range = white_of(c, bits) - black;
    for (int ch = 0; ch < 3; ch++)
        for (int v = 0; v < n; v++) {
            double x = (v - black) / range * c->wb[ch];
            x = x < 0 ? 0 : x > 1 ? 1 : x;
            int o;
            if (c->transfer == PC_TRANSFER_LUT)
                o = c->lut[(int)floor(x * (n - 1) + 0.5)];
            else {
                double y = transfer_eval(c, x);
                o = (int)floor(y * 255.0 + 0.5);
                o = o < 0 ? 0 : o > 255 ? 255 : o;
            }
            t->lut[ch][v] = (uint8_t)o;
            ident &= o == v;
        }
    t->identity = ident;
    return PC_OK;
}

int pc_yuv_coeffs_ccm(pc_matrix m, pc_range r, const double ccm[9], pc_yuv_coeffs *out, char *err, size_t errlen)
{
    int32_t q[9];
    for (int i = 0; i < 9; i++) {
        if (!isfinite(ccm[i]) || fabs(ccm[i]) > PC_CCM_MAX) {
            pc_set_err(err, errlen, "ccm: entry %d (row %d, column %d) = %g is not a number within +-%g",
                       i + 1, i / 3 + 1, i % 3 + 1, ccm[i], PC_CCM_MAX);
            return PC_EINVAL;
        }
        q[i] = (int32_t)lrint(ccm[i] * 4096.0);
    }
    pc_yuv_coeffs base;
    pc_yuv_coeffs_get(m, r, &base);
    *out = base;
    const int32_t *rows[3] = {base.y, base.cb, base.cr};
    int32_t *orows[3] = {out->y, out->cb, out->cr};
    for (int row = 0; row < 3; row++)
        for (int k = 0; k < 3; k++) {
            int64_t s = 0;
            for (int j = 0; j < 3; j++)
                s += (int64_t)rows[row][j] * q[3 * j + k];
            orows[row][k] = (int32_t)((s + 2048) >> 12);
        }
    return PC_OK;
}

int pc_lut_file_read(const char *path, int expect, uint8_t **out, int *len, char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        pc_set_err(err, errlen, "%s: %s", path, strerror(errno));
        return PC_EIO;
    }
    uint8_t *v = malloc(PC_LUT_MAX_CODES);
    if (!v) {
        fclose(f);
        pc_set_err(err, errlen, "%s: out of memory", path);
        return PC_ENOMEM;
    }
    char line[512];
    int n = 0, lineno = 0, rc = PC_OK;
    while (rc == PC_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *p = line;
        for (;;) {
            while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == ',')
                p++;
            if (!*p)
                break;
            char *end;
            long x = strtol(p, &end, 10);
            if (end == p || x < 0 || x > 255) {
                int tl = (int)strcspn(p, " \t\r\n,");
                pc_set_err(err, errlen, "%s:%d: \"%.*s\" is not an integer 0..255", path, lineno, tl < 20 ? tl : 20, p);
                rc = PC_EINVAL;
                break;
            }
            if (n >= PC_LUT_MAX_CODES) {
                pc_set_err(err, errlen, "%s:%d: more than %d entries (a LUT has one per code: %d)", path, lineno,
                           PC_LUT_MAX_CODES, expect);
                rc = PC_EINVAL;
                break;
            }
            v[n++] = (uint8_t)x;
            p = end;
        }
    }
    fclose(f);
    if (rc == PC_OK && n != expect) {
        pc_set_err(err, errlen, "%s:%d: %d entries, the camera's format needs exactly %d (one per code)", path,
                   lineno, n, expect);
        rc = PC_EINVAL;
    }
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *len = n;
    return PC_OK;
}

/* --- automatic white balance ------------------------------------------------ */

void pc_awb_init(pc_awb *a)
{
    memset(a, 0, sizeof *a);
    a->gain[0] = a->gain[1] = a->gain[2] = 1.0;
    a->alpha = 0.1;
    a->deadband = 0.005;
}

#include "unpack_formulas.h"

int pc_awb_estimate(const pc_rawfmt *f, const uint8_t *frame, int width, int height, double black, double white,
                    int step, double gains[3])
{
    if (step < 1)
        step = 1;
    double clip = black + 0.97 * (white - black), dark = black + 0.02 * (white - black);
    double sum[3] = {0, 0, 0};
    long tiles = 0;
    static const int ch[4] = {0, 1, 1, 2};
    for (int ty = 0; ty + 1 < height; ty += 2 * step)
        for (int tx = 0; tx + 1 < width; tx += 2 * step) {
            double s[3] = {0, 0, 0};
            int bad = 0;
            for (int j = 0; j < 2; j++)
                for (int i = 0; i < 2; i++) {
                    size_t n = (size_t)(ty + j) * (size_t)width + (size_t)(tx + i);
                    double v = pc_unpack_sample(frame, f->packing, f->bits, n);
                    bad |= v >= clip;
                    s[ch[(i | j << 1) ^ (int)f->cfa]] += v - black;
                }
            if (bad || s[1] / 2 < dark - black)
                continue;
            for (int c = 0; c < 3; c++)
                sum[c] += s[c];
            tiles++;
        }
    long total = (long)((width / 2 + step - 1) / step) * ((height / 2 + step - 1) / step);
    if (tiles < 16 || tiles * 50 < total || !(sum[0] > 0) || !(sum[2] > 0))
        return PC_EINVAL;
    double g = sum[1] / 2; /* two green samples per tile */
    gains[0] = g / sum[0];
    gains[1] = 1.0;
    gains[2] = g / sum[2];
    for (int c = 0; c < 3; c += 2)
        gains[c] = gains[c] < 1.0 / PC_WB_MAX ? 1.0 / PC_WB_MAX : gains[c] > PC_WB_MAX ? PC_WB_MAX : gains[c];
    return PC_OK;
}

void pc_awb_update(pc_awb *a, const double est[3])
{
    if (!a->have) {
        for (int c = 0; c < 3; c++)
            a->gain[c] = est[c];
        a->have = 1;
        return;
    }
    for (int c = 0; c < 3; c++) {
        double cur = log(a->gain[c]), want = log(est[c]);
        /* within the dead band: hold (noise never moves the gains) */
        if (fabs(want - cur) > a->deadband)
            a->gain[c] = exp(cur + a->alpha * (want - cur));
    }
}
