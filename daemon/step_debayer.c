/* step_debayer.c - the demosaic step: uploads the set into the backend's
 * input slot (the stacked panorama as one piece, slab by slab, or each
 * slab through its camera's colour tables when the colour step says so)
 * and runs the algorithm in force into the picture the list gives it
 * (the slot's picture, or an intermediate one in the format a later step
 * reads, e.g. RGB24 for a geometry step).
 *
 * It owns THE ALGORITHM IN FORCE: algo/variant here and the backend's
 * copy, changed only on the stage thread at the start of a set (a request
 * from the control socket or a reload waits in p->req_algo) and
 * published in p->algo_in_force and the stats labels. start prepares
 * every algorithm once (CUDA: graph capture and tuning) so that a switch
 * costs nothing on the stage thread.
 *
 * It owns the learned demosaic's weights (net.h) too: loaded at start from
 * debayer.net_weights (or the installed file) whatever the algorithm, since
 * a live switch may pick net, and set into the backend. Without them (a
 * missing or damaged file) net cannot start, and the other algorithms run
 * with a warning; a live switch to net then loads the file again (on the
 * control thread, pipeline_control.c, which refuses a bad file to the
 * client naming it; here for a reload), and on failure the algorithm in
 * force stays. */
#include "pipeline_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct step_debayer {
    const pl_step_env *env;
    pc_debayer_config dc; /* stage thread (set-up: start): the configuration in force */
    pc_pixfmt fmt;        /* the picture it writes: constant after start (describe) */
    pc_net *net;          /* stage thread: net's weights, set in the backend; NULL: none */
    char net_path[PC_PATH_LEN]; /* their file (constant) */
} step_debayer;

/* Stage thread (or start): makes net the backend's weights, owned here
 * (the previous ones freed: the backend no longer reads them). On failure
 * net is freed and nothing changes. */
static int net_take(step_debayer *d, pc_net *net, char *err, size_t errlen)
{
    if (pc_backend_set_net(d->env->be, net, err, errlen)) {
        pc_net_free(net);
        return -1;
    }
    pc_net_free(d->net);
    d->net = net;
    pipeline *p = d->env->p;
    if (p) {
        p->net = net;
        atomic_store(&p->have_net, 1);
    }
    pc_log(d->env->log, PC_LOG_INFO, "net weights: %s (%s, depth %d, width %d, SHA-256 %.16s...)", net->path,
           net->name, net->depth, net->width, net->sha256);
    return 0;
}

static int net_load(step_debayer *d, char *err, size_t errlen)
{
    pc_net *net = NULL;
    if (pc_net_load(&net, d->net_path, err, errlen))
        return -1;
    return net_take(d, net, err, errlen);
}

static int debayer_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    step_debayer *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "debayer: out of memory");
        return -1;
    }
    *priv = d;
    d->env = env;
    snprintf(d->net_path, sizeof d->net_path, "%s", pc_settings_net_weights(env->s));
    d->dc = (pc_debayer_config){.algo = (pc_algo_id)env->s->debayer.algo,
                                .variant = (pc_variant)env->s->debayer.variant, .cfa = env->cfa,
                                .matrix = (pc_matrix)env->s->debayer.matrix, .range = (pc_range)env->s->debayer.range};
    io->nout = 1;
    io->out[0] = (pl_pic_desc){env->width, env->height, PL_FMT_ANY, "cameras"}; /* the stacked cameras */
    return 0;
}

/* Stage thread (or start): makes algo/variant the algorithm in force, in
 * the backend and here, and publishes it (algo_in_force, the stats
 * labels). On failure nothing changes. */
static int apply_algo(step_debayer *d, pc_algo_id algo, pc_variant variant, char *err, size_t errlen)
{
    pc_debayer_config dc = d->dc;
    dc.algo = algo;
    dc.variant = variant;
    if (pc_backend_set_algo(d->env->be, &dc, err, errlen))
        return -1;
    d->dc = dc;
    pipeline *p = d->env->p;
    if (p) {
        atomic_store(&p->algo_in_force, pl_algo_pack(algo, variant));
        pc_stats_set_algo(p->stats, pc_algo_get(algo)->name, pc_backend_choice_name(d->env->be));
    }
    return 0;
}

/* Prepares every algorithm once (CUDA: graph capture, variant and tile
 * measurement, tens of ms each; CPU: its scratch, mlri 28 bytes per pixel,
 * and set_algo reserves the one in force) so that a live switch later
 * costs nothing on the stage thread; then the configured one. */
static int debayer_start(void *priv, const pl_step_env *env, const pl_step_io *io, char *err, size_t errlen)
{
    step_debayer *d = priv;
    d->dc.fmt = d->fmt = (pc_pixfmt)io->out[0].fmt;
    char ne[768];
    if (net_load(d, ne, sizeof ne)) {
        if (d->dc.algo == PC_ALGO_NET) {
            snprintf(err, errlen, "algorithm net: %s", ne);
            return -1;
        }
        pc_log(env->log, PC_LOG_WARNING, "the learned demosaic (net) is unavailable: %s; a live switch to net "
               "loads the file again", ne);
    }
    for (int a = 0; a < pc_algo_count(); a++) {
        pc_debayer_config dc = d->dc;
        dc.algo = (pc_algo_id)a;
        if (a == PC_ALGO_NET && !d->net)
            continue; /* no weights: said above */
        if (a != (int)d->dc.algo && pc_backend_prepare_algo(env->be, &dc, err, errlen))
            pc_log(env->log, PC_LOG_WARNING, "%s: preparing %s failed: %s", pc_backend_name(env->be),
                   pc_algo_get(a)->name, err);
    }
    return apply_algo(d, d->dc.algo, d->dc.variant, err, errlen);
}

/* Stage thread, at the start of a set: the one place the algorithm in
 * force changes. */
static void take_algo_request(step_debayer *d, uint64_t set_index)
{
    pipeline *p = d->env->p;
    int ra = p ? atomic_exchange(&p->req_algo, -1) : -1;
    if (ra < 0)
        return;
    char e[768];
    pc_algo_id old = d->dc.algo, want = pl_algo_of(ra);
    /* weights the control thread loaded for this switch; or, for a
     * reload's switch to net without weights, the file now */
    pc_net *pending = atomic_exchange(&p->net_pending, NULL);
    if (pending && net_take(d, pending, e, sizeof e))
        pc_log(d->env->log, PC_LOG_ERR, "net weights: %s", e);
    if (want == PC_ALGO_NET && !d->net && net_load(d, e, sizeof e))
        pc_log(d->env->log, PC_LOG_ERR, "algorithm switch to net failed: %s; keeping %s", e, pc_algo_get(old)->name);
    else if (apply_algo(d, want, pl_variant_of(ra), e, sizeof e))
        pc_log(d->env->log, PC_LOG_ERR, "algorithm switch to %s failed: %s; keeping %s", pc_algo_get(want)->name, e,
               pc_algo_get(old)->name);
    else
        pc_log(d->env->log, PC_LOG_NOTICE, "algorithm switched: %s -> %s (from frame set %" PRIu64 ")",
               pc_algo_get(old)->name, pc_algo_get(want)->name, set_index);
}

/* Uploads the set into backend slot set->slot and starts (CUDA) or does
 * (CPU) the demosaic into set->out[0]; the stage loop waits for the slot
 * after the last step. */
static int debayer_run(void *priv, pl_set *set)
{
    step_debayer *d = priv;
    const pl_step_env *env = d->env;
    const pc_frameset *fs = set->frames;
    take_algo_request(d, fs->index);
    pc_backend *be = env->be;
    pc_picture *out = set->out[0];
    const pl_set_colour *c = set->colour;
    int slot = set->slot, h = env->slab_h, rc = 0;
    char e[512];
    if (c) { /* each slab through its camera's tables (colour step) */
        out->bands = c->bands;
        out->n_bands = c->n;
        out->band_rows = h;
        for (int k = 0; k < fs->n && !rc; k++)
            rc = pc_backend_upload_raw(be, slot, k * h, fs->slab[k], fs->pitch[k], c->fmt, k, h, e, sizeof e);
    } else {
        out->bands = NULL; /* the plain §8 matrix */
        if (fs->stacked)
            rc = pc_backend_upload(be, slot, 0, fs->stacked, fs->stacked_pitch, env->height, e, sizeof e);
        for (int k = 0; k < fs->n && !fs->stacked && !rc; k++)
            rc = pc_backend_upload(be, slot, k * h, fs->slab[k], fs->pitch[k], h, e, sizeof e);
    }
    if (!rc)
        rc = pc_backend_debayer(be, slot, out, e, sizeof e);
    if (rc)
        snprintf(set->err, set->errlen, "debayer (%s, %s backend, %dx%d) failed: %s", pc_algo_get(d->dc.algo)->name,
                 pc_backend_name(be), env->width, env->height, e);
    return rc ? -1 : 0;
}

static void debayer_describe(void *priv, char *buf, size_t len)
{
    step_debayer *d = priv;
    pipeline *p = d->env->p;
    /* any thread: the published algorithm, not the stage thread's copy */
    pc_algo_id algo = p ? pl_algo_of(atomic_load(&p->algo_in_force)) : d->dc.algo;
    snprintf(buf, len, "%s, %s backend, %s %dx%d", pc_algo_get(algo)->name, pc_backend_name(d->env->be),
             pc_pixfmt_name(d->fmt), d->env->width, d->env->height);
}

static int debayer_reload(void *priv, const pc_settings *s, unsigned live, char *msg, size_t msglen)
{
    step_debayer *d = priv;
    if (!(live & (PC_LIVE_ALGO | PC_LIVE_VARIANT)) || !d->env->p)
        return PL_RELOAD_NONE;
    /* taken at the start of the next set, which logs the switch */
    atomic_store(&d->env->p->req_algo,
                 pl_algo_pack((pc_algo_id)s->debayer.algo, (pc_variant)s->debayer.variant));
    msg[0] = '\0';
    return PL_RELOAD_LIVE;
}

static void debayer_close(void *priv)
{
    step_debayer *d = priv;
    if (!d)
        return;
    if (d->net) {
        char e[256];
        pc_backend_set_net(d->env->be, NULL, e, sizeof e); /* the backend outlives the step */
        if (d->env->p) {
            d->env->p->net = NULL;
            atomic_store(&d->env->p->have_net, 0);
        }
    }
    pc_net_free(d->net);
    free(d);
}

const pl_step_ops pl_step_debayer = {
    .name = "debayer",
    .flags = PL_STEP_SLOT | PL_STEP_WRITES,
    .prepare = debayer_prepare,
    .start = debayer_start,
    .run = debayer_run,
    .reload = debayer_reload,
    .describe = debayer_describe,
    .close = debayer_close,
};
