/* render_synth.c - the synthetic rig and scene of render_synth.h. */
#include "render_synth.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void pc_synth_rig(pc_rig *rig, int ncam, int cam_w, int cam_h, double hfov, double step, int proj, int pano_w,
                  int pano_h)
{
    memset(rig, 0, sizeof *rig);
    rig->ncam = ncam;
    snprintf(rig->path, sizeof rig->path, "synthetic.pto");
    for (int i = 0; i < ncam; i++) {
        pc_rig_camera *c = &rig->cam[i];
        c->w = cam_w;
        c->h = cam_h;
        c->lens = PC_LENS_RECTILINEAR;
        c->hfov = hfov;
        c->yaw = step * (i - (ncam - 1) / 2.0);
        c->pitch = 0.6 * ((i % 3) - 1);
        c->roll = 0.4 * ((i % 2) ? 1 : -1);
        c->a = 0.0;
        c->b = -0.01 + 0.002 * (i % 3);
        c->c = 0.0;
        c->d = 0.01 * cam_w * ((i % 2) ? 1 : -1);
        c->e = -0.008 * cam_h;
        c->er = c->eb = 1.0;
        c->va = 1.0;
        c->vm = 5;
        snprintf(c->file, sizeof c->file, "cam%d.ppm", i);
        c->line = 3 + i;
    }
    pc_rig_canvas *p = &rig->pano;
    p->proj = proj;
    p->w = pano_w;
    p->h = pano_h;
    p->hfov = step * (ncam - 1) + hfov;
    /* a projection that reaches its widest only at infinity (rectilinear):
     * 10 degrees short of it */
    const pc_proj_desc *pd = pc_proj_get(proj);
    if (pd && pd->max_open && p->hfov >= pd->max_hfov - 10)
        p->hfov = pd->max_hfov - 10;
    p->response = 0;
    p->line = 2;
}

/* The world direction of camera pixel (x, y): camera_model.h's inverse. */
static void model_ray(const pc_cam_model *m, double x, double y, double ray[3])
{
    float r[3] = {0.0f, 0.0f, 1.0f};
    pc_cam_unproject(m, (float)x, (float)y, r);
    for (int i = 0; i < 3; i++)
        ray[i] = r[i];
}

void pc_synth_pixel_ray(const pc_rig *rig, int c, double x, double y, double ray[3])
{
    pc_cam_model m;
    pc_rig_camera_model(rig, c, &m);
    model_ray(&m, x, y, ray);
}

/* Smooth value noise: a hash per lattice point, bilinear between them. */
static double hash01(int i, int j, int k)
{
    unsigned h = (unsigned)i * 73856093u ^ (unsigned)j * 19349663u ^ (unsigned)k * 83492791u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (h & 0xFFFFFF) / 16777215.0;
}

static double noise(double u, double v, int k)
{
    const double fu = floor(u), fv = floor(v), a = u - fu, b = v - fv;
    const int i = (int)fu, j = (int)fv;
    const double t = hash01(i, j, k) * (1 - a) + hash01(i + 1, j, k) * a;
    const double s = hash01(i, j + 1, k) * (1 - a) + hash01(i + 1, j + 1, k) * a;
    return t * (1 - b) + s * b;
}

void pc_synth_scene(const double ray[3], double detail, double rgb[3])
{
    double lon, lat;
    pc_ray_pan_tilt(ray[0], ray[1], ray[2], &lon, &lat);
    const double u = lon / detail, v = lat / detail;
    /* broad colour gradients, two octaves of noise, and a checker of
     * sharp edges every 12 features */
    double base[3] = {0.45 + 0.25 * sin(lon * 0.05 + 0.5), 0.45 + 0.25 * sin(lat * 0.08 + lon * 0.03),
                      0.45 + 0.2 * cos(lon * 0.04 - lat * 0.06)};
    const double checker = ((int)floor(u / 12) + (int)floor(v / 12)) & 1 ? 1.0 : 0.78;
    for (int k = 0; k < 3; k++) {
        double n = 0.22 * (noise(u / 2, v / 2, k) - 0.5) + 0.12 * (noise(u, v, k + 3) - 0.5);
        double l = (base[k] + n) * checker;
        rgb[k] = l < 0.02 ? 0.02 : (l > 0.98 ? 0.98 : l);
    }
}

void pc_synth_cameras(const pc_rig *rig, double detail, const float (*gain)[3], const pc_picture *dst)
{
    const int bpp = dst->fmt == PC_FMT_RGBX32 ? 4 : 3;
    for (int c = 0; c < rig->ncam; c++) {
        const int w = rig->cam[c].w, h = rig->cam[c].h;
        pc_cam_model m;
        pc_rig_camera_model(rig, c, &m);
        for (int y = 0; y < h; y++) {
            uint8_t *row = dst->plane[0] + (size_t)(c * h + y) * dst->pitch[0];
            for (int x = 0; x < w; x++) {
                double ray[3], rgb[3];
                model_ray(&m, x, y, ray);
                pc_synth_scene(ray, detail, rgb);
                for (int k = 0; k < 3; k++) {
                    double v = 255.0 * rgb[k] * (gain ? gain[c][k] : 1.0f) + 0.5;
                    row[bpp * x + k] = (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
                }
                if (bpp == 4)
                    row[4 * x + 3] = 255;
            }
        }
    }
}
