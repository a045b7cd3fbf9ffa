/* test_pipeline_steps.c - the stage thread's list of steps
 * (daemon/pipeline_step.h, pipeline_steps.c) with the real colour and
 * debayer steps on the real CPU backend, followed by a small geometry
 * step of this test's own: it asks for the debayer's picture as RGB24,
 * lays the stacked cameras side by side (a picture of another size, as a
 * panorama is) and writes the slot's picture in the encoders' NV12.
 *
 * Checked: the negotiation (the debayer writes RGB24 of the stacked
 * cameras into an intermediate picture per slot, allocated once at start;
 * the geometry step's picture sizes the slots), the order and the hand-
 * off per set (steps before the slot run without one; a reader after the
 * last writer reads the slot's picture), every set's picture equal to the
 * C reference demosaic of its raw set -> side by side -> YUV, a reload of
 * the colour settings applied from the very next set (no set dropped),
 * what a reload's op says logged, and the refusals: a reader with no
 * writer before it, a format the encoders do not take, a step that is not
 * needed left out (and closed). */
#include "pipeline_int.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCAM 3
#define CAM_W 64
#define CAM_H 32
#define NSLOTS 2
#define NSETS 6

/* ---------------------------------------------- this test's own steps */

typedef struct counts {
    int before_slot, geometry, reader, closed, allocs;
    int bad;           /* a run saw a wrong slot / picture */
    char why[256];
} counts;

static counts cnt;

static void bad(const char *what)
{
    if (!cnt.bad++)
        snprintf(cnt.why, sizeof cnt.why, "%s", what);
}

/* Runs before the slot (reads only the frame set). */
static int early_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    *priv = &cnt;
    return 0;
}

static int early_run(void *priv, pl_set *set)
{
    cnt.before_slot++;
    if (set->slot != -1 || set->picture || set->in || set->out)
        bad("early: ran with a slot or a picture");
    return 0;
}

static int early_reload(void *priv, const pc_settings *s, unsigned live, char *msg, size_t msglen)
{
    if (!(live & PC_LIVE_OUTPUTS))
        return PL_RELOAD_NONE;
    snprintf(msg, msglen, "early: outputs changed, restart to apply");
    return PL_RELOAD_RESTART;
}

static const pl_step_ops early_step = {
    .name = "early", .prepare = early_prepare, .run = early_run, .reload = early_reload};

/* The cameras side by side: RGB24 W x (n*H) in, n*W x H in the slot's
 * format out. */
typedef struct side_by_side {
    int w, h, n;
    uint8_t *rgb; /* n*w x h RGB24, allocated at prepare */
} side_by_side;

static int sbs_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    if (io->in.width != env->width || io->in.height != env->height) {
        snprintf(err, errlen, "side-by-side: reads %dx%d, wants the stacked %dx%d", io->in.width, io->in.height,
                 env->width, env->height);
        return -1;
    }
    side_by_side *g = calloc(1, sizeof *g);
    if (!g)
        return -1;
    *priv = g;
    g->w = env->width;
    g->h = env->slab_h;
    g->n = env->ncam;
    g->rgb = malloc((size_t)g->n * g->w * 3 * g->h);
    io->in.fmt = PC_FMT_RGB24;                            /* the debayer's picture, as RGB */
    io->out = (pl_pic_desc){g->n * g->w, g->h, PL_FMT_ANY}; /* the slot's, another size */
    return g->rgb ? 0 : -1;
}

static int sbs_start(void *priv, const pl_step_env *env, const pl_step_io *io, char *err, size_t errlen)
{
    if (io->in.fmt != PC_FMT_RGB24 || io->out.fmt != PC_FMT_NV12) {
        snprintf(err, errlen, "side-by-side: started with %d -> %d", io->in.fmt, io->out.fmt);
        return -1;
    }
    return 0;
}

/* stacked RGB (w x n*h) -> side by side (n*w x h) */
static void lay_side_by_side(const uint8_t *src, size_t pitch, int w, int h, int n, uint8_t *dst)
{
    size_t dp = (size_t)n * w * 3;
    for (int k = 0; k < n; k++)
        for (int y = 0; y < h; y++)
            memcpy(dst + y * dp + (size_t)k * w * 3, src + ((size_t)k * h + y) * pitch, (size_t)w * 3);
}

static int sbs_run(void *priv, pl_set *set)
{
    side_by_side *g = priv;
    cnt.geometry++;
    const pc_picture *in = set->in;
    if (!in || in->fmt != PC_FMT_RGB24 || in->width != g->w || in->height != g->n * g->h || in == set->picture ||
        set->out != set->picture)
        bad("side-by-side: not handed the debayer's RGB picture, or not writing the slot's");
    if (!in || !set->out)
        return 0;
    lay_side_by_side(in->plane[0], in->pitch[0], g->w, g->h, g->n, g->rgb);
    char e[256];
    if (pc_rgb_to_yuv(g->rgb, (size_t)g->n * g->w * 3, set->out, e, sizeof e)) {
        snprintf(set->err, set->errlen, "side-by-side: %s", e);
        return -1;
    }
    return 0;
}

static void sbs_describe(void *priv, char *buf, size_t len)
{
    side_by_side *g = priv;
    snprintf(buf, len, "%d cameras side by side", g->n);
}

static void sbs_close(void *priv)
{
    side_by_side *g = priv;
    if (g)
        free(g->rgb);
    free(g);
    cnt.closed++;
}

static const pl_step_ops sbs_step = {.name = "side-by-side", .flags = PL_STEP_READS | PL_STEP_WRITES,
                                     .prepare = sbs_prepare, .start = sbs_start, .run = sbs_run,
                                     .describe = sbs_describe, .close = sbs_close};

/* Reads the slot's picture after the last writer (a thumbnail, say). */
static int reader_run(void *priv, pl_set *set)
{
    cnt.reader++;
    if (!set->in || set->in != set->picture || set->out)
        bad("reader: not handed the slot's picture");
    return 0;
}

static const pl_step_ops reader_step = {.name = "reader", .flags = PL_STEP_READS, .run = reader_run};

/* A reader that wants RGB24 of the slot's picture. */
static int rgb_reader_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    io->in.fmt = PC_FMT_RGB24;
    return 0;
}

static const pl_step_ops rgb_reader_step = {.name = "rgb-reader", .flags = PL_STEP_READS,
                                            .prepare = rgb_reader_prepare, .run = reader_run};

/* Not needed with these settings: left out, its state closed. */
static int absent_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    *priv = malloc(16);
    return PL_STEP_ABSENT;
}

static void absent_close(void *priv)
{
    free(priv);
    cnt.closed++;
}

static const pl_step_ops absent_step = {.name = "absent", .prepare = absent_prepare, .run = early_run,
                                        .close = absent_close};

/* ------------------------------------------------------------ harness */

static int pic_alloc(void *user, const pl_pic_desc *d, pc_picture *out, char *err, size_t errlen)
{
    pc_backend *be = user;
    cnt.allocs++;
    if (d->width != CAM_W || d->height != NCAM * CAM_H) {
        snprintf(err, errlen, "intermediate picture %dx%d, not the stacked cameras'", d->width, d->height);
        return -1;
    }
    return pc_backend_picture_alloc(be, (pc_pixfmt)d->fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, d->width, d->height, out,
                                    err, errlen);
}

static void pic_free(void *user, pc_picture *pic) { pc_backend_picture_free(user, pic); }

static char logged[4096];

static void log_sink(void *user, int level, const char *line)
{
    size_t l = strlen(logged);
    snprintf(logged + l, sizeof logged - l, "<%d>%s\n", level, line);
}

/* One set's raw slabs, random. */
typedef struct raw_set {
    uint8_t slab[NCAM][CAM_W * CAM_H];
    pc_frameset fs;
} raw_set;

static void make_set(raw_set *r, uint64_t index, unsigned *seed)
{
    memset(&r->fs, 0, sizeof r->fs);
    r->fs.index = index;
    r->fs.n = NCAM;
    r->fs.width = CAM_W;
    r->fs.height = CAM_H;
    r->fs.cfa = PC_CFA_RGGB;
    r->fs.fmt = (pc_rawfmt){8, PC_PACK_8, PC_CFA_RGGB};
    r->fs.slab_bytes = CAM_W * CAM_H;
    for (int k = 0; k < NCAM; k++) {
        for (int i = 0; i < CAM_W * CAM_H; i++)
            r->slab[k][i] = (uint8_t)((*seed = *seed * 1103515245u + 12345u) >> 23);
        r->fs.slab[k] = r->slab[k];
        r->fs.pitch[k] = CAM_W;
        r->fs.camera[k] = k;
    }
}

/* What the slot's picture must hold: the reference demosaic of the raw
 * set (through the colour step's tables when it gave them), side by side,
 * to YUV. */
static int expected(const raw_set *r, const pl_set_colour *c, pc_algo_id algo, const pc_picture *like,
                    pc_picture *out, char *err, size_t errlen)
{
    static uint8_t bayer[CAM_W * NCAM * CAM_H], rgb[CAM_W * 3 * NCAM * CAM_H], sbs[CAM_W * 3 * NCAM * CAM_H];
    for (int k = 0; k < NCAM; k++) {
        uint8_t *dst = bayer + (size_t)k * CAM_W * CAM_H;
        if (c)
            pc_colour_slab(c->fmt, &c->tables[k], r->slab[k], CAM_W, CAM_W, CAM_H, dst, CAM_W);
        else
            memcpy(dst, r->slab[k], CAM_W * CAM_H);
    }
    pc_bayer b = {bayer, CAM_W, CAM_W, NCAM * CAM_H, PC_CFA_RGGB};
    pc_picture rp = {.fmt = PC_FMT_RGB24, .plane = {rgb}, .pitch = {CAM_W * 3}, .width = CAM_W,
                     .height = NCAM * CAM_H};
    if (pc_ref_debayer(algo, &b, &rp, err, errlen))
        return -1;
    lay_side_by_side(rgb, CAM_W * 3, CAM_W, CAM_H, NCAM, sbs);
    *out = *like;
    return pc_rgb_to_yuv(sbs, (size_t)NCAM * CAM_W * 3, out, err, errlen);
}

static int same_picture(const pc_picture *a, const pc_picture *b)
{
    for (int pl = 0; pl < 2; pl++) {
        int rows = pl ? a->height / 2 : a->height;
        for (int y = 0; y < rows; y++)
            if (memcmp(a->plane[pl] + y * a->pitch[pl], b->plane[pl] + y * b->pitch[pl], (size_t)a->width))
                return 0;
    }
    return 1;
}

int main(void)
{
    char err[512];
    pc_settings *s = malloc(sizeof *s), *s2 = malloc(sizeof *s2);
    pc_settings_defaults(s);
    pc_logger log = {log_sink, NULL, PC_LOG_DEBUG};
    pc_backend *be = NULL;
    pc_backend_config bc = {.width = CAM_W, .height = NCAM * CAM_H, .slots = NSLOTS, .device = 0, .threads = 1};
    if (pc_backend_open(&be, &pc_backend_cpu, &bc, err, sizeof err)) {
        TAP_CHECK(0, "CPU backend: %s", err);
        return tap_done();
    }
    pl_step_env env = {.s = s, .log = &log, .be = be, .width = CAM_W, .height = NCAM * CAM_H, .slab_h = CAM_H,
                       .ncam = NCAM, .cfa = PC_CFA_RGGB, .rawfmt = {8, PC_PACK_8, PC_CFA_RGGB}, .fps = 50,
                       .nslots = NSLOTS};
    pl_pic_alloc alloc = {pic_alloc, pic_free, be};
    const char *failed = "";

    /* ---- the refusals ---- */
    static pl_steps l;
    const pl_step_ops *lonely[] = {&reader_step};
    int rc = pl_steps_prepare(&l, lonely, 1, &env, &failed, err, sizeof err);
    TAP_CHECK(rc < 0 && !strcmp(failed, "reader") && strstr(err, "no step before it writes one"),
              "a reader with no writer before it is refused: %s: %s", failed, err);
    const pl_step_ops *rgbfinal[] = {&pl_step_colour, &pl_step_debayer, &rgb_reader_step};
    rc = pl_steps_prepare(&l, rgbfinal, 3, &env, &failed, err, sizeof err);
    if (!rc)
        rc = pl_steps_start(&l, &env, PC_FMT_NV12, NSLOTS, &alloc, &failed, err, sizeof err);
    TAP_CHECK(rc < 0 && !strcmp(failed, "debayer") && strstr(err, "rgb-reader") && strstr(err, "nv12"),
              "a reader asking RGB24 of the encoders' NV12 picture is refused: %s: %s", failed, err);
    pl_steps_close(&l);

    /* ---- the list: early, colour, absent, debayer (RGB24), side by side, reader ---- */
    const pl_step_ops *list[] = {&early_step, &pl_step_colour, &absent_step, &pl_step_debayer, &sbs_step, &reader_step};
    memset(&cnt, 0, sizeof cnt);
    rc = pl_steps_prepare(&l, list, 6, &env, &failed, err, sizeof err);
    TAP_CHECK(rc == 0, "prepare: %s", rc ? err : "ok");
    if (rc)
        return tap_done();
    TAP_CHECK(l.n == 5 && cnt.closed == 1, "the absent step is left out and closed (%d steps, %d closed)", l.n,
              cnt.closed);
    TAP_CHECK(l.first_slot == 2 && l.last_writer == 3, "slot from the debayer on (step %d), the last writer is "
              "side-by-side (step %d)", l.first_slot, l.last_writer);
    TAP_CHECK(l.out.width == NCAM * CAM_W && l.out.height == CAM_H,
              "the slots' picture is the geometry step's %dx%d (stacked cameras: %dx%d)", l.out.width, l.out.height,
              CAM_W, NCAM * CAM_H);
    rc = pl_steps_start(&l, &env, PC_FMT_NV12, NSLOTS, &alloc, &failed, err, sizeof err);
    TAP_CHECK(rc == 0, "start: %s%s%s", failed, rc ? ": " : "", rc ? err : "ok");
    if (rc)
        return tap_done();
    pl_step *deb = &l.step[2];
    TAP_CHECK(deb->has_mid && deb->io.out.fmt == PC_FMT_RGB24 && cnt.allocs == NSLOTS,
              "the debayer writes RGB24 into its own picture per slot (%d allocated)", cnt.allocs);
    char desc[1024];
    pl_steps_describe(&l, desc, sizeof desc);
    TAP_CHECK(strstr(desc, "early -> colour (off: BayerRG8 as captured) -> debayer (edge, cpu backend, rgb24 64x96)"
                     " -> side-by-side (3 cameras side by side) -> reader") != NULL,
              "describe: %s", desc);

    /* the slots' pictures: the size the list ends with, the encoders' NV12 */
    pc_picture slot_pic[NSLOTS];
    for (int k = 0; k < NSLOTS; k++)
        if (pc_backend_host_picture_alloc(&pc_backend_cpu, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, l.out.width,
                                          l.out.height, &slot_pic[k], err, sizeof err)) {
            TAP_CHECK(0, "slot picture: %s", err);
            return tap_done();
        }
    uint8_t *mid0[NSLOTS];
    for (int k = 0; k < NSLOTS; k++)
        mid0[k] = deb->mid[k].plane[0];

    /* ---- sets down the list, as the stage loop takes them ---- */
    static raw_set r;
    unsigned seed = 19;
    int good = 0, coloured = 0, changed = 0, sets = 0;
    for (int i = 0; i < 2 * NSETS; i++) {
        if (i == NSETS) { /* a reload between two sets: white-balance gains */
            *s2 = *s;
            snprintf(s2->capture.camera.wb_gains, sizeof s2->capture.camera.wb_gains, "1.5, 1, 0.75");
            for (int c = 0; c < PC_MAX_CAMERAS; c++)
                snprintf(s2->cameras[c].wb_gains, sizeof s2->cameras[c].wb_gains, "1.5, 1, 0.75");
            logged[0] = '\0';
            pl_steps_reload(&l, s2, PC_LIVE_COLOUR | PC_LIVE_OUTPUTS, &log);
        }
        make_set(&r, (uint64_t)i, &seed);
        int k = i % NSLOTS;
        pl_set ps = {.frames = &r.fs, .slot = -1, .err = err, .errlen = sizeof err};
        rc = pl_steps_run(&l, 0, l.first_slot, &ps);
        ps.slot = k;
        ps.picture = &slot_pic[k];
        if (!rc)
            rc = pl_steps_run(&l, l.first_slot, l.n, &ps);
        if (!rc)
            rc = pc_backend_wait(be, k, err, sizeof err);
        if (rc) {
            TAP_CHECK(0, "set %d: %s", i, err);
            break;
        }
        sets++;
        pc_picture want;
        char e[256];
        static uint8_t wmem[NCAM * CAM_W * CAM_H * 2];
        pc_picture_layout(&want, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, NCAM * CAM_W, CAM_H, 64, wmem);
        if (expected(&r, ps.colour, PC_ALGO_EDGE, &want, &want, e, sizeof e) == 0 && same_picture(&want, &slot_pic[k]))
            good++;
        if (i >= NSETS) {
            coloured += ps.colour != NULL;
            pc_picture plain = want;
            static uint8_t pmem[NCAM * CAM_W * CAM_H * 2];
            pc_picture_layout(&plain, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, NCAM * CAM_W, CAM_H, 64, pmem);
            if (expected(&r, NULL, PC_ALGO_EDGE, &plain, &plain, e, sizeof e) == 0 && !same_picture(&plain, &slot_pic[k]))
                changed++;
        }
    }
    TAP_CHECK(sets == 2 * NSETS && good == sets,
              "%d of %d sets: the slot's %dx%d NV12 picture = reference demosaic -> side by side -> YUV", good, sets,
              NCAM * CAM_W, CAM_H);
    TAP_CHECK(cnt.before_slot == sets && cnt.geometry == sets && cnt.reader == sets && !cnt.bad,
              "every step ran once per set, in order, with its pictures (early %d, geometry %d, reader %d)%s%s",
              cnt.before_slot, cnt.geometry, cnt.reader, cnt.bad ? ": " : "", cnt.why);
    int same_mid = 1;
    for (int k = 0; k < NSLOTS; k++)
        same_mid &= deb->mid[k].plane[0] == mid0[k];
    TAP_CHECK(same_mid && cnt.allocs == NSLOTS, "no picture allocated per set (%d allocations for %d slots)",
              cnt.allocs, NSLOTS);
    TAP_CHECK(coloured == NSETS && changed == NSETS,
              "the colour reload applies from the very next set: %d of %d sets through the new tables, %d differ "
              "from the plain demosaic", coloured, NSETS, changed);
    TAP_CHECK(strstr(logged, "<5>reload: colour settings applied from the next frame set\n") &&
                  strstr(logged, "<4>reload: early: outputs changed, restart to apply\n"),
              "reload: each step's word logged:\n%s", logged);

    /* ---- teardown ---- */
    cnt.closed = 0;
    pl_steps_close(&l);
    TAP_CHECK(cnt.closed == 1 && l.n == 0, "close: every step closed, the intermediate pictures freed");
    for (int k = 0; k < NSLOTS; k++)
        pc_backend_host_picture_free(&pc_backend_cpu, &slot_pic[k]);
    pc_backend_close(be);
    free(s);
    free(s2);
    return tap_done();
}
