/* encode.h - panocap's encoder and live outputs (libavcodec + libavformat).
 *
 * One pc_encoder takes NV12 (or I420) pictures of a fixed size, encodes
 * them (NVENC zero-copy from CUDA memory when it can, else a software
 * encoder from a fallback list) and fans the packets out to one or more
 * outputs: recording files (.ts by default, .mkv/.mp4, segmented by time),
 * MPEG-TS over UDP, SRT, HLS, or 'null'.
 *
 * Threads: pc_encoder_frame/submit/flush are called from ONE thread (the
 * daemon's encoder thread). request_idr, set_bitrate and stats may be called
 * from any thread. Every output except 'null' has its own thread and a
 * bounded packet queue: a slow or failed output drops (and counts) its
 * packets, is retried with backoff, and never blocks the encoder or the
 * other outputs.
 *
 * FFmpeg's own log lines: the library installs an av_log callback that
 * sends lines logged from its threads to the encoder's pc_logger (level
 * mapped, filtered by av_log_get_level()); lines from other threads go to
 * FFmpeg's default callback as before.
 *
 * Errors: functions return 0 or a negative PC_E* code (kernels/debayer.h)
 * and write a message naming the setting, the output or the library call
 * into err (n bytes, always NUL-terminated when n > 0; err may be NULL).
 */
#ifndef PANOCAP_ENCODE_H
#define PANOCAP_ENCODE_H

#include <stdint.h>
#include <stdio.h>

#include "picture.h" /* pc_picture, pc_matrix, pc_range, PC_E* codes */
#include "encode_limits.h"
#include "enums.h"   /* pc_codec */
#include "log.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_ENCODE_MAX_OUTPUTS 8
#define PC_ENCODE_MAX_FALLBACKS 8


/* One output. Strings are copied by pc_encoder_open. */
typedef struct pc_output_config {
    /* A path (recording; container from the extension, none = .ts),
     * "udp://host:port", "srt://host:port", "x.m3u8" (HLS) or "null".
     * With segment_seconds > 0 the path may hold strftime conversions
     * (e.g. "/rec/pano-%Y%m%d-%H%M%S.ts"); without any, "-%Y%m%d-%H%M%S"
     * is inserted before the extension. Times are local wall time. */
    const char *url;
    const char *format;     /* NULL: from the URL; else "mpegts", "matroska", "mp4", "hls" */
    int segment_seconds;    /* > 0: a new recording file every N s (cut at a keyframe) */
    int hls_time;           /* HLS segment duration in s (0 = 2) */
    int hls_list_size;      /* HLS playlist entries (0 = keep all, the whole run) */
    int pkt_size;           /* UDP/SRT datagram payload (0 = 1316 = 7 TS packets) */
    const char *srt_mode;   /* "caller" (default) or "listener"; also as ?mode= in the URL */
    const char *srt_passphrase; /* NULL: none (10..79 characters otherwise) */
    int srt_latency_ms;     /* SRT receiver latency (0 = libsrt's default, 120 ms) */
    int queue_packets;      /* bounded queue (0 = 256 packets) */
    /* libavformat options "key=value,key=value", applied last (they win
     * over the fields above): keys of the URL's protocol (udp: pkt_size,
     * srt: passphrase, mode, latency, ...) go to the connection, the rest
     * to the muxer (hls_time, hls_list_size, ...) or the format context.
     * A key none of them knows is an error (pc_output_check). */
    const char *options;
    /* Retention of segmented recordings (segment_seconds > 0; 0 = no
     * limit): closed segments of this output (its folder, names with the
     * pattern's prefix and extension) are deleted oldest first while they
     * take more than max_bytes, are older than max_age_s, or the file
     * system has less than min_free bytes free. The open segment is never
     * deleted; each deletion is logged and counted. */
    int64_t max_bytes, max_age_s, min_free;
} pc_output_config;

/* Per packet that leaves the encoder (called on the encoder thread). */
typedef struct pc_packet_info {
    int64_t pts_ns;       /* capture timestamp given to pc_encoder_submit */
    int64_t submit_ns;    /* pc_now_ns() when the frame was submitted */
    int64_t out_ns;       /* pc_now_ns() when the packet came out of the encoder */
    int size;             /* bytes */
    int keyframe;
} pc_packet_info;

typedef void (*pc_packet_cb)(void *user, const pc_packet_info *info);
/* Per packet written by an output (called on that output's thread). */
typedef void (*pc_written_cb)(void *user, int output, int64_t pts_ns, int64_t written_ns);
/* An output fault (called on the encoder thread or that output's thread,
 * with none of the caller's locks held): dropped packets not written
 * (output down, queue full or flushed after a failure), errors failed
 * opens/writes. The sums equal pc_output_stats' packets_dropped/failures. */
typedef void (*pc_output_fault_cb)(void *user, int output, int dropped, int errors);

typedef struct pc_encode_config {
    int width, height;        /* even; the whole panorama, e.g. 2040x5400 */
    int fps_num, fps_den;     /* nominal frame rate, e.g. 50/1 */
    /* NULL or "auto": NVENC (codec below) when available, else the first
     * fallback that opens. Any other name forces that encoder. */
    const char *encoder;
    /* Software fallbacks in order; NULL = libx264, libx265, libsvtav1. */
    const char *fallbacks[PC_ENCODE_MAX_FALLBACKS];
    pc_codec codec;           /* for NVENC: HEVC (default) or H.264 */
    int64_t bitrate;          /* bit/s, CBR; 0 = error (must be set) */
    int vbv_ms;               /* rate-control buffer in ms of bitrate (0 = 500) */
    int gop;                  /* frames between keyframes (0 = 2 s of frames) */
    const char *preset;       /* NULL: encoder's low-latency default (p2, ultrafast, 12) */
    int threads;              /* software encoder threads (0 = encoder decides) */
    /* libx264 threading. 0 (and the default, -1) = sliced threads, as tune
     * zerolatency sets them: each frame is out before the next comes in.
     * 1 = frame threads: at 2040x5400 on 16 cores about as fast (80-100
     * fps) but every thread holds a frame, so at 50 fps each packet leaves
     * hundreds of ms late (BENCHMARKS.md, Encoder). Frame threads only pay
     * on few cores, where neither reaches 50 fps. */
    int frame_threads;
    /* Extra options "key=value:key=value" set last on the codec context or
     * its private options, e.g. "refs=2:aq-mode=0". A value cannot hold ':'
     * and "x264-params=..." replaces the one panocap sets (sliced-threads). */
    const char *encoder_options;
    pc_matrix matrix;         /* signalled in the VUI (colour matrix) */
    pc_range range;           /* signalled in the VUI (video_full_range_flag) */
    /* CUDA: a CUcontext (and CUstream) owned by the caller, or NULL. When
     * set and NVENC opens, frames are AV_PIX_FMT_CUDA pool frames on that
     * context and NVENC works on that stream (zero copy). */
    void *cuda_ctx;
    void *cuda_stream;
    pc_output_config outputs[PC_ENCODE_MAX_OUTPUTS];
    int n_outputs;            /* 0 is allowed (encode only) */
    pc_packet_cb on_packet;   /* optional */
    pc_written_cb on_written; /* optional */
    pc_output_fault_cb on_output_fault; /* optional */
    void *cb_user;
    const pc_logger *log;     /* NULL: stderr */
    const char *label;        /* NULL, or e.g. "band 2": names this encoder in its log lines */
    /* Shared outputs (pc_mux_create): when set, outputs/n_outputs above
     * are ignored and this encoder's packets go to video stream
     * mux_stream of the mux's outputs. */
    struct pc_mux *mux;
    int mux_stream;
} pc_encode_config;

/* Outputs shared by several encoders, one video stream each (the bands of
 * the panorama muxed as K streams of every output: TS, MKV, MP4, HLS, UDP,
 * SRT). The outputs open when the last of the nstreams encoders opens
 * with cfg.mux (their codec parameters go into the header); every stream
 * shares the outputs' queue, thread, failure counting and retention. The
 * outputs' strings must stay valid until then. */
#define PC_MUX_MAX_STREAMS 16
typedef struct pc_mux pc_mux;
int pc_mux_create(pc_mux **m, int nstreams, const pc_output_config *outputs, int n_outputs,
                  char *err, size_t n);
/* After every encoder attached to it is closed: drains, writes trailers. */
void pc_mux_close(pc_mux *m);

/* Fills defaults: 50 fps, HEVC, 20 Mbit/s, BT.709 limited, auto encoder. */
void pc_encode_config_default(pc_encode_config *cfg);

typedef struct pc_encoder pc_encoder;

/* Validates cfg, opens the encoder (probing NVENC first when the encoder
 * is auto or an NVENC name: one log line says why it is not used and what
 * is used instead), and opens the outputs (files, UDP and HLS at once, so a
 * bad path is an error here; SRT in its thread, since a listener waits). */
int pc_encoder_open(pc_encoder **e, const pc_encode_config *cfg, char *err, size_t n);

/* The next writable picture, sized width x height. *on_device = 1: planes
 * are CUDA device pointers (NV12, pitch = linesize) on cfg->cuda_ctx;
 * 0: host memory in pic->fmt (NV12 for libx264/NVENC host, I420 for
 * libx265/libsvtav1, which take no NV12), to be filled before submit.
 * matrix/range are set from the config. */
int pc_encoder_frame(pc_encoder *e, pc_picture *pic, int *on_device, char *err, size_t n);

/* Encodes the picture from the last pc_encoder_frame. pts_ns: the frame
 * set's capture time (monotonic ns; the first one becomes pts 0; a value
 * not above the previous one is bumped and counted). force_idr: make this
 * frame an IDR keyframe. Packets go to the outputs' queues. */
int pc_encoder_submit(pc_encoder *e, int64_t pts_ns, int force_idr, char *err, size_t n);

/* Encodes a picture the caller owns, without copying it: host memory in
 * the format and size of pc_encoder_frame's pictures (any pitches; the
 * planes stay untouched until released). The encoder's frame references
 * the planes until the encoder is done with them, then calls
 * release(opaque) once -- from the thread calling submit/flush/close,
 * also when the submit fails. Only for host-frame encoders
 * (pc_encoder_zero_copy() == 0: PC_EINVAL otherwise, release called). Used
 * for pinned picture slots (GPU download) and the CPU backend's slots, and
 * for bands: a band is a pointer offset into the stacked picture. */
int pc_encoder_submit_picture(pc_encoder *e, const pc_picture *pic, void (*release)(void *),
                              void *opaque, int64_t pts_ns, int force_idr, char *err, size_t n);

/* Drains the encoder (remaining packets to the outputs). After this only
 * pc_encoder_close/stats/name are valid. */
int pc_encoder_flush(pc_encoder *e, char *err, size_t n);

/* Flushes if not yet done, lets each output write its queue and trailer
 * (.mkv/.mp4 finalised, HLS playlist ended; at most 5 s per output), stops
 * the threads and frees everything. NULL is a no-op. */
void pc_encoder_close(pc_encoder *e);

/* The next submitted frame becomes an IDR keyframe (thread-safe). */
void pc_encoder_request_idr(pc_encoder *e);

/* Changes the CBR bitrate from the next frame on when the encoder can do
 * it live (libx264, NVENC); PC_ENOTSUP with "needs a restart" otherwise. */
int pc_encoder_set_bitrate(pc_encoder *e, int64_t bitrate, char *err, size_t n);

const char *pc_encoder_name(const pc_encoder *e);   /* "libx264", "hevc_nvenc" ... */
const char *pc_encoder_codec(const pc_encoder *e);  /* "h264", "hevc", "av1" */
int pc_encoder_zero_copy(const pc_encoder *e);      /* 1 when frames are CUDA frames */

typedef enum pc_output_state {
    PC_OUT_CONNECTING = 0, /* not yet open (SRT listener waiting, retry pending) */
    PC_OUT_OK = 1,
    PC_OUT_FAILED = 2,     /* last open/write failed; retrying with backoff */
    PC_OUT_CLOSED = 3,
} pc_output_state;

typedef struct pc_output_stats {
    char url[256];             /* as configured (truncated) */
    pc_output_state state;
    uint64_t packets_written, packets_dropped, bytes_written;
    uint64_t reconnects;       /* successful re-opens after a failure */
    uint64_t failures;         /* failed opens and writes */
    uint64_t files;            /* files (segments) opened */
    uint64_t files_deleted, bytes_deleted; /* by retention */
    int waiting_space;         /* recording waits for free space / a writable folder */
    int64_t last_written_ns;   /* pc_now_ns() of the last write */
    int64_t last_pts_ns;       /* capture pts of the last packet written */
    char last_error[160];
    /* Recordings (files, HLS): where and how much, against the retention
     * limits (pc_output_config.max_bytes ...; 0 = none). */
    int recording;             /* 1: the fields below apply */
    char folder[256];          /* the recording's folder ("." when none is named) */
    int segment_seconds;
    int64_t max_bytes, max_age_s, min_free;
    /* Bytes and files of this output's segments: counted by the retention
     * scan at each new segment (outputs with a limit), plus what was
     * written since; -1 where no scan ran (no limit, or no segment yet). */
    int64_t used_bytes;
    int64_t segments;
} pc_output_stats;

typedef struct pc_encoder_stats {
    uint64_t frames_in, packets_out, bytes_out, keyframes;
    uint64_t pts_bumped;       /* non-increasing pts corrected */
    int64_t bitrate;           /* configured CBR bitrate now */
    int64_t last_pts_ns;       /* capture pts of the last packet out */
    int64_t last_out_ns;       /* pc_now_ns() when it came out */
    int64_t last_latency_ns;   /* submit -> packet out for that frame */
    int n_outputs;
    pc_output_stats outputs[PC_ENCODE_MAX_OUTPUTS];
} pc_encoder_stats;

void pc_encoder_stats_get(pc_encoder *e, pc_encoder_stats *st);

/* Writes one line per encoder panocap knows (NVENC, libx264, libx265,
 * libsvtav1): built into this FFmpeg or not, and whether it opens on this
 * machine (each is probed with a small frame; NVENC's reason when not).
 * Returns the number that open. */
int pc_encoder_list(FILE *out);
/* The same as "name (available), name (unavailable: why), ..." in buf. */
int pc_encoder_list_str(char *buf, size_t n);
/* 1 when encoder `name` opens on this machine (probed at 256x256 on host
 * frames, as pc_encoder_list does), else 0: the layout's automatic choice
 * asks whether NVENC will encode. */
int pc_encoder_opens(const char *name);

const char *pc_output_state_name(pc_output_state s);

/* Checks one output without opening anything or probing an encoder: URL
 * scheme and this FFmpeg's protocols, host and port of network URLs,
 * container, segment/HLS/packet limits and every key of oc->options
 * (known to the protocol, the muxer or libavformat). index names the
 * output in the message. 0 or PC_EINVAL. */
int pc_output_check(int index, const pc_output_config *oc, char *err, size_t n);

/* Checks an encoder name without opening it: "auto", or a video encoder
 * of this FFmpeg build; and a preset for it (NULL/"" = the default): one
 * of the encoder's named presets (NVENC p1..p7..., SVT-AV1 numbers, x264
 * and x265 ultrafast..placebo). "what" names the setting in the message.
 * 0 or PC_EINVAL. */
int pc_encoder_check_name(const char *what, const char *name, const char *preset, char *err, size_t n);

/* --- still JPEG pictures (the web page's live picture; jpeg.c) ---------
 * libavcodec's mjpeg encoder. One pc_jpeg per picture size is cheapest
 * (a new size reopens the encoder). Any thread, one at a time per pc_jpeg. */
typedef struct pc_jpeg pc_jpeg;
/* quality: mjpeg's qscale, 2 (best) .. 31. */
int pc_jpeg_open(pc_jpeg **j, int quality, char *err, size_t n);
/* pic: NV12 or I420 of any matrix and range (converted to JFIF's BT.601
 * full range), even sizes 16..16384. *data: the JPEG file, malloc'd (the
 * caller frees it). */
int pc_jpeg_encode(pc_jpeg *j, const pc_picture *pic, uint8_t **data, size_t *size, char *err, size_t n);
void pc_jpeg_close(pc_jpeg *j);

#ifdef __cplusplus
}
#endif
#endif
