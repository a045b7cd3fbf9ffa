/* pipeline_steps.c - the list of steps (pipeline_step.h): prepares them
 * in order and negotiates their pictures, allocates the intermediate
 * pictures once, runs a set down the list, hands a reload to every step,
 * describes and closes them. Knows no step by name: the pipeline's list is
 * pipeline_stage.c's stage_steps[]. The list belongs to the main thread at
 * set-up and teardown and to the stage thread in between (pl_steps_run);
 * reload and describe only call the steps' own thread-safe ops. */
#include "pipeline_step.h"

#include <stdio.h>
#include <string.h>

static const char *fmt_name(int fmt) { return fmt == PL_FMT_ANY ? "any format" : pc_pixfmt_name((pc_pixfmt)fmt); }

static unsigned slot_flags(unsigned f) { return f & (PL_STEP_SLOT | PL_STEP_WRITES | PL_STEP_READS); }

/* Checks step st (just prepared, l->n - 1) against the pictures before it
 * (cur) and makes it the last writer if it writes. */
static int negotiate(pl_steps *l, pl_step *st, pl_pic_desc *cur, char *err, size_t errlen)
{
    unsigned f = st->ops->flags;
    const char *name = st->ops->name;
    if (f & PL_STEP_READS) {
        if (l->last_writer < 0) {
            snprintf(err, errlen, "step %s reads a picture, but no step before it writes one", name);
            return -1;
        }
        pl_step *w = &l->step[l->last_writer];
        if (st->io.in.fmt != PL_FMT_ANY && st->io.in.fmt != w->io.out.fmt) {
            if (w->io.out.fmt != PL_FMT_ANY) {
                snprintf(err, errlen, "step %s reads %s, but step %s writes %s%s%s", name, fmt_name(st->io.in.fmt),
                         w->ops->name, fmt_name(w->io.out.fmt), w->fmt_by ? " for step " : "",
                         w->fmt_by ? w->fmt_by : "");
                return -1;
            }
            w->io.out.fmt = st->io.in.fmt;
            w->fmt_by = name;
            cur->fmt = st->io.in.fmt;
        }
    }
    if (f & PL_STEP_WRITES) {
        if (st->io.out.width <= 0 || st->io.out.height <= 0) {
            snprintf(err, errlen, "step %s writes a picture but declared its size as %dx%d", name, st->io.out.width,
                     st->io.out.height);
            return -1;
        }
        l->last_writer = l->n - 1;
        *cur = st->io.out;
    } else
        st->io.out = *cur;
    if (slot_flags(f) && l->first_slot < 0)
        l->first_slot = l->n - 1;
    return 0;
}

int pl_steps_prepare(pl_steps *l, const pl_step_ops *const *ops, int n, const pl_step_env *env,
                     const char **failed, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->last_writer = -1;
    l->first_slot = -1;
    *failed = "";
    pl_pic_desc cur = {0, 0, PL_FMT_ANY}; /* no picture yet: the raw set */
    for (int i = 0; i < n; i++) {
        if (l->n == PL_MAX_STEPS) {
            *failed = ops[i]->name;
            snprintf(err, errlen, "more than %d steps in the stage thread's list (PL_MAX_STEPS)", PL_MAX_STEPS);
            goto fail;
        }
        pl_step *st = &l->step[l->n];
        memset(st, 0, sizeof *st);
        st->ops = ops[i];
        st->io.in = st->io.out = cur;
        void *priv = NULL;
        int rc = st->ops->prepare ? st->ops->prepare(&priv, env, &st->io, err, errlen) : 0;
        if (rc == PL_STEP_ABSENT || rc < 0) {
            if (priv && st->ops->close)
                st->ops->close(priv);
            if (rc < 0) {
                *failed = st->ops->name;
                goto fail;
            }
            memset(st, 0, sizeof *st);
            continue;
        }
        st->priv = priv;
        l->n++;
        if (negotiate(l, st, &cur, err, errlen)) {
            *failed = st->ops->name;
            goto fail;
        }
    }
    if (l->first_slot < 0)
        l->first_slot = l->n;
    l->out = cur;
    return 0;
fail:
    pl_steps_close(l);
    return -1;
}

int pl_steps_start(pl_steps *l, const pl_step_env *env, int out_fmt, int nslots, const pl_pic_alloc *alloc,
                   const char **failed, char *err, size_t errlen)
{
    *failed = "";
    if (nslots < 1 || nslots > PL_STEP_SLOTS) {
        snprintf(err, errlen, "%d picture slots (1..%d)", nslots, PL_STEP_SLOTS);
        return -1;
    }
    if (l->last_writer >= 0) {
        pl_step *w = &l->step[l->last_writer];
        if (w->io.out.fmt != PL_FMT_ANY && w->io.out.fmt != out_fmt) {
            *failed = w->ops->name;
            snprintf(err, errlen, "step %s writes the slot's picture, in the encoders' format %s, but step %s reads "
                     "it as %s", w->ops->name, fmt_name(out_fmt), w->fmt_by ? w->fmt_by : w->ops->name,
                     fmt_name(w->io.out.fmt));
            return -1;
        }
        w->io.out.fmt = out_fmt;
    }
    l->out.fmt = out_fmt;
    if (alloc)
        l->alloc = *alloc;
    l->nslots = nslots;
    /* the formats, resolved, down the list; an intermediate picture per
     * slot for every writer but the last */
    pl_pic_desc cur = {0, 0, PL_FMT_ANY};
    for (int i = 0; i < l->n; i++) {
        pl_step *st = &l->step[i];
        st->io.in = cur;
        if (!(st->ops->flags & PL_STEP_WRITES)) {
            st->io.out = cur;
            continue;
        }
        if (st->io.out.fmt == PL_FMT_ANY) /* no reader asked: the encoders' */
            st->io.out.fmt = out_fmt;
        cur = st->io.out;
        if (i == l->last_writer)
            continue;
        if (!l->alloc.alloc) {
            *failed = st->ops->name;
            snprintf(err, errlen, "step %s writes an intermediate picture, but no allocator was given",
                     st->ops->name);
            return -1;
        }
        st->has_mid = 1;
        for (int k = 0; k < nslots; k++)
            if (l->alloc.alloc(l->alloc.user, &st->io.out, &st->mid[k], err, errlen)) {
                *failed = st->ops->name;
                return -1;
            }
    }
    for (int i = 0; i < l->n; i++) {
        pl_step *st = &l->step[i];
        if (st->ops->start && st->ops->start(st->priv, env, &st->io, err, errlen)) {
            *failed = st->ops->name;
            return -1;
        }
    }
    return 0;
}

int pl_steps_run(pl_steps *l, int from, int to, pl_set *set)
{
    for (int i = from; i < to; i++) {
        pl_step *st = &l->step[i];
        unsigned f = st->ops->flags;
        if (slot_flags(f) && set->slot < 0) {
            snprintf(set->err, set->errlen, "step %s runs without a picture slot", st->ops->name);
            return -1;
        }
        set->out = !(f & PL_STEP_WRITES) ? NULL : st->has_mid ? &st->mid[set->slot] : set->picture;
        int rc = st->ops->run(st->priv, set);
        if (rc)
            return rc < 0 ? rc : -1;
        if (f & PL_STEP_WRITES)
            set->in = set->out;
    }
    return 0;
}

void pl_steps_reload(pl_steps *l, const pc_settings *s, unsigned live, const pc_logger *log)
{
    for (int i = 0; i < l->n; i++) {
        pl_step *st = &l->step[i];
        if (!st->ops->reload)
            continue;
        char msg[700] = "";
        int rc = st->ops->reload(st->priv, s, live, msg, sizeof msg);
        if (rc < 0)
            pc_log(log, PC_LOG_ERR, "reload: %s", msg[0] ? msg : st->ops->name);
        else if (rc == PL_RELOAD_RESTART)
            pc_log(log, PC_LOG_WARNING, "reload: %s%s", msg[0] ? msg : st->ops->name,
                   msg[0] ? "" : ": the change needs a restart");
        else if (rc == PL_RELOAD_LIVE && msg[0])
            pc_log(log, PC_LOG_NOTICE, "reload: %s", msg);
    }
}

void pl_steps_describe(pl_steps *l, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < l->n && o + 1 < len; i++) {
        pl_step *st = &l->step[i];
        char d[256] = "";
        if (st->ops->describe)
            st->ops->describe(st->priv, d, sizeof d);
        int w = snprintf(buf + o, len - o, "%s%s%s%s%s", i ? " -> " : "", st->ops->name, d[0] ? " (" : "", d,
                         d[0] ? ")" : "");
        if (w < 0)
            break;
        o += (size_t)w < len - o ? (size_t)w : len - o - 1;
    }
}

void pl_steps_close(pl_steps *l)
{
    for (int i = l->n - 1; i >= 0; i--) {
        pl_step *st = &l->step[i];
        if (st->ops->close)
            st->ops->close(st->priv);
        st->priv = NULL;
        for (int k = 0; k < PL_STEP_SLOTS && st->has_mid; k++)
            if (st->mid[k].plane[0] && l->alloc.free)
                l->alloc.free(l->alloc.user, &st->mid[k]);
        st->has_mid = 0;
    }
    l->n = 0;
}
