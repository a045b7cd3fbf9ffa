/* rig_model.c - from a read rig (pc_rig, the .pto's numbers) to the float
 * models of camera_model.h that the renderers evaluate per pixel: rotation
 * matrices, focal lengths, distortion, valid areas and output projections.
 * Everything here runs once per rig load or view change, never per frame. */
#include "rig.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const double DEG = 3.14159265358979323846 / 180.0;

/* out = a * b, 3x3 row-major */
static void mat_mul(const double *a, const double *b, double *out)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

/* world <- camera for yaw (turns right), pitch (looks up) and roll
 * (clockwise from behind), degrees: yaw * pitch * roll. */
static void rotation(double yaw, double pitch, double roll, double *m)
{
    const double y = yaw * DEG, p = pitch * DEG, r = roll * DEG;
    const double Y[9] = {cos(y), 0, sin(y), 0, 1, 0, -sin(y), 0, cos(y)};
    const double P[9] = {1, 0, 0, 0, cos(p), sin(p), 0, -sin(p), cos(p)};
    const double Rr[9] = {cos(r), sin(r), 0, -sin(r), cos(r), 0, 0, 0, 1};
    double yp[9];
    mat_mul(Y, P, yp);
    mat_mul(yp, Rr, m);
}

/* The smallest r > 0 where d/dr [r (a r^3 + b r^2 + c r + d)] = 4a r^3 +
 * 3b r^2 + 2c r + d reaches 0 (panotools' correction radius), or 1e30 if
 * it never does for r < 1000 (the image's corners are at r < 2 for any
 * sane aspect). A scan and a bisection: run once per rig. */
static double fold_radius(double a, double b, double c, double d)
{
    double prev = d; /* the derivative at r = 0 */
    for (double r = 1.0 / 64; r < 1000.0; r += 1.0 / 64) {
        double g = ((4 * a * r + 3 * b) * r + 2 * c) * r + d;
        if ((g <= 0) != (prev <= 0)) {
            double lo = r - 1.0 / 64, hi = r;
            for (int k = 0; k < 60; k++) {
                double m = 0.5 * (lo + hi);
                double gm = ((4 * a * m + 3 * b) * m + 2 * c) * m + d;
                if ((gm <= 0) == (prev <= 0))
                    lo = m;
                else
                    hi = m;
            }
            return lo;
        }
        prev = g;
    }
    return 1e30;
}

void pc_rig_camera_model(const pc_rig *rig, int i, pc_cam_model *out)
{
    const pc_rig_camera *c = &rig->cam[i];
    double m[9];
    memset(out, 0, sizeof *out);
    rotation(c->yaw, c->pitch, c->roll, m);
    for (int r = 0; r < 3; r++) /* world -> camera: the transpose */
        for (int k = 0; k < 3; k++)
            out->R[3 * r + k] = (float)m[3 * k + r];
    const double hfov = c->hfov * DEG;
    out->pano = c->lens == PC_LENS_PANORAMIC ? PC_CAM_PANO_CYL : c->lens == PC_LENS_EQUIRECT ? PC_CAM_PANO_EQUI : 0;
    out->fisheye = !out->pano && c->lens != PC_LENS_RECTILINEAR;
    out->f = (float)(out->fisheye || out->pano ? c->w / hfov : (c->w / 2.0) / tan(hfov / 2.0));
    out->rn_inv = (float)(2.0 / (c->w < c->h ? c->w : c->h));
    out->a = (float)c->a;
    out->b = (float)c->b;
    out->c = (float)c->c;
    out->d = (float)(1.0 - c->a - c->b - c->c);
    out->rmax = (float)fold_radius(c->a, c->b, c->c, 1.0 - c->a - c->b - c->c);
    out->sx_d = (float)c->d;
    out->sy_e = (float)c->e;
    out->g_h = (float)(c->g / c->h);
    out->t_w = (float)(c->t / c->w);
    out->cx = (float)((c->w - 1) / 2.0);
    out->cy = (float)((c->h - 1) / 2.0);
    out->w = c->w;
    out->h = c->h;
    const int cropped = c->crop[0] || c->crop[1] || c->crop[2] || c->crop[3];
    /* Hugin's crop modes (SrcPanoImage): a circular fisheye with a crop S
     * keeps the disc inscribed in S, centred at S's left + width/2, radius
     * half S's smaller side (S may pass the image's edges); any other crop
     * is a rectangle, and no crop the whole image. Pixel centres 0 .. w-1
     * (a bilinear sample needs its right/bottom neighbour only where the
     * weight is non-zero). A circular fisheye without S is not masked. */
    out->circle = cropped && c->lens == PC_LENS_FISHEYE_CIRCULAR;
    const int rect = cropped && !out->circle;
    out->x0 = (float)(rect ? c->crop[0] : 0);
    out->x1 = (float)(rect ? c->crop[1] - 1 : c->w - 1);
    out->y0 = (float)(rect ? c->crop[2] : 0);
    out->y1 = (float)(rect ? c->crop[3] - 1 : c->h - 1);
    if (out->circle) {
        const double cw = c->crop[1] - c->crop[0], ch = c->crop[3] - c->crop[2];
        const double r = (cw < ch ? cw : ch) / 2.0;
        out->ccx = (float)(c->crop[0] + cw / 2.0);
        out->ccy = (float)(c->crop[2] + ch / 2.0);
        out->cr2 = (float)(r * r);
    }
}

void pc_rig_vig_model(const pc_rig *rig, int i, pc_vig_model *out)
{
    const pc_rig_camera *c = &rig->cam[i];
    memset(out, 0, sizeof *out);
    /* Hugin corrects vignetting in mode Vm5 only (radial, by division) */
    out->on = c->vm == 5 && !(c->va == 1.0 && c->vb == 0.0 && c->vc == 0.0 && c->vd == 0.0);
    out->va = (float)c->va;
    out->vb = (float)c->vb;
    out->vc = (float)c->vc;
    out->vd = (float)c->vd;
    out->vcx = (float)((c->w - 1) / 2.0 + c->vx);
    out->vcy = (float)((c->h - 1) / 2.0 + c->vy);
    out->vq = (float)(4.0 / ((double)c->w * c->w + (double)c->h * c->h));
}

void pc_rig_output_size(const pc_rig *rig, int *w, int *h)
{
    const pc_rig_canvas *p = &rig->pano;
    const int cropped = p->crop[0] || p->crop[1] || p->crop[2] || p->crop[3];
    *w = cropped ? p->crop[1] - p->crop[0] : p->w;
    *h = cropped ? p->crop[3] - p->crop[2] : p->h;
}

static void identity(float *R)
{
    memset(R, 0, 9 * sizeof *R);
    R[0] = R[4] = R[8] = 1.0f;
}

void pc_rig_panorama_view(const pc_rig *rig, int w, int h, pc_view_model *out)
{
    const pc_rig_canvas *p = &rig->pano;
    int ow, oh;
    pc_rig_output_size(rig, &ow, &oh);
    /* Rendering at w x h instead of ow x oh scales the canvas by w / ow:
     * the same field of view in fewer pixels. */
    const double s = (double)w / ow;
    const double cw = p->w * s, ch = p->h * s, hfov = p->hfov * DEG;
    const int cropped = p->crop[0] || p->crop[1] || p->crop[2] || p->crop[3];
    memset(out, 0, sizeof *out);
    out->proj = p->proj;
    out->f = (float)pc_proj_get(p->proj)->focal(cw, hfov);
    /* In the scaled canvas (pixel centres at integers, its left edge at
     * -0.5) the centre is (cw - 1) / 2 and the crop's first pixel centre
     * is crop * s: its left edge, crop - 0.5 unscaled, is at crop * s - 0.5. */
    out->cx = (float)((cw - 1.0) / 2.0);
    out->cy = (float)((ch - 1.0) / 2.0);
    out->ox = (float)(cropped ? p->crop[0] * s : 0.0);
    out->oy = (float)(cropped ? p->crop[2] * s : 0.0);
    identity(out->R);
    out->rotated = 0;
    out->w = w;
    out->h = h;
}

void pc_rig_rect_view(int w, int h, double hfov, double pan, double tilt, double roll, pc_view_model *out)
{
    double m[9];
    memset(out, 0, sizeof *out);
    out->proj = PC_PROJ_RECTILINEAR;
    out->f = (float)pc_proj_get(PC_PROJ_RECTILINEAR)->focal(w, hfov * DEG);
    out->cx = (float)((w - 1) / 2.0);
    out->cy = (float)((h - 1) / 2.0);
    rotation(pan, tilt, roll, m);
    for (int k = 0; k < 9; k++)
        out->R[k] = (float)m[k];
    out->rotated = pan != 0.0 || tilt != 0.0 || roll != 0.0;
    out->w = w;
    out->h = h;
}

int pc_rig_panorama_source(const pc_rig *rig, int w, int h, pc_rig *out, char *err, size_t errlen)
{
    const pc_rig_canvas *p = &rig->pano;
    int ow, oh;
    pc_rig_output_size(rig, &ow, &oh);
    if (ow < 1 || oh < 1 || p->w < 1 || p->h < 1 || !(p->hfov > 0)) {
        snprintf(err, errlen, "%s:%d: p line: no panorama (canvas %dx%d, output %dx%d, v%g)", rig->path, p->line, p->w,
                 p->h, ow, oh, p->hfov);
        return -1;
    }
    /* panocap's panorama: W wide, H = W oh / ow rounded to an even number */
    const double hx = (double)w * oh / ow;
    if (w < 2 || h < 2 || fabs(h - hx) > 1.0 + 1e-9) {
        snprintf(err, errlen, "%s:%d: p line: the recording is %dx%d, but the rig's panorama is %dx%d (aspect %.4f): "
                 "a panorama %d wide from this rig is %.0f high; is this the rig it was recorded with?", rig->path,
                 p->line, w, h, ow, oh, (double)ow / oh, w, 2 * floor(hx / 2 + 0.5));
        return -1;
    }
    const double s = (double)w / ow, cw = p->w * s, ch = p->h * s, hfov = p->hfov * DEG;
    const int cropped = p->crop[0] || p->crop[1] || p->crop[2] || p->crop[3];
    const double ox = cropped ? p->crop[0] * s : 0.0, oy = cropped ? p->crop[2] * s : 0.0;
    memset(out, 0, sizeof *out);
    out->ncam = 1;
    out->pano = *p;
    snprintf(out->path, sizeof out->path, "%s", rig->path);
    pc_rig_camera *c = &out->cam[0];
    c->w = w;
    c->h = h;
    /* the camera's f over its own w: the canvas's f (pc_rig_panorama_view) */
    if (p->proj == PC_PROJ_RECTILINEAR) {
        c->lens = PC_LENS_RECTILINEAR;
        c->hfov = 2.0 * atan(w / cw * tan(hfov / 2.0)) / DEG;
    } else {
        c->lens = p->proj == PC_PROJ_CYLINDRICAL ? PC_LENS_PANORAMIC : PC_LENS_EQUIRECT;
        c->hfov = p->hfov * w / cw;
    }
    /* the canvas's centre in the picture, (cw - 1) / 2 - ox, against the
     * camera's (w - 1) / 2 */
    c->d = (cw - 1.0) / 2.0 - ox - (w - 1.0) / 2.0;
    c->e = (ch - 1.0) / 2.0 - oy - (h - 1.0) / 2.0;
    c->va = 1.0;
    c->response = 1;
    c->eev = p->exposure;
    c->er = c->eb = 1.0;
    c->line = p->line;
    snprintf(c->file, sizeof c->file, "panorama");
    return 0;
}
