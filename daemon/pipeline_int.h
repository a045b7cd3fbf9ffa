/* pipeline_int.h - the pipeline's private state and the calls between its
 * files (daemon/pipeline*.c); nothing outside daemon/pipeline*.c includes it.
 *
 * Files, one per thread:
 *   pipeline.c          set-up, the main thread's run loop, teardown
 *   pipeline_stage.c    stage thread: capture -> debayer into a picture slot
 *   pipeline_encoder.c  encoder thread: slot -> encoder; per-frame times
 *   pipeline_reload.c   main thread: configuration reload
 *   pipeline_control.c  control thread: the control socket's callbacks
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
#if PANOCAP_HAVE_CUDA
#include "debayer_cuda.h"
#endif
#if PANOCAP_HAVE_FFMPEG
#include "encode.h"
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAX_SLOTS 8
#define TIMES_RING 128
#define PL_MAX_BANDS 16
#define BAND_LAT_RING 16384 /* per-band encode latencies kept for the summary */

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
    int outputs_left; /* outputs x bands still to write this frame set */
    int packets_left; /* bands whose packet has not come out */
    pc_frame_times t;
    int64_t pts_ns;
} pending_times;

typedef struct pl_colour pl_colour; /* pipeline_colour.c */

typedef struct pipeline pipeline;

/* One band of the layout (the whole panorama when stacked): rows
 * [row0, row0+rows) of every picture slot, its own encoder, queue and
 * thread (pipeline_encoder.c). */
typedef struct pl_band {
    pipeline *p;
    int index, row0, rows;
    int preview;           /* the preview rendition: the whole picture scaled down */
#if PANOCAP_HAVE_FFMPEG
    pc_encoder *enc;
#endif
    fifo ready;            /* jobs from the stage thread */
    pthread_t thr;
    int started;
    char err[512];
    /* encode latency (submit -> packet out), written by this band's thread */
    float lat_ms[BAND_LAT_RING];
    uint64_t nlat;
    uint64_t frames;
} pl_band;

/* A picture slot handed to encoders by reference: freed when the last
 * band's encoder lets go of it (pl_slot_release). */
typedef struct pl_slot_token {
    pipeline *p;
    int slot;
} pl_slot_token;

struct pipeline {
    pc_daemon *d;
    pc_settings *s;
    char err[512];

    /* parts */
    pc_stats *stats;
    pc_capture *cap;
    pc_control *ctl;
    pc_http *http;          /* daemon.metrics_listen, or NULL */
    atomic_int_fast64_t last_frame_ns; /* pc_now_ns() of the last frame set done (healthz) */
    pc_raw_writer *raw;
    int use_cuda;
#if PANOCAP_HAVE_CUDA
    pc_gpu *gpu;
#endif
    pc_cpu *cpu;
    uint8_t *host_pano;   /* CPU backend: stacked panorama */
    size_t host_pano_pitch;
    /* layout: 1 band (stacked) or K bands of whole cameras */
    pc_layout_plan plan;
    int nbands;
    int nthreads;          /* encoder threads: the bands, then the preview's */
    pl_band band[PL_MAX_BANDS + 1];
    /* encode.band_outputs "streams": the outputs the bands' encoders share
     * (one video stream per band); closed after them. NULL otherwise. */
    struct pc_mux *mux;
    int have_encoder;
    /* Encoders take host pictures by reference (no copy): the CPU
     * backend's slots, or pinned host copies of the GPU slots that the
     * stage thread downloads right after the final pass. */
    int host_ref;
    pc_picture host_pic[MAX_SLOTS]; /* CUDA + host encoder: pinned */
    int preview_gpu;                /* the preview scaled on the GPU into prev_pic */
    pc_picture prev_pic[MAX_SLOTS]; /* pinned, the preview's size */
    atomic_int slot_refs[MAX_SLOTS];
    pl_slot_token slot_tok[MAX_SLOTS];
    int width, height, slab_h, ncam;
    pc_cfa cfa;
    double fps;

    /* picture slots (device pictures for CUDA, host pictures for CPU) */
    int nslots;
    pc_picture pic[MAX_SLOTS];
    pc_pixfmt fmt;

    /* algorithm in force (stage thread), requests from other threads */
    pc_algo_id algo;
    pc_variant variant;
    atomic_int req_algo;    /* -1: none */
    atomic_int req_variant;
    atomic_int req_idr;

    /* snapshot request (control thread / --snapshot -> stage thread) */
    pthread_mutex_t snap_lock;
    char snap_path[PC_PATH_LEN];
    unsigned long long snap_token; /* the control client waiting for it (0: --snapshot) */

    /* queues between stage and encoder threads */
    pthread_mutex_t q_lock;
    pthread_cond_t q_cond;
    fifo free_slots;

    /* per-frame times, keyed by pts (encoder + output threads) */
    pthread_mutex_t t_lock;
    pending_times times[TIMES_RING];

    /* threads and state */
    pthread_t stage_thr;
    int stage_started, enc_started; /* enc_started: band threads started */
    atomic_int stop;        /* 1: stop taking frame sets */
    atomic_int stage_done, enc_done; /* enc_done: band threads finished */
    atomic_int failed;      /* a stage failed: exit 1 */
    atomic_int snapshots_active; /* snapshot threads still writing (waited for at exit) */
    atomic_int reopen_outputs;   /* reload changed the outputs: bit b = band b's thread reopens */
    pthread_mutex_t reopen_lock; /* one band reopens at a time (p->err, p->fmt) */
    atomic_uint_fast64_t sets_taken, frames_done;
    uint64_t sets_dropped_seen;
    pc_camera_stats camstats[PC_CAPTURE_MAX_CAMERAS];
    pc_camera_metrics cammetrics[PC_CAPTURE_MAX_CAMERAS];
    pthread_mutex_t metrics_lock;

    /* colour stage (pipeline_colour.c): in force (stage thread), and the
     * next one built by a reload or a control command */
    pl_colour *col, *col_next;
    pthread_mutex_t col_lock;
};

static inline int pl_is_null_url(const char *u) { return strcmp(u, "null") == 0; }

/* pipeline.c: queues between the stage and encoder threads */
int pl_take(pipeline *p, fifo *q, job *out, int honour_stop);
void pl_put(pipeline *p, fifo *q, job j);
void pl_wake_all(pipeline *p);
void pl_fail(pipeline *p, const char *what);

/* pipeline_stage.c */
#if PANOCAP_HAVE_CUDA
/* After the final pass into slot: the download for host encoders and the
 * preview's scaling, queued on the GPU; then waits for the slot. */
int pl_gpu_finish(pipeline *p, int slot);
#endif
int pl_apply_algo(pipeline *p, pc_algo_id algo, pc_variant variant);
void *pl_stage_main(void *arg);

/* pipeline_encoder.c */
int pl_open_encoder_or_null(pipeline *p);
void *pl_encoder_main(void *arg); /* arg: pl_band */
void pl_times_put(pipeline *p, const job *j);
void pl_times_flush(pipeline *p);
/* stage thread: queue job j (slot >= 0, or -1 = end) to every band */
void pl_dispatch(pipeline *p, job j);
void pl_slot_release(void *token);
void pl_bands_close(pipeline *p);
void pl_bands_summary(pipeline *p, char *buf, size_t n);
void pl_request_idr(pipeline *p);
int pl_set_bitrate(pipeline *p, int64_t bitrate, char *err, size_t n);

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
