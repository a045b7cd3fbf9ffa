/* settings_colour.c - one camera's colour keys parsed into the colour
 * stage's types (settings_colour.h), with errors naming the key. */
#include "settings_colour.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "a, b, c" (commas and/or blanks) into n doubles; -1 when the count or a
 * number is wrong. */
static int parse_numbers(const char *s, double *v, int n, char *err, size_t errlen)
{
    int k = 0;
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';' || *p == '\n')
            p++;
        if (!*p)
            break;
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p) {
            snprintf(err, errlen, "\"%s\": \"%.16s\" is not a number", s, p);
            return -1;
        }
        if (k < n)
            v[k] = x;
        k++;
        p = end;
    }
    if (k != n) {
        snprintf(err, errlen, "\"%s\" has %d number%s, %d needed", s, k, k == 1 ? "" : "s", n);
        return -1;
    }
    return 0;
}

#define FAIL(k, ...)                                                                                               \
    do {                                                                                                           \
        snprintf(key, keylen, "%s", k);                                                                            \
        snprintf(err, errlen, __VA_ARGS__);                                                                        \
        pc_camera_colour_free(out);                                                                                \
        return -1;                                                                                                 \
    } while (0)

int pc_settings_camera_colour(const pc_camera_settings *c, pc_camera_colour *out, char *key, size_t keylen,
                              char *err, size_t errlen)
{
    char e[320];
    memset(out, 0, sizeof *out);
    pc_colour_cfg_init(&out->cfg);
    if (strcmp(c->pixel_format, "auto") == 0) {
        /* chosen by the camera at start: check against the deepest (the
         * tables are built for the format chosen) */
        out->fmt = (pc_rawfmt){12, PC_PACK_PFNC, (pc_cfa)c->pattern};
        out->fmt_auto = 1;
    } else if (c->pixel_format[0]) {
        if (pc_rawfmt_parse(c->pixel_format, &out->fmt, e, sizeof e))
            FAIL("pixel_format", "%s", e);
        if (out->fmt.cfa != (pc_cfa)c->pattern) {
            char n[32];
            pc_rawfmt_name(&(pc_rawfmt){8, PC_PACK_8, (pc_cfa)c->pattern}, n, sizeof n);
            FAIL("pixel_format", "%s has the %s phase but pattern is %s (%s); give one phase", c->pixel_format,
                 pc_cfa_name(out->fmt.cfa), pc_cfa_name((pc_cfa)c->pattern), n);
        }
    } else {
        out->fmt = (pc_rawfmt){8, PC_PACK_8, (pc_cfa)c->pattern};
    }
    out->cfg.black_level = c->black_level;
    out->cfg.white_level = c->white_level;
    if (strcmp(c->wb_gains, "auto") == 0)
        out->wb_auto = 1;
    else if (strcmp(c->wb_gains, "auto shared") == 0)
        out->wb_auto = 2;
    else if (parse_numbers(c->wb_gains, out->cfg.wb, 3, e, sizeof e))
        FAIL("wb_gains", "%s (give \"red, green, blue\", \"auto\" or \"auto shared\")", e);
    if (c->ccm[0] && parse_numbers(c->ccm, out->cfg.ccm, 9, e, sizeof e))
        FAIL("ccm", "%s (give 9 numbers, row by row)", e);
    const char *t = c->transfer;
    int tn = pc_transfer_from_name(t);
    char *end = NULL;
    double g = t[0] ? strtod(t, &end) : 0;
    if (!t[0] || tn == PC_TRANSFER_LINEAR) {
        out->cfg.transfer = PC_TRANSFER_LINEAR;
    } else if (tn >= 0) {
        out->cfg.transfer = (pc_transfer)tn;
    } else if (end && end != t && *end == '\0') {
        out->cfg.transfer = PC_TRANSFER_GAMMA;
        out->cfg.gamma = g;
    } else {
        int len = 0;
        if (pc_lut_file_read(t, 1 << out->fmt.bits, &out->lut, &len, e, sizeof e))
            FAIL("transfer", "%s (linear, srgb, bt709, a gamma value, or a LUT file of %d codes for %d-bit %s)", e,
                 1 << out->fmt.bits, out->fmt.bits, c->pixel_format[0] ? c->pixel_format : "8-bit data");
        out->cfg.transfer = PC_TRANSFER_LUT;
        out->cfg.lut = out->lut;
        out->cfg.lut_len = len;
    }
    if (pc_colour_cfg_check(&out->cfg, out->fmt.bits, e, sizeof e)) {
        const char *k = strstr(e, "black_level") == e ? "black_level"
                        : strstr(e, "white_level") == e ? "white_level"
                        : strstr(e, "wb_gains") == e  ? "wb_gains"
                        : strstr(e, "ccm") == e       ? "ccm"
                                                      : "transfer";
        FAIL(k, "%s", e);
    }
    return 0;
}

void pc_camera_colour_free(pc_camera_colour *cc)
{
    free(cc->lut);
    cc->lut = NULL;
    cc->cfg.lut = NULL;
}
