/* render_reference.c - the C reference of the render kernel family
 * (render.h): single-threaded, float, every pixel straight from the
 * definition (pc_view_ray, then every camera in turn; render_host.h's
 * pixel, render_formulas.h's steps). The CPU backend and the CUDA kernels
 * are checked against it. A multiband plan's is render_mb_host.c's. */
#include "render_host.h"
#include "render_multiband.h"

int pc_render_ref(const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    int rc = pc_render_check(p, src, dst, err, errlen);
    if (rc)
        return rc;
    if (p->mb)
        return pc_render_mb_ref(p, src, dst, err, errlen);
    pc_yuv_coeffs yc;
    pc_yuv_coeffs_get(dst->matrix, dst->range, &yc);
    const pc_render_src s = pc_render_src_of(src);
    const unsigned all = (1u << p->ncam) - 1;
    for (int y = 0; y < p->view.h; y += 2)
        for (int x = 0; x < p->view.w; x += 2) {
            int v[2][2][3];
            for (int j = 0; j < 2; j++)
                for (int i = 0; i < 2; i++) {
                    float ray[3];
                    pc_view_ray(&p->view, (float)(x + i), (float)(y + j), ray);
                    pc_render_px(p, &s, ray, x + i, y + j, all, p->seam, v[j][i]);
                }
            pc_ref_store_block(dst, &yc, x, y, v);
        }
    return 0;
}
