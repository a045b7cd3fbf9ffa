/* render_cpu.c - the CPU backend's renderer (render.h): the reference's
 * pixel (render_host.h) organised for speed, bit-identical to it:
 *   - bands of row pairs on the threads of the pc_cpu pool;
 *   - each pixel loops over the cameras of its tile's mask only (one or
 *     two of five for a panorama), not every camera: a camera outside
 *     the mask sees none of the tile's pixels, so it would add nothing;
 *   - the view's ray terms come from the plan's per-column and per-row
 *     tables (the same floats pc_view_ray computes, without a sinf/cosf
 *     per pixel);
 *   - with a plan built with maps (pc_render_options.maps) the source
 *     positions come from them (the same floats pc_cam_project gives, so
 *     still the same bytes): no ray and no projection per pixel, for 8
 *     bytes per pixel and camera of memory traffic, which a CPU core
 *     reads far faster than it projects.
 */
#include "render_host.h"
#include "render_multiband.h"

#include "algo_impl.h" /* pc_cpu_parallel */

typedef struct job {
    const pc_render_plan *p;
    pc_render_src s;
    const pc_picture *dst;
    pc_yuv_coeffs yc;
} job;

/* Row pair y's blocks from the maps (render.h's layout). */
static void row_pair_maps(const job *jb, int y)
{
    const pc_render_plan *p = jb->p;
    const int ty = y / PC_RENDER_TILE_H, by = (y >> 1) & 3;
    for (int x = 0; x < p->view.w; x += 2) {
        const size_t t = (size_t)ty * p->ntx + x / PC_RENDER_TILE_W;
        const float *m = p->map + 2 * ((size_t)p->map_off[t] + 4 * (16 * by + ((x >> 1) & 15)));
        float acc[4][3] = {{0.0f}}, ws[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (unsigned mask = p->tmask[t]; mask; mask &= mask - 1, m += 2 * 256) {
            const int c = __builtin_ctz(mask);
            for (int k = 0; k < 4; k++)
                if (m[2 * k] > -1e8f)
                    pc_render_add(p, &jb->s, c, m[2 * k], m[2 * k + 1], x + (k & 1), y + (k >> 1), p->seam, acc[k],
                                  &ws[k]);
        }
        int v[2][2][3];
        for (int k = 0; k < 4; k++)
            pc_render_finish(acc[k], ws[k], p->inv_feather, p->photo, p->out_resp, PC_RIG_RESPONSE_KNOTS,
                             v[k >> 1][k & 1]);
        pc_ref_store_block(jb->dst, &jb->yc, x, y, v);
    }
}

static void band(void *arg, int index, int n)
{
    const job *jb = arg;
    const pc_render_plan *p = jb->p;
    const int pairs = p->view.h / 2;
    const int y0 = 2 * (int)((int64_t)pairs * index / n), y1 = 2 * (int)((int64_t)pairs * (index + 1) / n);
    for (int y = y0; y < y1 && p->map; y += 2)
        row_pair_maps(jb, y);
    for (int y = y0; y < y1 && !p->map; y += 2) {
        const uint16_t *mrow = p->tmask + (size_t)(y / PC_RENDER_TILE_H) * p->ntx;
        for (int x = 0; x < p->view.w; x += 2) {
            const unsigned mask = mrow[x / PC_RENDER_TILE_W];
            int v[2][2][3];
            for (int j = 0; j < 2; j++)
                for (int i = 0; i < 2; i++) {
                    float ray[3];
                    pc_render_ray(&p->view, p->col + 2 * (x + i), p->row + 2 * (y + j), ray);
                    pc_render_px(p, &jb->s, ray, x + i, y + j, mask, p->seam, v[j][i]);
                }
            pc_ref_store_block(jb->dst, &jb->yc, x, y, v);
        }
    }
}

int pc_render_cpu(pc_cpu *cpu, const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err,
                  size_t errlen)
{
    int rc = pc_render_check(p, src, dst, err, errlen);
    if (rc)
        return rc;
    if (p->mb)
        return pc_render_mb_cpu(cpu, p, src, dst, err, errlen);
    job jb;
    jb.p = p;
    jb.s = pc_render_src_of(src);
    jb.dst = dst;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &jb.yc);
    pc_cpu_parallel(cpu, band, &jb);
    return 0;
}
