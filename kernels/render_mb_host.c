/* render_mb_host.c - the host renderers of blend = multiband
 * (render_multiband.h): the C reference (single-threaded, the definition,
 * level by level over whole strips) and the CPU backend's version (the
 * same per-pixel functions on pc_cpu's threads, rows of every level split
 * between them; bit-identical). The main pass outside the strips is the
 * seam render (render_host.h's pixel); the CPU version runs
 * pc_render_cpu for it with the strips' tiles taken out of the camera
 * masks, then writes the strips' blocks.
 *
 * Per frame, in the plan's work area (d[k], c[k]: 3 floats per pixel):
 *   D_0 from the cameras, D_1 .. D_{L-1} by reduce, C_{L-1} = G_{L-1}
 *   D_{L-1}, C_{L-2} .. C_1 by the collapse, then every strip pixel.
 */
#include "render_host.h"
#include "render_multiband.h"

#include "algo_impl.h" /* pc_cpu_parallel */

#include <string.h>

/* The two cameras of strip st at output pixel (x, y): whether each sees
 * it, how far inside, and where. */
typedef struct pair {
    int ok[2];
    float d[2], sx[2], sy[2];
} pair;

static void pair_project(const pc_render_plan *p, const pc_mb_strip *st, int x, int y, pair *q)
{
    float ray[3];
    pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
    for (int e = 0; e < 2; e++) {
        const int c = e ? st->b : st->a;
        q->ok[e] = 0;
        q->d[e] = 0.0f;
        if (!pc_cam_project(&p->cam[c].geo, ray, &q->sx[e], &q->sy[e]))
            continue;
        q->d[e] = pc_render_border(&p->cam[c].geo, q->sx[e], q->sy[e]);
        q->ok[e] = q->d[e] > 0.0f;
    }
}

/* Strip row j of level 0: D_0 (at the column clamped to the row's span). */
static void level0_row(const pc_render_plan *p, const pc_render_src *s, const pc_mb_strip *st, int j)
{
    const struct pc_render_mb *mb = p->mb;
    const int *span = mb->span + 2 * (st->seam_off + (size_t)j);
    float *d = mb->d[0] + 3 * (st->off[0] + (size_t)j * st->w[0]);
    for (int i = 0; i < st->w[0]; i++, d += 3) {
        pair q = {{0, 0}, {0.0f, 0.0f}, {0.0f, 0.0f}, {0.0f, 0.0f}};
        if (span[0] <= span[1]) {
            const int x = st->x0 + i;
            pair_project(p, st, x < span[0] ? span[0] : (x > span[1] ? span[1] : x), st->y0 + j, &q);
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

/* Output pixel (x, y) of strip st: 8-bit RGB. Only the cameras the pixel
 * takes are sampled: a's side of the seam a, b's side b (both on the
 * ramp), the other where one does not see it. */
static void strip_px(const pc_render_plan *p, const pc_render_src *s, const pc_mb_strip *st, int x, int y, int rgb[3])
{
    const struct pc_render_mb *mb = p->mb;
    float acc[3] = {0.0f, 0.0f, 0.0f}, ws = 0.0f;
    pair q;
    pair_project(p, st, x, y, &q);
    if (q.ok[0] || q.ok[1]) {
        const int i = x - st->x0, j = y - st->y0;
        const float g0 = pc_mb_g0((float)x, mb->seam[st->seam_off + (size_t)j], mb->inv_sw);
        const float cover = pc_mb_cover(q.ok[0], q.d[0], q.ok[1], q.d[1]);
        const float *d1 = mb->d[1] + 3 * st->off[1], *c1 = mb->c[1] + 3 * st->off[1];
        float va[3] = {0.0f, 0.0f, 0.0f}, vb[3] = {0.0f, 0.0f, 0.0f};
        if (q.ok[0] && (g0 > 0.0f || !q.ok[1]))
            pc_render_sample(p, s, st->a, q.sx[0], q.sy[0], va);
        if (q.ok[1] && (g0 < 1.0f || !q.ok[0]))
            pc_render_sample(p, s, st->b, q.sx[1], q.sy[1], vb);
        for (int ch = 0; ch < 3; ch++) {
            const float a = q.ok[0] ? va[ch] : vb[ch], b = q.ok[1] ? vb[ch] : va[ch];
            const float ec = pc_mb_expand_px(c1, st->w[1], st->h[1], (size_t)st->w[1], 3, ch, i, j);
            const float ed = g0 > 0.0f ? pc_mb_expand_px(d1, st->w[1], st->h[1], (size_t)st->w[1], 3, ch, i, j) : 0.0f;
            acc[ch] = pc_mb_final(g0, a, b, ec, ed, cover);
        }
        ws = 1.0f;
    }
    pc_render_finish(acc, ws, p->inv_feather, p->photo, p->out_resp, PC_RIG_RESPONSE_KNOTS, rgb);
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
            level0_row(p, &s, st, j);
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
            for (int j = 0; j < 2; j++)
                for (int i = 0; i < 2; i++) {
                    if (t >= 0) {
                        strip_px(p, &s, &mb->strip[t], x + i, y + j, v[j][i]);
                        continue;
                    }
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
                level0_row(p, &jb->s, st, j);
                break;
            case STEP_REDUCE:
                reduce_row(mb, st, k, j);
                break;
            case STEP_COLLAPSE:
                collapse_row(mb, st, k, j);
                break;
            default: { /* row pair j: the strip's 2x2 blocks */
                const int y = st->y0 + 2 * j;
                for (int x = st->x0; x < st->x0 + st->w[0]; x += 2) {
                    int v[2][2][3];
                    for (int jj = 0; jj < 2; jj++)
                        for (int ii = 0; ii < 2; ii++)
                            strip_px(p, &jb->s, st, x + ii, y + jj, v[jj][ii]);
                    pc_ref_store_block(jb->dst, &jb->yc, x, y, v);
                }
            }
            }
    }
}

int pc_render_mb_cpu(pc_cpu *cpu, const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err,
                     size_t errlen)
{
    const struct pc_render_mb *mb = p->mb;
    job jb;
    memset(&jb, 0, sizeof jb);
    jb.p = p;
    jb.s = pc_render_src_of(src);
    jb.dst = dst;
    jb.step = STEP_LEVEL0;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &jb.yc);
    pc_cpu_parallel(cpu, band, &jb);
    jb.step = STEP_REDUCE;
    for (jb.k = 1; jb.k < mb->levels; jb.k++)
        pc_cpu_parallel(cpu, band, &jb);
    jb.step = STEP_COLLAPSE;
    for (jb.k = mb->levels - 2; jb.k >= 1; jb.k--)
        pc_cpu_parallel(cpu, band, &jb);
    /* everything outside the strips: the seam render, whose masks have
     * no camera in the strips' tiles (it writes them black) */
    pc_render_plan rest = *p;
    rest.tmask = mb->tmask_rest;
    rest.mb = NULL;
    int rc = pc_render_cpu(cpu, &rest, src, dst, err, errlen);
    if (rc)
        return rc;
    jb.step = STEP_STRIPS;
    pc_cpu_parallel(cpu, band, &jb);
    return 0;
}
