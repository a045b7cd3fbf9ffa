/* render_host.h - the host renderers' pixel (private to render/: the C
 * reference, the CPU backend, seam placement and gain measurement): one
 * inline function, so that the reference and the multi-threaded version
 * compute every pixel with the same instructions and agree bit for bit.
 */
#ifndef PANOCAP_RENDER_HOST_H
#define PANOCAP_RENDER_HOST_H

#include "render.h"
#include "picture_store.h" /* pc_ref_store_block: spec §8 2x2 blocks */
#include "render_formulas.h"

/* The source picture's camera rows. */
typedef struct pc_render_src {
    const uint8_t *data; /* camera 0's first row */
    size_t pitch;
    int bpp;             /* 3 or 4 */
} pc_render_src;

static inline pc_render_src pc_render_src_of(const pc_picture *src)
{
    pc_render_src s = {src->plane[0], src->pitch[0], src->fmt == PC_FMT_RGBX32 ? 4 : 3};
    return s;
}

/* Camera c's corrected sample at (sx, sy): 0..255 (photo off) or linear. */
static inline void pc_render_sample(const pc_render_plan *p, const pc_render_src *s, int c, float sx, float sy,
                                    float v[3])
{
    pc_render_sample_at(p->sampler, s->data + (size_t)c * p->cam_h * s->pitch, s->pitch, s->bpp, p->cam_w, p->cam_h,
                        sx, sy, v);
    if (p->photo) {
        const float iv = pc_render_inv_vig(&p->cam[c].vig, sx, sy);
        for (int k = 0; k < 3; k++)
            v[k] = pc_render_linear(p->inv_knots[c], v[k], p->cam[c].gain[k] * iv);
    }
}

/* Camera c's contribution to output pixel (x, y), which it sees at (sx,
 * sy): acc += w L, wsum += w. seam: the plan's seams, or NULL for feather
 * weights only. */
static inline void pc_render_add(const pc_render_plan *p, const pc_render_src *s, int c, float sx, float sy, int x,
                                 int y, const float *seam, float acc[3], float *wsum)
{
    float w = pc_render_feather(pc_render_border(&p->cam[c].geo, sx, sy), p->inv_feather);
    if (seam)
        w *= pc_render_seam_factor((float)x, seam[(size_t)(2 * c) * p->view.h + y],
                                   seam[(size_t)(2 * c + 1) * p->view.h + y], p->inv_seam);
    if (!(w > 0.0f))
        return;
    float v[3];
    pc_render_sample(p, s, c, sx, sy, v);
    for (int k = 0; k < 3; k++)
        acc[k] += w * v[k];
    *wsum += w;
}

/* Output pixel (x, y), whose world direction is ray, from the cameras of
 * mask (ascending; a camera that does not see the pixel adds nothing, so
 * any mask holding every camera that does gives the same bytes). */
static inline void pc_render_px(const pc_render_plan *p, const pc_render_src *s, const float ray[3], int x, int y,
                                unsigned mask, const float *seam, int rgb[3])
{
    float acc[3] = {0.0f, 0.0f, 0.0f}, wsum = 0.0f;
    for (int c = 0; c < p->ncam; c++) {
        float sx, sy;
        if ((mask >> c & 1u) && pc_cam_project(&p->cam[c].geo, ray, &sx, &sy))
            pc_render_add(p, s, c, sx, sy, x, y, seam, acc, &wsum);
    }
    pc_render_finish(acc, wsum, p->inv_feather, p->photo, p->out_resp, PC_RIG_RESPONSE_KNOTS, rgb);
}

#endif
