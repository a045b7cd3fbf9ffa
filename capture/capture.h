/* capture.h - the public C API of panocap's capture library.
 *
 * N cameras (GigE Vision through Aravis, Aravis's in-process fake cameras,
 * or a raw file recorded earlier) deliver Bayer frames into host memory that
 * panocap owns (pinned when the caller's allocator is cudaHostAlloc); the
 * library groups the frames of the N cameras into frame sets by camera
 * timestamp and hands each set to the consumer (the GPU or CPU stage) as N
 * slab pointers, one per camera, in stack order. Stacking the slabs into one
 * W x (N*H) panorama costs no CPU copy on the GPU path: the consumer copies
 * each slab by DMA into its rows of the device panorama (see README.md in
 * this folder for why, and the measurement). pc_frameset_stack() does the
 * copy on the CPU path.
 *
 * Threads: one worker per camera (pops Aravis buffers, reconnects with
 * backoff when the camera is lost), one supervisor (frame-set deadlines), a
 * software-trigger ticker when a camera uses software trigger, a reader for
 * the file source. None of them ever waits for the consumer: when the
 * consumer is slow, whole sets are dropped at one place and counted.
 *
 * Built with or without Aravis: without it only PC_SOURCE_FILE works (the
 * other sources fail in pc_capture_open with PC_ENOTSUP and a message).
 *
 * Conventions as in kernels/debayer.h: 0 on success, a negative PC_E* code
 * on failure with a message naming the camera and the setting in err.
 */
#ifndef PANOCAP_CAPTURE_H
#define PANOCAP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "colour.h"  /* pc_rawfmt */
#include "picture.h" /* pc_cfa, PC_E* codes */
#include "enums.h"   /* pc_source_kind, pc_trigger_mode */
#include "log.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_CAPTURE_MAX_CAMERAS 16

/* Extra return codes of pc_capture_next (positive: not errors). */
enum {
    PC_CAPTURE_TIMEOUT = 1, /* no frame set within timeout_ms */
    PC_CAPTURE_EOF = 2,     /* file source reached its end (no loop) */
};


typedef struct pc_camera_config {
    /* gige: IPv4 address (opened directly, no discovery), or serial number
     * / Aravis device id / MAC (found by discovery). fake: the serial of the
     * fake camera (NULL: "PCFAKE<i>"). Ignored by the file source. */
    const char *address;
    pc_cfa cfa;               /* Bayer phase; pixel format Bayer<cfa>8 */
    const char *pixel_format; /* optional GenICam name instead of cfa, e.g. "BayerRG12p"; "auto":
                               * the deepest format of cfa's phase the camera offers whose
                               * rate fits a gigabit link (else the leanest); docs/colour.md */
    int width, height;        /* region, even (default 2040x1080) */
    int offset_x, offset_y;   /* region offset, even (default 0,0) */
    double exposure_us;       /* NaN or <= 0: leave the camera's setting */
    double gain;              /* NaN or < 0: leave the camera's setting */
    int packet_size;          /* GevSCPSPacketSize bytes; 0: negotiate (jumbo when the path allows) */
    int packet_delay_ns;      /* GevSCPD inter-packet delay; < 0: leave (default -1) */
    int socket_buffer;        /* stream socket buffer bytes; 0: Aravis auto (payload size) */
    int resend;               /* packet resend requests on (1, default) / off (0) */
    int packet_timeout_ms;    /* wait for a missing packet; 0: Aravis default (20 ms) */
    int frame_retention_ms;   /* keep an incomplete frame; 0: Aravis default (100 ms) */
    int packet_socket;        /* -1 auto (packet socket when CAP_NET_RAW), 0 never */
    pc_trigger_mode trigger;
    const char *trigger_line; /* hardware trigger source; NULL: "Line0" */
    /* fake cameras: the picture shown (PNG or PPM, common/image.h; NULL:
     * a built-in synthetic panorama), scaled to cover and
     * centre-cropped to width x (image_parts*height); this camera shows
     * horizontal band image_part. Defaults: part = slab, parts = N. */
    const char *image;
    int image_part, image_parts;
    int slab;                 /* position in the stack, 0 = top; -1: camera index */
} pc_camera_config;

typedef struct pc_capture_config {
    pc_source_kind source;
    const char *file;     /* PC_SOURCE_FILE: the PCRAW1 file */
    int file_realtime;    /* 1 (default): replay at fps; 0: as fast as the consumer takes sets */
    int file_loop;        /* replay again from the start at the end */
    int n_cameras;        /* file source: 0 = from the file */
    pc_camera_config cam[PC_CAPTURE_MAX_CAMERAS];
    double fps;           /* requested frame rate (file source: 0 = the file's) */
    double deadline_periods; /* a set waits this many frame periods after its first slab (1.5) */
    double max_skew_ms;   /* warn when a set's cameras are further apart; 0 = half a frame period */
    int pool_sets;        /* frame sets queued for or held by the consumer (default 4) */
    /* Allocator for the frame buffers (e.g. cudaHostAlloc wrappers for
     * pinned memory). NULL: page-aligned malloc. Called only in open. */
    void *(*alloc)(size_t size, void *user);
    void (*free)(void *ptr, void *user);
    void *alloc_user;
    const pc_logger *log; /* NULL: stderr */
    /* Fake source: a simulated scene (scene.h) instead of the pictures.
     * scene names it ("stadium"; NULL: pictures); scene_rig is the rig
     * whose camera i is fake camera i (same count and size; read during
     * check and open only); the cameras show scene_seconds of the match
     * (0: 2 s), rendered at open and played forwards and backwards;
     * scene_seed picks the match. A frame's id is the frame number its
     * camera time falls on; pc_capture_scene_time says what it shows. */
    const char *scene;
    const struct pc_rig *scene_rig;
    double scene_seconds;
    uint64_t scene_seed;
} pc_capture_config;

/* Fills cfg with defaults: 5 gige cameras 2040x1080 RGGB, 50 fps, deadline
 * 1.5 periods, 4 sets, exposure/gain left alone, resend on. Call it first,
 * then change what the configuration file says. */
void pc_capture_config_init(pc_capture_config *cfg);
void pc_camera_config_init(pc_camera_config *cam);

/* One frame set. Slab s is rows s*height .. s*height+height-1 of the
 * panorama. The pointers are host memory owned by the capture library
 * (allocated with cfg->alloc), valid until pc_capture_release. */
typedef struct pc_frameset {
    uint64_t index;        /* monotonic set number; a gap means dropped sets */
    int64_t pts_ns;        /* capture time of the set (host monotonic clock, from
                            * the camera timestamps), strictly increasing */
    int64_t t_first_ns;    /* pc_now_ns when the first slab arrived */
    int64_t t_complete_ns; /* pc_now_ns when the last slab arrived or the deadline fired */
    int n;                 /* slabs (= cameras) */
    int width, height;     /* of one slab */
    pc_cfa cfa;
    /* The slabs' raw format (docs/colour.md): 8-bit unless the cameras
     * or the file say otherwise; slab_bytes per slab. For other than
     * 8-bit, pitch is slab_bytes / height, or 0 where a row does not
     * end on a byte (10p, width not a multiple of 4). */
    pc_rawfmt fmt;
    size_t slab_bytes;
    const uint8_t *slab[PC_CAPTURE_MAX_CAMERAS];
    size_t pitch[PC_CAPTURE_MAX_CAMERAS];
    int camera[PC_CAPTURE_MAX_CAMERAS];        /* camera index of slab s */
    uint64_t frame_id[PC_CAPTURE_MAX_CAMERAS]; /* camera frame id (of the substitute if substituted) */
    uint32_t substituted;  /* bit s: slab s is its camera's last good frame (or mid-grey) */
    uint32_t grey;         /* bit s: ... and that camera had no good frame yet: mid-grey */
    uint32_t repaired;     /* bit s: an incomplete frame, its missing lines filled from
                            * the camera's previous frame (packets lost) */
    /* Non-NULL when the slabs already lie contiguously (file source): the
     * whole W x (n*H) panorama at stacked_pitch, no stacking needed. */
    const uint8_t *stacked;
    size_t stacked_pitch;
    /* Skew: the live slabs' capture times (camera timestamps on the host
     * clock) max - min, and each slab's time minus their median; 0 for a
     * substituted slab (or one of a camera's first 8 frames, its clock
     * offset not settled yet), and everywhere with fewer than two timed
     * slabs (skew_slabs counts them; the file source: 0). */
    int64_t skew_ns;
    int64_t skew_offset_ns[PC_CAPTURE_MAX_CAMERAS];
    int skew_slabs;
} pc_frameset;

/* Copies the n slabs into dst (W x n*H, pitch >= W) for consumers that need
 * one contiguous image (the CPU backend). No-op when dst == s->stacked.
 * 8-bit sets only (PC_EINVAL otherwise: use the colour stage). */
int pc_frameset_stack(const pc_frameset *s, uint8_t *dst, size_t pitch);

typedef struct pc_capture pc_capture;

/* Validates cfg (errors name the camera and the setting), opens and
 * configures the cameras, allocates every buffer. Nothing streams yet. */
/* Everything pc_capture_open would refuse that can be known without
 * touching a camera: ranges, equal region sizes and patterns, slabs,
 * addresses; the raw file (file source) exists, is a PCRAW1 file holding a
 * complete set and, when cfg->n_cameras is set, has that many cameras; the
 * fake cameras' pictures exist and can be read. 0 or a negative PC_E* code
 * with the message (naming the camera) in err. */
int pc_capture_check(const pc_capture_config *cfg, char *err, size_t errlen);

int pc_capture_open(pc_capture **out, const pc_capture_config *cfg,
                    char *err, size_t errlen);
/* The geometry actually in use (file source: from the file). */
int pc_capture_n_cameras(const pc_capture *c);
void pc_capture_geometry(const pc_capture *c, int *width, int *height, pc_cfa *cfa, double *fps);
/* The cameras' (or the file's) raw format. */
void pc_capture_rawfmt(const pc_capture *c, pc_rawfmt *fmt);
/* Fake cameras showing a scene: the scene time (seconds) of the frame
 * whose frame id is frame_id (pc_frameset.frame_id; pc_scene_objects at
 * that time says who is where in it). NAN without a scene. */
double pc_capture_scene_time(const pc_capture *c, uint64_t frame_id);
/* Starts acquisition on every camera and the threads. */
int pc_capture_start(pc_capture *c, char *err, size_t errlen);
/* Waits up to timeout_ms (< 0: forever) for the next frame set. Returns 0
 * and *out, PC_CAPTURE_TIMEOUT, PC_CAPTURE_EOF, or a negative error. Every
 * set returned must be given back with pc_capture_release. */
int pc_capture_next(pc_capture *c, int timeout_ms, pc_frameset **out);
void pc_capture_release(pc_capture *c, pc_frameset *s);
/* Stops the cameras and the threads; sets still held stay valid until
 * released or until close. pc_capture_next then returns PC_CAPTURE_EOF. */
void pc_capture_stop(pc_capture *c);
void pc_capture_close(pc_capture *c);

/* --- health ------------------------------------------------------------ */

typedef enum pc_cam_state {
    PC_CAM_IDLE = 0,         /* opened, not started */
    PC_CAM_STREAMING = 1,    /* connected and acquiring */
    PC_CAM_LOST = 2,         /* control lost or no frames: torn down */
    PC_CAM_RECONNECTING = 3, /* trying to reopen it (backoff) */
    PC_CAM_STOPPED = 4,
} pc_cam_state;

typedef enum pc_stream_path {
    PC_PATH_NONE = 0,
    PC_PATH_PACKET_SOCKET = 1, /* Aravis AF_PACKET ring (CAP_NET_RAW) */
    PC_PATH_UDP_SOCKET = 2,    /* plain UDP socket */
    PC_PATH_IN_PROCESS = 3,    /* fake camera */
    PC_PATH_FILE = 4,
} pc_stream_path;

/* Why Aravis handed back a buffer that was not complete. */
typedef enum pc_fail_reason {
    PC_FAIL_TIMEOUT = 0,
    PC_FAIL_MISSING_PACKETS,
    PC_FAIL_WRONG_PACKET_ID,
    PC_FAIL_SIZE_MISMATCH,
    PC_FAIL_ABORTED,
    PC_FAIL_OTHER,
    PC_FAIL_COUNT
} pc_fail_reason;

typedef struct pc_camera_stats {
    char name[64];            /* the configured address (or serial for fake) */
    char serial[64], model[64];
    pc_cam_state state;
    pc_stream_path path;
    int slab;
    uint64_t frames_received;  /* buffers Aravis handed back, any status */
    uint64_t frames_completed; /* complete frames put into a set */
    uint64_t frames_failed[PC_FAIL_COUNT];
    uint64_t frames_late;      /* complete, but their set was already out (or a second frame for one set) */
    uint64_t frames_substituted; /* sets emitted with this camera's slab substituted */
    uint64_t frames_repaired;  /* incomplete frames used, missing lines from the previous frame */
    uint64_t lines_repaired;   /* lines so filled */
    /* GigE packets. packets_missing: image-data packets that never arrived
     * (neither sent through nor resent in time) in the incomplete frames
     * received, counted by the capture from the frames (the lines they held
     * were filled: frames_repaired). From Aravis's stream statistics:
     * packets_received; packets_resent, arrived after a resend request
     * (lost once, recovered); resend_requests, packets asked for again (one
     * asked twice counts twice); packets_after_gap, Aravis's
     * n_missing_packets: every packet from the first gap of an incomplete
     * frame to its end, whether it came or not (36 times the packets lost
     * at 2 % loss), kept for comparison with Aravis's own tools. */
    uint64_t packets_received, packets_missing, packets_resent, resend_requests, packets_after_gap;
    uint64_t underruns;        /* frames Aravis dropped for want of a buffer */
    uint64_t disconnects, reconnects;
    int64_t last_timestamp_ns; /* camera timestamp of the last complete frame */
    int64_t last_arrival_ns;   /* pc_now_ns of it */
    uint64_t last_frame_id;
    int64_t fake_fill_cpu_ns;  /* fake source: CPU time the fake camera spent drawing
                                * frames (the simulator's pattern generation, not capture) */
    int64_t skew_offset_ns;    /* in the last set that timed it: its time minus the median */
    int have_skew;             /* skew_offset_ns is set */
} pc_camera_stats;

#define PC_SKEW_BUCKETS 12
typedef struct pc_set_stats {
    uint64_t sets_emitted;     /* one per frame period: handed to the consumer's queue, or
                                * dropped (below; the periods a stall of the host skipped
                                * are counted here and as dropped) */
    uint64_t sets_complete;    /* ... with no slab substituted */
    uint64_t sets_dropped;     /* dropped because the consumer held/queued pool_sets sets */
    uint64_t sets_forced;      /* emitted early because too many sets were open */
    uint64_t rephases;         /* grouping grid moved (free-running cameras drifted) */
    uint64_t sets_delivered;   /* returned by pc_capture_next */
    uint64_t sets_startup;     /* incomplete sets discarded while the cameras were starting
                                * (before the first complete set, at most the first 2 s) */
    uint64_t periods;          /* frame periods since the first set (== sets_emitted) */
    uint64_t sets_no_frame;    /* emitted on time although no camera sent a frame for that period */
    uint64_t sets_no_complete; /* emitted with no complete live frame (each slab substituted or repaired) */
    /* Skew of the sets with two or more live slabs (pc_frameset.skew_ns):
     * a histogram with upper bounds pc_skew_bucket_s(i) seconds (the last
     * +Inf), not cumulative; their count, sum and max, the last one, and
     * the sets over max_skew_ns (capture.max_skew, resolved). */
    uint64_t skew_bucket[PC_SKEW_BUCKETS];
    uint64_t skew_sets, sets_skewed;
    double skew_sum_s;
    int64_t skew_max_ns, skew_last_ns, max_skew_ns;
} pc_set_stats;

/* The upper bound in seconds of skew bucket i (+INFINITY for the last). */
double pc_skew_bucket_s(int i);

/* Fills up to max entries (camera order); returns the number of cameras. */
int pc_capture_stats(pc_capture *c, pc_camera_stats *out, int max);
void pc_capture_set_stats(pc_capture *c, pc_set_stats *out);
const char *pc_cam_state_name(pc_cam_state s);
const char *pc_stream_path_name(pc_stream_path p);
const char *pc_fail_reason_name(pc_fail_reason r);

/* --list-cameras: Aravis discovery on every interface; prints one block per
 * device (id, vendor, model, serial, address, protocol, pixel formats). */
int pc_capture_list_cameras(FILE *out, char *err, size_t errlen);

/* --- raw files (PCRAW1, see raw_format.md) ------------------------------ */

typedef struct pc_raw_writer pc_raw_writer;
int pc_raw_writer_open(pc_raw_writer **out, const char *path, int width, int height,
                       int n_cameras, pc_cfa cfa, double fps, char *err, size_t errlen);
/* The same for slabs of any raw format (format version 2 of the file). */
int pc_raw_writer_open_fmt(pc_raw_writer **out, const char *path, int width, int height, int n_cameras,
                           const pc_rawfmt *fmt, double fps, char *err, size_t errlen);
int pc_raw_writer_write(pc_raw_writer *w, const pc_frameset *s, char *err, size_t errlen);
int pc_raw_writer_close(pc_raw_writer *w, char *err, size_t errlen);

typedef struct pc_raw_info {
    int width, height, n_cameras;
    pc_cfa cfa;
    pc_rawfmt fmt;   /* bits and packing (8-bit in version 1 files) */
    int version;     /* 1 or 2 */
    double fps;
    uint64_t n_sets; /* complete sets in the file */
} pc_raw_info;

typedef struct pc_raw_reader pc_raw_reader;
int pc_raw_reader_open(pc_raw_reader **out, const char *path, pc_raw_info *info,
                       char *err, size_t errlen);
/* Reads the next set: n * pc_rawfmt_frame_bytes(fmt, W, H) bytes into
 * dst (slabs in order, each its raw stream). Returns 0, PC_CAPTURE_EOF at the end, or a negative error. */
int pc_raw_reader_read(pc_raw_reader *r, uint8_t *dst, uint64_t *index, int64_t *pts_ns,
                       uint32_t *substituted, char *err, size_t errlen);
int pc_raw_reader_rewind(pc_raw_reader *r);
void pc_raw_reader_close(pc_raw_reader *r);

/* --- fake-camera pictures ----------------------------------------------- */

/* Every fake frame carries a moving element: its frame counter burned in as
 * 32 blocks of 8x8 pixels (255 = bit set, 0 = clear, bit 0 leftmost) in the
 * top-left corner, and an 8-pixel wide bar at x = (counter*8) mod width in
 * the bottom PC_FAKE_BAR_ROWS rows. The rest is the camera's part of the
 * picture, mosaiced with its Bayer pattern. */
#define PC_FAKE_COUNTER_COLS 256
#define PC_FAKE_COUNTER_ROWS 8
#define PC_FAKE_BAR_ROWS 16
/* Reads the counter back; -1 if the blocks are not clean 0/255 blocks. */
int64_t pc_fake_counter_read(const uint8_t *slab, size_t pitch, int width, int height);

#ifdef __cplusplus
}
#endif
#endif
