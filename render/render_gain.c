/* render_gain.c - gain compensation (panorama.gain_compensation): what
 * the cameras show on their overlaps (measured on the plan's sparse
 * overlap samples), the per-camera RGB gains that make them agree (least
 * squares of the overlaps' relative differences with a prior pulling to
 * 1: Hugin's and OpenCV's gain compensators, made exact in dark
 * channels), and their slow, bounded filtering over time.
 *
 * The loop, per frame set or every few: measure (pc_render_measure_ref
 * here, or the backend's render_measure on its device), solve, filter,
 * then pc_backend_render_set_gains: the gains are kernel parameters of
 * the next render, so compensation costs no pass over the picture.
 */
#include "render_host.h"

#include "errmsg.h"

#include <math.h>
#include <string.h>

/* A sample value outside [CLIP_LO, CLIP_HI] (8-bit) in any channel of
 * either camera says nothing about gains (black, or clipped highlights). */
#define CLIP_LO 3.0f
#define CLIP_HI 252.0f

int pc_render_measure_ref(const pc_render_plan *p, const pc_picture *src, pc_render_stats *st, char *err,
                          size_t errlen)
{
    memset(st, 0, sizeof *st);
    if (!p || !src || (src->fmt != PC_FMT_RGB24 && src->fmt != PC_FMT_RGBX32) || src->width != p->cam_w ||
        src->height != p->ncam * p->cam_h) {
        pc_set_err(err, errlen, "render measure: the source must be the %d cameras stacked (%dx%d)", p ? p->ncam : 0,
                   p ? p->cam_w : 0, p ? p->ncam * p->cam_h : 0);
        return PC_EINVAL;
    }
    const pc_render_src s = pc_render_src_of(src);
    st->npairs = p->npairs;
    for (int k = 0; k < p->npairs; k++) {
        const pc_render_pair *pr = &p->pair[k];
        const int cam[2] = {pr->a, pr->b};
        st->pair[k].a = pr->a;
        st->pair[k].b = pr->b;
        for (int i = 0; i < pr->n; i++) {
            const int x = (int)(pr->xy[i] & 0xFFFF), y = (int)(pr->xy[i] >> 16);
            float ray[3], v[2][3], sx[2], sy[2];
            int ok = 1;
            pc_view_ray(&p->view, (float)x, (float)y, ray);
            for (int e = 0; e < 2 && ok; e++) {
                const int c = cam[e];
                ok = pc_cam_project(&p->cam[c].geo, ray, &sx[e], &sy[e]);
                if (!ok)
                    break;
                pc_render_bilinear(s.data + (size_t)c * p->cam_h * s.pitch, s.pitch, s.bpp, p->cam_w, p->cam_h,
                                   sx[e], sy[e], v[e]);
                for (int ch = 0; ch < 3; ch++)
                    ok &= v[e][ch] >= CLIP_LO && v[e][ch] <= CLIP_HI;
            }
            if (!ok)
                continue;
            for (int e = 0; e < 2; e++) {
                const int c = cam[e];
                const float iv = pc_render_inv_vig(&p->cam[c].vig, sx[e], sy[e]);
                double *sum = e ? st->pair[k].sum_b : st->pair[k].sum_a;
                for (int ch = 0; ch < 3; ch++)
                    sum[ch] += pc_render_linear(p->inv_knots[c], v[e][ch], p->photo_gain[c][ch] * iv);
            }
            st->pair[k].n++;
        }
    }
    return 0;
}

/* Solves A g = b (n x n, row-major) by Gaussian elimination with partial
 * pivoting; 0, or -1 when singular. */
static int solve(double *A, double *b, int n)
{
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r * n + c]) > fabs(A[piv * n + c]))
                piv = r;
        if (fabs(A[piv * n + c]) < 1e-12)
            return -1;
        if (piv != c) {
            for (int k = 0; k < n; k++) {
                double t = A[c * n + k];
                A[c * n + k] = A[piv * n + k];
                A[piv * n + k] = t;
            }
            double t = b[c];
            b[c] = b[piv];
            b[piv] = t;
        }
        for (int r = c + 1; r < n; r++) {
            double f = A[r * n + c] / A[c * n + c];
            for (int k = c; k < n; k++)
                A[r * n + k] -= f * A[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        double s = b[c];
        for (int k = c + 1; k < n; k++)
            s -= A[c * n + k] * b[k];
        b[c] = s / A[c * n + c];
    }
    return 0;
}

/* E = sum over overlaps (i, j) of N_ij [ (g_i I_ij - g_j I_ji)^2 / (I_ij I_ji sn^2)
 *     + ((1 - g_i)^2 + (1 - g_j)^2) / sg^2 ],
 * I_ij the mean of camera i on its overlap with j (linear, 0..1), sn =
 * 10/255 (how far, relative, two cameras' means may differ for reasons
 * gains cannot fix: OpenCV's 10 code values as a fraction of full scale)
 * and sg = 2: the prior only settles the common scale the overlaps leave
 * free.
 * The data term is relative (divided by the overlap's mean squared,
 * I_ij I_ji): gains are ratios, and a dark channel's must be as exact as a
 * bright one's. Hugin's and OpenCV's absolute term weighs an overlap by
 * its brightness squared, so that the prior, the same in every channel,
 * outweighs the data in a dark one (linear means of 0.045, the blue of a
 * stadium at night: a fifth of the data's weight, 4 % of the exposure
 * ratio left in place); relative, it costs the ratios 0.04 % of their
 * distance from 1 in every channel. dE/dg = 0 is linear in g. A camera
 * without overlaps keeps gain 1 (a faint prior on every camera). */
void pc_render_gains_solve(const pc_render_stats *st, int ncam, float gains[][3])
{
    const double alpha = (255.0 / 10.0) * (255.0 / 10.0), beta = 1.0 / (2.0 * 2.0);
    for (int ch = 0; ch < 3; ch++) {
        double A[PC_RENDER_MAX_CAMERAS * PC_RENDER_MAX_CAMERAS] = {0}, b[PC_RENDER_MAX_CAMERAS] = {0};
        for (int i = 0; i < ncam; i++) {
            A[i * ncam + i] = beta * 1e-3;
            b[i] = beta * 1e-3;
        }
        for (int k = 0; k < st->npairs; k++) {
            const int n = st->pair[k].n, i = st->pair[k].a, j = st->pair[k].b;
            if (n <= 0 || i < 0 || j < 0 || i >= ncam || j >= ncam || i == j)
                continue;
            const double Iij = st->pair[k].sum_a[ch] / n, Iji = st->pair[k].sum_b[ch] / n;
            if (!(Iij > 0 && Iji > 0)) /* no light on one side: nothing to match */
                continue;
            A[i * ncam + i] += n * (alpha * Iij / Iji + beta);
            A[j * ncam + j] += n * (alpha * Iji / Iij + beta);
            A[i * ncam + j] -= n * alpha;
            A[j * ncam + i] -= n * alpha;
            b[i] += n * beta;
            b[j] += n * beta;
        }
        int ok = solve(A, b, ncam) == 0;
        for (int i = 0; i < ncam; i++)
            gains[i][ch] = ok && isfinite(b[i]) && b[i] > 0.05 && b[i] < 20 ? (float)b[i] : 1.0f;
    }
}

void pc_render_gain_filter_init(pc_render_gain_filter *f, int ncam, float alpha, float max_step)
{
    memset(f, 0, sizeof *f);
    f->ncam = ncam;
    f->alpha = alpha;
    f->max_step = max_step;
    for (int c = 0; c < PC_RENDER_MAX_CAMERAS; c++)
        for (int k = 0; k < 3; k++)
            f->g[c][k] = 1.0f;
}

void pc_render_gain_filter_update(pc_render_gain_filter *f, const float target[][3])
{
    for (int c = 0; c < f->ncam; c++)
        for (int k = 0; k < 3; k++) {
            float d = f->alpha * (target[c][k] - f->g[c][k]), lim = f->max_step * f->g[c][k];
            d = d > lim ? lim : (d < -lim ? -lim : d);
            f->g[c][k] += d;
        }
}
