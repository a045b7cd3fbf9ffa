/* web_picture.h - the web page's live picture: the cameras side by side in
 * their order (the rig as it looks), small, as a JPEG a few times a second,
 * and a JPEG thumbnail of each camera, made from a small rendition of the
 * encoder's picture only while someone looks at them. When that picture is
 * a rendering (the stitched panorama: `whole`), the live picture is all of
 * it, small, and there are no camera thumbnails (the cameras' own pictures
 * are not in it).
 *
 * Cost to the frame path: the stage thread calls pc_web_picture_offer once
 * per frame set (the last step of its list, step_web_picture.c, with the
 * slot's finished picture); it returns at once (an atomic load and a clock read)
 * unless a picture was asked for over HTTP in the last 5 s, the last one
 * is 1/PC_WEB_PICTURE_FPS s old and the worker is idle. Then it makes the
 * small rendition of that set's picture: on a GPU backend the backend's
 * box downscale (pc_backend_downscale, the preview's kernel) into a pinned
 * host picture, a few hundred KB over PCIe, and a wait for the slot's
 * queue; on host pictures a sampled 2x2 mean at every scale-th pixel
 * (reading 4/scale^2 of the picture).
 * Everything else (the side-by-side strip, the colour conversion, the JPEG
 * encoding) runs on the module's own thread. The stage thread's time in
 * it is measured and reported (pc_web_picture_info).
 *
 * The size: the strip is at most about 1600 pixels wide (each camera
 * scaled down by the same integer, a thumbnail at least 160 pixels wide);
 * a whole picture too, or max_width (scaled down by an integer).
 *
 * One per picture that has a live picture: the main picture (picture 0)
 * and each virtual camera's (whole, max_width 640; step_web_picture.c
 * offers one picture a set, so the stage thread makes at most one small
 * rendition per set whatever is watched).
 *
 * Threads: offer from the stage thread only; get (which waits up to 2 s
 * for the first picture) and info from any thread; open and close from
 * the main thread (before the stage thread starts, after it ended; close
 * after the HTTP server stopped). */
#ifndef PANOCAP_WEB_PICTURE_H
#define PANOCAP_WEB_PICTURE_H

#include "backend.h"
#include "log.h"

#include <stddef.h>
#include <stdint.h>

#define PC_WEB_PICTURE_FPS 4

typedef struct pc_web_picture pc_web_picture;

typedef struct pc_web_picture_config {
    const pc_backend_ops *bops;
    pc_backend *be;              /* the stage thread's backend (downscale, wait) */
    pc_pixfmt fmt;               /* the pictures offered: format, colours, size */
    pc_matrix matrix;
    pc_range range;
    int width, height;
    int ncam;                    /* cameras in the picture */
    int cam_w, cam_h;            /* one camera's size in it */
    int grid_cols;               /* cameras across (grid layout); 1: one above the other */
    int whole;                   /* 1: the picture is a rendering (the panorama, a view): shown
                                  * whole, no camera tiles or thumbnails */
    int max_width;               /* whole: the live picture's widest (0: 1600) */
    const char *name;            /* in log lines: "vcam:main"; NULL or "": the main picture */
    const pc_logger *lg;
} pc_web_picture_config;

typedef struct pc_web_picture_info {
    int available;               /* 0: no picture can be made here (why) */
    char why[160];
    char source[48];             /* "GPU box downscale 1/7", "sampled 1/7" */
    int scale;
    int width, height;           /* the live picture (strip, or the whole picture) */
    int thumb_width, thumb_height; /* 0 x 0: no camera thumbnails (whole) */
    uint64_t seq;                /* pictures made so far */
    double age_s;                /* of the latest, < 0: none yet */
    double stage_ms_mean, stage_ms_max; /* the stage thread's time per picture */
    double worker_ms_mean;       /* strip + JPEGs per picture, on the module's thread */
} pc_web_picture_info;

int pc_web_picture_open(pc_web_picture **out, const pc_web_picture_config *cfg, char *err, size_t n);
/* Stage thread, per frame set: pic, the picture of backend slot `slot`
 * once the demosaic into it is queued (device pictures: the downscale
 * goes on the slot's queue, then waits) or done (host pictures). Returns
 * 1 when it took a small rendition of it (someone watches, it was due),
 * else 0. */
int pc_web_picture_offer(pc_web_picture *w, int slot, const pc_picture *pic);
/* The latest JPEG: the strip (camera -1) or camera k's thumbnail, as a
 * malloc'd copy (the caller frees it). Marks the picture as wanted and
 * waits up to 2 s for the first one. 0; -1 none (why); -2 no such camera. */
int pc_web_picture_get(pc_web_picture *w, int camera, uint8_t **data, size_t *len, uint64_t *seq, char *why,
                       size_t n);
void pc_web_picture_info_get(pc_web_picture *w, pc_web_picture_info *info);
void pc_web_picture_close(pc_web_picture *w);

#endif
