/* test_net.c - the learned demosaic (kernels/net.h, --algo net):
 *  - the weights file in the repository loads, with the digest its
 *    provenance states; every kind of damaged file (missing, empty,
 *    truncated, trailing bytes, bad magic, another version, a flipped
 *    byte, a tensor of the wrong shape, an unknown or doubled name, a
 *    value that is not finite) is refused with a message naming the file
 *    and what is wrong, and nothing is returned;
 *  - two hand-built networks whose output is known exactly (a
 *    nearest-neighbour demosaic through the half-resolution path, and
 *    single taps of the cropped mosaic through post) on every CFA phase,
 *    sizes down to the minimum, stacked cameras: the reference and every
 *    CPU build the machine runs give exactly those bytes;
 *  - the published network: the CPU backend (1, 2, 3 threads; its
 *    formats) within one code value of the reference on >= 99.9 % of the
 *    samples, every CFA phase; its YUV the conversion of its RGB;
 *  - cameras stacked (cam_rows) give what each camera gives alone;
 *  - on the sample photograph, net beats mlri by >= 1.5 dB CPSNR (border 8);
 *  - pc_ref_debayer and the CPU backend without weights set use the default
 *    file; the backend ops (set_net, cam_rows) and their refusals.
 *
 * argv[1]: data/demosaicnet-bayer.pcnet, argv[2]: capture/sample.png.
 */
#include "backend.h"
#include "debayer_test_util.h"
#include "image.h"
#include "net_impl.h"
#include "net_test_util.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROVENANCE_SHA "d74dcd320fd7ca2ac7da38c4fb89f00503c29cbb853122d044bcc5edf62a1917"

static char tmpdir[64];

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *len = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static pc_picture rgb_pic(uint8_t *buf, int w, int h)
{
    pc_picture p;
    memset(&p, 0, sizeof p);
    p.fmt = PC_FMT_RGB24;
    p.plane[0] = buf;
    p.pitch[0] = 3 * (size_t)w;
    p.width = w;
    p.height = h;
    return p;
}

/* --- the repository's weights ----------------------------------------- */

static pc_net *the_weights(const char *path)
{
    char err[512] = "";
    pc_net *net = NULL;
    int rc = pc_net_load(&net, path, err, sizeof err);
    TAP_CHECK(rc == 0 && net, "%s loads%s%s", path, err[0] ? ": " : "", err);
    if (!net)
        return NULL;
    TAP_CHECK(strcmp(net->sha256, PROVENANCE_SHA) == 0, "its payload SHA-256 is the one its provenance states (%s)",
              net->sha256);
    TAP_CHECK(net->depth == 15 && net->width == 64 && pc_net_margin(net) == 31 &&
                  strcmp(net->name, "demosaicnet-bayer") == 0 && strcmp(net->path, path) == 0,
              "%s: depth %d, width %d, margin %d, from %s", net->name, net->depth, net->width, pc_net_margin(net),
              net->path);
    TAP_CHECK(net->pack.cin == 3 && net->pack.cout == 4 && net->pack.k == 2 && net->main[0].cin == 4 &&
                  net->main[14].cout == 128 && net->residual.cout == 12 && net->up.cin == 12 && net->up.k == 2 &&
                  net->post.cin == 6 && net->out.cout == 3,
              "the tensors' shapes are BayerDemosaick's");
    return net;
}

/* --- damaged files ---------------------------------------------------- */

static void expect_refused(const char *what, const uint8_t *b, size_t len, const char *keyword)
{
    char path[128], err[512] = "";
    snprintf(path, sizeof path, "%s/bad.pcnet", tmpdir);
    if (b)
        nt_write(path, b, len);
    else
        unlink(path);
    pc_net *net = (pc_net *)(uintptr_t)1;
    int rc = pc_net_load(&net, path, err, sizeof err);
    TAP_CHECK(rc < 0 && net == NULL && strstr(err, path) && strstr(err, keyword),
              "%s: refused, naming the file and \"%s\": %s", what, keyword, err);
}

/* Offset of tensor `name`'s table entry in a weights file's bytes. */
static size_t entry_of(const uint8_t *b, const char *name)
{
    uint32_t n = b[12] | b[13] << 8;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp((const char *)b + 64 + 80 * i, name) == 0)
            return 64 + 80 * (size_t)i;
    return 0;
}

static void damaged(const char *good_path)
{
    size_t len = 0;
    uint8_t *good = read_all(good_path, &len);
    if (!TAP_CHECK(good && len > 100000, "read %s (%zu bytes)", good_path, len))
        return;
    uint8_t *b = malloc(len + 1);
    expect_refused("a missing file", NULL, 0, "cannot open");
    expect_refused("an empty file", good, 0, "truncated");
    expect_refused("the first 90 bytes", good, 90, "truncated");
    expect_refused("half the file", good, len / 2, "truncated");
    expect_refused("all but the last byte", good, len - 1, "truncated");
    memcpy(b, good, len);
    b[len] = 0;
    expect_refused("a byte after the digest", b, len + 1, "trailing");
    memcpy(b, good, len);
    b[0] = 'X';
    expect_refused("another magic", b, len, "bad magic");
    memcpy(b, good, len);
    nt_put32(b + 8, 2);
    expect_refused("version 2", b, len, "version 2");
    memcpy(b, good, len);
    b[len / 2] ^= 0x10;
    expect_refused("one flipped bit in the weights", b, len, "checksum mismatch");
    memcpy(b, good, len);
    b[len - 1] ^= 1;
    expect_refused("one flipped bit in the digest", b, len, "checksum mismatch");
    /* changes that keep a valid digest: the checks after it */
    size_t e = entry_of(good, "main_processor.conv3.weight");
    memcpy(b, good, len);
    nt_put32(b + e + 52 + 12, 2); /* 64x64x3x3 -> 64x64x3x2 */
    nt_redigest(b, len);
    expect_refused("conv3's weight 64x64x3x2", b, len, "has shape 64x64x3x2");
    memcpy(b, good, len);
    nt_put32(b + e + 48, 3); /* a 3-D tensor */
    nt_redigest(b, len);
    expect_refused("conv3's weight with 3 dimensions", b, len, "has shape");
    memcpy(b, good, len);
    memcpy(b + e, "main_processor.conv99.weight", 29);
    nt_redigest(b, len);
    expect_refused("a tensor the model does not have", b, len, "not one of the model's");
    memcpy(b, good, len);
    memcpy(b + entry_of(good, "main_processor.conv4.weight"), b + e, 48); /* conv3's name twice */
    nt_redigest(b, len);
    expect_refused("a name twice", b, len, "there twice");
    memcpy(b, good, len);
    {
        size_t off = 0;
        for (int i = 0; i < 8; i++)
            off |= (size_t)b[e + 72 + i] << 8 * i;
        float nan = NAN;
        memcpy(b + off + 40, &nan, 4);
    }
    nt_redigest(b, len);
    expect_refused("a weight that is not a number", b, len, "not a finite number");
    memcpy(b, good, len);
    nt_put32(b + 16, 14); /* depth 14: one tensor pair too many */
    nt_redigest(b, len);
    expect_refused("depth 14 with 15 layers' tensors", b, len, "tensors");
    memcpy(b, good, len);
    nt_put64(b + e + 72, len - 100); /* data past the end */
    nt_redigest(b, len);
    expect_refused("a tensor's data past the end", b, len, "outside");
    char err[256] = "";
    pc_net *net = NULL;
    TAP_CHECK(pc_net_load(&net, "", err, sizeof err) == PC_EINVAL && !net && err[0], "no path: %s", err);
    TAP_CHECK(pc_net_load(NULL, good_path, err, sizeof err) == PC_EINVAL, "NULL output pointer refused");
    pc_net_free(NULL);
    TAP_CHECK(1, "pc_net_free(NULL) is harmless");
    free(b);
    free(good);
}

/* --- hand-built networks ---------------------------------------------- */

static const int red_at[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}}; /* pc_cfa -> (ox, oy) */

static int colour_at(int cfa, int x, int y)
{
    int sx = (x ^ red_at[cfa][0]) & 1, sy = (y ^ red_at[cfa][1]) & 1;
    return !sx && !sy ? 0 : sx && sy ? 2 : 1;
}

static int mir(int i, int n)
{
    int p = 2 * (n - 1);
    i %= p;
    if (i < 0)
        i += p;
    return i < n ? i : p - i;
}

/* "Nearest": pack copies the GRBG block's four samples (G1 R B G2) to its
 * four channels; conv1 passes them (filters; masks = 1); the residual makes
 * each group's colour (R, (G1 + G2) / 2, B) for all four positions; the
 * upsampler puts them back on the block; post and output copy them out.
 * Every pixel gets its 2x2 GRBG block's colours. depth 1, width 4. */
static void model_nearest(nt_model *m)
{
    nt_model_init(m, 1, 4);
    static const int pos[4][3] = {{1, 0, 0}, {0, 0, 1}, {2, 1, 0}, {1, 1, 1}}; /* channel's colour, ky, kx */
    for (int k = 0; k < 4; k++)
        *nt_at(m, "main_processor.pack_mosaic.weight", k, pos[k][0], pos[k][1], pos[k][2]) = 1.0f;
    for (int c = 0; c < 4; c++) {
        *nt_at(m, "main_processor.conv1.weight", c, c, 1, 1) = 1.0f;
        *nt_at(m, "main_processor.conv1.bias", 4 + c, 0, 0, 0) = 1.0f;
    }
    for (int j = 0; j < 4; j++) {
        *nt_at(m, "residual_predictor.weight", 0 + j, 1, 0, 0) = 1.0f;
        *nt_at(m, "residual_predictor.weight", 4 + j, 0, 0, 0) = 0.5f;
        *nt_at(m, "residual_predictor.weight", 4 + j, 3, 0, 0) = 0.5f;
        *nt_at(m, "residual_predictor.weight", 8 + j, 2, 0, 0) = 1.0f;
    }
    for (int ci = 0; ci < 12; ci++)
        *nt_at(m, "upsampler.weight", ci, 0, (ci % 4) / 2, ci % 2) = 1.0f;
    for (int c = 0; c < 3; c++) {
        *nt_at(m, "fullres_processor.post_conv.weight", c, 3 + c, 1, 1) = 1.0f;
        *nt_at(m, "fullres_processor.output.weight", c, c, 0, 0) = 1.0f;
    }
}

static void expect_nearest(const uint8_t *raw, int w, int h, int cam_h, int cfa, uint8_t *rgb)
{
    /* the block: starts where the sample at its (1, 0) is red */
    const int bx = (red_at[cfa][0] + 1) & 1, by = red_at[cfa][1];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int cam = y / cam_h, cy = y % cam_h;
            const int x0 = x - ((x - bx) & 1), y0 = cy - ((cy - by) & 1);
#define S(dx, dy) ((float)raw[(size_t)(cam * cam_h + mir(y0 + (dy), cam_h)) * w + mir(x0 + (dx), w)] / 255.0f)
            float r = S(1, 0), g = 0.5f * S(0, 0) + 0.5f * S(1, 1), b = S(0, 1);
#undef S
            uint8_t *o = rgb + 3 * ((size_t)y * w + x);
            o[0] = pc_net_u8(r);
            o[1] = pc_net_u8(g);
            o[2] = pc_net_u8(b);
        }
}

/* "Taps": post reads single samples of the cropped mosaic: R out = the
 * mosaic's R channel at (x + 1, y), G = G at (x, y - 1), B = B at
 * (x - 1, y + 1) (zero where that site is another colour). The
 * half-resolution path is busy (depth 2, random weights) but weighted 0
 * by post. */
static void model_taps(nt_model *m)
{
    nt_model_init(m, 2, 3);
    uint32_t s = 12345;
    for (int i = 0; i < m->n; i++)
        if (strncmp(m->t[i].name, "fullres", 7) != 0)
            for (size_t k = 0; k < m->t[i].n; k++)
                m->t[i].v[k] = (float)((int)(tu_rng(&s) % 2001) - 1000) / 1000.0f;
    *nt_at(m, "fullres_processor.post_conv.weight", 0, 0, 1, 2) = 1.0f;
    *nt_at(m, "fullres_processor.post_conv.weight", 1, 1, 0, 1) = 1.0f;
    *nt_at(m, "fullres_processor.post_conv.weight", 2, 2, 2, 0) = 1.0f;
    for (int c = 0; c < 3; c++)
        *nt_at(m, "fullres_processor.output.weight", c, c, 0, 0) = 1.0f;
}

static void expect_taps(const uint8_t *raw, int w, int h, int cam_h, int cfa, uint8_t *rgb)
{
    static const int tap[3][2] = {{1, 0}, {0, -1}, {-1, 1}};
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int cam = y / cam_h, cy = y % cam_h;
            for (int c = 0; c < 3; c++) {
                const int sx = mir(x + tap[c][0], w), sy = mir(cy + tap[c][1], cam_h);
                const float v = colour_at(cfa, sx, sy) == c ? (float)raw[(size_t)(cam * cam_h + sy) * w + sx] / 255.0f
                                                           : 0.0f;
                rgb[3 * ((size_t)y * w + x) + c] = pc_net_u8(v);
            }
        }
}

/* Runs net on raw through the reference and every CPU build this machine
 * runs (1 and 3 threads); counts the runs whose bytes differ from want. */
static int run_all(const pc_net *net, const uint8_t *raw, int w, int h, int cam_h, int cfa, const uint8_t *want,
                   int *runs, char *why, size_t whylen)
{
    char err[512];
    uint8_t *out = malloc(3 * (size_t)w * h);
    pc_bayer b = {raw, (size_t)w, w, h, (pc_cfa)cfa, cam_h == h ? 0 : cam_h};
    pc_picture p = rgb_pic(out, w, h);
    int bad = 0;
    memset(out, 0x5a, 3 * (size_t)w * h);
    if (pc_net_ref(net, &b, &p, err, sizeof err) || memcmp(out, want, 3 * (size_t)w * h)) {
        snprintf(why, whylen, "reference");
        bad++;
    }
    (*runs)++;
    static const char *const lanes[] = {"baseline", "avx2", "avx512"};
    static const int threads[] = {1, 3};
    for (int t = 0; t < 2; t++) {
        pc_cpu *cpu = NULL;
        if (pc_cpu_open(&cpu, threads[t], w, h, err, sizeof err))
            continue;
        size_t need = pc_net_cpu_temp_bytes(net, w, threads[t]);
        uint8_t *temp = NULL;
        if (posix_memalign((void **)&temp, 64, need) == 0)
            for (int l = 0; l < 3; l++) {
                if (!pc_net_cpu_lanes_usable(lanes[l]))
                    continue;
                memset(out, 0x5a, 3 * (size_t)w * h);
                if (pc_net_cpu(cpu, net, lanes[l], temp, need, &b, &p, err, sizeof err) ||
                    memcmp(out, want, 3 * (size_t)w * h)) {
                    snprintf(why, whylen, "CPU %s, %d threads", lanes[l], threads[t]);
                    bad++;
                }
                (*runs)++;
            }
        free(temp);
        pc_cpu_close(cpu);
    }
    free(out);
    return bad;
}

static void hand_built(void)
{
    static const struct {
        int w, h, cam_h;
    } sizes[] = {{8, 8, 8}, {12, 10, 10}, {40, 24, 24}, {30, 64, 16}, {70, 36, 12}};
    for (int model = 0; model < 2; model++) {
        nt_model m;
        if (model == 0)
            model_nearest(&m);
        else
            model_taps(&m);
        size_t len;
        uint8_t *bytes = nt_bytes(&m, &len);
        char path[128], err[512] = "";
        snprintf(path, sizeof path, "%s/%s.pcnet", tmpdir, model ? "taps" : "nearest");
        nt_write(path, bytes, len);
        pc_net *net = NULL;
        if (!TAP_CHECK(pc_net_load(&net, path, err, sizeof err) == 0, "hand-built %s network (depth %d, width %d) "
                       "written and loaded%s%s", model ? "taps" : "nearest", m.depth, m.width, err[0] ? ": " : "", err))
            continue;
        int bad = 0, runs = 0;
        char why[128] = "";
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            const int w = sizes[k].w, h = sizes[k].h, ch = sizes[k].cam_h;
            uint8_t *raw = malloc((size_t)w * h), *want = malloc(3 * (size_t)w * h);
            tu_noise(raw, (size_t)w * h, 77 + (uint32_t)k);
            for (int cfa = 0; cfa < 4; cfa++) {
                if (model == 0)
                    expect_nearest(raw, w, h, ch, cfa, want);
                else
                    expect_taps(raw, w, h, ch, cfa, want);
                int b = run_all(net, raw, w, h, ch, cfa, want, &runs, why, sizeof why);
                if (b)
                    tap_diag("%s %dx%d (cameras of %d rows) %s: %s differs", model ? "taps" : "nearest", w, h, ch,
                             pc_cfa_name((pc_cfa)cfa), why);
                bad += b;
            }
            free(raw);
            free(want);
        }
        TAP_CHECK(bad == 0, "hand-built %s network: the predicted bytes, every CFA phase, 8x8 to 70x36, stacked "
                  "cameras, reference and the CPU builds (%d runs, %d differ)", model ? "taps" : "nearest", runs, bad);
        pc_net_free(net);
        nt_free(&m);
        free(bytes);
    }
}

/* --- the published network: reference vs CPU backend ------------------ */

static void ref_vs_cpu(const pc_net *net)
{
    const int w = 64, h = 48;
    uint8_t *rgb = malloc(3 * (size_t)w * h), *raw = malloc((size_t)w * h);
    uint8_t *ref = malloc(3 * (size_t)w * h), *out = malloc(4 * (size_t)w * h), *yuv = malloc(2 * (size_t)w * h);
    tu_synth(rgb, w, h, 5);
    static const int threads[] = {1, 2, 3};
    char err[512] = "";
    for (int cfa = 0; cfa < 4; cfa++) {
        tu_mosaic(rgb, w, h, raw, w, h, (pc_cfa)cfa);
        pc_bayer b = {raw, (size_t)w, w, h, (pc_cfa)cfa, 0};
        pc_picture pr = rgb_pic(ref, w, h);
        int rc = pc_net_ref(net, &b, &pr, err, sizeof err);
        long total = 0, diff = 0;
        int maxd = 0, badyuv = 0, runs = 0;
        for (int t = 0; t < 3 && rc == 0; t++) {
            pc_cpu *cpu = NULL;
            if (pc_cpu_open(&cpu, threads[t], w, h, err, sizeof err)) {
                rc = -1;
                break;
            }
            pc_cpu_set_net(cpu, net);
            for (int fmt = 0; fmt <= PC_FMT_RGBX32; fmt++) {
                pc_picture p;
                tu_pic_layout(&p, fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, out);
                if (pc_cpu_debayer(cpu, PC_ALGO_NET, &b, &p, err, sizeof err)) {
                    rc = -1;
                    break;
                }
                runs++;
                if (fmt == PC_FMT_RGB24 || fmt == PC_FMT_RGBX32) {
                    const int bpp = fmt == PC_FMT_RGB24 ? 3 : 4;
                    for (size_t i = 0; i < (size_t)w * h; i++)
                        for (int c = 0; c < 3; c++) {
                            int d = abs((int)out[bpp * i + c] - (int)ref[3 * i + c]);
                            maxd = d > maxd ? d : maxd;
                            diff += d > 0;
                            total++;
                        }
                } else {
                    /* its YUV = pc_rgb_to_yuv of its own RGB */
                    uint8_t *own = malloc(3 * (size_t)w * h);
                    pc_picture pq = rgb_pic(own, w, h), py;
                    pc_cpu_debayer(cpu, PC_ALGO_NET, &b, &pq, err, sizeof err);
                    tu_pic_layout(&py, fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, yuv);
                    pc_rgb_to_yuv(own, 3 * (size_t)w, &py, err, sizeof err);
                    tu_pic_layout(&p, fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, out);
                    int md;
                    badyuv += tu_compare(&p, &py, &md) != 0;
                    free(own);
                }
            }
            pc_cpu_close(cpu);
        }
        TAP_CHECK(rc == 0 && maxd <= 1 && diff * 1000 <= total && badyuv == 0,
                  "published net %dx%d %s: CPU backend (1, 2, 3 threads; rgb24, rgbx32) within 1 of the reference "
                  "(max %d, %ld of %ld samples differ), nv12/i420 = the conversion of its rgb (%d of %d runs "
                  "differ)%s%s", w, h, pc_cfa_name((pc_cfa)cfa), maxd, diff, total, badyuv, runs, rc ? ": " : "",
                  rc ? err : "");
    }
    free(rgb);
    free(raw);
    free(ref);
    free(out);
    free(yuv);
}

/* Two stacked cameras (cam_rows) == each alone: no row of one reaches
 * into the other. */
static void camera_edges(const pc_net *net)
{
    const int w = 48, ch = 32;
    uint8_t *rgb = malloc(3 * (size_t)w * 2 * ch), *raw = malloc((size_t)w * 2 * ch);
    uint8_t *both = malloc(3 * (size_t)w * 2 * ch), *alone = malloc(3 * (size_t)w * 2 * ch);
    tu_synth(rgb, w, 2 * ch, 9);
    char err[512] = "";
    for (int cfa = 0; cfa < 4; cfa += 3) {
        tu_mosaic(rgb, w, 2 * ch, raw, w, 2 * ch, (pc_cfa)cfa);
        for (int impl = 0; impl < 2; impl++) {
            pc_cpu *cpu = NULL;
            int rc = impl ? pc_cpu_open(&cpu, 2, w, 2 * ch, err, sizeof err) : 0;
            if (cpu)
                pc_cpu_set_net(cpu, net);
            pc_bayer b = {raw, (size_t)w, w, 2 * ch, (pc_cfa)cfa, ch};
            pc_picture p = rgb_pic(both, w, 2 * ch);
            rc = rc ? rc : impl ? pc_cpu_debayer(cpu, PC_ALGO_NET, &b, &p, err, sizeof err)
                                : pc_net_ref(net, &b, &p, err, sizeof err);
            for (int c = 0; c < 2 && !rc; c++) {
                pc_bayer one = {raw + (size_t)c * ch * w, (size_t)w, w, ch, (pc_cfa)cfa, 0};
                pc_picture q = rgb_pic(alone + (size_t)c * ch * w * 3, w, ch);
                rc = impl ? pc_cpu_debayer(cpu, PC_ALGO_NET, &one, &q, err, sizeof err)
                          : pc_net_ref(net, &one, &q, err, sizeof err);
            }
            TAP_CHECK(rc == 0 && memcmp(both, alone, 3 * (size_t)w * 2 * ch) == 0,
                      "%s, %s: two stacked %dx%d cameras (cam_rows %d) give what each gives alone%s%s",
                      impl ? "CPU backend" : "reference", pc_cfa_name((pc_cfa)cfa), w, ch, ch, rc ? ": " : "",
                      rc ? err : "");
            /* and without cam_rows the second camera's first rows differ
             * (the network reads across the edge): the check has teeth */
            if (!impl && cfa == 0) {
                pc_bayer whole = {raw, (size_t)w, w, 2 * ch, (pc_cfa)cfa, 0};
                pc_picture p2 = rgb_pic(both, w, 2 * ch);
                pc_net_ref(net, &whole, &p2, err, sizeof err);
                TAP_CHECK(memcmp(both + (size_t)ch * w * 3, alone + (size_t)ch * w * 3, 3 * (size_t)w) != 0,
                          "(as one image, the second camera's first row differs from it alone)");
            }
            pc_cpu_close(cpu);
        }
    }
    pc_bayer bad = {raw, (size_t)w, w, 2 * ch, PC_CFA_RGGB, 10};
    pc_picture p = rgb_pic(both, w, 2 * ch);
    err[0] = 0;
    TAP_CHECK(pc_net_ref(net, &bad, &p, err, sizeof err) == PC_EINVAL && strstr(err, "cam_rows"),
              "cameras of 10 rows in 64 refused: %s", err);
    free(rgb);
    free(raw);
    free(both);
    free(alone);
}

/* --- quality on the sample photograph --------------------------------- */

static double cpsnr(const uint8_t *a, const uint8_t *b, int w, int h, int border)
{
    double sse = 0;
    long n = 0;
    for (int y = border; y < h - border; y++)
        for (int x = border; x < w - border; x++)
            for (int c = 0; c < 3; c++) {
                double d = (double)a[3 * ((size_t)y * w + x) + c] - b[3 * ((size_t)y * w + x) + c];
                sse += d * d;
                n++;
            }
    return 10.0 * log10(255.0 * 255.0 * (double)n / (sse > 0 ? sse : 1e-9));
}

static void beats_mlri(const pc_net *net, const char *sample)
{
    char err[512] = "";
    pc_image img;
    if (!TAP_CHECK(pc_image_read(sample, &img, err, sizeof err) == 0, "read %s%s%s", sample, err[0] ? ": " : "",
                   err))
        return;
    /* the whole photograph (even size) */
    const int w = img.width & ~1, h = img.height & ~1, x0 = 0, y0 = 0;
    uint8_t *crop = malloc(3 * (size_t)w * h), *raw = malloc((size_t)w * h), *out = malloc(3 * (size_t)w * h);
    for (int y = 0; y < h; y++)
        memcpy(crop + 3 * (size_t)y * w, img.rgb + (size_t)(y0 + y) * img.pitch + 3 * (size_t)x0, 3 * (size_t)w);
    pc_mosaic_from_rgb(crop, 3 * (size_t)w, w, h, PC_CFA_RGGB, raw, (size_t)w, err, sizeof err);
    pc_bayer b = {raw, (size_t)w, w, h, PC_CFA_RGGB, 0};
    pc_picture p = rgb_pic(out, w, h);
    pc_cpu *cpu = NULL;
    int rc = pc_cpu_open(&cpu, 0, w, h, err, sizeof err);
    double q_net = 0, q_mlri = 0;
    if (!rc) {
        pc_cpu_set_net(cpu, net);
        rc = pc_cpu_debayer(cpu, PC_ALGO_NET, &b, &p, err, sizeof err);
        q_net = cpsnr(out, crop, w, h, 8);
    }
    if (!rc) {
        rc = pc_cpu_debayer(cpu, PC_ALGO_MLRI, &b, &p, err, sizeof err);
        q_mlri = cpsnr(out, crop, w, h, 8);
    }
    TAP_CHECK(rc == 0 && q_net >= q_mlri + 1.5, "%s, %dx%d from (%d, %d), RGGB: net %.2f dB CPSNR, mlri %.2f "
              "dB: net better by %.2f dB (>= 1.5)%s%s", sample, w, h, x0, y0, q_net, q_mlri, q_net - q_mlri,
              rc ? ": " : "", rc ? err : "");
    pc_cpu_close(cpu);
    pc_image_free(&img);
    free(crop);
    free(raw);
    free(out);
}

/* --- the default file, the backend ops -------------------------------- */

static void defaults_and_backend(const pc_net *net)
{
    const int w = 40, h = 32;
    uint8_t *raw = malloc((size_t)w * h), *a = malloc(3 * (size_t)w * h), *b2 = malloc(3 * (size_t)w * h);
    tu_noise(raw, (size_t)w * h, 3);
    char err[512] = "";
    pc_bayer b = {raw, (size_t)w, w, h, PC_CFA_GRBG, 0};
    pc_picture pa = rgb_pic(a, w, h), pb = rgb_pic(b2, w, h);
    pc_net *dflt = NULL;
    int same_file = pc_net_load(&dflt, pc_net_default_path(), err, sizeof err) == 0 &&
                    strcmp(dflt->sha256, net->sha256) == 0;
    pc_net_free(dflt);
    if (!same_file) {
        tap_skip("the default weights file is not the repository's (another installed copy)");
    } else {
        int rc = pc_ref_debayer(PC_ALGO_NET, &b, &pa, err, sizeof err);
        rc = rc ? rc : pc_net_ref(net, &b, &pb, err, sizeof err);
        TAP_CHECK(rc == 0 && memcmp(a, b2, 3 * (size_t)w * h) == 0,
                  "pc_ref_debayer(net) runs the reference with the default file %s%s%s", pc_net_default_path(),
                  rc ? ": " : "", rc ? err : "");
        pc_cpu *cpu = NULL;
        rc = pc_cpu_open(&cpu, 2, w, h, err, sizeof err);
        rc = rc ? rc : pc_cpu_prepare(cpu, PC_ALGO_NET, err, sizeof err);
        rc = rc ? rc : pc_cpu_debayer(cpu, PC_ALGO_NET, &b, &pa, err, sizeof err);
        pc_cpu_set_net(cpu, net);
        rc = rc ? rc : pc_cpu_debayer(cpu, PC_ALGO_NET, &b, &pb, err, sizeof err);
        TAP_CHECK(rc == 0 && memcmp(a, b2, 3 * (size_t)w * h) == 0,
                  "the CPU backend without weights set loads the default file (same bytes as with them set)%s%s",
                  rc ? ": " : "", rc ? err : "");
        pc_cpu_close(cpu);
    }
    /* the backend ops */
    pc_backend *be = NULL;
    pc_backend_config bad = {.width = w, .height = h, .slots = 1, .threads = 2, .cam_rows = 12};
    err[0] = 0;
    TAP_CHECK(pc_backend_open(&be, &pc_backend_cpu, &bad, err, sizeof err) == PC_EINVAL && !be && strstr(err, "12"),
              "backend: cameras of 12 rows in a 32-row frame refused: %s", err);
    pc_backend_config cfg = {.width = w, .height = h, .slots = 1, .threads = 2, .cam_rows = 16};
    int rc = pc_backend_open(&be, &pc_backend_cpu, &cfg, err, sizeof err);
    pc_debayer_config dc = {PC_ALGO_NET, PC_VARIANT_AUTO, PC_CFA_GRBG, PC_FMT_RGB24, PC_MATRIX_BT709,
                            PC_RANGE_LIMITED};
    pc_picture pic;
    memset(&pic, 0, sizeof pic);
    rc = rc ? rc : pc_backend_set_net(be, net, err, sizeof err);
    rc = rc ? rc : pc_backend_set_algo(be, &dc, err, sizeof err);
    rc = rc ? rc : pc_backend_picture_alloc(be, PC_FMT_RGB24, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, &pic, err,
                                            sizeof err);
    rc = rc ? rc : pc_backend_upload(be, 0, 0, raw, (size_t)w, h, err, sizeof err);
    rc = rc ? rc : pc_backend_debayer(be, 0, &pic, err, sizeof err);
    rc = rc ? rc : pc_backend_wait(be, 0, err, sizeof err);
    b.cam_rows = 16;
    int rc2 = pc_net_ref(net, &b, &pb, err, sizeof err);
    long over = 0;
    for (int y = 0; !rc && y < h; y++)
        for (int x = 0; x < 3 * w; x++)
            over += abs((int)pic.plane[0][(size_t)y * pic.pitch[0] + x] - (int)b2[(size_t)y * 3 * w + x]) > 1;
    TAP_CHECK(rc == 0 && rc2 == 0 && over == 0,
              "backend cpu: set_net, set_algo net, debayer of two 16-row cameras: within 1 of the reference's "
              "cameras (%ld samples over)%s%s", over, rc ? ": " : "", rc ? err : "");
    if (be) {
        pc_backend_picture_free(be, &pic);
        pc_backend_close(be);
    }
    free(raw);
    free(a);
    free(b2);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_net WEIGHTS SAMPLE.png\n");
        return 64;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_net.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    tap_diag("CPU builds: best %s", pc_net_cpu_best_lanes());
    pc_net *net = the_weights(argv[1]);
    damaged(argv[1]);
    hand_built();
    if (net) {
        ref_vs_cpu(net);
        camera_edges(net);
        beats_mlri(net, argv[2]);
        defaults_and_backend(net);
    }
    pc_net_free(net);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", tmpdir);
    return tap_done();
}
