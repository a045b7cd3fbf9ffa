/* eval_geometry.c - (a) panocap's remap of the RGB camera pictures (no
 * demosaic) against Hugin's nona on the same .pto and pictures:
 *
 *  - per camera, panocap's one-camera render (the render family's CPU
 *    renderer, bilinear) against nona's layer of that camera, PSNR over
 *    the pixels both cover (nona's alpha 255, and the camera sees the
 *    pixel at least one source pixel inside its border: where panocap's
 *    weight is whole); nona with its bilinear interpolator (m i5) and
 *    with its default (m i0, cubic polynomial); overall = the pooled
 *    squared error of every camera;
 *  - twice: with the photometry neutral in the .pto (the remap alone),
 *    and with the .pto's photometry (exposure, white balance, vignetting,
 *    response: what nona's layers and panocap's panorama apply);
 *  - sampling positions: nona -c writes each pixel's source position
 *    rounded to whole pixels (UINT16), so panocap's float position is
 *    compared as "rounds to the same pixel, or lies within 0.1 px of the
 *    rounding boundary": excess = max(|sx - nona_x|, |sy - nona_y|) - 0.5
 *    <= 0.1 everywhere; and pano_trafo -r's sub-pixel positions on a grid
 *    of points: |panocap - pano_trafo| <= 0.1 px.
 */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct geo_cam {
    ev_err e5, e0;
    double max_excess;   /* nona -c */
    long same, ncoord;
    double max_trafo;    /* pano_trafo */
    int ntrafo;
} geo_cam;

/* pano_trafo -r on up to `max` points of the output that camera c sees:
 * the largest distance to panocap's positions, and how many. */
static int trafo_check(ev_ctx *e, const char *pto, int c, const pc_cam_model *cm, const pc_view_model *v,
                       double *worst, int *count)
{
    enum { GX = 40, GY = 16 };
    char name[128], path[1024];
    double px[GX * GY], py[GX * GY], ox[GX * GY], oy[GX * GY];
    int n = 0;
    for (int j = 0; j < GY; j++)
        for (int i = 0; i < GX; i++) {
            const int x = (int)((i + 0.5) * v->w / GX), y = (int)((j + 0.5) * v->h / GY);
            float sx, sy;
            if (ev_sees(cm, v, x, y, 1.0f, &sx, &sy)) {
                px[n] = x, py[n] = y, ox[n] = sx, oy[n] = sy;
                n++;
            }
        }
    *count = n;
    *worst = 0;
    if (!n)
        return 0;
    snprintf(name, sizeof name, "trafo%d_in.txt", c);
    snprintf(path, sizeof path, "%s/%s", e->dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    /* pano_trafo speaks canvas pixels: the crop's origin added */
    for (int k = 0; k < n; k++)
        fprintf(f, "%.3f %.3f\n", px[k] + v->ox, py[k] + v->oy);
    fclose(f);
    if (ev_sh(e, "pano_trafo -r %s %d < trafo%d_in.txt > trafo%d_out.txt", pto, c, c, c))
        return -1;
    snprintf(path, sizeof path, "%s/trafo%d_out.txt", e->dir, c);
    if (!(f = fopen(path, "r")))
        return -1;
    int got = 0;
    double hx, hy;
    while (got < n && fscanf(f, "%lf %lf", &hx, &hy) == 2) {
        *worst = fmax(*worst, hypot(ox[got] - hx, oy[got] - hy));
        got++;
    }
    fclose(f);
    return got == n ? 0 : -1;
}

static void rm_layers(ev_ctx *e, const char *prefix, int ncam, int coords)
{
    char path[1024];
    for (int c = 0; c < ncam && !e->keep; c++) {
        snprintf(path, sizeof path, "%s/%s%04d.tif", e->dir, prefix, c);
        unlink(path);
        if (coords) {
            snprintf(path, sizeof path, "%s/%s%04d_x.tif", e->dir, prefix, c);
            unlink(path);
            snprintf(path, sizeof path, "%s/%s%04d_y.tif", e->dir, prefix, c);
            unlink(path);
        }
    }
}

/* One comparison: the rig with (photo) or without the photometry. */
static int geometry_pass(ev_ctx *e, int photo, geo_cam *gc)
{
    pc_rig rig = e->rig;
    const char *tag = photo ? "ph" : "geo";
    char p5[64], p0[64], name[128];
    if (!photo)
        ev_rig_neutral(&rig);
    snprintf(p5, sizeof p5, "%s_i5.pto", tag);
    snprintf(p0, sizeof p0, "%s_i0.pto", tag);
    if (ev_save_pto(e, &rig, p5, 5) || ev_save_pto(e, &rig, p0, 0))
        return -1;
    /* nona's layers (and, for the remap alone, its coordinate images) */
    if (ev_sh(e, "nona %s-o %s5_ %s", photo ? "" : "-c ", tag, p5) || ev_sh(e, "nona -o %s0_ %s", tag, p0))
        return -1;
    pc_view_model v;
    ev_pano_view(&rig, &v);
    const int ox = (int)lrintf(v.ox), oy = (int)lrintf(v.oy);
    int rc = 0;
    for (int c = 0; c < e->ncam && !rc; c++) {
        geo_cam *g = &gc[c];
        memset(g, 0, sizeof *g);
        pc_render_plan *plan = NULL;
        pc_picture out = {0}, src = ev_cam_of(&e->cams, c, e->cam_h);
        ev_layer l5 = {0}, l0 = {0};
        float *cx = NULL, *cy = NULL;
        rc = ev_plan_one(e, &rig, c, &v, photo ? e->photo : NULL, PC_RENDER_BILINEAR, &plan) || ev_render(e, plan, &src, &out);
        snprintf(name, sizeof name, "%s5_%04d.tif", tag, c);
        rc = rc || ev_layer_read(e, name, v.w, v.h, ox, oy, &l5);
        snprintf(name, sizeof name, "%s0_%04d.tif", tag, c);
        rc = rc || ev_layer_read(e, name, v.w, v.h, ox, oy, &l0);
        if (!photo) {
            snprintf(name, sizeof name, "%s5_%04d_x.tif", tag, c);
            rc = rc || ev_coord_read(e, name, v.w, v.h, ox, oy, &cx);
            snprintf(name, sizeof name, "%s5_%04d_y.tif", tag, c);
            rc = rc || ev_coord_read(e, name, v.w, v.h, ox, oy, &cy);
        }
        for (int y = 0; !rc && y < v.h; y++)
            for (int x = 0; x < v.w; x++) {
                const size_t i = (size_t)y * v.w + x;
                float sx, sy;
                if (l5.rgba[4 * i + 3] != 255 || l0.rgba[4 * i + 3] != 255 ||
                    !ev_sees(&plan->cam[0].geo, &v, x, y, 1.0f, &sx, &sy))
                    continue;
                const uint8_t *o = ev_row_ptr(&out, y) + 3 * x;
                g->e5.se += ev_px_se(o, l5.rgba + 4 * i);
                g->e0.se += ev_px_se(o, l0.rgba + 4 * i);
                g->e5.n++;
                g->e0.n++;
                if (cx && cx[i] >= 0 && cy[i] >= 0) {
                    const double ex = fmax(fabs(sx - cx[i]), fabs(sy - cy[i])) - 0.5;
                    g->max_excess = fmax(g->max_excess, ex);
                    g->same += lrintf(sx) == (long)cx[i] && lrintf(sy) == (long)cy[i];
                    g->ncoord++;
                }
            }
        if (!rc && !photo)
            rc = trafo_check(e, p5, c, &plan->cam[0].geo, &v, &g->max_trafo, &g->ntrafo);
        free(cx);
        free(cy);
        ev_layer_free(&l5);
        ev_layer_free(&l0);
        ev_pic_free(&out);
        pc_render_plan_free(plan);
    }
    char pre[16];
    snprintf(pre, sizeof pre, "%s5_", tag);
    rm_layers(e, pre, e->ncam, !photo);
    snprintf(pre, sizeof pre, "%s0_", tag);
    rm_layers(e, pre, e->ncam, 0);
    return rc;
}

int ev_geometry(ev_ctx *e)
{
    printf("\n== (a) geometry: panocap's remap of the RGB camera pictures against nona (%dx%d panorama, %d cameras "
           "%dx%d)\n", e->pano_w, e->pano_h, e->ncam, e->cam_w, e->cam_h);
    if (!e->have_hugin) {
        printf("  skipped: nona, enblend, pano_trafo or pano_modify (hugin-tools, enblend) not installed\n");
        ev_add_row(e, "a", "geometry against nona", NULL, -1, "not run: hugin-tools missing");
        return 0;
    }
    geo_cam g[2][PC_RIG_MAX_CAMERAS];
    char b1[32], b2[32], name[64];
    for (int photo = 0; photo < 2; photo++) {
        if (geometry_pass(e, photo, g[photo]))
            return -1;
        ev_err t5 = {0, 0}, t0 = {0, 0};
        double worst5 = INFINITY;
        printf("  %s:\n", photo ? "with the .pto's photometry (exposure, white balance, vignetting, response)"
                                : "the remap alone (photometry neutral in the .pto)");
        for (int c = 0; c < e->ncam; c++) {
            const geo_cam *q = &g[photo][c];
            printf("    camera %d: %ld pixels both cover; PSNR against nona: %s bilinear (m i5), %s default (m i0)\n",
                   c, q->e5.n, ev_db(b1, sizeof b1, ev_psnr(q->e5)), ev_db(b2, sizeof b2, ev_psnr(q->e0)));
            t5.se += q->e5.se, t5.n += q->e5.n;
            t0.se += q->e0.se, t0.n += q->e0.n;
            worst5 = fmin(worst5, ev_psnr(q->e5));
            snprintf(name, sizeof name, "geometry.%s.cam%d.psnr_i5", photo ? "photo" : "remap", c);
            ev_add_fig(e, name, ev_psnr(q->e5));
            snprintf(name, sizeof name, "geometry.%s.cam%d.psnr_i0", photo ? "photo" : "remap", c);
            ev_add_fig(e, name, ev_psnr(q->e0));
        }
        const double all5 = ev_psnr(t5), all0 = ev_psnr(t0);
        printf("    all cameras: %s (m i5), %s (m i0); worst camera %s (m i5)\n", ev_db(b1, sizeof b1, all5),
               ev_db(b2, sizeof b2, all0), ev_db(name, sizeof name, worst5));
        snprintf(name, sizeof name, "geometry.%s.psnr_i5", photo ? "photo" : "remap");
        ev_add_fig(e, name, all5);
        snprintf(name, sizeof name, "geometry.%s.psnr_i0", photo ? "photo" : "remap");
        ev_add_fig(e, name, all0);
        snprintf(name, sizeof name, "geometry.%s.worst_cam_psnr_i5", photo ? "photo" : "remap");
        ev_add_fig(e, name, worst5);
        ev_add_row(e, "a", photo ? "RGB remap + photometry vs nona m i5 (all; worst cam)" : "RGB remap vs nona m i5 "
                   "(all; worst camera)", ">= 40 dB", worst5 >= 40.0, "%.2f; %.2f dB", all5, worst5);
        ev_add_row(e, "a", photo ? "RGB remap + photometry vs nona default m i0" : "RGB remap vs nona default m i0",
                   NULL, -1, "%.2f dB", all0);
    }
    double excess = 0, trafo = 0;
    long same = 0, n = 0;
    int nt = 0;
    for (int c = 0; c < e->ncam; c++) {
        excess = fmax(excess, g[0][c].max_excess);
        trafo = fmax(trafo, g[0][c].max_trafo);
        same += g[0][c].same;
        n += g[0][c].ncoord;
        nt += g[0][c].ntrafo;
    }
    printf("  sampling positions: nona -c (rounded UINT16) on %ld pixels: %.3f %% round to nona's pixel; the rest lie "
           "at most %.4f px past the rounding boundary (<= 0.1)\n", n, 100.0 * same / (n ? n : 1), fmax(excess, 0));
    printf("  pano_trafo -r on %d points: panocap's positions within %.4f px (<= 0.1)\n", nt, trafo);
    ev_add_fig(e, "geometry.coord_excess_px", fmax(excess, 0));
    ev_add_fig(e, "geometry.coord_same_pct", 100.0 * same / (n ? n : 1));
    ev_add_fig(e, "geometry.trafo_max_px", trafo);
    ev_add_row(e, "a", "sampling vs nona -c: past the rounding boundary", "<= 0.1 px", excess <= 0.1,
               "%.3f px (%.2f %% same pixel)", fmax(excess, 0), 100.0 * same / (n ? n : 1));
    ev_add_row(e, "a", "sampling vs pano_trafo -r (sub-pixel)", "<= 0.1 px", trafo <= 0.1, "%.4f px (%d points)",
               trafo, nt);
    return 0;
}
