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

_Static_assert(PL_MAX_PICTURES <= 10, "a picture's default name (\"STEP:i\") ends in one digit");

static const char *fmt_name(int fmt) { return fmt == PL_FMT_ANY ? "any format" : pc_pixfmt_name((pc_pixfmt)fmt); }

static unsigned slot_flags(unsigned f) { return f & (PL_STEP_SLOT | PL_STEP_WRITES | PL_STEP_READS); }

/* The pictures in force after the steps so far: what the last writer makes. */
typedef struct pics {
    pl_pic_desc d[PL_MAX_PICTURES];
    int n;
} pics;

/* A writer's declared pictures: a count in range, sizes, names (the
 * step's own where it gave none), unique. */
static int check_outputs(pl_step *st, char *err, size_t errlen)
{
    const char *name = st->ops->name;
    pl_step_io *io = &st->io;
    if (io->nout == 0)
        io->nout = 1;
    if (io->nout < 0 || io->nout > PL_MAX_PICTURES) {
        snprintf(err, errlen, "step %s declared %d pictures (1..%d, PL_MAX_PICTURES)", name, io->nout,
                 PL_MAX_PICTURES);
        return -1;
    }
    for (int i = 0; i < io->nout; i++) {
        pl_pic_desc *d = &io->out[i];
        if (d->width <= 0 || d->height <= 0) {
            snprintf(err, errlen, "step %s writes a picture but declared the size of its picture %d%s%s%s as %dx%d",
                     name, i, d->name[0] ? " (" : "", d->name, d->name[0] ? ")" : "", d->width, d->height);
            return -1;
        }
        if (!memchr(d->name, '\0', sizeof d->name)) {
            snprintf(err, errlen, "step %s: the name of its picture %d is longer than %d bytes", name, i,
                     PL_PIC_NAME - 1);
            return -1;
        }
        if (!d->name[0] && io->nout == 1)
            snprintf(d->name, sizeof d->name, "%.*s", PL_PIC_NAME - 1, name);
        else if (!d->name[0])
            snprintf(d->name, sizeof d->name, "%.*s:%c", PL_PIC_NAME - 3, name, '0' + i); /* i < PL_MAX_PICTURES */
        for (int j = 0; j < i; j++)
            if (!strcmp(io->out[j].name, d->name)) {
                snprintf(err, errlen, "step %s declared two pictures named \"%s\" (%d and %d)", name, d->name, j, i);
                return -1;
            }
    }
    for (int i = io->nout; i < PL_MAX_PICTURES; i++)
        memset(&io->out[i], 0, sizeof io->out[i]);
    return 0;
}

/* Checks step st (just prepared, l->n - 1) against the pictures before it
 * (cur) and makes it the last writer if it writes. */
static int negotiate(pl_steps *l, pl_step *st, pics *cur, char *err, size_t errlen)
{
    unsigned f = st->ops->flags;
    const char *name = st->ops->name;
    if (f & PL_STEP_READS) {
        if (l->last_writer < 0) {
            snprintf(err, errlen, "step %s reads a picture, but no step before it writes one", name);
            return -1;
        }
        pl_step *w = &l->step[l->last_writer];
        pl_pic_desc *wo = &w->io.out[0];
        if (st->io.in.fmt != PL_FMT_ANY && st->io.in.fmt != wo->fmt) {
            if (wo->fmt != PL_FMT_ANY) {
                snprintf(err, errlen, "step %s reads %s, but step %s writes %s%s%s", name, fmt_name(st->io.in.fmt),
                         w->ops->name, fmt_name(wo->fmt), w->fmt_by ? " for step " : "", w->fmt_by ? w->fmt_by : "");
                return -1;
            }
            wo->fmt = st->io.in.fmt;
            w->fmt_by = name;
            cur->d[0].fmt = st->io.in.fmt;
        }
    }
    if (f & PL_STEP_WRITES) {
        if (check_outputs(st, err, errlen))
            return -1;
        l->last_writer = l->n - 1;
        memcpy(cur->d, st->io.out, sizeof cur->d);
        cur->n = st->io.nout;
    } else {
        memcpy(st->io.out, cur->d, sizeof st->io.out);
        st->io.nout = cur->n;
    }
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
    pics cur; /* no picture yet: the raw set */
    memset(&cur, 0, sizeof cur);
    cur.d[0].fmt = PL_FMT_ANY;
    for (int i = 0; i < n; i++) {
        if (l->n == PL_MAX_STEPS) {
            *failed = ops[i]->name;
            snprintf(err, errlen, "more than %d steps in the stage thread's list (PL_MAX_STEPS)", PL_MAX_STEPS);
            goto fail;
        }
        pl_step *st = &l->step[l->n];
        memset(st, 0, sizeof *st);
        st->ops = ops[i];
        st->io.in = cur.d[0];
        memcpy(st->io.out, cur.d, sizeof st->io.out);
        st->io.nout = ops[i]->flags & PL_STEP_WRITES ? 0 : cur.n; /* a writer: one picture unless it says more */
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
    memcpy(l->out, cur.d, sizeof l->out);
    l->nout = cur.n;
    return 0;
fail:
    pl_steps_close(l);
    return -1;
}

int pl_steps_start(pl_steps *l, const pl_step_env *env, const int *out_fmt, int nslots, const pl_pic_alloc *alloc,
                   const char **failed, char *err, size_t errlen)
{
    *failed = "";
    if (nslots < 1 || nslots > PL_STEP_SLOTS) {
        snprintf(err, errlen, "%d picture slots (1..%d)", nslots, PL_STEP_SLOTS);
        return -1;
    }
    if (l->last_writer >= 0) {
        pl_step *w = &l->step[l->last_writer];
        for (int i = 0; i < w->io.nout; i++) {
            pl_pic_desc *o = &w->io.out[i];
            if (o->fmt != PL_FMT_ANY && o->fmt != out_fmt[i]) {
                *failed = w->ops->name;
                if (i == 0 && w->fmt_by)
                    snprintf(err, errlen, "step %s writes the slot's picture %s, in the encoders' format %s, but "
                             "step %s reads it as %s", w->ops->name, o->name, fmt_name(out_fmt[i]), w->fmt_by,
                             fmt_name(o->fmt));
                else
                    snprintf(err, errlen, "step %s writes its picture %s in %s only, but that picture's encoders "
                             "take %s", w->ops->name, o->name, fmt_name(o->fmt), fmt_name(out_fmt[i]));
                return -1;
            }
            o->fmt = out_fmt[i];
        }
        for (int i = 0; i < l->nout; i++)
            l->out[i].fmt = out_fmt[i];
    }
    if (alloc)
        l->alloc = *alloc;
    l->nslots = nslots;
    /* the formats, resolved, down the list; intermediate pictures per
     * slot for every writer but the last */
    pics cur;
    memset(&cur, 0, sizeof cur);
    cur.d[0].fmt = PL_FMT_ANY;
    for (int i = 0; i < l->n; i++) {
        pl_step *st = &l->step[i];
        st->io.in = cur.d[0];
        if (!(st->ops->flags & PL_STEP_WRITES)) {
            memcpy(st->io.out, cur.d, sizeof st->io.out);
            st->io.nout = cur.n;
            continue;
        }
        for (int o = 0; o < st->io.nout; o++)
            if (st->io.out[o].fmt == PL_FMT_ANY) /* no reader asked: the main picture's encoders' */
                st->io.out[o].fmt = out_fmt[0];
        memcpy(cur.d, st->io.out, sizeof cur.d);
        cur.n = st->io.nout;
        if (i == l->last_writer)
            continue;
        if (!l->alloc.alloc) {
            *failed = st->ops->name;
            snprintf(err, errlen, "step %s writes an intermediate picture, but no allocator was given",
                     st->ops->name);
            return -1;
        }
        st->has_mid = 1;
        for (int o = 0; o < st->io.nout; o++)
            for (int k = 0; k < nslots; k++)
                if (l->alloc.alloc(l->alloc.user, &st->io.out[o], &st->mid[o][k], err, errlen)) {
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
        int n = f & PL_STEP_WRITES ? st->io.nout : 0;
        for (int o = 0; o < PL_MAX_PICTURES; o++)
            set->out[o] = o >= n ? NULL : st->has_mid ? &st->mid[o][set->slot] : set->picture[o];
        set->nout = n;
        int rc = st->ops->run(st->priv, set);
        if (rc)
            return rc < 0 ? rc : -1;
        if (n)
            set->in = set->out[0];
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
        for (int o = 0; o < PL_MAX_PICTURES && st->has_mid; o++)
            for (int k = 0; k < PL_STEP_SLOTS; k++)
                if (st->mid[o][k].plane[0] && l->alloc.free)
                    l->alloc.free(l->alloc.user, &st->mid[o][k]);
        st->has_mid = 0;
    }
    l->n = 0;
}
