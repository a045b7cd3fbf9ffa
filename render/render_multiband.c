/* render_multiband.c - the multiband part of a render plan
 * (render_multiband.h), built once per rig, view and seam placement: the
 * strips around the seams, their masks G_k, the tiles whose pixels they
 * give (those of the blend zone; the main pass keeps the others), and the
 * host renderers' work area. Nothing here runs per frame.
 *
 * A strip spans the range its seam may take (render_seam.c) +- the blend
 * zone, in whole mask tiles, when the plan is built; once the seams are
 * placed it shrinks to them (+- the zone): fewer pixels per frame, and
 * every check made at build (no two strips share a tile, no third camera
 * in one) holds for the part that remains.
 *
 * How wide a strip must be. Where every G_k is 0 or 1 the blend gives
 * exactly one camera's value; the levels' filters spread a seam's
 * fractional weights over a zone that grows with the number of levels.
 * mb_zones measures it on one row, for every position of a seam between
 * whole pixels: `reach`, the farthest output pixel from a seam whose value
 * the blend changes. A strip spans the range its seam may take +- reach,
 * so outside it the main pass's one-camera value is the blend's; the seams
 * keep reach from the overlap's edges, so every pixel the blend changes
 * has both cameras. The blend reads D farther out (`depend`: reach plus
 * how far a changed pixel reads D from itself), where the definition's
 * flat continuation of D past the overlap takes over; beyond depend of
 * every seam (of the rows within depend) nothing reads D, so the pyramid
 * takes it as 0 there and no camera is sampled for it.
 */
#include "render_multiband.h"

#include "errmsg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ZN 1024 /* the row mb_zones simulates (level 0) */

/* The zones of one seam at s: level k's flags in t[k] (changed: not the
 * trivial one-camera value) and need[k] (D_k read). */
static void mb_zones(int levels, float inv_sw, float s, int *reach, int *depend)
{
    static const int n0 = ZN;
    float g[PC_MB_MAX_LEVELS][ZN];
    unsigned char t[PC_MB_MAX_LEVELS][ZN], need[PC_MB_MAX_LEVELS][ZN];
    int n[PC_MB_MAX_LEVELS];
    n[0] = n0;
    for (int x = 0; x < n0; x++)
        g[0][x] = pc_mb_g0((float)x, s, inv_sw);
    for (int k = 1; k < levels; k++) {
        n[k] = (n[k - 1] + 1) / 2;
        for (int i = 0; i < n[k]; i++)
            g[k][i] = pc_mb_reduce_px(g[k - 1], n[k - 1], 1, 0, 1, 0, i, 0);
    }
    memset(t, 0, sizeof t);
    memset(need, 0, sizeof need);
    for (int k = levels - 1; k >= 0; k--)
        for (int x = 0; x < n[k]; x++) {
            int ch = g[k][x] != 0.0f && g[k][x] != 1.0f;
            if (k < levels - 1) { /* the expansion's taps: changed, or on the other side */
                const int m = x >> 1;
                for (int i = (x & 1) ? m : m - 1; i <= m + 1; i++) {
                    const int ii = pc_mb_clampi(i, n[k + 1]);
                    ch |= t[k + 1][ii] || g[k + 1][ii] != g[k][x];
                }
            }
            t[k][x] = (unsigned char)ch;
        }
    /* what the changed pixels read: C_1 and D_1 at the taps of the level-0
     * ones, C_k's taps at level k+1, then every reduce's taps below */
    unsigned char needc[PC_MB_MAX_LEVELS][ZN];
    memset(needc, 0, sizeof needc);
    for (int k = 0; k < levels - 1; k++)
        for (int x = 0; x < n[k]; x++) {
            if (!(k == 0 ? t[0][x] : needc[k][x]))
                continue;
            need[k][x] = 1;
            const int m = x >> 1;
            for (int i = (x & 1) ? m : m - 1; i <= m + 1; i++) {
                const int ii = pc_mb_clampi(i, n[k + 1]);
                needc[k + 1][ii] = need[k + 1][ii] = 1;
            }
        }
    for (int k = levels - 1; k >= 1; k--)
        for (int i = 0; i < n[k]; i++)
            if (need[k][i] || needc[k][i])
                for (int d = -2; d <= 2; d++)
                    need[k - 1][pc_mb_clampi(2 * i + d, n[k - 1])] = 1;
    /* reach: the farthest changed pixel from the seam; depend: reach plus
     * the farthest a changed pixel reads D from itself (the filters are
     * alike along both axes, so in the plane a changed pixel reads D within
     * that square of itself) */
    *reach = 0;
    int spread = 0;
    for (int x = 0; x < n0; x++) {
        const int dist = (int)ceilf(fabsf((float)x - s));
        if (t[0][x] && dist > *reach)
            *reach = dist;
        if (!need[0][x])
            continue;
        int near = n0;
        for (int u = 0; u < n0; u++)
            if (t[0][u] && abs(u - x) < near)
                near = abs(u - x);
        spread = near > spread ? near : spread;
    }
    *depend = *reach + spread;
}

static void mb_zones_all(int levels, float inv_sw, int *reach, int *depend)
{
    *reach = *depend = 0;
    /* every position of the seam against the coarsest level's grid, on
     * whole and half pixels (the seams sit on whole columns once placed,
     * half ones in the middle of an overlap before) */
    for (int ph = 0; ph < 2 << levels; ph++) {
        int r, d;
        mb_zones(levels, inv_sw, (float)(ZN / 2) + 0.5f * (float)ph, &r, &d);
        *reach = r > *reach ? r : *reach;
        *depend = d > *depend ? d : *depend;
    }
}

int pc_render_mb_reach(int levels, float inv_sw, int *depend)
{
    int r, d;
    mb_zones_all(levels, inv_sw, &r, &d);
    if (depend)
        *depend = d;
    return r;
}

void pc_render_mb_free(struct pc_render_mb *mb)
{
    if (!mb)
        return;
    free(mb->seam);
    free(mb->span);
    free(mb->band);
    for (int k = 0; k < PC_MB_MAX_LEVELS; k++) {
        free(mb->mask[k]);
        free(mb->d[k]);
        free(mb->c[k]);
    }
    free(mb->tile_strip);
    free(mb->tmask_rest);
    free(mb);
}

static int floor_to(int v, int m) { return v >= 0 ? v / m * m : -((-v + m - 1) / m) * m; }

/* Strip st's columns: its seams' extent, +- reach, in whole tiles,
 * within [xlo, xhi). placed 0: the range the seams may take (at build:
 * whatever their placement, the strips never grow); 1: the seams as they
 * are (after a placement: the strips shrink to them). */
static void strip_columns(const pc_render_plan *p, const struct pc_render_mb *mb, pc_mb_strip *st, int placed,
                          int xlo, int xhi)
{
    const int h = p->view.h;
    float smin = 1e30f, smax = -1e30f;
    for (int y = st->y0; y < st->y0 + st->h[0]; y++)
        if (p->seam_next[(size_t)st->a * h + y] == st->b) {
            const float *lim = p->seam_lim + 2 * ((size_t)st->a * h + y);
            const float s = p->seam[(size_t)(2 * st->a + 1) * h + y];
            const float lo = placed ? s : lim[0] - 0.5f, hi = placed ? s : lim[1] + 0.5f;
            smin = lo < smin ? lo : smin;
            smax = hi > smax ? hi : smax;
        }
    int x0 = floor_to((int)floorf(smin) - mb->reach, PC_RENDER_TILE_W);
    int x1 = floor_to((int)ceilf(smax) + mb->reach + 1 + PC_RENDER_TILE_W - 1, PC_RENDER_TILE_W); /* [x0, x1) */
    x0 = x0 < xlo ? xlo : x0;
    x1 = x1 > xhi ? xhi : x1;
    st->x0 = x0;
    st->w[0] = x1 > x0 ? x1 - x0 : 0;
    for (int k = 1; k < mb->levels; k++) {
        st->w[k] = (st->w[k - 1] + 1) / 2;
        st->h[k] = (st->h[k - 1] + 1) / 2;
    }
}

/* The strip of cameras a, b over output rows [ya, yb] (the rows where a's
 * right neighbour is b). */
static void strip_geometry(const pc_render_plan *p, const struct pc_render_mb *mb, pc_mb_strip *st, int a, int b,
                           int ya, int yb)
{
    const int h = p->view.h;
    int y0 = floor_to(ya, PC_RENDER_TILE_H), y1 = floor_to(yb + 1 + PC_RENDER_TILE_H - 1, PC_RENDER_TILE_H);
    y1 = y1 > h ? h : y1;
    memset(st, 0, sizeof *st);
    st->a = a;
    st->b = b;
    st->y0 = y0;
    st->h[0] = y1 - y0;
    strip_columns(p, mb, st, 0, 0, p->view.w);
}

/* The strips: one per run of rows where camera a's right neighbour is b. */
static int find_strips(const pc_render_plan *p, struct pc_render_mb *mb, char *err, size_t errlen)
{
    const int h = p->view.h;
    for (int a = 0; a < p->ncam; a++)
        for (int y = 0; y < h;) {
            const int b = p->seam_next[(size_t)a * h + y];
            if (b < 0) {
                y++;
                continue;
            }
            /* the pair's rows, through short gaps (a row or two where the
             * overlap is too narrow to have a seam) */
            int yb = y;
            for (int yy = y + 1; yy < h; yy++) {
                const int bb = p->seam_next[(size_t)a * h + yy];
                if (bb == b)
                    yb = yy;
                else if (bb >= 0 || yy - yb > 2 * PC_RENDER_TILE_H)
                    break;
            }
            if (mb->nstrips == PC_MB_MAX_STRIPS) {
                pc_set_err(err, errlen, "blend multiband: more than %d overlaps", PC_MB_MAX_STRIPS);
                return PC_EINVAL;
            }
            strip_geometry(p, mb, &mb->strip[mb->nstrips++], a, b, y, yb);
            y = yb + 1;
        }
    return 0;
}

/* At build, over the strips' whole rectangles (whatever the seams'
 * placement, their zones stay inside): no tile in two strips, and none
 * that a third camera's mask holds may have a pixel that camera sees.
 * Leaves the tile tables allocated (claim_zones fills them). */
static int check_tiles(const pc_render_plan *p, struct pc_render_mb *mb, char *err, size_t errlen)
{
    const size_t nt = (size_t)p->ntx * p->nty;
    if (!mb->tile_strip)
        mb->tile_strip = malloc(nt);
    if (!mb->tmask_rest)
        mb->tmask_rest = malloc(sizeof *mb->tmask_rest * nt);
    if (!mb->tile_strip || !mb->tmask_rest) {
        pc_set_err(err, errlen, "blend multiband: out of memory for the tile tables");
        return PC_ENOMEM;
    }
    memset(mb->tile_strip, -1, nt);
    memcpy(mb->tmask_rest, p->tmask, sizeof *mb->tmask_rest * nt);
    for (int s = 0; s < mb->nstrips; s++) {
        const pc_mb_strip *st = &mb->strip[s];
        const int tx0 = st->x0 / PC_RENDER_TILE_W, ty0 = st->y0 / PC_RENDER_TILE_H;
        const int tx1 = (st->x0 + st->w[0] + PC_RENDER_TILE_W - 1) / PC_RENDER_TILE_W;
        const int ty1 = (st->y0 + st->h[0] + PC_RENDER_TILE_H - 1) / PC_RENDER_TILE_H;
        for (int ty = ty0; ty < ty1; ty++)
            for (int tx = tx0; tx < tx1; tx++) {
                const size_t t = (size_t)ty * p->ntx + tx;
                if (mb->tile_strip[t] >= 0) {
                    const pc_mb_strip *o = &mb->strip[mb->tile_strip[t]];
                    pc_set_err(err, errlen, "blend multiband: the blend zones of the overlaps of cameras %d|%d and "
                               "%d|%d meet at output pixel (%d, %d): the cameras are too narrow for %d levels (fewer "
                               "levels, or blend seam)", o->a, o->b, st->a, st->b, tx * PC_RENDER_TILE_W,
                               ty * PC_RENDER_TILE_H, mb->levels);
                    return PC_EINVAL;
                }
                mb->tile_strip[t] = (int8_t)s;
                const unsigned others = p->tmask[t] & ~(1u << st->a) & ~(1u << st->b);
                for (unsigned m = others; m; m &= m - 1) {
                    const int c = __builtin_ctz(m);
                    for (int y = ty * PC_RENDER_TILE_H; y < (ty + 1) * PC_RENDER_TILE_H && y < p->view.h; y++)
                        for (int x = tx * PC_RENDER_TILE_W; x < (tx + 1) * PC_RENDER_TILE_W && x < p->view.w; x++) {
                            float ray[3], sx, sy;
                            pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
                            if (pc_cam_project(&p->cam[c].geo, ray, &sx, &sy) &&
                                pc_render_border(&p->cam[c].geo, sx, sy) > 0.0f) {
                                pc_set_err(err, errlen, "blend multiband: camera %d also sees output pixel (%d, %d), "
                                           "in the blend zone of the overlap of cameras %d and %d: the multi-band "
                                           "blend takes overlaps of two cameras (fewer levels, or blend seam)", c, x,
                                           y, st->a, st->b);
                                return PC_EINVAL;
                            }
                        }
                }
            }
    }
    return 0;
}

/* Whether the seam render (the main pass) would not give output pixel
 * (x, y) of strip st its seam-side camera's full value: both cameras see
 * it, and the one whose side of the seam it is on sees it less than a
 * source pixel from its border (where the main pass's normalisation fades
 * it, render.h). */
static int main_pass_fades(const pc_render_plan *p, const pc_mb_strip *st, float seam, int x, int y)
{
    float ray[3], d[2];
    pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
    for (int e = 0; e < 2; e++) {
        const int c = e ? st->b : st->a;
        float sx, sy;
        if (!pc_cam_project(&p->cam[c].geo, ray, &sx, &sy))
            return 0;
        d[e] = pc_render_border(&p->cam[c].geo, sx, sy);
        if (!(d[e] > 0.0f))
            return 0;
    }
    return d[(float)x < seam ? 0 : 1] < 1.0f;
}

/* The tiles the strips' pixels come from: in each tile row of a strip,
 * those within `reach` of a seam of the rows within `reach` of it (the
 * blend's filters act alike along both axes: outside that square around
 * the seam every G_k is 0 or 1 and the pixel is one camera's), and those
 * where the main pass would fade an overlap pixel (main_pass_fades: the
 * seam render's normalisation at the overlap's ends). The rest of the
 * strip's rectangle stays in the main pass, which gives that camera's
 * value (the pyramid still covers the rectangle). */
static void claim_zones(const pc_render_plan *p, struct pc_render_mb *mb)
{
    const size_t nt = (size_t)p->ntx * p->nty;
    memset(mb->tile_strip, -1, nt);
    memcpy(mb->tmask_rest, p->tmask, sizeof *mb->tmask_rest * nt);
    const int R = mb->reach;
    for (int s = 0; s < mb->nstrips; s++) {
        const pc_mb_strip *st = &mb->strip[s];
        const float *seam = mb->seam + st->seam_off;
        for (int ty = st->y0 / PC_RENDER_TILE_H; ty * PC_RENDER_TILE_H < st->y0 + st->h[0]; ty++) {
            const int y0 = ty * PC_RENDER_TILE_H;
            int j0 = y0 - R - st->y0, j1 = y0 + PC_RENDER_TILE_H - 1 + R - st->y0;
            j0 = j0 < 0 ? 0 : j0;
            j1 = j1 >= st->h[0] ? st->h[0] - 1 : j1;
            float zmin = 1e30f, zmax = -1e30f;
            for (int j = j0; j <= j1; j++) {
                zmin = seam[j] < zmin ? seam[j] : zmin;
                zmax = seam[j] > zmax ? seam[j] : zmax;
            }
            int x0 = (int)floorf(zmin) - R - 1, x1 = (int)ceilf(zmax) + R + 1; /* inclusive */
            x0 = x0 < st->x0 ? st->x0 : x0;
            x1 = x1 >= st->x0 + st->w[0] ? st->x0 + st->w[0] - 1 : x1;
            const int tz0 = x0 <= x1 ? x0 / PC_RENDER_TILE_W : 1, tz1 = x0 <= x1 ? x1 / PC_RENDER_TILE_W : 0;
            for (int tx = st->x0 / PC_RENDER_TILE_W; tx * PC_RENDER_TILE_W < st->x0 + st->w[0]; tx++) {
                int claim = tx >= tz0 && tx <= tz1;
                for (int y = y0; !claim && y < y0 + PC_RENDER_TILE_H && y < st->y0 + st->h[0]; y++)
                    for (int x = tx * PC_RENDER_TILE_W; !claim && x < (tx + 1) * PC_RENDER_TILE_W && x < p->view.w;
                         x++)
                        claim = y >= st->y0 && main_pass_fades(p, st, seam[y - st->y0], x, y);
                if (!claim)
                    continue;
                const size_t t = (size_t)ty * p->ntx + tx;
                mb->tile_strip[t] = (int8_t)s;
                mb->tmask_rest[t] = 0;
            }
        }
    }
}

/* Where each strip's levels, seams and spans lie in the shared arrays. */
static void layout(struct pc_render_mb *mb)
{
    size_t rows = 0;
    memset(mb->npx, 0, sizeof mb->npx);
    for (int s = 0; s < mb->nstrips; s++) {
        pc_mb_strip *st = &mb->strip[s];
        st->seam_off = rows;
        rows += (size_t)st->h[0];
        for (int k = 0; k < mb->levels; k++) {
            st->off[k] = mb->npx[k];
            mb->npx[k] += (size_t)st->w[k] * st->h[k];
        }
    }
    mb->nseam = rows;
}

/* The per-level arrays, for the strips as built (they only shrink after). */
static int alloc_levels(struct pc_render_mb *mb, char *err, size_t errlen)
{
    const int L = mb->levels;
    const size_t rows = mb->nseam;
    mb->seam = malloc(sizeof *mb->seam * (rows ? rows : 1));
    mb->span = malloc(sizeof *mb->span * 2 * (rows ? rows : 1));
    mb->band = malloc(sizeof *mb->band * 2 * (rows ? rows : 1));
    int rc = !mb->seam || !mb->span || !mb->band;
    for (int k = 1; k < L && !rc; k++)
        rc = !(mb->mask[k] = malloc(sizeof(float) * (mb->npx[k] ? mb->npx[k] : 1)));
    for (int k = 0; k < L && !rc; k++) {
        rc = !(mb->d[k] = malloc(sizeof(float) * 3 * (mb->npx[k] ? mb->npx[k] : 1)));
        if (!rc && k)
            rc = !(mb->c[k] = malloc(sizeof(float) * 3 * (mb->npx[k] ? mb->npx[k] : 1)));
    }
    if (rc) {
        pc_set_err(err, errlen, "blend multiband: out of memory for the masks and the pyramids");
        return PC_ENOMEM;
    }
    return 0;
}

/* Each strip row's seam (rows outside the pair's take the nearest one's),
 * and the masks G_1 .. G_{L-1}. */
static int seams_and_masks(const pc_render_plan *p, struct pc_render_mb *mb)
{
    const int h = p->view.h, L = mb->levels;
    size_t maxpx = 0;
    for (int s = 0; s < mb->nstrips; s++)
        maxpx = (size_t)mb->strip[s].w[0] * mb->strip[s].h[0] > maxpx ? (size_t)mb->strip[s].w[0] * mb->strip[s].h[0]
                                                                        : maxpx;
    float *g0 = malloc(sizeof *g0 * (maxpx ? maxpx : 1));
    if (!g0)
        return PC_ENOMEM;
    for (int s = 0; s < mb->nstrips; s++) {
        const pc_mb_strip *st = &mb->strip[s];
        float *seam = mb->seam + st->seam_off;
        int have = 0;
        float last = 0;
        for (int j = 0; j < st->h[0]; j++) { /* forward: the last row's seam */
            const int y = st->y0 + j;
            if (p->seam_next[(size_t)st->a * h + y] == st->b) {
                last = p->seam[(size_t)(2 * st->a + 1) * h + y];
                have = 1;
            }
            seam[j] = have ? last : NAN;
        }
        for (int j = st->h[0] - 1; j >= 0; j--) /* rows above the first: its seam */
            if (isnan(seam[j]))
                seam[j] = j + 1 < st->h[0] ? seam[j + 1] : 0.5f * (float)(2 * st->x0 + st->w[0] - 1);
        /* the columns whose D the blend may read: within depend of a
         * seam of the rows within depend */
        int *band = mb->band + 2 * st->seam_off;
        for (int j = 0; j < st->h[0]; j++) {
            float zmin = 1e30f, zmax = -1e30f;
            for (int jj = j - mb->depend; jj <= j + mb->depend; jj++)
                if (jj >= 0 && jj < st->h[0]) {
                    zmin = seam[jj] < zmin ? seam[jj] : zmin;
                    zmax = seam[jj] > zmax ? seam[jj] : zmax;
                }
            band[2 * j] = (int)floorf(zmin) - mb->depend - 1;
            band[2 * j + 1] = (int)ceilf(zmax) + mb->depend + 1;
        }
        for (int j = 0; j < st->h[0]; j++)
            for (int i = 0; i < st->w[0]; i++)
                g0[(size_t)j * st->w[0] + i] = pc_mb_g0((float)(st->x0 + i), seam[j], mb->inv_sw);
        const float *prev = g0;
        for (int k = 1; k < L; k++) {
            float *gk = mb->mask[k] + st->off[k];
            for (int j = 0; j < st->h[k]; j++)
                for (int i = 0; i < st->w[k]; i++)
                    gk[(size_t)j * st->w[k] + i] =
                        pc_mb_reduce_px(prev, st->w[k - 1], st->h[k - 1], (size_t)st->w[k - 1], 1, 0, i, j);
            prev = gk;
        }
    }
    free(g0);
    return 0;
}

/* Whether both cameras of strip st see output pixel (x, y). */
static int both_see(const pc_render_plan *p, const pc_mb_strip *st, int x, int y)
{
    float ray[3];
    pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
    for (int e = 0; e < 2; e++) {
        const int c = e ? st->b : st->a;
        float sx, sy;
        if (!pc_cam_project(&p->cam[c].geo, ray, &sx, &sy) || !(pc_render_border(&p->cam[c].geo, sx, sy) > 0.0f))
            return 0;
    }
    return 1;
}

/* Each strip row's span: the first and last of its columns both cameras
 * see (searched within the strip). */
static void spans(const pc_render_plan *p, struct pc_render_mb *mb)
{
    for (int s = 0; s < mb->nstrips; s++) {
        const pc_mb_strip *st = &mb->strip[s];
        int *sp = mb->span + 2 * st->seam_off;
        for (int j = 0; j < st->h[0]; j++) {
            const int y = st->y0 + j, x1 = st->x0 + st->w[0];
            int lo = st->x0, hi = x1 - 1;
            while (lo < x1 && !both_see(p, st, lo, y))
                lo++;
            while (hi > lo && !both_see(p, st, hi, y))
                hi--;
            sp[2 * j] = lo < x1 ? lo : 1;
            sp[2 * j + 1] = lo < x1 ? hi : 0;
        }
    }
}

int pc_render_mb_build(pc_render_plan *p, int levels, char *err, size_t errlen)
{
    pc_render_mb_free(p->mb);
    p->mb = NULL;
    if (levels < PC_MB_MIN_LEVELS || levels > PC_MB_MAX_LEVELS) {
        pc_set_err(err, errlen, "blend multiband: %d levels (%d..%d)", levels, PC_MB_MIN_LEVELS, PC_MB_MAX_LEVELS);
        return PC_EINVAL;
    }
    if (!p->seam || !p->seam_next) {
        pc_set_err(err, errlen, "blend multiband: the plan has no seams");
        return PC_EINVAL;
    }
    struct pc_render_mb *mb = calloc(1, sizeof *mb);
    if (!mb) {
        pc_set_err(err, errlen, "blend multiband: out of memory");
        return PC_ENOMEM;
    }
    mb->levels = levels;
    mb->inv_sw = p->inv_seam;
    mb_zones_all(levels, mb->inv_sw, &mb->reach, &mb->depend);
    int rc = find_strips(p, mb, err, errlen);
    if (!rc)
        rc = check_tiles(p, mb, err, errlen);
    if (!rc) {
        layout(mb);
        rc = alloc_levels(mb, err, errlen);
    }
    if (!rc) {
        spans(p, mb);
        if (seams_and_masks(p, mb)) {
            pc_set_err(err, errlen, "blend multiband: out of memory for the masks");
            rc = PC_ENOMEM;
        }
    }
    if (!rc)
        claim_zones(p, mb);
    if (rc) {
        pc_render_mb_free(mb);
        return rc;
    }
    p->mb = mb;
    return 0;
}

int pc_render_mb_update(pc_render_plan *p, char *err, size_t errlen)
{
    struct pc_render_mb *mb = p->mb;
    if (!mb)
        return 0;
    /* the strips shrink to the placed seams (+- reach): fewer pixels per
     * frame; every array keeps its size, every check made at build holds
     * for a part of what it checked */
    for (int s = 0; s < mb->nstrips; s++) {
        pc_mb_strip *st = &mb->strip[s];
        strip_columns(p, mb, st, 1, st->x0, st->x0 + st->w[0]);
    }
    layout(mb);
    spans(p, mb);
    if (seams_and_masks(p, mb)) {
        pc_set_err(err, errlen, "blend multiband: out of memory for the masks");
        return PC_ENOMEM;
    }
    claim_zones(p, mb);
    return 0;
}

void pc_render_mb_sizes(const pc_render_plan *p, pc_mb_sizes *out)
{
    const struct pc_render_mb *mb = p->mb;
    memset(out, 0, sizeof *out);
    if (!mb)
        return;
    out->strips = mb->npx[0];
    for (int k = 1; k < mb->levels; k++)
        out->coarser += mb->npx[k];
    for (int s = 0; s < mb->nstrips; s++) {
        const pc_mb_strip *st = &mb->strip[s];
        for (int j = 0; j < st->h[0]; j++) {
            const int *b = mb->band + 2 * (st->seam_off + (size_t)j);
            const int lo = b[0] > st->x0 ? b[0] : st->x0;
            const int hi = b[1] < st->x0 + st->w[0] - 1 ? b[1] : st->x0 + st->w[0] - 1;
            out->sampled += hi >= lo ? (size_t)(hi - lo + 1) : 0;
        }
    }
    for (size_t t = 0; t < (size_t)p->ntx * p->nty; t++)
        out->zone += mb->tile_strip[t] >= 0 ? PC_RENDER_TILE_W * PC_RENDER_TILE_H : 0;
}
