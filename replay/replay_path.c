/* replay_path.c - where a re-framed clip's view looks (replay.h): the
 * keyframe file and the keyframe path, moved by the live views' own
 * motion (vcam.h), so a clip's camera moves as a live view told to go to
 * each keyframe would. */
#include "replay.h"

#include "errmsg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pc_replay_path_default(pc_replay_path *path, pc_vcam_pose pose)
{
    memset(path, 0, sizeof *path);
    path->kind = PC_REPLAY_FIXED;
    path->pose = pose;
    pc_vcam_limits_default(&path->lim);
    pc_follow_params_default(&path->fpar);
}

/* One number of a keyframe line at *p; 0 or -1. */
static int number(const char **p, double *v)
{
    while (**p == ' ' || **p == '\t' || **p == ',')
        (*p)++;
    if (!**p || **p == '#')
        return -1;
    char *end;
    errno = 0;
    *v = strtod(*p, &end);
    if (end == *p || errno || !isfinite(*v) || (*end && !strchr(" \t,#", *end)))
        return -1;
    *p = end;
    return 0;
}

int pc_replay_keyframes_parse(const char *text, const char *name, pc_replay_keyframe **kf, int *n, char *err,
                              size_t errlen)
{
    static const char *const field[] = {"time", "pan", "tilt", "hfov"};
    *kf = NULL;
    *n = 0;
    int cap = 0, line = 0;
    pc_replay_keyframe *k = NULL;
    for (const char *s = text; s && *s;) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        char buf[512];
        line++;
        if (len >= sizeof buf) {
            pc_set_err(err, errlen, "%s:%d: line longer than %zu characters", name, line, sizeof buf - 1);
            goto fail;
        }
        memcpy(buf, s, len);
        buf[len] = 0;
        if (len && buf[len - 1] == '\r')
            buf[len - 1] = 0;
        s = eol ? eol + 1 : NULL;
        const char *p = buf;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        double v[4];
        for (int i = 0; i < 4; i++)
            if (number(&p, &v[i])) {
                pc_set_err(err, errlen, "%s:%d: field %d (%s): %s; a keyframe is \"TIME PAN TILT HFOV\" (seconds, "
                           "degrees)", name, line, i + 1, field[i], *p && *p != '#' ? "not a number" : "missing");
                goto fail;
            }
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p && *p != '#') {
            pc_set_err(err, errlen, "%s:%d: \"%s\" after the four fields (TIME PAN TILT HFOV)", name, line, p);
            goto fail;
        }
        if (v[0] < 0) {
            pc_set_err(err, errlen, "%s:%d: time %g: before the recording's start (0)", name, line, v[0]);
            goto fail;
        }
        if (*n && !(v[0] > k[*n - 1].t)) {
            pc_set_err(err, errlen, "%s:%d: time %g: not after the previous keyframe's %g (times ascend)", name, line,
                       v[0], k[*n - 1].t);
            goto fail;
        }
        if (fabs(v[1]) > 360 || fabs(v[2]) > 90 || !(v[3] >= PC_RIG_MIN_HFOV && v[3] < 180)) {
            pc_set_err(err, errlen, "%s:%d: pan %g, tilt %g, hfov %g: pan within +-360, tilt within +-90, hfov %g..180 "
                       "degrees", name, line, v[1], v[2], v[3], PC_RIG_MIN_HFOV);
            goto fail;
        }
        if (*n == PC_REPLAY_MAX_KEYFRAMES) {
            pc_set_err(err, errlen, "%s:%d: more than %d keyframes", name, line, PC_REPLAY_MAX_KEYFRAMES);
            goto fail;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            pc_replay_keyframe *q = realloc(k, sizeof *k * (size_t)cap);
            if (!q) {
                pc_set_err(err, errlen, "%s: out of memory", name);
                goto fail;
            }
            k = q;
        }
        k[(*n)++] = (pc_replay_keyframe){v[0], v[1], v[2], v[3]};
    }
    if (!*n) {
        pc_set_err(err, errlen, "%s: no keyframe (one a line: TIME PAN TILT HFOV)", name);
        goto fail;
    }
    *kf = k;
    return 0;
fail:
    free(k);
    *n = 0;
    return PC_EINVAL;
}

int pc_replay_keyframes_load(const char *path, pc_replay_keyframe **kf, int *n, char *err, size_t errlen)
{
    *kf = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        pc_set_err(err, errlen, "%s: %s", path, strerror(errno));
        return PC_EIO;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    for (size_t r; text && (r = fread(text + len, 1, cap - len - 1, f)) > 0;) {
        len += r;
        if (len + 1 == cap) {
            if (cap >= ((size_t)64 << 20)) {
                free(text);
                fclose(f);
                pc_set_err(err, errlen, "%s: larger than 64 MiB: not a keyframe file", path);
                return PC_EINVAL;
            }
            char *t = realloc(text, cap *= 2);
            if (!t) {
                free(text);
                text = NULL;
            }
            text = t;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!text || bad) {
        free(text);
        pc_set_err(err, errlen, "%s: %s", path, text ? "read error" : "out of memory");
        return text ? PC_EIO : PC_ENOMEM;
    }
    text[len] = 0;
    if (memchr(text, 0, len)) {
        free(text);
        pc_set_err(err, errlen, "%s: binary data: not a keyframe file", path);
        return PC_EINVAL;
    }
    int rc = pc_replay_keyframes_parse(text, path, kf, n, err, errlen);
    free(text);
    return rc;
}

void pc_replay_stepper_init(pc_replay_stepper *s, const pc_replay_path *path)
{
    memset(s, 0, sizeof *s);
    s->path = path;
}

static pc_vcam_pose kf_pose(const pc_replay_keyframe *k) { return (pc_vcam_pose){k->pan, k->tilt, k->hfov}; }

pc_vcam_pose pc_replay_stepper_at(pc_replay_stepper *s, double t, double dt)
{
    const pc_replay_path *p = s->path;
    if (p->kind != PC_REPLAY_KEYFRAMES || p->nkf < 1)
        return p->pose;
    if (!s->started) {
        pc_vcam_limits lim = p->lim;
        /* the keyframes' own zoom range is allowed */
        for (int i = 0; i < p->nkf; i++) {
            lim.min_hfov = fmin(lim.min_hfov, p->kf[i].hfov);
            lim.max_hfov = fmax(lim.max_hfov, p->kf[i].hfov);
        }
        pc_vcam_motion_init(&s->mot, &lim, kf_pose(&p->kf[0]));
        s->t = p->kf[0].t;
        s->next = 1;
        s->started = 1;
    }
    if (t <= p->kf[0].t)
        return kf_pose(&p->kf[0]);
    if (!(dt > 0))
        dt = 0.02;
    /* step up to t: each keyframe handed over exactly at the previous
     * keyframe's time, as a move arriving at its own */
    while (s->t < t - 1e-9) {
        while (s->next < p->nkf && p->kf[s->next - 1].t <= s->t + 1e-9) {
            const pc_replay_keyframe *k = &p->kf[s->next];
            pc_vcam_motion_go(&s->mot, kf_pose(k), PC_VCAM_MOVE_DURATION, k->t - p->kf[s->next - 1].t);
            s->next++;
        }
        double step = fmin(dt, t - s->t);
        /* never step past a keyframe's time: the next move starts there */
        if (s->next < p->nkf && p->kf[s->next - 1].t > s->t && p->kf[s->next - 1].t < s->t + step)
            step = p->kf[s->next - 1].t - s->t;
        pc_vcam_motion_step(&s->mot, step);
        s->t += step;
    }
    return s->mot.cur;
}
