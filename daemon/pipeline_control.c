/* pipeline_control.c - the control socket's callbacks into the pipeline
 * (status, metrics, live algorithm switch, snapshot, IDR, reload); they
 * run on the control thread (control.c). The HTTP metrics server (http.c)
 * uses status and metrics too, plus the health check. */
#include "pipeline_int.h"

#include <stdio.h>

/* ------------------------------------------------------- control socket */

static void fill_camera_metrics(pipeline *p, int *n)
{
    int64_t now = pc_now_ns();
    *n = pc_capture_stats(p->cap, p->camstats, PC_CAPTURE_MAX_CAMERAS);
    if (*n > PC_CAPTURE_MAX_CAMERAS)
        *n = PC_CAPTURE_MAX_CAMERAS;
    for (int i = 0; i < *n; i++) {
        const pc_camera_stats *c = &p->camstats[i];
        pc_camera_metrics *m = &p->cammetrics[i];
        *m = (pc_camera_metrics){
            .name = c->name, .serial = c->serial, .frames = c->frames_completed,
            .timeouts = c->frames_failed[PC_FAIL_TIMEOUT],
            .missing_packets = c->frames_failed[PC_FAIL_MISSING_PACKETS],
            .size_mismatch = c->frames_failed[PC_FAIL_SIZE_MISMATCH],
            .other_failures = c->frames_failed[PC_FAIL_WRONG_PACKET_ID] + c->frames_failed[PC_FAIL_ABORTED] +
                              c->frames_failed[PC_FAIL_OTHER],
            .packets_resent = c->packets_resent, .packets_missing = c->packets_missing,
            .resend_requests = c->resend_requests, .packets_after_gap = c->packets_after_gap,
            .substituted = c->frames_substituted, .repaired = c->frames_repaired,
            .reconnects = c->reconnects,
            .connected = c->state == PC_CAM_STREAMING,
            .last_frame_age_s = c->last_arrival_ns ? (now - c->last_arrival_ns) / 1e9 : -1.0,
        };
    }
}

static int ctl_status(void *user, char *buf, size_t len)
{
    pipeline *p = user;
    pc_stats_snapshot snap;
    pc_stats_snapshot_get(p->stats, &snap);
    pc_stats_format_line(&snap, buf, len);
    pl_vcams_status_text(p, buf, len);
    return 0;
}

static int ctl_metrics(void *user, char *buf, size_t len)
{
    pipeline *p = user;
    pc_stats_snapshot snap;
    pc_stats_snapshot_get(p->stats, &snap);
    pthread_mutex_lock(&p->metrics_lock);
    int n;
    fill_camera_metrics(p, &n);
    int r = pc_stats_format_prometheus(&snap, p->cammetrics, n, buf, len);
    pthread_mutex_unlock(&p->metrics_lock);
    if (r >= 0)
        r = pl_vcams_prometheus(p, buf, len);
    if (r >= 0)
        r = pl_skew_prometheus(p, buf, len);
    return r < 0 ? -1 : 0;
}

static int ctl_set_algo(void *user, pc_algo_id algo, pc_variant variant, char *err, size_t errlen)
{
    pipeline *p = user;
    /* net without its weights (they failed at start): load them here, so
     * that a bad file is refused to the client, naming it, and the
     * algorithm in force stays; good ones go to the debayer step */
    if (algo == PC_ALGO_NET && !atomic_load(&p->have_net)) {
        pc_net *net = NULL;
        if (pc_net_load(&net, p->net_path, err, errlen)) {
            pc_log(&p->d->logger, PC_LOG_ERR, "algorithm switch to net refused: %s", err);
            return -1;
        }
        pc_net_free(atomic_exchange(&p->net_pending, net));
    }
    atomic_store(&p->req_algo, pl_algo_pack(algo, variant)); /* the stage thread applies it */
    return 0;
}

/* snapshot (cameras 0; view NULL or "": the main picture, else that
 * virtual camera's) and snapshot-cameras (1): the stage thread's snapshot
 * step takes the request with the next set (step_snapshot.c). */
int pl_snapshot_view_ok(pipeline *p, const char *view, char *err, size_t errlen)
{
    if (!view || !view[0] || (p->vcams && pl_vcams_find(p->vcams, view) >= 0))
        return 1;
    if (!p->vcams) {
        snprintf(err, errlen, "no virtual camera \"%.64s\": none are configured (virtual_cameras)", view);
    } else { /* the views' own answer names the ones there are */
        char answer[512];
        pl_vcams_command(p->vcams, view, answer, sizeof answer);
        snprintf(err, errlen, "%s", answer + (strncmp(answer, "ERR ", 4) ? 0 : 4));
    }
    return 0;
}

int pl_request_snapshot(pipeline *p, const char *path, int cameras, const char *view, unsigned long long token,
                        char *err, size_t errlen)
{
    if (!path || !path[0] || strlen(path) >= PC_PATH_LEN) {
        snprintf(err, errlen, "snapshot needs a path shorter than %d bytes", PC_PATH_LEN);
        return -1;
    }
    if (!pl_snapshot_view_ok(p, view, err, errlen))
        return -1;
    pthread_mutex_lock(&p->snap_lock);
    int busy = p->snap_path[0] != '\0';
    if (!busy) {
        snprintf(p->snap_path, sizeof p->snap_path, "%s", path);
        snprintf(p->snap_view, sizeof p->snap_view, "%s", view ? view : "");
        p->snap_token = token;
        p->snap_cameras = cameras;
    }
    pthread_mutex_unlock(&p->snap_lock);
    if (busy)
        snprintf(err, errlen, "another snapshot is waiting for the next frame set; try again");
    return busy ? -1 : 0;
}

static int ctl_snapshot(void *user, const char *path, const char *view, unsigned long long token, char *err,
                        size_t errlen)
{
    return pl_request_snapshot(user, path, 0, view, token, err, errlen);
}

static int ctl_snapshot_cameras(void *user, const char *dir, unsigned long long token, char *err, size_t errlen)
{
    return pl_request_snapshot(user, dir, 1, NULL, token, err, errlen);
}

static int ctl_idr(void *user, char *err, size_t errlen)
{
    pipeline *p = user;
    if (p->have_encoder) {
        pl_request_idr(p); /* every band's encoder, under enc_lock */
        return 0;
    }
    snprintf(err, errlen, "no encoder is running (--output null)");
    return -1;
}

/* The main thread reloads; the client is answered with the outcome
 * (pl_reload). A request that comes while a reload runs waits for the
 * next one, which its signal starts. */
static int ctl_reload(void *user, unsigned long long token, char *err, size_t errlen)
{
    pipeline *p = user;
    pthread_mutex_lock(&p->reload_lock);
    int full = p->nreload >= PL_RELOAD_WAITERS;
    if (!full)
        p->reload_token[p->nreload++] = token;
    pthread_mutex_unlock(&p->reload_lock);
    if (full) {
        snprintf(err, errlen, "%d reloads are waiting already; try again", PL_RELOAD_WAITERS);
        return -1;
    }
    pc_signals_request(p->d->signals, PC_SIG_RELOAD);
    return 0;
}

static int ctl_wb(void *user, char *buf, size_t len)
{
    pl_colour_describe_wb(user, buf, len);
    return 0;
}

static int ctl_wb_freeze(void *user, char *buf, size_t len) { return pl_colour_freeze_wb(user, buf, len); }

void pl_control_ops(pipeline *p, pc_control_ops *ops)
{
    *ops = (pc_control_ops){.user = p, .status = ctl_status, .metrics = ctl_metrics, .set_algo = ctl_set_algo,
                            .snapshot = ctl_snapshot, .snapshot_cameras = ctl_snapshot_cameras,
                            .idr = ctl_idr, .reload = ctl_reload,
                            .snapshot_dir = p->s->daemon.snapshot_dir, .wb = ctl_wb, .wb_freeze = ctl_wb_freeze,
                            .vcam = pl_vcams_control};
}

/* Frame sets flow: one done within the last second (or 25 frame periods at
 * low rates). */
static int http_healthy(void *user, char *why, size_t len)
{
    pipeline *p = user;
    int64_t last = atomic_load(&p->last_frame_ns);
    if (!last) {
        snprintf(why, len, "no frame set done yet");
        return 0;
    }
    double limit_s = p->fps > 0 && 25.0 / p->fps > 1.0 ? 25.0 / p->fps : 1.0;
    double age = (pc_now_ns() - last) / 1e9;
    if (age > limit_s) {
        snprintf(why, len, "no frame set for %.1f s", age);
        return 0;
    }
    return 1;
}

void pl_http_ops(pipeline *p, pc_http_ops *ops)
{
    *ops = (pc_http_ops){.user = p, .status = ctl_status, .metrics = ctl_metrics, .healthy = http_healthy};
}
