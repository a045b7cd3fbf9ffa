/* pipeline_vcams.c - the running pipeline's virtual cameras (vcams.h) as
 * the operators reach them: set-up (the views opened on the rig read at
 * set-up), the control socket's `vcam` command and its status lines,
 * the metrics, the web API's views (JSON, the commands a POST makes, the
 * live picture's map and each view's frame on it), reload and the summary.
 *
 * p->vcams is made here at set-up (main thread) when views are configured
 * with a rig, before any thread that reads it starts, and closed after
 * they all ended; pl_vcams is thread-safe (vcams.h), so the control, HTTP
 * and stage threads use it as they are. The render step (step_render.c)
 * steps their motion once per set and draws them. */
#include "pipeline_int.h"

#include "settings_rig.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define OUTLINE_POINTS 1024
#define OUTLINE_LINES 64

int pl_vcams_setup(pipeline *p)
{
    const pc_settings *s = p->s;
    if (s->vcam_count == 0)
        return 0;
    /* p->rig: read and checked at set-up as --check-config did, with each
     * view's first pose inside the coverage (the settings make views
     * without a rig an error) */
    if (!p->rig || !p->rig->have_rig) {
        snprintf(p->err, sizeof p->err, "virtual_cameras: %d view%s and no rig read (panorama.rig)", s->vcam_count,
                 s->vcam_count == 1 ? "" : "s");
        return -1;
    }
    if (pl_vcams_open(&p->vcams, s, &p->rig->rig, p->rig->start, p->fps, p->err, sizeof p->err))
        return -1;
    pl_vcam_status st[PC_MAX_VCAMS];
    int n = pl_vcams_status(p->vcams, st, PC_MAX_VCAMS);
    for (int i = 0; i < n; i++) {
        char line[1024];
        pl_vcams_status_line(&st[i], line, sizeof line);
        pc_log(&p->d->logger, PC_LOG_INFO, "virtual camera %s", line);
    }
    return 0;
}

void pl_vcams_teardown(pipeline *p)
{
    pl_vcams_close(p->vcams);
    p->vcams = NULL;
}

/* ------------------------------------------------------- control socket */

/* Changing commands are logged with their answer (who moved the view is
 * worth a line); reading ones are not. */
static void log_command(pipeline *p, const char *via, const char *cmd, int rc, const char *answer,
                        const pl_vcam_result *r)
{
    if (rc == 0 && !r->changed)
        return;
    pc_log(&p->d->logger, rc ? PC_LOG_INFO : PC_LOG_NOTICE, "%s: vcam %.200s: %.300s", via, cmd, answer);
}

int pl_vcams_control(void *user, const char *args, char *buf, size_t len)
{
    pipeline *p = user;
    if (!p->vcams) {
        snprintf(buf, len, "ERR no virtual cameras are configured (virtual_cameras, with panorama.rig)");
        return -1;
    }
    pl_vcam_result r;
    int rc = pl_vcams_exec(p->vcams, args, buf, len, &r);
    log_command(p, "control", args, rc, buf, &r);
    return rc;
}

void pl_vcams_status_text(pipeline *p, char *buf, size_t len)
{
    if (!p->vcams)
        return;
    pl_vcam_status st[PC_MAX_VCAMS];
    int n = pl_vcams_status(p->vcams, st, PC_MAX_VCAMS);
    size_t o = strlen(buf);
    for (int i = 0; i < n && o < len; i++) {
        char line[1024];
        pl_vcams_status_line(&st[i], line, sizeof line);
        o += (size_t)snprintf(buf + o, len - o, "\nvcam %s", line);
    }
}

/* ------------------------------------------------------------ metrics */

int pl_vcams_prometheus(pipeline *p, char *buf, size_t len)
{
    if (!p->vcams)
        return 0;
    pl_vcam_status st[PC_MAX_VCAMS];
    int n = pl_vcams_status(p->vcams, st, PC_MAX_VCAMS);
    static const struct {
        const char *name, *type, *help;
    } m[] = {
        {"panocap_vcam_pan_degrees", "gauge", "Where the virtual camera points now: pan, degrees (+ right)."},
        {"panocap_vcam_tilt_degrees", "gauge", "Where the virtual camera points now: tilt, degrees (+ up)."},
        {"panocap_vcam_hfov_degrees", "gauge", "The virtual camera's horizontal field of view now, degrees."},
        {"panocap_vcam_follow", "gauge", "1 while the virtual camera follows the play, 0 while an operator steers it."},
        {"panocap_vcam_moving", "gauge", "1 while the virtual camera moves towards its goal."},
        {"panocap_vcam_commands_total", "counter", "Commands applied to the virtual camera (control socket, HTTP)."},
        {"panocap_vcam_clamped_total", "counter",
         "Commands the rig's coverage or the view's limits changed (the answer said why)."},
        {"panocap_vcam_refused_total", "counter", "Commands naming the virtual camera that were refused."},
    };
    size_t o = strlen(buf);
    for (size_t k = 0; k < sizeof m / sizeof *m && o < len; k++) {
        o += (size_t)snprintf(buf + o, len - o, "# HELP %s %s\n# TYPE %s %s\n", m[k].name, m[k].help, m[k].name,
                              m[k].type);
        for (int i = 0; i < n && o < len; i++) {
            const pl_vcam_status *v = &st[i];
            const double val[] = {v->pose.pan, v->pose.tilt, v->pose.hfov, v->follow, v->moving,
                                  (double)v->commands, (double)v->clamped, (double)v->refused};
            if (k < 3)
                o += (size_t)snprintf(buf + o, len - o, "%s{view=\"%s\"} %.3f\n", m[k].name, v->name, val[k]);
            else
                o += (size_t)snprintf(buf + o, len - o, "%s{view=\"%s\"} %.0f\n", m[k].name, v->name, val[k]);
        }
    }
    return o < len ? 0 : -1;
}

void pl_vcams_summary(pipeline *p, char *buf, size_t len)
{
    if (!p->vcams || !len)
        return;
    pl_vcam_status st[PC_MAX_VCAMS];
    int n = pl_vcams_status(p->vcams, st, PC_MAX_VCAMS);
    size_t o = (size_t)snprintf(buf, len, "virtual cameras (final pose; commands):\n");
    for (int i = 0; i < n && o < len; i++) {
        char line[1024];
        pl_vcams_status_line(&st[i], line, sizeof line);
        o += (size_t)snprintf(buf + o, len - o, "  %s\n", line);
    }
}

/* ------------------------------------------------------------ reload */

void pl_vcams_reload_live(pipeline *p, unsigned live)
{
    if (!p->vcams || !(live & (PC_LIVE_VCAM | PC_LIVE_RIG)))
        return;
    const pc_settings *s = p->s;
    pc_rig_setup *rs = malloc(sizeof *rs);
    pc_diag *diag = malloc(sizeof *diag);
    char msg[1024];
    if (!rs || !diag) {
        pc_log(&p->d->logger, PC_LOG_ERR, "reload: virtual cameras: out of memory; they stay as they were");
    } else {
        pc_diag_init(diag);
        /* the reload checked the rig already (a bad one was refused) */
        if (pc_settings_check_rig(s, rs, diag) || !rs->have_rig)
            pc_log(&p->d->logger, PC_LOG_WARNING, "reload: virtual cameras: the rig cannot be read again; they "
                   "stay as they were");
        else if (pl_vcams_reload(p->vcams, s, (live & PC_LIVE_RIG) ? &rs->rig : NULL, rs->start, msg, sizeof msg))
            pc_log(&p->d->logger, PC_LOG_WARNING, "reload: %s", msg);
        else
            pc_log(&p->d->logger, PC_LOG_NOTICE, "reload: virtual cameras: %s", msg);
    }
    free(rs);
    free(diag);
}

/* ------------------------------------------------------------ the web */

/* The web page's live picture as the map sees it (web_picture.h): the
 * stitched panorama at 1/scale (it has no camera thumbnails), or the
 * cameras side by side, each tile a camera's whole frame at 1/scale. 0,
 * or -1 with why when there is none. */
static int live_picture(pipeline *p, pl_vcams_picture *pic, char *why, size_t n)
{
    pc_web_picture_info pi;
    pc_web_picture_info_get(p->webpic[0], &pi);
    memset(pic, 0, sizeof *pic);
    if (!pi.available || pi.scale <= 0) {
        snprintf(why, n, "no live picture: %s", pi.why);
        return -1;
    }
    pic->width = pi.width;
    pic->height = pi.height;
    if (pi.thumb_width == 0) { /* the panorama the render step makes, at the slots' size */
        pl_vcams_panorama_view(p->vcams, p->picture[0].width, p->picture[0].height, &pic->view);
        pic->scale = pi.scale;
        return 0;
    }
    pic->ntiles = p->ncam < PL_VCAMS_MAX_TILES ? p->ncam : PL_VCAMS_MAX_TILES;
    for (int t = 0; t < pic->ntiles; t++) {
        pic->tile[t].cam = t;
        pic->tile[t].x = (double)t * pi.thumb_width;
        pic->tile[t].y = 0;
        pic->tile[t].w = (double)p->width / pi.scale;
        pic->tile[t].h = (double)p->slab_h / pi.scale;
    }
    return 0;
}

static void pose_json(pc_json *j, const char *key, pc_vcam_pose q)
{
    pc_json_object(j, key);
    pc_json_fixed(j, "pan", q.pan, 3);
    pc_json_fixed(j, "tilt", q.tilt, 3);
    pc_json_fixed(j, "hfov", q.hfov, 3);
    pc_json_object_end(j);
}

/* A view's border on the live picture: polylines [x0, y0, x1, y1, ...]. */
static void outline_json(pipeline *p, pc_json *j, const char *key, int i, pc_vcam_pose q, const pl_vcams_picture *pic,
                         float *xy, int *starts)
{
    int nl = 0;
    int np = pl_vcams_outline(p->vcams, i, q, pic, xy, OUTLINE_POINTS, starts, OUTLINE_LINES, &nl);
    pc_json_array(j, key);
    for (int l = 0; l < nl; l++) {
        int end = l + 1 < nl ? starts[l + 1] : np;
        pc_json_array(j, NULL);
        for (int k = starts[l]; k < end; k++) {
            pc_json_fixed(j, NULL, xy[2 * k], 1);
            pc_json_fixed(j, NULL, xy[2 * k + 1], 1);
        }
        pc_json_array_end(j);
    }
    pc_json_array_end(j);
}

static void view_json(pipeline *p, pc_json *j, const char *key, int i, const pl_vcam_status *v,
                      const pl_vcams_picture *pic, float *xy, int *starts)
{
    char url[96];
    snprintf(url, sizeof url, "api/views/%s", v->name);
    pc_json_object(j, key);
    pc_json_str(j, "name", v->name);
    pc_json_str(j, "url", url);
    pc_json_int(j, "width", v->width);
    pc_json_int(j, "height", v->height);
    pc_json_fixed(j, "pan", v->pose.pan, 3);
    pc_json_fixed(j, "tilt", v->pose.tilt, 3);
    pc_json_fixed(j, "hfov", v->pose.hfov, 3);
    pose_json(j, "goal", v->goal);
    pc_json_str(j, "mode", v->follow ? "follow" : "manual");
    pc_json_bool(j, "follow", v->follow);
    pc_json_bool(j, "moving", v->moving);
    pc_json_fixed(j, "activity", v->activity, 0);
    pc_json_fixed(j, "min_hfov", v->min_hfov, 2);
    pc_json_fixed(j, "max_hfov", v->max_hfov, 2);
    pc_json_fixed(j, "max_speed", v->max_speed, 2);
    pc_json_array(j, "presets");
    for (int k = 0; k < v->npresets; k++)
        pc_json_str(j, NULL, v->presets[k]);
    pc_json_array_end(j);
    pc_json_uint(j, "commands", v->commands);
    pc_json_uint(j, "clamped", v->clamped);
    pc_json_uint(j, "refused", v->refused);
    pc_json_str(j, "last_clamp", v->last_clamp);
    /* its own live picture (step_web_picture.c), when one is made for it */
    pc_web_picture_info vi;
    pc_web_picture_info_get(pl_web_view_picture(p, v->name), &vi);
    snprintf(url, sizeof url, "api/views/%s/picture.jpg", v->name);
    pc_json_str(j, "picture", vi.available ? url : NULL);
    if (pic) {
        outline_json(p, j, "outline", i, v->pose, pic, xy, starts);
        outline_json(p, j, "goal_outline", i, v->goal, pic, xy, starts);
    } else {
        pc_json_null(j, "outline");
        pc_json_null(j, "goal_outline");
    }
    pc_json_object_end(j);
}

void pl_vcams_json(pipeline *p, pc_json *j)
{
    pc_json_array(j, "views");
    if (p->vcams) {
        pl_vcam_status st[PC_MAX_VCAMS];
        int n = pl_vcams_status(p->vcams, st, PC_MAX_VCAMS);
        pl_vcams_picture *pic = malloc(sizeof *pic);
        float *xy = malloc(sizeof *xy * 2 * OUTLINE_POINTS);
        int *starts = malloc(sizeof *starts * OUTLINE_LINES);
        char why[256];
        int have = pic && xy && starts && live_picture(p, pic, why, sizeof why) == 0;
        for (int i = 0; i < n; i++)
            view_json(p, j, NULL, i, &st[i], have ? pic : NULL, xy, starts);
        free(pic);
        free(xy);
        free(starts);
    }
    pc_json_array_end(j);
}

/* POST /api/views/NAME: the command http_api.c built from the body. */
int pl_vcams_web_command(void *user, const char *name, const char *command, pc_json *j, char *err, size_t n)
{
    pipeline *p = user;
    if (!p->vcams) {
        snprintf(err, n, "no virtual cameras are configured (virtual_cameras, with panorama.rig)");
        return 404;
    }
    int i = pl_vcams_find(p->vcams, name);
    if (i < 0) {
        char answer[512];
        pl_vcams_command(p->vcams, name, answer, sizeof answer); /* says which there are */
        snprintf(err, n, "%s", answer + (strncmp(answer, "ERR ", 4) ? 0 : 4));
        return 404;
    }
    char cmd[PL_VCAMS_CMD_MAX + 1], answer[1024];
    if (snprintf(cmd, sizeof cmd, "%s %s", name, command) >= (int)sizeof cmd) {
        snprintf(err, n, "the command is too long");
        return 400;
    }
    pl_vcam_result r;
    int rc = pl_vcams_exec(p->vcams, cmd, answer, sizeof answer, &r);
    log_command(p, "http", cmd, rc, answer, &r);
    if (rc) {
        snprintf(err, n, "%s", answer + (strncmp(answer, "ERR ", 4) ? 0 : 4));
        return 400;
    }
    pl_vcam_status st[PC_MAX_VCAMS];
    pl_vcams_status(p->vcams, st, PC_MAX_VCAMS);
    pc_json_object(j, NULL);
    pc_json_bool(j, "ok", 1);
    pc_json_str(j, "view", name);
    pc_json_str(j, "answer", answer);
    pose_json(j, "goal", r.goal);
    pc_json_bool(j, "clamped", r.clamped);
    pc_json_str(j, "reason", r.why);
    pc_json_bool(j, "follow_off", r.follow_off);
    view_json(p, j, "status", i, &st[i], NULL, NULL, NULL);
    pc_json_object_end(j);
    return 0;
}

/* GET /api/picture/map: the directions of the live picture's points. */
int pl_vcams_web_map(void *user, pc_json *j, char *err, size_t n)
{
    pipeline *p = user;
    if (!p->vcams) {
        snprintf(err, n, "no virtual cameras are configured: the picture has no map");
        return 404;
    }
    pl_vcams_picture *pic = malloc(sizeof *pic);
    pl_vcams_map *map = malloc(sizeof *map);
    int rc = 503;
    if (!pic || !map)
        snprintf(err, n, "out of memory");
    else if (live_picture(p, pic, err, n) == 0 && pl_vcams_map_make(p->vcams, pic, map, err, n) == 0) {
        pc_json_object(j, NULL);
        pc_json_int(j, "width", pic->width);
        pc_json_int(j, "height", pic->height);
        pc_json_str(j, "kind", pic->ntiles ? "cameras" : "panorama");
        pc_json_array(j, "tiles");
        for (int t = 0; t < map->ntiles; t++) {
            pc_json_object(j, NULL);
            pc_json_fixed(j, "x", map->tile[t].x, 2);
            pc_json_fixed(j, "y", map->tile[t].y, 2);
            pc_json_fixed(j, "w", map->tile[t].w, 2);
            pc_json_fixed(j, "h", map->tile[t].h, 2);
            pc_json_int(j, "cols", map->tile[t].cols);
            pc_json_int(j, "rows", map->tile[t].rows);
            const int first = map->tile[t].first, cnt = map->tile[t].cols * map->tile[t].rows;
            for (int a = 0; a < 2; a++) {
                pc_json_array(j, a ? "tilt" : "pan");
                for (int k = first; k < first + cnt; k++)
                    if (map->seen[k])
                        pc_json_fixed(j, NULL, a ? map->tilt[k] : map->pan[k], 3);
                    else
                        pc_json_null(j, NULL);
                pc_json_array_end(j);
            }
            pc_json_object_end(j);
        }
        pc_json_array_end(j);
        pc_json_object_end(j);
        rc = 0;
    }
    free(pic);
    free(map);
    return rc;
}
