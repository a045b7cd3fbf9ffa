/* pipeline_int.h - the pipeline's private state and the calls between its
 * files (daemon/pipeline*.c, daemon/step_*.c); nothing else includes it but
 * the steps' and the pictures' tests.
 *
 * Files, one per thread:
 *   pipeline.c          set-up, the main thread's run loop, teardown
 *   pipeline_stage.c    stage thread: takes a set from capture, hands it
 *                       down the list of steps into a picture slot,
 *                       queues the slot for the encoders; the list in force
 *   pipeline_pictures.c main thread: the encoded pictures (what the last
 *                       step writes per set: the main one, virtual
 *                       cameras, ...): their settings (pl_spec), layout,
 *                       encoders, slots, reload and summary; a band's
 *                       reopening on its own thread
 *   pipeline_encoder.c  encoder threads, one per band of every picture
 *                       (+ the preview's): band of a slot -> its encoder;
 *                       per-frame times
 *   pipeline_reload.c   main thread: configuration reload
 *   pipeline_control.c  control thread: the control socket's callbacks
 *   pipeline_web.c      HTTP thread: the web page's API callbacks, its
 *                       server and live picture (web_picture.c) set up
 *   pipeline_vcams.c    the virtual cameras (vcams.h) for the control,
 *                       HTTP and main threads: set-up, commands, status,
 *                       metrics, reload, summary
 * and the stage thread's steps (pipeline_step.h: the ops table and the
 * list, pipeline_steps.c), one file each, each the owner of its state:
 *   step_raw_record.c   --record-raw
 *   step_colour.c       colour tables, automatic white balance
 *   step_snapshot.c     snapshot requests (the panorama, a view, the cameras)
 *   step_debayer.c      upload + demosaic; the algorithm in force
 *   step_web_picture.c  the web page's live pictures (web_picture.c)
 *
 * Pictures and threads. The stage's last writer writes npictures pictures
 * per set (picture[0] the main one: the top-level outputs and the
 * preview; the others each their own encoders and outputs, same PTS).
 * Picture i is cut into picture[i].nbands bands (a picture of the stacked
 * cameras in encode.layout bands; any other picture is one band), each
 * band one encoder on its own thread: band[picture[i].first + b]. Thread
 * 0 is picture 0's band 0; the preview's thread follows picture 0's bands.
 * A slot is handed to every thread (slot_refs[k] = nthreads) and comes
 * back when the last one lets go of it.
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
 *   geometry, nslots, spec,    constant after        reading
 *     bops, have_encoder,      set-up
 *     stats, cap, ctl, be
 *   st.* (err, limits)         stage thread          -
 *   steps (the list), step_env constant after set-up reload: pl_steps_reload
 *                              (pl_steps_start);     (each step's reload op);
 *                              run on the stage      describe: any thread
 *                              thread
 *   steps.step[i].mid[o][k]    the stage thread      - (intermediate pictures:
 *                              (slot k's)            the encoders get only
 *                                                    picture[i].slot[k])
 *   each step's own state      the step (step_*.c;   its reload / describe
 *     (steps.step[i].priv)     its file's top        ops, under its own lock
 *                              comment says how)     or atomics
 *   THE ALGORITHM IN FORCE     stage thread: the debayer step's copy and the
 *                              backend's (be), changed only there at the
 *                              start of a set
 *   algo_in_force              atomic                debayer step -> snapshot,
 *                                                    status readers
 *   req_algo                   atomic request slot   control / reload store,
 *                              (packed algo+variant) the debayer step takes
 *   net (net's weights)        the debayer step      the snapshot step (same
 *                              (stage thread; set    thread) copies it
 *                              into the backend)
 *   have_net, net_pending      atomics               control: loads the
 *                                                    weights for a switch to
 *                                                    net when have_net is 0,
 *                                                    the debayer step takes
 *   net_path                   constant after set-up reading
 *   snap_path                  snap_lock             control / set-up -> the
 *                                                    snapshot step
 *   reload_token[]             reload_lock           control -> main thread
 *                                                    (pl_reload answers them)
 *   npictures, picture[i]:     constant after set-up reading
 *     index, fmt, plan, width,
 *     height, first, nbands,
 *     encoded, host_ref, out0,
 *     mux, cfg.name, cfg.width,
 *     cfg.height, cfg.required;
 *     nthreads, preview_gpu,
 *     band[t]: pic, index,
 *     band, row0, rows, preview
 *   picture[i].cfg: outputs,   main thread (set-up,  band threads get copies
 *     encode                   reload)               (reopen[t])
 *   picture[i].live            atomic                band threads -> stage
 *                                                    (downloads only while > 0)
 *   band[t].err, lat_ms, nlat, band t's thread       the summary, after the
 *     frames, live, enc_name                         join (teardown)
 *   band[t].enc                band t's thread; its  reload (bitrate), control
 *                              swap under enc_lock   (IDR) use it under
 *                                                    enc_lock
 *   band[t].ready              q_lock                stage -> band t
 *   reopen[t] (new outputs)    reopen_lock           reload -> band t's thread,
 *                                                    which takes and frees it
 *   picture[i].slot[k],        the stage thread until pl_dispatch; then all
 *     .host[k], prev_pic[k],   band threads (read only; a zero-copy band
 *     be's slot k              downloads its rows); the last to let go
 *                              (slot_refs[k], atomic) puts k back on
 *                              free_slots (q_lock)
 *   times[], packets_seq[t],   t_lock                stage (put), band threads
 *     outputs_live[t], encoding                      and the outputs' threads
 *   col (the colour step)      step_colour.c; set    control (wb, wb freeze)
 *                              at prepare            through its lock
 *   camstats, cammetrics       metrics_lock          control thread
 *   last_frame_ns              atomic                encoder -> HTTP threads
 *   webpic[i] (picture i's     the web picture step  the HTTP threads get
 *     live picture)            (step_web_picture.c;  JPEGs (web_picture.c's
 *                              set at start)         lock)
 *   webapi (web snapshots,     pipeline_web.c,       HTTP thread, snapshot
 *     rates)                   under its lock        threads (answers)
 *   vcams (virtual cameras)    pipeline_vcams.c sets control, HTTP threads:
 *                              it up and closes it;  commands, status; the
 *                              thread-safe (vcams.h) stage thread: steps
 *   stop, failed, *_done,      atomics               any thread
 *     sets_taken, frames_done,
 *     snapshots_active
 */
#ifndef PANOCAP_PIPELINE_INT_H
#define PANOCAP_PIPELINE_INT_H

#include "pipeline.h"
#include "pipeline_step.h"

#include "capture.h"
#include "settings_rig.h"
#include "clock.h"
#include "control.h"
#include "http.h"
#include "debayer.h"
#include "image.h"
#include "panocap_config.h"
#include "stats.h"
#include "backend.h"
#include "net.h"
#include "encode.h" /* encode_stub.c without FFmpeg */
#include "json.h"
#include "web_picture.h"
#include "vcams.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAX_SLOTS 8
#define PL_RELOAD_WAITERS 16 /* control clients a reload answers at once */
_Static_assert(MAX_SLOTS <= PC_BACKEND_MAX_SLOTS, "a picture slot per backend input slot");
#define TIMES_RING 128
#define PL_MAX_BANDS 16     /* bands of one picture */
#define PL_MAX_ENCODERS 32  /* encoder threads of all pictures (a bit each in a mask) */
#define BAND_LAT_RING 16384 /* per-band encode latencies kept for the summary */
_Static_assert(PL_MAX_PICTURES * PC_MAX_OUTPUTS <= PC_STATS_MAX_OUTPUTS, "a stats output slot per output");
_Static_assert(PL_MAX_PICTURES <= PC_STATS_MAX_PICTURES, "stats per picture");
_Static_assert(PL_PIC_NAME <= PC_STATS_NAME, "a picture's name in the stats");

typedef struct job {
    int slot;        /* picture slot, -1 = end of stream */
    int qbuf;        /* > 0: the band's copy in buffer qbuf - 1 of its recording queue
                      * (pipeline_record_queue.c), the slot not held; 0: the slot by reference */
    uint64_t index;  /* frame-set number */
    int64_t pts_ns;
    int64_t complete_ns, start_ns, nv12_ns;
} job;

/* Bounded FIFO of jobs or slot numbers: item is small (capacity MAX_SLOTS
 * + 2), or a band's larger array when it has a recording queue. */
typedef struct fifo {
    job *item;
    int head, count, cap;
    job small[MAX_SLOTS + 2];
} fifo;

typedef struct pending_times {
    int used;
    uint32_t expect;   /* encoder threads whose packet of this set has not come out */
    /* per thread: outputs that have neither written nor dropped its packet */
    unsigned waiting[PL_MAX_ENCODERS];
    /* per thread: its packet's place in that thread's encoder output, 0 = not out */
    uint64_t seq[PL_MAX_ENCODERS];
    pc_frame_times t;  /* written_ns by the stats' output slot (picture i: out0 + output) */
    int64_t pic_packet_ns[PL_MAX_PICTURES]; /* each picture's last packet out */
    int64_t pts_ns;
} pending_times;

/* The algorithm in force, or a request for one, packed into one int so that
 * algorithm and variant always travel together: (algo << 8) | variant. */
static inline int pl_algo_pack(pc_algo_id algo, pc_variant variant) { return ((int)algo << 8) | (int)variant; }
static inline pc_algo_id pl_algo_of(int packed) { return (pc_algo_id)(packed >> 8); }
static inline pc_variant pl_variant_of(int packed) { return (pc_variant)(packed & 0xff); }

typedef struct pl_colour pl_colour; /* the colour step, step_colour.c */

typedef struct pipeline pipeline;

/* One encoded picture's encoding: what the pipeline's spec (pl_spec)
 * fills for each picture the stage's last writer declares, and
 * pipeline_pictures.c opens (one encoder, or one per band of a picture of
 * the stacked cameras, to its outputs). A plain struct: picture 0 comes
 * from encode.* and the top-level outputs (pl_settings_picture); a
 * virtual camera from its own entry. */
typedef struct pl_picture_config {
    char name[PL_PIC_NAME];  /* as the step declared it (set before the spec's call) */
    int width, height;       /* as declared (set before the spec's call) */
    /* codec, encoder, fallback, bitrate, gop, preset, threads, options;
     * layout, bands, grid and band_outputs only for a picture of the
     * stacked cameras (any other size is one picture: layout "auto" or
     * "stacked"); preview_* for picture 0 only; cpus is the pipeline's
     * (encode.cpus), not a picture's */
    pc_encode_settings encode;
    int output_count;        /* 0, or "null" alone: not encoded (the step still writes it) */
    pc_output_settings outputs[PC_MAX_OUTPUTS];
    /* 1: an encoder of it failing (not opening at start, or failing on a
     * frame) stops panocap, as the main picture's always did; 0: logged
     * and counted (panocap_picture_encoder_failures_total), that encoder
     * stops and every other picture goes on; a reload that changes its
     * outputs opens it again */
    int required;
} pl_picture_config;

/* One encoded picture of every set (pipeline_pictures.c). */
typedef struct pl_picture {
    int index;               /* in pl_set.picture[] and pl_steps.out[] */
    pl_picture_config cfg;   /* main thread: set-up, reload */
    pc_pixfmt fmt;           /* what its encoders take: its slot pictures' format */
    pc_layout_plan plan;     /* bands / grid of a picture of the stacked cameras; else one band */
    int width, height;       /* what the step writes (a grid's: its tiles) */
    int first, nbands;       /* its bands' threads: band[first .. first + nbands) */
    int encoded;             /* it has outputs (not "null"): its threads encode */
    struct pc_mux *mux;      /* band_outputs "streams": the outputs its bands share; NULL otherwise */
    int host_ref;            /* device backend and a host encoder: the stage thread downloads it
                              * into host[] (pinned) after the last step */
    int out0;                /* its outputs' first slot in pc_stats: index * PC_MAX_OUTPUTS */
    unsigned rec_outputs;    /* its outputs that are recordings (paths): a bit each */
    int recorded;            /* its bands are fed through recording queues (pipeline_record_queue.c) */
    /* the stage thread's: sets dropped from its recordings (queue full)
     * or skipped (a live picture whose encoder is busy), and when it
     * last said so */
    uint64_t rec_dropped, live_skipped, said_dropped, said_skipped;
    int64_t said_ns;
    atomic_int live;         /* its threads encoding now (a failed one stops) */
    pc_picture slot[MAX_SLOTS]; /* what the last step writes: in the backend's memory */
    pc_picture host[MAX_SLOTS]; /* host_ref: pinned host copies, taken by reference */
} pl_picture;

/* One band of a picture (the whole picture unless it is cut into bands):
 * rows [row0, row0+rows) of every slot's picture, its own encoder, queue
 * and thread (pipeline_encoder.c). Everything but ready (q_lock) and the
 * enc swap (enc_lock) belongs to the band's thread. */
typedef struct pl_band {
    pipeline *p;
    pl_picture *pic;       /* the picture it encodes */
    int index;             /* its thread: band[index] (times, masks, reopen[]) */
    int band;              /* its band of pic (0 .. pic->nbands - 1); the preview: 0 */
    int row0, rows;
    int preview;           /* the preview rendition: picture 0 scaled down */
    int live;              /* enc encodes (0: not opened, or failed in a picture not required) */
    pc_encoder *enc;       /* swapped only by this thread, under pipeline.enc_lock */
    char enc_name[32];     /* its encoder's name ("" none opened yet), for the summary */
    fifo ready;            /* jobs from the stage thread */
    pthread_t thr;
    int started;
    char err[512];
    /* encode latency (submit -> packet out), written by this band's thread */
    float lat_ms[BAND_LAT_RING];
    uint64_t nlat;
    uint64_t frames;
    /* Keyframes out of step: band k of K forces an IDR on frames k * gop / K
     * + m * gop after its encoder opened (the encoder's own GOP then never
     * adds one; after an IDR asked of all bands, e.g. a segment cut, the
     * next forced ones put them back out of step). K software encoders
     * making their IDRs on the same frame set made it the slowest of all
     * (5 bands of 2040x1080 on 16 cores: band maximum 28-49 ms with IDRs
     * every 50 frames, 18.5 ms without). */
    uint64_t since_open; /* frames submitted to enc since it opened */
    int idr_gop, idr_phase; /* idr_gop 0: no forced IDRs */
    /* jobs handed to this thread and not yet done (stage thread adds,
     * this thread subtracts): how far behind it is */
    atomic_int inflight;
    int delay_ms;          /* encode.debug_delay_ms (set-up) */
    struct pl_recq *rq;    /* its recording queue, or NULL (pipeline_record_queue.c) */
} pl_band;

/* A picture slot handed to encoders by reference: freed when the last
 * thread lets go of it (pl_slot_release). */
typedef struct pl_slot_token {
    pipeline *p;
    int slot;
} pl_slot_token;

/* The stage thread's own state. Set-up fills it before the thread starts,
 * teardown reads it after the join; in between only the stage thread
 * touches it. */
typedef struct stage_state {
    char err[512];
    uint64_t sets_dropped_seen;
    int64_t frames_limit;        /* --frames (daemon.frames), 0 = none */
    int watchdog;                /* daemon.watchdog */
    pc_matrix matrix;            /* debayer.matrix / range (restart-only) */
    pc_range range;
} stage_state;

struct pipeline {
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
    pc_backend *be;       /* stage thread: upload/debayer/set_algo and the
                           * slot's download/downscale for the encoders;
                           * zero-copy band threads: download/wait of their
                           * rows of the slot they hold */
    pc_http *http;        /* daemon.metrics_listen, or NULL (its own threads) */
    pc_rig_setup *rig;    /* panorama.rig as read at set-up (NULL: no rig): the
                           * scene's cameras, the render step's starting rig */
    pc_http *web;         /* daemon.http_listen: the web page, or NULL (its own threads) */
    pc_web_picture *webpic[PL_MAX_PICTURES]; /* picture i's live picture, NULL: none (stage thread
                                              * offers; own thread) */
    struct pl_web *webapi;  /* the web API's state (pipeline_web.c, its own lock) */
    atomic_int_fast64_t last_frame_ns; /* thread 0 ->: pc_now_ns() of the last frame set done (healthz) */
    const struct pl_spec *spec; /* the steps and the pictures' settings (pl_run) */
    /* the encoded pictures: what the stage's last writer writes per set */
    int npictures;
    pl_picture picture[PL_MAX_PICTURES];
    int nthreads;          /* encoder threads: every picture's bands, picture 0's preview after its bands */
    pl_band band[PL_MAX_ENCODERS];
    int have_encoder;      /* some picture is encoded (else --output null: demosaicing only) */
    /* Encoders take host pictures by reference (no copy): the CPU
     * backend's slots, or pinned host copies of the GPU slots that the
     * stage thread downloads right after the last step (picture[i].host). */
    int preview_scale;              /* encode.preview_scale (restart-only), 0 = no preview */
    int preview_gpu;                /* the preview scaled by the backend (pc_backend_downscale) into prev_pic */
    pc_picture prev_pic[MAX_SLOTS]; /* pinned, the preview's size */
    atomic_int slot_refs[MAX_SLOTS];
    pl_slot_token slot_tok[MAX_SLOTS];
    int width, height, slab_h, ncam;
    pc_cfa cfa;
    double fps;

    /* picture slots: slot k (every picture's slot[k], the backend's input
     * slot k) belongs to the thread that took k from a queue below */
    int nslots;

    stage_state st;       /* stage thread */
    /* the stage thread's steps (pipeline_stage.c's list), and what they
     * got at set-up */
    pl_steps steps;
    pl_step_env step_env;

    /* ---- requests to the owning thread, and what it publishes ---- */
    atomic_int req_algo;      /* -> stage: packed algorithm, -1 = none */
    atomic_int algo_in_force; /* stage ->: packed algorithm in force (readers) */
    /* the learned demosaic's weights (net.h): the file (debayer.net_weights
     * or the installed one); the debayer step's copy in the backend (NULL:
     * they could not be loaded); 1 while that is set; weights a live switch
     * loaded on the control thread, for the debayer step to take */
    char net_path[PC_PATH_LEN];
    pc_net *net;
    atomic_int have_net;
    _Atomic(pc_net *) net_pending;
    pthread_mutex_t snap_lock;      /* guards snap_path, snap_view, snap_token, snap_cameras */
    char snap_path[PC_PATH_LEN];    /* -> stage: snapshot of the next set */
    char snap_view[PL_PIC_NAME];    /* "": the main picture; else that virtual camera's */
    int snap_cameras;               /* 1: snap_path is a folder, one PNG per camera */
    unsigned long long snap_token;  /* the control client waiting for it (0: --snapshot) */
    pthread_mutex_t reload_lock;    /* guards reload_token, nreload */
    unsigned long long reload_token[PL_RELOAD_WAITERS]; /* control clients waiting for the next
                                     * reload's outcome (control -> main thread) */
    int nreload;
    pthread_mutex_t reopen_lock;    /* guards reopen */
    pl_picture_config *reopen[PL_MAX_ENCODERS]; /* -> thread t: reopen with these (it frees it) */
    pthread_mutex_t enc_lock;       /* guards band[t].enc against its swap:
                                     * other threads use it only under it */
    pthread_mutex_t settings_lock;  /* the main thread changes d->settings under
                                     * it; other threads copy them under it */

    /* queues between stage and encoder threads (q_lock guards both) */
    pthread_mutex_t q_lock;
    pthread_cond_t q_cond;
    fifo free_slots;

    /* per-frame times, keyed by pts (stage thread puts, band threads and
     * output threads complete; t_lock guards all of it) */
    pthread_mutex_t t_lock;
    pending_times times[TIMES_RING];
    uint64_t packets_seq[PL_MAX_ENCODERS];  /* packets out of thread t's encoder so far */
    unsigned outputs_live[PL_MAX_ENCODERS]; /* thread t's outputs writing (state ok), polled per frame */
    uint32_t encoding;                      /* threads whose packets a set waits for (not the preview) */

    /* recording queues (pipeline_record_queue.c; set-up): some picture
     * has one; the preview's output is not a recording (it may skip) */
    int recq_on;
    int preview_live;
    uint64_t preview_skipped, preview_said; /* stage thread */
    int64_t preview_said_ns;

    /* threads and state */
    pthread_t stage_thr;
    int stage_started, enc_started;   /* main thread; enc_started: the encoder threads */
    atomic_int stop;        /* 1: stop taking frame sets */
    atomic_int stage_done, enc_done; /* enc_done: encoder threads finished */
    atomic_int failed;      /* a stage failed: exit 1 */
    atomic_int snapshots_active; /* snapshot threads still writing (waited for at exit) */
    atomic_uint_fast64_t sets_taken, frames_done;

    /* control thread (metrics_lock: its callbacks may overlap) */
    pthread_mutex_t metrics_lock;
    pc_camera_stats camstats[PC_CAPTURE_MAX_CAMERAS];
    pc_camera_metrics cammetrics[PC_CAPTURE_MAX_CAMERAS];

    /* the colour step (step_colour.c), for the control thread's wb
     * commands; NULL outside prepare..close */
    pl_colour *col;

    /* the virtual cameras (pipeline_vcams.c): NULL when none are configured */
    pl_vcams *vcams;
};

static inline int pl_is_null_url(const char *u) { return strcmp(u, "null") == 0; }

/* pipeline.c: queues between the stage and encoder threads */
int pl_take(pipeline *p, fifo *q, job *out, int honour_stop);
void pl_put(pipeline *p, fifo *q, job j);
void pl_wake_all(pipeline *p);
void pl_fail(pipeline *p, const char *what);

/* What a pipeline runs: the stage's list of steps and, for each picture
 * the list's last writer declares (pl_steps.out[i]), its encoding.
 * pc_run_pipeline runs pl_default_spec (pipeline_stage.c's steps, the
 * settings' pictures: pl_settings_picture); a test runs its own steps and
 * pictures through pl_run. */
typedef struct pl_spec {
    const pl_step_ops *const *steps;
    int nsteps;
    /* Main thread (set-up, reload): fills c for picture `index` of
     * settings s; c->name, width and height are the step's declaration,
     * the rest zero. 0, or -1 with err (e.g. no settings for a picture of
     * that name): set-up fails naming the picture, a reload keeps the
     * picture's settings in force. */
    int (*picture)(void *user, const pc_settings *s, int index, pl_picture_config *c, char *err, size_t errlen);
    void *user;
} pl_spec;

extern const pl_spec pl_default_spec;
/* pc_run_pipeline with spec (NULL: pl_default_spec). */
int pl_run(pc_daemon *d, const pl_spec *spec);

/* pipeline_stage.c: the list of steps, prepared (before the encoders:
 * p->steps.out[] are the slots' pictures) and started (after the picture
 * slots); on failure p->err says why and *failed names the step. */
int pl_stage_prepare(pipeline *p, const char **failed);
int pl_stage_start(pipeline *p, const char **failed);
void *pl_stage_main(void *arg);

/* the steps (step_*.c), in pipeline_stage.c's list */
extern const pl_step_ops pl_step_raw_record, pl_step_colour, pl_step_snapshot, pl_step_debayer, pl_step_render,
    pl_step_web_picture;

/* pipeline_pictures.c (main thread unless said) */
/* The settings' pictures (pl_default_spec.picture), every one with
 * encode.*'s encoder, codec, preset and GOP: picture 0 (whatever its
 * name) the top-level outputs and bitrate, the preview, required;
 * "vcam:NAME" virtual_cameras' entry NAME (its outputs and bitrate, one
 * band); "unstitched" panorama.unstitched_outputs (the cameras in
 * encode.layout); pictures 1.. are not required. Another name is an
 * error naming it. */
int pl_settings_picture(void *user, const pc_settings *s, int index, pl_picture_config *c, char *err,
                        size_t errlen);
/* Set-up: the pictures of p->steps.out[], their settings (p->spec), their
 * layouts and encoders (none for output null), the threads and the slot
 * tokens; then (once the steps said nothing against the formats) their
 * slot pictures, host copies and the preview's. */
int pl_pictures_open(pipeline *p);
int pl_pictures_slots(pipeline *p);
/* Teardown, after the threads: the encoders (trailers) and the muxes;
 * then, after the steps (they may hold the slots' pictures), the slots'
 * pictures. */
void pl_pictures_close(pipeline *p);
void pl_pictures_free(pipeline *p);
/* Reload (main thread): each picture's settings from s; new outputs go to
 * its threads (reopen), a new bitrate to its encoders. */
void pl_pictures_reload(pipeline *p, const pc_settings *s);
/* Per picture and band: encoder, rows, frames and encode latency
 * p50/p99/max (after the threads ended). */
void pl_pictures_summary(pipeline *p, char *buf, size_t n);
/* Band b's thread: reopens its encoder with c (new outputs); on failure
 * the running one stays. */
void pl_band_reopen(pipeline *p, pl_band *b, const pl_picture_config *c);
/* A picture's encoders: bitrate (c's, shared by its bands). */
int pl_picture_set_bitrate(pipeline *p, pl_picture *pic, int64_t bitrate, char *err, size_t n);
/* The picture's encoders' figures to the stats (its encoder, how many encode). */
void pl_picture_publish(pipeline *p, pl_picture *pic);

/* pipeline_encoder.c */
void *pl_encoder_main(void *arg); /* arg: pl_band */
/* The callbacks of band b's encoder (packets, writes, faults) into ec. */
void pl_encoder_callbacks(pl_band *b, pc_encode_config *ec);
/* Set-up / band b's thread: b's encoder encodes (its packets are waited
 * for from the next set on), or stopped (nothing waits for it any more). */
void pl_band_encoding(pipeline *p, pl_band *b, int on);
/* skip: threads that do not get this set (their packets are not waited for) */
void pl_times_put(pipeline *p, const job *j, uint32_t skip);
void pl_times_flush(pipeline *p);
/* stage thread: queue job j (slot >= 0, or -1 = end) to every thread */
void pl_dispatch(pipeline *p, job j);
void pl_slot_release(void *token);
/* Rows [row0, row0+rows) of picture q (NV12 or I420; even): the same memory. */
pc_picture pl_band_picture(const pc_picture *q, int row0, int rows);
void pl_request_idr(pipeline *p);

/* pipeline_record_queue.c: recording queues. setup (main thread, after
 * the pictures' encoders opened, fps known): which pictures have one,
 * their memory bound (refused with p->err when it cannot fit), the
 * bands' larger job queues; teardown frees them (after the threads). */
int pl_recq_setup(pipeline *p);
void pl_recq_teardown(pipeline *p);
/* Stage thread, per set (slot >= 0): which threads skip it (returned
 * mask), and which get a copy in their queue (jobs[t].qbuf > 0) instead
 * of the slot; counts and says drops and skips. */
uint32_t pl_recq_plan(pipeline *p, job *jobs);
/* Band thread: a queued picture's buffer goes back (the encoder's
 * release callback; opaque = the band's token for that buffer). */
void pl_recq_release(void *opaque);
/* Band thread: the picture of buffer buf (a job's qbuf - 1) and the token to release it with. */
const pc_picture *pl_recq_picture(pl_band *b, int buf, void **token);
/* 1 when url is a recording: a path (no scheme, not "null") */
int pl_is_recording_url(const char *url);

/* step_colour.c, for the control thread:
 * the gains in force as config lines; returns how many cameras are auto.
 * freeze: also fixes the auto cameras at those gains (until a reload). */
int pl_colour_describe_wb(pipeline *p, char *buf, size_t len);
int pl_colour_freeze_wb(pipeline *p, char *buf, size_t len);
/* Undoes a freeze: the configuration's "auto" cameras automatic again. */
int pl_colour_thaw_wb(pipeline *p, char *buf, size_t len);
/* The white balance in force as the JSON array "cameras" (per slab: auto,
 * frozen, gains). */
void pl_colour_wb_json(pipeline *p, pc_json *j);

/* pipeline_reload.c */
void pl_reload(pipeline *p);

/* pipeline_control.c */
void pl_control_ops(pipeline *p, pc_control_ops *ops);
/* The HTTP metrics server's callbacks (pipeline_control.c). */
void pl_http_ops(pipeline *p, pc_http_ops *ops);

/* pipeline_vcams.c: the virtual cameras' control plane. setup: after the
 * capture opened (fps), before the stage's steps; teardown: after every
 * thread ended. The rest are the control, HTTP and main threads' calls. */
int pl_vcams_setup(pipeline *p);
void pl_vcams_teardown(pipeline *p);
int pl_vcams_control(void *user, const char *args, char *buf, size_t len);
void pl_vcams_status_text(pipeline *p, char *buf, size_t len);   /* appends "\nvcam ..." lines */
int pl_vcams_prometheus(pipeline *p, char *buf, size_t len);     /* appends */
void pl_vcams_summary(pipeline *p, char *buf, size_t len);
/* Frame-set skew (pipeline_skew.c): metrics (appends; -1 when buf is too
 * small), the page's pipeline.skew, the exit summary's line. */
int pl_skew_prometheus(pipeline *p, char *buf, size_t len);
void pl_skew_json(pipeline *p, pc_json *j);
void pl_skew_summary(const pc_set_stats *ss, char *buf, size_t len);
void pl_vcams_reload_live(pipeline *p, unsigned live);
void pl_vcams_json(pipeline *p, pc_json *j);                     /* "views": [...] */
int pl_vcams_web_command(void *user, const char *name, const char *command, pc_json *j, char *err, size_t n);
int pl_vcams_web_map(void *user, pc_json *j, char *err, size_t n);

/* pipeline_web.c: the web page (daemon.http_listen). start: after the
 * steps started (p->webpic[]), before the stage thread; stop: with the
 * other servers; close: after the steps closed and the snapshots ended. */
typedef struct pl_web pl_web;
void pl_web_start(pipeline *p);
void pl_web_stop(pipeline *p);
void pl_web_close(pipeline *p);
/* A snapshot of the next set into path (pipeline_control.c; control and
 * HTTP threads): the main picture (view NULL or ""), a virtual camera's
 * (view its name) or each camera's into the folder path (cameras 1);
 * answered through pl_snapshot_done(token). 0, or -1 with err (another
 * one waits, no such view). */
int pl_request_snapshot(pipeline *p, const char *path, int cameras, const char *view, unsigned long long token,
                        char *err, size_t errlen);
/* 1 when view is NULL, "" or a virtual camera of this run; else 0 with
 * err naming the ones there are. */
int pl_snapshot_view_ok(pipeline *p, const char *view, char *err, size_t errlen);
/* The answer to a snapshot request (any thread): to the control client
 * or the web request that asked, by token. */
void pl_snapshot_done(pipeline *p, unsigned long long token, int rc, const char *msg);
/* The live picture of virtual camera `view`'s picture ("vcam:VIEW"), or
 * NULL (no such picture, or none made for it). */
pc_web_picture *pl_web_view_picture(pipeline *p, const char *view);

#endif
