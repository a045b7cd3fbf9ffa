/* render_mb_host.c - the host renderers of blend = multiband
 * (render_multiband.h): the C reference (single-threaded, the definition,
 * level by level over whole strips) and the CPU backend's version (the
 * same per-pixel functions on the CPU backend's thread pool (pool.h), rows
 * of every level split between them; bit-identical: where the plan has maps it reads the
 * cameras' positions from them, the same floats the reference projects).
 * The main pass outside the strips is the seam render (render_host.h's
 * pixel); the CPU version runs pc_render_cpu_lanes for it with the strips'
 * tiles taken out of the camera masks, then writes the strips' 2x2 blocks
 * (each expands C_1 and D_1 from one 3x3 neighbourhood of level 1).
 *
 * Per frame, in the plan's work area (d[k], c[k]: 3 floats per pixel):
 *   D_0 from the cameras, D_1 .. D_{L-1} by reduce, C_{L-1} = G_{L-1}
 *   D_{L-1}, C_{L-2} .. C_1 by the collapse, then every strip pixel.
 */
#include "render_host.h"
#include "render_multiband.h"

#include "pool.h" /* pc_pool_run */

#include <string.h>

/* The two cameras of strip st at output pixel (x, y): whether each sees
 * it, how far inside, and where. */
typedef struct pair {
    int ok[2];
    float d[2], sx[2], sy[2];
} pair;

/* maps: read the positions from the plan's maps (the CPU renderer, when
 * the plan has them: the floats pc_cam_project gives, so the same bytes;
 * render.h's layout, where a camera outside the tile's mask sees none of
 * its pixels) instead of projecting the ray (the reference). */
static void pair_project(const pc_render_plan *p, const pc_mb_strip *st, int x, int y, int maps, pair *q)
{
    float ray[3];
    const float *m = NULL;
    unsigned mask = 0;
    if (maps) {
        const size_t t = (size_t)(y / PC_RENDER_TILE_H) * p->ntx + x / PC_RENDER_TILE_W;
        mask = p->tmask[t];
        m = p->map + 2 * ((size_t)p->map_off[t] + 4 * (16 * ((y >> 1) & 3) + ((x >> 1) & 15)) + (x & 1) + 2 * (y & 1));
    } else {
        pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
    }
    for (int e = 0; e < 2; e++) {
        const int c = e ? st->b : st->a;
        q->ok[e] = 0;
        q->d[e] = 0.0f;
        if (maps) {
            if (!(mask >> c & 1u))
                continue;
            const float *mc = m + 2 * 256 * (size_t)__builtin_popcount(mask & ((1u << c) - 1));
            if (!(mc[0] > -1e8f))
                continue;
            q->sx[e] = mc[0];
            q->sy[e] = mc[1];
        } else if (!pc_cam_project(&p->cam[c].geo, ray, &q->sx[e], &q->sy[e])) {
            continue;
        }
        q->d[e] = pc_render_border(&p->cam[c].geo, q->sx[e], q->sy[e]);
        q->ok[e] = q->d[e] > 0.0f;
    }
}

/* Strip row j of level 0: D_0 (at the column clamped to the row's span). */
static void level0_row(const pc_render_plan *p, const pc_render_src *s, const pc_mb_strip *st, int maps, int j)
{
    const struct pc_render_mb *mb = p->mb;
    const int *span = mb->span + 2 * (st->seam_off + (size_t)j), *band = mb->band + 2 * (st->seam_off + (size_t)j);
    float *d = mb->d[0] + 3 * (st->off[0] + (size_t)j * st->w[0]);
    for (int i = 0; i < st->w[0]; i++, d += 3) {
        pair q = {{0, 0}, {0.0f, 0.0f}, {0.0f, 0.0f}, {0.0f, 0.0f}};
        const int x = st->x0 + i;
        if (span[0] <= span[1] && x >= band[0] && x <= band[1]) {
            pair_project(p, st, x < span[0] ? span[0] : (x > span[1] ? span[1] : x), st->y0 + j, maps, &q);
        }
        float va[3], vb[3];
        if (q.ok[0] && q.ok[1]) {
            pc_render_sample(p, s, st->a, q.sx[0], q.sy[0], va);
            pc_render_sample(p, s, st->b, q.sx[1], q.sy[1], vb);
        }
        for (int ch = 0; ch < 3; ch++)
            d[ch] = q.ok[0] && q.ok[1] ? va[ch] - vb[ch] : 0.0f;
    }
}

/* Strip row j of level k >= 1: D_k by reduce, and at the top level C_k. */
static void reduce_row(const struct pc_render_mb *mb, const pc_mb_strip *st, int k, int j)
{
    const float *src = mb->d[k - 1] + 3 * st->off[k - 1];
    float *d = mb->d[k] + 3 * (st->off[k] + (size_t)j * st->w[k]);
    for (int i = 0; i < st->w[k]; i++)
        for (int ch = 0; ch < 3; ch++)
            d[3 * i + ch] = pc_mb_reduce_px(src, st->w[k - 1], st->h[k - 1], (size_t)st->w[k - 1], 3, ch, i, j);
    if (k == mb->levels - 1) {
        const float *g = mb->mask[k] + st->off[k] + (size_t)j * st->w[k];
        float *c = mb->c[k] + 3 * (st->off[k] + (size_t)j * st->w[k]);
        for (int i = 0; i < st->w[k]; i++)
            for (int ch = 0; ch < 3; ch++)
                c[3 * i + ch] = g[i] * d[3 * i + ch];
    }
}

/* Strip row j of level k (1 <= k <= L-2): C_k by the collapse. */
static void collapse_row(const struct pc_render_mb *mb, const pc_mb_strip *st, int k, int j)
{
    const float *d1 = mb->d[k + 1] + 3 * st->off[k + 1], *c1 = mb->c[k + 1] + 3 * st->off[k + 1];
    const size_t o = st->off[k] + (size_t)j * st->w[k];
    const float *g = mb->mask[k] + o, *d = mb->d[k] + 3 * o;
    float *c = mb->c[k] + 3 * o;
    const int w1 = st->w[k + 1], h1 = st->h[k + 1];
    for (int i = 0; i < st->w[k]; i++)
        for (int ch = 0; ch < 3; ch++) {
            const float ed = pc_mb_expand_px(d1, w1, h1, (size_t)w1, 3, ch, i, j);
            const float ec = pc_mb_expand_px(c1, w1, h1, (size_t)w1, 3, ch, i, j);
            c[3 * i + ch] = pc_mb_collapse(g[i], d[3 * i + ch], ed, ec);
        }
}

/* The 3x3 neighbourhood of level-1 pixel (m, n) in a level-1 array (RGB
 * floats, w x h), indices clamped: nb[row][col][ch]. */
static void neighbours(const float *src, int w, int h, int m, int n, float nb[3][3][3])
{
    const int c[3] = {pc_mb_clampi(m - 1, w), pc_mb_clampi(m, w), pc_mb_clampi(m + 1, w)};
    for (int t = 0; t < 3; t++) {
        const float *row = src + 3 * (size_t)pc_mb_clampi(n - 1 + t, h) * w;
        for (int u = 0; u < 3; u++)
            for (int ch = 0; ch < 3; ch++)
                nb[t][u][ch] = row[3 * (size_t)c[u] + ch];
    }
}

/* expand at level-0 pixel (2m + px, 2n + py) from the neighbourhood of
 * (m, n): pc_mb_expand_px's operations in its order. */
static float expand_nb(const float nb[3][3][3], int px, int py, int ch)
{
    float r[3];
    for (int t = 0; t < 3; t++)
        r[t] = pc_mb_expand3(px, nb[t][0][ch], nb[t][1][ch], nb[t][2][ch]);
    return pc_mb_expand3(py, r[0], r[1], r[2]);
}

/* The 2x2 block at output pixel (x, y) (even) of strip st: 8-bit RGB.
 * Only the cameras a pixel takes are sampled: a's side of the seam a, b's
 * side b (both on the ramp), the other where one does not see it. */
static void strip_block(const pc_render_plan *p, const pc_render_src *s, const pc_mb_strip *st, int maps, int x, int y,
                        int v[2][2][3])
{
    const struct pc_render_mb *mb = p->mb;
    const int i0 = x - st->x0, j0 = y - st->y0;
    float nc[3][3][3], nd[3][3][3];
    int have_c = 0, have_d = 0;
    for (int k = 0; k < 4; k++) {
        const int xx = x + (k & 1), yy = y + (k >> 1);
        float acc[3] = {0.0f, 0.0f, 0.0f}, ws = 0.0f;
        pair q;
        pair_project(p, st, xx, yy, maps, &q);
        if (q.ok[0] || q.ok[1]) {
            const float g0 = pc_mb_g0((float)xx, mb->seam[st->seam_off + (size_t)(j0 + (k >> 1))], mb->inv_sw);
            const float cover = pc_mb_cover(q.ok[0], q.d[0], q.ok[1], q.d[1]);
            float va[3] = {0.0f, 0.0f, 0.0f}, vb[3] = {0.0f, 0.0f, 0.0f};
            if (q.ok[0] && (g0 > 0.0f || !q.ok[1]))
                pc_render_sample(p, s, st->a, q.sx[0], q.sy[0], va);
            if (q.ok[1] && (g0 < 1.0f || !q.ok[0]))
                pc_render_sample(p, s, st->b, q.sx[1], q.sy[1], vb);
            if (!have_c) {
                neighbours(mb->c[1] + 3 * st->off[1], st->w[1], st->h[1], i0 >> 1, j0 >> 1, nc);
                have_c = 1;
            }
            if (g0 > 0.0f && !have_d) {
                neighbours(mb->d[1] + 3 * st->off[1], st->w[1], st->h[1], i0 >> 1, j0 >> 1, nd);
                have_d = 1;
            }
            for (int ch = 0; ch < 3; ch++) {
                const float a = q.ok[0] ? va[ch] : vb[ch], b = q.ok[1] ? vb[ch] : va[ch];
                const float ec = expand_nb(nc, k & 1, k >> 1, ch);
                const float ed = g0 > 0.0f ? expand_nb(nd, k & 1, k >> 1, ch) : 0.0f;
                acc[ch] = pc_mb_final(g0, a, b, ec, ed, cover);
            }
            ws = 1.0f;
        }
        pc_render_finish(acc, ws, p->inv_feather, p->photo, p->out_resp, PC_RIG_RESPONSE_KNOTS, v[k >> 1][k & 1]);
    }
}

/* --- the reference ------------------------------------------------------ */

int pc_render_mb_ref(const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    const struct pc_render_mb *mb = p->mb;
    const int L = mb->levels;
    const pc_render_src s = pc_render_src_of(src);
    for (int n = 0; n < mb->nstrips; n++) {
        const pc_mb_strip *st = &mb->strip[n];
        for (int j = 0; j < st->h[0]; j++)
            level0_row(p, &s, st, 0, j);
        for (int k = 1; k < L; k++)
            for (int j = 0; j < st->h[k]; j++)
                reduce_row(mb, st, k, j);
        for (int k = L - 2; k >= 1; k--)
            for (int j = 0; j < st->h[k]; j++)
                collapse_row(mb, st, k, j);
    }
    pc_yuv_coeffs yc;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &yc);
    const unsigned all = (1u << p->ncam) - 1;
    for (int y = 0; y < p->view.h; y += 2)
        for (int x = 0; x < p->view.w; x += 2) {
            const int t = mb->tile_strip[(size_t)(y / PC_RENDER_TILE_H) * p->ntx + x / PC_RENDER_TILE_W];
            int v[2][2][3];
            if (t >= 0)
                strip_block(p, &s, &mb->strip[t], 0, x, y, v);
            for (int j = 0; j < 2 && t < 0; j++)
                for (int i = 0; i < 2; i++) {
                    float ray[3];
                    pc_view_ray(&p->view, (float)(x + i), (float)(y + j), ray);
                    pc_render_px(p, &s, ray, x + i, y + j, all, p->seam, v[j][i]);
                }
            pc_ref_store_block(dst, &yc, x, y, v);
        }
    (void)err;
    (void)errlen;
    return 0;
}

/* --- the CPU backend's -------------------------------------------------- */

enum { STEP_LEVEL0, STEP_REDUCE, STEP_COLLAPSE, STEP_STRIPS };

typedef struct job {
    const pc_render_plan *p;
    pc_render_src s;
    const pc_picture *dst;
    pc_yuv_coeffs yc;
    int step, k;
} job;

/* Band `index` of n of one step: the same share of every strip's rows. */
static void band(void *arg, int index, int n)
{
    const job *jb = arg;
    const pc_render_plan *p = jb->p;
    const struct pc_render_mb *mb = p->mb;
    for (int t = 0; t < mb->nstrips; t++) {
        const pc_mb_strip *st = &mb->strip[t];
        const int k = jb->step == STEP_LEVEL0 || jb->step == STEP_STRIPS ? 0 : jb->k;
        const int rows = jb->step == STEP_STRIPS ? st->h[0] / 2 : st->h[k];
        const int j0 = (int)((int64_t)rows * index / n), j1 = (int)((int64_t)rows * (index + 1) / n);
        for (int j = j0; j < j1; j++)
            switch (jb->step) {
            case STEP_LEVEL0:
                level0_row(p, &jb->s, st, p->map != NULL, j);
                break;
            case STEP_REDUCE:
                reduce_row(mb, st, k, j);
                break;
            case STEP_COLLAPSE:
                collapse_row(mb, st, k, j);
                break;
            default: { /* row pair j: the strip's 2x2 blocks */
                const int y = st->y0 + 2 * j;
                const int8_t *trow = mb->tile_strip + (size_t)(y / PC_RENDER_TILE_H) * p->ntx;
                for (int x = st->x0; x < st->x0 + st->w[0]; x += 2) {
                    int v[2][2][3];
                    if (trow[x / PC_RENDER_TILE_W] != t)
                        continue; /* the main pass's */
                    strip_block(p, &jb->s, st, p->map != NULL, x, y, v);
                    pc_ref_store_block(jb->dst, &jb->yc, x, y, v);
                }
            }
            }
    }
}

int pc_render_mb_cpu(pc_pool *cpu, const char *lanes, const pc_render_plan *p, const pc_picture *src,
                     const pc_picture *dst, char *err, size_t errlen)
{
    const struct pc_render_mb *mb = p->mb;
    job jb;
    memset(&jb, 0, sizeof jb);
    jb.p = p;
    jb.s = pc_render_src_of(src);
    jb.dst = dst;
    jb.step = STEP_LEVEL0;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &jb.yc);
    pc_pool_run(cpu, band, &jb);
    jb.step = STEP_REDUCE;
    for (jb.k = 1; jb.k < mb->levels; jb.k++)
        pc_pool_run(cpu, band, &jb);
    jb.step = STEP_COLLAPSE;
    for (jb.k = mb->levels - 2; jb.k >= 1; jb.k--)
        pc_pool_run(cpu, band, &jb);
    /* everything outside the strips: the seam render, whose masks have
     * no camera in the strips' tiles (it writes them black) */
    pc_render_plan rest = *p;
    rest.tmask = mb->tmask_rest;
    rest.mb = NULL;
    int rc = pc_render_cpu_lanes(cpu, lanes, &rest, src, dst, err, errlen);
    if (rc)
        return rc;
    jb.step = STEP_STRIPS;
    pc_pool_run(cpu, band, &jb);
    return 0;
}
