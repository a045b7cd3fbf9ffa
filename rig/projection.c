/* projection.c - the table of output projections (projection.h): per
 * projection its .pto code, name, field-of-view bound and focal length,
 * which the .pto reader and writer, the view models (rig_model.c), the
 * daemon's log and the tools read; and directions as pan/tilt angles. */
#include "projection.h"

#include <math.h>
#include <stdio.h>

/* (w/2) / tan(hfov/2): a rectilinear canvas' f */
static double focal_tan(double w, double hfov) { return (w / 2.0) / tan(hfov / 2.0); }
/* w / hfov: pixels per radian of the angular projections */
static double focal_angle(double w, double hfov) { return w / hfov; }

static const pc_proj_desc table[PC_PROJ_COUNT] = {
    {PC_PROJ_RECTILINEAR, 0, "rectilinear", 180.0, 1, 1, focal_tan},
    {PC_PROJ_CYLINDRICAL, 1, "cylindrical", 360.0, 0, 1, focal_angle},
    {PC_PROJ_EQUIRECT, 2, "equirectangular", 360.0, 0, 1, focal_angle},
};

const pc_proj_desc *pc_proj_get(int proj) { return proj >= 0 && proj < PC_PROJ_COUNT ? &table[proj] : NULL; }

const pc_proj_desc *pc_proj_from_pto(int pto)
{
    for (int i = 0; i < PC_PROJ_COUNT; i++)
        if (table[i].pto == pto)
            return &table[i];
    return NULL;
}

const char *pc_proj_name(int proj)
{
    const pc_proj_desc *d = pc_proj_get(proj);
    return d ? d->name : "?";
}

void pc_proj_pto_list(char *buf, size_t len)
{
    size_t off = 0;
    if (!len)
        return;
    buf[0] = '\0';
    for (int i = 0; i < PC_PROJ_COUNT && off < len; i++) {
        int n = snprintf(buf + off, len - off, "%s%d %s", i ? ", " : "", table[i].pto, table[i].name);
        if (n < 0)
            break;
        off += (size_t)n;
    }
}

void pc_ray_pan_tilt(double x, double y, double z, double *pan, double *tilt)
{
    if (pan)
        *pan = atan2(x, z) * 180 / M_PI;
    if (tilt)
        *tilt = atan2(y, hypot(x, z)) * 180 / M_PI;
}

double pc_pan_delta(double a, double b)
{
    double d = fmod(b - a, 360.0);
    if (d > 180.0)
        d -= 360.0;
    if (d < -180.0)
        d += 360.0;
    return d;
}
