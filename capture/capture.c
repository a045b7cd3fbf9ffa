/* capture.c - the source-independent half of the capture library:
 * configuration defaults and validation, buffer and frame-set pools, the
 * grouping of camera frames into sets by timestamp, deadlines and
 * substitution, the one place where sets are dropped, statistics.
 *
 * Grouping. Each camera's timestamps are mapped onto the host monotonic
 * clock by an offset that follows the lower envelope of (arrival - camera
 * time): transmission delay is always positive, so the smallest difference
 * is the best estimate, and a slow upward creep (100 ppm of the period per
 * frame) follows clock drift. Sets live on a grid of frame periods: set k
 * covers host times [b + kP, b + (k+1)P), i.e. +-P/2 around its centre,
 * which is its pts. The boundary b is placed in the largest gap between the
 * cameras' phases, so free-running cameras with arbitrary phases each fall
 * consistently into one slot per period; it is moved again (counted as a
 * rephase) when a camera's phase comes within P/8 of it: freely until the
 * first set is out (start-up bursts), then at most every 10 periods.
 *
 * A set is emitted when all n slabs are in, or when its deadline (first
 * slab's arrival + deadline_periods * P) passes, in k order. Missing slabs
 * point at the camera's last good frame that an earlier set carried (no
 * copy: the slot is referenced; a newer frame already waiting in a later
 * open set is not used, so a slab's frames never go backwards), or at a
 * mid-grey slab if no set carried one of that camera yet.
 *
 * Every frame period gets a set, whatever arrived: when no camera sent a
 * frame for a grid slot (all lost, or none answers yet) the supervisor
 * emits it, every slab substituted, once its wait is over. Incomplete
 * frames (packets lost and not resent) are not thrown away: the source
 * marks each buffer before it is filled (a 4-byte word every 256 bytes;
 * a lost packet of >= 540 bytes always leaves one), the core fills the
 * lines still marked from the camera's previous frame and uses the frame
 * (counted as repaired). A camera whose frames are mostly incomplete gets
 * a warning.
 */
#include "capture_int.h"
#include "image.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "panocap_config.h"
#include "scene.h"

/* --- small helpers ------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int64_t mod_pos(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

static void abs_timespec(struct timespec *ts, int64_t t_ns)
{
    ts->tv_sec = t_ns / 1000000000;
    ts->tv_nsec = t_ns % 1000000000;
}

const char *pc_cam_state_name(pc_cam_state s)
{
    static const char *const n[] = {"idle", "streaming", "lost", "reconnecting", "stopped"};
    return ((unsigned)s < 5) ? n[s] : "?";
}

const char *pc_stream_path_name(pc_stream_path p)
{
    static const char *const n[] = {"none", "packet socket", "UDP socket", "in-process", "file"};
    return ((unsigned)p < 5) ? n[p] : "?";
}

const char *pc_fail_reason_name(pc_fail_reason r)
{
    static const char *const n[] = {"timeout", "missing packets", "wrong packet id",
                                    "size mismatch", "aborted", "other"};
    return ((unsigned)r < PC_FAIL_COUNT) ? n[r] : "?";
}

int pc_cfa_from_pixel_format_name(const char *name)
{
    static const struct { const char *n; pc_cfa c; } t[] = {
        {"BayerRG8", PC_CFA_RGGB}, {"BayerGR8", PC_CFA_GRBG},
        {"BayerGB8", PC_CFA_GBRG}, {"BayerBG8", PC_CFA_BGGR},
    };
    if (!name)
        return -1;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcasecmp(name, t[i].n) == 0)
            return t[i].c;
    pc_rawfmt f; /* 10/12-bit and packed formats (docs/colour.md) */
    return pc_rawfmt_parse(name, &f, NULL, 0) == 0 ? (int)f.cfa : -1;
}

/* --- configuration ------------------------------------------------------- */

void pc_camera_config_init(pc_camera_config *cam)
{
    memset(cam, 0, sizeof *cam);
    cam->cfa = PC_CFA_RGGB;
    cam->width = 2040;
    cam->height = 1080;
    cam->exposure_us = NAN;
    cam->gain = NAN;
    cam->packet_delay_ns = -1;
    cam->resend = 1;
    cam->packet_socket = -1;
    cam->trigger = PC_TRIGGER_FREE_RUN;
    cam->image_part = -1;
    cam->image_parts = 0;
    cam->slab = -1;
}

void pc_capture_config_init(pc_capture_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->source = PC_SOURCE_GIGE;
    cfg->file_realtime = 1;
    cfg->n_cameras = 5;
    for (int i = 0; i < PC_CAPTURE_MAX_CAMERAS; i++)
        pc_camera_config_init(&cfg->cam[i]);
    cfg->fps = 50.0;
    cfg->deadline_periods = 1.5;
    cfg->pool_sets = 4;
}

/* Copies every string of cfg into one owned block so the caller's config
 * may go away after open. */
static int own_strings(pc_capture *c)
{
    size_t total = 0;
    const char **fields[2 + 4 * PC_CAPTURE_MAX_CAMERAS];
    int nf = 0;
    fields[nf++] = &c->cfg.file;
    fields[nf++] = &c->cfg.scene;
    for (int i = 0; i < PC_CAPTURE_MAX_CAMERAS; i++) {
        fields[nf++] = &c->cfg.cam[i].address;
        fields[nf++] = &c->cfg.cam[i].pixel_format;
        fields[nf++] = &c->cfg.cam[i].trigger_line;
        fields[nf++] = &c->cfg.cam[i].image;
    }
    for (int i = 0; i < nf; i++)
        if (*fields[i])
            total += strlen(*fields[i]) + 1;
    c->strings = malloc(total + 1);
    if (!c->strings)
        return -1;
    char *p = c->strings;
    for (int i = 0; i < nf; i++) {
        if (!*fields[i])
            continue;
        size_t l = strlen(*fields[i]) + 1;
        memcpy(p, *fields[i], l);
        *fields[i] = p;
        p += l;
    }
    return 0;
}

static const char *cam_label(const pc_capture_config *cfg, int i, char *buf, size_t n)
{
    const pc_camera_config *k = &cfg->cam[i];
    if (cfg->source == PC_SOURCE_FAKE && (!k->address || !*k->address))
        snprintf(buf, n, "PCFAKE%d", i + 1);
    else
        snprintf(buf, n, "%s", (k->address && *k->address) ? k->address : "no address");
    return buf;
}

/* The fake cameras' scene: a known name, fake cameras, and a rig whose
 * cameras are these cameras (count and size). */
static int validate_scene(const pc_capture_config *cfg, char *err, size_t errlen)
{
    if (!cfg->scene)
        return 0;
    int known = 0;
    for (int i = 0; pc_scene_names[i]; i++)
        known |= strcmp(cfg->scene, pc_scene_names[i]) == 0;
    if (!known) {
        PC_ERR(err, errlen, "capture: scene '%s' is not known (scenes: stadium)", cfg->scene);
        return PC_EINVAL;
    }
    if (cfg->source != PC_SOURCE_FAKE) {
        PC_ERR(err, errlen, "capture: scene '%s' is shown by fake cameras only (the source is %s)", cfg->scene,
               cfg->source == PC_SOURCE_GIGE ? "gige" : "file");
        return PC_EINVAL;
    }
    if (!cfg->scene_rig) {
        PC_ERR(err, errlen, "capture: scene '%s' needs a rig (the .pto whose cameras see it)", cfg->scene);
        return PC_EINVAL;
    }
    if (!(cfg->scene_seconds >= 0.0 && cfg->scene_seconds <= 600.0)) {
        PC_ERR(err, errlen, "capture: scene length %g s is out of range (0 = 2 s, up to 600)", cfg->scene_seconds);
        return PC_EINVAL;
    }
    char e2[400];
    if (pc_rig_check_cameras(cfg->scene_rig, cfg->n_cameras, cfg->cam[0].width, cfg->cam[0].height, e2,
                             sizeof e2)) {
        PC_ERR(err, errlen, "capture: scene '%s': %s", cfg->scene, e2);
        return PC_EINVAL;
    }
    return 0;
}

/* Everything that can be checked without touching a camera. */
static int validate(const pc_capture_config *cfg, char *err, size_t errlen)
{
    char lab[80], lab2[80];
    if (cfg->source != PC_SOURCE_GIGE && cfg->source != PC_SOURCE_FAKE &&
        cfg->source != PC_SOURCE_FILE) {
        PC_ERR(err, errlen, "capture: unknown source kind %d (gige, fake or file)", (int)cfg->source);
        return PC_EINVAL;
    }
    if ((cfg->alloc == NULL) != (cfg->free == NULL)) {
        PC_ERR(err, errlen, "capture: alloc and free must be given together");
        return PC_EINVAL;
    }
    if (!(cfg->deadline_periods > 0.0 && cfg->deadline_periods <= 20.0)) {
        PC_ERR(err, errlen, "capture: deadline %g frame periods is out of range (0, 20]",
               cfg->deadline_periods);
        return PC_EINVAL;
    }
    if (!(cfg->max_skew_ms >= 0.0 && cfg->max_skew_ms <= 1000.0)) {
        PC_ERR(err, errlen, "capture: max_skew %g ms is out of range [0, 1000] (0 = half a frame period)",
               cfg->max_skew_ms);
        return PC_EINVAL;
    }
    if (cfg->pool_sets < 1 || cfg->pool_sets > 64) {
        PC_ERR(err, errlen, "capture: pool of %d frame sets is out of range 1..64", cfg->pool_sets);
        return PC_EINVAL;
    }
    if (cfg->source == PC_SOURCE_FILE) {
        if (!cfg->file || !*cfg->file) {
            PC_ERR(err, errlen, "capture: source file needs a file path");
            return PC_EINVAL;
        }
        if (cfg->n_cameras < 0 || cfg->n_cameras > PC_CAPTURE_MAX_CAMERAS) {
            PC_ERR(err, errlen, "capture: %d cameras is out of range 0..%d", cfg->n_cameras,
                   PC_CAPTURE_MAX_CAMERAS);
            return PC_EINVAL;
        }
        if (!(cfg->fps >= 0.0 && cfg->fps <= 1000.0)) {
            PC_ERR(err, errlen, "capture: fps %g is out of range (0 = the file's, up to 1000)", cfg->fps);
            return PC_EINVAL;
        }
        return 0;
    }
    if (cfg->n_cameras < 1 || cfg->n_cameras > PC_CAPTURE_MAX_CAMERAS) {
        PC_ERR(err, errlen, "capture: %d cameras is out of range 1..%d", cfg->n_cameras,
               PC_CAPTURE_MAX_CAMERAS);
        return PC_EINVAL;
    }
    if (!(cfg->fps > 0.0 && cfg->fps <= 1000.0)) {
        PC_ERR(err, errlen, "capture: fps %g is out of range (0, 1000]", cfg->fps);
        return PC_EINVAL;
    }
    int n = cfg->n_cameras;
    int slab_used[PC_CAPTURE_MAX_CAMERAS] = {0};
    for (int i = 0; i < n; i++) {
        const pc_camera_config *k = &cfg->cam[i];
        cam_label(cfg, i, lab, sizeof lab);
        if (cfg->source == PC_SOURCE_GIGE && (!k->address || !*k->address)) {
            PC_ERR(err, errlen, "camera %d: address is empty (give its IP, serial or device id)", i);
            return PC_EINVAL;
        }
        if (k->pixel_format && strcmp(k->pixel_format, "auto") == 0) {
            const char *p0 = cfg->cam[0].pixel_format;
            if (i > 0 && (!p0 || strcmp(p0, "auto") != 0)) {
                PC_ERR(err, errlen, "camera %d (%s): pixel format auto differs from camera 0's %s; "
                       "all cameras of one capture send the same format", i, lab, p0 ? p0 : "(8-bit)");
                return PC_EINVAL;
            }
            if ((unsigned)k->cfa > PC_CFA_BGGR) {
                PC_ERR(err, errlen, "camera %d (%s): Bayer pattern %d is not one of RGGB, GRBG, GBRG, BGGR",
                       i, lab, (int)k->cfa);
                return PC_EINVAL;
            }
        } else if (k->pixel_format) {
            int cf = pc_cfa_from_pixel_format_name(k->pixel_format);
            if (cf < 0) {
                PC_ERR(err, errlen, "camera %d (%s): pixel format '%s' is not supported (panocap takes "
                       "Bayer{RG,GR,GB,BG} followed by 8, 10, 12, 10p, 12p, 10Packed or 12Packed)",
                       i, lab, k->pixel_format);
                return PC_EINVAL;
            }
            const char *p0 = cfg->cam[0].pixel_format;
            if (i > 0 && (!p0 || strcmp(p0, k->pixel_format) != 0)) {
                PC_ERR(err, errlen, "camera %d (%s): pixel format %s differs from camera 0's %s; "
                       "all cameras of one capture send the same format", i, lab, k->pixel_format,
                       p0 ? p0 : "(8-bit)");
                return PC_EINVAL;
            }
        } else if ((unsigned)k->cfa > PC_CFA_BGGR) {
            PC_ERR(err, errlen, "camera %d (%s): Bayer pattern %d is not one of RGGB, GRBG, GBRG, BGGR",
                   i, lab, (int)k->cfa);
            return PC_EINVAL;
        }
        if (k->width < PC_MIN_DIM || k->height < PC_MIN_DIM || k->width > 16384 || k->height > 16384) {
            PC_ERR(err, errlen, "camera %d (%s): region %dx%d is out of range %d..16384",
                   i, lab, k->width, k->height, PC_MIN_DIM);
            return PC_EINVAL;
        }
        if ((k->width | k->height) & 1) {
            PC_ERR(err, errlen, "camera %d (%s): region %dx%d has an odd %s; Bayer frames need an "
                   "even width and height", i, lab, k->width, k->height,
                   (k->width & 1) ? "width" : "height");
            return PC_EINVAL;
        }
        if (k->offset_x < 0 || k->offset_y < 0 || ((k->offset_x | k->offset_y) & 1)) {
            PC_ERR(err, errlen, "camera %d (%s): region offset %d,%d must be even and >= 0 "
                   "(an odd offset shifts the Bayer phase)", i, lab, k->offset_x, k->offset_y);
            return PC_EINVAL;
        }
        if (k->packet_size != 0 && (k->packet_size < 576 || k->packet_size > 65000)) {
            PC_ERR(err, errlen, "camera %d (%s): packet size %d is out of range 576..65000 (0 = negotiate)",
                   i, lab, k->packet_size);
            return PC_EINVAL;
        }
        if (k->socket_buffer < 0 || k->packet_timeout_ms < 0 || k->frame_retention_ms < 0) {
            PC_ERR(err, errlen, "camera %d (%s): socket buffer, packet timeout and frame retention "
                   "must be >= 0", i, lab);
            return PC_EINVAL;
        }
        if ((unsigned)k->trigger > PC_TRIGGER_HARDWARE) {
            PC_ERR(err, errlen, "camera %d (%s): trigger mode %d is not free-run, software or hardware",
                   i, lab, (int)k->trigger);
            return PC_EINVAL;
        }
        if (isfinite(k->exposure_us) && k->exposure_us > 1e8) {
            PC_ERR(err, errlen, "camera %d (%s): exposure %g us is out of range", i, lab, k->exposure_us);
            return PC_EINVAL;
        }
        int parts = k->image_parts > 0 ? k->image_parts : n;
        if (k->image_parts < 0 || k->image_part >= parts) {
            PC_ERR(err, errlen, "camera %d (%s): image part %d of %d is out of range", i, lab,
                   k->image_part, parts);
            return PC_EINVAL;
        }
        int slab = k->slab >= 0 ? k->slab : i;
        if (slab >= n) {
            PC_ERR(err, errlen, "camera %d (%s): slab %d is out of range 0..%d", i, lab, slab, n - 1);
            return PC_EINVAL;
        }
        if (slab_used[slab]) {
            PC_ERR(err, errlen, "camera %d (%s): slab %d is already taken by camera %d", i, lab,
                   slab, slab_used[slab] - 1);
            return PC_EINVAL;
        }
        slab_used[slab] = i + 1;
        /* the stacked panorama is one Bayer image: one size, one phase */
        const pc_camera_config *k0 = &cfg->cam[0];
        int cf = k->pixel_format ? pc_cfa_from_pixel_format_name(k->pixel_format) : (int)k->cfa;
        int cf0 = k0->pixel_format ? pc_cfa_from_pixel_format_name(k0->pixel_format) : (int)k0->cfa;
        if (i > 0 && (k->width != k0->width || k->height != k0->height)) {
            PC_ERR(err, errlen, "camera %d (%s): region %dx%d differs from camera 0's %dx%d; "
                   "stacked slabs must have one size", i, lab, k->width, k->height,
                   k0->width, k0->height);
            return PC_EINVAL;
        }
        if (i > 0 && cf != cf0) {
            PC_ERR(err, errlen, "camera %d (%s): Bayer pattern %s differs from camera 0's %s; "
                   "the stacked panorama needs one CFA phase (shift the region offset by one pixel)",
                   i, lab, pc_cfa_name((pc_cfa)cf), pc_cfa_name((pc_cfa)cf0));
            return PC_EINVAL;
        }
        for (int j = 0; j < i; j++) {
            cam_label(cfg, j, lab2, sizeof lab2);
            if (strcasecmp(lab, lab2) == 0) {
                PC_ERR(err, errlen, "camera %d (%s): address duplicates camera %d; each camera "
                       "can be opened once", i, lab, j);
                return PC_EINVAL;
            }
        }
    }
    return validate_scene(cfg, err, errlen);
}

/* --- allocation ---------------------------------------------------------- */

static void *cap_alloc(pc_capture *c, size_t size)
{
    void *p = NULL;
    if (c->cfg.alloc)
        p = c->cfg.alloc(size, c->cfg.alloc_user);
    else if (posix_memalign(&p, 4096, size) != 0)
        p = NULL;
    if (!p)
        return NULL;
    void **nb = realloc(c->blocks, (size_t)(c->nblocks + 1) * sizeof *nb);
    if (!nb) {
        if (c->cfg.free)
            c->cfg.free(p, c->cfg.alloc_user);
        else
            free(p);
        return NULL;
    }
    c->blocks = nb;
    c->blocks[c->nblocks++] = p;
    memset(p, 0, size); /* fault every page in now, not in the frame loop */
    return p;
}

static int alloc_buffers(pc_capture *c, char *err, size_t errlen)
{
    size_t frame = c->slab_bytes;
    int nslots = c->pool_sets + c->max_open + PC_STREAM_SLOTS;
    for (int i = 0; i < c->n; i++) {
        c->cam[i].slots = calloc((size_t)nslots, sizeof(pc_slot));
        if (!c->cam[i].slots)
            goto oom;
        c->cam[i].nslots = nslots;
    }
    if (c->ops->stacked_layout) {
        /* slot p of every camera is slab (camera's slab) of panorama p */
        for (int p = 0; p < nslots; p++) {
            uint8_t *pano = cap_alloc(c, frame * c->n);
            if (!pano)
                goto oom;
            for (int i = 0; i < c->n; i++)
                c->cam[i].slots[p].data = pano + (size_t)c->cam[i].slab * frame;
        }
    } else {
        size_t stride = (frame + 4095) & ~(size_t)4095;
        for (int i = 0; i < c->n; i++) {
            uint8_t *blk = cap_alloc(c, stride * nslots);
            if (!blk)
                goto oom;
            for (int p = 0; p < nslots; p++)
                c->cam[i].slots[p].data = blk + stride * p;
        }
    }
    for (int i = 0; i < c->n; i++)
        for (int p = 0; p < nslots; p++) {
            c->cam[i].slots[p].cam = i;
            c->cam[i].slots[p].index = p;
            c->cam[i].slots[p].state = SLOT_FREE;
        }
    c->grey = cap_alloc(c, frame);
    if (!c->grey)
        goto oom;
    memset(c->grey, 128, frame);

    c->nsets = c->pool_sets + c->max_open + 1;
    c->sets = calloc((size_t)c->nsets, sizeof(pc_setint));
    c->ready = calloc((size_t)c->pool_sets, sizeof(pc_setint *));
    if (!c->sets || !c->ready)
        goto oom;
    return 0;
oom:
    PC_ERR(err, errlen, "capture: cannot allocate %d frame buffers of %dx%d for %d cameras",
           nslots, c->width, c->height, c->n);
    return PC_ENOMEM;
}

/* --- slots and sets (lock held) ----------------------------------------- */

static void slot_ref(pc_slot *s)
{
    s->refs++;
    s->state = SLOT_CORE;
}

static void slot_unref(pc_capture *c, pc_slot *s)
{
    if (!s)
        return;
    if (--s->refs == 0) {
        s->state = SLOT_FREE;
        c->ops->requeue(c, s);
        pthread_cond_broadcast(&c->cond_free);
    }
}

static void set_release_locked(pc_capture *c, pc_setint *s)
{
    for (int k = 0; k < c->n; k++) {
        slot_unref(c, s->src[k]);
        s->src[k] = NULL;
    }
    s->state = SET_FREE;
    s->filled = 0;
}

static pc_setint *set_alloc_locked(pc_capture *c)
{
    for (int i = 0; i < c->nsets; i++)
        if (c->sets[i].state == SET_FREE) {
            pc_setint *s = &c->sets[i];
            memset(s->src, 0, sizeof s->src);
            s->filled = 0;
            s->repaired = 0;
            return s;
        }
    return NULL; /* cannot happen: nsets covers open + pool */
}

/* THE place where frame sets are dropped. The consumer has pool_sets sets
 * queued or held: the oldest queued set goes (it is the stalest), or the
 * new one if the consumer holds them all. */
static void publish_locked(pc_capture *c, pc_setint *s, int64_t now)
{
    c->sst.sets_emitted++;
    if (!s->pub.substituted)
        c->sst.sets_complete++;
    if (c->ready_count + c->held >= c->pool_sets) {
        pc_setint *victim;
        if (c->ready_count > 0) {
            victim = c->ready[c->ready_head];
            c->ready_head = (c->ready_head + 1) % c->pool_sets;
            c->ready_count--;
        } else {
            victim = s;
            s = NULL;
        }
        c->sst.sets_dropped++;
        if (now - c->last_drop_log_ns > 5000000000LL) {
            c->last_drop_log_ns = now;
            pc_log(c->log, PC_LOG_WARNING,
                   "capture: consumer is behind (%d sets queued, %d held): dropping frame set %llu "
                   "(%llu dropped so far)", c->ready_count, c->held,
                   (unsigned long long)victim->pub.index, (unsigned long long)c->sst.sets_dropped);
        }
        set_release_locked(c, victim);
        if (!s)
            return;
    }
    s->state = SET_READY;
    c->ready[(c->ready_head + c->ready_count) % c->pool_sets] = s;
    c->ready_count++;
    pthread_cond_signal(&c->cond_ready);
}

static void fill_public(pc_capture *c, pc_setint *s, int64_t pts, int64_t now)
{
    pc_frameset *p = &s->pub;
    p->index = c->next_index++;
    if (c->have_emitted && pts <= c->last_pts)
        pts = c->last_pts + 1;
    c->last_pts = pts;
    p->pts_ns = pts;
    p->t_complete_ns = now;
    p->n = c->n;
    p->width = c->width;
    p->height = c->height;
    p->cfa = c->cfa;
    p->fmt = c->fmt;
    p->slab_bytes = c->slab_bytes;
    size_t pitch = c->fmt.packing == PC_PACK_8 ? (size_t)c->width
                   : c->slab_bytes % (size_t)c->height ? 0 : c->slab_bytes / (size_t)c->height;
    int contiguous = 1;
    for (int k = 0; k < c->n; k++) {
        p->slab[k] = s->src[k] ? s->src[k]->data : c->grey;
        p->pitch[k] = pitch;
        p->camera[k] = c->slab_cam[k];
        if (p->slab[k] != p->slab[0] + (size_t)k * c->slab_bytes)
            contiguous = 0;
    }
    /* stacked: one 8-bit panorama (raw formats go through the colour stage) */
    contiguous &= c->fmt.packing == PC_PACK_8;
    p->stacked = contiguous ? p->slab[0] : NULL;
    p->stacked_pitch = contiguous ? (size_t)c->width : 0;
    p->skew_ns = 0; /* emit_locked times the live slabs (skew.c) */
    p->skew_slabs = 0;
    for (int k = 0; k < c->n; k++)
        p->skew_offset_ns[k] = 0;
}

static void emit_locked(pc_capture *c, pc_setint *s, int64_t now);

/* Grid slots last_k+1 .. to-1 get no set (a stall of the host longer than
 * the queue: it would keep only the last pool_sets of them anyway). They
 * are counted where every lost set is counted, as emitted and dropped,
 * with a gap in the set numbers: periods stays equal to sets_emitted and
 * the daemon reports them as dropped frames. last_k moves past them. */
static void skip_slots_locked(pc_capture *c, int64_t to, int64_t now)
{
    int64_t n = to - (c->last_k + 1);
    if (n <= 0)
        return;
    c->sst.sets_emitted += (uint64_t)n;
    c->sst.sets_dropped += (uint64_t)n;
    c->next_index += (uint64_t)n;
    c->last_k = to - 1;
    if (now - c->last_drop_log_ns > 5000000000LL) {
        c->last_drop_log_ns = now;
        pc_log(c->log, PC_LOG_WARNING, "capture: %lld frame periods (%.0f ms) got no set after a "
               "stall of the host: counted as dropped (%llu dropped so far)", (long long)n,
               (double)n * (double)c->period_ns / 1e6, (unsigned long long)c->sst.sets_dropped);
    }
}

/* A set for grid slot k that no frame opened, every slab substituted. It
 * goes out at once, so it never takes a place among the open sets: with
 * max_open sets open (frames waiting for resends on a loaded host) a
 * skipped slot still gets its set; nsets keeps one set for it. */
static int emit_filler_locked(pc_capture *c, int64_t k, int64_t now)
{
    pc_setint *s = set_alloc_locked(c);
    if (!s)
        return -1;
    s->state = SET_OPEN;
    s->k = k;
    s->pub.t_first_ns = now;
    s->deadline_ns = now;
    emit_locked(c, s, now);
    return 0;
}

static void emit_locked(pc_capture *c, pc_setint *s, int64_t now)
{
    /* every frame period gets a set: slots skipped since the last one
     * (no frame of any camera for them) go out first, substituted */
    if (c->have_emitted && c->have_last_k && s->k > c->last_k + 1) {
        if (s->k - (c->last_k + 1) > c->pool_sets)
            skip_slots_locked(c, s->k - c->pool_sets, now); /* a long stall (a suspended host) */
        for (int64_t j = c->last_k + 1; j < s->k; j++)
            if (emit_filler_locked(c, j, now)) {
                skip_slots_locked(c, s->k, now); /* no free set: cannot happen (nsets) */
                break;
            }
    }
    /* take it out of the open list (it is open[0]; a filler never was in it) */
    int pos = 0;
    while (pos < c->n_open && c->open[pos] != s)
        pos++;
    if (pos < c->n_open) {
        for (int i = pos; i + 1 < c->n_open; i++)
            c->open[i] = c->open[i + 1];
        c->n_open--;
    }
    c->have_last_k = 1;
    c->last_k = s->k;
    /* cameras start a few ms apart: sets before the first complete one are
     * not worth substituting, for up to 2 s */
    if (!c->have_emitted && s->filled < c->n && now - c->start_ns < 2000000000LL) {
        c->sst.sets_startup++;
        set_release_locked(c, s);
        return;
    }

    s->pub.substituted = 0;
    s->pub.grey = 0;
    s->pub.repaired = s->repaired;
    if (c->have_emitted_k && s->k > c->emitted_k)
        c->sst.periods += (uint64_t)(s->k - c->emitted_k);
    else if (!c->have_emitted_k)
        c->sst.periods++;
    c->have_emitted_k = 1;
    c->emitted_k = s->k;
    if (s->filled == 0)
        c->sst.sets_no_frame++;
    if (s->filled - __builtin_popcount(s->repaired) <= 0)
        c->sst.sets_no_complete++;
    if (s->filled < c->n) {
        char miss[64] = "";
        for (int k = 0, o = 0; k < c->n && o < 60; k++)
            if (!s->src[k])
                o += snprintf(miss + o, sizeof miss - o, " %d", c->slab_cam[k]);
        pc_log(c->log, PC_LOG_DEBUG, "capture: set slot %lld out with %d of %d slabs after %.2f ms%s, "
               "missing camera(s)%s", (long long)s->k, s->filled, c->n,
               (now - s->pub.t_first_ns) / 1e6, s->deadline_ns <= now ? " (deadline)" : " (forced)",
               miss);
    }
    for (int k = 0; k < c->n; k++) {
        if (s->src[k])
            continue;
        pc_cam *cam = &c->cam[c->slab_cam[k]];
        cam->st.frames_substituted++;
        s->pub.substituted |= 1u << k;
        if (cam->last_good) {
            slot_ref(cam->last_good);
            s->src[k] = cam->last_good;
            s->pub.frame_id[k] = cam->last_good->frame_id;
        } else {
            s->pub.grey |= 1u << k;
            s->pub.frame_id[k] = 0;
        }
    }
    /* A later substitute repeats the newest frame a set has carried out,
     * never one already waiting in a newer open set (that one would show
     * out of order: 27, 29, 28, 29). The reference outlives the set. */
    for (int k = 0; k < c->n; k++) {
        pc_cam *cam = &c->cam[c->slab_cam[k]];
        if (!(s->pub.substituted & (1u << k)) && s->src[k] && s->src[k] != cam->last_good) {
            slot_ref(s->src[k]);
            slot_unref(c, cam->last_good);
            cam->last_good = s->src[k];
        }
    }
    int64_t pts = c->boundary_ns + s->k * c->period_ns + c->period_ns / 2;
    fill_public(c, s, pts, now);
    pc_cap_skew_locked(c, s, now);
    c->have_emitted = 1;
    publish_locked(c, s, now);
}

/* Emits, in order, every open set that is complete or past its deadline. */
static void emit_due_locked(pc_capture *c, int64_t now)
{
    while (c->n_open > 0) {
        pc_setint *s = c->open[0];
        if (s->filled == c->n || s->deadline_ns <= now)
            emit_locked(c, s, now);
        else
            break;
    }
}

/* Places the grid boundary in the middle of the largest gap between the
 * phases of the cameras seen in the last second. */
static void rephase_locked(pc_capture *c, int64_t now)
{
    int64_t ph[PC_CAPTURE_MAX_CAMERAS];
    int m = 0;
    for (int i = 0; i < c->n; i++)
        if (c->cam[i].have_off && now - c->cam[i].phase_seen_ns < 1000000000LL)
            ph[m++] = c->cam[i].phase_ns;
    if (m == 0)
        return;
    for (int i = 1; i < m; i++) /* insertion sort, m <= 16 */
        for (int j = i; j > 0 && ph[j - 1] > ph[j]; j--) {
            int64_t t = ph[j];
            ph[j] = ph[j - 1];
            ph[j - 1] = t;
        }
    int64_t best_gap = -1, best_mid = 0;
    for (int i = 0; i < m; i++) {
        int64_t a = ph[i], b = (i + 1 < m) ? ph[i + 1] : ph[0] + c->period_ns;
        if (b - a > best_gap) {
            best_gap = b - a;
            best_mid = a + (b - a) / 2;
        }
    }
    int64_t shift = mod_pos(best_mid, c->period_ns);
    if (shift > c->period_ns / 2)
        shift -= c->period_ns; /* move by less than half a period */
    c->boundary_ns += shift;
    for (int i = 0; i < c->n; i++)
        c->cam[i].phase_ns = mod_pos(c->cam[i].phase_ns - shift, c->period_ns);
    c->last_rephase_ns = now;
    c->sst.rephases++;
    pc_log(c->log, PC_LOG_DEBUG, "capture: set grid moved by %.3f ms (camera phases drifted)",
           shift / 1e6);
}

static int64_t cam_time_locked(pc_capture *c, pc_cam *cam, int64_t cam_ts, int64_t now)
{
    if (cam_ts == 0)
        return now;
    int64_t sample = now - cam_ts;
    int64_t creep = c->period_ns / 10000 + 1; /* 100 ppm of a period per frame */
    if (!cam->have_off || llabs(sample - cam->off_ns) > 1000000000LL) {
        cam->off_ns = sample; /* first frame, or the camera clock jumped */
        cam->have_off = 1;
    } else if (sample < cam->off_ns) {
        cam->off_ns = sample;
    } else {
        int64_t up = sample - cam->off_ns;
        cam->off_ns += up < creep ? up : creep;
    }
    return cam_ts + cam->off_ns;
}

/* --- incomplete frames ---------------------------------------------------- */

#define MARK_STEP 256
#define MARK_WORD 0xC35AA53Cu
#define LOSS_WINDOW_NS 2000000000LL
#define LOSS_WARN 0.05   /* share of incomplete frames in a window that warns */
#define LOSS_CLEAR 0.01  /* ... and that ends the warning */

/* Mark offsets: every MARK_STEP bytes, and the frame's last 4 bytes (so
 * that a lost last packet shorter than MARK_STEP leaves one too). The
 * offset after mark o, or size when o is the last. */
static size_t mark_next(size_t o, size_t size)
{
    size_t e = size - 4;
    if (o + MARK_STEP <= e)
        return o + MARK_STEP;
    return o + 4 <= e ? e : size;
}

static int mark_intact(const pc_slot *slot, size_t o)
{
    uint32_t v;
    memcpy(&v, slot->data + o, 4);
    return v == MARK_WORD;
}

void pc_cap_mark_slot(pc_capture *c, pc_slot *slot)
{
    const uint32_t m = MARK_WORD;
    size_t size = c->slab_bytes;
    for (size_t o = 0; size >= 4 && o < size; o = mark_next(o, size))
        memcpy(slot->data + o, &m, 4);
}

/* Image-data packets of a marked frame that never arrived. GVSP data
 * packet i carries bytes [i*P, (i+1)*P) of the frame and arrives whole or
 * not at all: it is missing when every mark wholly inside it is still
 * there (P >= 540 bytes holds at least two). P = 0: not counted. */
static uint64_t lost_packets_locked(const pc_capture *c, const pc_slot *slot, size_t P)
{
    size_t size = c->slab_bytes;
    uint64_t lost = 0;
    size_t cur = (size_t)-1;
    int marks = 0, intact = 0;
    for (size_t o = 0; P && size >= 4 && o < size; o = mark_next(o, size)) {
        size_t i = o / P;
        if ((o + 3) / P != i)
            continue; /* across two packets: either may have written it */
        if (i != cur) {
            lost += marks && intact == marks;
            cur = i;
            marks = intact = 0;
        }
        marks++;
        intact += mark_intact(slot, o);
    }
    return lost + (marks && intact == marks);
}

/* Fills every line of slot that may hold bytes of a lost packet (a mark
 * still there: the lost bytes lie between the neighbouring marks that were
 * overwritten) from prev. Returns the lines filled. Rows are
 * slab_bytes / height bytes (packed formats too); where that is not whole
 * the bytes themselves are filled. */
static int repair_locked(pc_capture *c, pc_slot *slot, const uint8_t *prev)
{
    size_t size = c->slab_bytes, h = (size_t)c->height;
    size_t w = size % h ? 0 : size / h;
    int64_t last = -1;
    int lines = 0;
    for (size_t prev_o = 0, o = 0; size >= 4 && o < size; prev_o = o, o = mark_next(o, size)) {
        if (!mark_intact(slot, o))
            continue;
        size_t lo = o ? prev_o + 4 : 0;
        size_t hi = mark_next(o, size);
        if (!w) {
            memcpy(slot->data + lo, prev + lo, hi - lo);
            for (int64_t r = (int64_t)(lo * h / size); r <= (int64_t)((hi - 1) * h / size); r++)
                if (r > last) {
                    last = r;
                    lines++;
                }
            continue;
        }
        for (int64_t r = (int64_t)(lo / w); r <= (int64_t)((hi - 1) / w); r++) {
            if (r <= last)
                continue;
            memcpy(slot->data + (size_t)r * w, prev + (size_t)r * w, w);
            last = r;
            lines++;
        }
    }
    return lines;
}

/* Counts a frame into the camera's loss window; warns once when a camera's
 * frames are mostly incomplete, and says when that ends. */
static void loss_window_locked(pc_capture *c, int ci, int bad, int64_t now)
{
    pc_cam *cam = &c->cam[ci];
    if (!cam->win_start_ns)
        cam->win_start_ns = now;
    cam->win_frames++;
    cam->win_bad += bad != 0;
    if (now - cam->win_start_ns < LOSS_WINDOW_NS)
        return;
    double share = cam->win_frames ? (double)cam->win_bad / (double)cam->win_frames : 0.0;
    if (!cam->loss_warned && share > LOSS_WARN) {
        cam->loss_warned = 1;
        pc_log(c->log, PC_LOG_WARNING, "capture: camera %d (%s): %.0f %% of its frames incomplete in "
               "the last %.0f s (%llu packets missing, %llu resent so far): packet loss on its link; "
               "missing lines are filled from its previous frame", ci, cam->name, 100.0 * share,
               LOSS_WINDOW_NS / 1e9, (unsigned long long)cam->st.packets_missing,
               (unsigned long long)cam->st.packets_resent);
    } else if (cam->loss_warned && share < LOSS_CLEAR) {
        cam->loss_warned = 0;
        pc_log(c->log, PC_LOG_NOTICE, "capture: camera %d (%s): frames complete again", ci, cam->name);
    }
    cam->win_start_ns = now;
    cam->win_frames = cam->win_bad = 0;
}

static void frame_in(pc_capture *c, int ci, pc_slot *slot, int reason, int64_t cam_ts,
                     uint64_t frame_id, int64_t arrival, int partial)
{
    int64_t now = pc_now_ns();
    if (arrival <= 0 || arrival > now || arrival < now - 1000000000LL)
        arrival = now;
    pthread_mutex_lock(&c->lock);
    pc_cam *cam = &c->cam[ci];
    cam->st.frames_received++;
    slot->state = SLOT_CORE;
    slot->refs = 0;
    loss_window_locked(c, ci, reason >= 0, now);
    if (reason >= 0) {
        cam->st.frames_failed[reason < PC_FAIL_COUNT ? reason : PC_FAIL_OTHER]++;
        if (!partial || c->stopping) {
            slot->state = SLOT_FREE;
            c->ops->requeue(c, slot);
            pthread_mutex_unlock(&c->lock);
            return;
        }
        cam->st.packets_missing += lost_packets_locked(c, slot, cam->packet_payload);
        int lines = repair_locked(c, slot, cam->last_good ? cam->last_good->data : c->grey);
        cam->st.frames_repaired++;
        cam->st.lines_repaired += (uint64_t)lines;
    }
    if (c->stopping) {
        slot->state = SLOT_FREE;
        c->ops->requeue(c, slot);
        pthread_mutex_unlock(&c->lock);
        return;
    }
    slot->frame_id = frame_id;
    cam->st.last_timestamp_ns = cam_ts;
    cam->st.last_arrival_ns = now;
    cam->st.last_frame_id = frame_id;

    int64_t t = cam_time_locked(c, cam, cam_ts, arrival);
    if (!c->have_boundary) {
        c->boundary_ns = t - c->period_ns / 2;
        c->have_boundary = 1;
        c->last_rephase_ns = now;
    }
    cam->phase_ns = mod_pos(t - c->boundary_ns, c->period_ns);
    cam->phase_seen_ns = now;
    int64_t margin = c->period_ns / 8;
    if ((cam->phase_ns < margin || cam->phase_ns > c->period_ns - margin) &&
        (!c->have_emitted || now - c->last_rephase_ns > 10 * c->period_ns))
        rephase_locked(c, now);
    int64_t k = floor_div(t - c->boundary_ns, c->period_ns);
    if (c->have_last_k && k <= c->last_k) {
        cam->st.frames_late++;
        pc_log(c->log, PC_LOG_DEBUG, "capture: camera %d frame %llu late: slot %lld, last emitted "
               "%lld, phase %.2f ms, arrived %.2f ms after its slot ended", ci,
               (unsigned long long)frame_id, (long long)k, (long long)c->last_k, cam->phase_ns / 1e6,
               (now - (c->boundary_ns + (k + 1) * c->period_ns)) / 1e6);
        goto discard;
    }
    pc_setint *s = NULL;
    int pos = 0;
    for (pos = 0; pos < c->n_open; pos++) {
        if (c->open[pos]->k == k) {
            s = c->open[pos];
            break;
        }
        if (c->open[pos]->k > k)
            break;
    }
    if (!s) {
        if (c->n_open == c->max_open) {
            if (pos == 0) { /* older than every open set, which are all newer: late */
                cam->st.frames_late++;
                goto discard;
            }
            c->sst.sets_forced++;
            emit_locked(c, c->open[0], now);
            pos--;
        }
        s = set_alloc_locked(c);
        if (!s) {
            cam->st.frames_late++;
            goto discard;
        }
        s->state = SET_OPEN;
        s->k = k;
        s->pub.t_first_ns = now;
        s->deadline_ns = now + (int64_t)(c->cfg.deadline_periods * (double)c->period_ns);
        for (int i = c->n_open; i > pos; i--)
            c->open[i] = c->open[i - 1];
        c->open[pos] = s;
        c->n_open++;
        if (pos == 0)
            pthread_cond_signal(&c->cond_sup);
    }
    if (s->src[cam->slab]) {
        /* a second frame of one camera for one slot (a camera that skipped
         * and then caught up): keep the one nearer the slot's centre */
        int64_t centre = c->boundary_ns + k * c->period_ns + c->period_ns / 2;
        pc_slot *old = s->src[cam->slab];
        cam->st.frames_late++;
        pc_log(c->log, PC_LOG_DEBUG, "capture: camera %d: frames %llu and %llu both in slot %lld, "
               "phase %.2f ms", ci, (unsigned long long)old->frame_id,
               (unsigned long long)frame_id, (long long)k, cam->phase_ns / 1e6);
        if (llabs(t - centre) >= llabs(s->t[cam->slab] - centre))
            goto discard;
        slot_unref(c, old); /* the set's reference; last_good moves below */
        s->src[cam->slab] = NULL;
        s->repaired &= ~(1u << cam->slab);
        s->filled--;
    }
    slot_ref(slot);
    s->src[cam->slab] = slot;
    s->t[cam->slab] = t;
    s->pub.frame_id[cam->slab] = frame_id;
    s->filled++;
    if (partial && reason >= 0)
        s->repaired |= 1u << cam->slab;
    else
        cam->st.frames_completed++;
    if (s->filled == c->n)
        emit_due_locked(c, now);
    pthread_mutex_unlock(&c->lock);
    return;
discard:
    slot->state = SLOT_FREE;
    c->ops->requeue(c, slot);
    pthread_mutex_unlock(&c->lock);
}

void pc_cap_frame(pc_capture *c, int ci, pc_slot *slot, int reason, int64_t cam_ts,
                  uint64_t frame_id, int64_t arrival)
{
    frame_in(c, ci, slot, reason, cam_ts, frame_id, arrival, 0);
}

void pc_cap_frame_partial(pc_capture *c, int ci, pc_slot *slot, int reason, int64_t cam_ts,
                          uint64_t frame_id, int64_t arrival)
{
    frame_in(c, ci, slot, reason < 0 ? PC_FAIL_MISSING_PACKETS : reason, cam_ts, frame_id, arrival, 1);
}

void pc_cap_whole_set(pc_capture *c, pc_slot **slots, int64_t pts, uint32_t substituted)
{
    int64_t now = pc_now_ns();
    pthread_mutex_lock(&c->lock);
    pc_setint *s = set_alloc_locked(c);
    if (!s || c->stopping) {
        for (int k = 0; k < c->n; k++) {
            slots[k]->state = SLOT_FREE;
            c->ops->requeue(c, slots[k]);
        }
        pthread_mutex_unlock(&c->lock);
        return;
    }
    for (int k = 0; k < c->n; k++) {
        pc_cam *cam = &c->cam[c->slab_cam[k]];
        cam->st.frames_received++;
        cam->st.frames_completed++;
        cam->st.last_arrival_ns = now;
        cam->st.last_timestamp_ns = pts;
        cam->st.last_frame_id = slots[k]->frame_id;
        if (substituted & (1u << k))
            cam->st.frames_substituted++;
        slots[k]->refs = 0;
        slot_ref(slots[k]);
        s->src[k] = slots[k];
        s->pub.frame_id[k] = slots[k]->frame_id;
    }
    s->pub.t_first_ns = now;
    s->pub.substituted = substituted;
    s->pub.grey = 0;
    fill_public(c, s, pts, now);
    c->have_emitted = 1;
    publish_locked(c, s, now);
    pthread_mutex_unlock(&c->lock);
}

void pc_cap_set_state(pc_capture *c, int ci, pc_cam_state st)
{
    pthread_mutex_lock(&c->lock);
    pc_cam *cam = &c->cam[ci];
    if (st == PC_CAM_LOST)
        cam->st.disconnects++;
    if (st == PC_CAM_STREAMING && (cam->st.state == PC_CAM_RECONNECTING || cam->st.state == PC_CAM_LOST))
        cam->st.reconnects++;
    /* the clock offset is kept across a reconnection: a camera whose clock
     * restarted shows a jump of more than a second and is re-measured */
    cam->st.state = st;
    pthread_mutex_unlock(&c->lock);
}

int pc_cap_stopping(pc_capture *c)
{
    return __atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE);
}

/* --- supervisor: deadlines ----------------------------------------------- */

/* Grid slots whose wait (slot end + deadline) is over and that no frame
 * opened get a set anyway, every slab substituted: the stream keeps its
 * frame rate when every camera loses the frame, or none answers (2 s after
 * start the grid is placed without them). Returns when to look again (0:
 * never, frames define time: file source, hardware trigger only). */
static int64_t emit_empty_locked(pc_capture *c, int64_t now)
{
    if (!c->started || c->cfg.source == PC_SOURCE_FILE)
        return 0;
    int hw = 1;
    for (int i = 0; i < c->n; i++)
        hw &= c->cam[i].cfg.trigger == PC_TRIGGER_HARDWARE;
    if (hw)
        return 0;
    /* longer than a set's own deadline: a frame merely late (a loaded
     * host) still gets its set; a slot skipped meanwhile is filled when
     * the next set goes out (emit_locked) */
    int64_t P = c->period_ns, wait = 3 * P + (int64_t)(c->cfg.deadline_periods * (double)P);
    if (!c->have_boundary) {
        if (now - c->start_ns < 2000000000LL)
            return c->start_ns + 2000000000LL;
        c->boundary_ns = now - wait;
        c->have_boundary = 1;
        c->last_rephase_ns = now;
    }
    int64_t k_due = floor_div(now - wait - c->boundary_ns, P); /* newest slot whose wait is over */
    int64_t k = c->have_last_k ? c->last_k + 1 : k_due;
    if (k_due - k > c->pool_sets + c->max_open) {
        /* a long stall (suspend?): not hundreds of sets at once; the queue
         * would keep only the last pool_sets (and never past an open set) */
        int64_t to = k_due - c->pool_sets;
        if (c->n_open > 0 && c->open[0]->k < to)
            to = c->open[0]->k;
        if (c->have_emitted_k && to > k) {
            skip_slots_locked(c, to, now); /* k is last_k + 1 */
            k = to;
        }
    }
    for (; k <= k_due; k++) {
        if (c->n_open > 0 && c->open[0]->k <= k)
            break; /* an open set comes first; its deadline emits it */
        if (emit_filler_locked(c, k, now))
            break;
    }
    return c->boundary_ns + (k + 1) * P + wait - P;
}

static void *supervisor(void *arg)
{
    pc_capture *c = arg;
    pthread_setname_np(pthread_self(), "pc-capture-sup");
    pthread_mutex_lock(&c->lock);
    while (!c->stopping) {
        int64_t now = pc_now_ns();
        emit_due_locked(c, now);
        int64_t wake = now + 200000000LL;
        int64_t next_empty = emit_empty_locked(c, now);
        if (next_empty > now && next_empty < wake)
            wake = next_empty; /* (when not later: an open set is in the way; its deadline wakes us) */
        if (c->n_open > 0 && c->open[0]->deadline_ns < wake)
            wake = c->open[0]->deadline_ns;
        struct timespec ts;
        abs_timespec(&ts, wake);
        pthread_cond_timedwait(&c->cond_sup, &c->lock, &ts);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* --- public API ---------------------------------------------------------- */

int pc_capture_check(const pc_capture_config *cfg, char *err, size_t errlen)
{
    int rc = validate(cfg, err, errlen);
    if (rc)
        return rc;
    if (cfg->source == PC_SOURCE_FILE) {
        pc_raw_reader *r = NULL;
        pc_raw_info info;
        rc = pc_raw_reader_open(&r, cfg->file, &info, err, errlen);
        if (rc)
            return rc;
        pc_raw_reader_close(r);
        if (cfg->n_cameras && cfg->n_cameras != info.n_cameras) {
            PC_ERR(err, errlen, "capture: raw file %s has %d cameras, the configuration %d (the file source "
                   "replays every camera of the file: set the camera count to %d)", cfg->file, info.n_cameras,
                   cfg->n_cameras, info.n_cameras);
            return PC_EINVAL;
        }
        if (info.n_sets == 0) {
            PC_ERR(err, errlen, "capture: raw file %s holds no complete frame set", cfg->file);
            return PC_EINVAL;
        }
        return 0;
    }
    for (int i = 0; cfg->source == PC_SOURCE_FAKE && i < cfg->n_cameras; i++) {
        const char *img = cfg->cam[i].image;
        struct stat sb;
        if (!img || (i > 0 && cfg->cam[i - 1].image && !strcmp(img, cfg->cam[i - 1].image)))
            continue;
        if (stat(img, &sb) != 0 || access(img, R_OK) != 0) {
            PC_ERR(err, errlen, "camera %d: picture %s: %s", i, img, strerror(errno));
            return PC_EINVAL;
        }
        if (!S_ISREG(sb.st_mode)) {
            PC_ERR(err, errlen, "camera %d: picture %s is not a file", i, img);
            return PC_EINVAL;
        }
        /* read as the fake camera will (fakepic.c): a file that is not a
         * readable picture is refused here, not when the cameras open */
        pc_image pic;
        char ierr[512];
        if (pc_image_read(img, &pic, ierr, sizeof ierr)) {
            PC_ERR(err, errlen, "camera %d: picture %s", i, ierr);
            return PC_EINVAL;
        }
        pc_image_free(&pic);
    }
    return 0;
}

int pc_capture_open(pc_capture **out, const pc_capture_config *cfg, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out || !cfg) {
        PC_ERR(err, errlen, "capture: no configuration");
        return PC_EINVAL;
    }
    *out = NULL;
    int rc = validate(cfg, err, errlen);
    if (rc)
        return rc;
    const pc_source_ops *ops = NULL;
    if (cfg->source == PC_SOURCE_FILE) {
        ops = &pc_source_file_ops;
    } else {
#if PANOCAP_HAVE_ARAVIS
        ops = &pc_source_arv_ops;
#else
        PC_ERR(err, errlen, "capture: source %s needs Aravis, and this build has none "
               "(only the file source is available)",
               cfg->source == PC_SOURCE_GIGE ? "gige" : "fake");
        return PC_ENOTSUP;
#endif
    }
    pc_capture *c = calloc(1, sizeof *c);
    if (!c) {
        PC_ERR(err, errlen, "capture: out of memory");
        return PC_ENOMEM;
    }
    c->cfg = *cfg;
    if (own_strings(c)) {
        free(c);
        PC_ERR(err, errlen, "capture: out of memory");
        return PC_ENOMEM;
    }
    c->log = cfg->log;
    c->ops = ops;
    c->pool_sets = cfg->pool_sets;
    c->n = cfg->n_cameras;
    c->fps = cfg->fps;
    if (cfg->source != PC_SOURCE_FILE) {
        const pc_camera_config *k0 = &c->cfg.cam[0];
        c->width = k0->width;
        c->height = k0->height;
        int auto_fmt = k0->pixel_format && strcmp(k0->pixel_format, "auto") == 0;
        c->cfa = k0->pixel_format && !auto_fmt ? (pc_cfa)pc_cfa_from_pixel_format_name(k0->pixel_format) : k0->cfa;
        c->fmt = (pc_rawfmt){8, PC_PACK_8, c->cfa};
        if (k0->pixel_format)
            pc_rawfmt_parse(k0->pixel_format, &c->fmt, NULL, 0);
        c->slab_bytes = pc_rawfmt_frame_bytes(&c->fmt, c->width, c->height);
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond_ready, &ca);
    pthread_cond_init(&c->cond_sup, &ca);
    pthread_cond_init(&c->cond_free, &ca);
    pthread_condattr_destroy(&ca);
    for (int i = 0; i < PC_CAPTURE_MAX_CAMERAS; i++) {
        pc_cam *cam = &c->cam[i];
        cam->cfg = c->cfg.cam[i];
        cam->index = i;
        cam->slab = cam->cfg.slab >= 0 ? cam->cfg.slab : i;
        cam_label(&c->cfg, i, cam->name, sizeof cam->name);
    }

    rc = c->ops->open(c, err, errlen); /* the file source sets n, geometry, fps here */
    if (rc) {
        pc_capture_close(c);
        return rc;
    }
    c->period_ns = (int64_t)(1e9 / c->fps);
    c->max_skew_ns = c->cfg.max_skew_ms > 0 ? (int64_t)(c->cfg.max_skew_ms * 1e6) : c->period_ns / 2;
    c->sst.max_skew_ns = c->max_skew_ns;
    c->max_open = (int)ceil(c->cfg.deadline_periods) + 2;
    if (c->max_open > PC_MAX_OPEN_SETS)
        c->max_open = PC_MAX_OPEN_SETS;
    for (int i = 0; i < c->n; i++) {
        pc_cam *cam = &c->cam[i];
        c->slab_cam[cam->slab] = i;
        snprintf(cam->st.name, sizeof cam->st.name, "%s", cam->name);
        cam->st.slab = cam->slab;
        cam->st.state = PC_CAM_IDLE;
    }
    c->slab_bytes = pc_rawfmt_frame_bytes(&c->fmt, c->width, c->height);
    rc = alloc_buffers(c, err, errlen);
    if (!rc)
        rc = c->ops->prepare(c, err, errlen);
    if (rc) {
        pc_capture_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

int pc_capture_n_cameras(const pc_capture *c) { return c ? c->n : 0; }

void pc_capture_rawfmt(const pc_capture *c, pc_rawfmt *fmt) { *fmt = c->fmt; }

void pc_capture_geometry(const pc_capture *c, int *width, int *height, pc_cfa *cfa, double *fps)
{
    if (width)
        *width = c->width;
    if (height)
        *height = c->height;
    if (cfa)
        *cfa = c->cfa;
    if (fps)
        *fps = c->fps;
}

int pc_capture_start(pc_capture *c, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!c || c->started) {
        PC_ERR(err, errlen, "capture: start called twice or without open");
        return PC_EINVAL;
    }
    /* set before the supervisor starts: it reads both (a race before) */
    c->started = 1;
    c->start_ns = pc_now_ns();
    if (pthread_create(&c->sup_thread, NULL, supervisor, c) != 0) {
        c->started = 0;
        PC_ERR(err, errlen, "capture: cannot start the supervisor thread");
        return PC_ENOMEM;
    }
    c->sup_started = 1;
    int rc = c->ops->start(c, err, errlen);
    if (rc) {
        pc_capture_stop(c);
        return rc;
    }
    return 0;
}

int pc_capture_next(pc_capture *c, int timeout_ms, pc_frameset **out)
{
    if (!c || !out)
        return PC_EINVAL;
    *out = NULL;
    int64_t until = timeout_ms >= 0 ? pc_now_ns() + (int64_t)timeout_ms * 1000000 : 0;
    pthread_mutex_lock(&c->lock);
    while (c->ready_count == 0) {
        if (c->eof || c->stopping) {
            pthread_mutex_unlock(&c->lock);
            return PC_CAPTURE_EOF;
        }
        if (timeout_ms < 0) {
            pthread_cond_wait(&c->cond_ready, &c->lock);
        } else {
            if (pc_now_ns() >= until) {
                pthread_mutex_unlock(&c->lock);
                return PC_CAPTURE_TIMEOUT;
            }
            struct timespec ts;
            abs_timespec(&ts, until);
            pthread_cond_timedwait(&c->cond_ready, &c->lock, &ts);
        }
    }
    pc_setint *s = c->ready[c->ready_head];
    c->ready_head = (c->ready_head + 1) % c->pool_sets;
    c->ready_count--;
    s->state = SET_HELD;
    c->held++;
    c->sets_delivered++;
    pthread_mutex_unlock(&c->lock);
    *out = &s->pub;
    return 0;
}

void pc_capture_release(pc_capture *c, pc_frameset *pub)
{
    if (!c || !pub)
        return;
    pc_setint *s = (pc_setint *)pub;
    pthread_mutex_lock(&c->lock);
    if (s->state == SET_HELD) {
        set_release_locked(c, s);
        c->held--;
        pthread_cond_broadcast(&c->cond_free);
    }
    pthread_mutex_unlock(&c->lock);
}

void pc_capture_stop(pc_capture *c)
{
    if (!c || !c->started)
        return;
    pthread_mutex_lock(&c->lock);
    if (c->stopping) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    __atomic_store_n(&c->stopping, 1, __ATOMIC_RELEASE);
    if (c->cfg.source != PC_SOURCE_FILE) {
        pc_log(c->log, PC_LOG_NOTICE, "capture: %llu frame periods, %llu sets emitted (%llu with no "
               "complete frame, %llu with no frame at all), %llu dropped (a slow consumer, a stalled host)",
               (unsigned long long)c->sst.periods, (unsigned long long)c->sst.sets_emitted,
               (unsigned long long)c->sst.sets_no_complete, (unsigned long long)c->sst.sets_no_frame,
               (unsigned long long)c->sst.sets_dropped);
        for (int i = 0; i < c->n; i++) {
            const pc_camera_stats *t = &c->cam[i].st;
            pc_log(c->log, PC_LOG_NOTICE, "capture: camera %d (%s): %llu frames complete, %llu "
                   "repaired (%llu lines filled), %llu incomplete, %llu substituted; packets: %llu "
                   "missing, %llu resent", i, c->cam[i].name, (unsigned long long)t->frames_completed,
                   (unsigned long long)t->frames_repaired, (unsigned long long)t->lines_repaired,
                   (unsigned long long)(t->frames_failed[PC_FAIL_MISSING_PACKETS] +
                                        t->frames_failed[PC_FAIL_TIMEOUT]),
                   (unsigned long long)t->frames_substituted, (unsigned long long)t->packets_missing,
                   (unsigned long long)t->packets_resent);
        }
    }
    pthread_cond_broadcast(&c->cond_sup);
    pthread_cond_broadcast(&c->cond_ready);
    pthread_cond_broadcast(&c->cond_free);
    pthread_mutex_unlock(&c->lock);
    c->ops->stop(c);
    if (c->sup_started) {
        pthread_join(c->sup_thread, NULL);
        c->sup_started = 0;
    }
    pthread_mutex_lock(&c->lock);
    /* sets still being assembled or queued are not delivered any more */
    while (c->n_open > 0) {
        pc_setint *s = c->open[--c->n_open];
        set_release_locked(c, s);
    }
    while (c->ready_count > 0) {
        pc_setint *s = c->ready[c->ready_head];
        c->ready_head = (c->ready_head + 1) % c->pool_sets;
        c->ready_count--;
        set_release_locked(c, s);
    }
    for (int i = 0; i < c->n; i++) {
        if (c->cam[i].last_good)
            slot_unref(c, c->cam[i].last_good);
        c->cam[i].last_good = NULL;
        c->cam[i].st.state = PC_CAM_STOPPED;
    }
    pthread_mutex_unlock(&c->lock);
}

void pc_capture_close(pc_capture *c)
{
    if (!c)
        return;
    pc_capture_stop(c);
    if (c->ops)
        c->ops->close(c);
    pc_scene_loop_destroy(c->scene_loop);
    pc_scene_destroy(c->scene);
    for (int i = 0; i < c->nblocks; i++) {
        if (c->cfg.free)
            c->cfg.free(c->blocks[i], c->cfg.alloc_user);
        else
            free(c->blocks[i]);
    }
    free(c->blocks);
    for (int i = 0; i < PC_CAPTURE_MAX_CAMERAS; i++)
        free(c->cam[i].slots);
    free(c->sets);
    free(c->ready);
    free(c->strings);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond_ready);
    pthread_cond_destroy(&c->cond_sup);
    pthread_cond_destroy(&c->cond_free);
    free(c);
}

double pc_capture_scene_time(const pc_capture *c, uint64_t frame_id)
{
    return c && c->scene_loop ? pc_scene_loop_time(c->scene_loop, frame_id) : NAN;
}

int pc_capture_stats(pc_capture *c, pc_camera_stats *out, int max)
{
    if (!c)
        return 0;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < c->n && i < max; i++)
        out[i] = c->cam[i].st;
    pthread_mutex_unlock(&c->lock);
    return c->n;
}

void pc_capture_set_stats(pc_capture *c, pc_set_stats *out)
{
    if (!c || !out)
        return;
    pthread_mutex_lock(&c->lock);
    *out = c->sst;
    out->sets_delivered = c->sets_delivered;
    pthread_mutex_unlock(&c->lock);
}

int pc_frameset_stack(const pc_frameset *s, uint8_t *dst, size_t pitch)
{
    if (!s || !dst || pitch < (size_t)s->width || s->fmt.packing != PC_PACK_8)
        return PC_EINVAL;
    if (s->stacked && dst == s->stacked)
        return 0;
    for (int k = 0; k < s->n; k++) {
        uint8_t *d = dst + (size_t)k * s->height * pitch;
        const uint8_t *src = s->slab[k];
        if (pitch == (size_t)s->width && s->pitch[k] == (size_t)s->width) {
            memcpy(d, src, (size_t)s->width * s->height);
            continue;
        }
        for (int y = 0; y < s->height; y++)
            memcpy(d + (size_t)y * pitch, src + (size_t)y * s->pitch[k], (size_t)s->width);
    }
    return 0;
}

#if !PANOCAP_HAVE_ARAVIS
int pc_capture_list_cameras(FILE *out, char *err, size_t errlen)
{
    PC_ERR(err, errlen, "capture: listing cameras needs Aravis, and this build has none");
    return PC_ENOTSUP;
}
#endif
