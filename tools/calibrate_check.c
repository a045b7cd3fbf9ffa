/* calibrate_check.c - judges a calibration with panocap's own camera model
 * (rig/camera_model.h), not with the optimiser's word for it: reads the
 * project's control points, maps each through the calibrated cameras
 * (pixel -> direction -> pixel) and counts and measures them per pair of
 * cameras; also how much of each camera its neighbour sees. */
#include "calibrate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cal_read_cps(const char *pto, cal_cp **cps, int *ncps, char *err, size_t errlen)
{
    *cps = NULL;
    *ncps = 0;
    FILE *f = fopen(pto, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", pto, strerror(errno));
        return -1;
    }
    char line[1024];
    int cap = 0, n = 0, lineno = 0, rc = 0;
    cal_cp *v = NULL;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] != 'c' || line[1] != ' ')
            continue;
        cal_cp cp = {-1, -1, 0, NAN, NAN, NAN, NAN};
        char *save = NULL;
        for (char *tok = strtok_r(line + 2, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
            char *end;
            double val = strtod(tok + 1, &end);
            if (end == tok + 1 || *end)
                continue; /* a field panocap does not need */
            switch (tok[0]) {
            case 'n': cp.n = (int)val; break;
            case 'N': cp.N = (int)val; break;
            case 't': cp.t = (int)val; break;
            case 'x': cp.x = val; break;
            case 'y': cp.y = val; break;
            case 'X': cp.X = val; break;
            case 'Y': cp.Y = val; break;
            default: break;
            }
        }
        if (cp.n < 0 || cp.N < 0 || isnan(cp.x) || isnan(cp.y) || isnan(cp.X) || isnan(cp.Y)) {
            snprintf(err, errlen, "%s:%d: a c line (control point) without n, N, x, y, X and Y", pto, lineno);
            rc = -1;
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            cal_cp *nv = realloc(v, (size_t)cap * sizeof *nv);
            if (!nv) {
                snprintf(err, errlen, "%s: out of memory", pto);
                rc = -1;
                break;
            }
            v = nv;
        }
        v[n++] = cp;
    }
    fclose(f);
    if (rc) {
        free(v);
        return -1;
    }
    *cps = v;
    *ncps = n;
    return 0;
}

/* How far camera `to` sees the direction of (x, y) in `from` from (X, Y). */
static double one_way(const pc_cam_model *from, const pc_cam_model *to, double x, double y, double X, double Y)
{
    float rf[3], sx, sy;
    if (!pc_cam_unproject(from, (float)x, (float)y, rf))
        return 1e6; /* beyond where its lens model maps */
    pc_cam_project(to, rf, &sx, &sy);
    if (sx < -1e8f || sy < -1e8f)
        return 1e6;
    return hypot(sx - X, sy - Y);
}

double cal_cp_error(const pc_cam_model *cams, const cal_cp *cp)
{
    return 0.5 * (one_way(&cams[cp->n], &cams[cp->N], cp->x, cp->y, cp->X, cp->Y) +
                  one_way(&cams[cp->N], &cams[cp->n], cp->X, cp->Y, cp->x, cp->y));
}

double cal_overlap(const pc_cam_model *a, const pc_cam_model *b)
{
    const int gx = 48, gy = 32;
    int in = 0;
    for (int j = 0; j < gy; j++)
        for (int i = 0; i < gx; i++) {
            float rf[3], sx, sy;
            in += pc_cam_unproject(a, (i + 0.5f) * a->w / gx - 0.5f, (j + 0.5f) * a->h / gy - 0.5f, rf) &&
                  pc_cam_project(b, rf, &sx, &sy);
        }
    return (double)in / (gx * gy);
}

static int find_root(int *parent, int i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

void cal_evaluate(const pc_rig *rig, int ncam, const cal_cp *cps, int ncps, int pairs, int min_points,
                  cal_report *out)
{
    pc_cam_model cams[CAL_MAX_CAMERAS];
    memset(out, 0, sizeof *out);
    if (rig)
        for (int i = 0; i < ncam; i++)
            pc_rig_camera_model(rig, i, &cams[i]);
    int index[CAL_MAX_CAMERAS][CAL_MAX_CAMERAS];
    for (int a = 0; a < ncam; a++)
        for (int b = a + 1; b < ncam; b++) {
            cal_pair *p = &out->pair[out->npairs];
            index[a][b] = out->npairs++;
            *p = (cal_pair){a, b, 0, 0, 0, -1, 0};
            if (rig)
                p->overlap = cal_overlap(&cams[a], &cams[b]);
            p->required = pairs == CAL_PAIRS_ALL ? rig && p->overlap >= CAL_ALL_MIN_OVERLAP
                          : b == a + 1          ? 1
                                                : pairs == CAL_PAIRS_RING && a == 0 && b == ncam - 1 && ncam > 2;
        }
    double sum = 0;
    for (int k = 0; k < ncps; k++) {
        const cal_cp *cp = &cps[k];
        if (cp->t != 0 || cp->n == cp->N || cp->n < 0 || cp->N < 0 || cp->n >= ncam || cp->N >= ncam)
            continue;
        int a = cp->n < cp->N ? cp->n : cp->N, b = cp->n < cp->N ? cp->N : cp->n;
        cal_pair *p = &out->pair[index[a][b]];
        p->points++;
        out->points++;
        if (!rig)
            continue;
        double e = cal_cp_error(cams, cp);
        p->mean += e;
        sum += e;
        if (e > p->max)
            p->max = e;
        if (e > out->max)
            out->max = e;
    }
    for (int k = 0; k < out->npairs; k++)
        if (out->pair[k].points)
            out->pair[k].mean /= out->pair[k].points;
    out->mean = out->points ? sum / out->points : 0;
    /* one group: every camera reached through pairs with enough points */
    int parent[CAL_MAX_CAMERAS], groups = ncam;
    for (int i = 0; i < ncam; i++)
        parent[i] = i;
    for (int k = 0; k < out->npairs; k++) {
        const cal_pair *p = &out->pair[k];
        if (p->points < min_points)
            continue;
        int ra = find_root(parent, p->a), rb = find_root(parent, p->b);
        if (ra != rb) {
            parent[ra] = rb;
            groups--;
        }
    }
    out->connected = groups == 1;
}
