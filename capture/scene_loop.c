/* scene_loop.c - the fake cameras' frames of the simulated stadium,
 * rendered ahead so that drawing a frame costs a copy, not a ray trace.
 *
 * Per camera: the view without the moving objects (the background),
 * mosaiced with the camera's Bayer pattern. Per frame of the loop and
 * camera: the rectangles where a moving object or its shadow can change a
 * pixel (the corners of each object's bounding box, and of that box's
 * shadow on the ground, projected through the camera model, plus 3 pixels
 * for the supersampling's neighbourhood), rendered with the objects and
 * kept as Bayer patches. Outside them the renderer's values
 * are the background's bit for bit (a pixel depends only on its own and
 * its neighbours' rays), so a frame is the background plus its patches.
 *
 * The loop is played forwards, backwards, forwards...: frame n of the
 * fake camera shows rendered frame k = the triangle wave of n, scene time
 * k / fps, and the motion never jumps.
 */
#include "scene_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BOXES (4 * PC_SCENE_MAX_OBJECTS)

typedef struct loop_patch {
    int x, y, w, h;
    size_t off; /* into the frame's data */
} loop_patch;

typedef struct loop_frame {
    int npatch;
    loop_patch *patch;
    uint8_t *data;
    size_t pixels;
} loop_frame;

struct pc_scene_loop {
    int ncam, frames;
    double fps;
    pc_cfa cfa;
    int w[PC_RIG_MAX_CAMERAS], h[PC_RIG_MAX_CAMERAS];
    uint8_t *bg[PC_RIG_MAX_CAMERAS];
    loop_frame *fr; /* frames x ncam, frame-major */
    pc_scene_loop_info info;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What one camera needs to find its boxes. */
typedef struct loop_cam {
    pc_scene_eye eye;
    float axis[3];  /* optical axis, scene frame */
    float half_fov; /* largest angle between the axis and a corner ray */
} loop_cam;

typedef struct box {
    int x0, y0, x1, y1; /* inclusive .. exclusive */
} box;

/* scene direction -> rig world ray */
static void to_world(const float *d, float *w)
{
    w[0] = d[0];
    w[1] = d[2];
    w[2] = d[1];
}

/* The image rectangle holding the points pts (scene frame) as camera lc
 * sees them, 3 pixels around (the supersampling's neighbourhood and the
 * lens's curvature between the points), even corners (the mosaic's
 * phase); 0 when it misses the picture. The points are the corners of a
 * convex body (or of a convex region of the ground), so their images
 * bound its image. */
static int points_box(const loop_cam *lc, const float (*pts)[3], int n, box *b)
{
    const pc_scene_eye *e = &lc->eye;
    float xmin = 1e30f, xmax = -1e30f, ymin = 1e30f, ymax = -1e30f, amin = 1e30f, span = 0.0f;
    for (int k = 0; k < n; k++) {
        const float d[3] = {pts[k][0] - (float)PC_SCENE_RIG_X, pts[k][1] - (float)PC_SCENE_RIG_Y,
                            pts[k][2] - (float)PC_SCENE_RIG_Z};
        const float l = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        const float ca = (d[0] * lc->axis[0] + d[1] * lc->axis[1] + d[2] * lc->axis[2]) / l;
        amin = fminf(amin, acosf(ca > 1.0f ? 1.0f : ca < -1.0f ? -1.0f : ca));
        for (int q = 0; q < 3; q++)
            span = fmaxf(span, fabsf(pts[k][q] - pts[0][q]));
        float w[3], sx, sy;
        to_world(d, w);
        pc_cam_project(&e->cam, w, &sx, &sy);
        if (!(sx > -1e8f && sy > -1e8f)) /* behind the lens or past the fold */
            sx = -1e9f, sy = 1e9f;
        xmin = fminf(xmin, sx), xmax = fmaxf(xmax, sx);
        ymin = fminf(ymin, sy), ymax = fmaxf(ymax, sy);
    }
    /* A small body (under 10 m, so under 0.2 rad from the rig) whose
     * every corner lies outside the cone around the picture's corners
     * cannot reach into the picture. */
    if (span < 10.0f && amin > lc->half_fov + 0.01f)
        return 0;
    int x0 = (int)fmaxf(-4.0f, floorf(xmin) - 3), y0 = (int)fmaxf(-4.0f, floorf(ymin) - 3);
    int x1 = (int)fminf((float)e->w + 4, ceilf(xmax) + 4), y1 = (int)fminf((float)e->h + 4, ceilf(ymax) + 4);
    x0 = x0 < 0 ? 0 : x0 & ~1;
    y0 = y0 < 0 ? 0 : y0 & ~1;
    x1 = x1 >= e->w ? e->w : (x1 + 1) & ~1;
    y1 = y1 >= e->h ? e->h : (y1 + 1) & ~1;
    if (x0 >= x1 || y0 >= y1)
        return 0;
    b->x0 = x0, b->y0 = y0, b->x1 = x1, b->y1 = y1;
    return 1;
}

static long long area(const box *b)
{
    return (long long)(b->x1 - b->x0) * (b->y1 - b->y0);
}

/* The boxes of every object and of its shadow; two are merged where their
 * union costs no more pixels than both (else the overlap is drawn twice,
 * with the same values). */
static int frame_boxes(const sc_frame *f, const loop_cam *lc, box *out)
{
    int n = 0;
    for (int i = 0; i < f->nobj; i++) {
        const sc_obj *o = &f->obj[i];
        float pts[8][3];
        for (int k = 0; k < 8; k++) {
            pts[k][0] = (k & 1) ? o->hi[0] : o->lo[0];
            pts[k][1] = (k & 2) ? o->hi[1] : o->lo[1];
            pts[k][2] = (k & 4) ? o->hi[2] : o->lo[2];
        }
        if (points_box(lc, (const float(*)[3])pts, 8, &out[n]))
            n++;
        for (int k = 0; k < 8; k++) {
            pts[k][0] = o->shadow[k][0];
            pts[k][1] = o->shadow[k][1];
            pts[k][2] = 0.0f;
        }
        if (points_box(lc, (const float(*)[3])pts, 8, &out[n]))
            n++;
    }
    for (int merged = 1; merged;) {
        merged = 0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                const box *a = &out[i], *b = &out[j];
                const box u = {a->x0 < b->x0 ? a->x0 : b->x0, a->y0 < b->y0 ? a->y0 : b->y0,
                               a->x1 > b->x1 ? a->x1 : b->x1, a->y1 > b->y1 ? a->y1 : b->y1};
                if (area(&u) <= area(a) + area(b)) {
                    out[i] = u;
                    out[j] = out[--n];
                    j = i;
                    merged = 1;
                }
            }
    }
    return n;
}

typedef struct loop_job {
    const pc_scene *s;
    pc_scene_loop *l;
    const loop_cam *cams;
    int next, fail; /* atomic */
} loop_job;

static int render_frame(loop_job *j, int k, sc_frame *f, uint8_t **tmp, size_t *tmpn)
{
    pc_scene_loop *l = j->l;
    sc_frame_build(j->s, (double)k / l->fps, 0, f);
    for (int c = 0; c < l->ncam; c++) {
        loop_frame *fr = &l->fr[(size_t)k * l->ncam + c];
        box b[MAX_BOXES];
        int n = frame_boxes(f, &j->cams[c], b);
        size_t px = 0;
        for (int i = 0; i < n; i++)
            px += (size_t)(b[i].x1 - b[i].x0) * (b[i].y1 - b[i].y0);
        fr->patch = calloc(n ? (size_t)n : 1, sizeof *fr->patch);
        fr->data = malloc(px ? px : 1);
        if (!fr->patch || !fr->data)
            return PC_ENOMEM;
        fr->npatch = n;
        fr->pixels = px;
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            const int w = b[i].x1 - b[i].x0, h = b[i].y1 - b[i].y0;
            if ((size_t)w * h * 3 > *tmpn) {
                free(*tmp);
                *tmpn = (size_t)w * h * 3;
                if (!(*tmp = malloc(*tmpn)))
                    return PC_ENOMEM;
            }
            int rc = sc_render_rect(f, &j->cams[c].eye, b[i].x0, b[i].y0, w, h, *tmp, 3 * (size_t)w);
            if (!rc)
                rc = pc_mosaic_from_rgb(*tmp, 3 * (size_t)w, w, h, l->cfa, fr->data + off, (size_t)w, NULL, 0);
            if (rc)
                return rc;
            fr->patch[i] = (loop_patch){b[i].x0, b[i].y0, w, h, off};
            off += (size_t)w * h;
        }
    }
    return 0;
}

static void *loop_worker(void *arg)
{
    loop_job *j = arg;
    sc_frame *f = malloc(sizeof *f);
    uint8_t *tmp = NULL;
    size_t tmpn = 0;
    if (!f) {
        __atomic_store_n(&j->fail, PC_ENOMEM, __ATOMIC_RELAXED);
        return NULL;
    }
    for (;;) {
        int k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (k >= j->l->frames || __atomic_load_n(&j->fail, __ATOMIC_RELAXED))
            break;
        int rc = render_frame(j, k, f, &tmp, &tmpn);
        if (rc) {
            __atomic_store_n(&j->fail, rc, __ATOMIC_RELAXED);
            break;
        }
    }
    free(tmp);
    free(f);
    return NULL;
}

int pc_scene_loop_create(pc_scene_loop **out, const pc_scene *s, const pc_rig *rig, int ncam, pc_cfa cfa,
                         double fps, double seconds, int threads, char *err, size_t errlen)
{
    *out = NULL;
    if (!s || !rig || ncam < 1 || ncam > rig->ncam || (unsigned)cfa > PC_CFA_BGGR || !(fps > 0.0 && fps <= 1000.0) ||
        !(seconds > 0.0 && seconds <= 600.0)) {
        if (err && errlen)
            snprintf(err, errlen, "scene: %d cameras (the rig has %d), %g fps, %g s: out of range", ncam,
                     rig ? rig->ncam : 0, fps, seconds);
        return PC_EINVAL;
    }
    for (int c = 0; c < ncam; c++)
        if (rig->cam[c].w < 2 || rig->cam[c].h < 2 || ((rig->cam[c].w | rig->cam[c].h) & 1)) {
            if (err && errlen)
                snprintf(err, errlen, "scene: camera %d is %dx%d (rig line %d); Bayer frames need an even size",
                         c, rig->cam[c].w, rig->cam[c].h, rig->cam[c].line);
            return PC_EINVAL;
        }
    const double t0 = now_s();
    pc_scene_loop *l = calloc(1, sizeof *l);
    loop_cam *cams = calloc((size_t)ncam, sizeof *cams);
    int frames = (int)lround(seconds * fps);
    if (frames < 2)
        frames = 2;
    if (!l || !cams || !(l->fr = calloc((size_t)frames * ncam, sizeof *l->fr))) {
        free(cams);
        pc_scene_loop_destroy(l);
        if (err && errlen)
            snprintf(err, errlen, "scene: out of memory");
        return PC_ENOMEM;
    }
    l->ncam = ncam;
    l->frames = frames;
    l->fps = fps;
    l->cfa = cfa;
    int rc = 0;
    uint8_t *rgb = NULL;
    for (int c = 0; c < ncam && !rc; c++) {
        loop_cam *lc = &cams[c];
        pc_scene_eye_camera(rig, c, &lc->eye);
        const int w = lc->eye.w, h = lc->eye.h;
        l->w[c] = w;
        l->h[c] = h;
        const float *R = lc->eye.cam.R; /* the axis: camera Z in world, to scene */
        lc->axis[0] = R[6], lc->axis[1] = R[8], lc->axis[2] = R[7];
        lc->half_fov = 0.0f;
        for (int k = 0; k < 4; k++) {
            float d[3];
            if (sc_eye_ray(&lc->eye, (k & 1) ? w - 0.5f : -0.5f, (k & 2) ? h - 0.5f : -0.5f, d)) {
                float ca = d[0] * lc->axis[0] + d[1] * lc->axis[1] + d[2] * lc->axis[2];
                lc->half_fov = fmaxf(lc->half_fov, acosf(ca > 1.0f ? 1.0f : ca));
            } else {
                lc->half_fov = 3.2f; /* no corner ray: never cull */
            }
        }
        free(rgb);
        rgb = malloc((size_t)w * h * 3);
        l->bg[c] = malloc((size_t)w * h);
        if (!rgb || !l->bg[c]) {
            rc = PC_ENOMEM;
            if (err && errlen)
                snprintf(err, errlen, "scene: out of memory");
            break;
        }
        rc = pc_scene_render(s, &lc->eye, 0.0, PC_SCENE_STATIC, threads, 0, 0, w, h, rgb, 3 * (size_t)w, err, errlen);
        if (!rc)
            rc = pc_mosaic_from_rgb(rgb, 3 * (size_t)w, w, h, cfa, l->bg[c], (size_t)w, err, errlen);
        l->info.bytes += (size_t)w * h;
    }
    free(rgb);
    if (!rc) {
        loop_job j = {s, l, cams, 0, 0};
        sc_run_workers(threads, frames, loop_worker, &j);
        rc = j.fail ? j.fail : j.next < frames ? PC_ENOMEM : 0;
        if (rc && err && errlen)
            snprintf(err, errlen, "scene: out of memory rendering the frames");
    }
    free(cams);
    if (rc) {
        pc_scene_loop_destroy(l);
        return rc;
    }
    double px = 0;
    for (int k = 0; k < frames * ncam; k++) {
        l->info.bytes += l->fr[k].pixels + (size_t)l->fr[k].npatch * sizeof(loop_patch);
        px += (double)l->fr[k].pixels;
    }
    l->info.frames = frames;
    l->info.cameras = ncam;
    l->info.width = l->w[0];
    l->info.height = l->h[0];
    l->info.fps = fps;
    l->info.patch_pixels = px / frames;
    l->info.render_s = now_s() - t0;
    *out = l;
    return 0;
}

static int frame_of(const pc_scene_loop *l, uint64_t n)
{
    const uint64_t period = 2 * (uint64_t)l->frames - 2;
    const uint64_t m = n % period;
    return (int)(m < (uint64_t)l->frames ? m : period - m);
}

double pc_scene_loop_time(const pc_scene_loop *l, uint64_t n)
{
    return frame_of(l, n) / l->fps;
}

void pc_scene_loop_fill(const pc_scene_loop *l, int cam, uint64_t n, uint8_t *dst, size_t pitch)
{
    const int w = l->w[cam], h = l->h[cam];
    if (pitch == (size_t)w)
        memcpy(dst, l->bg[cam], (size_t)w * h);
    else
        for (int y = 0; y < h; y++)
            memcpy(dst + (size_t)y * pitch, l->bg[cam] + (size_t)y * w, (size_t)w);
    const loop_frame *fr = &l->fr[(size_t)frame_of(l, n) * l->ncam + cam];
    for (int i = 0; i < fr->npatch; i++) {
        const loop_patch *p = &fr->patch[i];
        for (int y = 0; y < p->h; y++)
            memcpy(dst + (size_t)(p->y + y) * pitch + p->x, fr->data + p->off + (size_t)y * p->w, (size_t)p->w);
    }
}

void pc_scene_loop_info_get(const pc_scene_loop *l, pc_scene_loop_info *out)
{
    *out = l->info;
}

void pc_scene_loop_destroy(pc_scene_loop *l)
{
    if (!l)
        return;
    if (l->fr)
        for (size_t k = 0; k < (size_t)l->frames * l->ncam; k++) {
            free(l->fr[k].patch);
            free(l->fr[k].data);
        }
    free(l->fr);
    for (int c = 0; c < PC_RIG_MAX_CAMERAS; c++)
        free(l->bg[c]);
    free(l);
}
