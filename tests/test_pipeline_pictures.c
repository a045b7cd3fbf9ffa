/* test_pipeline_pictures.c - several encoded pictures per frame set, end
 * to end through the daemon's own pipeline (pl_run: the objects panocap
 * links, driven with a list of steps and pictures of this test's own): a
 * raw recording of 3 cameras (160x64, random Bayer) replayed by the file
 * source, the real colour and debayer steps on the CPU backend, then a
 * "views" step that reads the debayer's RGB24 and writes four pictures of
 * their own sizes:
 *   panorama    480x64  the cameras side by side (the top-level outputs,
 *                       libx264 lossless, and the preview at 1/2)
 *   vcam:crop    96x48  camera 1's top-left corner (its own .mkv, libx264
 *                       lossless)
 *   vcam:solid   64x32  a colour per set (its own .ts, libx265: I420, the
 *                       picture made in its encoder's format)
 *   vcam:broken  64x32  an output under a file (no folder can be made)
 * Checked with libavformat/libavcodec: each picture's stream decodes at
 * its size with every set's frame, the panorama and the crop sample for
 * sample equal to the C reference demosaic laid out / cropped and
 * converted, the solid colour within a few codes, one PTS sequence across
 * the pictures; the broken picture logged and counted (summary) while the
 * others run; the summary names each picture's encoder, frames and
 * outputs. Then, the recording replayed in a loop, a reload that gives
 * the broken picture a good output opens its encoder while the pipeline
 * runs: from then on it is written, counted, and the others went on
 * untouched. The same broken output in a picture that is required stops
 * the set-up, naming the picture. And a panorama of the size the
 * rig's is (8600x1300, bigger than the 160x192 frame), alone, with its
 * preview: it decodes at that size, every frame the step's picture sample
 * for sample. The capture pool holds every set (the file source drops
 * none however slow the encoders run). And the daemon's own spec
 * (pl_settings_picture): which settings the main picture, a virtual
 * camera ("vcam:NAME") and the unstitched cameras get. */
#include "daemon_testutil.h"

#include "pipeline_int.h"

#define NCAM 3
#define CAM_W 160
#define CAM_H 64
#define FRAMES 10
#define PANO_W (NCAM * CAM_W)
#define CROP_W 96
#define CROP_H 48
#define SOLID_W 64
#define SOLID_H 32

/* ------------------------------------------------------------ the step */

static void solid_rgb(uint64_t index, uint8_t rgb[3])
{
    rgb[0] = (uint8_t)(30 + 19 * index);
    rgb[1] = (uint8_t)(220 - 13 * index);
    rgb[2] = (uint8_t)(90 + 7 * index);
}

/* The cameras side by side from the stacked RGB24 (pitch sp), n*w x h. */
static void side_by_side(const uint8_t *src, size_t sp, uint8_t *dst)
{
    for (int k = 0; k < NCAM; k++)
        for (int y = 0; y < CAM_H; y++)
            memcpy(dst + (size_t)y * PANO_W * 3 + (size_t)k * CAM_W * 3, src + ((size_t)k * CAM_H + y) * sp,
                   (size_t)CAM_W * 3);
}

typedef struct views {
    uint8_t pano[PANO_W * 3 * CAM_H];
    uint8_t solid[SOLID_W * 3 * SOLID_H];
} views;

static int views_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    if (io->in.width != CAM_W || io->in.height != NCAM * CAM_H) {
        snprintf(err, errlen, "views: reads %dx%d, wants the stacked %dx%d", io->in.width, io->in.height, CAM_W,
                 NCAM * CAM_H);
        return -1;
    }
    views *v = calloc(1, sizeof *v);
    if (!v)
        return -1;
    *priv = v;
    io->in.fmt = PC_FMT_RGB24;
    io->nout = 4;
    io->out[0] = (pl_pic_desc){PANO_W, CAM_H, PL_FMT_ANY, "panorama"};
    io->out[1] = (pl_pic_desc){CROP_W, CROP_H, PL_FMT_ANY, "vcam:crop"};
    io->out[2] = (pl_pic_desc){SOLID_W, SOLID_H, PL_FMT_ANY, "vcam:solid"};
    io->out[3] = (pl_pic_desc){SOLID_W, SOLID_H, PL_FMT_ANY, "vcam:broken"};
    return 0;
}

static int views_run(void *priv, pl_set *set)
{
    views *v = priv;
    const pc_picture *in = set->in;
    char e[256];
    side_by_side(in->plane[0], in->pitch[0], v->pano);
    uint8_t c[3];
    solid_rgb(set->frames->index, c);
    for (int i = 0; i < SOLID_W * SOLID_H; i++)
        memcpy(v->solid + 3 * i, c, 3);
    const uint8_t *crop = in->plane[0] + (size_t)CAM_H * in->pitch[0]; /* camera 1, top left */
    if (pc_rgb_to_yuv(v->pano, PANO_W * 3, set->out[0], e, sizeof e) ||
        pc_rgb_to_yuv(crop, in->pitch[0], set->out[1], e, sizeof e) ||
        pc_rgb_to_yuv(v->solid, SOLID_W * 3, set->out[2], e, sizeof e) ||
        pc_rgb_to_yuv(v->solid, SOLID_W * 3, set->out[3], e, sizeof e)) {
        snprintf(set->err, set->errlen, "views: %s", e);
        return -1;
    }
    return 0;
}

static void views_describe(void *priv, char *buf, size_t len) { snprintf(buf, len, "panorama + 3 views"); }

static const pl_step_ops views_step = {.name = "views", .flags = PL_STEP_READS | PL_STEP_WRITES,
                                       .prepare = views_prepare, .run = views_run, .describe = views_describe,
                                       .close = free};

static const pl_step_ops *const steps[] = {&pl_step_raw_record, &pl_step_colour, &pl_step_debayer, &views_step,
                                           &pl_step_snapshot};

/* One picture of the panorama's size: a gradient that moves with the set. */
#define BIG_W 8600
#define BIG_H 1300
#define BIG_FRAMES 4

static void big_rgb(uint64_t index, uint8_t *rgb)
{
    for (int y = 0; y < BIG_H; y++)
        for (int x = 0; x < BIG_W; x++) {
            uint8_t *px = rgb + ((size_t)y * BIG_W + x) * 3;
            px[0] = (uint8_t)(x / 4 + 9 * index);
            px[1] = (uint8_t)(y / 2);
            px[2] = (uint8_t)((x + y) / 8);
        }
}

static int big_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    *priv = malloc((size_t)BIG_W * BIG_H * 3);
    io->in.fmt = PC_FMT_RGB24;
    io->out[0] = (pl_pic_desc){BIG_W, BIG_H, PL_FMT_ANY, "panorama"};
    return *priv ? 0 : -1;
}

static int big_run(void *priv, pl_set *set)
{
    char e[256];
    big_rgb(set->frames->index, priv);
    if (pc_rgb_to_yuv(priv, BIG_W * 3, set->out[0], e, sizeof e)) {
        snprintf(set->err, set->errlen, "big: %s", e);
        return -1;
    }
    return 0;
}

static const pl_step_ops big_step = {.name = "big", .flags = PL_STEP_READS | PL_STEP_WRITES,
                                     .prepare = big_prepare, .run = big_run, .close = free};
static const pl_step_ops *const big_steps[] = {&pl_step_colour, &pl_step_debayer, &big_step};

/* ------------------------------------------------------- the pictures */

typedef struct pictures {
    char dir[256];
    int x265;          /* libx265 opens here: vcam:solid uses it */
    int crop_required; /* the second run: vcam:crop required, its output broken */
    int big;           /* the third: one 8600x1300 picture */
    atomic_int fixed;  /* vcam:broken's output repaired (a reload while it runs) */
} pictures;

static void one_output(pl_picture_config *c, const char *dir, const char *name)
{
    c->output_count = 1;
    memset(&c->outputs[0], 0, sizeof c->outputs[0]);
    snprintf(c->outputs[0].url, sizeof c->outputs[0].url, "%s/%s", dir, name);
}

/* The pipeline's spec for this test: picture 0 as the settings say, the
 * views by name. */
static int test_picture(void *user, const pc_settings *s, int index, pl_picture_config *c, char *err, size_t errlen)
{
    pictures *t = user;
    if (index == 0)
        return pl_settings_picture(NULL, s, index, c, err, errlen);
    c->encode = s->encode;        /* codec, encoder, options, GOP of the main picture */
    c->encode.preview_scale = 0;  /* the main picture's only */
    c->encode.bitrate = 1000000;
    if (!strcmp(c->name, "vcam:crop")) {
        one_output(c, t->dir, t->crop_required ? "sets.pcraw/crop.mkv" : "crop.mkv");
        c->required = t->crop_required;
    } else if (!strcmp(c->name, "vcam:solid")) {
        one_output(c, t->dir, "solid.ts");
        if (t->x265) {
            snprintf(c->encode.encoder, sizeof c->encode.encoder, "libx265");
            c->encode.options[0] = '\0';
        }
    } else if (!strcmp(c->name, "vcam:broken")) {
        if (atomic_load(&t->fixed))
            one_output(c, t->dir, "fixed.ts");
        else
            one_output(c, t->dir, "sets.pcraw/broken.ts"); /* a file where a folder would be */
    } else {
        snprintf(err, errlen, "no outputs for %s", c->name);
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------- the harness */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char logged[1 << 16];

static int log_has(const char *needle)
{
    pthread_mutex_lock(&log_mu);
    int r = strstr(logged, needle) != NULL;
    pthread_mutex_unlock(&log_mu);
    return r;
}

static void log_sink(void *user, int level, const char *line)
{
    pthread_mutex_lock(&log_mu);
    size_t l = strlen(logged);
    if (l + 1 < sizeof logged)
        snprintf(logged + l, sizeof logged - l, "<%d>%s\n", level, line);
    pthread_mutex_unlock(&log_mu);
}

/* Writes FRAMES sets of random Bayer to path (and keeps them for the
 * references). */
static uint8_t raw[FRAMES][NCAM * CAM_W * CAM_H];

static int write_raw(const char *path, char *err, size_t n)
{
    pc_raw_writer *w = NULL;
    if (pc_raw_writer_open(&w, path, CAM_W, CAM_H, NCAM, PC_CFA_RGGB, 50.0, err, n))
        return -1;
    unsigned seed = 2020;
    int rc = 0;
    for (int f = 0; f < FRAMES && !rc; f++) {
        for (size_t i = 0; i < sizeof raw[f]; i++)
            raw[f][i] = (uint8_t)((seed = seed * 1103515245u + 12345u) >> 23);
        pc_frameset fs;
        memset(&fs, 0, sizeof fs);
        fs.index = (uint64_t)f;
        fs.pts_ns = 1000000000LL + (int64_t)f * 20000000LL;
        fs.t_first_ns = fs.t_complete_ns = fs.pts_ns;
        fs.n = NCAM;
        fs.width = CAM_W;
        fs.height = CAM_H;
        fs.cfa = PC_CFA_RGGB;
        fs.fmt = (pc_rawfmt){8, PC_PACK_8, PC_CFA_RGGB};
        fs.slab_bytes = CAM_W * CAM_H;
        for (int k = 0; k < NCAM; k++) {
            fs.slab[k] = raw[f] + (size_t)k * CAM_W * CAM_H;
            fs.pitch[k] = CAM_W;
            fs.camera[k] = k;
        }
        rc = pc_raw_writer_write(w, &fs, err, n);
    }
    char e2[256];
    if (pc_raw_writer_close(w, e2, sizeof e2) && !rc) {
        snprintf(err, n, "%s", e2);
        rc = -1;
    }
    return rc;
}

/* The references: per set, the panorama and the crop in NV12. */
static uint8_t ref_pano[FRAMES][PANO_W * CAM_H * 3 / 2], ref_crop[FRAMES][CROP_W * CROP_H * 3 / 2];

static int make_refs(char *err, size_t n)
{
    static uint8_t rgb[CAM_W * 3 * NCAM * CAM_H], pano[PANO_W * 3 * CAM_H];
    for (int f = 0; f < FRAMES; f++) {
        pc_bayer b = {raw[f], CAM_W, CAM_W, NCAM * CAM_H, PC_CFA_RGGB, 0};
        pc_picture rp = {.fmt = PC_FMT_RGB24, .plane = {rgb}, .pitch = {CAM_W * 3}, .width = CAM_W,
                         .height = NCAM * CAM_H};
        if (pc_ref_debayer(PC_ALGO_BILINEAR, &b, &rp, err, n))
            return -1;
        side_by_side(rgb, CAM_W * 3, pano);
        pc_picture p0, p1;
        pc_picture_layout(&p0, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, PANO_W, CAM_H, 1, ref_pano[f]);
        pc_picture_layout(&p1, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, CROP_W, CROP_H, 1, ref_crop[f]);
        if (pc_rgb_to_yuv(pano, PANO_W * 3, &p0, err, n) ||
            pc_rgb_to_yuv(rgb + (size_t)CAM_H * CAM_W * 3, CAM_W * 3, &p1, err, n))
            return -1;
    }
    return 0;
}

/* A decoded stream against a reference or a colour, and its PTS. */
typedef struct check {
    int w, h;
    const uint8_t *ref; /* NV12 per frame (w*h*3/2), or NULL: the solid colour */
    int frames, mismatched, worst;
    int64_t pts_us[FRAMES + 8];
} check;

static int on_frame(void *user, int index, const AVFrame *f)
{
    check *c = user;
    if (index < FRAMES + 8)
        c->pts_us[index] = f->best_effort_timestamp; /* in the stream's time base: converted below */
    c->frames++;
    if (index >= FRAMES || f->format != AV_PIX_FMT_YUV420P || f->width != c->w || f->height != c->h) {
        c->mismatched++;
        return 0;
    }
    int bad = 0, worst = 0;
    if (c->ref) {
        const uint8_t *y = c->ref + (size_t)index * c->w * c->h * 3 / 2, *uv = y + (size_t)c->w * c->h;
        for (int r = 0; r < c->h; r++)
            bad += memcmp(f->data[0] + (size_t)r * f->linesize[0], y + (size_t)r * c->w, (size_t)c->w) != 0;
        for (int r = 0; r < c->h / 2; r++)
            for (int x = 0; x < c->w / 2; x++)
                bad += f->data[1][(size_t)r * f->linesize[1] + x] != uv[(size_t)r * c->w + 2 * x] ||
                       f->data[2][(size_t)r * f->linesize[2] + x] != uv[(size_t)r * c->w + 2 * x + 1];
    } else { /* the solid colour of set `index`, through the same conversion */
        uint8_t rgb[3], px[2 * 2 * 3], yuv[2 * 2 * 3 / 2];
        solid_rgb((uint64_t)index, rgb);
        for (int i = 0; i < 4; i++)
            memcpy(px + 3 * i, rgb, 3);
        pc_picture q;
        char e[128];
        pc_picture_layout(&q, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, 2, 2, 1, yuv);
        pc_rgb_to_yuv(px, 6, &q, e, sizeof e);
        int want[3] = {yuv[0], yuv[4], yuv[5]};
        for (int p = 0; p < 3; p++) {
            int pw = p ? c->w / 2 : c->w, ph = p ? c->h / 2 : c->h;
            for (int r = 0; r < ph; r++)
                for (int x = 0; x < pw; x++) {
                    int d = abs(f->data[p][(size_t)r * f->linesize[p] + x] - want[p]);
                    worst = d > worst ? d : worst;
                }
        }
        bad = worst > 3;
    }
    c->mismatched += bad != 0;
    if (worst > c->worst)
        c->worst = worst;
    return 0;
}

/* The big picture's frames against the step's gradient, through the same
 * conversion: Y sample for sample. */
typedef struct big_check {
    int mismatched;
} big_check;

static int on_big_frame(void *user, int index, const AVFrame *f)
{
    big_check *c = user;
    static uint8_t rgb[(size_t)BIG_W * BIG_H * 3], yuv[(size_t)BIG_W * BIG_H * 3 / 2];
    pc_picture q;
    char e[128];
    big_rgb((uint64_t)index, rgb);
    pc_picture_layout(&q, PC_FMT_NV12, PC_MATRIX_BT709, PC_RANGE_LIMITED, BIG_W, BIG_H, 1, yuv);
    int bad = f->width != BIG_W || f->height != BIG_H || pc_rgb_to_yuv(rgb, BIG_W * 3, &q, e, sizeof e);
    for (int y = 0; y < BIG_H && !bad; y++)
        bad = memcmp(f->data[0] + (size_t)y * f->linesize[0], yuv + (size_t)y * BIG_W, BIG_W) != 0;
    c->mismatched += bad;
    return 0;
}

static void decode(const char *dir, const char *name, check *c, dt_decoded *d)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    memset(d, 0, sizeof *d);
    int rc = dt_decode(path, on_frame, c, d);
    for (int i = 0; i < c->frames && i < FRAMES + 8; i++) /* to microseconds */
        c->pts_us[i] = av_rescale_q(c->pts_us[i], d->tb, (AVRational){1, 1000000});
    TAP_CHECK(rc == 0 && d->errors == 0 && d->width == c->w && d->height == c->h && d->sizes_ok &&
                  c->frames == FRAMES,
              "%s decodes (%s): %dx%d, %d frames of %d, %d decode errors", name, d->codec, d->width, d->height,
              c->frames, FRAMES, d->errors);
}

/* While a run goes on: once it runs and a few sets are through, the
 * broken output repaired and the configuration file changed (a live
 * setting), then a reload asked for as SIGHUP would. */
typedef struct reloader {
    pictures *t;
    pc_daemon *d;
    const char *conf;
    int asked;
} reloader;

static void *reload_thread(void *arg)
{
    reloader *r = arg;
    for (int i = 0; i < 1000 && !log_has("running: "); i++)
        dt_sleep(0.01);
    dt_sleep(0.2);
    atomic_store(&r->t->fixed, 1);
    dt_write_file(r->conf, "daemon = { log_level = \"debug\"; };\n");
    pc_signals_request(r->d->signals, PC_SIG_RELOAD);
    r->asked = 1;
    return NULL;
}

/* Runs the pipeline with this test's steps and pictures; its summary
 * (stdout) into DIR/summary-NAME.txt; rl: a reload while it runs. */
static int run(pictures *t, const char *name, char **args, int nargs, char *summary, size_t n, reloader *rl)
{
    static pc_cli cli;
    static pc_diag diag;
    static pc_daemon d;
    char *argv[64] = {"panocap"};
    memcpy(argv + 1, args, (size_t)nargs * sizeof *argv);
    char err[512] = "";
    memset(&cli, 0, sizeof cli);
    memset(&d, 0, sizeof d);
    if (pc_cli_parse(&cli, nargs + 1, argv, err, sizeof err)) {
        TAP_CHECK(0, "%s: command line: %s", name, err);
        return -1;
    }
    pc_diag_init(&diag);
    if (pc_cli_load_settings(&cli, &d.settings, &diag) != PC_EXIT_OK) {
        char line[1024] = "";
        if (diag.count)
            pc_diag_format(&diag.item[0], line, sizeof line);
        TAP_CHECK(0, "%s: settings: %s", name, line);
        return -1;
    }
    d.cli = &cli;
    d.logger = (pc_logger){log_sink, NULL, PC_LOG_DEBUG};
    if (pc_signals_open(&d.signals, err, sizeof err) || pc_notify_open(&d.notify, err, sizeof err)) {
        TAP_CHECK(0, "%s: %s", name, err);
        return -1;
    }
    pl_spec spec = {steps, (int)(sizeof steps / sizeof steps[0]), test_picture, t};
    if (t->big)
        spec = (pl_spec){big_steps, (int)(sizeof big_steps / sizeof big_steps[0]), test_picture, t};
    char path[512];
    snprintf(path, sizeof path, "%s/summary-%s.txt", t->dir, name);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    pthread_t rt;
    int have_rt = 0;
    if (rl) {
        rl->d = &d;
        have_rt = pthread_create(&rt, NULL, reload_thread, rl) == 0;
    }
    int rc = pl_run(&d, &spec);
    if (have_rt)
        pthread_join(rt, NULL);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    pc_notify_close(d.notify);
    pc_signals_close(d.signals);
    char *sum = dt_slurp(path);
    snprintf(summary, n, "%s", sum ? sum : "");
    free(sum);
    return rc;
}

static int has(const char *text, const char *needle) { return strstr(text, needle) != NULL; }

/* pl_settings_picture on settings with a virtual camera and unstitched
 * outputs. */
static void settings_pictures(void)
{
    static pc_settings s;
    pc_settings_defaults(&s);
    snprintf(s.encode.encoder, sizeof s.encode.encoder, "libx264");
    s.encode.layout = PC_LAYOUT_BANDS;
    s.encode.preview_scale = 4;
    s.encode.bitrate = 20000000;
    s.output_count = 1;
    snprintf(s.outputs[0].url, sizeof s.outputs[0].url, "pano.ts");
    s.vcam_count = 2;
    snprintf(s.vcams[1].name, sizeof s.vcams[1].name, "main");
    s.vcams[1].bitrate = 3000000;
    s.vcams[1].outputs.count = 2;
    snprintf(s.vcams[1].outputs.item[0].url, sizeof s.vcams[1].outputs.item[0].url, "main.ts");
    snprintf(s.vcams[1].outputs.item[1].url, sizeof s.vcams[1].outputs.item[1].url, "udp://239.0.0.1:5000");
    snprintf(s.vcams[0].name, sizeof s.vcams[0].name, "wide");
    s.panorama.unstitched.count = 1;
    snprintf(s.panorama.unstitched.item[0].url, sizeof s.panorama.unstitched.item[0].url, "cams.ts");
    static pl_picture_config c[5];
    static const char *names[5] = {"panorama", "vcam:main", "unstitched", "vcam:tele", "thumbs"};
    char err[5][256];
    int rc[5];
    for (int i = 0; i < 5; i++) {
        memset(&c[i], 0, sizeof c[i]);
        snprintf(c[i].name, sizeof c[i].name, "%s", names[i]);
        rc[i] = pl_settings_picture(NULL, &s, i, &c[i], err[i], sizeof err[i]);
    }
    TAP_CHECK(rc[0] == 0 && c[0].required && c[0].output_count == 1 && !strcmp(c[0].outputs[0].url, "pano.ts") &&
                  c[0].encode.preview_scale == 4 && c[0].encode.bitrate == 20000000,
              "spec: picture 0 gets the top-level outputs, bitrate and preview, and is required");
    TAP_CHECK(rc[1] == 0 && !c[1].required && c[1].output_count == 2 && !strcmp(c[1].outputs[1].url,
                                                                               "udp://239.0.0.1:5000") &&
                  c[1].encode.bitrate == 3000000 && c[1].encode.layout == PC_LAYOUT_STACKED &&
                  c[1].encode.preview_scale == 0 && !strcmp(c[1].encode.encoder, "libx264"),
              "spec: vcam:main gets its entry's outputs and bitrate, encode's encoder, one band, no preview, not "
              "required");
    TAP_CHECK(rc[2] == 0 && !c[2].required && c[2].output_count == 1 && !strcmp(c[2].outputs[0].url, "cams.ts") &&
                  c[2].encode.layout == PC_LAYOUT_BANDS && c[2].encode.preview_scale == 0,
              "spec: unstitched gets unstitched_outputs and encode.layout");
    TAP_CHECK(rc[3] < 0 && has(err[3], "virtual_cameras has no camera named \"tele\"") && rc[4] < 0 &&
                  has(err[4], "picture 4 (thumbs"),
              "spec: an unknown virtual camera or picture is refused, naming it (%s; %s)", err[3], err[4]);
}

int main(void)
{
    char err[512] = "", dir[256], rawpath[512];
    settings_pictures();
    if (!dt_tmpdir(dir, sizeof dir, "pictures")) {
        TAP_CHECK(0, "temp dir");
        return tap_done();
    }
    snprintf(rawpath, sizeof rawpath, "%s/sets.pcraw", dir);
    int rc = write_raw(rawpath, err, sizeof err);
    rc = rc ? rc : make_refs(err, sizeof err);
    if (!TAP_CHECK(rc == 0, "%d sets of %d cameras %dx%d recorded, references made%s%s", FRAMES, NCAM, CAM_W, CAM_H,
                   rc ? ": " : "", rc ? err : ""))
        return tap_done();
    pictures t = {.x265 = pc_encoder_opens("libx265")};
    snprintf(t.dir, sizeof t.dir, "%s", dir);
    if (!t.x265)
        tap_diag("libx265 does not open here: vcam:solid is encoded by libx264 (NV12), not in I420");

    char src[600], out[600], pv[600], summary[16384], conf[600];
    snprintf(conf, sizeof conf, "%s/empty.conf", dir);
    dt_write_file(conf, "# every setting from the command line\n");
    snprintf(src, sizeof src, "file:%s", rawpath);
    snprintf(out, sizeof out, "%s/main.ts", dir);
    snprintf(pv, sizeof pv, "encode.preview_url=%s/preview.ts", dir);
    char *args[] = {"--config", conf, "--source", src, "-n", "3", "--backend", "cpu", "--algo", "bilinear", "--control", "",
                    "--stats-interval", "0", "--output", out, "-s", "encode.encoder=libx264", "-s",
                    "encode.options=x264-params=qp=0", "-s", "encode.preview_scale=2", "-s", pv, "-s",
                    "encode.gop=4", "-s", "capture.pool_size=16"}; /* every set fits the pool: none dropped
                                                                     * where the encoders are slow (sanitizers) */
    int nargs = (int)(sizeof args / sizeof *args);
    rc = run(&t, "four", args, nargs, summary, sizeof summary, NULL);
    if (!TAP_CHECK(rc == PC_EXIT_OK, "four pictures per set: the pipeline ran to the end of the recording (exit %d)",
                   rc))
        tap_diag("log:\n%s", logged);
    TAP_CHECK(has(logged, "pictures: panorama 480x64, vcam:crop 96x48, vcam:solid 64x32, vcam:broken 64x32 "
                          "(failed); 5 encoder threads"),
              "set-up names the pictures, their sizes and the failed one");
    TAP_CHECK(has(logged, "<3>picture vcam:broken: encoder not opened: ") && has(logged, "sets.pcraw/broken.ts") &&
                  has(logged, "it is not encoded, the other pictures go on"),
              "the picture whose output cannot open is logged with the reason; the others go on");

    check pano = {.w = PANO_W, .h = CAM_H, .ref = ref_pano[0]}, crop = {.w = CROP_W, .h = CROP_H, .ref = ref_crop[0]},
          solid = {.w = SOLID_W, .h = SOLID_H};
    dt_decoded dp, dc, ds, dv;
    decode(dir, "main.ts", &pano, &dp);
    TAP_CHECK(pano.mismatched == 0, "panorama: every frame = the reference demosaic side by side, sample for sample "
              "(%d frames differ)", pano.mismatched);
    decode(dir, "crop.mkv", &crop, &dc);
    TAP_CHECK(crop.mismatched == 0, "vcam:crop: every frame = camera 1's corner of the reference, sample for "
              "sample (%d frames differ)", crop.mismatched);
    decode(dir, "solid.ts", &solid, &ds);
    TAP_CHECK(solid.mismatched == 0 && (!t.x265 || !strcmp(ds.codec, "hevc")),
              "vcam:solid (%s): every frame its set's colour within 3 codes (worst %d)", ds.codec, solid.worst);
    char pp[512];
    snprintf(pp, sizeof pp, "%s/preview.ts", dir);
    rc = dt_decode(pp, NULL, NULL, &dv);
    TAP_CHECK(rc == 0 && dv.width == PANO_W / 2 && dv.height == CAM_H / 2 && dv.frames == FRAMES,
              "the preview of the panorama decodes at %dx%d with %d frames", dv.width, dv.height, dv.frames);
    /* one PTS sequence: the same times relative to the first frame, and the
     * same first time in the two MPEG-TS files */
    int same = pano.frames == FRAMES && crop.frames == FRAMES && solid.frames == FRAMES &&
               pano.pts_us[0] == solid.pts_us[0];
    for (int i = 1; i < FRAMES && same; i++) {
        int64_t a = pano.pts_us[i] - pano.pts_us[0], b = crop.pts_us[i] - crop.pts_us[0],
                c = solid.pts_us[i] - solid.pts_us[0];
        same = llabs(a - b) <= 1000 && a == c && a > 0;
    }
    TAP_CHECK(same, "one PTS sequence across the pictures (panorama %lld, %lld .. us; crop from %lld; solid from "
              "%lld)", (long long)pano.pts_us[0], (long long)pano.pts_us[1], (long long)crop.pts_us[0],
              (long long)solid.pts_us[0]);
    TAP_CHECK(dt_file_size(pp) > 0 && dt_file_size(out) > 0 && !has(logged, "<3>encoder") &&
                  !has(logged, "stage thread") && !has(logged, "<2>"),
              "no error besides the broken output");

    char want[256];
    snprintf(want, sizeof want, "summary: %d frame sets in, %d encoded, 0 dropped", FRAMES, FRAMES);
    TAP_CHECK(has(summary, want), "summary: every set in and encoded (all pictures' packets out)");
    TAP_CHECK(has(summary, "picture 0 panorama 480x64: libx264, 10 frames") &&
                  has(summary, "picture 1 vcam:crop 96x48: libx264, 10 frames") &&
                  has(summary, t.x265 ? "picture 2 vcam:solid 64x32: libx265, 10 frames"
                                      : "picture 2 vcam:solid 64x32: libx264, 10 frames") &&
                  has(summary, "picture 3 vcam:broken 64x32: no encoder, 0 frames, 0.00 MB, 0 of 1 encoder "
                               "encoding, 1 failure"),
              "summary: each picture's encoder and frames; the broken one's failure");
    snprintf(want, sizeof want, "output 8 %s/crop.mkv: %d written, 0 dropped, 0 errors (vcam:crop)", dir, FRAMES);
    char want0[700];
    snprintf(want0, sizeof want0, "output 0 %s: %d written, 0 dropped, 0 errors (panorama)", out, FRAMES);
    char want2[700];
    snprintf(want2, sizeof want2, "output 24 %s/sets.pcraw/broken.ts: 0 written, 0 dropped, 0 errors (vcam:broken)",
             dir);
    TAP_CHECK(has(summary, want) && has(summary, want0) && has(summary, "(vcam:solid)") && has(summary, want2),
              "summary: each picture's outputs (slots 0, 8, 16, 24) with their own counts, labelled with the "
              "picture; the broken picture's output wrote nothing");
    TAP_CHECK(has(summary, "  write[0] ") && has(summary, "  write[8] ") && has(summary, "  write[16] "),
              "summary: a write latency per output of every picture (each after its own picture's packet)");
    TAP_CHECK(has(summary, "picture 1 vcam:crop: stacked, 1 band of 96x48") && has(summary, "preview 1/2") &&
                  has(summary, "rows     0-47    libx264    frames     10") &&
                  has(summary, "frames      0  encode p50   0.00  p99   0.00  max   0.00 ms  (its encoder did not "
                               "open)"),
              "summary: the pictures' bands with their encoders and frames, and the preview");
    if (!has(summary, want) || !has(summary, "picture 3"))
        tap_diag("summary:\n%s", summary);

    /* the same broken output, in a picture that is required */
    t.crop_required = 1;
    logged[0] = '\0';
    rc = run(&t, "required", args, nargs, summary, sizeof summary, NULL);
    TAP_CHECK(rc == PC_EXIT_RUNTIME && has(logged, "vcam:crop") && has(logged, "sets.pcraw/crop.mkv"),
              "a required picture whose encoder does not open stops the set-up, naming it (exit %d)", rc);
    /* a reload repairs the broken picture's output while it runs */
    t.crop_required = 0;
    atomic_store(&t.fixed, 0);
    logged[0] = '\0';
    dt_write_file(conf, "daemon = { log_level = \"info\"; };\n");
    char *largs[sizeof args / sizeof *args + 4];
    memcpy(largs, args, sizeof args);
    largs[nargs] = "-s";
    largs[nargs + 1] = "capture.file_loop=true";
    largs[nargs + 2] = "--frames";
    largs[nargs + 3] = "100"; /* 2 s at 50 fps: the reload comes 0.2 s after the start */
    reloader rl = {.t = &t, .conf = conf};
    rc = run(&t, "reload", largs, nargs + 4, summary, sizeof summary, &rl);
    dt_decoded dfx, dm;
    snprintf(pp, sizeof pp, "%s/fixed.ts", dir);
    int frc = dt_decode(pp, NULL, NULL, &dfx);
    int mrc = dt_decode(out, NULL, NULL, &dm);
    TAP_CHECK(rc == PC_EXIT_OK && rl.asked && has(logged, "reload: vcam:broken: now writing to 1 output") &&
                  frc == 0 && dfx.width == SOLID_W && dfx.height == SOLID_H && dfx.frames > 0 &&
                  dfx.frames <= dm.frames && dfx.errors == 0 && mrc == 0 && dm.frames == 100,
              "a reload with a good output opens the broken picture's encoder while the pipeline runs: the %d sets "
              "after it written to it, the panorama all %d (exit %d)", dfx.frames, dm.frames, rc);
    TAP_CHECK(has(summary, "picture 3 vcam:broken 64x32: libx264, ") && has(summary, "1 of 1 encoder encoding, 1 failure") &&
                  !has(logged, "reload: now writing") && !has(logged, "reload: vcam:crop"),
              "summary: the repaired picture encodes, its failure still counted; the other pictures were not "
              "reopened");
    if (rc || !has(summary, "1 of 1 encoder encoding, 1 failure"))
        tap_diag("log:\n%s\nsummary:\n%s", logged, summary);
    atomic_store(&t.fixed, 0);

    /* the panorama's size, alone */
    t.big = 1;
    logged[0] = '\0';
    char bigout[600], bigpv[600], nframes[16];
    snprintf(bigout, sizeof bigout, "%s/big.ts", dir);
    snprintf(bigpv, sizeof bigpv, "encode.preview_url=%s/big-preview.ts", dir);
    snprintf(nframes, sizeof nframes, "%d", BIG_FRAMES);
    char *bargs[] = {"--config", conf, "--source", src, "-n", "3", "--backend", "cpu", "--control", "",
                     "--stats-interval", "0", "--output", bigout, "-s", "encode.encoder=libx264", "-s",
                     "encode.options=x264-params=qp=0", "-s", "encode.preview_scale=4", "-s", bigpv, "-s",
                     "capture.pool_size=16", "--frames", nframes};
    rc = run(&t, "big", bargs, (int)(sizeof bargs / sizeof *bargs), summary, sizeof summary, NULL);
    big_check bc = {0};
    dt_decoded db, dbp;
    int drc = rc ? -1 : dt_decode(bigout, on_big_frame, &bc, &db);
    snprintf(pp, sizeof pp, "%s/big-preview.ts", dir);
    int prc = rc ? -1 : dt_decode(pp, NULL, NULL, &dbp);
    TAP_CHECK(rc == PC_EXIT_OK && drc == 0 && db.width == BIG_W && db.height == BIG_H && db.frames == BIG_FRAMES &&
                  bc.mismatched == 0 && prc == 0 && dbp.width == (BIG_W / 4 & ~1) && dbp.height == (BIG_H / 4 & ~1) &&
                  dbp.frames == BIG_FRAMES && has(logged, "encoder: libx264 (h264), 8600x1300, 1 output"),
              "an 8600x1300 picture (the frame is 160x192): %dx%d, %d frames, %d differ from the step's; its "
              "preview %dx%d, %d frames (exit %d)", db.width, db.height, db.frames, bc.mismatched, dbp.width,
              dbp.height, dbp.frames, rc);
    if (rc)
        tap_diag("log:\n%s", logged);
    dt_rmtree(dir);
    return tap_done();
}
