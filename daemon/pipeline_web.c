/* pipeline_web.c - the operator's web page on daemon.http_listen: its
 * server (http.c in the web role) set up and torn down, and the API's
 * callbacks into the pipeline (they
 * run on the HTTP server's thread): the status as JSON, the picture, the
 * algorithm switch, white balance, IDR, and the snapshots the web asked
 * for (written by the stage thread's snapshot path, answered through
 * pl_snapshot_done). The same actions as the control socket, through the
 * same callbacks (pl_control_ops). The live pictures (the main picture's
 * and each virtual camera's) are the stage thread's last step
 * (step_web_picture.c), reached through p->webpic[]. */
#include "panocap_config.h"
#include "pipeline_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* The web's snapshot tokens; the control socket's are its connection
 * numbers, far below. */
#define WEB_TOKEN_BIT (1ULL << 62)
#define WEB_SNAPS 8
#define SNAP_TIMEOUT_NS (15LL * 1000000000)

typedef struct web_snap {
    char name[64];
    unsigned long long token; /* 0: slot free */
    int state;                /* 1 being written, 2 written, 3 failed */
    char msg[256];
    int64_t asked_ns;
} web_snap;

/* Guarded by lock: the callbacks may run on any thread http.c uses. */
struct pl_web {
    pthread_mutex_t lock;
    pc_control_ops cops;      /* the control socket's callbacks, reused */
    pc_http_ops hops;         /* status line, metrics, health */
    char snapshot_dir[PC_PATH_LEN];
    char instance[48];
    int64_t started_wall_s;
    /* rates between status requests at least a second apart */
    int64_t cam_t[PC_CAPTURE_MAX_CAMERAS];
    uint64_t cam_frames[PC_CAPTURE_MAX_CAMERAS];
    double cam_fps[PC_CAPTURE_MAX_CAMERAS];
    int64_t band_t[PL_MAX_ENCODERS];
    uint64_t band_bytes[PL_MAX_ENCODERS];
    double band_bps[PL_MAX_ENCODERS];
    pc_camera_stats cams[PC_CAPTURE_MAX_CAMERAS];
    pc_encoder_stats est[PL_MAX_ENCODERS];
    char enc_name[PL_MAX_ENCODERS][32], enc_codec[PL_MAX_ENCODERS][16];
    web_snap snap[WEB_SNAPS];
    unsigned long long next_token;
    /* web snapshots' files removed: the folder keeps only the WEB_SNAPS
     * the API serves (a token holder could fill the disk) */
    uint64_t snaps_removed;
};

/* ------------------------------------------------------------- status */

/* w->lock held: a snapshot no frame set took within 15 s fails, and its
 * request is taken back. */
static void expire_snapshots(pipeline *p, pl_web *w)
{
    int64_t now = pc_now_ns();
    for (int i = 0; i < WEB_SNAPS; i++) {
        web_snap *s = &w->snap[i];
        if (!s->token || s->state != 1 || now - s->asked_ns <= SNAP_TIMEOUT_NS)
            continue;
        pthread_mutex_lock(&p->snap_lock);
        if (p->snap_token == s->token) {
            p->snap_path[0] = '\0';
            p->snap_view[0] = '\0';
            p->snap_token = 0;
            p->snap_cameras = 0;
        }
        pthread_mutex_unlock(&p->snap_lock);
        s->state = 3;
        snprintf(s->msg, sizeof s->msg, "no frame set came within 15 s to take it");
    }
}

/* A rate from a counter, refreshed when the last sample is >= 1 s old. */
static double rate(int64_t now, uint64_t count, int64_t *t, uint64_t *last, double *r)
{
    if (!*t || count < *last) {
        *t = now;
        *last = count;
        return *r = -1;
    }
    if (now - *t >= 1000000000LL) {
        *r = (double)(count - *last) / ((now - *t) / 1e9);
        *t = now;
        *last = count;
    }
    return *r;
}

static void stage_json(pc_json *j, const char *key, const pc_stage_stats *st)
{
    pc_json_object(j, key);
    pc_json_uint(j, "count", st->count);
    if (st->count) {
        pc_json_fixed(j, "p50_ms", st->p50_ms, 3);
        pc_json_fixed(j, "p99_ms", st->p99_ms, 3);
        pc_json_fixed(j, "max_ms", st->max_ms, 3);
    } else {
        pc_json_null(j, "p50_ms");
        pc_json_null(j, "p99_ms");
        pc_json_null(j, "max_ms");
    }
    pc_json_object_end(j);
}

/* thumbs: 0 when the live picture has no camera thumbnails (the panorama) */
static void cameras_json(pipeline *p, pl_web *w, pc_json *j, int64_t now, int thumbs)
{
    int n = pc_capture_stats(p->cap, w->cams, PC_CAPTURE_MAX_CAMERAS);
    if (n > PC_CAPTURE_MAX_CAMERAS)
        n = PC_CAPTURE_MAX_CAMERAS;
    pc_json_array(j, "cameras");
    for (int i = 0; i < n; i++) {
        const pc_camera_stats *c = &w->cams[i];
        uint64_t failed = 0;
        for (int k = 0; k < PC_FAIL_COUNT; k++)
            failed += c->frames_failed[k];
        char url[64];
        snprintf(url, sizeof url, "api/cameras/%d/picture.jpg", i);
        pc_json_object(j, NULL);
        pc_json_int(j, "index", i);
        pc_json_str(j, "name", c->name);
        pc_json_str(j, "serial", c->serial);
        pc_json_str(j, "model", c->model);
        pc_json_str(j, "state", pc_cam_state_name(c->state));
        pc_json_bool(j, "connected", c->state == PC_CAM_STREAMING);
        pc_json_fixed(j, "fps", rate(now, c->frames_completed, &w->cam_t[i], &w->cam_frames[i], &w->cam_fps[i]), 2);
        pc_json_uint(j, "frames", c->frames_completed);
        pc_json_uint(j, "frames_failed", failed);
        pc_json_uint(j, "packets_missing", c->packets_missing);
        pc_json_uint(j, "packets_resent", c->packets_resent);
        pc_json_uint(j, "frames_repaired", c->frames_repaired);
        pc_json_uint(j, "frames_substituted", c->frames_substituted);
        pc_json_uint(j, "reconnects", c->reconnects);
        if (c->have_skew) /* its capture time minus its set's median (+: late) */
            pc_json_fixed(j, "skew_offset_ms", c->skew_offset_ns / 1e6, 3);
        else
            pc_json_null(j, "skew_offset_ms");
        if (c->last_arrival_ns)
            pc_json_fixed(j, "last_frame_age_s", (now - c->last_arrival_ns) / 1e9, 3);
        else
            pc_json_null(j, "last_frame_age_s");
        pc_json_str(j, "picture", thumbs ? url : NULL);
        pc_json_object_end(j);
    }
    pc_json_array_end(j);
}

static void recording_json(pc_json *j, const pc_output_stats *o)
{
    if (!o->recording) {
        pc_json_null(j, "recording");
        return;
    }
    pc_json_object(j, "recording");
    pc_json_str(j, "folder", o->folder);
    pc_json_int(j, "segment_s", o->segment_seconds);
    if (o->used_bytes >= 0) {
        pc_json_int(j, "used_bytes", o->used_bytes);
        pc_json_int(j, "segments", o->segments);
    } else {
        pc_json_null(j, "used_bytes");
        pc_json_null(j, "segments");
    }
    pc_json_int(j, "max_bytes", o->max_bytes);
    pc_json_int(j, "max_age_s", o->max_age_s);
    pc_json_int(j, "min_free", o->min_free);
    struct statvfs v;
    if (statvfs(o->folder, &v) == 0) {
        pc_json_int(j, "free_bytes", (int64_t)v.f_bavail * (int64_t)v.f_frsize);
        pc_json_int(j, "disk_bytes", (int64_t)v.f_blocks * (int64_t)v.f_frsize);
    } else {
        pc_json_null(j, "free_bytes");
        pc_json_null(j, "disk_bytes");
    }
    pc_json_uint(j, "files_deleted", o->files_deleted);
    pc_json_bool(j, "waiting_for_space", o->waiting_space);
    pc_json_object_end(j);
}

/* Encoders (one per band of every encoded picture, and the preview's)
 * and their outputs, each with its picture's name: a picture's bands'
 * shared outputs (encode.band_outputs "streams") once, from its band 0. */
static void encoders_json(pipeline *p, pl_web *w, pc_json *j, const pc_stats_snapshot *snap, int64_t now)
{
    int nthreads = p->have_encoder ? p->nthreads : 0;
    pthread_mutex_lock(&p->enc_lock); /* a band's thread may be swapping its encoder */
    for (int b = 0; b < nthreads; b++) {
        pc_encoder *e = p->band[b].enc;
        snprintf(w->enc_name[b], sizeof w->enc_name[b], "%s", e ? pc_encoder_name(e) : "");
        snprintf(w->enc_codec[b], sizeof w->enc_codec[b], "%s", e ? pc_encoder_codec(e) : "");
        if (e)
            pc_encoder_stats_get(e, &w->est[b]);
        else
            memset(&w->est[b], 0, sizeof w->est[b]);
    }
    pthread_mutex_unlock(&p->enc_lock);

    pc_json_array(j, "encoders");
    for (int b = 0; b < nthreads; b++) {
        const pl_band *band = &p->band[b];
        const pc_encoder_stats *es = &w->est[b];
        pc_json_object(j, NULL);
        pc_json_str(j, "picture", band->pic->cfg.name);
        pc_json_int(j, "band", band->preview ? -1 : band->band);
        pc_json_bool(j, "preview", band->preview);
        pc_json_str(j, "encoder", w->enc_name[b]);
        pc_json_str(j, "codec", w->enc_codec[b]);
        if (band->preview) { /* its size is kept in rows x row0 (pipeline_encoder.c) */
            pc_json_int(j, "width", band->rows);
            pc_json_int(j, "height", band->row0);
        } else {
            pc_json_int(j, "first_row", band->row0);
            pc_json_int(j, "rows", band->rows);
        }
        pc_json_int(j, "bitrate_bps", es->bitrate);
        pc_json_fixed(j, "bitrate_out_bps", rate(now, es->bytes_out * 8, &w->band_t[b], &w->band_bytes[b],
                                                 &w->band_bps[b]), 0);
        pc_json_uint(j, "frames", es->frames_in);
        pc_json_uint(j, "keyframes", es->keyframes);
        if (!band->preview) { /* headroom: mean encode time of its picture's encoders / frame period */
            double ms, load = pc_stats_picture_load(p->stats, band->pic->index, &ms);
            if (load == load) {
                pc_json_fixed(j, "encode_ms", ms, 2);
                pc_json_fixed(j, "encode_load", load, 3);
            }
        }
        pc_json_object_end(j);
    }
    pc_json_array_end(j);

    pc_json_array(j, "outputs");
    for (int b = 0; b < nthreads; b++) {
        const pl_band *band = &p->band[b];
        const pl_picture *pic = band->pic;
        if (pic->mux && band->band > 0 && !band->preview)
            continue; /* the bands' shared outputs: once */
        for (int o = 0; o < w->est[b].n_outputs; o++) {
            const pc_output_stats *os = &w->est[b].outputs[o];
            pc_json_object(j, NULL);
            pc_json_int(j, "index", band->preview ? o : pic->out0 + o); /* the metrics' output index */
            pc_json_str(j, "picture", pic->cfg.name);
            pc_json_int(j, "band", band->preview || pic->mux ? -1 : band->band);
            pc_json_bool(j, "preview", band->preview);
            pc_json_str(j, "url", os->url);
            pc_json_str(j, "state", pc_output_state_name(os->state));
            pc_json_uint(j, "packets_written", os->packets_written);
            pc_json_uint(j, "packets_dropped", os->packets_dropped);
            pc_json_uint(j, "bytes_written", os->bytes_written);
            pc_json_uint(j, "errors", os->failures);
            pc_json_uint(j, "reconnects", os->reconnects);
            pc_json_str(j, "last_error", os->last_error);
            if (!band->preview && pic->out0 + o < snap->outputs)
                stage_json(j, "write", &snap->stage[PC_STAT_WRITE0 + pic->out0 + o]);
            recording_json(j, os);
            pc_json_object_end(j);
        }
    }
    pc_json_array_end(j);
}

static int web_status(void *user, pc_json *j)
{
    pipeline *p = user;
    pl_web *w = p->webapi;
    int64_t now = pc_now_ns();
    pc_stats_snapshot snap;
    pc_stats_snapshot_get(p->stats, &snap);
    char line[512], why[256] = "";
    pc_stats_format_line(&snap, line, sizeof line);
    int healthy = w->hops.healthy(p, why, sizeof why);
    pc_web_picture_info pi;
    pc_web_picture_info_get(p->webpic[0], &pi);

    pthread_mutex_lock(&w->lock);
    expire_snapshots(p, w);
    pc_json_object(j, NULL);
    pc_json_object(j, "daemon");
    pc_json_str(j, "version", PANOCAP_VERSION);
    pc_json_str(j, "instance", w->instance);
    pc_json_int(j, "started_unix_s", w->started_wall_s);
    pc_json_fixed(j, "uptime_s", snap.uptime_s, 1);
    pc_json_bool(j, "healthy", healthy);
    pc_json_str(j, "health", healthy ? "ok" : why);
    pc_json_str(j, "status_line", line);
    pc_json_object_end(j);

    pc_json_object(j, "pipeline");
    pc_json_str(j, "algo", snap.algo);
    pc_json_str(j, "variant", snap.variant);
    pc_json_str(j, "backend", pc_backend_name(p->be));
    const pl_picture *main_pic = &p->picture[0];
    pc_json_str(j, "layout", main_pic->encoded ? pc_layout_name(main_pic->plan.layout) : "none");
    pc_json_int(j, "bands", main_pic->encoded ? main_pic->nbands : 0);
    pc_json_int(j, "pictures", p->npictures);
    pc_json_int(j, "cameras", p->ncam);
    pc_json_object(j, "camera_size");
    pc_json_int(j, "width", p->width);
    pc_json_int(j, "height", p->slab_h);
    pc_json_object_end(j);
    pc_json_object(j, "picture_size");
    pc_json_int(j, "width", main_pic->width);
    pc_json_int(j, "height", main_pic->height);
    pc_json_object_end(j);
    pc_json_fixed(j, "fps", snap.fps, 2);
    pc_json_fixed(j, "fps_nominal", p->fps, 2);
    pc_json_fixed(j, "budget_ms", snap.budget_ms, 2);
    pc_json_uint(j, "frames_in", snap.frames_in);
    pc_json_uint(j, "frames_encoded", snap.encoded);
    pc_json_uint(j, "frames_dropped", snap.dropped);
    pc_json_uint(j, "frames_substituted", snap.substituted);
    pc_json_uint(j, "slabs_substituted", snap.substituted_slabs);
    pc_json_uint(j, "over_budget", snap.over_budget);
    pc_json_uint(j, "window_frames", snap.window_frames);
    pc_json_uint(j, "window_over_budget", snap.window_over_budget);
    pc_json_fixed(j, "window_s", snap.window_s, 1);
    pc_json_fixed(j, "bitrate_bps", snap.bitrate_bps, 0);
    pc_json_object(j, "stages");
    for (int s = PC_STAT_QUEUE; s <= PC_STAT_TOTAL; s++)
        stage_json(j, pc_stats_slot_name(s), &snap.stage[s]);
    pc_json_object_end(j);
    pl_skew_json(p, j);
    pc_json_object_end(j);

    cameras_json(p, w, j, now, pi.thumb_width > 0);
    encoders_json(p, w, j, &snap, now);

    pc_json_object(j, "white_balance");
    pl_colour_wb_json(p, j);
    pc_json_object_end(j);

    pc_json_object(j, "picture");
    pc_json_bool(j, "available", pi.available);
    pc_json_str(j, "url", "api/picture.jpg");
    pc_json_str(j, "source", pi.available ? pi.source : "");
    pc_json_str(j, "note", pi.why);
    pc_json_int(j, "width", pi.width);
    pc_json_int(j, "height", pi.height);
    pc_json_int(j, "scale", pi.scale); /* picture pixels per live picture pixel */
    pc_json_int(j, "thumb_width", pi.thumb_width);
    pc_json_int(j, "thumb_height", pi.thumb_height);
    pc_json_int(j, "fps", PC_WEB_PICTURE_FPS);
    pc_json_uint(j, "seq", pi.seq);
    if (pi.age_s >= 0)
        pc_json_fixed(j, "age_s", pi.age_s, 2);
    else
        pc_json_null(j, "age_s");
    pc_json_fixed(j, "stage_ms_mean", pi.stage_ms_mean, 3);
    pc_json_fixed(j, "stage_ms_max", pi.stage_ms_max, 3);
    pc_json_fixed(j, "worker_ms_mean", pi.worker_ms_mean, 2);
    pc_json_object_end(j);

    /* the snapshots the web asked for, newest first: the page downloads
     * one once it is written */
    pc_json_array(j, "snapshots");
    int order[WEB_SNAPS], ns = 0;
    for (int i = 0; i < WEB_SNAPS; i++)
        if (w->snap[i].token) {
            int k = ns++;
            while (k > 0 && w->snap[order[k - 1]].asked_ns < w->snap[i].asked_ns) {
                order[k] = order[k - 1];
                k--;
            }
            order[k] = i;
        }
    for (int k = 0; k < ns; k++) {
        const web_snap *sn = &w->snap[order[k]];
        char url[128];
        snprintf(url, sizeof url, "api/snapshots/%s", sn->name);
        pc_json_object(j, NULL);
        pc_json_str(j, "file", sn->name);
        pc_json_str(j, "url", url);
        pc_json_str(j, "state", sn->state == 1 ? "writing" : sn->state == 2 ? "written" : "failed");
        pc_json_str(j, "error", sn->state == 3 ? sn->msg : "");
        pc_json_object_end(j);
    }
    pc_json_array_end(j);
    /* the folder keeps only the snapshots the API serves: how many of
     * the web's it holds, and how many it removed */
    int kept = 0;
    for (int i = 0; i < WEB_SNAPS; i++)
        kept += w->snap[i].token && w->snap[i].state == 2;
    pc_json_object(j, "snapshot_files");
    pc_json_int(j, "kept", kept);
    pc_json_int(j, "limit", WEB_SNAPS);
    pc_json_uint(j, "removed", w->snaps_removed);
    pc_json_object_end(j);

    /* the virtual cameras: their poses, controls and frames on the live picture */
    pl_vcams_json(p, j);

    pc_json_object(j, "control");
    pc_json_bool(j, "enabled", pc_http_control_enabled(p->web));
    pc_json_str(j, "token_header", PC_HTTP_TOKEN_HEADER);
    pc_json_bool(j, "snapshots", w->snapshot_dir[0] != '\0');
    pc_json_bool(j, "idr", p->have_encoder);
    pc_json_object_end(j);
    pc_json_object_end(j);
    pthread_mutex_unlock(&w->lock);
    return 0;
}

/* ------------------------------------------------------------- actions */

static int web_picture(void *user, int camera, uint8_t **data, size_t *len, uint64_t *seq, char *why, size_t n)
{
    pipeline *p = user;
    return pc_web_picture_get(p->webpic[0], camera, data, len, seq, why, n);
}

pc_web_picture *pl_web_view_picture(pipeline *p, const char *view)
{
    for (int i = 1; i < p->npictures && i < PL_MAX_PICTURES; i++)
        if (!strncmp(p->picture[i].cfg.name, "vcam:", 5) && !strcmp(p->picture[i].cfg.name + 5, view))
            return p->webpic[i];
    return NULL;
}

/* GET /api/views/NAME/picture.jpg: -2 (404) for a name no view has. */
static int web_view_picture(void *user, const char *name, uint8_t **data, size_t *len, uint64_t *seq, char *why,
                            size_t n)
{
    pipeline *p = user;
    *data = NULL;
    *len = 0;
    *seq = 0;
    if (!p->vcams) {
        snprintf(why, n, "no virtual cameras are configured (virtual_cameras, with panorama.rig)");
        return -2;
    }
    if (pl_vcams_find(p->vcams, name) < 0) {
        snprintf(why, n, "no virtual camera named \"%s\" (GET /api/status lists the views)", name);
        return -2;
    }
    pc_web_picture *w = pl_web_view_picture(p, name);
    if (!w) {
        snprintf(why, n, "view %s has no live picture: the render step does not draw it here", name);
        return -1;
    }
    return pc_web_picture_get(w, -1, data, len, seq, why, n);
}

static int web_set_algo(void *user, pc_algo_id algo, pc_variant variant, char *err, size_t n)
{
    pipeline *p = user;
    return p->webapi->cops.set_algo(p, algo, variant, err, n);
}

static int web_idr(void *user, char *err, size_t n)
{
    pipeline *p = user;
    return p->webapi->cops.idr(p, err, n);
}

static int web_wb(void *user, int freeze, char *text, size_t len, char *err, size_t n)
{
    pipeline *p = user;
    int rc = freeze ? pl_colour_freeze_wb(p, text, len) : pl_colour_thaw_wb(p, text, len);
    if (rc < 0) {
        snprintf(err, n, "%s", text);
        err[strcspn(err, "\n")] = '\0';
        return -1;
    }
    return 0;
}

/* Removes a web snapshot's file (one the API no longer serves), counted.
 * Not under w->lock. */
static void remove_snapshot(pipeline *p, pl_web *w, const char *name)
{
    char path[PC_PATH_LEN + 80];
    snprintf(path, sizeof path, "%s/%s", w->snapshot_dir, name);
    if (unlink(path) == 0) {
        pthread_mutex_lock(&w->lock);
        w->snaps_removed++;
        pthread_mutex_unlock(&w->lock);
        pc_log(&p->d->logger, PC_LOG_DEBUG, "http: snapshot %s removed (the web keeps its last %d)", path, WEB_SNAPS);
    } else if (errno != ENOENT) {
        pc_log(&p->d->logger, PC_LOG_WARNING, "http: cannot remove the snapshot %s: %s", path, strerror(errno));
    }
}

static int web_snapshot(void *user, const char *view, char *name, size_t namelen, int *code, char *err, size_t n)
{
    pipeline *p = user;
    pl_web *w = p->webapi;
    *code = 409;
    if (!w->snapshot_dir[0]) {
        snprintf(err, n, "snapshots are off (daemon.snapshot_dir is empty)");
        return -1;
    }
    if (!pl_snapshot_view_ok(p, view, err, n)) { /* before a slot is taken */
        *code = 404;
        return -1;
    }
    /* its place in the table first: a free one, else the oldest answered
     * one, whose file goes (the folder keeps only what the API serves);
     * every one still being written: refused */
    pthread_mutex_lock(&w->lock);
    expire_snapshots(p, w);
    web_snap *slot = NULL, *oldest = NULL;
    for (int i = 0; i < WEB_SNAPS; i++) {
        web_snap *x = &w->snap[i];
        if (!x->token) {
            if (!slot)
                slot = x;
        } else if (x->state != 1 && (!oldest || x->asked_ns < oldest->asked_ns)) {
            oldest = x;
        }
    }
    if (!slot)
        slot = oldest;
    if (!slot) {
        pthread_mutex_unlock(&w->lock);
        snprintf(err, n, "the last %d snapshots are all still being written; try again in a second", WEB_SNAPS);
        return -1;
    }
    const web_snap old = *slot; /* given back if the request fails; else its file goes */
    unsigned long long seq = ++w->next_token, token = WEB_TOKEN_BIT | seq;
    *slot = (web_snap){.token = token, .state = 1, .asked_ns = pc_now_ns()}; /* held; named below */
    pthread_mutex_unlock(&w->lock);
    char path[PC_PATH_LEN + 80], nm[64];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    struct stat sb;
    int rc = 0;
    for (int i = 0;; i++) { /* a name nothing has yet (no file, no link) */
        snprintf(nm, sizeof nm, "panocap-%s-%llu%s%.0d.png", stamp, seq, i ? "-" : "", i);
        snprintf(path, sizeof path, "%s/%s", w->snapshot_dir, nm);
        if (lstat(path, &sb) != 0)
            break;
        if (i > 100) {
            snprintf(err, n, "cannot find a free file name in %s", w->snapshot_dir);
            rc = -1;
            break;
        }
    }
    if (!rc && strlen(path) >= PC_PATH_LEN) {
        snprintf(err, n, "the snapshot folder's path is too long");
        rc = -1;
    }
    pthread_mutex_lock(&w->lock);
    if (!rc)
        snprintf(slot->name, sizeof slot->name, "%s", nm);
    pthread_mutex_unlock(&w->lock);
    if (!rc)
        rc = pl_request_snapshot(p, path, 0, view, token, err, n);
    if (rc) { /* the slot back to what it held */
        pthread_mutex_lock(&w->lock);
        if (slot->token == token)
            *slot = old;
        pthread_mutex_unlock(&w->lock);
        return -1;
    }
    if (old.token)
        remove_snapshot(p, w, old.name);
    pc_log(&p->d->logger, PC_LOG_INFO, "http: snapshot to %s%s%s requested", path, view ? " of the view " : "",
           view ? view : "");
    snprintf(name, namelen, "%s", nm);
    return 0;
}

static int web_snapshot_file(void *user, const char *name, char *path, size_t pathlen, int *unknown, char *err,
                             size_t n)
{
    pipeline *p = user;
    pl_web *w = p->webapi;
    *unknown = 0;
    pthread_mutex_lock(&w->lock);
    expire_snapshots(p, w);
    web_snap *s = NULL;
    for (int i = 0; i < WEB_SNAPS && !s; i++)
        if (w->snap[i].token && !strcmp(w->snap[i].name, name))
            s = &w->snap[i];
    int rc;
    if (!s) {
        *unknown = 1;
        snprintf(err, n, "no snapshot %s (the web keeps its last %d)", name, WEB_SNAPS);
        rc = -1;
    } else if (s->state == 1) {
        rc = 1;
    } else if (s->state == 3) {
        snprintf(err, n, "snapshot %s failed: %s", name, s->msg);
        rc = -1;
    } else {
        snprintf(path, pathlen, "%s/%s", w->snapshot_dir, s->name);
        rc = 0;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void pl_snapshot_done(pipeline *p, unsigned long long token, int rc, const char *msg)
{
    if (!(token & WEB_TOKEN_BIT)) {
        pc_control_done(p->ctl, token, rc, msg);
        return;
    }
    pl_web *w = p->webapi;
    if (!w)
        return;
    int held = 0;
    pthread_mutex_lock(&w->lock);
    for (int i = 0; i < WEB_SNAPS; i++)
        if (w->snap[i].token == token) {
            w->snap[i].state = rc ? 3 : 2;
            snprintf(w->snap[i].msg, sizeof w->snap[i].msg, "%s", msg ? msg : "");
            held = 1;
        }
    pthread_mutex_unlock(&w->lock);
    /* written after its place was given to a newer one (it expired while
     * written): nothing serves it, so it goes too */
    if (!held && !rc && msg) {
        const char *slash = strrchr(msg, '/');
        remove_snapshot(p, w, slash ? slash + 1 : msg);
    }
}

/* -------------------------------------------------------- set-up, end */

void pl_web_start(pipeline *p)
{
    const pc_settings *s = p->s;
    pl_web *w = calloc(1, sizeof *w);
    if (!w) {
        pc_log(&p->d->logger, PC_LOG_WARNING, "web page off: out of memory");
        return;
    }
    pthread_mutex_init(&w->lock, NULL);
    pl_control_ops(p, &w->cops);
    pl_http_ops(p, &w->hops);
    snprintf(w->snapshot_dir, sizeof w->snapshot_dir, "%s", s->daemon.snapshot_dir);
    w->started_wall_s = (int64_t)time(NULL);
    snprintf(w->instance, sizeof w->instance, "%ld-%lld", (long)getpid(), (long long)pc_wall_ns());
    p->webapi = w;

    pc_http_ops ops = w->hops;
    ops.api_status = web_status;
    ops.picture = web_picture;
    ops.view_picture = web_view_picture;
    ops.set_algo = web_set_algo;
    ops.wb = web_wb;
    ops.idr = web_idr;
    ops.snapshot = web_snapshot;
    ops.snapshot_file = web_snapshot_file;
    ops.view_command = pl_vcams_web_command;
    ops.picture_map = pl_vcams_web_map;
    _Static_assert(PC_MAX_FALLBACKS <= PC_HTTP_MAX_ALLOWED_HOSTS, "every daemon.http_allowed_hosts entry fits");
    const char *hosts[PC_MAX_FALLBACKS];
    int nhosts = 0;
    for (int i = 0; i < s->daemon.http_allowed_hosts.count && i < PC_MAX_FALLBACKS; i++)
        hosts[nhosts++] = s->daemon.http_allowed_hosts.item[i];
    pc_http_config hc = {.listen = s->daemon.http_listen, .key = "http_listen", .web = 1,
                         .token_file = s->daemon.http_token_file, .allowed_hosts = hosts,
                         .n_allowed_hosts = nhosts};
    if (pc_http_start(&p->web, &hc, &ops, &p->d->logger, p->err, sizeof p->err))
        pc_log(&p->d->logger, PC_LOG_WARNING, "web page off: %s", p->err);
}

void pl_web_stop(pipeline *p)
{
    pc_http_stop(p->web);
    p->web = NULL;
}

void pl_web_close(pipeline *p)
{
    if (p->webapi) {
        pthread_mutex_destroy(&p->webapi->lock);
        free(p->webapi);
        p->webapi = NULL;
    }
}
