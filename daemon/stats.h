/* stats.h - per-frame latency accounting, counters and their reports.
 *
 * Per frame set the pipeline records timestamps (CLOCK_MONOTONIC ns, as
 * pc_now_ns) at: frame set complete (last slab arrived or deadline),
 * debayer start, NV12 ready, packet out of the encoder, and written to each
 * output. From them come the stage latencies
 *   queue   = start  - complete      debayer = nv12 - start
 *   encode  = packet - nv12          write[o] = written[o] - packet (or
 *                                             o's own picture's packet)
 *   total   = last written (else packet, else nv12) - complete
 * kept exactly over a sliding window (p50/p99/max/mean, nearest-rank
 * percentiles) and approximately over the whole run (log-linear histogram,
 * 3 % resolution; max exact). A frame whose total exceeds the budget is
 * counted as over budget.
 *
 * Outputs are slots: the pipeline gives each encoded picture (the main
 * one, a virtual camera, the unstitched cameras) a range of them, so an
 * output's index (its write[o] latency, its counters, its "output" label)
 * stays the same across reloads; every output and picture figure carries
 * its picture's name where one was set.
 *
 * All recording calls are thread-safe (one mutex, held for a few stores;
 * no allocation after pc_stats_open). Snapshots copy the window under the
 * mutex and sort outside it.
 */
#ifndef PANOCAP_STATS_H
#define PANOCAP_STATS_H

#include "log.h"
#include "settings.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PC_STATS_MAX_OUTPUTS 80 /* output slots: PC_MAX_OUTPUTS for each of 10 pictures (pipeline_step.h PL_MAX_PICTURES) */
#define PC_STATS_MAX_PICTURES 10 /* pictures (pipeline_step.h PL_MAX_PICTURES) */
#define PC_STATS_NAME (PC_NAME_LEN + 8) /* a picture's name, with its NUL ("vcam:" + a name) */

/* Latency slots: fixed stages, then one write slot per output. */
enum {
    PC_STAT_QUEUE = 0,
    PC_STAT_DEBAYER,
    PC_STAT_ENCODE,
    PC_STAT_TOTAL,
    PC_STAT_WRITE0,                          /* + output index */
    PC_STAT_SLOTS = PC_STAT_WRITE0 + PC_STATS_MAX_OUTPUTS,
};
/* "queue", "debayer", "encode", "total", "write". */
const char *pc_stats_slot_name(int slot);

typedef struct pc_frame_times {
    int64_t complete_ns;                 /* frame set complete (required) */
    int64_t start_ns;                    /* debayer start, 0 = unknown */
    int64_t nv12_ns;                     /* NV12 ready, 0 = unknown */
    int64_t packet_ns;                   /* packet out of the encoder, 0 = none */
    int64_t written_ns[PC_STATS_MAX_OUTPUTS]; /* 0 = not written to that output */
    /* the packet output o wrote came out at (its own picture's, where a
     * set has several pictures encoded apart); 0 = packet_ns */
    int64_t out_packet_ns[PC_STATS_MAX_OUTPUTS];
    size_t packet_bytes;                 /* encoded size of this frame */
} pc_frame_times;

typedef struct pc_stats_config {
    double fps;           /* expected frame rate (sizes the window) */
    double budget_ms;     /* per-frame budget (pc_settings_budget_ms) */
    double window_s;      /* sliding window, e.g. 10 */
    int outputs;          /* output slots (<= PC_STATS_MAX_OUTPUTS): their latencies are kept */
    const char *output_names[PC_STATS_MAX_OUTPUTS]; /* labels (URLs); copied; NULL or "": not in use */
} pc_stats_config;

typedef struct pc_stats pc_stats;

int pc_stats_open(pc_stats **out, const pc_stats_config *cfg, char *err, size_t errlen);
void pc_stats_close(pc_stats *s);

/* Labels shown in the status line and metrics; callable any time. */
void pc_stats_set_algo(pc_stats *s, const char *algo, const char *variant);
/* The encoder layout, for the status line and the metrics. */
void pc_stats_set_layout(pc_stats *s, const char *layout, int bands);
void pc_stats_set_outputs(pc_stats *s, int outputs, const char *const *names);
/* Picture pic (< PC_STATS_MAX_PICTURES; 0 the main one) of the pipeline:
 * its name and size for the labels, and its outputs: slots [first,
 * first + n) named names[] (URLs; counters of a slot whose name changed
 * start at 0), slots [first + n, first + cap) not in use. Slots must lie
 * within the configured ones (pc_stats_config.outputs). */
void pc_stats_set_picture(pc_stats *s, int pic, const char *name, int width, int height);
void pc_stats_set_picture_outputs(pc_stats *s, int pic, int first, int n, int cap, const char *const *names);
/* Its encoder ("libx264"; "" none) and its encoders encoding now of all
 * (bands: one each; a failed one stops encoding). */
void pc_stats_picture_encoders(pc_stats *s, int pic, const char *encoder, int encoding, int encoders);

/* --- recording (any thread) ------------------------------------------ */
/* A frame set was assembled; substituted_slabs of its slabs were filled
 * from an earlier frame (or grey) because a camera missed the deadline. */
void pc_stats_frame_in(pc_stats *s, int substituted_slabs);
/* n whole frame sets dropped because a later stage fell behind. */
void pc_stats_dropped(pc_stats *s, int n);
/* A frame set went through the encoder: latencies, budget, bytes. */
void pc_stats_frame_done(pc_stats *s, const pc_frame_times *t);
/* The same in parts, for a caller that learns them at different times:
 * a frame's packet came out of the encoder (counted encoded, its bytes);
 * output o wrote a packet; and, once the frame's times are complete, its
 * latencies and budget (pc_stats_frame_done = all three for one frame). */
void pc_stats_frame_encoded(pc_stats *s, size_t bytes);
void pc_stats_output_written(pc_stats *s, int output);
void pc_stats_frame_latency(pc_stats *s, const pc_frame_times *t);
/* Output o dropped n packets (failed or too slow), or failed once. */
void pc_stats_output_dropped(pc_stats *s, int output, int n);
void pc_stats_output_error(pc_stats *s, int output);
/* A packet of picture pic came out of one of its encoders (bytes); frame:
 * it is the picture's frame (its first band's packet). */
void pc_stats_picture_packet(pc_stats *s, int pic, int frame, size_t bytes);
/* One of picture pic's encoders failed: did not open, or failed on a frame. */
void pc_stats_picture_failure(pc_stats *s, int pic);
/* Picture pic's sets dropped from its recordings (its recording queue
 * full) and skipped by its live encoders (busy); pic -1: the preview's
 * skipped sets. */
void pc_stats_picture_sets(pc_stats *s, int pic, int rec_dropped, int live_skipped);
/* One of picture pic's encoders took ms for a frame (submit -> packet):
 * its moving mean, against the frame period, is the picture's encoder
 * load (1 = no headroom left). */
void pc_stats_picture_encode_ms(pc_stats *s, int pic, double ms);
/* Picture pic's encoder load (NaN before its first frame) and its mean
 * encode time in *ms. */
double pc_stats_picture_load(pc_stats *s, int pic, double *ms);

/* --- reading --------------------------------------------------------- */
typedef struct pc_stage_stats {
    uint64_t count;               /* samples in the window */
    double p50_ms, p99_ms, max_ms, mean_ms;  /* window, exact */
    uint64_t run_count;           /* samples over the whole run */
    double run_p50_ms, run_p99_ms;/* whole run, from the histogram */
    double run_max_ms;            /* whole run, exact */
    double run_sum_s;             /* whole run, for Prometheus _sum */
} pc_stage_stats;

typedef struct pc_stats_snapshot {
    double uptime_s;
    uint64_t frames_in, encoded, dropped, substituted, substituted_slabs;
    uint64_t over_budget;
    uint64_t window_frames, window_over_budget;
    double window_s;
    double fps;                   /* frames done per second over the window */
    double bitrate_bps;           /* encoded bits per second over the window */
    uint64_t bytes_total;
    double budget_ms;
    char algo[32], variant[16];
    char layout[16];              /* "stacked", "bands"; "" = not set */
    int bands;
    int outputs;                  /* output slots; those with an empty name are not in use */
    char output_name[PC_STATS_MAX_OUTPUTS][128];
    char output_picture[PC_STATS_MAX_OUTPUTS][PC_STATS_NAME]; /* "" = none set */
    uint64_t output_written[PC_STATS_MAX_OUTPUTS], output_dropped[PC_STATS_MAX_OUTPUTS],
        output_errors[PC_STATS_MAX_OUTPUTS];
    pc_stage_stats stage[PC_STAT_SLOTS];
    int pictures;                 /* pictures set (pc_stats_set_picture) */
    struct pc_picture_stats {
        char name[PC_STATS_NAME], encoder[PC_STATS_NAME];
        int width, height;
        int encoding, encoders;   /* encoders encoding now / all */
        uint64_t frames, bytes, failures;
        uint64_t rec_dropped, live_skipped;
        double encode_ms;         /* mean encode time per frame of one of its encoders (recent) */
        double encode_load;       /* encode_ms / frame period (NaN: none yet) */
    } picture[PC_STATS_MAX_PICTURES];
    uint64_t rec_dropped;         /* all pictures' */
    uint64_t preview_skipped;
} pc_stats_snapshot;

void pc_stats_snapshot_get(pc_stats *s, pc_stats_snapshot *out);

/* One status line: algorithm, fps, counters, p99 per stage, bitrate. */
int pc_stats_format_line(const pc_stats_snapshot *snap, char *buf, size_t len);
/* Multi-line final summary: counters and latency percentiles per stage. */
int pc_stats_format_summary(const pc_stats_snapshot *snap, char *buf, size_t len);

/* Per-camera counters the pipeline fills from the capture module. */
typedef struct pc_camera_metrics {
    const char *name;             /* label, e.g. "cam0" or the configured name */
    const char *serial;           /* may be NULL */
    uint64_t frames;              /* complete frames received */
    uint64_t timeouts, missing_packets, size_mismatch, other_failures; /* failed buffers by status */
    uint64_t packets_missing;     /* image-data packets that never arrived (pc_camera_stats) */
    uint64_t packets_resent;      /* arrived after a resend request */
    uint64_t resend_requests;     /* packets asked for again */
    uint64_t packets_after_gap;   /* Aravis's n_missing_packets (from a frame's first gap to its end) */
    uint64_t substituted;         /* slabs substituted for this camera */
    uint64_t repaired;            /* incomplete frames used, missing lines from the previous frame */
    uint64_t reconnects;
    int connected;                /* 1 / 0 */
    double last_frame_age_s;      /* < 0: no frame yet */
} pc_camera_metrics;

/* Prometheus text exposition (format 0.0.4). Returns the length, or -1 when
 * buf is too small (buf then holds a truncated, unterminated-line text). */
int pc_stats_format_prometheus(const pc_stats_snapshot *snap, const pc_camera_metrics *cams, int ncams,
                               char *buf, size_t len);

/* Shows a status line: on a terminal "\r<line>\e[K" to stream (no newline,
 * updated in place); otherwise a log line at info level. */
void pc_stats_print_status(const char *line, int tty, FILE *stream, const pc_logger *lg);

#ifdef __cplusplus
}
#endif
#endif
