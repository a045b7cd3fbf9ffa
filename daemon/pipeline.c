/* pipeline.c - the running daemon: capture -> debayer -> encode -> outputs.
 * This file: set-up, the main thread's run loop and teardown; the other
 * threads' code is in pipeline_stage.c, pipeline_encoder.c,
 * pipeline_reload.c and pipeline_control.c (pipeline_int.h: the shared
 * state and who owns it).
 *
 * Threads and who owns what:
 *   capture threads  (capture/)  group camera frames into frame sets; when
 *                    this pipeline is slow the capture pool is full and whole
 *                    sets are dropped there, counted (the one drop point).
 *   stage thread     (stage)     takes a set and hands it down the list of
 *                    steps (pipeline_step.h: raw recording, colour, snapshot,
 *                    then into picture slot k the debayer: its slabs by DMA
 *                    into the device panorama (CUDA) or stacked (CPU), the
 *                    chosen algorithm), waits for slot k, gives the set back
 *                    to capture and queues slot k for encoding.
 *   encoder threads  (encoder)   one per band of every encoded picture (the
 *                    main one, each virtual camera, ...) and the preview's:
 *                    hands its band of slot k to its encoder (by reference,
 *                    or a device-to-device copy into NVENC's CUDA frame),
 *                    lets go of the slot; the packets go to the outputs'
 *                    own threads (encode/).
 *   main thread      (here)      signals, reloads, the status line, stop.
 *   control thread   (control.c, pipeline_control.c) status / metrics / live algorithm switch.
 *   HTTP threads     (http.c; pipeline_control.c, pipeline_web.c) metrics, the web page and its API;
 *                    the web picture's thread (web_picture.c) makes its JPEGs.
 * Between the stage and encoder threads sit `in_flight` picture slots (a
 * fixed pool): the GPU stage works on set k+1 while set k is encoded. Nothing
 * in the steady state allocates.
 *
 * Timestamps per set: complete (capture), start and NV12 ready (stage),
 * packet out and written per output (encoder callbacks); they meet in a small
 * ring keyed by pts and go to pc_stats once every output that was writing
 * wrote the frame or dropped it (pipeline_encoder.c); the counters are
 * counted as the events happen.
 */
#include "check.h"
#include "cpulist.h"
#include "pipeline_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---------------------------------------------------------------- queues */

static void fifo_push(fifo *f, job j)
{
    f->item[(f->head + f->count) % f->cap] = j;
    f->count++;
}

static job fifo_pop(fifo *f)
{
    job j = f->item[f->head];
    f->head = (f->head + 1) % f->cap;
    f->count--;
    return j;
}

/* Blocks until q has an item or stop (for the free-slot queue). */
int pl_take(pipeline *p, fifo *q, job *out, int honour_stop)
{
    pthread_mutex_lock(&p->q_lock);
    while (q->count == 0 && !(honour_stop && atomic_load(&p->stop)))
        pthread_cond_wait(&p->q_cond, &p->q_lock);
    int ok = q->count > 0;
    if (ok)
        *out = fifo_pop(q);
    pthread_mutex_unlock(&p->q_lock);
    return ok;
}

void pl_put(pipeline *p, fifo *q, job j)
{
    pthread_mutex_lock(&p->q_lock);
    fifo_push(q, j);
    pthread_cond_broadcast(&p->q_cond);
    pthread_mutex_unlock(&p->q_lock);
}

void pl_wake_all(pipeline *p)
{
    pthread_mutex_lock(&p->q_lock);
    pthread_cond_broadcast(&p->q_cond);
    pthread_mutex_unlock(&p->q_lock);
}

void pl_fail(pipeline *p, const char *what)
{
    pc_log(&p->d->logger, PC_LOG_ERR, "%s", what);
    atomic_store(&p->failed, 1);
    atomic_store(&p->stop, 1);
    pl_wake_all(p);
}

/* ------------------------------------------------------------- set-up */

/* Capture buffers in the memory the backend reads fastest (CUDA: pinned). */
static void *backend_host_alloc(size_t n, void *user) { return pc_backend_host_alloc(user, n); }
static void backend_host_free(void *ptr, void *user) { pc_backend_host_free(user, ptr); }

/* panorama.rig, read as --check-config read it (a file changed since is
 * a configuration error: 78), for the capture's scene and the render
 * step. Without a rig p->rig stays NULL. */
static int open_rig(pipeline *p)
{
    if (!p->s->panorama.rig[0])
        return 0;
    p->rig = calloc(1, sizeof *p->rig);
    pc_diag *dg = calloc(1, sizeof *dg);
    int rc = -1;
    if (!p->rig || !dg) {
        snprintf(p->err, sizeof p->err, "out of memory");
    } else {
        pc_diag_init(dg);
        if (pc_settings_check_rig(p->s, p->rig, dg) == 0 && p->rig->have_rig) {
            rc = 0;
        } else {
            for (int i = 0; i < dg->count; i++)
                if (dg->item[i].severity == PC_DIAG_ERROR) {
                    snprintf(p->err, sizeof p->err, "%s: %s", dg->item[i].key, dg->item[i].msg);
                    break;
                }
        }
    }
    free(dg);
    return rc;
}

static int open_capture(pipeline *p)
{
    pc_capture_config cc;
    /* as --check-config saw it */
    pc_check_capture_config(p->s, p->rig ? &p->rig->rig : NULL, &cc, &p->d->logger);
    if (p->bops->host_alloc) { /* else capture's own page-aligned buffers */
        cc.alloc = backend_host_alloc;
        cc.free = backend_host_free;
        cc.alloc_user = (void *)p->bops;
    }
    if (pc_capture_open(&p->cap, &cc, p->err, sizeof p->err))
        return -1;
    double fps;
    p->ncam = pc_capture_n_cameras(p->cap);
    pc_capture_geometry(p->cap, &p->width, &p->slab_h, &p->cfa, &fps);
    p->height = p->slab_h * p->ncam;
    p->fps = fps > 0 ? fps : p->s->capture.fps;
    return 0;
}

/* Chooses the debayer backend (debayer.backend: auto, cuda, cpu); auto
 * without a usable GPU warns once and runs on the CPU. */
static int choose_backend(pipeline *p)
{
    const pc_settings *s = p->s;
    /* debayer.gpu: this pipeline's GPU, for the CUDA runtime and NVENC
     * alike (both see it as device 0); set before CUDA starts. */
    if (s->debayer.gpu[0]) {
        setenv("CUDA_VISIBLE_DEVICES", s->debayer.gpu, 1);
        pc_log(&p->d->logger, PC_LOG_INFO, "debayer.gpu %s: CUDA_VISIBLE_DEVICES=%s", s->debayer.gpu,
               s->debayer.gpu);
    }
    char note[512];
    if (pc_backend_choose(pc_backend_pref_name((pc_backend_pref)s->debayer.backend), &p->bops, note, sizeof note,
                          p->err, sizeof p->err))
        return -1;
    if (s->debayer.gpu[0] && s->debayer.backend != PC_BACKEND_CPU && PANOCAP_HAVE_CUDA &&
        p->bops != &pc_backend_cuda) {
        /* not 78: a device can come back (driver loaded late); restarts retry */
        snprintf(p->err, sizeof p->err, "debayer.gpu \"%s\": no such CUDA device here (nvidia-smi -L lists "
                 "them: an index or the GPU-... UUID)", s->debayer.gpu);
        return -1;
    }
    if (note[0])
        pc_log(&p->d->logger, PC_LOG_WARNING, "%s", note);
    return 0;
}

/* ------------------------------------------------------------- run */

static void status_tick(pipeline *p)
{
    pc_stats_snapshot snap;
    char line[512];
    pc_stats_snapshot_get(p->stats, &snap);
    pc_stats_format_line(&snap, line, sizeof line);
    pc_stats_print_status(line, p->d->stderr_tty, stderr, &p->d->logger);
    pc_notify_status(p->d->notify, line);
}

static void teardown(pipeline *p)
{
    atomic_store(&p->stop, 1);
    pl_wake_all(p);
    if (p->cap)
        pc_capture_stop(p->cap);
    if (p->stage_started)
        pthread_join(p->stage_thr, NULL);
    else if (p->enc_started) /* nobody else will end the encoders' streams */
        pl_dispatch(p, (job){.slot = -1});
    for (int b = 0; b < p->nthreads; b++)
        if (p->band[b].started) {
            pthread_join(p->band[b].thr, NULL);
            p->band[b].started = 0;
        }
    p->enc_started = 0;
    /* A snapshot being written must not be cut off by the exit (and it
     * answers its client through the control socket). */
    for (int i = 0; i < 3000 && atomic_load(&p->snapshots_active) > 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (p->ctl && atomic_load(&p->snapshots_active) == 0)
        pc_control_stop(p->ctl);
    pc_http_stop(p->http);
    p->http = NULL;
    pl_web_stop(p);
    pl_pictures_close(p); /* writes trailers, ends playlists; lets go of the slots */
    if (p->stats)
        pl_times_flush(p);
    pl_steps_close(&p->steps); /* the recording's end; the intermediate pictures */
    pl_web_close(p);           /* after the HTTP server, the stage thread and the snapshots */
    if (p->cap)
        pc_capture_close(p->cap);
    pl_pictures_free(p); /* the slots' pictures */
    pl_recq_teardown(p); /* after the encoders let go of the queued pictures */
    pc_backend_close(p->be);
    free(p->rig);
    p->rig = NULL;
}

int pc_run_pipeline(pc_daemon *d) { return pl_run(d, NULL); }

int pl_run(pc_daemon *d, const pl_spec *spec)
{
    pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        pc_log(&d->logger, PC_LOG_ERR, "out of memory");
        return PC_EXIT_RUNTIME;
    }
    p->d = d;
    p->s = &d->settings;
    p->spec = spec ? spec : &pl_default_spec;
    /* what the stage thread needs of the settings, copied: it never reads
     * d->settings, which a reload replaces */
    p->st.frames_limit = p->s->daemon.frames;
    p->st.watchdog = p->s->daemon.watchdog;
    p->st.matrix = (pc_matrix)p->s->debayer.matrix;
    p->st.range = (pc_range)p->s->debayer.range;
    atomic_init(&p->req_algo, -1);
    snprintf(p->net_path, sizeof p->net_path, "%s", pc_settings_net_weights(p->s));
    pthread_mutex_init(&p->q_lock, NULL);
    pthread_cond_init(&p->q_cond, NULL);
    pthread_mutex_init(&p->t_lock, NULL);
    pthread_mutex_init(&p->snap_lock, NULL);
    pthread_mutex_init(&p->reload_lock, NULL);
    pthread_mutex_init(&p->reopen_lock, NULL);
    pthread_mutex_init(&p->metrics_lock, NULL);
    pthread_mutex_init(&p->enc_lock, NULL);
    pthread_mutex_init(&p->settings_lock, NULL);
    p->free_slots.cap = MAX_SLOTS + 2;
    p->free_slots.item = p->free_slots.small;
    int rc = PC_EXIT_RUNTIME;
    const char *step = "";

    step = "backend";
    if (choose_backend(p))
        goto fail;
    pc_notify_extend_timeout(d->notify, 30000000);
    /* Threads take the CPU set of the thread that creates them: the main
     * thread wears daemon.capture_cpus / encode.cpus while it creates the
     * capture and the encoder threads, then its own set again. */
    const char *cap_cpus = p->s->daemon.capture_cpus, *enc_cpus = p->s->encode.cpus;
    cpu_set_t own;
    step = "rig";
    if (open_rig(p)) {
        rc = PC_EXIT_CONFIG;
        goto fail;
    }
    step = "capture";
    if (pc_cpulist_pin_self(cap_cpus, &own, p->err, sizeof p->err))
        goto fail;
    int opened = open_capture(p);
    pc_cpulist_restore(&own);
    if (opened)
        goto fail;

    /* the virtual cameras' control plane (pipeline_vcams.c), when views and
     * a rig are configured: before the stage's steps, which step them */
    step = "virtual cameras";
    if (pl_vcams_setup(p))
        goto fail;

    /* The frame size is checked before anything is allocated for it. */
    step = "frame size";
    if (pc_check_size(p->width, p->height, p->err, sizeof p->err))
        goto fail;
    p->nslots = p->s->debayer.in_flight < 1 ? 1 : p->s->debayer.in_flight > MAX_SLOTS ? MAX_SLOTS
                                                                                       : p->s->debayer.in_flight;
    /* The backend comes before the encoder, which NVENC builds on the
     * backend's CUDA context. */
    step = "backend";
    /* the slabs are the cameras (net demosaics each on its own) */
    pc_backend_config bc = {.width = p->width, .height = p->height, .slots = p->nslots, .device = 0,
                            .threads = p->s->debayer.cpu_threads,
                            .cam_rows = p->slab_h >= PC_MIN_DIM && !(p->slab_h & 1) ? p->slab_h : 0};
    if (pc_backend_open(&p->be, p->bops, &bc, p->err, sizeof p->err))
        goto fail;
    pc_notify_extend_timeout(d->notify, 30000000);
    /* The stage's steps say what pictures the slots and the encoders get. */
    const char *failed;
    if (pl_stage_prepare(p, &failed)) {
        step = failed[0] ? failed : "stage";
        goto fail;
    }
    /* stats: before the encoders, whose callbacks report into it; an
     * output slot range per picture (pl_picture.out0) */
    pc_stats_config sc = {.fps = p->fps, .budget_ms = pc_settings_budget_ms(p->s),
                          .window_s = p->s->daemon.stats_window_s,
                          .outputs = p->steps.nout * PC_MAX_OUTPUTS};
    step = "stats";
    if (pc_stats_open(&p->stats, &sc, p->err, sizeof p->err))
        goto fail;
    step = "encoder";
    if (pc_cpulist_pin_self(enc_cpus, &own, p->err, sizeof p->err))
        goto fail;
    opened = pl_pictures_open(p);
    pc_cpulist_restore(&own);
    if (opened)
        goto fail;
    if (p->have_encoder)
        pc_stats_set_layout(p->stats, pc_layout_name(p->picture[0].plan.layout), p->picture[0].nbands);
    step = "picture slots";
    if (pl_pictures_slots(p))
        goto fail;
    step = "recording queues";
    if (pl_recq_setup(p)) {
        rc = PC_EXIT_CONFIG; /* a size that cannot fit: the configuration's to change */
        goto fail;
    }
    if (pl_stage_start(p, &failed)) {
        step = failed[0] ? failed : "stage";
        goto fail;
    }

    if (p->s->daemon.control[0]) {
        pc_control_ops ops;
        pl_control_ops(p, &ops);
        if (pc_control_start(&p->ctl, p->s->daemon.control, &ops, &d->logger, p->err, sizeof p->err))
            pc_log(&d->logger, PC_LOG_WARNING, "control socket off: %s", p->err);
    }
    if (p->s->daemon.http_listen[0])
        pl_web_start(p);
    if (p->s->daemon.metrics_listen[0] && !strcmp(p->s->daemon.metrics_listen, p->s->daemon.http_listen)) {
        pc_log(&d->logger, PC_LOG_INFO, "metrics: served by the web page's listener (%s)",
               p->s->daemon.http_listen);
    } else if (p->s->daemon.metrics_listen[0]) {
        pc_http_ops hops;
        pl_http_ops(p, &hops);
        pc_http_config hc = {.listen = p->s->daemon.metrics_listen, .key = "metrics_listen"};
        if (pc_http_start(&p->http, &hc, &hops, &d->logger, p->err, sizeof p->err))
            pc_log(&d->logger, PC_LOG_WARNING, "HTTP metrics off: %s", p->err);
    }

    for (int i = 0; i < p->nslots; i++)
        fifo_push(&p->free_slots, (job){.slot = i});
    step = "capture start";
    pc_cpulist_pin_self(cap_cpus, &own, p->err, sizeof p->err); /* checked above */
    opened = pc_capture_start(p->cap, p->err, sizeof p->err);
    pc_cpulist_restore(&own);
    if (opened)
        goto fail;
    p->enc_started = 1;
    pc_cpulist_pin_self(enc_cpus, &own, p->err, sizeof p->err);
    for (int b = 0; b < p->nthreads; b++) {
        if (pthread_create(&p->band[b].thr, NULL, pl_encoder_main, &p->band[b]) == 0)
            p->band[b].started = 1;
        else
            p->enc_started = 0;
    }
    pc_cpulist_restore(&own);
    if (!p->enc_started) { /* end the threads that did start */
        pl_dispatch(p, (job){.slot = -1});
        for (int b = 0; b < p->nthreads; b++)
            if (p->band[b].started) {
                pthread_join(p->band[b].thr, NULL);
                p->band[b].started = 0;
            }
    }
    /* Cameras, GPU and outputs are up: READY=1 now, before the stage thread
     * (which feeds the watchdog) starts, so WATCHDOG=1 never precedes it. */
    char ready[256];
    int rl = snprintf(ready, sizeof ready, "running: %d cameras %dx%d -> %dx%d", p->ncam, p->width, p->slab_h,
                      p->picture[0].width, p->picture[0].height);
    if (p->npictures > 1 && rl > 0 && (size_t)rl < sizeof ready)
        rl += snprintf(ready + rl, sizeof ready - (size_t)rl, " + %d more picture%s", p->npictures - 1,
                       p->npictures == 2 ? "" : "s");
    if (rl > 0 && (size_t)rl < sizeof ready)
        snprintf(ready + rl, sizeof ready - (size_t)rl, ", %s, %s backend",
                 pc_algo_get(pl_algo_of(atomic_load(&p->algo_in_force)))->name, pc_backend_name(p->be));
    if (p->enc_started) {
        pc_log(&d->logger, PC_LOG_NOTICE, "%s", ready);
        pc_notify_ready(d->notify, ready);
    }
    pc_cpulist_pin_self(cap_cpus, &own, p->err, sizeof p->err);
    if (p->enc_started && pthread_create(&p->stage_thr, NULL, pl_stage_main, p) == 0)
        p->stage_started = 1;
    pc_cpulist_restore(&own);
    if (!p->enc_started || !p->stage_started) {
        snprintf(p->err, sizeof p->err, "cannot start the pipeline threads");
        step = "threads";
        goto fail;
    }

    int64_t t0 = pc_now_ns(), next_tick = t0;
    double interval = p->s->daemon.stats_interval_s;
    int64_t deadline = p->s->daemon.duration_s > 0 ? t0 + (int64_t)(p->s->daemon.duration_s * 1e9) : 0;
    for (;;) {
        int ev = pc_signals_wait(d->signals, 100);
        if (ev & PC_SIG_STOP) {
            pc_log(&d->logger, PC_LOG_NOTICE, "stopping (signal): draining the pipeline");
            break;
        }
        if (ev & PC_SIG_RELOAD)
            pl_reload(p);
        if (atomic_load(&p->enc_done) || atomic_load(&p->failed))
            break;
        int64_t now = pc_now_ns();
        if (deadline && now >= deadline) {
            pc_log(&d->logger, PC_LOG_NOTICE, "--duration reached: stopping");
            break;
        }
        if (interval > 0 && now >= next_tick) {
            if (now > t0)
                status_tick(p);
            next_tick = now + (int64_t)(interval * 1e9);
        }
    }
    pc_notify_stopping(d->notify, "draining");
    /* Stop taking sets; the encoder thread drains what the stage made. */
    atomic_store(&p->stop, 1);
    pl_wake_all(p);
    if (p->stage_started) {
        pthread_join(p->stage_thr, NULL);
        p->stage_started = 0;
    }
    for (int b = 0; b < p->nthreads; b++)
        if (p->band[b].started) {
            pthread_join(p->band[b].thr, NULL);
            p->band[b].started = 0;
        }
    p->enc_started = 0;
    if (d->stderr_tty && interval > 0)
        fputc('\n', stderr);
    rc = atomic_load(&p->failed) ? PC_EXIT_RUNTIME : PC_EXIT_OK;
    pc_set_stats skew;
    memset(&skew, 0, sizeof skew);
    if (p->cap)
        pc_capture_set_stats(p->cap, &skew);
    teardown(p);
    {
        pc_stats_snapshot snap;
        char sum[8192];
        pc_stats_snapshot_get(p->stats, &snap);
        pc_stats_format_summary(&snap, sum, sizeof sum);
        size_t l = strlen(sum);
        pl_pictures_summary(p, sum + l, sizeof sum - l);
        l = strlen(sum);
        pl_vcams_summary(p, sum + l, sizeof sum - l); /* the virtual cameras */
        l = strlen(sum);
        pl_skew_summary(&skew, sum + l, sizeof sum - l);
        pc_log(&d->logger, PC_LOG_NOTICE, "stopped after %" PRIu64 " frame sets (summary on stdout)",
               (uint64_t)atomic_load(&p->frames_done));
        fprintf(stdout, "%s", sum);
        fflush(stdout);
    }
    goto out;

fail:
    pc_log(&d->logger, PC_LOG_ERR, "%s: %s", step, p->err);
    teardown(p);
out:
    pl_vcams_teardown(p); /* every thread that used it has ended */
    pc_stats_close(p->stats);
    pthread_mutex_destroy(&p->q_lock);
    pthread_cond_destroy(&p->q_cond);
    pthread_mutex_destroy(&p->t_lock);
    pthread_mutex_destroy(&p->snap_lock);
    pthread_mutex_destroy(&p->reload_lock);
    pthread_mutex_destroy(&p->reopen_lock);
    pthread_mutex_destroy(&p->metrics_lock);
    pthread_mutex_destroy(&p->enc_lock);
    pthread_mutex_destroy(&p->settings_lock);
    for (int t = 0; t < PL_MAX_ENCODERS; t++)
        free(p->reopen[t]); /* a reload's request a thread never took */
    pc_net_free(atomic_exchange(&p->net_pending, NULL)); /* weights a switch loaded, never taken */
    free(p);
    return rc;
}

int pc_list_cameras(pc_daemon *d)
{
    char err[512];
    if (pc_capture_list_cameras(stdout, err, sizeof err) < 0) {
        pc_log(&d->logger, PC_LOG_ERR, "--list-cameras: %s", err);
        return PC_EXIT_RUNTIME;
    }
    return PC_EXIT_OK;
}
