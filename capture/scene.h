/* scene.h - a simulated stadium as the cameras of a calibrated rig see it:
 * the known scene behind the fake cameras (capture.scene), panocap-scene,
 * and the panorama, virtual-camera and calibration checks that need a
 * ground truth.
 *
 * The world (scene.c) is procedural and deterministic: a football pitch of
 * 105 x 68 m (mown stripes, every line to scale, goals), advertising boards,
 * stands with a crowd, sky and sun; 22 players, a referee and a ball that
 * move as a function of (seed, t) only: the play sweeps from one half to
 * the other (about 47 s a cycle), the ball is passed at 10 to 16 m/s and
 * held 0.3 to 1.5 s by the receiver (a quarter of the longer passes
 * lofted), the players (at most about 9 m/s) keep a 4-4-2 shape that
 * follows the play and close in on where the ball was.
 *
 * Coordinates: metres, origin at the centre spot, x along the touchlines
 * (right as the rig sees it), y across the pitch (away from the rig), z up.
 * The rig stands on the halfway line 30 m behind the near touchline, 10 m
 * up (PC_SCENE_RIG_*). Its world frame (camera_model.h: X right, Y up,
 * Z forward) is the scene's (x, z, y) seen from there: yaw 0, pitch 0
 * looks horizontally across the pitch over the centre spot.
 *
 * Rendering (scene_render.c): each pixel's ray (pc_cam_unproject, or an
 * output picture's pc_view_ray) is cast into the scene (scene_trace.c). Textures and
 * lines are box-filtered over the pixel's footprint on the surface; pixels
 * where the surface hit changes (silhouettes, shadow edges, the stands'
 * outline) are supersampled 4x4. The result is the radiance of the scene
 * box-filtered over each pixel, then photometry: a camera's (vignetting,
 * exposure Eev, white balance Er/Eb, response) or the panorama's (its
 * exposure E and output response), as rig/camera_model.h defines them, so
 * that a direct rendering through the panorama's projection is the ground
 * truth a stitched panorama is measured against.
 *
 * The fake cameras (scene_loop.c): every camera's view without the moving
 * objects is rendered once, then a loop of frames in which only the pixels
 * the moving objects (and their shadows) touch are rendered, kept as Bayer
 * patches; a frame is a copy of the background plus its patches.
 *
 * Threads: the render calls use `threads` worker threads of their own
 * (0: one per online CPU) and return when done; a pc_scene is immutable
 * after create and may be shared.
 */
#ifndef PANOCAP_SCENE_H
#define PANOCAP_SCENE_H

#include <stddef.h>
#include <stdint.h>

#include "picture.h" /* pc_cfa, PC_E* */
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rig's position in the scene (metres). */
#define PC_SCENE_RIG_X 0.0
#define PC_SCENE_RIG_Y -64.0
#define PC_SCENE_RIG_Z 10.0

typedef struct pc_scene pc_scene;

/* The scenes there are, NULL-terminated ("stadium"). */
extern const char *const pc_scene_names[];

/* A scene by name; seed picks the motion (the same seed, the same match).
 * PC_EINVAL naming the known scenes when name is not one of them. */
int pc_scene_create(pc_scene **out, const char *name, uint64_t seed, char *err, size_t errlen);
void pc_scene_destroy(pc_scene *s);

/* --- what moves -------------------------------------------------------- */

typedef enum pc_scene_kind {
    PC_SCENE_BALL = 0,
    PC_SCENE_PLAYER = 1,
    PC_SCENE_GOALKEEPER = 2,
    PC_SCENE_REFEREE = 3,
} pc_scene_kind;

typedef struct pc_scene_object {
    pc_scene_kind kind;
    int team;          /* 0 defends the goal at x < 0, 1 the other; -1 ball, referee */
    int number;        /* 1 (goalkeeper) .. 11; 0 ball, referee */
    double x, y, z;    /* ball: its centre; people: the ground point below their centre */
    double vx, vy, vz; /* velocity, m/s */
    double radius;     /* ball radius, people's bounding radius about (x, y, height/2) */
    double height;     /* people: head top above the ground; ball: 2 * radius */
} pc_scene_object;

#define PC_SCENE_MAX_OBJECTS 32
/* The moving objects at time t (seconds): out[0] is the ball, then team 0
 * (goalkeeper first), team 1, the referee. Returns their count (24). */
int pc_scene_objects(const pc_scene *s, double t, pc_scene_object *out, int max);
const char *pc_scene_kind_name(pc_scene_kind k);

/* The direction from the rig to scene point p, in the rig's world frame
 * (camera_model.h; not normalised): pc_cam_project / pc_view_project of
 * it is where p appears. */
void pc_scene_ray_to(const double p[3], float ray[3]);

/* --- rendering --------------------------------------------------------- */

/* Whose pixels are rendered: a camera of the rig (its lens and its
 * photometry) or an output picture (a view model, with the panorama's
 * photometry). Plain data; fill it with pc_scene_eye_camera/_view. */
typedef struct pc_scene_eye {
    int is_view;       /* 0: camera (cam, vig), 1: output picture (view) */
    pc_cam_model cam;
    pc_view_model view;
    pc_vig_model vig;  /* cameras only */
    float gain[3];     /* linear radiance x gain before the response: camera
                        * 2^-Eev * (Er, 1, Eb); output picture 2^-E */
    float response[PC_RIG_RESPONSE_KNOTS]; /* linear [0,1] -> value [0,1] */
    int w, h;
} pc_scene_eye;

/* Camera i of rig (the .pto's i line), w x h of that line. */
void pc_scene_eye_camera(const pc_rig *rig, int i, pc_scene_eye *out);
/* Output picture v with the photometry of rig's p line (exposure E, the
 * response of image 0, or linear for R1); rig NULL: E 0 and the default
 * camera response. */
void pc_scene_eye_view(const pc_view_model *v, const pc_rig *rig, pc_scene_eye *out);

/* The unit direction (rig world frame, camera_model.h) that pixel (x, y)
 * of eye sees: pc_cam_unproject or pc_view_ray, normalised. 0 where the
 * pixel sees nothing (past a fisheye's field or the distortion's fold). */
int pc_scene_eye_ray(const pc_scene_eye *e, float x, float y, float ray[3]);

/* Shrinks rig by k >= 1: camera sizes (rounded to even), lens shifts,
 * canvas and crops divided by k, angles kept (small rigs for tests). */
void pc_scene_rig_scale(pc_rig *rig, double k);

enum {
    PC_SCENE_STATIC = 1,    /* leave the moving objects (and their shadows) out */
    PC_SCENE_BALL_ONLY = 2, /* of the moving objects, the ball alone */
};

/* Renders the rectangle x0, y0, w x h of eye's picture at time t into rgb
 * (packed 8-bit R,G,B; pixel (x0, y0) at rgb, rows pitch bytes apart).
 * threads 0: one per online CPU. 0, or PC_EINVAL / PC_ENOMEM with err. */
int pc_scene_render(const pc_scene *s, const pc_scene_eye *eye, double t, int flags, int threads,
                    int x0, int y0, int w, int h, uint8_t *rgb, size_t pitch, char *err, size_t errlen);

/* --- the fake cameras' frames (scene_loop.c) --------------------------- */

typedef struct pc_scene_loop pc_scene_loop;

/* Renders what cameras 0..ncam-1 of rig see (each rig.cam[i].w x .h),
 * mosaiced with pattern cfa: a background per camera, then the frames of
 * `seconds` of the match at fps (at least 2). Played forwards, then
 * backwards, then forwards again, so the motion never jumps. threads 0:
 * one per online CPU. */
int pc_scene_loop_create(pc_scene_loop **out, const pc_scene *s, const pc_rig *rig, int ncam,
                         pc_cfa cfa, double fps, double seconds, int threads, char *err,
                         size_t errlen);
/* Frame n of camera cam (n: the frame's time in frame periods, the same
 * for every camera of one frame set) into dst (the camera's w x h at
 * pitch). Thread-safe: the loop is read only. */
void pc_scene_loop_fill(const pc_scene_loop *l, int cam, uint64_t n, uint8_t *dst, size_t pitch);
/* The scene time (seconds) frame n shows: pc_scene_objects at that time
 * gives the positions seen in it. */
double pc_scene_loop_time(const pc_scene_loop *l, uint64_t n);

typedef struct pc_scene_loop_info {
    int cameras, width, height; /* camera 0's size */
    double fps;
    int frames;           /* rendered frames (the loop plays 2 * frames - 2) */
    size_t bytes;         /* memory held: backgrounds and patches */
    double patch_pixels;  /* mean pixels rendered per frame, all cameras */
    double render_s;      /* wall time of pc_scene_loop_create */
} pc_scene_loop_info;
void pc_scene_loop_info_get(const pc_scene_loop *l, pc_scene_loop_info *out);
void pc_scene_loop_destroy(pc_scene_loop *l);

#ifdef __cplusplus
}
#endif
#endif
