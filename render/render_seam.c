/* render_seam.c - blend = seam: in every overlap of two cameras side by
 * side, a seam (one output column per row) where the pictures agree, with
 * a narrow ramp across it, instead of a wide cross-fade that shows both
 * cameras' parallax as ghosts.
 *
 * pc_render_seams_init (plan build) finds, per output row, each camera's
 * columns, orders the cameras left to right, and keeps for each
 * neighbouring pair the range where the seam may lie: where each camera
 * has full feather weight over the whole of its side of the overlap, less
 * the seam's ramp (where the row has no room for that, a weight of at least
 * 1 / feather, which the renderers' normalisation does not fade: a source
 * pixel or more inside the camera's border). The seams start in the middle
 * of it. pc_render_plan_place_seams then moves them, once (the
 * first good frame set, or on request), to the path of least colour
 * difference through the overlap: dynamic programming over the rows, one
 * column of movement per row at most. The seams then stay put: the
 * blend weights never change between frames.
 *
 * A row of an overlap with no such range (at its very ends: the top and
 * bottom, where one camera's coverage stops and it sees the row, or part
 * of it, within a source pixel of its border) has no seam: its cameras
 * cross-fade by their feather weights. A seam there handed the pixels on
 * one side to a camera that sees some of them that close to its border,
 * alone: its weight below the renderers' floor (1 / feather, render.h),
 * they went dark, up to black.
 *
 * blend = multiband uses the same seams; its range keeps every pixel the
 * multi-band blend changes inside the overlap instead (pc_render_mb_reach
 * from where either camera stops seeing: the feather ramps play no part
 * in it), and each placement updates its masks (render_multiband.c).
 */
#include "render_host.h"
#include "render_multiband.h"

#include "errmsg.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define NONE_LEFT (-1e30f)
#define NONE_RIGHT (1e30f)

/* Camera a's and b's overlap in output row y, columns x0..x1 (a left of
 * b): the last column up to which a weighs at least wmin from x0 (x0 - 1:
 * not at x0) and the first from which b does up to x1 (x1 + 1: not at x1). */
static void weighed_sides(const pc_render_plan *p, int a, int b, int y, int x0, int x1, float wmin, int *a_end,
                          int *b_start)
{
    int end[2] = {x0 - 1, x1 + 1};
    for (int e = 0; e < 2; e++) {
        const pc_cam_model *m = &p->cam[e ? b : a].geo;
        for (int x = e ? x1 : x0; x >= x0 && x <= x1; x += e ? -1 : 1) {
            float ray[3], sx, sy;
            pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
            if (!pc_cam_project(m, ray, &sx, &sy) ||
                !(pc_render_feather(pc_render_border(m, sx, sy), p->inv_feather) >= wmin))
                break;
            end[e] = x;
        }
    }
    *a_end = end[0];
    *b_start = end[1];
}

int pc_render_seams_init(pc_render_plan *p, int levels, char *err, size_t errlen)
{
    const int w = p->view.w, h = p->view.h, n = p->ncam;
    const size_t nh = (size_t)n * h;
    p->seam = malloc(sizeof *p->seam * 2 * nh);
    p->seam_next = malloc(sizeof *p->seam_next * nh);
    p->seam_lim = calloc(2 * nh, sizeof *p->seam_lim);
    int *cols = malloc(sizeof *cols * 2 * nh); /* per camera and row: first/last column seen */
    if (!p->seam || !p->seam_next || !p->seam_lim || !cols) {
        free(cols);
        pc_set_err(err, errlen, "render plan %dx%d: out of memory for the seams", w, h);
        return PC_ENOMEM;
    }
    for (size_t i = 0; i < nh; i++) {
        cols[2 * i] = INT_MAX;
        cols[2 * i + 1] = INT_MIN;
        p->seam_next[i] = -1;
    }
    for (int c = 0; c < n; c++)
        for (int y = 0; y < h; y++) {
            p->seam[(size_t)(2 * c) * h + y] = NONE_LEFT;
            p->seam[(size_t)(2 * c + 1) * h + y] = NONE_RIGHT;
        }
    for (int y = 0; y < h; y++) {
        const uint16_t *mrow = p->tmask + (size_t)(y / PC_RENDER_TILE_H) * p->ntx;
        for (int tx = 0; tx < p->ntx; tx++)
            for (unsigned m = mrow[tx]; m; m &= m - 1) {
                const int c = __builtin_ctz(m);
                int *cc = cols + 2 * ((size_t)c * h + y);
                for (int x = tx * PC_RENDER_TILE_W; x < w && x < (tx + 1) * PC_RENDER_TILE_W; x++) {
                    float ray[3], sx, sy;
                    pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
                    if (!pc_cam_project(&p->cam[c].geo, ray, &sx, &sy))
                        continue;
                    const float wt = pc_render_feather(pc_render_border(&p->cam[c].geo, sx, sy), p->inv_feather);
                    if (!(wt > 0))
                        continue;
                    cc[0] = x < cc[0] ? x : cc[0];
                    cc[1] = x > cc[1] ? x : cc[1];
                }
            }
    }
    const float sw = 1.0f / p->inv_seam;
    const int mb = p->blend == PC_RENDER_MULTIBAND;
    const float margin = mb ? (float)pc_render_mb_reach(levels, p->inv_seam, NULL) : 0.0f;
    for (int y = 0; y < h; y++) {
        int order[PC_RENDER_MAX_CAMERAS], k = 0;
        for (int c = 0; c < n; c++) {
            if (cols[2 * ((size_t)c * h + y)] == INT_MAX)
                continue;
            int i = k++;
            while (i > 0 && cols[2 * ((size_t)order[i - 1] * h + y)] > cols[2 * ((size_t)c * h + y)]) {
                order[i] = order[i - 1];
                i--;
            }
            order[i] = c;
        }
        for (int i = 0; i + 1 < k; i++) {
            const int a = order[i], b = order[i + 1];
            const int *ca = cols + 2 * ((size_t)a * h + y), *cb = cols + 2 * ((size_t)b * h + y);
            if (cb[1] <= ca[1]) {
                pc_set_err(err, errlen, "blend seam: in output row %d camera %d's columns (%d..%d) lie within camera "
                           "%d's (%d..%d): seams need the cameras side by side in one row (use blend feather)", y, b,
                           cb[0], cb[1], a, ca[0], ca[1]);
                free(cols);
                return PC_EINVAL;
            }
            if (cb[0] > ca[1])
                continue; /* no overlap in this row */
            float lo = (float)cb[0] + margin, hi = (float)ca[1] - margin;
            if (!mb) { /* full weights; else weights the renderers do not fade; else none */
                int a_end, b_start;
                weighed_sides(p, a, b, y, cb[0], ca[1], 1.0f, &a_end, &b_start);
                lo = (float)b_start + sw;
                hi = (float)a_end - sw;
                if (lo > hi) {
                    weighed_sides(p, a, b, y, cb[0], ca[1], p->inv_feather, &a_end, &b_start);
                    lo = (float)b_start + sw;
                    hi = (float)a_end - sw;
                }
                if (lo > hi)
                    continue; /* no room for a seam: the row keeps the feather blend (below) */
            }
            if (lo > hi) /* too narrow for the blend zone: the middle */
                lo = hi = 0.5f * (float)(cb[0] + ca[1]);
            const size_t ia = (size_t)a * h + y;
            p->seam_next[ia] = (int8_t)b;
            p->seam_lim[2 * ia] = lo;
            p->seam_lim[2 * ia + 1] = hi;
            const float s = 0.5f * (lo + hi);
            p->seam[(size_t)(2 * a + 1) * h + y] = s;
            p->seam[(size_t)(2 * b) * h + y] = s;
        }
    }
    free(cols);
    return 0;
}

/* One run of rows [y0, y1) where camera a's right neighbour is b: the
 * least-difference path, |dx| <= 1 per row. */
static int place_run(pc_render_plan *p, const pc_render_src *s, int a, int b, int y0, int y1)
{
    const int h = p->view.h, rows = y1 - y0;
    int *lo = malloc(sizeof *lo * rows), *hi = malloc(sizeof *hi * rows);
    size_t cells = 0;
    if (!lo || !hi)
        goto oom;
    for (int r = 0; r < rows; r++) {
        const float *lim = p->seam_lim + 2 * ((size_t)a * h + y0 + r);
        lo[r] = (int)ceilf(lim[0]);
        hi[r] = (int)floorf(lim[1]);
        if (hi[r] < lo[r]) /* a range narrower than a column: its middle */
            lo[r] = hi[r] = (int)floorf(0.5f * (lim[0] + lim[1]) + 0.5f);
        cells += (size_t)(hi[r] - lo[r] + 1);
    }
    double *cost = malloc(sizeof *cost * cells);
    signed char *from = malloc(cells);
    size_t *off = malloc(sizeof *off * rows);
    if (!cost || !from || !off) {
        free(cost);
        free(from);
        free(off);
        goto oom;
    }
    size_t o = 0;
    for (int r = 0; r < rows; r++) {
        off[r] = o;
        const int y = y0 + r;
        for (int x = lo[r]; x <= hi[r]; x++, o++) {
            float ray[3];
            int ra[3], rb[3];
            pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
            pc_render_px(p, s, ray, x, y, 1u << a, NULL, ra);
            pc_render_px(p, s, ray, x, y, 1u << b, NULL, rb);
            double e = abs(ra[0] - rb[0]) + abs(ra[1] - rb[1]) + abs(ra[2] - rb[2]);
            double best = 0;
            signed char bf = 0;
            if (r > 0) {
                best = -1;
                for (int dx = -1; dx <= 1; dx++) {
                    int px = x + dx;
                    if (px < lo[r - 1] || px > hi[r - 1])
                        continue;
                    double c = cost[off[r - 1] + (size_t)(px - lo[r - 1])];
                    if (best < 0 || c < best) {
                        best = c;
                        bf = (signed char)dx;
                    }
                }
                if (best < 0) { /* the range jumped: come from the previous row's nearest column */
                    int px = x < lo[r - 1] ? lo[r - 1] : hi[r - 1];
                    best = cost[off[r - 1] + (size_t)(px - lo[r - 1])] + 1e6;
                    bf = (signed char)(px == lo[r - 1] ? -2 : 2); /* marker: that end of the previous row */
                }
            }
            cost[o] = e + best;
            from[o] = bf;
        }
    }
    /* back from the cheapest end */
    int x = lo[rows - 1];
    for (int xx = lo[rows - 1]; xx <= hi[rows - 1]; xx++)
        if (cost[off[rows - 1] + (size_t)(xx - lo[rows - 1])] < cost[off[rows - 1] + (size_t)(x - lo[rows - 1])])
            x = xx;
    for (int r = rows - 1; r >= 0; r--) {
        const int y = y0 + r;
        p->seam[(size_t)(2 * a + 1) * h + y] = (float)x;
        p->seam[(size_t)(2 * b) * h + y] = (float)x;
        if (r == 0)
            break;
        const signed char f = from[off[r] + (size_t)(x - lo[r])];
        if (f == 2 || f == -2)
            x = f < 0 ? lo[r - 1] : hi[r - 1];
        else
            x += f;
    }
    free(cost);
    free(from);
    free(off);
    free(lo);
    free(hi);
    return 0;
oom:
    free(lo);
    free(hi);
    return PC_ENOMEM;
}

int pc_render_plan_place_seams(pc_render_plan *p, const pc_picture *src, char *err, size_t errlen)
{
    if (!p || (p->blend != PC_RENDER_SEAM && p->blend != PC_RENDER_MULTIBAND) || !p->seam_next) {
        pc_set_err(err, errlen, "place seams: the plan was not built with blend seam or multiband");
        return PC_EINVAL;
    }
    if (!src || (src->fmt != PC_FMT_RGB24 && src->fmt != PC_FMT_RGBX32) || src->width != p->cam_w ||
        src->height != p->ncam * p->cam_h) {
        pc_set_err(err, errlen, "place seams: the source must be the %d cameras stacked (%dx%d)", p->ncam, p->cam_w,
                   p->ncam * p->cam_h);
        return PC_EINVAL;
    }
    const pc_render_src s = pc_render_src_of(src);
    const int h = p->view.h;
    for (int a = 0; a < p->ncam; a++)
        for (int y = 0; y < h;) {
            const int b = p->seam_next[(size_t)a * h + y];
            int y1 = y + 1;
            while (y1 < h && p->seam_next[(size_t)a * h + y1] == b)
                y1++;
            if (b >= 0 && place_run(p, &s, a, b, y, y1)) {
                pc_set_err(err, errlen, "place seams: out of memory");
                return PC_ENOMEM;
            }
            y = y1;
        }
    return pc_render_mb_update(p, err, errlen);
}
