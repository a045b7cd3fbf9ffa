/* projection.h - the output projections (the .pto `p` line's f codes), in
 * one place: their formulas as plain inline functions on float that the C
 * reference (camera_model.h: pc_view_ray, pc_view_project), the renderers'
 * column/row terms (kernels' render_formulas.h) and the CUDA kernels all
 * call, and a table of what the host needs to know of each (projection.c:
 * the .pto code, the name, the widest field of view, the focal length).
 *
 * A projection maps an output pixel's offset from the canvas centre
 * (dx right, dy up, pixels) to a direction q in view space (X right, Y up,
 * Z forward; not normalised: every consumer is scale-invariant, and the
 * renders compare exactly with these floats), and back. Where q is made
 * of a term per column (from dx alone) and a term per row (from dy alone),
 * two floats each, the renderers compute those once per column and row
 * and combine them per pixel (pc_proj_col, pc_proj_row, pc_proj_combine):
 *   rectilinear  col = (dx, -), row = (dy, -):             q = (c0, r0, f)
 *   cylindrical  col = (sin lon, cos lon), row = (dy / f, -): q = (c0, r0, c1)
 *   equirect     col = (sin lon, cos lon), row = (sin lat, cos lat):
 *                q = (r1 c0, r0, r1 c1)
 *   lon = dx / f, lat = dy / f (radians).
 * A projection without such terms (a fisheye, stereographic) keeps
 * col = (dx, -), row = (dy, -) and computes q from them per pixel in
 * pc_proj_combine: the renderers' fast paths stay as they are.
 *
 * Adding a projection: its enum value below, its formulas (a branch in
 * pc_proj_combine and pc_proj_project, and in pc_proj_col/pc_proj_row if
 * it has separable terms), its row in projection.c's table, and tests
 * against Hugin's nona (tests/test_render.c, tests/test_rig.c).
 */
#ifndef PANOCAP_PROJECTION_H
#define PANOCAP_PROJECTION_H

#include <stddef.h>

#ifdef __CUDACC__
#define PC_PROJ_HD __host__ __device__ static inline
#else
#include <math.h>
#define PC_PROJ_HD static inline
#endif

/* Output projections; the value is the index in the table (projection.c),
 * which also holds the .pto f code (today the same numbers). */
typedef enum pc_proj {
    PC_PROJ_RECTILINEAR = 0,
    PC_PROJ_CYLINDRICAL = 1,
    PC_PROJ_EQUIRECT = 2,
    PC_PROJ_COUNT
} pc_proj;

/* --- the formulas of each projection ------------------------------------ */

/* cylindrical and equirect: a column's longitude as (sin, cos) */
PC_PROJ_HD void pc_proj_lon_terms(float f, float dx, float col[2])
{
    const float lon = dx / f;
    col[0] = sinf(lon);
    col[1] = cosf(lon);
}

/* equirect: a row's latitude as (sin, cos) */
PC_PROJ_HD void pc_proj_lat_terms(float f, float dy, float row[2])
{
    const float lat = dy / f;
    row[0] = sinf(lat);
    row[1] = cosf(lat);
}

/* rectilinear: q -> (dx, dy); 0 behind the view */
PC_PROJ_HD int pc_proj_rect_project(float f, const float q[3], float *dx, float *dy)
{
    if (q[2] <= 0.0f)
        return 0;
    *dx = f * q[0] / q[2];
    *dy = f * q[1] / q[2];
    return 1;
}

/* cylindrical: q -> (dx, dy); 0 at the poles */
PC_PROJ_HD int pc_proj_cyl_project(float f, const float q[3], float *dx, float *dy)
{
    const float hz = sqrtf(q[0] * q[0] + q[2] * q[2]);
    *dx = f * atan2f(q[0], q[2]);
    if (!(hz > 0.0f))
        return 0;
    *dy = f * q[1] / hz;
    return 1;
}

/* equirect: q -> (dx, dy) */
PC_PROJ_HD int pc_proj_equirect_project(float f, const float q[3], float *dx, float *dy)
{
    const float hz = sqrtf(q[0] * q[0] + q[2] * q[2]);
    *dx = f * atan2f(q[0], q[2]);
    *dy = f * atan2f(q[1], hz);
    return 1;
}

/* --- the dispatch: one per step, host and device ------------------------ */

/* The column term of offset dx (col[1] 0 where unused). */
PC_PROJ_HD void pc_proj_col(int proj, float f, float dx, float col[2])
{
    col[1] = 0.0f;
    switch (proj) {
    case PC_PROJ_CYLINDRICAL:
    case PC_PROJ_EQUIRECT: pc_proj_lon_terms(f, dx, col); break;
    default: col[0] = dx; break; /* rectilinear, and the projections computed per pixel */
    }
}

/* The row term of offset dy (row[1] 0 where unused). */
PC_PROJ_HD void pc_proj_row(int proj, float f, float dy, float row[2])
{
    row[1] = 0.0f;
    switch (proj) {
    case PC_PROJ_CYLINDRICAL: row[0] = dy / f; break;
    case PC_PROJ_EQUIRECT: pc_proj_lat_terms(f, dy, row); break;
    default: row[0] = dy; break; /* rectilinear, and the projections computed per pixel */
    }
}

/* The view-space direction q of a pixel from its column and row terms
 * (the renderers' inner loop on the GPU: an if chain, the panorama's
 * projections first, as the kernels were tuned with). */
PC_PROJ_HD void pc_proj_combine(int proj, float f, const float *col, const float *row, float q[3])
{
    if (proj == PC_PROJ_CYLINDRICAL) {
        q[0] = col[0];
        q[1] = row[0];
        q[2] = col[1];
    } else if (proj == PC_PROJ_EQUIRECT) {
        q[0] = row[1] * col[0];
        q[1] = row[0];
        q[2] = row[1] * col[1];
    } else { /* rectilinear */
        q[0] = col[0];
        q[1] = row[0];
        q[2] = f;
    }
}

/* The view-space direction q of offset (dx, dy): pc_proj_combine of the
 * terms (the same floats as the renderers' per-column/per-row path). */
PC_PROJ_HD void pc_proj_ray(int proj, float f, float dx, float dy, float q[3])
{
    float col[2], row[2];
    pc_proj_col(proj, f, dx, col);
    pc_proj_row(proj, f, dy, row);
    pc_proj_combine(proj, f, col, row, q);
}

/* The offset (dx, dy) that sees view-space direction q: pc_proj_ray's
 * inverse. 0 where the projection does not reach q. */
PC_PROJ_HD int pc_proj_project(int proj, float f, const float q[3], float *dx, float *dy)
{
    switch (proj) {
    case PC_PROJ_CYLINDRICAL: return pc_proj_cyl_project(f, q, dx, dy);
    case PC_PROJ_EQUIRECT: return pc_proj_equirect_project(f, q, dx, dy);
    default: return pc_proj_rect_project(f, q, dx, dy);
    }
}

/* --- the table (host; projection.c) -------------------------------------- */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_proj_desc {
    pc_proj id;
    int pto;            /* the .pto `p` line's f code (Hugin's numbering) */
    const char *name;   /* "cylindrical" */
    double max_hfov;    /* degrees: the widest canvas (v) it renders */
    int max_open;       /* 1: v < max_hfov (reached only at infinity), else v <= max_hfov */
    int separable;      /* 1: column and row terms of its own; 0: col/row carry dx/dy, q per pixel */
    /* f (pixels) of a canvas w pixels wide seeing hfov radians */
    double (*focal)(double w, double hfov);
} pc_proj_desc;

/* The projection's entry, or NULL for a value out of range. */
const pc_proj_desc *pc_proj_get(int proj);
/* The entry of .pto f code pto, or NULL. */
const pc_proj_desc *pc_proj_from_pto(int pto);
/* "rectilinear" ..., "?" out of range. */
const char *pc_proj_name(int proj);
/* "0 rectilinear, 1 cylindrical, 2 equirectangular" (the .pto codes). */
void pc_proj_pto_list(char *buf, size_t len);

/* --- directions as angles ------------------------------------------------ */

/* The pan (degrees, + right, atan2(x, z)) and tilt (degrees, + up, above
 * the horizontal plane) of world direction (x, y, z) (X right, Y up, Z
 * forward; any length). Either output may be NULL. */
void pc_ray_pan_tilt(double x, double y, double z, double *pan, double *tilt);
/* b - a in degrees the short way round: in [-180, 180]. */
double pc_pan_delta(double a, double b);

#ifdef __cplusplus
}
#endif
#endif
