/* vcams_map.c - the web page's geometry of the virtual cameras (vcams.h):
 * which direction each point of the picture it shows looks at (a grid per
 * tile, which the page interpolates to turn a click or a drag into a pan
 * and tilt), and where a view lies in that picture (its border as
 * polylines the page draws). Both through the rig's camera models, the
 * same the coverage and the renderers use (rig/camera_model.h), so a view
 * framed on the page is the view the encoder gets.
 *
 * The picture is either the cameras side by side (today's live picture,
 * web_picture.h: each camera's whole frame, scaled) or a rendering through
 * a view model (the panorama). Pure functions of the rig and their
 * arguments; any thread. */
#include "vcams.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SIDE_SAMPLES 24   /* border samples per side of a view */
#define EDGE_STEPS 8      /* bisection steps to a camera's edge */

static void ray_angles(const float ray[3], float *pan, float *tilt)
{
    double p, t;
    pc_ray_pan_tilt(ray[0], ray[1], ray[2], &p, &t);
    *pan = (float)p;
    *tilt = (float)t;
}

static int clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }

int pl_vcams_map_make(pl_vcams *v, const pl_vcams_picture *pic, pl_vcams_map *map, char *err, size_t errlen)
{
    pc_cam_model cam[PC_RIG_MAX_CAMERAS];
    int ncam = pl_vcams_rig_cameras(v, cam, PC_RIG_MAX_CAMERAS);
    memset(map, 0, sizeof *map);
    const int ntiles = pic->ntiles > 0 ? pic->ntiles : 1;
    if (pic->ntiles > PL_VCAMS_MAX_TILES || pic->width <= 0 || pic->height <= 0) {
        snprintf(err, errlen, "a %dx%d picture of %d tiles cannot be mapped", pic->width, pic->height, pic->ntiles);
        return -1;
    }
    /* a point every 12 pixels or so, 5..33 a side, fewer when they would
     * not fit */
    double step = 12;
    for (;;) {
        int total = 0;
        for (int t = 0; t < ntiles; t++) {
            double w = pic->ntiles ? pic->tile[t].w : pic->width, h = pic->ntiles ? pic->tile[t].h : pic->height;
            total += clampi((int)lround(w / step) + 1, 5, 33) * clampi((int)lround(h / step) + 1, 5, 33);
        }
        if (total <= PL_VCAMS_MAP_POINTS)
            break;
        step *= 1.25;
    }
    map->ntiles = ntiles;
    for (int t = 0; t < ntiles; t++) {
        double x0 = 0, y0 = 0, w = pic->width, h = pic->height;
        const pc_cam_model *c = NULL;
        if (pic->ntiles) {
            x0 = pic->tile[t].x, y0 = pic->tile[t].y, w = pic->tile[t].w, h = pic->tile[t].h;
            if (pic->tile[t].cam < 0 || pic->tile[t].cam >= ncam) {
                snprintf(err, errlen, "tile %d shows camera %d; the rig has %d", t, pic->tile[t].cam, ncam);
                return -1;
            }
            c = &cam[pic->tile[t].cam];
        }
        const int cols = clampi((int)lround(w / step) + 1, 5, 33), rows = clampi((int)lround(h / step) + 1, 5, 33);
        map->tile[t].x = x0, map->tile[t].y = y0, map->tile[t].w = w, map->tile[t].h = h;
        map->tile[t].cols = cols, map->tile[t].rows = rows, map->tile[t].first = map->npoints;
        for (int r = 0; r < rows; r++)
            for (int q = 0; q < cols; q++) {
                const int k = map->npoints++;
                const double fx = (double)q / (cols - 1), fy = (double)r / (rows - 1);
                float ray[3];
                int seen;
                if (c) { /* the tile's edges are the camera frame's pixel edges */
                    seen = pc_cam_unproject(c, (float)(fx * c->w - 0.5), (float)(fy * c->h - 0.5), ray);
                } else {
                    const float mx = (float)((fx * w) * pic->scale - 0.5), my = (float)((fy * h) * pic->scale - 0.5);
                    pc_view_ray(&pic->view, mx, my, ray);
                    seen = 1;
                }
                map->seen[k] = (unsigned char)seen;
                if (seen)
                    ray_angles(ray, &map->pan[k], &map->tilt[k]);
            }
    }
    return 0;
}

/* The direction of the view's border at s in [0, 4): top (left to right),
 * right (down), bottom (right to left), left (up). */
static void border_ray(const pc_view_model *vm, double s, float ray[3])
{
    s = fmod(s, 4.0);
    if (s < 0)
        s += 4.0;
    const int side = (int)s;
    const double f = s - side, W = vm->w - 1, H = vm->h - 1;
    double x, y;
    switch (side) {
    case 0: x = f * W, y = 0; break;
    case 1: x = W, y = f * H; break;
    case 2: x = (1 - f) * W, y = H; break;
    default: x = 0, y = (1 - f) * H; break;
    }
    pc_view_ray(vm, (float)x, (float)y, ray);
}

typedef struct outline_buf {
    float *xy;
    int max, n;
    int *starts, maxlines, nlines;
    int open; /* a polyline is being added to */
} outline_buf;

static void put_point(outline_buf *b, float x, float y)
{
    if (!b->open) {
        if (b->nlines >= b->maxlines || b->n >= b->max)
            return;
        b->starts[b->nlines++] = b->n;
        b->open = 1;
    }
    if (b->n >= b->max)
        return;
    b->xy[2 * b->n] = x;
    b->xy[2 * b->n + 1] = y;
    b->n++;
}

/* Where the border point s falls in tile t (camera c): 1 and (x, y) in
 * picture pixels when the camera sees it. */
static int tile_point(const pl_vcams_picture *pic, int t, const pc_cam_model *c, const pc_view_model *vm, double s,
                      float *x, float *y)
{
    float ray[3], sx, sy;
    border_ray(vm, s, ray);
    int in = pc_cam_project(c, ray, &sx, &sy);
    *x = (float)(pic->tile[t].x + (sx + 0.5) / c->w * pic->tile[t].w);
    *y = (float)(pic->tile[t].y + (sy + 0.5) / c->h * pic->tile[t].h);
    return in;
}

static int view_point(const pl_vcams_picture *pic, const pc_view_model *vm, double s, float *x, float *y)
{
    float ray[3], mx, my;
    border_ray(vm, s, ray);
    if (!pc_view_project(&pic->view, ray, &mx, &my))
        return 0;
    *x = (float)((mx + 0.5) / pic->scale);
    *y = (float)((my + 0.5) / pic->scale);
    return 1;
}

int pl_vcams_outline(pl_vcams *v, int i, pc_vcam_pose p, const pl_vcams_picture *pic, float *xy, int max,
                     int *starts, int maxlines, int *nlines)
{
    outline_buf b = {xy, max, 0, starts, maxlines, 0, 0};
    *nlines = 0;
    if (i < 0 || i >= pl_vcams_count(v))
        return 0;
    pl_vcam_status st;
    pl_vcam_status all[PC_MAX_VCAMS];
    int n = pl_vcams_status(v, all, PC_MAX_VCAMS);
    if (i >= n)
        return 0;
    st = all[i];
    /* the view's directions only: a nominal 1000-pixel-wide picture */
    pc_view_model vm;
    pc_rig_rect_view(1000, (int)lround(1000.0 * st.height / st.width), p.hfov, p.pan, p.tilt, 0.0, &vm);
    const int N = 4 * SIDE_SAMPLES;
    if (pic->ntiles == 0) {
        float px = 0;
        int prev = 0;
        for (int k = 0; k <= N; k++) {
            float x, y;
            int in = view_point(pic, &vm, 4.0 * k / N, &x, &y);
            /* a jump of half the picture: the border wrapped round the
             * panorama's seam */
            if (in && prev && fabsf(x - px) > 0.5f * pic->width)
                b.open = 0;
            if (in)
                put_point(&b, x, y);
            else
                b.open = 0;
            prev = in, px = x;
        }
        *nlines = b.nlines;
        return b.n;
    }
    pc_cam_model cam[PC_RIG_MAX_CAMERAS];
    int ncam = pl_vcams_rig_cameras(v, cam, PC_RIG_MAX_CAMERAS);
    for (int t = 0; t < pic->ntiles; t++) {
        if (pic->tile[t].cam < 0 || pic->tile[t].cam >= ncam)
            continue;
        const pc_cam_model *c = &cam[pic->tile[t].cam];
        /* start where the camera does not see the border (if anywhere), so
         * that every run of seen samples is one polyline */
        int k0 = 0, any_in = 0, any_out = 0;
        for (int k = 0; k < N; k++) {
            float x, y;
            if (tile_point(pic, t, c, &vm, 4.0 * k / N, &x, &y))
                any_in = 1;
            else if (!any_out)
                any_out = 1, k0 = k;
        }
        if (!any_in)
            continue;
        b.open = 0;
        int prev_in = 0;
        double prev_s = 0;
        for (int k = 0; k <= N; k++) {
            const double s = 4.0 * (k0 + k) / N;
            float x, y;
            int in = tile_point(pic, t, c, &vm, s, &x, &y);
            if (k > 0 && in != prev_in) { /* the camera's edge between the two samples */
                double lo = prev_s, hi = s; /* lo: on prev_in's side */
                for (int e = 0; e < EDGE_STEPS; e++) {
                    double m = 0.5 * (lo + hi);
                    float mx, my;
                    if (tile_point(pic, t, c, &vm, m, &mx, &my) == prev_in)
                        lo = m;
                    else
                        hi = m;
                }
                float ex, ey;
                tile_point(pic, t, c, &vm, in ? hi : lo, &ex, &ey);
                put_point(&b, ex, ey);
                if (!in)
                    b.open = 0;
            }
            if (in)
                put_point(&b, x, y);
            prev_in = in;
            prev_s = s;
        }
        b.open = 0;
    }
    *nlines = b.nlines;
    return b.n;
}
