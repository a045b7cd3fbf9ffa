/* source_file.c - the `file` capture source: replays a PCRAW1 file
 * (raw_format.md) as frame sets. Needs no Aravis, so the daemon can replay
 * recordings on a GPU machine without cameras.
 *
 * Buffers use the stacked layout: each pool entry is one contiguous
 * W x (N*H) panorama and a set is read into it with one read, so the
 * consumer gets pc_frameset.stacked as well as the slab pointers.
 *
 * Realtime (default): sets are delivered at the file's pts spacing (or the
 * configured fps), never waiting for the consumer, dropped at the core's
 * one place when it falls behind -- like cameras. Fast (file_realtime 0):
 * the reader waits for the consumer, nothing is dropped: for benchmarks.
 */
#include "capture_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

typedef struct file_src {
    pc_raw_reader *rd;
    pc_raw_info info;
    pthread_t thread;
    int thread_started;
} file_src;

static int file_open(pc_capture *c, char *err, size_t errlen)
{
    file_src *fs = calloc(1, sizeof *fs);
    if (!fs) {
        PC_ERR(err, errlen, "capture: out of memory");
        return PC_ENOMEM;
    }
    c->srcdata = fs;
    int rc = pc_raw_reader_open(&fs->rd, c->cfg.file, &fs->info, err, errlen);
    if (rc)
        return rc;
    if (c->cfg.n_cameras && c->cfg.n_cameras != fs->info.n_cameras) {
        PC_ERR(err, errlen, "capture: raw file %s has %d cameras, the configuration %d",
               c->cfg.file, fs->info.n_cameras, c->cfg.n_cameras);
        return PC_EINVAL;
    }
    if (fs->info.n_sets == 0) {
        PC_ERR(err, errlen, "capture: raw file %s holds no complete frame set", c->cfg.file);
        return PC_EINVAL;
    }
    c->n = fs->info.n_cameras;
    c->width = fs->info.width;
    c->height = fs->info.height;
    c->cfa = fs->info.cfa;
    c->fmt = fs->info.fmt;
    if (!(c->fps > 0))
        c->fps = fs->info.fps;
    for (int i = 0; i < c->n; i++) {
        pc_cam *cam = &c->cam[i];
        cam->slab = i;
        snprintf(cam->name, sizeof cam->name, "file slab %d", i);
        cam->st.path = PC_PATH_FILE;
        snprintf(cam->st.model, sizeof cam->st.model, "PCRAW1 file");
    }
    return 0;
}

static int file_prepare(pc_capture *c, char *err, size_t errlen) { return 0; }

/* slot p of every camera free: panorama p can be overwritten */
static int free_panorama_locked(pc_capture *c)
{
    for (int p = 0; p < c->cam[0].nslots; p++) {
        int ok = 1;
        for (int i = 0; i < c->n && ok; i++)
            ok = c->cam[i].slots[p].state == SLOT_FREE;
        if (ok)
            return p;
    }
    return -1;
}

static void *file_thread(void *arg)
{
    pc_capture *c = arg;
    file_src *fs = c->srcdata;
    char err[256];
    pthread_setname_np(pthread_self(), "pc-file");
    /* out pts = pass start + (file pts - file's first pts) / scale; passes
     * (with file_loop) follow each other one period apart */
    double scale = c->fps / fs->info.fps;
    int64_t t0 = pc_now_ns(), file_first = 0, pass_start = 0, origin = 0, last_out = 0;
    int first = 1;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        int p = -1;
        while (!c->stopping && ((p = free_panorama_locked(c)) < 0 ||
                                (!c->cfg.file_realtime && c->ready_count + c->held >= c->pool_sets)))
            pthread_cond_wait(&c->cond_free, &c->lock);
        int stop = c->stopping;
        pc_slot *slots[PC_CAPTURE_MAX_CAMERAS];
        for (int i = 0; i < c->n && !stop; i++) {
            slots[i] = &c->cam[i].slots[p];
            slots[i]->state = SLOT_SOURCE;
        }
        pthread_mutex_unlock(&c->lock);
        if (stop)
            break;
        uint64_t index;
        int64_t pts;
        uint32_t subst;
        int rc = pc_raw_reader_read(fs->rd, slots[0]->data, &index, &pts, &subst, err, sizeof err);
        if (rc == PC_CAPTURE_EOF && c->cfg.file_loop && pc_raw_reader_rewind(fs->rd) == 0) {
            pass_start = last_out + c->period_ns;
            rc = pc_raw_reader_read(fs->rd, slots[0]->data, &index, &pts, &subst, err, sizeof err);
        }
        if (rc != 0) {
            if (rc < 0)
                pc_log(c->log, PC_LOG_ERR, "capture: %s", err);
            pthread_mutex_lock(&c->lock);
            for (int i = 0; i < c->n; i++)
                slots[i]->state = SLOT_FREE;
            c->eof = 1;
            pthread_cond_broadcast(&c->cond_ready);
            pthread_mutex_unlock(&c->lock);
            break;
        }
        if (first) {
            file_first = pass_start = origin = pts;
            first = 0;
        }
        int64_t out = pass_start + (int64_t)((double)(pts - file_first) / scale);
        if (out <= last_out && !(out == origin && last_out == 0))
            out = last_out + 1;
        if (c->cfg.file_realtime) {
            int64_t due = t0 + (out - origin);
            struct timespec ts = {due / 1000000000, due % 1000000000};
            while (!pc_cap_stopping(c) &&
                   clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
                ;
        }
        last_out = out;
        for (int i = 0; i < c->n; i++)
            slots[i]->frame_id = index;
        pc_cap_whole_set(c, slots, out, subst);
    }
    return NULL;
}

static int file_start(pc_capture *c, char *err, size_t errlen)
{
    file_src *fs = c->srcdata;
    for (int i = 0; i < c->n; i++)
        pc_cap_set_state(c, i, PC_CAM_STREAMING);
    if (pthread_create(&fs->thread, NULL, file_thread, c) != 0) {
        PC_ERR(err, errlen, "capture: cannot start the file reader thread");
        return PC_ENOMEM;
    }
    fs->thread_started = 1;
    return 0;
}

static void file_stop(pc_capture *c)
{
    file_src *fs = c->srcdata;
    if (fs && fs->thread_started) {
        pthread_join(fs->thread, NULL);
        fs->thread_started = 0;
    }
}

static void file_close(pc_capture *c)
{
    file_src *fs = c->srcdata;
    if (!fs)
        return;
    file_stop(c);
    pc_raw_reader_close(fs->rd);
    free(fs);
    c->srcdata = NULL;
}

static void file_requeue(pc_capture *c, pc_slot *s) { s->state = SLOT_FREE; }

const pc_source_ops pc_source_file_ops = {
    .name = "file",
    .open = file_open,
    .prepare = file_prepare,
    .start = file_start,
    .stop = file_stop,
    .close = file_close,
    .requeue = file_requeue,
    .stacked_layout = 1,
};
