/* backend.h - the device layer (device/): the backends (CPU, CUDA) of both
 * kernel families, the demosaic (kernels/) and the render (render/), behind
 * one ops table, chosen once, FFmpeg-style: the pipeline and the tools call pc_backend_* and never
 * ask which backend runs (no #if PANOCAP_HAVE_CUDA, no use_cuda branches).
 *
 * Choosing (once, at start-up):
 *   const pc_backend_ops *ops;
 *   pc_backend_choose("auto", &ops, note, sizeof note, err, sizeof err);
 *       "auto": cuda when built with CUDA and a device exists, else cpu
 *       and `note` says why (log it as one warning line); "cuda"/"cpu":
 *       exactly that one, or an error saying why it cannot run here.
 * Opening (a fixed frame size and number of slots; nothing in the
 * per-frame calls allocates):
 *   pc_backend_open(&b, ops, &cfg, err, errlen);
 *   pc_backend_picture_alloc(b, fmt, matrix, range, w, h, &pic[k], ...) per
 *       slot (the frame's size for the debayer's pictures; any size for
 *       a picture a later step makes, a panorama or a virtual camera)
 *   pc_backend_prepare_algo(b, &dc, ...) for each algorithm a live switch
 *       may pick (CUDA: graph capture and tuning, tens of ms each);
 *   pc_backend_set_algo(b, &dc, ...)  the configuration in force.
 * Per frame set (slot = one input buffer; see pc_backend_config.slots):
 *   pc_backend_upload(b, slot, row0, host, pitch, rows, ...) per slab
 *   pc_backend_debayer(b, slot, &pic[slot], ...)
 *   pc_backend_wait(b, slot, ...)
 * and on the encoder side, for slot k:
 *   pc_backend_download(b, k, &pic[k], &encoder_frame, ...)
 *   pc_backend_wait(b, k, ...)
 * or, queued right after the debayer by the thread that calls it (host
 * encoders taking pictures by reference): a download into a pinned host
 * picture (pc_backend_host_picture_alloc) and the preview's
 *   pc_backend_downscale(b, k, &pic[k], &small, scale, ...)
 * then one pc_backend_wait(b, k, ...).
 *
 * Threads: one thread may upload/debayer slot j while another downloads
 * slot k != j (the pipeline's stage and encoder threads); set_algo and
 * prepare_algo only from the thread that calls debayer.
 *
 * Errors: 0 or a negative PC_E* code (core.h) with a message in err.
 *
 * Rendering (render.h: the panorama, the virtual cameras), after the
 * slot's debayer into a picture of the stacked cameras (RGB24/RGBX32):
 *   pc_backend_render_prepare(b, plan, &rd, ...)  once per rig/view (the
 *       backend's copy: CUDA device memory; the CPU one keeps using plan,
 *       which must outlive rd)
 *   pc_backend_render(b, slot, rd, &cams[slot], &out, ...)   per set; out
 *       from pc_backend_render_picture_alloc or an encoder's frame
 *   pc_backend_render_set_gains(b, rd, gains, ...)  gain compensation,
 *       from the next render on
 *   pc_backend_render_measure(b, slot, rd, &cams[slot], ...) then, after
 *       pc_backend_wait(b, slot), pc_backend_render_stats(b, rd, &st, ...)
 *   pc_backend_render_free(b, rd)
 * from the thread that calls debayer. A virtual camera that moves:
 *   pc_render_plan_set_view(plan, &view, ...)  host, per moved frame
 *   pc_backend_render_update(b, rd, plan, ...)  then render as above
 * (CUDA: the new ray terms and masks are copied on the renderer's stream
 * through pinned staging, so renders queued before keep the old view).
 *
 * The follow mode's activity map (activity.h), on a small rendition's
 * luma (an NV12/I420 picture of the backend, e.g. a render output):
 *   pc_backend_activity_open(b, w, h, &act, ...)  its background model
 *   pc_backend_activity(b, slot, &small, act, &params, counts, ...)
 *       per set; counts (pc_activity_cells of them; CUDA: pinned host
 *       memory, pc_backend_host_alloc) are read after pc_backend_wait(b,
 *       slot); the first call sets the background and counts nothing
 *   pc_backend_activity_close(b, act)
 *
 * The unstitched cameras as YUV when the demosaic writes RGB for the
 * renderer (a second, recorded picture beside the panorama):
 *   pc_backend_convert(b, slot, &cams[slot], &yuv, ...)  the bytes the
 *       demosaic's own final pass writes into yuv (stacked or a grid,
 *       colour bands included) for the same RGB (convert.h)
 *
 * Adding a backend: write a `const pc_backend_ops pc_backend_xxx` (a
 * backend_xxx.c next to backend_cpu.c) and list it in backend.c's table,
 * in order of preference for "auto".
 */
#ifndef PANOCAP_BACKEND_H
#define PANOCAP_BACKEND_H

#include "colour.h"
#include "debayer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* render.h's; a backend's prepared copy of a plan is a pc_render_dev. */
typedef struct pc_render_plan pc_render_plan;
typedef struct pc_render_stats pc_render_stats;
typedef struct pc_render_dev pc_render_dev;
/* net.h's: the learned demosaic's weights (set_net). */
struct pc_net;
/* activity.h's; a backend's background model is a pc_activity_dev. */
typedef struct pc_activity_params pc_activity_params;
typedef struct pc_activity_dev pc_activity_dev;

/* Most input slots (= pictures in flight) a backend is opened with. */
#define PC_BACKEND_MAX_SLOTS 8

/* pc_backend_ops.flags */
#define PC_BACKEND_DEVICE_PICTURES 1u /* pictures from picture_alloc live in device memory */

/* What a backend is opened for. */
typedef struct pc_backend_config {
    int width, height; /* frame size (spec sizes: even, >= 8) */
    int slots;         /* input slots, 1..PC_BACKEND_MAX_SLOTS */
    int device;        /* CUDA: device index (0 = first) */
    int threads;       /* CPU: worker threads, <= 0 = one per online CPU */
    int cam_rows;      /* rows per camera of the stacked frame (pc_bayer.cam_rows:
                          net demosaics each camera on its own); 0 = one image */
} pc_backend_config;

/* What debayer computes (set_algo, prepare_algo). */
typedef struct pc_debayer_config {
    pc_algo_id algo;
    pc_variant variant; /* AUTO: the backend picks (CUDA measures) */
    pc_cfa cfa;
    pc_pixfmt fmt;      /* format of the destination pictures */
    pc_matrix matrix;
    pc_range range;
} pc_debayer_config;

/* One backend. Every function gets the state its open() returned (priv).
 * Required: name, probe, open, close, set_algo, picture_alloc,
 * picture_free, upload, debayer, download, wait. Optional (NULL): the
 * rest; the pc_backend_* wrappers then do the documented default. */
typedef struct pc_backend_ops {
    const char *name;        /* "cpu", "cuda": --backend / debayer.backend */
    const char *description; /* one line for help texts */
    unsigned flags;          /* PC_BACKEND_* */

    /* 1 when the backend can run on this machine; 0 with the reason in why
     * (e.g. "no CUDA device is usable on this machine"). Needs no open. */
    int (*probe)(char *why, size_t whylen);
    int (*open)(void **priv, const pc_backend_config *cfg, char *err, size_t errlen);
    void (*close)(void *priv);
    /* One line for the log: "GPU NVIDIA H100 80GB HBM3" / "CPU, 16 threads". */
    void (*describe)(void *priv, char *buf, size_t len);
    /* Host threads the demosaic runs on (CPU backend). NULL: 0. */
    int (*host_threads)(void *priv);

    /* Prepares a configuration so that a later set_algo to it is immediate
     * (CUDA: captures and tunes it). May change the configuration in force:
     * the wrapper restores it. NULL: nothing to prepare. */
    int (*prepare_algo)(void *priv, const pc_debayer_config *dc, char *err, size_t errlen);
    /* Makes dc the configuration debayer computes from now on. */
    int (*set_algo)(void *priv, const pc_debayer_config *dc, char *err, size_t errlen);
    /* Variant and tile height in force (CUDA's measured choice). NULL:
     * PC_VARIANT_AUTO and 0 (the backend has no variants). */
    void (*get_choice)(void *priv, pc_variant *variant, int *tile_rows);

    /* Pictures of width x height (checked by the wrapper: positive,
     * even for the 4:2:0 formats) the backend can debayer into (the
     * frame's size), render into and download from (device memory when
     * flags has PC_BACKEND_DEVICE_PICTURES). */
    int (*picture_alloc)(void *priv, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width, int height,
                         pc_picture *out, char *err, size_t errlen);
    void (*picture_free)(void *priv, pc_picture *pic);

    /* Rows [row0, row0+rows) of slot's raw panorama from host memory, which
     * must stay unchanged until wait(slot) returns (the copy may be
     * asynchronous, or the CPU backend may read it in place). */
    int (*upload)(void *priv, int slot, int row0, const uint8_t *host, size_t pitch, int rows,
                  char *err, size_t errlen);
    /* Starts (CUDA) or does (CPU) the demosaic of slot into dst, a picture
     * of this backend in the configured format. */
    int (*debayer)(void *priv, int slot, const pc_picture *dst, char *err, size_t errlen);
    /* Copies src (a picture of this backend, after slot's debayer) into
     * dst: host memory, or device memory such as an NVENC CUDA frame. */
    int (*download)(void *priv, int slot, const pc_picture *src, const pc_picture *dst,
                    char *err, size_t errlen);
    /* Returns when everything started for slot is done. */
    int (*wait)(void *priv, int slot, char *err, size_t errlen);
    /* Starts (CUDA) or does (CPU) src (a picture of this backend, after
     * slot's debayer; NV12) scaled down `scale` times by a box filter
     * (bit-identical to pc_picture_downscale) into dst (NV12, host memory
     * such as a pinned picture, or device memory), (width/scale)&~1 x
     * (height/scale)&~1. For the preview rendition. NULL: PC_ENOTSUP. */
    int (*downscale)(void *priv, int slot, const pc_picture *src, const pc_picture *dst, int scale,
                     char *err, size_t errlen);

    /* Host memory the backend reads fastest (CUDA: pinned), e.g. for the
     * capture buffers; needs no open. NULL: malloc/free. */
    void *(*host_alloc)(size_t bytes);
    void (*host_free)(void *p);
    /* CUDA context (CUcontext) and stream (cudaStream_t) for an encoder
     * that takes device frames (NVENC). NULL: none (both set to NULL). */
    void (*encoder_device)(void *priv, void **cu_context, void **stream);

    /* Colour stage (docs/colour.md). NULL: not supported. Camera cam's
     * per-colour tables (kept by the backend; uploads after the call use
     * them), and a camera's raw slab (any format of colour.h; rows
     * [row0, row0+rows), the stream as sent; pitch for 8/16-bit formats,
     * 0 = tight) that debayer maps through cam's tables into the 8-bit
     * panorama. A frame is either all upload or all upload_raw. */
    int (*set_colour_tables)(void *priv, int cam, const pc_colour_tables *t, char *err, size_t errlen);
    int (*upload_raw)(void *priv, int slot, int row0, const uint8_t *host, size_t pitch, const pc_rawfmt *fmt,
                      int cam, int rows, char *err, size_t errlen);

    /* Rendering (render.h; see the top of this file). NULL: not
     * supported. render: src is a picture of this backend (the slot's
     * demosaiced cameras), dst one of the plan's size (CUDA: device
     * memory); queued after the slot's debayer, covered by wait(slot).
     * render_picture_alloc: a picture of this backend of any size and
     * format (render outputs), freed by picture_free. */
    int (*render_prepare)(void *priv, const pc_render_plan *plan, pc_render_dev **out, char *err, size_t errlen);
    void (*render_free)(void *priv, pc_render_dev *rd);
    int (*render_set_gains)(void *priv, pc_render_dev *rd, const float gains[][3], char *err, size_t errlen);
    int (*render)(void *priv, int slot, pc_render_dev *rd, const pc_picture *src, const pc_picture *dst, char *err,
                  size_t errlen);
    int (*render_measure)(void *priv, int slot, pc_render_dev *rd, const pc_picture *src, char *err, size_t errlen);
    int (*render_stats)(void *priv, pc_render_dev *rd, pc_render_stats *out, char *err, size_t errlen);
    int (*render_picture_alloc)(void *priv, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width, int height,
                                pc_picture *out, char *err, size_t errlen);
    /* A moved view (pc_render_plan_set_view): rd, prepared from plan,
     * takes plan's view, ray terms and masks from the next render on. */
    int (*render_update)(void *priv, pc_render_dev *rd, const pc_render_plan *plan, char *err, size_t errlen);

    /* The activity map (activity.h; see the top of this file). NULL: not
     * supported. activity: queued after the slot's work, covered by
     * wait(slot); luma and counts checked by the wrapper. */
    int (*activity_open)(void *priv, int w, int h, pc_activity_dev **out, char *err, size_t errlen);
    void (*activity_close)(void *priv, pc_activity_dev *a);
    int (*activity)(void *priv, int slot, const pc_picture *luma, pc_activity_dev *a, const pc_activity_params *p,
                    uint32_t *counts, char *err, size_t errlen);

    /* RGB24/RGBX32 -> NV12/I420 as the demosaic's final pass writes it
     * (convert.h; arguments checked by the wrapper). NULL: not supported. */
    int (*convert)(void *priv, int slot, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen);

    /* The learned demosaic's weights (net.h, loaded and checked by
     * pc_net_load) for algorithm net from the next debayer on; borrowed:
     * net must outlive the backend or the next set_net (CUDA: converted
     * to its own copy here). NULL net: none (the CPU backend then loads the
     * default file on first use). NULL op: the backend cannot run net. */
    int (*set_net)(void *priv, const struct pc_net *net, char *err, size_t errlen);

    /* Copies src (host memory: a pinned host picture, pc_backend_host_picture_alloc,
     * for an asynchronous copy) into dst, a picture of this backend of the
     * same format and size, on slot's work (wait(slot) says it is done):
     * a decoded panorama frame the renderer draws from (replay/). NULL:
     * the backend cannot (PC_ENOTSUP). */
    int (*picture_upload)(void *priv, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                          size_t errlen);
} pc_backend_ops;

extern const pc_backend_ops pc_backend_cpu;
extern const pc_backend_ops pc_backend_cuda; /* probe says so when built without CUDA */

/* --- Choosing -------------------------------------------------------- */

/* The backends built in, in order of preference; NULL-terminated. */
const pc_backend_ops *const *pc_backend_list(void);
/* By name ("cpu", "cuda"; case-insensitive); NULL if unknown. */
const pc_backend_ops *pc_backend_find(const char *name);
/* The first backend whose probe succeeds (the CPU one always does). When
 * that is not the first of the list, note (if not NULL) says why, e.g.
 * "cuda: this build has no CUDA support (meson -Dcuda=enabled); using the
 * cpu backend"; otherwise note is "". */
const pc_backend_ops *pc_backend_default(char *note, size_t notelen);
/* name NULL or "auto": pc_backend_default. Otherwise that backend, probed;
 * an unknown name or a backend that cannot run here is an error naming
 * it (e.g. "backend cuda: no CUDA device is usable on this machine"). */
int pc_backend_choose(const char *name, const pc_backend_ops **out, char *note, size_t notelen,
                      char *err, size_t errlen);

/* --- An open backend ------------------------------------------------- */

typedef struct pc_backend pc_backend;

int pc_backend_open(pc_backend **out, const pc_backend_ops *ops, const pc_backend_config *cfg,
                    char *err, size_t errlen);
void pc_backend_close(pc_backend *b); /* NULL is fine */

const pc_backend_ops *pc_backend_get_ops(const pc_backend *b);
const char *pc_backend_name(const pc_backend *b);
void pc_backend_describe(pc_backend *b, char *buf, size_t len);
int pc_backend_slots(const pc_backend *b);
int pc_backend_host_threads(pc_backend *b); /* 0 for a device backend */

int pc_backend_prepare_algo(pc_backend *b, const pc_debayer_config *dc, char *err, size_t errlen);
int pc_backend_set_algo(pc_backend *b, const pc_debayer_config *dc, char *err, size_t errlen);
/* The configuration in force; 0, or PC_EINVAL before the first set_algo. */
int pc_backend_get_algo(const pc_backend *b, pc_debayer_config *dc);
void pc_backend_get_choice(pc_backend *b, pc_variant *variant, int *tile_rows);
/* For status lines: the variant in force ("2px", "4px"), or the backend's
 * name when it has no variants ("cpu"). */
const char *pc_backend_choice_name(pc_backend *b);

/* A picture of width x height in the backend's memory (ops->picture_alloc). */
int pc_backend_picture_alloc(pc_backend *b, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width,
                             int height, pc_picture *out, char *err, size_t errlen);
void pc_backend_picture_free(pc_backend *b, pc_picture *pic);

int pc_backend_upload(pc_backend *b, int slot, int row0, const uint8_t *host, size_t pitch, int rows,
                      char *err, size_t errlen);
int pc_backend_debayer(pc_backend *b, int slot, const pc_picture *dst, char *err, size_t errlen);
/* The colour stage (ops->set_colour_tables / upload_raw; PC_ENOTSUP when
 * the backend has none). cam < PC_BACKEND_MAX_CAMERAS. */
#define PC_BACKEND_MAX_CAMERAS 16
int pc_backend_set_colour_tables(pc_backend *b, int cam, const pc_colour_tables *t, char *err, size_t errlen);
int pc_backend_upload_raw(pc_backend *b, int slot, int row0, const uint8_t *host, size_t pitch,
                          const pc_rawfmt *fmt, int cam, int rows, char *err, size_t errlen);
int pc_backend_download(pc_backend *b, int slot, const pc_picture *src, const pc_picture *dst,
                        char *err, size_t errlen);
int pc_backend_wait(pc_backend *b, int slot, char *err, size_t errlen);
/* ops->downscale (see there); PC_ENOTSUP when the backend has none. */
int pc_backend_downscale(pc_backend *b, int slot, const pc_picture *src, const pc_picture *dst, int scale,
                         char *err, size_t errlen);

/* Rendering (ops->render_*; PC_ENOTSUP when the backend has none). */
int pc_backend_render_prepare(pc_backend *b, const pc_render_plan *plan, pc_render_dev **out, char *err,
                              size_t errlen);
void pc_backend_render_free(pc_backend *b, pc_render_dev *rd); /* NULL is fine */
/* gains: one RGB triple per camera of the plan, each in (0, 100). */
int pc_backend_render_set_gains(pc_backend *b, pc_render_dev *rd, const float gains[][3], char *err, size_t errlen);
int pc_backend_render(pc_backend *b, int slot, pc_render_dev *rd, const pc_picture *src, const pc_picture *dst,
                      char *err, size_t errlen);
int pc_backend_render_measure(pc_backend *b, int slot, pc_render_dev *rd, const pc_picture *src, char *err,
                              size_t errlen);
int pc_backend_render_stats(pc_backend *b, pc_render_dev *rd, pc_render_stats *out, char *err, size_t errlen);
int pc_backend_render_picture_alloc(pc_backend *b, pc_pixfmt fmt, pc_matrix matrix, pc_range range, int width,
                                    int height, pc_picture *out, char *err, size_t errlen);

/* Moving views: rd (prepared from plan) takes the view pc_render_plan_set_view
 * gave plan; call it after every set_view, before rd's next render. */
int pc_backend_render_update(pc_backend *b, pc_render_dev *rd, const pc_render_plan *plan, char *err, size_t errlen);

/* The activity map (ops->activity_*; PC_ENOTSUP when the backend has none).
 * open: the background model of a w x h luma picture. activity: luma is an
 * NV12/I420 picture of the backend, w x h (its Y plane is read); p checked
 * by pc_activity_check; counts: pc_activity_cells(w, h, p) entries of host
 * memory (CUDA: pinned, pc_backend_host_alloc, for an asynchronous copy),
 * valid after pc_backend_wait(b, slot). The first call after open sets the
 * background and counts nothing (all 0). */
int pc_backend_activity_open(pc_backend *b, int w, int h, pc_activity_dev **out, char *err, size_t errlen);
void pc_backend_activity_close(pc_backend *b, pc_activity_dev *a); /* NULL is fine */
int pc_backend_activity(pc_backend *b, int slot, const pc_picture *luma, pc_activity_dev *a,
                        const pc_activity_params *p, uint32_t *counts, char *err, size_t errlen);

/* ops->convert (convert.h: src a picture of the backend, RGB24/RGBX32;
 * dst NV12/I420 of src's size, stacked or a grid of its cameras, colour
 * bands allowed); queued after the slot's debayer, covered by wait(slot).
 * PC_ENOTSUP when the backend has none. */
int pc_backend_convert(pc_backend *b, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                       size_t errlen);

/* ops->set_net (see there); PC_ENOTSUP when the backend has none. From
 * the thread that calls debayer, between frames; set it before
 * set_algo/prepare_algo of net. */
int pc_backend_set_net(pc_backend *b, const struct pc_net *net, char *err, size_t errlen);

/* ops->picture_upload (see there): src, host memory, into dst, a picture
 * of b; PC_ENOTSUP when the backend has none. */
int pc_backend_picture_upload(pc_backend *b, int slot, const pc_picture *src, const pc_picture *dst, char *err,
                              size_t errlen);

/* ops->host_alloc or malloc; NULL on failure. Free with pc_backend_host_free
 * of the same ops. */
void *pc_backend_host_alloc(const pc_backend_ops *ops, size_t bytes);
void pc_backend_host_free(const pc_backend_ops *ops, void *p);
/* A host picture (fmt, w x h, 64-byte pitches) in ops' host memory (CUDA:
 * pinned, so that a download into it is a truly asynchronous copy at PCIe
 * speed); free with pc_backend_host_picture_free (a zeroed picture is
 * fine). */
int pc_backend_host_picture_alloc(const pc_backend_ops *ops, pc_pixfmt fmt, pc_matrix matrix, pc_range range,
                                  int w, int h, pc_picture *out, char *err, size_t errlen);
void pc_backend_host_picture_free(const pc_backend_ops *ops, pc_picture *pic);
void pc_backend_encoder_device(pc_backend *b, void **cu_context, void **stream);

#ifdef __cplusplus
}
#endif
#endif
