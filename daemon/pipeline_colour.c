/* pipeline_colour.c - the colour stage of the pipeline (docs/colour.md):
 * per slab, the raw format, the per-colour tables and the conversion
 * matrix with the camera's colour matrix folded in, built from the
 * settings; automatic white balance; live changes.
 *
 * Ownership: the stage thread owns the state in force (p->col) and uses
 * it for every frame set. A reload (main thread) or a control command
 * builds a complete new state off the stage thread and hands it over
 * under col_lock; the stage thread swaps it in between two frame sets
 * (begin_set) and frees the old one; the backend gets the tables from
 * the stage thread only. Automatic white balance
 * runs on the stage thread about once a second, on a sample of the raw
 * slab (1/64 of the tiles), and rebuilds only the tables of a camera
 * whose smoothed gains moved. */
#include "pipeline_int.h"

#include "settings_colour.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pl_colour {
    int n;                  /* slabs */
    pc_rawfmt fmt;          /* the capture's format */
    int active;             /* 0: 8-bit and nothing set anywhere: today's path */
    int matrices;           /* some camera has a colour matrix: per-band final pass */
    pc_camera_colour cc[PC_CAPTURE_MAX_CAMERAS];
    pc_colour_tables tables[PC_CAPTURE_MAX_CAMERAS];
    pc_yuv_coeffs bands[PC_CAPTURE_MAX_CAMERAS];
    pc_awb awb[PC_CAPTURE_MAX_CAMERAS];
    int cam[PC_CAPTURE_MAX_CAMERAS]; /* settings' camera of each slab (-1: the defaults) */
    int tables_stale;       /* the backend's copies of the tables need refreshing */
    unsigned frozen;        /* bit k: slab k's camera is "auto" in the settings, held at
                             * fixed gains by a freeze (pl_colour_freeze_wb) */
    uint64_t sets;          /* frame sets seen (white-balance cadence) */
};

void pl_colour_free(pl_colour *c)
{
    if (!c)
        return;
    for (int i = 0; i < PC_CAPTURE_MAX_CAMERAS; i++)
        pc_camera_colour_free(&c->cc[i]);
    free(c);
}

/* The settings of the camera in slab s (the per-camera defaults when no
 * listed camera has that slab, e.g. a raw file with more slabs). */
static const pc_camera_settings *slab_settings(const pc_settings *s, int slab)
{
    int i = pc_settings_camera_for_slab(s, slab);
    return i >= 0 ? &s->cameras[i] : &s->capture.camera;
}

/* The white-balance history a new state keeps. */
typedef struct awb_history {
    pc_awb awb[PC_CAPTURE_MAX_CAMERAS];
    int wb_auto[PC_CAPTURE_MAX_CAMERAS];
} awb_history;

/* Builds a complete state from settings s for the capture's format fmt;
 * keeps the white-balance history prev (may be NULL). */
static pl_colour *build(const pc_settings *s, int n, const pc_rawfmt *fmt, const awb_history *prev, char *err,
                        size_t errlen)
{
    pl_colour *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "colour: out of memory");
        return NULL;
    }
    c->n = n;
    c->fmt = *fmt;
    c->tables_stale = 1;
    for (int k = 0; k < n; k++) {
        const pc_camera_settings *cs = slab_settings(s, k);
        c->cam[k] = pc_settings_camera_for_slab(s, k);
        char key[32], e[400];
        /* the capture's actual format rules (a raw file says its own) */
        pc_camera_settings tmp = *cs;
        pc_rawfmt_name(fmt, tmp.pixel_format, sizeof tmp.pixel_format);
        tmp.pattern = (int)fmt->cfa;
        if (pc_settings_camera_colour(&tmp, &c->cc[k], key, sizeof key, e, sizeof e)) {
            snprintf(err, errlen, "colour of slab %d (%s): %s: %s", k, cs->name[0] ? cs->name : "camera", key, e);
            pl_colour_free(c);
            return NULL;
        }
        pc_awb_init(&c->awb[k]);
        if (prev && prev->wb_auto[k] && c->cc[k].wb_auto)
            c->awb[k] = prev->awb[k];
        if (c->cc[k].wb_auto && c->awb[k].have)
            for (int j = 0; j < 3; j++)
                c->cc[k].cfg.wb[j] = c->awb[k].gain[j];
        if (pc_colour_tables_build(&c->cc[k].cfg, fmt->bits, &c->tables[k], e, sizeof e) ||
            pc_yuv_coeffs_ccm((pc_matrix)s->debayer.matrix, (pc_range)s->debayer.range, c->cc[k].cfg.ccm,
                              &c->bands[k], e, sizeof e)) {
            snprintf(err, errlen, "colour of slab %d: %s", k, e);
            pl_colour_free(c);
            return NULL;
        }
        static const double id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        c->active |= !c->tables[k].identity || c->cc[k].wb_auto;
        c->matrices |= memcmp(c->cc[k].cfg.ccm, id, sizeof id) != 0;
    }
    c->active |= c->matrices || fmt->packing != PC_PACK_8;
    return c;
}

int pl_colour_open(pipeline *p)
{
    pc_rawfmt fmt;
    pc_capture_rawfmt(p->cap, &fmt);
    p->col = build(p->s, p->ncam, &fmt, NULL, p->err, sizeof p->err);
    if (!p->col)
        return -1;
    pthread_mutex_init(&p->col_lock, NULL);
    if (p->col->active) {
        char fn[32];
        pc_rawfmt_name(&fmt, fn, sizeof fn);
        pc_log(&p->d->logger, PC_LOG_INFO, "colour stage on: %s, %d camera%s%s", fn, p->ncam, p->ncam == 1 ? "" : "s",
               p->col->matrices ? ", colour matrices in the final pass" : "");
    }
    return 0;
}

/* Builds the state for settings s and hands it to the stage thread;
 * frozen: its pl_colour.frozen. */
static int request(pipeline *p, const pc_settings *s, unsigned frozen, char *err, size_t errlen)
{
    /* the history under the lock, the tables outside it: the stage
     * thread never waits for a build */
    awb_history *h = malloc(sizeof *h);
    if (!h) {
        snprintf(err, errlen, "colour: out of memory");
        return -1;
    }
    pthread_mutex_lock(&p->col_lock);
    int n = p->col->n;
    pc_rawfmt fmt = p->col->fmt;
    for (int k = 0; k < n; k++) {
        h->awb[k] = p->col->awb[k];
        /* a frozen camera kept its estimate: thawed, it goes on from it */
        h->wb_auto[k] = p->col->cc[k].wb_auto || (p->col->frozen >> k & 1);
    }
    pthread_mutex_unlock(&p->col_lock);
    pl_colour *next = build(s, n, &fmt, h, err, errlen);
    free(h);
    if (!next)
        return -1;
    next->frozen = frozen;
    pthread_mutex_lock(&p->col_lock);
    pl_colour_free(p->col_next);
    p->col_next = next;
    pthread_mutex_unlock(&p->col_lock);
    return 0;
}

int pl_colour_request(pipeline *p, const pc_settings *s, char *err, size_t errlen)
{
    return request(p, s, 0, err, errlen);
}

/* Stage thread: the backend's copies of the tables in force (CUDA:
 * enqueued on the upload stream, so they apply from this set's uploads on). */
static int tables_refresh(pipeline *p)
{
    pl_colour *c = p->col;
    if (c->active && c->tables_stale) {
        for (int k = 0; k < c->n; k++)
            if (pc_backend_set_colour_tables(p->be, k, &c->tables[k], p->st.err, sizeof p->st.err))
                return -1;
        c->tables_stale = 0;
    }
    return 0;
}

/* Stage thread, before a frame set: swap in a requested state. */
static void begin_set(pipeline *p)
{
    pthread_mutex_lock(&p->col_lock);
    pl_colour *next = p->col_next;
    p->col_next = NULL;
    if (next) {
        next->sets = p->col->sets;
        pl_colour *old = p->col;
        p->col = next;
        pl_colour_free(old);
    }
    pthread_mutex_unlock(&p->col_lock);
}

/* Stage thread, while it holds the set: automatic white balance about
 * once a second. "auto" cameras use their own estimate; "auto shared"
 * ones the geometric mean of theirs (one set of gains for all). */
static void auto_wb(pipeline *p, const pc_frameset *set)
{
    pl_colour *c = p->col;
    int every = p->fps > 1 ? (int)(p->fps + 0.5) : 1;
    if (c->sets++ % (uint64_t)every)
        return;
    double ests[PC_CAPTURE_MAX_CAMERAS][3], shared[3] = {0, 0, 0};
    int have[PC_CAPTURE_MAX_CAMERAS] = {0}, nshared = 0;
    for (int k = 0; k < c->n && k < set->n; k++) {
        if (!c->cc[k].wb_auto || (set->substituted >> k & 1))
            continue;
        const pc_colour_cfg *cfg = &c->cc[k].cfg;
        double white = cfg->white_level > 0 ? cfg->white_level : (double)((1 << c->fmt.bits) - 1);
        have[k] = pc_awb_estimate(&c->fmt, set->slab[k], set->width, set->height, cfg->black_level, white, 8,
                                  ests[k]) == 0;
        if (have[k] && c->cc[k].wb_auto == 2) {
            for (int j = 0; j < 3; j++)
                shared[j] += log(ests[k][j]);
            nshared++;
        }
    }
    for (int k = 0; k < c->n && k < set->n; k++) {
        if (!have[k])
            continue;
        double *est = ests[k];
        if (c->cc[k].wb_auto == 2)
            for (int j = 0; j < 3; j++)
                est[j] = exp(shared[j] / nshared);
        /* the gains are also read by reloads and the control thread */
        pthread_mutex_lock(&p->col_lock);
        double before[3] = {c->awb[k].gain[0], c->awb[k].gain[1], c->awb[k].gain[2]};
        int had = c->awb[k].have;
        pc_awb_update(&c->awb[k], est);
        int moved = !had || before[0] != c->awb[k].gain[0] || before[2] != c->awb[k].gain[2];
        pc_colour_cfg g = c->cc[k].cfg;
        for (int j = 0; j < 3; j++)
            g.wb[j] = c->awb[k].gain[j];
        if (moved)
            for (int j = 0; j < 3; j++)
                c->cc[k].cfg.wb[j] = g.wb[j];
        pthread_mutex_unlock(&p->col_lock);
        char e[256];
        if (moved && pc_colour_tables_build(&g, c->fmt.bits, &c->tables[k], e, sizeof e) == 0)
            c->tables_stale = 1;
    }
}

int pl_colour_active(pipeline *p)
{
    begin_set(p);
    return p->col->active;
}

int pl_colour_debayer(pipeline *p, const pc_frameset *set, int slot)
{
    pl_colour *c = p->col;
    auto_wb(p, set);
    if (tables_refresh(p))
        return -1;
    pc_picture *pic = &p->pic[slot];
    pic->bands = c->matrices ? c->bands : NULL;
    pic->n_bands = c->n;
    pic->band_rows = p->slab_h;
    char *err = p->st.err;
    size_t n = sizeof p->st.err;
    for (int k = 0; k < set->n; k++)
        if (pc_backend_upload_raw(p->be, slot, k * p->slab_h, set->slab[k], set->pitch[k], &c->fmt, k, p->slab_h,
                                  err, n))
            return -1;
    if (pc_backend_debayer(p->be, slot, pic, err, n))
        return -1;
    return pl_finish_slot(p, slot); /* the encoders' download, the preview */
}

void pl_colour_stack(pipeline *p, const pc_frameset *set, uint8_t *dst)
{
    pl_colour *c = p->col;
    for (int k = 0; k < set->n; k++)
        pc_colour_slab(&c->fmt, &c->tables[k], set->slab[k], set->pitch[k], set->width, set->height,
                       dst + (size_t)k * set->height * set->width, (size_t)set->width);
}

int pl_colour_describe_wb(pipeline *p, char *buf, size_t len)
{
    /* the gains in force, as config lines (the stage thread writes them
     * under the same lock) */
    pthread_mutex_lock(&p->col_lock);
    pl_colour *c = p->col;
    size_t o = 0;
    int nauto = 0;
    for (int k = 0; k < c->n && o < len; k++) {
        int cam = c->cam[k];
        nauto += c->cc[k].wb_auto;
        o += (size_t)snprintf(buf + o, len - o, "cameras[%d].wb_gains = \"%.4f, %.4f, %.4f\";%s\n", cam >= 0 ? cam : k,
                              c->cc[k].cfg.wb[0], c->cc[k].cfg.wb[1], c->cc[k].cfg.wb[2],
                              c->cc[k].wb_auto ? "  # was auto" : "");
    }
    pthread_mutex_unlock(&p->col_lock);
    return nauto;
}

int pl_colour_freeze_wb(pipeline *p, char *buf, size_t len)
{
    /* a copy of the settings with every auto camera fixed at its gains */
    pc_settings *s = malloc(sizeof *s);
    if (!s) {
        snprintf(buf, len, "out of memory\n");
        return -1;
    }
    pthread_mutex_lock(&p->settings_lock); /* the main thread changes them under it */
    *s = *p->s;
    pthread_mutex_unlock(&p->settings_lock);
    pthread_mutex_lock(&p->col_lock);
    pl_colour *c = p->col;
    unsigned frozen = 0;
    for (int k = 0; k < c->n; k++) {
        int cam = pc_settings_camera_for_slab(s, k);
        /* frozen ones again at their held gains (a second freeze keeps them) */
        if (cam >= 0 && (c->cc[k].wb_auto || (c->frozen >> k & 1))) {
            snprintf(s->cameras[cam].wb_gains, sizeof s->cameras[cam].wb_gains, "%.4f, %.4f, %.4f",
                     c->cc[k].cfg.wb[0], c->cc[k].cfg.wb[1], c->cc[k].cfg.wb[2]);
            frozen |= 1u << k;
        }
    }
    pthread_mutex_unlock(&p->col_lock);
    pl_colour_describe_wb(p, buf, len);
    char err[256];
    int rc = request(p, s, frozen, err, sizeof err);
    if (rc)
        snprintf(buf, len, "freeze failed: %s\n", err);
    free(s);
    return rc;
}

int pl_colour_thaw_wb(pipeline *p, char *buf, size_t len)
{
    /* the settings as they are: "auto" cameras automatic again, going on
     * from the gains they were held at */
    pc_settings *s = malloc(sizeof *s);
    if (!s) {
        snprintf(buf, len, "out of memory\n");
        return -1;
    }
    pthread_mutex_lock(&p->settings_lock);
    *s = *p->s;
    pthread_mutex_unlock(&p->settings_lock);
    char err[256];
    int rc = request(p, s, 0, err, sizeof err);
    free(s);
    if (rc)
        snprintf(buf, len, "thaw failed: %s\n", err);
    else
        pl_colour_describe_wb(p, buf, len);
    return rc;
}

void pl_colour_wb_json(pipeline *p, pc_json *j)
{
    pthread_mutex_lock(&p->col_lock);
    const pl_colour *c = p->col_next ? p->col_next : p->col; /* a change asked for shows at once */
    pc_json_array(j, "cameras");
    for (int k = 0; c && k < c->n; k++) {
        pc_json_object(j, NULL);
        pc_json_int(j, "camera", k);
        pc_json_bool(j, "auto", c->cc[k].wb_auto != 0);
        pc_json_bool(j, "frozen", (c->frozen >> k & 1) != 0);
        pc_json_array(j, "gains");
        for (int i = 0; i < 3; i++)
            pc_json_fixed(j, NULL, c->cc[k].cfg.wb[i], 4);
        pc_json_array_end(j);
        pc_json_object_end(j);
    }
    pc_json_array_end(j);
    pthread_mutex_unlock(&p->col_lock);
}
