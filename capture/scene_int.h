/* scene_int.h - internals shared by the scene's world (scene.c), its
 * renderer (scene_render.c) and the fake cameras' loop (scene_loop.c).
 * Not installed, not for callers: scene.h is the API. */
#ifndef PANOCAP_SCENE_INT_H
#define PANOCAP_SCENE_INT_H

#include "scene.h"

/* One spheroid of a moving object: (x-cx)^2/a^2 + (y-cy)^2/a^2 +
 * (z-cz)^2/c^2 = 1 (people are upright, the ball a sphere). */
typedef struct sc_prim {
    float c[3];
    float ia2, ic2; /* 1/a^2, 1/c^2 */
    float albedo[3];
} sc_prim;

/* A moving object as the tracer sees it: its spheroids, a bounding sphere
 * and an axis-aligned bounding box around them, and the box's shadow on
 * the ground: the 8 corners pushed along the sun onto z = 0 (their convex
 * hull holds the shadow) and the rectangle around them. */
typedef struct sc_obj {
    float bc[3], br;      /* bounding sphere */
    float lo[3], hi[3];   /* bounding box */
    float shadow[8][2];   /* the box's corners along the sun on z = 0 */
    float sb[4];          /* their x min, x max, y min, y max */
    int nprim;
    int gid;              /* its index in pc_scene_objects (the surface id) */
    sc_prim prim[3];
} sc_obj;

/* The moving part of the scene at one time. */
typedef struct sc_frame {
    int nobj;
    sc_obj obj[PC_SCENE_MAX_OBJECTS];
} sc_frame;

/* Surface ids of a sample: pixels whose neighbours hit another id are
 * supersampled. Objects: SC_ID_OBJECT + 4 * object + primitive. */
enum {
    SC_ID_SKY = 1,
    SC_ID_GROUND = 2,
    SC_ID_STAND = 3,
    SC_ID_BOARD = 4,
    SC_ID_GOAL = 5,
    SC_ID_SHADOW = 1 << 8, /* or-ed into SC_ID_GROUND */
    SC_ID_OBJECT = 1 << 10,
};

struct pc_scene {
    uint64_t seed;
    double phase[8];           /* the play's sweep */
    double wob[PC_SCENE_MAX_OBJECTS][4]; /* per person: wobble periods and phases */
    float skin[PC_SCENE_MAX_OBJECTS][3];
};

/* The world's fixed parts. */
#define SC_HALF_LENGTH 52.5f
#define SC_HALF_WIDTH 34.0f
#define SC_STAND_FAR 44.0f   /* y of the far stand's foot */
#define SC_STAND_END 62.0f   /* |x| of the end stands' feet */
#define SC_STAND_TOP 22.0f   /* z of the stands' top edge */
#define SC_STAND_SLOPE 0.57735027f /* tan 30 degrees */

/* Unit vector towards the sun. */
extern const float sc_sun[3];

/* The moving objects at t, ready to trace (nobj 0 with PC_SCENE_STATIC). */
void sc_frame_build(const pc_scene *s, double t, int flags, sc_frame *f);

/* Radiance (linear RGB) and surface id seen along unit direction d from
 * the rig; dx, dy: how d changes from one pixel to the next (the
 * footprint the textures are filtered over). */
void sc_trace(const sc_frame *f, const float d[3], const float dx[3], const float dy[3],
              float rgb[3], int *id);

/* Into out, the objects of f that can be hit or cast a shadow along rays
 * within angle `cone` (radians) of unit direction axis. */
void sc_frame_cull(const sc_frame *f, const float axis[3], float cone, sc_frame *out);

/* Unit direction (scene frame) of eye pixel (x, y); 0 where it has none. */
int sc_eye_ray(const pc_scene_eye *e, float x, float y, float d[3]);

/* Renders rect x0, y0, w x h of eye with frame f into rgb (one thread). */
int sc_render_rect(const sc_frame *f, const pc_scene_eye *e, int x0, int y0, int w, int h,
                   uint8_t *rgb, size_t pitch);

int sc_threads(int threads); /* 0 -> online CPUs (at most 64) */
/* worker(arg) on min(sc_threads(threads), jobs) threads, this one among
 * them; returns when all have returned (they share the jobs themselves). */
void sc_run_workers(int threads, int jobs, void *(*worker)(void *), void *arg);

#endif
