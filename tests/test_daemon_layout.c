/* test_daemon_layout.c - encode.layout end to end (CPU backend, libx264
 * lossless: qp=0, 4:2:0): the real executable with 5 fake cameras,
 *   bands:   --output DIR/b%b.ts -s encode.layout=bands -s encode.bands=5
 *            -s encode.band_outputs=separate
 *   streams: --output DIR/m.ts --output DIR/m.mkv -s encode.layout=bands
 *            -s encode.bands=5 (each file: 5 video streams, one per band)
 *   stacked: --output DIR/s.ts   -s encode.layout=stacked
 * each with --record-raw. Every band's stream decodes with 2040x1080 and
 * FRAMES frames, the bands share one PTS sequence, and band b's frame i is
 * rows [b*1080, (b+1)*1080) of raw set i demosaiced by the reference
 * (bilinear, NV12) sample for sample (Y, Cb and Cr); the stacked stream is
 * that reference whole, sample for sample: so the reassembled bands equal
 * the stacked picture. The stacked run also writes a preview rendition
 * (-s encode.preview_scale=4, 2 Mbit/s, not lossless): it decodes at
 * 510x1350 with FRAMES frames, and its Y plane is the reference scaled down
 * by a 4x4 box filter (pc_picture_downscale) with a PSNR above
 * PREVIEW_PSNR_MIN_DB.
 *   grid:    --output DIR/g.ts -s encode.layout=grid (5x1 = 10200x1080,
 *            one stream) with a preview: tile c of frame i is rows
 *            [c*1080, (c+1)*1080) of the reference sample for sample; the
 *            preview is the grid scaled down (PSNR as above).
 * Bad input: 3 bands of 5 cameras, separate band outputs without %b and %b
 * with the bands muxed as streams, a grid over NVENC's limit and a grid
 * that is not the cameras are refused with the reason. argv[1]: the
 * panocap executable. */
#include "daemon_testutil.h"

#include "capture.h"
#include "debayer.h"

#define W 2040
#define SLAB_H 1080
#define NCAM 5
#define H (SLAB_H * NCAM)
#define FRAMES 8
#define NBANDS 5
#define PREVIEW 4
#define PW ((W / PREVIEW) & ~1)
#define PH ((H / PREVIEW) & ~1)
/* Preview (libx264 ultrafast, CBR 2 Mbit/s, 510x1350, the still photograph
 * with moving counters) against the box-filtered reference: measured on the
 * 2-core dev machine min 38.8 dB over 8 frames; a few dB below. */
#define PREVIEW_PSNR_MIN_DB 35.0

typedef struct preview_check {
    const struct ref_set *ref;
    double psnr_min;
    int frames, bad_fmt;
    uint8_t *y, *uv;
    int grid;       /* the picture is the NCAM x 1 grid of the reference: */
    uint8_t *gy, *guv; /* that grid, NV12, GW x SLAB_H */
} preview_check;

struct ref_set;
typedef struct ref_set {
    uint8_t *y, *uv; /* reference NV12 of each raw set, W x H */
    int n;
} ref_set;

typedef struct band_check {
    const ref_set *ref;
    int row0, rows;
    int64_t pts[FRAMES];
    int key[FRAMES]; /* decoded frame i is a keyframe */
    int mismatched_frames, first_bad_frame, bad_fmt;
    long bad_samples;
    long other_rows_diff; /* frame 0 against the next band's rows: must differ */
} band_check;

/* Reference pictures of every set of the raw recording. */
static int load_refs(const char *raw, ref_set *r, char *err, size_t n)
{
    pc_raw_reader *rr;
    pc_raw_info info;
    memset(r, 0, sizeof *r);
    if (pc_raw_reader_open(&rr, raw, &info, err, n))
        return -1;
    uint8_t *bayer = malloc((size_t)W * H);
    r->y = malloc((size_t)W * H * FRAMES);
    r->uv = malloc((size_t)W * H / 2 * FRAMES);
    int rc = bayer && r->y && r->uv ? 0 : -1;
    for (int i = 0; !rc && i < FRAMES; i++) {
        uint64_t index;
        int64_t pts;
        uint32_t subst;
        if (pc_raw_reader_read(rr, bayer, &index, &pts, &subst, err, n)) {
            rc = -1;
            break;
        }
        pc_bayer b = {bayer, W, W, H, info.cfa, 0};
        pc_picture p = {.fmt = PC_FMT_NV12, .matrix = PC_MATRIX_BT709, .range = PC_RANGE_LIMITED,
                        .plane = {r->y + (size_t)i * W * H, r->uv + (size_t)i * W * H / 2}, .pitch = {W, W},
                        .width = W, .height = H};
        rc = pc_ref_debayer(PC_ALGO_BILINEAR, &b, &p, err, n);
        r->n = i + 1;
    }
    free(bayer);
    pc_raw_reader_close(rr);
    return rc;
}

static void free_refs(ref_set *r)
{
    free(r->y);
    free(r->uv);
}

/* Decoded frame i (yuv420p) against rows [row0, row0+rows) of reference i. */
static int on_frame(void *user, int i, const AVFrame *f)
{
    band_check *c = user;
    if (i >= FRAMES || i >= c->ref->n)
        return 0;
    c->pts[i] = f->best_effort_timestamp;
    c->key[i] = f->key_frame;
    if (f->format != AV_PIX_FMT_YUV420P || f->width != W || f->height != c->rows) {
        c->bad_fmt++;
        return 0;
    }
    const uint8_t *ry = c->ref->y + (size_t)i * W * H, *ruv = c->ref->uv + (size_t)i * W * H / 2;
    long bad = 0;
    for (int y = 0; y < c->rows; y++) {
        const uint8_t *d = f->data[0] + (size_t)y * f->linesize[0], *r = ry + (size_t)(c->row0 + y) * W;
        for (int x = 0; x < W; x++)
            bad += d[x] != r[x];
    }
    for (int y = 0; y < c->rows / 2; y++) {
        const uint8_t *u = f->data[1] + (size_t)y * f->linesize[1], *v = f->data[2] + (size_t)y * f->linesize[2];
        const uint8_t *r = ruv + (size_t)(c->row0 / 2 + y) * W;
        for (int x = 0; x < W / 2; x++)
            bad += (u[x] != r[2 * x]) + (v[x] != r[2 * x + 1]);
    }
    if (i == 0) { /* negative control: the same comparison against other rows */
        int other = (c->row0 + c->rows) % H;
        for (int y = 0; y < c->rows && other + y < H; y++)
            c->other_rows_diff += memcmp(f->data[0] + (size_t)y * f->linesize[0], ry + (size_t)(other + y) * W, W) != 0;
    }
    if (bad) {
        if (!c->mismatched_frames++)
            c->first_bad_frame = i;
        c->bad_samples += bad;
    }
    return 0;
}

/* Grid frame i (NCAM x 1 tiles, yuv420p) against reference i: tile c =
 * rows [c*SLAB_H, (c+1)*SLAB_H) of the stacked reference, sample for
 * sample; also writes the reference grid of frame i into c->gy/c->guv
 * (NV12, GW x SLAB_H) for the preview's check. */
#define GW (W * NCAM)
typedef struct grid_check {
    const ref_set *ref;
    int frames, bad_fmt, mismatched_frames;
    long bad_samples;
    long other_tile_diff; /* frame 0, tile 1 against camera 0's rows: must differ */
    int64_t pts[FRAMES];
} grid_check;

static int on_grid_frame(void *user, int i, const AVFrame *f)
{
    grid_check *c = user;
    if (i >= FRAMES || i >= c->ref->n)
        return 0;
    c->pts[i] = f->best_effort_timestamp;
    if (f->format != AV_PIX_FMT_YUV420P || f->width != GW || f->height != SLAB_H) {
        c->bad_fmt++;
        return 0;
    }
    const uint8_t *ry = c->ref->y + (size_t)i * W * H, *ruv = c->ref->uv + (size_t)i * W * H / 2;
    long bad = 0;
    for (int t = 0; t < NCAM; t++) {
        for (int y = 0; y < SLAB_H; y++)
            bad += memcmp(f->data[0] + (size_t)y * f->linesize[0] + (size_t)t * W, ry + (size_t)(t * SLAB_H + y) * W,
                          W) != 0;
        for (int y = 0; y < SLAB_H / 2; y++) {
            const uint8_t *u = f->data[1] + (size_t)y * f->linesize[1] + (size_t)t * W / 2;
            const uint8_t *v = f->data[2] + (size_t)y * f->linesize[2] + (size_t)t * W / 2;
            const uint8_t *r = ruv + (size_t)(t * SLAB_H / 2 + y) * W;
            for (int x = 0; x < W / 2; x++)
                bad += (u[x] != r[2 * x]) + (v[x] != r[2 * x + 1]);
        }
    }
    if (i == 0)
        for (int y = 0; y < SLAB_H; y++)
            c->other_tile_diff += memcmp(f->data[0] + (size_t)y * f->linesize[0] + W, ry + (size_t)y * W, W) != 0;
    c->mismatched_frames += bad != 0;
    c->bad_samples += bad;
    c->frames++;
    return 0;
}

/* Preview frame i against the 4x4 box filter of reference i (Y PSNR). */
static int on_preview(void *user, int i, const AVFrame *f)
{
    preview_check *c = user;
    if (i >= c->ref->n)
        return 0;
    int pw = c->grid ? (GW / PREVIEW) & ~1 : PW, ph = c->grid ? (SLAB_H / PREVIEW) & ~1 : PH;
    if (f->format != AV_PIX_FMT_YUV420P || f->width != pw || f->height != ph) {
        c->bad_fmt++;
        return 0;
    }
    const uint8_t *ry = c->ref->y + (size_t)i * W * H, *ruv = c->ref->uv + (size_t)i * W * H / 2;
    pc_picture src = {.fmt = PC_FMT_NV12, .plane = {(uint8_t *)ry, (uint8_t *)ruv}, .pitch = {W, W}, .width = W,
                      .height = H};
    if (c->grid) { /* the reference's cameras side by side */
        for (int t = 0; t < NCAM; t++) {
            for (int y = 0; y < SLAB_H; y++)
                memcpy(c->gy + (size_t)y * GW + (size_t)t * W, ry + (size_t)(t * SLAB_H + y) * W, W);
            for (int y = 0; y < SLAB_H / 2; y++)
                memcpy(c->guv + (size_t)y * GW + (size_t)t * W, ruv + (size_t)(t * SLAB_H / 2 + y) * W, W);
        }
        src = (pc_picture){.fmt = PC_FMT_NV12, .plane = {c->gy, c->guv}, .pitch = {GW, GW}, .width = GW,
                           .height = SLAB_H};
    }
    pc_picture dst = {.fmt = PC_FMT_NV12, .plane = {c->y, c->uv}, .pitch = {(size_t)pw, (size_t)pw}, .width = pw,
                      .height = ph};
    if (pc_picture_downscale(&dst, &src, PREVIEW))
        return 1;
    double q = dt_psnr(dt_sse(f->data[0], (size_t)f->linesize[0], c->y, pw, 0, 0, pw, ph), (double)pw * ph);
    if (q < c->psnr_min)
        c->psnr_min = q;
    c->frames++;
    return 0;
}

/* The NBANDS band streams (stream streams[b] of paths[b]; -1: the file's
 * only one) of a run that recorded raw: each decodes with FRAMES frames of
 * W x SLAB_H, they share one PTS sequence, and losslessly equal their rows
 * of the stacked reference. gop > 0: the run had -s encode.gop=GOP, and
 * band b's keyframes must be frame 0 and then b, b + GOP, ...: out of step
 * with the other bands' (pl_band.idr_phase: b * GOP / NBANDS, here GOP =
 * NBANDS). */
static void check_bands(const char *what, const char *raw, char paths[NBANDS][320], const int streams[NBANDS],
                        int run_rc, int gop)
{
    char err[512] = "";
    ref_set ref;
    int rc = load_refs(raw, &ref, err, sizeof err);
    TAP_CHECK(rc == 0 && ref.n == FRAMES, "%s: reference of the %d recorded sets (%s)", what, ref.n, rc ? err : "ok");
    band_check bc[NBANDS];
    int frames_ok = 1, pts_same = 1, exact = 1;
    for (int b = 0; b < NBANDS; b++) {
        bc[b] = (band_check){.ref = &ref, .row0 = b * SLAB_H, .rows = SLAB_H};
        dt_decoded d;
        int r = rc ? -1 : dt_decode_stream(paths[b], streams[b], on_frame, &bc[b], &d);
        int ok = r == 0 && d.frames == FRAMES && d.errors == 0 && d.width == W && d.height == SLAB_H && d.sizes_ok &&
                 d.pts_increasing && !bc[b].bad_fmt && (streams[b] < 0 || d.video_streams == NBANDS);
        frames_ok &= ok;
        if (!ok)
            tap_diag("band %d (%s stream %d): decode %d, %d frames %dx%d, %d errors, %d not yuv420p, %d video streams",
                     b, paths[b], streams[b], r, d.frames, d.width, d.height, d.errors, bc[b].bad_fmt,
                     d.video_streams);
        for (int i = 0; i < FRAMES && b > 0; i++)
            if (bc[b].pts[i] != bc[0].pts[i]) {
                if (pts_same)
                    tap_diag("band %d frame %d: pts %lld, band 0 %lld", b, i, (long long)bc[b].pts[i],
                             (long long)bc[0].pts[i]);
                pts_same = 0;
            }
        if (bc[b].mismatched_frames) {
            exact = 0;
            tap_diag("band %d: %d frames differ from the reference (first %d), %ld samples", b,
                     bc[b].mismatched_frames, bc[b].first_bad_frame, bc[b].bad_samples);
        }
    }
    TAP_CHECK(frames_ok, "%s: all %d band streams decode: %d frames of %dx%d each, pts increasing%s", what, NBANDS,
              FRAMES, W, SLAB_H, streams[0] < 0 ? "" : ", the file has 5 video streams");
    TAP_CHECK(frames_ok && pts_same, "%s: the bands share one PTS sequence (%lld .. %lld)", what,
              (long long)bc[0].pts[0], (long long)bc[0].pts[FRAMES - 1]);
    int control = 1;
    for (int b = 0; b < NBANDS; b++)
        control &= bc[b].other_rows_diff > SLAB_H / 2;
    TAP_CHECK(control, "%s: negative control: each band's frame 0 against the next band's rows differs (%ld of %d "
              "rows for band 0)", what, bc[0].other_rows_diff, SLAB_H);
    TAP_CHECK(frames_ok && run_rc == 0 && exact,
              "%s lossless: band b of frame i = rows b*1080.. of the stacked reference of raw set i, sample for "
              "sample (Y, Cb, Cr), all bands and frames", what);
    if (gop > 0) {
        int step_ok = frames_ok;
        char got[NBANDS * (FRAMES + 2) + 1] = "", *g = got;
        for (int b = 0; b < NBANDS; b++) {
            int phase = b * gop / NBANDS;
            for (int i = 0; i < FRAMES; i++) {
                int want = i == 0 || (i >= phase && (i - phase) % gop == 0);
                step_ok &= bc[b].key[i] == want;
                *g++ = bc[b].key[i] ? 'K' : '.';
            }
            *g++ = b + 1 < NBANDS ? ' ' : '\0';
        }
        TAP_CHECK(step_ok, "%s, gop %d: band b's keyframes are frame 0, then b, b+%d, ... (out of step with the "
                  "other bands'): %s", what, gop, gop, got);
    }
    free_refs(&ref);
}

static int run(const char *exe, const char *dir, const char *name, char **extra, int nextra, dt_child *ch)
{
    char *args[40];
    int n = 0;
    args[n++] = (char *)exe;
    char *base[] = {"--source", "fake", "--frames", "8", "--algo", "bilinear", "--control", "", "--stats-interval",
                    "0", "-s", "encode.encoder=libx264", "-s", "encode.options=x264-params=qp=0"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        args[n++] = base[i];
    for (int i = 0; i < nextra; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    if (dt_spawn(ch, dir, name, args, NULL))
        return -1;
    return dt_wait(ch, 200);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tap_skip_all("usage: test_daemon_layout PANOCAP");
    dt_guard_children();
    char dir[256];
    if (!dt_tmpdir(dir, sizeof dir, "layout"))
        return tap_skip_all("mkdtemp failed");
    char out[300], raw[300], err[512];
    dt_child ch;

    /* --- bands, one output per band ---------------------------------------- */
    snprintf(out, sizeof out, "%s/b%%b.ts", dir);
    snprintf(raw, sizeof raw, "%s/bands.pcraw", dir);
    char *bx[] = {"--output", out, "--record-raw", raw, "-s", "encode.layout=bands", "-s", "encode.bands=5",
                  "-s", "encode.band_outputs=separate", "-s", "encode.gop=5"};
    int rc = run(argv[1], dir, "bands", bx, 12, &ch);
    char *sum = dt_slurp(ch.out);
    TAP_CHECK(rc == 0, "panocap ... --output DIR/b%%b.ts -s encode.layout=bands -s encode.bands=5 "
              "-s encode.band_outputs=separate exited %d", rc);
    if (rc)
        dt_diag_file("panocap stderr", ch.err, 4000);
    TAP_CHECK(sum && strstr(sum, "layout: bands, 5 bands of 2040x1080") && strstr(sum, "band 4  rows  4320-5399"),
              "summary names the layout and has one line per band");
    TAP_CHECK(dt_contains(ch.err, "encode band 3: libx264"), "log: each band's encoder named");
    char paths[NBANDS][320];
    int streams[NBANDS];
    for (int b = 0; b < NBANDS; b++) {
        snprintf(paths[b], sizeof paths[b], "%s/b%d.ts", dir, b);
        streams[b] = -1;
    }
    check_bands("separate outputs", raw, paths, streams, rc, NBANDS);
    free(sum);

    /* --- bands muxed as 5 video streams of each output (the default) ------- */
    char ts[320], mkv[320];
    snprintf(ts, sizeof ts, "%s/m.ts", dir);
    snprintf(mkv, sizeof mkv, "%s/m.mkv", dir);
    snprintf(raw, sizeof raw, "%s/streams.pcraw", dir);
    char *mx[] = {"--output", ts, "--output", mkv, "--record-raw", raw, "-s", "encode.layout=bands", "-s",
                  "encode.bands=5"};
    rc = run(argv[1], dir, "streams", mx, 10, &ch);
    TAP_CHECK(rc == 0, "panocap ... --output DIR/m.ts --output DIR/m.mkv -s encode.layout=bands -s encode.bands=5 "
              "exited %d", rc);
    if (rc)
        dt_diag_file("panocap stderr", ch.err, 4000);
    TAP_CHECK(dt_contains(ch.err, "with 5 video streams each, one per band"), "log: the outputs hold one stream per band");
    for (int f = 0; f < 2; f++) {
        for (int b = 0; b < NBANDS; b++) {
            snprintf(paths[b], sizeof paths[b], "%s", f ? mkv : ts);
            streams[b] = b;
        }
        check_bands(f ? "one .mkv, 5 streams" : "one .ts, 5 streams", raw, paths, streams, rc, 0);
    }

    /* --- stacked, the same way: the reassembled bands' reference ---------- */
    snprintf(out, sizeof out, "%s/s.ts", dir);
    snprintf(raw, sizeof raw, "%s/stacked.pcraw", dir);
    char pv_url[400], pv_path[320];
    snprintf(pv_path, sizeof pv_path, "%s/preview.ts", dir);
    snprintf(pv_url, sizeof pv_url, "encode.preview_url=%s", pv_path);
    char *sx[] = {"--output", out, "--record-raw", raw, "-s", "encode.layout=stacked", "-s", "encode.preview_scale=4",
                  "-s", pv_url};
    rc = run(argv[1], dir, "stacked", sx, 10, &ch);
    TAP_CHECK(rc == 0, "panocap ... -s encode.layout=stacked -s encode.preview_scale=4 exited %d", rc);
    ref_set ref;
    rc = load_refs(raw, &ref, err, sizeof err);
    band_check sc = {.ref = &ref, .row0 = 0, .rows = H};
    dt_decoded d;
    int r = rc ? -1 : dt_decode(out, on_frame, &sc, &d);
    TAP_CHECK(r == 0 && d.frames == FRAMES && d.width == W && d.height == H && !sc.bad_fmt &&
                  !sc.mismatched_frames,
              "stacked stream: %d frames of %dx%d equal to the reference sample for sample (%d differ)", d.frames,
              d.width, d.height, sc.mismatched_frames);
    preview_check pc = {.ref = &ref, .psnr_min = 1e9, .y = malloc((size_t)PW * PH), .uv = malloc((size_t)PW * PH / 2)};
    r = rc || !pc.y || !pc.uv ? -1 : dt_decode(pv_path, on_preview, &pc, &d);
    TAP_CHECK(r == 0 && d.frames == FRAMES && d.width == PW && d.height == PH && !pc.bad_fmt && d.pts_increasing,
              "preview decodes: %d frames of %dx%d (1/%d)", d.frames, d.width, d.height, PREVIEW);
    TAP_CHECK(pc.frames == FRAMES && pc.psnr_min > PREVIEW_PSNR_MIN_DB,
              "preview = the reference scaled down (4x4 box): Y PSNR min %.2f dB over %d frames (bound %.0f dB)",
              pc.psnr_min, pc.frames, PREVIEW_PSNR_MIN_DB);
    free(pc.y);
    free(pc.uv);
    free_refs(&ref);

    /* --- grid: the cameras side by side (5x1 = 10200x1080), one stream,
     * written there by the final pass; its preview is the grid scaled ---- */
    snprintf(out, sizeof out, "%s/g.ts", dir);
    snprintf(raw, sizeof raw, "%s/grid.pcraw", dir);
    snprintf(pv_path, sizeof pv_path, "%s/gpreview.ts", dir);
    snprintf(pv_url, sizeof pv_url, "encode.preview_url=%s", pv_path);
    char *gx[] = {"--output", out, "--record-raw", raw, "-s", "encode.layout=grid", "-s", "encode.preview_scale=4",
                  "-s", pv_url};
    rc = run(argv[1], dir, "grid", gx, 10, &ch);
    sum = dt_slurp(ch.out);
    TAP_CHECK(rc == 0, "panocap ... -s encode.layout=grid -s encode.preview_scale=4 exited %d", rc);
    if (rc)
        dt_diag_file("panocap stderr", ch.err, 4000);
    TAP_CHECK(dt_contains(ch.err, "encode.layout grid: closest to square: grid 5x1 of the 5 cameras, 10200x1080") &&
                  sum && strstr(sum, "layout: grid, 1 band of 10200x1080"),
              "log and summary name the grid 5x1 of 10200x1080");
    free(sum);
    rc = load_refs(raw, &ref, err, sizeof err);
    grid_check gc = {.ref = &ref};
    r = rc ? -1 : dt_decode(out, on_grid_frame, &gc, &d);
    TAP_CHECK(r == 0 && d.frames == FRAMES && d.errors == 0 && d.width == GW && d.height == SLAB_H && d.sizes_ok &&
                  d.pts_increasing && d.video_streams == 1 && !gc.bad_fmt,
              "grid stream decodes: one video stream, %d frames of %dx%d, pts increasing", d.frames, d.width,
              d.height);
    TAP_CHECK(gc.other_tile_diff > SLAB_H / 2, "grid: negative control: tile 1 of frame 0 differs from camera 0's rows "
              "(%ld of %d rows)", gc.other_tile_diff, SLAB_H);
    TAP_CHECK(r == 0 && gc.frames == FRAMES && !gc.mismatched_frames,
              "grid lossless: tile c of frame i = rows c*1080.. of the stacked reference of raw set i, sample for "
              "sample (Y, Cb, Cr), every tile and frame (%d frames differ, %ld samples)", gc.mismatched_frames,
              gc.bad_samples);
    int gpw = (GW / PREVIEW) & ~1, gph = (SLAB_H / PREVIEW) & ~1;
    pc = (preview_check){.ref = &ref, .psnr_min = 1e9, .y = malloc((size_t)gpw * gph),
                         .uv = malloc((size_t)gpw * gph / 2), .grid = 1, .gy = malloc((size_t)GW * SLAB_H),
                         .guv = malloc((size_t)GW * SLAB_H / 2)};
    r = rc || !pc.y || !pc.uv || !pc.gy || !pc.guv ? -1 : dt_decode(pv_path, on_preview, &pc, &d);
    TAP_CHECK(r == 0 && d.frames == FRAMES && d.width == gpw && d.height == gph && !pc.bad_fmt && d.pts_increasing &&
                  pc.frames == FRAMES && pc.psnr_min > PREVIEW_PSNR_MIN_DB,
              "grid preview: %d frames of %dx%d, the grid scaled down (4x4 box): Y PSNR min %.2f dB (bound %.0f dB)",
              d.frames, d.width, d.height, pc.psnr_min, PREVIEW_PSNR_MIN_DB);
    free(pc.y);
    free(pc.uv);
    free(pc.gy);
    free(pc.guv);
    free_refs(&ref);

    /* --- refusals --------------------------------------------------------- */
    char *b3[] = {"--output", out, "-s", "encode.layout=bands", "-s", "encode.bands=3"};
    rc = run(argv[1], dir, "bands3", b3, 6, &ch);
    TAP_CHECK(rc != 0 && dt_contains(ch.err, "encode.bands = 3 does not divide the 5 cameras") &&
                  dt_contains(ch.err, "possible: 1, 5"),
              "3 bands of 5 cameras: refused (exit %d) with the reason and the possible counts", rc);
    char *nob[] = {"--output", out, "-s", "encode.layout=bands", "-s", "encode.bands=5", "-s",
                   "encode.band_outputs=separate"};
    rc = run(argv[1], dir, "nob", nob, 8, &ch);
    TAP_CHECK(rc != 0 && dt_contains(ch.err, "needs %b"),
              "5 separate band outputs into one output URL without %%b: refused (exit %d)", rc);
    if (rc == 0)
        dt_diag_file("panocap stderr", ch.err, 2000);
    snprintf(out, sizeof out, "%s/b%%b.ts", dir);
    char *wb[] = {"--output", out, "-s", "encode.layout=bands", "-s", "encode.bands=5"};
    rc = run(argv[1], dir, "wb", wb, 6, &ch);
    TAP_CHECK(rc != 0 && dt_contains(ch.err, "needs encode.band_outputs = \"separate\""),
              "%%b in an output URL with the bands muxed as streams (the default): refused (exit %d)", rc);
    if (rc == 0)
        dt_diag_file("panocap stderr", ch.err, 2000);
    /* a grid over the encoder's limit, a grid that is not the cameras */
    char *gbig[] = {"--output", out, "-s", "encode.layout=grid", "-s", "encode.encoder=hevc_nvenc"};
    rc = run(argv[1], dir, "gridnv", gbig, 6, &ch);
    TAP_CHECK(rc != 0 && dt_contains(ch.err, "no grid of the 5 cameras") && dt_contains(ch.err, "8192") &&
                  dt_contains(ch.err, "encode.layout = \"stacked\" (2040x5400)"),
              "grid of 5 cameras for hevc_nvenc (10200 wide): refused (exit %d), naming 8192 and the stacked layout",
              rc);
    char *g23[] = {"--output", out, "-s", "encode.layout=grid", "-s", "encode.grid=2x3"};
    rc = run(argv[1], dir, "grid23", g23, 6, &ch);
    TAP_CHECK(rc != 0 && dt_contains(ch.err, "encode.grid = \"2x3\": its tiles are not the cameras") &&
                  dt_contains(ch.err, "5x1"),
              "encode.grid 2x3 of 5 cameras: refused (exit %d) with the grids of 5", rc);

    dt_rmtree(dir);
    return tap_done();
}
