/* pipeline_step.h - the stage thread's per-set work as a list of steps,
 * each a module behind a small ops table (FFmpeg's filters are the model),
 * and the list that runs them (pipeline_steps.c).
 *
 * The stage thread takes a frame set from capture and hands one pl_set
 * down the list once: every step's run in order, then the slot goes to
 * the encoders. A step never calls back into the stage loop or into
 * another step; what one step tells a later one travels in the pl_set
 * (the picture it wrote, the colour tables in force).
 *
 *   raw-record -> colour -> | picture slot | -> debayer -> (geometry ...) -> snapshot -> web picture
 *
 * Steps before the first PL_STEP_SLOT step run while the set waits for a
 * free picture slot (they read only the frame set); from it on the set
 * holds slot k. The list in force is pipeline_stage.c's stage_steps[].
 *
 * Pictures. A step that writes pictures (PL_STEP_WRITES) declares at
 * prepare how many it writes per set (io.nout, up to PL_MAX_PICTURES) and
 * each one's size and name (io.out[i]); one that reads (PL_STEP_READS)
 * gets the first picture of the last writer before it (set->in) and may
 * ask for the format it reads. The LAST writer writes the slot's
 * pictures, the ones the encoders get, each in the format of its own
 * encoders: picture 0 is the main picture (the top-level outputs, the
 * preview), every other one has its own encoder(s) and outputs (a
 * virtual camera, the unstitched cameras for recording), same PTS. An
 * earlier writer writes its own intermediate pictures per slot (in the
 * format its reader asked), allocated once at start. So a geometry step
 * after the debayer reads the debayer's RGB24 picture of the stacked
 * cameras (set->in, backend memory) and writes, say, the panorama
 * (8600x1300, set->out[0]) and K virtual cameras (1920x1080,
 * set->out[1..K]): the pipeline sizes the slots and the encoders from the
 * list's last pictures (pl_steps.out[], pl_steps.nout) and asks its
 * pl_spec which encoder settings and outputs each one gets (by its name:
 * "panorama", "vcam:main", "unstitched").
 *
 * Threads: prepare, start and close on the main thread (set-up,
 * teardown); run on the stage thread; reload on the main thread while
 * the stage thread runs (a step hands the change to its run, which takes
 * it at the start of its next set: no set waits, none is dropped);
 * describe on any thread. Each step owns its state (priv); what other
 * threads hand it goes through its own lock or atomic, said at the top of
 * its file.
 *
 * Adding a step: README.md, "Adding a step to the stage thread".
 */
#ifndef PANOCAP_PIPELINE_STEP_H
#define PANOCAP_PIPELINE_STEP_H

#include "backend.h"
#include "capture.h"
#include "colour.h"
#include "log.h"
#include "settings.h"

#include <stddef.h>

#define PL_MAX_STEPS 12
#define PL_STEP_SLOTS PC_BACKEND_MAX_SLOTS
#define PL_MAX_PICTURES (PC_MAX_VCAMS + 2) /* pictures one step writes per set (pl_step_io.out): the panorama, the views, the unstitched cameras */
#define PL_PIC_NAME (PC_NAME_LEN + 8) /* a picture's name with its NUL: "vcam:" + a virtual camera's name */

/* pl_step_ops.flags */
#define PL_STEP_SLOT 1u   /* runs with the set's picture slot */
#define PL_STEP_WRITES 2u /* writes pictures into set->out[] (implies SLOT) */
#define PL_STEP_READS 4u  /* reads the last writer's picture, set->in (implies SLOT) */

/* prepare's return besides 0 and < 0: not needed with these settings,
 * left out of the list (its priv, if any, is closed) */
#define PL_STEP_ABSENT 1

/* reload's returns besides < 0 (an error: msg says why; what is in force
 * stays) */
enum {
    PL_RELOAD_NONE = 0,    /* nothing of this step's changed */
    PL_RELOAD_LIVE = 1,    /* applies from the next set (msg, if any, is logged) */
    PL_RELOAD_RESTART = 2, /* needs a restart to apply (msg says what) */
};

#define PL_FMT_ANY (-1) /* pl_pic_desc.fmt: not asked / not yet known */

/* A picture a step writes or reads. */
typedef struct pl_pic_desc {
    int width, height; /* 0 x 0: no picture (the raw set only) */
    int fmt;           /* pc_pixfmt, or PL_FMT_ANY */
    /* A written picture's name, in logs, metrics and the pipeline's
     * choice of its encoder settings and outputs (pl_spec): "cameras",
     * "panorama", "vcam:main", "unstitched". "" after prepare: the step's
     * name (its only picture) or "STEP:i". Unique among a writer's. */
    char name[PL_PIC_NAME];
} pl_pic_desc;

/* A step's pictures. At prepare: in is the first picture the writers
 * before it make (fmt PL_FMT_ANY unless an earlier reader asked; 0 x 0:
 * none yet, the raw set), out[] what they make; a reader may set in.fmt
 * to the format it reads. A writer gets nout 0 and sets it (0 is taken as
 * 1: one picture) and out[0..nout): sizes, names, and a fmt only where it
 * can write no other. A step that does not write gets nout = the
 * pictures in force. At start everything is resolved: the formats are
 * known. */
typedef struct pl_step_io {
    pl_pic_desc in;
    pl_pic_desc out[PL_MAX_PICTURES];
    int nout;
} pl_step_io;

typedef struct pipeline pipeline;

/* What steps get at set-up; valid until teardown (steps may keep it). */
typedef struct pl_step_env {
    pipeline *p;            /* the mailboxes other threads fill (pipeline_int.h); NULL in unit tests */
    const pc_settings *s;   /* the settings at start: prepare and start only (a reload replaces them) */
    const pc_logger *log;
    pc_backend *be;
    int width, height;      /* the stacked cameras (ncam slabs of slab_h rows) */
    int slab_h, ncam;
    pc_cfa cfa;
    pc_rawfmt rawfmt;       /* the capture's raw format */
    double fps;
    int nslots;             /* picture slots (sets in flight) */
} pl_step_env;

/* The colour step's word to later steps for this set (docs/colour.md). */
typedef struct pl_set_colour {
    const pc_rawfmt *fmt;           /* the slabs' raw format */
    const pc_colour_tables *tables; /* per slab: raw -> 8-bit Bayer */
    const pc_yuv_coeffs *bands;     /* per slab final-pass matrices; NULL: the §8 one */
    int n;                          /* slabs */
} pl_set_colour;

/* One frame set's trip down the list (on the stage thread's stack: no
 * allocation per set). */
typedef struct pl_set {
    const pc_frameset *frames; /* from capture; given back after the list */
    int slot;                  /* picture slot; -1 before the first PL_STEP_SLOT step */
    /* the slot's pictures, what the encoders get ([0] the main one; NULL
     * before the first slot step) */
    pc_picture *picture[PL_MAX_PICTURES];
    int npictures;
    const pc_picture *in;      /* PL_STEP_READS: the first picture the last writer before wrote */
    /* PL_STEP_WRITES: where this step writes its io.out[i] (the slot's
     * pictures, or its intermediate ones when a later step writes); NULL
     * past nout and for a step that does not write */
    pc_picture *out[PL_MAX_PICTURES];
    int nout;
    const pl_set_colour *colour; /* the colour step's tables; NULL: 8-bit as captured */
    char *err;                 /* run's message on failure: complete, naming the step */
    size_t errlen;
} pl_set;

typedef struct pl_step_ops {
    const char *name; /* "colour", "debayer": logs, errors */
    unsigned flags;   /* PL_STEP_* */
    /* Set-up: reads env->s, builds its state into *priv, declares its
     * pictures (io). 0: in the list; PL_STEP_ABSENT: not needed; < 0:
     * refused, err says what is wrong and where. */
    int (*prepare)(void **priv, const pl_step_env *env, pl_step_io *io, char *err, size_t errlen);
    /* Set-up, once the encoders and the picture slots exist (io
     * resolved): files, the backend's configuration. NULL: nothing. */
    int (*start)(void *priv, const pl_step_env *env, const pl_step_io *io, char *err, size_t errlen);
    /* Stage thread, per set: 0, or < 0 with set->err (the pipeline stops). */
    int (*run)(void *priv, pl_set *set);
    /* Main thread, a reload with the new settings s (live: the PC_LIVE_*
     * bits that changed): PL_RELOAD_* or < 0, msg one line. NULL: nothing
     * of this step changes live. */
    int (*reload)(void *priv, const pc_settings *s, unsigned live, char *msg, size_t msglen);
    /* Any thread: what it does now, one short line without its name,
     * e.g. "edge, cpu backend, nv12 2040x5400". NULL: nothing to say. */
    void (*describe)(void *priv, char *buf, size_t len);
    /* Teardown, after the stage thread: frees priv (NULL is fine). */
    void (*close)(void *priv);
} pl_step_ops;

/* A step in the list, with its negotiated pictures. */
typedef struct pl_step {
    const pl_step_ops *ops;
    void *priv;
    pl_step_io io;
    int has_mid;                 /* writes its own pictures per slot (a later step writes too) */
    const char *fmt_by;          /* the reader that asked for io.out[0].fmt, if one did */
    pc_picture mid[PL_MAX_PICTURES][PL_STEP_SLOTS]; /* [picture][slot] */
} pl_step;

/* How pl_steps_start allocates the intermediate pictures (the pipeline:
 * in the backend's memory, any size). */
typedef struct pl_pic_alloc {
    int (*alloc)(void *user, const pl_pic_desc *d, pc_picture *out, char *err, size_t errlen);
    void (*free)(void *user, pc_picture *pic);
    void *user;
} pl_pic_alloc;

typedef struct pl_steps {
    pl_step step[PL_MAX_STEPS];
    int n;
    int first_slot;   /* the first step with PL_STEP_SLOT (n: none) */
    int last_writer;  /* the step that writes the slot's pictures (-1: none) */
    /* the slot's pictures: sizes and names after prepare, formats after start */
    pl_pic_desc out[PL_MAX_PICTURES];
    int nout;
    int nslots;       /* intermediate pictures allocated (start) */
    pl_pic_alloc alloc;
} pl_steps;

/* Prepares ops[0..n) in order into l (the steps that are absent left
 * out). On failure (-1) err says why, *failed names the step. */
int pl_steps_prepare(pl_steps *l, const pl_step_ops *const *ops, int n, const pl_step_env *env,
                     const char **failed, char *err, size_t errlen);
/* Resolves the formats (out_fmt[i]: the format of the slot's picture i,
 * its encoders', for i < l->nout), allocates the intermediate pictures of
 * nslots slots and starts every step. On failure (-1) err says why,
 * *failed names the step. */
int pl_steps_start(pl_steps *l, const pl_step_env *env, const int *out_fmt, int nslots, const pl_pic_alloc *alloc,
                   const char **failed, char *err, size_t errlen);
/* Stage thread: steps [from, to) on set (set->slot, picture[] and
 * npictures set from first_slot on). 0, or the failing run's < 0
 * (set->err says why). */
int pl_steps_run(pl_steps *l, int from, int to, pl_set *set);
/* Main thread: every step's reload; logs what each says ("reload: ..."). */
void pl_steps_reload(pl_steps *l, const pc_settings *s, unsigned live, const pc_logger *log);
/* "colour (off) -> debayer (edge, ...) -> snapshot (on request, the panorama)" */
void pl_steps_describe(pl_steps *l, char *buf, size_t len);
/* Teardown: closes every step, frees the intermediate pictures. */
void pl_steps_close(pl_steps *l);

#endif
