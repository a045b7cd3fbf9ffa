/* step_colour.c - the colour step (docs/colour.md): per slab, the raw
 * format, the per-colour tables and the conversion matrix with the
 * camera's colour matrix folded in, built from the settings; automatic
 * white balance; live changes. Its word to the later steps is
 * pl_set.colour (the debayer uploads through the tables, the snapshot
 * stacks through them).
 *
 * Ownership: the stage thread owns the state in force (in_force) and uses
 * it for every frame set. A reload (main thread, the reload op) or a
 * control command (wb freeze) builds a complete new state off the stage
 * thread and hands it over under lock (a freeze marks the cameras it
 * holds, a thaw builds from the settings again); the stage thread swaps it in at
 * the start of a set (begin_set) and frees the old one; the backend gets
 * the tables from the stage thread only. Automatic white balance runs on
 * the stage thread about once a second, on a sample of the raw slab (1/64
 * of the tiles), and rebuilds only the tables of a camera whose smoothed
 * gains moved; the gains are written under lock (the control thread and
 * reloads read them). */
#include "pipeline_int.h"

#include "settings_colour.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One complete colour state, built from the settings. */
typedef struct colour_state {
    int n;                  /* slabs */
    pc_rawfmt fmt;          /* the capture's format */
    int active;             /* 0: 8-bit and nothing set anywhere: the plain upload */
    int matrices;           /* some camera has a colour matrix: per-band final pass */
    pc_camera_colour cc[PC_CAPTURE_MAX_CAMERAS];
    pc_colour_tables tables[PC_CAPTURE_MAX_CAMERAS];
    pc_yuv_coeffs bands[PC_CAPTURE_MAX_CAMERAS];
    pc_awb awb[PC_CAPTURE_MAX_CAMERAS];
    int cam[PC_CAPTURE_MAX_CAMERAS]; /* settings' camera of each slab (-1: the defaults) */
    int tables_stale;       /* the backend's copies of the tables need refreshing */
    unsigned frozen;        /* bit k: slab k's camera is "auto" in the settings, held at
                             * fixed gains by a freeze (pl_colour_freeze_wb) */
    pl_set_colour view;     /* what later steps get (pl_set.colour) */
} colour_state;

/* The step (p->col: the control thread's wb commands reach it there). */
struct pl_colour {
    const pl_step_env *env;
    colour_state *in_force; /* the stage thread's; swapped under lock */
    colour_state *next;     /* lock: built by a reload or a control command */
    pthread_mutex_t lock;
    uint64_t sets;          /* stage thread: frame sets seen (white-balance cadence) */
};

static void state_free(colour_state *c)
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
static colour_state *build(const pc_settings *s, int n, const pc_rawfmt *fmt, const awb_history *prev, char *err,
                           size_t errlen)
{
    colour_state *c = calloc(1, sizeof *c);
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
            state_free(c);
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
            state_free(c);
            return NULL;
        }
        static const double id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        c->active |= !c->tables[k].identity || c->cc[k].wb_auto;
        c->matrices |= memcmp(c->cc[k].cfg.ccm, id, sizeof id) != 0;
    }
    c->active |= c->matrices || fmt->packing != PC_PACK_8;
    c->view = (pl_set_colour){&c->fmt, c->tables, c->matrices ? c->bands : NULL, c->n};
    return c;
}

static int colour_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    pl_colour *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "colour: out of memory");
        return -1;
    }
    *priv = c;
    c->env = env;
    pthread_mutex_init(&c->lock, NULL);
    c->in_force = build(env->s, env->ncam, &env->rawfmt, NULL, err, errlen);
    if (!c->in_force)
        return -1;
    if (c->in_force->active) {
        char fn[32];
        pc_rawfmt_name(&env->rawfmt, fn, sizeof fn);
        pc_log(env->log, PC_LOG_INFO, "colour stage on: %s, %d camera%s%s", fn, env->ncam, env->ncam == 1 ? "" : "s",
               c->in_force->matrices ? ", colour matrices in the final pass" : "");
    }
    if (env->p)
        env->p->col = c; /* the control thread's wb commands */
    return 0;
}

static void colour_close(void *priv)
{
    pl_colour *c = priv;
    if (!c)
        return;
    if (c->env->p && c->env->p->col == c)
        c->env->p->col = NULL;
    state_free(c->in_force);
    state_free(c->next);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* Any thread: builds the state for settings s off the stage thread and
 * hands it over for the next set; frozen: its colour_state.frozen. */
static int request(pl_colour *c, const pc_settings *s, unsigned frozen, char *err, size_t errlen)
{
    /* the history under the lock, the tables outside it: the stage
     * thread never waits for a build */
    awb_history *h = malloc(sizeof *h);
    if (!h) {
        snprintf(err, errlen, "colour: out of memory");
        return -1;
    }
    pthread_mutex_lock(&c->lock);
    int n = c->in_force->n;
    pc_rawfmt fmt = c->in_force->fmt;
    for (int k = 0; k < n; k++) {
        h->awb[k] = c->in_force->awb[k];
        /* a frozen camera kept its estimate: thawed, it goes on from it */
        h->wb_auto[k] = c->in_force->cc[k].wb_auto || (c->in_force->frozen >> k & 1);
    }
    pthread_mutex_unlock(&c->lock);
    colour_state *next = build(s, n, &fmt, h, err, errlen);
    free(h);
    if (!next)
        return -1;
    next->frozen = frozen;
    pthread_mutex_lock(&c->lock);
    state_free(c->next);
    c->next = next;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

static int colour_reload(void *priv, const pc_settings *s, unsigned live, char *msg, size_t msglen)
{
    if (!(live & PC_LIVE_COLOUR))
        return PL_RELOAD_NONE;
    char err[512];
    if (request(priv, s, 0, err, sizeof err)) {
        snprintf(msg, msglen, "colour: %s; keeping the colour in force", err);
        return -1;
    }
    snprintf(msg, msglen, "colour settings applied from the next frame set");
    return PL_RELOAD_LIVE;
}

/* Stage thread: the backend's copies of the tables in force (CUDA:
 * enqueued on the upload stream, so they apply from this set's uploads on). */
static int tables_refresh(pl_colour *c, pl_set *set)
{
    colour_state *st = c->in_force;
    if (st->active && st->tables_stale) {
        char e[400];
        for (int k = 0; k < st->n; k++)
            if (pc_backend_set_colour_tables(c->env->be, k, &st->tables[k], e, sizeof e)) {
                snprintf(set->err, set->errlen, "colour: camera %d's tables to the %s backend: %s", k,
                         pc_backend_name(c->env->be), e);
                return -1;
            }
        st->tables_stale = 0;
    }
    return 0;
}

/* Stage thread, before a frame set: swap in a requested state. */
static void begin_set(pl_colour *c)
{
    pthread_mutex_lock(&c->lock);
    colour_state *next = c->next;
    c->next = NULL;
    if (next) {
        colour_state *old = c->in_force;
        c->in_force = next;
        state_free(old);
    }
    pthread_mutex_unlock(&c->lock);
}

/* Stage thread, while it holds the set: automatic white balance about
 * once a second. "auto" cameras use their own estimate; "auto shared"
 * ones the geometric mean of theirs (one set of gains for all). */
static void auto_wb(pl_colour *cs, const pc_frameset *set)
{
    colour_state *c = cs->in_force;
    double fps = cs->env->fps;
    int every = fps > 1 ? (int)(fps + 0.5) : 1;
    if (cs->sets++ % (uint64_t)every)
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
        pthread_mutex_lock(&cs->lock);
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
        pthread_mutex_unlock(&cs->lock);
        char e[256];
        if (moved && pc_colour_tables_build(&g, c->fmt.bits, &c->tables[k], e, sizeof e) == 0)
            c->tables_stale = 1;
    }
}

/* Stage thread, per set: a requested state swapped in; when the stage is
 * on, white balance and the backend's tables, and the tables for the
 * later steps. */
static int colour_run(void *priv, pl_set *set)
{
    pl_colour *c = priv;
    begin_set(c);
    set->colour = NULL;
    if (!c->in_force->active)
        return 0;
    auto_wb(c, set->frames);
    if (tables_refresh(c, set))
        return -1;
    set->colour = &c->in_force->view;
    return 0;
}

static void colour_describe(void *priv, char *buf, size_t len)
{
    pl_colour *c = priv;
    pthread_mutex_lock(&c->lock);
    const colour_state *st = c->in_force;
    int nauto = 0;
    for (int k = 0; k < st->n; k++)
        nauto += st->cc[k].wb_auto != 0;
    char fn[32];
    pc_rawfmt_name(&st->fmt, fn, sizeof fn);
    if (!st->active)
        snprintf(buf, len, "off: %s as captured", fn);
    else
        snprintf(buf, len, "%s through per-camera tables%s%s", fn, st->matrices ? ", colour matrices" : "",
                 nauto ? ", automatic white balance" : "");
    pthread_mutex_unlock(&c->lock);
}

const pl_step_ops pl_step_colour = {
    .name = "colour",
    .prepare = colour_prepare,
    .run = colour_run,
    .reload = colour_reload,
    .describe = colour_describe,
    .close = colour_close,
};

/* ------------------------------------------------ the control thread's */

int pl_colour_describe_wb(pipeline *p, char *buf, size_t len)
{
    /* the gains in force, as config lines (the stage thread writes them
     * under the same lock) */
    pl_colour *cs = p->col;
    pthread_mutex_lock(&cs->lock);
    colour_state *c = cs->in_force;
    size_t o = 0;
    int nauto = 0;
    for (int k = 0; k < c->n && o < len; k++) {
        int cam = c->cam[k];
        nauto += c->cc[k].wb_auto;
        o += (size_t)snprintf(buf + o, len - o, "cameras[%d].wb_gains = \"%.4f, %.4f, %.4f\";%s\n", cam >= 0 ? cam : k,
                              c->cc[k].cfg.wb[0], c->cc[k].cfg.wb[1], c->cc[k].cfg.wb[2],
                              c->cc[k].wb_auto ? "  # was auto" : "");
    }
    pthread_mutex_unlock(&cs->lock);
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
    pl_colour *cs = p->col;
    pthread_mutex_lock(&cs->lock);
    colour_state *c = cs->in_force;
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
    pthread_mutex_unlock(&cs->lock);
    pl_colour_describe_wb(p, buf, len);
    char err[256];
    int rc = request(cs, s, frozen, err, sizeof err);
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
    int rc = request(p->col, s, 0, err, sizeof err);
    free(s);
    if (rc)
        snprintf(buf, len, "thaw failed: %s\n", err);
    else
        pl_colour_describe_wb(p, buf, len);
    return rc;
}

void pl_colour_wb_json(pipeline *p, pc_json *j)
{
    pl_colour *cs = p->col;
    pc_json_array(j, "cameras");
    if (cs) {
        pthread_mutex_lock(&cs->lock);
        const colour_state *c = cs->next ? cs->next : cs->in_force; /* a change asked for shows at once */
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
        pthread_mutex_unlock(&cs->lock);
    }
    pc_json_array_end(j);
}
