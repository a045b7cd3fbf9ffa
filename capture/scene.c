/* scene.c - the simulated stadium's match: who is where at time t, as a
 * pure function of the seed and t (no state, no integration: any time can
 * be asked for, in any order, from any thread), and the moving objects
 * turned into the spheroids the tracer (scene_trace.c) intersects.
 *
 * The play: a centre point sweeps between the halves (x about +-35 m,
 * periods 47 s and 17 s) and across (y, 29 s and 7.7 s). The ball is
 * passed between points within 12 m of the play centre: a pass rolls at
 * 10 to 16 m/s on average (1.5 times that as it leaves, slowing to a stop;
 * one in four passes over 12 m is lofted, up to 15 % of its length high,
 * at a constant speed), then the receiver holds it 0.3 to 1.5 s. The
 * sequence restarts every 60 s from a point of its own (the last pass of
 * each minute goes there), so finding the pass at t takes at most one
 * minute's passes. Each team keeps a 4-4-2 block around the play centre
 * (team 0 attacks +x), every person wobbles on slow sines, and those near
 * the ball close in on where it was over the last 3 s (so nobody runs
 * with the speed of a pass).
 */
#include "scene_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pc_scene_names[] = {"stadium", NULL};

static const double TAU = 6.283185307179586;
#define BALL_R 0.11
#define ANCHOR 60.0 /* s: the pass sequence restarts */
#define PERSON_HEIGHT 1.84
#define N_OBJECTS 24

/* splitmix64: the scene's only source of randomness, hashed from the seed
 * and an index, so every value is a function of (seed, what, k). */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double hash01(uint64_t seed, uint64_t what, uint64_t k)
{
    return (double)(mix64(seed ^ mix64(what * 0x100000001b3ull + k)) >> 11) / 9007199254740992.0;
}

int pc_scene_create(pc_scene **out, const char *name, uint64_t seed, char *err, size_t errlen)
{
    *out = NULL;
    if (!name || strcmp(name, "stadium") != 0) {
        if (err && errlen)
            snprintf(err, errlen, "scene '%s' is not known (scenes: stadium)", name ? name : "");
        return PC_EINVAL;
    }
    pc_scene *s = calloc(1, sizeof *s);
    if (!s) {
        if (err && errlen)
            snprintf(err, errlen, "scene: out of memory");
        return PC_ENOMEM;
    }
    s->seed = seed;
    for (int i = 0; i < 8; i++)
        s->phase[i] = TAU * hash01(seed, 1, (uint64_t)i);
    for (int i = 0; i < PC_SCENE_MAX_OBJECTS; i++) {
        s->wob[i][0] = 6.0 + 8.0 * hash01(seed, 2, (uint64_t)i);
        s->wob[i][1] = 6.0 + 8.0 * hash01(seed, 3, (uint64_t)i);
        s->wob[i][2] = TAU * hash01(seed, 4, (uint64_t)i);
        s->wob[i][3] = TAU * hash01(seed, 5, (uint64_t)i);
        double k = 0.6 + 0.5 * hash01(seed, 6, (uint64_t)i); /* skin tones */
        s->skin[i][0] = (float)(0.42 * k);
        s->skin[i][1] = (float)(0.25 * k);
        s->skin[i][2] = (float)(0.15 * k);
    }
    *out = s;
    return 0;
}

void pc_scene_destroy(pc_scene *s)
{
    free(s);
}

const char *pc_scene_kind_name(pc_scene_kind k)
{
    switch (k) {
    case PC_SCENE_BALL: return "ball";
    case PC_SCENE_PLAYER: return "player";
    case PC_SCENE_GOALKEEPER: return "goalkeeper";
    case PC_SCENE_REFEREE: return "referee";
    }
    return "?";
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The play's centre at t. */
static void play_centre(const pc_scene *s, double t, double *cx, double *cy)
{
    *cx = 30.0 * sin(TAU * t / 47.0 + s->phase[0]) + 5.0 * sin(TAU * t / 17.0 + s->phase[1]);
    *cy = 12.0 * sin(TAU * t / 29.0 + s->phase[2]) + 5.0 * sin(TAU * t / 7.7 + s->phase[3]);
}

/* A point within 12 m of the play centre at time t (hash stream what, k). */
static void near_play(const pc_scene *s, double t, uint64_t what, uint64_t k, double *x, double *y)
{
    double cx, cy;
    play_centre(s, t, &cx, &cy);
    double r = 12.0 * sqrt(hash01(s->seed, what, k)), a = TAU * hash01(s->seed, what + 1, k);
    *x = clampd(cx + r * cos(a), -SC_HALF_LENGTH + 1.5, SC_HALF_LENGTH - 1.5);
    *y = clampd(cy + r * sin(a), -SC_HALF_WIDTH + 1.5, SC_HALF_WIDTH - 1.5);
}

/* The ball at t: the minute's passes walked from its start. */
static void ball_at(const pc_scene *s, double t, double p[3])
{
    const int64_t m = (int64_t)floor(t / ANCHOR);
    const double t0 = (double)m * ANCHOR, t_end = t0 + ANCHOR;
    double ax, ay, tau = t0;
    near_play(s, t0, 20, (uint64_t)m, &ax, &ay); /* where the minute starts */
    for (uint64_t k = 0;; k++) {
        const uint64_t key = (uint64_t)m * 1000 + k;
        double bx, by, v = 10.0 + 6.0 * hash01(s->seed, 22, key);
        near_play(s, tau + 1.5, 24, key, &bx, &by);
        double dist = hypot(bx - ax, by - ay), travel = fmax(dist / v, 0.3);
        double hold = 0.3 + 1.2 * hash01(s->seed, 26, key);
        int last = tau + travel + hold > t_end - 2.0;
        if (last) { /* to where the next minute starts, arriving by then */
            near_play(s, t_end, 20, (uint64_t)(m + 1), &bx, &by);
            dist = hypot(bx - ax, by - ay);
            travel = fmin(fmax(dist / v, 0.3), t_end - tau);
            hold = t_end - tau - travel;
        }
        if (t < tau + travel + hold || last) {
            const double u = clampd((t - tau) / travel, 0.0, 1.0);
            const int lofted = hash01(s->seed, 27, key) < 0.25 && dist > 12.0;
            const double f = lofted ? u : 1.0 - pow(1.0 - u, 1.5);
            p[0] = ax + (bx - ax) * f;
            p[1] = ay + (by - ay) * f;
            p[2] = BALL_R + (lofted ? 4.0 * 0.15 * dist * u * (1.0 - u) : 0.0);
            return;
        }
        tau += travel + hold;
        ax = bx;
        ay = by;
    }
}

/* Where the ball was over the last 3 s (a triangle-weighted mean of 13
 * samples): what the people close in on. */
static void ball_recent(const pc_scene *s, double t, double p[2])
{
    double sx = 0, sy = 0, sw = 0;
    for (int j = 0; j < 13; j++) {
        double b[3], w = 13.0 - j;
        ball_at(s, t - 0.25 * j, b);
        sx += w * b[0], sy += w * b[1], sw += w;
    }
    p[0] = sx / sw;
    p[1] = sy / sw;
}

/* 4-4-2 for the team attacking +x: depth behind/ahead of the block centre
 * and lateral position; index 0 is the goalkeeper. */
static const double formation[11][2] = {
    {0, 0}, {-16, -22}, {-16, -8}, {-16, 8}, {-16, 22},
    {0, -24}, {0, -8}, {0, 8}, {0, 24}, {12, -7}, {12, 7},
};

static void person_at(const pc_scene *s, int idx, double t, const double ball[2], double p[2])
{
    double cx, cy;
    play_centre(s, t, &cx, &cy);
    const double *w = s->wob[idx];
    double wx = 1.5 * sin(TAU * t / w[0] + w[2]), wy = 1.5 * sin(TAU * t / w[1] + w[3]);
    double fx, fy;
    if (idx == N_OBJECTS - 1) { /* referee: behind and beside the play */
        fx = cx - 4.0 + wx;
        fy = cy - 9.0 + wy;
    } else {
        int team = (idx - 1) / 11, role = (idx - 1) % 11;
        double dir = team == 0 ? 1.0 : -1.0;
        if (role == 0) { /* goalkeeper: on the line between ball and goal */
            double gx = -dir * 51.0;
            fx = gx + dir * (1.0 + 2.5 * clampd(1.0 - fabs(ball[0] - gx) / 40.0, 0.0, 1.0));
            fy = clampd(ball[1] * 0.15, -3.0, 3.0) + 0.3 * wy;
            p[0] = fx;
            p[1] = fy;
            return;
        }
        double block = clampd(0.7 * cx - dir * 4.0, -28.0, 28.0);
        fx = block + dir * formation[role][0] + wx;
        fy = formation[role][1] * 0.85 + 0.25 * cy + wy;
    }
    /* close in on the ball when near it, stopping short of it */
    double dx = ball[0] - fx, dy = ball[1] - fy, d = hypot(dx, dy);
    double k = 0.55 * exp(-d * d / (2.0 * 9.0 * 9.0));
    if (d > 1e-9) {
        double reach = k * fmax(0.0, d - 0.8) / d;
        fx += dx * reach;
        fy += dy * reach;
    }
    p[0] = clampd(fx, -SC_HALF_LENGTH - 1.5, SC_HALF_LENGTH + 1.5);
    p[1] = clampd(fy, -SC_HALF_WIDTH - 1.5, SC_HALF_WIDTH + 1.5);
}

/* Positions only (velocities are differences of these). */
static void positions(const pc_scene *s, double t, double pos[N_OBJECTS][3])
{
    double recent[2];
    ball_at(s, t, pos[0]);
    ball_recent(s, t, recent);
    for (int i = 1; i < N_OBJECTS; i++) {
        person_at(s, i, t, recent, pos[i]);
        pos[i][2] = 0.0;
    }
}

int pc_scene_objects(const pc_scene *s, double t, pc_scene_object *out, int max)
{
    double p[N_OBJECTS][3], a[N_OBJECTS][3], b[N_OBJECTS][3];
    const double h = 1e-3;
    positions(s, t, p);
    positions(s, t - h, a);
    positions(s, t + h, b);
    int n = max < N_OBJECTS ? max : N_OBJECTS;
    for (int i = 0; i < n; i++) {
        pc_scene_object *o = &out[i];
        memset(o, 0, sizeof *o);
        if (i == 0) {
            o->kind = PC_SCENE_BALL;
            o->team = -1;
            o->radius = BALL_R;
            o->height = 2 * BALL_R;
        } else if (i == N_OBJECTS - 1) {
            o->kind = PC_SCENE_REFEREE;
            o->team = -1;
        } else {
            o->team = (i - 1) / 11;
            o->number = (i - 1) % 11 + 1;
            o->kind = o->number == 1 ? PC_SCENE_GOALKEEPER : PC_SCENE_PLAYER;
        }
        if (i > 0) {
            o->height = PERSON_HEIGHT;
            o->radius = 0.5 * PERSON_HEIGHT + 0.02;
        }
        o->x = p[i][0];
        o->y = p[i][1];
        o->z = p[i][2];
        o->vx = (b[i][0] - a[i][0]) / (2 * h);
        o->vy = (b[i][1] - a[i][1]) / (2 * h);
        o->vz = (b[i][2] - a[i][2]) / (2 * h);
    }
    return N_OBJECTS;
}

void pc_scene_ray_to(const double p[3], float ray[3])
{
    ray[0] = (float)(p[0] - PC_SCENE_RIG_X);
    ray[1] = (float)(p[2] - PC_SCENE_RIG_Z);
    ray[2] = (float)(p[1] - PC_SCENE_RIG_Y);
}

/* --- objects for the tracer ------------------------------------------------ */

static void set_prim(sc_prim *p, double x, double y, double z, double a, double c, const float *rgb)
{
    p->c[0] = (float)x;
    p->c[1] = (float)y;
    p->c[2] = (float)z;
    p->ia2 = (float)(1.0 / (a * a));
    p->ic2 = (float)(1.0 / (c * c));
    memcpy(p->albedo, rgb, sizeof p->albedo);
}

/* Kit colours (linear albedo): shirt, shorts. */
static const float kit[5][2][3] = {
    {{0.50f, 0.03f, 0.03f}, {0.62f, 0.62f, 0.62f}}, /* team 0: red, white shorts */
    {{0.03f, 0.08f, 0.45f}, {0.03f, 0.03f, 0.04f}}, /* team 1: blue, black shorts */
    {{0.62f, 0.52f, 0.03f}, {0.10f, 0.10f, 0.10f}}, /* goalkeeper 0: yellow */
    {{0.60f, 0.20f, 0.02f}, {0.60f, 0.20f, 0.02f}}, /* goalkeeper 1: orange */
    {{0.02f, 0.02f, 0.02f}, {0.02f, 0.02f, 0.02f}}, /* referee: black */
};

void sc_frame_build(const pc_scene *s, double t, int flags, sc_frame *f)
{
    f->nobj = 0;
    if (flags & PC_SCENE_STATIC)
        return;
    double p[N_OBJECTS][3];
    positions(s, t, p);
    static const float ball_albedo[3] = {0.60f, 0.60f, 0.58f};
    for (int i = 0; i < ((flags & PC_SCENE_BALL_ONLY) ? 1 : N_OBJECTS); i++) {
        sc_obj *o = &f->obj[f->nobj++];
        o->gid = i;
        double cz;
        if (i == 0) {
            set_prim(&o->prim[0], p[0][0], p[0][1], p[0][2], BALL_R, BALL_R, ball_albedo);
            o->nprim = 1;
            o->br = (float)(BALL_R + 0.01);
            cz = p[0][2];
        } else {
            int k = i == N_OBJECTS - 1 ? 4 : ((i - 1) % 11 == 0 ? 2 + (i - 1) / 11 : (i - 1) / 11);
            double x = p[i][0], y = p[i][1];
            set_prim(&o->prim[0], x, y, 0.45, 0.17, 0.45, kit[k][1]); /* legs, shorts */
            set_prim(&o->prim[1], x, y, 1.20, 0.22, 0.38, kit[k][0]); /* body, shirt */
            set_prim(&o->prim[2], x, y, 1.72, 0.12, 0.12, s->skin[i]); /* head */
            o->nprim = 3;
            o->br = (float)(0.5 * PERSON_HEIGHT + 0.02);
            cz = 0.5 * PERSON_HEIGHT;
        }
        o->bc[0] = (float)p[i][0];
        o->bc[1] = (float)p[i][1];
        o->bc[2] = (float)cz;
        /* the box: people are spheroids of radius <= 0.22 m up to 1.84 m,
         * the ball a sphere; 1 cm to spare */
        const double hr = i == 0 ? BALL_R + 0.01 : 0.23;
        o->lo[0] = (float)(p[i][0] - hr), o->hi[0] = (float)(p[i][0] + hr);
        o->lo[1] = (float)(p[i][1] - hr), o->hi[1] = (float)(p[i][1] + hr);
        o->lo[2] = (float)(i == 0 ? p[0][2] - hr : 0.0), o->hi[2] = (float)(i == 0 ? p[0][2] + hr : PERSON_HEIGHT + 0.01);
        o->sb[0] = o->sb[2] = 1e30f;
        o->sb[1] = o->sb[3] = -1e30f;
        for (int k = 0; k < 8; k++) {
            const float x = (k & 1) ? o->hi[0] : o->lo[0], y = (k & 2) ? o->hi[1] : o->lo[1];
            const float z = (k & 4) ? o->hi[2] : o->lo[2];
            float *sh = o->shadow[k];
            sh[0] = x - z / sc_sun[2] * sc_sun[0];
            sh[1] = y - z / sc_sun[2] * sc_sun[1];
            o->sb[0] = fminf(o->sb[0], sh[0]), o->sb[1] = fmaxf(o->sb[1], sh[0]);
            o->sb[2] = fminf(o->sb[2], sh[1]), o->sb[3] = fmaxf(o->sb[3], sh[1]);
        }
    }
}

/* Is the sphere (c, r) within angle cone of axis, seen from the rig? */
static int sphere_in_cone(const float *c, float r, const float *axis, float cone)
{
    const float v[3] = {c[0] - (float)PC_SCENE_RIG_X, c[1] - (float)PC_SCENE_RIG_Y, c[2] - (float)PC_SCENE_RIG_Z};
    const float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l <= r)
        return 1;
    float ca = (v[0] * axis[0] + v[1] * axis[1] + v[2] * axis[2]) / l;
    ca = ca > 1.0f ? 1.0f : ca < -1.0f ? -1.0f : ca;
    return acosf(ca) <= cone + asinf(r / l);
}

void sc_frame_cull(const sc_frame *f, const float axis[3], float cone, sc_frame *out)
{
    out->nobj = 0;
    for (int i = 0; i < f->nobj; i++) {
        const sc_obj *o = &f->obj[i];
        const float sc[3] = {0.5f * (o->sb[0] + o->sb[1]), 0.5f * (o->sb[2] + o->sb[3]), 0.0f};
        const float sr = 0.5f * sqrtf((o->sb[1] - o->sb[0]) * (o->sb[1] - o->sb[0]) +
                                      (o->sb[3] - o->sb[2]) * (o->sb[3] - o->sb[2]));
        if (sphere_in_cone(o->bc, o->br, axis, cone) || sphere_in_cone(sc, sr, axis, cone))
            out->obj[out->nobj++] = *o;
    }
}
