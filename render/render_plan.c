/* render_plan.c - builds the render plan (render.h) once per rig and view:
 * the cameras' models, the photometry, the view's per-column and per-row
 * ray terms, the conservative camera mask of every output tile, the
 * overlap samples of gain compensation and, on request, the precomputed
 * maps. Nothing here runs per frame.
 *
 * Tile masks: each camera's signed border distance (render_formulas.h,
 * pc_render_border: negative outside its valid area) is evaluated on a
 * grid of output pixels every GRID pixels. The source position moves at
 * most J source pixels per output pixel (J measured on the grid, with a
 * safety factor) and the distance at most as much as the position, so a
 * pixel the camera sees lies within GRID * sqrt(2) output pixels of a
 * grid point whose distance is above -J * GRID * sqrt(2): a camera is put
 * in the mask of every tile near such a point. A mask with a camera too
 * many only costs a projection; one too few would lose pixels, which the
 * tests would see (the CPU backend, which follows the masks, is
 * bit-identical to the reference, which does not).
 */
#include "render.h"

#include "errmsg.h"
#include "render_formulas.h"
#include "render_multiband.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GRID 4

int pc_render_seams_init(pc_render_plan *p, int levels, char *err, size_t errlen); /* render_seam.c */
void pc_render_outline_free(struct pc_render_outline *o);                         /* render_view.c */

void pc_render_options_default(pc_render_options *o)
{
    memset(o, 0, sizeof *o);
    o->blend = PC_RENDER_FEATHER;
}

/* The names of the blends and samplers (render.h): the one table that
 * the configuration, the daemon, the man page and the tools read. */
static const char *const blend_names[PC_RENDER_BLEND_COUNT] = {
    [PC_RENDER_FEATHER] = "feather", [PC_RENDER_SEAM] = "seam", [PC_RENDER_MULTIBAND] = "multiband"};
static const char *const sampler_names[PC_RENDER_SAMPLER_COUNT] = {
    [PC_RENDER_BILINEAR] = "bilinear", [PC_RENDER_BICUBIC] = "bicubic", [PC_RENDER_SAMPLER_AUTO] = "auto"};

static int name_index(const char *name, const char *const *names, int n)
{
    for (int i = 0; name && i < n; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

int pc_render_blend_count(void) { return PC_RENDER_BLEND_COUNT; }
int pc_render_blend_from_name(const char *name) { return name_index(name, blend_names, PC_RENDER_BLEND_COUNT); }
const char *pc_render_blend_name(pc_render_blend b)
{
    return (unsigned)b < PC_RENDER_BLEND_COUNT ? blend_names[b] : "?";
}

int pc_render_sampler_count(void) { return PC_RENDER_SAMPLER_COUNT; }
int pc_render_sampler_from_name(const char *name)
{
    return name_index(name, sampler_names, PC_RENDER_SAMPLER_COUNT);
}
const char *pc_render_sampler_name(pc_render_sampler s)
{
    return (unsigned)s < PC_RENDER_SAMPLER_COUNT ? sampler_names[s] : "?";
}

pc_render_sampler pc_render_sampler_resolve(pc_render_sampler s, int gpu)
{
    if (s == PC_RENDER_SAMPLER_AUTO)
        return gpu ? PC_RENDER_BICUBIC : PC_RENDER_BILINEAR;
    return s == PC_RENDER_BICUBIC ? PC_RENDER_BICUBIC : PC_RENDER_BILINEAR;
}

void pc_render_plan_free(pc_render_plan *p)
{
    if (!p)
        return;
    free(p->col);
    free(p->row);
    free(p->tmask);
    free(p->seam);
    free(p->seam_next);
    free(p->seam_lim);
    pc_render_mb_free(p->mb);
    for (int i = 0; i < p->npairs; i++)
        free(p->pair[i].xy);
    free(p->map_off);
    free(p->map);
    pc_render_outline_free(p->outline);
    free(p);
}

/* photo is needed unless every table is the identity, every gain 1 and
 * no camera has vignetting. */
static void update_photo(pc_render_plan *p)
{
    int ones = 1;
    for (int c = 0; c < p->ncam; c++)
        for (int k = 0; k < 3; k++) {
            p->cam[c].gain[k] = p->photo_gain[c][k] * p->comp_gain[c][k];
            ones &= p->cam[c].gain[k] == 1.0f;
        }
    p->photo = !(p->resp_identity && ones && !p->has_vig);
}

void pc_render_plan_set_gains(pc_render_plan *p, const float gains[][3])
{
    for (int c = 0; c < p->ncam; c++)
        for (int k = 0; k < 3; k++)
            p->comp_gain[c][k] = gains[c][k];
    update_photo(p);
}

static void photometry(pc_render_plan *p, const pc_rig *rig, const pc_rig_photometry *ph)
{
    p->resp_identity = 1;
    p->has_vig = 0;
    for (int c = 0; c < p->ncam; c++) {
        if (ph)
            pc_rig_vig_model(rig, c, &p->cam[c].vig);
        else
            memset(&p->cam[c].vig, 0, sizeof p->cam[c].vig);
        p->has_vig |= p->cam[c].vig.on;
        for (int k = 0; k < 3; k++) {
            p->photo_gain[c][k] = ph ? ph->gain[c][k] : 1.0f;
            p->comp_gain[c][k] = 1.0f;
        }
        for (int i = 0; i < PC_RIG_RESPONSE_KNOTS; i++) {
            p->inv_knots[c][i] = ph ? ph->inv_knots[c][i] : (float)i / (PC_RIG_RESPONSE_KNOTS - 1);
            p->resp_identity &= fabsf(p->inv_knots[c][i] - (float)i / (PC_RIG_RESPONSE_KNOTS - 1)) < 1e-7f;
        }
    }
    for (int i = 0; i < PC_RIG_RESPONSE_KNOTS; i++) {
        p->out_resp[i] = ph ? ph->out_resp[i] : (float)i / (PC_RIG_RESPONSE_KNOTS - 1);
        p->resp_identity &= fabsf(p->out_resp[i] - (float)i / (PC_RIG_RESPONSE_KNOTS - 1)) < 1e-7f;
    }
    /* The rig's own statement that its corrections cancel (e.g. one EMoR
     * curve in and out, no exposure differences) counts as identity. */
    if (ph && ph->identity && !ph->has_vig)
        p->resp_identity = 1;
    update_photo(p);
}

/* Signed border distance of camera c at output pixel (x, y); -1e9 where
 * the camera has no source position (behind it, past its lens's fold). */
static float signed_dist(const pc_render_plan *p, int c, int x, int y, float *sx, float *sy)
{
    float ray[3];
    pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
    pc_cam_project(&p->cam[c].geo, ray, sx, sy);
    if (*sx < -1e8f)
        return -1e9f;
    return pc_render_border(&p->cam[c].geo, *sx, *sy);
}

static int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Masks and overlap samples from the grid. */
static int masks_and_pairs(pc_render_plan *p, char *err, size_t errlen)
{
    const int w = p->view.w, h = p->view.h;
    const int gw = (w - 1 + GRID - 1) / GRID + 1, gh = (h - 1 + GRID - 1) / GRID + 1;
    float *d = malloc(sizeof *d * (size_t)gw * gh * p->ncam);
    float *pos = malloc(sizeof *pos * 2 * (size_t)gw * gh);
    if (!d || !pos) {
        free(d);
        free(pos);
        pc_set_err(err, errlen, "render plan %dx%d: out of memory for the camera masks", w, h);
        return PC_ENOMEM;
    }
    for (int c = 0; c < p->ncam; c++) {
        float *dc = d + (size_t)c * gw * gh;
        for (int gy = 0; gy < gh; gy++)
            for (int gx = 0; gx < gw; gx++) {
                int X = gx * GRID < w - 1 ? gx * GRID : w - 1, Y = gy * GRID < h - 1 ? gy * GRID : h - 1;
                size_t i = (size_t)gy * gw + gx;
                dc[i] = signed_dist(p, c, X, Y, &pos[2 * i], &pos[2 * i + 1]);
            }
        /* J: the largest source step per output pixel between grid
         * neighbours near the camera (both positions defined, one of them
         * within 512 source pixels of its area) */
        double J = 0;
        for (int gy = 0; gy < gh; gy++)
            for (int gx = 0; gx < gw; gx++) {
                size_t i = (size_t)gy * gw + gx;
                for (int dir = 0; dir < 2; dir++) {
                    int nx = gx + (dir == 0), ny = gy + (dir == 1);
                    if (nx >= gw || ny >= gh)
                        continue;
                    size_t n = (size_t)ny * gw + nx;
                    if (dc[i] < -1e8f || dc[n] < -1e8f || (dc[i] < -512 && dc[n] < -512))
                        continue;
                    int step = dir == 0 ? (nx * GRID < w - 1 ? nx * GRID : w - 1) - gx * GRID
                                        : (ny * GRID < h - 1 ? ny * GRID : h - 1) - gy * GRID;
                    if (step <= 0)
                        continue;
                    double s = hypot(pos[2 * n] - pos[2 * i], pos[2 * n + 1] - pos[2 * i + 1]) / step;
                    J = s > J ? s : J;
                }
            }
        const float margin = (float)(1.25 * J * GRID * 1.5 + 1.0);
        for (int gy = 0; gy < gh; gy++)
            for (int gx = 0; gx < gw; gx++) {
                if (!(dc[(size_t)gy * gw + gx] > -margin))
                    continue;
                int X = gx * GRID < w - 1 ? gx * GRID : w - 1, Y = gy * GRID < h - 1 ? gy * GRID : h - 1;
                /* the tiles whose box grown by GRID holds (X, Y) */
                int tx0 = floor_div(X - GRID, PC_RENDER_TILE_W), tx1 = floor_div(X + GRID, PC_RENDER_TILE_W);
                int ty0 = floor_div(Y - GRID, PC_RENDER_TILE_H), ty1 = floor_div(Y + GRID, PC_RENDER_TILE_H);
                tx0 = tx0 < 0 ? 0 : tx0;
                ty0 = ty0 < 0 ? 0 : ty0;
                tx1 = tx1 >= p->ntx ? p->ntx - 1 : tx1;
                ty1 = ty1 >= p->nty ? p->nty - 1 : ty1;
                for (int ty = ty0; ty <= ty1; ty++)
                    for (int tx = tx0; tx <= tx1; tx++)
                        p->tmask[(size_t)ty * p->ntx + tx] |= (uint16_t)(1u << c);
            }
    }
    /* overlap samples: grid points both cameras see at full weight, a
     * pixel further in, thinned evenly to PC_RENDER_GAIN_SAMPLES */
    const float full = 1.0f / p->inv_feather + 1.0f;
    int rc = 0;
    for (int a = 0; a < p->ncam && !rc; a++)
        for (int b = a + 1; b < p->ncam && !rc; b++) {
            const float *da = d + (size_t)a * gw * gh, *db = d + (size_t)b * gw * gh;
            size_t n = 0;
            for (size_t i = 0; i < (size_t)gw * gh; i++)
                n += da[i] >= full && db[i] >= full;
            if (n < 8)
                continue;
            if (p->npairs == PC_RENDER_MAX_PAIRS)
                break; /* more overlaps than gain compensation follows: the rest keep their gains */
            size_t stride = (n + PC_RENDER_GAIN_SAMPLES - 1) / PC_RENDER_GAIN_SAMPLES;
            pc_render_pair *pr = &p->pair[p->npairs];
            pr->a = a;
            pr->b = b;
            pr->n = 0;
            pr->xy = malloc(sizeof *pr->xy * (n / stride + 1));
            if (!pr->xy) {
                pc_set_err(err, errlen, "render plan: out of memory for the overlap samples");
                rc = PC_ENOMEM;
                break;
            }
            p->npairs++;
            size_t k = 0;
            for (int gy = 0; gy < gh; gy++)
                for (int gx = 0; gx < gw; gx++) {
                    size_t i = (size_t)gy * gw + gx;
                    if (!(da[i] >= full && db[i] >= full))
                        continue;
                    if (k++ % stride)
                        continue;
                    int X = gx * GRID < w - 1 ? gx * GRID : w - 1, Y = gy * GRID < h - 1 ? gy * GRID : h - 1;
                    pr->xy[pr->n++] = (uint32_t)X | (uint32_t)Y << 16;
                }
        }
    free(d);
    free(pos);
    return rc;
}

/* The MAP variant's tables (render.h). */
static int build_maps(pc_render_plan *p, char *err, size_t errlen)
{
    const size_t ntiles = (size_t)p->ntx * p->nty;
    size_t entries = 0;
    p->map_off = malloc(sizeof *p->map_off * (ntiles + 1));
    if (!p->map_off)
        goto oom;
    for (size_t t = 0; t < ntiles; t++) {
        p->map_off[t] = (uint32_t)entries;
        entries += (size_t)__builtin_popcount(p->tmask[t]) * 256;
        if (entries > 0xFFFFFFFFu) {
            pc_set_err(err, errlen, "render plan %dx%d: the precomputed maps exceed 2^32 entries", p->view.w,
                       p->view.h);
            return PC_EINVAL;
        }
    }
    p->map_off[ntiles] = (uint32_t)entries;
    p->map_entries = entries;
    p->map = malloc(sizeof *p->map * 2 * (entries ? entries : 1));
    if (!p->map)
        goto oom;
    for (int ty = 0; ty < p->nty; ty++)
        for (int tx = 0; tx < p->ntx; tx++) {
            const size_t t = (size_t)ty * p->ntx + tx;
            float *m = p->map + 2 * (size_t)p->map_off[t];
            for (unsigned mask = p->tmask[t]; mask; mask &= mask - 1) {
                const int c = __builtin_ctz(mask);
                for (int e = 0; e < 256; e++) {
                    const int blk = e >> 2, k = e & 3;
                    const int x = tx * PC_RENDER_TILE_W + 2 * (blk & 15) + (k & 1);
                    const int y = ty * PC_RENDER_TILE_H + 2 * (blk >> 4) + (k >> 1);
                    float sx = -1e9f, sy = -1e9f, ray[3];
                    if (x < p->view.w && y < p->view.h) {
                        pc_render_ray(&p->view, p->col + 2 * x, p->row + 2 * y, ray);
                        if (!pc_cam_project(&p->cam[c].geo, ray, &sx, &sy))
                            sx = sy = -1e9f;
                    }
                    m[2 * e] = sx;
                    m[2 * e + 1] = sy;
                }
                m += 2 * 256;
            }
        }
    return 0;
oom:
    pc_set_err(err, errlen, "render plan %dx%d: out of memory for the precomputed maps", p->view.w, p->view.h);
    return PC_ENOMEM;
}

int pc_render_plan_build(pc_render_plan **out, const pc_rig *rig, const pc_view_model *view,
                         const pc_rig_photometry *photo, const pc_render_options *opt, char *err, size_t errlen)
{
    pc_render_options defaults;
    *out = NULL;
    if (!opt) {
        pc_render_options_default(&defaults);
        opt = &defaults;
    }
    if (!rig || rig->ncam < 1 || rig->ncam > PC_RENDER_MAX_CAMERAS) {
        pc_set_err(err, errlen, "render plan: %d cameras (1..%d)", rig ? rig->ncam : 0, PC_RENDER_MAX_CAMERAS);
        return PC_EINVAL;
    }
    if (!view || view->w < 2 || view->h < 2 || (view->w & 1) || (view->h & 1) || view->w > PC_MAX_DIM ||
        view->h > PC_MAX_DIM) {
        pc_set_err(err, errlen, "render plan: output %dx%d: width and height must be even, 2..%d", view ? view->w : 0,
                   view ? view->h : 0, PC_MAX_DIM);
        return PC_EINVAL;
    }
    for (int c = 1; c < rig->ncam; c++)
        if (rig->cam[c].w != rig->cam[0].w || rig->cam[c].h != rig->cam[0].h) {
            pc_set_err(err, errlen, "%s:%d: i line (image %d): fields w h: %dx%d, but image 0 is %dx%d (the cameras "
                       "are stacked in one picture: one size for all)", rig->path, rig->cam[c].line, c, rig->cam[c].w,
                       rig->cam[c].h, rig->cam[0].w, rig->cam[0].h);
            return PC_EINVAL;
        }
    const int levels = opt->levels ? opt->levels : PC_MB_DEFAULT_LEVELS;
    if ((unsigned)opt->blend >= PC_RENDER_BLEND_COUNT || opt->feather < 0 || opt->feather > 1e6f || opt->seam_width < 0 ||
        opt->seam_width > 1e6f || levels < PC_MB_MIN_LEVELS || levels > PC_MB_MAX_LEVELS) {
        pc_set_err(err, errlen, "render plan: options: blend %d, feather %g, seam width %g, levels %d (%d..%d)",
                   (int)opt->blend, (double)opt->feather, (double)opt->seam_width, opt->levels, PC_MB_MIN_LEVELS,
                   PC_MB_MAX_LEVELS);
        return PC_EINVAL;
    }
    if (opt->sampler != PC_RENDER_BILINEAR && opt->sampler != PC_RENDER_BICUBIC) {
        pc_set_err(err, errlen, "render plan: options: sampler %d (%s): a plan samples bilinear or bicubic (auto: "
                   "pc_render_sampler_resolve first)", (int)opt->sampler, pc_render_sampler_name(opt->sampler));
        return PC_EINVAL;
    }
    if (opt->sampler == PC_RENDER_BICUBIC && opt->blend == PC_RENDER_MULTIBAND) {
        pc_set_err(err, errlen, "render plan: sampler bicubic with blend multiband: the multiband pyramid samples "
                   "bilinear; use blend feather or seam with bicubic");
        return PC_EINVAL;
    }
    pc_render_plan *p = calloc(1, sizeof *p);
    if (!p) {
        pc_set_err(err, errlen, "render plan: out of memory");
        return PC_ENOMEM;
    }
    p->ncam = rig->ncam;
    p->cam_w = rig->cam[0].w;
    p->cam_h = rig->cam[0].h;
    p->view = *view;
    for (int c = 0; c < p->ncam; c++)
        pc_rig_camera_model(rig, c, &p->cam[c].geo);
    float feather = opt->feather;
    if (feather == 0) {
        feather = (float)((p->cam_w < p->cam_h ? p->cam_w : p->cam_h) / 16);
        feather = feather < 2 ? 2 : feather;
    }
    feather = feather < 1 ? 1 : feather;
    p->inv_feather = 1.0f / feather;
    p->sampler = opt->sampler;
    photometry(p, rig, photo);
    const int w = view->w, h = view->h;
    p->ntx = (w + PC_RENDER_TILE_W - 1) / PC_RENDER_TILE_W;
    p->nty = (h + PC_RENDER_TILE_H - 1) / PC_RENDER_TILE_H;
    p->col = malloc(sizeof *p->col * 2 * (size_t)w);
    p->row = malloc(sizeof *p->row * 2 * (size_t)h);
    p->tmask = calloc((size_t)p->ntx * p->nty, sizeof *p->tmask);
    int rc = PC_ENOMEM;
    if (!p->col || !p->row || !p->tmask) {
        pc_set_err(err, errlen, "render plan %dx%d: out of memory", w, h);
        goto fail;
    }
    /* pc_render_terms gives each column its terms from (x, 0) and each row
     * from (0, y): the column terms use only x, the row terms only y */
    for (int x = 0; x < w; x++) {
        float r[2];
        pc_render_terms(view, (float)x, 0.0f, p->col + 2 * x, r);
    }
    for (int y = 0; y < h; y++) {
        float c[2];
        pc_render_terms(view, 0.0f, (float)y, c, p->row + 2 * y);
    }
    if ((rc = masks_and_pairs(p, err, errlen)))
        goto fail;
    p->blend = opt->blend;
    p->inv_seam = 1.0f / (opt->seam_width > 0 ? opt->seam_width : p->blend == PC_RENDER_MULTIBAND ? 2.0f : 8.0f);
    if (p->blend != PC_RENDER_FEATHER && (rc = pc_render_seams_init(p, levels, err, errlen)))
        goto fail;
    if (p->blend == PC_RENDER_MULTIBAND && (rc = pc_render_mb_build(p, levels, err, errlen)))
        goto fail;
    if (opt->maps && (rc = build_maps(p, err, errlen)))
        goto fail;
    *out = p;
    return 0;
fail:
    pc_render_plan_free(p);
    return rc;
}

int pc_render_check(const pc_render_plan *p, const pc_picture *src, const pc_picture *dst, char *err, size_t errlen)
{
    if (!p || !src || !dst) {
        pc_set_err(err, errlen, "render: %s is NULL", !p ? "the plan" : !src ? "the source picture" : "the destination");
        return PC_EINVAL;
    }
    if ((src->fmt != PC_FMT_RGB24 && src->fmt != PC_FMT_RGBX32) || src->width != p->cam_w ||
        src->height != p->ncam * p->cam_h || !src->plane[0] ||
        src->pitch[0] < (size_t)p->cam_w * (src->fmt == PC_FMT_RGB24 ? 3 : 4)) {
        pc_set_err(err, errlen, "render: the source must be the %d cameras stacked, %s or %s %dx%d (got %s %dx%d, "
                   "pitch %zu)", p->ncam, pc_pixfmt_name(PC_FMT_RGB24), pc_pixfmt_name(PC_FMT_RGBX32), p->cam_w,
                   p->ncam * p->cam_h, pc_pixfmt_name(src->fmt), src->width, src->height, src->pitch[0]);
        return PC_EINVAL;
    }
    if (dst->fmt != PC_FMT_RGB24 && dst->fmt != PC_FMT_NV12 && dst->fmt != PC_FMT_I420) {
        pc_set_err(err, errlen, "render: destination format %s (nv12, i420 or rgb24)", pc_pixfmt_name(dst->fmt));
        return PC_EINVAL;
    }
    if (dst->width != p->view.w || dst->height != p->view.h || dst->grid_cols > 1 || dst->bands) {
        pc_set_err(err, errlen, "render: destination %dx%d%s, but the plan renders %dx%d", dst->width, dst->height,
                   dst->grid_cols > 1 || dst->bands ? " (a grid or banded picture)" : "", p->view.w, p->view.h);
        return PC_EINVAL;
    }
    for (int i = 0; i < pc_pixfmt_planes(dst->fmt); i++) {
        size_t rb;
        pc_picture_plane_size(dst->fmt, dst->width, dst->height, i, NULL, NULL, &rb);
        if (!dst->plane[i] || dst->pitch[i] < rb) {
            pc_set_err(err, errlen, "render: destination plane %d missing or its pitch %zu under a row (%zu bytes)", i,
                       dst->pitch[i], rb);
            return PC_EINVAL;
        }
    }
    return 0;
}
