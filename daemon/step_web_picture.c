/* step_web_picture.c - the web page's live picture as the last step of the
 * stage thread: it reads the slot's picture once every writer before it
 * wrote it and offers it to web_picture.c, which takes a small rendition
 * only while someone watches (a few times a second) and makes the JPEGs
 * on its own thread. Present only with daemon.http_listen.
 *
 * Ownership: the pc_web_picture is this step's (made at start, when the
 * pictures' format is known; closed at close). The HTTP side reaches it
 * through p->webpic, set at start before the web server starts and
 * cleared at close after it stopped (pipeline.c's order); its get and
 * info calls are thread-safe (web_picture.h). */
#include "pipeline_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct web_step {
    pipeline *p;
    pc_web_picture *w;
} web_step;

static int web_prepare(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen)
{
    (void)io;
    if (!env->s->daemon.http_listen[0])
        return PL_STEP_ABSENT;
    if (!env->p) {
        snprintf(err, errlen, "web picture: needs the pipeline (its HTTP side)");
        return -1;
    }
    web_step *ws = calloc(1, sizeof *ws);
    if (!ws) {
        snprintf(err, errlen, "web picture: out of memory");
        return -1;
    }
    ws->p = env->p;
    *priv = ws;
    return 0;
}

static int web_start(void *priv, const pl_step_env *env, const pl_step_io *io, char *err, size_t errlen)
{
    web_step *ws = priv;
    pipeline *p = ws->p;
    pc_web_picture_config wc = {
        .bops = p->bops, .be = env->be, .fmt = (pc_pixfmt)io->in.fmt, .matrix = p->st.matrix,
        .range = p->st.range, .width = p->picture[0].width, .height = p->picture[0].height, .ncam = env->ncam,
        .cam_w = env->width, .cam_h = env->slab_h,
        .grid_cols = p->picture[0].plan.layout == PC_LAYOUT_GRID ? p->picture[0].plan.grid_cols : 1,
        .whole = pc_settings_stitching(env->s), /* the render step's panorama, not the cameras */
        .lg = env->log};
    if (pc_web_picture_open(&ws->w, &wc, err, errlen))
        return -1;
    p->webpic = ws->w;
    return 0;
}

static int web_run(void *priv, pl_set *set)
{
    web_step *ws = priv;
    pc_web_picture_offer(ws->w, set->slot, set->in); /* its faults are its own: logged, the picture off */
    return 0;
}

static void web_describe(void *priv, char *buf, size_t len)
{
    web_step *ws = priv;
    pc_web_picture_info i;
    pc_web_picture_info_get(ws->w, &i);
    if (i.available)
        snprintf(buf, len, "%dx%d, %s, %d a second while watched", i.width, i.height, i.source,
                 PC_WEB_PICTURE_FPS);
    else
        snprintf(buf, len, "none: %s", i.why);
}

static void web_close(void *priv)
{
    web_step *ws = priv;
    if (!ws)
        return;
    if (ws->p->webpic == ws->w)
        ws->p->webpic = NULL;
    pc_web_picture_close(ws->w);
    free(ws);
}

const pl_step_ops pl_step_web_picture = {
    .name = "web picture",
    .flags = PL_STEP_READS,
    .prepare = web_prepare,
    .start = web_start,
    .run = web_run,
    .describe = web_describe,
    .close = web_close,
};
