/* settings.h - panocap's configuration: one plain, copyable settings value.
 *
 * Sources, in order: embedded defaults (pc_settings_defaults), a libconfig
 * file (pc_settings_load), command-line overrides (daemon/cli.h, through
 * pc_settings_set), then pc_settings_finish and pc_settings_validate. The
 * result is treated as immutable: a reload builds a new value and
 * pc_settings_diff says what changed and whether it can be applied live.
 *
 * Every setting is described once, as data, in a key table (settings_keys.c):
 * name, type, storage offset, default, range or allowed names, unit, help,
 * and whether it can change live. Loading, command-line parsing, range
 * checks, defaults, --help-config and --dump-config all read that table.
 *
 * File layout (libconfig syntax; see systemd/panocap.conf.example):
 *   capture = { source = "fake"; cameras = 5; fps = 50.0; width = 2040; ... };
 *   cameras = ( { serial = "..."; address = "192.168.1.11"; slab = 0; ... }, ... );
 *   debayer = { algo = "edge"; variant = "auto"; matrix = "bt709"; ... };
 *   encode  = { codec = "hevc"; encoder = "auto"; bitrate = 20000000; ... };
 *   panorama = { rig = "/etc/panocap/rig.pto"; blend = "feather"; width = 0; ... };
 *   outputs = ( "panocap.ts", { url = "udp://239.1.1.1:5000"; options = "pkt_size=1316"; } );
 *   virtual_cameras = ( { name = "main"; width = 1920; height = 1080; pan = 0.0; ...;
 *                         outputs = ( ... ); presets = ( { name = "..."; pan = ...; }, ... ); }, ... );
 *   daemon  = { stats_interval = 1.0; log_level = "info"; ... };
 * Per-camera keys given in `capture` are the defaults of every camera;
 * a camera's own entry in `cameras` overrides them.
 *
 * Errors and warnings are collected in a pc_diag (all of them, not just
 * the first), each naming the file, line, key and what is allowed.
 */
#ifndef PANOCAP_SETTINGS_H
#define PANOCAP_SETTINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "enums.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_MAX_CAMERAS 16
#define PC_MAX_OUTPUTS 8
#define PC_MAX_FALLBACKS 8
#define PC_NAME_LEN 64   /* names, serials, addresses, encoder names */
#define PC_PATH_LEN 256  /* file paths */
#define PC_URL_LEN 512   /* output URLs */
#define PC_OPTS_LEN 256  /* output option strings */
#define PC_MAX_VCAMS 8   /* virtual cameras (each its own render and encoder) */
#define PC_MAX_PICTURE_OUTPUTS 4 /* outputs of a second picture: the unstitched cameras, a virtual camera */
#define PC_MAX_PRESETS 16 /* named poses of one virtual camera */

/* sysexits.h values: the daemon's exit codes. */
enum {
    PC_EXIT_OK = 0,
    PC_EXIT_RUNTIME = 1,
    PC_EXIT_USAGE = 64,  /* EX_USAGE: bad command line */
    PC_EXIT_CONFIG = 78, /* EX_CONFIG: bad configuration; systemd must not restart */
};

/* pc_source_kind, pc_trigger_mode and pc_codec are shared with capture/ and
 * encode/ (common/enums.h). */
typedef pc_source_kind pc_source;
typedef pc_trigger_mode pc_trigger;
/* debayer.backend as configured (device/backend.h has the backends
 * themselves, struct pc_backend, chosen by this name) */
typedef enum pc_backend_pref { PC_BACKEND_AUTO = 0, PC_BACKEND_CUDA, PC_BACKEND_CPU } pc_backend_pref;

const char *pc_source_name(pc_source v);   /* "gige", "fake", "file" */
const char *pc_trigger_name(pc_trigger v); /* "free-run", "software", "hardware" */
const char *pc_backend_pref_name(pc_backend_pref v); /* "auto", "cuda", "cpu" */
const char *pc_codec_name(pc_codec v);     /* "hevc", "h264" */
const char *pc_layout_name(pc_layout v);   /* "auto", "stacked", "grid", "bands" */

/* virtual_cameras[].mode: who steers a view. */
typedef enum pc_vcam_mode {
    PC_VCAM_MANUAL = 0,     /* the operator (control socket, HTTP), from the configured pose */
    PC_VCAM_FOLLOW = 1,     /* the follow mode (vcam/follow.h) until an operator command */
} pc_vcam_mode;
/* panorama.blend and the samplers (panorama.sampler,
 * virtual_cameras[].sampler) are the render family's pc_render_blend and
 * pc_render_sampler (kernels' render.h), with its names. */
const char *pc_vcam_mode_name(pc_vcam_mode v); /* "manual", "follow" */

/* One camera. Also used as the per-camera defaults in capture.camera. */
typedef struct pc_camera_settings {
    char name[PC_NAME_LEN];    /* label for logs and metrics; "" = "camN" */
    char address[PC_NAME_LEN]; /* IP address or Aravis device id (gige) */
    char serial[PC_NAME_LEN];  /* serial number (gige), or the fake camera's serial */
    int slab;                  /* row band of the panorama, 0 = top */
    int pattern;               /* pc_cfa (kernels/debayer.h) */
    int width, height;         /* region, even */
    int offset_x, offset_y;    /* region offset on the sensor, even */
    double exposure_us;        /* 0 = leave the camera's setting */
    double gain_db;            /* < 0 = leave the camera's setting */
    int packet_size;           /* GevSCPSPacketSize bytes; 0 = auto-negotiate */
    int packet_delay_ns;       /* inter-packet delay */
    int socket_buffer;         /* stream socket buffer bytes; 0 = Aravis default */
    int resend;                /* packet resend requests on/off */
    int packet_timeout_ms;     /* Aravis packet-timeout */
    int frame_retention_ms;    /* Aravis frame-retention */
    int trigger;               /* pc_trigger */
    char trigger_source[PC_NAME_LEN]; /* hardware trigger line, e.g. "Line0" */
    char image[PC_PATH_LEN];   /* fake cameras: picture fed to this camera */
    /* Colour (docs/colour.md); parsed by pc_settings_camera_colour. */
    char pixel_format[PC_NAME_LEN]; /* "" = Bayer<pattern>8; else a GenICam name */
    double black_level;        /* sensor units */
    double white_level;        /* sensor units, 0 = the largest code */
    char wb_gains[PC_NAME_LEN];/* "r, g, b" or "auto" */
    char ccm[PC_PATH_LEN];     /* 9 numbers, row-major; "" = identity */
    char transfer[PC_PATH_LEN];/* linear, srgb, bt709, a gamma value, or a LUT file path */
    /* Bookkeeping (read-only for users): */
    int line;                  /* line of the entry in the file, 0 if none */
    uint32_t set_mask;         /* keys given explicitly for this camera */
} pc_camera_settings;

typedef struct pc_capture_settings {
    int source;                /* pc_source */
    char file[PC_PATH_LEN];    /* raw file for source = file */
    int file_loop;             /* replay the raw file again from the start at its end */
    int cameras;               /* number of cameras (slabs) */
    double fps;
    double deadline_periods;   /* a set is emitted after this many frame periods */
    double max_skew_ms;        /* warn when a set's cameras are further apart; 0 = half a period */
    int pool_size;             /* frame sets in the capture pool */
    char image[PC_PATH_LEN];   /* fake cameras: one panorama split across them ("" = built-in) */
    char scene[PC_NAME_LEN];   /* fake cameras: a simulated scene seen through panorama.rig
                                * ("stadium"; "" = pictures) */
    double scene_seconds;      /* the scene's loop, pre-rendered at start */
    int64_t scene_seed;        /* which match the scene plays */
    pc_camera_settings camera; /* defaults for every camera */
    int line;
} pc_capture_settings;

typedef struct pc_debayer_settings {
    int algo;                  /* pc_algo_id */
    int variant;               /* pc_variant */
    int matrix;                /* pc_matrix */
    int range;                 /* pc_range */
    int backend;               /* pc_backend_pref */
    int cpu_threads;           /* 0 = one per CPU */
    int in_flight;             /* frame sets in flight on the GPU */
    char gpu[PC_NAME_LEN * 2]; /* CUDA device: "" = the first, an index, or "GPU-<uuid>" */
    char net_weights[PC_PATH_LEN]; /* --algo net's weights file; "" = the installed one */
    int line;
} pc_debayer_settings;

typedef struct pc_name_list {
    int count;
    char item[PC_MAX_FALLBACKS][PC_NAME_LEN];
} pc_name_list;

typedef struct pc_encode_settings {
    int codec;                 /* pc_codec */
    char encoder[PC_NAME_LEN]; /* "auto" or an FFmpeg encoder name */
    pc_name_list fallback;     /* tried in order when the NVENC probe fails */
    int64_t bitrate;           /* bits per second, CBR */
    int gop;                   /* frames between IDRs */
    char preset[PC_NAME_LEN];  /* "" = the encoder's low-latency default */
    int threads;               /* software encoder threads, 0 = auto */
    char options[PC_OPTS_LEN]; /* encoder options "key=value:key=value" ("" = none) */
    int layout;                /* pc_layout */
    int bands;                 /* layout bands: number of bands, 0 = auto */
    char grid[16];             /* layout grid: "CxR" tiles across x down, "" = auto */
    int band_outputs;          /* pc_band_outputs */
    int preview_scale;         /* 0 = no preview; 2..16: a picture 1/N the size */
    int64_t preview_bitrate;   /* bits per second */
    char preview_url[PC_URL_LEN]; /* the preview's output ("" = none) */
    char cpus[PC_NAME_LEN];    /* CPU list for the encoder threads ("4-11"), "" = any */
    double record_queue_s;     /* recordings' queue before the encoder, in seconds (0 = none) */
    int debug_delay_ms;        /* debugging/tests: each encoder thread waits this long per frame (0 = off) */
    int line;
} pc_encode_settings;

typedef struct pc_output_settings {
    char url[PC_URL_LEN];      /* file path, udp://, srt://, tcp://, rtp://, rtmp(s)://, .m3u8, or "null" */
    char options[PC_OPTS_LEN]; /* "key=value,key=value" for libavformat */
    char format[PC_NAME_LEN];  /* container; "" = guess from the URL */
    int segment_s;             /* recordings: new file every N seconds, 0 = one file */
    int64_t max_bytes, max_age_s, min_free; /* retention of segments, 0 = none */
    int line;
    uint32_t set_mask;
} pc_output_settings;

/* The outputs of a second picture (the unstitched cameras, a virtual
 * camera): entries as in the top-level outputs list. */
typedef struct pc_output_list {
    int count;
    pc_output_settings item[PC_MAX_PICTURE_OUTPUTS];
} pc_output_list;

/* panorama = { ... }: the stitched picture, from a Hugin project.
 * The panorama exists when rig is given and enabled is true; it is then
 * the picture of the top-level outputs. Without it (no rig, or enabled =
 * false) the top-level outputs get the unstitched cameras in
 * encode.layout, as before; a rig with enabled = false still serves the
 * virtual cameras. */
typedef struct pc_panorama_settings {
    char rig[PC_PATH_LEN];     /* Hugin project (.pto); "" = no rig */
    int enabled;               /* stitch where a rig is given */
    int blend;                 /* pc_render_blend */
    int sampler;               /* pc_render_sampler */
    int gain_compensation;     /* gains measured on the overlaps (on top of the .pto's photometry) */
    double gain_smoothing_s;   /* time constant of those gains' filter */
    int width;                 /* 0 = the .pto's output size (its crop); else this width, same
                                * field of view; either capped to the encoder
                                * (pc_settings_panorama_size in settings_rig.h) */
    pc_output_list unstitched; /* key unstitched_outputs: a second picture of the
                                * cameras in encode.layout, for recording */
    /* Bookkeeping: */
    uint64_t rig_digest;       /* FNV-1a of the .pto's bytes when it was loaded
                                * (pc_settings_stamp_rig); 0 = not read. A reload
                                * sees a rewritten file at the same path by it */
    int line;
} pc_panorama_settings;

/* One named pose of a virtual camera (control: preset NAME). */
typedef struct pc_vcam_preset {
    char name[PC_NAME_LEN];
    double pan, tilt;          /* degrees */
    double hfov;               /* degrees; 0 = keep the view's */
    int line;
    uint32_t set_mask;
} pc_vcam_preset;

typedef struct pc_preset_list {
    int count;
    pc_vcam_preset item[PC_MAX_PRESETS];
} pc_preset_list;

/* virtual_cameras = ( { ... }, ... ): a perspective view of the rig,
 * rendered from the cameras and encoded to its own outputs (codec, encoder,
 * preset and GOP from encode; bitrate its own). The motion limits and the
 * follow parameters are vcam/'s (pc_settings_vcam_limits and
 * pc_settings_vcam_follow in settings_rig.h fill vcam.h's structs). */
typedef struct pc_vcam_settings {
    char name[PC_NAME_LEN];    /* unique; control and HTTP address the view by it */
    int width, height;         /* even, within the encoder's sides */
    double pan, tilt, hfov;    /* the initial pose, degrees (clamped to the rig's coverage) */
    int mode;                  /* pc_vcam_mode */
    int sampler;               /* pc_render_sampler */
    pc_output_list outputs;
    int64_t bitrate;           /* bits per second */
    pc_preset_list presets;
    /* motion (vcam.h pc_vcam_limits) */
    double max_speed, max_accel;           /* pan/tilt: deg/s, deg/s^2 */
    double max_zoom_speed, max_zoom_accel; /* hfov: deg/s, deg/s^2 */
    double response_s;                     /* the follower's time constant */
    double min_hfov, max_hfov;             /* the zoom range an operator may use */
    /* follow mode (follow.h pc_follow_params) */
    double follow_dead_zone;   /* fraction of the view's width */
    double follow_lead_s;      /* lead room: seconds of the play's motion */
    double follow_lead_max;    /* fraction of the view's width */
    double follow_smoothing_s; /* time constant of the target's smoothing */
    double follow_zoom_margin; /* hfov = spread * (1 + 2 margin) */
    double follow_min_hfov, follow_max_hfov; /* the zoom range of the follow mode */
    double follow_tilt_offset; /* degrees added to the target's tilt */
    /* Bookkeeping: */
    int line;
    uint32_t set_mask;
} pc_vcam_settings;

typedef struct pc_daemon_settings {
    double stats_interval_s;   /* status line period, 0 = off */
    double stats_window_s;     /* sliding window of the latency percentiles */
    double budget_ms;          /* per-frame latency budget, 0 = one frame period */
    int log_level;             /* PC_LOG_ERR .. PC_LOG_DEBUG (common/log.h) */
    char control[PC_PATH_LEN]; /* control socket path, "" = off */
    int64_t frames;            /* stop after N frame sets, 0 = run until stopped */
    double duration_s;         /* stop after S seconds, 0 = run until stopped */
    char snapshot[PC_PATH_LEN];/* a PNG of the first frame set here (what the stream shows) */
    char record_raw[PC_PATH_LEN]; /* record raw Bayer frame sets here */
    int watchdog;              /* ping the systemd watchdog when asked to */
    char metrics_listen[PC_NAME_LEN * 2]; /* HTTP metrics "host:port" / "[v6]:port", "" = off */
    char http_listen[PC_NAME_LEN * 2]; /* web page + JSON API "host:port", "" = off */
    char http_token_file[PC_PATH_LEN]; /* token of state-changing web requests, "" = none (read-only) */
    pc_name_list http_allowed_hosts; /* Host names the web page answers besides the machine's own */
    char snapshot_dir[PC_PATH_LEN]; /* control `snapshot` writes only in here, "" = refused */
    char capture_cpus[PC_NAME_LEN]; /* CPU list for the capture threads ("0-3"), "" = any */
    int line;
} pc_daemon_settings;

typedef struct pc_settings {
    pc_capture_settings capture;
    pc_camera_settings cameras[PC_MAX_CAMERAS]; /* [0 .. capture.cameras-1] in use */
    int cameras_listed;        /* entries given by the file's cameras list */
    pc_debayer_settings debayer;
    pc_encode_settings encode;
    pc_panorama_settings panorama;
    int output_count;
    pc_output_settings outputs[PC_MAX_OUTPUTS];
    int vcam_count;            /* virtual_cameras: entries in use */
    pc_vcam_settings vcams[PC_MAX_VCAMS];
    pc_daemon_settings daemon;
    char config_file[PC_PATH_LEN]; /* file loaded last, "" = embedded defaults */
} pc_settings;

/* --- diagnostics ------------------------------------------------------ */

#define PC_DIAG_MAX 64
enum { PC_DIAG_ERROR = 0, PC_DIAG_WARNING = 1 };

typedef struct pc_diag_item {
    int severity;
    char file[PC_PATH_LEN];    /* "" when not from a file ("command line" for options) */
    int line;                  /* 0 = no line */
    char key[96];              /* "debayer.algo", "cameras[2].width", "--fps", or "" */
    char msg[512];
} pc_diag_item;

typedef struct pc_diag {
    int errors, warnings;
    int count;                 /* items stored (at most PC_DIAG_MAX) */
    int lost;                  /* items not stored because the array was full */
    pc_diag_item item[PC_DIAG_MAX];
} pc_diag;

/* The line of a list entry (an output, a virtual camera) that only the
 * command line made (-s virtual_cameras[0].hfov=40 with a file that has
 * no virtual_cameras[0], also at a reload): pc_diag_add names the command
 * line for it, not the file. */
#define PC_LINE_CMDLINE (-1)

void pc_diag_init(pc_diag *d);
/* line PC_LINE_CMDLINE: the item is the command line's (file "command
 * line", the message says the file has no such entry). */
void pc_diag_add(pc_diag *d, int severity, const char *file, int line, const char *key,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* "file:line: error: key: msg" or "file:line: warning: key: msg". */
void pc_diag_format(const pc_diag_item *it, char *buf, size_t len);
/* One line per item, then "N more not shown" if some were lost. */
void pc_diag_print(const pc_diag *d, FILE *f);

/* --- the settings ----------------------------------------------------- */

/* Embedded defaults: 5 fake cameras 2040x1080 RGGB at 50 fps, algorithm
 * "edge", HEVC with fallback libx264/libx265/libsvtav1, output panocap.ts. */
void pc_settings_defaults(pc_settings *s);

/* Reads a libconfig file on top of s. Returns 0, or -1 with every problem
 * added to diag (syntax, unknown keys, wrong types, out-of-range values,
 * unknown names). Calls pc_settings_finish. Without libconfig in the build
 * it fails with a "built without libconfig" error. */
int pc_settings_load(pc_settings *s, const char *path, pc_diag *diag);

/* Sets one setting from text, as the command line does:
 *   "debayer.algo" "edge", "capture.width" "2048" (the camera default),
 *   "cameras[1].exposure" "800", "encode.bitrate" "20M",
 *   "encode.fallback" "libx264,libx265".
 * Returns 0, or -1 with a message naming the key and what is allowed.
 * Outputs are not set this way (see pc_settings_set_outputs). */
int pc_settings_set(pc_settings *s, const char *key, const char *value,
                    char *err, size_t errlen);

/* Replaces the output list by urls[0..n-1] (options empty). */
int pc_settings_set_outputs(pc_settings *s, const char *const *urls, int n,
                            char *err, size_t errlen);

/* Resolves derived values: camera entries take every key they did not set
 * from capture.camera, slab defaults to the list position. Idempotent;
 * call after changing capture.* defaults. */
void pc_settings_finish(pc_settings *s);

/* Cross-field checks: camera identities (gige needs address or serial, no
 * duplicates), slab order a permutation, equal widths, panorama size,
 * h264 on NVENC limited to 4096, outputs present and distinct, variant
 * supported by the algorithm, backend built in, budget against fps...
 * Returns 0 or -1; warnings do not fail. */
int pc_settings_validate(const pc_settings *s, pc_diag *diag);
/* A virtual camera's or a preset's name: letters, digits, '-', '_', '.',
 * 1 .. PC_NAME_LEN - 1 of them (control commands, HTTP paths and metrics
 * labels carry it as it is). */
int pc_settings_name_ok(const char *name);

/* Derived values the pipeline uses. */
/* 1 when the top-level outputs get the stitched panorama (a rig, enabled). */
int pc_settings_stitching(const pc_settings *s);
/* The unstitched picture (the cameras stacked; encode.layout then makes
 * stacked, grid or bands of it): what the outputs get without a panorama,
 * and the unstitched_outputs with one. The panorama's own size comes
 * from the rig (settings_rig.h). */
int pc_settings_panorama_width(const pc_settings *s);
int pc_settings_panorama_height(const pc_settings *s);
double pc_settings_budget_ms(const pc_settings *s); /* budget_ms, or 1000/fps */
/* The learned demosaic's weights file: debayer.net_weights, or the
 * installed one (kernels/net.h pc_net_default_path). */
const char *pc_settings_net_weights(const pc_settings *s);
/* The camera whose slab is `slab`, or -1. */
int pc_settings_camera_for_slab(const pc_settings *s, int slab);

/* --- reload ----------------------------------------------------------- */

/* What a reload may apply live; everything else needs a restart. */
enum {
    PC_LIVE_ALGO = 1u << 0,
    PC_LIVE_VARIANT = 1u << 1,
    PC_LIVE_BITRATE = 1u << 2,
    PC_LIVE_OUTPUTS = 1u << 3,
    PC_LIVE_LOG_LEVEL = 1u << 4,
    PC_LIVE_COLOUR = 1u << 5,     /* black level, gains, matrix, transfer */
    PC_LIVE_RIG = 1u << 6,        /* panorama.rig: another .pto, or the file rewritten
                                   * (between two rigs; adding or removing the rig
                                   * needs a restart) */
    PC_LIVE_BLEND = 1u << 7,      /* panorama.blend, gain_compensation, gain_smoothing */
    PC_LIVE_VCAM = 1u << 8,       /* a virtual camera's pose, mode, presets, motion
                                   * limits, follow parameters (same list of views) */
};

#define PC_DIFF_MAX 32
typedef struct pc_settings_change {
    char key[96];
    char before[128], after[128];
    int live; /* 1: can be applied live, 0: needs a restart */
} pc_settings_change;

typedef struct pc_settings_delta {
    unsigned live;      /* PC_LIVE_* of the live settings that changed */
    int restart;        /* number of changed settings that need a restart */
    int changes;        /* number of changed settings (items may hold fewer) */
    int count;          /* items stored */
    pc_settings_change item[PC_DIFF_MAX];
} pc_settings_delta;

/* Compares old and new. Returns the number of changed settings. */
int pc_settings_diff(const pc_settings *old_s, const pc_settings *new_s, pc_settings_delta *out);
/* Copies into cur exactly the live settings of next (algorithm, variant,
 * bitrate, outputs, log level); everything needing a restart keeps cur's
 * value, so cur stays the truth of what runs. */
void pc_settings_apply_live(pc_settings *cur, const pc_settings *next);
/* "debayer.algo edge -> bilinear (live); capture.fps 50 -> 25 (needs restart)" */
void pc_settings_diff_describe(const pc_settings_delta *d, char *buf, size_t len);

/* --- documentation from the key table -------------------------------- */

/* Writes s as a complete libconfig file (every key, effective values); it
 * loads back to the same settings. */
int pc_settings_write(const pc_settings *s, FILE *f);
/* Every section and key: type, default, allowed values, unit, help. */
void pc_settings_print_reference(FILE *f);

/* Key metadata for tools and the CLI: the number of keys and their full
 * names ("capture.fps", "camera.width" for per-camera keys,
 * "output.url"). */
int pc_settings_key_count(void);
const char *pc_settings_key_name(int i, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
/* encode.layout resolved (config/settings_layout.c): the pictures the
 * encoder(s) get. */
typedef struct pc_layout_plan {
    pc_layout layout;   /* PC_LAYOUT_STACKED, _GRID or _BANDS (never AUTO) */
    int bands;          /* pictures (1 for stacked and grid) */
    int width, height;  /* of each picture (a grid: the whole grid's) */
    int grid_cols, grid_rows; /* grid: camera tiles across and down; else 0 */
    char why[320];      /* for the log: what was chosen and why */
} pc_layout_plan;

/* Resolves e->layout/bands/grid for ncam cameras of width x slab_h pixels.
 * nvenc: 1 when NVENC will encode, 0 a software encoder, -1 unknown (a
 * forced encoder name decides; else the software rule). cores: CPU cores
 * (software encoders). auto: software encoders get one-camera bands (each
 * encoder max(1, cores / cameras) threads); NVENC the stacked picture if
 * it fits, else a grid if one fits, else bands. Layout bands with
 * bands = 0 counts them by the same rule (software: one camera each, or
 * one band for a small panorama; NVENC: the fewest inside its limit).
 * Every picture is within the encoder's size limits (encode_limits.h:
 * PC_ENCODE_MIN_SIDE..PC_ENCODE_MAX_SIDE). Bad combinations (bands
 * not dividing the cameras, a grid that is not the cameras, a picture
 * over the encoder's limit) are errors naming the limit and what would
 * fit. */
int pc_layout_resolve(const pc_encode_settings *e, int ncam, int width, int slab_h, int nvenc, int cores,
                      pc_layout_plan *out, char *err, size_t n);

/* The largest picture side the encoder of e takes: NVENC HEVC 8192 and
 * NVENC H.264 4096 (nvenc 1, or an "_nvenc" encoder named), else
 * libavcodec's software encoders' PC_ENCODE_MAX_SIDE (nvenc 0 or -1 with
 * encoder "auto": where NVENC is not known to open). *name (may be NULL)
 * says whose limit it is. */
int pc_encoder_side_limit(const pc_encode_settings *e, int nvenc, const char **name);

#endif
