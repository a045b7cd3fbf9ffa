/* render_view.c - moving views (render.h, pc_render_plan_set_view): a
 * virtual camera turns and zooms every frame, so its plan's view changes
 * every frame. The ray terms are one subtraction per column and row; the
 * camera masks of the tiles are what must be fast, and stay conservative
 * (a pixel a camera sees has that camera in its tile's mask, always).
 *
 * How: a camera's footprint in a view is bounded by the image, in the
 * view, of the border of what the camera sees (its valid area: the image
 * or its crop rectangle, a fisheye's crop circle, and where the lens
 * model stops reaching: the radius where the distortion polynomial folds,
 * a fisheye's 180 degrees off axis). That border is a closed curve of
 * world directions, the same for every view: it is sampled once per plan
 * (the outline, cached) as a polyline of directions, refined until the
 * curve between two samples stays within an angle eps of the great-circle
 * arc joining them (the sagitta, measured at the midpoint, under eps / 2).
 * A rectilinear view maps great circles to straight lines, so per frame
 * each arc in front of the view is one straight segment in the picture
 * (clipped in 3D where it passes behind), walked in steps of STEP pixels.
 * With eps chosen per view so that eps times the view's largest
 * magnification (px per radian, at the corners of the picture grown by
 * REACH) is at most SLACK pixels, every true border point lies within
 * SLACK + STEP / 2 = 4 px of a walked point; each walked point marks the
 * tiles within REACH = 6 px of it (one or two tiles each way), so a tile
 * left unmarked is more than 2 px from any border point (room for the
 * rounding of the float models; the exhaustive test in
 * tests/test_render_view.c finds misses at once without that reach).
 * Every tile left unmarked is then wholly inside or wholly outside the
 * footprint, and so is each run of such tiles along a tile row (no border
 * crosses it): one exact test per run (the renderer's own ray and
 * pc_cam_project at a pixel of it) decides the whole run.
 *
 * The outline is rebuilt (finer) only when a view needs a smaller eps than
 * it was built for: zooming in by more than 8x past the first sampling
 * (4x past a later one).
 */
#include "render.h"

#include "errmsg.h"
#include "render_formulas.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STEP 4.0        /* px between walked points along a segment */
#define SLACK 2.0       /* px: how far the true border may lie from its segments */
#define REACH 6.0       /* px: a walked point marks the tiles this near it */
#define SEG_MAX 0.035   /* rad (2 degrees): the longest arc, so that its midpoint measures its sagitta */
#define MIN_EPS 1e-6    /* rad: views narrower than this needs are refused */
#define ZCLIP 1e-3      /* arcs are cut where they pass behind the view (unit directions) */
#define MAX_DEPTH 30

static const double PI = 3.14159265358979323846;

typedef struct outline_cam {
    int n, cap;
    float *pt; /* 4 floats per point: the unit direction, then 1 when the arc from the previous point is drawn */
} outline_cam;

struct pc_render_outline {
    double eps; /* the angle the polylines keep to */
    int ncam;
    outline_cam cam[PC_RENDER_MAX_CAMERAS];
    /* per-view scratch, sized once */
    uint8_t *mark;        /* ntx * nty: tiles near a border segment */
    float *q;             /* the points in view space, 3 floats each */
    int qcap;
};

typedef struct pc_render_outline pc_render_outline;

void pc_render_outline_free(pc_render_outline *o);

void pc_render_outline_free(pc_render_outline *o)
{
    if (!o)
        return;
    for (int c = 0; c < o->ncam; c++)
        free(o->cam[c].pt);
    free(o->mark);
    free(o->q);
    free(o);
}

/* --- the outline: each camera's border as world directions -------------- */

enum { CURVE_RECT, CURVE_CROP_CIRCLE, CURVE_REACH };

typedef struct curve {
    const pc_cam_model *m;
    int kind;
    double len;   /* the parameter's range: source pixels along the curve (about) */
    double rho;   /* CURVE_REACH: the ideal radius (u, v pixels) where the model stops reaching */
} curve;

typedef struct sample {
    double d[3]; /* unit direction (ok) */
    int ok;      /* a direction exists there */
    int rel;     /* on the border of the valid area (within 2 px): its arcs are drawn */
} sample;

/* (sx, sy) inside the valid area grown by 2 px. */
static int near_area(const pc_cam_model *m, double sx, double sy)
{
    if (sx < m->x0 - 2 || sx > m->x1 + 2 || sy < m->y0 - 2 || sy > m->y1 + 2)
        return 0;
    if (m->circle) {
        const double ex = sx - m->ccx, ey = sy - m->ccy, r = sqrt(m->cr2) + 2;
        return ex * ex + ey * ey <= r * r;
    }
    return 1;
}

static void set_dir(sample *s, double x, double y, double z)
{
    const double n = sqrt(x * x + y * y + z * z);
    s->ok = n > 0;
    if (s->ok) {
        s->d[0] = x / n;
        s->d[1] = y / n;
        s->d[2] = z / n;
    }
}

static void eval(const curve *cv, double t, sample *s)
{
    const pc_cam_model *m = cv->m;
    double sx, sy;
    s->ok = 0;
    if (cv->kind == CURVE_REACH) {
        /* ideal (undistorted) coordinates on the reach circle -> the
         * direction (pc_cam_unproject's last step) and, for relevance, the
         * source position (pc_cam_project's) */
        const double phi = t / cv->rho, u = cv->rho * cos(phi), v = cv->rho * sin(phi);
        double X, Y, Z;
        if (!m->fisheye) {
            X = u, Y = -v, Z = m->f;
        } else {
            const double th = cv->rho / m->f, k = sin(th) / cv->rho;
            X = k * u, Y = -k * v, Z = cos(th);
        }
        set_dir(s, m->R[0] * X + m->R[3] * Y + m->R[6] * Z, m->R[1] * X + m->R[4] * Y + m->R[7] * Z,
                m->R[2] * X + m->R[5] * Y + m->R[8] * Z);
        const double r = cv->rho * m->rn_inv, k = ((m->a * r + m->b) * r + m->c) * r + m->d;
        const double ud = u * k + m->sx_d, vd = v * k + m->sy_e;
        s->rel = near_area(m, m->cx + ud + m->g_h * vd, m->cy + vd + m->t_w * ud);
        return;
    }
    if (cv->kind == CURVE_RECT) { /* clockwise from the top-left corner */
        const double W = m->x1 - m->x0, H = m->y1 - m->y0;
        if (t < W)
            sx = m->x0 + t, sy = m->y0;
        else if (t < W + H)
            sx = m->x1, sy = m->y0 + (t - W);
        else if (t < 2 * W + H)
            sx = m->x1 - (t - W - H), sy = m->y1;
        else
            sx = m->x0, sy = m->y1 - (t - 2 * W - H);
    } else {
        const double r = sqrt(m->cr2), phi = t / r;
        sx = m->ccx + r * cos(phi);
        sy = m->ccy + r * sin(phi);
    }
    s->rel = near_area(m, sx, sy);
    float ray[3];
    if (pc_cam_unproject(m, (float)sx, (float)sy, ray))
        set_dir(s, ray[0], ray[1], ray[2]);
}

static int push(outline_cam *oc, const sample *s, int pen)
{
    if (oc->n == oc->cap) {
        int cap = oc->cap ? 2 * oc->cap : 256;
        float *p = realloc(oc->pt, sizeof *p * 4 * (size_t)cap);
        if (!p)
            return -1;
        oc->pt = p;
        oc->cap = cap;
    }
    float *q = oc->pt + 4 * (size_t)oc->n++;
    q[0] = (float)s->d[0];
    q[1] = (float)s->d[1];
    q[2] = (float)s->d[2];
    q[3] = (float)pen;
    return 0;
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Emits the points after a up to b, subdividing where the arc a-b is
 * longer than SEG_MAX or its midpoint is more than eps/2 off the great
 * circle through a and b, and where a direction starts or stops existing
 * (down to a quarter source pixel). */
static int refine(outline_cam *oc, const curve *cv, double eps, double t0, const sample *a, double t1,
                  const sample *b, int depth)
{
    int split = 0;
    sample m;
    const double tm = 0.5 * (t0 + t1);
    if (depth < MAX_DEPTH && t1 - t0 > 0.25) {
        eval(cv, tm, &m);
        if (a->ok != b->ok || a->ok != m.ok) {
            split = 1;
        } else if (a->ok) {
            const double c = dot3(a->d, b->d);
            double n[3] = {a->d[1] * b->d[2] - a->d[2] * b->d[1], a->d[2] * b->d[0] - a->d[0] * b->d[2],
                           a->d[0] * b->d[1] - a->d[1] * b->d[0]};
            const double nn = sqrt(dot3(n, n));
            const double dev = nn > 1e-12 ? fabs(dot3(m.d, n)) / nn : acos(fmin(1.0, dot3(m.d, a->d)));
            /* also split where the midpoint is not between a and b (the
             * curve turns back within the arc) */
            split = c < cos(SEG_MAX) || dev > 0.5 * eps || dot3(m.d, a->d) < c || dot3(m.d, b->d) < c;
        }
    }
    if (split)
        return refine(oc, cv, eps, t0, a, tm, &m, depth + 1) || refine(oc, cv, eps, tm, &m, t1, b, depth + 1);
    return push(oc, b, a->ok && b->ok && (a->rel || b->rel));
}

static int trace(outline_cam *oc, const curve *cv, double eps)
{
    const int n0 = 32;
    sample prev, s;
    eval(cv, 0.0, &prev);
    if (push(oc, &prev, 0))
        return -1;
    for (int k = 1; k <= n0; k++) {
        const double t0 = cv->len * (k - 1) / n0, t1 = cv->len * k / n0;
        eval(cv, k == n0 ? 0.0 : t1, &s); /* closed: the last point is the first */
        if (refine(oc, cv, eps, t0, &prev, t1, &s, 0))
            return -1;
        prev = s;
    }
    return 0;
}

static int outline_build(pc_render_outline *o, const pc_render_plan *p, double eps)
{
    o->eps = eps;
    for (int c = 0; c < p->ncam; c++) {
        const pc_cam_model *m = &p->cam[c].geo;
        outline_cam *oc = &o->cam[c];
        oc->n = 0;
        curve cv = {m, CURVE_RECT, 2.0 * ((m->x1 - m->x0) + (m->y1 - m->y0)), 0};
        if (trace(oc, &cv, eps))
            return -1;
        if (m->circle) {
            cv.kind = CURVE_CROP_CIRCLE;
            cv.len = 2 * PI * sqrt(m->cr2);
            if (trace(oc, &cv, eps))
                return -1;
        }
        /* where the model stops: the fold of the distortion polynomial,
         * a fisheye's 180 degrees (just inside each) */
        const double reach[2] = {m->rmax < 1e29f ? m->rmax / m->rn_inv : 0, m->fisheye ? m->f * PI : 0};
        for (int k = 0; k < 2; k++) {
            if (!(reach[k] > 0))
                continue;
            cv.kind = CURVE_REACH;
            cv.rho = reach[k] * (1 - 1e-5);
            cv.len = 2 * PI * cv.rho;
            if (trace(oc, &cv, eps))
                return -1;
        }
    }
    return 0;
}

/* --- per view: the segments' tiles, dilated, and the runs between ------- */

static void mark_segment(pc_render_outline *o, const pc_render_plan *p, const float *a, const float *b)
{
    const pc_view_model *v = &p->view;
    double A[3] = {a[0], a[1], a[2]}, B[3] = {b[0], b[1], b[2]};
    if (A[2] < ZCLIP && B[2] < ZCLIP)
        return;
    /* cut where it passes behind */
    if (A[2] < ZCLIP) {
        const double t = (ZCLIP - A[2]) / (B[2] - A[2]);
        for (int i = 0; i < 3; i++)
            A[i] += t * (B[i] - A[i]);
    } else if (B[2] < ZCLIP) {
        const double t = (ZCLIP - B[2]) / (A[2] - B[2]);
        for (int i = 0; i < 3; i++)
            B[i] += t * (A[i] - B[i]);
    }
    /* pc_view_project (rectilinear) */
    double x0 = v->cx - v->ox + v->f * A[0] / A[2], y0 = v->cy - v->oy - v->f * A[1] / A[2];
    double x1 = v->cx - v->ox + v->f * B[0] / B[2], y1 = v->cy - v->oy - v->f * B[1] / B[2];
    /* clipped to the picture grown by REACH (Liang-Barsky) */
    const double lo[2] = {-REACH - 1, -REACH - 1}, hi[2] = {v->w - 1 + REACH + 1, v->h - 1 + REACH + 1};
    const double d[2] = {x1 - x0, y1 - y0}, s[2] = {x0, y0};
    double t0 = 0, t1 = 1;
    for (int k = 0; k < 2; k++) {
        if (d[k] == 0) {
            if (s[k] < lo[k] || s[k] > hi[k])
                return;
            continue;
        }
        double ta = (lo[k] - s[k]) / d[k], tb = (hi[k] - s[k]) / d[k];
        if (ta > tb) {
            const double t = ta;
            ta = tb;
            tb = t;
        }
        t0 = ta > t0 ? ta : t0;
        t1 = tb < t1 ? tb : t1;
        if (t0 > t1)
            return;
    }
    const double ax = x0 + t0 * d[0], ay = y0 + t0 * d[1], bx = x0 + t1 * d[0], by = y0 + t1 * d[1];
    const int n = (int)ceil(hypot(bx - ax, by - ay) / STEP);
    for (int k = 0; k <= n; k++) {
        const double f = n ? (double)k / n : 0, x = ax + f * (bx - ax), y = ay + f * (by - ay);
        /* the tiles whose pixels [32 tx, 32 tx + 31] x [8 ty, 8 ty + 7]
         * come within REACH of (x, y) */
        int tx0 = (int)ceil((x - REACH - (PC_RENDER_TILE_W - 1)) / PC_RENDER_TILE_W);
        int tx1 = (int)floor((x + REACH) / PC_RENDER_TILE_W);
        int ty0 = (int)ceil((y - REACH - (PC_RENDER_TILE_H - 1)) / PC_RENDER_TILE_H);
        int ty1 = (int)floor((y + REACH) / PC_RENDER_TILE_H);
        tx0 = tx0 < 0 ? 0 : tx0;
        ty0 = ty0 < 0 ? 0 : ty0;
        tx1 = tx1 >= p->ntx ? p->ntx - 1 : tx1;
        ty1 = ty1 >= p->nty ? p->nty - 1 : ty1;
        for (int ty = ty0; ty <= ty1; ty++)
            for (int tx = tx0; tx <= tx1; tx++)
                o->mark[(size_t)ty * p->ntx + tx] = 1;
    }
}

/* Camera c sees output pixel (x, y): the renderer's own test. */
static int sees(const pc_render_plan *p, int c, int x, int y)
{
    float ray[3], sx, sy;
    pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
    return pc_cam_project(&p->cam[c].geo, ray, &sx, &sy);
}

static void camera_mask(pc_render_plan *p, pc_render_outline *o, int c)
{
    const pc_view_model *v = &p->view;
    const outline_cam *oc = &o->cam[c];
    const int ntx = p->ntx, nty = p->nty;
    memset(o->mark, 0, (size_t)ntx * nty);
    for (int i = 0; i < oc->n; i++) {
        const float *d = oc->pt + 4 * (size_t)i;
        float *q = o->q + 3 * (size_t)i;
        if (!v->rotated) {
            q[0] = d[0], q[1] = d[1], q[2] = d[2];
        } else { /* world -> view: R's transpose (pc_view_project) */
            for (int k = 0; k < 3; k++)
                q[k] = v->R[k] * d[0] + v->R[3 + k] * d[1] + v->R[6 + k] * d[2];
        }
        if (i > 0 && d[3] != 0.0f)
            mark_segment(o, p, q - 3, q);
    }
    const uint16_t bit = (uint16_t)(1u << c);
    for (int ty = 0; ty < nty; ty++) {
        const uint8_t *m = o->mark + (size_t)ty * ntx;
        uint16_t *t = p->tmask + (size_t)ty * ntx;
        const int yc = ty * PC_RENDER_TILE_H + PC_RENDER_TILE_H / 2, y = yc < v->h ? yc : v->h - 1;
        for (int tx = 0; tx < ntx;) {
            if (m[tx]) {
                t[tx++] |= bit;
                continue;
            }
            const int s = tx;
            while (tx < ntx && !m[tx])
                tx++;
            const int xc = s * PC_RENDER_TILE_W + PC_RENDER_TILE_W / 2, x = xc < v->w ? xc : v->w - 1;
            if (sees(p, c, x, y))
                for (int k = s; k < tx; k++)
                    t[k] |= bit;
        }
    }
}

/* The angle the outline must keep to for view v: SLACK px over the view's
 * largest magnification (px per radian) on the picture grown by REACH,
 * f / cos^2 of the angle off axis at its farthest corner. */
static double eps_for(const pc_view_model *v)
{
    const double ex = fmax(fabs(-REACH + v->ox - v->cx), fabs(v->w - 1 + REACH + v->ox - v->cx));
    const double ey = fmax(fabs(-REACH + v->oy - v->cy), fabs(v->h - 1 + REACH + v->oy - v->cy));
    const double r2 = ex * ex + ey * ey;
    return SLACK / (v->f + r2 / v->f);
}

static int scratch(pc_render_outline *o, const pc_render_plan *p, char *err, size_t errlen)
{
    int npt = 0;
    for (int c = 0; c < p->ncam; c++)
        npt = o->cam[c].n > npt ? o->cam[c].n : npt;
    if (!o->mark)
        o->mark = malloc((size_t)p->ntx * p->nty);
    if (npt > o->qcap) {
        free(o->q);
        o->q = malloc(sizeof *o->q * 3 * (size_t)npt);
        o->qcap = o->q ? npt : 0;
    }
    if (!o->mark || !o->q) {
        pc_set_err(err, errlen, "render plan: set view: out of memory for the camera masks");
        return PC_ENOMEM;
    }
    return 0;
}

int pc_render_plan_set_view(pc_render_plan *p, const pc_view_model *view, char *err, size_t errlen)
{
    if (!p || !view) {
        pc_set_err(err, errlen, "render plan: set view: %s is NULL", p ? "the view" : "the plan");
        return PC_EINVAL;
    }
    if (view->w != p->view.w || view->h != p->view.h) {
        pc_set_err(err, errlen, "render plan: set view: the view is %dx%d, the plan renders %dx%d (a moving view keeps "
                   "its size: build a plan for another size)", view->w, view->h, p->view.w, p->view.h);
        return PC_EINVAL;
    }
    if (view->proj != PC_PROJ_RECTILINEAR || !(view->f > 0.0f) || !isfinite(view->f)) {
        pc_set_err(err, errlen, "render plan: set view: projection %s, f %g: only rectilinear views (virtual cameras, "
                   "pc_rig_rect_view) move; a panorama's plan is built once", pc_proj_name(view->proj),
                   (double)view->f);
        return PC_EINVAL;
    }
    if (p->blend != PC_RENDER_FEATHER) {
        pc_set_err(err, errlen, "render plan: set view: this plan blends %s, at seams placed once for one view; a "
                   "moving view blends by feather (build it with blend = feather)", pc_render_blend_name(p->blend));
        return PC_EINVAL;
    }
    if (p->map) {
        pc_set_err(err, errlen, "render plan: set view: this plan has precomputed maps (pc_render_options.maps), "
                   "which belong to one view; build moving views without them");
        return PC_EINVAL;
    }
    const double eps = eps_for(view);
    if (!(eps >= MIN_EPS)) {
        pc_set_err(err, errlen, "render plan: set view: a field of view this narrow (f %g px) needs the cameras' "
                   "borders to %.1e rad; the camera masks are kept to %.0e at most", (double)view->f, eps, MIN_EPS);
        return PC_EINVAL;
    }
    if (!p->outline) {
        p->outline = calloc(1, sizeof *p->outline);
        if (!p->outline) {
            pc_set_err(err, errlen, "render plan: set view: out of memory");
            return PC_ENOMEM;
        }
        p->outline->ncam = p->ncam;
    }
    pc_render_outline *o = p->outline;
    /* finer than asked, so that zooming in does not rebuild at once: the
     * first sampling for views up to 8x narrower, a later one 4x */
    if ((o->eps == 0 || eps < o->eps) && outline_build(o, p, fmax(eps / (o->eps == 0 ? 8 : 4), MIN_EPS))) {
        o->eps = 0;
        pc_set_err(err, errlen, "render plan: set view: out of memory for the cameras' outlines");
        return PC_ENOMEM;
    }
    int rc = scratch(o, p, err, errlen);
    if (rc)
        return rc;
    p->view = *view;
    /* the ray terms, as pc_render_plan_build computes them */
    for (int x = 0; x < view->w; x++) {
        float r[2];
        pc_render_terms(view, (float)x, 0.0f, p->col + 2 * x, r);
    }
    for (int y = 0; y < view->h; y++) {
        float c[2];
        pc_render_terms(view, 0.0f, (float)y, c, p->row + 2 * y);
    }
    memset(p->tmask, 0, sizeof *p->tmask * (size_t)p->ntx * p->nty);
    for (int c = 0; c < p->ncam; c++)
        camera_mask(p, o, c);
    /* gain compensation's overlap samples were the old view's pixels */
    for (int i = 0; i < p->npairs; i++)
        free(p->pair[i].xy);
    memset(p->pair, 0, sizeof p->pair);
    p->npairs = 0;
    return 0;
}
