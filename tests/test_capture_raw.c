/* test_capture_raw.c - PCRAW1 files and the file capture source (no Aravis
 * needed): write sets with the writer (padded pitches included), replay
 * them with the file source and compare bytes, pts, indexes and flags;
 * the stacked pointer and pc_frameset_stack; realtime pacing; looping;
 * bad files refused with messages naming the file. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "capture_testutil.h"
#include "clock.h"
#include "tap.h"

#define N 3
#define W 320
#define H 180
#define SETS 12

static uint8_t pixel(int set, int slab, int x, int y)
{
    return (uint8_t)(set * 31 + slab * 77 + x * 3 + y * 5 + ((x * y) >> 4));
}

static int write_file(const char *path)
{
    char err[256] = "";
    pc_raw_writer *w;
    if (pc_raw_writer_open(&w, path, W, H, N, PC_CFA_GBRG, 30.0, err, sizeof err) != 0) {
        tap_diag("%s", err);
        return -1;
    }
    size_t pitch = W + 64; /* exercise the row-by-row path */
    uint8_t *buf = malloc(pitch * H * N);
    int rc = 0;
    for (int s = 0; s < SETS && rc == 0; s++) {
        pc_frameset fs;
        memset(&fs, 0, sizeof fs);
        fs.index = 100 + s * 2; /* gaps, as after drops */
        fs.pts_ns = 5000000000LL + s * 33333333LL;
        fs.n = N;
        fs.width = W;
        fs.height = H;
        fs.substituted = (s == 4) ? 0x2 : 0;
        for (int k = 0; k < N; k++) {
            uint8_t *slab = buf + (size_t)k * pitch * H;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    slab[(size_t)y * pitch + x] = pixel(s, k, x, y);
            fs.slab[k] = slab;
            fs.pitch[k] = pitch;
        }
        rc = pc_raw_writer_write(w, &fs, err, sizeof err);
    }
    if (rc == 0)
        rc = pc_raw_writer_close(w, err, sizeof err);
    if (rc)
        tap_diag("%s", err);
    free(buf);
    return rc;
}

static void quiet_sink(void *u, int level, const char *line) { (void)u; (void)level; (void)line; }
static const pc_logger quiet = {quiet_sink, NULL, 0};

static pc_capture *open_file(const char *path, int realtime, int loop, double fps, char *err, size_t n)
{
    pc_capture_config cfg;
    pc_capture_config_init(&cfg);
    cfg.source = PC_SOURCE_FILE;
    cfg.file = path;
    cfg.n_cameras = 0;
    cfg.fps = fps;
    cfg.file_realtime = realtime;
    cfg.file_loop = loop;
    cfg.log = &quiet;
    pc_capture *c = NULL;
    if (pc_capture_open(&c, &cfg, err, n) != 0)
        return NULL;
    if (pc_capture_start(c, err, n) != 0) {
        pc_capture_close(c);
        return NULL;
    }
    return c;
}

/* Version 2 files: 12-bit PFNC-packed slabs (and 10p with a width that
 * does not end rows on a byte) written, read back by the reader and
 * replayed by the file source with the format in every set. */
static void test_packed(const char *fmtname, int w)
{
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/packed-%s.pcraw", tu_tmpdir(), fmtname);
    pc_rawfmt f;
    pc_rawfmt_parse(fmtname, &f, err, sizeof err);
    size_t sb = pc_rawfmt_frame_bytes(&f, w, H);
    uint8_t *buf = malloc(sb * N);
    for (size_t i = 0; i < sb * N; i++)
        buf[i] = (uint8_t)(i * 7 + (i >> 9));
    pc_raw_writer *wr = NULL;
    int rc = pc_raw_writer_open_fmt(&wr, path, w, H, N, &f, 25.0, err, sizeof err);
    for (int k = 0; k < 3 && rc == 0; k++) {
        pc_frameset fs;
        memset(&fs, 0, sizeof fs);
        fs.index = (uint64_t)k;
        fs.pts_ns = 1000000000LL + k * 40000000LL;
        fs.n = N;
        fs.width = w;
        fs.height = H;
        fs.fmt = f;
        fs.slab_bytes = sb;
        for (int i = 0; i < N; i++)
            fs.slab[i] = buf + sb * i;
        rc = pc_raw_writer_write(wr, &fs, err, sizeof err);
    }
    if (wr && rc == 0)
        rc = pc_raw_writer_close(wr, err, sizeof err);
    TAP_CHECK(rc == 0, "%s %dx%d: wrote 3 sets (version 2)%s%s", fmtname, w, H, rc ? ": " : "", rc ? err : "");
    pc_raw_info info;
    pc_raw_reader *rd = NULL;
    rc = pc_raw_reader_open(&rd, path, &info, err, sizeof err);
    TAP_CHECK(rc == 0 && info.version == 2 && info.fmt.bits == f.bits && info.fmt.packing == f.packing &&
                  info.fmt.cfa == f.cfa && info.n_sets == 3,
              "%s: reader sees version %d, %d bits, packing %d, %llu sets", fmtname, info.version, info.fmt.bits,
              (int)info.fmt.packing, (unsigned long long)info.n_sets);
    if (rc == 0)
        pc_raw_reader_close(rd);
    pc_capture *c = open_file(path, 0, 0, 0, err, sizeof err);
    int sets = 0, same = 0;
    pc_frameset *s;
    while (c && pc_capture_next(c, 2000, &s) == 0) {
        sets++;
        int ok = s->fmt.bits == f.bits && s->fmt.packing == f.packing && s->slab_bytes == sb && !s->stacked;
        for (int i = 0; i < N && ok; i++)
            ok = memcmp(s->slab[i], buf + sb * i, sb) == 0;
        same += ok;
        uint8_t tmp[64];
        same -= pc_frameset_stack(s, tmp, sizeof tmp) != PC_EINVAL; /* not an 8-bit set */
        pc_capture_release(c, s);
    }
    TAP_CHECK(c && sets == 3 && same == 3, "%s: the file source replays %d sets with the format and the bytes (%d ok)%s%s",
              fmtname, sets, same, c ? "" : ": ", c ? "" : err);
    if (c)
        pc_capture_close(c);
    free(buf);
    unlink(path);
}

int main(void)
{
    test_packed("BayerGB12p", W);
    test_packed("BayerRG10p", W + 2);
    test_packed("BayerBG12Packed", W);
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/sets.pcraw", tu_tmpdir());
    TAP_CHECK(write_file(path) == 0, "wrote %d sets of %d x %dx%d with the raw writer", SETS, N, W, H);

    pc_raw_info info;
    pc_raw_reader *rd;
    int rc = pc_raw_reader_open(&rd, path, &info, err, sizeof err);
    TAP_CHECK(rc == 0 && info.width == W && info.height == H && info.n_cameras == N &&
              info.cfa == PC_CFA_GBRG && info.fps == 30.0 && info.n_sets == SETS,
              "reader sees the header: %dx%d x %d, %s, %.3f fps, %llu sets", info.width, info.height,
              info.n_cameras, pc_cfa_name(info.cfa), info.fps, (unsigned long long)info.n_sets);
    if (rc == 0)
        pc_raw_reader_close(rd);

    /* fast replay: every byte, pts, index, flag */
    pc_capture *c = open_file(path, 0, 0, 0, err, sizeof err);
    TAP_CHECK(c != NULL, "file source opens: %s", c ? "ok" : err);
    int got = 0, bytes_ok = 0, meta_ok = 0, stacked_ok = 0;
    uint8_t *stack = malloc((size_t)W * H * N);
    pc_frameset *s;
    while (c && (rc = pc_capture_next(c, 2000, &s)) == 0) {
        int ok = s->n == N && s->width == W && s->height == H && s->cfa == PC_CFA_GBRG;
        for (int k = 0; k < N && ok; k++)
            for (int y = 0; y < H && ok; y++)
                for (int x = 0; x < W && ok; x++)
                    ok = s->slab[k][(size_t)y * s->pitch[k] + x] == pixel(got, k, x, y);
        bytes_ok += ok;
        meta_ok += s->frame_id[0] == (uint64_t)(100 + got * 2) &&
                   s->substituted == (got == 4 ? 0x2u : 0u) && s->index == (uint64_t)got;
        pc_frameset_stack(s, stack, W);
        stacked_ok += s->stacked == s->slab[0] && s->stacked_pitch == W &&
                      memcmp(stack, s->stacked, (size_t)W * H * N) == 0 &&
                      pc_frameset_stack(s, (uint8_t *)s->stacked, W) == 0;
        got++;
        pc_capture_release(c, s);
    }
    TAP_CHECK(rc == PC_CAPTURE_EOF, "replay ends with PC_CAPTURE_EOF (%d)", rc);
    TAP_CHECK(got == SETS && bytes_ok == SETS, "every byte of %d sets replayed (%d identical)", got, bytes_ok);
    TAP_CHECK(meta_ok == SETS, "recorded frame ids and substitution flags come back (%d of %d)", meta_ok, SETS);
    TAP_CHECK(stacked_ok == SETS, "file sets are stacked in place; pc_frameset_stack copies the same bytes");
    pc_capture_close(c);

    /* realtime replay at the file's 30 fps, then at 100 fps */
    for (int pass = 0; pass < 2; pass++) {
        double fps = pass ? 100.0 : 0.0, want = pass ? 100.0 : 30.0;
        c = open_file(path, 1, 0, fps, err, sizeof err);
        int64_t t0 = pc_now_ns(), first = 0, last = 0, lastpts = 0, pts_ok = 1;
        got = 0;
        while (c && pc_capture_next(c, 2000, &s) == 0) {
            if (got == 0)
                first = pc_now_ns();
            last = pc_now_ns();
            if (got > 0 && llabs(s->pts_ns - lastpts - (int64_t)(1e9 / want)) > 1000)
                pts_ok = 0;
            lastpts = s->pts_ns;
            got++;
            pc_capture_release(c, s);
        }
        double span = (last - first) / 1e9, expect = (SETS - 1) / want;
        TAP_CHECK(got == SETS && span > expect * 0.9 && span < expect * 1.3 + 0.05,
                  "realtime replay at %.0f fps: %d sets over %.3f s (expected %.3f s)", want, got, span, expect);
        TAP_CHECK(pts_ok, "pts spaced one period of %.0f fps apart", want);
        (void)t0;
        pc_capture_close(c);
    }

    /* looping: pts keep increasing across the wrap */
    c = open_file(path, 0, 1, 0, err, sizeof err);
    int64_t lastpts = 0;
    int mono = 1, ok_bytes = 1;
    got = 0;
    while (c && got < 3 * SETS && pc_capture_next(c, 2000, &s) == 0) {
        if (got > 0 && s->pts_ns <= lastpts)
            mono = 0;
        lastpts = s->pts_ns;
        ok_bytes &= s->slab[1][5 * W + 7] == pixel(got % SETS, 1, 7, 5);
        got++;
        pc_capture_release(c, s);
    }
    pc_capture_close(c);
    TAP_CHECK(got == 3 * SETS && mono && ok_bytes, "loop: %d sets over three passes, pts increasing, "
              "content restarts", got);

    /* bad files */
    pc_capture_config cfg;
    pc_capture_config_init(&cfg);
    cfg.source = PC_SOURCE_FILE;
    cfg.log = &quiet;
    cfg.n_cameras = 0;
    cfg.file = "/nonexistent/x.pcraw";
    rc = pc_capture_open(&c, &cfg, err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "/nonexistent/x.pcraw"), "missing file: \"%s\"", err);
    char bad[256];
    snprintf(bad, sizeof bad, "%s/bad.pcraw", tu_tmpdir());
    FILE *f = fopen(bad, "wb");
    fputs("PCRAW2 this is not it, padding padding padding", f);
    fclose(f);
    cfg.file = bad;
    rc = pc_capture_open(&c, &cfg, err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, bad) && strstr(err, "magic"), "wrong magic: \"%s\"", err);
    cfg.file = path;
    cfg.n_cameras = 5;
    rc = pc_capture_open(&c, &cfg, err, sizeof err);
    TAP_CHECK(rc < 0 && strstr(err, "3 cameras, the configuration 5"), "camera count mismatch: \"%s\"", err);
    /* truncated last set is ignored */
    cfg.n_cameras = 0;
    f = fopen(path, "r+b");
    if (f) {
        fseek(f, 0, SEEK_END);
        long sz = ftell(f);
        fclose(f);
        if (truncate(path, sz - 1000) != 0)
            tap_diag("truncate failed");
    }
    rc = pc_raw_reader_open(&rd, path, &info, err, sizeof err);
    TAP_CHECK(rc == 0 && info.n_sets == SETS - 1, "a truncated last set is ignored (%llu sets)",
              (unsigned long long)info.n_sets);
    if (rc == 0)
        pc_raw_reader_close(rd);
    unlink(bad);
    unlink(path);
    rmdir(tu_tmpdir());
    free(stack);
    return tap_done();
}
