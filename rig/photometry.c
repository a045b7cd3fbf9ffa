/* photometry.c - the rig's photometric tables: each camera's inverse
 * response, gains (exposure, white balance, the panorama's exposure) and
 * the output response, built exactly as Hugin 2022's nona builds its
 * lookup tables (checked against nona's float layers, tests/
 * test_rig_photo.c). camera_model.h has the per-pixel formula and
 * docs/panorama.md the derivation. Runs once per rig load. */
#include "rig.h"

#include <math.h>
#include <string.h>

enum { N = PC_RIG_RESPONSE_KNOTS };

/* Hugin's vigra_ext::enforceMonotonicity: no knot above the last one, and
 * none below its left neighbour. */
static void make_monotonic(double *lut, int n)
{
    const double last = lut[n - 1];
    for (int j = 0; j < n - 1; j++) {
        if (lut[j + 1] > last)
            lut[j + 1] = last;
        else if (lut[j + 1] < lut[j])
            lut[j + 1] = lut[j];
    }
}

static void emor_curve(const double r[5], double *lut)
{
    for (int i = 0; i < N; i++) {
        double t = pc_emor_f0[i];
        for (int k = 0; k < 5; k++) /* Hugin keeps the weights as float */
            t += (double)(float)r[k] * pc_emor_h[k][i];
        lut[i] = t;
    }
    make_monotonic(lut, N);
}

void pc_rig_emor_curve(const double r[5], float *knots)
{
    double lut[N];
    emor_curve(r, lut);
    for (int i = 0; i < N; i++)
        knots[i] = (float)lut[i];
}

/* The inverse of a monotonic table at v (Hugin's InvLUTFunctor): the
 * position where the table's piecewise-linear curve reaches v, over
 * [0, 1]; a flat stretch answers its first knot. */
static double inverse_at(const double *lut, int n, double v)
{
    if (v >= lut[n - 1])
        return lut[n - 1]; /* (sic) Hugin's answer: the last value, 1 for a response */
    if (v < lut[0])
        return 0.0;
    int lo = 0, hi = n - 1; /* the first knot >= v (lower_bound) */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (lut[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (v == 1.0)
        return 1.0;
    if (lo == 0)
        return 0.0;
    if (v == lut[lo])
        return lo / (n - 1.0);
    return (lo - 1 + (v - lut[lo - 1]) / (lut[lo] - lut[lo - 1])) / (n - 1.0);
}

/* Hugin's LUTFunctor on a value in [0, 1]: linear interpolation. */
static double table_at(const float *knots, int n, double v)
{
    if (v > 1.0)
        return knots[n - 1];
    if (v < 0.0)
        return 0.0;
    const double x = v * (n - 1);
    const int i = (int)x;
    if (i + 1 >= n)
        return knots[i];
    return (1.0 - (x - i)) * knots[i] + (x - i) * knots[i + 1];
}

/* Camera i's inverse response at the knots: Hugin inverts the camera's
 * curve once into a table of the same size (InvResponseTransform::
 * invertLUT), then interpolates in it. A linear camera (Rt1): identity. */
static void inverse_table(const pc_rig_camera *c, float *inv)
{
    if (c->response == 1) {
        for (int i = 0; i < N; i++)
            inv[i] = (float)(i / (N - 1.0));
        return;
    }
    double lut[N];
    emor_curve(c->resp, lut);
    for (int i = 0; i < N; i++)
        inv[i] = (float)inverse_at(lut, N, i / (N - 1.0));
}

static int same_response(const pc_rig_camera *a, const pc_rig_camera *b)
{
    return a->response == b->response && (a->response == 1 || memcmp(a->resp, b->resp, sizeof a->resp) == 0);
}

void pc_rig_photometry_build(const pc_rig *rig, pc_rig_photometry *out)
{
    memset(out, 0, sizeof *out);
    /* Output: p R0 (LDR) writes through image 0's response: its EMoR
     * curve, or the identity when image 0 is linear (Rt1; measured: nona
     * then ignores its Ra..Re); p R1 (HDR) writes the radiance itself,
     * here clamped to [0, 1] like any picture panocap encodes. */
    if (rig->pano.response == 0 && rig->cam[0].response == 0) {
        pc_rig_emor_curve(rig->cam[0].resp, out->out_resp);
    } else {
        for (int i = 0; i < N; i++)
            out->out_resp[i] = (float)(i / (N - 1.0));
    }
    int identity = 1;
    for (int c = 0; c < rig->ncam; c++) {
        const pc_rig_camera *cam = &rig->cam[c];
        pc_vig_model vig;
        pc_rig_vig_model(rig, c, &vig);
        out->has_vig |= vig.on;
        const double k = exp2(cam->eev - rig->pano.exposure);
        out->gain[c][0] = (float)(k / cam->er);
        out->gain[c][1] = (float)k;
        out->gain[c][2] = (float)(k / cam->eb);
        inverse_table(cam, out->inv_knots[c]);
        for (int v = 0; v < 256; v++)
            out->inv_resp[c][v] = (float)table_at(out->inv_knots[c], N, v / 255.0);
        const int neutral = out->gain[c][0] == 1.0f && out->gain[c][1] == 1.0f && out->gain[c][2] == 1.0f;
        /* f_o(f_c^-1(V)) == V where the camera's curve is the output's */
        const int round_trip = rig->pano.response == 0 ? same_response(cam, &rig->cam[0]) : cam->response == 1;
        if (!neutral || vig.on || !round_trip)
            identity = 0;
    }
    out->identity = identity;
}
