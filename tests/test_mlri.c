/* test_mlri.c - the MLRI reference (kernels/mlri_reference.c) against
 * hand-checkable cases and against a second, independent computation.
 *
 * Hand-checkable: a flat colour comes back exactly (everywhere, every CFA
 * phase: the Laplacians are 0, so every guided filter degenerates to the
 * window mean of a constant); grey and coloured linear ramps come back
 * exactly away from the frame border (window means of a linear function
 * over windows symmetric about the pixel are the function's value there;
 * near the border the windows are clipped, by the authors' rule, and the
 * means shift); a step edge between two flat colours comes back exactly
 * farther than the method's reach (27 px) from the edge and the border.
 *
 * Independent computation: the method written again the way the authors'
 * code is written -- whole planes in double precision, CFA masks, eight
 * separate guided filters with their own guide planes, direct 2-D window
 * sums with zero padding and count normalisation, every small filter a
 * full-plane correlation with reflect-101 padding -- sharing nothing with
 * the reference but the constants. Compared on synthetic photographs,
 * noise and, when $PC_TEST_IMAGES holds astronaut.ppm / coffee.ppm, on
 * photographs: float vs double rounding may move a few samples by 1.
 */
#include "debayer.h"
#include "debayer_test_util.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the independent computation ----------------------------------------- */

typedef struct plane {
    int w, h;
    double *v;
} plane;

static plane pl_new(int w, int h)
{
    plane p = {w, h, calloc((size_t)w * h, sizeof(double))};
    return p;
}
static void pl_free(plane *p) { free(p->v); }
static double *px(const plane *p, int x, int y) { return &p->v[(size_t)y * p->w + x]; }
static int refl(int i, int n)
{
    while (i < 0 || i >= n)
        i = i < 0 ? -i : 2 * n - 2 - i;
    return i;
}

/* Correlation with a kw x kh kernel centred in the middle, reflect-101. */
static plane corr(const plane *s, const double *k, int kw, int kh)
{
    plane o = pl_new(s->w, s->h);
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++) {
            double a = 0;
            for (int j = 0; j < kh; j++)
                for (int i = 0; i < kw; i++)
                    if (k[j * kw + i] != 0)
                        a += k[j * kw + i] * *px(s, refl(x + i - kw / 2, s->w), refl(y + j - kh / 2, s->h));
            *px(&o, x, y) = a;
        }
    return o;
}

/* Sum over the (2r+1)^2 window, samples outside the frame omitted. */
static plane box(const plane *s, int r)
{
    plane o = pl_new(s->w, s->h);
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++) {
            double a = 0;
            for (int j = y - r; j <= y + r; j++)
                for (int i = x - r; i <= x + r; i++)
                    if (i >= 0 && j >= 0 && i < s->w && j < s->h)
                        a += *px(s, i, j);
            *px(&o, x, y) = a;
        }
    return o;
}

/* o = a * b (elementwise), and friends. */
static plane mul(const plane *a, const plane *b)
{
    plane o = pl_new(a->w, a->h);
    for (size_t i = 0; i < (size_t)a->w * a->h; i++)
        o.v[i] = a->v[i] * b->v[i];
    return o;
}
static double clipd(double v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/* The MLRI guided filter (the authors' guidedfilter_MLRI): regression of p
 * on I over the sites of mask M, intercept from the means of R and G over
 * the same sites, output mean_a * G + mean_b. */
static plane gf(const plane *G, const plane *R, const plane *M, const plane *I, const plane *P, int r)
{
    int w = G->w, h = G->h;
    size_t n = (size_t)w * h;
    plane ones = pl_new(w, h);
    for (size_t i = 0; i < n; i++)
        ones.v[i] = 1;
    plane N = box(M, r), N2 = box(&ones, r);
    plane ip = mul(I, P), ipm = mul(&ip, M), ii = mul(I, I), iim = mul(&ii, M);
    plane gm = mul(G, M), rm = mul(R, M);
    plane Sip = box(&ipm, r), Sii = box(&iim, r), Sg = box(&gm, r), Sr = box(&rm, r);
    plane a = pl_new(w, h), b = pl_new(w, h);
    for (size_t i = 0; i < n; i++) {
        double nn = N.v[i] ? N.v[i] : 1;
        double mii = Sii.v[i] / nn;
        if (mii < 0.00001 * 255 * 255)
            mii = 0.00001 * 255 * 255;
        a.v[i] = (Sip.v[i] / nn) / mii;
        b.v[i] = Sr.v[i] / nn - a.v[i] * Sg.v[i] / nn;
    }
    plane A = box(&a, r), B = box(&b, r), o = pl_new(w, h);
    for (size_t i = 0; i < n; i++)
        o.v[i] = A.v[i] / N2.v[i] * G->v[i] + B.v[i] / N2.v[i];
    plane *fr[] = {&ones, &N, &N2, &ip, &ipm, &ii, &iim, &gm, &rm, &Sip, &Sii, &Sg, &Sr, &a, &b, &A, &B};
    for (unsigned i = 0; i < sizeof fr / sizeof fr[0]; i++)
        pl_free(fr[i]);
    return o;
}

/* One directional tentative estimate: target T on mask TM, guide Gd. */
static plane tentative(const plane *Gd, const plane *T, const plane *TM, const double *f, int fw, int fh, int r)
{
    plane gm = mul(Gd, TM), I = corr(&gm, f, fw, fh), P = corr(T, f, fw, fh);
    plane o = gf(Gd, T, TM, &I, &P, r);
    for (size_t i = 0; i < (size_t)o.w * o.h; i++)
        o.v[i] = clipd(o.v[i]);
    pl_free(&gm);
    pl_free(&I);
    pl_free(&P);
    return o;
}

/* out = clip((t + interp((mosaic - t) * rmask)) * omask), interp along k. */
static plane resid(const plane *t, const plane *Mo, const plane *rmask, const plane *omask, const double *k, int kw,
                   int kh)
{
    size_t n = (size_t)t->w * t->h;
    plane r = pl_new(t->w, t->h);
    for (size_t i = 0; i < n; i++)
        r.v[i] = (Mo->v[i] - t->v[i]) * rmask->v[i];
    plane f = corr(&r, k, kw, kh);
    for (size_t i = 0; i < n; i++)
        f.v[i] = clipd((t->v[i] + f.v[i]) * omask->v[i]);
    pl_free(&r);
    return f;
}

/* Demosaics raw (w x h, phase cfa) into rgb (3 bytes per pixel). */
static void mlri_independent(const uint8_t *raw, int w, int h, pc_cfa cfa, uint8_t *rgb)
{
    size_t n = (size_t)w * h;
    int ox = cfa == PC_CFA_GRBG || cfa == PC_CFA_BGGR, oy = cfa == PC_CFA_GBRG || cfa == PC_CFA_BGGR;
    plane M = pl_new(w, h), mR = pl_new(w, h), mG = pl_new(w, h), mB = pl_new(w, h), mGr = pl_new(w, h),
          mGb = pl_new(w, h), MR = pl_new(w, h), MG = pl_new(w, h), MB = pl_new(w, h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            int rr = ((y ^ oy) & 1) == 0, rc = ((x ^ ox) & 1) == 0;
            M.v[i] = raw[i];
            mR.v[i] = rr && rc;
            mB.v[i] = !rr && !rc;
            mGr.v[i] = rr && !rc;
            mGb.v[i] = !rr && rc;
            mG.v[i] = mGr.v[i] + mGb.v[i];
            MR.v[i] = M.v[i] * mR.v[i];
            MG.v[i] = M.v[i] * mG.v[i];
            MB.v[i] = M.v[i] * mB.v[i];
        }
    static const double k2[3] = {0.5, 0, 0.5}, lap1[5] = {-1, 0, 2, 0, -1}, dk[3] = {1, 0, -1};
    plane rawh = corr(&M, k2, 3, 1), rawv = corr(&M, k2, 1, 3);
    plane ggh = pl_new(w, h), grh = pl_new(w, h), gbh = pl_new(w, h), ggv = pl_new(w, h), grv = pl_new(w, h),
          gbv = pl_new(w, h), MGr = mul(&MG, &mGr), MGb = mul(&MG, &mGb);
    for (size_t i = 0; i < n; i++) {
        ggh.v[i] = MG.v[i] + rawh.v[i] * mR.v[i] + rawh.v[i] * mB.v[i];
        grh.v[i] = MR.v[i] + rawh.v[i] * mGr.v[i];
        gbh.v[i] = MB.v[i] + rawh.v[i] * mGb.v[i];
        ggv.v[i] = MG.v[i] + rawv.v[i] * mR.v[i] + rawv.v[i] * mB.v[i];
        grv.v[i] = MR.v[i] + rawv.v[i] * mGb.v[i];
        gbv.v[i] = MB.v[i] + rawv.v[i] * mGr.v[i];
    }
    const int r = 3;
    /* horizontal: R, G at Gr, B, G at Gb; vertical: R, G at Gb, B, G at Gr */
    plane t_rh = tentative(&ggh, &MR, &mR, lap1, 5, 1, r), t_grh = tentative(&grh, &MGr, &mGr, lap1, 5, 1, r),
          t_bh = tentative(&ggh, &MB, &mB, lap1, 5, 1, r), t_gbh = tentative(&gbh, &MGb, &mGb, lap1, 5, 1, r),
          t_rv = tentative(&ggv, &MR, &mR, lap1, 1, 5, r), t_grv = tentative(&grv, &MGb, &mGb, lap1, 1, 5, r),
          t_bv = tentative(&ggv, &MB, &mB, lap1, 1, 5, r), t_gbv = tentative(&gbv, &MGr, &mGr, lap1, 1, 5, r);
    plane e_grh = resid(&t_grh, &MG, &mGr, &mR, k2, 3, 1), e_gbh = resid(&t_gbh, &MG, &mGb, &mB, k2, 3, 1),
          e_rh = resid(&t_rh, &MR, &mR, &mGr, k2, 3, 1), e_bh = resid(&t_bh, &MB, &mB, &mGb, k2, 3, 1),
          e_grv = resid(&t_grv, &MG, &mGb, &mR, k2, 1, 3), e_gbv = resid(&t_gbv, &MG, &mGr, &mB, k2, 1, 3),
          e_rv = resid(&t_rv, &MR, &mR, &mGb, k2, 1, 3), e_bv = resid(&t_bv, &MB, &mB, &mGr, k2, 1, 3);
    plane dh = pl_new(w, h), dv = pl_new(w, h);
    for (size_t i = 0; i < n; i++) {
        dh.v[i] = MG.v[i] + e_grh.v[i] + e_gbh.v[i] - MR.v[i] - MB.v[i] - e_rh.v[i] - e_bh.v[i];
        dv.v[i] = MG.v[i] + e_grv.v[i] + e_gbv.v[i] - MR.v[i] - MB.v[i] - e_rv.v[i] - e_bv.v[i];
    }
    plane dh2 = corr(&dh, dk, 3, 1), dv2 = corr(&dv, dk, 1, 3);
    for (size_t i = 0; i < n; i++) {
        dh2.v[i] = fabs(dh2.v[i]);
        dv2.v[i] = fabs(dv2.v[i]);
    }
    static const double ones9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, kl[3] = {1, 0, 0}, kr[3] = {0, 0, 1};
    plane wh = corr(&dh2, ones9, 3, 3), wv = corr(&dv2, ones9, 3, 3);
    plane Ww = corr(&wh, kl, 3, 1), We = corr(&wh, kr, 3, 1), Wn = corr(&wv, kl, 1, 3), Ws = corr(&wv, kr, 1, 3);
    double gs[9], ke[9] = {0}, kw[9] = {0}, se = 0, sw = 0;
    for (int i = 0; i < 9; i++)
        gs[i] = exp(-(double)(i - 4) * (i - 4) / (2 * 1.4 * 1.4));
    for (int i = 0; i < 9; i++) {
        if (i >= 4) {
            ke[i] = gs[i];
            se += gs[i];
        }
        if (i <= 4) {
            kw[i] = gs[i];
            sw += gs[i];
        }
    }
    for (int i = 0; i < 9; i++) {
        ke[i] /= se;
        kw[i] /= sw;
    }
    plane Dw = corr(&dh, kw, 9, 1), De = corr(&dh, ke, 9, 1), Dn = corr(&dv, kw, 1, 9), Ds = corr(&dv, ke, 1, 9);
    plane G = pl_new(w, h);
    for (size_t i = 0; i < n; i++) {
        double a = 1 / (Ww.v[i] * Ww.v[i] + 1e-2), b = 1 / (We.v[i] * We.v[i] + 1e-2),
               c = 1 / (Wn.v[i] * Wn.v[i] + 1e-2), d = 1 / (Ws.v[i] * Ws.v[i] + 1e-2);
        double dif = (c * Dn.v[i] + d * Ds.v[i] + a * Dw.v[i] + b * De.v[i]) / (a + b + c + d);
        G.v[i] = clipd(mG.v[i] ? M.v[i] : dif + M.v[i]);
    }
    /* red and blue: 2-D Laplacian, 11x11 windows, bilinear residuals */
    static const double lap2[25] = {0, 0, -1, 0, 0, 0, 0, 0, 0, 0, -1, 0, 4, 0, -1, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0};
    static const double bil[9] = {0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25};
    plane out[2];
    for (int c = 0; c < 2; c++) {
        plane *mc = c ? &mB : &mR, *Mc = c ? &MB : &MR;
        plane gmc = mul(&G, mc), I = corr(&gmc, lap2, 5, 5), P = corr(Mc, lap2, 5, 5);
        plane t = gf(&G, Mc, mc, &I, &P, 5);
        plane rs = pl_new(w, h);
        for (size_t i = 0; i < n; i++) {
            t.v[i] = clipd(t.v[i]);
            rs.v[i] = mc->v[i] * (Mc->v[i] - t.v[i]);
        }
        out[c] = corr(&rs, bil, 3, 3);
        for (size_t i = 0; i < n; i++)
            out[c].v[i] = clipd(out[c].v[i] + t.v[i]);
        plane *fr[] = {&gmc, &I, &P, &t, &rs};
        for (unsigned i = 0; i < sizeof fr / sizeof fr[0]; i++)
            pl_free(fr[i]);
    }
    for (size_t i = 0; i < n; i++) {
        rgb[3 * i] = (uint8_t)(out[0].v[i] + 0.5);
        rgb[3 * i + 1] = (uint8_t)(G.v[i] + 0.5);
        rgb[3 * i + 2] = (uint8_t)(out[1].v[i] + 0.5);
    }
    plane *fr[] = {&M, &mR, &mG, &mB, &mGr, &mGb, &MR, &MG, &MB, &rawh, &rawv, &ggh, &grh, &gbh, &ggv, &grv, &gbv,
                   &MGr, &MGb, &t_rh, &t_grh, &t_bh, &t_gbh, &t_rv, &t_grv, &t_bv, &t_gbv, &e_grh, &e_gbh, &e_rh,
                   &e_bh, &e_grv, &e_gbv, &e_rv, &e_bv, &dh, &dv, &dh2, &dv2, &wh, &wv, &Ww, &We, &Wn, &Ws, &Dw,
                   &De, &Dn, &Ds, &G, &out[0], &out[1]};
    for (unsigned i = 0; i < sizeof fr / sizeof fr[0]; i++)
        pl_free(fr[i]);
}

/* --- helpers ---------------------------------------------------------------- */

static int ref_rgb(const uint8_t *raw, int w, int h, pc_cfa cfa, uint8_t *rgb)
{
    pc_bayer b = {raw, (size_t)w, w, h, cfa, 0};
    pc_picture p;
    memset(&p, 0, sizeof p);
    p.fmt = PC_FMT_RGB24;
    p.plane[0] = rgb;
    p.pitch[0] = 3 * (size_t)w;
    p.width = w;
    p.height = h;
    char err[256] = "";
    int rc = pc_ref_debayer(PC_ALGO_MLRI, &b, &p, err, sizeof err);
    if (rc)
        tap_diag("mlri reference: %s", err);
    return rc;
}

/* Runs the reference on rgb mosaicked with every phase; checks that the
 * output equals rgb farther than margin from the border (and, if ex >= 0,
 * farther than margin from column ex). */
static void exact_case(const char *what, const uint8_t *rgb, int w, int h, int margin, int ex)
{
    uint8_t *raw = malloc((size_t)w * h), *out = malloc(3 * (size_t)w * h);
    for (int cfa = 0; cfa < 4; cfa++) {
        tu_mosaic(rgb, w, h, raw, w, h, (pc_cfa)cfa);
        int rc = ref_rgb(raw, w, h, (pc_cfa)cfa, out);
        long nd = 0;
        int md = 0;
        for (int y = margin; y < h - margin && !rc; y++)
            for (int x = margin; x < w - margin; x++) {
                if (ex >= 0 && abs(x - ex) < margin)
                    continue;
                for (int c = 0; c < 3; c++) {
                    int d = abs((int)out[3 * ((size_t)y * w + x) + c] - (int)rgb[3 * ((size_t)y * w + x) + c]);
                    md = d > md ? d : md;
                    nd += d != 0;
                }
            }
        TAP_CHECK(rc == 0 && nd == 0, "mlri %s %dx%d %s: exact beyond %d px (%ld samples differ, max %d)", what, w,
                  h, pc_cfa_name((pc_cfa)cfa), margin, nd, md);
    }
    free(raw);
    free(out);
}

/* Reference vs the independent computation on one mosaic: at least
 * 99.9 % of the samples equal and none more than 2 apart (float vs double). */
static void versus(const char *what, const uint8_t *raw, int w, int h, pc_cfa cfa)
{
    size_t n = (size_t)w * h;
    uint8_t *a = malloc(3 * n), *b = malloc(3 * n);
    int rc = ref_rgb(raw, w, h, cfa, a);
    mlri_independent(raw, w, h, cfa, b);
    long nd = 0;
    int md = 0;
    for (size_t i = 0; i < 3 * n; i++) {
        int d = abs((int)a[i] - (int)b[i]);
        md = d > md ? d : md;
        nd += d != 0;
    }
    TAP_CHECK(rc == 0 && nd * 1000 <= (long)(3 * n) && md <= 2,
              "mlri %s %dx%d %s: reference vs independent double-precision computation: %ld of %zu samples "
              "differ (max %d)",
              what, w, h, pc_cfa_name(cfa), nd, 3 * n, md);
    free(a);
    free(b);
}

int main(void)
{
    /* flat colours: exact everywhere, border included */
    static const uint8_t flats[][3] = {{0, 0, 0}, {255, 255, 255}, {200, 30, 90}, {7, 250, 128}};
    for (unsigned f = 0; f < 4; f++) {
        int w = 24, h = 18;
        uint8_t *rgb = malloc(3 * (size_t)w * h);
        for (int i = 0; i < w * h; i++)
            memcpy(rgb + 3 * i, flats[f], 3);
        char what[64];
        snprintf(what, sizeof what, "flat (%d,%d,%d)", flats[f][0], flats[f][1], flats[f][2]);
        exact_case(what, rgb, w, h, 0, -1);
        free(rgb);
    }
    /* ramps: exact beyond the method's reach from the border */
    {
        int w = 96, h = 80;
        uint8_t *rgb = malloc(3 * (size_t)w * h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                uint8_t *p = rgb + 3 * ((size_t)y * w + x);
                p[0] = p[1] = p[2] = (uint8_t)(40 + x + y);
            }
        exact_case("grey ramp x+y", rgb, w, h, 28, -1);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                uint8_t *p = rgb + 3 * ((size_t)y * w + x);
                p[0] = (uint8_t)(20 + x);
                p[1] = (uint8_t)(60 + x);
                p[2] = (uint8_t)(110 + x);
            }
        exact_case("coloured ramp in x", rgb, w, h, 28, -1);
        /* step edge between two flat colours at x = 48 */
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                static const uint8_t L[3] = {180, 40, 40}, R[3] = {30, 160, 220};
                memcpy(rgb + 3 * ((size_t)y * w + x), x < 48 ? L : R, 3);
            }
        exact_case("step edge", rgb, w, h, 28, 48);
        free(rgb);
    }
    /* the independent computation: synthetic photographs and noise, every
     * phase, sizes down to the smallest the spec allows */
    static const int sizes[][2] = {{8, 8}, {30, 22}, {64, 48}};
    for (int si = 0; si < 3; si++) {
        int w = sizes[si][0], h = sizes[si][1];
        uint8_t *rgb = malloc(3 * (size_t)w * h), *raw = malloc((size_t)w * h);
        tu_synth(rgb, w, h, 5u + si);
        for (int cfa = 0; cfa < 4; cfa++) {
            tu_mosaic(rgb, w, h, raw, w, h, (pc_cfa)cfa);
            versus("synthetic photo", raw, w, h, (pc_cfa)cfa);
        }
        tu_noise(raw, (size_t)w * h, 91u + si);
        versus("noise", raw, w, h, PC_CFA_GBRG);
        free(rgb);
        free(raw);
    }
    /* photographs, when the caller has them (a 256x192 crop of each) */
    const char *dir = getenv("PC_TEST_IMAGES");
    static const char *const names[] = {"astronaut", "coffee"};
    for (int i = 0; i < 2; i++) {
        char path[1024];
        int pw = 0, ph = 0;
        snprintf(path, sizeof path, "%s/%s.ppm", dir ? dir : ".", names[i]);
        uint8_t *photo = dir ? tu_load_ppm(path, &pw, &ph) : NULL;
        if (!photo) {
            tap_diag("no photograph %s (set PC_TEST_IMAGES to a folder of PPMs)", path);
            continue;
        }
        int w = 256, h = 192;
        uint8_t *raw = malloc((size_t)w * h);
        for (int cfa = 0; cfa < 4; cfa += 3) {
            tu_mosaic(photo, pw, ph, raw, w, h, (pc_cfa)cfa);
            versus(names[i], raw, w, h, (pc_cfa)cfa);
        }
        free(raw);
        free(photo);
    }
    return tap_done();
}
