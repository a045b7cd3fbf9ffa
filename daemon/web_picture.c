/* web_picture.c - the web page's live picture and camera thumbnails (see
 * web_picture.h): the small rendition on the stage thread when one is
 * wanted, the strip and the JPEGs on a thread of its own.
 *
 * Who owns what: `small` belongs to the stage thread while `busy` is 0
 * and to the worker while it is 1 (busy changes under lock); the JPEGs
 * published (pano, cam[], seq, made_ns) are guarded by lock; next_ns,
 * the cost figures' sums are the stage thread's (copied under lock);
 * wanted_ns is atomic (HTTP thread -> stage thread). */
#include "web_picture.h"

#include "clock.h"
#include "encode.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRIP_MAX_W 1600
#define THUMB_MIN_W 160
#define WANTED_NS (5LL * 1000000000)
#define JPEG_QUALITY 4
#define FIRST_WAIT_MS 2000 /* a reader waits this long for the first picture */

typedef struct jpeg_buf {
    uint8_t *data;
    size_t len;
} jpeg_buf;

struct pc_web_picture {
    pc_web_picture_config cfg;
    char label[96];        /* "web picture", "web picture of vcam:main": its log lines' */
    int mode;              /* 0 none, 1 GPU downscale, 2 sampled from host pictures */
    char why[160];         /* mode 0: why not */
    int scale;
    pc_picture small;      /* the whole picture scaled down (NV12) */
    const pc_backend_ops *small_ops; /* its memory's (pinned for the GPU's downscale) */
    int tw, th;            /* a camera in small */
    int cam_x[64], cam_y[64];
    pc_picture strip;      /* the cameras side by side (NV12) */
    pc_jpeg *jpeg_strip, *jpeg_thumb;

    atomic_llong wanted_ns;
    int64_t next_ns;       /* stage thread */
    double stage_ms_sum, stage_ms_max;
    uint64_t stage_n;
    int failed;            /* stage thread: the downscale failed once: off */

    pthread_mutex_t lock;
    pthread_cond_t cond;   /* -> the worker: busy, stop */
    pthread_cond_t made;   /* -> waiting readers: a picture was published (CLOCK_MONOTONIC) */
    int busy, stop;
    pthread_t thread;
    int started;
    /* published */
    jpeg_buf pano, cam[64];
    uint64_t seq;
    int64_t made_ns;
    double stage_sum_pub, stage_max_pub, worker_ms_sum;
    uint64_t stage_n_pub;
    char last_error[256];
};

/* ------------------------------------------------------------ sampling */

static const uint8_t *chroma(const pc_picture *p, int c, int x, int y)
{
    if (p->fmt == PC_FMT_NV12)
        return p->plane[1] + (size_t)y * p->pitch[1] + 2 * (size_t)x + (size_t)c;
    return p->plane[1 + c] + (size_t)y * p->pitch[1 + c] + (size_t)x;
}

/* Host pictures: each small pixel the mean of the 2x2 source pixels at
 * the middle of its scale x scale block, each chroma sample the source
 * chroma sample at the middle of its block. */
static void sample(const pc_picture *src, pc_picture *dst, int s)
{
    int o = s >= 2 ? s / 2 - 1 : 0, k = s >= 2 ? 2 : 1;
    for (int y = 0; y < dst->height; y++) {
        uint8_t *out = dst->plane[0] + (size_t)y * dst->pitch[0];
        const uint8_t *r0 = src->plane[0] + (size_t)(y * s + o) * src->pitch[0];
        const uint8_t *r1 = r0 + (k == 2 ? src->pitch[0] : 0);
        for (int x = 0; x < dst->width; x++) {
            int sx = x * s + o;
            out[x] = k == 2 ? (uint8_t)((r0[sx] + r0[sx + 1] + r1[sx] + r1[sx + 1] + 2) / 4) : r0[sx];
        }
    }
    for (int y = 0; y < dst->height / 2; y++) {
        int sy = y * s + s / 2;
        if (sy >= src->height / 2)
            sy = src->height / 2 - 1;
        uint8_t *out = dst->plane[1] + (size_t)y * dst->pitch[1];
        for (int x = 0; x < dst->width / 2; x++) {
            int sx = x * s + s / 2;
            if (sx >= src->width / 2)
                sx = src->width / 2 - 1;
            out[2 * x] = *chroma(src, 0, sx, sy);
            out[2 * x + 1] = *chroma(src, 1, sx, sy);
        }
    }
}

/* ------------------------------------------------------------ the worker */

/* A w x h NV12 view of pic at (x, y) (both even). */
static pc_picture crop(const pc_picture *pic, int x, int y, int w, int h)
{
    pc_picture c = *pic;
    c.plane[0] = pic->plane[0] + (size_t)y * pic->pitch[0] + (size_t)x;
    c.plane[1] = pic->plane[1] + (size_t)(y / 2) * pic->pitch[1] + (size_t)x;
    c.width = w;
    c.height = h;
    c.bands = NULL;
    c.grid_cols = 0;
    return c;
}

static void set_error(pc_web_picture *w, const char *msg)
{
    pthread_mutex_lock(&w->lock);
    int first = !w->last_error[0];
    snprintf(w->last_error, sizeof w->last_error, "%.255s", msg);
    pthread_mutex_unlock(&w->lock);
    if (first)
        pc_log(w->cfg.lg, PC_LOG_WARNING, "%s: %s", w->label, msg);
}

static void make_jpegs(pc_web_picture *w)
{
    int64_t t0 = pc_now_ns();
    int n = w->cfg.whole ? 0 : w->cfg.ncam; /* whole: small is the live picture */
    for (int k = 0; k < n; k++) {
        pc_picture src = crop(&w->small, w->cam_x[k], w->cam_y[k], w->tw, w->th);
        for (int y = 0; y < w->th; y++)
            memcpy(w->strip.plane[0] + (size_t)y * w->strip.pitch[0] + (size_t)k * w->tw,
                   src.plane[0] + (size_t)y * src.pitch[0], (size_t)w->tw);
        for (int y = 0; y < w->th / 2; y++)
            memcpy(w->strip.plane[1] + (size_t)y * w->strip.pitch[1] + (size_t)k * w->tw,
                   src.plane[1] + (size_t)y * src.pitch[1], (size_t)w->tw);
    }
    char err[256];
    jpeg_buf pano = {0}, cam[64];
    memset(cam, 0, sizeof cam);
    int rc = pc_jpeg_encode(w->jpeg_strip, w->cfg.whole ? &w->small : &w->strip, &pano.data, &pano.len, err,
                            sizeof err);
    for (int k = 0; k < n && !rc; k++) {
        pc_picture t = crop(&w->strip, k * w->tw, 0, w->tw, w->th);
        rc = pc_jpeg_encode(w->jpeg_thumb, &t, &cam[k].data, &cam[k].len, err, sizeof err);
    }
    double ms = (pc_now_ns() - t0) / 1e6;
    if (rc) {
        set_error(w, err);
        free(pano.data);
        for (int k = 0; k < n; k++)
            free(cam[k].data);
        return;
    }
    pthread_mutex_lock(&w->lock);
    free(w->pano.data);
    w->pano = pano;
    for (int k = 0; k < n; k++) {
        free(w->cam[k].data);
        w->cam[k] = cam[k];
    }
    w->seq++;
    w->made_ns = pc_now_ns();
    w->worker_ms_sum += ms;
    pthread_cond_broadcast(&w->made);
    pthread_mutex_unlock(&w->lock);
}

static void *worker(void *arg)
{
    pc_web_picture *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->busy && !w->stop)
            pthread_cond_wait(&w->cond, &w->lock);
        if (w->stop)
            break;
        pthread_mutex_unlock(&w->lock);
        make_jpegs(w); /* small is the worker's while busy */
        pthread_mutex_lock(&w->lock);
        w->busy = 0;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* ------------------------------------------------------------ the API */

int pc_web_picture_open(pc_web_picture **out, const pc_web_picture_config *cfg, char *err, size_t n)
{
    *out = NULL;
    pc_web_picture *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, n, "web picture: out of memory");
        return -1;
    }
    w->cfg = *cfg;
    w->cfg.name = NULL; /* the caller's string: only the label is kept */
    snprintf(w->label, sizeof w->label, "web picture%s%.*s", cfg->name && cfg->name[0] ? " of " : "",
             70, cfg->name ? cfg->name : "");
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->made, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&w->wanted_ns, 0);
    *out = w; /* from here on, pc_web_picture_close cleans up */

    int cols = cfg->grid_cols > 1 ? cfg->grid_cols : 1;
    int max_w = cfg->whole && cfg->max_width > 0 ? cfg->max_width : STRIP_MAX_W;
    int s = ((cfg->whole ? cfg->width : cfg->ncam * cfg->cam_w) + max_w - 1) / max_w;
    int smax = cfg->cam_w / THUMB_MIN_W;
    if (s > smax && !cfg->whole)
        s = smax;
    if (s < 1)
        s = 1;
    w->scale = s;
    w->tw = (cfg->cam_w / s) & ~1;
    w->th = (cfg->cam_h / s) & ~1;
    int sw = (cfg->width / s) & ~1, sh = (cfg->height / s) & ~1;
    int dev = (cfg->bops->flags & PC_BACKEND_DEVICE_PICTURES) != 0;
    if (cfg->whole && (sw < 16 || sh < 16)) {
        snprintf(w->why, sizeof w->why, "a %dx%d picture is too small for a live picture", cfg->width, cfg->height);
    } else if (!cfg->whole && (cfg->ncam < 1 || cfg->ncam > 64 || w->tw < 16 || w->th < 16)) {
        snprintf(w->why, sizeof w->why, "cameras of %dx%d are too small for a picture", cfg->cam_w, cfg->cam_h);
    } else if (cfg->fmt != PC_FMT_NV12 && cfg->fmt != PC_FMT_I420) {
        snprintf(w->why, sizeof w->why, "the pictures are %s, not YUV", pc_pixfmt_name(cfg->fmt));
    } else if (dev && cfg->bops->downscale && cfg->fmt == PC_FMT_NV12) {
        w->mode = 1;
    } else if (!dev) {
        w->mode = 2;
    } else {
        snprintf(w->why, sizeof w->why, "the pictures stay on the GPU in a format its downscale does not take "
                 "(%s; the encoder asked for it)", pc_pixfmt_name(cfg->fmt));
    }
    if (!w->mode) {
        pc_log(cfg->lg, PC_LOG_WARNING, "%s: none: %s", w->label, w->why);
        return 0;
    }
    w->small_ops = w->mode == 1 ? cfg->bops : NULL;
    if (pc_backend_host_picture_alloc(w->small_ops, PC_FMT_NV12, cfg->matrix, cfg->range, sw, sh, &w->small, err,
                                      n) ||
        (!cfg->whole && pc_backend_host_picture_alloc(NULL, PC_FMT_NV12, cfg->matrix, cfg->range, cfg->ncam * w->tw,
                                                      w->th, &w->strip, err, n)) ||
        pc_jpeg_open(&w->jpeg_strip, JPEG_QUALITY, err, n) || pc_jpeg_open(&w->jpeg_thumb, JPEG_QUALITY, err, n)) {
        snprintf(w->why, sizeof w->why, "%.150s", err);
        pc_log(cfg->lg, PC_LOG_WARNING, "%s: none: %s", w->label, w->why);
        w->mode = 0;
        return 0;
    }
    for (int k = 0; k < cfg->ncam && !cfg->whole; k++) {
        int x = ((k % cols) * cfg->cam_w / s) & ~1, y = ((k / cols) * cfg->cam_h / s) & ~1;
        w->cam_x[k] = x + w->tw <= sw ? x : sw - w->tw;
        w->cam_y[k] = y + w->th <= sh ? y : sh - w->th;
    }
    if (pthread_create(&w->thread, NULL, worker, w) != 0) {
        snprintf(w->why, sizeof w->why, "cannot start its thread");
        w->mode = 0;
        return 0;
    }
    w->started = 1;
    snprintf(w->why, sizeof w->why, "%s 1/%d", w->mode == 1 ? "GPU box downscale" : "sampled", s);
    if (cfg->whole)
        pc_log(cfg->lg, PC_LOG_INFO, "%s: the whole %dx%d picture, %dx%d (%s), %d a second while watched%s",
               w->label, cfg->width, cfg->height, sw, sh, w->why, PC_WEB_PICTURE_FPS,
               cfg->name && cfg->name[0] ? "" : "; no camera thumbnails");
    else
        pc_log(cfg->lg, PC_LOG_INFO, "%s: %d cameras side by side, %dx%d (%s), %d a second while watched",
               w->label, cfg->ncam, cfg->ncam * w->tw, w->th, w->why, PC_WEB_PICTURE_FPS);
    return 0;
}

int pc_web_picture_offer(pc_web_picture *w, int slot, const pc_picture *pic)
{
    if (!w || !w->mode || w->failed)
        return 0;
    int64_t now = pc_now_ns();
    if (now - atomic_load(&w->wanted_ns) > WANTED_NS || now < w->next_ns)
        return 0;
    pthread_mutex_lock(&w->lock);
    int busy = w->busy;
    pthread_mutex_unlock(&w->lock);
    if (busy)
        return 0;
    w->next_ns = now + 1000000000LL / PC_WEB_PICTURE_FPS;
    const pc_web_picture_config *c = &w->cfg;
    char err[256];
    if (w->mode == 1) {
        if (pc_backend_downscale(c->be, slot, pic, &w->small, w->scale, err, sizeof err) ||
            pc_backend_wait(c->be, slot, err, sizeof err)) {
            w->failed = 1;
            set_error(w, err);
            return 1;
        }
    } else {
        sample(pic, &w->small, w->scale);
    }
    double ms = (pc_now_ns() - now) / 1e6;
    w->stage_ms_sum += ms;
    w->stage_n++;
    if (ms > w->stage_ms_max)
        w->stage_ms_max = ms;
    pthread_mutex_lock(&w->lock);
    w->stage_sum_pub = w->stage_ms_sum;
    w->stage_max_pub = w->stage_ms_max;
    w->stage_n_pub = w->stage_n;
    w->busy = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    return 1;
}

int pc_web_picture_get(pc_web_picture *w, int camera, uint8_t **data, size_t *len, uint64_t *seq, char *why,
                       size_t n)
{
    *data = NULL;
    *len = 0;
    *seq = 0;
    if (!w) {
        snprintf(why, n, "no live picture (the web page is off)");
        return -1;
    }
    if (camera >= w->cfg.ncam) {
        snprintf(why, n, "no camera %d (there are %d: 0..%d)", camera, w->cfg.ncam, w->cfg.ncam - 1);
        return -2;
    }
    if (camera >= 0 && w->cfg.whole) {
        snprintf(why, n, "no camera thumbnails: the live picture is the stitched panorama");
        return -2;
    }
    if (!w->mode) {
        snprintf(why, n, "no live picture here: %s", w->why);
        return -1;
    }
    atomic_store(&w->wanted_ns, pc_now_ns());
    pthread_mutex_lock(&w->lock);
    const jpeg_buf *b = camera < 0 ? &w->pano : &w->cam[camera];
    /* the first one after a pause comes within a frame period or two */
    struct timespec until = pc_deadline_ms(CLOCK_MONOTONIC, FIRST_WAIT_MS);
    while (!b->data && !w->stop && pthread_cond_timedwait(&w->made, &w->lock, &until) == 0)
        ;
    int rc = -1;
    if (!b->data) {
        snprintf(why, n, "no picture within %.1f s%s%s (one is made while frame sets flow)", FIRST_WAIT_MS / 1000.0,
                 w->last_error[0] ? ": " : "", w->last_error);
    } else if (!(*data = malloc(b->len))) {
        snprintf(why, n, "out of memory");
    } else {
        memcpy(*data, b->data, b->len);
        *len = b->len;
        *seq = w->seq;
        rc = 0;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void pc_web_picture_info_get(pc_web_picture *w, pc_web_picture_info *info)
{
    memset(info, 0, sizeof *info);
    info->age_s = -1;
    if (!w) {
        snprintf(info->why, sizeof info->why, "the web page is off");
        return;
    }
    info->available = w->mode != 0;
    info->scale = w->scale;
    if (!w->mode)
        snprintf(info->why, sizeof info->why, "%s", w->why);
    else
        snprintf(info->source, sizeof info->source, "%.47s", w->why);
    info->width = w->cfg.whole ? w->small.width : w->cfg.ncam * w->tw;
    info->height = w->cfg.whole ? w->small.height : w->th;
    info->thumb_width = w->cfg.whole ? 0 : w->tw;
    info->thumb_height = w->cfg.whole ? 0 : w->th;
    pthread_mutex_lock(&w->lock);
    info->seq = w->seq;
    if (w->made_ns)
        info->age_s = (pc_now_ns() - w->made_ns) / 1e9;
    if (w->stage_n_pub) {
        info->stage_ms_mean = w->stage_sum_pub / (double)w->stage_n_pub;
        info->stage_ms_max = w->stage_max_pub;
    }
    if (w->seq)
        info->worker_ms_mean = w->worker_ms_sum / (double)w->seq;
    if (w->last_error[0])
        snprintf(info->why, sizeof info->why, "%.159s", w->last_error);
    pthread_mutex_unlock(&w->lock);
}

void pc_web_picture_close(pc_web_picture *w)
{
    if (!w)
        return;
    if (w->started) {
        pthread_mutex_lock(&w->lock);
        w->stop = 1;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
    }
    pc_jpeg_close(w->jpeg_strip);
    pc_jpeg_close(w->jpeg_thumb);
    pc_backend_host_picture_free(w->small_ops, &w->small);
    pc_backend_host_picture_free(NULL, &w->strip);
    free(w->pano.data);
    for (int k = 0; k < 64; k++)
        free(w->cam[k].data);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    pthread_cond_destroy(&w->made);
    free(w);
}
