/* pipeline_int.h - the pipeline's private state and the calls between its
 * files (daemon/pipeline*.c); nothing outside daemon/pipeline*.c includes it.
 *
 * Files, one per thread:
 *   pipeline.c          set-up, the main thread's run loop, teardown
 *   pipeline_stage.c    stage thread: capture -> debayer into a picture slot
 *   pipeline_encoder.c  encoder thread: slot -> encoder; per-frame times
 *   pipeline_reload.c   main thread: configuration reload
 *   pipeline_control.c  control thread: the control socket's callbacks
 *
 * Who owns what. Set-up (main thread) writes everything before it starts
 * the threads and teardown reads it after joining them; "owner" is who
 * may touch it while the threads run.
 *
 *   state                      owner / guard         others get it by
 *   -------------------------  --------------------  ------------------------
 *   d->settings (p->s), err    main thread; changes  copies made at set-up
 *                              under settings_lock   (st.*), handed over
 *                                                    (reopen), or taken under
 *                                                    settings_lock (control)
 *   d->logger.max_level        main (reload)         __atomic loads in pc_log
 *   geometry, nslots, fmt,     constant after        reading
 *     bops, have_encoder,      set-up
 *     stats, cap, ctl, be
 *   st.* (err, raw, algo,      stage thread          algo_in_force (atomic),
 *     variant, limits)                               stats labels
 *   THE ALGORITHM IN FORCE     stage thread: st.algo/variant and the
 *                              backend's copy (be), changed only by
 *                              pl_apply_algo between sets
 *   req_algo                   atomic request slot   control / reload store,
 *                              (packed algo+variant) the stage thread takes
 *   snap_path                  snap_lock             control / set-up -> stage
 *   en.err                     encoder thread
 *   en.enc                     encoder thread; its   reload (bitrate) reads it
 *                              swap under enc_lock   under enc_lock
 *   req_idr                    atomic                control -> encoder
 *   reopen (new outputs)       reopen_lock           reload -> encoder, which
 *                                                    takes and frees it
 *   pic[k], be's slot k        the thread holding    free_slots / ready
 *                              slot k                queues (q_lock)
 *   times[], packets_seq,      t_lock                encoder thread and the
 *     outputs_live                                   outputs' threads
 *   col (colour in force)      stage thread; awb     col_next under col_lock
 *                              gains under col_lock  (reload, control -> stage)
 *   camstats, cammetrics       metrics_lock          control thread
 *   last_frame_ns              atomic                encoder -> HTTP threads
 *   stop, failed, *_done,      atomics               any thread
 *     sets_taken, frames_done,
 *     snapshots_active
 */
#ifndef PANOCAP_PIPELINE_INT_H
#define PANOCAP_PIPELINE_INT_H

#include "pipeline.h"

#include "capture.h"
#include "clock.h"
#include "control.h"
#include "http.h"
#include "debayer.h"
#include "image.h"
#include "panocap_config.h"
#include "stats.h"
#include "backend.h"
#include "encode.h" /* encode_stub.c without FFmpeg */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAX_SLOTS 8
_Static_assert(MAX_SLOTS <= PC_BACKEND_MAX_SLOTS, "a picture slot per backend input slot");
#define TIMES_RING 128

typedef struct job {
    int slot;        /* picture slot, -1 = end of stream */
    uint64_t index;  /* frame-set number */
    int64_t pts_ns;
    int64_t complete_ns, start_ns, nv12_ns;
} job;

/* Bounded FIFO of jobs or slot numbers (capacity MAX_SLOTS + 1). */
typedef struct fifo {
    job item[MAX_SLOTS + 2];
    int head, count, cap;
} fifo;

typedef struct pending_times {
    int used;
    unsigned waiting;  /* outputs that have neither written nor dropped it */
    uint64_t seq;      /* its packet's place in the encoder's output, 0 = no packet yet */
    pc_frame_times t;
    int64_t pts_ns;
} pending_times;

/* The algorithm in force, or a request for one, packed into one int so that
 * algorithm and variant always travel together: (algo << 8) | variant. */
static inline int pl_algo_pack(pc_algo_id algo, pc_variant variant) { return ((int)algo << 8) | (int)variant; }
static inline pc_algo_id pl_algo_of(int packed) { return (pc_algo_id)(packed >> 8); }
static inline pc_variant pl_variant_of(int packed) { return (pc_variant)(packed & 0xff); }

typedef struct pl_colour pl_colour; /* pipeline_colour.c */

/* The stage thread's own state. Set-up fills it before the thread starts,
 * teardown reads it after the join; in between only the stage thread
 * touches it. */
typedef struct stage_state {
    char err[512];
    pc_raw_writer *raw;          /* --record-raw; NULL once it failed */
    uint64_t sets_dropped_seen;
    int64_t frames_limit;        /* --frames (daemon.frames), 0 = none */
    int watchdog;                /* daemon.watchdog */
    pc_matrix matrix;            /* debayer.matrix / range (restart-only) */
    pc_range range;
    pc_algo_id algo;             /* THE algorithm in force (also in be) */
    pc_variant variant;
} stage_state;

/* The encoder thread's own state (same rule as stage_state). */
typedef struct encoder_state {
    char err[512];
    pc_encoder *enc;             /* swapped only here, under pipeline.enc_lock */
} encoder_state;

typedef struct pipeline {
    /* ---- main thread: set-up writes these before the threads start;
     * afterwards they are constant (read by every thread) ---- */
    pc_daemon *d;
    pc_settings *s;       /* = &d->settings: MAIN THREAD ONLY (reload replaces it) */
    char err[512];        /* main thread: set-up, reload, teardown */

    /* parts (thread-safe objects, or used as noted) */
    pc_stats *stats;
    pc_capture *cap;
    pc_control *ctl;
    const pc_backend_ops *bops; /* the debayer backend, chosen once */
    pc_backend *be;       /* stage thread: upload/debayer/set_algo; encoder
                           * thread: download/wait, each on the slot it holds */
    pc_http *http;        /* daemon.metrics_listen, or NULL (its own threads) */
    atomic_int_fast64_t last_frame_ns; /* encoder ->: pc_now_ns() of the last frame set done (healthz) */
    int have_encoder;
    int width, height, slab_h, ncam;
    pc_cfa cfa;
    double fps;

    /* picture slots (device pictures for CUDA, host pictures for CPU):
     * slot k belongs to the thread that took k from a queue below */
    int nslots;
    pc_picture pic[MAX_SLOTS];
    pc_pixfmt fmt;

    stage_state st;       /* stage thread */
    encoder_state en;     /* encoder thread */

    /* ---- requests to the owning thread, and what it publishes ---- */
    atomic_int req_algo;      /* -> stage: packed algorithm, -1 = none */
    atomic_int algo_in_force; /* stage ->: packed algorithm in force (readers) */
    atomic_int req_idr;       /* -> encoder: make the next frame an IDR */
    pthread_mutex_t snap_lock;      /* guards snap_path, snap_token */
    char snap_path[PC_PATH_LEN];    /* -> stage: snapshot of the next set */
    unsigned long long snap_token;  /* the control client waiting for it (0: --snapshot) */
    pthread_mutex_t reopen_lock;    /* guards reopen */
    pc_settings *reopen;            /* -> encoder: reopen with these outputs (it frees it) */
    pthread_mutex_t enc_lock;       /* guards en.enc against its swap: other
                                     * threads read en.enc only under it */
    pthread_mutex_t settings_lock;  /* the main thread changes d->settings under
                                     * it; other threads copy them under it */

    /* queues between stage and encoder threads (q_lock guards both) */
    pthread_mutex_t q_lock;
    pthread_cond_t q_cond;
    fifo free_slots, ready;

    /* per-frame times, keyed by pts (encoder thread + output threads;
     * t_lock guards all of it) */
    pthread_mutex_t t_lock;
    pending_times times[TIMES_RING];
    uint64_t packets_seq;     /* packets out of the encoder so far */
    unsigned outputs_live;    /* outputs writing (state ok), polled per frame */

    /* threads and state */
    pthread_t stage_thr, enc_thr;
    int stage_started, enc_started;   /* main thread */
    atomic_int stop;        /* 1: stop taking frame sets */
    atomic_int stage_done, enc_done;
    atomic_int failed;      /* a stage failed: exit 1 */
    atomic_int snapshots_active; /* snapshot threads still writing (waited for at exit) */
    atomic_uint_fast64_t sets_taken, frames_done;

    /* control thread (metrics_lock: its callbacks may overlap) */
    pthread_mutex_t metrics_lock;
    pc_camera_stats camstats[PC_CAPTURE_MAX_CAMERAS];
    pc_camera_metrics cammetrics[PC_CAPTURE_MAX_CAMERAS];

    /* colour stage (pipeline_colour.c): in force (stage thread), and the
     * next one built by a reload or a control command (col_lock) */
    pl_colour *col, *col_next;
    pthread_mutex_t col_lock;
} pipeline;

static inline int pl_is_null_url(const char *u) { return strcmp(u, "null") == 0; }

/* pipeline.c: queues between the stage and encoder threads */
int pl_take(pipeline *p, fifo *q, job *out, int honour_stop);
void pl_put(pipeline *p, fifo *q, job j);
void pl_wake_all(pipeline *p);
void pl_fail(pipeline *p, const char *what);

/* pipeline_stage.c */
int pl_apply_algo(pipeline *p, pc_algo_id algo, pc_variant variant, char *err, size_t errlen);
void *pl_stage_main(void *arg);

/* pipeline_encoder.c */
int pl_open_encoder_or_null(pipeline *p);
void *pl_encoder_main(void *arg);
void pl_times_flush(pipeline *p);

/* pipeline_colour.c */
int pl_colour_open(pipeline *p);           /* after capture and backend */
void pl_colour_free(pl_colour *c);
/* Stage thread, per set: swaps in a requested state; 1 when the colour
 * stage is on (then pl_colour_debayer does the set), 0 for today's path. */
int pl_colour_active(pipeline *p);
int pl_colour_debayer(pipeline *p, const pc_frameset *set, int slot);
/* 8-bit Bayer panorama of a set through the tables (snapshots). */
void pl_colour_stack(pipeline *p, const pc_frameset *set, uint8_t *dst);
/* Builds the state for settings s (any thread) for the next set. */
int pl_colour_request(pipeline *p, const pc_settings *s, char *err, size_t errlen);
/* The gains in force as config lines; returns how many cameras are auto.
 * freeze: also fixes the auto cameras at those gains (until a reload). */
int pl_colour_describe_wb(pipeline *p, char *buf, size_t len);
int pl_colour_freeze_wb(pipeline *p, char *buf, size_t len);

/* pipeline_reload.c */
void pl_reload(pipeline *p);

/* pipeline_control.c */
void pl_control_ops(pipeline *p, pc_control_ops *ops);
/* The HTTP metrics server's callbacks (pipeline_control.c). */
void pl_http_ops(pipeline *p, pc_http_ops *ops);

#endif
