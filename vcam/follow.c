/* follow.c - follow mode: activity grid -> target -> goal pose (follow.h
 * says what each step is for). Runs on the host once per frame set on a
 * few thousand cells: microseconds. */
#include "follow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pc_follow_params_default(pc_follow_params *p)
{
    memset(p, 0, sizeof *p);
    p->min_activity = 40;
    p->window = 16.0;
    p->window_keep = 0.25;
    p->dead_zone = 0.08;
    p->lead_s = 0.6;
    p->lead_max = 0.15;
    p->smooth_s = 0.4;
    p->zoom_margin = 0.25;
    p->min_hfov = 20;
    p->max_hfov = 70;
    p->tilt_offset = 1.0;
}

int pc_follow_grid_init(pc_follow_grid *g, const pc_view_model *v, int cw, int ch)
{
    memset(g, 0, sizeof *g);
    g->gw = (v->w + cw - 1) / cw;
    g->gh = (v->h + ch - 1) / ch;
    if (g->gw * g->gh > PC_FOLLOW_MAX_CELLS || g->gw <= 0 || g->gh <= 0)
        return -1;
    for (int y = 0; y < g->gh; y++)
        for (int x = 0; x < g->gw; x++) {
            float ray[3];
            float px = x * cw + 0.5f * (cw - 1), py = y * ch + 0.5f * (ch - 1);
            double pan, tilt;
            pc_view_ray(v, px, py, ray);
            pc_ray_pan_tilt(ray[0], ray[1], ray[2], &pan, &tilt);
            g->pan[y * g->gw + x] = (float)pan;
            g->tilt[y * g->gw + x] = (float)tilt;
        }
    return 0;
}

void pc_follow_init(pc_follow *f, const pc_follow_params *par, pc_vcam_pose start)
{
    memset(f, 0, sizeof *f);
    f->par = *par;
    f->pan = start.pan;
    f->tilt = start.tilt;
    f->hfov = start.hfov;
    f->win = start.pan;
    f->goal = start;
}

typedef struct wval {
    float v;
    uint32_t w;
} wval;

static int wval_cmp(const void *a, const void *b)
{
    float x = ((const wval *)a)->v, y = ((const wval *)b)->v;
    return x < y ? -1 : x > y;
}

/* The value below which fraction q of the weight lies (sorted input). */
static double wquantile(const wval *s, int n, double total, double q)
{
    double acc = 0, want = q * total;
    for (int i = 0; i < n; i++) {
        acc += s[i].w;
        if (acc >= want)
            return s[i].v;
    }
    return n ? s[n - 1].v : 0;
}

/* The play: of the active cells sorted by pan, the run at most `width`
 * degrees wide that holds the most activity, and its weighted mean pan
 * (*lo, *hi: the run). The window centred where the play was (prev; at
 * first where the view looks) is kept unless the best one holds more
 * than 1 + keep times its activity: two groups of equal weight never make
 * the target jump back and forth, and a window kept follows its group's
 * mean. */
static double densest(const wval *s, int m, double width, double prev, double keep, int *lo, int *hi)
{
    double sum = 0, best = -1;
    int j = 0;
    *lo = 0, *hi = m;
    for (int i = 0; i < m; i++) {
        while (j < m && s[j].v - s[i].v <= width)
            sum += s[j++].w;
        if (sum > best)
            best = sum, *lo = i, *hi = j;
        sum -= s[i].w;
    }
    double kept = 0;
    int a = m, b = 0;
    for (int i = 0; i < m; i++)
        if (fabs(s[i].v - prev) <= 0.5 * width) {
            kept += s[i].w;
            a = i < a ? i : a;
            b = i + 1;
        }
    if (kept > 0 && best <= (1.0 + keep) * kept)
        *lo = a, *hi = b;
    double w = 0, wp = 0;
    for (int i = *lo; i < *hi; i++)
        w += s[i].w, wp += (double)s[i].w * s[i].v;
    return w > 0 ? wp / w : prev;
}

int pc_follow_update(pc_follow *f, const pc_follow_grid *g, const uint32_t *counts, double dt, pc_vcam_pose *goal)
{
    const pc_follow_params *P = &f->par;
    const int n = g->gw * g->gh;
    /* the active cells by pan, and those of the play's window by tilt (a
     * few thousand at most) */
    wval *sp = malloc((size_t)n * sizeof *sp), *st = malloc((size_t)n * sizeof *st);
    if (!sp || !st) {
        free(sp);
        free(st);
        return 0;
    }
    int m = 0;
    double total = 0;
    for (int i = 0; i < n; i++)
        if (counts[i]) {
            sp[m] = (wval){g->pan[i], counts[i]};
            total += counts[i];
            m++;
        }
    f->activity = total;
    if (total < P->min_activity || dt <= 0) {
        free(sp);
        free(st);
        return 0; /* nobody plays: keep the view */
    }
    qsort(sp, (size_t)m, sizeof *sp, wval_cmp);
    const double spread = wquantile(sp, m, total, 0.9) - wquantile(sp, m, total, 0.1);
    /* the target: where the play is densest (the ball is fought over
     * there: over 90 s of the synthetic match, seeds 1 and 2, the ball
     * lies within the middle 60 % of a view centred on that window on
     * 96-99 % of frames, on the activity's median on 87-90 %, on the
     * players' centroid on 79-85 %), its tilt the median of that
     * window's cells */
    int lo, hi;
    const double pan = densest(sp, m, P->window, f->win, P->window_keep, &lo, &hi);
    f->win = pan;
    const double plo = sp[lo].v, phi = sp[hi - 1].v;
    int mt = 0;
    double wt = 0;
    for (int i = 0; i < n; i++)
        if (counts[i] && g->pan[i] >= plo && g->pan[i] <= phi) {
            st[mt++] = (wval){g->tilt[i], counts[i]};
            wt += counts[i];
        }
    qsort(st, (size_t)mt, sizeof *st, wval_cmp);
    const double tilt = wquantile(st, mt, wt, 0.5) + P->tilt_offset;
    free(sp);
    free(st);
    double hfov = spread * (1.0 + 2.0 * P->zoom_margin);
    hfov = hfov < P->min_hfov ? P->min_hfov : (hfov > P->max_hfov ? P->max_hfov : hfov);
    /* smoothing (first order, time constant smooth_s), and the play's
     * speed from the smoothed target's motion */
    const double a = f->have ? 1.0 - exp(-dt / P->smooth_s) : 1.0;
    const double opan = f->pan;
    f->pan += a * (pan - f->pan);
    f->tilt += a * (tilt - f->tilt);
    f->hfov += a * (hfov - f->hfov);
    if (f->have)
        f->vpan += (1.0 - exp(-dt / (2 * P->smooth_s))) * ((f->pan - opan) / dt - f->vpan);
    f->have = 1;
    double lead = f->vpan * P->lead_s, lmax = P->lead_max * f->hfov;
    lead = lead > lmax ? lmax : (lead < -lmax ? -lmax : lead);
    pc_vcam_pose want = {f->pan + lead, f->tilt, f->hfov};
    /* dead zone, with hysteresis: a still play (a target moving inside it)
     * never moves the camera; a target that leaves it is followed frame by
     * frame until it settles (slow and near the goal) */
    const double dz = P->dead_zone * f->goal.hfov;
    const double off = fmax(fabs(want.pan - f->goal.pan), fabs(want.tilt - f->goal.tilt));
    const double zoff = fabs(want.hfov - f->goal.hfov) / f->goal.hfov;
    if (!f->tracking && off < dz && zoff < 0.1)
        return 0;
    f->tracking = !(off < 0.25 * dz && zoff < 0.025 && fabs(f->vpan) < 0.5);
    f->goal = want;
    *goal = want;
    return 1;
}
