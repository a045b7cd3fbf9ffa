/* reference_formulas.h - the per-pixel formulas of algorithms.md, written
 * once, included twice by reference.c (private; no include guard on
 * purpose):
 *   - scalar:  T = int, one pixel; readers mirror every column index in the
 *              border path (in == 0) and index directly inside (in == 1).
 *              This instantiation is the definition of the reference.
 *   - vector:  T = 16 lanes of int32, the same pixel position in 16
 *              consecutive 2x2 blocks (lane k is pixel x + 2k), interior only.
 * The including file defines, before each inclusion:
 *   FN(name)            suffix for this instantiation
 *   T                   value type
 *   P, G, TA, TB, PREF  readers F(dx, dy) of raw (= T2.c), T2.g, and the
 *                       extra planes (PREF is the signed HED preference)
 *   ABS, CLAMP8, SEL(c, a, b), LT(a, b)
 *   HUE_Q(c, g)         ((c+1) << 12) / (g+1), truncating (§3)
 *   WD_COMBINE(E, D)    CLAMP8(FDIV(N + M, 2M)) of §7.1, exact
 *   PXARGS              (t, j, x, w, site, in)
 * Every formula below is plain integer arithmetic on T, so both
 * instantiations compute the same values; reference.c's tests (and
 * tests/test_reference.c) check that bit for bit.
 */

#define RS(v, k) (((v) + (1 << ((k) - 1))) >> (k))

#define SUM_HOR(F) (F(-1, 0) + F(1, 0))
#define SUM_VER(F) (F(0, -1) + F(0, 1))
#define SUM_CROSS(F) (SUM_HOR(F) + SUM_VER(F))
#define SUM_DIAG(F) (F(-1, -1) + F(1, -1) + F(-1, 1) + F(1, 1))

/* §2 bilinear */
PC_INLINE void FN(px_bilinear)(PXARGS, T *v)
{
    T p = P(0, 0);
    switch (site) {
    case S_R: v[0] = p; v[1] = RS(SUM_CROSS(P), 2); v[2] = RS(SUM_DIAG(P), 2); break;
    case S_GR: v[1] = p; v[0] = RS(SUM_HOR(P), 1); v[2] = RS(SUM_VER(P), 1); break;
    case S_GB: v[1] = p; v[2] = RS(SUM_HOR(P), 1); v[0] = RS(SUM_VER(P), 1); break;
    default: v[2] = p; v[1] = RS(SUM_CROSS(P), 2); v[0] = RS(SUM_DIAG(P), 2); break;
    }
}

/* §3 pass 1: T2.g = bilinear green */
PC_INLINE void FN(px_sh1)(PXARGS, T *v)
{
    if (site == S_GR || site == S_GB)
        v[0] = P(0, 0);
    else
        v[0] = RS(SUM_CROSS(P), 2);
}

/* §3 pass 2: HUE(S) = CLAMP8((((g0+1) * sum q_k + 2^(s-1)) >> s) - 1),
 * s = 13 for two neighbours, 14 for four. (g0+1) * sum q <= 2^30, so
 * int32 holds it exactly, as uint32 would. */
#define HQK(dx, dy) HUE_Q(P(dx, dy), G(dx, dy))
#define HUE_FIN(g0, sumq, s) CLAMP8(((((g0) + 1) * (sumq) + (1 << ((s) - 1))) >> (s)) - 1)
PC_INLINE void FN(px_sh2)(PXARGS, T *v)
{
    T g0 = G(0, 0);
    v[1] = g0;
    switch (site) {
    case S_R: v[0] = P(0, 0); v[2] = HUE_FIN(g0, SUM_DIAG(HQK), 14); break;
    case S_GR: v[0] = HUE_FIN(g0, SUM_HOR(HQK), 13); v[2] = HUE_FIN(g0, SUM_VER(HQK), 13); break;
    case S_GB: v[2] = HUE_FIN(g0, SUM_HOR(HQK), 13); v[0] = HUE_FIN(g0, SUM_VER(HQK), 13); break;
    default: v[2] = P(0, 0); v[0] = HUE_FIN(g0, SUM_DIAG(HQK), 14); break;
    }
}

/* §4 Malvar-He-Cutler: the four kernel shapes in sixteenths (each
 * coefficient of the spec's eighths doubled); value = CLAMP8(RS(k, 4)). */
#define MHC_G() (8 * P(0, 0) + 4 * SUM_CROSS(P) - 2 * (P(-2, 0) + P(2, 0) + P(0, -2) + P(0, 2)))
#define MHC_H() (10 * P(0, 0) + 8 * SUM_HOR(P) - 2 * (P(-2, 0) + P(2, 0)) - 2 * SUM_DIAG(P) \
                 + (P(0, -2) + P(0, 2)))
#define MHC_V() (10 * P(0, 0) + 8 * SUM_VER(P) - 2 * (P(0, -2) + P(0, 2)) - 2 * SUM_DIAG(P) \
                 + (P(-2, 0) + P(2, 0)))
#define MHC_D() (12 * P(0, 0) + 4 * SUM_DIAG(P) - 3 * (P(-2, 0) + P(2, 0) + P(0, -2) + P(0, 2)))
PC_INLINE void FN(px_hq)(PXARGS, T *v)
{
    switch (site) {
    case S_R: v[0] = P(0, 0); v[1] = CLAMP8(RS(MHC_G(), 4)); v[2] = CLAMP8(RS(MHC_D(), 4)); break;
    case S_GR: v[1] = P(0, 0); v[0] = CLAMP8(RS(MHC_H(), 4)); v[2] = CLAMP8(RS(MHC_V(), 4)); break;
    case S_GB: v[1] = P(0, 0); v[0] = CLAMP8(RS(MHC_V(), 4)); v[2] = CLAMP8(RS(MHC_H(), 4)); break;
    default: v[2] = P(0, 0); v[1] = CLAMP8(RS(MHC_G(), 4)); v[0] = CLAMP8(RS(MHC_D(), 4)); break;
    }
}

/* §5 classifiers dH, dV and predictors gH, gV, from raw samples only
 * (valid at any site type, as §6 pass 1 needs). */
#define ED_TERMS()                                                               \
    T c_ = P(0, 0), l_ = P(-1, 0), r_ = P(1, 0), u_ = P(0, -1), d_ = P(0, 1);    \
    T ll_ = P(-2, 0), rr_ = P(2, 0), uu_ = P(0, -2), dd_ = P(0, 2);              \
    T dH = ABS(l_ - r_) + ABS(2 * c_ - ll_ - rr_);                               \
    T dV = ABS(u_ - d_) + ABS(2 * c_ - uu_ - dd_);                               \
    T gH = 2 * (l_ + r_) + 2 * c_ - ll_ - rr_;                                   \
    T gV = 2 * (u_ + d_) + 2 * c_ - uu_ - dd_

/* §5 pass 1: green along the smaller gradient, exact tie -> mean */
PC_INLINE void FN(px_ed1)(PXARGS, T *v)
{
    if (site == S_GR || site == S_GB) {
        v[0] = P(0, 0);
        return;
    }
    ED_TERMS();
    v[0] = SEL(LT(dH, dV), CLAMP8(RS(gH, 2)),
               SEL(LT(dV, dH), CLAMP8(RS(gV, 2)), CLAMP8(RS(gH + gV, 3))));
}

/* §5 pass 2: target = centre green + mean colour difference, CD(S) =
 * sum over S of (T2.c - T2.g) */
#define CDK(dx, dy) (P(dx, dy) - G(dx, dy))
PC_INLINE void FN(px_edf)(PXARGS, T *v)
{
    T g0 = G(0, 0);
    v[1] = g0;
    switch (site) {
    case S_R: v[0] = P(0, 0); v[2] = CLAMP8(RS(4 * g0 + SUM_DIAG(CDK), 2)); break;
    case S_GR: v[0] = CLAMP8(RS(2 * g0 + SUM_HOR(CDK), 1)); v[2] = CLAMP8(RS(2 * g0 + SUM_VER(CDK), 1)); break;
    case S_GB: v[2] = CLAMP8(RS(2 * g0 + SUM_HOR(CDK), 1)); v[0] = CLAMP8(RS(2 * g0 + SUM_VER(CDK), 1)); break;
    default: v[2] = P(0, 0); v[0] = CLAMP8(RS(4 * g0 + SUM_DIAG(CDK), 2)); break;
    }
}

/* §6 pass 1, at every pixel: v = {gh, gv, pref}; pref is +1, -1 or 0 and
 * is stored as its int8 byte. */
PC_INLINE void FN(px_hed1)(PXARGS, T *v)
{
    ED_TERMS();
    v[2] = SEL(LT(dH, dV), 1, SEL(LT(dV, dH), -1, 0));
    if (site == S_GR || site == S_GB) {
        v[0] = c_;
        v[1] = c_;
    } else {
        v[0] = CLAMP8(RS(gH, 2));
        v[1] = CLAMP8(RS(gV, 2));
    }
}

/* §6 pass 2: 3x3 vote of the preferences */
PC_INLINE void FN(px_hed2)(PXARGS, T *v)
{
    if (site == S_GR || site == S_GB) {
        v[0] = P(0, 0);
        return;
    }
    T s = PREF(-1, -1) + PREF(0, -1) + PREF(1, -1) + PREF(-1, 0) + PREF(0, 0) + PREF(1, 0) +
          PREF(-1, 1) + PREF(0, 1) + PREF(1, 1);
    T gh = TA(0, 0), gv = TB(0, 0);
    v[0] = SEL(LT(0, s), gh, SEL(LT(s, 0), gv, RS(gh + gv, 1)));
}

/* §7.1 one direction a = (ax, ay) with perpendicular step p = (qx, qy), at
 * twice the scale: E = 2 X(a) + C(0) - C(2a), D = 2 (1 + |X(-a) - X(a)| +
 * |X(a) - X(3a)| + |C(0) - C(2a)|) + |X(-p) - X(2a-p)| + |X(p) - X(2a+p)|.
 * X and C are reader macros; C0 = C(0,0). */
#define WD_DIR(X, C, k, ax, ay, qx, qy)                                                  \
    do {                                                                                 \
        T xa_ = X(ax, ay), c2a_ = C(2 * (ax), 2 * (ay));                                 \
        E[k] = 2 * xa_ + C0 - c2a_;                                                      \
        D[k] = 2 * (1 + ABS(X(-(ax), -(ay)) - xa_) + ABS(xa_ - X(3 * (ax), 3 * (ay))) +  \
                    ABS(C0 - c2a_)) +                                                    \
               ABS(X(-(qx), -(qy)) - X(2 * (ax) - (qx), 2 * (ay) - (qy))) +             \
               ABS(X(qx, qy) - X(2 * (ax) + (qx), 2 * (ay) + (qy)));                    \
    } while (0)

/* AXIS = N, S, W, E; p = (1,0) for N and S, (0,1) for W and E */
#define WDI_AXIS(X, C, out)             \
    do {                                \
        T E[4], D[4], C0 = C(0, 0);     \
        WD_DIR(X, C, 0, 0, -1, 1, 0);   \
        WD_DIR(X, C, 1, 0, 1, 1, 0);    \
        WD_DIR(X, C, 2, -1, 0, 0, 1);   \
        WD_DIR(X, C, 3, 1, 0, 0, 1);    \
        out = WD_COMBINE(E, D);         \
    } while (0)

/* DIAG4; p = (ax, -ay) */
#define WDI_DIAG(X, C, out)             \
    do {                                \
        T E[4], D[4], C0 = C(0, 0);     \
        WD_DIR(X, C, 0, -1, -1, -1, 1); \
        WD_DIR(X, C, 1, 1, -1, 1, 1);   \
        WD_DIR(X, C, 2, -1, 1, -1, -1); \
        WD_DIR(X, C, 3, 1, 1, 1, -1);   \
        out = WD_COMBINE(E, D);         \
    } while (0)

/* §7.2 pass 1: weighted-directions green */
PC_INLINE void FN(px_wd1)(PXARGS, T *v)
{
    if (site == S_GR || site == S_GB) {
        v[0] = P(0, 0);
        return;
    }
    WDI_AXIS(P, P, v[0]);
}

/* §7.2 pass 2: v = {r, b}; R at B sites and B at R sites along the
 * diagonals; zero at G sites (never read) */
PC_INLINE void FN(px_wdo2)(PXARGS, T *v)
{
    switch (site) {
    case S_R: v[0] = P(0, 0); WDI_DIAG(P, G, v[1]); break;
    case S_B: v[1] = P(0, 0); WDI_DIAG(P, G, v[0]); break;
    default: v[0] = v[1] = P(0, 0) * 0; break;
    }
}

/* §7.2 pass 3: R and B at G sites along the axes */
PC_INLINE void FN(px_wdo3)(PXARGS, T *v)
{
    v[1] = G(0, 0);
    if (site == S_GR || site == S_GB) {
        WDI_AXIS(TA, G, v[0]);
        WDI_AXIS(TB, G, v[2]);
    } else {
        v[0] = TA(0, 0);
        v[2] = TB(0, 0);
    }
}

PC_INLINE void FN(px_kind)(int K, PXARGS, T *v)
{
    switch (K) {
    case K_BIL: FN(px_bilinear)(PXPASS, v); break;
    case K_SH1: FN(px_sh1)(PXPASS, v); break;
    case K_SH2: FN(px_sh2)(PXPASS, v); break;
    case K_HQ: FN(px_hq)(PXPASS, v); break;
    case K_ED1: FN(px_ed1)(PXPASS, v); break;
    case K_EDF: FN(px_edf)(PXPASS, v); break;
    case K_HED1: FN(px_hed1)(PXPASS, v); break;
    case K_HED2: FN(px_hed2)(PXPASS, v); break;
    case K_WD1: FN(px_wd1)(PXPASS, v); break;
    case K_WDO2: FN(px_wdo2)(PXPASS, v); break;
    case K_WDO3: FN(px_wdo3)(PXPASS, v); break;
    }
}

#undef RS
#undef SUM_HOR
#undef SUM_VER
#undef SUM_CROSS
#undef SUM_DIAG
#undef HQK
#undef HUE_FIN
#undef MHC_G
#undef MHC_H
#undef MHC_V
#undef MHC_D
#undef ED_TERMS
#undef CDK
#undef WD_DIR
#undef WDI_AXIS
#undef WDI_DIAG
