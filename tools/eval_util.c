/* eval_util.c - panocap-eval's context and shared steps (eval.h): the rig
 * and the scene's pictures, pictures and errors, Hugin's tools through the
 * shell, their TIFF files, the report's rows and figures. */
#include "eval.h"

#include "image.h"
#include "render_formulas.h"
#include "rig_tiff.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

double ev_psnr(ev_err a)
{
    if (a.n <= 0)
        return NAN;
    return 10.0 * log10(255.0 * 255.0 * 3.0 * (double)a.n / (a.se > 0 ? a.se : 1e-9));
}

ev_err ev_err_masked(const pc_picture *a, const pc_picture *b, const uint8_t *mask, uint8_t bit)
{
    ev_err r = {0, 0};
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < a->width; x++)
            if (mask[(size_t)y * a->width + x] & bit) {
                r.se += ev_px_se(ev_row_ptr(a, y) + 3 * x, ev_row_ptr(b, y) + 3 * x);
                r.n++;
            }
    return r;
}

const char *ev_db(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.2f dB", v);
    return buf;
}

int ev_pic_alloc(pc_picture *p, pc_pixfmt fmt, int w, int h)
{
    memset(p, 0, sizeof *p);
    size_t n = pc_picture_layout(p, fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 64, NULL);
    uint8_t *buf = n ? calloc(1, n) : NULL;
    if (!buf) {
        fprintf(stderr, "panocap-eval: out of memory for a %dx%d picture\n", w, h);
        return -1;
    }
    pc_picture_layout(p, fmt, PC_MATRIX_BT709, PC_RANGE_LIMITED, w, h, 64, buf);
    return 0;
}

void ev_pic_free(pc_picture *p)
{
    free(p->plane[0]);
    memset(p, 0, sizeof *p);
}

int ev_write_png(ev_ctx *e, const char *name, const pc_picture *rgb)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s", e->dir, name);
    if (pc_image_write(path, rgb->plane[0], rgb->pitch[0], rgb->width, rgb->height, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: %s\n", err);
        return -1;
    }
    return 0;
}

void ev_pano_view(const pc_rig *rig, pc_view_model *v)
{
    int w, h;
    pc_rig_output_size(rig, &w, &h);
    pc_rig_panorama_view(rig, w, h, v);
    v->w &= ~1;
    v->h &= ~1;
}

pc_picture ev_cam_of(const pc_picture *src, int c, int cam_h)
{
    pc_picture p = *src;
    p.plane[0] = src->plane[0] + (size_t)c * cam_h * src->pitch[0];
    p.height = cam_h;
    return p;
}

int ev_render_truth(ev_ctx *e, const pc_view_model *v, pc_picture *out)
{
    char err[512];
    pc_scene_eye *eye = malloc(sizeof *eye);
    if (!eye || ev_pic_alloc(out, PC_FMT_RGB24, v->w, v->h)) {
        free(eye);
        return -1;
    }
    pc_scene_eye_view(v, &e->rig, eye);
    int rc = pc_scene_render(e->scene, eye, e->t, 0, e->threads, 0, 0, v->w, v->h, out->plane[0], out->pitch[0], err,
                             sizeof err);
    free(eye);
    if (rc) {
        fprintf(stderr, "panocap-eval: the scene's ground truth: %s\n", err);
        ev_pic_free(out);
        return -1;
    }
    return 0;
}

int ev_demosaic(ev_ctx *e, pc_algo_id algo, pc_picture *out)
{
    char err[512];
    const int w = e->cam_w, h = e->ncam * e->cam_h;
    uint8_t *raw = malloc((size_t)w * h);
    if (!raw || ev_pic_alloc(out, PC_FMT_RGBX32, w, h)) {
        free(raw);
        return -1;
    }
    /* the cameras stacked, each its own image (net demosaics them one by
     * one, as the daemon does) */
    pc_bayer b = {raw, (size_t)w, w, h, PC_CFA_RGGB,
                  e->cam_h >= PC_MIN_DIM && !(e->cam_h & 1) && h % e->cam_h == 0 ? e->cam_h : 0};
    int rc = pc_mosaic_from_rgb(e->cams.plane[0], e->cams.pitch[0], w, h, PC_CFA_RGGB, raw, (size_t)w, err,
                                sizeof err);
    if (!rc)
        rc = pc_cpu_prepare(e->cpu, algo, err, sizeof err);
    if (!rc)
        rc = pc_cpu_debayer(e->cpu, algo, &b, out, err, sizeof err);
    free(raw);
    if (rc) {
        fprintf(stderr, "panocap-eval: demosaic %s: %s\n", pc_algo_get(algo)->name, err);
        ev_pic_free(out);
        return -1;
    }
    return 0;
}

int ev_plan_one(ev_ctx *e, const pc_rig *rig, int c, const pc_view_model *v, const pc_rig_photometry *photo,
                int sampler,
                pc_render_plan **out)
{
    char err[512];
    pc_rig one = *rig;
    one.ncam = 1;
    one.cam[0] = rig->cam[c];
    pc_rig_photometry *ph1 = NULL;
    if (photo) {
        if (!(ph1 = malloc(sizeof *ph1)))
            return -1;
        *ph1 = *photo;
        memcpy(ph1->gain[0], photo->gain[c], sizeof ph1->gain[0]);
        memcpy(ph1->inv_knots[0], photo->inv_knots[c], sizeof ph1->inv_knots[0]);
        memcpy(ph1->inv_resp[0], photo->inv_resp[c], sizeof ph1->inv_resp[0]);
        ph1->identity = 0;
    }
    pc_render_options opt;
    pc_render_options_default(&opt);
    opt.sampler = (pc_render_sampler)sampler;
    int rc = pc_render_plan_build(out, &one, v, ph1, &opt, err, sizeof err);
    free(ph1);
    if (rc)
        fprintf(stderr, "panocap-eval: camera %d's plan: %s\n", c, err);
    (void)e;
    return rc ? -1 : 0;
}

int ev_render(ev_ctx *e, const pc_render_plan *plan, const pc_picture *src, pc_picture *out)
{
    char err[512];
    if (ev_pic_alloc(out, PC_FMT_RGB24, plan->view.w, plan->view.h))
        return -1;
    if (pc_render_cpu(pc_cpu_pool(e->cpu), plan, src, out, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: render: %s\n", err);
        ev_pic_free(out);
        return -1;
    }
    return 0;
}

int ev_sees(const pc_cam_model *cm, const pc_view_model *v, int x, int y, float margin, float *sx, float *sy)
{
    float ray[3];
    pc_view_ray(v, (float)x, (float)y, ray);
    return pc_cam_project(cm, ray, sx, sy) && pc_render_border(cm, *sx, *sy) >= margin;
}

void ev_cover_mask(ev_ctx *e, const pc_view_model *v, uint8_t *mask, uint8_t bit)
{
    pc_cam_model cm[PC_RIG_MAX_CAMERAS];
    for (int c = 0; c < e->ncam; c++)
        pc_rig_camera_model(&e->rig, c, &cm[c]);
    for (int y = 0; y < v->h; y++)
        for (int x = 0; x < v->w; x++) {
            float sx, sy;
            for (int c = 0; c < e->ncam; c++)
                if (ev_sees(&cm[c], v, x, y, 1.0f, &sx, &sy)) {
                    mask[(size_t)y * v->w + x] |= bit;
                    break;
                }
        }
}

/* --- commands and files --------------------------------------------- */

int ev_sh(ev_ctx *e, const char *fmt, ...)
{
    char cmd[4096], full[5200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    printf("  $ %s\n", cmd);
    fflush(stdout);
    if (e->log) {
        fprintf(e->log, "$ %s\n", cmd);
        fflush(e->log);
    }
    snprintf(full, sizeof full, "cd '%s' && { %s ; } >>commands.log 2>&1", e->dir, cmd);
    int rc = system(full);
    if (rc != 0)
        fprintf(stderr, "panocap-eval: '%s' failed (status %d; its output is in %s/commands.log)\n", cmd, rc, e->dir);
    return rc == 0 ? 0 : -1;
}

int ev_save_pto(ev_ctx *e, const pc_rig *rig, const char *name, int interp)
{
    char path[1024], tmp[1100], err[512], line[8192];
    snprintf(path, sizeof path, "%s/%s", e->dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (pc_rig_save(rig, tmp, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: %s\n", err);
        return -1;
    }
    /* pc_rig_save writes "m i0": the interpolator is the one line changed */
    FILE *in = fopen(tmp, "r"), *out = fopen(path, "w");
    int rc = in && out ? 0 : -1;
    while (!rc && fgets(line, sizeof line, in)) {
        if (!strncmp(line, "m ", 2))
            fprintf(out, "m i%d\n", interp);
        else
            fputs(line, out);
    }
    if (in)
        fclose(in);
    if (out && fclose(out))
        rc = -1;
    unlink(tmp);
    if (rc)
        fprintf(stderr, "panocap-eval: %s: %s\n", path, strerror(errno));
    return rc;
}

void ev_rig_neutral(pc_rig *rig)
{
    for (int i = 0; i < rig->ncam; i++) {
        pc_rig_camera *c = &rig->cam[i];
        c->eev = 0;
        c->er = c->eb = 1;
        c->va = 1;
        c->vb = c->vc = c->vd = c->vx = c->vy = 0;
    }
    rig->pano.exposure = 0;
}

static int read_tiff(ev_ctx *e, const char *name, rig_tiff *t)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s", e->dir, name);
    if (rig_tiff_read(path, t, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: %s\n", err);
        return -1;
    }
    return 0;
}

int ev_layer_read(ev_ctx *e, const char *name, int w, int h, int ox, int oy, ev_layer *l)
{
    rig_tiff t;
    memset(l, 0, sizeof *l);
    if (read_tiff(e, name, &t))
        return -1;
    if (t.spp != 4) {
        fprintf(stderr, "panocap-eval: %s: %d samples per pixel, not RGBA\n", name, t.spp);
        rig_tiff_free(&t);
        return -1;
    }
    l->w = w;
    l->h = h;
    if (!(l->rgba = calloc((size_t)w * h, 4))) {
        rig_tiff_free(&t);
        return -1;
    }
    const int dx = t.xoff - ox, dy = t.yoff - oy;
    for (int y = 0; y < t.h; y++)
        for (int x = 0; x < t.w; x++) {
            const int X = x + dx, Y = y + dy;
            if (X < 0 || Y < 0 || X >= w || Y >= h)
                continue;
            for (int k = 0; k < 4; k++)
                l->rgba[4 * ((size_t)Y * w + X) + k] = (uint8_t)t.px[4 * ((size_t)y * t.w + x) + k];
        }
    rig_tiff_free(&t);
    return 0;
}

int ev_coord_read(ev_ctx *e, const char *name, int w, int h, int ox, int oy, float **out)
{
    rig_tiff t;
    *out = NULL;
    if (read_tiff(e, name, &t))
        return -1;
    float *c = malloc((size_t)w * h * sizeof *c);
    if (!c || t.spp != 1) {
        fprintf(stderr, "panocap-eval: %s: not a one-sample coordinate image\n", name);
        free(c);
        rig_tiff_free(&t);
        return -1;
    }
    for (size_t i = 0; i < (size_t)w * h; i++)
        c[i] = -1;
    const int dx = t.xoff - ox, dy = t.yoff - oy;
    for (int y = 0; y < t.h; y++)
        for (int x = 0; x < t.w; x++) {
            const int X = x + dx, Y = y + dy;
            if (X >= 0 && Y >= 0 && X < w && Y < h)
                c[(size_t)Y * w + X] = t.px[(size_t)y * t.w + x];
        }
    rig_tiff_free(&t);
    *out = c;
    return 0;
}

void ev_layer_free(ev_layer *l)
{
    free(l->rgba);
    l->rgba = NULL;
}

int ev_layer_rgb(const ev_layer *l, pc_picture *out, uint8_t *mask, uint8_t bit)
{
    if (ev_pic_alloc(out, PC_FMT_RGB24, l->w, l->h))
        return -1;
    for (int y = 0; y < l->h; y++)
        for (int x = 0; x < l->w; x++) {
            const size_t i = (size_t)y * l->w + x;
            memcpy(ev_row_ptr(out, y) + 3 * x, l->rgba + 4 * i, 3);
            if (l->rgba[4 * i + 3] != 255)
                mask[i] &= (uint8_t)~bit;
        }
    return 0;
}

/* --- results ----------------------------------------------------------- */

void ev_add_row(ev_ctx *e, const char *part, const char *what, const char *target, int pass, const char *fmt, ...)
{
    if (e->nrows >= EV_MAX_ROWS)
        return;
    ev_row *r = &e->row[e->nrows++];
    snprintf(r->part, sizeof r->part, "%s", part);
    snprintf(r->what, sizeof r->what, "%s", what);
    snprintf(r->target, sizeof r->target, "%s", target ? target : "");
    r->pass = pass;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->figure, sizeof r->figure, fmt, ap);
    va_end(ap);
}

void ev_add_fig(ev_ctx *e, const char *name, double v)
{
    if (e->nfigs >= EV_MAX_FIGS)
        return;
    snprintf(e->fig[e->nfigs].name, sizeof e->fig[e->nfigs].name, "%s", name);
    e->fig[e->nfigs++].v = v;
}

/* --- set-up ------------------------------------------------------------ */

static int have(const char *tool)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

int ev_setup(ev_ctx *e)
{
    char err[1024], path[1024];
    if (mkdir(e->dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "panocap-eval: %s: %s\n", e->dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/commands.log", e->dir);
    if (!(e->log = fopen(path, "w"))) {
        fprintf(stderr, "panocap-eval: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (pc_rig_load(e->rig_path, &e->rig, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: %s\n", err);
        return -1;
    }
    if (e->scale > 1.0)
        pc_scene_rig_scale(&e->rig, e->scale);
    e->ncam = e->rig.ncam;
    e->cam_w = e->rig.cam[0].w;
    e->cam_h = e->rig.cam[0].h;
    for (int i = 1; i < e->ncam; i++)
        if (e->rig.cam[i].w != e->cam_w || e->rig.cam[i].h != e->cam_h) {
            fprintf(stderr, "panocap-eval: %s: camera %d is %dx%d, camera 0 %dx%d: panocap's cameras are of one "
                    "size\n", e->rig_path, i, e->rig.cam[i].w, e->rig.cam[i].h, e->cam_w, e->cam_h);
            return -1;
        }
    pc_rig_output_size(&e->rig, &e->pano_w, &e->pano_h);
    e->pano_w &= ~1;
    e->pano_h &= ~1;
    const char *ext = pc_image_have_png() ? "png" : "ppm";
    for (int i = 0; i < e->ncam; i++)
        snprintf(e->rig.cam[i].file, sizeof e->rig.cam[i].file, "cam%d.%s", i, ext);
    e->have_hugin = have("nona") && have("enblend") && have("pano_trafo") && have("pano_modify");
    if (pc_scene_create(&e->scene, "stadium", e->seed, err, sizeof err) ||
        pc_cpu_open(&e->cpu, e->threads, e->cam_w, e->ncam * e->cam_h, err, sizeof err)) {
        fprintf(stderr, "panocap-eval: %s\n", err);
        return -1;
    }
    if (!(e->photo = malloc(sizeof *e->photo)))
        return -1;
    pc_rig_photometry_build(&e->rig, e->photo);
    if (!(e->parts & (EV_PART_GEOMETRY | EV_PART_PANORAMA | EV_PART_VIEWS)))
        return 0;
    /* the cameras' pictures at e->t, each with its own photometry */
    if (ev_pic_alloc(&e->cams, PC_FMT_RGB24, e->cam_w, e->ncam * e->cam_h))
        return -1;
    pc_scene_eye *eye = malloc(sizeof *eye);
    if (!eye)
        return -1;
    for (int i = 0; i < e->ncam; i++) {
        pc_scene_eye_camera(&e->rig, i, eye);
        pc_picture cam = ev_cam_of(&e->cams, i, e->cam_h);
        if (pc_scene_render(e->scene, eye, e->t, 0, e->threads, 0, 0, e->cam_w, e->cam_h, cam.plane[0], cam.pitch[0],
                            err, sizeof err) ||
            ev_write_png(e, e->rig.cam[i].file, &cam)) {
            fprintf(stderr, "panocap-eval: camera %d: %s\n", i, err);
            free(eye);
            return -1;
        }
    }
    free(eye);
    return ev_save_pto(e, &e->rig, "rig.pto", 0);
}

void ev_teardown(ev_ctx *e)
{
    ev_pic_free(&e->cams);
    free(e->photo);
    if (e->cpu)
        pc_cpu_close(e->cpu);
    if (e->scene)
        pc_scene_destroy(e->scene);
    if (e->log)
        fclose(e->log);
}
