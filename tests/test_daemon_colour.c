/* test_daemon_colour.c - the colour stage end to end: a 12-bit PFNC-packed
 * raw file (two cameras, each a neutral scene seen through its own colour
 * cast, with a black pedestal, quantised to 12 bits) replayed through the
 * real panocap executable (file source, CPU backend, software encoder)
 * with per-camera black level, white-balance gains, colour matrix and
 * transfer curve in the configuration; the output decoded with libavcodec
 * must be the expected picture: the raw slabs mapped through the colour
 * tables and demosaiced by the C reference with the per-camera matrices
 * (kernels/colour.h), within the encoder's loss; a grey card in the scene
 * comes out neutral. Negative control: the same frame against the
 * picture without the colour settings is far off. argv[1]: panocap. */
#include "daemon_testutil.h"

#include "capture.h"
#include "colour.h"
#include "colour_test_util.h"
#include "debayer.h"
#include "debayer_test_util.h"
#include "sanitizer.h"

#define W 320
#define SH 120
#define NCAM 2
#define H (SH * NCAM)
#define SETS 12

/* Measured with libx264 at 20 Mbit/s on this small picture: the right
 * reference 45+ dB (Y), the uncorrected one below 25 dB. */
#define PSNR_MIN_DB 38.0
#define PSNR_WRONG_MAX_DB 30.0
/* Grey card: |Cb-128|, |Cr-128| over the patch interiors after encoding. */
#define GREY_TOL 3

static const double casts[NCAM][3] = {{0.55, 1.0, 0.70}, {0.80, 1.0, 0.45}};
static const double black = 256;

typedef struct ctx {
    uint8_t *y, *u, *v, *y0, *u0, *v0; /* expected with and without colour */
    double psnr_min, psnr_wrong_max;
    int grey_worst, grey_ref_worst, n;
} ctx;

static double plane_sse(const uint8_t *a, size_t ap, const uint8_t *b, size_t bp, int w, int h)
{
    double se = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double d = (double)a[(size_t)y * ap + x] - b[(size_t)y * bp + x];
            se += d * d;
        }
    return se;
}

static int on_frame(void *user, int i, const AVFrame *f)
{
    ctx *c = user;
    if (f->width != W || f->height != H || f->format != AV_PIX_FMT_YUV420P)
        return 0;
    double se = plane_sse(f->data[0], (size_t)f->linesize[0], c->y, W, W, H) +
                plane_sse(f->data[1], (size_t)f->linesize[1], c->u, W / 2, W / 2, H / 2) +
                plane_sse(f->data[2], (size_t)f->linesize[2], c->v, W / 2, W / 2, H / 2);
    double q = dt_psnr(se, 1.5 * W * H);
    double se0 = plane_sse(f->data[0], (size_t)f->linesize[0], c->y0, W, W, H) +
                 plane_sse(f->data[1], (size_t)f->linesize[1], c->u0, W / 2, W / 2, H / 2) +
                 plane_sse(f->data[2], (size_t)f->linesize[2], c->v0, W / 2, W / 2, H / 2);
    double q0 = dt_psnr(se0, 1.5 * W * H);
    c->psnr_min = q < c->psnr_min ? q : c->psnr_min;
    c->psnr_wrong_max = q0 > c->psnr_wrong_max ? q0 : c->psnr_wrong_max;
    /* grey card: the interiors of the three patches (left 64 columns, 40
     * rows each) of every slab, in chroma samples */
    for (int y = 0; y < H / 2; y++)
        for (int x = 4; x < 28; x++) {
            int py = (2 * y) % 40;
            if (py < 8 || py >= 32)
                continue;
            int du = abs(f->data[1][(size_t)y * f->linesize[1] + x] - 128);
            int dv = abs(f->data[2][(size_t)y * f->linesize[2] + x] - 128);
            c->grey_worst = du > c->grey_worst ? du : c->grey_worst;
            c->grey_worst = dv > c->grey_worst ? dv : c->grey_worst;
            int eu = abs(c->u[(size_t)y * (W / 2) + x] - 128), ev = abs(c->v[(size_t)y * (W / 2) + x] - 128);
            c->grey_ref_worst = eu > c->grey_ref_worst ? eu : c->grey_ref_worst;
            c->grey_ref_worst = ev > c->grey_ref_worst ? ev : c->grey_ref_worst;
        }
    c->n++;
    return 0;
}

/* The scene rgb (W x H) as the two cameras see it (casts, pedestal, 12
 * bits, 12p) into packed (NCAM slabs), then SETS identical sets into path. */
static int write_raw(const char *path, const uint8_t *rgb, const pc_rawfmt *fp, uint8_t *packed, uint16_t *codes,
                     char *err, size_t errlen)
{
    pc_rawfmt f = *fp;
    size_t sb = pc_rawfmt_frame_bytes(&f, W, SH);
    for (int s = 0; s < NCAM; s++) {
        tc_cast_frame(rgb + (size_t)3 * W * SH * s, W, SH, f.cfa, 12, casts[s], black, codes);
        tc_pack(&f, codes, (size_t)W * SH, packed + sb * s);
    }
    pc_raw_writer *wr = NULL;
    int rc = pc_raw_writer_open_fmt(&wr, path, W, SH, NCAM, &f, 25.0, err, errlen);
    for (int k = 0; k < SETS && rc == 0; k++) {
        pc_frameset fs;
        memset(&fs, 0, sizeof fs);
        fs.index = (uint64_t)k;
        fs.pts_ns = 1000000000LL + k * 40000000LL;
        fs.n = NCAM;
        fs.width = W;
        fs.height = SH;
        fs.fmt = f;
        fs.slab_bytes = sb;
        for (int s = 0; s < NCAM; s++)
            fs.slab[s] = packed + sb * s;
        rc = pc_raw_writer_write(wr, &fs, err, errlen);
    }
    if (wr && rc == 0)
        rc = pc_raw_writer_close(wr, err, errlen);
    return rc;
}

/* The gains of each camera in a "wb" or "wb freeze" answer (config lines
 * cameras[K].wb_gains = "R, G, B") into g; 1 when every camera's red and
 * blue are within 5 % of 1/cast (grey world's answer). */
static int wb_close(const char *ans, const double cast[NCAM][3], double g[NCAM][3])
{
    int parsed = 0;
    for (int s2 = 0; s2 < NCAM; s2++) {
        char key[64];
        snprintf(key, sizeof key, "cameras[%d].wb_gains = \"", s2);
        const char *q = strstr(ans, key);
        parsed += q && sscanf(q + strlen(key), "%lf, %lf, %lf", &g[s2][0], &g[s2][1], &g[s2][2]) == 3;
    }
    int ok = parsed == NCAM;
    for (int s2 = 0; s2 < NCAM && ok; s2++)
        ok = fabs(g[s2][0] * cast[s2][0] - 1) < 0.05 && fabs(g[s2][2] * cast[s2][2] - 1) < 0.05;
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_colour PANOCAP");
    dt_guard_children();
    char dir[256], err[512];
    if (!dt_tmpdir(dir, sizeof dir, "colour"))
        return tap_skip_all("mkdtemp failed");
    char raw[300], out[300], conf[300];
    snprintf(raw, sizeof raw, "%s/in.pcraw", dir);
    snprintf(out, sizeof out, "%s/out.ts", dir);
    snprintf(conf, sizeof conf, "%s/colour.conf", dir);

    /* The scene: a synthetic photograph with a grey card (left 64
     * columns: three grey levels) in each slab. */
    uint8_t *rgb = malloc((size_t)W * H * 3);
    tu_synth(rgb, W, H, 11);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < 64; x++)
            for (int k = 0; k < 3; k++)
                rgb[(size_t)3 * (y * W + x) + k] = (uint8_t)(60 + 60 * ((y % SH) / 40));
    pc_rawfmt f = {12, PC_PACK_PFNC, PC_CFA_RGGB};
    size_t sb = pc_rawfmt_frame_bytes(&f, W, SH);
    uint8_t *packed = malloc(sb * NCAM);
    uint16_t *codes = malloc((size_t)W * SH * 2);
    int rc = write_raw(raw, rgb, &f, packed, codes, err, sizeof err);
    TAP_CHECK(rc == 0, "wrote a 12p raw file: %d sets of %d x %dx%d%s%s", SETS, NCAM, W, SH, rc ? ": " : "",
              rc ? err : "");

    /* Settings: the right gains per camera, a mild colour matrix on camera
     * 1, sRGB transfer on both. */
    static const char *ccm1 = "1.2, -0.1, -0.1, -0.05, 1.1, -0.05, -0.1, -0.1, 1.2";
    char text[2000];
    snprintf(text, sizeof text,
             "capture = { source = \"file\"; file = \"%s\"; cameras = %d; pixel_format = \"BayerRG12p\";\n"
             "            black_level = %.1f; transfer = \"srgb\";%s };\n"
             "cameras = ( { name = \"left\"; wb_gains = \"%.6f, 1, %.6f\"; },\n"
             "            { name = \"right\"; wb_gains = \"%.6f, 1, %.6f\"; ccm = \"%s\"; } );\n"
             "debayer = { algo = \"bilinear\"; backend = \"cpu\"; };\n"
             "encode = { encoder = \"libx264\"; bitrate = 20000000; };\n"
             "outputs = ( \"%s\" );\n",
             raw, NCAM, black,
             /* every set must come out, and a replay at the file's 50 fps
              * drops sets when the pipeline falls behind (a busy machine,
              * a sanitizer build): 5 fps gives it 10 times the time (the
              * daemon has no key for a replay paced by the consumer) */
             " fps = 5;", 1 / casts[0][0], 1 / casts[0][2], 1 / casts[1][0], 1 / casts[1][2],
             ccm1, out);
    dt_write_file(conf, text);

    char *args[] = {argv[1], "--config", conf, "--control", "", NULL};
    dt_child ch;
    if (!TAP_CHECK(dt_spawn(&ch, dir, "panocap", args, NULL) == 0, "panocap started"))
        return tap_done();
    rc = dt_wait(&ch, 120);
    TAP_CHECK(rc == 0, "panocap --config (12p file, colour settings) exited %d", rc);
    if (rc != 0)
        dt_diag_file("panocap stderr", ch.err, 4000);
    TAP_CHECK(dt_contains(ch.err, "colour stage on: BayerRG12p, 2 cameras, colour matrices in the final pass"),
              "log: the colour stage is on, with colour matrices");

    /* Expected: the same colour settings through kernels/colour.h and the
     * reference (bilinear, I420 = the decoder's layout). */
    ctx c = {.psnr_min = 1e9};
    size_t ysz = (size_t)W * H;
    c.y = malloc(ysz);
    c.u = malloc(ysz / 4);
    c.v = malloc(ysz / 4);
    c.y0 = malloc(ysz);
    c.u0 = malloc(ysz / 4);
    c.v0 = malloc(ysz / 4);
    uint8_t *bay = malloc(ysz), *bay0 = malloc(ysz);
    pc_yuv_coeffs bands[NCAM];
    for (int s = 0; s < NCAM; s++) {
        pc_colour_cfg cfg, plain;
        pc_colour_cfg_init(&cfg);
        pc_colour_cfg_init(&plain);
        cfg.black_level = black;
        cfg.transfer = PC_TRANSFER_SRGB;
        cfg.wb[0] = 1 / casts[s][0];
        cfg.wb[2] = 1 / casts[s][2];
        if (s == 1)
            sscanf(ccm1, "%lf, %lf, %lf, %lf, %lf, %lf, %lf, %lf, %lf", &cfg.ccm[0], &cfg.ccm[1], &cfg.ccm[2],
                   &cfg.ccm[3], &cfg.ccm[4], &cfg.ccm[5], &cfg.ccm[6], &cfg.ccm[7], &cfg.ccm[8]);
        static pc_colour_tables t, t0;
        pc_colour_tables_build(&cfg, 12, &t, err, sizeof err);
        pc_colour_tables_build(&plain, 12, &t0, err, sizeof err);
        pc_colour_slab(&f, &t, packed + sb * s, 0, W, SH, bay + (size_t)W * SH * s, W);
        pc_colour_slab(&f, &t0, packed + sb * s, 0, W, SH, bay0 + (size_t)W * SH * s, W);
        pc_yuv_coeffs_ccm(PC_MATRIX_BT709, PC_RANGE_LIMITED, cfg.ccm, &bands[s], err, sizeof err);
    }
    pc_bayer b = {bay, W, W, H, f.cfa, 0}, b0 = {bay0, W, W, H, f.cfa, 0};
    pc_picture p = {.fmt = PC_FMT_I420, .matrix = PC_MATRIX_BT709, .range = PC_RANGE_LIMITED,
                    .plane = {c.y, c.u, c.v}, .pitch = {W, W / 2, W / 2}, .width = W, .height = H,
                    .bands = bands, .band_rows = SH, .n_bands = NCAM};
    pc_picture p0 = {.fmt = PC_FMT_I420, .matrix = PC_MATRIX_BT709, .range = PC_RANGE_LIMITED,
                     .plane = {c.y0, c.u0, c.v0}, .pitch = {W, W / 2, W / 2}, .width = W, .height = H};
    pc_ref_debayer(PC_ALGO_BILINEAR, &b, &p, err, sizeof err);
    pc_ref_debayer(PC_ALGO_BILINEAR, &b0, &p0, err, sizeof err);

    dt_decoded d;
    rc = dt_decode(out, on_frame, &c, &d);
    TAP_CHECK(rc == 0 && d.frames == SETS && c.n == SETS, "out.ts decodes: %d frames of %dx%d (%s)", d.frames,
              d.width, d.height, d.codec);
    TAP_CHECK(c.n && c.psnr_min > PSNR_MIN_DB,
              "every frame is the raw set through the colour settings (tables + per-camera matrices, bilinear): "
              "PSNR min %.2f dB (threshold %.0f)", c.psnr_min, PSNR_MIN_DB);
    TAP_CHECK(c.n && c.psnr_wrong_max < PSNR_WRONG_MAX_DB,
              "negative control: against the picture without the colour settings at most %.2f dB (< %.0f)",
              c.psnr_wrong_max, PSNR_WRONG_MAX_DB);
    TAP_CHECK(c.n && c.grey_worst <= GREY_TOL,
              "grey card through the casts (%.2f, 1, %.2f) and (%.2f, 1, %.2f) comes out neutral: chroma within "
              "%d of 128 (tolerance %d; the reference itself: within %d)", casts[0][0], casts[0][2], casts[1][0],
              casts[1][2], c.grey_worst, GREY_TOL, c.grey_ref_worst);

    /* Automatic white balance: the same file looped, both cameras on
     * wb_gains = "auto"; the grey card must come out neutral, and the
     * control socket's "wb freeze" prints gains close to the right ones
     * as config lines. */
    char sock[300], out2[300];
    snprintf(sock, sizeof sock, "%s/control.sock", dir);
    snprintf(out2, sizeof out2, "%s/auto.ts", dir);
    /* grey world needs a scene that is grey on average: the same picture
     * in shades of grey */
    for (size_t i = 0; i < (size_t)W * H; i++) {
        int m = (rgb[3 * i] + rgb[3 * i + 1] + rgb[3 * i + 2]) / 3;
        rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = (uint8_t)m;
    }
    snprintf(raw, sizeof raw, "%s/grey.pcraw", dir);
    rc = write_raw(raw, rgb, &f, packed, codes, err, sizeof err);
    TAP_CHECK(rc == 0, "wrote a 12p raw file of a neutral scene%s%s", rc ? ": " : "", rc ? err : "");
    snprintf(text, sizeof text,
             "capture = { source = \"file\"; file = \"%s\"; file_loop = true; cameras = %d;\n"
             "            pixel_format = \"BayerRG12p\"; black_level = %.1f; wb_gains = \"auto\"; };\n"
             "debayer = { algo = \"bilinear\"; backend = \"cpu\"; };\n"
             "encode = { encoder = \"libx264\"; bitrate = 20000000; };\n"
             "daemon = { control = \"%s\"; };\n"
             "outputs = ( \"%s\" );\n",
             raw, NCAM, black, sock, out2);
    dt_write_file(conf, text);
    char *args2[] = {argv[1], "--config", conf, NULL};
    dt_child ch2;
    char ans[2048] = "";
    int started = dt_spawn(&ch2, dir, "panocap-auto", args2, NULL) == 0;
    int answered = 0, settled = 0;
    double g[NCAM][3] = {{0}};
    /* "wb" until the estimate has settled (how many sets that takes is
     * the machine's speed: a freeze before the first estimate holds the
     * starting gains, 1.0), then "wb freeze" */
    for (double end = dt_now() + tu_bound(60); started && dt_now() < end && !settled && !dt_exited(&ch2);) {
        dt_sleep(0.2);
        if (dt_control(sock, "wb", ans, sizeof ans, 30.0) == 0)
            settled = wb_close(ans, casts, g);
    }
    answered = started && dt_control(sock, "wb freeze", ans, sizeof ans, 30.0) == 0;
    int close_ok = wb_close(ans, casts, g);
    TAP_CHECK(answered && close_ok && strstr(ans, "OK frozen"),
              "wb = \"auto\": \"wb freeze\" prints the gains as config lines, within 5%% of 1/cast (grey world with clipped tiles left out) "
              "(camera 0: %.3f, %.3f, %.3f; camera 1: %.3f, %.3f, %.3f)",
              g[0][0], g[0][1], g[0][2], g[1][0], g[1][1], g[1][2]);
    if (!answered || !close_ok)
        tap_diag("answer: %s", ans);
    if (started) {
        /* live: new gains and a matrix in the file, SIGHUP */
        char text2[2000];
        snprintf(text2, sizeof text2,
                 "capture = { source = \"file\"; file = \"%s\"; file_loop = true; cameras = %d;\n"
                 "            pixel_format = \"BayerRG12p\"; black_level = %.1f; transfer = \"2.2\"; };\n"
                 "cameras = ( { wb_gains = \"%.4f, 1, %.4f\"; },\n"
                 "            { wb_gains = \"%.4f, 1, %.4f\"; ccm = \"%s\"; } );\n"
                 "debayer = { algo = \"bilinear\"; backend = \"cpu\"; };\n"
                 "encode = { encoder = \"libx264\"; bitrate = 20000000; };\n"
                 "daemon = { control = \"%s\"; };\n"
                 "outputs = ( \"%s\" );\n",
                 raw, NCAM, black, 1 / casts[0][0], 1 / casts[0][2], 1 / casts[1][0], 1 / casts[1][2], ccm1, sock,
                 out2);
        dt_write_file(conf, text2);
        kill(ch2.pid, SIGHUP);
        int applied = dt_wait_for_text(ch2.err, "reload: colour settings applied from the next frame set",
                                       tu_bound(60), &ch2);
        char ans2[1024] = "";
        char want[96];
        snprintf(want, sizeof want, "cameras[0].wb_gains = \"%.4f, 1.0000, %.4f\"", 1 / casts[0][0], 1 / casts[0][2]);
        /* the new state is swapped in at the next frame set */
        for (double end = dt_now() + tu_bound(60); applied && dt_now() < end;) {
            dt_control(sock, "wb", ans2, sizeof ans2, 30.0);
            if (strstr(ans2, want))
                break;
            dt_sleep(0.1);
        }
        TAP_CHECK(applied && strstr(ans2, want),
                  "SIGHUP applies manual gains, a matrix and gamma 2.2 live (log line; \"wb\" answers %s)", want);
        if (!strstr(ans2, want))
            tap_diag("wb: %s", ans2);
        if (!applied)
            dt_diag_file("panocap stderr", ch2.err, 3000);
        kill(ch2.pid, SIGTERM);
        rc = dt_wait(&ch2, 60);
        TAP_CHECK(rc == 0, "panocap with wb = auto stopped cleanly (exit %d)", rc);
        if (rc)
            dt_diag_file("panocap stderr", ch2.err, 3000);
    }
    ctx c2 = {.psnr_min = 1e9, .y = c.y, .u = c.u, .v = c.v, .y0 = c.y0, .u0 = c.u0, .v0 = c.v0};
    rc = dt_decode(out2, on_frame, &c2, &d);
    TAP_CHECK(rc == 0 && c2.n > 0 && c2.grey_worst <= GREY_TOL,
              "wb = \"auto\", then manual gains by SIGHUP: the grey card comes out neutral in all %d frames: chroma "
              "within %d of 128 (tolerance %d)", c2.n, c2.grey_worst, GREY_TOL);

    free(rgb);
    free(packed);
    free(codes);
    free(bay);
    free(bay0);
    free(c.y);
    free(c.u);
    free(c.v);
    free(c.y0);
    free(c.u0);
    free(c.v0);
    dt_rmtree(dir);
    return tap_done();
}
