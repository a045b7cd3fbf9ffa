/* capture_int.h - internals shared by the capture core (capture.c) and its
 * sources (source_file.c, source_arv.c). Not installed, not for callers.
 *
 * Ownership of a frame buffer ("slot") is explicit: it is either FREE (the
 * source may fill it), at the SOURCE (queued in an Aravis stream, or being
 * read from the file), or held by the core with refs > 0 (by frame sets,
 * and by its camera as "last good frame" for substitution). When the last
 * reference goes, the core hands it back through ops->requeue.
 */
#ifndef PANOCAP_CAPTURE_INT_H
#define PANOCAP_CAPTURE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "capture.h"

#define PC_MAX_OPEN_SETS 8   /* cap on sets being assembled at once (ceil(deadline) + 2) */
#define PC_STREAM_SLOTS 5    /* buffers kept queued at the source beyond those sets can hold */

enum { SLOT_FREE = 0, SLOT_SOURCE = 1, SLOT_CORE = 2 };
enum { SET_FREE = 0, SET_OPEN, SET_READY, SET_HELD };

typedef struct pc_slot {
    uint8_t *data;
    int cam;          /* camera index */
    int index;        /* in the camera's slot array */
    int refs;
    int state;
    uint64_t frame_id;
    void *handle;     /* the source's object for it (ArvBuffer) */
} pc_slot;

typedef struct pc_setint {
    pc_frameset pub;  /* first member: the consumer sees this */
    int state;
    int64_t k;        /* grid slot of the set */
    int64_t deadline_ns;
    int filled;
    pc_slot *src[PC_CAPTURE_MAX_CAMERAS]; /* by slab; NULL = grey */
    uint32_t repaired;                    /* bit by slab: src is a repaired incomplete frame */
    int64_t t[PC_CAPTURE_MAX_CAMERAS];    /* host time of each slab's frame */
} pc_setint;

typedef struct pc_cam {
    pc_camera_config cfg;     /* strings point into the capture's own copies */
    int index, slab;
    char name[64];
    pc_slot *slots;
    int nslots;
    pc_slot *last_good;       /* its newest live frame an emitted set carried (substitute) */
    /* timestamp -> host clock mapping, grouping phase */
    int have_off;
    int64_t off_ns;
    int64_t phase_ns;
    int64_t phase_seen_ns;
    pc_camera_stats st;       /* protected by the capture lock */
    int64_t fake_fill_cpu_ns; /* updated by the fake camera's fill callback */
    /* loss warning: frames and incomplete frames in the current window */
    int64_t win_start_ns;
    uint64_t win_frames, win_bad;
    int loss_warned;
    size_t packet_payload;    /* image bytes per GVSP data packet (capture lock); 0: no packets */
    void *src;                /* source-private per-camera state */
} pc_cam;

struct pc_capture;
typedef struct pc_source_ops {
    const char *name;
    /* after the core validated cfg and before buffers exist: open and
     * configure the cameras; the file source sets geometry here. */
    int (*open)(struct pc_capture *c, char *err, size_t errlen);
    /* buffers exist: create per-slot handles (ArvBuffers). */
    int (*prepare)(struct pc_capture *c, char *err, size_t errlen);
    int (*start)(struct pc_capture *c, char *err, size_t errlen);
    void (*stop)(struct pc_capture *c);
    void (*close)(struct pc_capture *c);
    /* capture lock held: slot has no reference left; give it back. */
    void (*requeue)(struct pc_capture *c, pc_slot *s);
    int stacked_layout; /* 1: slot p of every camera is slab of one panorama p */
} pc_source_ops;

struct pc_capture {
    pc_capture_config cfg;
    char *strings;                /* owned copies of every string of cfg */
    const pc_logger *log;
    int n, width, height;
    pc_cfa cfa;
    pc_rawfmt fmt;                /* every camera's raw format (docs/colour.md) */
    size_t slab_bytes;            /* pc_rawfmt_frame_bytes(fmt, width, height) */
    int fmt_chosen;               /* pixel_format "auto": camera 0 chose fmt */
    double fps;
    int64_t period_ns;
    int pool_sets;

    pthread_mutex_t lock;
    pthread_cond_t cond_ready;    /* consumer: a set is ready / eof */
    pthread_cond_t cond_sup;      /* supervisor: earliest deadline changed / stop */
    pthread_cond_t cond_free;     /* file reader: slots or pool room freed */

    pc_cam cam[PC_CAPTURE_MAX_CAMERAS];
    int slab_cam[PC_CAPTURE_MAX_CAMERAS];

    pc_setint *sets;
    int nsets;
    pc_setint *open[PC_MAX_OPEN_SETS]; /* sorted by k */
    int n_open, max_open;
    pc_setint **ready;            /* FIFO ring of pool_sets entries */
    int ready_head, ready_count;
    int held;

    int have_boundary;
    int64_t boundary_ns;          /* set k covers [b + k*P, b + (k+1)*P) */
    int have_emitted;
    int have_last_k;
    int64_t last_k;
    int64_t start_ns;
    int64_t last_pts;
    uint64_t next_index;
    int64_t last_rephase_ns;
    int64_t last_drop_log_ns;
    int64_t max_skew_ns;          /* capture.max_skew, resolved */
    int64_t last_skew_log_ns;     /* the last skew warning (0: none yet) */
    uint64_t skewed_at_log;       /* sets_skewed when it was given */
    int have_emitted_k;
    int64_t emitted_k;            /* grid slot of the last set published (periods count) */
    pc_set_stats sst;
    uint64_t sets_delivered;

    void **blocks;                /* allocations to free at close */
    int nblocks;
    uint8_t *grey;

    int started, stopping, eof;
    pthread_t sup_thread;
    int sup_started;

    const pc_source_ops *ops;
    void *srcdata;
    struct pc_scene *scene;          /* fake cameras' scene (cfg.scene), or NULL */
    struct pc_scene_loop *scene_loop; /* its frames, rendered at open */
};

/* core services for the sources ------------------------------------------ */

/* A camera's buffer came back from the source. reason < 0: complete frame
 * with camera timestamp cam_ts_ns (0: unknown, use arrival); otherwise a
 * pc_fail_reason. arrival_ns: host monotonic time the frame arrived, as
 * the source saw it (0: now). Takes the lock. */
void pc_cap_frame(struct pc_capture *c, int cam, pc_slot *slot, int reason,
                  int64_t cam_ts_ns, uint64_t frame_id, int64_t arrival_ns);
/* An incomplete frame (packets lost) whose buffer was marked with
 * pc_cap_mark_slot before the source filled it: the core finds the lines
 * that never arrived (marks still there), fills them from the camera's
 * previous frame and uses it as a frame; reason is counted as well. */
void pc_cap_frame_partial(struct pc_capture *c, int cam, pc_slot *slot, int reason,
                          int64_t cam_ts_ns, uint64_t frame_id, int64_t arrival_ns);
/* Writes the marks into a free slot before the source queues it. Lock held
 * or the slot not shared. */
void pc_cap_mark_slot(struct pc_capture *c, pc_slot *slot);
/* A complete set from a source that reads whole sets (file): slots by slab. */
void pc_cap_whole_set(struct pc_capture *c, pc_slot **slots, int64_t pts_ns,
                      uint32_t substituted);
void pc_cap_set_state(struct pc_capture *c, int cam, pc_cam_state st);
int pc_cap_stopping(struct pc_capture *c);

extern const pc_source_ops pc_source_file_ops;
extern const pc_source_ops pc_source_arv_ops; /* gige and fake; only with Aravis */

/* fake pictures (fakepic.c) -------------------------------------------- */
typedef struct pc_fakepic pc_fakepic;
int pc_fakepic_create(pc_fakepic **out, const char *image, int part, int parts,
                      int width, int height, pc_cfa cfa, char *err, size_t errlen);
/* Draws the picture, the counter and the bar into dst (w x h at pitch;
 * clipped when it differs from the picture's size). */
void pc_fakepic_fill(const pc_fakepic *p, uint8_t *dst, size_t pitch, int w, int h,
                     uint64_t counter);
void pc_fakepic_destroy(pc_fakepic *p);

int pc_cfa_from_pixel_format_name(const char *name); /* "BayerRG8" -> PC_CFA_RGGB, else -1 */

#define PC_ERR(err, errlen, ...)                                    \
    do {                                                            \
        if ((err) && (errlen))                                      \
            snprintf((err), (errlen), __VA_ARGS__);                 \
    } while (0)

/* Skew of the set about to go out (skew.c): its pc_frameset fields, the
 * set and camera statistics, the warning above max_skew_ns. Under the lock. */
void pc_cap_skew_locked(pc_capture *c, pc_setint *s, int64_t now);

#endif
