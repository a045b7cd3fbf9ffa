/* camera_model.h - the panotools camera model, per pixel: the one definition
 * of geometry and photometry that every renderer uses (the panorama, the
 * virtual cameras, the simulated rig, the calibration checks), on the host
 * and in CUDA kernels alike (plain inline functions on float, no library
 * calls but sqrtf/atan2f/sinf/cosf/tanf).
 *
 * It is Hugin's model as its renderer `nona` applies it (Hugin 2022.0;
 * pano_trafo agrees with these formulas to 5e-5 px, float arithmetic, over
 * random rigs with every parameter non-zero, tests/test_rig.c).
 * docs/panorama.md derives each step. In short, for an output pixel (x, y):
 *
 *   ray   = view projection^-1 (x, y), world coordinates: X right, Y up,
 *           Z forward (yaw 0, pitch 0); not normalised (the projections'
 *           formulas: projection.h)
 *   cam   = R_c * ray, R_c = (yaw * pitch * roll)^T  (world -> camera)
 *   u, v  = lens projection of cam, pixels from the image centre, v down:
 *           rectilinear  u = f X/Z, v = -f Y/Z,  f = (w/2) / tan(hfov/2)
 *           fisheye      r = f theta (equidistant), f = w / hfov (radians)
 *           panorama     u = f lon, v = -f tan(lat) (cylinder) or -f lat
 *                        (equirectangular), f = w / hfov, lon/lat of cam:
 *                        a recorded panorama seen as a camera (replays)
 *   radial  rho = |u,v| / (min(w,h)/2), s = ((a rho + b) rho + c) rho + d,
 *           d = 1 - a - b - c;  u, v *= s; only up to the first radius
 *           where rho * s(rho) stops growing (beyond, the polynomial folds
 *           back into the image: panotools maps it far outside instead)
 *   shift   u += d_shift, v += e_shift
 *   shear   u' = u + (g/h) v,  v' = v + (t/w) u   (both from the same u, v)
 *   source  sx = (w-1)/2 + u',  sy = (h-1)/2 + v'  (pixel centres at integers)
 *
 * Photometry (Hugin's, checked against nona's float layers, tests/
 * test_rig_photo.c): a camera value V in [0,1] is the camera response of
 * the scene radiance times vignetting, exposure and white balance.
 * Correcting it to the panorama's exposure E (the `p` line's E):
 *   L   = f_c^-1(V) * 2^Eev / (Er, 1, Eb) / vig(x, y) * 2^-E
 *   out = f_o(L)   (f_o: image 0's response, its EMoR curve Ra..Re or
 *                   linear; the identity for p R1; clamped to [0, 1])
 * vig = Va + Vb q + Vc q^2 + Vd q^3, q the squared distance of the source
 * position (x, y) from the image centre + (Vx, Vy) over the squared half
 * diagonal (Vm5 only). f_c^-1 and f_o are tables of 1024 knots over
 * [0, 1], linearly interpolated, built by pc_rig_photometry_build (rig.h)
 * exactly as Hugin builds its lookup tables.
 *
 * The inverses (pc_view_project, pc_cam_unproject) serve the simulated
 * rig's scene renderer and the coverage computations: camera pixel ->
 * world direction -> panorama pixel.
 */
#ifndef PANOCAP_CAMERA_MODEL_H
#define PANOCAP_CAMERA_MODEL_H

#include "projection.h"

#ifdef __CUDACC__
#define PC_RIG_HD __host__ __device__ static inline
#else
#include <math.h>
#define PC_RIG_HD static inline
#endif
/* a / b: on the GPU the two-instruction reciprocal and multiply (the
 * render kernels are bound by instruction issue; div.full takes a range
 * check more), within 2 ulp; elsewhere IEEE division. */
#ifdef __CUDA_ARCH__
#define PC_RIG_DIV(a, b) __fdividef((a), (b))
#else
#define PC_RIG_DIV(a, b) ((a) / (b))
#endif

/* Lens projections of the input images (the .pto `i` line's f codes).
 * PANORAMIC (Hugin's f1, cylindrical) and EQUIRECT (f4) are no lenses: a
 * recorded panorama seen as a camera of the rig (pc_rig_panorama_source,
 * rig.h), re-framed after the fact; the .pto reader refuses them on an
 * `i` line (panocap's cameras have lenses). */
enum {
    PC_LENS_RECTILINEAR = 0,
    PC_LENS_PANORAMIC = 1,
    PC_LENS_FISHEYE_CIRCULAR = 2,
    PC_LENS_FISHEYE_FULL = 3,
    PC_LENS_EQUIRECT = 4,
};
/* Output projections (PC_PROJ_*, the .pto `p` line's f codes) and their
 * formulas: projection.h. */

/* One camera's geometry, derived once per rig (pc_rig_camera_model). */
typedef struct pc_cam_model {
    float R[9];       /* world -> camera, row-major */
    float f;          /* rectilinear: (w/2)/tan(hfov/2); fisheye, panorama: w/hfov */
    int fisheye;      /* 0 rectilinear, 1 equidistant fisheye (pano 0) */
    int pano;         /* 0 a lens (fisheye says which); PC_CAM_PANO_CYL or
                       * PC_CAM_PANO_EQUI: a recorded panorama (a camera at
                       * its canvas's rotation: u = f lon, v = -f tan(lat)
                       * or -f lat; the canvas's crop is the lens shift) */
    float rn_inv;     /* 1 / (min(w,h)/2): radius normalisation */
    float rmax;       /* normalised radius where r * s(r) stops growing (the
                       * polynomial folds back): no source beyond it */
    float a, b, c, d; /* radial polynomial, d = 1 - a - b - c */
    float sx_d, sy_e; /* lens shift d, e (pixels) */
    float g_h, t_w;   /* shear g / h, t / w */
    float cx, cy;     /* (w-1)/2, (h-1)/2 */
    /* valid source area: [x0, x1] x [y0, y1] (the image, or the `i` line's
     * rectangular crop S), and for a circular fisheye with a crop S (Hugin's
     * circular crop) also the disc of centre (ccx, ccy), squared radius cr2 */
    float x0, x1, y0, y1;
    int circle;
    int w, h;
    float ccx, ccy, cr2;
} pc_cam_model;

enum { PC_CAM_PANO_CYL = 1, PC_CAM_PANO_EQUI = 2 };

/* An output picture's projection: the panorama (rotation identity) or a
 * virtual camera (rectilinear, turned by pan/tilt/roll). */
typedef struct pc_view_model {
    int proj;         /* PC_PROJ_* */
    float f;          /* cylindrical/equirect: w / hfov (px per radian); rectilinear: (w/2)/tan(hfov/2) */
    float cx, cy;     /* the full canvas's centre, (W-1)/2, (H-1)/2, in output pixels */
    float ox, oy;     /* crop: output pixel (0,0) is canvas pixel (ox, oy) */
    float R[9];       /* view -> world, row-major (identity for a panorama) */
    int rotated;      /* 0: R is the identity */
    int w, h;         /* output picture size */
} pc_view_model;

/* Direction seen by output pixel (x, y) of v, in world coordinates (not
 * normalised; every projection below is scale-invariant). */
PC_RIG_HD void pc_view_ray(const pc_view_model *v, float x, float y, float ray[3])
{
    const float dx = x + v->ox - v->cx, dy = v->cy - (y + v->oy);
    float q[3];
    pc_proj_ray(v->proj, v->f, dx, dy, q);
    if (!v->rotated) {
        ray[0] = q[0], ray[1] = q[1], ray[2] = q[2];
        return;
    }
    for (int i = 0; i < 3; i++)
        ray[i] = v->R[3 * i] * q[0] + v->R[3 * i + 1] * q[1] + v->R[3 * i + 2] * q[2];
}

/* Where camera c sees world direction ray: source pixel (*sx, *sy).
 * Returns 1 when that position is inside c's valid area (and in front of
 * a rectilinear lens), else 0 (*sx, *sy still set where defined). */
PC_RIG_HD int pc_cam_project(const pc_cam_model *c, const float ray[3], float *sx, float *sy)
{
    const float X = c->R[0] * ray[0] + c->R[1] * ray[1] + c->R[2] * ray[2];
    const float Y = c->R[3] * ray[0] + c->R[4] * ray[1] + c->R[5] * ray[2];
    const float Z = c->R[6] * ray[0] + c->R[7] * ray[1] + c->R[8] * ray[2];
    float u, v;
    int front = 1;
    if (c->pano) { /* a recorded panorama: pc_view_project's cylinder or sphere */
        const float hz = sqrtf(X * X + Z * Z);
        u = c->f * atan2f(X, Z);
        if (c->pano == PC_CAM_PANO_CYL) {
            if (!(hz > 0.0f)) {
                *sx = *sy = -1e9f;
                return 0;
            }
            v = -c->f * PC_RIG_DIV(Y, hz);
        } else {
            v = -c->f * atan2f(Y, hz);
        }
    } else if (!c->fisheye) {
        if (Z <= 0.0f) {
            front = 0;
            *sx = *sy = -1e9f;
            return 0;
        }
        const float k = PC_RIG_DIV(c->f, Z);
        u = k * X;
        v = -k * Y;
    } else {
        const float rxy = sqrtf(X * X + Y * Y);
        const float th = atan2f(rxy, Z);
        const float k = rxy > 0.0f ? c->f * th / rxy : 0.0f;
        u = k * X;
        v = -k * Y;
    }
    const float r = sqrtf(u * u + v * v) * c->rn_inv;
    if (r >= c->rmax) { /* panotools: scale 1000 there, far outside */
        *sx = *sy = -1e9f;
        return 0;
    }
    const float s = ((c->a * r + c->b) * r + c->c) * r + c->d;
    u = u * s + c->sx_d;
    v = v * s + c->sy_e;
    const float x = c->cx + u + c->g_h * v;
    const float y = c->cy + v + c->t_w * u;
    *sx = x;
    *sy = y;
    if (!(front && x >= c->x0 && x <= c->x1 && y >= c->y0 && y <= c->y1))
        return 0;
    if (c->circle) {
        const float ex = x - c->ccx, ey = y - c->ccy;
        if (ex * ex + ey * ey >= c->cr2)
            return 0;
    }
    return 1;
}

/* The output pixel (*x, *y) of v that sees world direction ray: the
 * inverse of pc_view_ray. Returns 1, or 0 where v's projection does not
 * reach (behind a rectilinear view, the poles of a cylinder); the output
 * picture's bounds are not checked. */
PC_RIG_HD int pc_view_project(const pc_view_model *v, const float ray[3], float *x, float *y)
{
    float q[3];
    if (!v->rotated) {
        q[0] = ray[0], q[1] = ray[1], q[2] = ray[2];
    } else { /* world -> view: R's transpose */
        for (int i = 0; i < 3; i++)
            q[i] = v->R[i] * ray[0] + v->R[3 + i] * ray[1] + v->R[6 + i] * ray[2];
    }
    float dx, dy;
    if (!pc_proj_project(v->proj, v->f, q, &dx, &dy))
        return 0;
    *x = v->cx + dx - v->ox;
    *y = v->cy - dy - v->oy;
    return 1;
}

/* The inverse of pc_cam_project: the world direction (not normalised) that
 * camera c sees at source pixel (sx, sy). Shear and shift are undone
 * exactly; the radial polynomial by Newton's method on r s(r) = rd (rd the
 * distorted radius), kept inside a bracket where r s(r) grows (below
 * c->rmax). Returns 1, or 0 where no direction maps to (sx, sy): beyond
 * the largest radius the polynomial reaches, or a fisheye angle past 180
 * degrees. The valid area is not checked (pc_cam_project does that).
 * Round trip with pc_cam_project: within 1e-3 px (tests/test_rig.c). */
PC_RIG_HD int pc_cam_unproject(const pc_cam_model *c, float sx, float sy, float ray[3])
{
    const float a = sx - c->cx, b = sy - c->cy;
    const float det = 1.0f - c->g_h * c->t_w; /* |g|,|t| <= 1: det > 0 */
    float u = (a - c->g_h * b) / det - c->sx_d;
    float v = (b - c->t_w * a) / det - c->sy_e;
    const float rd = sqrtf(u * u + v * v) * c->rn_inv;
    if (rd > 0.0f) {
        /* g(r) = r s(r) - rd: g(0) = -rd < 0, increasing up to rmax */
        float lo = 0.0f, hi;
        if (c->rmax < 1e29f) {
            hi = c->rmax;
            if (((c->a * hi + c->b) * hi + c->c) * hi * hi + c->d * hi < rd)
                return 0;
        } else {
            hi = rd > 1.0f ? rd : 1.0f;
            for (int k = 0; k < 64 && ((c->a * hi + c->b) * hi + c->c) * hi * hi + c->d * hi < rd; k++)
                hi *= 2.0f;
        }
        float r = rd / c->d; /* the linear term's answer: close for small a, b, c */
        if (!(r > lo && r < hi))
            r = 0.5f * (lo + hi);
        for (int k = 0; k < 40; k++) {
            const float g = (((c->a * r + c->b) * r + c->c) * r + c->d) * r - rd;
            if (g < 0.0f)
                lo = r;
            else
                hi = r;
            const float dg = ((4.0f * c->a * r + 3.0f * c->b) * r + 2.0f * c->c) * r + c->d;
            float next = dg > 0.0f ? r - g / dg : 0.5f * (lo + hi);
            if (!(next > lo && next < hi)) /* Newton left the bracket: bisect */
                next = 0.5f * (lo + hi);
            const float step = next - r;
            r = next;
            if (step * step <= 1e-14f * r * r)
                break;
        }
        const float k = r / rd; /* the ideal radius over the distorted one */
        u *= k;
        v *= k;
    }
    float X, Y, Z;
    if (c->pano) {
        const float lon = u / c->f, t = -v / c->f;
        if (lon < -3.14159266f || lon > 3.14159266f ||
            (c->pano == PC_CAM_PANO_EQUI && (t < -1.5707964f || t > 1.5707964f)))
            return 0;
        const float cl = c->pano == PC_CAM_PANO_EQUI ? cosf(t) : 1.0f;
        X = cl * sinf(lon);
        Y = c->pano == PC_CAM_PANO_EQUI ? sinf(t) : t;
        Z = cl * cosf(lon);
    } else if (!c->fisheye) {
        X = u;
        Y = -v;
        Z = c->f;
    } else {
        const float rr = sqrtf(u * u + v * v);
        const float th = rr / c->f;
        if (th > 3.14159265f)
            return 0;
        const float k = rr > 0.0f ? sinf(th) / rr : 0.0f;
        X = k * u;
        Y = -k * v;
        Z = cosf(th);
    }
    for (int i = 0; i < 3; i++) /* camera -> world: R's transpose */
        ray[i] = c->R[i] * X + c->R[3 + i] * Y + c->R[6 + i] * Z;
    return 1;
}

/* The vignetting factor of camera pixel (x, y) (1 where the camera has
 * none): Va + Vb q + Vc q^2 + Vd q^3, q the squared distance from
 * (vcx, vcy) times vq (1 / half-diagonal^2). */
typedef struct pc_vig_model {
    float va, vb, vc, vd;
    float vcx, vcy, vq;
    int on;
} pc_vig_model;

/* The vignetting polynomial at (x, y), whether or not the model is on. */
PC_RIG_HD float pc_vig_factor_poly(const pc_vig_model *m, float x, float y)
{
    const float dx = x - m->vcx, dy = y - m->vcy;
    const float q = (dx * dx + dy * dy) * m->vq;
    return ((m->vd * q + m->vc) * q + m->vb) * q + m->va;
}

PC_RIG_HD float pc_vig_factor(const pc_vig_model *m, float x, float y)
{
    return m->on ? pc_vig_factor_poly(m, x, y) : 1.0f;
}

/* Linear interpolation in a table of n knots over [0, 1] (the output
 * response f_o); x clamped to [0, 1]. */
PC_RIG_HD float pc_lut_interp(const float *knots, int n, float x)
{
    x = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
    const float p = x * (float)(n - 1);
    int i = (int)p;
    if (i >= n - 1)
        i = n - 2;
    const float t = p - (float)i;
    return knots[i] + t * (knots[i + 1] - knots[i]);
}

/* Hugin's photometric correction of one camera value V in [0, 1] (an 8-bit
 * value / 255, or an interpolated sample): the camera's inverse response,
 * times k = gain / vignetting factor (pc_rig_photometry's gain over
 * pc_vig_factor), through the output response. inv and out are n knots. */
PC_RIG_HD float pc_photo_correct(const float *inv, const float *out, int n, float V, float k)
{
    return pc_lut_interp(out, n, pc_lut_interp(inv, n, V) * k);
}

#endif
