/* test_colour.c - the colour stage's host parts (kernels/colour.h):
 *  - unpacking: every format and CFA phase against hand-packed golden
 *    bytes and an independent bit-by-bit packer, widths that are not a
 *    multiple of the packing group, the lowest and highest codes;
 *  - the fused unpack + table row function against unpack, then lookup;
 *  - the tables: identity for 8-bit defaults, black level, gains,
 *    transfer curves, LUT files (and their errors);
 *  - the colour matrix folded into the Y'CbCr matrix (identity = §8
 *    exactly), and per-band matrices in the reference: identity bands give
 *    today's bytes, other bands change only their rows;
 *  - a grey card through a colour cast, a pedestal and 12-bit packing
 *    comes out neutral with the right manual gains and with automatic
 *    white balance;
 *  - bad settings: each a clear message naming the setting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colour.h"
#include "colour_test_util.h"
#include "debayer.h"
#include "debayer_test_util.h"
#include "tap.h"

static const char *const all_formats[] = {"8", "10", "12", "10p", "12p", "10Packed", "12Packed"};
static const char *const cfa_tag[] = {"RG", "GR", "GB", "BG"};

static void golden(const char *name, const uint8_t *bytes, const uint16_t *want, int n)
{
    pc_rawfmt f;
    char err[256] = "";
    if (!TAP_CHECK(pc_rawfmt_parse(name, &f, err, sizeof err) == 0, "parse %s: %s", name, err))
        return;
    uint16_t got[16];
    pc_unpack_row(&f, bytes, n, 0, got);
    int ok = memcmp(got, want, (size_t)n * 2) == 0;
    TAP_CHECK(ok, "%s: hand-packed golden bytes unpack to the expected codes", name);
    if (!ok)
        for (int i = 0; i < n; i++)
            tap_diag("sample %d: got 0x%x want 0x%x", i, got[i], want[i]);
    /* and the independent packer gives exactly these bytes */
    uint8_t packed[32];
    tc_pack(&f, want, (size_t)n, packed);
    TAP_CHECK(memcmp(packed, bytes, pc_rawfmt_frame_bytes(&f, n, 1)) == 0, "%s: test packer reproduces the golden bytes",
              name);
}

static void test_goldens(void)
{
    /* 12p: 2 samples in 3 bytes, LSB first */
    golden("BayerRG12p", (const uint8_t[]){0x23, 0xC1, 0xAB, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF},
           (const uint16_t[]){0x123, 0xABC, 0x000, 0x000, 0xFFF, 0xFFF}, 6);
    /* 10p: 4 samples in 5 bytes: 0x3FF, 0, 0x155, 0x2AA */
    golden("BayerRG10p", (const uint8_t[]){0xFF, 0x03, 0x50, 0x95, 0xAA}, (const uint16_t[]){0x3FF, 0, 0x155, 0x2AA},
           4);
    /* 12Packed: byte 0 = s0[11:4], byte 1 = s0[3:0] | s1[3:0] << 4, byte 2 = s1[11:4] */
    golden("BayerBG12Packed", (const uint8_t[]){0x12, 0xC3, 0xAB, 0xFF, 0x0F, 0x00},
           (const uint16_t[]){0x123, 0xABC, 0xFFF, 0x000}, 4);
    /* 10Packed: byte 0 = s0[9:2], byte 1 = s0[1:0] | s1[1:0] << 4, byte 2 = s1[9:2] */
    golden("BayerGB10Packed", (const uint8_t[]){0xFF, 0x13, 0x00, 0x55, 0x20, 0xAA},
           (const uint16_t[]){0x3FF, 0x001, 0x154, 0x2AA}, 4);
    /* 16-bit little-endian containers; high bits beyond the depth ignored */
    golden("BayerGR12", (const uint8_t[]){0xFF, 0x0F, 0x00, 0x00, 0x34, 0x02},
           (const uint16_t[]){0xFFF, 0, 0x234}, 3);
    {
        pc_rawfmt f = {12, PC_PACK_LE16, PC_CFA_GRBG};
        uint16_t got[2];
        pc_unpack_row(&f, (const uint8_t[]){0x34, 0x12, 0xFF, 0xFF}, 2, 0, got);
        TAP_CHECK(got[0] == 0x234 && got[1] == 0xFFF, "16-bit container: bits above the depth are ignored");
    }
    golden("BayerGR10", (const uint8_t[]){0xFF, 0x03, 0x01, 0x00}, (const uint16_t[]){0x3FF, 1}, 2);
    golden("BayerRG8", (const uint8_t[]){0xFF, 0x00, 0x80}, (const uint16_t[]){255, 0, 128}, 3);
}

/* Random codes including the extremes, packed by the test's packer, read
 * back row by row (all phases, widths 8, 10, 14, 2042: rows starting inside
 * a packing group for 10p), and mapped through tagging tables. */
static void test_roundtrip(void)
{
    static const int widths[] = {8, 10, 14, 2042};
    char err[256] = "";
    uint32_t seed = 77;
    for (int fi = 0; fi < 7; fi++)
        for (int c = 0; c < 4; c++)
            for (int wi = 0; wi < 4; wi++) {
                char name[32];
                snprintf(name, sizeof name, "Bayer%s%s", cfa_tag[c], all_formats[fi]);
                pc_rawfmt f;
                if (pc_rawfmt_parse(name, &f, err, sizeof err)) {
                    TAP_CHECK(0, "parse %s: %s", name, err);
                    continue;
                }
                char back[32];
                pc_rawfmt_name(&f, back, sizeof back);
                int w = widths[wi], h = 6, maxc = (1 << f.bits) - 1;
                size_t n = (size_t)w * h;
                uint16_t *codes = malloc(n * 2), *got = malloc((size_t)w * 2);
                uint8_t *buf = malloc(pc_rawfmt_frame_bytes(&f, w, h) + 4);
                uint8_t *row = malloc((size_t)w), *slab = malloc(n);
                for (size_t i = 0; i < n; i++)
                    codes[i] = (uint16_t)(i % 5 == 0 ? (uint32_t)maxc : i % 7 == 0 ? 0u : tu_rng(&seed) & (uint32_t)maxc);
                tc_pack(&f, codes, n, buf);
                /* tables that tag the colour: lut[c][v] = 85 c + v mod 85 */
                static pc_colour_tables t;
                t.bits = f.bits;
                t.identity = 0;
                for (int k = 0; k < 3; k++)
                    for (int v = 0; v <= maxc; v++)
                        t.lut[k][v] = (uint8_t)(85 * k + v % 85);
                int ok_unpack = 1, ok_row = 1;
                static const int ch[4] = {0, 1, 1, 2};
                for (int y = 0; y < h; y++) {
                    pc_unpack_row(&f, buf, w, y, got);
                    ok_unpack &= memcmp(got, codes + (size_t)y * w, (size_t)w * 2) == 0;
                    pc_colour_row(&f, &t, buf, w, y, row);
                    for (int x = 0; x < w; x++) {
                        int k = ch[((x & 1) | (y & 1) << 1) ^ c];
                        ok_row &= row[x] == (uint8_t)(85 * k + codes[(size_t)y * w + x] % 85);
                    }
                }
                pc_colour_slab(&f, &t, buf, 0, w, h, slab, (size_t)w);
                int ok_slab = 1;
                for (int y = 0; y < h; y++) {
                    pc_colour_row(&f, &t, buf, w, y, row);
                    ok_slab &= memcmp(row, slab + (size_t)y * w, (size_t)w) == 0;
                }
                TAP_CHECK(ok_unpack && ok_row && ok_slab && strcmp(back, name) == 0,
                          "%s width %d: unpack %s, per-colour tables %s, slab %s, name round trip %s", name, w,
                          ok_unpack ? "ok" : "WRONG", ok_row ? "ok" : "WRONG", ok_slab ? "ok" : "WRONG", back);
                free(codes);
                free(got);
                free(buf);
                free(row);
                free(slab);
            }
    /* pitched 8- and 16-bit slabs */
    pc_rawfmt f = {12, PC_PACK_LE16, PC_CFA_GBRG};
    int w = 10, h = 4;
    size_t pitch = 2 * w + 6;
    uint8_t *src = calloc(pitch * h, 1), *tight = calloc((size_t)2 * w * h, 1), a[40], b[40];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < 2 * w; x++)
            src[y * pitch + x] = tight[y * 2 * w + x] = (uint8_t)(tu_rng(&seed) & (x & 1 ? 0x0f : 0xff));
    static pc_colour_tables t;
    for (int k = 0; k < 3; k++)
        for (int v = 0; v < 4096; v++)
            t.lut[k][v] = (uint8_t)(v * 7 + k);
    t.bits = 12;
    pc_colour_slab(&f, &t, src, pitch, w, h, a, (size_t)w);
    pc_colour_slab(&f, &t, tight, 0, w, h, b, (size_t)w);
    TAP_CHECK(memcmp(a, b, (size_t)w * h) == 0, "a pitched 16-bit slab maps like the tight one (row phases kept)");
    free(src);
    free(tight);
}

static void test_formats_bad(void)
{
    pc_rawfmt f;
    char err[256] = "";
    int rc = pc_rawfmt_parse("BayerRG14", &f, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "BayerRG14") && strstr(err, "12Packed"),
              "unknown format: %s", err);
    rc = pc_rawfmt_parse("Mono8", &f, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "Mono8"), "not Bayer: %s", err);
    pc_rawfmt_parse("BayerRG12p", &f, err, sizeof err);
    TAP_CHECK(pc_rawfmt_frame_bytes(&f, 2040, 1080) == 2040 * 1080 * 3 / 2, "12p frame bytes");
    double mbs = pc_rawfmt_rate_bytes(&f, 2040, 1080, 50) / 1e6;
    TAP_CHECK(mbs > 165 && mbs < 166, "12-bit 2040x1080 at 50 fps needs %.1f MB/s", mbs);
    pc_rawfmt_parse("BayerRG10p", &f, err, sizeof err);
    TAP_CHECK(pc_rawfmt_frame_bytes(&f, 6, 1) == 8, "10p: 6 samples = 60 bits = 8 bytes");
}

static void test_tables(void)
{
    char err[256] = "";
    pc_colour_cfg c;
    pc_colour_cfg_init(&c);
    static pc_colour_tables t;
    int rc = pc_colour_tables_build(&c, 8, &t, err, sizeof err);
    int same = 1;
    for (int k = 0; k < 3; k++)
        for (int v = 0; v < 256; v++)
            same &= t.lut[k][v] == v;
    TAP_CHECK(rc == 0 && t.identity && same && pc_colour_cfg_is_identity(&c, 8),
              "8-bit defaults: identity tables, flagged identity");
    rc = pc_colour_tables_build(&c, 12, &t, err, sizeof err);
    TAP_CHECK(rc == 0 && !t.identity && t.lut[0][0] == 0 && t.lut[1][4095] == 255 && t.lut[2][2048] == 128 &&
                  t.lut[0][16] == 1 && t.lut[0][15] == 1 && t.lut[0][7] == 0,
              "12-bit defaults: code v -> round(v * 255 / 4095)");
    c.black_level = 256;
    c.wb[0] = 2.0;
    c.wb[2] = 1.5;
    rc = pc_colour_tables_build(&c, 12, &t, err, sizeof err);
    double r = 3839.0;
    TAP_CHECK(rc == 0 && t.lut[1][256] == 0 && t.lut[1][100] == 0 && t.lut[1][4095] == 255 &&
                  t.lut[0][256 + 1920] == 255 && t.lut[0][256 + 960] == (int)floor(960 / r * 2 * 255 + 0.5) &&
                  t.lut[2][256 + 1000] == (int)floor(1000 / r * 1.5 * 255 + 0.5),
              "black level 256 and gains (2, 1, 1.5): below black -> 0, gains clip at white");
    pc_colour_cfg_init(&c);
    c.transfer = PC_TRANSFER_SRGB;
    pc_colour_tables_build(&c, 8, &t, err, sizeof err);
    TAP_CHECK(t.lut[1][0] == 0 && t.lut[1][255] == 255 && t.lut[1][128] == 188 && t.lut[1][1] == 13,
              "sRGB curve: 128 -> %d (188), 1 -> %d (13)", t.lut[1][128], t.lut[1][1]);
    c.transfer = PC_TRANSFER_BT709;
    pc_colour_tables_build(&c, 10, &t, err, sizeof err);
    TAP_CHECK(t.lut[0][1023] == 255 && t.lut[0][512] == (int)floor((1.099 * pow(512 / 1023.0, 0.45) - 0.099) * 255 + 0.5),
              "BT.709 curve at 10 bits");
    c.transfer = PC_TRANSFER_GAMMA;
    c.gamma = 2.0;
    pc_colour_tables_build(&c, 8, &t, err, sizeof err);
    TAP_CHECK(t.lut[2][64] == (int)floor(sqrt(64 / 255.0) * 255 + 0.5), "gamma 2.0 curve");

    /* LUT files */
    char path[] = "/tmp/pc_lut_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# inverted\n");
    for (int v = 0; v < 256; v++)
        fprintf(f, "%d%s", 255 - v, v % 16 == 15 ? "\n" : " ");
    fclose(f);
    uint8_t *lut = NULL;
    int len = 0;
    rc = pc_lut_file_read(path, 256, &lut, &len, err, sizeof err);
    TAP_CHECK(rc == 0 && len == 256 && lut[0] == 255 && lut[255] == 0, "LUT file read: %s", rc ? err : "256 entries");
    c.transfer = PC_TRANSFER_LUT;
    c.lut = lut;
    c.lut_len = len;
    rc = pc_colour_tables_build(&c, 8, &t, err, sizeof err);
    TAP_CHECK(rc == 0 && t.lut[0][0] == 255 && t.lut[0][200] == 55, "LUT transfer applied");
    rc = pc_colour_tables_build(&c, 12, &t, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "256") && strstr(err, "4096"), "LUT of 256 for 12 bits: %s", err);
    free(lut);
    rc = pc_lut_file_read(path, 4096, &lut, &len, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, path) && strstr(err, ":17:") && strstr(err, "4096"),
              "LUT file of the wrong length names file and line: %s", err);
    f = fopen(path, "w");
    fprintf(f, "1 2 3\n4 300 5\n");
    fclose(f);
    rc = pc_lut_file_read(path, 256, &lut, &len, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, ":2:") && strstr(err, "300"), "LUT value out of range: %s", err);
    unlink(path);
    rc = pc_lut_file_read(path, 256, &lut, &len, err, sizeof err);
    TAP_CHECK(rc == PC_EIO && strstr(err, path), "missing LUT file: %s", err);

    /* bad settings */
    pc_colour_cfg_init(&c);
    c.black_level = 300;
    rc = pc_colour_cfg_check(&c, 8, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "black_level") && strstr(err, "white"), "black above white: %s", err);
    pc_colour_cfg_init(&c);
    c.black_level = 100;
    c.white_level = 90;
    rc = pc_colour_cfg_check(&c, 12, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "black_level 100"), "black above a set white level: %s", err);
    pc_colour_cfg_init(&c);
    c.ccm[4] = NAN;
    rc = pc_colour_cfg_check(&c, 8, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "ccm") && strstr(err, "row 2, column 2"), "NaN matrix: %s", err);
    c.ccm[4] = 1;
    c.ccm[2] = -1e6;
    rc = pc_colour_cfg_check(&c, 8, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "ccm") && strstr(err, "row 1, column 3"), "absurd matrix: %s", err);
    pc_colour_cfg_init(&c);
    c.wb[2] = 0;
    rc = pc_colour_cfg_check(&c, 10, err, sizeof err);
    TAP_CHECK(rc == PC_EINVAL && strstr(err, "wb_gains") && strstr(err, "blue"), "zero gain: %s", err);
}

/* CCM folded into the Q16 matrix; per-band matrices in the reference. */
static void test_matrix(void)
{
    char err[256] = "";
    static const double id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    int all_same = 1;
    for (int m = 0; m < 2; m++)
        for (int r = 0; r < 2; r++) {
            pc_yuv_coeffs a, b;
            pc_yuv_coeffs_get((pc_matrix)m, (pc_range)r, &a);
            pc_yuv_coeffs_ccm((pc_matrix)m, (pc_range)r, id, &b, err, sizeof err);
            all_same &= memcmp(&a, &b, sizeof a) == 0;
        }
    TAP_CHECK(all_same, "identity colour matrix: the §8 coefficients exactly (all matrices and ranges)");
    /* a channel swap R<->B moves the columns */
    static const double swap[9] = {0, 0, 1, 0, 1, 0, 1, 0, 0};
    pc_yuv_coeffs a, b;
    pc_yuv_coeffs_get(PC_MATRIX_BT709, PC_RANGE_LIMITED, &a);
    pc_yuv_coeffs_ccm(PC_MATRIX_BT709, PC_RANGE_LIMITED, swap, &b, err, sizeof err);
    TAP_CHECK(b.y[0] == a.y[2] && b.y[2] == a.y[0] && b.cb[0] == a.cb[2] && b.cr[2] == a.cr[0],
              "R<->B swap matrix swaps the coefficient columns");
    double bad[9] = {1, 0, 0, 0, INFINITY, 0, 0, 0, 1};
    TAP_CHECK(pc_yuv_coeffs_ccm(PC_MATRIX_BT709, PC_RANGE_LIMITED, bad, &b, err, sizeof err) == PC_EINVAL &&
                  strstr(err, "ccm"),
              "infinite matrix entry rejected: %s", err);

    /* Reference with bands: identity bands == no bands; a swapped band
     * changes exactly its rows. 3 "cameras" of 12 rows. */
    int w = 40, h = 36;
    uint8_t *rgb = malloc((size_t)w * h * 3), *bay = malloc((size_t)w * h);
    tu_synth(rgb, w, h, 5);
    tu_mosaic(rgb, w, h, bay, w, h, PC_CFA_GRBG);
    pc_bayer src = {bay, (size_t)w, w, h, PC_CFA_GRBG, 0};
    pc_yuv_coeffs bands[3];
    for (int i = 0; i < 3; i++)
        pc_yuv_coeffs_ccm(PC_MATRIX_BT709, PC_RANGE_LIMITED, id, &bands[i], err, sizeof err);
    for (int algo = 0; algo < PC_ALGO_COUNT; algo++) {
        pc_picture p0, p1;
        tu_pic_alloc(&p0, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
        tu_pic_alloc(&p1, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
        pc_ref_debayer(algo, &src, &p0, err, sizeof err);
        p1.bands = bands;
        p1.band_rows = 12;
        p1.n_bands = 3;
        pc_ref_debayer(algo, &src, &p1, err, sizeof err);
        int md;
        TAP_CHECK(tu_compare(&p0, &p1, &md) == 0, "%s: identity bands give today's bytes", pc_algo_get(algo)->name);
        tu_pic_free(&p0);
        tu_pic_free(&p1);
    }
    pc_yuv_coeffs_ccm(PC_MATRIX_BT709, PC_RANGE_LIMITED, swap, &bands[1], err, sizeof err);
    pc_picture p0, p1;
    tu_pic_alloc(&p0, PC_FMT_I420, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
    tu_pic_alloc(&p1, PC_FMT_I420, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
    pc_ref_debayer(PC_ALGO_BILINEAR, &src, &p0, err, sizeof err);
    p1.bands = bands;
    p1.band_rows = 12;
    p1.n_bands = 3;
    pc_ref_debayer(PC_ALGO_BILINEAR, &src, &p1, err, sizeof err);
    int diff_in = 0, diff_out = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int d = p0.plane[0][y * p0.pitch[0] + x] != p1.plane[0][y * p1.pitch[0] + x];
            if (y >= 12 && y < 24)
                diff_in += d;
            else
                diff_out += d;
        }
    TAP_CHECK(diff_in > 0 && diff_out == 0, "a swapped band changes only its own rows (%d in, %d outside)", diff_in,
              diff_out);
    pc_picture pb = p1;
    pb.band_rows = 3;
    TAP_CHECK(pc_ref_debayer(PC_ALGO_BILINEAR, &src, &pb, err, sizeof err) == PC_EINVAL && strstr(err, "band"),
              "odd band height rejected: %s", err);
    tu_pic_free(&p0);
    tu_pic_free(&p1);
    free(rgb);
    free(bay);
}

/* A grey card (flat neutral patches of several levels) through a cast,
 * a pedestal, 12-bit quantisation and 12p packing; colour-corrected and
 * demosaiced, its chroma must be neutral: |Cb-128|, |Cr-128| <= tol in
 * every patch's interior. */
static int grey_chroma_error(const pc_colour_tables *t, const pc_rawfmt *f, const uint8_t *packed, int w, int h)
{
    uint8_t *bay = malloc((size_t)w * h);
    pc_colour_slab(f, t, packed, 0, w, h, bay, (size_t)w);
    pc_bayer src = {bay, (size_t)w, w, h, f->cfa, 0};
    pc_picture p;
    char err[256] = "";
    tu_pic_alloc(&p, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 0);
    pc_ref_debayer(PC_ALGO_EDGE, &src, &p, err, sizeof err);
    int worst = 0;
    for (int y = 4; y < h / 2 - 4; y++)
        for (int x = 4; x < w / 2 - 4; x++) {
            if (((x * 2) % 32) < 4 || ((x * 2) % 32) >= 28)
                continue; /* patch edges */
            for (int k = 0; k < 2; k++) {
                int d = abs(p.plane[1][y * p.pitch[1] + 2 * x + k] - 128);
                worst = d > worst ? d : worst;
            }
        }
    tu_pic_free(&p);
    free(bay);
    return worst;
}

static void test_grey_card(void)
{
    const int w = 256, h = 64;
    const double cast[3] = {0.55, 1.0, 0.7}; /* a greenish camera */
    const double black = 240;
    char err[256] = "";
    uint8_t *rgb = malloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int v = 20 + (x / 32) * 30; /* 8 patches, 20..230 */
            rgb[3 * (y * w + x)] = rgb[3 * (y * w + x) + 1] = rgb[3 * (y * w + x) + 2] = (uint8_t)v;
        }
    for (int cfa = 0; cfa < 4; cfa++) {
        pc_rawfmt f = {12, PC_PACK_PFNC, (pc_cfa)cfa};
        uint16_t *codes = malloc((size_t)w * h * 2);
        uint8_t *packed = malloc(pc_rawfmt_frame_bytes(&f, w, h));
        tc_cast_frame(rgb, w, h, f.cfa, 12, cast, black, codes);
        tc_pack(&f, codes, (size_t)w * h, packed);
        pc_colour_cfg c;
        pc_colour_cfg_init(&c);
        c.black_level = black;
        static pc_colour_tables t;
        pc_colour_tables_build(&c, 12, &t, err, sizeof err);
        int raw_err = grey_chroma_error(&t, &f, packed, w, h);
        for (int k = 0; k < 3; k++)
            c.wb[k] = 1.0 / cast[k];
        pc_colour_tables_build(&c, 12, &t, err, sizeof err);
        int manual = grey_chroma_error(&t, &f, packed, w, h);
        TAP_CHECK(raw_err > 10 && manual <= 1,
                  "%s grey card, cast (%.2f, 1, %.2f) + pedestal %g, 12p: chroma off by %d uncorrected, %d with the "
                  "manual gains (tolerance 1)",
                  pc_cfa_name(f.cfa), cast[0], cast[2], black, raw_err, manual);
        double g[3];
        int rc = pc_awb_estimate(&f, packed, w, h, black, 4095, 1, g);
        pc_awb a;
        pc_awb_init(&a);
        for (int i = 0; i < 3 && rc == 0; i++)
            pc_awb_update(&a, g);
        for (int k = 0; k < 3; k++)
            c.wb[k] = a.gain[k];
        pc_colour_tables_build(&c, 12, &t, err, sizeof err);
        int autowb = grey_chroma_error(&t, &f, packed, w, h);
        TAP_CHECK(rc == 0 && autowb <= 2,
                  "%s grey card with wb = auto: gains (%.3f, %.3f, %.3f), chroma off by %d (tolerance 2)",
                  pc_cfa_name(f.cfa), a.gain[0], a.gain[1], a.gain[2], autowb);
        free(codes);
        free(packed);
    }
    free(rgb);
}

/* Smoothing: a jump in the estimate moves the gains gradually; small
 * noise does not move them at all. */
static void test_awb_smoothing(void)
{
    pc_awb a;
    pc_awb_init(&a);
    double e1[3] = {2.0, 1.0, 1.5};
    pc_awb_update(&a, e1);
    TAP_CHECK(a.gain[0] == 2.0 && a.gain[2] == 1.5, "first estimate taken as is");
    double noisy[3] = {2.0 * 1.003, 1.0, 1.5 / 1.003};
    pc_awb_update(&a, noisy);
    TAP_CHECK(a.gain[0] == 2.0 && a.gain[2] == 1.5, "changes within the dead band hold the gains (no flicker)");
    double e2[3] = {1.0, 1.0, 1.0};
    pc_awb_update(&a, e2);
    TAP_CHECK(a.gain[0] < 2.0 && a.gain[0] > 1.8, "a jump moves the gains by a step (red %.3f)", a.gain[0]);
    for (int i = 0; i < 100; i++)
        pc_awb_update(&a, e2);
    TAP_CHECK(fabs(a.gain[0] - 1.0) < 0.01, "and converges (red %.4f)", a.gain[0]);
    /* too few usable tiles (all clipped): no estimate */
    pc_rawfmt f = {8, PC_PACK_8, PC_CFA_RGGB};
    uint8_t *sat = malloc(64 * 64);
    memset(sat, 255, 64 * 64);
    double g[3];
    TAP_CHECK(pc_awb_estimate(&f, sat, 64, 64, 0, 255, 1, g) == PC_EINVAL, "a clipped picture gives no estimate");
    free(sat);
}

int main(void)
{
    test_goldens();
    test_roundtrip();
    test_formats_bad();
    test_tables();
    test_matrix();
    test_grey_card();
    test_awb_smoothing();
    return tap_done();
}
