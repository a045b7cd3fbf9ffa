/* scene_trace.c - one ray from the rig into the simulated stadium: what it
 * hits (ground, stands, advertising boards, goals, people, ball, sky) and
 * the radiance it brings back (linear RGB, about 0..0.8).
 *
 * Anti-aliasing contract with scene_render.c: every texture here (grass,
 * mown stripes, pitch lines, crowd, boards) is box-filtered over the
 * sample's footprint on the surface (the ray's change per pixel, dx/dy,
 * carried onto the surface), so a sample is already the mean over its
 * pixel wherever the surface stays the same. What cannot be filtered
 * here -- a change of surface (silhouettes, outlines, shadow edges) --
 * shows as a change of the id, and the renderer supersamples there.
 *
 * Intersections are computed relative to each object's centre (closest
 * approach first), so float precision holds at the 100 m distances here.
 * Lighting: ambient sky plus a sun (sc_sun, about 45 degrees up, behind
 * the rig on its left); people, the ball and the goals cast shadows on
 * the ground.
 */
#include "scene_int.h"

#include <math.h>
#include <string.h>

const float sc_sun[3] = {-0.45113f, -0.55138f, 0.70175f};

#define AMB 0.30f
#define SUN 0.70f
#define LINE_HW 0.06f /* half a line's width, 12 cm lines */
#define INF 1e30f

static const float RIG[3] = {(float)PC_SCENE_RIG_X, (float)PC_SCENE_RIG_Y, (float)PC_SCENE_RIG_Z};

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* (fmaxf/fminf are library calls without -ffinite-math-only) */
static inline float maxf(float a, float b)
{
    return a > b ? a : b;
}

static inline float minf(float a, float b)
{
    return a < b ? a : b;
}

static float dot3(const float *a, const float *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Fraction of the window [c - r, c + r] inside [lo, hi] (a box filter of
 * the interval's indicator). */
static float box_cover(float c, float r, float lo, float hi)
{
    if (r < 1e-6f)
        return c >= lo && c < hi ? 1.0f : 0.0f;
    float a = maxf(c - r, lo), b = minf(c + r, hi);
    return b > a ? (b - a) / (2.0f * r) : 0.0f;
}

/* How a point on a plane of normal n moves when the ray d (hit at distance
 * s) changes by dd: s (dd - (dd.n / d.n) d). */
static void footprint(float s, const float *d, const float *dd, const float *n, float *out)
{
    float dn = dot3(d, n);
    float k = fabsf(dn) > 1e-9f ? dot3(dd, n) / dn : 0.0f;
    for (int i = 0; i < 3; i++)
        out[i] = s * (dd[i] - k * d[i]);
}

/* Half the footprint's extent along unit vector u. */
static float half_extent(const float *f1, const float *f2, const float *u)
{
    return 0.5f * (fabsf(dot3(f1, u)) + fabsf(dot3(f2, u)));
}

static uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = a * 0x8da6b343u ^ b * 0xd8163841u ^ c * 0xcb1ab31fu;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    h *= 0x27d4eb2du;
    return h ^ (h >> 16);
}

/* A lattice value in [-1, 1] (a short multiplicative hash: noise only). */
static inline float lattice(uint32_t x, uint32_t y, uint32_t salt)
{
    uint32_t h = (x * 0x9e3779b1u) ^ (y * 0x85ebca77u) ^ salt;
    h *= 0xc2b2ae3du;
    h ^= h >> 15;
    return (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

/* Smooth value noise in [-1, 1], lattice spacing 1. */
static float vnoise(float x, float y, uint32_t salt)
{
    float fx = floorf(x), fy = floorf(y);
    uint32_t ix = (uint32_t)(int)fx, iy = (uint32_t)(int)fy;
    float u = x - fx, v = y - fy;
    u = u * u * (3.0f - 2.0f * u);
    v = v * v * (3.0f - 2.0f * v);
    salt *= 0x27d4eb2du;
    const float a = lattice(ix, iy, salt), b = lattice(ix + 1, iy, salt);
    const float c = lattice(ix, iy + 1, salt), d = lattice(ix + 1, iy + 1, salt);
    return (a + (b - a) * u) * (1 - v) + (c + (d - c) * u) * v;
}

/* --- cell textures (crowd, boards), box-filtered --------------------------- */

typedef void (*cell_fn)(uint32_t which, int i, int j, float rgb[3]);

/* The texture of cells cu x cv (fn gives cell (i, j)'s colour) averaged
 * over the window u +- ru, v +- rv: at most 2 x 2 cells while the window
 * is under half a cell; mean beyond that (seen from too far to resolve). */
static void cells_filtered(cell_fn fn, uint32_t which, float u, float v, float ru, float rv, float cu,
                           float cv, const float *mean, float out[3])
{
    float x = u / cu, y = v / cv, rx = ru / cu, ry = rv / cv;
    if (rx >= 0.5f || ry >= 0.5f) {
        memcpy(out, mean, 3 * sizeof *out);
        return;
    }
    float fxf = floorf(x), fyf = floorf(y);
    int i = (int)fxf, j = (int)fyf, i2 = i, j2 = j;
    float fx = x - fxf, fy = y - fyf, wi = 0.0f, wj = 0.0f;
    if (rx > 0.0f && fx < rx)
        i2 = i - 1, wi = (rx - fx) / (2.0f * rx);
    else if (rx > 0.0f && fx + rx > 1.0f)
        i2 = i + 1, wi = (fx + rx - 1.0f) / (2.0f * rx);
    if (ry > 0.0f && fy < ry)
        j2 = j - 1, wj = (ry - fy) / (2.0f * ry);
    else if (ry > 0.0f && fy + ry > 1.0f)
        j2 = j + 1, wj = (fy + ry - 1.0f) / (2.0f * ry);
    float c[3];
    fn(which, i, j, c);
    float w = (1 - wi) * (1 - wj);
    for (int k = 0; k < 3; k++)
        out[k] = w * c[k];
    if (wi > 0.0f) {
        fn(which, i2, j, c);
        for (int k = 0; k < 3; k++)
            out[k] += wi * (1 - wj) * c[k];
    }
    if (wj > 0.0f) {
        fn(which, i, j2, c);
        for (int k = 0; k < 3; k++)
            out[k] += (1 - wi) * wj * c[k];
    }
    if (wi > 0.0f && wj > 0.0f) {
        fn(which, i2, j2, c);
        for (int k = 0; k < 3; k++)
            out[k] += wi * wj * c[k];
    }
}

/* Crowd: seats 0.5 m wide, rows of 0.9 m along the slope (the upper half
 * the people, the lower half the step), an aisle every 26 seats, a
 * walkway at row 17. */
static void crowd_cell(uint32_t stand, int i, int j, float rgb[3])
{
    static const float clothes[12][3] = {
        {0.45f, 0.05f, 0.05f}, {0.05f, 0.08f, 0.40f}, {0.55f, 0.55f, 0.52f}, {0.04f, 0.04f, 0.04f},
        {0.50f, 0.40f, 0.05f}, {0.08f, 0.25f, 0.08f}, {0.30f, 0.18f, 0.10f}, {0.35f, 0.35f, 0.38f},
        {0.50f, 0.12f, 0.25f}, {0.10f, 0.30f, 0.45f}, {0.55f, 0.25f, 0.05f}, {0.20f, 0.20f, 0.22f},
    };
    int row = j >> 1;
    int seat = i % 26;
    if (seat < 0)
        seat += 26;
    if (j < 0 || row == 17 || seat == 25) { /* walkway, aisle */
        rgb[0] = rgb[1] = 0.20f;
        rgb[2] = 0.19f;
        return;
    }
    if (j & 1) { /* the step below the row */
        rgb[0] = rgb[1] = 0.07f;
        rgb[2] = 0.08f;
        return;
    }
    uint32_t h = hash3(stand, (uint32_t)row, (uint32_t)i);
    if (h % 100 < 15) { /* empty seat */
        rgb[0] = 0.05f, rgb[1] = 0.09f, rgb[2] = 0.25f;
        return;
    }
    const float *c = clothes[(h >> 8) % 12];
    float k = 0.6f + 0.4f * (float)((h >> 16) & 255) / 255.0f;
    for (int q = 0; q < 3; q++)
        rgb[q] = c[q] * k;
}
static const float crowd_mean[3] = {0.16f, 0.13f, 0.14f};

/* Advertising boards (LED, emissive): panels of 8 m, each a colour and a
 * word of blocky letters (cells 12.5 x 15 cm, 4 x 4 per letter). */
static void board_cell(uint32_t board, int i, int j, float rgb[3])
{
    static const float bg[6][3] = {
        {0.50f, 0.02f, 0.02f}, {0.02f, 0.07f, 0.38f}, {0.48f, 0.42f, 0.02f},
        {0.02f, 0.22f, 0.05f}, {0.03f, 0.03f, 0.03f}, {0.52f, 0.52f, 0.50f},
    };
    static const float fg[6][3] = {
        {0.60f, 0.60f, 0.58f}, {0.55f, 0.50f, 0.03f}, {0.02f, 0.02f, 0.10f},
        {0.60f, 0.60f, 0.58f}, {0.55f, 0.28f, 0.02f}, {0.45f, 0.02f, 0.02f},
    };
    int panel = i >> 6, col = i & 63;
    uint32_t h = hash3(board, (uint32_t)panel, 77);
    int b = (int)(h % 6);
    const float *c = bg[b];
    if (j >= 1 && j <= 4 && col >= 6 && col < 56) {
        int letter = (col - 6) / 5, lc = (col - 6) % 5;
        uint32_t bits = hash3(board * 131u + (uint32_t)panel, (uint32_t)letter, 99) & 0xffffu;
        if (lc < 4 && ((bits >> ((j - 1) * 4 + lc)) & 1u))
            c = fg[b];
    }
    memcpy(rgb, c, 3 * sizeof *rgb);
}
static const float board_mean[3] = {0.30f, 0.22f, 0.15f};

/* --- the ground ------------------------------------------------------------- */

/* Box-filtered fraction of dark mown stripes (5.25 m, across the pitch)
 * over x +- r. */
static float stripes_dark(float x, float r)
{
    const float P = 10.5f, H = 5.25f;
    float u = x + SC_HALF_LENGTH;
    if (r < 1e-6f) {
        float m = u - P * floorf(u / P);
        return m >= H ? 1.0f : 0.0f;
    }
    float a = u - r, b = u + r;
    float ia = floorf(a / P) * H + maxf(0.0f, a - P * floorf(a / P) - H);
    float ib = floorf(b / P) * H + maxf(0.0f, b - P * floorf(b / P) - H);
    return (ib - ia) / (2.0f * r);
}

/* Coverage of the pitch markings at (x, y): the lines, arcs and spots,
 * each box-filtered over the footprint (f1, f2: ground vectors), their
 * union taken as the largest. The markings are symmetric in x and y, so
 * the point and the footprint are folded into the first quadrant. */
static float line_cover(float x, float y, const float *f1, const float *f2)
{
    float ax = fabsf(x), ay = fabsf(y);
    if (ax > SC_HALF_LENGTH + 1.5f || ay > SC_HALF_WIDTH + 1.5f)
        return 0.0f;
    const float sx = x < 0 ? -1.0f : 1.0f, sy = y < 0 ? -1.0f : 1.0f;
    const float g1[3] = {f1[0] * sx, f1[1] * sy, 0}, g2[3] = {f2[0] * sx, f2[1] * sy, 0};
    const float ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
    const float rx = half_extent(g1, g2, ex), ry = half_extent(g1, g2, ey);
    const float L = SC_HALF_LENGTH, W = SC_HALF_WIDTH, hw = LINE_HW;
    float c = 0.0f;
    /* lines along x: (y, x from, x to) */
    static const float hl[3][3] = {{34.0f, -52.5f, 52.5f}, {20.16f, 36.0f, 52.5f}, {9.16f, 47.0f, 52.5f}};
    for (int k = 0; k < 3; k++)
        c = maxf(c, box_cover(ay, ry, hl[k][0] - hw, hl[k][0] + hw) *
                         box_cover(ax, rx, hl[k][1] - hw, hl[k][2] + hw));
    /* lines along y: (x, y from, y to) */
    static const float vl[4][3] = {{52.5f, -34.0f, 34.0f}, {0.0f, -34.0f, 34.0f},
                                   {36.0f, -20.16f, 20.16f}, {47.0f, -9.16f, 9.16f}};
    for (int k = 0; k < 4; k++)
        c = maxf(c, box_cover(ax, rx, vl[k][0] - hw, vl[k][0] + hw) *
                         box_cover(ay, ry, vl[k][1] - hw, vl[k][2] + hw));
    /* circles (centre x, y, radius) and spots */
    static const float circ[5][3] = {{0.0f, 0.0f, 9.15f}, {41.5f, 0.0f, 9.15f}, {52.5f, 34.0f, 1.0f},
                                     {0.0f, 0.0f, 0.0f}, {41.5f, 0.0f, 0.0f}};
    for (int k = 0; k < 5; k++) {
        float dx = ax - circ[k][0], dy = ay - circ[k][1];
        float d = sqrtf(dx * dx + dy * dy);
        if (fabsf(d - circ[k][2]) > 2.0f)
            continue;
        float n[3] = {d > 1e-6f ? dx / d : 1.0f, d > 1e-6f ? dy / d : 0.0f, 0.0f};
        float rn = half_extent(g1, g2, n), cov;
        if (k < 3)
            cov = box_cover(d - circ[k][2], rn, -hw, hw);
        else
            cov = box_cover(d, rn, -0.11f, 0.11f); /* spots, 22 cm */
        if (k == 1) /* penalty arc: outside the penalty area only */
            cov *= box_cover(ax, rx, -1e9f, 36.0f);
        if (k == 2) /* corner arc: inside the pitch */
            cov *= box_cover(ax, rx, -1e9f, L) * box_cover(ay, ry, -1e9f, W);
        c = maxf(c, cov);
    }
    return c;
}

static void ground_albedo(float x, float y, const float *f1, const float *f2, float out[3])
{
    const float ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
    const float rx = half_extent(f1, f2, ex), ry = half_extent(f1, f2, ey);
    const float rmax = maxf(rx, ry);
    /* grass: broad patches, then finer ones that fade out once the
     * footprint outgrows them (their filtered mean is 0) */
    float n = 1.0f + 0.08f * vnoise(x * (1.0f / 6.0f), y * (1.0f / 6.0f), 1);
    const float a2 = 0.06f * clampf(1.0f - rmax / 0.8f, 0, 1), a3 = 0.07f * clampf(1.0f - rmax / 0.2f, 0, 1);
    if (a2 > 0.0f)
        n += a2 * vnoise(x * (1.0f / 1.7f), y * (1.0f / 1.7f), 2);
    if (a3 > 0.0f)
        n += a3 * vnoise(x * (1.0f / 0.45f), y * (1.0f / 0.45f), 3);
    float inside = box_cover(x, rx, -SC_HALF_LENGTH, SC_HALF_LENGTH) * box_cover(y, ry, -SC_HALF_WIDTH, SC_HALF_WIDTH);
    float k = inside * (1.0f - 0.16f * stripes_dark(x, rx)) + (1.0f - inside) * 0.93f;
    static const float grass[3] = {0.07f, 0.20f, 0.05f}, track[3] = {0.16f, 0.07f, 0.05f};
    static const float white[3] = {0.70f, 0.70f, 0.68f};
    float apron = box_cover(x, rx, -56.5f, 56.5f) * box_cover(y, ry, -1e9f, 38.0f);
    float lc = line_cover(x, y, f1, f2);
    for (int i = 0; i < 3; i++) {
        float g = grass[i] * n * k;
        g = apron * g + (1.0f - apron) * track[i];
        out[i] = (1.0f - lc) * g + lc * white[i];
    }
}

/* --- intersections ---------------------------------------------------------- */

/* Ray o + t d against an upright spheroid (p): distance t or INF; the
 * closest approach first, in the spheroid's own frame. */
static float hit_prim(const sc_prim *p, const float *o, const float *d)
{
    const float q[3] = {o[0] - p->c[0], o[1] - p->c[1], o[2] - p->c[2]};
    const float A = (d[0] * d[0] + d[1] * d[1]) * p->ia2 + d[2] * d[2] * p->ic2;
    const float B = (q[0] * d[0] + q[1] * d[1]) * p->ia2 + q[2] * d[2] * p->ic2;
    const float tc = -B / A;
    const float m[3] = {q[0] + tc * d[0], q[1] + tc * d[1], q[2] + tc * d[2]};
    const float f = (m[0] * m[0] + m[1] * m[1]) * p->ia2 + m[2] * m[2] * p->ic2;
    if (f > 1.0f)
        return INF;
    float t = tc - sqrtf((1.0f - f) / A);
    return t > 1e-4f ? t : INF;
}

/* Does the ray pass within r of point c (ahead of o)? */
static int near_ray(const float *o, const float *d, const float *c, float r)
{
    const float w[3] = {c[0] - o[0], c[1] - o[1], c[2] - o[2]};
    float tc = dot3(w, d);
    if (tc < -r)
        return 0;
    const float m[3] = {w[0] - tc * d[0], w[1] - tc * d[1], w[2] - tc * d[2]};
    return dot3(m, m) <= r * r;
}

/* Cylinder of radius r about an axis along x (axis 0), y (1) or z (2)
 * through point c, from lo to hi along the axis: distance or INF. */
static float hit_cyl(const float *o, const float *d, int axis, const float *c, float r, float lo, float hi)
{
    int a = axis == 0 ? 1 : 0, b = axis == 2 ? 1 : 2;
    float qa = o[a] - c[a], qb = o[b] - c[b];
    float A = d[a] * d[a] + d[b] * d[b];
    if (A < 1e-12f)
        return INF;
    float tc = -(qa * d[a] + qb * d[b]) / A;
    float ma = qa + tc * d[a], mb = qb + tc * d[b];
    float f = r * r - (ma * ma + mb * mb);
    if (f < 0.0f)
        return INF;
    float t = tc - sqrtf(f / A);
    if (t <= 1e-4f)
        return INF;
    float z = o[axis] + t * d[axis];
    return z >= lo && z <= hi ? t : INF;
}

/* The goals: posts (axis z) and crossbars (axis y), 12 cm thick, 7.32 m
 * between the posts, 2.44 m under the bar. part: 0..2 posts/bar. */
static float hit_goals(const float *o, const float *d, int *part, float *axis_c)
{
    float best = INF;
    for (int g = 0; g < 2; g++) {
        const float gx = g ? SC_HALF_LENGTH + LINE_HW : -SC_HALF_LENGTH - LINE_HW;
        const float gc[3] = {gx, 0.0f, 1.25f};
        if (!near_ray(o, d, gc, 4.3f))
            continue;
        for (int k = 0; k < 3; k++) {
            float c[3] = {gx, k == 0 ? -3.72f : k == 1 ? 3.72f : 0.0f, 2.44f};
            float t = k < 2 ? hit_cyl(o, d, 2, c, 0.06f, 0.0f, 2.50f) : hit_cyl(o, d, 1, c, 0.06f, -3.78f, 3.78f);
            if (t < best) {
                best = t;
                *part = k;
                memcpy(axis_c, c, sizeof c);
            }
        }
    }
    return best;
}

/* Is ground point p in a shadow (of the goals or a moving object)? */
static int shadowed(const sc_frame *f, const float *p)
{
    if (fabsf(p[0]) > 48.0f && fabsf(p[1]) < 8.0f) {
        int part;
        float c[3];
        if (hit_goals(p, sc_sun, &part, c) < INF)
            return 1;
    }
    for (int i = 0; i < f->nobj; i++) {
        const sc_obj *o = &f->obj[i];
        if (p[0] < o->sb[0] || p[0] > o->sb[1] || p[1] < o->sb[2] || p[1] > o->sb[3])
            continue;
        for (int k = 0; k < o->nprim; k++)
            if (hit_prim(&o->prim[k], p, sc_sun) < INF)
                return 1;
    }
    return 0;
}

static void sky(const float *d, float rgb[3])
{
    static const float hor[3] = {0.50f, 0.58f, 0.68f}, zen[3] = {0.16f, 0.28f, 0.55f};
    float el = asinf(clampf(d[2], -1, 1));
    float t = sqrtf(clampf(el / 1.2f, 0, 1));
    float az = atan2f(d[0], d[1]);
    float cl = clampf((vnoise(az * 7.0f, el * 16.0f, 9) - 0.2f) / 0.5f, 0, 1) * (1.0f - t);
    for (int i = 0; i < 3; i++) {
        float s = hor[i] + (zen[i] - hor[i]) * t;
        rgb[i] = s + (0.68f - s) * cl * 0.6f;
    }
}

/* --- the trace -------------------------------------------------------------- */

enum { S_NONE, S_GROUND, S_FAR, S_END_R, S_END_L, S_BOARD_FAR, S_BOARD_R, S_BOARD_L, S_GOAL, S_OBJ };

void sc_trace(const sc_frame *f, const float d[3], const float dx[3], const float dy[3], float rgb[3], int *id)
{
    const float *o = RIG, k = SC_STAND_SLOPE;
    float best = INF;
    int what = S_NONE, sub = 0, gpart = 0;
    float gaxis[3] = {0};
    /* ground and the stands: the earliest crossing of z = 0 and the three
     * stand planes (the rig is above all of them) */
    if (d[2] < 0.0f)
        best = -o[2] / d[2], what = S_GROUND;
    const float den[3] = {d[2] - k * d[1], d[2] - k * d[0], d[2] + k * d[0]};
    const float num[3] = {k * (o[1] - SC_STAND_FAR) - o[2], k * (o[0] - SC_STAND_END) - o[2],
                          k * (-o[0] - SC_STAND_END) - o[2]};
    for (int i = 0; i < 3; i++)
        if (den[i] < 0.0f && num[i] / den[i] < best)
            best = num[i] / den[i], what = S_FAR + i;
    if (what >= S_FAR && o[2] + best * d[2] > SC_STAND_TOP)
        best = INF, what = S_NONE; /* over the top of the stand: sky */
    /* boards: 0.9 m high, 4 m behind the touchline and the goal lines */
    if (d[1] > 0.0f) {
        float t = (38.0f - o[1]) / d[1];
        float x = o[0] + t * d[0], z = o[2] + t * d[2];
        if (t < best && fabsf(x) <= 56.5f && z >= 0.0f && z <= 0.9f)
            best = t, what = S_BOARD_FAR;
    }
    if (d[0] != 0.0f) {
        float side = d[0] > 0.0f ? 56.5f : -56.5f;
        float t = (side - o[0]) / d[0];
        float y = o[1] + t * d[1], z = o[2] + t * d[2];
        if (t < best && y >= -40.0f && y <= 38.0f && z >= 0.0f && z <= 0.9f)
            best = t, what = d[0] > 0.0f ? S_BOARD_R : S_BOARD_L;
    }
    {
        float t = hit_goals(o, d, &gpart, gaxis);
        if (t < best)
            best = t, what = S_GOAL;
    }
    for (int i = 0; i < f->nobj; i++) {
        const sc_obj *ob = &f->obj[i];
        if (!near_ray(o, d, ob->bc, ob->br))
            continue;
        for (int q = 0; q < ob->nprim; q++) {
            float t = hit_prim(&ob->prim[q], o, d);
            if (t < best)
                best = t, what = S_OBJ, sub = 4 * i + q;
        }
    }

    const float p[3] = {o[0] + best * d[0], o[1] + best * d[1], o[2] + best * d[2]};
    float f1[3], f2[3], alb[3];
    switch (what) {
    case S_NONE:
        sky(d, rgb);
        *id = SC_ID_SKY;
        return;
    case S_GROUND: {
        static const float n[3] = {0, 0, 1};
        footprint(best, d, dx, n, f1);
        footprint(best, d, dy, n, f2);
        ground_albedo(p[0], p[1], f1, f2, alb);
        int sh = shadowed(f, p);
        float e = AMB + (sh ? 0.0f : SUN * sc_sun[2]);
        for (int i = 0; i < 3; i++)
            rgb[i] = alb[i] * e;
        *id = SC_ID_GROUND | (sh ? SC_ID_SHADOW : 0);
        return;
    }
    case S_FAR:
    case S_END_R:
    case S_END_L: {
        const float c = 1.0f / sqrtf(1.0f + k * k), sn = k * c;
        float n[3], U[3], V[3], u, v;
        if (what == S_FAR) {
            n[0] = 0, n[1] = -sn, n[2] = c;
            U[0] = 1, U[1] = 0, U[2] = 0;
            V[0] = 0, V[1] = c, V[2] = sn;
            u = p[0], v = (p[1] - SC_STAND_FAR) / c;
        } else {
            float s = what == S_END_R ? 1.0f : -1.0f;
            n[0] = -s * sn, n[1] = 0, n[2] = c;
            U[0] = 0, U[1] = s, U[2] = 0;
            V[0] = s * c, V[1] = 0, V[2] = sn;
            u = s * p[1], v = (s * p[0] - SC_STAND_END) / c;
        }
        footprint(best, d, dx, n, f1);
        footprint(best, d, dy, n, f2);
        cells_filtered(crowd_cell, (uint32_t)what, u, v, half_extent(f1, f2, U), half_extent(f1, f2, V),
                       0.5f, 0.45f, crowd_mean, alb);
        float e = AMB + 0.5f * SUN * maxf(0.0f, dot3(n, sc_sun));
        for (int i = 0; i < 3; i++)
            rgb[i] = alb[i] * e;
        *id = SC_ID_STAND;
        return;
    }
    case S_BOARD_FAR:
    case S_BOARD_R:
    case S_BOARD_L: {
        float n[3] = {0, 0, 0}, U[3] = {0, 0, 0};
        static const float V[3] = {0, 0, 1};
        float u;
        if (what == S_BOARD_FAR)
            n[1] = -1, U[0] = 1, u = p[0] + 56.5f;
        else if (what == S_BOARD_R)
            n[0] = -1, U[1] = -1, u = 38.0f - p[1];
        else
            n[0] = 1, U[1] = 1, u = p[1] + 40.0f;
        footprint(best, d, dx, n, f1);
        footprint(best, d, dy, n, f2);
        cells_filtered(board_cell, (uint32_t)what, u, p[2], half_extent(f1, f2, U), half_extent(f1, f2, V),
                       0.125f, 0.15f, board_mean, rgb);
        *id = SC_ID_BOARD;
        return;
    }
    case S_GOAL: {
        float n[3] = {p[0] - gaxis[0], gpart < 2 ? p[1] - gaxis[1] : 0.0f, gpart < 2 ? 0.0f : p[2] - gaxis[2]};
        float l = sqrtf(dot3(n, n));
        float e = AMB + SUN * maxf(0.0f, dot3(n, sc_sun) / (l > 0 ? l : 1));
        for (int i = 0; i < 3; i++)
            rgb[i] = 0.70f * e;
        *id = SC_ID_GOAL;
        return;
    }
    case S_OBJ: {
        const sc_prim *q = &f->obj[sub / 4].prim[sub % 4];
        float n[3] = {(p[0] - q->c[0]) * q->ia2, (p[1] - q->c[1]) * q->ia2, (p[2] - q->c[2]) * q->ic2};
        float l = sqrtf(dot3(n, n));
        float e = AMB + SUN * maxf(0.0f, dot3(n, sc_sun) / (l > 0 ? l : 1));
        for (int i = 0; i < 3; i++)
            rgb[i] = q->albedo[i] * e;
        *id = SC_ID_OBJECT + 4 * f->obj[sub / 4].gid + sub % 4;
        return;
    }
    }
}
