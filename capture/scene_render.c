/* scene_render.c - pictures of the simulated stadium: each pixel of a
 * camera of the rig (its lens model inverted) or of an output picture (a
 * panorama or a view, through pc_view_ray) traced into the scene
 * (scene_trace.c), then turned into 8-bit values by the camera's or the
 * panorama's photometry (camera_model.h's model).
 *
 * Sampling: one ray per pixel centre, whose textures are filtered over the
 * pixel (the tracer's contract); where a pixel or one of its 8 neighbours
 * hits another surface, the pixel is the mean of 4 x 4 rays instead. A
 * pixel depends only on its own and its neighbours' rays, so rendering a
 * rectangle gives the same values as rendering the whole picture (the
 * fake cameras' patches rely on it). Work is cut into tiles of 64 x 64
 * that the threads take in turn.
 */
#include "scene_int.h"

#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TILE 64
#define SUB 4 /* supersampling: SUB x SUB rays on an edge pixel */

int sc_threads(int threads)
{
    if (threads > 0)
        return threads < 64 ? threads : 64;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < 64 ? n : 64) : 1;
}

void sc_run_workers(int threads, int jobs, void *(*worker)(void *), void *arg)
{
    int n = sc_threads(threads);
    if (n > jobs)
        n = jobs;
    pthread_t th[64];
    int started = 0;
    for (int i = 1; i < n; i++) {
        if (pthread_create(&th[started], NULL, worker, arg) != 0)
            break; /* fewer threads: the work is shared all the same */
        started++;
    }
    worker(arg);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* --- eyes --------------------------------------------------------------------- */

/* A camera's response (its .pto Rt/Ra..Re): linear [0, 1] -> value. */
static void camera_response(const pc_rig_camera *c, float *knots)
{
    if (c->response == 1) { /* Rt1: linear */
        for (int i = 0; i < PC_RIG_RESPONSE_KNOTS; i++)
            knots[i] = (float)i / (PC_RIG_RESPONSE_KNOTS - 1);
    } else {
        pc_rig_emor_curve(c->resp, knots);
    }
}

void pc_scene_eye_camera(const pc_rig *rig, int i, pc_scene_eye *out)
{
    const pc_rig_camera *c = &rig->cam[i];
    memset(out, 0, sizeof *out);
    pc_rig_camera_model(rig, i, &out->cam);
    pc_rig_vig_model(rig, i, &out->vig);
    const float g = (float)pow(2.0, -c->eev);
    out->gain[0] = (float)(g * c->er);
    out->gain[1] = g;
    out->gain[2] = (float)(g * c->eb);
    camera_response(c, out->response);
    out->w = c->w;
    out->h = c->h;
}

void pc_scene_eye_view(const pc_view_model *v, const pc_rig *rig, pc_scene_eye *out)
{
    static const pc_rig_camera emor_mean; /* Rt0, Ra..Re 0: EMoR's mean curve */
    memset(out, 0, sizeof *out);
    out->is_view = 1;
    out->view = *v;
    const float g = rig ? (float)pow(2.0, -rig->pano.exposure) : 1.0f;
    out->gain[0] = out->gain[1] = out->gain[2] = g;
    /* as nona writes: p R0 through image 0's response, p R1 linear
     * (rig/photometry.c's output response) */
    if (rig && rig->pano.response == 1) {
        for (int k = 0; k < PC_RIG_RESPONSE_KNOTS; k++)
            out->response[k] = (float)k / (PC_RIG_RESPONSE_KNOTS - 1);
    } else {
        camera_response(rig && rig->ncam > 0 ? &rig->cam[0] : &emor_mean, out->response);
    }
    out->w = v->w;
    out->h = v->h;
}

int sc_eye_ray(const pc_scene_eye *e, float x, float y, float d[3])
{
    float w[3];
    if (e->is_view)
        pc_view_ray(&e->view, x, y, w);
    else if (!pc_cam_unproject(&e->cam, x, y, w))
        return 0;
    /* rig world (X right, Y up, Z forward) -> scene (x, y forward, z up) */
    float l = sqrtf(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (!(l > 0.0f))
        return 0;
    d[0] = w[0] / l;
    d[1] = w[2] / l;
    d[2] = w[1] / l;
    return 1;
}

int pc_scene_eye_ray(const pc_scene_eye *e, float x, float y, float ray[3])
{
    float d[3];
    if (!sc_eye_ray(e, x, y, d))
        return 0;
    ray[0] = d[0];
    ray[1] = d[2];
    ray[2] = d[1];
    return 1;
}

void pc_scene_rig_scale(pc_rig *r, double k)
{
    for (int i = 0; i < r->ncam; i++) {
        pc_rig_camera *c = &r->cam[i];
        c->w = 2 * (int)lround(c->w / k / 2.0);
        c->h = 2 * (int)lround(c->h / k / 2.0);
        c->d /= k;
        c->e /= k;
        for (int j = 0; j < 4; j++)
            c->crop[j] = (int)lround(c->crop[j] / k);
    }
    r->pano.w = (int)lround(r->pano.w / k);
    r->pano.h = (int)lround(r->pano.h / k);
    for (int j = 0; j < 4; j++)
        r->pano.crop[j] = (int)lround(r->pano.crop[j] / k);
}

/* --- rectangles ---------------------------------------------------------------- */

/* One tile (w, h <= TILE) at x0, y0: rays of the tile and 2 pixels around
 * it (for the derivatives), centre samples of the tile and 1 pixel around
 * it (for the neighbours' ids), then the pixels. */
static void render_tile(const sc_frame *all, const pc_scene_eye *e, int x0, int y0, int w, int h,
                        uint8_t *rgb, size_t pitch, float *ray, unsigned char *ok, float *col, int *id,
                        sc_frame *f)
{
    const int RW = w + 4, RH = h + 4, SW = w + 2, SH = h + 2;
    for (int j = 0; j < RH; j++)
        for (int i = 0; i < RW; i++)
            ok[j * RW + i] = (unsigned char)sc_eye_ray(e, (float)(x0 + i - 2), (float)(y0 + j - 2),
                                                      &ray[3 * (j * RW + i)]);
    /* only the objects whose body or shadow can show in this tile: the
     * cone around the centre ray through the outer rays' corners */
    f->nobj = 0;
    if (all->nobj) {
        const int corner[4] = {0, RW - 1, (RH - 1) * RW, RH * RW - 1};
        const int mid = (RH / 2) * RW + RW / 2;
        float cone = 0.0f;
        int open = !ok[mid];
        for (int k = 0; k < 4 && !open; k++) {
            if (!ok[corner[k]]) {
                open = 1;
                break;
            }
            const float *a = &ray[3 * mid], *b = &ray[3 * corner[k]];
            float c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
            cone = fmaxf(cone, acosf(c > 1.0f ? 1.0f : c));
        }
        if (open || cone > 1.0f)
            *f = *all;
        else
            sc_frame_cull(all, &ray[3 * mid], cone * 1.05f + 1e-3f, f);
    }
    for (int j = 0; j < SH; j++)
        for (int i = 0; i < SW; i++) {
            const int r = (j + 1) * RW + (i + 1), s = j * SW + i;
            if (!ok[r]) {
                col[3 * s] = col[3 * s + 1] = col[3 * s + 2] = 0.0f;
                id[s] = 0;
                continue;
            }
            float dx[3], dy[3];
            const int xl = ok[r - 1] ? r - 1 : r, xr = ok[r + 1] ? r + 1 : r;
            const int yu = ok[r - RW] ? r - RW : r, yd = ok[r + RW] ? r + RW : r;
            const float kx = xr - xl == 2 ? 0.5f : 1.0f, ky = yd - yu == 2 * RW ? 0.5f : 1.0f;
            for (int c = 0; c < 3; c++) {
                dx[c] = (ray[3 * xr + c] - ray[3 * xl + c]) * kx;
                dy[c] = (ray[3 * yd + c] - ray[3 * yu + c]) * ky;
            }
            sc_trace(f, &ray[3 * r], dx, dy, &col[3 * s], &id[s]);
        }
    for (int j = 0; j < h; j++) {
        uint8_t *out = rgb + (size_t)j * pitch;
        for (int i = 0; i < w; i++) {
            const int s = (j + 1) * SW + (i + 1), r = (j + 2) * RW + (i + 2);
            const int me = id[s];
            int edge = 0;
            for (int q = -1; q <= 1 && !edge; q++)
                for (int p = -1; p <= 1; p++)
                    if (id[s + q * SW + p] != me) {
                        edge = 1;
                        break;
                    }
            float L[3] = {col[3 * s], col[3 * s + 1], col[3 * s + 2]};
            const float px = (float)(x0 + i), py = (float)(y0 + j);
            if (edge && ok[r]) {
                float dx[3], dy[3], acc[3] = {0, 0, 0};
                for (int c = 0; c < 3; c++) {
                    dx[c] = (ray[3 * (r + 1) + c] - ray[3 * (r - 1) + c]) * (0.5f / SUB);
                    dy[c] = (ray[3 * (r + RW) + c] - ray[3 * (r - RW) + c]) * (0.5f / SUB);
                }
                /* the sub-pixel rays: bilinear between this pixel's ray
                 * and its neighbours' (the pixel -> ray map is smooth: off
                 * by far less than 1e-4 px), the lens model where a
                 * neighbour has none */
                int n = 0, all_ok = 1;
                for (int q = -1; q <= 1; q++)
                    for (int p = -1; p <= 1; p++)
                        all_ok &= ok[r + q * RW + p];
                for (int b = 0; b < SUB; b++)
                    for (int a = 0; a < SUB; a++) {
                        float d[3], c3[3];
                        int sid;
                        const float ox = (a + 0.5f) / SUB - 0.5f, oy = (b + 0.5f) / SUB - 0.5f;
                        if (all_ok) {
                            const int sx = ox < 0 ? -1 : 1, sy = oy < 0 ? -RW : RW;
                            const float wx = fabsf(ox), wy = fabsf(oy);
                            const float *r00 = &ray[3 * r], *r10 = &ray[3 * (r + sx)];
                            const float *r01 = &ray[3 * (r + sy)], *r11 = &ray[3 * (r + sx + sy)];
                            float l2 = 0.0f;
                            for (int c = 0; c < 3; c++) {
                                d[c] = (1 - wy) * ((1 - wx) * r00[c] + wx * r10[c]) + wy * ((1 - wx) * r01[c] + wx * r11[c]);
                                l2 += d[c] * d[c];
                            }
                            const float il = 1.0f / sqrtf(l2);
                            d[0] *= il, d[1] *= il, d[2] *= il;
                        } else if (!sc_eye_ray(e, px + ox, py + oy, d)) {
                            continue;
                        }
                        sc_trace(f, d, dx, dy, c3, &sid);
                        acc[0] += c3[0], acc[1] += c3[1], acc[2] += c3[2];
                        n++;
                    }
                if (n)
                    for (int c = 0; c < 3; c++)
                        L[c] = acc[c] / (float)n;
            }
            const float vig = e->is_view ? 1.0f : pc_vig_factor(&e->vig, px, py);
            for (int c = 0; c < 3; c++) {
                float v = pc_lut_interp(e->response, PC_RIG_RESPONSE_KNOTS, L[c] * e->gain[c] * vig);
                int q = (int)(v * 255.0f + 0.5f);
                out[3 * i + c] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
            }
        }
    }
}

typedef struct tile_scratch {
    float *ray, *col;
    unsigned char *ok;
    int *id;
    sc_frame *f;
} tile_scratch;

static int scratch_alloc(tile_scratch *t)
{
    const size_t nr = (TILE + 4) * (TILE + 4), ns = (TILE + 2) * (TILE + 2);
    t->ray = malloc(3 * nr * sizeof *t->ray);
    t->ok = malloc(nr);
    t->col = malloc(3 * ns * sizeof *t->col);
    t->id = malloc(ns * sizeof *t->id);
    t->f = malloc(sizeof *t->f);
    return t->ray && t->ok && t->col && t->id && t->f ? 0 : -1;
}

static void scratch_free(tile_scratch *t)
{
    free(t->ray);
    free(t->ok);
    free(t->col);
    free(t->id);
    free(t->f);
}

int sc_render_rect(const sc_frame *f, const pc_scene_eye *e, int x0, int y0, int w, int h,
                   uint8_t *rgb, size_t pitch)
{
    tile_scratch t;
    if (scratch_alloc(&t)) {
        scratch_free(&t);
        return PC_ENOMEM;
    }
    for (int ty = 0; ty < h; ty += TILE)
        for (int tx = 0; tx < w; tx += TILE)
            render_tile(f, e, x0 + tx, y0 + ty, w - tx < TILE ? w - tx : TILE, h - ty < TILE ? h - ty : TILE,
                        rgb + (size_t)ty * pitch + 3 * (size_t)tx, pitch, t.ray, t.ok, t.col, t.id, t.f);
    scratch_free(&t);
    return 0;
}

/* --- pc_scene_render: tiles over threads ------------------------------------ */

typedef struct render_job {
    const sc_frame *f;
    const pc_scene_eye *e;
    int x0, y0, w, h, tiles_x, ntiles;
    uint8_t *rgb;
    size_t pitch;
    int next;  /* atomic: the next tile */
    int fail;  /* atomic */
} render_job;

static void *render_worker(void *arg)
{
    render_job *j = arg;
    tile_scratch t;
    if (scratch_alloc(&t)) {
        scratch_free(&t);
        __atomic_store_n(&j->fail, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    for (;;) {
        int k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (k >= j->ntiles)
            break;
        int tx = (k % j->tiles_x) * TILE, ty = (k / j->tiles_x) * TILE;
        render_tile(j->f, j->e, j->x0 + tx, j->y0 + ty, j->w - tx < TILE ? j->w - tx : TILE,
                    j->h - ty < TILE ? j->h - ty : TILE, j->rgb + (size_t)ty * j->pitch + 3 * (size_t)tx,
                    j->pitch, t.ray, t.ok, t.col, t.id, t.f);
    }
    scratch_free(&t);
    return NULL;
}

int pc_scene_render(const pc_scene *s, const pc_scene_eye *eye, double t, int flags, int threads,
                    int x0, int y0, int w, int h, uint8_t *rgb, size_t pitch, char *err, size_t errlen)
{
    if (!s || !eye || !rgb || w <= 0 || h <= 0 || pitch < 3 * (size_t)w || !isfinite(t)) {
        if (err && errlen)
            snprintf(err, errlen, "scene render: bad arguments (%dx%d at pitch %zu, t %g)", w, h, pitch, t);
        return PC_EINVAL;
    }
    sc_frame *f = malloc(sizeof *f);
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "scene render: out of memory");
        return PC_ENOMEM;
    }
    sc_frame_build(s, t, flags, f);
    render_job j = {f, eye, x0, y0, w, h, (w + TILE - 1) / TILE, 0, rgb, pitch, 0, 0};
    j.ntiles = j.tiles_x * ((h + TILE - 1) / TILE);
    sc_run_workers(threads, j.ntiles, render_worker, &j);
    free(f);
    if (j.next < j.ntiles) { /* every worker failed to get its scratch */
        if (err && errlen)
            snprintf(err, errlen, "scene render: out of memory");
        return PC_ENOMEM;
    }
    return 0;
}
