/* render_synth.h - a synthetic rig and scene for the render benchmark
 * (panocap-bench --render) and tests/test_render.c: cameras side by side
 * on a row, with distortion, lens shift and small exposure/white-balance
 * differences, and their pictures rendered from one procedural world (a
 * function of direction), so that the overlaps show the same scene.
 */
#ifndef PANOCAP_RENDER_SYNTH_H
#define PANOCAP_RENDER_SYNTH_H

#include "picture.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ncam cameras of cam_w x cam_h, rectilinear, hfov degrees each, yaws
 * -step*(ncam-1)/2 .. +step*(ncam-1)/2, mild distortion (b = -0.01, per
 * camera variations), lens shift, a little pitch and roll; Eev/Er/Eb 0/1/1
 * (the pictures' exposure differences are synth_cameras' business). The
 * panorama: projection proj (PC_PROJ_*), pano_w x pano_h, its hfov the
 * cameras' span, image files "cam<i>.ppm". */
void pc_synth_rig(pc_rig *rig, int ncam, int cam_w, int cam_h, double hfov, double step, int proj, int pano_w,
                  int pano_h);

/* The direction seen by pixel (x, y) of camera c (pc_cam_unproject),
 * world coordinates. */
void pc_synth_pixel_ray(const pc_rig *rig, int c, double x, double y, double ray[3]);

/* The world: linear RGB in [0, 1] of direction ray; detail: the size of
 * its finest features, degrees. */
void pc_synth_scene(const double ray[3], double detail, double rgb[3]);

/* Renders the cameras into dst (host, RGB24 or RGBX32, cam_w x ncam*cam_h,
 * camera i in rows [i*cam_h, (i+1)*cam_h)): V = 255 * L * gain[i][k] (NULL:
 * 1), clamped, rounded; X = 255. */
void pc_synth_cameras(const pc_rig *rig, double detail, const float (*gain)[3], const pc_picture *dst);

#ifdef __cplusplus
}
#endif
#endif
