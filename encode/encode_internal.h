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
/* Queues a reference to pkt (timestamps in env->enc_tb). Never blocks:
 * drops and counts when the output is down or its queue is full. */
void pc_out_push(pc_out *o, const AVPacket *pkt, int64_t pts_ns);
/* Drains, writes the trailer, joins the thread (aborting IO after
 * timeout_ms), frees. */
void pc_out_close(pc_out *o, int timeout_ms);
void pc_out_stats(pc_out *o, pc_output_stats *st);

#endif
