/* test_yuv.c - the fixed-point RGB -> Y'CbCr conversion of algorithms.md §8
 * (pc_rgb_to_yuv, NV12 and I420) against a double-precision evaluation of
 * the real-valued definition, for BT.709 and BT.601, limited and full
 * range; grey, black and white exactly; the Q16 table's row sums.
 */
#include "debayer.h"
#include "debayer_test_util.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 0xdeadbeefu;

/* Real-valued §8 for one (R,G,B) (chroma: the 2x2 means are passed in). */
static void yuv_float(int matrix, int range, double r, double g, double b, double *Y, double *Cb, double *Cr)
{
    double kr = matrix == PC_MATRIX_BT601 ? 0.299 : 0.2126;
    double kb = matrix == PC_MATRIX_BT601 ? 0.114 : 0.0722;
    double kg = 1.0 - kr - kb;
    double y = kr * r + kg * g + kb * b;
    double cb = (b - y) / (2.0 * (1.0 - kb)), cr = (r - y) / (2.0 * (1.0 - kr));
    if (range == PC_RANGE_FULL) {
        *Y = y;
        *Cb = 128 + cb;
        *Cr = 128 + cr;
    } else {
        *Y = 16 + y * 219.0 / 255.0;
        *Cb = 128 + cb * 224.0 / 255.0;
        *Cr = 128 + cr * 224.0 / 255.0;
    }
}

static double clampd(double v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

static void against_float(void)
{
    const int w = 256, h = 64;
    size_t n = (size_t)w * h;
    uint8_t *rgb = malloc(3 * n), *yuv = malloc(2 * n);
    for (size_t i = 0; i < 3 * n; i++)
        rgb[i] = (uint8_t)tu_rng(&rng_state);
    /* a few blocks of extremes: pure colours saturate full-range chroma */
    static const uint8_t ext[][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 0}, {0, 255, 255},
                                     {255, 0, 255}, {0, 0, 0}, {255, 255, 255}};
    for (int k = 0; k < 8; k++)
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++)
                memcpy(rgb + 3 * ((size_t)j * w + 2 * k + i), ext[k], 3);
    for (int fmt = PC_FMT_NV12; fmt <= PC_FMT_I420; fmt++)
        for (int m = 0; m < 2; m++)
            for (int r = 0; r < 2; r++) {
                pc_picture p;
                tu_pic_layout(&p, fmt, m, r, w, h, yuv);
                char err[200] = "";
                int rc = pc_rgb_to_yuv(rgb, 3 * (size_t)w, &p, err, sizeof err);
                double maxe = 0;
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++) {
                        const uint8_t *q = rgb + 3 * ((size_t)y * w + x);
                        double Y, Cb, Cr;
                        yuv_float(m, r, q[0], q[1], q[2], &Y, &Cb, &Cr);
                        double e = fabs(p.plane[0][y * p.pitch[0] + x] - clampd(Y));
                        if (e > maxe)
                            maxe = e;
                    }
                for (int j = 0; j < h / 2; j++)
                    for (int i = 0; i < w / 2; i++) {
                        double sr = 0, sg = 0, sb = 0;
                        for (int dy = 0; dy < 2; dy++)
                            for (int dx = 0; dx < 2; dx++) {
                                const uint8_t *q = rgb + 3 * ((size_t)(2 * j + dy) * w + 2 * i + dx);
                                sr += q[0];
                                sg += q[1];
                                sb += q[2];
                            }
                        double Y, Cb, Cr;
                        yuv_float(m, r, sr / 4, sg / 4, sb / 4, &Y, &Cb, &Cr);
                        int cb, cr;
                        if (fmt == PC_FMT_NV12) {
                            cb = p.plane[1][j * p.pitch[1] + 2 * i];
                            cr = p.plane[1][j * p.pitch[1] + 2 * i + 1];
                        } else {
                            cb = p.plane[1][j * p.pitch[1] + i];
                            cr = p.plane[2][j * p.pitch[2] + i];
                        }
                        double e1 = fabs(cb - clampd(Cb)), e2 = fabs(cr - clampd(Cr));
                        if (e1 > maxe)
                            maxe = e1;
                        if (e2 > maxe)
                            maxe = e2;
                    }
                TAP_CHECK(rc == 0 && maxe <= 1.0, "%s %s %s: fixed point within +-1 of the real-valued §8 (max %.3f)",
                          pc_pixfmt_name((pc_pixfmt)fmt), m ? "bt601" : "bt709", r ? "full" : "limited", maxe);
            }
    free(rgb);
    free(yuv);
}

static void grey_black_white(void)
{
    /* 256 grey levels in 2x2 blocks: a 512x2 image */
    const int w = 512, h = 2;
    uint8_t rgb[512 * 2 * 3], yuv[512 * 2 * 2];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            memset(rgb + 3 * (y * w + x), x / 2, 3);
    for (int m = 0; m < 2; m++)
        for (int r = 0; r < 2; r++) {
            pc_picture p;
            tu_pic_layout(&p, PC_FMT_NV12, m, r, w, h, yuv);
            pc_rgb_to_yuv(rgb, 3 * (size_t)w, &p, NULL, 0);
            int bad = 0;
            for (int i = 0; i < w; i += 2)
                bad += p.plane[1][i] != 128 || p.plane[1][i + 1] != 128;
            const char *name = m ? (r ? "bt601 full" : "bt601 limited") : (r ? "bt709 full" : "bt709 limited");
            TAP_CHECK(bad == 0, "%s: every grey level gives Cb = Cr = 128 exactly (%d blocks off)", name, bad);
            int yb = p.plane[0][0], yw = p.plane[0][w - 1];
            TAP_CHECK(yb == (r ? 0 : 16) && yw == (r ? 255 : 235), "%s: black -> Y' %d, white -> Y' %d (want %d, %d)",
                      name, yb, yw, r ? 0 : 16, r ? 255 : 235);
            /* luma of grey is monotonic and within +-1 of the definition */
            int mono = 1, off = 0;
            for (int x = 2; x < w; x += 2) {
                mono &= p.plane[0][x] >= p.plane[0][x - 2];
                double want = r ? x / 2 : 16 + (x / 2) * 219.0 / 255.0;
                off += fabs(p.plane[0][x] - want) > 1.0;
            }
            TAP_CHECK(mono && off == 0, "%s: grey luma monotonic and within +-1 (%d off)", name, off);
        }
}

static void coefficient_table(void)
{
    int bad = 0;
    for (int m = 0; m < 2; m++)
        for (int r = 0; r < 2; r++) {
            pc_yuv_coeffs k;
            pc_yuv_coeffs_get((pc_matrix)m, (pc_range)r, &k);
            int ysum = k.y[0] + k.y[1] + k.y[2];
            bad += ysum != (r ? 65536 : 56284);
            bad += k.cb[0] + k.cb[1] + k.cb[2] != 0;
            bad += k.cr[0] + k.cr[1] + k.cr[2] != 0;
            bad += k.y_offset != (r ? (1 << 15) : (16 << 16) + (1 << 15));
            /* each entry within 1 of round(c * 65536) */
            double kr = m ? 0.299 : 0.2126, kb = m ? 0.114 : 0.0722, kg = 1 - kr - kb;
            double ys = r ? 1.0 : 219.0 / 255.0, cs = r ? 1.0 : 224.0 / 255.0;
            double ideal[9] = {kr * ys, kg * ys, kb * ys,
                               -kr / (2 * (1 - kb)) * cs, -kg / (2 * (1 - kb)) * cs, 0.5 * cs,
                               0.5 * cs, -kg / (2 * (1 - kr)) * cs, -kb / (2 * (1 - kr)) * cs};
            int32_t got[9] = {k.y[0], k.y[1], k.y[2], k.cb[0], k.cb[1], k.cb[2], k.cr[0], k.cr[1], k.cr[2]};
            for (int i = 0; i < 9; i++)
                bad += fabs(got[i] - ideal[i] * 65536.0) > 1.0;
        }
    TAP_CHECK(bad == 0, "Q16 table: Y rows sum to 56284 / 65536, chroma rows to 0, entries within 1 of c*65536 (%d bad)",
              bad);
}

static void invalid(void)
{
    uint8_t rgb[8 * 8 * 3] = {0}, yuv[8 * 8 * 2];
    pc_picture p;
    char err[200] = "";
    tu_pic_layout(&p, PC_FMT_NV12, 0, 0, 8, 8, yuv);
    err[0] = 0;
    TAP_CHECK(pc_rgb_to_yuv(NULL, 24, &p, err, sizeof err) == PC_EINVAL && err[0], "NULL RGB refused: %s", err);
    err[0] = 0;
    TAP_CHECK(pc_rgb_to_yuv(rgb, 23, &p, err, sizeof err) == PC_EINVAL && err[0], "short RGB pitch refused: %s", err);
    p.fmt = PC_FMT_RGB24;
    err[0] = 0;
    TAP_CHECK(pc_rgb_to_yuv(rgb, 24, &p, err, sizeof err) == PC_EINVAL && err[0], "RGB24 target refused: %s", err);
    p.fmt = PC_FMT_RGBX32;
    err[0] = 0;
    TAP_CHECK(pc_rgb_to_yuv(rgb, 24, &p, err, sizeof err) == PC_EINVAL && strstr(err, "rgbx32"),
              "RGBX32 target refused: %s", err);
    tu_pic_layout(&p, PC_FMT_I420, 0, 0, 8, 8, yuv);
    p.matrix = (pc_matrix)5;
    err[0] = 0;
    TAP_CHECK(pc_rgb_to_yuv(rgb, 24, &p, err, sizeof err) == PC_EINVAL && err[0], "unknown matrix refused: %s", err);
    TAP_CHECK(pc_rgb_to_yuv(rgb, 24, NULL, NULL, 0) == PC_EINVAL, "NULL destination refused");
}

/* pc_yuv_to_rgb, the way back (what a snapshot of the panorama writes):
 * 2x2 blocks of one colour come back within 2 code values through
 * pc_rgb_to_yuv (the chroma is exact for them; Y, Cb, Cr rounding spread
 * by the inverse's gains), greys exactly in full range (within 1 in
 * limited: 219 levels for 256), against the real-valued inverse
 * of kr/kb within 1; RGB pictures are copied; a grid or odd size refused. */
static void way_back(void)
{
    const int w = 64, h = 32;
    size_t n = (size_t)w * h;
    uint8_t *rgb = malloc(3 * n), *back = malloc(3 * n), *yuv = malloc(2 * n);
    for (int y = 0; y < h; y += 2)
        for (int x = 0; x < w; x += 2) {
            uint8_t c[3] = {(uint8_t)tu_rng(&rng_state), (uint8_t)tu_rng(&rng_state), (uint8_t)tu_rng(&rng_state)};
            if (x == 0) /* a grey per block row */
                c[0] = c[1] = c[2] = (uint8_t)(y * 8);
            for (int j = 0; j < 2; j++)
                for (int i = 0; i < 2; i++)
                    memcpy(rgb + 3 * ((size_t)(y + j) * w + x + i), c, 3);
        }
    int worst = 0, grey_ok = 1, rc_all = 0;
    double worst_def = 0;
    for (int fmt = PC_FMT_NV12; fmt <= PC_FMT_I420; fmt++)
        for (int m = 0; m < 2; m++)
            for (int r = 0; r < 2; r++) {
                pc_picture p;
                tu_pic_layout(&p, fmt, m, r, w, h, yuv);
                char err[200] = "";
                rc_all |= pc_rgb_to_yuv(rgb, 3 * (size_t)w, &p, err, sizeof err);
                rc_all |= pc_yuv_to_rgb(&p, back, 3 * (size_t)w, err, sizeof err);
                for (size_t i = 0; i < 3 * n; i++) {
                    int e = abs((int)rgb[i] - (int)back[i]);
                    worst = e > worst ? e : worst;
                    if ((i / 3) % (size_t)w < 2) /* limited range has 219 levels for 256 */
                        grey_ok &= e <= (r == PC_RANGE_FULL ? 0 : 1);
                }
                /* the real-valued inverse of the definition, on the YUV it got */
                double kr = m == PC_MATRIX_BT601 ? 0.299 : 0.2126, kb = m == PC_MATRIX_BT601 ? 0.114 : 0.0722;
                double kg = 1.0 - kr - kb, ys = r == PC_RANGE_FULL ? 1.0 : 255.0 / 219.0,
                       cs = r == PC_RANGE_FULL ? 1.0 : 255.0 / 224.0, yo = r == PC_RANGE_FULL ? 0 : 16;
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++) {
                        double Y = (p.plane[0][(size_t)y * p.pitch[0] + x] - yo) * ys, Cb, Cr;
                        if (fmt == PC_FMT_NV12) {
                            Cb = p.plane[1][(size_t)(y / 2) * p.pitch[1] + 2 * (x / 2)];
                            Cr = p.plane[1][(size_t)(y / 2) * p.pitch[1] + 2 * (x / 2) + 1];
                        } else {
                            Cb = p.plane[1][(size_t)(y / 2) * p.pitch[1] + x / 2];
                            Cr = p.plane[2][(size_t)(y / 2) * p.pitch[2] + x / 2];
                        }
                        Cb = (Cb - 128) * cs;
                        Cr = (Cr - 128) * cs;
                        double R = Y + 2 * (1 - kr) * Cr, B = Y + 2 * (1 - kb) * Cb, G = (Y - kr * R - kb * B) / kg;
                        const double want[3] = {clampd(R), clampd(G), clampd(B)};
                        for (int k = 0; k < 3; k++) {
                            double e = fabs(back[3 * ((size_t)y * w + x) + k] - want[k]);
                            worst_def = e > worst_def ? e : worst_def;
                        }
                    }
            }
    TAP_CHECK(rc_all == 0 && worst <= 2 && grey_ok && worst_def <= 1.0,
              "yuv to rgb: one-colour blocks back within %d (<= 2), greys exact (full range), %.2f from the "
              "real-valued inverse",
              worst, worst_def);
    pc_picture p;
    tu_pic_layout(&p, PC_FMT_RGB24, 0, 0, w, h, rgb);
    memset(back, 0, 3 * n);
    char err[200] = "";
    TAP_CHECK(pc_yuv_to_rgb(&p, back, 3 * (size_t)w, err, sizeof err) == 0 && !memcmp(back, rgb, 3 * n),
              "yuv to rgb: an RGB24 picture is copied");
    tu_pic_layout(&p, PC_FMT_NV12, 0, 0, w, h, yuv);
    p.grid_cols = 2;
    TAP_CHECK(pc_yuv_to_rgb(&p, back, 3 * (size_t)w, err, sizeof err) == PC_EINVAL && strstr(err, "grid"),
              "yuv to rgb: a grid picture refused: %s", err);
    free(rgb);
    free(back);
    free(yuv);
}

int main(void)
{
    way_back();
    against_float();
    grey_black_white();
    coefficient_table();
    invalid();
    return tap_done();
}
