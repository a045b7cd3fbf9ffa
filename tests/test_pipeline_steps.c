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
 * needed left out (and closed).
 *
 * Several pictures per set (the panorama and virtual cameras): a "views"
 * step writes three pictures of different sizes and names, each in the
 * format of its own encoders (NV12, I420, NV12): the panorama (the cameras
 * side by side), a crop of camera 1 and a solid colour per set; every
 * slot's pictures equal their references. An earlier writer of two
 * pictures ("split") gets intermediate pictures for both, allocated once;
 * the reader after it reads its first. Refused: a picture without a size,
 * two pictures of one name, more than PL_MAX_PICTURES, a picture in a
 * format its encoders do not take. */
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
    if (set->slot != -1 || set->npictures || set->picture[0] || set->in || set->out[0])
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
    io->in.fmt = PC_FMT_RGB24; /* the debayer's picture, as RGB */
    io->nout = 1;              /* the slot's, another size */
    io->out[0] = (pl_pic_desc){g->n * g->w, g->h, PL_FMT_ANY, "panorama"};
    return g->rgb ? 0 : -1;
}

static int sbs_start(void *priv, const pl_step_env *env, const pl_step_io *io, char *err, size_t errlen)
{
    if (io->in.fmt != PC_FMT_RGB24 || io->out[0].fmt != PC_FMT_NV12) {
        snprintf(err, errlen, "side-by-side: started with %d -> %d", io->in.fmt, io->out[0].fmt);
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
    if (!in || in->fmt != PC_FMT_RGB24 || in->width != g->w || in->height != g->n * g->h ||
        in == set->picture[0] || set->nout != 1 || set->out[0] != set->picture[0] || set->out[1])
        bad("side-by-side: not handed the debayer's RGB picture, or not writing the slot's");
    if (!in || !set->out[0])
        return 0;
    lay_side_by_side(in->plane[0], in->pitch[0], g->w, g->h, g->n, g->rgb);
    char e[256];
    if (pc_rgb_to_yuv(g->rgb, (size_t)g->n * g->w * 3, set->out[0], e, sizeof e)) {
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
    if (!set->in || set->in != set->picture[0] || set->out[0] || set->nout)
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

/* The reference demosaic of the last set expected() made: RGB24 of the
 * stacked cameras, CAM_W * 3 bytes a row. */
static uint8_t ref_rgb[CAM_W * 3 * NCAM * CAM_H];

/* What the slot's picture must hold: the reference demosaic of the raw
 * set (through the colour step's tables when it gave them), side by side,
 * to YUV. */
static int expected(const raw_set *r, const pl_set_colour *c, pc_algo_id algo, const pc_picture *like,
                    pc_picture *out, char *err, size_t errlen)
{
    static uint8_t bayer[CAM_W * NCAM * CAM_H], sbs[CAM_W * 3 * NCAM * CAM_H];
    uint8_t *rgb = ref_rgb;
    for (int k = 0; k < NCAM; k++) {
        uint8_t *dst = bayer + (size_t)k * CAM_W * CAM_H;
        if (c)
            pc_colour_slab(c->fmt, &c->tables[k], r->slab[k], CAM_W, CAM_W, CAM_H, dst, CAM_W);
        else
            memcpy(dst, r->slab[k], CAM_W * CAM_H);
    }
    pc_bayer b = {bayer, CAM_W, CAM_W, NCAM * CAM_H, PC_CFA_RGGB, 0};
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

/* NV12 or I420 pictures of one size: the same samples. */
static int same_yuv(const pc_picture *a, const pc_picture *b)
{
    if (a->fmt != b->fmt || a->width != b->width || a->height != b->height)
        return 0;
    for (int pl = 0; pl < pc_pixfmt_planes(a->fmt); pl++) {
        size_t bytes;
        int rows;
        pc_picture_plane_size(a->fmt, a->width, a->height, pl, NULL, &rows, &bytes);
        for (int y = 0; y < rows; y++)
            if (memcmp(a->plane[pl] + y * a->pitch[pl], b->plane[pl] + y * b->pitch[pl], bytes))
                return 0;
    }
    return 1;
}

/* ------------------------------------------------ several pictures */

#define VA_W (CAM_W / 2) /* vcam:a: the top-left quarter of camera 1 */
#define VA_H (CAM_H / 2)
#define VB_W 48 /* vcam:b: a solid colour of the set's index */
#define VB_H 24

static void solid(uint64_t index, uint8_t *rgb)
{
    for (int i = 0; i < VB_W * VB_H; i++) {
        rgb[3 * i] = (uint8_t)(40 + 20 * index);
        rgb[3 * i + 1] = (uint8_t)(200 - 10 * index);
        rgb[3 * i + 2] = 128;
    }
}

typedef struct views {
    int w, h, n;
    int fmt[3];        /* as start saw them */
    int runs, bad;
    uint8_t *sbs;      /* the cameras side by side, RGB24 */
    uint8_t vb[VB_W * VB_H * 3];
} views;

static views vw;

static int views_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    memset(&vw, 0, sizeof vw);
    vw.w = env->width;
    vw.h = env->slab_h;
    vw.n = env->ncam;
    vw.sbs = malloc((size_t)vw.n * vw.w * 3 * vw.h);
    *priv = &vw;
    io->in.fmt = PC_FMT_RGB24;
    io->nout = 3;
    io->out[0] = (pl_pic_desc){vw.n * vw.w, vw.h, PL_FMT_ANY, "panorama"};
    io->out[1] = (pl_pic_desc){VA_W, VA_H, PL_FMT_ANY, "vcam:a"};
    io->out[2] = (pl_pic_desc){VB_W, VB_H, PL_FMT_ANY, "vcam:b"};
    return vw.sbs ? 0 : -1;
}

static int views_start(void *priv, const pl_step_env *env, const pl_step_io *io, char *err, size_t errlen)
{
    for (int i = 0; i < 3; i++)
        vw.fmt[i] = io->out[i].fmt;
    return 0;
}

static int views_run(void *priv, pl_set *set)
{
    vw.runs++;
    const pc_picture *in = set->in;
    int ok = in && in->fmt == PC_FMT_RGB24 && set->nout == 3 && !set->out[3];
    for (int i = 0; i < 3 && ok; i++)
        ok = set->out[i] == set->picture[i] && (int)set->out[i]->fmt == vw.fmt[i];
    if (!ok) {
        vw.bad++;
        return 0;
    }
    char e[256];
    lay_side_by_side(in->plane[0], in->pitch[0], vw.w, vw.h, vw.n, vw.sbs);
    solid(set->frames->index, vw.vb);
    const uint8_t *crop = in->plane[0] + (size_t)vw.h * in->pitch[0]; /* camera 1, top left */
    if (pc_rgb_to_yuv(vw.sbs, (size_t)vw.n * vw.w * 3, set->out[0], e, sizeof e) ||
        pc_rgb_to_yuv(crop, in->pitch[0], set->out[1], e, sizeof e) ||
        pc_rgb_to_yuv(vw.vb, VB_W * 3, set->out[2], e, sizeof e)) {
        snprintf(set->err, set->errlen, "views: %s", e);
        return -1;
    }
    return 0;
}

static void views_close(void *priv) { free(vw.sbs); }

static const pl_step_ops views_step = {.name = "views", .flags = PL_STEP_READS | PL_STEP_WRITES,
                                       .prepare = views_prepare, .start = views_start, .run = views_run,
                                       .close = views_close};

/* An earlier writer of two pictures: its first is the debayer's RGB24
 * copied (read by views), its second a grey picture nobody reads. */
static int split_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    io->in.fmt = PC_FMT_RGB24;
    io->nout = 2;
    io->out[0] = (pl_pic_desc){env->width, env->height, PL_FMT_ANY, ""};
    io->out[1] = (pl_pic_desc){16, 8, PL_FMT_ANY, ""};
    return 0;
}

static int split_runs, split_bad;

static int split_run(void *priv, pl_set *set)
{
    split_runs++;
    const pc_picture *in = set->in;
    pc_picture *o = set->out[0];
    if (set->nout != 2 || !o || !set->out[1] || o == set->picture[0] || o->fmt != PC_FMT_RGB24) {
        split_bad++;
        return 0;
    }
    for (int y = 0; y < in->height; y++)
        memcpy(o->plane[0] + y * o->pitch[0], in->plane[0] + y * in->pitch[0], (size_t)in->width * 3);
    return 0;
}

static const pl_step_ops split_step = {.name = "split", .flags = PL_STEP_READS | PL_STEP_WRITES,
                                       .prepare = split_prepare, .run = split_run};

/* Writers that declare what cannot be. */
static int bad_kind;
static int bad_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    io->nout = bad_kind == 2 ? PL_MAX_PICTURES + 1 : 2;
    io->out[0] = (pl_pic_desc){64, 32, PL_FMT_ANY, "panorama"};
    io->out[1] = (pl_pic_desc){bad_kind == 0 ? 0 : 32, 16, bad_kind == 3 ? PC_FMT_RGB24 : PL_FMT_ANY, ""};
    snprintf(io->out[1].name, sizeof io->out[1].name, "%s", bad_kind == 1 ? "panorama" : "vcam:x");
    return 0;
}

static const pl_step_ops bad_step = {.name = "bad", .flags = PL_STEP_WRITES, .prepare = bad_prepare,
                                     .run = early_run};

static void multi_pictures(pl_step_env *env, const pl_pic_alloc *alloc, pc_backend *be)
{
    char err[512] = "";
    const char *failed = "";
    static pl_steps l;
    char too_many[64] = "";
    snprintf(too_many, sizeof too_many, "declared %d pictures (1..%d", PL_MAX_PICTURES + 1, PL_MAX_PICTURES);
    const char *const want_bad[] = {"declared the size of its picture 1 (vcam:x) as 0x16",
                                    "two pictures named \"panorama\"", too_many,
                                    "writes its picture vcam:x in rgb24 only, but that picture's encoders "
                                    "take nv12"};
    const int nv12[PL_MAX_PICTURES] = {PC_FMT_NV12, PC_FMT_NV12, PC_FMT_NV12};
    for (bad_kind = 0; bad_kind < 4; bad_kind++) {
        const pl_step_ops *list[] = {&bad_step};
        int rc = pl_steps_prepare(&l, list, 1, env, &failed, err, sizeof err);
        if (!rc)
            rc = pl_steps_start(&l, env, nv12, NSLOTS, alloc, &failed, err, sizeof err);
        TAP_CHECK(rc < 0 && !strcmp(failed, "bad") && strstr(err, want_bad[bad_kind]), "refused: %s", err);
        pl_steps_close(&l);
    }

    /* colour, debayer (RGB24), split (2 intermediate pictures), views (the slot's 3) */
    const pl_step_ops *list[] = {&pl_step_colour, &pl_step_debayer, &split_step, &views_step, &reader_step};
    memset(&cnt, 0, sizeof cnt);
    int rc = pl_steps_prepare(&l, list, 5, env, &failed, err, sizeof err);
    TAP_CHECK(rc == 0 && l.nout == 3 && l.last_writer == 3 && !strcmp(l.out[0].name, "panorama") &&
                  !strcmp(l.out[1].name, "vcam:a") && !strcmp(l.out[2].name, "vcam:b") &&
                  l.out[1].width == VA_W && l.out[2].height == VB_H && !strcmp(l.step[2].io.out[0].name, "split:0") &&
                  !strcmp(l.step[2].io.out[1].name, "split:1"),
              "views declares 3 pictures: %s %dx%d, %s %dx%d, %s %dx%d (split's unnamed ones: %s, %s)%s%s",
              l.out[0].name, l.out[0].width, l.out[0].height, l.out[1].name, l.out[1].width, l.out[1].height,
              l.out[2].name, l.out[2].width, l.out[2].height, l.step[2].io.out[0].name, l.step[2].io.out[1].name,
              rc ? ": " : "", rc ? err : "");
    if (rc)
        return;
    const int fmts[PL_MAX_PICTURES] = {PC_FMT_NV12, PC_FMT_I420, PC_FMT_NV12};
    rc = pl_steps_start(&l, env, fmts, NSLOTS, alloc, &failed, err, sizeof err);
    pl_step *sp = &l.step[2];
    TAP_CHECK(rc == 0 && vw.fmt[0] == PC_FMT_NV12 && vw.fmt[1] == PC_FMT_I420 && vw.fmt[2] == PC_FMT_NV12 &&
                  l.out[1].fmt == PC_FMT_I420 && sp->has_mid && sp->io.out[0].fmt == PC_FMT_RGB24 &&
                  sp->mid[1][NSLOTS - 1].width == 16 && l.step[1].has_mid && cnt.allocs == 3 * NSLOTS,
              "each picture in its encoders' format (nv12, i420, nv12); split's two pictures and the debayer's "
              "allocated once per slot (%d allocations)%s%s", cnt.allocs, rc ? ": " : "", rc ? err : "");
    if (rc) {
        pl_steps_close(&l);
        return;
    }
    pc_picture slot_pic[3][NSLOTS];
    memset(slot_pic, 0, sizeof slot_pic);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < NSLOTS && !rc; k++)
            rc = pc_backend_host_picture_alloc(&pc_backend_cpu, (pc_pixfmt)fmts[i], PC_MATRIX_BT709,
                                               PC_RANGE_LIMITED, l.out[i].width, l.out[i].height, &slot_pic[i][k],
                                               err, sizeof err);
    static raw_set r;
    unsigned seed = 20;
    int good[3] = {0, 0, 0}, sets = 0;
    for (int i = 0; i < NSETS && !rc; i++) {
        make_set(&r, (uint64_t)i, &seed);
        int k = i % NSLOTS;
        pl_set ps = {.frames = &r.fs, .slot = -1, .err = err, .errlen = sizeof err};
        rc = pl_steps_run(&l, 0, l.first_slot, &ps);
        ps.slot = k;
        ps.npictures = 3;
        for (int j = 0; j < 3; j++)
            ps.picture[j] = &slot_pic[j][k];
        rc = rc ? rc : pl_steps_run(&l, l.first_slot, l.n, &ps);
        rc = rc ? rc : pc_backend_wait(be, k, err, sizeof err);
        if (rc)
            break;
        sets++;
        /* the references: the panorama as before, the crop and the colour */
        static uint8_t m0[NCAM * CAM_W * CAM_H * 2], m1[VA_W * VA_H * 2], m2[VB_W * VB_H * 2], vb[VB_W * VB_H * 3];
        pc_picture w0, w1, w2;
        char e[256];
        pc_picture_layout(&w0, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, NCAM * CAM_W, CAM_H, 1, m0);
        pc_picture_layout(&w1, PC_FMT_I420, PC_MATRIX_BT709, PC_RANGE_LIMITED, VA_W, VA_H, 1, m1);
        pc_picture_layout(&w2, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, VB_W, VB_H, 1, m2);
        solid((uint64_t)i, vb);
        good[0] += expected(&r, ps.colour, PC_ALGO_EDGE, &w0, &w0, e, sizeof e) == 0 && same_yuv(&w0, &slot_pic[0][k]);
        good[1] += pc_rgb_to_yuv(ref_rgb + (size_t)CAM_H * CAM_W * 3, CAM_W * 3, &w1, e, sizeof e) == 0 &&
                   same_yuv(&w1, &slot_pic[1][k]);
        good[2] += pc_rgb_to_yuv(vb, VB_W * 3, &w2, e, sizeof e) == 0 && same_yuv(&w2, &slot_pic[2][k]);
    }
    TAP_CHECK(rc == 0 && sets == NSETS && vw.runs == NSETS && !vw.bad && split_runs == NSETS && !split_bad &&
                  cnt.reader == NSETS && !cnt.bad,
              "%d sets: views wrote the slot's 3 pictures, split its 2, the reader read views' first (views %d "
              "bad, split %d bad)%s%s", sets, vw.bad, split_bad, rc ? ": " : "", rc ? err : "");
    TAP_CHECK(good[0] == NSETS && good[1] == NSETS && good[2] == NSETS,
              "every set's pictures = their references: panorama %d, vcam:a (i420 crop) %d, vcam:b (solid) %d of %d",
              good[0], good[1], good[2], NSETS);
    TAP_CHECK(cnt.allocs == 3 * NSLOTS, "no picture allocated per set (%d allocations)", cnt.allocs);
    pl_steps_close(&l);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < NSLOTS; k++)
            pc_backend_host_picture_free(&pc_backend_cpu, &slot_pic[i][k]);
}

int main(void)
{
    char err[512] = "";
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
    const int nv12[PL_MAX_PICTURES] = {PC_FMT_NV12, PC_FMT_NV12, PC_FMT_NV12};
    if (!rc)
        rc = pl_steps_start(&l, &env, nv12, NSLOTS, &alloc, &failed, err, sizeof err);
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
    TAP_CHECK(l.nout == 1 && l.out[0].width == NCAM * CAM_W && l.out[0].height == CAM_H &&
                  !strcmp(l.out[0].name, "panorama"),
              "the slots' picture is the geometry step's %dx%d %s (stacked cameras: %dx%d)", l.out[0].width,
              l.out[0].height, l.out[0].name, CAM_W, NCAM * CAM_H);
    rc = pl_steps_start(&l, &env, nv12, NSLOTS, &alloc, &failed, err, sizeof err);
    TAP_CHECK(rc == 0, "start: %s%s%s", failed, rc ? ": " : "", rc ? err : "ok");
    if (rc)
        return tap_done();
    pl_step *deb = &l.step[2];
    TAP_CHECK(deb->has_mid && deb->io.out[0].fmt == PC_FMT_RGB24 && cnt.allocs == NSLOTS,
              "the debayer writes RGB24 into its own picture per slot (%d allocated)", cnt.allocs);
    char desc[1024];
    pl_steps_describe(&l, desc, sizeof desc);
    TAP_CHECK(strstr(desc, "early -> colour (off: BayerRG8 as captured) -> debayer (edge, cpu backend, rgb24 64x96)"
                     " -> side-by-side (3 cameras side by side) -> reader") != NULL,
              "describe: %s", desc);

    /* the slots' pictures: the size the list ends with, the encoders' NV12 */
    pc_picture slot_pic[NSLOTS];
    for (int k = 0; k < NSLOTS; k++)
        if (pc_backend_host_picture_alloc(&pc_backend_cpu, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED,
                                          l.out[0].width, l.out[0].height, &slot_pic[k], err, sizeof err)) {
            TAP_CHECK(0, "slot picture: %s", err);
            return tap_done();
        }
    uint8_t *mid0[NSLOTS];
    for (int k = 0; k < NSLOTS; k++)
        mid0[k] = deb->mid[0][k].plane[0];

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
        ps.npictures = 1;
        ps.picture[0] = &slot_pic[k];
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
        same_mid &= deb->mid[0][k].plane[0] == mid0[k];
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

    /* ---- several pictures per set ---- */
    *s = *s2; /* the colour reload's tables: the references go through them */
    multi_pictures(&env, &alloc, be);
    pc_backend_close(be);
    free(s);
    free(s2);
    return tap_done();
}
