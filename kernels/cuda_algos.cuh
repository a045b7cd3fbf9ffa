/* cuda_algos.cuh - the seven algorithms of algorithms.md as tile-local
 * device code for the fused kernel of cuda_kernel.cuh (see there for the
 * struct interface). Integer arithmetic exactly as the spec writes it;
 * all reads are shared-memory loads at compile-time offsets from the site.
 * Sites are in normalised RGGB orientation (cuda_common.cuh).
 *
 * Intermediate planes are stored in the form the final pass consumes, not
 * the paper's T2/T4 byte layout, because on-chip layout is free to choose:
 *  - edge, homogeneous-edge, wd-modified keep d = T2.c - T2.g (int16) at
 *    R/B sites: the constant-hue final pass only ever needs colour
 *    differences and the centre green (= c - d), so this saves one load and
 *    one subtraction per neighbour;
 *  - smooth-hue keeps the hue ratio q = ((c+1)<<12)/(g+1) per R/B site
 *    (computed once per site instead of once per neighbour use, so 2 exact
 *    divisions per 2x2 block instead of 8) plus T2.g;
 *  - homogeneous-edge keeps only the direction preference of pass 1 and
 *    computes gh/gv in pass 2, where they are used (nothing else reads them).
 */
#ifndef PANOCAP_CUDA_ALGOS_CUH
#define PANOCAP_CUDA_ALGOS_CUH

#include "cuda_kernel.cuh"

/* ------------------------------------------------------------------------ */
/* §2 Bilinear: one pass, radius 1. */
struct pc_alg_bilinear {
    static constexpr int RP = 2;
    struct P {
        const uint8_t *raw;
    };
    static PC_HD size_t smem_bytes(int th) { return pc_plane_bytes(th, RP, 1); }
    static PC_DEV P planes(unsigned char *s, int) { P p; p.raw = s; return p; }
    static PC_DEV void passes(const P &, int) {}
    static PC_DEV void own(const P &pl, int off, int &c1, int &g, int &c2)
    {
        pc_plane<uint8_t> q = pc_at(pl.raw, off);
        c1 = q.at<0, 0>();
        g = pc_rs(q.at<-1, 0>() + q.at<1, 0>() + q.at<0, -1>() + q.at<0, 1>(), 2);
        c2 = pc_rs(q.at<-1, -1>() + q.at<1, -1>() + q.at<-1, 1>() + q.at<1, 1>(), 2);
    }
    static PC_DEV void gsite(const P &pl, int off, int &ch, int &g, int &cv)
    {
        pc_plane<uint8_t> q = pc_at(pl.raw, off);
        g = q.at<0, 0>();
        ch = pc_rs(q.at<-1, 0>() + q.at<1, 0>(), 1);
        cv = pc_rs(q.at<0, -1>() + q.at<0, 1>(), 1);
    }
};

/* ------------------------------------------------------------------------ */
/* §4 High-quality linear (Malvar-He-Cutler): one pass, radius 2, weights in
 * sixteenths, CLAMP8(RS(sum, 4)). */
struct pc_alg_hqlinear {
    static constexpr int RP = 2;
    struct P {
        const uint8_t *raw;
    };
    static PC_HD size_t smem_bytes(int th) { return pc_plane_bytes(th, RP, 1); }
    static PC_DEV P planes(unsigned char *s, int) { P p; p.raw = s; return p; }
    static PC_DEV void passes(const P &, int) {}
    static PC_DEV void own(const P &pl, int off, int &c1, int &g, int &c2)
    {
        pc_plane<uint8_t> q = pc_at(pl.raw, off);
        const int p0 = q.at<0, 0>();
        const int ax2 = q.at<-2, 0>() + q.at<2, 0>() + q.at<0, -2>() + q.at<0, 2>();
        const int cross = q.at<-1, 0>() + q.at<1, 0>() + q.at<0, -1>() + q.at<0, 1>();
        const int diag = q.at<-1, -1>() + q.at<1, -1>() + q.at<-1, 1>() + q.at<1, 1>();
        c1 = p0;
        g = pc_clamp8(pc_rs(4 * p0 + 2 * cross - ax2, 3));       /* K_G */
        c2 = pc_clamp8(pc_rs(12 * p0 + 4 * diag - 3 * ax2, 4));  /* K_D */
    }
    static PC_DEV void gsite(const P &pl, int off, int &ch, int &g, int &cv)
    {
        pc_plane<uint8_t> q = pc_at(pl.raw, off);
        const int p0 = q.at<0, 0>();
        const int h1 = q.at<-1, 0>() + q.at<1, 0>(), v1 = q.at<0, -1>() + q.at<0, 1>();
        const int h2 = q.at<-2, 0>() + q.at<2, 0>(), v2 = q.at<0, -2>() + q.at<0, 2>();
        const int diag = q.at<-1, -1>() + q.at<1, -1>() + q.at<-1, 1>() + q.at<1, 1>();
        const int base = 10 * p0 - 2 * diag;
        g = p0;
        ch = pc_clamp8(pc_rs(base + 8 * h1 - 2 * h2 + v2, 4)); /* K_H */
        cv = pc_clamp8(pc_rs(base + 8 * v1 - 2 * v2 + h2, 4)); /* K_V */
    }
};

/* hq-linear's 4px step computes blocks A (off) and B (off + 2) together:
 * every filter is a linear combination of samples followed by RS and
 * CLAMP8, so it runs once on packed values v = vA + 65536 * vB (plain
 * 32-bit integer arithmetic: lane B's column is lane A's plus 2, and the
 * exact integer identity holds through any borrow), halving the adds and
 * multiplies of the 16 filters of a step. Packed samples come from 32-bit
 * smem words (off is 4-aligned): the even bytes of a word are columns
 * (c, c+2), the odd bytes (c+1, c+3), and one PRMT shifts by a column
 * pair across words. Then lane A is biased by 2^14 so it is non-negative
 * (every numerator lies in [-3060, 7148], spec §4 weights), which makes
 * both 16-bit fields exact two's complement lanes; one DPX
 * VIADDMNMX.S16x2.RELU removes the bias and clamps both lanes to
 * [0, 256 * 2^k - 1], i.e. CLAMP8(RS(n, k)) << k, and two shifts/masks
 * take the bytes out. */
struct pc_hq_row {
    unsigned m2, m1, z0, p1, p2, p3; /* packed columns -2 .. 3 */
    PC_DEV explicit pc_hq_row(const uint8_t *row)
    {
        const uint32_t *w = (const uint32_t *)row;
        const unsigned wl = w[-1], w0 = w[0], wr = w[1];
        const unsigned el = wl & 0x00FF00FFu, e0 = w0 & 0x00FF00FFu, er = wr & 0x00FF00FFu;
        const unsigned ol = __byte_perm(wl, 0, 0x4341), o0 = __byte_perm(w0, 0, 0x4341),
                       orr = __byte_perm(wr, 0, 0x4341);
        m2 = __byte_perm(el, e0, 0x5432);
        m1 = __byte_perm(ol, o0, 0x5432);
        z0 = e0;
        p1 = o0;
        p2 = __byte_perm(e0, er, 0x5432);
        p3 = __byte_perm(o0, orr, 0x5432);
    }
};

template <int K>
PC_DEV void pc_hq_out(unsigned n, int &a, int &b)
{
    const unsigned t = n + (16384u + (1u << (K - 1))) + ((1u << (K - 1)) << 16);
    const unsigned c = __viaddmin_s16x2_relu(t, 0x0000C000u, ((256u << K) - 1u) * 0x10001u);
    a = (int)((c >> K) & 0xFFu);
    b = (int)(c >> (16 + K));
}

template <>
struct pc_pair<pc_alg_hqlinear> {
    static PC_DEV void compute(const pc_alg_hqlinear::P &pl, int off, pc_quad<pc_alg_hqlinear> &qa,
                               pc_quad<pc_alg_hqlinear> &qb)
    {
        const uint8_t *q = pl.raw + off;
        const pc_hq_row rm2(q - 2 * PC_SR), rm1(q - PC_SR), r0(q), r1(q + PC_SR), r2(q + 2 * PC_SR),
            r3(q + 3 * PC_SR);
        /* raw samples of the four sites */
        qa.r[0] = (int)(r0.z0 & 0xFFu); qb.r[0] = (int)(r0.z0 >> 16);
        qa.g[1] = (int)(r0.p1 & 0xFFu); qb.g[1] = (int)(r0.p1 >> 16);
        qa.g[2] = (int)(r1.z0 & 0xFFu); qb.g[2] = (int)(r1.z0 >> 16);
        qa.b[3] = (int)(r1.p1 & 0xFFu); qb.b[3] = (int)(r1.p1 >> 16);
        { /* R (0,0): K_G, K_D */
            const unsigned p0 = r0.z0;
            const unsigned ax2 = r0.m2 + r0.p2 + rm2.z0 + r2.z0;
            const unsigned cross = r0.m1 + r0.p1 + rm1.z0 + r1.z0;
            const unsigned diag = rm1.m1 + rm1.p1 + r1.m1 + r1.p1;
            pc_hq_out<3>(4 * p0 + 2 * cross - ax2, qa.g[0], qb.g[0]);
            pc_hq_out<4>(12 * p0 + 4 * diag - 3 * ax2, qa.b[0], qb.b[0]);
        }
        { /* Gr (1,0): K_H -> R, K_V -> B */
            const unsigned p0 = r0.p1;
            const unsigned h1 = r0.z0 + r0.p2, v1 = rm1.p1 + r1.p1;
            const unsigned h2 = r0.m1 + r0.p3, v2 = rm2.p1 + r2.p1;
            const unsigned diag = rm1.z0 + rm1.p2 + r1.z0 + r1.p2;
            const unsigned base = 10 * p0 - 2 * diag;
            pc_hq_out<4>(base + 8 * h1 - 2 * h2 + v2, qa.r[1], qb.r[1]);
            pc_hq_out<4>(base + 8 * v1 - 2 * v2 + h2, qa.b[1], qb.b[1]);
        }
        { /* Gb (0,1): K_H -> B, K_V -> R */
            const unsigned p0 = r1.z0;
            const unsigned h1 = r1.m1 + r1.p1, v1 = r0.z0 + r2.z0;
            const unsigned h2 = r1.m2 + r1.p2, v2 = rm1.z0 + r3.z0;
            const unsigned diag = r0.m1 + r0.p1 + r2.m1 + r2.p1;
            const unsigned base = 10 * p0 - 2 * diag;
            pc_hq_out<4>(base + 8 * h1 - 2 * h2 + v2, qa.b[2], qb.b[2]);
            pc_hq_out<4>(base + 8 * v1 - 2 * v2 + h2, qa.r[2], qb.r[2]);
        }
        { /* B (1,1): K_G, K_D */
            const unsigned p0 = r1.p1;
            const unsigned ax2 = r1.m1 + r1.p3 + rm1.p1 + r3.p1;
            const unsigned cross = r1.z0 + r1.p2 + r0.p1 + r2.p1;
            const unsigned diag = r0.z0 + r0.p2 + r2.z0 + r2.p2;
            pc_hq_out<3>(4 * p0 + 2 * cross - ax2, qa.g[3], qb.g[3]);
            pc_hq_out<4>(12 * p0 + 4 * diag - 3 * ax2, qa.r[3], qb.r[3]);
        }
    }
};

/* ------------------------------------------------------------------------ */
/* §3 Smooth hue transition: pass 1 bilinear green and the per-site hue
 * ratio; pass 2 (final) the mean of neighbour ratios times the centre green. */
struct pc_alg_smoothhue {
    static constexpr int RP = 2;
    struct P {
        const uint8_t *raw;
        uint8_t *g;
        uint32_t *q;
        uint32_t *recip; /* recip[d-1] = ceil(2^31 / d), d = 1..256 */
    };
    static PC_HD size_t smem_bytes(int th)
    {
        return pc_plane_bytes(th, RP, 1) * 2 + pc_plane_bytes(th, RP, 4) + 256 * 4;
    }
    static PC_DEV P planes(unsigned char *s, int th)
    {
        P p;
        size_t b = pc_plane_bytes(th, RP, 1);
        p.raw = s;
        p.g = s + b;
        p.q = (uint32_t *)(s + 2 * b);
        p.recip = (uint32_t *)(s + 2 * b + pc_plane_bytes(th, RP, 4));
        return p;
    }
    static PC_DEV void site(const P &pl, int off)
    {
        pc_plane<uint8_t> q = pc_at(pl.raw, off);
        const int g = pc_rs(q.at<-1, 0>() + q.at<1, 0>() + q.at<0, -1>() + q.at<0, 1>(), 2);
        pl.g[off] = (uint8_t)g;
        /* q = ((c+1) << 12) / (g+1), exactly: with n <= 2^20 and d <= 256,
         * umulhi(2n, ceil(2^31/d)) = floor(n/d) (error < 2^-11 < 1/d). No
         * hardware integer division, no float. */
        pl.q[off] = __umulhi((unsigned)(q.at<0, 0>() + 1) << 13, pl.recip[g]);
    }
    static PC_DEV void passes(const P &pl, int th)
    {
        for (int d = threadIdx.x + 1; d <= 256; d += PC_NT)
            pl.recip[d - 1] = (0x80000000u + (unsigned)d - 1u) / (unsigned)d;
        __syncthreads();
        pc_for_pairs<RP, 1>(th, [&](int r, int b) { site(pl, r); site(pl, b); });
        __syncthreads();
    }
    /* HUE(S) of §3 with sum = sum of q_k over S, s = 12 + log2|S|. */
    static PC_DEV int hue(unsigned g0, unsigned sum, int s)
    {
        return pc_clamp8((int)(((g0 + 1) * sum + (1u << (s - 1))) >> s) - 1);
    }
    static PC_DEV void own(const P &pl, int off, int &c1, int &g, int &c2)
    {
        pc_plane<uint32_t> q = pc_at((const uint32_t *)pl.q, off);
        c1 = pl.raw[off];
        g = pl.g[off];
        c2 = hue(g, q.at<-1, -1>() + q.at<1, -1>() + q.at<-1, 1>() + q.at<1, 1>(), 14);
    }
    static PC_DEV void gsite(const P &pl, int off, int &ch, int &g, int &cv)
    {
        pc_plane<uint32_t> q = pc_at((const uint32_t *)pl.q, off);
        g = pl.raw[off];
        ch = hue(g, q.at<-1, 0>() + q.at<1, 0>(), 13);
        cv = hue(g, q.at<0, -1>() + q.at<0, 1>(), 13);
    }
};

/* ------------------------------------------------------------------------ */
/* The constant-hue final pass of §5 (edge, homogeneous-edge, wd-modified),
 * on d = c - g at R/B sites. */
struct pc_ed_final {
    static PC_DEV void own(const uint8_t *raw, const int16_t *dp, int off, int &c1, int &g, int &c2)
    {
        pc_plane<int16_t> d = pc_at(dp, off);
        c1 = raw[off];
        g = c1 - d.at<0, 0>();
        c2 = pc_clamp8(pc_rs(4 * g + d.at<-1, -1>() + d.at<1, -1>() + d.at<-1, 1>() + d.at<1, 1>(), 2));
    }
    static PC_DEV void gsite(const uint8_t *raw, const int16_t *dp, int off, int &ch, int &g, int &cv)
    {
        pc_plane<int16_t> d = pc_at(dp, off);
        g = raw[off];
        ch = pc_clamp8(pc_rs(2 * g + d.at<-1, 0>() + d.at<1, 0>(), 1));
        cv = pc_clamp8(pc_rs(2 * g + d.at<0, -1>() + d.at<0, 1>(), 1));
    }
};

/* §5 pass 1 terms at an R/B site (also at G sites for the HED preference). */
struct pc_ha {
    int dH, dV, gH, gV;
    PC_DEV pc_ha(const pc_plane<uint8_t> &q)
    {
        const int p0 = q.at<0, 0>();
        const int l = q.at<-1, 0>(), r = q.at<1, 0>(), u = q.at<0, -1>(), d = q.at<0, 1>();
        const int lap_h = 2 * p0 - q.at<-2, 0>() - q.at<2, 0>();
        const int lap_v = 2 * p0 - q.at<0, -2>() - q.at<0, 2>();
        /* __usad(x, y, z) = |x - y| + z: one VABSDIFF instead of IADD+IABS+IADD */
        dH = __usad(l, r, __usad(2 * p0, q.at<-2, 0>() + q.at<2, 0>(), 0));
        dV = __usad(u, d, __usad(2 * p0, q.at<0, -2>() + q.at<0, 2>(), 0));
        gH = 2 * (l + r) + lap_h;
        gV = 2 * (u + d) + lap_v;
    }
};

/* Layout shared by the algorithms whose final pass is pc_ed_final: raw,
 * then the d plane (int16), then an optional extra plane of es bytes. */
template <int RP_, int EXTRA_ES>
struct pc_ed_layout {
    static constexpr int RP = RP_;
    struct P {
        const uint8_t *raw;
        int16_t *d;
        int8_t *extra;
    };
    static PC_HD size_t smem_bytes(int th)
    {
        return pc_plane_bytes(th, RP, 1) + pc_plane_bytes(th, RP, 2) +
               (EXTRA_ES ? pc_plane_bytes(th, RP, EXTRA_ES) : 0);
    }
    static PC_DEV P planes(unsigned char *s, int th)
    {
        P p;
        p.raw = s;
        p.d = (int16_t *)(s + pc_plane_bytes(th, RP, 1));
        p.extra = (int8_t *)(s + pc_plane_bytes(th, RP, 1) + pc_plane_bytes(th, RP, 2));
        return p;
    }
    static PC_DEV void own(const P &pl, int off, int &c1, int &g, int &c2)
    {
        pc_ed_final::own(pl.raw, pl.d, off, c1, g, c2);
    }
    static PC_DEV void gsite(const P &pl, int off, int &ch, int &g, int &cv)
    {
        pc_ed_final::gsite(pl.raw, pl.d, off, ch, g, cv);
    }
};

/* §5 Edge-directed (Hamilton-Adams green + constant hue). */
struct pc_alg_edge : pc_ed_layout<4, 0> {
    static PC_DEV void site(const P &pl, int off)
    {
        pc_plane<uint8_t> q = pc_at(pl.raw, off);
        pc_ha h(q);
        int g;
        if (h.dH < h.dV)
            g = pc_clamp8(pc_rs(h.gH, 2));
        else if (h.dV < h.dH)
            g = pc_clamp8(pc_rs(h.gV, 2));
        else
            g = pc_clamp8(pc_rs(h.gH + h.gV, 3));
        pl.d[off] = (int16_t)(q.at<0, 0>() - g);
    }
    static PC_DEV void passes(const P &pl, int th)
    {
        pc_for_pairs<RP, 1>(th, [&](int r, int b) { site(pl, r); site(pl, b); });
        __syncthreads();
    }
};

/* §6 Homogeneous edge-directed: pass 1 the preference sign at every pixel
 * (extra plane, int8) and, at R/B sites, both directional greens gh, gv
 * (packed in a uint16 plane: pass 1 has the HA terms at hand anyway, so
 * pass 2 need not recompute them); pass 2 the 3x3 vote and green. */
struct pc_alg_hed : pc_ed_layout<4, 1> {
    static PC_HD size_t smem_bytes(int th) { return pc_ed_layout<4, 1>::smem_bytes(th) + pc_plane_bytes(th, RP, 2); }
    static PC_DEV uint16_t *ghv(const P &pl, int th)
    {
        return (uint16_t *)((unsigned char *)pl.extra + pc_plane_bytes(th, RP, 1));
    }
    static PC_DEV int pref(const pc_ha &h) { return (h.dH < h.dV) - (h.dV < h.dH); }
    static PC_DEV void rb_site(const P &pl, uint16_t *gg, int off)
    {
        pc_ha h(pc_at(pl.raw, off));
        pl.extra[off] = (int8_t)pref(h);
        gg[off] = (uint16_t)(pc_clamp8(pc_rs(h.gH, 2)) | (pc_clamp8(pc_rs(h.gV, 2)) << 8));
    }
    static PC_DEV void site(const P &pl, const uint16_t *gg, int off)
    {
        pc_plane<int8_t> f = pc_at((const int8_t *)pl.extra, off);
        const int s = f.at<-1, -1>() + f.at<0, -1>() + f.at<1, -1>() + f.at<-1, 0>() + f.at<0, 0>() +
                      f.at<1, 0>() + f.at<-1, 1>() + f.at<0, 1>() + f.at<1, 1>();
        const int v = gg[off], gh = v & 0xFF, gv = v >> 8;
        const int g = s > 0 ? gh : s < 0 ? gv : pc_rs(gh + gv, 1);
        pl.d[off] = (int16_t)(pl.raw[off] - g);
    }
    static PC_DEV void passes(const P &pl, int th)
    {
        uint16_t *gg = ghv(pl, th);
        pc_for_pairs<RP, 2>(th, [&](int r, int) {
            rb_site(pl, gg, r);
            rb_site(pl, gg, r + PC_SR + 1);
            pl.extra[r + 1] = (int8_t)pref(pc_ha(pc_at(pl.raw, r + 1)));
            pl.extra[r + PC_SR] = (int8_t)pref(pc_ha(pc_at(pl.raw, r + PC_SR)));
        });
        __syncthreads();
        pc_for_pairs<RP, 1>(th, [&](int r, int b) { site(pl, gg, r); site(pl, gg, b); });
        __syncthreads();
    }
};

/* ------------------------------------------------------------------------ */
/* §7.1 WDI(X, C, DIRS): directional estimates E_a (twice scale) weighted by
 * 1/D_a, evaluated exactly as floor((N + M) / (2M)) with N = sum E_a Q_a,
 * M = sum Q_a, Q_a = product of the other three D.
 *
 * How, without 64-bit division: a float estimate t of (N+M)/(2M) is within
 * 3e-4 of the true value (all inputs are exact small integers; about a
 * dozen roundings of 2^-24 relative each, scaled by |E| <= 765). If t is
 * farther than 1/512 from an integer, floor(t) is the answer. Otherwise
 * the answer is k or k-1 for k = nearest integer, and the exact sign of
 * N + M - 2kM = sum (E_a + 1 - 2k) Q_a in int64 decides. The exact branch
 * is rare on natural images (it is taken on flat areas) and costs ~20
 * integer instructions. */
PC_DEV float pc_i2f(int v) { return __int_as_float(0x4B400000 + v) - 12582912.0f; }
PC_DEV int pc_f2i(float f) { return __float_as_int(f + 12582912.0f) - 0x4B400000; } /* f integral */

struct pc_wd_acc {
    int D[4], E[4];
    template <int I, int AX, int AY, int PX, int PY, class XA, class CA>
    PC_DEV void dir(const XA &X, const CA &C, int c0)
    {
        const int xa = X.template at<AX, AY>(), xma = X.template at<-AX, -AY>();
        const int x3a = X.template at<3 * AX, 3 * AY>();
        const int xmp = X.template at<-PX, -PY>(), x2amp = X.template at<2 * AX - PX, 2 * AY - PY>();
        const int xp = X.template at<PX, PY>(), x2app = X.template at<2 * AX + PX, 2 * AY + PY>();
        const int c2a = C.template at<2 * AX, 2 * AY>();
        /* all operands are 8-bit samples, so the unsigned |x - y| + z form
         * of __usad is exact */
        const int t = __usad(xma, xa, __usad(xa, x3a, __usad(c0, c2a, 1)));
        D[I] = __usad(xmp, x2amp, __usad(xp, x2app, 2 * t));
        E[I] = 2 * xa + c0 - c2a;
    }
    PC_DEV int result() const
    {
        /* int -> float by the magic-number trick (IADD + FADD on the fast
         * pipes instead of I2F on the quarter-rate conversion unit):
         * bits 0x4B400000 + v are the float 1.5*2^23 + v for |v| < 2^22. */
        const float d0 = pc_i2f(D[0]), d1 = pc_i2f(D[1]), d2 = pc_i2f(D[2]), d3 = pc_i2f(D[3]);
        const float p01 = d0 * d1, p23 = d2 * d3; /* exact: < 2^22 */
        const float q0 = d1 * p23, q1 = d0 * p23, q2 = d3 * p01, q3 = d2 * p01;
        const float n = pc_i2f(E[0]) * q0 + pc_i2f(E[1]) * q1 + pc_i2f(E[2]) * q2 + pc_i2f(E[3]) * q3;
        const float m = (q0 + q1) + (q2 + q3);
        const float t = 0.5f * __fdividef(n, m) + 0.5f;
        const float k = (t + 12582912.0f) - 12582912.0f; /* round to nearest, |t| < 2^22 */
        int res;
        if (fabsf(t - k) > (1.0f / 512.0f)) {
            res = pc_f2i(t < k ? k - 1.0f : k); /* floor(t) */
        } else {
            const int ki = pc_f2i(k);
            const long long P01 = (long long)D[0] * D[1], P23 = (long long)D[2] * D[3];
            const long long s = (long long)(E[0] + 1 - 2 * ki) * (D[1] * P23) +
                                (long long)(E[1] + 1 - 2 * ki) * (D[0] * P23) +
                                (long long)(E[2] + 1 - 2 * ki) * (D[3] * P01) +
                                (long long)(E[3] + 1 - 2 * ki) * (D[2] * P01);
            res = s >= 0 ? ki : ki - 1;
        }
        return pc_clamp8(res);
    }
    /* AXIS = {N, S, W, E} with p = (1,0) for N/S and (0,1) for W/E. */
    template <class XA, class CA>
    PC_DEV int axis(const XA &X, const CA &C)
    {
        const int c0 = C.template at<0, 0>();
        dir<0, 0, -1, 1, 0>(X, C, c0);
        dir<1, 0, 1, 1, 0>(X, C, c0);
        dir<2, -1, 0, 0, 1>(X, C, c0);
        dir<3, 1, 0, 0, 1>(X, C, c0);
        return result();
    }
    /* DIAG4 with p = (ax, -ay). */
    template <class XA, class CA>
    PC_DEV int diag(const XA &X, const CA &C)
    {
        const int c0 = C.template at<0, 0>();
        dir<0, -1, -1, -1, 1>(X, C, c0);
        dir<1, 1, -1, 1, 1>(X, C, c0);
        dir<2, -1, 1, -1, -1>(X, C, c0);
        dir<3, 1, 1, 1, -1>(X, C, c0);
        return result();
    }
};

/* §7.3 Weighted directions, modified: WD green, then the §5 final pass. */
struct pc_alg_wdmod : pc_ed_layout<4, 0> {
    static PC_DEV void site(const P &pl, int off)
    {
        pc_plane<uint8_t> q = pc_at(pl.raw, off);
        pc_wd_acc w;
        pl.d[off] = (int16_t)(q.at<0, 0>() - w.axis(q, q));
    }
    static PC_DEV void passes(const P &pl, int th)
    {
        pc_for_pairs<RP, 1>(th, [&](int r, int b) { site(pl, r); site(pl, b); });
        __syncthreads();
    }
};

/* X accessor of §7.2 pass 3: the target colour is raw at the sites one
 * step along the axis of HORIZ-parity and in the O plane at the others. */
template <int RAW_WHEN_DX_ODD>
struct pc_wd_mix {
    pc_plane<uint8_t> raw, o;
    template <int DX, int DY>
    PC_DEV int at() const
    {
        return ((DX & 1) == RAW_WHEN_DX_ODD) ? raw.at<DX, DY>() : o.at<DX, DY>();
    }
};

/* §7.2 Weighted directions, original: pass 1 WD green (G plane), pass 2
 * the other colour at R/B sites along diagonals (O plane), pass 3 (final)
 * R and B at G sites along the axes. Radius 3 per pass, 9 in total. */
struct pc_alg_wdorig {
    static constexpr int RP = 8;
    struct P {
        const uint8_t *raw;
        uint8_t *g, *o;
    };
    static PC_HD size_t smem_bytes(int th) { return 3 * pc_plane_bytes(th, RP, 1); }
    static PC_DEV P planes(unsigned char *s, int th)
    {
        P p;
        size_t b = pc_plane_bytes(th, RP, 1);
        p.raw = s;
        p.g = s + b;
        p.o = s + 2 * b;
        return p;
    }
    static PC_DEV void green(const P &pl, int off)
    {
        pc_plane<uint8_t> q = pc_at(pl.raw, off);
        pc_wd_acc w;
        pl.g[off] = (uint8_t)w.axis(q, q);
    }
    static PC_DEV void other(const P &pl, int off)
    {
        pc_wd_acc w;
        pl.o[off] = (uint8_t)w.diag(pc_at(pl.raw, off), pc_at((const uint8_t *)pl.g, off));
    }
    static PC_DEV void passes(const P &pl, int th)
    {
        pc_for_pairs<RP, 5>(th, [&](int r, int b) { green(pl, r); green(pl, b); });
        __syncthreads();
        pc_for_pairs<RP, 3>(th, [&](int r, int b) { other(pl, r); other(pl, b); });
        __syncthreads();
    }
    static PC_DEV void own(const P &pl, int off, int &c1, int &g, int &c2)
    {
        c1 = pl.raw[off];
        g = pl.g[off];
        c2 = pl.o[off];
    }
    static PC_DEV void gsite(const P &pl, int off, int &ch, int &g, int &cv)
    {
        pc_plane<uint8_t> q = pc_at(pl.raw, off);
        pc_wd_mix<1> xh; /* colour of the horizontal neighbours: raw at odd dx */
        xh.raw = q;
        xh.o = pc_at((const uint8_t *)pl.o, off);
        pc_wd_mix<0> xv; /* colour of the vertical neighbours: raw at odd dy */
        xv.raw = q;
        xv.o = xh.o;
        g = q.at<0, 0>();
        pc_wd_acc w;
        ch = w.axis(xh, q);
        cv = w.axis(xv, q);
    }
};

#endif
