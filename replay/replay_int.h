/* replay_int.h - private to replay/: the recording's decoder
 * (replay_decode.c) that the clip (replay_clip.c) reads frames from. */
#ifndef PANOCAP_REPLAY_INT_H
#define PANOCAP_REPLAY_INT_H

#include "replay.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

typedef struct rp_decoder {
    const char *const *inputs;
    int ninputs, file;
    AVFormatContext *fc;
    AVCodecContext *cc;
    int stream, eof, file_first;
    AVFrame *frame;   /* the last frame rp_decoder_next gave */
    AVPacket *pkt;
    AVRational fps;   /* the first file's */
    int w, h;
    double len_s;     /* the files' durations, as their containers say */
    double len0_s;    /* the first file's */
    double base;      /* this file's raw time of the recording's t = 0 */
    double t, last_t; /* the frame's time (s from the first frame) */
    int frames;       /* decoded so far */
} rp_decoder;

/* Opens every file (each must open, decode and agree in size and rate
 * with the first), then stands before the first frame. */
int rp_decoder_open(rp_decoder *d, const char *const *inputs, int n, char *err, size_t errlen);
/* The next frame (d->frame, d->t): 1, 0 after the last file's last, or
 * an error naming the file. */
int rp_decoder_next(rp_decoder *d, char *err, size_t errlen);
void rp_decoder_close(rp_decoder *d);
/* After the first frame: on to about t (the keyframe at or before it) when
 * t lies in the first file further on than 2 s; otherwise nothing (the
 * frames are read in order). Returns 1 when it seeked, 0, or an error. */
int rp_decoder_seek(rp_decoder *d, double t, char *err, size_t errlen);

#endif
