/* test_reference.c - the C demosaicing reference against the spec
 * (docs/algorithms.md): hand-computed known answers per
 * algorithm, flat colours for every algorithm and CFA phase (RGB and NV12),
 * step edges for the directional algorithms, the symmetry and padding
 * tests of §11.2 and §11.3, every output byte written, vector interior ==
 * scalar formulas bit for bit, RGBX32 == RGB24 plus X = 255, and invalid
 * input.
 */
#include "debayer.h"
#include "debayer_test_util.h"
#include "reference_passes.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 0x12345678u;

static size_t pic_layout(pc_picture *p, int fmt, int w, int h, uint8_t *buf)
{
    return tu_pic_layout(p, fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, buf);
}

static int demosaic(int algo, const uint8_t *raw, int w, int h, int cfa, int fmt, uint8_t *out)
{
    pc_bayer b = {raw, (size_t)w, w, h, (pc_cfa)cfa, 0};
    pc_picture p;
    pic_layout(&p, fmt, w, h, out);
    char err[256] = "";
    int rc = pc_ref_debayer((pc_algo_id)algo, &b, &p, err, sizeof err);
    if (rc)
        tap_diag("pc_ref_debayer: %s", err);
    return rc;
}

static int site_of(int x, int y, int cfa) { return ((x & 1) | (y & 1) << 1) ^ cfa; }

/* ------------------------------------------------------------------------
 * Known answers, computed by hand from the spec's formulas (8x8, RGGB:
 * R at even x and even y, B at odd x and odd y).
 * ---------------------------------------------------------------------- */

#define PX(o, x, y, c) (o)[3 * ((y) * 8 + (x)) + (c)]

static void known_answers(void)
{
    uint8_t raw[64], o[8 * 8 * 3];

    /* Image A: every sample 100 except the R sample at (4,4) = 164. */
    memset(raw, 100, sizeof raw);
    raw[4 * 8 + 4] = 164;

    /* bilinear §2: Gr (5,4): R = RS(164+100, 1) = 132; Gb (4,5): R = RS(sum VER, 1)
     * = 132; B (5,5): R = RS(164+3*100, 2) = 116; R (4,4): G = RS(4*100, 2) = 100. */
    demosaic(PC_ALGO_BILINEAR, raw, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
    TAP_CHECK(PX(o, 5, 4, 0) == 132 && PX(o, 4, 5, 0) == 132 && PX(o, 5, 5, 0) == 116 &&
                  PX(o, 4, 4, 1) == 100 && PX(o, 4, 4, 0) == 164,
              "bilinear known answer: R(5,4)=%d R(4,5)=%d R(5,5)=%d G(4,4)=%d (want 132 132 116 100)",
              PX(o, 5, 4, 0), PX(o, 4, 5, 0), PX(o, 5, 5, 0), PX(o, 4, 4, 1));

    /* smooth hue §3: T2.g = 100 everywhere near (4,4) (bilinear green of
     * flat greens). B (5,5): q = (165<<12)/101 = 6691 and 3 x (101<<12)/101
     * = 4096, sum 18979; (101*18979 + 8192) >> 14 = 117, minus 1 = 116.
     * Gr (5,4): sum q = 6691 + 4096 = 10787; (101*10787 + 4096) >> 13 = 133,
     * minus 1 = 132. */
    demosaic(PC_ALGO_SMOOTH_HUE, raw, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
    TAP_CHECK(PX(o, 5, 5, 0) == 116 && PX(o, 5, 4, 0) == 132,
              "smooth-hue known answer: R(5,5)=%d R(5,4)=%d (want 116 132)", PX(o, 5, 5, 0), PX(o, 5, 4, 0));

    /* smooth hue with a green that varies: 100 except the G sample above R
     * (4,4): P(4,3) = 140, so T2.g(4,4) = RS(440, 2) = 110 while T2.g =
     * 100 at the other diagonal neighbours of B (5,5) and at (5,5) itself.
     * q(4,4) = (101<<12)/111 = 3726, the other three 4096: sum 16014;
     * (101*16014 + 8192) >> 14 = 99, minus 1 = 98. */
    {
        uint8_t raw2[64];
        memset(raw2, 100, sizeof raw2);
        raw2[3 * 8 + 4] = 140;
        demosaic(PC_ALGO_SMOOTH_HUE, raw2, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
        TAP_CHECK(PX(o, 5, 5, 0) == 98 && PX(o, 4, 4, 1) == 110,
                  "smooth-hue known answer with varying green: R(5,5)=%d G(4,4)=%d (want 98 110)",
                  PX(o, 5, 5, 0), PX(o, 4, 4, 1));
    }

    /* hq-linear §4 in sixteenths: flat 100 is reproduced, and the +64 bump
     * adds 64*k16/16 = 4*k16. R (4,4): G = K_G centre 8 -> 132, B = K_D
     * centre 12 -> 148. R (6,4): G = K_G (-2,0) = -2 -> 92, B = K_D (-2,0)
     * = -3 -> 88. Gr (5,4): R = K_H (-1,0) = 8 -> 132, B = K_V (-1,0) = 0
     * -> 100. Gb (4,5): R = K_V (0,-1) = 8 -> 132. B (5,5): R = K_D (-1,-1)
     * = 4 -> 116. R (4,6): G = K_G (0,-2) = -2 -> 92. */
    demosaic(PC_ALGO_HQ_LINEAR, raw, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
    TAP_CHECK(PX(o, 4, 4, 1) == 132 && PX(o, 4, 4, 2) == 148 && PX(o, 6, 4, 1) == 92 &&
                  PX(o, 6, 4, 2) == 88 && PX(o, 5, 4, 0) == 132 && PX(o, 5, 4, 2) == 100 &&
                  PX(o, 4, 5, 0) == 132 && PX(o, 5, 5, 0) == 116 && PX(o, 4, 6, 1) == 92,
              "hq-linear known answer: %d %d %d %d %d %d %d %d %d (want 132 148 92 88 132 100 132 116 92)",
              PX(o, 4, 4, 1), PX(o, 4, 4, 2), PX(o, 6, 4, 1), PX(o, 6, 4, 2), PX(o, 5, 4, 0),
              PX(o, 5, 4, 2), PX(o, 4, 5, 0), PX(o, 5, 5, 0), PX(o, 4, 6, 1));

    /* WD green §7.1 at R (4,4): all four directions have E = 2*100 + 164 -
     * 100 = 264 and D = 2*(1 + |164-100|) = 130, so G = 132.
     * wd-original pass 2 at B (5,5), DIAG4 with X = raw R, C = WD green
     * (100 at every B site): a=(-1,-1): E = 2*164, D = 2*(1+64+64) = 258;
     * a=(1,-1) and (-1,1): E = 200, D = 2 + |164-100| = 66 (side term);
     * a=(1,1): E = 200, D = 2*(1+64) = 130. Weighted mean 105.92 -> 106.
     * wd-modified (ED final pass) at B (5,5): R = RS(4*100 + (164-132), 2) = 108. */
    demosaic(PC_ALGO_WD_ORIGINAL, raw, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
    TAP_CHECK(PX(o, 4, 4, 1) == 132 && PX(o, 5, 5, 0) == 106,
              "wd-original known answer: G(4,4)=%d R(5,5)=%d (want 132 106)", PX(o, 4, 4, 1), PX(o, 5, 5, 0));
    demosaic(PC_ALGO_WD_MODIFIED, raw, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
    TAP_CHECK(PX(o, 4, 4, 1) == 132 && PX(o, 5, 5, 0) == 108,
              "wd-modified known answer: G(4,4)=%d R(5,5)=%d (want 132 108)", PX(o, 4, 4, 1), PX(o, 5, 5, 0));

    /* Image B: 100 except the Gr sample at (5,4) = 140. WD green at R (4,4):
     * N, S: E = 200, D = 2 + |140-100| = 42 (side term); W: E = 200,
     * D = 2*(1+40) = 82; E: E = 280, D = 2*(1+40+40) = 162. Weighted mean
     * of 100, 100, 100, 140 with weights 1/42, 1/42, 1/82, 1/162 = 103.74
     * -> 104. */
    memset(raw, 100, sizeof raw);
    raw[4 * 8 + 5] = 140;
    demosaic(PC_ALGO_WD_MODIFIED, raw, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
    TAP_CHECK(PX(o, 4, 4, 1) == 104, "weighted-directions green known answer: G(4,4)=%d (want 104)",
              PX(o, 4, 4, 1));

    /* Image C: 100 except the G sample above (4,4): P(4,3) = 160.
     * edge §5 at R (4,4): dH = 0, dV = |160-100| = 60, so G = RS(gH, 2) with
     * gH = 2*200 + 200 - 200 = 400 -> 100.
     * homogeneous-edge §6: own pref +1, but B (3,3) and (5,3) have dH = 60,
     * dV = 0 (pref -1), Gb (4,5) has dV = |200-160-100| = 60 (pref +1), the
     * rest tie: the 3x3 sum is 0, so G = RS(gh + gv, 1) with gh = 100,
     * gv = RS(2*260 + 200 - 200, 2) = 130 -> 115.
     * bilinear: G = RS(160 + 300, 2) = 115. */
    memset(raw, 100, sizeof raw);
    raw[3 * 8 + 4] = 160;
    demosaic(PC_ALGO_EDGE, raw, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
    int ed = PX(o, 4, 4, 1);
    demosaic(PC_ALGO_HOMOGENEOUS_EDGE, raw, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
    int hed = PX(o, 4, 4, 1);
    demosaic(PC_ALGO_BILINEAR, raw, 8, 8, PC_CFA_RGGB, PC_FMT_RGB24, o);
    TAP_CHECK(ed == 100 && hed == 115 && PX(o, 4, 4, 1) == 115,
              "edge / homogeneous-edge / bilinear known answer: G(4,4) = %d %d %d (want 100 115 115)", ed,
              hed, PX(o, 4, 4, 1));
}

/* ------------------------------------------------------------------------
 * Flat colours (§11.1), RGB and NV12, every algorithm and phase
 * ---------------------------------------------------------------------- */

static void flat_colours(void)
{
    const int w = 48, h = 12; /* wide enough for the vector interior */
    static const int cols[][3] = {{0, 0, 0}, {255, 255, 255}, {200, 30, 90}, {17, 240, 128}, {255, 0, 1}};
    uint8_t *raw = malloc((size_t)w * h), *o = malloc(3 * (size_t)w * h);
    for (int a = 0; a < PC_ALGO_COUNT; a++)
        for (int cfa = 0; cfa < 4; cfa++) {
            int bad_rgb = 0, bad_yuv = 0;
            /* net is a learned network: a flat colour comes out within one
             * code value (its float output rounded), not exactly */
            const int tol = a == PC_ALGO_NET;
            for (size_t ci = 0; ci < sizeof cols / sizeof cols[0]; ci++) {
                const int *col = cols[ci];
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++) {
                        int s = site_of(x, y, cfa);
                        raw[y * w + x] = (uint8_t)col[s == 0 ? 0 : s == 3 ? 2 : 1];
                    }
                demosaic(a, raw, w, h, cfa, PC_FMT_RGB24, o);
                for (int i = 0; i < w * h; i++)
                    for (int c = 0; c < 3; c++)
                        bad_rgb += abs(o[3 * i + c] - col[c]) > tol;
                /* NV12 of a flat colour, §8 written out */
                pc_yuv_coeffs k;
                pc_yuv_coeffs_get(PC_MATRIX_BT709, PC_RANGE_LIMITED, &k);
                int Y = (k.y[0] * col[0] + k.y[1] * col[1] + k.y[2] * col[2] + k.y_offset) >> 16;
                int cb = (k.cb[0] * 4 * col[0] + k.cb[1] * 4 * col[1] + k.cb[2] * 4 * col[2] + (128 << 18) + (1 << 17)) >> 18;
                int cr = (k.cr[0] * 4 * col[0] + k.cr[1] * 4 * col[1] + k.cr[2] * 4 * col[2] + (128 << 18) + (1 << 17)) >> 18;
                Y = Y < 0 ? 0 : Y > 255 ? 255 : Y;
                cb = cb < 0 ? 0 : cb > 255 ? 255 : cb;
                cr = cr < 0 ? 0 : cr > 255 ? 255 : cr;
                demosaic(a, raw, w, h, cfa, PC_FMT_NV12, o);
                for (int i = 0; i < w * h; i++)
                    bad_yuv += abs(o[i] - Y) > tol;
                for (int i = 0; i < w * h / 2; i += 2)
                    bad_yuv += abs(o[w * h + i] - cb) > tol || abs(o[w * h + i + 1] - cr) > tol;
            }
            TAP_CHECK(bad_rgb == 0 && bad_yuv == 0, "flat colours %s: %s %s (%d RGB, %d NV12 bytes wrong)",
                      tol ? "within 1" : "exact", pc_algo_get((pc_algo_id)a)->name, pc_cfa_name((pc_cfa)cfa),
                      bad_rgb, bad_yuv);
        }
    free(raw);
    free(o);
}

/* ------------------------------------------------------------------------
 * Step edges for the directional algorithms
 * ---------------------------------------------------------------------- */

static void step_edges(void)
{
    const int w = 16, h = 16;
    uint8_t raw[16 * 16], o[16 * 16 * 3];
    for (int vertical = 1; vertical >= 0; vertical--) {
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                raw[y * w + x] = (vertical ? x : y) < 7 ? 50 : 200;
        int err_g[PC_ALGO_COUNT], err_all[PC_ALGO_COUNT];
        for (int a = 0; a < PC_ALGO_COUNT; a++) {
            demosaic(a, raw, w, h, PC_CFA_RGGB, PC_FMT_RGB24, o);
            err_g[a] = err_all[a] = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    for (int c = 0; c < 3; c++) {
                        int e = abs(o[3 * (y * w + x) + c] - raw[y * w + x]);
                        if (e > err_all[a])
                            err_all[a] = e;
                        if (c == 1 && e > err_g[a])
                            err_g[a] = e;
                    }
        }
        const char *d = vertical ? "vertical" : "horizontal";
        TAP_CHECK(err_all[PC_ALGO_EDGE] == 0, "%s grey step edge reproduced exactly by edge (max error %d)", d,
                  err_all[PC_ALGO_EDGE]);
        TAP_CHECK(err_all[PC_ALGO_HOMOGENEOUS_EDGE] == 0,
                  "%s grey step edge reproduced exactly by homogeneous-edge (max error %d)", d,
                  err_all[PC_ALGO_HOMOGENEOUS_EDGE]);
        TAP_CHECK(err_all[PC_ALGO_WD_MODIFIED] == 0,
                  "%s grey step edge reproduced exactly by wd-modified (max error %d)", d,
                  err_all[PC_ALGO_WD_MODIFIED]);
        /* wd-original: green exact; its diagonal R/B pass straddles the edge
         * (worked example: R at the B site next to it is 78, not 50), but
         * stays well below bilinear's error. */
        TAP_CHECK(err_g[PC_ALGO_WD_ORIGINAL] == 0 && err_all[PC_ALGO_WD_ORIGINAL] < err_all[PC_ALGO_BILINEAR] / 2,
                  "%s step edge: wd-original green exact (max %d), R/B max error %d < half of bilinear's %d", d,
                  err_g[PC_ALGO_WD_ORIGINAL], err_all[PC_ALGO_WD_ORIGINAL], err_all[PC_ALGO_BILINEAR]);
        TAP_CHECK(err_g[PC_ALGO_BILINEAR] >= 30, "%s step edge: bilinear green does smear it (max error %d)", d,
                  err_g[PC_ALGO_BILINEAR]);
    }
}

/* ------------------------------------------------------------------------
 * Symmetry (§11.2) and padding equivalence (§11.3) on uniform noise
 * ---------------------------------------------------------------------- */

static void symmetry_and_padding(int w, int h)
{
    size_t n = (size_t)w * h;
    uint8_t *raw = malloc(n), *f = malloc(n), *o1 = malloc(3 * n), *o2 = malloc(3 * n);
    for (size_t i = 0; i < n; i++)
        raw[i] = (uint8_t)tu_rng(&rng_state);
    for (int a = 0; a < PC_ALGO_COUNT; a++) {
        const char *name = pc_algo_get((pc_algo_id)a)->name;
        /* net's learned filters have no mirror symmetry (nothing made
         * them symmetric in training): padding below still applies */
        if (a == PC_ALGO_NET)
            continue;
        demosaic(a, raw, w, h, PC_CFA_RGGB, PC_FMT_RGB24, o1);
        int bad = 0;
        /* horizontal flip: RGGB <-> GRBG */
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                f[y * w + (w - 1 - x)] = raw[y * w + x];
        demosaic(a, f, w, h, PC_CFA_GRBG, PC_FMT_RGB24, o2);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                bad += memcmp(&o1[3 * (y * w + x)], &o2[3 * (y * w + w - 1 - x)], 3) != 0;
        TAP_CHECK(bad == 0, "%s %dx%d: horizontal flip symmetry (%d pixels differ)", name, w, h, bad);
        /* vertical flip: RGGB <-> GBRG */
        bad = 0;
        for (int y = 0; y < h; y++)
            memcpy(f + (size_t)(h - 1 - y) * w, raw + (size_t)y * w, (size_t)w);
        demosaic(a, f, w, h, PC_CFA_GBRG, PC_FMT_RGB24, o2);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                bad += memcmp(&o1[3 * (y * w + x)], &o2[3 * ((h - 1 - y) * w + x)], 3) != 0;
        TAP_CHECK(bad == 0, "%s %dx%d: vertical flip symmetry (%d pixels differ)", name, w, h, bad);
        /* transpose: RGGB stays RGGB, Gr <-> Gb; the frame becomes h x w */
        bad = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                f[x * h + y] = raw[y * w + x];
        demosaic(a, f, h, w, PC_CFA_RGGB, PC_FMT_RGB24, o2);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                bad += memcmp(&o1[3 * (y * w + x)], &o2[3 * (x * h + y)], 3) != 0;
        TAP_CHECK(bad == 0, "%s %dx%d: transpose symmetry (%d pixels differ)", name, w, h, bad);
    }
    /* padding: reflect-pad by an even amount >= R_tot, demosaic, crop */
    for (int a = 0; a < PC_ALGO_COUNT; a++)
        for (int cfa = 0; cfa < 4; cfa++) {
            /* MLRI's guided filters average over the window clipped to the
             * frame (the authors' rule), not a mirrored one: padding changes
             * its border by design (tests/test_mlri.c covers it). */
            if (a == PC_ALGO_MLRI)
                continue;
            const pc_algo_desc *d = pc_algo_get((pc_algo_id)a);
            int pad = (d->radius_total + 1) & ~1;
            if (cfa & 1)
                pad += 8; /* also a wider pad */
            int W = w + 2 * pad, H = h + 2 * pad;
            uint8_t *pr = malloc((size_t)W * H), *po = malloc(3 * (size_t)W * H);
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    /* reflect-101, repeated where the pad exceeds the
                     * frame (net's 32 > 24x20) */
                    int sx = (x - pad) % (2 * w - 2), sy = (y - pad) % (2 * h - 2);
                    sx = sx < 0 ? sx + 2 * w - 2 : sx;
                    sy = sy < 0 ? sy + 2 * h - 2 : sy;
                    sx = sx >= w ? 2 * w - 2 - sx : sx;
                    sy = sy >= h ? 2 * h - 2 - sy : sy;
                    pr[y * W + x] = raw[sy * w + sx];
                }
            demosaic(a, raw, w, h, cfa, PC_FMT_RGB24, o1);
            demosaic(a, pr, W, H, cfa, PC_FMT_RGB24, po);
            int bad = 0;
            for (int y = 0; y < h; y++)
                bad += memcmp(o1 + (size_t)y * 3 * w, po + ((size_t)(y + pad) * W + pad) * 3, 3 * (size_t)w) != 0;
            TAP_CHECK(bad == 0, "%s %s %dx%d: padding by %d and cropping gives the same result (%d rows differ)",
                      d->name, pc_cfa_name((pc_cfa)cfa), w, h, pad, bad);
            free(pr);
            free(po);
        }
    free(raw);
    free(f);
    free(o1);
    free(o2);
}

/* ------------------------------------------------------------------------
 * Every output byte written; pitch padding untouched
 * ---------------------------------------------------------------------- */

static void all_written(void)
{
    const int w = 50, h = 14, padb = 7;
    uint8_t *raw = malloc((size_t)w * h);
    for (int i = 0; i < w * h; i++)
        raw[i] = (uint8_t)tu_rng(&rng_state);
    for (int fmt = 0; fmt <= PC_FMT_RGBX32; fmt++)
        for (int a = 0; a < PC_ALGO_COUNT; a++) {
            int cfa = (a + fmt) & 3;
            uint8_t *buf[2];
            pc_picture p[2];
            size_t rowb[3], bytes = 0;
            int rows[3];
            int np = tu_planes((pc_pixfmt)fmt, w, h, rowb, rows);
            for (int pl = 0; pl < np; pl++)
                bytes += (rowb[pl] + padb) * rows[pl];
            for (int k = 0; k < 2; k++) {
                buf[k] = malloc(bytes);
                memset(buf[k], k ? 0xff : 0x00, bytes);
                memset(&p[k], 0, sizeof p[k]);
                p[k].fmt = (pc_pixfmt)fmt;
                p[k].width = w;
                p[k].height = h;
                uint8_t *q = buf[k];
                for (int pl = 0; pl < np; pl++) {
                    p[k].plane[pl] = q;
                    p[k].pitch[pl] = rowb[pl] + padb;
                    q += p[k].pitch[pl] * rows[pl];
                }
                pc_bayer b = {raw, (size_t)w, w, h, (pc_cfa)cfa, 0};
                pc_ref_debayer((pc_algo_id)a, &b, &p[k], NULL, 0);
            }
            /* Bytes inside rows must agree whatever the poison; padding bytes
             * must keep it. */
            int unwritten = 0, overwritten = 0;
            for (int pl = 0; pl < np; pl++) {
                for (int y = 0; y < rows[pl]; y++)
                    for (size_t x = 0; x < p[0].pitch[pl]; x++) {
                        uint8_t v0 = p[0].plane[pl][y * p[0].pitch[pl] + x];
                        uint8_t v1 = p[1].plane[pl][y * p[1].pitch[pl] + x];
                        if (x < rowb[pl])
                            unwritten += v0 != v1;
                        else
                            overwritten += v0 != 0x00 || v1 != 0xff;
                    }
            }
            TAP_CHECK(unwritten == 0 && overwritten == 0,
                      "%s %s: every output byte written (%d not), pitch padding untouched (%d touched)",
                      pc_algo_get((pc_algo_id)a)->name, pc_pixfmt_name((pc_pixfmt)fmt), unwritten, overwritten);
            free(buf[0]);
            free(buf[1]);
        }
    free(raw);
}

/* ------------------------------------------------------------------------
 * Vector interior == scalar formulas, and YUV final pass == RGB + §8
 * ---------------------------------------------------------------------- */

static int run_job(int a, const uint8_t *raw, int w, int h, int cfa, int fmt, int scalar, uint8_t *out)
{
    pc_bayer b = {raw, (size_t)w, w, h, (pc_cfa)cfa, 0};
    pc_picture p;
    pic_layout(&p, fmt, w, h, out);
    size_t tb = (size_t)PC_JOB_MAX_PLANES * w * h;
    uint8_t *temp = malloc(tb);
    pc_job job;
    char err[256] = "";
    int rc = pc_job_setup(&job, (pc_algo_id)a, &b, &p, temp, tb, err, sizeof err);
    if (rc == 0) {
        job.scalar_only = scalar;
        for (int k = 0; k < job.npasses; k++)
            pc_job_pass(&job, k, 0, h);
    } else {
        tap_diag("pc_job_setup: %s", err);
    }
    free(temp);
    return rc;
}

static void vector_equals_scalar(void)
{
    static const int sizes[][2] = {{102, 14}, {146, 10}, {40, 8}};
    for (int mode = 0; mode < 3; mode++)
        for (int a = 0; a < PC_ALGO_MLRI; a++) { /* MLRI has no vector form */
            long bad = 0, total = 0;
            for (size_t si = 0; si < 3; si++) {
                int w = sizes[si][0], h = sizes[si][1];
                size_t n = (size_t)w * h;
                uint8_t *raw = malloc(n), *o1 = malloc(4 * n), *o2 = malloc(4 * n);
                for (size_t i = 0; i < n; i++) {
                    uint32_t r = tu_rng(&rng_state);
                    /* uniform noise; extremes only (clamps, big gradients);
                     * sparse spikes on grey (ties) */
                    raw[i] = (uint8_t)(mode == 0 ? r : mode == 1 ? ((r & 1) ? 255 : 0) : (r % 5 == 0 ? r >> 8 : 128));
                }
                for (int cfa = 0; cfa < 4; cfa++)
                    for (int fmt = 0; fmt <= PC_FMT_RGBX32; fmt++) {
                        size_t bytes = fmt == PC_FMT_RGB24 ? 3 * n : fmt == PC_FMT_RGBX32 ? 4 * n : n + n / 2;
                        run_job(a, raw, w, h, cfa, fmt, 1, o1);
                        run_job(a, raw, w, h, cfa, fmt, 0, o2);
                        for (size_t i = 0; i < bytes; i++)
                            bad += o1[i] != o2[i];
                        total += (long)bytes;
                    }
                free(raw);
                free(o1);
                free(o2);
            }
            TAP_CHECK(bad == 0, "%s: vector interior == scalar formulas (%s input, %ld of %ld bytes differ)",
                      pc_algo_get((pc_algo_id)a)->name, mode == 0 ? "noise" : mode == 1 ? "0/255" : "spiky grey",
                      bad, total);
        }
}

static void yuv_final_pass(void)
{
    const int w = 64, h = 20;
    size_t n = (size_t)w * h;
    uint8_t *raw = malloc(n), *rgb = malloc(3 * n), *y1 = malloc(2 * n), *y2 = malloc(2 * n);
    for (size_t i = 0; i < n; i++)
        raw[i] = (uint8_t)tu_rng(&rng_state);
    for (int a = 0; a < PC_ALGO_COUNT; a++) {
        int bad = 0;
        for (int fmt = PC_FMT_NV12; fmt <= PC_FMT_I420; fmt++)
            for (int m = 0; m < 2; m++)
                for (int r = 0; r < 2; r++) {
                    pc_bayer b = {raw, (size_t)w, w, h, PC_CFA_BGGR, 0};
                    pc_picture p;
                    demosaic(a, raw, w, h, PC_CFA_BGGR, PC_FMT_RGB24, rgb);
                    pic_layout(&p, fmt, w, h, y1);
                    p.matrix = (pc_matrix)m;
                    p.range = (pc_range)r;
                    pc_ref_debayer((pc_algo_id)a, &b, &p, NULL, 0);
                    pic_layout(&p, fmt, w, h, y2);
                    p.matrix = (pc_matrix)m;
                    p.range = (pc_range)r;
                    pc_rgb_to_yuv(rgb, 3 * (size_t)w, &p, NULL, 0);
                    bad += memcmp(y1, y2, n + n / 2) != 0;
                }
        TAP_CHECK(bad == 0, "%s: YUV written by the final pass == RGB24 output + pc_rgb_to_yuv (%d of 8 differ)",
                  pc_algo_get((pc_algo_id)a)->name, bad);
    }
    free(raw);
    free(rgb);
    free(y1);
    free(y2);
}

/* ------------------------------------------------------------------------
 * RGBX32 (the panorama's texture source): the RGB24 bytes of every pixel
 * plus X = 255, for every algorithm (MLRI's own final stage included) and
 * phase, wide enough for the vector interior, into a padded pitch whose
 * padding stays untouched; its name and geometry.
 * ---------------------------------------------------------------------- */

static void rgbx32_is_rgb24(void)
{
    const int w = 102, h = 14, padb = 12;
    const size_t n = (size_t)w * h, pitch = 4 * (size_t)w + padb;
    uint8_t *raw = malloc(n), *rgb = malloc(3 * n), *x = malloc(pitch * h);
    for (size_t i = 0; i < n; i++)
        raw[i] = (uint8_t)tu_rng(&rng_state);
    for (int a = 0; a < PC_ALGO_COUNT; a++) {
        long bad = 0, xbad = 0, pad = 0;
        int rc = 0;
        for (int cfa = 0; cfa < 4; cfa++) {
            pc_bayer b = {raw, (size_t)w, w, h, (pc_cfa)cfa, 0};
            pc_picture p = {.fmt = PC_FMT_RGBX32, .plane = {x}, .pitch = {pitch}, .width = w, .height = h};
            memset(x, 0x3c, pitch * h);
            char err[256] = "";
            rc |= demosaic(a, raw, w, h, cfa, PC_FMT_RGB24, rgb);
            rc |= pc_ref_debayer((pc_algo_id)a, &b, &p, err, sizeof err);
            if (err[0])
                tap_diag("rgbx32 %s: %s", pc_algo_get((pc_algo_id)a)->name, err);
            for (int y = 0; y < h; y++) {
                const uint8_t *r = x + (size_t)y * pitch;
                for (int i = 0; i < w; i++) {
                    for (int c = 0; c < 3; c++)
                        bad += r[4 * i + c] != rgb[3 * ((size_t)y * w + i) + c];
                    xbad += r[4 * i + 3] != 255;
                }
                for (size_t i = 4 * (size_t)w; i < pitch; i++)
                    pad += r[i] != 0x3c;
            }
        }
        TAP_CHECK(rc == 0 && bad == 0 && xbad == 0 && pad == 0,
                  "%s: rgbx32 == rgb24's R, G, B (%ld differ) with X = 255 (%ld not), padding untouched (%ld "
                  "touched), 4 phases", pc_algo_get((pc_algo_id)a)->name, bad, xbad, pad);
    }
    int pw = 0, ph = 0;
    size_t rb = 0;
    TAP_CHECK(pc_pixfmt_from_name("rgbx32") == PC_FMT_RGBX32 && pc_pixfmt_from_name("RGBX32") == PC_FMT_RGBX32 &&
                  strcmp(pc_pixfmt_name(PC_FMT_RGBX32), "rgbx32") == 0 && pc_pixfmt_planes(PC_FMT_RGBX32) == 1 &&
                  pc_picture_plane_size(PC_FMT_RGBX32, 2040, 1080, 0, &pw, &ph, &rb) == 0 && pw == 2040 &&
                  ph == 1080 && rb == 4 * 2040 && pc_picture_plane_size(PC_FMT_RGBX32, 8, 8, 1, NULL, NULL, NULL),
              "rgbx32: name both ways, one plane of 4*W bytes per row");
    free(raw);
    free(rgb);
    free(x);
}

/* ------------------------------------------------------------------------
 * Invalid input
 * ---------------------------------------------------------------------- */

static void invalid_input(void)
{
    char err[256] = "";
    uint8_t *raw = calloc(64 * 64, 1), *out = calloc(3 * 64 * 64, 1);
    pc_bayer b = {raw, 64, 64, 64, PC_CFA_RGGB, 0};
    pc_picture p;

    static const int bad_sizes[][2] = {{2, 2}, {6, 4}, {0, 0}, {0, 8}, {9, 8}, {8, 11}, {-8, 8},
                                       {PC_MAX_DIM + 2, 8}, {8, PC_MAX_DIM + 2}};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        int w = bad_sizes[i][0], h = bad_sizes[i][1];
        err[0] = 0;
        int rc = pc_check_size(w, h, err, sizeof err);
        const char *want = (w < PC_MIN_DIM || h < PC_MIN_DIM) ? "at least 8"
                           : (w > PC_MAX_DIM || h > PC_MAX_DIM) ? "at most" : "even";
        TAP_CHECK(rc == PC_EINVAL && strstr(err, want), "size %dx%d refused, message names the rule: %s", w, h, err);
        b.width = w;
        b.height = h;
        pic_layout(&p, PC_FMT_RGB24, w, h, out);
        err[0] = 0;
        rc = pc_ref_debayer(PC_ALGO_EDGE, &b, &p, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && err[0], "pc_ref_debayer refuses %dx%d: %s", w, h, err);
    }
    TAP_CHECK(pc_check_size(8, 8, err, sizeof err) == 0 && pc_check_size(2040, 5400, err, sizeof err) == 0 &&
                  pc_check_size(16384, 16384, err, sizeof err) == 0,
              "sizes 8x8, 2040x5400 and 16384x16384 accepted");

    b.width = b.height = 64;
    pic_layout(&p, PC_FMT_RGB24, 64, 64, out);
    int ids[] = {-1, PC_ALGO_COUNT, 99};
    for (int i = 0; i < 3; i++) {
        err[0] = 0;
        int rc = pc_ref_debayer((pc_algo_id)ids[i], &b, &p, err, sizeof err);
        TAP_CHECK(rc == PC_EINVAL && strstr(err, "unknown algorithm"), "algorithm id %d refused: %s", ids[i], err);
    }
    TAP_CHECK(pc_algo_find("no-such-algo") == NULL && pc_algo_find("edge") != NULL,
              "unknown algorithm name not found, 'edge' found");
    TAP_CHECK(pc_cfa_from_name("RGBG") < 0 && pc_cfa_from_name("") < 0 && pc_cfa_from_name(NULL) < 0 &&
                  pc_cfa_from_name("bggr") == PC_CFA_BGGR,
              "bad pattern names refused, names case-insensitive");
    b.cfa = (pc_cfa)7;
    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &b, &p, err, sizeof err) == PC_EINVAL && strstr(err, "pattern"),
              "bad CFA value refused: %s", err);
    b.cfa = PC_CFA_RGGB;

    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, NULL, &p, err, sizeof err) == PC_EINVAL && err[0],
              "NULL source refused: %s", err);
    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &b, NULL, err, sizeof err) == PC_EINVAL && err[0],
              "NULL destination refused: %s", err);
    pc_bayer nb = b;
    nb.data = NULL;
    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &nb, &p, err, sizeof err) == PC_EINVAL && err[0],
              "NULL raw data refused: %s", err);
    nb = b;
    nb.pitch = 63;
    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &nb, &p, err, sizeof err) == PC_EINVAL && strstr(err, "pitch"),
              "short raw pitch refused: %s", err);
    pc_picture q = p;
    q.pitch[0] = 3 * 64 - 1;
    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &b, &q, err, sizeof err) == PC_EINVAL && strstr(err, "pitch"),
              "short destination pitch refused: %s", err);
    q = p;
    q.plane[0] = NULL;
    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &b, &q, err, sizeof err) == PC_EINVAL && err[0],
              "NULL destination plane refused: %s", err);
    pic_layout(&q, PC_FMT_NV12, 64, 64, out);
    q.plane[1] = NULL;
    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &b, &q, err, sizeof err) == PC_EINVAL && strstr(err, "plane 1"),
              "NV12 without a chroma plane refused: %s", err);
    pic_layout(&q, PC_FMT_RGB24, 32, 64, out);
    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &b, &q, err, sizeof err) == PC_EINVAL && err[0],
              "destination size mismatch refused: %s", err);
    q = p;
    q.fmt = (pc_pixfmt)9;
    err[0] = 0;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &b, &q, err, sizeof err) == PC_EINVAL && err[0],
              "unknown pixel format refused: %s", err);
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, NULL, NULL, NULL, 0) == PC_EINVAL,
              "NULL everything, no error buffer: error code, no crash");
    free(raw);
    free(out);
}

/* The algorithm table and the pass lists agree. */
static void table_matches_passes(void)
{
    uint8_t raw[64] = {0}, out[192];
    pc_bayer b = {raw, 8, 8, 8, PC_CFA_RGGB, 0};
    pc_picture p;
    pic_layout(&p, PC_FMT_RGB24, 8, 8, out);
    uint8_t temp[4 * 64];
    int bad = 0;
    for (int a = 0; a < PC_ALGO_MLRI; a++) { /* MLRI runs its own stages (mlri.h) */
        pc_job job;
        if (pc_job_setup(&job, (pc_algo_id)a, &b, &p, temp, sizeof temp, NULL, 0) != 0 ||
            job.npasses != pc_algo_get((pc_algo_id)a)->passes)
            bad++;
    }
    TAP_CHECK(bad == 0, "pass counts of the algorithm table match the implementation (%d differ)", bad);
}

static void mosaic(void)
{
    uint8_t rgb[8 * 8 * 3], raw[64];
    for (int i = 0; i < 64; i++) {
        rgb[3 * i] = 1;
        rgb[3 * i + 1] = 2;
        rgb[3 * i + 2] = 3;
    }
    int bad = 0;
    for (int cfa = 0; cfa < 4; cfa++) {
        pc_mosaic_from_rgb(rgb, 24, 8, 8, (pc_cfa)cfa, raw, 8, NULL, 0);
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++) {
                int s = site_of(x, y, cfa);
                bad += raw[y * 8 + x] != (s == 0 ? 1 : s == 3 ? 3 : 2);
            }
    }
    /* GRBG: top-left 2x2 is G R / B G */
    pc_mosaic_from_rgb(rgb, 24, 8, 8, PC_CFA_GRBG, raw, 8, NULL, 0);
    TAP_CHECK(bad == 0 && raw[0] == 2 && raw[1] == 1 && raw[8] == 3 && raw[9] == 2,
              "pc_mosaic_from_rgb samples the right colour at every site of every phase");
}

int main(void)
{
    known_answers();
    flat_colours();
    step_edges();
    symmetry_and_padding(24, 20);
    symmetry_and_padding(86, 44); /* wide enough for the vector interior */
    all_written();
    vector_equals_scalar();
    yuv_final_pass();
    rgbx32_is_rgb24();
    invalid_input();
    table_matches_passes();
    mosaic();
    return tap_done();
}
