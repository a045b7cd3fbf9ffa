/* encode_internal.h - what the encoder, the outputs and the FFmpeg log
 * routing share inside encode/. Not installed, not for other modules. */
#ifndef PANOCAP_ENCODE_INTERNAL_H
#define PANOCAP_ENCODE_INTERNAL_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "encode.h"

/* --- FFmpeg log routing (avlog.c) ---------------------------------------
 * Installs (once) an av_log callback. On a thread that called
 * pc_avlog_bind, FFmpeg's lines go to that pc_logger; between
 * capture_start/stop they go to the logger at debug level only and the
 * error-level lines are collected (joined by "; ") for an error message. */
void pc_avlog_install(void);
void pc_avlog_bind(const pc_logger *lg);
void pc_avlog_capture_start(char *buf, size_t n);
void pc_avlog_capture_stop(void);
/* On this thread, while on: FFmpeg's error and warning lines go to debug
 * (an output that keeps failing has said why once; libavformat would say
 * it again on every retry). */
void pc_avlog_quiet(int on);
/* This thread's FFmpeg lines with url's secrets (an RTMP stream key, a
 * password) masked (pc_url_redact); NULL: none. url must outlive the thread's
 * binding. */
void pc_avlog_redact(const char *url);

/* --- CUDA device context on the caller's CUcontext (hwcuda.c) ----------- */
/* PC_ENOTSUP when panocap was built without CUDA. */
int pc_enc_cuda_device(AVBufferRef **out, void *cuda_ctx, void *cuda_stream,
                       char *err, size_t n);

/* --- outputs (outputs.c) ------------------------------------------------ */
typedef struct pc_out pc_out;

/* What an output needs from its encoder, copied at open. */
typedef struct pc_out_env {
    const AVCodecParameters *par; /* copied */
    AVRational enc_tb;            /* packet timestamps' time base */
    AVRational fps;
    const char *encoder_name;
    const pc_logger *log;
    void (*request_idr)(void *enc);
    void *enc;
    pc_written_cb on_written;
    pc_output_fault_cb on_fault;
    void *cb_user;
} pc_out_env;

/* Checks the output config (scheme, container, codec fits the container)
 * without opening anything; the message names the output and setting. */
int pc_out_check(int index, const pc_output_config *oc, enum AVCodecID codec,
                 char *err, size_t n);
/* Opens the output (files, UDP, HLS now; SRT in its thread) and starts its
 * thread. */
int pc_out_open(pc_out **o, int index, const pc_output_config *oc,
                const pc_out_env *env, char *err, size_t n);
/* The same with nstreams video streams, one per encoder: env[i] is stream
 * i's (its par, enc and cb_user; the rest is taken from env[0]). */
#define PC_OUT_MAX_STREAMS PC_MUX_MAX_STREAMS
int pc_out_open_streams(pc_out **o, int index, const pc_output_config *oc,
                        const pc_out_env *env, int nstreams, char *err, size_t n);
/* Queues a reference to pkt (timestamps in env->enc_tb). Never blocks:
 * drops and counts when the output is down or its queue is full. */
void pc_out_push(pc_out *o, const AVPacket *pkt, int64_t pts_ns);
void pc_out_push_stream(pc_out *o, int stream, const AVPacket *pkt, int64_t pts_ns);
/* Stream `stream`'s encoder is going: no more IDR requests to it. */
void pc_out_detach(pc_out *o, int stream);

/* --- outputs shared by several encoders (mux.c) ------------------------- */
/* Called by pc_encoder_open with cfg->mux: records stream `stream`'s env;
 * the last stream to attach opens the outputs (its error is returned). */
int pc_mux_attach(pc_mux *m, int stream, const pc_out_env *env, char *err, size_t n);
void pc_mux_detach(pc_mux *m, int stream);
void pc_mux_push(pc_mux *m, int stream, const AVPacket *pkt, int64_t pts_ns);
/* The outputs' figures (0 before they open). */
int pc_mux_stats(pc_mux *m, pc_output_stats *st);
/* Drains, writes the trailer, joins the thread (aborting IO after
 * timeout_ms), frees. */
void pc_out_close(pc_out *o, int timeout_ms);
void pc_out_stats(pc_out *o, pc_output_stats *st);

#endif
