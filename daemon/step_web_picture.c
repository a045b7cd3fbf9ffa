/* step_web_picture.c - the web page's live pictures as the last step of
 * the stage thread: it reads the slot's pictures once every writer before
 * it wrote them and offers them to web_picture.c, which takes a small
 * rendition only while someone watches (a few times a second) and makes
 * the JPEGs on its own thread. One live picture for the main picture
 * (picture 0) and one for each virtual camera's picture ("vcam:NAME");
 * none for the unstitched cameras. Present only with daemon.http_listen.
 *
 * Cost: one small rendition a set at most. The pictures are offered in
 * turn, starting after the one that took the last rendition, and the
 * first that takes one ends the turn: nine watched pictures at 4 a second
 * are 36 renditions a second, fewer than the sets; nothing watched, nine
 * atomic loads and a clock read each.
 *
 * Ownership: the pc_web_pictures are this step's (made at start, when the
 * pictures' formats are known; closed at close). The HTTP side reaches
 * them through p->webpic[i] (picture i's; NULL: none), set at start
 * before the web server starts and cleared at close after it stopped
 * (pipeline.c's order); their get and info calls are thread-safe
 * (web_picture.h). */
#include "pipeline_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEW_MAX_W 640 /* a view's live picture: at most this wide (the page shows it in a card) */

typedef struct web_step {
    pipeline *p;
    pc_web_picture *w[PL_MAX_PICTURES]; /* picture i's live picture; NULL: none */
    int n;                              /* pictures */
    int next;                           /* the stage thread's: the picture offered first next set */
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
    if (pc_web_picture_open(&ws->w[0], &wc, err, errlen))
        return -1;
    p->webpic[0] = ws->w[0];
    ws->n = 1;
    /* each virtual camera's picture, whole, at most VIEW_MAX_W wide */
    for (int i = 1; i < p->npictures && i < PL_MAX_PICTURES; i++) {
        const pl_picture *pic = &p->picture[i];
        if (strncmp(pic->cfg.name, "vcam:", 5) != 0)
            continue;
        pc_web_picture_config vc = {
            .bops = p->bops, .be = env->be, .fmt = pic->fmt, .matrix = p->st.matrix, .range = p->st.range,
            .width = pic->width, .height = pic->height, .ncam = 1, .cam_w = pic->width, .cam_h = pic->height,
            .grid_cols = 1, .whole = 1, .max_width = VIEW_MAX_W, .name = pic->cfg.name, .lg = env->log};
        if (pc_web_picture_open(&ws->w[i], &vc, err, errlen))
            return -1;
        p->webpic[i] = ws->w[i];
        ws->n = i + 1;
    }
    return 0;
}

static int web_run(void *priv, pl_set *set)
{
    web_step *ws = priv;
    /* one rendition a set at most, the pictures in turn; their faults are
     * their own: logged, that picture off */
    for (int k = 0; k < ws->n; k++) {
        int i = (ws->next + k) % ws->n;
        const pc_picture *pic = i == 0 ? set->in : i < set->npictures ? set->picture[i] : NULL;
        if (ws->w[i] && pic && pc_web_picture_offer(ws->w[i], set->slot, pic)) {
            ws->next = (i + 1) % ws->n;
            break;
        }
    }
    return 0;
}

static void web_describe(void *priv, char *buf, size_t len)
{
    web_step *ws = priv;
    pc_web_picture_info i;
    pc_web_picture_info_get(ws->w[0], &i);
    int views = 0;
    for (int k = 1; k < ws->n; k++)
        views += ws->w[k] != NULL;
    if (i.available)
        snprintf(buf, len, "%dx%d, %s, %d a second while watched", i.width, i.height, i.source,
                 PC_WEB_PICTURE_FPS);
    else
        snprintf(buf, len, "none: %s", i.why);
    size_t o = strlen(buf);
    if (views && o < len)
        snprintf(buf + o, len - o, "; and %d virtual camera%s", views, views > 1 ? "s" : "");
}

static void web_close(void *priv)
{
    web_step *ws = priv;
    if (!ws)
        return;
    for (int i = 0; i < PL_MAX_PICTURES; i++) {
        if (ws->p->webpic[i] == ws->w[i])
            ws->p->webpic[i] = NULL;
        pc_web_picture_close(ws->w[i]);
    }
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
