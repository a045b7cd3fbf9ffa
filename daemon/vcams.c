/* vcams.c - the running daemon's virtual cameras (vcams.h): per view its
 * motion (vcam/vcam_motion.c), the rig's coverage at its aspect
 * (vcam_coverage.c), limits, presets, follow state (vcam/follow.c); the
 * commands' grammar, checked to the last word before anything changes;
 * the stage thread's step; status and reload.
 *
 * Who owns what:
 *   name, width, height, n          constant after open
 *   view[i].cov                     cov_lock (rwlock): clamps read it on any
 *                                   thread; a reload of another rig writes it
 *   everything else of view[i]      lock (mutex): commands, the step, status,
 *                                   reload; held for copies only - a command's
 *                                   clamp and the follow target are computed
 *                                   outside it
 *   st[i] (the follow state), grid  the stage thread (pl_vcams_step); grid is
 *                                   set by pl_vcams_set_grid on that thread
 *                                   (have_grid mirrored under lock for readers)
 * A command reads what it builds on (the goal, the limits, a preset) under
 * the lock, clamps outside it, and applies under it only if the view's
 * epoch (bumped by every change) is the one it read; else it starts again,
 * so a relative move never builds on a goal another thread replaced. */
#include "vcams.h"

#include "settings_rig.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_WORDS 12
#define RETRIES 8

typedef struct vc_view {
    char name[PC_NAME_LEN];
    int width, height;
    pc_vcam_coverage cov;       /* cov_lock */
    /* lock: */
    pc_vcam_settings conf;      /* the settings in force (a reload compares) */
    pc_vcam_limits lim;
    pc_follow_params fpar;
    pc_vcam_motion mot;
    pc_preset_list presets;
    int follow;
    int fol_reset;              /* -> stage thread: start the follow state afresh */
    uint64_t epoch;
    int moving;
    double activity;
    uint64_t commands, clamped, refused;
    char last_clamp[160];
} vc_view;

typedef struct vc_stage {
    pc_follow fol;
    int need_init;
} vc_stage;

struct pl_vcams {
    pthread_mutex_t lock;
    pthread_rwlock_t cov_lock;
    pc_rig rig;                 /* cov_lock: the rig in force (its panorama, for the web page's map) */
    int n;
    double fps;
    int have_grid;              /* lock (a copy of the stage thread's) */
    vc_view view[PC_MAX_VCAMS];
    /* the stage thread's */
    vc_stage st[PC_MAX_VCAMS];
    pc_follow_grid *grid;
};

/* An angle as the answers show it: no "-0.0". */
static double shown(double deg) { return fabs(deg) < 0.05 ? 0.0 : deg; }

static double wrap_pan(double p)
{
    p = fmod(p, 360.0);
    if (p > 180.0)
        p -= 360.0;
    if (p <= -180.0)
        p += 360.0;
    return p;
}

/* ------------------------------------------------------------ set-up */

static void view_settings(vc_view *w, const pc_vcam_settings *c)
{
    w->conf = *c;
    pc_settings_vcam_limits(c, &w->lim);
    pc_settings_vcam_follow(c, &w->fpar);
    w->presets = c->presets;
}

int pl_vcams_open(pl_vcams **out, const pc_settings *s, const pc_rig *rig, const pc_vcam_pose *starts, double fps,
                  char *err, size_t errlen)
{
    *out = NULL;
    if (s->vcam_count <= 0 || s->vcam_count > PC_MAX_VCAMS) {
        snprintf(err, errlen, "virtual cameras: %d configured (1..%d open)", s->vcam_count, PC_MAX_VCAMS);
        return -1;
    }
    pl_vcams *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errlen, "virtual cameras: out of memory");
        return -1;
    }
    v->n = s->vcam_count;
    v->fps = fps;
    v->rig = *rig;
    for (int i = 0; i < v->n; i++) {
        vc_view *w = &v->view[i];
        const pc_vcam_settings *c = &s->vcams[i];
        snprintf(w->name, sizeof w->name, "%s", c->name);
        w->width = c->width;
        w->height = c->height;
        char why[320];
        if (pc_vcam_coverage_init(&w->cov, rig, c->width, c->height, why, sizeof why)) {
            snprintf(err, errlen, "virtual camera %s: %s", c->name, why);
            free(v);
            return -1;
        }
        view_settings(w, c);
        pc_vcam_pose p = {c->pan, c->tilt, c->hfov};
        if (starts)
            p = starts[i];
        else
            pc_vcam_clamp(&w->cov, &w->lim, &p, why, sizeof why);
        pc_vcam_motion_init(&w->mot, &w->lim, p);
        w->follow = c->mode == PC_VCAM_FOLLOW;
        w->fol_reset = 1;
    }
    pthread_mutex_init(&v->lock, NULL);
    pthread_rwlock_init(&v->cov_lock, NULL);
    *out = v;
    return 0;
}

void pl_vcams_close(pl_vcams *v)
{
    if (!v)
        return;
    pthread_mutex_destroy(&v->lock);
    pthread_rwlock_destroy(&v->cov_lock);
    free(v->grid);
    free(v);
}

int pl_vcams_count(const pl_vcams *v) { return v ? v->n : 0; }

int pl_vcams_find(const pl_vcams *v, const char *name)
{
    for (int i = 0; v && i < v->n; i++)
        if (strcmp(v->view[i].name, name) == 0)
            return i;
    return -1;
}

int pl_vcams_rig_cameras(pl_vcams *v, pc_cam_model *out, int max)
{
    pthread_rwlock_rdlock(&v->cov_lock);
    int n = v->view[0].cov.ncam < max ? v->view[0].cov.ncam : max;
    memcpy(out, v->view[0].cov.cam, (size_t)n * sizeof *out);
    pthread_rwlock_unlock(&v->cov_lock);
    return n;
}

void pl_vcams_panorama_view(pl_vcams *v, int w, int h, pc_view_model *out)
{
    pthread_rwlock_rdlock(&v->cov_lock);
    pc_rig_panorama_view(&v->rig, w, h, out);
    pthread_rwlock_unlock(&v->cov_lock);
}

/* Any thread: p clamped into view i's coverage and lim. */
static int clamp(pl_vcams *v, int i, const pc_vcam_limits *lim, pc_vcam_pose *p, char *why, size_t whylen)
{
    pthread_rwlock_rdlock(&v->cov_lock);
    int r = pc_vcam_clamp(&v->view[i].cov, lim, p, why, whylen);
    pthread_rwlock_unlock(&v->cov_lock);
    return r;
}

/* ------------------------------------------------------------ stepping */

void pl_vcams_set_grid(pl_vcams *v, const pc_follow_grid *g)
{
    if (!v->grid)
        v->grid = malloc(sizeof *v->grid);
    if (v->grid && g)
        *v->grid = *g;
    pthread_mutex_lock(&v->lock);
    v->have_grid = v->grid && g;
    pthread_mutex_unlock(&v->lock);
}

int pl_vcams_want_activity(pl_vcams *v)
{
    int want = 0;
    pthread_mutex_lock(&v->lock);
    for (int i = 0; i < v->n; i++)
        want |= v->view[i].follow;
    pthread_mutex_unlock(&v->lock);
    return want;
}

void pl_vcams_step(pl_vcams *v, double dt, const uint32_t *counts, pc_vcam_pose *poses)
{
    if (!(dt >= 0 && dt < 1e6))
        dt = 0;
    struct {
        int follow, reset;
        uint64_t epoch;
        pc_vcam_pose cur;
        pc_vcam_limits lim;
        pc_follow_params fpar;
        int have;
        pc_vcam_pose goal;
    } sn[PC_MAX_VCAMS];
    pthread_mutex_lock(&v->lock);
    for (int i = 0; i < v->n; i++) {
        vc_view *w = &v->view[i];
        sn[i].follow = w->follow;
        sn[i].reset = w->fol_reset;
        w->fol_reset = 0;
        sn[i].epoch = w->epoch;
        sn[i].cur = w->mot.cur;
        sn[i].lim = w->lim;
        sn[i].fpar = w->fpar;
        sn[i].have = 0;
    }
    pthread_mutex_unlock(&v->lock);

    /* the follow mode's targets: the stage thread's own state */
    for (int i = 0; i < v->n; i++) {
        vc_stage *st = &v->st[i];
        if (sn[i].reset)
            st->need_init = 1;
        if (!sn[i].follow || !counts || !v->grid)
            continue;
        if (st->need_init) {
            pc_follow_init(&st->fol, &sn[i].fpar, sn[i].cur);
            st->need_init = 0;
        }
        pc_vcam_pose g;
        if (pc_follow_update(&st->fol, v->grid, counts, dt, &g)) {
            char why[160];
            clamp(v, i, &sn[i].lim, &g, why, sizeof why);
            sn[i].goal = g;
            sn[i].have = 1;
        }
    }

    pthread_mutex_lock(&v->lock);
    for (int i = 0; i < v->n; i++) {
        vc_view *w = &v->view[i];
        /* a command since the snapshot took the view: its goal stands */
        if (sn[i].have && w->follow && w->epoch == sn[i].epoch)
            pc_vcam_motion_go(&w->mot, sn[i].goal, PC_VCAM_MOVE_SMOOTH, 0);
        if (sn[i].follow && counts && v->grid)
            w->activity = v->st[i].fol.activity;
        poses[i] = pc_vcam_motion_step(&w->mot, dt);
        w->moving = pc_vcam_motion_moving(&w->mot);
    }
    pthread_mutex_unlock(&v->lock);
}

/* ------------------------------------------------------------ status */

static void fill_status(const vc_view *w, const pc_vcam_coverage *cov, pl_vcam_status *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", w->name);
    o->width = w->width;
    o->height = w->height;
    o->pose = w->mot.cur;
    o->goal = w->mot.goal;
    o->follow = w->follow;
    o->moving = w->moving || pc_vcam_motion_moving(&w->mot);
    o->activity = w->activity;
    o->max_hfov = w->lim.max_hfov < cov->max_hfov ? w->lim.max_hfov : cov->max_hfov;
    o->min_hfov = w->lim.min_hfov < o->max_hfov ? w->lim.min_hfov : o->max_hfov;
    o->max_speed = w->lim.max_speed;
    o->commands = w->commands;
    o->clamped = w->clamped;
    o->refused = w->refused;
    snprintf(o->last_clamp, sizeof o->last_clamp, "%s", w->last_clamp);
    o->npresets = w->presets.count;
    for (int k = 0; k < w->presets.count && k < PC_MAX_PRESETS; k++)
        snprintf(o->presets[k], sizeof o->presets[k], "%s", w->presets.item[k].name);
}

int pl_vcams_status(pl_vcams *v, pl_vcam_status *out, int max)
{
    int n = v->n < max ? v->n : max;
    pthread_rwlock_rdlock(&v->cov_lock);
    pthread_mutex_lock(&v->lock);
    for (int i = 0; i < n; i++)
        fill_status(&v->view[i], &v->view[i].cov, &out[i]);
    pthread_mutex_unlock(&v->lock);
    pthread_rwlock_unlock(&v->cov_lock);
    return n;
}

static int pose_text(char *buf, size_t len, pc_vcam_pose p)
{
    return snprintf(buf, len, "pan %.1f tilt %.1f hfov %.1f", shown(p.pan), shown(p.tilt), p.hfov);
}

void pl_vcams_status_line(const pl_vcam_status *st, char *buf, size_t len)
{
    char now[80], goal[80];
    pose_text(now, sizeof now, st->pose);
    pose_text(goal, sizeof goal, st->goal);
    size_t o = (size_t)snprintf(buf, len, "%s %dx%d: %s", st->name, st->width, st->height, now);
    if (st->moving && o < len)
        o += (size_t)snprintf(buf + o, len - o, ", going to %s", goal);
    if (o < len)
        o += (size_t)snprintf(buf + o, len - o, ", %s, %s; %llu commands, %llu clamped, %llu refused",
                              st->follow ? "follow" : "manual", st->moving ? "moving" : "still",
                              (unsigned long long)st->commands, (unsigned long long)st->clamped,
                              (unsigned long long)st->refused);
    if (st->npresets && o < len) {
        o += (size_t)snprintf(buf + o, len - o, "; presets");
        for (int k = 0; k < st->npresets && o < len; k++)
            o += (size_t)snprintf(buf + o, len - o, " %s", st->presets[k]);
    }
    if (st->last_clamp[0] && o < len)
        snprintf(buf + o, len - o, "; last clamp: %s", st->last_clamp);
}

/* ------------------------------------------------------------ commands */

typedef enum verb { V_GOTO, V_MOVE, V_ZOOM, V_PRESET, V_SAVE, V_FOLLOW, V_STOP } verb;
static const char *const verb_names[] = {"goto", "move", "zoom", "preset", "save", "follow", "stop"};
#define VERBS "goto, move, zoom, preset, save, follow, stop"

/* A plain decimal number (sign, digits, point, exponent; no hex, no
 * inf/nan words), finite, within [lo, hi]. 0, or -1 with err. */
static int number(const char *tok, const char *what, double lo, double hi, const char *unit, double *out, char *err,
                  size_t errlen)
{
    const char *p = tok;
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (digits && (*p == 'e' || *p == 'E')) {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            digits = 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (!digits || *p) {
        snprintf(err, errlen, "%s \"%.40s\" is not a number (%s)", what, tok, unit);
        return -1;
    }
    double x = strtod(tok, NULL);
    if (!isfinite(x)) {
        snprintf(err, errlen, "%s %.40s is not a finite number", what, tok);
        return -1;
    }
    if (x < lo || x > hi) {
        snprintf(err, errlen, "%s %.40s is out of range: %g..%g %s", what, tok, lo, hi, unit);
        return -1;
    }
    *out = x;
    return 0;
}

static int is_how(const char *w) { return !strcasecmp(w, "speed") || !strcasecmp(w, "time"); }

/* [speed S | time T] at word k of n: the rest of the command. */
static int parse_how(char **word, int k, int n, const char *usage, pc_vcam_move *how, double *value, char *err,
                     size_t errlen)
{
    *how = PC_VCAM_MOVE_SMOOTH;
    *value = 0;
    if (k >= n)
        return 0;
    if (!is_how(word[k])) {
        snprintf(err, errlen, "unexpected \"%.40s\"; usage: %s", word[k], usage);
        return -1;
    }
    int speed = !strcasecmp(word[k], "speed");
    if (k + 1 >= n) {
        snprintf(err, errlen, "%s needs a value (%s)", speed ? "speed" : "time", speed ? "deg/s" : "seconds");
        return -1;
    }
    if (speed ? number(word[k + 1], "speed", 0.1, 1000, "deg/s", value, err, errlen)
              : number(word[k + 1], "time", 0.05, 600, "seconds", value, err, errlen))
        return -1;
    if (k + 2 < n) {
        snprintf(err, errlen, "extra words after %s %s: \"%.40s\"; usage: %s", word[k], word[k + 1], word[k + 2],
                 usage);
        return -1;
    }
    *how = speed ? PC_VCAM_MOVE_SPEED : PC_VCAM_MOVE_DURATION;
    return 0;
}

/* A parsed command, checked against the grammar and the ranges; the view
 * itself is consulted only when it is applied. */
typedef struct parsed {
    int view;
    verb verb;
    double a[3];
    int na;
    pc_vcam_move how;
    double value;
    char name[PC_NAME_LEN]; /* preset, save */
    int on;                 /* follow */
} parsed;

static int parse_verb(const vc_view *w, char **word, int n, parsed *c, char *err, size_t errlen)
{
    int vb = -1;
    for (int k = 0; k < (int)(sizeof verb_names / sizeof *verb_names); k++)
        if (!strcasecmp(word[1], verb_names[k]))
            vb = k;
    if (vb < 0) {
        snprintf(err, errlen, "unknown command \"%.40s\" for %s; one of " VERBS, word[1], w->name);
        return -1;
    }
    c->verb = (verb)vb;
    static const struct {
        const char *usage;
        int min, max; /* numbers */
        const char *what[3], *unit[3];
        double lo[3], hi[3];
    } g[] = {
        [V_GOTO] = {"goto PAN TILT [HFOV] [speed S | time T]", 2, 3, {"PAN", "TILT", "HFOV"},
                    {"degrees", "degrees", "degrees"}, {-180, -90, 1}, {180, 90, 179}},
        [V_MOVE] = {"move DPAN DTILT [DHFOV] [speed S | time T]", 2, 3, {"DPAN", "DTILT", "DHFOV"},
                    {"degrees", "degrees", "degrees"}, {-360, -180, -178}, {360, 180, 178}},
        [V_ZOOM] = {"zoom HFOV [speed S | time T]", 1, 1, {"HFOV"}, {"degrees"}, {1}, {179}},
    };
    switch (c->verb) {
    case V_GOTO:
    case V_MOVE:
    case V_ZOOM: {
        int k = 2;
        for (; k < n && k - 2 < g[c->verb].max && !is_how(word[k]); k++)
            if (number(word[k], g[c->verb].what[k - 2], g[c->verb].lo[k - 2], g[c->verb].hi[k - 2],
                       g[c->verb].unit[k - 2], &c->a[k - 2], err, errlen))
                return -1;
        c->na = k - 2;
        if (c->na < g[c->verb].min) {
            snprintf(err, errlen, "%s needs %s; usage: %s", verb_names[c->verb], g[c->verb].what[c->na],
                     g[c->verb].usage);
            return -1;
        }
        return parse_how(word, k, n, g[c->verb].usage, &c->how, &c->value, err, errlen);
    }
    case V_PRESET:
    case V_SAVE: {
        const char *usage = c->verb == V_SAVE ? "save PNAME" : "preset PNAME [speed S | time T]";
        if (n < 3) {
            snprintf(err, errlen, "%s needs a preset name; usage: %s", verb_names[c->verb], usage);
            return -1;
        }
        if (!pc_settings_name_ok(word[2])) {
            snprintf(err, errlen, "preset name \"%.40s%s\": letters, digits, '-', '_' and '.', at most %d", word[2],
                     strlen(word[2]) > 40 ? "..." : "", PC_NAME_LEN - 1);
            return -1;
        }
        snprintf(c->name, sizeof c->name, "%s", word[2]);
        if (c->verb == V_SAVE) {
            if (n > 3) {
                snprintf(err, errlen, "extra words after save %s: \"%.40s\"; usage: %s", word[2], word[3], usage);
                return -1;
            }
            return 0;
        }
        return parse_how(word, 3, n, usage, &c->how, &c->value, err, errlen);
    }
    case V_FOLLOW:
        if (n < 3 || (strcasecmp(word[2], "on") && strcasecmp(word[2], "off"))) {
            snprintf(err, errlen, "follow needs on or off%s%.40s%s; usage: follow on|off", n < 3 ? "" : ", not \"",
                     n < 3 ? "" : word[2], n < 3 ? "" : "\"");
            return -1;
        }
        if (n > 3) {
            snprintf(err, errlen, "extra words after follow %s: \"%.40s\"; usage: follow on|off", word[2], word[3]);
            return -1;
        }
        c->on = !strcasecmp(word[2], "on");
        return 0;
    case V_STOP:
        if (n > 2) {
            snprintf(err, errlen, "extra words after stop: \"%.40s\"; usage: stop", word[2]);
            return -1;
        }
        return 0;
    }
    return -1;
}

static const char follow_off_note[] =
    "; follow off: an operator's command takes the view (follow on hands it back)";

/* The move commands: goto, move, zoom, preset, stop. */
static int apply_move(pl_vcams *v, const parsed *c, char *ans, size_t len, pl_vcam_result *res)
{
    vc_view *w = &v->view[c->view];
    for (int attempt = 0;; attempt++) {
        pthread_mutex_lock(&v->lock);
        const uint64_t epoch = w->epoch;
        const pc_vcam_pose base = w->mot.goal, cur = w->mot.cur, vel = w->mot.vel;
        const pc_vcam_limits lim = w->lim;
        pc_vcam_preset pre = {0};
        int found = 0;
        for (int k = 0; c->verb == V_PRESET && k < w->presets.count; k++)
            if (!strcmp(w->presets.item[k].name, c->name)) {
                pre = w->presets.item[k];
                found = 1;
            }
        if (c->verb == V_PRESET && !found) {
            size_t o = (size_t)snprintf(ans, len, "ERR %s has no preset \"%s\"; ", w->name, c->name);
            if (!w->presets.count && o < len)
                o += (size_t)snprintf(ans + o, len - o, "it has none (save NAME makes one)");
            for (int k = 0; k < w->presets.count && o < len; k++)
                o += (size_t)snprintf(ans + o, len - o, "%s%s", k ? ", " : "its presets: ", w->presets.item[k].name);
            w->refused++;
            pthread_mutex_unlock(&v->lock);
            return -1;
        }
        pthread_mutex_unlock(&v->lock);

        pc_vcam_pose want = base;
        switch (c->verb) {
        case V_GOTO:
            want = (pc_vcam_pose){c->a[0], c->a[1], c->na == 3 ? c->a[2] : base.hfov};
            break;
        case V_MOVE:
            want = (pc_vcam_pose){wrap_pan(base.pan + c->a[0]), base.tilt + c->a[1],
                                  base.hfov + (c->na == 3 ? c->a[2] : 0)};
            break;
        case V_ZOOM:
            want.hfov = c->a[0];
            break;
        case V_PRESET:
            want = (pc_vcam_pose){pre.pan, pre.tilt, pre.hfov > 0 ? pre.hfov : base.hfov};
            break;
        default: /* stop: where braking at the limits ends (no coming back) */
            want = pc_vcam_stop_pose(&lim, cur, vel);
            want.pan = wrap_pan(want.pan);
            break;
        }
        char why[160];
        int clamped = clamp(v, c->view, &lim, &want, why, sizeof why);

        pthread_mutex_lock(&v->lock);
        if (w->epoch != epoch && attempt < RETRIES) {
            pthread_mutex_unlock(&v->lock); /* another command changed it: again */
            continue;
        }
        pc_vcam_motion_go(&w->mot, want, c->how, c->value);
        const double pace = w->mot.pace;
        const int pace_zoom = w->mot.pace_zoom;
        const pc_vcam_pace pace_why = w->mot.pace_why;
        const int was_follow = w->follow;
        w->follow = 0;
        w->epoch++;
        w->commands++;
        if (clamped) {
            w->clamped++;
            snprintf(w->last_clamp, sizeof w->last_clamp, "%s", why);
        }
        pthread_mutex_unlock(&v->lock);

        char pose[80];
        pose_text(pose, sizeof pose, want);
        size_t o = (size_t)snprintf(ans, len, "OK %s %s%s%s -> %s", w->name, verb_names[c->verb],
                                    c->verb == V_PRESET ? " " : "", c->verb == V_PRESET ? c->name : "", pose);
        /* the speed the move runs at: a zoom alone at the hfov's (within
         * max_zoom_speed), a move whose zoom takes longer at that zoom's */
        if (c->how == PC_VCAM_MOVE_SPEED && o < len)
            o += (size_t)snprintf(ans + o, len - o, " at %.1f deg/s%s%s", pace, pace_zoom ? " of zoom" : "",
                                  pace_why == PC_VCAM_PACE_MAX_SPEED  ? " (its max_speed)"
                                  : pace_why == PC_VCAM_PACE_MAX_ZOOM ? " (its max_zoom_speed)"
                                  : pace_why == PC_VCAM_PACE_ZOOM_TIME
                                      ? " (its zoom takes longer at its max_zoom_speed)"
                                      : "");
        else if (c->how == PC_VCAM_MOVE_DURATION && o < len)
            o += (size_t)snprintf(ans + o, len - o, " in %.2f s", c->value);
        if (clamped && o < len)
            o += (size_t)snprintf(ans + o, len - o, "; clamped: %s", why);
        if (was_follow && o < len)
            snprintf(ans + o, len - o, "%s", follow_off_note);
        if (res) {
            res->changed = 1;
            res->goal = want;
            res->clamped = clamped;
            snprintf(res->why, sizeof res->why, "%s", clamped ? why : "");
            res->follow_off = was_follow;
        }
        return 0;
    }
}

static int apply_save(pl_vcams *v, const parsed *c, char *ans, size_t len, pl_vcam_result *res)
{
    vc_view *w = &v->view[c->view];
    pthread_mutex_lock(&v->lock);
    int k = 0;
    while (k < w->presets.count && strcmp(w->presets.item[k].name, c->name))
        k++;
    if (k == PC_MAX_PRESETS) {
        w->refused++;
        pthread_mutex_unlock(&v->lock);
        snprintf(ans, len, "ERR %s has %d presets, the most it keeps; replace one (save an existing name)", w->name,
                 PC_MAX_PRESETS);
        return -1;
    }
    const int replaced = k < w->presets.count;
    pc_vcam_preset *p = &w->presets.item[k];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", c->name);
    p->pan = w->mot.cur.pan;
    p->tilt = w->mot.cur.tilt;
    p->hfov = w->mot.cur.hfov;
    if (!replaced)
        w->presets.count++;
    w->commands++;
    const pc_vcam_pose pose = w->mot.cur;
    pthread_mutex_unlock(&v->lock);
    char pt[80];
    pose_text(pt, sizeof pt, pose);
    snprintf(ans, len, "OK %s save %s: %s (%s; kept until a reload)", w->name, c->name, pt,
             replaced ? "replaced" : "new");
    if (res) {
        res->changed = 1;
        res->goal = pose;
    }
    return 0;
}

static int apply_follow(pl_vcams *v, const parsed *c, char *ans, size_t len, pl_vcam_result *res)
{
    vc_view *w = &v->view[c->view];
    pthread_mutex_lock(&v->lock);
    const int was = w->follow, grid = v->have_grid;
    if (c->on && !was)
        w->fol_reset = 1;
    w->follow = c->on;
    if (was != c->on) {
        w->epoch++;
        w->commands++;
    }
    const pc_vcam_pose goal = w->mot.goal;
    pthread_mutex_unlock(&v->lock);
    snprintf(ans, len, "OK %s follow %s%s%s", w->name, c->on ? "on" : "off", was == c->on ? " (it was already)" : "",
             c->on && !grid ? "; no activity map yet: the view holds until one comes" : "");
    if (res) {
        res->changed = was != c->on;
        res->goal = goal;
    }
    return 0;
}

/* Splits line (a copy) into words; -1 with err on a control character. */
static int split(char *line, char **word, int *n, char *err, size_t errlen)
{
    *n = 0;
    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != ' ' && *p != '\t') {
            snprintf(err, errlen, "the command holds a control character (byte %d)", (int)(p - line));
            return -1;
        }
    char *save = NULL;
    for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (*n == MAX_WORDS) {
            snprintf(err, errlen, "too many words (more than %d)", MAX_WORDS);
            return -1;
        }
        word[(*n)++] = t;
    }
    return 0;
}

int pl_vcams_exec(pl_vcams *v, const char *cmd, char *answer, size_t len, pl_vcam_result *res)
{
    char line[PL_VCAMS_CMD_MAX + 1], err[400];
    char *word[MAX_WORDS];
    int n;
    if (res) {
        memset(res, 0, sizeof *res);
        res->view = -1;
    }
    size_t cl = strnlen(cmd, PL_VCAMS_CMD_MAX + 1);
    if (cl > PL_VCAMS_CMD_MAX) {
        snprintf(answer, len, "ERR the command is too long (at most %d bytes)", PL_VCAMS_CMD_MAX);
        return -1;
    }
    memcpy(line, cmd, cl + 1);
    if (split(line, word, &n, err, sizeof err)) {
        snprintf(answer, len, "ERR %s", err);
        return -1;
    }
    if (n == 0) { /* every view */
        pl_vcam_status *st = malloc(sizeof *st * (size_t)v->n);
        if (!st) {
            snprintf(answer, len, "ERR out of memory");
            return -1;
        }
        int m = pl_vcams_status(v, st, v->n);
        size_t o = 0;
        for (int i = 0; i < m && o < len; i++) {
            char l[1024];
            pl_vcams_status_line(&st[i], l, sizeof l);
            o += (size_t)snprintf(answer + o, len - o, "%s\n", l);
        }
        if (o < len)
            snprintf(answer + o, len - o, "OK %d virtual camera%s", m, m == 1 ? "" : "s");
        free(st);
        return 0;
    }
    parsed c = {0};
    c.view = pl_vcams_find(v, word[0]);
    if (c.view < 0) {
        size_t o = (size_t)snprintf(answer, len, "ERR unknown virtual camera \"%.40s%s\"; there %s", word[0],
                                    strlen(word[0]) > 40 ? "..." : "", v->n == 1 ? "is" : "are");
        for (int i = 0; i < v->n && o < len; i++)
            o += (size_t)snprintf(answer + o, len - o, "%s %s", i ? "," : "", v->view[i].name);
        return -1;
    }
    if (res)
        res->view = c.view;
    vc_view *w = &v->view[c.view];
    if (n == 1) {
        pl_vcam_status st;
        pthread_rwlock_rdlock(&v->cov_lock);
        pthread_mutex_lock(&v->lock);
        fill_status(w, &w->cov, &st);
        pthread_mutex_unlock(&v->lock);
        pthread_rwlock_unlock(&v->cov_lock);
        char l[1024];
        pl_vcams_status_line(&st, l, sizeof l);
        snprintf(answer, len, "OK %s", l);
        if (res)
            res->goal = st.goal;
        return 0;
    }
    if (parse_verb(w, word, n, &c, err, sizeof err)) {
        pthread_mutex_lock(&v->lock);
        w->refused++;
        pthread_mutex_unlock(&v->lock);
        snprintf(answer, len, "ERR %s: %s", w->name, err);
        return -1;
    }
    switch (c.verb) {
    case V_SAVE: return apply_save(v, &c, answer, len, res);
    case V_FOLLOW: return apply_follow(v, &c, answer, len, res);
    default: return apply_move(v, &c, answer, len, res);
    }
}

int pl_vcams_command(pl_vcams *v, const char *cmd, char *answer, size_t len)
{
    return pl_vcams_exec(v, cmd, answer, len, NULL);
}

/* ------------------------------------------------------------ reload */

static int same_pose(const pc_vcam_settings *a, const pc_vcam_settings *b)
{
    return a->pan == b->pan && a->tilt == b->tilt && a->hfov == b->hfov;
}

int pl_vcams_reload(pl_vcams *v, const pc_settings *s, const pc_rig *rig, const pc_vcam_pose *starts, char *msg,
                    size_t msglen)
{
    msg[0] = '\0';
    if (s->vcam_count != v->n) {
        snprintf(msg, msglen, "virtual cameras: %d views now, %d running: a restart makes the new list", s->vcam_count,
                 v->n);
        return -1;
    }
    for (int i = 0; i < v->n; i++)
        if (strcmp(s->vcams[i].name, v->view[i].name) || s->vcams[i].width != v->view[i].width ||
            s->vcams[i].height != v->view[i].height) {
            snprintf(msg, msglen, "virtual camera %s: renamed or resized (%s %dx%d): a restart applies it",
                     v->view[i].name, s->vcams[i].name, s->vcams[i].width, s->vcams[i].height);
            return -1;
        }
    /* another rig: every view's coverage, built before anything changes
     * (this thread is the only writer: reading cov here needs no lock) */
    pc_vcam_coverage *cov = NULL;
    if (rig) {
        cov = malloc(sizeof *cov * (size_t)v->n);
        if (!cov) {
            snprintf(msg, msglen, "virtual cameras: out of memory");
            return -1;
        }
        for (int i = 0; i < v->n; i++) {
            char why[320];
            if (pc_vcam_coverage_init(&cov[i], rig, v->view[i].width, v->view[i].height, why, sizeof why)) {
                snprintf(msg, msglen, "virtual camera %s: %s", v->view[i].name, why);
                free(cov);
                return -1;
            }
        }
    }
    /* what each view goes to: a changed pose (or every goal, into another
     * rig's coverage), clamped outside the lock */
    pc_vcam_pose go[PC_MAX_VCAMS];
    int move[PC_MAX_VCAMS];
    pc_vcam_limits lim[PC_MAX_VCAMS];
    pthread_mutex_lock(&v->lock);
    for (int i = 0; i < v->n; i++) {
        const vc_view *w = &v->view[i];
        move[i] = !same_pose(&w->conf, &s->vcams[i]) || rig;
        go[i] = !same_pose(&w->conf, &s->vcams[i]) ? (pc_vcam_pose){s->vcams[i].pan, s->vcams[i].tilt,
                                                                     s->vcams[i].hfov}
                                                   : w->mot.goal;
    }
    pthread_mutex_unlock(&v->lock);
    for (int i = 0; i < v->n; i++) {
        pc_settings_vcam_limits(&s->vcams[i], &lim[i]);
        char why[160];
        if (starts && !same_pose(&v->view[i].conf, &s->vcams[i]))
            go[i] = starts[i];
        else if (move[i])
            pc_vcam_clamp(cov ? &cov[i] : &v->view[i].cov, &lim[i], &go[i], why, sizeof why);
    }
    if (cov) {
        pthread_rwlock_wrlock(&v->cov_lock);
        for (int i = 0; i < v->n; i++)
            v->view[i].cov = cov[i];
        v->rig = *rig;
        pthread_rwlock_unlock(&v->cov_lock);
        free(cov);
    }
    size_t o = 0;
    pthread_mutex_lock(&v->lock);
    for (int i = 0; i < v->n; i++) {
        vc_view *w = &v->view[i];
        const pc_vcam_settings *c = &s->vcams[i];
        const int mode = c->mode != w->conf.mode, pose = !same_pose(&w->conf, c);
        view_settings(w, c);
        w->mot.lim = w->lim;
        w->fol_reset = 1;
        if (move[i])
            pc_vcam_motion_go(&w->mot, go[i], PC_VCAM_MOVE_SMOOTH, 0);
        if (mode)
            w->follow = c->mode == PC_VCAM_FOLLOW;
        w->epoch++;
        if (o < msglen)
            o += (size_t)snprintf(msg + o, msglen - o, "%s%s: %d preset%s%s%s%s", o ? "; " : "", w->name,
                                  w->presets.count, w->presets.count == 1 ? "" : "s", pose ? ", to its new pose" : "",
                                  rig && !pose ? ", into the new rig's coverage" : "",
                                  mode ? (w->follow ? ", follow" : ", manual") : "");
    }
    pthread_mutex_unlock(&v->lock);
    return 0;
}
