/* eval_panorama.c - (b) the stitched panorama against the scene itself:
 *
 *  - truth: the scene rendered directly in the p line's projection and
 *    crop with the panorama's photometry (pc_scene_eye_view);
 *  - Hugin's result from the RGB pictures: nona's layers (default
 *    interpolator, photometry on) blended by enblend; and nona's layers
 *    each against the truth (pooled), as a second reference;
 *  - panocap's: the RGB pictures mosaiced (RGGB) and demosaiced by each
 *    algorithm into RGBX32 as the daemon's demosaic writes them (the
 *    colour stage's default for 8-bit cameras is the identity), rendered
 *    with the .pto's photometry and gain compensation (the gains solved
 *    from the overlaps: where the daemon's filter settles) with each
 *    blend, sampled as --sampler says (the daemon's panorama.sampler;
 *    multiband's pyramid always bilinear); also the RGB pictures without
 *    a demosaic, with either sampler (what the remap and the blend alone
 *    lose);
 *  - each demosaic against the RGB pictures it was mosaiced from (CPSNR
 *    per camera, pooled): within BORDER pixels of a camera's edge and
 *    inside, so that a camera-edge loss shows apart from the render's;
 *  - PSNR over the area both panoramas cover (panocap sees the pixel at
 *    full weight, enblend's alpha is 255), the same pixels for every row;
 *  - blend zones: the pixels where two cameras both weigh at least 2 %
 *    (found by rendering a probe: each camera a flat picture, red for
 *    even cameras, green for odd ones, photometry off, so that the output
 *    is each camera's share) against the rest of the covered area;
 *  - the colour step at the seams: for each overlapping pair, each
 *    camera rendered alone, corrected, and the mean difference of the two
 *    across the pixels both see well inside (2 source pixels), per channel,
 *    before and after gain compensation; with the .pto's photometry and
 *    with the exposures and white balances left out of it.
 */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZONE_MIN 5 /* of 255: a camera weighing at least 2 % of a pixel */
#define BORDER 32  /* a camera's edge band, pixels: net's reach (pc_net_margin + 1) */

enum { NBLEND = PC_RENDER_BLEND_COUNT }; /* every blend of render.h's table */

/* mask bits */
enum { M_COVER = 1, M_ZONE = 2 };

/* Squared error of a against truth over the pixels with mask bit `bit`
 * (and M_COVER), and over the covered pixels without it. */
static void err_split(const pc_picture *a, const pc_picture *truth, const uint8_t *mask, int bit, ev_err *in,
                      ev_err *out)
{
    memset(in, 0, sizeof *in);
    memset(out, 0, sizeof *out);
    for (int y = 0; y < a->height; y++) {
        const uint8_t *pa = ev_row_ptr(a, y), *pt = ev_row_ptr(truth, y);
        const uint8_t *m = mask + (size_t)y * a->width;
        for (int x = 0; x < a->width; x++) {
            if (!(m[x] & M_COVER))
                continue;
            ev_err *e = (m[x] & bit) ? in : out;
            e->se += ev_px_se(pa + 3 * x, pt + 3 * x);
            e->n++;
        }
    }
}

/* The blend zones of plan: a probe render (photometry off), each camera's
 * share in the red (even cameras) or green (odd) channel; sets M_ZONE
 * where two both weigh ZONE_MIN or more. */
static int probe_zones(ev_ctx *e, pc_render_plan *plan, uint8_t *mask)
{
    pc_picture src, out;
    if (ev_pic_alloc(&src, PC_FMT_RGBX32, e->cam_w, e->ncam * e->cam_h))
        return -1;
    for (int c = 0; c < e->ncam; c++)
        for (int y = 0; y < e->cam_h; y++) {
            uint8_t *r = ev_row_ptr(&src, c * e->cam_h + y);
            for (int x = 0; x < e->cam_w; x++) {
                r[4 * x] = c % 2 ? 0 : 255;
                r[4 * x + 1] = c % 2 ? 255 : 0;
                r[4 * x + 2] = r[4 * x + 3] = 255;
            }
        }
    const int photo = plan->photo;
    plan->photo = 0; /* the plan's own weights on flat values: out = 255 x share */
    int rc = ev_render(e, plan, &src, &out);
    plan->photo = photo;
    ev_pic_free(&src);
    if (rc)
        return -1;
    for (int y = 0; y < out.height; y++) {
        const uint8_t *p = ev_row_ptr(&out, y);
        for (int x = 0; x < out.width; x++) {
            uint8_t *m = &mask[(size_t)y * out.width + x];
            *m &= (uint8_t)~M_ZONE;
            if (p[3 * x] >= ZONE_MIN && p[3 * x + 1] >= ZONE_MIN)
                *m |= M_ZONE;
        }
    }
    ev_pic_free(&out);
    return 0;
}

/* The demosaic dem (RGBX32, the cameras stacked) against the RGB pictures
 * e->cams: the squared error within BORDER pixels of a camera's edge
 * (*edge) and inside it (*in). */
static void demosaic_err(const ev_ctx *e, const pc_picture *dem, ev_err *edge, ev_err *in)
{
    memset(edge, 0, sizeof *edge);
    memset(in, 0, sizeof *in);
    for (int y = 0; y < e->ncam * e->cam_h; y++) {
        const uint8_t *pd = ev_row_ptr(dem, y), *pr = ev_row_ptr(&e->cams, y);
        const int cy = y % e->cam_h, row_edge = cy < BORDER || cy >= e->cam_h - BORDER;
        for (int x = 0; x < e->cam_w; x++) {
            ev_err *t = row_edge || x < BORDER || x >= e->cam_w - BORDER ? edge : in;
            t->se += ev_px_se(pr + 3 * x, pd + 4 * x);
            t->n++;
        }
    }
}

/* The full rig's plan with photometry, blend b and sampler (multiband:
 * bilinear, its pyramid's); a blend with seams (seam, multiband) gets them
 * placed on src, as the daemon places them on a set. */
static int plan_full(ev_ctx *e, const pc_rig *rig, const pc_rig_photometry *photo, int blend, int sampler,
                     const pc_picture *src, pc_render_plan **plan)
{
    char err[512];
    pc_render_options opt;
    pc_render_options_default(&opt);
    opt.blend = (pc_render_blend)blend;
    opt.sampler = blend == PC_RENDER_MULTIBAND ? PC_RENDER_BILINEAR : (pc_render_sampler)sampler;
    pc_view_model v;
    ev_pano_view(rig, &v);
    if (pc_render_plan_build(plan, rig, &v, photo, &opt, err, sizeof err) ||
        (blend != PC_RENDER_FEATHER && pc_render_plan_place_seams(*plan, src, err, sizeof err))) {
        fprintf(stderr, "panocap-eval: the panorama's plan (%s, %s): %s\n", pc_render_blend_name(opt.blend),
                pc_render_sampler_name(opt.sampler), err);
        pc_render_plan_free(*plan);
        *plan = NULL;
        return -1;
    }
    return 0;
}

/* Gain compensation as the daemon's render step does it: the overlaps
 * measured on src, the gains solved (the filter's fixed point) and set. */
static int compensate(pc_render_plan *plan, const pc_picture *src, float gains[][3])
{
    char err[512];
    pc_render_stats st;
    if (pc_render_measure_ref(plan, src, &st, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: gain compensation: %s\n", err);
        return -1;
    }
    pc_render_gains_solve(&st, plan->ncam, gains);
    if (getenv("EV_DEBUG"))
        for (int k = 0; k < st.npairs; k++)
            fprintf(stderr, "pair %d|%d n %d: a %.4f %.4f %.4f b %.4f %.4f %.4f\n", st.pair[k].a, st.pair[k].b,
                    st.pair[k].n, st.pair[k].sum_a[0] / st.pair[k].n, st.pair[k].sum_a[1] / st.pair[k].n,
                    st.pair[k].sum_a[2] / st.pair[k].n, st.pair[k].sum_b[0] / st.pair[k].n,
                    st.pair[k].sum_b[1] / st.pair[k].n, st.pair[k].sum_b[2] / st.pair[k].n);
    pc_render_plan_set_gains(plan, (const float(*)[3])gains);
    return 0;
}

/* --- the colour step at the seams ---------------------------------------- */

typedef struct step_stat {
    /* the largest |mean(A - B)| over pairs and channels, 8-bit levels:
     * over every pixel both cameras see, and over those where neither
     * camera's picture clips (a step no gain can remove) */
    double before, after, before_u, after_u;
    double d[PC_RENDER_MAX_PAIRS][2][3], du[PC_RENDER_MAX_PAIRS][2][3];
    int a[PC_RENDER_MAX_PAIRS], b[PC_RENDER_MAX_PAIRS];
    long n[PC_RENDER_MAX_PAIRS], nu[PC_RENDER_MAX_PAIRS];
    int npairs;
} step_stat;

/* Camera c of rig rendered alone (photometry, gains g or none). */
static int render_one(ev_ctx *e, const pc_rig *rig, const pc_rig_photometry *photo, int c, const float *g,
                      const pc_picture *src, pc_picture *out, pc_render_plan **plan)
{
    pc_view_model v;
    ev_pano_view(rig, &v);
    if (ev_plan_one(e, rig, c, &v, photo, PC_RENDER_BILINEAR, plan))
        return -1;
    if (g) {
        float g1[1][3] = {{g[0], g[1], g[2]}};
        pc_render_plan_set_gains(*plan, (const float(*)[3])g1);
    }
    pc_picture one = ev_cam_of(src, c, e->cam_h);
    return ev_render(e, *plan, &one, out);
}

/* Camera c's picture (rows of src) clips around (sx, sy): a channel of
 * one of the four pixels the bilinear sample reads at 0..2 or 253..255. */
static int clips(const pc_picture *src, int c, int cam_w, int cam_h, float sx, float sy)
{
    const int bpp = src->fmt == PC_FMT_RGBX32 ? 4 : 3;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            const int x = (int)sx + i < cam_w ? (int)sx + i : cam_w - 1;
            const int y = (int)sy + j < cam_h ? (int)sy + j : cam_h - 1;
            const uint8_t *p = ev_row_ptr(src, c * cam_h + y) + (size_t)bpp * x;
            for (int k = 0; k < 3; k++)
                if (p[k] <= 2 || p[k] >= 253)
                    return 1;
        }
    return 0;
}

static int colour_steps(ev_ctx *e, const pc_rig *rig, const pc_rig_photometry *photo, const pc_render_plan *full,
                        const float gains[][3], const pc_picture *src, step_stat *s)
{
    memset(s, 0, sizeof *s);
    s->npairs = full->npairs;
    for (int k = 0; k < full->npairs; k++) {
        const int ab[2] = {full->pair[k].a, full->pair[k].b};
        s->a[k] = ab[0];
        s->b[k] = ab[1];
        for (int comp = 0; comp < 2; comp++) {
            pc_picture out[2] = {{0}};
            pc_render_plan *pl[2] = {NULL, NULL};
            int rc = 0;
            for (int i = 0; i < 2 && !rc; i++)
                rc = render_one(e, rig, photo, ab[i], comp ? gains[ab[i]] : NULL, src, &out[i], &pl[i]);
            double sum[3] = {0, 0, 0}, sumu[3] = {0, 0, 0};
            long n = 0, nu = 0;
            for (int y = 0; !rc && y < e->pano_h; y++)
                for (int x = 0; x < e->pano_w; x++) {
                    float sx[2], sy[2];
                    if (!ev_sees(&pl[0]->cam[0].geo, &pl[0]->view, x, y, 2.0f, &sx[0], &sy[0]) ||
                        !ev_sees(&pl[1]->cam[0].geo, &pl[1]->view, x, y, 2.0f, &sx[1], &sy[1]))
                        continue;
                    const int unclipped = !clips(src, ab[0], e->cam_w, e->cam_h, sx[0], sy[0]) &&
                                          !clips(src, ab[1], e->cam_w, e->cam_h, sx[1], sy[1]);
                    const uint8_t *pa = ev_row_ptr(&out[0], y) + 3 * x, *pb = ev_row_ptr(&out[1], y) + 3 * x;
                    for (int ch = 0; ch < 3; ch++) {
                        sum[ch] += (double)pa[ch] - pb[ch];
                        if (unclipped)
                            sumu[ch] += (double)pa[ch] - pb[ch];
                    }
                    n++;
                    nu += unclipped;
                }
            for (int i = 0; i < 2; i++) {
                ev_pic_free(&out[i]);
                pc_render_plan_free(pl[i]);
            }
            if (rc)
                return -1;
            s->n[k] = n;
            s->nu[k] = nu;
            for (int ch = 0; ch < 3; ch++) {
                s->d[k][comp][ch] = n ? sum[ch] / n : 0;
                s->du[k][comp][ch] = nu ? sumu[ch] / nu : 0;
                double *worst = comp ? &s->after : &s->before, *wu = comp ? &s->after_u : &s->before_u;
                *worst = fmax(*worst, fabs(s->d[k][comp][ch]));
                *wu = fmax(*wu, fabs(s->du[k][comp][ch]));
            }
        }
    }
    return 0;
}

static void print_steps(const char *title, const step_stat *s, const float gains[][3], int ncam)
{
    printf("  colour step at the seams, %s (mean A - B over each overlap, 8-bit levels, R G B; all pixels, and "
           "those where neither picture clips):\n", title);
    for (int k = 0; k < s->npairs; k++)
        printf("    cameras %d|%d (%ld px; %ld): before %+.2f %+.2f %+.2f (%+.2f %+.2f %+.2f), after %+.2f %+.2f %+.2f "
               "(%+.2f %+.2f %+.2f)\n", s->a[k], s->b[k], s->n[k], s->nu[k], s->d[k][0][0], s->d[k][0][1],
               s->d[k][0][2], s->du[k][0][0], s->du[k][0][1], s->du[k][0][2], s->d[k][1][0], s->d[k][1][1],
               s->d[k][1][2], s->du[k][1][0], s->du[k][1][1], s->du[k][1][2]);
    printf("    gains solved:");
    for (int c = 0; c < ncam; c++)
        printf(" [%.3f %.3f %.3f]", gains[c][0], gains[c][1], gains[c][2]);
    printf("\n    largest |step|: %.2f before, %.2f after compensation (unclipped: %.2f, %.2f)\n", s->before, s->after,
           s->before_u, s->after_u);
}

/* nona's layers DIR/<prefix>NNNN.tif against the truth, pooled over the
 * cameras, two pixels in from each layer's edge (nona's edge pixels are
 * partial); the layers removed unless kept. */
static int layers_vs_truth(ev_ctx *e, const char *prefix, const pc_view_model *v, const pc_cam_model *cm,
                           const pc_picture *truth, double *psnr)
{
    char name[128];
    const int W = v->w, H = v->h;
    ev_err nl = {0, 0};
    for (int c = 0; c < e->ncam; c++) {
        ev_layer l;
        snprintf(name, sizeof name, "%s%04d.tif", prefix, c);
        if (ev_layer_read(e, name, W, H, (int)lrintf(v->ox), (int)lrintf(v->oy), &l))
            return -1;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float sx, sy;
                const size_t i = (size_t)y * W + x;
                if (l.rgba[4 * i + 3] == 255 && ev_sees(&cm[c], v, x, y, 2.0f, &sx, &sy)) {
                    nl.se += ev_px_se(ev_row_ptr(truth, y) + 3 * x, l.rgba + 4 * i);
                    nl.n++;
                }
            }
        ev_layer_free(&l);
        if (!e->keep) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", e->dir, name);
            unlink(path);
        }
    }
    *psnr = ev_psnr(nl);
    return 0;
}

/* --- the part ------------------------------------------------------------ */

typedef struct algo_res {
    double psnr[NBLEND], zone[NBLEND], rest[NBLEND];
} algo_res;

int ev_panorama(ev_ctx *e)
{
    char b1[32], b2[32], b3[32], name[128];
    printf("\n== (b) the panorama against the scene: Bayer cameras through panocap's demosaic vs nona + enblend "
           "from the RGB pictures (%dx%d)\n", e->pano_w, e->pano_h);
    pc_view_model v;
    ev_pano_view(&e->rig, &v);
    const int W = v.w, H = v.h, ox = (int)lrintf(v.ox), oy = (int)lrintf(v.oy);
    pc_picture truth = {0}, pic = {0}, dem = {0};
    uint8_t *mask = calloc((size_t)W * H, 1);
    ev_layer eb = {0};
    pc_render_plan *plan = NULL;
    int rc = -1;
    if (!mask || ev_render_truth(e, &v, &truth) || ev_write_png(e, "truth_panorama.png", &truth))
        goto out;
    /* covered: some camera sees the pixel at full weight (and enblend's
     * alpha, below) */
    pc_cam_model cm[PC_RIG_MAX_CAMERAS];
    for (int c = 0; c < e->ncam; c++)
        pc_rig_camera_model(&e->rig, c, &cm[c]);
    ev_cover_mask(e, &v, mask, M_COVER);
    /* Hugin: nona (default interpolator) + enblend from the RGB pictures */
    double nona_layers = NAN, nona_bilinear = NAN, enblend_psnr = NAN;
    if (e->have_hugin) {
        char files[2048] = "";
        for (int c = 0; c < e->ncam; c++) {
            size_t n = strlen(files);
            snprintf(files + n, sizeof files - n, " pano_%04d.tif", c);
        }
        if (ev_sh(e, "nona -o pano_ rig.pto") || ev_sh(e, "enblend -o enblend.tif%s", files) ||
            ev_layer_read(e, "enblend.tif", W, H, ox, oy, &eb))
            goto out;
        /* nona's layers alone, its default interpolator and bilinear
         * (what the interpolator is worth: panocap samples bilinearly) */
        if (ev_save_pto(e, &e->rig, "pano_i5.pto", 5) || ev_sh(e, "nona -o pano5_ pano_i5.pto") ||
            layers_vs_truth(e, "pano_", &v, cm, &truth, &nona_layers) ||
            layers_vs_truth(e, "pano5_", &v, cm, &truth, &nona_bilinear))
            goto out;
        if (ev_layer_rgb(&eb, &pic, mask, M_COVER))
            goto out;
        enblend_psnr = ev_psnr(ev_err_masked(&pic, &truth, mask, M_COVER));
        if (ev_write_png(e, "enblend.png", &pic))
            goto out;
        ev_pic_free(&pic);
        if (!e->keep) {
            char path[1024];
            snprintf(path, sizeof path, "%s/enblend.tif", e->dir);
            unlink(path);
        }
    } else {
        printf("  nona / enblend (hugin-tools, enblend) not installed: panocap's figures without Hugin's "
               "beside them\n");
    }
    long covered = 0;
    for (size_t i = 0; i < (size_t)W * H; i++)
        covered += mask[i] & M_COVER;
    printf("  covered area: %ld of %d pixels\n", covered, W * H);
    printf("  nona's layers (photometry on) vs the scene: %s (default m i0), %s (bilinear m i5); nona + enblend vs the "
           "scene: %s\n", ev_db(b1, sizeof b1, nona_layers), ev_db(b3, sizeof b3, nona_bilinear),
           ev_db(b2, sizeof b2, enblend_psnr));
    ev_add_fig(e, "panorama.nona_layers_psnr", nona_layers);
    ev_add_fig(e, "panorama.nona_layers_i5_psnr", nona_bilinear);
    ev_add_fig(e, "panorama.enblend_psnr", enblend_psnr);
    ev_add_row(e, "b", "nona + enblend from RGB vs scene (reference)", NULL, -1, "%s",
               ev_db(b1, sizeof b1, enblend_psnr));
    ev_add_row(e, "b", "nona's layers from RGB vs scene: m i0; bilinear m i5", NULL, -1, "%.2f; %.2f dB",
               nona_layers, nona_bilinear);

    /* panocap from the RGB pictures (no demosaic), feather, either sampler */
    const char *sn = pc_render_sampler_name((pc_render_sampler)e->sampler);
    float gains[PC_RIG_MAX_CAMERAS][3];
    double rgb_psnr[2];
    for (int s = 0; s < 2; s++) {
        if (plan_full(e, &e->rig, e->photo, PC_RENDER_FEATHER, s, &e->cams, &plan) ||
            compensate(plan, &e->cams, gains) || ev_render(e, plan, &e->cams, &pic))
            goto out;
        rgb_psnr[s] = ev_psnr(ev_err_masked(&pic, &truth, mask, M_COVER));
        ev_pic_free(&pic);
        pc_render_plan_free(plan);
        plan = NULL;
    }
    printf("  panocap from the RGB pictures (no demosaic), feather, gains compensated: %s sampled bilinear, %s "
           "bicubic\n", ev_db(b1, sizeof b1, rgb_psnr[PC_RENDER_BILINEAR]),
           ev_db(b2, sizeof b2, rgb_psnr[PC_RENDER_BICUBIC]));
    ev_add_fig(e, "panorama.rgb_feather_psnr", rgb_psnr[e->sampler]); /* the evaluated sampler's */
    ev_add_fig(e, "panorama.rgb_feather_bilinear_psnr", rgb_psnr[PC_RENDER_BILINEAR]);
    ev_add_fig(e, "panorama.rgb_feather_bicubic_psnr", rgb_psnr[PC_RENDER_BICUBIC]);
    ev_add_row(e, "b", "panocap from RGB (no demosaic), feather vs scene: bilinear; bicubic", NULL, -1,
               "%.2f; %.2f dB", rgb_psnr[PC_RENDER_BILINEAR], rgb_psnr[PC_RENDER_BICUBIC]);
    printf("  the panorama sampled %s (feather, seam; multiband bilinear), as panorama.sampler = \"%s\"\n", sn, sn);

    /* panocap from Bayer cameras: each demosaic, each blend */
    int blends[NBLEND], nb = 0;
    for (int i = 0; i < pc_render_blend_count() && nb < NBLEND; i++)
        blends[nb++] = i;
    /* the targets against nona + enblend: net's (issue 26) 1.5 dB, the
     * others' 3 dB */
    step_stat steps;
    int have_steps = 0;
    for (int a = 0; a < e->nalgos; a++) {
        const pc_algo_desc *ad = pc_algo_get((pc_algo_id)e->algos[a]);
        algo_res r;
        const double want = enblend_psnr - (ad->id == PC_ALGO_NET ? 1.5 : 3.0);
        if (ev_demosaic(e, ad->id, &dem))
            goto out;
        ev_err dedge, din;
        demosaic_err(e, &dem, &dedge, &din);
        const ev_err dall = {dedge.se + din.se, dedge.n + din.n};
        printf("  %s against the RGB pictures: %s CPSNR; within %d px of a camera's edge %s, inside %s\n", ad->name,
               ev_db(b1, sizeof b1, ev_psnr(dall)), BORDER, ev_db(b2, sizeof b2, ev_psnr(dedge)),
               ev_db(b3, sizeof b3, ev_psnr(din)));
        snprintf(name, sizeof name, "panorama.%s.cameras_psnr", ad->name);
        ev_add_fig(e, name, ev_psnr(dall));
        snprintf(name, sizeof name, "panorama.%s.cameras_edge_psnr", ad->name);
        ev_add_fig(e, name, ev_psnr(dedge));
        snprintf(name, sizeof name, "panorama.%s.cameras_inside_psnr", ad->name);
        ev_add_fig(e, name, ev_psnr(din));
        for (int k = 0; k < nb; k++) {
            ev_err zin, zout;
            if (plan_full(e, &e->rig, e->photo, blends[k], e->sampler, &dem, &plan) || compensate(plan, &dem, gains) ||
                ev_render(e, plan, &dem, &pic) || probe_zones(e, plan, mask))
                goto out;
            err_split(&pic, &truth, mask, M_ZONE, &zin, &zout);
            ev_err all = {zin.se + zout.se, zin.n + zout.n};
            r.psnr[k] = ev_psnr(all);
            r.zone[k] = ev_psnr(zin);
            r.rest[k] = ev_psnr(zout);
            const char *bn = pc_render_blend_name((pc_render_blend)blends[k]);
            printf("  Bayer, %-18s %-9s %-8s %s over the covered area; blend zones %s (%ld px), elsewhere %s: "
                   "%+.2f dB\n", ad->name, bn, pc_render_sampler_name(plan->sampler), ev_db(b1, sizeof b1, r.psnr[k]), ev_db(b2, sizeof b2, r.zone[k]), zin.n,
                   ev_db(b3, sizeof b3, r.rest[k]), r.rest[k] - r.zone[k]);
            snprintf(name, sizeof name, "panorama.%s.%s.psnr", ad->name, bn);
            ev_add_fig(e, name, r.psnr[k]);
            snprintf(name, sizeof name, "panorama.%s.%s.zone_psnr", ad->name, bn);
            ev_add_fig(e, name, r.zone[k]);
            snprintf(name, sizeof name, "panorama.%s.%s.rest_psnr", ad->name, bn);
            ev_add_fig(e, name, r.rest[k]);
            if (ad->id == PC_ALGO_EDGE) {
                snprintf(name, sizeof name, "panorama_edge_%s.png", bn);
                if (ev_write_png(e, name, &pic))
                    goto out;
            }
            /* the colour step, once: edge (the daemon's default), feather */
            if (ad->id == PC_ALGO_EDGE && blends[k] == PC_RENDER_FEATHER) {
                memcpy(e->comp_gains, gains, sizeof e->comp_gains);
                e->have_comp_gains = 1;
                if (colour_steps(e, &e->rig, e->photo, plan, (const float(*)[3])gains, &dem, &steps))
                    goto out;
                have_steps = 1;
                print_steps("the .pto's photometry, Bayer edge", &steps, (const float(*)[3])gains, e->ncam);
                ev_add_fig(e, "panorama.step_before", steps.before);
                ev_add_fig(e, "panorama.step_after", steps.after);
                ev_add_fig(e, "panorama.step_before_unclipped", steps.before_u);
                ev_add_fig(e, "panorama.step_after_unclipped", steps.after_u);
                ev_add_row(e, "b", "colour step at seams, .pto photometry: before; after", "<= 1 level",
                           steps.after <= 1.0, "%.2f; %.2f levels", steps.before, steps.after);
                /* the same rig with its exposures and white balances
                 * left out of the .pto: what compensation alone does */
                pc_rig raw = e->rig;
                for (int c = 0; c < raw.ncam; c++)
                    raw.cam[c].eev = 0, raw.cam[c].er = raw.cam[c].eb = 1;
                pc_rig_photometry *ph = malloc(sizeof *ph);
                pc_render_plan *p2 = NULL;
                float g2[PC_RIG_MAX_CAMERAS][3];
                step_stat s2;
                int bad = !ph;
                if (!bad) {
                    pc_rig_photometry_build(&raw, ph);
                    bad = plan_full(e, &raw, ph, PC_RENDER_FEATHER, e->sampler, &dem, &p2) || compensate(p2, &dem, g2) ||
                          colour_steps(e, &raw, ph, p2, (const float(*)[3])g2, &dem, &s2);
                }
                if (!bad)
                    print_steps("exposures and white balances left out of the .pto", &s2, (const float(*)[3])g2,
                                e->ncam);
                free(ph);
                pc_render_plan_free(p2);
                if (bad)
                    goto out;
                ev_add_fig(e, "panorama.step_uncal_before", s2.before);
                ev_add_fig(e, "panorama.step_uncal_after", s2.after);
                ev_add_fig(e, "panorama.step_uncal_before_unclipped", s2.before_u);
                ev_add_fig(e, "panorama.step_uncal_after_unclipped", s2.after_u);
                ev_add_row(e, "b", "colour step, no Eev/Er/Eb in .pto: before; after", NULL, -1,
                           "%.2f; %.2f levels", s2.before, s2.after);
                ev_add_row(e, "b", "  the same where no picture clips: before; after", "<= 1 level",
                           s2.after_u <= 1.0, "%.2f; %.2f levels", s2.before_u, s2.after_u);
            }
            ev_pic_free(&pic);
            pc_render_plan_free(plan);
            plan = NULL;
        }
        ev_pic_free(&dem);
        /* the table: one row per demosaic for the PSNR, one for the zones */
        char fig[96] = "", zf[96] = "", bn[64] = "";
        int pass = !isnan(want), zpass = 1;
        for (int k = 0; k < nb; k++) {
            size_t n = strlen(fig), m = strlen(zf), q = strlen(bn);
            snprintf(fig + n, sizeof fig - n, "%s%.2f", k ? "; " : "", r.psnr[k]);
            snprintf(zf + m, sizeof zf - m, "%s%+.2f", k ? "; " : "", r.rest[k] - r.zone[k]);
            snprintf(bn + q, sizeof bn - q, "%s%s", k ? "; " : "", pc_render_blend_name((pc_render_blend)blends[k]));
            pass &= r.psnr[k] >= want;
            zpass &= r.rest[k] - r.zone[k] <= 1.0;
        }
        char what[96], target[64];
        snprintf(what, sizeof what, "Bayer %s -> panorama (%s) vs scene (%s)", ad->name, sn, bn);
        snprintf(target, sizeof target, ">= %.2f dB", want);
        ev_add_row(e, "b", what, isnan(want) ? NULL : target, isnan(want) ? -1 : pass, "%s dB", fig);
        snprintf(what, sizeof what, "Bayer %s: elsewhere - blend zones (%s)", ad->name, bn);
        ev_add_row(e, "b", what, "<= 1 dB", zpass, "%s dB", zf);
    }
    (void)have_steps;
    rc = 0;
out:
    pc_render_plan_free(plan);
    ev_pic_free(&truth);
    ev_pic_free(&pic);
    ev_pic_free(&dem);
    ev_layer_free(&eb);
    free(mask);
    return rc;
}
