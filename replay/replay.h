/* replay.h - clips of a virtual camera re-framed after the fact from a
 * recorded panorama: the panorama is a camera of the rig model
 * (pc_rig_panorama_source), so the render family draws any view from its
 * decoded frames, as the live views are drawn from the cameras.
 *
 *   path     where the view looks at each time of the recording: a fixed
 *            pose, keyframes (time, pan, tilt, hfov) reached by the live
 *            views' motion (vcam.h: each keyframe a DURATION move arriving
 *            at its time), or the follow mode run over the recording's
 *            frames (follow.h, on a small panorama rendered from them);
 *   clip     one or more recorded panorama files (consecutive parts of one
 *            recording, libavformat/libavcodec) -> [t0, t1] of it, rendered
 *            at w x h through the backend ops, encoded (encode.h: libx264
 *            by default) to an MP4 (or any container the extension names),
 *            optionally slowed down, with progress and cancel.
 *
 * Times are seconds from the recording's first frame (the first file's).
 * A clip of [t0, t1] slowed down s times has exactly round((t1 - t0) fps
 * s) frames at the recording's frame rate fps, so its duration is that
 * over fps; output frame k shows the recording at t0 + k / (fps s) (the
 * nearest frame of it; the view's pose at that exact time).
 *
 * Library API: the daemon (clips from its time-shift buffer) and
 * tools/panocap-reframe use it. Errors: 0 or a negative PC_E* code
 * (debayer.h) with a message naming the file, time or argument.
 */
#ifndef PANOCAP_REPLAY_H
#define PANOCAP_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "follow.h"
#include "render.h"
#include "rig.h"
#include "vcam.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PC_REPLAY_MAX_INPUTS 64
#define PC_REPLAY_MAX_KEYFRAMES 100000
#define PC_REPLAY_MAX_SLOW 100.0
#define PC_REPLAY_ECANCELED (-100) /* the cancel callback asked to stop */

/* --- the path ------------------------------------------------------------ */

typedef enum pc_replay_path_kind {
    PC_REPLAY_FIXED = 0,     /* pose, all along */
    PC_REPLAY_KEYFRAMES = 1, /* kf[0..nkf) */
    PC_REPLAY_FOLLOW = 2,    /* the follow mode, starting at pose */
} pc_replay_path_kind;

typedef struct pc_replay_keyframe {
    double t;               /* seconds from the recording's start, ascending */
    double pan, tilt, hfov; /* degrees */
} pc_replay_keyframe;

typedef struct pc_replay_path {
    pc_replay_path_kind kind;
    pc_vcam_pose pose;             /* FIXED; FOLLOW's start */
    const pc_replay_keyframe *kf;  /* KEYFRAMES (borrowed) */
    int nkf;
    pc_vcam_limits lim;            /* the motion's (KEYFRAMES, FOLLOW); pc_vcam_limits_default */
    pc_follow_params fpar;         /* FOLLOW; pc_follow_params_default */
} pc_replay_path;

/* Fills path with a fixed pose and the default limits and follow params. */
void pc_replay_path_default(pc_replay_path *path, pc_vcam_pose pose);

/* A keyframe file: one keyframe a line, "TIME PAN TILT HFOV" (seconds,
 * degrees; spaces or commas between), '#' starts a comment, blank lines
 * ignored; times strictly ascending, at least one line. *kf is malloc'd
 * (free it). name names the text in messages ("FILE:LINE: ..."). */
int pc_replay_keyframes_parse(const char *text, const char *name, pc_replay_keyframe **kf, int *n, char *err,
                              size_t errlen);
int pc_replay_keyframes_load(const char *path, pc_replay_keyframe **kf, int *n, char *err, size_t errlen);

/* The keyframe path's pose at a time, as the clip renders it: the live
 * views' motion (pc_vcam_motion, path->lim) started at the first
 * keyframe's pose at its time, each next keyframe handed to it as a
 * DURATION move over the gap between the two, stepped at dt. Held at the
 * first keyframe's pose before it and where the last move ends after the
 * last. The stepper keeps its state: times must not go back. */
typedef struct pc_replay_stepper {
    const pc_replay_path *path;
    pc_vcam_motion mot;
    double t;   /* the motion's time */
    int next;   /* the next keyframe to hand over */
    int started;
} pc_replay_stepper;
void pc_replay_stepper_init(pc_replay_stepper *s, const pc_replay_path *path);
pc_vcam_pose pc_replay_stepper_at(pc_replay_stepper *s, double t, double dt);

/* --- the clip ------------------------------------------------------------ */

typedef struct pc_replay_config {
    const pc_rig *rig;          /* the rig the panorama was recorded from */
    int panorama_width;         /* the recording's panorama.width; 0: the .pto's output size */
    const char *const *inputs;  /* recorded panorama files, in order */
    int ninputs;
    double t0, t1;              /* seconds; t1 < 0: the recording's end */
    int width, height;          /* the view (even) */
    pc_replay_path path;
    double slow;                /* 1 (or 0): real time; 2: twice as long */
    const char *output;         /* the clip (.mp4; the container from its extension) */
    const char *encoder;        /* NULL: "libx264" */
    int64_t bitrate;            /* bit/s; 0: 0.15 bit a pixel at the frame rate */
    const char *preset;         /* NULL: "veryfast" (x264) */
    pc_render_sampler sampler;  /* bilinear (default) or bicubic */
    int threads;                /* CPU render threads; 0: one per CPU */
    const char *backend;        /* "auto" (NULL: CUDA where it runs, else the CPU), "cpu", "cuda" */
    int no_seek;                /* 1: read the first file from its start even where it could seek to t0 (tests) */
    /* progress: frames done of total, after each frame; cancel: return
     * non-zero to stop (the partial clip is removed, PC_REPLAY_ECANCELED) */
    void (*progress)(void *user, int done, int total);
    const struct pc_logger *log; /* the encoder's log lines; NULL: stderr */
    int (*cancel)(void *user);
    void *user;
} pc_replay_config;

void pc_replay_config_default(pc_replay_config *c);

typedef struct pc_replay_result {
    int frames;                 /* written */
    double duration_s;          /* frames / fps */
    int fps_num, fps_den;       /* the recording's frame rate (the clip's) */
    int src_w, src_h;           /* the recorded panorama */
    double rec_end_s;           /* the recording's length, as far as read */
    int src_frames;             /* decoded */
    int seeked;                 /* 1: the first file was entered near t0 (a seek), not read from its start */
    pc_vcam_pose last;          /* the last frame's pose */
    char backend[16];           /* the backend that rendered */
    char note[200];             /* why auto did not pick CUDA ("" when it did, or was not asked) */
    char warning[320];          /* a fixed pose or a keyframe that sees past the panorama (black there):
                                 * where the live views' clamp would put it; "" when none does */
} pc_replay_result;

/* Renders the clip. res may be NULL. */
int pc_replay_clip(const pc_replay_config *cfg, pc_replay_result *res, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
