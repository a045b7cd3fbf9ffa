/* net_cpu_lanes.h - the CPU backend's learned demosaic (net_cpu.c says how
 * the work is split), private to net_cpu*.c. The first part, the job, is
 * common; the rest is one build of the loops, made once per file that
 * defines PC_NET_LANES (the name of the pc_net_lanes it exports) and
 * PC_NET_VL (4, 8 or 16 floats a vector) before including this:
 * net_cpu.c with 4 (baseline: plain multiply then add), net_cpu_avx2.c
 * with 8 and net_cpu_avx512.c with 16, both with fused multiply-adds.
 *
 * One work item is a rectangle of one camera: camera columns [c0, c1),
 * rows [r0, r1). It streams the network row by row through line buffers
 * (a ring of 3 rows per half-resolution layer, 4 rows of the 6-channel
 * full-resolution input of post): each new packed row lets every layer
 * compute one more row, two full-resolution rows follow from each row of
 * the last layer. Every layer computes the columns its successors need
 * for the rectangle, so the rectangle's output is the whole network's.
 *
 * The 3x3 layers (the main ones and post, 99 % of the arithmetic) are
 * direct convolutions on channel-interleaved rows (pixel x, channel c at
 * x * C + c): a block of PB output pixels x CB output channels (NV
 * vectors) is held in registers while the loop runs over kernel row,
 * kernel column and input channel, each step one broadcast input per
 * pixel and NV weight vectors (the weights packed per block of CB output
 * channels as [ky][kx][ci][CB], once per frame). Channel counts are
 * padded to a multiple of CB with zero weights and biases (the published
 * widths, 64 and 128, need none).
 */
#ifndef PANOCAP_NET_CPU_LANES_H
#define PANOCAP_NET_CPU_LANES_H

#include "net_impl.h"

typedef struct pc_net_job {
    pc_net_frame f;
    const float *wp;      /* the build's packed weights */
    int nstrips, nbands;  /* per camera: column strips x row bands */
    int nitems;           /* ncam x nstrips x nbands */
    int next;             /* the next item to take (atomic) */
    float *scratch;       /* per thread: thread_floats each */
    size_t thread_floats;
    const struct pc_net_lanes *lanes;
} pc_net_job;

typedef struct pc_net_lanes {
    const char *name;
    size_t (*weights_floats)(const pc_net *net);
    size_t (*thread_floats)(const pc_net *net, int w);
    void (*pack)(const pc_net *net, float *wp);
    void (*item)(const pc_net_job *job, int item, float *scratch);
} pc_net_lanes;

#endif

#ifdef PC_NET_LANES

#include <string.h>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#pragma GCC diagnostic ignored "-Wpsabi"

#define INL static inline __attribute__((always_inline))

#define VL PC_NET_VL
#define NV 2
#define CB (NV * VL)
#if VL == 16
#define PB 12
#else
#define PB 6
#endif
typedef float vf __attribute__((vector_size(4 * VL)));

INL vf vload(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}
INL void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }
INL vf vbcast(float x) { return (vf){0} + x; }
#if VL == 16 && defined(__AVX512F__)
INL vf vfma(vf a, vf b, vf c) { return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c); }
INL vf vrelu(vf a) { return (vf)_mm512_max_ps((__m512)a, _mm512_setzero_ps()); }
#elif VL == 8 && defined(__FMA__)
INL vf vfma(vf a, vf b, vf c) { return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c); }
INL vf vrelu(vf a) { return (vf)_mm256_max_ps((__m256)a, _mm256_setzero_ps()); }
#else
INL vf vfma(vf a, vf b, vf c) { return a * b + c; }
INL vf vrelu(vf a)
{
    for (int i = 0; i < VL; i++)
        a[i] = a[i] > 0.0f ? a[i] : 0.0f;
    return a;
}
#endif

static inline int rup(int v, int m) { return (v + m - 1) / m * m; }
static inline size_t rup16(size_t v) { return (v + 15) & ~(size_t)15; }

/* Channels stored per pixel of layer l's output: 0 = pack (4), 1..D the
 * main layers, D + 1 = post. */
static int chans(const pc_net *n, int l)
{
    if (l == 0)
        return 4;
    if (l <= n->depth)
        return rup(n->main[l - 1].cout, CB);
    return rup(n->post.cout, CB);
}

/* Floats of one packed 3x3 conv: weights [cob][3][3][cin_s][CB], bias [cob][CB]. */
static size_t conv_floats(int cout, int cin_s) { return rup16((size_t)rup(cout, CB) * (9 * (size_t)cin_s + 1)); }

static size_t weights_floats(const pc_net *n)
{
    size_t s = 0;
    for (int l = 0; l < n->depth; l++)
        s += conv_floats(n->main[l].cout, chans(n, l));
    return s + conv_floats(n->post.cout, 6);
}

static float *pack_conv(const pc_net_conv *c, int cin_s, float *wp)
{
    const int cobs = rup(c->cout, CB) / CB;
    float *w = wp, *b = wp + (size_t)cobs * 9 * cin_s * CB;
    for (int cob = 0; cob < cobs; cob++) {
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++)
                for (int ci = 0; ci < cin_s; ci++)
                    for (int j = 0; j < CB; j++) {
                        const int co = cob * CB + j;
                        *w++ = co < c->cout && ci < c->cin ? c->w[((co * c->cin + ci) * 3 + ky) * 3 + kx] : 0.0f;
                    }
        for (int j = 0; j < CB; j++)
            b[cob * CB + j] = cob * CB + j < c->cout ? c->b[cob * CB + j] : 0.0f;
    }
    return wp + conv_floats(c->cout, cin_s);
}

static void pack(const pc_net *n, float *wp)
{
    for (int l = 0; l < n->depth; l++)
        wp = pack_conv(&n->main[l], chans(n, l), wp);
    pack_conv(&n->post, 6, wp);
}

/* PB (or P < PB at the row's end: computed as PB into the rows' slack)
 * output pixels x CB channels of a 3x3 conv. in[ky] points at the block's
 * first input pixel of kernel row ky (stride cin_s floats a pixel). */
INL void conv3_block(const float *const in[3], int cin_s, const float *w, const float *bias, float *out, int cs,
                     int relu)
{
    vf acc[PB][NV];
    for (int v = 0; v < NV; v++) {
        const vf b = vload(bias + v * VL);
        for (int p = 0; p < PB; p++)
            acc[p][v] = b;
    }
    for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
            const float *x = in[ky] + kx * cin_s;
            for (int ci = 0; ci < cin_s; ci++, w += CB) {
                vf wv[NV];
                for (int v = 0; v < NV; v++)
                    wv[v] = vload(w + v * VL);
                for (int p = 0; p < PB; p++) {
                    const vf b = vbcast(x[p * cin_s + ci]);
                    for (int v = 0; v < NV; v++)
                        acc[p][v] = vfma(b, wv[v], acc[p][v]);
                }
            }
        }
    for (int p = 0; p < PB; p++)
        for (int v = 0; v < NV; v++)
            vstore(out + (size_t)p * cs + v * VL, relu ? vrelu(acc[p][v]) : acc[p][v]);
}

/* A row of n output pixels of a packed 3x3 conv (cout padded: cs floats a
 * pixel) from three input rows of cin_s floats a pixel; writes up to PB - 1
 * pixels of slack past n. */
static void conv3_row(const float *r0, const float *r1, const float *r2, int cin_s, const float *wp, int cout_s,
                      float *out, int n, int relu)
{
    const int cobs = cout_s / CB;
    const float *bias = wp + (size_t)cobs * 9 * cin_s * CB;
    for (int cob = 0; cob < cobs; cob++) {
        const float *w = wp + (size_t)cob * 9 * cin_s * CB;
        for (int x = 0; x < n; x += PB) {
            const float *in[3] = {r0 + (size_t)x * cin_s, r1 + (size_t)x * cin_s, r2 + (size_t)x * cin_s};
            conv3_block(in, cin_s, w, bias + cob * CB, out + (size_t)x * cout_s + cob * CB, cout_s, relu);
        }
    }
}

/* Per-thread line buffers for frames w wide (a rectangle is never wider
 * than the camera). Layer widths: nd = w / 2 + 2 at the last layer. */
#define SLACK (PB + 4)
static size_t layer_cap(const pc_net *n, int w, int l) { return (size_t)(w / 2 + 2 + 2 * (n->depth - l) + SLACK); }

static size_t thread_floats(const pc_net *n, int w)
{
    size_t s = 0;
    for (int l = 0; l <= n->depth; l++)
        s += rup16(3 * layer_cap(n, w, l) * (size_t)chans(n, l));
    const size_t fw = 2 * layer_cap(n, w, n->depth);
    s += rup16(4 * fw * 6);                              /* post's input ring */
    s += rup16(fw * (size_t)chans(n, n->depth + 1));     /* post's output row */
    s += rup16(((size_t)6 * w + 3) / 4);                 /* two RGB24 rows */
    return s;
}

/* pack's row q (network half-resolution) at columns a .. a + cnt - 1. */
static void pack_row(const pc_net_frame *f, int cam, int q, int a, int cnt, float *out)
{
    const pc_net_conv *c = &f->net->pack;
    for (int i = 0; i < cnt; i++) {
        float s[4];
        for (int co = 0; co < 4; co++)
            s[co] = c->b[co];
        for (int ky = 0; ky < 2; ky++)
            for (int kx = 0; kx < 2; kx++) {
                int colour;
                const float v = pc_net_in(pc_net_sample(f, cam, 2 * (a + i) + kx, 2 * q + ky, &colour));
                for (int co = 0; co < 4; co++)
                    s[co] += c->w[((co * 3 + colour) * 2 + ky) * 2 + kx] * v;
            }
        for (int co = 0; co < 4; co++)
            out[4 * i + co] = s[co];
    }
}

static void item(const pc_net_job *job, int it, float *scratch)
{
    const pc_net_frame *f = &job->f;
    const pc_net *n = f->net;
    const int D = n->depth, W = n->width;
    const int per = job->nstrips * job->nbands;
    const int cam = it / per, s = it % per / job->nbands, b = it % job->nbands;
    const int c0 = 2 * (int)((int64_t)(f->w / 2) * s / job->nstrips);
    const int c1 = 2 * (int)((int64_t)(f->w / 2) * (s + 1) / job->nstrips);
    const int r0 = 2 * (int)((int64_t)(f->cam_h / 2) * b / job->nbands);
    const int r1 = 2 * (int)((int64_t)(f->cam_h / 2) * (b + 1) / job->nbands);
    const int sx = f->padx - f->M, sy = f->pady - f->M;
    /* the last layer's columns [A, A + nd) and rows [qa, qb] */
    const int A = (c0 + sx) / 2, nd = (c1 + sx + 1) / 2 - A + 1;
    const int qa = (r0 + sy) / 2, qb = (r1 + sy + 1) / 2;

    /* line buffers */
    float *ring[PC_NET_MAX_DEPTH + 1];
    size_t rs[PC_NET_MAX_DEPTH + 1]; /* floats a row */
    float *p = scratch;
    for (int l = 0; l <= D; l++) {
        ring[l] = p;
        rs[l] = layer_cap(n, f->w, l) * (size_t)chans(n, l);
        p += rup16(3 * rs[l]);
    }
    const size_t fw = 2 * layer_cap(n, f->w, D);
    float *pin = p; /* 4 rows of fw pixels x 6 */
    p += rup16(4 * fw * 6);
    const int cp = chans(n, D + 1);
    float *pout = p;
    p += rup16(fw * (size_t)cp);
    uint8_t *rgb = (uint8_t *)p; /* rows y & 1 */
    const size_t rgbs = 3 * (size_t)f->w;

    /* the packed weights of each 3x3 conv */
    const float *wl[PC_NET_MAX_DEPTH + 1];
    const float *wq = job->wp;
    for (int l = 0; l < D; l++) {
        wl[l] = wq;
        wq += conv_floats(n->main[l].cout, chans(n, l));
    }
    const float *wpost = wq;
    const int cD = chans(n, D);

    for (int r = qa; r <= qb + 2 * D; r++) {
        pack_row(f, cam, r, A, nd + 2 * D, ring[0] + (size_t)(r % 3) * rs[0]);
        for (int l = 1; l <= D; l++) {
            const int q = r - 2 * l;
            if (q < qa)
                break;
            const float *src = ring[l - 1];
            conv3_row(src + (size_t)(q % 3) * rs[l - 1], src + (size_t)((q + 1) % 3) * rs[l - 1],
                      src + (size_t)((q + 2) % 3) * rs[l - 1], chans(n, l - 1), wl[l - 1], chans(n, l),
                      ring[l] + (size_t)(q % 3) * rs[l], nd + 2 * (D - l), 1);
        }
        const int q = r - 2 * D;
        if (q < qa)
            continue;
        /* the last layer's row q -> filters * masks -> residual -> U rows
         * 2q, 2q + 1 with the cropped mosaic beside them */
        const float *fr = ring[D] + (size_t)(q % 3) * rs[D];
        float *u0 = pin + (size_t)((2 * q) % 4) * fw * 6, *u1 = pin + (size_t)((2 * q + 1) % 4) * fw * 6;
        for (int i = 0; i < nd; i++) {
            const float *ft = fr + (size_t)i * cD;
            float res[12];
            for (int k = 0; k < 12; k++) {
                float a = n->residual.b[k];
                const float *rw = n->residual.w + (size_t)k * W;
                for (int c = 0; c < W; c++)
                    a += rw[c] * (ft[c] * ft[W + c]);
                res[k] = a;
            }
            for (int ky = 0; ky < 2; ky++)
                for (int kx = 0; kx < 2; kx++) {
                    float *o = (ky ? u1 : u0) + (size_t)(2 * i + kx) * 6;
                    int colour;
                    const float v = pc_net_in(
                        pc_net_sample(f, cam, 2 * (A + i) + kx + 2 * D, 2 * q + ky + 2 * D, &colour));
                    for (int c = 0; c < 3; c++)
                        o[c] = c == colour ? v : 0.0f;
                    for (int g = 0; g < 3; g++) {
                        float a = n->up.b[g];
                        for (int ci = 4 * g; ci < 4 * g + 4; ci++)
                            a += n->up.w[(ci * 2 + ky) * 2 + kx] * res[ci];
                        o[3 + g] = a;
                    }
                }
        }
        /* post + out for the full-resolution rows the new U rows complete */
        for (int pr = 2 * q - 2; pr <= 2 * q - 1; pr++) {
            const int y = pr - sy;
            if (pr < 2 * qa || y < r0 || y >= r1)
                continue;
            conv3_row(pin + (size_t)(pr % 4) * fw * 6, pin + (size_t)((pr + 1) % 4) * fw * 6,
                      pin + (size_t)((pr + 2) % 4) * fw * 6, 6, wpost, cp, pout, 2 * nd - 2, 1);
            uint8_t *o = rgb + (size_t)(y & 1) * rgbs;
            for (int c = c0; c < c1; c++) {
                const float *pt = pout + (size_t)(c + sx - 2 * A) * cp;
                for (int k = 0; k < 3; k++) {
                    float a = n->out.b[k];
                    const float *ow = n->out.w + (size_t)k * W;
                    for (int ci = 0; ci < W; ci++)
                        a += ow[ci] * pt[ci];
                    o[3 * c + k] = pc_net_u8(a);
                }
            }
            if (y & 1) {
                const int fy = cam * f->cam_h + y - 1;
                pc_yuv_coeffs yc = f->yc;
                if (f->dst.bands) {
                    const int bd = fy / f->dst.band_rows;
                    yc = f->dst.bands[bd < f->dst.n_bands ? bd : f->dst.n_bands - 1];
                }
                pc_ref_store_rgb_span(&f->dst, &yc, fy, rgb, rgb + rgbs, 3, c0, c1);
            }
        }
    }
}

const pc_net_lanes PC_NET_LANES = {
#if VL == 16
    "avx512",
#elif VL == 8
    "avx2",
#else
    "baseline",
#endif
    weights_floats, thread_floats, pack, item};

#undef VL
#undef NV
#undef CB
#undef PB
#undef SLACK
#undef INL
#endif
